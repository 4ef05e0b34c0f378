//! The read path: documents as of a hybrid time (format.md §8).
//!
//! Records arrive in key order: for each path, its versions newest first, then its children.
//! For each path the reader takes the newest version at or before the read time and skips
//! the rest with a seek. A stack holds, per level of the current path, the time at which that
//! subtree was last fully overwritten (tombstone, init marker or primitive) and the
//! expiration its children inherit: a record not newer than its nearest overwritten ancestor
//! is invisible.

use dockv::doc_key::{DocKey, component_ends, component_ends_below};
use dockv::value::{PrimitiveValue, Ttl, ValueControlFields};
use dockv::{DocHybridTime, HybridTime, KeyEntryType, KeyEntryValue};
use engine::EngineIterator;

use crate::error::{Error, Result};
use crate::expiration::{
    Expiration, effective_expiration, effective_ttl, is_expired_at, own_expiration,
};
use crate::gc::TOMBSTONE_VALUE;
use crate::subdoc::{Children, ObjectKind, SubDocument};

/// How to read.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Read the state as of this time.
    pub read_ht: HybridTime,
    /// The table's default TTL.
    pub table_ttl: Option<Ttl>,
    /// When set, only these first-level children of the read path are returned.
    pub projection: Option<Vec<KeyEntryValue>>,
}

impl ReadOptions {
    /// Reading at `read_ht` with no table TTL and no projection.
    pub fn at(read_ht: HybridTime) -> Self {
        ReadOptions {
            read_ht,
            ..Self::default()
        }
    }
}

/// Counters of one read or scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Records looked at.
    pub entries_seen: u64,
    /// Records stepped over because they were too new, older versions, or hidden.
    pub invisible_stepped: u64,
    /// Seeks issued.
    pub seeks: u64,
    /// Runs of invisible documents skipped with one seek, as earlier scans found them.
    pub spans_skipped: u64,
}

impl std::ops::AddAssign for ReadStats {
    fn add_assign(&mut self, other: ReadStats) {
        self.entries_seen += other.entries_seen;
        self.invisible_stepped += other.invisible_stepped;
        self.seeks += other.seeks;
        self.spans_skipped += other.spans_skipped;
    }
}

/// How many `next` calls to try before seeking past the remaining versions of a path.
pub(crate) const NEXTS_BEFORE_SEEK: usize = 4;

/// Bytes of subkeys a reader's path buffers hold beyond the path they start from.
const PATH_ROOM: usize = 32;

/// The type byte between a record's path and its hybrid time.
pub(crate) const HYBRID_TIME_BYTE: u8 = KeyEntryType::HybridTime.as_u8();

/// Level state: when the subtree was last overwritten and what expiration it passes down.
#[derive(Debug, Clone, Copy, Default)]
struct Level {
    overwrite: DocHybridTime,
    exp: Expiration,
}

/// How [`DocReader::visible_version`] treats the iterator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Part of a scan: an iterator already on the path's versions arrived there in key order
    /// (so is on the newest one it may read), and is left past every version of the path.
    Scan,
    /// A point lookup: always seek (the iterator may sit anywhere, even among this path's
    /// older versions after an earlier lookup), and leave it where the search ended.
    Lookup,
}

/// The newest version of one path at or before the read time.
struct Version {
    time: DocHybridTime,
    control: ValueControlFields,
    payload: PrimitiveValue,
    /// Set when TTL merge records newer than the value restate its expiration.
    merged_exp: Option<Expiration>,
}

/// Reads the subdocument at `path` (an encoded DocKey plus subkeys, without hybrid time).
/// Returns `None` when nothing is visible there.
pub fn read_subdocument<I: EngineIterator>(
    iter: &mut I,
    path: &[u8],
    opts: &ReadOptions,
    stats: &mut ReadStats,
) -> Result<Option<SubDocument>> {
    let mut ends = Vec::new();
    component_ends(path, &mut ends)?;
    let root_depth = ends.len() - 1;
    let mut reader = DocReader::new(opts, stats, root_depth);
    reader.read_ancestors(iter, path, &ends)?;
    reader.read_subtree(iter, path, &ends)?;
    Ok(reader.root)
}

/// Which first-level children of a path [`read_children`] returns: encoded subkeys (the
/// bytes after the path) from `lower` (inclusive) to `upper` (exclusive), in key order or
/// reversed, at most `limit` live ones.
#[derive(Debug, Clone, Default)]
pub struct ChildRange {
    /// Inclusive lower bound on the encoded child subkey.
    pub lower: Option<Vec<u8>>,
    /// Exclusive upper bound on the encoded child subkey.
    pub upper: Option<Vec<u8>>,
    /// Largest key first.
    pub reverse: bool,
    /// At most this many visible children.
    pub limit: Option<usize>,
}

