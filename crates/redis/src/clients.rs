//! Every connected client, for CLIENT LIST and CLIENT KILL.
//!
//! A connection registers when it starts and is removed when it ends, however it ends. The
//! rows hold what CLIENT LIST shows; the commands that change them (CLIENT SETNAME, SELECT,
//! HELLO) update the row of their own connection.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::Notify;

use crate::frame::Protocol;
use crate::pubsub::Subscriber;
use crate::session::Session;

/// What CLIENT LIST shows of one connection, and how to close it.
struct ClientRow {
    addr: SocketAddr,
    name: Option<Vec<u8>>,
    db_name: String,
    protocol: Protocol,
    /// The ACL user (`user=`).
    user: String,
    /// Channels, patterns and shard channels subscribed to (`sub=`, `psub=`, `ssub=`).
    subscriptions: [usize; 3],
    since: Instant,
    kill: Arc<Notify>,
    push: Subscriber,
}

fn subscriptions(session: &Session) -> [usize; 3] {
    [
        session.channels.len(),
        session.patterns.len(),
        session.shard_channels.len(),
    ]
}

/// Which clients CLIENT KILL or CLIENT LIST means.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ClientFilter {
    /// Only these ids (`ID a b ...`); all when empty.
    pub ids: Vec<u64>,
    /// Only this peer address (`ADDR ip:port`).
    pub addr: Option<String>,
    /// Only connections authenticated as this ACL user (`USER name`, ACL DELUSER).
    pub user: Option<String>,
}

impl ClientFilter {
    fn matches(&self, id: u64, row: &ClientRow) -> bool {
        (self.ids.is_empty() || self.ids.contains(&id))
            && self
                .addr
                .as_ref()
                .is_none_or(|a| *a == row.addr.to_string())
            && self.user.as_ref().is_none_or(|u| *u == row.user)
    }
}

/// The connected clients by id.
#[derive(Default)]
pub struct ClientRegistry {
    rows: Mutex<BTreeMap<u64, ClientRow>>,
}

impl ClientRegistry {
    fn rows(&self) -> MutexGuard<'_, BTreeMap<u64, ClientRow>> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a connection; the returned notification fires when CLIENT KILL names it.
    pub fn register(&self, session: &Session) -> Arc<Notify> {
        let kill = Arc::new(Notify::new());
        let row = ClientRow {
            addr: session.addr,
            name: session.name.clone(),
            db_name: session.db_name.clone(),
            protocol: session.protocol,
            user: session.user.clone(),
            subscriptions: subscriptions(session),
            since: Instant::now(),
            kill: Arc::clone(&kill),
            push: session.push.clone(),
        };
        self.rows().insert(session.id, row);
        kill
    }

    /// Forgets a connection that ended.
    pub fn remove(&self, id: u64) {
        self.rows().remove(&id);
    }

    /// Brings a connection's row up to date with its session (name, database, protocol).
    pub fn update(&self, session: &Session) {
        if let Some(row) = self.rows().get_mut(&session.id) {
            row.name.clone_from(&session.name);
            row.db_name.clone_from(&session.db_name);
            row.protocol = session.protocol;
            row.user.clone_from(&session.user);
            row.subscriptions = subscriptions(session);
        }
    }

    /// Client `id`'s push queue and protocol, if it is connected.
    pub fn push_target(&self, id: u64) -> Option<(Subscriber, Protocol)> {
        self.rows()
            .get(&id)
            .map(|row| (row.push.clone(), row.protocol))
    }

    /// Whether client `id` is connected.
    pub fn contains(&self, id: u64) -> bool {
        self.rows().contains_key(&id)
    }

    /// CLIENT LIST's text: one line per matching client, in id order.
    pub fn list(&self, filter: &ClientFilter) -> String {
        let mut out = String::new();
        for (id, row) in self
            .rows()
            .iter()
            .filter(|(id, row)| filter.matches(**id, row))
        {
            let _ = writeln!(
                out,
                "id={id} addr={} name={} age={} db={} sub={} psub={} ssub={} user={} resp={}",
                row.addr,
                String::from_utf8_lossy(row.name.as_deref().unwrap_or_default()),
                row.since.elapsed().as_secs(),
                row.db_name,
                row.subscriptions[0],
                row.subscriptions[1],
                row.subscriptions[2],
                row.user,
                row.protocol.number(),
            );
        }
        out
    }

    /// Closes the matching clients other than `skip`: returns their ids. Each closes
    /// after the request it is running, as in Redis.
    pub fn kill(&self, filter: &ClientFilter, skip: Option<u64>) -> Vec<u64> {
        let rows = self.rows();
        let killed: Vec<u64> = rows
            .iter()
            .filter(|(id, row)| Some(**id) != skip && filter.matches(**id, row))
            .map(|(id, row)| {
                row.kill.notify_one();
                *id
            })
            .collect();
        killed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_list_shows_each_kind_of_subscription() {
        let registry = ClientRegistry::default();
        let (push, _rx, _) = Subscriber::channel();
        let addr = "127.0.0.1:5000".parse().expect("an address");
        let mut session = Session::new(7, addr, push);
        registry.register(&session);
        let all = ClientFilter::default();
        assert!(registry.list(&all).contains(" sub=0 psub=0 ssub=0 "));
        session.channels.extend([b"a".to_vec(), b"b".to_vec()]);
        session.patterns.insert(b"p*".to_vec());
        session
            .shard_channels
            .extend([b"x".to_vec(), b"y".to_vec(), b"z".to_vec()]);
        assert!(registry.list(&all).contains(" sub=0 psub=0 ssub=0 "));
        registry.update(&session);
        assert!(registry.list(&all).contains(" sub=2 psub=1 ssub=3 "));
    }
}
