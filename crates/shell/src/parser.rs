//! A hand-written recursive-descent parser: one line of shell input → a [`Command`].
//!
//! The grammar is shell.md's. Literals follow its notation table; keys, values, documents,
//! hybrid times and TTLs are parsed by the functions below, which are also public so that
//! other front ends can read the same notation ([`parse_path`], [`parse_doc_key`],
//! [`parse_value`]). Every error is a [`ParseError`] that names the 1-based column (in
//! characters) and what was expected there.

use std::fmt;
use std::net::IpAddr;

use docdb::{DocLiteral, InitMarkerBehavior};
use dockv::doc_key::{DocKey, SubDocKey, TablePrefix};
use dockv::hash::{HashColumnValue, yb_hash16};
use dockv::value::{PrimitiveValue, Ttl};
use dockv::{Decimal, HybridTime, KeyEntryValue, SortOrder, VarInt};

use crate::command::{Command, ScanCommand, ShellOption, WriteCommand, WriteOp};
use crate::lexer::{Lexer, Token, TokenKind};

/// A line that is not valid shell input: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based column, counted in characters.
    pub column: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

impl ParseError {
    /// An error at byte offset `offset` of `src`.
    pub(crate) fn new(src: &str, offset: usize, kind: ParseErrorKind) -> Self {
        let column = src.get(..offset).map_or(offset, |s| s.chars().count()) + 1;
        ParseError { column, kind }
    }
}

/// The kinds of [`ParseError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// A character that starts no token.
    UnexpectedChar(char),
    /// A string literal without its closing quote.
    UnterminatedString,
    /// An escape other than `\"`, `\\`, `\xNN` (the text of the bad escape).
    BadEscape(String),
    /// Something other than what the grammar allows here.
    Expected {
        /// What would have been valid.
        expected: String,
        /// What was there.
        found: String,
    },
    /// A literal of the right shape whose text is not a valid value.
    InvalidLiteral {
        /// The literal's type (`int64`, `uuid`, …).
        what: &'static str,
        /// Its text.
        text: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A literal or construct that is valid elsewhere but not here.
    NotAllowed(String),
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::UnexpectedChar(c) => write!(f, "unexpected character {c:?}"),
            ParseErrorKind::UnterminatedString => f.write_str("unterminated string literal"),
            ParseErrorKind::BadEscape(text) => {
                write!(
                    f,
                    "invalid escape `{text}` in string (expected \\\", \\\\ or \\xNN)"
                )
            }
            ParseErrorKind::Expected { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            ParseErrorKind::InvalidLiteral { what, text, reason } => {
                write!(f, "invalid {what} `{text}`: {reason}")
            }
            ParseErrorKind::NotAllowed(message) => f.write_str(message),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.kind)
    }
}

impl std::error::Error for ParseError {}

type Result<T> = std::result::Result<T, ParseError>;

/// Parses one line of shell input. A blank line or a comment is [`Command::Empty`].
pub fn parse_command(line: &str) -> Result<Command> {
    let mut p = Parser::new(line);
    let command = p.command()?;
    p.expect_end()?;
    Ok(command)
}

/// Parses a path: `DocKey(...)` (the document root) or `SubDocKey(DocKey(...), [...])`.
pub fn parse_path(text: &str) -> Result<SubDocKey> {
    let mut p = Parser::new(text);
    let path = p.path()?;
    p.expect_end()?;
    Ok(path)
}

/// Parses a `DocKey(...)`.
pub fn parse_doc_key(text: &str) -> Result<DocKey> {
    let mut p = Parser::new(text);
    let key = p.doc_key()?;
    p.expect_end()?;
    Ok(key)
}

/// Parses a value: a primitive literal, `{}`, `[]` or `DEL`.
pub fn parse_value(text: &str) -> Result<PrimitiveValue> {
    let mut p = Parser::new(text);
    let value = p.value()?;
    p.expect_end()?;
    Ok(value)
}

/// Parses a key component literal (possibly `desc(...)`).
pub fn parse_key_entry(text: &str) -> Result<KeyEntryValue> {
    let mut p = Parser::new(text);
    let key = p.key_entry()?;
    p.expect_end()?;
    Ok(key)
}

/// A primitive literal before it is known whether it is a key component or a value.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Str(Vec<u8>),
    Int64(i64),
    Int32(i32),
    UInt32(u32),
    UInt64(u64),
    Double(f64),
    Float(f32),
    Bool(bool),
    Null,
    Timestamp(i64),
    Uuid([u8; 16]),
    Inet(Vec<u8>),
    Decimal(Decimal),
    VarInt(VarInt),
    ColumnId(i32),
    SystemColumnId(i32),
    ArrayIndex(i64),
}

