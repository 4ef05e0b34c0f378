//! Packed rows: all non-key columns of a row in one value (format.md §9,
//! `dockv/packed_row.cc`, `schema_packing.cc`, `value_packing_v2.cc`).
//!
//! A packed value is `[row control fields] z|'|' <unsigned varint schema version> <body>`.
//! The body layout comes from the [`SchemaPacking`] of that schema version:
//!
//! * **V1** (`z`, [`RowPackerV1`]): one `u32` little-endian end offset per variable-length
//!   column, then every column's data back to back. A column's data is its standard value
//!   encoding (type byte + payload), optionally preceded by per-column control fields (YCQL
//!   TTL); NULL is zero-length data. Fixed-length columns (non-nullable fixed-width types in
//!   YSQL tables) have no offset: their size is known from the packing.
//! * **V2** (`|`, [`RowPackerV2`], YSQL only): a flags byte ([`HAS_NULLS_FLAG`],
//!   [`IS_UPDATE_FLAG`]), a null bitmap of `ceil(columns / 8)` bytes only when some column is
//!   NULL, then each non-null column: fixed-width types as raw little-endian bytes,
//!   variable-width ones as a field length ([`crate::varint::encode_field_length`]) + raw bytes.
//!
//! A column value that does not fit the packed size limit is not packed: the packer returns
//! `false`, stores NULL in its place, and the caller writes it as a separate column cell.
//!
//! Decoders ([`decode_packed_row`] and friends) borrow from the input and report malformed
//! bytes as [`Error::Corruption`]; they never panic.

use std::collections::BTreeSet;

use crate::entry_type::ValueEntryType;
use crate::error::{Error, Result, corruption, take};
use crate::varint::{decode_field_length, decode_unsigned, encode_field_length, encode_unsigned};

/// V2 flag: the row has a null bitmap (`RowPackerV2::kHasNullsFlag`).
pub const HAS_NULLS_FLAG: u8 = 1;

/// V2 flag: the row was written by an UPDATE (`RowPackerV2::kIsUpdateFlag`).
pub const IS_UPDATE_FLAG: u8 = 2;

/// The packed size limit used when a limit of 0 is configured (`db_block_size_bytes`, 32 KB;
/// `PackedSizeLimit`).
pub const DEFAULT_PACKED_SIZE_LIMIT: usize = 32 * 1024;

/// Largest length a V2 field-length prefix can carry (the length is stored shifted left by 1
/// in 32 bits).
const MAX_FIELD_LENGTH: usize = (u32::MAX >> 1) as usize;

/// Which query layer owns the table; it decides which columns are variable-length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableKind {
    /// YCQL: every column is variable-length (each may carry its own TTL).
    Ycql,
    /// YSQL (and other non-CQL tables): nullable or variable-width columns are
    /// variable-length, the rest fixed.
    Ysql,
}

/// The data type of a packed column (the subset of YugabyteDB's `DataType` that can be
/// packed; collections are never packed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PackedDataType {
    /// `BOOL`: 1 byte.
    Bool,
    /// `INT8`: 1 byte.
    Int8,
    /// `INT16`: 2 bytes.
    Int16,
    /// `INT32`: 4 bytes.
    Int32,
    /// `INT64`: 8 bytes.
    Int64,
    /// `UINT32`: 4 bytes.
    UInt32,
    /// `UINT64`: 8 bytes.
    UInt64,
    /// `FLOAT`: 4 bytes.
    Float,
    /// `DOUBLE`: 8 bytes.
    Double,
    /// `STRING`: variable.
    String,
    /// `BINARY`: variable.
    Binary,
    /// `DECIMAL` (comparable encoding): variable.
    Decimal,
    /// `VARINT` (comparable encoding): variable.
    VarInt,
    /// `TIMESTAMP` (int64 µs): 8 bytes.
    Timestamp,
    /// `DATE` (uint32): 4 bytes.
    Date,
    /// `TIME` (int64): 8 bytes.
    Time,
    /// `UUID`: variable (stored as a slice).
    Uuid,
    /// `TIMEUUID`: variable.
    TimeUuid,
    /// `INET`: variable.
    Inet,
    /// `JSONB`: variable.
    Jsonb,
    /// `FROZEN` collection or UDT: variable.
    Frozen,
    /// `VECTOR`: variable.
    Vector,
    /// `BSON`: variable.
    Bson,
}

/// How a column's non-null value is laid out in a V2 packed row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum V2Layout {
    /// Raw little-endian native bytes of this width.
    Fixed(usize),
    /// Field length + raw bytes.
    VarLen,
}

impl PackedDataType {
    /// In-memory width of a fixed-length type (`TypeInfo::size`), `None` for variable-length
    /// types (`TypeInfo::var_length`).
    pub fn fixed_size(self) -> Option<usize> {
        use PackedDataType as T;
        match self {
            T::Bool | T::Int8 => Some(1),
            T::Int16 => Some(2),
            T::Int32 | T::UInt32 | T::Float | T::Date => Some(4),
            T::Int64 | T::UInt64 | T::Double | T::Timestamp | T::Time => Some(8),
            T::String
            | T::Binary
            | T::Decimal
            | T::VarInt
            | T::Uuid
            | T::TimeUuid
            | T::Inet
            | T::Jsonb
            | T::Frozen
            | T::Vector
            | T::Bson => None,
        }
    }

    /// Size of a fixed-length column's V1 data (`EncodedColumnSize`): 1 for bool (type byte
    /// only), 5 for int8/int16 (stored as `H` + int32), else 1 + the type's width. `None` for
    /// variable-length types.
    pub fn v1_encoded_size(self) -> Option<usize> {
        match self {
            PackedDataType::Bool => Some(1),
            PackedDataType::Int8 | PackedDataType::Int16 => Some(5),
            other => other.fixed_size().map(|size| size + 1),
        }
    }

    /// The V2 layout of this type (`VisitDataType` in `value_packing.h`), or `None` for types
    /// V2 cannot store (it is YSQL-only: timestamps, UUIDs, etc. never reach it).
    pub fn v2_layout(self) -> Option<V2Layout> {
        use PackedDataType as T;
        match self {
            T::Bool | T::Int8 => Some(V2Layout::Fixed(1)),
            T::Int16 => Some(V2Layout::Fixed(2)),
            T::Int32 | T::UInt32 | T::Float => Some(V2Layout::Fixed(4)),
            T::Int64 | T::UInt64 | T::Double => Some(V2Layout::Fixed(8)),
            T::String | T::Binary | T::Decimal | T::Vector | T::Bson => Some(V2Layout::VarLen),
            T::VarInt
            | T::Timestamp
            | T::Date
            | T::Time
            | T::Uuid
            | T::TimeUuid
            | T::Inet
            | T::Jsonb
            | T::Frozen => None,
        }
    }
}

/// A packable (non-key, non-collection, non-static) column as the schema describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnPackingSpec {
    /// Column id.
    pub id: i32,
    /// Column type.
    pub data_type: PackedDataType,
    /// Whether the column may be NULL.
    pub nullable: bool,
}

/// Where one column lives in a packed row (`ColumnPackingData`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnPackingData {
    /// Column id.
    pub id: i32,
    /// Number of variable-length columns before this one (index of its V1 end offset).
    pub num_varlen_columns_before: usize,
    /// Bytes of fixed-length columns between the previous variable-length column's end and
    /// this column's start (V1).
    pub offset_after_prev_varlen_column: usize,
    /// V1 data size of a fixed-length column; 0 for a variable-length column.
    pub size: usize,
    /// Whether the column may be NULL.
    pub nullable: bool,
    /// Column type.
    pub data_type: PackedDataType,
}

impl ColumnPackingData {
    /// Whether the column is variable-length (has a V1 end offset).
    pub fn is_varlen(&self) -> bool {
        self.size == 0
    }
}

/// The packing of one schema version: the packed columns in order, plus the ids of columns
/// that exist in the schema but are never packed (collections, static columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaPacking {
    columns: Vec<ColumnPackingData>,
    varlen_columns_count: usize,
    skipped_column_ids: BTreeSet<i32>,
}

impl SchemaPacking {
    /// Builds the packing of `columns` (the table's packable non-key columns, in schema order),
    /// as `SchemaPacking(TableType, Schema)`: a column is variable-length if the table is YCQL,
    /// or it is nullable, or its type has no fixed size.
    ///
    /// Column ids must be strictly ascending (the packer relies on it); otherwise
    /// `InvalidArgument`.
    pub fn new(table_kind: TableKind, columns: &[ColumnPackingSpec]) -> Result<Self> {
        Self::with_skipped_columns(table_kind, columns, &[])
    }

