//! SELECT: clustering ranges in either order, reverse scans, projections, LIMIT, paging,
//! full scans next to other tables' rows, reads at past hybrid times.

mod common;

use std::ops::Bound;

use common::{Harness, at, t};
use docdb_table::{
    DataType, Datum, PagingState, RangeOrder, Select, Selector, Table, TableSpec, WriteOptions,
};

/// `events (h text, day int DESC, seq int ASC, v text, PRIMARY KEY ((h), day, seq))` with
/// days 1..=3 and seqs 1..=3 for partitions "a" and "b", written at 1000 + 10·day.
fn events(h: &Harness, colocated: bool) -> std::sync::Arc<Table> {
    let spec = TableSpec::new(if colocated { "events_c" } else { "events" })
        .hash_key("h", DataType::Text)
        .range_key_ordered("day", DataType::Int, RangeOrder::DESC)
        .range_key("seq", DataType::Int)
        .column("v", DataType::Text)
        .with_options(|o| o.colocated = colocated);
    let table = h.db.create_table("ks", &spec).expect("create");
    for p in ["a", "b"] {
        for day in 1..=3 {
            let mut b = h.db.batch(at(1000 + 10 * day as u64));
            for seq in 1..=3 {
                let values = [
                    ("h", t(p)),
                    ("day", Datum::Int(day)),
                    ("seq", Datum::Int(seq)),
                    ("v", t(&format!("{p}{day}{seq}"))),
                ];
                b.insert(&table, &values, &WriteOptions::default())
                    .expect("insert");
            }
            b.commit().expect("commit");
        }
    }
    table
}

fn v_of(rows: Vec<Vec<Datum>>) -> Vec<String> {
    rows.into_iter()
        .map(|r| match r.last() {
            Some(Datum::Text(s)) => s.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

fn part(p: &str) -> Select {
    Select::all(at(2000)).partition(vec![t(p)])
}

#[test]
fn partition_in_clustering_order_and_reverse() {
    let h = Harness::new();
    let e = events(&h, false);
    let expected = [
        "a31", "a32", "a33", "a21", "a22", "a23", "a11", "a12", "a13",
    ];
    assert_eq!(v_of(h.rows(&e, &part("a"))), expected);
    let mut reversed = expected.to_vec();
    reversed.reverse();
    assert_eq!(v_of(h.rows(&e, &part("a").reversed())), reversed);
    // Full key, and all rows of one day.
    let one = part("a").range_eq(vec![Datum::Int(2), Datum::Int(3)]);
    assert_eq!(v_of(h.rows(&e, &one)), ["a23"]);
    let day = part("b").range_eq(vec![Datum::Int(1)]);
    assert_eq!(v_of(h.rows(&e, &day)), ["b11", "b12", "b13"]);
}

#[test]
fn clustering_ranges_both_orders() {
    let h = Harness::new();
    let e = events(&h, true);
    // day is DESC: day >= 2 AND day < 3 is the key range of day 2.
    let days = part("a").range(
        Bound::Included(Datum::Int(2)),
        Bound::Excluded(Datum::Int(3)),
    );
    assert_eq!(v_of(h.rows(&e, &days)), ["a21", "a22", "a23"]);
    let days = part("a").range(Bound::Excluded(Datum::Int(1)), Bound::Unbounded);
    assert_eq!(
        v_of(h.rows(&e, &days)),
        ["a31", "a32", "a33", "a21", "a22", "a23"]
    );
    let days = part("a")
        .range(Bound::Unbounded, Bound::Included(Datum::Int(1)))
        .reversed();
    assert_eq!(v_of(h.rows(&e, &days)), ["a13", "a12", "a11"]);
    // seq is ASC, after an equality on day.
    let seqs = part("b").range_eq(vec![Datum::Int(3)]).range(
        Bound::Excluded(Datum::Int(1)),
        Bound::Included(Datum::Int(3)),
    );
    assert_eq!(v_of(h.rows(&e, &seqs)), ["b32", "b33"]);
    assert_eq!(v_of(h.rows(&e, &seqs.clone().reversed())), ["b33", "b32"]);
    let empty = part("b").range(
        Bound::Included(Datum::Int(3)),
        Bound::Excluded(Datum::Int(3)),
    );
    assert!(h.rows(&e, &empty).is_empty());
}

#[test]
fn projections_limit_and_paging() {
    let h = Harness::new();
    let e = events(&h, false);
    let select = part("a")
        .columns(vec![
            Selector::Column("seq".into()),
            Selector::WriteTime("v".into()),
            Selector::Column("v".into()),
        ])
        .limit(5);
    let page = h.page(&e, &select);
    assert_eq!(page.columns, ["seq", "writetime(v)", "v"]);
    assert_eq!(
        page.rows[0],
        vec![Datum::Int(1), Datum::BigInt(1030), t("a31")]
    );
    assert_eq!(page.rows.len(), 5);
    // Pages of 2 under LIMIT 5, both directions; the paging state survives encoding.
    for reverse in [false, true] {
        let mut select = select.clone().page_size(2);
        if reverse {
            select = select.reversed();
        }
        let mut seen = Vec::new();
        let mut state = None;
        loop {
            let mut s = select.clone();
            if let Some(state) = state.take() {
                s = s.after(state);
            }
            let page = h.page(&e, &s);
            assert!(page.rows.len() <= 2);
            seen.extend(v_of(page.rows));
            match page.paging_state {
                Some(next) => {
                    state = Some(PagingState::decode(&next.encode()).expect("decode"));
                }
                None => break,
            }
        }
        let all = v_of(h.rows(
            &e,
            &(if reverse {
                part("a").reversed()
            } else {
                part("a")
            }),
        ));
        assert_eq!(seen, all[..5].to_vec(), "reverse {reverse}");
    }
    assert!(PagingState::decode(b"\x01").is_err());
    assert!(PagingState::decode(b"").is_err());
}

/// A full scan of an un-prefixed table skips the colocated tables' rows between its own,
/// and a colocated table scans only its own prefix.
#[test]
fn full_scans_across_tables_and_past_reads() {
    let h = Harness::new();
    let own = events(&h, false);
    let colocated = events(&h, true);
    assert_eq!(h.rows(&own, &Select::all(at(2000))).len(), 18);
    assert_eq!(h.rows(&colocated, &Select::all(at(2000))).len(), 18);
    assert_eq!(h.rows(&own, &Select::all(at(2000)).reversed()).len(), 18);
    // Day 3 was written at 1030: a read at 1020 sees days 1 and 2 only.
    assert_eq!(h.rows(&own, &Select::all(at(1020))).len(), 12);
    assert_eq!(
        h.rows(&colocated, &Select::all(at(1010)).reversed()).len(),
        6
    );
    assert!(h.rows(&own, &Select::all(at(999))).is_empty());
    // Range conditions without a partition filter every row (ALLOW FILTERING).
    let filtered = Select::all(at(2000))
        .range_eq(vec![Datum::Int(2)])
        .range(Bound::Included(Datum::Int(3)), Bound::Unbounded);
    // Partitions come in hash order.
    let mut expected = vec![(common::hash_of("a"), "a23"), (common::hash_of("b"), "b23")];
    expected.sort();
    let expected: Vec<&str> = expected.into_iter().map(|(_, v)| v).collect();
    assert_eq!(v_of(h.rows(&own, &filtered)), expected);
}
