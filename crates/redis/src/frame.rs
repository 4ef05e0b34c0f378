//! RESP frames: parsing requests (multibulk `*N\r\n$len\r\n...` and inline `PING\r\n`) and
//! encoding replies in RESP2 or RESP3 (the protocol a connection chose with HELLO).
//!
//! Parsing is two steps, as in mini-redis: [`check_request`] finds out cheaply whether the
//! buffer holds a whole request (and how long it is) or needs more bytes, or is malformed;
//! [`parse_request`] then builds the arguments. Malformed input and requests over the
//! [`Limits`] are errors worded as Redis words them, so a server can reply with them and
//! close the connection before reading any further.

use crate::number::format_double;

/// Request size limits (Redis: `proto-max-bulk-len`, the multibulk count limit, and the
/// inline request limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest bulk string in a request, in bytes. Default 512 MiB (Redis's default).
    pub max_bulk_len: usize,
    /// Most arguments in one request. Default 1 048 576 (Redis's limit).
    pub max_multibulk_len: usize,
    /// Longest inline request line. Default 64 KiB (Redis's `PROTO_INLINE_MAX_SIZE`).
    pub max_inline_len: usize,
    /// The client has not authenticated yet: over-limit counts and lengths are reported
    /// as Redis does before AUTH (`unauthenticated multibulk length`).
    pub unauthenticated: bool,
}

impl Limits {
    /// Redis's limits for a client that has not yet authenticated: at most 10 arguments of
    /// at most 16 KiB.
    pub fn unauthenticated(self) -> Limits {
        Limits {
            max_bulk_len: self.max_bulk_len.min(16 * 1024),
            max_multibulk_len: self.max_multibulk_len.min(10),
            unauthenticated: true,
            ..self
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: 512 << 20,
            max_multibulk_len: 1024 * 1024,
            max_inline_len: 64 * 1024,
            unauthenticated: false,
        }
    }
}

/// Why a buffer does not (yet) hold a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// More bytes are needed.
    #[error("incomplete frame")]
    Incomplete,
    /// The bytes break the protocol or a limit; the text is Redis's error reply (without the
    /// leading `-`), after which Redis closes the connection.
    #[error("{0}")]
    Protocol(String),
}

fn protocol(msg: &str) -> FrameError {
    FrameError::Protocol(format!("ERR Protocol error: {msg}"))
}

/// The reply protocol of a connection: RESP2 until `HELLO 3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// RESP2: maps, sets and pushes are arrays, doubles are bulk strings.
    #[default]
    Resp2,
    /// RESP3: every type as itself.
    Resp3,
}

impl Protocol {
    /// The version number HELLO and CLIENT LIST show: 2 or 3.
    pub fn number(self) -> i64 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

/// A reply (or, for tests and clients, any RESP2 or RESP3 value). The RESP3-only types
/// encode as their RESP2 equivalents on a RESP2 connection, as Redis sends them.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `+OK\r\n`
    Simple(String),
    /// `-ERR ...\r\n`
    Error(String),
    /// `:42\r\n`
    Integer(i64),
    /// `$3\r\nfoo\r\n`
    Bulk(Vec<u8>),
    /// `$-1\r\n` (RESP3: `_\r\n`)
    Null,
    /// `*-1\r\n` (RESP3: `_\r\n`)
    NullArray,
    /// `*2\r\n...`
    Array(Vec<Frame>),
    /// `,1.5\r\n` (RESP2: the same text as a bulk string)
    Double(f64),
    /// `,13.36138933897018433\r\n`: a double spelled exactly as given, as Redis's
    /// `addReplyHumanLongDouble` sends GEO coordinates (RESP2: the same text as a bulk
    /// string). Parsing reads it back as [`Frame::Double`].
    DoubleText(String),
    /// `%1\r\n` key, value (RESP2: a flat array of keys and values)
    Map(Vec<(Frame, Frame)>),
    /// `~2\r\n...` (RESP2: an array)
    Set(Vec<Frame>),
    /// `>3\r\n...`, out-of-band data such as published messages (RESP2: an array)
    Push(Vec<Frame>),
    /// `#t\r\n` (RESP2: `:1` or `:0`)
    Boolean(bool),
    /// `=7\r\ntxt:abc\r\n`: text meant for people, such as INFO's (RESP2: a bulk string)
    Verbatim(Vec<u8>),
    /// `(12345678901234567890\r\n` (RESP2: a bulk string)
    BigNumber(String),
}

