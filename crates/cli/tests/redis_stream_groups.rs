//! Stream consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO)
//! against a real `redis-server`: the same scripts run on both, and every reply must be
//! Redis's.
//!
//! Times cannot be equal to the millisecond on two servers, so a few values are compared
//! within [`TOLERANCE_MS`]: the `idle` of XINFO CONSUMERS, the `seen-time` of XINFO STREAM
//! FULL, and the idle or delivery time in pending-entry rows (XPENDING's extended form and
//! FULL's `pending` lists). XINFO STREAM's `radix-tree-keys` and `radix-tree-nodes` describe
//! Redis's memory layout, which docdb does not have (it reports estimates): they are not
//! compared. Everything else is compared exactly, RESP3 replies included.

mod common_redis;

use std::time::Duration;

use common_redis::{Frame, RespClient, Server, docdb, render, require_redis};
use engine::Rng;

/// How far apart two servers' time values (milliseconds) may be.
const TOLERANCE_MS: i64 = 400;
/// How long a "still blocked" check waits for a reply that must not come.
const QUIET: Duration = Duration::from_millis(250);
/// How long a reply may take (a blocked client's, after the write that serves it).
const REPLY: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------
// Comparing replies.

/// What a position in a reply holds, for the comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
enum At {
    /// Compared exactly (containers walked).
    Plain,
    /// Milliseconds: within [`TOLERANCE_MS`].
    Time,
    /// Not compared (Redis's radix tree figures).
    Any,
    /// An array of pending-entry rows.
    Rows,
    /// One pending-entry row: its idle or delivery time is the one after the consumer.
    Row,
}

/// What the value after a map key (or a RESP2 flat map's key) holds.
fn after_key(key: &Frame) -> At {
    match key {
        Frame::Bulk(k) if k == b"idle" || k == b"seen-time" => At::Time,
        Frame::Bulk(k) if k == b"radix-tree-keys" || k == b"radix-tree-nodes" => At::Any,
        Frame::Bulk(k) if k == b"pending" => At::Rows,
        _ => At::Plain,
    }
}

/// Whether `got` (docdb's) agrees with `want` (Redis's) at a position holding `at`.
fn agree(want: &Frame, got: &Frame, at: At) -> bool {
    match (at, want, got) {
        (At::Any, _, _) => true,
        (At::Time, Frame::Integer(a), Frame::Integer(b)) => (a - b).abs() <= TOLERANCE_MS,
        (_, Frame::Array(a), Frame::Array(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).enumerate().all(|(i, (x, y))| {
                    let child = match at {
                        At::Rows => At::Row,
                        // [id, consumer, time, count] or, a consumer's own, [id, time, count].
                        At::Row if (a.len() == 4 && i == 2) || (a.len() == 3 && i == 1) => At::Time,
                        At::Row => At::Plain,
                        _ if i > 0 => after_key(&a[i - 1]),
                        _ => At::Plain,
                    };
                    agree(x, y, child)
                })
        }
        (_, Frame::Map(a), Frame::Map(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && agree(va, vb, after_key(ka)))
        }
        _ => want == got,
    }
}

// ---------------------------------------------------------------------------------------
// The lockstep script: one connection to each server, every reply compared.

