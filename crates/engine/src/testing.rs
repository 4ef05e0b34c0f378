//! A conformance suite that every [`Engine`] backend must pass.
//!
//! Each `check_*` function takes a `make` function that opens a fresh, empty engine with
//! the given compaction-filter factory and returns a handle that dereferences to it (a
//! `Box<MemEngine>`, or for an on-disk engine a struct that also owns its temporary
//! directory). [`conformance_tests!`](crate::conformance_tests) expands to one `#[test]` per
//! check; [`conformance_suite`] runs them all in one go.
//!
//! The checks panic on failure (they are test code). The randomized check prints its seed;
//! set `ENGINE_CONFORMANCE_SEED=<n>` to replay one seed.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::Rng;
use crate::{
    CompactionContext, CompactionDecision, CompactionFilter, CompactionFilterFactory, Engine,
    EngineIterator, IterOptions, KvRead, Layered, Overlay, WriteBatch, WriteOptions,
};

/// The argument of a conformance `make` function: the compaction-filter factory to open the
/// engine with.
pub type FilterArg = Option<Arc<dyn CompactionFilterFactory>>;

/// Expands to one `#[test]` function per conformance check, each calling `$make` (an
/// expression of type `Fn(FilterArg) -> H` where `H: Deref<Target = impl Engine>`).
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr) => {
        #[test]
        fn conformance_point_ops() {
            $crate::testing::check_point_ops(&$make);
        }
        #[test]
        fn conformance_batch_order() {
            $crate::testing::check_batch_order(&$make);
        }
        #[test]
        fn conformance_batch_atomicity() {
            $crate::testing::check_batch_atomicity(&$make);
        }
        #[test]
        fn conformance_iterator_navigation() {
            $crate::testing::check_iterator_navigation(&$make);
        }
        #[test]
        fn conformance_iterator_bounds() {
            $crate::testing::check_iterator_bounds(&$make);
        }
        #[test]
        fn conformance_iterator_reset() {
            $crate::testing::check_iterator_reset(&$make);
        }
        #[test]
        fn conformance_iterator_consistent_view() {
            $crate::testing::check_iterator_consistent_view(&$make);
        }
        #[test]
        fn conformance_snapshot_isolation() {
            $crate::testing::check_snapshot_isolation(&$make);
        }
        #[test]
        fn conformance_flush_and_compact_preserve_data() {
            $crate::testing::check_flush_and_compact_preserve_data(&$make);
        }
        #[test]
        fn conformance_compaction_filter() {
            $crate::testing::check_compaction_filter(&$make);
        }
        #[test]
        fn conformance_randomized_against_model() {
            $crate::testing::check_randomized_against_model(&$make);
        }
        #[test]
        fn conformance_layered_against_model() {
            $crate::testing::check_layered_against_model(&$make);
        }
        #[test]
        fn conformance_statistics() {
            $crate::testing::check_statistics(&$make);
        }
    };
}

/// Runs every check in order.
pub fn conformance_suite<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    check_point_ops(make);
    check_batch_order(make);
    check_batch_atomicity(make);
    check_iterator_navigation(make);
    check_iterator_bounds(make);
    check_iterator_reset(make);
    check_iterator_consistent_view(make);
    check_snapshot_isolation(make);
    check_flush_and_compact_preserve_data(make);
    check_compaction_filter(make);
    check_randomized_against_model(make);
    check_layered_against_model(make);
    check_statistics(make);
}

// ---------------------------------------------------------------------------------------
// Helpers

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;
type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn put<E: Engine>(e: &E, key: &[u8], value: &[u8]) {
    let mut batch = WriteBatch::new();
    batch.put(key, value);
    e.write(&batch, WriteOptions::default()).expect("write");
}

fn delete<E: Engine>(e: &E, key: &[u8]) {
    let mut batch = WriteBatch::new();
    batch.delete(key);
    e.write(&batch, WriteOptions::default()).expect("write");
}

