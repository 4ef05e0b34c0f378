//! Parser tests: every form of shell.md's notation and commands, and errors that say where
//! and what was expected.

use docdb::{DocLiteral, InitMarkerBehavior};
use docdb_shell::parser::{parse_doc_key, parse_key_entry, parse_path, parse_value};
use docdb_shell::{
    Command, ParseError, ParseErrorKind, ScanCommand, ShellOption, WriteCommand, WriteOp,
    parse_command,
};
use dockv::doc_key::{DocKey, SubDocKey, TablePrefix};
use dockv::value::{PrimitiveValue, Ttl};
use dockv::{HybridTime, KeyEntryValue as K, SortOrder};

const ASC: SortOrder = SortOrder::Ascending;
const DESC: SortOrder = SortOrder::Descending;

fn s(text: &str) -> K {
    K::string(text)
}

fn doc(range: Vec<K>) -> DocKey {
    DocKey::from_range(range)
}

fn path(range: Vec<K>, subkeys: Vec<K>) -> SubDocKey {
    SubDocKey::new(doc(range), subkeys)
}

fn err(line: &str) -> ParseError {
    match parse_command(line) {
        Ok(command) => panic!("{line:?} parsed as {command:?}"),
        Err(e) => e,
    }
}

/// The error's column and message.
fn err_text(line: &str) -> (usize, String) {
    let e = err(line);
    (e.column, e.kind.to_string())
}

// ---------------------------------------------------------------------------------------------
// Literals
// ---------------------------------------------------------------------------------------------

