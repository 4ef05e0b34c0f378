//! Just enough of the x87 80-bit `long double` for INCRBYFLOAT to answer byte for byte as
//! Redis does: Redis parses both operands with `strtold`, adds them in extended precision
//! and prints `%.17Lf` with trailing zeros removed. A value here is `±mant × 2^exp` with a
//! 64-bit mantissa, rounded to nearest-even at every step as the hardware does; big-integer
//! arithmetic keeps the intermediate values exact.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, Zero};

/// Mantissa bits of the x87 extended format (explicit integer bit included).
const MANT_BITS: u64 = 64;
/// Largest exponent of the lowest mantissa bit for a finite value (2^16383 × ~2).
const MAX_EXP: i64 = 16383 - 63;
/// Smallest exponent of the lowest mantissa bit (subnormals included).
const MIN_EXP: i64 = -16382 - 63;
/// Decimal exponents beyond this overflow or underflow whatever the digits.
const MAX_DECIMAL_EXP: i64 = 6000;
/// Decimal places `%.17Lf` prints.
const PLACES: u32 = 17;

/// A finite extended-precision value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongDouble {
    negative: bool,
    /// Zero, or exactly 64 bits.
    mant: u64,
    exp: i64,
}

/// Why an operand or a result is not a finite long double.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// Not a number as `strtold` (and Redis's checks) accept it.
    NotANumber,
    /// Infinite (written `inf`, or overflowed).
    Infinite,
}

impl LongDouble {
    /// Parses a decimal as `strtold` does, rounding to nearest-even: optional sign, digits
    /// with an optional point, optional exponent; `inf`/`infinity` is [`Invalid::Infinite`].
    /// Like Redis, values that overflow or underflow to zero are not numbers.
    pub fn parse(text: &[u8]) -> Result<LongDouble, Invalid> {
        let text = std::str::from_utf8(text).map_err(|_| Invalid::NotANumber)?;
        let (negative, body) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
            return Err(Invalid::Infinite);
        }
        let (mantissa, exp10) = match body.find(['e', 'E']) {
            Some(i) => (
                &body[..i],
                body[i + 1..]
                    .parse::<i64>()
                    .map_err(|_| Invalid::NotANumber)?,
            ),
            None => (body, 0),
        };
        let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = [int_part, frac_part].concat();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Invalid::NotANumber);
        }
        let value = BigUint::parse_bytes(digits.as_bytes(), 10).ok_or(Invalid::NotANumber)?;
        if value.is_zero() {
            return Ok(LongDouble {
                negative,
                mant: 0,
                exp: 0,
            });
        }
        let exp10 = exp10
            .checked_sub(frac_part.len() as i64)
            // `unsigned_abs`: `abs` of i64::MIN (an exponent of -9223372036854775808)
            // overflows, and wrapped it would pass as in range.
            .filter(|e| e.unsigned_abs() <= MAX_DECIMAL_EXP.unsigned_abs())
            .ok_or(Invalid::NotANumber)?;
        let result = if exp10 >= 0 {
            round(negative, value * pow10(exp10 as u32), 0, false)
        } else {
            divide(negative, value, pow10(exp10.unsigned_abs() as u32))
        };
        match result {
            Some(v) if !v.is_zero() => Ok(v),
            _ => Err(Invalid::NotANumber),
        }
    }

    fn is_zero(&self) -> bool {
        self.mant == 0
    }

    fn signed(&self) -> BigInt {
        let sign = if self.negative {
            Sign::Minus
        } else {
            Sign::Plus
        };
        BigInt::from_biguint(sign, BigUint::from(self.mant))
    }

    /// The rounded sum; [`Invalid::Infinite`] on overflow.
    pub fn add(&self, other: &LongDouble) -> Result<LongDouble, Invalid> {
        if self.is_zero() {
            return Ok(other.clone());
        }
        if other.is_zero() {
            return Ok(self.clone());
        }
        let low = self.exp.min(other.exp);
        let a = self.signed() << (self.exp - low) as usize;
        let b = other.signed() << (other.exp - low) as usize;
        let sum = a + b;
        let (sign, magnitude) = sum.into_parts();
        if magnitude.is_zero() {
            return Ok(LongDouble {
                negative: false,
                mant: 0,
                exp: 0,
            });
        }
        round(sign == Sign::Minus, magnitude, low, false).ok_or(Invalid::Infinite)
    }

    /// `%.17Lf` without trailing zeros (and point), `-0` as `0`: Redis's `LD_STR_HUMAN`.
    pub fn to_human_string(&self) -> String {
        let scale = pow10(PLACES);
        let scaled = BigUint::from(self.mant) * &scale;
        let fixed = if self.exp >= 0 {
            scaled << self.exp as usize
        } else {
            let divisor = BigUint::one() << self.exp.unsigned_abs() as usize;
            let (q, r) = scaled.div_rem(&divisor);
            let twice = r << 1usize;
            if twice > divisor || (twice == divisor && q.is_odd()) {
                q + 1u32
            } else {
                q
            }
        };
        let (int, frac) = fixed.div_rem(&scale);
        let mut text = format!(
            "{}{int}.{:0>width$}",
            if self.negative { "-" } else { "" },
            frac.to_string(),
            width = PLACES as usize
        );
        while text.ends_with('0') {
            text.pop();
        }
        if text.ends_with('.') {
            text.pop();
        }
        if text == "-0" { "0".into() } else { text }
    }
}

