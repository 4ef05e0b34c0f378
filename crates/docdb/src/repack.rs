//! Per-table GC rules and packed-row repacking (format.md §7 inputs, §9 "Compaction repacks").
//!
//! One DocDb can hold several tables under `ColocationId` prefixes, each with its own default
//! TTL, dropped columns and packing. The GC looks the rules up per table prefix through a
//! [`TableRulesSource`] (the table layer registers one) and caches them while the prefix
//! stays the same.
//!
//! Repacking folds the column cells written after a row's packed row (or liveness column)
//! into one new packed row. The GC only gathers what readers at or after the history cutoff
//! see of each row ([`RowToRepack`]); a [`Repacker`], which knows the table's schemas, builds
//! the new value. The new packed row is written at the newest folded time, a key the
//! compaction cannot emit (a compaction filter can drop or change values, not add keys), so
//! [`crate::DocDb::compact`] writes the collected rows after the compaction and compacts
//! again: the new row then hides the old one and every cell it folded, and they are dropped.
//! History at or below the cutoff never changes, so writing the rows later is safe.

use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;

use dockv::value::{Ttl, ValueControlFields};
use dockv::{DocHybridTime, KeyEntryValue};

/// What the GC applies to the documents of one table.
#[derive(Debug, Clone, Default)]
pub struct TableRules {
    /// The table's default TTL.
    pub table_ttl: Option<Ttl>,
    /// Values never expire: the table's reads ignore TTLs (YSQL), so compactions must too.
    pub ignore_ttls: bool,
    /// A compaction that sees only part of the data may still turn this table's expired
    /// columns into tombstones. True for rows (YCQL/YSQL): no TTL merge record is ever
    /// written, and a row passes only the table's default TTL down to its columns, so a
    /// column's expiry found from its own record holds whatever lies outside the compaction.
    /// False for documents, whose levels pass TTLs down and take EXPIRE/PERSIST.
    pub local_expiry: bool,
    /// Column ids dropped from the schema: their cells at or below the cutoff go.
    pub deleted_columns: HashSet<i32>,
    /// Builds repacked rows; `None` when the table's rows are not repacked.
    pub repacker: Option<Arc<dyn Repacker>>,
}

/// Finds the rules of a table by its encoded key prefix (empty for the table owning the
/// un-prefixed key space). `None` means the DocDb-wide defaults.
pub trait TableRulesSource: Send + Sync + Debug {
    /// The rules of the table whose documents start with `prefix`.
    fn rules(&self, prefix: &[u8]) -> Option<Arc<TableRules>>;
}

/// One column's newest version at or below the cutoff, as the GC kept it.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnVersion {
    /// The first subkey: `ColumnId` or `SystemColumnId` (0 = liveness).
    pub column: KeyEntryValue,
    /// When it was written.
    pub time: DocHybridTime,
    /// Its control fields.
    pub control: ValueControlFields,
    /// The encoded payload (type byte and data; `X` for a tombstone).
    pub payload: Vec<u8>,
    /// Its TTL ran out by the cutoff: every reader it concerns sees a NULL.
    pub expired: bool,
}

/// What readers at or after the cutoff see of one row, below the cutoff.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowToRepack {
    /// The encoded DocKey.
    pub doc_key: Vec<u8>,
    /// The live packed row the row starts with: its whole value and time.
    pub packed: Option<(Vec<u8>, DocHybridTime)>,
    /// Kept versions of first-level column subkeys, in key order (newer than `packed`).
    pub columns: Vec<ColumnVersion>,
    /// The oldest kept record that is not a first-level column cell (collection elements,
    /// TTL merge records, …): a new packed row must not be newer than it, or it would hide it.
    pub oldest_other: Option<DocHybridTime>,
}

/// A repacked row: its new packed value, written at `time`.
#[derive(Debug, Clone, PartialEq)]
pub struct Repacked {
    /// The time of the new packed row: the newest record it folds.
    pub time: DocHybridTime,
    /// The encoded value (control fields, `z`/`|`, schema version, body).
    pub value: Vec<u8>,
}

/// Builds repacked rows for one table.
pub trait Repacker: Send + Sync + Debug {
    /// The packed row replacing `row`'s packed row and the cells it folds, or `None` to leave
    /// the row as it is. Every reader at or after the returned time must see the same row
    /// with the new packed row as without it, and no kept record the result does not fold
    /// may be older than the returned time.
    fn repack(&self, row: &RowToRepack) -> Option<Repacked>;
}

/// Gathers one document at a time for repacking, inside [`crate::gc::GcFilter`].
#[derive(Debug, Default)]
pub(crate) struct RepackCollector {
    row: RowToRepack,
    /// Whether the current document can still be repacked.
    candidate: bool,
    /// Repacked rows so far: full keys (DocKey + hybrid time) and values.
    pub(crate) out: Vec<(Vec<u8>, Vec<u8>)>,
    /// Bytes held in `out`.
    pub(crate) out_bytes: usize,
}

/// Repacked rows one compaction holds in memory; rows beyond it wait for the next compaction.
pub const MAX_REPACKED_BYTES: usize = 256 << 20;

impl RepackCollector {
    /// Starts a new document.
    pub(crate) fn start(&mut self, doc_key: &[u8]) {
        self.row.doc_key.clear();
        self.row.doc_key.extend_from_slice(doc_key);
        self.row.packed = None;
        self.row.columns.clear();
        self.row.oldest_other = None;
        self.candidate = true;
    }

    /// A kept live packed row at or below the cutoff: it starts the row.
    pub(crate) fn packed_row(&mut self, value: &[u8], time: DocHybridTime) {
        self.row.packed = Some((value.to_vec(), time));
    }

    /// A kept first-level column version at or below the cutoff.
    pub(crate) fn column(&mut self, version: ColumnVersion) {
        self.row.columns.push(version);
    }

    /// Any other kept record at or below the cutoff.
    pub(crate) fn other(&mut self, time: DocHybridTime) {
        let oldest = self.row.oldest_other.get_or_insert(time);
        *oldest = (*oldest).min(time);
    }

    /// The document can no longer be repacked (an undecodable record, say).
    pub(crate) fn abandon(&mut self) {
        self.candidate = false;
    }

    /// Ends the current document: asks `repacker` for its new packed row.
    pub(crate) fn finish(&mut self, repacker: &dyn Repacker) -> bool {
        let worth_it = self.row.packed.is_some() || !self.row.columns.is_empty();
        if !self.candidate || !worth_it || self.out_bytes >= MAX_REPACKED_BYTES {
            self.candidate = false;
            return false;
        }
        self.candidate = false;
        let Some(repacked) = repacker.repack(&self.row) else {
            return false;
        };
        let mut key = self.row.doc_key.clone();
        key.push(dockv::KeyEntryType::HybridTime.as_u8());
        repacked.time.encode_to(&mut key);
        self.out_bytes += key.len() + repacked.value.len();
        self.out.push((key, repacked.value));
        true
    }
}
