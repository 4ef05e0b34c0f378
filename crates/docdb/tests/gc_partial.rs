//! What a compaction that sees only part of the data (a minor compaction) may expire, on raw
//! records through `docdb::gc::gc_stream`. Records outside it can restate an expiration: an
//! ancestor's TTL that children inherit, or a later EXPIRE/PERSIST. So for documents it keeps
//! expired records for a full compaction to judge; for table rows, whose columns take only
//! their own TTL or the table's, it turns them into tombstones as YugabyteDB does.

use std::sync::Arc;

use docdb::gc::{GcParams, gc_stream};
use docdb::repack::{TableRules, TableRulesSource};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, TTL_MERGE_FLAG, Ttl, Value, ValueControlFields};
use dockv::{DocHybridTime, HybridTime, KeyEntryValue};

type Records = Vec<(Vec<u8>, Vec<u8>)>;

const CUTOFF: u64 = 100_000;

fn key(subkeys: &[&str], micros: u64) -> Vec<u8> {
    let subkeys = subkeys.iter().map(|s| KeyEntryValue::string(*s)).collect();
    SubDocKey::new(
        DocKey::from_range(vec![KeyEntryValue::string("doc")]),
        subkeys,
    )
    .at(DocHybridTime::new(HybridTime::from_micros(micros), 0))
    .encode()
}

fn value(ttl: Option<Ttl>) -> Vec<u8> {
    Value::with_ttl(PrimitiveValue::Int64(1), ttl).encode()
}

fn object(ttl: Option<Ttl>) -> Vec<u8> {
    Value::with_ttl(PrimitiveValue::Object, ttl).encode()
}

/// A TTL merge record (EXPIRE with `ttl`, PERSIST with none).
fn merge(ttl: Option<Ttl>) -> Vec<u8> {
    let control = ValueControlFields {
        merge_flags: TTL_MERGE_FLAG,
        ttl,
        ..ValueControlFields::default()
    };
    Value {
        control,
        payload: PrimitiveValue::String(Vec::new()),
    }
    .encode()
}

#[derive(Debug)]
struct EveryTable(Arc<TableRules>);

impl TableRulesSource for EveryTable {
    fn rules(&self, _prefix: &[u8]) -> Option<Arc<TableRules>> {
        Some(self.0.clone())
    }
}

fn gc(full: bool, table_ttl: Option<Ttl>, rows: bool, records: &Records) -> Records {
    let tables = rows.then(|| {
        Arc::new(EveryTable(Arc::new(TableRules {
            table_ttl,
            local_expiry: true,
            ..TableRules::default()
        }))) as Arc<dyn TableRulesSource>
    });
    let params = GcParams {
        history_cutoff: HybridTime::from_micros(CUTOFF),
        table_ttl,
        full,
        tables,
        ..GcParams::default()
    };
    gc_stream(params, records.iter().map(|(k, v)| (&k[..], &v[..]))).0
}

fn tombstoned(record: &(Vec<u8>, Vec<u8>)) -> (Vec<u8>, Vec<u8>) {
    (record.0.clone(), Value::tombstone().encode())
}

/// The model test's failure: a child with no TTL of its own under a root whose TTL 0 means
/// "never expires". A minor compaction without the root used to take the table TTL and turn
/// the child into a tombstone.
#[test]
fn a_child_whose_ancestor_is_elsewhere_is_kept() {
    let child = vec![(key(&["c"], 2_000), object(None))];
    assert_eq!(gc(false, Some(Ttl(13)), false, &child), child);
    // A full compaction sees the root, and with it that the child never expires.
    let with_root = vec![(key(&[], 1_000), object(Some(Ttl(0)))), child[0].clone()];
    assert_eq!(gc(true, Some(Ttl(13)), false, &with_root), with_root);
    // Without any root the child expires by the table TTL.
    assert!(gc(true, Some(Ttl(13)), false, &child).is_empty());
}

/// SET k v PX 1; PERSIST k, with the PERSIST in a newer file than this compaction's.
#[test]
fn an_expired_value_a_later_merge_may_restate_is_kept() {
    let string = vec![(key(&[], 1_000), value(Some(Ttl(1))))];
    assert_eq!(gc(false, None, false, &string), string);
    let persisted = vec![(key(&[], 1_500), merge(None)), string[0].clone()];
    assert_eq!(gc(true, None, false, &persisted), persisted);
    assert!(gc(true, None, false, &string).is_empty());
}

/// Table rows: a column's expiry depends on nothing outside, so a minor compaction turns it
/// into a tombstone (it still hides older versions elsewhere); so does a collection element's
/// own TTL. An element without one inherits from its collection, which may be elsewhere.
#[test]
fn expired_columns_of_rows_become_tombstones() {
    let records = vec![
        (key(&["col"], 2_000), value(None)),
        (key(&["map", "a"], 2_000), value(Some(Ttl(1)))),
        (key(&["map", "b"], 2_000), value(None)),
    ];
    let kept = gc(false, Some(Ttl(13)), true, &records);
    assert_eq!(
        kept,
        vec![
            tombstoned(&records[0]),
            tombstoned(&records[1]),
            records[2].clone()
        ]
    );
    // The same records as a document's: nothing is decided without the whole picture.
    assert_eq!(gc(false, Some(Ttl(13)), false, &records), records);
}
