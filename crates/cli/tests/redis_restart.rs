//! `docdb serve` across restarts: a graceful stop (SIGTERM) keeps every value and TTL, a crash
//! (SIGKILL) with `--fsync always` keeps every acknowledged write, and keys whose TTL ran out
//! while the server was down stay gone. `docdb dump` reads the directory beside a running
//! server and after a stop or crash, writing nothing.
//!
//! `DOCDB_REDIS_CRASH_ROUNDS` (default 5) sets the number of crash rounds and
//! `DOCDB_REDIS_CRASH_SEED` replays the random crash moments of a failed run.

mod common_serve;

use std::thread;
use std::time::{Duration, Instant};

use common_serve::{Client, Frame, Server, dump, env_u64, seeded_rng, sorted};

/// Writes one key of each kind (and some that must not survive); the number of keys DBSIZE
/// reports afterwards.
fn write_mix(c: &mut Client) -> i64 {
    c.ok(&["SET", "s:plain", "hello"]);
    c.ok(&["SET", "s:ex", "with-ex", "EX", "1000"]);
    c.ok(&["SET", "s:px", "with-px", "PX", "1000000"]);
    let reply = c
        .raw()
        .call(&[&b"SET"[..], b"s:binary", b"a\x00b\r\n\xff\"\\"])
        .expect("SET binary");
    assert_eq!(reply, Frame::Simple("OK".into()));
    c.ok(&["SET", "s:overwritten", "v1", "EX", "1000"]);
    c.ok(&["SET", "s:overwritten", "v2"]);
    c.ok(&["SET", "s:deleted", "x"]);
    assert_eq!(c.int(&["DEL", "s:deleted"]), 1);
    for i in 1..=5 {
        assert_eq!(c.int(&["INCR", "s:counter"]), i);
    }
    c.ok(&["MSET", "m:1", "one", "m:2", "two"]);

    assert_eq!(c.int(&["HSET", "h", "f1", "v1", "f2", "v2"]), 2);
    assert_eq!(c.int(&["HSET", "h", "f3", "v3"]), 1);
    assert_eq!(c.int(&["HSET", "h", "f1", "v1b"]), 0);
    assert_eq!(c.int(&["HDEL", "h", "f2"]), 1);
    c.ok(&["HMSET", "h2", "a", "1", "b", "2"]);

    assert_eq!(c.int(&["SADD", "set", "a", "b", "c"]), 3);
    assert_eq!(c.int(&["SADD", "set", "d", "a"]), 1);
    assert_eq!(c.int(&["SREM", "set", "b"]), 1);

    assert_eq!(
        c.int(&["ZADD", "z", "1", "one", "2", "two", "3.5", "three"]),
        3
    );
    assert_eq!(c.int(&["ZADD", "z", "0.5", "half", "2.5", "two"]), 1);

    assert_eq!(c.int(&["RPUSH", "l", "a", "b", "c"]), 3);
    assert_eq!(c.int(&["LPUSH", "l", "z"]), 4);
    assert_eq!(c.bulk(&["LPOP", "l"]).as_deref(), Some("z"));
    assert_eq!(c.int(&["RPUSH", "l", "d"]), 4);

    assert_eq!(c.int(&["HSET", "h:exp", "f", "v"]), 1);
    assert_eq!(c.int(&["EXPIRE", "h:exp", "1000"]), 1);
    assert_eq!(c.int(&["RPUSH", "l:exp", "x", "y"]), 2);
    assert_eq!(c.int(&["PEXPIRE", "l:exp", "1000000"]), 1);
    // s:plain s:ex s:px s:binary s:overwritten s:counter m:1 m:2 h h2 set z l h:exp l:exp
    15
}