/// The visible first-level children of `path` within `range`, each with its subtree, without
/// reading the rest of the document: a Redis `LPOP` or `ZRANGE 0 9` touches only what it
/// returns (plus hidden versions on the way). `opts.projection` must be `None`.
pub fn read_children<I: EngineIterator>(
    iter: &mut I,
    path: &[u8],
    range: &ChildRange,
    opts: &ReadOptions,
    stats: &mut ReadStats,
) -> Result<Vec<(KeyEntryValue, SubDocument)>> {
    read_children_cached(iter, path, range, opts, stats, &mut None)
}

/// [`read_children`], taking the root's level from `root` when known and remembering it (a
/// Redis `LPOP` reads the list's children right after checking its root).
pub(crate) fn read_children_cached<I: EngineIterator>(
    iter: &mut I,
    path: &[u8],
    range: &ChildRange,
    opts: &ReadOptions,
    stats: &mut ReadStats,
    root: &mut Option<RootLevel>,
) -> Result<Vec<(KeyEntryValue, SubDocument)>> {
    let mut ends = Vec::new();
    component_ends(path, &mut ends)?;
    let depth = ends.len() - 1;
    let mut reader = DocReader::new(opts, stats, depth + 1);
    reader.read_ancestors_from(iter, path, &ends, root)?;
    match (depth, *root) {
        (0, Some(RootLevel(known))) => reader.stack.push(known),
        _ => {
            let own = reader.visible_version(iter, path, Mode::Lookup, None)?;
            reader.apply(depth, own, None);
            if depth == 0 {
                *root = reader.stack.first().copied().map(RootLevel);
            }
        }
    }
    let limit = range.limit.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    let mut target = path.to_vec();
    if range.reverse {
        match range.upper.as_deref() {
            Some(upper) => match dockv::key_entry::skip_key_entry(upper) {
                // A child whose subkey is a prefix of the bound sorts below it, but its
                // keys (subkey + more) sort above: start past all of them.
                Ok(rest) if !rest.is_empty() => {
                    target.extend_from_slice(&upper[..upper.len() - rest.len()]);
                    target.push(0xFF);
                }
                _ => target.extend_from_slice(upper),
            },
            None => target.push(0xFF),
        }
        reader.seek_for_prev(iter, &target);
    } else {
        match &range.lower {
            Some(lower) => target.extend_from_slice(lower),
            None => target.push(KeyEntryType::HybridTime.as_u8() + 1),
        }
        reader.seek(iter, &target);
    }
    let mut child_ends = Vec::new();
    while out.len() < limit && iter.valid()? {
        let Some(child) = child_of(iter.key(), path)? else {
            break;
        };
        let rel = &child[path.len()..];
        let past_upper = range.upper.as_deref().is_some_and(|u| rel >= u);
        let before_lower = range.lower.as_deref().is_some_and(|l| rel < l);
        if (!range.reverse && past_upper) || (range.reverse && before_lower) {
            break;
        }
        if past_upper || before_lower {
            // A child whose subkey is a prefix of a bound: outside, but among the keys.
            if range.reverse {
                reader.seek_for_prev(iter, &child);
            } else {
                let mut past = child.clone();
                past.push(0xFF);
                reader.seek(iter, &past);
            }
            continue;
        }
        reader.stack.truncate(depth + 1);
        reader.root = None;
        component_ends(&child, &mut child_ends)?;
        if range.reverse {
            // The iterator is on the child's last key; its subtree is read forward.
            reader.seek(iter, &child);
        }
        reader.read_subtree(iter, &child, &child_ends)?;
        if let Some(doc) = reader.root.take() {
            out.push((KeyEntryValue::decode(rel)?.0, doc));
        }
        if range.reverse {
            reader.seek_for_prev(iter, &child);
        }
    }
    Ok(out)
}

/// The path of the child of `path` that `key` belongs to, or `None` when `key` is outside
/// `path` or one of its own versions.
fn child_of(key: &[u8], path: &[u8]) -> Result<Option<Vec<u8>>> {
    if !key.starts_with(path) || key.len() == path.len() {
        return Ok(None);
    }
    let rest = &key[path.len()..];
    if rest[0] == KeyEntryType::HybridTime.as_u8() {
        return Ok(None);
    }
    let after = dockv::key_entry::skip_key_entry(rest)?;
    Ok(Some(key[..key.len() - after.len()].to_vec()))
}

