//! The one-byte type tags that start every key component and every value (format.md §1).
//!
//! Keys compare bytewise, so the numeric order of [`KeyEntryType`] bytes *is* the sort order
//! between components of different types; the table below lists them in that order.

/// Declares a `#[repr(u8)]` enum plus a checked `from_u8` and the full list in byte order.
macro_rules! entry_types {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $byte:expr,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $byte,)*
        }

        impl $name {
            /// Every variant, in ascending byte (= sort) order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The variant for a type byte, or `None` for a byte that is not a type.
            pub const fn from_u8(byte: u8) -> Option<Self> {
                match byte {
                    $($byte => Some($name::$variant),)*
                    _ => None,
                }
            }

            /// The type byte.
            pub const fn as_u8(self) -> u8 {
                self as u8
            }
        }
    };
}

entry_types! {
    /// Type byte of a key component (`KeyEntryType` in YugabyteDB's `dockv/value_type.h`).
    /// Variants are listed in sort order; the doc of each gives its byte.
    KeyEntryType {
        /// 0x00: lower bound for scans; never stored.
        Lowest = 0x00,
        /// 0x06: vector index metadata record (decoded, never written).
        VectorIndexMetadata = 0x06,
        /// 0x07: transaction apply state (decoded, never written).
        TransactionApplyState = 0x07,
        /// 0x08: external transaction id (intents DB).
        ExternalTransactionId = 0x08,
        /// 0x0A: obsolete intent prefix.
        ObsoleteIntentPrefix = 0x0A,
        /// 0x0D: intent type set.
        IntentTypeSet = 0x0D,
        /// 0x0F: obsolete intent type set.
        ObsoleteIntentTypeSet = 0x0F,
        /// 0x14: obsolete intent type.
        ObsoleteIntentType = 0x14,
        /// 0x15: seek helper greater than any intent type; never stored.
        GreaterThanIntentType = 0x15,
        /// `!` 0x21: ends the hashed and the range group of a DocKey.
        GroupEnd = 0x21,
        /// `#` 0x23: a DocHybridTime follows; sorts below every primitive so versions of a
        /// path come before its children.
        HybridTime = 0x23,
        /// `$` 0x24: null, sorting first.
        NullLow = 0x24,
        /// `%` 0x25: Redis sorted-set cardinality counter.
        Counter = 0x25,
        /// `&` 0x26: Redis sorted set, score → member index.
        SsForward = 0x26,
        /// `'` 0x27: Redis sorted set, member → score index.
        SsReverse = 0x27,
        /// `-` 0x2D: inet address.
        Inetaddress = 0x2D,
        /// `.` 0x2E: inet address, descending.
        InetaddressDescending = 0x2E,
        /// `0` 0x30: colocation id prefix (4-byte BE).
        ColocationId = 0x30,
        /// `3` 0x33: weak object lock.
        WeakObjectLock = 0x33,
        /// `4` 0x34: strong object lock.
        StrongObjectLock = 0x34,
        /// `<` 0x3C: frozen collection.
        Frozen = 0x3C,
        /// `>` 0x3E: frozen collection, descending.
        FrozenDescending = 0x3E,
        /// `?` 0x3F: decimal NaN, descending.
        DecimalNaNDescending = 0x3F,
        /// `@` 0x40: decimal +infinity, descending.
        DecimalPosInfinityDescending = 0x40,
        /// `A` 0x41: decimal −infinity.
        DecimalNegInfinity = 0x41,
        /// `B` 0x42: arbitrary-precision integer.
        VarInt = 0x42,
        /// `C` 0x43: float.
        Float = 0x43,
        /// `D` 0x44: double.
        Double = 0x44,
        /// `E` 0x45: decimal.
        Decimal = 0x45,
        /// `F` 0x46: boolean false.
        False = 0x46,
        /// `G` 0x47: 16-bit hash of the hashed components.
        UInt16Hash = 0x47,
        /// `H` 0x48: int32.
        Int32 = 0x48,
        /// `I` 0x49: int64.
        Int64 = 0x49,
        /// `J` 0x4A: system column id (liveness column = 0).
        SystemColumnId = 0x4A,
        /// `K` 0x4B: column id.
        ColumnId = 0x4B,
        /// `L` 0x4C: double, descending.
        DoubleDescending = 0x4C,
        /// `M` 0x4D: float, descending.
        FloatDescending = 0x4D,
        /// `N` 0x4E: decimal +infinity.
        DecimalPosInfinity = 0x4E,
        /// `O` 0x4F: uint32.
        UInt32 = 0x4F,
        /// `P` 0x50: decimal NaN.
        DecimalNaN = 0x50,
        /// `S` 0x53: string / binary.
        String = 0x53,
        /// `T` 0x54: boolean true.
        True = 0x54,
        /// `U` 0x55: uint64.
        UInt64 = 0x55,
        /// `V` 0x56: vector id (16 raw bytes).
        VectorId = 0x56,
        /// `Z` 0x5A: external intents.
        ExternalIntents = 0x5A,
        /// `[` 0x5B: list element index.
        ArrayIndex = 0x5B,
        /// `\` 0x5C: collated string.
        CollString = 0x5C,
        /// `]` 0x5D: collated string, descending.
        CollStringDescending = 0x5D,
        /// `_` 0x5F: UUID / TimeUUID in comparable form.
        Uuid = 0x5F,
        /// `` ` `` 0x60: UUID, descending.
        UuidDescending = 0x60,
        /// `a` 0x61: string, descending.
        StringDescending = 0x61,
        /// `b` 0x62: int64, descending.
        Int64Descending = 0x62,
        /// `c` 0x63: timestamp, descending.
        TimestampDescending = 0x63,
        /// `d` 0x64: decimal, descending.
        DecimalDescending = 0x64,
        /// `e` 0x65: int32, descending.
        Int32Descending = 0x65,
        /// `f` 0x66: varint, descending.
        VarIntDescending = 0x66,
        /// `g` 0x67: uint32, descending.
        UInt32Descending = 0x67,
        /// `h` 0x68: boolean true, descending.
        TrueDescending = 0x68,
        /// `i` 0x69: boolean false, descending.
        FalseDescending = 0x69,
        /// `j` 0x6A: uint64, descending.
        UInt64Descending = 0x6A,
        /// `k` 0x6B: value control field: merge flags.
        MergeFlags = 0x6B,
        /// `m` 0x6D: bit set.
        BitSet = 0x6D,
        /// `n` 0x6E: subtransaction id.
        SubTransactionId = 0x6E,
        /// `o` 0x6F: BSON.
        Bson = 0x6F,
        /// `p` 0x70: BSON, descending.
        BsonDescending = 0x70,
        /// `q` 0x71: decimal −infinity, descending.
        DecimalNegInfinityDescending = 0x71,
        /// `s` 0x73: timestamp in microseconds.
        Timestamp = 0x73,
        /// `t` 0x74: value control field: TTL.
        Ttl = 0x74,
        /// `u` 0x75: value control field: user timestamp.
        UserTimestamp = 0x75,
        /// `v` 0x76: GIN null.
        GinNull = 0x76,
        /// `x` 0x78: transaction id.
        TransactionId = 0x78,
        /// `y` 0x79: cotable id prefix (16 raw comparable UUID bytes).
        TableId = 0x79,
        /// `{` 0x7B: object (as a subkey).
        Object = 0x7B,
        /// `|` 0x7C: null, sorting last.
        NullHigh = 0x7C,
        /// `}` 0x7D: group end, descending.
        GroupEndDescending = 0x7D,
        /// `~` 0x7E: upper bound for scans; never stored.
        Highest = 0x7E,
        /// 0x7F: sanity marker; never valid.
        Invalid = 0x7F,
        /// 0xFF: seek helper past any key; never a type.
        MaxByte = 0xFF,
    }
}

