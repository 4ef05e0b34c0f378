//! MIGRATE between docdb and a real `redis-server` in every direction (docdb → Redis,
//! Redis → docdb, docdb → docdb, and Redis → Redis as the reference): every value type
//! with its TTL, COPY, REPLACE, the KEYS form, other databases, AUTH and AUTH2, NOKEY,
//! unreachable, closing and silent targets. Every transcript is compared with the one a
//! Redis source gives against a Redis target, so each expectation is Redis's own.

mod common_redis;

use std::io::Read;
use std::net::TcpListener;

use common_redis::{Frame, RespClient, Server, docdb, render, require_redis};

/// What kind of server to start.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Redis,
    Docdb,
}

const KINDS: [Kind; 2] = [Kind::Redis, Kind::Docdb];

fn start(kind: Kind, flags: &[&str]) -> Server {
    match kind {
        Kind::Redis => require_redis(flags),
        Kind::Docdb => docdb(flags),
    }
}

fn call(client: &mut RespClient, args: &[&str]) -> Frame {
    client
        .call(args)
        .unwrap_or_else(|e| panic!("{args:?}: no reply: {e}"))
}

fn reply(client: &mut RespClient, args: &[&str]) -> String {
    render(&call(client, args))
}

/// The requests that fill a source with one key of each type, two with TTLs, and a
/// string larger than Redis's 64 KiB write chunks.
fn seed(client: &mut RespClient) {
    let big = "x".repeat(200_000);
    let requests: &[&[&str]] = &[
        &["SET", "str", "hello"],
        &["SET", "big", &big],
        &["RPUSH", "list", "a", "b", "c"],
        &["HSET", "hash", "f1", "v1", "f2", "v2"],
        &["SADD", "set", "x", "y", "z"],
        &["SADD", "intset", "1", "2", "3"],
        &["ZADD", "zset", "1", "a", "2.5", "b"],
        &["XADD", "stream", "1-1", "f", "v"],
        &["XADD", "stream", "2-1", "g", "w"],
        &["XGROUP", "CREATE", "stream", "grp", "0"],
        &["SET", "ttl", "v", "PX", "100000"],
        &["RPUSH", "tlist", "q"],
        &["PEXPIRE", "tlist", "100000"],
    ];
    for request in requests {
        call(client, request);
    }
    let read = call(
        client,
        &[
            "XREADGROUP",
            "GROUP",
            "grp",
            "alice",
            "COUNT",
            "1",
            "STREAMS",
            "stream",
            ">",
        ],
    );
    assert!(
        matches!(read, Frame::Array(_)),
        "XREADGROUP: {}",
        render(&read)
    );
}

const KEYS: [&str; 11] = [
    "str", "big", "list", "hash", "set", "intset", "zset", "stream", "ttl", "tlist", "none",
];

/// Sorted renders of the items of an array reply (for unordered collections).
fn sorted(frame: Frame) -> String {
    match frame {
        Frame::Array(items) => {
            let mut items: Vec<String> = items.iter().map(render).collect();
            items.sort();
            items.join(" ")
        }
        other => render(&other),
    }
}

/// What `key` holds, type by type, and whether it has a TTL within what was set.
fn contents(client: &mut RespClient, key: &str) -> String {
    let kind = reply(client, &["TYPE", key]);
    let value = match kind.as_str() {
        "+string" => reply(client, &["GET", key]),
        "+list" => reply(client, &["LRANGE", key, "0", "-1"]),
        "+hash" => sorted(call(client, &["HGETALL", key])),
        "+set" => sorted(call(client, &["SMEMBERS", key])),
        "+zset" => reply(client, &["ZRANGE", key, "0", "-1", "WITHSCORES"]),
        "+stream" => format!(
            "{} {} {}",
            reply(client, &["XRANGE", key, "-", "+"]),
            reply(client, &["XINFO", "GROUPS", key]),
            reply(client, &["XPENDING", key, "grp", "-", "+", "10"])
                .split(", :")
                .next()
                .unwrap_or_default()
        ),
        _ => String::new(),
    };
    let ttl = match call(client, &["PTTL", key]) {
        Frame::Integer(ms) if ms > 0 && ms <= 100_000 => "ttl kept".to_string(),
        other => render(&other),
    };
    // A big value is shown by its length only.
    let value = if value.len() > 200 {
        format!("{} bytes", value.len())
    } else {
        value
    };
    format!("{key}: {kind} {value} {ttl}")
}

