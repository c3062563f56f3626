//! What the forwarding outputs do: the syslog relays (`SC4S_DEST_SYSLOG_*`,
//! `SC4S_DEST_BSD_*`) and Kafka. What happened to the events (delivered, refused, handed to
//! the buffer) is one completion per batch ([`super::completion`]); these count the
//! transport's own work: what went out, what failed and why, whether the target is up.
//!
//! | event | counts into | logs |
//! | --- | --- | --- |
//! | [`ForwardSent`] | `sluice_forward_events_total`, `sluice_forward_bytes_total` | trace |
//! | [`ForwardConnected`] | `sluice_forward_up` = 1, `sluice_forward_connections_total` | info the first time and after a failure, else debug |
//! | [`ForwardFailed`] | `sluice_forward_errors_total{kind}`, `sluice_forward_up` = 0 | warn, rate-limited per destination |
//! | [`ForwardFiltered`] | `sluice_forward_filtered_total{reason}` | debug, rate-limited |
//! | [`ForwardRefused`] | `sluice_forward_refused_total{reason}` | error, rate-limited |

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::InternalEvent;
use crate::telemetry::{Label, Metrics, RateLimit};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DestLabels {
    destination: Label,
    output: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    destination: Label,
    output: &'static str,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    destination: Label,
    output: &'static str,
    reason: &'static str,
}

#[derive(Debug, Default)]
pub(crate) struct Families {
    events: Family<DestLabels, Counter>,
    bytes: Family<DestLabels, Counter>,
    connections: Family<DestLabels, Counter>,
    up: Family<DestLabels, Gauge>,
    errors: Family<KindLabels, Counter>,
    filtered: Family<ReasonLabels, Counter>,
    refused: Family<ReasonLabels, Counter>,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families::default();
        r.register(
            "sluice_forward_events",
            "Events a relay wrote to its target or Kafka confirmed, per destination",
            f.events.clone(),
        );
        r.register(
            "sluice_forward_bytes",
            "Bytes of those events as sent (frames and record values), per destination",
            f.bytes.clone(),
        );
        r.register(
            "sluice_forward_connections",
            "Connections a relay opened to its target, or Kafka broker sessions that came up",
            f.connections.clone(),
        );
        r.register(
            "sluice_forward_up",
            "0 after a failure to reach the destination's target (relay) or brokers (Kafka), 1 again once it answers",
            f.up.clone(),
        );
        r.register(
            "sluice_forward_errors",
            "Failures of a relay or Kafka destination, by kind (the batch is retried or buffered)",
            f.errors.clone(),
        );
        r.register(
            "sluice_forward_filtered",
            "Events set aside by a destination's rules: a relay's filter (empty MESSAGE), a Kafka record sent to the fallback topic",
            f.filtered.clone(),
        );
        r.register(
            "sluice_forward_refused",
            "Events refused for good (too large for a datagram, refused by the broker), by reason",
            f.refused.clone(),
        );
        f
    }
}

/// The handles and log allowances of one relay or Kafka destination.
#[derive(Debug)]
pub struct ForwardEvents {
    destination: Label,
    output: &'static str,
    events: Counter,
    bytes: Counter,
    connections: Counter,
    up: Gauge,
    errors: Family<KindLabels, Counter>,
    filtered: Family<ReasonLabels, Counter>,
    refused: Family<ReasonLabels, Counter>,
    failure_logs: RateLimit,
    filtered_logs: RateLimit,
    refused_logs: RateLimit,
    /// Whether the last connection attempt failed (the next success is logged at info).
    down: std::sync::atomic::AtomicBool,
}

impl ForwardEvents {
    /// The handles of destination `name`, whose output is `output` (`syslog`, `bsd`, `kafka`).
    pub fn register(m: &Metrics, name: &str, output: &'static str) -> ForwardEvents {
        let l = DestLabels {
            destination: Label::new(name),
            output,
        };
        let f = &m.forward;
        // Up until something fails: a relay connects on its first batch.
        f.up.get_or_create(&l).set(1);
        ForwardEvents {
            destination: l.destination.clone(),
            output,
            events: f.events.get_or_create(&l).clone(),
            bytes: f.bytes.get_or_create(&l).clone(),
            connections: f.connections.get_or_create(&l).clone(),
            up: f.up.get_or_create(&l).clone(),
            errors: f.errors.clone(),
            filtered: f.filtered.clone(),
            refused: f.refused.clone(),
            failure_logs: RateLimit::default(),
            filtered_logs: RateLimit::default(),
            refused_logs: RateLimit::default(),
            down: std::sync::atomic::AtomicBool::new(true),
        }
    }

    pub fn name(&self) -> &str {
        self.destination.as_str()
    }

    pub fn events(&self) -> u64 {
        self.events.get()
    }

    pub fn is_up(&self) -> bool {
        self.up.get() == 1
    }

