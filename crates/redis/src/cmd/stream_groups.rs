//! Stream consumer groups: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO ([`crate::stream`]).

use engine::Engine;

use super::Spec;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    Vec::new()
}
