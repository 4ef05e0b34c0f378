//! Redis streams on DocDB: a docdb extension of format.md §10 (YugabyteDB's YEDIS has no
//! streams, and its value types leave `*` unused).
//!
//! A stream is one document whose root is the `*` init marker ([`RedisType::Stream`]).
//! Under the root:
//!
//! | subkey | value |
//! |---|---|
//! | `%` | the stream's state, [`Meta`] |
//! | `UInt32(0)` | the front: no live entry has a smaller id (a [`StreamId`]; `0-0` when absent) |
//! | `<ms seq>` (a frozen pair of `UInt64`s: entry ids sort as Redis orders them) | an entry's field/value pairs ([`encode_fields`]) |
//! | `UInt32(1)`, group name | a consumer group's state, [`Group`] |
//! | `UInt32(2)`, group name, `<ms seq>` | an entry pending in that group, [`Pending`] |
//! | `UInt32(3)`, group name, consumer name | a consumer, [`Consumer`] |
//!
//! Each record is a string of fixed-width big-endian fields; the decoders refuse anything else
//! with an error rather than a panic. XADD writes one entry and the state; XGROUP DESTROY is
//! three tombstones.
//!
//! Trimming and XDEL leave tombstones at the front of the entries, which a read from the
//! first id would otherwise step over one by one until compaction drops them (not before the
//! history DOCDB.ASOF reads is past): [`StreamReads::entries`] starts at the front instead.
//! The commands that delete the first entries move the front up ([`StreamWrites::set_front`]);
//! XSETID moves it back down when it lets smaller ids in.

use std::fmt;

use docdb::reader::ChildRange;
use dockv::KeyEntryValue;
use dockv::value::{PrimitiveValue, Value};
use engine::Engine;

use crate::error::{CmdError, CmdResult};
use crate::store::{self, Reads, RedisType};

/// A stream entry id: milliseconds, then a sequence number within them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// The milliseconds part.
    pub ms: u64,
    /// The sequence part.
    pub seq: u64,
}

impl StreamId {
    /// `0-0`, below every id an entry can have.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest id.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// An id.
    pub fn new(ms: u64, seq: u64) -> Self {
        StreamId { ms, seq }
    }

