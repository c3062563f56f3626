//! The in-memory index and bookkeeping shared by writer, readers and the flusher thread.
//!
//! Everything here lives behind one mutex ([`crate::buffer::Inner::state`]) and does no IO.
//! The index holds one small entry per record (id, offset, length, events, timestamp), which
//! is what lets readers find records without parsing, stats report exact event counts and the
//! flusher decide which segments are finished.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use bytes::Bytes;

use crate::config::DurabilityMode;
use crate::error::FullReason;
use crate::format::from_micros;
use crate::stats::{BufferStats, ReaderStats};

#[derive(Debug, Clone, Copy)]
pub(crate) struct RecMeta {
    pub id: u64,
    pub offset: u64,
    pub len: u64,
    pub events: u32,
    pub timestamp_micros: i64,
    /// Found damaged when read, no event intact; readers skip it.
    pub corrupt: bool,
    /// Some of its events were found damaged when read and the loss reported: a reader that
    /// reads it again delivers the intact ones without counting the loss twice.
    pub damage_reported: bool,
}

#[derive(Debug)]
pub(crate) struct SegmentMeta {
    pub id: u64,
    pub path: PathBuf,
    /// Sorted by id.
    pub records: Vec<RecMeta>,
    /// Bytes including records not yet written.
    pub len: u64,
}

impl Chunk {
    pub fn len(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64
    }
}

impl SegmentMeta {
    pub fn last_id(&self) -> Option<u64> {
        self.records.last().map(|r| r.id)
    }
}

/// Bytes waiting to be written at a fixed place in a segment: `head`, then `tail`.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub segment: u64,
    pub offset: u64,
    pub head: Vec<u8>,
    /// A payload the appender shared instead of copying (empty when it is in `head`).
    pub tail: Bytes,
    /// Records (and their events) completed by this chunk, for the pending gauges.
    pub records: u64,
    pub events: u64,
    /// Once this chunk and all before it are synced, every id below this is durable.
    pub end_id: u64,
}

#[derive(Debug)]
pub(crate) struct ReaderSlot {
    pub name: String,
    pub path: PathBuf,
    /// Next id to hand out.
    pub cursor: u64,
    /// Handed out, not yet acknowledged.
    pub inflight: BTreeSet<u64>,
    /// After a re-take: ids below this were handed out before; only those still in
    /// `inflight` are handed out again, the rest were acknowledged.
    pub redeliver_below: u64,
    /// `resume_from` in the position file.
    pub persisted: u64,
    /// Generation of the last slot written to the position file.
    pub generation: u64,
    pub attached: bool,
}

impl ReaderSlot {
    /// Every id below this is finished for this reader. Never decreases.
    pub fn frontier(&self) -> u64 {
        let unread = self.cursor.max(self.redeliver_below);
        self.inflight.first().map_or(unread, |&f| f.min(unread))
    }

    /// Whether the record at `id` is to be handed out (false: acknowledged before a
    /// re-take).
    pub fn wants(&self, id: u64) -> bool {
        id >= self.redeliver_below || self.inflight.contains(&id)
    }
}

#[derive(Debug)]
pub(crate) struct State {
    pub mode: DurabilityMode,
    pub max_bytes: u64,
    pub closed: bool,
    /// The flusher has exited.
    pub finished: bool,
    /// Test hook: stop like `kill -9` (no flush, no position write).
    pub crashed: bool,
    pub next_id: u64,
    pub next_segment_id: u64,
    /// Segment new records go to; `None` until the first append after open or a roll.
    pub active: Option<u64>,
    pub segments: BTreeMap<u64, SegmentMeta>,
    pub pending: VecDeque<Chunk>,
    pub pending_bytes: u64,
    /// Records in `pending` (and their events), for the close report.
    pub pending_records: u64,
    pub pending_events: u64,
    pub first_pending_at: Option<Instant>,
    /// Ids below this are written, synced and readable.
    pub committed: u64,
    /// Sum of `segments[*].len`.
    pub bytes: u64,
    pub readers: Vec<ReaderSlot>,
    /// Minimum reader frontier: every id below it is finished by every reader.
    pub frontier: u64,
    pub buffered_records: u64,
    pub buffered_events: u64,
    pub disk_full: bool,
    pub last_error: Option<String>,
    pub retry_at: Option<Instant>,
    pub flush_requested: bool,
    pub space_wanted: bool,
    /// Run maintenance (persist positions, delete finished segments) without waiting for
    /// the interval: a writer is waiting for space and something can be reclaimed.
    pub maintain_now: bool,
    /// Why the last append was refused, until an append succeeds or the cause clears
    /// (segments deleted for `MaxBytes`, a flush for `Backlog`).
    pub refused: Option<FullReason>,
    /// Most bytes allowed to wait in memory for the writer thread.
    pub max_pending: u64,
    pub checkpoint_requested: u64,
    pub checkpoint_done: u64,
}

