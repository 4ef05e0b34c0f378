//! MIGRATE: moves keys to another Redis-protocol server as Redis 7.0's `migrateCommand`
//! does, and RESTORE-ASKING, the name a cluster's MIGRATE restores under.
//!
//! Each key travels as DUMP's payload (`crate::rdb`) in a `RESTORE key ttl payload
//! [REPLACE]` (Redis outside cluster mode sends RESTORE, not RESTORE-ASKING), after an
//! `AUTH` when asked for and a `SELECT db` when the connection's database differs. The
//! connection to each `host:port` is kept for reuse and closed after ten idle seconds, as
//! Redis keeps it; a failed write or a connection the target closed is retried once on a
//! new one, a timeout is not.
//!
//! The handler blocks its thread on a `std::net::TcpStream` with the request's timeout (its
//! connection waits, as in Redis), after `block_in_place` has handed the tokio worker's
//! other tasks to another thread: unlike Redis, the server goes on serving other clients.
//! It holds no lock while it waits: the keys are read first, sent, and the acknowledged
//! ones deleted (unless COPY) in one write at the end, each only if it is still what was
//! sent.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use dockv::DocHybridTime;
use dockv::value::Value;
use engine::Engine;

use super::dump::{read_value, restore};
use super::{BLOCKS, Ctx, Spec, WRITE, is, ok, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::int_arg;
use crate::rdb;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        // BLOCKS: it waits on the network, so it must not join a pipeline's run of writes,
        // which holds the writer lock until the run ends.
        spec("migrate", -6, WRITE | BLOCKS, 3, migrate),
        // Outside cluster mode Redis runs it as RESTORE.
        spec("restore-asking", -4, WRITE, 1, restore),
    ]
}

/// A MIGRATE request's options, parsed as Redis 7.0 parses them.
#[derive(Debug, PartialEq)]
struct Request {
    /// The positions of the keys among the arguments.
    keys: std::ops::Range<usize>,
    /// The target's database.
    db: i64,
    /// How long each write or read on the target may take.
    timeout: Duration,
    copy: bool,
    replace: bool,
    /// AUTH2's user name (AUTH leaves one given before it in place, as Redis does).
    user: Option<Vec<u8>>,
    /// AUTH's or AUTH2's password: sent as `AUTH` before anything else when present.
    password: Option<Vec<u8>>,
}

