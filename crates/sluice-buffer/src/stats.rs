//! A point-in-time view of the buffer for metrics and health.

use std::time::{Duration, SystemTime};

use crate::config::DurabilityMode;
use crate::error::FullReason;

/// Upper bounds (inclusive) of the buckets an observer should use for the latencies of
/// [`BufferEvent::Flushed`](crate::BufferEvent::Flushed), in microseconds (then `+Inf`).
pub const LATENCY_BUCKETS_US: [u64; 14] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000,
];

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

/// The state of one buffer, as levels (what it holds now, why it refuses now). It counts
/// nothing: what happens is reported to its [`BufferObserver`](crate::BufferObserver).
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
    pub readers: Vec<ReaderStats>,
}
