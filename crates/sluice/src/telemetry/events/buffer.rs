//! What a destination's disk buffer (`sluice-buffer`) does, as it happens. The buffer counts
//! nothing: it reports each append, refusal, flush, write error, deleted segment and damaged
//! record to its observer, and [`DiskBufferEvents`] — the observer of one destination's
//! buffer — emits the event below for each. The levels the buffer decides with (bytes and
//! events held, segments, the oldest event's age, why it refuses now) are read from its
//! stats at scrape time (`output::buffered::render`); the counters and histograms of
//! `/metrics` are counted only here.
//!
//! The buffer logs write errors and damage itself (once per cause, with the file and byte
//! offset), so these events log at debug and trace.

use std::path::Path;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use sluice_buffer::{BufferEvent, BufferObserver, FullReason, LATENCY_BUCKETS_US};

use super::InternalEvent;
use crate::telemetry::{Label, Metrics, RateLimit};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DestLabels {
    destination: Label,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    destination: Label,
    reason: &'static str,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS_US.iter().map(|&us| us as f64 / 1e6))
}

type HistogramFamily = Family<DestLabels, Histogram, fn() -> Histogram>;

#[derive(Debug)]
pub(crate) struct Families {
    appended_events: Family<DestLabels, Counter>,
    appended_bytes: Family<DestLabels, Counter>,
    refused: Family<ReasonLabels, Counter>,
    corrupt: Family<DestLabels, Counter>,
    corrupt_events: Family<DestLabels, Counter>,
    write_errors: Family<DestLabels, Counter>,
    write_seconds: HistogramFamily,
    fsync_seconds: HistogramFamily,
    commit_seconds: HistogramFamily,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families {
            appended_events: Family::default(),
            appended_bytes: Family::default(),
            refused: Family::default(),
            corrupt: Family::default(),
            corrupt_events: Family::default(),
            write_errors: Family::default(),
            write_seconds: Family::new_with_constructor(latency_histogram),
            fsync_seconds: Family::new_with_constructor(latency_histogram),
            commit_seconds: Family::new_with_constructor(latency_histogram),
        };
        r.register(
            "sluice_buffer_appended_events",
            "Events written to the disk buffer",
            f.appended_events.clone(),
        );
        r.register(
            "sluice_buffer_appended_bytes",
            "Bytes written to the disk buffer",
            f.appended_bytes.clone(),
        );
        r.register(
            "sluice_buffer_full",
            "Appends the disk buffer refused, by reason (each retried later; nothing is \
             dropped)",
            f.refused.clone(),
        );
        r.register(
            "sluice_buffer_corrupt_records",
            "Disk buffer records lost whole to damage (torn tail, damaged record header, \
             truncated or missing segment, no intact event)",
            f.corrupt.clone(),
        );
        r.register(
            "sluice_buffer_corrupt_events",
            "Disk buffer events lost to damage, where their number is known (events that \
             failed their checksum; the events of a record lost whole whose header was intact)",
            f.corrupt_events.clone(),
        );
        r.register(
            "sluice_buffer_write_errors",
            "Failed writes or fsyncs of the disk buffer (retried)",
            f.write_errors.clone(),
        );
        r.register(
            "sluice_buffer_write_seconds",
            "Time of the write calls of one disk buffer flush",
            f.write_seconds.clone(),
        );
        r.register(
            "sluice_buffer_fsync_seconds",
            "Time of the fdatasync calls of one disk buffer flush",
            f.fsync_seconds.clone(),
        );
        r.register(
            "sluice_buffer_commit_seconds",
            "From a group's first append to its fsync: what reliable mode waits at most",
            f.commit_seconds.clone(),
        );
        f
    }
}

/// The metric handles and log allowances of one destination's disk buffer; the observer
/// it is opened with (`Buffer::open_observed`).
#[derive(Debug)]
pub struct DiskBufferEvents {
    name: Label,
    appended_events: Counter,
    appended_bytes: Counter,
    /// By [`FullReason::index`].
    refused: [Counter; FullReason::ALL.len()],
    corrupt: Counter,
    corrupt_events: Counter,
    write_errors: Counter,
    write_seconds: Histogram,
    fsync_seconds: Histogram,
    commit_seconds: Histogram,
    refused_logs: RateLimit,
    error_logs: RateLimit,
}

impl DiskBufferEvents {
    /// The handles of destination `name`'s buffer in `m`; every series is there from now
    /// on, zeros included.
    pub fn register(m: &Metrics, name: &str) -> DiskBufferEvents {
        let f = &m.buffer;
        let name = Label::new(name);
        let dest = DestLabels {
            destination: name.clone(),
        };
        DiskBufferEvents {
            appended_events: f.appended_events.get_or_create_owned(&dest),
            appended_bytes: f.appended_bytes.get_or_create_owned(&dest),
            refused: FullReason::ALL.map(|r| {
                f.refused.get_or_create_owned(&ReasonLabels {
                    destination: name.clone(),
                    reason: r.as_str(),
                })
            }),
            corrupt: f.corrupt.get_or_create_owned(&dest),
            corrupt_events: f.corrupt_events.get_or_create_owned(&dest),
            write_errors: f.write_errors.get_or_create_owned(&dest),
            write_seconds: f.write_seconds.get_or_create_owned(&dest),
            fsync_seconds: f.fsync_seconds.get_or_create_owned(&dest),
            commit_seconds: f.commit_seconds.get_or_create_owned(&dest),
            refused_logs: RateLimit::default(),
            error_logs: RateLimit::default(),
            name,
        }
    }

