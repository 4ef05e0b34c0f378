//! The elements at the ends of lists that pops are taking, read ahead and kept in memory.
//!
//! A queue's consumer pops from one end again and again, and each pop looked its element up
//! in RocksDB: a seek through the memtable and the files, the most of a pop's time. From
//! the second pop at an end on, a pop that finds nothing kept reads up to [`READ_AHEAD`]
//! elements at once (as many as [`MAX_END_BYTES`] holds, judged by the elements it read last)
//! and keeps the ones it did not take, so the next pops are answered from memory.
//!
//! **Why what is kept stays true.** What is kept of a list's end is its first (or last)
//! live elements in order, as every write so far has left them. Writes run one at a time
//! (`Store::write`, under DocDB's writer lock), and before a batch is committed everything
//! kept for a list it writes to is dropped. Only pops and pushes, which know what they
//! changed, hand back what they took out, updated (a claim); the claims are kept again once
//! their batch has committed, and dropped if it was not. A write that fails to land clears
//! everything.

use std::collections::{HashMap, VecDeque};

/// Most elements a pop reads at once when too few are kept at an end popped from before.
pub const READ_AHEAD: usize = 32;

/// Most bytes of elements kept at one end.
const MAX_END_BYTES: usize = 64 << 10;

/// Most bytes of elements kept over all lists; past it, everything kept is dropped.
const MAX_BYTES: usize = 16 << 20;

/// Most lists with something kept; past it, everything kept is dropped.
const MAX_LISTS: usize = 4096;

/// One end of a list: (index, element) pairs from the end inward.
#[derive(Debug, Default)]
pub struct End {
    /// How many elements the next read takes at least: 0 until a pop has read at this end
    /// (one pop does not make a queue), then as many as [`MAX_END_BYTES`] holds of the
    /// elements read last, up to [`READ_AHEAD`] (large elements are read one at a time).
    ahead: usize,
    items: VecDeque<(i64, Vec<u8>)>,
    bytes: usize,
}

impl End {
    /// How many elements a pop of `count` reads when too few are kept.
    pub fn to_read(&self, count: usize) -> usize {
        count.max(self.ahead)
    }

    /// After a pop read `read` (all it read, taken or not): sizes the next read by them.
    pub fn learn(&mut self, read: &[(i64, Vec<u8>)]) {
        let bytes: usize = read.iter().map(|(_, v)| v.len()).sum();
        let each = bytes.div_ceil(read.len().max(1)).max(1);
        self.ahead = (MAX_END_BYTES / each).clamp(1, READ_AHEAD);
    }

    /// The first `count` elements kept, taken out; `None` if fewer are kept.
    pub fn take(&mut self, count: usize) -> Option<Vec<(i64, Vec<u8>)>> {
        if self.items.len() < count {
            return None;
        }
        let taken: Vec<(i64, Vec<u8>)> = self.items.drain(..count).collect();
        self.bytes -= taken.iter().map(|(_, v)| v.len()).sum::<usize>();
        Some(taken)
    }

    /// Keeps `items` (from the end inward) instead of what was kept, as many as fit.
    pub fn fill(&mut self, items: impl IntoIterator<Item = (i64, Vec<u8>)>) {
        self.items.clear();
        self.bytes = 0;
        for item in items {
            if self.bytes + item.1.len() > MAX_END_BYTES {
                break;
            }
            self.bytes += item.1.len();
            self.items.push_back(item);
        }
    }

    /// New elements pushed onto this end (from the end inward): they go before what is
    /// kept, which stays true behind them; elements past the byte limit are let go from the
    /// inner side.
    fn pushed(&mut self, items: Vec<(i64, Vec<u8>)>) {
        for item in items.into_iter().rev() {
            self.bytes += item.1.len();
            self.items.push_front(item);
        }
        while self.bytes > MAX_END_BYTES {
            match self.items.pop_back() {
                Some((_, v)) => self.bytes -= v.len(),
                None => break,
            }
        }
    }

