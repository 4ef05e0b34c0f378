//! Arbitrary-precision `VarInt` and `Decimal` with YugabyteDB's comparable encodings
//! (format.md §2.2, §2.3).

/// Arbitrary-precision integer: sign and big-endian magnitude without leading zero bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct VarInt {
    /// True for negative values (never for zero).
    pub negative: bool,
    /// Big-endian magnitude; empty for zero.
    pub magnitude: Vec<u8>,
}

/// Arbitrary-precision decimal `±0.d1d2d3… × 10^exponent`, or a special value.
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