    /// The next id up (`None` past [`Self::MAX`]).
    pub fn next(self) -> Option<Self> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => Some(StreamId {
                ms: self.ms.checked_add(1)?,
                seq: 0,
            }),
        }
    }

    /// The next id down (`None` below [`Self::MIN`]).
    pub fn prev(self) -> Option<Self> {
        match self.seq.checked_sub(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => Some(StreamId {
                ms: self.ms.checked_sub(1)?,
                seq: u64::MAX,
            }),
        }
    }

    /// The id as Redis prints it, `ms-seq`.
    pub fn to_bytes(self) -> Vec<u8> {
        self.to_string().into_bytes()
    }

    /// The subkey of the entry with this id.
    pub fn subkey(self) -> KeyEntryValue {
        KeyEntryValue::frozen(vec![
            KeyEntryValue::uint64(self.ms),
            KeyEntryValue::uint64(self.seq),
        ])
    }

    /// The id of an entry subkey (`None` for any other subkey).
    pub fn from_subkey(subkey: &KeyEntryValue) -> Option<Self> {
        match subkey {
            KeyEntryValue::Frozen(parts, _) => match parts.as_slice() {
                [KeyEntryValue::UInt64(ms, _), KeyEntryValue::UInt64(seq, _)] => {
                    Some(StreamId::new(*ms, *seq))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn write(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ms.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
    }

    fn read(fields: &mut Fields<'_>) -> CmdResult<Self> {
        Ok(StreamId::new(fields.u64()?, fields.u64()?))
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// How [`parse_id`] reads an id argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSyntax {
    /// The sequence an id given as `ms` alone gets (`None`: `ms` alone is refused).
    pub missing_seq: Option<u64>,
    /// Whether `-` (`0-0`) and `+` (the largest id) are accepted.
    pub special: bool,
    /// Whether `ms-*` is accepted (XADD): the sequence is then left for the caller to pick.
    pub auto_seq: bool,
}

/// An id argument: an exact id, or `ms-*` (only with [`IdSyntax::auto_seq`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParsedId {
    /// `ms-seq` (or `ms`, `-`, `+` as the syntax allows).
    Exact(StreamId),
    /// `ms-*`: a sequence is to be picked.
    AutoSeq(u64),
}

/// The error Redis gives for an id argument it cannot read.
pub fn invalid_id() -> CmdError {
    CmdError::err("Invalid stream ID specified as stream command argument")
}

/// Redis's `streamParseStrictIDOrReply`: no `-`, `+` or `ms-*`; `ms` alone is `ms-0`.
pub const STRICT: IdSyntax = IdSyntax {
    missing_seq: Some(0),
    special: false,
    auto_seq: false,
};

/// An id argument that must be an exact id in `syntax` (never `ms-*`).
pub fn exact_id(arg: &[u8], syntax: IdSyntax) -> CmdResult<StreamId> {
    match parse_id(arg, syntax)? {
        ParsedId::Exact(id) => Ok(id),
        ParsedId::AutoSeq(_) => Err(invalid_id()),
    }
}

/// One bound of a range (XRANGE, XREVRANGE, XPENDING, XAUTOCLAIM) as Redis's
/// `streamParseIntervalIDOrReply` reads it, made inclusive: `-`, `+`, `ms` (the missing
/// sequence is 0 for the start, the largest for the end), `ms-seq`, or `(` and a strict id
/// for an exclusive bound, stepped past. `end` says which bound it is.
pub fn range_bound(arg: &[u8], end: bool) -> CmdResult<StreamId> {
    let missing_seq = Some(if end { u64::MAX } else { 0 });
    if let [b'(', strict @ ..] = arg
        && !strict.is_empty()
    {
        let id = exact_id(
            strict,
            IdSyntax {
                missing_seq,
                ..STRICT
            },
        )?;
        let stepped = if end { id.prev() } else { id.next() };
        return stepped.ok_or_else(|| {
            CmdError::err(if end {
                "invalid end ID for the interval"
            } else {
                "invalid start ID for the interval"
            })
        });
    }
    exact_id(
        arg,
        IdSyntax {
            missing_seq,
            special: true,
            auto_seq: false,
        },
    )
}

/// Reads an id argument as Redis's `streamGenericParseIDOrReply` does: `ms-seq` with both
/// parts unsigned 64-bit numbers as `string2ull` reads them ([`parse_u64`]), or the forms
/// `syntax` allows. Redis reads the argument as a C string: it ends at its first NUL byte.
pub fn parse_id(arg: &[u8], syntax: IdSyntax) -> CmdResult<ParsedId> {
    if arg.len() > 127 {
        return Err(invalid_id());
    }
    let arg = c_string(arg);
    if syntax.special {
        match arg {
            b"-" => return Ok(ParsedId::Exact(StreamId::MIN)),
            b"+" => return Ok(ParsedId::Exact(StreamId::MAX)),
            _ => {}
        }
    }
    let (ms, seq) = match arg.iter().position(|&b| b == b'-') {
        Some(dash) => (&arg[..dash], Some(&arg[dash + 1..])),
        None => (arg, None),
    };
    let ms = parse_u64(ms).ok_or_else(invalid_id)?;
    let seq = match seq {
        Some(b"*") if syntax.auto_seq => return Ok(ParsedId::AutoSeq(ms)),
        Some(seq) => parse_u64(seq).ok_or_else(invalid_id)?,
        None => syntax.missing_seq.ok_or_else(invalid_id)?,
    };
    Ok(ParsedId::Exact(StreamId::new(ms, seq)))
}

/// `arg` up to its first NUL byte, as C's string functions see it.
pub fn c_string(arg: &[u8]) -> &[u8] {
    arg.iter()
        .position(|&b| b == 0)
        .map_or(arg, |nul| &arg[..nul])
}

/// An unsigned number as Redis's `string2ull` reads it: an integer in `string2ll`'s strict
/// form (a negative one refused), or else whatever C's `strtoull` reads whole in base 10:
/// leading white space, an optional `+` or `-` (which negates modulo 2^64), digits, within
/// 64 bits. So ` 5`, `+5` and `007` are 5, and ` -1` is 2^64 - 1.
fn parse_u64(text: &[u8]) -> Option<u64> {
    if let Some(n) = crate::number::parse_i64(text) {
        return u64::try_from(n).ok();
    }
    // C's `isspace`: Rust's ASCII white space and the vertical tab.
    let start = text
        .iter()
        .position(|&b| !(b.is_ascii_whitespace() || b == 0x0b))
        .unwrap_or(text.len());
    let rest = &text[start..];
    let (negative, digits) = match rest.split_first() {
        Some((b'-', digits)) => (true, digits),
        Some((b'+', digits)) => (false, digits),
        _ => (false, rest),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut value: u64 = 0;
    for &d in digits {
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// A stream's state, kept at its `%` subkey.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meta {
    /// Entries in the stream now.
    pub length: u64,
    /// The largest id ever added (or set by XSETID): new ids must be above it.
    pub last_id: StreamId,
    /// The largest id ever deleted (XDEL, trimming).
    pub max_deleted_id: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
}

impl Meta {
    const LEN: usize = 48;

    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::LEN);
        out.extend_from_slice(&self.length.to_be_bytes());
        self.last_id.write(&mut out);
        self.max_deleted_id.write(&mut out);
        out.extend_from_slice(&self.entries_added.to_be_bytes());
        out
    }

    /// Reads a record; damaged bytes are an error.
    pub fn decode(bytes: &[u8]) -> CmdResult<Self> {
        let mut fields = Fields::exact(bytes, Self::LEN, "stream state")?;
        Ok(Meta {
            length: fields.u64()?,
            last_id: StreamId::read(&mut fields)?,
            max_deleted_id: StreamId::read(&mut fields)?,
            entries_added: fields.u64()?,
        })
    }
}

/// A consumer group's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Group {
    /// The last id delivered to any of its consumers (`>` reads after it).
    pub last_delivered: StreamId,
    /// How many entries its consumers have read (Redis's `entries_read`), or `-1` when that
    /// is not known.
    pub entries_read: i64,
}

impl Group {
    const LEN: usize = 24;

    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::LEN);
        self.last_delivered.write(&mut out);
        out.extend_from_slice(&self.entries_read.to_be_bytes());
        out
    }

    /// Reads a record; damaged bytes are an error.
    pub fn decode(bytes: &[u8]) -> CmdResult<Self> {
        let mut fields = Fields::exact(bytes, Self::LEN, "stream group")?;
        Ok(Group {
            last_delivered: StreamId::read(&mut fields)?,
            entries_read: fields.u64()? as i64,
        })
    }
}

