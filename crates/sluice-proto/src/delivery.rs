//! The delivery-completion seam: what an output reports back about each batch, once.
//!
//! Data flows one way — socket → frame → parse → classify → window → encode → deliver — and
//! exactly one thing flows back per batch: a [`Completion`]. A receiver wraps each finished
//! [`EncodedBatch`] (with its holds: input-window permits, memory budget) in a [`Delivery`]
//! bound to the destination's [`CompletionSink`]; the output takes the delivery, does its
//! work and calls [`Delivery::complete`]. That one call
//! * tells the sink (metrics, logs, and later the disk buffer's acknowledgement), then
//! * releases the batch's holds: the window slots of its events and its memory.
//!
//! # Exactly once
//!
//! `complete` consumes the delivery, so it cannot be called twice. A delivery dropped without
//! it (an output bug, a panicked task) completes itself as
//! [`Abandoned`](Completion::Abandoned) with [`AbandonReason::Uncompleted`]; the sink counts
//! and logs that as the bug it is. Either way the holds are released exactly once, after the
//! sink has seen the completion.
//!
//! # When events are safe
//!
//! An event is *safe* when an output has [`Delivered`](Completion::Delivered) it, or a
//! buffer has persisted it. Only then may its window slot be reused. A buffer that wrote a
//! delivery's events calls [`Delivery::persisted`]: the event holds (the window permits) are
//! released at once; the byte holds stay until the completion, since the body is still in
//! memory. The sink is told `persisted` with every completion, so a later
//! [`Retry`](Completion::Retry) or [`Abandoned`](Completion::Abandoned) of a persisted
//! delivery is not a loss (the buffer replays it), while the same completion of a delivery
//! nobody persisted is.
//!
//! # Per destination
//!
//! A sink belongs to one destination. A message routed to several destinations is encoded
//! once per destination into that destination's batch, and each batch gets its own delivery
//! and completion; an event hold shared between them (an `Arc` around the permit) is
//! released when the last of them completes.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::batch::{EncodedBatch, HoldKind};

/// How a destination finished with one batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// Every event is safe at the destination.
    Delivered,
    /// The listed events were refused for good (the others were delivered). An index
    /// outside the batch or listed twice counts once or not at all.
    Rejected { events: Vec<Rejection> },
    /// Nothing was delivered; the caller may offer the events again after `after`. Only a
    /// caller that kept them (a buffer: [`Delivery::persisted`]) can.
    Retry {
        after: Duration,
        reason: RetryReason,
    },
    /// The output gave up: these events were not delivered.
    Abandoned { reason: AbandonReason },
}

/// One event a destination refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The event's index in its batch ([`EncodedBatch::event`]).
    pub index: u32,
    /// The destination's status code (HTTP status for HEC), when it gave one.
    pub code: Option<u16>,
    /// The destination's words, for the log.
    pub text: String,
}

macro_rules! labelled {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident => $label:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $variant),+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const COUNT: usize = $name::ALL.len();
            /// The metric label value.
            pub fn label(self) -> &'static str {
                match self { $($name::$variant => $label),+ }
            }
        }
    };
}

labelled!(
    /// Why an output handed a batch back instead of retrying it itself.
    RetryReason {
        /// No connection (refused, DNS, TLS).
        Unreachable => "unreachable",
        /// No answer in time.
        Timeout => "timeout",
        /// The destination asked to slow down (HTTP 429, 503).
        Throttled => "throttled",
        /// The destination failed (HTTP 5xx).
        ServerError => "server_error",
        /// The destination refused the request, not the data (HTTP 401, 403, 404).
        Refused => "refused",
        /// A disk buffer took the batch over: it persisted the events and offers them to the
        /// output again itself (as a delivery made with [`Delivery::from_buffer`]).
        Buffered => "buffered",
        Other => "other",
    }
);

labelled!(
    /// Why an output gave a batch up.
    AbandonReason {
        /// The drain timeout at shutdown ran out first.
        Shutdown => "drain_timeout",
        /// The output stopped (or was never running) while the batch waited for it.
        OutputGone => "output_gone",
        /// The delivery was dropped without a completion: a bug, counted and logged.
        Uncompleted => "uncompleted",
    }
);

labelled!(
    /// A [`Completion`]'s variant, for metrics.
    CompletionKind {
        Delivered => "delivered",
        Rejected => "rejected",
        Retry => "retry",
        Abandoned => "abandoned",
    }
);

