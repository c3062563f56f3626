//! Bad-event isolation: which events of a batch HEC refuses, found without giving up the rest.
//!
//! HEC refuses a whole request with 400 when one event in it is bad (an index the token may
//! not write to, a malformed field). Its answer usually names the first bad event,
//! `{"text":"Incorrect index","code":7,"invalid-event-number":N}` (0-based within the
//! request). [`Isolation`] turns that into the next requests to send:
//!
//! * with `invalid-event-number` N: event N is refused for good and the others of that
//!   request are sent again without it;
//! * without the field (or with one outside the request): the request is split in two halves
//!   and each is sent on its own (bisection), down to single events;
//! * 413 (too large) splits the same way; a single event that is still too large is refused.
//! * with a fallback index configured, an event refused for its index (code 7) is taken back
//!   ([`Isolation::fall_back`]) and sent once more, with the others so refused, as one
//!   fallback piece after the rest ([`crate::fallback`]); a fallback piece refused for its
//!   index is refused whole, never tried again.
//!
//! # Events before N
//!
//! Splunk may already have indexed the events before N when it answers 400; its
//! documentation does not settle it. [`ResendPolicy::All`] (the default) sends them again:
//! at least once — they may be duplicated, never lost. [`ResendPolicy::AfterInvalid`] trusts
//! that they were indexed and sends only the events after N: no duplicates if Splunk did
//! index them, loss if it did not. Either way every event sent again is counted
//! ([`Isolation::resent_events`]).
//!
//! The plan is sans-IO: it works on event indexes and never sees a socket or a clock. The
//! caller sends each [`Piece`] and reports what HEC answered.

use std::ops::Range;

/// Splunk's answer body, `{"text":…,"code":…}` plus the optional fields this client reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HecAnswer {
    pub text: Option<String>,
    pub code: Option<i64>,
    /// 0-based index of the first refused event in the request.
    pub invalid_event: Option<u64>,
    /// Indexer acknowledgement ID of an accepted request.
    pub ack_id: Option<u64>,
}

impl HecAnswer {
    /// Reads what it can; a body that is not HEC's JSON gives an empty answer (the status
    /// code alone then decides).
    pub fn parse(body: &[u8]) -> HecAnswer {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
            return HecAnswer::default();
        };
        HecAnswer {
            text: v.get("text").and_then(|t| t.as_str()).map(str::to_owned),
            code: v.get("code").and_then(serde_json::Value::as_i64),
            invalid_event: v
                .get("invalid-event-number")
                .and_then(serde_json::Value::as_u64),
            ack_id: v.get("ackId").and_then(serde_json::Value::as_u64),
        }
    }
}

/// What a 400 from HEC is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadRequestKind {
    /// The data: some event(s) of the request are refused (codes 5, 6, 7, 12, 13, 15 and
    /// anything HEC does not document). Isolated.
    Data,
    /// The request itself, whatever it carries: a data channel missing or invalid (10, 11),
    /// acknowledgement disabled on the token (14), query-string auth off (16). Every request
    /// would get the same answer, so isolating would only multiply requests: the batch is
    /// held and retried like a 401/403 until the token or the setting is fixed.
    Request,
}

impl BadRequestKind {
    pub fn of(code: Option<i64>) -> BadRequestKind {
        match code {
            Some(10 | 11 | 14 | 16) => BadRequestKind::Request,
            _ => BadRequestKind::Data,
        }
    }
}

/// Splunk's code for "Incorrect index": the one refusal the fallback index answers.
pub const FALLBACK_CODE: i64 = 7;

/// Whether the events before an `invalid-event-number` are sent again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResendPolicy {
    /// At least once: resend them (duplicates possible, loss never).
    #[default]
    All,
    /// Trust that Splunk indexed them: resend only the events after the refused one.
    AfterInvalid,
}

