//! The edge of a stream port: which connections are open, which may be evicted, and why
//! each one closed.
//!
//! A port admits at most `limit` connections. At the limit, a new connection evicts the
//! open connection that has been idle longest — at a frame boundary, nothing buffered, and
//! quiet for at least [`EVICT_AFTER_IDLE`] — instead of waiting in the listen backlog behind
//! it. Only when no connection is idle is the new one refused. This is what keeps 2,000
//! silent connections (a scan, a misbehaving client) from locking every real sender out;
//! connections stuck mid-frame (slowloris) are not evictable but are bounded by the
//! per-frame deadline of the connection loop.
//!
//! Every close is counted once, by [`CloseReason`], when its [`ConnGuard`] is dropped (a
//! [`ConnectionClosed`] event on the port's [`StreamEvents`]).
//! Admission and removal take a short lock (per connection, never per read); a read only
//! stores two atomics.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

use crate::telemetry::events::{
    CloseReason, ConnectionAccepted, ConnectionClosed, ConnectionRefused, StreamEvents,
};
use crate::telemetry::state::Connections;
use crate::telemetry::{InternalEvent, RateLimit};

/// A connection quiet for less than this is a sender between two messages: evicting it would
/// only make it reconnect at once, so it is never chosen.
pub const EVICT_AFTER_IDLE: Duration = Duration::from_secs(1);

impl Connections for Edge {
    fn open(&self) -> usize {
        Edge::open(self)
    }

    fn limit(&self) -> usize {
        Edge::limit(self)
    }
}

/// What one connection shares with the table.
#[derive(Debug)]
struct ConnState {
    /// Milliseconds since the edge's epoch of the last read that returned data (or of the
    /// accept).
    last_active_ms: AtomicU64,
    /// At a frame boundary with nothing buffered: safe to close without cutting a message.
    idle: AtomicBool,
    evict: CancellationToken,
}

/// The connection table and counters of one stream port.
#[derive(Debug)]
pub struct Edge {
    /// Changed by a reload ([`Edge::set_limit`]); the table is kept, so connections of the
    /// port before and after the reload count against one limit.
    limit: AtomicUsize,
    epoch: Instant,
    conns: Mutex<HashMap<u64, Arc<ConnState>>>,
    next_id: AtomicU64,
    open: AtomicUsize,
    events: Arc<StreamEvents>,
}

impl Edge {
    /// An edge whose counts belong to no registry (tests).
    pub fn new(limit: usize) -> Arc<Edge> {
        Edge::with_events(limit, Arc::default())
    }

    /// An edge counting on its port's `events`.
    pub fn with_events(limit: usize, events: Arc<StreamEvents>) -> Arc<Edge> {
        Arc::new(Edge {
            limit: AtomicUsize::new(limit.max(1)),
            epoch: Instant::now(),
            conns: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            open: AtomicUsize::new(0),
            events,
        })
    }

    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// A new connection limit (a reload changed `SC4S_SOURCE_<PROTO>_MAX_CONNECTIONS`). Open
    /// connections above it are not closed; new ones evict idle ones until the port is back
    /// under it.
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit.max(1), Ordering::Relaxed);
    }

    /// Connections admitted and not yet closed.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Connections accepted from the kernel (admitted or refused).
    pub fn accepted(&self) -> u64 {
        self.events.accepted()
    }

    pub fn closed(&self, reason: CloseReason) -> u64 {
        self.events.closed(reason)
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Admits a freshly accepted connection, evicting the longest-idle one at the limit.
    /// `None`: refused (a [`ConnectionRefused`] event: counted as [`CloseReason::Limit`] and
    /// logged, rate-limited); the caller drops the socket.
    pub fn admit(self: &Arc<Self>, peer: SocketAddr) -> Option<ConnGuard> {
        ConnectionAccepted { peer }.emit(&self.events);
        let now = self.now_ms();
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        let limit = self.limit();
        if conns.len() >= limit {
            let quiet_ms = EVICT_AFTER_IDLE.as_millis() as u64;
            let victim = conns
                .iter()
                .filter(|(_, c)| c.idle.load(Ordering::Relaxed))
                .map(|(id, c)| (*id, c.last_active_ms.load(Ordering::Relaxed)))
                .filter(|&(_, t)| now.saturating_sub(t) >= quiet_ms)
                .min_by_key(|&(_, t)| t);
            match victim.and_then(|(id, _)| conns.remove(&id)) {
                // Removed from the table now, so the new connection fits at once and the same
                // victim is not picked twice; its task closes it and counts `evicted`.
                Some(v) => v.evict.cancel(),
                None => {
                    drop(conns);
                    ConnectionRefused { peer, limit }.emit(&self.events);
                    return None;
                }
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState {
            last_active_ms: AtomicU64::new(now),
            idle: AtomicBool::new(true),
            evict: CancellationToken::new(),
        });
        conns.insert(id, state.clone());
        self.open.store(conns.len(), Ordering::Relaxed);
        drop(conns);
        Some(ConnGuard {
            edge: self.clone(),
            id,
            state,
            reason: CloseReason::Shutdown,
        })
    }

    fn remove(&self, id: u64, reason: CloseReason) {
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        conns.remove(&id);
        self.open.store(conns.len(), Ordering::Relaxed);
        drop(conns);
        ConnectionClosed { reason }.emit(&self.events);
    }
}

/// One admitted connection. Dropping it removes the connection from the table and counts
/// its close reason (set with [`ConnGuard::set_reason`]; `shutdown` if never set).
#[derive(Debug)]
pub struct ConnGuard {
    edge: Arc<Edge>,
    id: u64,
    state: Arc<ConnState>,
    reason: CloseReason,
}

impl ConnGuard {
    /// Records a read that returned data; `idle` when it left nothing buffered at a frame
    /// boundary.
    pub fn touch(&self, idle: bool) {
        self.state
            .last_active_ms
            .store(self.edge.now_ms(), Ordering::Relaxed);
        self.state.idle.store(idle, Ordering::Relaxed);
    }

    /// Marks the connection busy (mid-frame) or idle without counting it as activity.
    pub fn set_idle(&self, idle: bool) {
        self.state.idle.store(idle, Ordering::Relaxed);
    }

    /// Completes when the edge evicted this connection.
    pub fn evicted(&self) -> WaitForCancellationFuture<'_> {
        self.state.evict.cancelled()
    }

    pub fn is_evicted(&self) -> bool {
        self.state.evict.is_cancelled()
    }

    pub fn set_reason(&mut self, reason: CloseReason) {
        self.reason = reason;
    }
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        let reason = if self.state.evict.is_cancelled() && self.reason == CloseReason::Shutdown {
            CloseReason::Evicted
        } else {
            self.reason
        };
        self.edge.remove(self.id, reason);
    }
}

