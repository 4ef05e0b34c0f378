//! The seeds' table examples (shared/seeds/) as table operations, with the dumps their text
//! describes written out from format.md's rules: one line per version in key order
//! (`SystemColumnId` before `ColumnId`, newer versions first, then subkeys), write ids in
//! statement order (liveness, then columns in schema order, a collection's init marker
//! before its elements). Column ids follow schema order from 0 (key columns first).

mod common;

use common::{Harness, at, hash_of, lines, t};
use docdb_table::{DataType, Datum, Select, Selector, TableSpec, Update, WriteOptions};
use serde_json::json;

fn map(entries: &[(&str, &str)]) -> Datum {
    Datum::Map(entries.iter().map(|(k, v)| (t(k), t(v))).collect())
}

/// persistence v1.2 "YCQL - Collection Type Example": `msgs (user_id text, msg_id int, msg
/// text, msg_props map<text, text>, PRIMARY KEY ((user_id), msg_id))`, so msg =
/// ColumnId(2), msg_props = ColumnId(3). The docs' table omits the map's init marker, which
/// a real INSERT writes first (vectors.md G1). Packing is off as in the docs (with packing on
/// the INSERT would be one packed row plus the map cells).
#[test]
fn msgs_table() {
    let h = Harness::new();
    let spec = TableSpec::new("msgs")
        .hash_key("user_id", DataType::Text)
        .range_key("msg_id", DataType::Int)
        .column("msg", DataType::Text)
        .column("msg_props", DataType::map(DataType::Text, DataType::Text))
        .with_options(|o| o.packed = false);
    let msgs = h.db.create_table("ks", &spec).expect("create");
    let none = WriteOptions::default();
    let key = |id: i32| vec![("user_id", t("user1")), ("msg_id", Datum::Int(id))];
    let insert = |ht: u64, id: i32, msg: &str, props: Datum| {
        let mut b = h.db.batch(at(ht));
        let mut values = key(id);
        values.extend([("msg", t(msg)), ("msg_props", props)]);
        b.insert(&msgs, &values, &none).expect("insert");
        b.commit().expect("commit");
    };
    // T1, T2, T3.
    insert(
        1000,
        10,
        "msg1",
        map(&[("from", "a@b.com"), ("subject", "hello")]),
    );
    let mut b = h.db.batch(at(2000));
    let read_status = Update::MapPut(vec![(t("read_status"), t("true"))]);
    b.update(&msgs, &key(10), &[("msg_props", read_status)], &none)
        .expect("update");
    b.commit().expect("T2");
    insert(
        3000,
        20,
        "msg2",
        map(&[("from", "c@d.com"), ("subject", "bar")]),
    );
    let row = |id: i32| Select::row(&msgs, vec![t("user1"), Datum::Int(id)], at(3000));
    assert_eq!(
        h.rows(&msgs, &row(10)),
        [vec![
            t("user1"),
            Datum::Int(10),
            t("msg1"),
            map(&[
                ("from", "a@b.com"),
                ("read_status", "true"),
                ("subject", "hello")
            ]),
        ]]
    );
    // T4: DELETE msg_props of row 10.
    let mut b = h.db.batch(at(4000));
    b.delete_columns(&msgs, &key(10), &["msg_props"], &none)
        .expect("delete");
    b.commit().expect("T4");

    let d = hash_of("user1");
    let r = |id: i32| format!("DocKey(0x{d:04x}, [\"user1\"], [{id}])");
    let (r10, r20) = (r(10), r(20));
    let row10_cols = [
        format!("SubDocKey({r10}, [SystemColumnId(0); HT{{ physical: 1000 }}]) -> null"),
        format!("SubDocKey({r10}, [ColumnId(2); HT{{ physical: 1000 w: 1 }}]) -> \"msg1\""),
    ];
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
    let mut after_t4: Vec<String> = row10_cols.to_vec();
    after_t4.extend([
        format!("SubDocKey({r10}, [ColumnId(3); HT{{ physical: 4000 }}]) -> DEL"),
        format!("SubDocKey({r10}, [ColumnId(3); HT{{ physical: 1000 w: 2 }}]) -> {{}}"),
        format!(
            "SubDocKey({r10}, [ColumnId(3), \"from\"; HT{{ physical: 1000 w: 3 }}]) -> \"a@b.com\""
        ),
        format!(
            "SubDocKey({r10}, [ColumnId(3), \"read_status\"; HT{{ physical: 2000 }}]) -> \"true\""
        ),
        format!(
            "SubDocKey({r10}, [ColumnId(3), \"subject\"; HT{{ physical: 1000 w: 4 }}]) -> \"hello\""
        ),
    ]);
    after_t4.extend(row20.iter().cloned());
    assert_eq!(h.dump(), lines(&after_t4));
    let at4000 = Select::row(&msgs, vec![t("user1"), Datum::Int(10)], at(4000));
    assert_eq!(
        h.rows(&msgs, &at4000),
        [vec![t("user1"), Datum::Int(10), t("msg1"), Datum::Null]]
    );

    // Compaction reclaims the deleted map, its tombstone included.
    h.compact(4000);
    let mut compacted: Vec<String> = row10_cols.to_vec();
    compacted.extend(row20.iter().cloned());
    assert_eq!(h.dump(), lines(&compacted));

    // T5: DELETE the row: a row tombstone at the DocKey; compaction reclaims the row.
    let mut b = h.db.batch(at(5000));
    b.delete_row(&msgs, &key(10), &none).expect("delete row");
    b.commit().expect("T5");
    let mut after_t5 = vec![format!("SubDocKey({r10}, [HT{{ physical: 5000 }}]) -> DEL")];
    after_t5.extend(compacted.iter().cloned());
    assert_eq!(h.dump(), lines(&after_t5));
    let all = Select::all(at(5000)).columns(vec![Selector::Column("msg_id".into())]);
    assert_eq!(h.rows(&msgs, &all), [vec![Datum::Int(20)]]);
    // The past is still readable before compaction.
    let all_before = Select::all(at(4999)).columns(vec![Selector::Column("msg_id".into())]);
    assert_eq!(h.rows(&msgs, &all_before).len(), 2);
    h.compact(5000);
    assert_eq!(h.dump(), lines(&row20));
}