#[derive(Clone, Copy)]
enum Step {
    /// A command (words split on spaces).
    C(&'static str),
    /// XPENDING's extended form: rows whose idle times are compared within the tolerance.
    P(&'static str),
    /// A command whose reply is not compared (HELLO, whose version and id differ).
    Q(&'static str),
    /// Sleeps this many milliseconds (so that entries become idle).
    Sleep(u64),
}

use Step::{C, P, Q, Sleep};

fn words(request: &str) -> Vec<&str> {
    request.split_whitespace().collect()
}

fn call(client: &mut RespClient, name: &str, request: &str) -> Frame {
    client
        .call(&words(request))
        .unwrap_or_else(|e| panic!("{name}: {request}: {e}"))
}

/// Runs `script` on Redis and docdb in lockstep; fails with every step whose replies differ.
fn lockstep(script: &[Step]) {
    let redis = require_redis(&[]);
    let docdb = docdb(&[]);
    let (mut want_client, mut got_client) = (redis.client(), docdb.client());
    let mut failures = Vec::new();
    let mut compared = 0;
    for (i, step) in script.iter().enumerate() {
        let (request, at) = match *step {
            C(request) => (request, At::Plain),
            P(request) => (request, At::Rows),
            Q(request) => {
                call(&mut want_client, "redis", request);
                call(&mut got_client, "docdb", request);
                continue;
            }
            Sleep(ms) => {
                std::thread::sleep(Duration::from_millis(ms));
                continue;
            }
        };
        let want = call(&mut want_client, "redis", request);
        let got = call(&mut got_client, "docdb", request);
        compared += 1;
        if !agree(&want, &got, at) {
            failures.push(format!(
                "[{i}] {request}\n  redis: {}\n  docdb: {}",
                render(&want),
                render(&got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} replies differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn xgroup_matches_redis() {
    lockstep(&[
        C("FLUSHALL"),
        C("XGROUP"),
        C("XGROUP HELP"),
        C("XGROUP help extra"),
        C("XGROUP foo"),
        C("XGROUP foo a b c"),
        C("XGROUP CREATE"),
        C("XGROUP CREATE s g"),
        C("XGROUP CREATE s g $"),
        C("XGROUP CREATE s g abc"),
        C("XGROUP CREATE s g $ MKSTREAM"),
        C("XGROUP CREATE s g $ MKSTREAM"),
        C("TYPE s"),
        C("XLEN s"),
        C("XGROUP CREATE s g2 $ MKSTREAM ENTRIESREAD"),
        C("XGROUP CREATE s g2 $ ENTRIESREAD -2"),
        C("XGROUP CREATE s g2 $ ENTRIESREAD abc"),
        C("XGROUP CREATE s g2 $ ENTRIESREAD -1"),
        C("XGROUP CREATE s g3 $ FOO"),
        C("XGROUP CREATE nokey g3 $ FOO"),
        C("XGROUP CREATE s g3 $ MKSTREAM MKSTREAM MKSTREAM MKSTREAM"),
        C("XGROUP CREATE nokey g3 $ ENTRIESREAD 1 ENTRIESREAD 2"),
        C("XGROUP CREATE s g3 $ MKSTREAM MKSTREAM MKSTREAM"),
        C("XGROUP CREATE s g4 -"),
        C("XGROUP CREATE s g4 +"),
        C("XGROUP CREATE s g4 1-x"),
        C("XGROUP CREATE s g4 5"),
        C("XGROUP Create s G 0 mkstream entriesread 3 extra"),
        C("XGROUP create s G 0 entriesread 3 mkstream"),
        C("SET str v"),
        C("XGROUP CREATE str g $"),
        C("XGROUP CREATE str g $ MKSTREAM"),
        C("XGROUP DESTROY str g"),
        C("XGROUP SETID s g"),
        C("XGROUP SETID s g 1-1 extra"),
        C("XGROUP SETID s nog 1-1"),
        C("XGROUP SETID nokey g 1-1"),
        C("XGROUP SETID s g -"),
        C("XGROUP SETID s g +"),
        C("XGROUP SETID s g 7"),
        C("XGROUP SETID s g abc"),
        C("XGROUP SETID s g 1-1 ENTRIESREAD 5"),
        C("XGROUP SETID s g 1-1 ENTRIESREAD 5 MKSTREAM"),
        C("XGROUP SETID s g 1-1 MKSTREAM"),
        C("XGROUP SETID s g 1-1 ENTRIESREAD"),
        C("XGROUP SETID s g 1-1 ENTRIESREAD 1 ENTRIESREAD 2"),
        C("XINFO GROUPS s"),
        C("XADD s 9-1 f v"),
        C("XGROUP SETID s g $"),
        C("XGROUP CREATE s g5 $"),
        C("XINFO GROUPS s"),
        C("XGROUP DESTROY s"),
        C("XGROUP DESTROY s g extra"),
        C("XGROUP DESTROY nokey g"),
        C("XGROUP DESTROY s nog"),
        C("XGROUP DESTROY s g4"),
        C("XGROUP DESTROY s g4"),
        C("XGROUP CREATECONSUMER s g"),
        C("XGROUP CREATECONSUMER s g c extra"),
        C("XGROUP CREATECONSUMER s g c"),
        C("XGROUP CREATECONSUMER s g c"),
        C("XGROUP CREATECONSUMER s g d"),
        C("XGROUP CREATECONSUMER s nog c"),
        C("XGROUP CREATECONSUMER nokey g c"),
        C("XINFO CONSUMERS s g"),
        C("XGROUP DELCONSUMER s g c"),
        C("XGROUP DELCONSUMER s g c"),
        C("XGROUP DELCONSUMER s nog c"),
        C("XGROUP DELCONSUMER nokey nog c"),
        C("XINFO CONSUMERS s g"),
        C("XINFO GROUPS s"),
        C("XGROUP DESTROY s g"),
        C("XGROUP DESTROY s G"),
        C("XINFO GROUPS s"),
        C("DEL s"),
        C("XGROUP CREATE s g 0 MKSTREAM"),
        C("XINFO STREAM s"),
        C("XINFO GROUPS s"),
    ]);
}

#[test]
fn xreadgroup_matches_redis() {
    lockstep(&[
        C("FLUSHALL"),
        C("XREADGROUP"),
        C("XREADGROUP GROUP g c STREAMS s"),
        C("XREADGROUP GROUP g c STREAMS s >"),
        C("XREADGROUP GROUP g c STREAMS s > x"),
        C("XREADGROUP GROUP g c COUNT 1 STREAMS s"),
        C("XREADGROUP GROUP g STREAMS s > x"),
        C("XREADGROUP STREAMS s > x y z"),
        C("XREADGROUP COUNT 1 STREAMS s > x y"),
        C("XREADGROUP GROUP g c FOO STREAMS s >"),
        C("XREADGROUP GROUP g c COUNT x STREAMS s >"),
        C("XREADGROUP GROUP g c COUNT -5 STREAMS s >"),
        C("XREADGROUP GROUP g c BLOCK x STREAMS s >"),
        C("XREADGROUP GROUP g c BLOCK -1 STREAMS s >"),
        C("XREADGROUP GROUP g c BLOCK 1.5 STREAMS s >"),
        C("XREADGROUP GROUP g c STREAMS s $"),
        C("SET str v"),
        C("XREADGROUP GROUP g c STREAMS str >"),
        C("XADD s 1-1 a 1"),
        C("XREADGROUP GROUP g c STREAMS s >"),
        C("XGROUP CREATE s g 0"),
        C("XREADGROUP GROUP g c STREAMS s $"),
        C("XREADGROUP GROUP g c STREAMS s +"),
        C("XREADGROUP GROUP g c STREAMS s -"),
        C("XREADGROUP GROUP g c STREAMS s abc"),
        C("XREADGROUP GROUP g c STREAMS s (1"),
        C("XREADGROUP GROUP g c STREAMS s 0"),
        C("XREADGROUP GROUP g c STREAMS s nokey > >"),
        C("XREADGROUP GROUP g c STREAMS s str > >"),
        C("XREADGROUP GROUP g c STREAMS str s > >"),
        C("XREADGROUP GROUP g c STREAMS s s 0 $"),
        C("XINFO CONSUMERS s g"),
        C("XREADGROUP GROUP g c STREAMS s s > 0"),
        C("XREADGROUP GROUP g c STREAMS s s 0 >"),
        C("XREADGROUP GROUP g c STREAMS s s > >"),
        C("XADD s 2-1 b 2"),
        C("XADD s 3-1 c 3"),
        C("XREADGROUP GROUP g c STREAMS s s > >"),
        C("XREADGROUP GROUP g c STREAMS s s 0 0"),
        C("XREADGROUP GROUP g c2 COUNT 1 STREAMS s 0"),
        C("XREADGROUP GROUP g c COUNT 0 STREAMS s 0"),
        C("XREADGROUP GROUP g c COUNT 1 STREAMS s 1-1"),
        C("XREADGROUP GROUP g c STREAMS s 1"),
        C("XREADGROUP GROUP g c COUNT 1 COUNT 2 STREAMS s 0"),
        C("XREADGROUP GROUP g c GROUP g2 c2 STREAMS s 0"),
        P("XPENDING s g - + 10"),
        C("XDEL s 2-1"),
        C("XREADGROUP GROUP g c STREAMS s 0"),
        P("XPENDING s g - + 10"),
        C("XREADGROUP GROUP g c NOACK STREAMS s >"),
        C("XADD s 4-1 d 4"),
        C("XREADGROUP GROUP g c3 NOACK STREAMS s >"),
        C("XPENDING s g"),
        C("XINFO CONSUMERS s g"),
        C("XREADGROUP GROUP g c STREAMS s 9-9"),
        C("XREADGROUP GROUP g c STREAMS s 18446744073709551615-18446744073709551615"),
        C("XREADGROUP GROUP g c STREAMS s 18446744073709551615-18446744073709551614"),
        // With explicit ids BLOCK answers at once; with `>` and nothing new it times out,
        // and a consumer that got nothing is not created.
        C("XREADGROUP NOACK GROUP g c4 BLOCK 0 STREAMS s 0"),
        C("XREADGROUP GROUP g c5 BLOCK 10 STREAMS s >"),
        C("XREADGROUP GROUP g c5 STREAMS s >"),
        C("XINFO CONSUMERS s g"),
        // SETID back: `>` delivers again and hands pending entries to the new reader.
        C("XGROUP SETID s g 0"),
        C("XREADGROUP GROUP g c6 COUNT 2 STREAMS s >"),
        P("XPENDING s g - + 10"),
        C("XPENDING s g"),
        C("XINFO GROUPS s"),
        C("XREADGROUP GROUP g c6 BLOCK 100 STREAMS s >"),
        // Two streams, one read after the other in one command.
        C("XADD t 1-1 x 1"),
        C("XGROUP CREATE t g 0"),
        C("XREADGROUP GROUP g c7 COUNT 1 STREAMS s t > >"),
        C("XREADGROUP GROUP g c7 STREAMS t s > 0"),
        C("XINFO GROUPS t"),
        // Inside a transaction BLOCK never blocks.
        C("MULTI"),
        C("XREADGROUP GROUP g c7 BLOCK 0 STREAMS t >"),
        C("XREADGROUP GROUP g c7 STREAMS t 0"),
        C("EXEC"),
        // Scripts: BLOCK is refused; read-only scripts may not read a group (it writes).
        C(
            "EVAL return(redis.call('xreadgroup','GROUP','g','c8','BLOCK','0','STREAMS','t','>')) 1 t",
        ),
        C("EVAL return(redis.call('XREADGROUP','GROUP','g','c8','STREAMS','t','0')) 1 t"),
        C("EVAL_RO return(redis.call('xreadgroup','GROUP','g','c8','STREAMS','t','0')) 1 t"),
        C("EVAL_RO return(redis.call('xpending','t','g')) 1 t"),
        C("EVAL_RO return(redis.call('xinfo','groups','t')) 1 t"),
        C("EVAL_RO return(redis.call('xack','t','g','1-1')) 1 t"),
    ]);
}

#[test]
fn ack_pending_and_claims_match_redis() {
    lockstep(&[
        C("FLUSHALL"),
        C("XPENDING"),
        C("XPENDING s"),
        C("XPENDING s g"),
        C("XPENDING s g -"),
        C("XPENDING s g - +"),
        C("XPENDING s g - + 10 c extra more"),
        C("XPENDING s g IDLE 10 - + 10 c extra"),
        C("XPENDING s g - + x"),
        C("XPENDING s g x + 10"),
        C("XPENDING s g IDLE x - + 10"),
        C("XPENDING s g IDLE 10 - +"),
        C("XAUTOCLAIM s g c 0 0"),
        C("XCLAIM s g c 0 1-1"),
        C("XACK s g 1-1"),
        C("XACK s g x"),
        C("XADD s 1-1 a 1"),
        C("XADD s 2-1 b 2"),
        C("XADD s 3-1 c 3"),
        C("XADD s 4-1 d 4"),
        C("XADD s 5-1 e 5"),
        C("XGROUP CREATE s g 0"),
        C("XPENDING s g"),
        C("XPENDING s nog"),
        C("SET str v"),
        C("XPENDING str g"),
        C("XCLAIM str g c 0 1-1"),
        C("XAUTOCLAIM str g c 0 0"),
        C("XACK str g 1-1"),
        P("XPENDING s g - + 10"),
        C("XREADGROUP GROUP g alice COUNT 3 STREAMS s >"),
        C("XREADGROUP GROUP g bob STREAMS s >"),
        C("XGROUP CREATECONSUMER s g zed"),
        C("XPENDING s g"),
        P("XPENDING s g - + 10"),
        P("XPENDING s g - + -1"),
        P("XPENDING s g - + 0"),
        P("XPENDING s g - + 1"),
        P("XPENDING s g (1-1 + 10"),
        P("XPENDING s g - (3-1 10"),
        P("XPENDING s g 2 2 10"),
        P("XPENDING s g (3 + 10"),
        P("XPENDING s g - (3 10"),
        C("XPENDING s g (18446744073709551615-18446744073709551615 + 10"),
        C("XPENDING s g - (0-0 10"),
        P("XPENDING s g - + 10 alice"),
        P("XPENDING s g - + 10 nobody"),
        P("XPENDING s g - + 10 zed"),
        P("XPENDING s g IDLE 3600000 - + 10"),
        P("XPENDING s g IDLE 0 - + 10"),
        P("XPENDING s g IDLE -5 - + 10"),
        P("XPENDING s g idle 0 - + 10 bob"),
        P("XPENDING s g - + 9223372036854775807"),
        Sleep(150),
        P("XPENDING s g IDLE 100 - + 10"),
        // XCLAIM: the key and group first, then min-idle, ids and options.
        C("XCLAIM"),
        C("XCLAIM s g bob 0"),
        C("XCLAIM nokey g bob x 1-1"),
        C("XCLAIM s nog bob 0 1-1"),
        C("XCLAIM s g bob x 1-1"),
        C("XCLAIM s g bob 0 1-1 FOO"),
        C("XCLAIM s g bob 0 1-1 IDLE"),
        C("XCLAIM s g bob 0 1-1 IDLE x"),
        C("XCLAIM s g bob 0 1-1 TIME x"),
        C("XCLAIM s g bob 0 1-1 RETRYCOUNT x"),
        C("XCLAIM s g bob 0 1-1 LASTID x"),
        C("XCLAIM s g bob 0 1-1 LASTID"),
        C("XCLAIM s g bob 0 1-1 abc 2-1"),
        C("XCLAIM s g bob 0 1-1 JUSTID 2-1"),
        C("XCLAIM s g bob 0 +"),
        C("XCLAIM s g bob 0 -"),
        C("XCLAIM s g carol 3600000 1-1"),
        C("XCLAIM s g carol 0 9-9 8-8"),
        C("XINFO CONSUMERS s g"),
        C("XCLAIM s g bob -5 1-1 JUSTID"),
        C("XCLAIM s g bob 0 1"),
        C("XCLAIM s g bob 0 2-1 IDLE 5000"),
        P("XPENDING s g - + 10"),
        C("XCLAIM s g carol 4000 2-1 3-1"),
        C("XCLAIM s g carol 0 3-1 RETRYCOUNT 10 JUSTID"),
        C("XCLAIM s g carol 0 3-1 RETRYCOUNT -3"),
        C("XCLAIM s g carol 0 3-1 TIME 1"),
        P("XPENDING s g - + 10"),
        C("XCLAIM s g carol 0 3-1 TIME 99999999999999"),
        C("XCLAIM s g carol 0 3-1 IDLE -5"),
        P("XPENDING s g - + 10"),
        C("XCLAIM s g bob 0 1-1 1-1 1-1"),
        C("XCLAIM s g dave 0 9-9 FORCE"),
        C("XADD s 6-1 f 6"),
        C("XCLAIM s g dave 0 6-1 FORCE JUSTID"),
        C("XCLAIM s g dave 0 6-1"),
        C("XCLAIM s g dave 0 6-1 LASTID 7-7"),
        C("XINFO GROUPS s"),
        C(
            "XCLAIM s g dave 0 1-1 2-1 IDLE 100 TIME 5 RETRYCOUNT 2 FORCE JUSTID LASTID 1-1 RETRYCOUNT 4",
        ),
        P("XPENDING s g - + 10"),
        C("XPENDING s g"),
        C("XINFO CONSUMERS s g"),
        // XAUTOCLAIM: min-idle, start and options first, then the key.
        C("XAUTOCLAIM s g c"),
        C("XAUTOCLAIM nokey g c x 0"),
        C("XAUTOCLAIM nokey g c 0 0"),
        C("XAUTOCLAIM s nog c 0 0"),
        C("XAUTOCLAIM s g c x 0"),
        C("XAUTOCLAIM s g c 0 x"),
        C("XAUTOCLAIM s g c 0 (18446744073709551615-18446744073709551615"),
        C("XAUTOCLAIM s g c 0 0 COUNT 0"),
        C("XAUTOCLAIM s g c 0 0 COUNT -1"),
        C("XAUTOCLAIM s g c 0 0 COUNT x"),
        C("XAUTOCLAIM s g c 0 0 COUNT 9223372036854775807"),
        C("XAUTOCLAIM s g c 0 0 COUNT 576460752303423488"),
        C("XAUTOCLAIM s g c 0 0 COUNT"),
        C("XAUTOCLAIM s g c 0 0 JUSTID FOO"),
        C("XAUTOCLAIM s g c 0 x COUNT 0"),
        C("XAUTOCLAIM s g erin 3600000 0"),
        C("XINFO CONSUMERS s g"),
        C("XAUTOCLAIM s g erin 0 0 COUNT 2"),
        C("XAUTOCLAIM s g erin 0 3-1 COUNT 2 JUSTID"),
        C("XAUTOCLAIM s g erin 0 (4-1 COUNT 2"),
        C("XAUTOCLAIM s g erin 0 (1 COUNT 1 COUNT 3 JUSTID JUSTID"),
        C("XAUTOCLAIM s g erin 0 +"),
        P("XPENDING s g - + 10"),
        C("XINFO CONSUMERS s g"),
        // XACK: no key or group acknowledges nothing, before the ids are read.
        C("XACK"),
        C("XACK s g"),
        C("XACK nokey g x"),
        C("XACK s nog 1-1"),
        C("XACK s g x"),
        C("XACK s g 1-1 x"),
        C("XACK s g +"),
        C("XACK s g 1-1 1-1 2-1 9-9"),
        C("XACK s g 3"),
        C("XPENDING s g"),
        C("XACK s g 3-1 4-1 5-1 6-1"),
        C("XPENDING s g"),
        C("XINFO CONSUMERS s g"),
    ]);
}

#[test]
fn xinfo_matches_redis() {
    lockstep(&[
        C("FLUSHALL"),
        C("XINFO"),
        C("XINFO HELP"),
        C("XINFO help x"),
        C("XINFO foo"),
        C("XINFO foo bar"),
        C("XINFO STREAM"),
        C("XINFO STREAM nokey"),
        C("XINFO STREAM nokey foo"),
        C("XINFO GROUPS nokey"),
        C("XINFO CONSUMERS nokey g"),
        C("XINFO GROUPS"),
        C("XINFO GROUPS a b"),
        C("XINFO CONSUMERS a"),
        C("XINFO CONSUMERS a b c"),
        C("SET str v"),
        C("XINFO STREAM str"),
        C("XINFO GROUPS str"),
        C("XINFO CONSUMERS str g"),
        C("XADD s 1-1 a 1 b 2"),
        C("XADD s 2-1 a 3"),
        C("XINFO STREAM s"),
        C("XINFO STREAM s FULL"),
        C("XINFO STREAM s full count 1"),
        C("XINFO STREAM s full count 0"),
        C("XINFO STREAM s full count -1"),
        C("XINFO STREAM s full count x"),
        C("XINFO STREAM s foo"),
        C("XINFO STREAM s full count"),
        C("XINFO STREAM s full count 1 x"),
        C("XINFO STREAM s full foo 1"),
        C("XINFO STREAM s x y"),
        C("XINFO Stream s FULL COUNT 1"),
        C("XINFO CONSUMERS s g"),
        C("XINFO GROUPS s"),
        C("XGROUP CREATE s g 0"),
        C("XGROUP CREATE s h $"),
        C("XINFO CONSUMERS s nog"),
        C("XINFO CONSUMERS s g"),
        C("XREADGROUP GROUP g alice COUNT 1 STREAMS s >"),
        C("XREADGROUP GROUP g bob STREAMS s >"),
        C("XGROUP CREATECONSUMER s g carol"),
        C("XINFO CONSUMERS s g"),
        C("XINFO GROUPS s"),
        C("XINFO STREAM s"),
        C("XINFO STREAM s FULL"),
        C("XINFO STREAM s FULL COUNT 1"),
        C("XADD s 3-1 a 4"),
        C("XADD s 4-1 a 5"),
        C("XADD s 5-1 a 6"),
        C("XADD s 6-1 a 7"),
        C("XADD s 7-1 a 8"),
        C("XADD s 8-1 a 9"),
        C("XADD s 9-1 a 10"),
        C("XADD s 10-1 a 11"),
        C("XADD s 11-1 a 12"),
        C("XADD s 12-1 a 13"),
        C("XREADGROUP GROUP g dave STREAMS s >"),
        C("XINFO STREAM s FULL"),
        C("XINFO STREAM s FULL COUNT -7"),
        C("XINFO STREAM s FULL COUNT 0"),
        C("XINFO STREAM s FULL COUNT 3"),
        // Emptied by XTRIM (which does not move max-deleted-entry-id), by XDEL (which
        // does), and made empty by MKSTREAM.
        C("XTRIM s MAXLEN 0"),
        C("XINFO STREAM s"),
        C("XINFO GROUPS s"),
        C("XADD t 1-1 a 1"),
        C("XADD t 2-1 a 1"),
        C("XDEL t 1-1"),
        C("XINFO STREAM t"),
        C("XDEL t 2-1"),
        C("XINFO STREAM t"),
        C("XADD u MAXLEN 0 1-1 a 1"),
        C("XINFO STREAM u"),
        C("XGROUP CREATE m g $ MKSTREAM"),
        C("XINFO STREAM m"),
        C("XINFO STREAM m FULL"),
        C("XINFO GROUPS m"),
    ]);
}

/// `entries-read` and `lag` through reads, deletions and SETID, as Redis 7.0 computes them
/// (including its counting of reads past a deleted entry).
#[test]
fn lag_and_entries_read_match_redis() {
    lockstep(&[
        C("FLUSHALL"),
        C("XADD s 1-1 a 1"),
        C("XADD s 2-1 a 1"),
        C("XADD s 3-1 a 1"),
        C("XADD s 4-1 a 1"),
        C("XGROUP CREATE s g0 0"),
        C("XGROUP CREATE s gd $"),
        C("XGROUP CREATE s g2 2-1"),
        C("XGROUP CREATE s g0b 0-0 ENTRIESREAD 0"),
        C("XGROUP CREATE s g100 $ ENTRIESREAD 100"),
        C("XINFO GROUPS s"),
        C("XREADGROUP GROUP g0 c COUNT 1 STREAMS s >"),
        C("XREADGROUP GROUP g2 c COUNT 1 STREAMS s >"),
        C("XINFO GROUPS s"),
        C("XDEL s 3-1"),
        C("XINFO GROUPS s"),
        C("XREADGROUP GROUP g0 c COUNT 1 STREAMS s >"),
        C("XINFO GROUPS s"),
        C("XREADGROUP GROUP g0 c COUNT 1 STREAMS s >"),
        C("XINFO GROUPS s"),
        C("XDEL s 1-1"),
        C("XINFO GROUPS s"),
        C("XADD s 5-1 a 1"),
        C("XINFO GROUPS s"),
        C("XGROUP SETID s g2 0 ENTRIESREAD 3"),
        C("XINFO GROUPS s"),
        C("XGROUP SETID s g2 $"),
        C("XINFO GROUPS s"),
        C("XGROUP SETID s g2 9-9"),
        C("XINFO GROUPS s"),
        C("XINFO STREAM s FULL"),
        // A read past a deleted entry counts as one more in Redis 7.0.
        C("XADD r 1-1 a 1"),
        C("XADD r 2-1 a 1"),
        C("XADD r 3-1 a 1"),
        C("XADD r 4-1 a 1"),
        C("XGROUP CREATE r g 0"),
        C("XREADGROUP GROUP g c COUNT 1 STREAMS r >"),
        C("XDEL r 2-1"),
        C("XREADGROUP GROUP g c COUNT 1 STREAMS r >"),
        C("XINFO GROUPS r"),
        C("XREADGROUP GROUP g c COUNT 1 STREAMS r >"),
        C("XINFO GROUPS r"),
        C("XCLAIM r g c 0 1-1 LASTID 99-0"),
        C("XINFO GROUPS r"),
        C("XTRIM r MAXLEN 1"),
        C("XINFO GROUPS r"),
        C("XSETID r 100-0"),
        C("XINFO GROUPS r"),
        // Emptied streams and counters set by ENTRIESREAD: Redis 7.0 trusts a counter while
        // no deleted entry lies after the group, even above what was ever added.
        C("XADD e 1-1 a 1"),
        C("XADD e 2-1 a 1"),
        C("XADD e 3-1 a 1"),
        C("XGROUP CREATE e g 0"),
        C("XGROUP CREATE e h 0 ENTRIESREAD 7"),
        C("XREADGROUP GROUP g c COUNT 1 STREAMS e >"),
        C("XDEL e 1-1 2-1 3-1"),
        C("XINFO GROUPS e"),
        C("XADD t 5-1 a 1"),
        C("XGROUP CREATE t g 0 ENTRIESREAD 3"),
        C("XGROUP CREATE t h 0"),
        C("XINFO GROUPS t"),
        C("XADD u 1-1 a 1"),
        C("XADD u 2-1 a 1"),
        C("XADD u 3-1 a 1"),
        C("XDEL u 1-1"),
        C("XGROUP CREATE u g 0 ENTRIESREAD 1"),
        C("XGROUP CREATE u h 0"),
        C("XINFO GROUPS u"),
        C("XTRIM u MAXLEN 0"),
        C("XINFO GROUPS u"),
        C("XADD u 4-1 a 1"),
        C("XREADGROUP GROUP h c STREAMS u >"),
        C("XINFO GROUPS u"),
        // Groups left at deleted ids before the first entry.
        C("XADD w 1-1 a 1"),
        C("XADD w 2-1 a 1"),
        C("XADD w 3-1 a 1"),
        C("XADD w 4-1 a 1"),
        C("XADD w 5-1 a 1"),
        C("XADD w 6-1 a 1"),
        C("XGROUP CREATE w g 1-1"),
        C("XGROUP CREATE w h 0-5"),
        C("XDEL w 1-1 2-1 3-1 4-1"),
        C("XINFO GROUPS w"),
        C("XREADGROUP GROUP g c COUNT 1 STREAMS w >"),
        C("XINFO GROUPS w"),
        C("XDEL w 6-1"),
        C("XINFO GROUPS w"),
        C("XREADGROUP GROUP h c STREAMS w >"),
        C("XINFO GROUPS w"),
    ]);
}

/// RESP3: XREADGROUP's reply is a map of streams; XINFO's replies are maps.
#[test]
fn resp3_replies_match_redis() {
    lockstep(&[
        C("FLUSHALL"),
        Q("HELLO 3"),
        C("XADD s 1-1 a 1"),
        C("XADD s 2-1 b 2"),
        C("XADD t 1-1 c 3"),
        C("XGROUP CREATE s g 0"),
        C("XGROUP CREATE t g 0"),
        C("XREADGROUP GROUP g c STREAMS s t > >"),
        C("XREADGROUP GROUP g c STREAMS s t > >"),
        C("XREADGROUP GROUP g c STREAMS s s 0 0"),
        C("XDEL s 2-1"),
        C("XREADGROUP GROUP g c STREAMS s 0"),
        C("XINFO STREAM s"),
        C("XINFO STREAM s FULL"),
        C("XINFO STREAM t FULL"),
        C("XINFO GROUPS s"),
        C("XINFO CONSUMERS s g"),
        C("XPENDING s g"),
        P("XPENDING s g - + 10"),
        C("XAUTOCLAIM s g d 0 0"),
        C("XCLAIM t g d 0 1-1"),
        C("XGROUP HELP"),
        C("XINFO HELP"),
        C("XINFO STREAM nokey"),
        C("XREADGROUP GROUP g c STREAMS s >"),
        C("XGROUP CREATE e g $ MKSTREAM"),
        C("XINFO STREAM e"),
        Q("HELLO 2"),
        C("XINFO STREAM e"),
    ]);
}

/// A group's life with deletions: pending entries deleted from the stream show as
/// `[id, nil]` in history reads, are dropped by XCLAIM and XAUTOCLAIM (the latter lists
/// them), and DELCONSUMER drops what is left.
#[test]
fn a_group_lifecycle_with_deletes_matches_redis() {
    lockstep(&[
        C("FLUSHALL"),
        C("XGROUP CREATE q workers $ MKSTREAM"),
        C("XADD q 1-1 job a"),
        C("XADD q 2-1 job b"),
        C("XADD q 3-1 job c"),
        C("XADD q 4-1 job d"),
        C("XADD q 5-1 job e"),
        C("XADD q 6-1 job f"),
        C("XREADGROUP GROUP workers w1 COUNT 3 STREAMS q >"),
        C("XREADGROUP GROUP workers w2 STREAMS q >"),
        C("XACK q workers 1-1"),
        C("XDEL q 2-1 4-1 5-1"),
        C("XREADGROUP GROUP workers w1 STREAMS q 0"),
        C("XREADGROUP GROUP workers w2 STREAMS q 0"),
        C("XREADGROUP GROUP workers w2 COUNT 1 STREAMS q 0"),
        C("XPENDING q workers"),
        P("XPENDING q workers - + 10"),
        C("XINFO GROUPS q"),
        // XCLAIM drops a deleted entry from the pending list and claims the rest.
        C("XCLAIM q workers w3 0 2-1 3-1"),
        C("XPENDING q workers"),
        // XAUTOCLAIM: deleted entries use up COUNT and are listed last.
        C("XAUTOCLAIM q workers w3 0 0 COUNT 1"),
        C("XAUTOCLAIM q workers w3 0 0 COUNT 1 JUSTID"),
        C("XAUTOCLAIM q workers w3 0 -"),
        C("XPENDING q workers"),
        C("XINFO CONSUMERS q workers"),
        C("XREADGROUP GROUP workers w3 STREAMS q 0"),
        C("XADD q 7-1 job g"),
        C("XREADGROUP GROUP workers w1 STREAMS q >"),
        C("XDEL q 7-1"),
        C("XGROUP DELCONSUMER q workers w1"),
        C("XGROUP DELCONSUMER q workers w3"),
        C("XPENDING q workers"),
        C("XINFO CONSUMERS q workers"),
        C("XINFO STREAM q FULL"),
        C("XGROUP DESTROY q workers"),
        C("XINFO STREAM q"),
        C("XREADGROUP GROUP workers w1 STREAMS q >"),
        C("XLEN q"),
    ]);
}

/// Long pending lists (read a page at a time): one consumer's history among another's,
/// XPENDING's ranges and counts, XAUTOCLAIM's cursor, across many entries.
#[test]
fn long_pending_lists_match_redis() {
    let redis = require_redis(&[]);
    let docdb = docdb(&[]);
    let (mut want_client, mut got_client) = (redis.client(), docdb.client());
    let mut script: Vec<(String, At)> = vec![
        ("FLUSHALL".into(), At::Plain),
        ("XGROUP CREATE s g $ MKSTREAM".into(), At::Plain),
    ];
    for i in 1..=700 {
        script.push((format!("XADD s {i}-1 n {i}"), At::Plain));
    }
    // c1 takes nine entries for each one c2 takes.
    for i in 0..70 {
        script.push((
            "XREADGROUP GROUP g c1 COUNT 9 STREAMS s >".into(),
            At::Plain,
        ));
        if i % 2 == 0 {
            script.push((
                "XREADGROUP GROUP g c2 COUNT 1 STREAMS s >".into(),
                At::Plain,
            ));
        } else {
            script.push((
                "XREADGROUP GROUP g c2 COUNT 1 NOACK STREAMS s >".into(),
                At::Plain,
            ));
        }
    }
    for command in [
        "XREADGROUP GROUP g c2 COUNT 5 STREAMS s 0",
        "XREADGROUP GROUP g c2 COUNT 5 STREAMS s 250",
        "XREADGROUP GROUP g c2 STREAMS s 0",
        "XREADGROUP GROUP g c2 COUNT 3 STREAMS s 690",
        "XPENDING s g",
        "XACK s g 10-1 20-1 30-1 40-1",
        "XDEL s 50-1 100-1 150-1 257-1 258-1",
        "XREADGROUP GROUP g c1 COUNT 300 STREAMS s 0",
        "XREADGROUP GROUP g c2 STREAMS s 0",
        "XINFO CONSUMERS s g",
        "XINFO GROUPS s",
        "XAUTOCLAIM s g c3 0 0 COUNT 30 JUSTID",
        "XAUTOCLAIM s g c3 0 200 COUNT 100 JUSTID",
        "XGROUP DELCONSUMER s g c2",
        "XPENDING s g",
        "XINFO STREAM s",
    ] {
        script.push((command.into(), At::Plain));
    }
    for command in [
        "XPENDING s g - + 1000",
        "XPENDING s g - + 600 c1",
        "XPENDING s g (250 + 7 c1",
        "XPENDING s g 100 300 400",
        "XPENDING s g IDLE 0 - + 5 c3",
    ] {
        script.push((command.into(), At::Rows));
    }
    script.push(("XINFO STREAM s FULL COUNT 0".into(), At::Plain));
    let mut failures = Vec::new();
    for (i, (command, at)) in script.iter().enumerate() {
        let want = call(&mut want_client, "redis", command);
        let got = call(&mut got_client, "docdb", command);
        if !agree(&want, &got, *at) {
            let cut = |frame: &Frame| render(frame).chars().take(600).collect::<String>();
            failures.push(format!(
                "[{i}] {command}\n  redis: {}\n  docdb: {}",
                cut(&want),
                cut(&got)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------
// Random sequences: the read counters and lag through any mix of writes.

/// A random command on two streams and two groups: ids from a small range so that reads,
/// claims, acknowledgements and deletions hit and miss.
fn random_command(rng: &mut Rng, top: &mut u64, step: usize) -> Vec<String> {
    let key = rng.pick(&["s", "t"]).to_string();
    let group = rng.pick(&["g", "h"]).to_string();
    let consumer = rng.pick(&["c1", "c2", "c3"]).to_string();
    let top_now = *top;
    let id = |rng: &mut Rng| format!("{}-{}", rng.below(top_now + 2), rng.below(3));
    let mut cmd: Vec<String> = Vec::new();
    let mut push = |words: &[&str]| cmd.extend(words.iter().map(|w| w.to_string()));
    match rng.below(100) {
        0..25 => {
            *top += rng.below(3);
            push(&["XADD", &key]);
            if rng.chance(10) {
                push(&["MAXLEN", &rng.below(4).to_string()]);
            }
            push(&[
                &format!("{}-{}", *top, rng.below(4)),
                "f",
                &step.to_string(),
            ]);
        }
        25..35 => {
            push(&["XDEL", &key]);
            for _ in 0..=rng.below(3) {
                push(&[&id(rng)]);
            }
        }
        35..38 => push(&["XTRIM", &key, "MAXLEN", &rng.below(5).to_string()]),
        38..50 => {
            let create = rng.chance(60);
            let at = match rng.below(3) {
                0 => "0".to_string(),
                1 => "$".to_string(),
                _ => id(rng),
            };
            push(&[
                "XGROUP",
                if create { "CREATE" } else { "SETID" },
                &key,
                &group,
                &at,
            ]);
            if rng.chance(30) {
                push(&["ENTRIESREAD", &(rng.below(8) as i64 - 1).to_string()]);
            }
            if create && rng.chance(30) {
                push(&["MKSTREAM"]);
            }
        }
        50..65 => {
            push(&["XREADGROUP", "GROUP", &group, &consumer]);
            if rng.chance(50) {
                push(&["COUNT", &rng.below(4).to_string()]);
            }
            if rng.chance(10) {
                push(&["NOACK"]);
            }
            let from = if rng.chance(70) {
                ">".to_string()
            } else {
                id(rng)
            };
            push(&["STREAMS", &key, &from]);
        }
        65..70 => {
            push(&["XACK", &key, &group]);
            for _ in 0..=rng.below(3) {
                push(&[&id(rng)]);
            }
        }
        70..75 => {
            push(&["XCLAIM", &key, &group, &consumer, "0"]);
            for _ in 0..=rng.below(3) {
                push(&[&id(rng)]);
            }
            match rng.below(4) {
                0 => push(&["JUSTID"]),
                1 => push(&["FORCE"]),
                2 => push(&["LASTID", &id(rng)]),
                _ => {}
            }
        }
        75..80 => {
            let start = if rng.chance(50) {
                "-".to_string()
            } else {
                id(rng)
            };
            push(&["XAUTOCLAIM", &key, &group, &consumer, "0", &start]);
            if rng.chance(50) {
                push(&["COUNT", &(1 + rng.below(2)).to_string()]);
            }
            if rng.chance(30) {
                push(&["JUSTID"]);
            }
        }
        80..86 => push(&["XINFO", "GROUPS", &key]),
        86..89 => push(&["XINFO", "STREAM", &key, "FULL"]),
        89..92 => push(&["XPENDING", &key, &group]),
        92..94 => push(&["XGROUP", "DELCONSUMER", &key, &group, &consumer]),
        94..95 => push(&["XGROUP", "DESTROY", &key, &group]),
        95..97 => push(&["XSETID", &key, &format!("{}-0", *top + rng.below(3))]),
        _ => push(&["XINFO", "CONSUMERS", &key, &group]),
    }
    cmd
}

/// Random sequences on both servers (`DOCDB_STREAM_GROUPS_SEED` replays one; each run
/// prints its seed). On a difference, the commands before it are shown.
#[test]
fn random_sequences_match_redis() {
    let seed = Rng::seed_from_env("DOCDB_STREAM_GROUPS_SEED");
    eprintln!("DOCDB_STREAM_GROUPS_SEED={seed}");
    let mut rng = Rng::new(seed);
    let redis = require_redis(&[]);
    let docdb = docdb(&[]);
    let (mut want_client, mut got_client) = (redis.client(), docdb.client());
    let mut top = 1;
    let mut history: Vec<String> = Vec::new();
    for step in 0..3000 {
        let cmd = random_command(&mut rng, &mut top, step);
        let text = cmd.join(" ");
        let want = want_client.call(&cmd).expect("redis");
        let got = got_client.call(&cmd).expect("docdb");
        history.push(text.clone());
        assert!(
            agree(&want, &got, At::Plain),
            "seed {seed}, step {step}: {text}\n  redis: {}\n  docdb: {}\nbefore it:\n  {}",
            render(&want),
            render(&got),
            history[history.len().saturating_sub(20)..].join("\n  ")
        );
    }
}

// ---------------------------------------------------------------------------------------
// Blocking: several connections, the same script on both servers.

#[derive(Clone, Copy)]
enum Act {
    /// Sends a request on connection `.0` without reading its reply.
    Send(usize, &'static str),
    /// Reads connection `.0`'s next reply.
    Reply(usize),
    /// Sends a request on connection `.0` and reads its reply.
    Call(usize, &'static str),
    /// Sends a request on connection `.0` and reads its reply without recording it.
    Quiet(usize, &'static str),
    /// Expects no reply on connection `.0` for a moment: it is blocked.
    Blocked(usize),
}

use Act::{Blocked, Call, Quiet, Reply, Send};

/// Runs `script` on `server` over fresh connections: one (label, reply) per step.
fn transcript(server: &Server, script: &[Act]) -> Vec<(String, Option<Frame>)> {
    let connections = script
        .iter()
        .map(|act| match *act {
            Send(c, _) | Reply(c) | Call(c, _) | Quiet(c, _) | Blocked(c) => c + 1,
        })
        .max()
        .unwrap_or(0);
    let mut clients: Vec<RespClient> = (0..connections).map(|_| server.client()).collect();
    let reply = |client: &mut RespClient, wait: Duration| {
        client
            .reply_within(wait)
            .unwrap_or_else(|e| panic!("{}: read: {e}", server.name))
    };
    let mut lines = Vec::new();
    for (i, act) in script.iter().enumerate() {
        let line = match *act {
            Send(c, request) => {
                clients[c].send(&words(request)).expect("send");
                // Let it arrive (and block) before the next connection's request.
                std::thread::sleep(Duration::from_millis(50));
                (format!("[{i}] {c}> {request}"), None)
            }
            Call(c, request) => {
                clients[c].send(&words(request)).expect("send");
                (
                    format!("[{i}] {c}> {request}"),
                    reply(&mut clients[c], REPLY),
                )
            }
            Quiet(c, request) => {
                clients[c].send(&words(request)).expect("send");
                reply(&mut clients[c], REPLY);
                continue;
            }
            Reply(c) => (format!("[{i}] {c}<"), reply(&mut clients[c], REPLY)),
            Blocked(c) => (
                format!("[{i}] {c}< (blocked?)"),
                reply(&mut clients[c], QUIET),
            ),
        };
        lines.push(line);
    }
    lines
}

fn show(lines: &[(String, Option<Frame>)]) -> String {
    lines
        .iter()
        .map(|(label, reply)| match reply {
            Some(frame) => format!("{label} -> {}", render(frame)),
            None => label.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n    ")
}

/// Runs every script on Redis and on docdb (FLUSHALL before each) and compares.
fn check_scripts(scripts: &[(&str, &[Act])]) {
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
        let (want, got) = (&results[0], &results[1]);
        let same = want.len() == got.len()
            && want.iter().zip(got).all(|((wl, wr), (gl, gr))| {
                wl == gl
                    && match (wr, gr) {
                        (Some(w), Some(g)) => agree(w, g, At::Plain),
                        (None, None) => true,
                        _ => false,
                    }
            });
        if !same {
            failures.push(format!(
                "script {name}:\n  redis:\n    {}\n  docdb:\n    {}",
                show(want),
                show(got)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn blocked_xreadgroup_is_served_as_redis_serves_it() {
    check_scripts(&[
        (
            "served by another client's XADD",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Blocked(1),
                Call(0, "XINFO CONSUMERS s g"),
                Call(0, "XADD s 1-1 a 1"),
                Reply(1),
                Call(0, "XPENDING s g"),
                Call(0, "XINFO GROUPS s"),
                Call(0, "XINFO CONSUMERS s g"),
            ],
        ),
        (
            "first blocked, first served; COUNT and NOACK kept",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g a COUNT 1 BLOCK 0 STREAMS s >"),
                Send(2, "XREADGROUP GROUP g b NOACK BLOCK 0 STREAMS s >"),
                Blocked(1),
                Blocked(2),
                Call(0, "XADD s 1-1 a 1"),
                Reply(1),
                Blocked(2),
                Call(0, "MULTI"),
                Call(0, "XADD s 2-1 b 2"),
                Call(0, "XADD s 3-1 c 3"),
                Call(0, "EXEC"),
                Reply(2),
                Call(0, "XPENDING s g"),
                Call(0, "XINFO GROUPS s"),
            ],
        ),
        (
            "several streams: the one written is served",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Call(0, "XGROUP CREATE t g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s t > >"),
                Blocked(1),
                Call(0, "XADD t 1-1 a 1"),
                Reply(1),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s t > >"),
                Call(0, "XADD s 1-1 a 1"),
                Reply(1),
            ],
        ),
        (
            "a timeout, and an answer at once when there is something",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Call(1, "XREADGROUP GROUP g c BLOCK 100 STREAMS s >"),
                Call(0, "XINFO CONSUMERS s g"),
                Call(0, "XADD s 1-1 a 1"),
                Call(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s 0"),
                Call(0, "MULTI"),
                Call(0, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "EXEC"),
            ],
        ),
        (
            "the group destroyed, the key deleted or replaced",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "XGROUP DESTROY s g"),
                Reply(1),
                Call(0, "XGROUP CREATE s g $"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "DEL s"),
                Reply(1),
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "SET s x"),
                Reply(1),
                Call(0, "DEL s"),
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "MULTI"),
                Call(0, "DEL s"),
                Call(0, "XADD s 1-1 a 1"),
                Call(0, "EXEC"),
                Reply(1),
                Call(0, "XGROUP CREATE t g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s t > >"),
                Call(0, "RENAME t u"),
                Reply(1),
            ],
        ),
        (
            "a flush ends an XREADGROUP's wait and leaves a pop's",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Send(2, "BLPOP l 0"),
                Call(0, "FLUSHDB"),
                Reply(1),
                Blocked(2),
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "FLUSHALL"),
                Reply(1),
                Blocked(2),
                Call(0, "RPUSH l x"),
                Reply(2),
            ],
        ),
        (
            // Send waits 50 ms and Blocked 250 ms: the key lapses after both, while Reply
            // waits (Redis's active expiry deletes it; docdb's 100 ms check notices).
            "a lapsed stream ends an XREADGROUP's wait and leaves XREAD's",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Call(0, "PEXPIRE s 600"),
                Call(0, "XADD t 1-1 a 1"),
                Call(0, "PEXPIRE t 600"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Send(2, "XREAD BLOCK 1500 STREAMS t $"),
                Blocked(1),
                Reply(1),
                Reply(2),
                // Only after XREAD's own timeout: both keys lapse within a millisecond
                // of each other, so an EXISTS between the two replies races them.
                Call(0, "EXISTS s t"),
            ],
        ),
        (
            "an XADD that leaves nothing to deliver still serves",
            &[
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "XADD s MAXLEN 0 1-1 a 1"),
                Reply(1),
                Call(0, "XINFO GROUPS s"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Call(0, "MULTI"),
                Call(0, "XADD s 2-1 a 1"),
                Call(0, "XDEL s 2-1"),
                Call(0, "EXEC"),
                Reply(1),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                // Writes that add nothing leave it blocked, even one that moves the group
                // back before entries it could now read.
                Call(0, "XSETID s 9-9"),
                Call(0, "XACK s g 1-1"),
                Call(0, "XGROUP CREATECONSUMER s g d"),
                Call(0, "XADD s 10-1 a 1"),
                Reply(1),
                Send(1, "XREADGROUP GROUP g c COUNT 1 BLOCK 0 STREAMS s >"),
                Call(0, "XGROUP SETID s g 0"),
                Blocked(1),
                Call(0, "XADD s 11-1 a 1"),
                Reply(1),
            ],
        ),
        (
            "RESP3: the served reply is a map",
            &[
                Quiet(1, "HELLO 3"),
                Call(0, "XGROUP CREATE s g $ MKSTREAM"),
                Send(1, "XREADGROUP GROUP g c BLOCK 0 STREAMS s >"),
                Blocked(1),
                Call(0, "XADD s 1-1 a 1"),
                Reply(1),
                Call(1, "XREADGROUP GROUP g c BLOCK 100 STREAMS s >"),
            ],
        ),
    ]);
}
