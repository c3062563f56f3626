//! The daemon's own decisions: configuration reloads, and receivers stopping because a
//! window or the memory budget is full.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::InternalEvent;
use crate::telemetry::{Metrics, RateLimit};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WindowLabels {
    window: &'static str,
}

type SecondsCounter = Counter<f64, std::sync::atomic::AtomicU64>;

#[derive(Debug, Default)]
pub(crate) struct Families {
    reloads: Family<ResultLabels, Counter>,
    window_full: Family<WindowLabels, Counter>,
    window_wait: Family<WindowLabels, SecondsCounter>,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families::default();
        r.register(
            "sluice_reload",
            "Configuration reloads (SIGHUP, sluice reload, POST /reload) by result; a failed \
             one leaves the running configuration in force",
            f.reloads.clone(),
        );
        for result in ["ok", "failed"] {
            let _ = f.reloads.get_or_create(&ResultLabels { result });
        }
        r.register(
            "sluice_window_full",
            "Times a receiver found its window full and stopped reading until delivery caught \
             up (window=memory: the memory budget, window.max_bytes)",
            f.window_full.clone(),
        );
        r.register(
            "sluice_window_wait_seconds",
            "Time receivers spent waiting for window space",
            f.window_wait.clone(),
        );
        f
    }
}

/// A reload was applied.
#[derive(Debug)]
pub struct ConfigReloaded<'a> {
    /// What changed, as answered to `sluice reload`.
    pub summary: &'a str,
}

impl InternalEvent for ConfigReloaded<'_> {
    type Handle = Metrics;

    fn emit(self, m: &Metrics) {
        m.control
            .reloads
            .get_or_create(&ResultLabels { result: "ok" })
            .inc();
        tracing::debug!(summary = self.summary, "reload applied");
    }
}

/// A reload was rejected; the running configuration stays in force.
#[derive(Debug)]
pub struct ConfigReloadFailed<'a> {
    pub error: &'a str,
}

impl InternalEvent for ConfigReloadFailed<'_> {
    type Handle = Metrics;

    fn emit(self, m: &Metrics) {
        m.control
            .reloads
            .get_or_create(&ResultLabels { result: "failed" })
            .inc();
        tracing::error!(
            "reload rejected, the running configuration stays in force: {}",
            self.error
        );
    }
}

/// The metric handles of one window (or of the memory budget). `Default` gives handles that
/// belong to no registry (tests).
#[derive(Debug, Default)]
pub struct WindowEvents {
    name: &'static str,
    full: Counter,
    waited: SecondsCounter,
    logs: RateLimit,
}

impl WindowEvents {
    pub fn register(m: &Metrics, name: &'static str) -> WindowEvents {
        let labels = WindowLabels { window: name };
        WindowEvents {
            name,
            full: m.control.window_full.get_or_create_owned(&labels),
            waited: m.control.window_wait.get_or_create_owned(&labels),
            logs: RateLimit::default(),
        }
    }

    pub fn full_count(&self) -> u64 {
        self.full.get()
    }

    pub fn waited(&self) -> Duration {
        Duration::from_secs_f64(self.waited.get())
    }
}

/// A receiver found its window full and stops reading until delivery makes room (or until
/// shutdown): sluice's backpressure decision, counted when it starts (so a stall shows while
/// it lasts) and logged at debug.
#[derive(Debug)]
pub struct WindowFull {
    /// Permits asked for.
    pub wanted: u32,
}

impl InternalEvent for WindowFull {
    type Handle = WindowEvents;

    fn emit(self, h: &WindowEvents) {
        h.full.inc();
        if tracing::enabled!(tracing::Level::DEBUG)
            && let Some(suppressed) = h.logs.allow()
        {
            tracing::debug!(
                window = h.name,
                wanted = self.wanted,
                suppressed,
                "window full: stopped reading until delivery makes room"
            );
        }
    }
}

/// The wait that a [`WindowFull`] started ended after `waited`.
#[derive(Debug)]
pub struct WindowWaitEnded {
    pub waited: Duration,
}

impl InternalEvent for WindowWaitEnded {
    type Handle = WindowEvents;

    fn emit(self, h: &WindowEvents) {
        h.waited.inc_by(self.waited.as_secs_f64());
        tracing::trace!(
            window = h.name,
            waited_ms = self.waited.as_millis() as u64,
            "window wait ended"
        );
    }
}