impl Frame {
    /// Appends the RESP2 encoding.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        self.encode_as(Protocol::Resp2, out);
    }

    /// Appends the encoding in `protocol`.
    pub fn encode_as(&self, protocol: Protocol, out: &mut Vec<u8>) {
        let resp3 = protocol == Protocol::Resp3;
        match self {
            Frame::Simple(s) => line(out, '+', s),
            Frame::Error(s) => line(out, '-', s),
            Frame::Integer(n) => line(out, ':', &n.to_string()),
            Frame::Bulk(bytes) => blob(out, b'$', bytes),
            Frame::Null | Frame::NullArray if resp3 => out.extend_from_slice(b"_\r\n"),
            Frame::Null => out.extend_from_slice(b"$-1\r\n"),
            Frame::NullArray => out.extend_from_slice(b"*-1\r\n"),
            Frame::Array(items) => aggregate(out, '*', items, protocol),
            Frame::Double(d) if resp3 => line(out, ',', &format_double(*d)),
            Frame::Double(d) => blob(out, b'$', format_double(*d).as_bytes()),
            Frame::DoubleText(text) if resp3 => line(out, ',', text),
            Frame::DoubleText(text) => blob(out, b'$', text.as_bytes()),
            Frame::Map(entries) => {
                let count = if resp3 {
                    entries.len()
                } else {
                    entries.len() * 2
                };
                line(out, if resp3 { '%' } else { '*' }, &count.to_string());
                for (key, value) in entries {
                    key.encode_as(protocol, out);
                    value.encode_as(protocol, out);
                }
            }
            Frame::Set(items) => aggregate(out, if resp3 { '~' } else { '*' }, items, protocol),
            Frame::Push(items) => aggregate(out, if resp3 { '>' } else { '*' }, items, protocol),
            Frame::Boolean(b) if resp3 => line(out, '#', if *b { "t" } else { "f" }),
            Frame::Boolean(b) => line(out, ':', if *b { "1" } else { "0" }),
            Frame::Verbatim(text) if resp3 => {
                line(out, '=', &(text.len() + 4).to_string());
                out.extend_from_slice(b"txt:");
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            }
            Frame::Verbatim(text) => blob(out, b'$', text),
            Frame::BigNumber(n) if resp3 => line(out, '(', n),
            Frame::BigNumber(n) => blob(out, b'$', n.as_bytes()),
        }
    }

    /// The RESP2 encoding as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_to(&mut out);
        out
    }

    /// Parses one RESP2 or RESP3 value from the front of `buf` (replies, or any frame),
    /// returning it and its length. RESP3 attributes (`|`) are read and dropped; blob errors
    /// (`!`) become [`Frame::Error`].
    pub fn parse(buf: &[u8]) -> Result<(Frame, usize), FrameError> {
        let mut cursor = Cursor { buf, pos: 0 };
        let frame = cursor.frame(0)?;
        Ok((frame, cursor.pos))
    }
}

