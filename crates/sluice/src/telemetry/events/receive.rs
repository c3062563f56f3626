//! What receivers count: messages and bytes accepted, by grammar, truncated; batches handed
//! on; and batches lost because the next stage was gone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use sluice_proto::Format;
use sluice_proto::classify::Classification;

use super::InternalEvent;
use crate::telemetry::{Label, Metrics, RateLimit};

/// One receiver: a UDP socket's thread (`socket` = its index) or a stream port (`socket`
/// empty: its connections share one set).
/// Counts kept by one receiver in plain integers while it works through a batch of input,
/// then emitted once as a [`Received`] event on its [`ReceiverCounters`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalCounts {
    pub messages: u64,
    pub bytes: u64,
    pub by_format: [u64; 3],
    pub truncated: u64,
    /// Messages taken into a multi-part group instead of encoded: their window permits go
    /// back at once (a UDP receiver returns them; a TCP chunk's return with the chunk).
    pub absorbed: u64,
}

impl LocalCounts {
    pub fn flush_into(&mut self, shared: &ReceiverCounters) {
        Received(self).emit(shared);
    }
}

pub const FORMATS: [Format; 3] = [Format::Rfc5424, Format::Rfc3164, Format::Unparsed];

pub fn format_index(f: Format) -> usize {
    match f {
        Format::Rfc5424 => 0,
        Format::Rfc3164 => 1,
        Format::Unparsed => 2,
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReceiverLabels {
    pub listener: Label,
    pub transport: &'static str,
    pub port: String,
    pub socket: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FormatLabels {
    format: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TransportLabels {
    transport: &'static str,
}

#[derive(Debug)]
pub(crate) struct Families {
    received: Family<ReceiverLabels, Counter>,
    received_bytes: Family<ReceiverLabels, Counter>,
    batches: Family<ReceiverLabels, Counter>,
    parsed: Family<FormatLabels, Counter>,
    truncated: Family<TransportLabels, Counter>,
    /// One handle per label set, so a port reopened by a reload continues its counters and
    /// the daemon can total them.
    handles: Mutex<HashMap<ReceiverLabels, Arc<ReceiverCounters>>>,
    classified_logs: RateLimit,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families {
            received: Family::default(),
            received_bytes: Family::default(),
            batches: Family::default(),
            parsed: Family::default(),
            truncated: Family::default(),
            handles: Mutex::default(),
            classified_logs: RateLimit::default(),
        };
        r.register(
            "sluice_received",
            "Messages accepted into the pipeline (parsed and encoded into a batch), per \
             receiver",
            f.received.clone(),
        );
        r.register(
            "sluice_received_bytes",
            "Bytes of accepted messages",
            f.received_bytes.clone(),
        );
        r.register(
            "sluice_batches",
            "Batches (UDP) or chunks (streams) handed to the next stage",
            f.batches.clone(),
        );
        r.register(
            "sluice_parsed",
            "Messages by the grammar they were read with",
            f.parsed.clone(),
        );
        r.register(
            "sluice_truncated",
            "Messages cut to listen.max_message_size (delivered truncated)",
            f.truncated.clone(),
        );
        f
    }

    pub(crate) fn messages_total(&self) -> u64 {
        let handles = self.handles.lock().unwrap_or_else(|e| e.into_inner());
        handles.values().map(|h| h.messages()).sum()
    }
}

/// The metric handles of one receiver. `Default` gives handles that belong to no registry
/// (benches, tests of other modules).
#[derive(Debug, Default)]
pub struct ReceiverCounters {
    messages: Counter,
    bytes: Counter,
    batches: Counter,
    by_format: [Counter; 3],
    truncated: Counter,
    lost: Counter,
    received_logs: RateLimit,
    batch_logs: RateLimit,
    lost_logs: RateLimit,
    listener: Option<ReceiverLabels>,
}

impl ReceiverCounters {
    /// The handles of receiver `labels` in `m` (the same ones for the same labels).
    pub fn register(
        m: &Metrics,
        listener: &str,
        transport: &'static str,
        port: u16,
        socket: Option<usize>,
    ) -> Arc<ReceiverCounters> {
        let labels = ReceiverLabels {
            listener: Label::new(listener),
            transport,
            port: port.to_string(),
            socket: socket.map(|s| s.to_string()).unwrap_or_default(),
        };
        let f = &m.receive;
        let mut handles = f.handles.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = handles.get(&labels) {
            return h.clone();
        }
        // UDP and the stream transports are told apart, as before; TLS and RFC 5425 truncate
        // in the same framing as TCP.
        let family = if transport == "udp" { "udp" } else { "tcp" };
        let h = Arc::new(ReceiverCounters {
            messages: f.received.get_or_create_owned(&labels),
            bytes: f.received_bytes.get_or_create_owned(&labels),
            batches: f.batches.get_or_create_owned(&labels),
            by_format: FORMATS.map(|format| {
                f.parsed.get_or_create_owned(&FormatLabels {
                    format: format.as_str(),
                })
            }),
            truncated: f
                .truncated
                .get_or_create_owned(&TransportLabels { transport: family }),
            // Counted where every loss is: `sluice_dropped_total`, before any destination.
            lost: m.completion.unrouted_lost(),
            listener: Some(labels.clone()),
            ..ReceiverCounters::default()
        });
        handles.insert(labels, h.clone());
        h
    }

    /// Messages accepted so far.
    pub fn messages(&self) -> u64 {
        self.messages.get()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.get()
    }

    pub fn truncated(&self) -> u64 {
        self.truncated.get()
    }

    pub fn parsed(&self, format: Format) -> u64 {
        self.by_format[format_index(format)].get()
    }

    pub fn batches(&self) -> u64 {
        self.batches.get()
    }

    /// Events lost because the next stage was gone.
    pub fn lost_events(&self) -> u64 {
        self.lost.get()
    }

    fn port(&self) -> &str {
        self.listener.as_ref().map_or("", |l| l.port.as_str())
    }
}

/// A receiver finished a batch of input (one `recvmmsg`, one TCP read): its counts, kept in
/// plain integers meanwhile, are added once. Resets `counts`.
#[derive(Debug)]
pub struct Received<'a>(pub &'a mut LocalCounts);

impl InternalEvent for Received<'_> {
    type Handle = ReceiverCounters;

    fn emit(self, h: &ReceiverCounters) {
        let c = std::mem::take(self.0);
        if c.messages == 0 && c.truncated == 0 {
            return;
        }
        h.messages.inc_by(c.messages);
        h.bytes.inc_by(c.bytes);
        for (counter, n) in h.by_format.iter().zip(c.by_format) {
            if n > 0 {
                counter.inc_by(n);
            }
        }
        if c.truncated > 0 {
            h.truncated.inc_by(c.truncated);
        }
        if tracing::enabled!(tracing::Level::TRACE)
            && let Some(suppressed) = h.received_logs.allow()
        {
            tracing::trace!(
                port = h.port(),
                messages = c.messages,
                bytes = c.bytes,
                truncated = c.truncated,
                suppressed,
                "received"
            );
        }
    }
}

/// A finished batch (or stream chunk) was handed to the next stage.
#[derive(Debug)]
pub struct BatchEmitted {
    pub events: u32,
    pub bytes: usize,
}

impl InternalEvent for BatchEmitted {
    type Handle = ReceiverCounters;

    fn emit(self, h: &ReceiverCounters) {
        h.batches.inc();
        if tracing::enabled!(tracing::Level::TRACE)
            && let Some(suppressed) = h.batch_logs.allow()
        {
            tracing::trace!(
                port = h.port(),
                events = self.events,
                bytes = self.bytes,
                suppressed,
                "batch handed on"
            );
        }
    }
}

/// A batch could not be handed over because the next stage was gone: a bug or a crash of
/// that stage, never expected. Its events are lost, and said so.
#[derive(Debug)]
pub struct OutputGone {
    pub events: u32,
}

impl InternalEvent for OutputGone {
    type Handle = ReceiverCounters;

    fn emit(self, h: &ReceiverCounters) {
        h.lost.inc_by(u64::from(self.events));
        if let Some(suppressed) = h.lost_logs.allow() {
            tracing::error!(
                port = h.port(),
                events = self.events,
                suppressed,
                "the next pipeline stage is gone; a batch could not be handed over (this is a \
                 bug)"
            );
        }
    }
}

/// How one message was classified: sluice's own decision, for an operator debugging a
/// sourcetype. Counted nowhere (the outcome space is every vendor); logged at debug, at most
/// once per interval, and costs one relaxed atomic load when debug is off.
#[derive(Debug)]
pub struct Classified<'c, 'm, 't> {
    pub class: &'c Classification<'m, 't>,
    pub format: Format,
}

impl InternalEvent for Classified<'_, '_, '_> {
    type Handle = Metrics;

    #[inline]
    fn emit(self, m: &Metrics) {
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Some(suppressed) = m.receive.classified_logs.allow()
        {
            let c = self.class;
            tracing::debug!(
                format = self.format.as_str(),
                app = c.app,
                sourcetype = ?c.sourcetype,
                index = ?c.index,
                vendor = ?c.vendor,
                product = ?c.product,
                suppressed,
                "classified"
            );
        }
    }
}