fn pairs(items: &[(&str, &str)]) -> Pairs {
    items
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

/// The current key, or `None` if the iterator is not valid.
fn at<I: EngineIterator>(it: &I) -> Option<String> {
    if it.valid().expect("iterator status") {
        Some(String::from_utf8_lossy(it.key()).into_owned())
    } else {
        None
    }
}

fn scan_forward<R: KvRead>(reader: &R, opts: IterOptions) -> Pairs {
    let mut it = reader.iterator(opts).expect("iterator");
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid().expect("iterator status") {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

fn scan_backward<R: KvRead>(reader: &R, opts: IterOptions) -> Pairs {
    let mut it = reader.iterator(opts).expect("iterator");
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid().expect("iterator status") {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    out.reverse();
    out
}

fn get<R: KvRead>(reader: &R, key: &str) -> Option<String> {
    reader
        .get(key.as_bytes())
        .expect("get")
        .map(|v| String::from_utf8_lossy(&v).into_owned())
}

fn some(s: &str) -> Option<String> {
    Some(s.to_owned())
}

// ---------------------------------------------------------------------------------------
// Checks

/// Put, overwrite, delete, empty values and keys, binary keys, empty batches.
pub fn check_point_ops<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let handle = make(None);
    let e = &*handle;
    assert_eq!(e.get(b"a").expect("get"), None);
    put(e, b"a", b"1");
    assert_eq!(get(e, "a"), some("1"));
    put(e, b"a", b"2");
    assert_eq!(get(e, "a"), some("2"), "overwrite");
    delete(e, b"a");
    assert_eq!(get(e, "a"), None, "deleted");
    delete(e, b"never-written");
    assert_eq!(get(e, "never-written"), None);

    put(e, b"empty", b"");
    assert_eq!(
        e.get(b"empty").expect("get"),
        Some(Vec::new()),
        "empty value is present"
    );
    put(e, b"", b"empty key");
    assert_eq!(e.get(b"").expect("get"), Some(b"empty key".to_vec()));

    let binary: [&[u8]; 4] = [b"\x00", b"\x00\x00", b"\xff", b"\xff\xff\x00"];
    for (i, key) in binary.iter().enumerate() {
        put(e, key, &[i as u8]);
    }
    for (i, key) in binary.iter().enumerate() {
        assert_eq!(e.get(key).expect("get"), Some(vec![i as u8]));
    }
    let keys: Vec<Vec<u8>> = scan_forward(e, IterOptions::new())
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let expected: Vec<Vec<u8>> = [
        &b""[..],
        b"\x00",
        b"\x00\x00",
        b"empty",
        b"\xff",
        b"\xff\xff\x00",
    ]
    .iter()
    .map(|k| k.to_vec())
    .collect();
    assert_eq!(keys, expected, "bytewise order");

    e.write(&WriteBatch::new(), WriteOptions::default())
        .expect("empty batch");
    e.write(&WriteBatch::new(), WriteOptions::sync())
        .expect("empty synced batch");
    put(e, b"synced", b"x");
    let mut batch = WriteBatch::new();
    batch.put(&b"synced2"[..], &b"y"[..]);
    e.write(&batch, WriteOptions::sync()).expect("synced write");
    assert_eq!(get(e, "synced2"), some("y"));
}

/// Operations in one batch apply in order; the last one on a key wins; each takes one
/// sequence number.
pub fn check_batch_order<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let handle = make(None);
    let e = &*handle;
    put(e, b"pre", b"old");
    let mut batch = WriteBatch::new();
    batch.put(&b"k1"[..], &b"v1"[..]);
    batch.put(&b"k2"[..], &b"v2"[..]);
    batch.delete(&b"k1"[..]);
    batch.put(&b"k3"[..], &b"v3"[..]);
    batch.put(&b"k2"[..], &b"v2b"[..]);
    batch.delete(&b"pre"[..]);
    batch.put(&b"pre"[..], &b"new"[..]);
    assert_eq!(batch.len(), 7);
    assert!(!batch.is_empty());
    assert!(batch.approximate_size() >= 4 * 2 + 3 * 2);
    let before = e.last_sequence();
    e.write(&batch, WriteOptions::default()).expect("write");
    assert_eq!(
        e.last_sequence(),
        before + 7,
        "one sequence number per operation"
    );
    e.write(&WriteBatch::new(), WriteOptions::default())
        .expect("empty write");
    e.flush().expect("flush");
    assert_eq!(
        e.last_sequence(),
        before + 7,
        "an empty batch or a flush writes nothing"
    );
    assert_eq!(get(e, "k1"), None, "put then delete");
    assert_eq!(get(e, "k2"), some("v2b"), "last put wins");
    assert_eq!(get(e, "k3"), some("v3"));
    assert_eq!(get(e, "pre"), some("new"), "delete then put");
    assert_eq!(
        scan_forward(e, IterOptions::new()),
        pairs(&[("k2", "v2b"), ("k3", "v3"), ("pre", "new")])
    );
}

/// Concurrent readers never see part of a batch.
pub fn check_batch_atomicity<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    const KEYS: usize = 16;
    const ROUNDS: u32 = 300;
    let handle = make(None);
    let e = &*handle;
    let write_round = |round: u32| {
        let mut batch = WriteBatch::new();
        for k in 0..KEYS {
            batch.put(format!("key{k:02}"), round.to_be_bytes());
        }
        e.write(&batch, WriteOptions::default()).expect("write");
    };
    write_round(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for round in 1..=ROUNDS {
                write_round(round);
            }
            done.store(true, Ordering::SeqCst);
        });
        let mut checks = 0u32;
        while !done.load(Ordering::SeqCst) || checks < 3 {
            checks += 1;
            let snap = e.snapshot();
            let values: Vec<Vec<u8>> = (0..KEYS)
                .map(|k| {
                    snap.get(format!("key{k:02}").as_bytes())
                        .expect("get")
                        .expect("key present")
                })
                .collect();
            assert!(
                values.windows(2).all(|w| w.first() == w.last()),
                "snapshot saw a partial batch: {values:?}"
            );
            let scanned = scan_forward(e, IterOptions::new());
            assert_eq!(scanned.len(), KEYS);
            assert!(
                scanned
                    .windows(2)
                    .all(|w| w.first().map(|p| &p.1) == w.last().map(|p| &p.1)),
                "iterator saw a partial batch"
            );
        }
    });
    assert_eq!(
        e.get(b"key00").expect("get"),
        Some(ROUNDS.to_be_bytes().to_vec())
    );
}