fn all_contents(client: &mut RespClient) -> Vec<String> {
    KEYS.iter().map(|key| contents(client, key)).collect()
}

#[test]
fn every_type_moves_in_every_direction() {
    for from in KINDS {
        for to in KINDS {
            let (source, target) = (start(from, &[]), start(to, &[]));
            let (mut s, mut t) = (source.client(), target.client());
            seed(&mut s);
            let before = all_contents(&mut s);
            let port = target.port();
            // The single-key form to database 0, the KEYS form (with a missing key) to 5.
            let one = reply(&mut s, &["MIGRATE", "127.0.0.1", &port, "str", "0", "5000"]);
            let mut keys = vec!["MIGRATE", "127.0.0.1", &port, "", "5", "5000", "KEYS"];
            keys.extend(&KEYS[1..]);
            let many = reply(&mut s, &keys);
            let context = format!("{from:?} -> {to:?}");
            assert_eq!((one.as_str(), many.as_str()), ("+OK", "+OK"), "{context}");
            let gone = reply(&mut s, &{
                let mut exists = vec!["EXISTS"];
                exists.extend(KEYS);
                exists
            });
            assert_eq!(gone, ":0", "{context}: the sources are deleted");
            let mut after = vec![contents(&mut t, "str")];
            call(&mut t, &["SELECT", "5"]);
            after.extend(KEYS[1..].iter().map(|key| contents(&mut t, key)));
            assert_eq!(after, before, "{context}: what the target holds");
        }
    }
}

