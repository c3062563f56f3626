//! A request and its URL: what was sent, how it ended, retries, failover, URLs going out
//! and coming back, batches held by workers.

use std::time::Duration;

use sluice_hec::{RequestOutcome, RetryReason};

use super::{
    HecEvents, ReasonLabels, UrlClassLabels, UrlHandles, UrlLabels, UrlToLabels, unix_seconds,
};
use crate::telemetry::{InternalEvent, Label};

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
