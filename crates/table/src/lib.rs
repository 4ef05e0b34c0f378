//! Tables on DocDB: schemas and a persistent catalog, YCQL/YSQL row semantics, collections,
//! jsonb, TTLs and packed rows, byte-for-byte in YugabyteDB's format (shared/spec/format.md
//! §3 keys, §5 values, §8 read path, §9 packed rows, §11 collections).
//!
//! Every row is a document: its DocKey holds the primary key (hash, hashed components, range
//! components), each non-key column is a `ColumnId` subkey, and an INSERT adds the liveness
//! column `SystemColumnId(0)` or writes one packed row. The pieces:
//!
//! - [`types`]: column types ([`DataType`]) and values ([`Datum`]); [`codec`]: how each type
//!   is encoded as a key component, a value, hash input and in packed rows.
//! - [`schema`]: columns with stable ids, key layout, table options, schema versions and
//!   their packings; [`table`]: a table handle and its DocKeys; [`catalog`]: the catalog,
//!   stored as DocDb metadata records.
//! - [`mod@write`]: INSERT / UPDATE / DELETE, collections, jsonb, TTL and user timestamps, as one
//!   atomic [`TableBatch`]; [`read`] and [`row`]: a row's visible records and its values;
//!   [`query`]: SELECT with key ranges, projections, LIMIT and paging at any hybrid time.
//! - [`TableDb`] ties them to one `DocDb`; [`dump`] prints packed rows with their schema.
//!
//! Choices where YugabyteDB's format leaves room or this project differs:
//!
//! - Column ids follow schema order from 0 (key columns first), as in release builds of
//!   YugabyteDB; added columns take fresh ids, never reused.
//! - A DocDb is one tablet: at most one table owns the un-prefixed key space, any number of
//!   colocated tables live under `ColocationId` prefixes (the table id unless given).
//! - A YSQL table without a primary key gets a hidden `ybrowid` blob hash column: 16 bytes,
//!   the INSERT's hybrid time then a per-process sequence number, both big-endian.
//! - jsonb is stored as a subdocument (the storage-model seed's layout), see [`jsonb`].
//! - A YCQL INSERT is packed only when it gives every non-static column (a packed row hides
//!   all older cells of its row); see [`mod@write`].
//! - TTLs follow YugabyteDB's reader: a packed row's TTL is its liveness's, never inherited
//!   by later cells; collection elements inherit their column's; YSQL ignores TTLs.
//!
//! This crate sits on `docdb` and `engine` only; it must not depend on RocksDB.

pub mod catalog;
pub mod codec;
pub mod db;
pub mod dump;
pub mod error;
pub mod jsonb;
pub mod query;
pub mod read;
pub mod repack;
pub mod row;
pub mod schema;
pub mod table;
pub mod types;
pub mod write;

pub use catalog::AlterTable;
pub use db::{RowReader, TableDb};
pub use error::{Error, Result};
pub use query::{PagingState, ResultPage, Select, Selector};
pub use row::{CellValue, RowValues};
pub use schema::{
    ColumnKind, ColumnSpec, Flavour, PackedFormat, RangeOrder, TableOptions, TableSpec,
};
pub use table::Table;
pub use types::{DataType, Datum};
pub use write::{TableBatch, Update, WriteOptions};
