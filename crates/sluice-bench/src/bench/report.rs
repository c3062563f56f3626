//! Results of a bench run (serialisable: `--json` writes them, `--merge` reads them back) and
//! their text tables.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::sender::Sender;
use super::steps::Step;

/// Everything one `sluice bench` invocation measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchReport {
    /// `sluice bench` and the crate version.
    pub tool: String,
    pub machine: Machine,
    pub settings: Settings,
    /// One per configuration, in the order they ran.
    pub configs: Vec<ConfigResult>,
}

/// The machine the run was on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Machine {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: usize,
    pub kernel: String,
    pub memory_mib: u64,
    /// 1/5/15-minute load averages before the first step and after the last.
    pub load_start: Option<[f64; 3]>,
    pub load_end: Option<[f64; 3]>,
}

impl Machine {
    pub fn probe() -> Machine {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|x| x.1))
            .unwrap_or("unknown")
            .trim()
            .to_string();
        let memory_mib = read("/proc/meminfo")
            .lines()
            .find_map(|l| {
                l.strip_prefix("MemTotal:")?
                    .split_whitespace()
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or(0)
            / 1024;
        Machine {
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            memory_mib,
            load_start: super::probe::load_average(),
            load_end: None,
        }
    }

    pub fn describe(&self) -> String {
        let load = |l: &Option<[f64; 3]>| match l {
            Some([a, b, c]) => format!("{a:.2} {b:.2} {c:.2}"),
            None => "?".into(),
        };
        format!(
            "{} cores ({}), {} MiB, Linux {}; load average at start {}, at end {}",
            self.cores,
            self.cpu_model,
            self.memory_mib,
            self.kernel,
            load(&self.load_start),
            load(&self.load_end)
        )
    }
}

/// The settings every step of the run shared.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    pub sender: Sender,
    pub transport: String,
    /// Bytes per message, LF included (with `replay`, the file's average line).
    pub size: usize,
    /// `--replay`: the file whose lines were sent.
    #[serde(default)]
    pub replay: Option<String>,
    pub duration_secs: f64,
    pub sources: usize,
    /// The command line, for the record.
    pub command: String,
}

/// One configuration's results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigResult {
    pub label: String,
    /// `sluice daemon` or `target HOST:PORT`.
    pub receiver: String,
    pub config_file: Option<String>,
    pub env: Vec<String>,
    /// Active UDP balancing mode as the daemon reports it (`sluice_udp_balance_info`).
    pub balance: Option<String>,
    /// Why the requested mode was not used, if it was not.
    pub balance_fallback: Option<String>,
    pub udp_sockets: Option<usize>,
    /// Effective receive buffer per socket, as read back from the kernel.
    pub rcvbuf_bytes: Option<u64>,
    pub steps: Vec<StepResult>,
}

