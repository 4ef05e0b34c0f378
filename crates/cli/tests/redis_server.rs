//! `docdb serve` as an operator and a client application see it: settings from a TOML file,
//! the environment and flags (in that order of precedence), the Prometheus endpoint, MONITOR,
//! redis-benchmark's default run, and a Rust Redis client library.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use docdb_redis::Frame;
use docdb_redis::testkit::{ChildGuard, RespClient, free_port, start_docdb, wait_ready};

fn docdb() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_docdb"))
}

/// Starts `docdb serve` with `args` and `env`, and waits until it answers on `addr`.
fn start(args: &[&str], env: &[(&str, &str)], addr: SocketAddr) -> ChildGuard {
    let mut command = Command::new(docdb());
    command
        .arg("serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let child = command.spawn().expect("spawn docdb serve");
    let guard = ChildGuard { child, addr };
    wait_ready(addr).expect("server answers");
    guard
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn connect(addr: SocketAddr) -> RespClient {
    RespClient::connect(addr, Duration::from_secs(10)).expect("connect")
}

#[test]
fn settings_come_from_flags_then_environment_then_the_toml_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let config = dir.path().join("docdb.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:{port}\"\nrequirepass = \"from-file\"\nmaxclients = 7\n\
             metrics-listen = \"off\"\n"
        ),
    )
    .expect("write config");
    let data = dir.path().join("data");
    let config_arg = config.to_str().expect("utf-8 path");
    let data_arg = data.to_str().expect("utf-8 path");

    // The file alone: its password and limit apply.
    {
        let _server = start(
            &["--config", config_arg, "--data-dir", data_arg],
            &[],
            loopback(port),
        );
        let mut client = connect(loopback(port));
        let noauth = Frame::Error("NOAUTH Authentication required.".into());
        assert_eq!(client.call(&["GET", "k"]).expect("get"), noauth);
        assert_eq!(
            client.call(&["AUTH", "from-file"]).expect("auth"),
            Frame::Simple("OK".into())
        );
        let reply = client
            .call(&["CONFIG", "GET", "maxclients"])
            .expect("config");
        assert_eq!(
            reply,
            Frame::Array(vec![
                Frame::Bulk(b"maxclients".to_vec()),
                Frame::Bulk(b"7".to_vec())
            ])
        );
    }
    // The environment overrides the file; a flag overrides both.
    {
        let _server = start(
            &[
                "--config",
                config_arg,
                "--data-dir",
                data_arg,
                "--maxclients",
                "9",
            ],
            &[("DOCDB_REQUIREPASS", "from-env"), ("DOCDB_MAXCLIENTS", "8")],
            loopback(port),
        );
        let mut client = connect(loopback(port));
        assert!(matches!(
            client.call(&["AUTH", "from-file"]).expect("auth"),
            Frame::Error(_)
        ));
        assert_eq!(
            client.call(&["AUTH", "from-env"]).expect("auth"),
            Frame::Simple("OK".into())
        );
        let reply = client
            .call(&["CONFIG", "GET", "maxclients"])
            .expect("config");
        assert!(
            matches!(&reply, Frame::Array(items) if items.get(1) == Some(&Frame::Bulk(b"9".to_vec()))),
            "{reply:?}"
        );
    }
}