/// Some events of a batch, in batch order, as disjoint ascending index ranges: one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    ranges: Vec<Range<u32>>,
    /// How many timeout halvings led to this piece (bounds the splitting on latency).
    pub(crate) depth: u8,
    /// Its events were refused for their index and go to the fallback index
    /// ([`crate::fallback`]); never set again on events refused from such a piece.
    pub(crate) fallback: bool,
}

impl Piece {
    /// Events `range` of the batch.
    pub fn range(range: Range<u32>) -> Piece {
        let ranges = if range.is_empty() {
            Vec::new()
        } else {
            vec![range]
        };
        Piece {
            ranges,
            depth: 0,
            fallback: false,
        }
    }

    /// Some of this piece's events, of its kind (depth, fallback).
    fn from_ranges(ranges: impl IntoIterator<Item = Range<u32>>, like: &Piece) -> Piece {
        Piece {
            ranges: ranges.into_iter().filter(|r| !r.is_empty()).collect(),
            depth: like.depth,
            fallback: like.fallback,
        }
    }

    /// Whether its events go to the fallback index.
    pub fn is_fallback(&self) -> bool {
        self.fallback
    }

    pub fn ranges(&self) -> &[Range<u32>] {
        &self.ranges
    }

    pub fn len(&self) -> u32 {
        self.ranges.iter().map(|r| r.end - r.start).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Batch indexes of the piece's events, in order.
    pub fn indexes(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|r| r.clone())
    }

    /// The batch index of the piece's `local`-th event.
    pub fn global(&self, local: u64) -> Option<u32> {
        let mut left = local;
        for r in &self.ranges {
            let n = u64::from(r.end - r.start);
            if left < n {
                return Some(r.start + left as u32);
            }
            left -= n;
        }
        None
    }

    /// The events before and after batch index `index` (which must be in the piece).
    fn around(&self, index: u32) -> (Piece, Piece) {
        let mut before = Vec::new();
        let mut after = Vec::new();
        for r in &self.ranges {
            if r.end <= index {
                before.push(r.clone());
            } else if r.start > index {
                after.push(r.clone());
            } else {
                before.push(r.start..index);
                after.push(index + 1..r.end);
            }
        }
        (
            Piece::from_ranges(before, self),
            Piece::from_ranges(after, self),
        )
    }

    /// The first and second half by event count (the first half is the smaller one).
    pub fn halves(&self) -> (Piece, Piece) {
        let half = u64::from(self.len() / 2);
        match self.global(half) {
            None => (self.clone(), Piece::from_ranges([], self)),
            Some(mid) => {
                let mut first = Vec::new();
                let mut second = Vec::new();
                for r in &self.ranges {
                    if r.end <= mid {
                        first.push(r.clone());
                    } else if r.start >= mid {
                        second.push(r.clone());
                    } else {
                        first.push(r.start..mid);
                        second.push(mid..r.end);
                    }
                }
                (
                    Piece::from_ranges(first, self),
                    Piece::from_ranges(second, self),
                )
            }
        }
    }

    /// The piece's body: its events cut out of the batch body (`starts[i]` is where event
    /// `i` begins; events are separated by one `\n`), joined by `\n`. A single range is a
    /// slice of the batch body, no copy.
    pub fn body(&self, body: &bytes::Bytes, starts: &[u32]) -> bytes::Bytes {
        let span = |r: &Range<u32>| -> Range<usize> {
            let s = starts
                .get(r.start as usize)
                .map_or(body.len(), |&s| s as usize);
            let e = starts
                .get(r.end as usize)
                .map_or(body.len(), |&n| n as usize - 1);
            s.min(body.len())..e.clamp(s.min(body.len()), body.len())
        };
        match self.ranges.as_slice() {
            [] => bytes::Bytes::new(),
            [one] => body.slice(span(one)),
            many => {
                let total: usize = many.iter().map(|r| span(r).len() + 1).sum();
                let mut out = Vec::with_capacity(total);
                for (i, r) in many.iter().enumerate() {
                    if i > 0 {
                        out.push(b'\n');
                    }
                    out.extend_from_slice(&body[span(r)]);
                }
                bytes::Bytes::from(out)
            }
        }
    }
}

