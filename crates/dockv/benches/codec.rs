//! Encode/decode costs of a typical SubDocKey and a 10-column packed row.
#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented functions.
//! Run: `cargo bench --release -p dockv --bench codec` (see BENCHMARKS.md).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dockv::doc_key::{DocKey, SubDocKey, component_ends};
use dockv::packed_row::{
    ColumnPackingSpec, PackedDataType, PackedValueV2, RowPackerV1, RowPackerV2, SchemaPacking,
    TableKind, decode_packed_row,
};
use dockv::{DocHybridTime, HybridTime, KeyEntryValue, SortOrder};

/// 1 hashed string, 1 range int64, a column id, a hybrid time.
fn typical_key() -> SubDocKey {
    let doc = DocKey::with_hash(
        0x1234,
        vec![KeyEntryValue::string("user-000123")],
        vec![KeyEntryValue::Int64(42, SortOrder::Ascending)],
    );
    SubDocKey::new(doc, vec![KeyEntryValue::ColumnId(12)]).at(DocHybridTime::new(
        HybridTime::new(1_700_000_000_000_000, 5),
        3,
    ))
}

fn sub_doc_key(c: &mut Criterion) {
    let key = typical_key();
    let encoded = key.encode();
    c.bench_function("subdockey/encode", |b| {
        let mut out = Vec::with_capacity(64);
        b.iter(|| {
            out.clear();
            black_box(&key).encode_to(&mut out);
            black_box(out.len())
        })
    });
    c.bench_function("subdockey/decode", |b| {
        b.iter(|| SubDocKey::decode(black_box(&encoded)))
    });
    c.bench_function("subdockey/component_ends", |b| {
        let mut ends = Vec::new();
        b.iter(|| component_ends(black_box(&encoded), &mut ends))
    });
    // The path filters' domain check reads the time's shape, not its values.
    let time = key.time.map(|t| t.encoded()).unwrap_or_default();
    c.bench_function("doc_hybrid_time/decode", |b| {
        b.iter(|| DocHybridTime::decode(black_box(&time)))
    });
    c.bench_function("doc_hybrid_time/encoded_len_at", |b| {
        b.iter(|| DocHybridTime::encoded_len_at(black_box(&time)))
    });
}

fn ten_columns() -> Vec<ColumnPackingSpec> {
    (0..10)
        .map(|i| ColumnPackingSpec {
            id: 10 + i,
            data_type: if i % 2 == 0 {
                PackedDataType::Int64
            } else {
                PackedDataType::String
            },
            nullable: true,
        })
        .collect()
}

fn packed_row(c: &mut Criterion) {
    let columns = ten_columns();
    let ysql = SchemaPacking::new(TableKind::Ysql, &columns).expect("packing");
    let ycql = SchemaPacking::new(TableKind::Ycql, &columns).expect("packing");
    let text = b"some column text";
    // V1 takes value encodings: `I` + 8 bytes BE, `S` + raw bytes.
    let v1_values: Vec<Vec<u8>> = (0..10)
        .map(|i| {
            if i % 2 == 0 {
                [&b"I"[..], &(i as i64).to_be_bytes()].concat()
            } else {
                [&b"S"[..], &text[..]].concat()
            }
        })
        .collect();
    let pack_v1 = || {
        let mut packer = RowPackerV1::new(1, &ycql, 0, &[]);
        for (i, v) in v1_values.iter().enumerate() {
            packer.add_value(10 + i as i32, Some(v)).expect("add");
        }
        packer.complete().expect("complete")
    };
    let pack_v2 = || {
        let mut packer = RowPackerV2::new(1, &ysql, 0, &[], false).expect("packer");
        for i in 0..10 {
            let value = if i % 2 == 0 {
                PackedValueV2::Int64(i)
            } else {
                PackedValueV2::VarLen(text)
            };
            packer.add_value(10 + i as i32, Some(value)).expect("add");
        }
        packer.complete().expect("complete")
    };
    c.bench_function("packed_row/v1/encode", |b| b.iter(|| black_box(pack_v1())));
    c.bench_function("packed_row/v2/encode", |b| b.iter(|| black_box(pack_v2())));
    let (v1, v2) = (pack_v1(), pack_v2());
    c.bench_function("packed_row/v1/decode", |b| {
        b.iter(|| decode_packed_row(black_box(&v1), &ycql))
    });
    c.bench_function("packed_row/v2/decode", |b| {
        b.iter(|| decode_packed_row(black_box(&v2), &ysql))
    });
}

criterion_group!(benches, sub_doc_key, packed_row);
criterion_main!(benches);
