//! Row semantics (format.md §8, §9, §11): liveness, NULLs, TTLs, user timestamps,
//! collections, jsonb, schema changes, packed and unpacked rows mixed, past reads.

mod common;

use common::{Harness, NONE, at, insert, t};
use docdb_table::{
    AlterTable, ColumnSpec, DataType, Datum, Select, Selector, Table, TableSpec, Update,
    WriteOptions,
};
use dockv::value::Ttl;
use serde_json::json;

fn update(
    h: &Harness,
    table: &Table,
    micros: u64,
    key: i32,
    updates: &[(&str, Update)],
    opts: WriteOptions,
) {
    let mut b = h.db.batch(at(micros));
    b.update(table, &[("k", Datum::Int(key))], updates, &opts)
        .expect("update");
    b.commit().expect("commit");
}

fn delete_columns(h: &Harness, table: &Table, micros: u64, key: i32, columns: &[&str]) {
    let mut b = h.db.batch(at(micros));
    b.delete_columns(table, &[("k", Datum::Int(key))], columns, &NONE)
        .expect("delete");
    b.commit().expect("commit");
}

fn delete_row(h: &Harness, table: &Table, micros: u64, key: i32) {
    let mut b = h.db.batch(at(micros));
    b.delete_row(table, &[("k", Datum::Int(key))], &NONE)
        .expect("delete");
    b.commit().expect("commit");
}

/// The row `k = key` (all visible columns) at `micros`, `None` if it does not exist.
fn get(h: &Harness, table: &Table, key: i32, micros: u64) -> Option<Vec<Datum>> {
    let rows = h.rows(
        table,
        &Select::row(table, vec![Datum::Int(key)], at(micros)),
    );
    assert!(rows.len() <= 1);
    rows.into_iter().next()
}

/// `k int` hash key, `a int`, `b text`, with packing on or off.
fn kab(h: &Harness, name: &str, packed: bool) -> std::sync::Arc<Table> {
    let spec = TableSpec::new(name)
        .hash_key("k", DataType::Int)
        .column("a", DataType::Int)
        .column("b", DataType::Text)
        .with_options(|o| {
            o.packed = packed;
            o.colocated = true;
        });
    h.db.create_table("ks", &spec).expect("create")
}

fn row(k: i32, a: Option<i32>, b: Option<&str>) -> Vec<Datum> {
    vec![
        Datum::Int(k),
        a.map_or(Datum::Null, Datum::Int),
        b.map_or(Datum::Null, t),
    ]
}

/// An INSERTed row survives with every column NULL (its liveness column); an UPDATEd one
/// vanishes when its columns are deleted. Packed rows imply liveness.
#[test]
fn insert_vs_update_liveness() {
    for packed in [false, true] {
        let h = Harness::new();
        let tb = kab(&h, "t", packed);
        let full = [("k", Datum::Int(1)), ("a", Datum::Int(5)), ("b", t("x"))];
        insert(&h, &tb, 1000, &full, NONE);
        update(&h, &tb, 1000, 2, &[("a", Update::Set(Datum::Int(6)))], NONE);
        assert_eq!(get(&h, &tb, 1, 1000), Some(row(1, Some(5), Some("x"))));
        assert_eq!(get(&h, &tb, 2, 1000), Some(row(2, Some(6), None)));
        delete_columns(&h, &tb, 2000, 1, &["a", "b"]);
        delete_columns(&h, &tb, 2000, 2, &["a"]);
        assert_eq!(
            get(&h, &tb, 1, 2000),
            Some(row(1, None, None)),
            "packed {packed}"
        );
        assert_eq!(get(&h, &tb, 2, 2000), None);
        // The past is unchanged.
        assert_eq!(get(&h, &tb, 2, 1999), Some(row(2, Some(6), None)));
        // Deleting the row removes even the liveness column.
        delete_row(&h, &tb, 3000, 1);
        assert_eq!(get(&h, &tb, 1, 3000), None);
        // A later INSERT brings it back with only what it writes.
        insert(&h, &tb, 4000, &[("k", Datum::Int(1)), ("b", t("y"))], NONE);
        assert_eq!(get(&h, &tb, 1, 4000), Some(row(1, None, Some("y"))));
    }
}

