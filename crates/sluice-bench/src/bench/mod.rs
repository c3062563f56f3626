//! `sluice bench`: load and loss measurement in one command.
//!
//! # What a run does
//!
//! 1. Starts the HEC test sink ([`crate::sink`], in process, sequence tracking on, event
//!    recording off) unless `--no-sink`.
//! 2. Starts the receiver under test, once per configuration:
//!    * **daemon mode** (default): `sluice run` as a child process (the executable given to
//!      [`run`]; the CLI passes its own), with a TOML file (`--config FILE`, passed through)
//!      and/or variables (`--env KEY=VALUE`, repeated), listening on `127.0.0.1` on a free
//!      port (or `--port`) for UDP and TCP, its RFC 5426/6587 listener and its status server
//!      on other free ports (so no well-known port, 514, 601 or 8080, is needed or taken),
//!      and its HEC output pointed at the sink. The child gets no `SC4S_*`/`SLUICE_*` variable from
//!      the caller's shell, only those the bench sets, so a run is reproducible from its
//!      command line. Several `--config` files, or `--variant LABEL:KEY=VALUE[,…]` sets, run
//!      the whole rate list once per configuration, each in a fresh daemon;
//!    * **target mode** (`--target HOST:PORT`): a receiver that is already running. The sink
//!      still starts (`--sink-listen ADDR`, `--sink-token`), and its URL and token are
//!      printed so the receiver can be pointed at it. `--metrics URL` reads the receiver's
//!      Prometheus counters (kernel drops, per-socket counts, window); without it, kernel
//!      drops come from `/proc/net/udp` when the receiver is on this machine. `--pid PID`
//!      measures its CPU and memory. With `--no-sink` (the receiver delivers elsewhere), the
//!      delivered count is the receiver's `sluice_delivered_total` delta when `--metrics`
//!      is given, and unknown otherwise: only sent counts and kernel drops are measured.
//! 3. For each offered load of `--rates`, drives a load generator for `--duration` seconds:
//!    this crate's [`crate::loggen`] (`--sender sluice`, exact rates) or syslog-ng's
//!    `loggen` (`--sender loggen`, the tool SC4S's docs use; it sends an initial burst and
//!    its own run id). A rate is the total events/s spread evenly over `--connections`;
//!    `max` is as fast as the sender can; `CxR` is C connections at R each (`4x40000`).
//!    Every step has its own run id (`--sender sluice`: a fresh one per step; syslog-ng's
//!    loggen: the run ids that first appeared during the step), so counts never mix.
//! 4. Waits for the pipeline to drain: the sink's event count has not changed for `--settle`
//!    seconds and (when metrics are known) `sluice_window_events` is 0, at most
//!    `--drain-timeout` seconds (a timeout is reported on the step, not hidden).
//! 5. Records per step: sent and the send rate; delivered = distinct loggen sequence
//!    numbers of the step's run ids at the sink; loss % = (sent − delivered) / sent;
//!    duplicates; kernel drops (delta of `sluice_kernel_dropped_total`, i.e. SO_RXQ_OVFL,
//!    or of the `/proc/net/udp` drop counters); per-socket received counts; the receiver's
//!    CPU time from the first message until drained (utime + stime of `/proc/PID/stat`) as
//!    % of one core over the active period (first message sent → last event arrived at the
//!    sink; above 100 % the receiver used more than one core), the same CPU time per
//!    delivered event in µs, and the CPU % per thread name;
//!    peak RSS (`VmHWM`, reset at the step's start through `/proc/PID/clear_refs` when
//!    allowed, else the process's lifetime peak).
//!
//! # Output
//!
//! A table per configuration (and per-socket counts with the check that they add up to
//! what the sink accepted and, with kernel drops, to what was sent), and a side-by-side table
//! when there are several configurations. `--json` prints the whole [`BenchReport`] as JSON
//! on stdout (the tables then go to stderr). The chart of loss % against offered events/s,
//! one line per configuration, goes to `--plot FILE.svg` (default `sluice-bench.svg` in the
//! current directory; `--no-plot` skips it). `--merge FILE` (repeated) runs nothing: it reads
//! earlier `--json` outputs and prints, plots or re-emits them together, which is how two
//! different receivers end up side by side. `--max-loss PCT` makes the exit status 1 when a
//! step lost more.
//!
//! # Errors
//!
//! Checked before anything starts: an empty rate list, a rate of 0, a malformed rate,
//! `--env` without `=` or setting what the tool owns (ports, HEC URL), flags that do not
//! belong to the mode (`--config` with `--target`, …), a `--port` in use, an unreachable
//! target (TCP refused; UDP with no local socket on the port), a `--metrics` URL that does
//! not answer. A daemon that exits or never serves `/metrics` is an error that quotes its
//! log.

mod plot;
pub mod probe;
mod receiver;
pub mod report;
pub mod sender;
pub mod steps;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use report::{BenchReport, ConfigResult, Machine, Settings, StepResult};
pub use sender::Sender;
pub use steps::Step;

use crate::loggen::{LoggenError, Transport};
use crate::sink::{SinkConfig, SinkError, SinkHandle};
use probe::{HttpUrl, Metrics};
use receiver::{Daemon, DaemonSpec};

/// What `--transport` measures.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum BenchTransport {
    /// One message per datagram; loss is possible and kernel drops are counted.
    Udp,
    /// LF-framed TCP; TCP pushes back instead of losing, so the table shows throughput.
    Tcp,
    /// Syslog over TLS (RFC 5425 octet counting with `--sender sluice`, loggen `-U` LF
    /// framing with `--sender loggen`); the server certificate is not verified. Needs
    /// `--target`: the receiver's TLS port and certificate are set up by the caller.
    Tls,
}

impl BenchTransport {
    fn loggen(self) -> Transport {
        match self {
            BenchTransport::Udp => Transport::Udp,
            BenchTransport::Tcp => Transport::Tcp,
            BenchTransport::Tls => Transport::Tls,
        }
    }
}

/// Default `--rates`: the offered loads of SC4S's published loss table.
pub const DEFAULT_RATES: &str = "4500,9000,27000,50000,150000,350000";
/// Default `--plot`.
pub const DEFAULT_PLOT: &str = "sluice-bench.svg";
/// Default HEC token of the sink.
pub const DEFAULT_TOKEN: &str = "00000000-0000-0000-0000-000000000000";