    /// Events appended so far (the drain summary and tests read it back).
    pub fn appended_events(&self) -> u64 {
        self.appended_events.get()
    }

    /// Appends refused so far for `reason`.
    pub fn refused(&self, reason: FullReason) -> u64 {
        self.refused[reason.index()].get()
    }
}

impl BufferObserver for DiskBufferEvents {
    fn observe(&self, event: BufferEvent<'_>) {
        match event {
            BufferEvent::Appended { events, bytes } => BufferAppended { events, bytes }.emit(self),
            BufferEvent::Refused { reason } => BufferRefused { reason }.emit(self),
            BufferEvent::Flushed {
                records,
                write,
                fsync,
                commit,
            } => BufferFlushed {
                records,
                write,
                fsync,
                commit,
            }
            .emit(self),
            BufferEvent::WriteFailed { file, disk_full } => {
                BufferWriteFailed { file, disk_full }.emit(self)
            }
            BufferEvent::SegmentDeleted => BufferSegmentDeleted.emit(self),
            BufferEvent::Corrupt { records, events } => {
                BufferCorrupted { records, events }.emit(self)
            }
        }
    }
}

/// A record of `events` events (`bytes` on disk, header included) was appended.
#[derive(Debug)]
pub struct BufferAppended {
    pub events: u32,
    pub bytes: u64,
}

impl InternalEvent for BufferAppended {
    type Handle = DiskBufferEvents;

    fn emit(self, h: &DiskBufferEvents) {
        h.appended_events.inc_by(u64::from(self.events));
        h.appended_bytes.inc_by(self.bytes);
        tracing::trace!(
            destination = h.name.as_str(),
            events = self.events,
            bytes = self.bytes,
            "appended to the disk buffer"
        );
    }
}

/// The buffer refused an append for `reason`; the caller keeps the batch and waits for room.
#[derive(Debug)]
pub struct BufferRefused {
    pub reason: FullReason,
}

impl InternalEvent for BufferRefused {
    type Handle = DiskBufferEvents;

    fn emit(self, h: &DiskBufferEvents) {
        h.refused[self.reason.index()].inc();
        if let Some(suppressed) = h.refused_logs.allow() {
            tracing::debug!(
                destination = h.name.as_str(),
                reason = self.reason.as_str(),
                suppressed,
                "disk buffer refused an append ({}); waiting for room",
                self.reason
            );
        }
    }
}

/// One flush made `records` records durable.
#[derive(Debug)]
pub struct BufferFlushed {
    pub records: u64,
    pub write: Duration,
    pub fsync: Duration,
    pub commit: Option<Duration>,
}

impl InternalEvent for BufferFlushed {
    type Handle = DiskBufferEvents;

    fn emit(self, h: &DiskBufferEvents) {
        h.write_seconds.observe(self.write.as_secs_f64());
        h.fsync_seconds.observe(self.fsync.as_secs_f64());
        if let Some(c) = self.commit {
            h.commit_seconds.observe(c.as_secs_f64());
        }
        tracing::trace!(
            destination = h.name.as_str(),
            records = self.records,
            write_us = self.write.as_micros() as u64,
            fsync_us = self.fsync.as_micros() as u64,
            "disk buffer flushed"
        );
    }
}

/// A write or fsync of `file` failed; the buffer retries it (and logs the error once per
/// cause).
#[derive(Debug)]
pub struct BufferWriteFailed<'a> {
    pub file: &'a Path,
    pub disk_full: bool,
}

impl InternalEvent for BufferWriteFailed<'_> {
    type Handle = DiskBufferEvents;

    fn emit(self, h: &DiskBufferEvents) {
        h.write_errors.inc();
        if let Some(suppressed) = h.error_logs.allow() {
            tracing::debug!(
                destination = h.name.as_str(),
                file = %self.file.display(),
                disk_full = self.disk_full,
                suppressed,
                "disk buffer write failed; retrying"
            );
        }
    }
}

/// A finished segment file was deleted (counts nothing: its space shows in
/// `sluice_buffer_bytes`).
#[derive(Debug)]
pub struct BufferSegmentDeleted;

impl InternalEvent for BufferSegmentDeleted {
    type Handle = DiskBufferEvents;

    fn emit(self, h: &DiskBufferEvents) {
        tracing::debug!(
            destination = h.name.as_str(),
            "disk buffer segment finished and deleted"
        );
    }
}

/// Damage on disk cost `records` whole records and `events` events (the buffer logs each
/// with its file and offset).
#[derive(Debug)]
pub struct BufferCorrupted {
    pub records: u64,
    pub events: u64,
}

impl InternalEvent for BufferCorrupted {
    type Handle = DiskBufferEvents;

    fn emit(self, h: &DiskBufferEvents) {
        h.corrupt.inc_by(self.records);
        h.corrupt_events.inc_by(self.events);
        tracing::debug!(
            destination = h.name.as_str(),
            records = self.records,
            events = self.events,
            "disk buffer records or events lost to damage"
        );
    }
}