/// Seeks, steps and direction changes on an unbounded iterator.
pub fn check_iterator_navigation<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let handle = make(None);
    let e = &*handle;

    // Empty engine.
    let mut it = e.iterator(IterOptions::new()).expect("iterator");
    assert_eq!(at(&it), None, "unpositioned");
    it.seek_to_first();
    assert_eq!(at(&it), None);
    it.seek_to_last();
    assert_eq!(at(&it), None);
    it.seek(b"a");
    assert_eq!(at(&it), None);
    it.seek_for_prev(b"a");
    assert_eq!(at(&it), None);
    drop(it);

    for key in ["b", "d", "f", "h"] {
        put(e, key.as_bytes(), format!("v{key}").as_bytes());
    }
    let mut it = e.iterator(IterOptions::new()).expect("iterator");
    assert_eq!(at(&it), None, "unpositioned");
    assert_eq!(it.key(), b"", "key() when invalid");
    assert_eq!(it.value(), b"", "value() when invalid");
    it.next();
    assert_eq!(at(&it), None, "next on unpositioned iterator");

    it.seek_to_first();
    assert_eq!(at(&it), some("b"));
    assert_eq!(it.value(), b"vb");
    it.next();
    assert_eq!(at(&it), some("d"));
    it.next();
    it.next();
    assert_eq!(at(&it), some("h"));
    it.next();
    assert_eq!(at(&it), None, "past the end");
    it.next();
    assert_eq!(at(&it), None, "next on exhausted iterator");
    it.prev();
    assert_eq!(at(&it), None, "prev on exhausted iterator");

    it.seek_to_last();
    assert_eq!(at(&it), some("h"));
    it.prev();
    assert_eq!(at(&it), some("f"));
    it.prev();
    it.prev();
    assert_eq!(at(&it), some("b"));
    it.prev();
    assert_eq!(at(&it), None, "before the start");

    for (target, expected) in [
        ("a", some("b")),
        ("c", some("d")),
        ("d", some("d")),
        ("h", some("h")),
        ("z", None),
    ] {
        it.seek(target.as_bytes());
        assert_eq!(at(&it), expected, "seek({target})");
    }
    it.seek(b"");
    assert_eq!(at(&it), some("b"), "seek(empty)");
    for (target, expected) in [
        ("a", None),
        ("b", some("b")),
        ("c", some("b")),
        ("e", some("d")),
        ("h", some("h")),
        ("z", some("h")),
    ] {
        it.seek_for_prev(target.as_bytes());
        assert_eq!(at(&it), expected, "seek_for_prev({target})");
    }
    it.seek_for_prev(b"d\x00");
    assert_eq!(at(&it), some("d"), "seek_for_prev just past a key");
    it.seek(b"c\xff");
    assert_eq!(at(&it), some("d"), "seek just before a key");

    // Direction changes.
    it.seek(b"d");
    it.next();
    assert_eq!(at(&it), some("f"));
    it.prev();
    assert_eq!(at(&it), some("d"));
    it.prev();
    assert_eq!(at(&it), some("b"));
    it.next();
    assert_eq!(at(&it), some("d"));
    it.seek_for_prev(b"e");
    it.next();
    assert_eq!(at(&it), some("f"), "next after seek_for_prev");
    it.seek(b"e");
    it.prev();
    assert_eq!(at(&it), some("d"), "prev after seek");
    assert_eq!(it.value(), b"vd");

    assert_eq!(
        scan_backward(e, IterOptions::new()),
        scan_forward(e, IterOptions::new())
    );
}

/// Checks an iterator bounded to `[c, e)` over the keys `a`..`f`.
fn assert_bounded_to_c_d<I: EngineIterator>(it: &mut I, how: &str) {
    it.seek_to_first();
    assert_eq!(at(it), some("c"), "{how}: seek_to_first starts at lower");
    it.prev();
    assert_eq!(at(it), None, "{how}: prev below lower");
    it.seek_to_last();
    assert_eq!(at(it), some("d"), "{how}: seek_to_last ends below upper");
    it.next();
    assert_eq!(at(it), None, "{how}: next at upper");
    for (target, expected) in [
        ("", some("c")),
        ("a", some("c")),
        ("c", some("c")),
        ("cc", some("d")),
        ("d", some("d")),
        ("e", None),
        ("z", None),
    ] {
        it.seek(target.as_bytes());
        assert_eq!(at(it), expected, "{how}: bounded seek({target})");
    }
    for (target, expected) in [
        ("z", some("d")),
        ("e", some("d")),
        ("d\x00", some("d")),
        ("cc", some("c")),
        ("c", some("c")),
        ("b", None),
        ("", None),
    ] {
        it.seek_for_prev(target.as_bytes());
        assert_eq!(at(it), expected, "{how}: bounded seek_for_prev({target:?})");
    }
    it.seek(b"a");
    it.prev();
    assert_eq!(at(it), None, "{how}: prev after clamped seek");
    it.seek_for_prev(b"z");
    it.next();
    assert_eq!(at(it), None, "{how}: next after clamped seek_for_prev");
}

