//! Redis's serialized value format (RDB version 10, as DUMP and RESTORE carry it).
//!
//! A payload is one object (its RDB type byte, then its body), the RDB version (2 bytes,
//! little-endian) and a CRC-64 of all before it (8 bytes, little-endian). [`encode_payload`]
//! writes what redis-server 7.0's DUMP writes for a value under its default settings
//! (`rdbcompression yes`, listpack and intset thresholds, `list-max-listpack-size -2`), so
//! that the bytes match when the element order does. [`decode_payload`] reads every
//! encoding Redis 7.0 loads for strings, lists, sets, sorted sets, hashes and streams, the
//! old ones (zipmaps, ziplists, quicklists of ziplists, 6.x streams) included, and never
//! panics on bad bytes.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::number::{format_double, parse_f64, parse_i64};
use crate::stream::StreamId;

/// The RDB version Redis 7.0 writes, and the newest it reads.
pub const RDB_VERSION: u16 = 10;

const TYPE_STRING: u8 = 0;
const TYPE_LIST: u8 = 1;
const TYPE_SET: u8 = 2;
const TYPE_ZSET: u8 = 3;
const TYPE_HASH: u8 = 4;
const TYPE_ZSET_2: u8 = 5;
const TYPE_MODULE_PRE_GA: u8 = 6;
const TYPE_MODULE_2: u8 = 7;
const TYPE_HASH_ZIPMAP: u8 = 9;
const TYPE_LIST_ZIPLIST: u8 = 10;
const TYPE_SET_INTSET: u8 = 11;
const TYPE_ZSET_ZIPLIST: u8 = 12;
const TYPE_HASH_ZIPLIST: u8 = 13;
const TYPE_LIST_QUICKLIST: u8 = 14;
const TYPE_STREAM_LISTPACKS: u8 = 15;
const TYPE_HASH_LISTPACK: u8 = 16;
const TYPE_ZSET_LISTPACK: u8 = 17;
const TYPE_LIST_QUICKLIST_2: u8 = 18;
const TYPE_STREAM_LISTPACKS_2: u8 = 19;
const TYPE_SET_LISTPACK: u8 = 20;
const TYPE_STREAM_LISTPACKS_3: u8 = 21;

/// Special string encodings (a length byte `11xxxxxx`).
const ENC_INT8: u8 = 0;
const ENC_INT16: u8 = 1;
const ENC_INT32: u8 = 2;
const ENC_LZF: u8 = 3;

/// Quicklist node containers: one raw element, or a listpack.
const CONTAINER_PLAIN: u64 = 1;
const CONTAINER_PACKED: u64 = 2;

/// Redis 7.0's built-in defaults (without a redis.conf): `hash-max-listpack-entries`,
/// `zset-max-listpack-entries`, `*-max-listpack-value`, `set-max-intset-entries`, and the
/// node size of `list-max-listpack-size -2`.
const MAX_HASH_LISTPACK_ENTRIES: usize = 512;
const MAX_ZSET_LISTPACK_ENTRIES: usize = 128;
const MAX_LISTPACK_VALUE: usize = 64;
const MAX_INTSET_ENTRIES: usize = 512;
const QUICKLIST_NODE_BYTES: usize = 8192;
/// What quicklist adds to an element's length when guessing whether it fits a node.
const QUICKLIST_ENTRY_OVERHEAD: usize = 8;
/// `stream-node-max-entries` and `stream-node-max-bytes`: XADD opens a new node (a listpack
/// under its first entry's id) when the last one holds that many entries, or would reach
/// that size.
const STREAM_NODE_MAX_ENTRIES: usize = 100;
const STREAM_NODE_MAX_BYTES: usize = 4096;
/// A stream listpack entry's flags: deleted (kept until its node empties), and "the
/// master entry's fields" (only the values are stored).
const STREAM_ITEM_DELETED: i64 = 1;
const STREAM_ITEM_SAME_FIELDS: i64 = 2;

/// A Redis value, as a payload carries it. Collections keep the payload's order.
#[derive(Debug, Clone, PartialEq)]
pub enum RdbValue {
    /// A string.
    String(Vec<u8>),
    /// A list, head first.
    List(Vec<Vec<u8>>),
    /// A set's members.
    Set(Vec<Vec<u8>>),
    /// A sorted set's members and scores.
    SortedSet(Vec<(Vec<u8>, f64)>),
    /// A hash's fields and values.
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    /// A stream, with its consumer groups.
    Stream(RdbStream),
}

/// A stream entry: its id and field/value pairs.
pub type StreamEntry = (StreamId, Vec<(Vec<u8>, Vec<u8>)>);

/// A stream as a payload carries it (RDB_TYPE_STREAM_LISTPACKS_2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RdbStream {
    /// The entries by ascending id, each with its field/value pairs.
    pub entries: Vec<StreamEntry>,
    /// How many entries there are (XLEN).
    pub length: u64,
    /// The largest id ever added (or set by XSETID).
    pub last_id: StreamId,
    /// The first entry's id (`0-0` when there are none).
    pub first_id: StreamId,
    /// The largest id ever deleted.
    pub max_deleted_id: StreamId,
    /// How many entries were ever added.
    pub entries_added: u64,
    /// The consumer groups.
    pub groups: Vec<RdbGroup>,
}

/// A stream's consumer group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RdbGroup {
    /// Its name.
    pub name: Vec<u8>,
    /// The last id delivered to its consumers.
    pub last_id: StreamId,
    /// How many entries it has read, or `-1` when that is not known.
    pub entries_read: i64,
    /// Its pending entries (delivered, not acknowledged), by ascending id.
    pub pending: Vec<RdbPending>,
    /// Its consumers.
    pub consumers: Vec<RdbConsumer>,
}

/// An entry pending in a consumer group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RdbPending {
    /// The entry's id.
    pub id: StreamId,
    /// When it was last delivered, in Unix milliseconds.
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
    /// The consumer it was delivered to (one of the group's consumers).
    pub consumer: Vec<u8>,
}

/// A consumer of a group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RdbConsumer {
    /// Its name.
    pub name: Vec<u8>,
    /// When it was last active, in Unix milliseconds.
    pub seen_time: u64,
}

/// Why a payload does not decode. The texts are Redis's RESTORE errors (after `ERR `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RdbError {
    /// Shorter than its footer, of a newer RDB version, or with a wrong checksum.
    #[error("DUMP payload version or checksum are wrong")]
    Footer,
    /// A body that does not decode; the reason is for debugging only.
    #[error("Bad data format")]
    BadFormat(&'static str),
}

type Result<T> = std::result::Result<T, RdbError>;

fn bad<T>(why: &'static str) -> Result<T> {
    Err(RdbError::BadFormat(why))
}

// ---- encoding ----

/// The payload Redis 7.0's DUMP gives for `value`.
pub fn encode_payload(value: &RdbValue) -> Vec<u8> {
    let mut enc = Encoder::default();
    match value {
        RdbValue::String(bytes) => {
            enc.out.push(TYPE_STRING);
            enc.string(bytes);
        }
        RdbValue::List(items) => enc.list(items),
        RdbValue::Set(members) => enc.set(members),
        RdbValue::SortedSet(entries) => enc.sorted_set(entries),
        RdbValue::Hash(pairs) => enc.hash(pairs),
        RdbValue::Stream(stream) => enc.stream(stream),
    }
    framed(enc.out)
}

/// `body` (an RDB type byte and its value) with the footer DUMP adds: the RDB version and
/// the CRC-64 of everything before it, both little-endian.
pub fn framed(mut body: Vec<u8>) -> Vec<u8> {
    body.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// A payload being written, with one LZF hash table for all its strings.
#[derive(Default)]
struct Encoder {
    out: Vec<u8>,
    lzf: Lzf,
}

impl Encoder {
    /// `rdbSaveLen`.
    fn len(&mut self, len: usize) {
        self.len_u64(len as u64);
    }

    /// `rdbSaveLen` of a 64-bit number.
    fn len_u64(&mut self, len: u64) {
        if len < 1 << 6 {
            self.out.push(len as u8);
        } else if len < 1 << 14 {
            self.out
                .extend_from_slice(&[0x40 | (len >> 8) as u8, len as u8]);
        } else if let Ok(len) = u32::try_from(len) {
            self.out.push(0x80);
            self.out.extend_from_slice(&len.to_be_bytes());
        } else {
            self.out.push(0x81);
            self.out.extend_from_slice(&len.to_be_bytes());
        }
    }

    /// `rdbSaveRawString`: a short decimal integer as an integer, a longer string LZF
    /// compressed when that saves at least 4 bytes, else verbatim.
    fn string(&mut self, bytes: &[u8]) {
        if bytes.len() <= 11
            && let Some(encoded) = parse_i64(bytes).and_then(int_encoding)
        {
            self.out.extend_from_slice(&encoded);
            return;
        }
        if bytes.len() > 20
            && let Some(packed) = self.lzf.compress(bytes, bytes.len() - 4)
        {
            self.out.push(0xC0 | ENC_LZF);
            self.len(packed.len());
            self.len(bytes.len());
            self.out.extend_from_slice(&packed);
            return;
        }
        self.len(bytes.len());
        self.out.extend_from_slice(bytes);
    }

    /// A quicklist of listpack nodes, filled as RPUSH fills them.
    fn list(&mut self, items: &[Vec<u8>]) {
        self.out.push(TYPE_LIST_QUICKLIST_2);
        let mut nodes: Vec<Listpack> = Vec::new();
        for item in items {
            let fits = nodes.last().is_some_and(|node| {
                node.bytes() + item.len() + QUICKLIST_ENTRY_OVERHEAD <= QUICKLIST_NODE_BYTES
            });
            if !fits {
                nodes.push(Listpack::default());
            }
            if let Some(node) = nodes.last_mut() {
                node.push(item);
            }
        }
        self.len(nodes.len());
        for node in nodes {
            self.len(CONTAINER_PACKED as usize);
            self.string(&node.finish());
        }
    }

    /// An intset when every member is an integer and there are few, else a plain set.
    fn set(&mut self, members: &[Vec<u8>]) {
        let ints: Option<Vec<i64>> = members.iter().map(|m| parse_i64(m)).collect();
        match ints {
            Some(ints) if ints.len() <= MAX_INTSET_ENTRIES => {
                self.out.push(TYPE_SET_INTSET);
                self.string(&intset(ints));
            }
            _ => {
                self.out.push(TYPE_SET);
                self.len(members.len());
                for member in members {
                    self.string(member);
                }
            }
        }
    }

    /// A listpack of member/score pairs in score order when small, else the skip list's
    /// members from the highest, with binary scores.
    fn sorted_set(&mut self, entries: &[(Vec<u8>, f64)]) {
        let mut sorted: Vec<&(Vec<u8>, f64)> = entries.iter().collect();
        sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        let small = sorted.len() <= MAX_ZSET_LISTPACK_ENTRIES
            && sorted.iter().all(|(m, _)| m.len() <= MAX_LISTPACK_VALUE);
        if small {
            let mut lp = Listpack::default();
            for (member, score) in sorted {
                lp.push(member);
                lp.push(format_double(*score).as_bytes());
            }
            self.out.push(TYPE_ZSET_LISTPACK);
            self.string(&lp.finish());
            return;
        }
        self.out.push(TYPE_ZSET_2);
        self.len(sorted.len());
        for (member, score) in sorted.into_iter().rev() {
            self.string(member);
            self.out.extend_from_slice(&score.to_le_bytes());
        }
    }

    /// A listpack of field/value pairs when small, else a plain hash.
    fn hash(&mut self, pairs: &[(Vec<u8>, Vec<u8>)]) {
        let small = pairs.len() <= MAX_HASH_LISTPACK_ENTRIES
            && pairs
                .iter()
                .all(|(f, v)| f.len() <= MAX_LISTPACK_VALUE && v.len() <= MAX_LISTPACK_VALUE);
        if small {
            let mut lp = Listpack::default();
            for (field, value) in pairs {
                lp.push(field);
                lp.push(value);
            }
            self.out.push(TYPE_HASH_LISTPACK);
            self.string(&lp.finish());
            return;
        }
        self.out.push(TYPE_HASH);
        self.len(pairs.len());
        for (field, value) in pairs {
            self.string(field);
            self.string(value);
        }
    }

    /// A stream as Redis 7.0 saves one: its nodes (master id, listpack), its state, then
    /// its groups by name. The entries are taken to be in ascending id order.
    fn stream(&mut self, stream: &RdbStream) {
        self.out.push(TYPE_STREAM_LISTPACKS_2);
        let nodes = stream_nodes(&stream.entries);
        self.len(nodes.len());
        for (master, listpack) in nodes {
            self.string(&id_bytes(master));
            self.string(&listpack);
        }
        self.len_u64(stream.length);
        for id in [stream.last_id, stream.first_id, stream.max_deleted_id] {
            self.id(id);
        }
        self.len_u64(stream.entries_added);
        let mut groups: Vec<&RdbGroup> = stream.groups.iter().collect();
        groups.sort_by(|a, b| a.name.cmp(&b.name));
        self.len(groups.len());
        for group in groups {
            self.group(group);
        }
    }

    /// An id as two lengths.
    fn id(&mut self, id: StreamId) {
        self.len_u64(id.ms);
        self.len_u64(id.seq);
    }

    /// A group: name, last id, entries read (`-1` as 2^64-1), the pending entries by id
    /// (raw big-endian id, delivery time as 8 little-endian bytes, count), then each
    /// consumer by name with its seen time and the ids it holds.
    fn group(&mut self, group: &RdbGroup) {
        self.string(&group.name);
        self.id(group.last_id);
        self.len_u64(group.entries_read as u64);
        let mut pending: Vec<&RdbPending> = group.pending.iter().collect();
        pending.sort_by_key(|p| p.id);
        self.len(pending.len());
        let mut held: HashMap<&[u8], Vec<StreamId>> = HashMap::new();
        for p in pending {
            self.out.extend_from_slice(&id_bytes(p.id));
            self.out.extend_from_slice(&p.delivery_time.to_le_bytes());
            self.len_u64(p.delivery_count);
            held.entry(&p.consumer).or_default().push(p.id);
        }
        self.consumers(&group.consumers, &held);
    }

    /// A group's consumers by name, each with its seen time and the ids it holds (`held`).
    fn consumers(&mut self, consumers: &[RdbConsumer], held: &HashMap<&[u8], Vec<StreamId>>) {
        let mut consumers: Vec<&RdbConsumer> = consumers.iter().collect();
        consumers.sort_by(|a, b| a.name.cmp(&b.name));
        self.len(consumers.len());
        for consumer in consumers {
            self.string(&consumer.name);
            self.out
                .extend_from_slice(&consumer.seen_time.to_le_bytes());
            let ids = held
                .get(consumer.name.as_slice())
                .map_or(&[][..], Vec::as_slice);
            self.len(ids.len());
            for &id in ids {
                self.out.extend_from_slice(&id_bytes(id));
            }
        }
    }
}

/// An id as a radix tree key: milliseconds, then sequence, both big-endian.
fn id_bytes(id: StreamId) -> [u8; 16] {
    let mut out = [0; 16];
    out[..8].copy_from_slice(&id.ms.to_be_bytes());
    out[8..].copy_from_slice(&id.seq.to_be_bytes());
    out
}

/// The id of a 16-byte radix tree key (`None` for any other length).
fn id_from_bytes(bytes: &[u8]) -> Option<StreamId> {
    let ms: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    let seq: [u8; 8] = bytes.get(8..)?.try_into().ok()?;
    Some(StreamId::new(
        u64::from_be_bytes(ms),
        u64::from_be_bytes(seq),
    ))
}

/// The radix tree's nodes as XADD leaves them when the entries came in id order: each
/// node's master id (its first entry's) and listpack.
fn stream_nodes(entries: &[StreamEntry]) -> Vec<(StreamId, Vec<u8>)> {
    let mut nodes = Vec::new();
    let mut open: Option<StreamNode<'_>> = None;
    for (id, pairs) in entries {
        let size = pairs.iter().map(|(f, v)| f.len() + v.len()).sum::<usize>();
        if let Some(node) = open.take_if(|node| node.full(size)) {
            nodes.push(node.finish());
        }
        open.get_or_insert_with(|| StreamNode::new(*id, pairs))
            .push(*id, pairs);
    }
    nodes.extend(open.map(StreamNode::finish));
    nodes
}

/// A stream node being filled (`streamAppendItem`): the master entry (live count, deleted
/// count, the first entry's fields, a 0), then per entry its flags, id less the master
/// id, fields unless they are the master's, values, and how many elements all that took.
struct StreamNode<'a> {
    master: StreamId,
    fields: Vec<&'a [u8]>,
    lp: Listpack,
    count: usize,
}