    /// Like [`SchemaPacking::new`], also recording `skipped_column_ids`: columns of the
    /// schema that are written as separate cells and never packed. Adding such a column to a
    /// packer returns `false` instead of an error.
    pub fn with_skipped_columns(
        table_kind: TableKind,
        columns: &[ColumnPackingSpec],
        skipped_column_ids: &[i32],
    ) -> Result<Self> {
        let mut packed = Vec::with_capacity(columns.len());
        let mut varlen_columns_count = 0;
        let mut offset_after_prev_varlen_column = 0;
        let mut prev_id: Option<i32> = None;
        let skipped: BTreeSet<i32> = skipped_column_ids.iter().copied().collect();
        for spec in columns {
            if prev_id.is_some_and(|prev| prev >= spec.id) {
                return Err(Error::InvalidArgument(format!(
                    "packed column ids must be strictly ascending, got {} after {:?}",
                    spec.id, prev_id
                )));
            }
            if skipped.contains(&spec.id) {
                return Err(Error::InvalidArgument(format!(
                    "column {} is both packed and skipped",
                    spec.id
                )));
            }
            prev_id = Some(spec.id);
            let fixed_size = match table_kind {
                TableKind::Ycql => None,
                TableKind::Ysql if spec.nullable => None,
                TableKind::Ysql => spec.data_type.v1_encoded_size(),
            };
            packed.push(ColumnPackingData {
                id: spec.id,
                num_varlen_columns_before: varlen_columns_count,
                offset_after_prev_varlen_column,
                size: fixed_size.unwrap_or(0),
                nullable: spec.nullable,
                data_type: spec.data_type,
            });
            match fixed_size {
                Some(size) => offset_after_prev_varlen_column += size,
                None => {
                    varlen_columns_count += 1;
                    offset_after_prev_varlen_column = 0;
                }
            }
        }
        Ok(SchemaPacking {
            columns: packed,
            varlen_columns_count,
            skipped_column_ids: skipped,
        })
    }

    /// The packed columns in order.
    pub fn columns(&self) -> &[ColumnPackingData] {
        &self.columns
    }

    /// Number of packed columns.
    pub fn num_columns(&self) -> usize {
        self.columns.len()
    }

    /// Number of variable-length columns.
    pub fn varlen_columns_count(&self) -> usize {
        self.varlen_columns_count
    }

    /// Size of the V1 end-offset header: 4 bytes per variable-length column.
    pub fn prefix_len(&self) -> usize {
        self.varlen_columns_count * 4
    }

    /// Size of the V2 null bitmap: `ceil(columns / 8)`.
    pub fn null_mask_size(&self) -> usize {
        self.columns.len().div_ceil(8)
    }

    /// Index of a packed column, or `None` if the column is not packed in this version.
    pub fn index_of(&self, column_id: i32) -> Option<usize> {
        self.columns.binary_search_by_key(&column_id, |c| c.id).ok()
    }

    /// Whether `column_id` is a column of the schema that is never packed.
    pub fn is_skipped_column(&self, column_id: i32) -> bool {
        self.skipped_column_ids.contains(&column_id)
    }

    /// Ids of the columns that are never packed, ascending.
    pub fn skipped_column_ids(&self) -> impl Iterator<Item = i32> + '_ {
        self.skipped_column_ids.iter().copied()
    }

    /// Whether every packed column can be stored in a V2 row.
    pub fn supports_v2(&self) -> bool {
        self.columns
            .iter()
            .all(|c| c.data_type.v2_layout().is_some())
    }

    /// Checks that every column has a V2 layout.
    fn check_v2(&self) -> Result<()> {
        self.columns
            .iter()
            .try_for_each(|c| v2_layout_of(c).map(|_| ()))
    }
}

/// A column's V2 layout; an error for a type V2 cannot store.
fn v2_layout_of(column: &ColumnPackingData) -> Result<V2Layout> {
    column.data_type.v2_layout().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "column {} of type {:?} cannot be packed in a V2 row",
            column.id, column.data_type
        ))
    })
}

/// A raw native value for a V2 packed row (`PackQLValueV2`). The variant must match the
/// column's [`PackedDataType`]: `Bool` for bool, `Int8`..`UInt64` for the integer types of that
/// width, `Float`/`Double`, and `VarLen` for string, binary, decimal (comparable encoding),
/// vector and bson.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PackedValueV2<'a> {
    /// 1 byte, 0 or 1.
    Bool(bool),
    /// 1 byte.
    Int8(i8),
    /// 2 bytes little-endian.
    Int16(i16),
    /// 4 bytes little-endian.
    Int32(i32),
    /// 8 bytes little-endian.
    Int64(i64),
    /// 4 bytes little-endian.
    UInt32(u32),
    /// 8 bytes little-endian.
    UInt64(u64),
    /// IEEE bits, 4 bytes little-endian.
    Float(f32),
    /// IEEE bits, 8 bytes little-endian.
    Double(f64),
    /// Raw bytes of a variable-length value.
    VarLen(&'a [u8]),
}

impl<'a> PackedValueV2<'a> {
    /// Whether this value may be stored in a column of `data_type`.
    pub fn matches(&self, data_type: PackedDataType) -> bool {
        use PackedDataType as T;
        matches!(
            (self, data_type),
            (PackedValueV2::Bool(_), T::Bool)
                | (PackedValueV2::Int8(_), T::Int8)
                | (PackedValueV2::Int16(_), T::Int16)
                | (PackedValueV2::Int32(_), T::Int32)
                | (PackedValueV2::Int64(_), T::Int64)
                | (PackedValueV2::UInt32(_), T::UInt32)
                | (PackedValueV2::UInt64(_), T::UInt64)
                | (PackedValueV2::Float(_), T::Float)
                | (PackedValueV2::Double(_), T::Double)
                | (
                    PackedValueV2::VarLen(_),
                    T::String | T::Binary | T::Decimal | T::Vector | T::Bson
                )
        )
    }

    /// Size of the raw value without any field-length prefix (`PackedQLValueSizeV2`).
    pub fn packed_size(&self) -> usize {
        match self {
            PackedValueV2::Bool(_) | PackedValueV2::Int8(_) => 1,
            PackedValueV2::Int16(_) => 2,
            PackedValueV2::Int32(_) | PackedValueV2::UInt32(_) | PackedValueV2::Float(_) => 4,
            PackedValueV2::Int64(_) | PackedValueV2::UInt64(_) | PackedValueV2::Double(_) => 8,
            PackedValueV2::VarLen(bytes) => bytes.len(),
        }
    }

    /// Appends the raw value (no field-length prefix) to `out`.
    pub fn append_raw(&self, out: &mut Vec<u8>) {
        match *self {
            PackedValueV2::Bool(v) => out.push(u8::from(v)),
            PackedValueV2::Int8(v) => out.extend_from_slice(&v.to_le_bytes()),
            PackedValueV2::Int16(v) => out.extend_from_slice(&v.to_le_bytes()),
            PackedValueV2::Int32(v) => out.extend_from_slice(&v.to_le_bytes()),
            PackedValueV2::Int64(v) => out.extend_from_slice(&v.to_le_bytes()),
            PackedValueV2::UInt32(v) => out.extend_from_slice(&v.to_le_bytes()),
            PackedValueV2::UInt64(v) => out.extend_from_slice(&v.to_le_bytes()),
            PackedValueV2::Float(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
            PackedValueV2::Double(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
            PackedValueV2::VarLen(bytes) => out.extend_from_slice(bytes),
        }
    }

    /// The raw value bytes (no field-length prefix), as a decoder returns them.
    pub fn to_raw(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.packed_size());
        self.append_raw(&mut out);
        out
    }

    /// Interprets a raw V2 column slice (as returned by [`decode_packed_row_v2`]) of a column
    /// of `data_type` (`UnpackQLValue`). A wrong size is `Corruption`; a type V2 cannot store
    /// is `InvalidArgument`.
    pub fn decode(data_type: PackedDataType, raw: &'a [u8]) -> Result<Self> {
        use PackedDataType as T;
        fn fixed<const N: usize>(raw: &[u8], data_type: PackedDataType) -> Result<[u8; N]> {
            raw.try_into().map_err(|_| {
                corruption!(
                    "packed {data_type:?} value must be {N} bytes, got {}",
                    raw.len()
                )
            })
        }
        Ok(match data_type {
            T::Bool => {
                let [b] = fixed::<1>(raw, data_type)?;
                PackedValueV2::Bool(b != 0)
            }
            T::Int8 => PackedValueV2::Int8(i8::from_le_bytes(fixed(raw, data_type)?)),
            T::Int16 => PackedValueV2::Int16(i16::from_le_bytes(fixed(raw, data_type)?)),
            T::Int32 => PackedValueV2::Int32(i32::from_le_bytes(fixed(raw, data_type)?)),
            T::Int64 => PackedValueV2::Int64(i64::from_le_bytes(fixed(raw, data_type)?)),
            T::UInt32 => PackedValueV2::UInt32(u32::from_le_bytes(fixed(raw, data_type)?)),
            T::UInt64 => PackedValueV2::UInt64(u64::from_le_bytes(fixed(raw, data_type)?)),
            T::Float => {
                PackedValueV2::Float(f32::from_bits(u32::from_le_bytes(fixed(raw, data_type)?)))
            }
            T::Double => {
                PackedValueV2::Double(f64::from_bits(u64::from_le_bytes(fixed(raw, data_type)?)))
            }
            T::String | T::Binary | T::Decimal | T::Vector | T::Bson => PackedValueV2::VarLen(raw),
            other => {
                return Err(Error::InvalidArgument(format!(
                    "type {other:?} cannot be stored in a V2 packed row"
                )));
            }
        })
    }
}

/// State shared by both packers (`RowPackerBase`).
#[derive(Debug)]
struct PackerState<'p> {
    packing: &'p SchemaPacking,
    packed_size_limit: usize,
    /// Index of the next column to pack.
    idx: usize,
    /// Offset of the V1 offset array / V2 null bitmap in `buf`.
    var_header_start: usize,
    /// Offset of the first column's data in `buf`.
    prefix_end: usize,
    buf: Vec<u8>,
}

