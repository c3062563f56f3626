//! What the buffer tells its user about what happens, as it happens.
//!
//! The buffer counts nothing for reporting. Every append, refusal, flush, write error,
//! segment deletion and damaged record is handed, once, to the [`BufferObserver`] it was
//! opened with ([`Buffer::open_observed`](crate::Buffer::open_observed)); the daemon turns
//! each into one of its internal events (which log and count them), a test into a
//! [`Tally`]. What the buffer does keep is the state it decides with — bytes and records
//! held, the pending queue, why appends are refused now — readable as levels in
//! [`BufferStats`](crate::BufferStats).
//!
//! Events are called on the append path and from the writer thread, some with the buffer's
//! lock held: an observer must be cheap, must not block, and must not call back into the
//! buffer.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use crate::error::FullReason;

/// Something that happened in the buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BufferEvent<'a> {
    /// A record of `events` events took `bytes` bytes (header included) of the buffer.
    Appended { events: u32, bytes: u64 },
    /// An append was refused with [`AppendError::Full`](crate::AppendError::Full); the
    /// caller keeps the record and retries.
    Refused { reason: FullReason },
    /// One round of the writer thread made `records` records durable: its write calls took
    /// `write`, its fdatasync calls `fsync`; `commit` is how long the oldest of them waited
    /// from its append (what a reliable-mode caller waits at most).
    Flushed {
        records: u64,
        write: Duration,
        fsync: Duration,
        commit: Option<Duration>,
    },
    /// A write or fsync of `file` failed (`disk_full`: ENOSPC); it is retried with backoff
    /// and appends are refused meanwhile. The buffer logs the error itself, once per cause.
    WriteFailed { file: &'a Path, disk_full: bool },
    /// A finished segment file was deleted.
    SegmentDeleted,
    /// Damage on disk cost `records` whole records and `events` events: found at open (torn
    /// tail, skipped ids; `events` counts the events of those whose header could still be
    /// read, the others' went with their headers) or when read (a record with no intact
    /// event: 1 record and its events; a record with some damaged events: 0 records and
    /// those events). The buffer logs each with its file and offset.
    Corrupt { records: u64, events: u64 },
}

/// Told about everything the buffer does; see the [module docs](self).
pub trait BufferObserver: Send + Sync + std::fmt::Debug {
    fn observe(&self, event: BufferEvent<'_>) {
        let _ = event;
    }
}

/// Observes nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoObserver;

impl BufferObserver for NoObserver {}

/// Totals of every event, in plain atomics: for tests and tools that want numbers without
/// a metrics library (the daemon counts through its own internal events instead).
#[derive(Debug, Default)]
pub struct Tally {
    pub appended_records: AtomicU64,
    pub appended_events: AtomicU64,
    pub appended_bytes: AtomicU64,
    /// Refusals by [`FullReason::index`].
    pub refused: [AtomicU64; FullReason::ALL.len()],
    pub flushes: AtomicU64,
    pub flushed_records: AtomicU64,
    /// Flushes whose commit latency was measured.
    pub commits: AtomicU64,
    pub write_errors: AtomicU64,
    pub disk_full_errors: AtomicU64,
    pub deleted_segments: AtomicU64,
    pub corrupt_records: AtomicU64,
    pub corrupt_events: AtomicU64,
}

impl Tally {
    pub fn refused(&self, reason: FullReason) -> u64 {
        self.refused[reason.index()].load(Relaxed)
    }

    /// Shorthand for reading a counter.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Relaxed)
    }
}

impl BufferObserver for Tally {
    fn observe(&self, event: BufferEvent<'_>) {
        match event {
            BufferEvent::Appended { events, bytes } => {
                self.appended_records.fetch_add(1, Relaxed);
                self.appended_events.fetch_add(u64::from(events), Relaxed);
                self.appended_bytes.fetch_add(bytes, Relaxed);
            }
            BufferEvent::Refused { reason } => {
                self.refused[reason.index()].fetch_add(1, Relaxed);
            }
            BufferEvent::Flushed {
                records, commit, ..
            } => {
                self.flushes.fetch_add(1, Relaxed);
                self.flushed_records.fetch_add(records, Relaxed);
                if commit.is_some() {
                    self.commits.fetch_add(1, Relaxed);
                }
            }
            BufferEvent::WriteFailed { disk_full, .. } => {
                self.write_errors.fetch_add(1, Relaxed);
                if disk_full {
                    self.disk_full_errors.fetch_add(1, Relaxed);
                }
            }
            BufferEvent::SegmentDeleted => {
                self.deleted_segments.fetch_add(1, Relaxed);
            }
            BufferEvent::Corrupt { records, events } => {
                self.corrupt_records.fetch_add(records, Relaxed);
                self.corrupt_events.fetch_add(events, Relaxed);
            }
        }
    }
}

impl<T: BufferObserver + ?Sized> BufferObserver for std::sync::Arc<T> {
    fn observe(&self, event: BufferEvent<'_>) {
        (**self).observe(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_each_event() {
        let t = Tally::default();
        t.observe(BufferEvent::Appended {
            events: 3,
            bytes: 100,
        });
        t.observe(BufferEvent::Refused {
            reason: FullReason::Backlog,
        });
        t.observe(BufferEvent::Flushed {
            records: 1,
            write: Duration::ZERO,
            fsync: Duration::ZERO,
            commit: Some(Duration::ZERO),
        });
        t.observe(BufferEvent::WriteFailed {
            file: Path::new("x"),
            disk_full: true,
        });
        t.observe(BufferEvent::Corrupt {
            records: 2,
            events: 5,
        });
        assert_eq!(Tally::get(&t.appended_events), 3);
        assert_eq!(Tally::get(&t.appended_bytes), 100);
        assert_eq!(t.refused(FullReason::Backlog), 1);
        assert_eq!(t.refused(FullReason::MaxBytes), 0);
        assert_eq!(Tally::get(&t.commits), 1);
        assert_eq!(Tally::get(&t.disk_full_errors), 1);
        assert_eq!(Tally::get(&t.corrupt_records), 2);
        assert_eq!(Tally::get(&t.corrupt_events), 5);
    }
}
