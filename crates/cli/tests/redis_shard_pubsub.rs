//! Sharded pub/sub (SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE, PUBSUB SHARDCHANNELS|SHARDNUMSUB),
//! LOLWUT and the refused DEBUG and MODULE of `docdb serve`, compared with a real
//! `redis-server`: the same multi-connection script runs against Redis first and docdb
//! second, and every reply (and every message pushed to a subscriber) must be the same
//! bytes, RESP2 and RESP3.

mod common_redis;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common_redis::{Frame, Server, cmd, docdb, require_redis, show};

/// A connection that reads whole RESP frames and keeps their exact bytes.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    server: &'static str,
}

impl Conn {
    fn open(server: &Server) -> Conn {
        let stream = TcpStream::connect(server.addr()).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            buf: Vec::new(),
            server: server.name,
        }
    }

    fn send(&mut self, args: &[&str]) {
        self.stream.write_all(&cmd(args)).expect("write");
    }

    /// The bytes of the next frame (a reply or a pushed message).
    fn frame(&mut self) -> Vec<u8> {
        loop {
            if let Ok((_, used)) = Frame::parse(&self.buf) {
                return self.buf.drain(..used).collect();
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(n @ 1..) => self.buf.extend_from_slice(&chunk[..n]),
                other => panic!(
                    "{}: no whole frame ({other:?}); have {}",
                    self.server,
                    show(&self.buf)
                ),
            }
        }
    }
}

/// One step of a script over numbered connections.
#[derive(Clone, Copy)]
enum Step<'a> {
    /// Sends a command on a connection and records that many frames (its reply, or the
    /// per-channel confirmations, messages to itself included).
    Call(usize, &'a [&'a str], usize),
    /// Sends a command and reads its one reply without recording it (HELLO: its id and
    /// version differ between the servers).
    Quiet(usize, &'a [&'a str]),
    /// Records the next frame pushed to a connection.
    Pushed(usize),
    /// Records the `pubsub*` lines of INFO stats on a connection.
    PubsubInfo(usize),
    /// Closes a connection.
    Close(usize),
    /// Waits until `PUBSUB SHARDNUMSUB channel` on a connection answers `count`, as the
    /// server notices a close in its own time.
    AwaitSubscribers(usize, &'a str, i64),
}

/// Connection `c`, which must still be open.
fn conn(open: &mut [Option<Conn>], c: usize) -> &mut Conn {
    open[c].as_mut().expect("connection still open")
}

