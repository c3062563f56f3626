//! A point-in-time view of the buffer for metrics and health.

use std::time::{Duration, SystemTime};

use crate::config::DurabilityMode;
use crate::error::FullReason;

/// Upper bounds (inclusive) of the latency buckets, in microseconds. The last bucket is
/// unbounded (`+Inf`).
pub const LATENCY_BUCKETS_US: [u64; 14] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000,
];

/// A cumulative latency histogram in the shape Prometheus expects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatencyHistogram {
    /// `counts[i]` observations fell in bucket `i` (not cumulative); the last entry is
    /// `+Inf`.
    pub counts: [u64; LATENCY_BUCKETS_US.len() + 1],
    pub count: u64,
    pub sum_us: u64,
    pub max_us: u64,
}

impl LatencyHistogram {
    pub fn record(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let i = LATENCY_BUCKETS_US.partition_point(|&b| b < us);
        self.counts[i] += 1;
        self.count += 1;
        self.sum_us = self.sum_us.saturating_add(us);
        self.max_us = self.max_us.max(us);
    }

    /// `(upper bound in seconds, cumulative count)` pairs, the last with `f64::INFINITY`.
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut acc = 0;
        let mut out = Vec::with_capacity(self.counts.len());
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            let le = LATENCY_BUCKETS_US
                .get(i)
                .map_or(f64::INFINITY, |&us| us as f64 / 1e6);
            out.push((le, acc));
        }
        out
    }

    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_micros(self.sum_us / self.count))
    }

    /// Upper bound of the bucket holding quantile `q` (0..=1); `None` when empty.
    pub fn quantile_bound(&self, q: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let want = ((self.count as f64) * q.clamp(0.0, 1.0)).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= want {
                let us = LATENCY_BUCKETS_US.get(i).copied().unwrap_or(self.max_us);
                return Some(Duration::from_micros(us.min(self.max_us)));
            }
        }
        Some(Duration::from_micros(self.max_us))
    }
}

/// One reader's position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderStats {
    pub name: String,
    /// First record id this reader has not finished (what a restart would resume from).
    pub resume_from: u64,
    /// What is on disk for it right now.
    pub persisted_resume_from: u64,
    /// Next record id it will be handed.
    pub next_id: u64,
    /// Records handed out and not yet acknowledged.
    pub in_flight: usize,
    /// Whether a [`Reader`](crate::Reader) handle is currently taken.
    pub attached: bool,
}

/// Counters and gauges of one buffer. Totals count since [`Buffer::open`](crate::Buffer::open).
#[derive(Debug, Clone, PartialEq)]
pub struct BufferStats {
    pub mode: DurabilityMode,
    pub max_bytes: u64,
    /// Disk use: segment files plus records appended and not yet written.
    pub bytes: u64,
    /// Of `bytes`, not yet written and synced.
    pub pending_bytes: u64,
    pub segments: usize,
    /// Records (and the events in them) not yet finished by every reader.
    pub records: u64,
    pub events: u64,
    /// Caller-supplied timestamp of the oldest record not finished by every reader.
    pub oldest_event: Option<SystemTime>,
    /// `now - oldest_event` (zero when the timestamp is in the future).
    pub oldest_event_age: Option<Duration>,
    /// Why appends are refused right now, if they are.
    pub full: Option<FullReason>,
    /// The last write or sync error, until a write succeeds again.
    pub last_error: Option<String>,
    pub appended_records_total: u64,
    pub appended_events_total: u64,
    pub appended_bytes_total: u64,
    /// Appends refused with `Full`, by reason.
    pub full_max_bytes_total: u64,
    pub full_disk_total: u64,
    pub full_backlog_total: u64,
    pub full_write_failing_total: u64,
    /// Write+fsync rounds, and records made durable by them.
    pub flushes_total: u64,
    pub flushed_records_total: u64,
    pub write_errors_total: u64,
    pub deleted_segments_total: u64,
    /// Records found on disk at open that some reader had not finished.
    pub replayed_records: u64,
    pub replayed_events: u64,
    /// Records lost to damage on disk (torn tail, flipped bits, truncated or missing
    /// segment), found at open or when read. Each is also logged with its file and offset.
    pub corrupt_records: u64,
    /// Time of the write syscalls of one flush.
    pub write_latency: LatencyHistogram,
    /// Time of the fdatasync calls of one flush.
    pub fsync_latency: LatencyHistogram,
    /// From the first append of a group to the moment it was durable: what a reliable-mode
    /// caller waits at most.
    pub commit_latency: LatencyHistogram,
    pub readers: Vec<ReaderStats>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets() {
        let mut h = LatencyHistogram::default();
        h.record(Duration::from_micros(100));
        h.record(Duration::from_micros(101));
        h.record(Duration::from_secs(10));
        assert_eq!(h.counts[0], 1);
        assert_eq!(h.counts[1], 1);
        assert_eq!(h.counts[LATENCY_BUCKETS_US.len()], 1);
        let c = h.cumulative();
        assert_eq!(c.last().unwrap(), &(f64::INFINITY, 3));
        assert_eq!(c[0], (0.0001, 1));
        assert_eq!(h.quantile_bound(0.5), Some(Duration::from_micros(250)));
        assert_eq!(h.quantile_bound(1.0), Some(Duration::from_secs(10)));
    }
}
