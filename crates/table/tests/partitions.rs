//! YCQL partitions: `DELETE FROM t WHERE h = ?` (a row tombstone per row and on the static
//! row, as YugabyteDB's `QLWriteOperation::ApplyDelete` writes them), range deletes, bounded
//! deletes of large partitions, and static-only rows (a partition with static values and no
//! clustering row reads as one row with NULL clustering and regular columns).
//!
//! Expected dumps follow format.md: §3 (a static row's DocKey has the hash part and no range
//! components, so it sorts before its partition's rows; partitions sort by their 16-bit
//! hash), §4 (row-level records before subkeys, `J` system columns before `K` columns, newer
//! versions first, write ids within a batch), §5 (`DEL`, `; timestamp: N`), §7 (a full
//! compaction drops everything at or below the cutoff under a tombstone, and the tombstone).

mod common;

use std::ops::Bound;
use std::sync::Arc;

use common::{Harness, NONE, at, hash_of, lines, t};
use docdb_table::query::RangeCondition;
use docdb_table::{DataType, Datum, Select, Selector, Table, TableSpec, Update, WriteOptions};

/// `name (h text, r int, st text STATIC, v int, PRIMARY KEY ((h), r))`: h = ColumnId(0),
/// r = 1, st = 2, v = 3.
fn table(h: &Harness, name: &str, packed: bool, colocated: bool) -> Arc<Table> {
    let spec = TableSpec::new(name)
        .hash_key("h", DataType::Text)
        .range_key("r", DataType::Int)
        .static_column("st", DataType::Text)
        .column("v", DataType::Int)
        .with_options(|o| {
            o.packed = packed;
            o.colocated = colocated;
        });
    h.db.create_table("ks", &spec).expect("create")
}

/// INSERT of one clustering row (with the static column when `st` is given).
fn put(h: &Harness, tb: &Table, micros: u64, p: &str, r: i32, st: Option<&str>, v: i32) {
    let mut values = vec![("h", t(p)), ("r", Datum::Int(r)), ("v", Datum::Int(v))];
    if let Some(st) = st {
        values.push(("st", t(st)));
    }
    let mut b = h.db.batch(at(micros));
    b.insert(tb, &values, &NONE).expect("insert");
    b.commit().expect("commit");
}

/// INSERT of the hash key and the static column only.
fn put_static(h: &Harness, tb: &Table, micros: u64, p: &str, st: &str) {
    let mut b = h.db.batch(at(micros));
    b.insert(tb, &[("h", t(p)), ("st", t(st))], &NONE)
        .expect("static insert");
    b.commit().expect("commit");
}

fn delete_partition(h: &Harness, tb: &Table, micros: u64, p: &str, opts: WriteOptions) -> usize {
    let mut b = h.db.batch(at(micros));
    let n = b
        .delete_partition(tb, &[("h", t(p))], &opts)
        .expect("delete partition");
    b.commit().expect("commit");
    n
}

/// A full row in schema order: h, r, st, v.
fn row(p: &str, r: i32, st: Option<&str>, v: i32) -> Vec<Datum> {
    vec![
        t(p),
        Datum::Int(r),
        st.map_or(Datum::Null, t),
        Datum::Int(v),
    ]
}

/// A static-only row: NULL clustering and regular columns.
fn static_row(p: &str, st: &str) -> Vec<Datum> {
    vec![t(p), Datum::Null, t(st), Datum::Null]
}

fn part(p: &str, micros: u64) -> Select {
    Select::all(at(micros)).partition(vec![t(p)])
}

/// Every row of `select`, fetched `size` rows per page.
fn paged(h: &Harness, tb: &Table, select: &Select, size: usize) -> Vec<Vec<Datum>> {
    let mut out = Vec::new();
    let mut next = select.clone().page_size(size);
    loop {
        let page = h.page(tb, &next);
        assert!(page.rows.len() <= size);
        out.extend(page.rows);
        match page.paging_state {
            Some(state) => next = select.clone().page_size(size).after(state),
            None => return out,
        }
    }
}