impl<'a> StreamNode<'a> {
    fn new(master: StreamId, pairs: &'a [(Vec<u8>, Vec<u8>)]) -> Self {
        let mut lp = Listpack::default();
        lp.push_int(1); // the live count, set by `finish`
        lp.push_int(0);
        lp.push_int(pairs.len() as i64);
        for (field, _) in pairs {
            lp.push(field);
        }
        lp.push_int(0);
        StreamNode {
            master,
            fields: pairs.iter().map(|(f, _)| f.as_slice()).collect(),
            lp,
            count: 0,
        }
    }

    /// Whether XADD would open a new node rather than add an entry of `size` bytes of
    /// fields and values here.
    fn full(&self, size: usize) -> bool {
        self.lp.bytes() + size >= STREAM_NODE_MAX_BYTES || self.count >= STREAM_NODE_MAX_ENTRIES
    }

    fn push(&mut self, id: StreamId, pairs: &[(Vec<u8>, Vec<u8>)]) {
        let same = pairs.len() == self.fields.len()
            && pairs.iter().zip(&self.fields).all(|((f, _), m)| f == m);
        self.lp
            .push_int(if same { STREAM_ITEM_SAME_FIELDS } else { 0 });
        self.lp.push_int(id.ms.wrapping_sub(self.master.ms) as i64);
        self.lp
            .push_int(id.seq.wrapping_sub(self.master.seq) as i64);
        if !same {
            self.lp.push_int(pairs.len() as i64);
        }
        for (field, value) in pairs {
            if !same {
                self.lp.push(field);
            }
            self.lp.push(value);
        }
        let n = pairs.len() as i64;
        self.lp.push_int(if same { n + 3 } else { 2 * n + 4 });
        self.count += 1;
    }

    fn finish(self) -> (StreamId, Vec<u8>) {
        let mut bytes = self.lp.finish();
        // The live count is the first element; at most 100, it is one 7-bit integer byte.
        if let Some(count) = bytes.get_mut(6) {
            *count = self.count as u8;
        }
        (self.master, bytes)
    }
}

/// `rdbEncodeInteger`: the 8, 16 or 32-bit form of `n`, if it has one.
fn int_encoding(n: i64) -> Option<Vec<u8>> {
    if let Ok(n) = i8::try_from(n) {
        Some(vec![0xC0 | ENC_INT8, n as u8])
    } else if let Ok(n) = i16::try_from(n) {
        Some([&[0xC0 | ENC_INT16][..], &n.to_le_bytes()].concat())
    } else if let Ok(n) = i32::try_from(n) {
        Some([&[0xC0 | ENC_INT32][..], &n.to_le_bytes()].concat())
    } else {
        None
    }
}

/// An intset: sorted integers, all of the width the widest needs.
fn intset(mut ints: Vec<i64>) -> Vec<u8> {
    ints.sort_unstable();
    let width: usize = if ints.iter().all(|&n| i16::try_from(n).is_ok()) {
        2
    } else if ints.iter().all(|&n| i32::try_from(n).is_ok()) {
        4
    } else {
        8
    };
    let mut out = Vec::with_capacity(8 + ints.len() * width);
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(ints.len() as u32).to_le_bytes());
    for n in ints {
        out.extend_from_slice(&n.to_le_bytes()[..width]);
    }
    out
}

/// A listpack being built: its 6-byte header is filled in by [`Listpack::finish`].
struct Listpack {
    bytes: Vec<u8>,
    count: usize,
}

impl Default for Listpack {
    fn default() -> Self {
        Listpack {
            bytes: vec![0; 6],
            count: 0,
        }
    }
}

impl Listpack {
    /// Its size once finished (header and terminator included).
    fn bytes(&self) -> usize {
        self.bytes.len() + 1
    }

    /// Appends an element: as an integer when it is one (`lpStringToInt64`), else a string.
    fn push(&mut self, item: &[u8]) {
        match parse_i64(item) {
            Some(n) => self.push_int(n),
            None => {
                let start = self.bytes.len();
                lp_str(&mut self.bytes, item);
                self.close(start);
            }
        }
    }

    /// Appends an integer element (`lpAppendInteger`).
    fn push_int(&mut self, n: i64) {
        let start = self.bytes.len();
        lp_int(&mut self.bytes, n);
        self.close(start);
    }

    /// Ends the element begun at `start` with its back length.
    fn close(&mut self, start: usize) {
        let backlen = lp_backlen(self.bytes.len() - start);
        self.bytes.extend_from_slice(&backlen);
        self.count += 1;
    }

    fn finish(mut self) -> Vec<u8> {
        self.bytes.push(0xFF);
        let total = u32::try_from(self.bytes.len()).unwrap_or(u32::MAX);
        let count = u16::try_from(self.count).unwrap_or(u16::MAX);
        self.bytes[..4].copy_from_slice(&total.to_le_bytes());
        self.bytes[4..6].copy_from_slice(&count.to_le_bytes());
        self.bytes
    }
}