impl State {
    /// Why an append would be refused now, before looking at its size.
    pub fn blocked(&self) -> Option<FullReason> {
        if self.disk_full {
            Some(FullReason::DiskFull)
        } else if self.last_error.is_some() {
            Some(FullReason::WriteFailing)
        } else {
            None
        }
    }

    /// The index entry of the first record with `id >= from`, searching from segment `hint`.
    pub fn next_record(&self, from: u64, hint: u64) -> Option<(u64, RecMeta)> {
        let start = if self.segments.contains_key(&hint) {
            hint
        } else {
            0
        };
        for seg in self.segments.range(start..).map(|(_, s)| s) {
            if seg.last_id().is_none_or(|l| l < from) {
                continue;
            }
            let i = seg.records.partition_point(|r| r.id < from);
            return Some((seg.id, seg.records[i]));
        }
        None
    }

    pub fn record_mut(&mut self, segment: u64, id: u64) -> Option<&mut RecMeta> {
        let seg = self.segments.get_mut(&segment)?;
        let i = seg.records.binary_search_by_key(&id, |r| r.id).ok()?;
        seg.records.get_mut(i)
    }

    /// Recomputes the global frontier after a reader moved, and takes the records it passed
    /// off the buffered gauges.
    pub fn advance_frontier(&mut self) {
        let new = self
            .readers
            .iter()
            .map(ReaderSlot::frontier)
            .min()
            .unwrap_or(self.frontier);
        if new <= self.frontier {
            return;
        }
        let old = self.frontier;
        self.frontier = new;
        let (mut records, mut events) = (0u64, 0u64);
        for seg in self.segments.values() {
            if seg.last_id().is_none_or(|l| l < old) {
                continue;
            }
            let i = seg.records.partition_point(|r| r.id < old);
            let mut passed_all = true;
            for r in &seg.records[i..] {
                if r.id >= new {
                    passed_all = false;
                    break;
                }
                records += 1;
                events += u64::from(r.events);
            }
            if !passed_all {
                break;
            }
        }
        self.buffered_records = self.buffered_records.saturating_sub(records);
        self.buffered_events = self.buffered_events.saturating_sub(events);
    }

    /// Whether every record of `seg` is below `frontier`.
    pub fn segment_finished(seg: &SegmentMeta, frontier: u64) -> bool {
        seg.last_id().is_none_or(|l| l < frontier)
    }

    /// The oldest record not finished by every reader.
    pub fn oldest_unfinished(&self) -> Option<RecMeta> {
        self.next_record(self.frontier, 0).map(|(_, r)| r)
    }

    pub fn stats(&self) -> BufferStats {
        let oldest = self
            .oldest_unfinished()
            .map(|r| from_micros(r.timestamp_micros));
        let age = oldest.map(|t| SystemTime::now().duration_since(t).unwrap_or_default());
        BufferStats {
            mode: self.mode,
            max_bytes: self.max_bytes,
            bytes: self.bytes,
            pending_bytes: self.pending_bytes,
            segments: self.segments.len(),
            records: self.buffered_records,
            events: self.buffered_events,
            oldest_event: oldest,
            oldest_event_age: age,
            full: self.blocked().or(self.refused),
            last_error: self.last_error.clone(),
            readers: self
                .readers
                .iter()
                .map(|r| ReaderStats {
                    name: r.name.clone(),
                    resume_from: r.frontier(),
                    persisted_resume_from: r.persisted,
                    next_id: r.cursor,
                    in_flight: r.inflight.len(),
                    attached: r.attached,
                })
                .collect(),
        }
    }
}
