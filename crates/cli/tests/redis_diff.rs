//! Differential test of `docdb serve` against a real `redis-server`: the same random command
//! sequences go to both, and every reply must match (set-valued replies as sets, TTLs within
//! a tolerance, everything else byte for byte, floats included).
//!
//! Sequences use a small key universe so that types collide and the WRONGTYPE paths run.
//! `DOCDB_DIFF_SEED` replays one seed; `DOCDB_DIFF_OPS` sets the commands per seed (default
//! 2000). A failure lists the seed, the step index, the command, both replies and the
//! commands just before it; `DOCDB_DIFF_TRACE=<key>` also prints, to stderr, every command
//! naming that key (and every FLUSH) with both replies, to follow a key's history (a passing
//! test shows it with `-- --nocapture`).

mod common_redis;

use std::collections::VecDeque;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common_redis::{Frame, RespClient, docdb, encode_command, render, require_redis};

/// `DOCDB_DIFF_TRACE`: the key whose commands are printed (read once).
static TRACE_KEY: std::sync::LazyLock<Option<String>> =
    std::sync::LazyLock::new(|| std::env::var("DOCDB_DIFF_TRACE").ok());
use engine::Rng;

// ---------------------------------------------------------------------------------------
// Random numbers: `engine::Rng`, so a seed replays exactly.

// ---------------------------------------------------------------------------------------
// The command universe.

/// How two replies are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    /// Byte for byte.
    Exact,
    /// Arrays as multisets (SMEMBERS, KEYS, HKEYS, HVALS).
    Unordered,
    /// Arrays of field/value pairs as sets of pairs (HGETALL).
    Pairs,
    /// Non-negative integers within this distance (TTL, PTTL); negatives exactly.
    Within(i64),
}

/// Commands that need more than one request/reply exchange.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Special {
    None,
    /// SPOP without a count: any member may come out; the runner then aligns the two
    /// servers' sets.
    SpopOne,
    /// A SCAN-family command iterated until the cursor returns to 0; the collected elements
    /// are compared as a set.
    ScanAll,
}

struct Op {
    args: Vec<String>,
    cmp: Cmp,
    special: Special,
}

impl Op {
    fn new(args: Vec<String>, cmp: Cmp) -> Op {
        Op {
            args,
            cmp,
            special: Special::None,
        }
    }

