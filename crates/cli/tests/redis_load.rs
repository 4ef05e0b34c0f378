//! `docdb serve` under load: 50 clients run a mixed workload over a bounded key space for
//! `DOCDB_LOAD_SECS` seconds (default 10). No error replies, every client makes progress, a
//! counter incremented by all clients ends at the number of acknowledged INCRs (atomicity),
//! and the server's resident memory stays bounded and does not keep growing.
//! Then a queue: producers pushing onto one list while consumers pop from it.

mod common_serve;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common_serve::{Client, Frame, Rng, Server, env_u64, seeded_rng, strings};

const CLIENTS: usize = 50;
/// Keys per data type.
const KEYS: u64 = 1000;
/// Set members and sorted-set members are drawn from this many.
const MEMBERS: u64 = 20;
const SHARED_COUNTER: &str = "load:counter";
/// The resident-memory ceiling for the server.
const MAX_RSS: u64 = 1536 << 20;

/// What one client did.
#[derive(Default)]
struct Stats {
    ops: u64,
    /// The replies to its INCRs of the shared counter: all clients' together must be
    /// 1, 2, 3, ... with none twice.
    shared_values: Vec<i64>,
    own_incrs: i64,
    errors: u64,
    first_errors: Vec<String>,
}

impl Stats {
    fn fail(&mut self, what: String) {
        self.errors += 1;
        if self.first_errors.len() < 10 {
            self.first_errors.push(what);
        }
    }
}

fn is_bulk_or_nil(f: &Frame) -> bool {
    matches!(f, Frame::Bulk(_) | Frame::Null)
}

fn int_in(f: &Frame, lo: i64, hi: i64) -> bool {
    matches!(f, Frame::Integer(n) if (lo..=hi).contains(n))
}

/// What a command's reply must be.
enum Expect {
    Ok,
    BulkOrNil,
    /// A positive integer: an INCR of the shared counter.
    SharedIncr,
    /// 0 or 1.
    Flag,
    /// At least 1 (LPUSH's length).
    Positive,
    /// At most this many strings.
    AtMost(usize),
    /// The next value of the client's own counter.
    OwnIncr,
    /// Exactly this value: the client's own key read right after its SET.
    Value(String),
    /// Nil or a value this client wrote (its own key).
    OwnValue,
}

/// One command of the workload and what its reply must be.
struct Command {
    args: Vec<String>,
    expect: Expect,
}

/// Client `t`'s next command, the `i`th (two for a SET of its own key: the GET after it).
fn plan(rng: &mut Rng, t: usize, i: u64) -> Vec<Command> {
    let n = rng.below(KEYS);
    let member = format!("m{}", rng.below(MEMBERS));
    let value = if i.is_multiple_of(16) {
        format!("v{t}.{i}.{}", "x".repeat(200))
    } else {
        format!("v{t}.{i}")
    };
    let key = |kind: &str| format!("load:{kind}:{n}");
    let (own_counter, own_key) = (format!("load:ctr:{t}"), format!("load:own:{t}"));
    let command = |args: &[&str], expect| Command {
        args: args.iter().map(|a| a.to_string()).collect(),
        expect,
    };
    let one = match rng.below(16) {
        0 => command(&["SET", &key("str"), &value], Expect::Ok),
        1 => command(&["GET", &key("str")], Expect::BulkOrNil),
        2 => command(&["INCR", SHARED_COUNTER], Expect::SharedIncr),
        3 => command(&["HSET", &key("hash"), &member, &value], Expect::Flag),
        4 => command(&["HGET", &key("hash"), &member], Expect::BulkOrNil),
        5 => command(&["SADD", &key("set"), &member], Expect::Flag),
        6 => command(&["SMEMBERS", &key("set")], Expect::AtMost(MEMBERS as usize)),
        7 => command(&["LPUSH", &key("list"), &value], Expect::Positive),
        8 => command(&["LPOP", &key("list")], Expect::BulkOrNil),
        9 => command(&["ZADD", &key("zset"), "1.5", &member], Expect::Flag),
        10 => command(&["ZRANGE", &key("zset"), "0", "10"], Expect::AtMost(11)),
        11 => command(&["EXPIRE", &key("str"), "100"], Expect::Flag),
        12 => command(&["DEL", &key("hash")], Expect::Flag),
        13 => command(&["INCR", &own_counter], Expect::OwnIncr),
        // Read back at once (in the same pipeline, when pipelining).
        14 => {
            return vec![
                command(&["SET", &own_key, &value], Expect::Ok),
                command(&["GET", &own_key], Expect::Value(value.clone())),
            ];
        }
        _ => command(&["GET", &own_key], Expect::OwnValue),
    };
    vec![one]
}

