//! Compaction with the table layer's rules (format.md §7, §9): rows repacked into one packed
//! row at the latest schema version, per-table TTLs and dropped columns under colocation.
//! Expected dumps follow format.md §9: the new packed row sits at the newest record it folds,
//! hides everything older, and YCQL keeps each column's write time as a user timestamp.

mod common;

use std::sync::Arc;

use common::{Harness, NONE, at, hash_of, insert, lines, t};
use docdb_table::{
    AlterTable, ColumnSpec, DataType, Datum, Select, Selector, Table, TableSpec, Update,
    WriteOptions,
};
use dockv::value::Ttl;

fn set(h: &Harness, table: &Table, micros: u64, key: &str, column: &str, value: Datum) {
    let mut b = h.db.batch(at(micros));
    b.update(
        table,
        &[("k", t(key))],
        &[(column, Update::Set(value))],
        &NONE,
    )
    .expect("update");
    b.commit().expect("commit");
}

/// Every row, all columns, at `micros`.
fn scan(h: &Harness, table: &Table, micros: u64) -> Vec<Vec<Datum>> {
    h.rows(table, &Select::all(at(micros)))
}

fn doc(key: &str) -> String {
    format!("DocKey(0x{:04x}, [\"{key}\"], [])", hash_of(key))
}

/// Compacts at `cutoff` and checks that reads at `reads` (all at or after the cutoff) give
/// the same rows as before. Returns the number of rows repacked.
fn compact_keeping_reads(h: &Harness, table: &Table, cutoff: u64, reads: &[u64]) -> u64 {
    let before: Vec<_> = reads.iter().map(|&r| scan(h, table, r)).collect();
    let stats = h.db.docdb().compact(at(cutoff)).expect("compact");
    let after: Vec<_> = reads.iter().map(|&r| scan(h, table, r)).collect();
    assert_eq!(before, after, "reads changed by the compaction at {cutoff}");
    stats.rows_repacked
}

fn kab(name: &str, ysql: bool, a: DataType) -> TableSpec {
    let spec = TableSpec::new(name)
        .hash_key("k", DataType::Text)
        .column("a", a)
        .column("b", DataType::Text);
    if ysql { spec.ysql() } else { spec }
}

/// A YSQL table `t (k text, a bigint, b text)` holding row `('k1', a, 'x')` inserted at 1000.
fn ysql_row(a: i64) -> (Harness, Arc<Table>) {
    let h = Harness::new();
    let spec = kab("t", true, DataType::BigInt);
    let tb = h.db.create_table("ks", &spec).expect("create");
    let row = [("k", t("k1")), ("a", Datum::BigInt(a)), ("b", t("x"))];
    insert(&h, &tb, 1000, &row, NONE);
    (h, tb)
}

/// YSQL (V2): later column updates and a NULL fold into one packed row at the newest folded
/// time; what is newer than the cutoff stays a cell.
#[test]
fn ysql_updates_fold_into_one_packed_row() {
    let (h, tb) = ysql_row(1);
    set(&h, &tb, 2000, "k1", "a", Datum::BigInt(2));
    set(&h, &tb, 3000, "k1", "b", Datum::Null);
    set(&h, &tb, 5000, "k1", "a", Datum::BigInt(5));
    let d = doc("k1");
    assert_eq!(
        compact_keeping_reads(&h, &tb, 4000, &[4000, 4500, 5000, 9000]),
        1
    );
    assert_eq!(
        h.db.dump().expect("dump"),
        lines(&[
            format!("SubDocKey({d}, [HT{{ physical: 3000 }}]) -> {{ 1: 2 2: NULL }}"),
            format!("SubDocKey({d}, [ColumnId(1); HT{{ physical: 5000 }}]) -> 5"),
        ])
    );
    assert_eq!(
        scan(&h, &tb, 4000),
        [vec![t("k1"), Datum::BigInt(2), Datum::Null]]
    );
    // A second compaction has nothing left to fold.
    assert_eq!(compact_keeping_reads(&h, &tb, 4000, &[4000, 5000]), 0);
}

/// YCQL (V1): the unchanged column keeps its WRITETIME as a user timestamp.
#[test]
fn ycql_repack_keeps_write_times() {
    let h = Harness::new();
    let tb =
        h.db.create_table("ks", &kab("c", false, DataType::Int))
            .expect("create");
    insert(
        &h,
        &tb,
        1000,
        &[("k", t("k1")), ("a", Datum::Int(1)), ("b", t("x"))],
        NONE,
    );
    set(&h, &tb, 2000, "k1", "a", Datum::Int(2));
    let write_times = |micros: u64| {
        let select = Select::row(&tb, vec![t("k1")], at(micros)).columns(vec![
            Selector::Column("a".into()),
            Selector::WriteTime("a".into()),
            Selector::WriteTime("b".into()),
        ]);
        h.rows(&tb, &select)
    };
    let expected = vec![vec![
        Datum::Int(2),
        Datum::BigInt(2000),
        Datum::BigInt(1000),
    ]];
    assert_eq!(write_times(3000), expected);
    assert_eq!(compact_keeping_reads(&h, &tb, 3000, &[3000]), 1);
    assert_eq!(write_times(3000), expected);
    let d = doc("k1");
    assert_eq!(
        h.db.dump().expect("dump"),
        lines(&[format!(
            "SubDocKey({d}, [HT{{ physical: 2000 }}]) -> {{ 1: 2 2: \"x\"; timestamp: 1000 }}"
        )])
    );
}

