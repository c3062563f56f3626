//! Batches of encoded events, neutral to the output they go to.
//!
//! A batch body is what an output writes (HEC before optional gzip, a JSON-lines file, the
//! disk buffer): encoded events joined by a single `\n`, no leading or trailing separator —
//! the shape syslog-ng's `http()` driver produces for SC4S. Each event must be one line
//! (JSON encoders escape control characters, so a raw `\n` byte only ever appears as the
//! separator).
//!
//! # Event boundaries
//!
//! A batch knows where each of its events starts: one `u32` per event, in a vector allocated
//! once per batch (sized from the previous batch), never per event. An output uses them to
//! send part of a batch ([`EncodedBatch::events_bytes`]: a 413 split), to name the event a
//! destination refused (`Rejection::index` in [`crate::delivery`]), or to write events one
//! by one. Bodies are therefore limited to [`MAX_BATCH_BYTES`]; the builder closes a batch
//! before it gets there.
//!
//! # Policy
//!
//! [`BatchBuilder`] closes a batch when
//! * it holds `max_events` events, or
//! * its body reaches `max_bytes` — if the event that crossed the limit was not the first one,
//!   that event is moved into the next batch, so a returned batch never exceeds `max_bytes`
//!   unless it is a single event (or a single pre-encoded chunk) that is larger on its own, or
//! * `timeout` has passed since its first event ([`BatchBuilder::deadline`]; the caller flushes
//!   with [`BatchBuilder::take`], the builder never reads the clock itself).
//!
//! `push_with` and `push_chunk` return at most one batch. When a push leaves the open batch
//! full as well (an oversized single event that was moved, or `max_events == 1`), the open
//! batch is marked due: [`BatchBuilder::deadline`] then returns the instant of that push, so
//! the caller's ordinary "deadline passed → `take()`" path ships it without waiting.
//!
//! # Holds
//!
//! A batch carries opaque holds ([`EncodedBatch::hold`]) of two kinds ([`HoldKind`]): what
//! reserves room for its *events* (the daemon's input-window permits) and what reserves room
//! for its *bytes* (the memory budget). Merging a chunk into a batch moves its holds along, so
//! they always travel with the events they cover. Once a batch is wrapped in a
//! [`crate::delivery::Delivery`], the holds are released only through its completion (or,
//! for the event holds, when the events were persisted): see that module.
//!
//! # Other encodings
//!
//! A destination that sends something else than the HEC event (a relayed syslog line, a
//! Kafka record) needs other bytes per event. A builder made with
//! [`BatchBuilder::push_encoded`] calls keeps, beside the body, one more body per extra
//! encoding, with the same events in the same order (an event some encoding is not needed for
//! is empty there). Bodies stay separate so that each destination's part is an ordinary batch
//! of one encoding ([`EncodedBatch::into_encoding`], [`EncodedBatch::select_encoding`]):
//! outputs, disk buffers and batchers never see the others. A builder with no extra encoding
//! costs nothing more than before. Extra bodies may hold line feeds inside an event (a
//! multi-line syslog message): their event starts are the only boundaries.
//!
//! # Allocation
//!
//! The open body is a `Vec<u8>` the encoder appends to. Handing a batch off moves that vector
//! into a `Bytes` without copying; the next body is allocated once with the capacity the
//! previous batch needed, so steady state costs one allocation per batch (two with the event
//! starts) and none per event.

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::time::{Duration, Instant};

use bytes::Bytes;

/// The largest body a batch may have: event starts are `u32` offsets. The builder treats a
/// larger `max_bytes` as this.
pub const MAX_BATCH_BYTES: usize = (u32::MAX >> 1) as usize;

/// When to close a batch. Defaults are SC4S's: 5000 lines, `4096kb` (syslog-ng's `kb` is 1000
/// bytes), 300 ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchPolicy {
    pub max_events: usize,
    pub max_bytes: usize,
    pub timeout: Duration,
}

