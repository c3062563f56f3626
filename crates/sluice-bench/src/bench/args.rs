//! The flags of `sluice bench`.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::sender::Sender;
use crate::loggen::Transport;

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
    pub(super) fn loggen(self) -> Transport {
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
    /// Send the non-empty lines of FILE, verbatim and in a loop, instead of generated
    /// messages (e.g. a vendor mix: one raw message per line). Replayed lines carry no
    /// sequence number, so delivery is counted from the events the sink accepted, without a
    /// gap or duplicate check.
    #[arg(long, value_name = "FILE", conflicts_with = "size")]
    pub replay: Option<PathBuf>,
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
            replay: None,
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
