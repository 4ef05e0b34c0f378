//! Helpers for tests that talk to a Redis-protocol server over TCP: a blocking RESP client,
//! free loopback ports, and a real `redis-server` child process as a comparison peer.
//!
//! Public so that the integration tests of this crate and of the `docdb` binary share them.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::frame::{Frame, FrameError};

/// A free TCP port on 127.0.0.1 (bound, read, released; good enough for tests).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind an ephemeral loopback port")
}

/// A blocking RESP2 client over one connection.
pub struct RespClient {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl RespClient {
    /// Connects, retrying for up to `wait` while the server starts.
    pub fn connect(addr: SocketAddr, wait: Duration) -> std::io::Result<Self> {
        let deadline = Instant::now() + wait;
        loop {
            match TcpStream::connect(addr) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
                    stream.set_nodelay(true)?;
                    return Ok(RespClient {
                        stream,
                        buf: Vec::new(),
                    });
                }
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// Sends one command (as a multibulk request) and reads its reply.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> std::io::Result<Frame> {
        self.send(args)?;
        self.read_reply()
    }

    /// Sends one command without reading the reply (for pipelining).
    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> std::io::Result<()> {
        self.send_raw(&encode_command(args))
    }

    /// Sends raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads the next reply frame.
    pub fn read_reply(&mut self) -> std::io::Result<Frame> {
        loop {
            match Frame::parse(&self.buf) {
                Ok((frame, used)) => {
                    self.buf.drain(..used);
                    return Ok(frame);
                }
                Err(FrameError::Incomplete) => {}
                Err(FrameError::Protocol(msg)) => {
                    return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, msg));
                }
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// The next reply if one arrives within `wait`, else `None` (for a client that should
    /// still be blocked). What arrives in part stays buffered for the next read.
    pub fn reply_within(&mut self, wait: Duration) -> std::io::Result<Option<Frame>> {
        self.stream.set_read_timeout(Some(wait))?;
        let reply = match self.read_reply() {
            Ok(frame) => Ok(Some(frame)),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(None),
            Err(e) => Err(e),
        };
        self.stream
            .set_read_timeout(Some(Duration::from_secs(30)))?;
        reply
    }

    /// Reads until the server closes the connection; returns what arrived (for tests of
    /// replies sent just before a close).
    pub fn read_to_close(&mut self) -> std::io::Result<Vec<u8>> {
        let mut rest = std::mem::take(&mut self.buf);
        self.stream.read_to_end(&mut rest)?;
        Ok(rest)
    }
}

/// The multibulk encoding of a command.
pub fn encode_command<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        let arg = arg.as_ref();
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// A child process killed (and reaped) on drop.
pub struct ChildGuard {
    /// The process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a `redis-server` binary is on the PATH.
pub fn have_redis_server() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Starts a real `redis-server` on a free loopback port without persistence, in `dir`, and
/// waits until it answers PING (see [`start_retrying`]).
pub fn start_redis_server(dir: &Path, extra: &[&str]) -> std::io::Result<ChildGuard> {
    start_retrying(|| {
        let port = free_port();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        Ok(ChildGuard {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        })
    })
}

/// Spawns a server with `spawn` and waits until it answers PING, three times at most: a
/// port from [`free_port`] is only reserved once the server binds it, so another process
/// may take it first. The server then exits at once, and the readiness probe may even have
/// reached the other process, so a start counts only if the child is still running after.
pub fn start_retrying(
    spawn: impl Fn() -> std::io::Result<ChildGuard>,
) -> std::io::Result<ChildGuard> {
    let mut why = std::io::Error::other("not started");
    for _ in 0..3 {
        let mut guard = match spawn() {
            Ok(guard) => guard,
            Err(e) => {
                why = e;
                continue;
            }
        };
        if let Err(e) = wait_ready(guard.addr) {
            why = e;
            continue;
        }
        std::thread::sleep(Duration::from_millis(50));
        match guard.child.try_wait()? {
            None => return Ok(guard),
            Some(status) => why = std::io::Error::other(format!("exited at once with {status}")),
        }
    }
    Err(why)
}

/// Waits (up to 30 s) until the server at `addr` answers PING (or asks for AUTH).
pub fn wait_ready(addr: SocketAddr) -> std::io::Result<()> {
    let mut client = RespClient::connect(addr, Duration::from_secs(30))?;
    match client.call(&["PING"])? {
        Frame::Simple(_) | Frame::Error(_) => Ok(()),
        other => Err(std::io::Error::other(format!(
            "unexpected PING reply {other:?}"
        ))),
    }
}

/// Starts `docdb serve` (the binary at `exe`) on a free loopback port over the data directory
/// `data_dir`, metrics off, with `extra` flags, and waits until it answers (see
/// [`start_retrying`]).
pub fn start_docdb(exe: &Path, data_dir: &Path, extra: &[&str]) -> std::io::Result<ChildGuard> {
    start_retrying(|| {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let child = Command::new(exe)
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--listen", &addr.to_string(), "--metrics-listen", "off"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()?;
        Ok(ChildGuard { child, addr })
    })
}
