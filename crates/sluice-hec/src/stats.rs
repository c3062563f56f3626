//! Request counters of one HEC output. Every field is an atomic updated once per request or
//! batch; nothing on the delivery path takes a lock. [`HecStats::snapshot`] returns plain
//! numbers with their label values for the daemon's Prometheus rendering.
//!
//! What happened to the *events* (delivered, rejected, abandoned) is not counted here: each
//! batch's [`Completion`](sluice_proto::delivery::Completion) goes to the destination's
//! completion sink, which is the one place that counts it.

use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

macro_rules! labelled_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident => $label:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const COUNT: usize = $name::ALL.len();
            /// The Prometheus label value.
            pub fn label(self) -> &'static str {
                match self { $($name::$variant => $label),+ }
            }
        }
    };
}

labelled_enum!(
    /// How one HTTP request ended (`hec_requests_total{outcome}`).
    RequestOutcome {
        Success => "2xx",
        BadRequest => "400",
        Unauthorized => "401",
        Forbidden => "403",
        NotFound => "404",
        RequestTimeout => "408",
        TooLarge => "413",
        TooManyRequests => "429",
        ServerError => "5xx",
        OtherStatus => "other_status",
        Connect => "connect",
        Timeout => "timeout",
        Io => "io",
    }
);

labelled_enum!(
    /// Why a request is retried (`retried_total{reason}`).
    RetryReason {
        Connect => "connect",
        Timeout => "timeout",
        Io => "io",
        Http401 => "http_401",
        Http403 => "http_403",
        Http404 => "http_404",
        Http400Request => "http_400_request",
        Http408 => "http_408",
        Http429 => "http_429",
        Http5xx => "http_5xx",
        HttpOther => "http_other",
    }
);

/// Upper bounds (seconds) of the `hec_request_seconds` histogram buckets; `+Inf` is implied.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

fn counters<const N: usize>() -> [AtomicU64; N] {
    std::array::from_fn(|_| AtomicU64::new(0))
}

/// Shared by all workers of one HEC output (and readable by the admin endpoint).
#[derive(Debug)]
pub struct HecStats {
    requests: [AtomicU64; RequestOutcome::COUNT],
    bytes_raw: AtomicU64,
    bytes_sent: AtomicU64,
    retried_requests: [AtomicU64; RetryReason::COUNT],
    retried_events: [AtomicU64; RetryReason::COUNT],
    in_flight_batches: AtomicI64,
    in_flight_events: AtomicI64,
    latency: [AtomicU64; 14],
    latency_sum_nanos: AtomicU64,
    last_success_unix_ms: AtomicU64,
    consecutive_failures: AtomicU64,
    url_count: AtomicUsize,
    // Bit i (URL index mod 64) set while URL i's most recent request failed.
    url_failing: AtomicU64,
    /// Indexer acknowledgement.
    pub ack: crate::ack::AckStats,
    /// Events HEC refused for good, by reason, and the dead-letter file.
    pub dead_letter: crate::deadletter::DeadLetterStats,
    /// Bad-event isolation and latency splits.
    pub isolation: IsolationStats,
    urls: std::sync::OnceLock<std::sync::Arc<crate::health::UrlBoard>>,
}

/// What bad-event isolation and slow-HEC handling cost.
#[derive(Debug, Default)]
pub struct IsolationStats {
    /// Batches HEC answered 400 (about the data) or 413 at least once.
    pub isolated_batches: AtomicU64,
    /// Events sent again because the request holding them was refused (400/413): the
    /// at-least-once cost of isolation.
    pub resent_events: AtomicU64,
    /// Pieces sent again as halves after a timeout.
    pub latency_splits: AtomicU64,
}

impl Default for HecStats {
    fn default() -> Self {
        HecStats {
            requests: counters(),
            bytes_raw: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            retried_requests: counters(),
            retried_events: counters(),
            in_flight_batches: AtomicI64::new(0),
            in_flight_events: AtomicI64::new(0),
            latency: counters(),
            latency_sum_nanos: AtomicU64::new(0),
            last_success_unix_ms: AtomicU64::new(0),
            consecutive_failures: AtomicU64::new(0),
            url_count: AtomicUsize::new(0),
            url_failing: AtomicU64::new(0),
            ack: Default::default(),
            dead_letter: Default::default(),
            isolation: Default::default(),
            urls: std::sync::OnceLock::new(),
        }
    }
}