/// Repacking writes the latest schema version: a dropped column's value disappears from the
/// packed row, its cells go, and an added column reads NULL.
#[test]
fn repack_moves_rows_to_the_latest_schema() {
    let (h, tb) = ysql_row(1);
    set(&h, &tb, 1500, "k1", "b", t("y"));
    h.db.alter_table("ks", "t", AlterTable::DropColumn("b".into()))
        .expect("drop");
    let tb =
        h.db.alter_table(
            "ks",
            "t",
            AlterTable::AddColumn(ColumnSpec::regular("c", DataType::Text)),
        )
        .expect("add");
    assert_eq!(compact_keeping_reads(&h, &tb, 2000, &[2000]), 1);
    let d = doc("k1");
    // The dropped column's cell at 1500 goes (the table's dropped columns), so there is
    // nothing to fold: the row is rewritten at its own time at schema version 2 (columns
    // a = 1 and c = 3).
    assert_eq!(
        h.db.dump().expect("dump"),
        lines(&[format!(
            "SubDocKey({d}, [HT{{ physical: 1000 }}]) -> {{ 1: 1 3: NULL }}"
        )])
    );
    assert_eq!(
        scan(&h, &tb, 2000),
        [vec![t("k1"), Datum::BigInt(1), Datum::Null]]
    );
}

/// A row at an old schema version with nothing to fold is rewritten in place.
#[test]
fn old_schema_rows_are_rewritten_in_place() {
    let (h, _) = ysql_row(7);
    let tb =
        h.db.alter_table("ks", "t", AlterTable::DropColumn("b".into()))
            .expect("drop");
    assert_eq!(compact_keeping_reads(&h, &tb, 2000, &[2000]), 1);
    let d = doc("k1");
    assert_eq!(
        h.db.dump().expect("dump"),
        lines(&[format!(
            "SubDocKey({d}, [HT{{ physical: 1000 }}]) -> {{ 1: 7 }}"
        )])
    );
    let key = docdb_table::write::row_doc_key(&tb, &[("k", t("k1"))]).expect("key");
    let value = h.raw_value(&key.encode());
    // `|`, schema version 1, then the V2 body.
    assert_eq!(&value[..2], b"|\x01");
}

/// An INSERT that was not packed (liveness and cells) becomes one packed row; a row made only
/// by UPDATE has no liveness and stays as it is.
#[test]
fn unpacked_inserts_are_packed() {
    let h = Harness::new();
    let tb =
        h.db.create_table("ks", &kab("c", false, DataType::Int))
            .expect("create");
    // Not every column given: a YCQL INSERT then writes liveness and cells.
    insert(&h, &tb, 1000, &[("k", t("k1")), ("a", Datum::Int(1))], NONE);
    set(&h, &tb, 1000, "k2", "a", Datum::Int(3));
    assert_eq!(compact_keeping_reads(&h, &tb, 2000, &[2000]), 1);
    let (d1, d2) = (doc("k1"), doc("k2"));
    let mut expected = vec![
        format!("SubDocKey({d1}, [HT{{ physical: 1000 w: 1 }}]) -> {{ 1: 1 2: NULL }}"),
        format!("SubDocKey({d2}, [ColumnId(1); HT{{ physical: 1000 }}]) -> 3"),
    ];
    if hash_of("k2") < hash_of("k1") {
        expected.swap(0, 1);
    }
    assert_eq!(h.db.dump().expect("dump"), lines(&expected));
}

/// Collection elements cannot be packed: columns written after them stay cells (a new packed
/// row would hide the elements), and reads are unchanged.
#[test]
fn collection_elements_limit_folding() {
    let h = Harness::new();
    let spec = TableSpec::new("m")
        .hash_key("k", DataType::Text)
        .column("a", DataType::Int)
        .column("m", DataType::map(DataType::Text, DataType::Text));
    let tb = h.db.create_table("ks", &spec).expect("create");
    let map = Datum::Map(vec![(t("x"), t("1"))]);
    insert(
        &h,
        &tb,
        1000,
        &[("k", t("k1")), ("a", Datum::Int(1)), ("m", map)],
        NONE,
    );
    set(&h, &tb, 2000, "k1", "a", Datum::Int(2));
    let before = h.db.dump().expect("dump");
    assert_eq!(compact_keeping_reads(&h, &tb, 3000, &[3000]), 0);
    assert_eq!(h.db.dump().expect("dump"), before);
}

