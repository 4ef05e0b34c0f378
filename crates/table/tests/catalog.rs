//! The catalog survives a reopen; DDL errors; TRUNCATE and DROP for colocated tables (table
//! tombstone) and a table owning its key space (row tombstones).

mod common;

use common::{Harness, at, t};
use docdb_table::{
    AlterTable, ColumnSpec, DataType, Datum, Error, Select, TableSpec, WriteOptions,
};

fn spec(name: &str, colocated: bool) -> TableSpec {
    TableSpec::new(name)
        .hash_key("k", DataType::Int)
        .column("v", DataType::Text)
        .with_options(|o| o.colocated = colocated)
}

fn put(h: &Harness, ns: &str, name: &str, micros: u64, k: i32, v: &str) {
    let table = h.db.table(ns, name).expect("table");
    let mut b = h.db.batch(at(micros));
    b.insert(
        &table,
        &[("k", Datum::Int(k)), ("v", t(v))],
        &WriteOptions::default(),
    )
    .expect("insert");
    b.commit().expect("commit");
}

fn count(h: &Harness, ns: &str, name: &str, micros: u64) -> usize {
    let table = h.db.table(ns, name).expect("table");
    h.rows(&table, &Select::all(at(micros))).len()
}

#[test]
fn catalog_survives_reopen() {
    let h = Harness::new();
    h.db.create_namespace("other").expect("namespace");
    h.db.create_table("ks", &spec("a", false)).expect("a");
    h.db.create_table("other", &spec("b", true)).expect("b");
    let add = AlterTable::AddColumn(ColumnSpec::regular("w", DataType::BigInt));
    h.db.alter_table("ks", "a", add).expect("alter");
    put(&h, "ks", "a", 1000, 1, "x");
    put(&h, "other", "b", 1000, 1, "y");
    h.db.create_table("ks", &spec("gone", true)).expect("gone");
    h.db.drop_table("ks", "gone", at(1500)).expect("drop");

    let h = h.reopen();
    assert_eq!(h.db.namespaces(), ["ks", "other"]);
    let a = h.db.table("ks", "a").expect("a");
    assert_eq!(a.schema().version, 1);
    assert_eq!(a.record().versions.len(), 2);
    assert_eq!(a.column("w").expect("w").id, 2);
    assert_eq!(
        h.rows(&a, &Select::all(at(2000))),
        [vec![Datum::Int(1), t("x"), Datum::Null]]
    );
    assert_eq!(count(&h, "other", "b", 2000), 1);
    assert!(matches!(h.db.table("ks", "gone"), Err(Error::NotFound(_))));
    // Ids are not reused after a reopen: the dropped table's id stays taken.
    let c = h.db.create_table("ks", &spec("c", true)).expect("c");
    assert_eq!(c.id(), 4);
}

#[test]
fn ddl_errors() {
    let h = Harness::new();
    h.db.create_table("ks", &spec("a", false)).expect("a");
    assert!(matches!(
        h.db.create_table("ks", &spec("a", true)),
        Err(Error::AlreadyExists(_))
    ));
    assert!(matches!(
        h.db.create_table("nope", &spec("x", true)),
        Err(Error::NotFound(_))
    ));
    // One table owns the un-prefixed key space.
    assert!(matches!(
        h.db.create_table("ks", &spec("b", false)),
        Err(Error::InvalidArgument(_))
    ));
    let same_id = spec("c", true).with_options(|o| o.colocation_id = Some(7));
    h.db.create_table("ks", &same_id).expect("c");
    let clash = spec("d", true).with_options(|o| o.colocation_id = Some(7));
    assert!(matches!(
        h.db.create_table("ks", &clash),
        Err(Error::AlreadyExists(_))
    ));
    assert!(
        h.db.alter_table("ks", "a", AlterTable::DropColumn("k".into()))
            .is_err()
    );
    assert!(h.db.drop_namespace("ks").is_err());
    let bad = TableSpec::new("e").hash_key("k", DataType::Jsonb);
    assert!(h.db.create_table("ks", &bad).is_err());
}

#[test]
fn truncate_and_drop() {
    let h = Harness::new();
    h.db.create_table("ks", &spec("own", false)).expect("own");
    h.db.create_table("ks", &spec("col", true)).expect("col");
    h.db.create_table("ks", &spec("col2", true)).expect("col2");
    for name in ["own", "col", "col2"] {
        for k in 0..3 {
            put(&h, "ks", name, 1000, k, "v");
        }
    }
    h.db.truncate_table("ks", "own", at(2000))
        .expect("truncate");
    h.db.truncate_table("ks", "col", at(2000))
        .expect("truncate");
    for name in ["own", "col"] {
        assert_eq!(count(&h, "ks", name, 2000), 0, "{name}");
        assert_eq!(count(&h, "ks", name, 1999), 3, "{name}");
    }
    assert_eq!(count(&h, "ks", "col2", 2000), 3);
    // The colocated table's tombstone is one record at `ColocationId !`.
    let col = h.db.table("ks", "col").expect("col");
    let tombstone = format!(
        "SubDocKey(DocKey(ColocationId={}, [], []), [HT{{ physical: 2000 }}]) -> DEL",
        col.id()
    );
    assert!(h.dump().contains(&tombstone), "{}", h.dump());
    // Writes after a truncate are visible.
    put(&h, "ks", "col", 3000, 9, "new");
    put(&h, "ks", "own", 3000, 9, "new");
    assert_eq!(count(&h, "ks", "col", 3000), 1);
    assert_eq!(count(&h, "ks", "own", 3000), 1);
    h.db.drop_table("ks", "own", at(4000)).expect("drop");
    h.db.create_table("ks", &spec("own2", false))
        .expect("the key space is free again");
    assert_eq!(count(&h, "ks", "own2", 4000), 0);
}
