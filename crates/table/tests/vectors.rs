//! Packed rows written through the table layer, byte for byte as vectors.md C1 and C4 give
//! them, and YugabyteDB's `PgPackedRowTest.SstDump` scenario (schema versions across ADD and
//! DROP COLUMN, keys hashed as YugabyteDB hashes them).

mod common;

use common::{Harness, at, hex, lines, unhex};
use docdb_table::{
    AlterTable, ColumnSpec, DataType, Datum, PackedFormat, Select, Table, TableSpec, WriteOptions,
};
use dockv::value::Ttl;

/// The stored value of the row with key `key`.
fn packed_value(h: &Harness, table: &Table, key: Vec<Datum>) -> Vec<u8> {
    h.raw_value(&table.doc_key(&key).expect("key").encode())
}

fn insert(h: &Harness, table: &Table, micros: u64, values: &[(&str, Datum)], opts: WriteOptions) {
    let mut b = h.db.batch(at(micros));
    b.insert(table, values, &opts).expect("insert");
    b.commit().expect("commit");
}

/// vectors.md C1 (`PackedRowTest.ControlFields`): hash h1 INT32, range r1 STRING, NOT NULL
/// STRING and INT8 columns (ids 2, 3), PGSQL packing, row TTL 1000 µs, schema version 0.
#[test]
fn c1_control_fields() {
    let h = Harness::new();
    for (name, format, expected) in [
        (
            "v1",
            PackedFormat::V1,
            "74817A0007000000537072697665744800000039",
        ),
        ("v2", PackedFormat::V2, "74817C00000C70726976657439"),
    ] {
        let spec = TableSpec::new(name)
            .ysql()
            .hash_key("h1", DataType::Int)
            .range_key("r1", DataType::Text)
            .with_column(ColumnSpec::regular("c2", DataType::Text).not_null())
            .with_column(ColumnSpec::regular("c3", DataType::TinyInt).not_null())
            .with_options(|o| {
                o.packed_format = Some(format);
                o.colocated = true;
            });
        let table = h.db.create_table("ks", &spec).expect("create");
        let opts = WriteOptions {
            ttl: Some(Ttl(1)),
            timestamp: None,
        };
        let values = [
            ("h1", Datum::Int(1)),
            ("r1", Datum::text("a")),
            ("c2", Datum::text("privet")),
            ("c3", Datum::TinyInt(0x39)),
        ];
        insert(&h, &table, 1000, &values, opts);
        let key = vec![Datum::Int(1), Datum::text("a")];
        assert_eq!(hex(&packed_value(&h, &table, key)), expected, "{name}");
    }
}

/// vectors.md C4 (design doc): YSQL `t (k INT PRIMARY KEY, v1 INT, v2 TEXT, v3 BIGINT)` at
/// schema version 1 (v3 added by ALTER), V1 and V2, with and without NULLs; and YCQL `t (k
/// INT PRIMARY KEY, v1 INT, v2 TEXT)` INSERT … USING TTL 3600, whose V1 row repeats the TTL
/// per column.
#[test]
fn c4_design_doc_examples() {
    let h = Harness::new();
    let cases = [
        (
            PackedFormat::V1,
            "7A 01 05000000 0B000000 14000000 48 0000002A 53 68656C6C6F 49 00000000000F4240",
            "7A 01 05000000 05000000 05000000 48 0000002A",
        ),
        (
            PackedFormat::V2,
            "7C 01 00 2A000000 0A 68656C6C6F 40420F0000000000",
            "7C 01 01 06 2A000000",
        ),
    ];
    for (i, (format, full, nulls)) in cases.into_iter().enumerate() {
        let name = format!("t{i}");
        let spec = TableSpec::new(&name)
            .ysql()
            .hash_key("k", DataType::Int)
            .column("v1", DataType::Int)
            .column("v2", DataType::Text)
            .with_options(|o| {
                o.packed_format = Some(format);
                o.colocated = true;
            });
        h.db.create_table("ks", &spec).expect("create");
        let add = AlterTable::AddColumn(ColumnSpec::regular("v3", DataType::BigInt));
        let table = h.db.alter_table("ks", &name, add).expect("alter");
        assert_eq!(table.schema().version, 1);
        let row = [
            ("k", Datum::Int(1)),
            ("v1", Datum::Int(42)),
            ("v2", Datum::text("hello")),
            ("v3", Datum::BigInt(1_000_000)),
        ];
        insert(&h, &table, 1000, &row, WriteOptions::default());
        assert_eq!(packed_value(&h, &table, vec![Datum::Int(1)]), unhex(full));
        // (2, 42, NULL, NULL): explicit NULLs and left-out columns pack the same.
        insert(
            &h,
            &table,
            1000,
            &[("k", Datum::Int(2)), ("v1", Datum::Int(42))],
            WriteOptions::default(),
        );
        let explicit = [
            ("k", Datum::Int(3)),
            ("v1", Datum::Int(42)),
            ("v2", Datum::Null),
            ("v3", Datum::Null),
        ];
        insert(&h, &table, 1000, &explicit, WriteOptions::default());
        for k in [2, 3] {
            assert_eq!(packed_value(&h, &table, vec![Datum::Int(k)]), unhex(nulls));
        }
        let rows = h.rows(&table, &Select::row(&table, vec![Datum::Int(1)], at(1000)));
        assert_eq!(
            rows,
            [vec![
                Datum::Int(1),
                Datum::Int(42),
                Datum::text("hello"),
                Datum::BigInt(1_000_000)
            ]]
        );
    }

    let spec = TableSpec::new("ycql")
        .hash_key("k", DataType::Int)
        .column("v1", DataType::Int)
        .with_options(|o| o.colocated = true);
    h.db.create_table("ks", &spec).expect("create");
    let add = AlterTable::AddColumn(ColumnSpec::regular("v2", DataType::Text));
    let table = h.db.alter_table("ks", "ycql", add).expect("alter");
    let row = [
        ("k", Datum::Int(1)),
        ("v1", Datum::Int(42)),
        ("v2", Datum::text("hello")),
    ];
    insert(&h, &table, 1000, &row, WriteOptions::ttl_secs(3600));
    assert_eq!(
        packed_value(&h, &table, vec![Datum::Int(1)]),
        unhex(
            "74 F036EE80 7A 01 0A000000 15000000 74 F036EE80 48 0000002A 74 F036EE80 53 68656C6C6F"
        )
    );
}