#[test]
fn config_rewrite_writes_config_set_changes_into_the_toml_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let config = dir.path().join("docdb.toml");
    let original = format!(
        "# kept as written\nlisten = \"127.0.0.1:{port}\"\nmaxclients = 7 # old limit\n\
         metrics-listen = \"off\"\n"
    );
    std::fs::write(&config, &original).expect("write config");
    let data = dir.path().join("data");
    let args = [
        "--config",
        config.to_str().expect("utf-8 path"),
        "--data-dir",
        data.to_str().expect("utf-8 path"),
    ];
    let ok = Frame::Simple("OK".into());
    {
        let _server = start(&args, &[], loopback(port));
        let mut client = connect(loopback(port));
        for (name, value) in [
            ("maxclients", "12"),
            ("appendfsync", "always"),
            ("requirepass", "pw"),
        ] {
            let reply = client.call(&["CONFIG", "SET", name, value]).expect("set");
            assert_eq!(reply, ok, "CONFIG SET {name}");
        }
        assert_eq!(client.call(&["CONFIG", "REWRITE"]).expect("rewrite"), ok);
    }
    // Comments and other lines stay; changed settings are replaced or added.
    let text = std::fs::read_to_string(&config).expect("read config");
    assert_eq!(
        text,
        original.replace("maxclients = 7 # old limit", "maxclients = 12")
            + "requirepass = \"pw\"\nfsync = \"always\"\n"
    );
    // The next start runs with them.
    let _server = start(&args, &[], loopback(port));
    let mut client = connect(loopback(port));
    let noauth = Frame::Error("NOAUTH Authentication required.".into());
    assert_eq!(client.call(&["GET", "k"]).expect("get"), noauth);
    assert_eq!(client.call(&["AUTH", "pw"]).expect("auth"), ok);
    let reply = client
        .call(&["CONFIG", "GET", "maxclients"])
        .expect("config");
    let want = Frame::Array(vec![
        Frame::Bulk(b"maxclients".to_vec()),
        Frame::Bulk(b"12".to_vec()),
    ]);
    assert_eq!(reply, want);
}

#[test]
fn bad_settings_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "listen = 6379\nno-such-setting = true\n").expect("write");
    for args in [
        vec!["--config", config.to_str().expect("path")],
        vec!["--fsync", "sometimes"],
        vec!["--listen", "not-an-address"],
        vec!["--huge-pages", "always"],
        vec!["--cache-written", "sometimes"],
    ] {
        let out = Command::new(docdb())
            .arg("serve")
            .args(["--data-dir", dir.path().join("d").to_str().expect("path")])
            .args(["--metrics-listen", "off"])
            .args(&args)
            .output()
            .expect("run docdb serve");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("error:"), "{args:?}: {stderr}");
    }
}

/// The body of `GET path` from an HTTP server.
fn http_get(addr: SocketAddr, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect metrics");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    response
}

#[test]
fn prometheus_endpoint_reports_commands_connections_and_storage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (port, metrics_port) = (free_port(), free_port());
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let _server = start(
        &[
            "--data-dir",
            dir.path().to_str().expect("path"),
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--metrics-listen",
            &metrics_addr,
        ],
        &[],
        loopback(port),
    );
    let mut client = connect(loopback(port));
    client.call(&["SET", "k", "v"]).expect("set");
    client.call(&["SET", "k2", "v"]).expect("set");
    client.call(&["HGET", "k", "f"]).expect("wrongtype");
    let response = http_get(loopback(metrics_port), "/metrics");
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    for expected in [
        "docdb_commands_total{cmd=\"set\"} 2",
        "docdb_command_errors_total{cmd=\"hget\"} 1",
        "docdb_command_duration_seconds_bucket{le=\"+Inf\"}",
        "docdb_command_duration_seconds_count",
        "docdb_connected_clients 1",
        "docdb_connections_total",
        "docdb_gc_keys_seen_total",
        "docdb_dead_spans 0",
        "docdb_dead_spans_restored_total 0",
        "docdb_engine{name=\"rocksdb.",
    ] {
        assert!(
            response.contains(expected),
            "missing {expected:?} in:\n{response}"
        );
    }
    assert!(http_get(loopback(metrics_port), "/other").starts_with("HTTP/1.1 404"));
}

/// A server over `dir` on a free port (another port if one is taken meanwhile).
fn server_in(dir: &Path) -> (ChildGuard, SocketAddr) {
    let guard = start_docdb(docdb(), dir, &[]).expect("docdb serve starts");
    let addr = guard.addr;
    (guard, addr)
}

