//! Golden tests: shell scripts whose exact output comes from shared/spec/vectors.md (D1, B5)
//! or is derived by hand from format.md's rules (noted at each test). Every script runs on
//! the in-memory engine and on RocksDB.

mod common;

use common::{check, lines};

// ---------------------------------------------------------------------------------------------
// vectors.md D1
// ---------------------------------------------------------------------------------------------

/// The D1 writes, exactly as shell.md writes them.
const D1_WRITES: &str = r#"set option init_markers required
write @1000 set DocKey([], ["my_key_where_value_is_a_string"]) = "value1"
write @2000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_a"]) = "value_a"
write @3000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"]) = "value_bc"
write @3500 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_d"]) = "value_bd"
write @4000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_x"])
write @5000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"])
write @6000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"])
write @7000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"]) = "value_bc_prime"
"#;

/// `kPredefinedDBStateDebugDumpStr`.
const D1_DUMP: &[&str] = &[
    r#"SubDocKey(DocKey([], ["my_key_where_value_is_a_string"]), [HT{ physical: 1000 }]) -> "value1""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), [HT{ physical: 2000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_a"; HT{ physical: 2000 w: 1 }]) -> "value_a""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 7000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 6000 }]) -> DEL"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 3000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"; HT{ physical: 7000 w: 1 }]) -> "value_bc_prime""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"; HT{ physical: 5000 }]) -> DEL"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"; HT{ physical: 3000 w: 1 }]) -> "value_bc""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_d"; HT{ physical: 3500 }]) -> "value_bd""#,
];

/// `CheckExpectedLatestDBState`.
const D1_LATEST: &[&str] = &[
    "{",
    r#"  "subkey_a": "value_a","#,
    r#"  "subkey_b": {"#,
    r#"    "subkey_c": "value_bc_prime""#,
    "  }",
    "}",
];

/// Compaction at cutoff 5000.
const D1_CUTOFF_5000: &[&str] = &[
    r#"SubDocKey(DocKey([], ["my_key_where_value_is_a_string"]), [HT{ physical: 1000 }]) -> "value1""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), [HT{ physical: 2000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_a"; HT{ physical: 2000 w: 1 }]) -> "value_a""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 7000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 6000 }]) -> DEL"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 3000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"; HT{ physical: 7000 w: 1 }]) -> "value_bc_prime""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_d"; HT{ physical: 3500 }]) -> "value_bd""#,
];

/// Compaction at cutoff 6000.
const D1_CUTOFF_6000: &[&str] = &[
    r#"SubDocKey(DocKey([], ["my_key_where_value_is_a_string"]), [HT{ physical: 1000 }]) -> "value1""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), [HT{ physical: 2000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_a"; HT{ physical: 2000 w: 1 }]) -> "value_a""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 7000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"; HT{ physical: 7000 w: 1 }]) -> "value_bc_prime""#,
];

/// The row-level `{` written at 8000.
const D1_ROOT_8000: &str =
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), [HT{ physical: 8000 }]) -> {}"#;

/// The @8000 write of D1 and its write batch.
const D1_WRITE_8000: &str = r#"write @8000 set DocKey([], ["mydockey", 123456]) = {}"#;
const D1_EXPLAIN_8000: &str = r"1. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!', '{')";

/// Compaction at 7999 after the @8000 write on the original state.
const D1_CUTOFF_7999: &[&str] = &[
    r#"SubDocKey(DocKey([], ["my_key_where_value_is_a_string"]), [HT{ physical: 1000 }]) -> "value1""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), [HT{ physical: 8000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), [HT{ physical: 2000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_a"; HT{ physical: 2000 w: 1 }]) -> "value_a""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"; HT{ physical: 7000 }]) -> {}"#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"; HT{ physical: 7000 w: 1 }]) -> "value_bc_prime""#,
];

/// Compaction at 8000 after the @8000 write, from any state.
const D1_CUTOFF_8000: &[&str] = &[
    r#"SubDocKey(DocKey([], ["my_key_where_value_is_a_string"]), [HT{ physical: 1000 }]) -> "value1""#,
    r#"SubDocKey(DocKey([], ["mydockey", 123456]), [HT{ physical: 8000 }]) -> {}"#,
];

