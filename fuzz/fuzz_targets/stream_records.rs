//! The decoders of a stream's stored records (`docdb_redis::stream`: its state, groups,
//! pending entries, consumers and entries) return a value or an error on any bytes, never
//! panic, and what they accept encodes back to the same bytes (each format has one form).
#![no_main]

use docdb_redis::stream::{Consumer, Group, Meta, Pending, decode_fields, encode_fields};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(meta) = Meta::decode(data) {
        assert_eq!(meta.encode(), data);
    }
    if let Ok(group) = Group::decode(data) {
        assert_eq!(group.encode(), data);
    }
    if let Ok(pending) = Pending::decode(data) {
        assert_eq!(pending.encode(), data);
    }
    if let Ok(consumer) = Consumer::decode(data) {
        assert_eq!(consumer.encode(), data);
    }
    if let Ok(pairs) = decode_fields(data) {
        assert_eq!(encode_fields(&pairs), data);
    }
});
