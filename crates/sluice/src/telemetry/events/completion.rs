//! What became of the events handed to a destination. Every batch completes exactly once
//! (`sluice_proto::delivery`), and its completion is one event here, emitted by the
//! destination's completion sink (`output::DestinationStats`) the moment it arrives:
//! [`BatchDelivered`], [`BatchRejected`], [`BatchHandedBack`], [`BatchBuffered`],
//! [`BatchAbandoned`]. Around them: [`BatchSubmitted`] (in flight from now),
//! [`BatchPersisted`] and [`BatchRescued`] (a disk buffer holds the events), and
//! [`BufferFullDropped`] (UDP datagrams the kernel dropped while the buffer held receivers
//! back). A destination's disk buffer has two more: [`BufferSpilled`], [`BufferReplayed`].
//!
//! The counters are read back (the drain summary, `/health`, SC4S `_metrics`) from the same
//! handles; nothing else counts completions.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use sluice_proto::delivery::{AbandonReason, CompletionKind, RetryReason};

use super::InternalEvent;
use crate::telemetry::{Label, Metrics, RateLimit};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DestLabels {
    output: &'static str,
    destination: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    output: &'static str,
    destination: Label,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    output: &'static str,
    destination: Label,
    outcome: &'static str,
}

/// `destination` is empty for events lost before they were routed to one.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct DropLabels {
    pub(crate) destination: Label,
    pub(crate) reason: &'static str,
}

/// `sluice_dropped_total` reason of events handed back with no buffer to keep them.
pub const RETRY_WITHOUT_BUFFER: &str = "retry_without_buffer";
/// `sluice_dropped_total` reason of UDP drops while the disk buffer was full.
pub const BUFFER_FULL: &str = "buffer_full";

/// `sluice_dropped_total` reason of events routed to no destination, on purpose.
pub const NO_DESTINATION: &str = "no_destination";

/// The outcomes of `sluice_delivery_events_total`.
const OUTCOMES: [&str; 5] = ["delivered", "rejected", "retry", "buffered", "abandoned"];

#[derive(Debug, Default)]
pub(crate) struct Families {
    delivered: Family<DestLabels, Counter>,
    pub(crate) dropped: Family<DropLabels, Counter>,
    completions: Family<KindLabels, Counter>,
    events: Family<OutcomeLabels, Counter>,
    in_flight: Family<DestLabels, Gauge>,
    persisted: Family<DestLabels, Counter>,
    rescued: Family<DestLabels, Counter>,
    uncompleted: Family<DestLabels, Counter>,
    spilled: Family<BufferLabels, Counter>,
    replayed: Family<BufferLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BufferLabels {
    destination: Label,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families::default();
        r.register(
            "sluice_delivered",
            "Events delivered (completions Delivered, and the accepted part of Rejected)",
            f.delivered.clone(),
        );
        r.register(
            "sluice_dropped",
            "Events given up, by destination and reason: refused by the destination \
             (hec_rejected), not delivered by the drain timeout (drain_timeout), the output \
             gone (output_gone; destination empty: lost before routing), a delivery never \
             completed (uncompleted: a bug), handed back with no buffer to keep them \
             (retry_without_buffer), UDP datagrams the kernel dropped while the disk buffer \
             was full and the receivers held back (buffer_full)",
            f.dropped.clone(),
        );
        r.register(
            "sluice_delivery_completions",
            "Batches completed per destination, by completion: delivered, rejected (some or \
             all events refused), retry (handed back, or taken over by the buffer), abandoned",
            f.completions.clone(),
        );
        r.register(
            "sluice_delivery_events",
            "Events completed per destination, by outcome (abandoned includes events a buffer \
             still holds; buffered: taken over by the disk buffer)",
            f.events.clone(),
        );
        r.register(
            "sluice_delivery_in_flight_events",
            "Events handed to the destination's output and not completed yet",
            f.in_flight.clone(),
        );
        r.register(
            "sluice_delivery_persisted_events",
            "Events a buffer persisted before their completion (their window slots freed)",
            f.persisted.clone(),
        );
        r.register(
            "sluice_delivery_rescued_events",
            "Events handed back or abandoned that were written to the disk buffer instead of \
             lost",
            f.rescued.clone(),
        );
        r.register(
            "sluice_delivery_uncompleted",
            "Deliveries dropped without a completion: a bug; their events count as dropped \
             (reason uncompleted)",
            f.uncompleted.clone(),
        );
        r.register(
            "sluice_buffer_spilled_events",
            "Events normal mode sent to disk because HEC could not take them now",
            f.spilled.clone(),
        );
        r.register(
            "sluice_buffer_replayed_events",
            "Events read back from the disk buffer and delivered (or refused) by HEC",
            f.replayed.clone(),
        );
        f
    }