/// Checks `reply` to `command` by client `t`, counting what the final checks need.
fn judge(s: &mut Stats, t: usize, command: &Command, reply: &Frame) {
    s.ops += 1;
    let good = match &command.expect {
        Expect::Ok => *reply == Frame::Simple("OK".into()),
        Expect::BulkOrNil => is_bulk_or_nil(reply),
        Expect::SharedIncr => match reply {
            Frame::Integer(v) if *v > 0 => {
                s.shared_values.push(*v);
                true
            }
            _ => false,
        },
        Expect::Flag => int_in(reply, 0, 1),
        Expect::Positive => int_in(reply, 1, i64::MAX),
        Expect::AtMost(n) => strings(reply).is_some_and(|v| v.len() <= *n),
        Expect::OwnIncr => {
            s.own_incrs += 1;
            *reply == Frame::Integer(s.own_incrs)
        }
        Expect::Value(value) => matches!(reply, Frame::Bulk(b) if *b == value.as_bytes()),
        Expect::OwnValue => {
            *reply == Frame::Null
                || matches!(reply, Frame::Bulk(b) if b.starts_with(format!("v{t}.").as_bytes()))
        }
    };
    if !good {
        s.fail(format!("{} -> {reply:?}", command.args.join(" ")));
    }
}

/// One client: random commands until `stop`, `depth` at a time (sent together, then their
/// replies read: a pipeline when `depth` > 1).
fn client(
    addr: std::net::SocketAddr,
    t: usize,
    seed: u64,
    depth: usize,
    stop: Arc<AtomicBool>,
) -> Stats {
    let mut rng = Rng::new(seed ^ (t as u64).wrapping_mul(0x5851_F42D_4C95_7F2D));
    let mut c = Client::connect(addr);
    let mut s = Stats::default();
    let mut planned = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut commands = Vec::new();
        while commands.len() < depth {
            commands.extend(plan(&mut rng, t, planned));
            planned += 1;
        }
        // One at a time without pipelining: the GET after a SET waits for its reply.
        let chunks = if depth == 1 { 1 } else { commands.len() };
        for chunk in commands.chunks(chunks) {
            let args: Vec<Vec<String>> = chunk.iter().map(|c| c.args.clone()).collect();
            match c.try_pipeline(&args) {
                Ok(replies) => {
                    for (command, reply) in chunk.iter().zip(&replies) {
                        judge(&mut s, t, command, reply);
                    }
                }
                Err(e) => {
                    s.fail(format!("{}: I/O error {e}", args[0].join(" ")));
                    return s;
                }
            }
        }
    }
    s
}

#[test]
fn fifty_clients_mixed_workload() {
    mixed_workload(&["--threads", "1"], 1, Some(true));
}

/// The same with each connection's writes run in place, one engine write each, rather than
/// landed together with the other connections' of the same turn of the event loop.
#[test]
fn fifty_clients_mixed_workload_without_grouped_writes() {
    mixed_workload(&["--group-writes", "off"], 1, Some(false));
}

/// The same with every connection's writes run by one writer thread, several connections'
/// writes landing together (`--writer-thread on`), and two threads serving connections.
#[test]
fn fifty_clients_mixed_workload_with_a_writer_thread() {
    mixed_workload(&["--writer-thread", "on", "--threads", "2"], 1, Some(false));
}

/// The same with every client pipelining 16 commands: each connection is judged pipelining
/// and moves to the second runtime, its writes go to the writer thread in groups of many
/// connections' runs, landed on another thread while the next group reads them (a GET
/// right after a SET in one pipeline must see it), as `redis-benchmark -P 16` runs.
#[test]
fn fifty_pipelining_clients_mixed_workload() {
    mixed_workload(&[], 16, None);
}

