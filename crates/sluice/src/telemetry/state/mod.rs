//! `/metrics` and `/health`: the daemon's state, read at scrape time, next to the counters
//! of the internal events ([`crate::telemetry`]).
//!
//! Everything that *happens* is counted by its internal event, in the process-wide registry.
//! What this module renders is what *is*: open connections, window occupancy, socket
//! buffers as the kernel granted them, the certificate's expiry, the configuration in force,
//! each HEC URL's consecutive failures (state the HEC client decides with), the disk buffer.
//! It is a prometheus-client `Collector` over that state, each family declared once, so the
//! receive path never takes a lock for telemetry. Delivery outcomes and what the HEC client
//! does are internal events, counted when they happen
//! ([`crate::telemetry::events::completion`], [`crate::telemetry::events::hec`]).
//!
//! Telemetry is the floor the components stand on: this module names none of them. What it
//! reads of a component is a telemetry type the component keeps up to date (its event
//! handles, [`ports::UdpPortMetrics`], [`ConfigState`]) or a trait of this module the
//! component implements ([`Occupancy`], [`ports::Connections`], [`destinations::OutputState`],
//! [`destinations::BufferState`]). The composition root fills the [`Registry`].
//!
//! Series come in a fixed order ([`crate::telemetry::expose::sorted`]).
//!
//! The ports and the destinations change with reloads: a new [`Ports`] or
//! [`Destinations`] is published after each one. Counters of a port or destination that
//! closed stay in the event registry, so totals never go back.

pub mod destinations;
pub mod ports;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use arc_swap::ArcSwap;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;

pub use destinations::{
    ARCHIVE_WRITE_ERRORS, BufferState, DestinationState, Destinations, OutputState, Problem,
};
pub use ports::{
    CertificateState, Connections, PortMetrics, Ports, TcpPortMetrics, UdpPortMetrics,
};

use crate::telemetry::PromWriter;

