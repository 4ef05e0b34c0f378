//! The write operations and reads of shell.md beyond vectors.md's scenarios. Every expected
//! output is derived by hand from shell.md's rules and format.md (§2 key encodings, §4
//! DocHybridTime text, §5 value encodings and text, §7 GC, §8 reads, §11 lists); the
//! derivation is noted next to each expectation. Every script runs on the in-memory engine
//! and on RocksDB.

mod common;

use common::lines as script;
use common::{check, lines};
use docdb_shell::{Shell, open_shell, run_script};

// ---------------------------------------------------------------------------------------------
// Lists (shell.md rules 4 and 5, format.md §11)
// ---------------------------------------------------------------------------------------------

/// insert of a list, append, prepend, list_set, list_delete. The counter starts at 0 and
/// `fetch_add(k)` hands out idx+1..idx+k; prepend negates them and writes the block reversed.
#[test]
fn list_operations() {
    let s = script(&[
        // `A` marker w0, then ArrayIndex(1) w1, ArrayIndex(2) w2.
        r#"write @1000 insert DocKey([], ["l"]) = ["a", "b"]"#,
        // ArrayIndex(3).
        r#"write @2000 append DocKey([], ["l"]) = ["c"]"#,
        // Indexes 4, 5; reversed block: "y" → -4 (w0), "x" → -5 (w1).
        r#"write @3000 prepend DocKey([], ["l"]) = ["x", "y"]"#,
        // Visible at 3000 in key order: -5 x, -4 y, 1 a, 2 b, 3 c; position 1 is -4.
        r#"write @4000 list_set DocKey([], ["l"]) 1 = "Y" read @3000"#,
        // Position 0 is -5.
        r#"write @5000 list_delete DocKey([], ["l"]) 0 read @4000"#,
        "dump",
        r#"get SubDocKey(DocKey([], ["l"]), [ArrayIndex(-4)]) @4000"#,
        r#"get SubDocKey(DocKey([], ["l"]), [ArrayIndex(-4)]) @3999"#,
        r#"get SubDocKey(DocKey([], ["l"]), [ArrayIndex(-5)]) @5000"#,
        r#"get SubDocKey(DocKey([], ["l"]), [ArrayIndex(-5)]) @4999"#,
        // Visible at 5000: -4 Y, 1 a, 2 b, 3 c; position 0 is -4 again.
        r#"explain write @6000 list_set DocKey([], ["l"]) 0 = "z" read @5000"#,
        // Position 3 is ArrayIndex(3); a delete writes a tombstone.
        r#"explain write @6000 list_delete DocKey([], ["l"]) 3 read @5000"#,
    ]);
    let expected = lines(&[
        r#"SubDocKey(DocKey([], ["l"]), [HT{ physical: 1000 }]) -> []"#,
        r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(-5); HT{ physical: 5000 }]) -> DEL"#,
        r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(-5); HT{ physical: 3000 w: 1 }]) -> "x""#,
        r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(-4); HT{ physical: 4000 }]) -> "Y""#,
        r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(-4); HT{ physical: 3000 }]) -> "y""#,
        r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(1); HT{ physical: 1000 w: 1 }]) -> "a""#,
        r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(2); HT{ physical: 1000 w: 2 }]) -> "b""#,
        r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(3); HT{ physical: 2000 }]) -> "c""#,
        r#""Y""#,
        r#""y""#,
        "not found",
        r#""x""#,
        // `[` + BE(-4 ^ 0x8000000000000000) = 7f ff ff ff ff ff ff fc.
        r"1. PutCF('Sl\x00\x00![\x7f\xff\xff\xff\xff\xff\xff\xfc', 'Sz')",
        r"1. PutCF('Sl\x00\x00![\x80\x00\x00\x00\x00\x00\x00\x03', 'X')",
    ]);
    check(&s, &expected);
}

/// Rule 5: positions count among the elements visible at the read time; a newer init marker
/// hides the older elements.
#[test]
fn list_positions_follow_the_read_time() {
    let s = script(&[
        r#"write @1000 insert DocKey([], ["l"]) = ["a", "b"]"#,
        // A new list: marker at 2000, element ArrayIndex(3).
        r#"write @2000 insert DocKey([], ["l"]) = ["c"]"#,
        r#"explain write @3000 list_set DocKey([], ["l"]) 0 = "x" read @2000"#,
        r#"explain write @3000 list_set DocKey([], ["l"]) 1 = "x" read @1999"#,
    ]);
    let expected = lines(&[
        r"1. PutCF('Sl\x00\x00![\x80\x00\x00\x00\x00\x00\x00\x03', 'Sx')",
        r"1. PutCF('Sl\x00\x00![\x80\x00\x00\x00\x00\x00\x00\x02', 'Sx')",
    ]);
    check(&s, &expected);
    let (out, failed) = run_script(
        &Shell::in_memory().expect("shell"),
        &format!("{s}write @3000 list_set DocKey([], [\"l\"]) 1 = \"x\" read @2000\n"),
    );
    assert!(failed);
    assert!(
        out.ends_with("\n") && out.lines().last().is_some_and(|l| l.starts_with("error: ")),
        "{out}"
    );
}