/// A request to the source, `$P` standing for the target's port and `$A` for the port
/// of a target that requires the password `sekret`.
const SCRIPT: &[&[&str]] = &[
    &["SET", "a", "1"],
    &["MIGRATE", "127.0.0.1", "$P", "a", "0", "5000"],
    &["EXISTS", "a"],
    &["MIGRATE", "127.0.0.1", "$P", "a", "0", "5000"],
    &["SET", "a", "2"],
    &["MIGRATE", "127.0.0.1", "$P", "a", "0", "5000"],
    &["EXISTS", "a"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "a",
        "0",
        "5000",
        "COPY",
        "REPLACE",
    ],
    &["EXISTS", "a"],
    &["MIGRATE", "127.0.0.1", "$P", "a", "0", "5000", "replace"],
    &["EXISTS", "a"],
    &["SET", "b", "1"],
    &["SET", "c", "2"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "",
        "4",
        "5000",
        "KEYS",
        "b",
        "missing",
        "c",
    ],
    &["EXISTS", "b", "c"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "",
        "4",
        "5000",
        "KEYS",
        "missing",
        "other",
    ],
    &["MIGRATE", "127.0.0.1", "$P", "", "4", "5000", "KEYS"],
    &["SET", "b", "3"],
    &["SET", "d", "4"],
    // d is restored (and deleted here), b is refused: the first error is the reply.
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "",
        "4",
        "5000",
        "KEYS",
        "d",
        "b",
    ],
    &["EXISTS", "b", "d"],
    // A key named twice is sent twice: the second is refused without REPLACE.
    &["SET", "e", "5"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "",
        "4",
        "5000",
        "KEYS",
        "e",
        "e",
    ],
    &["EXISTS", "e"],
    &["SET", "e", "5"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "",
        "6",
        "5000",
        "COPY",
        "REPLACE",
        "KEYS",
        "e",
        "e",
    ],
    &["EXISTS", "e"],
    &["MIGRATE", "127.0.0.1", "$P", "b", "0", "5000", "foo"],
    &["MIGRATE", "127.0.0.1", "$P", "b", "0", "5000", "AUTH"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "b",
        "0",
        "5000",
        "AUTH2",
        "user",
    ],
    &["MIGRATE", "127.0.0.1", "$P", "b", "0", "5000", "KEYS", "b"],
    &["MIGRATE", "127.0.0.1", "$P", "b", "x", "5000"],
    &["MIGRATE", "127.0.0.1", "$P", "b", "0", "soon"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$P",
        "b",
        "0",
        "5000",
        "bad",
        "KEYS",
    ],
    &["MIGRATE", "127.0.0.1", "$P", "b", "99", "5000", "COPY"],
    // SELECT 99 fails, yet the RESTORE after it runs in the connection's database (6).
    // After an error no database is known, and -1 is "unknown": no SELECT is sent, and b
    // is refused in database 6.
    &["MIGRATE", "127.0.0.1", "$P", "b", "-1", "5000", "COPY"],
    &["MIGRATE", "127.0.0.1", "$P", "b", "7", "-3", "COPY"],
    &["MIGRATE", "127.0.0.1", "$A", "b", "0", "5000", "COPY"],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$A",
        "b",
        "0",
        "5000",
        "COPY",
        "AUTH",
        "wrong",
    ],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$A",
        "b",
        "0",
        "5000",
        "COPY",
        "AUTH",
        "sekret",
    ],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$A",
        "b",
        "0",
        "5000",
        "COPY",
        "AUTH2",
        "default",
        "sekret",
    ],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$A",
        "b",
        "0",
        "5000",
        "COPY",
        "AUTH2",
        "bob",
        "sekret",
    ],
    &[
        "MIGRATE",
        "127.0.0.1",
        "$A",
        "b",
        "0",
        "5000",
        "REPLACE",
        "AUTH2",
        "default",
        "sekret",
    ],
    &["EXISTS", "b"],
    &["SET", "r", "restored"],
    &["RESTORE-ASKING", "r", "0", "not a payload"],
    &["RESTORE-ASKING", "fresh", "0", "not a payload"],
];

/// Requests to the targets afterwards: what each database holds.
const TARGET_CHECKS: &[&[&str]] = &[
    &["MGET", "a", "b", "c", "d", "e"],
    &["SELECT", "4"],
    &["MGET", "a", "b", "c", "d", "e"],
    &["SELECT", "6"],
    &["MGET", "a", "b", "c", "d", "e"],
    &["SELECT", "7"],
    &["MGET", "a", "b", "c", "d", "e"],
];

/// The script's transcript from a `from` source to `to` targets.
fn script_transcript(from: Kind, to: Kind) -> Vec<String> {
    let source = start(from, &[]);
    let target = start(to, &[]);
    let locked = start(to, &["--requirepass", "sekret"]);
    let (port, locked_port) = (target.port(), locked.port());
    let mut s = source.client();
    let mut lines = Vec::new();
    for request in SCRIPT {
        let args: Vec<&str> = request
            .iter()
            .map(|&arg| match arg {
                "$P" => port.as_str(),
                "$A" => locked_port.as_str(),
                other => other,
            })
            .collect();
        lines.push(format!("{request:?} -> {}", reply(&mut s, &args)));
    }
    let mut t = target.client();
    for request in TARGET_CHECKS {
        lines.push(format!("target {request:?} -> {}", reply(&mut t, request)));
    }
    let mut l = locked.client();
    call(&mut l, &["AUTH", "sekret"]);
    lines.push(format!(
        "locked: {}",
        reply(&mut l, &["MGET", "a", "b", "d"])
    ));
    lines
}

