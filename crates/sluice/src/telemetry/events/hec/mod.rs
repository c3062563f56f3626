//! What the HEC client does, as it happens. The client (`sluice-hec`) counts nothing: it
//! reports each request, retry, failover, ack and refusal to its observer, and
//! [`HecEvents`] — the observer of one HEC destination — emits the event below for each.
//! The URL board keeps which URLs are in service (state the client decides with); the
//! metrics of `/metrics` are counted only here.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use sluice_hec::{HecEvent, HecObserver, LATENCY_BUCKETS, RequestOutcome, RetryReason};

use super::InternalEvent;
use crate::telemetry::{Label, Metrics, RateLimit};

mod ack;
mod request;

pub use ack::{
    HecAckQueried, HecAckTimedOut, HecAckWaiting, HecAcked, HecAcksAbandoned, HecBatchIsolated,
    HecDeadLettered, HecEventRefused, HecFallbackIndex, HecIsolationResent, HecLatencySplit,
};
pub use request::{
    HecBatchHeld, HecBatchReleased, HecFailover, HecRequestCompleted, HecRetried, HecUrlDown,
    HecUrlUp, HecUrlsConfigured,
};

type F64Gauge = Gauge<f64, std::sync::atomic::AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DestLabels {
    destination: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    destination: Label,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    destination: Label,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    destination: Label,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UrlLabels {
    destination: Label,
    url: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UrlClassLabels {
    destination: Label,
    url: Label,
    class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UrlToLabels {
    destination: Label,
    url: Label,
    to: &'static str,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS.iter().copied())
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

#[derive(Debug)]
pub(crate) struct Families {
    retried: Family<ReasonLabels, Counter>,
    retried_requests: Family<ReasonLabels, Counter>,
    requests: Family<OutcomeLabels, Counter>,
    bytes: Family<KindLabels, Counter>,
    request_seconds: HistogramFamily<DestLabels>,
    in_flight: Family<DestLabels, Gauge>,
    last_success: Family<DestLabels, F64Gauge>,
    url_up: Family<UrlLabels, Gauge>,
    url_last_success: Family<UrlLabels, F64Gauge>,
    url_requests: Family<UrlClassLabels, Counter>,
    url_request_seconds: HistogramFamily<UrlLabels>,
    url_failovers: Family<UrlLabels, Counter>,
    url_transitions: Family<UrlToLabels, Counter>,
    ack_requests: Family<OutcomeLabels, Counter>,
    ack_events: Family<OutcomeLabels, Counter>,
    ack_queries: Family<OutcomeLabels, Counter>,
    ack_pending: Family<DestLabels, Gauge>,
    isolation_resent: Family<DestLabels, Counter>,
    isolated_batches: Family<DestLabels, Counter>,
    latency_splits: Family<DestLabels, Counter>,
    rejected: Family<ReasonLabels, Counter>,
    dead_letter: Family<OutcomeLabels, Counter>,
    fallback_index: Family<DestLabels, Counter>,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families {
            retried: Family::default(),
            retried_requests: Family::default(),
            requests: Family::default(),
            bytes: Family::default(),
            request_seconds: Family::new_with_constructor(latency_histogram),
            in_flight: Family::default(),
            last_success: Family::default(),
            url_up: Family::default(),
            url_last_success: Family::default(),
            url_requests: Family::default(),
            url_request_seconds: Family::new_with_constructor(latency_histogram),
            url_failovers: Family::default(),
            url_transitions: Family::default(),
            ack_requests: Family::default(),
            ack_events: Family::default(),
            ack_queries: Family::default(),
            ack_pending: Family::default(),
            isolation_resent: Family::default(),
            isolated_batches: Family::default(),
            latency_splits: Family::default(),
            rejected: Family::default(),
            dead_letter: Family::default(),
            fallback_index: Family::default(),
        };
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
            f.requests.clone(),
        );
        r.register(
            "sluice_hec_bytes",
            "HEC request body bytes (raw: before compression; sent: on the wire)",
            f.bytes.clone(),
        );
        r.register(
            "sluice_hec_request_seconds",
            "HEC request latency",
            f.request_seconds.clone(),
        );
        r.register(
            "sluice_hec_in_flight_events",
            "Events in HEC requests now (being sent or waiting to be retried)",
            f.in_flight.clone(),
        );
        r.register(
            "sluice_hec_last_success_timestamp_seconds",
            "When a HEC request last succeeded (Unix seconds; 0: never). Alert on time() \
                 minus this",
            f.last_success.clone(),
        );
        r.register(
            "sluice_hec_url_up",
            "1 while the HEC URL is in service, 0 while it is out until a probe brings it \
                 back",
            f.url_up.clone(),
        );
        r.register(
            "sluice_hec_url_last_success_timestamp_seconds",
            "Unix time of the URL's last 2xx answer (0: none yet)",
            f.url_last_success.clone(),
        );
        r.register(
            "sluice_hec_url_requests",
            "Requests per URL by status class (error: no answer)",
            f.url_requests.clone(),
        );
        r.register(
            "sluice_hec_url_request_seconds",
            "Request latency per URL",
            f.url_request_seconds.clone(),
        );
        r.register(
            "sluice_hec_url_failovers",
            "Requests that failed at the URL and went to another one",
            f.url_failovers.clone(),
        );
        r.register(
            "sluice_hec_url_transitions",
            "Times the URL was taken out of service and probed back in",
            f.url_transitions.clone(),
        );
        r.register(
            "sluice_hec_ack_requests",
            "Requests by indexer-acknowledgement outcome",
            f.ack_requests.clone(),
        );
        r.register(
            "sluice_hec_ack_events",
            "Events acknowledged, timed out, and sent again for want of an ack",
            f.ack_events.clone(),
        );
        r.register(
            "sluice_hec_ack_queries",
            "Ack queries, and those that failed or got garbage",
            f.ack_queries.clone(),
        );
        r.register(
            "sluice_hec_ack_pending",
            "Requests waiting for their ack",
            f.ack_pending.clone(),
        );
        r.register(
            "sluice_hec_isolation_events_resent",
            "Events sent again because the request holding them was refused (400/413)",
            f.isolation_resent.clone(),
        );
        r.register(
            "sluice_hec_isolated_batches",
            "Batches HEC refused at least once and that were isolated event by event",
            f.isolated_batches.clone(),
        );
        r.register(
            "sluice_hec_latency_splits",
            "Requests that timed out and were sent again as two halves",
            f.latency_splits.clone(),
        );
        r.register(
            "sluice_hec_rejected",
            "Events HEC refused for good, by reason (each written to the dead-letter file)",
            f.rejected.clone(),
        );
        r.register(
            "sluice_hec_dead_letter_events",
            "Refused events written to the dead-letter file, and those a write failure lost",
            f.dead_letter.clone(),
        );
        r.register(
            "sluice_hec_fallback_index_events",
            "Events HEC refused for their index (code 7) and sent again to the destination's \
                 fallback index (those refused there too are also in sluice_hec_rejected)",
            f.fallback_index.clone(),
        );
        f
    }
}

/// The handles of one URL.
#[derive(Debug)]
struct UrlHandles {
    url: String,
    up: Gauge,
    last_success: F64Gauge,
    /// By [`sluice_hec::health::CLASSES`].
    requests: [Counter; 5],
    request_seconds: Histogram,
    failovers: Counter,
    taken_out: Counter,
    probed_in: Counter,
}

/// The handles and log allowances of one HEC destination; the observer its client reports
/// to. Rare label sets (a retry reason, a refusal reason) are looked up when they happen;
/// everything per request is resolved here, once.
#[derive(Debug)]
pub struct HecEvents {
    destination: Label,
    f: FamiliesRef,
    requests: [Counter; RequestOutcome::COUNT],
    bytes_raw: Counter,
    bytes_sent: Counter,
    request_seconds: Histogram,
    in_flight: Gauge,
    last_success: F64Gauge,
    ack_acked_requests: Counter,
    ack_timed_out_requests: Counter,
    ack_acked_events: Counter,
    ack_timed_out_events: Counter,
    ack_resent_events: Counter,
    ack_queries: Counter,
    ack_query_errors: Counter,
    ack_pending: Gauge,
    isolation_resent: Counter,
    isolated_batches: Counter,
    latency_splits: Counter,
    dead_letter_written: Counter,
    dead_letter_failed: Counter,
    fallback_index: Counter,
    /// One log allowance per original index (bounded: see [`HecFallbackIndex`]).
    fallback_logs: std::sync::Mutex<std::collections::HashMap<String, RateLimit>>,
    urls: OnceLock<Vec<UrlHandles>>,
    retry_logs: RateLimit,
    isolation_logs: RateLimit,
    ack_logs: RateLimit,
}

/// The families whose label sets are not all known up front.
#[derive(Debug)]
struct FamiliesRef {
    retried: Family<ReasonLabels, Counter>,
    retried_requests: Family<ReasonLabels, Counter>,
    rejected: Family<ReasonLabels, Counter>,
    url_up: Family<UrlLabels, Gauge>,
    url_last_success: Family<UrlLabels, F64Gauge>,
    url_requests: Family<UrlClassLabels, Counter>,
    url_request_seconds: HistogramFamily<UrlLabels>,
    url_failovers: Family<UrlLabels, Counter>,
    url_transitions: Family<UrlToLabels, Counter>,
}

fn unix_seconds() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl HecEvents {
    /// The handles of HEC destination `destination` in `m`. Its series are all there from
    /// now on (zeros included), the per-URL ones once the client names its URLs.
    pub fn register(m: &Metrics, destination: &str) -> HecEvents {
        let f = &m.hec;
        let d = Label::new(destination);
        let dest = DestLabels {
            destination: d.clone(),
        };
        let outcome = |fam: &Family<OutcomeLabels, Counter>, outcome: &'static str| {
            fam.get_or_create_owned(&OutcomeLabels {
                destination: d.clone(),
                outcome,
            })
        };
        let kind = |kind: &'static str| {
            f.bytes.get_or_create_owned(&KindLabels {
                destination: d.clone(),
                kind,
            })
        };
        for reason in sluice_hec::deadletter::REASONS {
            f.rejected.get_or_create_owned(&ReasonLabels {
                destination: d.clone(),
                reason,
            });
        }
        HecEvents {
            requests: std::array::from_fn(|i| outcome(&f.requests, RequestOutcome::ALL[i].label())),
            bytes_raw: kind("raw"),
            bytes_sent: kind("sent"),
            request_seconds: f.request_seconds.get_or_create_owned(&dest),
            in_flight: f.in_flight.get_or_create_owned(&dest),
            last_success: f.last_success.get_or_create_owned(&dest),
            ack_acked_requests: outcome(&f.ack_requests, "acked"),
            ack_timed_out_requests: outcome(&f.ack_requests, "timed_out"),
            ack_acked_events: outcome(&f.ack_events, "acked"),
            ack_timed_out_events: outcome(&f.ack_events, "timed_out"),
            ack_resent_events: outcome(&f.ack_events, "resent"),
            ack_queries: outcome(&f.ack_queries, "all"),
            ack_query_errors: outcome(&f.ack_queries, "error"),
            ack_pending: f.ack_pending.get_or_create_owned(&dest),
            isolation_resent: f.isolation_resent.get_or_create_owned(&dest),
            isolated_batches: f.isolated_batches.get_or_create_owned(&dest),
            latency_splits: f.latency_splits.get_or_create_owned(&dest),
            dead_letter_written: outcome(&f.dead_letter, "written"),
            dead_letter_failed: outcome(&f.dead_letter, "write_error"),
            fallback_index: f.fallback_index.get_or_create_owned(&dest),
            fallback_logs: Default::default(),
            f: FamiliesRef {
                retried: f.retried.clone(),
                retried_requests: f.retried_requests.clone(),
                rejected: f.rejected.clone(),
                url_up: f.url_up.clone(),
                url_last_success: f.url_last_success.clone(),
                url_requests: f.url_requests.clone(),
                url_request_seconds: f.url_request_seconds.clone(),
                url_failovers: f.url_failovers.clone(),
                url_transitions: f.url_transitions.clone(),
            },
            destination: d,
            urls: OnceLock::new(),
            retry_logs: RateLimit::default(),
            isolation_logs: RateLimit::default(),
            ack_logs: RateLimit::default(),
        }
    }

    fn url(&self, idx: usize) -> Option<&UrlHandles> {
        self.urls.get().and_then(|u| u.get(idx))
    }

    fn url_name(&self, idx: usize) -> &str {
        self.url(idx).map_or("", |u| u.url.as_str())
    }

    /// HEC requests that ended with `outcome`.
    pub fn requests(&self, outcome: RequestOutcome) -> u64 {
        self.requests[outcome as usize].get()
    }

    /// Events whose request was retried for `reason`.
    pub fn retried(&self, reason: RetryReason) -> u64 {
        self.f
            .retried
            .get(&ReasonLabels {
                destination: self.destination.clone(),
                reason: reason.label(),
            })
            .map_or(0, |c| c.get())
    }

    /// Events in HEC requests now.
    pub fn in_flight_events(&self) -> i64 {
        self.in_flight.get()
    }

    /// The URLs the client reported, in its order.
    pub fn urls(&self) -> Vec<String> {
        self.urls
            .get()
            .map(|u| u.iter().map(|h| h.url.clone()).collect())
            .unwrap_or_default()
    }
}