/// A NULL in INSERT or UPDATE is a tombstone: it deletes the older value.
#[test]
fn null_writes_are_tombstones() {
    for packed in [false, true] {
        let h = Harness::new();
        let tb = kab(&h, "t", packed);
        insert(
            &h,
            &tb,
            1000,
            &[("k", Datum::Int(1)), ("a", Datum::Int(5)), ("b", t("x"))],
            NONE,
        );
        insert(
            &h,
            &tb,
            2000,
            &[("k", Datum::Int(1)), ("a", Datum::Null), ("b", t("y"))],
            NONE,
        );
        assert_eq!(get(&h, &tb, 1, 2000), Some(row(1, None, Some("y"))));
        update(&h, &tb, 3000, 1, &[("b", Update::Set(Datum::Null))], NONE);
        assert_eq!(get(&h, &tb, 1, 3000), Some(row(1, None, None)));
        assert_eq!(get(&h, &tb, 1, 1500), Some(row(1, Some(5), Some("x"))));
    }
}

/// Row TTL (INSERT USING TTL) vs a column TTL (UPDATE USING TTL): the row lives on through
/// a column that outlives its liveness column, then vanishes.
#[test]
fn column_versus_row_ttl() {
    let s = 1_000_000u64;
    for packed in [false, true] {
        let h = Harness::new();
        let tb = kab(&h, "t", packed);
        insert(
            &h,
            &tb,
            s,
            &[("k", Datum::Int(1)), ("a", Datum::Int(5)), ("b", t("x"))],
            WriteOptions::ttl_secs(10),
        );
        update(
            &h,
            &tb,
            2 * s,
            1,
            &[("b", Update::Set(t("y")))],
            WriteOptions::ttl_secs(100),
        );
        assert_eq!(get(&h, &tb, 1, 11 * s), Some(row(1, Some(5), Some("y"))));
        assert_eq!(
            get(&h, &tb, 1, 11 * s + 1),
            Some(row(1, None, Some("y"))),
            "packed {packed}"
        );
        let ttl = Select::row(&tb, vec![Datum::Int(1)], at(50 * s))
            .columns(vec![Selector::Ttl("a".into()), Selector::Ttl("b".into())]);
        assert_eq!(h.rows(&tb, &ttl), [vec![Datum::Null, Datum::BigInt(52)]]);
        assert_eq!(get(&h, &tb, 1, 102 * s + 1), None);
        // A column without a TTL written after a TTL'd INSERT never expires.
        update(
            &h,
            &tb,
            3 * s,
            2,
            &[("a", Update::Set(Datum::Int(1)))],
            NONE,
        );
        assert_eq!(get(&h, &tb, 2, 1000 * s), Some(row(2, Some(1), None)));
    }
}

/// The table's default TTL applies to values without their own; `USING TTL 0` opts out.
#[test]
fn table_default_ttl() {
    let s = 1_000_000u64;
    let h = Harness::new();
    let spec = TableSpec::new("t")
        .hash_key("k", DataType::Int)
        .column("a", DataType::Int)
        .with_options(|o| o.default_ttl = Some(Ttl::from_secs(5)));
    let tb = h.db.create_table("ks", &spec).expect("create");
    insert(
        &h,
        &tb,
        s,
        &[("k", Datum::Int(1)), ("a", Datum::Int(1))],
        NONE,
    );
    let forever = WriteOptions {
        ttl: Some(Ttl::RESET),
        timestamp: None,
    };
    insert(
        &h,
        &tb,
        s,
        &[("k", Datum::Int(2)), ("a", Datum::Int(2))],
        forever,
    );
    let ttl =
        Select::row(&tb, vec![Datum::Int(1)], at(3 * s)).columns(vec![Selector::Ttl("a".into())]);
    assert_eq!(h.rows(&tb, &ttl), [vec![Datum::BigInt(3)]]);
    let at_six = Select::all(at(6 * s + 1)).columns(vec![Selector::Column("k".into())]);
    assert_eq!(h.rows(&tb, &at_six), [vec![Datum::Int(2)]]);
}

