//! `DocKey` and `SubDocKey` (format.md §3, §4).
//!
//! ```text
//! DocKey    = [ 'y' cotable-uuid(16) | '0' colocation-id(4 BE) ]
//!             [ 'G' hash(2 BE) hashed-components… '!' ]
//!             range-components… '!'
//! SubDocKey = DocKey subkey-components… [ '#' DocHybridTime ]
//! ```
//! Every component is a [`KeyEntryValue`]; decoding borrows the input and returns the rest.

use std::fmt;

use crate::entry_type::KeyEntryType;
use crate::error::{Result, corruption, take_array};
use crate::hybrid_time::DocHybridTime;
use crate::key_entry::{KeyEntryValue, skip_key_entry};

/// The optional table prefix of a DocKey.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TablePrefix {
    /// No prefix: the tablet holds one table.
    #[default]
    None,
    /// `0` + 4-byte BE: a colocated table.
    ColocationId(u32),
    /// `y` + 16 comparable UUID bytes: a cotable (YSQL catalog). Standard UUID byte order here.
    CoTableId([u8; 16]),
}

impl TablePrefix {
    /// Appends the prefix bytes (nothing for [`TablePrefix::None`]).
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        match self {
            TablePrefix::None => {}
            TablePrefix::ColocationId(id) => KeyEntryValue::ColocationId(*id).encode_to(out),
            TablePrefix::CoTableId(id) => KeyEntryValue::TableId(*id).encode_to(out),
        }
    }

    /// Decodes a prefix if the input starts with one.
    pub fn decode(input: &[u8]) -> Result<(Self, &[u8])> {
        match input.first().copied() {
            Some(b'0') => {
                let (bytes, rest) = take_array::<4>(&input[1..], "colocation id")?;
                Ok((TablePrefix::ColocationId(u32::from_be_bytes(bytes)), rest))
            }
            Some(b'y') => match KeyEntryValue::decode(input)? {
                (KeyEntryValue::TableId(id), rest) => Ok((TablePrefix::CoTableId(id), rest)),
                (other, _) => Err(corruption!("expected a cotable id, found {other}")),
            },
            _ => Ok((TablePrefix::None, input)),
        }
    }
}

/// The key of a document: table prefix, optional hash part and range part.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DocKey {
    /// Colocation or cotable prefix.
    pub prefix: TablePrefix,
    /// The 16-bit hash; `Some` exactly when the key has a hashed group.
    pub hash: Option<u16>,
    /// Hashed components (empty when `hash` is `None`).
    pub hashed: Vec<KeyEntryValue>,
    /// Range components.
    pub range: Vec<KeyEntryValue>,
}

impl DocKey {
    /// A key with range components only.
    pub fn from_range(range: Vec<KeyEntryValue>) -> Self {
        DocKey {
            range,
            ..DocKey::default()
        }
    }

    /// A key with a hash, hashed components and range components.
    pub fn with_hash(hash: u16, hashed: Vec<KeyEntryValue>, range: Vec<KeyEntryValue>) -> Self {
        DocKey {
            prefix: TablePrefix::None,
            hash: Some(hash),
            hashed,
            range,
        }
    }

    /// The same key under a table prefix.
    pub fn with_prefix(mut self, prefix: TablePrefix) -> Self {
        self.prefix = prefix;
        self
    }

