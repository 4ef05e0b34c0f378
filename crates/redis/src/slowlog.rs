//! The slow log (SLOWLOG GET, LEN, RESET): the last commands slower than
//! `slowlog-log-slower-than` microseconds, newest first, as Redis keeps them.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Redis's `slowlog-log-slower-than` default: 10 ms.
pub const DEFAULT_SLOWER_THAN_US: i64 = 10_000;
/// Redis's `slowlog-max-len` default.
pub const DEFAULT_MAX_LEN: u64 = 128;
/// An entry keeps at most this many arguments; the last one kept says how many more there were.
const MAX_ARGS: usize = 32;
/// An argument is cut to this many bytes.
const MAX_ARG_BYTES: usize = 128;

/// One logged command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its number: unique and increasing for the life of the server.
    pub id: u64,
    /// Unix seconds when it ran.
    pub unix_secs: u64,
    /// How long it ran, in microseconds.
    pub micros: u64,
    /// Its arguments, command name first, cut and redacted.
    pub args: Vec<Vec<u8>>,
    /// The client's `ip:port` (`?:0` for a script's commands, as Redis's Lua client).
    pub client: String,
    /// The client's name, empty when it has none.
    pub name: Vec<u8>,
}

/// Who ran a logged command.
pub struct Caller<'a> {
    /// `ip:port`.
    pub client: String,
    /// CLIENT SETNAME's name.
    pub name: Option<&'a [u8]>,
}

/// The slow log: its two settings in atomics, so that the check after every command is one
/// load, and its entries behind a lock taken only for slow commands.
#[derive(Debug)]
pub struct SlowLog {
    slower_than_us: AtomicI64,
    max_len: AtomicU64,
    next_id: AtomicU64,
    entries: Mutex<VecDeque<Entry>>,
}

impl Default for SlowLog {
    fn default() -> Self {
        SlowLog {
            slower_than_us: AtomicI64::new(DEFAULT_SLOWER_THAN_US),
            max_len: AtomicU64::new(DEFAULT_MAX_LEN),
            next_id: AtomicU64::new(0),
            entries: Mutex::new(VecDeque::new()),
        }
    }
}

impl SlowLog {
    /// `slowlog-log-slower-than`: microseconds; negative turns the log off.
    pub fn slower_than_us(&self) -> i64 {
        self.slower_than_us.load(Ordering::Relaxed)
    }

    /// Sets `slowlog-log-slower-than`.
    pub fn set_slower_than_us(&self, us: i64) {
        self.slower_than_us.store(us, Ordering::Relaxed);
    }

    /// `slowlog-max-len`.
    pub fn max_len(&self) -> u64 {
        self.max_len.load(Ordering::Relaxed)
    }

    /// Sets `slowlog-max-len`, dropping the oldest entries past it.
    pub fn set_max_len(&self, len: u64) {
        self.max_len.store(len, Ordering::Relaxed);
        let mut entries = self.lock();
        entries.truncate(usize::try_from(len).unwrap_or(usize::MAX));
    }