    /// Drops the elements at `indexes` (taken from the other end of a short list).
    fn remove(&mut self, indexes: &[i64]) {
        let bytes = &mut self.bytes;
        self.items.retain(|(i, v)| {
            let gone = indexes.contains(i);
            if gone {
                *bytes -= v.len();
            }
            !gone
        });
    }
}

/// What is kept of one list's two ends.
#[derive(Debug, Default)]
pub struct Ends {
    front: End,
    back: End,
}

impl Ends {
    /// The end a pop from the back (or front) takes from.
    pub fn end_mut(&mut self, back: bool) -> &mut End {
        if back {
            &mut self.back
        } else {
            &mut self.front
        }
    }

    /// After a pop from one end took `indexes`: on a list short enough for the other end to
    /// hold them too, they go there as well.
    pub fn popped(&mut self, back: bool, indexes: &[i64]) {
        let other = self.end_mut(!back);
        if !other.items.is_empty() {
            other.remove(indexes);
        }
    }

    /// After a push of `items` (from that end inward) onto one end: the pushed end keeps
    /// them in front of what it kept, if pops take from it; the other end is unchanged (a
    /// push never changes which elements are last at the other end).
    pub fn pushed(&mut self, back: bool, items: Vec<(i64, Vec<u8>)>) {
        let end = self.end_mut(back);
        if end.ahead > 0 {
            end.pushed(items);
        }
    }

    fn bytes(&self) -> usize {
        self.front.bytes + self.back.bytes
    }
}

/// Every list's kept ends, and the claims of the write under way.
#[derive(Debug, Default)]
pub struct ListEnds {
    kept: HashMap<Vec<u8>, Ends>,
    claimed: Vec<(Vec<u8>, Ends)>,
    bytes: usize,
}

impl ListEnds {
    /// Whether nothing is kept or claimed (then no write has anything to drop).
    pub fn is_idle(&self) -> bool {
        self.kept.is_empty() && self.claimed.is_empty()
    }

    /// Takes out what is kept for the list at `doc_key`, to update and claim.
    pub fn take(&mut self, doc_key: &[u8]) -> Option<Ends> {
        let ends = self.kept.remove(doc_key)?;
        self.bytes -= ends.bytes();
        Some(ends)
    }

    /// Hands back `ends` for the list at `doc_key`, updated by the write under way: kept
    /// again by [`Self::settle`] if its batch commits.
    pub fn claim(&mut self, doc_key: &[u8], ends: Ends) {
        self.claimed.push((doc_key.to_vec(), ends));
    }

    /// Drops what is kept for the document at `doc_key` (a batch writes to it).
    pub fn forget(&mut self, doc_key: &[u8]) {
        self.take(doc_key);
    }

    /// Ends the write under way: its claims are kept if its batch committed, else dropped.
    pub fn settle(&mut self, committed: bool) {
        let claimed = std::mem::take(&mut self.claimed);
        if !committed {
            return;
        }
        for (doc_key, ends) in claimed {
            let bytes = ends.bytes();
            if self.kept.len() >= MAX_LISTS || self.bytes + bytes > MAX_BYTES {
                self.clear();
            }
            self.bytes += bytes;
            if let Some(old) = self.kept.insert(doc_key, ends) {
                self.bytes -= old.bytes();
            }
        }
    }

