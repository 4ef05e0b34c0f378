//! Publish/subscribe and MONITOR: who gets which messages.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::frame::Frame;
use crate::glob;

/// Messages a slow subscriber may have queued before it is disconnected (Redis's
/// `client-output-buffer-limit pubsub`, counted in messages).
pub const PUSH_QUEUE: usize = 65_536;

/// The sending half of a connection's push queue.
#[derive(Debug, Clone)]
pub struct Subscriber {
    tx: mpsc::Sender<Frame>,
    overflowed: Arc<AtomicBool>,
}

impl Subscriber {
    /// A push queue: the subscriber (for the broker) and the receiver (for the connection).
    pub fn channel() -> (Subscriber, mpsc::Receiver<Frame>, Arc<AtomicBool>) {
        let (tx, rx) = mpsc::channel(PUSH_QUEUE);
        let overflowed = Arc::new(AtomicBool::new(false));
        (
            Subscriber {
                tx,
                overflowed: overflowed.clone(),
            },
            rx,
            overflowed,
        )
    }

    /// Queues a message; a full queue marks the connection for closing instead.
    pub(crate) fn push(&self, frame: Frame) -> bool {
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.overflowed.store(true, Ordering::SeqCst);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

type Subscribers = HashMap<u64, Subscriber>;

/// The channels of `subscribed` matching `pattern` (all without one), sorted.
fn names_matching(
    subscribed: &HashMap<Vec<u8>, Subscribers>,
    pattern: Option<&[u8]>,
) -> Vec<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = subscribed
        .keys()
        .filter(|c| pattern.is_none_or(|p| glob::matches(p, c)))
        .cloned()
        .collect();
    names.sort();
    names
}

#[derive(Default)]
struct State {
    channels: HashMap<Vec<u8>, Subscribers>,
    patterns: HashMap<Vec<u8>, Subscribers>,
    /// Shard channels (SSUBSCRIBE): a namespace of their own, apart from `channels`.
    shard_channels: HashMap<Vec<u8>, Subscribers>,
    monitors: Subscribers,
}

/// Channel and pattern subscriptions and MONITOR clients.
#[derive(Default)]
pub struct Broker {
    state: Mutex<State>,
    monitors: AtomicUsize,
}

impl Broker {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Subscribes client `id` to `channel` (or a pattern).
    pub fn subscribe(&self, id: u64, name: &[u8], pattern: bool, sub: &Subscriber) {
        let mut state = self.state();
        let map = if pattern {
            &mut state.patterns
        } else {
            &mut state.channels
        };
        map.entry(name.to_vec())
            .or_default()
            .insert(id, sub.clone());
    }

    /// Unsubscribes client `id` from `channel` (or a pattern).
    pub fn unsubscribe(&self, id: u64, name: &[u8], pattern: bool) {
        let mut state = self.state();
        let map = if pattern {
            &mut state.patterns
        } else {
            &mut state.channels
        };
        if let Some(subs) = map.get_mut(name) {
            subs.remove(&id);
            if subs.is_empty() {
                map.remove(name);
            }
        }
    }

    /// Sends `message` to `channel`'s subscribers and matching patterns'; returns how many
    /// received it.
    pub fn publish(&self, channel: &[u8], message: &[u8]) -> i64 {
        let state = self.state();
        let mut receivers = 0;
        if let Some(subs) = state.channels.get(channel) {
            for sub in subs.values() {
                let frame = Frame::Push(vec![
                    Frame::Bulk(b"message".to_vec()),
                    Frame::Bulk(channel.to_vec()),
                    Frame::Bulk(message.to_vec()),
                ]);
                receivers += i64::from(sub.push(frame));
            }
        }
        for (pattern, subs) in &state.patterns {
            if !glob::matches(pattern, channel) {
                continue;
            }
            for sub in subs.values() {
                let frame = Frame::Push(vec![
                    Frame::Bulk(b"pmessage".to_vec()),
                    Frame::Bulk(pattern.clone()),
                    Frame::Bulk(channel.to_vec()),
                    Frame::Bulk(message.to_vec()),
                ]);
                receivers += i64::from(sub.push(frame));
            }
        }
        receivers
    }