impl Piece {
    /// The bytes of a one-range piece, borrowed from the batch body (empty for none; the
    /// first range only for more).
    pub fn body_ref<'a>(&self, body: &'a [u8], starts: &[u32]) -> &'a [u8] {
        let Some(r) = self.ranges.first() else {
            return &[];
        };
        let s = starts
            .get(r.start as usize)
            .map_or(body.len(), |&s| s as usize)
            .min(body.len());
        let e = starts
            .get(r.end as usize)
            .map_or(body.len(), |&n| n as usize - 1)
            .clamp(s, body.len());
        &body[s..e]
    }
}

/// Where each event of a `\n`-joined body starts (the first at 0). Empty for an empty body.
pub fn event_starts(body: &[u8]) -> Vec<u32> {
    if body.is_empty() {
        return Vec::new();
    }
    let mut starts = vec![0u32];
    starts.extend(
        body.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| (i + 1) as u32),
    );
    starts
}

/// HEC's answer to one piece, as far as isolation cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PieceAnswer {
    /// 2xx: every event of the piece was accepted.
    Accepted,
    /// 400 about the data, with Splunk's code, text and `invalid-event-number` if given.
    BadData {
        code: Option<i64>,
        text: String,
        invalid_event: Option<u64>,
    },
    /// 413.
    TooLarge { text: String },
}

/// One event refused for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedEvent {
    /// Index in the batch.
    pub index: u32,
    /// HTTP status (400 or 413).
    pub status: u16,
    /// Splunk's code, when it gave one.
    pub code: Option<i64>,
    pub text: String,
}

/// The isolation plan of one batch: pieces still to send, and what is known so far.
#[derive(Debug)]
pub struct Isolation {
    policy: ResendPolicy,
    pending: Vec<Piece>,
    refused: Vec<RefusedEvent>,
    accepted: Vec<Piece>,
    /// Events refused for their index, to be sent to the fallback index once the pending
    /// pieces are answered (as one piece: they all go to the same index).
    fallback: Vec<u32>,
    resent_events: u64,
    requests: u64,
}

impl Isolation {
    /// A plan that starts by sending all `events` events as one piece.
    pub fn new(events: u32, policy: ResendPolicy) -> Isolation {
        let mut pending = Vec::with_capacity(2);
        if events > 0 {
            pending.push(Piece::range(0..events));
        }
        Isolation {
            policy,
            pending,
            refused: Vec::new(),
            accepted: Vec::new(),
            fallback: Vec::new(),
            resent_events: 0,
            requests: 0,
        }
    }

    /// The next piece to send, if any is left. Pieces come out in batch order.
    pub fn next_piece(&mut self) -> Option<Piece> {
        let p = match self.pending.pop() {
            Some(p) => p,
            None if !self.fallback.is_empty() => {
                let mut idx = std::mem::take(&mut self.fallback);
                idx.sort_unstable();
                idx.dedup();
                let mut ranges: Vec<Range<u32>> = Vec::new();
                for i in idx {
                    match ranges.last_mut() {
                        Some(r) if r.end == i => r.end = i + 1,
                        _ => ranges.push(i..i + 1),
                    }
                }
                Piece {
                    ranges,
                    depth: 0,
                    fallback: true,
                }
            }
            None => return None,
        };
        self.requests += 1;
        Some(p)
    }

    /// Takes event `index` back from the refused ones (it was refused for its index, from a
    /// piece that was not a fallback one) to send it to the fallback index. False when it is
    /// not among the refused events.
    pub fn fall_back(&mut self, index: u32) -> bool {
        let Some(pos) = self.refused.iter().position(|r| r.index == index) else {
            return false;
        };
        self.refused.remove(pos);
        self.fallback.push(index);
        true
    }

    /// Puts a piece back to be sent again later (a retry that did not reach a verdict).
    pub fn push_back(&mut self, piece: Piece) {
        if !piece.is_empty() {
            self.pending.push(piece);
        }
    }

