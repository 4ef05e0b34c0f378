//! Decoding arbitrary bytes as a SubDocKey never panics; a decoded key re-encodes and decodes
//! to the same key. The path bloom filters' prefix extractor never panics either, and every
//! key that decodes as a record (a path at a hybrid time) is in its domain, with its path as
//! prefix: a record outside it would be missing from the filters, and lookups would miss it.
//! Component boundaries found below any of a key's leading paths are those of the whole key.
#![no_main]

use dockv::doc_key::{SubDocKey, component_ends, component_ends_below};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let in_domain = docdb::is_versioned_record(data);
    let prefix = docdb::sub_doc_key_prefix(data);
    if let Ok(key) = SubDocKey::decode(data) {
        let again = SubDocKey::decode(&key.encode()).expect("re-decode");
        assert_eq!(format!("{again:?}"), format!("{key:?}"), "input {data:02x?}");
        let _ = key.to_string();
        if key.time.is_some() && data[0] >= docdb::FIRST_RECORD_BYTE {
            assert!(in_domain, "record outside the domain: {data:02x?}");
            let path = SubDocKey::decode(prefix).expect("the prefix decodes");
            let want = SubDocKey { time: None, ..key };
            assert_eq!(format!("{path:?}"), format!("{want:?}"), "input {data:02x?}");
        }
    }
    let _ = dockv::hybrid_time::DocHybridTime::decode_from_end(data);
    let mut whole = Vec::new();
    if let Ok(time) = component_ends(data, &mut whole) {
        let mut below = Vec::new();
        for depth in 0..whole.len() {
            let parsed = component_ends_below(data, &whole[..=depth], &mut below);
            assert_eq!(parsed, Ok(time), "input {data:02x?}");
            assert_eq!(below, whole, "input {data:02x?}");
        }
    }
});
