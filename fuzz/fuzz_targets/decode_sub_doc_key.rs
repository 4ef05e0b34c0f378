//! Decoding arbitrary bytes as a SubDocKey never panics; a decoded key re-encodes and decodes
//! to the same key.
#![no_main]

use dockv::doc_key::SubDocKey;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(key) = SubDocKey::decode(data) {
        let again = SubDocKey::decode(&key.encode()).expect("re-decode");
        assert_eq!(format!("{again:?}"), format!("{key:?}"), "input {data:02x?}");
        let _ = key.to_string();
    }
    let _ = dockv::hybrid_time::DocHybridTime::decode_from_end(data);
});
