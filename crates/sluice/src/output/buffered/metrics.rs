//! The disk buffer as `/metrics` and `/health` see it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use sluice_buffer::{BufferStats, FullReason, Writer};

use crate::admin::PromWriter;

/// The buffer as `/metrics` and `/health` see it.
#[derive(Debug)]
pub struct BufferMetrics {
    pub(super) writer: Writer,
    pub reliable: bool,
    pub dir: PathBuf,
    /// Spilled and replayed events ([`crate::telemetry::events::BufferSpilled`],
    /// [`crate::telemetry::events::BufferReplayed`]).
    pub(super) events: crate::telemetry::events::BufferEvents,
    /// Events found in the buffer at start, to replay.
    pub recovered_events: u64,
    /// Why the router is waiting for room right now (a [`full_code`]), 0 when it is not.
    pub(super) full_now: AtomicU8,
    /// The destination it buffers for: UDP drops while the buffer is full count there.
    pub(super) destination: std::sync::Arc<super::super::DestinationStats>,
}

fn full_code(r: FullReason) -> u8 {
    match r {
        FullReason::MaxBytes => 1,
        FullReason::DiskFull => 2,
        FullReason::Backlog => 3,
        FullReason::WriteFailing => 4,
    }
}

fn full_reason(code: u8) -> Option<FullReason> {
    Some(match code {
        1 => FullReason::MaxBytes,
        2 => FullReason::DiskFull,
        3 => FullReason::Backlog,
        4 => FullReason::WriteFailing,
        _ => return None,
    })
}

impl BufferMetrics {
    pub fn stats(&self) -> BufferStats {
        self.writer.stats()
    }

    pub fn spilled_events(&self) -> u64 {
        self.events.spilled_events()
    }

    pub fn replayed_events(&self) -> u64 {
        self.events.replayed_events()
    }

    /// Why appends wait for room now (receivers are being held back), if they do.
    pub fn full(&self) -> Option<FullReason> {
        full_reason(self.full_now.load(Relaxed))
    }

    /// UDP kernel drops happened while the buffer was full.
    pub fn add_buffer_full_drops(&self, n: u64) {
        use crate::telemetry::InternalEvent;
        crate::telemetry::events::BufferFullDropped { datagrams: n }
            .emit(self.destination.events());
    }

    pub fn buffer_full_drops(&self) -> u64 {
        self.destination.events().buffer_full_drops()
    }

    /// `/health`'s reason to say "degraded", if any: the buffer is full (receivers held
    /// back), or it holds events (the output is behind).
    pub fn degraded(&self) -> Option<String> {
        if let Some(r) = self.full() {
            return Some(format!(
                "disk buffer full ({r}): receivers are held back; UDP drops count as \
                 reason=\"buffer_full\""
            ));
        }
        let s = self.stats();
        (s.events > 0).then(|| {
            format!(
                "buffering: {} events ({} bytes) on disk wait for HEC",
                s.events, s.bytes
            )
        })
    }

    pub(super) fn set_full(&self, r: Option<FullReason>) {
        self.full_now.store(r.map_or(0, full_code), Relaxed);
    }
}

/// Every destination's disk buffer metrics, in the registry's style, labelled
/// `destination`.
pub fn render(w: &mut PromWriter, buffers: &[(&str, &BufferMetrics)]) {
    let stats: Vec<(&str, &BufferMetrics, sluice_buffer::BufferStats)> =
        buffers.iter().map(|(d, m)| (*d, *m, m.stats())).collect();
    type Gauge = fn(&sluice_buffer::BufferStats) -> u64;
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
            let mode = if m.reliable { "reliable" } else { "normal" };
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
            m.recovered_events,
        );
    }
}
