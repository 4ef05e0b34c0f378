//! Randomized model test: random row operations on a packed and an unpacked table of one
//! flavour (even seeds YCQL, odd seeds YSQL), ALTER TABLE ADD / DROP COLUMN at random points,
//! compactions at random cutoffs, reopens, and scans and point reads at random past times,
//! compared with an in-memory model of the rows over time. Both tables must give the model's
//! answers.
//!
//! - YCQL: INSERT (an upsert) with and without TTL, UPDATE of columns (with and without
//!   TTL), of sets, lists and jsonb, DELETE of columns and of rows; packed rows V1.
//! - YSQL: INSERT of an existing row fails, UPDATE of a missing row does nothing; packed rows
//!   V2 (V1 in a quarter of the seeds); columns int, text and jsonb. YSQL statements carry
//!   TTLs too, which must change nothing: YSQL reads and compactions ignore them.
//! - Schema changes: a dropped column is never read again (a column added back under the
//!   same name gets a new id and starts NULL in every row); an added column reads NULL in
//!   rows written before it. The model keeps values by column id and reads the current
//!   schema's columns.
//!
//! The same test runs on the in-memory engine and on RocksDB (small memtables, the DocKey
//! prefix extractor, the GC as compaction filter, flushes before some compactions, reopens
//! from disk).
//!
//! `TABLE_MODEL_SEEDS=n` runs seeds 0..n in memory (default 128), `TABLE_MODEL_ROCKS_SEEDS=n`
//! on RocksDB (default 16); `TABLE_MODEL_SEED=s` replays one seed on both engines;
//! `TABLE_MODEL_STEPS=n` sets the operations per seed (default 300); `TABLE_MODEL_TRACE=1`
//! prints the operations and, on a mismatch, the dump. A failure prints its seed.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::{at, open_rocks, open_tables};
use docdb::GcPolicy;
use docdb::clock::{HybridClock, PhysicalClock};
use docdb_table::{
    AlterTable, ColumnSpec, DataType, Datum, Error, PackedFormat, RangeOrder, Select, Table,
    TableDb, TableSpec, Update, WriteOptions,
};
use dockv::value::Ttl;
use engine::Rng;
use engine::{Engine, MemEngine};
use engine_rocks::RocksEngine;
use serde_json::Value as Json;

/// The column types the model knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Text,
    Set,
    List,
    Json,
}

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::Int => DataType::Int,
            Kind::Text => DataType::Text,
            Kind::Set => DataType::set(DataType::Int),
            Kind::List => DataType::list(DataType::Int),
            Kind::Json => DataType::Jsonb,
        }
    }

    /// The types a flavour's tables get (YSQL has no collections here).
    fn of(ycql: bool) -> &'static [Kind] {
        if ycql {
            &[Kind::Int, Kind::Text, Kind::Set, Kind::List, Kind::Json]
        } else {
            &[Kind::Int, Kind::Text, Kind::Json]
        }
    }
}

/// A non-key column of the current schema.
#[derive(Debug, Clone, PartialEq)]
struct Column {
    name: String,
    id: i32,
    kind: Kind,
}

/// The model's schema: what the catalog should hold.
#[derive(Debug, Clone)]
struct Schema {
    columns: Vec<Column>,
    next_id: i32,
    /// Schema versions so far (1 at CREATE).
    versions: usize,
    /// Names used so far (for adding a dropped name back).
    used: BTreeSet<String>,
}

/// A non-null column value. Collections and jsonb are never empty here: an empty set or
/// list reads as NULL and is not stored; a jsonb object without its init marker (members
/// added to a NULL column) reads as NULL once its last member is removed.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(i32),
    Text(String),
    Set(BTreeSet<i32>),
    List(Vec<i32>),
    Json {
        marker: bool,
        members: BTreeMap<String, i64>,
    },
}

