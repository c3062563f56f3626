//! The per-connection token bucket behind `--rate`.
//!
//! The schedule is anchored at the start: message `k` (0-based) is due at `k / rate`, so the
//! first goes out at once and by time `t`, `floor(rate × t) + 1` are due. The sender asks how
//! many are due now, sends up to a batch of them in one system call and sleeps when none are
//! (at least [`TICK`], so high rates go out in bursts of `rate/1000` instead of one system
//! call per message). Because the schedule is absolute, a late wake-up is made up by the next
//! burst. With a duration `D`, only messages due before `D` count, so `--rate R --duration D`
//! sends exactly `ceil(R × D)` (`R × D` when that is a whole number).
//!
//! If the sender falls further behind than [`MAX_BACKLOG`] (the machine is overloaded or
//! the rate is beyond what one connection can do), the excess is forfeited and counted as
//! *lagged*, rather than sent later as one unrealistic burst.

use std::time::Duration;

/// The shortest sleep between bursts.
pub(crate) const TICK: Duration = Duration::from_millis(1);
/// The most sending may fall behind schedule before messages are forfeited.
pub(crate) const MAX_BACKLOG: Duration = Duration::from_millis(200);

#[derive(Debug, Clone)]
pub(crate) struct Pacer {
    /// Messages per second; 0 = unlimited.
    rate: u64,
    /// Messages due at or after this are never due.
    duration: Option<Duration>,
    /// Messages taken plus forfeited: the schedule position.
    accounted: u64,
    forfeited: u64,
    max_backlog: u64,
}

impl Pacer {
    pub(crate) fn new(rate: u64, duration: Option<Duration>) -> Pacer {
        let max_backlog = (u128::from(rate) * MAX_BACKLOG.as_nanos() / 1_000_000_000) as u64;
        Pacer {
            rate,
            duration,
            accounted: 0,
            forfeited: 0,
            max_backlog: max_backlog.max(1),
        }
    }

    /// Messages due by `elapsed`: those with `k / rate ≤ elapsed` and `k / rate < duration`.
    fn due_by(&self, elapsed: Duration) -> u64 {
        let t = match self.duration {
            Some(d) if elapsed >= d => d.saturating_sub(Duration::from_nanos(1)),
            _ => elapsed,
        };
        let due = u128::from(self.rate) * t.as_nanos() / 1_000_000_000 + 1;
        u64::try_from(due).unwrap_or(u64::MAX)
    }

    /// How many messages may be sent `elapsed` after the start (`u64::MAX` when unlimited).
    pub(crate) fn available(&mut self, elapsed: Duration) -> u64 {
        if self.rate == 0 {
            return u64::MAX;
        }
        let backlog = self.due_by(elapsed).saturating_sub(self.accounted);
        if backlog > self.max_backlog {
            let lost = backlog - self.max_backlog;
            self.forfeited += lost;
            self.accounted += lost;
            return self.max_backlog;
        }
        backlog
    }

    /// `n` messages (at most what [`available`](Self::available) returned) were sent.
    pub(crate) fn take(&mut self, n: u64) {
        self.accounted += n;
    }

    /// How long to sleep at `elapsed` when nothing is available: until the next message
    /// is due, but at least [`TICK`].
    pub(crate) fn wait(&self, elapsed: Duration) -> Duration {
        if self.rate == 0 {
            return Duration::ZERO;
        }
        let next_ns = u128::from(self.accounted) * 1_000_000_000 / u128::from(self.rate);
        let next = Duration::from_nanos(u64::try_from(next_ns).unwrap_or(u64::MAX));
        next.saturating_sub(elapsed).max(TICK)
    }

    /// Messages forfeited because the sender was more than [`MAX_BACKLOG`] behind.
    pub(crate) fn lagged(&self) -> u64 {
        self.forfeited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn schedule_is_exact_over_the_duration() {
        // 2,000/s for 2 s in 1 ms ticks with irregular wake-ups sends exactly 4,000, also
        // when asked again after the end.
        let mut p = Pacer::new(2000, Some(ms(2000)));
        let mut sent = 0;
        let mut t = 0;
        while t <= 2100 {
            let n = p.available(ms(t)).min(64);
            p.take(n);
            sent += n;
            t += if t % 7 == 0 { 3 } else { 1 };
        }
        for late in [2000, 2500, 10_000] {
            let n = p.available(ms(late));
            p.take(n);
            sent += n;
        }
        assert_eq!(sent, 4000);
        assert_eq!(p.lagged(), 0);
        // a fractional product rounds up: messages at 0, 1/3 s, 2/3 s, 1 s within 1.2 s
        let mut p = Pacer::new(3, Some(ms(1200)));
        let mut sent = 0;
        for t in [0, 400, 700, 1000, 1100, 5000] {
            let n = p.available(ms(t));
            p.take(n);
            sent += n;
        }
        assert_eq!(sent, 4);
    }

    #[test]
    fn first_message_goes_at_once_and_late_wakeups_are_made_up() {
        let mut p = Pacer::new(10_000, None);
        assert_eq!(p.available(ms(0)), 1);
        p.take(1);
        assert_eq!(p.available(ms(1)), 10);
        p.take(10);
        // a 50 ms stall: 500 more are due and all are still sent
        assert_eq!(p.available(ms(51)), 500);
        p.take(500);
        assert_eq!(p.available(ms(51)), 0);
    }

    #[test]
    fn falling_far_behind_forfeits_and_counts() {
        let mut p = Pacer::new(1000, None);
        // 1,001 due, at most 200 ms (200 messages) of backlog is kept
        assert_eq!(p.available(ms(1000)), 200);
        assert_eq!(p.lagged(), 801);
        p.take(200);
        assert_eq!(p.available(ms(1000)), 0);
        assert_eq!(p.available(ms(1001)), 1);
    }

    #[test]
    fn waits_until_next_due_but_at_least_a_tick() {
        let mut p = Pacer::new(10, None);
        assert_eq!(p.available(ms(0)), 1);
        p.take(1);
        assert_eq!(p.available(ms(0)), 0);
        assert_eq!(p.wait(ms(0)), ms(100));
        assert_eq!(p.wait(ms(99)), TICK);
        let mut fast = Pacer::new(1_000_000, None);
        let first = fast.available(Duration::ZERO);
        fast.take(first);
        assert_eq!(fast.wait(Duration::ZERO), TICK);
    }

    #[test]
    fn rate_zero_is_unlimited() {
        let mut p = Pacer::new(0, Some(ms(1)));
        assert_eq!(p.available(Duration::ZERO), u64::MAX);
        assert_eq!(p.wait(Duration::ZERO), Duration::ZERO);
    }
}
