//! Clients blocked in BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN or BZPOPMAX, in the order
//! they blocked.
//!
//! A blocked client is served by the connection whose write makes one of its keys ready,
//! right after that write's command, as Redis does: the first client to block on a key gets
//! the first element pushed there. Blocking and serving both run under DocDB's writer lock
//! and then take this registry's lock (never the other way round), so a push either happens
//! before a client's non-blocking attempt (which then sees it) or after its registration
//! (and then serves it).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::oneshot;

use crate::frame::{Frame, Protocol};
use crate::session::Session;
use crate::store::DbId;

/// What a served client receives: its reply, and the group-commit sequence number of the
/// write that served it (the reply waits until that write is in the log).
#[derive(Debug)]
pub struct Served {
    /// The blocking command's reply.
    pub reply: Frame,
    /// See [`crate::session::Session::last_write`].
    pub write_seq: u64,
}

/// One blocked client.
#[derive(Debug)]
pub struct Waiter {
    /// The client's id.
    pub client: u64,
    /// The client's address.
    pub addr: SocketAddr,
    /// The database it selected, and that database's name.
    pub db: DbId,
    /// See [`crate::session::Session::db_name`].
    pub db_name: String,
    /// The client's reply protocol (replies are built for it).
    pub protocol: Protocol,
    /// The blocking command, as sent.
    pub request: Vec<Vec<u8>>,
    /// The keys whose writes may serve it (a move's source; every key of a pop).
    pub keys: Vec<Vec<u8>>,
    /// The reply when the deadline passes (a pop's null array, WAIT's count).
    pub on_timeout: Frame,
    reply: Mutex<Option<oneshot::Sender<Served>>>,
}

/// A connection's side of its block: where the reply arrives, and until when it waits.
#[derive(Debug)]
pub struct Wait {
    /// Its registration (to cancel it at the deadline or on disconnect).
    pub waiter: Arc<Waiter>,
    /// Where the serving connection sends the reply.
    pub served: oneshot::Receiver<Served>,
    /// `None`: until served.
    pub deadline: Option<Instant>,
}

/// The registry of blocked clients.
#[derive(Debug, Default)]
pub struct Blocking {
    waiters: Mutex<Vec<Arc<Waiter>>>,
    /// `waiters.len()`, read without the lock on every write command.
    count: AtomicUsize,
}

impl Blocking {
    /// The registry, locked.
    pub fn lock(&self) -> Blocked<'_> {
        Blocked {
            waiters: self.waiters.lock().unwrap_or_else(|e| e.into_inner()),
            count: &self.count,
        }
    }

    /// How many clients are blocked (INFO's `blocked_clients`).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Removes `waiter` if it is still blocked: true then (its deadline passed or it went
    /// away); false when it was served, and its reply is in its channel.
    pub fn cancel(&self, waiter: &Arc<Waiter>) -> bool {
        let mut blocked = self.lock();
        match blocked.position(waiter) {
            Some(i) => {
                blocked.remove(i);
                true
            }
            None => false,
        }
    }
}

/// The locked registry.
pub struct Blocked<'a> {
    waiters: MutexGuard<'a, Vec<Arc<Waiter>>>,
    count: &'a AtomicUsize,
}

impl Blocked<'_> {
    /// Registers `session`'s client, blocking now on `keys` in `request`; it is served after
    /// every client already blocked.
    pub fn block(
        &mut self,
        session: &Session,
        request: Vec<Vec<u8>>,
        keys: Vec<Vec<u8>>,
        deadline: Option<Instant>,
        on_timeout: Frame,
    ) -> Wait {
        let (tx, served) = oneshot::channel();
        let waiter = Arc::new(Waiter {
            client: session.id,
            addr: session.addr,
            db: session.db,
            db_name: session.db_name.clone(),
            protocol: session.protocol,
            request,
            keys,
            on_timeout,
            reply: Mutex::new(Some(tx)),
        });
        self.waiters.push(waiter.clone());
        self.count.store(self.waiters.len(), Ordering::SeqCst);
        Wait {
            waiter,
            served,
            deadline,
        }
    }

    /// CLIENT UNBLOCK: ends client `id`'s block now with its timeout reply, or with an
    /// `UNBLOCKED` error; false when that client is not blocked.
    pub fn unblock(&mut self, id: u64, with_error: bool) -> bool {
        let Some(waiter) = self.waiters.iter().find(|w| w.client == id).cloned() else {
            return false;
        };
        let reply = if with_error {
            Frame::Error("UNBLOCKED client unblocked via CLIENT UNBLOCK".into())
        } else {
            waiter.on_timeout.clone()
        };
        self.serve(
            &waiter,
            Served {
                reply,
                write_seq: 0,
            },
        );
        true
    }

    /// Every key some client waits on, each once.
    pub fn keys(&self) -> Vec<Vec<u8>> {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for key in self.waiters.iter().flat_map(|w| &w.keys) {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
        keys
    }

    /// The database and stream of every `XREADGROUP` wait, each once.
    pub fn group_reads(&self) -> Vec<(DbId, Vec<u8>)> {
        let mut out: Vec<(DbId, Vec<u8>)> = Vec::new();
        let group_reads = self.waiters.iter().filter(|w| {
            w.request
                .first()
                .is_some_and(|name| name.eq_ignore_ascii_case(b"xreadgroup"))
        });
        for waiter in group_reads {
            for key in &waiter.keys {
                let pair = (waiter.db, key.clone());
                if !out.contains(&pair) {
                    out.push(pair);
                }
            }
        }
        out
    }

    /// The blocked clients waiting on one of `keys`, in the order they blocked.
    pub fn waiting_on(&self, keys: &[Vec<u8>]) -> Vec<Arc<Waiter>> {
        self.waiters
            .iter()
            .filter(|w| w.keys.iter().any(|k| keys.contains(k)))
            .cloned()
            .collect()
    }

    /// Unblocks `waiter` with `served` (a client gone meanwhile just does not get it).
    pub fn serve(&mut self, waiter: &Arc<Waiter>, served: Served) {
        if let Some(i) = self.position(waiter) {
            self.remove(i);
        }
        let sender = waiter
            .reply
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(sender) = sender {
            let _ = sender.send(served);
        }
    }

    fn position(&self, waiter: &Arc<Waiter>) -> Option<usize> {
        self.waiters.iter().position(|w| Arc::ptr_eq(w, waiter))
    }

    fn remove(&mut self, i: usize) {
        self.waiters.remove(i);
        self.count.store(self.waiters.len(), Ordering::SeqCst);
    }
}
