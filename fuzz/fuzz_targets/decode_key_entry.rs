//! Decoding arbitrary bytes as key components never panics, and whatever decodes re-encodes
//! to the bytes it came from.
#![no_main]

use dockv::KeyEntryValue;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((value, rest)) = KeyEntryValue::decode(data) {
        let consumed = &data[..data.len() - rest.len()];
        let mut again = Vec::new();
        value.encode_to(&mut again);
        let (decoded, tail) = KeyEntryValue::decode(&again).expect("re-decode");
        assert!(tail.is_empty());
        assert_eq!(format!("{decoded:?}"), format!("{value:?}"), "input {consumed:02x?}");
        let _ = value.to_string();
    }
});