/// An entry delivered to a group's consumer and not yet acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The consumer that has it.
    pub consumer: Vec<u8>,
    /// When it was last delivered, in Unix milliseconds.
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
}

impl Pending {
    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.consumer.len());
        out.extend_from_slice(&self.delivery_time.to_be_bytes());
        out.extend_from_slice(&self.delivery_count.to_be_bytes());
        out.extend_from_slice(&self.consumer);
        out
    }

    /// Reads a record; damaged bytes are an error.
    pub fn decode(bytes: &[u8]) -> CmdResult<Self> {
        let mut fields = Fields::at_least(bytes, 16, "stream pending entry")?;
        Ok(Pending {
            delivery_time: fields.u64()?,
            delivery_count: fields.u64()?,
            consumer: fields.rest().to_vec(),
        })
    }
}

/// A consumer of a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Consumer {
    /// When it last read or claimed, in Unix milliseconds (XINFO CONSUMERS' idle time).
    pub seen_time: u64,
}

impl Consumer {
    const LEN: usize = 8;

    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        self.seen_time.to_be_bytes().to_vec()
    }

    /// Reads a record; damaged bytes are an error.
    pub fn decode(bytes: &[u8]) -> CmdResult<Self> {
        let mut fields = Fields::exact(bytes, Self::LEN, "stream consumer")?;
        Ok(Consumer {
            seen_time: fields.u64()?,
        })
    }
}

/// Reads fixed-width fields off a record, failing (never panicking) when it is short.
struct Fields<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Fields<'a> {
    fn exact(bytes: &'a [u8], len: usize, what: &'static str) -> CmdResult<Self> {
        if bytes.len() != len {
            return Err(corrupt(what));
        }
        Ok(Fields { bytes, what })
    }

    fn at_least(bytes: &'a [u8], len: usize, what: &'static str) -> CmdResult<Self> {
        if bytes.len() < len {
            return Err(corrupt(what));
        }
        Ok(Fields { bytes, what })
    }

    fn take(&mut self, n: usize) -> CmdResult<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(corrupt(self.what));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u64(&mut self) -> CmdResult<u64> {
        let mut word = [0u8; 8];
        word.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(word))
    }

    fn u32(&mut self) -> CmdResult<u32> {
        let mut word = [0u8; 4];
        word.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(word))
    }

    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }
}

fn corrupt(what: &str) -> CmdError {
    CmdError::err(format!("corrupt {what} record"))
}