/// The key order of partitions: by 16-bit hash (format.md §3, §6).
fn by_hash(mut partitions: Vec<&str>) -> Vec<&str> {
    partitions.sort_by_key(|p| hash_of(p));
    partitions
}

#[test]
fn partition_delete_hides_rows_and_statics_at_and_after_its_time() {
    for packed in [false, true] {
        let h = Harness::new();
        let tb = table(&h, "p", packed, false);
        put(&h, &tb, 1000, "a", 1, Some("s1"), 10);
        put(&h, &tb, 1100, "a", 2, None, 20);
        put(&h, &tb, 1200, "b", 1, Some("t1"), 30);
        assert_eq!(delete_partition(&h, &tb, 2000, "a", NONE), 3);

        // Every read path: partition SELECT, full scans both ways, point reads.
        assert!(h.rows(&tb, &part("a", 2000)).is_empty());
        assert!(h.rows(&tb, &part("a", 2000).reversed()).is_empty());
        let b_rows = vec![row("b", 1, Some("t1"), 30)];
        assert_eq!(h.rows(&tb, &Select::all(at(2000))), b_rows);
        assert_eq!(h.rows(&tb, &Select::all(at(2000)).reversed()), b_rows);
        let a1 = [t("a"), Datum::Int(1)];
        assert_eq!(h.db.row_values(&tb, &a1, at(2000)).expect("read"), None);
        let st_only = part("a", 2000).columns(vec![Selector::Column("st".into())]);
        assert!(h.rows(&tb, &st_only).is_empty());

        // Before the delete the partition is intact.
        let before = vec![row("a", 1, Some("s1"), 10), row("a", 2, Some("s1"), 20)];
        assert_eq!(h.rows(&tb, &part("a", 1999)), before);
        assert!(h.db.row_values(&tb, &a1, at(1999)).expect("read").is_some());

        // Later writes into the partition are visible; the static column stays deleted.
        put(&h, &tb, 3000, "a", 3, None, 40);
        assert_eq!(h.rows(&tb, &part("a", 3000)), [row("a", 3, None, 40)]);
        let mut b = h.db.batch(at(3100));
        b.update(
            &tb,
            &[("h", t("a"))],
            &[("st", Update::Set(t("s2")))],
            &NONE,
        )
        .expect("static update");
        b.commit().expect("commit");
        assert_eq!(h.rows(&tb, &part("a", 3100)), [row("a", 3, Some("s2"), 40)]);
        assert_eq!(h.rows(&tb, &part("b", 3100)), b_rows);
    }
}

