//! Randomized model test: random YCQL row operations (INSERT with and without TTL, UPDATE of
//! columns and collections, DELETE of columns and rows) on a packed and an unpacked table,
//! compactions at random cutoffs, and full scans at random past times, compared with an
//! in-memory model of the rows over time. Both tables must give the model's answers.
//!
//! `TABLE_MODEL_SEEDS=n` runs n seeds (default 24); `TABLE_MODEL_SEED=s` replays one, and
//! `TABLE_MODEL_TRACE=1` prints its operations and, on a mismatch, the dump.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{Harness, at};
use docdb_table::{DataType, Datum, RangeOrder, Select, Table, TableSpec, Update, WriteOptions};
use dockv::value::Ttl;

/// splitmix64: small, seedable, good enough for choosing operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A primitive value and when it expires (µs; `None` = never).
#[derive(Debug, Clone, PartialEq)]
struct Cell<T> {
    value: T,
    expires: Option<u64>,
}

impl<T> Cell<T> {
    fn alive(&self, t: u64) -> bool {
        self.expires.is_none_or(|e| t <= e)
    }
}

/// One row of the model. Collections never carry TTLs here (an INSERT with a TTL only clears
/// them), so their elements never expire.
#[derive(Debug, Clone, Default, PartialEq)]
struct Row {
    liveness: Option<Cell<()>>,
    a: Option<Cell<i32>>,
    b: Option<Cell<String>>,
    s: BTreeSet<i32>,
    l: Vec<i32>,
}

impl Row {
    fn visible(&self, t: u64, k: i32, r: i32) -> Option<Vec<Datum>> {
        let a = self.a.as_ref().filter(|c| c.alive(t));
        let b = self.b.as_ref().filter(|c| c.alive(t));
        let live = self.liveness.as_ref().is_some_and(|c| c.alive(t))
            || a.is_some()
            || b.is_some()
            || !self.s.is_empty()
            || !self.l.is_empty();
        live.then(|| {
            vec![
                Datum::Int(k),
                Datum::Int(r),
                a.map_or(Datum::Null, |c| Datum::Int(c.value)),
                b.map_or(Datum::Null, |c| Datum::text(c.value.clone())),
                if self.s.is_empty() {
                    Datum::Null
                } else {
                    Datum::Set(self.s.iter().map(|v| Datum::Int(*v)).collect())
                },
                if self.l.is_empty() {
                    Datum::Null
                } else {
                    Datum::List(self.l.iter().map(|v| Datum::Int(*v)).collect())
                },
            ]
        })
    }
}

type State = BTreeMap<(i32, i32), Row>;

/// The model: the state after each write, by write time.
struct Model {
    history: Vec<(u64, State)>,
}

