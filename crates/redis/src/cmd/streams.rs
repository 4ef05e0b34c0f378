//! Streams: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID, XREAD ([`crate::stream`]).

use engine::Engine;

use super::Spec;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    Vec::new()
}
