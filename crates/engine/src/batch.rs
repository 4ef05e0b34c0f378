//! Write batches and write options.

/// One operation in a [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// Set `key` to `value`, replacing any previous value.
    Put(Vec<u8>, Vec<u8>),
    /// Remove `key` (a no-op if it is absent).
    Delete(Vec<u8>),
}

impl WriteOp {
    /// The key this operation writes.
    pub fn key(&self) -> &[u8] {
        match self {
            WriteOp::Put(key, _) | WriteOp::Delete(key) => key,
        }
    }
}

/// Fixed per-operation overhead counted by [`WriteBatch::approximate_size`], roughly what
/// RocksDB spends on the record tag and two length varints.
const OP_OVERHEAD: usize = 8;

/// An ordered list of puts and deletes applied atomically by [`crate::Engine::write`].
///
/// Operations apply in the order they were added, so a later operation on the same key
/// wins (a `put` followed by a `delete` of the same key leaves the key absent). Readers
/// see either none or all of a batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<WriteOp>,
    bytes: usize,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `ops` operations.
    pub fn with_capacity(ops: usize) -> Self {
        Self {
            ops: Vec::with_capacity(ops),
            bytes: 0,
        }
    }

    /// Appends a put of `key` → `value`. Owned `Vec<u8>`s are moved without copying.
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        let (key, value) = (key.into(), value.into());
        self.bytes += key.len() + value.len() + OP_OVERHEAD;
        self.ops.push(WriteOp::Put(key, value));
    }

    /// Appends a delete of `key`.
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) {
        let key = key.into();
        self.bytes += key.len() + OP_OVERHEAD;
        self.ops.push(WriteOp::Delete(key));
    }

    /// Number of operations in the batch.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True if the batch holds no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations in the order they will be applied.
    pub fn iter(&self) -> std::slice::Iter<'_, WriteOp> {
        self.ops.iter()
    }

    /// The operations in the order they will be applied, moved out of the batch.
    pub fn into_ops(self) -> Vec<WriteOp> {
        self.ops
    }

    /// Approximate encoded size in bytes: keys plus values plus a small fixed overhead per
    /// operation. Useful for deciding when to cut a large batch.
    pub fn approximate_size(&self) -> usize {
        self.bytes
    }

    /// Removes all operations, keeping the allocation.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.bytes = 0;
    }
}

impl<'a> IntoIterator for &'a WriteBatch {
    type Item = &'a WriteOp;
    type IntoIter = std::slice::Iter<'a, WriteOp>;

    fn into_iter(self) -> Self::IntoIter {
        self.ops.iter()
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