/// The record visible at exactly `path` at the read time: not hidden by an ancestor's
/// overwrite. `expired` tells whether its TTL has run out (callers treat that as a tombstone
/// at `time`).
#[derive(Debug, Clone, PartialEq)]
pub struct VisibleRecord {
    /// When it was written.
    pub time: DocHybridTime,
    /// Its control fields (TTL, user timestamp).
    pub control: ValueControlFields,
    /// Its payload.
    pub payload: PrimitiveValue,
    /// Whether its TTL (or an inherited one) ran out by the read time.
    pub expired: bool,
    /// The expiration in force (own TTL, a newer merge record's, or an inherited one); the
    /// table TTL is not folded in.
    pub expiration: Expiration,
}

impl VisibleRecord {
    /// When the record expires (physical microseconds), if it has a TTL: its own, a merge
    /// record's, an ancestor's, or else `table_ttl` counted from its write time.
    pub fn expires_at_micros(&self, table_ttl: Option<Ttl>) -> Option<u64> {
        let ttl = effective_ttl(self.expiration.ttl, table_ttl)?;
        let from = if self.expiration.ttl.is_some() {
            self.expiration.write_ht
        } else {
            self.time.ht
        };
        Some(
            from.physical_micros()
                .saturating_add(u64::try_from(ttl.micros()).unwrap_or(0)),
        )
    }
}

impl VisibleRecord {
    /// True when the path holds a live value (not a tombstone, not expired).
    pub fn is_live(&self) -> bool {
        !self.expired && !self.payload.is_tombstone()
    }
}

/// Looks up the visible record at exactly `path` (DocKey plus subkeys), honouring
/// ancestors' tombstones, init markers and TTLs.
pub fn visible_record<I: EngineIterator>(
    iter: &mut I,
    path: &[u8],
    opts: &ReadOptions,
    stats: &mut ReadStats,
) -> Result<Option<VisibleRecord>> {
    visible_record_cached(iter, path, opts, stats, &mut None)
}

/// What a document's root passes down to its children, once read: lookups of several paths
/// of one document ([`crate::db::DocView`]) read the root once.
#[derive(Debug, Clone, Copy)]
pub struct RootLevel(Level);

impl RootLevel {
    /// What a live root record written at `time`, with expiration `exp`, passes down.
    pub(crate) fn of_root(time: DocHybridTime, exp: Expiration) -> Self {
        RootLevel(Level {
            overwrite: time,
            exp,
        })
    }
}

/// [`visible_record`], taking the root's level from `root` when known and remembering it.
pub(crate) fn visible_record_cached<I: EngineIterator>(
    iter: &mut I,
    path: &[u8],
    opts: &ReadOptions,
    stats: &mut ReadStats,
    root: &mut Option<RootLevel>,
) -> Result<Option<VisibleRecord>> {
    visible_record_with(iter, path, opts, stats, root, Mode::Lookup)
}

/// The visible record at the root of the document at `doc_key` (an encoded DocKey), for a
/// forward scan over documents: the iterator is on the document's first record, reached in
/// key order, and is left past the root's versions, on the document's next record (if any).
/// Unlike [`visible_record`], it seeks only when the root's newest versions are newer than
/// the read time.
pub(crate) fn visible_root_in_scan<I: EngineIterator>(
    iter: &mut I,
    doc_key: &[u8],
    opts: &ReadOptions,
    stats: &mut ReadStats,
) -> Result<Option<VisibleRecord>> {
    visible_record_with(iter, doc_key, opts, stats, &mut None, Mode::Scan)
}

fn visible_record_with<I: EngineIterator>(
    iter: &mut I,
    path: &[u8],
    opts: &ReadOptions,
    stats: &mut ReadStats,
    root: &mut Option<RootLevel>,
    mode: Mode,
) -> Result<Option<VisibleRecord>> {
    let mut ends = Vec::new();
    component_ends(path, &mut ends)?;
    let depth = ends.len() - 1;
    // Nothing goes into a result tree: the record itself is returned.
    let mut reader = DocReader::new(opts, stats, usize::MAX);
    reader.read_ancestors_from(iter, path, &ends, root)?;
    let parent = reader.stack.last().copied().unwrap_or_default();
    let version = reader.visible_version(iter, path, mode, None)?;
    let version = version.filter(|v| v.time > parent.overwrite);
    let exp = version.as_ref().map(|v| reader.effective_expiration(v));
    if depth == 0 {
        *root = Some(RootLevel(match (&version, exp) {
            (Some(v), Some(exp)) => Level {
                overwrite: v.time,
                exp,
            },
            _ => parent,
        }));
    }
    let (Some(version), Some(exp)) = (version, exp) else {
        return Ok(None);
    };
    let expired = is_expired_at(exp, version.time.ht, opts.table_ttl, opts.read_ht);
    Ok(Some(VisibleRecord {
        time: version.time,
        control: version.control,
        payload: version.payload,
        expired,
        expiration: exp,
    }))
}