/// Positions that do not exist are errors, and a failing operation writes nothing of its
/// batch.
#[test]
fn list_position_errors() {
    for shell_out in [
        run_script(
            &Shell::in_memory().expect("shell"),
            &script(&[
                r#"write @1000 append DocKey([], ["l"]) = ["a"]"#,
                r#"write @2000 set DocKey([], ["other"]) = 1; list_set DocKey([], ["l"]) 1 = "b" read @1000"#,
                r#"write @2000 list_delete DocKey([], ["l"]) 0 read @999"#,
                r#"write @2000 list_delete DocKey([], ["nothing"]) 0 read @1000"#,
                "dump",
            ]),
        ),
        run_script(
            &open_shell(None).expect("shell"),
            &script(&[
                r#"write @1000 append DocKey([], ["l"]) = ["a"]"#,
                r#"write @2000 set DocKey([], ["other"]) = 1; list_set DocKey([], ["l"]) 1 = "b" read @1000"#,
                r#"write @2000 list_delete DocKey([], ["l"]) 0 read @999"#,
                r#"write @2000 list_delete DocKey([], ["nothing"]) 0 read @1000"#,
                "dump",
            ]),
        ),
    ] {
        let (out, failed) = shell_out;
        assert!(failed);
        let out: Vec<&str> = out.lines().collect();
        assert_eq!(out.len(), 4, "{out:?}");
        for line in &out[..3] {
            assert!(line.starts_with("error: "), "{line}");
        }
        assert_eq!(
            out[3],
            r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(1); HT{ physical: 1000 }]) -> "a""#
        );
    }
}

/// List indexes are shared by all lists and survive a restart (shell.md rule 4).
#[test]
fn list_counter_survives_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let shell = open_shell(Some(dir.path())).expect("open");
        let (out, failed) = run_script(
            &shell,
            &script(&[
                r#"write @1000 append DocKey([], ["l"]) = ["a"]"#,
                r#"write @1000 append DocKey([], ["m"]) = ["b", "c"]"#,
            ]),
        );
        assert_eq!((out.as_str(), failed), ("", false));
    }
    let shell = open_shell(Some(dir.path())).expect("reopen");
    let (out, failed) = run_script(
        &shell,
        &script(&[r#"write @2000 append DocKey([], ["l"]) = ["d"]"#, "dump"]),
    );
    assert!(!failed, "{out}");
    assert_eq!(
        out,
        lines(&[
            r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(1); HT{ physical: 1000 }]) -> "a""#,
            r#"SubDocKey(DocKey([], ["l"]), [ArrayIndex(4); HT{ physical: 2000 }]) -> "d""#,
            r#"SubDocKey(DocKey([], ["m"]), [ArrayIndex(2); HT{ physical: 1000 }]) -> "b""#,
            r#"SubDocKey(DocKey([], ["m"]), [ArrayIndex(3); HT{ physical: 1000 w: 1 }]) -> "c""#,
        ])
    );
}

