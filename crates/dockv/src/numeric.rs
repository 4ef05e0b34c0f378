//! Arbitrary-precision `VarInt` and `Decimal` with YugabyteDB's comparable encodings
//! (format.md §2.2, §2.3; YugabyteDB's `util/varint.cc` and `util/decimal.cc`).
//!
//! Both encodings are binary-comparable: for canonical values `a`, `b`,
//! `a.cmp(b) == encode(a).cmp(encode(b))`, and each encoding is self-delimiting, so a decoder
//! finds its end and returns the unread rest of the input.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result, corruption};

/// Arbitrary-precision integer: sign and big-endian magnitude without leading zero bytes.
///
/// The canonical form (produced by every constructor and decoder of this module) has no leading
/// zero bytes in `magnitude` and `negative == false` for zero; `Eq`, `Hash` and `Ord` assume it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct VarInt {
    /// True for negative values (never for zero).
    pub negative: bool,
    /// Big-endian magnitude; empty for zero.
    pub magnitude: Vec<u8>,
}

/// Arbitrary-precision decimal `±0.d1d2d3… × 10^exponent`, or a special value.
///
/// A finite value is canonical when `digits` has neither leading nor trailing zeros and zero is
/// `{ negative: false, digits: [], exponent: 0 }`; constructors, [`FromStr`] and the decoder
/// produce canonical values, and `Eq`, `Hash` and `Ord` assume them. `Ord` is the numeric order
/// with the specials placed as in keys: `-∞ < finite < +∞ < NaN`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Decimal {
    /// A finite number.
    Finite {
        /// True for negative numbers (never for zero).
        negative: bool,
        /// Decimal digits 0..=9 without leading or trailing zeros; empty for zero.
        digits: Vec<u8>,
        /// Position of the decimal point: value = 0.digits × 10^exponent.
        exponent: i64,
    },
    /// Not a number.
    NaN,
    /// +∞.
    PosInfinity,
    /// −∞.
    NegInfinity,
}

// ---------------------------------------------------------------------------------------------
// VarInt
// ---------------------------------------------------------------------------------------------

fn trim_leading_zeros(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    bytes.get(start..).unwrap_or_default()
}

fn u64_magnitude(v: u64) -> Vec<u8> {
    trim_leading_zeros(&v.to_be_bytes()).to_vec()
}

/// The value of a sign and magnitude as an `i64`, if it fits.
fn parts_to_i64(negative: bool, magnitude: &[u8]) -> Option<i64> {
    let mag = trim_leading_zeros(magnitude);
    if mag.len() > 8 {
        return None;
    }
    let mut word = [0u8; 8];
    word.get_mut(8 - mag.len()..)?.copy_from_slice(mag);
    let abs = u64::from_be_bytes(word);
    if negative {
        0i64.checked_sub_unsigned(abs)
    } else {
        i64::try_from(abs).ok()
    }
}

/// Appends the comparable encoding of `±magnitude` (`VarInt::EncodeToComparable`).
///
/// Layout of the `n` output bytes for a non-zero value with `b` significant bits, where
/// `n = ceil((b + 1 + reserved) / 7)`: `reserved + n` one bits, at least one zero bit, then the
/// magnitude right-aligned; negative values are the ones' complement of that, and finally the
/// `reserved` top bits are cleared. Zero is the single byte `0x80 >> reserved`.
fn encode_comparable_parts(
    negative: bool,
    magnitude: &[u8],
    reserved_bits: u32,
    out: &mut Vec<u8>,
) {
    assert!(
        reserved_bits < 7,
        "VarInt: at most 6 reserved bits, got {reserved_bits}"
    );
    let reserved = reserved_bits as usize;
    let mag = trim_leading_zeros(magnitude);
    let Some(&first) = mag.first() else {
        out.push(0x80 >> reserved);
        return;
    };
    let num_bits = mag.len() * 8 - first.leading_zeros() as usize;
    let num_bytes = (num_bits + 1 + reserved).div_ceil(7);
    let start = out.len();
    out.resize(start + num_bytes, 0);
    let body = out.get_mut(start..).unwrap_or_default();
    // num_bytes * 8 >= num_bits + num_bytes + reserved + 1, so the magnitude fits behind the
    // header with at least one zero bit between them.
    if let Some(tail) = body.get_mut(num_bytes - mag.len()..) {
        tail.copy_from_slice(mag);
    }
    let mut ones = num_bytes + reserved;
    let mut idx = 0;
    while ones >= 8 {
        if let Some(b) = body.get_mut(idx) {
            *b = 0xFF;
        }
        ones -= 8;
        idx += 1;
    }
    if ones > 0
        && let Some(b) = body.get_mut(idx)
    {
        *b |= !(0xFFu8 >> ones);
    }
    if negative {
        for b in body.iter_mut() {
            *b = !*b;
        }
    }
    if let Some(b) = body.first_mut() {
        *b &= 0xFF >> reserved;
    }
}