/// USING TIMESTAMP: the user timestamp orders writes and is what WRITETIME reports; a write
/// with an older timestamp than the stored one is ignored.
#[test]
fn user_timestamps() {
    for packed in [false, true] {
        let h = Harness::new();
        let tb = kab(&h, "t", packed);
        let full = |a: i32| [("k", Datum::Int(1)), ("a", Datum::Int(a)), ("b", t("x"))];
        insert(&h, &tb, 1000, &full(1), WriteOptions::timestamp(500));
        insert(&h, &tb, 2000, &full(2), WriteOptions::timestamp(400));
        update(&h, &tb, 3000, 1, &[("b", Update::Set(t("y")))], NONE);
        let select = Select::row(&tb, vec![Datum::Int(1)], at(3000)).columns(vec![
            Selector::Column("a".into()),
            Selector::WriteTime("a".into()),
            Selector::WriteTime("b".into()),
        ]);
        assert_eq!(
            h.rows(&tb, &select),
            [vec![Datum::Int(1), Datum::BigInt(500), Datum::BigInt(3000)]],
            "packed {packed}"
        );
        let mut b = h.db.batch(at(4000));
        let add = Update::Set(Datum::Int(9));
        b.update(
            &tb,
            &[("k", Datum::Int(1))],
            &[("a", add)],
            &WriteOptions::timestamp(600),
        )
        .expect("update");
        b.commit().expect("commit");
        assert_eq!(
            h.rows(
                &tb,
                &select.clone().columns(vec![Selector::Column("a".into())])
            )
            .len(),
            1
        );
        let a = Select::row(&tb, vec![Datum::Int(1)], at(4000))
            .columns(vec![Selector::Column("a".into())]);
        assert_eq!(h.rows(&tb, &a), [vec![Datum::Int(9)]]);
    }
}

fn collections_table(h: &Harness) -> std::sync::Arc<Table> {
    let spec = TableSpec::new("c")
        .hash_key("k", DataType::Int)
        .column("m", DataType::map(DataType::Text, DataType::Int))
        .column("s", DataType::set(DataType::Int))
        .column("l", DataType::list(DataType::Text))
        .column("f", DataType::frozen(DataType::set(DataType::Int)));
    h.db.create_table("ks", &spec).expect("create")
}

fn m(entries: &[(&str, i32)]) -> Datum {
    Datum::Map(
        entries
            .iter()
            .map(|(k, v)| (t(k), Datum::Int(*v)))
            .collect(),
    )
}

fn ints(items: &[i32]) -> Vec<Datum> {
    items.iter().map(|i| Datum::Int(*i)).collect()
}

fn texts(items: &[&str]) -> Vec<Datum> {
    items.iter().map(|i| t(i)).collect()
}

