//! Tables on RocksDB (as the server opens it: the GC as compaction filter, DocKey prefix
//! bloom filters, small memtables): every kind of table (YCQL and YSQL, packed and not,
//! colocated and owning the key space, without a primary key) with collections, jsonb, TTLs
//! and ALTERs survives closing and reopening the database; flushes and compactions keep the
//! answers at and after the cutoff while collecting what is below it; TRUNCATE and DROP of
//! colocated tables; and the seeds' `msgs` examples give the in-memory engine's dumps.
//!
//! The randomized model test runs on RocksDB too (tests/model.rs).

mod common;

use std::sync::Arc;

use common::{Harness, at, hash_of, lines, open_rocks, open_tables, t};
use docdb::GcPolicy;
use docdb::clock::{HybridClock, PhysicalClock};
use docdb_table::{
    AlterTable, ColumnSpec, DataType, Datum, Error, Select, Table, TableDb, TableSpec, Update,
    WriteOptions,
};
use dockv::KeyEntryValue;
use engine::{Engine, EngineIterator, IterOptions};
use engine_rocks::RocksEngine;
use serde_json::json;
use tempfile::TempDir;

/// Physical time stands still at 0, so background compactions (cutoff = now − retention)
/// never collect anything; only [`DocDb::compact`] with its explicit cutoff does.
struct Epoch;

impl PhysicalClock for Epoch {
    fn now_micros(&self) -> u64 {
        0
    }
}

/// A table database on RocksDB in a temporary directory.
struct Rocks {
    dir: TempDir,
    db: TableDb<RocksEngine>,
}

impl Rocks {
    /// An empty database with namespace `ks`.
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let policy = GcPolicy::new(Arc::new(HybridClock::new(Box::new(Epoch))));
        let db = open_tables(open_rocks(dir.path(), policy.clone()), &policy);
        db.create_namespace("ks").expect("namespace");
        Rocks { dir, db }
    }

    /// Closes RocksDB and opens the directory again, with a fresh GC policy.
    fn reopen(self) -> Self {
        let Rocks { dir, db } = self;
        drop(db.into_docdb().into_engine());
        let policy = GcPolicy::new(Arc::new(HybridClock::new(Box::new(Epoch))));
        let db = open_tables(open_rocks(dir.path(), policy.clone()), &policy);
        Rocks { dir, db }
    }

    /// Memtables to files, then a full compaction with history cutoff `micros`.
    fn flush_and_compact(&self, micros: u64) {
        self.db.docdb().flush().expect("flush");
        self.db.docdb().compact(at(micros)).expect("compact");
    }
}

fn insert<E: Engine>(db: &TableDb<E>, table: &str, micros: u64, values: &[(&str, Datum)]) {
    insert_with(db, table, micros, values, WriteOptions::default()).expect("insert");
}

fn insert_with<E: Engine>(
    db: &TableDb<E>,
    table: &str,
    micros: u64,
    values: &[(&str, Datum)],
    opts: WriteOptions,
) -> docdb_table::Result<()> {
    let (ns, name) = table.split_once('.').expect("ns.table");
    let table = db.table(ns, name)?;
    let mut b = db.batch(at(micros));
    b.insert(&table, values, &opts)?;
    b.commit()?;
    Ok(())
}

fn update<E: Engine>(
    db: &TableDb<E>,
    table: &str,
    micros: u64,
    key: &[(&str, Datum)],
    updates: &[(&str, Update)],
) {
    let (ns, name) = table.split_once('.').expect("ns.table");
    let table = db.table(ns, name).expect("table");
    let mut b = db.batch(at(micros));
    b.update(&table, key, updates, &WriteOptions::default())
        .expect("update");
    b.commit().expect("commit");
}

fn delete_row<E: Engine>(db: &TableDb<E>, table: &str, micros: u64, key: &[(&str, Datum)]) {
    let (ns, name) = table.split_once('.').expect("ns.table");
    let table = db.table(ns, name).expect("table");
    let mut b = db.batch(at(micros));
    b.delete_row(&table, key, &WriteOptions::default())
        .expect("delete");
    b.commit().expect("commit");
}

/// `SELECT *` at `micros`, rows sorted by their debug text (hash order is not the point).
fn rows<E: Engine>(db: &TableDb<E>, table: &str, micros: u64) -> Vec<Vec<Datum>> {
    let (ns, name) = table.split_once('.').expect("ns.table");
    let table = db.table(ns, name).expect("table");
    let mut rows = db
        .select(&table, &Select::all(at(micros)))
        .expect("select")
        .rows;
    rows.sort_by_key(|r| format!("{r:?}"));
    rows
}

