//! The seed documents' examples (shared/seeds/) replayed through the shell, with the dumps
//! their text describes, written out by hand from format.md's rules: every version a line, in
//! key order (`J` system columns before `K` columns, newer versions first), write ids in batch
//! order. Each script runs on the in-memory engine and on RocksDB.

mod common;

use common::{check, lines};
use docdb_shell::{Shell, run_script};

/// persistence v1.2, "Encoding Documents": DocumentKey1 written entirely at T10 is stored as
/// 5 pairs (init markers at the document and at SubKey1). Deleting SubKey1 and compacting
/// reclaims its subtree.
#[test]
fn document_key1_five_pairs() {
    let doc = r#"DocKey([], ["DocumentKey1"])"#;
    let script = format!(
        "set option init_markers required\n\
         write @10 set SubDocKey({doc}, [\"SubKey1\", \"SubKey2\"]) = \"Value1\"; \
         set SubDocKey({doc}, [\"SubKey1\", \"SubKey3\"]) = \"Value2\"; \
         set SubDocKey({doc}, [\"SubKey4\"]) = \"Value3\"\n\
         dump\n\
         get {doc} @10\n\
         write @20 delete SubDocKey({doc}, [\"SubKey1\"])\n\
         get {doc} @20\n\
         compact @20\n\
         dump\n"
    );
    let expected = lines(&[
        format!("SubDocKey({doc}, [HT{{ physical: 10 }}]) -> {{}}"),
        format!("SubDocKey({doc}, [\"SubKey1\"; HT{{ physical: 10 w: 1 }}]) -> {{}}"),
        format!(
            "SubDocKey({doc}, [\"SubKey1\", \"SubKey2\"; HT{{ physical: 10 w: 2 }}]) -> \"Value1\""
        ),
        format!(
            "SubDocKey({doc}, [\"SubKey1\", \"SubKey3\"; HT{{ physical: 10 w: 3 }}]) -> \"Value2\""
        ),
        format!("SubDocKey({doc}, [\"SubKey4\"; HT{{ physical: 10 w: 4 }}]) -> \"Value3\""),
        "{".into(),
        "  \"SubKey1\": {".into(),
        "    \"SubKey2\": \"Value1\",".into(),
        "    \"SubKey3\": \"Value2\"".into(),
        "  },".into(),
        "  \"SubKey4\": \"Value3\"".into(),
        "}".into(),
        "{".into(),
        "  \"SubKey4\": \"Value3\"".into(),
        "}".into(),
        format!("SubDocKey({doc}, [HT{{ physical: 10 }}]) -> {{}}"),
        format!("SubDocKey({doc}, [\"SubKey4\"; HT{{ physical: 10 w: 4 }}]) -> \"Value3\""),
    ]);
    check(&script, &expected);
}

/// The 16-bit hash of one string hash column, as `DocKey(auto, ...)` computes it.
fn hash_of(text: &str) -> u16 {
    dockv::hash::hash_columns(&[text.as_bytes()])
}

/// persistence v1.2, "YCQL - Collection Type Example": the `msgs` table as document operations
/// (liveness = SystemColumnId(0), msg = ColumnId(12), msg_props = ColumnId(13); a map INSERT
/// writes its init marker first, which the docs' table omits). T4 deletes msg_props of row 10,
/// compaction reclaims the three map entries; T5 deletes row 10 and compaction reclaims it.
#[test]
fn msgs_table() {
    let h = hash_of("user1");
    let row = |id: i32| format!("DocKey(0x{h:04x}, [\"user1\"], [{id}])");
    let key = |id: i32| format!("DocKey(auto, [\"user1\"], [int32({id})])");
    let (r10, r20, k10, k20) = (row(10), row(20), key(10), key(20));
    let script = format!(
        "write @1000 set SubDocKey({k10}, [SystemColumnId(0)]) = null; set SubDocKey({k10}, [ColumnId(12)]) = \"msg1\"; \
         insert SubDocKey({k10}, [ColumnId(13)]) = {{\"from\": \"a@b.com\", \"subject\": \"hello\"}}\n\
         write @2000 extend SubDocKey({k10}, [ColumnId(13)]) = {{\"read_status\": \"true\"}}\n\
         write @3000 set SubDocKey({k20}, [SystemColumnId(0)]) = null; set SubDocKey({k20}, [ColumnId(12)]) = \"msg2\"; \
         insert SubDocKey({k20}, [ColumnId(13)]) = {{\"from\": \"c@d.com\", \"subject\": \"bar\"}}\n\
         get SubDocKey({k10}, [ColumnId(13)]) @3000\n\
         write @4000 delete SubDocKey({k10}, [ColumnId(13)])\n\
         dump\n\
         compact @4000\n\
         dump\n\
         write @5000 delete {k10}\n\
         get {k10} @5000\n\
         compact @5000\n\
         dump\n"
    );
    let row20 = [
        format!("SubDocKey({r20}, [SystemColumnId(0); HT{{ physical: 3000 }}]) -> null"),
        format!("SubDocKey({r20}, [ColumnId(12); HT{{ physical: 3000 w: 1 }}]) -> \"msg2\""),
        format!("SubDocKey({r20}, [ColumnId(13); HT{{ physical: 3000 w: 2 }}]) -> {{}}"),
        format!(
            "SubDocKey({r20}, [ColumnId(13), \"from\"; HT{{ physical: 3000 w: 3 }}]) -> \"c@d.com\""
        ),
        format!(
            "SubDocKey({r20}, [ColumnId(13), \"subject\"; HT{{ physical: 3000 w: 4 }}]) -> \"bar\""
        ),
    ];
    let row10_cols = [
        format!("SubDocKey({r10}, [SystemColumnId(0); HT{{ physical: 1000 }}]) -> null"),
        format!("SubDocKey({r10}, [ColumnId(12); HT{{ physical: 1000 w: 1 }}]) -> \"msg1\""),
    ];
    let mut expected: Vec<String> = vec![
        "{".into(),
        "  \"from\": \"a@b.com\",".into(),
        "  \"read_status\": \"true\",".into(),
        "  \"subject\": \"hello\"".into(),
        "}".into(),
    ];
    // After T4: the map's tombstone sorts before its older versions.
    expected.extend(row10_cols.iter().cloned());
    expected.extend([
        format!("SubDocKey({r10}, [ColumnId(13); HT{{ physical: 4000 }}]) -> DEL"),
        format!("SubDocKey({r10}, [ColumnId(13); HT{{ physical: 1000 w: 2 }}]) -> {{}}"),
        format!("SubDocKey({r10}, [ColumnId(13), \"from\"; HT{{ physical: 1000 w: 3 }}]) -> \"a@b.com\""),
        format!("SubDocKey({r10}, [ColumnId(13), \"read_status\"; HT{{ physical: 2000 }}]) -> \"true\""),
        format!("SubDocKey({r10}, [ColumnId(13), \"subject\"; HT{{ physical: 1000 w: 4 }}]) -> \"hello\""),
    ]);
    expected.extend(row20.iter().cloned());
    // Compaction at T4 reclaims the deleted map (and its tombstone).
    expected.extend(row10_cols.iter().cloned());
    expected.extend(row20.iter().cloned());
    // T5: the row is gone for reads; compaction at T5 reclaims it.
    expected.push("not found".into());
    expected.extend(row20.iter().cloned());
    check(&script, &lines(&expected));
}