/// Every collection operation of format.md §11.
#[test]
fn collections() {
    let h = Harness::new();
    let c = collections_table(&h);
    let values = [
        ("k", Datum::Int(1)),
        ("m", m(&[("b", 2), ("a", 1)])),
        ("s", Datum::Set(ints(&[3, 1]))),
        ("l", Datum::List(texts(&["x", "y"]))),
        ("f", Datum::Set(ints(&[2, 1]))),
    ];
    insert(&h, &c, 1000, &values, NONE);
    let expect = |micros: u64, want: Vec<Datum>| {
        let mut full = vec![Datum::Int(1)];
        full.extend(want);
        assert_eq!(get(&h, &c, 1, micros), Some(full), "at {micros}");
    };
    expect(
        1000,
        vec![
            m(&[("a", 1), ("b", 2)]),
            Datum::Set(ints(&[1, 3])),
            Datum::List(texts(&["x", "y"])),
            Datum::Set(ints(&[1, 2])),
        ],
    );
    update(
        &h,
        &c,
        2000,
        1,
        &[
            (
                "m",
                Update::MapPut(vec![(t("c"), Datum::Int(3)), (t("a"), Datum::Int(10))]),
            ),
            ("s", Update::SetAdd(ints(&[2]))),
            ("l", Update::Append(texts(&["z"]))),
        ],
        NONE,
    );
    update(
        &h,
        &c,
        3000,
        1,
        &[
            ("m", Update::Remove(texts(&["b"]))),
            ("s", Update::Remove(ints(&[3]))),
            ("l", Update::Prepend(texts(&["v", "w"]))),
        ],
        NONE,
    );
    expect(
        3000,
        vec![
            m(&[("a", 10), ("c", 3)]),
            Datum::Set(ints(&[1, 2])),
            Datum::List(texts(&["v", "w", "x", "y", "z"])),
            Datum::Set(ints(&[1, 2])),
        ],
    );
    // l[1] = 'W', DELETE l[3] (among the live elements), l = l - ['z'].
    update(&h, &c, 4000, 1, &[("l", Update::ListSet(1, t("W")))], NONE);
    update(
        &h,
        &c,
        5000,
        1,
        &[("l", Update::ListSet(3, Datum::Null))],
        NONE,
    );
    update(
        &h,
        &c,
        6000,
        1,
        &[("l", Update::ListRemove(texts(&["z"])))],
        NONE,
    );
    expect(
        6000,
        vec![
            m(&[("a", 10), ("c", 3)]),
            Datum::Set(ints(&[1, 2])),
            Datum::List(texts(&["v", "W", "x"])),
            Datum::Set(ints(&[1, 2])),
        ],
    );
    let mut b = h.db.batch(at(7000));
    let bad = Update::ListSet(5, t("nope"));
    assert!(
        b.update(&c, &[("k", Datum::Int(1))], &[("l", bad)], &NONE)
            .is_err()
    );
    // Replacing writes an init marker that hides every older element.
    update(
        &h,
        &c,
        7000,
        1,
        &[
            ("m", Update::Set(m(&[("q", 1)]))),
            ("l", Update::Set(Datum::List(texts(&["only"])))),
            ("s", Update::Set(Datum::Set(vec![]))),
        ],
        NONE,
    );
    expect(
        7000,
        vec![
            m(&[("q", 1)]),
            Datum::Null,
            Datum::List(texts(&["only"])),
            Datum::Set(ints(&[1, 2])),
        ],
    );
    // Past reads see each step.
    expect(
        2000,
        vec![
            m(&[("a", 10), ("b", 2), ("c", 3)]),
            Datum::Set(ints(&[1, 2, 3])),
            Datum::List(texts(&["x", "y", "z"])),
            Datum::Set(ints(&[1, 2])),
        ],
    );
    // Partial collection updates cannot carry a user timestamp.
    let mut b = h.db.batch(at(8000));
    let add = Update::SetAdd(ints(&[5]));
    assert!(
        b.update(
            &c,
            &[("k", Datum::Int(1))],
            &[("s", add)],
            &WriteOptions::timestamp(1)
        )
        .is_err()
    );
}

/// Frozen collections as keys (both orders) and values.
#[test]
fn frozen_keys() {
    let h = Harness::new();
    let ty = DataType::frozen(DataType::list(DataType::Int));
    let spec = TableSpec::new("f")
        .hash_key("h", ty.clone())
        .range_key_ordered("r", ty.clone(), docdb_table::RangeOrder::DESC)
        .column("v", DataType::Int);
    let f = h.db.create_table("ks", &spec).expect("create");
    for (r, v) in [(vec![1, 2], 1), (vec![1, 3], 2), (vec![0], 3)] {
        let values = [
            ("h", Datum::List(ints(&[7]))),
            ("r", Datum::List(ints(&r))),
            ("v", Datum::Int(v)),
        ];
        insert(&h, &f, 1000, &values, NONE);
    }
    let select = Select::all(at(1000))
        .partition(vec![Datum::List(ints(&[7]))])
        .columns(vec![Selector::Column("v".into())]);
    // Descending: [1, 3] > [1, 2] > [0].
    assert_eq!(h.rows(&f, &select), [ints(&[2]), ints(&[1]), ints(&[3])]);
}

/// jsonb: store, read, replace a nested member, remove a member, `||`.
#[test]
fn jsonb_operations() {
    let h = Harness::new();
    let spec = TableSpec::new("j")
        .hash_key("k", DataType::Int)
        .column("j", DataType::Jsonb);
    let j = h.db.create_table("ks", &spec).expect("create");
    let doc = json!({"a": {"b": 1, "c": [1, "two"]}, "d": "x"});
    insert(
        &h,
        &j,
        1000,
        &[("k", Datum::Int(1)), ("j", Datum::Jsonb(doc.clone()))],
        NONE,
    );
    assert_eq!(
        get(&h, &j, 1, 1000),
        Some(vec![Datum::Int(1), Datum::Jsonb(doc)])
    );
    update(
        &h,
        &j,
        2000,
        1,
        &[(
            "j",
            Update::JsonSet(vec!["a".into(), "b".into()], json!({"deep": true})),
        )],
        NONE,
    );
    update(
        &h,
        &j,
        3000,
        1,
        &[("j", Update::JsonRemove("d".into()))],
        NONE,
    );
    update(
        &h,
        &j,
        4000,
        1,
        &[("j", Update::JsonConcat(json!({"e": null, "a": 5})))],
        NONE,
    );
    assert_eq!(
        get(&h, &j, 1, 3000),
        Some(vec![
            Datum::Int(1),
            Datum::Jsonb(json!({"a": {"b": {"deep": true}, "c": [1, "two"]}}))
        ])
    );
    assert_eq!(
        get(&h, &j, 1, 4000),
        Some(vec![
            Datum::Int(1),
            Datum::Jsonb(json!({"a": 5, "e": null}))
        ])
    );
    update(
        &h,
        &j,
        5000,
        1,
        &[("j", Update::Set(Datum::Jsonb(json!([1, 2]))))],
        NONE,
    );
    assert_eq!(
        get(&h, &j, 1, 5000),
        Some(vec![Datum::Int(1), Datum::Jsonb(json!([1, 2]))])
    );
}