/// Checks everything [`write_mix`] wrote, `since` being when it was written.
fn check_mix(c: &mut Client, since: Instant, keys: i64) {
    let elapsed = since.elapsed();
    assert_eq!(c.int(&["DBSIZE"]), keys, "DBSIZE");
    assert_eq!(c.bulk(&["GET", "s:plain"]).as_deref(), Some("hello"));
    assert_eq!(c.bulk(&["GET", "s:ex"]).as_deref(), Some("with-ex"));
    assert_eq!(c.bulk(&["GET", "s:px"]).as_deref(), Some("with-px"));
    assert_eq!(
        c.raw().call(&["GET", "s:binary"]).expect("GET"),
        Frame::Bulk(b"a\x00b\r\n\xff\"\\".to_vec())
    );
    assert_eq!(c.bulk(&["GET", "s:overwritten"]).as_deref(), Some("v2"));
    assert_eq!(c.bulk(&["GET", "s:deleted"]), None);
    assert_eq!(c.bulk(&["GET", "s:counter"]).as_deref(), Some("5"));
    assert_eq!(c.int(&["INCR", "s:counter"]), 6);
    assert_eq!(c.int(&["DECR", "s:counter"]), 5);
    assert_eq!(
        c.call(&["MGET", "m:1", "m:2", "m:3"]),
        Frame::Array(vec![
            Frame::Bulk(b"one".to_vec()),
            Frame::Bulk(b"two".to_vec()),
            Frame::Null
        ])
    );

    assert_eq!(
        sorted(c.strings(&["HGETALL", "h"])),
        sorted(vec!["f1".into(), "v1b".into(), "f3".into(), "v3".into()])
    );
    assert_eq!(c.bulk(&["HGET", "h2", "b"]).as_deref(), Some("2"));
    assert_eq!(c.int(&["HLEN", "h2"]), 2);
    assert_eq!(sorted(c.strings(&["SMEMBERS", "set"])), vec!["a", "c", "d"]);
    assert_eq!(
        c.strings(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
        vec!["half", "0.5", "one", "1", "two", "2.5", "three", "3.5"]
    );
    assert_eq!(
        c.strings(&["LRANGE", "l", "0", "-1"]),
        vec!["a", "b", "c", "d"]
    );
    assert_eq!(c.strings(&["LRANGE", "l:exp", "0", "-1"]), vec!["x", "y"]);
    assert_eq!(c.bulk(&["HGET", "h:exp", "f"]).as_deref(), Some("v"));

    // TTLs: what is left of the original, within a tolerance for the restart.
    let secs_left = |c: &mut Client, key: &str, total: i64| {
        let ttl = c.int(&["TTL", key]);
        let lower = total - elapsed.as_secs() as i64 - 5;
        assert!(
            (lower..=total).contains(&ttl),
            "TTL {key} = {ttl}, expected {lower}..={total}"
        );
    };
    secs_left(c, "s:ex", 1000);
    secs_left(c, "h:exp", 1000);
    secs_left(c, "s:px", 1000);
    secs_left(c, "l:exp", 1000);
    let pttl = c.int(&["PTTL", "s:px"]);
    let lower = 1_000_000 - elapsed.as_millis() as i64 - 5000;
    assert!(
        (lower..=1_000_000).contains(&pttl),
        "PTTL s:px = {pttl}, expected {lower}..=1000000"
    );
    for key in [
        "s:plain",
        "s:overwritten",
        "s:counter",
        "h",
        "set",
        "z",
        "l",
    ] {
        assert_eq!(c.int(&["TTL", key]), -1, "TTL {key}");
    }
    assert_eq!(c.int(&["TTL", "s:deleted"]), -2);
    assert_eq!(c.int(&["TTL", "no-such-key"]), -2);

    for (key, kind) in [
        ("s:plain", "string"),
        ("h", "hash"),
        ("set", "set"),
        ("z", "zset"),
        ("l", "list"),
        ("s:deleted", "none"),
    ] {
        assert_eq!(
            c.call(&["TYPE", key]),
            Frame::Simple(kind.into()),
            "TYPE {key}"
        );
    }
}

/// (a) SIGTERM, restart over the same directory: every value and TTL is back, twice in a row.
#[test]
fn graceful_restart_keeps_every_type_and_ttl() {
    for fsync in ["everysec", "no"] {
        eprintln!("--fsync {fsync}");
        let dir = tempfile::tempdir().expect("tempdir");
        let server = Server::start(dir.path(), &["--fsync", fsync]);
        let mut c = server.client();
        let written = Instant::now();
        let keys = write_mix(&mut c);
        check_mix(&mut c, written, keys);
        drop(c);

        let server = server.restart();
        check_mix(&mut server.client(), written, keys);
        let server = server.restart();
        check_mix(&mut server.client(), written, keys);
        server.stop();
    }
}

/// SHUTDOWN, as `redis-cli shutdown` sends it, stops the server as SIGTERM does: the
/// connection closes unanswered, the process exits 0, and every value and TTL is back after
/// a start over the same directory. Inside MULTI it is refused and fails the transaction.
/// SAVE, BGSAVE and LASTSAVE answer as Redis's do.
#[test]
fn shutdown_command_stops_the_server_and_keeps_its_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    let written = Instant::now();
    let keys = write_mix(&mut c);
    let error = |text: &str| Frame::Error(text.into());

    c.ok(&["MULTI"]);
    let refused = error("ERR Command not allowed inside a transaction");
    assert_eq!(c.call(&["SHUTDOWN"]), refused);
    assert_eq!(c.call(&["SAVE"]), refused);
    assert_eq!(
        c.call(&["EXEC"]),
        error("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(
        c.call(&["SHUTDOWN", "ABORT"]),
        error("ERR No shutdown in progress.")
    );
    for bad in [&["SHUTDOWN", "NOSAVE", "SAVE"][..], &["SHUTDOWN", "bogus"]] {
        assert_eq!(c.call(bad), error("ERR syntax error"), "{bad:?}");
    }
    assert_eq!(c.call(&["BGSAVE", "x"]), error("ERR syntax error"));

    let before = unix_seconds();
    c.ok(&["SAVE"]);
    assert!(
        c.int(&["LASTSAVE"]) >= before,
        "LASTSAVE before SAVE's time"
    );
    assert_eq!(
        c.call(&["BGSAVE"]),
        Frame::Simple("Background saving started".into())
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.info_field("persistence", "rdb_bgsave_in_progress") != 0 {
        assert!(Instant::now() < deadline, "BGSAVE still running after 10 s");
        thread::sleep(Duration::from_millis(50));
    }
    assert!(c.int(&["LASTSAVE"]) >= before, "LASTSAVE after BGSAVE");

    let mut idle = server.client();
    let reply = c.raw().call(&["SHUTDOWN"]);
    assert!(reply.is_err(), "SHUTDOWN answered {reply:?}");
    server.wait_stopped("SHUTDOWN");
    assert!(
        idle.try_call(&["PING"]).is_err(),
        "a connection outlived SHUTDOWN"
    );

    let server = Server::start(dir.path(), &[]);
    check_mix(&mut server.client(), written, keys);
    server.stop();
}

/// Seconds since the Unix epoch.
fn unix_seconds() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.expect("a clock after 1970").as_secs() as i64
}

/// SIGTERM while a client pipelines SETs: the server exits 0 and every SET it acknowledged
/// (even with the default `--fsync everysec`) is there after the restart.
#[test]
fn graceful_stop_keeps_acknowledged_pipelined_writes() {
    let mut rng = seeded_rng("DOCDB_REDIS_CRASH_SEED");
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let addr = server.addr();
    let writer = thread::spawn(move || {
        let mut c = Client::connect(addr);
        let mut acked = Vec::new();
        let mut next = 0u64;
        'outer: loop {
            let mut bytes = Vec::new();
            for i in next..next + 500 {
                let (k, v) = (format!("p:{i}"), format!("v{i}"));
                bytes.extend(docdb_redis::testkit::encode_command(&["SET", &k, &v]));
            }
            if c.raw().send_raw(&bytes).is_err() {
                break;
            }
            for i in next..next + 500 {
                match c.raw().read_reply() {
                    Ok(Frame::Simple(s)) if s == "OK" => acked.push(i),
                    Ok(_) => {}
                    Err(_) => break 'outer,
                }
            }
            next += 500;
        }
        acked
    });
    thread::sleep(Duration::from_millis(300 + rng.below(700)));
    server.stop();
    let acked = writer.join().expect("writer thread");
    eprintln!("{} SETs acknowledged before the stop", acked.len());
    assert!(!acked.is_empty(), "no SET was acknowledged");

    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    for chunk in acked.chunks(500) {
        let keys: Vec<String> = chunk.iter().map(|i| format!("p:{i}")).collect();
        let mut args = vec!["MGET"];
        args.extend(keys.iter().map(String::as_str));
        let values = c.call(&args);
        let Frame::Array(values) = values else {
            panic!("MGET: {values:?}")
        };
        for (i, v) in chunk.iter().zip(values) {
            assert_eq!(
                v,
                Frame::Bulk(format!("v{i}").into_bytes()),
                "acknowledged SET p:{i} lost"
            );
        }
    }
    server.stop();
}

