//! One heavy sender on a UDP port balanced by the kernel's hash.
//!
//! With SC4S's default balancing (no eBPF) the kernel picks a port's socket from the
//! datagram's 4-tuple, so every datagram of one sender goes to one socket and one receive
//! thread. A firewall sending more than one thread can classify then loses datagrams in the
//! kernel while the port's other sockets sit idle: the vendor mix at 200k/s from one sender
//! lost 11–30 % that way on the 2-core bench box, and 0 % with `SLUICE_UDP_BALANCE=cbpf`
//! (BENCHMARKS.md). The drops are counted per socket either way; what an operator cannot see
//! from the counter is that the remedy is a setting. [`SkewWatch`] recognises the pattern
//! from the once-a-second drop readings and says so, at most once per [`WARN_EVERY`].

use std::time::{Duration, Instant};

/// At most one advice per port in this long: the condition persists while the sender does.
pub const WARN_EVERY: Duration = Duration::from_secs(600);

/// The busy socket's share of the port's datagrams, in percent, from which the others count
/// as idle. With the kernel's hash and a few senders, one socket can carry most of the load
/// without one sender being the cause; 90 % leaves little else.
pub const SKEW_PERCENT: u64 = 90;

/// What one reading interval showed: the socket that dropped, how many, and its share of
/// what the port received in the interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skew {
    pub socket: usize,
    pub dropped: u64,
    pub share_percent: u64,
}

/// The previous readings of a port's sockets and when it last advised.
#[derive(Debug)]
pub struct SkewWatch {
    /// `(received, kernel drops)` per socket, cumulative, at the previous reading.
    last: Vec<(u64, u64)>,
    warned: Option<Instant>,
}

impl SkewWatch {
    /// A watch for a port whose applied balancing is the kernel's hash over `sockets`
    /// sockets; `None` when there is nothing to spread over (one socket).
    pub fn new(sockets: usize) -> Option<SkewWatch> {
        (sockets >= 2).then(|| SkewWatch {
            last: Vec::new(),
            warned: None,
        })
    }

    /// Takes this interval's cumulative `(received, kernel drops)` per socket, in the same
    /// order each time, and whether a full window or memory budget held the receivers during
    /// it (then the drops are downstream's doing, and balancing would not help); returns the
    /// skew to report, if the interval shows one and the last advice is older than
    /// [`WARN_EVERY`].
    pub fn observe(&mut self, now: Instant, readings: &[(u64, u64)], held: bool) -> Option<Skew> {
        let prev = std::mem::replace(&mut self.last, readings.to_vec());
        if held || prev.len() != readings.len() || readings.len() < 2 {
            return None;
        }
        let deltas = || {
            readings
                .iter()
                .zip(&prev)
                .map(|(now, then)| (now.0.saturating_sub(then.0), now.1.saturating_sub(then.1)))
        };
        let total: u64 = deltas().map(|(received, _)| received).sum();
        let (socket, (received, dropped)) = deltas()
            .enumerate()
            .max_by_key(|&(_, (_, dropped))| dropped)?;
        if dropped == 0 || total == 0 {
            return None;
        }
        let share_percent = received.saturating_mul(100) / total;
        if share_percent < SKEW_PERCENT {
            return None;
        }
        if self
            .warned
            .is_some_and(|at| now.saturating_duration_since(at) < WARN_EVERY)
        {
            return None;
        }
        self.warned = Some(now);
        Some(Skew {
            socket,
            dropped,
            share_percent,
        })
    }
}