    /// Appends the encoding.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        self.prefix.encode_to(out);
        if let Some(hash) = self.hash {
            KeyEntryValue::UInt16Hash(hash).encode_to(out);
            encode_group(&self.hashed, out);
        }
        encode_group(&self.range, out);
    }

    /// The encoding as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        self.encode_to(&mut out);
        out
    }

    /// The encoding of the DocKey under `prefix` with hash `hash`, one ascending string
    /// `key` hashed and nothing in range (a Redis key's), written straight from `key`
    /// without building the DocKey and copying `key` into it.
    pub fn encode_hashed_string(prefix: TablePrefix, hash: u16, key: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(key.len() + 16);
        prefix.encode_to(&mut out);
        KeyEntryValue::UInt16Hash(hash).encode_to(&mut out);
        out.push(KeyEntryType::String.as_u8());
        crate::zero_encoding::encode_to(key, &mut out);
        out.push(KeyEntryType::GroupEnd.as_u8());
        out.push(KeyEntryType::GroupEnd.as_u8());
        out
    }

    /// Decodes a DocKey from the front of `input`, returning the rest (subkeys, hybrid time).
    pub fn decode(input: &[u8]) -> Result<(Self, &[u8])> {
        let (prefix, rest) = TablePrefix::decode(input)?;
        let (hash, hashed, rest) = if rest.first() == Some(&KeyEntryType::UInt16Hash.as_u8()) {
            let (bytes, rest) = take_array::<2>(&rest[1..], "hash")?;
            let (hashed, rest) = decode_group(rest)?;
            (Some(u16::from_be_bytes(bytes)), hashed, rest)
        } else {
            (None, Vec::new(), rest)
        };
        let (range, rest) = decode_group(rest)?;
        Ok((
            DocKey {
                prefix,
                hash,
                hashed,
                range,
            },
            rest,
        ))
    }

    /// Length of the encoded DocKey at the front of `input`, without building it.
    pub fn encoded_len(input: &[u8]) -> Result<usize> {
        Ok(input.len() - skip_doc_key(input)?.len())
    }
}

fn encode_group(components: &[KeyEntryValue], out: &mut Vec<u8>) {
    for c in components {
        c.encode_to(out);
    }
    out.push(KeyEntryType::GroupEnd.as_u8());
}

/// Decodes components up to and including the `!` that ends a group.
fn decode_group(mut input: &[u8]) -> Result<(Vec<KeyEntryValue>, &[u8])> {
    let mut out = Vec::new();
    loop {
        match input.first() {
            None => return Err(corruption!("DocKey group is not terminated by '!'")),
            Some(&b) if b == KeyEntryType::GroupEnd.as_u8() => return Ok((out, &input[1..])),
            Some(_) => {
                let (component, rest) = KeyEntryValue::decode(input)?;
                out.push(component);
                input = rest;
            }
        }
    }
}

/// Writes `[a, b, c]` using each item's `Display`.
fn write_list(f: &mut fmt::Formatter<'_>, items: &[KeyEntryValue]) -> fmt::Result {
    f.write_str("[")?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    f.write_str("]")
}

/// `DocKey([], [range…])`, `DocKey(0x1234, [hashed…], [range…])`, with
/// `ColocationId=N, ` or `CoTableId=<uuid>, ` after the parenthesis when present.
impl fmt::Display for DocKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DocKey(")?;
        match self.prefix {
            TablePrefix::None => {}
            TablePrefix::ColocationId(id) => write!(f, "ColocationId={id}, ")?,
            TablePrefix::CoTableId(id) => write!(f, "CoTableId={}, ", format_uuid(&id))?,
        }
        if let Some(hash) = self.hash {
            write!(f, "0x{hash:04x}, ")?;
        }
        write_list(f, &self.hashed)?;
        f.write_str(", ")?;
        write_list(f, &self.range)?;
        f.write_str(")")
    }
}

/// Standard textual UUID form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A path inside a document, optionally at a hybrid time: the RocksDB key of one version.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SubDocKey {
    /// The document.
    pub doc_key: DocKey,
    /// Path components below the document root (column ids, map keys, list indexes…).
    pub subkeys: Vec<KeyEntryValue>,
    /// The version's time, when the key carries one.
    pub time: Option<DocHybridTime>,
}

impl SubDocKey {
    /// A path without hybrid time.
    pub fn new(doc_key: DocKey, subkeys: Vec<KeyEntryValue>) -> Self {
        SubDocKey {
            doc_key,
            subkeys,
            time: None,
        }
    }

    /// The same path at `time`.
    pub fn at(mut self, time: DocHybridTime) -> Self {
        self.time = Some(time);
        self
    }