/// What one writer of the crash test sent and had acknowledged (cumulative over rounds).
#[derive(Default)]
struct Writer {
    /// INCRs of `crash:ctr:T` sent (acknowledged or not).
    incr_sent: i64,
    /// The last acknowledged value of `crash:ctr:T`.
    incr_acked: i64,
    /// Every RPUSH element sent to `crash:list:T`, in order, and whether it was acknowledged.
    pushed: Vec<(String, bool)>,
    /// The length the last acknowledged RPUSH returned.
    list_acked: i64,
    /// Acknowledged SETs (key, value).
    sets: Vec<(String, String)>,
    /// INCRs of the shared counter sent.
    shared_sent: i64,
    /// The largest acknowledged value of the shared counter.
    shared_acked: i64,
    /// Replies that were wrong (not an I/O error).
    errors: Vec<String>,
    /// Transactions incrementing both `crash:tx:T:a` and `crash:tx:T:b` sent, and the
    /// count the last acknowledged one returned.
    tx_sent: i64,
    tx_acked: i64,
}

/// Writes until the connection breaks: INCR, SET, four pipelined SETs (one batch in the
/// server), RPUSH, INCR shared, a transaction of two INCRs, over and over.
fn crash_writer(addr: std::net::SocketAddr, t: usize, round: u64, mut w: Writer) -> Writer {
    let Ok(mut c) = docdb_redis::testkit::RespClient::connect(addr, Duration::from_secs(5)) else {
        return w;
    };
    let (ctr, list) = (format!("crash:ctr:{t}"), format!("crash:list:{t}"));
    let mut prev_incr = None;
    for i in 0u64.. {
        w.incr_sent += 1;
        match c.call(&["INCR", &ctr]) {
            Ok(Frame::Integer(v)) => {
                if let Some(p) = prev_incr
                    && v != p + 1
                {
                    w.errors.push(format!("INCR {ctr}: {v} after {p}"));
                }
                prev_incr = Some(v);
                w.incr_acked = v;
            }
            Ok(other) => w.errors.push(format!("INCR {ctr}: {other:?}")),
            Err(_) => return w,
        }
        let (key, value) = (format!("crash:s:{t}:{round}:{i}"), format!("{round}.{i}"));
        match c.call(&["SET", &key, &value]) {
            Ok(Frame::Simple(s)) if s == "OK" => w.sets.push((key, value)),
            Ok(other) => w.errors.push(format!("SET {key}: {other:?}")),
            Err(_) => return w,
        }
        let piped: Vec<(String, String)> = (0..4)
            .map(|j| {
                (
                    format!("crash:p:{t}:{round}:{i}:{j}"),
                    format!("{round}.{i}.{j}"),
                )
            })
            .collect();
        for (key, value) in &piped {
            if c.send(&["SET", key, value]).is_err() {
                return w;
            }
        }
        for (key, value) in piped {
            match c.read_reply() {
                Ok(Frame::Simple(s)) if s == "OK" => w.sets.push((key, value)),
                Ok(other) => w.errors.push(format!("pipelined SET {key}: {other:?}")),
                Err(_) => return w,
            }
        }
        let element = format!("{round}.{i}");
        w.pushed.push((element.clone(), false));
        match c.call(&["RPUSH", &list, &element]) {
            Ok(Frame::Integer(n)) => {
                if n <= w.list_acked {
                    w.errors
                        .push(format!("RPUSH {list}: length {n} after {}", w.list_acked));
                }
                w.list_acked = n;
                if let Some(last) = w.pushed.last_mut() {
                    last.1 = true;
                }
            }
            Ok(other) => w.errors.push(format!("RPUSH {list}: {other:?}")),
            Err(_) => return w,
        }
        w.shared_sent += 1;
        match c.call(&["INCR", "crash:shared"]) {
            Ok(Frame::Integer(v)) => w.shared_acked = w.shared_acked.max(v),
            Ok(other) => w.errors.push(format!("INCR crash:shared: {other:?}")),
            Err(_) => return w,
        }
        w.tx_sent += 1;
        match transaction(&mut c, t) {
            Ok(Some(n)) => w.tx_acked = n,
            Ok(None) => w.errors.push("MULTI/EXEC: unexpected replies".into()),
            Err(_) => return w,
        }
    }
    w
}