/// Decodes a comparable varint from the front of `input` after XOR-ing every byte with `mask`
/// (`VarInt::DecodeFromComparable`). Returns sign, canonical magnitude and encoded length.
///
/// Like YugabyteDB, this accepts non-minimal encodings (they decode to the same number).
fn decode_comparable_parts(
    input: &[u8],
    reserved_bits: u32,
    mask: u8,
) -> Result<(bool, Vec<u8>, usize)> {
    if reserved_bits >= 7 {
        return Err(Error::InvalidArgument(format!(
            "VarInt: at most 6 reserved bits, got {reserved_bits}"
        )));
    }
    let reserved = reserved_bits as usize;
    let &first = input
        .first()
        .ok_or_else(|| corruption!("cannot decode a varint from an empty slice"))?;
    let negative = (first ^ mask) & (0x80 >> reserved) == 0;
    let flip = mask ^ if negative { 0xFF } else { 0x00 };
    let reserved_ones = !(0xFFu8 >> reserved);
    let view = |i: usize| -> Option<u8> {
        let b = input.get(i)? ^ flip;
        Some(if i == 0 { b | reserved_ones } else { b })
    };

    let mut idx = 0;
    let mut ones = 0usize;
    let mut current = view(0).unwrap_or_default();
    while current == 0xFF {
        idx += 1;
        current = view(idx).ok_or_else(|| {
            corruption!("encoded varint has no prefix termination: {}", hex(input))
        })?;
        ones += 8;
    }
    let lead = current.leading_ones() as usize;
    ones += lead;
    let num_bytes = ones.saturating_sub(reserved);
    if num_bytes > input.len() {
        return Err(corruption!(
            "not enough data in encoded varint: need {num_bytes} bytes, have {}",
            input.len()
        ));
    }
    if num_bytes <= idx {
        return Err(corruption!("malformed varint header: {}", hex(input)));
    }
    let mut magnitude = Vec::with_capacity(num_bytes - idx);
    magnitude.push(current & (0xFF >> lead));
    if let Some(body) = input.get(idx + 1..num_bytes) {
        magnitude.extend(body.iter().map(|b| b ^ flip));
    }
    let magnitude = trim_leading_zeros(&magnitude).to_vec();
    let negative = negative && !magnitude.is_empty();
    Ok((negative, magnitude, num_bytes))
}

fn hex(bytes: &[u8]) -> String {
    let shown = bytes.get(..32).unwrap_or(bytes);
    let mut s: String = shown.iter().map(|b| format!("{b:02x}")).collect();
    if shown.len() < bytes.len() {
        s.push_str("...");
    }
    s
}

/// Decimal text of a big-endian magnitude (no sign).
fn magnitude_to_decimal(magnitude: &[u8]) -> String {
    let mag = trim_leading_zeros(magnitude);
    if mag.len() <= 16 {
        let mut word = [0u8; 16];
        if let Some(dst) = word.get_mut(16 - mag.len()..) {
            dst.copy_from_slice(mag);
        }
        return u128::from_be_bytes(word).to_string();
    }
    // Little-endian base-2^32 limbs, divided repeatedly by 10^9.
    let mut limbs: Vec<u32> = mag
        .rchunks(4)
        .map(|c| c.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)))
        .collect();
    let mut groups = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem = 0u64;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        groups.push(rem as u32);
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut s = String::new();
    for (i, g) in groups.iter().rev().enumerate() {
        if i == 0 {
            s.push_str(&g.to_string());
        } else {
            s.push_str(&format!("{g:09}"));
        }
    }
    s
}

/// Big-endian canonical magnitude of a string of ASCII decimal digits.
fn decimal_to_magnitude(digits: &[u8]) -> Vec<u8> {
    let mut limbs: Vec<u32> = Vec::new(); // little-endian base 2^32
    for chunk in digits.chunks(9) {
        let mut scale = 1u64;
        let mut add = 0u64;
        for &d in chunk {
            scale *= 10;
            add = add * 10 + u64::from(d - b'0');
        }
        let mut carry = add;
        for limb in limbs.iter_mut() {
            let cur = u64::from(*limb) * scale + carry;
            *limb = cur as u32;
            carry = cur >> 32;
        }
        if carry != 0 {
            limbs.push(carry as u32);
        }
    }
    let bytes: Vec<u8> = limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
    trim_leading_zeros(&bytes).to_vec()
}

impl VarInt {
    /// Zero.
    pub const fn zero() -> Self {
        VarInt {
            negative: false,
            magnitude: Vec::new(),
        }
    }

    /// A varint from a sign and a big-endian magnitude; leading zero bytes are dropped and a zero
    /// magnitude is never negative.
    pub fn new(negative: bool, magnitude: impl Into<Vec<u8>>) -> Self {
        let magnitude = magnitude.into();
        let magnitude = trim_leading_zeros(&magnitude).to_vec();
        VarInt {
            negative: negative && !magnitude.is_empty(),
            magnitude,
        }
    }

    /// The value `v`.
    pub fn from_i64(v: i64) -> Self {
        VarInt::new(v < 0, u64_magnitude(v.unsigned_abs()))
    }

    /// The value `v`.
    pub fn from_u64(v: u64) -> Self {
        VarInt::new(false, u64_magnitude(v))
    }

    /// Whether this is zero.
    pub fn is_zero(&self) -> bool {
        self.magnitude.iter().all(|&b| b == 0)
    }

