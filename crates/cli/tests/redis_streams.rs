//! Streams (XADD, XTRIM, XDEL, XLEN, XRANGE, XREVRANGE, XSETID, XREAD) against a real
//! `redis-server`: the same requests go to both servers and every reply must be the same,
//! byte for byte. Explicit ids keep the replies deterministic; `*` is checked where its id
//! follows from the stream (an id from the clock is not compared).
//!
//! `DOCDB_STREAMS_SEED` replays a randomized run; `DOCDB_STREAMS_OPS` sets its length.

mod common_redis;

use std::time::Duration;

use common_redis::{Frame, RespClient, Server, docdb, render, require_redis};
use engine::Rng;

/// A request's arguments: words split on white space, with `\_` for a space, `\t` for a
/// tab, `\v` for a vertical tab and `\0` for a NUL byte inside a word.
fn words(request: &str) -> Vec<Vec<u8>> {
    request
        .split_whitespace()
        .map(|w| {
            w.replace("\\_", " ")
                .replace("\\t", "\t")
                .replace("\\v", "\x0b")
                .replace("\\0", "\0")
                .into_bytes()
        })
        .collect()
}

fn call(client: &mut RespClient, name: &str, request: &[Vec<u8>]) -> Frame {
    client
        .call(request)
        .unwrap_or_else(|e| panic!("{name}: no reply to {request:?}: {e}"))
}