    fn text(&self) -> String {
        self.args
            .iter()
            .map(|a| quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Builds an argument vector from words.
macro_rules! args {
    ($($a:expr),* $(,)?) => { vec![$(String::from($a)),*] };
}

const STRINGS: &[&str] = &["s1", "s2", "n1"];
const HASHES: &[&str] = &["h1", "h2"];
const SETS: &[&str] = &["set1", "set2"];
const ZSETS: &[&str] = &["z1", "z2"];
const LISTS: &[&str] = &["l1", "l2"];
/// Bitmaps: keys the bit commands mostly write, and a string the string commands write.
const BITMAPS: &[&str] = &["b1", "b2", "s1"];
const ALL_KEYS: &[&str] = &[
    "s1", "s2", "n1", "h1", "h2", "set1", "set2", "z1", "z2", "l1", "l2", "b1", "b2", "missing",
    "hll1", "hll2", "hll3", "g1", "g2",
];

const VALUES: &[&str] = &[
    "",
    "v",
    "hello",
    "0",
    "1",
    "-1",
    "10",
    "42",
    "3.5",
    "-0.25",
    "1e3",
    "9223372036854775807",
    "-9223372036854775808",
    "a b",
    "x\r\ny",
    " 7",
    "\u{e9}t\u{e9}",
];
const INCREMENTS: &[&str] = &[
    "1",
    "-1",
    "5",
    "-7",
    "100",
    "0",
    "9223372036854775807",
    "-9223372036854775808",
    "x",
    "1.5",
    "",
];
const FLOATS: &[&str] = &[
    "0.1", "1.5", "-2", "1e3", "3", "0", "-0.1", "abc", "2.5e-3", "inf", "10.25", "1e-5",
];
const SCORES: &[&str] = &[
    "0", "1", "-1", "1.5", "0.1", "2.5e1", "-inf", "+inf", "3", "7", "abc", "nan", "-0.3", "1e20",
    "0x10", "1e400", "4e-320",
];
const SCORE_BOUNDS: &[&str] = &[
    "-inf", "+inf", "0", "1", "(1", "(0", "1.5", "5", "(5", "abc", "(-inf", "3",
];
const MEMBERS: &[&str] = &["m0", "m1", "m2", "m3", "m4"];
/// A sorted set whose members all score 0: only lex commands and ZADD 0 touch it, since
/// Redis leaves lex ranges over mixed scores unspecified.
const LEX_ZSET: &str = "lz";
const LEX_BOUNDS: &[&str] = &[
    "-", "+", "[m1", "(m1", "[m3", "(m4", "[m", "(", "m2", "[", "+x",
];
const FIELDS: &[&str] = &["f0", "f1", "f2", "f3"];
const LIST_VALUES: &[&str] = &["a", "b", "c", "1"];
const PATTERNS: &[&str] = &[
    "*", "s*", "h?", "*1", "[hz]*", "set[12]", "nomatch*", "*e*", "?", "[^s]*",
];
const INDEXES: &[&str] = &["0", "1", "2", "-1", "-2", "-5", "3", "10", "x"];

/// A key of the preferred pool, or (10%) any key, so types collide.
fn key(rng: &mut Rng, pool: &[&str]) -> String {
    if rng.chance(10) {
        rng.pick(ALL_KEYS).to_string()
    } else {
        rng.pick(pool).to_string()
    }
}

/// One random command. `now` (Unix seconds) anchors absolute expiry times in the future.
fn random_op(rng: &mut Rng, now: u64) -> Op {
    match rng.below(131) {
        0..=19 => string_op(rng),
        20..=33 => key_op(rng, now),
        34..=48 => hash_op(rng),
        49..=60 => set_op(rng),
        61..=76 => zset_op(rng),
        77..=94 => list_op(rng),
        95..=99 => misc_op(rng),
        100..=109 => bit_op(rng),
        110..=117 => hll_op(rng),
        118..=125 => geo_op(rng),
        _ => script_op(rng),
    }
}

/// Lua scripts a client would send (read-modify-write helpers, counters, lock release),
/// over keys of every type, so that their `redis.call` errors (WRONGTYPE, not an integer)
/// and `redis.pcall` error tables are compared too.
const SCRIPTS: &[&str] = &[
    "return redis.call('get', KEYS[1])",
    "return redis.call('incrby', KEYS[1], ARGV[1])",
    "return redis.pcall('incrby', KEYS[1], ARGV[1])",
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
    "local v = redis.call('get', KEYS[1]); if v then return redis.call('set', KEYS[1], v .. ARGV[1]) end return false",
    "return redis.call('hset', KEYS[1], 'f0', ARGV[1])",
    "return redis.call('hget', KEYS[1], 'f0')",
    "return redis.pcall('lpush', KEYS[1], ARGV[1])",
    "return redis.call('lrange', KEYS[1], 0, -1)",
    "return {redis.call('exists', KEYS[1]), redis.call('type', KEYS[1]).ok}",
    "local n = redis.call('zadd', KEYS[1], ARGV[1], 'm0'); return {n, redis.call('zscore', KEYS[1], 'm0')}",
    "return redis.call('expire', KEYS[1], 100)",
    "return tonumber(ARGV[1]) and tonumber(ARGV[1]) * 2 or ARGV[1]",
    "return redis.call('sadd', KEYS[1], ARGV[1])",
    "return redis.call('scard', KEYS[1])",
];

fn script_op(rng: &mut Rng) -> Op {
    let body = *rng.pick(SCRIPTS);
    let k = key(rng, ALL_KEYS);
    let pool = if rng.chance(50) { VALUES } else { INCREMENTS };
    let v = *rng.pick(pool);
    if rng.chance(15) {
        return function_op(rng, k, v);
    }
    if rng.chance(25) {
        // By SHA-1 (the same body's EVAL or SCRIPT LOAD may not have run yet: NOSCRIPT).
        let sha = sha1_hex(body.as_bytes());
        return Op::new(args!["EVALSHA", sha, "1", k, v], Cmp::Exact);
    }
    if rng.chance(10) {
        return Op::new(args!["SCRIPT", "LOAD", body], Cmp::Exact);
    }
    let name = if rng.chance(10) { "EVAL_RO" } else { "EVAL" };
    Op::new(args![name, body, "1", k, v], Cmp::Exact)
}

/// A library of functions the generator loads and calls (FCALL after its FUNCTION LOAD, or
/// before it: "Function not found").
const LIBRARY: &str = "#!lua name=gen\n\
    redis.register_function('gen_get', function(keys, args) return redis.call('get', keys[1]) end)\n\
    redis.register_function('gen_add', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)\n\
    redis.register_function{function_name='gen_len', callback=function(keys, args) \
    return redis.call('strlen', keys[1]) end, flags={'no-writes'}}";

fn function_op(rng: &mut Rng, k: String, v: &str) -> Op {
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(6) {
        0 => exact(args!["FUNCTION", "LOAD", "REPLACE", LIBRARY]),
        1 => exact(args!["FUNCTION", "DELETE", "gen"]),
        2 => exact(args!["FCALL", "gen_get", "1", k]),
        3 => exact(args!["FCALL", "gen_add", "1", k, v]),
        4 => exact(args![
            "FCALL_RO",
            *rng.pick(&["gen_len", "gen_get"]),
            "1",
            k
        ]),
        _ => exact(args!["FCALL", "gen_len", "1", k]),
    }
}

/// Lower-case hex SHA-1, a script's id for EVALSHA.
fn sha1_hex(data: &[u8]) -> String {
    sha1_smol::Sha1::from(data).digest().to_string()
}

fn string_op(rng: &mut Rng) -> Op {
    let k = key(rng, STRINGS);
    let v = *rng.pick(VALUES);
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(20) {
        19 => exact(lcs_args(rng, k)),
        0 | 1 => exact(args!["GET", k]),
        17 | 18 => exact(getex_args(rng, k)),
        2 | 3 => exact(set_args(rng, k, v)),
        4 => exact(args!["SETEX", k, *rng.pick(&["100", "0", "-1", "x"]), v]),
        5 => exact(args!["PSETEX", k, *rng.pick(&["100000", "0"]), v]),
        6 => exact(args!["SETNX", k, v]),
        7 if rng.chance(30) => exact(args!["GETDEL", k]),
        7 => exact(args!["GETSET", k, v]),
        8 => exact(args!["MGET", k, key(rng, STRINGS), key(rng, STRINGS)]),
        9 => {
            let mut args = mset_args(rng);
            if rng.chance(50) {
                args[0] = "MSETNX".into();
            }
            exact(args)
        }
        10 => exact(args!["APPEND", k, v]),
        11 => exact(args!["STRLEN", k]),
        12 => exact(args!["GETRANGE", k, *rng.pick(INDEXES), *rng.pick(INDEXES)]),
        13 => exact(args![
            "SETRANGE",
            k,
            *rng.pick(&["0", "1", "3", "7", "-1"]),
            v
        ]),
        14 => exact(args![*rng.pick(&["INCR", "DECR"]), k]),
        15 => exact(args![
            *rng.pick(&["INCRBY", "DECRBY"]),
            k,
            *rng.pick(INCREMENTS)
        ]),
        _ => exact(args!["INCRBYFLOAT", k, *rng.pick(FLOATS)]),
    }
}

/// GETEX with no option, PERSIST, or an expiry (some invalid, some repeated or mixed).
fn getex_args(rng: &mut Rng, k: String) -> Vec<String> {
    let mut args = args!["GETEX", k];
    for _ in 0..rng.below(3) {
        match rng.below(6) {
            0 => args.push("PERSIST".into()),
            1 => args.extend(args!["EX", *rng.pick(&["100", "1000", "0", "x"])]),
            2 => args.extend(args!["PX", *rng.pick(&["100000", "-5"])]),
            3 => args.extend(args!["EXAT", *rng.pick(&["1", "9223372036854775807"])]),
            4 => args.extend(args!["PXAT", "1"]),
            _ => args.push(rng.pick(&["EX", "bogus"]).to_string()),
        }
    }
    args
}

fn set_args(rng: &mut Rng, k: String, v: &str) -> Vec<String> {
    let mut args = args!["SET", k, v];
    match rng.below(8) {
        0 => args.extend(args!["EX", *rng.pick(&["100", "1000", "0", "x"])]),
        1 => args.extend(args!["PX", *rng.pick(&["100000", "-5"])]),
        _ => {}
    }
    match rng.below(10) {
        0 | 1 => args.push("NX".into()),
        2 | 3 => args.push("XX".into()),
        4 => args.extend(args!["NX", "XX"]),
        _ => {}
    }
    args
}

/// A SET (sometimes with NX, XX or an expiry), MSET, SETEX or PSETEX: in a pipeline, runs
/// of those that read nothing share a batch.
fn blind_write_op(rng: &mut Rng) -> Op {
    let k = key(rng, STRINGS);
    let v = *rng.pick(VALUES);
    let args = match rng.below(8) {
        0 | 1 => mset_args(rng),
        2 => args!["SETEX", k, *rng.pick(&["100", "0", "x"]), v],
        3 => args!["PSETEX", k, *rng.pick(&["100000", "-1"]), v],
        _ => set_args(rng, k, v),
    };
    Op::new(args, Cmp::Exact)
}

fn mset_args(rng: &mut Rng) -> Vec<String> {
    let mut args = args!["MSET"];
    for _ in 0..=rng.below(3) {
        args.extend(args![key(rng, STRINGS), *rng.pick(VALUES)]);
    }
    if rng.chance(5) {
        args.push("odd".into());
    }
    args
}

fn key_op(rng: &mut Rng, now: u64) -> Op {
    let k = key(rng, ALL_KEYS);
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(18) {
        0 => exact(args![*rng.pick(&["DEL", "UNLINK"]), k, key(rng, ALL_KEYS)]),
        1 => exact(args![
            *rng.pick(&["EXISTS", "TOUCH"]),
            k.clone(),
            key(rng, ALL_KEYS),
            k
        ]),
        2 => exact(args!["TYPE", k]),
        3 => match rng.below(4) {
            0 => exact(args!["RENAMENX", k, key(rng, ALL_KEYS)]),
            1 => exact(args!["COPY", k, key(rng, ALL_KEYS), "REPLACE"]),
            2 => exact(args!["COPY", k, key(rng, ALL_KEYS)]),
            _ => exact(args!["RENAME", k, key(rng, ALL_KEYS)]),
        },
        4 => Op::new(args!["KEYS", *rng.pick(PATTERNS)], Cmp::Unordered),
        5 => exact(args!["DBSIZE"]),
        6 => exact(args![
            "EXPIRE",
            k,
            *rng.pick(&["100", "500", "1000", "0", "-5", "x"])
        ]),
        7 => exact(args![
            "PEXPIRE",
            k,
            *rng.pick(&["100000", "999999", "0", "-1"])
        ]),
        8 => {
            let at = [
                (now + 500).to_string(),
                (now + 1000).to_string(),
                "1".into(),
            ];
            exact(args!["EXPIREAT", k, rng.pick(&at).clone()])
        }
        9 => {
            let at = [((now + 700) * 1000).to_string(), "1".into()];
            exact(args!["PEXPIREAT", k, rng.pick(&at).clone()])
        }
        10 | 11 => Op::new(args!["TTL", k], Cmp::Within(2)),
        12 => Op::new(args!["PTTL", k], Cmp::Within(2000)),
        13 => exact(args!["PERSIST", k]),
        // Absolute expiry times: each server computes them from its own clock.
        14 => Op::new(args!["EXPIRETIME", k], Cmp::Within(2)),
        15 => Op::new(args!["PEXPIRETIME", k], Cmp::Within(2000)),
        // Rarely, start over; otherwise look at a key's type.
        _ if rng.chance(10) => exact(args!["FLUSHDB"]),
        _ => exact(args!["TYPE", k]),
    }
}

fn hash_op(rng: &mut Rng) -> Op {
    let k = key(rng, HASHES);
    let f = *rng.pick(FIELDS);
    let v = *rng.pick(VALUES);
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(15) {
        0 | 1 => exact(args!["HSET", k, f, v, *rng.pick(FIELDS), *rng.pick(VALUES)]),
        14 => exact(args!["HINCRBYFLOAT", k, f, *rng.pick(FLOATS)]),
        12 => exact(args!["HSETNX", k, f, v]),
        2 => exact(args!["HSET", k, f, v]),
        3 => exact(args!["HMSET", k, f, v]),
        4 => exact(args!["HGET", k, f]),
        5 => exact(args!["HMGET", k, f, *rng.pick(FIELDS)]),
        6 => Op::new(args!["HGETALL", k], Cmp::Pairs),
        7 => exact(args!["HDEL", k, f, *rng.pick(FIELDS)]),
        8 => exact(args![*rng.pick(&["HEXISTS", "HSTRLEN"]), k, f]),
        9 => exact(args!["HLEN", k]),
        10 => Op::new(args![*rng.pick(&["HKEYS", "HVALS"]), k], Cmp::Unordered),
        11 => exact(args!["HINCRBY", k, f, *rng.pick(INCREMENTS)]),
        13 => Op::new(random_members_args(rng, "HRANDFIELD", k), Cmp::Unordered),
        _ => scan_op(rng, "HSCAN", Some(k)),
    }
}

fn set_op(rng: &mut Rng) -> Op {
    let k = key(rng, SETS);
    let m = *rng.pick(MEMBERS);
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(15) {
        0 | 1 => exact(args!["SADD", k, m, *rng.pick(MEMBERS)]),
        13 => exact(args!["SMOVE", k, key(rng, SETS), m]),
        // Counts that take the whole set (or nothing) are deterministic as sets. A set can
        // end up with members outside MEMBERS (seed 1795466475078007505 gave one a sixth,
        // "10"), so no count is as small as MEMBERS.
        14 => Op::new(
            args!["SRANDMEMBER", k, *rng.pick(&["10", "0", "1000", "x"])],
            Cmp::Unordered,
        ),
        9 => exact(args!["SMISMEMBER", k, m, *rng.pick(MEMBERS)]),
        11 => Op::new(
            args![
                *rng.pick(&["SINTER", "SUNION", "SDIFF"]),
                k,
                key(rng, SETS),
                key(rng, SETS)
            ],
            Cmp::Unordered,
        ),
        12 => exact(args![
            *rng.pick(&["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]),
            key(rng, SETS),
            k,
            key(rng, SETS)
        ]),
        2 => exact(args!["SREM", k, m, *rng.pick(MEMBERS)]),
        3 => Op::new(args!["SMEMBERS", k], Cmp::Unordered),
        4 => exact(args!["SISMEMBER", k, m]),
        5 => exact(args!["SCARD", k]),
        6 => Op {
            special: Special::SpopOne,
            ..exact(args!["SPOP", k])
        },
        // A count above the member universe pops everything: deterministic as a set.
        7 => Op::new(args!["SPOP", k, "10"], Cmp::Unordered),
        8 => scan_op(rng, "SSCAN", Some(k)),
        10 => exact(intercard_args(rng, "SINTERCARD", k, SETS)),
        _ => exact(args!["SADD", k, m]),
    }
}

fn zset_op(rng: &mut Rng) -> Op {
    let k = key(rng, ZSETS);
    let m = *rng.pick(MEMBERS);
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(25) {
        24 => exact(multi_pop_args(rng, "ZMPOP", ZSETS, ["MIN", "MAX"])),
        0..=2 => exact(zadd_args(rng, k)),
        22 | 23 => exact(combine_args(rng, k)),
        17 => exact(args!["ZMSCORE", k, m, *rng.pick(MEMBERS)]),
        18 => scan_op(rng, "ZSCAN", Some(k)),
        19 => exact(zrange_args(rng, k)),
        _ if rng.chance(20) => exact(args!["ZADD", LEX_ZSET, "0", m, "0", *rng.pick(MEMBERS)]),
        20 | 21 => exact(lex_args(rng)),
        14 => {
            let mut args = zrangebyscore_args(rng, k);
            args[0] = "ZREVRANGEBYSCORE".into();
            exact(args)
        }
        15 => {
            let mut args = zrangebyscore_args(rng, k);
            args.truncate(4);
            args[0] = "ZREMRANGEBYSCORE".into();
            exact(args)
        }
        16 => exact(args![
            "ZREMRANGEBYRANK",
            k,
            *rng.pick(INDEXES),
            *rng.pick(INDEXES)
        ]),
        11 => exact(args!["ZINCRBY", k, *rng.pick(SCORES), m]),
        12 => {
            let mut args = zrangebyscore_args(rng, k);
            args.truncate(4);
            args[0] = "ZCOUNT".into();
            exact(args)
        }
        13 => exact(args![*rng.pick(&["ZRANK", "ZREVRANK"]), k, m]),
        10 => match rng.below(3) {
            0 => {
                // ZRANGE's arguments with a destination before the source.
                let mut args = zrange_args(rng, k);
                args[0] = "ZRANGESTORE".into();
                args.insert(1, key(rng, ZSETS));
                exact(args)
            }
            1 => exact(intercard_args(rng, "ZINTERCARD", k, ZSETS)),
            _ => Op::new(random_members_args(rng, "ZRANDMEMBER", k), Cmp::Unordered),
        },
        3 => exact(args!["ZREM", k, m, *rng.pick(MEMBERS)]),
        4 => exact(args!["ZCARD", k]),
        5 => exact(args!["ZSCORE", k, m]),
        6 | 7 => {
            let name = *rng.pick(&["ZRANGE", "ZREVRANGE"]);
            let mut args = args![name, k, *rng.pick(INDEXES), *rng.pick(INDEXES)];
            if rng.chance(50) {
                args.push("WITHSCORES".into());
            }
            exact(args)
        }
        8 => exact(zrangebyscore_args(rng, k)),
        9 => {
            let mut args = args![*rng.pick(&["ZPOPMIN", "ZPOPMAX"]), k];
            if rng.chance(50) {
                args.push(rng.pick(&["1", "2", "10", "0", "-1"]).to_string());
            }
            exact(args)
        }
        _ => exact(args!["ZSCORE", k, m]),
    }
}

/// ZRANGE in its Redis 6.2 form: by rank, score or member, maybe reversed, limited, with
/// scores (including the combinations Redis refuses).
/// SINTERCARD or ZINTERCARD over `k` and keys of `pool`, sometimes with a LIMIT or a bad
/// count.
fn intercard_args(rng: &mut Rng, name: &str, k: String, pool: &[&str]) -> Vec<String> {
    let numkeys = *rng.pick(&["1", "2", "2", "2", "0", "3", "x"]);
    let mut args = args![name, numkeys, k, key(rng, pool)];
    if rng.chance(40) {
        args.extend(args!["LIMIT", *rng.pick(&["0", "1", "2", "-1", "x"])]);
    }
    args
}

/// HRANDFIELD or ZRANDMEMBER with a count whose reply is determined as a multiset: one
/// above every collection's size, zero, or not a count; sometimes WITHVALUES/WITHSCORES.
fn random_members_args(rng: &mut Rng, name: &str, k: String) -> Vec<String> {
    let mut args = args![name, k, *rng.pick(&["10", "10", "0", "x"])];
    if rng.chance(50) {
        args.push(
            if name == "HRANDFIELD" {
                "WITHVALUES"
            } else {
                "WITHSCORES"
            }
            .into(),
        );
    }
    args
}

fn zrange_args(rng: &mut Rng, k: String) -> Vec<String> {
    let by = *rng.pick(&["", "BYSCORE", "BYLEX"]);
    let mut args = match by {
        "BYSCORE" => args![
            "ZRANGE",
            k,
            *rng.pick(SCORE_BOUNDS),
            *rng.pick(SCORE_BOUNDS),
            by
        ],
        "BYLEX" => args![
            "ZRANGE",
            LEX_ZSET,
            *rng.pick(LEX_BOUNDS),
            *rng.pick(LEX_BOUNDS),
            by
        ],
        _ => args!["ZRANGE", k, *rng.pick(INDEXES), *rng.pick(INDEXES)],
    };
    if rng.chance(40) {
        args.push("REV".into());
    }
    if rng.chance(30) {
        args.push("WITHSCORES".into());
    }
    if rng.chance(30) {
        args.extend(args![
            "LIMIT",
            *rng.pick(&["0", "1", "-1"]),
            *rng.pick(&["1", "2", "-1"])
        ]);
    }
    if rng.chance(5) {
        args.push(rng.pick(&["REV", "BYSCORE", "bogus"]).to_string());
    }
    args
}

/// ZUNION, ZINTER, ZDIFF or a STORE form, over sorted sets and plain sets (which score 1),
/// with weights, an aggregate or scores, sometimes with a bad count or option.
fn combine_args(rng: &mut Rng, k: String) -> Vec<String> {
    let name = *rng.pick(&[
        "ZUNION",
        "ZINTER",
        "ZDIFF",
        "ZUNIONSTORE",
        "ZINTERSTORE",
        "ZDIFFSTORE",
    ]);
    let mut args = args![name];
    if name.ends_with("STORE") {
        args.push(key(rng, ZSETS));
    }
    let count = 1 + rng.below(3);
    args.push(match rng.below(20) {
        0 => rng.pick(&["0", "x", "9"]).to_string(),
        _ => count.to_string(),
    });
    args.push(k);
    for _ in 1..count {
        args.push(if rng.chance(25) {
            key(rng, SETS)
        } else {
            key(rng, ZSETS)
        });
    }
    if rng.chance(30) {
        args.push("WEIGHTS".into());
        for _ in 0..count {
            args.push(rng.pick(&["1", "2", "-1", "0.5", "0", "inf"]).to_string());
        }
    }
    if rng.chance(30) {
        args.extend(args!["AGGREGATE", *rng.pick(&["SUM", "MIN", "MAX", "avg"])]);
    }
    if rng.chance(40) {
        args.push("WITHSCORES".into());
    }
    args
}

/// A lex-range command on the sorted set whose members all score 0 (where Redis defines
/// lex order).
fn lex_args(rng: &mut Rng) -> Vec<String> {
    let name = *rng.pick(&[
        "ZRANGEBYLEX",
        "ZREVRANGEBYLEX",
        "ZLEXCOUNT",
        "ZREMRANGEBYLEX",
    ]);
    let mut args = args![name, LEX_ZSET, *rng.pick(LEX_BOUNDS), *rng.pick(LEX_BOUNDS)];
    if name.ends_with("RANGEBYLEX") && !name.starts_with("ZREM") && rng.chance(30) {
        args.extend(args![
            "LIMIT",
            *rng.pick(&["0", "1", "-1"]),
            *rng.pick(&["1", "3", "-1"])
        ]);
    }
    args
}

fn zadd_args(rng: &mut Rng, k: String) -> Vec<String> {
    let mut args = args!["ZADD", k];
    match rng.below(10) {
        0 => args.push("NX".into()),
        1 => args.push("XX".into()),
        2 => args.push("CH".into()),
        _ => {}
    }
    if rng.chance(8) {
        args.extend(args!["INCR", *rng.pick(SCORES), *rng.pick(MEMBERS)]);
        return args;
    }
    for _ in 0..=rng.below(2) {
        args.extend(args![*rng.pick(SCORES), *rng.pick(MEMBERS)]);
    }
    args
}

fn zrangebyscore_args(rng: &mut Rng, k: String) -> Vec<String> {
    let mut args = args![
        "ZRANGEBYSCORE",
        k,
        *rng.pick(SCORE_BOUNDS),
        *rng.pick(SCORE_BOUNDS)
    ];
    if rng.chance(40) {
        args.push("WITHSCORES".into());
    }
    if rng.chance(30) {
        args.extend(args![
            "LIMIT",
            *rng.pick(&["0", "1", "2"]),
            *rng.pick(&["1", "2", "-1"])
        ]);
    }
    args
}

/// LCS of `k` and another key (sometimes not a string), sometimes with LEN or IDX and its
/// options.
fn lcs_args(rng: &mut Rng, k: String) -> Vec<String> {
    let other = if rng.chance(80) {
        key(rng, STRINGS)
    } else {
        key(rng, ALL_KEYS)
    };
    let mut args = args!["LCS", k, other];
    match rng.below(4) {
        0 => args.push("LEN".into()),
        1 => {
            args.push("IDX".into());
            if rng.chance(50) {
                args.extend(args!["MINMATCHLEN", *rng.pick(&["0", "1", "2", "-1", "x"])]);
            }
            if rng.chance(50) {
                args.push("WITHMATCHLEN".into());
            }
        }
        _ => {}
    }
    args
}

/// SORT or SORT_RO of a list, set or sorted set, sometimes with DESC, LIMIT, GET # or
/// STORE into a list key. ALPHA and numeric sorts have an order Redis defines (numeric ties
/// go by bytes); BY without a pattern keeps a list's or sorted set's order but a set's hash
/// order, and any key may hold a set by now, so its reply compares as a multiset, without
/// LIMIT (unless STORE, which makes Redis sort a set as ALPHA).
fn sort_op(rng: &mut Rng) -> Op {
    let pool = *rng.pick(&[LISTS, SETS, ZSETS]);
    let k = key(rng, pool);
    let ro = rng.chance(25);
    let store = !ro && rng.chance(20);
    let mut args = args![if ro { "SORT_RO" } else { "SORT" }, k];
    let unsorted = match rng.below(3) {
        0 => {
            args.push("ALPHA".into());
            false
        }
        1 => {
            args.extend(args!["BY", "nosort"]);
            true
        }
        _ => false,
    };
    if rng.chance(50) {
        args.push("DESC".into());
    }
    if rng.chance(30) && (store || !unsorted) {
        args.extend(args![
            "LIMIT",
            *rng.pick(&["0", "1", "-1", "5"]),
            *rng.pick(&["1", "2", "-1", "0"])
        ]);
    }
    if rng.chance(20) {
        args.extend(args!["GET", "#"]);
    }
    if store {
        args.extend(args!["STORE", key(rng, LISTS)]);
    }
    let cmp = if unsorted && !store {
        Cmp::Unordered
    } else {
        Cmp::Exact
    };
    Op::new(args, cmp)
}

fn list_op(rng: &mut Rng) -> Op {
    let k = key(rng, LISTS);
    let v = *rng.pick(LIST_VALUES);
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(20) {
        19 => sort_op(rng),
        16 => exact(multi_pop_args(rng, "LMPOP", LISTS, ["LEFT", "RIGHT"])),
        17 | 18 => exact(args![
            "LINSERT",
            k,
            *rng.pick(&["BEFORE", "AFTER", "after", "AROUND"]),
            *rng.pick(LIST_VALUES),
            v
        ]),
        14 | 15 => exact(lpos_args(rng, k)),
        11 => exact(args!["LTRIM", k, *rng.pick(INDEXES), *rng.pick(INDEXES)]),
        12 => exact(args!["RPOPLPUSH", k, key(rng, LISTS)]),
        13 => exact(args![
            "LMOVE",
            k,
            key(rng, LISTS),
            *rng.pick(&["LEFT", "RIGHT", "left"]),
            *rng.pick(&["LEFT", "RIGHT", "UP"])
        ]),
        0 | 1 => exact(args![
            *rng.pick(&["LPUSH", "RPUSH"]),
            k,
            v,
            *rng.pick(LIST_VALUES)
        ]),
        2 => exact(args![
            *rng.pick(&["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"]),
            k,
            v
        ]),
        3 => exact(args![*rng.pick(&["LPOP", "RPOP"]), k]),
        4 => exact(args![
            *rng.pick(&["LPOP", "RPOP"]),
            k,
            *rng.pick(&["1", "2", "5", "0"])
        ]),
        5 => exact(args!["LLEN", k]),
        6 | 7 => exact(args!["LRANGE", k, *rng.pick(INDEXES), *rng.pick(INDEXES)]),
        8 => exact(args!["LINDEX", k, *rng.pick(INDEXES)]),
        9 => exact(args!["LSET", k, *rng.pick(INDEXES), v]),
        _ => exact(args!["LREM", k, *rng.pick(&["0", "1", "-1", "2", "-2"]), v]),
    }
}

/// LMPOP or ZMPOP: `numkeys key... END [COUNT n]`, keys mostly of the right type, now and
/// then a wrong count of keys, a bad end word or a bad COUNT.
fn multi_pop_args(rng: &mut Rng, name: &str, pool: &[&str], ends: [&str; 2]) -> Vec<String> {
    let keys = 1 + rng.below(3) as usize;
    let mut args = args![name, keys.to_string()];
    for _ in 0..keys {
        let k = if rng.chance(10) {
            rng.pick(ALL_KEYS).to_string()
        } else {
            key(rng, pool)
        };
        args.push(k);
    }
    args.push(
        rng.pick(&[ends[0], ends[1], &ends[0].to_lowercase()])
            .to_string(),
    );
    if rng.chance(50) {
        args.extend(args!["COUNT", *rng.pick(&["1", "2", "10", "0", "-1", "x"])]);
    }
    if rng.chance(10) {
        match rng.below(3) {
            0 => args[1] = rng.pick(&["0", "-1", "9", "x"]).to_string(),
            1 => args.push(rng.pick(&["COUNT", "BOGUS", ends[1]]).to_string()),
            _ => args.insert(2 + keys, "SIDEWAYS".into()),
        }
    }
    args
}

fn lpos_args(rng: &mut Rng, k: String) -> Vec<String> {
    let mut args = args!["LPOS", k, *rng.pick(LIST_VALUES)];
    for _ in 0..rng.below(4) {
        match rng.below(4) {
            0 => args.extend(args!["RANK", *rng.pick(&["1", "2", "-1", "-3", "0", "x"])]),
            1 => args.extend(args!["COUNT", *rng.pick(&["0", "1", "2", "-1"])]),
            2 => args.extend(args!["MAXLEN", *rng.pick(&["0", "1", "3", "-1"])]),
            _ => args.push(rng.pick(&["RANK", "bogus"]).to_string()),
        }
    }
    args
}

/// Bit offsets: small mostly, sometimes far (a longer string), sometimes invalid.
const BIT_OFFSETS: &[&str] = &[
    "0", "1", "3", "7", "8", "9", "15", "16", "23", "31", "40", "63", "64", "100",
];
const FAR_BIT_OFFSETS: &[&str] = &["1000", "8191", "100000"];
const BAD_BIT_OFFSETS: &[&str] = &["-1", "x", "", "1.5", "01", "4294967296", "#1"];
/// BITCOUNT and BITPOS range ends, in bytes or bits.
const BIT_INDEXES: &[&str] = &[
    "0", "1", "2", "3", "5", "7", "9", "15", "30", "100", "-1", "-2", "-3", "-10", "-100", "x",
];
const BIT_UNITS: &[&str] = &["BIT", "BYTE", "bit", "Byte", "bits"];
const FIELD_TYPES: &[&str] = &[
    "u1", "u2", "u4", "i5", "u8", "i8", "i13", "u16", "i16", "u32", "i63", "i64", "u63",
];
const BAD_FIELD_TYPES: &[&str] = &["u64", "i65", "i0", "U8", "x", "8"];
const FIELD_OFFSETS: &[&str] = &[
    "0", "1", "4", "7", "8", "12", "17", "31", "40", "#0", "#1", "#3",
];
const FIELD_VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "5",
    "100",
    "127",
    "-128",
    "255",
    "300",
    "-300",
    "9223372036854775807",
    "-9223372036854775808",
    "x",
];

/// A bit offset for SETBIT or GETBIT (a read may also look at the last valid bit).
fn bit_offset(rng: &mut Rng, read: bool) -> String {
    let offset = match rng.below(20) {
        0 => *rng.pick(FAR_BIT_OFFSETS),
        1 => *rng.pick(BAD_BIT_OFFSETS),
        2 if read => "4294967295",
        _ => *rng.pick(BIT_OFFSETS),
    };
    offset.to_string()
}

/// Bitmap commands, on keys of their own and on a string key (where they meet SET's values
/// and TTLs): SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO, with small
/// offsets mostly, negative and reversed ranges, both units, wrong types and bad arguments,
/// and runs of ones (so that BITPOS looks for a 0 where there is none).
fn bit_op(rng: &mut Rng) -> Op {
    let k = key(rng, BITMAPS);
    let args = match rng.below(14) {
        0 | 1 => args![
            "SETBIT",
            k,
            bit_offset(rng, false),
            *rng.pick(&["0", "1", "1", "0", "2", "-1", "x"])
        ],
        2 => args!["GETBIT", k, bit_offset(rng, true)],
        3 | 4 => bitcount_args(rng, k),
        5 | 6 => bitpos_args(rng, k),
        7 => bitop_args(rng),
        8..=10 => bitfield_args(rng, k, "BITFIELD"),
        11 => bitfield_args(rng, k, "BITFIELD_RO"),
        12 => args![
            "BITFIELD",
            k,
            "SET",
            *rng.pick(&["i64", "i32", "u16", "i12"]),
            *rng.pick(&["0", "#0", "#1", "4", "9"]),
            *rng.pick(&["-1", "-1", "-2", "-256", "0"])
        ],
        _ => args!["BITOP", "NOT", k.clone(), k],
    };
    Op::new(args, Cmp::Exact)
}

/// `BITCOUNT key [start end [BYTE|BIT]]`, now and then with a missing end or an extra word.
fn bitcount_args(rng: &mut Rng, k: String) -> Vec<String> {
    let mut args = args!["BITCOUNT", k];
    match rng.below(8) {
        0 => {}
        1 => args.push(rng.pick(BIT_INDEXES).to_string()),
        _ => {
            args.extend(args![*rng.pick(BIT_INDEXES), *rng.pick(BIT_INDEXES)]);
            if rng.chance(50) {
                args.push(rng.pick(BIT_UNITS).to_string());
            }
        }
    }
    if rng.chance(3) {
        args.push("extra".into());
    }
    args
}

/// `BITPOS key bit [start [end [BYTE|BIT]]]`, now and then a bad bit or an extra word.
fn bitpos_args(rng: &mut Rng, k: String) -> Vec<String> {
    let bit = *rng.pick(&["0", "1", "0", "1", "2", "x"]);
    let mut args = args!["BITPOS", k, bit];
    let extra = rng.below(4);
    if extra >= 1 {
        args.push(rng.pick(BIT_INDEXES).to_string());
    }
    if extra >= 2 {
        args.push(rng.pick(BIT_INDEXES).to_string());
    }
    if extra >= 3 {
        args.push(rng.pick(BIT_UNITS).to_string());
    }
    if rng.chance(3) {
        args.push("extra".into());
    }
    args
}

/// `BITOP op destkey key...`: any destination (other types are replaced), sources mostly
/// strings, NOT now and then with two sources, a bad operation rarely.
fn bitop_args(rng: &mut Rng) -> Vec<String> {
    let op = *rng.pick(&["AND", "OR", "XOR", "NOT", "and", "Xor", "NOT", "nand"]);
    let mut args = args!["BITOP", op, key(rng, BITMAPS)];
    let sources = if op == "NOT" && rng.chance(80) {
        1
    } else {
        1 + rng.below(3)
    };
    for _ in 0..sources {
        let source = if rng.chance(20) {
            "missing".to_string()
        } else {
            key(rng, BITMAPS)
        };
        args.push(source);
    }
    args
}

/// `BITFIELD key` (or BITFIELD_RO) with up to four subcommands: GET, SET, INCRBY (mostly
/// valid types and small offsets), OVERFLOW, and now and then a bad type, offset, value or
/// word, or a subcommand cut short.
fn bitfield_args(rng: &mut Rng, k: String, name: &str) -> Vec<String> {
    let mut args = args![name, k];
    let writes = if name == "BITFIELD_RO" { 5 } else { 50 };
    for _ in 0..rng.below(5) {
        let ty = if rng.chance(5) {
            *rng.pick(BAD_FIELD_TYPES)
        } else {
            *rng.pick(FIELD_TYPES)
        };
        let offset = match rng.below(30) {
            0 => *rng.pick(&["-1", "x", "#", "#-1", "4294967296"]),
            1 => "1000",
            _ => *rng.pick(FIELD_OFFSETS),
        };
        match rng.below(100) {
            0..=3 => args.push(rng.pick(&["BOGUS", "GET", "SET"]).to_string()),
            4..=14 => args.extend(args![
                "OVERFLOW",
                *rng.pick(&["WRAP", "SAT", "FAIL", "sat", "fail", "bogus"])
            ]),
            n if n < 15 + writes => args.extend(args![
                *rng.pick(&["SET", "INCRBY", "set", "incrby"]),
                ty,
                offset,
                *rng.pick(FIELD_VALUES)
            ]),
            _ => args.extend(args![*rng.pick(&["GET", "get"]), ty, offset]),
        }
    }
    if rng.chance(3) {
        args.push("GET".into());
    }
    args
}

/// Geo keys: sorted sets of geohash scores.
const GEOS: &[&str] = &["g1", "g2"];
/// Points in clusters (Sicily, around 0,0, both sides of the antimeridian, near the poles'
/// limits) so that searches find several, and the limits themselves.
const GEO_POINTS: &[(&str, &str)] = &[
    ("13.361389", "38.115556"),
    ("15.087269", "37.502669"),
    ("13.5", "38"),
    ("14", "37.9"),
    ("0", "0"),
    ("0.001", "-0.001"),
    ("-0.5", "0.3"),
    ("180", "0"),
    ("-180", "0"),
    ("179.99", "0.01"),
    ("-179.99", "-0.01"),
    ("180", "85.05112878"),
    ("-180", "-85.05112878"),
    ("45", "85.05"),
    ("44.9", "85"),
    ("-120", "-85.0511"),
    ("100", "66.5"),
    ("-70", "-80.5"),
];
/// Invalid pairs, now and then.
const BAD_GEO_POINTS: &[(&str, &str)] = &[("200", "0"), ("0", "85.06"), ("x", "1"), ("1", "inf")];
const GEO_MEMBERS: &[&str] = &["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];
const GEO_DISTANCES: &[&str] = &["0", "1", "50", "150", "200", "500", "3000", "20000", "0.5"];
const GEO_UNITS: &[&str] = &["km", "km", "KM", "m", "mi", "ft"];

/// A point's longitude and latitude arguments (rarely invalid).
fn geo_point(rng: &mut Rng, args: &mut Vec<String>) {
    let points = if rng.chance(3) {
        BAD_GEO_POINTS
    } else {
        GEO_POINTS
    };
    let (lon, lat) = *rng.pick(points);
    args.extend([lon.to_string(), lat.to_string()]);
}

/// A radius, width or height (rarely invalid, or infinite).
fn geo_distance(rng: &mut Rng) -> String {
    let pool = if rng.chance(4) {
        &["-1", "x", "inf"][..]
    } else {
        GEO_DISTANCES
    };
    rng.pick(pool).to_string()
}

/// A unit (rarely an unknown one).
fn geo_unit(rng: &mut Rng) -> String {
    let pool = if rng.chance(2) {
        &["yd"][..]
    } else {
        GEO_UNITS
    };
    rng.pick(pool).to_string()
}

/// GEO commands over their own keys (`key` now and then picks any key, for the wrong types
/// and for sorted sets whose scores are not geohashes). Searches whose order Redis leaves
/// unspecified (no ASC, DESC, or COUNT without ANY) compare unordered.
fn geo_op(rng: &mut Rng) -> Op {
    let k = key(rng, GEOS);
    let member = |rng: &mut Rng| rng.pick(GEO_MEMBERS).to_string();
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(20) {
        0..=4 => {
            let mut args = args!["GEOADD", k];
            for flag in ["NX", "XX", "CH"] {
                if rng.chance(10) {
                    args.push(flag.into());
                }
            }
            for _ in 0..=rng.below(3) {
                geo_point(rng, &mut args);
                args.push(member(rng));
            }
            if rng.chance(3) {
                args.pop();
            }
            exact(args)
        }
        5 | 6 => {
            let name = *rng.pick(&["GEOPOS", "GEOHASH"]);
            let mut args = args![name, k];
            args.extend((0..=rng.below(3)).map(|_| member(rng)));
            exact(args)
        }
        7 => {
            let mut args = args!["GEODIST", k, member(rng), member(rng)];
            if rng.chance(60) {
                args.push(geo_unit(rng));
            }
            exact(args)
        }
        8 if rng.chance(30) => exact(args!["ZREM", k, member(rng)]),
        8 => exact(args!["ZADD", k, *rng.pick(SCORES), member(rng)]),
        _ => geo_search_op(rng, k),
    }
}

/// GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their _RO forms, with
/// random options (now and then a wrong one).
fn geo_search_op(rng: &mut Rng, k: String) -> Op {
    let (distance, unit) = (geo_distance, geo_unit);
    let store = rng.chance(25);
    let mut args = match rng.below(4) {
        0 | 1 if store => args!["GEOSEARCHSTORE", key(rng, GEOS), k],
        0 | 1 => args!["GEOSEARCH", k],
        2 => {
            let mut args = args![if store { "GEORADIUS" } else { "GEORADIUS_RO" }, k];
            geo_point(rng, &mut args);
            args.extend([distance(rng), unit(rng)]);
            args
        }
        _ => {
            let name = if store {
                "GEORADIUSBYMEMBER"
            } else {
                "GEORADIUSBYMEMBER_RO"
            };
            let member = rng.pick(GEO_MEMBERS).to_string();
            args![name, k, member, distance(rng), unit(rng)]
        }
    };
    if args[0].starts_with("GEOSEARCH") {
        if rng.chance(50) {
            args.extend(args!["FROMMEMBER", *rng.pick(GEO_MEMBERS)]);
        } else if rng.chance(95) {
            args.push("FROMLONLAT".into());
            geo_point(rng, &mut args);
        }
        if rng.chance(50) {
            args.extend(["BYRADIUS".into(), distance(rng), unit(rng)]);
        } else if rng.chance(95) {
            args.extend(["BYBOX".into(), distance(rng), distance(rng), unit(rng)]);
        }
    }
    let sorted = match rng.below(3) {
        0 => false,
        1 => {
            args.push("ASC".into());
            true
        }
        _ => {
            args.push("DESC".into());
            true
        }
    };
    let mut ordered = sorted;
    if rng.chance(40) {
        let counts = if rng.chance(5) {
            &["0", "x"][..]
        } else {
            &["1", "2", "3", "5"]
        };
        args.extend(args!["COUNT", *rng.pick(counts)]);
        if rng.chance(30) {
            args.push("ANY".into());
        } else {
            ordered = true;
        }
    } else if rng.chance(3) {
        args.push("ANY".into());
    }
    if store {
        if args[0] == "GEOSEARCHSTORE" {
            if rng.chance(50) {
                args.push("STOREDIST".into());
            }
        } else {
            let how = *rng.pick(&["STORE", "STOREDIST"]);
            args.extend(args![how, key(rng, GEOS)]);
        }
    }
    if !store || rng.chance(5) {
        for with in ["WITHDIST", "WITHHASH", "WITHCOORD"] {
            if rng.chance(30) {
                args.push(with.into());
            }
        }
    }
    Op::new(args, if ordered { Cmp::Exact } else { Cmp::Unordered })
}

fn misc_op(rng: &mut Rng) -> Op {
    let exact = |args| Op::new(args, Cmp::Exact);
    match rng.below(6) {
        0 => exact(args!["ECHO", *rng.pick(VALUES)]),
        1 => exact(args!["PING"]),
        2 => exact(args!["PING", *rng.pick(VALUES)]),
        3 => exact(args![
            "CLIENT",
            "SETNAME",
            *rng.pick(&["conn1", "a b", "", "x-y"])
        ]),
        4 => exact(args!["CLIENT", "GETNAME"]),
        _ => scan_op(rng, "SCAN", None),
    }
}

/// A SCAN/HSCAN/SSCAN iterated to the end (the runner fills in the cursor).
fn scan_op(rng: &mut Rng, name: &str, key: Option<String>) -> Op {
    let mut args = args![name];
    args.extend(key);
    if rng.chance(50) {
        args.extend(args!["MATCH", *rng.pick(PATTERNS)]);
    }
    if rng.chance(50) {
        args.extend(args!["COUNT", *rng.pick(&["1", "2", "10"])]);
    }
    let cmp = if name == "HSCAN" || name == "ZSCAN" {
        Cmp::Pairs
    } else {
        Cmp::Unordered
    };
    Op {
        args,
        cmp,
        special: Special::ScanAll,
    }
}

/// HyperLogLogs: keys of their own (`key` now and then picks any key, for the wrong types).
const HLLS: &[&str] = &["hll1", "hll2", "hll3"];
/// HLL elements; the last one's register value is 36, too big for a sparse HLL.
const HLL_ELEMENTS: &[&str] = &["a", "b", "c", "d", "", "1", "hello", "x y", "86f8de7b"];

/// HyperLogLog commands: PFADD of a few elements or (rarely) of hundreds, enough to turn an
/// HLL dense; PFCOUNT of one key (cached or not) and of several; PFMERGE; PFDEBUG ENCODING
/// and DECODE; and edits of HLL strings that Redis's HLL code must cope with: the cached
/// count's stale bit and bytes, the magic, the encoding byte, bytes appended or written far
/// past a sparse HLL's end (into a dense one's registers).
fn hll_op(rng: &mut Rng) -> Op {
    let k = key(rng, HLLS);
    let args = match rng.below(20) {
        0..=5 => {
            let mut args = args!["PFADD", k];
            for _ in 0..rng.below(5) {
                args.push(if rng.chance(70) {
                    rng.pick(HLL_ELEMENTS).to_string()
                } else {
                    format!("e{}", rng.below(3000))
                });
            }
            args
        }
        6 => {
            let start = rng.below(3000);
            let mut args = args!["PFADD", k];
            args.extend((start..start + 100 + rng.below(500)).map(|n| format!("e{n}")));
            args
        }
        7..=10 => args!["PFCOUNT", k],
        11 | 12 => {
            let mut args = args!["PFCOUNT", k];
            for _ in 0..=rng.below(2) {
                args.push(key(rng, HLLS));
            }
            args
        }
        13..=15 => {
            let mut args = args!["PFMERGE", k];
            for _ in 0..rng.below(4) {
                args.push(if rng.chance(15) {
                    "missing".into()
                } else {
                    key(rng, HLLS)
                });
            }
            args
        }
        16 => args!["PFDEBUG", *rng.pick(&["ENCODING", "DECODE", "encoding"]), k],
        17 => match rng.below(10) {
            0..=3 => args!["SETBIT", k, "120", *rng.pick(&["0", "1"])],
            4 | 5 => args!["SETRANGE", k, "8", *rng.pick(&["\x05", "\x00\x01", "\x7f"])],
            6 => args!["SETRANGE", k, *rng.pick(&["0", "3"]), "X"],
            // Claims dense: of the wrong length unless it was.
            7 => args!["SETRANGE", k, "4", "\x00"],
            _ => args!["SETRANGE", k, "5000", "zz"],
        },
        18 => args!["APPEND", k, *rng.pick(&["\x01", "x"])],
        // DEL starts over after the edits above.
        _ => args![*rng.pick(&["GET", "STRLEN", "DEL"]), k],
    };
    Op::new(args, Cmp::Exact)
}

// ---------------------------------------------------------------------------------------
// Comparing replies.

/// Whether docdb's reply `d` is acceptable given Redis's reply `r`.
fn equivalent(cmp: Cmp, r: &Frame, d: &Frame) -> bool {
    match (cmp, r, d) {
        (Cmp::Unordered, Frame::Array(a), Frame::Array(b))
        | (Cmp::Unordered, Frame::Set(a), Frame::Set(b)) => sorted(a) == sorted(b),
        (Cmp::Pairs, Frame::Array(a), Frame::Array(b)) => pairs(a) == pairs(b),
        (Cmp::Pairs, Frame::Map(a), Frame::Map(b)) => entries(a) == entries(b),
        (Cmp::Within(tol), Frame::Integer(a), Frame::Integer(b)) if *a >= 0 && *b >= 0 => {
            (a - b).abs() <= tol
        }
        _ => r == d,
    }
}

fn sorted(items: &[Frame]) -> Vec<String> {
    let mut out: Vec<String> = items.iter().map(render).collect();
    out.sort();
    out
}

fn pairs(items: &[Frame]) -> Option<Vec<(String, String)>> {
    if !items.len().is_multiple_of(2) {
        return None;
    }
    let mut out: Vec<_> = items
        .chunks(2)
        .map(|p| (render(&p[0]), render(&p[1])))
        .collect();
    out.sort();
    Some(out)
}

fn entries(map: &[(Frame, Frame)]) -> Vec<(String, String)> {
    let mut out: Vec<_> = map.iter().map(|(k, v)| (render(k), render(v))).collect();
    out.sort();
    out
}

/// An argument, quoted when it would not read back as one word.
fn quote(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_graphic() && b != b'"');
    if plain {
        arg.into()
    } else {
        format!("\"{}\"", arg.as_bytes().escape_ascii())
    }
}

// ---------------------------------------------------------------------------------------
// Running the same commands on both servers.

/// How many earlier commands a mismatch report shows.
const HISTORY: usize = 8;
/// The step index of the checks after a sequence.
const FINAL_STEP: usize = usize::MAX;
/// A run stops collecting after this many mismatches (later ones are mostly echoes).
const MAX_MISMATCHES: usize = 25;

/// A step index as shown in reports.
fn step_label(step: usize) -> String {
    if step == FINAL_STEP {
        "final state check".into()
    } else {
        format!("step {step}")
    }
}

/// One connection to each server, plus the evidence for failure reports.
struct Pair {
    redis: RespClient,
    /// Where Redis listens: a fresh connection clears its stale `errno` (see
    /// [`Pair::clear_redis_errno`]).
    redis_addr: std::net::SocketAddr,
    docdb: RespClient,
    seed: u64,
    history: VecDeque<String>,
    mismatches: Vec<String>,
    /// Replies seen, and how many were errors: printed, to show the mix stays useful.
    replies: usize,
    errors: usize,
}

impl Pair {
    fn new(redis: &common_redis::Server, docdb: &common_redis::Server, seed: u64) -> Pair {
        Pair {
            redis: redis.client(),
            redis_addr: redis.addr(),
            docdb: docdb.client(),
            seed,
            history: VecDeque::new(),
            mismatches: Vec::new(),
            replies: 0,
            errors: 0,
        }
    }

    /// Runs `op` on both servers and records a mismatch (then resets both, so one
    /// difference does not cascade into many).
    fn run(&mut self, step: usize, op: &Op) -> Frame {
        if is_numeric_sort(&op.args) {
            self.clear_redis_errno();
        }
        let r = self.exec(true, step, op);
        let d = self.exec(false, step, op);
        self.replies += 1;
        self.errors += usize::from(matches!(r, Frame::Error(_)));
        let same = if op.special == Special::SpopOne {
            self.align_spop(step, op, &r, &d)
        } else {
            equivalent(op.cmp, &r, &d)
        };
        let named = |k: &String| op.args.iter().any(|a| a == k || a.starts_with("FLUSH"));
        if TRACE_KEY.as_ref().is_some_and(named) {
            let (label, text) = (step_label(step), op.text());
            eprintln!(
                "trace [{label}] {text} -> redis {} | docdb {}",
                render(&r),
                render(&d)
            );
        }
        self.judge(step, op, same, &r, &d);
        r
    }

    /// Redis 7.0's numeric SORT tests `errno == ERANGE` after `strtod` without clearing
    /// `errno` first, so any earlier float out of range (`ZADD k 1e400 m`, a stored `1e400`
    /// read by INCRBYFLOAT) makes it refuse every list of numbers ("One or more scores can't
    /// be converted into double") until something else sets `errno`. Accepting a connection
    /// does: Redis accepts until `EAGAIN`. docdb has no such state to mimic.
    fn clear_redis_errno(&self) {
        let mut fresh = RespClient::connect(self.redis_addr, Duration::from_secs(10))
            .expect("a fresh connection to redis");
        let pong = fresh.call(&["PING".to_string()]).expect("PING redis");
        assert_eq!(pong, Frame::Simple("PONG".into()), "redis: PING");
    }

    /// Remembers the reply both servers agreed on, or records the mismatch.
    fn judge(&mut self, step: usize, op: &Op, same: bool, r: &Frame, d: &Frame) {
        if same {
            self.remember(format!(
                "[{}] {} -> {}",
                step_label(step),
                op.text(),
                render(r)
            ));
        } else {
            self.mismatch(step, op, r, d);
        }
    }

    /// Sends `ops` to each server as one pipeline (one write, so a server reads them
    /// together and runs them as one batch), then compares the replies in order. Stops at
    /// the first mismatch, after which both servers are flushed.
    fn run_pipeline(&mut self, first_step: usize, ops: &[Op]) {
        let bytes: Vec<u8> = ops.iter().flat_map(|op| encode_command(&op.args)).collect();
        let mut replies = Vec::new();
        for (client, name) in [(&mut self.redis, "redis"), (&mut self.docdb, "docdb")] {
            client.send_raw(&bytes).expect("send a pipeline");
            let got: Vec<Frame> = (0..ops.len())
                .map(|i| {
                    client.read_reply().unwrap_or_else(|e| {
                        panic!(
                            "seed {} step {}: no reply from {name} in a pipeline: {e}",
                            self.seed,
                            first_step + i
                        )
                    })
                })
                .collect();
            replies.push(got);
        }
        let pipeline = format!("(pipeline of {} from step {first_step})", ops.len());
        for (i, op) in ops.iter().enumerate() {
            let (r, d) = (&replies[0][i], &replies[1][i]);
            self.replies += 1;
            self.errors += usize::from(matches!(r, Frame::Error(_)));
            if !equivalent(op.cmp, r, d) {
                self.mismatch(first_step + i, op, r, d);
                return;
            }
            self.remember(format!(
                "[{}] {} -> {} {pipeline}",
                step_label(first_step + i),
                op.text(),
                render(r)
            ));
        }
    }

    fn mismatch(&mut self, step: usize, op: &Op, r: &Frame, d: &Frame) {
        let before: Vec<String> = self.history.iter().map(|h| format!("\n    {h}")).collect();
        let at = step_label(step);
        self.mismatches.push(format!(
            "seed {} {at}: {}\n  redis: {}\n  docdb: {}\n  preceded by:{}",
            self.seed,
            op.text(),
            render(r),
            render(d),
            before.concat()
        ));
        self.history.clear();
        self.resync(step, "mismatch");
    }

    /// EXEC after the command between WATCH and MULTI replied with an error yet changed the
    /// watched key's value in Redis: a PFADD that fails on a corrupted HyperLogLog after
    /// adding its first elements. Redis keeps those additions without signalling the key,
    /// so its EXEC runs; docdb stores the same additions as a write, which fails the EXEC
    /// as any change of a watched value does. Either reply is accepted; the data then
    /// differs (Redis ran the queued commands), so both servers start over.
    fn run_exec_unsignalled(&mut self, step: usize, op: &Op) {
        let r = self.exec(true, step, op);
        let d = self.exec(false, step, op);
        self.replies += 1;
        // RESP2's null array, RESP3's null.
        let aborted = matches!(r, Frame::Array(_)) && matches!(d, Frame::NullArray | Frame::Null);
        self.judge(step, op, r == d || aborted, &r, &d);
        if aborted {
            self.resync(step, "Redis ran an EXEC over an unsignalled change");
        }
    }

    /// Redis's DUMP of `key` (nil if it does not exist): to see whether a command changed
    /// it. A read, so it fails no WATCH.
    fn redis_dump(&mut self, step: usize, key: &str) -> Frame {
        self.call(true, step, &["DUMP".to_string(), key.to_string()])
    }

    /// Flushes both servers, so that the difference `why` names does not cascade.
    fn resync(&mut self, step: usize, why: &str) {
        self.remember(format!(
            "[{}] ({why}; both servers flushed)",
            step_label(step)
        ));
        for (is_redis, name) in [(true, "redis"), (false, "docdb")] {
            let reply = self.call(is_redis, step, &["FLUSHALL".to_string()]);
            assert_eq!(
                reply,
                Frame::Simple("OK".into()),
                "{name}: FLUSHALL to resync"
            );
        }
    }

    /// Switches both connections to RESP `version` with HELLO (its reply names the server's
    /// version and the client id, which differ, so only the protocol is compared).
    fn use_protocol(&mut self, version: i64) {
        for (client, name) in [(&mut self.redis, "redis"), (&mut self.docdb, "docdb")] {
            let reply = client
                .call(&["HELLO".to_string(), version.to_string()])
                .expect("HELLO");
            let fields = match &reply {
                Frame::Map(fields) if version == 3 => fields.clone(),
                Frame::Array(flat) if version == 2 => flat
                    .chunks(2)
                    .map(|kv| (kv[0].clone(), kv[1].clone()))
                    .collect(),
                _ => panic!("{name}: HELLO {version} replied {}", render(&reply)),
            };
            let proto = (Frame::Bulk(b"proto".to_vec()), Frame::Integer(version));
            assert!(fields.contains(&proto), "{name}: {}", render(&reply));
        }
    }

    /// Reads one more reply from each server (a message pushed before a reply) and
    /// compares them.
    fn read_extra(&mut self, step: usize) {
        let r = self.redis.read_reply().expect("an extra reply from redis");
        let d = self.docdb.read_reply().expect("an extra reply from docdb");
        let op = Op::new(args!["(read the next reply)"], Cmp::Exact);
        self.judge(step, &op, r == d, &r, &d);
    }

    fn remember(&mut self, line: String) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(line);
    }

    fn exec(&mut self, is_redis: bool, step: usize, op: &Op) -> Frame {
        match op.special {
            Special::ScanAll => self.scan_all(is_redis, step, op),
            _ => self.call(is_redis, step, &op.args),
        }
    }

    /// Sends one command; an I/O error (a crash, a closed connection, a reply that does
    /// not parse) ends the test with the seed and step.
    fn call(&mut self, is_redis: bool, step: usize, args: &[String]) -> Frame {
        let (client, name) = if is_redis {
            (&mut self.redis, "redis")
        } else {
            (&mut self.docdb, "docdb")
        };
        client.call(args).unwrap_or_else(|e| {
            panic!(
                "seed {} step {step}: no reply from {name} to {:?}: {e} (a crash, a close, or a \
                 reply the test client cannot parse)\nrecent:\n{}\nmismatches so far:\n{}",
                self.seed,
                args,
                Vec::from(self.history.clone()).join("\n"),
                self.mismatches.join("\n")
            )
        })
    }

    /// SPOP may pop different members. When both popped one, make Redis's set equal
    /// docdb's by putting back what Redis popped and removing what docdb popped; docdb's
    /// pick must have been a member. Otherwise the replies must be equal.
    fn align_spop(&mut self, step: usize, op: &Op, r: &Frame, d: &Frame) -> bool {
        match (r, d) {
            (Frame::Bulk(a), Frame::Bulk(b)) if a != b => {
                let key = op.args[1].clone();
                let (a, b) = (lossless(a), lossless(b));
                self.call(true, step, &["SADD".to_string(), key.clone(), a]);
                self.call(true, step, &["SREM".to_string(), key, b]) == Frame::Integer(1)
            }
            _ => r == d,
        }
    }

    /// Iterates a SCAN-family command to the end; returns the collected elements (or the
    /// first error reply).
    fn scan_all(&mut self, is_redis: bool, step: usize, op: &Op) -> Frame {
        let cursor_at = if op.args[0] == "SCAN" { 1 } else { 2 };
        let mut cursor = "0".to_string();
        let mut items = Vec::new();
        for _ in 0..1000 {
            let mut args = op.args.clone();
            args.insert(cursor_at, cursor.clone());
            match self.call(is_redis, step, &args) {
                Frame::Array(reply) => match reply.as_slice() {
                    [Frame::Bulk(next), Frame::Array(batch)] => {
                        items.extend(batch.iter().cloned());
                        cursor = lossless(next);
                    }
                    _ => return Frame::Error(format!("malformed scan reply {reply:?}")),
                },
                other => return other,
            }
            if cursor == "0" {
                return Frame::Array(dedup(items, op.cmp == Cmp::Pairs));
            }
        }
        Frame::Error("scan did not finish in 1000 calls".into())
    }
}

/// The scan contract allows an element to be returned more than once.
fn dedup(items: Vec<Frame>, pairs: bool) -> Vec<Frame> {
    let width = if pairs { 2 } else { 1 };
    let mut seen: Vec<&[Frame]> = Vec::new();
    for chunk in items.chunks(width) {
        if !seen.contains(&chunk) {
            seen.push(chunk);
        }
    }
    seen.concat()
}

/// The test's own arguments are text, so popped members are too.
fn lossless(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("members in this test are UTF-8")
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs()
}

fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a number")),
    )
}

/// The seeds to run: the one in `DOCDB_DIFF_SEED`, or three new ones.
fn seeds() -> Vec<u64> {
    if let Some(seed) = env_u64("DOCDB_DIFF_SEED") {
        return vec![seed];
    }
    let base = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos() as u64;
    vec![base, base ^ 0x5555_5555, base.rotate_left(17)]
}

/// After a sequence, every key's type, contents and TTL must agree.
fn compare_final_state(pair: &mut Pair) {
    const FINAL: usize = FINAL_STEP;
    for key in ALL_KEYS {
        let kind = pair.run(FINAL, &Op::new(args!["TYPE", *key], Cmp::Exact));
        let dump = match &kind {
            Frame::Simple(t) if t == "string" => Op::new(args!["GET", *key], Cmp::Exact),
            Frame::Simple(t) if t == "hash" => Op::new(args!["HGETALL", *key], Cmp::Pairs),
            Frame::Simple(t) if t == "set" => Op::new(args!["SMEMBERS", *key], Cmp::Unordered),
            Frame::Simple(t) if t == "zset" => {
                Op::new(args!["ZRANGE", *key, "0", "-1", "WITHSCORES"], Cmp::Exact)
            }
            Frame::Simple(t) if t == "list" => {
                Op::new(args!["LRANGE", *key, "0", "-1"], Cmp::Exact)
            }
            _ => continue,
        };
        pair.run(FINAL, &dump);
        pair.run(FINAL, &Op::new(args!["TTL", *key], Cmp::Within(2)));
    }
    pair.run(FINAL, &Op::new(args!["DBSIZE"], Cmp::Exact));
}

fn fail_on_mismatches(mismatches: &[String], replay: &str) {
    assert!(
        mismatches.is_empty(),
        "docdb differs from Redis in {} place(s) (replay: {replay}):\n\n{}",
        mismatches.len(),
        mismatches.join("\n\n")
    );
}

/// Runs `drive` (the pair, its random numbers, the time, the commands to send) for each seed
/// on fresh connections after a FLUSHALL, compares every key's final state, and fails with
/// every mismatch and how to replay it.
fn run_seeds(what: &str, resp3: bool, drive: impl Fn(&mut Pair, &mut Rng, u64, usize)) {
    run_seeds_with(what, resp3, &[], drive);
}

/// [`run_seeds`] against a docdb started with `flags`.
fn run_seeds_with(
    what: &str,
    resp3: bool,
    flags: &[&str],
    drive: impl Fn(&mut Pair, &mut Rng, u64, usize),
) {
    let redis = require_redis(&[]);
    let docdb = docdb(flags);
    let ops = env_u64("DOCDB_DIFF_OPS").unwrap_or(2000) as usize;
    let seeds = seeds();
    eprintln!("redis_diff {what}: seeds {seeds:?}, {ops} commands each");
    let mut mismatches = Vec::new();
    for &seed in &seeds {
        let mut pair = Pair::new(&redis, &docdb, seed);
        if resp3 {
            pair.use_protocol(3);
        }
        pair.run(0, &Op::new(args!["FLUSHALL"], Cmp::Exact));
        drive(&mut pair, &mut Rng::new(seed), unix_now(), ops);
        compare_final_state(&mut pair);
        eprintln!(
            "seed {seed}: {} replies, {} of them errors",
            pair.replies, pair.errors
        );
        mismatches.extend(pair.mismatches);
    }
    let replay = format!("DOCDB_DIFF_SEED=<seed> DOCDB_DIFF_OPS={ops}; seeds {seeds:?}");
    fail_on_mismatches(&mismatches, &replay);
}

/// Random command sequences: every reply from docdb must match Redis's.
#[test]
fn random_commands_match_redis() {
    run_seeds("commands", false, random_commands);
}

/// The same over RESP3 (HELLO 3): maps, sets, doubles, nulls and score pairs as Redis 7
/// sends them.
#[test]
fn random_commands_match_redis_over_resp3() {
    run_seeds("commands over RESP3", true, random_commands);
}

fn random_commands(pair: &mut Pair, rng: &mut Rng, now: u64, ops: usize) {
    for step in 1..=ops {
        if rng.chance(5) {
            run_transaction(pair, rng, now, step);
            continue;
        }
        let op = random_op(rng, now);
        pair.run(step, &op);
        if pair.mismatches.len() >= MAX_MISMATCHES {
            break;
        }
    }
}

/// A random command whose reply compares byte for byte (so it can sit in EXEC's reply).
fn exact_op(rng: &mut Rng, now: u64) -> Op {
    loop {
        let op = random_op(rng, now);
        if op.cmp == Cmp::Exact && op.special == Special::None {
            return op;
        }
    }
}

/// A transaction: sometimes WATCH first (and sometimes a command between WATCH and MULTI,
/// which fails the EXEC when it writes the watched key), MULTI, up to four queued commands
/// (a malformed one makes EXEC refuse), then EXEC or, one time in five, DISCARD.
fn run_transaction(pair: &mut Pair, rng: &mut Rng, now: u64, step: usize) {
    let exact = |args| Op::new(args, Cmp::Exact);
    let mut unsignalled = false;
    if rng.chance(40) {
        let watched = *rng.pick(ALL_KEYS);
        pair.run(step, &exact(args!["WATCH", watched]));
        if rng.chance(50) {
            let before = pair.redis_dump(step, watched);
            let reply = pair.run(step, &exact_op(rng, now));
            // A changed value normally fails the EXEC in both; see `run_exec_unsignalled`.
            unsignalled =
                matches!(reply, Frame::Error(_)) && pair.redis_dump(step, watched) != before;
        }
    }
    pair.run(step, &exact(args!["MULTI"]));
    for _ in 0..rng.below(5) {
        let op = match rng.below(20) {
            // Refused while queueing: the wrong arity, an unknown command.
            0 => exact(args!["GET"]),
            1 => exact(args!["NOSUCHCOMMAND", "x"]),
            _ => alpha_sort(exact_op(rng, now)),
        };
        pair.run(step, &op);
    }
    let end = if rng.chance(20) { "DISCARD" } else { "EXEC" };
    if unsignalled && end == "EXEC" {
        pair.run_exec_unsignalled(step, &exact(args![end]));
    } else {
        pair.run(step, &exact(args![end]));
    }
}

/// Whether `args` is a SORT that reads its elements as numbers (no ALPHA, no BY), which
/// Redis gets wrong after a float out of range (see [`Pair::clear_redis_errno`]).
fn is_numeric_sort(args: &[String]) -> bool {
    let named = |word: &str| args.iter().skip(1).any(|a| a.eq_ignore_ascii_case(word));
    args.first()
        .is_some_and(|c| c.eq_ignore_ascii_case("SORT") || c.eq_ignore_ascii_case("SORT_RO"))
        && !named("ALPHA")
        && !named("BY")
}

/// `op`, sorting by bytes if it is a numeric SORT: in a pipeline or a transaction an
/// earlier command may leave Redis's stale `errno` behind, and no fresh connection can
/// clear it between them (see [`Pair::clear_redis_errno`]).
fn alpha_sort(mut op: Op) -> Op {
    if is_numeric_sort(&op.args) {
        op.args.push("ALPHA".into());
    }
    op
}

/// Random command sequences sent as pipelines of 1–16 commands: a server runs each
/// pipeline's commands as one batch (sharing one engine iterator, re-aimed per document), so
/// every read must still see the writes just before it in the same pipeline.
#[test]
fn random_pipelines_match_redis() {
    run_seeds("pipelines", false, random_pipelines);
}

/// The same over RESP3: a batch's replies, blind-write runs included, in the connection's
/// protocol.
#[test]
fn random_pipelines_match_redis_over_resp3() {
    run_seeds("pipelines over RESP3", true, random_pipelines);
}

/// The same with `--writer-thread on`: write runs leave the connection for the writer, which
/// lands other connections' runs with them, and the requests after a run wait for its
/// replies.
#[test]
fn random_pipelines_match_redis_with_a_writer_thread() {
    let flags = ["--writer-thread", "on", "--threads", "2"];
    run_seeds_with("pipelines, writer thread", false, &flags, random_pipelines);
}

/// The same with `--cache-written on`: what each write stores at a key is also kept in
/// memory, and reads (point-in-time ones included) take it from there.
#[test]
fn random_pipelines_match_redis_with_written_keys_cached() {
    let flags = ["--cache-written", "on", "--writer-thread", "on"];
    run_seeds_with(
        "pipelines, written keys cached",
        false,
        &flags,
        random_pipelines,
    );
}

/// Single commands with `--cache-written on`.
#[test]
fn random_commands_match_redis_with_written_keys_cached() {
    let flags = ["--cache-written", "on"];
    run_seeds_with(
        "commands, written keys cached",
        false,
        &flags,
        random_commands,
    );
}

fn random_pipelines(pair: &mut Pair, rng: &mut Rng, now: u64, ops: usize) {
    let mut step = 1;
    while step <= ops && pair.mismatches.len() < MAX_MISMATCHES {
        let len = 1 + rng.below(16) as usize;
        let mut batch = Vec::with_capacity(len);
        while batch.len() < len {
            // Runs of SET and MSET share one batch in docdb: make them common.
            let op = if rng.chance(30) {
                blind_write_op(rng)
            } else {
                random_op(rng, now)
            };
            if op.special != Special::None {
                // SPOP's pick and SCAN's cursor loop need commands between replies.
                continue;
            }
            batch.push(alpha_sort(op));
        }
        pair.run_pipeline(step, &batch);
        step += len;
    }
}

/// Runs fixed commands on both servers in lock step, sleeping where a step says so.
/// Starts a redis-server and a docdb, runs `script` on both in lock step, and fails with
/// every mismatch.
fn lockstep(script: &[Step]) {
    let redis = require_redis(&[]);
    let docdb = docdb(&[]);
    let mut pair = Pair::new(&redis, &docdb, 0);
    for (i, step) in script.iter().enumerate() {
        match step {
            Step::Sleep(ms) => std::thread::sleep(Duration::from_millis(*ms)),
            Step::Run(words, cmp) => {
                let args = words.iter().map(|w| w.to_string()).collect();
                pair.run(i, &Op::new(args, *cmp));
            }
            Step::Read => pair.read_extra(i),
            Step::Hello(version) => pair.use_protocol(*version),
        }
    }
    fail_on_mismatches(&pair.mismatches, "the fixed script");
}

enum Step {
    Run(&'static [&'static str], Cmp),
    Sleep(u64),
    /// Reads one more reply on each connection.
    Read,
    /// Switches both connections' protocol (HELLO 2 or HELLO 3).
    Hello(i64),
}

