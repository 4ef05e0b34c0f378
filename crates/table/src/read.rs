//! The visible records of one row (format.md §8), as a pure pass over the row's key/value
//! pairs in key order.
//!
//! For each path (the DocKey, a column, a collection element, …) the newest version at or
//! before the read time is taken. A version not newer than the nearest overwrite above it
//! (row tombstone, packed row, table tombstone, collection init marker) is hidden, and so is
//! everything below it. Unlike `docdb`'s document reader, this one keeps what a table needs:
//! each record's write time, control fields and expiration, tombstones included, so that a
//! column cell can override a packed column with a NULL and `WRITETIME`/`TTL` can be read.
//!
//! TTL follows YugabyteDB's `DocDBTableReader`: a row-level record (packed row) passes only
//! the table default down, so a column written after a packed row never inherits the row's
//! TTL; below a column, elements inherit the column's expiration unless they have their own.

use docdb::expiration::{Expiration, effective_expiration, is_expired_at};
use dockv::doc_key::component_ends;
use dockv::value::{PrimitiveValue, Ttl, ValueControlFields};
use dockv::{DocHybridTime, HybridTime, KeyEntryType};
use engine::EngineIterator;

use crate::error::{Result, corruption};

/// How many `next` calls to try before seeking past a path's older versions.
const NEXTS_BEFORE_SEEK: usize = 4;

/// What a read sees.
#[derive(Debug, Clone, Copy)]
pub struct ReadContext {
    /// Read the state as of this time.
    pub read_ht: HybridTime,
    /// The table's default TTL.
    pub table_ttl: Option<Ttl>,
    /// Whether TTLs are checked (YCQL); YSQL skips TTL checks.
    pub check_ttl: bool,
    /// Time of the table-level tombstone (colocated tables); records not newer are hidden.
    pub table_tombstone: DocHybridTime,
}

/// The visible version of one path of a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The encoded subkeys after the DocKey (empty for the row-level record).
    pub subkeys: Vec<u8>,
    /// End offset of each subkey within `subkeys`.
    pub ends: Vec<usize>,
    /// When it was written.
    pub time: DocHybridTime,
    /// Its control fields (TTL, user timestamp).
    pub control: ValueControlFields,
    /// Its payload (a tombstone included).
    pub payload: PrimitiveValue,
    /// Whether its TTL ran out by the read time (it then reads as a tombstone).
    pub expired: bool,
    /// The expiration in force for it (own TTL, or inherited), table TTL not folded in.
    pub expiration: Expiration,
}

impl Cell {
    /// Number of subkeys (0 for the row-level record).
    pub fn depth(&self) -> usize {
        self.ends.len()
    }

    /// The encoded first subkey (the column), if any.
    pub fn first_subkey(&self) -> Option<&[u8]> {
        self.ends.first().and_then(|&end| self.subkeys.get(..end))
    }

    /// A live value: neither a tombstone nor expired.
    pub fn is_live(&self) -> bool {
        !self.expired && !self.payload.is_tombstone()
    }

    /// The time to report as `WRITETIME`: the user timestamp if any, else the physical µs.
    pub fn write_time(&self) -> i64 {
        self.control
            .user_timestamp
            .unwrap_or(self.time.ht.physical_micros() as i64)
    }
}

/// Remaining whole seconds of `exp` for a record written at `record_ht`, as `TTL()` reports
/// it (`GetTtlRemainingSeconds`): `None` without any TTL, 0 once it ran out.
pub fn ttl_remaining_secs(
    exp: Expiration,
    record_ht: HybridTime,
    table_ttl: Option<Ttl>,
    read_ht: HybridTime,
) -> Option<i64> {
    let ttl = docdb::expiration::effective_ttl(exp.ttl, table_ttl)?;
    let from = if exp.ttl.is_some() {
        exp.write_ht
    } else {
        record_ht
    };
    let expires = i128::from(from.physical_micros()) + i128::from(ttl.micros());
    let remaining = expires - i128::from(read_ht.physical_micros());
    Some(i64::try_from((remaining.max(0)) / 1_000_000).unwrap_or(i64::MAX))
}

/// Per path level: when that subtree was last overwritten and the expiration it passes down.
#[derive(Debug, Clone, Copy, Default)]
struct Level {
    overwrite: DocHybridTime,
    exp: Expiration,
}

/// Reads the visible records of the document `doc_key` (encoded). The iterator may already
/// be on the document's first key; it is left on the first key after the document.
pub fn read_row<I: EngineIterator>(
    iter: &mut I,
    doc_key: &[u8],
    ctx: &ReadContext,
) -> Result<Vec<Cell>> {
    let mut bufs = RowBuffers::default();
    read_row_into(iter, doc_key, ctx, &mut bufs)?;
    Ok(bufs.cells)
}