#[test]
fn replies_match_redis_in_every_direction() {
    let want = script_transcript(Kind::Redis, Kind::Redis);
    for (from, to) in [
        (Kind::Docdb, Kind::Redis),
        (Kind::Redis, Kind::Docdb),
        (Kind::Docdb, Kind::Docdb),
    ] {
        let got = script_transcript(from, to);
        let differences: Vec<String> = want
            .iter()
            .zip(&got)
            .filter(|(w, g)| w != g)
            .map(|(w, g)| format!("  redis: {w}\n  {from:?} -> {to:?}: {g}"))
            .collect();
        assert!(
            differences.is_empty() && got.len() == want.len(),
            "{from:?} -> {to:?} differs from Redis -> Redis:\n{}",
            differences.join("\n")
        );
    }
}

/// Where nothing listens: [`CLOSED_HOST`] at the returned port, which the returned listener
/// holds on 127.0.0.1 while it lives. A port bound and released instead could be handed to
/// a server started next (this test's own source: MIGRATE then waits on itself and fails
/// reading, not writing).
fn closed_port() -> (TcpListener, String) {
    let holder = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = holder.local_addr().expect("addr").port().to_string();
    (holder, port)
}

/// A loopback address no server of the tests binds: connections to it are refused.
const CLOSED_HOST: &str = "127.0.0.2";

#[test]
fn broken_targets_fail_as_in_redis() {
    // Accepts nothing: connections wait in its backlog, and no reply ever comes.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_port = silent.local_addr().expect("addr").port().to_string();
    // Accepts each connection and closes it at once, after reading what came.
    let closing = TcpListener::bind("127.0.0.1:0").expect("bind");
    let closing_port = closing.local_addr().expect("addr").port().to_string();
    std::thread::spawn(move || {
        for mut stream in closing.incoming().flatten() {
            let mut buf = [0u8; 64];
            let _ = stream.read(&mut buf);
        }
    });
    let (closed_holder, closed) = closed_port();
    let requests: Vec<Vec<&str>> = vec![
        vec!["MIGRATE", CLOSED_HOST, &closed, "k", "0", "1000"],
        vec!["MIGRATE", "127.0.0.1", &silent_port, "k", "0", "300"],
        vec!["MIGRATE", "127.0.0.1", &closing_port, "k", "0", "1000"],
        vec!["MIGRATE", "nonexistent.invalid", "6379", "k", "0", "1000"],
        vec!["MIGRATE", "127.0.0.1", "-1", "k", "0", "1000"],
        vec!["EXISTS", "k"],
        vec!["MIGRATE", CLOSED_HOST, &closed, "nokey", "0", "1000"],
    ];
    let mut transcripts = Vec::new();
    for kind in KINDS {
        let source = start(kind, &[]);
        let mut s = source.client();
        call(&mut s, &["SET", "k", "v"]);
        let lines: Vec<String> = requests
            .iter()
            .map(|request| format!("{} -> {}", request.join(" "), reply(&mut s, request)))
            .collect();
        transcripts.push(lines);
    }
    let want = [
        "-IOERR error or timeout writing to target instance",
        "-IOERR error or timeout reading to target instance",
        "-IOERR error or timeout reading to target instance",
        "-IOERR error or timeout connecting to the client",
        "-IOERR error or timeout connecting to the client",
        ":1",
        "+NOKEY",
    ];
    for (line, want) in transcripts[0].iter().zip(want) {
        assert!(line.ends_with(want), "redis: {line}, expected {want}");
    }
    assert_eq!(
        transcripts[1], transcripts[0],
        "docdb (left) vs redis (right)"
    );
    drop((silent, closed_holder));
}

/// A MONITOR line of a target without its time and client, RESTORE's payload masked.
fn monitored(line: &str) -> String {
    let command = line.split_once("] ").map_or(line, |(_, rest)| rest);
    if !command.starts_with("\"RESTORE\"") {
        return command.to_string();
    }
    let head: Vec<&str> = command.splitn(4, "\" \"").take(3).collect();
    let replace = if command.ends_with(" \"REPLACE\"") {
        " \"REPLACE\""
    } else {
        ""
    };
    format!("{}\" <payload>{replace}", head.join("\" \""))
}