/// The row with full key `key` read by a point lookup at `micros`.
fn row<E: Engine>(db: &TableDb<E>, table: &str, key: Vec<Datum>, micros: u64) -> Vec<Vec<Datum>> {
    let (ns, name) = table.split_once('.').expect("ns.table");
    let table = db.table(ns, name).expect("table");
    db.select(&table, &Select::row(&table, key, at(micros)))
        .expect("select")
        .rows
}

fn sorted(mut rows: Vec<Vec<Datum>>) -> Vec<Vec<Datum>> {
    rows.sort_by_key(|r| format!("{r:?}"));
    rows
}

/// Stored records (every version) whose key starts with `prefix`.
fn records_under<E: Engine>(db: &TableDb<E>, prefix: &[u8]) -> usize {
    let engine = db.docdb().engine();
    let mut iter = engine.iterator(IterOptions::new()).expect("iter");
    iter.seek(prefix);
    let mut n = 0;
    while iter.valid().expect("valid") && iter.key().starts_with(prefix) {
        n += 1;
        iter.next();
    }
    n
}

/// The encoded DocKey of a row.
fn doc_key<E: Engine>(db: &TableDb<E>, table: &str, key: &[Datum]) -> Vec<u8> {
    let (ns, name) = table.split_once('.').expect("ns.table");
    let table = db.table(ns, name).expect("table");
    table.doc_key(key).expect("doc key").encode()
}

/// The stored versions of one column of one row (the path DocKey + `ColumnId(id)`).
fn column_versions<E: Engine>(db: &TableDb<E>, table: &str, key: &[Datum], id: i32) -> usize {
    let mut path = doc_key(db, table, key);
    KeyEntryValue::ColumnId(id).encode_to(&mut path);
    path.push(b'#');
    records_under(db, &path)
}

fn texts(items: &[&str]) -> Datum {
    Datum::Set(items.iter().map(|s| t(s)).collect())
}

fn ints(items: &[i32]) -> Datum {
    Datum::List(items.iter().map(|i| Datum::Int(*i)).collect())
}

fn int(i: i32) -> Datum {
    Datum::Int(i)
}

const NULL: Datum = Datum::Null;

/// The YCQL tables: `ks.events` packed and owning the key space, `ks.events_plain` unpacked
/// and colocated; `(id text, seq int, body text, n int, tags set<text>, hist list<int>,
/// meta jsonb, PRIMARY KEY ((id), seq))`.
const EVENTS: [&str; 2] = ["ks.events", "ks.events_plain"];
/// The YSQL tables: `app.users` packed (V2) and `app.users_plain`, `(uid int PRIMARY KEY,
/// name text, age int, prefs jsonb)`, both colocated.
const USERS: [&str; 2] = ["app.users", "app.users_plain"];
/// When the TTL'd event row expires: written at 1000 µs with a 10 s TTL.
const EXPIRY: u64 = 1000 + 10_000_000;