/// One offered load against one configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepResult {
    pub step: Step,
    pub label: String,
    /// Offered events/s as achieved: `sent / send_secs` (below the step's rate when the
    /// sender could not keep up; the plot's x axis).
    pub offered_rate: f64,
    /// Run ids whose events are counted for this step.
    pub run_ids: Vec<u64>,
    pub sent: u64,
    pub send_secs: f64,
    /// `sent / send_secs`.
    pub send_rate: f64,
    /// Messages the sender forfeited because it fell behind its rate (our loggen only).
    pub lagged: u64,
    pub send_errors: u64,
    /// Distinct loggen sequence numbers of this step's run ids seen at the sink (or, without
    /// a sink, the receiver's `sluice_delivered_total` delta).
    pub delivered: Option<u64>,
    /// `sink`, `metrics` or `none`.
    pub delivered_source: String,
    pub duplicates: Option<u64>,
    /// Events of this step's run ids the sink accepted (distinct + duplicates).
    pub sink_accepted: Option<u64>,
    /// Events at the sink without a loggen sequence number, during this step.
    pub sink_unparsed: Option<u64>,
    /// `(sent − delivered) / sent × 100`.
    pub loss_pct: Option<f64>,
    /// Datagrams the kernel dropped on the receiver's sockets during the step.
    pub kernel_drops: Option<u64>,
    /// `metrics` (`sluice_kernel_dropped_total`, SO_RXQ_OVFL) or `proc` (`/proc/net/udp`).
    pub kernel_drops_source: Option<String>,
    /// The `/proc/net/udp` drop counters of the receiver's sockets, for a cross-check.
    pub proc_udp_drops: Option<u64>,
    /// `sluice_received_total` delta (all sockets).
    pub received: Option<u64>,
    /// `sluice_received_total{socket=i}` deltas.
    pub per_socket_received: Vec<u64>,
    /// `sluice_udp_datagrams_total{socket=i}` deltas.
    pub per_socket_datagrams: Vec<u64>,
    /// `sluice_window_full_total` delta: times a receiver stopped reading for a full window.
    pub window_full: Option<u64>,
    /// `sluice_dropped_total` delta (all reasons).
    pub dropped: Option<u64>,
    /// Receiver CPU time from the first message until drained, as % of one core over the
    /// active period (first message sent → last event seen at the sink).
    pub cpu_pct: Option<f64>,
    /// The same CPU time per delivered (else sent) event, in microseconds.
    pub cpu_us_per_event: Option<f64>,
    /// CPU % of one core per thread name, same basis as `cpu_pct`.
    pub cpu_by_thread: BTreeMap<String, f64>,
    /// CPU of the in-process HEC sink's threads, % of one core over the active period.
    #[serde(default)]
    pub sink_cpu_pct: Option<f64>,
    /// CPU of the load generator, % of one core over the sending time (syslog-ng's loggen:
    /// the child process; ours: this process minus the sink).
    #[serde(default)]
    pub sender_cpu_pct: Option<f64>,
    /// `VmHWM` after the step, KiB.
    pub peak_rss_kib: Option<u64>,
    /// `step` when the peak was reset at the step's start, else `process`.
    pub peak_rss_scope: Option<String>,
    /// False when the drain wait timed out (the pipeline was still busy).
    pub drained: bool,
    pub drain_secs: f64,
    pub load_avg: Option<[f64; 3]>,
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"))
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(
        || "-".to_string(),
        |k| format!("{:.1} MiB", k as f64 / 1024.0),
    )
}

fn loss(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"))
}

