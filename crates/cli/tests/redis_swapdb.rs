//! SWAPDB against a real `redis-server`: the same requests, on several connections, go to
//! both servers and every reply must be the same, byte for byte. Covers the errors, what
//! clients of either database see afterwards, WATCH, MULTI, scripts and blocked clients;
//! then, on docdb alone, that a swap survives a restart and that no command sees half of a
//! swap made meanwhile by another connection.

mod common_redis;
mod common_serve;

use std::time::{Duration, Instant};

use common_redis::{Frame, RespClient, Server, docdb, render, require_redis};

/// Connections per server in a [`lockstep`] script.
const CONNECTIONS: usize = 3;

/// A request's words (split on white space).
fn words(request: &str) -> Vec<Vec<u8>> {
    request
        .split_whitespace()
        .map(|w| w.as_bytes().to_vec())
        .collect()
}

/// One server's connections.
struct Side {
    server: Server,
    clients: Vec<RespClient>,
}

impl Side {
    fn new(server: Server) -> Side {
        let clients = (0..CONNECTIONS).map(|_| server.client()).collect();
        Side { server, clients }
    }

    fn call(&mut self, conn: usize, args: &[Vec<u8>]) -> String {
        let name = self.server.name;
        let reply = self.clients[conn]
            .call(args)
            .unwrap_or_else(|e| panic!("{name}: no reply to {args:?}: {e}"));
        render(&reply)
    }

    fn send(&mut self, conn: usize, args: &[Vec<u8>]) {
        let name = self.server.name;
        self.clients[conn]
            .send(args)
            .unwrap_or_else(|e| panic!("{name}: send {args:?}: {e}"));
    }

    fn read(&mut self, conn: usize) -> String {
        let name = self.server.name;
        let reply = self.clients[conn]
            .read_reply()
            .unwrap_or_else(|e| panic!("{name}: no pending reply: {e}"));
        render(&reply)
    }