#[test]
fn partition_delete_dump_and_compaction() {
    let h = Harness::new();
    let tb = table(&h, "p", false, false);
    put(&h, &tb, 1000, "a", 1, Some("s1"), 10);
    put(&h, &tb, 1100, "a", 2, None, 20);
    put(&h, &tb, 1200, "b", 1, Some("t1"), 30);
    delete_partition(&h, &tb, 2000, "a", NONE);
    put(&h, &tb, 3000, "a", 3, None, 40);

    let doc = |p: &str, r: Option<i32>| {
        let range = r.map_or(String::new(), |r| r.to_string());
        format!("DocKey(0x{:04x}, [\"{p}\"], [{range}])", hash_of(p))
    };
    let (sa, a1, a2, a3) = (
        doc("a", None),
        doc("a", Some(1)),
        doc("a", Some(2)),
        doc("a", Some(3)),
    );
    let (sb, b1) = (doc("b", None), doc("b", Some(1)));
    // INSERT writes the static column first (w 0), then the liveness column and v. The
    // DELETE tombstones the static row (w 0), then the rows in key order (w 1, 2).
    let a_before = vec![
        format!("SubDocKey({sa}, [HT{{ physical: 2000 }}]) -> DEL"),
        format!("SubDocKey({sa}, [ColumnId(2); HT{{ physical: 1000 }}]) -> \"s1\""),
        format!("SubDocKey({a1}, [HT{{ physical: 2000 w: 1 }}]) -> DEL"),
        format!("SubDocKey({a1}, [SystemColumnId(0); HT{{ physical: 1000 w: 1 }}]) -> null"),
        format!("SubDocKey({a1}, [ColumnId(3); HT{{ physical: 1000 w: 2 }}]) -> 10"),
        format!("SubDocKey({a2}, [HT{{ physical: 2000 w: 2 }}]) -> DEL"),
        format!("SubDocKey({a2}, [SystemColumnId(0); HT{{ physical: 1100 }}]) -> null"),
        format!("SubDocKey({a2}, [ColumnId(3); HT{{ physical: 1100 w: 1 }}]) -> 20"),
        format!("SubDocKey({a3}, [SystemColumnId(0); HT{{ physical: 3000 }}]) -> null"),
        format!("SubDocKey({a3}, [ColumnId(3); HT{{ physical: 3000 w: 1 }}]) -> 40"),
    ];
    let b_lines = vec![
        format!("SubDocKey({sb}, [ColumnId(2); HT{{ physical: 1200 }}]) -> \"t1\""),
        format!("SubDocKey({b1}, [SystemColumnId(0); HT{{ physical: 1200 w: 1 }}]) -> null"),
        format!("SubDocKey({b1}, [ColumnId(3); HT{{ physical: 1200 w: 2 }}]) -> 30"),
    ];
    let a_after = a_before[8..].to_vec();
    let dump = |a: &[String]| {
        let mut out = Vec::new();
        for p in by_hash(vec!["a", "b"]) {
            out.extend(if p == "a" {
                a.to_vec()
            } else {
                b_lines.clone()
            });
        }
        lines(&out)
    };
    assert_eq!(h.dump(), dump(&a_before));

    let reads = |h: &Harness| {
        [2000, 2500, 3000].map(|micros| {
            (
                h.rows(&tb, &Select::all(at(micros))),
                h.rows(&tb, &part("a", micros).reversed()),
            )
        })
    };
    let answers = reads(&h);
    assert_eq!(answers[2].1, [row("a", 3, None, 40)]);
    // A compaction with the cutoff below the delete keeps everything it hides.
    h.compact(1999);
    assert_eq!(h.dump(), dump(&a_before));
    // At the delete's time: the tombstones and all they hide go.
    h.compact(2000);
    assert_eq!(h.dump(), dump(&a_after));
    assert_eq!(reads(&h), answers);
}

#[test]
fn partition_delete_using_timestamp_tombstones_every_column() {
    let h = Harness::new();
    let tb = table(&h, "p", false, false);
    put(&h, &tb, 1000, "a", 1, Some("s1"), 10);
    let mut b = h.db.batch(at(2000));
    b.delete_partition(&tb, &[("h", t("a"))], &WriteOptions::timestamp(1500))
        .expect("delete");
    // YugabyteDB's DeleteRow with a user timestamp: every non-key column of the schema,
    // then the liveness column, per deleted document (static row first). The timestamp is
    // newer than every stored write (1000 µs), so none of the tombstones is skipped.
    assert_eq!(b.commit().expect("commit"), 6);
    let sa = format!("DocKey(0x{:04x}, [\"a\"], [])", hash_of("a"));
    let a1 = format!("DocKey(0x{:04x}, [\"a\"], [1])", hash_of("a"));
    let expected = [
        format!(
            "SubDocKey({sa}, [SystemColumnId(0); HT{{ physical: 2000 w: 2 }}]) -> DEL; timestamp: 1500"
        ),
        format!("SubDocKey({sa}, [ColumnId(2); HT{{ physical: 2000 }}]) -> DEL; timestamp: 1500"),
        format!("SubDocKey({sa}, [ColumnId(2); HT{{ physical: 1000 }}]) -> \"s1\""),
        format!(
            "SubDocKey({sa}, [ColumnId(3); HT{{ physical: 2000 w: 1 }}]) -> DEL; timestamp: 1500"
        ),
        format!(
            "SubDocKey({a1}, [SystemColumnId(0); HT{{ physical: 2000 w: 5 }}]) -> DEL; timestamp: 1500"
        ),
        format!("SubDocKey({a1}, [SystemColumnId(0); HT{{ physical: 1000 w: 1 }}]) -> null"),
        format!(
            "SubDocKey({a1}, [ColumnId(2); HT{{ physical: 2000 w: 3 }}]) -> DEL; timestamp: 1500"
        ),
        format!(
            "SubDocKey({a1}, [ColumnId(3); HT{{ physical: 2000 w: 4 }}]) -> DEL; timestamp: 1500"
        ),
        format!("SubDocKey({a1}, [ColumnId(3); HT{{ physical: 1000 w: 2 }}]) -> 10"),
    ];
    assert_eq!(h.dump(), lines(&expected));
    assert!(h.rows(&tb, &Select::all(at(2000))).is_empty());
    assert_eq!(
        h.rows(&tb, &Select::all(at(1999))),
        [row("a", 1, Some("s1"), 10)]
    );
}

