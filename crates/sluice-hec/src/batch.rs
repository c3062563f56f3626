//! Batches of encoded HEC events.
//!
//! A batch body is what goes on the wire (before optional gzip): HEC event JSON objects joined
//! by a single `\n`, no leading or trailing separator — the shape syslog-ng's `http()` driver
//! produces for SC4S. Each event must be one line (JSON encoders escape control characters, so
//! a raw `\n` byte only ever appears as the separator); a 413 split relies on that.
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
//! # Tickets
//!
//! A batch carries opaque tickets ([`EncodedBatch::attach`]) that are dropped together with
//! the batch. The daemon attaches its input-window permits, so a batch leaving memory
//! (delivered, or deliberately dropped and counted) is exactly what frees window space. A
//! batch split after a 413 shares its tickets between the halves; they are released when both
//! halves are finished.
//!
//! # Allocation
//!
//! The open body is a `Vec<u8>` the encoder appends to. Handing a batch off moves that vector
//! into a `Bytes` without copying; the next body is allocated once with the capacity the
//! previous batch needed, so steady state costs one allocation per batch and none per event.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;

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

type Ticket = Box<dyn Any + Send>;

/// Newline-joined HEC events plus the tickets that live exactly as long as they do.
pub struct EncodedBatch {
    /// The request body before compression.
    pub body: Bytes,
    /// Number of events in `body`.
    pub events: u32,
    // A Mutex only to make the batch `Sync` (so it can be referenced across `.await`); it is
    // never contended — all access goes through `get_mut`.
    tickets: Mutex<Vec<Ticket>>,
}

impl EncodedBatch {
    /// A batch (or a multi-event chunk for [`BatchBuilder::push_chunk`]) from an already
    /// encoded body. `events` must be the number of newline-separated events in `body`.
    pub fn new(body: Bytes, events: u32) -> Self {
        EncodedBatch {
            body,
            events,
            tickets: Mutex::new(Vec::new()),
        }
    }

    /// Ties `ticket` to this batch: it is dropped when the batch is finished (delivered, or
    /// dropped on purpose and counted).
    pub fn attach(&mut self, ticket: impl Any + Send + 'static) {
        self.tickets_mut().push(Box::new(ticket));
    }

    /// Number of tickets attached (a split batch holds one shared ticket per half).
    pub fn ticket_count(&self) -> usize {
        match self.tickets.lock() {
            Ok(t) => t.len(),
            Err(p) => p.into_inner().len(),
        }
    }

    fn tickets_mut(&mut self) -> &mut Vec<Ticket> {
        // A poisoned lock only means a panic elsewhere while holding it; the vector is intact.
        match self.tickets.get_mut() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn take_tickets(&mut self) -> Vec<Ticket> {
        std::mem::take(self.tickets_mut())
    }

    /// Splits at the event boundary closest to the middle, for a 413 answer. Returns the
    /// batch unchanged when it holds a single line.
    // The client now splits by event index (`reject::Isolation`); kept for its tests.
    #[allow(dead_code)]
    pub(crate) fn split_half(mut self) -> Result<(EncodedBatch, EncodedBatch), EncodedBatch> {
        let body = self.body.clone();
        let lines = body.iter().filter(|&&b| b == b'\n').count() + 1;
        if lines < 2 || self.events < 2 {
            return Err(self);
        }
        let want = lines / 2;
        let mut seen = 0;
        let mut cut = 0;
        for (i, &b) in body.iter().enumerate() {
            if b == b'\n' {
                seen += 1;
                if seen == want {
                    cut = i;
                    break;
                }
            }
        }
        // Events normally equal lines; if an encoder broke that contract, apportion the count
        // so the halves still add up to what the window accounted for.
        let first_events = if lines as u64 == u64::from(self.events) {
            want as u32
        } else {
            ((u64::from(self.events) * want as u64) / lines as u64)
                .clamp(1, u64::from(self.events) - 1) as u32
        };
        let first = body.slice(..cut);
        let second = body.slice(cut + 1..);
        let tickets = self.take_tickets();
        let mut a = EncodedBatch::new(first, first_events);
        let mut b = EncodedBatch::new(second, self.events - first_events);
        if !tickets.is_empty() {
            let shared = Arc::new(Mutex::new(tickets));
            a.attach(Arc::clone(&shared));
            b.attach(shared);
        }
        Ok((a, b))
    }
}

impl fmt::Debug for EncodedBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncodedBatch")
            .field("bytes", &self.body.len())
            .field("events", &self.events)
            .field("tickets", &self.ticket_count())
            .finish()
    }
}

