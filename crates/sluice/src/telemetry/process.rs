//! `process_*` metrics read from `/proc` at scrape time (the names and meanings of the
//! Prometheus client libraries' process collectors, so existing dashboards work), and
//! `sluice_build_info`.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// The version from Cargo, the commit from `build.rs` (`unknown` outside a git checkout).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub const COMMIT: &str = env!("SLUICE_GIT_COMMIT");

/// What `/proc` says about this process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcessStats {
    pub cpu_seconds: f64,
    pub resident_bytes: u64,
    pub virtual_bytes: u64,
    pub open_fds: u64,
    /// The soft limit on open files.
    pub max_fds: Option<u64>,
    pub start_time_seconds: f64,
}

impl ProcessStats {
    /// Reads `/proc/self`; `None` where there is no `/proc` (the metrics are then left out).
    pub fn read() -> Option<ProcessStats> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let btime = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| parse_btime(&s))?;
        let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64;
        let max_fds = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        parse_stat(
            &stat,
            rustix::param::clock_ticks_per_second(),
            rustix::param::page_size() as u64,
            btime,
        )
        .map(|mut s| {
            // read_dir's own descriptor is counted too.
            s.open_fds = open_fds.saturating_sub(1);
            s.max_fds = max_fds;
            s
        })
    }
}

/// Fields of `/proc/self/stat` (proc(5)): utime and stime (14, 15) and starttime (22) in
/// clock ticks, vsize (23) in bytes, rss (24) in pages. The command name (2) is in
/// parentheses and may hold spaces and parentheses itself, so fields are counted from the
/// last `)`.
pub fn parse_stat(stat: &str, ticks: u64, page_size: u64, btime: u64) -> Option<ProcessStats> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3.
    let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    let ticks = ticks.max(1) as f64;
    Some(ProcessStats {
        cpu_seconds: (field(14)? + field(15)?) as f64 / ticks,
        virtual_bytes: field(23)?,
        resident_bytes: field(24)? * page_size,
        start_time_seconds: btime as f64 + field(22)? as f64 / ticks,
        open_fds: 0,
        max_fds: None,
    })
}

/// `btime` of `/proc/stat`: boot time, Unix seconds.
pub fn parse_btime(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// Renders [`ProcessStats::read`] and the build info on every scrape.
#[derive(Debug)]
pub struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let build = encoder.encode_descriptor(
            "sluice_build_info",
            "The running build (always 1): version and git commit.",
            None,
            MetricType::Gauge,
        )?;
        let mut build = build;
        build
            .encode_family(&[("version", VERSION), ("commit", COMMIT)])?
            .encode_gauge(&1i64)?;
        let Some(p) = ProcessStats::read() else {
            return Ok(());
        };
        ConstCounter::new(p.cpu_seconds).encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            None,
            MetricType::Counter,
        )?)?;
        for (name, help, v) in [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                p.resident_bytes as f64,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                p.virtual_bytes as f64,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                p.open_fds as f64,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                p.start_time_seconds,
            ),
        ] {
            ConstGauge::new(v).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)?;
        }
        if let Some(max) = p.max_fds {
            ConstGauge::new(max as f64).encode(encoder.encode_descriptor(
                "process_max_fds",
                "Maximum number of open file descriptors.",
                None,
                MetricType::Gauge,
            )?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        // A command name with a space and a parenthesis, as a process may set it.
        let stat = "4242 (sluice (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 \
                    9 0 12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 \
                    0 0 0 0 0";
        let p = parse_stat(stat, 100, 4096, 1_700_000_000).unwrap();
        assert_eq!(p.cpu_seconds, 3.0);
        assert_eq!(p.virtual_bytes, 104_857_600);
        assert_eq!(p.resident_bytes, 2560 * 4096);
        assert_eq!(p.start_time_seconds, 1_700_000_000.0 + 123.45);
        assert_eq!(parse_stat("garbage", 100, 4096, 0), None);
        assert_eq!(parse_stat("1 (x) S 1", 100, 4096, 0), None);
    }

    #[test]
    fn btime_is_read_from_proc_stat() {
        assert_eq!(
            parse_btime("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"),
            Some(1_700_000_000)
        );
        assert_eq!(parse_btime("cpu 1\n"), None);
    }

    #[test]
    fn this_process_is_read_from_proc() {
        let p = ProcessStats::read().expect("Linux has /proc");
        assert!(p.resident_bytes > 0, "{p:?}");
        assert!(p.open_fds >= 3, "stdin, stdout, stderr: {p:?}");
        assert!(p.max_fds.is_some_and(|m| m >= p.open_fds), "{p:?}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            p.start_time_seconds <= now + 1.0 && p.start_time_seconds > now - 86_400.0,
            "{p:?}"
        );
    }
}