/// The example script of shell.md, verbatim.
#[test]
fn d1_shell_md_example() {
    let script = format!(
        "{D1_WRITES}dump\nget DocKey([], [\"mydockey\", 123456]) @7000\ncompact @5000\ndump\n"
    );
    let expected = [lines(D1_DUMP), lines(D1_LATEST), lines(D1_CUTOFF_5000)].concat();
    check(&script, &expected);
}

/// Each D1 write batch, shown by `explain write` right before it is written.
#[test]
fn d1_write_batches() {
    let steps: &[(&str, &[&str])] = &[
        (
            r#"write @1000 set DocKey([], ["my_key_where_value_is_a_string"]) = "value1""#,
            &[r"1. PutCF('Smy_key_where_value_is_a_string\x00\x00!', 'Svalue1')"],
        ),
        (
            r#"write @2000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_a"]) = "value_a""#,
            &[
                r"1. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!', '{')",
                r"2. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_a\x00\x00', 'Svalue_a')",
            ],
        ),
        (
            r#"write @3000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"]) = "value_bc""#,
            &[
                r"1. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_b\x00\x00', '{')",
                r"2. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_b\x00\x00Ssubkey_c\x00\x00', 'Svalue_bc')",
            ],
        ),
        (
            r#"write @3500 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_d"]) = "value_bd""#,
            &[
                r"1. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_b\x00\x00Ssubkey_d\x00\x00', 'Svalue_bd')",
            ],
        ),
        (
            r#"write @4000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_x"])"#,
            &[],
        ),
        (
            r#"write @5000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"])"#,
            &[
                r"1. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_b\x00\x00Ssubkey_c\x00\x00', 'X')",
            ],
        ),
        (
            r#"write @6000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"])"#,
            &[
                r"1. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_b\x00\x00', 'X')",
            ],
        ),
        (
            r#"write @7000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"]) = "value_bc_prime""#,
            &[
                r"1. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_b\x00\x00', '{')",
                r"2. PutCF('Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!Ssubkey_b\x00\x00Ssubkey_c\x00\x00', 'Svalue_bc_prime')",
            ],
        ),
    ];
    let mut script = String::from("set option init_markers required\n");
    let mut expected = String::new();
    for (write, batch) in steps {
        script.push_str(&format!("explain {write}\n{write}\n"));
        expected.push_str(&lines(batch));
    }
    // Explaining wrote nothing: the state is exactly D1's.
    script.push_str("dump\n");
    expected.push_str(&lines(D1_DUMP));
    check(&script, &expected);
}