/// Creates the tables and writes rows in two schema versions of each:
///
/// - events, v0 @1000: (a,1) every column (packed in `events`); (a,2) with a 10 s TTL, its
///   collections NULL; (b,1) only `body` (never packed). @2000: (a,1) n = 5, tags + {z},
///   hist + [3], meta || {j: 2}. @3000: ADD score bigint, DROP body. @4000: (c,1) every
///   column (packed at v2); (b,1) score = 9.
/// - users, v0 @1000: 1 ann 30 {theme: 1}; 2 bob. @2000: 2's age = 41; UPDATE of missing
///   row 3 does nothing; INSERT of 1 again fails. @3000: DROP age, ADD age (a new column),
///   ADD email. @4000: 3 cy 22 c@x; 1's email = a@x.
/// - app.log (no primary key, packed) @1000..1002: three lines.
fn populate<E: Engine>(db: &TableDb<E>) {
    db.create_namespace("app").expect("namespace");
    for (i, name) in EVENTS.iter().enumerate() {
        let spec = TableSpec::new(name.split_once('.').expect("name").1)
            .hash_key("id", DataType::Text)
            .range_key("seq", DataType::Int)
            .column("body", DataType::Text)
            .column("n", DataType::Int)
            .column("tags", DataType::set(DataType::Text))
            .column("hist", DataType::list(DataType::Int))
            .column("meta", DataType::Jsonb)
            .with_options(|o| {
                o.packed = i == 0;
                o.colocated = i == 1;
            });
        db.create_table("ks", &spec).expect("create");
    }
    for (i, name) in USERS.iter().enumerate() {
        let spec = TableSpec::new(name.split_once('.').expect("name").1)
            .ysql()
            .hash_key("uid", DataType::Int)
            .column("name", DataType::Text)
            .column("age", DataType::Int)
            .column("prefs", DataType::Jsonb)
            .with_options(|o| {
                o.packed = i == 0;
                o.colocated = true;
            });
        db.create_table("app", &spec).expect("create");
    }
    let log = TableSpec::new("log")
        .ysql()
        .column("line", DataType::Text)
        .with_options(|o| o.colocated = true);
    db.create_table("app", &log).expect("create log");

    let key = |id: &str, seq: i32| vec![("id", t(id)), ("seq", int(seq))];
    for table in EVENTS {
        let mut a1 = key("a", 1);
        a1.extend([
            ("body", t("hello")),
            ("n", int(1)),
            ("tags", texts(&["x", "y"])),
            ("hist", ints(&[1, 2])),
            ("meta", Datum::Jsonb(json!({"k": 1}))),
        ]);
        insert(db, table, 1000, &a1);
        let mut a2 = key("a", 2);
        a2.extend([
            ("body", t("ttl")),
            ("n", int(2)),
            ("tags", NULL),
            ("hist", NULL),
            ("meta", NULL),
        ]);
        insert_with(db, table, 1000, &a2, WriteOptions::ttl_secs(10)).expect("insert");
        let mut b1 = key("b", 1);
        b1.push(("body", t("partial")));
        insert(db, table, 1000, &b1);
        update(
            db,
            table,
            2000,
            &key("a", 1),
            &[
                ("n", Update::Set(int(5))),
                ("tags", Update::SetAdd(vec![t("z")])),
                ("hist", Update::Append(vec![int(3)])),
                ("meta", Update::JsonConcat(json!({"j": 2}))),
            ],
        );
        let (ns, name) = table.split_once('.').expect("name");
        let add = ColumnSpec::regular("score", DataType::BigInt);
        db.alter_table(ns, name, AlterTable::AddColumn(add))
            .expect("add");
        db.alter_table(ns, name, AlterTable::DropColumn("body".into()))
            .expect("drop");
        let mut c1 = key("c", 1);
        c1.extend([
            ("n", int(3)),
            ("tags", texts(&["q"])),
            ("hist", ints(&[9])),
            ("meta", Datum::Jsonb(json!({"c": 0}))),
            ("score", Datum::BigInt(7)),
        ]);
        insert(db, table, 4000, &c1);
        update(
            db,
            table,
            4000,
            &key("b", 1),
            &[("score", Update::Set(Datum::BigInt(9)))],
        );
    }

    for table in USERS {
        insert(
            db,
            table,
            1000,
            &[
                ("uid", int(1)),
                ("name", t("ann")),
                ("age", int(30)),
                ("prefs", Datum::Jsonb(json!({"theme": 1}))),
            ],
        );
        insert(db, table, 1000, &[("uid", int(2)), ("name", t("bob"))]);
        update(
            db,
            table,
            2000,
            &[("uid", int(2))],
            &[("age", Update::Set(int(41)))],
        );
        update(
            db,
            table,
            2000,
            &[("uid", int(3))],
            &[("name", Update::Set(t("x")))],
        );
        let again = insert_with(
            db,
            table,
            2000,
            &[("uid", int(1)), ("name", t("dup"))],
            WriteOptions::default(),
        );
        assert!(matches!(again, Err(Error::AlreadyExists(_))), "{again:?}");
        let (ns, name) = table.split_once('.').expect("name");
        for change in [
            AlterTable::DropColumn("age".into()),
            AlterTable::AddColumn(ColumnSpec::regular("age", DataType::Int)),
            AlterTable::AddColumn(ColumnSpec::regular("email", DataType::Text)),
        ] {
            db.alter_table(ns, name, change).expect("alter");
        }
        insert(
            db,
            table,
            4000,
            &[
                ("uid", int(3)),
                ("name", t("cy")),
                ("age", int(22)),
                ("email", t("c@x")),
            ],
        );
        update(
            db,
            table,
            4000,
            &[("uid", int(1))],
            &[("email", Update::Set(t("a@x")))],
        );
    }
    for (i, line) in ["l1", "l2", "l3"].iter().enumerate() {
        insert(db, "app.log", 1000 + i as u64, &[("line", t(line))]);
    }
}

/// What every events table holds at `micros` ≥ 4000 (columns id, seq, n, tags, hist, meta,
/// score): `body` was dropped, `score` added.
fn events_at(micros: u64) -> Vec<Vec<Datum>> {
    let mut rows = vec![
        vec![
            t("a"),
            int(1),
            int(5),
            texts(&["x", "y", "z"]),
            ints(&[1, 2, 3]),
            Datum::Jsonb(json!({"j": 2, "k": 1})),
            NULL,
        ],
        vec![t("b"), int(1), NULL, NULL, NULL, NULL, Datum::BigInt(9)],
        vec![
            t("c"),
            int(1),
            int(3),
            texts(&["q"]),
            ints(&[9]),
            Datum::Jsonb(json!({"c": 0})),
            Datum::BigInt(7),
        ],
    ];
    if micros <= EXPIRY {
        rows.push(vec![t("a"), int(2), int(2), NULL, NULL, NULL, NULL]);
    }
    sorted(rows)
}

