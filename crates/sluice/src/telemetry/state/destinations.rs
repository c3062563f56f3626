//! The destinations as `/metrics` and `/health` read them: each one's output (is it
//! delivering?) and disk buffer, through traits the output kinds and the buffer implement.
//! What a destination *did* is counted by its completion events
//! ([`crate::telemetry::events::completion`]); this is what it *is*.

use std::sync::Arc;

use sluice_buffer::{BufferStats, FullReason};

use crate::telemetry::PromWriter;
use crate::telemetry::events::DestinationEvents;

/// Why an output cannot deliver now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// What fails, in words: `cannot deliver to Splunk HEC`.
    pub what: &'static str,
    /// The cause as the output last saw it, when it knows one.
    pub reason: Option<String>,
    /// Where to look when there is no reason: `see sluice_hec_requests_total`.
    pub hint: Option<&'static str>,
}

impl Problem {
    /// As `/health` states it for the default destination.
    pub fn sentence(&self) -> String {
        match (&self.reason, self.hint) {
            (Some(r), _) => format!("{}: {r}", self.what),
            (None, Some(h)) => format!("{} ({h})", self.what),
            (None, None) => self.what.to_owned(),
        }
    }
}

/// An output's state, read at scrape time. Each output kind that has one implements it (HEC:
/// its URL board; the JSON-lines file: whether its last write failed).
pub trait OutputState: Send + Sync + std::fmt::Debug {
    /// Why it cannot deliver now; `None` while it can.
    fn problem(&self) -> Option<Problem>;

    /// Samples only it has (HEC: each URL's consecutive failures), labelled with its
    /// destination. A family of the same name from several destinations is written once.
    fn render(&self, _destination: &str, _w: &mut PromWriter) {}

    /// Its name in SC4S's `_metrics` events as syslog-ng's statistics call a destination
    /// (`http`, `d_hec_fmt,http,<url>`), for the default destination.
    fn sc4s_instance(&self) -> Option<(&'static str, String)> {
        None
    }
}

/// A disk buffer's state, read at scrape time.
pub trait BufferState: Send + Sync + std::fmt::Debug {
    fn stats(&self) -> BufferStats;
    /// Reliable mode (`reliable(yes)`): every batch is persisted before it counts as safe.
    fn reliable(&self) -> bool;
    /// Why appends wait for room now (receivers are being held back), if they do.
    fn full(&self) -> Option<FullReason>;
    /// `/health`'s reason to say "degraded", if any.
    fn degraded(&self) -> Option<String>;
    /// Events found in the buffer at start, to replay.
    fn recovered_events(&self) -> u64;
    /// UDP kernel drops happened while the buffer was full.
    fn add_buffer_full_drops(&self, n: u64);
}

/// One running destination.
#[derive(Debug, Clone)]
pub struct DestinationState {
    /// Its `destination` label: `default`, an additional destination's lower-case id,
    /// `archive`.
    pub name: String,
    /// The default destination: its output's problems are sluice's (`/health` answers 503).
    pub default: bool,
    /// What it counts (delivered, refused, lost, in flight).
    pub events: Arc<DestinationEvents>,
    /// `None` for an output with nothing to read at scrape time (the archive).
    pub output: Option<Arc<dyn OutputState>>,
    pub buffer: Option<Arc<dyn BufferState>>,
}

/// Every running destination, in plan order: the default one first.
#[derive(Debug, Clone, Default)]
pub struct Destinations(pub Vec<DestinationState>);

impl Destinations {
    pub fn default_destination(&self) -> Option<&DestinationState> {
        self.0.iter().find(|d| d.default)
    }

    /// Every disk buffer.
    pub fn buffers(&self) -> impl Iterator<Item = &Arc<dyn BufferState>> {
        self.0.iter().filter_map(|d| d.buffer.as_ref())
    }

    /// The default destination's problem: sluice cannot deliver.
    pub(super) fn health(&self) -> Result<(), String> {
        let problem = self
            .default_destination()
            .and_then(|d| d.output.as_ref())
            .and_then(|o| o.problem());
        match problem {
            Some(p) => Err(p.sentence()),
            None => Ok(()),
        }
    }

    /// `/health`'s `buffer`, `destinations` and `degraded` members, added to `details`.
    pub(super) fn details(&self, details: &mut serde_json::Value) {
        if let Some(d) = self.default_destination()
            && let Some(b) = &d.buffer
        {
            let s = b.stats();
            details["buffer"] = serde_json::json!({
                "mode": if b.reliable() { "reliable" } else { "normal" },
                "events": s.events,
                "bytes": s.bytes,
                "max_bytes": s.max_bytes,
                "full": b.full().map(|r| r.as_str()),
            });
            let down = d.output.as_ref().and_then(|o| o.problem());
            let why = b.degraded().or_else(|| {
                down.map(|p| format!("{}; what it cannot take goes to the disk buffer", p.what))
            });
            if let Some(why) = why {
                details["degraded"] = why.into();
            }
        }
        let others: Vec<(&DestinationState, &Arc<dyn OutputState>)> = self
            .0
            .iter()
            .filter(|d| !d.default)
            .filter_map(|d| d.output.as_ref().map(|o| (d, o)))
            .collect();
        if others.is_empty() {
            return;
        }
        let mut degraded = Vec::new();
        let dests: Vec<serde_json::Value> = others
            .iter()
            .map(|(d, output)| {
                let name = &d.name;
                let buffer = d.buffer.as_ref().map(|b| (b.stats(), b.full()));
                let problem = output.problem();
                if let Some(p) = &problem {
                    degraded.push(format!(
                        "destination {name}: {} ({})",
                        p.what,
                        p.reason.clone().unwrap_or_default()
                    ));
                }
                if let Some((_, Some(r))) = &buffer {
                    degraded.push(format!(
                        "destination {name}: disk buffer full ({}): receivers are held back",
                        r.as_str()
                    ));
                }
                serde_json::json!({
                    "name": name,
                    "healthy": problem.is_none(),
                    "buffer_events": buffer.as_ref().map(|(s, _)| s.events),
                    "buffer_full": buffer.as_ref().and_then(|(_, f)| f.map(|r| r.as_str())),
                })
            })
            .collect();
        details["destinations"] = dests.into();
        if !degraded.is_empty() {
            let mut why = details["degraded"]
                .as_str()
                .map(str::to_owned)
                .into_iter()
                .collect::<Vec<_>>();
            why.extend(degraded);
            details["degraded"] = why.join("; ").into();
        }
    }