/// The flags of `sluice bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// Offered loads, comma list: total events/s (split over --connections), `max`, or
    /// `CxR` (C connections at R events/s each, e.g. 4x40000).
    #[arg(long, value_delimiter = ',', value_name = "RATES", default_value = DEFAULT_RATES)]
    pub rates: Vec<String>,
    /// Seconds of sending per rate (syslog-ng's loggen rounds up to whole seconds).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub duration: f64,
    /// Sending connections (each its own socket and source port) unless a rate says `CxR`.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub connections: usize,
    /// Send from N loopback addresses 127.0.0.1..N (--sender sluice only).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub sources: usize,
    /// Bytes per message including the trailing LF.
    #[arg(long, value_name = "BYTES", default_value_t = 800)]
    pub size: usize,
    /// udp, or tcp (LF framing).
    #[arg(long, value_enum, default_value_t = BenchTransport::Udp)]
    pub transport: BenchTransport,
    /// Load generator: sluice (in process, exact rates) or loggen (syslog-ng's binary).
    #[arg(long, value_enum, default_value_t = Sender::Sluice)]
    pub sender: Sender,
    /// syslog-ng's loggen [default: found on PATH].
    #[arg(long, value_name = "FILE")]
    pub loggen_path: Option<PathBuf>,

    /// Daemon mode: a sluice TOML config; repeat to compare configurations.
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// Names of the configurations, in --config order (default: the file names); with no
    /// --config, the name of the single run.
    #[arg(long, value_name = "NAME")]
    pub label: Vec<String>,
    /// Daemon mode: a variable for every daemon started (SC4S_* or SLUICE_*).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Daemon mode: one more configuration made of variables only, e.g.
    /// `ebpf:SC4S_ENABLE_EBPF=yes` or `small:SC4S_SOURCE_UDP_SO_RCVBUFF=1048576,X=Y`.
    #[arg(long, value_name = "LABEL:KEY=VALUE[,KEY=VALUE]")]
    pub variant: Vec<String>,
    /// Daemon mode: the port the daemon listens on (UDP and TCP) [default: a free one].
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Daemon mode: also write each daemon's log to DIR/<label>.log.
    #[arg(long, value_name = "DIR")]
    pub daemon_log: Option<PathBuf>,

    /// Target mode: send to this already-running receiver instead of starting a daemon.
    #[arg(long, value_name = "HOST:PORT")]
    pub target: Option<String>,
    /// Target mode: the receiver's Prometheus /metrics URL (http://HOST:PORT/metrics).
    #[arg(long, value_name = "URL")]
    pub metrics: Option<String>,
    /// Target mode: the receiver's process id, to measure its CPU and memory.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,
    /// Do not start the sink (the receiver delivers elsewhere; see the module docs for what
    /// is then measured).
    #[arg(long)]
    pub no_sink: bool,
    /// Where the HEC sink listens.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub sink_listen: SocketAddr,
    /// HEC token the sink accepts.
    #[arg(long, value_name = "TOKEN", default_value = DEFAULT_TOKEN)]
    pub sink_token: String,

    /// Seconds without new events at the sink (and an empty window) that count as drained.
    #[arg(long, value_name = "SECS", default_value_t = 1.5)]
    pub settle: f64,
    /// Longest wait for the pipeline to drain after a step.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub drain_timeout: f64,
    /// Idle seconds between steps.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub pause: f64,

    /// Print the whole result as JSON on stdout (tables go to stderr).
    #[arg(long)]
    pub json: bool,
    /// Where to write the SVG chart of loss % against offered events/s.
    #[arg(long, value_name = "FILE.svg", default_value = DEFAULT_PLOT)]
    pub plot: PathBuf,
    /// Do not write the chart.
    #[arg(long)]
    pub no_plot: bool,
    /// Title of the chart.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Run nothing: combine earlier --json outputs (repeat) into one table, chart or JSON.
    #[arg(long, value_name = "FILE")]
    pub merge: Vec<PathBuf>,
    /// Exit with status 1 when any step lost more than PCT percent.
    #[arg(long, value_name = "PCT")]
    pub max_loss: Option<f64>,
}

impl BenchArgs {
    /// The flags' defaults, as `sluice bench` with no flag.
    pub fn new() -> BenchArgs {
        BenchArgs {
            rates: DEFAULT_RATES.split(',').map(String::from).collect(),
            duration: 10.0,
            connections: 1,
            sources: 1,
            size: 800,
            transport: BenchTransport::Udp,
            sender: Sender::Sluice,
            loggen_path: None,
            config: Vec::new(),
            label: Vec::new(),
            env: Vec::new(),
            variant: Vec::new(),
            port: None,
            daemon_log: None,
            target: None,
            metrics: None,
            pid: None,
            no_sink: false,
            sink_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            sink_token: DEFAULT_TOKEN.into(),
            settle: 1.5,
            drain_timeout: 60.0,
            pause: 1.0,
            json: false,
            plot: PathBuf::from(DEFAULT_PLOT),
            no_plot: false,
            title: None,
            merge: Vec::new(),
            max_loss: None,
        }
    }
}

impl Default for BenchArgs {
    fn default() -> Self {
        BenchArgs::new()
    }
}