    /// Waits (polling, on a spare connection) until `count` clients are blocked.
    fn await_blocked(&self, count: u64) {
        let mut probe = self.server.client();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let reply = probe.call(&["INFO", "clients"]).expect("INFO clients");
            let Frame::Bulk(text) = reply else {
                panic!("{}: INFO clients: {reply:?}", self.server.name);
            };
            let text = String::from_utf8_lossy(&text).into_owned();
            let blocked = text
                .lines()
                .find_map(|l| l.strip_prefix("blocked_clients:"))
                .and_then(|n| n.trim().parse::<u64>().ok());
            if blocked == Some(count) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{}: never {count} blocked clients ({blocked:?})",
                self.server.name
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Runs `script` on both servers (after FLUSHALL), each step on one of [`CONNECTIONS`]
/// connections: `N request` calls on connection N and compares the replies, `N< request`
/// only sends (a blocking command), `N>` reads the reply pending there and compares it,
/// `#blocked n` waits until n clients are blocked on each server.
/// Fails listing every step whose replies differ.
fn lockstep(script: &[&str]) {
    let mut redis = Side::new(require_redis(&[]));
    let mut docdb = Side::new(docdb(&[]));
    for side in [&mut redis, &mut docdb] {
        assert_eq!(side.call(0, &words("FLUSHALL")), "+OK");
    }
    let mut failures = Vec::new();
    for (i, step) in script.iter().enumerate() {
        if let Some(n) = step.strip_prefix("#blocked ") {
            let n = n.parse().expect("blocked count");
            redis.await_blocked(n);
            docdb.await_blocked(n);
            continue;
        }
        let (conn, rest) = step.split_at(1);
        let conn: usize = conn.parse().expect("connection number");
        let (want, got) = if let Some(request) = rest.strip_prefix('<') {
            let args = words(request);
            redis.send(conn, &args);
            docdb.send(conn, &args);
            continue;
        } else if rest.starts_with('>') {
            (redis.read(conn), docdb.read(conn))
        } else {
            let args = words(rest);
            (redis.call(conn, &args), docdb.call(conn, &args))
        };
        if want != got {
            failures.push(format!("[{i}] {step}\n  redis: {want}\n  docdb: {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} steps differ:\n{}",
        failures.len(),
        script.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_match_redis() {
    lockstep(&[
        "0 SWAPDB",
        "0 SWAPDB 0",
        "0 SWAPDB 0 1 2",
        "0 SWAPDB a 1",
        "0 SWAPDB 0 b",
        "0 SWAPDB a b",
        "0 SWAPDB 0 16",
        "0 SWAPDB 16 0",
        "0 SWAPDB -1 0",
        "0 SWAPDB 16 b",
        "0 SWAPDB 00 1",
        "0 SWAPDB -0 1",
        "0 SWAPDB +1 0",
        "0 SWAPDB 1.0 0",
        "0 SWAPDB 2147483648 0",
        "0 SWAPDB 0 -2147483649",
        "0 SWAPDB 0 2147483647",
        "0 SWAPDB 99999999999999999999 0",
        "0 swapdb 0 0",
        "0 SwApDb 15 0",
        "0 SWAPDB 15 0",
    ]);
}

#[test]
fn clients_of_either_database_see_the_other() {
    lockstep(&[
        "0 SET k zero",
        "0 SET only0 x",
        "0 RPUSH list a b",
        "1 SELECT 1",
        "1 SET k one",
        "1 HSET h f v",
        "2 SELECT 2",
        "2 SET k two",
        "0 INFO keyspace",
        "0 SWAPDB 0 1",
        "0 GET k",
        "0 HGET h f",
        "0 EXISTS only0 list",
        "0 DBSIZE",
        "1 GET k",
        "1 LRANGE list 0 -1",
        "1 DBSIZE",
        "2 GET k",
        "0 INFO keyspace",
        // A write after the swap lands where its client's database now is.
        "1 SET after1 y",
        "0 SET after0 z",
        "0 SELECT 1",
        "0 GET after1",
        "0 EXISTS after0",
        "0 SELECT 0",
        "0 GET after0",
        // MOVE and COPY name databases by their index, through the swap.
        "0 MOVE k 2",
        "0 SET k again",
        "0 MOVE k 1",
        "0 COPY after0 copied DB 1",
        "1 GET copied",
        "1 MOVE copied 0",
        "1 MOVE only0 0",
        "0 GET only0",
        // Swapping an index with itself changes nothing; swapping back restores both.
        "0 SWAPDB 1 1",
        "1 GET k",
        "0 SWAPDB 1 0",
        "0 GET k",
        "1 GET k",
        "0 INFO keyspace",
        // Three databases in a cycle.
        "0 SWAPDB 0 1",
        "0 SWAPDB 1 2",
        "0 SWAPDB 2 0",
        "0 GET k",
        "1 GET k",
        "2 GET k",
        "0 INFO keyspace",
        "0 FLUSHDB",
        "1 DBSIZE",
        "2 DBSIZE",
        "0 DBSIZE",
        "0 INFO keyspace",
    ]);
}

#[test]
fn watch_fails_after_a_swap_involving_the_key() {
    lockstep(&[
        "0 SET k zero",
        "1 SELECT 1",
        "1 SET other one",
        // The watched key exists in the watcher's database.
        "0 WATCH k",
        "1 SWAPDB 0 1",
        "0 MULTI",
        "0 GET k",
        "0 EXEC",
        // It exists only in the database swapped in.
        "0 WATCH other",
        "1 SWAPDB 1 0",
        "0 MULTI",
        "0 GET other",
        "0 EXEC",
        // It exists in neither: the swap does not touch it.
        "0 WATCH nowhere",
        "1 SWAPDB 0 1",
        "0 MULTI",
        "0 GET k",
        "0 EXEC",
        "1 SWAPDB 0 1",
        // Swapping an index with itself touches nothing.
        "0 WATCH k",
        "1 SWAPDB 0 0",
        "0 MULTI",
        "0 GET k",
        "0 EXEC",
        // Nor does a swap of other databases.
        "0 WATCH k",
        "1 SWAPDB 1 2",
        "0 MULTI",
        "0 GET k",
        "0 EXEC",
        "1 SWAPDB 1 2",
        // Watched in database 1 by name k; database 1 swapped twice, k back in neither.
        "2 SELECT 3",
        "2 SET k three",
        "1 WATCH k",
        "0 SWAPDB 1 3",
        "0 SWAPDB 3 1",
        "1 MULTI",
        "1 GET k",
        "1 EXEC",
    ]);
}

#[test]
fn swapdb_in_multi_and_scripts() {
    lockstep(&[
        "0 SET k zero",
        "1 SELECT 1",
        "1 SET k one",
        "0 MULTI",
        "0 GET k",
        "0 SWAPDB 0 1",
        "0 GET k",
        "0 SWAPDB 0 x",
        "0 EXEC",
        "0 GET k",
        "1 GET k",
        "0 MULTI",
        "0 SWAPDB 0",
        "0 EXEC",
        "0 EVAL return(redis.call('swapdb',0,1)) 0",
        "0 GET k",
        "0 EVAL return(redis.call('swapdb',0,99)) 0",
        "0 EVAL return(redis.pcall('swapdb','a',1)) 0",
        "0 GET k",
    ]);
}

#[test]
fn a_swap_serves_blocked_clients() {
    lockstep(&[
        "0 SELECT 1",
        "0 RPUSH list a b",
        "1< BLPOP list 0",
        "#blocked 1",
        "0 SWAPDB 0 1",
        "1>",
        "1 LRANGE list 0 -1",
        // A client blocked in database 1 gets the list when database 0's comes there.
        "1 SELECT 1",
        "1< BRPOP list 0",
        "#blocked 1",
        "0 SWAPDB 1 0",
        "1>",
        // A swap that brings nothing leaves it blocked; a push then serves it.
        "1< BLPOP empty 0",
        "#blocked 1",
        "0 SWAPDB 1 5",
        "0 SELECT 1",
        "0 DBSIZE",
        "0 RPUSH empty x",
        "1>",
        // A swap inside MULTI, or in a script, serves them after the EXEC or the script.
        "1 SELECT 0",
        "0 SELECT 2",
        "0 RPUSH queue a",
        "1< BLPOP queue 0",
        "#blocked 1",
        "0 MULTI",
        "0 SWAPDB 0 2",
        "0 EXEC",
        "1>",
        "0 RPUSH queue b",
        "1< BLPOP queue 0",
        "#blocked 1",
        "0 EVAL return(redis.call('swapdb',0,2)) 0",
        "1>",
        "1 EXISTS queue",
        // A group reader whose stream a swap takes away ends with an error, as after DEL.
        "1 XGROUP CREATE st g $ MKSTREAM",
        "1< XREADGROUP GROUP g c BLOCK 0 STREAMS st >",
        "#blocked 1",
        "0 SWAPDB 0 3",
        "1>",
    ]);
}

/// docdb's named databases are not indexes: SWAPDB refuses them as Redis refuses a word.
#[test]
fn named_databases_are_not_swapped() {
    let server = docdb(&[]);
    let mut c = server.client();
    let call = |c: &mut RespClient, line: &str| render(&c.call(&words(line)).expect(line));
    assert_eq!(call(&mut c, "CREATEDB named"), "+OK");
    assert_eq!(
        call(&mut c, "SWAPDB named 0"),
        "-ERR invalid first DB index"
    );
    assert_eq!(
        call(&mut c, "SWAPDB 0 named"),
        "-ERR invalid second DB index"
    );
}

/// A swap is stored: after a restart over the same directory each database still shows
/// the other's keys, and swapping back then restores them.
#[test]
fn a_swap_survives_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = common_serve::Server::start(dir.path(), &[]);
    let mut c = server.client();
    c.ok(&["SET", "k", "zero"]);
    c.ok(&["SELECT", "5"]);
    c.ok(&["SET", "k", "five"]);
    assert_eq!(c.int(&["RPUSH", "list", "a", "b"]), 2);
    c.ok(&["SWAPDB", "0", "5"]);
    c.ok(&["SWAPDB", "5", "9"]);
    drop(c);
    let server = server.restart();
    let mut c = server.client();
    assert_eq!(c.bulk(&["GET", "k"]).as_deref(), Some("five"));
    assert_eq!(c.int(&["LLEN", "list"]), 2);
    c.ok(&["SELECT", "9"]);
    assert_eq!(c.bulk(&["GET", "k"]).as_deref(), Some("zero"));
    c.ok(&["SELECT", "5"]);
    assert_eq!(c.int(&["DBSIZE"]), 0);
    c.ok(&["SWAPDB", "9", "5"]);
    c.ok(&["SWAPDB", "5", "0"]);
    drop(c);
    let server = server.restart();
    let mut c = server.client();
    assert_eq!(c.bulk(&["GET", "k"]).as_deref(), Some("zero"));
    c.ok(&["SELECT", "5"]);
    assert_eq!(c.bulk(&["GET", "k"]).as_deref(), Some("five"));
    assert_eq!(c.int(&["LLEN", "list"]), 2);
    c.ok(&["SELECT", "9"]);
    assert_eq!(c.int(&["DBSIZE"]), 0);
    drop(c);
    server.stop();
}

/// Keys written in each database, all with one value: a command that saw half of a swap
/// would find two values.
const KEYS: usize = 20;

fn fill(c: &mut common_serve::Client, db: &str, value: &str) {
    c.ok(&["SELECT", db]);
    let mut mset = vec!["MSET".to_string()];
    for i in 0..KEYS {
        mset.extend([format!("k{i}"), value.to_string()]);
    }
    let args: Vec<&str> = mset.iter().map(String::as_str).collect();
    c.ok(&args);
}

/// With two server threads, swaps on one connection while others read and write many keys
/// of database 0 in single commands: every command sees database 0 wholly before or wholly
/// after each swap.
#[test]
fn no_command_sees_half_a_swap() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = common_serve::Server::start(dir.path(), &["--threads", "2"]);
    let mut c = server.client();
    fill(&mut c, "0", "a");
    fill(&mut c, "1", "b");
    let addr = server.addr();
    let swapper = std::thread::spawn(move || {
        let mut c = common_serve::Client::connect(addr);
        for _ in 0..300 {
            c.ok(&["SWAPDB", "0", "1"]);
        }
    });
    let keys: Vec<String> = (0..KEYS).map(|i| format!("k{i}")).collect();
    let mut mget = vec!["MGET"];
    mget.extend(keys.iter().map(String::as_str));
    for round in 0..600 {
        c.ok(&["SELECT", "0"]);
        let seen = c.strings(&mget);
        assert!(
            seen.iter().all(|v| *v == seen[0]),
            "round {round}: MGET saw half a swap: {seen:?}"
        );
        // A multi-key write lands wholly in one database: each keeps one value throughout.
        fill(&mut c, "0", &format!("r{round}"));
    }
    swapper.join().expect("swapper");
    for db in ["0", "1"] {
        c.ok(&["SELECT", db]);
        let seen = c.strings(&mget);
        assert!(
            seen.iter().all(|v| *v == seen[0]),
            "database {db} mixes letters: {seen:?}"
        );
    }
    drop(c);
    server.stop();
}

fn unix_micros() -> String {
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_micros();
    micros.to_string()
}

/// DOCDB.ASOF reads each database through the mapping of its time, also after a restart.
#[test]
fn reads_in_the_past_see_the_databases_of_then() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = common_serve::Server::start(dir.path(), &[]);
    let mut c = server.client();
    c.ok(&["SET", "k", "zero"]);
    c.ok(&["SELECT", "1"]);
    c.ok(&["SET", "k", "one"]);
    c.ok(&["SELECT", "0"]);
    std::thread::sleep(Duration::from_millis(20));
    let then = unix_micros();
    std::thread::sleep(Duration::from_millis(20));
    c.ok(&["SWAPDB", "0", "1"]);
    drop(c);
    let server = server.restart();
    let mut c = server.client();
    assert_eq!(c.bulk(&["GET", "k"]).as_deref(), Some("one"));
    assert_eq!(
        c.bulk(&["DOCDB.ASOF", &then, "GET", "k"]).as_deref(),
        Some("zero")
    );
    c.ok(&["SELECT", "1"]);
    assert_eq!(c.bulk(&["GET", "k"]).as_deref(), Some("zero"));
    assert_eq!(
        c.bulk(&["DOCDB.ASOF", &then, "GET", "k"]).as_deref(),
        Some("one")
    );
    drop(c);
    server.stop();
}
