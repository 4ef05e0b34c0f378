//! Decoding arbitrary bytes as a value never panics; a decoded value re-encodes and decodes
//! to the same value.
#![no_main]

use dockv::value::Value;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = Value::decode(data) {
        let again = Value::decode(&value.encode()).expect("re-decode");
        assert_eq!(format!("{again:?}"), format!("{value:?}"), "input {data:02x?}");
        let _ = value.to_string();
    }
});