struct DocReader<'a> {
    /// Reused seek-target buffer.
    target: Vec<u8>,
    /// `#` + the read time with the largest write id: the first version a read may see.
    read_suffix: Vec<u8>,
    /// How much of `read_suffix` is `#` and the time without the write id: a seek there
    /// lands where a seek to the whole suffix does, but is outside the domain of
    /// [`crate::sub_doc_key_prefix`], so it sees every key (see [`DocReader::visible_version`]).
    read_time_prefix_len: usize,
    /// A root overwrite time and its encoding, for comparing record times as bytes.
    overwrite_key: (DocHybridTime, Vec<u8>),
    opts: &'a ReadOptions,
    stats: &'a mut ReadStats,
    stack: Vec<Level>,
    /// The result below the read root, built as records arrive (see [`DocReader::apply`]).
    root: Option<SubDocument>,
    root_depth: usize,
    /// Whether the iterator was last positioned by a lookup's seek, which is exact for that
    /// path's versions only (see [`DocReader::visible_version`]).
    after_lookup: bool,
    /// Path buffers of [`Self::read_subtree`], kept across the documents of a scan.
    paths: PathBuffers,
}

/// The previous and current record's path and component ends.
#[derive(Debug, Default)]
struct PathBuffers {
    prev_path: Vec<u8>,
    prev_ends: Vec<usize>,
    cur_path: Vec<u8>,
    ends: Vec<usize>,
}

/// Reads the documents of a scan one after another, reusing its buffers.
pub(crate) struct DocScanner<'a> {
    reader: DocReader<'a>,
    deleted: DeletedDocs,
    ends: Vec<usize>,
}

impl<'a> DocScanner<'a> {
    /// A scanner reading as `opts` says, counting into `stats`.
    pub(crate) fn new(opts: &'a ReadOptions, stats: &'a mut ReadStats) -> Self {
        DocScanner {
            reader: DocReader::new(opts, stats, 0),
            deleted: DeletedDocs::new(opts.read_ht),
            ends: Vec::new(),
        }
    }

    /// The document at `doc_key` (an encoded DocKey), as [`read_subdocument`] reads it.
    pub(crate) fn read<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        doc_key: &[u8],
    ) -> Result<Option<SubDocument>> {
        if self.deleted.step_over(iter, doc_key, self.reader.stats)? {
            return Ok(None);
        }
        component_ends(doc_key, &mut self.ends)?;
        let reader = &mut self.reader;
        reader.after_lookup = false;
        reader.stack.clear();
        reader.root_depth = self.ends.len() - 1;
        reader.read_ancestors(iter, doc_key, &self.ends)?;
        reader.read_subtree(iter, doc_key, &self.ends)?;
        Ok(reader.root.take())
    }
}

impl<'a> DocReader<'a> {
    fn new(opts: &'a ReadOptions, stats: &'a mut ReadStats, root_depth: usize) -> Self {
        DocReader {
            target: Vec::new(),
            read_suffix: Vec::new(),
            read_time_prefix_len: 0,
            overwrite_key: (DocHybridTime::MIN, Vec::new()),
            opts,
            stats,
            stack: Vec::new(),
            root: None,
            root_depth,
            after_lookup: false,
            paths: PathBuffers::default(),
        }
    }

