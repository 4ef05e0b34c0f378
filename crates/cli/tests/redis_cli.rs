//! `docdb serve` driven by the real `redis-cli`: one-shot commands, authentication, `--pipe`
//! mass insertion, commands read from a file on stdin, `-x`, `--scan`.
//!
//! Each check runs first against a real `redis-server` (when installed), then docdb, through
//! the same function, so the expected output is what redis-cli prints for Redis.

mod common_redis;

use std::collections::BTreeSet;
use std::process::Output;

use common_redis::{Server, Stdin, both, encode_command, redis_cli_path, run_redis_cli};

/// Runs `check` against Redis (if installed), then docdb, each started with `flags`.
fn on_both(flags: &[&str], check: impl Fn(&Server)) {
    redis_cli_path();
    for server in both(flags) {
        check(&server);
    }
}

/// Runs redis-cli with `args` and no input; returns its standard output.
fn cli(server: &Server, args: &[&str]) -> String {
    let out = run_redis_cli(server, args, Stdin::Null);
    stdout_of(server, args, &out)
}

fn stdout_of(server: &Server, args: &[&str], out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}: redis-cli {args:?} exited with {}: {}",
        server.name,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts one redis-cli run prints exactly `want`.
fn expect(server: &Server, args: &[&str], want: &str) {
    assert_eq!(
        cli(server, args),
        want,
        "{}: redis-cli {args:?}",
        server.name
    );
}

/// Output lines as a set (for replies whose order is unspecified).
fn line_set(text: &str) -> BTreeSet<String> {
    text.lines().map(str::to_string).collect()
}

#[test]
fn ping() {
    on_both(&[], |server| {
        expect(server, &["PING"], "PONG\n");
        expect(server, &["PING", "hello world"], "hello world\n");
    });
}

#[test]
fn set_and_get() {
    on_both(&[], |server| {
        expect(server, &["SET", "foo", "bar"], "OK\n");
        expect(server, &["GET", "foo"], "bar\n");
        expect(server, &["GET", "missing"], "\n");
        expect(server, &["SET", "spaced", "hello world"], "OK\n");
        expect(server, &["GET", "spaced"], "hello world\n");
        expect(server, &["INCR", "n"], "1\n");
        expect(server, &["INCRBY", "n", "41"], "42\n");
        expect(server, &["EXISTS", "foo", "n", "missing"], "2\n");
        // redis-cli prints an error reply followed by an empty line, and still exits 0.
        expect(
            server,
            &["LPUSH", "foo", "x"],
            "WRONGTYPE Operation against a key holding the wrong kind of value\n\n",
        );
    });
}

#[test]
fn hash_round_trip() {
    on_both(&[], |server| {
        expect(server, &["HSET", "h", "f1", "v1", "f2", "v 2"], "2\n");
        expect(server, &["HGET", "h", "f2"], "v 2\n");
        expect(server, &["HLEN", "h"], "2\n");
        let all = cli(server, &["HGETALL", "h"]);
        let lines: Vec<&str> = all.lines().collect();
        let mut pairs: Vec<(&str, &str)> = lines.chunks(2).map(|p| (p[0], p[1])).collect();
        pairs.sort();
        assert_eq!(
            pairs,
            [("f1", "v1"), ("f2", "v 2")],
            "{}: HGETALL",
            server.name
        );
        expect(server, &["HDEL", "h", "f1", "nope"], "1\n");
        expect(server, &["HKEYS", "h"], "f2\n");
        expect(server, &["HEXISTS", "h", "f1"], "0\n");
        expect(server, &["TYPE", "h"], "hash\n");
    });
}

const PASSWORD: &str = "s3cret-pass";
const NOAUTH: &str = "NOAUTH Authentication required.\n\n";

#[test]
fn auth_with_password_flag() {
    on_both(&["--requirepass", PASSWORD], |server| {
        let auth = ["--no-auth-warning", "-a", PASSWORD];
        expect(server, &["PING"], NOAUTH);
        expect(server, &[&auth[..], &["PING"]].concat(), "PONG\n");
        expect(server, &[&auth[..], &["SET", "k", "v"]].concat(), "OK\n");
        expect(server, &[&auth[..], &["GET", "k"]].concat(), "v\n");

        let wrong = ["--no-auth-warning", "-a", "wrong", "GET", "k"];
        let out = run_redis_cli(server, &wrong, Stdin::Null);
        assert_eq!(stdout_of(server, &wrong, &out), NOAUTH, "{}", server.name);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(
                "AUTH failed: WRONGPASS invalid username-password pair or user is disabled."
            ),
            "{}: stderr of a wrong password: {stderr}",
            server.name
        );
    });
}

#[test]
fn pipe_mass_insert() {
    const N: usize = 3000;
    let mut input = Vec::new();
    for i in 0..N {
        input.extend(encode_command(&[
            "SET",
            &format!("key:{i}"),
            &format!("value {i}"),
        ]));
    }
    on_both(&[], |server| {
        let args = ["--pipe"];
        let out = run_redis_cli(server, &args, Stdin::Bytes(&input));
        let text = stdout_of(server, &args, &out);
        assert!(
            text.contains(&format!("errors: 0, replies: {N}")),
            "{}: --pipe printed: {text}",
            server.name
        );
        expect(server, &["DBSIZE"], &format!("{N}\n"));
        expect(server, &["GET", "key:1234"], "value 1234\n");
    });
}

