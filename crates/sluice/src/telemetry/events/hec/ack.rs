//! Indexer acknowledgement, bad-event isolation, refusals and the dead-letter file.

use super::{HecEvents, ReasonLabels};
use crate::telemetry::{InternalEvent, RateLimit};

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

/// How many original indexes get a log allowance of their own; past that, one is shared
/// (the names come from the events' metadata: bounded whatever arrives).
const FALLBACK_LOG_INDEXES: usize = 256;

/// How often the fallback is logged per original index.
const FALLBACK_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// HEC refused an event for its index (code 7) and it is sent again to the `fallback` index,
/// `original` (`None`: no `index` field) kept in `fields.sc4s_original_index`. Logged once
/// per original index, then at most once a minute per index with the count in between.
#[derive(Debug)]
pub struct HecFallbackIndex<'a> {
    pub original: Option<&'a str>,
    pub fallback: &'a str,
}

impl InternalEvent for HecFallbackIndex<'_> {
    type Handle = HecEvents;

    fn emit(self, h: &HecEvents) {
        h.fallback_index.inc();
        let original = self.original.unwrap_or("(none: the token's default index)");
        let allowed = {
            let mut logs = h.fallback_logs.lock().unwrap_or_else(|p| p.into_inner());
            let key = if logs.len() < FALLBACK_LOG_INDEXES || logs.contains_key(original) {
                original
            } else {
                "(other indexes)"
            };
            match logs.get(key) {
                Some(l) => l.allow(),
                None => {
                    let l = RateLimit::new(FALLBACK_LOG_EVERY);
                    let a = l.allow();
                    logs.insert(key.to_owned(), l);
                    a
                }
            }
        };
        if let Some(suppressed) = allowed {
            tracing::warn!(
                destination = h.destination.as_str(),
                index = original,
                fallback_index = self.fallback,
                suppressed,
                "HEC refused events for their index (code 7: missing, or not allowed for the \
                 token); sending them to the fallback index, the index they asked for in the \
                 indexed field sc4s_original_index"
            );
        }
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