    /// Fills the stack with the levels above `path` (whose component ends are `ends`): the
    /// ancestors decide what is hidden below them.
    fn read_ancestors<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        path: &[u8],
        ends: &[usize],
    ) -> Result<()> {
        self.read_ancestors_from(iter, path, ends, &mut None)
    }

    /// [`Self::read_ancestors`], with the root's level taken from (or stored into) `root`.
    fn read_ancestors_from<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        path: &[u8],
        ends: &[usize],
        root: &mut Option<RootLevel>,
    ) -> Result<()> {
        let depth = ends.len() - 1;
        for level in 0..depth {
            self.stack.truncate(level);
            if level == 0
                && let Some(RootLevel(known)) = *root
            {
                self.stack.push(known);
                continue;
            }
            let version = self.visible_version(iter, &path[..ends[level]], Mode::Lookup, None)?;
            self.apply(level, version, None);
            if level == 0 {
                *root = self.stack.first().copied().map(RootLevel);
            }
        }
        self.stack.truncate(depth);
        Ok(())
    }

    fn read_subtree<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        path: &[u8],
        root_ends: &[usize],
    ) -> Result<()> {
        let mut paths = std::mem::take(&mut self.paths);
        let result = self.read_subtree_with(iter, path, root_ends, &mut paths);
        self.paths = paths;
        result
    }

    fn read_subtree_with<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        path: &[u8],
        root_ends: &[usize],
        paths: &mut PathBuffers,
    ) -> Result<()> {
        let PathBuffers {
            prev_path,
            prev_ends,
            cur_path,
            ends,
        } = paths;
        // Start as if the read root itself had just been seen, so its ancestors' levels stay.
        let root_end = root_ends[root_ends.len() - 1];
        // Room for a few subkeys below the root, so the swapped buffers do not regrow.
        prev_path.clear();
        prev_path.reserve(path.len() + PATH_ROOM);
        cur_path.reserve(path.len() + PATH_ROOM);
        prev_path.extend_from_slice(path);
        prev_ends.clear();
        prev_ends.extend_from_slice(root_ends);
        // A scan may have left the iterator on the subtree's first key already; after the
        // ancestors' lookups, whose seeks may have skipped files, it must seek.
        if self.after_lookup || !(iter.valid()? && iter.key().starts_with(path)) {
            self.seek(iter, path);
        }
        let root_depth = root_ends.len() - 1;
        let mut hidden_run = 0;
        while iter.valid()? {
            let key = iter.key();
            if !key.starts_with(path) {
                break;
            }
            self.stats.entries_seen += 1;
            // A deleted document's old records: only their times are looked at. Every few
            // records one goes the full way, which seeks past its path's remaining versions,
            // so a long history is not stepped through one version at a time.
            if hidden_run < NEXTS_BEFORE_SEEK && self.hidden_under_root(key, root_depth, root_end) {
                hidden_run += 1;
                self.stats.invisible_stepped += 1;
                iter.next();
                continue;
            }
            hidden_run = 0;
            // The key starts with `path`, whose components are known.
            let Some(time) = component_ends_below(key, root_ends, ends)? else {
                return Err(Error::Corruption(format!(
                    "record without hybrid time: {}",
                    dockv::escape::format_bytes(key)
                )));
            };
            let path_end = *ends.last().unwrap_or(&0);
            cur_path.clear();
            cur_path.extend_from_slice(&key[..path_end]);
            let depth = ends.len() - 1;
            if depth > self.root_depth {
                let child_end = ends[self.root_depth + 1];
                if !self.projected(&cur_path[root_end..child_end]) {
                    let mut past = cur_path[..child_end].to_vec();
                    past.push(0xFF);
                    self.seek(iter, &past);
                    continue;
                }
            }
            let shared = common_components(prev_ends, ends, prev_path, cur_path);
            self.stack.truncate(shared.min(depth));
            self.pad_to(depth);
            let parent = self.stack.last().copied().unwrap_or_default();
            if time.ht <= self.opts.read_ht && time <= parent.overwrite {
                // The iterator is on this path's newest version: readable, but not newer than
                // an ancestor's overwrite, so it and every older version are hidden. No need
                // to decode anything (deleted documents cost only this).
                self.stack.push(parent);
                self.skip_versions(iter, cur_path)?;
            } else {
                let version = self.visible_version(iter, cur_path, Mode::Scan, Some(time))?;
                self.apply(depth, version, Some((cur_path, &ends[..], root_end)));
            }
            std::mem::swap(prev_path, cur_path);
            std::mem::swap(prev_ends, ends);
        }
        Ok(())
    }

    /// Whether `key`, below the read root, is not newer than the root's overwrite (a document
    /// tombstone, say), so that it is hidden whatever its path. Skipping it without parsing
    /// the path leaves the level stack as processing it would: a hidden record pushes only
    /// its parent's state, which the next record's ancestors inherit anyway.
    fn hidden_under_root(&mut self, key: &[u8], root_depth: usize, root_end: usize) -> bool {
        let Some(root) = self.stack.get(root_depth) else {
            return false;
        };
        let overwrite = root.overwrite;
        if overwrite == DocHybridTime::MIN || key.get(root_end) == Some(&HYBRID_TIME_BYTE) {
            return false;
        }
        if self.overwrite_key.0 != overwrite {
            self.overwrite_key.1.clear();
            overwrite.encode_to(&mut self.overwrite_key.1);
            self.overwrite_key.0 = overwrite;
        }
        // Encoded times sort newest first, so "not newer" is "not below" as bytes. A malformed
        // key is left to the full path, which reports it.
        DocHybridTime::split_from_end(key)
            .is_some_and(|(_, time)| time >= &self.overwrite_key.1[..])
    }

    /// Fills levels up to `depth` (exclusive) with their parent's state: a path level without
    /// a record of its own inherits everything from above.
    fn pad_to(&mut self, depth: usize) {
        while self.stack.len() < depth {
            let parent = self.stack.last().copied().unwrap_or_default();
            self.stack.push(parent);
        }
    }

    fn projected(&self, child: &[u8]) -> bool {
        let Some(projection) = &self.opts.projection else {
            return true;
        };
        projection.iter().any(|p| p.encoded() == child)
    }

    fn seek<I: EngineIterator>(&mut self, iter: &mut I, key: &[u8]) {
        self.stats.seeks += 1;
        self.after_lookup = false;
        iter.seek(key);
    }

    fn seek_for_prev<I: EngineIterator>(&mut self, iter: &mut I, key: &[u8]) {
        self.stats.seeks += 1;
        self.after_lookup = false;
        iter.seek_for_prev(key);
    }

    /// Finds the newest version of `path` at or before the read time, folding TTL merge
    /// records into it (see [`Mode`] for where the iterator starts and ends). `current` is
    /// the time of the iterator's key, if the caller decoded it already.
    fn visible_version<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        path: &[u8],
        mode: Mode,
        mut current: Option<DocHybridTime>,
    ) -> Result<Option<Version>> {
        // A scan that decoded the time of a version of `path` under its iterator, at or
        // before the read time, reads from there: no target to build or compare.
        let readable_here =
            mode == Mode::Scan && current.is_some_and(|time| time.ht <= self.opts.read_ht);
        if !readable_here {
            current = self.seek_version(iter, path, mode, current)?;
        }
        let mut merged_exp = None;
        let mut found = None;
        while iter.valid()? && is_version_of(iter.key(), path) {
            let time = match current.take() {
                Some(time) => time,
                None => DocHybridTime::decode_from_end(iter.key())?.1,
            };
            let (control, payload) = ValueControlFields::decode(iter.value())?;
            if control.is_ttl_merge() {
                // Only the newest merge record counts.
                merged_exp.get_or_insert(Expiration::new(time.ht, control.ttl));
                self.stats.invisible_stepped += 1;
                iter.next();
                continue;
            }
            found = Some(Version {
                time,
                control,
                payload: PrimitiveValue::decode(payload)?,
                merged_exp,
            });
            iter.next();
            break;
        }
        if mode == Mode::Scan {
            self.skip_versions(iter, path)?;
        }
        Ok(found)
    }

    /// Puts the iterator on the newest version of `path` at or before the read time, unless
    /// a scan's iterator is on it already; returns `current` (the time of the iterator's
    /// key) if the iterator did not move.
    fn seek_version<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        path: &[u8],
        mode: Mode,
        current: Option<DocHybridTime>,
    ) -> Result<Option<DocHybridTime>> {
        if self.read_suffix.is_empty() {
            self.read_time_prefix_len =
                encode_read_suffix(self.opts.read_ht, &mut self.read_suffix);
        }
        let mut target = std::mem::take(&mut self.target);
        target.clear();
        target.reserve(path.len() + self.read_suffix.len() + PATH_ROOM);
        target.extend_from_slice(path);
        target.extend_from_slice(&self.read_suffix);
        let on_path = mode == Mode::Scan && iter.valid()? && is_version_of(iter.key(), path);
        let stays = on_path && iter.key() >= target.as_slice();
        if !stays {
            // Not there yet, or on versions newer than the read time: jump. A lookup reads
            // only this path's versions, so its seek may skip the files whose path filters
            // lack it; a scan goes on to other paths, so it seeks to the time without its
            // write id, which lands on the same version but consults no filter.
            let seek_to = match mode {
                Mode::Lookup => target.len(),
                Mode::Scan => path.len() + self.read_time_prefix_len,
            };
            if on_path {
                self.stats.invisible_stepped += 1;
            }
            self.seek(iter, &target[..seek_to]);
            self.after_lookup = mode == Mode::Lookup;
        }
        self.target = target;
        Ok(current.filter(|_| stays))
    }

    /// Moves past the remaining versions of a path: a few `next`s, then a seek.
    fn skip_versions<I: EngineIterator>(&mut self, iter: &mut I, path: &[u8]) -> Result<()> {
        if skip_versions(iter, path, self.stats)? {
            self.after_lookup = false;
        }
        Ok(())
    }

    /// Applies the visible version (if any) of the path at `depth`. `rel` is the full path,
    /// its component ends and where the read root ends, for placing the value in the result.
    fn apply(
        &mut self,
        depth: usize,
        version: Option<Version>,
        rel: Option<(&[u8], &[usize], usize)>,
    ) {
        self.pad_to(depth);
        let parent = self.stack.last().copied().unwrap_or_default();
        let Some(version) = version.filter(|v| v.time > parent.overwrite) else {
            self.stack.push(parent);
            return;
        };
        let exp = self.effective_expiration(&version);
        self.stack.push(Level {
            overwrite: version.time,
            exp,
        });
        let Some((path, ends, root_end)) = rel.filter(|_| depth >= self.root_depth) else {
            return;
        };
        let expired = is_expired_at(exp, version.time.ht, self.opts.table_ttl, self.opts.read_ht);
        if expired || version.payload.is_tombstone() {
            // Nothing to show. A path is applied once, before any record below it (its own
            // versions sort before its children's keys), so nothing was placed there yet;
            // a live record below it later makes it an object.
            return;
        }
        let doc = match ObjectKind::from_marker(&version.payload) {
            Some(kind) => SubDocument::Object {
                kind,
                children: Children::new(),
            },
            None => SubDocument::Primitive(version.payload),
        };
        self.place(path, ends, root_end, doc);
    }

    /// The version's own expiration (its TTL, or a newer merge record's) if it is at least as
    /// recent as the one its parent passes down; otherwise the parent's.
    fn effective_expiration(&self, version: &Version) -> Expiration {
        let own = own_expiration(version.time.ht, version.control.ttl, version.merged_exp);
        if own.is_none()
            && self
                .stack
                .iter()
                .all(|level| level.exp == Expiration::default())
        {
            // No TTL anywhere above or on the record: the common case, with nothing to fold.
            return Expiration::default();
        }
        let chain = self.stack.iter().rev().map(|level| level.exp);
        effective_expiration(own, chain, version.time.ht)
    }

    /// Puts `doc` into the result at `path` (whose component ends are `ends`), below the
    /// read root: the objects above it are created as needed, and a primitive above it
    /// becomes an object, as a newer record below a value replaces it.
    fn place(&mut self, path: &[u8], ends: &[usize], root_end: usize, doc: SubDocument) {
        let mut below = ends.iter().copied().filter(|&end| end > root_end);
        let Some(mut end) = below.next() else {
            self.root = Some(doc);
            return;
        };
        let mut start = root_end;
        let mut node = self.root.get_or_insert_with(empty_object);
        for next in below {
            let bytes = &path[start..end];
            node = &mut children_of(node)
                .entry(bytes.to_vec())
                .or_insert_with(|| (decode_subkey(bytes), empty_object()))
                .1;
            (start, end) = (end, next);
        }
        let bytes = &path[start..end];
        children_of(node).insert(bytes.to_vec(), (decode_subkey(bytes), doc));
    }
}