/// An entry's record: the number of fields and values, then each as a 4-byte length and its
/// bytes. `pairs` is the flat `field value field value ...` list.
pub fn encode_fields(pairs: &[Vec<u8>]) -> Vec<u8> {
    let size = 4 + pairs.iter().map(|p| 4 + p.len()).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&(pairs.len() as u32).to_be_bytes());
    for item in pairs {
        out.extend_from_slice(&(item.len() as u32).to_be_bytes());
        out.extend_from_slice(item);
    }
    out
}

/// The flat `field value ...` list of an entry's record.
pub fn decode_fields(bytes: &[u8]) -> CmdResult<Vec<Vec<u8>>> {
    let mut fields = Fields::at_least(bytes, 4, "stream entry")?;
    let count = fields.u32()? as usize;
    // Every item takes at least its 4-byte length: a count beyond that is damage, and must
    // not size an allocation.
    if count > fields.bytes.len() / 4 {
        return Err(corrupt("stream entry"));
    }
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        let len = fields.u32()? as usize;
        items.push(fields.take(len)?.to_vec());
    }
    if !fields.bytes.is_empty() {
        return Err(corrupt("stream entry"));
    }
    Ok(items)
}

/// Where a record of a group sits: `UInt32(n)` under the root, then the group's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GroupPart {
    Groups = 1,
    Pending = 2,
    Consumers = 3,
}

fn group_part(dk: &[u8], part: GroupPart, group: &[u8]) -> Vec<u8> {
    store::path(
        dk,
        &[
            KeyEntryValue::uint32(part as u32),
            KeyEntryValue::string(group),
        ],
    )
}

/// The path of the stream's front ([`StreamWrites::set_front`]).
pub fn front_path(dk: &[u8]) -> Vec<u8> {
    store::path(dk, &[KeyEntryValue::uint32(0)])
}

/// The path of the stream's state.
pub fn meta_path(dk: &[u8]) -> Vec<u8> {
    store::path(dk, &[KeyEntryValue::Counter])
}

/// The path of the entry `id`.
pub fn entry_path(dk: &[u8], id: StreamId) -> Vec<u8> {
    store::path(dk, &[id.subkey()])
}

/// The path of group `group`'s state; its subkeys are not used.
pub fn group_path(dk: &[u8], group: &[u8]) -> Vec<u8> {
    group_part(dk, GroupPart::Groups, group)
}

/// The path under which group `group`'s pending entries sit, by id.
pub fn pending_root(dk: &[u8], group: &[u8]) -> Vec<u8> {
    group_part(dk, GroupPart::Pending, group)
}

/// The path of entry `id` pending in group `group`.
pub fn pending_path(dk: &[u8], group: &[u8], id: StreamId) -> Vec<u8> {
    let mut path = pending_root(dk, group);
    id.subkey().encode_to(&mut path);
    path
}

/// The path under which group `group`'s consumers sit, by name.
pub fn consumers_root(dk: &[u8], group: &[u8]) -> Vec<u8> {
    group_part(dk, GroupPart::Consumers, group)
}

/// The path of consumer `consumer` of group `group`.
pub fn consumer_path(dk: &[u8], group: &[u8], consumer: &[u8]) -> Vec<u8> {
    let mut path = consumers_root(dk, group);
    KeyEntryValue::string(consumer).encode_to(&mut path);
    path
}

/// The ids from `from` to `to` (both inclusive) as child bounds of a path whose children are
/// ids (the stream's root, or a group's pending root), `reverse` for the largest first.
pub fn id_range(from: StreamId, to: StreamId, reverse: bool, limit: Option<usize>) -> ChildRange {
    let mut upper = to.subkey().encoded();
    // Past every key that starts with `to`'s subkey (its hybrid times).
    upper.push(0xFF);
    ChildRange {
        lower: Some(from.subkey().encoded()),
        upper: Some(upper),
        reverse,
        limit,
    }
}

/// Every child of a path whose children are strings (group names, consumer names).
fn all_named() -> ChildRange {
    let string = KeyEntryValue::string(Vec::<u8>::new()).encoded();
    let tag = string.first().copied().unwrap_or(b'S');
    ChildRange {
        lower: Some(vec![tag]),
        upper: Some(vec![tag + 1]),
        reverse: false,
        limit: None,
    }
}

fn string_payload(payload: PrimitiveValue, what: &str) -> CmdResult<Vec<u8>> {
    match payload {
        PrimitiveValue::String(bytes) => Ok(bytes),
        _ => Err(corrupt(what)),
    }
}