/// An insert replaces what was there: older children are hidden by the new init marker
/// (format.md §8), nested containers get no marker of their own (shell.md rule 3).
#[test]
fn insert_and_extend() {
    let s = script(&[
        r#"explain write @1000 insert DocKey([], ["p"]) = {"a": 1, "b": {"c": 2}, "d": 3}"#,
        r#"write @1000 insert DocKey([], ["p"]) = {"a": 1, "b": {"c": 2}, "d": 3}"#,
        r#"write @2000 extend DocKey([], ["p"]) = {"e": "x"}"#,
        r#"get DocKey([], ["p"]) @2000"#,
        r#"write @3000 insert SubDocKey(DocKey([], ["p"]), ["b"]) = {"f": true}"#,
        r#"get DocKey([], ["p"]) @3000"#,
        r#"write @4000 insert DocKey([], ["p"]) = {"z": null}"#,
        r#"get DocKey([], ["p"]) @4000"#,
        r#"get DocKey([], ["p"]) @1000"#,
    ]);
    let expected = lines(&[
        // `{` marker, then the leaves in order; int64 payloads are `I` + 8 bytes BE.
        r"1. PutCF('Sp\x00\x00!', '{')",
        r"2. PutCF('Sp\x00\x00!Sa\x00\x00', 'I\x00\x00\x00\x00\x00\x00\x00\x01')",
        r"3. PutCF('Sp\x00\x00!Sb\x00\x00Sc\x00\x00', 'I\x00\x00\x00\x00\x00\x00\x00\x02')",
        r"4. PutCF('Sp\x00\x00!Sd\x00\x00', 'I\x00\x00\x00\x00\x00\x00\x00\x03')",
        "{",
        r#"  "a": 1,"#,
        r#"  "b": {"#,
        r#"    "c": 2"#,
        "  },",
        r#"  "d": 3,"#,
        r#"  "e": "x""#,
        "}",
        "{",
        r#"  "a": 1,"#,
        r#"  "b": {"#,
        r#"    "f": true"#,
        "  },",
        r#"  "d": 3,"#,
        r#"  "e": "x""#,
        "}",
        "{",
        r#"  "z": null"#,
        "}",
        "{",
        r#"  "a": 1,"#,
        r#"  "b": {"#,
        r#"    "c": 2"#,
        "  },",
        r#"  "d": 3"#,
        "}",
    ]);
    check(&s, &expected);
}

/// `get ... project`: only the named first-level children (with their subtrees).
#[test]
fn get_with_projection() {
    let s = script(&[
        r#"write @1000 insert DocKey([], ["p"]) = {"a": 1, "b": {"c": 2}, "d": 3}"#,
        r#"get DocKey([], ["p"]) @1000 project "a", "d""#,
        r#"get DocKey([], ["p"]) @1000 project "b""#,
        r#"get DocKey([], ["p"]) @1000 project "a", "nothing""#,
    ]);
    let expected = lines(&[
        "{",
        r#"  "a": 1,"#,
        r#"  "d": 3"#,
        "}",
        "{",
        r#"  "b": {"#,
        r#"    "c": 2"#,
        "  }",
        "}",
        "{",
        r#"  "a": 1"#,
        "}",
    ]);
    check(&s, &expected);
}

// ---------------------------------------------------------------------------------------------
// Deletes, user timestamps, @max (shell.md rules 1, 2, 6, 10)
// ---------------------------------------------------------------------------------------------

#[test]
fn delete_of_missing_path() {
    // Optional init markers (the default): the tombstone is written blind.
    check(
        r#"explain write @1000 delete DocKey([], ["nothing"])"#,
        &lines(&[r"1. PutCF('Snothing\x00\x00!', 'X')"]),
    );
    // Required: nothing is written.
    check(
        &script(&[
            "set option init_markers required",
            r#"explain write @1000 delete DocKey([], ["nothing"])"#,
            "dump",
        ]),
        "",
    );
    // `set ... = DEL` always writes the tombstone.
    check(
        &script(&[
            "set option init_markers required",
            r#"explain write @1000 set DocKey([], ["nothing"]) = DEL"#,
        ]),
        &lines(&[r"1. PutCF('Snothing\x00\x00!', 'X')"]),
    );
}

/// Rule 2: the ops of one write see the earlier ops of the batch: the `{` marker created by
/// the first set is not written again, and a delete sees a value written just before.
#[test]
fn ops_see_earlier_ops_of_the_batch() {
    let s = script(&[
        "set option init_markers required",
        r#"explain write @1000 set SubDocKey(DocKey([], ["a"]), ["b"]) = 1; set SubDocKey(DocKey([], ["a"]), ["c"]) = 2; delete SubDocKey(DocKey([], ["a"]), ["b"]); delete SubDocKey(DocKey([], ["a"]), ["z"])"#,
        r#"write @1000 set SubDocKey(DocKey([], ["a"]), ["b"]) = 1; set SubDocKey(DocKey([], ["a"]), ["c"]) = 2; delete SubDocKey(DocKey([], ["a"]), ["b"]); delete SubDocKey(DocKey([], ["a"]), ["z"])"#,
        "dump",
        r#"get DocKey([], ["a"]) @1000"#,
    ]);
    let expected = lines(&[
        r"1. PutCF('Sa\x00\x00!', '{')",
        r"2. PutCF('Sa\x00\x00!Sb\x00\x00', 'I\x00\x00\x00\x00\x00\x00\x00\x01')",
        r"3. PutCF('Sa\x00\x00!Sc\x00\x00', 'I\x00\x00\x00\x00\x00\x00\x00\x02')",
        r"4. PutCF('Sa\x00\x00!Sb\x00\x00', 'X')",
        r#"SubDocKey(DocKey([], ["a"]), [HT{ physical: 1000 }]) -> {}"#,
        r#"SubDocKey(DocKey([], ["a"]), ["b"; HT{ physical: 1000 w: 3 }]) -> DEL"#,
        r#"SubDocKey(DocKey([], ["a"]), ["b"; HT{ physical: 1000 w: 1 }]) -> 1"#,
        r#"SubDocKey(DocKey([], ["a"]), ["c"; HT{ physical: 1000 w: 2 }]) -> 2"#,
        "{",
        r#"  "c": 2"#,
        "}",
    ]);
    check(&s, &expected);
}