/// Runs `script` on `server` over `conns` connections; returns the transcript.
fn run(server: &Server, conns: usize, script: &[Step<'_>]) -> Vec<String> {
    let mut open: Vec<Option<Conn>> = (0..conns).map(|_| Some(Conn::open(server))).collect();
    let mut transcript = Vec::new();
    for (at, step) in script.iter().enumerate() {
        match *step {
            Step::Call(c, args, frames) => {
                let conn = conn(&mut open, c);
                conn.send(args);
                for _ in 0..frames {
                    let got = conn.frame();
                    transcript.push(format!("{at} [{c}] {args:?} -> {}", show(&got)));
                }
            }
            Step::Quiet(c, args) => {
                let conn = conn(&mut open, c);
                conn.send(args);
                conn.frame();
            }
            Step::Pushed(c) => {
                let got = conn(&mut open, c).frame();
                transcript.push(format!("{at} [{c}] pushed {}", show(&got)));
            }
            Step::PubsubInfo(c) => {
                let conn = conn(&mut open, c);
                conn.send(&["INFO", "stats"]);
                let info = String::from_utf8(conn.frame()).expect("utf-8");
                let lines: Vec<&str> = info
                    .split("\r\n")
                    .filter(|line| line.starts_with("pubsub"))
                    .collect();
                transcript.push(format!("{at} [{c}] INFO stats: {lines:?}"));
            }
            Step::Close(c) => open[c] = None,
            Step::AwaitSubscribers(c, channel, count) => {
                let want = format!("*2\r\n${}\r\n{channel}\r\n:{count}\r\n", channel.len());
                let conn = conn(&mut open, c);
                let reached = (0..500).any(|_| {
                    conn.send(&["PUBSUB", "SHARDNUMSUB", channel]);
                    let reached = conn.frame() == want.as_bytes();
                    if !reached {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    reached
                });
                assert!(reached, "{}: {channel} never had {count}", server.name);
            }
        }
    }
    transcript
}

/// Redis first (its replies are the expectations), then docdb: every test here compares
/// the two, so it fails without a redis-server rather than checking nothing.
fn servers() -> [Server; 2] {
    [require_redis(&[]), docdb(&[])]
}

/// Runs `script` against Redis and docdb and compares the transcripts line by line.
fn lockstep(conns: usize, script: &[Step<'_>]) {
    let servers = servers();
    let transcripts: Vec<Vec<String>> = servers.iter().map(|s| run(s, conns, script)).collect();
    let Some((redis, rest)) = transcripts.split_first() else {
        return;
    };
    for docdb in rest {
        for (want, got) in redis.iter().zip(docdb) {
            assert_eq!(got, want, "docdb differs from redis");
        }
        assert_eq!(docdb.len(), redis.len(), "transcript lengths");
    }
}

use Step::{AwaitSubscribers, Call, Close, PubsubInfo, Pushed, Quiet};

/// Shard channels apart from ordinary channels and patterns: each namespace hears only its
/// own publishes, SSUBSCRIBE/SUNSUBSCRIBE count shard channels alone (SUBSCRIBE's counts
/// ignore them), PUBSUB reports each namespace, and SUNSUBSCRIBE with nothing to leave
/// answers a null channel. INFO counts channels, distinct patterns and shard channels.
#[test]
fn shard_channels_are_a_namespace_of_their_own() {
    let script = [
        Call(0, &["SUBSCRIBE", "x"], 1),
        Call(0, &["SSUBSCRIBE", "x", "y"], 2),
        Call(0, &["PSUBSCRIBE", "*"], 1),
        Call(0, &["SSUBSCRIBE", "x"], 1),
        Call(1, &["SPUBLISH", "x", "hi"], 1),
        Pushed(0),
        Call(1, &["PUBLISH", "x", "plain"], 1),
        Pushed(0),
        Pushed(0),
        Call(1, &["SPUBLISH", "nobody", "m"], 1),
        Call(1, &["PUBSUB", "SHARDCHANNELS", "y*"], 1),
        Call(1, &["PUBSUB", "SHARDCHANNELS", "x"], 1),
        Call(1, &["PUBSUB", "SHARDCHANNELS", "nope*"], 1),
        Call(1, &["PUBSUB", "SHARDNUMSUB", "x", "y", "z", "x"], 1),
        Call(1, &["PUBSUB", "SHARDNUMSUB"], 1),
        Call(1, &["PUBSUB", "CHANNELS"], 1),
        Call(1, &["PUBSUB", "NUMSUB", "x", "y"], 1),
        Call(1, &["PUBSUB", "NUMPAT"], 1),
        // A pattern two clients share counts once.
        Call(2, &["PSUBSCRIBE", "*", "z*"], 2),
        Call(1, &["PUBSUB", "NUMPAT"], 1),
        PubsubInfo(1),
        Call(1, &["PUBSUB", "SHARDCHANNELS", "a", "b"], 1),
        Call(1, &["PUBSUB", "CHANNELS", "a", "b"], 1),
        Call(1, &["PUBSUB", "NUMPAT", "x"], 1),
        Call(1, &["PUBSUB", "HELP"], 1),
        Call(1, &["PUBSUB", "HELP", "x"], 1),
        Call(1, &["PUBSUB", "nope"], 1),
        Call(1, &["PUBSUB"], 1),
        Call(1, &["SPUBLISH", "x"], 1),
        Call(1, &["SSUBSCRIBE"], 1),
        Call(0, &["SUNSUBSCRIBE", "x"], 1),
        Call(0, &["SUNSUBSCRIBE", "never"], 1),
        Call(0, &["UNSUBSCRIBE"], 1),
        Call(0, &["PUNSUBSCRIBE"], 1),
        // Still subscribed (to y): other commands are refused.
        Call(0, &["GET", "k"], 1),
        Call(0, &["SPUBLISH", "y", "m"], 1),
        Call(0, &["PUBLISH", "y", "m"], 1),
        Call(0, &["MULTI"], 1),
        Call(0, &["PING"], 1),
        Call(0, &["PING", "hey"], 1),
        Call(0, &["SUNSUBSCRIBE"], 1),
        Call(0, &["SUNSUBSCRIBE"], 1),
        Call(0, &["GET", "k"], 1),
        Call(0, &["SUBSCRIBE", "s"], 1),
        Call(0, &["SUNSUBSCRIBE"], 1),
        Call(0, &["SSUBSCRIBE", "t"], 1),
        Call(0, &["UNSUBSCRIBE"], 1),
        Call(0, &["UNSUBSCRIBE"], 1),
        Call(0, &["SUNSUBSCRIBE", "t", "u"], 2),
        Call(1, &["PUBSUB", "SHARDCHANNELS"], 1),
        PubsubInfo(1),
    ];
    lockstep(3, &script);
}

/// A subscriber publishing to its own shard channel (RESP3, where it may) hears the
/// message before SPUBLISH's reply; messages are `smessage` pushes in RESP3 too; and RESP3
/// confirmations and a null channel are pushes and a RESP3 null.
#[test]
fn shard_pubsub_in_resp3_matches_redis() {
    let script = [
        Quiet(0, &["HELLO", "3"]),
        Call(0, &["SSUBSCRIBE", "s"], 1),
        Call(0, &["GET", "k"], 1),
        Call(0, &["SUBSCRIBE", "s"], 1),
        Call(0, &["SPUBLISH", "s", "self"], 2),
        Call(1, &["SPUBLISH", "s", "other"], 1),
        Pushed(0),
        Call(1, &["PUBLISH", "s", "plain"], 1),
        Pushed(0),
        Call(0, &["SUNSUBSCRIBE"], 1),
        Call(0, &["SUNSUBSCRIBE"], 1),
        Call(0, &["UNSUBSCRIBE", "s"], 1),
        Quiet(0, &["HELLO", "2"]),
        Call(0, &["SSUBSCRIBE", "r2"], 1),
        Call(0, &["SET", "k", "v"], 1),
        Call(1, &["SPUBLISH", "r2", "m"], 1),
        Pushed(0),
    ];
    lockstep(2, &script);
}

/// RESET, QUIT and a closed connection leave shard channels; MULTI queues SPUBLISH and
/// SUNSUBSCRIBE but EXEC refuses SSUBSCRIBE ("deny blocking"); scripts may SPUBLISH but
/// not (un)subscribe.
#[test]
fn shard_subscriptions_end_with_the_connection_state() {
    let script = [
        Call(0, &["SSUBSCRIBE", "a"], 1),
        Call(0, &["RESET"], 1),
        Call(1, &["PUBSUB", "SHARDNUMSUB", "a"], 1),
        Call(1, &["SPUBLISH", "a", "m"], 1),
        Call(0, &["GET", "k"], 1),
        Call(2, &["SSUBSCRIBE", "b"], 1),
        Call(1, &["PUBSUB", "SHARDNUMSUB", "b"], 1),
        Close(2),
        AwaitSubscribers(1, "b", 0),
        Call(3, &["SSUBSCRIBE", "c"], 1),
        Call(3, &["QUIT"], 1),
        AwaitSubscribers(1, "c", 0),
        Call(0, &["SSUBSCRIBE", "d"], 1),
        Call(1, &["MULTI"], 1),
        Call(1, &["SPUBLISH", "d", "in-exec"], 1),
        Call(1, &["SSUBSCRIBE", "e"], 1),
        Call(1, &["SUNSUBSCRIBE", "e"], 1),
        Call(1, &["EXEC"], 1),
        Pushed(0),
        Call(1, &["PUBSUB", "SHARDNUMSUB", "e"], 1),
        Call(
            1,
            &["EVAL", "return redis.call('spublish', 'd', 'lua')", "0"],
            1,
        ),
        Pushed(0),
        Call(1, &["EVAL", "return redis.call('ssubscribe', 'd')", "0"], 1),
        Call(
            1,
            &["EVAL", "return redis.call('sunsubscribe', 'd')", "0"],
            1,
        ),
    ];
    lockstep(4, &script);
}

/// Shard channels are keys for COMMAND INFO's first/last/step (Redis 7.0 marks them
/// `not_key`), yet COMMAND GETKEYS finds none.
#[test]
fn shard_commands_key_specs_match_redis() {
    let script = [
        Call(0, &["COMMAND", "GETKEYS", "SPUBLISH", "a", "b"], 1),
        Call(0, &["COMMAND", "GETKEYS", "SSUBSCRIBE", "a", "b"], 1),
        Call(0, &["COMMAND", "GETKEYS", "SUNSUBSCRIBE", "a"], 1),
        Call(0, &["COMMAND", "GETKEYS", "SPUBLISH", "a"], 1),
        Call(0, &["COMMAND", "GETKEYS", "ECHO", "a", "b"], 1),
        Call(0, &["COMMAND", "GETKEYS", "GET"], 1),
        Call(0, &["COMMAND", "GETKEYS", "GET", "a", "b"], 1),
    ];
    lockstep(1, &script);
    for server in servers() {
        let mut conn = Conn::open(&server);
        for (name, range) in [
            ("spublish", ":1\r\n:1\r\n:1\r\n"),
            ("ssubscribe", ":1\r\n:-1\r\n:1\r\n"),
            ("sunsubscribe", ":1\r\n:-1\r\n:1\r\n"),
        ] {
            conn.send(&["COMMAND", "INFO", name]);
            let info = String::from_utf8(conn.frame()).expect("utf-8");
            assert!(info.contains(range), "{}: {info}", server.name);
        }
    }
}

/// LOLWUT's banner, Schotter (VERSION 5) and skyline (VERSION 6) where no chance is
/// involved (Schotter's first two rows of squares, a skyline one row tall), byte for byte
/// in RESP2 and RESP3 (a verbatim string), and its argument errors.
#[test]
fn lolwut_matches_redis() {
    let lolwuts: &[&[&str]] = &[
        &["LOLWUT"],
        &["LOLWUT", "foo"],
        &["LOLWUT", "VERSION"],
        &["LOLWUT", "version", "7"],
        &["LOLWUT", "VERSION", "-1"],
        &["LOLWUT", "VERSION", "1", "2"],
        &["LOLWUT", "VERSION", "x"],
        &["LOLWUT", "VERSION", "5", "1", "1", "1"],
        &["LOLWUT", "VERSION", "5", "2", "1", "1"],
        &["LOLWUT", "VERSION", "5", "3", "1", "1"],
        &["LOLWUT", "VERSION", "5", "10", "3", "2"],
        &["LOLWUT", "VERSION", "5", "66", "8", "2"],
        &["LOLWUT", "VERSION", "5", "0", "-4", "0"],
        &["LOLWUT", "VERSION", "5", "1000", "200", "2"],
        &["LOLWUT", "VERSION", "5", "7", "5", "1", "extra"],
        &["LOLWUT", "VERSION", "4294967301", "9", "4", "2"],
        &["LOLWUT", "VERSION", "5", "x"],
        &["LOLWUT", "VERSION", "5", "3", "1", "1.5"],
        &["LOLWUT", "VERSION", "5", "99999999999999999999"],
        &["LOLWUT", "VERSION", "6", "1", "1"],
        &["LOLWUT", "VERSION", "6", "80", "1"],
        &["LOLWUT", "VERSION", "6", "2000", "-3"],
        &["LOLWUT", "VERSION", "6", "5", "x"],
        &["LOLWUT", "VERSION", "6", "x"],
    ];
    let mut script: Vec<Step<'_>> = lolwuts.iter().map(|args| Call(0, args, 1)).collect();
    script.push(Quiet(0, &["HELLO", "3"]));
    script.extend(lolwuts.iter().map(|args| Call(0, args, 1)));
    lockstep(1, &script);
}

/// Where chance draws the art, its shape is still Redis's: as many lines, of as many
/// cells, with the same signature, and only the four grays of the skyline.
#[test]
fn lolwut_random_art_has_redis_shape() {
    let shape = |text: &str| -> (Vec<usize>, String) {
        let (art, signature) = text.split_at(
            text.find("\nGeorg")
                .or(text.find("\nDedicated"))
                .expect("signature"),
        );
        let widths = art.split('\n').map(|line| line.chars().count()).collect();
        (widths, signature.to_string())
    };
    for args in [
        &["LOLWUT", "VERSION", "5"][..],
        &["LOLWUT", "VERSION", "5", "30", "4", "9"],
        &["LOLWUT", "VERSION", "6"],
        &["LOLWUT", "VERSION", "6", "33", "7"],
    ] {
        let shapes: Vec<_> = servers()
            .iter()
            .map(|server| {
                let mut conn = Conn::open(server);
                conn.send(args);
                let reply = String::from_utf8(conn.frame()).expect("utf-8");
                let body = reply.split_once("\r\n").expect("bulk").1;
                if args[2] == "6" {
                    // Each cell as one character, whatever its gray.
                    let mut cells = body.to_string();
                    for gray in ["0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"] {
                        cells = cells.replace(&format!("\x1b[{gray} \x1b[0m"), "#");
                    }
                    assert!(!cells.contains('\x1b'), "{}: other escapes", server.name);
                    return shape(&cells);
                }
                shape(body)
            })
            .collect();
        assert!(
            shapes.windows(2).all(|w| w[0] == w[1]),
            "{args:?}: {shapes:?}"
        );
    }
}

/// DEBUG and MODULE's protected subcommands are refused as by a Redis whose
/// `enable-debug-command` and `enable-module-command` are `no` (inside MULTI too, failing
/// it), after arity and subcommand checks; MODULE LIST and HELP answer; CONFIG GET shows
/// both options.
#[test]
fn debug_and_module_are_refused_as_redis_refuses_them() {
    let script = [
        Call(0, &["DEBUG"], 1),
        Call(0, &["DEBUG", "SLEEP", "0"], 1),
        Call(0, &["DEBUG", "help"], 1),
        Call(0, &["MODULE"], 1),
        Call(0, &["MODULE", "LIST"], 1),
        Call(0, &["MODULE", "LIST", "x"], 1),
        Call(0, &["MODULE", "HELP"], 1),
        Call(0, &["MODULE", "nope"], 1),
        Call(0, &["MODULE", "LOAD"], 1),
        Call(0, &["MODULE", "LOAD", "/x.so"], 1),
        Call(0, &["MODULE", "LOADEX", "/x.so", "ARGS", "a"], 1),
        Call(0, &["MODULE", "UNLOAD", "m"], 1),
        Call(0, &["MODULE", "UNLOAD"], 1),
        Call(0, &["CONFIG", "GET", "enable-debug-command"], 1),
        Call(0, &["CONFIG", "GET", "enable-module-command"], 1),
        Call(0, &["MULTI"], 1),
        Call(0, &["DEBUG", "x"], 1),
        Call(0, &["MODULE", "LIST"], 1),
        Call(0, &["EXEC"], 1),
        Call(0, &["MULTI"], 1),
        Call(0, &["MODULE", "LOAD", "x"], 1),
        Call(0, &["EXEC"], 1),
        Call(0, &["EVAL", "return redis.call('debug', 'x')", "0"], 1),
        Call(0, &["EVAL", "return redis.call('module', 'list')", "0"], 1),
        Call(0, &["SSUBSCRIBE", "c"], 1),
        Call(0, &["DEBUG", "x"], 1),
        Call(0, &["MODULE", "LOAD", "x"], 1),
    ];
    lockstep(1, &script);
}