impl<'p> PackerState<'p> {
    /// The id of the last column when columns are still missing at `complete()` (adding
    /// NULL for it fills every column before it with NULL too); an error if it is not nullable.
    fn unfilled_last_column(&self) -> Result<Option<i32>> {
        match self.packing.columns.last() {
            Some(last) if self.idx < self.packing.columns.len() => {
                if !last.nullable {
                    return Err(Error::InvalidArgument(format!(
                        "non nullable column {} was not specified",
                        last.id
                    )));
                }
                Ok(Some(last.id))
            }
            _ => Ok(None),
        }
    }

    fn new(packing: &'p SchemaPacking, packed_size_limit: usize, control_fields: &[u8]) -> Self {
        PackerState {
            packing,
            packed_size_limit: if packed_size_limit == 0 {
                DEFAULT_PACKED_SIZE_LIMIT
            } else {
                packed_size_limit
            },
            idx: 0,
            var_header_start: 0,
            prefix_end: 0,
            buf: control_fields.to_vec(),
        }
    }

    /// `DoAddValueImpl`: packs `column_id`, marking skipped nullable columns before it NULL.
    /// `pack` appends the value given the remaining budget and returns whether it fit;
    /// `update_header` records the column after its data was (or was not) appended.
    fn add_value(
        &mut self,
        column_id: i32,
        tail_size: usize,
        mut pack: impl FnMut(&ColumnPackingData, &mut Vec<u8>, usize) -> Result<bool>,
        mut update_header: impl FnMut(&mut Self, &ColumnPackingData, usize) -> Result<()>,
    ) -> Result<bool> {
        let packing = self.packing;
        let mut result = true;
        loop {
            let Some(column) = packing.columns.get(self.idx) else {
                if packing.is_skipped_column(column_id) {
                    return Ok(false);
                }
                return Err(Error::InvalidArgument(format!(
                    "adding extra column {column_id}, while already have {} of {} columns",
                    self.idx,
                    packing.columns.len()
                )));
            };
            if column.id > column_id {
                if packing.is_skipped_column(column_id) {
                    return Ok(false);
                }
                return Err(Error::InvalidArgument(format!(
                    "adding unexpected column {column_id}, while {} is expected",
                    column.id
                )));
            }
            let prev_size = self.buf.len();
            if column.id < column_id {
                if !column.nullable {
                    return Err(Error::InvalidArgument(format!(
                        "missing value for non nullable column {}, while adding {column_id}",
                        column.id
                    )));
                }
            } else {
                // The C++ computes this in unsigned arithmetic; a buffer already over the
                // limit wraps around to an effectively unlimited budget.
                let limit = self
                    .packed_size_limit
                    .wrapping_sub(prev_size)
                    .wrapping_sub(tail_size);
                result = pack(column, &mut self.buf, limit)?;
            }
            update_header(self, column, prev_size)?;
            self.idx += 1;
            if column.id == column_id {
                return Ok(result);
            }
        }
    }

    fn next_column_id(&self) -> Option<i32> {
        self.packing.columns.get(self.idx).map(|c| c.id)
    }
}

/// Writes the V1 end offset of a variable-length column, or checks a fixed column's size.
fn update_header_v1(
    state: &mut PackerState<'_>,
    column: &ColumnPackingData,
    prev_size: usize,
) -> Result<()> {
    if column.is_varlen() {
        let end = u32::try_from(state.buf.len() - state.prefix_end)
            .map_err(|_| Error::InvalidArgument("packed row data exceeds 4 GiB".to_string()))?;
        let at = state.var_header_start + column.num_varlen_columns_before * 4;
        let slot = state
            .buf
            .get_mut(at..at + 4)
            .ok_or_else(|| Error::InvalidArgument("packed row header out of range".into()))?;
        slot.copy_from_slice(&end.to_le_bytes());
    } else if prev_size + column.size != state.buf.len() {
        return Err(Error::InvalidArgument(format!(
            "wrong encoded size {} for fixed-size column {} (expected {})",
            state.buf.len() - prev_size,
            column.id,
            column.size
        )));
    }
    Ok(())
}

/// Marks a V2 column NULL when nothing was appended for it.
fn update_header_v2(
    state: &mut PackerState<'_>,
    _column: &ColumnPackingData,
    prev_size: usize,
) -> Result<()> {
    if prev_size == state.buf.len() {
        let at = state.var_header_start + state.idx / 8;
        let byte = state
            .buf
            .get_mut(at)
            .ok_or_else(|| Error::InvalidArgument("packed row null mask out of range".into()))?;
        *byte |= 1 << (state.idx % 8);
    }
    Ok(())
}

/// Whether V1 column data means NULL (`PackedValueV1::IsNull`): empty, or a tombstone.
fn is_v1_null(data: &[u8]) -> bool {
    data.first()
        .is_none_or(|&b| b == ValueEntryType::Tombstone.as_u8())
}

/// Packs a row in the V1 format (`RowPackerV1`).
///
/// Add the columns in packing order with [`RowPackerV1::add_value`] (columns may be left out
/// if nullable; they are stored NULL), then call [`RowPackerV1::complete`]. After an error
/// the packer must be discarded.
#[derive(Debug)]
pub struct RowPackerV1<'p> {
    state: PackerState<'p>,
}

impl<'p> RowPackerV1<'p> {
    /// Starts a row of `schema_version` with `packing`. `row_control_fields` (already encoded,
    /// e.g. `t` + TTL) go before the `z`. A `packed_size_limit` of 0 means
    /// [`DEFAULT_PACKED_SIZE_LIMIT`]; the limit counts the whole value, control fields
    /// included.
    pub fn new(
        schema_version: u32,
        packing: &'p SchemaPacking,
        packed_size_limit: usize,
        row_control_fields: &[u8],
    ) -> Self {
        let mut state = PackerState::new(packing, packed_size_limit, row_control_fields);
        state.buf.push(ValueEntryType::PackedRowV1.as_u8());
        encode_unsigned(u64::from(schema_version), &mut state.buf);
        state.var_header_start = state.buf.len();
        state.prefix_end = state.var_header_start + packing.prefix_len();
        state.buf.resize(state.prefix_end, 0);
        RowPackerV1 { state }
    }

    /// Adds the value of `column_id`: its standard value encoding (type byte + payload),
    /// preceded by any per-column control fields. `None`, an empty slice or a tombstone
    /// (`X`...) is NULL, as in `PackedValueV1::IsNull`.
    ///
    /// Returns `Ok(false)` if the value was not packed: a variable-length value that would
    /// take the row over the size limit (the column is stored NULL and the caller must write
    /// it as a separate cell), or a column the packing skips. Packed columns between the
    /// previous one and `column_id` are stored NULL and must be nullable. A fixed-size column
    /// whose value has the wrong size, a NULL in a fixed-size column, or a column out of
    /// order is `InvalidArgument`.
    pub fn add_value(&mut self, column_id: i32, value: Option<&[u8]>) -> Result<bool> {
        self.add_value_with_tail(column_id, value, 0)
    }