/// What every users table holds at `micros` ≥ 4000 (columns uid, name, prefs, age, email):
/// the old `age` is gone, the new one is NULL but for the row written after it was added.
fn users_at() -> Vec<Vec<Datum>> {
    sorted(vec![
        vec![
            int(1),
            t("ann"),
            Datum::Jsonb(json!({"theme": 1})),
            NULL,
            t("a@x"),
        ],
        vec![int(2), t("bob"), NULL, NULL, NULL],
        vec![int(3), t("cy"), NULL, int(22), t("c@x")],
    ])
}

/// Every answer `populate` promises at `micros` ≥ 4000, scans and point reads.
fn check_rows<E: Engine>(db: &TableDb<E>, micros: u64, context: &str) {
    for table in EVENTS {
        let want = events_at(micros);
        assert_eq!(
            rows(db, table, micros),
            want,
            "{context}: {table} @{micros}"
        );
        for expected in &want {
            let key = expected[..2].to_vec();
            assert_eq!(
                row(db, table, key, micros),
                std::slice::from_ref(expected),
                "{context}: {table} row @{micros}"
            );
        }
        if micros > EXPIRY {
            assert!(row(db, table, vec![t("a"), int(2)], micros).is_empty());
        }
    }
    for table in USERS {
        assert_eq!(rows(db, table, micros), users_at(), "{context}: {table}");
        assert_eq!(
            row(db, table, vec![int(3)], micros),
            [vec![int(3), t("cy"), NULL, int(22), t("c@x")]],
            "{context}: {table} row 3"
        );
    }
    // ybrowid (the hash key) is hidden from `SELECT *`.
    assert_eq!(
        rows(db, "app.log", micros),
        [vec![t("l1")], vec![t("l2")], vec![t("l3")]],
        "{context}: log"
    );
}

/// The catalog `populate` leaves: namespaces, tables, schema versions, column ids.
fn check_catalog<E: Engine>(db: &TableDb<E>, context: &str) {
    assert_eq!(db.namespaces(), ["app", "ks"], "{context}");
    let mut names: Vec<String> = db
        .tables()
        .iter()
        .map(|t| format!("{}.{}", t.namespace(), t.name()))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "app.log",
            "app.users",
            "app.users_plain",
            "ks.events",
            "ks.events_plain"
        ],
        "{context}"
    );
    let columns = |table: &Table| -> Vec<(String, i32)> {
        table
            .columns()
            .iter()
            .map(|c| (c.name.clone(), c.id))
            .collect()
    };
    let owned = |items: &[(&str, i32)]| -> Vec<(String, i32)> {
        items.iter().map(|(n, i)| (n.to_string(), *i)).collect()
    };
    for table in EVENTS {
        let (ns, name) = table.split_once('.').expect("name");
        let table = db.table(ns, name).expect("table");
        // v0 CREATE, v1 ADD score, v2 DROP body; ids follow schema order, score is new.
        assert_eq!(table.schema().version, 2, "{context}");
        assert_eq!(table.record().versions.len(), 3, "{context}");
        assert_eq!(
            columns(&table),
            owned(&[
                ("id", 0),
                ("seq", 1),
                ("n", 3),
                ("tags", 4),
                ("hist", 5),
                ("meta", 6),
                ("score", 7)
            ]),
            "{context}"
        );
    }
    for table in USERS {
        let (ns, name) = table.split_once('.').expect("name");
        let table = db.table(ns, name).expect("table");
        // DROP age, ADD age (id 4, not 2), ADD email.
        assert_eq!(table.record().versions.len(), 4, "{context}");
        assert_eq!(
            columns(&table),
            owned(&[
                ("uid", 0),
                ("name", 1),
                ("prefs", 3),
                ("age", 4),
                ("email", 5)
            ]),
            "{context}"
        );
    }
}

