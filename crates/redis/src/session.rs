//! One client connection's state.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use dockv::HybridTime;

use crate::blocking::Wait;
use crate::frame::Protocol;
use crate::pubsub::Subscriber;
use crate::store::DbId;

/// What the server knows about one connection.
#[derive(Debug)]
pub struct Session {
    /// Unique client id (CLIENT ID, HELLO).
    pub id: u64,
    /// The peer address.
    pub addr: SocketAddr,
    /// The selected database id.
    pub db: DbId,
    /// The selected database's name (SELECT's argument).
    pub db_name: String,
    /// The reply protocol (HELLO switches it).
    pub protocol: Protocol,
    /// AUTH succeeded (or no password is set).
    pub authenticated: bool,
    /// CLIENT SETNAME.
    pub name: Option<Vec<u8>>,
    /// Subscribed channels.
    pub channels: BTreeSet<Vec<u8>>,
    /// Subscribed patterns.
    pub patterns: BTreeSet<Vec<u8>>,
    /// Subscribed shard channels (SSUBSCRIBE).
    pub shard_channels: BTreeSet<Vec<u8>>,
    /// Where published messages and MONITOR lines for this connection go.
    pub push: Subscriber,
    /// The connection asked to close (QUIT) after its reply.
    pub quit: bool,
    /// The request just run gets no reply (SHUTDOWN: the connection closes unanswered, as
    /// Redis's does).
    pub unanswered: bool,
    /// CLIENT REPLY OFF: no request gets a reply until CLIENT REPLY ON.
    pub replies_off: bool,
    /// CLIENT REPLY SKIP just ran: the next request gets no reply.
    pub skip_next: bool,
    /// The request running now gets no reply (the one after a CLIENT REPLY SKIP).
    pub skipping: bool,
    /// The group-commit sequence number of this connection's latest write command not yet
    /// known to be in the log file (0: none; see [`crate::core::Core::commit_wal`]).
    pub last_write: u64,
    /// Requests read from this connection (for telling pipelining clients apart).
    pub requests: u64,
    /// The commands queued since MULTI (`None` outside a transaction).
    pub multi: Option<Multi>,
    /// The keys WATCHed for the next EXEC.
    pub watched: Vec<Watched>,
    /// EXEC is running this connection's queued commands (a blocking pop then answers at
    /// once).
    pub in_exec: bool,
    /// The arguments of the write commands the last EXEC ran (the keys it may have made
    /// ready for blocked clients, in order).
    pub exec_written: Vec<Vec<u8>>,
    /// The connection is blocked in a blocking pop: it reads no further requests until the
    /// reply comes or the deadline passes.
    pub blocked: Option<Wait>,
    /// CLIENT PAUSE holds the next request, left unread in the input until the pause ends.
    pub paused: bool,
    /// CLIENT TRACKING's options while tracking is on.
    pub tracking: Option<crate::tracking::TrackingMode>,
    /// CLIENT CACHING was given for the next command (YES in OPTIN mode, NO in OPTOUT).
    pub caching: bool,
    /// The ACL user the connection runs as (AUTH, HELLO AUTH).
    pub user: String,
    /// The default user had a password (set by ACL SETUSER, not requirepass) or was off
    /// when the connection started: it needs AUTH even without requirepass.
    pub acl_locked: bool,
    /// The ACL epoch at which `user` was found unrestricted: while it is still the
    /// epoch, dispatch skips the permission checks (one comparison per request).
    pub acl_ok: u64,
}

/// A transaction being queued (MULTI ... EXEC).
#[derive(Debug, Default)]
pub struct Multi {
    /// The queued requests, in order.
    pub queued: Vec<Vec<Vec<u8>>>,
    /// A request was refused while queueing (unknown, wrong arity...): EXEC then refuses.
    pub failed: bool,
}

/// A WATCHed key: EXEC fails if it was written after `since`, or has expired since.
#[derive(Debug)]
pub struct Watched {
    /// The key's encoded DocKey (in the database selected at WATCH).
    pub doc_key: Vec<u8>,
    /// When WATCH ran.
    pub since: HybridTime,
    /// Whether the key was live then.
    pub existed: bool,
}

impl Session {
    /// A new connection's state, in database 0.
    pub fn new(id: u64, addr: SocketAddr, push: Subscriber) -> Self {
        Session {
            id,
            addr,
            db: 0,
            db_name: "0".into(),
            protocol: Protocol::Resp2,
            authenticated: false,
            name: None,
            channels: BTreeSet::new(),
            patterns: BTreeSet::new(),
            shard_channels: BTreeSet::new(),
            push,
            quit: false,
            unanswered: false,
            replies_off: false,
            skip_next: false,
            skipping: false,
            last_write: 0,
            requests: 0,
            multi: None,
            watched: Vec::new(),
            in_exec: false,
            exec_written: Vec::new(),
            blocked: None,
            paused: false,
            tracking: None,
            caching: false,
            user: "default".into(),
            acl_ok: 0,
            acl_locked: false,
        }
    }

    /// Whether commands other than AUTH/HELLO/QUIT are refused for now, when the server
    /// has a `requirepass` or not (see [`crate::core::Core::needs_auth`]).
    pub fn needs_auth(&self, requirepass: bool) -> bool {
        !self.authenticated && (requirepass || self.acl_locked)
    }

    /// Whether the connection has subscriptions.
    pub fn subscribed(&self) -> bool {
        !self.channels.is_empty() || !self.patterns.is_empty() || !self.shard_channels.is_empty()
    }

    /// Whether only the pub/sub commands may run: a RESP2 connection with subscriptions
    /// (its replies would be mistaken for messages). RESP3 tells pushes from replies.
    pub fn in_subscribed_mode(&self) -> bool {
        self.protocol == Protocol::Resp2 && self.subscribed()
    }
}