    /// −1, 0 or 1.
    pub fn signum(&self) -> i32 {
        match (self.is_zero(), self.negative) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        }
    }

    /// The value with the opposite sign (zero stays zero).
    pub fn negated(&self) -> Self {
        VarInt::new(!self.negative, self.magnitude.clone())
    }

    /// The value as an `i64`, or `None` when it does not fit.
    pub fn to_i64(&self) -> Option<i64> {
        parts_to_i64(self.negative, &self.magnitude)
    }

    /// The value as an `i128`, or `None` when it does not fit.
    pub fn to_i128(&self) -> Option<i128> {
        let mag = trim_leading_zeros(&self.magnitude);
        if mag.len() > 16 {
            return None;
        }
        let mut word = [0u8; 16];
        word.get_mut(16 - mag.len()..)?.copy_from_slice(mag);
        let abs = u128::from_be_bytes(word);
        if self.negative {
            0i128.checked_sub_unsigned(abs)
        } else {
            i128::try_from(abs).ok()
        }
    }

    /// Appends the comparable encoding with `reserved_bits` (0..=6) top bits left zero
    /// (`VarInt::EncodeToComparable`, format.md §2.2). Keys use 0 reserved bits; decimal
    /// exponents use 2. For every `i64` `v`, `VarInt::from(v).encode_comparable(0, ..)` writes
    /// the same bytes as [`crate::varint::encode_signed`].
    ///
    /// # Panics
    /// If `reserved_bits > 6` (a caller bug; YugabyteDB only uses 0 and 2; with 7 reserved bits
    /// zero would encode as `0x01`, which no decoder can delimit).
    pub fn encode_comparable(&self, reserved_bits: u32, out: &mut Vec<u8>) {
        encode_comparable_parts(self.negative, &self.magnitude, reserved_bits, out);
    }

    /// The comparable encoding as a new vector; see [`Self::encode_comparable`].
    pub fn encoded_comparable(&self, reserved_bits: u32) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_comparable(reserved_bits, &mut out);
        out
    }

    /// Appends the descending key body (`f`): the comparable encoding of `-self`, i.e. every byte
    /// of the ascending encoding flipped, except zero which stays `0x80`.
    pub fn encode_comparable_descending(&self, out: &mut Vec<u8>) {
        encode_comparable_parts(!self.negative, &self.magnitude, 0, out);
    }

    /// Decodes a comparable encoding written with `reserved_bits` from the front of `input`,
    /// returning the value and the rest (`VarInt::DecodeFromComparable`).
    pub fn decode_comparable(input: &[u8], reserved_bits: u32) -> Result<(Self, &[u8])> {
        let (negative, magnitude, len) = decode_comparable_parts(input, reserved_bits, 0)?;
        Ok((
            VarInt {
                negative,
                magnitude,
            },
            input.get(len..).unwrap_or_default(),
        ))
    }

    /// Decodes the descending key body written by [`Self::encode_comparable_descending`].
    pub fn decode_comparable_descending(input: &[u8]) -> Result<(Self, &[u8])> {
        let (value, rest) = Self::decode_comparable(input, 0)?;
        Ok((value.negated(), rest))
    }
}

impl From<i64> for VarInt {
    fn from(v: i64) -> Self {
        VarInt::from_i64(v)
    }
}

impl From<i32> for VarInt {
    fn from(v: i32) -> Self {
        VarInt::from_i64(i64::from(v))
    }
}

impl From<u64> for VarInt {
    fn from(v: u64) -> Self {
        VarInt::from_u64(v)
    }
}

impl Ord for VarInt {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (
            trim_leading_zeros(&self.magnitude),
            trim_leading_zeros(&other.magnitude),
        );
        let a_neg = self.negative && !a.is_empty();
        let b_neg = other.negative && !b.is_empty();
        match (a_neg, b_neg) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (negative, _) => {
                let by_magnitude = a.len().cmp(&b.len()).then_with(|| a.cmp(b));
                if negative {
                    by_magnitude.reverse()
                } else {
                    by_magnitude
                }
            }
        }
    }
}

impl PartialOrd for VarInt {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Decimal digits with a leading `-` for negative values (`VarInt::ToString`, OpenSSL's
/// `BN_bn2dec`): `0`, `-123`.
impl fmt::Display for VarInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.negative && !self.is_zero() {
            f.write_str("-")?;
        }
        f.write_str(&magnitude_to_decimal(&self.magnitude))
    }
}

/// Parses `[+-]?[0-9]+` (`VarInt::FromString`); anything else is
/// [`Error::InvalidArgument`].
impl FromStr for VarInt {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let (negative, body) = match s.as_bytes() {
            [b'-', rest @ ..] => (true, rest),
            [b'+', rest @ ..] => (false, rest),
            rest => (false, rest),
        };
        if body.is_empty() || !body.iter().all(u8::is_ascii_digit) {
            return Err(Error::InvalidArgument(format!(
                "cannot parse varint: {s:?}"
            )));
        }
        Ok(VarInt::new(negative, decimal_to_magnitude(body)))
    }
}

// ---------------------------------------------------------------------------------------------
// Decimal
// ---------------------------------------------------------------------------------------------

/// Largest text `Decimal`'s `Display` prints in point form (`Decimal::kDefaultMaxLength`).
pub const DECIMAL_DEFAULT_MAX_LENGTH: usize = 20;

/// Strips leading and trailing zero digits, moving the exponent for the leading ones. Returns
/// `None` if the exponent overflows.
fn canonical_digits(mut digits: Vec<u8>, exponent: i64) -> Option<(Vec<u8>, i64)> {
    while digits.last() == Some(&0) {
        digits.pop();
    }
    let leading = digits.iter().take_while(|&&d| d == 0).count();
    if digits.is_empty() {
        return Some((digits, 0));
    }
    let exponent = exponent.checked_sub(i64::try_from(leading).ok()?)?;
    digits.drain(..leading);
    Some((digits, exponent))
}