/// `MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw]
/// [KEYS key...]`: the options first (syntax errors win), then the timeout and the
/// database, each an integer; a timeout of 0 or less means one second.
fn parse(args: &[Vec<u8>]) -> CmdResult<Request> {
    let mut req = Request {
        keys: 3..4,
        db: 0,
        timeout: Duration::ZERO,
        copy: false,
        replace: false,
        user: None,
        password: None,
    };
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let arg = &args[j];
        if is(arg, "copy") {
            req.copy = true;
        } else if is(arg, "replace") {
            req.replace = true;
        } else if is(arg, "auth") && more >= 1 {
            req.password = Some(args[j + 1].clone());
            j += 1;
        } else if is(arg, "auth2") && more >= 2 {
            req.user = Some(args[j + 1].clone());
            req.password = Some(args[j + 2].clone());
            j += 2;
        } else if is(arg, "keys") {
            if !args[3].is_empty() {
                return Err(CmdError::err(
                    "When using MIGRATE KEYS option, the key argument must be set to the \
                     empty string",
                ));
            }
            req.keys = j + 1..args.len();
            break;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let timeout = int_arg(&args[5])?;
    req.db = int_arg(&args[4])?;
    let millis = if timeout <= 0 {
        1000
    } else {
        timeout.unsigned_abs()
    };
    req.timeout = Duration::from_millis(millis);
    Ok(req)
}

/// The positions of MIGRATE's keys for COMMAND GETKEYS, as Redis 7.0 finds them: its key
/// specs give the key argument unless a `KEYS` stands somewhere before the last argument;
/// then its own `migrateGetKeys` looks for KEYS from the options on (stepping over AUTH's
/// and AUTH2's operands), which gives what follows it, nothing when the key argument is
/// not empty (`None`), and the key argument when there is no such KEYS.
pub(super) fn key_positions(args: &[Vec<u8>]) -> Option<Vec<usize>> {
    let argc = args.len();
    if !(1..argc.saturating_sub(1)).any(|i| is(&args[i], "keys")) {
        return Some(vec![3]);
    }
    let mut i = 6;
    while i < argc {
        let arg = &args[i];
        if is(arg, "keys") {
            return args[3].is_empty().then(|| (i + 1..argc).collect());
        }
        i += if is(arg, "auth") {
            2
        } else if is(arg, "auth2") {
            3
        } else {
            1
        };
    }
    Some(vec![3])
}

/// One key to send.
struct Item {
    /// Its name, as given.
    name: Vec<u8>,
    /// Its encoded DocKey.
    doc_key: Vec<u8>,
    /// DUMP's payload of its value.
    payload: Vec<u8>,
    /// Milliseconds left to live, 0 for none.
    ttl_ms: i64,
    /// Its expiry and when its root record was written, as read: with the payload, what
    /// tells whether it changed before the delete.
    expires_at: Option<u64>,
    written: DocHybridTime,
}

/// MIGRATE: `+NOKEY` when none of the keys exists, `+OK` once the target restored them
/// all, the target's first error otherwise, or IOERR when the connection failed. The keys
/// the target acknowledged are deleted (unless COPY) even when a later one failed, as
/// Redis deletes them.
fn migrate<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let req = parse(ctx.args)?;
    let items = read_items(ctx, &req)?;
    if items.is_empty() {
        return Ok(Frame::Simple("NOKEY".into()));
    }
    let target = Target::new(ctx.arg(1), ctx.arg(2));
    let mut acked = vec![false; items.len()];
    let outcome = off_the_runtime(|| transfer(&target, &req, &items, &mut acked));
    if !req.copy && acked.contains(&true) {
        delete_sources(ctx, &items, &acked)?;
    }
    outcome.map(|()| ok())
}

/// Runs `wait` (blocking on the network) after handing this tokio worker's other tasks to
/// a new thread, so that the server goes on serving other connections meanwhile (with one
/// worker thread it would otherwise stop, as Redis does, and could not serve a MIGRATE to
/// itself).
fn off_the_runtime<R>(wait: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi_thread =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if multi_thread {
        tokio::task::block_in_place(wait)
    } else {
        wait()
    }
}

/// The live keys of the request with their payloads, in order (a key named twice is sent
/// twice, as Redis sends it).
fn read_items<E: Engine>(ctx: &Ctx<'_, '_, E>, req: &Request) -> CmdResult<Vec<Item>> {
    let ht = ctx.read_time();
    let mut r = ctx.reads(ht);
    let mut items = Vec::new();
    for i in req.keys.clone() {
        let doc_key = ctx.key(i);
        let Some(info) = r.key_info(&doc_key)? else {
            continue;
        };
        let value = read_value(ctx, &mut r, &doc_key, &info)?;
        items.push(Item {
            name: ctx.arg(i).to_vec(),
            payload: rdb::encode_payload(&value),
            ttl_ms: info.remaining_ttl(ht).map_or(0, |ttl| ttl.0),
            expires_at: info.expires_at,
            written: info.record.time,
            doc_key,
        });
    }
    Ok(items)
}