/// Buffers a row read works in, kept by callers that read many rows so that a row costs no
/// allocation beyond its values. [`read_row_into`] leaves the row's cells in `cells`.
#[derive(Debug, Default)]
pub struct RowBuffers {
    /// The visible records of the last row read.
    pub cells: Vec<Cell>,
    ends: Vec<usize>,
    path: Vec<u8>,
    stack: Vec<Level>,
    prev_ends: Vec<usize>,
    prev_path: Vec<u8>,
}

/// Like [`read_row`], into `bufs.cells` (cleared first), reusing `bufs`.
pub fn read_row_into<I: EngineIterator>(
    iter: &mut I,
    doc_key: &[u8],
    ctx: &ReadContext,
    bufs: &mut RowBuffers,
) -> Result<()> {
    if !(iter.valid()? && iter.key().starts_with(doc_key)) {
        iter.seek(doc_key);
    }
    let base = Level {
        overwrite: ctx.table_tombstone,
        exp: Expiration::default(),
    };
    let RowBuffers {
        cells,
        ends,
        path: path_buf,
        stack,
        prev_ends,
        prev_path,
    } = bufs;
    cells.clear();
    stack.clear();
    prev_ends.clear();
    prev_path.clear();
    let mut state = RowState {
        ctx,
        base,
        stack,
        prev_ends,
        prev_path,
        cells,
    };
    while iter.valid()? && iter.key().starts_with(doc_key) {
        let key = iter.key();
        let time = component_ends(key, ends)?
            .ok_or_else(|| corruption!("record without a hybrid time"))?;
        if ends.first() != Some(&doc_key.len()) {
            return Err(corruption!("record does not belong to its document"));
        }
        if time.ht > ctx.read_ht {
            iter.next();
            continue;
        }
        let (control, payload) = ValueControlFields::decode(iter.value())?;
        if control.is_ttl_merge() {
            // Tables never write TTL merge records (Redis EXPIRE); skip rather than guess.
            iter.next();
            continue;
        }
        let path_end = ends.last().copied().unwrap_or(doc_key.len());
        // The row-level record's path is the DocKey itself: no copy.
        let path = if path_end == doc_key.len() {
            doc_key
        } else {
            path_buf.clear();
            path_buf.extend_from_slice(&key[..path_end]);
            &path_buf[..]
        };
        let payload = PrimitiveValue::decode(payload)?;
        state.apply(path, ends, time, control, payload);
        skip_versions(iter, path)?;
    }
    Ok(())
}

struct RowState<'a> {
    ctx: &'a ReadContext,
    base: Level,
    /// `stack[d]`: the level of the previous path's first `d` subkeys (0 = the row).
    stack: &'a mut Vec<Level>,
    prev_ends: &'a mut Vec<usize>,
    prev_path: &'a mut Vec<u8>,
    cells: &'a mut Vec<Cell>,
}

impl RowState<'_> {
    /// Takes the newest readable version of `path` (component ends `ends`, the first being
    /// the DocKey's end).
    fn apply(
        &mut self,
        path: &[u8],
        ends: &[usize],
        time: DocHybridTime,
        control: ValueControlFields,
        payload: PrimitiveValue,
    ) {
        let depth = ends.len() - 1;
        let shared = shared_subkeys(self.prev_path, self.prev_ends, path, ends);
        self.stack.truncate((shared + 1).min(depth));
        while self.stack.len() < depth {
            let parent = self.stack.last().copied().unwrap_or(self.base);
            self.stack.push(parent);
        }
        let parent = self.stack.last().copied().unwrap_or(self.base);
        self.prev_path.clear();
        self.prev_ends.clear();
        // The row-level record shares no subkey with any later path, so an empty previous
        // path stands for it (and a packed row, usually the only record, copies nothing).
        if depth > 0 {
            self.prev_path.extend_from_slice(path);
            self.prev_ends.extend_from_slice(ends);
        }
        if time <= parent.overwrite {
            self.stack.push(parent);
            return;
        }
        let own = control.ttl.map(|ttl| Expiration::new(time.ht, Some(ttl)));
        let (exp, pass_down) = if depth == 0 {
            (own.unwrap_or_default(), Expiration::default())
        } else {
            let chain = self.stack.iter().rev().map(|l| l.exp);
            let exp = effective_expiration(own, chain, time.ht);
            (exp, exp)
        };
        self.stack.push(Level {
            overwrite: time,
            exp: pass_down,
        });
        let expired =
            self.ctx.check_ttl && is_expired_at(exp, time.ht, self.ctx.table_ttl, self.ctx.read_ht);
        let doc_end = ends[0];
        self.cells.push(Cell {
            subkeys: path[doc_end..].to_vec(),
            ends: ends[1..].iter().map(|e| e - doc_end).collect(),
            time,
            control,
            payload,
            expired,
            expiration: exp,
        });
    }
}