/// Logs the advice for `port`.
pub fn advise(port: u16, skew: Skew) {
    tracing::warn!(
        port,
        socket = skew.socket,
        dropped = skew.dropped,
        share_percent = skew.share_percent,
        "the kernel dropped datagrams on one socket of this UDP port while its other sockets \
         were nearly idle: with the kernel's hash (SC4S's default) all of one sender's datagrams \
         go to one socket and one receive thread; SC4S_ENABLE_EBPF=yes (or \
         SLUICE_UDP_BALANCE=cbpf, no privileges needed) spreads them over the port's sockets"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: Duration = Duration::from_secs(1);

    fn watch() -> SkewWatch {
        SkewWatch::new(4).expect("four sockets")
    }

    #[test]
    fn one_socket_has_nothing_to_spread_over() {
        assert!(SkewWatch::new(1).is_none());
        assert!(SkewWatch::new(0).is_none());
    }

    #[test]
    fn the_first_reading_only_sets_the_baseline() {
        let mut w = watch();
        let first = [(1000, 500), (0, 0), (0, 0), (0, 0)];
        assert_eq!(w.observe(Instant::now(), &first, false), None);
    }

    #[test]
    fn drops_on_the_socket_carrying_the_port_are_reported_once_per_period() {
        let mut w = watch();
        let t = Instant::now();
        w.observe(t, &[(0, 0); 4], false);
        let one = [(0, 0), (0, 0), (0, 0), (190_000, 12_000)];
        let want = Skew {
            socket: 3,
            dropped: 12_000,
            share_percent: 100,
        };
        assert_eq!(w.observe(t + SEC, &one, false), Some(want));
        // The condition persists: no second line within the period...
        let two = [(10, 0), (0, 0), (0, 0), (380_000, 24_000)];
        assert_eq!(w.observe(t + 2 * SEC, &two, false), None);
        // ...and one again after it.
        let three = [(20, 0), (0, 0), (0, 0), (570_000, 36_000)];
        let again = w.observe(t + SEC + WARN_EVERY, &three, false);
        assert_eq!(again.map(|s| (s.socket, s.dropped)), Some((3, 12_000)));
    }

    #[test]
    fn drops_spread_over_busy_sockets_are_not_one_sender() {
        let mut w = watch();
        let t = Instant::now();
        w.observe(t, &[(0, 0); 4], false);
        // Every socket busy, one dropping: balancing would not help.
        let spread = [(50_000, 0), (50_000, 900), (50_000, 0), (50_000, 0)];
        assert_eq!(w.observe(t + SEC, &spread, false), None);
    }

    #[test]
    fn a_busy_socket_without_drops_is_not_reported() {
        let mut w = watch();
        let t = Instant::now();
        w.observe(t, &[(0, 0); 4], false);
        let busy = [(200_000, 0), (0, 0), (0, 0), (0, 0)];
        assert_eq!(w.observe(t + SEC, &busy, false), None);
    }

    #[test]
    fn drops_with_nothing_received_are_not_a_share() {
        let mut w = watch();
        let t = Instant::now();
        w.observe(t, &[(0, 0); 4], false);
        let idle = [(0, 5_000), (0, 0), (0, 0), (0, 0)];
        assert_eq!(w.observe(t + SEC, &idle, false), None);
    }

    #[test]
    fn drops_while_a_full_window_held_the_receivers_are_downstream() {
        let mut w = watch();
        let t = Instant::now();
        w.observe(t, &[(0, 0); 4], false);
        let one = [(190_000, 12_000), (0, 0), (0, 0), (0, 0)];
        assert_eq!(w.observe(t + SEC, &one, true), None);
        // The same pattern without a hold is reported.
        let two = [(380_000, 24_000), (0, 0), (0, 0), (0, 0)];
        assert!(w.observe(t + 2 * SEC, &two, false).is_some());
    }

    #[test]
    fn a_changed_socket_count_restarts_the_baseline() {
        let mut w = watch();
        let t = Instant::now();
        w.observe(t, &[(0, 0); 4], false);
        assert_eq!(w.observe(t + SEC, &[(100, 10), (0, 0)], false), None);
        let two = [(200_000, 20), (0, 0)];
        assert!(w.observe(t + 2 * SEC, &two, false).is_some());
    }
}
