//! Write batches and write options.

/// One operation of a [`WriteBatch`], borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOp<'a> {
    /// Set `key` to `value`, replacing any previous value.
    Put(&'a [u8], &'a [u8]),
    /// Remove `key` (a no-op if it is absent).
    Delete(&'a [u8]),
}

impl<'a> WriteOp<'a> {
    /// The key this operation writes.
    pub fn key(&self) -> &'a [u8] {
        match *self {
            WriteOp::Put(key, _) | WriteOp::Delete(key) => key,
        }
    }
}

/// Fixed per-operation overhead counted by [`WriteBatch::approximate_size`], roughly what
/// RocksDB spends on the record tag and two length varints.
const OP_OVERHEAD: usize = 8;

/// Where one operation's bytes lie in the batch's buffer: the key is `start..key_end`, the
/// value (a put's) `key_end..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    start: usize,
    key_end: usize,
    end: usize,
    put: bool,
}

/// An ordered list of puts and deletes applied atomically by [`crate::Engine::write`].
///
/// Operations apply in the order they were added, so a later operation on the same key
/// wins (a `put` followed by a `delete` of the same key leaves the key absent). Readers
/// see either none or all of a batch.
///
/// Keys and values are copied into one buffer, so a batch costs two allocations however
/// many operations it holds (writers encode thousands of small records per second).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    data: Vec<u8>,
    records: Vec<Record>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `ops` operations.
    pub fn with_capacity(ops: usize) -> Self {
        Self::with_capacity_bytes(ops, ops * 64)
    }

    /// An empty batch with room for `ops` operations of `bytes` key and value bytes in all.
    pub fn with_capacity_bytes(ops: usize, bytes: usize) -> Self {
        Self {
            data: Vec::with_capacity(bytes),
            records: Vec::with_capacity(ops),
        }
    }

    /// Appends a put of `key` → `value`.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.put_with(
            |out| out.extend_from_slice(key.as_ref()),
            |out| out.extend_from_slice(value.as_ref()),
        );
    }

    /// Appends a put whose key and value `build_key` and then `build_value` append to the
    /// buffer they are given, so an encoder writes them in place instead of into vectors of
    /// their own. Each must only append.
    pub fn put_with(
        &mut self,
        build_key: impl FnOnce(&mut Vec<u8>),
        build_value: impl FnOnce(&mut Vec<u8>),
    ) {
        let start = self.data.len();
        build_key(&mut self.data);
        let key_end = self.data.len();
        build_value(&mut self.data);
        debug_assert!(
            start <= key_end && key_end <= self.data.len(),
            "a builder truncated"
        );
        self.records.push(Record {
            start,
            key_end,
            end: self.data.len(),
            put: true,
        });
    }

    /// Appends a delete of `key`.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        let start = self.data.len();
        self.data.extend_from_slice(key.as_ref());
        let end = self.data.len();
        self.records.push(Record {
            start,
            key_end: end,
            end,
            put: false,
        });
    }

    /// Appends every operation of `other`, in its order: one copy of its buffer.
    pub fn append(&mut self, other: &WriteBatch) {
        let shift = self.data.len();
        self.data.extend_from_slice(&other.data);
        self.records.extend(other.records.iter().map(|r| Record {
            start: r.start + shift,
            key_end: r.key_end + shift,
            end: r.end + shift,
            put: r.put,
        }));
    }

    /// Number of operations in the batch.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True if the batch holds no operations.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The operations in the order they will be applied.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            data: &self.data,
            records: self.records.iter(),
        }
    }

    /// Approximate encoded size in bytes: keys plus values plus a small fixed overhead per
    /// operation. Useful for deciding when to cut a large batch.
    pub fn approximate_size(&self) -> usize {
        self.data.len() + self.records.len() * OP_OVERHEAD
    }

    /// Bytes the batch's buffers hold allocated (to decide whether keeping it for reuse
    /// is worth its memory).
    pub fn allocated_bytes(&self) -> usize {
        self.data.capacity() + self.records.capacity() * std::mem::size_of::<Record>()
    }

    /// Removes all operations, keeping the allocations.
    pub fn clear(&mut self) {
        self.data.clear();
        self.records.clear();
    }
}

/// The operations of a [`WriteBatch`] in order; see [`WriteBatch::iter`].
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    data: &'a [u8],
    records: std::slice::Iter<'a, Record>,
}