impl Value {
    fn datum(&self) -> Datum {
        match self {
            Value::Int(v) => Datum::Int(*v),
            Value::Text(s) => Datum::text(s.clone()),
            Value::Set(s) => Datum::Set(s.iter().map(|v| Datum::Int(*v)).collect()),
            Value::List(l) => Datum::List(l.iter().map(|v| Datum::Int(*v)).collect()),
            Value::Json { members, .. } => Datum::Jsonb(Json::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), Json::from(*v)))
                    .collect(),
            )),
        }
    }

    /// A whole value as a statement gives it; `None` for NULL and empty collections.
    fn of(datum: &Datum) -> Option<Value> {
        match datum {
            Datum::Null => None,
            Datum::Int(v) => Some(Value::Int(*v)),
            Datum::Text(s) => Some(Value::Text(s.clone())),
            Datum::Set(items) => Some(Value::Set(items.iter().map(int).collect())),
            Datum::List(items) => Some(Value::List(items.iter().map(int).collect())),
            Datum::Jsonb(Json::Object(members)) => Some(Value::Json {
                marker: true,
                members: members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_i64().expect("int member")))
                    .collect(),
            }),
            other => panic!("not generated: {other:?}"),
        }
        .filter(|v| !v.is_empty())
    }

    fn is_empty(&self) -> bool {
        match self {
            Value::Set(s) => s.is_empty(),
            Value::List(l) => l.is_empty(),
            Value::Json { marker, members } => !marker && members.is_empty(),
            _ => false,
        }
    }
}

fn int(d: &Datum) -> i32 {
    match d {
        Datum::Int(v) => *v,
        other => panic!("not an int: {other}"),
    }
}

/// A value and when it expires (µs; `None` = never, always `None` in YSQL).
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

/// One row of the model: the liveness column and column values by column id (dropped
/// columns' values stay, unread). Collections and jsonb never carry TTLs in YCQL (an INSERT
/// with a TTL only clears them), so that such INSERTs can be packed.
#[derive(Debug, Clone, Default, PartialEq)]
struct Row {
    liveness: Option<Cell<()>>,
    columns: BTreeMap<i32, Cell<Value>>,
}

impl Row {
    /// The row as `SELECT *` shows it at `t` with the current schema.
    fn visible(&self, t: u64, key: (i32, i32), schema: &Schema) -> Option<Vec<Datum>> {
        let values: Vec<Option<&Value>> = schema
            .columns
            .iter()
            .map(|c| {
                self.columns
                    .get(&c.id)
                    .filter(|cell| cell.alive(t))
                    .map(|cell| &cell.value)
            })
            .collect();
        let live = self.liveness.as_ref().is_some_and(|c| c.alive(t))
            || values.iter().any(Option::is_some);
        live.then(|| {
            [Datum::Int(key.0), Datum::Int(key.1)]
                .into_iter()
                .chain(values.iter().map(|v| v.map_or(Datum::Null, Value::datum)))
                .collect()
        })
    }

    fn set(&mut self, id: i32, value: Option<Value>, expires: Option<u64>) {
        match value.filter(|v| !v.is_empty()) {
            Some(value) => {
                self.columns.insert(id, Cell { value, expires });
            }
            None => {
                self.columns.remove(&id);
            }
        }
    }

    /// Changes a collection or jsonb value in place (created empty when missing); drops it
    /// when it ends up empty.
    fn edit(&mut self, id: i32, empty: Value, f: impl FnOnce(&mut Value)) {
        let mut value = self.columns.remove(&id).map_or(empty, |cell| cell.value);
        f(&mut value);
        self.set(id, Some(value), None);
    }

    fn list_len(&self, id: i32) -> usize {
        match self.columns.get(&id).map(|c| &c.value) {
            Some(Value::List(l)) => l.len(),
            _ => 0,
        }
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

    fn state_at(&self, t: u64) -> State {
        self.history
            .iter()
            .rev()
            .find(|(ht, _)| *ht <= t)
            .map(|(_, s)| s.clone())
            .unwrap_or_default()
    }

    /// Rows visible at `t` in the table's key order given by `order`.
    fn rows_at(
        &self,
        t: u64,
        schema: &Schema,
        order: &dyn Fn(&(i32, i32)) -> Vec<u8>,
    ) -> Vec<Vec<Datum>> {
        let state = self.state_at(t);
        let mut keys: Vec<&(i32, i32)> = state.keys().collect();
        keys.sort_by_key(|k| order(k));
        keys.into_iter()
            .filter_map(|k| state[k].visible(t, *k, schema))
            .collect()
    }
}

/// One random row operation, applied to both tables and the model. TTLs in milliseconds.
#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<(String, Datum)>, Option<i64>),
    Update(Vec<(String, Update)>, Option<i64>),
    DeleteColumns(Vec<String>),
    DeleteRow,
}