/// `MULTI`, `INCR crash:tx:T:a`, `INCR crash:tx:T:b`, `EXEC`, pipelined: the counters' new
/// value if EXEC replied with it twice.
fn transaction(c: &mut docdb_redis::testkit::RespClient, t: usize) -> std::io::Result<Option<i64>> {
    let (a, b) = (format!("crash:tx:{t}:a"), format!("crash:tx:{t}:b"));
    let requests: [&[&str]; 4] = [&["MULTI"], &["INCR", &a], &["INCR", &b], &["EXEC"]];
    for request in requests {
        c.send(request)?;
    }
    let mut replies = Vec::new();
    for _ in 0..4 {
        replies.push(c.read_reply()?);
    }
    Ok(match replies.last() {
        Some(Frame::Array(counts)) => match counts.as_slice() {
            [Frame::Integer(x), Frame::Integer(y)] if x == y => Some(*x),
            _ => None,
        },
        _ => None,
    })
}

/// Every acknowledged write of `writers` is in the restarted server, and nothing that was
/// never sent.
fn check_writers(c: &mut Client, writers: &[Writer]) {
    for (t, w) in writers.iter().enumerate() {
        assert!(w.errors.is_empty(), "writer {t}: {:?}", w.errors);
        let ctr = c
            .bulk(&["GET", &format!("crash:ctr:{t}")])
            .map(|s| s.parse::<i64>().expect("counter"))
            .unwrap_or(0);
        assert!(
            (w.incr_acked..=w.incr_sent).contains(&ctr),
            "crash:ctr:{t} = {ctr}; acknowledged {}, sent {}",
            w.incr_acked,
            w.incr_sent
        );

        // A transaction is there whole or not at all.
        let counter = |c: &mut Client, key: String| {
            c.bulk(&["GET", &key])
                .map(|s| s.parse::<i64>().expect("counter"))
                .unwrap_or(0)
        };
        let (a, b) = (
            counter(c, format!("crash:tx:{t}:a")),
            counter(c, format!("crash:tx:{t}:b")),
        );
        assert_eq!(a, b, "writer {t}: half a transaction (a = {a}, b = {b})");
        assert!(
            (w.tx_acked..=w.tx_sent).contains(&a),
            "crash:tx:{t} = {a}; acknowledged {}, sent {}",
            w.tx_acked,
            w.tx_sent
        );

        let list = c.strings(&["LRANGE", &format!("crash:list:{t}"), "0", "-1"]);
        assert!(
            list.len() as i64 >= w.list_acked,
            "crash:list:{t} has {} elements; {} acknowledged",
            list.len(),
            w.list_acked
        );
        // The list is the acknowledged pushes in order, with perhaps some unacknowledged ones.
        let mut at = 0;
        for (element, acked) in &w.pushed {
            if list.get(at) == Some(element) {
                at += 1;
            } else {
                assert!(
                    !acked,
                    "crash:list:{t}: acknowledged element {element} missing at {at}"
                );
            }
        }
        assert_eq!(at, list.len(), "crash:list:{t}: unexpected elements");

        for chunk in w.sets.chunks(500) {
            let mut args = vec!["MGET"];
            args.extend(chunk.iter().map(|(k, _)| k.as_str()));
            let got = c.strings(&args);
            for ((key, value), got) in chunk.iter().zip(got) {
                assert_eq!(&got, value, "acknowledged SET {key} lost");
            }
        }
    }
    let shared = c
        .bulk(&["GET", "crash:shared"])
        .map(|s| s.parse::<i64>().expect("counter"))
        .unwrap_or(0);
    let acked = writers.iter().map(|w| w.shared_acked).max().unwrap_or(0);
    let sent: i64 = writers.iter().map(|w| w.shared_sent).sum();
    assert!(
        (acked..=sent).contains(&shared),
        "crash:shared = {shared}; acknowledged up to {acked}, sent {sent}"
    );
}

