//! Telemetry: sluice's internal events, the metrics they count, the process metrics, the
//! `/metrics` exposition and the log output.
//!
//! # Internal events
//!
//! Everything that can happen to sluice that an operator may want to count or read about is
//! one type in [`events`] (as in Vector's `internal_events`): a batch received, a connection
//! closed with its reason, a TLS handshake failed, events delivered, dropped or retried, a
//! reload applied or rejected, a full window… Emitting an event does both things it stands
//! for: it logs (rate-limited where it can happen per batch or per connection) and it counts.
//! The metric families an event counts into are declared next to it, once, in its module's
//! `Families`; nothing else in the daemon increments a counter, so no counting logic exists
//! twice.
//!
//! Events that happen on a hot path are emitted on a **handle**: the metric handles of one
//! label set (a receiver thread, a stream port, a window), resolved once when the component
//! starts. Emitting is then an atomic add per counter, never a label lookup, and receive
//! threads still count a whole batch in plain integers first ([`events::LocalCounts`]) and
//! emit one [`events::Received`] per batch. Rare events (a reload, a handshake failure) look
//! their labels up when they happen.
//!
//! # Why `prometheus-client`
//!
//! It is the Prometheus project's own Rust client: typed metrics (`Counter`, `Gauge`,
//! `Histogram`, `Family<Labels, _>`) over atomics, label sets as derived structs (so a label is
//! a field and a bounded value an enum or a `&'static str`, never a formatted sentence), an
//! explicit [`Registry`] instead of a process-global recorder (each unit test builds its own
//! [`Metrics`] and reads exactly what its event counted), and a `Collector` trait for the
//! values read at scrape time (window occupancy, open connections, `/proc`). `metrics` +
//! `metrics-exporter-prometheus` was the alternative: its macros look a key up in a global
//! recorder on every call unless handles are kept anyway, it pulls in a dozen more crates,
//! and histograms default to summaries.
//!
//! # Exposition
//!
//! prometheus-client writes OpenMetrics. `/metrics` serves that to scrapers that ask for it
//! (`Accept: application/openmetrics-text`, as Prometheus does) and the classic text format
//! 0.0.4 to everyone else ([`expose::to_prometheus_text`]): `promtool check metrics`, `curl`,
//! and older agents read only that one.
//!
//! # The process-wide registry
//!
//! The daemon has one [`Metrics`], [`metrics()`]. Handles resolved from it keep counting
//! across reloads: a port replaced by a reload gets the same counters back for the same
//! labels, and a port that closes keeps its last values in the exposition, so totals never go
//! backwards.

pub mod events;
pub mod expose;
pub mod label;
pub mod logging;
pub mod process;
mod ratelimit;
pub mod sc4s;
pub mod state;
mod writer;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_buffer;
#[cfg(test)]
mod tests_completion;
#[cfg(test)]
mod tests_hec;

use std::sync::LazyLock;

use prometheus_client::registry::Registry;

pub use events::InternalEvent;
pub use label::{Label, LabelStr};
pub use ratelimit::RateLimit;
pub use writer::PromWriter;

/// Every metric family the internal events count into, and the process collector.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub(crate) receive: events::receive::Families,
    pub(crate) stream: events::stream::Families,
    pub(crate) tls: events::tls::Families,
    pub(crate) control: events::control::Families,
    pub(crate) delivery: events::delivery::Families,
    pub(crate) completion: events::completion::Families,
    pub(crate) hec: events::hec::Families,
    pub(crate) buffer: events::buffer::Families,
    pub(crate) forward: events::forward::Families,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with every family declared and nothing counted yet.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let receive = events::receive::Families::register(&mut registry);
        let stream = events::stream::Families::register(&mut registry);
        let tls = events::tls::Families::register(&mut registry);
        let control = events::control::Families::register(&mut registry);
        let delivery = events::delivery::Families::register(&mut registry);
        let completion = events::completion::Families::register(&mut registry);
        let hec = events::hec::Families::register(&mut registry);
        let buffer = events::buffer::Families::register(&mut registry);
        let forward = events::forward::Families::register(&mut registry);
        registry.register_collector(Box::new(process::ProcessCollector));
        Metrics {
            registry,
            receive,
            stream,
            tls,
            control,
            delivery,
            completion,
            hec,
            buffer,
            forward,
        }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// These families alone, as OpenMetrics text (with its `# EOF`), series in a fixed
    /// order ([`expose::sorted`]).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        expose::sorted(&out)
    }

    /// The handles of events routed to no destination ([`events::RoutedNowhere`]).
    pub fn routed_nowhere(&self) -> events::RoutingEvents {
        self.completion.routed_nowhere()
    }

    /// Events lost before they reached a destination (a bug, counted and logged by
    /// [`events::OutputGone`]).
    pub fn unrouted_lost(&self) -> u64 {
        self.completion.unrouted_lost().get()
    }

    /// Messages accepted into the pipeline by every receiver so far.
    pub fn received_messages(&self) -> u64 {
        self.receive.messages_total()
    }
}

/// The daemon's registry (see the module docs).
pub fn metrics() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    &METRICS
}