/// Lower (inclusive) and upper (exclusive) bounds in both directions.
pub fn check_iterator_bounds<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let handle = make(None);
    let e = &*handle;
    for key in ["a", "b", "c", "d", "e", "f"] {
        put(e, key.as_bytes(), key.as_bytes());
    }
    let opts = IterOptions::new().lower("c").upper("e");
    let cd = pairs(&[("c", "c"), ("d", "d")]);
    assert_eq!(scan_forward(e, opts.clone()), cd);
    assert_eq!(scan_backward(e, opts.clone()), cd);

    let mut it = e.iterator(opts.clone()).expect("iterator");
    assert_bounded_to_c_d(&mut it, "created");
    drop(it);

    // Bounds between keys.
    let opts = IterOptions::new().lower("bb").upper("dd");
    assert_eq!(scan_forward(e, opts.clone()), cd);
    assert_eq!(scan_backward(e, opts), cd);

    // One-sided bounds.
    let opts = IterOptions::new().lower("e");
    assert_eq!(
        scan_backward(e, opts.clone()),
        pairs(&[("e", "e"), ("f", "f")])
    );
    let mut it = e.iterator(opts).expect("iterator");
    it.seek_for_prev(b"d");
    assert_eq!(at(&it), None, "seek_for_prev below lower");
    it.seek_for_prev(b"z");
    assert_eq!(at(&it), some("f"));
    drop(it);
    let opts = IterOptions::new().upper("b");
    assert_eq!(scan_forward(e, opts.clone()), pairs(&[("a", "a")]));
    let mut it = e.iterator(opts).expect("iterator");
    it.seek(b"b");
    assert_eq!(at(&it), None, "seek at upper");
    it.seek_to_last();
    assert_eq!(at(&it), some("a"));
    drop(it);

    // Empty ranges.
    for (lower, upper) in [("c", "c"), ("x", "z"), ("0", "1"), ("cc", "cd"), ("d", "c")] {
        let opts = IterOptions::new().lower(lower).upper(upper);
        assert_eq!(
            scan_forward(e, opts.clone()),
            Vec::new(),
            "[{lower}, {upper})"
        );
        assert_eq!(
            scan_backward(e, opts.clone()),
            Vec::new(),
            "[{lower}, {upper})"
        );
        let mut it = e.iterator(opts).expect("iterator");
        for target in ["", "a", "c", "z"] {
            it.seek(target.as_bytes());
            assert_eq!(at(&it), None, "[{lower}, {upper}) seek({target})");
            it.seek_for_prev(target.as_bytes());
            assert_eq!(at(&it), None, "[{lower}, {upper}) seek_for_prev({target})");
        }
    }

    // The prefix hint does not change results when used as documented: seek targets (and
    // `lower`, used by `seek_to_first`) inside the prefix, bounds confining the range to it.
    for key in ["p1a", "p1b", "p2a"] {
        put(e, key.as_bytes(), b"p");
    }
    let opts = IterOptions::new()
        .lower("p1")
        .upper("p2")
        .prefix_same_as_start(true)
        .fill_cache(false);
    assert_eq!(
        scan_forward(e, opts.clone()),
        pairs(&[("p1a", "p"), ("p1b", "p")])
    );
    let mut it = e.iterator(opts).expect("iterator");
    it.seek(b"p1b");
    assert_eq!(at(&it), some("p1b"));
    it.next();
    assert_eq!(at(&it), None, "stops at the upper bound");
    it.seek_for_prev(b"p1\xff");
    assert_eq!(at(&it), some("p1b"));
    it.prev();
    assert_eq!(at(&it), some("p1a"));
    it.prev();
    assert_eq!(at(&it), None, "stops at the lower bound");
    drop(it);
    assert_eq!(
        scan_forward(
            e,
            IterOptions::new().lower("p1").upper("p2").fill_cache(false)
        ),
        pairs(&[("p1a", "p"), ("p1b", "p")])
    );
    assert!(IterOptions::new().lower("c").upper("e").contains(b"c"));
    assert!(!IterOptions::new().lower("c").upper("e").contains(b"e"));
}

/// A reset narrows an iterator's bounds and moves it to the latest state (not a snapshot's
/// iterator); bounds beyond those it was created with are refused.
pub fn check_iterator_reset<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let handle = make(None);
    let e = &*handle;
    for key in ["a", "b", "c", "d", "e", "f"] {
        put(e, key.as_bytes(), key.as_bytes());
    }
    let mut it = e.iterator(IterOptions::new()).expect("iterator");
    it.seek(b"a");
    it.reset(Some(b"c"), Some(b"e")).expect("reset");
    assert_eq!(at(&it), None, "a reset iterator is unpositioned");
    assert_bounded_to_c_d(&mut it, "reset");
    // Between keys, then one-sided, then unbounded again.
    it.reset(Some(b"bb"), Some(b"dd")).expect("reset");
    it.seek_to_first();
    assert_eq!(at(&it), some("c"));
    it.seek_to_last();
    assert_eq!(at(&it), some("d"));
    it.reset(Some(b"e"), None).expect("reset");
    it.seek_for_prev(b"d");
    assert_eq!(at(&it), None, "seek_for_prev below the reset lower bound");
    it.seek_to_last();
    assert_eq!(at(&it), some("f"));
    it.reset(None, None).expect("reset");
    it.seek_to_first();
    assert_eq!(at(&it), some("a"));

    // A reset sees writes made since, across a flush too.
    put(e, b"bb", b"new");
    e.flush().expect("flush");
    delete(e, b"c");
    put(e, b"d", b"2");
    it.reset(Some(b"b"), Some(b"e")).expect("reset");
    let mut seen = Vec::new();
    it.seek_to_first();
    while it.valid().expect("status") {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert_eq!(seen, pairs(&[("b", "b"), ("bb", "new"), ("d", "2")]));
    drop(it);

    // Bounds beyond the creation bounds are refused and change nothing.
    let mut it = e
        .iterator(IterOptions::new().lower("b").upper("e"))
        .expect("iterator");
    for (lower, upper) in [
        (None, Some(&b"d"[..])),
        (Some(&b"a"[..]), Some(&b"d"[..])),
        (Some(&b"c"[..]), None),
        (Some(&b"c"[..]), Some(&b"f"[..])),
    ] {
        assert!(
            it.reset(lower, upper).is_err(),
            "reset to {lower:?}..{upper:?} outside b..e"
        );
    }
    it.seek_to_last();
    assert_eq!(at(&it), some("d"), "a refused reset keeps the bounds");
    it.reset(Some(b"b"), Some(b"e"))
        .expect("the creation bounds themselves");
    drop(it);

    // A snapshot's iterator keeps its snapshot.
    let snapshot = e.snapshot();
    let mut it = snapshot.iterator(IterOptions::new()).expect("iterator");
    put(e, b"a", b"later");
    it.reset(Some(b"a"), Some(b"b")).expect("reset");
    it.seek_to_first();
    assert_eq!(at(&it), some("a"));
    assert_eq!(it.value(), b"a", "the snapshot's value, not the later one");
    drop(it);
    drop(snapshot);

    // The prefix hint, used as documented, survives a reset.
    for key in ["p1a", "p1b", "p2a"] {
        put(e, key.as_bytes(), b"p");
    }
    let mut it = e
        .iterator(IterOptions::new().prefix_same_as_start(true))
        .expect("iterator");
    for _ in 0..2 {
        it.reset(Some(b"p1"), Some(b"p2")).expect("reset");
        let mut keys = Vec::new();
        it.seek(b"p1");
        while let Some(key) = at(&it) {
            keys.push(key);
            it.next();
        }
        assert_eq!(keys, ["p1a", "p1b"]);
    }
}

