//! What stream ports (TCP, RFC 6587, TLS, RFC 5425) count: connections accepted, refused and
//! closed by reason, `accept()` failures, and notable frames.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use sluice_proto::framing::FramingStats;

use super::InternalEvent;
use crate::telemetry::{Label, Metrics, RateLimit};

/// Why a stream connection ended. Every close has exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The sender closed the connection.
    Eof,
    /// Nothing arrived for `idle_timeout` after the last complete frame.
    IdleTimeout,
    /// A frame did not complete within `frame_timeout` of its first byte; what arrived was
    /// delivered as a partial frame.
    FrameTimeout,
    /// Nothing at all arrived within `frame_timeout` of the accept (or of the handshake).
    NoData,
    /// Closed to admit a new connection at the limit (this one was the idle one).
    Evicted,
    /// Refused at the limit: every open connection was busy.
    Limit,
    /// The TLS handshake failed (the reason is counted by the TLS endpoint).
    TlsHandshake,
    /// A TLS error after the handshake (a corrupt record, a bad MAC).
    TlsError,
    /// The PROXY protocol header was missing or malformed.
    ProxyHeader,
    /// TCP keepalive found the peer gone: a half-open connection whose sender vanished
    /// without a FIN or RST (powered off, unplugged, a firewall dropped the flow).
    DeadPeer,
    /// A socket error (reset, ...).
    ReadError,
    /// sluice is stopping.
    Shutdown,
}

impl CloseReason {
    pub const ALL: [CloseReason; 12] = [
        CloseReason::Eof,
        CloseReason::IdleTimeout,
        CloseReason::FrameTimeout,
        CloseReason::NoData,
        CloseReason::Evicted,
        CloseReason::Limit,
        CloseReason::TlsHandshake,
        CloseReason::TlsError,
        CloseReason::ProxyHeader,
        CloseReason::DeadPeer,
        CloseReason::ReadError,
        CloseReason::Shutdown,
    ];

