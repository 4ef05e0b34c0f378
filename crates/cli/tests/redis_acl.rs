//! ACL against a real `redis-server` 7.0: the same scripted requests, over several
//! connections, go to both servers and every reply must match: SETUSER/GETUSER/LIST round
//! trips, AUTH as users, NOPERM for commands, keys and channels, ACL LOG entries (their
//! time-independent fields), DRYRUN, CAT, and a user deleted while connected.

mod common_redis;

use common_redis::{Frame, RespClient, Server, both, docdb, render, require_redis};

/// One step: which connection (0-based) sends what (arguments split on spaces).
type Step<'a> = (usize, &'a str);

/// A reply in a form both servers must agree on: rule lists with their single commands
/// sorted (Redis lists those in its hash table's order, which changes from run to run),
/// ACL CAT's commands sorted, ACL LOG entries without their age and client line.
fn normalized(request: &str, reply: Frame) -> String {
    let lower = request.to_ascii_lowercase();
    let reply = match reply {
        Frame::Array(items) if lower.starts_with("acl cat ") => {
            let mut names: Vec<String> = items.iter().map(render).collect();
            names.sort();
            return names.join(" ");
        }
        Frame::Array(items) if lower.starts_with("acl log") => Frame::Array(
            items
                .into_iter()
                .map(|entry| match entry {
                    Frame::Array(fields) => Frame::Array(without_times(fields)),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    };
    sort_rules(&render(&reply))
}

/// An ACL LOG entry's fields without `age-seconds` and `client-info`.
fn without_times(fields: Vec<Frame>) -> Vec<Frame> {
    let mut out = Vec::new();
    for pair in fields.chunks(2) {
        let skip = matches!(&pair[0], Frame::Bulk(k) if k == b"age-seconds" || k == b"client-info");
        if !skip {
            out.extend(pair.iter().cloned());
        }
    }
    out
}

/// In every quoted text, the tokens after `+@all`/`-@all` up to the closing quote sorted.
fn sort_rules(text: &str) -> String {
    text.split('"')
        .map(|part| {
            let tokens: Vec<&str> = part.split(' ').collect();
            match tokens.iter().position(|t| *t == "+@all" || *t == "-@all") {
                Some(at) => {
                    let mut tail = tokens[at + 1..].to_vec();
                    tail.sort_unstable();
                    let mut all = tokens[..=at].to_vec();
                    all.extend(tail);
                    all.join(" ")
                }
                None => part.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\"")
}

/// A step that replaces its connection with a new one.
const RECONNECT: &str = "<reconnect>";

/// Runs `script` on one server, with `connections` clients: each step's normalized reply
/// (`<closed>` when the connection is gone).
fn run(server: &Server, connections: usize, script: &[Step<'_>]) -> Vec<String> {
    let mut clients: Vec<Option<RespClient>> =
        (0..connections).map(|_| Some(server.client())).collect();
    let mut out = Vec::new();
    for &(conn, request) in script {
        if request == RECONNECT {
            clients[conn] = Some(server.client());
            out.push(RECONNECT.into());
            continue;
        }
        let args: Vec<&str> = request.split(' ').collect();
        let reply = clients[conn].as_mut().map(|c| c.call(&args));
        out.push(match reply {
            Some(Ok(frame)) => normalized(request, frame),
            _ => {
                clients[conn] = None;
                "<closed>".into()
            }
        });
    }
    out
}

/// The script on redis-server and on docdb (started with `flags`): every reply the same.
fn lockstep(flags: &[&str], connections: usize, script: &[Step<'_>]) {
    let servers = [require_redis(flags), docdb(flags)];
    let want = run(&servers[0], connections, script);
    let got = run(&servers[1], connections, script);
    let failures: Vec<String> = script
        .iter()
        .zip(want.iter().zip(&got))
        .filter(|(_, (w, g))| w != g)
        .map(|((conn, request), (w, g))| format!("[{conn}] {request}\n  redis: {w}\n  docdb: {g}"))
        .collect();
    assert!(
        failures.is_empty(),
        "{} replies differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn setuser_getuser_list_round_trips() {
    lockstep(
        &[],
        1,
        &[
            (0, "ACL LIST"),
            (0, "ACL USERS"),
            (0, "ACL WHOAMI"),
            (0, "ACL GETUSER default"),
            (0, "ACL GETUSER nobody"),
            (
                0,
                "ACL SETUSER u1 on >p1 ~k* %R~r* %W~w* &ch* +get +@hash -hset +config|get",
            ),
            (0, "ACL GETUSER u1"),
            (0, "ACL SETUSER u2"),
            (0, "ACL GETUSER u2"),
            (0, "ACL SETUSER u3 +set +get +del +@string -incr"),
            (0, "ACL SETUSER u4 +@all -@dangerous +flushdb -get"),
            (
                0,
                "ACL SETUSER u5 allcommands -@write nopass allkeys allchannels on",
            ),
            (0, "ACL SETUSER u6 +select|0 +get|x ~ &"),
            (0, "ACL SETUSER u7 %RW~b* %R~b* ~c ~c"),
            (
                0,
                "ACL SETUSER u8 >a >b <a #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
            ),
            (
                0,
                "ACL SETUSER u8 !2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
            ),
            (0, "ACL SETUSER u9 on nopass ~* &* +@all"),
            (0, "ACL SETUSER u9 reset"),
            (
                0,
                "ACL SETUSER u10 +@read -@fast +@admin -@slow +@connection nocommands +@pubsub",
            ),
            (0, "ACL SETUSER u11 skip-sanitize-payload"),
            (
                0,
                "ACL SETUSER u12 sanitize-payload resetkeys ~x resetchannels &y",
            ),
            (0, "ACL LIST"),
            (0, "ACL USERS"),
            (0, "ACL GETUSER u7"),
            (0, "ACL GETUSER u8"),
            (0, "ACL DELUSER u2 u3 nobody"),
            (0, "ACL DELUSER default"),
            (0, "ACL USERS"),
        ],
    );
}

#[test]
fn setuser_errors_are_redis_ones() {
    lockstep(
        &[],
        1,
        &[
            (0, "ACL SETUSER e foo"),
            (0, "ACL SETUSER e +nocmd"),
            (0, "ACL SETUSER e -nocmd"),
            (0, "ACL SETUSER e +@nocat"),
            (0, "ACL SETUSER e %X~a"),
            (0, "ACL SETUSER e %~a"),
            (0, "ACL SETUSER e #abc"),
            (0, "ACL SETUSER e !abc"),
            (0, "ACL SETUSER e <nopass"),
            (0, "ACL SETUSER e +config|get|x"),
            (0, "ACL SETUSER e +config|"),
            (0, "ACL SETUSER e allkeys ~a"),
            (0, "ACL SETUSER e allchannels &a"),
            (0, "ACL SETUSER e on >ok +@nocat"),
            (0, "ACL SETUSER e2 allkeys ~* allkeys &* allchannels &*"),
            (0, "ACL SETUSER e2 %RW~*"),
            (0, "ACL SETUSER e3 %RW~*"),
            (0, "ACL GETUSER e3"),
            (0, "ACL SETUSER e3 %R~*"),
            (0, "ACL USERS"),
            (0, "ACL SETUSER"),
            (0, "ACL GETUSER"),
            (0, "ACL NOPE"),
            (0, "ACL LOAD"),
            (0, "ACL SAVE"),
            (0, "ACL HELP"),
            (0, "ACL GENPASS 0"),
            (0, "ACL GENPASS 4097"),
            (0, "ACL GENPASS x"),
            (0, "ACL CAT"),
            (0, "ACL CAT nocat"),
            (0, "ACL CAT hash"),
            (0, "ACL CAT sortedset"),
            (0, "ACL CAT geo"),
        ],
    );
}

#[test]
fn genpass_lengths() {
    for server in both(&[]) {
        let mut c = server.client();
        for (bits, len) in [("", 64), ("5", 2), ("8", 2), ("255", 64), ("4096", 1024)] {
            let mut args = vec!["ACL", "GENPASS"];
            if !bits.is_empty() {
                args.push(bits);
            }
            match c.call(&args).expect("genpass") {
                Frame::Bulk(p) => {
                    assert_eq!(p.len(), len, "{}: GENPASS {bits}", server.name);
                    assert!(p.iter().all(u8::is_ascii_hexdigit));
                }
                other => panic!("{}: GENPASS {bits}: {}", server.name, render(&other)),
            }
        }
    }
}

#[test]
fn auth_as_users_and_noperm() {
    lockstep(
        &[],
        2,
        &[
            (
                0,
                "ACL SETUSER t on >pw ~k* %R~r* &c* +get +set +config|get +publish +subscribe +psubscribe +acl +multi +exec +client|info",
            ),
            (1, "AUTH t wrong"),
            (1, "AUTH nobody pw"),
            (1, "HELLO 2 AUTH t wrong"),
            (1, "ACL LOG 1 2"),
            (1, "ACL CAT a b"),
            (1, "ACL WHOAMI extra"),
            (1, "ACL WHOAMI"),
            (1, "AUTH t pw"),
            (1, "ACL WHOAMI"),
            (1, "GET k1"),
            (1, "SET k1 v"),
            (1, "GET k1"),
            (1, "GET x"),
            (1, "SET x v"),
            (1, "GET r1"),
            (1, "SET r1 v"),
            (1, "DEL k1"),
            (1, "CONFIG SET maxclients 100"),
            (1, "CONFIG GET maxclients"),
            (1, "PUBLISH c1 hi"),
            (1, "PUBLISH d hi"),
            (1, "PSUBSCRIBE c*x"),
            (1, "MULTI"),
            (1, "GET k1"),
            (1, "DEL k1"),
            (1, "EXEC"),
            (0, "ACL LOG"),
            (0, "ACL LOG 2"),
            (0, "ACL DRYRUN t get x"),
            (0, "ACL DRYRUN t get k"),
            (0, "ACL DRYRUN t del k"),
            (0, "ACL DRYRUN t publish d m"),
            (0, "ACL DRYRUN t subscribe c1 d"),
            (0, "ACL DRYRUN nobody get k"),
            (0, "ACL DRYRUN t nocmd k"),
            (0, "ACL DRYRUN t get"),
            (0, "ACL DRYRUN t config get maxclients"),
            (0, "ACL DRYRUN t config set maxclients 1"),
            // Changes apply to the connected user at once.
            (0, "ACL SETUSER t +del"),
            (1, "DEL k1"),
            (0, "ACL SETUSER t -get"),
            (1, "GET k1"),
            (0, "ACL SETUSER t off"),
            (1, "SET k1 w"),
            (1, "AUTH t pw"),
            (0, "ACL LOG RESET"),
            (0, "ACL LOG"),
            (0, "AUTH default x"),
            (0, "AUTH x"),
        ],
    );
}

#[test]
fn deleted_user_is_disconnected() {
    lockstep(
        &[],
        4,
        &[
            (0, "ACL SETUSER gone on nopass +@all ~* &*"),
            (0, "ACL SETUSER k2 on >pw +@all ~* &*"),
            (1, "AUTH gone any"),
            (2, "AUTH gone any"),
            (3, "AUTH k2 pw"),
            (1, "ACL WHOAMI"),
            (0, "ACL DELUSER gone"),
            (0, "PING"),
            (1, "PING"),
            (2, "PING"),
            (0, "ACL USERS"),
            (0, "CLIENT KILL USER nobody"),
            (0, "CLIENT KILL USER k2"),
            (3, "PING"),
            (0, "ACL WHOAMI"),
        ],
    );
}

#[test]
fn requirepass_is_the_default_users_password() {
    lockstep(
        &["--requirepass", "x"],
        2,
        &[
            (0, "GET a"),
            (0, "AUTH y"),
            (0, "AUTH default y"),
            (0, "AUTH x"),
            (0, "ACL LIST"),
            (0, "ACL WHOAMI"),
            (0, "CONFIG SET requirepass z"),
            (0, "ACL LIST"),
            (1, "AUTH x"),
            (1, "AUTH default z"),
            (1, "ACL LOG"),
            (0, "CONFIG SET requirepass"),
            (0, "ACL SETUSER u on >pw +@all ~*"),
            (1, "AUTH u pw"),
            (1, "ACL WHOAMI"),
            (1, "RESET"),
            (1, "ACL WHOAMI"),
        ],
    );
}

#[test]
fn default_user_password_set_by_acl_gates_new_connections() {
    lockstep(
        &[],
        2,
        &[
            // (Known to be connected, whenever the server accepts connections.)
            (1, "PING"),
            (0, "ACL SETUSER default >pw"),
            // Connected while default had no password: still authenticated.
            (1, "PING"),
            (1, RECONNECT),
            (1, "PING"),
            (1, "HELLO 2"),
            (1, "AUTH pw"),
            (1, "PING"),
            (0, "ACL SETUSER default nopass"),
            (1, RECONNECT),
            (1, "PING"),
            (0, "ACL SETUSER default off"),
            (1, RECONNECT),
            (1, "PING"),
            (1, "AUTH default x"),
            (0, "ACL SETUSER default on"),
            (0, "RESET"),
            (0, "ACL WHOAMI"),
        ],
    );
}

/// A connection that starts as a restricted default user is checked from its first
/// request, key writes included (they run as write runs, which skip dispatch's check for a
/// user known to be unrestricted from the connection's start).
#[test]
fn a_restricted_default_user_is_checked_from_the_start() {
    lockstep(
        &[],
        2,
        &[
            (1, "PING"),
            (0, "ACL SETUSER default -set ~k*"),
            (1, RECONNECT),
            (1, "SET k1 v"),
            (1, "GET k1"),
            (1, "INCR k2"),
            (1, "INCR other"),
            (1, RECONNECT),
            (1, "MSET k3 1 k4 2"),
            (1, "MSET k3 1 x 2"),
            (0, "ACL SETUSER default +@all allkeys"),
            (1, "SET x 1"),
        ],
    );
}

/// Commands a script calls are checked for the user running it, as Redis's
/// `scriptVerifyACL` does (context `lua` in ACL LOG).
#[test]
fn scripts_run_with_the_callers_permissions() {
    let servers = [require_redis(&[]), docdb(&[])];
    let mut transcripts = Vec::new();
    for server in &servers {
        let mut c = server.client();
        let mut out = Vec::new();
        let mut call = |args: &[&str]| {
            let reply = c.call(args).expect("request");
            out.push(normalized(&args.join(" "), reply));
        };
        call(&[
            "ACL", "SETUSER", "sc", "on", "nopass", "+eval", "+get", "+publish", "~k*", "allkeys",
            "~*",
        ]);
        call(&[
            "ACL",
            "SETUSER",
            "sc",
            "resetkeys",
            "~k*",
            "&*",
            "allchannels",
            "resetchannels",
        ]);
        call(&["AUTH", "sc", "x"]);
        call(&["EVAL", "return redis.call('set','k','v')", "0"]);
        call(&["EVAL", "return redis.pcall('set','k','v')", "0"]);
        call(&["EVAL", "return redis.pcall('get','x')", "0"]);
        call(&["EVAL", "return redis.pcall('get','k')", "0"]);
        call(&["EVAL", "return redis.pcall('publish','c','m')", "0"]);
        call(&["AUTH", "default", "x"]);
        call(&["ACL", "LOG"]);
        transcripts.push(out);
    }
    assert_eq!(transcripts[0], transcripts[1]);
}
