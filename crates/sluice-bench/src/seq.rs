//! Gap and duplicate detection for loggen-style sequence numbers.
//!
//! syslog-ng's `loggen` (and sluice's load tool) writes `seq: 0000000042, thread: 0003, runid:
//! 1772713731` into every message. [`SeqTracker`] finds those three values anywhere in an
//! event's text (the prefix before them depends on the wire format and on how the receiver
//! rewrote the message, so no offset is assumed), keys the stream by `(runid, thread)` and
//! keeps one bit per sequence number, so each event costs three substring searches and a
//! bit test — far below a microsecond.
//!
//! * `thread:` missing (older loggen) → thread 0; `runid:` missing → `None`.
//! * A text without a parsable `seq:` is counted in [`SeqReport::unparsed`].
//! * Sequence numbers above 10^12 are treated as unparsable (they cannot come from a
//!   10-digit counter and would only waste memory).
//! * [`SeqTracker::report`] with `Some(n)` expects sequence numbers `0..n` per thread (loggen
//!   counts from 0): `missing` is what in that range was never seen, `out_of_range` what was
//!   seen outside it. With `None`, `missing` counts the holes between the smallest and the
//!   largest number seen per thread.

use std::collections::HashMap;

const CHUNK_BITS: u32 = 16;
const CHUNK_WORDS: usize = (1 << CHUNK_BITS) / 64;
const MAX_SEQ: u64 = 1_000_000_000_000;
const MAX_GAPS: usize = 16;

/// Identity of one generated message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeqId {
    pub runid: Option<u64>,
    pub thread: u32,
    pub seq: u64,
}

/// Position just past the first `key` in `hay[from..]`, else in `hay[..from]`. loggen writes
/// the fields in order, so the search normally continues where the previous one stopped.
fn find_after(hay: &[u8], key: &[u8], from: usize) -> Option<usize> {
    let first = key[0];
    let scan = |lo: usize, hi: usize| {
        let mut i = lo;
        while i < hi {
            let off = hay[i..hi].iter().position(|&b| b == first)?;
            let at = i + off;
            if hay[at..].starts_with(key) {
                return Some(at + key.len());
            }
            i = at + 1;
        }
        None
    };
    scan(from, hay.len()).or_else(|| scan(0, from.min(hay.len())))
}