/// Rule 10: writes below an earlier compaction cutoff are accepted.
#[test]
fn writes_below_an_earlier_cutoff() {
    let s = script(&[
        r#"write @5000 set DocKey([], ["a"]) = 1"#,
        "compact @9000",
        r#"write @1000 set DocKey([], ["b"]) = 2"#,
        r#"write @1000 set DocKey([], ["a"]) = 0"#,
        r#"get DocKey([], ["b"]) @1000"#,
        r#"get DocKey([], ["a"]) @9000"#,
        "dump",
    ]);
    let expected = lines(&[
        "2",
        "1",
        r#"SubDocKey(DocKey([], ["a"]), [HT{ physical: 5000 }]) -> 1"#,
        r#"SubDocKey(DocKey([], ["a"]), [HT{ physical: 1000 }]) -> 0"#,
        r#"SubDocKey(DocKey([], ["b"]), [HT{ physical: 1000 }]) -> 2"#,
    ]);
    check(&s, &expected);
}

/// Rule 6: a write is skipped when the newest version at the path or an ancestor (or earlier
/// in the batch) has a newer user timestamp, or hybrid time when it has none.
#[test]
fn user_timestamps() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["u"]) = "a" timestamp 5000"#,
        r#"write @2000 set DocKey([], ["u"]) = "b" timestamp 4000"#,
        r#"write @3000 set DocKey([], ["u"]) = "c" timestamp 6000"#,
        r#"write @1000 set DocKey([], ["v"]) = "a""#,
        r#"write @2000 set DocKey([], ["v"]) = "b" timestamp 500"#,
        r#"write @3000 set DocKey([], ["v"]) = "c" timestamp 1500"#,
        r#"explain write @1000 set DocKey([], ["w"]) = "a" timestamp 100; set DocKey([], ["w"]) = "b" timestamp 50"#,
        r#"write @1000 set DocKey([], ["x"]) = {}"#,
        r#"write @2000 set SubDocKey(DocKey([], ["x"]), ["k"]) = 1 timestamp 999"#,
        r#"write @2000 set SubDocKey(DocKey([], ["x"]), ["k"]) = 2 timestamp 1001"#,
        "dump",
    ]);
    let expected = lines(&[
        // `u` + 8 bytes BE user timestamp 100 = 0x64 = `d`.
        r"1. PutCF('Sw\x00\x00!', 'u\x00\x00\x00\x00\x00\x00\x00dSa')",
        r#"SubDocKey(DocKey([], ["u"]), [HT{ physical: 3000 }]) -> "c"; timestamp: 6000"#,
        r#"SubDocKey(DocKey([], ["u"]), [HT{ physical: 1000 }]) -> "a"; timestamp: 5000"#,
        r#"SubDocKey(DocKey([], ["v"]), [HT{ physical: 3000 }]) -> "c"; timestamp: 1500"#,
        r#"SubDocKey(DocKey([], ["v"]), [HT{ physical: 1000 }]) -> "a""#,
        r#"SubDocKey(DocKey([], ["x"]), [HT{ physical: 1000 }]) -> {}"#,
        r#"SubDocKey(DocKey([], ["x"]), ["k"; HT{ physical: 2000 }]) -> 2; timestamp: 1001"#,
    ]);
    check(&s, &expected);
}

/// Rule 6 with a TTL that has not run out at the batch's time: the stored value's user
/// timestamp (5000) is newer than the write's (4000), so the write is skipped.
#[test]
fn user_timestamp_against_an_unexpired_ttl_value() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["u"]) = "a" ttl 100s timestamp 5000"#,
        r#"explain write @2000 set DocKey([], ["u"]) = "b" timestamp 4000"#,
    ]);
    check(&s, "");
}