impl Default for BatchPolicy {
    fn default() -> Self {
        BatchPolicy {
            max_events: 5000,
            max_bytes: 4096 * 1000,
            timeout: Duration::from_millis(300),
        }
    }
}

/// What a hold reserves room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldKind {
    /// Room for the batch's events (input-window permits): released when the events are safe
    /// (delivered, or persisted by a buffer).
    Events,
    /// Room for the batch's bytes in memory (the memory budget): released when the batch
    /// leaves memory.
    Bytes,
}

type Hold = Box<dyn Any + Send + Sync>;

#[derive(Default)]
struct Holds {
    events: Vec<Hold>,
    bytes: Vec<Hold>,
}

impl Holds {
    fn of(&mut self, kind: HoldKind) -> &mut Vec<Hold> {
        match kind {
            HoldKind::Events => &mut self.events,
            HoldKind::Bytes => &mut self.bytes,
        }
    }

    fn append(&mut self, other: &mut Holds) {
        self.events.append(&mut other.events);
        self.bytes.append(&mut other.bytes);
    }
}

/// A body that does not fit the `u32` event offsets ([`MAX_BATCH_BYTES`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a batch body of {len} bytes exceeds the limit of {max} bytes", max = MAX_BATCH_BYTES)]
pub struct BodyTooLarge {
    pub len: usize,
}

/// Why [`EncodedBatch::from_parts`] refused a body and its offsets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadParts {
    #[error(transparent)]
    TooLarge(#[from] BodyTooLarge),
    #[error("the event offsets do not describe the body")]
    Offsets,
}

/// An event's destinations when it was not routed: whatever the receiver of the batch sends
/// unrouted events to (see [`EncodedBatch::dests`]).
pub const UNROUTED: u64 = u64::MAX;

/// Newline-joined encoded events, where each starts, and the holds that live as long as they
/// do.
pub struct EncodedBatch {
    body: Bytes,
    /// Offset of each event's first byte in `body`; `starts.len()` is the event count.
    starts: Vec<u32>,
    /// Each event's destinations as a bit set (bit `i`: destination `i`), or empty when no
    /// event was routed. Kept beside `starts` (same length when not empty).
    dests: Vec<u64>,
    holds: Holds,
    /// The same events in the extra encodings: `alts[k]` is encoding `k + 1`.
    alts: Vec<Alt>,
}

/// One extra encoding of a batch's events.
#[derive(Clone)]
struct Alt {
    body: Bytes,
    starts: Vec<u32>,
}

/// A batch has no body in the encoding asked for (it was built without it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the batch carries {have} encodings; encoding {wanted} was asked for")]
pub struct MissingEncoding {
    pub wanted: usize,
    pub have: usize,
}

impl EncodedBatch {
    /// A batch from an already encoded body: every `\n` separates two events, so a non-empty
    /// body holds one event more than it has newlines (an empty body holds none).
    pub fn from_lines(body: Bytes) -> Result<EncodedBatch, BodyTooLarge> {
        if body.len() > MAX_BATCH_BYTES {
            return Err(BodyTooLarge { len: body.len() });
        }
        let mut starts = Vec::new();
        if !body.is_empty() {
            starts.push(0);
            // Fits: the body is at most MAX_BATCH_BYTES long.
            starts.extend(memchr::memchr_iter(b'\n', &body).map(|i| (i + 1) as u32));
        }
        Ok(EncodedBatch {
            body,
            starts,
            dests: Vec::new(),
            holds: Holds::default(),
            alts: Vec::new(),
        })
    }