    /// The handles of events routed to no destination ([`RoutedNowhere`]).
    pub(crate) fn routed_nowhere(&self) -> RoutingEvents {
        RoutingEvents {
            dropped: self.dropped.get_or_create_owned(&DropLabels {
                destination: Label::new(""),
                reason: NO_DESTINATION,
            }),
            logs: RateLimit::default(),
        }
    }

    /// The counter of events lost before they reached a destination.
    pub(crate) fn unrouted_lost(&self) -> Counter {
        self.dropped.get_or_create_owned(&DropLabels {
            destination: Label::new(""),
            reason: AbandonReason::OutputGone.label(),
        })
    }
}

/// The metric handles and log allowances of one destination.
#[derive(Debug)]
pub struct DestinationEvents {
    name: Label,
    output: &'static str,
    rejected_reason: &'static str,
    delivered: Counter,
    completions: [Counter; CompletionKind::COUNT],
    /// By [`OUTCOMES`].
    events: [Counter; OUTCOMES.len()],
    dropped_rejected: Counter,
    dropped_retry: Counter,
    dropped_abandoned: [Counter; AbandonReason::COUNT],
    dropped_buffer_full: Counter,
    in_flight: Gauge,
    persisted: Counter,
    rescued: Counter,
    uncompleted: Counter,
    loss_logs: RateLimit,
    rejected_logs: RateLimit,
    /// Its disk buffer's series are created with the buffer ([`Self::buffer`]).
    spilled: Family<BufferLabels, Counter>,
    replayed: Family<BufferLabels, Counter>,
}

fn outcome(o: &str) -> usize {
    OUTCOMES.iter().position(|x| *x == o).unwrap_or(0)
}

impl DestinationEvents {
    /// The handles of destination `name` (output `output`: `hec`, `file`) in `m`; every
    /// series is there from now on, zeros included.
    pub fn register(m: &Metrics, name: &str, output: &'static str) -> DestinationEvents {
        let f = &m.completion;
        let name = Label::new(name);
        let dest = DestLabels {
            output,
            destination: name.clone(),
        };
        let drop = |reason: &'static str| {
            f.dropped.get_or_create_owned(&DropLabels {
                destination: name.clone(),
                reason,
            })
        };
        let rejected_reason = match output {
            "hec" => "hec_rejected",
            "file" => "file_rejected",
            "archive" => "archive_rejected",
            _ => "rejected",
        };
        DestinationEvents {
            output,
            rejected_reason,
            delivered: f.delivered.get_or_create_owned(&dest),
            completions: std::array::from_fn(|i| {
                f.completions.get_or_create_owned(&KindLabels {
                    output,
                    destination: name.clone(),
                    kind: CompletionKind::ALL[i].label(),
                })
            }),
            events: OUTCOMES.map(|outcome| {
                f.events.get_or_create_owned(&OutcomeLabels {
                    output,
                    destination: name.clone(),
                    outcome,
                })
            }),
            dropped_rejected: drop(rejected_reason),
            dropped_abandoned: std::array::from_fn(|i| drop(AbandonReason::ALL[i].label())),
            dropped_retry: drop(RETRY_WITHOUT_BUFFER),
            dropped_buffer_full: drop(BUFFER_FULL),
            in_flight: f.in_flight.get_or_create_owned(&dest),
            persisted: f.persisted.get_or_create_owned(&dest),
            rescued: f.rescued.get_or_create_owned(&dest),
            uncompleted: f.uncompleted.get_or_create_owned(&dest),
            spilled: f.spilled.clone(),
            replayed: f.replayed.clone(),
            name,
            loss_logs: RateLimit::default(),
            rejected_logs: RateLimit::default(),
        }
    }

    /// The handles of the destination's disk buffer (its series appear now).
    pub fn buffer(&self) -> BufferEvents {
        let labels = BufferLabels {
            destination: self.name.clone(),
        };
        BufferEvents {
            name: self.name.clone(),
            spilled: self.spilled.get_or_create_owned(&labels),
            replayed: self.replayed.get_or_create_owned(&labels),
        }
    }

    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    pub fn output(&self) -> &'static str {
        self.output
    }

    /// The `sluice_dropped_total` reason of events this destination refused.
    pub fn rejected_reason(&self) -> &'static str {
        self.rejected_reason
    }

    pub fn completions(&self, kind: CompletionKind) -> u64 {
        self.completions[kind as usize].get()
    }

    pub fn delivered_events(&self) -> u64 {
        self.delivered.get()
    }

    pub fn rejected_events(&self) -> u64 {
        self.events[outcome("rejected")].get()
    }

    pub fn retry_events(&self) -> u64 {
        self.events[outcome("retry")].get()
    }

    pub fn buffered_events(&self) -> u64 {
        self.events[outcome("buffered")].get()
    }

    pub fn abandoned_events(&self) -> u64 {
        self.events[outcome("abandoned")].get()
    }

    pub fn retry_lost_events(&self) -> u64 {
        self.dropped_retry.get()
    }

    pub fn abandoned_lost_events(&self, reason: AbandonReason) -> u64 {
        self.dropped_abandoned[reason as usize].get()
    }

    pub fn buffer_full_drops(&self) -> u64 {
        self.dropped_buffer_full.get()
    }

    pub fn in_flight_events(&self) -> u64 {
        self.in_flight.get().max(0) as u64
    }

    pub fn persisted_events(&self) -> u64 {
        self.persisted.get()
    }

    pub fn rescued_events(&self) -> u64 {
        self.rescued.get()
    }

    pub fn uncompleted(&self) -> u64 {
        self.uncompleted.get()
    }

    /// Events that left the destination's care for good without being delivered or
    /// refused: handed back or abandoned with no buffer holding them.
    pub fn lost_events(&self) -> u64 {
        self.retry_lost_events() + self.dropped_abandoned.iter().map(Counter::get).sum::<u64>()
    }

    fn completed(&self, kind: CompletionKind, events: u32) {
        self.completions[kind as usize].inc();
        self.in_flight.dec_by(i64::from(events));
    }
}

