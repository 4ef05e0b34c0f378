//! Shared helpers for the over-the-wire tests of `docdb serve` (`redis_wire`, `redis_diff`,
//! `redis_cli`): starting the server under test and a real `redis-server` beside it, raw
//! byte exchanges, and running the real `redis-cli` with a time limit.
//!
//! Every expectation in those tests is checked against a real `redis-server` first (when one
//! is installed), through the same function as for docdb, so the tests encode what Redis
//! actually does rather than what we think it does.

#![allow(
    dead_code,
    unused_imports,
    reason = "each test file uses a different subset of these helpers"
)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use docdb_redis::Frame;
pub use docdb_redis::testkit::{
    ChildGuard, RespClient, encode_command, have_redis_server, start_docdb, start_redis_server,
};
use tempfile::TempDir;

/// A reply in redis-cli-like notation, for transcripts and failure messages.
pub fn render(frame: &Frame) -> String {
    let list = |open: &str, items: &[Frame]| {
        let inner: Vec<String> = items.iter().map(render).collect();
        format!("{open}{}]", inner.join(", "))
    };
    match frame {
        Frame::Simple(s) => format!("+{s}"),
        Frame::Error(s) => format!("-{s}"),
        Frame::Integer(n) => format!(":{n}"),
        Frame::Bulk(b) => format!("\"{}\"", b.escape_ascii()),
        Frame::Null => "(nil)".into(),
        Frame::NullArray => "(nil array)".into(),
        Frame::Array(items) => list("[", items),
        Frame::Double(d) => format!("(double) {d:?}"),
        Frame::DoubleText(t) => format!("(double) {t}"),
        Frame::Map(entries) => {
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{} => {}", render(k), render(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Frame::Set(items) => list("set[", items),
        Frame::Push(items) => list("push[", items),
        Frame::Boolean(b) => format!("(bool) {b}"),
        Frame::Verbatim(text) => format!("(verbatim) \"{}\"", text.escape_ascii()),
        Frame::BigNumber(n) => format!("(big) {n}"),
    }
}

/// A running server (docdb or Redis) with the directory it owns; killed on drop.
pub struct Server {
    /// "redis" or "docdb", for failure messages.
    pub name: &'static str,
    /// The process (killed on drop, before the directory is removed).
    pub guard: ChildGuard,
    _dir: TempDir,
}

impl Server {
    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.guard.addr
    }

    /// A new RESP client connection.
    pub fn client(&self) -> RespClient {
        RespClient::connect(self.addr(), Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("{}: connect: {e}", self.name))
    }

    /// A new raw byte connection.
    pub fn raw(&self) -> Raw {
        Raw::connect(self.addr(), self.name)
    }

    /// The port, as text (for `redis-cli -p`).
    pub fn port(&self) -> String {
        self.addr().port().to_string()
    }
}

/// Starts `docdb serve` over a fresh data directory with `flags`.
pub fn docdb(flags: &[&str]) -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = Path::new(env!("CARGO_BIN_EXE_docdb"));
    let guard = start_checked("docdb", || start_docdb(exe, dir.path(), flags));
    Server {
        name: "docdb",
        guard,
        _dir: dir,
    }
}

