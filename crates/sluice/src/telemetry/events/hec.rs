//! What the HEC client does, as it happens. The client (`sluice-hec`) counts nothing: it
//! reports each request, retry, failover, ack and refusal to its observer, and
//! [`HecEvents`] — the observer of one HEC destination — emits the event below for each.
//! The URL board keeps which URLs are in service (state the client decides with); the
//! metrics of `/metrics` are counted only here.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use sluice_hec::{HecEvent, HecObserver, LATENCY_BUCKETS, RequestOutcome, RetryReason};

use super::InternalEvent;
use crate::telemetry::{Label, Metrics, RateLimit};

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
            HecEvent::Refused { reason } => HecEventRefused { reason }.emit(self),
            HecEvent::DeadLettered { written, failed } => {
                HecDeadLettered { written, failed }.emit(self)
            }
        }
    }
}

/// The client was built with these URLs: their series exist from now on, each URL in
/// service.
#[derive(Debug)]
pub struct HecUrlsConfigured<'a> {
    pub urls: &'a [String],
}

impl InternalEvent for HecUrlsConfigured<'_> {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        let f = &h.f;
        let handles = self
            .urls
            .iter()
            .map(|u| {
                let labels = UrlLabels {
                    destination: h.destination.clone(),
                    url: Label::new(u),
                };
                let to = |to: &'static str| {
                    f.url_transitions.get_or_create_owned(&UrlToLabels {
                        destination: h.destination.clone(),
                        url: Label::new(u),
                        to,
                    })
                };
                let up = f.url_up.get_or_create_owned(&labels);
                up.set(1);
                UrlHandles {
                    url: u.clone(),
                    up,
                    last_success: f.url_last_success.get_or_create_owned(&labels),
                    requests: sluice_hec::health::CLASSES.map(|class| {
                        f.url_requests.get_or_create_owned(&UrlClassLabels {
                            destination: h.destination.clone(),
                            url: Label::new(u),
                            class,
                        })
                    }),
                    request_seconds: f.url_request_seconds.get_or_create_owned(&labels),
                    failovers: f.url_failovers.get_or_create_owned(&labels),
                    taken_out: to("out"),
                    probed_in: to("in"),
                }
            })
            .collect();
        if h.urls.set(handles).is_err() {
            tracing::warn!(
                destination = h.destination.as_str(),
                "the HEC client named its URLs twice; keeping the first list"
            );
        }
        tracing::debug!(
            destination = h.destination.as_str(),
            urls = ?self.urls,
            "HEC URLs"
        );
    }
}

/// A request to URL `url` ended with `outcome` after `latency`; its body was `raw` bytes
/// and `sent` on the wire. (The client logs each failure with its answer.)
#[derive(Debug)]
pub struct HecRequestCompleted {
    pub url: usize,
    pub outcome: RequestOutcome,
    pub latency: Duration,
    pub raw: usize,
    pub sent: usize,
}

impl InternalEvent for HecRequestCompleted {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        let secs = self.latency.as_secs_f64();
        h.requests[self.outcome as usize].inc();
        h.bytes_raw.inc_by(self.raw as u64);
        h.bytes_sent.inc_by(self.sent as u64);
        h.request_seconds.observe(secs);
        let success = self.outcome == RequestOutcome::Success;
        let now = success.then(unix_seconds);
        if let Some(now) = now {
            h.last_success.set(now);
        }
        if let Some(u) = h.url(self.url) {
            let class = self.outcome.class();
            if let Some(i) = sluice_hec::health::CLASSES.iter().position(|c| *c == class) {
                u.requests[i].inc();
            }
            u.request_seconds.observe(secs);
            if let Some(now) = now {
                u.last_success.set(now);
            }
        }
        tracing::trace!(
            url = h.url_name(self.url),
            outcome = self.outcome.label(),
            seconds = secs,
            "HEC request"
        );
    }
}

/// A request of `events` events failed at URL `url` for `reason` and is sent again: sluice
/// holds on to the batch rather than give it up. (The client warns about the failure.)
#[derive(Debug)]
pub struct HecRetried {
    pub url: usize,
    pub reason: RetryReason,
    pub events: u32,
}

impl InternalEvent for HecRetried {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        let labels = ReasonLabels {
            destination: h.destination.clone(),
            reason: self.reason.label(),
        };
        h.f.retried
            .get_or_create(&labels)
            .inc_by(u64::from(self.events));
        h.f.retried_requests.get_or_create(&labels).inc();
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Some(suppressed) = h.retry_logs.allow()
        {
            tracing::debug!(
                destination = h.destination.as_str(),
                url = h.url_name(self.url),
                reason = self.reason.label(),
                events = self.events,
                suppressed,
                "retrying: the batch is kept and sent again"
            );
        }
    }
}

/// A request that failed at URL `url` goes to another URL next.
#[derive(Debug)]
pub struct HecFailover {
    pub url: usize,
}

impl InternalEvent for HecFailover {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        if let Some(u) = h.url(self.url) {
            u.failovers.inc();
        }
        tracing::trace!(
            url = h.url_name(self.url),
            "failing over to the next HEC URL"
        );
    }
}

/// URL `url` was taken out of service after a failure (`reason`).
#[derive(Debug)]
pub struct HecUrlDown {
    pub url: usize,
    pub reason: &'static str,
}

