//! The root cache's second part: records just written at document roots, in slots of one
//! flat array, one slot per hash of the DocKey. A write overwrites its slot (no allocation,
//! no search; whatever the slot held is evicted), so a GET after a SET is served from
//! memory while the writer pays about one cache line for it.
//!
//! The slots hold opaque byte strings (the root cache's entries) of at most
//! [`MAX_BYTES`]. The array starts small on the first put and doubles while more than half
//! its slots hold something, up to the budget: a database that writes few roots this way
//! holds little memory for them.

/// Bytes of one slot: two cache lines, the first byte being the length of what it holds.
const SLOT_BYTES: usize = 128;

/// Bytes of a cache line (the unit a slot is written in).
const LINE_BYTES: usize = 64;

/// Slots of a new array (64 KiB).
const FIRST_SLOTS: usize = 512;

/// The longest byte string a slot holds.
pub(crate) const MAX_BYTES: usize = SLOT_BYTES - 1;

/// Slots of byte strings, picked by hash (see the module docs).
pub(crate) struct WrittenRoots {
    /// The most slots the budget holds (a power of two, or 0).
    max_slots: usize,
    /// Slots holding something.
    filled: usize,
    /// The slots (a power of two of them) from the first line boundary in it, once
    /// something was put ([`new_slots`]); a slot whose first byte is 0 is empty.
    bytes: Option<Box<[u8]>>,
}

impl WrittenRoots {
    /// Slots fitting in `budget` bytes (none for a budget under one slot).
    pub(crate) fn new(budget: usize) -> Self {
        let fit = budget / SLOT_BYTES;
        let max_slots = if fit == 0 { 0 } else { 1 << fit.ilog2() };
        WrittenRoots {
            max_slots,
            filled: 0,
            bytes: None,
        }
    }

    /// Slots in the array now (0 before the first put).
    fn slots(&self) -> usize {
        self.bytes.as_deref().map_or(0, slots_in)
    }

    /// Where the slot of `hash` starts in `bytes`.
    fn slot_start(bytes: &[u8], hash: u64) -> usize {
        // The high bits pick the shard and the low ones a doorkeeper bit: mix them.
        let mixed = hash.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let index = (mixed >> 32) as usize & (slots_in(bytes) - 1);
        first_line(bytes) + index * SLOT_BYTES
    }

    /// What the slot of `hash` holds, if anything.
    pub(crate) fn get(&self, hash: u64) -> Option<&[u8]> {
        let bytes = self.bytes.as_deref()?;
        let slot = &bytes[Self::slot_start(bytes, hash)..][..SLOT_BYTES];
        let len = usize::from(slot[0]);
        (len > 0).then(|| &slot[1..1 + len])
    }