#[test]
fn tables_rows_and_catalog_survive_reopen() {
    let rocks = Rocks::new();
    populate(&rocks.db);
    check_catalog(&rocks.db, "before reopen");
    // Rows in a past schema version's view are read with the current schema.
    for micros in [4000, 5000, EXPIRY, EXPIRY + 1] {
        check_rows(&rocks.db, micros, "before reopen");
    }
    // Before the ALTERs the rows had their old columns; the past is read with today's schema.
    assert_eq!(
        row(&rocks.db, "ks.events", vec![t("a"), int(1)], 1500),
        [vec![
            t("a"),
            int(1),
            int(1),
            texts(&["x", "y"]),
            ints(&[1, 2]),
            Datum::Jsonb(json!({"k": 1})),
            NULL
        ]]
    );
    let dump = rocks.db.dump().expect("dump");

    let rocks = rocks.reopen();
    check_catalog(&rocks.db, "after reopen");
    for micros in [4000, 5000, EXPIRY, EXPIRY + 1] {
        check_rows(&rocks.db, micros, "after reopen");
    }
    assert_eq!(rocks.db.dump().expect("dump"), dump);

    // The catalog goes on where it stopped: fresh column ids, table ids and row ids.
    let add = AlterTable::AddColumn(ColumnSpec::regular("nick", DataType::Text));
    let users = rocks.db.alter_table("app", "users", add).expect("alter");
    assert_eq!(users.column("nick").expect("nick").id, 6);
    let other = TableSpec::new("other")
        .hash_key("k", DataType::Int)
        .with_options(|o| o.colocated = true);
    let other = rocks.db.create_table("ks", &other).expect("create");
    assert_eq!(other.id(), 6);
    insert(&rocks.db, "app.log", 6000, &[("line", t("l4"))]);
    insert(
        &rocks.db,
        "app.users",
        6000,
        &[("uid", int(4)), ("nick", t("d"))],
    );
    let rocks = rocks.reopen();
    assert_eq!(
        rows(&rocks.db, "app.log", 6000),
        [vec![t("l1")], vec![t("l2")], vec![t("l3")], vec![t("l4")]]
    );
    assert_eq!(
        row(&rocks.db, "app.users", vec![int(4)], 6000),
        [vec![int(4), NULL, NULL, NULL, NULL, t("d")]]
    );
    assert_eq!(
        rocks.db.table("ks", "other").expect("other").id(),
        6,
        "the new table is in the catalog"
    );
}

#[test]
fn compaction_on_rocksdb_keeps_answers_at_and_after_the_cutoff() {
    let rocks = Rocks::new();
    populate(&rocks.db);
    let a1 = [t("a"), int(1)];
    let a2 = [t("a"), int(2)];
    let b1 = [t("b"), int(1)];
    // The unpacked table holds two versions of (a,1).n (column id 3): @1000 and @2000.
    assert_eq!(column_versions(&rocks.db, "ks.events_plain", &a1, 3), 2);

    // Cutoff 4500: everything written so far is at or below it.
    rocks.flush_and_compact(4500);
    for micros in [4500, 5000, EXPIRY, EXPIRY + 1] {
        check_rows(&rocks.db, micros, "after compaction @4500");
    }
    // The overwritten version went (the newer one may be folded into a repacked row); the
    // TTL'd row has not expired at the cutoff and stays.
    assert!(column_versions(&rocks.db, "ks.events_plain", &a1, 3) <= 1);
    for table in EVENTS {
        assert!(records_under(&rocks.db, &doc_key(&rocks.db, table, &a2)) > 0);
    }

    // Delete (b,1), then compact past the TTL'd row's expiry and the delete.
    for table in EVENTS {
        delete_row(&rocks.db, table, 6000, &[("id", t("b")), ("seq", int(1))]);
    }
    let cutoff = EXPIRY + 1;
    rocks.flush_and_compact(cutoff);
    let gone = |rows: Vec<Vec<Datum>>| -> Vec<Vec<Datum>> {
        rows.into_iter()
            .filter(|r| r[..2] != b1[..])
            .collect::<Vec<_>>()
    };
    for table in EVENTS {
        assert_eq!(rows(&rocks.db, table, cutoff), gone(events_at(cutoff)));
        // Nothing of the expired row or the deleted row is stored any more.
        for key in [&a2, &b1] {
            let records = records_under(&rocks.db, &doc_key(&rocks.db, table, key));
            assert_eq!(
                records,
                0,
                "{table} {key:?}:\n{}",
                rocks.db.dump().expect("dump")
            );
        }
    }
    for table in USERS {
        assert_eq!(rows(&rocks.db, table, cutoff), users_at(), "{table}");
    }

    // The same after a reopen, and reads after the cutoff keep seeing the same.
    let rocks = rocks.reopen();
    for micros in [cutoff, cutoff + 1_000_000] {
        for table in EVENTS {
            assert_eq!(rows(&rocks.db, table, micros), gone(events_at(micros)));
        }
        for table in USERS {
            assert_eq!(rows(&rocks.db, table, micros), users_at(), "{table}");
        }
    }
}

