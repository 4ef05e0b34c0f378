//! DUMP and RESTORE: a key's value as Redis's serialized payload (see `crate::rdb`).

use engine::Engine;

use super::Spec;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    Vec::new()
}
