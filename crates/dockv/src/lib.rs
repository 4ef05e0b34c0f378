//! DocDB's key/value encodings, byte for byte as YugabyteDB writes them.
//!
//! This crate is pure: no I/O, no storage engine. It knows the type bytes
//! ([`entry_type`]), primitive key encodings ([`key_entry`]), varints ([`varint`]),
//! hybrid times ([`hybrid_time`]), DocKeys and SubDocKeys ([`doc_key`]), values and their
//! control fields ([`value`]), packed rows ([`packed_row`]), the 16-bit hash and
//! partitioning ([`hash`]), and YugabyteDB's debug strings. The byte layout is documented
//! in `shared/spec/format.md`; section numbers in the docs refer to it.
//!
//! Every decoder returns an [`Error`] on malformed input and never panics.

pub mod doc_key;
pub mod entry_type;
pub mod error;
pub mod escape;
pub mod hash;
pub mod hybrid_time;
pub mod key_entry;
pub mod numeric;
pub mod packed_row;
pub mod partition;
pub mod value;
pub mod varint;
pub mod zero_encoding;

pub use entry_type::{KeyEntryType, ValueEntryType};
pub use error::{Error, Result};
pub use hybrid_time::{DocHybridTime, HybridTime};
pub use key_entry::{KeyEntryValue, SortOrder};
pub use numeric::{Decimal, VarInt};