    /// The outputs' own samples, then every disk buffer's.
    pub(super) fn render(&self, w: &mut PromWriter) {
        for d in &self.0 {
            if let Some(o) = &d.output {
                o.render(&d.name, w);
            }
        }
        w.family(
            "sluice_archive_write_errors_total",
            "counter",
            "Events the archive (d_archive) could not write (also counted as dropped, reason \
             archive_rejected).",
        );
        w.sample(
            "sluice_archive_write_errors_total",
            &[],
            ARCHIVE_WRITE_ERRORS.load(std::sync::atomic::Ordering::Relaxed),
        );
        let buffers: Vec<(&str, &dyn BufferState)> = self
            .0
            .iter()
            .filter_map(|d| d.buffer.as_ref().map(|b| (d.name.as_str(), &**b)))
            .collect();
        if !buffers.is_empty() {
            render_buffers(w, &buffers);
        }
    }
}

/// Events the archive could not write (`sluice_archive_write_errors_total`): shown whether
/// or not an archive is configured.
pub static ARCHIVE_WRITE_ERRORS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// Every destination's disk buffer metrics, labelled `destination`.
fn render_buffers(w: &mut PromWriter, buffers: &[(&str, &dyn BufferState)]) {
    let stats: Vec<(&str, &dyn BufferState, BufferStats)> =
        buffers.iter().map(|(d, m)| (*d, *m, m.stats())).collect();
    type Gauge = fn(&BufferStats) -> u64;
    let gauges: [(&str, &str, Gauge); 5] = [
        (
            "sluice_buffer_bytes",
            "Disk buffer use: segment files plus records not yet written.",
            |s| s.bytes,
        ),
        (
            "sluice_buffer_max_bytes",
            "The disk buffer's budget (buffer.max_bytes, or DISKBUFSIZE x workers).",
            |s| s.max_bytes,
        ),
        (
            "sluice_buffer_events",
            "Events in the disk buffer not yet delivered.",
            |s| s.events,
        ),
        (
            "sluice_buffer_records",
            "Records (batches) in the disk buffer not yet delivered.",
            |s| s.records,
        ),
        (
            "sluice_buffer_segments",
            "Segment files of the disk buffer.",
            |s| s.segments as u64,
        ),
    ];
    for (name, help, v) in gauges {
        w.family(name, "gauge", help);
        for (d, m, s) in &stats {
            let mode = if m.reliable() { "reliable" } else { "normal" };
            w.sample(name, &[("destination", d), ("mode", mode)], v(s));
        }
    }
    w.family(
        "sluice_buffer_oldest_event_age_seconds",
        "gauge",
        "Age of the oldest event in the disk buffer (0 when it is empty).",
    );
    for (d, _, s) in &stats {
        w.sample(
            "sluice_buffer_oldest_event_age_seconds",
            &[("destination", d)],
            format!(
                "{:.3}",
                s.oldest_event_age.unwrap_or_default().as_secs_f64()
            ),
        );
    }
    // Not `sluice_buffer_full`: OpenMetrics names the `sluice_buffer_full_total` counter's
    // family that, and one exposition cannot hold two families of one name (Prometheus,
    // which asks for OpenMetrics first, would refuse the whole scrape).
    w.family(
        "sluice_buffer_refusing",
        "gauge",
        "1 while the disk buffer refuses appends and receivers are held back, by reason.",
    );
    for (d, m, _) in &stats {
        for r in [
            FullReason::MaxBytes,
            FullReason::DiskFull,
            FullReason::Backlog,
            FullReason::WriteFailing,
        ] {
            w.sample(
                "sluice_buffer_refusing",
                &[("destination", d), ("reason", r.as_str())],
                u8::from(m.full() == Some(r)),
            );
        }
    }
    // The counters and latency histograms are the buffer's internal events'
    // (`telemetry::events::buffer`); what is left here are levels read at scrape time.
    w.family(
        "sluice_buffer_recovered_events",
        "gauge",
        "Events found in the disk buffer at start, to deliver.",
    );
    for (d, m, _) in &stats {
        w.sample(
            "sluice_buffer_recovered_events",
            &[("destination", d)],
            m.recovered_events(),
        );
    }
}
