//! Reading records back, per named reader, and acknowledging them.

use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use tracing::warn;

use crate::buffer::Inner;
use crate::format::{
    RECORD_HEADER_LEN, RecordHeader, check_body, from_micros, offsets_of, salvage,
};
use crate::observe::BufferEvent;
use crate::state::RecMeta;
use crate::writer::RecordId;

/// A record read back from the buffer.
#[derive(Clone, PartialEq, Eq)]
pub struct Record {
    id: RecordId,
    timestamp: SystemTime,
    events: u32,
    lost_events: u32,
    payload: Bytes,
    offsets: Option<Vec<u32>>,
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Record")
            .field("id", &self.id)
            .field("events", &self.events)
            .field("lost_events", &self.lost_events)
            .field("bytes", &self.payload.len())
            .finish_non_exhaustive()
    }
}

impl Record {
    pub fn id(&self) -> RecordId {
        self.id
    }

    /// The timestamp given at append.
    pub fn timestamp(&self) -> SystemTime {
        self.timestamp
    }

    /// Events in the payload (those appended, less [`Record::lost_events`]).
    pub fn events(&self) -> u32 {
        self.events
    }

    /// Events of this record that damage on disk destroyed (each failed its CRC; the buffer
    /// logged and reported them). The payload and offsets then hold only the intact events,
    /// each one's bytes exactly as appended, back to back — so an event that ended with a
    /// separator still does, the new last one included.
    pub fn lost_events(&self) -> u32 {
        self.lost_events
    }

    /// The payload exactly as appended (shares one allocation with the record).
    pub fn payload(&self) -> &Bytes {
        &self.payload
    }

    /// The per-event offsets given at append, if any.
    pub fn offsets(&self) -> Option<&[u32]> {
        self.offsets.as_deref()
    }

    /// `(payload, events, offsets)`: what an encoded batch is rebuilt from.
    pub fn into_parts(self) -> (Bytes, u32, Option<Vec<u32>>) {
        (self.payload, self.events, self.offsets)
    }
}

enum Poll {
    Ready(Record),
    Empty,
    Closed,
}

/// One named consumer. It sees every record in append order, from its first unfinished one
/// on; its position survives restarts. Records stay in the buffer until every reader has
/// acknowledged them.
pub struct Reader {
    inner: Arc<Inner>,
    slot: usize,
    name: String,
    file: Option<(u64, File)>,
    hint: u64,
}

impl fmt::Debug for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader").field("name", &self.name).finish()
    }
}

/// Acknowledges records for one reader from any task or thread.
#[derive(Clone)]
pub struct Acker {
    inner: Arc<Inner>,
    slot: usize,
}

impl fmt::Debug for Acker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Acker").field("slot", &self.slot).finish()
    }
}

impl Acker {
    /// Marks a record handed out to this reader as finished (delivered, or rejected for
    /// good). Acknowledgements may come in any order. Returns `false` if the record was not
    /// in flight (already acknowledged, or handed out before the reader was re-taken).
    pub fn ack(&self, id: RecordId) -> bool {
        ack(&self.inner, self.slot, id)
    }
}

fn ack(inner: &Inner, slot: usize, id: RecordId) -> bool {
    let mut st = inner.lock();
    let Some(r) = st.readers.get_mut(slot) else {
        return false;
    };
    if !r.inflight.remove(&id.0) {
        return false;
    }
    let before = st.frontier;
    st.advance_frontier();
    if st.space_wanted && st.frontier > before {
        st.maintain_now = true;
        drop(st);
        inner.wake_flusher();
    }
    true
}