entry_types! {
    /// Type byte of a value payload (`ValueEntryType` in `dockv/value_type.h`). It shares the
    /// byte space with [`KeyEntryType`] but some bytes differ in meaning (notably `|`).
    ValueEntryType {
        /// `$` 0x24: null (liveness column, set member).
        NullLow = 0x24,
        /// `(` 0x28: Redis set root.
        RedisSet = 0x28,
        /// `)` 0x29: Redis list root.
        RedisList = 0x29,
        /// `*` 0x2A: Redis stream root. A docdb extension: YugabyteDB has no streams and
        /// leaves this byte unused.
        RedisStream = 0x2A,
        /// `+` 0x2B: Redis time series root.
        RedisTs = 0x2B,
        /// `,` 0x2C: Redis sorted set root.
        RedisSortedSet = 0x2C,
        /// `-` 0x2D: inet address.
        Inetaddress = 0x2D,
        /// `0` 0x30: colocation id.
        ColocationId = 0x30,
        /// `2` 0x32: jsonb.
        Jsonb = 0x32,
        /// `<` 0x3C: frozen collection.
        Frozen = 0x3C,
        /// `A` 0x41: array (list) init marker.
        Array = 0x41,
        /// `B` 0x42: varint.
        VarInt = 0x42,
        /// `C` 0x43: float.
        Float = 0x43,
        /// `D` 0x44: double.
        Double = 0x44,
        /// `E` 0x45: decimal.
        Decimal = 0x45,
        /// `F` 0x46: false.
        False = 0x46,
        /// `H` 0x48: int32 (also int8/int16).
        Int32 = 0x48,
        /// `I` 0x49: int64.
        Int64 = 0x49,
        /// `O` 0x4F: uint32.
        UInt32 = 0x4F,
        /// `R` 0x52: vector.
        Vector = 0x52,
        /// `S` 0x53: string / binary.
        String = 0x53,
        /// `T` 0x54: true.
        True = 0x54,
        /// `U` 0x55: uint64.
        UInt64 = 0x55,
        /// `V` 0x56: vector id.
        VectorId = 0x56,
        /// `W` 0x57: deleted vector ids.
        DeleteVectorIds = 0x57,
        /// `X` 0x58: tombstone.
        Tombstone = 0x58,
        /// `[` 0x5B: array index.
        ArrayIndex = 0x5B,
        /// `\` 0x5C: collated string.
        CollString = 0x5C,
        /// `_` 0x5F: UUID.
        Uuid = 0x5F,
        /// `l` 0x6C: row lock.
        RowLock = 0x6C,
        /// `n` 0x6E: subtransaction id.
        SubTransactionId = 0x6E,
        /// `s` 0x73: timestamp.
        Timestamp = 0x73,
        /// `v` 0x76: GIN null.
        GinNull = 0x76,
        /// `w` 0x77: write id.
        WriteId = 0x77,
        /// `x` 0x78: transaction id.
        TransactionId = 0x78,
        /// `y` 0x79: table id.
        TableId = 0x79,
        /// `z` 0x7A: packed row, version 1.
        PackedRowV1 = 0x7A,
        /// `{` 0x7B: object init marker.
        Object = 0x7B,
        /// `|` 0x7C: packed row, version 2.
        PackedRowV2 = 0x7C,
        /// 0x7F: invalid.
        Invalid = 0x7F,
        /// 0xFF: seek helper.
        MaxByte = 0xFF,
    }
}

