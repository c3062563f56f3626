//! What outputs count about themselves: HEC requests, retries and bytes; failed writes of the
//! file output. (What happened to the events — delivered, refused, given up — is counted once
//! per batch by its destination's completion sink, `output::DestinationStats`.)
//!
//! The HEC client (`sluice-hec`, a library with no knowledge of the daemon's telemetry) keeps
//! its own atomics, [`sluice_hec::HecStats`]. [`HecBridge`] turns what they counted since the
//! last look into these events at every scrape, so the families below stay the only
//! declaration of `sluice_retried_total` and `sluice_hec_requests_total`.

use std::sync::{Arc, Mutex};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use sluice_hec::{HecStats, HecStatsSnapshot};

use super::InternalEvent;
use crate::telemetry::{Metrics, RateLimit};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Debug, Default)]
pub(crate) struct Families {
    retried: Family<ReasonLabels, Counter>,
    retried_requests: Family<ReasonLabels, Counter>,
    hec_requests: Family<OutcomeLabels, Counter>,
    hec_bytes: Family<KindLabels, Counter>,
    write_errors: Counter,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families::default();
        r.register(
            "sluice_retried",
            "Events whose HEC request was retried, by reason",
            f.retried.clone(),
        );
        r.register(
            "sluice_retried_requests",
            "HEC requests retried, by reason",
            f.retried_requests.clone(),
        );
        r.register(
            "sluice_hec_requests",
            "HEC requests by outcome",
            f.hec_requests.clone(),
        );
        r.register(
            "sluice_hec_bytes",
            "HEC request body bytes (raw: before compression; sent: on the wire)",
            f.hec_bytes.clone(),
        );
        r.register(
            "sluice_output_write_errors",
            "Failed writes to the output file (the batch is kept and retried)",
            f.write_errors.clone(),
        );
        f
    }
}

/// The handles and log allowances of one output (`hec` or `file`).
#[derive(Debug, Default)]
pub struct DeliveryEvents {
    output: &'static str,
    write_errors: Counter,
    retried: Family<ReasonLabels, Counter>,
    retried_requests: Family<ReasonLabels, Counter>,
    hec_requests: Family<OutcomeLabels, Counter>,
    hec_bytes: Family<KindLabels, Counter>,
    retried_logs: RateLimit,
    write_error_logs: RateLimit,
}

impl DeliveryEvents {
    pub fn register(m: &Metrics, output: &'static str) -> DeliveryEvents {
        let f = &m.delivery;
        DeliveryEvents {
            output,
            write_errors: f.write_errors.clone(),
            retried: f.retried.clone(),
            retried_requests: f.retried_requests.clone(),
            hec_requests: f.hec_requests.clone(),
            hec_bytes: f.hec_bytes.clone(),
            ..DeliveryEvents::default()
        }
    }

    pub fn retried(&self, reason: &'static str) -> u64 {
        self.retried
            .get(&ReasonLabels { reason })
            .map_or(0, |c| c.get())
    }

    pub fn write_errors(&self) -> u64 {
        self.write_errors.get()
    }
}

/// `requests` requests carrying `events` events were retried, for `reason`: sluice's
/// decision to hold on to a batch rather than give it up.
#[derive(Debug)]
pub struct Retried {
    pub reason: &'static str,
    pub requests: u64,
    pub events: u64,
}

impl InternalEvent for Retried {
    type Handle = DeliveryEvents;

    fn emit(self, h: &DeliveryEvents) {
        let labels = ReasonLabels {
            reason: self.reason,
        };
        h.retried.get_or_create(&labels).inc_by(self.events);
        h.retried_requests
            .get_or_create(&labels)
            .inc_by(self.requests);
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Some(suppressed) = h.retried_logs.allow()
        {
            tracing::debug!(
                output = h.output,
                reason = self.reason,
                requests = self.requests,
                events = self.events,
                suppressed,
                "retrying: the batch is kept and sent again"
            );
        }
    }
}