/// Leading digits of `s` (up to 20) as a number.
fn digits(s: &[u8]) -> Option<u64> {
    let n = s.iter().take(20).take_while(|b| b.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in &s[..n] {
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

/// Extracts the loggen identity from a message text.
pub fn parse_seq(text: &str) -> Option<SeqId> {
    let t = text.as_bytes();
    let at = find_after(t, b"seq: ", 0)?;
    let seq = digits(&t[at..])?;
    if seq > MAX_SEQ {
        return None;
    }
    let (thread, next) = match find_after(t, b"thread: ", at) {
        Some(p) => (
            digits(&t[p..]).map_or(0, |v| v.min(u64::from(u32::MAX)) as u32),
            p,
        ),
        None => (0, at),
    };
    let runid = find_after(t, b"runid: ", next).and_then(|p| digits(&t[p..]));
    Some(SeqId { runid, thread, seq })
}

#[derive(Debug, Default)]
struct Stream {
    chunks: Vec<Option<Box<[u64; CHUNK_WORDS]>>>,
    distinct: u64,
    duplicates: u64,
    min: u64,
    max: u64,
}

impl Stream {
    fn insert(&mut self, seq: u64) -> bool {
        let chunk = (seq >> CHUNK_BITS) as usize;
        if chunk >= self.chunks.len() {
            self.chunks.resize_with(chunk + 1, || None);
        }
        let words = self.chunks[chunk].get_or_insert_with(|| Box::new([0u64; CHUNK_WORDS]));
        let bit = (seq & ((1 << CHUNK_BITS) - 1)) as usize;
        let mask = 1u64 << (bit % 64);
        if words[bit / 64] & mask != 0 {
            self.duplicates += 1;
            return false;
        }
        words[bit / 64] |= mask;
        if self.distinct == 0 {
            self.min = seq;
            self.max = seq;
        } else {
            self.min = self.min.min(seq);
            self.max = self.max.max(seq);
        }
        self.distinct += 1;
        true
    }

    fn has(&self, seq: u64) -> bool {
        let chunk = (seq >> CHUNK_BITS) as usize;
        match self.chunks.get(chunk) {
            Some(Some(words)) => {
                let bit = (seq & ((1 << CHUNK_BITS) - 1)) as usize;
                words[bit / 64] & (1u64 << (bit % 64)) != 0
            }
            _ => false,
        }
    }

    /// Seen numbers in `[lo, hi)`.
    fn count_in(&self, lo: u64, hi: u64) -> u64 {
        let mut n = 0;
        let mut s = lo;
        while s < hi {
            let chunk = (s >> CHUNK_BITS) as usize;
            let chunk_end = ((chunk as u64) + 1) << CHUNK_BITS;
            let end = hi.min(chunk_end);
            if let Some(Some(words)) = self.chunks.get(chunk) {
                if s.is_multiple_of(64) && end.is_multiple_of(64) {
                    let w0 = ((s & ((1 << CHUNK_BITS) - 1)) / 64) as usize;
                    let w1 = w0 + ((end - s) / 64) as usize;
                    n += words[w0..w1]
                        .iter()
                        .map(|w| u64::from(w.count_ones()))
                        .sum::<u64>();
                } else {
                    n += (s..end).filter(|&x| self.has(x)).count() as u64;
                }
            }
            s = end;
        }
        n
    }

    /// Up to `MAX_GAPS` missing ranges (inclusive) in `[lo, hi)`.
    fn gaps(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut s = lo;
        let mut open: Option<u64> = None;
        while s < hi && out.len() < MAX_GAPS {
            let chunk = (s >> CHUNK_BITS) as usize;
            let chunk_end = (((chunk as u64) + 1) << CHUNK_BITS).min(hi);
            let present = matches!(self.chunks.get(chunk), Some(Some(_)));
            if !present {
                open.get_or_insert(s);
                s = chunk_end;
                continue;
            }
            while s < chunk_end && out.len() < MAX_GAPS {
                if self.has(s) {
                    if let Some(start) = open.take() {
                        out.push((start, s - 1));
                    }
                } else {
                    open.get_or_insert(s);
                }
                s += 1;
            }
        }
        if let Some(start) = open
            && out.len() < MAX_GAPS
        {
            out.push((start, hi - 1));
        }
        out
    }
}

/// Per-stream result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadReport {
    pub runid: Option<u64>,
    pub thread: u32,
    pub distinct: u64,
    pub duplicates: u64,
    pub min_seq: u64,
    pub max_seq: u64,
    pub missing: u64,
    pub out_of_range: u64,
    /// The first missing ranges (inclusive), at most 16.
    pub gaps: Vec<(u64, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeqReport {
    pub distinct: u64,
    pub duplicates: u64,
    pub missing: u64,
    pub unparsed: u64,
    /// Sorted by runid, then thread.
    pub per_thread: Vec<ThreadReport>,
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct SeqTracker {
    streams: HashMap<(Option<u64>, u32), Stream>,
    unparsed: u64,
}

impl SeqTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one identity; `false` if it was a duplicate.
    pub fn record(&mut self, id: SeqId) -> bool {
        self.streams
            .entry((id.runid, id.thread))
            .or_default()
            .insert(id.seq)
    }

    /// Records many identities; consecutive ones of the same stream share one map lookup.
    pub fn record_all(&mut self, ids: &[SeqId]) {
        let mut it = ids.iter().peekable();
        while let Some(first) = it.next() {
            let key = (first.runid, first.thread);
            let stream = self.streams.entry(key).or_default();
            stream.insert(first.seq);
            while let Some(next) = it.next_if(|n| (n.runid, n.thread) == key) {
                stream.insert(next.seq);
            }
        }
    }

    /// Parses and records one event text; `None` if it holds no sequence number.
    pub fn observe(&mut self, text: &str) -> Option<bool> {
        match parse_seq(text) {
            Some(id) => Some(self.record(id)),
            None => {
                self.unparsed += 1;
                None
            }
        }
    }

    /// Counts a text that had no sequence number (when the caller parsed it itself).
    pub fn record_unparsed(&mut self, n: u64) {
        self.unparsed += n;
    }

    pub fn distinct(&self) -> u64 {
        self.streams.values().map(|s| s.distinct).sum()
    }

    pub fn report(&self, expected_per_thread: Option<u64>) -> SeqReport {
        let mut keys: Vec<_> = self.streams.keys().copied().collect();
        keys.sort();
        let mut rep = SeqReport {
            unparsed: self.unparsed,
            ..SeqReport::default()
        };
        for key in keys {
            let s = &self.streams[&key];
            let (lo, hi) = match expected_per_thread {
                Some(n) => (0, n),
                None => (s.min, s.max + 1),
            };
            let in_range = s.count_in(lo, hi);
            let t = ThreadReport {
                runid: key.0,
                thread: key.1,
                distinct: s.distinct,
                duplicates: s.duplicates,
                min_seq: s.min,
                max_seq: s.max,
                missing: (hi - lo) - in_range,
                out_of_range: s.distinct - in_range,
                gaps: s.gaps(lo, hi),
            };
            rep.distinct += t.distinct;
            rep.duplicates += t.duplicates;
            rep.missing += t.missing;
            rep.per_thread.push(t);
        }
        rep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64, thread: u32) -> String {
        format!(
            "prg00000[1234]: seq: {seq:010}, thread: {thread:04}, runid: 1772713731, stamp: 2026-03-05T12:28:51 PADDPADD"
        )
    }

    #[test]
    fn parses_wherever_the_fields_are() {
        assert_eq!(
            parse_seq(&line(42, 3)),
            Some(SeqId {
                runid: Some(1772713731),
                thread: 3,
                seq: 42
            })
        );
        // RFC 5424 event text as SC4S renders it, with a BOM-less message and odd spacing.
        let t = "- - prg00001 1234 - -seq: 0000000007, thread: 0001, runid: 17         , stamp: x";
        assert_eq!(
            parse_seq(t),
            Some(SeqId {
                runid: Some(17),
                thread: 1,
                seq: 7
            })
        );
        // Old loggen: no thread.
        assert_eq!(
            parse_seq("localprg: seq: 0000000005, runid: 99 , stamp"),
            Some(SeqId {
                runid: Some(99),
                thread: 0,
                seq: 5
            })
        );
        assert_eq!(parse_seq("no sequence here"), None);
        assert_eq!(parse_seq("seq: , thread: 1"), None);
        assert_eq!(parse_seq("seq: 99999999999999999999999"), None);
    }

    #[test]
    fn reports_an_injected_duplicate_and_gap() {
        let mut t = SeqTracker::new();
        for seq in 0..1000u64 {
            if seq == 500 || (700..=702).contains(&seq) {
                continue; // the gaps
            }
            t.observe(&line(seq, 0));
            t.observe(&line(seq, 1));
        }
        t.record_all(&[
            parse_seq(&line(10, 1)).unwrap(), // the duplicate
            parse_seq(&line(1000, 3)).unwrap(),
        ]);
        t.observe("garbage");
        let r = t.report(Some(1000));
        assert_eq!(r.duplicates, 1);
        // Thread 3 holds only seq 1000, outside 0..1000: all 1000 expected are missing.
        assert_eq!(r.missing, 8 + 1000);
        assert_eq!(r.distinct, 2 * 996 + 1);
        assert_eq!(r.unparsed, 1);
        assert_eq!(r.per_thread.len(), 3);
        assert_eq!(r.per_thread[2].out_of_range, 1);
        let t1 = &r.per_thread[1];
        assert_eq!((t1.thread, t1.duplicates, t1.missing), (1, 1, 4));
        assert_eq!(t1.gaps, vec![(500, 500), (700, 702)]);
    }

    #[test]
    fn expected_count_finds_a_missing_tail_and_extra_numbers() {
        let mut t = SeqTracker::new();
        for seq in 0..90u64 {
            t.observe(&line(seq, 2));
        }
        t.observe(&line(150, 2));
        let r = t.report(Some(100));
        assert_eq!(r.missing, 10);
        assert_eq!(r.per_thread[0].out_of_range, 1);
        assert_eq!(r.per_thread[0].gaps, vec![(90, 99)]);
        // Without an expectation only holes between min and max count.
        let r = t.report(None);
        assert_eq!(r.missing, 150 - 90);
    }

    #[test]
    fn large_sequence_numbers_span_chunks() {
        let mut t = SeqTracker::new();
        for seq in (0..200_000u64).filter(|s| *s != 65_536 && *s != 131_071) {
            t.record(SeqId {
                runid: None,
                thread: 0,
                seq,
            });
        }
        let r = t.report(Some(200_000));
        assert_eq!(r.missing, 2);
        assert_eq!(
            r.per_thread[0].gaps,
            vec![(65_536, 65_536), (131_071, 131_071)]
        );
    }
}