fn leaf_payload(doc: docdb::SubDocument, what: &str) -> CmdResult<Vec<u8>> {
    match doc {
        docdb::SubDocument::Primitive(value) => string_payload(value, what),
        _ => Err(corrupt(what)),
    }
}

/// Reads of one stream at one time, for commands: its state, entries, groups, pending entries
/// and consumers. The key's type is checked by the caller ([`Reads::typed`]).
pub struct StreamReads<'r, 's, 'c, E: Engine> {
    reads: &'r mut Reads<'s, 'c, E>,
    dk: &'r [u8],
}

impl<'r, 's, 'c, E: Engine> StreamReads<'r, 's, 'c, E> {
    /// Reads of the stream at `dk`.
    pub fn new(reads: &'r mut Reads<'s, 'c, E>, dk: &'r [u8]) -> Self {
        StreamReads { reads, dk }
    }

    /// The stream's state; the empty state when it has none (a key of another type, or
    /// none: check the type first).
    pub fn meta(&mut self) -> CmdResult<Meta> {
        match self.reads.child_record(&meta_path(self.dk))? {
            Some(record) => Meta::decode(&string_payload(record.payload, "stream state")?),
            None => Ok(Meta::default()),
        }
    }

    /// Entries with ids from `from` to `to` (inclusive), oldest first or, `reverse`, newest
    /// first, at most `limit`: each id with its flat `field value ...` list.
    pub fn entries(
        &mut self,
        from: StreamId,
        to: StreamId,
        reverse: bool,
        limit: Option<usize>,
    ) -> CmdResult<Vec<(StreamId, Vec<Vec<u8>>)>> {
        if from > to || limit == Some(0) {
            return Ok(Vec::new());
        }
        // Past the tombstones in front of the first entry.
        let from = from.max(self.front()?);
        if from > to {
            return Ok(Vec::new());
        }
        let range = id_range(from, to, reverse, limit);
        let mut out = Vec::new();
        for (subkey, doc) in self.reads.children(self.dk, &range)? {
            if let Some(id) = StreamId::from_subkey(&subkey) {
                out.push((id, decode_fields(&leaf_payload(doc, "stream entry")?)?));
            }
        }
        Ok(out)
    }

    /// The entry `id`'s fields and values, if it is there.
    pub fn entry(&mut self, id: StreamId) -> CmdResult<Option<Vec<Vec<u8>>>> {
        match self.reads.child_record(&entry_path(self.dk, id))? {
            Some(record) => Ok(Some(decode_fields(&string_payload(
                record.payload,
                "stream entry",
            )?)?)),
            None => Ok(None),
        }
    }

    /// The stream's front: no live entry has a smaller id (`0-0` when none was recorded).
    pub fn front(&mut self) -> CmdResult<StreamId> {
        match self.reads.child_record(&front_path(self.dk))? {
            Some(record) => {
                let bytes = string_payload(record.payload, "stream front")?;
                StreamId::read(&mut Fields::exact(&bytes, 16, "stream front")?)
            }
            None => Ok(StreamId::MIN),
        }
    }

    /// The first (or, `last`, the last) entry's id, if the stream has entries.
    pub fn edge_id(&mut self, last: bool) -> CmdResult<Option<StreamId>> {
        let from = if last { StreamId::MIN } else { self.front()? };
        let range = id_range(from, StreamId::MAX, last, Some(1));
        Ok(self
            .reads
            .children(self.dk, &range)?
            .first()
            .and_then(|(subkey, _)| StreamId::from_subkey(subkey)))
    }

    /// Group `group`'s state, if the group exists.
    pub fn group(&mut self, group: &[u8]) -> CmdResult<Option<Group>> {
        match self.reads.child_record(&group_path(self.dk, group))? {
            Some(record) => Ok(Some(Group::decode(&string_payload(
                record.payload,
                "stream group",
            )?)?)),
            None => Ok(None),
        }
    }

    /// Every group, by name.
    pub fn groups(&mut self) -> CmdResult<Vec<(Vec<u8>, Group)>> {
        let root = store::path(self.dk, &[KeyEntryValue::uint32(GroupPart::Groups as u32)]);
        let mut out = Vec::new();
        for (subkey, doc) in self.reads.children(&root, &all_named())? {
            if let KeyEntryValue::String(name, _) = subkey {
                out.push((name, Group::decode(&leaf_payload(doc, "stream group")?)?));
            }
        }
        Ok(out)
    }