/// An iterator sees the data as of its creation, even if it seeks after later writes.
pub fn check_iterator_consistent_view<E: Engine, H: Deref<Target = E>>(
    make: &dyn Fn(FilterArg) -> H,
) {
    let handle = make(None);
    let e = &*handle;
    put(e, b"a", b"1");
    put(e, b"b", b"1");
    put(e, b"c", b"1");
    let mut it = e.iterator(IterOptions::new()).expect("iterator");
    it.seek(b"a");
    put(e, b"a", b"2");
    delete(e, b"b");
    put(e, b"bb", b"new");
    put(e, b"d", b"new");
    let mut seen = Vec::new();
    while it.valid().expect("status") {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert_eq!(seen, pairs(&[("a", "1"), ("b", "1"), ("c", "1")]));
    it.seek_to_last();
    assert_eq!(
        at(&it),
        some("c"),
        "seek after writes still uses the old view"
    );
    it.seek(b"b");
    assert_eq!(at(&it), some("b"));
    assert_eq!(it.value(), b"1");
    drop(it);
    assert_eq!(
        scan_forward(e, IterOptions::new()),
        pairs(&[("a", "2"), ("bb", "new"), ("c", "1"), ("d", "new")])
    );
}

/// Snapshots do not see later writes, survive flush and compaction, and work across threads.
pub fn check_snapshot_isolation<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let handle = make(None);
    let e = &*handle;
    put(e, b"a", b"1");
    put(e, b"b", b"1");
    let snap1 = e.snapshot();
    put(e, b"a", b"2");
    delete(e, b"b");
    put(e, b"c", b"2");
    let snap2 = e.snapshot();
    put(e, b"a", b"3");
    put(e, b"b", b"3");

    let check = |label: &str| {
        assert_eq!(get(&snap1, "a"), some("1"), "{label}");
        assert_eq!(get(&snap1, "b"), some("1"), "{label}");
        assert_eq!(get(&snap1, "c"), None, "{label}");
        assert_eq!(
            scan_forward(&snap1, IterOptions::new()),
            pairs(&[("a", "1"), ("b", "1")]),
            "{label}"
        );
        assert_eq!(
            scan_backward(&snap1, IterOptions::new().lower("b")),
            pairs(&[("b", "1")]),
            "{label}"
        );
        assert_eq!(get(&snap2, "a"), some("2"), "{label}");
        assert_eq!(get(&snap2, "b"), None, "{label}");
        assert_eq!(
            scan_forward(&snap2, IterOptions::new()),
            pairs(&[("a", "2"), ("c", "2")]),
            "{label}"
        );
        assert_eq!(
            scan_forward(e, IterOptions::new()),
            pairs(&[("a", "3"), ("b", "3"), ("c", "2")]),
            "{label}"
        );
    };
    check("before flush");
    e.flush().expect("flush");
    check("after flush");
    e.compact_all().expect("compact");
    check("after compaction");

    std::thread::scope(|s| {
        s.spawn(|| {
            assert_eq!(get(&snap1, "a"), some("1"), "from another thread");
            let mut it = snap2.iterator(IterOptions::new()).expect("iterator");
            it.seek_to_last();
            assert_eq!(at(&it), some("c"));
        });
    });
    drop(snap1);
    drop(snap2);
    put(e, b"a", b"4");
    e.compact_all().expect("compact");
    assert_eq!(get(e, "a"), some("4"));
}

/// Flush and a compaction without a filter keep every live pair and drop deleted ones.
pub fn check_flush_and_compact_preserve_data<E: Engine, H: Deref<Target = E>>(
    make: &dyn Fn(FilterArg) -> H,
) {
    let handle = make(None);
    let e = &*handle;
    let mut model = BTreeMap::new();
    for round in 0..3u32 {
        let mut batch = WriteBatch::new();
        for i in 0..500u32 {
            let key = format!("key{:05}", (i * 7 + round * 13) % 1000).into_bytes();
            if i % 5 == 4 {
                batch.delete(key.clone());
                model.remove(&key);
            } else {
                let value = format!("value-{round}-{i}").into_bytes();
                batch.put(key.clone(), value.clone());
                model.insert(key, value);
            }
        }
        e.write(&batch, WriteOptions::default()).expect("write");
        e.flush().expect("flush");
    }
    let expected: Pairs = model.into_iter().collect();
    assert_eq!(scan_forward(e, IterOptions::new()), expected);
    let outcome = e.compact_all().expect("compact");
    assert_eq!(outcome.keys_seen, 0, "no filter configured");
    assert_eq!(scan_forward(e, IterOptions::new()), expected);
    assert_eq!(scan_backward(e, IterOptions::new()), expected);
    for (key, value) in &expected {
        assert_eq!(e.get(key).expect("get").as_ref(), Some(value));
    }
}

/// What [`RecordingFactory`] recorded.
#[derive(Debug, Default, Clone)]
pub struct FilterLog {
    /// The context of every filter created, in creation order.
    pub contexts: Vec<CompactionContext>,
    /// For every filter created (same index as `contexts`), the keys it saw in order.
    pub keys: Vec<Vec<Vec<u8>>>,
}

/// The decision function of a [`RecordingFactory`].
pub type DecideFn = dyn Fn(&CompactionContext, &[u8], &[u8]) -> CompactionDecision + Send + Sync;

/// A compaction-filter factory for tests: decides with a function and records every
/// context and the keys each filter saw.
pub struct RecordingFactory {
    decide: Arc<DecideFn>,
    log: Arc<Mutex<FilterLog>>,
}