    /// Sends `piece` again as two halves (request size backed off under latency). Hands the
    /// piece back when it cannot be split further (one event, or `max_depth` halvings).
    pub fn split_for_latency(&mut self, piece: Piece, max_depth: u8) -> Result<(), Piece> {
        if piece.len() < 2 || piece.depth >= max_depth {
            return Err(piece);
        }
        let (mut a, mut b) = piece.halves();
        a.depth = piece.depth + 1;
        b.depth = piece.depth + 1;
        self.push_pieces(a, b);
        Ok(())
    }

    fn push_pieces(&mut self, first: Piece, second: Piece) {
        // A stack: push the later one first so pieces go out in batch order.
        if !second.is_empty() {
            self.pending.push(second);
        }
        if !first.is_empty() {
            self.pending.push(first);
        }
    }

    /// Records HEC's answer to `piece` and plans what follows.
    pub fn answer(&mut self, piece: Piece, answer: PieceAnswer) {
        match answer {
            PieceAnswer::Accepted => self.accepted.push(piece),
            PieceAnswer::TooLarge { text } => {
                if piece.len() >= 2 {
                    let (a, b) = piece.halves();
                    self.resent_events += u64::from(piece.len());
                    self.push_pieces(a, b);
                } else if let Some(index) = piece.global(0) {
                    self.refused.push(RefusedEvent {
                        index,
                        status: 413,
                        code: None,
                        text,
                    });
                }
            }
            PieceAnswer::BadData {
                code,
                text,
                invalid_event: _,
            } if piece.fallback && code == Some(FALLBACK_CODE) => {
                // Every event of a fallback piece asks for the fallback index: refused for
                // it, they are all refused, and never tried again.
                for index in piece.indexes() {
                    self.refused.push(RefusedEvent {
                        index,
                        status: 400,
                        code,
                        text: text.clone(),
                    });
                }
            }
            PieceAnswer::BadData {
                code,
                text,
                invalid_event,
            } => {
                let named = invalid_event.and_then(|n| piece.global(n));
                match named {
                    Some(index) => {
                        self.refused.push(RefusedEvent {
                            index,
                            status: 400,
                            code,
                            text,
                        });
                        let (before, after) = piece.around(index);
                        let before = match self.policy {
                            ResendPolicy::All => before,
                            ResendPolicy::AfterInvalid => {
                                // Trusted as indexed by Splunk.
                                self.accepted.push(before);
                                Piece::from_ranges([], &piece)
                            }
                        };
                        // Sent again as one request: the events of the refused one, less N.
                        let mut ranges = before.ranges;
                        ranges.extend(after.ranges);
                        let rest = Piece::from_ranges(ranges, &piece);
                        self.resent_events += u64::from(rest.len());
                        if !rest.is_empty() {
                            self.pending.push(rest);
                        }
                    }
                    None if piece.len() >= 2 => {
                        self.resent_events += u64::from(piece.len());
                        let (a, b) = piece.halves();
                        self.push_pieces(a, b);
                    }
                    None => {
                        if let Some(index) = piece.global(0) {
                            self.refused.push(RefusedEvent {
                                index,
                                status: 400,
                                code,
                                text,
                            });
                        }
                    }
                }
            }
        }
    }

    pub fn is_done(&self) -> bool {
        self.pending.is_empty() && self.fallback.is_empty()
    }

    /// Events sent again because of a 400 or 413 (each time they were sent again).
    pub fn resent_events(&self) -> u64 {
        self.resent_events
    }

    /// Pieces handed out so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Pieces accepted so far (with indexer acknowledgement they still await their ack).
    pub fn accepted(&self) -> &[Piece] {
        &self.accepted
    }

    /// The events refused for good, in the order they were found.
    pub fn refused(&self) -> &[RefusedEvent] {
        &self.refused
    }

    pub fn into_refused(self) -> Vec<RefusedEvent> {
        self.refused
    }
}

#[cfg(test)]
mod tests;