/// Appends the comparable encoding of a finite decimal (`Decimal::EncodeToComparable`): the
/// exponent as a comparable varint with 2 reserved bits, digit pairs `(10a + b) * 2 + 1` with the
/// low bit cleared on the last pair, top two bits of the first byte set, all bytes flipped when
/// negative. Zero is `0x80`.
fn encode_finite(negative: bool, digits: &[u8], exponent: i64, out: &mut Vec<u8>) {
    if digits.is_empty() {
        out.push(0x80);
        return;
    }
    let start = out.len();
    encode_comparable_parts(
        exponent < 0,
        &u64_magnitude(exponent.unsigned_abs()),
        2,
        out,
    );
    let mut pairs = digits.chunks(2).peekable();
    while let Some(pair) = pairs.next() {
        let hi = pair.first().copied().unwrap_or(0);
        let lo = pair.get(1).copied().unwrap_or(0);
        let value = hi.wrapping_mul(10).wrapping_add(lo).wrapping_mul(2);
        let more = u8::from(pairs.peek().is_some());
        out.push(value | more);
    }
    if let Some(first) = out.get_mut(start) {
        *first |= 0xC0;
    }
    if negative && let Some(body) = out.get_mut(start..) {
        for b in body {
            *b = !*b;
        }
    }
}

impl Decimal {
    /// Zero.
    pub const fn zero() -> Self {
        Decimal::Finite {
            negative: false,
            digits: Vec::new(),
            exponent: 0,
        }
    }

    /// The finite value `±0.digits × 10^exponent`, canonicalized (leading zero digits move the
    /// exponent, trailing ones are dropped, zero is positive). Digits above 9 or an exponent that
    /// overflows `i64` are [`Error::InvalidArgument`].
    pub fn new(negative: bool, digits: Vec<u8>, exponent: i64) -> Result<Self> {
        if let Some(bad) = digits.iter().find(|&&d| d > 9) {
            return Err(Error::InvalidArgument(format!(
                "decimal digit {bad} is not in 0..=9"
            )));
        }
        let (digits, exponent) = canonical_digits(digits, exponent).ok_or_else(|| {
            Error::InvalidArgument(format!("decimal exponent {exponent} out of range"))
        })?;
        Ok(Decimal::Finite {
            negative: negative && !digits.is_empty(),
            digits,
            exponent,
        })
    }

    /// The integer `v`.
    pub fn from_i64(v: i64) -> Self {
        Decimal::from_varint(&VarInt::from_i64(v))
    }

    /// The integer `v` (`Decimal::FromVarInt`).
    pub fn from_varint(v: &VarInt) -> Self {
        let text = magnitude_to_decimal(&v.magnitude);
        let digits: Vec<u8> = text.bytes().map(|c| c - b'0').collect();
        let exponent = i64::try_from(digits.len()).unwrap_or(i64::MAX);
        let (digits, exponent) = canonical_digits(digits, exponent).unwrap_or_default();
        Decimal::Finite {
            negative: v.negative && !digits.is_empty(),
            digits,
            exponent,
        }
    }

    /// Whether this is a finite zero.
    pub fn is_zero(&self) -> bool {
        matches!(self, Decimal::Finite { digits, .. } if digits.iter().all(|&d| d == 0))
    }

    /// Whether this is a finite number (not NaN or ±∞).
    pub fn is_finite(&self) -> bool {
        matches!(self, Decimal::Finite { .. })
    }

    /// Whether this is NaN.
    pub fn is_nan(&self) -> bool {
        matches!(self, Decimal::NaN)
    }

    /// The value with the opposite sign: zero and NaN stay, ±∞ swap.
    pub fn negated(&self) -> Self {
        match self {
            Decimal::Finite {
                negative,
                digits,
                exponent,
            } => Decimal::Finite {
                negative: !negative && !digits.is_empty(),
                digits: digits.clone(),
                exponent: *exponent,
            },
            Decimal::NaN => Decimal::NaN,
            Decimal::PosInfinity => Decimal::NegInfinity,
            Decimal::NegInfinity => Decimal::PosInfinity,
        }
    }