#[test]
fn monitor_sees_other_clients_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, addr) = server_in(dir.path());
    let mut monitor = connect(addr);
    assert_eq!(
        monitor.call(&["MONITOR"]).expect("monitor"),
        Frame::Simple("OK".into())
    );
    let mut client = connect(addr);
    // As redis-server 7.0.15 shows them: secrets redacted, administrative commands left out.
    client.call(&["AUTH", "secret"]).expect("auth");
    client
        .call(&["HELLO", "2", "AUTH", "default", "pw"])
        .expect("hello");
    client
        .call(&["CONFIG", "GET", "maxclients"])
        .expect("config");
    client.call(&["SET", "greeting", "hi there"]).expect("set");
    let mut next_line = || match monitor.read_reply().expect("monitor line") {
        Frame::Simple(line) => line,
        other => panic!("MONITOR lines are simple strings, not {other:?}"),
    };
    let auth = next_line();
    assert!(auth.ends_with("] \"AUTH\" \"(redacted)\""), "{auth}");
    let hello = next_line();
    assert!(
        hello.ends_with("] \"HELLO\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\""),
        "{hello}"
    );
    let line = next_line();
    // `+1700000000.123456 [0 127.0.0.1:54321] "SET" "greeting" "hi there"`
    assert!(line.contains("[0 127.0.0.1:"), "{line}");
    assert!(
        line.ends_with("\"SET\" \"greeting\" \"hi there\""),
        "{line}"
    );
}

#[test]
fn redis_benchmark_default_run_gets_no_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, addr) = server_in(dir.path());
    let out = Command::new("redis-benchmark")
        .args(["-h", "127.0.0.1", "-p", &addr.port().to_string()])
        .args(["-n", "2000", "-c", "5", "-r", "1000", "-e", "--csv"])
        .output()
        .expect("redis-benchmark (scripts/test.sh installs redis-tools)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(!stdout.contains("ERR"), "error replies:\n{stdout}");
    // Every test of the default run reported a rate.
    for test in [
        "PING_INLINE",
        "PING_MBULK",
        "SET",
        "GET",
        "INCR",
        "LPUSH",
        "RPUSH",
        "LPOP",
        "RPOP",
        "SADD",
        "HSET",
        "SPOP",
        "ZADD",
        "ZPOPMIN",
        "LRANGE_100",
        "LRANGE_600",
        "MSET",
    ] {
        assert!(
            stdout.contains(&format!("\"{test}")),
            "no {test} in:\n{stdout}"
        );
    }
}

#[test]
fn a_rust_redis_client_library_works_against_docdb() {
    use redis::Commands;
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, addr) = server_in(dir.path());
    let client = redis::Client::open(format!("redis://{addr}/")).expect("client");
    let mut con = client.get_connection().expect("connection");
    let _: () = con.set_ex("session", "abc", 60).expect("set_ex");
    let value: String = con.get("session").expect("get");
    assert_eq!(value, "abc");
    let ttl: i64 = con.ttl("session").expect("ttl");
    assert!((59..=60).contains(&ttl), "{ttl}");
    let _: () = con.hset_multiple("h", &[("a", 1), ("b", 2)]).expect("hset");
    let all: std::collections::HashMap<String, i64> = con.hgetall("h").expect("hgetall");
    assert_eq!(all.len(), 2);
    assert_eq!(all["b"], 2);
    let n: i64 = con.incr("counter", 5).expect("incr");
    assert_eq!(n, 5);
    let (a, b): (i64, Vec<String>) = redis::pipe()
        .rpush("list", &["x", "y", "z"])
        .lrange("list", 0, -1)
        .query(&mut con)
        .expect("pipeline");
    assert_eq!((a, b), (3, vec!["x".into(), "y".into(), "z".into()]));
    let err = con
        .hget::<_, _, String>("session", "f")
        .expect_err("wrong type");
    assert_eq!(err.code(), Some("WRONGTYPE"), "{err}");
    let zs: Vec<(String, f64)> = {
        let _: () = con
            .zadd_multiple("z", &[(1.5, "a"), (0.5, "b")])
            .expect("zadd");
        con.zrange_withscores("z", 0, -1).expect("zrange")
    };
    assert_eq!(zs, vec![("b".to_string(), 0.5), ("a".to_string(), 1.5)]);
}

