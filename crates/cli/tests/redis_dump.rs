//! DUMP and RESTORE against a real `redis-server` 7.0: what either server DUMPs RESTOREs
//! into the other with the same contents, DUMPs are byte for byte Redis's where Redis keeps
//! the elements in docdb's order, every reply (errors included) is Redis's, and TTLs,
//! ABSTTL, REPLACE and blocked clients behave as in Redis.

mod common_redis;

use std::time::Duration;

use common_redis::{Frame, RespClient, Server, docdb, render, require_redis};
use docdb_redis::rdb::framed;
use engine::Rng;

/// Sends `args` and returns the reply, failing the test on a connection error.
fn call<A: AsRef<[u8]>>(client: &mut RespClient, args: &[A]) -> Frame {
    client.call(args).expect("request")
}

/// What a key holds, in a form that does not depend on element order where the type has
/// none: `TYPE`, then the value (hash pairs and set members sorted).
fn contents(client: &mut RespClient, key: &[u8]) -> String {
    let kind = match call(client, &[&b"TYPE"[..], key]) {
        Frame::Simple(kind) => kind,
        other => return render(&other),
    };
    let read: &[&[u8]] = match kind.as_str() {
        "string" => &[b"GET", key],
        "list" => &[b"LRANGE", key, b"0", b"-1"],
        "hash" => &[b"HGETALL", key],
        "set" => &[b"SMEMBERS", key],
        "zset" => &[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"],
        _ => return kind,
    };
    let value = match (kind.as_str(), call(client, read)) {
        ("hash", Frame::Array(items)) => {
            let mut pairs: Vec<String> = items
                .chunks(2)
                .map(|pair| pair.iter().map(render).collect::<Vec<_>>().join(" => "))
                .collect();
            pairs.sort();
            pairs.join(", ")
        }
        ("set", Frame::Array(items)) => {
            let mut members: Vec<String> = items.iter().map(render).collect();
            members.sort();
            members.join(", ")
        }
        (_, other) => render(&other),
    };
    format!("{kind}: {value}")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A word of `len` letters from a small alphabet (so that long ones compress).
fn word(rng: &mut Rng, len: usize) -> String {
    (0..len)
        .map(|_| char::from(b'a' + rng.below(10) as u8))
        .collect()
}

/// Commands that build keys of every type and encoding, and which keys Redis DUMPs with
/// the bytes docdb gives (those whose elements Redis keeps in docdb's order).
struct Dataset {
    commands: Vec<Vec<Vec<u8>>>,
    identical: Vec<&'static str>,
    keys: Vec<&'static str>,
}

fn dataset() -> Dataset {
    let mut rng = Rng::new(7);
    let mut commands: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut add =
        |words: Vec<String>| commands.push(words.into_iter().map(String::into_bytes).collect());
    let s = |items: &[&str]| items.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    for (key, value) in [
        ("s:word", "hello".to_string()),
        ("s:empty", String::new()),
        ("s:int8", "12".into()),
        ("s:int16", "-300".into()),
        ("s:int32", "70000".into()),
        ("s:int64", "12345678901".into()),
        ("s:zeros", "007".into()),
        ("s:lzf", "a".repeat(40)),
        ("s:long", word(&mut rng, 10_000)),
    ] {
        add(s(&["SET", key, &value]));
    }
    add(s(&[
        "RPUSH", "l:small", "a", "b", "1", "-5", "1000", "", "x",
    ]));
    for _ in 0..20 {
        let mut push = s(&["RPUSH", "l:nodes"]);
        for _ in 0..100 {
            push.push(match rng.below(10) {
                0..=2 => (rng.next_u64() as i64 / 1000).to_string(),
                3..=8 => {
                    let len = rng.below(100) as usize;
                    word(&mut rng, len)
                }
                _ => {
                    let len = 1000 + rng.below(4000) as usize;
                    word(&mut rng, len)
                }
            });
        }
        add(push);
    }
    add(s(&[
        "RPUSH",
        "l:huge",
        &"x".repeat(20_000),
        "a",
        &"y".repeat(9000),
    ]));
    let mut lpush = s(&["LPUSH", "l:lpushed"]);
    lpush.extend((0..3000).map(|i| format!("element-{i}")));
    add(lpush);
    let fields = |n: usize, value_len: usize, rng: &mut Rng| {
        (0..n)
            .flat_map(|i| [format!("f{i:04}"), word(rng, value_len)])
            .collect::<Vec<_>>()
    };
    for (key, n, len) in [("h:small", 3, 5), ("h:512", 512, 10), ("h:513", 513, 10)] {
        let mut hset = s(&["HSET", key]);
        hset.extend(fields(n, len, &mut rng));
        add(hset);
    }
    add(s(&[
        "HSET",
        "h:64",
        "a",
        &"v".repeat(64),
        &"f".repeat(64),
        "1",
    ]));
    add(s(&["HSET", "h:65", "a", &"v".repeat(65), "b", "2"]));
    add(s(&["SADD", "set:int16", "5", "-3", "300"]));
    add(s(&[
        "SADD",
        "set:int64",
        "1",
        "-9223372036854775808",
        "9223372036854775807",
    ]));
    let mut big = s(&["SADD", "set:512"]);
    big.extend((0..512).map(|i| (i * 1000).to_string()));
    add(big);
    let mut bigger = s(&["SADD", "set:513"]);
    bigger.extend((0..513).map(|i| i.to_string()));
    add(bigger);
    add(s(&["SADD", "set:words", "apple", "banana", "cherry", "1"]));
    add(s(&[
        "ZADD", "z:small", "1", "a", "2.5", "b", "-inf", "c", "1e20", "d", "0.1", "e",
    ]));
    let mut zbig = s(&["ZADD", "z:200"]);
    for i in 0..200 {
        zbig.push((rng.below(50) as f64 / 4.0).to_string());
        zbig.push(format!("m{i}"));
    }
    add(zbig);
    add(s(&[
        "ZADD",
        "z:long",
        "1",
        &"m".repeat(65),
        "2",
        "n",
        "inf",
        "o",
        "5e-324",
        "p",
    ]));
    let identical = vec![
        "s:word",
        "s:empty",
        "s:int8",
        "s:int16",
        "s:int32",
        "s:int64",
        "s:zeros",
        "s:lzf",
        "s:long",
        "l:small",
        "l:nodes",
        "l:huge",
        "h:small",
        "h:512",
        "h:64",
        "set:int16",
        "set:int64",
        "set:512",
        "z:small",
        "z:200",
        "z:long",
    ];
    // Every key: those above, and those whose payloads differ from Redis's in bytes (element
    // order, list node splits) but not in contents.
    let differing = ["l:lpushed", "h:513", "h:65", "set:513", "set:words"];
    let keys = identical.iter().copied().chain(differing).collect();
    Dataset {
        commands,
        identical,
        keys,
    }
}

fn load(server: &Server, data: &Dataset) -> RespClient {
    let mut client = server.client();
    for command in &data.commands {
        let reply = call(&mut client, command);
        assert!(
            !matches!(reply, Frame::Error(_)),
            "{}: {}",
            server.name,
            render(&reply)
        );
    }
    client
}

fn bulk(frame: Frame, what: &str) -> Vec<u8> {
    match frame {
        Frame::Bulk(bytes) => bytes,
        other => panic!("{what}: expected a payload, got {}", render(&other)),
    }
}

#[test]
fn payloads_restore_across_servers_with_the_same_contents() {
    let data = dataset();
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (load(&redis, &data), load(&docdb, &data));
    for key in &data.keys {
        let from_redis = bulk(call(&mut r, &["DUMP", key]), "redis DUMP");
        let from_docdb = bulk(call(&mut d, &["DUMP", key]), "docdb DUMP");
        let into = format!("restored:{key}");
        let ok = Frame::Simple("OK".into());
        assert_eq!(
            call(&mut d, &[b"RESTORE", into.as_bytes(), b"0", &from_redis]),
            ok,
            "{key}"
        );
        assert_eq!(
            call(&mut r, &[b"RESTORE", into.as_bytes(), b"0", &from_docdb]),
            ok,
            "{key}"
        );
        let want = contents(&mut r, key.as_bytes());
        for (name, client) in [("redis", &mut r), ("docdb", &mut d)] {
            for k in [key.to_string(), into.clone()] {
                assert_eq!(contents(client, k.as_bytes()), want, "{name}: {k}");
            }
        }
    }
}

#[test]
fn dumps_are_redis_bytes_where_the_order_is_shared() {
    let data = dataset();
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (load(&redis, &data), load(&docdb, &data));
    for key in &data.identical {
        // The second DUMP: Redis's LZF hash table is stack garbage left by the compression
        // before, which a compression of the same bytes just before makes harmless.
        call(&mut r, &["DUMP", key]);
        let want = bulk(call(&mut r, &["DUMP", key]), "redis DUMP");
        let got = bulk(call(&mut d, &["DUMP", key]), "docdb DUMP");
        assert!(
            got == want,
            "{key}: docdb's DUMP differs from Redis's ({} vs {} bytes)",
            got.len(),
            want.len()
        );
    }
}

/// Hand-built payloads of encodings Redis 7.0 reads but no longer writes (the same as
/// `docdb_redis::rdb`'s unit tests; each checked against redis-server 7.0.15 there).
const OLD_ENCODINGS: &[(&str, &str)] = &[
    (
        "list type 1",
        "0104016100c0074046787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878780a00ad5efd6c6067e41b",
    ),
    (
        "zset type 3",
        "0305016103312e350162fe0163ff0164022d33016504316531300a00a2fe86534e740092",
    ),
    (
        "hash type 4",
        "0402026631027631026632c0050a005539a7bff3af89b3",
    ),
    (
        "zipmap",
        "092303046e616d65050272656469730000037665720102320000000502656d7074790000ff0a00b663d612b186bf2c",
    ),
    (
        "intset16",
        "0b0e0200000003000000fbff01002c010a000f5f7a8eb59409d2",
    ),
    (
        "zset ziplist",
        "0c2e2e00000023000000080000016303042d696e6606016103f20201620303322e3505016403e0005ed0b200000000ff0a00167f443e46404c46",
    ),
    (
        "hash ziplist",
        "0d1919000000150000000400000266310402763104016e03fe2aff0a001f7f8730421405f1",
    ),
    (
        "quicklist",
        "0e03131300000010000000030000016103016203f2ff0b0b0000000a0000000000ff11110000000d000000020000016303fefeff0a00db608aca21af628e",
    ),
    (
        "hash listpack",
        "1019190000000600816602817602816902cfff02816a02d00002ff0a00ccef5fd3cc78f157",
    ),
    (
        "len64",
        "0081000000000000000568656c6c6f0a005245fdd6f880aef8",
    ),
];

#[test]
fn old_encodings_restore_as_in_redis() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    for (what, payload) in OLD_ENCODINGS {
        let payload = hex(payload);
        let replies: Vec<Frame> = [&mut r, &mut d]
            .into_iter()
            .map(|c| call(c, &[b"RESTORE", what.as_bytes(), b"0", &payload]))
            .collect();
        assert_eq!(replies[0], replies[1], "{what}");
        assert_eq!(
            contents(&mut d, what.as_bytes()),
            contents(&mut r, what.as_bytes()),
            "{what}"
        );
    }
}

/// A lockstep step that keeps the server's FUNCTION DUMP for later `{saved}` words.
const SAVE_FUNCTIONS: &str = "<save functions>";

/// One request of a lockstep script: the words, and payloads as `{dump:key}` (the DUMP of
/// that key on the same server), `{hex:...}` (literal bytes), `{fdump}` (the server's
/// FUNCTION DUMP now), `{saved}` (its dump at the last [`SAVE_FUNCTIONS`]) or
/// `{code:lib:f}` (a library `lib` whose function `f` returns its name).
fn expand(client: &mut RespClient, request: &str, saved: &[u8]) -> Vec<Vec<u8>> {
    request
        .split_whitespace()
        .map(|word| {
            if word == "{fdump}" {
                bulk(call(client, &["FUNCTION", "DUMP"]), "FUNCTION DUMP")
            } else if word == "{saved}" {
                saved.to_vec()
            } else if let Some((lib, f)) = word
                .strip_prefix("{code:")
                .and_then(|w| w.strip_suffix('}'))
                .and_then(|w| w.split_once(':'))
            {
                format!(
                    "#!lua name={lib}\nredis.register_function('{f}', function() return '{f}' end)"
                )
                .into_bytes()
            } else if let Some(key) = word
                .strip_prefix("{dump:")
                .and_then(|w| w.strip_suffix('}'))
            {
                bulk(call(client, &["DUMP", key]), key)
            } else if let Some(bytes) = word.strip_prefix("{hex:").and_then(|w| w.strip_suffix('}'))
            {
                hex(bytes)
            } else if let Some(body) = word
                .strip_prefix("{body:")
                .and_then(|w| w.strip_suffix('}'))
            {
                framed(hex(body))
            } else {
                word.as_bytes().to_vec()
            }
        })
        .collect()
}

/// Runs `script` on both servers and fails with every reply that differs.
fn lockstep(script: &[&str]) {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    let (mut r_saved, mut d_saved) = (Vec::new(), Vec::new());
    let mut failures = Vec::new();
    for request in script {
        if *request == SAVE_FUNCTIONS {
            r_saved = expand(&mut r, "{fdump}", &[]).remove(0);
            d_saved = expand(&mut d, "{fdump}", &[]).remove(0);
            continue;
        }
        let want = {
            let args = expand(&mut r, request, &r_saved);
            call(&mut r, &args)
        };
        let got = {
            let args = expand(&mut d, request, &d_saved);
            call(&mut d, &args)
        };
        if want != got {
            failures.push(format!(
                "{request}\n  redis: {}\n  docdb: {}",
                render(&want),
                render(&got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} replies differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn replies_and_errors_are_redis_ones() {
    lockstep(&[
        "DUMP missing",
        "DUMP",
        "DUMP a b",
        "RESTORE a 0",
        "SET src hello",
        "RPUSH list a b c",
        // BUSYKEY comes before the TTL and the payload are looked at.
        "RESTORE src 0 junk",
        "RESTORE src x junk",
        "RESTORE src -1 {dump:src}",
        "RESTORE src 0 {dump:src}",
        // The TTL, then the payload.
        "RESTORE new x junk",
        "RESTORE new -5 junk",
        "RESTORE new 0 junk",
        "RESTORE new 0 {hex:000568656c6c6f0a0000000000000000}",
        "RESTORE new 0 {hex:000568656c6c6f0b006372df766534200a}",
        "RESTORE new 0 {body:0100}",
        "RESTORE new 0 {body:0500}",
        "RESTORE new 0 {body:1200}",
        "RESTORE new 0 {body:020201610161}",
        "RESTORE new 0 {body:08}",
        "RESTORE new 0 {body:0600}",
        "RESTORE new 0 {body:c3010000}",
        "RESTORE new 0 {body:000568656c6c6fffff}",
        "GET new",
        // Options.
        "RESTORE o1 0 {dump:src} foo",
        "RESTORE o1 0 {dump:src} idletime -1",
        "RESTORE o1 0 {dump:src} idletime x",
        "RESTORE o1 0 {dump:src} idletime",
        "RESTORE o1 0 {dump:src} freq 256",
        "RESTORE o1 0 {dump:src} freq -1",
        "RESTORE o1 0 {dump:src} freq x",
        "RESTORE o1 0 {dump:src} idletime 1 freq 1",
        "RESTORE o1 0 {dump:src} freq 1 idletime 1",
        "RESTORE o1 0 {dump:src} idletime 5 idletime 6 REPLACE absttl",
        "RESTORE o2 0 {dump:src} FREQ 255",
        "EXISTS o1 o2",
        // REPLACE over another type; the new value and type win.
        "RESTORE list 0 {dump:src} REPLACE",
        "TYPE list",
        "GET list",
        "RESTORE src 0 {dump:list} REPLACE",
        "TYPE src",
        // An expiry already past: nothing is created, and with REPLACE the key goes.
        "RESTORE gone 1 {dump:src} ABSTTL",
        "EXISTS gone",
        "RESTORE src 1 {dump:src} ABSTTL REPLACE",
        "EXISTS src",
        // A relative TTL so large that Redis's sum wraps into the past.
        "RESTORE wrapped 9223372036854775807 {dump:list}",
        "EXISTS wrapped",
        "RESTORE persistent 0 {dump:list} ABSTTL",
        "TTL persistent",
        "DEL list",
        "DUMP list",
    ]);
}

#[test]
fn ttls_are_set_as_in_redis() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    for server in [&redis, &docdb] {
        let mut c = server.client();
        let name = server.name;
        call(&mut c, &["RPUSH", "src", "a", "b"]);
        let payload = bulk(call(&mut c, &["DUMP", "src"]), name);
        let restore = |c: &mut RespClient, key: &str, ttl: &str, more: &[&str]| {
            let mut args: Vec<&[u8]> = vec![b"RESTORE", key.as_bytes(), ttl.as_bytes(), &payload];
            args.extend(more.iter().map(|w| w.as_bytes()));
            assert_eq!(call(c, &args), Frame::Simple("OK".into()), "{name}: {key}");
        };
        restore(&mut c, "rel", "100000", &[]);
        let in_a_minute = (std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis()
            + 60_000)
            .to_string();
        restore(&mut c, "abs", &in_a_minute, &["ABSTTL"]);
        restore(&mut c, "rel", "5000", &["REPLACE"]);
        let pttl = |c: &mut RespClient, key: &str| match call(c, &["PTTL", key]) {
            Frame::Integer(ms) => ms,
            other => panic!("{name}: PTTL {key}: {}", render(&other)),
        };
        let rel = pttl(&mut c, "rel");
        assert!((4000..=5000).contains(&rel), "{name}: rel {rel}");
        let abs = pttl(&mut c, "abs");
        assert!((55_000..=60_000).contains(&abs), "{name}: abs {abs}");
        // A TTL travels with the restored key, not in the payload.
        assert_eq!(call(&mut c, &["PTTL", "src"]), Frame::Integer(-1), "{name}");
        restore(&mut c, "short", "100", &[]);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            call(&mut c, &["EXISTS", "short"]),
            Frame::Integer(0),
            "{name}"
        );
    }
}

#[test]
fn restore_serves_blocked_clients() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let mut transcripts = Vec::new();
    for server in [&redis, &docdb] {
        let (mut blocked, mut writer) = (server.client(), server.client());
        call(&mut writer, &["RPUSH", "src", "x", "y"]);
        let payload = bulk(call(&mut writer, &["DUMP", "src"]), server.name);
        blocked.send(&["BLPOP", "list", "5"]).expect("send");
        std::thread::sleep(Duration::from_millis(200));
        let restored = call(&mut writer, &[&b"RESTORE"[..], b"list", b"0", &payload]);
        let served = blocked.reply_within(Duration::from_secs(5)).expect("reply");
        transcripts.push(format!(
            "{} / {} / {}",
            render(&restored),
            served.as_ref().map_or("(no reply)".into(), render),
            contents(&mut writer, b"list")
        ));
    }
    assert!(
        transcripts[0].contains(r#"["list", "x"]"#),
        "redis: {}",
        transcripts[0]
    );
    assert_eq!(transcripts[1], transcripts[0], "docdb vs redis");
}

#[test]
fn time_series_keys_have_no_payload() {
    let docdb = docdb(&[]);
    let mut c = docdb.client();
    call(&mut c, &["TSADD", "ts", "10", "v"]);
    match call(&mut c, &["DUMP", "ts"]) {
        Frame::Error(text) => assert!(text.starts_with("ERR DUMP does not support"), "{text}"),
        other => panic!("DUMP of a time series: {}", render(&other)),
    }
}

// ---- streams ----

/// Commands that build streams, and which keys Redis DUMPs with docdb's bytes: those
/// XADDed in id order and never deleted from (Redis keeps deleted entries in their nodes
/// until a node empties; docdb's DUMP lays the live entries out as XADD would have).
fn stream_dataset() -> Dataset {
    let mut rng = Rng::new(11);
    let mut commands: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut add =
        |words: &[&str]| commands.push(words.iter().map(|w| w.as_bytes().to_vec()).collect());
    add(&["XADD", "st:small", "1-1", "f", "v"]);
    add(&["XADD", "st:small", "1-2", "f", "w"]);
    add(&["XADD", "st:small", "2-0", "a", "1", "b", "2"]);
    for i in 1..=250u64 {
        let (id, name, n) = (
            format!("{}-{}", 1000 + i / 3, i % 3),
            format!("n{i}"),
            (i as i64 * 37 - 500).to_string(),
        );
        add(&["XADD", "st:many", &id, "name", &name, "n", &n]);
    }
    for i in 1..=11usize {
        let (id, v, g) = (format!("5-{i}"), "v".repeat(150 * i), i.to_string());
        add(&["XADD", "st:big", &id, "f", &v, "g", &g]);
    }
    let x100 = "x".repeat(100);
    add(&[
        "XADD",
        "st:types",
        "1-0",
        "int",
        "-100000",
        "neg",
        "-1",
        "big",
        "9223372036854775807",
        "s",
        &x100,
        "e",
        "",
        "z",
        "007",
    ]);
    add(&[
        "XADD",
        "st:types",
        "18446744073709551615-18446744073709551614",
        "int",
        "1",
        "neg",
        "2",
        "big",
        "3",
        "s",
        "4",
        "e",
        "5",
        "z",
        "6",
    ]);
    add(&["XADD", "st:setid", "3-3", "f", "v"]);
    add(&[
        "XSETID",
        "st:setid",
        "100-5",
        "ENTRIESADDED",
        "77",
        "MAXDELETEDID",
        "50-1",
    ]);
    add(&["XGROUP", "CREATE", "st:mkstream", "g", "$", "MKSTREAM"]);
    for i in 1..=5 {
        add(&["XADD", "st:trimmed", &format!("8-{i}"), "f", &i.to_string()]);
    }
    add(&["XTRIM", "st:trimmed", "MAXLEN", "0"]);
    add(&["XADD", "st:emptied", "8-1", "f", "1"]);
    add(&["XADD", "st:emptied", "8-2", "f", "2"]);
    add(&["XDEL", "st:emptied", "8-1", "8-2"]);
    // Random field sets and value sizes: nodes split by count and by bytes.
    let mut ms = 1u64;
    for _ in 0..600 {
        ms += rng.below(3);
        let id = format!("{ms}-*");
        let mut xadd: Vec<String> = vec!["XADD".into(), "st:random".into(), id];
        let fields = 1 + rng.below(3);
        for f in 0..fields {
            let field = if rng.below(4) == 0 {
                word(&mut rng, 3)
            } else {
                format!("f{f}")
            };
            let len = match rng.below(10) {
                0 => 1000 + rng.below(3000) as usize,
                1..=3 => 0,
                _ => rng.below(40) as usize,
            };
            let value = if rng.below(3) == 0 {
                (rng.next_u64() as i64 / 7).to_string()
            } else {
                word(&mut rng, len)
            };
            xadd.push(field);
            xadd.push(value);
        }
        let words: Vec<&str> = xadd.iter().map(String::as_str).collect();
        add(&words);
    }
    // Groups without pending entries: no clock in the payload.
    for i in 1..=4 {
        add(&["XADD", "st:groups", &format!("9-{i}"), "f", &i.to_string()]);
    }
    add(&["XGROUP", "CREATE", "st:groups", "g1", "0"]);
    add(&["XGROUP", "CREATE", "st:groups", "123", "$"]);
    add(&[
        "XGROUP",
        "CREATE",
        "st:groups",
        "mid",
        "9-2",
        "ENTRIESREAD",
        "2",
    ]);
    add(&[
        "XGROUP",
        "CREATE",
        "st:groups",
        "a-very-long-group-name-that-should-compress-compress",
        "9-1",
    ]);
    // Consumers and pending entries: delivery and seen times come from each server's clock.
    for i in 1..=6 {
        add(&[
            "XADD",
            "st:pending",
            &format!("9-{i}"),
            "f",
            &i.to_string(),
            "big",
            &"x".repeat(70),
        ]);
    }
    add(&["XGROUP", "CREATE", "st:pending", "g1", "0"]);
    add(&["XGROUP", "CREATE", "st:pending", "g2", "0"]);
    add(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "2",
        "STREAMS",
        "st:pending",
        ">",
    ]);
    add(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "2",
        "STREAMS",
        "st:pending",
        ">",
    ]);
    add(&[
        "XREADGROUP",
        "GROUP",
        "g2",
        "alice",
        "STREAMS",
        "st:pending",
        ">",
    ]);
    add(&["XGROUP", "CREATECONSUMER", "st:pending", "g1", "carol"]);
    add(&["XCLAIM", "st:pending", "g1", "carol", "0", "9-1"]);
    add(&["XACK", "st:pending", "g2", "9-2", "9-4"]);
    // Deletions and trims: the same contents, other node layouts.
    for i in 1..=300 {
        add(&["XADD", "st:deleted", &format!("7-{i}"), "f", &i.to_string()]);
    }
    for i in (1..=300).step_by(7) {
        add(&["XDEL", "st:deleted", &format!("7-{i}")]);
    }
    add(&["XTRIM", "st:deleted", "MINID", "7-150"]);
    add(&["XGROUP", "CREATE", "st:deleted", "g", "7-200"]);
    let identical = vec![
        "st:small",
        "st:many",
        "st:big",
        "st:types",
        "st:setid",
        "st:mkstream",
        "st:trimmed",
        "st:emptied",
        "st:random",
        "st:groups",
    ];
    let keys = identical
        .iter()
        .copied()
        .chain(["st:pending", "st:deleted"])
        .collect();
    Dataset {
        commands,
        identical,
        keys,
    }
}

/// What a stream holds, as both servers report it: XLEN, XINFO STREAM, XINFO STREAM FULL
/// (every entry, group, pending entry and consumer) and XPENDING of each group.
fn stream_view(client: &mut RespClient, key: &str) -> Vec<Frame> {
    let mut view = vec![
        call(client, &["TYPE", key]),
        call(client, &["XLEN", key]),
        call(client, &["XINFO", "STREAM", key]),
        call(client, &["XINFO", "STREAM", key, "FULL", "COUNT", "0"]),
    ];
    let groups = call(client, &["XINFO", "GROUPS", key]);
    if let Frame::Array(groups) = &groups {
        for group in groups {
            if let Frame::Array(fields) = group
                && let Some(Frame::Bulk(name)) = fields.get(1)
            {
                view.push(call(client, &[b"XPENDING", key.as_bytes(), name]));
            }
        }
    }
    view.push(groups);
    view
}

/// `view` with the times that come from a server's clock zeroed: consumers' seen times,
/// pending entries' delivery times, and XINFO GROUPS' and CONSUMERS' idle times.
fn without_times(view: Vec<Frame>) -> Vec<Frame> {
    view.into_iter()
        .map(|frame| zero_times(frame, None))
        .collect()
}

fn zero_times(frame: Frame, key: Option<&str>) -> Frame {
    let Frame::Array(items) = frame else {
        return match key {
            Some("seen-time" | "idle" | "inactive") => Frame::Integer(0),
            _ => frame,
        };
    };
    if key == Some("pending") {
        // [id, consumer, delivery time, count] in a group, [id, delivery time, count] in a
        // consumer.
        let zeroed = items
            .into_iter()
            .map(|entry| match entry {
                Frame::Array(mut parts) => {
                    let at = parts.len().saturating_sub(2);
                    if let Some(time) = parts.get_mut(at) {
                        *time = Frame::Integer(0);
                    }
                    Frame::Array(parts)
                }
                other => other,
            })
            .collect();
        return Frame::Array(zeroed);
    }
    let mut out = Vec::with_capacity(items.len());
    let mut previous: Option<String> = None;
    for item in items {
        let item = zero_times(item, previous.as_deref());
        previous = match &item {
            Frame::Bulk(name) => Some(String::from_utf8_lossy(name).into_owned()),
            _ => None,
        };
        out.push(item);
    }
    Frame::Array(out)
}

/// `view` with XINFO's counts of radix tree keys (nodes of entries) and inner nodes zeroed:
/// docdb has no radix tree, and XINFO estimates them (not from the node sizes in bytes).
fn without_tree_nodes(view: Vec<Frame>) -> Vec<Frame> {
    view.into_iter().map(zero_tree_nodes).collect()
}

fn zero_tree_nodes(frame: Frame) -> Frame {
    let Frame::Array(items) = frame else {
        return frame;
    };
    let mut out: Vec<Frame> = Vec::with_capacity(items.len());
    for item in items {
        let after_name = matches!(
            out.last(),
            Some(Frame::Bulk(name)) if name == b"radix-tree-nodes" || name == b"radix-tree-keys"
        );
        out.push(if after_name {
            Frame::Integer(0)
        } else {
            zero_tree_nodes(item)
        });
    }
    Frame::Array(out)
}

/// Fails with the first reply of `got` that differs from `want`'s.
fn assert_same_view(got: &[Frame], want: &[Frame], what: &str) {
    let clip = |frame: Option<&Frame>| {
        let text = frame.map_or("(none)".into(), render);
        text.chars().take(3000).collect::<String>()
    };
    if let Some(at) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        panic!(
            "{what}: reply {at} differs\n  got:  {}\n  want: {}",
            clip(got.get(at)),
            clip(want.get(at))
        );
    }
}

#[test]
fn stream_payloads_restore_across_servers_with_the_same_contents() {
    let data = stream_dataset();
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (load(&redis, &data), load(&docdb, &data));
    for key in &data.keys {
        let from_redis = bulk(call(&mut r, &["DUMP", key]), "redis DUMP");
        let from_docdb = bulk(call(&mut d, &["DUMP", key]), "docdb DUMP");
        let into = format!("restored:{key}");
        let ok = Frame::Simple("OK".into());
        for (name, client, payload) in [
            ("docdb", &mut d, &from_redis),
            ("redis", &mut r, &from_docdb),
        ] {
            let reply = call(client, &[b"RESTORE", into.as_bytes(), b"0", payload]);
            assert_eq!(reply, ok, "{name}: RESTORE {key}");
        }
        // A payload carries the times: the restored copy is the original, to the millisecond.
        let view = |c: &mut RespClient, key: &str| without_tree_nodes(stream_view(c, key));
        let (redis_view, docdb_view) = (view(&mut r, key), view(&mut d, key));
        let in_docdb = view(&mut d, &into);
        let in_redis = view(&mut r, &into);
        assert_same_view(
            &in_docdb,
            &redis_view,
            &format!("{key} from redis into docdb"),
        );
        assert_same_view(
            &in_redis,
            &docdb_view,
            &format!("{key} from docdb into redis"),
        );
        let (redis_view, docdb_view) = (without_times(redis_view), without_times(docdb_view));
        assert_same_view(&docdb_view, &redis_view, key);
    }
}

#[test]
fn stream_dumps_are_redis_bytes_where_the_layout_is_shared() {
    let data = stream_dataset();
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (load(&redis, &data), load(&docdb, &data));
    for key in &data.identical {
        // The second DUMP, as in dumps_are_redis_bytes_where_the_order_is_shared.
        call(&mut r, &["DUMP", key]);
        let want = bulk(call(&mut r, &["DUMP", key]), "redis DUMP");
        let got = bulk(call(&mut d, &["DUMP", key]), "docdb DUMP");
        assert!(
            got == want,
            "{key}: docdb's DUMP differs from Redis's ({} vs {} bytes)",
            got.len(),
            want.len()
        );
    }
}

#[test]
fn redis_stream_payloads_dump_back_unchanged() {
    // Restored into docdb and DUMPed again, Redis's payload comes back byte for byte:
    // groups, pending entries and consumers with their times included.
    let data = stream_dataset();
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let mut r = load(&redis, &data);
    let mut d = docdb.client();
    for key in data.identical.iter().chain(&["st:pending"]) {
        call(&mut r, &["DUMP", key]);
        let payload = bulk(call(&mut r, &["DUMP", key]), "redis DUMP");
        let restored = call(&mut d, &[b"RESTORE", key.as_bytes(), b"0", &payload]);
        assert_eq!(restored, Frame::Simple("OK".into()), "{key}");
        let again = bulk(call(&mut d, &["DUMP", key]), "docdb DUMP");
        assert!(
            again == payload,
            "{key}: {} vs {} bytes",
            again.len(),
            payload.len()
        );
    }
}

/// The node (key 1-1, listpack) and state of `XADD 1-1 f v; XADD 1-2 f w; XADD 2-0 a 1 b
/// 2` as Redis 7.0.15 DUMPs it, to build payloads from.
const NODE: &str = "10000000000000000100000000000000013d3d000000180003010001010181660200010201000100\
                    018176020401020100010101817702040100010101dfff020201816102010181620202010801ff";
const STATE: &str = "0302000101000003";

#[test]
fn stream_replies_and_errors_are_redis_ones() {
    let raw_1_1 = "00000000000000010000000000000001";
    let time_0 = "0000000000000000";
    // The payload of `s` below, the last byte of its CRC changed (d6 to d7).
    let bad_crc = format!("1301{NODE}{STATE}000a00e4b63f4c0e7f63d7");
    let script = vec![
        "XADD s 1-1 f v".to_string(),
        "XADD s 1-2 f w".into(),
        "XADD s 2-0 a 1 b 2".into(),
        "DUMP s".into(),
        "XGROUP CREATE s g 0".into(),
        // BUSYKEY first; REPLACE over a stream and over another type.
        "RESTORE s 0 {dump:s}".into(),
        "SET str x".into(),
        "RESTORE str 0 {dump:s} REPLACE".into(),
        "TYPE str".into(),
        "XRANGE str - +".into(),
        "XINFO GROUPS str".into(),
        "RESTORE s 0 {dump:str} REPLACE".into(),
        "TYPE s".into(),
        "XINFO STREAM str".into(),
        // A TTL travels with RESTORE, not in the payload.
        "RESTORE t 100000 {dump:str}".into(),
        "TTL t".into(),
        "RESTORE gone 1 {dump:str} ABSTTL".into(),
        "EXISTS gone".into(),
        // Damaged payloads: a wrong CRC; a node key not 16 bytes long; an empty listpack;
        // two nodes under one key; a length without nodes; two groups of one name; a
        // consumer holding an id its group has not pending; a Redis 7.2 stream (type 21);
        // cut before the groups; a 6.x stream cut short.
        format!("RESTORE bad1 0 {{hex:{bad_crc}}}"),
        format!(
            "RESTORE bad2 0 {{body:13010f{}{}{STATE}00}}",
            "00".repeat(15),
            &NODE[34..]
        ),
        format!(
            "RESTORE bad3 0 {{body:1301{}07070000000000ff000000000000000000}}",
            &NODE[..34]
        ),
        format!("RESTORE bad4 0 {{body:1302{NODE}{NODE}060200010100000600}}"),
        "RESTORE bad5 0 {body:1300010200000000000100}".into(),
        format!("RESTORE bad6 0 {{body:1301{NODE}{STATE}020167010100000001670101000000}}"),
        format!("RESTORE bad7 0 {{body:1301{NODE}{STATE}01016701010000010163{time_0}01{raw_1_1}}}"),
        format!("RESTORE bad8 0 {{body:1501{NODE}{STATE}00}}"),
        format!("RESTORE bad9 0 {{body:1301{NODE}{STATE}}}"),
        format!("RESTORE bad10 0 {{body:0f01{NODE}03}}"),
        "EXISTS bad1 bad2 bad3 bad4 bad5 bad6 bad7 bad8 bad9 bad10".into(),
        // Redis 6.x streams (RDB type 15): no first or deleted id, no entries added, and a
        // group's entries read estimated from its last id.
        format!("RESTORE v6 0 {{body:0f01{NODE}03020002016701010000016802000000}}"),
        "XINFO STREAM v6".into(),
        "XINFO GROUPS v6".into(),
        "XRANGE v6 - +".into(),
        format!("RESTORE v6b 0 {{body:0f01{NODE}03020001016701020000}}"),
        "XINFO GROUPS v6b".into(),
    ];
    let script: Vec<&str> = script.iter().map(String::as_str).collect();
    lockstep(&script);
}

#[test]
fn restore_serves_blocked_stream_readers() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let mut transcripts = Vec::new();
    for server in [&redis, &docdb] {
        let (mut blocked, mut writer) = (server.client(), server.client());
        call(&mut writer, &["XADD", "src", "5-1", "f", "v"]);
        let payload = bulk(call(&mut writer, &["DUMP", "src"]), server.name);
        blocked
            .send(&["XREAD", "BLOCK", "5000", "STREAMS", "sk", "$"])
            .expect("send");
        std::thread::sleep(Duration::from_millis(200));
        let restored = call(&mut writer, &[&b"RESTORE"[..], b"sk", b"0", &payload]);
        let served = blocked.reply_within(Duration::from_secs(5)).expect("reply");
        transcripts.push(format!(
            "{} / {}",
            render(&restored),
            served.as_ref().map_or("(no reply)".into(), render)
        ));
    }
    assert!(
        transcripts[0].contains(r#""5-1""#),
        "redis: {}",
        transcripts[0]
    );
    assert_eq!(transcripts[1], transcripts[0], "docdb vs redis");
}

#[test]
fn function_dump_and_restore_are_redis_ones() {
    lockstep(&[
        // Byte for byte, with no library and with one (its code LZF-compressed).
        "FUNCTION DUMP",
        "FUNCTION LOAD {code:lib1:f1}",
        "FUNCTION DUMP",
        "FUNCTION DUMP extra",
        SAVE_FUNCTIONS,
        // Policies: APPEND (the default) refuses a library loaded already.
        "FUNCTION RESTORE {saved}",
        "FUNCTION RESTORE {saved} append",
        "FUNCTION RESTORE {saved} REPLACE",
        "FCALL f1 0",
        "FUNCTION LOAD {code:lib2:f2}",
        "FUNCTION RESTORE {saved} FLUSH",
        "FCALL f2 0",
        "FCALL f1 0",
        // A function of another library of the same name refuses the whole restore.
        "FUNCTION FLUSH",
        "FUNCTION LOAD {code:other:f1}",
        "FUNCTION RESTORE {saved}",
        "FUNCTION RESTORE {saved} REPLACE",
        "FUNCTION LIST LIBRARYNAME lib1",
        "FUNCTION RESTORE {saved} FLUSH",
        "FUNCTION LIST",
        // Bad requests and payloads.
        "FUNCTION RESTORE",
        "FUNCTION RESTORE {saved} sideways",
        "FUNCTION RESTORE {saved} FLUSH more",
        "FUNCTION RESTORE junk",
        "FUNCTION RESTORE {body:f6}",
        "FUNCTION RESTORE {body:f603616263}",
        "FUNCTION RESTORE {body:f603616263036c7561}",
        "FUNCTION RESTORE {body:f603616263036c756101}",
        // A release candidate's library: name, engine, no description, code.
        "FUNCTION RESTORE {body:f6036f6c64036c7561003972656469732e72656769737465725f66756e6374696f6e2827666f272c2066756e6374696f6e28292072657475726e2027666f2720656e6429}",
        "FCALL fo 0",
        "FUNCTION LIST LIBRARYNAME old WITHCODE",
        "FUNCTION RESTORE {body:00}",
        "FUNCTION RESTORE {body:f5}",
        "FUNCTION RESTORE {body:f5056e6f6e6f70}",
        // Nothing changed (one library each: FUNCTION LIST's order is Redis's hash order).
        "FUNCTION LIST LIBRARYNAME lib1",
        "FUNCTION LIST LIBRARYNAME old",
        "FUNCTION HELP",
    ]);
}

#[test]
fn function_payloads_restore_across_servers() {
    let (redis, docdb) = (require_redis(&[]), docdb(&[]));
    let (mut r, mut d) = (redis.client(), docdb.client());
    for (lib, f) in [("alpha", "fa"), ("beta", "fb"), ("gamma", "fc")] {
        let code = expand(&mut r, &format!("{{code:{lib}:{f}}}"), &[]).remove(0);
        for client in [&mut r, &mut d] {
            let args: Vec<&[u8]> = vec![b"FUNCTION", b"LOAD", &code];
            assert_eq!(render(&call(client, &args)), format!("\"{lib}\""));
        }
    }
    let listing = |client: &mut RespClient| {
        ["alpha", "beta", "gamma"].map(|lib| {
            render(&call(
                client,
                &["FUNCTION", "LIST", "LIBRARYNAME", lib, "WITHCODE"],
            ))
        })
    };
    let want = listing(&mut r);
    // Each server's dump, restored with FLUSH into the other, gives the same libraries.
    let from_redis = bulk(call(&mut r, &["FUNCTION", "DUMP"]), "redis dump");
    let from_docdb = bulk(call(&mut d, &["FUNCTION", "DUMP"]), "docdb dump");
    for (client, payload) in [(&mut d, &from_redis), (&mut r, &from_docdb)] {
        let args: Vec<&[u8]> = vec![b"FUNCTION", b"RESTORE", payload, b"FLUSH"];
        assert_eq!(render(&call(client, &args)), "+OK");
    }
    assert_eq!(listing(&mut r), want);
    assert_eq!(listing(&mut d), want);
}
