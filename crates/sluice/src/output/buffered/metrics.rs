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
    w.family(
        "sluice_buffer_full",
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
                "sluice_buffer_full",
                &[("destination", d), ("reason", r.as_str())],
                u8::from(m.full() == Some(r)),
            );
        }
    }
    w.family(
        "sluice_buffer_full_total",
        "counter",
        "Appends the disk buffer refused, by reason (each retried later; nothing is dropped).",
    );
    for (d, _, s) in &stats {
        for (r, n) in [
            (FullReason::MaxBytes, s.full_max_bytes_total),
            (FullReason::DiskFull, s.full_disk_total),
            (FullReason::Backlog, s.full_backlog_total),
            (FullReason::WriteFailing, s.full_write_failing_total),
        ] {
            w.sample(
                "sluice_buffer_full_total",
                &[("destination", d), ("reason", r.as_str())],
                n,
            );
        }
    }
    type Counter = fn(&BufferMetrics, &sluice_buffer::BufferStats) -> u64;
    let counters: [(&str, &str, Counter); 5] = [
        (
            "sluice_buffer_appended_events_total",
            "Events written to the disk buffer.",
            |_, s| s.appended_events_total,
        ),
        (
            "sluice_buffer_appended_bytes_total",
            "Bytes written to the disk buffer.",
            |_, s| s.appended_bytes_total,
        ),
        (
            "sluice_buffer_recovered_events",
            "Events found in the disk buffer at start, to deliver.",
            |m, _| m.recovered_events,
        ),
        (
            "sluice_buffer_corrupt_records_total",
            "Disk buffer records lost to damage (torn tail, flipped bits, truncated segment).",
            |_, s| s.corrupt_records,
        ),
        (
            "sluice_buffer_write_errors_total",
            "Failed writes or fsyncs of the disk buffer (retried).",
            |_, s| s.write_errors_total,
        ),
    ];
    for (name, help, v) in counters {
        let kind = if name.ends_with("_total") {
            "counter"
        } else {
            "gauge"
        };
        w.family(name, kind, help);
        for (d, m, s) in &stats {
            w.sample(name, &[("destination", d)], v(m, s));
        }
    }
    type Latency = fn(&sluice_buffer::BufferStats) -> &sluice_buffer::LatencyHistogram;
    let histograms: [(&str, &str, Latency); 3] = [
        (
            "sluice_buffer_write_seconds",
            "Time of the write calls of one disk buffer flush.",
            |s| &s.write_latency,
        ),
        (
            "sluice_buffer_fsync_seconds",
            "Time of the fdatasync calls of one disk buffer flush.",
            |s| &s.fsync_latency,
        ),
        (
            "sluice_buffer_commit_seconds",
            "From a group's first append to its fsync: what reliable mode waits at most.",
            |s| &s.commit_latency,
        ),
    ];
    for (name, help, h) in histograms {
        w.family(name, "histogram", help);
        for (d, _, s) in &stats {
            let h = h(s);
            let mut count = 0;
            for (le, n) in h.cumulative() {
                let le = if le.is_infinite() {
                    "+Inf".to_string()
                } else {
                    le.to_string()
                };
                w.sample(
                    &format!("{name}_bucket"),
                    &[("destination", d), ("le", &le)],
                    n,
                );
                count = n;
            }
            let sum = h.mean().map_or(0.0, |m| m.as_secs_f64() * count as f64);
            w.sample(
                &format!("{name}_sum"),
                &[("destination", d)],
                format!("{sum:.6}"),
            );
            w.sample(&format!("{name}_count"), &[("destination", d)], count);
        }
    }
}