/// Deletes the acknowledged keys in one write, each only if it is still what was sent
/// (same value, expiry and root record): a key written meanwhile keeps its new value rather
/// than losing it, and a MIGRATE to this server itself (REPLACE) does not delete the key
/// it has just rewritten.
fn delete_sources<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    items: &[Item],
    acked: &[bool],
) -> CmdResult<()> {
    let store = ctx.store();
    store.write(|batch, ht| {
        let mut r = ctx.reads(ht);
        for (item, _) in items.iter().zip(acked).filter(|(_, acked)| **acked) {
            let Some(info) = r.key_info(&item.doc_key)? else {
                continue;
            };
            if info.expires_at != item.expires_at || info.record.time != item.written {
                continue;
            }
            let now = rdb::encode_payload(&read_value(ctx, &mut r, &item.doc_key, &info)?);
            if now == item.payload {
                batch.set_encoded_path(item.doc_key.clone(), Value::tombstone())?;
                store.forget_list_bounds(&item.doc_key);
            }
        }
        Ok(())
    })
}

/// Where to migrate to.
struct Target {
    /// `host:port` as given: the connection cache's key, as in Redis.
    name: Vec<u8>,
    host: Vec<u8>,
    /// The port as C's `atoi` reads it (Redis's reading).
    port: i64,
}

impl Target {
    fn new(host: &[u8], port: &[u8]) -> Self {
        let mut name = host.to_vec();
        name.push(b':');
        name.extend_from_slice(port);
        Target {
            name,
            host: host.to_vec(),
            port: atoi(port),
        }
    }

    /// Its addresses, `None` when the host does not resolve or the port is negative
    /// (where Redis fails before connecting). A port past 65535 wraps, as in Redis.
    fn addrs(&self) -> Option<Vec<SocketAddr>> {
        let host = std::str::from_utf8(&self.host).ok()?;
        let port = u32::try_from(self.port as i32).ok()?;
        let addrs: Vec<SocketAddr> = (host, port as u16).to_socket_addrs().ok()?.collect();
        (!addrs.is_empty()).then_some(addrs)
    }
}

/// C's `atoi`: leading white space, a sign, then digits up to the first other byte.
fn atoi(text: &[u8]) -> i64 {
    let mut bytes = text
        .iter()
        .skip_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        .peekable();
    let negative = match bytes.peek() {
        Some(b'-') => true,
        Some(b'+') => false,
        _ => {
            return digits(bytes);
        }
    };
    bytes.next();
    let n = digits(bytes);
    if negative { -n } else { n }
}

fn digits<'a>(bytes: impl Iterator<Item = &'a u8>) -> i64 {
    bytes.take_while(|b| b.is_ascii_digit()).fold(0i64, |n, b| {
        n.saturating_mul(10).saturating_add(i64::from(b - b'0'))
    })
}

/// Why a write or read on the target failed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Failure {
    /// It ran out of time (Redis does not retry then).
    timed_out: bool,
}

impl Failure {
    fn of(e: &std::io::Error) -> Self {
        Failure {
            timed_out: matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        }
    }

    const CLOSED: Failure = Failure { timed_out: false };
}

/// How one attempt ended.
enum Attempt {
    /// Every key restored.
    Done,
    /// The target replied with an error (the first one's text); `open` unless the
    /// connection then failed.
    Refused { text: Vec<u8>, open: bool },
    /// Writing (`writing`) or reading failed; `retry` when nothing was acknowledged yet.
    Broken {
        writing: bool,
        failure: Failure,
        retry: bool,
    },
}

