//! Rate limits for log lines emitted on hot paths.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Lets a log line through at most once per interval and counts what it held back, with two
/// atomics and no lock: it is consulted per batch (or, for debug lines, per message while
/// debug logging is on), from every receive thread at once.
#[derive(Debug)]
pub struct RateLimit {
    epoch: Instant,
    interval_ms: u64,
    /// Milliseconds since `epoch` before which nothing is let through; 0 before the first.
    next_ms: AtomicU64,
    suppressed: AtomicU64,
}

impl RateLimit {
    pub fn new(interval: Duration) -> RateLimit {
        RateLimit {
            epoch: Instant::now(),
            interval_ms: interval.as_millis() as u64,
            next_ms: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// `Some(n)`: log now, and say that `n` earlier occurrences were not logged.
    pub fn allow(&self) -> Option<u64> {
        // +1 so that "never logged" (0) is always in the past.
        let now = self.epoch.elapsed().as_millis() as u64 + 1;
        let next = self.next_ms.load(Ordering::Relaxed);
        if now >= next
            && self
                .next_ms
                .compare_exchange(
                    next,
                    now + self.interval_ms,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Ordering::Relaxed));
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// The interval of every rate-limited line: often enough to see a problem start, rarely
/// enough that a flood of one costs nothing.
pub const LOG_INTERVAL: Duration = Duration::from_secs(10);

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit::new(LOG_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lets_one_through_per_interval_and_counts_the_rest() {
        let l = RateLimit::new(Duration::from_secs(3600));
        assert_eq!(l.allow(), Some(0));
        assert_eq!(l.allow(), None);
        assert_eq!(l.allow(), None);
        let l = RateLimit::new(Duration::ZERO);
        assert_eq!(l.allow(), Some(0));
        assert_eq!(l.allow(), Some(0));
    }

    #[test]
    fn the_next_line_reports_what_was_held_back() {
        let l = RateLimit::new(Duration::from_millis(30));
        assert_eq!(l.allow(), Some(0));
        assert_eq!(l.allow(), None);
        assert_eq!(l.allow(), None);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(l.allow(), Some(2));
    }
}