    /// A batch from a body and the offsets where its events start, as
    /// [`starts`](Self::starts) gave them (a batch read back from the disk buffer). The
    /// offsets are checked, never trusted: they must start at 0, increase, and each event
    /// but the last must end with the `\n` separator just before the next one starts.
    pub fn from_parts(body: Bytes, starts: Vec<u32>) -> Result<EncodedBatch, BadParts> {
        if body.len() > MAX_BATCH_BYTES {
            return Err(BadParts::TooLarge(BodyTooLarge { len: body.len() }));
        }
        match starts.first() {
            None if body.is_empty() => {}
            Some(0) => {}
            _ => return Err(BadParts::Offsets),
        }
        for w in starts.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            if b <= a || b > body.len() || body[b - 1] != b'\n' {
                return Err(BadParts::Offsets);
            }
        }
        Ok(EncodedBatch {
            body,
            starts,
            dests: Vec::new(),
            holds: Holds::default(),
            alts: Vec::new(),
        })
    }

    /// Where each event starts in the body (one offset per event).
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// The body before compression.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// Number of events in the body.
    pub fn events(&self) -> u32 {
        // At most one event per body byte, and the body fits in u32.
        self.starts.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Byte range of event `index` in the body (without its separator).
    pub fn event_range(&self, index: u32) -> Option<Range<usize>> {
        let i = index as usize;
        let start = *self.starts.get(i)? as usize;
        let end = match self.starts.get(i + 1) {
            Some(&next) => next as usize - 1,
            None => self.body.len(),
        };
        Some(start..end)
    }

    /// Event `index`'s bytes.
    pub fn event(&self, index: u32) -> Option<&[u8]> {
        self.event_range(index).map(|r| &self.body[r])
    }

    /// The events of `events` (indexes, clamped to the batch) as one body of their own,
    /// newline-joined like a batch: a slice of this body, no copy.
    pub fn events_bytes(&self, events: Range<u32>) -> Bytes {
        let n = self.events();
        let (first, last) = (events.start.min(n), events.end.min(n));
        if first >= last {
            return Bytes::new();
        }
        let start = self.starts[first as usize] as usize;
        let end = match self.starts.get(last as usize) {
            Some(&next) => next as usize - 1,
            None => self.body.len(),
        };
        self.body.slice(start..end)
    }

    /// The same events (the body shared, not copied) without any hold.
    pub fn clone_events(&self) -> EncodedBatch {
        EncodedBatch {
            body: self.body.clone(),
            starts: self.starts.clone(),
            dests: self.dests.clone(),
            holds: Holds::default(),
            alts: self.alts.clone(),
        }
    }

    /// How many encodings the batch carries (1: the body alone).
    pub fn encodings(&self) -> usize {
        1 + self.alts.len()
    }

    /// The bytes of every encoding, for the memory budget.
    pub fn total_bytes(&self) -> usize {
        self.body.len() + self.alts.iter().map(|a| a.body.len()).sum::<usize>()
    }

    /// This batch as encoding `k` alone (0: the body it was built with), holds and
    /// destination sets kept, the other encodings dropped. No copy. `Err` gives the batch
    /// back as it was when it does not carry encoding `k`.
    pub fn into_encoding(mut self, k: usize) -> Result<EncodedBatch, Box<EncodedBatch>> {
        if k == 0 {
            self.alts = Vec::new();
            return Ok(self);
        }
        if k >= self.encodings() {
            return Err(Box::new(self));
        }
        let alt = self.alts.swap_remove(k - 1);
        self.body = alt.body;
        self.starts = alt.starts;
        self.alts = Vec::new();
        Ok(self)
    }

    /// [`clone_events`](Self::clone_events) of encoding `k` alone: the body shared, no holds.
    pub fn clone_encoding(&self, k: usize) -> Result<EncodedBatch, MissingEncoding> {
        let (body, starts) = self.encoding(k)?;
        Ok(EncodedBatch {
            body: body.clone(),
            starts: starts.to_vec(),
            dests: self.dests.clone(),
            holds: Holds::default(),
            alts: Vec::new(),
        })
    }

    /// [`select`](Self::select) over encoding `k`: the events `keep` picks, copied, as a
    /// batch of that encoding alone.
    pub fn select_encoding(
        &self,
        k: usize,
        keep: impl FnMut(u32) -> bool,
    ) -> Result<EncodedBatch, MissingEncoding> {
        let (body, starts) = self.encoding(k)?;
        Ok(select_from(body, starts, keep))
    }

    fn encoding(&self, k: usize) -> Result<(&Bytes, &[u32]), MissingEncoding> {
        if k == 0 {
            return Ok((&self.body, &self.starts));
        }
        self.alts
            .get(k - 1)
            .map(|a| (&a.body, a.starts.as_slice()))
            .ok_or(MissingEncoding {
                wanted: k,
                have: self.encodings(),
            })
    }

    /// Each event's destinations (a bit per destination, [`UNROUTED`] for an event that was
    /// not routed), or an empty slice when no event of the batch was routed.
    pub fn dests(&self) -> &[u64] {
        &self.dests
    }

    /// The events `keep` picks, as a batch of their own: one copy of their bytes, no holds,
    /// no destinations. The order is kept.
    pub fn select(&self, keep: impl FnMut(u32) -> bool) -> EncodedBatch {
        select_from(&self.body, &self.starts, keep)
    }

    /// Moves the holds of `kind` into one shared value, to be attached (cloned) to several
    /// batches made from this one ([`select`](Self::select), [`clone_events`](Self::clone_events)):
    /// the holds are released when the last of them releases its clone. `None` when the
    /// batch has no hold of `kind`.
    pub fn share_holds(&mut self, kind: HoldKind) -> Option<std::sync::Arc<dyn Any + Send + Sync>> {
        let holds = std::mem::take(self.holds.of(kind));
        (!holds.is_empty())
            .then(|| std::sync::Arc::new(holds) as std::sync::Arc<dyn Any + Send + Sync>)
    }

    /// Ties `hold` to this batch: it is released (dropped) with the batch, or through the
    /// completion of the delivery that wraps it.
    pub fn hold(&mut self, kind: HoldKind, hold: impl Any + Send + Sync) {
        self.holds.of(kind).push(Box::new(hold));
    }

    /// Number of holds of `kind` attached.
    pub fn hold_count(&self, kind: HoldKind) -> usize {
        match kind {
            HoldKind::Events => self.holds.events.len(),
            HoldKind::Bytes => self.holds.bytes.len(),
        }
    }

    /// Drops the holds of `kind` now (the events were persisted, for [`HoldKind::Events`]).
    pub fn release(&mut self, kind: HoldKind) {
        self.holds.of(kind).clear();
    }
}

