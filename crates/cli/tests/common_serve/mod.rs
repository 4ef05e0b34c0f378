//! Helpers shared by the `docdb serve` integration tests (`redis_restart`, `redis_load`,
//! `redis_seeds`): start and stop the server over a data directory, call commands, read
//! replies.
//!
//! With `DOCDB_SERVE_TESTS_PEER=redis` the restart and load tests run against a real
//! `redis-server` with an append-only file instead (`--fsync` maps to `appendfsync`), which
//! checks the tests themselves against the reference implementation.

#![allow(dead_code, reason = "each test file uses a different subset")]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

pub use docdb_redis::Frame;
use docdb_redis::testkit::{self, ChildGuard, RespClient};
pub use engine::Rng;

/// How long a graceful shutdown may take before the test fails.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether the tests run against a real `redis-server` (see the module docs).
pub fn peer_is_redis() -> bool {
    std::env::var("DOCDB_SERVE_TESTS_PEER").is_ok_and(|v| v == "redis")
}

/// True (after saying so) when the tests run against the Redis peer, so a test of what only
/// docdb has (`why`) skips.
pub fn skipped_on_redis_peer(why: &str) -> bool {
    let skip = peer_is_redis();
    if skip {
        eprintln!("skipped: {why}");
    }
    skip
}

/// `docdb dump` over `dir`: its output, after checking that it succeeded.
pub fn dump(dir: &Path) -> String {
    let out = Command::new(docdb_exe())
        .args(["dump", "--data-dir"])
        .arg(dir)
        .output()
        .expect("run docdb dump");
    assert!(
        out.status.success(),
        "docdb dump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 dump")
}

/// The `docdb` binary under test.
pub fn docdb_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_docdb"))
}

/// A running server over a data directory; killed on drop if not stopped.
pub struct Server {
    guard: ChildGuard,
    data_dir: PathBuf,
    flags: Vec<String>,
}