/// One random schema change.
#[derive(Debug, Clone)]
enum Ddl {
    Add(String, Kind),
    Drop(String),
}

fn json_object(rng: &mut Rng, min: u64) -> Json {
    let mut members = serde_json::Map::new();
    for _ in 0..min + rng.below(3 - min) {
        let name = *rng.pick(&["x", "y", "z"]);
        members.insert(name.into(), Json::from(rng.below(10)));
    }
    Json::Object(members)
}

/// A whole value of a column (what an INSERT or `c = v` gives).
fn random_value(rng: &mut Rng, kind: Kind) -> Datum {
    let ints = |rng: &mut Rng, n: u64| -> Vec<Datum> {
        (0..1 + rng.below(2))
            .map(|_| Datum::Int(rng.below(n) as i32))
            .collect()
    };
    match kind {
        Kind::Int => Datum::Int(rng.below(100) as i32),
        Kind::Text => Datum::text(format!("b{}", rng.below(100))),
        Kind::Set if rng.chance(10) => Datum::Set(Vec::new()),
        Kind::Set => {
            let mut items: Vec<Datum> = ints(rng, 5);
            items.dedup();
            Datum::Set(items)
        }
        Kind::List => Datum::List(ints(rng, 9)),
        Kind::Json => Datum::Jsonb(json_object(rng, 0)),
    }
}

fn random_update(rng: &mut Rng, column: &Column, row: &Row, now: u64) -> Update {
    let element = |rng: &mut Rng, n: u64| vec![Datum::Int(rng.below(n) as i32)];
    let name = |rng: &mut Rng| rng.pick(&["x", "y", "z"]).to_string();
    match (column.kind, rng.below(10)) {
        (_, 0) => Update::Set(Datum::Null),
        (Kind::Int, _) => Update::Set(Datum::Int(rng.below(100) as i32)),
        (Kind::Text, _) => Update::Set(Datum::text(format!("u{now}"))),
        (Kind::Set, 1..=4) => Update::SetAdd(element(rng, 5)),
        (Kind::Set, 5..=8) => Update::Remove(element(rng, 5)),
        (Kind::List, 1..=3) => Update::Append(element(rng, 9)),
        (Kind::List, 4..=6) => Update::Prepend(element(rng, 9)),
        (Kind::List, 7..=8) if row.list_len(column.id) > 0 => {
            let pos = rng.below(row.list_len(column.id) as u64) as usize;
            let value = if rng.chance(25) {
                Datum::Null
            } else {
                Datum::Int(70 + rng.below(9) as i32)
            };
            Update::ListSet(pos, value)
        }
        (Kind::Json, 1..=3) => Update::JsonConcat(json_object(rng, 1)),
        (Kind::Json, 4..=5) => Update::JsonSet(vec![name(rng)], Json::from(rng.below(10))),
        (Kind::Json, 6..=8) => Update::JsonRemove(name(rng)),
        (kind, _) => Update::Set(random_value(rng, kind)),
    }
}