impl Literal {
    /// The name used in messages.
    fn name(&self) -> &'static str {
        match self {
            Literal::ColumnId(_) => "ColumnId",
            Literal::SystemColumnId(_) => "SystemColumnId",
            Literal::ArrayIndex(_) => "ArrayIndex",
            _ => "literal",
        }
    }

    fn into_key(self, order: SortOrder) -> std::result::Result<KeyEntryValue, String> {
        use KeyEntryValue as K;
        let only_ascending = |name: &str| {
            if order == SortOrder::Descending {
                Err(format!("{name} has no descending form"))
            } else {
                Ok(())
            }
        };
        Ok(match self {
            Literal::Str(s) => K::String(s, order),
            Literal::Int64(v) => K::Int64(v, order),
            Literal::Int32(v) => K::Int32(v, order),
            Literal::UInt32(v) => K::UInt32(v, order),
            Literal::UInt64(v) => K::UInt64(v, order),
            Literal::Double(v) => K::Double(v, order),
            Literal::Float(v) => K::Float(v, order),
            Literal::Bool(v) => K::Bool(v, order),
            // Ascending and descending ("nulls first") nulls are both kNullLow.
            Literal::Null => K::NullLow,
            Literal::Timestamp(v) => K::Timestamp(v, order),
            Literal::Uuid(v) => K::Uuid(v, order),
            Literal::Inet(v) => K::Inet(v, order),
            Literal::Decimal(v) => K::Decimal(v, order),
            Literal::VarInt(v) => K::VarInt(v, order),
            Literal::ColumnId(v) => {
                only_ascending("ColumnId")?;
                K::ColumnId(v)
            }
            Literal::SystemColumnId(v) => {
                only_ascending("SystemColumnId")?;
                K::SystemColumnId(v)
            }
            Literal::ArrayIndex(v) => {
                only_ascending("ArrayIndex")?;
                K::ArrayIndex(v)
            }
        })
    }

    fn into_value(self) -> std::result::Result<PrimitiveValue, String> {
        use PrimitiveValue as P;
        Ok(match self {
            Literal::Str(s) => P::String(s),
            Literal::Int64(v) => P::Int64(v),
            Literal::Int32(v) => P::Int32(v),
            Literal::UInt32(v) => P::UInt32(v),
            Literal::UInt64(v) => P::UInt64(v),
            Literal::Double(v) => P::Double(v),
            Literal::Float(v) => P::Float(v),
            Literal::Bool(v) => P::Bool(v),
            Literal::Null => P::Null,
            Literal::Timestamp(v) => P::Timestamp(v),
            Literal::Uuid(v) => P::Uuid(v),
            Literal::Inet(v) => P::Inet(v),
            Literal::Decimal(v) => P::Decimal(v),
            Literal::VarInt(v) => P::VarInt(v),
            other
            @ (Literal::ColumnId(_) | Literal::SystemColumnId(_) | Literal::ArrayIndex(_)) => {
                return Err(format!("{} is a key component, not a value", other.name()));
            }
        })
    }
}

/// What the hash of `DocKey(auto, ...)` is computed over for one hashed component
/// (format.md §6: the value without type byte).
fn append_hash_input(key: &KeyEntryValue, out: &mut Vec<u8>) -> std::result::Result<(), String> {
    use KeyEntryValue as K;
    let value = match key {
        K::String(s, _) => HashColumnValue::Bytes(s),
        K::Int32(v, _) => HashColumnValue::Int32(*v),
        K::Int64(v, _) => HashColumnValue::Int64(*v),
        K::UInt32(v, _) => HashColumnValue::UInt32(*v),
        K::UInt64(v, _) => HashColumnValue::UInt64(*v),
        K::Float(v, _) => HashColumnValue::Float(*v),
        K::Double(v, _) => HashColumnValue::Double(*v),
        K::Bool(v, _) => HashColumnValue::Bool(*v),
        K::Timestamp(v, _) => HashColumnValue::Timestamp(*v),
        K::Uuid(v, _) => HashColumnValue::Bytes(v),
        K::Inet(v, _) => HashColumnValue::Bytes(v),
        K::Decimal(d, _) => {
            let bytes = d
                .encoded_comparable()
                .map_err(|e| format!("cannot hash decimal {d}: {e}"))?;
            out.extend_from_slice(&bytes);
            return Ok(());
        }
        K::VarInt(v, _) => {
            out.extend_from_slice(&v.encoded_comparable(0));
            return Ok(());
        }
        other => return Err(format!("cannot compute a hash over {other:?}")),
    };
    value.append_to(out);
    Ok(())
}