/// Right-aligned columns with a header row.
fn render(header: &[String], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < width.len() {
                width[i] = width[i].max(c.chars().count());
            }
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = width[i].saturating_sub(c.chars().count());
            if i == 0 {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str("  ");
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(header);
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

impl ConfigResult {
    /// One line describing the receiver.
    pub fn describe(&self) -> String {
        let mut s = format!("{} — {}", self.label, self.receiver);
        if let Some(b) = &self.balance {
            let _ = write!(s, ", balance {b}");
            if let Some(f) = &self.balance_fallback {
                let _ = write!(s, " (fallback: {f})");
            }
        }
        if let Some(n) = self.udp_sockets {
            let _ = write!(s, ", {n} UDP sockets");
        }
        if let Some(b) = self.rcvbuf_bytes {
            let _ = write!(s, ", rcvbuf {:.0} MiB as read back", b as f64 / 1_048_576.0);
        }
        if let Some(c) = &self.config_file {
            let _ = write!(s, ", --config {c}");
        }
        if !self.env.is_empty() {
            let _ = write!(s, ", env {}", self.env.join(" "));
        }
        s
    }

    /// The per-step table of this configuration.
    pub fn table(&self) -> String {
        let header: Vec<String> = [
            "step",
            "sent",
            "sent/s",
            "delivered",
            "loss %",
            "dups",
            "kernel drops",
            "cpu %",
            "µs/event",
            "peak RSS",
            "sink cpu %",
            "sender cpu %",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut notes = Vec::new();
        let rows: Vec<Vec<String>> = self
            .steps
            .iter()
            .map(|s| {
                let mut delivered = opt(s.delivered);
                if s.delivered_source == "metrics" {
                    delivered.push('*');
                    notes.push("* delivered as counted by the receiver (sluice_delivered_total): no sink, no duplicate check");
                }
                if !s.drained {
                    delivered.push('!');
                    notes.push("! the pipeline had not drained when the wait timed out");
                }
                let mut kd = opt(s.kernel_drops);
                if s.kernel_drops_source.as_deref() == Some("proc") {
                    kd.push('°');
                    notes.push("° kernel drops from /proc/net/udp (the receiver exports no drop counter)");
                }
                vec![
                    s.label.clone(),
                    s.sent.to_string(),
                    format!("{:.0}", s.send_rate),
                    delivered,
                    loss(s.loss_pct),
                    opt(s.duplicates),
                    kd,
                    pct(s.cpu_pct),
                    pct(s.cpu_us_per_event),
                    mib(s.peak_rss_kib),
                    pct(s.sink_cpu_pct),
                    pct(s.sender_cpu_pct),
                ]
            })
            .collect();
        let mut out = render(&header, &rows);
        out.push_str(
            "cpu % (of one core), µs/event and peak RSS are the receiver's; sink and sender cpu % are the harness's share of the same machine\n",
        );
        notes.dedup();
        let mut seen = Vec::new();
        for n in notes {
            if !seen.contains(&n) {
                out.push_str(n);
                out.push('\n');
                seen.push(n);
            }
        }
        out
    }

    /// Per-socket received counts and the check that they add up to what the sink got.
    pub fn socket_table(&self) -> Option<String> {
        let n = self
            .steps
            .iter()
            .map(|s| s.per_socket_received.len())
            .max()?;
        if n == 0 {
            return None;
        }
        let mut header = vec!["step".to_string()];
        header.extend((0..n).map(|i| format!("socket {i}")));
        header.extend(
            ["received", "sink accepted", "kernel drops", "check"]
                .iter()
                .map(|s| s.to_string()),
        );
        let rows: Vec<Vec<String>> = self
            .steps
            .iter()
            .map(|s| {
                let mut r = vec![s.label.clone()];
                for i in 0..n {
                    let v = s.per_socket_received.get(i).copied().unwrap_or(0);
                    let share = match s.received {
                        Some(t) if t > 0 => format!(" ({:.0}%)", v as f64 * 100.0 / t as f64),
                        _ => String::new(),
                    };
                    r.push(format!("{v}{share}"));
                }
                r.push(opt(s.received));
                r.push(opt(s.sink_accepted));
                r.push(opt(s.kernel_drops));
                r.push(check(s));
                r
            })
            .collect();
        Some(render(&header, &rows))
    }
}

/// `ok` when received == accepted at the sink and received + kernel drops == sent.
fn check(s: &StepResult) -> String {
    let (Some(rx), Some(acc)) = (s.received, s.sink_accepted) else {
        return "-".into();
    };
    let mut problems = Vec::new();
    if rx != acc {
        problems.push(format!("received − sink = {}", rx as i64 - acc as i64));
    }
    if let Some(k) = s.kernel_drops {
        let total = rx + k;
        if total != s.sent {
            problems.push(format!(
                "sent − (received + drops) = {}",
                s.sent as i64 - total as i64
            ));
        }
    }
    if problems.is_empty() {
        "ok".into()
    } else {
        problems.join("; ")
    }
}

impl Settings {
    /// `800-byte messages`, or `lines of FILE (431 bytes on average)`.
    pub fn describe_messages(&self) -> String {
        match &self.replay {
            Some(f) => format!("lines of {f} ({} bytes on average)", self.size),
            None => format!("{}-byte messages", self.size),
        }
    }
}

impl BenchReport {
    /// The whole report as text: a header, one table per configuration, per-socket tables,
    /// and a side-by-side comparison when there are several configurations.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let s = &self.settings;
        let _ = writeln!(
            out,
            "sluice bench: {} over {}, {} s per step, sender {}{}",
            s.describe_messages(),
            s.transport,
            s.duration_secs,
            s.sender.describe(),
            if s.sources > 1 {
                format!(" from {} source addresses", s.sources)
            } else {
                String::new()
            }
        );
        let _ = writeln!(out, "machine: {}", self.machine.describe());
        for c in &self.configs {
            let _ = writeln!(out, "\n[{}]", c.describe());
            out.push_str(&c.table());
            if let Some(t) = c.socket_table() {
                out.push_str("per-socket received (sluice_received_total deltas):\n");
                out.push_str(&t);
            }
        }
        if self.configs.len() > 1 {
            out.push('\n');
            out.push_str(&side_by_side(&self.configs));
        }
        out
    }
}

/// Sent, delivered, loss and kernel drops of every configuration, one row per step label.
pub fn side_by_side(configs: &[ConfigResult]) -> String {
    let mut labels: Vec<String> = Vec::new();
    for c in configs {
        for s in &c.steps {
            if !labels.contains(&s.label) {
                labels.push(s.label.clone());
            }
        }
    }
    let mut header = vec!["step".to_string()];
    let mut groups = String::from("side by side:");
    for (i, c) in configs.iter().enumerate() {
        let tag = format!("[{}]", i + 1);
        let _ = write!(groups, "  {tag} {}", c.label);
        for col in ["sent", "delivered", "loss %", "kdrops", "cpu %"] {
            header.push(format!("{tag} {col}"));
        }
    }
    let rows: Vec<Vec<String>> = labels
        .iter()
        .map(|l| {
            let mut r = vec![l.clone()];
            for c in configs {
                match c.steps.iter().find(|s| &s.label == l) {
                    Some(s) => r.extend([
                        s.sent.to_string(),
                        opt(s.delivered),
                        loss(s.loss_pct),
                        opt(s.kernel_drops),
                        pct(s.cpu_pct),
                    ]),
                    None => r.extend(std::iter::repeat_n("-".to_string(), 5)),
                }
            }
            r
        })
        .collect();
    format!("{groups}\n{}", render(&header, &rows))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn step(label: &str, rate: Option<u64>, sent: u64, delivered: u64) -> StepResult {
        StepResult {
            step: Step {
                connections: 1,
                per_connection: rate,
            },
            label: label.into(),
            offered_rate: rate.map_or(250_000.0, |r| r as f64),
            run_ids: vec![1],
            sent,
            send_secs: 10.0,
            send_rate: rate.map_or(250_000.0, |r| r as f64),
            lagged: 0,
            send_errors: 0,
            delivered: Some(delivered),
            delivered_source: "sink".into(),
            duplicates: Some(0),
            sink_accepted: Some(delivered),
            sink_unparsed: Some(0),
            loss_pct: Some((sent - delivered) as f64 * 100.0 / sent as f64),
            kernel_drops: Some(sent - delivered),
            kernel_drops_source: Some("metrics".into()),
            proc_udp_drops: Some(sent - delivered),
            received: Some(delivered),
            per_socket_received: vec![delivered / 2, delivered - delivered / 2],
            per_socket_datagrams: vec![],
            window_full: Some(0),
            dropped: Some(0),
            cpu_pct: Some(20.0),
            cpu_us_per_event: Some(1.0),
            cpu_by_thread: BTreeMap::new(),
            sink_cpu_pct: Some(10.0),
            sender_cpu_pct: Some(30.0),
            peak_rss_kib: Some(40_000),
            peak_rss_scope: Some("step".into()),
            drained: true,
            drain_secs: 1.5,
            load_avg: None,
        }
    }

    pub fn config(label: &str, steps: Vec<StepResult>) -> ConfigResult {
        ConfigResult {
            label: label.into(),
            receiver: "sluice daemon".into(),
            config_file: None,
            env: vec![],
            balance: Some("ebpf".into()),
            balance_fallback: None,
            udp_sockets: Some(2),
            rcvbuf_bytes: Some(16 << 20),
            steps,
        }
    }

    #[test]
    fn tables_show_every_column_and_check_the_sums() {
        let c = config(
            "default",
            vec![
                step("20000/s", Some(20_000), 200_000, 200_000),
                step("max", None, 2_500_000, 2_400_000),
            ],
        );
        let t = c.table();
        assert!(t.starts_with("step"), "{t}");
        assert!(t.contains("peak RSS"), "{t}");
        let row: Vec<&str> = t.lines().nth(1).unwrap().split_whitespace().collect();
        assert_eq!(
            &row[..5],
            ["20000/s", "200000", "20000", "200000", "0.000"],
            "{t}"
        );
        assert!(t.contains("4.000"), "{t}");
        let s = c.socket_table().unwrap();
        assert!(s.contains("100000 (50%)"), "{s}");
        assert!(s.lines().nth(1).unwrap().ends_with("ok"), "{s}");
        let mut bad = step("x", Some(1), 10, 10);
        bad.received = Some(9);
        assert_eq!(
            check(&bad),
            "received − sink = -1; sent − (received + drops) = 1"
        );
    }

    #[test]
    fn side_by_side_aligns_steps_by_label() {
        let a = config("a", vec![step("50000/s", Some(50_000), 100, 100)]);
        let b = config(
            "b",
            vec![
                step("50000/s", Some(50_000), 100, 50),
                step("max", None, 100, 10),
            ],
        );
        let t = side_by_side(&[a, b]);
        assert!(t.starts_with("side by side:  [1] a  [2] b"), "{t}");
        let max_row = t.lines().find(|l| l.starts_with("max")).unwrap();
        assert!(max_row.contains(" -  "), "{max_row}");
        assert!(t.contains("50.000"), "{t}");
    }
}