/// An object without children: what a path with live records below it, and no init marker
/// or value of its own, reads as.
fn empty_object() -> SubDocument {
    SubDocument::Object {
        kind: ObjectKind::Object,
        children: Children::new(),
    }
}

/// The children of `node`, turning a primitive into an object first.
fn children_of(node: &mut SubDocument) -> &mut Children {
    match node {
        SubDocument::Object { children, .. } => children,
        primitive => {
            *primitive = empty_object();
            children_of(primitive)
        }
    }
}

/// One subkey of a record's path. Its bounds came from a successful parse, so it decodes.
fn decode_subkey(bytes: &[u8]) -> KeyEntryValue {
    KeyEntryValue::decode(bytes).map_or(KeyEntryValue::Highest, |(key, _)| key)
}

/// Moves past the remaining versions of `path`: a few `next`s, then a seek. Returns whether
/// it sought.
fn skip_versions<I: EngineIterator>(
    iter: &mut I,
    path: &[u8],
    stats: &mut ReadStats,
) -> Result<bool> {
    for _ in 0..NEXTS_BEFORE_SEEK {
        if !(iter.valid()? && is_version_of(iter.key(), path)) {
            return Ok(false);
        }
        stats.invisible_stepped += 1;
        iter.next();
    }
    if !(iter.valid()? && is_version_of(iter.key(), path)) {
        return Ok(false);
    }
    // Children start with a type byte above '#'.
    let mut past = path.to_vec();
    past.push(KeyEntryType::HybridTime.as_u8() + 1);
    stats.seeks += 1;
    iter.seek(&past);
    Ok(true)
}