/// A batch of `events` was queued for the destination's output: in flight until it
/// completes.
#[derive(Debug)]
pub struct BatchSubmitted {
    pub events: u32,
}

impl InternalEvent for BatchSubmitted {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.in_flight.inc_by(i64::from(self.events));
    }
}

/// Every event of a batch was delivered.
#[derive(Debug)]
pub struct BatchDelivered {
    pub events: u32,
}

impl InternalEvent for BatchDelivered {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.completed(CompletionKind::Delivered, self.events);
        let n = u64::from(self.events);
        h.delivered.inc_by(n);
        h.events[outcome("delivered")].inc_by(n);
        tracing::trace!(destination = h.name(), events = self.events, "delivered");
    }
}

/// The destination refused `rejected` events of a batch for good and took the other
/// `delivered`. (The output logged each refusal with its answer.)
#[derive(Debug)]
pub struct BatchRejected {
    pub delivered: u32,
    pub rejected: u32,
}

impl InternalEvent for BatchRejected {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.completed(CompletionKind::Rejected, self.delivered + self.rejected);
        let (d, r) = (u64::from(self.delivered), u64::from(self.rejected));
        h.delivered.inc_by(d);
        h.events[outcome("delivered")].inc_by(d);
        h.events[outcome("rejected")].inc_by(r);
        h.dropped_rejected.inc_by(r);
        if let Some(suppressed) = h.rejected_logs.allow() {
            tracing::debug!(
                destination = h.name(),
                delivered = self.delivered,
                rejected = self.rejected,
                suppressed,
                "the destination refused events of a batch for good"
            );
        }
    }
}

/// The output handed a batch of `events` back (`reason`) instead of retrying it; `kept`
/// when a buffer holds its events, lost otherwise.
#[derive(Debug)]
pub struct BatchHandedBack {
    pub events: u32,
    pub reason: RetryReason,
    pub kept: bool,
}

impl InternalEvent for BatchHandedBack {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.completed(CompletionKind::Retry, self.events);
        h.events[outcome("retry")].inc_by(u64::from(self.events));
        if self.kept {
            tracing::debug!(
                destination = h.name(),
                events = self.events,
                reason = self.reason.label(),
                "the output handed a batch back; the disk buffer holds it"
            );
            return;
        }
        h.dropped_retry.inc_by(u64::from(self.events));
        if let Some(suppressed) = h.loss_logs.allow() {
            tracing::error!(
                destination = h.name(),
                events = self.events,
                reason = self.reason.label(),
                suppressed,
                "the output handed a batch back and no buffer holds it; its events are lost"
            );
        }
    }
}

/// The disk buffer took a batch of `events` over: it persisted them and delivers them
/// itself.
#[derive(Debug)]
pub struct BatchBuffered {
    pub events: u32,
}

impl InternalEvent for BatchBuffered {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.completed(CompletionKind::Retry, self.events);
        h.events[outcome("buffered")].inc_by(u64::from(self.events));
        tracing::trace!(
            destination = h.name(),
            events = self.events,
            "the disk buffer took a batch over"
        );
    }
}

/// The output gave a batch of `events` up (`reason`); `kept` when a buffer holds its
/// events, lost otherwise.
#[derive(Debug)]
pub struct BatchAbandoned {
    pub events: u32,
    pub reason: AbandonReason,
    pub kept: bool,
}

