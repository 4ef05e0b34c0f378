//! Server-assisted client-side caching (CLIENT TRACKING), as Redis 7.0 offers it.
//!
//! A tracking client's reads remember their keys here; a later write of a remembered key,
//! from any client, sends each client that read it one `invalidate` message and forgets the
//! key, so the client may cache the value until then. In broadcasting mode (BCAST) nothing
//! is remembered: every written key under one of the client's prefixes is announced.
//! Messages go to the client itself over RESP3, or to the client it redirects them to, as a
//! RESP3 push or, to a RESP2 client subscribed to `__redis__:invalidate`, as a pub/sub
//! message. Keys are tracked by name across databases, as in Redis.
//!
//! docdb expires keys by reading past their TTL rather than by deleting them, so a key read
//! with a TTL is also remembered with its expiry, and invalidated once that passes.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::clients::ClientRegistry;
use crate::frame::{Frame, Protocol};
use crate::pubsub::Broker;

/// At most this many keys are remembered (Redis's `tracking-table-max-keys` default);
/// past it, keys are invalidated (so clients drop them) and forgotten.
pub const MAX_KEYS: usize = 1_000_000;

/// The pub/sub channel RESP2 clients receive redirected invalidations on.
pub const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

/// A client's tracking options (CLIENT TRACKING ON ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrackingMode {
    /// The client that receives this one's invalidations (REDIRECT).
    pub redirect: Option<u64>,
    /// Announce every written key under `prefixes` instead of remembering reads.
    pub bcast: bool,
    /// BCAST's prefixes (none: every key).
    pub prefixes: Vec<Vec<u8>>,
    /// Remember a read only right after CLIENT CACHING YES.
    pub optin: bool,
    /// Remember every read except right after CLIENT CACHING NO.
    pub optout: bool,
    /// No messages about the client's own writes.
    pub noloop: bool,
}

#[derive(Default)]
struct State {
    modes: HashMap<u64, TrackingMode>,
    /// Key name → the clients that may cache it.
    keys: HashMap<Vec<u8>, HashSet<u64>>,
    /// Remembered keys with a TTL, soonest expiry (physical µs) first.
    expiring: BinaryHeap<Reverse<(u64, Vec<u8>)>>,
}

/// Every tracking client and what they may cache.
#[derive(Default)]
pub struct Tracking {
    /// Tracking clients: zero keeps every command's check to one load.
    clients: AtomicUsize,
    state: Mutex<State>,
}

/// Where messages go: the registry of connections and the pub/sub broker.
pub struct Outlets<'a> {
    /// Connections' push queues and protocols.
    pub registry: &'a ClientRegistry,
    /// Subscriptions to [`INVALIDATE_CHANNEL`].
    pub broker: &'a Broker,
}

impl Tracking {
    /// Whether any client tracks.
    pub fn is_active(&self) -> bool {
        self.clients() > 0
    }

    /// How many clients track (INFO's `tracking_clients`).
    pub fn clients(&self) -> usize {
        self.clients.load(Ordering::Relaxed)
    }

    /// Turns tracking on (or changes its options) for client `id`.
    pub fn enable(&self, id: u64, mode: TrackingMode) {
        let mut state = self.lock();
        state.modes.insert(id, mode);
        self.clients.store(state.modes.len(), Ordering::Relaxed);
    }

    /// Turns tracking off for client `id` (CLIENT TRACKING OFF, or it went away). Keys it
    /// read stay remembered until written, as in Redis; messages to it are then dropped.
    pub fn disable(&self, id: u64) {
        let mut state = self.lock();
        if state.modes.remove(&id).is_some() {
            self.clients.store(state.modes.len(), Ordering::Relaxed);
        }
    }

    /// Remembers that client `id` read `key`, which expires at `expires_at` (physical µs)
    /// if it has a TTL.
    pub fn remember(&self, id: u64, key: &[u8], expires_at: Option<u64>) {
        let mut state = self.lock();
        let readers = state.keys.entry(key.to_vec()).or_default();
        let first = readers.is_empty();
        readers.insert(id);
        // One expiry per remembered key: a key already remembered has its own.
        if let (true, Some(at)) = (first, expires_at) {
            state.expiring.push(Reverse((at, key.to_vec())));
        }
    }