    /// [`RowPackerV1::add_value`], reserving `tail_size` bytes of the size budget for columns
    /// still to come (used when repacking, where their sizes are known).
    pub fn add_value_with_tail(
        &mut self,
        column_id: i32,
        value: Option<&[u8]>,
        tail_size: usize,
    ) -> Result<bool> {
        let value = value.filter(|v| !is_v1_null(v));
        self.state.add_value(
            column_id,
            tail_size,
            |column, buf, limit| {
                let Some(value) = value else {
                    return Ok(true);
                };
                if value.len() > limit && column.is_varlen() {
                    return Ok(false);
                }
                buf.extend_from_slice(value);
                Ok(true)
            },
            update_header_v1,
        )
    }

    /// Id of the next column the packer expects, or `None` when all columns are packed.
    pub fn next_column_id(&self) -> Option<i32> {
        self.state.next_column_id()
    }

    /// Stores NULL for the columns not added yet (they must be nullable) and returns the
    /// encoded value (control fields + `z` + version + body).
    pub fn complete(mut self) -> Result<Vec<u8>> {
        if let Some(last) = self.state.unfilled_last_column()? {
            self.add_value(last, None)?;
        }
        Ok(self.state.buf)
    }
}

/// Packs a row in the V2 format (`RowPackerV2`, YSQL only).
///
/// Add the columns in packing order with [`RowPackerV2::add_value`], then call
/// [`RowPackerV2::complete`]. After an error the packer must be discarded.
#[derive(Debug)]
pub struct RowPackerV2<'p> {
    state: PackerState<'p>,
}

impl<'p> RowPackerV2<'p> {
    /// Starts a row of `schema_version` with `packing`; see [`RowPackerV1::new`] for the
    /// limit and control fields. `is_update` sets [`IS_UPDATE_FLAG`] (a row written by an
    /// UPDATE). A packing with a column type V2 cannot store is `InvalidArgument`.
    pub fn new(
        schema_version: u32,
        packing: &'p SchemaPacking,
        packed_size_limit: usize,
        row_control_fields: &[u8],
        is_update: bool,
    ) -> Result<Self> {
        packing.check_v2()?;
        let mut state = PackerState::new(packing, packed_size_limit, row_control_fields);
        state.buf.push(ValueEntryType::PackedRowV2.as_u8());
        encode_unsigned(u64::from(schema_version), &mut state.buf);
        state.buf.push(if is_update { IS_UPDATE_FLAG } else { 0 });
        state.var_header_start = state.buf.len();
        state.prefix_end = state.var_header_start + packing.null_mask_size();
        state.buf.resize(state.prefix_end, 0);
        Ok(RowPackerV2 { state })
    }

    /// Adds the value of `column_id`; `None` is NULL.
    ///
    /// Returns `Ok(false)` if the value was not packed: its raw size is over the remaining
    /// size budget (the column is stored NULL and the caller must write it as a separate
    /// cell), or the packing skips the column. Packed columns between the previous one and
    /// `column_id` are stored NULL and must be nullable. A value whose variant does not
    /// match the column type, or a column out of order, is `InvalidArgument`.
    pub fn add_value(&mut self, column_id: i32, value: Option<PackedValueV2<'_>>) -> Result<bool> {
        self.add_value_with_tail(column_id, value, 0)
    }

    /// [`RowPackerV2::add_value`], reserving `tail_size` bytes of the size budget for columns
    /// still to come (used when repacking, where their sizes are known).
    pub fn add_value_with_tail(
        &mut self,
        column_id: i32,
        value: Option<PackedValueV2<'_>>,
        tail_size: usize,
    ) -> Result<bool> {
        self.state.add_value(
            column_id,
            tail_size,
            |column, buf, limit| {
                let Some(value) = value else {
                    return Ok(true);
                };
                if !value.matches(column.data_type) {
                    return Err(Error::InvalidArgument(format!(
                        "value {value:?} does not match column {} of type {:?}",
                        column.id, column.data_type
                    )));
                }
                let size = value.packed_size();
                if size > limit {
                    return Ok(false);
                }
                // Every column's layout was checked in `new`.
                if column.data_type.v2_layout() == Some(V2Layout::VarLen) {
                    if size > MAX_FIELD_LENGTH {
                        return Err(Error::InvalidArgument(format!(
                            "value of {size} bytes is too long for a packed row"
                        )));
                    }
                    encode_field_length(size as u32, buf);
                }
                value.append_raw(buf);
                Ok(true)
            },
            update_header_v2,
        )
    }

    /// Id of the next column the packer expects, or `None` when all columns are packed.
    pub fn next_column_id(&self) -> Option<i32> {
        self.state.next_column_id()
    }

    /// Stores NULL for the columns not added yet (the last must be nullable), drops the null
    /// bitmap if no column is NULL (else sets [`HAS_NULLS_FLAG`]) and returns the encoded value.
    pub fn complete(mut self) -> Result<Vec<u8>> {
        if let Some(last) = self.state.unfilled_last_column()? {
            self.add_value(last, None)?;
        }
        let PackerState {
            mut buf,
            var_header_start,
            prefix_end,
            ..
        } = self.state;
        let has_nulls = buf
            .get(var_header_start..prefix_end)
            .is_some_and(|mask| mask.iter().any(|&b| b != 0));
        if has_nulls {
            if let Some(flags) = var_header_start.checked_sub(1).and_then(|i| buf.get_mut(i)) {
                *flags |= HAS_NULLS_FLAG;
            }
        } else {
            buf.drain(var_header_start..prefix_end);
        }
        Ok(buf)
    }
}

/// Packed row format version, from the value type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PackedRowVersion {
    /// `z` (`kPackedRowV1`).
    V1,
    /// `|` (`kPackedRowV2`).
    V2,
}

/// The start of a packed value: format version and schema version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PackedRowHeader {
    /// `z` or `|`.
    pub version: PackedRowVersion,
    /// Schema version whose [`SchemaPacking`] describes the body.
    pub schema_version: u32,
}

/// Parses the type byte and schema version of a packed value (control fields already
/// stripped, so `value` starts at `z` or `|`), returning the header and the body (for V2 it
/// starts with the flags byte).
pub fn parse_packed_row_header(value: &[u8]) -> Result<(PackedRowHeader, &[u8])> {
    let (&type_byte, rest) = value
        .split_first()
        .ok_or_else(|| corruption!("packed row: empty value"))?;
    let version = match ValueEntryType::from_u8(type_byte) {
        Some(ValueEntryType::PackedRowV1) => PackedRowVersion::V1,
        Some(ValueEntryType::PackedRowV2) => PackedRowVersion::V2,
        _ => {
            return Err(corruption!(
                "packed row: type byte {type_byte:#04x} is not z or |"
            ));
        }
    };
    let (schema_version, body) = decode_unsigned(rest)?;
    let schema_version = u32::try_from(schema_version)
        .map_err(|_| corruption!("packed row: schema version {schema_version} exceeds 32 bits"))?;
    Ok((
        PackedRowHeader {
            version,
            schema_version,
        },
        body,
    ))
}

/// The schema version of a packed value starting at `z`/`|`, and the body after it, so a
/// caller can pick the [`SchemaPacking`].
pub fn packed_row_schema_version(value: &[u8]) -> Result<(u32, &[u8])> {
    parse_packed_row_header(value).map(|(header, body)| (header.schema_version, body))
}

/// Each packed column's `(id, data)` in packing order, `None` data = NULL, borrowed from the
/// packed value.
pub type PackedColumns<'a> = Vec<(i32, Option<&'a [u8]>)>;

/// A decoded packed row: each packed column's id and data (`None` = NULL), borrowed from
/// the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedPackedRow<'a> {
    /// Format and schema version.
    pub header: PackedRowHeader,
    /// V2 flags byte (0 for V1).
    pub flags: u8,
    /// `(column id, data)` in packing order. V1 data is the standard value encoding
    /// (with any per-column control fields); V2 data is the raw value
    /// ([`PackedValueV2::decode`]).
    pub columns: PackedColumns<'a>,
}

impl<'a> DecodedPackedRow<'a> {
    /// Whether [`IS_UPDATE_FLAG`] is set (V2 only).
    pub fn is_update(&self) -> bool {
        self.flags & IS_UPDATE_FLAG != 0
    }

