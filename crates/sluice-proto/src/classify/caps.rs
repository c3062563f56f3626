//! Regex captures without an allocation per call.
//!
//! `Regex::captures` allocates its slot vector on every call, and vendor parsers run on
//! every received message (some, like UniFi's, on every message with a comma, because SC4S
//! gives them no cheaper filter). That made the receive path allocate once per message.
//! Here each thread keeps one `CaptureLocations` per regex and reuses it; the spans are
//! copied into a small inline array so the result borrows nothing but the haystack.

use std::cell::RefCell;
use std::ops::Range;

use regex::bytes::{CaptureLocations, Regex};

/// Groups kept inline (group 0 included). A regex with more groups falls back to
/// `Regex::captures`, which is correct but allocates; none of the vendor regexes needs it.
const INLINE: usize = 16;
/// Distinct regexes remembered per thread before the cache is cleared and rebuilt.
const CACHE: usize = 256;

thread_local! {
    static LOCS: RefCell<Vec<(usize, CaptureLocations)>> = const { RefCell::new(Vec::new()) };
}

/// One matched group: the haystack bytes it spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span<'h> {
    hay: &'h [u8],
    start: usize,
    end: usize,
}

impl<'h> Span<'h> {
    pub fn as_bytes(&self) -> &'h [u8] {
        &self.hay[self.start..self.end]
    }
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }
    pub fn end(&self) -> usize {
        self.end
    }
}

/// The groups of one match.
#[derive(Debug, Clone, Copy)]
pub struct Caps<'h> {
    hay: &'h [u8],
    /// `(start, end)` per group; `usize::MAX` start for a group that did not take part.
    slots: [(usize, usize); INLINE],
    len: usize,
}

impl<'h> Caps<'h> {
    pub fn get(&self, i: usize) -> Option<Span<'h>> {
        let &(start, end) = self.slots[..self.len].get(i)?;
        (start != usize::MAX).then_some(Span {
            hay: self.hay,
            start,
            end,
        })
    }
}

/// `Regex::captures` through a per-thread, reused `CaptureLocations`.
pub trait CapturesExt {
    fn caps<'h>(&self, hay: &'h [u8]) -> Option<Caps<'h>>;
}

impl CapturesExt for Regex {
    fn caps<'h>(&self, hay: &'h [u8]) -> Option<Caps<'h>> {
        let len = self.captures_len();
        let mut caps = Caps {
            hay,
            slots: [(usize::MAX, 0); INLINE],
            len,
        };
        if len > INLINE {
            let c = self.captures(hay)?;
            caps.len = INLINE;
            for (i, slot) in caps.slots.iter_mut().enumerate() {
                if let Some(m) = c.get(i) {
                    *slot = (m.start(), m.end());
                }
            }
            return Some(caps);
        }
        // Keyed by address and group count: a regex that is dropped and another built at the
        // same address with a different shape must not reuse the old locations.
        let key = std::ptr::from_ref(self) as usize ^ (len << 48);
        LOCS.with_borrow_mut(|cache| {
            let at = match cache.iter().position(|(k, _)| *k == key) {
                Some(at) => at,
                None => {
                    if cache.len() >= CACHE {
                        cache.clear();
                    }
                    cache.push((key, self.capture_locations()));
                    cache.len() - 1
                }
            };
            let locs = &mut cache[at].1;
            self.captures_read(locs, hay)?;
            for (i, slot) in caps.slots[..len].iter_mut().enumerate() {
                if let Some(span) = locs.get(i) {
                    *slot = span;
                }
            }
            Some(())
        })?;
        Some(caps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_regex_captures() {
        let re = Regex::new(r"^(\w+)(?: (\d+))?(x)?").unwrap();
        for hay in [&b"abc 123"[..], b"abc", b"  ", b"abc 12x"] {
            let want = re.captures(hay);
            let got = re.caps(hay);
            assert_eq!(want.is_some(), got.is_some(), "{hay:?}");
            if let (Some(w), Some(g)) = (want, got) {
                for i in 0..4 {
                    assert_eq!(
                        w.get(i).map(|m| (m.range(), m.as_bytes())),
                        g.get(i).map(|m| (m.range(), m.as_bytes())),
                        "{hay:?} group {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn two_regexes_share_the_cache_without_mixing() {
        let a = Regex::new(r"(a)(b)").unwrap();
        let b = Regex::new(r"(\d)").unwrap();
        assert_eq!(a.caps(b"xab").unwrap().get(2).unwrap().as_bytes(), b"b");
        assert_eq!(b.caps(b"x7").unwrap().get(1).unwrap().as_bytes(), b"7");
        assert!(b.caps(b"x7").unwrap().get(2).is_none());
        assert_eq!(a.caps(b"ab").unwrap().get(1).unwrap().range(), 0..1);
    }

    #[test]
    fn many_groups_fall_back() {
        let pat = "(a)".repeat(20);
        let re = Regex::new(&pat).unwrap();
        let hay = "a".repeat(20);
        let c = re.caps(hay.as_bytes()).unwrap();
        assert_eq!(c.get(15).unwrap().range(), 14..15);
        assert!(c.get(16).is_none());
    }
}