/// Starts a real `redis-server` with `flags`, or returns `None` (with a note) when none is
/// installed.
pub fn redis(flags: &[&str]) -> Option<Server> {
    if !have_redis_server() {
        eprintln!(
            "note: redis-server not on PATH; checking docdb alone (scripts/test.sh installs it)"
        );
        return None;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let guard = start_checked("redis", || start_redis_server(dir.path(), flags));
    Some(Server {
        name: "redis",
        guard,
        _dir: dir,
    })
}

/// Serializes server starts within a test binary: a port from `free_port` is only reserved
/// once the server has bound it, so two starts at once could pick the same one.
static STARTING: Mutex<()> = Mutex::new(());

/// Starts a server (the testkit retries a start whose port was taken meanwhile), one at a
/// time within the test binary.
fn start_checked(name: &str, start: impl Fn() -> std::io::Result<ChildGuard>) -> ChildGuard {
    let _one_at_a_time = STARTING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    start().unwrap_or_else(|why| panic!("{name}: could not start a server: {why}"))
}

/// A real `redis-server`, failing the test with instructions when none is installed (for
/// tests that are meaningless without the reference).
pub fn require_redis(flags: &[&str]) -> Server {
    assert!(
        have_redis_server(),
        "redis-server is not on PATH: this test compares docdb with a real Redis; \
         run scripts/test.sh, which installs it (apt-get install redis-server)"
    );
    redis(flags).expect("redis-server")
}

/// The real Redis first (so each expectation is proven against Redis before docdb is
/// judged by it), then docdb.
pub fn both(flags: &[&str]) -> Vec<Server> {
    redis(flags).into_iter().chain([docdb(flags)]).collect()
}

/// Bytes as readable text for failure messages: printable ASCII as is, the rest escaped.
pub fn show(bytes: &[u8]) -> String {
    let mut out = String::new();
    for &b in bytes {
        match b {
            b'\r' => out.push_str("\\r"),
            b'\n' => out.push_str("\\n"),
            b'\\' => out.push_str("\\\\"),
            b' '..=b'~' => out.push(char::from(b)),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// A raw TCP connection for exact byte-level exchanges.
pub struct Raw {
    stream: TcpStream,
    name: &'static str,
}

/// How long a raw read waits for an expected reply before reporting what did arrive.
const RAW_WAIT: Duration = Duration::from_secs(5);

impl Raw {
    /// Connects to `addr`; `name` labels failures.
    pub fn connect(addr: SocketAddr, name: &'static str) -> Raw {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{name}: connect: {e}"));
        stream.set_nodelay(true).expect("nodelay");
        stream.set_read_timeout(Some(RAW_WAIT)).expect("timeout");
        Raw { stream, name }
    }

    /// Writes `bytes`.
    pub fn send(&mut self, bytes: &[u8]) {
        self.stream
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("{}: write {}: {e}", self.name, show(bytes)));
    }

    /// Writes `bytes` one byte at a time, so the server sees every possible split.
    pub fn send_trickle(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.send(std::slice::from_ref(b));
            std::thread::sleep(Duration::from_micros(300));
        }
    }

    /// Reads exactly `want.len()` bytes (or what arrives before EOF or the timeout) and
    /// asserts they are `want`.
    pub fn expect(&mut self, want: &[u8], context: &str) {
        let mut got = self.read_up_to(want.len());
        if got != want {
            got.extend(self.read_briefly());
        }
        assert!(
            got == want,
            "{}: reply to {context}\n  got:  {}\n  want: {}",
            self.name,
            show(&got),
            show(want)
        );
    }

    /// Asserts the server closes the connection without sending anything more.
    pub fn expect_closed(&mut self, context: &str) {
        let rest = self.read_to_close(context);
        assert!(
            rest.is_empty(),
            "{}: after {context}: expected a close, got {}",
            self.name,
            show(&rest)
        );
    }

    /// Sends `request`, expects `reply`, then expects the server to close the connection.
    pub fn expect_reply_then_close(&mut self, request: &[u8], reply: &[u8]) {
        self.send(request);
        let context = show(request);
        self.expect(reply, &context);
        self.expect_closed(&context);
    }

    /// Sends `request` and expects exactly `reply`, then checks the connection still works
    /// (so no stray bytes followed the reply).
    pub fn exchange(&mut self, request: &[u8], reply: &[u8]) {
        self.send(request);
        let context = show(request);
        self.expect(reply, &context);
        self.send(b"*2\r\n$4\r\nECHO\r\n$5\r\nalive\r\n");
        self.expect(b"$5\r\nalive\r\n", &format!("ECHO after {context}"));
    }

    /// Reads one reply line (up to `\r\n`), or what arrives before EOF, a reset or the
    /// timeout.
    pub fn read_line(&mut self) -> Vec<u8> {
        let mut line = Vec::new();
        while !line.ends_with(b"\r\n") {
            let byte = self.read_up_to(1);
            if byte.is_empty() {
                break;
            }
            line.extend(byte);
        }
        line
    }

    /// Reads until what arrived ends with `suffix` (a reply whose middle differs between
    /// servers, such as HELLO's version); panics with what arrived if it never does.
    pub fn read_until(&mut self, suffix: &[u8]) -> Vec<u8> {
        let mut got = Vec::new();
        while !got.ends_with(suffix) {
            let byte = self.read_up_to(1);
            assert!(
                !byte.is_empty(),
                "{}: waiting for {}, got {}",
                self.name,
                show(suffix),
                show(&got)
            );
            got.extend(byte);
        }
        got
    }

    /// Whatever else arrives within a moment (to show a whole wrong reply).
    fn read_briefly(&mut self) -> Vec<u8> {
        let mut more = Vec::new();
        let _ = self
            .stream
            .set_read_timeout(Some(Duration::from_millis(200)));
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = self.stream.read(&mut chunk) {
            more.extend_from_slice(&chunk[..n]);
        }
        let _ = self.stream.set_read_timeout(Some(RAW_WAIT));
        more
    }

    fn read_up_to(&mut self, len: usize) -> Vec<u8> {
        let mut got = vec![0u8; len];
        let mut filled = 0;
        while filled < len {
            match self.stream.read(&mut got[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break, // timeout or reset: report what arrived
            }
        }
        got.truncate(filled);
        got
    }

    /// Reads until EOF; a reset counts as a close. Fails if the server keeps it open.
    fn read_to_close(&mut self, context: &str) -> Vec<u8> {
        let mut rest = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return rest,
                Ok(n) => rest.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    panic!(
                        "{}: after {context}: connection still open after {RAW_WAIT:?} (got {})",
                        self.name,
                        show(&rest)
                    )
                }
                Err(_) => return rest, // reset by peer: closed
            }
        }
    }
}