    pub fn label(self) -> &'static str {
        match self {
            CloseReason::Eof => "eof",
            CloseReason::IdleTimeout => "idle_timeout",
            CloseReason::FrameTimeout => "frame_timeout",
            CloseReason::NoData => "no_data",
            CloseReason::Evicted => "evicted",
            CloseReason::Limit => "limit",
            CloseReason::TlsHandshake => "tls_handshake",
            CloseReason::TlsError => "tls_error",
            CloseReason::ProxyHeader => "proxy_header",
            CloseReason::DeadPeer => "dead_peer",
            CloseReason::ReadError => "read_error",
            CloseReason::Shutdown => "shutdown",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// One stream port.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PortLabels {
    pub listener: Label,
    pub transport: &'static str,
    pub port: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CloseLabels {
    #[prometheus(flatten)]
    port: PortLabels,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FrameLabels {
    #[prometheus(flatten)]
    port: PortLabels,
    kind: &'static str,
}

/// The `kind` of `sluice_tcp_frames_total`, in [`StreamEvents::frames`] order.
const FRAME_KINDS: [&str; 4] = ["octet_counted", "partial", "truncated", "empty_line"];

#[derive(Debug)]
pub(crate) struct Families {
    accepted: Family<PortLabels, Counter>,
    closed: Family<CloseLabels, Counter>,
    accept_errors: Family<PortLabels, Counter>,
    frames: Family<FrameLabels, Counter>,
    discarded_bytes: Family<PortLabels, Counter>,
    handles: Mutex<HashMap<PortLabels, Arc<StreamEvents>>>,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families {
            accepted: Family::default(),
            closed: Family::default(),
            accept_errors: Family::default(),
            frames: Family::default(),
            discarded_bytes: Family::default(),
            handles: Mutex::default(),
        };
        r.register(
            "sluice_tcp_connections",
            "Connections accepted from the kernel (admitted or refused at the limit)",
            f.accepted.clone(),
        );
        r.register(
            "sluice_tcp_closed",
            "Closed stream connections by reason: eof (the sender closed), idle_timeout, \
             frame_timeout (partial frame delivered), no_data (nothing sent before the \
             deadline), evicted (idle, to admit a new one at the limit), limit (refused), \
             tls_handshake, tls_error, proxy_header, dead_peer (TCP keepalive found a half-open \
             connection), read_error, shutdown",
            f.closed.clone(),
        );
        r.register(
            "sluice_tcp_accept_errors",
            "accept() failures (EMFILE: raise the open-file limit)",
            f.accept_errors.clone(),
        );
        r.register(
            "sluice_tcp_frames",
            "Notable stream frames: octet-counted, partial (delivered at close/timeout), \
             truncated; and skipped empty lines",
            f.frames.clone(),
        );
        r.register(
            "sluice_tcp_discarded_bytes",
            "Bytes beyond max_message_size skipped after a truncated frame",
            f.discarded_bytes.clone(),
        );
        f
    }
}

/// The metric handles and log allowances of one stream port, shared by its listener task,
/// its connection table (the stream edge) and its connections. `Default` gives handles
/// that belong to no registry (tests).
#[derive(Debug, Default)]
pub struct StreamEvents {
    port: u16,
    accepted: Counter,
    closed: [Counter; CloseReason::ALL.len()],
    accept_errors: Counter,
    /// [`FRAME_KINDS`] order.
    frames: [Counter; 4],
    discarded_bytes: Counter,
    accept_logs: RateLimit,
    refusal_logs: RateLimit,
    accept_error_logs: RateLimit,
    truncation_logs: RateLimit,
    close_logs: [RateLimit; CloseReason::ALL.len()],
}

impl StreamEvents {
    /// The handles of port `port` in `m` (the same ones for the same labels, so a listener
    /// replaced by a reload continues its counters).
    pub fn register(
        m: &Metrics,
        listener: &str,
        transport: &'static str,
        port: u16,
    ) -> Arc<StreamEvents> {
        let labels = PortLabels {
            listener: Label::new(listener),
            transport,
            port: port.to_string(),
        };
        let f = &m.stream;
        let mut handles = f.handles.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = handles.get(&labels) {
            return h.clone();
        }
        let h = Arc::new(StreamEvents {
            port,
            accepted: f.accepted.get_or_create_owned(&labels),
            closed: CloseReason::ALL.map(|r| {
                f.closed.get_or_create_owned(&CloseLabels {
                    port: labels.clone(),
                    reason: r.label(),
                })
            }),
            accept_errors: f.accept_errors.get_or_create_owned(&labels),
            frames: FRAME_KINDS.map(|kind| {
                f.frames.get_or_create_owned(&FrameLabels {
                    port: labels.clone(),
                    kind,
                })
            }),
            discarded_bytes: f.discarded_bytes.get_or_create_owned(&labels),
            ..StreamEvents::default()
        });
        handles.insert(labels, h.clone());
        h
    }

    /// Connections accepted from the kernel (admitted or refused).
    pub fn accepted(&self) -> u64 {
        self.accepted.get()
    }

    pub fn closed(&self, reason: CloseReason) -> u64 {
        self.closed[reason as usize].get()
    }

    pub fn accept_errors(&self) -> u64 {
        self.accept_errors.get()
    }

    /// Adds what the decoder counted since `before` and moves `before` up to `now`.
    pub fn add_framing(&self, now: FramingStats, before: &mut FramingStats) {
        FramesRead { now, before }.emit(self);
    }
}

/// The kernel handed over a new connection (it may still be refused at the limit).
#[derive(Debug)]
pub struct ConnectionAccepted {
    pub peer: SocketAddr,
}

impl InternalEvent for ConnectionAccepted {
    type Handle = StreamEvents;

    fn emit(self, h: &StreamEvents) {
        h.accepted.inc();
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Some(suppressed) = h.accept_logs.allow()
        {
            tracing::debug!(port = h.port, peer = %self.peer, suppressed, "connection accepted");
        }
    }
}

/// A new connection was refused: the port is at its limit and no open connection is idle.
#[derive(Debug)]
pub struct ConnectionRefused {
    pub peer: SocketAddr,
    pub limit: usize,
}

impl InternalEvent for ConnectionRefused {
    type Handle = StreamEvents;

    fn emit(self, h: &StreamEvents) {
        h.closed[CloseReason::Limit as usize].inc();
        if let Some(suppressed) = h.refusal_logs.allow() {
            tracing::warn!(
                port = h.port,
                peer = %self.peer,
                limit = self.limit,
                suppressed,
                "connection refused: the port is at its connection limit and no open \
                 connection is idle; raise SC4S_SOURCE_<PROTO>_MAX_CONNECTIONS if these are \
                 real senders"
            );
        }
    }
}

/// An admitted connection ended, for `reason`. (The warnings that explain unusual closes
/// with their context are logged where the context is, in the connection loop.)
#[derive(Debug)]
pub struct ConnectionClosed {
    pub reason: CloseReason,
}

impl InternalEvent for ConnectionClosed {
    type Handle = StreamEvents;

    fn emit(self, h: &StreamEvents) {
        h.closed[self.reason as usize].inc();
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Some(suppressed) = h.close_logs[self.reason as usize].allow()
        {
            tracing::debug!(
                port = h.port,
                reason = self.reason.label(),
                suppressed,
                "connection closed"
            );
        }
    }
}

/// `accept()` failed (EMFILE and friends).
#[derive(Debug)]
pub struct AcceptFailed<'a> {
    pub error: &'a std::io::Error,
}

impl InternalEvent for AcceptFailed<'_> {
    type Handle = StreamEvents;

    fn emit(self, h: &StreamEvents) {
        h.accept_errors.inc();
        if let Some(suppressed) = h.accept_error_logs.allow() {
            tracing::warn!(port = h.port, error = %self.error, suppressed, "accept failed");
        }
    }
}

/// The framing counts of a connection moved from `before` to `now` (once per read).
#[derive(Debug)]
pub struct FramesRead<'a> {
    pub now: FramingStats,
    pub before: &'a mut FramingStats,
}

impl InternalEvent for FramesRead<'_> {
    type Handle = StreamEvents;

    fn emit(self, h: &StreamEvents) {
        let (now, before) = (self.now, self.before);
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let deltas = [
            d(now.octet_counted, before.octet_counted),
            d(now.partial, before.partial),
            d(now.truncated, before.truncated),
            d(now.empty_lines, before.empty_lines),
        ];
        for (c, n) in h.frames.iter().zip(deltas) {
            if n > 0 {
                c.inc_by(n);
            }
        }
        let discarded = d(now.discarded_bytes, before.discarded_bytes);
        if discarded > 0 {
            h.discarded_bytes.inc_by(discarded);
        }
        if deltas[2] > 0
            && tracing::enabled!(tracing::Level::DEBUG)
            && let Some(suppressed) = h.truncation_logs.allow()
        {
            tracing::debug!(
                port = h.port,
                truncated = deltas[2],
                discarded_bytes = discarded,
                suppressed,
                "frames longer than max_message_size were truncated"
            );
        }
        *before = now;
    }
}