    /// Appends the comparable encoding of a finite value (format.md §2.3). NaN and ±∞ have no
    /// comparable body (keys store them as type bytes alone) and are
    /// [`Error::InvalidArgument`], as are digits above 9.
    pub fn encode_comparable(&self, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Decimal::Finite {
                negative,
                digits,
                exponent,
            } => {
                if let Some(bad) = digits.iter().find(|&&d| d > 9) {
                    return Err(Error::InvalidArgument(format!(
                        "decimal digit {bad} is not in 0..=9"
                    )));
                }
                encode_finite(*negative, digits, *exponent, out);
                Ok(())
            }
            special => Err(Error::InvalidArgument(format!(
                "{special} has no comparable decimal encoding"
            ))),
        }
    }

    /// The comparable encoding as a new vector; see [`Self::encode_comparable`].
    pub fn encoded_comparable(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_comparable(&mut out)?;
        Ok(out)
    }

    /// Appends the comparable encoding of `self` (negated when `negate`) without validation:
    /// nothing for specials, digits assumed in range. Used by the key encoder.
    pub(crate) fn write_comparable(&self, negate: bool, out: &mut Vec<u8>) {
        if let Decimal::Finite {
            negative,
            digits,
            exponent,
        } = self
        {
            encode_finite(*negative != negate, digits, *exponent, out);
        }
    }

    /// Decodes a comparable encoding from the front of `input`, returning the value and the rest
    /// (`Decimal::DecodeFromComparable`). The result is canonical. Digit-pair bytes above 99,
    /// a missing final pair or an exponent outside `i64` are [`Error::Corruption`].
    pub fn decode_comparable(input: &[u8]) -> Result<(Self, &[u8])> {
        let &first = input
            .first()
            .ok_or_else(|| corruption!("cannot decode a decimal from an empty slice"))?;
        if first == 0x80 {
            return Ok((Decimal::zero(), input.get(1..).unwrap_or_default()));
        }
        let positive = first >= 0x80;
        let mask = if positive { 0x00 } else { 0xFF };
        let (exp_negative, exp_magnitude, exp_len) = decode_comparable_parts(input, 2, mask)?;
        let exponent = parts_to_i64(exp_negative, &exp_magnitude).ok_or_else(|| {
            corruption!("decimal exponent does not fit in 64 bits: {}", hex(input))
        })?;
        let mut digits = Vec::new();
        let mut pos = exp_len;
        loop {
            let byte = input.get(pos).ok_or_else(|| {
                corruption!("decimal mantissa has no final digit pair: {}", hex(input))
            })? ^ mask;
            pos += 1;
            let pair = byte >> 1;
            if pair > 99 {
                return Err(corruption!("invalid decimal digit-pair byte {byte:#04x}"));
            }
            digits.push(pair / 10);
            digits.push(pair % 10);
            if byte & 1 == 0 {
                break;
            }
        }
        let (digits, exponent) = canonical_digits(digits, exponent)
            .ok_or_else(|| corruption!("decimal exponent {exponent} out of range"))?;
        let value = Decimal::Finite {
            negative: !positive && !digits.is_empty(),
            digits,
            exponent,
        };
        Ok((value, input.get(pos..).unwrap_or_default()))
    }

    /// Point notation if it fits in `max_length` characters (`Decimal::ToPointString`):
    /// `0`, `-0.001`, `2378000`. `None` for specials or when it does not fit.
    pub fn to_point_string(&self, max_length: usize) -> Option<String> {
        let Decimal::Finite {
            negative,
            digits,
            exponent,
        } = self
        else {
            return None;
        };
        if digits.is_empty() {
            return Some("0".to_string());
        }
        let max = i128::try_from(max_length).unwrap_or(i128::MAX);
        let exp = i128::from(*exponent);
        if exp > max || exp < -max {
            return None;
        }
        let digit_char = |d: u8| char::from(b'0'.wrapping_add(d));
        let mut out = String::new();
        if *negative {
            out.push('-');
        }
        if exp <= 0 {
            out.push_str("0.");
            for _ in 0..-exp {
                out.push('0');
            }
            for &d in digits {
                out.push(digit_char(d));
                if out.len() > max_length {
                    return None;
                }
            }
        } else {
            for (i, &d) in digits.iter().enumerate() {
                if i128::try_from(i).ok() == Some(exp) {
                    out.push('.');
                }
                out.push(digit_char(d));
                if out.len() > max_length {
                    return None;
                }
            }
            let mut i = i128::try_from(digits.len()).unwrap_or(i128::MAX);
            while i < exp {
                out.push('0');
                if out.len() > max_length {
                    return None;
                }
                i += 1;
            }
        }
        Some(out)
    }

    /// Scientific notation (`Decimal::ToScientificString`): `-4.372e-4`, `2.378e+6`, and, as in
    /// YugabyteDB, `1.e+21` for a single digit. Specials print as in `Display`.
    pub fn to_scientific_string(&self) -> String {
        let Decimal::Finite {
            negative,
            digits,
            exponent,
        } = self
        else {
            return self.to_string();
        };
        let Some((&first, rest)) = digits.split_first() else {
            return "0".to_string();
        };
        let digit_char = |d: u8| char::from(b'0'.wrapping_add(d));
        let mut out = String::new();
        if *negative {
            out.push('-');
        }
        out.push(digit_char(first));
        out.push('.');
        out.extend(rest.iter().map(|&d| digit_char(d)));
        out.push('e');
        let e = i128::from(*exponent) - 1;
        if e >= 0 {
            out.push('+');
        }
        out.push_str(&e.to_string());
        out
    }

    fn special_rank(&self) -> u8 {
        match self {
            Decimal::NegInfinity => 0,
            Decimal::Finite { .. } => 1,
            Decimal::PosInfinity => 2,
            Decimal::NaN => 3,
        }
    }
}

impl Default for Decimal {
    fn default() -> Self {
        Decimal::zero()
    }
}

impl From<i64> for Decimal {
    fn from(v: i64) -> Self {
        Decimal::from_i64(v)
    }
}

impl From<&VarInt> for Decimal {
    fn from(v: &VarInt) -> Self {
        Decimal::from_varint(v)
    }
}

