//! Compaction GC as a pure state machine over the sorted key/value stream (format.md §7,
//! YugabyteDB's `DocDBCompactionFilter`).
//!
//! Records arrive in key order. The filter keeps a stack with one entry per path level: the
//! newest time at or below the history cutoff at which that subtree was fully overwritten
//! (tombstone, init marker, primitive) and the expiration its children inherit. A record
//! older than its ancestor's overwrite time is invisible to every reader at or after the
//! cutoff and is dropped.

use std::collections::HashSet;
use std::sync::Arc;

use dockv::doc_key::{TablePrefix, component_ends};
use dockv::value::{Ttl, ValueControlFields};
use dockv::{DocHybridTime, HybridTime, KeyEntryType, KeyEntryValue, ValueEntryType};

use crate::expiration::{
    Expiration, effective_expiration, has_expired, is_expired_at, own_expiration,
};
use crate::repack::{ColumnVersion, RepackCollector, TableRules, TableRulesSource};

/// What a compaction may assume and do.
#[derive(Debug, Clone, Default)]
pub struct GcParams {
    /// Versions at or below this time are only read at this time or later.
    pub history_cutoff: HybridTime,
    /// The table's default TTL.
    pub table_ttl: Option<Ttl>,
    /// No older data exists outside this compaction (a full/major compaction), so
    /// tombstones and expired values can be dropped. A partial compaction keeps tombstones,
    /// and keeps expired values as they are unless nothing outside it can restate their
    /// expiry ([`TableRules::local_expiry`]); those become tombstones.
    pub full: bool,
    /// The caller can apply computed rewrites (stripping the intent time). When false,
    /// nothing is rewritten.
    pub can_rewrite: bool,
    /// Column ids dropped from the schema; their cells at or below the cutoff are dropped.
    pub deleted_columns: HashSet<i32>,
    /// Per-table rules (colocated tables); `table_ttl` and `deleted_columns` apply to
    /// documents it has no rules for.
    pub tables: Option<Arc<dyn TableRulesSource>>,
}

impl GcParams {
    /// Whether rows are repacked: only where rewrites are honoured and nothing older exists
    /// elsewhere (format.md §9).
    pub fn repacks(&self) -> bool {
        self.full && self.can_rewrite
    }
}

/// The GC's verdict on one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GcDecision {
    /// Keep as is.
    Keep,
    /// Drop the record.
    Discard,
    /// Replace the value with a plain tombstone (an expired value that still hides older
    /// versions).
    Tombstone,
    /// Replace the value with these bytes (only when `can_rewrite`).
    Rewrite(Vec<u8>),
}

/// Counters of one compaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Document records seen (metadata keys, below the first record byte, are not counted).
    pub keys_seen: u64,
    /// Records dropped because a newer version or an ancestor overwrite hides them.
    pub overwritten_dropped: u64,
    /// Tombstones dropped.
    pub tombstones_dropped: u64,
    /// Expired values dropped.
    pub expired_dropped: u64,
    /// Expired values turned into tombstones.
    pub expired_to_tombstone: u64,
    /// TTL merge records dropped: superseded by a newer one, or expired.
    pub merges_dropped: u64,
    /// Cells of deleted columns dropped.
    pub deleted_column_dropped: u64,
    /// Records kept untouched because they could not be decoded (never dropped).
    pub undecodable_kept: u64,
    /// Rows given a new packed row (format.md §9 "Compaction repacks").
    pub rows_repacked: u64,
}

impl GcStats {
    /// Adds another compaction's counters.
    pub fn add(&mut self, other: &GcStats) {
        self.keys_seen += other.keys_seen;
        self.overwritten_dropped += other.overwritten_dropped;
        self.tombstones_dropped += other.tombstones_dropped;
        self.expired_dropped += other.expired_dropped;
        self.expired_to_tombstone += other.expired_to_tombstone;
        self.merges_dropped += other.merges_dropped;
        self.deleted_column_dropped += other.deleted_column_dropped;
        self.undecodable_kept += other.undecodable_kept;
        self.rows_repacked += other.rows_repacked;
    }