#[test]
fn d1_latest_state_and_past_reads() {
    // Reads at earlier times, derived from the D1 dump with format.md §8.
    let script = format!(
        "{D1_WRITES}{}",
        [
            r#"get DocKey([], ["mydockey", 123456]) @max"#,
            r#"get DocKey([], ["mydockey", 123456]) @1999"#,
            r#"get SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"]) @6000"#,
            r#"get SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"]) @4999"#,
            r#"get SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"]) @5000"#,
            r#"get DocKey([], ["my_key_where_value_is_a_string"]) @1000"#,
        ]
        .map(|l| format!("{l}\n"))
        .concat()
    );
    let expected = [
        lines(D1_LATEST),
        lines(&["not found"]),
        lines(&["not found"]),
        lines(&[r#""value_bc""#]),
        lines(&["{", r#"  "subkey_d": "value_bd""#, "}"]),
        lines(&[r#""value1""#]),
    ]
    .concat();
    check(&script, &expected);
}

#[test]
fn d1_compaction_at_6000_from_original_and_from_5000() {
    check(
        &format!("{D1_WRITES}compact @6000\ndump\n"),
        &lines(D1_CUTOFF_6000),
    );
    check(
        &format!("{D1_WRITES}compact @5000\ncompact @6000\ndump\n"),
        &lines(D1_CUTOFF_6000),
    );
    // Reads at or after the cutoff are unchanged.
    check(
        &format!("{D1_WRITES}compact @6000\nget DocKey([], [\"mydockey\", 123456]) @7000\n"),
        &lines(D1_LATEST),
    );
}

/// The @8000 `{}` write from the original state: its batch, the read at 8000, the dump, and
/// compactions at 7999 and 8000.
#[test]
fn d1_object_write_at_8000_from_original_state() {
    let mut dump_8000: Vec<&str> = D1_DUMP.to_vec();
    dump_8000.insert(1, D1_ROOT_8000);
    let script = format!(
        "{D1_WRITES}explain {D1_WRITE_8000}\n{D1_WRITE_8000}\nget DocKey([], [\"mydockey\", 123456]) @8000\ndump\n"
    );
    let expected = [lines(&[D1_EXPLAIN_8000]), lines(&["{}"]), lines(&dump_8000)].concat();
    check(&script, &expected);

    check(
        &format!("{D1_WRITES}{D1_WRITE_8000}\ncompact @7999\ndump\n"),
        &lines(D1_CUTOFF_7999),
    );
    check(
        &format!("{D1_WRITES}{D1_WRITE_8000}\ncompact @8000\ndump\n"),
        &lines(D1_CUTOFF_8000),
    );
}

/// The @8000 write from the states after compactions at 5000 and 6000 (and 7999).
#[test]
fn d1_object_write_at_8000_from_compacted_states() {
    for cutoff in [
        "compact @5000\n",
        "compact @6000\n",
        "compact @5000\ncompact @6000\n",
    ] {
        let script = format!(
            "{D1_WRITES}{cutoff}explain {D1_WRITE_8000}\n{D1_WRITE_8000}\nget DocKey([], [\"mydockey\", 123456]) @8000\ncompact @8000\ndump\n"
        );
        let expected = [
            lines(&[D1_EXPLAIN_8000]),
            lines(&["{}"]),
            lines(D1_CUTOFF_8000),
        ]
        .concat();
        check(&script, &expected);
    }
    check(
        &format!("{D1_WRITES}{D1_WRITE_8000}\ncompact @7999\ncompact @8000\ndump\n"),
        &lines(D1_CUTOFF_8000),
    );
}

/// Flushing between writes (several SST files on RocksDB) changes nothing.
#[test]
fn d1_with_flushes() {
    let writes: String = D1_WRITES.lines().map(|l| format!("{l}\nflush\n")).collect();
    let script = format!("{writes}dump\ncompact @5000\ndump\n");
    check(&script, &[lines(D1_DUMP), lines(D1_CUTOFF_5000)].concat());
}

// ---------------------------------------------------------------------------------------------
// vectors.md B5
// ---------------------------------------------------------------------------------------------

const B5_WRITE: &str = r#"write @1000 set SubDocKey(DocKey([], ["a"]), ["b"]) = "v1"; set SubDocKey(DocKey([], ["a"]), ["c", "d"]) = "v2"; set SubDocKey(DocKey([], ["a"]), ["c", "e"]) = "v3""#;

#[test]
fn b5_multi_operation_write_batch() {
    let script =
        format!("set option init_markers optional\nexplain {B5_WRITE}\n{B5_WRITE}\ndump\n");
    let expected = lines(&[
        r"1. PutCF('Sa\x00\x00!Sb\x00\x00', 'Sv1')",
        r"2. PutCF('Sa\x00\x00!Sc\x00\x00Sd\x00\x00', 'Sv2')",
        r"3. PutCF('Sa\x00\x00!Sc\x00\x00Se\x00\x00', 'Sv3')",
        r#"SubDocKey(DocKey([], ["a"]), ["b"; HT{ physical: 1000 }]) -> "v1""#,
        r#"SubDocKey(DocKey([], ["a"]), ["c", "d"; HT{ physical: 1000 w: 1 }]) -> "v2""#,
        r#"SubDocKey(DocKey([], ["a"]), ["c", "e"; HT{ physical: 1000 w: 2 }]) -> "v3""#,
    ]);
    check(&script, &expected);
    // Optional is the default.
    check(
        &format!("{B5_WRITE}\ndump\n"),
        &expected
            .lines()
            .skip(3)
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    );
}

#[test]
fn b5_doc_key_encoding() {
    check(
        r#"explain write @1000 set DocKey([], ["my_key_where_value_is_a_string"]) = "value1""#,
        &lines(&[r"1. PutCF('Smy_key_where_value_is_a_string\x00\x00!', 'Svalue1')"]),
    );
}