/// A length-prefixed string: `$` bulk (or `=` verbatim, `!` blob error).
fn blob(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.push(tag);
    out.extend_from_slice(bytes.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

fn aggregate(out: &mut Vec<u8>, tag: char, items: &[Frame], protocol: Protocol) {
    line(out, tag, &items.len().to_string());
    for item in items {
        item.encode_as(protocol, out);
    }
}

fn line(out: &mut Vec<u8>, tag: char, text: &str) {
    out.push(tag as u8);
    // Simple strings and errors cannot contain line breaks; replace them defensively.
    out.extend(
        text.bytes()
            .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

/// How deep [`Frame::parse`] follows nested arrays before calling the input malformed.
const MAX_NESTING: usize = 32;

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// The next line without its `\r\n`.
    fn line(&mut self) -> Result<&'a [u8], FrameError> {
        let rest = &self.buf[self.pos..];
        let end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or(FrameError::Incomplete)?;
        self.pos += end + 2;
        Ok(&rest[..end])
    }

    fn byte(&mut self) -> Result<u8, FrameError> {
        let b = *self.buf.get(self.pos).ok_or(FrameError::Incomplete)?;
        self.pos += 1;
        Ok(b)
    }

    fn number(&mut self, what: &str) -> Result<i64, FrameError> {
        let text = self.line()?;
        parse_int(text).ok_or_else(|| protocol(&format!("invalid {what}")))
    }

    fn bytes(&mut self, len: usize) -> Result<&'a [u8], FrameError> {
        let end = self
            .pos
            .checked_add(len)
            .ok_or_else(|| protocol("invalid bulk length"))?;
        if self.buf.len() < end + 2 {
            return Err(FrameError::Incomplete);
        }
        if &self.buf[end..end + 2] != b"\r\n" {
            return Err(protocol("bulk string is not terminated by CRLF"));
        }
        let bytes = &self.buf[self.pos..end];
        self.pos = end + 2;
        Ok(bytes)
    }

    /// A length line, then that many bytes.
    fn blob(&mut self, what: &str) -> Result<&'a [u8], FrameError> {
        match self.number(what)? {
            n if n < 0 => Err(protocol(&format!("invalid {what}"))),
            n => self.bytes(n as usize),
        }
    }

    /// An aggregate's count line, then its elements: `width` per counted entry (a map has
    /// two).
    fn aggregate(&mut self, depth: usize, width: i64) -> Result<Vec<Frame>, FrameError> {
        let n = self.number("multibulk length")?;
        self.items(depth, n, width)
    }

    /// `n * width` elements.
    fn items(&mut self, depth: usize, n: i64, width: i64) -> Result<Vec<Frame>, FrameError> {
        if n < 0 {
            return Err(protocol("invalid multibulk length"));
        }
        let total = n
            .checked_mul(width)
            .ok_or_else(|| protocol("invalid multibulk length"))?;
        // Never trust a length for an allocation: grow as elements arrive.
        let mut items = Vec::new();
        for _ in 0..total {
            items.push(self.frame(depth + 1)?);
        }
        Ok(items)
    }

    fn frame(&mut self, depth: usize) -> Result<Frame, FrameError> {
        if depth > MAX_NESTING {
            return Err(protocol("nested too deeply"));
        }
        match self.byte()? {
            b'+' => Ok(Frame::Simple(
                String::from_utf8_lossy(self.line()?).into_owned(),
            )),
            b'-' => Ok(Frame::Error(
                String::from_utf8_lossy(self.line()?).into_owned(),
            )),
            b':' => Ok(Frame::Integer(self.number("integer")?)),
            b'$' => match self.number("bulk length")? {
                -1 => Ok(Frame::Null),
                n if n < 0 => Err(protocol("invalid bulk length")),
                n => Ok(Frame::Bulk(self.bytes(n as usize)?.to_vec())),
            },
            b'*' => match self.number("multibulk length")? {
                -1 => Ok(Frame::NullArray),
                n => Ok(Frame::Array(self.items(depth, n, 1)?)),
            },
            b'_' => match self.line()? {
                b"" => Ok(Frame::Null),
                _ => Err(protocol("invalid null")),
            },
            b',' => {
                let text = self.line()?;
                let value = std::str::from_utf8(text).ok().and_then(|t| t.parse().ok());
                value
                    .map(Frame::Double)
                    .ok_or_else(|| protocol("invalid double"))
            }
            b'#' => match self.line()? {
                b"t" => Ok(Frame::Boolean(true)),
                b"f" => Ok(Frame::Boolean(false)),
                _ => Err(protocol("invalid boolean")),
            },
            b'(' => {
                let text = self.line()?;
                let digits = text.strip_prefix(b"-").unwrap_or(text);
                if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                    return Err(protocol("invalid big number"));
                }
                Ok(Frame::BigNumber(String::from_utf8_lossy(text).into_owned()))
            }
            b'!' => {
                let bytes = self.blob("blob error length")?;
                Ok(Frame::Error(String::from_utf8_lossy(bytes).into_owned()))
            }
            b'=' => {
                let bytes = self.blob("verbatim length")?;
                match bytes.get(3) {
                    Some(b':') => Ok(Frame::Verbatim(bytes[4..].to_vec())),
                    _ => Err(protocol("verbatim string without a format")),
                }
            }
            b'~' => Ok(Frame::Set(self.aggregate(depth, 1)?)),
            b'>' => Ok(Frame::Push(self.aggregate(depth, 1)?)),
            b'%' => {
                let keys_and_values = self.aggregate(depth, 2)?;
                let mut entries = Vec::with_capacity(keys_and_values.len() / 2);
                let mut items = keys_and_values.into_iter();
                while let (Some(key), Some(value)) = (items.next(), items.next()) {
                    entries.push((key, value));
                }
                Ok(Frame::Map(entries))
            }
            b'|' => {
                // Attributes describe the value that follows; a client may ignore them.
                self.aggregate(depth, 2)?;
                self.frame(depth)
            }
            other => Err(protocol(&format!(
                "unexpected type byte '{}'",
                other.escape_ascii()
            ))),
        }
    }
}