    /// Errors of `kind` so far.
    pub fn errors(&self, kind: &'static str) -> u64 {
        self.errors
            .get_or_create(&KindLabels {
                destination: self.destination.clone(),
                output: self.output,
                kind,
            })
            .get()
    }

    /// Events refused for `reason` so far.
    pub fn refused(&self, reason: &'static str) -> u64 {
        self.refused
            .get_or_create(&ReasonLabels {
                destination: self.destination.clone(),
                output: self.output,
                reason,
            })
            .get()
    }

    /// Events filtered for `reason` so far.
    pub fn filtered(&self, reason: &'static str) -> u64 {
        self.filtered
            .get_or_create(&ReasonLabels {
                destination: self.destination.clone(),
                output: self.output,
                reason,
            })
            .get()
    }
}

/// `/health` reads a relay or Kafka destination as up or not; the cause is in the errors
/// counted by kind and in the log.
impl crate::telemetry::state::OutputState for ForwardEvents {
    fn problem(&self) -> Option<crate::telemetry::state::Problem> {
        (!self.is_up()).then_some(crate::telemetry::state::Problem {
            what: if self.output == "kafka" {
                "cannot deliver to the Kafka brokers"
            } else {
                "cannot deliver to the relay target"
            },
            reason: None,
            hint: Some("see sluice_forward_errors_total"),
        })
    }
}

/// Events went out: written to a relay's socket, or confirmed by Kafka.
#[derive(Debug)]
pub struct ForwardSent {
    pub events: u64,
    pub bytes: u64,
}

impl InternalEvent for ForwardSent {
    type Handle = ForwardEvents;

    fn emit(self, h: &ForwardEvents) {
        h.events.inc_by(self.events);
        h.bytes.inc_by(self.bytes);
        tracing::trace!(destination = h.name(), events = self.events, "forwarded");
    }
}

/// A connection to the target is up (a relay connected, a Kafka broker answered).
#[derive(Debug)]
pub struct ForwardConnected<'a> {
    pub peer: &'a str,
}

impl InternalEvent for ForwardConnected<'_> {
    type Handle = ForwardEvents;

    fn emit(self, h: &ForwardEvents) {
        h.connections.inc();
        h.up.set(1);
        if h.down.swap(false, std::sync::atomic::Ordering::Relaxed) {
            tracing::info!(destination = h.name(), peer = self.peer, "connected");
        } else {
            tracing::debug!(destination = h.name(), peer = self.peer, "connected");
        }
    }
}

/// A relay or Kafka destination failed; the batch is retried after `retry_in` (or handed to
/// the disk buffer).
#[derive(Debug)]
pub struct ForwardFailed<'a> {
    /// `resolve`, `connect`, `tls`, `write`, `timeout`, or a Kafka error class.
    pub kind: &'static str,
    pub error: &'a str,
    pub events: u32,
    pub retry_in: std::time::Duration,
}

impl InternalEvent for ForwardFailed<'_> {
    type Handle = ForwardEvents;

    fn emit(self, h: &ForwardEvents) {
        h.errors
            .get_or_create(&KindLabels {
                destination: h.destination.clone(),
                output: h.output,
                kind: self.kind,
            })
            .inc();
        h.up.set(0);
        h.down.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(suppressed) = h.failure_logs.allow() {
            tracing::warn!(
                destination = h.name(),
                kind = self.kind,
                error = self.error,
                events = self.events,
                suppressed,
                "forwarding failed; the batch is kept and retried in {:?}",
                self.retry_in
            );
        }
    }
}

/// Events a relay's filter did not send.
#[derive(Debug)]
pub struct ForwardFiltered {
    pub events: u64,
    pub reason: &'static str,
}

impl InternalEvent for ForwardFiltered {
    type Handle = ForwardEvents;

    fn emit(self, h: &ForwardEvents) {
        if self.events == 0 {
            return;
        }
        h.filtered
            .get_or_create(&ReasonLabels {
                destination: h.destination.clone(),
                output: h.output,
                reason: self.reason,
            })
            .inc_by(self.events);
        if let Some(suppressed) = h.filtered_logs.allow() {
            tracing::debug!(
                destination = h.name(),
                events = self.events,
                reason = self.reason,
                suppressed,
                "events filtered out of this destination"
            );
        }
    }
}

/// Events refused for good (they complete as rejected; Kafka's go to its dead-letter file).
#[derive(Debug)]
pub struct ForwardRefused<'a> {
    pub events: u64,
    pub reason: &'static str,
    pub detail: &'a str,
}

impl InternalEvent for ForwardRefused<'_> {
    type Handle = ForwardEvents;

    fn emit(self, h: &ForwardEvents) {
        h.refused
            .get_or_create(&ReasonLabels {
                destination: h.destination.clone(),
                output: h.output,
                reason: self.reason,
            })
            .inc_by(self.events);
        if let Some(suppressed) = h.refused_logs.allow() {
            tracing::error!(
                destination = h.name(),
                events = self.events,
                reason = self.reason,
                detail = self.detail,
                suppressed,
                "events refused for good"
            );
        }
    }
}