/// Number of leading subkeys two paths of the same document share.
fn shared_subkeys(prev: &[u8], prev_ends: &[usize], cur: &[u8], ends: &[usize]) -> usize {
    let same = prev.iter().zip(cur).take_while(|(a, b)| a == b).count();
    prev_ends
        .iter()
        .zip(ends)
        .skip(1)
        .take_while(|(p, c)| p == c && **p <= same)
        .count()
}

/// Moves past the remaining versions of `path`: a few `next`s, then a seek.
fn skip_versions<I: EngineIterator>(iter: &mut I, path: &[u8]) -> Result<()> {
    for _ in 0..NEXTS_BEFORE_SEEK {
        iter.next();
        if !(iter.valid()? && is_version_of(iter.key(), path)) {
            return Ok(());
        }
    }
    let mut past = path.to_vec();
    // Children start with a type byte above '#'.
    past.push(KeyEntryType::HybridTime.as_u8() + 1);
    iter.seek(&past);
    Ok(())
}

/// Whether `key` is a version (`path` + `#` + hybrid time) of `path`.
fn is_version_of(key: &[u8], path: &[u8]) -> bool {
    key.len() > path.len()
        && key.starts_with(path)
        && key[path.len()] == KeyEntryType::HybridTime.as_u8()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dockv::KeyEntryValue;
    use dockv::doc_key::{DocKey, SubDocKey};
    use dockv::value::Value;
    use engine::{Engine, IterOptions, KvRead, MemEngine, WriteBatch, WriteOptions};

    fn doc() -> DocKey {
        DocKey::from_range(vec![KeyEntryValue::int32(1)])
    }

    fn put(batch: &mut WriteBatch, subkeys: Vec<KeyEntryValue>, micros: u64, w: u32, v: Value) {
        let key = SubDocKey::new(doc(), subkeys)
            .at(DocHybridTime::new(HybridTime::from_micros(micros), w))
            .encode();
        batch.put(key, v.encode());
    }

    fn ctx(read: u64) -> ReadContext {
        ReadContext {
            read_ht: HybridTime::from_micros(read),
            table_ttl: None,
            check_ttl: true,
            table_tombstone: DocHybridTime::MIN,
        }
    }

    fn cells(engine: &MemEngine, read: u64) -> Vec<(Vec<u8>, String, bool)> {
        let mut iter = engine.iterator(IterOptions::new()).expect("iter");
        let doc = doc().encode();
        read_row(&mut iter, &doc, &ctx(read))
            .expect("read")
            .into_iter()
            .map(|c| (c.subkeys, c.payload.to_string(), c.expired))
            .collect()
    }

    #[test]
    fn overwrites_hide_older_records() {
        let engine = MemEngine::new();
        let mut b = WriteBatch::new();
        let col = |id| vec![KeyEntryValue::column_id(id)];
        let elem = |s: &str| vec![KeyEntryValue::column_id(3), KeyEntryValue::string(s)];
        put(
            &mut b,
            col(2),
            1000,
            0,
            Value::new(PrimitiveValue::string("a")),
        );
        put(&mut b, col(3), 1000, 1, Value::new(PrimitiveValue::Object));
        put(
            &mut b,
            elem("x"),
            1000,
            2,
            Value::new(PrimitiveValue::Int32(1)),
        );
        put(&mut b, vec![], 2000, 0, Value::tombstone());
        put(
            &mut b,
            elem("y"),
            3000,
            0,
            Value::new(PrimitiveValue::Int32(2)),
        );
        put(
            &mut b,
            col(2),
            3000,
            1,
            Value::with_ttl(PrimitiveValue::string("b"), Some(Ttl(1))),
        );
        engine.write(&b, WriteOptions::default()).expect("write");
        let k2 = KeyEntryValue::column_id(2).encoded();
        let y = [
            KeyEntryValue::column_id(3).encoded(),
            KeyEntryValue::string("y").encoded(),
        ]
        .concat();
        assert_eq!(cells(&engine, 1500).len(), 3);
        assert_eq!(
            cells(&engine, 3000),
            [
                (vec![], "DEL".to_string(), false),
                (k2.clone(), "\"b\"".to_string(), false),
                (y.clone(), "2".to_string(), false),
            ]
        );
        // The column's own 1 ms TTL ran out; the element has none (its column level is implicit).
        assert_eq!(cells(&engine, 4001)[1], (k2, "\"b\"".to_string(), true));
        assert!(!cells(&engine, 4001)[2].2);
    }
}