/// `ttls`: whether statements may carry `USING TTL` (YSQL ones must change nothing).
fn random_op(rng: &mut Rng, ycql: bool, ttls: bool, schema: &Schema, row: &Row, now: u64) -> Op {
    let columns = &schema.columns;
    match rng.below(10) {
        0..=3 => {
            let ttl_ms = rng.chance(30).then(|| 1 + rng.below(5) as i64);
            let ttl_ms = ttl_ms.filter(|_| ttls);
            let full = rng.chance(50);
            let mut values = Vec::new();
            for c in columns {
                if !(full || rng.chance(60)) {
                    continue;
                }
                // YCQL collections and jsonb carry no TTL in this model: with a TTL they are
                // only cleared (a NULL is a tombstone, which has no TTL).
                let no_ttl = matches!(c.kind, Kind::Set | Kind::List | Kind::Json);
                let value = if rng.chance(15) || (ycql && no_ttl && ttl_ms.is_some()) {
                    Datum::Null
                } else {
                    random_value(rng, c.kind)
                };
                values.push((c.name.clone(), value));
            }
            Op::Insert(values, ttl_ms)
        }
        4..=6 => {
            let mut updates: Vec<(String, Update)> = Vec::new();
            for _ in 0..1 + rng.below(2) {
                let c = rng.pick(columns);
                if updates.iter().all(|(name, _)| *name != c.name) {
                    updates.push((c.name.clone(), random_update(rng, c, row, now)));
                }
            }
            // A TTL only on whole primitive values in YCQL (YSQL ignores it anyway).
            let primitive = updates.iter().all(|(_, u)| {
                matches!(u, Update::Set(Datum::Int(_) | Datum::Text(_) | Datum::Null))
            });
            let ttl_ms = ((primitive || !ycql) && rng.chance(30)).then(|| 1 + rng.below(5) as i64);
            let ttl_ms = ttl_ms.filter(|_| ttls);
            Op::Update(updates, ttl_ms)
        }
        7..=8 => {
            let mut names = Vec::new();
            for c in columns {
                if rng.chance(50) {
                    names.push(c.name.clone());
                }
            }
            Op::DeleteColumns(names)
        }
        _ => Op::DeleteRow,
    }
}

fn random_ddl(rng: &mut Rng, ycql: bool, schema: &Schema) -> Option<Ddl> {
    let add = schema.columns.len() < 6 && (schema.columns.len() == 1 || rng.chance(50));
    if add {
        let dropped: Vec<&String> = schema
            .used
            .iter()
            .filter(|n| schema.columns.iter().all(|c| c.name != **n))
            .collect();
        let name = if !dropped.is_empty() && rng.chance(50) {
            (*rng.pick(&dropped)).clone()
        } else {
            format!("c{}", schema.next_id)
        };
        Some(Ddl::Add(name, *rng.pick(Kind::of(ycql))))
    } else if schema.columns.len() > 1 {
        Some(Ddl::Drop(rng.pick(&schema.columns).name.clone()))
    } else {
        None
    }
}

/// The model's view of a row operation at `now` (an INSERT of an existing YSQL row fails
/// before this and changes nothing).
fn apply_to_model(row: &mut Row, op: &Op, now: u64, ycql: bool, schema: &Schema) {
    let expires = |ttl_ms: &Option<i64>| ttl_ms.filter(|_| ycql).map(|ms| now + ms as u64 * 1000);
    let id = |name: &str| {
        schema
            .columns
            .iter()
            .find(|c| c.name == name)
            .expect("current column")
            .id
    };
    match op {
        Op::Insert(values, ttl_ms) => {
            let expires = expires(ttl_ms);
            row.liveness = Some(Cell { value: (), expires });
            for (name, value) in values {
                row.set(id(name), Value::of(value), expires);
            }
        }
        Op::Update(updates, ttl_ms) => {
            if !ycql && row.visible(now, (0, 0), schema).is_none() {
                return; // A YSQL UPDATE of a missing row.
            }
            let expires = expires(ttl_ms);
            for (name, update) in updates {
                apply_update(row, id(name), update, expires);
            }
        }
        Op::DeleteColumns(names) => {
            for name in names {
                row.set(id(name), None, None);
            }
        }
        Op::DeleteRow => *row = Row::default(),
    }
}

fn apply_update(row: &mut Row, id: i32, update: &Update, expires: Option<u64>) {
    let set = Value::Set(BTreeSet::new());
    let list = Value::List(Vec::new());
    let json = Value::Json {
        marker: false,
        members: BTreeMap::new(),
    };
    match update {
        Update::Set(value) => row.set(id, Value::of(value), expires),
        Update::SetAdd(items) => row.edit(id, set, |v| {
            if let Value::Set(s) = v {
                s.extend(items.iter().map(int));
            }
        }),
        Update::Remove(items) => row.edit(id, set, |v| {
            if let Value::Set(s) = v {
                items.iter().for_each(|i| {
                    s.remove(&int(i));
                });
            }
        }),
        Update::Append(items) => row.edit(id, list, |v| {
            if let Value::List(l) = v {
                l.extend(items.iter().map(int));
            }
        }),
        Update::Prepend(items) => row.edit(id, list, |v| {
            if let Value::List(l) = v {
                let mut front: Vec<i32> = items.iter().map(int).collect();
                front.append(l);
                *l = front;
            }
        }),
        Update::ListSet(pos, value) => row.edit(id, list, |v| {
            if let Value::List(l) = v {
                match value {
                    Datum::Null => {
                        l.remove(*pos);
                    }
                    value => l[*pos] = int(value),
                }
            }
        }),
        Update::JsonConcat(Json::Object(add)) => row.edit(id, json, |v| {
            if let Value::Json { members, .. } = v {
                for (name, value) in add {
                    members.insert(name.clone(), value.as_i64().expect("int"));
                }
            }
        }),
        Update::JsonSet(path, value) => row.edit(id, json, |v| {
            if let Value::Json { members, .. } = v {
                members.insert(path[0].clone(), value.as_i64().expect("int"));
            }
        }),
        Update::JsonRemove(name) => row.edit(id, json, |v| {
            if let Value::Json { members, .. } = v {
                members.remove(name);
            }
        }),
        other => panic!("not generated: {other:?}"),
    }
}