impl Model {
    fn current(&self) -> State {
        self.history
            .last()
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    /// Rows visible at `t`, in the table's key order given by `order`.
    fn rows_at(&self, t: u64, order: &dyn Fn(&(i32, i32)) -> Vec<u8>) -> Vec<Vec<Datum>> {
        let state = self
            .history
            .iter()
            .rev()
            .find(|(ht, _)| *ht <= t)
            .map(|(_, s)| s.clone())
            .unwrap_or_default();
        let mut keys: Vec<&(i32, i32)> = state.keys().collect();
        keys.sort_by_key(|k| order(k));
        keys.into_iter()
            .filter_map(|k| state[k].visible(t, k.0, k.1))
            .collect()
    }
}

/// One random operation, applied to both tables and the model.
#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<(&'static str, Datum)>, Option<i64>),
    Update(Vec<(&'static str, Update)>),
    DeleteColumns(Vec<&'static str>),
    DeleteRow,
}

fn random_op(rng: &mut Rng, row: &Row, now: u64) -> Op {
    match rng.below(10) {
        0..=3 => {
            let ttl_ms = rng.chance(30).then(|| 1 + rng.below(5) as i64);
            let full = rng.chance(50);
            let mut values = Vec::new();
            let mut maybe = |rng: &mut Rng, name, value: Datum| {
                if full || rng.chance(60) {
                    values.push((name, if rng.chance(15) { Datum::Null } else { value }));
                }
            };
            let a = Datum::Int(rng.below(100) as i32);
            maybe(rng, "a", a);
            let b = Datum::text(format!("b{}", rng.below(100)));
            maybe(rng, "b", b);
            // Collections carry no TTL in this model: with a TTL they can only be cleared
            // (a NULL is a tombstone, which has no TTL), so that such INSERTs can be packed.
            let s = match ttl_ms {
                None => Datum::Set(vec![Datum::Int(rng.below(5) as i32)]),
                Some(_) => Datum::Null,
            };
            maybe(rng, "s", s);
            let l = match ttl_ms {
                None => Datum::List(vec![Datum::Int(rng.below(9) as i32)]),
                Some(_) => Datum::Null,
            };
            maybe(rng, "l", l);
            Op::Insert(values, ttl_ms)
        }
        4..=6 => {
            let live_len = row.l.len();
            let update = match rng.below(7) {
                0 => ("a", Update::Set(Datum::Int(rng.below(100) as i32))),
                1 => ("b", Update::Set(Datum::Null)),
                2 => ("s", Update::SetAdd(vec![Datum::Int(rng.below(5) as i32)])),
                3 => ("s", Update::Remove(vec![Datum::Int(rng.below(5) as i32)])),
                4 => ("l", Update::Append(vec![Datum::Int(rng.below(9) as i32)])),
                5 => ("l", Update::Prepend(vec![Datum::Int(rng.below(9) as i32)])),
                _ if live_len > 0 => (
                    "l",
                    Update::ListSet(rng.below(live_len as u64) as usize, Datum::Int(77)),
                ),
                _ => ("b", Update::Set(Datum::text(format!("u{now}")))),
            };
            Op::Update(vec![update])
        }
        7..=8 => {
            let all = ["a", "b", "s", "l"];
            let columns = all.iter().copied().filter(|_| rng.chance(50)).collect();
            Op::DeleteColumns(columns)
        }
        _ => Op::DeleteRow,
    }
}

/// The model's view of an operation at time `now`.
fn apply_to_model(row: &mut Row, op: &Op, now: u64) {
    match op {
        Op::Insert(values, ttl_ms) => {
            let expires = ttl_ms.map(|ms| now + ms as u64 * 1000);
            row.liveness = Some(Cell { value: (), expires });
            for (name, value) in values {
                set_column(row, name, value, expires);
            }
        }
        Op::Update(updates) => {
            for (name, update) in updates {
                match update {
                    Update::Set(value) => set_column(row, name, value, None),
                    Update::SetAdd(items) => row.s.extend(items.iter().map(int)),
                    Update::Remove(items) => items.iter().for_each(|i| {
                        row.s.remove(&int(i));
                    }),
                    Update::Append(items) => row.l.extend(items.iter().map(int)),
                    Update::Prepend(items) => {
                        let mut l: Vec<i32> = items.iter().map(int).collect();
                        l.append(&mut row.l);
                        row.l = l;
                    }
                    Update::ListSet(pos, value) => row.l[*pos] = int(value),
                    other => panic!("not generated: {other:?}"),
                }
            }
        }
        Op::DeleteColumns(columns) => {
            for name in columns {
                set_column(row, name, &Datum::Null, None);
            }
        }
        Op::DeleteRow => *row = Row::default(),
    }
}

fn int(d: &Datum) -> i32 {
    match d {
        Datum::Int(v) => *v,
        other => panic!("not an int: {other}"),
    }
}

fn set_column(row: &mut Row, name: &str, value: &Datum, expires: Option<u64>) {
    match (name, value) {
        ("a", Datum::Int(v)) => row.a = Some(Cell { value: *v, expires }),
        ("a", _) => row.a = None,
        ("b", Datum::Text(v)) => {
            row.b = Some(Cell {
                value: v.clone(),
                expires,
            })
        }
        ("b", _) => row.b = None,
        ("s", Datum::Set(items)) => row.s = items.iter().map(int).collect(),
        ("s", _) => row.s.clear(),
        ("l", Datum::List(items)) => row.l = items.iter().map(int).collect(),
        ("l", _) => row.l.clear(),
        other => panic!("unknown column {other:?}"),
    }
}

fn make_table(h: &Harness, name: &str, packed: bool, desc: bool) -> std::sync::Arc<Table> {
    let order = if desc {
        RangeOrder::DESC
    } else {
        RangeOrder::ASC
    };
    let spec = TableSpec::new(name)
        .hash_key("k", DataType::Int)
        .range_key_ordered("r", DataType::Int, order)
        .column("a", DataType::Int)
        .column("b", DataType::Text)
        .column("s", DataType::set(DataType::Int))
        .column("l", DataType::list(DataType::Int))
        .with_options(|o| {
            o.packed = packed;
            o.colocated = true;
        });
    h.db.create_table("ks", &spec).expect("create")
}

fn run(seed: u64) {
    let mut rng = Rng(seed);
    let h = Harness::new();
    let desc = rng.chance(50);
    let tables = [
        make_table(&h, "packed", true, desc),
        make_table(&h, "plain", false, desc),
    ];
    let key_order = |table: &Table| {
        let table = table.clone();
        move |k: &(i32, i32)| {
            table
                .doc_key(&[Datum::Int(k.0), Datum::Int(k.1)])
                .expect("key")
                .encode()
        }
    };
    let mut model = Model {
        history: Vec::new(),
    };
    let mut cutoff = 0u64;
    let mut now = 10_000u64;
    let trace = std::env::var("TABLE_MODEL_TRACE").is_ok();
    for step in 0..300 {
        now += 1 + rng.below(2500);
        let key = (rng.below(3) as i32, rng.below(2) as i32);
        let mut state = model.current();
        let row = state.entry(key).or_default();
        let op = random_op(&mut rng, row, now);
        if trace {
            eprintln!("step {step} @{now} key {key:?}: {op:?}");
        }
        for table in &tables {
            write(&h, table, key, &op, now);
        }
        apply_to_model(row, &op, now);
        model.history.push((now, state));
        if rng.chance(5) {
            cutoff = cutoff.max(now - rng.below(now - cutoff));
            h.compact(cutoff);
            if trace {
                eprintln!("compact @{cutoff}");
            }
        }
        if rng.chance(30) {
            let t = cutoff + rng.below(now - cutoff + 1);
            for table in &tables {
                let order = key_order(table);
                let expected = model.rows_at(t, &order);
                let got = h.rows(table, &Select::all(at(t)));
                if trace && got != expected {
                    eprintln!("{}", h.db.dump().expect("dump"));
                }
                assert_eq!(
                    got,
                    expected,
                    "seed {seed} step {step} table {} read at {t} (cutoff {cutoff}) after {op:?}",
                    table.name()
                );
            }
        }
    }
}

fn write(h: &Harness, table: &Table, key: (i32, i32), op: &Op, now: u64) {
    let named = [("k", Datum::Int(key.0)), ("r", Datum::Int(key.1))];
    let mut b = h.db.batch(at(now));
    match op {
        Op::Insert(values, ttl_ms) => {
            let mut all = named.to_vec();
            all.extend(values.iter().cloned());
            let opts = WriteOptions {
                ttl: ttl_ms.map(Ttl),
                timestamp: None,
            };
            b.insert(table, &all, &opts).expect("insert");
        }
        Op::Update(updates) => {
            let updates: Vec<(&str, Update)> = updates.to_vec();
            b.update(table, &named, &updates, &WriteOptions::default())
                .expect("update");
        }
        Op::DeleteColumns(columns) => {
            b.delete_columns(table, &named, columns, &WriteOptions::default())
                .expect("delete columns");
        }
        Op::DeleteRow => b
            .delete_row(table, &named, &WriteOptions::default())
            .expect("delete row"),
    }
    b.commit().expect("commit");
}

#[test]
fn random_row_operations_match_the_model() {
    if let Some(seed) = std::env::var("TABLE_MODEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        run(seed);
        return;
    }
    let seeds: u64 = std::env::var("TABLE_MODEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    for seed in 0..seeds {
        run(seed);
    }
}