/// Runs the load against a server started with `flags`, each client sending `depth`
/// commands at a time, and checks what it left; and if `grouped` says, whether writes of
/// several connections landed together (see `--group-writes`).
fn mixed_workload(flags: &[&str], depth: usize, grouped: Option<bool>) {
    let secs = env_u64("DOCDB_LOAD_SECS", 10);
    let seed = seeded_rng("DOCDB_LOAD_SEED").next_u64();
    eprintln!("server flags {flags:?}");
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), flags);
    let addr = server.addr();
    let pid = server.pid();
    let stop = Arc::new(AtomicBool::new(false));

    let sampler = {
        let stop = stop.clone();
        thread::spawn(move || {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if let Some(rss) = common_serve::rss_bytes(pid) {
                    samples.push(rss);
                }
                thread::sleep(Duration::from_secs(1));
            }
            samples
        })
    };
    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|t| {
            let stop = stop.clone();
            thread::spawn(move || client(addr, t, seed, depth, stop))
        })
        .collect();
    thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    let stats: Vec<Stats> = clients
        .into_iter()
        .map(|h| h.join().expect("client thread"))
        .collect();
    let elapsed = started.elapsed();
    let samples = sampler.join().expect("sampler thread");

    let total: u64 = stats.iter().map(|s| s.ops).sum();
    eprintln!(
        "{total} commands by {CLIENTS} clients in {:.1} s: {:.0} commands/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    let mib: Vec<String> = samples
        .iter()
        .map(|b| format!("{:.1}", *b as f64 / (1 << 20) as f64))
        .collect();
    eprintln!("server VmRSS (MiB), once a second: {}", mib.join(" "));

    let errors: u64 = stats.iter().map(|s| s.errors).sum();
    let first: Vec<&String> = stats
        .iter()
        .flat_map(|s| &s.first_errors)
        .take(20)
        .collect();
    assert_eq!(errors, 0, "bad replies, first ones: {first:#?}");
    for (t, s) in stats.iter().enumerate() {
        assert!(s.ops > 0, "client {t} did nothing");
    }

    let mut c = server.client();
    let mut shared: Vec<i64> = stats.iter().flat_map(|s| s.shared_values.clone()).collect();
    assert_eq!(
        c.bulk(&["GET", SHARED_COUNTER]),
        (!shared.is_empty()).then(|| shared.len().to_string()),
        "{SHARED_COUNTER} vs acknowledged INCRs"
    );
    // Each INCR saw the one before it: the replies are 1..=n, each once.
    shared.sort_unstable();
    let expected: Vec<i64> = (1..=shared.len() as i64).collect();
    assert!(
        shared == expected,
        "the INCR replies of {SHARED_COUNTER} are not 1..={}",
        shared.len()
    );
    for (t, s) in stats.iter().enumerate() {
        let got = c.bulk(&["GET", &format!("load:ctr:{t}")]);
        let want = (s.own_incrs > 0).then(|| s.own_incrs.to_string());
        assert_eq!(got, want, "load:ctr:{t}");
    }
    let groups = c.info_field("stats", "write_groups");
    let runs = c.info_field("stats", "write_group_runs");
    eprintln!("{runs} write runs landed in {groups} groups");
    match grouped {
        // Fifty clients waiting on one another: some turn of the event loop found several
        // connections' writes, and they landed in one engine write.
        Some(true) => assert!(
            groups > 0 && runs > groups,
            "{runs} runs in {groups} groups"
        ),
        Some(false) => assert_eq!(groups, 0, "groups with {flags:?}"),
        None => {}
    }
    if depth > 1 {
        // Each client was judged pipelining, so its writes went to the writer thread.
        let judged = c.info_field("stats", "pipelining_connections");
        assert!(
            judged >= CLIENTS as u64,
            "{judged} connections judged pipelining"
        );
    }
    let dbsize = c.int(&["DBSIZE"]);
    let bound = 5 * KEYS as i64 + 2 * CLIENTS as i64 + 1;
    assert!(dbsize <= bound, "DBSIZE {dbsize} > {bound}");
    drop(c);

    assert!(!samples.is_empty(), "no memory samples for pid {pid}");
    let max = samples.iter().copied().max().unwrap_or(0);
    assert!(max < MAX_RSS, "server VmRSS peaked at {max} bytes");
    if samples.len() >= 6 {
        let third = samples.len() / 3;
        let reference = samples.get(third).copied().unwrap_or(0);
        let late = samples.get(2 * third..).unwrap_or_default();
        let late_max = late.iter().copied().max().unwrap_or(0);
        let allowed = reference + reference / 2 + (64 << 20);
        assert!(
            late_max <= allowed,
            "server VmRSS keeps growing: {late_max} bytes in the last third, {reference} at one \
             third (allowed {allowed})"
        );
    }
    server.stop();
}