use Step::{Hello, Read, Run, Sleep};

const EXACT: Cmp = Cmp::Exact;

/// Keys with 1–2 s TTLs, read after they lapse: expired keys read as absent under every
/// type, TTL-clearing and TTL-keeping writes behave as in Redis, RENAME carries the TTL, and
/// a key an EXPIRE kept alive past its own TTL takes a later EXPIRE or PERSIST.
#[test]
fn expiry_after_sleeping_matches_redis() {
    let script = [
        Run(&["SET", "e1", "v", "EX", "1"], EXACT),
        Run(&["SET", "e2", "v", "PX", "1500"], EXACT),
        Run(&["SETEX", "e3", "1", "v"], EXACT),
        Run(&["PSETEX", "e4", "900", "v"], EXACT),
        Run(&["SET", "e5", "v"], EXACT),
        Run(&["EXPIRE", "e5", "1"], EXACT),
        Run(&["SET", "e6", "v"], EXACT),
        Run(&["PEXPIRE", "e6", "1200"], EXACT),
        Run(&["SET", "keep1", "v", "EX", "1"], EXACT),
        Run(&["PERSIST", "keep1"], EXACT),
        Run(&["SET", "keep2", "v", "EX", "1"], EXACT),
        Run(&["SET", "keep2", "w"], EXACT),
        Run(&["SET", "keep3", "v", "EX", "1"], EXACT),
        Run(&["GETSET", "keep3", "w"], EXACT),
        Run(&["SET", "a1", "5", "EX", "1"], EXACT),
        Run(&["INCR", "a1"], EXACT),
        Run(&["APPEND", "a1", "0"], EXACT),
        Run(&["SET", "r1", "v", "EX", "1"], EXACT),
        Run(&["RENAME", "r1", "r2"], EXACT),
        Run(&["RPUSH", "l1", "a", "b"], EXACT),
        Run(&["EXPIRE", "l1", "1"], EXACT),
        Run(&["HSET", "h1", "f", "v"], EXACT),
        Run(&["PEXPIRE", "h1", "1000"], EXACT),
        Run(&["SADD", "s1", "m"], EXACT),
        Run(&["EXPIRE", "s1", "1"], EXACT),
        Run(&["ZADD", "z1", "1", "m"], EXACT),
        Run(&["EXPIRE", "z1", "1"], EXACT),
        Run(&["SET", "long", "v", "EX", "100"], EXACT),
        Run(&["TTL", "e1"], Cmp::Within(1)),
        Run(&["PTTL", "e2"], Cmp::Within(300)),
        Run(&["TTL", "keep1"], EXACT),
        Run(&["TTL", "keep2"], EXACT),
        Run(&["TTL", "keep3"], EXACT),
        Run(&["TTL", "a1"], Cmp::Within(1)),
        Run(&["TTL", "r2"], Cmp::Within(1)),
        Run(&["TTL", "r1"], EXACT),
        Run(&["EXPIRE", "nokey", "1"], EXACT),
        Run(&["PERSIST", "keep1"], EXACT),
        // Kept alive past their own TTL by an EXPIRE, then restated again after it.
        Run(&["SET", "c1", "v", "PX", "1000"], EXACT),
        Run(&["PEXPIRE", "c1", "60000"], EXACT),
        Run(&["SET", "c2", "v", "PX", "1000"], EXACT),
        Run(&["PEXPIRE", "c2", "60000"], EXACT),
        Sleep(2100),
        Run(&["EXPIRE", "c1", "100"], EXACT),
        Run(&["TTL", "c1"], Cmp::Within(1)),
        Run(&["GET", "c1"], EXACT),
        Run(&["PERSIST", "c2"], EXACT),
        Run(&["TTL", "c2"], EXACT),
        Run(&["GET", "c2"], EXACT),
        Run(&["GET", "e1"], EXACT),
        Run(&["GET", "e2"], EXACT),
        Run(&["GET", "e3"], EXACT),
        Run(&["GET", "e4"], EXACT),
        Run(&["EXISTS", "e5", "e6"], EXACT),
        Run(&["GET", "a1"], EXACT),
        Run(&["GET", "r2"], EXACT),
        Run(&["TYPE", "l1"], EXACT),
        Run(&["LRANGE", "l1", "0", "-1"], EXACT),
        Run(&["LLEN", "l1"], EXACT),
        Run(&["HGETALL", "h1"], Cmp::Pairs),
        Run(&["HGET", "h1", "f"], EXACT),
        Run(&["SMEMBERS", "s1"], Cmp::Unordered),
        Run(&["SISMEMBER", "s1", "m"], EXACT),
        Run(&["ZRANGE", "z1", "0", "-1"], EXACT),
        Run(&["ZSCORE", "z1", "m"], EXACT),
        Run(&["TTL", "e1"], EXACT),
        Run(&["PTTL", "e2"], EXACT),
        Run(&["GET", "keep1"], EXACT),
        Run(&["GET", "keep2"], EXACT),
        Run(&["GET", "keep3"], EXACT),
        Run(&["TTL", "long"], Cmp::Within(1)),
        Run(&["KEYS", "*"], Cmp::Unordered),
        Run(&["DBSIZE"], EXACT),
        // An expired key is gone for every write too: these start fresh values.
        Run(&["SET", "e1", "new"], EXACT),
        Run(&["TTL", "e1"], EXACT),
        Run(&["INCR", "e2"], EXACT),
        Run(&["RPUSH", "l1", "c"], EXACT),
        Run(&["LRANGE", "l1", "0", "-1"], EXACT),
        Run(&["SETNX", "e3", "x"], EXACT),
        Run(&["EXPIRE", "e4", "10"], EXACT),
        Run(&["RENAME", "e5", "e7"], EXACT),
        Run(&["DBSIZE"], EXACT),
    ];
    lockstep(&script);
}

