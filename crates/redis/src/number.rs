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

/// A float as Redis's `string2d`/`strtold` accepts it: no spaces, no NaN.
pub fn parse_f64(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    (!value.is_nan()).then_some(value)
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
    const PRECISION: i32 = 17;
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, value);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..PRECISION).contains(&exp) {
        let mantissa = trim_fraction(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (PRECISION - 1 - exp).max(0) as usize;
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