    /// Group `group`'s pending entries with ids from `from` to `to` (inclusive), in id order
    /// (or reversed), at most `limit`.
    pub fn pending(
        &mut self,
        group: &[u8],
        from: StreamId,
        to: StreamId,
        reverse: bool,
        limit: Option<usize>,
    ) -> CmdResult<Vec<(StreamId, Pending)>> {
        if from > to || limit == Some(0) {
            return Ok(Vec::new());
        }
        let root = pending_root(self.dk, group);
        let range = id_range(from, to, reverse, limit);
        let mut out = Vec::new();
        for (subkey, doc) in self.reads.children(&root, &range)? {
            if let Some(id) = StreamId::from_subkey(&subkey) {
                out.push((
                    id,
                    Pending::decode(&leaf_payload(doc, "stream pending entry")?)?,
                ));
            }
        }
        Ok(out)
    }

    /// Entry `id` pending in group `group`, if it is.
    pub fn pending_entry(&mut self, group: &[u8], id: StreamId) -> CmdResult<Option<Pending>> {
        match self.reads.child_record(&pending_path(self.dk, group, id))? {
            Some(record) => Ok(Some(Pending::decode(&string_payload(
                record.payload,
                "stream pending entry",
            )?)?)),
            None => Ok(None),
        }
    }

    /// Consumer `consumer` of group `group`, if it exists.
    pub fn consumer(&mut self, group: &[u8], consumer: &[u8]) -> CmdResult<Option<Consumer>> {
        match self
            .reads
            .child_record(&consumer_path(self.dk, group, consumer))?
        {
            Some(record) => Ok(Some(Consumer::decode(&string_payload(
                record.payload,
                "stream consumer",
            )?)?)),
            None => Ok(None),
        }
    }

    /// Every consumer of group `group`, by name.
    pub fn consumers(&mut self, group: &[u8]) -> CmdResult<Vec<(Vec<u8>, Consumer)>> {
        let root = consumers_root(self.dk, group);
        let mut out = Vec::new();
        for (subkey, doc) in self.reads.children(&root, &all_named())? {
            if let KeyEntryValue::String(name, _) = subkey {
                out.push((
                    name,
                    Consumer::decode(&leaf_payload(doc, "stream consumer")?)?,
                ));
            }
        }
        Ok(out)
    }
}

/// Writes to one stream in a command's batch. Records are whole values: each write replaces
/// what was at its path.
pub struct StreamWrites<'b, 'w, E: Engine> {
    batch: &'b mut docdb::DocWriteBatch<'w, E>,
    dk: &'b [u8],
}

impl<'b, 'w, E: Engine> StreamWrites<'b, 'w, E> {
    /// Writes to the stream at `dk`.
    pub fn new(batch: &'b mut docdb::DocWriteBatch<'w, E>, dk: &'b [u8]) -> Self {
        StreamWrites { batch, dk }
    }

    fn put(&mut self, path: Vec<u8>, bytes: Vec<u8>) -> CmdResult<()> {
        self.batch
            .set_encoded_path(&path, Value::new(PrimitiveValue::String(bytes)))?;
        Ok(())
    }

    fn delete(&mut self, path: Vec<u8>) -> CmdResult<()> {
        self.batch.set_encoded_path(&path, Value::tombstone())?;
        Ok(())
    }

    /// Makes the stream's root when the key does not exist yet (`exists` false).
    pub fn create_root(&mut self, exists: bool) -> CmdResult<()> {
        if !exists && let Some(marker) = RedisType::Stream.marker() {
            self.batch.set_encoded_path(self.dk, Value::new(marker))?;
        }
        Ok(())
    }

    /// Records that no live entry has an id below `front` (after the first entries were
    /// deleted; or, to let smaller ids in again, a lower one).
    pub fn set_front(&mut self, front: StreamId) -> CmdResult<()> {
        let mut bytes = Vec::with_capacity(16);
        front.write(&mut bytes);
        self.put(front_path(self.dk), bytes)
    }

    /// Sets the stream's state.
    pub fn set_meta(&mut self, meta: &Meta) -> CmdResult<()> {
        self.put(meta_path(self.dk), meta.encode())
    }

    /// Adds (or replaces) entry `id` with the flat `field value ...` list `pairs`.
    pub fn put_entry(&mut self, id: StreamId, pairs: &[Vec<u8>]) -> CmdResult<()> {
        self.put(entry_path(self.dk, id), encode_fields(pairs))
    }

    /// Deletes entry `id`.
    pub fn delete_entry(&mut self, id: StreamId) -> CmdResult<()> {
        self.delete(entry_path(self.dk, id))
    }

