//! YugabyteDB's debug escaping of byte strings (format.md §12, `FormatBytesAsStr`).

use std::fmt::{self, Write};

/// Writes `bytes` wrapped in `quote`: the quote char and `\` are backslash-escaped, printable
/// ASCII (0x20..=0x7E) is kept, everything else becomes `\xNN` in lowercase hex.
pub fn write_quoted(f: &mut impl Write, bytes: &[u8], quote: char) -> fmt::Result {
    f.write_char(quote)?;
    for &b in bytes {
        let c = b as char;
        if c == quote || c == '\\' {
            f.write_char('\\')?;
            f.write_char(c)?;
        } else if (0x20..=0x7e).contains(&b) {
            f.write_char(c)?;
        } else {
            write!(f, "\\x{b:02x}")?;
        }
    }
    f.write_char(quote)
}

/// `bytes` in double-quoted debug form, as YugabyteDB's `FormatBytesAsStr` prints them.
pub fn format_bytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    // Writing into a String cannot fail.
    let _ = write_quoted(&mut s, bytes, '"');
    s
}

/// Parses the double-quoted form back into bytes: the inverse of [`format_bytes`], also
/// accepting any `\xNN` escape. Returns `None` on malformed text.
pub fn parse_quoted(text: &str, quote: char) -> Option<Vec<u8>> {
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next()? {
            b'x' => {
                let hi = (bytes.next()? as char).to_digit(16)?;
                let lo = (bytes.next()? as char).to_digit(16)?;
                out.push((hi * 16 + lo) as u8);
            }
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_yugabyte() {
        assert_eq!(
            format_bytes(b"foo\"\x00\x01\x02\"bar"),
            r#""foo\"\x00\x01\x02\"bar""#
        );
        assert_eq!(format_bytes(b"a\\b\x7f "), r#""a\\b\x7f ""#);
    }

    #[test]
    fn parse_inverts_format() {
        let raw = b"Sfoo\x00\x01bar\x01\x00\x00\"\\~\xff";
        assert_eq!(
            parse_quoted(&format_bytes(raw), '"').as_deref(),
            Some(&raw[..])
        );
        assert_eq!(parse_quoted(r#""\x4"#, '"'), None);
    }
}
