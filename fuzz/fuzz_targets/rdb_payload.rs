//! RESTORE's payload decoder (`docdb_redis::rdb::decode_payload`) and FUNCTION RESTORE's
//! (`decode_functions`) return a value or an error on any bytes, and never panic. Most random inputs fail the CRC check, so each
//! input is also decoded with a valid footer appended, reaching the object decoders.
#![no_main]

use docdb_redis::rdb::{
    RDB_VERSION, crc64, decode_functions, decode_payload, encode_functions, encode_payload,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_payload(data);
    let mut framed = data.to_vec();
    framed.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&framed);
    framed.extend_from_slice(&crc.to_le_bytes());
    if let Ok(codes) = decode_functions(&framed) {
        let again = decode_functions(&encode_functions(codes.iter().map(Vec::as_slice)));
        assert_eq!(again, Ok(codes), "re-encoded function payload differs");
    }
    if let Ok(value) = decode_payload(&framed) {
        // What decodes encodes, and that decodes again.
        let again = decode_payload(&encode_payload(&value));
        assert!(again.is_ok(), "re-encoded payload does not decode: {again:?}");
    }
});