/// `n` HEC requests ended with `outcome` (`2xx`, `503`, `connect`, ...). The HEC client logs
/// each failure itself, with its URL and answer.
#[derive(Debug)]
pub struct HecRequests {
    pub outcome: &'static str,
    pub n: u64,
}

impl InternalEvent for HecRequests {
    type Handle = DeliveryEvents;

    fn emit(self, h: &DeliveryEvents) {
        h.hec_requests
            .get_or_create(&OutcomeLabels {
                outcome: self.outcome,
            })
            .inc_by(self.n);
        tracing::trace!(outcome = self.outcome, n = self.n, "HEC requests");
    }
}

/// HEC request bodies of `raw` bytes went out as `sent` bytes (compressed or not).
#[derive(Debug)]
pub struct HecBytesSent {
    pub raw: u64,
    pub sent: u64,
}

impl InternalEvent for HecBytesSent {
    type Handle = DeliveryEvents;

    fn emit(self, h: &DeliveryEvents) {
        for (kind, n) in [("raw", self.raw), ("sent", self.sent)] {
            h.hec_bytes.get_or_create(&KindLabels { kind }).inc_by(n);
        }
        tracing::trace!(raw = self.raw, sent = self.sent, "HEC bytes sent");
    }
}

/// A write to the output file failed; the batch is kept and retried after `retry_in`.
#[derive(Debug)]
pub struct OutputWriteFailed<'a> {
    pub path: &'a std::path::Path,
    pub error: &'a std::io::Error,
    pub events: u32,
    pub retry_in: std::time::Duration,
}

impl InternalEvent for OutputWriteFailed<'_> {
    type Handle = DeliveryEvents;

    fn emit(self, h: &DeliveryEvents) {
        h.write_errors.inc();
        if let Some(suppressed) = h.write_error_logs.allow() {
            tracing::error!(
                path = %self.path.display(),
                error = %self.error,
                events = self.events,
                suppressed,
                "writing to the output file failed; keeping the batch and retrying in {:?}",
                self.retry_in
            );
        }
    }
}

/// Turns what the HEC client counted since the last [`sync`](Self::sync) into events.
#[derive(Debug)]
pub struct HecBridge {
    stats: Arc<HecStats>,
    events: DeliveryEvents,
    seen: Mutex<Option<HecStatsSnapshot>>,
}

impl HecBridge {
    pub fn new(m: &Metrics, stats: Arc<HecStats>) -> HecBridge {
        HecBridge {
            stats,
            events: DeliveryEvents::register(m, "hec"),
            seen: Mutex::new(None),
        }
    }

    pub fn stats(&self) -> &Arc<HecStats> {
        &self.stats
    }

    /// Emits the events the HEC client counted since the last call; returns the snapshot
    /// it read (for the state rendered beside them).
    pub fn sync(&self) -> HecStatsSnapshot {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.stats.snapshot();
        let before = seen.as_ref();
        let prev = |list: fn(&HecStatsSnapshot) -> &Vec<(&'static str, u64)>, label: &str| {
            before
                .and_then(|b| list(b).iter().find(|(l, _)| *l == label))
                .map_or(0, |(_, v)| *v)
        };
        let h = &self.events;
        for (outcome, n) in &now.requests {
            let d = n - prev(|s| &s.requests, outcome);
            if d > 0 {
                HecRequests { outcome, n: d }.emit(h);
            }
        }
        for ((reason, events), (_, requests)) in
            now.retried_events.iter().zip(&now.retried_requests)
        {
            let events = events - prev(|s| &s.retried_events, reason);
            let requests = requests - prev(|s| &s.retried_requests, reason);
            if events > 0 || requests > 0 {
                Retried {
                    reason,
                    requests,
                    events,
                }
                .emit(h);
            }
        }
        let raw = now.bytes_raw - before.map_or(0, |b| b.bytes_raw);
        let sent = now.bytes_sent - before.map_or(0, |b| b.bytes_sent);
        if raw > 0 || sent > 0 {
            HecBytesSent { raw, sent }.emit(h);
        }
        *seen = Some(now.clone());
        now
    }
}