impl InternalEvent for BatchAbandoned {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.completed(CompletionKind::Abandoned, self.events);
        h.events[outcome("abandoned")].inc_by(u64::from(self.events));
        if !self.kept {
            h.dropped_abandoned[self.reason as usize].inc_by(u64::from(self.events));
        }
        match self.reason {
            // Summed up once by the drain (one line, not one per batch).
            AbandonReason::Shutdown => {}
            AbandonReason::Uncompleted => {
                h.uncompleted.inc();
                tracing::error!(
                    destination = h.name(),
                    events = self.events,
                    persisted = self.kept,
                    "a delivery was dropped without a completion (this is a bug); its events \
                     count as abandoned"
                );
            }
            AbandonReason::OutputGone => {
                if let Some(suppressed) = h.loss_logs.allow() {
                    tracing::error!(
                        destination = h.name(),
                        events = self.events,
                        persisted = self.kept,
                        suppressed,
                        "the output is gone; a batch could not be delivered"
                    );
                }
            }
        }
    }
}

/// A buffer persisted a batch of `events` before its completion.
#[derive(Debug)]
pub struct BatchPersisted {
    pub events: u32,
}

impl InternalEvent for BatchPersisted {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.persisted.inc_by(u64::from(self.events));
        tracing::trace!(destination = h.name(), events = self.events, "persisted");
    }
}

/// A batch of `events` the output could not deliver was written to the disk buffer instead
/// of being lost.
#[derive(Debug)]
pub struct BatchRescued {
    pub events: u32,
}

impl InternalEvent for BatchRescued {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        h.rescued.inc_by(u64::from(self.events));
        tracing::debug!(
            destination = h.name(),
            events = self.events,
            "an undelivered batch was written to the disk buffer instead of being lost"
        );
    }
}

/// The kernel dropped `datagrams` UDP datagrams while the destination's disk buffer was
/// full and held the receivers back.
#[derive(Debug)]
pub struct BufferFullDropped {
    pub datagrams: u64,
}

impl InternalEvent for BufferFullDropped {
    type Handle = DestinationEvents;

    fn emit(self, h: &DestinationEvents) {
        if self.datagrams == 0 {
            return;
        }
        h.dropped_buffer_full.inc_by(self.datagrams);
        if let Some(suppressed) = h.loss_logs.allow() {
            tracing::warn!(
                destination = h.name(),
                datagrams = self.datagrams,
                suppressed,
                "UDP datagrams dropped by the kernel while the disk buffer was full"
            );
        }
    }
}

/// The handles of the events the routing sends nowhere.
#[derive(Debug)]
pub struct RoutingEvents {
    dropped: Counter,
    logs: RateLimit,
}

impl RoutingEvents {
    pub fn events(&self) -> u64 {
        self.dropped.get()
    }
}

/// Events whose destination set was empty (filtered alternates that replace every
/// destination with none, or only SELECT destinations and no alternate for them): dropped on
/// purpose, counted in `sluice_dropped_total{reason="no_destination"}`.
#[derive(Debug)]
pub struct RoutedNowhere {
    pub events: u64,
}

impl InternalEvent for RoutedNowhere {
    type Handle = RoutingEvents;

    fn emit(self, h: &RoutingEvents) {
        if self.events == 0 {
            return;
        }
        h.dropped.inc_by(self.events);
        if let Some(suppressed) = h.logs.allow() {
            tracing::info!(
                events = self.events,
                suppressed,
                "events routed to no destination are dropped (the alternates settings send \
                 them nowhere)"
            );
        }
    }
}

/// The handles of one destination's disk buffer.
#[derive(Debug)]
pub struct BufferEvents {
    name: Label,
    spilled: Counter,
    replayed: Counter,
}

impl BufferEvents {
    pub fn spilled_events(&self) -> u64 {
        self.spilled.get()
    }

    pub fn replayed_events(&self) -> u64 {
        self.replayed.get()
    }
}

/// Normal mode wrote a batch of `events` to disk because the output could not take it now.
#[derive(Debug)]
pub struct BufferSpilled {
    pub events: u32,
}

impl InternalEvent for BufferSpilled {
    type Handle = BufferEvents;

    fn emit(self, h: &BufferEvents) {
        h.spilled.inc_by(u64::from(self.events));
        tracing::trace!(
            destination = h.name.as_str(),
            events = self.events,
            "spilled to the disk buffer"
        );
    }
}

/// A batch of `events` read back from the disk buffer was finished by the output
/// (delivered or refused), and its record acknowledged.
#[derive(Debug)]
pub struct BufferReplayed {
    pub events: u32,
}

impl InternalEvent for BufferReplayed {
    type Handle = BufferEvents;

    fn emit(self, h: &BufferEvents) {
        h.replayed.inc_by(u64::from(self.events));
        tracing::trace!(
            destination = h.name.as_str(),
            events = self.events,
            "replayed from the disk buffer"
        );
    }
}
