//! The two packed-row rules of docdb's GC that the table read path relies on (format.md §9),
//! on raw records through `docdb::gc::gc_stream`: a packed row passes no TTL down to the
//! cells written after it, and cells below a kept packed row that shadow its columns
//! (tombstones, expired values) are kept (as tombstones), since this GC does not repack.

use docdb::gc::{GcParams, gc_stream};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Ttl, Value};
use dockv::{DocHybridTime, HybridTime, KeyEntryValue};

fn key(subkeys: Vec<KeyEntryValue>, micros: u64) -> Vec<u8> {
    SubDocKey::new(DocKey::from_range(vec![KeyEntryValue::int32(1)]), subkeys)
        .at(DocHybridTime::new(HybridTime::from_micros(micros), 0))
        .encode()
}

fn column(id: i32) -> Vec<KeyEntryValue> {
    vec![KeyEntryValue::column_id(id)]
}

fn packed(ttl: Option<Ttl>) -> Vec<u8> {
    // The GC never decodes the body: any bytes after `z` do.
    Value::with_ttl(PrimitiveValue::PackedRowV1(vec![0]), ttl).encode()
}

fn full_gc(cutoff: u64, records: &[(Vec<u8>, Vec<u8>)]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let params = GcParams {
        history_cutoff: HybridTime::from_micros(cutoff),
        full: true,
        can_rewrite: true,
        ..GcParams::default()
    };
    gc_stream(params, records.iter().map(|(k, v)| (&k[..], &v[..]))).0
}

#[test]
fn tombstones_under_a_packed_row_stay() {
    let tombstone = Value::tombstone().encode();
    let records = vec![
        (key(vec![], 1000), packed(None)),
        (key(column(2), 2000), tombstone.clone()),
        (
            key(column(3), 500),
            Value::new(PrimitiveValue::Int32(1)).encode(),
        ),
    ];
    let kept = full_gc(3000, &records);
    // The tombstone shadows column 2 of the packed row; column 3 is older than the row.
    assert_eq!(kept, records[..2].to_vec());
    // Without a packed row above it, a tombstone goes as before.
    let alone = vec![(key(column(2), 2000), tombstone)];
    assert!(full_gc(3000, &alone).is_empty());
}

#[test]
fn expired_cells_under_a_packed_row_become_tombstones() {
    let expiring = Value::with_ttl(PrimitiveValue::Int32(5), Some(Ttl(1))).encode();
    let records = vec![
        (key(vec![], 1000), packed(None)),
        (key(column(2), 2000), expiring),
    ];
    let kept = full_gc(10_000, &records);
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[1], (key(column(2), 2000), Value::tombstone().encode()));
}

#[test]
fn a_packed_rows_ttl_is_not_inherited() {
    let records = vec![
        (key(vec![], 1000), packed(Some(Ttl(5)))),
        (
            key(column(2), 2000),
            Value::new(PrimitiveValue::Int32(7)).encode(),
        ),
    ];
    // After the row's 5 ms the packed row is gone, the later column (no TTL) is not.
    let kept = full_gc(100_000, &records);
    assert_eq!(kept, records[1..].to_vec());
}