/// Runs `script` on both servers (after FLUSHALL), one connection each; a step starting
/// with `!` runs without its reply being compared (HELLO, whose reply names the server), and
/// `#sleep ms` waits.
/// Fails listing every step whose replies differ.
fn lockstep(script: &[&str]) {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    for client in [&mut r, &mut d] {
        assert_eq!(
            client.call(&["FLUSHALL"]).expect("flushall"),
            Frame::Simple("OK".into())
        );
    }
    let mut failures = Vec::new();
    for (i, step) in script.iter().enumerate() {
        if let Some(ms) = step.strip_prefix("#sleep ") {
            std::thread::sleep(Duration::from_millis(ms.parse().expect("sleep ms")));
            continue;
        }
        let (compared, request) = match step.strip_prefix('!') {
            Some(rest) => (false, rest),
            None => (true, *step),
        };
        let args = words(request);
        let want = render(&call(&mut r, "redis", &args));
        let got = render(&call(&mut d, "docdb", &args));
        if compared && want != got {
            failures.push(format!("[{i}] {request}\n  redis: {want}\n  docdb: {got}"));
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
fn xadd_matches_redis() {
    lockstep(&[
        "XADD s 1-1 f v",
        "XADD s 1-1 f v",
        "XADD s 1-0 f v",
        "XADD s 0-0 f v",
        "XADD fresh 0-0 f v",
        "XADD fresh 0 f v",
        "EXISTS fresh",
        "XADD fresh 0-* f v",
        "XADD fresh 0-* f v",
        "XADD s 1-* a b",
        "XADD s 5 a b",
        "XADD s 5-* a b",
        "XADD s 4-* a b",
        "XADD s 5-3 multi fields and values",
        "XADD s 6-0 dup f dup f",
        "XADD s 7-0 empty \\0",
        // Arity: fields and values in pairs, at least one pair.
        "XADD s NOMKSTREAM",
        "XADD s NOMKSTREAM * f",
        "XADD s * f",
        "XADD s * f v g",
        "XADD s NOMKSTREAM MAXLEN 5",
        "XADD",
        "XADD s",
        // NOMKSTREAM: a missing key stays missing.
        "XADD nokey NOMKSTREAM * f v",
        "EXISTS nokey",
        "XADD s NOMKSTREAM 8-0 f v",
        "XADD s nomkstream nomkstream 8-1 f v",
        // Options and their errors, in Redis's order.
        "XADD s MAXLEN 5 LIMIT 10 * f v",
        "XADD s LIMIT 10 * f v",
        "XADD s LIMIT 0 10-1 f v",
        "XADD s MAXLEN -1 * f v",
        "XADD s MAXLEN x * f v",
        "XADD s MAXLEN ~ x * f v",
        "XADD s MAXLEN = * f v",
        "XADD s MAXLEN * f v",
        "XADD s MAXLEN ~ 5 LIMIT -1 * f v",
        "XADD s MAXLEN ~ 5 LIMIT x * f v",
        "XADD s MAXLEN 5 MINID 1 * f v",
        "XADD s MINID 1 MAXLEN 5 * f v",
        "XADD s MAXLEN 1 MAXLEN 2 * f v",
        "XADD s MINID - * f v",
        "XADD s MINID abc * f v",
        "XADD s MINID 5-* * f v",
        "XADD s maxlen 1 limit 5 nomkstream 9-1 f v",
        "XADD s LIMIT 5 MAXLEN ~ 50 9-2 f v",
        "XLEN s",
        // Ids as Redis reads them (`string2ull`).
        "XADD s - f v",
        "XADD s + f v",
        "XADD s x f v",
        "XADD s 18446744073709551616 f v",
        "XADD s 3-18446744073709551616 f v",
        "XADD s 4- f v",
        "XADD s -4 f v",
        "XADD s 00010-0004 f v",
        "XADD s \\_11 f v",
        "XADD s +12 f v",
        "XADD s 13-+1 f v",
        "XADD s \\t14-\\_2 f v",
        "XADD s \\v15 f v",
        "XADD s 16-\\_-5 f v",
        "XADD s 17--5 f v",
        "XADD s 17--0 f v",
        "XADD s 18-0x1 f v",
        "XADD s 18\\_ f v",
        "XADD s 19-*\\0junk f v",
        "XADD s 20\\0junk f v",
        "XRANGE s - +",
        // `*` after an id from the future: the next sequence.
        "XADD s 99999999999999-5 f v",
        "XADD s * f v",
        "XADD s 99999999999999-* f v",
        // The last ids.
        "XADD e 18446744073709551615-18446744073709551614 f v",
        "XADD e 18446744073709551615-* f v",
        "XADD e * f v",
        "XADD e 18446744073709551615-* f v",
        "XADD e2 5-18446744073709551615 f v",
        "XADD e2 5-* f v",
        "XADD e2 6-* f v",
        "XLEN e",
        // Types.
        "SET str x",
        "XADD str * f v",
        "XADD str NOMKSTREAM * f v",
        "XADD str MAXLEN x * f v",
        "XADD str 0-0 f v",
        "LPUSH list a",
        "XADD list 1-1 f v",
    ]);
}

#[test]
fn xrange_xrevrange_and_xlen_match_redis() {
    lockstep(&[
        "XRANGE s - +",
        "XRANGE s - + COUNT 0",
        "XLEN s",
        "XADD s 1-1 a 1",
        "XADD s 1-2 b 2",
        "XADD s 2-0 c 3",
        "XADD s 3-5 d 4",
        "XADD s 18446744073709551615-0 z 9",
        "XRANGE s - +",
        "XRANGE s - + COUNT 2",
        "XRANGE s 1 1",
        "XRANGE s 1 2",
        "XRANGE s 1-2 3-5",
        "XRANGE s (1-1 +",
        "XRANGE s - (2-0",
        "XRANGE s (1 2",
        "XRANGE s - (3",
        "XRANGE s (1-2 (3-5",
        "XRANGE s (- +",
        "XRANGE s - (+",
        "XRANGE s ( +",
        "XRANGE s (18446744073709551615-18446744073709551615 +",
        "XRANGE s (18446744073709551615 +",
        "XRANGE s (18446744073709551615-18446744073709551615 (0-0",
        "XRANGE s - (0-0",
        "XRANGE s - (0",
        "XRANGE s - (0-1",
        "XRANGE s 3 1",
        "XRANGE s + -",
        "XRANGE s - + COUNT 0",
        "XRANGE s - + COUNT -1",
        "XRANGE nokey - + COUNT 0",
        "XRANGE nokey - +",
        "XRANGE s - + COUNT",
        "XRANGE s - + FOO 1",
        "XRANGE s - + COUNT x",
        "XRANGE s - + COUNT 1 COUNT 3",
        "XRANGE s - + count 9223372036854775807",
        "XRANGE s - + COUNT 9223372036854775808",
        "XRANGE s x +",
        "XRANGE s - x",
        "XRANGE s 1-* +",
        "XRANGE s \\_1 +2",
        "XREVRANGE s + -",
        "XREVRANGE s + - COUNT 2",
        "XREVRANGE s (3-5 (1-1",
        "XREVRANGE s 2 2",
        "XREVRANGE s 1 1",
        "XREVRANGE s - +",
        "XREVRANGE s + (-",
        "XREVRANGE s (+ -",
        "XREVRANGE s x y",
        "XREVRANGE s + x",
        "XREVRANGE s (0-0 (0-0",
        "XREVRANGE s (0-0 (18446744073709551615-18446744073709551615",
        "XREVRANGE s + - COUNT 0",
        "XREVRANGE s + - COUNT -5",
        "XRANGE",
        "XRANGE s -",
        "XREVRANGE s +",
        "XLEN",
        "XLEN s extra",
        "XLEN s",
        "XLEN nokey",
        "SET str v",
        "XRANGE str - +",
        "XRANGE str x +",
        "XRANGE str - + COUNT 0",
        "XREVRANGE str + -",
        "XLEN str",
        // RESP3: the same shapes, and null arrays as nulls.
        "!HELLO 3",
        "XRANGE s - + COUNT 1",
        "XRANGE s - + COUNT 0",
        "XREVRANGE nokey + -",
        "XADD nokey NOMKSTREAM * f v",
        "!HELLO 2",
        "XADD nokey NOMKSTREAM * f v",
    ]);
}

#[test]
fn xtrim_xdel_and_xsetid_match_redis() {
    lockstep(&[
        "XTRIM s LIMIT 0",
        "XTRIM nokey MAXLEN 1",
        "XTRIM s",
        "XTRIM s MAXLEN",
        "XTRIM s FOO 1",
        "XTRIM s MAXLEN ~",
        "XTRIM s LIMIT 5 MAXLEN 1",
        "XTRIM s MAXLEN 1 LIMIT 5",
        "XTRIM s NOMKSTREAM MAXLEN 1",
        "XTRIM s MAXLEN 1 *",
        "XTRIM s MAXLEN 1 MAXLEN 2",
        "XTRIM s MINID ~ 5 LIMIT 0",
        "XTRIM s MAXLEN 1 extra",
        "XTRIM s MAXLEN = 1 LIMIT 1",
        "XTRIM s MINID 5-*",
        "XTRIM s MINID +",
        "XTRIM s LIMIT 1",
        "XTRIM s LIMIT 0 FOO 1",
        "XTRIM nokey MAXLEN x",
        "SET str v",
        "XTRIM str MAXLEN 1",
        "XTRIM str MAXLEN x",
        "XADD s 1-1 a 1",
        "XADD s 2-1 b 2",
        "XADD s 3-1 c 3",
        "XADD s 4-1 d 4",
        "XADD s 5-1 e 5",
        "XTRIM s MAXLEN 10",
        "XTRIM s MAXLEN = 4",
        "XRANGE s - +",
        "XTRIM s MINID 3",
        "XTRIM s MINID = 3-1",
        "XTRIM s MAXLEN ~ 1",
        "XTRIM s MINID ~ 5",
        "XRANGE s - +",
        // Trimming a stream to nothing keeps the key (and its last id).
        "XTRIM s MINID = 6",
        "XLEN s",
        "EXISTS s",
        "XADD s 5-1 f v",
        "XADD s 5-2 f v",
        "XADD s MAXLEN 0 6-0 f v",
        "XLEN s",
        "XADD s MINID 9 7-0 f v",
        "XLEN s",
        // XDEL: the key is looked up before the ids are read.
        "XDEL nokey x",
        "XDEL nokey 1-1",
        "XDEL str x",
        "XDEL str 1",
        "XDEL",
        "XDEL s",
        "XADD d 1-1 a 1",
        "XADD d 2-1 b 2",
        "XADD d 3-1 c 3",
        "XDEL d x",
        "XDEL d 1-1 x",
        "XLEN d",
        "XDEL d 1-1 1-1 9-9",
        "XDEL d -",
        "XDEL d 2-*",
        "XDEL d 3-1",
        "XADD d 3-1 a 1",
        "XDEL d 2",
        "XDEL d 2-1",
        "XLEN d",
        "EXISTS d",
        "XRANGE d - +",
        "XADD d 3-2 f v",
        // XSETID.
        "XSETID s",
        "XSETID nokey 1-1",
        "XSETID str 1-1",
        "XSETID d x",
        "XSETID d 3-1",
        "XSETID d 3-3",
        "XSETID d 3-2 ENTRIESADDED",
        "XSETID d 5-5 ENTRIESADDED -1",
        "XSETID d 5-5 ENTRIESADDED x",
        "XSETID d 5-5 MAXDELETEDID 6-0",
        "XSETID d 5-5 MAXDELETEDID x",
        "XSETID d 5-5 FOO 1",
        "XSETID d 5-5 ENTRIESADDED 0",
        "XSETID nokey 5-5 ENTRIESADDED -1",
        "XSETID d 5-5 ENTRIESADDED 10 MAXDELETEDID 5-0",
        "XADD d 5-5 f v",
        "XADD d 5-6 f v",
        "XSETID d 5-6 MAXDELETEDID 5-7",
        "XSETID d 5 MAXDELETEDID 0-0",
        "XSETID d -",
        "XSETID d +",
        "XSETID d 5-*",
        "XSETID d 18446744073709551615-18446744073709551615",
        "XADD d * f v",
        // On an empty stream Redis 7.0 lets the last id go down.
        "XADD low 5-5 f v",
        "XDEL low 5-5",
        "XSETID low 1-1",
        "XADD low 1-1 f v",
        "XADD low 1-2 f v",
        "XRANGE low - +",
        "XREAD STREAMS low 0",
        "XSETID low 1-3 ENTRIESADDED 1",
        "XSETID low 1-3 ENTRIESADDED 2",
        // The same after trimming, and after XDEL from the front.
        "XADD front 5-1 f v",
        "XADD front 6-1 f v",
        "XADD front 7-1 f v",
        "XTRIM front MAXLEN 0",
        "XSETID front 2-0",
        "XADD front 3-0 f v",
        "XRANGE front - +",
        "XREVRANGE front + -",
        "XADD front 4-0 f v",
        "XADD front 5-0 f v",
        "XDEL front 3-0",
        "XRANGE front - +",
        "XDEL front 4-0 9-9",
        "XRANGE front - + COUNT 1",
        "XDEL front 5-0",
        "XSETID front 4-0",
        "XADD front 4-1 f v",
        "XRANGE front - +",
        "XTRIM front MINID = 4-2",
        "XSETID front 0-1",
        "XADD front 0-2 f v",
        "XRANGE front (0-1 +",
        "XREAD STREAMS front 0-0",
    ]);
}

#[test]
fn xread_matches_redis() {
    lockstep(&[
        "SET str v",
        "XADD s 1-1 a 1",
        "XADD s 1-2 b 2",
        "XADD s 2-0 c 3",
        "XADD s 3-5 d 4",
        "XADD t 9-9 x y",
        "XREAD STREAMS s 0",
        "XREAD STREAMS s t 0 0",
        "XREAD STREAMS s t 2 9-9",
        "XREAD COUNT 1 STREAMS s t 0 0",
        "XREAD COUNT 2 STREAMS s nokey t 0 0 0",
        "XREAD COUNT 1 STREAMS s s 0 1-2",
        "XREAD STREAMS s 5",
        "XREAD STREAMS s 3",
        "XREAD STREAMS s 3-4",
        "XREAD STREAMS s $",
        "XREAD STREAMS nokey $",
        "XREAD STREAMS nokey 0",
        "XREAD STREAMS s 18446744073709551615-18446744073709551615",
        "XREAD STREAMS s",
        "XREAD STREAMS s 0 1",
        "XREAD STREAMS s t 0",
        "XREAD COUNT 1 STREAMS s",
        "XREAD COUNT x STREAMS s 0",
        "XREAD COUNT -5 STREAMS s 0",
        "XREAD COUNT 0 STREAMS s 0",
        "XREAD BLOCK x STREAMS s 0",
        "XREAD BLOCK -1 STREAMS s 0",
        "XREAD BLOCK 1.5 STREAMS s 0",
        "XREAD BLOCK 9223372036854775807 STREAMS s 0",
        "XREAD BLOCK 10 STREAMS s $",
        "XREAD BLOCK 10 STREAMS s nokey $ $",
        "XREAD FOO STREAMS s 0",
        "XREAD GROUP g c STREAMS s 0",
        "XREAD GROUP g STREAMS s 0",
        "XREAD NOACK STREAMS s 0",
        "XREAD STREAMS s >",
        "XREAD STREAMS s -",
        "XREAD STREAMS s +",
        "XREAD STREAMS s (1",
        "XREAD STREAMS s 1-*",
        "XREAD STREAMS str 0",
        "XREAD STREAMS s str 0 0",
        "XREAD STREAMS str s x 0",
        "XREAD STREAMS s str x 0",
        "XREAD COUNT 1 COUNT 2 STREAMS s 0",
        "XREAD BLOCK 0 BLOCK 1 STREAMS s 0",
        "XREAD COUNT",
        "XREAD COUNT 1 STREAMS",
        "XREAD COUNT 1 STREAMS s 0 extra",
        "XREAD STREAMS STREAMS s 0 0",
        "XREAD STREAMS S 0",
        "xread streams s 0",
        // Inside MULTI, BLOCK answers at once.
        "MULTI",
        "XREAD BLOCK 0 STREAMS s $",
        "XREAD BLOCK 0 STREAMS s 3",
        "XREAD BLOCK 0 STREAMS nokey 0",
        "EXEC",
        // Scripts may read but not block.
        "EVAL return\\_redis.pcall('xread','block','0','streams','s','0') 0",
        "EVAL return\\_redis.pcall('XREAD','BLOCK','0','STREAMS','s','$') 0",
        "EVAL return\\_redis.pcall('xread','count','1','streams','s','0') 0",
        "EVAL return\\_redis.pcall('xread','streams','s','$') 0",
        // RESP3: a map of key to entries.
        "!HELLO 3",
        "XREAD STREAMS s t 0 0",
        "XREAD COUNT 1 STREAMS s s 0 1-2",
        "XREAD STREAMS s $",
        "XREAD BLOCK 10 STREAMS s $",
        "!HELLO 2",
    ]);
}

#[test]
fn keyspace_commands_treat_streams_as_redis_does() {
    lockstep(&[
        "XADD s 1-1 a 1",
        "XADD s 2-2 b 2",
        "XDEL s 2-2",
        "TYPE s",
        "OBJECT ENCODING s",
        "SCAN 0 TYPE stream",
        "SCAN 0 TYPE STREAM",
        "EXISTS s",
        "EXPIRE s 100",
        "TTL s",
        "PERSIST s",
        "TTL s",
        "COPY s c",
        "COPY s c",
        "COPY s c REPLACE",
        "XLEN c",
        "XRANGE c - +",
        // The copy keeps the last id: 2-2 is still below it.
        "XADD c 2-2 x y",
        "XADD c 2-3 x y",
        "RENAME c r",
        "EXISTS c",
        "XRANGE r - +",
        "XADD r 2-3 x y",
        "COPY s s",
        "COPY s d DB 1",
        "MOVE s 2",
        "SELECT 2",
        "TYPE s",
        "XRANGE s - +",
        "XADD s 2-1 f v",
        "SELECT 1",
        "XLEN d",
        "SELECT 0",
        "EXISTS s",
        "SET str v",
        "RENAME str s2",
        "XLEN s2",
        "RENAME r str",
        "TYPE str",
        "XLEN str",
        "RENAMENX r2 str",
        "DEL str s2",
        "DBSIZE",
        // Consumer groups go with COPY, RENAME and MOVE.
        "XADD g 1-1 a 1",
        "XADD g 2-1 b 2",
        "XADD g 3-1 c 3",
        "XGROUP CREATE g grp 0",
        "XGROUP CREATE g other $",
        "XREADGROUP GROUP grp alice COUNT 2 STREAMS g >",
        "XREADGROUP GROUP grp bob STREAMS g >",
        "XGROUP CREATECONSUMER g grp carol",
        "XDEL g 1-1",
        "COPY g gc",
        "RENAME g gr",
        "XINFO GROUPS gc",
        "XINFO GROUPS gr",
        "XPENDING gc grp",
        "XPENDING gr grp",
        "XINFO STREAM gc",
        "XREADGROUP GROUP grp alice STREAMS gc 0",
        "XACK gc grp 2-1",
        "XPENDING gc grp",
        "XPENDING gr grp",
        "MOVE gr 3",
        "COPY gc gd DB 4",
        "SELECT 3",
        "XINFO GROUPS gr",
        "XPENDING gr grp",
        "SELECT 4",
        "XPENDING gd grp",
        "XREADGROUP GROUP grp bob STREAMS gd 0",
        "SELECT 0",
        "XADD k 1-1 f v",
        "PEXPIRE k 20",
        "#sleep 100",
        "XLEN k",
        "EXISTS k",
        "XADD k 1-1 f v",
    ]);
}

/// Fills `key` with entries 1-1 ... n-1 on `client`.
fn fill(client: &mut RespClient, name: &str, key: &str, n: usize) {
    call(client, name, &words(&format!("DEL {key}")));
    for i in 1..=n {
        let reply = call(client, name, &words(&format!("XADD {key} {i}-1 f v")));
        assert!(
            matches!(reply, Frame::Bulk(_)),
            "{name}: XADD: {}",
            render(&reply)
        );
    }
}

/// `~` trims whole nodes of 100 entries, as Redis's radix tree holds a stream written by
/// XADD: 250 entries with several thresholds and limits, by XTRIM and by XADD.
#[test]
fn approximate_trimming_matches_redis() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let servers: [(&str, &Server); 2] = [("redis", &redis), ("docdb", &docdb)];
    let mut cases: Vec<Vec<String>> = Vec::new();
    for keep in [0, 1, 49, 50, 51, 100, 149, 150, 151, 200, 249, 250, 300] {
        cases.push(vec![format!("XTRIM s MAXLEN ~ {keep}")]);
    }
    for id in [
        "1-0", "50-1", "100-1", "101-1", "150-1", "201-1", "250-1", "251-1", "300-0",
    ] {
        cases.push(vec![format!("XTRIM s MINID ~ {id}")]);
    }
    for limit in [0, 1, 99, 100, 150, 200, 250] {
        cases.push(vec![format!("XTRIM s MAXLEN ~ 0 LIMIT {limit}")]);
        cases.push(vec![format!("XTRIM s MINID ~ 300 LIMIT {limit}")]);
    }
    cases.push(vec![
        "XTRIM s MAXLEN = 240".into(),
        "XTRIM s MAXLEN ~ 100".into(),
        "XTRIM s MAXLEN ~ 10".into(),
    ]);
    cases.push(vec![
        "XTRIM s MINID 35".into(),
        "XTRIM s MINID ~ 150".into(),
        "XTRIM s MINID ~ 201".into(),
    ]);
    cases.push(vec![
        "XADD s MAXLEN ~ 10 300-1 f v".into(),
        "XADD s MAXLEN ~ 10 LIMIT 100 301-1 f v".into(),
        "XADD s MINID ~ 300 302-1 f v".into(),
        "XADD s MAXLEN ~ 0 303-1 f v".into(),
    ]);
    let mut failures = Vec::new();
    for case in &cases {
        let mut transcripts = Vec::new();
        for (name, server) in servers {
            let mut client = server.client();
            fill(&mut client, name, "s", 250);
            let mut lines = Vec::new();
            for step in case
                .iter()
                .map(String::as_str)
                .chain(["XLEN s", "XRANGE s - + COUNT 1"])
            {
                lines.push(format!(
                    "{step} -> {}",
                    render(&call(&mut client, name, &words(step)))
                ));
            }
            transcripts.push(lines);
        }
        if transcripts[0] != transcripts[1] {
            failures.push(format!(
                "redis:\n    {}\n  docdb:\n    {}",
                transcripts[0].join("\n    "),
                transcripts[1].join("\n    ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---------------------------------------------------------------------------------------
// Blocking XREAD.

/// How long a "still blocked" check waits for a reply that must not come.
const QUIET: Duration = Duration::from_millis(250);
/// How long a reply may take.
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
}

use Step::{Blocked, Call, Reply, Send};

/// Runs `script` on `server` over fresh connections; one line per step.
fn transcript(server: &Server, script: &[Step]) -> Vec<String> {
    let mut clients: Vec<RespClient> = (0..3).map(|_| server.client()).collect();
    let reply = |client: &mut RespClient, wait: Duration| match client.reply_within(wait) {
        Ok(Some(frame)) => render(&frame),
        Ok(None) => "(no reply)".into(),
        Err(e) => format!("(error: {e})"),
    };
    let mut lines = Vec::new();
    for (i, step) in script.iter().enumerate() {
        let line = match *step {
            Send(c, request) => {
                clients[c].send(&words(request)).expect("send");
                format!("{c}> {request}")
            }
            Call(c, request) => {
                clients[c].send(&words(request)).expect("send");
                format!("{c}> {request} -> {}", reply(&mut clients[c], REPLY))
            }
            Reply(c) => format!("{c}< {}", reply(&mut clients[c], REPLY)),
            Blocked(c) => format!("{c}< {} (blocked?)", reply(&mut clients[c], QUIET)),
        };
        lines.push(format!("[{i}] {line}"));
    }
    lines
}

#[test]
fn blocking_xread_matches_redis() {
    let scripts: &[(&str, &[Step])] = &[
        (
            "an XADD serves a client blocked on $",
            &[
                Send(0, "XREAD BLOCK 0 STREAMS s $"),
                Blocked(0),
                Call(1, "XADD s 1-1 f v"),
                Reply(0),
                Call(1, "XADD s 1-2 g w"),
                Call(0, "XREAD STREAMS s 1-1"),
            ],
        ),
        (
            "a timeout answers a null",
            &[
                Call(1, "XADD s 1-1 f v"),
                Send(0, "XREAD BLOCK 300 STREAMS s $"),
                Blocked(0),
                Reply(0),
                Call(0, "XREAD BLOCK 50 STREAMS s 1-1"),
            ],
        ),
        (
            "entries already there are read at once",
            &[
                Call(1, "XADD s 1-1 f v"),
                Call(0, "XREAD BLOCK 0 STREAMS s 0"),
                Call(0, "XREAD BLOCK 0 STREAMS nokey s 0 0-5"),
            ],
        ),
        (
            "several keys and COUNT: the key written is served",
            &[
                Call(1, "XADD s 1-1 f v"),
                Send(0, "XREAD COUNT 1 BLOCK 0 STREAMS x s $ $"),
                Blocked(0),
                Call(1, "XADD other 1-1 f v"),
                Blocked(0),
                Call(1, "MULTI"),
                Call(1, "XADD s 5-1 a b"),
                Call(1, "XADD s 5-2 c d"),
                Call(1, "EXEC"),
                Reply(0),
            ],
        ),
        (
            "an id below the one waited for does not serve",
            &[
                Call(1, "XADD s 7-7 f v"),
                Send(0, "XREAD BLOCK 0 STREAMS s $"),
                Blocked(0),
                Call(1, "DEL s"),
                Call(1, "XADD s 1-1 f v"),
                Blocked(0),
                Call(1, "XADD s 8-1 f v"),
                Reply(0),
            ],
        ),
        (
            "a key that stops being a stream leaves the client blocked",
            &[
                Call(1, "XADD s 7-7 f v"),
                Send(0, "XREAD BLOCK 1500 STREAMS s $"),
                Blocked(0),
                Call(1, "SET s str"),
                Blocked(0),
                Reply(0),
            ],
        ),
        (
            "RESP3: the reply is a map, the timeout a null",
            &[
                Call(0, "HELLO 3"),
                Send(0, "XREAD BLOCK 0 STREAMS x 0-0"),
                Call(1, "XADD x 7-7 k v"),
                Reply(0),
                Call(0, "XREAD BLOCK 100 STREAMS x $"),
            ],
        ),
        (
            "inside MULTI BLOCK answers at once",
            &[
                Call(0, "MULTI"),
                Call(0, "XREAD BLOCK 0 STREAMS s $"),
                Call(0, "EXEC"),
            ],
        ),
    ];
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
            let mut lines = transcript(server, script);
            // HELLO's reply names the server: only its first step is kept.
            for line in &mut lines {
                if line.contains("\"server\"") {
                    *line = "(HELLO reply)".into();
                }
            }
            results.push(lines);
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

// ---------------------------------------------------------------------------------------
// DOCDB.ASOF (docdb only).

fn unix_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_micros() as u64
}

#[test]
fn asof_reads_a_stream_as_it_was() {
    let server = docdb(&[]);
    let mut c = server.client();
    let mut run = |request: &str| render(&call(&mut c, "docdb", &words(request)));
    run("XADD s 1-1 a 1");
    run("XADD s 2-1 b 2");
    std::thread::sleep(Duration::from_millis(20));
    let then = unix_micros();
    std::thread::sleep(Duration::from_millis(20));
    run("XADD s 3-1 c 3");
    run("XDEL s 1-1");
    run("XTRIM s MAXLEN 1");
    let asof = |run: &mut dyn FnMut(&str) -> String, request: &str| {
        run(&format!("DOCDB.ASOF {then} {request}"))
    };
    assert_eq!(run("XLEN s"), ":1");
    assert_eq!(asof(&mut run, "XLEN s"), ":2");
    assert_eq!(
        asof(&mut run, "XRANGE s - +"),
        r#"[["1-1", ["a", "1"]], ["2-1", ["b", "2"]]]"#
    );
    assert_eq!(run("XRANGE s - +"), r#"[["3-1", ["c", "3"]]]"#);
    assert_eq!(
        asof(&mut run, "XREVRANGE s + - COUNT 1"),
        r#"[["2-1", ["b", "2"]]]"#
    );
    assert_eq!(
        asof(&mut run, "XREAD COUNT 1 STREAMS s 1-1"),
        r#"[["s", [["2-1", ["b", "2"]]]]]"#
    );
    // `$` is the last id as of then; BLOCK cannot wait in the past.
    assert_eq!(asof(&mut run, "XREAD STREAMS s $"), "(nil array)");
    assert_eq!(
        asof(&mut run, "XREAD BLOCK 0 STREAMS s 1-1"),
        r#"[["s", [["2-1", ["b", "2"]]]]]"#
    );
    assert_eq!(asof(&mut run, "XREAD BLOCK 0 STREAMS s 2-1"), "(nil array)");
    assert_eq!(
        asof(&mut run, "XADD s 9-9 f v"),
        "-ERR DOCDB.ASOF runs read-only commands only, not 'xadd'"
    );
}

// ---------------------------------------------------------------------------------------
// Randomized differential runs.

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

/// Sends each request `next` makes to both servers and fails, with the seed, at the first
/// reply that differs. `next` sees the previous request's reply (from Redis).
fn differential(
    seed: u64,
    ops: usize,
    mut next: impl FnMut(&mut Rng, Option<&Frame>) -> Vec<String>,
) {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    let mut rng = Rng::new(seed);
    let mut history: Vec<String> = Vec::new();
    let mut last: Option<Frame> = None;
    for step in 0..ops {
        let request = next(&mut rng, last.as_ref());
        let args: Vec<Vec<u8>> = request.iter().map(|a| a.clone().into_bytes()).collect();
        let want = call(&mut r, "redis", &args);
        let got = call(&mut d, "docdb", &args);
        let text = request.join(" ");
        if render(&want) != render(&got) {
            let start = history.len().saturating_sub(15);
            panic!(
                "seed {seed} (DOCDB_STREAMS_SEED={seed} replays it) step {step}: {text}\n  \
                 redis: {}\n  docdb: {}\n  after:\n    {}",
                render(&want),
                render(&got),
                history[start..].join("\n    ")
            );
        }
        history.push(text);
        last = Some(want);
    }
}

fn seed() -> u64 {
    let seed = Rng::seed_from_env("DOCDB_STREAMS_SEED");
    eprintln!("streams differential seed {seed} (DOCDB_STREAMS_SEED={seed} replays it)");
    seed
}

/// An id near the stream's ids: `ms` up to `top` (and a little beyond), a small sequence.
fn near_id(rng: &mut Rng, top: u64) -> (u64, u64) {
    (rng.below(top + 3), rng.below(4))
}

/// XADD (explicit ids, mostly increasing), XDEL, exact XTRIM, XRANGE, XREVRANGE, XLEN and
/// XREAD on two keys.
#[test]
fn random_stream_commands_match_redis() {
    let seed = seed();
    let ops = env_u64("DOCDB_STREAMS_OPS").unwrap_or(1500) as usize;
    let mut top = [0u64; 2];
    differential(seed, ops, move |rng, _| {
        let k = rng.below(2) as usize;
        let key = ["r1", "r2"][k].to_string();
        let bound = |rng: &mut Rng, top: u64| -> String {
            let (ms, seq) = near_id(rng, top);
            match rng.below(7) {
                0 => "-".into(),
                1 => "+".into(),
                2 => ms.to_string(),
                3 => format!("({ms}-{seq}"),
                4 => format!("({ms}"),
                _ => format!("{ms}-{seq}"),
            }
        };
        let count = |rng: &mut Rng, out: &mut Vec<String>| {
            if rng.chance(40) {
                out.push("COUNT".into());
                out.push((rng.below(7) as i64 - 1).to_string());
            }
        };
        match rng.below(100) {
            0..=34 => {
                if rng.chance(90) {
                    top[k] += rng.below(3);
                }
                let id = match rng.below(10) {
                    0 => format!("{}-*", top[k]),
                    1 => top[k].to_string(),
                    2 => {
                        let (ms, seq) = near_id(rng, top[k]);
                        format!("{ms}-{seq}")
                    }
                    _ => format!("{}-{}", top[k], rng.below(4)),
                };
                let mut out = vec!["XADD".into(), key];
                if rng.chance(10) {
                    out.extend(["MAXLEN".into(), "=".into(), rng.below(12).to_string()]);
                }
                if rng.chance(5) {
                    out.extend(["MINID".into(), format!("{}", rng.below(top[k] + 1))]);
                }
                out.extend([id, "f".into(), rng.below(100).to_string()]);
                out
            }
            35..=44 => {
                let mut out = vec!["XDEL".into(), key];
                for _ in 0..=rng.below(3) {
                    let (ms, seq) = near_id(rng, top[k]);
                    out.push(format!("{ms}-{seq}"));
                }
                out
            }
            45..=51 => {
                if rng.chance(50) {
                    vec![
                        "XTRIM".into(),
                        key,
                        "MAXLEN".into(),
                        rng.below(15).to_string(),
                    ]
                } else {
                    let (ms, seq) = near_id(rng, top[k]);
                    vec![
                        "XTRIM".into(),
                        key,
                        "MINID".into(),
                        "=".into(),
                        format!("{ms}-{seq}"),
                    ]
                }
            }
            52..=69 => {
                let mut out = vec!["XRANGE".into(), key, bound(rng, top[k]), bound(rng, top[k])];
                count(rng, &mut out);
                out
            }
            70..=81 => {
                let mut out = vec![
                    "XREVRANGE".into(),
                    key,
                    bound(rng, top[k]),
                    bound(rng, top[k]),
                ];
                count(rng, &mut out);
                out
            }
            82..=89 => vec!["XLEN".into(), key],
            90..=97 => {
                let mut out = vec!["XREAD".into()];
                count(rng, &mut out);
                out.extend(["STREAMS".into(), "r1".into(), "r2".into()]);
                for t in top {
                    let (ms, seq) = near_id(rng, t);
                    out.push(if rng.chance(20) {
                        "$".into()
                    } else {
                        format!("{ms}-{seq}")
                    });
                }
                out
            }
            _ => {
                let (ms, seq) = near_id(rng, top[k] + 2);
                vec!["XSETID".into(), key, format!("{ms}-{seq}")]
            }
        }
    });
}

/// XADD and trims (`=` and `~`, MAXLEN and MINID, with and without LIMIT) on a stream that
/// never empties and has no XDEL: the stream shape Redis's nodes are emulated for.
#[test]
fn random_approximate_trims_match_redis() {
    let seed = seed();
    let ops = env_u64("DOCDB_STREAMS_OPS").unwrap_or(1500) as usize;
    let mut next_ms = 0u64;
    differential(seed, ops, move |rng, _| {
        let trim = |rng: &mut Rng, top: u64, out: &mut Vec<String>| {
            let approx = rng.chance(70);
            if rng.chance(50) {
                // At least one entry is kept.
                out.extend(["MAXLEN".into(), if approx { "~" } else { "=" }.into()]);
                out.push((1 + rng.below(400)).to_string());
            } else {
                // Never above the last id: that one stays.
                out.extend(["MINID".into(), if approx { "~" } else { "=" }.into()]);
                out.push(rng.below(top + 1).to_string());
            }
            if approx && rng.chance(30) {
                out.extend(["LIMIT".into(), rng.below(350).to_string()]);
            }
        };
        if rng.chance(85) || next_ms == 0 {
            next_ms += 1;
            let mut out = vec!["XADD".into(), "t".into()];
            if rng.chance(3) {
                trim(rng, next_ms, &mut out);
            }
            out.extend([format!("{next_ms}-1"), "f".into(), "v".into()]);
            return out;
        }
        match rng.below(3) {
            0 => {
                let mut out = vec!["XTRIM".into(), "t".into()];
                trim(rng, next_ms, &mut out);
                out
            }
            1 => vec!["XLEN".into(), "t".into()],
            _ => vec![
                "XRANGE".into(),
                "t".into(),
                "-".into(),
                "+".into(),
                "COUNT".into(),
                "1".into(),
            ],
        }
    });
}

// ---------------------------------------------------------------------------------------
// Where the keys are.

/// COMMAND INFO's key positions and COMMAND GETKEYS for every stream command: XREAD's and
/// XREADGROUP's keys are the first half of what follows STREAMS; XGROUP's and XINFO's
/// follow their subcommand.
#[test]
fn stream_command_keys_match_redis() {
    let mut script: Vec<String> = [
        "xadd",
        "xtrim",
        "xdel",
        "xlen",
        "xrange",
        "xrevrange",
        "xsetid",
        "xread",
        "xreadgroup",
        "xgroup",
        "xinfo",
        "xack",
        "xpending",
        "xclaim",
        "xautoclaim",
    ]
    .iter()
    .map(|name| format!("COMMAND INFO {name}"))
    .collect();
    // Only the arity and the key positions are compared (docdb lists fewer flags).
    let requests = [
        "XADD s * f v",
        "XTRIM s MAXLEN 1",
        "XDEL s 1-1",
        "XLEN s",
        "XRANGE s - +",
        "XREVRANGE s + -",
        "XSETID s 1-1",
        "XREAD STREAMS a b",
        "XREAD COUNT 5 BLOCK 1 STREAMS a b c d",
        "XREAD STREAMS a b c",
        "XREAD STREAMS a b c d e",
        "XREAD STREAMS",
        "XREAD STREAMS a",
        "XREAD COUNT STREAMS STREAMS a 0",
        "XREAD STREAMS STREAMS a b",
        "XREAD foo STREAMS a b",
        "XREAD COUNT 1 STREAMS",
        "XREAD a b STREAMS",
        "XREADGROUP GROUP g c STREAMS a b",
        "XREADGROUP GROUP g c COUNT 1 STREAMS a b c d",
        "XREADGROUP GROUP g c STREAMS a b c",
        "XREADGROUP GROUP streams c STREAMS a b",
        "XREADGROUP GROUP g c foo a b",
        "XREADGROUP STREAMS a b c d e f",
        "XREADGROUP COUNT 1 STREAMS a b c d",
        "XGROUP CREATE k g 0",
        "XGROUP CREATE k g $ MKSTREAM",
        "XGROUP SETID k g 0",
        "XGROUP DESTROY k g",
        "XGROUP CREATECONSUMER k g c",
        "XGROUP DELCONSUMER k g c",
        "XGROUP HELP",
        "XGROUP help x",
        "XGROUP foo k",
        "XGROUP CREATE k",
        "XGROUP CREATE k g",
        "XGROUP DESTROY k g x",
        "XINFO STREAM k",
        "XINFO STREAM k FULL",
        "XINFO GROUPS k",
        "XINFO CONSUMERS k g",
        "XINFO HELP",
        "XINFO foo k",
        "XINFO STREAM",
        "XINFO GROUPS k x",
        "XACK k g 1",
        "XPENDING k g",
        "XCLAIM k g c 0 1",
        "XAUTOCLAIM k g c 0 0",
    ];
    script.extend(requests.iter().map(|r| format!("COMMAND GETKEYS {r}")));
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    let mut failures = Vec::new();
    for step in &script {
        let args = words(step);
        let (mut want, mut got) = (call(&mut r, "redis", &args), call(&mut d, "docdb", &args));
        if step.starts_with("COMMAND INFO") {
            // Name, arity, then first, last and step (after the flags).
            let keep = |frame: Frame| match frame {
                Frame::Array(mut infos) => match infos.pop() {
                    Some(Frame::Array(info)) => Frame::Array(
                        info.into_iter()
                            .enumerate()
                            .filter(|(i, _)| matches!(i, 0 | 1 | 3 | 4 | 5))
                            .map(|(_, f)| f)
                            .collect(),
                    ),
                    other => other.unwrap_or(Frame::NullArray),
                },
                other => other,
            };
            (want, got) = (keep(want), keep(got));
        }
        let (want, got) = (render(&want), render(&got));
        if want != got {
            failures.push(format!("{step}\n  redis: {want}\n  docdb: {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