/// The parser state: a lexer over one line.
struct Parser<'a> {
    lex: Lexer<'a>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser {
            lex: Lexer::new(src),
        }
    }

    fn error(&self, offset: usize, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.lex.source(), offset, kind)
    }

    fn expected(&self, token: &Token<'_>, expected: impl Into<String>) -> ParseError {
        self.error(
            token.start,
            ParseErrorKind::Expected {
                expected: expected.into(),
                found: token.describe(),
            },
        )
    }

    fn invalid(
        &self,
        offset: usize,
        what: &'static str,
        text: &str,
        reason: impl Into<String>,
    ) -> ParseError {
        self.error(
            offset,
            ParseErrorKind::InvalidLiteral {
                what,
                text: text.to_string(),
                reason: reason.into(),
            },
        )
    }

    fn not_allowed(&self, offset: usize, message: impl Into<String>) -> ParseError {
        self.error(offset, ParseErrorKind::NotAllowed(message.into()))
    }

    fn peek(&self) -> Result<Token<'a>> {
        self.lex.peek()
    }

    fn next(&mut self) -> Result<Token<'a>> {
        self.lex.next_token()
    }

    fn peek_is_punct(&self, c: char) -> Result<bool> {
        Ok(self.peek()?.kind == TokenKind::Punct(c))
    }

    fn peek_is_ident(&self, word: &str) -> Result<bool> {
        Ok(self.peek()?.kind == TokenKind::Ident(word))
    }

    /// Consumes `c` if it is next.
    fn eat_punct(&mut self, c: char) -> Result<bool> {
        let found = self.peek_is_punct(c)?;
        if found {
            self.next()?;
        }
        Ok(found)
    }

    /// Consumes the keyword `word` if it is next.
    fn eat_ident(&mut self, word: &str) -> Result<bool> {
        let found = self.peek_is_ident(word)?;
        if found {
            self.next()?;
        }
        Ok(found)
    }

    fn expect_punct(&mut self, c: char) -> Result<Token<'a>> {
        let token = self.next()?;
        if token.kind == TokenKind::Punct(c) {
            Ok(token)
        } else {
            Err(self.expected(&token, format!("`{c}`")))
        }
    }

    fn expect_ident(&mut self, word: &str) -> Result<Token<'a>> {
        let token = self.next()?;
        if token.kind == TokenKind::Ident(word) {
            Ok(token)
        } else {
            Err(self.expected(&token, format!("`{word}`")))
        }
    }

    fn expect_end(&mut self) -> Result<()> {
        let token = self.next()?;
        if token.kind == TokenKind::End {
            Ok(())
        } else {
            Err(self.expected(&token, "end of line"))
        }
    }

    // -----------------------------------------------------------------------------------------
    // Commands
    // -----------------------------------------------------------------------------------------

    fn command(&mut self) -> Result<Command> {
        let token = self.peek()?;
        let TokenKind::Ident(word) = token.kind else {
            if token.kind == TokenKind::End {
                return Ok(Command::Empty);
            }
            return Err(self.expected(&token, COMMANDS));
        };
        match word {
            "write" => {
                self.next()?;
                self.write(false)
            }
            "explain" => {
                self.next()?;
                self.expect_ident("write")?;
                self.write(true)
            }
            "get" => {
                self.next()?;
                self.get()
            }
            "scan" => {
                self.next()?;
                self.scan()
            }
            "compact" => {
                self.next()?;
                Ok(Command::Compact {
                    cutoff: self.hybrid_time()?,
                })
            }
            "flush" => {
                self.next()?;
                Ok(Command::Flush)
            }
            "dump" => {
                self.next()?;
                Ok(Command::Dump)
            }
            "stats" => {
                self.next()?;
                Ok(Command::Stats)
            }
            "set" => {
                self.next()?;
                let token = self.next()?;
                if token.kind != TokenKind::Ident("option") {
                    return Err(self.expected(
                        &token,
                        "`option` (write operations need `write @HT set ...`)",
                    ));
                }
                self.set_option()
            }
            _ => Err(self.expected(&token, COMMANDS)),
        }
    }

    fn write(&mut self, explain: bool) -> Result<Command> {
        let ht = self.hybrid_time()?;
        let mut ops = vec![self.write_op()?];
        while self.eat_punct(';')? {
            if self.peek()?.kind == TokenKind::End {
                break; // a trailing `;`
            }
            ops.push(self.write_op()?);
        }
        let token = self.peek()?;
        if token.kind != TokenKind::End {
            return Err(self.expected(&token, "`;` and another operation, or end of line"));
        }
        Ok(Command::Write(WriteCommand { explain, ht, ops }))
    }

    fn get(&mut self) -> Result<Command> {
        let path = self.path()?;
        let read_ht = self.hybrid_time()?;
        let projection = if self.eat_ident("project")? {
            let mut keys = vec![self.key_entry()?];
            while self.eat_punct(',')? {
                keys.push(self.key_entry()?);
            }
            Some(keys)
        } else {
            None
        };
        Ok(Command::Get {
            path,
            read_ht,
            projection,
        })
    }

    fn scan(&mut self) -> Result<Command> {
        let mut from = None;
        let mut to = None;
        loop {
            let token = self.peek()?;
            match token.kind {
                TokenKind::Ident("from") if from.is_none() => {
                    self.next()?;
                    from = Some(self.doc_key()?);
                }
                TokenKind::Ident("to") if to.is_none() => {
                    self.next()?;
                    to = Some(self.doc_key()?);
                }
                TokenKind::Punct('@') => break,
                _ => {
                    let mut expected = Vec::new();
                    if from.is_none() {
                        expected.push("`from`");
                    }
                    if to.is_none() {
                        expected.push("`to`");
                    }
                    expected.push("`@` and the read time");
                    return Err(self.expected(&token, expected.join(", ")));
                }
            }
        }
        let read_ht = self.hybrid_time()?;
        let mut limit = None;
        let mut reverse = false;
        loop {
            let token = self.peek()?;
            match token.kind {
                TokenKind::Ident("limit") if limit.is_none() => {
                    self.next()?;
                    let token = self.next()?;
                    limit = Some(self.unsigned(&token, "limit")?);
                }
                TokenKind::Ident("reverse") if !reverse => {
                    self.next()?;
                    reverse = true;
                }
                TokenKind::End => break,
                _ => {
                    let mut expected = Vec::new();
                    if limit.is_none() {
                        expected.push("`limit`");
                    }
                    if !reverse {
                        expected.push("`reverse`");
                    }
                    expected.push("end of line");
                    return Err(self.expected(&token, expected.join(", ")));
                }
            }
        }
        Ok(Command::Scan(ScanCommand {
            from,
            to,
            read_ht,
            limit,
            reverse,
        }))
    }

    fn set_option(&mut self) -> Result<Command> {
        let token = self.next()?;
        match token.kind {
            TokenKind::Ident("init_markers") => {
                let token = self.next()?;
                let behavior = match token.kind {
                    TokenKind::Ident("required") => InitMarkerBehavior::Required,
                    TokenKind::Ident("optional") => InitMarkerBehavior::Optional,
                    _ => return Err(self.expected(&token, "`required` or `optional`")),
                };
                Ok(Command::SetOption(ShellOption::InitMarkers(behavior)))
            }
            TokenKind::Ident("table_ttl") => {
                if self.eat_ident("none")? {
                    return Ok(Command::SetOption(ShellOption::TableTtl(None)));
                }
                let ttl = self.ttl_amount("a TTL like `10ms`, `10s`, or `none`")?;
                Ok(Command::SetOption(ShellOption::TableTtl(Some(ttl))))
            }
            _ => Err(self.expected(&token, "an option name (`init_markers` or `table_ttl`)")),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Write operations
    // -----------------------------------------------------------------------------------------

    fn write_op(&mut self) -> Result<WriteOp> {
        let token = self.next()?;
        let TokenKind::Ident(word) = token.kind else {
            return Err(self.expected(&token, WRITE_OPS));
        };
        match word {
            "set" => {
                let path = self.path()?;
                self.expect_punct('=')?;
                let value = self.value()?;
                let (mut ttl, mut user_timestamp) = (None, None);
                loop {
                    if ttl.is_none() && self.eat_ident("ttl")? {
                        ttl = Some(self.ttl_amount("a TTL like `10ms` or `10s`")?);
                    } else if user_timestamp.is_none() && self.eat_ident("timestamp")? {
                        let token = self.next()?;
                        user_timestamp = Some(self.integer::<i64>(&token, "user timestamp")?);
                    } else {
                        break;
                    }
                }
                Ok(WriteOp::Set {
                    path,
                    value,
                    ttl,
                    user_timestamp,
                })
            }
            "insert" | "extend" => {
                let path = self.path()?;
                self.expect_punct('=')?;
                let doc = self.document()?;
                let ttl = self.optional_ttl()?;
                Ok(if word == "insert" {
                    WriteOp::Insert { path, doc, ttl }
                } else {
                    WriteOp::Extend { path, doc, ttl }
                })
            }
            "delete" => Ok(WriteOp::Delete { path: self.path()? }),
            "append" | "prepend" => {
                let path = self.path()?;
                self.expect_punct('=')?;
                let values = self.value_list()?;
                let ttl = self.optional_ttl()?;
                Ok(if word == "append" {
                    WriteOp::Append { path, values, ttl }
                } else {
                    WriteOp::Prepend { path, values, ttl }
                })
            }
            "list_set" | "list_delete" => {
                let path = self.path()?;
                let token = self.next()?;
                let pos = self.unsigned(&token, "list position")?;
                let value = if word == "list_set" {
                    self.expect_punct('=')?;
                    Some(self.value()?)
                } else {
                    None
                };
                self.expect_ident("read")?;
                let read_ht = self.hybrid_time()?;
                Ok(WriteOp::ListSet {
                    path,
                    pos,
                    value,
                    read_ht,
                })
            }
            "expire" => {
                let path = self.path()?;
                self.expect_ident("ttl")?;
                let ttl = self.ttl_amount("a TTL like `10ms` or `10s`")?;
                Ok(WriteOp::Expire {
                    path,
                    ttl: Some(ttl),
                })
            }
            "persist" => Ok(WriteOp::Expire {
                path: self.path()?,
                ttl: None,
            }),
            _ => Err(self.expected(&token, WRITE_OPS)),
        }
    }

    fn optional_ttl(&mut self) -> Result<Option<Ttl>> {
        if self.eat_ident("ttl")? {
            Ok(Some(self.ttl_amount("a TTL like `10ms` or `10s`")?))
        } else {
            Ok(None)
        }
    }

    /// `10ms`, `10s` (or with a space before the unit).
    fn ttl_amount(&mut self, expected: &str) -> Result<Ttl> {
        let token = self.next()?;
        let TokenKind::Number(text) = token.kind else {
            return Err(self.expected(&token, expected));
        };
        let digits_len = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (digits, mut unit) = text.split_at(digits_len);
        if digits.is_empty() {
            return Err(self.invalid(
                token.start,
                "TTL",
                text,
                "expected a non-negative number of ms or s",
            ));
        }
        if unit.is_empty() {
            let unit_token = self.next()?;
            match unit_token.kind {
                TokenKind::Ident(u @ ("ms" | "s")) => unit = u,
                _ => return Err(self.expected(&unit_token, "a TTL unit (`ms` or `s`)")),
            }
        }
        let amount: i64 = digits
            .parse()
            .map_err(|e| self.invalid(token.start, "TTL", text, format!("{e}")))?;
        let millis = match unit {
            "ms" => Some(amount),
            "s" => amount.checked_mul(1000),
            _ => {
                return Err(self.invalid(token.start, "TTL", text, "the unit must be `ms` or `s`"));
            }
        };
        millis
            .map(Ttl)
            .ok_or_else(|| self.invalid(token.start, "TTL", text, "too large"))
    }

    // -----------------------------------------------------------------------------------------
    // Hybrid times and numbers
    // -----------------------------------------------------------------------------------------

    /// `@1000`, `@1000+5`, `@max`.
    fn hybrid_time(&mut self) -> Result<HybridTime> {
        let token = self.next()?;
        if token.kind != TokenKind::Punct('@') {
            return Err(self.expected(&token, "`@` and a hybrid time (`@1000`, `@1000+5`, `@max`)"));
        }
        let token = self.next()?;
        let physical = match token.kind {
            TokenKind::Ident("max") => return Ok(HybridTime::MAX),
            TokenKind::Number(_) => self.integer::<u64>(&token, "hybrid time")?,
            _ => {
                return Err(
                    self.expected(&token, "a hybrid time in µs (`1000`, `1000+5`) or `max`")
                );
            }
        };
        if physical > (u64::MAX >> dockv::hybrid_time::LOGICAL_BITS) {
            return Err(self.invalid(
                token.start,
                "hybrid time",
                &physical.to_string(),
                "physical time too large",
            ));
        }
        let logical = if self.eat_punct('+')? {
            let token = self.next()?;
            let logical = self.integer::<u32>(&token, "logical time")?;
            if logical >= 1 << dockv::hybrid_time::LOGICAL_BITS {
                return Err(self.invalid(
                    token.start,
                    "logical time",
                    &logical.to_string(),
                    "must be below 4096",
                ));
            }
            logical
        } else {
            0
        };
        Ok(HybridTime::new(physical, logical))
    }

    /// A decimal integer token of type `T`.
    fn integer<T: std::str::FromStr>(&self, token: &Token<'_>, what: &'static str) -> Result<T>
    where
        T::Err: fmt::Display,
    {
        let TokenKind::Number(text) = token.kind else {
            return Err(self.expected(token, format!("a {what} (an integer)")));
        };
        text.parse::<T>()
            .map_err(|e| self.invalid(token.start, what, text, e.to_string()))
    }

    fn unsigned(&self, token: &Token<'_>, what: &'static str) -> Result<usize> {
        self.integer::<usize>(token, what)
    }

    // -----------------------------------------------------------------------------------------
    // Keys
    // -----------------------------------------------------------------------------------------

    /// `DocKey(...)` or `SubDocKey(DocKey(...), [subkey, ...])`.
    fn path(&mut self) -> Result<SubDocKey> {
        let token = self.peek()?;
        match token.kind {
            TokenKind::Ident("DocKey") => Ok(SubDocKey::new(self.doc_key()?, Vec::new())),
            TokenKind::Ident("SubDocKey") => {
                self.next()?;
                self.expect_punct('(')?;
                let doc_key = self.doc_key()?;
                self.expect_punct(',')?;
                let subkeys = self.key_list(true)?;
                self.expect_punct(')')?;
                Ok(SubDocKey::new(doc_key, subkeys))
            }
            _ => Err(self.expected(&token, "a path (`DocKey(...)` or `SubDocKey(...)`)")),
        }
    }

    /// `DocKey([prefix,] [hash,] [hashed...], [range...])`.
    fn doc_key(&mut self) -> Result<DocKey> {
        self.expect_ident("DocKey")?;
        self.expect_punct('(')?;
        let mut prefix = TablePrefix::None;
        let token = self.peek()?;
        if token.kind == TokenKind::Ident("ColocationId") {
            self.next()?;
            self.expect_punct('=')?;
            let token = self.next()?;
            prefix = TablePrefix::ColocationId(self.integer::<u32>(&token, "colocation id")?);
            self.expect_punct(',')?;
        } else if token.kind == TokenKind::Ident("CoTableId") {
            self.next()?;
            self.expect_punct('=')?;
            let (start, text) = self.lex.raw_until(&[',', ')']);
            prefix = TablePrefix::CoTableId(
                parse_uuid(text).map_err(|e| self.invalid(start, "uuid", text, e))?,
            );
            self.expect_punct(',')?;
        }

        enum Hash {
            None,
            Explicit(u16),
            Auto,
        }
        let token = self.peek()?;
        let hash = match token.kind {
            TokenKind::Number(text) if text.starts_with("0x") || text.starts_with("0X") => {
                self.next()?;
                let hash = u16::from_str_radix(&text[2..], 16).map_err(|e| {
                    self.invalid(
                        token.start,
                        "hash",
                        text,
                        format!("not a 16-bit hex number ({e})"),
                    )
                })?;
                self.expect_punct(',')?;
                Hash::Explicit(hash)
            }
            TokenKind::Ident("auto") => {
                self.next()?;
                self.expect_punct(',')?;
                Hash::Auto
            }
            TokenKind::Punct('[') => Hash::None,
            _ => {
                let expected = if prefix == TablePrefix::None {
                    "a hash (`0x1234` or `auto`), a table prefix (`ColocationId=`, `CoTableId=`) or `[`"
                } else {
                    "a hash (`0x1234` or `auto`) or `[`"
                };
                return Err(self.expected(&token, expected));
            }
        };
        let hashed_start = self.peek()?.start;
        let hashed = self.key_list(false)?;
        self.expect_punct(',')?;
        let range = self.key_list(false)?;
        self.expect_punct(')')?;
        let hash = match hash {
            Hash::None if !hashed.is_empty() => {
                return Err(self.not_allowed(
                    hashed_start,
                    "hashed components need a hash: write `DocKey(0x1234, [...], [...])` or `DocKey(auto, [...], [...])`",
                ));
            }
            Hash::None => None,
            Hash::Explicit(hash) => Some(hash),
            Hash::Auto => {
                if hashed.is_empty() {
                    return Err(self
                        .not_allowed(hashed_start, "`auto` needs at least one hashed component"));
                }
                let mut bytes = Vec::new();
                for key in &hashed {
                    append_hash_input(key, &mut bytes)
                        .map_err(|e| self.not_allowed(hashed_start, e))?;
                }
                Some(yb_hash16(&bytes))
            }
        };
        Ok(DocKey {
            prefix,
            hash,
            hashed,
            range,
        })
    }

    /// `[key, ...]`. In a subkey list, a hybrid time gets a helpful error.
    fn key_list(&mut self, subkeys: bool) -> Result<Vec<KeyEntryValue>> {
        self.expect_punct('[')?;
        let mut keys = Vec::new();
        if self.eat_punct(']')? {
            return Ok(keys);
        }
        loop {
            let token = self.peek()?;
            if subkeys
                && (token.kind == TokenKind::Ident("HT") || token.kind == TokenKind::Punct(';'))
            {
                return Err(self.not_allowed(
                    token.start,
                    "a path has no hybrid time: remove the `; HT{ ... }` part",
                ));
            }
            keys.push(self.key_entry()?);
            let token = self.next()?;
            match token.kind {
                TokenKind::Punct(',') => {}
                TokenKind::Punct(']') => return Ok(keys),
                TokenKind::Punct(';') if subkeys => {
                    return Err(self.not_allowed(
                        token.start,
                        "a path has no hybrid time: remove the `; HT{ ... }` part",
                    ));
                }
                _ => return Err(self.expected(&token, "`,` or `]`")),
            }
        }
    }

    /// A key component: a literal, or `desc(<literal>)`.
    fn key_entry(&mut self) -> Result<KeyEntryValue> {
        let token = self.peek()?;
        let (order, start) = if token.kind == TokenKind::Ident("desc") {
            self.next()?;
            self.expect_punct('(')?;
            (SortOrder::Descending, self.peek()?.start)
        } else {
            (SortOrder::Ascending, token.start)
        };
        let literal = self.literal("a key component (a literal or `desc(...)`)")?;
        if order == SortOrder::Descending {
            self.expect_punct(')')?;
        }
        literal
            .into_key(order)
            .map_err(|e| self.not_allowed(start, e))
    }

    // -----------------------------------------------------------------------------------------
    // Values and documents
    // -----------------------------------------------------------------------------------------

    /// A value: a primitive literal, `{}`, `[]` or `DEL`.
    fn value(&mut self) -> Result<PrimitiveValue> {
        let token = self.peek()?;
        match token.kind {
            TokenKind::Punct('{') => {
                self.next()?;
                let close = self.next()?;
                if close.kind != TokenKind::Punct('}') {
                    return Err(self.expected(&close, "`}` (a value can only be the empty object `{}`; use `insert` for documents)"));
                }
                Ok(PrimitiveValue::Object)
            }
            TokenKind::Punct('[') => {
                self.next()?;
                let close = self.next()?;
                if close.kind != TokenKind::Punct(']') {
                    return Err(self.expected(&close, "`]` (a value can only be the empty list `[]`; use `insert` or `append` for elements)"));
                }
                Ok(PrimitiveValue::Array)
            }
            TokenKind::Ident("DEL") => {
                self.next()?;
                Ok(PrimitiveValue::Tombstone)
            }
            TokenKind::Ident("desc") => {
                Err(self.not_allowed(token.start, "desc(...) is only for key components"))
            }
            _ => {
                let literal = self.literal("a value (a literal, `{}`, `[]` or `DEL`)")?;
                literal
                    .into_value()
                    .map_err(|e| self.not_allowed(token.start, e))
            }
        }
    }

    /// `[v, ...]` of values.
    fn value_list(&mut self) -> Result<Vec<PrimitiveValue>> {
        self.expect_punct('[')?;
        let mut values = Vec::new();
        if self.eat_punct(']')? {
            return Ok(values);
        }
        loop {
            values.push(self.value()?);
            let token = self.next()?;
            match token.kind {
                TokenKind::Punct(',') => {}
                TokenKind::Punct(']') => return Ok(values),
                _ => return Err(self.expected(&token, "`,` or `]`")),
            }
        }
    }

    /// A document: `{ key: doc, ... }`, `[ doc, ... ]`, or a value (`DEL` or a literal).
    fn document(&mut self) -> Result<DocLiteral> {
        let token = self.peek()?;
        match token.kind {
            TokenKind::Punct('{') => {
                self.next()?;
                let mut children = Vec::new();
                if self.eat_punct('}')? {
                    return Ok(DocLiteral::Object(children));
                }
                loop {
                    let key = self.key_entry()?;
                    self.expect_punct(':')?;
                    children.push((key, self.document()?));
                    let token = self.next()?;
                    match token.kind {
                        TokenKind::Punct(',') if self.peek_is_punct('}')? => {
                            self.next()?;
                            return Ok(DocLiteral::Object(children));
                        }
                        TokenKind::Punct(',') => {}
                        TokenKind::Punct('}') => return Ok(DocLiteral::Object(children)),
                        _ => return Err(self.expected(&token, "`,` or `}`")),
                    }
                }
            }
            TokenKind::Punct('[') => {
                self.next()?;
                let mut items = Vec::new();
                if self.eat_punct(']')? {
                    return Ok(DocLiteral::List(items));
                }
                loop {
                    items.push(self.document()?);
                    let token = self.next()?;
                    match token.kind {
                        TokenKind::Punct(',') if self.peek_is_punct(']')? => {
                            self.next()?;
                            return Ok(DocLiteral::List(items));
                        }
                        TokenKind::Punct(',') => {}
                        TokenKind::Punct(']') => return Ok(DocLiteral::List(items)),
                        _ => return Err(self.expected(&token, "`,` or `]`")),
                    }
                }
            }
            _ => Ok(DocLiteral::Value(self.value()?)),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Primitive literals
    // -----------------------------------------------------------------------------------------

    fn literal(&mut self, expected: &str) -> Result<Literal> {
        let token = self.next()?;
        match token.kind {
            TokenKind::Str(bytes) => Ok(Literal::Str(bytes)),
            TokenKind::Number(text) => self.number(token.start, text),
            TokenKind::Ident("true") => Ok(Literal::Bool(true)),
            TokenKind::Ident("false") => Ok(Literal::Bool(false)),
            TokenKind::Ident("null") => Ok(Literal::Null),
            TokenKind::Ident(name) if TYPED_LITERALS.contains(&name) => {
                self.expect_punct('(')?;
                let (start, text) = self.lex.raw_until(&[')']);
                let literal = self.typed_literal(name, start, text)?;
                self.expect_punct(')')?;
                Ok(literal)
            }
            _ => Err(self.expected(&token, expected)),
        }
    }

    /// A bare number: int64, or double when it has a fraction or exponent.
    fn number(&self, start: usize, text: &str) -> Result<Literal> {
        let unsigned = text.strip_prefix('-').unwrap_or(text);
        if unsigned.starts_with("0x") || unsigned.starts_with("0X") {
            return Err(self.not_allowed(
                start,
                "hex numbers are only hashes in `DocKey(0x1234, ...)`",
            ));
        }
        if text.contains(['.', 'e', 'E']) {
            return parse_f64(text)
                .map(Literal::Double)
                .map_err(|e| self.invalid(start, "double", text, e));
        }
        text.parse::<i64>()
            .map(Literal::Int64)
            .map_err(|e| self.invalid(start, "int64", text, e.to_string()))
    }

    /// The body of `name(...)`.
    fn typed_literal(&self, name: &str, start: usize, text: &str) -> Result<Literal> {
        fn int<T: std::str::FromStr>(text: &str) -> std::result::Result<T, String>
        where
            T::Err: fmt::Display,
        {
            text.parse::<T>().map_err(|e| e.to_string())
        }
        let result = match name {
            "int32" => int(text).map(Literal::Int32),
            "uint32" => int(text).map(Literal::UInt32),
            "uint64" => int(text).map(Literal::UInt64),
            "double" => parse_f64(text).map(Literal::Double),
            "float" => text
                .parse::<f32>()
                .map(Literal::Float)
                .map_err(|e| e.to_string()),
            "timestamp" => int(text).map(Literal::Timestamp),
            "uuid" => parse_uuid(text).map(Literal::Uuid),
            "inet" => text
                .parse::<IpAddr>()
                .map(|ip| {
                    Literal::Inet(match ip {
                        IpAddr::V4(v4) => v4.octets().to_vec(),
                        IpAddr::V6(v6) => v6.octets().to_vec(),
                    })
                })
                .map_err(|e| e.to_string()),
            "decimal" => text
                .parse::<Decimal>()
                .map(Literal::Decimal)
                .map_err(|e| e.to_string()),
            "varint" => text
                .parse::<VarInt>()
                .map(Literal::VarInt)
                .map_err(|e| e.to_string()),
            "ColumnId" => int(text).map(Literal::ColumnId),
            "SystemColumnId" => int(text).map(Literal::SystemColumnId),
            "ArrayIndex" => int(text).map(Literal::ArrayIndex),
            _ => Err(format!("unknown literal type {name}")),
        };
        let what = TYPED_LITERALS
            .iter()
            .find(|&&n| n == name)
            .copied()
            .unwrap_or("literal");
        result.map_err(|reason| self.invalid(start, what, text, reason))
    }
}

/// The function-like literal forms whose body is raw text.
const TYPED_LITERALS: &[&str] = &[
    "int32",
    "uint32",
    "uint64",
    "double",
    "float",
    "timestamp",
    "uuid",
    "inet",
    "decimal",
    "varint",
    "ColumnId",
    "SystemColumnId",
    "ArrayIndex",
];

const COMMANDS: &str = "a command (`write`, `explain write`, `get`, `scan`, `compact`, `flush`, `dump`, `set option`, `stats`)";

const WRITE_OPS: &str = "a write operation (`set`, `insert`, `extend`, `delete`, `append`, `prepend`, `list_set`, `list_delete`, `expire`, `persist`)";

fn parse_f64(text: &str) -> std::result::Result<f64, String> {
    text.parse::<f64>().map_err(|e| e.to_string())
}

/// `123e4567-e89b-12d3-a456-426614174000` (hyphens optional): 32 hex digits.
fn parse_uuid(text: &str) -> std::result::Result<[u8; 16], String> {
    let digits: Vec<u8> = text.bytes().filter(|&b| b != b'-').collect();
    if let Some(&bad) = digits.iter().find(|b| !b.is_ascii_hexdigit()) {
        return Err(format!("{:?} is not a hex digit", char::from(bad)));
    }
    if digits.len() != 32 {
        return Err(format!("expected 32 hex digits, found {}", digits.len()));
    }
    let mut out = [0u8; 16];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).map_err(|_| "not hex".to_string())?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| format!("`{pair}` is not hex"))?;
    }
    Ok(out)
}
