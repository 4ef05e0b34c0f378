//! `docdb serve` under load: 50 clients run a mixed workload over a bounded key space for
//! `DOCDB_LOAD_SECS` seconds (default 10). No error replies, every client makes progress, a
//! counter incremented by all clients ends at the number of acknowledged INCRs (atomicity),
//! and the server's resident memory stays bounded and does not keep growing.

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
    shared_incrs: i64,
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

/// One client: random commands until `stop`.
fn client(addr: std::net::SocketAddr, t: usize, seed: u64, stop: Arc<AtomicBool>) -> Stats {
    let mut rng = Rng::new(seed ^ (t as u64).wrapping_mul(0x5851_F42D_4C95_7F2D));
    let mut c = Client::connect(addr);
    let mut s = Stats::default();
    let own_counter = format!("load:ctr:{t}");
    let own_key = format!("load:own:{t}");
    let filler = "x".repeat(200);
    while !stop.load(Ordering::Relaxed) {
        let n = rng.below(KEYS);
        let m = rng.below(MEMBERS);
        let i = s.ops;
        let value = if i % 16 == 0 {
            format!("v{t}.{i}.{filler}")
        } else {
            format!("v{t}.{i}")
        };
        let (str_key, hash_key, set_key) = (
            format!("load:str:{n}"),
            format!("load:hash:{n}"),
            format!("load:set:{n}"),
        );
        let (list_key, zset_key) = (format!("load:list:{n}"), format!("load:zset:{n}"));
        let member = format!("m{m}");
        let op = rng.below(16);
        let args: Vec<&str> = match op {
            0 => vec!["SET", &str_key, &value],
            1 => vec!["GET", &str_key],
            2 => vec!["INCR", SHARED_COUNTER],
            3 => vec!["HSET", &hash_key, &member, &value],
            4 => vec!["HGET", &hash_key, &member],
            5 => vec!["SADD", &set_key, &member],
            6 => vec!["SMEMBERS", &set_key],
            7 => vec!["LPUSH", &list_key, &value],
            8 => vec!["LPOP", &list_key],
            9 => vec!["ZADD", &zset_key, "1.5", &member],
            10 => vec!["ZRANGE", &zset_key, "0", "10"],
            11 => vec!["EXPIRE", &str_key, "100"],
            12 => vec!["DEL", &hash_key],
            13 => vec!["INCR", &own_counter],
            14 => vec!["SET", &own_key, &value],
            _ => vec!["GET", &own_key],
        };
        let reply = match c.try_call(&args) {
            Ok(reply) => reply,
            Err(e) => {
                s.fail(format!("{}: I/O error {e}", args.join(" ")));
                break;
            }
        };
        s.ops += 1;
        let good = match op {
            0 | 14 => reply == Frame::Simple("OK".into()),
            1 | 4 | 8 => is_bulk_or_nil(&reply),
            2 => match reply {
                Frame::Integer(v) if v > 0 => {
                    s.shared_incrs += 1;
                    true
                }
                _ => false,
            },
            3 | 5 | 9 | 11 | 12 => int_in(&reply, 0, 1),
            6 => strings(&reply).is_some_and(|v| v.len() as u64 <= MEMBERS),
            7 => int_in(&reply, 1, i64::MAX),
            10 => strings(&reply).is_some_and(|v| v.len() <= 11),
            13 => {
                let ok = reply == Frame::Integer(s.own_incrs + 1);
                s.own_incrs += 1;
                ok
            }
            _ => {
                // Read your own write: the last SET of this client's own key, if any.
                reply == Frame::Null
                    || matches!(&reply, Frame::Bulk(b) if b.starts_with(format!("v{t}.").as_bytes()))
            }
        };
        if !good {
            s.fail(format!("{} -> {reply:?}", args.join(" ")));
        }
        if op == 14 {
            // Read it back at once.
            let got = c.try_call(&["GET", &own_key]);
            s.ops += 1;
            if !matches!(&got, Ok(Frame::Bulk(b)) if *b == value.as_bytes()) {
                s.fail(format!("GET {own_key} after SET {value}: {got:?}"));
            }
        }
    }
    s
}

#[test]
fn fifty_clients_mixed_workload() {
    mixed_workload(&[]);
}

/// The same with every connection's writes run by one writer thread, several connections'
/// writes landing together (`--writer-thread on`), and two threads serving connections.
#[test]
fn fifty_clients_mixed_workload_with_a_writer_thread() {
    mixed_workload(&["--writer-thread", "on", "--threads", "2"]);
}

/// Runs the load against a server started with `flags` and checks what it left.
fn mixed_workload(flags: &[&str]) {
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
            thread::spawn(move || client(addr, t, seed, stop))
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
    let shared: i64 = stats.iter().map(|s| s.shared_incrs).sum();
    assert_eq!(
        c.bulk(&["GET", SHARED_COUNTER]),
        Some(shared.to_string()),
        "{SHARED_COUNTER} vs acknowledged INCRs"
    );
    for (t, s) in stats.iter().enumerate() {
        let got = c.bulk(&["GET", &format!("load:ctr:{t}")]);
        let want = (s.own_incrs > 0).then(|| s.own_incrs.to_string());
        assert_eq!(got, want, "load:ctr:{t}");
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