    /// The data of `column_id`: `None` if the column is not part of this row's packing
    /// (e.g. added after the row was written: the reader uses the column's missing/default
    /// value), `Some(None)` if it is NULL.
    pub fn get(&self, column_id: i32) -> Option<Option<&'a [u8]>> {
        self.columns
            .binary_search_by_key(&column_id, |&(id, _)| id)
            .ok()
            .and_then(|i| self.columns.get(i))
            .map(|&(_, data)| data)
    }
}

/// Decodes a packed value that starts at `z`/`|` with the packing of its schema version
/// (the caller checks it matches, see [`decode_packed_row_with`]).
pub fn decode_packed_row<'a>(
    value: &'a [u8],
    packing: &SchemaPacking,
) -> Result<DecodedPackedRow<'a>> {
    let (header, body) = parse_packed_row_header(value)?;
    decode_body(header, body, packing)
}

/// Decodes a packed value that starts at `z`/`|`, asking `packing_for(schema_version)` for
/// the packing; a version it does not know is `Corruption`.
pub fn decode_packed_row_with<'a, 'p>(
    value: &'a [u8],
    packing_for: impl FnOnce(u32) -> Option<&'p SchemaPacking>,
) -> Result<DecodedPackedRow<'a>> {
    let (header, body) = parse_packed_row_header(value)?;
    let packing = packing_for(header.schema_version).ok_or_else(|| {
        corruption!(
            "packed row: no schema packing for version {}",
            header.schema_version
        )
    })?;
    decode_body(header, body, packing)
}

fn decode_body<'a>(
    header: PackedRowHeader,
    body: &'a [u8],
    packing: &SchemaPacking,
) -> Result<DecodedPackedRow<'a>> {
    let (flags, columns) = match header.version {
        PackedRowVersion::V1 => (0, decode_packed_row_v1(body, packing)?),
        PackedRowVersion::V2 => decode_packed_row_v2(body, packing)?,
    };
    Ok(DecodedPackedRow {
        header,
        flags,
        columns,
    })
}

/// Decodes a V1 body (after the schema version): the end-offset array, then the column data.
/// Empty data and a tombstone (`X`) are NULL (`PackedValueV1::IsNull`). Offsets that are out of order or out of range, or bytes after the last column, are
/// `Corruption`.
pub fn decode_packed_row_v1<'a>(
    body: &'a [u8],
    packing: &SchemaPacking,
) -> Result<PackedColumns<'a>> {
    let (offsets, data) = take(body, packing.prefix_len(), "packed row V1 offsets")?;
    let end_offset = |idx: usize| -> Result<usize> {
        let bytes = offsets
            .get(idx * 4..idx * 4 + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .ok_or_else(|| corruption!("packed row V1: missing end offset {idx}"))?;
        Ok(u32::from_le_bytes(bytes) as usize)
    };
    let mut columns = Vec::with_capacity(packing.num_columns());
    let mut data_end = 0;
    for column in &packing.columns {
        let prev_end = match column.num_varlen_columns_before {
            0 => 0,
            n => end_offset(n - 1)?,
        };
        let start = prev_end
            .checked_add(column.offset_after_prev_varlen_column)
            .ok_or_else(|| corruption!("packed row V1: offset overflow"))?;
        let end = if column.is_varlen() {
            end_offset(column.num_varlen_columns_before)?
        } else {
            start
                .checked_add(column.size)
                .ok_or_else(|| corruption!("packed row V1: offset overflow"))?
        };
        let slice = data.get(start..end).ok_or_else(|| {
            corruption!(
                "packed row V1: column {} spans {start}..{end} of {} data bytes",
                column.id,
                data.len()
            )
        })?;
        columns.push((column.id, (!is_v1_null(slice)).then_some(slice)));
        data_end = end;
    }
    if data_end != data.len() {
        return Err(corruption!(
            "packed row V1: {} bytes after the last column",
            data.len().saturating_sub(data_end)
        ));
    }
    Ok(columns)
}