/// Why a bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A flag's value is wrong or conflicts with another flag.
    #[error("{flag}: {reason}")]
    Setting { flag: &'static str, reason: String },
    /// The listen port asked for is taken.
    #[error(
        "port {addr} is in use ({reason}); pick another --port or leave it out to use a free one"
    )]
    PortInUse { addr: SocketAddr, reason: String },
    /// The `--target` cannot be reached.
    #[error("--target {target}: {reason}")]
    Unreachable { target: String, reason: String },
    /// The `--metrics` URL does not answer.
    #[error("--metrics {url}: {reason}")]
    Metrics { url: String, reason: String },
    /// Starting or watching the daemon failed.
    #[error("cannot {what}: {reason}{}", if log.is_empty() { String::new() } else { format!("\n--- last lines of its log ---\n{log}") })]
    Daemon {
        what: String,
        reason: String,
        log: String,
    },
    /// The sink could not start.
    #[error("HEC sink: {0}")]
    Sink(#[from] SinkError),
    /// Our load generator refused its settings.
    #[error("load generator: {0}")]
    Loggen(LoggenError),
    /// syslog-ng's loggen failed.
    #[error("cannot run `{command}`: {reason}")]
    Sender { command: String, reason: String },
    /// A file could not be read or written.
    #[error("{what} {path}: {reason}", path = path.display())]
    File {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
}

fn setting(flag: &'static str, reason: impl Into<String>) -> BenchError {
    BenchError::Setting {
        flag,
        reason: reason.into(),
    }
}

/// One configuration to run.
#[derive(Debug, Clone)]
struct ConfigPlan {
    label: String,
    config: Option<PathBuf>,
    env: Vec<(String, String)>,
}

/// Checked settings of a run.
#[derive(Debug)]
struct Plan {
    steps: Vec<Step>,
    configs: Vec<ConfigPlan>,
    target: Option<(String, SocketAddr)>,
    metrics: Option<HttpUrl>,
    loggen_path: PathBuf,
}

fn validate(args: &BenchArgs) -> Result<Plan, BenchError> {
    let steps = steps::parse_rates(&args.rates, args.connections.max(1))?;
    if args.connections == 0 {
        return Err(setting("--connections", "0 connections send nothing"));
    }
    if !(args.duration.is_finite() && args.duration > 0.0 && args.duration <= 86_400.0) {
        return Err(setting(
            "--duration",
            format!("{} is not a number of seconds in (0, 86400]", args.duration),
        ));
    }
    for (flag, v) in [
        ("--settle", args.settle),
        ("--drain-timeout", args.drain_timeout),
        ("--pause", args.pause),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(setting(flag, format!("{v} is not a number of seconds ≥ 0")));
        }
    }
    if args.size == 0 {
        return Err(setting("--size", "0 bytes"));
    }
    if let Some(m) = args.max_loss
        && !(m.is_finite() && m >= 0.0)
    {
        return Err(setting("--max-loss", format!("{m} is not a percentage")));
    }
    let loggen_path = match args.sender {
        Sender::Loggen => sender::find_loggen(args.loggen_path.as_deref())?,
        Sender::Sluice => {
            if args.loggen_path.is_some() {
                return Err(setting("--loggen-path", "only applies to --sender loggen"));
            }
            PathBuf::new()
        }
    };
    if args.sender == Sender::Loggen && args.sources > 1 {
        return Err(setting(
            "--sources",
            "syslog-ng's loggen sends from one address; use --sender sluice",
        ));
    }
    let env = args
        .env
        .iter()
        .map(|e| steps::parse_env("--env", e))
        .collect::<Result<Vec<_>, _>>()?;
    steps::check_reserved("--env", &env, args.no_sink)?;
    if args.transport == BenchTransport::Tls && args.target.is_none() {
        return Err(setting(
            "--transport tls",
            "needs --target: start the receiver with its TLS port and certificate first \
             (scripts/tls-table.sh does)",
        ));
    }

    if let Some(target) = &args.target {
        for (given, flag) in [
            (!args.config.is_empty(), "--config"),
            (!args.env.is_empty(), "--env"),
            (!args.variant.is_empty(), "--variant"),
            (args.port.is_some(), "--port"),
            (args.daemon_log.is_some(), "--daemon-log"),
        ] {
            if given {
                return Err(setting(
                    flag,
                    "configures the daemon sluice bench starts; with --target the receiver is already running",
                ));
            }
        }
        if args.label.len() > 1 {
            return Err(setting(
                "--label",
                "--target runs one configuration; give one label",
            ));
        }
        let addr = resolve_target(target)?;
        let metrics = match &args.metrics {
            Some(u) => {
                let url = HttpUrl::parse(u).map_err(|reason| BenchError::Metrics {
                    url: u.clone(),
                    reason,
                })?;
                probe::fetch_metrics(&url).map_err(|reason| BenchError::Metrics {
                    url: u.clone(),
                    reason: format!("does not answer: {reason}"),
                })?;
                Some(url)
            }
            None => None,
        };
        if let Some(pid) = args.pid
            && probe::cpu_seconds(pid, 100.0).is_none()
        {
            return Err(setting(
                "--pid",
                format!("no process {pid} (or /proc/{pid}/stat is unreadable)"),
            ));
        }
        let label = args
            .label
            .first()
            .cloned()
            .unwrap_or_else(|| format!("target {target}"));
        return Ok(Plan {
            steps,
            configs: vec![ConfigPlan {
                label,
                config: None,
                env: Vec::new(),
            }],
            target: Some((target.clone(), addr)),
            metrics,
            loggen_path,
        });
    }

    for (given, flag) in [
        (args.metrics.is_some(), "--metrics"),
        (args.pid.is_some(), "--pid"),
    ] {
        if given {
            return Err(setting(
                flag,
                "only applies with --target (the daemon sluice bench starts is measured anyway)",
            ));
        }
    }
    let mut configs = Vec::new();
    if args.label.len() > args.config.len().max(1) {
        return Err(setting(
            "--label",
            format!(
                "{} labels for {} --config files",
                args.label.len(),
                args.config.len()
            ),
        ));
    }
    for (i, path) in args.config.iter().enumerate() {
        let abs = receiver::absolute("--config", path)?;
        let label = args.label.get(i).cloned().unwrap_or_else(|| {
            path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            )
        });
        configs.push(ConfigPlan {
            label,
            config: Some(abs),
            env: env.clone(),
        });
    }
    for v in &args.variant {
        let (label, venv) = steps::parse_variant(v)?;
        steps::check_reserved("--variant", &venv, args.no_sink)?;
        let mut all = env.clone();
        all.extend(venv);
        configs.push(ConfigPlan {
            label,
            config: None,
            env: all,
        });
    }
    if configs.is_empty() {
        configs.push(ConfigPlan {
            label: args
                .label
                .first()
                .cloned()
                .unwrap_or_else(|| "sluice".into()),
            config: None,
            env,
        });
    }
    let mut seen = BTreeSet::new();
    for c in &configs {
        if !seen.insert(c.label.clone()) {
            return Err(setting(
                "--label",
                format!(
                    "two configurations are named {:?}; give each its own --label",
                    c.label
                ),
            ));
        }
    }
    if let Some(dir) = &args.daemon_log {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::File {
            what: "--daemon-log",
            path: dir.clone(),
            reason: e.to_string(),
        })?;
    }
    Ok(Plan {
        steps,
        configs,
        target: None,
        metrics: None,
        loggen_path,
    })
}