/// ADD and DROP COLUMN: old rows read NULL for a new column; a dropped column's data is
/// ignored, also after a column of the same name is added back (it gets a new id).
#[test]
fn schema_changes_with_old_and_new_rows() {
    for packed in [false, true] {
        let h = Harness::new();
        let tb = kab(&h, "t", packed);
        insert(
            &h,
            &tb,
            1000,
            &[("k", Datum::Int(1)), ("a", Datum::Int(1)), ("b", t("old"))],
            NONE,
        );
        let add = AlterTable::AddColumn(ColumnSpec::regular("c", DataType::BigInt));
        let tb = h.db.alter_table("ks", "t", add).expect("add");
        insert(
            &h,
            &tb,
            2000,
            &[
                ("k", Datum::Int(2)),
                ("a", Datum::Int(2)),
                ("b", t("new")),
                ("c", Datum::BigInt(7)),
            ],
            NONE,
        );
        assert_eq!(
            get(&h, &tb, 1, 2000),
            Some(vec![Datum::Int(1), Datum::Int(1), t("old"), Datum::Null])
        );
        assert_eq!(
            get(&h, &tb, 2, 2000),
            Some(vec![
                Datum::Int(2),
                Datum::Int(2),
                t("new"),
                Datum::BigInt(7)
            ])
        );
        let tb =
            h.db.alter_table("ks", "t", AlterTable::DropColumn("b".into()))
                .expect("drop");
        assert_eq!(
            get(&h, &tb, 1, 2000),
            Some(vec![Datum::Int(1), Datum::Int(1), Datum::Null])
        );
        let add_b = AlterTable::AddColumn(ColumnSpec::regular("b", DataType::Text));
        let tb = h.db.alter_table("ks", "t", add_b).expect("re-add");
        assert_eq!(tb.column("b").expect("b").id, 4);
        assert_eq!(tb.schema().version, 3);
        assert_eq!(
            get(&h, &tb, 2, 2000),
            Some(vec![
                Datum::Int(2),
                Datum::Int(2),
                Datum::BigInt(7),
                Datum::Null
            ])
        );
        assert_eq!(get(&h, &tb, 3, 2000), None);
    }
}

/// A row that only a dropped column kept alive is gone, at every read time.
#[test]
fn dropped_column_rows_vanish() {
    let h = Harness::new();
    let tb = kab(&h, "t", true);
    update(&h, &tb, 1000, 3, &[("b", Update::Set(t("only")))], NONE);
    assert_eq!(get(&h, &tb, 3, 1000), Some(row(3, None, Some("only"))));
    let tb =
        h.db.alter_table("ks", "t", AlterTable::DropColumn("b".into()))
            .expect("drop");
    assert_eq!(get(&h, &tb, 3, 1000), None);
}