/// YugabyteDB's `PgPackedRowTest.SstDump` / `SstDumpNoMetadata` (pgwrapper): `test (v1 INT
/// PRIMARY KEY, v2 TEXT)`, rows 1 and 2; ADD v3 TEXT; row 3; DROP v2; row 4, with V1 packing
/// (the no-metadata variant turns V2 off). The test gives the rows' hashes, their packed
/// bodies per schema version, and the dump with metadata.
#[test]
fn pg_packed_row_sst_dump() {
    let h = Harness::new();
    let spec = TableSpec::new("test")
        .ysql()
        .hash_key("v1", DataType::Int)
        .column("v2", DataType::Text)
        .with_options(|o| o.packed_format = Some(PackedFormat::V1));
    let table = h.db.create_table("ks", &spec).expect("create");
    let row = |k: i32, v: &str| [("v1", Datum::Int(k)), ("v2", Datum::text(v))];
    insert(&h, &table, 1000, &row(1, "one"), WriteOptions::default());
    insert(&h, &table, 2000, &row(2, "two"), WriteOptions::default());
    let add = AlterTable::AddColumn(ColumnSpec::regular("v3", DataType::Text));
    let table = h.db.alter_table("ks", "test", add).expect("add");
    let three = [
        ("v1", Datum::Int(3)),
        ("v2", Datum::text("three")),
        ("v3", Datum::text("tri")),
    ];
    insert(&h, &table, 3000, &three, WriteOptions::default());
    let table =
        h.db.alter_table("ks", "test", AlterTable::DropColumn("v2".into()))
            .expect("drop");
    let four = [("v1", Datum::Int(4)), ("v3", Datum::text("chetyre"))];
    insert(&h, &table, 4000, &four, WriteOptions::default());

    // SstDumpNoMetadata: PACKED_ROW[version](body).
    for (k, version, body) in [
        (1, 0, "04000000536F6E65"),
        (2, 0, "040000005374776F"),
        (3, 1, "060000000A00000053746872656553747269"),
        (4, 2, "080000005363686574797265"),
    ] {
        let value = packed_value(&h, &table, vec![Datum::Int(k)]);
        assert_eq!(hex(&value), format!("7A{version:02X}{body}"), "row {k}");
    }
    // SstDump: `{ <column id>: <value> }`, in key (hash) order.
    assert_eq!(
        h.db.dump().expect("dump"),
        lines(&[
            "SubDocKey(DocKey(0x1210, [1], []), [HT{ physical: 1000 }]) -> { 1: \"one\" }".into(),
            "SubDocKey(DocKey(0x9eaf, [4], []), [HT{ physical: 4000 }]) -> { 2: \"chetyre\" }".into(),
            "SubDocKey(DocKey(0xc0c4, [2], []), [HT{ physical: 2000 }]) -> { 1: \"two\" }".into(),
            "SubDocKey(DocKey(0xfca0, [3], []), [HT{ physical: 3000 }]) -> { 1: \"three\" 2: \"tri\" }".into(),
        ])
    );
    // Reads at the latest version: v2 is gone, rows packed before v3 existed read it NULL.
    assert_eq!(
        h.rows(&table, &Select::all(at(4000))),
        [
            vec![Datum::Int(1), Datum::Null],
            vec![Datum::Int(4), Datum::text("chetyre")],
            vec![Datum::Int(2), Datum::Null],
            vec![Datum::Int(3), Datum::text("tri")],
        ]
    );
}
