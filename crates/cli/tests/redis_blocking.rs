//! Blocking pops (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BZPOPMIN, BZPOPMAX, BLMPOP, BZMPOP)
//! against a real `redis-server`: the same multi-client scripts run on both, and the
//! transcripts (every reply, and every "still blocked" check) must be equal.
//!
//! A script is a list of steps on numbered connections: send a request without reading,
//! read the next reply, check that no reply arrives for a moment (the client is blocked),
//! close a connection, or sleep.

mod common_redis;

use std::time::Duration;

use common_redis::{Frame, RespClient, Server, docdb, render, require_redis};

/// How long a "still blocked" check waits for a reply that must not come.
const QUIET: Duration = Duration::from_millis(250);
/// How long a reply may take (a blocked client's, after the push that serves it).
const REPLY: Duration = Duration::from_secs(5);

#[derive(Clone, Copy)]
enum Step {
    /// Sends a request on connection `.0` without reading its reply.
    Send(usize, &'static str),
    /// Reads connection `.0`'s next reply.
    Reply(usize),
    /// Sends a request on connection `.0` and reads its reply.
    Call(usize, &'static str),
    /// Expects no reply on connection `.0` for a moment: it is blocked.
    Blocked(usize),
    /// Closes connection `.0`.
    Close(usize),
    /// Sleeps this many milliseconds.
    Sleep(u64),
}

use Step::{Blocked, Call, Close, Reply, Send, Sleep};

fn words(request: &str) -> Vec<&str> {
    request.split_whitespace().collect()
}

/// Runs `script` on `server` over fresh connections; returns one line per step.
fn transcript(server: &Server, script: &[Step]) -> Vec<String> {
    let connections = script
        .iter()
        .map(|step| match *step {
            Send(c, _) | Reply(c) | Call(c, _) | Blocked(c) | Close(c) => c + 1,
            Sleep(_) => 0,
        })
        .max()
        .unwrap_or(0);
    let mut clients: Vec<Option<RespClient>> =
        (0..connections).map(|_| Some(server.client())).collect();
    let reply = |clients: &mut Vec<Option<RespClient>>, c: usize, wait: Duration| {
        let client = clients[c].as_mut().expect("connection is open");
        match client.reply_within(wait) {
            Ok(Some(frame)) => render(&frame),
            Ok(None) => "(no reply)".into(),
            Err(e) => format!("(error: {e})"),
        }
    };
    let mut lines = Vec::new();
    for (i, step) in script.iter().enumerate() {
        let line = match *step {
            Send(c, request) => {
                let client = clients[c].as_mut().expect("connection is open");
                client.send(&words(request)).expect("send");
                format!("{c}> {request}")
            }
            Call(c, request) => {
                let client = clients[c].as_mut().expect("connection is open");
                client.send(&words(request)).expect("send");
                format!("{c}> {request} -> {}", reply(&mut clients, c, REPLY))
            }
            Reply(c) => format!("{c}< {}", reply(&mut clients, c, REPLY)),
            Blocked(c) => format!("{c}< {} (blocked?)", reply(&mut clients, c, QUIET)),
            Close(c) => {
                clients[c] = None;
                format!("{c} closed")
            }
            Sleep(ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                format!("sleep {ms}")
            }
        };
        lines.push(format!("[{i}] {line}"));
    }
    lines
}

/// Runs every script on Redis and on docdb (FLUSHALL before each) and compares.
fn check_scripts(scripts: &[(&str, &[Step])]) {
    let redis = require_redis(&[]);
    let docdb = docdb(&[]);
    let mut failures = Vec::new();
    for (name, script) in scripts {
        let mut results = Vec::new();
        for server in [&redis, &docdb] {
            let mut admin = server.client();
            assert_eq!(
                admin.call(&["FLUSHALL"]).expect("flushall"),
                Frame::Simple("OK".into())
            );
            results.push(transcript(server, script));
        }
        if results[0] != results[1] {
            failures.push(format!(
                "script {name}:\n  redis:\n    {}\n  docdb:\n    {}",
                results[0].join("\n    "),
                results[1].join("\n    ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn blocked_clients_are_served_as_redis_serves_them() {
    check_scripts(&[
        (
            "first blocked, first served",
            &[
                Send(0, "BLPOP k 0"),
                Sleep(50),
                Send(1, "BLPOP k 0"),
                Sleep(50),
                Send(2, "BRPOP k 0"),
                Blocked(0),
                Call(3, "RPUSH k a"),
                Reply(0),
                Blocked(1),
                Call(3, "RPUSH k b c d"),
                Reply(1),
                Reply(2),
                Call(3, "LRANGE k 0 -1"),
            ],
        ),
        (
            "several keys: the first written is served",
            &[
                Send(0, "BLPOP x y 0"),
                Blocked(0),
                Call(1, "MULTI"),
                Call(1, "RPUSH y 1"),
                Call(1, "RPUSH x 2"),
                Call(1, "EXEC"),
                Reply(0),
                Call(1, "LRANGE x 0 -1"),
            ],
        ),
        (
            "an element already there is popped at once",
            &[
                Call(1, "RPUSH a 1"),
                Call(0, "BLPOP none a 0"),
                Call(0, "BRPOP a 0.05"),
            ],
        ),
        (
            "timeouts",
            &[
                Send(0, "BLPOP k 0.2"),
                Blocked(0),
                Reply(0),
                Call(0, "BRPOPLPUSH k d 0.05"),
                Call(0, "BLMOVE k d LEFT RIGHT 0.05"),
                Call(0, "BZPOPMIN z 0.05"),
            ],
        ),
        (
            "bad arguments",
            &[
                Call(0, "BLPOP k x"),
                Call(0, "BLPOP k -1"),
                Call(0, "BLPOP k -0.5"),
                Call(0, "BLPOP k inf"),
                Call(0, "BLPOP k 1e20"),
                Call(0, "BLMOVE a b UP LEFT 0"),
                Call(0, "BLPOP k"),
                Call(0, "BRPOPLPUSH a b"),
                Call(1, "SET s v"),
                Call(0, "BLPOP s 0"),
                Call(0, "BLPOP none s 0"),
                Call(0, "BZPOPMAX s 0"),
            ],
        ),
        (
            "a served move makes its destination ready",
            &[
                Send(0, "BLMOVE a b LEFT RIGHT 0"),
                Send(1, "BLPOP b 0"),
                Blocked(0),
                Blocked(1),
                Call(2, "RPUSH a x y"),
                Reply(0),
                Reply(1),
                Call(2, "LRANGE a 0 -1"),
                Call(2, "LLEN b"),
                Send(0, "BRPOPLPUSH a a 0"),
                Reply(0),
                Call(2, "LRANGE a 0 -1"),
            ],
        ),
        (
            "sorted sets",
            &[
                Send(0, "BZPOPMIN z 0"),
                Send(1, "BZPOPMAX z 0"),
                Blocked(0),
                Call(2, "ZADD z 2 b 1 a 3 c"),
                Reply(0),
                Reply(1),
                Call(2, "ZRANGE z 0 -1 WITHSCORES"),
            ],
        ),
        (
            "requests pipelined after a block wait for it",
            &[
                Send(0, "BLPOP k 0"),
                Send(0, "PING"),
                Send(0, "LLEN k"),
                Blocked(0),
                Call(1, "RPUSH k v w"),
                Reply(0),
                Reply(0),
                Reply(0),
            ],
        ),
        (
            "a client that leaves while blocked takes nothing",
            &[
                Send(0, "BLPOP k 0"),
                Blocked(0),
                Close(0),
                Sleep(100),
                Call(1, "RPUSH k v"),
                Call(1, "LLEN k"),
            ],
        ),
        (
            "inside MULTI a blocking pop does not block",
            &[
                Call(0, "MULTI"),
                Call(0, "BLPOP k 0"),
                Call(0, "BZPOPMIN z 0"),
                Call(0, "EXEC"),
            ],
        ),
        (
            "a push and a pop in one EXEC leave nothing to serve",
            &[
                Send(0, "BLPOP k 0"),
                Blocked(0),
                Call(1, "MULTI"),
                Call(1, "RPUSH k a"),
                Call(1, "LPOP k"),
                Call(1, "EXEC"),
                Blocked(0),
                Call(1, "RPUSH k b"),
                Reply(0),
            ],
        ),
        (
            "the blocked client is served before the pusher's next request",
            &[
                Send(0, "BLPOP k 0"),
                Blocked(0),
                Send(1, "RPUSH k a"),
                Send(1, "LPOP k"),
                Reply(1),
                Reply(1),
                Reply(0),
            ],
        ),
        (
            "databases are separate",
            &[
                Call(0, "SELECT 1"),
                Send(0, "BLPOP k 0"),
                Blocked(0),
                Call(1, "RPUSH k in0"),
                Blocked(0),
                Call(1, "SELECT 1"),
                Call(1, "RPUSH k in1"),
                Reply(0),
                Call(1, "SELECT 0"),
                Call(1, "LLEN k"),
            ],
        ),
        (
            "a move to a key of the wrong type fails and keeps the element",
            &[
                Send(0, "BLMOVE src dst LEFT LEFT 0"),
                Blocked(0),
                Call(1, "SET dst str"),
                Call(1, "RPUSH src x"),
                Reply(0),
                Call(1, "LRANGE src 0 -1"),
            ],
        ),
        (
            "BLMPOP and BZMPOP are served from the key written, with their COUNT",
            &[
                Send(0, "BLMPOP 0 2 a b RIGHT COUNT 2"),
                Blocked(0),
                Call(1, "RPUSH b x y z"),
                Reply(0),
                Call(1, "LRANGE b 0 -1"),
                Send(0, "BZMPOP 0 2 z1 z2 MAX COUNT 5"),
                Blocked(0),
                Call(1, "ZADD z2 1 m 2 n"),
                Reply(0),
                Call(1, "EXISTS z2"),
                Call(0, "BLMPOP 0 1 k SIDEWAYS"),
                Call(0, "BZMPOP 0 0 k MIN"),
            ],
        ),
        (
            "BLMPOP and BZMPOP time out with a null",
            &[
                Send(0, "BLMPOP 1 1 k LEFT"),
                Blocked(0),
                Reply(0),
                Send(0, "BZMPOP 1 1 z MIN COUNT 2"),
                Blocked(0),
                Reply(0),
            ],
        ),
        (
            "served before its deadline",
            &[
                Send(0, "BRPOP k 2"),
                Blocked(0),
                Call(1, "LPUSH k v"),
                Reply(0),
                Sleep(100),
                Call(0, "PING"),
            ],
        ),
    ]);
}

/// Clients blocked on one list from two command threads, fed by pushes from a third
/// connection: every element is delivered exactly once.
#[test]
fn every_pushed_element_reaches_exactly_one_blocked_client() {
    let server = docdb(&["--threads", "2"]);
    const CLIENTS: usize = 8;
    const ELEMENTS: usize = 400;
    let workers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let mut client = server.client();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    match client.call(&["BLPOP", "jobs", "1"]).expect("BLPOP") {
                        Frame::Array(pair) => match &pair[..] {
                            [Frame::Bulk(_), Frame::Bulk(v)] => {
                                got.push(String::from_utf8(v.clone()).expect("utf-8"));
                            }
                            other => panic!("BLPOP reply {other:?}"),
                        },
                        Frame::NullArray => return got,
                        other => panic!("BLPOP reply {other:?}"),
                    }
                }
            })
        })
        .collect();
    let mut pusher = server.client();
    for i in 0..ELEMENTS {
        let reply = pusher
            .call(&["RPUSH", "jobs", &i.to_string()])
            .expect("RPUSH");
        assert!(matches!(reply, Frame::Integer(_)), "RPUSH reply {reply:?}");
    }
    let mut delivered: Vec<usize> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("worker"))
        .map(|v| v.parse().expect("number"))
        .collect();
    delivered.sort_unstable();
    let want: Vec<usize> = (0..ELEMENTS).collect();
    assert_eq!(delivered, want, "each element exactly once");
    assert_eq!(
        pusher.call(&["LLEN", "jobs"]).expect("LLEN"),
        Frame::Integer(0)
    );
}