impl Reader {
    pub(crate) fn take(inner: &Arc<Inner>, name: &str) -> Option<Reader> {
        let mut st = inner.lock();
        let slot = st.readers.iter().position(|r| r.name == name)?;
        let r = &mut st.readers[slot];
        if r.attached {
            return None;
        }
        r.attached = true;
        // Start over at the first unfinished record: whatever the previous handle had in
        // flight is handed out again, what it had acknowledged is not.
        let frontier = r.frontier();
        r.redeliver_below = r.redeliver_below.max(r.cursor);
        r.cursor = frontier;
        Some(Reader {
            inner: Arc::clone(inner),
            slot,
            name: name.to_owned(),
            file: None,
            hint: 0,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn acker(&self) -> Acker {
        Acker {
            inner: Arc::clone(&self.inner),
            slot: self.slot,
        }
    }

    /// See [`Acker::ack`].
    pub fn ack(&self, id: RecordId) -> bool {
        ack(&self.inner, self.slot, id)
    }

    /// The next record if one is written and synced; `None` if none is available yet or
    /// the buffer is closed.
    pub fn try_next(&mut self) -> Option<Record> {
        match self.poll() {
            Poll::Ready(r) => Some(r),
            Poll::Empty | Poll::Closed => None,
        }
    }

    /// Waits for the next record. `None` once the buffer is closed.
    pub async fn next(&mut self) -> Option<Record> {
        let mut rx = self.inner.progress.subscribe();
        loop {
            match self.poll() {
                Poll::Ready(r) => return Some(r),
                Poll::Closed => return None,
                Poll::Empty => {}
            }
            if rx.changed().await.is_err() {
                return None;
            }
        }
    }

    /// Blocking form of [`Reader::next`]; `None` on timeout or once closed.
    pub fn next_blocking(&mut self, timeout: Duration) -> Option<Record> {
        let deadline = Instant::now() + timeout;
        loop {
            let seen = self.inner.lock().committed;
            match self.poll() {
                Poll::Ready(r) => return Some(r),
                Poll::Closed => return None,
                Poll::Empty => {}
            }
            let st = self.inner.lock();
            let (st, ok) = self
                .inner
                .wait_until(st, Some(deadline), |s| s.committed != seen || s.closed);
            drop(st);
            if !ok {
                return None;
            }
        }
    }

    fn poll(&mut self) -> Poll {
        loop {
            let (segment, meta, path) = {
                let mut st = self.inner.lock();
                if st.closed {
                    return Poll::Closed;
                }
                let cursor = st.readers[self.slot].cursor;
                let next = st
                    .next_record(cursor, self.hint)
                    .filter(|(_, m)| m.id < st.committed);
                let Some((segment, meta)) = next else {
                    // Idle: let go of a sealed segment, whose space is only freed once no
                    // one holds it open.
                    if self
                        .file
                        .as_ref()
                        .is_some_and(|(s, _)| Some(*s) != st.active)
                    {
                        self.file = None;
                    }
                    return Poll::Empty;
                };
                if meta.corrupt || !st.readers[self.slot].wants(meta.id) {
                    st.readers[self.slot].cursor = meta.id + 1;
                    st.advance_frontier();
                    continue;
                }
                let path = st.segments[&segment].path.clone();
                (segment, meta, path)
            };
            self.hint = segment;
            let read = self.read(segment, &path, &meta);
            let mut st = self.inner.lock();
            st.readers[self.slot].cursor = meta.id + 1;
            match read {
                Ok((record, damage)) => {
                    st.readers[self.slot].inflight.insert(meta.id);
                    st.advance_frontier();
                    let newly = damage.is_some()
                        && st
                            .record_mut(segment, meta.id)
                            .is_some_and(|m| !std::mem::replace(&mut m.damage_reported, true));
                    drop(st);
                    if let Some(lost) = damage.filter(|_| newly) {
                        if lost.is_empty() {
                            warn!(
                                file = %path.display(), offset = meta.offset, id = meta.id,
                                events = meta.events,
                                "disk buffer: damaged record: its checksum failed, but every \
                                 event was proven intact by its own (the damage was in one copy \
                                 of its event table); nothing lost"
                            );
                            return Poll::Ready(record);
                        }
                        self.inner.observer.observe(BufferEvent::Corrupt {
                            records: 0,
                            events: lost.len() as u64,
                        });
                        warn!(
                            file = %path.display(), offset = meta.offset, id = meta.id,
                            events = meta.events, lost_events = lost.len(),
                            lost = %index_ranges(&lost),
                            "disk buffer: damaged record: {} of its {} events lost (each failed \
                             its checksum), the other {} delivered",
                            lost.len(), meta.events, record.events
                        );
                    }
                    return Poll::Ready(record);
                }
                Err(what) => {
                    let newly = st
                        .record_mut(segment, meta.id)
                        .is_some_and(|m| !std::mem::replace(&mut m.corrupt, true));
                    st.advance_frontier();
                    drop(st);
                    if newly {
                        self.inner.observer.observe(BufferEvent::Corrupt {
                            records: 1,
                            events: u64::from(meta.events),
                        });
                        warn!(
                            file = %path.display(), offset = meta.offset, id = meta.id,
                            events = meta.events,
                            "disk buffer: damaged record skipped (1 record, {} events lost): {what}",
                            meta.events
                        );
                    }
                }
            }
        }
    }

    /// The record at `meta`, with the indexes of its events lost to damage if any; `Err` when
    /// nothing of it can be delivered.
    fn read(
        &mut self,
        segment: u64,
        path: &Path,
        meta: &RecMeta,
    ) -> Result<(Record, Option<Vec<u32>>), String> {
        if self.file.as_ref().is_none_or(|(s, _)| *s != segment) {
            let f = File::open(path).map_err(|e| format!("cannot open segment: {e}"))?;
            self.file = Some((segment, f));
        }
        let Some((_, file)) = &self.file else {
            return Err("segment file not open".into());
        };
        let len = usize::try_from(meta.len).map_err(|_| "record length too large".to_string())?;
        let mut buf = vec![0u8; len];
        file.read_exact_at(&mut buf, meta.offset)
            .map_err(|e| format!("read failed: {e}"))?;
        let header = RecordHeader::decode(&buf).ok_or("record header invalid")?;
        if header.id != meta.id || header.record_len() != meta.len {
            return Err("record header does not match the index".into());
        }
        let body = &buf[RECORD_HEADER_LEN..];
        let checked = check_body(&header, body).map_err(|p| p.as_str().to_string())?;
        let mut record = Record {
            id: RecordId(header.id),
            timestamp: from_micros(header.timestamp_micros),
            events: header.events,
            lost_events: 0,
            payload: Bytes::new(),
            offsets: None,
        };
        if checked.is_intact() {
            record.offsets = offsets_of(&header, body);
            let start = RECORD_HEADER_LEN + checked.payload_start;
            record.payload = Bytes::from(buf).slice(start..);
            return Ok((record, None));
        }
        let (payload, starts) = salvage(body, &checked);
        record.events = starts.len() as u32;
        record.lost_events = header.events - record.events;
        record.payload = Bytes::from(payload);
        record.offsets = Some(starts);
        Ok((record, Some(checked.lost)))
    }
}

/// `[0, 1, 2, 7]` as "0-2, 7", for a log line (at most 16 ranges, then how many more).
fn index_ranges(indexes: &[u32]) -> String {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &i in indexes {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == i => *end = i,
            _ => ranges.push((i, i)),
        }
    }
    let mut out: Vec<String> = ranges
        .iter()
        .take(16)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if ranges.len() > 16 {
        out.push(format!("and {} more ranges", ranges.len() - 16));
    }
    out.join(", ")
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut st = self.inner.lock();
        if let Some(r) = st.readers.get_mut(self.slot) {
            r.attached = false;
        }
    }
}