impl RecordingFactory {
    /// A factory deciding with `decide`.
    pub fn new(
        decide: impl Fn(&CompactionContext, &[u8], &[u8]) -> CompactionDecision + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Self {
            decide: Arc::new(decide),
            log: Arc::default(),
        })
    }

    /// A copy of what has been recorded so far.
    pub fn log(&self) -> FilterLog {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets what has been recorded.
    pub fn clear(&self) {
        *self.log.lock().unwrap_or_else(PoisonError::into_inner) = FilterLog::default();
    }
}

struct RecordingFilter {
    ctx: CompactionContext,
    index: usize,
    decide: Arc<DecideFn>,
    log: Arc<Mutex<FilterLog>>,
}

impl CompactionFilterFactory for RecordingFactory {
    fn create(&self, ctx: &CompactionContext) -> Box<dyn CompactionFilter> {
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        log.contexts.push(*ctx);
        log.keys.push(Vec::new());
        Box::new(RecordingFilter {
            ctx: *ctx,
            index: log.keys.len() - 1,
            decide: Arc::clone(&self.decide),
            log: Arc::clone(&self.log),
        })
    }
}

impl CompactionFilter for RecordingFilter {
    fn filter(&mut self, key: &[u8], value: &[u8]) -> CompactionDecision {
        if let Some(keys) = self
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys
            .get_mut(self.index)
        {
            keys.push(key.to_vec());
        }
        (self.decide)(&self.ctx, key, value)
    }
}

/// The tombstone used by [`check_compaction_filter`]'s `ReplaceWithStatic`.
pub const TEST_TOMBSTONE: &[u8] = b"TOMBSTONE";

/// The decision function of [`check_compaction_filter`]: by key prefix, `rm` → `Remove`,
/// `st` → `ReplaceWithStatic(TEST_TOMBSTONE)`, `rp` → `Replace(value + "!")` once (values
/// already ending in `!` are kept), anything else → `Keep`.
pub fn test_decision(ctx: &CompactionContext, key: &[u8], value: &[u8]) -> CompactionDecision {
    if key.starts_with(b"rm") {
        CompactionDecision::Remove
    } else if key.starts_with(b"st") {
        CompactionDecision::ReplaceWithStatic(TEST_TOMBSTONE)
    } else if key.starts_with(b"rp") && !value.ends_with(b"!") && ctx.can_replace {
        let mut new_value = value.to_vec();
        new_value.push(b'!');
        CompactionDecision::Replace(new_value)
    } else {
        CompactionDecision::Keep
    }
}

/// `compact_all` runs the filter over every pair in key order and applies all four
/// decisions; a second run is stable; later writes are unaffected.
pub fn check_compaction_filter<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let factory = RecordingFactory::new(test_decision);
    let handle = make(Some(
        Arc::clone(&factory) as Arc<dyn CompactionFilterFactory>
    ));
    let e = &*handle;
    for key in ["keep1", "rm1", "rp1", "st1"] {
        put(e, key.as_bytes(), format!("v-{key}").as_bytes());
    }
    e.flush().expect("flush");
    for key in ["keep2", "rm2", "rp2", "st2"] {
        put(e, key.as_bytes(), format!("v-{key}").as_bytes());
    }
    put(e, b"keep1", b"v-keep1-new");
    let outcome = e.compact_all().expect("compact");

    assert_eq!(get(e, "keep1"), some("v-keep1-new"));
    assert_eq!(get(e, "keep2"), some("v-keep2"));
    assert_eq!(get(e, "rm1"), None);
    assert_eq!(get(e, "rm2"), None);
    assert_eq!(e.get(b"st1").expect("get").as_deref(), Some(TEST_TOMBSTONE));
    assert_eq!(e.get(b"st2").expect("get").as_deref(), Some(TEST_TOMBSTONE));
    assert_eq!(get(e, "rp1"), some("v-rp1!"));
    assert_eq!(get(e, "rp2"), some("v-rp2!"));
    assert_eq!(
        scan_forward(e, IterOptions::new())
            .into_iter()
            .map(|(k, _)| String::from_utf8_lossy(&k).into_owned())
            .collect::<Vec<_>>(),
        ["keep1", "keep2", "rp1", "rp2", "st1", "st2"]
    );
    assert_eq!(outcome.rewritten, 2, "{outcome:?}");
    assert!(outcome.keys_seen >= 8, "{outcome:?}");
    assert!(outcome.removed >= 2, "{outcome:?}");
    assert!(outcome.replaced >= 4, "{outcome:?}");
    assert!(outcome.kept >= 2, "{outcome:?}");
    assert_eq!(
        outcome.keys_seen,
        outcome.kept + outcome.removed + outcome.replaced,
        "{outcome:?}"
    );

    let log = factory.log();
    assert!(!log.contexts.is_empty());
    assert!(
        log.contexts.iter().all(|c| c.is_manual && c.can_replace),
        "{:?}",
        log.contexts
    );
    assert!(log.contexts.iter().any(|c| c.is_full), "{:?}", log.contexts);
    for keys in &log.keys {
        assert!(
            keys.windows(2).all(|w| w.first() < w.last()),
            "keys out of order: {keys:?}"
        );
    }
    let all_seen: std::collections::BTreeSet<&[u8]> =
        log.keys.iter().flatten().map(Vec::as_slice).collect();
    for key in ["keep1", "keep2", "rm1", "rm2", "rp1", "rp2", "st1", "st2"] {
        assert!(all_seen.contains(key.as_bytes()), "filter never saw {key}");
    }

    // Idempotent: nothing left to rewrite.
    factory.clear();
    let again = e.compact_all().expect("compact");
    assert_eq!(again.rewritten, 0, "{again:?}");
    assert_eq!(again.removed, 0, "{again:?}");
    assert_eq!(get(e, "rp1"), some("v-rp1!"));

    // Writes after a compaction are ordinary writes until the next one.
    put(e, b"rm1", b"back");
    assert_eq!(get(e, "rm1"), some("back"));
    e.compact_all().expect("compact");
    assert_eq!(get(e, "rm1"), None);
}