/// Floating-point replies must be formatted exactly as Redis formats them (INCRBYFLOAT with
/// long-double arithmetic and trailing zeros trimmed; scores with `%.17g`).
///
/// A score of -0 is left out: Redis answers "0" for a small (listpack) sorted set and "-0"
/// for a large (skiplist) one.
#[test]
fn float_formatting_matches_redis() {
    let script = [
        Run(&["INCRBYFLOAT", "f", "0.1"], EXACT),
        Run(&["INCRBYFLOAT", "f", "0.1"], EXACT),
        Run(&["INCRBYFLOAT", "f", "0.1"], EXACT),
        Run(&["INCRBYFLOAT", "f", "-0.3"], EXACT),
        Run(&["SET", "g", "10.50"], EXACT),
        Run(&["INCRBYFLOAT", "g", "0.1"], EXACT),
        Run(&["INCRBYFLOAT", "g", "-5.0e3"], EXACT),
        Run(&["INCRBYFLOAT", "g", "1e20"], EXACT),
        Run(&["INCRBYFLOAT", "h", "3"], EXACT),
        Run(&["INCRBYFLOAT", "h", "1.5e-7"], EXACT),
        Run(&["INCRBYFLOAT", "i", "5.0e3"], EXACT),
        Run(&["INCRBYFLOAT", "j", "1e300"], EXACT),
        Run(&["INCRBYFLOAT", "j", "1e300"], EXACT),
        Run(&["INCRBYFLOAT", "k", "inf"], EXACT),
        Run(&["INCRBYFLOAT", "k", "x"], EXACT),
        Run(&["SET", "n", "9007199254740993"], EXACT),
        Run(&["INCRBYFLOAT", "n", "0"], EXACT),
        Run(&["ZADD", "z", "0.1", "a"], EXACT),
        Run(&["ZADD", "z", "1e100", "b"], EXACT),
        Run(&["ZADD", "z", "123456789012345678", "c"], EXACT),
        Run(&["ZADD", "z", "4503599627370496", "e"], EXACT),
        Run(&["ZADD", "z", "1.5", "f"], EXACT),
        Run(&["ZADD", "z", "3.0000000000000004", "g"], EXACT),
        Run(&["ZADD", "z", "-inf", "h", "+inf", "i"], EXACT),
        Run(&["ZADD", "z", "1e-10", "j"], EXACT),
        Run(&["ZADD", "z", "INCR", "0.2", "a"], EXACT),
        Run(&["ZSCORE", "z", "a"], EXACT),
        Run(&["ZSCORE", "z", "b"], EXACT),
        Run(&["ZSCORE", "z", "c"], EXACT),
        Run(&["ZSCORE", "z", "e"], EXACT),
        Run(&["ZSCORE", "z", "g"], EXACT),
        Run(&["ZSCORE", "z", "h"], EXACT),
        Run(&["ZSCORE", "z", "i"], EXACT),
        Run(&["ZSCORE", "z", "j"], EXACT),
        Run(&["ZRANGE", "z", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZRANGEBYSCORE", "z", "(0", "+inf", "WITHSCORES"], EXACT),
        Run(&["ZPOPMIN", "z", "3"], EXACT),
        Run(&["ZADD", "z", "nan", "x"], EXACT),
        Run(&["ZADD", "z", "INCR", "+inf", "i"], EXACT),
        Run(&["ZADD", "z", "INCR", "-inf", "i"], EXACT),
    ];
    lockstep(&script);
}

/// A STORE command whose empty result lands on a missing key writes nothing, so a WATCH
/// on that key holds; over a live key, or with members, it fails the EXEC.
#[test]
fn store_commands_touch_a_watched_key_as_redis_does() {
    let script = [
        Run(&["WATCH", "s9", "z9"], EXACT),
        Run(&["SUNIONSTORE", "s9", "s1", "s2"], EXACT),
        Run(&["SINTERSTORE", "s9", "s1"], EXACT),
        Run(&["ZUNIONSTORE", "z9", "2", "z1", "z2"], EXACT),
        Run(&["ZDIFFSTORE", "z9", "1", "z1"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["SET", "k", "1"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["SADD", "s8", "a"], EXACT),
        Run(&["WATCH", "s8"], EXACT),
        Run(&["SDIFFSTORE", "s8", "nokey"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["SET", "k", "2"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["ZADD", "z1", "1", "a"], EXACT),
        Run(&["WATCH", "z7"], EXACT),
        Run(&["ZINTERSTORE", "z7", "1", "z1"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["SET", "k", "3"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["GET", "k"], EXACT),
        Run(&["KEYS", "*"], Cmp::Unordered),
    ];
    lockstep(&script);
}

/// Writes that change nothing leave a WATCH standing in Redis (it signals only keys a command
/// modified), while a few that leave the value as it was still count as changes. Each case
/// WATCHes keys, runs one such command and EXECs: docdb must run the EXEC exactly when Redis
/// does.
#[test]
fn no_op_writes_keep_a_watch_as_redis_does() {
    let setup: &[&'static [&'static str]] = &[
        &["SADD", "s1", "a", "b"],
        &["SADD", "s2", "a"],
        &["ZADD", "z1", "1", "a"],
        &["HSET", "h1", "f", "v"],
        &["RPUSH", "l1", "a", "b"],
        &["SET", "str", "hello"],
    ];
    // (the WATCH, the command that leaves its keys as they were)
    let cases: &[(&'static [&'static str], &'static [&'static str])] = &[
        (&["WATCH", "s2"], &["SMOVE", "s1", "s2", "a"]),
        (&["WATCH", "s1"], &["SMOVE", "s1", "s1", "b"]),
        (&["WATCH", "s2"], &["SADD", "s2", "a"]),
        (&["WATCH", "s2"], &["SREM", "s2", "zz"]),
        (&["WATCH", "z1"], &["ZADD", "z1", "1", "a"]),
        (&["WATCH", "z1"], &["ZINCRBY", "z1", "0", "a"]),
        (&["WATCH", "z1"], &["ZREM", "z1", "zz"]),
        (&["WATCH", "z1"], &["ZREMRANGEBYSCORE", "z1", "5", "9"]),
        (&["WATCH", "h1"], &["HSETNX", "h1", "f", "x"]),
        (&["WATCH", "h1"], &["HDEL", "h1", "zz"]),
        (&["WATCH", "l1"], &["LREM", "l1", "0", "zz"]),
        (&["WATCH", "str"], &["SETRANGE", "str", "0", ""]),
        (&["WATCH", "str"], &["SETNX", "str", "x"]),
        (&["WATCH", "str"], &["PERSIST", "str"]),
        (&["WATCH", "str"], &["RENAME", "str", "str"]),
        (&["WATCH", "nokey"], &["EXPIRE", "nokey", "10"]),
        (&["WATCH", "nokey"], &["DEL", "nokey"]),
        (&["WATCH", "nokey"], &["LPUSHX", "nokey", "a"]),
        (&["WATCH", "nokey"], &["SPOP", "nokey"]),
        (&["WATCH", "nokey"], &["RPUSHX", "nokey", "a"]),
        (&["WATCH", "str"], &["GETEX", "str", "PERSIST"]),
        (&["WATCH", "z1"], &["ZADD", "z1", "XX", "2", "zz"]),
        (&["WATCH", "z1"], &["ZADD", "z1", "NX", "5", "a"]),
        (&["WATCH", "l1"], &["LINSERT", "l1", "BEFORE", "zz", "x"]),
        (
            &["WATCH", "l1", "nokey"],
            &["LMOVE", "nokey", "l1", "LEFT", "LEFT"],
        ),
        (&["WATCH", "s2", "nokey"], &["SMOVE", "nokey", "s2", "a"]),
        (&["WATCH", "h1"], &["RENAMENX", "str", "h1"]),
        (&["WATCH", "h1"], &["COPY", "str", "h1"]),
        (&["WATCH", "str"], &["RENAMENX", "str", "str"]),
        (&["WATCH", "s1"], &["SPOP", "s1", "0"]),
        (&["WATCH", "l1"], &["LPOP", "l1", "0"]),
        (&["WATCH", "z1"], &["ZPOPMIN", "z1", "0"]),
        (&["WATCH", "z1"], &["ZREMRANGEBYRANK", "z1", "5", "9"]),
        (&["WATCH", "str"], &["SET", "str", "v", "NX"]),
        (&["WATCH", "nokey"], &["SET", "nokey", "v", "XX"]),
        (&["WATCH", "nokey"], &["GETDEL", "nokey"]),
        (&["WATCH", "str"], &["EXPIRE", "str", "100", "XX"]),
        (&["WATCH", "nokey"], &["MSETNX", "str", "x", "nokey", "y"]),
        // Redis counts these as modifications though the value stays the same.
        (&["WATCH", "l1"], &["LTRIM", "l1", "0", "-1"]),
        (&["WATCH", "str"], &["APPEND", "str", ""]),
        (&["WATCH", "str"], &["SETRANGE", "str", "0", "h"]),
        (&["WATCH", "h1"], &["HSET", "h1", "f", "v"]),
        (&["WATCH", "l1"], &["LSET", "l1", "0", "a"]),
        (&["WATCH", "z1"], &["ZINCRBY", "z1", "1", "a"]),
        (&["WATCH", "runs"], &["INCRBY", "runs", "0"]),
        (&["WATCH", "nokey"], &["FLUSHDB"]),
    ];
    let mut script: Vec<Step> = setup.iter().map(|c| Run(c, EXACT)).collect();
    for (watch, command) in cases {
        script.push(Run(watch, EXACT));
        script.push(Run(command, EXACT));
        script.push(Run(&["MULTI"], EXACT));
        script.push(Run(&["INCR", "runs"], EXACT));
        script.push(Run(&["EXEC"], EXACT));
    }
    script.push(Run(&["GET", "runs"], EXACT));
    lockstep(&script);
}

/// RENAMENX, COPY and MOVE of every type, with and without a live destination, across
/// databases, keeping TTLs; SUBSTR; RANDOMKEY where only one key can come out.
#[test]
fn copy_move_and_renamenx_match_redis() {
    let within = Cmp::Within(2);
    let script = [
        Run(&["RANDOMKEY"], EXACT),
        Run(&["SET", "s", "hello", "EX", "100"], EXACT),
        Run(&["RANDOMKEY"], EXACT),
        Run(&["SUBSTR", "s", "1", "-2"], EXACT),
        Run(&["HSET", "h", "f", "v", "g", "w"], EXACT),
        Run(&["RPUSH", "l", "a", "b", "c"], EXACT),
        Run(&["ZADD", "z", "1", "a", "2", "b"], EXACT),
        Run(&["SADD", "set", "x", "y"], EXACT),
        Run(&["RENAMENX", "s", "h"], EXACT),
        Run(&["RENAMENX", "s", "s"], EXACT),
        Run(&["RENAMENX", "nokey", "x"], EXACT),
        Run(&["RENAMENX", "s", "s2"], EXACT),
        Run(&["GET", "s2"], EXACT),
        Run(&["TTL", "s2"], within),
        Run(&["EXISTS", "s"], EXACT),
        Run(&["COPY", "s2", "s2"], EXACT),
        Run(&["COPY", "nokey", "x"], EXACT),
        Run(&["COPY", "h", "l"], EXACT),
        Run(&["COPY", "h", "h2"], EXACT),
        Run(&["HGETALL", "h2"], Cmp::Pairs),
        Run(&["HSET", "h2", "f", "changed"], EXACT),
        Run(&["HGET", "h", "f"], EXACT),
        Run(&["COPY", "l", "h", "REPLACE"], EXACT),
        Run(&["LRANGE", "h", "0", "-1"], EXACT),
        Run(&["RPUSH", "h", "d"], EXACT),
        Run(&["LRANGE", "l", "0", "-1"], EXACT),
        Run(&["COPY", "z", "z2", "BOGUS"], EXACT),
        Run(&["COPY", "z", "z2", "DB", "1"], EXACT),
        Run(&["COPY", "s2", "s3", "DB", "99"], EXACT),
        Run(&["MOVE", "set", "0"], EXACT),
        Run(&["MOVE", "set", "99"], EXACT),
        Run(&["MOVE", "nokey", "1"], EXACT),
        Run(&["MOVE", "set", "1"], EXACT),
        Run(&["MOVE", "s2", "1"], EXACT),
        Run(&["EXISTS", "set", "s2"], EXACT),
        Run(&["SELECT", "1"], EXACT),
        Run(&["ZRANGE", "z2", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["SMEMBERS", "set"], Cmp::Unordered),
        Run(&["TTL", "s2"], within),
        Run(&["SET", "back", "1"], EXACT),
        Run(&["MOVE", "back", "0"], EXACT),
        Run(&["SELECT", "0"], EXACT),
        Run(&["SET", "back", "2"], EXACT),
        Run(&["SELECT", "1"], EXACT),
        Run(&["SET", "back", "3"], EXACT),
        Run(&["MOVE", "back", "0"], EXACT),
        Run(&["GET", "back"], EXACT),
        Run(&["SELECT", "0"], EXACT),
        Run(&["GET", "back"], EXACT),
        Run(&["KEYS", "*"], Cmp::Unordered),
    ];
    lockstep(&script);
}

/// The bitmap commands' edge cases: SETBIT's and GETBIT's offset and bit checks (in Redis's
/// order, before the type), BITCOUNT's and BITPOS's ranges and special cases, BITOP's
/// destination (replaced without a TTL, deleted by an empty result), BITFIELD's types,
/// `#` offsets, overflow modes and errors, BITFIELD_RO, kept TTLs, and which of them
/// touch a WATCHed key.
#[test]
fn bitmap_commands_match_redis() {
    let within = Cmp::Within(2);
    let script = [
        Run(&["RPUSH", "list", "a"], EXACT),
        Run(&["SETBIT", "b", "7", "1"], EXACT),
        Run(&["SETBIT", "b", "7", "0"], EXACT),
        Run(&["GET", "b"], EXACT),
        Run(&["SETBIT", "b", "17", "1"], EXACT),
        Run(&["GET", "b"], EXACT),
        Run(&["SETBIT", "b", "4294967296", "1"], EXACT),
        Run(&["SETBIT", "b", "-1", "1"], EXACT),
        Run(&["SETBIT", "b", "x", "1"], EXACT),
        Run(&["SETBIT", "b", "1", "2"], EXACT),
        Run(&["SETBIT", "b", "1", "-1"], EXACT),
        Run(&["SETBIT", "b", "1", "x"], EXACT),
        Run(&["SETBIT", "list", "x", "1"], EXACT),
        Run(&["SETBIT", "list", "1", "x"], EXACT),
        Run(&["SETBIT", "list", "1", "1"], EXACT),
        Run(&["SETBIT", "b", "1\u{0}junk", "1"], EXACT),
        Run(&["GETBIT", "b", "1"], EXACT),
        Run(&["GETBIT", "list", "x"], EXACT),
        Run(&["GETBIT", "list", "1"], EXACT),
        Run(&["GETBIT", "nokey", "5"], EXACT),
        Run(&["GETBIT", "b", "4294967295"], EXACT),
        Run(&["GETBIT", "b", "4294967296"], EXACT),
        // Integers are strings to the bit commands.
        Run(&["SET", "n", "10"], EXACT),
        Run(&["SETBIT", "n", "1", "0"], EXACT),
        Run(&["GETBIT", "n", "2"], EXACT),
        Run(&["GET", "n"], EXACT),
        // The TTL stays.
        Run(&["SET", "t", "abc", "EX", "100"], EXACT),
        Run(&["SETBIT", "t", "100", "1"], EXACT),
        Run(&["TTL", "t"], within),
        Run(&["BITFIELD", "t", "SET", "u8", "0", "65"], EXACT),
        Run(&["TTL", "t"], within),
        Run(&["GET", "t"], EXACT),
        // BITCOUNT: redis.io's examples, then ranges and argument checks.
        Run(&["SET", "f", "foobar"], EXACT),
        Run(&["BITCOUNT", "f"], EXACT),
        Run(&["BITCOUNT", "f", "0", "0"], EXACT),
        Run(&["BITCOUNT", "f", "1", "1"], EXACT),
        Run(&["BITCOUNT", "f", "1", "1", "BYTE"], EXACT),
        Run(&["BITCOUNT", "f", "5", "30", "BIT"], EXACT),
        Run(&["BITCOUNT", "f", "-30", "-26", "bit"], EXACT),
        Run(&["BITCOUNT", "f", "-5", "-6"], EXACT),
        Run(&["BITCOUNT", "f", "-100", "100"], EXACT),
        Run(&["BITCOUNT", "f", "-1", "-2", "FOO"], EXACT),
        Run(&["BITCOUNT", "f", "1", "2", "FOO"], EXACT),
        Run(&["BITCOUNT", "f", "1"], EXACT),
        Run(&["BITCOUNT", "f", "1", "2", "BIT", "x"], EXACT),
        Run(&["BITCOUNT", "f", "x", "1"], EXACT),
        Run(&["BITCOUNT", "nokey", "x"], EXACT),
        Run(&["BITCOUNT", "list", "x"], EXACT),
        Run(&["SET", "empty", ""], EXACT),
        Run(&["BITCOUNT", "empty", "0", "-1"], EXACT),
        // BITPOS: redis.io's examples, then the special cases.
        Run(&["SETRANGE", "p", "0", "\u{0}"], EXACT),
        Run(&["SETBIT", "p", "8", "1"], EXACT),
        Run(&["BITFIELD", "p", "SET", "u16", "9", "65504"], EXACT),
        Run(&["GET", "p"], EXACT),
        Run(&["BITPOS", "p", "1", "0"], EXACT),
        Run(&["BITPOS", "p", "1", "2"], EXACT),
        Run(&["BITPOS", "p", "1", "2", "-1", "BYTE"], EXACT),
        Run(&["BITPOS", "p", "1", "7", "15", "BIT"], EXACT),
        Run(&["BITPOS", "p", "0", "7", "15", "bit"], EXACT),
        Run(&["BITPOS", "p", "0"], EXACT),
        Run(&["SETBIT", "ones", "23", "1"], EXACT),
        Run(&["BITOP", "NOT", "ones", "ones"], EXACT),
        Run(&["BITOP", "NOT", "ones", "ones"], EXACT),
        Run(&["BITFIELD", "ones", "SET", "i24", "0", "-1"], EXACT),
        Run(&["BITPOS", "ones", "0"], EXACT),
        Run(&["BITPOS", "ones", "0", "1"], EXACT),
        Run(&["BITPOS", "ones", "0", "1", "-1"], EXACT),
        Run(&["BITPOS", "ones", "0", "0", "-1", "BIT"], EXACT),
        Run(&["BITPOS", "ones", "0", "5"], EXACT),
        Run(&["BITPOS", "ones", "1", "-100"], EXACT),
        Run(&["BITPOS", "ones", "1", "-5", "-6"], EXACT),
        Run(&["BITPOS", "ones", "1", "-5", "-6", "BIT"], EXACT),
        Run(&["BITPOS", "f", "1", "-30", "-26", "BIT"], EXACT),
        Run(&["BITPOS", "f", "0", "5", "30", "BIT"], EXACT),
        Run(&["BITPOS", "empty", "0"], EXACT),
        Run(&["BITPOS", "empty", "1"], EXACT),
        Run(&["BITPOS", "nokey", "1", "x", "y"], EXACT),
        Run(&["BITPOS", "nokey", "0"], EXACT),
        Run(&["BITPOS", "nokey", "2"], EXACT),
        Run(&["BITPOS", "f", "x"], EXACT),
        Run(&["BITPOS", "list", "1", "x"], EXACT),
        Run(&["BITPOS", "f", "1", "x"], EXACT),
        Run(&["BITPOS", "f", "1", "0", "x"], EXACT),
        Run(&["BITPOS", "f", "1", "0", "1", "x"], EXACT),
        Run(&["BITPOS", "f", "1", "0", "x", "BIT"], EXACT),
        Run(&["BITPOS", "f", "1", "0", "1", "BIT", "x"], EXACT),
        // BITOP: redis.io's example, missing and empty sources, the destination's fate.
        Run(&["SET", "k2", "abcdef"], EXACT),
        Run(&["BITOP", "AND", "dest", "f", "k2"], EXACT),
        Run(&["GET", "dest"], EXACT),
        Run(&["BITOP", "or", "dest", "f", "nokey", "ones"], EXACT),
        Run(&["GET", "dest"], EXACT),
        Run(&["BITOP", "XOR", "dest", "f", "f", "p"], EXACT),
        Run(&["GET", "dest"], EXACT),
        Run(&["BITOP", "NOT", "dest", "f", "k2"], EXACT),
        Run(&["BITOP", "NAND", "dest", "f"], EXACT),
        Run(&["BITOP", "AND", "dest", "list"], EXACT),
        Run(&["BITOP", "AND", "dest", "f", "list"], EXACT),
        Run(&["EXPIRE", "dest", "100"], EXACT),
        Run(&["BITOP", "NOT", "dest", "n"], EXACT),
        Run(&["GET", "dest"], EXACT),
        Run(&["TTL", "dest"], EXACT),
        Run(&["BITOP", "AND", "list", "f"], EXACT),
        Run(&["TYPE", "list"], EXACT),
        Run(&["BITOP", "AND", "dest", "nokey", "empty"], EXACT),
        Run(&["EXISTS", "dest"], EXACT),
        Run(&["BITOP", "OR", "nokey2", "nokey"], EXACT),
        Run(&["EXISTS", "nokey2"], EXACT),
        Run(&["DEL", "list"], EXACT),
        Run(&["RPUSH", "list", "a"], EXACT),
        // BITFIELD: redis.io's examples.
        Run(
            &[
                "BITFIELD", "bf", "INCRBY", "i5", "100", "1", "GET", "u4", "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "BITFIELD", "mk", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2",
                "102", "1",
            ],
            EXACT,
        ),
        Run(
            &[
                "BITFIELD", "mk", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2",
                "102", "1",
            ],
            EXACT,
        ),
        Run(
            &[
                "BITFIELD", "mk", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2",
                "102", "1",
            ],
            EXACT,
        ),
        Run(
            &[
                "BITFIELD", "mk", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2",
                "102", "1",
            ],
            EXACT,
        ),
        Run(
            &[
                "BITFIELD", "mk", "OVERFLOW", "FAIL", "incrby", "u2", "102", "1",
            ],
            EXACT,
        ),
        Run(&["GET", "mk"], EXACT),
        // Types, widths and `#` offsets.
        Run(
            &[
                "BITFIELD", "ones", "GET", "i8", "0", "GET", "u1", "0", "GET", "i64", "0", "GET",
                "u63", "#0", "GET", "i3", "22", "GET", "u8", "20", "get", "i16", "#1",
            ],
            EXACT,
        ),
        Run(&["BITFIELD", "ones", "GET", "u8", "4294967295"], EXACT),
        Run(&["BITFIELD", "ones", "GET", "u8", "#536870911"], EXACT),
        Run(&["BITFIELD", "ones", "GET", "u8", "#536870912"], EXACT),
        Run(
            &["BITFIELD", "ones", "GET", "i8", "#9223372036854775807"],
            EXACT,
        ),
        Run(
            &[
                "BITFIELD",
                "w",
                "SET",
                "i8",
                "#1",
                "-9223372036854775808",
                "OVERFLOW",
                "SAT",
                "SET",
                "i8",
                "#2",
                "-9223372036854775808",
                "SET",
                "i8",
                "#3",
                "-129",
                "SET",
                "i64",
                "32",
                "9223372036854775807",
                "INCRBY",
                "i64",
                "32",
                "1",
                "OVERFLOW",
                "WRAP",
                "INCRBY",
                "i64",
                "32",
                "1",
                "GET",
                "i64",
                "32",
            ],
            EXACT,
        ),
        Run(&["GET", "w"], EXACT),
        Run(
            &[
                "BITFIELD",
                "w",
                "OVERFLOW",
                "sat",
                "INCRBY",
                "u63",
                "0",
                "9223372036854775807",
                "INCRBY",
                "u63",
                "0",
                "-9223372036854775808",
                "OVERFLOW",
                "wrap",
                "INCRBY",
                "u63",
                "0",
                "-1",
                "INCRBY",
                "u63",
                "0",
                "-9223372036854775808",
                "SET",
                "u8",
                "0",
                "-1",
                "OVERFLOW",
                "SAT",
                "SET",
                "u8",
                "8",
                "-1",
                "SET",
                "u4",
                "16",
                "300",
            ],
            EXACT,
        ),
        Run(&["GET", "w"], EXACT),
        // Errors, each stopping the command before anything is written.
        Run(&["BITFIELD", "f", "GET", "u64", "0"], EXACT),
        Run(&["BITFIELD", "f", "GET", "U8", "0"], EXACT),
        Run(&["BITFIELD", "f", "GET", "i0", "0"], EXACT),
        Run(
            &["BITFIELD", "f", "SET", "u8", "0", "1", "GET", "i65", "0"],
            EXACT,
        ),
        Run(&["BITFIELD", "f", "GET", "u8", "-1"], EXACT),
        Run(&["BITFIELD", "f", "GET", "u8", "#"], EXACT),
        Run(&["BITFIELD", "f", "SET", "u8", "0", "x"], EXACT),
        Run(&["BITFIELD", "f", "INCRBY", "u8", "0", "1.5"], EXACT),
        Run(
            &["BITFIELD", "f", "OVERFLOW", "bad", "GET", "u8", "0"],
            EXACT,
        ),
        Run(&["BITFIELD", "f", "GET", "u8"], EXACT),
        Run(&["BITFIELD", "f", "SET", "u8", "0"], EXACT),
        Run(&["BITFIELD", "f", "GET", "u8", "0", "OVERFLOW"], EXACT),
        Run(&["BITFIELD", "f", "FOO"], EXACT),
        Run(&["BITFIELD", "list", "FOO"], EXACT),
        Run(&["BITFIELD", "list", "GET", "u8", "0"], EXACT),
        Run(&["BITFIELD", "list"], EXACT),
        Run(&["BITFIELD", "list", "SET", "u8", "0", "1"], EXACT),
        Run(&["GET", "f"], EXACT),
        Run(&["BITFIELD", "f"], EXACT),
        Run(&["BITFIELD", "nokey"], EXACT),
        Run(&["BITFIELD", "nokey", "GET", "u8", "100"], EXACT),
        Run(&["EXISTS", "nokey"], EXACT),
        // A write refused by OVERFLOW FAIL still creates the key, grown to the field.
        Run(
            &[
                "BITFIELD", "grown", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "10",
            ],
            EXACT,
        ),
        Run(&["STRLEN", "grown"], EXACT),
        Run(
            &["BITFIELD_RO", "f", "GET", "u8", "0", "GET", "i4", "#3"],
            EXACT,
        ),
        Run(&["BITFIELD_RO", "f", "SET", "u8", "0", "1"], EXACT),
        Run(
            &["BITFIELD_RO", "f", "GET", "u8", "0", "SET", "u8", "x", "1"],
            EXACT,
        ),
        Run(&["BITFIELD_RO", "list", "INCRBY", "u8", "0", "1"], EXACT),
        Run(&["BITFIELD_RO", "list", "GET", "u8", "0"], EXACT),
        Run(&["BITFIELD_RO", "nokey"], EXACT),
        // WATCH: SETBIT and BITFIELD signal the key when they change a bit or create or grow
        // the string, not otherwise; BITOP always does when it stores a result, and when it
        // deletes the destination.
        Run(&["WATCH", "f"], EXACT),
        Run(&["SETBIT", "f", "0", "0"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["WATCH", "f"], EXACT),
        Run(&["SETBIT", "f", "1", "0"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["SETBIT", "f", "1", "1"], EXACT),
        Run(&["WATCH", "f"], EXACT),
        Run(&["SETBIT", "f", "100", "0"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["WATCH", "f"], EXACT),
        Run(&["BITFIELD", "f", "GET", "u8", "0"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["WATCH", "f"], EXACT),
        Run(
            &[
                "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000",
            ],
            EXACT,
        ),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["WATCH", "f"], EXACT),
        Run(
            &[
                "BITFIELD", "f", "SET", "u8", "0", "102", "INCRBY", "i4", "4", "0",
            ],
            EXACT,
        ),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["WATCH", "f"], EXACT),
        Run(
            &[
                "BITFIELD", "f", "SET", "u8", "0", "1", "SET", "u8", "0", "102",
            ],
            EXACT,
        ),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["WATCH", "f"], EXACT),
        Run(&["BITFIELD", "f", "SET", "u8", "200", "0"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["GET", "f"], EXACT),
        Run(&["WATCH", "nokey"], EXACT),
        Run(&["BITOP", "AND", "nokey", "nokey2"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["BITOP", "OR", "dest", "f"], EXACT),
        Run(&["WATCH", "dest"], EXACT),
        Run(&["BITOP", "OR", "dest", "f"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["WATCH", "dest"], EXACT),
        Run(&["BITOP", "OR", "dest", "nokey"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["INCR", "runs"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["GET", "runs"], EXACT),
        // Inside a transaction, and over RESP3 (a refused write is a null).
        Run(&["MULTI"], EXACT),
        Run(&["SETBIT", "tx", "3", "1"], EXACT),
        Run(
            &[
                "BITFIELD", "tx", "OVERFLOW", "FAIL", "INCRBY", "u4", "0", "100",
            ],
            EXACT,
        ),
        Run(&["BITCOUNT", "tx"], EXACT),
        Run(&["BITPOS", "tx", "1"], EXACT),
        Run(&["EXEC"], EXACT),
        Hello(3),
        Run(
            &[
                "BITFIELD", "tx", "OVERFLOW", "FAIL", "INCRBY", "u4", "0", "100",
            ],
            EXACT,
        ),
        Run(&["BITFIELD_RO", "tx", "GET", "u4", "0"], EXACT),
        Hello(2),
        Run(&["KEYS", "*"], Cmp::Unordered),
    ];
    lockstep(&script);
}

/// A [`Step::Run`] of a command written as one line of space-separated words.
fn run_line(text: &'static str, cmp: Cmp) -> Step {
    let words: Vec<&'static str> = text.split(' ').collect();
    Run(Box::leak(words.into_boxed_slice()), cmp)
}

/// The GEO commands against Redis: scores, positions, hashes and distances (redis.io's
/// Sicily, the poles' and the antimeridian's limits, sorted-set scores that are not
/// geohashes), every option of the searches and the STORE forms (their results read back),
/// each argument error in Redis's order, missing keys and members, wrong types, points on a
/// search radius's edge and on a box's, COUNT's order of equal distances, and RESP3.
#[test]
fn geo_commands_match_redis() {
    let set = Cmp::Unordered;
    let script = [
        run_line("RPUSH list a", EXACT),
        // GEOADD: redis.io's example, read back as a sorted set.
        run_line(
            "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
            EXACT,
        ),
        run_line("TYPE Sicily", EXACT),
        run_line("ZRANGE Sicily 0 -1 WITHSCORES", EXACT),
        run_line("ZSCORE Sicily Palermo", EXACT),
        run_line("GEODIST Sicily Palermo Catania", EXACT),
        run_line("GEODIST Sicily Palermo Catania km", EXACT),
        run_line("GEODIST Sicily Palermo Catania MI", EXACT),
        run_line("GEODIST Sicily Palermo Catania Ft", EXACT),
        run_line("GEODIST Sicily Palermo Palermo", EXACT),
        run_line("GEOHASH Sicily Palermo Catania nope", EXACT),
        run_line("GEOPOS Sicily Palermo Catania nope", EXACT),
        // GEOADD's options and errors: coordinates are checked before the type.
        run_line("GEOADD k 1 2", EXACT),
        run_line("GEOADD k 1 2 m 3", EXACT),
        run_line("GEOADD k NX XX 1 2 m", EXACT),
        run_line("GEOADD k nx ch ch", EXACT),
        run_line("GEOADD k 200 100 m", EXACT),
        run_line("GEOADD k -180.5 0 m", EXACT),
        run_line("GEOADD k 0 -85.05112879 m", EXACT),
        run_line("GEOADD k 1e300 -inf m", EXACT),
        run_line("GEOADD k x 2 m", EXACT),
        run_line("GEOADD k 1 nan m", EXACT),
        run_line("GEOADD k 1 2 m 1 200 n", EXACT),
        run_line("EXISTS k", EXACT),
        run_line("GEOADD list 1 200 m", EXACT),
        run_line("GEOADD list 1 2 m", EXACT),
        run_line("GEOADD k XX 1 2 m", EXACT),
        run_line("EXISTS k", EXACT),
        run_line("GEOADD k CH 1 2 m", EXACT),
        run_line("GEOADD k ch 1 2 m 1 3 m", EXACT),
        run_line("GEOADD k xx CH 1 4 m 5 5 n", EXACT),
        run_line("GEOADD k NX ch 1 5 m 5 5 n", EXACT),
        run_line("GEOADD k 1 6 m 1 6 m", EXACT),
        run_line("ZRANGE k 0 -1 WITHSCORES", EXACT),
        // GEOPOS, GEOHASH, GEODIST: missing keys, wrong types, units.
        run_line("GEOPOS nokey a b", EXACT),
        run_line("GEOHASH nokey a", EXACT),
        run_line("GEOPOS list a", EXACT),
        run_line("GEOHASH list", EXACT),
        run_line("GEOPOS k", EXACT),
        run_line("GEODIST nokey a b", EXACT),
        run_line("GEODIST nokey a b yd", EXACT),
        run_line("GEODIST list a b", EXACT),
        run_line("GEODIST Sicily Palermo nope km", EXACT),
        run_line("GEODIST Sicily Palermo Catania km x", EXACT),
        run_line("GEODIST Sicily Palermo", EXACT),
        // The limits: the largest longitude and latitude overflow the score's 52 bits.
        run_line(
            concat!(
                "GEOADD edge 180 85.05112878 ne -180 -85.05112878 sw 0 0 zero -180 85.05112878 nw ",
                "180 -85.05112878 se 179.9999 0 east -179.9999 0 west 179.99 85.05 pole"
            ),
            EXACT,
        ),
        run_line("ZRANGE edge 0 -1 WITHSCORES", EXACT),
        run_line("GEOPOS edge ne sw zero nw se east west pole", EXACT),
        run_line("GEOHASH edge ne sw zero nw se east west pole", EXACT),
        run_line("GEODIST edge east west", EXACT),
        run_line("GEODIST edge ne sw km", EXACT),
        run_line("GEODIST edge nw pole", EXACT),
        run_line("GEORADIUS edge 180 0 50 km WITHDIST ASC", EXACT),
        run_line("GEORADIUS edge -180 0 50 km WITHDIST ASC", EXACT),
        run_line(
            "GEOSEARCH edge FROMMEMBER east BYBOX 100 100 km ASC WITHCOORD",
            EXACT,
        ),
        run_line(
            "GEOSEARCH edge FROMLONLAT 0 85.05112878 BYRADIUS 20000 km DESC WITHDIST WITHHASH",
            EXACT,
        ),
        run_line(
            "GEOSEARCH edge FROMMEMBER pole BYBOX 2000 50 km WITHDIST",
            set,
        ),
        run_line(
            "GEOSEARCH edge FROMLONLAT -179.9 -85 BYRADIUS 600 km WITHCOORD",
            set,
        ),
        // Scores that are not geohashes decode as C converts them.
        run_line(
            concat!(
                "ZADD zz -1 neg 1e20 big inf pinf -inf ninf 1.5 f 9223372036854775808 p63 ",
                "1.8446744073709550e19 near64 -9.3e18 vneg -0.5 halfneg 4503599627370496 p52"
            ),
            EXACT,
        ),
        run_line(
            "GEOPOS zz neg big pinf ninf f p63 near64 vneg halfneg p52",
            EXACT,
        ),
        run_line(
            "GEOHASH zz neg big pinf ninf f p63 near64 vneg halfneg p52",
            EXACT,
        ),
        run_line("GEODIST zz neg f", EXACT),
        run_line(
            "GEORADIUS zz -180 -85 300 km WITHHASH WITHCOORD WITHDIST ASC",
            EXACT,
        ),
        run_line("GEORADIUSBYMEMBER zz f 20000 km WITHHASH ASC", EXACT),
        // GEORADIUS: every option.
        run_line(
            "GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH ASC",
            EXACT,
        ),
        run_line("GEORADIUS Sicily 15 37 200 km desc", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km", set),
        run_line("GEORADIUS Sicily 15 37 100 km", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km COUNT 1", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km COUNT 1 DESC", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km COUNT 1 ANY", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km ANY COUNT 5 ASC", EXACT),
        run_line("GEORADIUS Sicily 15 37 200000 m WITHDIST ASC", EXACT),
        run_line("GEORADIUS Sicily 15 37 600000 ft WITHDIST ASC", EXACT),
        run_line("GEORADIUS Sicily 15 37 130 mi WITHDIST ASC", EXACT),
        run_line("GEORADIUS Sicily 15 37 0 km", EXACT),
        run_line("GEORADIUS Sicily 15 37 inf km ASC", EXACT),
        // Its errors, in Redis's order: type, centre, radius, unit, then the options.
        run_line("GEORADIUS list 200 0 x km", EXACT),
        run_line("GEORADIUS nokey 200 0 1 km", EXACT),
        run_line("GEORADIUS nokey x 0 1 km", EXACT),
        run_line("GEORADIUS nokey 0 0 -1 km", EXACT),
        run_line("GEORADIUS nokey 0 0 x km", EXACT),
        run_line("GEORADIUS nokey 0 0 1 yd", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km COUNT 0", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km COUNT -1", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km COUNT x", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km COUNT", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km ANY", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km STORE", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km BYBOX", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km STOREDIST", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km STORE d WITHDIST", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km junk", EXACT),
        run_line("GEORADIUS Sicily 15 37", EXACT),
        // STORE and STOREDIST replace the destination (or delete it when nothing is found).
        run_line("SET dst string", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km STORE dst", EXACT),
        run_line("TYPE dst", EXACT),
        run_line("ZRANGE dst 0 -1 WITHSCORES", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km STOREDIST dst COUNT 1", EXACT),
        run_line("ZRANGE dst 0 -1 WITHSCORES", EXACT),
        run_line(
            "GEORADIUS Sicily 15 37 200 mi STORE x STOREDIST dst DESC",
            EXACT,
        ),
        run_line("ZRANGE dst 0 -1 WITHSCORES", EXACT),
        run_line("EXISTS x", EXACT),
        run_line("GEORADIUS Sicily 0 0 1 km STORE dst", EXACT),
        run_line("EXISTS dst", EXACT),
        run_line("SET dst string", EXACT),
        run_line("GEORADIUS nokey 0 0 1 km STORE dst", EXACT),
        run_line("EXISTS dst", EXACT),
        run_line("GEORADIUS Sicily 15 37 200 km STORE Sicily", EXACT),
        run_line("ZRANGE Sicily 0 -1 WITHSCORES", EXACT),
        run_line("GEORADIUS_RO Sicily 15 37 200 km STORE dst", EXACT),
        run_line("GEORADIUS_RO Sicily 15 37 200 km WITHDIST ASC", EXACT),
        // GEORADIUSBYMEMBER: a missing key reads only the options.
        run_line(
            "GEORADIUSBYMEMBER Sicily Palermo 200 km WITHDIST ASC",
            EXACT,
        ),
        run_line("GEORADIUSBYMEMBER Sicily nope x km", EXACT),
        run_line("GEORADIUSBYMEMBER Sicily Palermo x km", EXACT),
        run_line("GEORADIUSBYMEMBER list m 1 km", EXACT),
        run_line("GEORADIUSBYMEMBER nokey m x yd", EXACT),
        run_line("GEORADIUSBYMEMBER nokey m x yd COUNT 0", EXACT),
        run_line("GEORADIUSBYMEMBER nokey m x yd junk", EXACT),
        run_line(
            "GEORADIUSBYMEMBER Sicily Catania 100 km STOREDIST dst",
            EXACT,
        ),
        run_line("ZRANGE dst 0 -1 WITHSCORES", EXACT),
        run_line(
            "GEORADIUSBYMEMBER_RO Sicily Catania 200 km COUNT 1 WITHCOORD",
            EXACT,
        ),
        run_line(
            "GEORADIUSBYMEMBER_RO Sicily Catania 200 km STOREDIST dst",
            EXACT,
        ),
        // GEOSEARCH: FROMMEMBER or FROMLONLAT, BYRADIUS or BYBOX, and their errors.
        run_line(
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHCOORD WITHDIST WITHHASH",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 400 km DESC WITHDIST",
            EXACT,
        ),
        run_line("GEOSEARCH Sicily FROMMEMBER Catania BYBOX 400 400 km", set),
        run_line(
            "GEOSEARCH Sicily FROMMEMBER Catania BYBOX 300 400 km",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMMEMBER Catania BYBOX 400 130 km",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMMEMBER Catania BYBOX 400 140 km COUNT 2 ANY",
            EXACT,
        ),
        run_line(
            "geosearch Sicily frommember Palermo frommember Catania byradius 1 m",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km FROMMEMBER Palermo",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 15 37 BYRADIUS 200 km",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km BYBOX 1 1 km",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 km BYRADIUS 200 km",
            EXACT,
        ),
        run_line("GeoSearch nokey BYBOX 1 1 m ASC", EXACT),
        run_line("GeoSearch nokey FROMLONLAT 1 1 ASC WITHDIST", EXACT),
        run_line("GEOSEARCH nokey BYRADIUS 1 m FROMLONLAT 0 0 ANY", EXACT),
        run_line("GEOSEARCH nokey FROMMEMBER x BYRADIUS 1 km", EXACT),
        run_line("GEOSEARCH list FROMMEMBER x BYRADIUS 1 km", EXACT),
        run_line("GEOSEARCH Sicily FROMMEMBER nope BYRADIUS x km", EXACT),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 91 BYRADIUS x km", EXACT),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS -1 km", EXACT),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX x -1 km", EXACT),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 x km", EXACT),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 -1 km", EXACT),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 yd", EXACT),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1", EXACT),
        run_line(
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km STOREDIST",
            EXACT,
        ),
        run_line(
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km STORE dst",
            EXACT,
        ),
        run_line("GEOSEARCH Sicily FROMLONLAT 15 37", EXACT),
        // GEOSEARCHSTORE.
        run_line(
            "GEOSEARCHSTORE dst Sicily FROMMEMBER Catania BYRADIUS 500 km",
            EXACT,
        ),
        run_line("ZRANGE dst 0 -1 WITHSCORES", EXACT),
        run_line(
            "GEOSEARCHSTORE dst Sicily FROMMEMBER Catania BYRADIUS 500 km STOREDIST DESC COUNT 1",
            EXACT,
        ),
        run_line("ZRANGE dst 0 -1 WITHSCORES", EXACT),
        run_line(
            "GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 500 500 mi STOREDIST",
            EXACT,
        ),
        run_line("ZRANGE dst 0 -1 WITHSCORES", EXACT),
        run_line(
            "GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 1 m",
            EXACT,
        ),
        run_line("EXISTS dst", EXACT),
        run_line(
            "GEOSEARCHSTORE dst Sicily FROMMEMBER Palermo BYRADIUS 1 m WITHDIST",
            EXACT,
        ),
        run_line(
            "geosearchstore dst nokey FROMLONLAT 1 1 ASC STOREDIST",
            EXACT,
        ),
        run_line("SET dst string", EXACT),
        run_line("GEOSEARCHSTORE dst nokey FROMMEMBER x BYRADIUS 1 m", EXACT),
        run_line("EXISTS dst", EXACT),
        run_line("GEOSEARCHSTORE dst list FROMMEMBER x BYRADIUS 1 m", EXACT),
        run_line(
            "GEOSEARCHSTORE list Sicily FROMMEMBER Palermo BYRADIUS 1 km",
            EXACT,
        ),
        run_line("TYPE list", EXACT),
        run_line("RPUSH list a", EXACT),
        // Radius edges: on one meridian the distance is the latitude difference; a hair to
        // the east it is the haversine's, a few units in the last place smaller.
        run_line("GEOADD t 13.361389 38.115556 P", EXACT),
        run_line(
            concat!(
                "GEOSEARCH t FROMLONLAT 13.361389338970184 39.035366308388866 ",
                "BYRADIUS 102307.05331436303 m WITHDIST"
            ),
            EXACT,
        ),
        run_line(
            concat!(
                "GEOSEARCH t FROMLONLAT 13.361389338970184 39.035366308388866 ",
                "BYRADIUS 102307.05331436306 m WITHDIST"
            ),
            EXACT,
        ),
        run_line(
            concat!(
                "GEOSEARCH t FROMLONLAT 13.361389338970186 39.035366308388866 ",
                "BYRADIUS 102307.05331436303 m WITHDIST"
            ),
            EXACT,
        ),
        run_line(
            "GEORADIUS t 13.361389338970186 39.035366308388866 102.30705331436303 km",
            EXACT,
        ),
        run_line(
            concat!(
                "GEOSEARCH t FROMLONLAT 13.361389338970184 39.035366308388866 ",
                "BYBOX 1 204614.10662872606 m"
            ),
            EXACT,
        ),
        run_line(
            concat!(
                "GEOSEARCH t FROMLONLAT 13.361389338970184 39.035366308388866 ",
                "BYBOX 1 204614.10662872612 m"
            ),
            EXACT,
        ),
        // COUNT's order of equal distances (Redis sorts only what COUNT returns).
        run_line(
            concat!(
                "GEOADD tie 10 10 a0 10 10 a1 10 10 a2 10 10 a3 10.1 10 b0 10.2 10 b1 10.3 10 b2 ",
                "10.4 10 b3 10.5 10 b4 10.6 10 b5 10.7 10 b6 10.8 10 b7"
            ),
            EXACT,
        ),
        run_line("GEORADIUSBYMEMBER tie a0 1000 km COUNT 10", EXACT),
        run_line("GEORADIUSBYMEMBER tie a0 1000 km COUNT 12", EXACT),
        run_line("GEORADIUSBYMEMBER tie a0 1000 km COUNT 3 DESC", EXACT),
        run_line("GEOADD tie 9.9 10 c0 10 10.1 c1", EXACT),
        run_line(
            "GEOADD tie 9.8 10 c2 10 9.9 c3 10 10.05 c4 9.95 10 c5",
            EXACT,
        ),
        run_line("GEORADIUSBYMEMBER tie a2 1000 km COUNT 10", EXACT),
        run_line(
            "GEOSEARCH tie FROMMEMBER a3 BYRADIUS 1000 km COUNT 17",
            EXACT,
        ),
        run_line("GEOSEARCH tie FROMMEMBER a3 BYRADIUS 1000 km ASC", EXACT),
        run_line(
            "GEOSEARCH tie FROMMEMBER a3 BYBOX 1000 1000 km DESC COUNT 5",
            EXACT,
        ),
        // Inside a transaction, and over RESP3 (coordinates as doubles, distances as
        // strings).
        run_line("MULTI", EXACT),
        run_line("GEOADD tx 1 1 a 2 2 b", EXACT),
        run_line("GEOSEARCH tx FROMMEMBER a BYRADIUS 200 km ASC", EXACT),
        run_line("GEORADIUS tx 1 1 200 km STORE tx2", EXACT),
        run_line("EXEC", EXACT),
        run_line("ZRANGE tx2 0 -1 WITHSCORES", EXACT),
        Hello(3),
        run_line("GEOPOS Sicily Palermo nope", EXACT),
        run_line("GEOHASH Sicily Palermo nope", EXACT),
        run_line("GEODIST Sicily Palermo Catania", EXACT),
        run_line("GEODIST Sicily Palermo nope", EXACT),
        run_line(
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHCOORD WITHDIST WITHHASH",
            EXACT,
        ),
        run_line("GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 200 km", EXACT),
        run_line("ZRANGE Sicily 0 -1 WITHSCORES", EXACT),
        Hello(2),
        run_line("KEYS *", set),
    ];
    lockstep(&script);
}

/// SINTERCARD, ZINTERCARD, ZRANGESTORE, and the random-member commands where Redis's reply
/// is determined: errors, counts of at least the collection's size (compared as sets),
/// negative counts over one-member collections, zero counts, missing keys, wrong types, and
/// the RESP3 shapes of WITHVALUES and WITHSCORES.
#[test]
fn intercard_rangestore_and_random_members_match_redis() {
    let set = Cmp::Unordered;
    let script = [
        Run(&["SADD", "s1", "a", "b", "c", "d"], EXACT),
        Run(&["SADD", "s2", "b", "c", "d", "e"], EXACT),
        Run(&["SADD", "one", "only"], EXACT),
        Run(&["ZADD", "z1", "1", "a", "2", "b", "3", "c"], EXACT),
        Run(&["ZADD", "z2", "1", "b", "2", "c", "5", "x"], EXACT),
        Run(&["ZADD", "zone", "1.5", "only"], EXACT),
        Run(&["HSET", "h", "f1", "v1", "f2", "v2"], EXACT),
        Run(&["HSET", "hone", "f", "v"], EXACT),
        Run(&["SET", "str", "v"], EXACT),
        // SINTERCARD: the arguments are checked before any key.
        Run(&["SINTERCARD", "2", "s1", "s2"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "s2", "LIMIT", "2"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "s2", "LIMIT", "0"], EXACT),
        Run(
            &["SINTERCARD", "2", "s1", "s2", "limit", "1", "LIMIT", "9"],
            EXACT,
        ),
        Run(&["SINTERCARD", "0", "s1"], EXACT),
        Run(&["SINTERCARD", "x", "s1"], EXACT),
        Run(&["SINTERCARD", "3", "s1", "s2"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "s2", "LIMIT", "-1"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "s2", "LIMIT", "x"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "s2", "LIMIT"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "s2", "BOGUS"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "missing"], EXACT),
        Run(&["SINTERCARD", "2", "missing", "str"], EXACT),
        Run(&["SINTERCARD", "2", "s1", "z1"], EXACT),
        Run(&["SINTERCARD", "2", "missing", "str", "LIMIT", "-1"], EXACT),
        // ZINTERCARD: ZINTER's checks, then LIMIT as its only option.
        Run(&["ZINTERCARD", "2", "z1", "z2"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "s1"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "z2", "LIMIT", "1"], EXACT),
        Run(&["ZINTERCARD", "0", "z1"], EXACT),
        Run(&["ZINTERCARD", "x", "z1"], EXACT),
        Run(&["ZINTERCARD", "3", "z1", "z2"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "z2", "LIMIT", "-1"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "z2", "LIMIT"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "z2", "WEIGHTS", "1", "2"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "z2", "AGGREGATE", "MAX"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "z2", "WITHSCORES"], EXACT),
        Run(&["ZINTERCARD", "2", "z1", "str"], EXACT),
        Run(&["ZINTERCARD", "2", "missing", "str", "LIMIT", "-1"], EXACT),
        // ZRANGESTORE: every ZRANGE form; the destination of any type is replaced, and an
        // empty result deletes it.
        Run(&["ZRANGESTORE", "d", "z1", "0", "-1"], EXACT),
        Run(&["ZRANGE", "d", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZRANGESTORE", "d", "z1", "0", "-1", "WITHSCORES"], EXACT),
        Run(
            &[
                "ZRANGESTORE",
                "d",
                "z1",
                "(1",
                "+inf",
                "BYSCORE",
                "LIMIT",
                "0",
                "1",
            ],
            EXACT,
        ),
        Run(&["ZRANGE", "d", "0", "-1", "WITHSCORES"], EXACT),
        Run(
            &["ZRANGESTORE", "d", "z1", "+", "[b", "BYLEX", "REV"],
            EXACT,
        ),
        Run(&["ZRANGE", "d", "0", "-1"], EXACT),
        Run(&["ZRANGESTORE", "d", "z1", "-1", "0", "REV"], EXACT),
        Run(&["ZRANGE", "d", "0", "-1", "WITHSCORES"], EXACT),
        Run(
            &["ZRANGESTORE", "d", "z1", "0", "-1", "LIMIT", "0", "1"],
            EXACT,
        ),
        Run(&["ZRANGESTORE", "d", "z1", "x", "1"], EXACT),
        Run(&["ZRANGESTORE", "d", "z1", "a", "b", "BYSCORE"], EXACT),
        Run(&["ZRANGESTORE", "d", "z1", "a", "b", "BYLEX"], EXACT),
        Run(&["ZRANGESTORE", "d", "s1", "0", "-1"], EXACT),
        Run(&["ZRANGESTORE", "str", "z1", "0", "1"], EXACT),
        Run(&["TYPE", "str"], EXACT),
        Run(&["ZRANGESTORE", "d", "z1", "5", "10"], EXACT),
        Run(&["EXISTS", "d"], EXACT),
        Run(&["ZRANGESTORE", "d", "missing", "0", "-1"], EXACT),
        Run(&["SET", "str", "v"], EXACT),
        // The random-member commands, where the reply is determined.
        Run(&["SRANDMEMBER", "s1", "10"], set),
        Run(&["SRANDMEMBER", "s1", "9223372036854775807"], set),
        Run(&["SRANDMEMBER", "one"], EXACT),
        Run(&["SRANDMEMBER", "one", "-3"], EXACT),
        Run(&["SRANDMEMBER", "s1", "0"], EXACT),
        Run(&["SRANDMEMBER", "s1", "-9223372036854775808"], EXACT),
        Run(&["SRANDMEMBER", "s1", "1", "2"], EXACT),
        Run(&["SRANDMEMBER", "missing"], EXACT),
        Run(&["SRANDMEMBER", "missing", "-2"], EXACT),
        Run(&["HRANDFIELD", "h", "10"], set),
        Run(&["HRANDFIELD", "h", "2", "WITHVALUES"], Cmp::Pairs),
        Run(&["HRANDFIELD", "hone"], EXACT),
        Run(&["HRANDFIELD", "hone", "-3"], EXACT),
        Run(&["HRANDFIELD", "hone", "-2", "withvalues"], EXACT),
        Run(&["HRANDFIELD", "h", "0"], EXACT),
        Run(&["HRANDFIELD", "h", "x"], EXACT),
        Run(&["HRANDFIELD", "h", "1", "BOGUS"], EXACT),
        Run(&["HRANDFIELD", "h", "1", "WITHVALUES", "x"], EXACT),
        Run(&["HRANDFIELD", "h", "-9223372036854775808"], EXACT),
        Run(
            &["HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"],
            EXACT,
        ),
        Run(&["HRANDFIELD", "missing"], EXACT),
        Run(&["HRANDFIELD", "missing", "3", "WITHVALUES"], EXACT),
        Run(&["HRANDFIELD", "str"], EXACT),
        Run(&["HRANDFIELD", "str", "1"], EXACT),
        Run(&["ZRANDMEMBER", "z1", "3"], set),
        Run(&["ZRANDMEMBER", "z1", "5", "WITHSCORES"], Cmp::Pairs),
        Run(&["ZRANDMEMBER", "zone"], EXACT),
        Run(&["ZRANDMEMBER", "zone", "-2", "WITHSCORES"], EXACT),
        Run(&["ZRANDMEMBER", "z1", "0"], EXACT),
        Run(&["ZRANDMEMBER", "z1", "-9223372036854775808"], EXACT),
        Run(
            &["ZRANDMEMBER", "z1", "-9223372036854775807", "WITHSCORES"],
            EXACT,
        ),
        Run(&["ZRANDMEMBER", "z1", "1", "WITHSCORES", "x"], EXACT),
        Run(&["ZRANDMEMBER", "missing"], EXACT),
        Run(&["ZRANDMEMBER", "missing", "2"], EXACT),
        Run(&["ZRANDMEMBER", "str", "2"], EXACT),
        Hello(3),
        Run(&["HRANDFIELD", "hone", "-2", "WITHVALUES"], EXACT),
        Run(&["HRANDFIELD", "h", "5", "WITHVALUES"], set),
        Run(&["ZRANDMEMBER", "zone", "-2", "WITHSCORES"], EXACT),
        Run(&["ZRANDMEMBER", "z1", "5", "WITHSCORES"], set),
        Run(&["ZRANDMEMBER", "zone"], EXACT),
    ];
    lockstep(&script);
}

/// The HyperLogLog commands: PFADD, PFCOUNT of one key (cached or recomputed) and of
/// several, PFMERGE (sparse and dense results, missing destinations and sources), the HLL
/// strings themselves (GET of sparse and dense ones; sparse turning dense past 3000 bytes
/// and past a register value of 32), forged and corrupted HLL strings (SET, SETRANGE,
/// SETBIT, BITFIELD, APPEND), wrong types, kept TTLs, PFDEBUG, and which of them fail a
/// WATCH.
#[test]
fn hyperloglog_commands_match_redis() {
    /// `PFADD key prefix<n>...` for each `n` of `range`, as a script step's words (leaked:
    /// a script lives as long as its test).
    fn pfadd_many(
        key: &'static str,
        prefix: &str,
        range: std::ops::Range<u32>,
    ) -> &'static [&'static str] {
        let elements = range.map(|n| &*Box::leak(format!("{prefix}{n}").into_boxed_str()));
        let words: Vec<&'static str> = ["PFADD", key].into_iter().chain(elements).collect();
        Box::leak(words.into_boxed_slice())
    }
    let within = Cmp::Within(2);
    // Every register byte 0x7f: registers of 61 and 63, above the estimator's histogram.
    let high_registers: &'static str = Box::leak("\x7f".repeat(12288).into_boxed_str());
    let high_registers: &'static [&'static str] =
        Box::leak(vec!["SETRANGE", "big2", "16", high_registers].into_boxed_slice());
    let mut script = vec![
        Run(&["PFADD", "h", "a", "b", "c"], EXACT),
        Run(&["GET", "h"], EXACT),
        Run(&["PFCOUNT", "h"], EXACT),
        Run(&["GET", "h"], EXACT),
        Run(&["PFADD", "h", "a"], EXACT),
        Run(&["PFADD", "h"], EXACT),
        Run(&["PFADD", "h", "", "a", "a"], EXACT),
        Run(&["GET", "h"], EXACT),
        Run(&["PFADD", "new"], EXACT),
        Run(&["GET", "new"], EXACT),
        Run(&["PFCOUNT", "new"], EXACT),
        Run(&["PFCOUNT", "missing"], EXACT),
        Run(&["PFCOUNT", "h", "missing", "new"], EXACT),
        Run(&["PFCOUNT", "h", "h"], EXACT),
        Run(&["PFADD"], EXACT),
        Run(&["PFCOUNT"], EXACT),
        Run(&["PFMERGE"], EXACT),
        Run(&["PFDEBUG", "ENCODING"], EXACT),
        Run(&["PFSELFTEST", "x"], EXACT),
        // Wrong types: another type, or a string that is not an HLL.
        Run(&["SET", "str", "hello"], EXACT),
        Run(&["RPUSH", "list", "a"], EXACT),
        Run(&["PFADD", "str", "a"], EXACT),
        Run(&["PFADD", "list", "a"], EXACT),
        Run(&["PFCOUNT", "str"], EXACT),
        Run(&["PFCOUNT", "list"], EXACT),
        Run(&["PFCOUNT", "h", "list"], EXACT),
        Run(&["PFCOUNT", "missing", "str"], EXACT),
        Run(&["PFMERGE", "str", "h"], EXACT),
        Run(&["PFMERGE", "h2", "h", "list"], EXACT),
        Run(&["PFMERGE", "list"], EXACT),
        Run(&["EXISTS", "h2"], EXACT),
        Run(&["SET", "short", "HYLL"], EXACT),
        Run(&["PFCOUNT", "short"], EXACT),
        Run(&["PFADD", "short", "x"], EXACT),
        Run(
            &[
                "SET",
                "bare",
                "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
            ],
            EXACT,
        ),
        Run(&["PFCOUNT", "bare"], EXACT),
        // PFMERGE: sparse inputs give a sparse result; missing keys are empty HLLs.
        Run(&["PFADD", "h3", "c", "d", "e"], EXACT),
        Run(&["PFMERGE", "m", "h", "h3", "missing"], EXACT),
        Run(&["GET", "m"], EXACT),
        Run(&["PFCOUNT", "m"], EXACT),
        Run(&["GET", "m"], EXACT),
        Run(&["PFMERGE", "m"], EXACT),
        Run(&["GET", "m"], EXACT),
        Run(&["PFMERGE", "empty"], EXACT),
        Run(&["GET", "empty"], EXACT),
        Run(&["PFMERGE", "empty2", "missing"], EXACT),
        Run(&["GET", "empty2"], EXACT),
        Run(&["PFCOUNT", "empty2"], EXACT),
        // Growing: exactly 3000 bytes after e1..e1683, dense with e1684.
        Run(pfadd_many("big", "e", 1..1200), EXACT),
        Run(&["STRLEN", "big"], EXACT),
        Run(&["PFCOUNT", "big"], EXACT),
        Run(pfadd_many("big", "e", 1..1684), EXACT),
        Run(&["STRLEN", "big"], EXACT),
        Run(&["GET", "big"], EXACT),
        Run(&["PFADD", "big", "e1684"], EXACT),
        Run(&["STRLEN", "big"], EXACT),
        Run(&["GET", "big"], EXACT),
        Run(&["PFCOUNT", "big"], EXACT),
        Run(&["GET", "big"], EXACT),
        Run(&["PFADD", "big", "e1", "e2"], EXACT),
        Run(pfadd_many("big2", "f", 0..5000), EXACT),
        Run(&["PFCOUNT", "big2"], EXACT),
        Run(&["GET", "big2"], EXACT),
        Run(&["PFCOUNT", "big", "h", "h3"], EXACT),
        Run(&["PFCOUNT", "big", "big2"], EXACT),
        // A dense input makes the destination dense.
        Run(&["PFMERGE", "m", "big"], EXACT),
        Run(&["GET", "m"], EXACT),
        Run(&["PFCOUNT", "m"], EXACT),
        Run(pfadd_many("s1", "x", 0..600), EXACT),
        Run(pfadd_many("s2", "x", 500..1100), EXACT),
        Run(pfadd_many("s3", "x", 1000..1700), EXACT),
        Run(&["PFMERGE", "ms", "s1", "s2"], EXACT),
        Run(&["GET", "ms"], EXACT),
        Run(&["PFMERGE", "ms", "s3"], EXACT),
        Run(&["STRLEN", "ms"], EXACT),
        Run(&["GET", "ms"], EXACT),
        Run(&["PFCOUNT", "ms"], EXACT),
        // This element's register value is 36: too big for a sparse HLL.
        Run(&["PFADD", "h3", "86f8de7b"], EXACT),
        Run(&["STRLEN", "h3"], EXACT),
        Run(&["GET", "h3"], EXACT),
        Run(&["PFCOUNT", "h3"], EXACT),
        Run(&["PFMERGE", "m3", "h", "h3"], EXACT),
        Run(&["GET", "m3"], EXACT),
        // TTLs: kept by PFADD, PFCOUNT and PFMERGE; a created destination has none.
        Run(&["PFADD", "t", "a"], EXACT),
        Run(&["EXPIRE", "t", "100"], EXACT),
        Run(&["PFADD", "t", "b"], EXACT),
        Run(&["TTL", "t"], within),
        Run(&["PFCOUNT", "t"], EXACT),
        Run(&["TTL", "t"], within),
        Run(&["PFMERGE", "t", "h"], EXACT),
        Run(&["TTL", "t"], within),
        Run(&["PFMERGE", "t2", "t"], EXACT),
        Run(&["TTL", "t2"], EXACT),
        Run(&["SET", "gone", "x", "PX", "30"], EXACT),
        Sleep(80),
        Run(&["PFADD", "gone", "a"], EXACT),
        Run(&["TTL", "gone"], EXACT),
        // A forged sparse HLL whose last opcode is half an XZERO (its second byte is read
        // from the NUL terminator): z:127 z:64 z:64 Z:16129.
        Run(
            &[
                "SET",
                "half",
                "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x40\x7e\x3f\x3f\x7f",
            ],
            EXACT,
        ),
        Run(&["PFCOUNT", "half"], EXACT),
        Run(&["SETBIT", "half", "120", "1"], EXACT),
        Run(&["PFCOUNT", "half"], EXACT),
        Run(&["GET", "half"], EXACT),
        Run(&["PFDEBUG", "DECODE", "half"], EXACT),
        // Forged VAL opcodes: z:64 v:32,4 Z:16316.
        Run(
            &[
                "SET",
                "forged",
                "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x3f\x00\x7f\x00",
            ],
            EXACT,
        ),
        Run(
            &[
                "BITFIELD", "forged", "SET", "u8", "136", "255", "SET", "u8", "152", "187",
            ],
            EXACT,
        ),
        Run(&["SETBIT", "forged", "127", "1"], EXACT),
        Run(&["PFCOUNT", "forged"], EXACT),
        Run(&["PFADD", "forged", "a", "b", "c"], EXACT),
        Run(&["GET", "forged"], EXACT),
        Run(&["PFCOUNT", "forged"], EXACT),
        Run(&["PFMERGE", "fm", "forged", "h"], EXACT),
        Run(&["GET", "fm"], EXACT),
        // Opcodes covering 16129 registers: a valid cache is believed; a count, or an
        // element past them, finds the corruption (the elements before it stay added).
        Run(
            &[
                "SET",
                "bad",
                "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f",
            ],
            EXACT,
        ),
        Run(&["PFCOUNT", "bad"], EXACT),
        Run(&["SETBIT", "bad", "120", "1"], EXACT),
        Run(&["PFCOUNT", "bad"], EXACT),
        Run(
            &[
                "PFADD", "bad", "a", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9",
            ],
            EXACT,
        ),
        Run(&["GET", "bad"], EXACT),
        Run(&["PFCOUNT", "h", "bad"], EXACT),
        Run(&["PFCOUNT", "bad", "list"], EXACT),
        Run(&["PFMERGE", "m", "bad"], EXACT),
        Run(&["PFMERGE", "bad"], EXACT),
        Run(&["PFDEBUG", "GETREG", "bad"], EXACT),
        Run(&["PFDEBUG", "TODENSE", "bad"], EXACT),
        Run(&["PFDEBUG", "DECODE", "bad"], EXACT),
        // Forged dense registers, a dense HLL of the wrong length, unknown encodings.
        Run(&["SETRANGE", "big2", "100", "zzzzzzzz"], EXACT),
        Run(&["PFCOUNT", "big2"], EXACT),
        Run(&["SETBIT", "big2", "120", "1"], EXACT),
        Run(&["PFCOUNT", "big2"], EXACT),
        Run(&["GET", "big2"], EXACT),
        Run(high_registers, EXACT),
        Run(&["SETBIT", "big2", "120", "1"], EXACT),
        Run(&["PFCOUNT", "big2"], EXACT),
        Run(&["PFCOUNT", "big2", "h"], EXACT),
        Run(&["PFADD", "big2", "a", "b"], EXACT),
        Run(&["PFMERGE", "big3", "h", "big2"], EXACT),
        Run(&["GET", "big3"], EXACT),
        Run(&["APPEND", "big", "x"], EXACT),
        Run(&["PFCOUNT", "big"], EXACT),
        Run(&["PFADD", "big", "a"], EXACT),
        Run(&["SETRANGE", "m3", "4", "\x02"], EXACT),
        Run(&["PFCOUNT", "m3"], EXACT),
        Run(&["SETRANGE", "m3", "0", "X"], EXACT),
        Run(&["PFMERGE", "m3", "h"], EXACT),
        // PFDEBUG: the key first, then the subcommand.
        Run(&["PFDEBUG", "ENCODING", "h"], EXACT),
        Run(&["PFDEBUG", "encoding", "m"], EXACT),
        Run(&["PFDEBUG", "DECODE", "h"], EXACT),
        Run(&["PFDEBUG", "DECODE", "m"], EXACT),
        Run(&["PFDEBUG", "GETREG", "h"], EXACT),
        Run(&["GET", "h"], EXACT),
        Run(&["PFDEBUG", "TODENSE", "h"], EXACT),
        Run(&["PFDEBUG", "todense", "ms"], EXACT),
        Run(&["GET", "ms"], EXACT),
        Run(&["PFDEBUG", "BOGUS", "h"], EXACT),
        Run(&["PFDEBUG", "BOGUS", "nokey"], EXACT),
        Run(&["PFDEBUG", "ENCODING", "list"], EXACT),
        Run(&["PFDEBUG", "ENCODING", "str"], EXACT),
        Run(&["PFSELFTEST"], EXACT),
        // Inside a transaction, a PFCOUNT sees the PFADD before it.
        Run(&["MULTI"], EXACT),
        Run(&["PFADD", "q", "a", "b"], EXACT),
        Run(&["PFCOUNT", "q"], EXACT),
        Run(&["PFCOUNT", "q", "h"], EXACT),
        Run(&["GET", "q"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["PFADD", "w", "a"], EXACT),
    ];
    // (the WATCH, the command): a PFADD that changes no register, a PFCOUNT that finds its
    // cache valid, and a PFCOUNT of several keys leave the key as it was; a PFCOUNT that
    // caches a new count, and every PFMERGE into the key, modify it.
    let cases: &[(&'static [&'static str], &'static [&'static str])] = &[
        (&["WATCH", "w"], &["PFADD", "w", "a"]),
        (&["WATCH", "w"], &["PFADD", "w"]),
        (&["WATCH", "w"], &["PFCOUNT", "w"]),
        (&["WATCH", "w"], &["PFCOUNT", "w"]),
        (&["WATCH", "w"], &["PFCOUNT", "w", "nokey"]),
        (&["WATCH", "w"], &["PFADD", "w", "zz"]),
        (&["WATCH", "w"], &["PFCOUNT", "w", "w"]),
        (&["WATCH", "w"], &["PFDEBUG", "ENCODING", "w"]),
        (&["WATCH", "w"], &["PFMERGE", "w"]),
        (&["WATCH", "w"], &["PFMERGE", "other", "w"]),
        (&["WATCH", "w"], &["PFCOUNT", "w"]),
        (&["WATCH", "nokey"], &["PFCOUNT", "nokey"]),
        (&["WATCH", "nokey"], &["PFMERGE", "other", "nokey"]),
        (&["WATCH", "nokey"], &["PFADD", "nokey", "a"]),
    ];
    for (watch, command) in cases {
        script.push(Run(watch, EXACT));
        script.push(Run(command, EXACT));
        script.push(Run(&["MULTI"], EXACT));
        script.push(Run(&["INCR", "runs"], EXACT));
        script.push(Run(&["EXEC"], EXACT));
    }
    script.push(Run(&["GET", "runs"], EXACT));
    script.push(Run(&["KEYS", "*"], Cmp::Unordered));
    lockstep(&script);
}

/// RENAME of every type, then updates and reads of the renamed value (and of what the
/// rename replaced): the moved value must behave exactly like one written in place.
#[test]
fn rename_then_update_matches_redis() {
    let script = [
        Run(&["ZADD", "z1", "1", "a", "2", "b", "3", "c"], EXACT),
        Run(&["ZADD", "z2", "-1", "old"], EXACT),
        Run(&["RENAME", "z1", "z2"], EXACT),
        Run(&["ZRANGE", "z2", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZADD", "z2", "7", "a"], EXACT),
        Run(&["ZRANGE", "z2", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZREM", "z2", "b"], EXACT),
        Run(&["ZREVRANGE", "z2", "0", "-1", "WITHSCORES"], EXACT),
        Run(
            &["ZRANGEBYSCORE", "z2", "-inf", "+inf", "WITHSCORES"],
            EXACT,
        ),
        Run(&["ZPOPMIN", "z2"], EXACT),
        Run(&["ZCARD", "z2"], EXACT),
        Run(&["ZSCORE", "z2", "old"], EXACT),
        Run(&["EXISTS", "z1"], EXACT),
        Run(&["HSET", "h1", "f", "1", "g", "2"], EXACT),
        Run(&["RENAME", "h1", "h2"], EXACT),
        Run(&["HINCRBY", "h2", "f", "5"], EXACT),
        Run(&["HDEL", "h2", "g"], EXACT),
        Run(&["HGETALL", "h2"], Cmp::Pairs),
        Run(&["RPUSH", "l1", "a", "b", "c"], EXACT),
        Run(&["RENAME", "l1", "l2"], EXACT),
        Run(&["LPUSH", "l2", "z"], EXACT),
        Run(&["LSET", "l2", "2", "B"], EXACT),
        Run(&["RPOP", "l2"], EXACT),
        Run(&["LRANGE", "l2", "0", "-1"], EXACT),
        Run(&["SADD", "s1", "a", "b"], EXACT),
        Run(&["RENAME", "s1", "s2"], EXACT),
        Run(&["SREM", "s2", "a"], EXACT),
        Run(&["SADD", "s2", "c"], EXACT),
        Run(&["SMEMBERS", "s2"], Cmp::Unordered),
        Run(&["SET", "k1", "v", "EX", "100"], EXACT),
        Run(&["SET", "k2", "w"], EXACT),
        Run(&["RENAME", "k1", "k2"], EXACT),
        Run(&["TTL", "k2"], Cmp::Within(2)),
        Run(&["APPEND", "k2", "x"], EXACT),
        Run(&["GET", "k2"], EXACT),
        Run(&["RENAME", "k2", "k2"], EXACT),
        Run(&["GET", "k2"], EXACT),
        Run(&["RENAME", "nokey", "k3"], EXACT),
        Run(&["RENAME", "z2", "h2"], EXACT),
        Run(&["TYPE", "h2"], EXACT),
        Run(&["ZRANGE", "h2", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZADD", "h2", "0", "x"], EXACT),
        Run(&["ZRANGE", "h2", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["KEYS", "*"], Cmp::Unordered),
    ];
    lockstep(&script);
}

/// SORT and SORT_RO (numeric, ALPHA, BY and GET patterns with hash fields, LIMIT, DESC,
/// BY without a pattern over lists, sets and sorted sets, STORE), and LCS (the string, LEN,
/// IDX with MINMATCHLEN and WITHMATCHLEN, in RESP2 and RESP3), with their errors.
#[test]
fn sort_and_lcs_match_redis() {
    let script = [
        Run(
            &["RPUSH", "l", "3", "1", "2", "10", "-5", "2.5", " 7", ""],
            EXACT,
        ),
        Run(&["SADD", "s", "c", "a", "b"], EXACT),
        Run(&["ZADD", "z", "3", "x", "1", "y", "2", "w"], EXACT),
        Run(&["RPUSH", "la", "b", "a", "c", "B", "a"], EXACT),
        Run(
            &[
                "MSET", "w_a", "3", "w_b", "1", "w_c", "1", "v_a", "A", "v_b", "B",
            ],
            EXACT,
        ),
        Run(&["HSET", "h_a", "f", "30"], EXACT),
        Run(&["HSET", "h_b", "f", "10"], EXACT),
        Run(&["HSET", "h_c", "f", "20", "g", "x"], EXACT),
        Run(&["SET", "str", "v"], EXACT),
        Run(&["RPUSH", "bad", "1", "x"], EXACT),
        Run(&["RPUSH", "huge", "1e400", "1"], EXACT),
        Run(&["SORT", "l"], EXACT),
        Run(&["SORT", "l", "DESC"], EXACT),
        Run(&["SORT", "l", "LIMIT", "1", "2"], EXACT),
        Run(&["SORT", "l", "LIMIT", "-1", "2"], EXACT),
        Run(&["SORT", "l", "LIMIT", "2", "-1"], EXACT),
        Run(&["SORT", "l", "LIMIT", "10", "1"], EXACT),
        Run(&["SORT", "l", "LIMIT", "0", "0"], EXACT),
        Run(&["SORT", "l", "LIMIT", "x", "1"], EXACT),
        Run(&["SORT", "l", "LIMIT", "1"], EXACT),
        Run(&["SORT", "l", "asc", "DESC", "asc"], EXACT),
        Run(&["SORT", "la", "ALPHA"], EXACT),
        Run(&["SORT", "la", "ALPHA", "DESC", "LIMIT", "1", "3"], EXACT),
        Run(&["SORT", "la"], EXACT),
        Run(&["SORT", "s", "ALPHA"], EXACT),
        Run(&["SORT", "s"], EXACT),
        Run(&["SORT", "z"], EXACT),
        Run(&["SORT", "z", "ALPHA", "DESC"], EXACT),
        Run(&["SORT", "z", "BY", "nosort"], EXACT),
        Run(&["SORT", "z", "BY", "nosort", "DESC"], EXACT),
        Run(&["SORT", "z", "BY", "nosort", "LIMIT", "1", "1"], EXACT),
        Run(&["SORT", "l", "BY", "nosort"], EXACT),
        Run(
            &["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"],
            EXACT,
        ),
        Run(&["SORT", "s", "BY", "nosort"], Cmp::Unordered),
        // Equal weights (w_b, w_c) fall back to the elements' bytes.
        Run(&["SORT", "s", "BY", "w_*"], EXACT),
        Run(&["SORT", "s", "BY", "w_*", "DESC"], EXACT),
        Run(&["SORT", "s", "BY", "h_*->f"], EXACT),
        Run(
            &[
                "SORT", "s", "BY", "h_*->f", "GET", "#", "GET", "w_*", "GET", "h_*->f", "GET",
                "nokey", "GET", "h_*->", "GET", "h_*->g", "GET", "v_*",
            ],
            EXACT,
        ),
        Run(&["SORT", "s", "BY", "v_*", "ALPHA"], EXACT),
        Run(&["SORT", "s", "BY", "missing_*"], EXACT),
        Run(&["SORT", "s", "BY", "str_*"], EXACT),
        Run(&["SORT", "bad"], EXACT),
        Run(&["SORT", "bad", "BY", "w_*"], EXACT),
        Run(&["SORT", "huge"], EXACT),
        Run(&["SORT", "str"], EXACT),
        Run(&["SORT", "h_a"], EXACT),
        Run(&["SORT", "missing"], EXACT),
        Run(&["SORT", "missing", "GET", "#"], EXACT),
        Run(&["SORT", "s", "BY", "w_*", "STORE", "dst"], EXACT),
        Run(&["LRANGE", "dst", "0", "-1"], EXACT),
        Run(&["SORT", "s", "BY", "nosort", "STORE", "dst"], EXACT),
        Run(&["LRANGE", "dst", "0", "-1"], EXACT),
        Run(
            &["SORT", "s", "BY", "nosort", "DESC", "STORE", "dst"],
            EXACT,
        ),
        Run(&["LRANGE", "dst", "0", "-1"], EXACT),
        Run(
            &[
                "SORT", "s", "ALPHA", "GET", "w_*", "GET", "nokey_*", "STORE", "str",
            ],
            EXACT,
        ),
        Run(&["TYPE", "str"], EXACT),
        Run(&["LRANGE", "str", "0", "-1"], EXACT),
        Run(&["RPUSH", "str", "more"], EXACT),
        Run(&["SORT", "missing", "STORE", "str"], EXACT),
        Run(&["EXISTS", "str"], EXACT),
        Run(&["SORT_RO", "s", "STORE", "dst"], EXACT),
        Run(&["SORT_RO", "s", "ALPHA", "LIMIT", "0", "2"], EXACT),
        Run(&["SORT", "s", "BOGUS"], EXACT),
        Run(&["SORT", "l", "BY", "w_*", "GET"], EXACT),
        // LCS.
        Run(
            &[
                "MSET",
                "k1",
                "ohmytext",
                "k2",
                "mynewtext",
                "k3",
                "abcabcabc",
                "k4",
                "acbacbacbzz",
            ],
            EXACT,
        ),
        Run(&["LCS", "k1", "k2"], EXACT),
        Run(&["LCS", "k1", "k2", "LEN"], EXACT),
        Run(&["LCS", "k1", "k2", "IDX"], EXACT),
        Run(&["LCS", "k1", "k2", "IDX", "MINMATCHLEN", "4"], EXACT),
        Run(&["LCS", "k1", "k2", "IDX", "WITHMATCHLEN"], EXACT),
        Run(&["LCS", "k3", "k4", "IDX", "WITHMATCHLEN"], EXACT),
        Run(
            &["LCS", "k4", "k3", "idx", "minmatchlen", "2", "withmatchlen"],
            EXACT,
        ),
        Run(&["LCS", "k1", "k2", "LEN", "IDX"], EXACT),
        Run(&["LCS", "k1", "missing"], EXACT),
        Run(&["LCS", "missing", "missing", "IDX"], EXACT),
        Run(&["LCS", "k1", "h_a"], EXACT),
        Run(&["LCS", "h_a", "missing", "LEN", "IDX"], EXACT),
        Run(&["LCS", "k1", "k2", "MINMATCHLEN"], EXACT),
        Run(&["LCS", "k1", "k2", "MINMATCHLEN", "x"], EXACT),
        Run(&["LCS", "k1", "k2", "MINMATCHLEN", "-5", "IDX"], EXACT),
        Run(&["LCS", "k1", "k2", "BOGUS"], EXACT),
        Hello(3),
        Run(&["LCS", "k1", "k2", "IDX", "WITHMATCHLEN"], EXACT),
        Run(&["SORT", "s", "BY", "h_*->f", "GET", "nokey"], EXACT),
    ];
    lockstep(&script);
}

/// GETEX's expiry changes, read back with TTL and PTTL: set, replaced, persisted, and a time
/// in the past deleting the key.
#[test]
fn getex_changes_the_ttl_as_redis_does() {
    let script = [
        Run(&["SET", "k", "v", "EX", "100"], EXACT),
        Run(&["GETEX", "k"], EXACT),
        Run(&["TTL", "k"], Cmp::Within(2)),
        Run(&["GETEX", "k", "PERSIST"], EXACT),
        Run(&["TTL", "k"], EXACT),
        Run(&["GETEX", "k", "EX", "50"], EXACT),
        Run(&["TTL", "k"], Cmp::Within(2)),
        Run(&["GETEX", "k", "PX", "7000", "PX", "9000"], EXACT),
        Run(&["PTTL", "k"], Cmp::Within(2000)),
        Run(&["APPEND", "k", "w"], EXACT),
        Run(&["TTL", "k"], Cmp::Within(2)),
        Run(&["GETEX", "k", "PXAT", "1"], EXACT),
        Run(&["EXISTS", "k"], EXACT),
        Run(&["GETEX", "k", "PERSIST"], EXACT),
    ];
    lockstep(&script);
}

/// ZUNION, ZINTER and ZDIFF over overlapping sorted sets and a plain set, with every
/// aggregate, weights (infinite ones too: a NaN sum counts 0) and the STORE forms.
#[test]
fn zset_combinations_match_redis() {
    let script = [
        Run(&["ZADD", "a", "1", "x", "2", "y", "0.1", "q"], EXACT),
        Run(&["ZADD", "b", "10", "y", "20", "z", "1.5", "q"], EXACT),
        Run(&["ZADD", "c", "-0.3", "q", "5", "x"], EXACT),
        Run(&["SADD", "s", "y", "w"], EXACT),
        Run(&["ZUNION", "3", "a", "b", "c", "WITHSCORES"], EXACT),
        Run(
            &[
                "ZUNION",
                "3",
                "c",
                "b",
                "a",
                "AGGREGATE",
                "MIN",
                "WITHSCORES",
            ],
            EXACT,
        ),
        Run(
            &[
                "ZUNION",
                "3",
                "a",
                "b",
                "s",
                "AGGREGATE",
                "MAX",
                "WITHSCORES",
            ],
            EXACT,
        ),
        Run(&["ZINTER", "3", "c", "a", "b", "WITHSCORES"], EXACT),
        Run(
            &["ZINTER", "2", "a", "b", "WEIGHTS", "2", "3", "WITHSCORES"],
            EXACT,
        ),
        Run(
            &["ZINTER", "2", "a", "s", "AGGREGATE", "MIN", "WITHSCORES"],
            EXACT,
        ),
        Run(&["ZDIFF", "2", "a", "b", "WITHSCORES"], EXACT),
        // -0 is stored and replied as 0.
        Run(&["ZADD", "negzero", "-0", "m"], EXACT),
        Run(&["ZSCORE", "negzero", "m"], EXACT),
        Run(&["ZINCRBY", "negzero", "-0", "m"], EXACT),
        Run(&["ZADD", "negzero", "INCR", "-0", "new"], EXACT),
        Run(&["ZRANGE", "negzero", "0", "-1", "WITHSCORES"], EXACT),
        // 0 × a negative score is -0, which orders as 0: by member.
        Run(&["ZADD", "n", "-2", "m4", "0", "m2"], EXACT),
        Run(
            &[
                "ZINTER",
                "2",
                "n",
                "n",
                "WEIGHTS",
                "0",
                "1",
                "AGGREGATE",
                "MAX",
                "WITHSCORES",
            ],
            EXACT,
        ),
        Run(
            &["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "inf", "-inf"],
            EXACT,
        ),
        Run(&["ZRANGE", "d", "0", "-1", "WITHSCORES"], EXACT),
        // A stored -0 (0 × -0.3) reads back as 0; ZINTER's reply above kept it.
        Run(&["ZUNIONSTORE", "d", "1", "c", "WEIGHTS", "0"], EXACT),
        Run(&["ZSCORE", "d", "q"], EXACT),
        Run(
            &["ZINTERSTORE", "d", "2", "n", "n", "WEIGHTS", "0", "1"],
            EXACT,
        ),
        Run(&["ZRANGE", "d", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZINTERSTORE", "d", "2", "a", "nokey"], EXACT),
        Run(&["EXISTS", "d"], EXACT),
        Run(&["SET", "str", "v"], EXACT),
        Run(&["ZUNIONSTORE", "str", "2", "a", "a"], EXACT),
        Run(&["ZRANGE", "str", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZDIFFSTORE", "d", "3", "b", "a", "c"], EXACT),
        Run(&["ZRANGE", "d", "0", "-1", "WITHSCORES"], EXACT),
    ];
    lockstep(&script);
}

/// RESP3 as Redis 7 speaks it: pub/sub confirmations and messages are pushes; any command
/// runs while subscribed (PING answers as usual); a message a client publishes to itself
/// comes before PUBLISH's reply; typed replies (doubles, maps, sets, nulls, score pairs)
/// and a switch back to RESP2 on the same connection.
#[test]
fn resp3_replies_and_pubsub_match_redis() {
    let script = [
        Run(&["FLUSHALL"], EXACT),
        Run(&["HELLO", "4"], EXACT),
        Run(&["HELLO", "three"], EXACT),
        Hello(3),
        Run(&["ZADD", "z", "1.5", "a", "2", "b", "inf", "c"], EXACT),
        Run(&["ZSCORE", "z", "a"], EXACT),
        Run(&["ZSCORE", "z", "c"], EXACT),
        Run(&["ZSCORE", "z", "nope"], EXACT),
        Run(&["ZMSCORE", "z", "a", "nope"], EXACT),
        Run(&["ZINCRBY", "z", "0.25", "a"], EXACT),
        Run(&["ZADD", "z", "INCR", "1", "b"], EXACT),
        Run(&["ZADD", "z", "NX", "INCR", "1", "b"], EXACT),
        Run(&["ZRANGE", "z", "0", "-1", "WITHSCORES"], EXACT),
        Run(&["ZRANGE", "z", "0", "-1"], EXACT),
        Run(
            &["ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES"],
            EXACT,
        ),
        Run(&["ZUNION", "1", "z", "WITHSCORES"], EXACT),
        Run(&["ZPOPMIN", "z"], EXACT),
        Run(&["ZPOPMAX", "z", "1"], EXACT),
        Run(&["BZPOPMIN", "z", "0"], EXACT),
        Run(&["ZPOPMIN", "z"], EXACT),
        Run(&["ZPOPMIN", "z", "2"], EXACT),
        Run(&["HSET", "h", "f", "v", "g", "w"], EXACT),
        Run(&["HGETALL", "h"], Cmp::Pairs),
        Run(&["HGETALL", "nope"], EXACT),
        Run(&["SADD", "s", "x", "y"], EXACT),
        Run(&["SMEMBERS", "s"], Cmp::Unordered),
        Run(&["SMEMBERS", "nope"], EXACT),
        Run(&["SINTER", "s", "nope"], EXACT),
        Run(&["SPOP", "nope", "2"], EXACT),
        Run(&["GET", "nope"], EXACT),
        Run(&["LPOP", "nope", "2"], EXACT),
        Run(&["BLPOP", "nope", "0.01"], EXACT),
        Run(&["INCRBYFLOAT", "f", "1.5"], EXACT),
        Run(&["CONFIG", "GET", "maxclients"], EXACT),
        Run(&["SUBSCRIBE", "ch"], EXACT),
        Run(&["PSUBSCRIBE", "p*"], EXACT),
        Run(&["SET", "k", "v"], EXACT),
        Run(&["GET", "k"], EXACT),
        Run(&["PING"], EXACT),
        Run(&["PING", "hi"], EXACT),
        // The message to itself, then PUBLISH's reply.
        Run(&["PUBLISH", "ch", "hello"], EXACT),
        Read,
        Run(&["PUBLISH", "pz", "x"], EXACT),
        Read,
        Run(&["PUBLISH", "nobody", "x"], EXACT),
        Run(&["UNSUBSCRIBE"], EXACT),
        Run(&["PUNSUBSCRIBE"], EXACT),
        Run(&["UNSUBSCRIBE"], EXACT),
        Hello(2),
        Run(&["ZADD", "z", "1.5", "a"], EXACT),
        Run(&["ZSCORE", "z", "a"], EXACT),
        Run(&["GET", "nope"], EXACT),
        Run(&["LPOP", "nope", "2"], EXACT),
        Run(&["SUBSCRIBE", "ch"], EXACT),
        Run(&["PING"], EXACT),
        Run(&["GET", "k"], EXACT),
    ];
    lockstep(&script);
}

/// Lua scripts (EVAL, EVALSHA, EVAL_RO, SCRIPT): conversions both ways, `redis.call` and
/// `redis.pcall` errors, script errors with their `script: <sha>, on @user_script:<line>.`
/// suffix, compile errors, the read-only globals, `#!lua` flags, KEYS/ARGV, SELECT inside a
/// script, the deterministic `math.random`, and RESP3 replies with `redis.setresp(3)`.
#[test]
fn lua_scripts_match_redis() {
    let script = [
        Run(&["SET", "s", "abc"], EXACT),
        Run(&["HSET", "h", "f", "v"], EXACT),
        Run(&["RPUSH", "l", "a", "b", "c"], EXACT),
        Run(&["ZADD", "z", "1.5", "m"], EXACT),
        Run(&["EVAL", "return 1", "0"], EXACT),
        Run(&["EVAL", "return 3.99", "0"], EXACT),
        Run(&["EVAL", "return -3.7", "0"], EXACT),
        Run(&["EVAL", "return 1e20", "0"], EXACT),
        Run(&["EVAL", "return 0/0", "0"], EXACT),
        Run(&["EVAL", "return 'x'", "0"], EXACT),
        Run(&["EVAL", "return true", "0"], EXACT),
        Run(&["EVAL", "return false", "0"], EXACT),
        Run(&["EVAL", "return nil", "0"], EXACT),
        Run(
            &["EVAL", "return {1,'a',{2,3},true,false,'after'}", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return {1,2,nil,4}", "0"], EXACT),
        Run(&["EVAL", "return {ok='fine'}", "0"], EXACT),
        Run(&["EVAL", "return {ok='a\\r\\nb'}", "0"], EXACT),
        Run(&["EVAL", "return {err='My Error'}", "0"], EXACT),
        Run(&["EVAL", "return {err=''}", "0"], EXACT),
        Run(&["EVAL", "return {err=5}", "0"], EXACT),
        Run(&["EVAL", "return {1, {err='inner'}, 2}", "0"], EXACT),
        Run(&["EVAL", "return {double=1.5}", "0"], EXACT),
        Run(&["EVAL", "return redis.error_reply('my err')", "0"], EXACT),
        Run(&["EVAL", "return redis.error_reply('-ERR x')", "0"], EXACT),
        Run(&["EVAL", "return redis.error_reply('')", "0"], EXACT),
        Run(&["EVAL", "return redis.error_reply(5)", "0"], EXACT),
        Run(&["EVAL", "return redis.status_reply('FINE')", "0"], EXACT),
        Run(&["EVAL", "return redis.sha1hex('')", "0"], EXACT),
        Run(&["EVAL", "return redis.sha1hex(1.5)", "0"], EXACT),
        Run(
            &[
                "EVAL",
                "return {KEYS[1], ARGV[1], #KEYS, #ARGV}",
                "1",
                "k",
                "a",
                "b",
            ],
            EXACT,
        ),
        Run(
            &["EVAL", "return redis.call('get', KEYS[1])", "1", "s"],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('get', 'nokey')", "0"], EXACT),
        Run(
            &["EVAL", "return type(redis.call('get', 'nokey'))", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('hgetall', 'h')", "0"], EXACT),
        Run(
            &["EVAL", "return redis.call('lrange', 'l', 0, -1)", "0"],
            EXACT,
        ),
        Run(
            &["EVAL", "return redis.call('zscore', 'z', 'm')", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('set', 'n1', 3.5)", "0"], EXACT),
        Run(&["EVAL", "return redis.call('set', 'n2', 0.1)", "0"], EXACT),
        Run(
            &["EVAL", "return redis.call('set', 'n3', 1e20)", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('set', 'n4', 42)", "0"], EXACT),
        Run(&["MGET", "n1", "n2", "n3", "n4"], EXACT),
        Run(&["EVAL", "return redis.call('ping')", "0"], EXACT),
        Run(&["EVAL", "return redis.call('set', 'k', 'v')", "0"], EXACT),
        Run(&["EVAL", "return redis.call('incr', 's')", "0"], EXACT),
        Run(&["EVAL", "return redis.pcall('incr', 's')", "0"], EXACT),
        Run(
            &[
                "EVAL",
                "local e = redis.pcall('incr', 's'); return e.err",
                "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "local ok, e = pcall(redis.call, 'incr', 's'); return {tostring(ok), e}",
                "0",
            ],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('hget', 's', 'f')", "0"], EXACT),
        Run(&["EVAL", "return redis.call('nosuch')", "0"], EXACT),
        Run(&["EVAL", "return redis.pcall('nosuch')", "0"], EXACT),
        Run(
            &["EVAL", "\nlocal a = 1\nreturn redis.call('get')", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('multi')", "0"], EXACT),
        Run(&["EVAL", "return redis.call('blpop', 'l', 0)", "0"], EXACT),
        Run(
            &["EVAL", "return redis.call('eval', 'return 1', 0)", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call()", "0"], EXACT),
        Run(&["EVAL", "return redis.call('get', {})", "0"], EXACT),
        Run(&["EVAL", "error('boom')", "0"], EXACT),
        Run(
            &["EVAL", "local function f() error('deep') end\nf()", "0"],
            EXACT,
        ),
        Run(&["EVAL", "error({err='X boom'})", "0"], EXACT),
        Run(&["EVAL", "error()", "0"], EXACT),
        Run(&["EVAL", "error(12)", "0"], EXACT),
        Run(&["EVAL", "error('a\\r\\nb')", "0"], EXACT),
        Run(&["EVAL", "local t = nil; return t.x", "0"], EXACT),
        Run(&["EVAL", "x = 5", "0"], EXACT),
        Run(&["EVAL", "return y", "0"], EXACT),
        Run(&["EVAL", "return os", "0"], EXACT),
        Run(&["EVAL", "return print", "0"], EXACT),
        Run(&["EVAL", "string.x = 1", "0"], EXACT),
        Run(&["EVAL", "redis.call = nil", "0"], EXACT),
        Run(&["EVAL", "rawset(_G, 'x', 1)", "0"], EXACT),
        Run(&["EVAL", "setmetatable(_G, nil)", "0"], EXACT),
        Run(&["EVAL", "local t = {}; t.x = 1; return t.x", "0"], EXACT),
        Run(&["EVAL", "return loadstring('return 5')()", "0"], EXACT),
        Run(&["EVAL", "loadstring('leak = 1')()", "0"], EXACT),
        Run(&["EVAL", "return loadstring('return leak')()", "0"], EXACT),
        Run(
            &[
                "EVAL",
                "local function f(n) return n == 0 and 0 or 1 + f(n - 1) end; return f(100)",
                "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "return {type(string), type(table), type(math), type(coroutine), type(unpack), type(_G)}",
                "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "return tostring(0.1) .. ' ' .. tostring(1/3) .. ' ' .. tostring(1e100)",
                "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "return {math.random(), math.random(10), math.random(5, 50)}",
                "0",
            ],
            EXACT,
        ),
        Run(
            &["EVAL", "return {math.random(100), math.random(100)}", "0"],
            EXACT,
        ),
        Run(
            &["EVAL", "math.randomseed(7); return math.random(1000)", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return math.random(0)", "0"], EXACT),
        Run(&["EVAL", "return 'a' ..", "0"], EXACT),
        Run(&["EVAL", "return 1", "-1"], EXACT),
        Run(&["EVAL", "return 1", "2", "a"], EXACT),
        Run(&["EVAL", "return 1", "x"], EXACT),
        Run(&["EVAL", "return 1"], EXACT),
        Run(
            &["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
            EXACT,
        ),
        Run(
            &[
                "SCRIPT",
                "EXISTS",
                "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
                "abc",
            ],
            EXACT,
        ),
        Run(&["SCRIPT", "LOAD", "return 'loaded'"], EXACT),
        Run(
            &["EVALSHA", "ae3ab6e3c3e1d1a9a2e7c3c5a8a0c6e0e1e7e6a1", "0"],
            EXACT,
        ),
        Run(
            &["EVALSHA", "4B0C07A5A1B3DD62D1D93C5F33ED3B5FCB3B1D5F", "0"],
            EXACT,
        ),
        Run(&["SCRIPT", "FLUSH"], EXACT),
        Run(
            &[
                "SCRIPT",
                "EXISTS",
                "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
            ],
            EXACT,
        ),
        Run(
            &["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
            EXACT,
        ),
        Run(&["SCRIPT", "FLUSH", "ASYNC"], EXACT),
        Run(&["SCRIPT", "FLUSH", "bad"], EXACT),
        Run(&["SCRIPT", "LOAD"], EXACT),
        Run(&["SCRIPT", "LOAD", "return +"], EXACT),
        Run(&["SCRIPT", "EXISTS"], EXACT),
        Run(&["SCRIPT", "KILL"], EXACT),
        Run(&["SCRIPT", "KILL", "x"], EXACT),
        Run(&["SCRIPT", "HELP"], EXACT),
        Run(&["SCRIPT", "nosuch"], EXACT),
        Run(&["EVAL_RO", "return redis.call('get', 's')", "0"], EXACT),
        Run(
            &["EVAL_RO", "return redis.call('set', 'a', 'b')", "0"],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')",
                "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "#!lua\nreturn redis.call('set', KEYS[1], 'b')",
                "1",
                "sb",
            ],
            EXACT,
        ),
        Run(&["EVAL", "#!lua flags=bad\nreturn 1", "0"], EXACT),
        Run(&["EVAL", "#!lua name=x\nreturn 1", "0"], EXACT),
        Run(&["EVAL", "#!luax\nreturn 1", "0"], EXACT),
        Run(&["EVAL", "return redis.setresp(4)", "0"], EXACT),
        Run(
            &[
                "EVAL",
                "redis.call('select', 1); redis.call('set', 'db1', 'x'); return redis.call('get', 'db1')",
                "0",
            ],
            EXACT,
        ),
        Run(&["GET", "db1"], EXACT),
        Run(&["SELECT", "1"], EXACT),
        Run(&["GET", "db1"], EXACT),
        Run(&["SELECT", "0"], EXACT),
        Run(
            &[
                "EVAL",
                "redis.call('set', 'w1', 'x'); return redis.call('incr', 's')",
                "0",
            ],
            EXACT,
        ),
        Run(&["GET", "w1"], EXACT),
        Run(
            &[
                "EVAL",
                "redis.setresp(3); return redis.call('hgetall', 'h')",
                "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "redis.setresp(3); return redis.call('zscore', 'z', 'm')",
                "0",
            ],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "redis.setresp(3); local r = redis.call('get', 'nokey'); return type(r)",
                "0",
            ],
            EXACT,
        ),
        Run(&["EVAL", "redis.setresp(3); return true", "0"], EXACT),
        Run(&["EVAL", "redis.setresp(3); return false", "0"], EXACT),
        Run(&["EVAL", "return {map={a=1}}", "0"], EXACT),
        Run(&["EVAL", "return {set={a=true}}", "0"], EXACT),
        Run(&["EVAL", "return {big_number='123'}", "0"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["EVAL", "return redis.call('incr', 'cnt')", "0"], EXACT),
        Run(&["EVAL", "return redis.call('incr', 'cnt')", "0"], EXACT),
        Run(&["EXEC"], EXACT),
        Hello(3),
        Run(&["EVAL", "return {map={a=1}}", "0"], EXACT),
        Run(&["EVAL", "return {set={a=true}}", "0"], EXACT),
        Run(&["EVAL", "return {double=2.5}", "0"], EXACT),
        Run(&["EVAL", "return {big_number='123'}", "0"], EXACT),
        Run(&["EVAL", "return nil", "0"], EXACT),
        Run(&["EVAL", "return false", "0"], EXACT),
        Run(
            &[
                "EVAL",
                "redis.setresp(3); return redis.call('hgetall', 'h')",
                "0",
            ],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('hgetall', 'h')", "0"], EXACT),
        Run(&["EVAL", "redis.setresp(3); return false", "0"], EXACT),
    ];
    lockstep(&script);
}

/// Redis 7 functions: FUNCTION LOAD (library metadata, registration errors, REPLACE,
/// clashing names), FCALL and FCALL_RO (keys and arguments, flags, errors located at the
/// function's line), FUNCTION LIST/STATS/DELETE/FLUSH.
#[test]
fn lua_functions_match_redis() {
    const LIB: &str = "#!lua name=lib1\nredis.register_function('f1', function(keys, args) \
                       return {keys[1], args[1], redis.call('get', keys[1])} end)";
    let script = [
        Run(&["SET", "k", "v"], EXACT),
        Run(&["FUNCTION", "LOAD", "return 1"], EXACT),
        Run(&["FUNCTION", "LOAD", "#!lua\nreturn 1"], EXACT),
        Run(&["FUNCTION", "LOAD", "#!lua name=l1\nreturn 1"], EXACT),
        Run(&["FUNCTION", "LOAD", "#!luax name=a\nx"], EXACT),
        Run(&["FUNCTION", "LOAD", "#!lua name=l4 foo=bar\nx"], EXACT),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=bad-name\nredis.register_function('x', function() end)",
            ],
            EXACT,
        ),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=l3\nredis.register_function('bad-f', function() end)",
            ],
            EXACT,
        ),
        Run(
            &["FUNCTION", "LOAD", "#!lua name=l4\nredis.call('ping')"],
            EXACT,
        ),
        Run(&["FUNCTION", "LOAD", "#!lua name=l4\nerror('x')"], EXACT),
        Run(&["FUNCTION", "LOAD", "#!lua name=l4\nreturn +"], EXACT),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=l1\nredis.register_function('f', function() return 1 end)\nredis.register_function('f', function() return 2 end)",
            ],
            EXACT,
        ),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=l1\nredis.register_function{function_name='f'}",
            ],
            EXACT,
        ),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=l1\nredis.register_function{function_name='f', callback=function() end, flags={'bad'}}",
            ],
            EXACT,
        ),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=l1\nredis.register_function('f', 5)",
            ],
            EXACT,
        ),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=l1\nredis.register_function()",
            ],
            EXACT,
        ),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=l1\nredis.register_function{function_name='f', callback=function() end, foo=1}",
            ],
            EXACT,
        ),
        Run(&["FUNCTION", "LOAD", LIB], EXACT),
        Run(&["FUNCTION", "LOAD", LIB], EXACT),
        Run(&["FUNCTION", "LOAD", "REPLACE", LIB], EXACT),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=lib2\nredis.register_function('f1', function() return 1 end)",
            ],
            EXACT,
        ),
        Run(&["FCALL", "f1", "1", "k", "a"], EXACT),
        Run(&["FCALL", "f1", "2", "k"], EXACT),
        Run(&["FCALL", "f1", "-1"], EXACT),
        Run(&["FCALL", "nosuch", "0"], EXACT),
        Run(&["FCALL_RO", "f1", "1", "k", "a"], EXACT),
        Run(&["FUNCTION", "LIST"], EXACT),
        Run(&["FUNCTION", "LIST", "WITHCODE"], EXACT),
        Run(&["FUNCTION", "LIST", "LIBRARYNAME", "lib*"], EXACT),
        Run(&["FUNCTION", "LIST", "LIBRARYNAME", "x*"], EXACT),
        Run(&["FUNCTION", "LIST", "LIBRARYNAME"], EXACT),
        Run(&["FUNCTION", "LIST", "bad"], EXACT),
        Run(&["FUNCTION", "STATS"], EXACT),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=lib3\nlocal x = 5\nredis.register_function{function_name='g', callback=function(keys, args) return redis.call('set', keys[1], args[1]) end, flags={'no-writes'}, description='desc'}\nredis.register_function('h', function(keys, args) error('in h') end)\nredis.register_function('n', function(keys, args) return x + #keys end)",
            ],
            EXACT,
        ),
        Run(&["FCALL", "g", "1", "k", "v"], EXACT),
        Run(&["FCALL_RO", "g", "1", "k", "v"], EXACT),
        Run(&["FCALL", "h", "0"], EXACT),
        Run(&["FCALL", "n", "2", "a", "b"], EXACT),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=lib6\nredis.register_function('u', function(keys, args)\n  return nosuch\nend)",
            ],
            EXACT,
        ),
        Run(&["FCALL", "u", "0"], EXACT),
        Run(
            &[
                "FUNCTION",
                "LOAD",
                "#!lua name=lib5\nredis.register_function{function_name='g5', callback=function() return 5 end, flags={'allow-stale', 'no-writes', 'no-writes'}, description='five'}",
            ],
            EXACT,
        ),
        Run(
            &["FUNCTION", "LIST", "LIBRARYNAME", "lib5", "WITHCODE"],
            EXACT,
        ),
        Run(&["FCALL_RO", "g5", "0"], EXACT),
        Run(&["FUNCTION", "DELETE", "lib3"], EXACT),
        Run(&["FUNCTION", "DELETE", "lib3"], EXACT),
        Run(&["FCALL", "g", "1", "k", "v"], EXACT),
        Run(&["FUNCTION", "KILL"], EXACT),
        Run(&["FUNCTION", "FLUSH", "bad"], EXACT),
        Run(&["FUNCTION", "FLUSH"], EXACT),
        Run(&["FCALL", "f1", "1", "k", "a"], EXACT),
        Run(&["FUNCTION", "LIST"], EXACT),
        Run(&["FUNCTION"], EXACT),
    ];
    lockstep(&script);
}

/// WAIT (no replicas: 0 at once when none are asked for or inside MULTI, otherwise 0 at the
/// timeout) and RESET (out of a transaction, watched keys, subscriptions, the selected
/// database, RESP3 and CLIENT REPLY OFF, back to a fresh connection).
#[test]
fn wait_and_reset_match_redis() {
    let script = [
        Run(&["WAIT", "0", "0"], EXACT),
        Run(&["WAIT", "1", "50"], EXACT),
        Run(&["WAIT", "x", "0"], EXACT),
        Run(&["WAIT", "0", "x"], EXACT),
        Run(&["WAIT", "0", "-1"], EXACT),
        Run(&["WAIT", "0"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["WAIT", "1", "0"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["EVAL", "return redis.call('wait', 0, 0)", "0"], EXACT),
        Run(&["SELECT", "3"], EXACT),
        Run(&["SET", "in3", "v"], EXACT),
        Run(&["CLIENT", "SETNAME", "named"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["SET", "queued", "v"], EXACT),
        Run(&["RESET"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["GET", "queued"], EXACT),
        Run(&["GET", "in3"], EXACT),
        Run(&["CLIENT", "GETNAME"], EXACT),
        Run(&["SUBSCRIBE", "ch"], EXACT),
        Run(&["RESET"], EXACT),
        Run(&["PING"], EXACT),
        Run(&["PUBSUB", "NUMSUB", "ch"], EXACT),
        Hello(3),
        Run(&["HSET", "h", "f", "v"], EXACT),
        Run(&["HGETALL", "h"], EXACT),
        Run(&["RESET"], EXACT),
        Run(&["HGETALL", "h"], EXACT),
        Run(&["RESET", "extra"], EXACT),
    ];
    lockstep(&script);
}

/// What a standalone Redis without replicas answers to cluster, replication and client
/// administration commands: CLUSTER and its connection modes disabled (after the
/// subcommand's arity check), REPLICAOF NO ONE accepted (a port that does not parse
/// refused first; a real primary is never named here, or the reference would follow it),
/// FAILOVER's parse and its two refusals, BGREWRITEAOF (scheduled inside a transaction),
/// and CLIENT's subcommands with their arities, help and tracking state.
#[test]
fn standalone_admin_commands_match_redis() {
    let script = [
        Run(&["CLUSTER", "INFO"], EXACT),
        Run(&["CLUSTER", "info"], EXACT),
        Run(&["CLUSTER", "KEYSLOT", "k"], EXACT),
        Run(&["CLUSTER", "HELP", "x"], EXACT),
        Run(&["CLUSTER", "SETSLOT", "1"], EXACT),
        Run(&["CLUSTER", "NOSUCH"], EXACT),
        Run(&["CLUSTER"], EXACT),
        Run(&["READONLY"], EXACT),
        Run(&["READWRITE"], EXACT),
        Run(&["ASKING"], EXACT),
        Run(&["READONLY", "x"], EXACT),
        Run(&["REPLICAOF", "NO", "ONE"], EXACT),
        Run(&["SLAVEOF", "no", "one"], EXACT),
        Run(&["REPLICAOF", "no", "x"], EXACT),
        Run(&["REPLICAOF", "127.0.0.1", "port"], EXACT),
        Run(&["REPLICAOF", "NO"], EXACT),
        Run(&["FAILOVER"], EXACT),
        Run(&["FAILOVER", "FORCE"], EXACT),
        Run(
            &["FAILOVER", "TO", "h", "1", "TIMEOUT", "5", "FORCE"],
            EXACT,
        ),
        Run(&["FAILOVER", "ABORT"], EXACT),
        Run(&["FAILOVER", "ABORT", "x"], EXACT),
        Run(&["FAILOVER", "ABORT", "TIMEOUT", "5"], EXACT),
        Run(&["FAILOVER", "TO", "h"], EXACT),
        Run(&["FAILOVER", "TO", "h", "x"], EXACT),
        Run(&["FAILOVER", "TO", "h", "1", "TO", "h", "2"], EXACT),
        Run(&["FAILOVER", "TIMEOUT", "x"], EXACT),
        Run(&["FAILOVER", "TIMEOUT", "-1"], EXACT),
        Run(&["FAILOVER", "TIMEOUT", "1", "TIMEOUT", "2"], EXACT),
        Run(&["MULTI"], EXACT),
        Run(&["BGREWRITEAOF"], EXACT),
        Run(&["REPLICAOF", "NO", "ONE"], EXACT),
        Run(&["EXEC"], EXACT),
        Run(&["BGREWRITEAOF", "x"], EXACT),
        Run(&["CLIENT", "HELP"], EXACT),
        Run(&["CLIENT", "GETREDIR"], EXACT),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Run(&["CLIENT", "CACHING", "YES"], EXACT),
        Run(&["CLIENT", "CACHING", "x"], EXACT),
        Run(&["CLIENT", "NO-EVICT", "ON"], EXACT),
        Run(&["CLIENT", "NO-EVICT", "off"], EXACT),
        Run(&["CLIENT", "NO-EVICT", "x"], EXACT),
        Run(&["CLIENT", "UNBLOCK", "99999"], EXACT),
        Run(&["CLIENT", "UNBLOCK", "0"], EXACT),
        Run(&["CLIENT", "UNBLOCK", "-5", "TIMEOUT"], EXACT),
        Run(&["CLIENT", "UNBLOCK", "x"], EXACT),
        Run(&["CLIENT", "UNBLOCK", "1", "x"], EXACT),
        Run(&["CLIENT", "UNBLOCK", "1", "ERROR", "x"], EXACT),
        Run(&["CLIENT", "UNBLOCK"], EXACT),
        Run(&["CLIENT", "GETNAME", "x"], EXACT),
        Run(&["CLIENT", "ID", "x"], EXACT),
        Run(&["CLIENT", "INFO", "x"], EXACT),
        Run(&["CLIENT", "KILL"], EXACT),
        Run(&["CLIENT", "REPLY"], EXACT),
        Run(&["CLIENT", "TRACKINGINFO", "x"], EXACT),
        Run(&["CLIENT", "NOSUCH"], EXACT),
        Run(&["CLIENT", "no\r\nsuch"], EXACT),
        Run(&["SLOWLOG", "no\nsuch"], EXACT),
        Run(
            &[
                "SCRIPT",
                "0123456789012345678901234567890123456789012345678901234567890123456789\
                 0123456789012345678901234567890123456789012345678901234567890123456789",
            ],
            EXACT,
        ),
        Run(&["CLIENT", "PAUSE", "-1"], EXACT),
        Run(&["CLIENT", "PAUSE", "x"], EXACT),
        Run(&["CLIENT", "PAUSE", "1", "x"], EXACT),
        Run(&["CLIENT", "PAUSE", "1", "WRITE", "x"], EXACT),
        Run(&["CLIENT", "PAUSE"], EXACT),
        Run(&["CLIENT", "PAUSE", "0", "WRITE"], EXACT),
        Run(&["CLIENT", "UNPAUSE", "x"], EXACT),
        Run(&["CLIENT", "UNPAUSE"], EXACT),
        // Subcommands flagged `noscript`, HELP aside.
        Run(&["EVAL", "return redis.call('client', 'id')", "0"], EXACT),
        Run(
            &["EVAL", "return redis.call('client', 'help')[1]", "0"],
            EXACT,
        ),
        Run(
            &[
                "EVAL",
                "return redis.call('config', 'get', 'maxclients')",
                "0",
            ],
            EXACT,
        ),
        Run(
            &["EVAL", "return redis.call('config', 'help')[1]", "0"],
            EXACT,
        ),
        Run(
            &["EVAL", "return redis.call('function', 'list')", "0"],
            EXACT,
        ),
        Run(&["CONFIG", "HELP"], EXACT),
        Run(&["CONFIG", "HELP", "x"], EXACT),
        Run(&["CONFIG", "REWRITE"], EXACT),
        Run(
            &["EVAL", "return redis.call('latency', 'latest')", "0"],
            EXACT,
        ),
        Run(
            &["EVAL", "return redis.call('latency', 'help')[1]", "0"],
            EXACT,
        ),
        Run(&["EVAL", "return redis.call('slowlog', 'len')", "0"], EXACT),
        Run(&["EVAL", "return redis.call('readonly')", "0"], EXACT),
        Run(
            &["EVAL", "return redis.call('replicaof', 'no', 'one')", "0"],
            EXACT,
        ),
        Run(
            &[
                "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "ab",
            ],
            EXACT,
        ),
        Run(&["CLIENT", "TRACKING", "ON", "PREFIX", "a"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "REDIRECT", "99999"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "REDIRECT", "x"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "REDIRECT"], EXACT),
        Run(&["CLIENT", "TRACKING", "MAYBE"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "FOO"], EXACT),
        Run(&["CLIENT", "TRACKING", "OFF", "X"], EXACT),
        Run(&["CLIENT", "TRACKING"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "OPTIN"], EXACT),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Run(&["CLIENT", "GETREDIR"], EXACT),
        Run(&["CLIENT", "CACHING", "NO"], EXACT),
        Run(&["CLIENT", "CACHING", "YES"], EXACT),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Run(&["CLIENT", "CACHING", "MAYBE"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "OPTOUT"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "BCAST"], EXACT),
        Run(&["CLIENT", "TRACKING", "OFF"], EXACT),
        Run(
            &[
                "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "NOLOOP",
            ],
            EXACT,
        ),
        Run(&["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"], EXACT),
        Run(
            &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "abc"],
            EXACT,
        ),
        Run(
            &[
                "CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "x", "PREFIX", "b",
            ],
            EXACT,
        ),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON"], EXACT),
        Run(&["CLIENT", "TRACKING", "OFF"], EXACT),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Run(&["CLIENT", "TRACKING", "ON", "OPTOUT", "NOLOOP"], EXACT),
        Run(&["CLIENT", "CACHING", "NO"], EXACT),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Run(&["RESET"], EXACT),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Hello(3),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
        Run(
            &["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "p:"],
            EXACT,
        ),
        Run(&["CLIENT", "TRACKINGINFO"], EXACT),
    ];
    lockstep(&script);
}