/// Producers pushing onto one list while consumers pop from it (a queue): every value is
/// handed out exactly once, and each consumer sees each producer's values in the order they
/// were pushed. Pops answer from the elements earlier pops read ahead (`list_ends`), which
/// every producer's push must keep exact.
#[test]
fn a_queue_hands_out_every_value_once_in_order() {
    queue(1);
}

/// The same with every client pipelining 16 commands (the writer thread's groups).
#[test]
fn a_pipelined_queue_hands_out_every_value_once_in_order() {
    queue(16);
}

const PRODUCERS: usize = 4;
const CONSUMERS: usize = 4;
const PUSHES: usize = 3000;

fn queue(depth: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let addr = server.addr();
    let popped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            thread::spawn(move || {
                let mut c = Client::connect(addr);
                let values: Vec<Vec<String>> = (0..PUSHES)
                    .map(|i| vec!["RPUSH".into(), "queue".into(), format!("{p}:{i}")])
                    .collect();
                for chunk in values.chunks(depth) {
                    for reply in c.pipeline(chunk) {
                        assert!(matches!(reply, Frame::Integer(n) if n > 0), "{reply:?}");
                    }
                }
            })
        })
        .collect();
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|k| {
            let popped = popped.clone();
            thread::spawn(move || consume(addr, k, depth, &popped))
        })
        .collect();
    for p in producers {
        p.join().expect("producer");
    }
    let seen: Vec<Vec<(usize, usize)>> = consumers
        .into_iter()
        .map(|c| c.join().expect("consumer"))
        .collect();
    for (k, values) in seen.iter().enumerate() {
        for p in 0..PRODUCERS {
            let mine: Vec<usize> = values.iter().filter(|v| v.0 == p).map(|v| v.1).collect();
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "consumer {k} saw producer {p}'s values out of order"
            );
        }
    }
    let mut all: Vec<(usize, usize)> = seen.into_iter().flatten().collect();
    all.sort_unstable();
    let expected: Vec<(usize, usize)> = (0..PRODUCERS)
        .flat_map(|p| (0..PUSHES).map(move |i| (p, i)))
        .collect();
    assert!(all == expected, "not every value was popped exactly once");
    assert_eq!(server.client().int(&["LLEN", "queue"]), 0);
}

/// Pops (one value per LPOP, or three with a count) until every value was popped by someone:
/// the (producer, number) of each value this consumer got, in order.
fn consume(
    addr: std::net::SocketAddr,
    k: usize,
    depth: usize,
    popped: &std::sync::atomic::AtomicUsize,
) -> Vec<(usize, usize)> {
    let total = PRODUCERS * PUSHES;
    let mut c = Client::connect(addr);
    let mut got = Vec::new();
    let pop: Vec<String> = if k.is_multiple_of(2) {
        vec!["LPOP".into(), "queue".into()]
    } else {
        vec!["LPOP".into(), "queue".into(), "3".into()]
    };
    let started = Instant::now();
    while popped.load(Ordering::SeqCst) < total {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the queue never emptied"
        );
        let replies = c.pipeline(&vec![pop.clone(); depth]);
        let values: Vec<String> = replies
            .iter()
            .flat_map(|r| match r {
                Frame::Null | Frame::NullArray => Vec::new(),
                Frame::Bulk(_) => strings(&Frame::Array(vec![r.clone()])).expect("a value"),
                other => strings(other).unwrap_or_else(|| panic!("LPOP replied {other:?}")),
            })
            .collect();
        if values.is_empty() {
            thread::sleep(Duration::from_millis(1));
            continue;
        }
        popped.fetch_add(values.len(), Ordering::SeqCst);
        for v in values {
            let (p, i) = v.split_once(':').expect("producer:number");
            got.push((p.parse().expect("producer"), i.parse().expect("number")));
        }
    }
    got
}