/// What a Redis target sees of a series of MIGRATEs from a `from` source: the SELECTs
/// sent only when the connection's database differs, again after an error, and AUTH.
fn target_transcript(from: Kind) -> Vec<String> {
    let source = start(from, &[]);
    let target = require_redis(&[]);
    let mut monitor = target.raw();
    monitor.send(b"*1\r\n$7\r\nMONITOR\r\n");
    monitor.expect(b"+OK\r\n", "MONITOR");
    let mut s = source.client();
    let port = target.port();
    let migrate = |extra: &[&'static str]| -> Vec<String> {
        let mut args = vec!["MIGRATE".to_string(), "127.0.0.1".into(), port.clone()];
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    };
    let mut replies = Vec::new();
    call(&mut s, &["SET", "a", "1"]);
    call(&mut s, &["RPUSH", "b", "x", "y"]);
    for extra in [
        &["a", "0", "5000", "COPY"][..],
        &["a", "0", "5000", "COPY", "REPLACE"],
        &["b", "2", "5000", "COPY"],
        &["b", "2", "5000", "COPY"],
        &["b", "2", "5000", "COPY", "REPLACE"],
        &[
            "", "3", "5000", "COPY", "AUTH2", "default", "any", "KEYS", "a", "b",
        ],
        &["a", "3", "5000", "REPLACE"],
    ] {
        let args = migrate(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        replies.push(format!("{extra:?} -> {}", reply(&mut s, &args)));
    }
    call(&mut target.client(), &["ECHO", "done"]);
    let mut lines = replies;
    loop {
        let line = String::from_utf8_lossy(&monitor.read_line()).into_owned();
        assert!(!line.is_empty(), "MONITOR ended before ECHO done");
        if line.contains("\"ECHO\" \"done\"") {
            break;
        }
        lines.push(monitored(line.trim_end()));
    }
    lines
}

#[test]
fn a_redis_target_sees_what_redis_sends() {
    let want = target_transcript(Kind::Redis);
    assert!(
        want.iter().any(|l| l.starts_with("\"SELECT\" \"2\"")),
        "redis sent no SELECT 2: {want:#?}"
    );
    assert_eq!(
        target_transcript(Kind::Docdb),
        want,
        "docdb (left) vs redis (right)"
    );
}

#[test]
fn command_getkeys_and_info_match_redis() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    let requests: &[&[&str]] = &[
        &["COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "10"],
        &["COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10"],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "keys",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "KEYS", "a", "b",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "x", "0", "10", "KEYS", "a", "b",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "COPY", "KEYS", "a",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "AUTH", "KEYS", "a",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "AUTH2", "u", "KEYS", "a",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "10", "KEYS", "KEYS", "a",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "KEYS", "", "0", "10", "KEYS",
        ],
        &["COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0"],
        &["COMMAND", "GETKEYS", "RESTORE-ASKING", "k", "0", "p"],
        &["MIGRATE", "h", "1", "k", "0"],
        &["RESTORE-ASKING", "k", "0"],
    ];
    for request in requests {
        let want = reply(&mut r, request);
        assert_eq!(
            reply(&mut d, request),
            want,
            "{request:?} (redis on the right)"
        );
    }
    for name in ["migrate", "restore-asking"] {
        let info = |client: &mut RespClient| match call(client, &["COMMAND", "INFO", name]) {
            Frame::Array(infos) => match infos.into_iter().next() {
                Some(Frame::Array(info)) => {
                    let fields: Vec<String> = info.iter().take(6).map(render).collect();
                    // Arity and key positions; flags are docdb's own subset.
                    [&fields[..2], &fields[3..]].concat()
                }
                other => panic!("COMMAND INFO {name}: {other:?}"),
            },
            other => panic!("COMMAND INFO {name}: {}", render(&other)),
        };
        assert_eq!(info(&mut d), info(&mut r), "COMMAND INFO {name}");
    }
}