    /// The counters added since `before`.
    pub fn since(&self, before: &GcStats) -> GcStats {
        GcStats {
            keys_seen: self.keys_seen - before.keys_seen,
            overwritten_dropped: self.overwritten_dropped - before.overwritten_dropped,
            tombstones_dropped: self.tombstones_dropped - before.tombstones_dropped,
            expired_dropped: self.expired_dropped - before.expired_dropped,
            expired_to_tombstone: self.expired_to_tombstone - before.expired_to_tombstone,
            merges_dropped: self.merges_dropped - before.merges_dropped,
            deleted_column_dropped: self.deleted_column_dropped - before.deleted_column_dropped,
            undecodable_kept: self.undecodable_kept - before.undecodable_kept,
            rows_repacked: self.rows_repacked - before.rows_repacked,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Overwrite {
    time: DocHybridTime,
    expiration: Expiration,
    /// Level 0 only: the document's kept row-level record at or below the cutoff is a packed
    /// row, whose columns the cells below it may shadow.
    packed_row: bool,
}

/// The GC state machine; feed it every record of one compaction in key order.
#[derive(Debug)]
pub struct GcFilter {
    params: GcParams,
    /// The previous record's path (key without hybrid time).
    prev_path: Vec<u8>,
    /// Component ends of the previous path.
    prev_ends: Vec<usize>,
    ends: Vec<usize>,
    overwrite: Vec<Overwrite>,
    within_merge_block: bool,
    /// The expiration set by the newest merge record of the current merge block.
    block_merge: Option<Expiration>,
    /// Whether that newest merge record was kept.
    block_merge_kept: bool,
    stats: GcStats,
    /// The rules of the current document's table, and that table's key prefix.
    table: Arc<TableRules>,
    table_prefix: Option<Vec<u8>>,
    /// The rules of documents no table claims.
    default_table: Arc<TableRules>,
    /// The newest table-level tombstone (`prefix !`, format.md §3) at or below the cutoff of
    /// the current table prefix: every record of the table not newer is hidden (level 0 of
    /// format.md §7's stack).
    table_tombstone: DocHybridTime,
    /// Whether the current document is that table-level tombstone's.
    at_table_tombstone: bool,
    /// What the last record was, for repacking (`None` above the cutoff).
    seen: Option<Seen>,
    repack: RepackCollector,
}

/// A record at or below the cutoff, as `decide` saw it.
#[derive(Debug, Clone, Copy)]
struct Seen {
    time: DocHybridTime,
    /// Number of subkeys (0 = the row-level record).
    depth: usize,
    is_merge: bool,
    expired: bool,
    packed_row: bool,
}

/// Keys below this byte are metadata, not document records; GC leaves them alone.
const MIN_ROW_FIRST_BYTE: u8 = crate::db::FIRST_RECORD_BYTE;

impl GcFilter {
    /// A filter for one compaction.
    pub fn new(params: GcParams) -> Self {
        let default_table = Arc::new(TableRules {
            table_ttl: params.table_ttl,
            deleted_columns: params.deleted_columns.clone(),
            ignore_ttls: false,
            local_expiry: false,
            repacker: None,
        });
        GcFilter {
            params,
            table: default_table.clone(),
            table_prefix: None,
            default_table,
            table_tombstone: DocHybridTime::MIN,
            at_table_tombstone: false,
            seen: None,
            repack: RepackCollector::default(),
            prev_path: Vec::new(),
            prev_ends: Vec::new(),
            ends: Vec::new(),
            overwrite: Vec::new(),
            within_merge_block: false,
            block_merge: None,
            block_merge_kept: false,
            stats: GcStats::default(),
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> &GcStats {
        &self.stats
    }

    /// Decides the fate of one record.
    pub fn filter(&mut self, key: &[u8], value: &[u8]) -> GcDecision {
        if key.first().is_none_or(|&b| b < MIN_ROW_FIRST_BYTE) {
            return GcDecision::Keep;
        }
        self.stats.keys_seen += 1;
        self.seen = None;
        match self.decide(key, value) {
            Some(decision) => {
                if let Some(seen) = self.seen.take() {
                    self.collect(value, seen, &decision);
                }
                decision
            }
            None => {
                // Fail safe: never drop what we cannot read.
                tracing::warn!(key = %dockv::escape::format_bytes(key), "GC kept an undecodable record");
                self.stats.undecodable_kept += 1;
                self.repack.abandon();
                GcDecision::Keep
            }
        }
    }

    /// Ends the compaction: the repacked rows to write once it has finished, as full keys
    /// (DocKey + hybrid time) and values.
    pub fn take_repacked(&mut self) -> Records {
        self.finish_document();
        std::mem::take(&mut self.repack.out)
    }

    /// A new document starts at `key` (its DocKey ends at `doc_end`).
    fn start_document(&mut self, key: &[u8], doc_end: usize) {
        self.finish_document();
        let prefix_len = match TablePrefix::decode(key) {
            Ok((_, rest)) => key.len() - rest.len(),
            Err(_) => 0,
        };
        self.switch_table(&key[..prefix_len]);
        self.at_table_tombstone = prefix_len > 0
            && doc_end == prefix_len + 1
            && key[prefix_len] == KeyEntryType::GroupEnd.as_u8();
        if self.params.repacks() && self.table.repacker.is_some() {
            self.repack.start(&key[..doc_end]);
        }
    }

    fn finish_document(&mut self) {
        if let Some(repacker) = self.table.repacker.clone()
            && self.params.repacks()
            && self.repack.finish(repacker.as_ref())
        {
            self.stats.rows_repacked += 1;
        }
    }

    /// Moves to the table of `prefix` when it differs from the previous document's: its
    /// rules, and no table-level tombstone seen yet.
    fn switch_table(&mut self, prefix: &[u8]) {
        if self.table_prefix.as_deref() == Some(prefix) {
            return;
        }
        self.table_prefix = Some(prefix.to_vec());
        self.table_tombstone = DocHybridTime::MIN;
        if let Some(source) = &self.params.tables {
            self.table = source
                .rules(prefix)
                .unwrap_or_else(|| self.default_table.clone());
        }
    }

    /// Hands a kept record at or below the cutoff to the repack collector.
    fn collect(&mut self, value: &[u8], seen: Seen, decision: &GcDecision) {
        if !self.params.repacks() || self.table.repacker.is_none() {
            return;
        }
        if *decision == GcDecision::Discard {
            return;
        }
        if seen.is_merge || seen.depth > 1 {
            self.repack.other(seen.time);
            return;
        }
        if seen.depth == 0 {
            if seen.packed_row && !seen.expired {
                self.repack.packed_row(value, seen.time);
            }
            return;
        }
        let column = self
            .prev_ends
            .first()
            .and_then(|&start| self.prev_path.get(start..))
            .and_then(|bytes| KeyEntryValue::decode_exact(bytes).ok());
        let Some(column @ (KeyEntryValue::ColumnId(_) | KeyEntryValue::SystemColumnId(_))) = column
        else {
            self.repack.other(seen.time);
            return;
        };
        let Ok((control, payload)) = ValueControlFields::decode(value) else {
            self.repack.abandon();
            return;
        };
        self.repack.column(ColumnVersion {
            column,
            time: seen.time,
            control,
            payload: payload.to_vec(),
            expired: seen.expired || *decision == GcDecision::Tombstone,
        });
    }

    fn decide(&mut self, key: &[u8], value: &[u8]) -> Option<GcDecision> {
        let time = component_ends(key, &mut self.ends).ok()??;
        let path_end = *self.ends.last()?;
        let path = &key[..path_end];
        let same_bytes = common_prefix_len(path, &self.prev_path);
        let num_shared = self
            .prev_ends
            .iter()
            .take_while(|&&end| end <= same_bytes)
            .count();
        let new_stack_size = self.ends.len();
        let same_path = same_bytes == path_end && path_end == self.prev_path.len();
        self.prev_path.clear();
        self.prev_path.extend_from_slice(path);
        std::mem::swap(&mut self.prev_ends, &mut self.ends);

        self.overwrite.truncate(num_shared);
        if num_shared == 0 {
            self.start_document(key, *self.prev_ends.first()?);
        }
        let (control, payload) = ValueControlFields::decode(value).ok()?;
        let is_merge = control.is_ttl_merge();
        let (prev_time, prev_exp) = self
            .overwrite
            .last()
            .map_or((self.table_tombstone, Expiration::default()), |o| {
                (o.time, o.expiration)
            });
        let under_packed_row =
            new_stack_size > 1 && self.overwrite.first().is_some_and(|o| o.packed_row);
        // Merge records count here too (YugabyteDB exempts them): one older than a newer
        // value or an ancestor's overwrite no longer applies to anything readers see. Readers
        // hide a record written at the very time of an ancestor's overwrite too, which only a
        // repacked row (written at the time of the newest cell it folds) produces.
        if time <= prev_time {
            self.stats.overwritten_dropped += 1;
            return Some(GcDecision::Discard);
        }
        // Every subtree was overwritten at least when its parent was.
        while self.overwrite.len() < new_stack_size - 1 {
            self.overwrite.push(Overwrite {
                time: prev_time,
                expiration: prev_exp,
                packed_row: false,
            });
        }
        if self.overwrite.len() == new_stack_size {
            self.overwrite.pop();
        }
        if !same_path {
            self.within_merge_block = false;
            self.block_merge = None;
        }
        if time.ht > self.params.history_cutoff {
            self.overwrite.push(Overwrite {
                time: prev_time,
                expiration: prev_exp,
                packed_row: false,
            });
            return Some(GcDecision::Keep);
        }
        if self.is_deleted_column(key) {
            self.stats.deleted_column_dropped += 1;
            return Some(GcDecision::Discard);
        }

        let overwrite_time = if is_merge {
            prev_time
        } else {
            prev_time.max(time)
        };
        // The same rules as the read path (reader.rs), with the parent's level on the stack.
        let own = if is_merge {
            Some(Expiration::new(time.ht, control.ttl))
        } else {
            own_expiration(time.ht, control.ttl, self.block_merge)
        };
        let chain = self.overwrite.iter().rev().map(|o| o.expiration);
        let expiration = effective_expiration(own, chain, time.ht);
        let value_type = payload.first().and_then(|&b| ValueEntryType::from_u8(b));
        let cutoff = self.params.history_cutoff;
        // A packed row (format.md §9) passes only the table default TTL down, as YugabyteDB's
        // reader does: its own TTL is the liveness's, not its later columns'.
        let is_packed_row = new_stack_size == 1
            && !is_merge
            && matches!(
                value_type,
                Some(ValueEntryType::PackedRowV1 | ValueEntryType::PackedRowV2)
            );
        let table_ttl = self.table.table_ttl;
        let expired =
            !self.table.ignore_ttls && is_expired_at(expiration, time.ht, table_ttl, cutoff);
        self.overwrite.push(Overwrite {
            time: overwrite_time,
            expiration: if is_packed_row {
                Expiration::default()
            } else {
                expiration
            },
            packed_row: is_packed_row && !expired,
        });
        self.seen = Some(Seen {
            time,
            depth: new_stack_size - 1,
            is_merge,
            expired,
            packed_row: is_packed_row,
        });

        if is_merge {
            return Some(self.merge_record(expiration));
        }
        if self.at_table_tombstone && value_type == Some(ValueEntryType::Tombstone) {
            self.table_tombstone = self.table_tombstone.max(time);
        }
        let under_kept_merge = self.within_merge_block && self.block_merge_kept;
        self.within_merge_block = false;
        self.block_merge = None;
        if under_kept_merge {
            // A kept merge record only means something to readers with this value under it:
            // its expiration is what this path passes down (a PERSIST overriding the older
            // TTLs of children, say). Dropping the value would change what those children
            // inherit, so it stays, expired or not, as long as the merge record does.
            return Some(GcDecision::Keep);
        }
        if expired {
            // Below a kept packed row an expired cell still shadows the packed column (this
            // GC does not repack rows): it stays, as a tombstone.
            return Some(if self.params.full && !under_packed_row {
                self.stats.expired_dropped += 1;
                GcDecision::Discard
            } else if self.params.full || self.expiry_is_local(new_stack_size, control.ttl) {
                self.stats.expired_to_tombstone += 1;
                GcDecision::Tombstone
            } else {
                // Records outside this compaction may restate the expiration: an ancestor's
                // TTL passed down, a later EXPIRE or PERSIST. A full compaction decides.
                GcDecision::Keep
            });
        }
        if control.intent_doc_ht.is_some() && time.ht < cutoff && self.params.can_rewrite {
            let control = ValueControlFields {
                intent_doc_ht: None,
                ..control
            };
            return Some(GcDecision::Rewrite(reencode(control, payload)));
        }
        if value_type == Some(ValueEntryType::Tombstone) && self.params.full && !under_packed_row {
            self.stats.tombstones_dropped += 1;
            return Some(GcDecision::Discard);
        }
        Some(GcDecision::Keep)
    }

    /// A TTL merge record at or below the cutoff. Only the newest one of a path matters to
    /// readers, so older ones go. The newest is kept rather than folded into the value below
    /// (YugabyteDB restates the value's TTL, but TTLs are whole milliseconds, so folding would
    /// move the expiry by up to 1 ms and change reads after the cutoff). Once its own TTL has
    /// run out by the cutoff, a full compaction drops it: the value under it expires with it
    /// and is dropped in the same pass. While it is kept, so is the value under it.
    fn merge_record(&mut self, expiration: Expiration) -> GcDecision {
        let newest = !self.within_merge_block;
        self.within_merge_block = true;
        if newest {
            self.block_merge = Some(expiration);
        }
        let expired = has_expired(
            expiration.write_ht,
            expiration.ttl,
            self.params.history_cutoff,
        );
        if !newest {
            // Superseded by the block's newest merge record.
            self.stats.merges_dropped += 1;
            return GcDecision::Discard;
        }
        if expired && self.params.full {
            self.block_merge_kept = false;
            self.stats.merges_dropped += 1;
            return GcDecision::Discard;
        }
        self.block_merge_kept = true;
        GcDecision::Keep
    }

    /// Whether a compaction that sees only part of the data can trust its expiry of a record
    /// `stack_size` components deep (the DocKey counts) with `ttl` of its own: see
    /// [`TableRules::local_expiry`]. A column directly below the row inherits only the table
    /// default; deeper levels (collection elements) may inherit from a level outside.
    fn expiry_is_local(&self, stack_size: usize, ttl: Option<Ttl>) -> bool {
        self.table.local_expiry && (ttl.is_some() || stack_size == 2)
    }

    fn is_deleted_column(&self, key: &[u8]) -> bool {
        if self.table.deleted_columns.is_empty() || self.prev_ends.len() < 2 {
            return false;
        }
        let Some(first_subkey) = key.get(self.prev_ends[0]..) else {
            return false;
        };
        match dockv::KeyEntryValue::decode(first_subkey) {
            Ok((dockv::KeyEntryValue::ColumnId(id), _)) => self.table.deleted_columns.contains(&id),
            _ => false,
        }
    }
}

/// Control fields plus the untouched payload bytes.
fn reencode(control: ValueControlFields, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 12);
    control.encode_to(&mut out);
    out.extend_from_slice(payload);
    out
}

fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The encoded tombstone value, for compaction filters that need a `'static` replacement.
pub const TOMBSTONE_VALUE: &[u8] = b"X";

/// Owned key/value pairs in key order.
pub type Records = Vec<(Vec<u8>, Vec<u8>)>;

/// Runs the filter over an in-memory sorted stream; handy for tests and tools.
pub fn gc_stream<'a>(
    params: GcParams,
    records: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
) -> (Records, GcStats) {
    let mut filter = GcFilter::new(params);
    let mut out = Vec::new();
    for (key, value) in records {
        match filter.filter(key, value) {
            GcDecision::Keep => out.push((key.to_vec(), value.to_vec())),
            GcDecision::Discard => {}
            GcDecision::Tombstone => out.push((key.to_vec(), TOMBSTONE_VALUE.to_vec())),
            GcDecision::Rewrite(v) => out.push((key.to_vec(), v)),
        }
    }
    (out, *filter.stats())
}