    /// Appends the encoding; the hybrid time, when present, as `#` + DocHybridTime.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        self.doc_key.encode_to(out);
        self.encode_subkeys_to(out);
        if let Some(time) = &self.time {
            out.push(KeyEntryType::HybridTime.as_u8());
            time.encode_to(out);
        }
    }

    /// Appends only the subkey components.
    pub fn encode_subkeys_to(&self, out: &mut Vec<u8>) {
        for subkey in &self.subkeys {
            subkey.encode_to(out);
        }
    }

    /// The encoding as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48);
        self.encode_to(&mut out);
        out
    }

    /// Decodes a whole key: DocKey, subkeys and an optional trailing hybrid time. Bytes after
    /// the hybrid time are corruption.
    pub fn decode(input: &[u8]) -> Result<Self> {
        let (doc_key, mut rest) = DocKey::decode(input)?;
        let mut subkeys = Vec::new();
        while let Some(&first) = rest.first() {
            if first == KeyEntryType::HybridTime.as_u8() {
                let (time, tail) = DocHybridTime::decode(&rest[1..])?;
                if !tail.is_empty() {
                    return Err(corruption!("{} bytes after the hybrid time", tail.len()));
                }
                return Ok(SubDocKey {
                    doc_key,
                    subkeys,
                    time: Some(time),
                });
            }
            let (subkey, tail) = KeyEntryValue::decode(rest)?;
            subkeys.push(subkey);
            rest = tail;
        }
        Ok(SubDocKey {
            doc_key,
            subkeys,
            time: None,
        })
    }
}

/// `SubDocKey(DocKey(...), [subkey, ...; HT{ ... }])`; `[HT{ ... }]` without subkeys and
/// `[subkey, ...]` without a time.
impl fmt::Display for SubDocKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SubDocKey({}, [", self.doc_key)?;
        for (i, subkey) in self.subkeys.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{subkey}")?;
        }
        if let Some(time) = &self.time {
            if !self.subkeys.is_empty() {
                f.write_str("; ")?;
            }
            write!(f, "{time}")?;
        }
        f.write_str("])")
    }
}

/// Splits a RocksDB key into components: pushes onto `ends` the offset just past the DocKey and
/// past each subkey, and returns the key's hybrid time if it has one (the `#` starts at the
/// last end). Used by GC and reads to compare paths without building them.
pub fn component_ends(key: &[u8], ends: &mut Vec<usize>) -> Result<Option<DocHybridTime>> {
    ends.clear();
    let rest = skip_doc_key(key)?;
    ends.push(key.len() - rest.len());
    subkey_ends(key, rest, ends)
}

/// [`component_ends`] of a key that starts with a path whose ends are `path_ends` (as
/// `component_ends` gave them): only the rest of the key is parsed. The caller vouches for
/// the shared start; `path_ends` empty or past the key's end falls back to parsing it all.
pub fn component_ends_below(
    key: &[u8],
    path_ends: &[usize],
    ends: &mut Vec<usize>,
) -> Result<Option<DocHybridTime>> {
    let Some(rest) = path_ends.last().and_then(|&end| key.get(end..)) else {
        return component_ends(key, ends);
    };
    ends.clear();
    ends.extend_from_slice(path_ends);
    subkey_ends(key, rest, ends)
}

/// Pushes the end of each subkey of `rest`, the tail of `key`, and decodes the hybrid time
/// that ends it, if any.
fn subkey_ends(
    key: &[u8],
    mut rest: &[u8],
    ends: &mut Vec<usize>,
) -> Result<Option<DocHybridTime>> {
    while let Some(&first) = rest.first() {
        if first == KeyEntryType::HybridTime.as_u8() {
            let (time, tail) = DocHybridTime::decode(&rest[1..])?;
            if !tail.is_empty() {
                return Err(corruption!("{} bytes after the hybrid time", tail.len()));
            }
            return Ok(Some(time));
        }
        rest = skip_key_entry(rest)?;
        ends.push(key.len() - rest.len());
    }
    Ok(None)
}