/// What the status server asks: health, its details, the metrics.
pub trait Status: Send + Sync + 'static {
    /// `Err(reason)` when sluice cannot currently receive or deliver.
    fn health(&self) -> Result<(), String>;
    /// OpenMetrics text exposition format (ending with `# EOF`).
    fn render_metrics(&self) -> String;
    /// Extra members of the `/health` JSON object, after `status` (an object; others are
    /// ignored).
    fn details(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// A bounded resource read at scrape time: an input window (in events), the memory budget
/// (in bytes).
pub trait Occupancy: Send + Sync + std::fmt::Debug {
    /// The `window` label.
    fn name(&self) -> &str;
    fn in_use(&self) -> u64;
    fn capacity(&self) -> u64;
}

/// The configuration in force, for `/metrics` (reloads are counted by the
/// `ConfigReloaded` and `ConfigReloadFailed` events).
#[derive(Debug, Default)]
pub struct ConfigState {
    /// Hash of the configuration in force and when it was loaded (Unix seconds).
    loaded: Mutex<(String, f64)>,
    restart_required: AtomicBool,
}

impl ConfigState {
    /// Records the configuration now in force.
    pub fn loaded(&self, hash: String, restart_required: bool) {
        let now = jiff::Timestamp::now().as_millisecond() as f64 / 1000.0;
        *self.loaded.lock().unwrap_or_else(PoisonError::into_inner) = (hash, now);
        self.restart_required
            .store(restart_required, Ordering::Relaxed);
    }

    /// The hash of the configuration in force and when it was loaded (Unix seconds).
    pub fn in_force(&self) -> (String, f64) {
        self.loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the last loaded configuration changed settings only a restart applies.
    pub fn restart_required(&self) -> bool {
        self.restart_required.load(Ordering::Relaxed)
    }
}

/// Everything `/metrics` and `/health` read. The ports and destinations are swapped by
/// reloads; the rest are atomics updated by their owners.
#[derive(Debug, Clone)]
pub struct Registry {
    pub started: Instant,
    pub ports: Arc<ArcSwap<Ports>>,
    /// The input windows, then the memory budget.
    pub windows: Vec<Arc<dyn Occupancy>>,
    pub memory: Arc<dyn Occupancy>,
    pub destinations: Arc<ArcSwap<Destinations>>,
    /// Set when shutdown begins: the receivers are stopping.
    pub stopping: Arc<AtomicBool>,
    /// The configuration in force.
    pub config: Arc<ConfigState>,
}

impl Registry {
    /// Messages accepted into the pipeline so far (all listeners, closed ones included).
    pub fn received_total(&self) -> u64 {
        crate::telemetry::metrics().received_messages()
    }

    /// Events of TCP chunks that never reached a destination (their port's combiner was
    /// gone: a bug, counted and logged when it happens by `OutputGone`).
    pub fn chunks_lost_total(&self) -> u64 {
        crate::telemetry::metrics().unrouted_lost()
    }

    /// OpenMetrics text: the internal events' families, then this state, series in a fixed
    /// order.
    pub fn render(&self) -> String {
        let mut state = prometheus_client::registry::Registry::default();
        state.register_collector(Box::new(self.clone()));
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode_registry(
            &mut out,
            crate::telemetry::metrics().registry(),
        );
        let _ = prometheus_client::encoding::text::encode_registry(&mut out, &state);
        let _ = prometheus_client::encoding::text::encode_eof(&mut out);
        crate::telemetry::expose::sorted(&out)
    }
}

impl Status for Registry {
    fn health(&self) -> Result<(), String> {
        if self.stopping.load(Ordering::Relaxed) {
            return Err("shutting down".into());
        }
        self.destinations.load().health()
    }

    /// Each stream port's open connections against its limit: at the limit, new senders
    /// only get in by evicting idle ones, which is worth seeing before it happens. Each
    /// UDP port's balancing, with why it fell back, in words. The destinations that cannot
    /// deliver, and the disk buffers.
    fn details(&self) -> serde_json::Value {
        let mut details = self.ports.load().details();
        self.destinations.load().details(&mut details);
        details
    }

    fn render_metrics(&self) -> String {
        self.render()
    }
}

/// One family of samples computed at scrape time.
fn family<L: EncodeLabelSet>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    samples: impl IntoIterator<Item = (L, f64)>,
) -> Result<(), std::fmt::Error> {
    let mut m = enc.encode_descriptor(name, help, None, kind)?;
    for (labels, v) in samples {
        let mut s = m.encode_family(&labels)?;
        match kind {
            MetricType::Counter => s.encode_counter::<NoLabelSet, _, f64>(&v, None)?,
            _ => s.encode_gauge(&v)?,
        }
    }
    Ok(())
}

/// A family with one unlabelled sample.
fn single(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: f64,
) -> Result<(), std::fmt::Error> {
    enc.encode_descriptor(name, help, None, MetricType::Gauge)?
        .encode_gauge(&v)
}

impl Collector for Registry {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let enc = &mut enc;
        single(
            enc,
            "sluice_uptime_seconds",
            "Seconds since sluice started.",
            self.started.elapsed().as_secs_f64(),
        )?;
        self.ports.load().encode(enc)?;
        encode_config(enc, &self.config)?;
        family(
            enc,
            "sluice_window_events",
            "Events received and not yet delivered, per input window.",
            MetricType::Gauge,
            self.windows
                .iter()
                .map(|w| ([("window", w.name())], w.in_use() as f64)),
        )?;
        family(
            enc,
            "sluice_window_capacity",
            "Input window size in events.",
            MetricType::Gauge,
            self.windows
                .iter()
                .map(|w| ([("window", w.name())], w.capacity() as f64)),
        )?;
        single(
            enc,
            "sluice_memory_in_flight_bytes",
            "Encoded bytes received and not yet delivered (all listeners; KiB granularity).",
            self.memory.in_use() as f64,
        )?;
        single(
            enc,
            "sluice_memory_budget_bytes",
            "window.max_bytes: the bound on sluice_memory_in_flight_bytes.",
            self.memory.capacity() as f64,
        )?;
        let mut w = PromWriter::new();
        self.destinations.load().render(&mut w);
        w.encode(enc)
    }
}

fn encode_config(enc: &mut DescriptorEncoder, config: &ConfigState) -> Result<(), std::fmt::Error> {
    let (hash, at) = config.in_force();
    family(
        enc,
        "sluice_config_hash_info",
        "Hash of the configuration in force (settings and context files), as logged at start \
         and reload.",
        MetricType::Gauge,
        [([("hash", hash.as_str())], 1.0)],
    )?;
    single(
        enc,
        "sluice_config_loaded_timestamp_seconds",
        "When the configuration in force was loaded (Unix seconds).",
        at,
    )?;
    single(
        enc,
        "sluice_config_restart_required",
        "1 when the last loaded configuration changed settings that only a restart applies \
         (logged at the reload).",
        f64::from(u8::from(config.restart_required())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_in_force_is_kept_for_metrics() {
        let s = ConfigState::default();
        assert!(!s.restart_required());
        s.loaded("abc".into(), true);
        let (hash, at) = s.in_force();
        assert_eq!(hash, "abc");
        assert!(at > 1.6e9, "{at}");
        assert!(s.restart_required());
    }
}