/// Sends the keys and reads the replies, retrying once on a new connection as Redis does;
/// marks the keys the target acknowledged in `acked`.
fn transfer(target: &Target, req: &Request, items: &[Item], acked: &mut [bool]) -> CmdResult<()> {
    let mut may_retry = true;
    loop {
        let attempt = match checkout(target, req.timeout) {
            Ok(None) => {
                return Err(CmdError::Err(
                    "IOERR error or timeout connecting to the client".into(),
                ));
            }
            // Redis's connect waits for the socket to be writable, then fails on writing.
            Err(failure) => Attempt::Broken {
                writing: true,
                failure,
                retry: true,
            },
            Ok(Some(mut link)) => {
                let attempt = exchange(&mut link, req, items, acked);
                match &attempt {
                    Attempt::Done => {
                        link.last_db = req.db;
                        checkin(target, link);
                    }
                    Attempt::Refused { open: true, .. } => {
                        link.last_db = -1;
                        checkin(target, link);
                    }
                    _ => {}
                }
                attempt
            }
        };
        match attempt {
            Attempt::Done => return Ok(()),
            Attempt::Refused { text, .. } => {
                let text = String::from_utf8_lossy(&text).replace(['\r', '\n'], " ");
                return Err(CmdError::err(format!(
                    "Target instance replied with error: {text}"
                )));
            }
            Attempt::Broken {
                writing,
                failure,
                retry,
            } => {
                if retry && may_retry && !failure.timed_out {
                    may_retry = false;
                    continue;
                }
                let what = if writing { "writing" } else { "reading" };
                return Err(CmdError::Err(format!(
                    "IOERR error or timeout {what} to target instance"
                )));
            }
        }
    }
}

/// One attempt on `link`: the whole request in one write, then AUTH's and SELECT's
/// replies, then one per key. As in Redis, an error from AUTH or SELECT fails every key.
fn exchange(link: &mut Link, req: &Request, items: &[Item], acked: &mut [bool]) -> Attempt {
    let select = (link.last_db != req.db).then_some(req.db);
    let request = encode_request(req, select, items);
    let broken = |writing, failure, retry| Attempt::Broken {
        writing,
        failure,
        retry,
    };
    if let Err(failure) = link.send(&request, req.timeout) {
        return broken(true, failure, true);
    }
    let mut head_error = None;
    for expected in [req.password.is_some(), select.is_some()] {
        if !expected {
            continue;
        }
        match link.read_line() {
            Ok(line) if line.starts_with(b"-") && head_error.is_none() => head_error = Some(line),
            Ok(_) => {}
            Err(failure) => return broken(false, failure, true),
        }
    }
    let mut refused: Option<Vec<u8>> = None;
    for (j, ack) in acked.iter_mut().enumerate() {
        let line = match link.read_line() {
            Ok(line) => line,
            Err(failure) => {
                return match refused {
                    Some(line) => Attempt::Refused {
                        text: line[1..].to_vec(),
                        open: false,
                    },
                    None => broken(false, failure, j == 0),
                };
            }
        };
        let error = head_error
            .clone()
            .or_else(|| line.starts_with(b"-").then_some(line));
        match error {
            Some(error) => {
                refused.get_or_insert(error);
            }
            None => *ack = true,
        }
    }
    match refused {
        Some(line) => Attempt::Refused {
            text: line[1..].to_vec(),
            open: true,
        },
        None => Attempt::Done,
    }
}

/// The bytes of one attempt: `AUTH`, `SELECT`, then a `RESTORE` per key.
fn encode_request(req: &Request, select: Option<i64>, items: &[Item]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(password) = &req.password {
        let mut auth: Vec<&[u8]> = vec![b"AUTH"];
        auth.extend(req.user.as_deref());
        auth.push(password);
        push_command(&mut out, &auth);
    }
    if let Some(db) = select {
        push_command(&mut out, &[b"SELECT", db.to_string().as_bytes()]);
    }
    for item in items {
        let ttl = item.ttl_ms.to_string();
        let mut restore: Vec<&[u8]> = vec![b"RESTORE", &item.name, ttl.as_bytes(), &item.payload];
        if req.replace {
            restore.push(b"REPLACE");
        }
        push_command(&mut out, &restore);
    }
    out
}

/// Appends a multibulk request.
fn push_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// The longest reply line Redis reads (its buffer is 1024 bytes with the terminator);
/// the rest of a longer one is left for the next read.
const LINE_MAX: usize = 1023;