/// (b) `--fsync always`: writers record each acknowledged reply, the server is SIGKILLed at a
/// random moment and restarted; every acknowledged write is there. Several rounds over the
/// same directory.
#[test]
fn crash_keeps_acknowledged_writes_with_fsync_always() {
    const WRITERS: usize = 4;
    let rounds = env_u64("DOCDB_REDIS_CRASH_ROUNDS", 5);
    let mut rng = seeded_rng("DOCDB_REDIS_CRASH_SEED");
    let dir = tempfile::tempdir().expect("tempdir");
    // Two command threads: connections commit the WAL for each other concurrently.
    let flags = ["--fsync", "always", "--threads", "2"];
    let mut server = Server::start(dir.path(), &flags);
    let mut writers: Vec<Writer> = (0..WRITERS).map(|_| Writer::default()).collect();
    for round in 0..rounds {
        let addr = server.addr();
        let handles: Vec<_> = std::mem::take(&mut writers)
            .into_iter()
            .enumerate()
            .map(|(t, w)| thread::spawn(move || crash_writer(addr, t, round, w)))
            .collect();
        let wait = Duration::from_millis(200 + rng.below(1300));
        thread::sleep(wait);
        server.crash();
        writers = handles
            .into_iter()
            .map(|h| h.join().expect("writer thread"))
            .collect();
        let acked: usize = writers.iter().map(|w| w.sets.len()).sum();
        eprintln!("round {round}: SIGKILL after {wait:?}; {acked} SETs acknowledged so far");
        assert!(
            writers.iter().all(|w| w.incr_acked > 0),
            "a writer got nothing acknowledged"
        );

        server = Server::start(dir.path(), &flags);
        check_writers(&mut server.client(), &writers);
    }
    server.stop();
}