/// A borrowed view of a RocksDB key: where its DocKey and each subkey end, and its hybrid
/// time, found without copying or building anything. Components decode on demand.
#[derive(Debug, Clone, PartialEq)]
pub struct SubDocKeyView<'a> {
    key: &'a [u8],
    ends: Vec<usize>,
    time: Option<DocHybridTime>,
}

impl<'a> SubDocKeyView<'a> {
    /// Parses the component boundaries of `key` (never panics on bad bytes).
    pub fn parse(key: &'a [u8]) -> Result<Self> {
        let mut ends = Vec::with_capacity(4);
        let time = component_ends(key, &mut ends)?;
        Ok(SubDocKeyView { key, ends, time })
    }

    /// The encoded DocKey.
    pub fn doc_key_bytes(&self) -> &'a [u8] {
        &self.key[..self.ends[0]]
    }

    /// The encoded path: DocKey and subkeys, without the hybrid time.
    pub fn path_bytes(&self) -> &'a [u8] {
        &self.key[..self.ends[self.ends.len() - 1]]
    }

    /// Number of subkeys.
    pub fn num_subkeys(&self) -> usize {
        self.ends.len() - 1
    }

    /// The encoded subkey `i` (0-based), if there is one.
    pub fn subkey_bytes(&self, i: usize) -> Option<&'a [u8]> {
        let start = *self.ends.get(i)?;
        let end = *self.ends.get(i + 1)?;
        Some(&self.key[start..end])
    }

    /// Decodes subkey `i`.
    pub fn subkey(&self, i: usize) -> Option<KeyEntryValue> {
        KeyEntryValue::decode(self.subkey_bytes(i)?)
            .ok()
            .map(|(v, _)| v)
    }

    /// The hybrid time, when the key has one.
    pub fn time(&self) -> Option<DocHybridTime> {
        self.time
    }

    /// Builds the owned [`SubDocKey`].
    pub fn to_owned_key(&self) -> Result<SubDocKey> {
        SubDocKey::decode(self.key)
    }
}

/// Skips the DocKey at the front of `input` without building it (the same bytes
/// [`DocKey::decode`] accepts), returning the rest.
pub fn skip_doc_key(input: &[u8]) -> Result<&[u8]> {
    let mut rest = match input.first() {
        Some(b'0') => take_array::<4>(&input[1..], "colocation id")?.1,
        Some(b'y') => take_array::<16>(&input[1..], "cotable id")?.1,
        _ => input,
    };
    if rest.first() == Some(&KeyEntryType::UInt16Hash.as_u8()) {
        rest = skip_group(take_array::<2>(&rest[1..], "hash")?.1)?;
    }
    skip_group(rest)
}

/// Skips components up to and including the `!` that ends a group.
fn skip_group(mut input: &[u8]) -> Result<&[u8]> {
    loop {
        match input.first() {
            None => return Err(corruption!("DocKey group is not terminated by '!'")),
            Some(&b) if b == KeyEntryType::GroupEnd.as_u8() => return Ok(&input[1..]),
            Some(_) => input = skip_key_entry(input)?,
        }
    }
}