/// Engine statistics are readable.
pub fn check_statistics<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    let handle = make(None);
    let e = &*handle;
    put(e, b"a", b"1");
    assert_eq!(get(e, "a"), some("1"));
    let stats = e.statistics().expect("statistics");
    assert!(!stats.counters.is_empty());
    assert!(!stats.text.is_empty());
}

// ---------------------------------------------------------------------------------------
// Randomized differential check against a BTreeMap model.

/// The workspace's randomized tests draw from [`crate::Rng`]; these helpers make the
/// conformance check's keys and values.
impl Rng {
    /// A short key over a tiny alphabet, so keys collide and sort interestingly.
    fn key(&mut self) -> Vec<u8> {
        const ALPHABET: [u8; 5] = [0x00, 0x01, b'a', b'b', 0xff];
        let len = self.below(4);
        (0..len)
            .map(|_| {
                let i = self.below(ALPHABET.len() as u64) as usize;
                ALPHABET.get(i).copied().unwrap_or(b'a')
            })
            .collect()
    }

    fn value(&mut self) -> Vec<u8> {
        let len = self.below(6);
        (0..len).map(|_| self.below(256) as u8).collect()
    }
}

/// A reference cursor: the pairs within the bounds and an optional position.
struct ModelCursor {
    pairs: Pairs,
    pos: Option<usize>,
}

impl ModelCursor {
    fn new(model: &Model, opts: &IterOptions) -> Self {
        Self {
            pairs: model
                .iter()
                .filter(|(k, _)| opts.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            pos: None,
        }
    }

    fn current(&self) -> Option<&(Vec<u8>, Vec<u8>)> {
        self.pos.and_then(|i| self.pairs.get(i))
    }

    fn apply(&mut self, op: &IterOp) {
        let len = self.pairs.len();
        self.pos = match op {
            IterOp::Seek(k) => {
                let i = self.pairs.partition_point(|(key, _)| key < k);
                (i < len).then_some(i)
            }
            IterOp::SeekForPrev(k) => self
                .pairs
                .partition_point(|(key, _)| key <= k)
                .checked_sub(1),
            IterOp::First => (len > 0).then_some(0),
            IterOp::Last => len.checked_sub(1),
            IterOp::Next => self.pos.and_then(|i| (i + 1 < len).then_some(i + 1)),
            IterOp::Prev => self.pos.and_then(|i| i.checked_sub(1)),
        };
    }
}

#[derive(Debug)]
enum IterOp {
    Seek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    First,
    Last,
    Next,
    Prev,
}

fn random_iter_op(rng: &mut Rng) -> IterOp {
    match rng.below(8) {
        0 => IterOp::Seek(rng.key()),
        1 => IterOp::SeekForPrev(rng.key()),
        2 => IterOp::First,
        3 => IterOp::Last,
        4 | 5 => IterOp::Next,
        _ => IterOp::Prev,
    }
}

fn apply_iter_op<I: EngineIterator>(it: &mut I, op: &IterOp) {
    match op {
        IterOp::Seek(k) => it.seek(k),
        IterOp::SeekForPrev(k) => it.seek_for_prev(k),
        IterOp::First => it.seek_to_first(),
        IterOp::Last => it.seek_to_last(),
        IterOp::Next => it.next(),
        IterOp::Prev => it.prev(),
    }
}

fn random_bounds(rng: &mut Rng) -> IterOptions {
    // Inverted ranges (lower > upper) are included on purpose: they must be empty.
    IterOptions {
        lower: (rng.below(2) == 0).then(|| rng.key()),
        upper: (rng.below(2) == 0).then(|| rng.key()),
        ..IterOptions::default()
    }
}

/// Replays random iterator operations on `reader` and on the model; they must agree.
///
/// Half the walks open an unbounded iterator and narrow it with [`EngineIterator::reset`],
/// re-aiming it at new random bounds halfway.
fn compare_iteration<R: KvRead>(reader: &R, model: &Model, rng: &mut Rng, label: &str) {
    let mut opts = random_bounds(rng);
    let via_reset = rng.below(2) == 0;
    let mut it = if via_reset {
        let mut it = reader.iterator(IterOptions::new()).expect("iterator");
        it.reset(opts.lower.as_deref(), opts.upper.as_deref())
            .expect("reset");
        it
    } else {
        reader.iterator(opts.clone()).expect("iterator")
    };
    let mut cursor = ModelCursor::new(model, &opts);
    let mut ops = Vec::new();
    for step in 0..12 {
        if via_reset && step == 6 {
            opts = random_bounds(rng);
            it.reset(opts.lower.as_deref(), opts.upper.as_deref())
                .expect("reset");
            cursor = ModelCursor::new(model, &opts);
            ops.clear();
        }
        let op = random_iter_op(rng);
        apply_iter_op(&mut it, &op);
        cursor.apply(&op);
        ops.push(op);
        let actual = if it.valid().expect("iterator status") {
            Some((it.key().to_vec(), it.value().to_vec()))
        } else {
            None
        };
        assert_eq!(
            actual.as_ref(),
            cursor.current(),
            "{label}: bounds {:?}..{:?} ({}), ops {ops:?}",
            opts.lower,
            opts.upper,
            if via_reset {
                "set by reset"
            } else {
                "at creation"
            }
        );
    }
}

/// The seeds [`check_randomized_against_model`] runs: `ENGINE_CONFORMANCE_SEED` if set,
/// otherwise a fixed list.
pub fn seeds() -> Vec<u64> {
    match std::env::var("ENGINE_CONFORMANCE_SEED") {
        Ok(seed) => vec![
            seed.trim()
                .parse()
                .expect("ENGINE_CONFORMANCE_SEED must be a u64"),
        ],
        Err(_) => vec![1, 2, 3, 4],
    }
}

/// Random writes, deletes, snapshots, flushes and compactions, with gets and iterator walks
/// compared against a `BTreeMap` model (live and at every open snapshot).
pub fn check_randomized_against_model<E: Engine, H: Deref<Target = E>>(
    make: &dyn Fn(FilterArg) -> H,
) {
    for seed in seeds() {
        let handle = make(None);
        let e = &*handle;
        let mut rng = Rng::new(seed);
        let mut model: Model = BTreeMap::new();
        let mut snapshots: Vec<(E::Snapshot<'_>, Model)> = Vec::new();
        for step in 0..400 {
            let label =
                format!("seed {seed} step {step} (replay with ENGINE_CONFORMANCE_SEED={seed})");
            match rng.below(100) {
                0..40 => {
                    let mut batch = WriteBatch::new();
                    for _ in 0..=rng.below(4) {
                        let key = rng.key();
                        if rng.below(3) == 0 {
                            batch.delete(key.clone());
                            model.remove(&key);
                        } else {
                            let value = rng.value();
                            batch.put(key.clone(), value.clone());
                            model.insert(key, value);
                        }
                    }
                    e.write(&batch, WriteOptions::default()).expect("write");
                }
                40..45 => {
                    if snapshots.len() < 3 {
                        snapshots.push((e.snapshot(), model.clone()));
                    }
                }
                45..48 => {
                    if !snapshots.is_empty() {
                        snapshots.remove(0);
                    }
                }
                48..51 => e.flush().expect("flush"),
                51..53 => {
                    e.compact_all().expect("compact");
                }
                53..70 => {
                    let key = rng.key();
                    assert_eq!(
                        e.get(&key).expect("get"),
                        model.get(&key).cloned(),
                        "{label}: get {key:?}"
                    );
                    for (snap, snap_model) in &snapshots {
                        assert_eq!(
                            snap.get(&key).expect("get"),
                            snap_model.get(&key).cloned(),
                            "{label}: snapshot get {key:?}"
                        );
                    }
                }
                _ => {
                    let which = rng.below(snapshots.len() as u64 + 1) as usize;
                    match snapshots.get(which) {
                        Some((snap, snap_model)) => {
                            compare_iteration(
                                snap,
                                snap_model,
                                &mut rng,
                                &format!("{label} (snapshot)"),
                            );
                        }
                        None => compare_iteration(e, &model, &mut rng, &label),
                    }
                }
            }
        }
        let expected: Pairs = model.into_iter().collect();
        assert_eq!(
            scan_forward(e, IterOptions::new()),
            expected,
            "seed {seed}: final state"
        );
    }
}

/// Reads the engine with `overlay` layered over it ([`Layered`]), as a writer reads its own
/// pending writes.
struct LayeredReader<'e, E: Engine> {
    engine: &'e E,
    overlay: Arc<Overlay>,
}

impl<E: Engine> KvRead for LayeredReader<'_, E> {
    type Iter<'a>
        = Layered<E::Iter<'a>>
    where
        Self: 'a;

