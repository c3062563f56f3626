//! Step 4 of a run: wait until the pipeline has drained after the load stopped.

use std::time::{Duration, Instant};

use super::BenchError;
use super::measure::{Ctx, Receiver};

/// How the wait ended.
pub(super) struct Drained {
    /// Whether it settled before `--drain-timeout` (a timeout is reported on the step).
    pub drained: bool,
    /// How long the wait took.
    pub secs: f64,
    /// When the delivered count last changed: the end of the step's active period.
    pub last_change: Instant,
}

/// Waits until nothing new has arrived for `--settle` seconds and, when the receiver's
/// metrics are known, its window (`sluice_window_events`) is empty; at most
/// `--drain-timeout` seconds. Without a sink the count is the receiver's own
/// delivered + received counters.
pub(super) fn wait(ctx: &Ctx<'_>, rx: &mut Receiver<'_>) -> Result<Drained, BenchError> {
    let args = ctx.args;
    let drain_start = Instant::now();
    let settle = Duration::from_secs_f64(args.settle);
    let deadline = drain_start + Duration::from_secs_f64(args.drain_timeout);
    let observe = |rx: &mut Receiver<'_>| -> Result<(u64, Option<f64>), BenchError> {
        let m = rx.metrics()?;
        let window = m.as_ref().and_then(|m| m.sum("sluice_window_events", &[]));
        let count = match ctx.sink {
            Some(s) => s.accepted_events(),
            None => m
                .as_ref()
                .and_then(|m| {
                    Some(
                        m.sum("sluice_delivered_total", &[])?
                            + m.sum("sluice_received_total", &[]).unwrap_or(0.0),
                    )
                })
                .map_or(0, |v| v as u64),
        };
        Ok((count, window))
    };
    let (mut last, _) = observe(rx)?;
    let mut last_change = Instant::now();
    let drained = loop {
        std::thread::sleep(Duration::from_millis(100));
        let (count, window) = observe(rx)?;
        if count != last {
            last = count;
            last_change = Instant::now();
        }
        if last_change.elapsed() >= settle && window.is_none_or(|w| w == 0.0) {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
    };
    Ok(Drained {
        drained,
        secs: drain_start.elapsed().as_secs_f64(),
        last_change,
    })
}