/// The events of `body` (starting at `starts`) that `keep` picks, copied into a batch of
/// their own.
fn select_from(body: &[u8], starts: &[u32], mut keep: impl FnMut(u32) -> bool) -> EncodedBatch {
    let mut out = Vec::with_capacity(body.len());
    let mut out_starts = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        if !keep(i as u32) {
            continue;
        }
        let end = starts.get(i + 1).map_or(body.len(), |&n| n as usize - 1);
        let Some(ev) = body.get(start as usize..end) else {
            continue;
        };
        if !out_starts.is_empty() {
            out.push(b'\n');
        }
        // At most the length of this body, which fits in u32.
        out_starts.push(out.len() as u32);
        out.extend_from_slice(ev);
    }
    EncodedBatch {
        body: Bytes::from(out),
        starts: out_starts,
        dests: Vec::new(),
        holds: Holds::default(),
        alts: Vec::new(),
    }
}

impl fmt::Debug for EncodedBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncodedBatch")
            .field("bytes", &self.body.len())
            .field("events", &self.events())
            .field("event_holds", &self.holds.events.len())
            .field("byte_holds", &self.holds.bytes.len())
            .finish()
    }
}

/// Accumulates encoded events into batches according to a [`BatchPolicy`].
pub struct BatchBuilder {
    policy: BatchPolicy,
    body: Vec<u8>,
    starts: Vec<u32>,
    /// Empty until an event is routed; then one entry per event (see [`EncodedBatch::dests`]).
    dests: Vec<u64>,
    holds: Holds,
    /// The open batch's extra encodings (see the module docs): as many as the last
    /// [`push_encoded`](Self::push_encoded) or merged chunk had.
    alts: Vec<AltOpen>,
    opened: Option<Instant>,
    // Set when the open batch is already full but could not be returned from the push that
    // filled it; the batch is then due at this instant.
    due: Option<Instant>,
    next_capacity: usize,
    next_events: usize,
}