impl Server {
    /// Starts `docdb serve --data-dir DATA_DIR FLAGS...` (or the Redis peer) and waits until
    /// it answers PING.
    pub fn start(data_dir: &Path, flags: &[&str]) -> Server {
        let guard = if peer_is_redis() {
            let mut extra = vec!["--appendonly", "yes", "--appendfsync", "everysec"];
            let mut it = flags.iter();
            while let Some(flag) = it.next() {
                let value = it.next().expect("flag value");
                match *flag {
                    "--fsync" => extra.extend(["--appendfsync", value]),
                    "--requirepass" => extra.extend(["--requirepass", value]),
                    "--maxclients" => extra.extend(["--maxclients", value]),
                    _ => {}
                }
            }
            testkit::start_redis_server(data_dir, &extra)
        } else {
            testkit::start_docdb(&docdb_exe(), data_dir, flags)
        }
        .unwrap_or_else(|e| panic!("start the server over {}: {e}", data_dir.display()));
        // Redis answers `-LOADING` while it replays its append-only file.
        let deadline = Instant::now() + STOP_TIMEOUT;
        let mut client = Client::connect(guard.addr);
        while let Frame::Error(e) = client.call(&["PING"])
            && e.starts_with("LOADING")
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        Server {
            guard,
            data_dir: data_dir.to_path_buf(),
            flags: flags.iter().map(|f| f.to_string()).collect(),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.guard.addr
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.guard.child.id()
    }

    /// A new connection.
    pub fn client(&self) -> Client {
        Client::connect(self.addr())
    }

    /// SIGTERM, then waits for the exit; fails the test unless the server exits 0 in time.
    pub fn stop(self) {
        self.stop_with("TERM");
    }

    /// Sends `signal` (`TERM`, `INT`), then waits for the exit; fails the test unless the
    /// server exits 0 in time.
    pub fn stop_with(self, signal: &str) {
        let pid = self.pid();
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {pid}: {status}");
        self.wait_stopped(&format!("SIG{signal}"));
    }

    /// Waits for the exit that `cause` (a signal, SHUTDOWN) began; fails the test unless the
    /// server exits 0 in time.
    pub fn wait_stopped(mut self, cause: &str) {
        match self.wait_exit(STOP_TIMEOUT) {
            Some(exit) => assert!(
                exit.success(),
                "the server did not exit 0 after {cause}: {exit}"
            ),
            None => panic!("the server did not exit within {STOP_TIMEOUT:?} of {cause}"),
        }
    }

    /// SIGKILL (a crash), then reaps the process.
    pub fn crash(mut self) {
        self.guard.child.kill().expect("SIGKILL the server");
        self.guard.child.wait().expect("reap the server");
    }

    /// Graceful stop, then a new server over the same directory with the same flags.
    pub fn restart(self) -> Server {
        let (dir, flags) = (self.data_dir.clone(), self.flags.clone());
        self.stop();
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        Server::start(&dir, &flags)
    }

    /// The resident set size in bytes (`VmRSS` of `/proc/<pid>/status`), if readable.
    pub fn rss_bytes(&self) -> Option<u64> {
        rss_bytes(self.pid())
    }

    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.guard.child.try_wait().expect("wait for the server") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `VmRSS` of a process in bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// A blocking client whose calls fail the test on I/O errors (use [`Client::try_call`] where
/// the connection may break, e.g. around a crash).
pub struct Client {
    inner: RespClient,
}

impl Client {
    /// Connects (retrying while the server starts).
    pub fn connect(addr: SocketAddr) -> Client {
        let inner = RespClient::connect(addr, Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
        Client { inner }
    }

    /// One command; an I/O error fails the test.
    pub fn call(&mut self, args: &[&str]) -> Frame {
        self.try_call(args)
            .unwrap_or_else(|e| panic!("{}: {e}", args.join(" ")))
    }

    /// One command.
    pub fn try_call(&mut self, args: &[&str]) -> std::io::Result<Frame> {
        self.inner.call(args)
    }

    /// Sends many commands at once, then reads one reply each (fails the test on I/O errors).
    pub fn pipeline(&mut self, commands: &[Vec<String>]) -> Vec<Frame> {
        self.try_pipeline(commands)
            .unwrap_or_else(|e| panic!("a pipeline of {}: {e}", commands.len()))
    }

    /// Sends many commands at once, then reads one reply each.
    pub fn try_pipeline(&mut self, commands: &[Vec<String>]) -> std::io::Result<Vec<Frame>> {
        let mut bytes = Vec::new();
        for command in commands {
            bytes.extend(testkit::encode_command(command));
        }
        self.inner.send_raw(&bytes)?;
        commands.iter().map(|_| self.inner.read_reply()).collect()
    }

    /// A numeric field of an INFO section.
    pub fn info_field(&mut self, section: &str, field: &str) -> u64 {
        let info = self.bulk(&["INFO", section]).expect("INFO");
        let prefix = format!("{field}:");
        info.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {field} in {info}"))
            .parse()
            .expect("a number")
    }

    /// The underlying RESP client.
    pub fn raw(&mut self) -> &mut RespClient {
        &mut self.inner
    }

    /// A command that must reply `+OK`.
    pub fn ok(&mut self, args: &[&str]) {
        let reply = self.call(args);
        assert_eq!(reply, Frame::Simple("OK".into()), "{}", args.join(" "));
    }

    /// A command that must reply with an integer.
    pub fn int(&mut self, args: &[&str]) -> i64 {
        match self.call(args) {
            Frame::Integer(n) => n,
            other => panic!("{}: expected an integer, got {other:?}", args.join(" ")),
        }
    }

    /// A command that must reply with a bulk string or nil.
    pub fn bulk(&mut self, args: &[&str]) -> Option<String> {
        match self.call(args) {
            Frame::Bulk(b) => Some(String::from_utf8_lossy(&b).into_owned()),
            Frame::Null => None,
            other => panic!("{}: expected a bulk string, got {other:?}", args.join(" ")),
        }
    }

    /// A command that must reply with an array of bulk strings.
    pub fn strings(&mut self, args: &[&str]) -> Vec<String> {
        let reply = self.call(args);
        strings(&reply).unwrap_or_else(|| {
            panic!(
                "{}: expected an array of strings, got {reply:?}",
                args.join(" ")
            )
        })
    }
}

/// The elements of an array of bulk strings.
pub fn strings(frame: &Frame) -> Option<Vec<String>> {
    match frame {
        Frame::Array(items) => items
            .iter()
            .map(|f| match f {
                Frame::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Sorted copy.
pub fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The workspace's generator, seeded from the environment variable `env` if set, else from
/// the clock; the seed is printed so a failing run can be replayed.
pub fn seeded_rng(env: &str) -> Rng {
    let seed = Rng::seed_from_env(env);
    eprintln!("{env}={seed}");
    Rng::new(seed)
}

/// A numeric environment setting with a default.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