/// What a completion means for a batch of `events` events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventCounts {
    pub delivered: u32,
    pub rejected: u32,
    /// Neither delivered nor refused: handed back or abandoned.
    pub undelivered: u32,
}

impl Completion {
    pub fn kind(&self) -> CompletionKind {
        match self {
            Completion::Delivered => CompletionKind::Delivered,
            Completion::Rejected { .. } => CompletionKind::Rejected,
            Completion::Retry { .. } => CompletionKind::Retry,
            Completion::Abandoned { .. } => CompletionKind::Abandoned,
        }
    }

    /// Splits a batch of `events` events by what happened to them.
    pub fn counts(&self, events: u32) -> EventCounts {
        match self {
            Completion::Delivered => EventCounts {
                delivered: events,
                ..EventCounts::default()
            },
            Completion::Rejected { events: list } => {
                let mut idx: Vec<u32> = list
                    .iter()
                    .map(|r| r.index)
                    .filter(|&i| i < events)
                    .collect();
                idx.sort_unstable();
                idx.dedup();
                let rejected = idx.len() as u32;
                EventCounts {
                    delivered: events - rejected,
                    rejected,
                    undelivered: 0,
                }
            }
            Completion::Retry { .. } | Completion::Abandoned { .. } => EventCounts {
                undelivered: events,
                ..EventCounts::default()
            },
        }
    }

    /// Every event of a batch of `events` refused for the same reason (a destination that
    /// cannot tell which event it objects to).
    pub fn reject_all(events: u32, code: Option<u16>, text: &str) -> Completion {
        Completion::Rejected {
            events: (0..events)
                .map(|index| Rejection {
                    index,
                    code,
                    text: text.to_owned(),
                })
                .collect(),
        }
    }
}

/// Where a destination's completions go: counted, logged, and (later) acknowledged to the
/// buffer. Called on the output's thread or task, once per delivery, before the delivery's
/// holds are released.
pub trait CompletionSink: Send + Sync + fmt::Debug {
    /// `batch` finished with `completion`; `persisted` says whether a buffer holds its
    /// events (so that undelivered ones are not lost).
    fn completed(&self, batch: &EncodedBatch, completion: &Completion, persisted: bool);

    /// `batch`'s events were persisted by a buffer; its window permits are being released.
    fn persisted(&self, _batch: &EncodedBatch) {}
}

/// One batch on its way to one destination, with the holds of its events. See the module
/// docs for the contract: [`complete`](Self::complete) exactly once.
pub struct Delivery {
    batch: EncodedBatch,
    sink: Arc<dyn CompletionSink>,
    persisted: bool,
    done: bool,
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery")
            .field("batch", &self.batch)
            .field("persisted", &self.persisted)
            .finish()
    }
}

impl Delivery {
    pub fn new(batch: EncodedBatch, sink: Arc<dyn CompletionSink>) -> Delivery {
        Delivery {
            batch,
            sink,
            persisted: false,
            done: false,
        }
    }

    /// A delivery of events a buffer already holds (read back from it): safe from the
    /// start, so a `Retry` or `Abandoned` completion of it is not a loss. It carries no
    /// holds of the window.
    pub fn from_buffer(batch: EncodedBatch, sink: Arc<dyn CompletionSink>) -> Delivery {
        Delivery {
            batch,
            sink,
            persisted: true,
            done: false,
        }
    }

    pub fn batch(&self) -> &EncodedBatch {
        &self.batch
    }

    pub fn events(&self) -> u32 {
        self.batch.events()
    }

    pub fn is_persisted(&self) -> bool {
        self.persisted
    }

    /// A buffer wrote every event of this delivery: they are safe, so their window permits
    /// are released now. The completion still has to come (and still releases the memory).
    /// Calling it again does nothing.
    pub fn persisted(&mut self) {
        if self.persisted {
            return;
        }
        self.persisted = true;
        self.sink.persisted(&self.batch);
        self.batch.release(HoldKind::Events);
    }

    /// Reports how the destination finished with this batch, then releases its holds.
    pub fn complete(mut self, completion: Completion) {
        self.finish(&completion);
    }

    fn finish(&mut self, completion: &Completion) {
        self.done = true;
        self.sink.completed(&self.batch, completion, self.persisted);
        self.batch.release(HoldKind::Events);
        self.batch.release(HoldKind::Bytes);
    }
}

impl Drop for Delivery {
    fn drop(&mut self) {
        if !self.done {
            self.finish(&Completion::Abandoned {
                reason: AbandonReason::Uncompleted,
            });
        }
    }
}

#[cfg(test)]
mod tests;