    /// Announces that client `writer` wrote `keys`.
    pub fn invalidate<'k>(
        &self,
        writer: u64,
        keys: impl IntoIterator<Item = &'k [u8]>,
        out: &Outlets<'_>,
    ) {
        if !self.is_active() {
            return;
        }
        let mut state = self.lock();
        for key in keys {
            let readers = state.keys.remove(key).unwrap_or_default();
            let modes = &state.modes;
            for (&id, mode) in modes {
                let told = if mode.bcast {
                    mode.prefixes.is_empty() || mode.prefixes.iter().any(|p| key.starts_with(p))
                } else {
                    readers.contains(&id)
                };
                if told && !(mode.noloop && id == writer) {
                    send(id, mode, Frame::Array(vec![Frame::Bulk(key.to_vec())]), out);
                }
            }
        }
    }

    /// FLUSHDB and FLUSHALL: every tracking client is told to drop everything (a null key
    /// list), and nothing stays remembered.
    pub fn invalidate_all(&self, out: &Outlets<'_>) {
        let mut state = self.lock();
        state.keys.clear();
        state.expiring.clear();
        for (&id, mode) in &state.modes {
            send(id, mode, Frame::Null, out);
        }
    }

    /// Invalidates the remembered keys whose TTL has passed by `now` (physical µs), and
    /// keys beyond [`MAX_KEYS`].
    pub fn expire(&self, now: u64, out: &Outlets<'_>) {
        let due = {
            let mut state = self.lock();
            let mut due = Vec::new();
            while state
                .expiring
                .peek()
                .is_some_and(|Reverse((at, _))| *at <= now)
            {
                if let Some(Reverse((_, key))) = state.expiring.pop() {
                    due.push(key);
                }
            }
            let excess = state.keys.len().saturating_sub(MAX_KEYS);
            due.extend(state.keys.keys().take(excess).cloned());
            if state.expiring.len() > 2 * MAX_KEYS {
                // Expiries of keys invalidated since: keep those still remembered.
                let State { keys, expiring, .. } = &mut *state;
                expiring.retain(|Reverse((_, key))| keys.contains_key(key));
            }
            due
        };
        if !due.is_empty() {
            // Expiry is nobody's write: no client is spared by NOLOOP.
            self.invalidate(0, due.iter().map(Vec::as_slice), out);
        }
    }

    /// How many keys are remembered (INFO's `tracking_total_keys`).
    pub fn remembered_keys(&self) -> usize {
        self.lock().keys.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Sends one `invalidate` message (`keys`: an array of names, or null for everything) to
/// where client `id`'s messages go. A RESP2 client can take messages only as a redirect
/// target subscribed to [`INVALIDATE_CHANNEL`]; otherwise the message is dropped, as Redis
/// drops it.
fn send(id: u64, mode: &TrackingMode, keys: Frame, out: &Outlets<'_>) {
    let target = mode.redirect.unwrap_or(id);
    let Some((push, protocol)) = out.registry.push_target(target) else {
        return;
    };
    let frame = if protocol == Protocol::Resp3 {
        Frame::Push(vec![Frame::Bulk(b"invalidate".to_vec()), keys])
    } else if mode.redirect.is_some() && out.broker.is_subscribed(target, INVALIDATE_CHANNEL) {
        Frame::Push(vec![
            Frame::Bulk(b"message".to_vec()),
            Frame::Bulk(INVALIDATE_CHANNEL.to_vec()),
            keys,
        ])
    } else {
        return;
    };
    push.push(frame);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pubsub::Subscriber;
    use crate::session::Session;

    /// A registry with client `id` connected over `protocol`, and its push queue.
    fn connected(
        registry: &ClientRegistry,
        id: u64,
        protocol: Protocol,
    ) -> tokio::sync::mpsc::Receiver<Frame> {
        let (push, pushed, _) = Subscriber::channel();
        let addr = "127.0.0.1:1".parse().expect("an address");
        let mut session = Session::new(id, addr, push);
        session.protocol = protocol;
        registry.register(&session);
        pushed
    }

    fn invalidated(keys: &[&str]) -> Frame {
        Frame::Push(vec![
            Frame::Bulk(b"invalidate".to_vec()),
            Frame::Array(
                keys.iter()
                    .map(|k| Frame::Bulk(k.as_bytes().to_vec()))
                    .collect(),
            ),
        ])
    }

    #[test]
    fn expired_and_excess_keys_are_invalidated_once() {
        let (registry, broker) = (ClientRegistry::default(), Broker::default());
        let out = Outlets {
            registry: &registry,
            broker: &broker,
        };
        let mut pushed = connected(&registry, 7, Protocol::Resp3);
        let tracking = Tracking::default();
        tracking.enable(7, TrackingMode::default());
        tracking.remember(7, b"soon", Some(100));
        tracking.remember(7, b"soon", Some(100));
        tracking.remember(7, b"later", Some(500));
        tracking.remember(7, b"never", None);
        tracking.expire(99, &out);
        assert!(pushed.try_recv().is_err(), "nothing is due before 100");
        tracking.expire(100, &out);
        assert_eq!(pushed.try_recv().ok(), Some(invalidated(&["soon"])));
        assert!(pushed.try_recv().is_err(), "one expiry per remembered key");
        assert_eq!(tracking.remembered_keys(), 2);
        tracking.invalidate(1, [&b"later"[..]], &out);
        assert_eq!(pushed.try_recv().ok(), Some(invalidated(&["later"])));
        tracking.expire(1_000, &out);
        assert!(
            pushed.try_recv().is_err(),
            "an invalidated key does not expire again"
        );
        tracking.disable(7);
        assert!(!tracking.is_active());
    }
}