fn pow10(n: u32) -> BigUint {
    BigUint::from(10u32).pow(n)
}

/// `numerator / denominator` rounded to 64 bits.
fn divide(negative: bool, numerator: BigUint, denominator: BigUint) -> Option<LongDouble> {
    // Enough quotient bits for the mantissa plus guard bits; the remainder is the sticky bit.
    let shift = (MANT_BITS as i64 + 2 + denominator.bits() as i64 - numerator.bits() as i64).max(0);
    let (q, r) = (numerator << shift as usize).div_rem(&denominator);
    round(negative, q, -shift, !r.is_zero())
}

/// `±n × 2^exp` rounded to nearest-even at 64 bits; `sticky` says nonzero bits lie below
/// `n`. `None` on overflow; underflow gives zero.
fn round(negative: bool, n: BigUint, exp: i64, sticky: bool) -> Option<LongDouble> {
    let bits = n.bits();
    if bits == 0 {
        return Some(LongDouble {
            negative,
            mant: 0,
            exp: 0,
        });
    }
    let (mut mant, mut exp) = if bits <= MANT_BITS {
        let up = MANT_BITS - bits;
        (to_u64(&(n << up as usize)), exp - up as i64)
    } else {
        let drop = bits - MANT_BITS;
        let kept = &n >> drop as usize;
        let rest = &n - (&kept << drop as usize);
        let half = BigUint::one() << (drop - 1) as usize;
        let up = rest > half || (rest == half && (sticky || kept.is_odd()));
        let mut kept = to_u64(&kept);
        let mut exp = exp + drop as i64;
        if up {
            match kept.checked_add(1) {
                Some(k) => kept = k,
                None => {
                    kept = 1 << 63;
                    exp += 1;
                }
            }
        }
        (kept, exp)
    };
    if exp > MAX_EXP {
        return None;
    }
    if exp < MIN_EXP {
        // Below the subnormal range: the hardware would flush towards zero.
        mant = 0;
        exp = 0;
    }
    Some(LongDouble {
        negative,
        mant,
        exp,
    })
}

fn to_u64(n: &BigUint) -> u64 {
    n.iter_u64_digits().next().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incr(a: &str, b: &str) -> String {
        let x = LongDouble::parse(a.as_bytes()).expect("a");
        let y = LongDouble::parse(b.as_bytes()).expect("b");
        x.add(&y).expect("sum").to_human_string()
    }

    #[test]
    fn sums_print_as_redis_7_0_prints_them() {
        // Replies of a real redis-server 7.0.15 (x86-64) to the same INCRBYFLOAT calls.
        assert_eq!(incr("10.50", "0.1"), "10.6");
        assert_eq!(incr("10.6", "-5.0e3"), "-4989.39999999999999991");
        assert_eq!(incr("994", "1e-5"), "994.00001000000000001");
        assert_eq!(incr("9223372036854775807", "0.1"), "9223372036854775807");
        assert_eq!(incr("0.1", "0.2"), "0.3");
        assert_eq!(incr("3", "-3"), "0");
        assert_eq!(incr("5.0e3", "2.0e2"), "5200");
    }

    #[test]
    fn parsing_rejects_what_redis_rejects() {
        for bad in [
            "",
            "abc",
            "1.2.3",
            "nan",
            "1e",
            "--1",
            "1e99999",
            "1e-99999",
            " 1",
            "-1e-9223372036854775808",
            "1e9223372036854775807",
        ] {
            assert!(LongDouble::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert_eq!(LongDouble::parse(b"inf"), Err(Invalid::Infinite));
        assert!(LongDouble::parse(b"-0").is_ok());
        assert!(LongDouble::parse(b".5").is_ok());
        assert!(LongDouble::parse(b"5.").is_ok());
    }
}
