//! Redis's serialized value format (RDB version 10, as DUMP and RESTORE carry it).
//!
//! A payload is one object (its RDB type byte, then its body), the RDB version (2 bytes,
//! little-endian) and a CRC-64 of all before it (8 bytes, little-endian). [`encode_payload`]
//! writes what redis-server 7.0's DUMP writes for a value under its default settings
//! (`rdbcompression yes`, listpack and intset thresholds, `list-max-listpack-size -2`), so
//! that the bytes match when the element order does. [`decode_payload`] reads every
//! encoding Redis 7.0 loads for strings, lists, sets, sorted sets and hashes, the old ones
//! (zipmaps, ziplists, quicklists of ziplists) included, and never panics on bad bytes.

use std::collections::HashSet;

use crate::number::{format_double, parse_f64, parse_i64};

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
    /// A type docdb has no model for (streams).
    #[error("Bad data format: docdb does not support {0} values")]
    Unsupported(&'static str),
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
        let len = len as u64;
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
        let start = self.bytes.len();
        match parse_i64(item) {
            Some(n) => lp_int(&mut self.bytes, n),
            None => lp_str(&mut self.bytes, item),
        }
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
        TYPE_STREAM_LISTPACKS | TYPE_STREAM_LISTPACKS_2 | TYPE_STREAM_LISTPACKS_3 => {
            return Err(RdbError::Unsupported("stream"));
        }
        // Redis refuses these too unless the module that wrote them is loaded.
        TYPE_MODULE_PRE_GA | TYPE_MODULE_2 => return bad("module value"),
        _ => return bad("unknown object type"),
    })
}

/// Refuses what Redis refuses to load: empty collections, repeated members or fields,
/// NaN scores.
fn validate(value: RdbValue) -> Result<RdbValue> {
    let unique = match &value {
        RdbValue::String(_) => true,
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
        ] {
            let result = decode_payload(&framed(hex(body)));
            assert!(
                matches!(result, Err(RdbError::BadFormat(_))),
                "{body}: {result:?}"
            );
        }
        assert_eq!(
            decode_payload(&framed(hex("0f00"))),
            Err(RdbError::Unsupported("stream"))
        );
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

    /// Values as docdb holds them: unique members and fields, no NaN scores, no empty
    /// collections.
    fn any_value() -> impl Strategy<Value = RdbValue> {
        let bytes = prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..40),
            (-100_000i64..100_000).prop_map(|n| n.to_string().into_bytes()),
            any::<i64>().prop_map(|n| n.to_string().into_bytes()),
            (0usize..3000, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
            proptest::collection::vec(0u8..4, 0..300),
        ];
        let score = prop_oneof![
            any::<f64>().prop_filter("no NaN", |s| !s.is_nan()),
            (-1000i64..1000).prop_map(|n| n as f64),
        ];
        let unique = |set: std::collections::BTreeSet<Vec<u8>>| set.into_iter().collect();
        prop_oneof![
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