/// Rule 6: an expired value counts as a tombstone at its write time (1000).
#[test]
fn user_timestamp_against_an_expired_value() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["v"]) = "a" ttl 1ms timestamp 5000"#,
        r#"explain write @5000 set DocKey([], ["v"]) = "b" timestamp 500"#,
        r#"explain write @5000 set DocKey([], ["v"]) = "b" timestamp 1500"#,
    ]);
    // `u` + 1500 as 8 bytes BE (05 dc).
    check(
        &s,
        &lines(&[r"1. PutCF('Sv\x00\x00!', 'u\x00\x00\x00\x00\x00\x00\x05\xdcSb')"]),
    );
}

#[test]
fn user_timestamp_with_required_init_markers_is_an_error() {
    let shell = Shell::in_memory().expect("shell");
    let (out, failed) = run_script(
        &shell,
        &script(&[
            "set option init_markers required",
            r#"write @1000 set DocKey([], ["u"]) = "a" timestamp 5"#,
            "dump",
        ]),
    );
    assert!(failed);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("error: "), "{out}");
}

#[test]
fn write_at_max() {
    let s = script(&[
        r#"write @max set DocKey([], ["m"]) = 1"#,
        "dump",
        r#"get DocKey([], ["m"]) @max"#,
        r#"get DocKey([], ["m"]) @1000"#,
    ]);
    // format.md §4: HybridTime kMax prints `<max>`, with the `HT` debug prefix.
    let expected = lines(&[
        r#"SubDocKey(DocKey([], ["m"]), [HT<max>]) -> 1"#,
        "1",
        "not found",
    ]);
    check(&s, &expected);
}

/// String literals may contain `;` and escapes; logical times order writes.
#[test]
fn strings_and_logical_times() {
    let s = script(&[
        r#"write @1000+1 set DocKey([], ["a;b"]) = "x;\"y\"\\\x00\xff"; set DocKey([], ["c"]) = 1"#,
        r#"write @1000+2 set DocKey([], ["c"]) = 2"#,
        "dump",
        r#"get DocKey([], ["c"]) @1000+1"#,
    ]);
    let expected = lines(&[
        r#"SubDocKey(DocKey([], ["a;b"]), [HT{ physical: 1000 logical: 1 }]) -> "x;\"y\"\\\x00\xff""#,
        r#"SubDocKey(DocKey([], ["c"]), [HT{ physical: 1000 logical: 2 }]) -> 2"#,
        r#"SubDocKey(DocKey([], ["c"]), [HT{ physical: 1000 logical: 1 w: 1 }]) -> 1"#,
        "1",
    ]);
    check(&s, &expected);
}

// ---------------------------------------------------------------------------------------------
// TTL, table TTL, expire/persist (format.md §5, §7, §8, §10; shell.md rule 7)
// ---------------------------------------------------------------------------------------------

/// A value written at T with TTL d is visible up to T + d and expired after it
/// (`(read − write) > ttl`, or equal with a larger read logical).
#[test]
fn value_ttl() {
    let s = script(&[
        r#"explain write @1000 set DocKey([], ["t"]) = "v" ttl 10ms"#,
        r#"write @1000 set DocKey([], ["t"]) = "v" ttl 10ms"#,
        r#"write @1000 set DocKey([], ["s"]) = "v" ttl 10s"#,
        "dump",
        r#"get DocKey([], ["t"]) @11000"#,
        r#"get DocKey([], ["t"]) @11000+1"#,
        r#"get DocKey([], ["t"]) @11001"#,
        r#"get DocKey([], ["s"]) @10001000"#,
        r#"get DocKey([], ["s"]) @10001001"#,
    ]);
    let expected = lines(&[
        // `t` + signed fast varint 10 (`8a`).
        r"1. PutCF('St\x00\x00!', 't\x8aSv')",
        r#"SubDocKey(DocKey([], ["s"]), [HT{ physical: 1000 }]) -> "v"; ttl: 10.000s"#,
        r#"SubDocKey(DocKey([], ["t"]), [HT{ physical: 1000 }]) -> "v"; ttl: 0.010s"#,
        r#""v""#,
        "not found",
        "not found",
        r#""v""#,
        "not found",
    ]);
    check(&s, &expected);
}

/// Compacting past the expiry drops an expired value in a full compaction (§7 step 8).
#[test]
fn expired_values_are_collected() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["t"]) = "v" ttl 10ms"#,
        r#"write @1000 set DocKey([], ["k"]) = "v""#,
        "compact @11000",
        "dump",
        "compact @11001",
        "dump",
    ]);
    let expected = lines(&[
        r#"SubDocKey(DocKey([], ["k"]), [HT{ physical: 1000 }]) -> "v""#,
        r#"SubDocKey(DocKey([], ["t"]), [HT{ physical: 1000 }]) -> "v"; ttl: 0.010s"#,
        r#"SubDocKey(DocKey([], ["k"]), [HT{ physical: 1000 }]) -> "v""#,
    ]);
    check(&s, &expected);
}