/// One [`RateLimit`] per close reason: a flood of one kind of close (a thousand idle
/// timeouts) must not hide the first line of another (a frame timeout, a TLS error).
#[derive(Debug)]
pub struct CloseLogs {
    limiters: [RateLimit; CloseReason::ALL.len()],
}

impl CloseLogs {
    pub fn new(interval: Duration) -> CloseLogs {
        CloseLogs {
            limiters: std::array::from_fn(|_| RateLimit::new(interval)),
        }
    }

    /// [`RateLimit::allow`] for the lines about `reason`.
    pub fn allow(&self, reason: CloseReason) -> Option<u64> {
        self.limiters[reason.index()].allow()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> SocketAddr {
        "127.0.0.1:40000".parse().unwrap()
    }

    #[test]
    fn below_the_limit_everything_is_admitted_and_counted_at_close() {
        let edge = Edge::new(3);
        let mut a = edge.admit(peer()).unwrap();
        let b = edge.admit(peer()).unwrap();
        assert_eq!(edge.open(), 2);
        a.set_reason(CloseReason::Eof);
        drop(a);
        drop(b);
        assert_eq!(edge.open(), 0);
        assert_eq!(edge.closed(CloseReason::Eof), 1);
        assert_eq!(edge.closed(CloseReason::Shutdown), 1);
        assert_eq!(edge.accepted(), 2);
    }

    #[test]
    fn at_the_limit_the_longest_idle_connection_is_evicted() {
        let edge = Edge::new(2);
        let old = edge.admit(peer()).unwrap();
        let busy = edge.admit(peer()).unwrap();
        // Both look old enough; `busy` is mid-frame.
        old.state.last_active_ms.store(0, Ordering::Relaxed);
        busy.state.last_active_ms.store(0, Ordering::Relaxed);
        busy.set_idle(false);
        std::thread::sleep(EVICT_AFTER_IDLE + Duration::from_millis(20));
        let new = edge.admit(peer()).expect("the idle one makes room");
        assert!(old.is_evicted());
        assert!(!busy.is_evicted());
        assert_eq!(edge.open(), 2);
        drop(old);
        assert_eq!(edge.closed(CloseReason::Evicted), 1);
        assert_eq!(edge.open(), 2, "the evicted one had already left the table");
        drop((busy, new));
    }

    #[test]
    fn at_the_limit_with_nobody_idle_the_new_connection_is_refused() {
        let edge = Edge::new(1);
        let busy = edge.admit(peer()).unwrap();
        busy.set_idle(false);
        assert!(edge.admit(peer()).is_none());
        assert_eq!(edge.closed(CloseReason::Limit), 1);
        // A connection that was active a moment ago is not evicted either.
        busy.touch(true);
        assert!(edge.admit(peer()).is_none());
        assert_eq!(edge.closed(CloseReason::Limit), 2);
        assert_eq!(edge.accepted(), 3);
        drop(busy);
    }

    #[test]
    fn each_close_reason_has_its_own_log_allowance() {
        let l = CloseLogs::new(Duration::from_secs(3600));
        assert_eq!(l.allow(CloseReason::IdleTimeout), Some(0));
        assert_eq!(l.allow(CloseReason::IdleTimeout), None);
        assert_eq!(l.allow(CloseReason::FrameTimeout), Some(0));
    }
}