/// Writes `#` and `read_ht` with the largest write id into `out` (the first version a read
/// at `read_ht` may see: versions at or before it sort at or after these bytes); returns
/// the length of `#` and the time without the write id.
fn encode_read_suffix(read_ht: HybridTime, out: &mut Vec<u8>) -> usize {
    let mut time = Vec::with_capacity(dockv::hybrid_time::MAX_ENCODED_LEN);
    DocHybridTime::encode_time_prefix(read_ht, &mut time);
    out.reserve(1 + dockv::hybrid_time::MAX_ENCODED_LEN);
    out.push(HYBRID_TIME_BYTE);
    DocHybridTime::encode_with_prefix(&time, dockv::hybrid_time::MAX_WRITE_ID, out);
    1 + time.len()
}

/// Steps a forward scan over plainly deleted documents: those whose newest readable record
/// is a root tombstone (without TTL or user timestamp) with nothing under it newer. That is
/// told from keys and one value byte, decoding no time and no path, so such a document costs
/// little more than the engine's steps over its records; a path with a long history under
/// it is still left with a seek after a few steps, as a full read leaves it. Scans of
/// documents and of table rows share it.
#[derive(Debug)]
pub struct DeletedDocs {
    /// See [`encode_read_suffix`].
    read_suffix: Vec<u8>,
    /// The encoded time of the tombstone being stepped under.
    tombstone: Vec<u8>,
}