/// `lpEncodeIntegerGetType`: the smallest of the listpack integer encodings.
fn lp_int(out: &mut Vec<u8>, n: i64) {
    if (0..=127).contains(&n) {
        out.push(n as u8);
    } else if (-4096..=4095).contains(&n) {
        let n = (n + if n < 0 { 1 << 13 } else { 0 }) as u16;
        out.extend_from_slice(&[0xC0 | (n >> 8) as u8, n as u8]);
    } else if let Ok(n) = i16::try_from(n) {
        out.push(0xF1);
        out.extend_from_slice(&n.to_le_bytes());
    } else if (-(1 << 23)..(1 << 23)).contains(&n) {
        out.push(0xF2);
        out.extend_from_slice(&n.to_le_bytes()[..3]);
    } else if let Ok(n) = i32::try_from(n) {
        out.push(0xF3);
        out.extend_from_slice(&n.to_le_bytes());
    } else {
        out.push(0xF4);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// A listpack string: 6, 12 or 32-bit length, then the bytes.
fn lp_str(out: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    if len < 64 {
        out.push(0x80 | len as u8);
    } else if len < 4096 {
        out.extend_from_slice(&[0xE0 | (len >> 8) as u8, len as u8]);
    } else {
        out.push(0xF0);
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(s);
}

/// `lpEncodeBacklen`: an entry's size in 7-bit groups, the highest first; every byte but
/// the first has its top bit set, so that it reads back from the entry's end.
fn lp_backlen(len: usize) -> Vec<u8> {
    let len = len as u64;
    let groups: u32 = match len {
        0..=127 => 1,
        128..16383 => 2,
        16383..2097151 => 3,
        2097151..268435455 => 4,
        _ => 5,
    };
    (0..groups)
        .map(|k| {
            let bits = (len >> (7 * (groups - 1 - k))) as u8;
            if k == 0 { bits } else { bits & 127 | 128 }
        })
        .collect()
}

/// The RDB opcode of a function library: its code, from which its name and functions come.
const OPCODE_FUNCTION2: u8 = 245;
/// The opcode of libraries written by Redis 7.0's release candidates: name, engine and an
/// optional description before the code, which had no `#!` line.
const OPCODE_FUNCTION_PRE_GA: u8 = 246;

/// FUNCTION DUMP's payload: each library's code after its opcode, then DUMP's footer.
pub fn encode_functions<'a>(codes: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut enc = Encoder::default();
    for code in codes {
        enc.out.push(OPCODE_FUNCTION2);
        enc.string(code);
    }
    framed(enc.out)
}

/// A release candidate's library as Redis 7.0 converts it: its code after a `#!` line made
/// of its engine and name.
fn pre_ga_library(r: &mut Reader<'_>) -> std::result::Result<Vec<u8>, &'static str> {
    let name = r.string().map_err(|_| "Failed loading library name")?;
    let engine = r.string().map_err(|_| "Failed loading engine name")?;
    let has_description = r.len().map_err(|_| "Failed loading library blob")?;
    if has_description != 0 {
        r.string()
            .map_err(|_| "Failed loading library description")?;
    }
    let body = r.string().map_err(|_| "Failed loading library payload")?;
    let mut code = [b"#!", engine.as_slice(), b" name=", &name, b"\n"].concat();
    code.extend_from_slice(&body);
    Ok(code)
}

/// The library codes of a FUNCTION DUMP payload, or FUNCTION RESTORE's error for it.
pub fn decode_functions(payload: &[u8]) -> std::result::Result<Vec<Vec<u8>>, &'static str> {
    let body = check_footer(payload).map_err(|_| "DUMP payload version or checksum are wrong")?;
    let mut r = Reader::new(body);
    let mut codes = Vec::new();
    while !r.rest.is_empty() {
        match r.byte() {
            Ok(OPCODE_FUNCTION2) => {
                codes.push(r.string().map_err(|_| "Failed loading library payload")?);
            }
            Ok(OPCODE_FUNCTION_PRE_GA) => codes.push(pre_ga_library(&mut r)?),
            Ok(_) => return Err("given type is not a function"),
            Err(_) => return Err("can not read data type"),
        }
    }
    Ok(codes)
}

// ---- decoding ----

/// The value in a DUMP payload, after checking its footer as RESTORE does. Bytes between
/// the value and the footer are ignored, as Redis ignores them.
pub fn decode_payload(payload: &[u8]) -> Result<RdbValue> {
    let body = check_footer(payload)?;
    let mut r = Reader::new(body);
    let kind = r.byte()?;
    let value = decode_object(kind, &mut r)?;
    validate(value)
}

/// The body of `payload` if its version is one Redis 7.0 reads and its CRC matches.
fn check_footer(payload: &[u8]) -> Result<&[u8]> {
    let Some(split) = payload.len().checked_sub(8).filter(|&n| n >= 2) else {
        return Err(RdbError::Footer);
    };
    let (data, crc) = payload.split_at(split);
    let (body, version) = data.split_at(split - 2);
    let version = u16::from_le_bytes([version[0], version[1]]);
    let crc: [u8; 8] = crc.try_into().map_err(|_| RdbError::Footer)?;
    if version > RDB_VERSION || crc64(data) != u64::from_le_bytes(crc) {
        return Err(RdbError::Footer);
    }
    Ok(body)
}

/// The body of an object of RDB type `kind`.
fn decode_object(kind: u8, r: &mut Reader<'_>) -> Result<RdbValue> {
    Ok(match kind {
        TYPE_STRING => RdbValue::String(r.string()?),
        TYPE_LIST => RdbValue::List(r.strings()?),
        TYPE_SET => RdbValue::Set(r.strings()?),
        TYPE_ZSET | TYPE_ZSET_2 => RdbValue::SortedSet(r.scored(kind == TYPE_ZSET_2)?),
        TYPE_HASH => RdbValue::Hash(r.pairs()?),
        TYPE_HASH_ZIPMAP => RdbValue::Hash(zipmap(&r.string()?)?),
        TYPE_LIST_ZIPLIST => RdbValue::List(owned(&ziplist(&r.string()?)?)),
        TYPE_SET_INTSET => RdbValue::Set(intset_members(&r.string()?)?),
        TYPE_ZSET_ZIPLIST => RdbValue::SortedSet(scored_entries(&ziplist(&r.string()?)?)?),
        TYPE_HASH_ZIPLIST => RdbValue::Hash(paired_entries(&ziplist(&r.string()?)?)?),
        TYPE_LIST_QUICKLIST => RdbValue::List(r.quicklist(false)?),
        TYPE_HASH_LISTPACK => RdbValue::Hash(paired_entries(&listpack(&r.string()?)?)?),
        TYPE_ZSET_LISTPACK => RdbValue::SortedSet(scored_entries(&listpack(&r.string()?)?)?),
        TYPE_LIST_QUICKLIST_2 => RdbValue::List(r.quicklist(true)?),
        TYPE_SET_LISTPACK => RdbValue::Set(owned(&listpack(&r.string()?)?)),
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 => {
            RdbValue::Stream(r.stream(kind == TYPE_STREAM_LISTPACKS_2)?)
        }
        // Redis 7.2's streams (with consumers' active times): a type 7.0 does not know.
        TYPE_STREAM_LISTPACKS_3 => return bad("stream of Redis 7.2"),
        // Redis refuses these too unless the module that wrote them is loaded.
        TYPE_MODULE_PRE_GA | TYPE_MODULE_2 => return bad("module value"),
        _ => return bad("unknown object type"),
    })
}

/// Refuses what Redis refuses to load: empty collections, repeated members or fields,
/// NaN scores. (Streams are checked as they are read; they may be empty.)
fn validate(value: RdbValue) -> Result<RdbValue> {
    let unique = match &value {
        RdbValue::String(_) | RdbValue::Stream(_) => true,
        RdbValue::List(items) => !items.is_empty(),
        RdbValue::Set(members) => distinct(members.iter()),
        RdbValue::Hash(pairs) => distinct(pairs.iter().map(|(f, _)| f)),
        RdbValue::SortedSet(entries) => {
            entries.iter().all(|(_, s)| !s.is_nan()) && distinct(entries.iter().map(|(m, _)| m))
        }
    };
    if unique {
        Ok(value)
    } else {
        bad("empty or repeated")
    }
}

/// Whether the names are not empty and none repeats.
fn distinct<'a>(names: impl ExactSizeIterator<Item = &'a Vec<u8>>) -> bool {
    let len = names.len();
    let mut seen = HashSet::with_capacity(len);
    len > 0 && names.into_iter().all(|name| seen.insert(name.as_slice()))
}

/// An RDB length, or the number of a special string encoding.
enum Len {
    Plain(u64),
    Encoded(u8),
}

/// Reads an RDB body front to back; every read is bounds-checked.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.rest.len() {
            return bad("truncated");
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.take(N)?
            .try_into()
            .map_err(|_| RdbError::BadFormat("truncated"))
    }

    fn byte(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    /// `rdbLoadLenByRef`.
    fn len_or_encoding(&mut self) -> Result<Len> {
        let first = self.byte()?;
        Ok(match first >> 6 {
            0 => Len::Plain(u64::from(first & 0x3F)),
            1 => Len::Plain(u64::from(first & 0x3F) << 8 | u64::from(self.byte()?)),
            3 => Len::Encoded(first & 0x3F),
            _ if first == 0x80 => Len::Plain(u64::from(u32::from_be_bytes(self.array()?))),
            _ if first == 0x81 => Len::Plain(u64::from_be_bytes(self.array()?)),
            _ => return bad("unknown length encoding"),
        })
    }

    fn len(&mut self) -> Result<u64> {
        match self.len_or_encoding()? {
            Len::Plain(n) => Ok(n),
            Len::Encoded(_) => bad("encoded length"),
        }
    }

    /// A count of items taking at least `min_bytes` each: refused before anything is
    /// allocated for them when the rest of the input cannot hold that many.
    fn count(&mut self, min_bytes: usize) -> Result<usize> {
        let n = self.len()?;
        match usize::try_from(n) {
            Ok(n)
                if n.checked_mul(min_bytes)
                    .is_some_and(|b| b <= self.rest.len()) =>
            {
                Ok(n)
            }
            _ => bad("count beyond the input"),
        }
    }

    /// `rdbGenericLoadStringObject`: raw, an 8/16/32-bit integer, or LZF compressed.
    fn string(&mut self) -> Result<Vec<u8>> {
        let len = match self.len_or_encoding()? {
            Len::Plain(len) => len,
            Len::Encoded(ENC_INT8) => return Ok(decimal(i64::from(self.byte()? as i8))),
            Len::Encoded(ENC_INT16) => {
                return Ok(decimal(i64::from(i16::from_le_bytes(self.array()?))));
            }
            Len::Encoded(ENC_INT32) => {
                return Ok(decimal(i64::from(i32::from_le_bytes(self.array()?))));
            }
            Len::Encoded(ENC_LZF) => return self.lzf_string(),
            Len::Encoded(_) => return bad("unknown string encoding"),
        };
        let len = usize::try_from(len).or(bad("string beyond the input"))?;
        Ok(self.take(len)?.to_vec())
    }

    fn lzf_string(&mut self) -> Result<Vec<u8>> {
        let packed_len = usize::try_from(self.len()?).or(bad("truncated"))?;
        let len = usize::try_from(self.len()?).or(bad("LZF length"))?;
        let packed = self.take(packed_len)?;
        lzf_decompress(packed, len).ok_or(RdbError::BadFormat("invalid LZF string"))
    }

    /// A count, then that many strings (LIST, SET).
    fn strings(&mut self) -> Result<Vec<Vec<u8>>> {
        let n = self.count(1)?;
        (0..n).map(|_| self.string()).collect()
    }

    /// A count, then that many field/value pairs (HASH).
    fn pairs(&mut self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let n = self.count(2)?;
        (0..n)
            .map(|_| Ok((self.string()?, self.string()?)))
            .collect()
    }

    /// A count, then members with scores: binary doubles (ZSET_2) or text (ZSET).
    fn scored(&mut self, binary: bool) -> Result<Vec<(Vec<u8>, f64)>> {
        let n = self.count(if binary { 9 } else { 2 })?;
        (0..n)
            .map(|_| {
                let member = self.string()?;
                let score = if binary {
                    f64::from_le_bytes(self.array()?)
                } else {
                    self.text_double()?
                };
                Ok((member, score))
            })
            .collect()
    }

    /// `rdbLoadDoubleValue`: a length byte (253 NaN, 254 +inf, 255 -inf), then the text.
    fn text_double(&mut self) -> Result<f64> {
        match self.byte()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            len => parse_f64(self.take(usize::from(len))?).ok_or(RdbError::BadFormat("score")),
        }
    }

    /// A count of nodes, each a ziplist (QUICKLIST) or a container kind and then a
    /// listpack or one plain element (QUICKLIST_2). Empty nodes are skipped, as Redis does.
    fn quicklist(&mut self, v2: bool) -> Result<Vec<Vec<u8>>> {
        let nodes = self.count(if v2 { 2 } else { 1 })?;
        let mut items = Vec::new();
        for _ in 0..nodes {
            let container = if v2 { self.len()? } else { CONTAINER_PACKED };
            let blob = self.string()?;
            match container {
                CONTAINER_PLAIN => items.push(blob),
                CONTAINER_PACKED if v2 => items.extend(owned(&listpack(&blob)?)),
                CONTAINER_PACKED => items.extend(owned(&ziplist(&blob)?)),
                _ => return bad("quicklist container"),
            }
        }
        Ok(items)
    }
}

impl Reader<'_> {
    /// A stream: the nodes, length, last id and, of RDB_TYPE_STREAM_LISTPACKS_2 (`v2`), the
    /// first id, largest deleted id and entries added; then the groups.
    fn stream(&mut self, v2: bool) -> Result<RdbStream> {
        let mut stream = RdbStream {
            entries: self.stream_entries()?,
            length: self.len()?,
            last_id: self.id()?,
            ..RdbStream::default()
        };
        if v2 {
            stream.first_id = self.id()?;
            stream.max_deleted_id = self.id()?;
            stream.entries_added = self.len()?;
        } else {
            // As Redis 7.0 loads a 6.x stream: no deletions known, every entry counted as
            // added, and the first id found (the largest id when there is none).
            stream.entries_added = stream.length;
            stream.first_id = stream.entries.first().map_or(StreamId::MAX, |(id, _)| *id);
        }
        // Redis trusts the length; docdb keeps it apart from the entries, so it must agree.
        if usize::try_from(stream.length).ok() != Some(stream.entries.len()) {
            return bad("stream length");
        }
        let groups = self.count(5)?;
        let mut names = HashSet::new();
        for _ in 0..groups {
            let group = self.group(&stream, v2)?;
            if !names.insert(group.name.clone()) {
                return bad("repeated group");
            }
            stream.groups.push(group);
        }
        Ok(stream)
    }

    /// An id as two lengths.
    fn id(&mut self) -> Result<StreamId> {
        Ok(StreamId::new(self.len()?, self.len()?))
    }

    /// An id as 16 raw big-endian bytes.
    fn raw_id(&mut self) -> Result<StreamId> {
        id_from_bytes(self.take(16)?).ok_or(RdbError::BadFormat("stream id"))
    }

    /// The radix tree's nodes (master id, listpack), and their live entries in id order.
    fn stream_entries(&mut self) -> Result<Vec<StreamEntry>> {
        let count = self.count(2)?;
        let mut nodes = BTreeMap::new();
        for _ in 0..count {
            let key = self.string()?;
            let master = id_from_bytes(&key).ok_or(RdbError::BadFormat("stream node key"))?;
            if nodes.insert(master, self.string()?).is_some() {
                return bad("repeated stream node");
            }
        }
        let mut entries = Vec::new();
        let mut last = None;
        for (master, blob) in &nodes {
            stream_node(*master, blob, &mut last, &mut entries)?;
        }
        Ok(entries)
    }

    /// A consumer group; `v2` has its entries read, else they are estimated as Redis does.
    fn group(&mut self, stream: &RdbStream, v2: bool) -> Result<RdbGroup> {
        let name = self.string()?;
        let last_id = self.id()?;
        let entries_read = if v2 {
            self.len()? as i64
        } else {
            estimated_entries_read(stream, last_id)
        };
        let mut pending = self.global_pel()?;
        let count = self.count(10)?;
        let mut consumers = Vec::with_capacity(count);
        let mut names = HashSet::new();
        for _ in 0..count {
            let name = self.string()?;
            let seen_time = u64::from_le_bytes(self.array()?);
            let held = self.count(16)?;
            for _ in 0..held {
                // Redis refuses an id the group does not have pending, or one the consumer
                // lists twice; docdb also one that two consumers hold.
                match pending.get_mut(&self.raw_id()?) {
                    Some(p) if p.consumer.is_none() => p.consumer = Some(name.clone()),
                    _ => return bad("consumer's pending entry"),
                }
            }
            if !names.insert(name.clone()) {
                return bad("repeated consumer");
            }
            consumers.push(RdbConsumer { name, seen_time });
        }
        // Redis 7.0 loads a pending entry no consumer holds (unless sanitize-dump-payload
        // is on); docdb records each with its consumer, so refuses it.
        let pending = pending
            .into_iter()
            .map(|(id, p)| {
                Some(RdbPending {
                    id,
                    delivery_time: p.delivery_time,
                    delivery_count: p.delivery_count,
                    consumer: p.consumer?,
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or(RdbError::BadFormat("pending entry without consumer"))?;
        Ok(RdbGroup {
            name,
            last_id,
            entries_read,
            pending,
            consumers,
        })
    }

    /// A group's pending entries: a count, then per entry its raw id, delivery time (8
    /// bytes, little-endian) and delivery count. Their consumers come later.
    fn global_pel(&mut self) -> Result<BTreeMap<StreamId, Nack>> {
        let count = self.count(25)?;
        let mut pending = BTreeMap::new();
        for _ in 0..count {
            let id = self.raw_id()?;
            let nack = Nack {
                delivery_time: u64::from_le_bytes(self.array()?),
                delivery_count: self.len()?,
                consumer: None,
            };
            if pending.insert(id, nack).is_some() {
                return bad("repeated pending entry");
            }
        }
        Ok(pending)
    }
}

/// A pending entry while its group loads: its consumer is named after the global PEL.
struct Nack {
    delivery_time: u64,
    delivery_count: u64,
    consumer: Option<Vec<u8>>,
}

/// A 6.x group's entries read, as Redis 7.0 estimates them on loading it
/// (`streamEstimateDistanceFromFirstEverEntry` where nothing was deleted and every entry
/// is counted as added): known at the stream's ends, unknown (`-1`) within or beyond.
fn estimated_entries_read(stream: &RdbStream, id: StreamId) -> i64 {
    let length = stream.length as i64;
    if length == 0 {
        return 0;
    }
    match (id.cmp(&stream.last_id), id.cmp(&stream.first_id)) {
        (Ordering::Equal, _) => length,
        (Ordering::Greater, _) => -1,
        (_, Ordering::Less) => 0,
        (_, Ordering::Equal) => 1,
        _ => -1,
    }
}

/// Reads a stream node's listpack: the master entry, then entries whose ids (the master
/// id plus their deltas, wrapping) must ascend from `last`. Live entries go to `out`;
/// deleted ones are only counted. Redis checks no more than the listpack's header unless
/// `sanitize-dump-payload` is on; docdb checks the whole node as that option does.
fn stream_node(
    master: StreamId,
    blob: &[u8],
    last: &mut Option<StreamId>,
    out: &mut Vec<StreamEntry>,
) -> Result<()> {
    let elements = listpack(blob)?;
    if elements.is_empty() {
        return bad("empty stream node");
    }
    let mut it = StreamElements {
        elements: &elements,
        at: 0,
    };
    let live = it.count()?;
    let deleted = it.count()?;
    let fields_count = it.count()?;
    let fields = (0..fields_count)
        .map(|_| it.bytes())
        .collect::<Result<Vec<_>>>()?;
    if it.int()? != 0 {
        return bad("stream master entry");
    }
    let (mut seen_live, mut seen_deleted) = (0, 0);
    while it.at < elements.len() {
        let ((id, pairs), is_deleted) = it.entry(master, &fields)?;
        if last.is_some_and(|last| id <= last) {
            return bad("stream ids out of order");
        }
        *last = Some(id);
        if is_deleted {
            seen_deleted += 1;
        } else {
            seen_live += 1;
            out.push((id, pairs));
        }
    }
    if (seen_live, seen_deleted) != (live, deleted) {
        return bad("stream node counts");
    }
    Ok(())
}

/// A cursor over a stream node's listpack elements.
struct StreamElements<'e, 'a> {
    elements: &'e [Entry<'a>],
    at: usize,
}

impl StreamElements<'_, '_> {
    fn next(&mut self) -> Result<&Entry<'_>> {
        let element = self
            .elements
            .get(self.at)
            .ok_or(RdbError::BadFormat("stream node cut short"))?;
        self.at += 1;
        Ok(element)
    }

    /// An integer element (a string of one is accepted, as `lpGetIntegerIfValid` does).
    fn int(&mut self) -> Result<i64> {
        match self.next()? {
            Entry::Int(n) => Ok(*n),
            Entry::Bytes(bytes) => parse_i64(bytes).ok_or(RdbError::BadFormat("stream integer")),
        }
    }

    /// A count of things that follow, each taking at least one element.
    fn count(&mut self) -> Result<usize> {
        let n = self.int()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.elements.len() - self.at => Ok(n),
            _ => bad("stream count"),
        }
    }

    fn bytes(&mut self) -> Result<Vec<u8>> {
        Ok(self.next()?.to_vec())
    }

    /// One entry: flags, id deltas, then (unless it has the master's fields) the number of
    /// fields, each field before its value, and last how many elements came before it.
    fn entry(
        &mut self,
        master: StreamId,
        master_fields: &[Vec<u8>],
    ) -> Result<(StreamEntry, bool)> {
        let start = self.at;
        let flags = self.int()?;
        let ms = master.ms.wrapping_add(self.int()? as u64);
        let seq = master.seq.wrapping_add(self.int()? as u64);
        let pairs = if flags & STREAM_ITEM_SAME_FIELDS != 0 {
            master_fields
                .iter()
                .map(|field| Ok((field.clone(), self.bytes()?)))
                .collect::<Result<Vec<_>>>()?
        } else {
            let n = self.count()?;
            (0..n)
                .map(|_| Ok((self.bytes()?, self.bytes()?)))
                .collect::<Result<Vec<_>>>()?
        };
        let elements = self.at - start;
        if usize::try_from(self.int()?).ok() != Some(elements) {
            return bad("stream entry element count");
        }
        let deleted = flags & STREAM_ITEM_DELETED != 0;
        Ok(((StreamId::new(ms, seq), pairs), deleted))
    }
}

