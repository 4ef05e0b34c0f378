//! Splits one line of shell input into tokens, on demand.
//!
//! The parser pulls tokens one at a time because a few literals contain text that is not made
//! of tokens (`uuid(123e4567-e89b-...)`, `inet(::1)`, `CoTableId=<uuid>`); for those it asks
//! for the raw text up to a delimiter instead ([`Lexer::raw_until`]).
//!
//! Tokens: identifiers `[A-Za-z_][A-Za-z0-9_]*`; numbers, which start with a digit or `-` and a
//! digit and run over letters, digits, `_` and `.` (so `0x1234`, `1.5`, `10ms` and `1e-3` are
//! one token each, interpreted by the parser); double-quoted strings with the escapes `\"`,
//! `\\` and `\xNN`; and the punctuation `( ) [ ] { } , : ; = @ +`. A `#` outside a string
//! starts a comment that runs to the end of the line.

use crate::parser::{ParseError, ParseErrorKind};

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenKind<'a> {
    /// A word: keyword, type name or function name.
    Ident(&'a str),
    /// A number with whatever letters follow it, uninterpreted.
    Number(&'a str),
    /// A string literal, unescaped.
    Str(Vec<u8>),
    /// One punctuation character.
    Punct(char),
    /// End of the line (or start of a comment).
    End,
}

/// A token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token<'a> {
    pub(crate) kind: TokenKind<'a>,
    pub(crate) start: usize,
}

impl Token<'_> {
    /// How an error message names this token.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            TokenKind::Ident(s) | TokenKind::Number(s) => format!("`{s}`"),
            TokenKind::Str(bytes) => format!("string {}", dockv::escape::format_bytes(bytes)),
            TokenKind::Punct(c) => format!("`{c}`"),
            TokenKind::End => "end of line".to_string(),
        }
    }
}

const PUNCTUATION: &str = "()[]{},:;=@+";

/// An on-demand tokenizer over one line.
#[derive(Debug, Clone)]
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0 }
    }

    /// The whole line.
    pub(crate) fn source(&self) -> &'a str {
        self.src
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    /// The next token without consuming it.
    pub(crate) fn peek(&self) -> Result<Token<'a>, ParseError> {
        self.clone().next_token()
    }

    /// Consumes and returns the next token.
    pub(crate) fn next_token(&mut self) -> Result<Token<'a>, ParseError> {
        self.skip_space();
        let start = self.pos;
        let rest = self.rest();
        let Some(c) = rest.chars().next() else {
            return Ok(Token {
                kind: TokenKind::End,
                start,
            });
        };
        let kind = if c == '#' {
            // A comment: nothing more on this line counts.
            TokenKind::End
        } else if c.is_ascii_alphabetic() || c == '_' {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            self.pos += len;
            TokenKind::Ident(&rest[..len])
        } else if c.is_ascii_digit()
            || (c == '-' && rest[1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            let len = number_len(rest);
            self.pos += len;
            TokenKind::Number(&rest[..len])
        } else if c == '"' {
            let (bytes, len) = lex_string(rest, start, self.src)?;
            self.pos += len;
            TokenKind::Str(bytes)
        } else if PUNCTUATION.contains(c) {
            self.pos += 1;
            TokenKind::Punct(c)
        } else {
            return Err(ParseError::new(
                self.src,
                start,
                ParseErrorKind::UnexpectedChar(c),
            ));
        };
        Ok(Token { kind, start })
    }

    /// Consumes the raw text up to (not including) the first of `delims`, trimmed, with the
    /// byte offset where it starts. Used for the bodies of `uuid(...)`, `inet(...)` and the
    /// like, which are not made of tokens.
    pub(crate) fn raw_until(&mut self, delims: &[char]) -> (usize, &'a str) {
        self.skip_space();
        let start = self.pos;
        let rest = self.rest();
        let len = rest
            .find(|c: char| delims.contains(&c))
            .unwrap_or(rest.len());
        self.pos += len;
        (start, rest[..len].trim_end())
    }
}

