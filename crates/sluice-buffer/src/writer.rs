//! Appending records.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::buffer::Inner;
use crate::config::DurabilityMode;
use crate::error::{AppendError, FullReason, NotPersisted};
use bytes::Bytes;

use crate::format::{
    Layout, SEGMENT_HEADER_LEN, SegmentHeader, encode_head, encode_record, stamp_id, to_micros,
};
use crate::observe::BufferEvent;
use crate::state::{Chunk, RecMeta, SegmentMeta, State};
use crate::stats::BufferStats;

/// Identifies a record for its whole life in the buffer. Ids increase in append order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordId(pub u64);

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A record to append. The buffer copies it; the caller keeps ownership.
///
/// One record is meant to be one encoded batch: `payload` is the batch body, `events` the
/// number of events in it, and `offsets` (optional) where each event starts in the payload,
/// stored and returned verbatim — the daemon uses them to split a replayed record or drop
/// single events, exactly like the batch it came from. Event `i` is the bytes from its start
/// to the next event's start (the last one to the end of the payload): the first starts at
/// 0, none before the one before it, none beyond the payload. The buffer keeps a CRC per
/// event, so damage on disk costs only the events it touches (see [`Record::lost_events`]);
/// without offsets a record is checked, and lost, whole.
///
/// [`Record::lost_events`]: crate::Record::lost_events
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'a> {
    pub payload: &'a [u8],
    /// The payload in a shared buffer ([`RecordRef::shared`]): the buffer holds a reference
    /// until it has written the bytes, instead of copying them.
    pub shared: Option<&'a Bytes>,
    pub events: u32,
    pub offsets: Option<&'a [u32]>,
    /// Time of the oldest event in the record; drives the "oldest event age" gauge.
    pub timestamp: SystemTime,
}

impl<'a> RecordRef<'a> {
    pub fn new(payload: &'a [u8], events: u32, timestamp: SystemTime) -> Self {
        RecordRef {
            payload,
            shared: None,
            events,
            offsets: None,
            timestamp,
        }
    }

    /// A record whose payload the buffer shares rather than copies: it keeps a reference to
    /// `payload` until it is written (one flush interval or group commit at most).
    pub fn shared(payload: &'a Bytes, events: u32, timestamp: SystemTime) -> Self {
        RecordRef {
            shared: Some(payload),
            ..RecordRef::new(payload, events, timestamp)
        }
    }

    /// Attaches per-event offsets; `events` becomes `offsets.len()`.
    pub fn with_offsets(mut self, offsets: &'a [u32]) -> Self {
        self.events = u32::try_from(offsets.len()).unwrap_or(u32::MAX);
        self.offsets = Some(offsets);
        self
    }

    fn validate(&self) -> Result<(), AppendError> {
        let Some(o) = self.offsets else {
            return Ok(());
        };
        if o.len() != self.events as usize {
            return Err(AppendError::Invalid(
                "offsets must hold one entry per event",
            ));
        }
        if o.first().is_some_and(|&f| f != 0) {
            return Err(AppendError::Invalid(
                "the first event must start at offset 0",
            ));
        }
        if o.windows(2).any(|w| w[0] > w[1]) {
            return Err(AppendError::Invalid("offsets must not decrease"));
        }
        if o.last().is_some_and(|&l| l as usize > self.payload.len()) {
            return Err(AppendError::Invalid("offsets must lie within the payload"));
        }
        Ok(())
    }
}

/// Appends records. Cheap to clone; all clones feed the same ordered log.
#[derive(Clone)]
pub struct Writer {
    inner: Arc<Inner>,
}

impl fmt::Debug for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("dir", &self.inner.dir)
            .finish()
    }
}

/// A record the buffer accepted. In normal mode it will be written within one flush
/// interval; in reliable mode the caller should treat it as safe only once
/// [`Appended::durable`] resolves.
pub struct Appended {
    id: RecordId,
    inner: Arc<Inner>,
}

impl fmt::Debug for Appended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Appended").field("id", &self.id).finish()
    }
}

impl Appended {
    pub fn id(&self) -> RecordId {
        self.id
    }

    /// Written and fsynced.
    pub fn is_durable(&self) -> bool {
        self.inner.lock().committed > self.id.0
    }

    /// Resolves once the record is written and fsynced (in reliable mode within about one
    /// group-commit window plus one fsync; in normal mode within one flush interval). Fails
    /// only if the buffer was closed while the record could not be written.
    pub async fn durable(self) -> Result<RecordId, NotPersisted> {
        let mut rx = self.inner.progress.subscribe();
        loop {
            {
                let st = self.inner.lock();
                if st.committed > self.id.0 {
                    return Ok(self.id);
                }
                if st.finished {
                    return Err(NotPersisted { id: self.id.0 });
                }
            }
            if rx.changed().await.is_err() {
                return Err(NotPersisted { id: self.id.0 });
            }
        }
    }