    /// Drops everything kept and claimed.
    pub fn clear(&mut self) {
        self.kept.clear();
        self.claimed.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(pairs: &[(i64, &str)]) -> Vec<(i64, Vec<u8>)> {
        pairs
            .iter()
            .map(|(i, v)| (*i, v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn takes_only_what_is_kept_in_full() {
        let mut end = End::default();
        end.fill(items(&[(1, "a"), (2, "b"), (3, "c")]));
        assert_eq!(end.take(4), None);
        assert_eq!(end.take(2), Some(items(&[(1, "a"), (2, "b")])));
        assert_eq!(end.bytes, 1);
        assert_eq!(end.take(1), Some(items(&[(3, "c")])));
        assert_eq!(end.take(1), None);
        assert_eq!(end.bytes, 0);
    }

    #[test]
    fn fill_and_push_stay_within_the_byte_limit_from_the_inner_side() {
        let big = vec![b'x'; MAX_END_BYTES / 2];
        let mut end = End::default();
        end.fill([(1, big.clone()), (2, big.clone()), (3, big.clone())]);
        assert_eq!(end.items.len(), 2);
        end.learn(&items(&[(0, "a")]));
        let mut ends = Ends {
            front: end,
            back: End::default(),
        };
        ends.pushed(false, vec![(-1, big.clone())]);
        let kept: Vec<i64> = ends.front.items.iter().map(|(i, _)| *i).collect();
        assert_eq!(
            kept,
            vec![-1, 1],
            "the newest in front, the innermost let go"
        );
        assert!(ends.front.bytes <= MAX_END_BYTES);
    }

    #[test]
    fn a_push_is_kept_only_at_an_end_pops_take_from() {
        let mut ends = Ends::default();
        ends.pushed(false, items(&[(-2, "x")]));
        assert!(ends.front.items.is_empty());
        ends.end_mut(false).learn(&items(&[(-1, "w")]));
        ends.pushed(false, items(&[(-4, "z"), (-3, "y")]));
        ends.pushed(true, items(&[(9, "q")]));
        assert_eq!(ends.front.items, items(&[(-4, "z"), (-3, "y")]));
        assert!(ends.back.items.is_empty());
    }

    #[test]
    fn reads_ahead_only_after_a_pop_and_as_many_as_fit() {
        let mut end = End::default();
        assert_eq!(end.to_read(1), 1, "a first pop reads what it takes");
        end.learn(&items(&[(1, "a")]));
        assert_eq!(end.to_read(1), READ_AHEAD);
        assert_eq!(end.to_read(100), 100);
        end.learn(&[(2, vec![0; MAX_END_BYTES / 4])]);
        assert_eq!(end.to_read(1), 4);
        end.learn(&[(3, vec![0; MAX_END_BYTES * 2])]);
        assert_eq!(end.to_read(1), 1, "large elements are read one at a time");
        end.learn(&[]);
        assert_eq!(end.to_read(1), READ_AHEAD);
    }

    #[test]
    fn a_pop_from_one_end_removes_its_elements_from_the_other() {
        let mut ends = Ends::default();
        ends.end_mut(false)
            .fill(items(&[(1, "a"), (2, "b"), (3, "c")]));
        ends.end_mut(true)
            .fill(items(&[(3, "c"), (2, "b"), (1, "a")]));
        let taken = ends.end_mut(true).take(1).expect("kept");
        ends.popped(true, &[taken[0].0]);
        assert_eq!(ends.front.items, items(&[(1, "a"), (2, "b")]));
        assert_eq!(ends.front.bytes, 2);
    }

    #[test]
    fn claims_are_kept_only_when_their_batch_commits() {
        let mut lists = ListEnds::default();
        let mut ends = Ends::default();
        ends.end_mut(false).fill(items(&[(1, "a")]));
        lists.claim(b"k", ends);
        lists.settle(false);
        assert!(lists.is_idle());

        let mut ends = Ends::default();
        ends.end_mut(false).fill(items(&[(1, "a")]));
        lists.claim(b"k", ends);
        lists.settle(true);
        assert_eq!(lists.bytes, 1);
        lists.forget(b"other");
        assert!(lists.take(b"k").is_some());
        assert_eq!(lists.bytes, 0);
        assert!(lists.is_idle());
    }

    #[test]
    fn too_many_lists_start_over() {
        let mut lists = ListEnds::default();
        for i in 0..=MAX_LISTS {
            lists.claim(format!("k{i}").as_bytes(), Ends::default());
            lists.settle(true);
        }
        assert_eq!(lists.kept.len(), 1);
    }
}