fn write<E: Engine>(
    db: &TableDb<E>,
    table: &Table,
    key: (i32, i32),
    op: &Op,
    now: u64,
) -> docdb_table::Result<()> {
    let named = [("k", Datum::Int(key.0)), ("r", Datum::Int(key.1))];
    let opts = |ttl_ms: &Option<i64>| WriteOptions {
        ttl: ttl_ms.map(Ttl),
        timestamp: None,
    };
    let mut b = db.batch(at(now));
    match op {
        Op::Insert(values, ttl_ms) => {
            let mut all = named.to_vec();
            all.extend(values.iter().map(|(n, d)| (n.as_str(), d.clone())));
            b.insert(table, &all, &opts(ttl_ms))?;
        }
        Op::Update(updates, ttl_ms) => {
            let updates: Vec<(&str, Update)> = updates
                .iter()
                .map(|(n, u)| (n.as_str(), u.clone()))
                .collect();
            b.update(table, &named, &updates, &opts(ttl_ms))?;
        }
        Op::DeleteColumns(names) => {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            b.delete_columns(table, &named, &names, &WriteOptions::default())?;
        }
        Op::DeleteRow => b.delete_row(table, &named, &WriteOptions::default())?,
    }
    b.commit()?;
    Ok(())
}

/// Physical time under the test's control, so that background compactions on RocksDB
/// (cutoff = now − retention) never collect history the test still reads.
struct TestClock(Arc<AtomicU64>);

impl PhysicalClock for TestClock {
    fn now_micros(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Prints the seed when the test panics while it is alive.
struct SeedGuard<'a> {
    seed: u64,
    engine: &'a str,
}

impl Drop for SeedGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "table model test failed on {} at seed {} (replay with TABLE_MODEL_SEED={})",
                self.engine, self.seed, self.seed
            );
        }
    }
}

/// The table names of a run: packed and plain.
const TABLES: [&str; 2] = ["packed", "plain"];