/// Accumulates encoded events into batches according to a [`BatchPolicy`].
pub struct BatchBuilder {
    policy: BatchPolicy,
    body: Vec<u8>,
    events: u32,
    tickets: Vec<Ticket>,
    opened: Option<Instant>,
    // Set when the open batch is already full but could not be returned from the push that
    // filled it; the batch is then due at this instant.
    due: Option<Instant>,
    next_capacity: usize,
}

impl fmt::Debug for BatchBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchBuilder")
            .field("policy", &self.policy)
            .field("bytes", &self.body.len())
            .field("events", &self.events)
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
            max_bytes: policy.max_bytes.max(1),
            timeout: policy.timeout,
        };
        let next_capacity = policy.max_bytes.min(64 * 1024);
        BatchBuilder {
            policy,
            body: Vec::with_capacity(next_capacity),
            events: 0,
            tickets: Vec::new(),
            opened: None,
            due: None,
            next_capacity,
        }
    }

    pub fn policy(&self) -> &BatchPolicy {
        &self.policy
    }

    pub fn is_empty(&self) -> bool {
        self.events == 0 && self.body.is_empty()
    }

    /// Events in the open batch.
    pub fn len(&self) -> usize {
        self.events as usize
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
        let out = if self.due.is_some() {
            self.take()
        } else {
            None
        };
        let had_events = self.events > 0;
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

        if self.body.len() > self.policy.max_bytes && had_events {
            // `had_events` means nothing was due, so `out` is empty. Move the crossing event
            // into the next batch so the closed one stays within the byte limit.
            let carried = self.body[start..].to_vec();
            self.body.truncate(mark);
            let closed = self.finish_open();
            self.body.extend_from_slice(&carried);
            self.events = 1;
            self.opened = Some(now);
            if self.is_full() {
                self.due = Some(now);
            }
            return Some(closed);
        }

        self.events += 1;
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

    /// Merges a pre-encoded multi-event chunk (its body, count and tickets). The open batch is
    /// closed first when the chunk would push it over a limit. A chunk that exceeds the limits
    /// on its own is not split: it becomes one batch.
    pub fn push_chunk(&mut self, now: Instant, mut chunk: EncodedBatch) -> Option<EncodedBatch> {
        let out = if self.due.is_some() {
            self.take()
        } else {
            None
        };
        if chunk.body.is_empty() && chunk.events == 0 {
            // Nothing to deliver; its tickets (if any) guard no events.
            return out;
        }
        let chunk_full = chunk.body.len() >= self.policy.max_bytes
            || chunk.events as usize >= self.policy.max_events;
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
            && self.events as usize + chunk.events as usize <= self.policy.max_events;
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
        self.events as usize >= self.policy.max_events || self.body.len() >= self.policy.max_bytes
    }

    fn append_chunk(&mut self, now: Instant, chunk: &mut EncodedBatch) {
        if !self.body.is_empty() {
            self.body.push(b'\n');
        }
        self.body.extend_from_slice(&chunk.body);
        self.events += chunk.events;
        self.tickets.append(&mut chunk.take_tickets());
        if self.opened.is_none() {
            self.opened = Some(now);
        }
    }

    fn finish_open(&mut self) -> EncodedBatch {
        let used = self.body.len();
        // Size the next body for what this one needed, so it rarely reallocates while filling.
        self.next_capacity = used.clamp(1024, self.policy.max_bytes.saturating_add(1024));
        let body = std::mem::replace(&mut self.body, Vec::with_capacity(self.next_capacity));
        let mut batch = EncodedBatch::new(Bytes::from(body), self.events);
        *batch.tickets_mut() = std::mem::take(&mut self.tickets);
        self.events = 0;
        self.opened = None;
        self.due = None;
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts live instances; a ticket whose drop is observable.
    struct Guard(Arc<AtomicUsize>);
    impl Guard {
        fn new(live: &Arc<AtomicUsize>) -> Self {
            live.fetch_add(1, Ordering::SeqCst);
            Guard(Arc::clone(live))
        }
    }
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn policy(events: usize, bytes: usize) -> BatchPolicy {
        BatchPolicy {
            max_events: events,
            max_bytes: bytes,
            timeout: Duration::from_millis(300),
        }
    }

    fn ev(s: &str) -> impl FnOnce(&mut Vec<u8>) + '_ {
        move |out| out.extend_from_slice(s.as_bytes())
    }

    #[test]
    fn closes_at_max_events_with_newline_separators() {
        let mut b = BatchBuilder::new(policy(3, 1 << 20));
        let t = Instant::now();
        assert!(b.push_with(t, ev("{\"event\":\"a\"}")).is_none());
        assert!(b.push_with(t, ev("{\"event\":\"b\"}")).is_none());
        let batch = b
            .push_with(t, ev("{\"event\":\"c\"}"))
            .expect("third event closes");
        assert_eq!(batch.events, 3);
        assert_eq!(
            &batch.body[..],
            b"{\"event\":\"a\"}\n{\"event\":\"b\"}\n{\"event\":\"c\"}"
        );
        assert!(b.is_empty());
        assert_eq!(b.deadline(), None);
    }

    #[test]
    fn event_crossing_the_byte_limit_moves_to_the_next_batch() {
        // 10-byte events; limit 25 bytes: two events + separator = 21, a third would be 32.
        let mut b = BatchBuilder::new(policy(100, 25));
        let t0 = Instant::now();
        assert!(b.push_with(t0, ev("aaaaaaaaaa")).is_none());
        assert!(b.push_with(t0, ev("bbbbbbbbbb")).is_none());
        let t1 = t0 + Duration::from_millis(5);
        let closed = b.push_with(t1, ev("cccccccccc")).expect("overflow closes");
        assert_eq!(&closed.body[..], b"aaaaaaaaaa\nbbbbbbbbbb");
        assert_eq!(closed.events, 2);
        assert!(closed.body.len() <= 25);
        assert_eq!(b.len(), 1);
        assert_eq!(b.bytes(), 10);
        // The moved event opened the new batch, so its deadline counts from t1.
        assert_eq!(b.deadline(), Some(t1 + Duration::from_millis(300)));
        let rest = b.take().unwrap();
        assert_eq!(&rest.body[..], b"cccccccccc");
        assert_eq!(rest.events, 1);
    }

    #[test]
    fn reaching_the_byte_limit_exactly_closes_the_batch() {
        let mut b = BatchBuilder::new(policy(100, 21));
        let t = Instant::now();
        assert!(b.push_with(t, ev("aaaaaaaaaa")).is_none());
        let closed = b
            .push_with(t, ev("bbbbbbbbbb"))
            .expect("21 bytes reaches the limit");
        assert_eq!(closed.body.len(), 21);
        assert!(b.is_empty());
    }

    #[test]
    fn oversized_single_event_forms_its_own_batch() {
        let mut b = BatchBuilder::new(policy(100, 8));
        let t = Instant::now();
        let big = b
            .push_with(t, ev("0123456789abcdef"))
            .expect("oversized alone ships");
        assert_eq!(big.events, 1);
        assert_eq!(big.body.len(), 16);

        // After a small event, an oversized one is moved out and is itself due at once.
        assert!(b.push_with(t, ev("x")).is_none());
        let t2 = t + Duration::from_millis(1);
        let small = b.push_with(t2, ev("0123456789abcdef")).expect("overflow");
        assert_eq!(&small.body[..], b"x");
        assert_eq!(
            b.deadline(),
            Some(t2),
            "the moved oversized event is due now"
        );
        // The next push hands it over first and starts a fresh batch with the new event.
        let due = b.push_with(t2, ev("y")).expect("due batch");
        assert_eq!(&due.body[..], b"0123456789abcdef");
        assert_eq!(b.len(), 1);
        assert_eq!(&b.take().unwrap().body[..], b"y");
    }

    #[test]
    fn deadline_is_timeout_after_the_first_event() {
        let mut b = BatchBuilder::new(policy(100, 1000));
        assert_eq!(b.deadline(), None);
        let t0 = Instant::now();
        b.push_with(t0, ev("a"));
        b.push_with(t0 + Duration::from_millis(200), ev("b"));
        assert_eq!(b.deadline(), Some(t0 + Duration::from_millis(300)));
        let batch = b.take().unwrap();
        assert_eq!(batch.events, 2);
        assert_eq!(b.deadline(), None);
        assert!(b.take().is_none());
    }

    #[test]
    fn encoder_writing_nothing_counts_no_event() {
        let mut b = BatchBuilder::new(policy(100, 1000));
        let t = Instant::now();
        b.push_with(t, |_| {});
        assert!(b.is_empty());
        b.push_with(t, ev("a"));
        b.push_with(t, |_| {});
        let batch = b.take().unwrap();
        assert_eq!(&batch.body[..], b"a");
        assert_eq!(batch.events, 1);
    }

    #[test]
    fn chunks_merge_and_flush_before_overflowing() {
        let live = Arc::new(AtomicUsize::new(0));
        let chunk = |body: &'static str, n: u32| {
            let mut c = EncodedBatch::new(Bytes::from_static(body.as_bytes()), n);
            c.attach(Guard::new(&live));
            c
        };
        let mut b = BatchBuilder::new(policy(10, 30));
        let t = Instant::now();
        assert!(b.push_with(t, ev("e0")).is_none());
        assert!(b.push_chunk(t, chunk("c1\nc2\nc3", 3)).is_none());
        assert_eq!(b.len(), 4);
        assert_eq!(b.bytes(), 11);
        // 11 + 1 + 20 > 30: the open batch closes first, the chunk starts the next one.
        let closed = b
            .push_chunk(t, chunk("dddddddddd\neeeeeeeee", 2))
            .expect("flush before overflow");
        assert_eq!(&closed.body[..], b"e0\nc1\nc2\nc3");
        assert_eq!(closed.events, 4);
        assert_eq!(closed.ticket_count(), 1);
        assert_eq!(b.len(), 2);
        assert_eq!(live.load(Ordering::SeqCst), 2);
        drop(closed);
        assert_eq!(
            live.load(Ordering::SeqCst),
            1,
            "first chunk's ticket released"
        );
        let rest = b.take().unwrap();
        assert_eq!(rest.ticket_count(), 1);
        drop(rest);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn chunk_reaching_event_limit_closes_and_full_chunk_ships_without_copy() {
        let mut b = BatchBuilder::new(policy(4, 1000));
        let t = Instant::now();
        b.push_with(t, ev("a"));
        let closed = b
            .push_chunk(t, EncodedBatch::new(Bytes::from_static(b"b\nc\nd"), 3))
            .expect("4 events reached");
        assert_eq!(&closed.body[..], b"a\nb\nc\nd");
        let body = Bytes::from_static(b"1\n2\n3\n4\n5");
        let ptr = body.as_ptr();
        let whole = b
            .push_chunk(t, EncodedBatch::new(body, 5))
            .expect("a full chunk on an empty builder ships as is");
        assert_eq!(whole.body.as_ptr(), ptr);
        assert!(b.is_empty());
    }

    #[test]
    fn tickets_are_dropped_with_the_batch() {
        let live = Arc::new(AtomicUsize::new(0));
        let mut b = BatchBuilder::new(policy(2, 1000));
        let t = Instant::now();
        b.push_with(t, ev("a"));
        let mut batch = b.push_with(t, ev("b")).unwrap();
        batch.attach(Guard::new(&live));
        batch.attach(Guard::new(&live));
        assert_eq!(live.load(Ordering::SeqCst), 2);
        drop(batch);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn split_halves_share_tickets_until_both_are_finished() {
        let live = Arc::new(AtomicUsize::new(0));
        let mut batch = EncodedBatch::new(Bytes::from_static(b"a\nb\nc\nd\ne"), 5);
        batch.attach(Guard::new(&live));
        let (a, b) = batch.split_half().unwrap();
        assert_eq!((&a.body[..], a.events), (&b"a\nb"[..], 2));
        assert_eq!((&b.body[..], b.events), (&b"c\nd\ne"[..], 3));
        drop(a);
        assert_eq!(
            live.load(Ordering::SeqCst),
            1,
            "second half still holds the ticket"
        );
        let (b1, b2) = b.split_half().unwrap();
        assert_eq!((&b1.body[..], b1.events), (&b"c"[..], 1));
        assert_eq!((&b2.body[..], b2.events), (&b"d\ne"[..], 2));
        assert!(b1.split_half().is_err(), "a single event cannot be split");
        drop(b2);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn handoff_does_not_copy_the_body() {
        let mut b = BatchBuilder::new(policy(2, 1 << 20));
        let t = Instant::now();
        b.push_with(t, ev("a"));
        let ptr = b.body.as_ptr();
        let batch = b.push_with(t, ev("b")).unwrap();
        assert_eq!(batch.body.as_ptr(), ptr);
    }
}