/// `ks.own` owns the key space; `ks.c1`, `ks.c2`, `ks.c3` (YCQL) and `ks.y` (YSQL) are
/// colocated; three rows each @1000. @2000: TRUNCATE c1 and y, DROP c2. @3000: a new row in
/// c1. Returns the dropped table's key prefix.
fn truncate_and_drop<E: Engine>(db: &TableDb<E>) -> Vec<u8> {
    let ysql = TableSpec::new("y")
        .ysql()
        .hash_key("k", DataType::Int)
        .column("v", DataType::Text)
        .with_options(|o| o.colocated = true);
    db.create_table("ks", &kvs("own", false)).expect("own");
    for name in ["c1", "c2", "c3"] {
        db.create_table("ks", &kvs(name, true)).expect(name);
    }
    db.create_table("ks", &ysql).expect("y");
    for table in ["ks.own", "ks.c1", "ks.c2", "ks.c3", "ks.y"] {
        for k in 0..3 {
            let mut values = vec![("k", int(k)), ("v", t(&format!("v{k}")))];
            if table != "ks.y" {
                values.push(("s", Datum::Set(Vec::new())));
            }
            insert(db, table, 1000, &values);
        }
    }
    let c2_prefix = db.table("ks", "c2").expect("c2").prefix_bytes().to_vec();
    for table in ["ks.c1", "ks.y"] {
        assert_eq!(
            rows(db, table, 1999).len(),
            3,
            "{table} before the truncate"
        );
    }
    db.truncate_table("ks", "c1", at(2000)).expect("truncate");
    db.truncate_table("ks", "y", at(2000)).expect("truncate");
    db.drop_table("ks", "c2", at(2000)).expect("drop");
    insert(
        db,
        "ks.c1",
        3000,
        &[("k", int(9)), ("v", t("new")), ("s", int_set(&[1]))],
    );
    c2_prefix
}

/// `(k int PRIMARY KEY, v text, s set<int>)`.
fn kvs(name: &str, colocated: bool) -> TableSpec {
    TableSpec::new(name)
        .hash_key("k", DataType::Int)
        .column("v", DataType::Text)
        .column("s", DataType::set(DataType::Int))
        .with_options(|o| o.colocated = colocated)
}

/// What [`truncate_and_drop`] leaves, read at 2000, 2500 and 3000.
fn check_truncate_and_drop<E: Engine>(db: &TableDb<E>, context: &str) {
    let three: Vec<Vec<Datum>> = (0..3)
        .map(|k| vec![int(k), t(&format!("v{k}")), NULL])
        .collect();
    for micros in [2000, 2500, 3000] {
        for table in ["ks.own", "ks.c3"] {
            assert_eq!(rows(db, table, micros), three, "{context}: {table}");
        }
        let y = rows(db, "ks.y", micros);
        assert!(y.is_empty(), "{context}: y @{micros}: {y:?}");
        let c1 = rows(db, "ks.c1", micros);
        if micros < 3000 {
            assert!(c1.is_empty(), "{context}: c1 @{micros}: {c1:?}");
        } else {
            assert_eq!(
                c1,
                [vec![int(9), t("new"), int_set(&[1])]],
                "{context}: c1 @{micros}"
            );
        }
        let one = row(db, "ks.c1", vec![int(1)], micros);
        assert!(one.is_empty(), "{context}: c1 row 1 @{micros}: {one:?}");
    }
    assert!(matches!(db.table("ks", "c2"), Err(Error::NotFound(_))));
}

#[test]
fn truncate_and_drop_colocated_tables_on_rocksdb() {
    let rocks = Rocks::new();
    let c2_prefix = truncate_and_drop(&rocks.db);
    let c1_id = rocks.db.table("ks", "c1").expect("c1").id();
    check_truncate_and_drop(&rocks.db, "before compaction");
    let rocks = rocks.reopen();
    check_truncate_and_drop(&rocks.db, "after reopen");
    assert_eq!(rocks.db.table("ks", "c1").expect("c1").id(), c1_id);
    // A compaction below the truncate keeps the rows and the table tombstones.
    rocks.flush_and_compact(1500);
    check_truncate_and_drop(&rocks.db, "after compaction @1500");
    assert_eq!(rows(&rocks.db, "ks.c1", 1500).len(), 3);
    let rocks = rocks.reopen();
    check_truncate_and_drop(&rocks.db, "after compaction and reopen");
    // A new table takes a new id and colocation id: the dropped table's rows stay out of it.
    let again = rocks
        .db
        .create_table("ks", &kvs("c2", true))
        .expect("c2 again");
    assert_ne!(again.prefix_bytes(), &c2_prefix[..]);
    assert!(rows(&rocks.db, "ks.c2", 3000).is_empty());
}

/// A compaction past a TRUNCATE keeps the truncated rows hidden: the GC drops the table
/// tombstone (`ColocationId=N !`) only together with every row of the table it covers
/// (format.md §7, level 0 of the overwrite stack), on either engine.
#[test]
fn compaction_past_a_truncate_keeps_the_rows_hidden() {
    let memory = Harness::new();
    truncate_and_drop(&memory.db);
    memory.compact(2500);
    check_truncate_and_drop(&memory.db, "memory, after compaction @2500");
    let rocks = Rocks::new();
    truncate_and_drop(&rocks.db);
    rocks.flush_and_compact(2500);
    check_truncate_and_drop(&rocks.db, "rocksdb, after compaction @2500");
}

fn int_set(items: &[i32]) -> Datum {
    Datum::Set(items.iter().map(|i| int(*i)).collect())
}

