//! Numbers as Redis parses and prints them.

use crate::error::{CmdError, CmdResult};

/// A decimal integer as Redis's `string2ll` accepts it (no spaces, no `+`, no leading zeros).
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    crate::frame::parse_int(bytes)
}

/// An integer argument, or Redis's "not an integer" error.
pub fn int_arg(bytes: &[u8]) -> CmdResult<i64> {
    parse_i64(bytes).ok_or(CmdError::NotInteger)
}

/// A float as Redis's `getDoubleFromObject` accepts it (C's `strtod` over the whole
/// string): no leading space, no NaN, hexadecimal allowed, and a number too large
/// (`ERANGE` with an infinite result, `1e400`) or too small (`ERANGE` with a zero result,
/// `1e-400`) refused; a subnormal result is kept.
pub fn parse_f64(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if unsigned.starts_with(['+', '-']) {
        return None;
    }
    let (value, digits) = match unsigned.get(..2) {
        Some("0x" | "0X") => (parse_hex(&unsigned[2..])?, &unsigned[2..]),
        _ => (unsigned.parse::<f64>().ok()?, unsigned),
    };
    let mantissa = digits
        .split(['e', 'E', 'p', 'P'])
        .next()
        .unwrap_or_default();
    let is_word = mantissa.starts_with(|c: char| c.is_ascii_alphabetic());
    let nonzero = mantissa.bytes().any(|b| b.is_ascii_hexdigit() && b != b'0');
    let overflow = value.is_infinite() && !is_word;
    let underflow = value == 0.0 && nonzero && !is_word;
    if value.is_nan() || overflow || underflow {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// The value of a C hexadecimal float after its `0x`: hex digits with an optional fraction,
/// then an optional binary exponent `p±n`.
fn parse_hex(text: &str) -> Option<f64> {
    let (digits, exponent) = match text.split_once(['p', 'P']) {
        Some((digits, exp)) => (digits, exp.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut value = 0.0f64;
    for c in whole.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in fraction.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exponent))
}

/// A float argument, or Redis's "not a valid float" error.
pub fn float_arg(bytes: &[u8]) -> CmdResult<f64> {
    parse_f64(bytes).ok_or(CmdError::NotFloat)
}

/// A double as Redis 7.0 replies with it (`d2string`): integers in ±2^52 without a fraction,
/// `inf`/`-inf`, otherwise `%.17g`.
pub fn format_double(value: f64) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.into();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.into();
    }
    const LIMIT: f64 = 4_503_599_627_370_496.0; // 2^52
    if value > -LIMIT && value < LIMIT && value == value.trunc() {
        return format!("{}", value as i64);
    }
    format_g17(value)
}

/// C's `%.17g`: 17 significant digits, scientific notation outside 1e-4..1e17, trailing
/// zeros removed.
fn format_g17(value: f64) -> String {
    format_g(value, 17)
}

/// C's `%.<precision>g` of a finite number: `precision` significant digits, scientific
/// notation outside 1e-4..1e<precision>, trailing zeros removed (`%.14g` is Lua 5.1's
/// `tostring`).
pub fn format_g(value: f64, precision: usize) -> String {
    let precision = precision.clamp(1, 40) as i32;
    let sci = format!("{:.*e}", (precision - 1) as usize, value);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..precision).contains(&exp) {
        let mantissa = trim_fraction(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (precision - 1 - exp).max(0) as usize;
    trim_fraction(&format!("{value:.decimals$}")).to_string()
}

fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// `INCRBYFLOAT`: `current + increment` in x87 extended precision, printed as Redis
/// prints it (see [`crate::long_double`]).
pub fn incr_by_float(current: &[u8], increment: &[u8]) -> CmdResult<String> {
    use crate::long_double::{Invalid, LongDouble};
    let parse = |text: &[u8]| match LongDouble::parse(text) {
        Ok(value) => Ok(Some(value)),
        // `inf` parses, and then the sum is infinite or NaN.
        Err(Invalid::Infinite) => Ok(None),
        Err(Invalid::NotANumber) => Err(CmdError::NotFloat),
    };
    let (a, b) = (parse(current)?, parse(increment)?);
    let infinite = || CmdError::err("increment would produce NaN or Infinity");
    let (Some(a), Some(b)) = (a, b) else {
        return Err(infinite());
    };
    Ok(a.add(&b).map_err(|_| infinite())?.to_human_string())
}

#[cfg(test)]
mod tests {

    /// What redis-server 7.0's ZADD takes as a score (C's `strtod` with its checks).
    #[test]
    fn floats_parse_as_redis_reads_them() {
        for (text, value) in [
            ("1.5", 1.5),
            ("-2", -2.0),
            ("+3", 3.0),
            (".5", 0.5),
            ("1e3", 1000.0),
            ("inf", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("0x10", 16.0),
            ("-0x1.8p1", -3.0),
            ("0e500", 0.0),
            ("4e-320", 4e-320),
        ] {
            assert_eq!(parse_f64(text.as_bytes()), Some(value), "{text}");
        }
        for text in [
            "", " 1", "1 ", "nan", "1e400", "-1e400", "1e-400", "0x", "+-1", "1x", "0xg",
        ] {
            assert_eq!(parse_f64(text.as_bytes()), None, "{text:?}");
        }
    }

    use super::*;

    #[test]
    fn doubles_print_like_redis_7_0() {
        // Values checked against redis-server 7.0 (`ZADD z <v> m` then `ZSCORE z m`).
        assert_eq!(format_double(1.0), "1");
        assert_eq!(format_double(-3.0), "-3");
        assert_eq!(format_double(1.1), "1.1000000000000001");
        assert_eq!(format_double(0.5), "0.5");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(1.5e-7), "1.4999999999999999e-07");
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_double(4_503_599_627_370_496.0), "4503599627370496");
    }

    #[test]
    fn incrbyfloat_adds_short_decimals_exactly() {
        assert_eq!(incr_by_float(b"0.1", b"0.2").expect("sum"), "0.3");
        assert_eq!(incr_by_float(b"10.50", b"0.1").expect("sum"), "10.6");
        assert_eq!(incr_by_float(b"5.0e3", b"2.0e2").expect("sum"), "5200");
        assert_eq!(incr_by_float(b"3", b"-3").expect("sum"), "0");
        assert_eq!(incr_by_float(b"-1.5", b"0.25").expect("sum"), "-1.25");
        assert!(incr_by_float(b"inf", b"1").is_err());
        assert!(incr_by_float(b"abc", b"1").is_err());
        assert!(incr_by_float(b"1", b"nan").is_err());
    }

    #[test]
    fn integers_parse_strictly() {
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"012"), None);
        assert_eq!(parse_i64(b" 1"), None);
        assert_eq!(parse_i64(b"9223372036854775808"), None);
    }
}