/// Histogram numbers in Prometheus shape: cumulative counts per upper bound.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// `(le, cumulative count)` for each bound in [`LATENCY_BUCKETS`].
    pub buckets: Vec<(f64, u64)>,
    /// Total observations (the `+Inf` bucket).
    pub count: u64,
    pub sum_seconds: f64,
}

/// Plain numbers, each counter family with its label values.
#[derive(Debug, Clone, PartialEq)]
pub struct HecStatsSnapshot {
    pub requests: Vec<(&'static str, u64)>,
    /// Body bytes of every request sent (retries included), before and after compression.
    pub bytes_raw: u64,
    pub bytes_sent: u64,
    pub retried_requests: Vec<(&'static str, u64)>,
    pub retried_events: Vec<(&'static str, u64)>,
    /// Batches (and their events) currently held by workers: being sent or waiting to retry.
    pub in_flight_batches: i64,
    pub in_flight_events: i64,
    pub request_seconds: HistogramSnapshot,
    /// Unix milliseconds of the last 2xx, if any.
    pub last_success_unix_ms: Option<u64>,
    /// Failed requests since the last 2xx.
    pub consecutive_failures: u64,
    pub healthy: bool,
}

impl HecStatsSnapshot {
    fn get(list: &[(&'static str, u64)], label: &str) -> u64 {
        list.iter()
            .find(|(l, _)| *l == label)
            .map_or(0, |(_, v)| *v)
    }
    pub fn requests(&self, outcome: RequestOutcome) -> u64 {
        Self::get(&self.requests, outcome.label())
    }
    pub fn retried_requests(&self, reason: RetryReason) -> u64 {
        Self::get(&self.retried_requests, reason.label())
    }
    pub fn retried_requests_total(&self) -> u64 {
        self.retried_requests.iter().map(|(_, v)| v).sum()
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl HecStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// "Able to deliver": false only while the most recent request to every URL failed
    /// (with one URL: while the last attempt failed). True before the first request.
    pub fn healthy(&self) -> bool {
        let n = self.url_count.load(Relaxed);
        if n == 0 {
            return self.consecutive_failures.load(Relaxed) == 0;
        }
        let mask = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        self.url_failing.load(Relaxed) & mask != mask
    }

    pub fn snapshot(&self) -> HecStatsSnapshot {
        let list = |arr: &[AtomicU64], labels: &mut dyn Iterator<Item = &'static str>| {
            labels
                .zip(arr.iter())
                .map(|(l, v)| (l, v.load(Relaxed)))
                .collect::<Vec<_>>()
        };
        let mut cumulative = 0;
        let mut buckets = Vec::with_capacity(LATENCY_BUCKETS.len());
        for (i, le) in LATENCY_BUCKETS.iter().enumerate() {
            cumulative += self.latency[i].load(Relaxed);
            buckets.push((*le, cumulative));
        }
        let count = cumulative + self.latency[LATENCY_BUCKETS.len()].load(Relaxed);
        let last = self.last_success_unix_ms.load(Relaxed);
        HecStatsSnapshot {
            requests: list(
                &self.requests,
                &mut RequestOutcome::ALL.iter().map(|r| r.label()),
            ),
            bytes_raw: self.bytes_raw.load(Relaxed),
            bytes_sent: self.bytes_sent.load(Relaxed),
            retried_requests: list(
                &self.retried_requests,
                &mut RetryReason::ALL.iter().map(|r| r.label()),
            ),
            retried_events: list(
                &self.retried_events,
                &mut RetryReason::ALL.iter().map(|r| r.label()),
            ),
            in_flight_batches: self.in_flight_batches.load(Relaxed),
            in_flight_events: self.in_flight_events.load(Relaxed),
            request_seconds: HistogramSnapshot {
                buckets,
                count,
                sum_seconds: self.latency_sum_nanos.load(Relaxed) as f64 / 1e9,
            },
            last_success_unix_ms: (last != 0).then_some(last),
            consecutive_failures: self.consecutive_failures.load(Relaxed),
            healthy: self.healthy(),
        }
    }

    pub(crate) fn set_url_count(&self, n: usize) {
        self.url_count.store(n, Relaxed);
    }

    /// Per-URL health of the output using these stats (set when it is built).
    pub fn urls(&self) -> Option<&std::sync::Arc<crate::health::UrlBoard>> {
        self.urls.get()
    }

    pub(crate) fn set_urls(&self, board: std::sync::Arc<crate::health::UrlBoard>) {
        let _ = self.urls.set(board);
    }

    /// Why delivery is degraded (every URL out of service), if it is.
    pub fn degraded_reason(&self) -> Option<String> {
        self.urls().and_then(|b| b.reason())
    }

    pub(crate) fn request(&self, url: usize, outcome: RequestOutcome, elapsed: Duration) {
        self.requests[outcome as usize].fetch_add(1, Relaxed);
        let secs = elapsed.as_secs_f64();
        let idx = LATENCY_BUCKETS
            .iter()
            .position(|le| secs <= *le)
            .unwrap_or(LATENCY_BUCKETS.len());
        self.latency[idx].fetch_add(1, Relaxed);
        self.latency_sum_nanos
            .fetch_add(elapsed.as_nanos().min(u128::from(u64::MAX)) as u64, Relaxed);
        let bit = 1u64 << (url % 64);
        // A 400 or 413 is an answer about the data, not about the endpoint: HEC is up.
        if matches!(
            outcome,
            RequestOutcome::Success | RequestOutcome::BadRequest | RequestOutcome::TooLarge
        ) {
            self.url_failing.fetch_and(!bit, Relaxed);
            self.consecutive_failures.store(0, Relaxed);
            if outcome == RequestOutcome::Success {
                self.last_success_unix_ms.store(unix_ms(), Relaxed);
            }
        } else {
            self.url_failing.fetch_or(bit, Relaxed);
            self.consecutive_failures.fetch_add(1, Relaxed);
        }
    }

    pub(crate) fn sent_bytes(&self, raw: usize, wire: usize) {
        self.bytes_raw.fetch_add(raw as u64, Relaxed);
        self.bytes_sent.fetch_add(wire as u64, Relaxed);
    }

    pub(crate) fn retried(&self, reason: RetryReason, events: u32) {
        self.retried_requests[reason as usize].fetch_add(1, Relaxed);
        self.retried_events[reason as usize].fetch_add(u64::from(events), Relaxed);
    }

    pub(crate) fn hold(&self, events: u32) {
        self.in_flight_batches.fetch_add(1, Relaxed);
        self.in_flight_events.fetch_add(i64::from(events), Relaxed);
    }

    pub(crate) fn release(&self, events: u32) {
        self.in_flight_batches.fetch_sub(1, Relaxed);
        self.in_flight_events.fetch_sub(i64::from(events), Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_follows_the_last_attempt_per_url() {
        let s = HecStats::new();
        s.set_url_count(2);
        assert!(s.healthy());
        s.request(0, RequestOutcome::Connect, Duration::ZERO);
        assert!(s.healthy(), "URL 1 has not failed");
        s.request(1, RequestOutcome::ServerError, Duration::ZERO);
        assert!(!s.healthy());
        s.request(1, RequestOutcome::Success, Duration::ZERO);
        assert!(s.healthy());
        let snap = s.snapshot();
        assert_eq!(snap.consecutive_failures, 0);
        assert!(snap.last_success_unix_ms.is_some());
        assert_eq!(snap.requests(RequestOutcome::Connect), 1);
    }

    #[test]
    fn histogram_is_cumulative() {
        let s = HecStats::new();
        s.request(0, RequestOutcome::Success, Duration::from_millis(3));
        s.request(0, RequestOutcome::Success, Duration::from_millis(70));
        s.request(0, RequestOutcome::Success, Duration::from_secs(120));
        let h = s.snapshot().request_seconds;
        assert_eq!(h.count, 3);
        assert_eq!(h.buckets[0], (0.005, 1));
        assert_eq!(h.buckets[4], (0.1, 2));
        assert_eq!(h.buckets.last().copied(), Some((60.0, 2)));
        assert!((h.sum_seconds - 120.073).abs() < 1e-6);
    }
}