/// persistence v1.2, "YCQL - Time-To-Live (TTL) Example": the `page_views` row inserted with
/// TTL 86400 s (liveness and views carry it), then `category` updated with TTL 3600 s. The
/// category expires first, the row after a day; a compaction after that reclaims everything.
#[test]
fn page_views_row_and_column_ttl() {
    let h = hash_of("abc.com");
    let doc = format!("DocKey(0x{h:04x}, [\"abc.com\"], [])");
    let key = "DocKey(auto, [\"abc.com\"], [])";
    let hour = 3_600_000_000u64; // µs
    let day = 24 * hour;
    let script = format!(
        "write @1000 set SubDocKey({key}, [SystemColumnId(0)]) = null ttl 86400s; set SubDocKey({key}, [ColumnId(11)]) = int32(10) ttl 86400s\n\
         write @2000 set SubDocKey({key}, [ColumnId(12)]) = \"news\" ttl 3600s\n\
         dump\n\
         get {key} @{at_news}\n\
         get {key} @{after_news}\n\
         get {key} @{after_day}\n\
         compact @{after_day}\n\
         dump\n",
        at_news = 2000 + hour,
        after_news = 2000 + hour + 1,
        after_day = 1000 + day + 1,
    );
    let expected = lines(&[
        format!(
            "SubDocKey({doc}, [SystemColumnId(0); HT{{ physical: 1000 }}]) -> null; ttl: 86400.000s"
        ),
        format!(
            "SubDocKey({doc}, [ColumnId(11); HT{{ physical: 1000 w: 1 }}]) -> 10; ttl: 86400.000s"
        ),
        format!(
            "SubDocKey({doc}, [ColumnId(12); HT{{ physical: 2000 }}]) -> \"news\"; ttl: 3600.000s"
        ),
        "{".into(),
        "  SystemColumnId(0): null,".into(),
        "  ColumnId(11): 10,".into(),
        "  ColumnId(12): \"news\"".into(),
        "}".into(),
        "{".into(),
        "  SystemColumnId(0): null,".into(),
        "  ColumnId(11): 10".into(),
        "}".into(),
        "not found".into(),
    ]);
    check(&script, &expected);
}

/// `stats` (an extension of shell.md): after vectors.md D1's writes and the compaction at
/// 5000, GC has seen all 10 records and dropped exactly two (`subkey_c`@3000, hidden by the
/// tombstone at 5000, and that tombstone itself); a scan at 7000 over the 2 documents steps over
/// the older versions of `subkey_b` and `subkey_c`.
#[test]
fn stats_after_d1_compaction() {
    let script = r#"set option init_markers required
write @1000 set DocKey([], ["my_key_where_value_is_a_string"]) = "value1"
write @2000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_a"]) = "value_a"
write @3000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"]) = "value_bc"
write @3500 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_d"]) = "value_bd"
write @5000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"])
write @6000 delete SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b"])
write @7000 set SubDocKey(DocKey([], ["mydockey", 123456]), ["subkey_b", "subkey_c"]) = "value_bc_prime"
compact @5000
stats
"#;
    let (out, failed) = run_script(&Shell::in_memory().expect("shell"), script);
    assert!(!failed, "{out}");
    assert_eq!(
        out.lines().next(),
        Some(
            "gc: keys_seen=10 overwritten_dropped=1 tombstones_dropped=1 expired_dropped=0 \
             expired_to_tombstone=0 merges_dropped=0 deleted_column_dropped=0 undecodable_kept=0"
        )
    );
}
