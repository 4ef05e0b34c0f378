//! The root cache's second part: records just written at document roots, in fixed slots
//! of one flat array, one slot per hash of the DocKey. A write overwrites its slot without
//! reading it (no allocation, no search; whatever the slot held is evicted), so a GET after
//! a SET is served from memory while the writer pays about one cache-line write for it.
//!
//! The slots hold opaque byte strings (the root cache's entries) of at most
//! [`MAX_BYTES`]. The array is allocated on the first put, so a database whose roots are
//! never written this way costs nothing.

/// Bytes of one slot: two cache lines, the first byte being the length of what it holds.
const SLOT_BYTES: usize = 128;

/// Bytes of a cache line (the unit a slot is written in).
const LINE_BYTES: usize = 64;

/// The longest byte string a slot holds.
pub(crate) const MAX_BYTES: usize = SLOT_BYTES - 1;

/// Fixed slots of byte strings, picked by hash (see the module docs).
pub(crate) struct WrittenRoots {
    slots: usize,
    /// `slots * SLOT_BYTES` bytes from the first line boundary in it, once something was
    /// put; a slot whose first byte is 0 is empty.
    bytes: Option<Box<[u8]>>,
}

impl WrittenRoots {
    /// Slots fitting in about `budget` bytes (none for a budget under one slot).
    pub(crate) fn new(budget: usize) -> Self {
        WrittenRoots {
            slots: budget / SLOT_BYTES,
            bytes: None,
        }
    }

    /// Where the slot of `hash` starts in `bytes` (allocated: there are slots).
    fn slot_start(&self, bytes: &[u8], hash: u64) -> usize {
        // The high bits pick the shard and the low ones a doorkeeper bit: mix them.
        let mixed = hash.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let index = (mixed >> 32) as usize % self.slots;
        let address = bytes.as_ptr() as usize;
        address.next_multiple_of(LINE_BYTES) - address + index * SLOT_BYTES
    }

    /// What the slot of `hash` holds, if anything.
    pub(crate) fn get(&self, hash: u64) -> Option<&[u8]> {
        let bytes = self.bytes.as_deref()?;
        let slot = &bytes[self.slot_start(bytes, hash)..][..SLOT_BYTES];
        let len = usize::from(slot[0]);
        (len > 0).then(|| &slot[1..1 + len])
    }

    /// Puts `parts`, concatenated, in the slot of `hash`; false (the slot left as it was)
    /// if they do not fit one, or there are no slots.
    pub(crate) fn put(&mut self, hash: u64, parts: &[&[u8]]) -> bool {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if self.slots == 0 || len == 0 || len > MAX_BYTES {
            return false;
        }
        let mut image = [0; SLOT_BYTES];
        image[0] = len as u8;
        let mut at = 1;
        for part in parts {
            image[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        self.write(hash, &image, at.div_ceil(LINE_BYTES));
        true
    }

    /// Whether nothing was put since the slots were made or last all emptied.
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_none()
    }

    /// Empties the slot of `hash`.
    pub(crate) fn clear(&mut self, hash: u64) {
        if self.bytes.is_some() {
            self.write(hash, &[0; SLOT_BYTES], 1);
        }
    }

    /// Empties every slot (and gives their memory back).
    pub(crate) fn clear_all(&mut self) {
        self.bytes = None;
    }

    /// Writes the first `lines` lines of `image` over the slot of `hash` (`slots` > 0): only
    /// the lines its length needs, the rest of the slot being unread.
    fn write(&mut self, hash: u64, image: &[u8; SLOT_BYTES], lines: usize) {
        let total = self.slots * SLOT_BYTES + LINE_BYTES;
        let bytes = self
            .bytes
            .take()
            .unwrap_or_else(|| vec![0; total].into_boxed_slice());
        let start = self.slot_start(&bytes, hash);
        let len = lines * LINE_BYTES;
        let bytes = self.bytes.insert(bytes);
        bytes[start..start + len].copy_from_slice(&image[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_put_is_read_back_until_cleared() {
        let mut slots = WrittenRoots::new(4 * SLOT_BYTES);
        assert_eq!(slots.get(7), None, "nothing before the first put");
        assert!(slots.put(7, &[b"ab", b"cd"]));
        assert_eq!(slots.get(7), Some(&b"abcd"[..]));
        slots.clear(7);
        assert_eq!(slots.get(7), None);
    }

    #[test]
    fn a_later_put_to_the_same_slot_evicts_the_earlier() {
        let mut slots = WrittenRoots::new(SLOT_BYTES);
        assert!(slots.put(1, &[b"first"]));
        assert!(slots.put(2, &[b"second"]));
        // One slot: both hashes land in it.
        assert_eq!(slots.get(1), Some(&b"second"[..]));
        slots.clear_all();
        assert_eq!(slots.get(2), None);
    }

    #[test]
    fn what_does_not_fit_is_refused_and_leaves_the_slot() {
        let mut slots = WrittenRoots::new(2 * SLOT_BYTES);
        assert!(slots.put(3, &[b"kept"]));
        assert!(!slots.put(3, &[&[0; MAX_BYTES], b"x"]));
        assert!(!slots.put(3, &[]));
        assert_eq!(slots.get(3), Some(&b"kept"[..]));
        assert!(slots.put(3, &[&[9; MAX_BYTES]]));
        assert_eq!(slots.get(3), Some(&[9; MAX_BYTES][..]));
        let mut none = WrittenRoots::new(SLOT_BYTES - 1);
        assert!(!none.put(3, &[b"no slots"]));
        none.clear(3);
        assert_eq!(none.get(3), None);
    }

    #[test]
    fn a_short_put_over_a_long_one_reads_back_short() {
        let mut slots = WrittenRoots::new(8 * SLOT_BYTES);
        let long: Vec<u8> = (1..=100).collect();
        assert!(slots.put(5, &[&long]));
        assert_eq!(slots.get(5), Some(&long[..]));
        // Only the first line is written: its length byte decides what is read.
        assert!(slots.put(5, &[b"short"]));
        assert_eq!(slots.get(5), Some(&b"short"[..]));
    }

    #[test]
    fn many_hashes_each_read_back_their_own_or_nothing() {
        let mut slots = WrittenRoots::new(64 * SLOT_BYTES);
        for hash in 0..1000u64 {
            assert!(slots.put(hash, &[&hash.to_le_bytes()]));
            assert_eq!(
                slots.get(hash),
                Some(&hash.to_le_bytes()[..]),
                "hash {hash}"
            );
        }
        // A slot holds the last hash put in it; every hash reads back its own or another's.
        for hash in 0..1000u64 {
            let held = slots.get(hash).expect("every slot was written");
            assert_eq!(held.len(), 8, "hash {hash}");
        }
    }
}