#[test]
fn table_ttl() {
    let s = script(&[
        "set option table_ttl 5ms",
        r#"write @1000 set DocKey([], ["u"]) = 1"#,
        r#"write @1000 set DocKey([], ["r"]) = 1 ttl 0ms"#,
        r#"get DocKey([], ["u"]) @6000"#,
        r#"get DocKey([], ["u"]) @6001"#,
        // TTL 0 (kResetTtl) never expires and ignores the table TTL.
        r#"get DocKey([], ["r"]) @1000000"#,
        "set option table_ttl none",
        r#"get DocKey([], ["u"]) @6001"#,
        "set option table_ttl 1s",
        r#"get DocKey([], ["u"]) @1001000"#,
        r#"get DocKey([], ["u"]) @1001001"#,
        "dump",
    ]);
    let expected = lines(&[
        "1",
        "not found",
        "1",
        "1",
        "1",
        "not found",
        r#"SubDocKey(DocKey([], ["r"]), [HT{ physical: 1000 }]) -> 1; ttl: 0.000s"#,
        r#"SubDocKey(DocKey([], ["u"]), [HT{ physical: 1000 }]) -> 1"#,
    ]);
    check(&s, &expected);
}

/// The table TTL also applies in compactions (§7 step 8): expired at cutoff 6001, not at 6000.
#[test]
fn table_ttl_in_compactions() {
    let s = script(&[
        "set option table_ttl 5ms",
        r#"write @1000 set DocKey([], ["t"]) = 1"#,
        r#"write @1000 set DocKey([], ["k"]) = 1 ttl 0ms"#,
        "compact @6000",
        "dump",
        "compact @6001",
        "dump",
    ]);
    let k = r#"SubDocKey(DocKey([], ["k"]), [HT{ physical: 1000 }]) -> 1; ttl: 0.000s"#;
    let t = r#"SubDocKey(DocKey([], ["t"]), [HT{ physical: 1000 }]) -> 1"#;
    check(&s, &lines(&[k, t, k]));
}

/// `expire` writes a TTL merge record (merge flags 1) whose payload has the type of the
/// value; reads see the value expire at merge time + TTL; `persist` removes the TTL.
#[test]
fn expire_and_persist() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["e"]) = "v""#,
        r#"write @1000 set DocKey([], ["p"]) = "v""#,
        r#"write @1000 set SubDocKey(DocKey([], ["o"]), ["f"]) = 1"#,
        r#"explain write @2000 expire DocKey([], ["e"]) ttl 5ms"#,
        r#"write @2000 expire DocKey([], ["e"]) ttl 5ms"#,
        r#"write @2000 expire DocKey([], ["p"]) ttl 5ms"#,
        r#"explain write @3000 persist DocKey([], ["p"])"#,
        r#"write @3000 persist DocKey([], ["p"])"#,
        "dump",
        r#"get DocKey([], ["e"]) @7000"#,
        r#"get DocKey([], ["e"]) @7001"#,
        r#"get DocKey([], ["p"]) @7001"#,
    ]);
    let expected = lines(&[
        // `k` + unsigned varint 1, `t` + signed varint 5 (`85`), payload `S` (empty string).
        r"1. PutCF('Se\x00\x00!', 'k\x01t\x85S')",
        r"1. PutCF('Sp\x00\x00!', 'k\x01S')",
        r#"SubDocKey(DocKey([], ["e"]), [HT{ physical: 2000 }]) -> ""; merge flags: 1; ttl: 0.005s"#,
        r#"SubDocKey(DocKey([], ["e"]), [HT{ physical: 1000 }]) -> "v""#,
        r#"SubDocKey(DocKey([], ["o"]), ["f"; HT{ physical: 1000 }]) -> 1"#,
        r#"SubDocKey(DocKey([], ["p"]), [HT{ physical: 3000 }]) -> ""; merge flags: 1"#,
        r#"SubDocKey(DocKey([], ["p"]), [HT{ physical: 2000 }]) -> ""; merge flags: 1; ttl: 0.005s"#,
        r#"SubDocKey(DocKey([], ["p"]), [HT{ physical: 1000 }]) -> "v""#,
        r#""v""#,
        "not found",
        r#""v""#,
    ]);
    check(&s, &expected);
}