/// persistence v1.2 "YCQL - Time-To-Live (TTL) Example": `page_views (page_id text, views
/// int, category text, PRIMARY KEY ((page_id)))` (views = ColumnId(1), category =
/// ColumnId(2)). The INSERT does not give category, so even a packed table writes cells.
#[test]
fn page_views_row_and_column_ttl() {
    let h = Harness::new();
    let spec = TableSpec::new("page_views")
        .hash_key("page_id", DataType::Text)
        .column("views", DataType::Int)
        .column("category", DataType::Text);
    let pv = h.db.create_table("ks", &spec).expect("create");
    let key = vec![("page_id", t("abc.com"))];
    let mut b = h.db.batch(at(1000));
    let mut values = key.clone();
    values.push(("views", Datum::Int(10)));
    b.insert(&pv, &values, &WriteOptions::ttl_secs(86_400))
        .expect("insert");
    b.commit().expect("T1");
    let mut b = h.db.batch(at(2000));
    b.update(
        &pv,
        &key,
        &[("category", Update::Set(t("news")))],
        &WriteOptions::ttl_secs(3600),
    )
    .expect("update");
    b.commit().expect("T2");

    let d = format!("DocKey(0x{:04x}, [\"abc.com\"], [])", hash_of("abc.com"));
    assert_eq!(
        h.dump(),
        lines(&[
            format!(
                "SubDocKey({d}, [SystemColumnId(0); HT{{ physical: 1000 }}]) -> null; ttl: 86400.000s"
            ),
            format!(
                "SubDocKey({d}, [ColumnId(1); HT{{ physical: 1000 w: 1 }}]) -> 10; ttl: 86400.000s"
            ),
            format!(
                "SubDocKey({d}, [ColumnId(2); HT{{ physical: 2000 }}]) -> \"news\"; ttl: 3600.000s"
            ),
        ])
    );
    let hour = 3_600_000_000u64;
    let day = 24 * hour;
    let read = |micros: u64| {
        let select = Select::row(&pv, vec![t("abc.com")], at(micros)).columns(vec![
            Selector::Column("views".into()),
            Selector::Column("category".into()),
            Selector::Ttl("views".into()),
            Selector::Ttl("category".into()),
            Selector::WriteTime("category".into()),
        ]);
        h.rows(&pv, &select)
    };
    // At exactly its expiry the category is still there, with 0 seconds left.
    assert_eq!(
        read(2000 + hour),
        [vec![
            Datum::Int(10),
            t("news"),
            Datum::BigInt(23 * 3600 - 1),
            Datum::BigInt(0),
            Datum::BigInt(2000),
        ]]
    );
    assert_eq!(
        read(2000 + hour + 1),
        [vec![
            Datum::Int(10),
            Datum::Null,
            Datum::BigInt(23 * 3600 - 1),
            Datum::Null,
            Datum::Null
        ]]
    );
    assert!(read(1000 + day + 1).is_empty());
    h.compact(1000 + day + 1);
    assert_eq!(h.dump(), "");
}

