//! Per-indexer health: which HEC URLs are in service.
//!
//! A URL whose request failed (no connection, timeout, 5xx, 429…) is taken out of service
//! for its own backoff; URL selection skips it, and a probe (`GET
//! /services/collector/health`) must answer 200 before it takes batches again — a batch is
//! not the way to find out that an indexer is still down. When every URL is out, selection
//! still returns the one that comes back soonest, so delivery never stops trying; `/health`
//! then reports degraded with [`UrlBoard::reason`].
//!
//! Answers about the data (400, 413) say nothing bad about the indexer: it stays in.
//!
//! The board keeps only what it decides with (in or out, until when, consecutive failures,
//! the last failure's reason); requests, latency and transitions go to the output's
//! [`HecObserver`](crate::observe::HecObserver) as they happen.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::observe::{HecEvent, HecObserver};

/// Status classes of a request ([`RequestOutcome::class`](crate::RequestOutcome::class)).
pub const CLASSES: [&str; 5] = ["2xx", "4xx", "5xx", "other", "error"];

/// How one request to a URL ended, for its health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlResult {
    /// 2xx.
    Success,
    /// An answer about the data (400, 413): the indexer works.
    DataRefused,
    /// A failure of the indexer or the path to it, with its reason word.
    Failed { reason: &'static str },
}

/// One URL's state.
#[derive(Debug)]
pub struct UrlHealth {
    pub url: String,
    /// In service (false while taken out, until a probe brings it back).
    up: AtomicBool,
    /// Milliseconds since the board's epoch before which the URL is not probed.
    out_until_ms: AtomicU64,
    /// Failed requests since the last good answer: the backoff grows with it.
    consecutive_failures: AtomicU32,
    /// The last request here timed out and none has been answered in time since: requests
    /// wait longer before they count as failed (see `ClientConfig::slow_timeout_factor`).
    slow: AtomicBool,
    last_reason: std::sync::Mutex<&'static str>,
}

/// One URL's state, in plain values.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlSnapshot {
    pub url: String,
    pub up: bool,
    pub consecutive_failures: u32,
}

impl UrlHealth {
    fn new(url: String) -> UrlHealth {
        UrlHealth {
            url,
            up: AtomicBool::new(true),
            out_until_ms: AtomicU64::new(0),
            consecutive_failures: AtomicU32::new(0),
            slow: AtomicBool::new(false),
            last_reason: std::sync::Mutex::new(""),
        }
    }

    pub fn is_up(&self) -> bool {
        self.up.load(Relaxed)
    }

    pub fn consecutive_failures(&self) -> u32 {
        self.consecutive_failures.load(Relaxed)
    }

    pub fn snapshot(&self) -> UrlSnapshot {
        UrlSnapshot {
            url: self.url.clone(),
            up: self.is_up(),
            consecutive_failures: self.consecutive_failures(),
        }
    }
}

/// The URLs of one destination.
#[derive(Debug)]
pub struct UrlBoard {
    urls: Vec<UrlHealth>,
    epoch: Instant,
    observer: Arc<dyn HecObserver>,
}

impl UrlBoard {
    /// The URLs, all in service; `observer` hears of each going out and coming back.
    pub fn new(urls: impl IntoIterator<Item = String>, observer: Arc<dyn HecObserver>) -> UrlBoard {
        UrlBoard {
            urls: urls.into_iter().map(UrlHealth::new).collect(),
            epoch: Instant::now(),
            observer,
        }
    }

    /// Able to deliver: false only while every URL is out of service.
    pub fn healthy(&self) -> bool {
        !self.all_out()
    }

