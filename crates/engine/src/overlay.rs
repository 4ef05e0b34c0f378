//! Reading writes that are not in the engine yet: an [`Overlay`] of pending pairs seen
//! through a [`Layered`] iterator on top of an engine iterator, as RocksDB's
//! `WriteBatchWithIndex` does. A writer that gathers several commands' writes into one
//! engine write reads its own pending writes this way.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use crate::{EngineIterator, Result};

/// Pending puts by key. A key here hides the same key in the engine.
pub type Overlay = BTreeMap<Vec<u8>, Vec<u8>>;

/// Which child the layered iterator is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    None,
    Base,
    Top,
}

/// An engine iterator with an [`Overlay`] merged in, within the same bounds. Without an
/// overlay it passes every call straight to the engine iterator.
///
/// Invariant while positioned: both children sit at their nearest key in the direction of
/// travel (at or after the current key going forward, at or before it going backward), the
/// current one exactly on it, and the other strictly past it: a base key equal to an
/// overlay key is stepped over, as the overlay hides it.
pub struct Layered<I> {
    base: I,
    overlay: Option<Arc<Overlay>>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    /// The overlay pair the top child is on (copied: the overlay is shared).
    top_key: Vec<u8>,
    top_value: Vec<u8>,
    top_valid: bool,
    /// A buffer kept for the next step's copy of the top key.
    spare: Vec<u8>,
    side: Side,
    forward: bool,
}

impl<I: EngineIterator> Layered<I> {
    /// `base` (created with bounds `lower..upper`) with `overlay`'s pairs in those bounds
    /// merged in.
    pub fn new(
        base: I,
        overlay: Option<Arc<Overlay>>,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Self {
        let overlay = overlay.filter(|o| !o.is_empty());
        // The bounds only matter to the overlay (the base keeps its own): no copies for the
        // usual iterator without one.
        let copy = |bound: Option<&[u8]>| bound.filter(|_| overlay.is_some()).map(<[u8]>::to_vec);
        Layered {
            base,
            lower: copy(lower),
            upper: copy(upper),
            overlay,
            top_key: Vec::new(),
            top_value: Vec::new(),
            top_valid: false,
            spare: Vec::new(),
            side: Side::None,
            forward: true,
        }
    }

    /// The engine iterator, without the overlay.
    pub fn into_base(self) -> I {
        self.base
    }

    fn in_bounds(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|l| key >= l)
            && self.upper.as_deref().is_none_or(|u| key < u)
    }

    /// Puts the top child on the first overlay pair within `from` (and the bounds), going
    /// forward, or the last going backward.
    fn place_top(&mut self, from: Bound<&[u8]>, forward: bool) {
        self.top_valid = false;
        let Some(overlay) = &self.overlay else { return };
        let found = if forward {
            overlay.range::<[u8], _>((from, Bound::Unbounded)).next()
        } else {
            overlay
                .range::<[u8], _>((Bound::Unbounded, from))
                .next_back()
        };
        if let Some((key, value)) = found
            && self.in_bounds(key)
        {
            self.top_key.clear();
            self.top_key.extend_from_slice(key);
            self.top_value.clear();
            self.top_value.extend_from_slice(value);
            self.top_valid = true;
        }
    }

    /// After the base child was positioned: puts the top child on the first overlay pair at
    /// or after `key` going forward (at or before it going backward; `None`: from the bound
    /// on that side), clamped to the bounds, and chooses the current child.
    fn position(&mut self, key: Option<&[u8]>, forward: bool) {
        if self.overlay.is_none() {
            return;
        }
        let (lower, upper) = (self.lower.clone(), self.upper.clone());
        let from = if forward {
            match (key, lower.as_deref()) {
                (Some(key), Some(lower)) if key < lower => Bound::Included(lower),
                (Some(key), _) => Bound::Included(key),
                (None, Some(lower)) => Bound::Included(lower),
                (None, None) => Bound::Unbounded,
            }
        } else {
            match (key, upper.as_deref()) {
                (Some(key), Some(upper)) if key >= upper => Bound::Excluded(upper),
                (Some(key), _) => Bound::Included(key),
                (None, Some(upper)) => Bound::Excluded(upper),
                (None, None) => Bound::Unbounded,
            }
        };
        self.place_top(from, forward);
        self.settle(forward);
    }