#[test]
fn paging_across_a_deleted_partition() {
    for colocated in [false, true] {
        let h = Harness::new();
        let tb = table(&h, "p", true, colocated);
        let parts = by_hash(vec!["a", "b", "c", "d", "e"]);
        for (i, p) in parts.iter().enumerate() {
            for r in 1..=3 {
                put(
                    &h,
                    &tb,
                    1000 + 10 * i as u64 + r as u64,
                    p,
                    r,
                    Some(p),
                    r * 10,
                );
            }
        }
        // Delete a partition in the middle of the key order.
        let gone = parts[2];
        assert_eq!(delete_partition(&h, &tb, 2000, gone, NONE), 4);
        let expected: Vec<Vec<Datum>> = parts
            .iter()
            .filter(|p| **p != gone)
            .flat_map(|p| (1..=3).map(move |r| row(p, r, Some(p), r * 10)))
            .collect();
        let all = Select::all(at(2000));
        assert_eq!(h.rows(&tb, &all), expected);
        let mut reversed = expected.clone();
        reversed.reverse();
        for size in [1, 2, 4] {
            assert_eq!(paged(&h, &tb, &all, size), expected, "page size {size}");
            assert_eq!(paged(&h, &tb, &all.clone().reversed(), size), reversed);
        }
        // LIMIT across pages still counts only live rows.
        let limited = paged(&h, &tb, &all.clone().limit(7), 3);
        assert_eq!(limited, expected[..7]);
        // Before the delete, all 15 rows.
        assert_eq!(paged(&h, &tb, &Select::all(at(1999)), 4).len(), 15);
    }
}

#[test]
fn range_delete_on_clustering_columns() {
    let h = Harness::new();
    let tb = table(&h, "p", true, false);
    for r in 1..=5 {
        put(&h, &tb, 1000 + r as u64, "a", r, Some("s"), r);
        put(&h, &tb, 1100 + r as u64, "b", r, None, r);
    }
    // DELETE FROM p WHERE h = 'a' AND r > 2 AND r <= 4: rows 3 and 4, not the static row.
    let cond = RangeCondition {
        lower: Bound::Excluded(Datum::Int(2)),
        upper: Bound::Included(Datum::Int(4)),
    };
    let mut b = h.db.batch(at(2000));
    let n = b
        .delete_range(&tb, &[("h", t("a"))], Some(&cond), &NONE)
        .expect("range delete");
    assert_eq!(n, 2);
    assert_eq!(b.commit().expect("commit"), 2);
    let a =
        |rs: &[i32]| -> Vec<Vec<Datum>> { rs.iter().map(|&r| row("a", r, Some("s"), r)).collect() };
    assert_eq!(h.rows(&tb, &part("a", 2000)), a(&[1, 2, 5]));
    assert_eq!(h.rows(&tb, &part("a", 1999)), a(&[1, 2, 3, 4, 5]));
    assert_eq!(h.rows(&tb, &part("b", 2000)).len(), 5);
    // The whole primary key is a row DELETE.
    let mut b = h.db.batch(at(3000));
    b.delete_range(&tb, &[("h", t("a")), ("r", Datum::Int(5))], None, &NONE)
        .expect("row delete");
    b.commit().expect("commit");
    assert_eq!(h.rows(&tb, &part("a", 3000)), a(&[1, 2]));
    // Restrictions must be a key prefix, on key columns only.
    let mut b = h.db.batch(at(4000));
    assert!(
        b.delete_range(&tb, &[("r", Datum::Int(1))], None, &NONE)
            .is_err()
    );
    assert!(
        b.delete_range(&tb, &[("h", t("a")), ("v", Datum::Int(1))], None, &NONE)
            .is_err()
    );
}

