//! Adaptive threading (`crates/redis/src/lanes.rs`) on the real binary: connections that
//! pipeline are judged so, every other one moves to the pipelined runtime, and a moved
//! connection keeps everything it had (its name, database, subscriptions, blocking pops,
//! CLIENT KILL) while one-request-at-a-time connections stay where they are.

use std::path::Path;
use std::time::{Duration, Instant};

use docdb_redis::Frame;
use docdb_redis::testkit::{ChildGuard, RespClient, encode_command, start_docdb};

fn docdb() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_docdb"))
}

/// A server started with `args` on a fresh directory (kept until the server is dropped:
/// bind the directory first, so that it drops last).
fn serve(args: &[&str]) -> (tempfile::TempDir, ChildGuard) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start_docdb(docdb(), dir.path(), args).expect("start");
    (dir, server)
}

fn connect(server: &ChildGuard) -> RespClient {
    RespClient::connect(server.addr, Duration::from_secs(10)).expect("connect")
}

fn ok() -> Frame {
    Frame::Simple("OK".into())
}

/// A field of INFO's stats section.
fn stat(client: &mut RespClient, name: &str) -> u64 {
    info_field(client, "stats", name)
}

/// A numeric field of an INFO section.
fn info_field(client: &mut RespClient, section: &str, name: &str) -> u64 {
    let Frame::Bulk(info) = client.call(&["INFO", section]).expect("info") else {
        panic!("INFO replies with a bulk string");
    };
    let info = String::from_utf8(info).expect("utf-8");
    let value = info
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name}:")))
        .unwrap_or_else(|| panic!("INFO stats has no {name}: {info}"));
    value.trim().parse().expect("a count")
}

/// Sends 40 writes of 16 pipelined requests each (SETs and an INCR), checking every reply:
/// enough reads averaging well over 4 requests for the server to judge it pipelining.
fn pipeline(client: &mut RespClient, tag: &str) {
    let mut counted = 0;
    for round in 0..40 {
        let mut batch = Vec::new();
        for i in 0..15 {
            batch.extend(encode_command(&["SET", &format!("{tag}:{round}:{i}"), "v"]));
        }
        batch.extend(encode_command(&["INCR", &format!("{tag}:count")]));
        client.send_raw(&batch).expect("send");
        for _ in 0..15 {
            assert_eq!(client.read_reply().expect("reply"), ok());
        }
        counted += 1;
        assert_eq!(
            client.read_reply().expect("reply"),
            Frame::Integer(counted),
            "{tag}"
        );
    }
}

/// `trigger` on `from` reaches one client, which then reads `expected` (an array of bulk
/// strings): a served pop or a published message.
fn delivered(from: &mut RespClient, trigger: &[&str], to: &mut RespClient, expected: &[&str]) {
    assert_eq!(from.call(trigger).expect("request"), Frame::Integer(1));
    let expected = expected
        .iter()
        .map(|part| Frame::Bulk(part.as_bytes().to_vec()))
        .collect();
    assert_eq!(to.read_reply().expect("reply"), Frame::Array(expected));
}

/// CLIENT LIST's lines.
fn client_list(client: &mut RespClient) -> String {
    let Frame::Bulk(list) = client.call(&["CLIENT", "LIST"]).expect("request") else {
        panic!("CLIENT LIST replies with a bulk string");
    };
    String::from_utf8(list).expect("utf-8")
}