#[test]
fn pipe_counts_errors() {
    let mut input = encode_command(&["SET", "a", "1"]);
    input.extend(encode_command(&["INCR", "a"]));
    input.extend(encode_command(&["HGET", "a", "f"]));
    input.extend(encode_command(&["GET", "a"]));
    on_both(&[], |server| {
        let out = run_redis_cli(server, &["--pipe"], Stdin::Bytes(&input));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("errors: 1, replies: 4"),
            "{}: --pipe printed: {text}",
            server.name
        );
        assert_eq!(out.status.code(), Some(1), "{}: exit status", server.name);
    });
}

#[test]
fn commands_from_a_file_on_stdin() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("commands.txt");
    let script = "SET a 1\nINCR a\nGET a\nHSET h f v\nHGET h f\nRPUSH l x y z\nLRANGE l 0 -1\n\
                  SADD s m\nSMEMBERS s\nGET nothing\nDEL a h l s\nDBSIZE\n";
    std::fs::write(&file, script).expect("write commands");
    on_both(&[], |server| {
        let out = run_redis_cli(server, &[], Stdin::File(&file));
        let text = stdout_of(server, &["<", "commands.txt"], &out);
        assert_eq!(
            text, "OK\n2\n2\n1\nv\n3\nx\ny\nz\n1\nm\n\n4\n0\n",
            "{}: output of the command file",
            server.name
        );
    });
}

#[test]
fn last_argument_from_stdin() {
    on_both(&[], |server| {
        let args = ["-x", "SET", "blob"];
        let out = run_redis_cli(server, &args, Stdin::Bytes(b"line one\nline two"));
        assert_eq!(stdout_of(server, &args, &out), "OK\n", "{}", server.name);
        expect(server, &["STRLEN", "blob"], "17\n");
        expect(server, &["GET", "blob"], "line one\nline two\n");
    });
}

#[test]
fn info_server() {
    on_both(&[], |server| {
        let text = cli(server, &["INFO", "server"]);
        assert!(
            text.contains("# Server") && text.contains("redis_version:"),
            "{}: INFO server printed: {text}",
            server.name
        );
    });
}

#[test]
fn info_keyspace() {
    on_both(&[], |server| {
        cli(server, &["SET", "plain", "1"]);
        cli(server, &["SET", "timed", "2", "EX", "1000"]);
        cli(server, &["HSET", "hash", "f", "v"]);
        cli(server, &["-n", "3", "SADD", "set", "m"]);
        let text = cli(server, &["INFO", "keyspace"]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.first(),
            Some(&"# Keyspace"),
            "{}: {text}",
            server.name
        );
        // Redis estimates avg_ttl from its expiry sampling: compare the counts only.
        let counts: Vec<&str> = lines[1..]
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| l.split(",avg_ttl=").next().unwrap_or(l))
            .collect();
        assert_eq!(
            counts,
            ["db0:keys=3,expires=1", "db3:keys=1,expires=0"],
            "{}: {text}",
            server.name
        );
        let avg_ttl: u64 = lines[1]
            .rsplit("avg_ttl=")
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(u64::MAX);
        assert!(avg_ttl <= 1_000_000, "{}: {text}", server.name);
        // docdb's default INFO leaves the section out (it scans every key); ALL has it.
        let all = cli(server, &["INFO", "all"]);
        assert!(
            all.contains("db0:keys=3,expires=1"),
            "{}: {all}",
            server.name
        );
    });
}

#[test]
fn scan_with_pattern() {
    on_both(&[], |server| {
        let mut input = Vec::new();
        for i in 0..200 {
            input.extend(encode_command(&["SET", &format!("k{i}"), "v"]));
            input.extend(encode_command(&["SET", &format!("other{i}"), "v"]));
        }
        input.extend(encode_command(&["HSET", "khash", "f", "v"]));
        let out = run_redis_cli(server, &["--pipe"], Stdin::Bytes(&input));
        stdout_of(server, &["--pipe"], &out);
        let found = line_set(&cli(server, &["--scan", "--pattern", "k*"]));
        let mut want: BTreeSet<String> = (0..200).map(|i| format!("k{i}")).collect();
        want.insert("khash".into());
        assert_eq!(found, want, "{}: --scan --pattern 'k*'", server.name);
        let all = line_set(&cli(server, &["--scan"]));
        assert_eq!(all.len(), 401, "{}: --scan", server.name);
    });
}

/// `redis-cli -3` speaks RESP3 (HELLO 3) and prints its types: maps, sets, doubles, score
/// pairs, nulls.
#[test]
fn resp3_with_dash_3() {
    on_both(&[], |server| {
        expect(server, &["-3", "ZADD", "z", "1.5", "a", "2", "b"], "2\n");
        expect(server, &["-3", "HSET", "h", "f", "v"], "1\n");
        expect(server, &["-3", "SADD", "s", "x"], "1\n");
        expect(
            server,
            &["-3", "--no-raw", "HGETALL", "h"],
            "1# \"f\" => \"v\"\n",
        );
        expect(server, &["-3", "--no-raw", "SMEMBERS", "s"], "1~ \"x\"\n");
        expect(
            server,
            &["-3", "--no-raw", "ZSCORE", "z", "a"],
            "(double) 1.5\n",
        );
        expect(server, &["-3", "--no-raw", "GET", "nope"], "(nil)\n");
        expect(
            server,
            &["-3", "--no-raw", "ZRANGE", "z", "0", "-1", "WITHSCORES"],
            "1) 1) \"a\"\n   2) (double) 1.5\n2) 1) \"b\"\n   2) (double) 2\n",
        );
    });
}