#[test]
fn key_literals() {
    let uuid = [
        0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40,
        0x00,
    ];
    let cases: Vec<(&str, K)> = vec![
        (r#""text""#, s("text")),
        (
            r#""a\"b\\c\x00\xFF""#,
            K::String(b"a\"b\\c\x00\xff".to_vec(), ASC),
        ),
        (r#""""#, s("")),
        ("123", K::Int64(123, ASC)),
        ("-5", K::Int64(-5, ASC)),
        ("9223372036854775807", K::Int64(i64::MAX, ASC)),
        ("int32(123)", K::Int32(123, ASC)),
        ("int32(-2147483648)", K::Int32(i32::MIN, ASC)),
        ("uint32(7)", K::UInt32(7, ASC)),
        ("uint64(18446744073709551615)", K::UInt64(u64::MAX, ASC)),
        ("1.5", K::Double(1.5, ASC)),
        ("-2.5e3", K::Double(-2500.0, ASC)),
        ("double(1.5)", K::Double(1.5, ASC)),
        ("double( 2 )", K::Double(2.0, ASC)),
        ("float(1.5)", K::Float(1.5, ASC)),
        ("true", K::Bool(true, ASC)),
        ("false", K::Bool(false, ASC)),
        ("null", K::NullLow),
        ("timestamp(1000)", K::Timestamp(1000, ASC)),
        (
            "uuid(123e4567-e89b-12d3-a456-426614174000)",
            K::Uuid(uuid, ASC),
        ),
        ("inet(1.2.3.4)", K::Inet(vec![1, 2, 3, 4], ASC)),
        (
            "inet(::1)",
            K::Inet(
                [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1].to_vec(),
                ASC,
            ),
        ),
        (
            "decimal(100.02)",
            K::Decimal("100.02".parse().expect("decimal"), ASC),
        ),
        (
            "varint(-12)",
            K::VarInt("-12".parse().expect("varint"), ASC),
        ),
        ("ColumnId(10)", K::ColumnId(10)),
        ("SystemColumnId(0)", K::SystemColumnId(0)),
        ("ArrayIndex(3)", K::ArrayIndex(3)),
        ("ArrayIndex(-3)", K::ArrayIndex(-3)),
        (r#"desc("val1")"#, K::String(b"val1".to_vec(), DESC)),
        ("desc(1000)", K::Int64(1000, DESC)),
        ("desc(int32(5))", K::Int32(5, DESC)),
        ("desc(inet(1.2.3.4))", K::Inet(vec![1, 2, 3, 4], DESC)),
        ("desc(timestamp(1000))", K::Timestamp(1000, DESC)),
        (
            "desc(decimal(100.02))",
            K::Decimal("100.02".parse().expect("decimal"), DESC),
        ),
        ("desc(true)", K::Bool(true, DESC)),
        ("desc(null)", K::NullLow),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_key_entry(text), Ok(expected), "{text}");
    }
}

#[test]
fn value_literals() {
    let cases: Vec<(&str, PrimitiveValue)> = vec![
        (r#""value1""#, PrimitiveValue::string("value1")),
        ("123", PrimitiveValue::Int64(123)),
        ("int32(-1)", PrimitiveValue::Int32(-1)),
        ("uint32(7)", PrimitiveValue::UInt32(7)),
        ("uint64(7)", PrimitiveValue::UInt64(7)),
        ("1.5", PrimitiveValue::Double(1.5)),
        ("float(0.25)", PrimitiveValue::Float(0.25)),
        ("true", PrimitiveValue::Bool(true)),
        ("null", PrimitiveValue::Null),
        ("timestamp(-1)", PrimitiveValue::Timestamp(-1)),
        (
            "inet(::1)",
            PrimitiveValue::Inet([0u8; 15].iter().copied().chain([1]).collect()),
        ),
        (
            "decimal(0.001)",
            PrimitiveValue::Decimal("0.001".parse().expect("decimal")),
        ),
        (
            "varint(12345678901234567890123)",
            PrimitiveValue::VarInt("12345678901234567890123".parse().expect("varint")),
        ),
        ("{}", PrimitiveValue::Object),
        ("{ }", PrimitiveValue::Object),
        ("[]", PrimitiveValue::Array),
        ("DEL", PrimitiveValue::Tombstone),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_value(text), Ok(expected), "{text}");
    }
}

#[test]
fn literal_errors() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "int32(2147483648)",
            7,
            "invalid int32 `2147483648`: number too large to fit in target type",
        ),
        (
            "uint32(-1)",
            8,
            "invalid uint32 `-1`: invalid digit found in string",
        ),
        (
            "99999999999999999999",
            1,
            "invalid int64 `99999999999999999999`: number too large to fit in target type",
        ),
        (
            "uuid(123)",
            6,
            "invalid uuid `123`: expected 32 hex digits, found 3",
        ),
        (
            "uuid(123e4567-e89b-12d3-a456-42661417400g)",
            6,
            "invalid uuid `123e4567-e89b-12d3-a456-42661417400g`: 'g' is not a hex digit",
        ),
        (
            "inet(1.2.3)",
            6,
            "invalid inet `1.2.3`: invalid IP address syntax",
        ),
        (
            "ColumnId(x)",
            10,
            "invalid ColumnId `x`: invalid digit found in string",
        ),
        ("desc(ColumnId(1))", 6, "ColumnId has no descending form"),
        (
            "desc(desc(1))",
            6,
            "expected a key component (a literal or `desc(...)`), found `desc`",
        ),
        (
            "DEL",
            1,
            "expected a key component (a literal or `desc(...)`), found `DEL`",
        ),
        (
            "0x12",
            1,
            "hex numbers are only hashes in `DocKey(0x1234, ...)`",
        ),
        (
            "10ms",
            1,
            "invalid int64 `10ms`: invalid digit found in string",
        ),
        ("int32(5", 8, "expected `)`, found end of line"),
        (
            "bogus(1)",
            1,
            "expected a key component (a literal or `desc(...)`), found `bogus`",
        ),
        (r#""abc"#, 1, "unterminated string literal"),
        (
            r#""a\tb""#,
            3,
            r#"invalid escape `\t` in string (expected \", \\ or \xNN)"#,
        ),
        (
            r#""\x4""#,
            2,
            r#"invalid escape `\x4"` in string (expected \", \\ or \xNN)"#,
        ),
        ("1 2", 3, "expected end of line, found `2`"),
    ];
    for &(text, column, message) in cases {
        let e = parse_key_entry(text).expect_err(text);
        assert_eq!(
            (e.column, e.kind.to_string().as_str()),
            (column, message),
            "{text}"
        );
    }
    let cases: &[(&str, usize, &str)] = &[
        ("desc(1)", 1, "desc(...) is only for key components"),
        (
            "ArrayIndex(1)",
            1,
            "ArrayIndex is a key component, not a value",
        ),
        ("ColumnId(1)", 1, "ColumnId is a key component, not a value"),
        (
            r#"{"a": 1}"#,
            2,
            "expected `}` (a value can only be the empty object `{}`; use `insert` for documents), found string \"a\"",
        ),
        (
            "[1]",
            2,
            "expected `]` (a value can only be the empty list `[]`; use `insert` or `append` for elements), found `1`",
        ),
    ];
    for &(text, column, message) in cases {
        let e = parse_value(text).expect_err(text);
        assert_eq!(
            (e.column, e.kind.to_string().as_str()),
            (column, message),
            "{text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

#[test]
fn doc_keys() {
    assert_eq!(
        parse_doc_key(r#"DocKey([], ["a", 10])"#),
        Ok(doc(vec![s("a"), K::Int64(10, ASC)]))
    );
    assert_eq!(parse_doc_key("DocKey([], [])"), Ok(doc(vec![])));
    assert_eq!(
        parse_doc_key(r#"DocKey(0x1234, ["h"], ["r", 10])"#),
        Ok(DocKey::with_hash(
            0x1234,
            vec![s("h")],
            vec![s("r"), K::Int64(10, ASC)]
        ))
    );
    assert_eq!(
        parse_doc_key(r#"DocKey(0xCAFE, ["h"], [])"#),
        Ok(DocKey::with_hash(0xcafe, vec![s("h")], vec![]))
    );
    assert_eq!(
        parse_doc_key(r#"DocKey(ColocationId=16385, [], ["a"])"#),
        Ok(doc(vec![s("a")]).with_prefix(TablePrefix::ColocationId(16385)))
    );
    let uuid = [
        0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40,
        0x00,
    ];
    assert_eq!(
        parse_doc_key(r#"DocKey(CoTableId=123e4567-e89b-12d3-a456-426614174000, [], ["a"])"#),
        Ok(doc(vec![s("a")]).with_prefix(TablePrefix::CoTableId(uuid)))
    );
    assert_eq!(
        parse_doc_key(r#"DocKey(ColocationId=1, 0x0001, ["h"], ["r"])"#),
        Ok(DocKey::with_hash(1, vec![s("h")], vec![s("r")])
            .with_prefix(TablePrefix::ColocationId(1)))
    );
    // Descending range components.
    assert_eq!(
        parse_doc_key(r#"DocKey([], [desc("val1"), 1000, desc(1000)])"#),
        Ok(doc(vec![
            K::String(b"val1".to_vec(), DESC),
            K::Int64(1000, ASC),
            K::Int64(1000, DESC)
        ]))
    );
}

/// `auto` hashes the hashed components' values without type bytes; format.md §13 gives
/// `yb_hash("a") = 44389` (0xad65) and `yb_hash(BE32(1)) = 4624` (0x1210).
#[test]
fn auto_hash() {
    assert_eq!(
        parse_doc_key(r#"DocKey(auto, ["a"], ["r"])"#),
        Ok(DocKey::with_hash(0xad65, vec![s("a")], vec![s("r")]))
    );
    assert_eq!(
        parse_doc_key("DocKey(auto, [int32(1)], [])"),
        Ok(DocKey::with_hash(0x1210, vec![K::Int32(1, ASC)], vec![]))
    );
    // The sort order does not change the hashed bytes.
    assert_eq!(
        parse_doc_key(r#"DocKey(auto, [desc("a")], [])"#),
        Ok(DocKey::with_hash(
            0xad65,
            vec![K::String(b"a".to_vec(), DESC)],
            vec![]
        ))
    );
    // Several components hash their concatenation: "a" + "" is "a".
    assert_eq!(
        parse_doc_key(r#"DocKey(auto, ["a", ""], [])"#),
        Ok(DocKey::with_hash(0xad65, vec![s("a"), s("")], vec![]))
    );
}

#[test]
fn doc_key_errors() {
    let cases: &[(&str, usize, &str)] = &[
        (
            r#"DocKey(["h"], ["r"])"#,
            8,
            "hashed components need a hash: write `DocKey(0x1234, [...], [...])` or `DocKey(auto, [...], [...])`",
        ),
        (
            "DocKey(auto, [], [])",
            14,
            "`auto` needs at least one hashed component",
        ),
        (
            "DocKey(auto, [ArrayIndex(1)], [])",
            14,
            "cannot compute a hash over ArrayIndex(1)",
        ),
        (
            "DocKey(0x12345, [], [])",
            8,
            "invalid hash `0x12345`: not a 16-bit hex number (number too large to fit in target type)",
        ),
        (
            "DocKey(1234, [], [])",
            8,
            "expected a hash (`0x1234` or `auto`), a table prefix (`ColocationId=`, `CoTableId=`) or `[`, found `1234`",
        ),
        ("DocKey([], [\"a\"]", 17, "expected `)`, found end of line"),
        (
            "DocKey([], [\"a\" 1])",
            17,
            "expected `,` or `]`, found `1`",
        ),
        ("DocKey([])", 10, "expected `,`, found `)`"),
        (
            "DocKey(ColocationId=-1, [], [])",
            21,
            "invalid colocation id `-1`: invalid digit found in string",
        ),
        (
            "DocKey(CoTableId=abc, [], [])",
            18,
            "invalid uuid `abc`: expected 32 hex digits, found 3",
        ),
        ("Dockey([], [])", 1, "expected `DocKey`, found `Dockey`"),
    ];
    for &(text, column, message) in cases {
        let e = parse_doc_key(text).expect_err(text);
        assert_eq!(
            (e.column, e.kind.to_string().as_str()),
            (column, message),
            "{text}"
        );
    }
}

#[test]
fn paths() {
    assert_eq!(
        parse_path(r#"DocKey([], ["a"])"#),
        Ok(path(vec![s("a")], vec![]))
    );
    assert_eq!(
        parse_path(r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"])"#),
        Ok(path(
            vec![s("mydockey"), K::Int64(123456, ASC)],
            vec![s("subkey_b"), s("subkey_c")]
        ))
    );
    assert_eq!(
        parse_path(
            "SubDocKey(DocKey([], [1]), [ColumnId(10), SystemColumnId(0), ArrayIndex(-4), desc(2)])"
        ),
        Ok(path(
            vec![K::Int64(1, ASC)],
            vec![
                K::ColumnId(10),
                K::SystemColumnId(0),
                K::ArrayIndex(-4),
                K::Int64(2, DESC)
            ]
        ))
    );
    assert_eq!(
        parse_path("SubDocKey(DocKey([], [1]), [])"),
        Ok(path(vec![K::Int64(1, ASC)], vec![]))
    );
}

/// A dump's key without its hybrid time reads back as the same path, and prints the same.
#[test]
fn dump_keys_read_back() {
    for text in [
        r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"])"#,
        r#"SubDocKey(DocKey(0x1234, ["hashed_key1", 123], [10, "foo"]), ["a", ArrayIndex(-5), ColumnId(3)])"#,
        r#"SubDocKey(DocKey(ColocationId=16385, [], ["a\"\\\x00\xff"]), [SystemColumnId(0)])"#,
        r#"SubDocKey(DocKey(CoTableId=123e4567-e89b-12d3-a456-426614174000, [], [true, null]), [])"#,
    ] {
        let parsed = parse_path(text).expect(text);
        assert_eq!(parsed.to_string(), text);
    }
    for text in [
        r#"DocKey([], ["my_key_where_value_is_a_string"])"#,
        r#"DocKey(0xcafe, ["hashed1", "hashed2"], ["range1", 1000])"#,
    ] {
        assert_eq!(parse_doc_key(text).expect(text).to_string(), text);
    }
}

#[test]
fn path_errors() {
    let (column, message) =
        err_text(r#"get SubDocKey(DocKey([], ["a"]), ["b"; HT{ physical: 1000 }]) @1000"#);
    assert_eq!(
        (column, message.as_str()),
        (
            38,
            "a path has no hybrid time: remove the `; HT{ ... }` part"
        )
    );
    let (column, message) =
        err_text(r#"get SubDocKey(DocKey([], ["a"]), [HT{ physical: 1000 }]) @1000"#);
    assert_eq!(
        (column, message.as_str()),
        (
            35,
            "a path has no hybrid time: remove the `; HT{ ... }` part"
        )
    );
    let (column, message) = err_text(r#"get "a" @1000"#);
    assert_eq!(
        (column, message.as_str()),
        (
            5,
            r#"expected a path (`DocKey(...)` or `SubDocKey(...)`), found string "a""#
        )
    );
    let (column, message) = err_text(r#"get SubDocKey(DocKey([], ["a"]) ["b"]) @1000"#);
    assert_eq!((column, message.as_str()), (33, "expected `,`, found `[`"));
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

#[test]
fn empty_lines_and_comments() {
    for line in ["", "   ", "# a comment", "   # indented comment", "\t"] {
        assert_eq!(parse_command(line), Ok(Command::Empty), "{line:?}");
    }
    assert_eq!(parse_command("dump # what is there"), Ok(Command::Dump));
}

#[test]
fn simple_commands() {
    assert_eq!(parse_command("dump"), Ok(Command::Dump));
    assert_eq!(parse_command("  flush  "), Ok(Command::Flush));
    assert_eq!(
        parse_command("compact @5000"),
        Ok(Command::Compact {
            cutoff: HybridTime::from_micros(5000)
        })
    );
    assert_eq!(
        parse_command("compact @ 5000 + 7"),
        Ok(Command::Compact {
            cutoff: HybridTime::new(5000, 7)
        })
    );
    assert_eq!(
        parse_command("compact @max"),
        Ok(Command::Compact {
            cutoff: HybridTime::MAX
        })
    );
    assert_eq!(
        parse_command("set option init_markers required"),
        Ok(Command::SetOption(ShellOption::InitMarkers(
            InitMarkerBehavior::Required
        )))
    );
    assert_eq!(
        parse_command("set option init_markers optional"),
        Ok(Command::SetOption(ShellOption::InitMarkers(
            InitMarkerBehavior::Optional
        )))
    );
    assert_eq!(
        parse_command("set option table_ttl 10ms"),
        Ok(Command::SetOption(ShellOption::TableTtl(Some(Ttl(10)))))
    );
    assert_eq!(
        parse_command("set option table_ttl 3s"),
        Ok(Command::SetOption(ShellOption::TableTtl(Some(Ttl(3000)))))
    );
    assert_eq!(
        parse_command("set option table_ttl 3 s"),
        Ok(Command::SetOption(ShellOption::TableTtl(Some(Ttl(3000)))))
    );
    assert_eq!(
        parse_command("set option table_ttl none"),
        Ok(Command::SetOption(ShellOption::TableTtl(None)))
    );
}

#[test]
fn get_commands() {
    assert_eq!(
        parse_command(r#"get DocKey([], ["mydockey", 123456]) @7000"#),
        Ok(Command::Get {
            path: path(vec![s("mydockey"), K::Int64(123456, ASC)], vec![]),
            read_ht: HybridTime::from_micros(7000),
            projection: None,
        })
    );
    assert_eq!(
        parse_command(
            r#"get SubDocKey(DocKey([], ["p"]), ["x"]) @1000+5 project "a", ColumnId(3)"#
        ),
        Ok(Command::Get {
            path: path(vec![s("p")], vec![s("x")]),
            read_ht: HybridTime::new(1000, 5),
            projection: Some(vec![s("a"), K::ColumnId(3)]),
        })
    );
}

#[test]
fn scan_commands() {
    let scan = |from, to, read_ht, limit, reverse| {
        Ok(Command::Scan(ScanCommand {
            from,
            to,
            read_ht,
            limit,
            reverse,
        }))
    };
    let t = HybridTime::from_micros(1000);
    assert_eq!(
        parse_command("scan @1000"),
        scan(None, None, t, None, false)
    );
    assert_eq!(
        parse_command("scan @1000 limit 2"),
        scan(None, None, t, Some(2), false)
    );
    assert_eq!(
        parse_command("scan @1000 reverse"),
        scan(None, None, t, None, true)
    );
    assert_eq!(
        parse_command("scan @1000 reverse limit 0"),
        scan(None, None, t, Some(0), true)
    );
    assert_eq!(
        parse_command(r#"scan from DocKey([], ["a"]) to DocKey([], ["b"]) @max limit 5 reverse"#),
        scan(
            Some(doc(vec![s("a")])),
            Some(doc(vec![s("b")])),
            HybridTime::MAX,
            Some(5),
            true
        )
    );
    assert_eq!(
        parse_command(r#"scan to DocKey([], ["b"]) @1000"#),
        scan(None, Some(doc(vec![s("b")])), t, None, false)
    );
}

#[test]
fn write_commands() {
    let line = r#"write @1000 set SubDocKey(DocKey([], ["a"]), ["b"]) = "v;1" ttl 10ms timestamp 5; delete DocKey([], ["x"]); set DocKey([], ["y"]) = DEL timestamp -3 ttl 2s;"#;
    assert_eq!(
        parse_command(line),
        Ok(Command::Write(WriteCommand {
            explain: false,
            ht: HybridTime::from_micros(1000),
            ops: vec![
                WriteOp::Set {
                    path: path(vec![s("a")], vec![s("b")]),
                    value: PrimitiveValue::string("v;1"),
                    ttl: Some(Ttl(10)),
                    user_timestamp: Some(5),
                },
                WriteOp::Delete {
                    path: path(vec![s("x")], vec![])
                },
                WriteOp::Set {
                    path: path(vec![s("y")], vec![]),
                    value: PrimitiveValue::Tombstone,
                    ttl: Some(Ttl(2000)),
                    user_timestamp: Some(-3),
                },
            ],
        }))
    );
    let line = r#"explain write @max insert DocKey([], ["d"]) = {"a": 1, "b": {"c": [1, "x", {}], "e": DEL}, 7: [], "n": null,} ttl 1s"#;
    assert_eq!(
        parse_command(line),
        Ok(Command::Write(WriteCommand {
            explain: true,
            ht: HybridTime::MAX,
            ops: vec![WriteOp::Insert {
                path: path(vec![s("d")], vec![]),
                doc: DocLiteral::Object(vec![
                    (s("a"), DocLiteral::Value(PrimitiveValue::Int64(1))),
                    (
                        s("b"),
                        DocLiteral::Object(vec![
                            (
                                s("c"),
                                DocLiteral::List(vec![
                                    DocLiteral::Value(PrimitiveValue::Int64(1)),
                                    DocLiteral::Value(PrimitiveValue::string("x")),
                                    DocLiteral::Object(vec![]),
                                ]),
                            ),
                            (s("e"), DocLiteral::Value(PrimitiveValue::Tombstone)),
                        ]),
                    ),
                    (K::Int64(7, ASC), DocLiteral::List(vec![])),
                    (s("n"), DocLiteral::Value(PrimitiveValue::Null)),
                ]),
                ttl: Some(Ttl(1000)),
            }],
        }))
    );
    let line = r#"write @1 extend DocKey([], ["d"]) = ["a", desc] "#;
    assert!(parse_command(line).is_err());
    let line = r#"write @1 extend DocKey([], ["d"]) = "scalar"; append DocKey([], ["l"]) = [1, {}, DEL]; prepend DocKey([], ["l"]) = [] ttl 5ms"#;
    assert_eq!(
        parse_command(line),
        Ok(Command::Write(WriteCommand {
            explain: false,
            ht: HybridTime::from_micros(1),
            ops: vec![
                WriteOp::Extend {
                    path: path(vec![s("d")], vec![]),
                    doc: DocLiteral::Value(PrimitiveValue::string("scalar")),
                    ttl: None,
                },
                WriteOp::Append {
                    path: path(vec![s("l")], vec![]),
                    values: vec![
                        PrimitiveValue::Int64(1),
                        PrimitiveValue::Object,
                        PrimitiveValue::Tombstone
                    ],
                    ttl: None,
                },
                WriteOp::Prepend {
                    path: path(vec![s("l")], vec![]),
                    values: vec![],
                    ttl: Some(Ttl(5))
                },
            ],
        }))
    );
    let line = r#"write @2 list_set DocKey([], ["l"]) 3 = "v" read @1+1; list_delete DocKey([], ["l"]) 0 read @max; expire DocKey([], ["e"]) ttl 5ms; persist DocKey([], ["p"])"#;
    assert_eq!(
        parse_command(line),
        Ok(Command::Write(WriteCommand {
            explain: false,
            ht: HybridTime::from_micros(2),
            ops: vec![
                WriteOp::ListSet {
                    path: path(vec![s("l")], vec![]),
                    pos: 3,
                    value: Some(PrimitiveValue::string("v")),
                    read_ht: HybridTime::new(1, 1),
                },
                WriteOp::ListSet {
                    path: path(vec![s("l")], vec![]),
                    pos: 0,
                    value: None,
                    read_ht: HybridTime::MAX
                },
                WriteOp::Expire {
                    path: path(vec![s("e")], vec![]),
                    ttl: Some(Ttl(5))
                },
                WriteOp::Expire {
                    path: path(vec![s("p")], vec![]),
                    ttl: None
                },
            ],
        }))
    );
}

#[test]
fn command_errors() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "bogus",
            1,
            "expected a command (`write`, `explain write`, `get`, `scan`, `compact`, `flush`, `dump`, `set option`, `stats`), found `bogus`",
        ),
        (
            "\"x\"",
            1,
            "expected a command (`write`, `explain write`, `get`, `scan`, `compact`, `flush`, `dump`, `set option`, `stats`), found string \"x\"",
        ),
        ("dump now", 6, "expected end of line, found `now`"),
        ("flush;", 6, "expected end of line, found `;`"),
        (
            "compact 5000",
            9,
            "expected `@` and a hybrid time (`@1000`, `@1000+5`, `@max`), found `5000`",
        ),
        (
            "compact @",
            10,
            "expected a hybrid time in µs (`1000`, `1000+5`) or `max`, found end of line",
        ),
        (
            "compact @min",
            10,
            "expected a hybrid time in µs (`1000`, `1000+5`) or `max`, found `min`",
        ),
        (
            "compact @1.5",
            10,
            "invalid hybrid time `1.5`: invalid digit found in string",
        ),
        (
            "compact @-1",
            10,
            "invalid hybrid time `-1`: invalid digit found in string",
        ),
        (
            "compact @1000+4096",
            15,
            "invalid logical time `4096`: must be below 4096",
        ),
        (
            "compact @4503599627370496",
            10,
            "invalid hybrid time `4503599627370496`: physical time too large",
        ),
        ("explain get", 9, "expected `write`, found `get`"),
        (
            "write @1000",
            12,
            "expected a write operation (`set`, `insert`, `extend`, `delete`, `append`, `prepend`, `list_set`, `list_delete`, `expire`, `persist`), found end of line",
        ),
        (
            "write @1000 put DocKey([], []) = 1",
            13,
            "expected a write operation (`set`, `insert`, `extend`, `delete`, `append`, `prepend`, `list_set`, `list_delete`, `expire`, `persist`), found `put`",
        ),
        (
            "write @1000 set DocKey([], []) 1",
            32,
            "expected `=`, found `1`",
        ),
        (
            "write @1000 set DocKey([], []) = 1 ttl 5",
            41,
            "expected a TTL unit (`ms` or `s`), found end of line",
        ),
        (
            "write @1000 set DocKey([], []) = 1 ttl 5m",
            40,
            "invalid TTL `5m`: the unit must be `ms` or `s`",
        ),
        (
            "write @1000 set DocKey([], []) = 1 ttl -5ms",
            40,
            "invalid TTL `-5ms`: expected a non-negative number of ms or s",
        ),
        (
            "write @1000 set DocKey([], []) = 1 ttl 1ms ttl 2ms",
            44,
            "expected `;` and another operation, or end of line, found `ttl`",
        ),
        (
            "write @1000 set DocKey([], []) = 1 timestamp x",
            46,
            "expected a user timestamp (an integer), found `x`",
        ),
        (
            "write @1000 set DocKey([], []) = 1 dump",
            36,
            "expected `;` and another operation, or end of line, found `dump`",
        ),
        (
            "write @1000 set DocKey([], []) = 1;; dump",
            36,
            "expected a write operation (`set`, `insert`, `extend`, `delete`, `append`, `prepend`, `list_set`, `list_delete`, `expire`, `persist`), found `;`",
        ),
        (
            "write @1000 insert DocKey([], []) = {\"a\" 1}",
            42,
            "expected `:`, found `1`",
        ),
        (
            "write @1000 insert DocKey([], []) = {\"a\": 1",
            44,
            "expected `,` or `}`, found end of line",
        ),
        (
            "write @1000 insert DocKey([], []) = [1 2]",
            40,
            "expected `,` or `]`, found `2`",
        ),
        (
            "write @1000 append DocKey([], []) = 1",
            37,
            "expected `[`, found `1`",
        ),
        (
            "write @1000 list_set DocKey([], []) -1 = 1 read @1",
            37,
            "invalid list position `-1`: invalid digit found in string",
        ),
        (
            "write @1000 list_set DocKey([], []) 1 = 1",
            42,
            "expected `read`, found end of line",
        ),
        (
            "write @1000 list_delete DocKey([], []) 1 = 1 read @1",
            42,
            "expected `read`, found `=`",
        ),
        (
            "write @1000 expire DocKey([], [])",
            34,
            "expected `ttl`, found end of line",
        ),
        (
            "get DocKey([], []) @1 project",
            30,
            "expected a key component (a literal or `desc(...)`), found end of line",
        ),
        (
            "scan limit 1 @1000",
            6,
            "expected `from`, `to`, `@` and the read time, found `limit`",
        ),
        (
            "scan @1000 limit",
            17,
            "expected a limit (an integer), found end of line",
        ),
        (
            "scan @1000 limit 1 limit 2",
            20,
            "expected `reverse`, end of line, found `limit`",
        ),
        (
            "scan from DocKey([], []) from DocKey([], []) @1",
            26,
            "expected `to`, `@` and the read time, found `from`",
        ),
        (
            "set DocKey([], []) = 1",
            5,
            "expected `option` (write operations need `write @HT set ...`), found `DocKey`",
        ),
        (
            "set option colour blue",
            12,
            "expected an option name (`init_markers` or `table_ttl`), found `colour`",
        ),
        (
            "set option init_markers maybe",
            25,
            "expected `required` or `optional`, found `maybe`",
        ),
        (
            "set option table_ttl forever",
            22,
            "expected a TTL like `10ms`, `10s`, or `none`, found `forever`",
        ),
        ("dump !", 6, "unexpected character '!'"),
        // Columns count characters, not bytes.
        (
            "write @1 set DocKey([], [\"é\"]) = 1 x",
            36,
            "expected `;` and another operation, or end of line, found `x`",
        ),
    ];
    for &(line, column, message) in cases {
        let (c, m) = err_text(line);
        assert_eq!((c, m.as_str()), (column, message), "{line}");
    }
    // The Display of the whole error names the column.
    assert_eq!(
        err("dump now").to_string(),
        "column 6: expected end of line, found `now`"
    );
    assert_eq!(
        err("dump now").kind,
        ParseErrorKind::Expected {
            expected: "end of line".into(),
            found: "`now`".into()
        }
    );
}