fn decimal(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

/// An element of a ziplist or listpack.
enum Entry<'a> {
    Bytes(&'a [u8]),
    Int(i64),
}

impl Entry<'_> {
    fn to_vec(&self) -> Vec<u8> {
        match self {
            Entry::Bytes(bytes) => bytes.to_vec(),
            Entry::Int(n) => decimal(*n),
        }
    }

    /// The entry as a sorted set score (`zzlGetScore`).
    fn score(&self) -> Result<f64> {
        match self {
            Entry::Bytes(bytes) => parse_f64(bytes).ok_or(RdbError::BadFormat("score")),
            Entry::Int(n) => Ok(*n as f64),
        }
    }
}

fn owned(entries: &[Entry<'_>]) -> Vec<Vec<u8>> {
    entries.iter().map(Entry::to_vec).collect()
}

/// Alternating fields and values.
fn paired_entries(entries: &[Entry<'_>]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    if !entries.len().is_multiple_of(2) {
        return bad("odd number of entries");
    }
    Ok(entries
        .chunks_exact(2)
        .map(|pair| (pair[0].to_vec(), pair[1].to_vec()))
        .collect())
}

/// Alternating members and scores.
fn scored_entries(entries: &[Entry<'_>]) -> Result<Vec<(Vec<u8>, f64)>> {
    if !entries.len().is_multiple_of(2) {
        return bad("odd number of entries");
    }
    entries
        .chunks_exact(2)
        .map(|pair| Ok((pair[0].to_vec(), pair[1].score()?)))
        .collect()
}

/// The entries of a listpack: a 4-byte total size, a 2-byte count (65535: unknown),
/// entries each followed by its back length, and `0xFF`.
fn listpack(blob: &[u8]) -> Result<Vec<Entry<'_>>> {
    let mut r = Reader::new(blob);
    let total = u32::from_le_bytes(r.array()?);
    let count = u16::from_le_bytes(r.array()?);
    if usize::try_from(total).ok() != Some(blob.len()) {
        return bad("listpack size");
    }
    let mut entries = Vec::new();
    loop {
        let before = r.rest.len();
        let first = r.byte()?;
        if first == 0xFF {
            break;
        }
        entries.push(lp_entry(&mut r, first)?);
        let backlen = lp_backlen(before - r.rest.len());
        if r.take(backlen.len())? != backlen.as_slice() {
            return bad("listpack back length");
        }
    }
    if !r.rest.is_empty() || (count != u16::MAX && usize::from(count) != entries.len()) {
        return bad("listpack count or end");
    }
    Ok(entries)
}

/// One listpack entry after its first byte (`lpGet`).
fn lp_entry<'a>(r: &mut Reader<'a>, first: u8) -> Result<Entry<'a>> {
    let sign_extend = |n: i64, bits: u32| (n << (64 - bits)) >> (64 - bits);
    Ok(match first {
        0x00..=0x7F => Entry::Int(i64::from(first)),
        0x80..=0xBF => Entry::Bytes(r.take(usize::from(first & 0x3F))?),
        0xC0..=0xDF => {
            let n = i64::from(first & 0x1F) << 8 | i64::from(r.byte()?);
            Entry::Int(sign_extend(n, 13))
        }
        0xE0..=0xEF => {
            let len = usize::from(first & 0x0F) << 8 | usize::from(r.byte()?);
            Entry::Bytes(r.take(len)?)
        }
        0xF0 => {
            let len = u32::from_le_bytes(r.array()?);
            Entry::Bytes(r.take(usize::try_from(len).or(bad("listpack string"))?)?)
        }
        0xF1 => Entry::Int(i64::from(i16::from_le_bytes(r.array()?))),
        0xF2 => {
            let [a, b, c] = r.array()?;
            Entry::Int(sign_extend(i64::from(u32::from_le_bytes([a, b, c, 0])), 24))
        }
        0xF3 => Entry::Int(i64::from(i32::from_le_bytes(r.array()?))),
        0xF4 => Entry::Int(i64::from_le_bytes(r.array()?)),
        _ => return bad("listpack encoding"),
    })
}

/// The entries of a ziplist: 4-byte size, 4-byte tail offset, 2-byte count (65535:
/// unknown), entries each led by the previous one's length, and `0xFF`.
fn ziplist(blob: &[u8]) -> Result<Vec<Entry<'_>>> {
    let mut r = Reader::new(blob);
    let total = u32::from_le_bytes(r.array()?);
    let _tail = u32::from_le_bytes(r.array()?);
    let count = u16::from_le_bytes(r.array()?);
    if usize::try_from(total).ok() != Some(blob.len()) {
        return bad("ziplist size");
    }
    let mut entries = Vec::new();
    loop {
        let prevlen = r.byte()?;
        if prevlen == 0xFF {
            break;
        }
        if prevlen == 0xFE {
            r.take(4)?;
        }
        entries.push(zl_entry(&mut r)?);
    }
    if !r.rest.is_empty() || (count != u16::MAX && usize::from(count) != entries.len()) {
        return bad("ziplist count or end");
    }
    Ok(entries)
}

/// One ziplist entry after its previous-length field (`zipEntrySafe`).
fn zl_entry<'a>(r: &mut Reader<'a>) -> Result<Entry<'a>> {
    let first = r.byte()?;
    let len = match first >> 6 {
        0 => usize::from(first & 0x3F),
        1 => usize::from(first & 0x3F) << 8 | usize::from(r.byte()?),
        2 => usize::try_from(u32::from_be_bytes(r.array()?)).or(bad("ziplist string"))?,
        _ => return zl_int(r, first).map(Entry::Int),
    };
    Ok(Entry::Bytes(r.take(len)?))
}

/// A ziplist integer: 16, 32, 64, 24 or 8 bits, or 0 to 12 in the encoding byte.
fn zl_int(r: &mut Reader<'_>, encoding: u8) -> Result<i64> {
    Ok(match encoding {
        0xC0 => i64::from(i16::from_le_bytes(r.array()?)),
        0xD0 => i64::from(i32::from_le_bytes(r.array()?)),
        0xE0 => i64::from_le_bytes(r.array()?),
        0xF0 => {
            let [a, b, c] = r.array()?;
            i64::from(i32::from_le_bytes([0, a, b, c]) >> 8)
        }
        0xFE => i64::from(r.byte()? as i8),
        0xF1..=0xFD => i64::from(encoding & 0x0F) - 1,
        _ => return bad("ziplist encoding"),
    })
}

/// The fields and values of a zipmap (Redis 2.x hashes): a count byte (254: unknown),
/// then per pair a length, the field, a length, a free-space byte, the value and that
/// much padding, and `0xFF`.
fn zipmap(blob: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut r = Reader::new(blob);
    let count = r.byte()?;
    let mut pairs = Vec::new();
    while let Some(len) = zipmap_len(&mut r)? {
        let field = r.take(len)?.to_vec();
        let len = zipmap_len(&mut r)?.ok_or(RdbError::BadFormat("zipmap value"))?;
        let free = usize::from(r.byte()?);
        let value = r.take(len)?.to_vec();
        r.take(free)?;
        pairs.push((field, value));
    }
    if !r.rest.is_empty() || (count != 254 && usize::from(count) != pairs.len()) {
        return bad("zipmap count or end");
    }
    Ok(pairs)
}

/// A zipmap length: one byte below 254, or 254 and 4 bytes; `None` at the end marker.
fn zipmap_len(r: &mut Reader<'_>) -> Result<Option<usize>> {
    match r.byte()? {
        0xFF => Ok(None),
        0xFE => {
            let len = u32::from_le_bytes(r.array()?);
            Ok(Some(usize::try_from(len).or(bad("zipmap length"))?))
        }
        len => Ok(Some(usize::from(len))),
    }
}

/// The members of an intset: a 4-byte width (2, 4 or 8), a 4-byte count, the integers.
fn intset_members(blob: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut r = Reader::new(blob);
    let width = u32::from_le_bytes(r.array()?);
    let count = u32::from_le_bytes(r.array()?);
    let width = match width {
        2 | 4 | 8 => width as usize,
        _ => return bad("intset encoding"),
    };
    let fits = usize::try_from(count)
        .ok()
        .and_then(|n| n.checked_mul(width))
        .is_some_and(|size| size == r.rest.len());
    if !fits {
        return bad("intset size");
    }
    Ok(r.rest
        .chunks_exact(width)
        .map(|chunk| {
            let mut le = [0u8; 8];
            le[..width].copy_from_slice(chunk);
            let shift = 64 - 8 * width as u32;
            decimal((i64::from_le_bytes(le) << shift) >> shift)
        })
        .collect())
}

// ---- CRC-64 and LZF ----

/// Redis's CRC-64 (Jones polynomial, reflected, no final xor).
pub fn crc64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |crc, &b| {
        CRC64_TABLE[((crc ^ u64::from(b)) & 0xFF) as usize] ^ (crc >> 8)
    })
}

const CRC64_TABLE: [u64; 256] = crc64_table();

const fn crc64_table() -> [u64; 256] {
    // 0xad93d23594c935a9, bit-reversed for the reflected algorithm.
    const POLY: u64 = 0x95AC_9329_AC4B_C9B5;
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

/// liblzf's decompressor: literal runs (`000LLLLL`) and back references (`LLLooooo`,
/// `111ooooo LLLLLLLL`, then the offset's low byte). `None` unless the input decodes to
/// exactly `len` bytes.
fn lzf_decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    // Two input bytes yield at most 8 output bytes, three at most 264: more is impossible.
    if len == 0 || input.len().checked_mul(88).is_some_and(|most| len > most) {
        return None;
    }
    let mut out = Vec::with_capacity(len);
    let mut r = input.iter().copied();
    while let Some(ctrl) = r.next() {
        let ctrl = usize::from(ctrl);
        if ctrl < 32 {
            for _ in 0..=ctrl {
                out.push(r.next()?);
            }
        } else {
            let mut run = ctrl >> 5;
            if run == 7 {
                run += usize::from(r.next()?);
            }
            let back = ((ctrl & 0x1F) << 8) + usize::from(r.next()?) + 1;
            let start = out.len().checked_sub(back)?;
            for i in start..start + run + 2 {
                out.push(*out.get(i)?);
            }
        }
        if out.len() > len {
            return None;
        }
    }
    (out.len() == len).then_some(out)
}

/// liblzf 3.6's compressor as Redis builds it (`HLOG 16`, `VERY_FAST`), so that compressed
/// strings are Redis's bytes. Its hash table lives across the strings of one payload, each
/// compression seeing only its own entries (a generation tag). Redis's lives on the stack
/// uninitialized, so stale offsets from earlier compressions can add matches there: then
/// the bytes differ (both decompress to the same string).
#[derive(Default)]
struct Lzf {
    /// Per hash: generation << 32 | input position.
    table: Vec<u64>,
    generation: u64,
}

const LZF_HSIZE: usize = 1 << 16;
const LZF_MAX_LIT: usize = 1 << 5;
const LZF_MAX_OFF: usize = 1 << 13;
const LZF_MAX_REF: usize = (1 << 8) + (1 << 3);

impl Lzf {
    /// `lzf_compress(input, out_len)`: `None` when the result would not fit in `out_len`.
    fn compress(&mut self, input: &[u8], out_len: usize) -> Option<Vec<u8>> {
        if input.len() < 3 || u32::try_from(input.len()).is_err() {
            return None;
        }
        self.start();
        let mut out = LzfOut {
            bytes: vec![0; out_len],
            op: 1,
            lit: 0,
        };
        let end = input.len();
        let mut ip = 0;
        let mut hval = lzf_first(input, 0);
        while ip + 2 < end {
            hval = lzf_next(hval, input, ip);
            let candidate = self.swap(lzf_index(hval), ip);
            match candidate.filter(|&r| lzf_matches(input, r, ip)) {
                Some(reference) => {
                    ip = out.reference(input, reference, ip)?;
                    if ip + 2 >= end {
                        break;
                    }
                    // VERY_FAST: hash the two positions before the next one.
                    ip -= 2;
                    hval = lzf_first(input, ip);
                    for _ in 0..2 {
                        hval = lzf_next(hval, input, ip);
                        self.swap(lzf_index(hval), ip);
                        ip += 1;
                    }
                }
                None => {
                    out.literal(input, ip)?;
                    ip += 1;
                }
            }
        }
        out.finish(input, ip)
    }