/// An extra encoding of the open batch.
#[derive(Default)]
struct AltOpen {
    body: Vec<u8>,
    starts: Vec<u32>,
}

impl fmt::Debug for BatchBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchBuilder")
            .field("policy", &self.policy)
            .field("bytes", &self.body.len())
            .field("events", &self.starts.len())
            .field("opened", &self.opened)
            .field("due", &self.due)
            .finish()
    }
}

impl BatchBuilder {
    pub fn new(policy: BatchPolicy) -> Self {
        // Zero limits would make every push a batch of its own at best, or never close at
        // worst; treat them as 1.
        let policy = BatchPolicy {
            max_events: policy.max_events.max(1),
            max_bytes: policy.max_bytes.clamp(1, MAX_BATCH_BYTES),
            timeout: policy.timeout,
        };
        let next_capacity = policy.max_bytes.min(64 * 1024);
        let next_events = policy.max_events.min(1024);
        BatchBuilder {
            policy,
            body: Vec::with_capacity(next_capacity),
            starts: Vec::with_capacity(next_events),
            dests: Vec::new(),
            holds: Holds::default(),
            alts: Vec::new(),
            opened: None,
            due: None,
            next_capacity,
            next_events,
        }
    }

    pub fn policy(&self) -> &BatchPolicy {
        &self.policy
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Events in the open batch.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Bytes in the open batch body.
    pub fn bytes(&self) -> usize {
        self.body.len()
    }

    /// When the open batch must be flushed with [`take`](Self::take): `timeout` after its
    /// first event, or already (the instant of the push that filled it) when it is full.
    pub fn deadline(&self) -> Option<Instant> {
        if self.is_empty() {
            return None;
        }
        self.due
            .or_else(|| self.opened.map(|t| t + self.policy.timeout))
    }

    /// Appends one event written by `f`. Returns a completed batch when a limit was reached.
    ///
    /// `f` must append exactly one event (one line of JSON) and nothing else; if it appends
    /// nothing, no event is counted.
    pub fn push_with(
        &mut self,
        now: Instant,
        f: impl FnOnce(&mut Vec<u8>),
    ) -> Option<EncodedBatch> {
        self.push_inner(now, None, 0, f, |_, _, _| {})
    }

    /// [`push_with`](Self::push_with) for an event routed to the destinations in the bit set
    /// `dests` (see [`EncodedBatch::dests`]).
    pub fn push_routed(
        &mut self,
        now: Instant,
        dests: u64,
        f: impl FnOnce(&mut Vec<u8>),
    ) -> Option<EncodedBatch> {
        self.push_inner(now, Some(dests), 0, f, |_, _, _| {})
    }

    /// [`push_with`](Self::push_with) (or [`push_routed`](Self::push_routed) with `dests`)
    /// with `extra` more encodings of the event: `alt(k, event, out)` appends encoding
    /// `k + 1` of it to `out`, where `event` is what `f` wrote (nothing, for an encoding the
    /// event is not needed in). A change in `extra` closes the open batch first, so every
    /// batch has the same encodings throughout.
    pub fn push_encoded(
        &mut self,
        now: Instant,
        dests: Option<u64>,
        extra: usize,
        f: impl FnOnce(&mut Vec<u8>),
        alt: impl FnMut(usize, &[u8], &mut Vec<u8>),
    ) -> Option<EncodedBatch> {
        self.push_inner(now, dests, extra, f, alt)
    }

    fn record_dest(&mut self, dest: Option<u64>) {
        match dest {
            None if self.dests.is_empty() => {}
            None => self.dests.push(UNROUTED),
            Some(d) => {
                // The events before were not routed.
                self.dests.resize(self.starts.len() - 1, UNROUTED);
                self.dests.push(d);
            }
        }
    }

    fn push_inner(
        &mut self,
        now: Instant,
        dest: Option<u64>,
        extra: usize,
        f: impl FnOnce(&mut Vec<u8>),
        mut alt: impl FnMut(usize, &[u8], &mut Vec<u8>),
    ) -> Option<EncodedBatch> {
        let mut out = if self.due.is_some() {
            self.take()
        } else {
            None
        };
        if extra != self.alts.len() {
            // Nothing was due if the batch is not empty (`take` empties it).
            if out.is_none() {
                out = self.take();
            }
            self.alts.resize_with(extra, AltOpen::default);
        }
        let had_events = !self.starts.is_empty();
        let mark = self.body.len();
        if had_events {
            self.body.push(b'\n');
        }
        let start = self.body.len();
        f(&mut self.body);
        if self.body.len() == start {
            self.body.truncate(mark);
            return out;
        }
        if self.opened.is_none() {
            self.opened = Some(now);
        }
        // An extra body is at most one event past the byte limit (`is_full` counts them), so
        // its offsets fit in u32.
        for (k, a) in self.alts.iter_mut().enumerate() {
            if had_events {
                a.body.push(b'\n');
            }
            a.starts.push(a.body.len() as u32);
            alt(k, &self.body[start..], &mut a.body);
        }

        if self.body.len() > self.policy.max_bytes && had_events {
            // `had_events` means nothing was due, so `out` is empty. Move the crossing event
            // into the next batch so the closed one stays within the byte limit.
            let carried = self.body[start..].to_vec();
            self.body.truncate(mark);
            let alt_carried: Vec<Vec<u8>> = self
                .alts
                .iter_mut()
                .map(|a| {
                    let from = a.starts.pop().unwrap_or(0) as usize;
                    let tail = a.body.split_off(from);
                    // The separator before it (there were events before).
                    a.body.truncate(from.saturating_sub(1));
                    tail
                })
                .collect();
            let closed = self.finish_open();
            self.body.extend_from_slice(&carried);
            self.starts.push(0);
            for (a, tail) in self.alts.iter_mut().zip(alt_carried) {
                a.starts.push(0);
                a.body.extend_from_slice(&tail);
            }
            self.record_dest(dest);
            self.opened = Some(now);
            if self.is_full() {
                self.due = Some(now);
            }
            return Some(closed);
        }

        // `start` is below max_bytes + 1 ≤ MAX_BATCH_BYTES + 1: it fits in u32.
        self.starts.push(start as u32);
        self.record_dest(dest);
        if self.is_full() {
            if out.is_some() {
                // One batch per call: the earlier one goes now, this one is due next.
                self.due = Some(now);
                return out;
            }
            return Some(self.finish_open());
        }
        out
    }

    /// Merges a pre-encoded multi-event chunk (its body, event starts and holds). The open
    /// batch is closed first when the chunk would push it over a limit. A chunk that exceeds
    /// the limits on its own is not split: it becomes one batch.
    pub fn push_chunk(&mut self, now: Instant, mut chunk: EncodedBatch) -> Option<EncodedBatch> {
        let out = if self.due.is_some() {
            self.take()
        } else {
            None
        };
        if chunk.is_empty() {
            // Nothing to deliver; its holds (if any) guard no events.
            return out;
        }
        let chunk_full = chunk.body.len() >= self.policy.max_bytes
            || chunk.starts.len() >= self.policy.max_events
            || chunk
                .alts
                .iter()
                .any(|a| a.body.len() >= self.policy.max_bytes);
        if self.is_empty() {
            if chunk_full {
                if out.is_some() {
                    self.append_chunk(now, &mut chunk);
                    self.due = Some(now);
                    return out;
                }
                // Ships as is, without a copy.
                return Some(chunk);
            }
            self.append_chunk(now, &mut chunk);
            return out;
        }
        // The open batch is not empty, so nothing was due and `out` is empty.
        let fits = self.body.len() + 1 + chunk.body.len() <= self.policy.max_bytes
            && self.starts.len() + chunk.starts.len() <= self.policy.max_events
            && chunk.alts.len() == self.alts.len()
            && self
                .alts
                .iter()
                .zip(&chunk.alts)
                .all(|(a, c)| a.body.len() + 1 + c.body.len() <= self.policy.max_bytes);
        if !fits {
            let closed = self.finish_open();
            self.append_chunk(now, &mut chunk);
            if chunk_full {
                self.due = Some(now);
            }
            return Some(closed);
        }
        self.append_chunk(now, &mut chunk);
        if self.is_full() {
            return Some(self.finish_open());
        }
        None
    }

    /// Closes and returns the open batch, if it holds anything.
    pub fn take(&mut self) -> Option<EncodedBatch> {
        if self.is_empty() {
            return None;
        }
        Some(self.finish_open())
    }

    fn is_full(&self) -> bool {
        self.starts.len() >= self.policy.max_events
            || self.body.len() >= self.policy.max_bytes
            || self
                .alts
                .iter()
                .any(|a| a.body.len() >= self.policy.max_bytes)
    }

    /// Only called with the result within `max_bytes` or into an empty builder (a chunk of
    /// at most MAX_BATCH_BYTES), so the offsets fit in u32.
    fn append_chunk(&mut self, now: Instant, chunk: &mut EncodedBatch) {
        if self.starts.is_empty() {
            // An empty builder takes the chunk's encodings (`push_chunk` closed a batch
            // with others first).
            self.alts.resize_with(chunk.alts.len(), AltOpen::default);
        }
        for (a, c) in self.alts.iter_mut().zip(&chunk.alts) {
            if !self.starts.is_empty() {
                a.body.push(b'\n');
            }
            let base = a.body.len() as u32;
            a.body.extend_from_slice(&c.body);
            a.starts.extend(c.starts.iter().map(|s| s + base));
        }
        if !self.body.is_empty() {
            self.body.push(b'\n');
        }
        let base = self.body.len() as u32;
        self.body.extend_from_slice(&chunk.body);
        if !chunk.dests.is_empty() || !self.dests.is_empty() {
            self.dests.resize(self.starts.len(), UNROUTED);
            if chunk.dests.is_empty() {
                self.dests
                    .resize(self.starts.len() + chunk.starts.len(), UNROUTED);
            } else {
                self.dests.extend_from_slice(&chunk.dests);
            }
        }
        self.starts.extend(chunk.starts.iter().map(|s| s + base));
        self.holds.append(&mut chunk.holds);
        if self.opened.is_none() {
            self.opened = Some(now);
        }
    }

    fn finish_open(&mut self) -> EncodedBatch {
        let used = self.body.len();
        // Size the next body for what this one needed and a quarter more, so it rarely
        // reallocates while filling: a TCP read's chunk varies by a few frames, and sized to
        // exactly the last one, every other chunk doubled its body (4 % of a TCP profile in
        // realloc copies).
        self.next_capacity =
            (used + used / 4).clamp(1024, self.policy.max_bytes.saturating_add(1024));
        self.next_events = self.starts.len().min(self.policy.max_events).max(1);
        let body = std::mem::replace(&mut self.body, Vec::with_capacity(self.next_capacity));
        let starts = std::mem::replace(&mut self.starts, Vec::with_capacity(self.next_events));
        let mut dests = std::mem::take(&mut self.dests);
        if !dests.is_empty() {
            dests.resize(starts.len(), UNROUTED);
            // Routed once, routed again: sized like the event starts.
            self.dests = Vec::with_capacity(self.next_events);
        }
        self.opened = None;
        self.due = None;
        let alts = self
            .alts
            .iter_mut()
            .map(|a| {
                let cap = a
                    .body
                    .len()
                    .clamp(1024, self.next_capacity.saturating_mul(2));
                let events = a.starts.len().max(1);
                Alt {
                    body: Bytes::from(std::mem::replace(&mut a.body, Vec::with_capacity(cap))),
                    starts: std::mem::replace(&mut a.starts, Vec::with_capacity(events)),
                }
            })
            .collect();
        EncodedBatch {
            body: Bytes::from(body),
            starts,
            dests,
            holds: std::mem::take(&mut self.holds),
            alts,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod alt_tests;