    fn get(&self, key: &[u8]) -> crate::Result<Option<Vec<u8>>> {
        match self.overlay.get(key) {
            Some(value) => Ok(Some(value.clone())),
            None => self.engine.get(key),
        }
    }

    fn iterator(&self, opts: IterOptions) -> crate::Result<Self::Iter<'_>> {
        let base = self.engine.iterator(opts.clone())?;
        Ok(Layered::new(
            base,
            Some(self.overlay.clone()),
            opts.lower.as_deref(),
            opts.upper.as_deref(),
        ))
    }
}

/// Random engine contents (in the memtable or flushed) with random pending pairs layered
/// over them, often on the same keys: iterator walks through [`Layered`] must match a model
/// where the pending pairs replaced the engine's.
pub fn check_layered_against_model<E: Engine, H: Deref<Target = E>>(make: &dyn Fn(FilterArg) -> H) {
    for seed in seeds() {
        let handle = make(None);
        let e = &*handle;
        let mut rng = Rng::new(seed ^ 0x004c_4159_4552_4544);
        let mut stored: Model = BTreeMap::new();
        for round in 0..30 {
            let mut batch = WriteBatch::new();
            for _ in 0..rng.below(8) {
                let (key, value) = (rng.key(), rng.value());
                batch.put(key.clone(), value.clone());
                stored.insert(key, value);
            }
            e.write(&batch, WriteOptions::default()).expect("write");
            if rng.below(4) == 0 {
                e.flush().expect("flush");
            }
            let mut overlay = Overlay::new();
            let mut model = stored.clone();
            for _ in 0..rng.below(10) {
                let (key, value) = (rng.key(), rng.value());
                overlay.insert(key.clone(), value.clone());
                model.insert(key, value);
            }
            let reader = LayeredReader {
                engine: e,
                overlay: Arc::new(overlay),
            };
            for walk in 0..20 {
                let label = format!(
                    "seed {seed} round {round} walk {walk} (replay with ENGINE_CONFORMANCE_SEED={seed})"
                );
                let key = rng.key();
                assert_eq!(
                    reader.get(&key).expect("get"),
                    model.get(&key).cloned(),
                    "{label}: get {key:?}"
                );
                compare_iteration(&reader, &model, &mut rng, &label);
            }
        }
    }
}
