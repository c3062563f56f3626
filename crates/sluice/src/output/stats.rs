//! What one destination counts: the completion sink that turns every completion into one
//! internal event, and the rescue hook a disk buffer plugs into it. Below both the
//! destination and its buffer, which each hold it.

use std::sync::{Arc, OnceLock};

use sluice_proto::batch::EncodedBatch;
use sluice_proto::delivery::{
    AbandonReason, Completion, CompletionKind, CompletionSink, RetryReason,
};

use crate::telemetry::InternalEvent;
use crate::telemetry::events::{
    BatchAbandoned, BatchBuffered, BatchDelivered, BatchHandedBack, BatchPersisted, BatchRejected,
    BatchRescued, BatchSubmitted, DestinationEvents,
};

/// Somewhere to keep a batch the output could not deliver, rather than lose it: the
/// destination's disk buffer. `keep` must not block.
pub trait Rescue: Send + Sync + std::fmt::Debug {
    /// Takes a copy of `batch`'s events; `false` when it cannot (full, closed).
    fn keep(&self, batch: &EncodedBatch) -> bool;
}

/// The completion sink of one destination: every completion is one internal event here
/// ([`crate::telemetry::events::completion`]), which counts it and logs losses. Read back
/// (`/metrics`, `/health`, SC4S `_metrics`, the shutdown summary) from the same metric
/// handles.
#[derive(Debug)]
pub struct DestinationStats {
    events: Arc<DestinationEvents>,
    rescue: OnceLock<Arc<dyn Rescue>>,
    /// The counters' values when this destination started. The registry's series outlive a
    /// destination (a second one of the same name in one process, as the benches start,
    /// counts on the same series); the drain summary is this destination's own.
    start: DrainSummary,
}

/// Plain numbers of a [`DestinationStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrainSummary {
    pub delivered: u64,
    pub rejected: u64,
    /// Received for this destination and neither delivered, refused, nor held by a buffer:
    /// handed back or abandoned (the drain timeout, a bug).
    pub lost: u64,
    /// The drain timeout fired before the output finished.
    pub timed_out: bool,
    /// Events left in the disk buffer for the next start (safe, not lost).
    pub kept: u64,
    /// Of those, events the output gave up on at shutdown that were written to the buffer.
    pub rescued: u64,
}

impl DestinationStats {
    /// Counting into the daemon's registry.
    pub fn new(name: &str, output: &'static str) -> DestinationStats {
        #[cfg(not(test))]
        let m = crate::telemetry::metrics();
        // Unit tests run side by side and name every destination "default": each gets a
        // registry of its own, so each reads only what it counted.
        #[cfg(test)]
        let m = &crate::telemetry::Metrics::new();
        DestinationStats::register(m, name, output)
    }

    /// Counting into `m`.
    pub fn register(
        m: &crate::telemetry::Metrics,
        name: &str,
        output: &'static str,
    ) -> DestinationStats {
        let events = Arc::new(DestinationEvents::register(m, name, output));
        let start = DrainSummary {
            delivered: events.delivered_events(),
            rejected: events.rejected_events(),
            lost: events.lost_events(),
            rescued: events.rescued_events(),
            ..DrainSummary::default()
        };
        DestinationStats {
            events,
            rescue: OnceLock::new(),
            start,
        }
    }

    /// The handles its events count on.
    pub fn events(&self) -> &Arc<DestinationEvents> {
        &self.events
    }

    pub fn name(&self) -> &str {
        self.events.name()
    }

