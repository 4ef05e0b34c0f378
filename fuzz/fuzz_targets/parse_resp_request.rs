//! RESP request parsing never panics, `check_request` and `parse_request` agree, and a parsed
//! non-empty multibulk request re-encodes to the bytes it came from.
#![no_main]

use docdb_redis::frame::{Frame, Limits, check_request, parse_request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_bulk_len: 1 << 16,
        max_multibulk_len: 1 << 10,
        max_inline_len: 1 << 12,
        unauthenticated: data.first().is_some_and(|b| b & 1 == 1),
    };
    let checked = check_request(data, &limits);
    let parsed = parse_request(data, &limits);
    assert_eq!(checked, parsed.as_ref().map(|(_, len)| *len).map_err(Clone::clone));
    if let Ok((args, len)) = parsed {
        // Counts of zero or less are empty requests (as in Redis); others are canonical.
        if data.first() == Some(&b'*') && !args.is_empty() {
            let again = Frame::Array(args.into_iter().map(Frame::Bulk).collect()).encode();
            assert_eq!(again, &data[..len]);
        }
    }
    let _ = Frame::parse(data);
});