fn run<E: Engine>(seed: u64, engine: &str, mut open: impl FnMut(Arc<GcPolicy>, Option<E>) -> E) {
    let _guard = SeedGuard { seed, engine };
    let mut rng = Rng::new(seed);
    let ycql = seed.is_multiple_of(2);
    let trace = std::env::var_os("TABLE_MODEL_TRACE").is_some();
    let steps: usize = std::env::var("TABLE_MODEL_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);

    let physical = Arc::new(AtomicU64::new(0));
    let clock = Arc::new(HybridClock::new(Box::new(TestClock(physical.clone()))));
    let policy = GcPolicy::new(clock);
    let mut db = Some(open_tables(open(policy.clone(), None), &policy));
    db.as_ref()
        .expect("db")
        .create_namespace("ks")
        .expect("namespace");

    // Key layout and options, the same for both tables but for packing and key space.
    let orders: &[RangeOrder] = if ycql {
        &[RangeOrder::ASC, RangeOrder::DESC]
    } else {
        &[
            RangeOrder::ASC,
            RangeOrder::DESC,
            RangeOrder::ASC_NULLS_LAST,
            RangeOrder::DESC_NULLS_LAST,
        ]
    };
    let order = *rng.pick(orders);
    // One table may own the un-prefixed key space; the others are colocated.
    let owner = rng.below(3) as usize;
    let format = (!ycql && rng.chance(25)).then_some(PackedFormat::V1);
    let initial: Vec<(&str, Kind)> = if ycql {
        vec![
            ("a", Kind::Int),
            ("b", Kind::Text),
            ("s", Kind::Set),
            ("l", Kind::List),
        ]
    } else {
        vec![("a", Kind::Int), ("b", Kind::Text), ("j", Kind::Json)]
    };
    let mut schema = Schema {
        columns: initial
            .iter()
            .zip(2..)
            .map(|((name, kind), id)| Column {
                name: name.to_string(),
                id,
                kind: *kind,
            })
            .collect(),
        next_id: 2 + initial.len() as i32,
        versions: 1,
        used: initial.iter().map(|(n, _)| n.to_string()).collect(),
    };
    for (i, name) in TABLES.iter().enumerate() {
        let mut spec = TableSpec::new(*name);
        if !ycql {
            spec = spec.ysql();
        }
        spec = spec
            .hash_key("k", DataType::Int)
            .range_key_ordered("r", DataType::Int, order);
        for (column, kind) in &initial {
            spec = spec.column(*column, kind.data_type());
        }
        let spec = spec.with_options(|o| {
            o.packed = i == 0;
            o.packed_format = format;
            o.colocated = owner != i;
        });
        db.as_ref()
            .expect("db")
            .create_table("ks", &spec)
            .expect("create");
    }
    if trace {
        eprintln!(
            "seed {seed} on {engine}: {} {order:?} owner {owner} format {format:?}",
            if ycql { "YCQL" } else { "YSQL" }
        );
    }

    let mut model = Model {
        history: Vec::new(),
    };
    let mut cutoff = 0u64;
    let mut now = 10_000u64;
    for step in 0..steps {
        now += 1 + rng.below(2500);
        physical.store(now, Ordering::SeqCst);
        let h = db.as_ref().expect("db");
        let tables: Vec<Arc<Table>> = TABLES
            .iter()
            .map(|n| h.table("ks", n).expect("table"))
            .collect();
        let context = |what: &str| format!("seed {seed} on {engine} step {step} @{now}: {what}");

        if rng.chance(4)
            && let Some(ddl) = random_ddl(&mut rng, ycql, &schema)
        {
            if trace {
                eprintln!("step {step}: {ddl:?}");
            }
            let change = match &ddl {
                Ddl::Add(name, kind) => {
                    AlterTable::AddColumn(ColumnSpec::regular(name.clone(), kind.data_type()))
                }
                Ddl::Drop(name) => AlterTable::DropColumn(name.clone()),
            };
            for name in TABLES {
                h.alter_table("ks", name, change.clone())
                    .unwrap_or_else(|e| panic!("{}: {e}", context(&format!("{ddl:?}"))));
            }
            match ddl {
                Ddl::Add(name, kind) => {
                    schema.columns.push(Column {
                        id: schema.next_id,
                        name: name.clone(),
                        kind,
                    });
                    schema.next_id += 1;
                    schema.used.insert(name);
                }
                Ddl::Drop(name) => schema.columns.retain(|c| c.name != name),
            }
            schema.versions += 1;
            check_schema(h, &schema, &context("after ALTER"));
            continue;
        }

        let key = (rng.below(3) as i32, rng.below(2) as i32);
        let mut state = model.current();
        let row = state.entry(key).or_default();
        let op = random_op(&mut rng, ycql, true, &schema, row, now);
        // YSQL: an INSERT of a row that exists fails and changes nothing.
        let duplicate =
            !ycql && matches!(op, Op::Insert(..)) && row.visible(now, key, &schema).is_some();
        if trace {
            eprintln!("step {step} @{now} key {key:?}: {op:?}");
        }
        for table in &tables {
            let result = write(h, table, key, &op, now);
            let what = || context(&format!("table {} {op:?} -> {result:?}", table.name()));
            if duplicate {
                assert!(matches!(result, Err(Error::AlreadyExists(_))), "{}", what());
            } else {
                assert!(result.is_ok(), "{}", what());
            }
        }
        if !duplicate {
            apply_to_model(row, &op, now, ycql, &schema);
        }
        model.history.push((now, state));

        if rng.chance(5) {
            cutoff = cutoff.max(now - rng.below(now - cutoff));
            let flush = rng.chance(50);
            if trace {
                eprintln!("compact @{cutoff} (flush first: {flush})");
            }
            if flush {
                h.docdb().flush().expect("flush");
            }
            h.docdb().compact(at(cutoff)).expect("compact");
        }
        if rng.chance(2) {
            if trace {
                eprintln!("reopen");
            }
            let engine = db.take().expect("db").into_docdb().into_engine();
            db = Some(open_tables(open(policy.clone(), Some(engine)), &policy));
            check_schema(db.as_ref().expect("db"), &schema, &context("after reopen"));
            continue;
        }
        if rng.chance(30) {
            let t = cutoff + rng.below(now - cutoff + 1);
            let reverse = rng.chance(20);
            let point = (rng.below(3) as i32, rng.below(2) as i32);
            // One reader for every table's reads: its iterator is re-aimed across tables.
            let mut reader = h.reader();
            for table in &tables {
                let order = |k: &(i32, i32)| {
                    table
                        .doc_key(&[Datum::Int(k.0), Datum::Int(k.1)])
                        .expect("key")
                        .encode()
                };
                let mut expected = model.rows_at(t, &schema, &order);
                let mut select = Select::all(at(t));
                if reverse {
                    expected.reverse();
                    select = select.reversed();
                }
                let got = h.select(table, &select).expect("select").rows;
                let got_by_reader = reader.select(table, &select).expect("reader select").rows;
                let expected_row: Vec<Vec<Datum>> = model
                    .state_at(t)
                    .get(&point)
                    .and_then(|r| r.visible(t, point, &schema))
                    .into_iter()
                    .collect();
                let key = vec![Datum::Int(point.0), Datum::Int(point.1)];
                let got_row = reader
                    .select(table, &Select::row(table, key, at(t)))
                    .expect("select row")
                    .rows;
                if trace && (got != expected || got_row != expected_row) {
                    eprintln!("{}", h.dump().expect("dump"));
                }
                let what = format!(
                    "table {} read at {t} (cutoff {cutoff}) after {op:?}",
                    table.name()
                );
                assert_eq!(got, expected, "{}", context(&what));
                assert_eq!(
                    got_by_reader,
                    got,
                    "{}",
                    context(&format!("{what}, by a reader"))
                );
                assert_eq!(
                    got_row,
                    expected_row,
                    "{}",
                    context(&format!("{what}, row {point:?}"))
                );
            }
        }
    }
}

/// The catalog holds the model's schema for both tables: the current columns in order with
/// their ids, and every version.
fn check_schema<E: Engine>(db: &TableDb<E>, schema: &Schema, context: &str) {
    for name in TABLES {
        let table = db.table("ks", name).expect("table");
        let got: Vec<(&str, i32)> = table
            .columns()
            .iter()
            .skip(2)
            .map(|c| (c.name.as_str(), c.id))
            .collect();
        let want: Vec<(&str, i32)> = schema
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.id))
            .collect();
        assert_eq!(got, want, "{context}: columns of {name}");
        assert_eq!(
            table.record().versions.len(),
            schema.versions,
            "{context}: versions of {name}"
        );
    }
}

/// The seeds to run: `TABLE_MODEL_SEED` alone, else 0..`$var` (default `default`).
fn seeds(var: &str, default: u64) -> Vec<u64> {
    if let Some(seed) = std::env::var("TABLE_MODEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![seed];
    }
    let n = std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    (0..n).collect()
}

#[test]
fn random_row_operations_match_the_model() {
    for seed in seeds("TABLE_MODEL_SEEDS", 128) {
        run::<MemEngine>(seed, "memory", |policy, old| {
            old.unwrap_or_else(|| MemEngine::with_compaction_filter(Some(policy)))
        });
    }
}

#[test]
fn random_row_operations_match_the_model_on_rocksdb() {
    for seed in seeds("TABLE_MODEL_ROCKS_SEEDS", 16) {
        let dir = tempfile::tempdir().expect("tempdir");
        run::<RocksEngine>(seed, "rocksdb", |policy, old| {
            drop(old); // Closed before it is opened again.
            open_rocks(dir.path(), policy)
        });
    }
}