fn resolve_target(target: &str) -> Result<SocketAddr, BenchError> {
    let unreachable = |reason: String| BenchError::Unreachable {
        target: target.to_string(),
        reason,
    };
    target
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("cannot resolve it ({e}); expected HOST:PORT")))?
        .next()
        .ok_or_else(|| unreachable("no address found".into()))
}

/// Fails when nothing can receive at `addr`: a refused TCP connection, or for UDP on this
/// machine no socket bound to the port. A remote UDP receiver cannot be checked without
/// sending it data; the first step's delivered count tells.
fn check_reachable(target: &str, addr: SocketAddr, transport: Transport) -> Result<(), BenchError> {
    let unreachable = |reason: String| BenchError::Unreachable {
        target: target.to_string(),
        reason,
    };
    match transport {
        Transport::Udp => {
            let local = addr.ip().is_loopback() || addr.ip().is_unspecified();
            if local && probe::udp_socket_drops(addr.port()).is_empty() {
                return Err(unreachable(format!(
                    "no UDP socket is bound to port {} on this machine",
                    addr.port()
                )));
            }
            Ok(())
        }
        _ => TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map(drop)
            .map_err(|e| unreachable(format!("TCP connection failed: {e}"))),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Where a step sends and what it can observe.
struct Receiver<'a> {
    target: SocketAddr,
    /// The port label of the receiver's metrics.
    port: u16,
    metrics: Option<&'a HttpUrl>,
    pid: Option<u32>,
    daemon: Option<&'a mut Daemon>,
}

impl Receiver<'_> {
    fn metrics(&mut self) -> Result<Option<Metrics>, BenchError> {
        if let Some(d) = self.daemon.as_deref_mut() {
            return receiver::daemon_metrics(d).map(Some);
        }
        match self.metrics {
            Some(url) => {
                probe::fetch_metrics(url)
                    .map(Some)
                    .map_err(|reason| BenchError::Metrics {
                        url: format!("http://{}:{}{}", url.host, url.port, url.path),
                        reason,
                    })
            }
            None => Ok(None),
        }
    }
}

/// Sink state before a step.
struct SinkMark {
    runids: BTreeSet<Option<u64>>,
    unparsed: u64,
    rejected: u64,
}

fn sink_mark(sink: &SinkHandle) -> SinkMark {
    let r = sink.seq_report(None);
    SinkMark {
        runids: r.per_thread.iter().map(|t| t.runid).collect(),
        unparsed: r.unparsed,
        rejected: sink.stats().rejected_total(),
    }
}

fn delta(a: Option<f64>, b: Option<f64>) -> Option<u64> {
    Some((b? - a?).max(0.0).round() as u64)
}

fn by_socket(m: &Metrics, name: &str, labels: &[(&str, &str)]) -> BTreeMap<usize, f64> {
    m.by_label(name, "socket", labels)
        .into_iter()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
        .collect()
}

fn socket_deltas(a: &BTreeMap<usize, f64>, b: &BTreeMap<usize, f64>) -> Vec<u64> {
    let n = b.keys().next_back().map_or(0, |k| k + 1);
    (0..n)
        .map(|i| {
            let x = b.get(&i).copied().unwrap_or(0.0) - a.get(&i).copied().unwrap_or(0.0);
            x.max(0.0).round() as u64
        })
        .collect()
}

struct Ctx<'a> {
    args: &'a BenchArgs,
    plan: &'a Plan,
    sink: Option<&'a SinkHandle>,
    ticks: f64,
}

