//! The Redis table of the persistence seed ("Mapping YEDIS data to DocDB", vectors.md G2)
//! written as document operations, with the sorted key/value view the seed describes (its own
//! table has two errors, noted in vectors.md G2: the T5 marker prints as T2, and value6 is
//! listed before value4; real order is byte order).

use std::sync::Arc;

use docdb::clock::HybridClock;
use docdb::{DocDb, DocDbOptions, DocLiteral, GcPolicy};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{HybridTime, KeyEntryValue};
use engine::MemEngine;

fn redis_key(name: &str) -> DocKey {
    // A Redis DocKey: the cluster slot as the hash, the key as the one hashed component.
    let slot = dockv::hash::redis_hash_slot(name.as_bytes());
    DocKey::with_hash(slot, vec![KeyEntryValue::string(name)], vec![])
}

fn at(micros: u64) -> HybridTime {
    HybridTime::from_micros(micros)
}

#[test]
fn yedis_table() {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let engine = MemEngine::with_compaction_filter(Some(policy.clone()));
    let db = DocDb::open(engine, policy, DocDbOptions::default()).expect("open");
    let root = |name: &str| SubDocKey::new(redis_key(name), vec![]);
    let field =
        |name: &str, f: &str| SubDocKey::new(redis_key(name), vec![KeyEntryValue::string(f)]);
    let members = |items: &[&str]| {
        DocLiteral::Object(
            items
                .iter()
                .map(|m| {
                    (
                        KeyEntryValue::string(*m),
                        DocLiteral::Value(PrimitiveValue::Null),
                    )
                })
                .collect(),
        )
    };

    // T1 SET key1 value1 EX 15
    let mut b = db.batch(at(1000));
    b.set(
        &root("key1"),
        Value::with_ttl(PrimitiveValue::string("value1"), Some(Ttl::from_secs(15))),
    )
    .expect("set");
    b.commit().expect("T1");
    // T2 HSET key2 subkey1 value1: the hash type marker, then the field.
    let mut b = db.batch(at(2000));
    b.set(&root("key2"), Value::new(PrimitiveValue::Object))
        .expect("marker");
    b.set(
        &field("key2", "subkey1"),
        Value::new(PrimitiveValue::string("value1")),
    )
    .expect("field");
    b.commit().expect("T2");
    // T3 HSET key2 subkey2 value2
    let mut b = db.batch(at(3000));
    b.set(
        &field("key2", "subkey2"),
        Value::new(PrimitiveValue::string("value2")),
    )
    .expect("field");
    b.commit().expect("T3");
    // T4 DEL key2
    let mut b = db.batch(at(4000));
    b.delete(&root("key2")).expect("del");
    b.commit().expect("T4");
    // T5 HMSET key2 subkey1 new_val1 subkey3 value3
    let mut b = db.batch(at(5000));
    let fields = DocLiteral::Object(vec![
        (
            KeyEntryValue::string("subkey1"),
            DocLiteral::Value(PrimitiveValue::string("new_val1")),
        ),
        (
            KeyEntryValue::string("subkey3"),
            DocLiteral::Value(PrimitiveValue::string("value3")),
        ),
    ]);
    b.insert(&root("key2"), &fields, None).expect("hmset");
    b.commit().expect("T5");
    // T6 SADD key3 value4 value5: the set type marker, members → null.
    let mut b = db.batch(at(6000));
    b.set(&root("key3"), Value::new(PrimitiveValue::RedisSet))
        .expect("marker");
    b.extend(&root("key3"), &members(&["value4", "value5"]), None)
        .expect("sadd");
    b.commit().expect("T6");
    // T7 SADD key3 value6
    let mut b = db.batch(at(7000));
    b.extend(&root("key3"), &members(&["value6"]), None)
        .expect("sadd");
    b.commit().expect("T7");

    let doc = |name: &str| redis_key(name).to_string();
    let (k1, k2, k3) = (doc("key1"), doc("key2"), doc("key3"));
    let mut groups = vec![
        (
            dockv::hash::redis_hash_slot(b"key1"),
            vec![format!(
                "SubDocKey({k1}, [HT{{ physical: 1000 }}]) -> \"value1\"; ttl: 15.000s"
            )],
        ),
        (
            dockv::hash::redis_hash_slot(b"key2"),
            vec![
                format!("SubDocKey({k2}, [HT{{ physical: 5000 }}]) -> {{}}"),
                format!("SubDocKey({k2}, [HT{{ physical: 4000 }}]) -> DEL"),
                format!("SubDocKey({k2}, [HT{{ physical: 2000 }}]) -> {{}}"),
                format!(
                    "SubDocKey({k2}, [\"subkey1\"; HT{{ physical: 5000 w: 1 }}]) -> \"new_val1\""
                ),
                format!(
                    "SubDocKey({k2}, [\"subkey1\"; HT{{ physical: 2000 w: 1 }}]) -> \"value1\""
                ),
                format!("SubDocKey({k2}, [\"subkey2\"; HT{{ physical: 3000 }}]) -> \"value2\""),
                format!(
                    "SubDocKey({k2}, [\"subkey3\"; HT{{ physical: 5000 w: 2 }}]) -> \"value3\""
                ),
            ],
        ),
        (
            dockv::hash::redis_hash_slot(b"key3"),
            vec![
                format!("SubDocKey({k3}, [HT{{ physical: 6000 }}]) -> ()"),
                format!("SubDocKey({k3}, [\"value4\"; HT{{ physical: 6000 w: 1 }}]) -> null"),
                format!("SubDocKey({k3}, [\"value5\"; HT{{ physical: 6000 w: 2 }}]) -> null"),
                format!("SubDocKey({k3}, [\"value6\"; HT{{ physical: 7000 }}]) -> null"),
            ],
        ),
    ];
    // Documents sort by their hash first.
    groups.sort_by_key(|(slot, _)| *slot);
    let expected: String = groups
        .into_iter()
        .flat_map(|(_, lines)| lines)
        .map(|l| l + "\n")
        .collect();
    assert_eq!(db.dump().expect("dump"), expected);

    // Reads: the hash after T5 holds only T5's fields; the set holds all three members;
    // key1 expires 15 s after T1.
    let read = |name: &str, t: u64| {
        db.get(&root(name), &db.read_options(at(t)))
            .expect("get")
            .map(|d| d.to_one_line())
    };
    assert_eq!(
        read("key2", 5000).as_deref(),
        Some(r#"{"subkey1": "new_val1", "subkey3": "value3"}"#)
    );
    assert_eq!(read("key2", 4000), None);
    assert_eq!(
        read("key3", 7000).as_deref(),
        Some(r#"("value4", "value5", "value6")"#)
    );
    assert_eq!(
        read("key1", 1000 + 15_000_000).as_deref(),
        Some("\"value1\"")
    );
    assert_eq!(read("key1", 1000 + 15_000_001), None);
}

/// Documents go in as JSON and come back out as JSON (lists get array indexes on the way in).
#[test]
fn json_in_and_out() {
    let policy = GcPolicy::new(Arc::new(HybridClock::default()));
    let engine = MemEngine::with_compaction_filter(Some(policy.clone()));
    let db = DocDb::open(engine, policy, DocDbOptions::default()).expect("open");
    let json: serde_json::Value =
        serde_json::from_str(r#"{"name": "Ada", "langs": ["en", "fr"], "address": {"city": "London", "zip": null}, "age": 36}"#)
            .expect("json");
    let path = SubDocKey::new(
        DocKey::from_range(vec![KeyEntryValue::string("person")]),
        vec![],
    );
    let mut batch = db.batch(at(1000));
    batch
        .insert(&path, &DocLiteral::from_json(&json).expect("literal"), None)
        .expect("insert");
    batch.commit().expect("commit");
    let doc = db
        .get(&path, &db.read_options(at(1000)))
        .expect("get")
        .expect("found");
    assert_eq!(doc.to_json(), json);
}