/// One step of the persistence docs' YCQL `msgs` example (seeds.rs `msgs_table`): T1–T3,
/// T4 (DELETE msg_props of row 10), a compaction at 4000, T5 (DELETE row 10), a compaction
/// at 5000.
fn msgs_step<E: Engine>(db: &TableDb<E>, step: usize) {
    let key = |id: i32| vec![("user_id", t("user1")), ("msg_id", int(id))];
    let map =
        |entries: &[(&str, &str)]| Datum::Map(entries.iter().map(|(k, v)| (t(k), t(v))).collect());
    let insert_msg = |micros: u64, id: i32, msg: &str, props: Datum| {
        let mut values = key(id);
        values.extend([("msg", t(msg)), ("msg_props", props)]);
        insert(db, "ks.msgs", micros, &values);
    };
    match step {
        0 => {
            let spec = TableSpec::new("msgs")
                .hash_key("user_id", DataType::Text)
                .range_key("msg_id", DataType::Int)
                .column("msg", DataType::Text)
                .column("msg_props", DataType::map(DataType::Text, DataType::Text))
                .with_options(|o| o.packed = false);
            db.create_table("ks", &spec).expect("create");
            insert_msg(
                1000,
                10,
                "msg1",
                map(&[("from", "a@b.com"), ("subject", "hello")]),
            );
            let read_status = Update::MapPut(vec![(t("read_status"), t("true"))]);
            update(db, "ks.msgs", 2000, &key(10), &[("msg_props", read_status)]);
            insert_msg(
                3000,
                20,
                "msg2",
                map(&[("from", "c@d.com"), ("subject", "bar")]),
            );
        }
        1 => {
            let msgs = db.table("ks", "msgs").expect("msgs");
            let mut b = db.batch(at(4000));
            b.delete_columns(&msgs, &key(10), &["msg_props"], &WriteOptions::default())
                .expect("delete");
            b.commit().expect("T4");
        }
        2 => {
            db.docdb().flush().expect("flush");
            db.docdb().compact(at(4000)).expect("compact");
        }
        3 => delete_row(db, "ks.msgs", 5000, &key(10)),
        4 => {
            db.docdb().flush().expect("flush");
            db.docdb().compact(at(5000)).expect("compact");
        }
        _ => unreachable!(),
    }
}

/// The same on RocksDB, reopened after every step, as in memory: the same dump after each
/// step, and the final dump is the docs' row 20.
#[test]
fn seeds_msgs_dumps_on_rocksdb_equal_the_in_memory_ones() {
    let memory = Harness::new();
    let mut rocks = Rocks::new();
    for step in 0..5 {
        msgs_step(&memory.db, step);
        msgs_step(&rocks.db, step);
        rocks = rocks.reopen();
        assert_eq!(
            rocks.db.docdb().dump().expect("dump"),
            memory.dump(),
            "after step {step}"
        );
        assert_eq!(
            rocks.db.dump().expect("dump"),
            memory.db.dump().expect("dump")
        );
    }
    // Written out independently (seeds.rs): row 10 is gone, row 20 as inserted at T3.
    let r20 = format!("DocKey(0x{:04x}, [\"user1\"], [20])", hash_of("user1"));
    let row20 = [
        format!("SubDocKey({r20}, [SystemColumnId(0); HT{{ physical: 3000 }}]) -> null"),
        format!("SubDocKey({r20}, [ColumnId(2); HT{{ physical: 3000 w: 1 }}]) -> \"msg2\""),
        format!("SubDocKey({r20}, [ColumnId(3); HT{{ physical: 3000 w: 2 }}]) -> {{}}"),
        format!(
            "SubDocKey({r20}, [ColumnId(3), \"from\"; HT{{ physical: 3000 w: 3 }}]) -> \"c@d.com\""
        ),
        format!(
            "SubDocKey({r20}, [ColumnId(3), \"subject\"; HT{{ physical: 3000 w: 4 }}]) -> \"bar\""
        ),
    ];
    assert_eq!(rocks.db.docdb().dump().expect("dump"), lines(&row20));
    assert_eq!(
        row(&rocks.db, "ks.msgs", vec![t("user1"), int(20)], 5000),
        [vec![
            t("user1"),
            int(20),
            t("msg2"),
            Datum::Map(vec![(t("from"), t("c@d.com")), (t("subject"), t("bar"))])
        ]]
    );
}