#[test]
fn bounded_partition_delete_in_batches() {
    let h = Harness::new();
    let tb = table(&h, "p", true, false);
    for r in 1..=5 {
        put(&h, &tb, 1000 + r as u64, "a", r, Some("s"), r);
    }
    put(&h, &tb, 1100, "b", 1, Some("t"), 1);
    let mut resume = None;
    let mut counts = Vec::new();
    let mut micros = 2000;
    loop {
        let mut b = h.db.batch(at(micros));
        let progress = b
            .delete_range_bounded(&tb, &[("h", t("a"))], None, 2, resume.as_ref(), &NONE)
            .expect("bounded delete");
        b.commit().expect("commit");
        counts.push(progress.deleted);
        // Between batches the rows behind the resume point are gone, the rest still there.
        let left = h.rows(&tb, &part("a", micros)).len();
        assert_eq!(left, 5 - counts.iter().sum::<usize>() + 1);
        micros += 1000;
        match progress.resume {
            Some(state) => resume = Some(state),
            None => break,
        }
    }
    // The static row and two rows, two rows, the last row.
    assert_eq!(counts, [3, 2, 1]);
    assert!(h.rows(&tb, &part("a", micros)).is_empty());
    assert_eq!(
        h.rows(&tb, &Select::all(at(micros))),
        [row("b", 1, Some("t"), 1)]
    );
}

#[test]
fn static_only_rows() {
    let h = Harness::new();
    let tb = table(&h, "p", true, false);
    put_static(&h, &tb, 1000, "c", "only");
    // No liveness column: the static row alone (format.md §3: hash part, no range part).
    let sc = format!("DocKey(0x{:04x}, [\"c\"], [])", hash_of("c"));
    assert_eq!(
        h.dump(),
        lines(&[format!(
            "SubDocKey({sc}, [ColumnId(2); HT{{ physical: 1000 }}]) -> \"only\""
        )])
    );
    let alone = vec![static_row("c", "only")];
    assert_eq!(h.rows(&tb, &Select::all(at(1000))), alone);
    assert_eq!(h.rows(&tb, &Select::all(at(1000)).reversed()), alone);
    assert_eq!(h.rows(&tb, &part("c", 1000)), alone);
    assert_eq!(h.rows(&tb, &part("c", 1000).reversed()), alone);
    assert!(h.rows(&tb, &part("c", 999)).is_empty());
    // Only with static columns read, and not under a clustering restriction.
    let st = part("c", 1000).columns(vec![
        Selector::Column("r".into()),
        Selector::Column("st".into()),
        Selector::WriteTime("st".into()),
    ]);
    assert_eq!(
        h.rows(&tb, &st),
        [vec![Datum::Null, t("only"), Datum::BigInt(1000)]]
    );
    let v_only = part("c", 1000).columns(vec![Selector::Column("v".into())]);
    assert!(h.rows(&tb, &v_only).is_empty());
    assert!(
        h.rows(&tb, &part("c", 1000).range_eq(vec![Datum::Int(1)]))
            .is_empty()
    );
    let ranged = part("c", 1000).range(Bound::Unbounded, Bound::Included(Datum::Int(9)));
    assert!(h.rows(&tb, &ranged).is_empty());

    // Once a clustering row exists, the static values appear on it instead.
    put(&h, &tb, 2000, "c", 5, None, 50);
    assert_eq!(
        h.rows(&tb, &part("c", 2000)),
        [row("c", 5, Some("only"), 50)]
    );
    assert_eq!(
        h.rows(&tb, &Select::all(at(2000)).reversed()),
        [row("c", 5, Some("only"), 50)]
    );
    assert_eq!(h.rows(&tb, &part("c", 1999)), alone);
    // Its row deleted, the partition is static-only again.
    let mut b = h.db.batch(at(3000));
    b.delete_row(&tb, &[("h", t("c")), ("r", Datum::Int(5))], &NONE)
        .expect("delete");
    b.commit().expect("commit");
    assert_eq!(h.rows(&tb, &part("c", 3000)), alone);
    // A NULL static value leaves nothing (YugabyteDB TestStaticColumn.testUpdate).
    let mut b = h.db.batch(at(4000));
    b.update(
        &tb,
        &[("h", t("c"))],
        &[("st", Update::Set(Datum::Null))],
        &NONE,
    )
    .expect("update");
    b.commit().expect("commit");
    assert!(h.rows(&tb, &Select::all(at(4000))).is_empty());

    // INSERT without the range key must give static columns only.
    let mut b = h.db.batch(at(5000));
    assert!(
        b.insert(&tb, &[("h", t("c")), ("v", Datum::Int(1))], &NONE)
            .is_err()
    );
    assert!(
        b.insert(
            &tb,
            &[("h", t("c")), ("st", t("x")), ("v", Datum::Int(1))],
            &NONE
        )
        .is_err()
    );
    assert!(b.insert(&tb, &[("h", t("c"))], &NONE).is_err());
}