impl ValueEntryType {
    /// Object-like roots whose children are subkeys (`IsObjectType`).
    pub fn is_object(self) -> bool {
        use ValueEntryType::*;
        matches!(
            self,
            Object | RedisTs | RedisSet | RedisSortedSet | RedisList | RedisStream
        )
    }

    /// [`Self::is_object`] plus the list init marker (`IsCollectionType`).
    pub fn is_collection(self) -> bool {
        self.is_object() || self == ValueEntryType::Array
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_types_are_listed_in_sort_order_and_roundtrip() {
        for pair in KeyEntryType::ALL.windows(2) {
            assert!(pair[0].as_u8() < pair[1].as_u8(), "{pair:?}");
            assert!(pair[0] < pair[1]);
        }
        for &t in KeyEntryType::ALL {
            assert_eq!(KeyEntryType::from_u8(t.as_u8()), Some(t));
        }
        // format.md §1.1 lists 78 key entry types.
        assert_eq!(KeyEntryType::ALL.len(), 78);
    }

    #[test]
    fn value_types_are_listed_in_order_and_roundtrip() {
        for pair in ValueEntryType::ALL.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        for &t in ValueEntryType::ALL {
            assert_eq!(ValueEntryType::from_u8(t.as_u8()), Some(t));
        }
    }

    #[test]
    fn ordering_facts_the_format_relies_on() {
        use KeyEntryType as K;
        // Versions of a path (#) sort before any child subkey and after the group end.
        assert!(K::GroupEnd < K::HybridTime);
        assert!(K::HybridTime < K::NullLow);
        // Nulls first/last bracket every primitive.
        for &t in K::ALL {
            if t > K::NullLow && t < K::NullHigh {
                assert!(t != K::Lowest && t != K::Highest);
            }
        }
        assert!(K::NullHigh < K::GroupEndDescending && K::GroupEndDescending < K::Highest);
        // Colocated and cotable prefixes sort apart from hashed keys.
        assert!(K::ColocationId < K::UInt16Hash && K::UInt16Hash < K::TableId);
        // false < true in both directions of the type byte space.
        assert!(K::False < K::True && K::TrueDescending < K::FalseDescending);
        assert_eq!(K::from_u8(b'R'), None);
        assert_eq!(
            ValueEntryType::from_u8(b'|'),
            Some(ValueEntryType::PackedRowV2)
        );
        assert_eq!(K::from_u8(b'|'), Some(K::NullHigh));
    }
}