    pub fn len(&self) -> usize {
        self.urls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    pub fn get(&self, idx: usize) -> Option<&UrlHealth> {
        self.urls.get(idx)
    }

    pub fn iter(&self) -> impl Iterator<Item = &UrlHealth> {
        self.urls.iter()
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Round-robin from `cursor` over the URLs in service; when none is, the one whose
    /// backoff ends first (delivery keeps trying; its request doubles as the probe).
    pub fn pick(&self, cursor: &mut usize) -> usize {
        let n = self.urls.len().max(1);
        for k in 0..n {
            let idx = (*cursor + k) % n;
            if self.urls.get(idx).is_some_and(UrlHealth::is_up) {
                *cursor = idx + 1;
                return idx;
            }
        }
        let idx = (0..self.urls.len())
            .min_by_key(|&i| self.urls[i].out_until_ms.load(Relaxed))
            .unwrap_or(0);
        *cursor = idx + 1;
        idx
    }

    /// Whether every URL is out of service.
    pub fn all_out(&self) -> bool {
        !self.urls.is_empty() && self.urls.iter().all(|u| !u.is_up())
    }

    /// Why delivery is degraded, when every URL is out: each URL with its last failure.
    pub fn reason(&self) -> Option<String> {
        if !self.all_out() {
            return None;
        }
        let parts: Vec<String> = self
            .urls
            .iter()
            .map(|u| {
                let r = *u.last_reason.lock().unwrap_or_else(|p| p.into_inner());
                format!(
                    "{} out ({r}, {} consecutive failures)",
                    u.url,
                    u.consecutive_failures.load(Relaxed)
                )
            })
            .collect();
        Some(format!(
            "every HEC URL is out of service: {}",
            parts.join("; ")
        ))
    }

    /// Records a request's result. `backoff` is how long a failed URL stays out before it
    /// is probed, given its consecutive failure count.
    pub fn record(&self, idx: usize, result: UrlResult, backoff: impl FnOnce(u32) -> Duration) {
        let Some(u) = self.urls.get(idx) else {
            return;
        };
        match result {
            UrlResult::Success | UrlResult::DataRefused => self.bring_in(idx, u),
            UrlResult::Failed { reason } => {
                let n = u
                    .consecutive_failures
                    .fetch_add(1, Relaxed)
                    .saturating_add(1);
                *u.last_reason.lock().unwrap_or_else(|p| p.into_inner()) = reason;
                let wait = backoff(n).as_millis() as u64;
                u.out_until_ms.store(self.now_ms() + wait, Relaxed);
                if u.up.swap(false, Relaxed) {
                    self.observer
                        .observe(HecEvent::UrlDown { url: idx, reason });
                }
            }
        }
    }

    fn bring_in(&self, idx: usize, u: &UrlHealth) {
        u.consecutive_failures.store(0, Relaxed);
        u.out_until_ms.store(0, Relaxed);
        if !u.up.swap(true, Relaxed) {
            self.observer.observe(HecEvent::UrlUp { url: idx });
        }
    }

    /// Whether requests to `idx` get the slow-indexer timeout.
    pub fn is_slow(&self, idx: usize) -> bool {
        self.urls.get(idx).is_some_and(|u| u.slow.load(Relaxed))
    }

    pub fn set_slow(&self, idx: usize, slow: bool) {
        if let Some(u) = self.urls.get(idx) {
            u.slow.store(slow, Relaxed);
        }
    }

    /// URLs out of service whose backoff has ended: due for a probe.
    pub fn due_for_probe(&self) -> Vec<usize> {
        let now = self.now_ms();
        (0..self.urls.len())
            .filter(|&i| {
                let u = &self.urls[i];
                !u.is_up() && u.out_until_ms.load(Relaxed) <= now
            })
            .collect()
    }

    /// A probe of `idx` answered: healthy brings it back; otherwise it stays out for
    /// another `backoff`.
    pub fn probed(&self, idx: usize, healthy: bool, backoff: impl FnOnce(u32) -> Duration) {
        let Some(u) = self.urls.get(idx) else {
            return;
        };
        if healthy {
            self.bring_in(idx, u);
        } else {
            let n = u.consecutive_failures.load(Relaxed).max(1);
            u.out_until_ms
                .store(self.now_ms() + backoff(n).as_millis() as u64, Relaxed);
        }
    }

    pub fn snapshot(&self) -> Vec<UrlSnapshot> {
        self.urls.iter().map(UrlHealth::snapshot).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::testing::Recorder;

    const FAIL: UrlResult = UrlResult::Failed { reason: "connect" };

    fn board(n: usize) -> (UrlBoard, Arc<Recorder>) {
        let rec = Arc::new(Recorder::default());
        let b = UrlBoard::new(
            (0..n).map(|i| format!("http://idx{i}:8088/services/collector/event")),
            rec.clone(),
        );
        (b, rec)
    }

    #[test]
    fn a_failed_url_is_skipped_until_a_probe_brings_it_back() {
        let (b, rec) = board(2);
        let mut cur = 0;
        assert_eq!(b.pick(&mut cur), 0);
        assert_eq!(b.pick(&mut cur), 1);
        b.record(0, FAIL, |_| Duration::ZERO);
        for _ in 0..4 {
            assert_eq!(b.pick(&mut cur), 1);
        }
        assert!(!b.all_out());
        assert!(b.healthy());
        assert_eq!(b.due_for_probe(), [0]);
        b.probed(0, false, |_| Duration::from_secs(60));
        assert!(b.due_for_probe().is_empty(), "stays out for its backoff");
        b.probed(0, true, |_| Duration::ZERO);
        let s = b.snapshot();
        assert!(s[0].up);
        assert_eq!(s[0].consecutive_failures, 0);
        assert_eq!(
            *rec.0.lock().unwrap(),
            [
                "UrlDown { url: 0, reason: \"connect\" }",
                "UrlUp { url: 0 }"
            ]
        );
    }

    #[test]
    fn all_out_gives_a_reason_and_still_picks_the_soonest() {
        let (b, rec) = board(2);
        b.record(0, FAIL, |_| Duration::from_secs(30));
        b.record(1, UrlResult::Failed { reason: "http_5xx" }, |_| {
            Duration::from_secs(1)
        });
        assert!(b.all_out());
        assert!(!b.healthy());
        let r = b.reason().unwrap();
        assert!(
            r.contains("idx0") && r.contains("connect") && r.contains("http_5xx"),
            "{r}"
        );
        let mut cur = 0;
        assert_eq!(b.pick(&mut cur), 1);
        b.record(1, UrlResult::Success, |_| Duration::ZERO);
        assert!(b.reason().is_none());
        assert_eq!((rec.count("UrlDown"), rec.count("UrlUp")), (2, 1));
    }

    #[test]
    fn data_refusals_keep_the_url_in() {
        let (b, rec) = board(1);
        b.record(0, UrlResult::DataRefused, |_| Duration::ZERO);
        assert!(b.get(0).unwrap().is_up());
        assert!(rec.0.lock().unwrap().is_empty());
    }
}