    /// Blocking form of [`Appended::durable`]: `Ok(false)` when `timeout` passed first.
    pub fn wait_durable(&self, timeout: Option<Duration>) -> Result<bool, NotPersisted> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let st = self.inner.lock();
        let id = self.id.0;
        let (st, _) = self
            .inner
            .wait_until(st, deadline, |s| s.committed > id || s.finished);
        if st.committed > id {
            Ok(true)
        } else if st.finished {
            Err(NotPersisted { id })
        } else {
            Ok(false)
        }
    }
}

impl Writer {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Writer { inner }
    }

    pub fn mode(&self) -> DurabilityMode {
        self.inner.config.mode
    }

    pub fn stats(&self) -> BufferStats {
        self.inner.lock().stats()
    }

    /// Bytes a record with this payload (and event table) occupies on disk.
    pub fn record_size(payload_len: usize, events_with_offsets: Option<u32>) -> u64 {
        let table = match events_with_offsets {
            None | Some(0) => 0,
            Some(e) => Layout::Events.table_len(e),
        };
        crate::format::RECORD_HEADER_LEN as u64 + payload_len as u64 + table
    }

    /// Reports a refusal and builds its error.
    fn refuse(&self, reason: FullReason) -> AppendError {
        self.inner.observer.observe(BufferEvent::Refused { reason });
        AppendError::Full { reason }
    }

    /// Queues a record. Never blocks on IO: the writer thread writes it. On
    /// [`AppendError::Full`] nothing was taken; wait with [`Writer::wait_for_space`] and
    /// retry.
    pub fn append(&self, record: RecordRef<'_>) -> Result<Appended, AppendError> {
        record.validate()?;
        let size =
            Writer::record_size(record.payload.len(), record.offsets.map(|o| o.len() as u32));
        let body = size - crate::format::RECORD_HEADER_LEN as u64;
        let max_body = self.inner.config.max_record_body();
        if body > max_body {
            return Err(AppendError::TooLarge {
                size,
                max: max_body + crate::format::RECORD_HEADER_LEN as u64,
            });
        }
        // Encode and checksum outside the lock; only the id is filled in under it. A shared
        // payload is written from the caller's buffer: no copy.
        let (mut head, tail) = {
            let args = (record.payload, record.events, record.offsets);
            let ts = to_micros(record.timestamp);
            match record.shared {
                // The checksums cover `payload`: share only the very same bytes.
                Some(b) if std::ptr::eq(&b[..], record.payload) => {
                    (encode_head(args.0, args.1, args.2, ts, 0), b.clone())
                }
                _ => (encode_record(args.0, args.1, args.2, ts), Bytes::new()),
            }
        };
        let mut st = self.inner.lock();
        if st.closed {
            return Err(AppendError::Closed);
        }
        if let Some(reason) = st.blocked() {
            st.space_wanted = true;
            drop(st);
            return Err(self.refuse(reason));
        }
        let new_segment = match st.active.and_then(|a| st.segments.get(&a)) {
            None => true,
            Some(seg) => !seg.records.is_empty() && seg.len + size > self.inner.segment_bytes,
        };
        let need = size
            + if new_segment {
                SEGMENT_HEADER_LEN as u64
            } else {
                0
            };
        if st.bytes + need > st.max_bytes {
            // A finished active segment can only be reclaimed once the writer leaves it.
            let frontier = st.frontier;
            if let Some(a) = st.active
                && st
                    .segments
                    .get(&a)
                    .is_some_and(|s| !s.records.is_empty() && State::segment_finished(s, frontier))
            {
                st.active = None;
                st.maintain_now = true;
            }
            st.space_wanted = true;
            st.refused = Some(FullReason::MaxBytes);
            drop(st);
            self.inner.wake_flusher();
            return Err(self.refuse(FullReason::MaxBytes));
        }
        if st.pending_bytes > 0 && st.pending_bytes + need > st.max_pending {
            st.refused = Some(FullReason::Backlog);
            st.flush_requested = true;
            drop(st);
            self.inner.wake_flusher();
            return Err(self.refuse(FullReason::Backlog));
        }
        if new_segment {
            open_segment(&self.inner, &mut st);
        }
        let id = st.next_id;
        let Some((seg_id, seg)) = st
            .active
            .and_then(|a| st.segments.get_mut(&a).map(|s| (a, s)))
        else {
            tracing::error!("disk buffer: active segment missing from the index; append refused");
            return Err(AppendError::Closed);
        };
        let offset = seg.len;
        seg.len += size;
        seg.records.push(RecMeta {
            id,
            offset,
            len: size,
            events: record.events,
            timestamp_micros: to_micros(record.timestamp),
            corrupt: false,
            damage_reported: false,
        });
        stamp_id(&mut head, id);
        st.next_id += 1;
        st.bytes += size;
        st.pending.push_back(Chunk {
            segment: seg_id,
            offset,
            head,
            tail,
            records: 1,
            events: u64::from(record.events),
            end_id: id + 1,
        });
        let was_empty = st.pending_bytes == 0;
        st.pending_bytes += size;
        st.pending_records += 1;
        st.pending_events += u64::from(record.events);
        if st.first_pending_at.is_none() {
            st.first_pending_at = Some(Instant::now());
        }
        st.buffered_records += 1;
        st.buffered_events += u64::from(record.events);
        st.space_wanted = false;
        st.refused = None;
        let wake = was_empty
            || st.pending_bytes >= self.inner.config.flush_bytes
            || self.inner.config.mode == DurabilityMode::Reliable
                && self.inner.config.group_commit_window.is_zero();
        drop(st);
        if wake {
            self.inner.wake_flusher();
        }
        self.inner.observer.observe(BufferEvent::Appended {
            events: record.events,
            bytes: size,
        });
        Ok(Appended {
            id: RecordId(id),
            inner: Arc::clone(&self.inner),
        })
    }

    /// Asks for everything appended so far to be written and synced now, without waiting
    /// for the policy. The returned handle resolves when that is done (`None` if nothing
    /// was ever appended).
    pub fn flush(&self) -> Option<Appended> {
        let mut st = self.inner.lock();
        let last = st.next_id.checked_sub(1)?;
        st.flush_requested = true;
        drop(st);
        self.inner.wake_flusher();
        Some(Appended {
            id: RecordId(last),
            inner: Arc::clone(&self.inner),
        })
    }

    fn has_space(&self, st: &State, payload_bytes: u64) -> bool {
        let need = payload_bytes + (crate::format::RECORD_HEADER_LEN + SEGMENT_HEADER_LEN) as u64;
        st.blocked().is_none()
            && st.bytes + need <= st.max_bytes
            && (st.pending_bytes == 0 || st.pending_bytes + need <= st.max_pending)
    }

    /// Resolves when an append of a record of about `payload_bytes` would not be refused
    /// as full (or the buffer is closed). Space returns when readers finish whole segments
    /// or the filesystem frees up; the writer thread notices by itself.
    pub async fn wait_for_space(&self, payload_bytes: u64) {
        let mut rx = self.inner.progress.subscribe();
        loop {
            {
                let mut st = self.inner.lock();
                if st.closed || self.has_space(&st, payload_bytes) {
                    return;
                }
                st.space_wanted = true;
            }
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Blocking form of [`Writer::wait_for_space`]; `false` when `timeout` passed first.
    pub fn wait_for_space_blocking(&self, payload_bytes: u64, timeout: Duration) -> bool {
        let st = self.inner.lock();
        let deadline = Instant::now() + timeout;
        let (st, _) = self.inner.wait_until(st, Some(deadline), |s| {
            if s.closed || self.has_space(s, payload_bytes) {
                return true;
            }
            s.space_wanted = true;
            false
        });
        st.closed || self.has_space(&st, payload_bytes)
    }
}

/// Starts a new segment: index entry now, header bytes queued ahead of its first record.
fn open_segment(inner: &Inner, st: &mut State) {
    let id = st.next_segment_id;
    st.next_segment_id += 1;
    let header = SegmentHeader {
        segment_id: id,
        first_record_id: st.next_id,
        created_micros: to_micros(SystemTime::now()),
    };
    st.segments.insert(
        id,
        SegmentMeta {
            id,
            path: inner.dir.join(crate::dir::segment_name(id)),
            records: Vec::new(),
            len: SEGMENT_HEADER_LEN as u64,
        },
    );
    st.bytes += SEGMENT_HEADER_LEN as u64;
    st.pending_bytes += SEGMENT_HEADER_LEN as u64;
    st.pending.push_back(Chunk {
        segment: id,
        offset: 0,
        head: header.encode().to_vec(),
        tail: Bytes::new(),
        records: 0,
        events: 0,
        end_id: st.next_id,
    });
    st.active = Some(id);
}