#[test]
fn static_only_rows_in_scans_and_pages() {
    for colocated in [false, true] {
        let h = Harness::new();
        let tb = table(&h, "p", false, colocated);
        let parts = by_hash(vec!["a", "b", "c", "d", "e", "f"]);
        // Partitions alternate: static-only, rows with statics, rows without statics.
        let mut expected = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            let micros = 1000 + 10 * i as u64;
            match i % 3 {
                0 => {
                    put_static(&h, &tb, micros, p, p);
                    expected.push(static_row(p, p));
                }
                1 => {
                    for r in 1..=2 {
                        put(&h, &tb, micros + r as u64, p, r, Some(p), r);
                        expected.push(row(p, r, Some(p), r));
                    }
                }
                _ => {
                    put(&h, &tb, micros, p, 1, None, 1);
                    expected.push(row(p, 1, None, 1));
                }
            }
        }
        let all = Select::all(at(1100));
        let mut reversed = expected.clone();
        reversed.reverse();
        assert_eq!(h.rows(&tb, &all), expected);
        assert_eq!(h.rows(&tb, &all.clone().reversed()), reversed);
        for size in [1, 2, 3] {
            assert_eq!(paged(&h, &tb, &all, size), expected, "page size {size}");
            assert_eq!(paged(&h, &tb, &all.clone().reversed(), size), reversed);
        }
        // A partition whose only row is deleted reads as static-only (its statics remain).
        let p = parts[1];
        let mut b = h.db.batch(at(2000));
        for r in 1..=2 {
            b.delete_row(&tb, &[("h", t(p)), ("r", Datum::Int(r))], &NONE)
                .expect("delete");
        }
        b.commit().expect("commit");
        assert_eq!(h.rows(&tb, &part(p, 2000)), [static_row(p, p)]);
        assert_eq!(
            paged(&h, &tb, &Select::all(at(2000)), 1).len(),
            expected.len() - 1
        );
        // A partition delete removes a static-only row too.
        assert_eq!(delete_partition(&h, &tb, 3000, parts[0], NONE), 1);
        assert!(h.rows(&tb, &part(parts[0], 3000)).is_empty());
        assert_eq!(
            h.rows(&tb, &part(parts[0], 2999)),
            [static_row(parts[0], parts[0])]
        );
    }
}