    pub fn output(&self) -> &'static str {
        self.events.output()
    }

    pub fn rejected_reason(&self) -> &str {
        self.events.rejected_reason()
    }

    /// From now on, batches that would be lost are offered to `rescue` first.
    pub fn set_rescue(&self, rescue: Arc<dyn Rescue>) {
        let _ = self.rescue.set(rescue);
    }

    pub(crate) fn submitted(&self, events: u32) {
        BatchSubmitted { events }.emit(&self.events);
    }

    /// Completions (batches) of `kind`.
    pub fn completions(&self, kind: CompletionKind) -> u64 {
        self.events.completions(kind)
    }

    pub fn delivered_events(&self) -> u64 {
        self.events.delivered_events()
    }

    pub fn rejected_events(&self) -> u64 {
        self.events.rejected_events()
    }

    /// Events handed back (`Retry`) that no buffer took over.
    pub fn retry_events(&self) -> u64 {
        self.events.retry_events()
    }

    /// Events handed back (`Retry`) that no buffer held: lost.
    pub fn retry_lost_events(&self) -> u64 {
        self.events.retry_lost_events()
    }

    /// Events of `Abandoned` completions, whatever the reason.
    pub fn abandoned_events(&self) -> u64 {
        self.events.abandoned_events()
    }

    /// Events abandoned for `reason` that no buffer held: lost.
    pub fn abandoned_lost_events(&self, reason: AbandonReason) -> u64 {
        self.events.abandoned_lost_events(reason)
    }

    pub fn persisted_events(&self) -> u64 {
        self.events.persisted_events()
    }

    /// Events a buffer took over to deliver them itself.
    pub fn buffered_events(&self) -> u64 {
        self.events.buffered_events()
    }

    /// Events that would have been lost and were written to the buffer instead.
    pub fn rescued_events(&self) -> u64 {
        self.events.rescued_events()
    }

    /// Deliveries dropped without a completion (a bug in an output).
    pub fn uncompleted(&self) -> u64 {
        self.events.uncompleted()
    }

    /// Events handed to the output and not completed yet.
    pub fn in_flight_events(&self) -> u64 {
        self.events.in_flight_events()
    }

    /// Every event lost so far: handed back or abandoned without a buffer holding it.
    pub fn lost_events(&self) -> u64 {
        self.events.lost_events()
    }

    /// What this destination did since it started (see `start`).
    pub fn summary(&self, timed_out: bool) -> DrainSummary {
        let s = &self.start;
        DrainSummary {
            delivered: self.delivered_events().saturating_sub(s.delivered),
            rejected: self.rejected_events().saturating_sub(s.rejected),
            lost: self.lost_events().saturating_sub(s.lost),
            timed_out,
            kept: 0,
            rescued: self.rescued_events().saturating_sub(s.rescued),
        }
    }
}

impl CompletionSink for DestinationStats {
    fn completed(&self, batch: &EncodedBatch, completion: &Completion, persisted: bool) {
        let h = &self.events;
        let events = batch.events();
        // Not delivered and nobody holds them: the buffer may still take them. Losses are
        // logged by the events, because only here is it known that no buffer holds them;
        // outputs log their own rejections, with the context they have (URL, answer).
        let undelivered = matches!(
            completion,
            Completion::Retry { .. } | Completion::Abandoned { .. }
        );
        let kept = persisted
            || (undelivered && self.rescue.get().is_some_and(|r| r.keep(batch)) && {
                BatchRescued { events }.emit(h);
                true
            });
        match completion {
            Completion::Delivered => BatchDelivered { events }.emit(h),
            Completion::Rejected { .. } => {
                let n = completion.counts(events);
                BatchRejected {
                    delivered: n.delivered,
                    rejected: n.rejected,
                }
                .emit(h);
            }
            Completion::Retry {
                reason: RetryReason::Buffered,
                ..
            } if kept => BatchBuffered { events }.emit(h),
            Completion::Retry { reason, .. } => BatchHandedBack {
                events,
                reason: *reason,
                kept,
            }
            .emit(h),
            Completion::Abandoned { reason } => BatchAbandoned {
                events,
                reason: *reason,
                kept,
            }
            .emit(h),
        }
    }

    fn persisted(&self, batch: &EncodedBatch) {
        BatchPersisted {
            events: batch.events(),
        }
        .emit(&self.events);
    }
}
