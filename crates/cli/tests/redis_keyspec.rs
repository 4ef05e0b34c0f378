//! Where commands' keys are, against a real `redis-server`: COMMAND INFO's first, last and
//! step for every command both servers know, and COMMAND GETKEYS for requests of every
//! kind of key layout (ranges, steps, key counts, STORE options, subcommands), errors
//! included. Client-side caching tracks and invalidates exactly these keys.

mod common_redis;

use common_redis::{Frame, RespClient, docdb, render, require_redis};

fn call(client: &mut RespClient, args: &[&str]) -> Frame {
    client.call(args).expect("a reply")
}

fn names(client: &mut RespClient) -> Vec<String> {
    match call(client, &["COMMAND", "LIST"]) {
        Frame::Array(items) => items
            .iter()
            .map(|f| match f {
                Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("COMMAND LIST item {}", render(other)),
            })
            .collect(),
        other => panic!("COMMAND LIST gave {}", render(&other)),
    }
}

/// COMMAND INFO's key positions (its fourth to sixth fields) for `name`, if known.
fn key_range(client: &mut RespClient, name: &str) -> Option<Vec<Frame>> {
    match call(client, &["COMMAND", "INFO", name]) {
        Frame::Array(infos) => match infos.into_iter().next() {
            Some(Frame::Array(info)) => Some(info.into_iter().skip(3).take(3).collect()),
            _ => None,
        },
        other => panic!("COMMAND INFO gave {}", render(&other)),
    }
}

#[test]
fn command_info_key_positions_match_redis() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    let mut compared = 0;
    for name in names(&mut d) {
        let Some(want) = key_range(&mut r, &name) else {
            continue; // docdb's own commands (TSADD, DOCDB.ASOF, ...)
        };
        let got = key_range(&mut d, &name).expect("docdb knows its own command");
        assert_eq!(
            got.iter().map(render).collect::<Vec<_>>(),
            want.iter().map(render).collect::<Vec<_>>(),
            "COMMAND INFO {name}: first, last, step (redis on the right)"
        );
        compared += 1;
    }
    assert!(compared > 200, "only {compared} commands compared");
}

#[test]
fn command_getkeys_matches_redis() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    let requests: &[&[&str]] = &[
        &["GET", "a"],
        &["SET", "a", "1", "EX", "10"],
        &["MGET", "a", "b", "c"],
        &["MSET", "a", "1", "b", "2"],
        &["MSET", "a", "1", "b"],
        &["DEL", "a", "b"],
        &["BLPOP", "a", "b", "0"],
        &["BZPOPMIN", "z1", "z2", "1"],
        &["BITOP", "AND", "d", "a", "b"],
        &["LMOVE", "s", "d", "LEFT", "RIGHT"],
        &["HSET", "h", "f", "v"],
        &["EVAL", "return 1", "2", "k1", "k2", "a"],
        &["EVAL", "return 1", "0"],
        &["EVAL", "return 1", "5", "k"],
        &["EVAL", "return 1", "x", "k"],
        &["EVAL_RO", "return 1", "1", "k"],
        &["FCALL", "f", "1", "k"],
        &["LMPOP", "2", "a", "b", "LEFT"],
        &["LMPOP", "-1", "a", "LEFT"],
        &["BLMPOP", "0", "2", "a", "b", "LEFT"],
        &["ZMPOP", "1", "z", "MIN"],
        &["SINTERCARD", "2", "a", "b", "LIMIT", "1"],
        &["ZINTER", "0", "a"],
        &["ZUNION", "2", "a", "b", "WITHSCORES"],
        &["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"],
        &["ZUNIONSTORE", "d", "3", "a", "b"],
        &["ZDIFFSTORE", "d", "0", "a"],
        &["SORT", "k", "BY", "w", "GET", "x", "STORE", "d"],
        &["SORT", "k", "LIMIT", "0", "1", "STORE", "d1", "STORE", "d2"],
        &["SORT", "k", "STORE"],
        &["SORT_RO", "k", "BY", "w"],
        &[
            "GEORADIUS",
            "k",
            "1",
            "2",
            "3",
            "km",
            "STORE",
            "d",
            "STOREDIST",
            "e",
        ],
        &["GEORADIUSBYMEMBER", "k", "m", "1", "km", "STORE"],
        &[
            "GEOSEARCHSTORE",
            "d",
            "s",
            "FROMMEMBER",
            "m",
            "BYRADIUS",
            "1",
            "km",
        ],
        &["OBJECT", "ENCODING", "k"],
        &["MEMORY", "USAGE", "k"],
        &["PING", "x"],
        &["CLIENT", "LIST"],
        &["NOSUCH", "a"],
        &["GET", "a", "b"],
        &["SET", "a"],
        &["LMPOP", "2", "a"],
    ];
    for request in requests {
        let mut args = vec!["COMMAND", "GETKEYS"];
        args.extend_from_slice(request);
        let want = render(&call(&mut r, &args));
        let got = render(&call(&mut d, &args));
        assert_eq!(
            got, want,
            "COMMAND GETKEYS {request:?} (redis on the right)"
        );
    }
    for short in [&["COMMAND", "GETKEYS"][..], &["COMMAND", "GETKEYS", "GET"]] {
        assert_eq!(render(&call(&mut d, short)), render(&call(&mut r, short)));
    }
}