impl InternalEvent for HecUrlDown {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        if let Some(u) = h.url(self.url) {
            u.up.set(0);
            u.taken_out.inc();
        }
        tracing::warn!(
            destination = h.destination.as_str(),
            url = h.url_name(self.url),
            reason = self.reason,
            "HEC URL taken out of service until a health probe brings it back"
        );
    }
}

/// URL `url` is back in service.
#[derive(Debug)]
pub struct HecUrlUp {
    pub url: usize,
}

impl InternalEvent for HecUrlUp {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        if let Some(u) = h.url(self.url) {
            u.up.set(1);
            u.probed_in.inc();
        }
        tracing::info!(
            destination = h.destination.as_str(),
            url = h.url_name(self.url),
            "HEC URL back in service"
        );
    }
}

/// A HEC worker took a batch of `events`.
#[derive(Debug)]
pub struct HecBatchHeld {
    pub events: u32,
}

impl InternalEvent for HecBatchHeld {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.in_flight.inc_by(i64::from(self.events));
    }
}

/// A HEC worker finished with a batch of `events` (its completion says how).
#[derive(Debug)]
pub struct HecBatchReleased {
    pub events: u32,
}

impl InternalEvent for HecBatchReleased {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.in_flight.dec_by(i64::from(self.events));
    }
}

/// An accepted request waits for its indexer acknowledgement.
#[derive(Debug)]
pub struct HecAckWaiting;

impl InternalEvent for HecAckWaiting {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.ack_pending.inc();
    }
}

/// A request of `events` events was acknowledged: they are indexed.
#[derive(Debug)]
pub struct HecAcked {
    pub events: u32,
}

impl InternalEvent for HecAcked {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.ack_pending.dec();
        h.ack_acked_requests.inc();
        h.ack_acked_events.inc_by(u64::from(self.events));
        tracing::trace!(events = self.events, "HEC ack");
    }
}

/// A request of `events` events was not acknowledged in time; they are sent again.
#[derive(Debug)]
pub struct HecAckTimedOut {
    pub events: u32,
}

impl InternalEvent for HecAckTimedOut {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        let n = u64::from(self.events);
        h.ack_pending.dec();
        h.ack_timed_out_requests.inc();
        h.ack_timed_out_events.inc_by(n);
        h.ack_resent_events.inc_by(n);
        if let Some(suppressed) = h.ack_logs.allow() {
            tracing::debug!(
                destination = h.destination.as_str(),
                events = self.events,
                suppressed,
                "HEC ack did not come in time; sending those events again"
            );
        }
    }
}

/// `requests` requests waiting for their ack were given up at the abort.
#[derive(Debug)]
pub struct HecAcksAbandoned {
    pub requests: u32,
}

impl InternalEvent for HecAcksAbandoned {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.ack_pending.dec_by(i64::from(self.requests));
        tracing::debug!(
            requests = self.requests,
            "HEC acks no longer waited for (shutdown)"
        );
    }
}

/// An ack query was answered (`ok`), or failed or got garbage (the client logs why).
#[derive(Debug)]
pub struct HecAckQueried {
    pub ok: bool,
}

impl InternalEvent for HecAckQueried {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.ack_queries.inc();
        if !self.ok {
            h.ack_query_errors.inc();
        }
    }
}

/// HEC refused a request about its data for the first time in a batch: the batch is
/// isolated event by event.
#[derive(Debug)]
pub struct HecBatchIsolated;

impl InternalEvent for HecBatchIsolated {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.isolated_batches.inc();
        if let Some(suppressed) = h.isolation_logs.allow() {
            tracing::debug!(
                destination = h.destination.as_str(),
                suppressed,
                "HEC refused a request about its data; isolating the batch event by event"
            );
        }
    }
}

/// `events` events were sent again because the request holding them was refused.
#[derive(Debug)]
pub struct HecIsolationResent {
    pub events: u64,
}

impl InternalEvent for HecIsolationResent {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.isolation_resent.inc_by(self.events);
        tracing::trace!(events = self.events, "HEC isolation: sending events again");
    }
}

/// A request that timed out is sent again as two halves.
#[derive(Debug)]
pub struct HecLatencySplit;

impl InternalEvent for HecLatencySplit {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.latency_splits.inc();
        tracing::debug!(
            destination = h.destination.as_str(),
            "HEC request timed out; sending it again as two halves"
        );
    }
}

/// HEC refused an event for good, for `reason`. (The dead-letter writer logs it with the
/// answer, rate-limited per reason.)
#[derive(Debug)]
pub struct HecEventRefused {
    pub reason: &'static str,
}

impl InternalEvent for HecEventRefused {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.f.rejected
            .get_or_create(&ReasonLabels {
                destination: h.destination.clone(),
                reason: self.reason,
            })
            .inc();
        tracing::trace!(reason = self.reason, "HEC refused an event");
    }
}

/// Refused events were written to the dead-letter file (`written`) or lost to a failed
/// write (`failed`; the writer logs the error).
#[derive(Debug)]
pub struct HecDeadLettered {
    pub written: u64,
    pub failed: u64,
}

impl InternalEvent for HecDeadLettered {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.dead_letter_written.inc_by(self.written);
        h.dead_letter_failed.inc_by(self.failed);
        tracing::trace!(
            written = self.written,
            failed = self.failed,
            "HEC dead-letter write"
        );
    }
}
