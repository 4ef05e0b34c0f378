//! Decoding arbitrary bytes as saved runs of deleted documents never panics; what decodes
//! re-encodes to the same bytes (the format has one encoding per value).
#![no_main]

use docdb::SavedSpans;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(saved) = SavedSpans::decode(data) {
        assert_eq!(saved.encode(), data, "input {data:02x?}");
        let _ = saved.span_count();
    }
});