fn run_step(
    ctx: &Ctx<'_>,
    rx: &mut Receiver<'_>,
    step: Step,
    run_id: u64,
    label: &str,
) -> Result<StepResult, BenchError> {
    let args = ctx.args;
    let udp = args.transport == BenchTransport::Udp;
    let port_s = rx.port.to_string();
    let port_l = [("port", port_s.as_str())];

    let load_avg = probe::load_average();
    let m0 = rx.metrics()?;
    let udp0 = udp.then(|| probe::udp_socket_drops(rx.target.port()));
    let mark0 = ctx.sink.map(sink_mark);
    let rss_reset = rx.pid.is_some_and(probe::reset_peak_rss);
    let cpu0 = rx.pid.and_then(|p| probe::cpu_seconds(p, ctx.ticks));
    let own0 = probe::self_and_children_cpu(ctx.ticks);
    let sink_cpu0 = probe::own_threads_cpu("hec-sink", ctx.ticks);
    let threads0 = rx
        .pid
        .map(|p| probe::cpu_by_thread(p, ctx.ticks))
        .unwrap_or_default();

    let send_start = Instant::now();
    let sent = sender::send(&sender::SendPlan {
        sender: args.sender,
        loggen_path: &ctx.plan.loggen_path,
        target: rx.target,
        transport: args.transport.loggen(),
        step,
        sources: args.sources,
        size: args.size,
        duration: args.duration,
        run_id,
    })?;
    eprint!(
        "[{label}] {}: sent {} in {:.2} s ({:.0}/s); draining…",
        step.label(),
        sent.sent,
        sent.elapsed.as_secs_f64(),
        sent.sent as f64 / sent.elapsed.as_secs_f64().max(1e-9)
    );

    // Drain: nothing new for `settle` seconds and, when known, an empty window.
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
    let drain_secs = drain_start.elapsed().as_secs_f64();

    let cpu1 = rx.pid.and_then(|p| probe::cpu_seconds(p, ctx.ticks));
    let own1 = probe::self_and_children_cpu(ctx.ticks);
    let sink_cpu1 = probe::own_threads_cpu("hec-sink", ctx.ticks);
    let threads1 = rx
        .pid
        .map(|p| probe::cpu_by_thread(p, ctx.ticks))
        .unwrap_or_default();
    let peak_rss_kib = rx.pid.and_then(|p| probe::status_kib(p, "VmHWM"));
    let m1 = rx.metrics()?;
    let udp1 = udp.then(|| probe::udp_socket_drops(rx.target.port()));

    // What the sink got from this step's run ids.
    let (mut delivered, mut duplicates, mut sink_accepted, mut sink_unparsed, mut rejected) =
        (None, None, None, None, None);
    let mut run_ids: Vec<u64> = sent.run_id.into_iter().collect();
    if let (Some(sink), Some(mark)) = (ctx.sink, &mark0) {
        let r = sink.seq_report(None);
        let mine = |t: &crate::seq::ThreadReport| match sent.run_id {
            Some(id) => t.runid == Some(id),
            None => !mark.runids.contains(&t.runid),
        };
        let (mut d, mut dup) = (0, 0);
        for t in r.per_thread.iter().filter(|t| mine(t)) {
            d += t.distinct;
            dup += t.duplicates;
            if let Some(id) = t.runid
                && !run_ids.contains(&id)
            {
                run_ids.push(id);
            }
        }
        delivered = Some(d);
        duplicates = Some(dup);
        sink_accepted = Some(d + dup);
        sink_unparsed = Some(r.unparsed.saturating_sub(mark.unparsed));
        rejected = Some(sink.stats().rejected_total().saturating_sub(mark.rejected));
    }
    let mut delivered_source = if delivered.is_some() { "sink" } else { "none" };

    let (mut kernel_drops, mut received, mut window_full, mut dropped) = (None, None, None, None);
    let (mut per_socket_received, mut per_socket_datagrams) = (Vec::new(), Vec::new());
    if let (Some(a), Some(b)) = (&m0, &m1) {
        let udp_l = [("transport", "udp"), ("port", port_s.as_str())];
        // A TLS port is labelled tls or rfc5425 by the receiver; the port alone selects it.
        let proto_l: &[(&str, &str)] = match args.transport {
            BenchTransport::Udp => &[("transport", "udp"), ("port", port_s.as_str())],
            BenchTransport::Tcp => &[("transport", "tcp"), ("port", port_s.as_str())],
            BenchTransport::Tls => &[("port", port_s.as_str())],
        };
        if udp {
            kernel_drops = delta(
                a.sum("sluice_kernel_dropped_total", &port_l),
                b.sum("sluice_kernel_dropped_total", &port_l),
            );
            per_socket_received = socket_deltas(
                &by_socket(a, "sluice_received_total", &udp_l),
                &by_socket(b, "sluice_received_total", &udp_l),
            );
            per_socket_datagrams = socket_deltas(
                &by_socket(a, "sluice_udp_datagrams_total", &port_l),
                &by_socket(b, "sluice_udp_datagrams_total", &port_l),
            );
        }
        received = delta(
            a.sum("sluice_received_total", proto_l),
            b.sum("sluice_received_total", proto_l),
        );
        window_full = delta(
            a.sum("sluice_window_full_total", &[]),
            b.sum("sluice_window_full_total", &[]),
        );
        dropped = delta(
            a.sum("sluice_dropped_total", &[]),
            b.sum("sluice_dropped_total", &[]),
        );
        if delivered.is_none() {
            delivered = delta(
                a.sum("sluice_delivered_total", &[]),
                b.sum("sluice_delivered_total", &[]),
            );
            if delivered.is_some() {
                delivered_source = "metrics";
            }
        }
    }
    let proc_udp_drops = match (&udp0, &udp1) {
        (Some(a), Some(b)) if !b.is_empty() => Some(probe::drops_delta(a, b)),
        _ => None,
    };
    let kernel_drops_source = if kernel_drops.is_some() {
        Some("metrics".to_string())
    } else if proc_udp_drops.is_some() {
        kernel_drops = proc_udp_drops;
        Some("proc".to_string())
    } else {
        None
    };

    let send_secs = sent.elapsed.as_secs_f64();
    let send_rate = if send_secs > 0.0 {
        sent.sent as f64 / send_secs
    } else {
        0.0
    };
    let cpu = match (cpu0, cpu1) {
        (Some(a), Some(b)) => Some((b - a).max(0.0)),
        _ => None,
    };
    // Utilisation over the active period: first message sent → last event seen at the sink
    // (the idle settle time is left out so it does not dilute the figure).
    let active_secs = last_change
        .max(send_start + sent.elapsed)
        .saturating_duration_since(send_start)
        .as_secs_f64()
        .max(1e-9);
    let cpu_pct = cpu.map(|c| c / active_secs * 100.0);
    let per_event_base = delivered.filter(|d| *d > 0).unwrap_or(sent.sent);
    let cpu_us_per_event = cpu
        .filter(|_| per_event_base > 0)
        .map(|c| c * 1e6 / per_event_base as f64);
    // The harness's share of the machine: the sink's threads over the active period, the
    // sender (syslog-ng's loggen: its exited child's CPU; ours: this process minus the sink)
    // over the sending time.
    let sink_cpu = (sink_cpu1 - sink_cpu0).max(0.0);
    let sink_cpu_pct = ctx.sink.map(|_| sink_cpu / active_secs * 100.0);
    let sender_cpu_pct = match (own0, own1) {
        (Some((s0, c0)), Some((s1, c1))) => {
            let used = match args.sender {
                Sender::Loggen => c1 - c0,
                Sender::Sluice => (s1 - s0) - sink_cpu,
            };
            Some(used.max(0.0) / send_secs.max(1e-9) * 100.0)
        }
        _ => None,
    };
    let cpu_by_thread = threads1
        .iter()
        .map(|(name, t1)| {
            let t0 = threads0.get(name).copied().unwrap_or(0.0);
            (name.clone(), (t1 - t0).max(0.0) / active_secs * 100.0)
        })
        .filter(|(_, p)| *p >= 0.5)
        .collect();
    let loss_pct = delivered
        .filter(|_| sent.sent > 0)
        .map(|d| sent.sent.saturating_sub(d) as f64 * 100.0 / sent.sent as f64);

    eprintln!(
        " delivered {}, loss {}, kernel drops {}{}{} ({:.1} s)",
        delivered.map_or("?".into(), |d| d.to_string()),
        loss_pct.map_or("?".into(), |l| format!("{l:.3}%")),
        kernel_drops.map_or("?".into(), |d| d.to_string()),
        if drained { "" } else { ", NOT DRAINED" },
        match rejected {
            Some(r) if r > 0 => format!(", {r} requests REJECTED by the sink"),
            _ => String::new(),
        },
        drain_secs
    );
    if delivered == Some(0) && sent.sent > 0 && ctx.sink.is_some() {
        eprintln!(
            "warning: nothing reached the sink; is the receiver's HEC output pointed at {} with token {:?}?",
            ctx.sink.map(|s| s.event_url()).unwrap_or_default(),
            args.sink_token
        );
    }

    Ok(StepResult {
        step,
        label: step.label(),
        offered_rate: send_rate,
        run_ids,
        sent: sent.sent,
        send_secs,
        send_rate,
        lagged: sent.lagged,
        send_errors: sent.errors,
        delivered,
        delivered_source: delivered_source.to_string(),
        duplicates,
        sink_accepted,
        sink_unparsed,
        loss_pct,
        kernel_drops,
        kernel_drops_source,
        proc_udp_drops,
        received,
        per_socket_received,
        per_socket_datagrams,
        window_full,
        dropped,
        cpu_pct,
        cpu_us_per_event,
        cpu_by_thread,
        sink_cpu_pct,
        sender_cpu_pct,
        peak_rss_kib,
        peak_rss_scope: rx
            .pid
            .map(|_| if rss_reset { "step" } else { "process" }.to_string()),
        drained,
        drain_secs,
        load_avg,
    })
}