    /// Puts `parts`, concatenated, in the slot of `hash`; false (the slot left as it was)
    /// if they do not fit one, or there are no slots. `hash_of` gives the hash of what a
    /// slot holds, for moving it when the slots double.
    pub(crate) fn put(
        &mut self,
        hash: u64,
        parts: &[&[u8]],
        hash_of: impl Fn(&[u8]) -> u64,
    ) -> bool {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if self.max_slots == 0 || len == 0 || len > MAX_BYTES {
            return false;
        }
        let first = FIRST_SLOTS.min(self.max_slots);
        let bytes = self.bytes.get_or_insert_with(|| new_slots(first));
        let start = Self::slot_start(bytes, hash);
        // Only the lines the length needs: the rest of the slot is never read.
        let slot = &mut bytes[start..start + (1 + len).next_multiple_of(LINE_BYTES)];
        let was_empty = slot[0] == 0;
        slot[0] = len as u8;
        let mut at = 1;
        for part in parts {
            slot[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        if was_empty {
            self.filled += 1;
            let slots = self.slots();
            if self.filled * 2 > slots && slots < self.max_slots {
                self.double(hash_of);
            }
        }
        true
    }

    /// Whether nothing was put since the slots were made or last all emptied.
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_none()
    }

    /// Empties the slot of `hash`.
    pub(crate) fn clear(&mut self, hash: u64) {
        if let Some(bytes) = self.bytes.as_deref_mut() {
            let start = Self::slot_start(bytes, hash);
            if bytes[start] != 0 {
                bytes[start] = 0;
                self.filled -= 1;
            }
        }
    }

    /// Empties every slot (and gives their memory back).
    pub(crate) fn clear_all(&mut self) {
        self.bytes = None;
        self.filled = 0;
    }

    /// Moves everything to twice the slots (where two land in one slot, the later stays).
    fn double(&mut self, hash_of: impl Fn(&[u8]) -> u64) {
        let Some(old) = self.bytes.take() else {
            return;
        };
        let mut bytes = new_slots(slots_in(&old) * 2);
        let base = first_line(&old);
        let mut filled = 0;
        for slot in old[base..base + slots_in(&old) * SLOT_BYTES].chunks_exact(SLOT_BYTES) {
            let len = usize::from(slot[0]);
            if len == 0 {
                continue;
            }
            let start = Self::slot_start(&bytes, hash_of(&slot[1..1 + len]));
            let target = &mut bytes[start..start + SLOT_BYTES];
            filled += usize::from(target[0] == 0);
            target.copy_from_slice(slot);
        }
        self.bytes = Some(bytes);
        self.filled = filled;
    }
}

/// Empty slots, `slots` of them, with room to start them on a cache line.
fn new_slots(slots: usize) -> Box<[u8]> {
    vec![0; slots * SLOT_BYTES + LINE_BYTES].into_boxed_slice()
}

/// The slots in `bytes` (made by [`new_slots`]).
fn slots_in(bytes: &[u8]) -> usize {
    (bytes.len() - LINE_BYTES) / SLOT_BYTES
}

/// Where the first cache line that starts in `bytes` starts (slots start on lines).
fn first_line(bytes: &[u8]) -> usize {
    let address = bytes.as_ptr() as usize;
    address.next_multiple_of(LINE_BYTES) - address
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash the tests put each byte string with: its first eight bytes.
    fn hash_of(bytes: &[u8]) -> u64 {
        let mut word = [0; 8];
        word.copy_from_slice(&bytes[..8]);
        u64::from_le_bytes(word)
    }

    fn put(slots: &mut WrittenRoots, hash: u64, rest: &[u8]) -> bool {
        slots.put(hash, &[&hash.to_le_bytes(), rest], hash_of)
    }

    fn held(slots: &WrittenRoots, hash: u64) -> Option<&[u8]> {
        slots
            .get(hash)
            .filter(|bytes| hash_of(bytes) == hash)
            .map(|bytes| &bytes[8..])
    }

    #[test]
    fn a_put_is_read_back_until_cleared() {
        let mut slots = WrittenRoots::new(4 * SLOT_BYTES);
        assert!(slots.is_empty());
        assert_eq!(slots.get(7), None, "nothing before the first put");
        assert!(put(&mut slots, 7, b"abcd"));
        assert_eq!(held(&slots, 7), Some(&b"abcd"[..]));
        slots.clear(7);
        assert_eq!(slots.get(7), None);
        slots.clear_all();
        assert!(slots.is_empty());
    }

    #[test]
    fn a_later_put_to_the_same_slot_evicts_the_earlier() {
        let mut slots = WrittenRoots::new(SLOT_BYTES);
        assert!(put(&mut slots, 1, b"first"));
        assert!(put(&mut slots, 2, b"second"));
        // One slot: both hashes land in it.
        assert_eq!(held(&slots, 2), Some(&b"second"[..]));
        assert_eq!(held(&slots, 1), None);
    }

    #[test]
    fn what_does_not_fit_is_refused_and_leaves_the_slot() {
        let mut slots = WrittenRoots::new(2 * SLOT_BYTES);
        assert!(put(&mut slots, 3, b"kept"));
        assert!(!put(&mut slots, 3, &[0; MAX_BYTES - 7]));
        assert!(!slots.put(3, &[], hash_of));
        assert_eq!(held(&slots, 3), Some(&b"kept"[..]));
        assert!(put(&mut slots, 3, &[9; MAX_BYTES - 8]));
        assert_eq!(held(&slots, 3), Some(&[9; MAX_BYTES - 8][..]));
        let mut none = WrittenRoots::new(SLOT_BYTES - 1);
        assert!(!put(&mut none, 3, b"no slots"));
        none.clear(3);
        assert_eq!(none.get(3), None);
    }

    #[test]
    fn a_short_put_over_a_long_one_reads_back_short() {
        let mut slots = WrittenRoots::new(8 * SLOT_BYTES);
        let long: Vec<u8> = (1..=100).collect();
        assert!(put(&mut slots, 5, &long));
        assert_eq!(held(&slots, 5), Some(&long[..]));
        // Only the first line is written: its length byte decides what is read.
        assert!(put(&mut slots, 5, b"short"));
        assert_eq!(held(&slots, 5), Some(&b"short"[..]));
    }

    /// The slots double while more than half are filled, up to the budget, and what they
    /// held moves along: every hash reads back its own, or nothing if a later one took its
    /// slot, never another's.
    #[test]
    fn slots_double_and_keep_what_they_held() {
        let budget = 8 * FIRST_SLOTS * SLOT_BYTES;
        let mut slots = WrittenRoots::new(budget + SLOT_BYTES - 1);
        let hashes: Vec<u64> = (0..5000u64)
            .map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D))
            .collect();
        for (i, &hash) in hashes.iter().enumerate() {
            assert!(put(&mut slots, hash, &i.to_le_bytes()));
            assert_eq!(held(&slots, hash), Some(&i.to_le_bytes()[..]));
            assert!(slots.slots() <= 8 * FIRST_SLOTS, "over the budget");
        }
        assert_eq!(slots.slots(), 8 * FIRST_SLOTS, "doubled to the budget");
        let mut found = 0;
        for (i, &hash) in hashes.iter().enumerate() {
            if let Some(bytes) = held(&slots, hash) {
                assert_eq!(bytes, &i.to_le_bytes()[..], "hash {hash}");
                found += 1;
            }
        }
        assert_eq!(found, slots.filled, "each filled slot holds one of them");
        assert!(found > 2500, "only {found} of 5000 kept in 4096 slots");
        for &hash in &hashes {
            slots.clear(hash);
        }
        assert_eq!(slots.filled, 0);
    }
}