/// YSQL ignores TTLs on reads, so compactions must not collect YSQL values by their TTL
/// either: a row inserted with a TTL (as vectors.md C1 writes one) outlives it.
#[test]
fn ysql_ttls_survive_compaction() {
    let rocks = Rocks::new();
    for packed in [true, false] {
        let name = if packed { "p" } else { "u" };
        let spec = TableSpec::new(name)
            .ysql()
            .hash_key("k", DataType::Int)
            .column("v", DataType::Text)
            .with_options(|o| {
                o.packed = packed;
                o.colocated = true;
            });
        rocks.db.create_table("ks", &spec).expect("create");
        let table = format!("ks.{name}");
        let values = [("k", int(1)), ("v", t("x"))];
        insert_with(&rocks.db, &table, 1000, &values, WriteOptions::ttl_secs(1)).expect("insert");
    }
    let want = [vec![int(1), t("x")]];
    for table in ["ks.p", "ks.u"] {
        assert_eq!(rows(&rocks.db, table, 5_000_000), want, "{table} before");
    }
    rocks.flush_and_compact(5_000_000);
    for table in ["ks.p", "ks.u"] {
        assert_eq!(rows(&rocks.db, table, 5_000_000), want, "{table} after");
    }
}

/// Repacking on RocksDB (format.md §9): a YSQL row's later updates fold into one packed row at
/// the newest folded time, written after the compaction and surviving a reopen; the second
/// compaction removes the old packed row and the folded cells.
#[test]
fn repacking_on_rocksdb() {
    let rocks = Rocks::new();
    let spec = TableSpec::new("r")
        .ysql()
        .hash_key("k", DataType::Text)
        .column("a", DataType::BigInt)
        .column("b", DataType::Text);
    rocks.db.create_table("ks", &spec).expect("create");
    let key = [("k", t("k1"))];
    insert(
        &rocks.db,
        "ks.r",
        1000,
        &[("k", t("k1")), ("a", Datum::BigInt(1)), ("b", t("x"))],
    );
    update(
        &rocks.db,
        "ks.r",
        2000,
        &key,
        &[("a", Update::Set(Datum::BigInt(2)))],
    );
    update(&rocks.db, "ks.r", 3000, &key, &[("b", Update::Set(t("y")))]);
    rocks.flush_and_compact(5000);
    let rocks = rocks.reopen();
    let d = format!("DocKey(0x{:04x}, [\"k1\"], [])", hash_of("k1"));
    assert_eq!(
        rocks.db.dump().expect("dump"),
        lines(&[format!(
            "SubDocKey({d}, [HT{{ physical: 3000 }}]) -> {{ 1: 2 2: \"y\" }}"
        )])
    );
    assert_eq!(
        rows(&rocks.db, "ks.r", 5000),
        [vec![t("k1"), Datum::BigInt(2), t("y")]]
    );
}

/// One [`RowReader`](docdb_table::RowReader) kept across writes, flushes, compactions and
/// tables reads what a fresh read does: its iterator is re-aimed at the latest state per
/// read, and a row of a colocated table never shows another table's row with the same key.
#[test]
fn a_long_lived_row_reader_sees_every_later_write() {
    let rocks = Rocks::new();
    let db = &rocks.db;
    for (name, colocated) in [("a", true), ("b", true), ("own", false)] {
        db.create_table("ks", &kvs(name, colocated)).expect(name);
    }
    let tables: Vec<_> = ["a", "b", "own"]
        .iter()
        .map(|name| db.table("ks", name).expect("table"))
        .collect();
    let mut reader = db.reader();
    let value =
        |reader: &mut docdb_table::RowReader<'_, RocksEngine>, table: &Table, k: i32, micros| {
            reader
                .row_values(table, &[int(k)], at(micros))
                .expect("read")
                .map(|row| {
                    row.columns
                        .values()
                        .map(|c| c.datum.clone())
                        .collect::<Vec<_>>()
                })
        };
    for (i, table) in tables.iter().enumerate() {
        assert_eq!(value(&mut reader, table, 1, 100), None, "{i}: nothing yet");
    }
    let mut micros = 1000;
    for round in 0..4 {
        for (i, table) in tables.iter().enumerate() {
            let name = format!("ks.{}", table.name());
            insert(
                db,
                &name,
                micros,
                &[("k", int(1)), ("v", t(&format!("r{round}t{i}")))],
            );
            micros += 10;
        }
        match round {
            1 => db.docdb().flush().expect("flush"),
            2 => rocks.flush_and_compact(micros),
            _ => {}
        }
        for (i, table) in tables.iter().enumerate() {
            assert_eq!(
                value(&mut reader, table, 1, micros),
                Some(vec![t(&format!("r{round}t{i}"))]),
                "round {round}, table {i}"
            );
            assert_eq!(
                value(&mut reader, table, 2, micros),
                None,
                "round {round}: no row 2"
            );
        }
    }
    delete_row(db, "ks.b", micros, &[("k", int(1))]);
    assert_eq!(
        value(&mut reader, &tables[1], 1, micros + 1),
        None,
        "deleted"
    );
    assert_eq!(
        value(&mut reader, &tables[1], 1, micros - 1),
        Some(vec![t("r3t1")]),
        "read before the delete"
    );
    assert_eq!(
        value(&mut reader, &tables[0], 1, micros + 1),
        Some(vec![t("r3t0")])
    );
}