/// Reads one reply line without its `\r\n`, as Redis's `syncReadLine` does: at most
/// [`LINE_MAX`] bytes; a bare `\n`, the end of the stream or a failed read is a failure.
fn read_line(reader: &mut impl BufRead) -> Result<Vec<u8>, Failure> {
    let mut line = Vec::new();
    while line.len() < LINE_MAX {
        let buf = match reader.fill_buf() {
            Ok([]) => return Err(Failure::CLOSED),
            Ok(buf) => buf,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::of(&e)),
        };
        let take = buf.len().min(LINE_MAX - line.len());
        if let Some(at) = buf[..take].iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&buf[..at]);
            reader.consume(at + 1);
            if line.is_empty() {
                return Err(Failure::CLOSED);
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(line);
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(take);
    }
    Ok(line)
}

/// A connection to a target.
struct Link {
    reader: BufReader<TcpStream>,
    /// The database it has selected, -1 when unknown (as Redis keeps it: a request for
    /// database -1 then sends no SELECT).
    last_db: i64,
}

impl Link {
    /// Writes `bytes` with `timeout` for each write, and sets the timeout for the reads.
    fn send(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), Failure> {
        let stream = self.reader.get_mut();
        let failed = |e: std::io::Error| Failure::of(&e);
        stream.set_write_timeout(Some(timeout)).map_err(failed)?;
        stream.set_read_timeout(Some(timeout)).map_err(failed)?;
        stream.write_all(bytes).map_err(failed)
    }

    fn read_line(&mut self) -> Result<Vec<u8>, Failure> {
        read_line(&mut self.reader)
    }
}

/// How many connections are kept, as in Redis.
const CACHE_ITEMS: usize = 64;
/// How long a connection is kept unused, as in Redis.
const CACHE_TTL: Duration = Duration::from_secs(10);

/// Connections by `host:port`, each with when it was last used.
#[derive(Default)]
struct Cache {
    links: HashMap<Vec<u8>, (Link, Instant)>,
    /// A thread closes idle connections while there are any.
    sweeping: bool,
}

/// The server's connections to targets. One per process: a process runs one server.
static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

fn cache() -> MutexGuard<'static, Cache> {
    CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The cached connection to `target`, taken out of the cache while in use (a MIGRATE to
/// the same target meanwhile opens its own), or a new one: `Ok(None)` when the target
/// does not resolve, `Err` when connecting failed.
fn checkout(target: &Target, timeout: Duration) -> Result<Option<Link>, Failure> {
    if let Some((link, _)) = cache().links.remove(&target.name) {
        return Ok(Some(link));
    }
    let Some(addrs) = target.addrs() else {
        return Ok(None);
    };
    let mut failure = Failure::CLOSED;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                // Small requests and replies: without it each waits on delayed ACKs.
                let _ = stream.set_nodelay(true);
                return Ok(Some(Link {
                    reader: BufReader::new(stream),
                    last_db: -1,
                }));
            }
            Err(e) => failure = Failure::of(&e),
        }
    }
    Err(failure)
}

/// Puts `link` back for reuse, making room by closing the least recently used one.
fn checkin(target: &Target, link: Link) {
    let mut cache = cache();
    if cache.links.len() >= CACHE_ITEMS && !cache.links.contains_key(&target.name) {
        let oldest = cache
            .links
            .iter()
            .min_by_key(|(_, (_, used))| *used)
            .map(|(name, _)| name.clone());
        if let Some(name) = oldest {
            cache.links.remove(&name);
        }
    }
    cache
        .links
        .insert(target.name.clone(), (link, Instant::now()));
    if !cache.sweeping {
        let spawned = std::thread::Builder::new()
            .name("migrate-sweep".into())
            .spawn(sweep);
        // Without the thread, idle connections stay open until the next MIGRATE takes them.
        cache.sweeping = spawned.is_ok();
    }
}