#[test]
fn pipelining_connections_move_and_keep_their_state() {
    let (_dir, server) = serve(&["--pipelined-threads", "1"]);
    let mut plain = connect(&server);
    plain.call(&["SELECT", "2"]).expect("select");
    let mut piped: Vec<RespClient> = (0..4).map(|_| connect(&server)).collect();
    for (n, client) in piped.iter_mut().enumerate() {
        assert_eq!(
            client
                .call(&["CLIENT", "SETNAME", &format!("p{n}")])
                .expect("request"),
            ok()
        );
        assert_eq!(client.call(&["SELECT", "2"]).expect("request"), ok());
        pipeline(client, &format!("p{n}"));
    }
    // One request per read never counts, however many.
    for i in 0..200 {
        assert_eq!(
            plain
                .call(&["SET", &format!("plain:{i}"), "v"])
                .expect("request"),
            ok()
        );
    }
    assert_eq!(stat(&mut plain, "pipelining_connections"), 4);
    assert_eq!(stat(&mut plain, "moved_connections"), 2);

    for (n, client) in piped.iter_mut().enumerate() {
        // Name and database came along; the data is the same store's.
        assert_eq!(
            client.call(&["CLIENT", "GETNAME"]).expect("request"),
            Frame::Bulk(format!("p{n}").into_bytes())
        );
        assert_eq!(
            client
                .call(&["GET", &format!("p{n}:39:14")])
                .expect("request"),
            Frame::Bulk(b"v".to_vec())
        );
        assert_eq!(
            client
                .call(&["GET", &format!("p{}:count", (n + 1) % 4)])
                .expect("request"),
            Frame::Bulk(b"40".to_vec())
        );
    }
    let list = client_list(&mut plain);
    for n in 0..4 {
        assert!(list.contains(&format!("name=p{n} ")), "{list}");
    }

    // Blocking pops are served wherever the connection runs.
    for (n, client) in piped.iter_mut().enumerate() {
        client
            .send(&["BLPOP", &format!("queue{n}"), "10"])
            .expect("request");
    }
    for (n, client) in piped.iter_mut().enumerate() {
        assert_eq!(
            client
                .reply_within(Duration::from_millis(100))
                .expect("request"),
            None
        );
        let queue = format!("queue{n}");
        delivered(
            &mut plain,
            &["LPUSH", &queue, "job"],
            client,
            &[&queue, "job"],
        );
    }

    // So are published messages.
    for (n, client) in piped.iter_mut().enumerate() {
        client
            .call(&["SUBSCRIBE", &format!("news{n}")])
            .expect("request");
    }
    for (n, client) in piped.iter_mut().enumerate() {
        let channel = format!("news{n}");
        delivered(
            &mut plain,
            &["PUBLISH", &channel, "hi"],
            client,
            &["message", &channel, "hi"],
        );
    }

    // CLIENT KILL closes them, and they leave the client list.
    assert_eq!(
        plain
            .call(&["CLIENT", "KILL", "USER", "default", "SKIPME", "yes"])
            .expect("request"),
        Frame::Integer(4)
    );
    for client in &mut piped {
        client.read_to_close().expect("closed by CLIENT KILL");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        // Listed and counted out wherever they ran.
        if client_list(&mut plain).lines().count() == 1
            && info_field(&mut plain, "clients", "connected_clients") == 1
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "killed clients stay listed or counted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_with_moved_connections_shuts_down_cleanly() {
    let (_dir, mut server) = serve(&["--pipelined-threads", "1"]);
    let mut piped: Vec<RespClient> = (0..2).map(|_| connect(&server)).collect();
    for (n, client) in piped.iter_mut().enumerate() {
        pipeline(client, &format!("s{n}"));
    }
    let mut admin = connect(&server);
    assert_eq!(stat(&mut admin, "moved_connections"), 1);
    admin.send(&["SHUTDOWN"]).expect("request");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    for client in &mut piped {
        client.read_to_close().expect("closed at shutdown");
    }
}

#[test]
fn with_no_pipelined_threads_nothing_is_judged() {
    let (_dir, server) = serve(&["--pipelined-threads", "0"]);
    let mut client = connect(&server);
    pipeline(&mut client, "x");
    assert_eq!(stat(&mut client, "pipelining_connections"), 0);
    assert_eq!(stat(&mut client, "moved_connections"), 0);
}

#[test]
fn a_connection_that_stops_pipelining_writes_in_place_and_may_start_again() {
    let (_dir, server) = serve(&["--pipelined-threads", "1"]);
    let mut client = connect(&server);
    pipeline(&mut client, "a");
    let mut admin = connect(&server);
    assert_eq!(stat(&mut admin, "pipelining_connections"), 1);
    assert_eq!(stat(&mut admin, "moved_connections"), 1);
    assert_eq!(stat(&mut admin, "pipelining_stopped"), 0);

    // One request per read for two windows: it has stopped, and its writes (now in place,
    // on the runtime it moved to) read back, as do the ones the writer thread made.
    for i in 0..32 {
        assert_eq!(
            client.call(&["INCR", "a:count"]).expect("request"),
            Frame::Integer(41 + i)
        );
    }
    assert_eq!(stat(&mut admin, "pipelining_stopped"), 1);
    for i in 0..8 {
        let key = format!("b:{i}");
        assert_eq!(client.call(&["SET", &key, "w"]).expect("request"), ok());
        assert_eq!(
            admin.call(&["GET", &key]).expect("request"),
            Frame::Bulk(b"w".to_vec())
        );
    }
    assert_eq!(
        admin.call(&["GET", "a:39:14"]).expect("request"),
        Frame::Bulk(b"v".to_vec())
    );

    // Pipelining again is judged again; a connection moves at most once.
    pipeline(&mut client, "c");
    assert_eq!(stat(&mut admin, "pipelining_connections"), 2);
    assert_eq!(stat(&mut admin, "moved_connections"), 1);
    assert_eq!(
        client.call(&["GET", "a:count"]).expect("request"),
        Frame::Bulk(b"72".to_vec())
    );
}

#[test]
fn with_the_writer_thread_for_all_a_turn_back_is_counted_and_writes_read_back() {
    let args = ["--pipelined-threads", "1", "--writer-thread", "on"];
    let (_dir, server) = serve(&args);
    let mut client = connect(&server);
    pipeline(&mut client, "w");
    for i in 0..32 {
        assert_eq!(
            client.call(&["INCR", "w:count"]).expect("request"),
            Frame::Integer(41 + i)
        );
    }
    let mut admin = connect(&server);
    // The turn is counted; its writes still land through the writer thread, and read back.
    assert_eq!(stat(&mut admin, "pipelining_stopped"), 1);
    assert_eq!(
        admin.call(&["GET", "w:count"]).expect("request"),
        Frame::Bulk(b"72".to_vec())
    );
}

/// Sends `n` INCRs of `key` one at a time, checking each reply counts on from `from`.
fn incr_one_at_a_time(client: &mut RespClient, key: &str, from: i64, n: i64) {
    for i in 0..n {
        assert_eq!(
            client.call(&["INCR", key]).expect("request"),
            Frame::Integer(from + i)
        );
    }
}

#[test]
fn one_request_writes_land_through_the_tick_writer_only_on_one_thread() {
    let (_dir, server) = serve(&["--threads", "1"]);
    let mut client = connect(&server);
    incr_one_at_a_time(&mut client, "n", 1, 10);
    // One client waits for each reply, so each of its writes is a group of its own.
    assert!(stat(&mut client, "write_groups") >= 10);
    assert!(stat(&mut client, "write_group_runs") >= 10);

    // With two threads each write would cross between them: they run in place.
    let (_dir, server) = serve(&["--threads", "2"]);
    let mut client = connect(&server);
    incr_one_at_a_time(&mut client, "n", 1, 10);
    assert_eq!(stat(&mut client, "write_groups"), 0);
}

#[test]
fn a_connection_that_stops_pipelining_groups_its_writes_again_unless_it_moved() {
    let (_dir, server) = serve(&["--threads", "1", "--pipelined-threads", "1"]);
    let mut moving = connect(&server);
    pipeline(&mut moving, "m");
    let mut staying = connect(&server);
    pipeline(&mut staying, "s");
    let mut admin = connect(&server);
    assert_eq!(stat(&mut admin, "pipelining_connections"), 2);
    assert_eq!(stat(&mut admin, "moved_connections"), 1);

    // The one that moved writes in place on the pipelined runtime once it stops.
    let before = stat(&mut admin, "write_groups");
    incr_one_at_a_time(&mut moving, "m:count", 41, 32);
    assert_eq!(stat(&mut admin, "pipelining_stopped"), 1);
    assert_eq!(stat(&mut admin, "write_groups"), before);

    // The one that stayed goes back to the main runtime's tick writer.
    incr_one_at_a_time(&mut staying, "s:count", 41, 32);
    assert_eq!(stat(&mut admin, "pipelining_stopped"), 2);
    assert!(stat(&mut admin, "write_groups") > before);
    assert_eq!(
        admin.call(&["GET", "s:39:14"]).expect("request"),
        Frame::Bulk(b"v".to_vec())
    );
}