    /// Opens a new generation (clearing the table when the tags wrap).
    fn start(&mut self) {
        if self.table.is_empty() || self.generation >= u64::from(u32::MAX) {
            self.table = vec![0; LZF_HSIZE];
            self.generation = 0;
        }
        self.generation += 1;
    }

    /// Stores `ip` at `slot`, returning this generation's previous position there.
    fn swap(&mut self, slot: usize, ip: usize) -> Option<usize> {
        let entry = self.table.get_mut(slot)?;
        let old = *entry;
        *entry = self.generation << 32 | ip as u64;
        (old >> 32 == self.generation).then_some((old & 0xFFFF_FFFF) as usize)
    }
}

fn lzf_byte(input: &[u8], at: usize) -> u32 {
    input.get(at).map_or(0, |&b| u32::from(b))
}

fn lzf_first(input: &[u8], ip: usize) -> u32 {
    lzf_byte(input, ip) << 8 | lzf_byte(input, ip + 1)
}

fn lzf_next(hval: u32, input: &[u8], ip: usize) -> u32 {
    hval << 8 | lzf_byte(input, ip + 2)
}

fn lzf_index(hval: u32) -> usize {
    ((hval >> 8).wrapping_sub(hval.wrapping_mul(5)) & 0xFFFF) as usize
}

/// liblzf's test for a usable match at `reference` (never position 0, within reach, and
/// the same three bytes).
fn lzf_matches(input: &[u8], reference: usize, ip: usize) -> bool {
    reference > 0
        && reference < ip
        && ip - reference - 1 < LZF_MAX_OFF
        && input.get(reference..reference + 3) == input.get(ip..ip + 3)
}

/// The compressor's output: `op` is the write position, `lit` the open literal run's
/// length (its header byte sits just before the run).
struct LzfOut {
    bytes: Vec<u8>,
    op: usize,
    lit: usize,
}

impl LzfOut {
    fn put(&mut self, at: usize, byte: u8) -> Option<()> {
        *self.bytes.get_mut(at)? = byte;
        Some(())
    }

    /// Closes the open literal run: writes its header, or drops it when the run is empty.
    fn close_run(&mut self) -> Option<()> {
        self.put(
            self.op.checked_sub(self.lit + 1)?,
            (self.lit as u8).wrapping_sub(1),
        )?;
        if self.lit == 0 {
            self.op -= 1;
        }
        self.lit = 0;
        Some(())
    }

    fn literal(&mut self, input: &[u8], ip: usize) -> Option<()> {
        if self.op >= self.bytes.len() {
            return None;
        }
        self.lit += 1;
        self.put(self.op, *input.get(ip)?)?;
        self.op += 1;
        if self.lit == LZF_MAX_LIT {
            self.close_run()?;
            self.op += 1; // the next run's header
        }
        Some(())
    }

    /// Writes the back reference of the match at `ip`, returning the position after it.
    fn reference(&mut self, input: &[u8], reference: usize, ip: usize) -> Option<usize> {
        let off = ip - reference - 1;
        let max = (input.len() - ip - 2).min(LZF_MAX_REF);
        self.close_run()?;
        if self.op + 4 >= self.bytes.len() {
            return None;
        }
        let len = lzf_match_len(input, reference, ip, max) - 2;
        let high = (off >> 8) as u8;
        if len < 7 {
            self.put(self.op, high + ((len as u8) << 5))?;
            self.op += 1;
        } else {
            self.put(self.op, high + (7 << 5))?;
            self.put(self.op + 1, u8::try_from(len - 7).ok()?)?;
            self.op += 2;
        }
        self.put(self.op, off as u8)?;
        self.op += 2; // the offset byte, then the next run's header
        Some(ip + len + 2)
    }

    /// The last bytes as literals; `None` if they might not fit.
    fn finish(mut self, input: &[u8], mut ip: usize) -> Option<Vec<u8>> {
        if self.op + 3 > self.bytes.len() {
            return None;
        }
        while ip < input.len() {
            self.literal(input, ip)?;
            ip += 1;
        }
        self.close_run()?;
        self.bytes.truncate(self.op);
        Some(self.bytes)
    }
}