/// The multibulk encoding of a command given as text words.
pub fn cmd(args: &[&str]) -> Vec<u8> {
    encode_command(args)
}

/// The path of the real `redis-cli`, failing the test with instructions when missing.
pub fn redis_cli_path() -> &'static str {
    let found = Command::new("redis-cli")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "redis-cli is not on PATH: these tests drive docdb with the real Redis client; \
         run scripts/test.sh, which installs redis-tools"
    );
    "redis-cli"
}

/// How long one `redis-cli` run may take before it is killed and the test fails.
const CLI_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `redis-cli -h 127.0.0.1 -p PORT args...` with `stdin` (bytes or a file), killing it
/// after [`CLI_TIMEOUT`].
pub fn run_redis_cli(server: &Server, args: &[&str], stdin: Stdin<'_>) -> Output {
    let mut command = Command::new(redis_cli_path());
    command
        .args(["-h", "127.0.0.1", "-p", &server.port()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Stdin::Bytes(_) => command.stdin(Stdio::piped()),
        Stdin::File(path) => command.stdin(std::fs::File::open(path).expect("open stdin file")),
        Stdin::Null => command.stdin(Stdio::null()),
    };
    let mut child = command.spawn().expect("spawn redis-cli");
    let feeder = match (stdin, child.stdin.take()) {
        (Stdin::Bytes(bytes), Some(mut pipe)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                // A failed write shows up as a wrong output; nothing to add here.
                let _ = pipe.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let out = wait_with_timeout(child, server.name, args);
    if let Some(feeder) = feeder {
        feeder.join().expect("stdin feeder");
    }
    out
}

/// What `redis-cli` reads on its standard input.
#[derive(Clone, Copy)]
pub enum Stdin<'a> {
    /// Nothing (closed).
    Null,
    /// These bytes, through a pipe.
    Bytes(&'a [u8]),
    /// The contents of this file.
    File(&'a Path),
}

fn wait_with_timeout(mut child: std::process::Child, name: &str, args: &[&str]) -> Output {
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + CLI_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait redis-cli") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: redis-cli {args:?} did not finish within {CLI_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out_reader.join().expect("stdout reader"),
        stderr: err_reader.join().expect("stderr reader"),
    }
}

/// Sends `EVAL <script> 0` for every script to a real redis-server and to docdb, and fails
/// with every script whose replies differ (the Lua libraries' lockstep tests).
pub fn eval_lockstep(scripts: &[&str]) {
    let redis = require_redis(&[]);
    let docdb = docdb(&[]);
    let (mut want_client, mut got_client) = (redis.client(), docdb.client());
    let mut failures = Vec::new();
    for script in scripts {
        let want = eval_on(&mut want_client, "redis", script);
        let got = eval_on(&mut got_client, "docdb", script);
        if want != got {
            failures.push(format!(
                "EVAL {script:?} 0\n  redis: {}\n  docdb: {}",
                render(&want),
                render(&got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scripts differ:\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n")
    );
}

fn eval_on(client: &mut RespClient, name: &str, script: &str) -> Frame {
    client
        .call(&["EVAL", script, "0"])
        .unwrap_or_else(|e| panic!("{name}: EVAL {script:?}: {e}"))
}