/// CLIENT LIST's lines, each as its `key=value` fields.
fn client_lines(client: &mut RespClient, args: &[&str]) -> Vec<Vec<(String, String)>> {
    let Frame::Bulk(text) = client.call(args).expect("client list") else {
        panic!("CLIENT LIST replies with a bulk string");
    };
    String::from_utf8(text)
        .expect("utf-8")
        .lines()
        .map(|line| {
            line.split(' ')
                .map(|field| {
                    let (key, value) = field.split_once('=').expect("key=value");
                    (key.to_string(), value.to_string())
                })
                .collect()
        })
        .collect()
}

fn field<'a>(line: &'a [(String, String)], key: &str) -> &'a str {
    line.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

fn client_id(client: &mut RespClient) -> i64 {
    match client.call(&["CLIENT", "ID"]).expect("client id") {
        Frame::Integer(id) => id,
        other => panic!("CLIENT ID gave {other:?}"),
    }
}

#[test]
fn client_list_shows_every_connection_and_client_kill_closes_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_server, addr) = server_in(dir.path());
    let ok = Frame::Simple("OK".into());
    let mut a = connect(addr);
    let mut b = connect(addr);
    assert_eq!(
        a.call(&["CLIENT", "SETNAME", "alpha"]).expect("setname"),
        ok
    );
    assert_eq!(b.call(&["CLIENT", "SETNAME", "beta"]).expect("setname"), ok);
    assert_eq!(b.call(&["SELECT", "2"]).expect("select"), ok);
    let (id_a, id_b) = (client_id(&mut a), client_id(&mut b));

    let lines = client_lines(&mut a, &["CLIENT", "LIST"]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let expected = [(id_a, "alpha", "0"), (id_b, "beta", "2")];
    for (line, (id, name, db)) in lines.iter().zip(expected) {
        assert_eq!(field(line, "id"), id.to_string());
        assert_eq!(field(line, "name"), name);
        assert_eq!(field(line, "db"), db);
        assert!(field(line, "addr").starts_with("127.0.0.1:"), "{line:?}");
    }
    let only_b = client_lines(&mut a, &["CLIENT", "LIST", "ID", &id_b.to_string()]);
    assert_eq!(only_b.len(), 1);
    assert_eq!(field(&only_b[0], "name"), "beta");
    let own = client_lines(&mut b, &["CLIENT", "INFO"]);
    assert_eq!(field(&own[0], "id"), id_b.to_string());

    // Bad arguments are refused and close nothing.
    let err = |text: &str| Frame::Error(text.into());
    assert_eq!(
        a.call(&["CLIENT", "KILL", "ID", "0"]).expect("kill"),
        err("ERR client-id should be greater than 0")
    );
    assert_eq!(
        a.call(&["CLIENT", "KILL", "203.0.113.1:1"]).expect("kill"),
        err("ERR No such client")
    );
    assert_eq!(
        a.call(&["CLIENT", "KILL", "ID", "1", "BOGUS", "x"])
            .expect("kill"),
        err("ERR syntax error")
    );
    // The caller is spared unless it says otherwise.
    let id_a_text = id_a.to_string();
    assert_eq!(
        a.call(&["CLIENT", "KILL", "ID", &id_a_text]).expect("kill"),
        Frame::Integer(0)
    );
    assert_eq!(
        a.call(&["CLIENT", "KILL", "ID", &id_b.to_string()])
            .expect("kill"),
        Frame::Integer(1)
    );
    assert_eq!(b.read_to_close().expect("closed"), b"");
    let mut remaining = Vec::new();
    for _ in 0..100 {
        remaining = client_lines(&mut a, &["CLIENT", "LIST"]);
        if remaining.len() == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(remaining.len(), 1, "{remaining:?}");
    assert_eq!(field(&remaining[0], "id"), id_a_text);
    // Killing itself: the reply comes first, then the connection closes.
    assert_eq!(
        a.call(&["CLIENT", "KILL", "ID", &id_a_text, "SKIPME", "no"])
            .expect("kill"),
        Frame::Integer(1)
    );
    assert_eq!(a.read_to_close().expect("closed"), b"");
}