    /// Sets group `group`'s state (creating the group).
    pub fn set_group(&mut self, group: &[u8], state: &Group) -> CmdResult<()> {
        self.put(group_path(self.dk, group), state.encode())
    }

    /// Deletes group `group` with its pending entries and consumers.
    pub fn delete_group(&mut self, group: &[u8]) -> CmdResult<()> {
        self.delete(group_path(self.dk, group))?;
        self.delete(pending_root(self.dk, group))?;
        self.delete(consumers_root(self.dk, group))
    }

    /// Records entry `id` as pending in group `group`.
    pub fn set_pending(&mut self, group: &[u8], id: StreamId, pending: &Pending) -> CmdResult<()> {
        self.put(pending_path(self.dk, group, id), pending.encode())
    }

    /// Takes entry `id` off group `group`'s pending entries.
    pub fn delete_pending(&mut self, group: &[u8], id: StreamId) -> CmdResult<()> {
        self.delete(pending_path(self.dk, group, id))
    }

    /// Sets consumer `consumer` of group `group` (creating it).
    pub fn set_consumer(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        state: &Consumer,
    ) -> CmdResult<()> {
        self.put(consumer_path(self.dk, group, consumer), state.encode())
    }

    /// Deletes consumer `consumer` of group `group` (its pending entries are the caller's).
    pub fn delete_consumer(&mut self, group: &[u8], consumer: &[u8]) -> CmdResult<()> {
        self.delete(consumer_path(self.dk, group, consumer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XADD: IdSyntax = IdSyntax {
        missing_seq: Some(0),
        special: false,
        auto_seq: true,
    };
    const RANGE_START: IdSyntax = IdSyntax {
        missing_seq: Some(0),
        special: true,
        auto_seq: false,
    };

    /// The id `arg` parses to, or the error's text.
    fn parse(arg: &[u8], syntax: IdSyntax) -> Result<ParsedId, String> {
        parse_id(arg, syntax).map_err(|e| e.to_string())
    }

    fn invalid() -> Result<ParsedId, String> {
        Err(invalid_id().to_string())
    }

    #[test]
    fn ids_parse_as_redis_reads_them() {
        let exact = |ms, seq| Ok(ParsedId::Exact(StreamId::new(ms, seq)));
        assert_eq!(parse(b"5-3", XADD), exact(5, 3));
        assert_eq!(parse(b"5", XADD), exact(5, 0));
        assert_eq!(parse(b"5-*", XADD), Ok(ParsedId::AutoSeq(5)));
        assert_eq!(
            parse(b"18446744073709551615-18446744073709551615", XADD),
            exact(u64::MAX, u64::MAX)
        );
        // As `string2ull` reads numbers: C's `strtoull` after a strict `string2ll`.
        assert_eq!(parse(b"+5", XADD), exact(5, 0));
        assert_eq!(parse(b" \t\x0b5-+2", XADD), exact(5, 2));
        assert_eq!(parse(b"007-00", XADD), exact(7, 0));
        assert_eq!(parse(b"5- -5", XADD), exact(5, u64::MAX - 4));
        assert_eq!(parse(b"5--0", XADD), exact(5, 0));
        assert_eq!(parse(b"9-*\0junk", XADD), Ok(ParsedId::AutoSeq(9)));
        assert_eq!(parse(b"-", RANGE_START), exact(0, 0));
        assert_eq!(parse(b"+", RANGE_START), exact(u64::MAX, u64::MAX));
        for bad in [
            &b"-"[..],
            b"+",
            b"",
            b"5-",
            b"-5",
            b" ",
            b"5 ",
            b"5--1",
            b"5-3-1",
            b"5-0x1",
            b"5-x",
            b"18446744073709551616",
            b"5-*",
        ] {
            let syntax = IdSyntax {
                auto_seq: false,
                ..XADD
            };
            assert_eq!(
                parse(bad, syntax),
                invalid(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let long = vec![b'1'; 128];
        assert_eq!(parse(&long, XADD), invalid());
        let no_missing = IdSyntax {
            missing_seq: None,
            ..XADD
        };
        assert_eq!(parse(b"5", no_missing), invalid());
    }

    fn bound(arg: &str, end: bool) -> Result<StreamId, String> {
        range_bound(arg.as_bytes(), end).map_err(|e| e.to_string())
    }

    #[test]
    fn range_bounds_read_as_redis_reads_them() {
        let id = |ms, seq| Ok(StreamId::new(ms, seq));
        assert_eq!(bound("-", false), id(0, 0));
        assert_eq!(bound("+", true), id(u64::MAX, u64::MAX));
        assert_eq!(bound("+", false), id(u64::MAX, u64::MAX));
        assert_eq!(bound("5", false), id(5, 0));
        assert_eq!(bound("5", true), id(5, u64::MAX));
        assert_eq!(bound("5-3", true), id(5, 3));
        // Exclusive bounds step past the id.
        assert_eq!(bound("(5-3", false), id(5, 4));
        assert_eq!(bound("(5-3", true), id(5, 2));
        assert_eq!(bound("(5", false), id(5, 1));
        assert_eq!(bound("(5", true), id(5, u64::MAX - 1));
        assert_eq!(bound("(5-0", true), id(4, u64::MAX));
        assert_eq!(bound("(5-18446744073709551615", false), id(6, 0));
        let invalid = Err(invalid_id().to_string());
        for bad in ["(-", "(+", "(", "x", "5-", "(5-*", "5-*", "(x"] {
            assert_eq!(bound(bad, false), invalid, "{bad}");
            assert_eq!(bound(bad, true), invalid, "{bad}");
        }
        assert_eq!(
            bound("(18446744073709551615-18446744073709551615", false),
            Err("ERR invalid start ID for the interval".into())
        );
        assert_eq!(
            bound("(0-0", true),
            Err("ERR invalid end ID for the interval".into())
        );
        assert_eq!(bound("(0", true), Ok(StreamId::new(0, u64::MAX - 1)));
    }

    #[test]
    fn ids_step_across_the_millisecond() {
        assert_eq!(StreamId::new(1, 2).next(), Some(StreamId::new(1, 3)));
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
        assert_eq!(StreamId::MIN.prev(), None);
        assert_eq!(StreamId::new(7, 9).to_string(), "7-9");
    }

    #[test]
    fn entry_subkeys_sort_as_ids_do() {
        let ids = [
            StreamId::new(0, 1),
            StreamId::new(0, u64::MAX),
            StreamId::new(1, 0),
            StreamId::new(255, 7),
            StreamId::new(256, 0),
            StreamId::new(u64::MAX, 0),
        ];
        let encoded: Vec<Vec<u8>> = ids.iter().map(|id| id.subkey().encoded()).collect();
        assert!(encoded.windows(2).all(|w| w[0] < w[1]));
        for id in ids {
            assert_eq!(StreamId::from_subkey(&id.subkey()), Some(id));
        }
        assert_eq!(StreamId::from_subkey(&KeyEntryValue::Counter), None);
    }

    #[test]
    fn records_round_trip() {
        let meta = Meta {
            length: 3,
            last_id: StreamId::new(10, 2),
            max_deleted_id: StreamId::new(9, 0),
            entries_added: 5,
        };
        assert_eq!(Meta::decode(&meta.encode()).ok(), Some(meta));
        let group = Group {
            last_delivered: StreamId::new(4, 4),
            entries_read: -1,
        };
        assert_eq!(Group::decode(&group.encode()).ok(), Some(group));
        let pending = Pending {
            consumer: b"alice".to_vec(),
            delivery_time: 1_700_000_000_000,
            delivery_count: 2,
        };
        assert_eq!(Pending::decode(&pending.encode()).ok(), Some(pending));
        let consumer = Consumer { seen_time: 42 };
        assert_eq!(Consumer::decode(&consumer.encode()).ok(), Some(consumer));
        let pairs = vec![
            b"f".to_vec(),
            Vec::new(),
            b"field".to_vec(),
            b"v\0v".to_vec(),
        ];
        assert_eq!(decode_fields(&encode_fields(&pairs)).ok(), Some(pairs));
    }

    #[test]
    fn damaged_records_are_errors() {
        assert!(Meta::decode(&[0; 47]).is_err());
        assert!(Group::decode(&[]).is_err());
        assert!(Pending::decode(&[0; 15]).is_err());
        assert!(Consumer::decode(&[0; 9]).is_err());
        let good = encode_fields(&[b"a".to_vec(), b"b".to_vec()]);
        for cut in 0..good.len() {
            assert!(decode_fields(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = good.clone();
        long.push(0);
        assert!(decode_fields(&long).is_err());
        // A count far beyond the bytes is refused before anything is allocated for it.
        assert!(decode_fields(&[0xFF, 0xFF, 0xFF, 0xFF]).is_err());
    }
}