/// Expire of an object root: the payload is `{`.
#[test]
fn expire_object() {
    let s = script(&[
        r#"write @1000 insert DocKey([], ["o"]) = {"f": 1}"#,
        r#"explain write @2000 expire DocKey([], ["o"]) ttl 1s"#,
    ]);
    // TTL 1000 ms as a signed fast varint: 2 bytes `110vvvvv v*8` = c3 e8.
    check(&s, &lines(&[r"1. PutCF('So\x00\x00!', 'k\x01t\xc3\xe8{')"]));
}

#[test]
fn expire_of_missing_path_is_an_error() {
    let (out, failed) = run_script(
        &Shell::in_memory().expect("shell"),
        r#"write @1000 expire DocKey([], ["e"]) ttl 5ms"#,
    );
    assert!(failed);
    assert!(
        out.starts_with("error: ") && out.lines().count() == 1,
        "{out}"
    );
}

/// Compacting at a cutoff past an `expire` changes no read at or after the cutoff, whether
/// the merge record is folded or kept; after the expiry, a full compaction drops both.
#[test]
fn compaction_keeps_expire_reads() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["e"]) = "v""#,
        r#"write @2000 expire DocKey([], ["e"]) ttl 5ms"#,
        "compact @3000",
        r#"get DocKey([], ["e"]) @3000"#,
        r#"get DocKey([], ["e"]) @7000"#,
        r#"get DocKey([], ["e"]) @7001"#,
        "compact @7001",
        "dump",
    ]);
    check(&s, &lines(&[r#""v""#, r#""v""#, "not found"]));
}

/// §7 step 7, as this project does it: YugabyteDB folds a merge record at or below the cutoff
/// into the older value (`ttl += merge_ht − value_ht`), but TTLs are whole milliseconds, so a
/// fold can move the expiry by up to 1 ms. docdb keeps the newest merge record instead (older
/// ones are dropped) and reads after the cutoff stay exactly the same: expiry at 2000 + 5 ms.
#[test]
fn compaction_keeps_the_newest_expire_record() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["e"]) = "v""#,
        r#"write @1500 expire DocKey([], ["e"]) ttl 50ms"#,
        r#"write @2000 expire DocKey([], ["e"]) ttl 5ms"#,
        "compact @3000",
        "dump",
        r#"get DocKey([], ["e"]) @7000"#,
        r#"get DocKey([], ["e"]) @7001"#,
    ]);
    let expected = lines(&[
        r#"SubDocKey(DocKey([], ["e"]), [HT{ physical: 2000 }]) -> ""; merge flags: 1; ttl: 0.005s"#,
        r#"SubDocKey(DocKey([], ["e"]), [HT{ physical: 1000 }]) -> "v""#,
        r#""v""#,
        "not found",
    ]);
    check(&s, &expected);
}

// ---------------------------------------------------------------------------------------------
// Scans
// ---------------------------------------------------------------------------------------------

#[test]
fn scans() {
    let s = script(&[
        r#"write @1000 set DocKey([], ["a"]) = 1; set DocKey([], ["b"]) = 2; set SubDocKey(DocKey([], ["c"]), ["x"]) = 3; set DocKey([], ["d"]) = 4"#,
        r#"write @2000 delete DocKey([], ["b"])"#,
        "scan @1000",
        "scan @1000 limit 2",
        "scan @1000 reverse",
        "scan @1000 limit 1 reverse",
        "scan @1000 reverse limit 3",
        r#"scan from DocKey([], ["b"]) to DocKey([], ["d"]) @1000"#,
        r#"scan from DocKey([], ["b"]) @1000 reverse"#,
        r#"scan to DocKey([], ["c"]) @1000"#,
        "scan @999",
        "scan @2000",
    ]);
    let a = r#"DocKey([], ["a"]) -> 1"#;
    let b = r#"DocKey([], ["b"]) -> 2"#;
    let c = r#"DocKey([], ["c"]) -> {"x": 3}"#;
    let d = r#"DocKey([], ["d"]) -> 4"#;
    let expected = lines(&[
        a, b, c, d, a, b, d, c, b, a, d, d, c, b, b, c, d, c, b, a, b, a, c, d,
    ]);
    check(&s, &expected);
}