    /// Logs the command `args` if `elapsed` reaches the threshold.
    pub fn observe<'a>(
        &self,
        args: &[Vec<u8>],
        elapsed: Duration,
        caller: impl FnOnce() -> Caller<'a>,
    ) {
        let threshold = self.slower_than_us();
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        if threshold < 0 || micros < threshold as u64 || self.max_len() == 0 {
            return;
        }
        let caller = caller();
        let entry = Entry {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            unix_secs: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            micros,
            args: logged_args(args),
            client: caller.client,
            name: caller.name.map(<[u8]>::to_vec).unwrap_or_default(),
        };
        let max = usize::try_from(self.max_len()).unwrap_or(usize::MAX);
        let mut entries = self.lock();
        entries.push_front(entry);
        entries.truncate(max);
    }

    /// The newest `count` entries (all of them with `None`), newest first.
    pub fn latest(&self, count: Option<usize>) -> Vec<Entry> {
        let entries = self.lock();
        let count = count.unwrap_or(entries.len());
        entries.iter().take(count).cloned().collect()
    }

    /// How many entries are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no entry is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// SLOWLOG RESET: drops every entry (ids keep counting).
    pub fn reset(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The arguments as an entry keeps them: at most [`MAX_ARGS`], each cut to
/// [`MAX_ARG_BYTES`], secrets replaced by `(redacted)`.
fn logged_args(args: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let kept = args.len().min(MAX_ARGS);
    let mut out = Vec::with_capacity(kept);
    for (i, arg) in args.iter().enumerate().take(kept) {
        if kept < args.len() && i == kept - 1 {
            out.push(format!("... ({} more arguments)", args.len() - kept + 1).into_bytes());
        } else if is_redacted(args, i) {
            out.push(b"(redacted)".to_vec());
        } else if arg.len() > MAX_ARG_BYTES {
            let mut cut = arg[..MAX_ARG_BYTES].to_vec();
            let more = format!("... ({} more bytes)", arg.len() - MAX_ARG_BYTES);
            cut.extend_from_slice(more.as_bytes());
            out.push(cut);
        } else {
            out.push(arg.clone());
        }
    }
    out
}

/// Whether argument `i` of `args` is a secret that MONITOR and the slow log hide, as Redis
/// 7.0 does: AUTH's arguments, HELLO's after `AUTH`, ACL SETUSER's rules, MIGRATE's
/// credentials, and the value of a password setting in CONFIG SET.
pub fn is_redacted(args: &[Vec<u8>], i: usize) -> bool {
    let Some(name) = args.first() else {
        return false;
    };
    let is = |arg: &[u8], word: &str| arg.eq_ignore_ascii_case(word.as_bytes());
    if is(name, "auth") {
        return i > 0;
    }
    if is(name, "hello") {
        return (2..i)
            .rev()
            .take(2)
            .any(|j| is(&args[j], "auth") && i - j <= 2);
    }
    if is(name, "acl") && args.get(1).is_some_and(|s| is(s, "setuser")) {
        return i >= 2;
    }
    if is(name, "migrate") {
        return migrate_secret(args, i);
    }
    if is(name, "config") && args.get(1).is_some_and(|s| is(s, "set")) && i >= 3 {
        // Names sit at 2, 4, ...; each value right after its name.
        return (i - 3).is_multiple_of(2)
            && (is(&args[i - 1], "requirepass") || is(&args[i - 1], "masterauth"));
    }
    false
}

/// MIGRATE's secrets: what follows `AUTH` (one) or `AUTH2` (two), as far as Redis's option
/// parser gets before `KEYS` or an error stops it.
fn migrate_secret(args: &[Vec<u8>], i: usize) -> bool {
    let is = |arg: &[u8], word: &str| arg.eq_ignore_ascii_case(word.as_bytes());
    let mut j = 6;
    while j < args.len() {
        let secrets = match &args[j] {
            a if is(a, "copy") || is(a, "replace") => 0,
            a if is(a, "auth") => 1,
            a if is(a, "auth2") => 2,
            _ => return false,
        };
        if j + secrets >= args.len() {
            return false;
        }
        if i > j && i <= j + secrets {
            return true;
        }
        j += secrets + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn caller() -> Caller<'static> {
        Caller {
            client: "127.0.0.1:5000".into(),
            name: Some(b"joe"),
        }
    }

    fn redacted(words: &[&str]) -> Vec<usize> {
        let args = args(words);
        (0..args.len()).filter(|&i| is_redacted(&args, i)).collect()
    }

    #[test]
    fn secrets_are_redacted_as_redis_does() {
        // Each case as redis-server 7.0.15's SLOWLOG GET shows it.
        assert_eq!(redacted(&["auth", "pw"]), [1]);
        assert_eq!(redacted(&["AUTH", "user", "pw"]), [1, 2]);
        assert_eq!(redacted(&["hello", "3", "auth", "default", "pw"]), [3, 4]);
        assert_eq!(
            redacted(&["hello", "3", "AUTH", "u", "p", "setname", "x"]),
            [3, 4]
        );
        assert_eq!(
            redacted(&["hello", "2", "setname", "auth"]),
            Vec::<usize>::new()
        );
        assert_eq!(
            redacted(&["config", "set", "maxclients", "100", "requirepass", "x"]),
            [5]
        );
        assert_eq!(
            redacted(&["config", "get", "requirepass"]),
            Vec::<usize>::new()
        );
        assert_eq!(
            redacted(&["set", "auth", "requirepass"]),
            Vec::<usize>::new()
        );
        assert_eq!(
            redacted(&["acl", "setuser", "u", "on", ">pw", "~*"]),
            [2, 3, 4, 5]
        );
        assert_eq!(redacted(&["acl", "getuser", "u"]), Vec::<usize>::new());
        let migrate = ["migrate", "h", "1", "k", "0", "10"];
        let with = |rest: &[&'static str]| redacted(&[&migrate[..], rest].concat());
        assert_eq!(with(&["COPY", "AUTH", "secret"]), [8]);
        assert_eq!(with(&["AUTH2", "user", "pw", "KEYS", "k"]), [7, 8]);
        assert_eq!(with(&["AUTH"]), Vec::<usize>::new());
        assert_eq!(with(&["KEYS", "auth", "x"]), Vec::<usize>::new());
        assert_eq!(with(&["bogus", "AUTH", "x"]), Vec::<usize>::new());
    }

    #[test]
    fn long_commands_are_cut_as_redis_does() {
        let long = vec![b'a'; 200];
        let cut = logged_args(&[b"set".to_vec(), b"k".to_vec(), long]);
        let mut want = vec![b'a'; 128];
        want.extend_from_slice(b"... (72 more bytes)");
        assert_eq!(cut[2], want);
        let many: Vec<Vec<u8>> = (0..40).map(|i| i.to_string().into_bytes()).collect();
        let cut = logged_args(&many);
        assert_eq!(cut.len(), 32);
        assert_eq!(cut[30], b"30");
        assert_eq!(cut[31], b"... (9 more arguments)");
    }

    #[test]
    fn entries_are_kept_newest_first_within_the_limits() {
        let log = SlowLog::default();
        log.observe(&args(&["get", "a"]), Duration::from_millis(5), caller);
        assert!(log.is_empty(), "5 ms is under the default 10 ms");
        log.observe(&args(&["get", "a"]), Duration::from_millis(10), caller);
        assert_eq!(log.len(), 1, "the threshold itself is slow enough");
        log.set_slower_than_us(0);
        for i in 0..5 {
            log.observe(&args(&["get", &i.to_string()]), Duration::ZERO, caller);
        }
        let latest = log.latest(Some(2));
        assert_eq!(latest.len(), 2);
        assert_eq!((latest[0].id, latest[0].args[1].as_slice()), (5, &b"4"[..]));
        assert_eq!(latest[1].id, 4);
        assert_eq!(latest[0].name, b"joe");
        log.set_max_len(3);
        assert_eq!(log.len(), 3);
        assert_eq!(log.latest(None)[2].id, 3, "the oldest went");
        log.set_slower_than_us(-1);
        log.observe(&args(&["ping"]), Duration::from_secs(1), caller);
        assert_eq!(log.len(), 3, "a negative threshold turns the log off");
        log.reset();
        assert!(log.is_empty());
        log.set_slower_than_us(0);
        log.observe(&args(&["ping"]), Duration::ZERO, caller);
        assert_eq!(log.latest(None)[0].id, 6, "ids go on after a reset");
        log.set_max_len(0);
        log.observe(&args(&["ping"]), Duration::ZERO, caller);
        assert!(log.is_empty(), "a zero length keeps nothing");
    }
}
