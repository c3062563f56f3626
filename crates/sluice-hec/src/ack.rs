//! HEC indexer acknowledgement: a 200 only says Splunk received a request; its `ackId` turns
//! true once the events are indexed.
//!
//! The protocol (Splunk's documentation): with `useACK` on the token, every request names a
//! data channel, a GUID in the `X-Splunk-Request-Channel` header (without it HEC answers 400
//! code 10). A successful answer carries `"ackId":N`, counted per channel. The client asks
//! `POST /services/collector/ack?channel=<GUID>` with `{"acks":[N,…]}` and gets
//! `{"acks":{"N":true|false,…}}`. Splunk forgets an ID once it has reported it true.
//!
//! # Channels and indexers
//!
//! An ackId is known only to the indexer that issued it. Each worker has its own channel and
//! its own HTTP connection (a client with a pool of one), and asks for its acks at the URL
//! that answered the request, over that same keep-alive connection when it is still open. A
//! load balancer that sends the query to another indexer gets "false" for that ID; the batch
//! then times out and is sent again — a duplicate, counted (`resent`), never a loss.
//!
//! # Tracking
//!
//! [`AckTracker`] is sans-IO: it holds what waits for an ack (the caller's item, e.g. one
//! piece of a batch), groups the IDs to ask for by URL, applies answers and hands back what
//! was acknowledged or what waited longer than the timeout. An answer that is not HEC's ack
//! JSON is an error ([`parse_answer`]); it never counts as an ack.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The request header naming the data channel.
pub const CHANNEL_HEADER: &str = "X-Splunk-Request-Channel";
/// The ack endpoint's path.
pub const ACK_PATH: &str = "/services/collector/ack";

/// A random GUID (version 4 layout) for one worker's data channel.
pub fn new_channel() -> String {
    let a = fastrand::u64(..);
    let b = fastrand::u64(..);
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        a as u16 & 0x0fff,
        ((b >> 48) as u16 & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// The body of an ack query.
pub fn query_body(ids: &[u64]) -> String {
    serde_json::json!({ "acks": ids }).to_string()
}

/// An ack answer that is not `{"acks":{"<id>":<bool>,…}}`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the ack endpoint answered something that is not HEC's ack JSON: {0}")]
pub struct AckGarbage(pub String);

/// Parses HEC's ack answer strictly.
pub fn parse_answer(body: &[u8]) -> Result<HashMap<u64, bool>, AckGarbage> {
    let garbage = || {
        let t = String::from_utf8_lossy(&body[..body.len().min(200)]);
        AckGarbage(t.trim().to_string())
    };
    let v: serde_json::Value = serde_json::from_slice(body).map_err(|_| garbage())?;
    let acks = v
        .get("acks")
        .and_then(|a| a.as_object())
        .ok_or_else(garbage)?;
    let mut out = HashMap::with_capacity(acks.len());
    for (k, v) in acks {
        let id = k.parse::<u64>().map_err(|_| garbage())?;
        let b = v.as_bool().ok_or_else(garbage)?;
        out.insert(id, b);
    }
    Ok(out)
}

#[derive(Debug)]
struct Waiting<T> {
    url: usize,
    id: u64,
    sent: Instant,
    item: T,
}

/// What one worker waits for.
#[derive(Debug)]
pub struct AckTracker<T> {
    waiting: Vec<Waiting<T>>,
}

impl<T> Default for AckTracker<T> {
    fn default() -> Self {
        AckTracker {
            waiting: Vec::new(),
        }
    }
}

impl<T> AckTracker<T> {
    pub fn insert(&mut self, url: usize, id: u64, sent: Instant, item: T) {
        self.waiting.push(Waiting {
            url,
            id,
            sent,
            item,
        });
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The IDs to ask for, grouped by the URL that issued them.
    pub fn queries(&self) -> Vec<(usize, Vec<u64>)> {
        let mut by: Vec<(usize, Vec<u64>)> = Vec::new();
        for w in &self.waiting {
            match by.iter_mut().find(|(u, _)| *u == w.url) {
                Some((_, ids)) => ids.push(w.id),
                None => by.push((w.url, vec![w.id])),
            }
        }
        by
    }

    /// Applies an answer from `url`: returns the items whose ID read true.
    pub fn apply(&mut self, url: usize, answer: &HashMap<u64, bool>) -> Vec<T> {
        self.take_where(|w| w.url == url && answer.get(&w.id) == Some(&true))
    }

    /// Removes and returns what has waited at least `timeout` by `now`.
    pub fn expired(&mut self, now: Instant, timeout: Duration) -> Vec<T> {
        self.take_where(|w| now.saturating_duration_since(w.sent) >= timeout)
    }

    /// Everything still waiting (shutdown).
    pub fn drain(&mut self) -> Vec<T> {
        self.waiting.drain(..).map(|w| w.item).collect()
    }

    /// The earliest instant at which something expires.
    pub fn next_expiry(&self, timeout: Duration) -> Option<Instant> {
        self.waiting.iter().map(|w| w.sent + timeout).min()
    }

    fn take_where(&mut self, mut f: impl FnMut(&Waiting<T>) -> bool) -> Vec<T> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.waiting.len() {
            if f(&self.waiting[i]) {
                out.push(self.waiting.swap_remove(i).item);
            } else {
                i += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_are_guids_and_differ() {
        let a = new_channel();
        let b = new_channel();
        assert_ne!(a, b);
        let groups: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert!(a.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
    }

    #[test]
    fn answers_are_parsed_strictly() {
        let m = parse_answer(br#"{"acks":{"0":true,"3":false}}"#).unwrap();
        assert_eq!(m.get(&0), Some(&true));
        assert_eq!(m.get(&3), Some(&false));
        for bad in [
            &b"<html>ack service unavailable</html>"[..],
            br#"{"acks":[0,1]}"#,
            br#"{"acks":{"x":true}}"#,
            br#"{"acks":{"1":"true"}}"#,
            br#"{"text":"Success"}"#,
            b"",
        ] {
            assert!(
                parse_answer(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(query_body(&[1, 2]), r#"{"acks":[1,2]}"#);
    }

    #[test]
    fn tracker_groups_applies_and_expires() {
        let t0 = Instant::now();
        let mut t: AckTracker<&str> = AckTracker::default();
        t.insert(0, 5, t0, "a");
        t.insert(1, 5, t0, "b");
        t.insert(0, 6, t0 + Duration::from_secs(5), "c");
        let q = t.queries();
        assert_eq!(q, vec![(0, vec![5, 6]), (1, vec![5])]);
        // The same ID from another URL is another request.
        let got = t.apply(0, &HashMap::from([(5, true), (6, false)]));
        assert_eq!(got, ["a"]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.next_expiry(Duration::from_secs(10)),
            Some(t0 + Duration::from_secs(10))
        );
        let late = t.expired(t0 + Duration::from_secs(10), Duration::from_secs(10));
        assert_eq!(late, ["b"]);
        assert_eq!(t.drain(), ["c"]);
        assert!(t.is_empty());
    }
}
