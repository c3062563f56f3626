//! Per-socket counters, written by the socket's receive thread once per `recv` call and read by
//! anyone (the daemon's `/metrics`) without locks.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of one socket of a group. Shared as `Arc<SocketStats>` between the receiver (the
/// only writer) and readers; all loads are `Relaxed`: each counter is exact on its own, but
/// two counters read one after the other may be from different `recv` calls.
#[derive(Debug, Default)]
pub struct SocketStats {
    index: usize,
    received: AtomicU64,
    bytes: AtomicU64,
    truncated: AtomicU64,
    kernel_drops: AtomicU64,
    batches: AtomicU64,
    /// The 64-bit extension of the kernel's counter, shared by the receive thread and any
    /// [`crate::DropProbe`]: readings from both are merged here, so neither can move the
    /// total backwards. Locked only when a reading is new (drops happened).
    drops: Mutex<DropCounter>,
}

/// A copy of [`SocketStats`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Index of the socket in its group (the `socket` metric label).
    pub index: usize,
    /// Datagrams received (truncated ones included).
    pub received: u64,
    /// Payload bytes delivered to the caller (after truncation).
    pub bytes: u64,
    /// Datagrams larger than the configured maximum, delivered cut.
    pub truncated: u64,
    /// Datagrams the kernel dropped on this socket because its receive buffer was full,
    /// cumulative since the socket was created (`SO_RXQ_OVFL` / `SO_MEMINFO`).
    pub kernel_drops: u64,
    /// `recvmmsg` calls that returned at least one datagram; `received / batches` is the
    /// average batch size.
    pub batches: u64,
}

impl SocketStats {
    pub(crate) fn new(index: usize) -> SocketStats {
        SocketStats {
            index,
            ..SocketStats::default()
        }
    }

    /// Index of the socket in its group.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Datagrams received.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    /// Payload bytes delivered.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Truncated datagrams.
    pub fn truncated(&self) -> u64 {
        self.truncated.load(Ordering::Relaxed)
    }

    /// Kernel drops, cumulative. Current as of the last datagram received, the last read
    /// timeout or the last [`crate::DropProbe::refresh`], whichever came later.
    pub fn kernel_drops(&self) -> u64 {
        self.kernel_drops.load(Ordering::Relaxed)
    }

    /// `recvmmsg` calls that returned data.
    pub fn batches(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    /// All counters at once.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            index: self.index,
            received: self.received(),
            bytes: self.bytes(),
            truncated: self.truncated(),
            kernel_drops: self.kernel_drops(),
            batches: self.batches(),
        }
    }

    pub(crate) fn add_batch(&self, received: u64, bytes: u64, truncated: u64) {
        self.received.fetch_add(received, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        if truncated > 0 {
            self.truncated.fetch_add(truncated, Ordering::Relaxed);
        }
        self.batches.fetch_add(1, Ordering::Relaxed);
    }

    /// Merges a reading of the kernel's 32-bit counter; returns the cumulative total.
    pub(crate) fn observe_drops(&self, raw: u32) -> u64 {
        let mut c = self.drops.lock().unwrap_or_else(|e| e.into_inner());
        if c.observe(raw) {
            self.kernel_drops.store(c.total(), Ordering::Relaxed);
        }
        c.total()
    }
}

/// Extends the kernel's 32-bit cumulative drop counter to 64 bits and ignores stale readings.
///
/// The counter arrives from two sources: the `SO_RXQ_OVFL` value stamped on each datagram when
/// it was queued, and `SO_MEMINFO` read now. A datagram queued before a `SO_MEMINFO` read can
/// carry an older (smaller) value, so a reading is only taken when it is ahead of the last one
/// in serial-number arithmetic (RFC 1982); that also carries the count across a wrap of u32.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct DropCounter {
    last_raw: u32,
    total: u64,
}

impl DropCounter {
    /// Feed one reading; returns true when the total changed.
    pub(crate) fn observe(&mut self, raw: u32) -> bool {
        let delta = raw.wrapping_sub(self.last_raw);
        if delta == 0 || delta > u32::MAX / 2 {
            return false;
        }
        self.last_raw = raw;
        self.total += u64::from(delta);
        true
    }

    pub(crate) fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_counter_is_monotonic_and_ignores_stale_readings() {
        let mut c = DropCounter::default();
        assert!(!c.observe(0));
        assert!(c.observe(5));
        assert_eq!(c.total(), 5);
        // A datagram queued before the last SO_MEMINFO read carries an older value.
        assert!(!c.observe(3));
        assert_eq!(c.total(), 5);
        assert!(c.observe(12));
        assert_eq!(c.total(), 12);
    }

    #[test]
    fn drop_counter_carries_across_u32_wrap() {
        let mut c = DropCounter::default();
        assert!(c.observe(u32::MAX / 2));
        assert!(c.observe(u32::MAX - 1));
        assert!(c.observe(3)); // wrapped: 5 more
        assert_eq!(c.total(), u64::from(u32::MAX - 1) + 5);
    }

    #[test]
    fn add_batch_accumulates() {
        let s = SocketStats::new(3);
        s.add_batch(10, 8000, 0);
        s.add_batch(2, 100, 1);
        assert_eq!(s.observe_drops(7), 7);
        assert_eq!(
            s.observe_drops(5),
            7,
            "a stale reading does not move the total back"
        );
        assert_eq!(
            s.snapshot(),
            StatsSnapshot {
                index: 3,
                received: 12,
                bytes: 8100,
                truncated: 1,
                kernel_drops: 7,
                batches: 2
            }
        );
    }
}