/// Numeric order of two finite values (`Decimal::CompareTo`).
fn cmp_finite(a: (bool, &[u8], i64), b: (bool, &[u8], i64)) -> Ordering {
    let (a_zero, b_zero) = (a.1.is_empty(), b.1.is_empty());
    let a_neg = a.0 && !a_zero;
    let b_neg = b.0 && !b_zero;
    if a_neg != b_neg {
        return if a_neg {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let magnitude = if a_zero || b_zero {
        b_zero.cmp(&a_zero)
    } else {
        a.2.cmp(&b.2).then_with(|| a.1.cmp(b.1))
    };
    if a_neg {
        magnitude.reverse()
    } else {
        magnitude
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (
                Decimal::Finite {
                    negative: an,
                    digits: ad,
                    exponent: ae,
                },
                Decimal::Finite {
                    negative: bn,
                    digits: bd,
                    exponent: be,
                },
            ) => cmp_finite((*an, ad, *ae), (*bn, bd, *be)),
            _ => self.special_rank().cmp(&other.special_rank()),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// YugabyteDB's `Decimal::ToString`: point notation when it fits in 20 characters
/// (`100.02`, `-0.001`, `10000000000`), else scientific (`1.e+21`, `1.5e-30`). NaN and ±∞
/// (newer YugabyteDB key types without a `Decimal` counterpart) print as `NaN`, `Infinity`,
/// `-Infinity`.
impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decimal::NaN => f.write_str("NaN"),
            Decimal::PosInfinity => f.write_str("Infinity"),
            Decimal::NegInfinity => f.write_str("-Infinity"),
            Decimal::Finite { .. } => match self.to_point_string(DECIMAL_DEFAULT_MAX_LENGTH) {
                Some(s) => f.write_str(&s),
                None => f.write_str(&self.to_scientific_string()),
            },
        }
    }
}

/// Parses `[+-]?[0-9]*(.[0-9]*)?([eE][+-]?[0-9]+)?` with at least one digit
/// (`Decimal::FromString`), plus `NaN`, `Infinity`/`Inf` and `-Infinity` (case-insensitive).
/// Errors are [`Error::InvalidArgument`].
impl FromStr for Decimal {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let invalid =
            |why: &str| Error::InvalidArgument(format!("cannot parse decimal {s:?}: {why}"));
        let (negative, body) = match s.as_bytes() {
            [b'-', rest @ ..] => (true, rest),
            [b'+', rest @ ..] => (false, rest),
            rest => (false, rest),
        };
        if body.eq_ignore_ascii_case(b"nan") {
            return Ok(Decimal::NaN);
        }
        if body.eq_ignore_ascii_case(b"infinity") || body.eq_ignore_ascii_case(b"inf") {
            return Ok(if negative {
                Decimal::NegInfinity
            } else {
                Decimal::PosInfinity
            });
        }
        let mut digits = Vec::new();
        let mut point = None;
        let mut i = 0;
        while let Some(&c) = body.get(i) {
            match c {
                b'e' | b'E' => break,
                b'.' if point.is_none() => point = Some(digits.len()),
                b'0'..=b'9' => digits.push(c - b'0'),
                _ => return Err(invalid(&format!("invalid character {:?}", char::from(c)))),
            }
            i += 1;
        }
        if digits.is_empty() {
            return Err(invalid("no digits before the exponent"));
        }
        let point =
            i128::try_from(point.unwrap_or(digits.len())).map_err(|_| invalid("too long"))?;
        let exponent = match body.get(i + 1..) {
            None => 0,
            Some(exp_text) => {
                let text = std::str::from_utf8(exp_text).map_err(|_| invalid("bad exponent"))?;
                let exp: VarInt = text.parse().map_err(|_| invalid("bad exponent"))?;
                // i64 exponents only, but the text may be off by the point position and leading
                // zeros, so do the arithmetic in i128.
                exp.to_i128()
                    .ok_or_else(|| invalid("exponent out of range"))?
            }
        };
        while digits.last() == Some(&0) {
            digits.pop();
        }
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..leading);
        if digits.is_empty() {
            return Ok(Decimal::zero());
        }
        let leading = i128::try_from(leading).map_err(|_| invalid("too long"))?;
        let exponent = i64::try_from(exponent + point - leading)
            .map_err(|_| invalid("exponent out of range"))?;
        Ok(Decimal::Finite {
            negative,
            digits,
            exponent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::varint::encode_signed;
    use proptest::prelude::*;

    fn dec(s: &str) -> Decimal {
        match s.parse() {
            Ok(d) => d,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn enc(s: &str) -> Vec<u8> {
        match dec(s).encoded_comparable() {
            Ok(b) => b,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    #[test]
    fn decimal_vectors_b3() {
        assert_eq!(enc("100.02"), b"\xe3\x15\x01\x28");
        assert_eq!(enc("-100.02"), b"\x1c\xea\xfe\xd7");
        let mut desc = Vec::new();
        dec("100.02").write_comparable(true, &mut desc);
        assert_eq!(desc, b"\x1c\xea\xfe\xd7");
        assert_eq!(enc("0.001"), b"\xdd\x14");
        assert_eq!(enc("0"), b"\x80");
        assert_eq!(enc("-0.000"), b"\x80");
        let mut zero_desc = Vec::new();
        Decimal::zero().write_comparable(true, &mut zero_desc);
        assert_eq!(zero_desc, b"\x80");
    }

    #[test]
    fn decimal_decode_vectors() {
        let cases = [
            ("100.02", &b"\xe3\x15\x01\x28"[..]),
            ("-100.02", b"\x1c\xea\xfe\xd7"),
            ("0.001", b"\xdd\x14"),
            ("0", b"\x80"),
        ];
        for (text, bytes) in cases {
            let mut input = bytes.to_vec();
            input.push(b'!');
            assert_eq!(
                Decimal::decode_comparable(&input),
                Ok((dec(text), &b"!"[..])),
                "{text}"
            );
        }
    }

    #[test]
    fn decimal_parse_and_display() {
        let cases = [
            ("100.02", "100.02"),
            ("-100.02", "-100.02"),
            ("-0.001", "-0.001"),
            ("0.001", "0.001"),
            ("1e10", "10000000000"),
            ("1E10", "10000000000"),
            ("+2.5e-3", "0.0025"),
            ("-0", "0"),
            ("000123.4500", "123.45"),
            (".5", "0.5"),
            ("5.", "5"),
            ("1e21", "1.e+21"),
            ("1.5e30", "1.5e+30"),
            ("1.5e-30", "1.5e-30"),
            ("12345678901234567890", "12345678901234567890"),
            ("-12345678901234567890", "-1.234567890123456789e+19"),
            ("0.1234567890123456789", "1.234567890123456789e-1"),
            ("0.123456789012345678", "0.123456789012345678"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("NaN", "NaN"),
            ("nan", "NaN"),
            ("Infinity", "Infinity"),
            ("+Infinity", "Infinity"),
            ("-Infinity", "-Infinity"),
            ("-inf", "-Infinity"),
        ];
        for (input, shown) in cases {
            assert_eq!(dec(input).to_string(), shown, "{input}");
        }
        for bad in [
            "",
            "-",
            "abc",
            "1.2.3",
            "e5",
            "1e",
            "1e+",
            "1e5.5",
            "1x",
            "--1",
            "1e99999999999999999999",
        ] {
            assert!(
                matches!(bad.parse::<Decimal>(), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn decimal_canonical_form() {
        assert_eq!(
            dec("0.0042"),
            Decimal::Finite {
                negative: false,
                digits: vec![4, 2],
                exponent: -2
            }
        );
        assert_eq!(
            dec("2378000"),
            Decimal::Finite {
                negative: false,
                digits: vec![2, 3, 7, 8],
                exponent: 7
            }
        );
        assert_eq!(Decimal::new(true, vec![0, 0, 1, 0], 3), Ok(dec("-1")));
        assert_eq!(Decimal::new(true, vec![0, 0], 3), Ok(Decimal::zero()));
        assert!(Decimal::new(false, vec![10], 0).is_err());
        assert_eq!(Decimal::from_i64(-1200), dec("-1200"));
        assert_eq!(
            Decimal::from_i64(i64::MIN).to_string(),
            "-9223372036854775808"
        );
        assert!(Decimal::NaN.encoded_comparable().is_err());
    }

    #[test]
    fn decimal_decode_malformed() {
        let bad: &[&[u8]] = &[
            b"",
            b"\xe3",             // exponent only
            b"\xe3\x15\x01",     // mantissa never ends
            b"\xe3\xc8",         // digit pair 100
            b"\xff\xff\xff\xff", // exponent header never ends
            b"\xfe",             // exponent needs more bytes than present
        ];
        for input in bad {
            assert!(
                matches!(Decimal::decode_comparable(input), Err(Error::Corruption(_))),
                "{input:?}"
            );
        }
        // An exponent beyond i64.
        let mut big = Vec::new();
        encode_comparable_parts(false, &[1; 9], 2, &mut big);
        big[0] |= 0xC0;
        big.push(0x14);
        assert!(Decimal::decode_comparable(&big).is_err());
    }

    #[test]
    fn varint_vectors() {
        assert_eq!(VarInt::zero().encoded_comparable(0), b"\x80");
        assert_eq!(VarInt::zero().encoded_comparable(2), b"\x20");
        assert_eq!(VarInt::from(3).encoded_comparable(2), b"\x23");
        assert_eq!(VarInt::from(-2).encoded_comparable(2), b"\x1d");
        assert_eq!(VarInt::from(1000).encoded_comparable(0), b"\xc3\xe8");
        let mut desc = Vec::new();
        VarInt::from(1000).encode_comparable_descending(&mut desc);
        assert_eq!(desc, b"\x3c\x17");
        let mut zero_desc = Vec::new();
        VarInt::zero().encode_comparable_descending(&mut zero_desc);
        assert_eq!(zero_desc, b"\x80");
    }

    #[test]
    fn varint_text() {
        for (text, shown) in [
            ("0", "0"),
            ("-0", "0"),
            ("+17", "17"),
            ("-123", "-123"),
            ("007", "7"),
        ] {
            let v: VarInt = match text.parse() {
                Ok(v) => v,
                Err(e) => panic!("{text}: {e}"),
            };
            assert_eq!(v.to_string(), shown);
        }
        let big = "-123456789012345678901234567890123456789012345678901234567890";
        assert_eq!(
            big.parse::<VarInt>().map(|v| v.to_string()),
            Ok(big.to_string())
        );
        for bad in ["", "-", "+", "1-", "1.0", " 1", "--1"] {
            assert!(bad.parse::<VarInt>().is_err(), "{bad:?}");
        }
        assert_eq!(VarInt::from(i64::MIN).to_string(), i64::MIN.to_string());
        assert_eq!(VarInt::from(i64::MIN).to_i64(), Some(i64::MIN));
        assert_eq!(VarInt::from_u64(u64::MAX).to_i64(), None);
    }

    #[test]
    fn varint_decode_malformed() {
        let bad: &[&[u8]] = &[b"", b"\xff", b"\xff\xff\xff", b"\xc0", b"\xe0\x00", b"\x3f"];
        for input in bad {
            assert!(VarInt::decode_comparable(input, 0).is_err(), "{input:?}");
        }
        assert!(VarInt::decode_comparable(b"\x80", 7).is_err());
    }

    /// Every int64 of vectors.md A4's list, and the fast varint equality it asserts.
    #[test]
    fn varint_equals_fast_varint_on_a4_values() {
        let mut values = vec![i64::MIN, i64::MAX, 0];
        for i in 0..63 {
            let p = 1i64 << i;
            values.extend([p, -p, p + 1, -(p + 1), p - 1, -(p - 1)]);
        }
        values.extend(-1000..=1000);
        for v in values {
            let mut fast = Vec::new();
            encode_signed(v, &mut fast);
            assert_eq!(VarInt::from(v).encoded_comparable(0), fast, "{v}");
        }
    }

    fn any_varint() -> impl Strategy<Value = VarInt> {
        prop_oneof![
            any::<i64>().prop_map(VarInt::from),
            (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..24))
                .prop_map(|(n, m)| VarInt::new(n, m)),
        ]
    }

    fn any_finite_decimal() -> impl Strategy<Value = Decimal> {
        (
            any::<bool>(),
            proptest::collection::vec(0u8..10, 0..30),
            -300i64..300,
        )
            .prop_map(|(n, d, e)| Decimal::new(n, d, e).unwrap_or_default())
    }

    fn any_decimal() -> impl Strategy<Value = Decimal> {
        prop_oneof![
            8 => any_finite_decimal(),
            1 => Just(Decimal::NaN),
            1 => Just(Decimal::PosInfinity),
            1 => Just(Decimal::NegInfinity),
            1 => (any::<bool>(), proptest::collection::vec(0u8..10, 1..5),
                  prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(i64::MIN + 40)])
                .prop_map(|(n, d, e)| Decimal::new(n, d, e).unwrap_or_default()),
        ]
    }

    /// m × 10^e as a decimal string, for comparisons against exact integer arithmetic.
    fn scaled(m: i64, e: i32) -> Decimal {
        dec(&format!("{m}e{e}"))
    }

    proptest! {
        #[test]
        fn fast_varint_equals_comparable_varint(v in any::<i64>()) {
            let mut fast = Vec::new();
            encode_signed(v, &mut fast);
            prop_assert_eq!(VarInt::from(v).encoded_comparable(0), fast);
        }

        #[test]
        fn varint_roundtrip_and_order(a in any_varint(), b in any_varint(), r in 0u32..7,
                                      tail in proptest::collection::vec(any::<u8>(), 0..4)) {
            let (ea, eb) = (a.encoded_comparable(r), b.encoded_comparable(r));
            prop_assert_eq!(a.cmp(&b), ea.cmp(&eb), "{} vs {}", a, b);
            let mut with_tail = ea.clone();
            with_tail.extend_from_slice(&tail);
            prop_assert_eq!(VarInt::decode_comparable(&with_tail, r), Ok((a.clone(), &tail[..])));
            let mut desc = Vec::new();
            a.encode_comparable_descending(&mut desc);
            let mut desc_b = Vec::new();
            b.encode_comparable_descending(&mut desc_b);
            prop_assert_eq!(b.cmp(&a), desc.cmp(&desc_b));
            prop_assert_eq!(VarInt::decode_comparable_descending(&desc), Ok((a.clone(), &[][..])));
            prop_assert_eq!(a.to_string().parse::<VarInt>(), Ok(a.clone()));
            if let Some(v) = a.to_i64() {
                prop_assert_eq!(a.to_string(), v.to_string());
            }
        }

        #[test]
        fn decimal_roundtrip_and_order(a in any_decimal(), b in any_decimal(),
                                       tail in proptest::collection::vec(any::<u8>(), 0..4)) {
            prop_assert_eq!(a.to_string().parse::<Decimal>(), Ok(a.clone()), "{}", a);
            if let (Ok(ea), Ok(eb)) = (a.encoded_comparable(), b.encoded_comparable()) {
                prop_assert_eq!(a.cmp(&b), ea.cmp(&eb), "{} vs {}", a, b);
                let mut with_tail = ea.clone();
                with_tail.extend_from_slice(&tail);
                prop_assert_eq!(Decimal::decode_comparable(&with_tail), Ok((a.clone(), &tail[..])));
                let mut desc = Vec::new();
                a.write_comparable(true, &mut desc);
                prop_assert_eq!(Decimal::decode_comparable(&desc).map(|(d, _)| d.negated()), Ok(a.clone()));
            }
        }

        #[test]
        fn decimal_order_is_numeric(m1 in -1_000_000_000i64..1_000_000_000, e1 in -10i32..10,
                                    m2 in -1_000_000_000i64..1_000_000_000, e2 in -10i32..10) {
            let (a, b) = (scaled(m1, e1), scaled(m2, e2));
            let low = e1.min(e2);
            let exact = |m: i64, e: i32| i128::from(m) * 10i128.pow((e - low) as u32);
            let expected = exact(m1, e1).cmp(&exact(m2, e2));
            prop_assert_eq!(a.cmp(&b), expected, "{} vs {}", a, b);
            prop_assert_eq!(a == b, expected == Ordering::Equal);
            let (ea, eb) = (a.encoded_comparable(), b.encoded_comparable());
            prop_assert_eq!(ea.clone().map(|x| eb.clone().map(|y| x.cmp(&y))), Ok(Ok(expected)));
        }

        #[test]
        fn decoders_never_panic(input in proptest::collection::vec(any::<u8>(), 0..40), r in 0u32..8) {
            let _ = Decimal::decode_comparable(&input);
            let _ = VarInt::decode_comparable(&input, r);
        }
    }
}