/// Fills a configuration's receiver description from the daemon's metrics.
fn describe_daemon(c: &mut ConfigResult, m: &Metrics, port: u16) {
    let p = port.to_string();
    if let Some(labels) = m
        .labels_of("sluice_udp_balance_info")
        .filter(|l| l.iter().any(|(k, v)| k == "port" && v == &p))
    {
        let get = |k: &str| {
            labels
                .iter()
                .find(|(lk, _)| lk == k)
                .map(|(_, v)| v.clone())
        };
        c.balance = get("mode");
        c.balance_fallback = get("fallback_reason").filter(|s| !s.is_empty());
    }
    let rcv = m.by_label("sluice_udp_rcvbuf_bytes", "socket", &[("port", &p)]);
    if !rcv.is_empty() {
        c.udp_sockets = Some(rcv.len());
        c.rcvbuf_bytes = rcv.values().next().map(|v| *v as u64);
    }
}

/// Runs the whole bench. `daemon_exe` is the `sluice` binary started in daemon mode.
pub fn run(args: &BenchArgs, daemon_exe: &Path) -> Result<BenchReport, BenchError> {
    let plan = validate(args)?;
    let mut machine = Machine::probe();
    let ticks = probe::clock_ticks();

    // In daemon mode, check a fixed port before anything starts.
    let listen_ip = plan
        .configs
        .first()
        .and_then(|c| {
            c.env
                .iter()
                .rev()
                .find(|(k, _)| k == "SLUICE_LISTEN_ADDRESS")
                .and_then(|(_, v)| v.parse::<IpAddr>().ok())
        })
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if plan.target.is_none()
        && let Some(p) = args.port
    {
        receiver::check_port_free(listen_ip, p)?;
    }
    if let Some((target, addr)) = &plan.target {
        check_reachable(target, *addr, args.transport.loggen())?;
    }

    let sink = if args.no_sink {
        None
    } else {
        Some(SinkHandle::spawn_thread(SinkConfig {
            addr: args.sink_listen,
            token: args.sink_token.clone(),
            record: false,
            track_seq: true,
            ..SinkConfig::default()
        })?)
    };
    if let (Some(s), Some(_)) = (&sink, &plan.target) {
        eprintln!(
            "HEC sink listening: URL {} token {} (point the receiver's HEC output here)",
            s.event_url(),
            s.token()
        );
    }
    let ctx = Ctx {
        args,
        plan: &plan,
        sink: sink.as_ref(),
        ticks,
    };
    let run_base = unix_now();
    let mut step_no = 0u64;
    let mut configs = Vec::new();
    for cp in &plan.configs {
        let mut result = ConfigResult {
            label: cp.label.clone(),
            receiver: String::new(),
            config_file: cp.config.as_ref().map(|p| p.display().to_string()),
            env: cp.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            balance: None,
            balance_fallback: None,
            udp_sockets: None,
            rcvbuf_bytes: None,
            steps: Vec::new(),
        };
        let mut daemon = None;
        let (target, port, pid) = match &plan.target {
            Some((t, addr)) => {
                result.receiver = format!("target {t}");
                (*addr, addr.port(), args.pid)
            }
            None => {
                let port = match args.port {
                    Some(p) => p,
                    None => receiver::free_port(listen_ip)?,
                };
                let d = Daemon::start(&DaemonSpec {
                    exe: daemon_exe.to_path_buf(),
                    config: cp.config.clone(),
                    env: cp.env.clone(),
                    listen_ip,
                    port,
                    hec: sink.as_ref().map(|s| (s.base_url(), s.token().to_string())),
                    log_file: args
                        .daemon_log
                        .as_ref()
                        .map(|d| d.join(format!("{}.log", sanitize(&cp.label)))),
                })?;
                result.receiver = format!("sluice daemon, pid {}", d.pid);
                let pid = d.pid;
                daemon = Some(d);
                let ip = if listen_ip.is_unspecified() {
                    IpAddr::V4(Ipv4Addr::LOCALHOST)
                } else {
                    listen_ip
                };
                (SocketAddr::new(ip, port), port, Some(pid))
            }
        };
        let mut rx = Receiver {
            target,
            port,
            metrics: plan.metrics.as_ref(),
            pid,
            daemon: daemon.as_mut(),
        };
        if let Some(m) = rx.metrics()? {
            describe_daemon(&mut result, &m, port);
        }
        eprintln!("== {}", result.describe());
        for (i, step) in plan.steps.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_secs_f64(args.pause));
            }
            let s = run_step(&ctx, &mut rx, *step, run_base + step_no, &cp.label)?;
            step_no += 1;
            result.steps.push(s);
        }
        if let Some(mut d) = daemon {
            d.stop();
        }
        configs.push(result);
    }
    machine.load_end = probe::load_average();
    Ok(BenchReport {
        tool: format!("sluice bench {}", env!("CARGO_PKG_VERSION")),
        machine,
        settings: Settings {
            sender: args.sender,
            transport: args.transport.loggen().label().to_lowercase(),
            size: args.size,
            duration_secs: args.duration,
            sources: args.sources,
            command: std::env::args().collect::<Vec<_>>().join(" "),
        },
        configs,
    })
}

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Reads earlier `--json` outputs and puts their configurations together.
pub fn merge(files: &[PathBuf]) -> Result<BenchReport, BenchError> {
    let mut merged: Option<BenchReport> = None;
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| BenchError::File {
            what: "--merge",
            path: f.clone(),
            reason: e.to_string(),
        })?;
        let r: BenchReport = serde_json::from_str(&text).map_err(|e| BenchError::File {
            what: "--merge",
            path: f.clone(),
            reason: format!("not a `sluice bench --json` output: {e}"),
        })?;
        match &mut merged {
            None => merged = Some(r),
            Some(m) => {
                m.machine.load_end = r.machine.load_end;
                m.configs.extend(r.configs);
            }
        }
    }
    merged.ok_or_else(|| setting("--merge", "no file given"))
}

