//! `docdb serve` over raw RESP bytes: malformed frames, request limits, error wording,
//! authentication, inline commands, pipelining and the client limit.
//!
//! Every check runs first against a real `redis-server` (when installed) and then against
//! docdb through the same function, so each expected byte string is Redis 7's own reply.

mod common_redis;

use common_redis::{Frame, Raw, Server, both, cmd, show};
use std::time::{Duration, Instant};

/// Runs `check` against Redis (if installed), then docdb, each started with `flags`.
fn on_both(flags: &[&str], check: impl Fn(&Server)) {
    for server in both(flags) {
        check(&server);
    }
}

/// A fresh connection answers PING (the server survived what came before).
fn assert_serving(server: &Server) {
    server.raw().exchange(b"PING\r\n", b"+PONG\r\n");
}

/// Malformed multibulk frames: Redis replies with a protocol error and closes the
/// connection; the server keeps serving others.
#[test]
fn malformed_frames_get_a_protocol_error_and_a_close() {
    let cases: &[(&[u8], &[u8])] = &[
        (
            b"*1\r\n$x\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$-1\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        // Redis's string2ll takes neither a leading zero nor a plus sign.
        (
            b"*2\r\n$4\r\nECHO\r\n$03\r\nabc\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*2\r\n$4\r\nECHO\r\n$+3\r\nabc\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*x\r\n",
            b"-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*+1\r\n$4\r\nPING\r\n",
            b"-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*1 \r\n",
            b"-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*1\r\nfoo\r\n",
            b"-ERR Protocol error: expected '$', got 'f'\r\n",
        ),
        (
            b"SET \"a b\r\n",
            b"-ERR Protocol error: unbalanced quotes in request\r\n",
        ),
        (
            b"ECHO \"abc\"def\r\n",
            b"-ERR Protocol error: unbalanced quotes in request\r\n",
        ),
    ];
    on_both(&[], |server| {
        for (request, reply) in cases {
            server.raw().expect_reply_then_close(request, reply);
        }
        assert_serving(server);
    });
}

/// A valid command before a malformed one in the same write is executed and answered;
/// nothing after the malformed one is.
#[test]
fn commands_before_a_malformed_frame_still_run() {
    on_both(&[], |server| {
        let mut request = cmd(&["SET", "before", "1"]);
        request.extend_from_slice(b"*1\r\n$x\r\n");
        request.extend_from_slice(&cmd(&["SET", "after", "1"]));
        let mut raw = server.raw();
        raw.send(&request);
        raw.expect(
            b"+OK\r\n-ERR Protocol error: invalid bulk length\r\n",
            &show(&request),
        );
        drop(raw);
        let mut raw = server.raw();
        raw.exchange(&cmd(&["GET", "before"]), b"$1\r\n1\r\n");
        raw.exchange(&cmd(&["GET", "after"]), b"$-1\r\n");
    });
}

/// A line starting with `$` outside a multibulk request is an inline command named `$3`.
#[test]
fn dollar_line_without_star_is_an_inline_command() {
    on_both(&[], |server| {
        server.raw().exchange(
            b"$3\r\nfoo\r\n",
            b"-ERR unknown command '$3', with args beginning with: \r\n\
              -ERR unknown command 'foo', with args beginning with: \r\n",
        );
    });
}

/// Empty and negative multibulk counts are skipped, as are empty inline lines.
#[test]
fn empty_requests_are_skipped() {
    on_both(&[], |server| {
        server
            .raw()
            .exchange(b"*0\r\n*-1\r\n\r\n\r\nPING\r\n", b"+PONG\r\n");
    });
}

/// The largest bulk string a request may carry (`--proto-max-bulk-len`; 1 MiB is Redis's
/// minimum for it).
const MAX_BULK: usize = 1 << 20;

/// A bulk length over the limit is refused when its header arrives: the reply is a
/// protocol error, the connection closes, and the command is not executed. A bulk of
/// exactly the limit is accepted.
#[test]
fn oversized_bulk_is_refused_and_not_executed() {
    let limit = MAX_BULK.to_string();
    on_both(&["--proto-max-bulk-len", &limit], |server| {
        let mut request = cmd(&["SET", "ok", "1"]);
        request.extend_from_slice(
            format!("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n", MAX_BULK + 1).as_bytes(),
        );
        server.raw().expect_reply_then_close(
            &request,
            b"+OK\r\n-ERR Protocol error: invalid bulk length\r\n",
        );
        let mut raw = server.raw();
        raw.exchange(&cmd(&["GET", "ok"]), b"$1\r\n1\r\n");
        raw.exchange(&cmd(&["EXISTS", "big"]), b":0\r\n");
        let value = "v".repeat(MAX_BULK);
        raw.exchange(&cmd(&["SET", "max", &value]), b"+OK\r\n");
        raw.exchange(
            &cmd(&["STRLEN", "max"]),
            format!(":{MAX_BULK}\r\n").as_bytes(),
        );
    });
}

/// A multibulk count over the limit is refused with `invalid multibulk length` and a close.
/// Redis 7's limit is fixed (INT_MAX); docdb's is `--max-multibulk-len`, so each server gets
/// a count just over its own limit, and docdb also gets Redis's.
#[test]
fn oversized_multibulk_count_is_refused() {
    if let Some(redis) = common_redis::redis(&[]) {
        check_multibulk_limit(&redis, 1 << 31);
    }
    let docdb = common_redis::docdb(&["--max-multibulk-len", "100"]);
    check_multibulk_limit(&docdb, 101);
    check_multibulk_limit(&docdb, 1 << 31);
    // Exactly at the limit is fine.
    let mut args = vec!["DEL".to_string()];
    args.extend((1..100).map(|i| format!("nokey{i}")));
    docdb
        .raw()
        .exchange(&common_redis::encode_command(&args), b":0\r\n");
}

fn check_multibulk_limit(server: &Server, count: u64) {
    let request = format!("*{count}\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
    server.raw().expect_reply_then_close(
        request.as_bytes(),
        b"-ERR Protocol error: invalid multibulk length\r\n",
    );
    server.raw().exchange(&cmd(&["EXISTS", "k"]), b":0\r\n");
}

/// Unknown commands: Redis 7.0 quotes the name and up to 128 characters of arguments, each
/// followed by a space, with line breaks turned into spaces.
#[test]
fn unknown_command_wording() {
    let long = "x".repeat(200);
    let cases: Vec<(Vec<u8>, String)> = vec![
        (
            cmd(&["foo", "a"]),
            "-ERR unknown command 'foo', with args beginning with: 'a' \r\n".into(),
        ),
        (
            cmd(&["foo"]),
            "-ERR unknown command 'foo', with args beginning with: \r\n".into(),
        ),
        (
            cmd(&["foo", "a", "bc"]),
            "-ERR unknown command 'foo', with args beginning with: 'a' 'bc' \r\n".into(),
        ),
        (
            cmd(&["foo", &long, "y"]),
            format!(
                "-ERR unknown command 'foo', with args beginning with: '{}' \r\n",
                &long[..128]
            ),
        ),
        (
            cmd(&["foo", "a\r\nb"]),
            "-ERR unknown command 'foo', with args beginning with: 'a  b' \r\n".into(),
        ),
        (
            b"FOO bar\r\n".to_vec(),
            "-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n".into(),
        ),
    ];
    on_both(&[], |server| {
        let mut raw = server.raw();
        for (request, reply) in &cases {
            raw.exchange(request, reply.as_bytes());
        }
    });
}

/// Wrong arity: the lower-case command name (`container|sub` for subcommands).
#[test]
fn wrong_number_of_arguments_wording() {
    let cases: &[(&[&str], &str)] = &[
        (&["GET"], "get"),
        (&["GET", "a", "b"], "get"),
        (&["set", "k"], "set"),
        (&["HSET", "h", "f"], "hset"),
        (&["HSET", "h", "f", "v", "g"], "hset"),
        (&["MSET", "a", "1", "b"], "mset"),
        (&["CONFIG", "GET"], "config|get"),
        (&["Client"], "client"),
        (&["ZADD", "z", "1"], "zadd"),
        (&["LPUSH", "l"], "lpush"),
    ];
    on_both(&[], |server| {
        let mut raw = server.raw();
        for (args, name) in cases {
            let reply = format!("-ERR wrong number of arguments for '{name}' command\r\n");
            raw.exchange(&cmd(args), reply.as_bytes());
        }
        raw.exchange(
            b"GET x x\r\n",
            b"-ERR wrong number of arguments for 'get' command\r\n",
        );
    });
}

/// Operations on a key of another type get WRONGTYPE, and change nothing.
#[test]
fn wrongtype_wording() {
    const WRONGTYPE: &[u8] =
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    on_both(&[], |server| {
        let mut raw = server.raw();
        raw.exchange(&cmd(&["SET", "s", "v"]), b"+OK\r\n");
        raw.exchange(&cmd(&["HSET", "h", "f", "v"]), b":1\r\n");
        raw.exchange(&cmd(&["LPUSH", "s", "x"]), WRONGTYPE);
        raw.exchange(&cmd(&["SADD", "s", "x"]), WRONGTYPE);
        raw.exchange(&cmd(&["ZADD", "s", "1", "x"]), WRONGTYPE);
        raw.exchange(&cmd(&["HGET", "s", "f"]), WRONGTYPE);
        raw.exchange(&cmd(&["GET", "h"]), WRONGTYPE);
        raw.exchange(&cmd(&["INCR", "h"]), WRONGTYPE);
        raw.exchange(&cmd(&["APPEND", "h", "x"]), WRONGTYPE);
        raw.exchange(&cmd(&["SMEMBERS", "h"]), WRONGTYPE);
        raw.exchange(&cmd(&["GET", "s"]), b"$1\r\nv\r\n");
        raw.exchange(&cmd(&["TYPE", "h"]), b"+hash\r\n");
    });
}

const NOAUTH: &[u8] = b"-NOAUTH Authentication required.\r\n";
const WRONGPASS: &[u8] = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n";

/// With `--requirepass`, everything but AUTH (and HELLO, QUIT) answers NOAUTH until the
/// password is given; a wrong password answers WRONGPASS.
#[test]
fn auth_required() {
    on_both(&["--requirepass", "sekret"], |server| {
        let mut raw = server.raw();
        for request in [cmd(&["GET", "a"]), cmd(&["PING"]), b"SET a b\r\n".to_vec()] {
            raw.send(&request);
            raw.expect(NOAUTH, &show(&request));
        }
        raw.send(&cmd(&["HELLO", "2"]));
        raw.expect(
            b"-NOAUTH HELLO must be called with the client already authenticated, otherwise \
              the HELLO AUTH <user> <pass> option can be used to authenticate the client and \
              select the RESP protocol version at the same time\r\n",
            "HELLO 2",
        );
        for request in [
            cmd(&["AUTH", "wrong"]),
            cmd(&["AUTH", "default", "wrong"]),
            cmd(&["AUTH", "nouser", "sekret"]),
        ] {
            raw.send(&request);
            raw.expect(WRONGPASS, &show(&request));
        }
        raw.send(&cmd(&["AUTH"]));
        raw.expect(
            b"-ERR wrong number of arguments for 'auth' command\r\n",
            "AUTH",
        );
        raw.exchange(&cmd(&["AUTH", "sekret"]), b"+OK\r\n");
        raw.exchange(&cmd(&["SET", "a", "b"]), b"+OK\r\n");
        raw.exchange(&cmd(&["GET", "a"]), b"$1\r\nb\r\n");

        let mut other = server.raw();
        other.exchange(&cmd(&["AUTH", "default", "sekret"]), b"+OK\r\n");
        other.exchange(&cmd(&["GET", "a"]), b"$1\r\nb\r\n");

        let mut quitter = server.raw();
        quitter.expect_reply_then_close(&cmd(&["QUIT"]), b"+OK\r\n");
    });
}

/// AUTH against a server without a password: the one-argument form is refused, while the
/// default user takes any password (Redis 7's ACL default user has `nopass`), in AUTH and
/// in HELLO; other users do not exist.
#[test]
fn auth_without_a_password_configured() {
    on_both(&[], |server| {
        let mut raw = server.raw();
        raw.exchange(
            &cmd(&["AUTH", "x"]),
            b"-ERR AUTH <password> called without any password configured for the default \
              user. Are you sure your configuration is correct?\r\n",
        );
        raw.exchange(&cmd(&["AUTH", "default", "anything"]), b"+OK\r\n");
        raw.exchange(
            &cmd(&["AUTH", "bob", "anything"]),
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
        );
        raw.exchange(
            &cmd(&["HELLO", "2", "AUTH", "bob", "x"]),
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
        );
        raw.send(&cmd(&[
            "HELLO", "2", "AUTH", "default", "x", "SETNAME", "hi",
        ]));
        raw.read_until(b"modules\r\n*0\r\n");
        raw.exchange(&cmd(&["CLIENT", "GETNAME"]), b"$2\r\nhi\r\n");
    });
}

/// Before authentication, Redis refuses requests of more than 10 arguments or bulks over
/// 16 KiB outright (a protocol error and a close), so that unauthenticated clients cannot
/// make it buffer much.
#[test]
fn unauthenticated_request_limits() {
    on_both(&["--requirepass", "sekret"], |server| {
        server.raw().expect_reply_then_close(
            b"*11\r\n",
            b"-ERR Protocol error: unauthenticated multibulk length\r\n",
        );
        server.raw().expect_reply_then_close(
            b"*2\r\n$3\r\nGET\r\n$16385\r\n",
            b"-ERR Protocol error: unauthenticated bulk length\r\n",
        );
        let mut raw = server.raw();
        raw.exchange(&cmd(&["AUTH", "sekret"]), b"+OK\r\n");
        let mut args = vec!["DEL"];
        args.extend(["k"; 11]);
        raw.exchange(&cmd(&args), b":0\r\n");
    });
}

/// Inline commands: space-separated words, double quotes with escapes, single quotes,
/// LF-only line ends, surrounding blanks.
#[test]
fn inline_commands() {
    on_both(&[], |server| {
        let mut raw = server.raw();
        raw.exchange(b"PING\r\n", b"+PONG\r\n");
        raw.exchange(b"SET a b\r\n", b"+OK\r\n");
        raw.exchange(b"GET a\r\n", b"$1\r\nb\r\n");
        raw.exchange(b"  PING  \r\n", b"+PONG\r\n");
        raw.exchange(b"ping hi\nping\n", b"$2\r\nhi\r\n+PONG\r\n");
        raw.exchange(b"SET k \"hello world\"\r\n", b"+OK\r\n");
        raw.exchange(b"GET k\r\n", b"$11\r\nhello world\r\n");
        raw.exchange(b"ECHO \"a\\x41\\n\"\r\n", b"$3\r\naA\n\r\n");
        raw.exchange(b"ECHO 'b c'\r\n", b"$3\r\nb c\r\n");
        raw.exchange(b"SET a b\r\nGET a\r\n", b"+OK\r\n$1\r\nb\r\n");
    });
}

/// Many commands in one write are answered in order; a request split into single bytes is
/// reassembled.
#[test]
fn pipelining() {
    on_both(&[], |server| {
        let (mut request, mut reply) = (Vec::new(), Vec::new());
        for i in 0..1000 {
            let key = format!("k{i}");
            request.extend(cmd(&["SET", &key, &i.to_string()]));
            request.extend(cmd(&["INCR", &key]));
            request.extend(cmd(&["GET", &key]));
            let next = (i + 1).to_string();
            reply.extend(b"+OK\r\n");
            reply.extend(format!(":{next}\r\n${}\r\n{next}\r\n", next.len()).as_bytes());
        }
        request.extend(cmd(&["DBSIZE"]));
        reply.extend(b":1000\r\n");
        let mut raw = server.raw();
        raw.send(&request);
        raw.expect(&reply, "1000 pipelined SET/INCR/GET");

        let mut request = cmd(&["SET", "split", "value"]);
        request.extend(cmd(&["GET", "split"]));
        request.extend(b"ECHO inline\r\n");
        raw.send_trickle(&request);
        raw.expect(
            b"+OK\r\n$5\r\nvalue\r\n$6\r\ninline\r\n",
            "a request sent byte by byte",
        );
    });
}

/// CLIENT REPLY: OFF silences every reply, errors included, until ON; SKIP silences its
/// own and the next request's; ON answers even right after a SKIP.
#[test]
fn client_reply_modes() {
    on_both(&[], |server| {
        let mut request = Vec::new();
        for words in [
            &["CLIENT", "REPLY", "OFF"][..],
            &["SET", "k", "1"],
            &["BOGUS"],
            &["INCR", "k"],
            &["CLIENT", "REPLY", "ON"],
            &["GET", "k"],
            &["CLIENT", "REPLY", "SKIP"],
            &["INCR", "k"],
            &["GET", "k"],
            &["CLIENT", "REPLY", "SKIP"],
            &["CLIENT", "REPLY", "ON"],
            &["PING"],
            &["CLIENT", "REPLY", "MAYBE"],
        ] {
            request.extend(cmd(words));
        }
        let mut raw = server.raw();
        raw.send(&request);
        raw.expect(
            b"+OK\r\n$1\r\n2\r\n$1\r\n3\r\n+OK\r\n+PONG\r\n-ERR syntax error\r\n",
            "CLIENT REPLY OFF, ON and SKIP",
        );
    });
}

/// Long runs of pipelined SET and MSET (which docdb writes in batches of a bounded count and
/// size) followed by reads of every key: each reply in order, the last write of a key winning.
#[test]
fn pipelined_set_runs_longer_than_a_batch() {
    on_both(&[], |server| {
        let (mut request, mut reply) = (Vec::new(), Vec::new());
        // 600 small SETs: more than one batch by count; every key written twice.
        for i in 0..600 {
            request.extend(cmd(&["SET", &format!("r{}", i % 300), &format!("v{i}")]));
            reply.extend(b"+OK\r\n");
        }
        // Values of 300 KiB: more than one batch by size.
        let big: Vec<String> = (0..8).map(|i| format!("{i}").repeat(300 << 10)).collect();
        for (i, value) in big.iter().enumerate() {
            request.extend(cmd(&["MSET", &format!("b{i}"), value, "m", &i.to_string()]));
            reply.extend(b"+OK\r\n");
        }
        for i in 0..300 {
            request.extend(cmd(&["GET", &format!("r{i}")]));
            let value = format!("v{}", i + 300);
            reply.extend(format!("${}\r\n{value}\r\n", value.len()).as_bytes());
        }
        for (i, value) in big.iter().enumerate() {
            request.extend(cmd(&["STRLEN", &format!("b{i}")]));
            reply.extend(format!(":{}\r\n", value.len()).as_bytes());
        }
        request.extend(cmd(&["GET", "m"]));
        reply.extend(b"$1\r\n7\r\n");
        let mut raw = server.raw();
        raw.send(&request);
        raw.expect(&reply, "pipelined SET and MSET runs, then reads");
    });
}

/// QUIT answers +OK and closes; nothing pipelined after it runs.
#[test]
fn quit_closes_the_connection() {
    on_both(&[], |server| {
        let mut request = cmd(&["PING"]);
        request.extend(cmd(&["QUIT"]));
        request.extend(cmd(&["SET", "afterquit", "1"]));
        server
            .raw()
            .expect_reply_then_close(&request, b"+PONG\r\n+OK\r\n");
        server
            .raw()
            .exchange(&cmd(&["EXISTS", "afterquit"]), b":0\r\n");
    });
}

/// With `--maxclients 2`, a third connection gets the error unprompted and is closed; once
/// a slot frees up, new connections are served again.
#[test]
fn maxclients() {
    on_both(&["--maxclients", "2"], |server| {
        // Let the server notice that the start-up readiness probe disconnected.
        std::thread::sleep(Duration::from_millis(200));
        let mut first = server.raw();
        first.exchange(b"PING\r\n", b"+PONG\r\n");
        let mut second = server.raw();
        second.exchange(b"PING\r\n", b"+PONG\r\n");
        let mut third = server.raw();
        third.expect(
            b"-ERR max number of clients reached\r\n",
            "a third connection",
        );
        third.expect_closed("the max clients error");
        drop(first);
        assert_slot_frees_up(server);
    });
}

/// Retries for a while: the server notices a closed connection asynchronously.
fn assert_slot_frees_up(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut raw = Raw::connect(server.addr(), server.name);
        raw.send(b"PING\r\n");
        let got = raw.read_line();
        if got == b"+PONG\r\n" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{}: no slot after a client left (last reply {})",
            server.name,
            show(&got)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Publish/subscribe: confirmations, messages and pattern messages as Redis frames them,
/// the commands allowed while subscribed, and leaving subscribed mode.
#[test]
fn publish_and_subscribe() {
    on_both(&[], |server| {
        let (mut sub, mut other) = (server.raw(), server.raw());
        sub.send(&cmd(&["SUBSCRIBE", "ch1", "ch2"]));
        sub.expect(
            b"*3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n\
              *3\r\n$9\r\nsubscribe\r\n$3\r\nch2\r\n:2\r\n",
            "SUBSCRIBE",
        );
        sub.send(&cmd(&["PSUBSCRIBE", "c*"]));
        sub.expect(
            b"*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:3\r\n",
            "PSUBSCRIBE",
        );
        other.exchange(&cmd(&["PUBLISH", "ch1", "hello"]), b":2\r\n");
        sub.expect(
            b"*3\r\n$7\r\nmessage\r\n$3\r\nch1\r\n$5\r\nhello\r\n\
              *4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$3\r\nch1\r\n$5\r\nhello\r\n",
            "a message to ch1",
        );
        other.exchange(
            &cmd(&["PUBSUB", "NUMSUB", "ch1", "zz"]),
            b"*4\r\n$3\r\nch1\r\n:1\r\n$2\r\nzz\r\n:0\r\n",
        );
        other.exchange(&cmd(&["PUBSUB", "NUMPAT"]), b":1\r\n");
        other.exchange(&cmd(&["PUBSUB", "CHANNELS", "ch1"]), b"*1\r\n$3\r\nch1\r\n");
        check_subscribed_mode(&mut sub);
        other.exchange(&cmd(&["PUBLISH", "ch1", "x"]), b":0\r\n");
    });
}

/// RESP3 after HELLO 3, byte for byte as Redis 7 sends it: doubles, nulls, maps, sets,
/// score pairs, pushes, verbatim text; HELLO 2 goes back to RESP2.
#[test]
fn resp3_wire_types() {
    on_both(&[], |server| {
        let mut c = server.raw();
        c.send(&cmd(&["HELLO", "3"]));
        let hello = c.read_until(b"$7\r\nmodules\r\n*0\r\n");
        assert!(
            hello.starts_with(b"%7\r\n$6\r\nserver\r\n"),
            "{}",
            show(&hello)
        );
        c.exchange(&cmd(&["ZADD", "z", "1.5", "a", "inf", "b"]), b":2\r\n");
        c.exchange(&cmd(&["ZSCORE", "z", "a"]), b",1.5\r\n");
        c.exchange(&cmd(&["ZSCORE", "z", "b"]), b",inf\r\n");
        c.exchange(
            &cmd(&["ZRANGE", "z", "0", "0", "WITHSCORES"]),
            b"*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n",
        );
        c.exchange(&cmd(&["GET", "nope"]), b"_\r\n");
        c.exchange(&cmd(&["LPOP", "nope", "2"]), b"_\r\n");
        c.exchange(&cmd(&["HSET", "h", "f", "v"]), b":1\r\n");
        c.exchange(&cmd(&["HGETALL", "h"]), b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
        c.exchange(&cmd(&["HGETALL", "nope"]), b"%0\r\n");
        c.exchange(&cmd(&["SADD", "s", "x"]), b":1\r\n");
        c.exchange(&cmd(&["SMEMBERS", "s"]), b"~1\r\n$1\r\nx\r\n");
        c.exchange(&cmd(&["INCRBYFLOAT", "f", "1.5"]), b"$3\r\n1.5\r\n");
        c.send(&cmd(&["INFO", "server"]));
        let info = c.read_until(b"\r\ntxt:# Server\r\n");
        assert!(info.starts_with(b"="), "{}", show(&info));
        c.read_until(b"\r\n\r\n");
        c.exchange(
            &cmd(&["SUBSCRIBE", "ch"]),
            b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n",
        );
        c.exchange(&cmd(&["PING"]), b"+PONG\r\n");
        c.exchange(
            &cmd(&["UNSUBSCRIBE"]),
            b">3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n",
        );
        c.exchange(
            &cmd(&["UNSUBSCRIBE"]),
            b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n",
        );
        c.send(&cmd(&["HELLO", "2"]));
        c.read_until(b"$7\r\nmodules\r\n*0\r\n");
        c.exchange(&cmd(&["ZSCORE", "z", "a"]), b"$3\r\n1.5\r\n");
        c.exchange(&cmd(&["GET", "nope"]), b"$-1\r\n");
        c.exchange(&cmd(&["HGETALL", "h"]), b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
    });
}

/// While subscribed only (P)(UN)SUBSCRIBE, PING and QUIT run; PING answers as a message.
/// Unsubscribing from everything returns to normal mode.
fn check_subscribed_mode(sub: &mut Raw) {
    sub.send(&cmd(&["GET", "x"]));
    sub.expect(
        b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / \
          RESET are allowed in this context\r\n",
        "GET while subscribed",
    );
    sub.send(&cmd(&["PING"]));
    sub.expect(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n", "PING while subscribed");
    sub.send(&cmd(&["UNSUBSCRIBE", "ch1"]));
    sub.expect(
        b"*3\r\n$11\r\nunsubscribe\r\n$3\r\nch1\r\n:2\r\n",
        "UNSUBSCRIBE ch1",
    );
    sub.send(&cmd(&["PUNSUBSCRIBE"]));
    sub.expect(
        b"*3\r\n$12\r\npunsubscribe\r\n$2\r\nc*\r\n:1\r\n",
        "PUNSUBSCRIBE",
    );
    sub.send(&cmd(&["UNSUBSCRIBE"]));
    sub.expect(
        b"*3\r\n$11\r\nunsubscribe\r\n$3\r\nch2\r\n:0\r\n",
        "UNSUBSCRIBE",
    );
    sub.send(&cmd(&["UNSUBSCRIBE"]));
    sub.expect(
        b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n",
        "UNSUBSCRIBE again",
    );
    sub.exchange(&cmd(&["GET", "x"]), b"$-1\r\n");
}

/// WATCH: a write from another connection, or the watched key expiring, makes EXEC reply
/// with a null array and run nothing; a read from another connection does not.
#[test]
fn watch_fails_exec_after_another_clients_write_or_expiry() {
    on_both(&[], |server| {
        let mut other = server.raw();
        let mut raw = server.raw();
        raw.exchange(&cmd(&["SET", "w", "1"]), b"+OK\r\n");
        raw.exchange(&cmd(&["WATCH", "w"]), b"+OK\r\n");
        other.exchange(&cmd(&["GET", "w"]), b"$1\r\n1\r\n");
        let mut txn = cmd(&["MULTI"]);
        txn.extend(cmd(&["INCR", "w"]));
        txn.extend(cmd(&["EXEC"]));
        raw.exchange(&txn, b"+OK\r\n+QUEUED\r\n*1\r\n:2\r\n");

        raw.exchange(&cmd(&["WATCH", "w"]), b"+OK\r\n");
        other.exchange(&cmd(&["SET", "w", "10"]), b"+OK\r\n");
        raw.exchange(&txn, b"+OK\r\n+QUEUED\r\n*-1\r\n");
        raw.exchange(&cmd(&["GET", "w"]), b"$2\r\n10\r\n");

        raw.exchange(&cmd(&["SET", "e", "v", "PX", "100"]), b"+OK\r\n");
        raw.exchange(&cmd(&["WATCH", "e"]), b"+OK\r\n");
        std::thread::sleep(Duration::from_millis(250));
        let mut txn = cmd(&["MULTI"]);
        txn.extend(cmd(&["SET", "e2", "x"]));
        txn.extend(cmd(&["EXEC"]));
        raw.exchange(&txn, b"+OK\r\n+QUEUED\r\n*-1\r\n");
        raw.exchange(&cmd(&["EXISTS", "e2"]), b":0\r\n");
    });
}

/// EXEC runs its commands with no other client's command in between: a reader polling two
/// counters that every transaction increments together never sees them differ. docdb runs
/// with two command threads, so the reader and the writer do run at the same time.
#[test]
fn exec_is_isolated_from_concurrent_readers() {
    let servers = common_redis::redis(&[])
        .into_iter()
        .chain([common_redis::docdb(&["--threads", "2"])]);
    for server in servers {
        let addr = server.addr();
        let writer = std::thread::spawn(move || {
            let mut c = docdb_redis::testkit::RespClient::connect(addr, Duration::from_secs(5))
                .expect("connect");
            for _ in 0..300 {
                c.send(&["MULTI"]).expect("send");
                c.send(&["INCR", "x"]).expect("send");
                c.send(&["INCR", "y"]).expect("send");
                c.send(&["EXEC"]).expect("send");
                for _ in 0..3 {
                    c.read_reply().expect("reply");
                }
                let exec = c.read_reply().expect("EXEC reply");
                assert!(
                    matches!(&exec, docdb_redis::Frame::Array(r) if r.len() == 2),
                    "{exec:?}"
                );
            }
        });
        let mut reader = server.client();
        let mut reads = 0;
        while !writer.is_finished() {
            let pair = reader.call(&["MGET", "x", "y"]).expect("MGET");
            let docdb_redis::Frame::Array(values) = &pair else {
                panic!("{}: MGET gave {pair:?}", server.name);
            };
            assert_eq!(
                values[0], values[1],
                "{}: a transaction seen in part",
                server.name
            );
            reads += 1;
        }
        writer.join().expect("writer");
        assert!(reads > 0);
        let mut c = server.client();
        let x = c.call(&["GET", "x"]).expect("GET");
        assert_eq!(
            x,
            docdb_redis::Frame::Bulk(b"300".to_vec()),
            "{}",
            server.name
        );
    }
}

/// A script running past the busy threshold (5 s): other clients are answered BUSY, SCRIPT
/// KILL stops it and its caller gets the kill error, after which the server serves again; a
/// script that has written cannot be killed, and SHUTDOWN NOSAVE still stops the server.
#[test]
fn a_busy_script_answers_busy_and_script_kill_stops_it() {
    const BUSY: &[u8] = b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL \
                          or SHUTDOWN NOSAVE.\r\n";
    const UNKILLABLE: &[u8] = b"-UNKILLABLE Sorry the script already executed write commands \
        against the dataset. You can either wait the script termination or kill the server in \
        a hard way using the SHUTDOWN NOSAVE command.\r\n";
    let busy_after = Duration::from_millis(5600);
    on_both(&[], |server| {
        let body = "local i = 0\nwhile true do i = i + 1 end";
        let sha = sha1_smol::Sha1::from(body).digest().to_string();
        let mut runner = server.raw();
        runner.send(&cmd(&["EVAL", body, "0"]));
        std::thread::sleep(busy_after);
        let mut other = server.raw();
        // `send` and `expect`: `exchange`'s ECHO would be answered BUSY too.
        other.send(&cmd(&["GET", "k"]));
        other.expect(BUSY, "GET while a script is busy");
        other.send(&cmd(&["SCRIPT", "KILL"]));
        other.expect(b"+OK\r\n", "SCRIPT KILL");
        let killed = format!(
            "-ERR Script killed by user with SCRIPT KILL... script: {sha}, on @user_script:2.\r\n"
        );
        runner.expect(killed.as_bytes(), "the killed script's reply");
        other.exchange(&cmd(&["GET", "k"]), b"$-1\r\n");

        let writer = "redis.call('set', 'k', 'v')\nwhile true do end";
        runner.send(&cmd(&["EVAL", writer, "0"]));
        std::thread::sleep(busy_after);
        other.send(&cmd(&["SCRIPT", "KILL"]));
        other.expect(UNKILLABLE, "SCRIPT KILL after a write");
        other.send(&cmd(&["SHUTDOWN", "NOSAVE"]));
        other.expect_closed("SHUTDOWN NOSAVE during an unkillable script");
    });
}

/// RESET before AUTH answers (it needs no authentication), and after AUTH it takes the
/// authentication back, as Redis's does with a password set.
#[test]
fn reset_takes_authentication_back() {
    on_both(&["--requirepass", "sekret"], |server| {
        let mut raw = server.raw();
        raw.send(&cmd(&["RESET"]));
        raw.expect(b"+RESET\r\n", "RESET before AUTH");
        raw.send(&cmd(&["AUTH", "sekret"]));
        raw.expect(b"+OK\r\n", "AUTH");
        raw.send(&cmd(&["SET", "a", "b"]));
        raw.expect(b"+OK\r\n", "SET after AUTH");
        raw.send(&cmd(&["RESET"]));
        raw.expect(b"+RESET\r\n", "RESET after AUTH");
        raw.send(&cmd(&["GET", "a"]));
        raw.expect(NOAUTH, "GET after RESET");
    });
}

/// CLIENT UNBLOCK ends another client's block: with its timeout reply (BLPOP's null
/// array), or with an `UNBLOCKED` error; a client not blocked is answered 0. The blocked
/// client's next request then runs as usual.
#[test]
fn client_unblock_ends_a_block() {
    on_both(&[], |server| {
        let mut blocked = server.raw();
        blocked.send(&cmd(&["CLIENT", "ID"]));
        let id_line = blocked.read_line();
        let id = std::str::from_utf8(&id_line[1..id_line.len() - 2])
            .expect("an integer reply")
            .to_string();
        let mut other = server.client();
        let mut call = |args: &[&str]| other.call(args).expect("a reply");
        assert_eq!(call(&["CLIENT", "UNBLOCK", &id]), Frame::Integer(0));
        for (reason, reply) in [
            ("TIMEOUT", &b"*-1\r\n"[..]),
            (
                "ERROR",
                b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
            ),
        ] {
            blocked.send(&cmd(&["BLPOP", "unblock:list", "0"]));
            // The block must be registered before the unblock: wait until the server
            // counts it.
            let deadline = Instant::now() + Duration::from_secs(5);
            while !matches!(call(&["INFO", "clients"]), Frame::Bulk(info)
                if info.windows(17).any(|w| w == b"blocked_clients:1"))
            {
                assert!(
                    Instant::now() < deadline,
                    "{}: BLPOP never blocked",
                    server.name
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            assert_eq!(call(&["CLIENT", "UNBLOCK", &id, reason]), Frame::Integer(1));
            blocked.expect(reply, &format!("{}: the unblocked BLPOP", server.name));
        }
        blocked.exchange(&cmd(&["PING"]), b"+PONG\r\n");
    });
}

/// CLIENT PAUSE WRITE holds writes (and scripts that may write) while reads go on, until
/// CLIENT UNPAUSE, which a WRITE pause does not hold; CLIENT PAUSE ALL holds every command,
/// UNPAUSE included, until its timeout.
#[test]
fn client_pause_holds_commands() {
    on_both(&[], |server| {
        let mut admin = server.client();
        let mut call = |args: &[&str]| admin.call(args).expect("a reply");
        assert_eq!(
            call(&["CLIENT", "PAUSE", "60000", "WRITE"]),
            Frame::Simple("OK".into())
        );
        let mut reader = server.client();
        // Held reads would time this client out long before the pause ends.
        assert_eq!(
            reader.call(&["GET", "paused:k"]).expect("GET runs"),
            Frame::Null
        );
        assert_eq!(
            reader
                .call(&["EVAL_RO", "return 1", "0"])
                .expect("EVAL_RO runs"),
            Frame::Integer(1)
        );
        let mut writer = server.raw();
        writer.send(&cmd(&["SET", "paused:k", "v"]));
        writer.send(&cmd(&["EVAL", "return 2", "0"]));
        // Replies come in order, so once this GET answers, the SET had its chance to run.
        assert_eq!(
            call(&["GET", "paused:k"]),
            Frame::Null,
            "{}: the SET ran",
            server.name
        );
        assert_eq!(call(&["CLIENT", "UNPAUSE"]), Frame::Simple("OK".into()));
        writer.expect(
            b"+OK\r\n:2\r\n",
            &format!("{}: the held writes", server.name),
        );
        assert_eq!(call(&["GET", "paused:k"]), Frame::Bulk(b"v".to_vec()));

        assert_eq!(
            call(&["CLIENT", "PAUSE", "300", "ALL"]),
            Frame::Simple("OK".into())
        );
        let started = Instant::now();
        let mut other = server.client();
        assert_eq!(
            other.call(&["CLIENT", "UNPAUSE"]).expect("unpause"),
            Frame::Simple("OK".into())
        );
        let held = started.elapsed();
        assert!(
            held >= Duration::from_millis(200),
            "{}: UNPAUSE answered after {held:?}, inside a 300 ms ALL pause",
            server.name
        );
    });
}

/// A RESP3 `invalidate` push for `keys` (`None`: everything, after a flush).
fn invalidate_push(keys: Option<&[&str]>) -> Vec<u8> {
    let mut out = b">2\r\n$10\r\ninvalidate\r\n".to_vec();
    match keys {
        None => out.extend_from_slice(b"_\r\n"),
        Some(keys) => {
            out.extend_from_slice(format!("*{}\r\n", keys.len()).as_bytes());
            for key in keys {
                out.extend_from_slice(format!("${}\r\n{key}\r\n", key.len()).as_bytes());
            }
        }
    }
    out
}

/// A RESP3 connection with tracking turned on with `options`.
fn tracking_client(server: &Server, options: &[&str]) -> Raw {
    let mut raw = server.raw();
    raw.send(&cmd(&["HELLO", "3"]));
    raw.read_until(b"modules\r\n*0\r\n");
    let mut on = vec!["CLIENT", "TRACKING", "ON"];
    on.extend_from_slice(options);
    raw.exchange(&cmd(&on), b"+OK\r\n");
    raw
}

/// Client-side caching in the default mode, over RESP3: a read remembers its keys, the
/// next write of one (by anyone) sends one `invalidate` push and forgets it; the client's
/// own write is announced before its reply unless NOLOOP; flushes invalidate everything;
/// a TTL that lapses invalidates the key.
#[test]
fn tracking_invalidates_what_a_client_read() {
    on_both(&[], |server| {
        let mut cached = tracking_client(server, &[]);
        let mut writer = server.raw();
        cached.exchange(&cmd(&["GET", "t:k"]), b"_\r\n");
        writer.exchange(&cmd(&["SET", "t:k", "v"]), b"+OK\r\n");
        cached.expect(
            &invalidate_push(Some(&["t:k"])),
            "after another client's SET",
        );
        // Forgotten once invalidated: the next write announces nothing.
        writer.exchange(&cmd(&["SET", "t:k", "w"]), b"+OK\r\n");
        cached.exchange(&cmd(&["PING"]), b"+PONG\r\n");

        writer.exchange(&cmd(&["MSET", "t:a", "1", "t:b", "2"]), b"+OK\r\n");
        cached.exchange(
            &cmd(&["MGET", "t:a", "t:b"]),
            b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n",
        );
        writer.exchange(&cmd(&["DEL", "t:a", "t:b", "t:c"]), b":2\r\n");
        let mut both = invalidate_push(Some(&["t:a"]));
        both.extend(invalidate_push(Some(&["t:b"])));
        cached.expect(&both, "after DEL of both keys");

        cached.exchange(&cmd(&["GET", "t:own"]), b"_\r\n");
        // Redis 7.0 sends the invalidation of a client's own write after the reply.
        let mut own = b"+OK\r\n".to_vec();
        own.extend(invalidate_push(Some(&["t:own"])));
        cached.exchange(&cmd(&["SET", "t:own", "1"]), &own);

        cached.exchange(&cmd(&["GET", "t:k"]), b"$1\r\nw\r\n");
        writer.exchange(&cmd(&["FLUSHALL"]), b"+OK\r\n");
        cached.expect(&invalidate_push(None), "after FLUSHALL");

        writer.exchange(&cmd(&["SET", "t:ttl", "v", "PX", "100"]), b"+OK\r\n");
        cached.exchange(&cmd(&["GET", "t:ttl"]), b"$1\r\nv\r\n");
        cached.expect(&invalidate_push(Some(&["t:ttl"])), "after the TTL lapsed");

        let mut quiet = tracking_client(server, &["NOLOOP"]);
        quiet.exchange(&cmd(&["GET", "t:n"]), b"_\r\n");
        quiet.exchange(&cmd(&["SET", "t:n", "1"]), b"+OK\r\n");
        quiet.exchange(&cmd(&["PING"]), b"+PONG\r\n");
    });
}

/// BCAST announces every write under the client's prefixes, read or not; OPTIN remembers a
/// read only after CLIENT CACHING YES; a RESP2 client gets its invalidations through a
/// client it redirects them to, subscribed to `__redis__:invalidate`.
#[test]
fn tracking_modes_bcast_optin_and_redirect() {
    on_both(&[], |server| {
        let mut writer = server.raw();
        let mut bcast = tracking_client(server, &["BCAST", "PREFIX", "user:"]);
        writer.exchange(&cmd(&["SET", "user:1", "x"]), b"+OK\r\n");
        writer.exchange(&cmd(&["SET", "other", "y"]), b"+OK\r\n");
        bcast.expect(&invalidate_push(Some(&["user:1"])), "a BCAST prefix write");
        bcast.exchange(&cmd(&["PING"]), b"+PONG\r\n");

        let mut optin = tracking_client(server, &["OPTIN"]);
        optin.exchange(&cmd(&["GET", "o:a"]), b"_\r\n");
        writer.exchange(&cmd(&["SET", "o:a", "1"]), b"+OK\r\n");
        optin.exchange(&cmd(&["PING"]), b"+PONG\r\n");
        // Not `exchange`: its ECHO check would be the command CACHING applies to.
        optin.send(&cmd(&["CLIENT", "CACHING", "YES"]));
        optin.send(&cmd(&["GET", "o:a"]));
        optin.expect(b"+OK\r\n$1\r\n1\r\n", "CACHING YES, then GET");
        writer.exchange(&cmd(&["SET", "o:a", "2"]), b"+OK\r\n");
        optin.expect(&invalidate_push(Some(&["o:a"])), "after CLIENT CACHING YES");

        let mut target = server.raw();
        target.send(&cmd(&["CLIENT", "ID"]));
        let line = target.read_line();
        let id = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        target.send(&cmd(&["SUBSCRIBE", "__redis__:invalidate"]));
        target.read_until(b"__redis__:invalidate\r\n:1\r\n");
        let mut resp2 = server.raw();
        resp2.exchange(
            &cmd(&["CLIENT", "TRACKING", "ON", "REDIRECT", &id]),
            b"+OK\r\n",
        );
        resp2.exchange(&cmd(&["GET", "r:k"]), b"$-1\r\n");
        writer.exchange(&cmd(&["SET", "r:k", "v"]), b"+OK\r\n");
        target.expect(
            b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$3\r\nr:k\r\n",
            "the redirected invalidation",
        );
    });
}
