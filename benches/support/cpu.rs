//! CPU time of the bench thread, shared by the benches that report a per-core figure
//! (criterion's wall time counts the time other processes held the core on a shared box).

/// This thread's user + system CPU time in seconds (Linux; `None` elsewhere).
pub fn thread_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the `(comm)`: state is field 3; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut f = rest.split(' ').skip(11);
    let utime: f64 = f.next()?.parse().ok()?;
    let stime: f64 = f.next()?.parse().ok()?;
    // USER_HZ is 100 on every Linux target sluice supports.
    Some((utime + stime) / 100.0)
}

/// Runs `round` (one pass over `n` messages) for about `secs` seconds of this thread's CPU
/// time; returns (CPU seconds used, messages done), `None` without a thread CPU clock.
pub fn run_for_cpu_secs(n: usize, secs: f64, mut round: impl FnMut()) -> Option<(f64, u64)> {
    let start = thread_cpu_secs()?;
    let mut done = 0u64;
    let mut used = 0.0;
    while used < secs {
        for _ in 0..100 {
            round();
        }
        done += 100 * n as u64;
        used = thread_cpu_secs().unwrap_or(start) - start;
    }
    Some((used, done))
}