/// A decimal integer as Redis's `string2ll` accepts it: optional `-`, digits, no leading
/// zeros (`0` itself aside), no `-0`.
pub(crate) fn parse_int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if digits[0] == b'0' && (digits.len() > 1 || negative) {
        return None;
    }
    // Accumulate towards the sign so that i64::MIN, whose magnitude has no i64, parses.
    digits.iter().try_fold(0i64, |acc, &d| {
        let digit = i64::from(d - b'0');
        let shifted = acc.checked_mul(10)?;
        if negative {
            shifted.checked_sub(digit)
        } else {
            shifted.checked_add(digit)
        }
    })
}

/// Checks whether `buf` starts with a whole request and returns its length, without building
/// anything. Errors: [`FrameError::Incomplete`] (read more), or a protocol error (reply and
/// close): a count or length over `limits` is reported as soon as its header is read, before
/// the bytes it announces arrive.
pub fn check_request(buf: &[u8], limits: &Limits) -> Result<usize, FrameError> {
    scan_request(buf, limits, |_| {})
}

/// Parses the request at the front of `buf` into its arguments, returning them and the
/// request's length. An empty inline line yields no arguments (Redis ignores it).
pub fn parse_request(buf: &[u8], limits: &Limits) -> Result<(Vec<Vec<u8>>, usize), FrameError> {
    let mut args = Vec::new();
    let len = scan_request(buf, limits, |arg| args.push(arg.to_vec()))?;
    Ok((args, len))
}

fn scan_request(
    buf: &[u8],
    limits: &Limits,
    mut emit: impl FnMut(&[u8]),
) -> Result<usize, FrameError> {
    let Some(&first) = buf.first() else {
        return Err(FrameError::Incomplete);
    };
    if first != b'*' {
        return scan_inline(buf, limits, emit);
    }
    let mut cursor = Cursor { buf, pos: 1 };
    let count = match cursor.line() {
        Ok(text) => text,
        Err(FrameError::Incomplete) if buf.len() > 32 => {
            return Err(protocol("too big mbulk count string"));
        }
        Err(e) => return Err(e),
    };
    let count = parse_int(count).ok_or_else(|| protocol("invalid multibulk length"))?;
    if count > limits.max_multibulk_len as i64 {
        return Err(protocol(if limits.unauthenticated {
            "unauthenticated multibulk length"
        } else {
            "invalid multibulk length"
        }));
    }
    for _ in 0..count.max(0) {
        let tag = cursor.byte()?;
        if tag != b'$' {
            return Err(protocol(&format!(
                "expected '$', got '{}'",
                tag.escape_ascii()
            )));
        }
        let start = cursor.pos;
        let len = match cursor.line() {
            Ok(text) => text,
            Err(FrameError::Incomplete) if buf.len() - start > 32 => {
                return Err(protocol("too big bulk count string"));
            }
            Err(e) => return Err(e),
        };
        let len = parse_int(len).ok_or_else(|| protocol("invalid bulk length"))?;
        if len < 0 {
            return Err(protocol("invalid bulk length"));
        }
        if len > limits.max_bulk_len as i64 {
            return Err(protocol(if limits.unauthenticated {
                "unauthenticated bulk length"
            } else {
                "invalid bulk length"
            }));
        }
        emit(cursor.bytes(len as usize)?);
    }
    Ok(cursor.pos)
}

/// An inline request: one line, arguments split on spaces, with `"..."` (C escapes) and
/// `'...'` quoting as Redis's `sdssplitargs`.
fn scan_inline(
    buf: &[u8],
    limits: &Limits,
    mut emit: impl FnMut(&[u8]),
) -> Result<usize, FrameError> {
    let Some(end) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > limits.max_inline_len {
            return Err(protocol("too big inline request"));
        }
        return Err(FrameError::Incomplete);
    };
    if end > limits.max_inline_len {
        return Err(protocol("too big inline request"));
    }
    let line = buf[..end].strip_suffix(b"\r").unwrap_or(&buf[..end]);
    for arg in split_args(line).ok_or_else(|| protocol("unbalanced quotes in request"))? {
        emit(&arg);
    }
    Ok(end + 1)
}