impl HecObserver for HecEvents {
    fn observe(&self, event: HecEvent<'_>) {
        match event {
            HecEvent::Urls(urls) => HecUrlsConfigured { urls }.emit(self),
            HecEvent::Request {
                url,
                outcome,
                latency,
                raw,
                sent,
            } => HecRequestCompleted {
                url,
                outcome,
                latency,
                raw,
                sent,
            }
            .emit(self),
            HecEvent::Retried {
                url,
                reason,
                events,
            } => HecRetried {
                url,
                reason,
                events,
            }
            .emit(self),
            HecEvent::Failover { url } => HecFailover { url }.emit(self),
            HecEvent::UrlDown { url, reason } => HecUrlDown { url, reason }.emit(self),
            HecEvent::UrlUp { url } => HecUrlUp { url }.emit(self),
            HecEvent::Held { events } => HecBatchHeld { events }.emit(self),
            HecEvent::Released { events } => HecBatchReleased { events }.emit(self),
            HecEvent::AckWaiting => HecAckWaiting.emit(self),
            HecEvent::Acked { events } => HecAcked { events }.emit(self),
            HecEvent::AckTimedOut { events } => HecAckTimedOut { events }.emit(self),
            HecEvent::AckAbandoned { requests } => HecAcksAbandoned { requests }.emit(self),
            HecEvent::AckQueried { ok } => HecAckQueried { ok }.emit(self),
            HecEvent::Isolated => HecBatchIsolated.emit(self),
            HecEvent::IsolationResent { events } => HecIsolationResent { events }.emit(self),
            HecEvent::LatencySplit => HecLatencySplit.emit(self),
            HecEvent::FallbackIndex { original, fallback } => {
                HecFallbackIndex { original, fallback }.emit(self)
            }
            HecEvent::Refused { reason } => HecEventRefused { reason }.emit(self),
            HecEvent::DeadLettered { written, failed } => {
                HecDeadLettered { written, failed }.emit(self)
            }
        }
    }
}