    /// Chooses the current child after both moved in direction `forward`, stepping the base
    /// over a key the overlay hides.
    fn settle(&mut self, forward: bool) {
        self.forward = forward;
        let base_on = matches!(self.base.valid(), Ok(true));
        if !self.top_valid {
            self.side = if base_on || self.base.valid().is_err() {
                Side::Base
            } else {
                Side::None
            };
            return;
        }
        if !base_on {
            self.side = if self.base.valid().is_err() {
                Side::Base
            } else {
                Side::Top
            };
            return;
        }
        if self.base.key() == self.top_key.as_slice() {
            if forward {
                self.base.next();
            } else {
                self.base.prev();
            }
            return self.settle(forward);
        }
        let base_first = (self.base.key() < self.top_key.as_slice()) == forward;
        self.side = if base_first { Side::Base } else { Side::Top };
    }

    /// Repositions both children strictly past the current key in the new direction.
    fn turn(&mut self, forward: bool) {
        let key = self.key().to_vec();
        if forward {
            self.base.seek(&key);
            if matches!(self.base.valid(), Ok(true)) && self.base.key() == key.as_slice() {
                self.base.next();
            }
            self.place_top(Bound::Excluded(&key), true);
        } else {
            self.base.seek_for_prev(&key);
            if matches!(self.base.valid(), Ok(true)) && self.base.key() == key.as_slice() {
                self.base.prev();
            }
            self.place_top(Bound::Excluded(&key), false);
        }
        self.settle(forward);
    }

    /// Moves the current child one step in direction `forward` (no turn).
    fn step(&mut self, forward: bool) {
        match self.side {
            Side::None => return,
            Side::Base if forward => self.base.next(),
            Side::Base => self.base.prev(),
            Side::Top => {
                // The current key, moved aside (no copy) while the top child moves on.
                let key = std::mem::replace(&mut self.top_key, std::mem::take(&mut self.spare));
                self.place_top(Bound::Excluded(&key), forward);
                self.spare = key;
            }
        }
        self.settle(forward);
    }
}

impl<I: EngineIterator> EngineIterator for Layered<I> {
    fn seek(&mut self, key: &[u8]) {
        self.base.seek(key);
        self.position(Some(key), true);
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        self.base.seek_for_prev(key);
        self.position(Some(key), false);
    }

    fn seek_to_first(&mut self) {
        self.base.seek_to_first();
        self.position(None, true);
    }

    fn seek_to_last(&mut self) {
        self.base.seek_to_last();
        self.position(None, false);
    }

    fn next(&mut self) {
        if self.overlay.is_none() {
            return self.base.next();
        }
        if self.side == Side::None {
            return;
        }
        if self.forward {
            self.step(true);
        } else {
            self.turn(true);
        }
    }

    fn prev(&mut self) {
        if self.overlay.is_none() {
            return self.base.prev();
        }
        if self.side == Side::None {
            return;
        }
        if self.forward {
            self.turn(false);
        } else {
            self.step(false);
        }
    }

    fn valid(&self) -> Result<bool> {
        let base = self.base.valid();
        if self.overlay.is_none() {
            return base;
        }
        match self.side {
            Side::None => Ok(false),
            Side::Base => base,
            Side::Top => base.map(|_| true),
        }
    }

    fn key(&self) -> &[u8] {
        match (self.overlay.is_some(), self.side) {
            (false, _) | (true, Side::Base) => self.base.key(),
            (true, Side::Top) => &self.top_key,
            (true, Side::None) => &[],
        }
    }

    fn value(&self) -> &[u8] {
        match (self.overlay.is_some(), self.side) {
            (false, _) | (true, Side::Base) => self.base.value(),
            (true, Side::Top) => &self.top_value,
            (true, Side::None) => &[],
        }
    }

    fn reset(&mut self, lower: Option<&[u8]>, upper: Option<&[u8]>) -> Result<()> {
        self.base.reset(lower, upper)?;
        if self.overlay.is_some() {
            self.lower = lower.map(<[u8]>::to_vec);
            self.upper = upper.map(<[u8]>::to_vec);
        }
        self.side = Side::None;
        self.top_valid = false;
        Ok(())
    }
}