/// Decodes a V2 body (starting at the flags byte), returning the flags and each column's raw
/// data. A short body or bytes after the last column are `Corruption`; a packing with a type
/// V2 cannot store is `InvalidArgument`.
pub fn decode_packed_row_v2<'a>(
    body: &'a [u8],
    packing: &SchemaPacking,
) -> Result<(u8, PackedColumns<'a>)> {
    let (&flags, mut rest) = body
        .split_first()
        .ok_or_else(|| corruption!("packed row V2: missing flags byte"))?;
    let mut null_mask: &[u8] = &[];
    if flags & HAS_NULLS_FLAG != 0 {
        (null_mask, rest) = take(rest, packing.null_mask_size(), "packed row V2 null mask")?;
    }
    let mut columns = Vec::with_capacity(packing.num_columns());
    for (idx, column) in packing.columns.iter().enumerate() {
        // Checked per column rather than collected: this runs for every row read.
        let layout = v2_layout_of(column)?;
        let is_null = null_mask
            .get(idx / 8)
            .is_some_and(|&b| b & (1 << (idx % 8)) != 0);
        if is_null {
            columns.push((column.id, None));
            continue;
        }
        let value;
        (value, rest) = match layout {
            V2Layout::Fixed(size) => take(rest, size, "packed row V2 fixed-size column")?,
            V2Layout::VarLen => {
                let (len, after) = decode_field_length(rest)?;
                take(after, len as usize, "packed row V2 variable-size column")?
            }
        };
        columns.push((column.id, Some(value)));
    }
    if !rest.is_empty() {
        return Err(corruption!(
            "packed row V2: {} bytes after the last column",
            rest.len()
        ));
    }
    Ok((flags, columns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02X}")).collect()
    }

    fn spec(id: i32, data_type: PackedDataType, nullable: bool) -> ColumnPackingSpec {
        ColumnPackingSpec {
            id,
            data_type,
            nullable,
        }
    }

    /// `H` + int32 big-endian (the value encoding of int8/int16/int32).
    fn v1_int32(v: i32) -> Vec<u8> {
        let mut out = vec![b'H'];
        out.extend_from_slice(&v.to_be_bytes());
        out
    }

    /// `I` + int64 big-endian.
    fn v1_int64(v: i64) -> Vec<u8> {
        let mut out = vec![b'I'];
        out.extend_from_slice(&v.to_be_bytes());
        out
    }

    /// `S` + raw bytes.
    fn v1_string(s: &[u8]) -> Vec<u8> {
        let mut out = vec![b'S'];
        out.extend_from_slice(s);
        out
    }

    #[test]
    fn schema_packing_layout() {
        use PackedDataType as T;
        let packing = SchemaPacking::new(
            TableKind::Ysql,
            &[
                spec(2, T::Int32, false),
                spec(3, T::String, false),
                spec(4, T::Bool, false),
                spec(5, T::Int16, false),
                spec(6, T::Int64, true),
                spec(7, T::Double, false),
            ],
        )
        .expect("packing");
        let layout: Vec<(usize, usize, usize)> = packing
            .columns()
            .iter()
            .map(|c| {
                (
                    c.num_varlen_columns_before,
                    c.offset_after_prev_varlen_column,
                    c.size,
                )
            })
            .collect();
        assert_eq!(
            layout,
            [
                (0, 0, 5),
                (0, 5, 0),
                (1, 0, 1),
                (1, 1, 5),
                (1, 6, 0),
                (2, 0, 9)
            ]
        );
        assert_eq!(packing.varlen_columns_count(), 2);
        assert_eq!(packing.prefix_len(), 8);
        assert_eq!(packing.null_mask_size(), 1);
        assert_eq!(packing.index_of(6), Some(4));
        assert_eq!(packing.index_of(1), None);

        let ycql =
            SchemaPacking::new(TableKind::Ycql, &[spec(1, T::Int32, false)]).expect("packing");
        assert!(ycql.columns()[0].is_varlen());

        assert!(
            SchemaPacking::new(
                TableKind::Ysql,
                &[spec(2, T::Int32, true), spec(2, T::Int32, true)]
            )
            .is_err()
        );
        assert!(
            SchemaPacking::with_skipped_columns(TableKind::Ysql, &[spec(2, T::Int32, true)], &[2])
                .is_err()
        );
    }

    /// vectors.md C1: hash h1 INT32, range r1 STRING, non-null STRING + INT8 (ids 2, 3),
    /// PGSQL packing, row TTL 1000 µs (= `t` + varint 1 ms), schema version 0.
    #[test]
    fn control_fields_c1() {
        use PackedDataType as T;
        let packing = SchemaPacking::new(
            TableKind::Ysql,
            &[spec(2, T::String, false), spec(3, T::Int8, false)],
        )
        .expect("packing");
        let ttl = [0x74, 0x81];

        let mut v1 = RowPackerV1::new(0, &packing, usize::MAX, &ttl);
        assert_eq!(v1.add_value(2, Some(&v1_string(b"privet"))), Ok(true));
        assert_eq!(v1.add_value(3, Some(&v1_int32(0x39))), Ok(true));
        let v1 = v1.complete().expect("complete");
        assert_eq!(hex(&v1), "74817A0007000000537072697665744800000039");

        let mut v2 = RowPackerV2::new(0, &packing, usize::MAX, &ttl, false).expect("packer");
        assert_eq!(
            v2.add_value(2, Some(PackedValueV2::VarLen(b"privet"))),
            Ok(true)
        );
        assert_eq!(v2.add_value(3, Some(PackedValueV2::Int8(0x39))), Ok(true));
        let v2 = v2.complete().expect("complete");
        assert_eq!(hex(&v2), "74817C00000C70726976657439");

        // Decoding (after stripping the control fields).
        let row = decode_packed_row(&v1[2..], &packing).expect("decode V1");
        assert_eq!(
            row.header,
            PackedRowHeader {
                version: PackedRowVersion::V1,
                schema_version: 0
            }
        );
        assert_eq!(row.get(2), Some(Some(&b"Sprivet"[..])));
        assert_eq!(row.get(3), Some(Some(&v1_int32(0x39)[..])));
        let row = decode_packed_row(&v2[2..], &packing).expect("decode V2");
        assert_eq!(row.get(2), Some(Some(&b"privet"[..])));
        assert_eq!(row.get(3), Some(Some(&[0x39u8][..])));
        assert_eq!(
            PackedValueV2::decode(T::Int8, &[0x39]),
            Ok(PackedValueV2::Int8(0x39))
        );
    }

    /// vectors.md C2: STRING + INT64 (random nullability), limit 20: the 42-byte string does
    /// not fit and is stored NULL.
    #[test]
    fn pack_with_limit_v2_c2() {
        use PackedDataType as T;
        for (n1, n2) in [(true, true), (true, false), (false, true), (false, false)] {
            let packing = SchemaPacking::new(
                TableKind::Ysql,
                &[spec(2, T::String, n1), spec(3, T::Int64, n2)],
            )
            .expect("packing");
            let mut packer = RowPackerV2::new(0, &packing, 20, &[], false).expect("packer");
            let long = [b'x'; 42];
            assert_eq!(
                packer.add_value(2, Some(PackedValueV2::VarLen(&long))),
                Ok(false)
            );
            assert_eq!(
                packer.add_value(3, Some(PackedValueV2::Int64(0x39))),
                Ok(true)
            );
            let packed = packer.complete().expect("complete");
            assert_eq!(hex(&packed), "7C0001013900000000000000");
            let row = decode_packed_row(&packed, &packing).expect("decode");
            assert_eq!(row.get(2), Some(None));
        }
        // With a reserved tail even a fixed-width V2 value can be refused: 20 - 4 - 9 < 8.
        let packing = SchemaPacking::new(
            TableKind::Ysql,
            &[spec(2, T::String, true), spec(3, T::Int64, true)],
        )
        .expect("packing");
        let mut packer = RowPackerV2::new(0, &packing, 20, &[], false).expect("packer");
        assert_eq!(packer.add_value(2, None), Ok(true));
        let value = Some(PackedValueV2::Int64(1));
        assert_eq!(packer.add_value_with_tail(3, value, 9), Ok(false));
        assert_eq!(packer.complete(), Ok(unhex("7C 00 01 03")));
        let mut packer = RowPackerV2::new(0, &packing, 20, &[], false).expect("packer");
        assert_eq!(packer.add_value_with_tail(3, value, 8), Ok(true));
    }

    #[test]
    fn pack_with_limit_v1() {
        use PackedDataType as T;
        let packing = SchemaPacking::new(
            TableKind::Ysql,
            &[spec(2, T::String, true), spec(3, T::Int64, false)],
        )
        .expect("packing");
        // Header: z, version, one offset = 6 bytes; 20 - 6 = 14 left.
        let mut packer = RowPackerV1::new(0, &packing, 20, &[]);
        assert_eq!(
            packer.add_value(2, Some(&v1_string(&[b'x'; 14]))),
            Ok(false)
        );
        // Fixed-size columns are never refused.
        assert_eq!(packer.add_value(3, Some(&v1_int64(0x39))), Ok(true));
        let packed = packer.complete().expect("complete");
        assert_eq!(
            hex(&packed),
            "7A00000000004900000000000000 39".replace(' ', "")
        );
        let row = decode_packed_row(&packed, &packing).expect("decode");
        assert_eq!(row.get(2), Some(None));

        let mut packer = RowPackerV1::new(0, &packing, 20, &[]);
        assert_eq!(packer.add_value(2, Some(&v1_string(&[b'x'; 13]))), Ok(true));
    }

    /// vectors.md C3: the flags byte for INSERT/UPDATE with and without NULLs.
    #[test]
    fn update_flag_v2_c3() {
        use PackedDataType as T;
        for (is_update, has_null, expected) in [
            (false, false, 0),
            (false, true, HAS_NULLS_FLAG),
            (true, false, IS_UPDATE_FLAG),
            (true, true, IS_UPDATE_FLAG | HAS_NULLS_FLAG),
        ] {
            let packing = SchemaPacking::new(
                TableKind::Ysql,
                &[spec(2, T::Int32, has_null), spec(3, T::String, has_null)],
            )
            .expect("packing");
            let mut packer =
                RowPackerV2::new(1, &packing, usize::MAX, &[], is_update).expect("packer");
            packer
                .add_value(2, Some(PackedValueV2::Int32(100)))
                .expect("add");
            let v2 = (!has_null).then_some(PackedValueV2::VarLen(b"test"));
            packer.add_value(3, v2).expect("add");
            let packed = packer.complete().expect("complete");
            let (header, body) = parse_packed_row_header(&packed).expect("header");
            assert_eq!(header.schema_version, 1);
            assert_eq!(body.first(), Some(&expected));
            let row = decode_packed_row(&packed, &packing).expect("decode");
            assert_eq!(row.flags, expected);
            assert_eq!(row.is_update(), is_update);
        }
    }

    /// vectors.md C4 (design doc): YSQL `t (k INT PRIMARY KEY, v1 INT, v2 TEXT, v3 BIGINT)`,
    /// all value columns nullable, schema version 1.
    #[test]
    fn design_doc_examples_c4() {
        use PackedDataType as T;
        let packing = SchemaPacking::new(
            TableKind::Ysql,
            &[
                spec(1, T::Int32, true),
                spec(2, T::String, true),
                spec(3, T::Int64, true),
            ],
        )
        .expect("packing");

        let mut v1 = RowPackerV1::new(1, &packing, 0, &[]);
        v1.add_value(1, Some(&v1_int32(42))).expect("add");
        v1.add_value(2, Some(&v1_string(b"hello"))).expect("add");
        v1.add_value(3, Some(&v1_int64(1_000_000))).expect("add");
        assert_eq!(
            v1.complete().expect("complete"),
            unhex("7A 01 05000000 0B000000 14000000 48 0000002A 53 68656C6C6F 49 00000000000F4240")
        );

        let mut v2 = RowPackerV2::new(1, &packing, 0, &[], false).expect("packer");
        v2.add_value(1, Some(PackedValueV2::Int32(42)))
            .expect("add");
        v2.add_value(2, Some(PackedValueV2::VarLen(b"hello")))
            .expect("add");
        v2.add_value(3, Some(PackedValueV2::Int64(1_000_000)))
            .expect("add");
        assert_eq!(
            v2.complete().expect("complete"),
            unhex("7C 01 00 2A000000 0A 68656C6C6F 40420F0000000000")
        );

        // (1, 42, NULL, NULL): explicit NULLs, and by leaving the columns out.
        for explicit in [true, false] {
            let mut v1 = RowPackerV1::new(1, &packing, 0, &[]);
            v1.add_value(1, Some(&v1_int32(42))).expect("add");
            let mut v2 = RowPackerV2::new(1, &packing, 0, &[], false).expect("packer");
            v2.add_value(1, Some(PackedValueV2::Int32(42)))
                .expect("add");
            if explicit {
                v1.add_value(2, None).expect("add");
                v1.add_value(3, None).expect("add");
                v2.add_value(2, None).expect("add");
                v2.add_value(3, None).expect("add");
            }
            let v1 = v1.complete().expect("complete");
            let v2 = v2.complete().expect("complete");
            assert_eq!(v1, unhex("7A 01 05000000 05000000 05000000 48 0000002A"));
            assert_eq!(v2, unhex("7C 01 01 06 2A000000"));
            let row = decode_packed_row(&v2, &packing).expect("decode");
            assert_eq!(
                row.columns,
                [(1, Some(&[0x2A, 0, 0, 0][..])), (2, None), (3, None)]
            );
            let row = decode_packed_row(&v1, &packing).expect("decode");
            assert_eq!(
                row.columns,
                [(1, Some(&v1_int32(42)[..])), (2, None), (3, None)]
            );
        }

        // YCQL `t (k INT PRIMARY KEY, v1 INT, v2 TEXT)` INSERT ... USING TTL 3600.
        let ycql = SchemaPacking::new(
            TableKind::Ycql,
            &[spec(1, T::Int32, true), spec(2, T::String, true)],
        )
        .expect("packing");
        let ttl = unhex("74 F036EE80");
        let mut packer = RowPackerV1::new(1, &ycql, 0, &ttl);
        packer
            .add_value(1, Some(&[ttl.clone(), v1_int32(42)].concat()))
            .expect("add");
        packer
            .add_value(2, Some(&[ttl.clone(), v1_string(b"hello")].concat()))
            .expect("add");
        let packed = packer.complete().expect("complete");
        assert_eq!(
            packed,
            unhex(
                "74 F036EE80 7A 01 0A000000 15000000 74 F036EE80 48 0000002A 74 F036EE80 53 \
                 68656C6C6F"
            )
        );
        let row =
            decode_packed_row_with(&packed[5..], |v| (v == 1).then_some(&ycql)).expect("decode");
        assert_eq!(
            row.get(1),
            Some(Some(&unhex("74 F036EE80 48 0000002A")[..]))
        );
        assert!(decode_packed_row_with(&packed[5..], |_| None).is_err());
    }

    #[test]
    fn column_order_and_skipped_columns() {
        use PackedDataType as T;
        let packing = SchemaPacking::with_skipped_columns(
            TableKind::Ysql,
            &[spec(2, T::Int32, true), spec(4, T::Int32, false)],
            &[3, 9],
        )
        .expect("packing");
        let mut packer = RowPackerV2::new(0, &packing, 0, &[], false).expect("packer");
        assert_eq!(packer.next_column_id(), Some(2));
        // A column the packing skips is refused without error; as in YugabyteDB, the nullable
        // packed columns below it (here 2) are stored NULL on the way.
        assert_eq!(
            packer.add_value(3, Some(PackedValueV2::Int32(1))),
            Ok(false)
        );
        assert_eq!(packer.next_column_id(), Some(4));
        assert_eq!(packer.add_value(4, Some(PackedValueV2::Int32(7))), Ok(true));
        assert_eq!(packer.next_column_id(), None);
        assert_eq!(packer.add_value(9, None), Ok(false));
        assert!(packer.add_value(10, None).is_err());
        let packed = packer.complete().expect("complete");
        assert_eq!(packed, unhex("7C 00 01 01 07000000"));

        // Missing non-nullable column.
        let mut packer = RowPackerV1::new(0, &packing, 0, &[]);
        assert!(packer.add_value(5, None).is_err());
        let packer = RowPackerV1::new(0, &packing, 0, &[]);
        assert!(packer.complete().is_err());
        // Unknown column below the next expected one.
        let mut packer = RowPackerV1::new(0, &packing, 0, &[]);
        packer.add_value(2, None).expect("add");
        assert!(packer.add_value(1, None).is_err());
        // Wrong fixed size, NULL in a fixed column.
        let mut packer = RowPackerV1::new(0, &packing, 0, &[]);
        assert!(packer.add_value(4, Some(b"H\x00\x00\x07")).is_err());
        let mut packer = RowPackerV1::new(0, &packing, 0, &[]);
        assert!(packer.add_value(4, None).is_err());
        // Type mismatch in V2.
        let mut packer = RowPackerV2::new(0, &packing, 0, &[], false).expect("packer");
        assert!(packer.add_value(2, Some(PackedValueV2::Int64(1))).is_err());
    }

    #[test]
    fn v1_tombstone_is_null() {
        let packing = SchemaPacking::new(TableKind::Ysql, &[spec(1, PackedDataType::String, true)])
            .expect("packing");
        let mut packer = RowPackerV1::new(0, &packing, 0, &[]);
        assert_eq!(packer.add_value(1, Some(b"X")), Ok(true));
        assert_eq!(packer.complete(), Ok(unhex("7A 00 00000000")));
        // A stored tombstone decodes as NULL too.
        let stored = unhex("7A 00 01000000 58");
        let row = decode_packed_row(&stored, &packing).expect("decode");
        assert_eq!(row.get(1), Some(None));
    }

    #[test]
    fn v2_rejects_unsupported_types() {
        let packing =
            SchemaPacking::new(TableKind::Ysql, &[spec(2, PackedDataType::Timestamp, true)])
                .expect("packing");
        assert!(!packing.supports_v2());
        assert!(RowPackerV2::new(0, &packing, 0, &[], false).is_err());
        assert!(decode_packed_row(&[b'|', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], &packing).is_err());
    }

    #[test]
    fn long_varlen_v2() {
        // Field lengths of 0x80 and more take 4 bytes (LongStringV2).
        let packing = SchemaPacking::new(
            TableKind::Ysql,
            &[
                spec(2, PackedDataType::String, true),
                spec(3, PackedDataType::String, true),
            ],
        )
        .expect("packing");
        let long = vec![b'q'; 0xFFFF];
        let mut packer = RowPackerV2::new(0, &packing, usize::MAX, &[], false).expect("packer");
        packer
            .add_value(2, Some(PackedValueV2::VarLen(&long)))
            .expect("add");
        packer
            .add_value(3, Some(PackedValueV2::VarLen(b"short")))
            .expect("add");
        let packed = packer.complete().expect("complete");
        assert_eq!(
            packed.get(3..7),
            Some(&((0xFFFFu32 << 1) | 1).to_le_bytes()[..])
        );
        let row = decode_packed_row(&packed, &packing).expect("decode");
        assert_eq!(row.get(2), Some(Some(&long[..])));
        assert_eq!(row.get(3), Some(Some(&b"short"[..])));
    }

    #[test]
    fn decoder_errors() {
        use PackedDataType as T;
        let packing = SchemaPacking::new(
            TableKind::Ysql,
            &[spec(1, T::Int32, true), spec(2, T::String, true)],
        )
        .expect("packing");
        // Not a packed row.
        assert!(parse_packed_row_header(b"S").is_err());
        assert!(parse_packed_row_header(b"").is_err());
        assert!(parse_packed_row_header(b"z").is_err());
        // V1: offsets out of range / decreasing / trailing bytes.
        assert!(decode_packed_row(&unhex("7A 00 05000000"), &packing).is_err());
        assert!(
            decode_packed_row(&unhex("7A 00 05000000 03000000 48 0000002A"), &packing).is_err()
        );
        assert!(
            decode_packed_row(&unhex("7A 00 05000000 05000000 48 0000002A FF"), &packing).is_err()
        );
        // V2: short bodies, trailing bytes.
        assert!(decode_packed_row(&unhex("7C 00"), &packing).is_err());
        assert!(decode_packed_row(&unhex("7C 00 01"), &packing).is_err());
        assert!(decode_packed_row(&unhex("7C 00 00 2A000000"), &packing).is_err());
        assert!(decode_packed_row(&unhex("7C 00 00 2A000000 04 61"), &packing).is_err());
        assert!(decode_packed_row(&unhex("7C 00 00 2A000000 02 61 62"), &packing).is_err());
        assert!(decode_packed_row(&unhex("7C 00 00 2A000000 03 61 62"), &packing).is_err());
        assert!(decode_packed_row(&unhex("7C 00 00 2A000000 02 61"), &packing).is_ok());
        assert!(decode_packed_row(&unhex("7C 00 01 03 00"), &packing).is_err());
        let all_null = unhex("7C 00 01 03");
        let row = decode_packed_row(&all_null, &packing).expect("all NULL");
        assert_eq!(row.columns, [(1, None), (2, None)]);
        // A row from an older schema version lacks newer columns: they are absent.
        let old = unhex("7C 00 00 2A000000 04 61 62");
        let row = decode_packed_row(&old, &packing).expect("decode");
        assert_eq!(row.get(3), None);
        assert_eq!(
            PackedValueV2::decode(T::Int32, &[1, 2]),
            Err(corruption!("packed Int32 value must be 4 bytes, got 2"))
        );
    }

    /// A column type and a value generator for property tests.
    fn arb_type() -> impl Strategy<Value = PackedDataType> {
        use PackedDataType as T;
        prop::sample::select(vec![
            T::Bool,
            T::Int8,
            T::Int16,
            T::Int32,
            T::Int64,
            T::UInt32,
            T::UInt64,
            T::Float,
            T::Double,
            T::String,
            T::Binary,
            T::Decimal,
            T::Timestamp,
            T::Uuid,
        ])
    }

    fn arb_schema(v2: bool) -> impl Strategy<Value = (TableKind, Vec<ColumnPackingSpec>)> {
        let kind = if v2 {
            Just(TableKind::Ysql).boxed()
        } else {
            prop_oneof![Just(TableKind::Ysql), Just(TableKind::Ycql)].boxed()
        };
        let types = arb_type().prop_filter("V2 type", move |t| !v2 || t.v2_layout().is_some());
        (
            kind,
            prop::collection::vec((types, any::<bool>(), 1..4i32), 0..12),
        )
            .prop_map(|(kind, cols)| {
                let mut id = 0;
                let specs = cols
                    .into_iter()
                    .map(|(data_type, nullable, gap)| {
                        id += gap;
                        spec(id, data_type, nullable)
                    })
                    .collect();
                (kind, specs)
            })
    }

    /// A V2 value of `data_type` from random bits.
    fn v2_value(data_type: PackedDataType, bits: u64, bytes: &[u8]) -> PackedValueV2<'_> {
        use PackedDataType as T;
        match data_type {
            T::Bool => PackedValueV2::Bool(bits & 1 == 1),
            T::Int8 => PackedValueV2::Int8(bits as i8),
            T::Int16 => PackedValueV2::Int16(bits as i16),
            T::Int32 => PackedValueV2::Int32(bits as i32),
            T::Int64 => PackedValueV2::Int64(bits as i64),
            T::UInt32 => PackedValueV2::UInt32(bits as u32),
            T::UInt64 => PackedValueV2::UInt64(bits),
            T::Float => PackedValueV2::Float(f32::from_bits(bits as u32)),
            T::Double => PackedValueV2::Double(f64::from_bits(bits)),
            _ => PackedValueV2::VarLen(bytes),
        }
    }

    /// A V1 value for a column: exactly the fixed size, or non-empty bytes for varlen.
    fn v1_value(column: &ColumnPackingData, bytes: &[u8]) -> Vec<u8> {
        if column.is_varlen() {
            let mut v = vec![b'S'];
            v.extend_from_slice(bytes);
            v
        } else {
            let mut v = vec![b'H'];
            v.extend_from_slice(bytes);
            v.resize(column.size, 0x5A);
            v
        }
    }

    type Cells = Vec<(bool, u64, Vec<u8>)>;

    fn arb_cells() -> impl Strategy<Value = Cells> {
        prop::collection::vec(
            (
                any::<bool>(),
                any::<u64>(),
                prop::collection::vec(any::<u8>(), 0..200),
            ),
            12,
        )
    }

    proptest! {
        #[test]
        fn v1_round_trip(
            (kind, specs) in arb_schema(false),
            cells in arb_cells(),
            version in any::<u32>(),
            control in prop::collection::vec(any::<u8>(), 0..4),
            limit in prop_oneof![Just(0usize), 1usize..400],
        ) {
            let packing = SchemaPacking::new(kind, &specs).expect("packing");
            let mut packer = RowPackerV1::new(version, &packing, limit, &control);
            let mut expected = Vec::new();
            for (column, (null, _, bytes)) in packing.columns().iter().zip(&cells) {
                let value = (!(*null && column.nullable)).then(|| v1_value(column, bytes));
                let fit = packer.add_value(column.id, value.as_deref()).expect("add");
                expected.push((column.id, if fit { value } else { None }));
            }
            let packed = packer.complete().expect("complete");
            prop_assert!(packed.starts_with(&control));
            let row = decode_packed_row(&packed[control.len()..], &packing).expect("decode");
            prop_assert_eq!(row.header.schema_version, version);
            let decoded: Vec<(i32, Option<Vec<u8>>)> =
                row.columns.iter().map(|&(id, v)| (id, v.map(<[u8]>::to_vec))).collect();
            prop_assert_eq!(decoded, expected);
        }

        #[test]
        fn v2_round_trip(
            (_, specs) in arb_schema(true),
            cells in arb_cells(),
            version in any::<u32>(),
            limit in prop_oneof![Just(0usize), 1usize..400],
            is_update in any::<bool>(),
        ) {
            let packing = SchemaPacking::new(TableKind::Ysql, &specs).expect("packing");
            let mut packer =
                RowPackerV2::new(version, &packing, limit, &[], is_update).expect("packer");
            let mut expected = Vec::new();
            for (column, (null, bits, bytes)) in packing.columns().iter().zip(&cells) {
                let value = (!*null).then(|| v2_value(column.data_type, *bits, bytes));
                let fit = packer.add_value(column.id, value).expect("add");
                expected.push((column.id, value.filter(|_| fit).map(|v| v.to_raw())));
            }
            let packed = packer.complete().expect("complete");
            let row = decode_packed_row(&packed, &packing).expect("decode");
            prop_assert_eq!(row.header.schema_version, version);
            prop_assert_eq!(row.is_update(), is_update);
            prop_assert_eq!(
                row.flags & HAS_NULLS_FLAG != 0,
                expected.iter().any(|(_, v)| v.is_none())
            );
            for ((id, data), column) in row.columns.iter().zip(packing.columns()) {
                if let Some(raw) = data {
                    let value = PackedValueV2::decode(column.data_type, raw).expect("value");
                    prop_assert_eq!(&value.to_raw()[..], *raw);
                }
                prop_assert_eq!(*id, column.id);
            }
            let decoded: Vec<(i32, Option<Vec<u8>>)> =
                row.columns.iter().map(|&(id, v)| (id, v.map(<[u8]>::to_vec))).collect();
            prop_assert_eq!(decoded, expected);
        }

        #[test]
        fn decoders_never_panic(
            (kind, specs) in arb_schema(false),
            bytes in prop::collection::vec(any::<u8>(), 0..64),
            v2 in any::<bool>(),
        ) {
            let packing = SchemaPacking::new(kind, &specs).expect("packing");
            let mut value = vec![if v2 { b'|' } else { b'z' }];
            value.extend_from_slice(&bytes);
            let _ = decode_packed_row(&value, &packing);
            let _ = decode_packed_row(&bytes, &packing);
            let _ = decode_packed_row_v1(&bytes, &packing);
            let _ = decode_packed_row_v2(&bytes, &packing);
            let _ = packed_row_schema_version(&bytes);
            for t in [PackedDataType::Int64, PackedDataType::Float, PackedDataType::Bool] {
                let _ = PackedValueV2::decode(t, &bytes);
            }
        }

        #[test]
        fn decoding_valid_rows_with_corrupted_bytes_never_panics(
            (_, specs) in arb_schema(true),
            cells in arb_cells(),
            flip in any::<(usize, u8)>(),
            cut in any::<usize>(),
        ) {
            let packing = SchemaPacking::new(TableKind::Ysql, &specs).expect("packing");
            let mut v1 = RowPackerV1::new(3, &packing, 0, &[]);
            let mut v2 = RowPackerV2::new(3, &packing, 0, &[], false).expect("packer");
            for (column, (_, bits, bytes)) in packing.columns().iter().zip(&cells) {
                v1.add_value(column.id, Some(&v1_value(column, bytes))).expect("add");
                v2.add_value(column.id, Some(v2_value(column.data_type, *bits, bytes)))
                    .expect("add");
            }
            for mut packed in [v1.complete().expect("v1"), v2.complete().expect("v2")] {
                let len = packed.len();
                if let Some(b) = packed.get_mut(flip.0 % len) {
                    *b ^= flip.1;
                }
                let _ = decode_packed_row(&packed, &packing);
                packed.truncate(cut % (len + 1));
                let _ = decode_packed_row(&packed, &packing);
            }
        }
    }
}