/// (c) Keys whose TTL ran out while the server was down are gone after the restart; a newer
/// version without TTL survives an older one with it, and the other way round.
#[test]
fn short_ttl_is_gone_after_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    let written = Instant::now();
    c.ok(&["SET", "short", "v", "PX", "300"]);
    c.ok(&["SET", "long", "v", "PX", "60000"]);
    c.ok(&["SET", "newer-with-ttl", "v1"]);
    c.ok(&["SET", "newer-with-ttl", "v2", "PX", "300"]);
    c.ok(&["SET", "newer-without-ttl", "v1", "PX", "300"]);
    c.ok(&["SET", "newer-without-ttl", "v2"]);
    assert_eq!(c.int(&["HSET", "h:short", "f", "v"]), 1);
    assert_eq!(c.int(&["PEXPIRE", "h:short", "300"]), 1);
    assert_eq!(c.int(&["RPUSH", "l:short", "a", "b"]), 2);
    assert_eq!(c.int(&["PEXPIRE", "l:short", "300"]), 1);
    assert_eq!(c.int(&["SADD", "s:short", "m"]), 1);
    assert_eq!(c.int(&["PEXPIRE", "s:short", "300"]), 1);
    c.ok(&["SET", "persisted", "v", "PX", "300"]);
    assert_eq!(c.int(&["PERSIST", "persisted"]), 1);
    assert_eq!(c.bulk(&["GET", "short"]).as_deref(), Some("v"));
    drop(c);
    server.stop();

    if let Some(rest) = Duration::from_millis(400).checked_sub(written.elapsed()) {
        thread::sleep(rest);
    }
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    for key in ["short", "newer-with-ttl", "h:short", "l:short", "s:short"] {
        assert_eq!(c.int(&["EXISTS", key]), 0, "EXISTS {key}");
        assert_eq!(c.int(&["TTL", key]), -2, "TTL {key}");
        assert_eq!(c.int(&["PTTL", key]), -2, "PTTL {key}");
    }
    assert_eq!(c.bulk(&["GET", "short"]), None);
    assert_eq!(c.bulk(&["GET", "newer-with-ttl"]), None);
    assert_eq!(c.strings(&["HGETALL", "h:short"]), Vec::<String>::new());
    assert_eq!(
        c.strings(&["LRANGE", "l:short", "0", "-1"]),
        Vec::<String>::new()
    );
    assert_eq!(c.strings(&["SMEMBERS", "s:short"]), Vec::<String>::new());

    assert_eq!(c.bulk(&["GET", "long"]).as_deref(), Some("v"));
    let pttl = c.int(&["PTTL", "long"]);
    let lower = 60_000 - written.elapsed().as_millis() as i64 - 1000;
    assert!(
        (lower..=60_000).contains(&pttl),
        "PTTL long = {pttl}, expected {lower}..=60000"
    );
    assert_eq!(c.bulk(&["GET", "newer-without-ttl"]).as_deref(), Some("v2"));
    assert_eq!(c.int(&["TTL", "newer-without-ttl"]), -1);
    assert_eq!(c.bulk(&["GET", "persisted"]).as_deref(), Some("v"));
    assert_eq!(c.int(&["TTL", "persisted"]), -1);
    drop(c);
    server.stop();
}