/// Rows with a TTL are not repacked: moving a value to a new time would move its expiry.
#[test]
fn rows_with_ttls_are_left_alone() {
    let h = Harness::new();
    let tb =
        h.db.create_table("ks", &kab("c", false, DataType::Int))
            .expect("create");
    let row = [("k", t("k1")), ("a", Datum::Int(1)), ("b", t("x"))];
    insert(&h, &tb, 1000, &row, WriteOptions::ttl_secs(1000));
    set(&h, &tb, 2000, "k1", "a", Datum::Int(2));
    let before = h.db.dump().expect("dump");
    assert_eq!(
        compact_keeping_reads(&h, &tb, 3000, &[3000, 999_000_000]),
        0
    );
    assert_eq!(h.db.dump().expect("dump"), before);
}

/// Tables with packing off are never repacked.
#[test]
fn unpacked_tables_stay_unpacked() {
    let h = Harness::new();
    let spec = kab("u", true, DataType::BigInt).with_options(|o| o.packed = false);
    let tb = h.db.create_table("ks", &spec).expect("create");
    insert(
        &h,
        &tb,
        1000,
        &[("k", t("k1")), ("a", Datum::BigInt(1)), ("b", t("x"))],
        NONE,
    );
    set(&h, &tb, 2000, "k1", "a", Datum::BigInt(2));
    assert_eq!(compact_keeping_reads(&h, &tb, 3000, &[3000]), 0);
    assert_eq!(h.db.dump().expect("dump").lines().count(), 3);
}

fn colocated(name: &str, ttl: Option<Ttl>) -> TableSpec {
    kab(name, false, DataType::Int).with_options(|o| {
        o.colocated = true;
        o.packed = false;
        o.default_ttl = ttl;
    })
}

fn keys_of(h: &Harness, table: &Arc<Table>) -> usize {
    let prefix = format!(
        "ColocationId={}",
        table.options().colocation_id.unwrap_or(table.id())
    );
    h.db.dump()
        .expect("dump")
        .lines()
        .filter(|l| l.contains(&prefix))
        .count()
}

/// Under colocation each table's default TTL and dropped columns apply to its own rows only.
#[test]
fn colocated_tables_have_their_own_rules() {
    let h = Harness::new();
    let short =
        h.db.create_table("ks", &colocated("short", Some(Ttl::from_secs(1))))
            .expect("create");
    let long =
        h.db.create_table("ks", &colocated("long", None))
            .expect("create");
    for table in [&short, &long] {
        let row = [("k", t("k1")), ("a", Datum::Int(1)), ("b", t("x"))];
        insert(&h, table, 1000, &row, NONE);
    }
    // Column b (id 2) dropped from `long` only: `short` keeps its ColumnId(2) cells.
    let long =
        h.db.alter_table("ks", "long", AlterTable::DropColumn("b".into()))
            .expect("drop");
    assert_eq!((keys_of(&h, &short), keys_of(&h, &long)), (3, 3));
    h.compact(1000 + 2_000_000);
    // `short`'s rows expired with its table TTL and are gone; `long` lost column b.
    assert_eq!((keys_of(&h, &short), keys_of(&h, &long)), (0, 2));
    assert_eq!(scan(&h, &long, 5_000_000), [vec![t("k1"), Datum::Int(1)]]);
    assert!(scan(&h, &short, 5_000_000).is_empty());
}

/// A colocated table's TRUNCATE tombstone hides its older rows from the GC too: a compaction
/// past it reclaims them (and the tombstone), keeps rows written after it and other tables'.
#[test]
fn truncated_rows_are_reclaimed() {
    let h = Harness::new();
    let gone =
        h.db.create_table("ks", &colocated("gone", None))
            .expect("create");
    let kept =
        h.db.create_table("ks", &colocated("kept", None))
            .expect("create");
    for (key, micros) in [("k1", 1000), ("k2", 1500)] {
        let row = [("k", t(key)), ("a", Datum::Int(1)), ("b", t("x"))];
        insert(&h, &gone, micros, &row, NONE);
        insert(&h, &kept, micros, &row, NONE);
    }
    h.db.truncate_table("ks", "gone", at(2000))
        .expect("truncate");
    insert(
        &h,
        &gone,
        3000,
        &[("k", t("k3")), ("a", Datum::Int(3))],
        NONE,
    );
    let stats = h.db.docdb().compact(at(4000)).expect("compact");
    assert!(stats.overwritten_dropped >= 6, "{stats:?}");
    // k3's liveness and column a are all that is left of `gone`; `kept` keeps its 6 records.
    assert_eq!((keys_of(&h, &gone), keys_of(&h, &kept)), (2, 6));
    assert_eq!(
        scan(&h, &gone, 4000),
        [vec![t("k3"), Datum::Int(3), Datum::Null]]
    );
    assert_eq!(scan(&h, &kept, 4000).len(), 2);
}