/// Packed and unpacked rows in one table: a packed INSERT, a partial (unpacked) INSERT,
/// column updates and deletes over a packed row, a row tombstone hiding it, a value over the
/// size limit written as its own cell.
#[test]
fn packed_and_unpacked_rows_mixed() {
    let h = Harness::new();
    let spec = TableSpec::new("p")
        .hash_key("k", DataType::Int)
        .column("a", DataType::Int)
        .column("b", DataType::Text)
        .column("l", DataType::list(DataType::Int))
        .with_options(|o| o.packed_size_limit = 64);
    let p = h.db.create_table("ks", &spec).expect("create");
    let big = "x".repeat(100);
    insert(
        &h,
        &p,
        1000,
        &[
            ("k", Datum::Int(1)),
            ("a", Datum::Int(1)),
            ("b", t("s")),
            ("l", Datum::List(ints(&[1]))),
        ],
        NONE,
    );
    insert(
        &h,
        &p,
        1000,
        &[("k", Datum::Int(2)), ("a", Datum::Int(2))],
        NONE,
    );
    insert(
        &h,
        &p,
        1000,
        &[
            ("k", Datum::Int(3)),
            ("a", Datum::Int(3)),
            ("b", t(&big)),
            ("l", Datum::Null),
        ],
        NONE,
    );
    let dump = h.dump();
    let d1 = p.doc_key(&[Datum::Int(1)]).expect("key").to_string();
    let d2 = p.doc_key(&[Datum::Int(2)]).expect("key").to_string();
    let d3 = p.doc_key(&[Datum::Int(3)]).expect("key").to_string();
    assert!(
        dump.contains(&format!(
            "SubDocKey({d1}, [HT{{ physical: 1000 }}]) -> <PACKED ROW>"
        )),
        "{dump}"
    );
    assert!(
        dump.contains(&format!(
            "SubDocKey({d1}, [ColumnId(3); HT{{ physical: 1000 w: 1 }}]) -> []"
        )),
        "{dump}"
    );
    assert!(
        dump.contains(&format!(
            "SubDocKey({d2}, [SystemColumnId(0); HT{{ physical: 1000 }}]) -> null"
        )),
        "{dump}"
    );
    assert!(
        dump.contains(&format!(
            "SubDocKey({d3}, [ColumnId(2); HT{{ physical: 1000 w: 1 }}]) -> \"{big}\""
        )),
        "{dump}"
    );
    let tdump = h.db.dump().expect("dump");
    assert!(
        tdump.contains(&format!(
            "SubDocKey({d3}, [HT{{ physical: 1000 }}]) -> {{ 1: 3 2: NULL }}"
        )),
        "{tdump}"
    );
    assert_eq!(
        get(&h, &p, 1, 1000),
        Some(vec![
            Datum::Int(1),
            Datum::Int(1),
            t("s"),
            Datum::List(ints(&[1]))
        ])
    );
    assert_eq!(
        get(&h, &p, 2, 1000),
        Some(vec![Datum::Int(2), Datum::Int(2), Datum::Null, Datum::Null])
    );
    assert_eq!(
        get(&h, &p, 3, 1000),
        Some(vec![Datum::Int(3), Datum::Int(3), t(&big), Datum::Null])
    );
    // Column cells newer than the packed row override it, NULL included.
    update(&h, &p, 2000, 1, &[("a", Update::Set(Datum::Int(10)))], NONE);
    delete_columns(&h, &p, 3000, 1, &["b"]);
    assert_eq!(
        get(&h, &p, 1, 3000),
        Some(vec![
            Datum::Int(1),
            Datum::Int(10),
            Datum::Null,
            Datum::List(ints(&[1]))
        ])
    );
    // A full INSERT is a packed row (plus the list's cells) hiding every older cell.
    let full = [
        ("k", Datum::Int(1)),
        ("a", Datum::Int(4)),
        ("b", t("n")),
        ("l", Datum::List(ints(&[2]))),
    ];
    insert(&h, &p, 4000, &full, NONE);
    assert_eq!(
        get(&h, &p, 1, 4000),
        Some(vec![
            Datum::Int(1),
            Datum::Int(4),
            t("n"),
            Datum::List(ints(&[2]))
        ])
    );
    // An INSERT leaving a column out is not packed: that column keeps its value.
    insert(&h, &p, 4500, &[("k", Datum::Int(1)), ("b", t("m"))], NONE);
    assert_eq!(
        get(&h, &p, 1, 4500),
        Some(vec![
            Datum::Int(1),
            Datum::Int(4),
            t("m"),
            Datum::List(ints(&[2]))
        ])
    );
    // A row tombstone hides the packed row; the past still reads it.
    delete_row(&h, &p, 5000, 1);
    assert_eq!(get(&h, &p, 1, 5000), None);
    assert_eq!(
        get(&h, &p, 1, 4999).map(|r| r[1].clone()),
        Some(Datum::Int(4))
    );
    h.compact(5000);
    assert_eq!(get(&h, &p, 1, 5000), None);
    assert_eq!(
        get(&h, &p, 3, 5000),
        Some(vec![Datum::Int(3), Datum::Int(3), t(&big), Datum::Null])
    );
}