/// SIGINT stops the server like SIGTERM, promptly even with idle clients and a client halfway
/// through a command; they see the connection close, and the data is there after a restart.
#[test]
fn sigint_with_idle_clients_stops_promptly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--fsync", "no"]);
    let mut writer = server.client();
    writer.ok(&["SET", "k", "v"]);
    let mut idle: Vec<Client> = (0..3).map(|_| server.client()).collect();
    let mut partial = server.client();
    partial
        .raw()
        .send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\np\r\n")
        .expect("send half a command");
    thread::sleep(Duration::from_millis(100));

    let stopping = Instant::now();
    server.stop_with("INT");
    let took = stopping.elapsed();
    assert!(took < Duration::from_secs(10), "SIGINT took {took:?}");
    // The connections are closed, at most after an error reply (Redis sends nothing).
    for c in idle.iter_mut().chain([&mut partial, &mut writer]) {
        if let Ok(rest) = c.raw().read_to_close() {
            assert!(
                rest.is_empty() || rest.starts_with(b"-"),
                "bytes after the stop: {:?}",
                String::from_utf8_lossy(&rest)
            );
        }
    }

    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    assert_eq!(c.bulk(&["GET", "k"]).as_deref(), Some("v"));
    assert_eq!(c.bulk(&["GET", "p"]), None);
    drop(c);
    server.stop();
}

/// Sets `count` keys `key:<i>` in one pipeline, then FLUSHDB: a run of deleted documents.
fn set_then_flush(c: &mut Client, count: usize) {
    let sets: Vec<Vec<String>> = (0..count)
        .map(|i| vec!["SET".into(), format!("key:{i}"), "v".into()])
        .collect();
    c.pipeline(&sets);
    c.ok(&["FLUSHDB"]);
}

/// The runs of deleted keys a DBSIZE found after FLUSHDB are saved by a graceful stop and
/// taken back at the next start, so its first DBSIZE skips them too; a crash saves none.
#[test]
fn runs_of_deleted_keys_survive_a_graceful_restart() {
    if common_serve::skipped_on_redis_peer("runs of deleted documents are docdb's") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--fsync", "always"]);
    let mut c = server.client();
    set_then_flush(&mut c, 2000);
    assert_eq!(c.int(&["DBSIZE"]), 0);
    // A key written into the run splits it; the next DBSIZE keeps both parts.
    c.ok(&["SET", "key:7", "back"]);
    assert_eq!(c.int(&["DBSIZE"]), 1);
    let runs = c.info_field("stats", "dead_spans");
    assert!(runs >= 2, "DBSIZE kept the runs it stepped over: {runs}");
    assert_eq!(c.info_field("stats", "dead_spans_restored"), 0);
    drop(c);

    let server = server.restart();
    let mut c = server.client();
    assert_eq!(c.info_field("stats", "dead_spans_restored"), runs);
    assert_eq!(c.int(&["DBSIZE"]), 1);
    assert_eq!(c.strings(&["KEYS", "*"]), vec!["key:7".to_string()]);
    // Restored runs split like learned ones.
    c.ok(&["SET", "key:8", "back"]);
    assert_eq!(sorted(c.strings(&["KEYS", "*"])), ["key:7", "key:8"]);
    drop(c);

    server.crash();
    let server = Server::start(dir.path(), &["--fsync", "always"]);
    let mut c = server.client();
    assert_eq!(c.info_field("stats", "dead_spans_restored"), 0);
    assert_eq!(sorted(c.strings(&["KEYS", "*"])), ["key:7", "key:8"]);
    drop(c);
    server.stop();
}

/// The keys FLUSHDB deleted are swept in the background: their run is kept before any
/// scan reads it, so the first DBSIZE after it already skips it.
#[test]
fn a_flushdb_is_swept_before_the_next_scan() {
    if common_serve::skipped_on_redis_peer("runs of deleted documents are docdb's") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--fsync", "always"]);
    let mut c = server.client();
    set_then_flush(&mut c, 3000);
    // The upkeep sweeps every second; give it a few.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while c.info_field("stats", "deleted_keys_unswept") > 0
        || c.info_field("stats", "dead_spans") == 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "not swept: {:?}",
            c.bulk(&["INFO", "stats"])
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        c.info_field("stats", "dead_spans"),
        1,
        "one run of 3000 deleted keys, found by the sweep alone"
    );
    assert_eq!(c.int(&["DBSIZE"]), 0);
    c.ok(&["SET", "key:5", "back"]);
    assert_eq!(c.strings(&["KEYS", "*"]), vec!["key:5".to_string()]);
    drop(c);
    server.stop();
}

