//! The decoders Lua scripts run on untrusted bytes (`cjson.decode`, `cmsgpack.unpack`,
//! `struct.unpack`) return values or a Lua error, and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    docdb_redis::script::decode_untrusted(data).expect("a Lua state with the libraries");
});