/// Once a second, closes the connections unused for longer than [`CACHE_TTL`] (Redis's
/// cron does the same); ends once none is left.
fn sweep() {
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let mut cache = cache();
        let now = Instant::now();
        cache
            .links
            .retain(|_, (_, used)| !idle_too_long(*used, now));
        if cache.links.is_empty() {
            cache.sweeping = false;
            return;
        }
    }
}

fn idle_too_long(used: Instant, now: Instant) -> bool {
    now.saturating_duration_since(used) > CACHE_TTL
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn parsed(words: &[&str]) -> CmdResult<Request> {
        parse(&args(words))
    }

    fn error(words: &[&str]) -> String {
        match parsed(words) {
            Err(e) => e.to_string(),
            Ok(req) => panic!("{words:?} parsed as {req:?}"),
        }
    }

    #[test]
    fn parses_the_single_key_form() {
        let req = parsed(&["migrate", "h", "1", "k", "3", "250"]).expect("parses");
        assert_eq!(req.keys, 3..4);
        assert_eq!((req.db, req.timeout), (3, Duration::from_millis(250)));
        assert!(!req.copy && !req.replace && req.password.is_none());
    }

    #[test]
    fn parses_options_and_keys() {
        let req = parsed(&[
            "MIGRATE", "h", "1", "", "0", "0", "Copy", "REPLACE", "auth2", "u", "p", "KEYS", "a",
            "b",
        ])
        .expect("parses");
        assert_eq!(req.keys, 12..14);
        assert!(req.copy && req.replace);
        assert_eq!(req.user.as_deref(), Some(&b"u"[..]));
        assert_eq!(req.password.as_deref(), Some(&b"p"[..]));
        // A timeout of 0 or less is one second.
        assert_eq!(req.timeout, Duration::from_millis(1000));
        let req = parsed(&["migrate", "h", "1", "", "0", "-7", "keys"]).expect("parses");
        assert_eq!((req.keys.len(), req.timeout.as_millis()), (0, 1000));
    }

    #[test]
    fn auth_keeps_an_earlier_user_name() {
        let req = parsed(&[
            "migrate", "h", "1", "k", "0", "1", "auth2", "u", "p", "auth", "q",
        ])
        .expect("parses");
        assert_eq!(req.user.as_deref(), Some(&b"u"[..]));
        assert_eq!(req.password.as_deref(), Some(&b"q"[..]));
    }

    #[test]
    fn refuses_what_redis_refuses() {
        let syntax = "ERR syntax error";
        assert_eq!(error(&["migrate", "h", "1", "k", "0", "1", "foo"]), syntax);
        assert_eq!(error(&["migrate", "h", "1", "k", "0", "1", "auth"]), syntax);
        assert_eq!(
            error(&["migrate", "h", "1", "k", "0", "1", "auth2", "u"]),
            syntax
        );
        assert_eq!(
            error(&["migrate", "h", "1", "k", "0", "1", "keys", "a"]),
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty \
             string"
        );
        let not_integer = "ERR value is not an integer or out of range";
        assert_eq!(error(&["migrate", "h", "1", "k", "x", "1"]), not_integer);
        assert_eq!(error(&["migrate", "h", "1", "k", "0", "1.5"]), not_integer);
        // Options are checked before the numbers.
        assert_eq!(error(&["migrate", "h", "1", "k", "x", "y", "bad"]), syntax);
    }

    fn keys_of(words: &[&str]) -> Option<Vec<usize>> {
        key_positions(&args(words))
    }

    #[test]
    fn finds_keys_as_command_getkeys_does() {
        // Each checked against redis-server 7.0.15's COMMAND GETKEYS.
        assert_eq!(
            keys_of(&["migrate", "h", "1", "k", "0", "10"]),
            Some(vec![3])
        );
        assert_eq!(
            keys_of(&["migrate", "h", "1", "", "0", "10"]),
            Some(vec![3])
        );
        assert_eq!(
            keys_of(&["migrate", "h", "1", "", "0", "10", "keys"]),
            Some(vec![3])
        );
        assert_eq!(
            keys_of(&["migrate", "h", "1", "x", "0", "10", "keys", "a", "b"]),
            None
        );
        let copy = ["migrate", "h", "1", "", "0", "10", "copy", "keys", "a"];
        assert_eq!(keys_of(&copy), Some(vec![8]));
        let auth = ["migrate", "h", "1", "", "0", "10", "auth", "keys", "a"];
        assert_eq!(keys_of(&auth), Some(vec![3]));
        let twice = ["migrate", "h", "1", "", "0", "10", "keys", "keys", "a"];
        assert_eq!(keys_of(&twice), Some(vec![7, 8]));
        let last = ["migrate", "h", "keys", "", "0", "10", "keys"];
        assert_eq!(keys_of(&last), Some(vec![]));
    }

    #[test]
    fn reads_ports_as_atoi_does() {
        assert_eq!(atoi(b"6379"), 6379);
        assert_eq!(atoi(b" 6379x"), 6379);
        assert_eq!(atoi(b"-1"), -1);
        assert_eq!(atoi(b"+12"), 12);
        assert_eq!(atoi(b"port"), 0);
        assert_eq!(atoi(b""), 0);
        assert!(Target::new(b"127.0.0.1", b"-1").addrs().is_none());
        assert!(Target::new(b"", b"6379").addrs().is_none());
        let wrapped = Target::new(b"127.0.0.1", b"70000")
            .addrs()
            .expect("resolves");
        assert_eq!(u32::from(wrapped[0].port()), 70000 - 65536);
    }

    #[test]
    fn reads_lines_as_redis_does() {
        let mut input = std::io::Cursor::new(b"+OK\r\n-ERR no\r\nbare\n\n".to_vec());
        assert_eq!(read_line(&mut input), Ok(b"+OK".to_vec()));
        assert_eq!(read_line(&mut input), Ok(b"-ERR no".to_vec()));
        assert_eq!(read_line(&mut input), Ok(b"bare".to_vec()));
        assert_eq!(read_line(&mut input), Err(Failure::CLOSED));
        assert_eq!(read_line(&mut input), Err(Failure::CLOSED));
        let mut long = vec![b'x'; 1500];
        long.extend_from_slice(b"\r\n");
        let mut input = std::io::Cursor::new(long);
        assert_eq!(read_line(&mut input).expect("a line").len(), LINE_MAX);
        assert_eq!(
            read_line(&mut input).expect("the rest").len(),
            1500 - LINE_MAX
        );
    }

    #[test]
    fn encodes_auth_select_and_restores() {
        let mut req =
            parsed(&["migrate", "h", "1", "k", "0", "1", "replace", "auth", "pw"]).expect("parses");
        let item = Item {
            name: b"k".to_vec(),
            doc_key: Vec::new(),
            payload: b"P".to_vec(),
            ttl_ms: 42,
            expires_at: None,
            written: DocHybridTime::default(),
        };
        let want = "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n5\r\n\
                    *5\r\n$7\r\nRESTORE\r\n$1\r\nk\r\n$2\r\n42\r\n$1\r\nP\r\n$7\r\nREPLACE\r\n";
        assert_eq!(
            encode_request(&req, Some(5), std::slice::from_ref(&item)),
            want.as_bytes()
        );
        req.password = None;
        req.replace = false;
        let want = "*4\r\n$7\r\nRESTORE\r\n$1\r\nk\r\n$2\r\n42\r\n$1\r\nP\r\n";
        assert_eq!(encode_request(&req, None, &[item]), want.as_bytes());
    }

    #[test]
    fn idle_connections_expire_after_ten_seconds() {
        let used = Instant::now();
        assert!(!idle_too_long(used, used + Duration::from_secs(10)));
        assert!(idle_too_long(used, used + Duration::from_secs(11)));
    }
}