/// docdb-storage-model "Encoding Example", YSQL: `msgs (user_id text, msg_id int, msg text,
/// msg_props jsonb, PRIMARY KEY ((user_id), msg_id))`. jsonb is stored as a subdocument, so
/// `msg_props || '{"read": true}'` adds one pair (T2) and DELETE writes a row tombstone (T3).
/// The seed omits the jsonb object's init marker, as the YCQL docs omit the map's.
#[test]
fn ysql_jsonb_storage_model() {
    let h = Harness::new();
    let spec = TableSpec::new("msgs")
        .ysql()
        .hash_key("user_id", DataType::Text)
        .range_key("msg_id", DataType::Int)
        .column("msg", DataType::Text)
        .column("msg_props", DataType::Jsonb)
        .with_options(|o| o.packed = false);
    let msgs = h.db.create_table("ks", &spec).expect("create");
    let none = WriteOptions::default();
    let key = vec![("user_id", t("user1")), ("msg_id", Datum::Int(10))];
    let props = json!({"from": "[email protected]", "subject": "hi"});
    let mut b = h.db.batch(at(1000));
    let mut values = key.clone();
    values.extend([("msg", t("Hello")), ("msg_props", Datum::Jsonb(props))]);
    b.insert(&msgs, &values, &none).expect("insert");
    b.commit().expect("T1");
    let mut b = h.db.batch(at(2000));
    let concat = Update::JsonConcat(json!({"read": true}));
    b.update(&msgs, &key, &[("msg_props", concat)], &none)
        .expect("update");
    b.commit().expect("T2");

    let d = format!("DocKey(0x{:04x}, [\"user1\"], [10])", hash_of("user1"));
    let t2 = [
        format!("SubDocKey({d}, [SystemColumnId(0); HT{{ physical: 1000 }}]) -> null"),
        format!("SubDocKey({d}, [ColumnId(2); HT{{ physical: 1000 w: 1 }}]) -> \"Hello\""),
        format!("SubDocKey({d}, [ColumnId(3); HT{{ physical: 1000 w: 2 }}]) -> {{}}"),
        format!(
            "SubDocKey({d}, [ColumnId(3), \"from\"; HT{{ physical: 1000 w: 3 }}]) -> \"[email protected]\""
        ),
        format!("SubDocKey({d}, [ColumnId(3), \"read\"; HT{{ physical: 2000 }}]) -> true"),
        format!(
            "SubDocKey({d}, [ColumnId(3), \"subject\"; HT{{ physical: 1000 w: 4 }}]) -> \"hi\""
        ),
    ];
    assert_eq!(h.dump(), lines(&t2));
    let row = |micros| Select::row(&msgs, vec![t("user1"), Datum::Int(10)], at(micros));
    let expected = json!({"from": "[email protected]", "read": true, "subject": "hi"});
    assert_eq!(
        h.rows(&msgs, &row(2000)),
        [vec![
            t("user1"),
            Datum::Int(10),
            t("Hello"),
            Datum::Jsonb(expected)
        ]]
    );

    let mut b = h.db.batch(at(3000));
    b.delete_row(&msgs, &key, &none).expect("delete");
    b.commit().expect("T3");
    let mut t3 = vec![format!("SubDocKey({d}, [HT{{ physical: 3000 }}]) -> DEL")];
    t3.extend(t2.iter().cloned());
    assert_eq!(h.dump(), lines(&t3));
    assert!(h.rows(&msgs, &row(3000)).is_empty());
    assert_eq!(h.rows(&msgs, &row(2999)).len(), 1);
}