/// YSQL differences: INSERT of an existing key fails, UPDATE of a missing row does nothing,
/// TTLs are not checked on reads, a table without a primary key gets a `ybrowid`.
#[test]
fn ysql_semantics() {
    let h = Harness::new();
    let spec = TableSpec::new("y")
        .ysql()
        .hash_key("k", DataType::Int)
        .column("a", DataType::Int)
        .with_options(|o| o.colocated = true);
    let y = h.db.create_table("ks", &spec).expect("create");
    // YSQL ignores TTLs: the row stays (the read at 10 s below).
    let row = [("k", Datum::Int(1)), ("a", Datum::Int(1))];
    insert(&h, &y, 1000, &row, WriteOptions::ttl_secs(1));
    let mut b = h.db.batch(at(2000));
    assert!(matches!(
        b.insert(&y, &[("k", Datum::Int(1))], &NONE),
        Err(docdb_table::Error::AlreadyExists(_))
    ));
    update(&h, &y, 2000, 2, &[("a", Update::Set(Datum::Int(2)))], NONE);
    assert_eq!(get(&h, &y, 2, 2000), None);
    assert_eq!(
        get(&h, &y, 1, 10_000_000),
        Some(vec![Datum::Int(1), Datum::Int(1)])
    );

    let spec = TableSpec::new("nokey").ysql().column("v", DataType::Text);
    let nk = h.db.create_table("ks", &spec).expect("create");
    for v in ["a", "b"] {
        insert(&h, &nk, 3000, &[("v", t(v))], NONE);
    }
    let mut rows = h.rows(&nk, &Select::all(at(3000)));
    rows.sort_by_key(|r| r[0].to_string());
    assert_eq!(rows, [vec![t("a")], vec![t("b")]]);
    assert_eq!(h.page(&nk, &Select::all(at(3000))).columns, ["v"]);
}

/// YCQL static columns: one value per partition, joined to every row of it.
#[test]
fn static_columns() {
    let h = Harness::new();
    let spec = TableSpec::new("s")
        .hash_key("h", DataType::Text)
        .range_key("r", DataType::Int)
        .static_column("st", DataType::Text)
        .column("v", DataType::Int);
    let s = h.db.create_table("ks", &spec).expect("create");
    for r in 1..=2 {
        let values = [
            ("h", t("p")),
            ("r", Datum::Int(r)),
            ("st", t("first")),
            ("v", Datum::Int(r)),
        ];
        insert(&h, &s, 1000, &values, NONE);
    }
    let mut b = h.db.batch(at(2000));
    b.update(
        &s,
        &[("h", t("p"))],
        &[("st", Update::Set(t("second")))],
        &NONE,
    )
    .expect("static update");
    b.commit().expect("commit");
    let rows = h.rows(&s, &Select::all(at(2000)).partition(vec![t("p")]));
    assert_eq!(
        rows,
        [
            vec![t("p"), Datum::Int(1), t("second"), Datum::Int(1)],
            vec![t("p"), Datum::Int(2), t("second"), Datum::Int(2)],
        ]
    );
    let rev = h.rows(&s, &Select::all(at(1000)).reversed());
    assert_eq!(
        rev[0],
        vec![t("p"), Datum::Int(2), t("first"), Datum::Int(2)]
    );
}

/// A column selected more than once (and with its WRITETIME) gives its value every time.
#[test]
fn repeated_selectors() {
    let h = Harness::new();
    let tb = kab(&h, "t", true);
    insert(
        &h,
        &tb,
        1000,
        &[("k", Datum::Int(1)), ("a", Datum::Int(5)), ("b", t("x"))],
        NONE,
    );
    let select = Select::row(&tb, vec![Datum::Int(1)], at(2000)).columns(vec![
        Selector::Column("b".into()),
        Selector::WriteTime("b".into()),
        Selector::Column("b".into()),
        Selector::Column("a".into()),
    ]);
    assert_eq!(
        h.rows(&tb, &select),
        [vec![t("x"), Datum::BigInt(1000), t("x"), Datum::Int(5)]]
    );
}
