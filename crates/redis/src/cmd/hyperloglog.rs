//! (in progress)

use engine::Engine;

use super::Spec;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    Vec::new()
}