    /// Whether client `id` is subscribed to `channel`.
    pub fn is_subscribed(&self, id: u64, channel: &[u8]) -> bool {
        self.state()
            .channels
            .get(channel)
            .is_some_and(|subs| subs.contains_key(&id))
    }

    /// Channels with subscribers, matching `pattern` if given (PUBSUB CHANNELS).
    pub fn channels(&self, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        names_matching(&self.state().channels, pattern)
    }

    /// Subscribers of `channel` (PUBSUB NUMSUB).
    pub fn num_subscribers(&self, channel: &[u8]) -> i64 {
        self.state()
            .channels
            .get(channel)
            .map_or(0, |s| s.len() as i64)
    }

    /// Patterns subscribed to, each counted once however many clients share it (PUBSUB
    /// NUMPAT, INFO's `pubsub_patterns`: Redis 7.0 counts its pattern dictionary).
    pub fn num_patterns(&self) -> i64 {
        self.state().patterns.len() as i64
    }

    /// Ordinary channels and shard channels with subscribers (INFO's `pubsub_channels`
    /// and `pubsubshard_channels`).
    pub fn num_channels(&self) -> (usize, usize) {
        let state = self.state();
        (state.channels.len(), state.shard_channels.len())
    }

    /// Subscribes client `id` to shard channel `channel` (SSUBSCRIBE).
    pub fn subscribe_shard(&self, id: u64, channel: &[u8], sub: &Subscriber) {
        self.state()
            .shard_channels
            .entry(channel.to_vec())
            .or_default()
            .insert(id, sub.clone());
    }

    /// Unsubscribes client `id` from shard channel `channel` (SUNSUBSCRIBE).
    pub fn unsubscribe_shard(&self, id: u64, channel: &[u8]) {
        let mut state = self.state();
        if let Some(subs) = state.shard_channels.get_mut(channel) {
            subs.remove(&id);
            if subs.is_empty() {
                state.shard_channels.remove(channel);
            }
        }
    }

    /// Sends `message` to shard channel `channel`'s subscribers as an `smessage` (no
    /// pattern sees it); returns how many received it (SPUBLISH).
    pub fn publish_shard(&self, channel: &[u8], message: &[u8]) -> i64 {
        let state = self.state();
        let Some(subs) = state.shard_channels.get(channel) else {
            return 0;
        };
        let mut receivers = 0;
        for sub in subs.values() {
            let frame = Frame::Push(vec![
                Frame::Bulk(b"smessage".to_vec()),
                Frame::Bulk(channel.to_vec()),
                Frame::Bulk(message.to_vec()),
            ]);
            receivers += i64::from(sub.push(frame));
        }
        receivers
    }

    /// Shard channels with subscribers, matching `pattern` if given, sorted (PUBSUB
    /// SHARDCHANNELS).
    pub fn shard_channels(&self, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        names_matching(&self.state().shard_channels, pattern)
    }

    /// Subscribers of shard channel `channel` (PUBSUB SHARDNUMSUB).
    pub fn num_shard_subscribers(&self, channel: &[u8]) -> i64 {
        self.state()
            .shard_channels
            .get(channel)
            .map_or(0, |s| s.len() as i64)
    }

    /// Makes client `id` a MONITOR.
    pub fn add_monitor(&self, id: u64, sub: &Subscriber) {
        self.state().monitors.insert(id, sub.clone());
        self.monitors.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether anyone monitors (cheap check before formatting a line).
    pub fn has_monitors(&self) -> bool {
        self.monitors.load(Ordering::Relaxed) > 0
    }

    /// Sends a MONITOR line to every monitor.
    pub fn feed_monitors(&self, line: &str) {
        let state = self.state();
        for sub in state.monitors.values() {
            sub.push(Frame::Simple(line.to_string()));
        }
    }

    /// Forgets everything about client `id` (it disconnected).
    pub fn remove_client(&self, id: u64) {
        let mut guard = self.state();
        let state = &mut *guard;
        for map in [
            &mut state.channels,
            &mut state.patterns,
            &mut state.shard_channels,
        ] {
            map.retain(|_, subs| {
                subs.remove(&id);
                !subs.is_empty()
            });
        }
        if state.monitors.remove(&id).is_some() {
            self.monitors.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
