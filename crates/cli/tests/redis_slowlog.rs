//! SLOWLOG over the wire, against a real `redis-server` first and then `docdb serve`: the
//! same commands logged with the same arguments (cut and redacted alike), client names and
//! order, and the same replies to SLOWLOG's subcommands, errors and settings. Ids, times and
//! client ports differ between servers; they are checked for shape instead.

mod common_redis;

use std::time::{SystemTime, UNIX_EPOCH};

use common_redis::{Frame, RespClient, Server, both, render};

fn call(client: &mut RespClient, args: &[&str]) -> Frame {
    client.call(args).expect("a reply")
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

/// The commands every server logs (the slow log set to take everything), from two clients.
fn log_commands(server: &Server) {
    let mut c = server.client();
    let mut other = server.client();
    call(&mut c, &["SET", "a", "1"]);
    call(&mut c, &["AUTH", "secret"]);
    call(
        &mut other,
        &["HELLO", "2", "AUTH", "default", "pw", "SETNAME", "hi"],
    );
    call(&mut c, &["MULTI"]);
    call(&mut c, &["SET", "b", "2"]);
    call(&mut c, &["EXEC"]);
    call(&mut c, &["EVAL", "return redis.call('get', 'a')", "0"]);
    call(&mut c, &["CLIENT", "SETNAME", "joe"]);
    call(&mut c, &["PING"]);
    call(
        &mut c,
        &["CONFIG", "SET", "maxclients", "1000", "requirepass", ""],
    );
    let long = "a".repeat(200);
    call(&mut c, &["SET", "k", &long]);
    let many: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    let mut del = vec!["DEL"];
    del.extend(many.iter().map(String::as_str));
    call(&mut c, &del);
    call(&mut c, &["NOSUCHCOMMAND"]);
    call(&mut c, &["GET"]);
}

/// An entry without its id, time and duration, its client's port hidden.
fn normalized(entry: &Frame, since: i64) -> String {
    let Frame::Array(fields) = entry else {
        panic!("entry {} is not an array", render(entry));
    };
    let [
        Frame::Integer(_),
        Frame::Integer(at),
        Frame::Integer(micros),
        args,
        Frame::Bulk(client),
        Frame::Bulk(name),
    ] = fields.as_slice()
    else {
        panic!("entry {} has not Redis's six fields", render(entry));
    };
    assert!(
        (since - 1..=unix_now() + 1).contains(at),
        "time {at} out of the test's span"
    );
    assert!(*micros >= 0, "negative duration in {}", render(entry));
    let client = String::from_utf8_lossy(client);
    let client = match client.rsplit_once(':') {
        Some((ip, _)) if ip != "?" => format!("{ip}:*"),
        _ => client.into_owned(),
    };
    format!(
        "{} {client} \"{}\"",
        render(args),
        String::from_utf8_lossy(name)
    )
}

/// What a server's slow log and SLOWLOG replies show, in a form both servers must share.
fn transcript(server: &Server) -> Vec<String> {
    let mut c = server.client();
    let mut out = Vec::new();
    for args in [
        &["CONFIG", "SET", "slowlog-log-slower-than", "-2"][..],
        &["CONFIG", "SET", "slowlog-max-len", "-1"],
        &["CONFIG", "SET", "slowlog-max-len", "x"],
        &["CONFIG", "SET", "latency-monitor-threshold", "-1"],
        &["CONFIG", "GET", "slowlog-max-len"],
        &["CONFIG", "GET", "slowlog-log-slower-than"],
        &["CONFIG", "GET", "latency-monitor-threshold"],
        &["CONFIG", "SET", "slowlog-log-slower-than", "0"],
        &["SLOWLOG", "RESET"],
    ] {
        out.push(render(&call(&mut c, args)));
    }
    let since = unix_now();
    log_commands(server);
    let Frame::Array(entries) = call(&mut c, &["SLOWLOG", "GET", "-1"]) else {
        panic!("{}: SLOWLOG GET is not an array", server.name);
    };
    let ids: Vec<i64> = entries
        .iter()
        .map(|e| match e {
            Frame::Array(fields) => match fields.first() {
                Some(Frame::Integer(id)) => *id,
                _ => panic!("no id"),
            },
            _ => panic!("not an entry"),
        })
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] == w[1] + 1),
        "{}: ids not consecutive, newest first: {ids:?}",
        server.name
    );
    out.extend(entries.iter().map(|e| normalized(e, since)));
    for args in [
        &["SLOWLOG", "LEN"][..],
        &["CONFIG", "SET", "slowlog-max-len", "3"],
        &["SLOWLOG", "LEN"],
        &["CONFIG", "SET", "slowlog-log-slower-than", "10000"],
        &["PING"],
        &["SLOWLOG", "LEN"],
        &["SLOWLOG", "GET", "-2"],
        &["SLOWLOG", "GET", "x"],
        &["SLOWLOG", "GET", "1", "2"],
        &["SLOWLOG", "LEN", "x"],
        &["SLOWLOG", "RESET", "x"],
        &["SLOWLOG", "HELP", "x"],
        &["SLOWLOG", "FOO"],
        &["SLOWLOG"],
        &["SLOWLOG", "HELP"],
        &["SLOWLOG", "GET", "0"],
        &["SLOWLOG", "RESET"],
        &["SLOWLOG", "GET"],
    ] {
        out.push(format!("{args:?} -> {}", render(&call(&mut c, args))));
    }
    out
}

#[test]
fn slowlog_matches_redis() {
    let servers = both(&[]);
    let transcripts: Vec<Vec<String>> = servers.iter().map(transcript).collect();
    let docdb = transcripts.last().expect("docdb's transcript");
    assert!(
        docdb.iter().any(|line| line.contains("\"(redacted)\"")),
        "the log shows no redacted secret: {docdb:#?}"
    );
    assert!(
        docdb
            .iter()
            .any(|line| line.contains("... (10 more arguments)")),
        "the 41-argument DEL was not cut: {docdb:#?}"
    );
    if let [redis, docdb] = transcripts.as_slice() {
        for (i, (want, got)) in redis.iter().zip(docdb).enumerate() {
            assert_eq!(got, want, "line {i} differs (redis first)");
        }
        assert_eq!(docdb.len(), redis.len(), "transcripts differ in length");
    }
}