#[test]
fn dump_reads_beside_the_server_and_leaves_its_saved_runs() {
    if common_serve::skipped_on_redis_peer("the dump and the runs are docdb's") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--fsync", "always"]);
    let mut c = server.client();
    set_then_flush(&mut c, 500);
    c.ok(&["SET", "kept", "live-value"]);
    assert_eq!(c.int(&["DBSIZE"]), 1);
    let runs = c.info_field("stats", "dead_spans");
    assert!(runs >= 1, "DBSIZE kept the runs it stepped over: {runs}");

    // The server holds the directory; the dump opens it read-only beside it.
    let live = dump(dir.path());
    assert!(
        live.contains("\"live-value\""),
        "the server's write: {live}"
    );
    c.ok(&["SET", "kept", "still-served"]);
    drop(c);

    let server = {
        let flags = ["--fsync", "always"];
        server.stop();
        // After the clean close: the dump reads and must not take the saved runs.
        let closed = dump(dir.path());
        assert!(closed.contains("\"still-served\""), "{closed}");
        assert_eq!(dump(dir.path()), closed, "a dump changes nothing");
        Server::start(dir.path(), &flags)
    };
    let mut c = server.client();
    assert_eq!(c.info_field("stats", "dead_spans_restored"), runs);
    assert_eq!(c.strings(&["KEYS", "*"]), vec!["kept".to_string()]);
    drop(c);

    // After a crash the dump reads what is only in the log.
    c = server.client();
    c.ok(&["SET", "after-crash", "synced"]);
    drop(c);
    server.crash();
    assert!(dump(dir.path()).contains("\"synced\""));
}

/// Function libraries outlive a restart (Redis keeps them in its RDB and AOF files), a
/// library deleted or flushed stays gone, one FUNCTION RESTORE brought back stays, and the script cache starts empty (EVALSHA of a
/// script loaded before answers NOSCRIPT, as after a Redis restart). Also against
/// redis-server with `DOCDB_SERVE_TESTS_PEER=redis` (with its append-only file on).
#[test]
fn function_libraries_survive_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    let library = |name: &str, function: &str| {
        format!(
            "#!lua name={name}\nredis.register_function('{function}', \
             function(keys, args) return redis.call('incrby', keys[1], args[1]) end)"
        )
    };
    for (name, function) in [("kept", "add"), ("dropped", "drop_add")] {
        let code = library(name, function);
        assert_eq!(
            c.call(&["FUNCTION", "LOAD", &code]),
            Frame::Bulk(name.as_bytes().to_vec())
        );
    }
    let sha = c.call(&["SCRIPT", "LOAD", "return 1"]);
    assert_eq!(c.call(&["FCALL", "add", "1", "n", "5"]), Frame::Integer(5));
    c.ok(&["FUNCTION", "DELETE", "dropped"]);
    drop(c);

    let server = server.restart();
    let mut c = server.client();
    assert_eq!(c.call(&["FCALL", "add", "1", "n", "2"]), Frame::Integer(7));
    let not_found = Frame::Error("ERR Function not found".into());
    assert_eq!(c.call(&["FCALL", "drop_add", "1", "n", "2"]), not_found);
    let Frame::Bulk(sha) = sha else {
        panic!("SCRIPT LOAD answered {sha:?}");
    };
    let sha = String::from_utf8(sha).expect("a hex SHA-1");
    assert_eq!(
        c.call(&["EVALSHA", &sha, "0"]),
        Frame::Error("NOSCRIPT No matching script. Please use EVAL.".into())
    );
    let Frame::Bulk(payload) = c.call(&["FUNCTION", "DUMP"]) else {
        panic!("FUNCTION DUMP gave no payload");
    };
    c.ok(&["FUNCTION", "FLUSH"]);
    drop(c);

    let server = server.restart();
    let mut c = server.client();
    assert_eq!(c.call(&["FCALL", "add", "1", "n", "2"]), not_found);
    assert_eq!(c.call(&["FUNCTION", "LIST"]), Frame::Array(Vec::new()));
    // A library FUNCTION RESTORE brought back is kept as a loaded one.
    let restore: [&[u8]; 3] = [b"FUNCTION", b"RESTORE", &payload];
    let restored = c.raw().call(&restore).expect("FUNCTION RESTORE");
    assert_eq!(restored, Frame::Simple("OK".into()));
    drop(c);

    let server = server.restart();
    let mut c = server.client();
    assert_eq!(c.call(&["FCALL", "add", "1", "n", "2"]), Frame::Integer(9));
    drop(c);
    server.stop();
}