impl<'a> Iter<'a> {
    fn op(&self, r: &Record) -> WriteOp<'a> {
        // The ranges were taken from the buffer as it grew; it only grows until `clear`,
        // which drops them too.
        let slice = |range: std::ops::Range<usize>| self.data.get(range).unwrap_or_default();
        let key = slice(r.start..r.key_end);
        if r.put {
            WriteOp::Put(key, slice(r.key_end..r.end))
        } else {
            WriteOp::Delete(key)
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = WriteOp<'a>;

    fn next(&mut self) -> Option<WriteOp<'a>> {
        let r = self.records.next()?;
        Some(self.op(r))
    }

    /// Steps over `n` operations without reading them, so `skip` costs nothing per
    /// operation skipped (a write's pending pairs are indexed from where the last read
    /// stopped).
    fn nth(&mut self, n: usize) -> Option<WriteOp<'a>> {
        let r = self.records.nth(n)?;
        Some(self.op(r))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.records.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let r = self.records.next_back()?;
        Some(self.op(r))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a WriteBatch {
    type Item = WriteOp<'a>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Options for one [`crate::Engine::write`].
///
/// The write-ahead log is always on; `sync` only decides whether the write waits for it to
/// reach stable storage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Wait for the log record to be fsynced before returning. Without it a write survives
    /// a process crash but may be lost in a machine crash. Default `false`.
    pub sync: bool,
}

impl WriteOptions {
    /// Options with `sync = true`.
    pub fn sync() -> Self {
        Self { sync: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_come_back_in_order_with_their_bytes() {
        let mut batch = WriteBatch::with_capacity_bytes(1, 4);
        batch.put(b"k1", b"v1");
        batch.delete(b"k2");
        batch.put_with(|k| k.extend_from_slice(b"k3"), |v| v.extend_from_slice(b""));
        batch.put(b"", b"empty key");
        let ops: Vec<WriteOp<'_>> = batch.iter().collect();
        assert_eq!(
            ops,
            [
                WriteOp::Put(b"k1", b"v1"),
                WriteOp::Delete(b"k2"),
                WriteOp::Put(b"k3", b""),
                WriteOp::Put(b"", b"empty key"),
            ]
        );
        let backwards: Vec<&[u8]> = batch.iter().rev().map(|op| op.key()).collect();
        assert_eq!(backwards, [&b""[..], b"k3", b"k2", b"k1"]);
        // Skipping lands on the operation after those skipped (`nth` steps over them).
        let rest: Vec<WriteOp<'_>> = batch.iter().skip(2).collect();
        assert_eq!(
            rest,
            [WriteOp::Put(b"k3", b""), WriteOp::Put(b"", b"empty key")]
        );
        assert_eq!(batch.iter().nth(1), Some(WriteOp::Delete(b"k2")));
        assert_eq!(batch.iter().nth(4), None);
        assert_eq!(batch.len(), 4);
        assert_eq!(batch.iter().len(), 4);
        assert_eq!(
            batch.approximate_size(),
            2 + 2 + 2 + 2 + 9 + 4 * OP_OVERHEAD
        );
    }

    #[test]
    fn clear_empties_and_equal_contents_compare_equal() {
        let mut a = WriteBatch::new();
        a.put(b"key", b"value");
        let mut b = WriteBatch::with_capacity(8);
        b.put_with(
            |k| k.extend_from_slice(b"key"),
            |v| v.extend_from_slice(b"value"),
        );
        assert_eq!(a, b);
        // The same bytes split differently are different operations.
        let mut c = WriteBatch::new();
        c.put(b"keyv", b"alue");
        assert_ne!(a, c);
        a.clear();
        assert!(a.is_empty());
        assert_eq!(a.iter().next(), None);
        assert_eq!(a.approximate_size(), 0);
    }

    #[test]
    fn append_adds_the_other_batch_after_its_own_operations() {
        let mut a = WriteBatch::new();
        a.put(b"a1", b"x");
        let mut b = WriteBatch::new();
        b.delete(b"b1");
        b.put(b"b2", b"yz");
        a.append(&b);
        a.append(&WriteBatch::new());
        let ops: Vec<WriteOp<'_>> = a.iter().collect();
        assert_eq!(
            ops,
            [
                WriteOp::Put(b"a1", b"x"),
                WriteOp::Delete(b"b1"),
                WriteOp::Put(b"b2", b"yz"),
            ]
        );
        let mut same = WriteBatch::new();
        same.put(b"a1", b"x");
        same.delete(b"b1");
        same.put(b"b2", b"yz");
        assert_eq!(a, same);
        a.clear();
        assert!(a.is_empty());
        assert_eq!(a.iter().next(), None);
        assert_eq!(a.approximate_size(), 0);
    }
}