/// Redis's `sdssplitargs`: `None` on unbalanced quotes.
fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while line.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if i >= line.len() {
            return Some(args);
        }
        let mut arg = Vec::new();
        let (mut in_double, mut in_single) = (false, false);
        loop {
            let c = line.get(i).copied();
            if in_double {
                match c? {
                    b'\\'
                        if line.get(i + 1) == Some(&b'x')
                            && line.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
                            && line.get(i + 3).is_some_and(u8::is_ascii_hexdigit) =>
                    {
                        let hex = std::str::from_utf8(&line[i + 2..i + 4]).ok()?;
                        arg.push(u8::from_str_radix(hex, 16).ok()?);
                        i += 3;
                    }
                    b'\\' if i + 1 < line.len() => {
                        i += 1;
                        arg.push(match line[i] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                    }
                    b'"' => {
                        // A closing quote must be followed by a space or the end.
                        if line.get(i + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    other => arg.push(other),
                }
            } else if in_single {
                match c? {
                    b'\\' if line.get(i + 1) == Some(&b'\'') => {
                        arg.push(b'\'');
                        i += 1;
                    }
                    b'\'' => {
                        if line.get(i + 1).is_some_and(|b| !b.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    other => arg.push(other),
                }
            } else {
                match c {
                    None => break,
                    Some(b) if b.is_ascii_whitespace() => break,
                    Some(b'"') => in_double = true,
                    Some(b'\'') => in_single = true,
                    Some(other) => arg.push(other),
                }
            }
            i += 1;
        }
        args.push(arg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn args(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn multibulk_request() {
        let buf = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*1\r\n$4\r\nPING\r\n";
        let limits = Limits::default();
        let (first, len) = parse_request(buf, &limits).expect("first");
        assert_eq!(first, args(&["SET", "key", "value"]));
        assert_eq!(check_request(buf, &limits), Ok(len));
        // Pipelining: the next request follows.
        assert_eq!(
            parse_request(&buf[len..], &limits).expect("second").0,
            args(&["PING"])
        );
        // Every strict prefix of a request is incomplete, never an error.
        for cut in 0..len {
            assert_eq!(
                check_request(&buf[..cut], &limits),
                Err(FrameError::Incomplete),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn binary_safe_bulk() {
        let buf = b"*2\r\n$3\r\nGET\r\n$4\r\na\r\nb\r\n";
        assert_eq!(
            parse_request(buf, &Limits::default()).expect("parse").0,
            vec![b"GET".to_vec(), b"a\r\nb".to_vec()]
        );
    }

    #[test]
    fn inline_requests() {
        let limits = Limits::default();
        assert_eq!(
            parse_request(b"PING\r\n", &limits),
            Ok((args(&["PING"]), 6))
        );
        assert_eq!(
            parse_request(b"set k \"a b\\n\"\n", &limits)
                .expect("quoted")
                .0,
            vec![b"set".to_vec(), b"k".to_vec(), b"a b\n".to_vec()]
        );
        assert_eq!(
            parse_request(b"echo 'it\\'s' \"\\x41\"\r\n", &limits)
                .expect("escapes")
                .0,
            args(&["echo", "it's", "A"])
        );
        assert_eq!(parse_request(b"\r\n", &limits), Ok((vec![], 2)));
        // Like Redis, a multibulk count of zero or less is an empty request, skipped.
        assert_eq!(parse_request(b"*-2\r\nPING\r\n", &limits), Ok((vec![], 5)));
        assert_eq!(
            parse_request(b"set k \"v\n", &limits),
            Err(protocol("unbalanced quotes in request"))
        );
        assert_eq!(parse_request(b"PING", &limits), Err(FrameError::Incomplete));
    }

    #[test]
    fn malformed_and_oversized_requests() {
        let limits = Limits {
            max_bulk_len: 16,
            max_multibulk_len: 4,
            max_inline_len: 32,
            unauthenticated: false,
        };
        let cases: &[(&[u8], &str)] = &[
            (b"*x\r\n", "invalid multibulk length"),
            (b"*5\r\n", "invalid multibulk length"),
            (b"*1\r\n:1\r\n", "expected '$', got ':'"),
            (b"*1\r\n$-2\r\n", "invalid bulk length"),
            (b"*1\r\n$17\r\n", "invalid bulk length"),
            (
                b"*1\r\n$3\r\nabcd\r\n",
                "bulk string is not terminated by CRLF",
            ),
            (b"*1\r\n$1x\r\n", "invalid bulk length"),
            (b"*01\r\n", "invalid multibulk length"),
            (b"*1\r\n$-0\r\n", "invalid bulk length"),
        ];
        for (input, message) in cases {
            assert_eq!(
                check_request(input, &limits),
                Err(protocol(message)),
                "{}",
                input.escape_ascii()
            );
        }
        // An oversized announcement is refused before its bytes arrive.
        assert_eq!(
            check_request(b"*1\r\n$999999999\r\n", &Limits::default()),
            Err(protocol("invalid bulk length"))
        );
        assert_eq!(
            check_request(&[b'a'; 40], &limits),
            Err(protocol("too big inline request"))
        );
        assert_eq!(
            protocol("invalid bulk length").to_string(),
            "ERR Protocol error: invalid bulk length"
        );
    }

    #[test]
    fn replies_encode_as_resp2() {
        let reply = Frame::Array(vec![
            Frame::Simple("OK".into()),
            Frame::Error(
                "WRONGTYPE Operation against a key holding the wrong kind of value".into(),
            ),
            Frame::Integer(-42),
            Frame::Bulk(b"hi".to_vec()),
            Frame::Null,
            Frame::NullArray,
        ]);
        let bytes = reply.encode();
        assert_eq!(
            bytes,
            b"*6\r\n+OK\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n:-42\r\n$2\r\nhi\r\n$-1\r\n*-1\r\n"
        );
        assert_eq!(Frame::parse(&bytes), Ok((reply, bytes.len())));
    }

    #[test]
    fn resp3_types_encode_as_resp2_equivalents() {
        let reply = Frame::Array(vec![
            Frame::Double(1.5),
            Frame::Map(vec![(Frame::Bulk(b"f".to_vec()), Frame::Integer(1))]),
            Frame::Set(vec![Frame::Bulk(b"x".to_vec())]),
            Frame::Push(vec![Frame::Bulk(b"message".to_vec())]),
            Frame::Boolean(true),
            Frame::Verbatim(b"# Server".to_vec()),
            Frame::BigNumber("123".into()),
            Frame::Double(f64::NEG_INFINITY),
        ]);
        assert_eq!(
            reply.encode(),
            b"*8\r\n$3\r\n1.5\r\n*2\r\n$1\r\nf\r\n:1\r\n*1\r\n$1\r\nx\r\n*1\r\n$7\r\nmessage\r\n\
              :1\r\n$8\r\n# Server\r\n$3\r\n123\r\n$4\r\n-inf\r\n"
        );
    }

    /// The RESP3 wire forms, as the RESP3 specification gives them.
    #[test]
    fn resp3_encodings() {
        let cases: [(Frame, &[u8]); 10] = [
            (Frame::Null, b"_\r\n"),
            (Frame::NullArray, b"_\r\n"),
            (Frame::Double(1.23), b",1.23\r\n"),
            (Frame::Double(f64::INFINITY), b",inf\r\n"),
            (Frame::Boolean(false), b"#f\r\n"),
            (
                Frame::BigNumber("3492890328409238509324850943850943825024385".into()),
                b"(3492890328409238509324850943850943825024385\r\n",
            ),
            (
                Frame::Verbatim(b"Some string".to_vec()),
                b"=15\r\ntxt:Some string\r\n",
            ),
            (
                Frame::Map(vec![(Frame::Simple("first".into()), Frame::Integer(1))]),
                b"%1\r\n+first\r\n:1\r\n",
            ),
            (
                Frame::Set(vec![Frame::Integer(1), Frame::Boolean(true)]),
                b"~2\r\n:1\r\n#t\r\n",
            ),
            (
                Frame::Push(vec![Frame::Bulk(b"pubsub".to_vec()), Frame::Integer(2)]),
                b">2\r\n$6\r\npubsub\r\n:2\r\n",
            ),
        ];
        for (frame, want) in cases {
            let mut got = Vec::new();
            frame.encode_as(Protocol::Resp3, &mut got);
            assert_eq!(got, want, "{frame:?}");
        }
    }

    #[test]
    fn resp3_parsing_extras() {
        // A blob error, an attribute before its value, and malformed RESP3 lines.
        assert_eq!(
            Frame::parse(b"!9\r\nERR oops!\r\n"),
            Ok((Frame::Error("ERR oops!".into()), 15))
        );
        let attributed = b"|1\r\n+ttl\r\n:3\r\n:42\r\n";
        assert_eq!(
            Frame::parse(attributed),
            Ok((Frame::Integer(42), attributed.len()))
        );
        for bad in [
            &b"#x\r\n"[..],
            b",one\r\n",
            b"(12a\r\n",
            b"_x\r\n",
            b"=3\r\ntxt\r\n",
            b"%-1\r\n",
        ] {
            assert!(
                matches!(Frame::parse(bad), Err(FrameError::Protocol(_))),
                "{}",
                bad.escape_ascii()
            );
        }
    }

    /// Frames that survive an encode and parse in `protocol`: RESP2 has none of RESP3's
    /// types, and RESP3 has one null.
    fn any_frame(protocol: Protocol) -> BoxedStrategy<Frame> {
        let text = "[a-zA-Z0-9 ]{0,12}";
        let mut leaves = vec![
            text.prop_map(Frame::Simple).boxed(),
            text.prop_map(Frame::Error).boxed(),
            any::<i64>().prop_map(Frame::Integer).boxed(),
            proptest::collection::vec(any::<u8>(), 0..24)
                .prop_map(Frame::Bulk)
                .boxed(),
            Just(Frame::Null).boxed(),
        ];
        if protocol == Protocol::Resp2 {
            leaves.push(Just(Frame::NullArray).boxed());
        } else {
            leaves.extend([
                any::<f64>()
                    .prop_filter("NaN has no equal", |d| !d.is_nan())
                    .prop_map(Frame::Double)
                    .boxed(),
                any::<bool>().prop_map(Frame::Boolean).boxed(),
                proptest::collection::vec(any::<u8>(), 0..24)
                    .prop_map(Frame::Verbatim)
                    .boxed(),
                "-?[0-9]{1,40}".prop_map(Frame::BigNumber).boxed(),
            ]);
        }
        let leaf = proptest::strategy::Union::new(leaves);
        leaf.prop_recursive(3, 24, 4, move |inner| {
            let list = proptest::collection::vec(inner.clone(), 0..4);
            if protocol == Protocol::Resp2 {
                return list.prop_map(Frame::Array).boxed();
            }
            prop_oneof![
                list.clone().prop_map(Frame::Array),
                list.clone().prop_map(Frame::Set),
                list.prop_map(Frame::Push),
                proptest::collection::vec((inner.clone(), inner), 0..3).prop_map(Frame::Map),
            ]
            .boxed()
        })
        .boxed()
    }

    proptest! {
        #[test]
        fn frames_roundtrip(frame in any_frame(Protocol::Resp2)) {
            let bytes = frame.encode();
            prop_assert_eq!(Frame::parse(&bytes), Ok((frame, bytes.len())));
            for cut in 0..bytes.len() {
                prop_assert_eq!(Frame::parse(&bytes[..cut]), Err(FrameError::Incomplete));
            }
        }

        #[test]
        fn resp3_frames_roundtrip(frame in any_frame(Protocol::Resp3)) {
            let mut bytes = Vec::new();
            frame.encode_as(Protocol::Resp3, &mut bytes);
            prop_assert_eq!(Frame::parse(&bytes), Ok((frame, bytes.len())));
            for cut in 0..bytes.len() {
                prop_assert_eq!(Frame::parse(&bytes[..cut]), Err(FrameError::Incomplete));
            }
        }

        #[test]
        fn requests_roundtrip(list in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..16), 1..5)) {
            let request = Frame::Array(list.iter().cloned().map(Frame::Bulk).collect()).encode();
            prop_assert_eq!(parse_request(&request, &Limits::default()), Ok((list, request.len())));
        }

        #[test]
        fn parsers_never_panic(bytes: Vec<u8>) {
            let limits = Limits { max_bulk_len: 64, max_multibulk_len: 8, max_inline_len: 64, unauthenticated: false };
            let _ = check_request(&bytes, &limits);
            let _ = parse_request(&bytes, &limits);
            let _ = Frame::parse(&bytes);
        }
    }
}