impl DeletedDocs {
    /// For a scan reading at `read_ht`.
    pub fn new(read_ht: HybridTime) -> Self {
        let mut read_suffix = Vec::new();
        encode_read_suffix(read_ht, &mut read_suffix);
        DeletedDocs {
            read_suffix,
            tombstone: Vec::new(),
        }
    }

    /// With the iterator on the first record of the document at `doc_key` (an encoded
    /// DocKey): steps past the document and returns true if it is plainly deleted; else
    /// returns false with the iterator back on the document's first record (sought there if
    /// it had moved). Counts records and seeks into `stats` as a full read does.
    pub fn step_over<I: EngineIterator>(
        &mut self,
        iter: &mut I,
        doc_key: &[u8],
        stats: &mut ReadStats,
    ) -> Result<bool> {
        if !iter.valid()? {
            return Ok(false);
        }
        let Some(root_time) = iter.key().strip_prefix(doc_key) else {
            return Ok(false);
        };
        if root_time.first() != Some(&HYBRID_TIME_BYTE)
            || root_time < self.read_suffix.as_slice()
            || iter.value() != TOMBSTONE_VALUE
        {
            return Ok(false);
        }
        self.tombstone.clear();
        self.tombstone.extend_from_slice(&root_time[1..]);
        let before = *stats;
        stats.entries_seen += 1;
        iter.next();
        if self.hides_the_rest(iter, doc_key, stats)? {
            return Ok(true);
        }
        // Something under the tombstone is newer: a full read decides, from the start.
        *stats = before;
        stats.seeks += 1;
        iter.seek(doc_key);
        Ok(false)
    }

    /// Steps over the records of `doc_key` after its root tombstone while each is not newer
    /// than it; false at the first that is.
    fn hides_the_rest<I: EngineIterator>(
        &self,
        iter: &mut I,
        doc_key: &[u8],
        stats: &mut ReadStats,
    ) -> Result<bool> {
        let mut hidden = 0;
        while iter.valid()? {
            let key = iter.key();
            if !key.starts_with(doc_key) {
                break;
            }
            // Encoded times sort newest first: "not newer" is "not below" as bytes.
            let Some((path, time)) = DocHybridTime::split_from_end(key) else {
                return Ok(false);
            };
            if time < self.tombstone.as_slice() {
                return Ok(false);
            }
            stats.entries_seen += 1;
            hidden += 1;
            if hidden % (NEXTS_BEFORE_SEEK + 1) == 0 {
                // Every few records one goes the full read's way, which seeks past its
                // path's remaining versions: a long history is not stepped through.
                let path = path.to_vec();
                skip_versions(iter, &path, stats)?;
            } else {
                stats.invisible_stepped += 1;
                iter.next();
            }
        }
        Ok(true)
    }
}

/// Whether `key` is a version (`path` + `#` + hybrid time) of `path`.
fn is_version_of(key: &[u8], path: &[u8]) -> bool {
    key.len() > path.len()
        && key.starts_with(path)
        && key[path.len()] == KeyEntryType::HybridTime.as_u8()
}

/// Number of leading components two paths share.
fn common_components(prev_ends: &[usize], ends: &[usize], prev: &[u8], cur: &[u8]) -> usize {
    let same = prev.iter().zip(cur).take_while(|(a, b)| a == b).count();
    prev_ends
        .iter()
        .zip(ends)
        .take_while(|(p, c)| p == c && **p <= same)
        .count()
}

/// Length of the DocKey at the front of `key`.
pub fn doc_key_len(key: &[u8]) -> Result<usize> {
    Ok(DocKey::encoded_len(key)?)
}