#[test]
fn restore_asking_restores_as_restore_does() {
    let mut transcripts = Vec::new();
    for kind in KINDS {
        let server = start(kind, &[]);
        let mut c = server.client();
        call(&mut c, &["RPUSH", "src", "a", "b"]);
        let Frame::Bulk(payload) = call(&mut c, &["DUMP", "src"]) else {
            panic!("{kind:?}: DUMP gave no payload");
        };
        let restore = |replace: bool| {
            let mut args: Vec<Vec<u8>> = vec![b"RESTORE-ASKING".to_vec(), b"dst".to_vec()];
            args.extend([b"0".to_vec(), payload.clone()]);
            if replace {
                args.push(b"REPLACE".to_vec());
            }
            args
        };
        let mut lines = Vec::new();
        for args in [restore(false), restore(false), restore(true)] {
            lines.push(render(&c.call(&args).expect("a reply")));
        }
        lines.push(reply(&mut c, &["LRANGE", "dst", "0", "-1"]));
        transcripts.push(lines);
    }
    assert_eq!(transcripts[0][0], "+OK", "redis");
    assert_eq!(
        transcripts[1], transcripts[0],
        "docdb (left) vs redis (right)"
    );
}

#[test]
fn a_connection_the_target_closed_is_reopened() {
    let mut transcripts = Vec::new();
    for kind in KINDS {
        let source = start(kind, &[]);
        let target = require_redis(&[]);
        let (mut s, mut t) = (source.client(), target.client());
        let port = target.port();
        call(&mut s, &["SET", "k", "v"]);
        let migrate = [
            "MIGRATE",
            "127.0.0.1",
            &port,
            "k",
            "3",
            "5000",
            "COPY",
            "REPLACE",
        ];
        let mut lines = vec![reply(&mut s, &migrate)];
        // Closes the cached connection: the next MIGRATE fails on it, then reconnects
        // (and selects database 3 again).
        lines.push(reply(
            &mut t,
            &["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"],
        ));
        call(&mut t, &["FLUSHALL"]);
        lines.push(reply(&mut s, &migrate));
        call(&mut t, &["SELECT", "3"]);
        lines.push(reply(&mut t, &["GET", "k"]));
        transcripts.push(lines);
    }
    assert_eq!(transcripts[0], ["+OK", ":1", "+OK", "\"v\""], "redis");
    assert_eq!(
        transcripts[1], transcripts[0],
        "docdb (left) vs redis (right)"
    );
}

/// Redis cannot serve its own MIGRATE (it is blocked in it: IOERR after the timeout);
/// docdb serves the RESTORE, so MIGRATE to itself works, and never loses the key.
#[test]
fn docdb_can_migrate_to_itself_without_losing_the_key() {
    let server = docdb(&[]);
    let mut c = server.client();
    let port = server.port();
    call(&mut c, &["SET", "k", "v"]);
    let to_itself = ["MIGRATE", "127.0.0.1", &port, "k", "0", "1000"];
    let busy = "-ERR Target instance replied with error: BUSYKEY Target key name already exists.";
    assert_eq!(reply(&mut c, &to_itself), busy);
    // RESTORE REPLACE rewrites the key, so the source (the same key) is not deleted.
    let replace = ["MIGRATE", "127.0.0.1", &port, "k", "0", "1000", "REPLACE"];
    assert_eq!(reply(&mut c, &replace), "+OK");
    assert_eq!(reply(&mut c, &["GET", "k"]), "\"v\"");
    // To another database it is a MOVE.
    let other_db = ["MIGRATE", "127.0.0.1", &port, "k", "1", "1000"];
    assert_eq!(reply(&mut c, &other_db), "+OK");
    assert_eq!(reply(&mut c, &["EXISTS", "k"]), ":0");
    call(&mut c, &["SELECT", "1"]);
    assert_eq!(reply(&mut c, &["GET", "k"]), "\"v\"");
}