/// Hashed and colocated keys: `auto` computes the Jenkins hash (format.md §13:
/// `yb_hash("a") = 44389` = 0xad65), and keys sort by prefix, hash, then range.
#[test]
fn hashed_and_prefixed_keys() {
    let s = script(&[
        r#"write @1000 set DocKey(auto, ["a"], ["r"]) = 1"#,
        r#"write @1000 set DocKey(ColocationId=16385, [], ["a"]) = 2"#,
        r#"explain write @1000 set DocKey(ColocationId=16385, [], ["a"]) = 2"#,
        "dump",
        r#"get DocKey(0xad65, ["a"], ["r"]) @1000"#,
        "scan @1000",
    ]);
    let expected = lines(&[
        // `0` + 16385 as 4 bytes BE (00 00 40 01; 0x40 is `@`).
        r"1. PutCF('0\x00\x00@\x01Sa\x00\x00!', 'I\x00\x00\x00\x00\x00\x00\x00\x02')",
        r#"SubDocKey(DocKey(ColocationId=16385, [], ["a"]), [HT{ physical: 1000 }]) -> 2"#,
        r#"SubDocKey(DocKey(0xad65, ["a"], ["r"]), [HT{ physical: 1000 }]) -> 1"#,
        "1",
        r#"DocKey(ColocationId=16385, [], ["a"]) -> 2"#,
        r#"DocKey(0xad65, ["a"], ["r"]) -> 1"#,
    ]);
    check(&s, &expected);
}

// ---------------------------------------------------------------------------------------------
// Output rules (shell.md rule 8, errors)
// ---------------------------------------------------------------------------------------------

#[test]
fn silent_commands() {
    check(
        &script(&[
            "# a comment",
            "",
            "   ",
            "dump",
            r#"explain write @1000 delete DocKey([], ["x"]) # trailing comment"#,
            "set option init_markers required",
            r#"explain write @1000 delete DocKey([], ["x"])"#,
            "set option init_markers optional",
            "set option table_ttl 10ms",
            "set option table_ttl none",
            r#"write @1000 set DocKey([], ["x"]) = 1"#,
            "flush",
            "compact @500",
        ]),
        &lines(&[r"1. PutCF('Sx\x00\x00!', 'X')"]),
    );
}

#[test]
fn failing_commands_print_one_line_and_the_rest_runs() {
    let input = script(&[
        "bogus",
        r#"write @1000 set DocKey([], ["a"]) = 1"#,
        r#"get DocKey([], ["a"]) 1000"#,
        r#"get DocKey([], ["a"]) @1000"#,
    ]);
    let (out, failed) = run_script(&Shell::in_memory().expect("shell"), &input);
    assert!(failed);
    let out: Vec<&str> = out.lines().collect();
    assert_eq!(out.len(), 3, "{out:?}");
    assert!(
        out[0].starts_with("error: column 1: expected a command"),
        "{}",
        out[0]
    );
    assert!(
        out[1].starts_with("error: column 23: expected `@`"),
        "{}",
        out[1]
    );
    assert_eq!(out[2], "1");

    let (out, failed) = run_script(&Shell::in_memory().expect("shell"), "dump\n# nothing\n");
    assert_eq!((out.as_str(), failed), ("", false));
}

#[test]
fn run_lines_with_prompt() {
    let shell = Shell::in_memory().expect("shell");
    let input = "write @1000 set DocKey([], [\"a\"]) = 1\nget DocKey([], [\"a\"]) @1000\n";
    let mut out = Vec::new();
    let failed =
        docdb_shell::run_lines(&shell, input.as_bytes(), &mut out, Some("docdb> ")).expect("io");
    assert!(!failed);
    assert_eq!(
        String::from_utf8(out).expect("utf8"),
        "docdb> docdb> 1\ndocdb> \n"
    );
    let mut out = Vec::new();
    let failed =
        docdb_shell::run_lines(&shell, "get x\r\n".as_bytes(), &mut out, None).expect("io");
    assert!(failed);
    assert!(
        String::from_utf8(out)
            .expect("utf8")
            .starts_with("error: column 5: expected a path")
    );
}

/// `docdb shell FILE`: exit status 1 exactly when a command of the file failed; the data
/// directory keeps what was written.
#[test]
fn shell_command_with_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("script.docdb");
    let data = dir.path().join("data");
    std::fs::write(&file, "write @1000 set DocKey([], [\"a\"]) = 1\n").expect("write");
    assert_eq!(
        docdb_shell::shell_command(Some(&data), Some(&file)).ok(),
        Some(false)
    );
    std::fs::write(&file, "bogus\nget DocKey([], [\"a\"]) @1000\n").expect("write");
    assert_eq!(
        docdb_shell::shell_command(Some(&data), Some(&file)).ok(),
        Some(true)
    );
    let shell = open_shell(Some(&data)).expect("reopen");
    assert_eq!(
        run_script(&shell, "get DocKey([], [\"a\"]) @1000"),
        ("1\n".to_string(), false)
    );
    assert!(docdb_shell::shell_command(None, Some(&dir.path().join("missing"))).is_err());
}