/// Writes the chart of `report` to `path`.
pub fn write_plot(
    report: &BenchReport,
    title: Option<&str>,
    path: &Path,
) -> Result<(), BenchError> {
    let s = &report.settings;
    let default_title = format!("{} loss vs offered load", s.transport.to_uppercase());
    let m = &report.machine;
    let load = m
        .load_start
        .map(|l| format!(", load {:.2}", l[0]))
        .unwrap_or_default();
    let subtitle = format!(
        "{}-byte messages, {} s per step, {} · {} cores{load}",
        s.size,
        s.duration_secs,
        s.sender.describe(),
        m.cores
    );
    let svg = plot::svg(title.unwrap_or(&default_title), &subtitle, &report.configs);
    std::fs::write(path, svg).map_err(|e| BenchError::File {
        what: "--plot",
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// `sluice bench`: runs (or merges), prints, plots. Exit status 1 when `--max-loss` was
/// exceeded.
pub fn main(args: &BenchArgs, daemon_exe: &Path) -> Result<ExitCode, BenchError> {
    // A chart that cannot be written should fail now, not after a long run.
    if !args.no_plot {
        let dir = match args.plot.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(BenchError::File {
                what: "--plot",
                path: args.plot.clone(),
                reason: format!("{} is not a directory", dir.display()),
            });
        }
    }
    let report = if args.merge.is_empty() {
        run(args, daemon_exe)?
    } else {
        for (given, flag) in [
            (args.target.is_some(), "--target"),
            (!args.config.is_empty(), "--config"),
            (!args.variant.is_empty(), "--variant"),
            (!args.env.is_empty(), "--env"),
        ] {
            if given {
                return Err(setting(
                    flag,
                    "--merge runs nothing; it only combines earlier results",
                ));
            }
        }
        merge(&args.merge)?
    };
    let text = report.text();
    if args.json {
        eprint!("{text}");
        let json = serde_json::to_string_pretty(&report).map_err(|e| BenchError::File {
            what: "--json",
            path: PathBuf::from("<stdout>"),
            reason: e.to_string(),
        })?;
        println!("{json}");
    } else {
        print!("{text}");
    }
    if !args.no_plot {
        write_plot(&report, args.title.as_deref(), &args.plot)?;
        eprintln!("plot written to {}", args.plot.display());
    }
    if let Some(max) = args.max_loss {
        let over: Vec<String> = report
            .configs
            .iter()
            .flat_map(|c| {
                c.steps
                    .iter()
                    .filter(|s| s.loss_pct.is_some_and(|l| l > max))
                    .map(move |s| {
                        format!(
                            "{} {} lost {:.3}%",
                            c.label,
                            s.label,
                            s.loss_pct.unwrap_or(0.0)
                        )
                    })
            })
            .collect();
        if !over.is_empty() {
            eprintln!("loss above --max-loss {max}%: {}", over.join("; "));
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> BenchArgs {
        BenchArgs::new()
    }

    fn err(a: &BenchArgs) -> String {
        validate(a).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_the_sc4s_rates_in_one_daemon() {
        let p = validate(&args()).unwrap();
        assert_eq!(p.steps.len(), 6);
        assert_eq!(p.steps[5].total_rate(), Some(350_000));
        assert_eq!(p.configs.len(), 1);
        assert_eq!(p.configs[0].label, "sluice");
        assert!(p.target.is_none());
    }

    #[test]
    fn bad_settings_are_named() {
        type Edit = Box<dyn Fn(&mut BenchArgs)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|a| a.rates = vec![]), "--rates: the list is empty"),
            (Box::new(|a| a.rates = vec!["0".into()]), "a rate of 0"),
            (Box::new(|a| a.duration = 0.0), "--duration"),
            (Box::new(|a| a.duration = f64::NAN), "--duration"),
            (Box::new(|a| a.connections = 0), "--connections"),
            (
                Box::new(|a| a.env = vec!["X".into()]),
                "--env: \"X\" is not KEY=VALUE",
            ),
            (
                Box::new(|a| a.env = vec!["SC4S_LISTEN_STATUS_PORT=1".into()]),
                "set by sluice bench itself",
            ),
            (
                Box::new(|a| a.metrics = Some("http://x".into())),
                "--metrics: only applies with --target",
            ),
            (
                Box::new(|a| a.pid = Some(1)),
                "--pid: only applies with --target",
            ),
            (
                Box::new(|a| a.config = vec!["/nonexistent/sluice.toml".into()]),
                "--config: /nonexistent/sluice.toml",
            ),
            (
                Box::new(|a| a.label = vec!["a".into(), "b".into()]),
                "--label: 2 labels",
            ),
            (
                Box::new(|a| a.variant = vec!["a:X=1".into(), "a:Y=2".into()]),
                "two configurations are named \"a\"",
            ),
            (
                Box::new(|a| {
                    a.target = Some("127.0.0.1:9".into());
                    a.config = vec!["x.toml".into()];
                }),
                "--config: configures the daemon",
            ),
            (
                Box::new(|a| a.target = Some("no-such-host.invalid:514".into())),
                "--target no-such-host.invalid:514: cannot resolve",
            ),
            (
                Box::new(|a| a.target = Some("127.0.0.1".into())),
                "expected HOST:PORT",
            ),
            (
                Box::new(|a| {
                    a.target = Some("127.0.0.1:9".into());
                    a.metrics = Some("ftp://x".into());
                }),
                "--metrics ftp://x: only http://",
            ),
            (
                Box::new(|a| a.loggen_path = Some("/x".into())),
                "--loggen-path: only applies",
            ),
            (Box::new(|a| a.max_loss = Some(-1.0)), "--max-loss"),
        ];
        for (edit, want) in cases {
            let mut a = args();
            edit(&mut a);
            let got = err(&a);
            assert!(got.contains(want), "got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn configurations_from_files_labels_and_variants() {
        let dir = std::env::temp_dir().join(format!("bench-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("ebpf.toml");
        std::fs::write(&f, "[udp]\nbalance = \"ebpf\"\n").unwrap();
        let mut a = args();
        a.config = vec![f.clone()];
        a.env = vec!["SC4S_SOURCE_UDP_SO_RCVBUFF=1048576".into()];
        a.variant = vec!["kernel:SLUICE_UDP_BALANCE=kernel".into()];
        let p = validate(&a).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(p.configs.len(), 2);
        assert_eq!(p.configs[0].label, "ebpf");
        assert!(p.configs[0].config.as_ref().unwrap().is_absolute());
        assert_eq!(p.configs[1].label, "kernel");
        assert_eq!(p.configs[1].env.len(), 2, "--env applies to variants too");
        assert!(p.configs[1].config.is_none());
    }

    #[test]
    fn a_taken_port_and_a_dead_target_fail_before_anything_starts() {
        let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let mut a = args();
        a.port = Some(port);
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("port 127.0.0.1:{port} is in use")),
            "{e}"
        );
        drop(taken);

        // Nothing bound to a fresh port: UDP target mode refuses to send into the void.
        let free = receiver::free_port(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
        let mut a = args();
        a.target = Some(format!("127.0.0.1:{free}"));
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no UDP socket is bound"), "{e}");
        a.transport = BenchTransport::Tcp;
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("TCP connection failed"), "{e}");
    }

    /// A stand-in receiver: forwards every UDP datagram to the sink as a HEC event, except
    /// that it loses every 10th and sends the first one twice.
    fn lossy_relay(
        sock: std::net::UdpSocket,
        sink: SocketAddr,
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) {
        use std::sync::atomic::Ordering;
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut client = None;
        let mut n = 0u64;
        let mut body = Vec::new();
        let mut buf = vec![0u8; 2048];
        let flush = |client: &mut Option<crate::sink::client::RawClient>, body: &mut Vec<u8>| {
            if body.is_empty() {
                return;
            }
            loop {
                if client.is_none() {
                    *client = crate::sink::client::RawClient::connect(sink).ok();
                }
                if let Some(c) = client.as_mut() {
                    let auth = format!("Splunk {DEFAULT_TOKEN}");
                    match c.request(
                        "POST",
                        "/services/collector/event",
                        &[("Authorization", &auth)],
                        body,
                    ) {
                        Ok(r) if r.status == 200 => break,
                        _ => *client = None,
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            body.clear();
        };
        while !stop.load(Ordering::Relaxed) {
            match sock.recv(&mut buf) {
                Ok(len) => {
                    n += 1;
                    if n.is_multiple_of(10) {
                        continue;
                    }
                    let text = String::from_utf8_lossy(&buf[..len]).trim_end().to_string();
                    let event = serde_json::json!({ "event": text }).to_string();
                    let copies = if n == 1 { 2 } else { 1 };
                    for _ in 0..copies {
                        body.extend_from_slice(event.as_bytes());
                        body.push(b'\n');
                    }
                    if body.len() > 256 * 1024 {
                        flush(&mut client, &mut body);
                    }
                }
                Err(_) => flush(&mut client, &mut body),
            }
        }
    }

    #[test]
    fn target_mode_counts_loss_and_duplicates_at_the_sink() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let target = sock.local_addr().unwrap();
        let sink_port = receiver::free_port(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
        let sink_addr = SocketAddr::from(([127, 0, 0, 1], sink_port));
        let stop = Arc::new(AtomicBool::new(false));
        let relay = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || lossy_relay(sock, sink_addr, stop))
        };
        let mut a = args();
        a.target = Some(target.to_string());
        a.sink_listen = sink_addr;
        a.rates = vec!["2000".into(), "2x1000".into()];
        a.duration = 1.0;
        a.settle = 0.5;
        a.pause = 0.0;
        a.pid = Some(std::process::id());
        let report = run(&a, Path::new("/unused")).unwrap();
        stop.store(true, Ordering::Relaxed);
        relay.join().unwrap();

        let c = &report.configs[0];
        assert_eq!(c.receiver, format!("target {target}"));
        let s = &c.steps[0];
        assert_eq!(s.sent, 2000);
        assert_eq!(s.delivered, Some(1800), "{s:?}");
        assert_eq!(s.duplicates, Some(1));
        assert_eq!(s.sink_accepted, Some(1801));
        assert!((s.loss_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(s.kernel_drops, Some(0));
        assert_eq!(s.kernel_drops_source.as_deref(), Some("proc"));
        assert!(s.drained);
        assert!(s.cpu_pct.is_some() && s.peak_rss_kib.is_some());
        // The second step has its own run id: the relay's count continues, so the 10th-message
        // loss lands on other sequence numbers, but the totals are the step's own.
        let s2 = &c.steps[1];
        assert_eq!(s2.label, "2x1000/s");
        assert_eq!(s2.sent, 2000);
        assert_eq!(s2.delivered, Some(1800));
        assert_eq!(s2.duplicates, Some(0));
        assert_ne!(s.run_ids, s2.run_ids);
        let text = report.text();
        assert!(text.contains("10.000"), "{text}");

        // The JSON round-trips through --merge.
        let dir = std::env::temp_dir().join(format!("bench-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.json");
        std::fs::write(&f, serde_json::to_string(&report).unwrap()).unwrap();
        let m = merge(&[f.clone(), f]).unwrap();
        assert_eq!(m.configs.len(), 2);
        assert_eq!(m.configs[1].steps[0].delivered, Some(1800));
        let svg = dir.join("p.svg");
        write_plot(&m, None, &svg).unwrap();
        assert!(
            std::fs::read_to_string(&svg)
                .unwrap()
                .contains("UDP loss vs offered load")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_daemon_that_cannot_start_is_reported() {
        let mut a = args();
        a.rates = vec!["1000".into()];
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot start /nonexistent/sluice run"), "{e}");
    }
}
