//! OBJECT, MEMORY and LATENCY: what Redis tells about keys, memory and latency events.

use engine::Engine;

use super::Spec;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    Vec::new()
}