/// How many bytes match at `ip` and `reference` (3 known to), as liblzf counts them: its
/// unrolled first 16 comparisons ignore `max`, so a match may end past it.
fn lzf_match_len(input: &[u8], reference: usize, ip: usize, max: usize) -> usize {
    let same = |len: usize| match (input.get(reference + len), input.get(ip + len)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    };
    let mut len = 2;
    if max > 16 {
        for _ in 0..16 {
            len += 1;
            if !same(len) {
                return len;
            }
        }
    }
    loop {
        len += 1;
        if !(len < max && same(len)) {
            return len;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn b(text: &str) -> Vec<u8> {
        text.as_bytes().to_vec()
    }

    fn strings(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|s| b(s)).collect()
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        items.iter().map(|(f, v)| (b(f), b(v))).collect()
    }

    fn scored(items: &[(&str, f64)]) -> Vec<(Vec<u8>, f64)> {
        items.iter().map(|(m, s)| (b(m), *s)).collect()
    }

    /// Collections in one canonical order, to compare contents whatever the payload's order.
    fn canonical(value: RdbValue) -> RdbValue {
        match value {
            RdbValue::Set(mut members) => {
                members.sort();
                RdbValue::Set(members)
            }
            RdbValue::Hash(mut pairs) => {
                pairs.sort();
                RdbValue::Hash(pairs)
            }
            RdbValue::SortedSet(mut entries) => {
                entries.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
                RdbValue::SortedSet(entries)
            }
            RdbValue::Stream(mut stream) => {
                stream.groups.sort_by(|a, b| a.name.cmp(&b.name));
                for group in &mut stream.groups {
                    group.consumers.sort_by(|a, b| a.name.cmp(&b.name));
                }
                RdbValue::Stream(stream)
            }
            other => other,
        }
    }

    #[test]
    fn crc64_is_redis_jones_crc() {
        // crc64.c's own test vector.
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    /// DUMP payloads captured from redis-server 7.0.15 (default settings, no redis.conf):
    /// each is the hex of `DUMP k` after the command in the comment on a fresh key, with
    /// the value it holds. Encoding it must give the same bytes; decoding, the same value.
    fn redis_dumps() -> Vec<(&'static str, &'static str, RdbValue)> {
        let x = |c: &str, n: usize| c.repeat(n);
        vec![
            // SET k hello (embstr)
            (
                "000568656c6c6f0a006372df766534200a",
                "raw",
                RdbValue::String(b("hello")),
            ),
            // SET k "" (embstr)
            (
                "00000a005d9b5c400f7fa2da",
                "empty",
                RdbValue::String(Vec::new()),
            ),
            // SET k 100 (int): RDB_ENC_INT8
            (
                "00c0640a0087299531600e8db3",
                "int8",
                RdbValue::String(b("100")),
            ),
            // SET k -1000 (int): RDB_ENC_INT16
            (
                "00c118fc0a004602355e70225a90",
                "int16",
                RdbValue::String(b("-1000")),
            ),
            // SET k 123456789 (int): RDB_ENC_INT32
            (
                "00c215cd5b070a00a4b7c909e0e9379e",
                "int32",
                RdbValue::String(b("123456789")),
            ),
            // SET k 12345678901 (int, beyond 32 bits): verbatim
            (
                "000b31323334353637383930310a00304e52d727176510",
                "long int",
                RdbValue::String(b("12345678901")),
            ),
            // SET k aaaa...a (40 bytes): RDB_ENC_LZF
            (
                "00c30928016161e01b000161610a00cf092faaae25831d",
                "lzf",
                RdbValue::String(x("a", 40).into_bytes()),
            ),
            // SET k <bytes 0..=99, four times, then "tail-end">: LZF with full literal runs,
            // a back reference capped at 264 bytes and another after it
            (
                "00c3407841981f000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f1f2021\
                 22232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f1f404142434445464748494a\
                 4b4c4d4e4f505152535455565758595a5b5c5d5e5f046061626300e0ff63e11a2b077461696c2d656e64\
                 0a008b4e05a187b62292",
                "lzf runs",
                RdbValue::String([(0..100).collect::<Vec<u8>>().repeat(4), b("tail-end")].concat()),
            ),
            // RPUSH k a b 1 -5 1000: QUICKLIST_2, one listpack node
            (
                "120102151500000005008161028162020101dffb02c3e802ff0a0027000a38868f5340",
                "list",
                RdbValue::List(strings(&["a", "b", "1", "-5", "1000"])),
            ),
            // RPUSH k x*3000 y*3000 z*3000 w: two 8 KB nodes, each LZF compressed
            (
                "120202c3405c577f087f1700000200ebb878e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0\
                 ff00e0ff00e0ff00e0ff00e056000417baebb879e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff\
                 00e0ff00e0ff00e0ff00e0ff00e056000217baff02c3354bc608c60b00000200ebb87ae0ff00e0ff\
                 00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e0ff00e056000517ba817702ff0a00\
                 5dfac341d0340819",
                "list nodes",
                RdbValue::List(vec![
                    x("x", 3000).into_bytes(),
                    x("y", 3000).into_bytes(),
                    x("z", 3000).into_bytes(),
                    b("w"),
                ]),
            ),
            // HSET k a 1 b x: HASH_LISTPACK
            (
                "10121200000004008161020101816202817802ff0a0078074c6bd9d7051f",
                "hash listpack",
                RdbValue::Hash(pairs(&[("a", "1"), ("b", "x")])),
            ),
            // HSET k f v*65 (hashtable: the value is over 64 bytes): HASH
            (
                "04010166c3094041017676e034000176760a003d71be523786cf45",
                "hash table",
                RdbValue::Hash(vec![(b("f"), x("v", 65).into_bytes())]),
            ),
            // SADD k 5 -3: a 16-bit intset
            (
                "0b0c0200000002000000fdff05000a0040e2062db5be7039",
                "intset16",
                RdbValue::Set(strings(&["-3", "5"])),
            ),
            // SADD k 1 2 3 70000: a 32-bit intset
            (
                "0b180400000004000000010000000200000003000000701101000a00ef2e6521e385a22a",
                "intset32",
                RdbValue::Set(strings(&["1", "2", "3", "70000"])),
            ),
            // SADD k 1 9223372036854775807: a 64-bit intset
            (
                "0b1808000000020000000100000000000000ffffffffffffff7f0a009420a5a3363d85ab",
                "intset64",
                RdbValue::Set(strings(&["1", "9223372036854775807"])),
            ),
            // SADD k hello (hashtable): SET
            (
                "02010568656c6c6f0a003498ac0ee7d43661",
                "set table",
                RdbValue::Set(strings(&["hello"])),
            ),
            // ZADD k 1 a 2.5 b -inf c: ZSET_LISTPACK in score order
            (
                "111d1d0000000600816302842d696e6605816102010181620283322e3504ff0a003992339be11f\
                 323d",
                "zset listpack",
                RdbValue::SortedSet(scored(&[("c", f64::NEG_INFINITY), ("a", 1.0), ("b", 2.5)])),
            ),
            // ZADD k 1 m*65 2 n 0.5 o (skiplist: a member over 64 bytes): ZSET_2, highest
            // score first
            (
                "0503016e0000000000000040c3094041016d6de03400016d6d000000000000f03f016f00000000\
                 0000e03f0a009f6f71fe9f0d687e",
                "zset skiplist",
                RdbValue::SortedSet(vec![
                    (b("n"), 2.0),
                    (x("m", 65).into_bytes(), 1.0),
                    (b("o"), 0.5),
                ]),
            ),
        ]
    }

    #[test]
    fn encodes_what_redis_dumps() {
        for (payload, what, value) in redis_dumps() {
            assert_eq!(encode_payload(&value), hex(payload), "{what}");
        }
    }

    #[test]
    fn decodes_what_redis_dumps() {
        for (payload, what, value) in redis_dumps() {
            let decoded = decode_payload(&hex(payload)).expect(what);
            assert_eq!(canonical(decoded), canonical(value), "{what}");
        }
    }

    /// Encodings redis-server 7.0 no longer writes (and non-minimal lengths), built by hand
    /// from Redis's format (rdb.h, ziplist.c, zipmap.c, intset.c, listpack.c): each was
    /// RESTOREd into redis-server 7.0.15, which accepted it and then held the contents given
    /// here (TYPE, then LRANGE, HGETALL, SMEMBERS or ZRANGE WITHSCORES).
    fn hand_built() -> Vec<(&'static str, &'static str, RdbValue)> {
        let ints = [
            "0",
            "12",
            "13",
            "-1",
            "127",
            "-128",
            "128",
            "32767",
            "-32768",
            "40000",
            "-8388608",
            "8388607",
            "2147483647",
            "-2147483648",
            "2147483648",
            "-9223372036854775808",
            "9223372036854775807",
        ];
        let with_ints = |first: &str, long: &str, last: &[&str]| {
            let mut items = vec![b(first), long.as_bytes().to_vec()];
            items.extend(strings(&ints));
            items.extend(strings(last));
            RdbValue::List(items)
        };
        vec![
            // STRING with a 32-bit length (0x80)
            (
                "00800000000568656c6c6f0a00d0e412e235d9941a",
                "len32",
                RdbValue::String(b("hello")),
            ),
            // STRING with a 64-bit length (0x81)
            (
                "0081000000000000000568656c6c6f0a005245fdd6f880aef8",
                "len64",
                RdbValue::String(b("hello")),
            ),
            // LIST (type 1): "a", "", int8 7, a 70-byte string (14-bit length)
            (
                "0104016100c00740467878787878787878787878787878787878787878787878787878787878787878\
                 78787878787878787878787878787878787878787878787878787878787878787878787878780a00ad5e\
                 fd6c6067e41b",
                "list type 1",
                RdbValue::List(vec![b("a"), b(""), b("7"), "x".repeat(70).into_bytes()]),
            ),
            // SET (type 2): "m1", int16 10000, "z"
            (
                "0203026d31c11027017a0a006268a0bfb4b1c67f",
                "set type 2",
                RdbValue::Set(strings(&["m1", "10000", "z"])),
            ),
            // ZSET (type 3): text scores "1.5", +inf (254), -inf (255), "-3", "1e10"
            (
                "0305016103312e350162fe0163ff0164022d33016504316531300a00a2fe86534e740092",
                "zset type 3",
                RdbValue::SortedSet(scored(&[
                    ("a", 1.5),
                    ("b", f64::INFINITY),
                    ("c", f64::NEG_INFINITY),
                    ("d", -3.0),
                    ("e", 1e10),
                ])),
            ),
            // HASH (type 4): f1 → v1, f2 → int8 5
            (
                "0402026631027631026632c0050a005539a7bff3af89b3",
                "hash type 4",
                RdbValue::Hash(pairs(&[("f1", "v1"), ("f2", "5")])),
            ),
            // ZSET_2 (type 5): binary scores 0.25, +inf, -7
            (
                "05030161000000000000d03f0162000000000000f07f01630000000000001cc00a00f8ba764796\
                 c21384",
                "zset type 5",
                RdbValue::SortedSet(scored(&[("a", 0.25), ("b", f64::INFINITY), ("c", -7.0)])),
            ),
            // HASH_ZIPMAP (type 9): three pairs, each value with 2 bytes of free space
            (
                "092303046e616d65050272656469730000037665720102320000000502656d7074790000ff0a00b6\
                 63d612b186bf2c",
                "zipmap",
                RdbValue::Hash(pairs(&[("name", "redis"), ("ver", "2"), ("", "empty")])),
            ),
            // LIST_ZIPLIST (type 10): 6 and 14-bit strings, every integer encoding (immediate
            // 0-12, 8, 16, 24, 32, 64 bits), and a 32-bit string length
            (
                "0a40b5b5000000ab000000140000016103404662626262626262626262626262626262626262626262\
                 626262626262626262626262626262626262626262626262626262626262626262626262626262626262\
                 62626262626249f102fd02fe0d03feff03fe7f03fe8003c0800004c0ff7f04c0008004f0409c0005f000\
                 008005f0ffff7f05d0ffffff7f06d00000008006e000000080000000000ae000000000000000800ae0ff\
                 ffffffffffff7f0a8000000003626967ff0a00ed6e7a661631d954",
                "list ziplist",
                with_ints("a", &"b".repeat(70), &["big"]),
            ),
            // SET_INTSET (type 11), 16-bit: -5, 1, 300
            (
                "0b0e0200000003000000fbff01002c010a000f5f7a8eb59409d2",
                "intset16",
                RdbValue::Set(strings(&["-5", "1", "300"])),
            ),
            // SET_INTSET (type 11), 64-bit: i64::MIN, 1, i64::MAX
            (
                "0b20080000000300000000000000000000800100000000000000ffffffffffffff7f0a00a625a46d\
                 60a48fc9",
                "intset64",
                RdbValue::Set(strings(&[
                    "-9223372036854775808",
                    "1",
                    "9223372036854775807",
                ])),
            ),
            // ZSET_ZIPLIST (type 12): c -inf, a 1, b "2.5", d 3000000000 (64-bit)
            (
                "0c2e2e00000023000000080000016303042d696e6606016103f20201620303322e3505016403e000\
                 5ed0b200000000ff0a00167f443e46404c46",
                "zset ziplist",
                RdbValue::SortedSet(scored(&[
                    ("c", f64::NEG_INFINITY),
                    ("a", 1.0),
                    ("b", 2.5),
                    ("d", 3e9),
                ])),
            ),
            // HASH_ZIPLIST (type 13): f1 → v1, n → 42
            (
                "0d1919000000150000000400000266310402763104016e03fe2aff0a001f7f8730421405f1",
                "hash ziplist",
                RdbValue::Hash(pairs(&[("f1", "v1"), ("n", "42")])),
            ),
            // LIST_QUICKLIST (type 14): ziplist nodes [a b 1], [] (skipped), [c -2]
            (
                "0e03131300000010000000030000016103016203f2ff0b0b0000000a0000000000ff1111000000\
                 0d000000020000016303fefeff0a00db608aca21af628e",
                "quicklist",
                RdbValue::List(strings(&["a", "b", "1", "c", "-2"])),
            ),
            // HASH_LISTPACK (type 16) with 13-bit integers 4095 and -4096
            (
                "1019190000000600816602817602816902cfff02816a02d00002ff0a00ccef5fd3cc78f157",
                "hash listpack",
                RdbValue::Hash(pairs(&[("f", "v"), ("i", "4095"), ("j", "-4096")])),
            ),
            // ZSET_LISTPACK (type 17): a 1, b "1.5", c 100000 (24-bit)
            (
                "111c1c0000000600816102010181620283312e3504816302f2a0860104ff0a00c5dd0a5d01e085df",
                "zset listpack",
                RdbValue::SortedSet(scored(&[("a", 1.0), ("b", 1.5), ("c", 100000.0)])),
            ),
            // LIST_QUICKLIST_2 (type 18): a listpack node with a 12-bit string, every integer
            // encoding and a 32-bit string length; a plain node; a one-element node
            (
                "12030240aeae0000001400816102e04679797979797979797979797979797979797979797979797979\
                 797979797979797979797979797979797979797979797979797979797979797979797979797979797979\
                 7979794800010c010d01dfff027f01df8002c08002f1ff7f03f1008003f2409c0004f200008004f2ffff\
                 7f04f3ffffff7f05f30000008005f4000000800000000009f4000000000000008009f4ffffffffffffff\
                 7f09f00300000062696708ff010d706c61696e20656c656d656e74020a0a0000000100816202ff0a00da\
                 4e5613bb23ef77",
                "quicklist 2",
                with_ints("a", &"y".repeat(70), &["big", "plain element", "b"]),
            ),
        ]
    }

    #[test]
    fn decodes_old_and_unusual_encodings_as_redis_does() {
        for (payload, what, value) in hand_built() {
            let decoded = decode_payload(&hex(payload)).expect(what);
            assert_eq!(canonical(decoded), canonical(value), "{what}");
        }
    }

    #[test]
    fn set_listpack_of_redis_7_2_decodes() {
        // SET_LISTPACK (type 20, Redis 7.2): a, 5; redis-server 7.0 refuses the type.
        let lp = hex("0c00000002008161020501ff");
        let body = [&[TYPE_SET_LISTPACK, lp.len() as u8][..], &lp].concat();
        let value = decode_payload(&framed(body)).expect("set listpack");
        assert_eq!(value, RdbValue::Set(strings(&["a", "5"])));
    }

    #[test]
    fn footers_are_checked_as_restore_checks_them() {
        let good = hex("000568656c6c6f0a006372df766534200a");
        assert!(decode_payload(&good).is_ok());
        let mut bad_crc = good.clone();
        *bad_crc.last_mut().expect("byte") ^= 1;
        let mut zero_crc = good.clone();
        let len = zero_crc.len();
        zero_crc[len - 8..].fill(0);
        let version_11 = {
            let mut body = hex("000568656c6c6f");
            body.extend_from_slice(&11u16.to_le_bytes());
            let crc = crc64(&body);
            body.extend_from_slice(&crc.to_le_bytes());
            body
        };
        let version_9 = {
            let mut body = hex("000568656c6c6f");
            body.extend_from_slice(&9u16.to_le_bytes());
            let crc = crc64(&body);
            body.extend_from_slice(&crc.to_le_bytes());
            body
        };
        // redis-server 7.0.15: all but the last answer "DUMP payload version or checksum
        // are wrong" (a zero CRC is no exception); version 9 restores.
        for payload in [&b""[..], b"123456789", &bad_crc, &zero_crc, &version_11] {
            assert_eq!(decode_payload(payload), Err(RdbError::Footer));
        }
        assert_eq!(decode_payload(&version_9), Ok(RdbValue::String(b("hello"))));
    }

    #[test]
    fn bad_bodies_are_bad_data_format() {
        // Each answered "ERR Bad data format" by redis-server 7.0.15.
        for body in [
            "",             // no type
            "0100",         // an empty list
            "0200",         // an empty set
            "0400",         // an empty hash
            "0500",         // an empty sorted set
            "1200",         // a quicklist without nodes
            "08",           // an unused type
            "63",           // an unknown type
            "0600",         // a module value (no module loaded)
            "020201610161", // a set with a repeated member
            "c3010000",     // a string of type 0xc3: LZF with an empty result
            "0005616263",   // a string cut short
            "00c4",         // an unknown string encoding
            "0f00",         // a stream cut short
        ] {
            let result = decode_payload(&framed(hex(body)));
            assert!(
                matches!(result, Err(RdbError::BadFormat(_))),
                "{body}: {result:?}"
            );
        }
    }

    #[test]
    fn huge_declared_lengths_fail_before_allocating() {
        for body in [
            "0181ffffffffffffffff", // a list of 2^64-1 elements
            "0081ffffffffffffffff", // a string of 2^64-1 bytes
            "00c30180ffffffff61",   // LZF claiming 4 GB from one byte
        ] {
            let result = decode_payload(&framed(hex(body)));
            assert!(matches!(result, Err(RdbError::BadFormat(_))), "{body}");
        }
    }

    #[test]
    fn trailing_bytes_before_the_footer_are_ignored() {
        // redis-server 7.0.15 restores "hello" from this payload.
        let body = hex("000568656c6c6fffff");
        assert_eq!(
            decode_payload(&framed(body)),
            Ok(RdbValue::String(b("hello")))
        );
    }

    #[test]
    fn listpack_back_lengths_match_redis() {
        assert_eq!(lp_backlen(127), [127]);
        assert_eq!(lp_backlen(128), [1, 128]);
        assert_eq!(lp_backlen(16382), [127, 254]);
        assert_eq!(lp_backlen(16383), [0, 255, 255]);
    }

    fn sid(ms: u64, seq: u64) -> StreamId {
        StreamId::new(ms, seq)
    }

    fn stream_entry(id: StreamId, items: &[(&str, &str)]) -> StreamEntry {
        (id, pairs(items))
    }

    /// A stream holding `entries` that were XADDed and never deleted.
    fn added(entries: Vec<StreamEntry>) -> RdbStream {
        RdbStream {
            length: entries.len() as u64,
            first_id: entries.first().map_or(StreamId::MIN, |e| e.0),
            last_id: entries.last().map_or(StreamId::MIN, |e| e.0),
            entries_added: entries.len() as u64,
            entries,
            ..RdbStream::default()
        }
    }

    fn group(name: &str, last_id: StreamId, entries_read: i64) -> RdbGroup {
        RdbGroup {
            name: b(name),
            last_id,
            entries_read,
            ..RdbGroup::default()
        }
    }

    /// DUMP payloads of streams captured from redis-server 7.0.15 (default settings), each
    /// after the commands in its comment on a fresh key `k`, with the stream it holds, and
    /// whether docdb's DUMP of that stream gives the same bytes (Redis's nodes keep deleted
    /// entries until they empty; docdb's DUMP rebuilds nodes as XADD fills them).
    fn redis_stream_dumps() -> Vec<(&'static str, &'static str, RdbStream, bool)> {
        // XADD k <1000+i/3>-<i%3> name n<i> n <37i-500>, i = 1..=250: nodes of 100, 100, 50
        let many = (1..=250u64)
            .map(|i| {
                let (name, n) = (format!("n{i}"), (i as i64 * 37 - 500).to_string());
                stream_entry(sid(1000 + i / 3, i % 3), &[("name", &name), ("n", &n)])
            })
            .collect();
        // XADD k 5-<i> f v*<150i> g <i>, i = 1..=11: nodes split at 4096 bytes
        let big = (1..=11u64)
            .map(|i| {
                let (v, g) = ("v".repeat(150 * i as usize), i.to_string());
                stream_entry(sid(5, i), &[("f", &v), ("g", &g)])
            })
            .collect();
        let ten = |ms: u64, live: &[u64]| -> Vec<StreamEntry> {
            live.iter()
                .map(|&i| stream_entry(sid(ms, i), &[("f", &i.to_string())]))
                .collect()
        };
        let x100 = "x".repeat(100);
        let max = u64::MAX;
        let t = 0x0000_01a2_04e7_4fcc; // the delivery and seen times Redis recorded
        let pending = |seq, delivery_time, delivery_count, consumer: &str| RdbPending {
            id: sid(9, seq),
            delivery_time,
            delivery_count,
            consumer: b(consumer),
        };
        let consumer = |name: &str, seen_time| RdbConsumer {
            name: b(name),
            seen_time,
        };
        let x70 = "x".repeat(70);
        let grouped: Vec<StreamEntry> = (1..=5u64)
            .map(|i| stream_entry(sid(9, i), &[("f", &i.to_string()), ("big", &x70)]))
            .collect();
        let long_name = "a-very-long-group-name-that-should-compress-compress-compress";
        vec![
            // XADD k 1-1 f v; XADD k 1-2 f w; XADD k 2-0 a 1 b 2 (other fields; a seq below
            // the master's)
            (
                "130110000000000000000100000000000000013d3d000000180003010001010181660200010201\
                 000100018176020401020100010101817702040100010101dfff020201816102010181620202\
                 010801ff0302000101000003000a00e4b63f4c0e7f63d6",
                "simple",
                added(vec![
                    stream_entry(sid(1, 1), &[("f", "v")]),
                    stream_entry(sid(1, 2), &[("f", "w")]),
                    stream_entry(sid(2, 0), &[("a", "1"), ("b", "2")]),
                ]),
                true,
            ),
            (MANY, "many", added(many), true),
            (BIG, "big", added(big), true),
            // XADD k 1-0 int -100000 neg -1 big 9223372036854775807 s x*100 e "" z 007;
            // XADD k 18446744073709551615-18446744073709551614 int 1 neg 2 big 3 s 4 e 5 z 6
            (
                "13011000000000000000010000000000000000c3406440c51fc50000001e0002010001060183\
                 696e7404836e656704836269670481730281650502817a020001401f0b0001f26079fe04dfff\
                 02f4ff8000047f09e06478e05a0008668001833030370409208702dffe0220020001200904030\
                 104010520b5020901ff0281ffffffffffffffff81fffffffffffffffe0100000002000a005b3f\
                 ae64011e0379",
                "integers and wrapping deltas",
                added(vec![
                    stream_entry(
                        sid(1, 0),
                        &[
                            ("int", "-100000"),
                            ("neg", "-1"),
                            ("big", "9223372036854775807"),
                            ("s", &x100),
                            ("e", ""),
                            ("z", "007"),
                        ],
                    ),
                    stream_entry(
                        sid(max, max - 1),
                        &[
                            ("int", "1"),
                            ("neg", "2"),
                            ("big", "3"),
                            ("s", "4"),
                            ("e", "5"),
                            ("z", "6"),
                        ],
                    ),
                ]),
                true,
            ),
            // XADD k 3-3 f v; XSETID k 100-5 ENTRIESADDED 77 MAXDELETEDID 50-1
            (
                "130110000000000000000300000000000000031d1d0000000a00010100010101816602000102\
                 01000100018176020401ff0140640503033201404d000a00596f6cd648f107b9",
                "xsetid",
                RdbStream {
                    last_id: sid(100, 5),
                    max_deleted_id: sid(50, 1),
                    entries_added: 77,
                    ..added(vec![stream_entry(sid(3, 3), &[("f", "v")])])
                },
                true,
            ),
            // XADD k 7-<i> f <i>, i = 1..=10; XDEL k 7-1 7-5 7-10 (flagged deleted in place)
            (
                "13011000000000000000070000000000000001c3405b40760f76000000370007010301010181\
                 66020020080000200104010104010260070002a0090002201980134007000420050000200500\
                 052003402702050106a00902060107a00902070108a00902080109200940310209010a200900\
                 ff07070a0702070a0a000a0059d24e99d2a43133",
                "deleted entries",
                RdbStream {
                    last_id: sid(7, 10),
                    max_deleted_id: sid(7, 10),
                    entries_added: 10,
                    ..added(ten(7, &[2, 3, 4, 6, 7, 8, 9]))
                },
                false,
            ),
            // XADD k 8-<i> f <i>, i = 1..=5; XTRIM k MAXLEN 0
            (
                "13000008050000000005000a00b239ccc8ac06c50d",
                "trimmed to nothing",
                RdbStream {
                    last_id: sid(8, 5),
                    entries_added: 5,
                    ..RdbStream::default()
                },
                true,
            ),
            // XADD k 8-1 f 1; XADD k 8-2 f 2; XDEL k 8-1 8-2
            (
                "13000008020000080202000a00ecb2dd67f83d802c",
                "all deleted",
                RdbStream {
                    last_id: sid(8, 2),
                    max_deleted_id: sid(8, 2),
                    entries_added: 2,
                    ..RdbStream::default()
                },
                true,
            ),
            // XGROUP CREATE k g $ MKSTREAM
            (
                "13000000000000000000010167000081ffffffffffffffff00000a00a01a953dfb9cddde",
                "empty with a group",
                RdbStream {
                    groups: vec![group("g", StreamId::MIN, -1)],
                    ..RdbStream::default()
                },
                true,
            ),
            // XADD k 9-<i> f <i> big x*70, i = 1..=5; XGROUP CREATE k g1 0;
            // XGROUP CREATE k 123 $; XGROUP CREATE k <long name> 9-2;
            // XREADGROUP GROUP g1 alice COUNT 2 STREAMS k >; the same for bob;
            // XGROUP CREATECONSUMER k g1 carol; XCLAIM k g1 carol 0 9-1
            (
                GROUPS,
                "groups",
                RdbStream {
                    groups: vec![
                        group("123", sid(9, 5), -1),
                        group(long_name, sid(9, 2), -1),
                        RdbGroup {
                            pending: vec![
                                pending(1, t + 1, 2, "carol"),
                                pending(2, t, 1, "alice"),
                                pending(3, t + 1, 1, "bob"),
                                pending(4, t + 1, 1, "bob"),
                            ],
                            consumers: vec![
                                consumer("alice", t),
                                consumer("bob", t + 1),
                                consumer("carol", t + 1),
                            ],
                            ..group("g1", sid(9, 4), 4)
                        },
                    ],
                    ..added(grouped)
                },
                true,
            ),
        ]
    }

    const MANY: &str = "13031000000000000003e80000000000000001c34410466e146e0600005e02640100010201846e616d6505816e02400c0000200107826e3103de310205201b02000101200e033203de56600e0a0101dfff02826e3303de7ba00f402d033403dea0a00e402d033503dec5600e0002802d033603deeaa00f402d033703df0fa00e402d033803df34600e0003802d033903df59a00f080001836e313004df7ea00f0001400f033104dfa3600f0004402f2020033204dfc8a0106030033304dfeda00f6030033404120140ca0005a02f02350437200b400f602e0236045ca00e602d033704c081603d0006a02e033804c0a6a010602f033904c0cba00f403004323004c0f0600f0007803004323104c115a010403004323204c13aa00f6030033304c15f600f0008a030033404c184a0106030033504c1a9a00f6030033604c1ce600f0009a030033704c1f3a0106030033804c218a00f6030033904c23d600f000a803004333004c262a010403004333104c287a00f403004333204c2ac600f000ba030033304c2d1a0106030033404c2f6a00f6030033504c31b600f000ca030033604c340a0106030033704c365a00f6030033804c38a600f000da030033904c3afa010403004343004c3d4a00f403004343104c3f9600f000e803004343204c41ea0106030033304c443a00f6030033404c468600f000fa030033504c48da0106030033604c4b2a00f6030033704c4d7600f0010a030033804c4fca0106030033904c521a00f403004353004c546600f0011803004353104c56ba010403004353204c590a00f6030033304c5b5600f0012a030033404c5daa0106030033504c5ffa00f6030033604c624600f0013a030033704c649a0106030033804c66ea00f6030033904c693600f0014803004363004c6b8a010403004363104c6dda00f403004363204c702600f0015a030033304c727a0106030033404c74ca00f6030033504c771600f0016a030033604c796a0106030033704c7bba00f6030033804c7e0600f0017a030033904c805a010403004373004c82aa00f403004373104c84f600f0018803004373204c874a0106030033304c899a00f6030033404c8be600f0019a030033504c8e3a0106030033604c908a00f6030033704c92d600f001aa030033804c952a0106030033904c977a00f403004383004c99c600f001b803004383104c9c1a010403004383204c9e6a00f6030033304ca0b600f001ca030033404ca30a0106030033504ca55a00f6030033604ca7a600f001da030033704ca9fa0106030033804cac4a00f6030033904cae9600f001e803004393004cb0ea010403004393104cb33a00f403004393204cb58600f001fa030033304cb7da0106030033404cba2a00f6030033504cbc7600f0020a030033604cbeca0106030033704cc11a00f6030033804cc36600f0021a030033904cc5ba010000026550531303005cc80201000ff1000000000000004090000000000000002c3440f474a144a0700005e02640100010201846e616d6505816e02400c0000200109846e31303105cca50205201d040101dffe024011033205cccac01100ff6011033305ccefa0118034033405cd1460100002c034033505cd39c0118034033605cd5ea0118034033705cd8360100003c034033805cda8c0118034033905cdcda011603404313005cdf260100004a03404313105ce17c011603404313205ce3ca0118034033305ce6160100005c034033405ce86c0118034033505ceaba0118034033605ced060100006c034033705cef5c0118034033805cf1aa0118034033905cf3f60100007a03404323005cf64c011603404323105cf89a011603404323205cfae60100008c034033305cfd3c0118034033405cff8a0118034053505f11d100341a80009c035033605f142e000128036033705f167c0128037033805f18c8011000ac037033905f1b1e00012603704333005f1d6c012603704333105f1fb8011000ba03705333205f12011608220128037033305f145c0128037033405f16a8011000cc03720ba008fe00012803720ba00b4c012803720b900d98011000dc03720ba00fee00012803720ba0123126082000d8037003420b900488011000ea037003420ba006de000126037003420ba0092c012606f003420b900b78011000fc03720ba00dce00012803720ba010113606f000fa03720b9002680110010c03720ba004be00012803720ba0070c012806f20b9009580110011a037003520ba00bae000126037003520ba00dfc0126037003520b901041460810012c03720ba0029e00012803720ba004ec012803720b9007380110013c03720ba0098e00012803720ba00bdc012803720b900e280110014c03720ba010715608220126037003620ba002cc0126037003620b9005180110015a037003620ba0076e00012803720ba009bc012803720b900c080110016c03720ba00e5e00012803720ba010a1660820016a03720b9002f80110017c03720ba0054e00012803720ba0079c012606f003720b9009e80110018a037003720ba00c3e000126037003720ba00e8c012803720b9010d1760810019c03720ba0032e00012803720ba0057c012803720b9007c8011001ac03720ba00a1e00012803720ba00c6c012803720b900eb8011001ba037003820ba011018608220126037003820ba0035c0126037003820b9005a8011001cc03720ba007fe00012803720ba00a4c012803720b900c98011001dc03720ba00eee00012803720ba0113196082001da03720b900388011001ec03720ba005de000126037003920ba0082c012606f003920b900a78011001fa037003920ba00cce00012803720ba00f1c012803720b901161a60810020c03720ba003be00012803720ba0060c012803720b9008580110021c03720ba00aae00012803720ba00cfc012403701323020b900f420110101ff10000000000000042b0000000000000000c34210439c149c0300003201320100010201846e616d6505816e02400c000020010a846e32303105f1191b0305201e020001016011033205f13ec01140340532303305f1638011000120254011033405f188c0118035033505f1adc0118035033605f1d28011405b4035033705f1f7c0118035043805f11c1c607d40014023033905f14180110003806b04313005f166c0116035003120b3008bc0116035003120b300b080110004a03520b300d5c011803520b300fac011803520b3011f1d607d0005a03520b30044c011803520b30069c011803520b3008e80110006a03520b300b3c0116035003220b300d8c0116035003220b300fd801100078035003220b301221e607d0007a03520b30047c011803520b3006c80110008a03520b30091c011806b20b300b6c011803520b300db80110009a03520b301001f606b0009a03520b30025c0116035003320b3004a8011000a8035003320b3006fc011606b003320b30094c011803520b300b98011000ba03520b300dec011803520b3010320607d000ba03520b300288011000ca03520b3004dc011803520b30072c011806b20b300978011000d8035003420b300bcc0116035003420b300e1c0116035003420b3010621607d000ea03520b3002bc011803520b30050c011803520b300758011000fa03520b3009ac011803520b300bfc011803520b300e480110010a03520b3010922607d00108035003520b3002e20110101ff40fa443b0143e801000040fa000a00f7775b03d5b1b5e3";
    const BIG: &str = "13031000000000000000050000000000000001c340964cb711b70c00002a0006010001020181660281670240090000200102e09676e08c0004019801010520ad0500010101e12ce08ca2e08e000202ae02a139030201e1c2e08ea4e0ff00e01a000203c403a1cf030301e258e01a30e0ff00e0ff00e01c000204da04a265030401e2eee01c32e0ff00e0ff00e0b0000205f005a2fb030501e384e0b0c6e0ff00e0ff00e0b20002078606238b00ff1000000000000000050000000000000007c3406c4e4f114f0e0000180003010001020181660281670240090000200102e41a76e0ff00e0ff00e0ff00e0f80004089c07010524310500010101e4b0e1f80ee0ff00e0ff00e0ff00e08e000209b208a4bd030201e546e08ea4e0ff00e0ff00e0ff00e0ff00e08600020ac809255300ff100000000000000005000000000000000ac3405b4c7f117f0c0000120002010001020181660281670240090000200102e5dc76e0ff00e0ff00e0ff00e0ff00e0ff00e0aa00040bde0a010525f30500010101e672e0aac0e0ff00e0ff00e0ff00e0ff00e0ff00e08e00020cf40b267f00ff0b050b050100000b000a0019fd9a4bedac64a7";
    const GROUPS: &str = "13011000000000000000090000000000000001c3404841b613b601000024000501000102018166028362696704400b00002001040101e04678e03c00014805205e40500002e0475202020103e0475202030104e0475202040105e042520101ff050905090100000503c07b090581ffffffffffffffff0000c3333d1f612d766572792d6c6f6e672d67726f75702d6e616d652d746861742d73686f750a6c642d636f6d7072657373e00708017373090281ffffffffffffffff00000267310904040400000000000000090000000000000001cd4fe704a20100000200000000000000090000000000000002cc4fe704a20100000100000000000000090000000000000003cd4fe704a20100000100000000000000090000000000000004cd4fe704a2010000010305616c696365cc4fe704a2010000010000000000000009000000000000000203626f62cd4fe704a2010000020000000000000009000000000000000300000000000000090000000000000004056361726f6ccd4fe704a201000001000000000000000900000000000000010a00360aea6da42ff676";

    #[test]
    fn streams_decode_as_redis_dumps_them() {
        for (payload, what, stream, _) in redis_stream_dumps() {
            let decoded = decode_payload(&hex(payload)).expect(what);
            assert_eq!(decoded, RdbValue::Stream(stream), "{what}");
        }
    }

    #[test]
    fn streams_encode_as_redis_dumps_them() {
        for (payload, what, stream, same_layout) in redis_stream_dumps() {
            let encoded = encode_payload(&RdbValue::Stream(stream.clone()));
            if same_layout {
                assert_eq!(encoded, hex(payload), "{what}");
            }
            assert_eq!(
                decode_payload(&encoded),
                Ok(RdbValue::Stream(stream)),
                "{what}"
            );
        }
    }

    /// Parts of the "simple" stream's payload to build others from: its node's key (1-1)
    /// and listpack, its state (length 3, last 2-0, first 1-1, no deletion, 3 added), and
    /// a raw id and time.
    const NODE_KEY: &str = "1000000000000000010000000000000001";
    const NODE_LP: &str = "3d3d000000180003010001010181660200010201000100018176020401020100010101\
                           817702040100010101dfff020201816102010181620202010801ff";
    const STATE: &str = "0302000101000003";
    const RAW_1_1: &str = "00000000000000010000000000000001";
    const TIME_0: &str = "0000000000000000";

    /// The simple stream's body, its listpack's `from` replaced by `to`, then `tail`.
    fn simple_body(from: &str, to: &str, tail: &str) -> String {
        format!("1301{NODE_KEY}{}{tail}", NODE_LP.replace(from, to))
    }

    /// The simple stream's body with one group "g" (last id 1-1, entries read 0): `pel`
    /// pending (delivered once, at time 0), and consumers (one-letter names) each with the
    /// ids it holds.
    fn one_group(pel: &[&str], consumers: &[(char, &[&str])]) -> String {
        let mut group = String::from("01"); // one group
        group += "0167"; // named "g"
        group += "010100"; // last id 1-1, entries read 0
        group += &format!("{:02x}", pel.len());
        for id in pel {
            group += &format!("{id}{TIME_0}01");
        }
        group += &format!("{:02x}", consumers.len());
        for (name, ids) in consumers {
            let name = *name as u8;
            group += &format!("01{name:02x}{TIME_0}{:02x}{}", ids.len(), ids.concat());
        }
        simple_body("", "", &format!("{STATE}{group}"))
    }

    #[test]
    fn damaged_streams_are_bad_data_format() {
        let id = RAW_1_1;
        let two_nodes = format!("1302{NODE_KEY}{NODE_LP}{NODE_KEY}{NODE_LP}0602000101000006");
        // Each answered "ERR Bad data format" by redis-server 7.0.15.
        let refused = [
            (
                "node key of 15 bytes",
                format!("13010f{}{NODE_LP}{STATE}00", "00".repeat(15)),
            ),
            (
                "empty listpack",
                format!("1301{NODE_KEY}07070000000000ff000000000000000000"),
            ),
            (
                "listpack size off by one",
                simple_body("3d3d", "3d3e", &format!("{STATE}00")),
            ),
            ("repeated node key", two_nodes),
            ("length without nodes", "13000102000000000000010000".into()),
            (
                "repeated group",
                simple_body("", "", &format!("{STATE}020167010100000001670101000000")),
            ),
            (
                "repeated pending entry",
                one_group(&[id, id], &[('c', &[id])]),
            ),
            (
                "consumer holds an id not pending",
                one_group(&[], &[('c', &[id])]),
            ),
            (
                "consumer lists an id twice",
                one_group(&[id], &[('c', &[id, id])]),
            ),
            (
                "two consumers hold an id",
                one_group(&[id], &[('c', &[id]), ('d', &[id])]),
            ),
            (
                "repeated consumer",
                one_group(&[], &[('c', &[]), ('c', &[])]),
            ),
            (
                "a Redis 7.2 stream (type 21)",
                format!("1501{NODE_KEY}{NODE_LP}{STATE}00"),
            ),
            ("cut before the groups", simple_body("", "", STATE)),
            ("6.x stream cut short", format!("0f01{NODE_KEY}{NODE_LP}03")),
        ];
        // redis-server 7.0.15 loads these: it checks no more than listpack headers unless
        // `sanitize-dump-payload yes`, which refuses the first four too. docdb refuses them
        // all: it keeps each pending entry with its consumer, and the length apart from
        // the entries, which are stored by id.
        let trusted_by_redis = [
            ("pending entry without consumer", one_group(&[id], &[])),
            (
                "wrong lp-count",
                simple_body("8176020401", "8176020501", &format!("{STATE}00")),
            ),
            (
                "wrong master count",
                simple_body("0003010001", "0002010001", &format!("{STATE}00")),
            ),
            (
                "master terminator 1",
                simple_body("8166020001", "8166020101", &format!("{STATE}00")),
            ),
            (
                "length above the entries",
                simple_body("", "", &format!("04{}00", &STATE[2..])),
            ),
            (
                "an id repeated",
                simple_body(
                    "020100010101817702",
                    "020100010001817702",
                    &format!("{STATE}00"),
                ),
            ),
        ];
        for (what, body) in refused.into_iter().chain(trusted_by_redis) {
            assert_ne!(body, simple_body("", "", &format!("{STATE}00")), "{what}");
            let result = decode_payload(&framed(hex(&body)));
            assert!(
                matches!(result, Err(RdbError::BadFormat(_))),
                "{what}: {result:?}"
            );
        }
        // The same bodies with nothing wrong decode.
        let sound = [
            simple_body("", "", &format!("{STATE}00")),
            one_group(&[id], &[('c', &[id]), ('d', &[])]),
        ];
        for body in sound {
            assert!(decode_payload(&framed(hex(&body))).is_ok(), "{body}");
        }
    }

    #[test]
    fn streams_of_redis_6_decode_as_redis_7_loads_them() {
        // RDB_TYPE_STREAM_LISTPACKS (6.x): the simple stream without first id, deleted id
        // and entries added, with one group "g" (no entries read) of last id `ms-seq`.
        // redis-server 7.0.15 restored each, and XINFO GROUPS gave these entries-read
        // (nil as -1), XINFO STREAM entries-added 3 and max-deleted-entry-id 0-0.
        for (ms, seq, entries_read) in [(2, 0, 3), (0, 0, 0), (1, 1, 1), (1, 2, -1), (5, 0, -1)] {
            let body = format!("0f01{NODE_KEY}{NODE_LP}030200010167{ms:02x}{seq:02x}0000");
            let Ok(RdbValue::Stream(stream)) = decode_payload(&framed(hex(&body))) else {
                panic!("{body}");
            };
            let simple = redis_stream_dumps()
                .into_iter()
                .find(|(_, what, _, _)| *what == "simple")
                .expect("simple stream")
                .2;
            let want = RdbStream {
                groups: vec![group("g", sid(ms, seq), entries_read)],
                ..simple
            };
            assert_eq!(stream, want, "{ms}-{seq}");
        }
        // An empty one: Redis records the largest id as its first (recorded-first-entry-id).
        let empty = decode_payload(&framed(hex("0f0000000000")));
        let want = RdbStream {
            first_id: StreamId::MAX,
            ..RdbStream::default()
        };
        assert_eq!(empty, Ok(RdbValue::Stream(want)));
    }

    /// Strings of every listpack and RDB encoding: short, integers, long and repetitive.
    fn any_bytes() -> impl Strategy<Value = Vec<u8>> + Clone {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..40),
            (-100_000i64..100_000).prop_map(|n| n.to_string().into_bytes()),
            any::<i64>().prop_map(|n| n.to_string().into_bytes()),
            (0usize..3000, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
            proptest::collection::vec(0u8..4, 0..300),
        ]
    }

    /// Values as docdb holds them: unique members and fields, no NaN scores, no empty
    /// collections.
    fn any_value() -> impl Strategy<Value = RdbValue> {
        let bytes = any_bytes();
        let score = prop_oneof![
            any::<f64>().prop_filter("no NaN", |s| !s.is_nan()),
            (-1000i64..1000).prop_map(|n| n as f64),
        ];
        let unique = |set: std::collections::BTreeSet<Vec<u8>>| set.into_iter().collect();
        let stream = any_stream(bytes.clone()).prop_map(RdbValue::Stream);
        prop_oneof![
            stream,
            bytes.clone().prop_map(RdbValue::String),
            proptest::collection::vec(bytes.clone(), 1..60).prop_map(RdbValue::List),
            proptest::collection::btree_set(bytes.clone(), 1..700)
                .prop_map(move |s| RdbValue::Set(unique(s))),
            proptest::collection::btree_map(bytes.clone(), score, 1..200)
                .prop_map(|m| RdbValue::SortedSet(m.into_iter().collect())),
            proptest::collection::btree_map(bytes.clone(), bytes, 1..600)
                .prop_map(|m| RdbValue::Hash(m.into_iter().collect())),
        ]
    }

    /// Ids near one another (small deltas) or anywhere (wrapping deltas).
    fn any_id() -> impl Strategy<Value = StreamId> {
        prop_oneof![
            (0u64..20, 0u64..5).prop_map(|(ms, seq)| StreamId::new(ms, seq)),
            (any::<u64>(), any::<u64>()).prop_map(|(ms, seq)| StreamId::new(ms, seq)),
        ]
    }

    /// Streams as docdb holds them: entries by id (often with the same fields, so that
    /// nodes share them), and groups whose pending entries each belong to a consumer.
    fn any_stream(
        bytes: impl Strategy<Value = Vec<u8>> + Clone,
    ) -> impl Strategy<Value = RdbStream> {
        let field = prop_oneof![Just(b("f")), Just(b("g")), bytes.clone()];
        let pairs = proptest::collection::vec((field, bytes.clone()), 0..4);
        let entries = proptest::collection::btree_map(any_id(), pairs, 0..300);
        let pending = proptest::collection::btree_map(
            any_id(),
            (any::<u64>(), any::<u64>(), any::<usize>()),
            0..6,
        );
        let consumers = proptest::collection::btree_map(bytes.clone(), any::<u64>(), 0..4);
        let group = (any_id(), -1i64..1000, pending, consumers).prop_map(
            |(last_id, entries_read, pending, consumers)| {
                let names: Vec<Vec<u8>> = consumers.keys().cloned().collect();
                let pending = pending
                    .into_iter()
                    .filter(|_| !names.is_empty())
                    .map(|(id, (delivery_time, delivery_count, owner))| RdbPending {
                        id,
                        delivery_time,
                        delivery_count,
                        consumer: names[owner % names.len()].clone(),
                    })
                    .collect();
                let consumers = consumers
                    .into_iter()
                    .map(|(name, seen_time)| RdbConsumer { name, seen_time })
                    .collect();
                (last_id, entries_read, pending, consumers)
            },
        );
        let groups = proptest::collection::btree_map(bytes, group, 0..3);
        (entries, groups, any_id(), any_id(), any::<u64>()).prop_map(
            |(entries, groups, last_id, max_deleted_id, entries_added)| {
                let entries: Vec<StreamEntry> = entries.into_iter().collect();
                RdbStream {
                    length: entries.len() as u64,
                    first_id: entries.first().map_or(StreamId::MIN, |e| e.0),
                    last_id,
                    max_deleted_id,
                    entries_added,
                    entries,
                    groups: groups
                        .into_iter()
                        .map(
                            |(name, (last_id, entries_read, pending, consumers))| RdbGroup {
                                name,
                                last_id,
                                entries_read,
                                pending,
                                consumers,
                            },
                        )
                        .collect(),
                }
            },
        )
    }

    #[test]
    fn function_payloads_are_redis_ones() {
        // FUNCTION DUMP of redis-server 7.0.15 with no library: the footer alone.
        assert_eq!(encode_functions([]), framed(Vec::new()));
        // A library's code as a string after opcode 245 (short: stored verbatim).
        let code = b"#!lua name=x";
        let payload = encode_functions([&code[..]]);
        assert_eq!(&payload[..2], &[245, 12]);
        assert_eq!(&payload[2..14], code);
        assert_eq!(decode_functions(&payload), Ok(vec![code.to_vec()]));
        let bad = [
            (&[0u8][..], "given type is not a function"),
            (&[245], "Failed loading library payload"),
        ];
        for (body, error) in bad {
            assert_eq!(decode_functions(&framed(body.to_vec())), Err(error));
        }
        assert_eq!(
            decode_functions(b"junk"),
            Err("DUMP payload version or checksum are wrong")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn values_roundtrip(value in any_value()) {
            let payload = encode_payload(&value);
            let decoded = decode_payload(&payload).expect("own payload");
            prop_assert_eq!(canonical(decoded), canonical(value));
        }

        #[test]
        fn lzf_roundtrips(input in proptest::collection::vec(0u8..6, 0..5000)) {
            let mut lzf = Lzf::default();
            if let Some(packed) = lzf.compress(&input, input.len()) {
                prop_assert_eq!(lzf_decompress(&packed, input.len()), Some(input));
            }
        }

        #[test]
        fn random_payloads_never_panic(bytes: Vec<u8>) {
            let _ = decode_payload(&bytes);
        }

        #[test]
        fn random_bodies_never_panic(kind in 0u8..24, body: Vec<u8>) {
            // A valid footer, so that the body's decoders run.
            let _ = decode_payload(&framed([&[kind][..], &body].concat()));
        }

        #[test]
        fn streams_roundtrip(stream in any_stream(any_bytes())) {
            let value = RdbValue::Stream(stream);
            let decoded = decode_payload(&encode_payload(&value)).expect("own payload");
            prop_assert_eq!(canonical(decoded), canonical(value));
        }

        #[test]
        fn damaged_streams_never_panic(
            stream in any_stream(any_bytes()),
            at: usize,
            flip: u8,
            cut: bool,
        ) {
            // A byte changed, or the body cut there, the CRC then recomputed. What still
            // decodes must encode to a payload that decodes (as the fuzz target checks).
            let payload = encode_payload(&RdbValue::Stream(stream));
            let mut body = payload[..payload.len() - 10].to_vec();
            let at = at % body.len();
            if cut {
                body.truncate(at);
            } else {
                body[at] ^= flip.max(1);
            }
            if let Ok(value) = decode_payload(&framed(body)) {
                prop_assert!(decode_payload(&encode_payload(&value)).is_ok());
            }
        }

        #[test]
        fn function_payloads_roundtrip(codes in proptest::collection::vec(any_bytes(), 0..4)) {
            let payload = encode_functions(codes.iter().map(Vec::as_slice));
            prop_assert_eq!(decode_functions(&payload), Ok(codes));
        }

        #[test]
        fn random_function_bodies_never_panic(body: Vec<u8>) {
            let _ = decode_functions(&body);
            let _ = decode_functions(&framed(body));
        }

        #[test]
        fn damaged_payloads_never_panic(value in any_value(), at: usize, flip: u8) {
            // A byte of a real payload changed, the CRC then recomputed.
            let payload = encode_payload(&value);
            let mut body = payload[..payload.len() - 10].to_vec();
            let at = at % body.len();
            body[at] ^= flip.max(1);
            let _ = decode_payload(&framed(body));
        }
    }
}