/// Length of a number token at the front of `s` (which starts with a digit or `-digit`).
fn number_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let is_hex = s[i..].starts_with("0x") || s[i..].starts_with("0X");
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
            i += 1;
        } else if (b == b'-' || b == b'+')
            && !is_hex
            && matches!(bytes.get(i.wrapping_sub(1)), Some(b'e' | b'E'))
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            // The sign of an exponent: `1e-3`.
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// Lexes a double-quoted string at the front of `s`; returns its bytes and the token length.
fn lex_string(s: &str, start: usize, src: &str) -> Result<(Vec<u8>, usize), ParseError> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        let Some(&b) = bytes.get(i) else {
            return Err(ParseError::new(
                src,
                start,
                ParseErrorKind::UnterminatedString,
            ));
        };
        match b {
            b'"' => return Ok((out, i + 1)),
            b'\\' => {
                let escape_at = start + i;
                match bytes.get(i + 1) {
                    Some(b'"') => out.push(b'"'),
                    Some(b'\\') => out.push(b'\\'),
                    Some(b'x') => {
                        let hex = bytes
                            .get(i + 2..i + 4)
                            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                            .and_then(|h| std::str::from_utf8(h).ok());
                        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                            Some(byte) => out.push(byte),
                            None => {
                                let text: String = s[i..].chars().take(4).collect();
                                return Err(ParseError::new(
                                    src,
                                    escape_at,
                                    ParseErrorKind::BadEscape(text),
                                ));
                            }
                        }
                        i += 2;
                    }
                    _ => {
                        let text: String = s[i..].chars().take(2).collect();
                        return Err(ParseError::new(
                            src,
                            escape_at,
                            ParseErrorKind::BadEscape(text),
                        ));
                    }
                }
                i += 2;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &str) -> Vec<TokenKind<'_>> {
        let mut lexer = Lexer::new(line);
        let mut out = Vec::new();
        loop {
            let token = lexer.next_token().expect("token");
            if token.kind == TokenKind::End {
                return out;
            }
            out.push(token.kind);
        }
    }

    #[test]
    fn splits_tokens() {
        use TokenKind::*;
        assert_eq!(
            kinds(r#"write @1000+5 set DocKey(0x1234, [-5, 1.5e-3], ["a\"\\\x00;"]) = 10ms # c"#),
            vec![
                Ident("write"),
                Punct('@'),
                Number("1000"),
                Punct('+'),
                Number("5"),
                Ident("set"),
                Ident("DocKey"),
                Punct('('),
                Number("0x1234"),
                Punct(','),
                Punct('['),
                Number("-5"),
                Punct(','),
                Number("1.5e-3"),
                Punct(']'),
                Punct(','),
                Punct('['),
                Str(b"a\"\\\x00;".to_vec()),
                Punct(']'),
                Punct(')'),
                Punct('='),
                Number("10ms"),
            ]
        );
    }

    #[test]
    fn raw_text() {
        let mut lexer = Lexer::new("uuid( 123e4567-e89b-12d3-a456-426614174000 ) x");
        assert_eq!(
            lexer.next_token().expect("t").kind,
            TokenKind::Ident("uuid")
        );
        assert_eq!(lexer.next_token().expect("t").kind, TokenKind::Punct('('));
        assert_eq!(
            lexer.raw_until(&[')']),
            (6, "123e4567-e89b-12d3-a456-426614174000")
        );
        assert_eq!(lexer.next_token().expect("t").kind, TokenKind::Punct(')'));
    }

    #[test]
    fn string_errors() {
        let err = Lexer::new(r#"  "abc"#)
            .next_token()
            .expect_err("unterminated");
        assert_eq!(err.column, 3);
        assert_eq!(err.kind, ParseErrorKind::UnterminatedString);
        let err = Lexer::new(r#""a\n""#).next_token().expect_err("bad escape");
        assert_eq!(err.column, 3);
        assert_eq!(err.kind, ParseErrorKind::BadEscape("\\n".into()));
        let err = Lexer::new(r#""a\x4g""#).next_token().expect_err("bad hex");
        assert_eq!(err.kind, ParseErrorKind::BadEscape("\\x4g".into()));
        let err = Lexer::new("a ! b")
            .next_token()
            .and_then(|_| Lexer::new("!").next_token());
        assert_eq!(
            err.expect_err("bang").kind,
            ParseErrorKind::UnexpectedChar('!')
        );
    }
}