/// Decodes `key` for display: `DocKey(...)` when nothing follows the DocKey, otherwise the
/// `SubDocKey(...)` form (format.md §12).
pub fn format_key(key: &[u8]) -> Result<String> {
    let sub = SubDocKey::decode(key)?;
    if sub.subkeys.is_empty() && sub.time.is_none() {
        Ok(sub.doc_key.to_string())
    } else {
        Ok(sub.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape::format_bytes;
    use crate::hybrid_time::HybridTime;
    use crate::key_entry::SortOrder;

    fn s(text: &str) -> KeyEntryValue {
        KeyEntryValue::string(text)
    }
    fn i64k(v: i64) -> KeyEntryValue {
        KeyEntryValue::Int64(v, SortOrder::Ascending)
    }
    fn i32k(v: i32) -> KeyEntryValue {
        KeyEntryValue::Int32(v, SortOrder::Ascending)
    }

    #[test]
    fn b1_doc_key_to_string() {
        let key = DocKey::from_range(vec![i32k(10), s("foo"), i32k(20), s("bar")]);
        assert_eq!(key.to_string(), r#"DocKey([], [10, "foo", 20, "bar"])"#);
        let key = DocKey::with_hash(
            0x1234,
            vec![s("hashed_key1"), i32k(123), s("hashed_key2"), i32k(234)],
            vec![i32k(10), s("foo"), i32k(20), s("bar")],
        );
        assert_eq!(
            key.to_string(),
            r#"DocKey(0x1234, ["hashed_key1", 123, "hashed_key2", 234], [10, "foo", 20, "bar"])"#
        );
    }

    #[test]
    fn b2_sub_doc_key_to_string() {
        let doc = DocKey::from_range(vec![s("range_key1"), i32k(1000), s("range_key_3")]);
        let at = |us| DocHybridTime::new(HybridTime::from_micros(us), 0);
        assert_eq!(
            SubDocKey::new(doc.clone(), vec![])
                .at(at(12345))
                .to_string(),
            r#"SubDocKey(DocKey([], ["range_key1", 1000, "range_key_3"]), [HT{ physical: 12345 }])"#
        );
        assert_eq!(
            SubDocKey::new(doc, vec![s("subkey1")])
                .at(at(20000))
                .to_string(),
            r#"SubDocKey(DocKey([], ["range_key1", 1000, "range_key_3"]), ["subkey1"; HT{ physical: 20000 }])"#
        );
    }

    #[test]
    fn b3_doc_key_encoding() {
        let key = DocKey::from_range(vec![s("val1"), i64k(1000), s("val2"), i64k(2000)]);
        let expected = r#""Sval1\x00\x00I\x80\x00\x00\x00\x00\x00\x03\xe8Sval2\x00\x00I\x80\x00\x00\x00\x00\x00\x07\xd0!""#;
        assert_eq!(format_bytes(&key.encode()), expected);
        assert_eq!(DocKey::decode(&key.encode()), Ok((key, &[][..])));

        let key = DocKey::with_hash(
            0xcafe,
            vec![s("hashed1"), s("hashed2")],
            vec![s("range1"), i64k(1000), s("range2"), i64k(2000)],
        );
        let expected = r#""G\xca\xfeShashed1\x00\x00Shashed2\x00\x00!Srange1\x00\x00I\x80\x00\x00\x00\x00\x00\x03\xe8Srange2\x00\x00I\x80\x00\x00\x00\x00\x00\x07\xd0!""#;
        assert_eq!(format_bytes(&key.encode()), expected);
        assert_eq!(DocKey::decode(&key.encode()), Ok((key, &[][..])));
    }

    #[test]
    fn b3_descending_components() {
        let desc = SortOrder::Descending;
        let key = DocKey::from_range(vec![
            KeyEntryValue::String(b"val1".to_vec(), desc),
            i64k(1000),
            KeyEntryValue::Int64(1000, desc),
            KeyEntryValue::String(b"val1\x00".to_vec(), desc),
            KeyEntryValue::Inet(vec![1, 2, 3, 4], desc),
            KeyEntryValue::Timestamp(1000, desc),
            KeyEntryValue::Decimal("100.02".parse().expect("decimal"), desc),
            KeyEntryValue::Decimal("0.001".parse().expect("decimal"), SortOrder::Ascending),
        ]);
        let expected = r#""a\x89\x9e\x93\xce\xff\xffI\x80\x00\x00\x00\x00\x00\x03\xe8b\x7f\xff\xff\xff\xff\xff\xfc\x17a\x89\x9e\x93\xce\xff\xfe\xff\xff.\xfe\xfd\xfc\xfb\xff\xffc\x7f\xff\xff\xff\xff\xff\xfc\x17d\x1c\xea\xfe\xd7E\xdd\x14!""#;
        assert_eq!(format_bytes(&key.encode()), expected);
        assert_eq!(DocKey::decode(&key.encode()), Ok((key, &[][..])));
    }

    #[test]
    fn b4_sub_doc_key_encoding() {
        let key = SubDocKey::new(
            DocKey::from_range(vec![s("some_doc_key")]),
            vec![
                s("sk1"),
                s("sk2"),
                KeyEntryValue::String(b"sk3\x00".to_vec(), SortOrder::Descending),
            ],
        )
        .at(DocHybridTime::from_micros(1000));
        let expected = r#""Ssome_doc_key\x00\x00!Ssk1\x00\x00Ssk2\x00\x00a\x8c\x94\xcc\xff\xfe\xff\xff#\x80\xff\x05T=\xf7)\xbc\x18\x80K""#;
        assert_eq!(format_bytes(&key.encode()), expected);
        assert_eq!(SubDocKey::decode(&key.encode()), Ok(key));
    }

    #[test]
    fn b5_and_prefixes() {
        let key = DocKey::from_range(vec![s("my_key_where_value_is_a_string")]);
        assert_eq!(
            format_bytes(&key.encode()),
            r#""Smy_key_where_value_is_a_string\x00\x00!""#
        );
        let colocated =
            DocKey::from_range(vec![s("a")]).with_prefix(TablePrefix::ColocationId(16385));
        assert_eq!(colocated.encode(), b"0\x00\x00\x40\x01Sa\x00\x00!");
        assert_eq!(
            colocated.to_string(),
            r#"DocKey(ColocationId=16385, [], ["a"])"#
        );
        assert_eq!(
            DocKey::decode(&colocated.encode()),
            Ok((colocated, &[][..]))
        );
        let hash_only = DocKey::with_hash(7, vec![s("h")], vec![]);
        assert!(hash_only.encode().ends_with(b"!!"));
        assert_eq!(
            format_key(&hash_only.encode()).as_deref(),
            Ok(r#"DocKey(0x0007, ["h"], [])"#)
        );
    }

    #[test]
    fn skip_matches_decode() {
        let key = DocKey::with_hash(0xcafe, vec![s("h")], vec![i64k(5)])
            .with_prefix(TablePrefix::ColocationId(9));
        let mut bytes = key.encode();
        bytes.extend_from_slice(b"Sx\x00\x00");
        assert_eq!(skip_doc_key(&bytes), Ok(&b"Sx\x00\x00"[..]));
        for bad in [&b""[..], b"G\x01", b"0\x00", b"Sa\x00"] {
            assert!(skip_doc_key(bad).is_err());
        }
    }

    fn any_component() -> impl proptest::strategy::Strategy<Value = KeyEntryValue> {
        use proptest::prelude::*;
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..12).prop_map(KeyEntryValue::string),
            proptest::collection::vec(any::<u8>(), 0..12)
                .prop_map(|s| KeyEntryValue::String(s, SortOrder::Descending)),
            any::<i64>().prop_map(i64k),
            any::<i32>().prop_map(|v| KeyEntryValue::Int32(v, SortOrder::Descending)),
            Just(KeyEntryValue::NullLow),
            Just(KeyEntryValue::NullHigh),
        ]
    }

    fn any_sub_doc_key() -> impl proptest::strategy::Strategy<Value = SubDocKey> {
        use proptest::prelude::*;
        let components = || proptest::collection::vec(any_component(), 0..4);
        let subkey = prop_oneof![
            any_component(),
            (0..i32::MAX).prop_map(KeyEntryValue::ColumnId),
            any::<i64>().prop_map(KeyEntryValue::ArrayIndex),
        ];
        (
            proptest::option::of(any::<u16>()),
            components(),
            components(),
            prop_oneof![
                Just(TablePrefix::None),
                any::<u32>().prop_map(TablePrefix::ColocationId)
            ],
            proptest::collection::vec(subkey, 0..4),
            proptest::option::of((any::<u64>(), any::<u32>())),
        )
            .prop_map(|(hash, hashed, range, prefix, subkeys, time)| {
                let doc_key = match hash {
                    Some(h) => DocKey::with_hash(h, hashed, range),
                    None => DocKey::from_range(range),
                }
                .with_prefix(prefix);
                let key = SubDocKey::new(doc_key, subkeys);
                match time {
                    Some((ht, w)) => key.at(DocHybridTime::new(HybridTime(ht), w)),
                    None => key,
                }
            })
    }

    proptest::proptest! {
        /// A hashed string key written straight is the DocKey's own encoding.
        #[test]
        fn hashed_string_encodes_as_the_doc_key(
            key in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..24),
            hash: u16,
            colocation in proptest::option::of(proptest::prelude::any::<u32>()),
        ) {
            let prefix = colocation.map_or(TablePrefix::None, TablePrefix::ColocationId);
            let doc_key = DocKey::with_hash(hash, vec![KeyEntryValue::string(key.clone())], vec![])
                .with_prefix(prefix);
            proptest::prop_assert_eq!(
                DocKey::encode_hashed_string(prefix, hash, &key),
                doc_key.encode()
            );
        }

        /// decode(encode(x)) == x for DocKeys and SubDocKeys, and the borrowed view agrees.
        #[test]
        fn sub_doc_key_roundtrip(key in any_sub_doc_key()) {
            let bytes = key.encode();
            proptest::prop_assert_eq!(SubDocKey::decode(&bytes), Ok(key.clone()));
            let doc = key.doc_key.encode();
            proptest::prop_assert_eq!(DocKey::decode(&doc), Ok((key.doc_key.clone(), &[][..])));
            let view = SubDocKeyView::parse(&bytes).expect("view");
            proptest::prop_assert_eq!(view.doc_key_bytes(), &doc[..]);
            proptest::prop_assert_eq!(view.num_subkeys(), key.subkeys.len());
            for (i, subkey) in key.subkeys.iter().enumerate() {
                proptest::prop_assert_eq!(view.subkey(i), Some(subkey.clone()));
            }
            proptest::prop_assert_eq!(view.time(), key.time);
        }

        /// Keys of the same document order like their subkeys, and versions of one path run
        /// newest first.
        #[test]
        fn versions_sort_newest_first(key in any_sub_doc_key(), a: u64, b: u64) {
            let path = SubDocKey { time: None, ..key };
            let at = |t| path.clone().at(DocHybridTime::new(HybridTime(t), 0)).encode();
            proptest::prop_assert_eq!(at(a).cmp(&at(b)), b.cmp(&a));
        }

        /// Parsing below any of a key's own leading paths gives what parsing it whole gives.
        #[test]
        fn component_ends_below_a_path_agree(key in any_sub_doc_key(), cut: usize) {
            let bytes = key.encode();
            let mut all = Vec::new();
            let time = component_ends(&bytes, &mut all).expect("parses");
            let depth = cut % all.len();
            let path_ends = &all[..=depth];
            let mut below = Vec::new();
            let below_time = component_ends_below(&bytes, path_ends, &mut below).expect("parses");
            proptest::prop_assert_eq!(&below, &all);
            proptest::prop_assert_eq!(below_time, time);
        }

        #[test]
        fn decoders_never_panic(bytes: Vec<u8>, path_ends: Vec<usize>) {
            let _ = component_ends_below(&bytes, &path_ends, &mut Vec::new());
            let _ = SubDocKey::decode(&bytes);
            let _ = DocKey::decode(&bytes);
            let _ = SubDocKeyView::parse(&bytes);
            let _ = format_key(&bytes);
        }
    }

    #[test]
    fn malformed_keys_fail() {
        for bad in [
            &b""[..],
            b"Sa\x00\x00",
            b"G\x01",
            b"G\x01\x02Sa\x00\x00!",
            b"0\x00\x01",
            b"Sa\x00\x00!#\x80",
        ] {
            assert!(SubDocKey::decode(bad).is_err(), "{}", format_bytes(bad));
        }
    }
}
