//! `sluice loggen`: a syslog load generator that speaks syslog-ng loggen's message format,
//! so a receiver-side counter can check every run for gaps and duplicates.
//!
//! # What is sent
//!
//! `--connections` senders per source address, each its own OS thread and socket (for UDP
//! its own source port). Connection `thread` (0-based, numbered across all sources:
//! `source × connections + connection`) sends messages whose `seq` counts from 0 on that
//! connection. The shapes are byte for byte those of syslog-ng's `loggen` (see
//! `syslog-ng-internals.md` §e):
//!
//! * `--format rfc3164` (default):
//!   `<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 PADDPADD…\n`
//! * `--format rfc5424`:
//!   `<38>1 2026-03-05T12:28:51+00:00 localhost prg00000 1234 - - \xEF\xBB\xBFseq: 0000000007, thread: 0000, runid: …, stamp: … PADD…\n`,
//!   with `--sdata` in place of the second `-`.
//! * `--format replay --file PATH`: every non-empty line of the file (its LF or CRLF
//!   removed) is sent as `line\n`, in order, looping over the file. Nothing is injected,
//!   so replayed messages can only be gap-checked if the file's lines already carry
//!   `seq: NNNNNNNNNN, thread: TTTT, runid: R`.
//!
//! `--size` is the size of a generated message including its trailing LF (as loggen's `-s`):
//! after the header comes a space and `PADD` repeated and cut to fit. The smallest size is the
//! header itself plus the LF (127 bytes for rfc3164 with a 10-digit run id). Timestamps are
//! the sender's local time, rewritten when the second changes; `seq` has 10 digits and wraps.
//! The run id defaults to the current unix time.
//!
//! # Framing per transport
//!
//! | `--transport` | on the wire |
//! |---|---|
//! | `udp` | one message per datagram (no octet count, unlike loggen `-P` over UDP) |
//! | `tcp` | messages back to back, each ending with its LF (RFC 6587 non-transparent framing) |
//! | `tcp-octet` | `"<len> " + message` (RFC 6587 octet counting); `len` includes the LF, as loggen `-P` |
//! | `tls` | as `tcp-octet`, over TLS (RFC 5425); `--tls-ca FILE` or `--tls-insecure` |
//!
//! # Timing
//!
//! `--rate` is messages per second **per connection**; 0 sends as fast as possible. The rate is
//! kept by a token bucket per connection (see `pacer`) that wakes every millisecond and sends
//! what is due in one system call (`sendmmsg` for UDP, one large write for streams). The
//! first message goes out at once and message `k` is due at `k / R`, so `--rate R --duration D`
//! sends exactly `R × D` messages per connection (rounded up when that is not whole); unlike
//! syslog-ng's loggen, there is no initial burst (loggen starts with 0.9 s worth of tokens). A connection stops
//! after `--count` messages or `--duration` seconds, whichever comes first; with neither it
//! runs 10 s, as loggen does. If a connection falls more than 200 ms behind its schedule,
//! the excess is not sent later in one burst but forfeited and reported as `lagged`.
//!
//! # Reporting
//!
//! Unless `--quiet`, every second `count=N, rate=R msg/s` goes to stderr (N: messages sent
//! so far by all connections; R: over the last second). [`run`] returns a [`LoggenReport`];
//! [`run_and_print`] also prints it as text on stderr and, with `--json`, as one JSON object
//! on stdout. *Sent* means accepted by the kernel (UDP) or written to the socket (TCP, TLS):
//! what the receiver got must be counted at the receiver.
//!
//! # Errors
//!
//! Settings are checked before any socket is opened, and every connection is opened (and
//! its TLS handshake completed) before any sending starts, so a bad flag, a refused TCP
//! connection or a failed handshake is a [`LoggenError`] naming the flag or the address.
//! After the start, send errors are counted per connection: a UDP connection keeps going
//! (e.g. `ECONNREFUSED` while nothing listens), a stream connection ends.

mod conn;
mod message;
mod pacer;
mod tls;

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs},
    path::PathBuf,
    sync::{
        RwLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
        mpsc,
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use serde::Serialize;

use self::{
    conn::{Job, TlsClient},
    message::{Framing, Generated, Messages, ReplayCursor, ReplayData, Shape},
};

/// Default `--rate` (loggen's default).
pub const DEFAULT_RATE: u64 = 1000;
/// Default `--size` (loggen's default).
pub const DEFAULT_SIZE: usize = 256;
/// How long a run lasts when neither `--duration` nor `--count` is given (loggen's `-I`).
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Default `--batch`: messages per `sendmmsg` or per write.
pub const DEFAULT_BATCH: usize = 128;
/// Largest `--batch` (`sendmmsg` takes at most 1024 messages per call).
pub const MAX_BATCH: usize = 1024;
/// Largest generated UDP message (the IPv4 UDP payload limit).
pub const MAX_UDP_SIZE: usize = 65_507;
/// Largest generated TCP/TLS message.
pub const MAX_STREAM_SIZE: usize = 1 << 20;
/// `thread` has 4 digits.
pub const MAX_CONNECTIONS: usize = 10_000;
/// Bytes of messages one connection prepares per batch at most (caps `--batch` for large
/// `--size`).
const MAX_BATCH_BYTES: usize = 1 << 20;

/// Transport of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// UDP, one message per datagram.
    Udp,
    /// TCP, messages terminated by LF.
    Tcp,
    /// TCP with RFC 6587 octet counting.
    TcpOctet,
    /// TLS (RFC 5425 octet counting).
    Tls,
}

impl Transport {
    /// How errors name the transport: `UDP`, `TCP` or `TLS`.
    pub fn label(self) -> &'static str {
        match self {
            Transport::Udp => "UDP",
            Transport::Tcp | Transport::TcpOctet => "TCP",
            Transport::Tls => "TLS",
        }
    }
}

/// Message format of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// BSD syslog header, loggen's default.
    Rfc3164,
    /// RFC 5424 header, loggen's `-P`.
    Rfc5424,
    /// The lines of `--file`, verbatim.
    Replay,
}

impl Format {
    /// The flag value naming this format.
    pub fn name(self) -> &'static str {
        match self {
            Format::Rfc3164 => "rfc3164",
            Format::Rfc5424 => "rfc5424",
            Format::Replay => "replay",
        }
    }
}

/// Settings of one load-generation run; the flags of `sluice loggen`.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct LoggenConfig {
    /// Receiver address, HOST:PORT (e.g. 127.0.0.1:514).
    #[arg(value_name = "HOST:PORT")]
    pub target: String,
    /// udp, tcp (LF framing), tcp-octet (RFC 6587 octet counting) or tls (RFC 5425).
    #[arg(long, short = 't', value_enum, default_value_t = Transport::Udp)]
    pub transport: Transport,
    /// Messages per second per connection; 0 = as fast as possible.
    #[arg(long, short = 'r', value_name = "MSGS", default_value_t = DEFAULT_RATE)]
    pub rate: u64,
    /// Seconds to send (fractions allowed); with neither this nor --count, 10.
    #[arg(long, short = 'I', visible_alias = "interval", value_name = "SECS")]
    pub duration: Option<f64>,
    /// Messages to send per connection (stops at whichever of --count/--duration comes first).
    #[arg(long, short = 'n', visible_alias = "number", value_name = "N")]
    pub count: Option<u64>,
    /// Bytes per generated message including the trailing LF [default: 256].
    #[arg(long, short = 's', value_name = "BYTES")]
    pub size: Option<usize>,
    /// Connections per source address, each with its own thread and socket.
    #[arg(
        long,
        short = 'c',
        visible_alias = "active-connections",
        value_name = "N",
        default_value_t = 1
    )]
    pub connections: usize,
    /// Send from N source addresses 127.0.0.1..127.0.0.N (loopback targets only).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub sources: usize,
    /// rfc3164, rfc5424 or replay (lines of --file, sent verbatim).
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Rfc3164)]
    pub format: Format,
    /// Structured data for `--format rfc5424`, e.g. `[x@1 a="b"]`.
    #[arg(
        long,
        short = 'p',
        value_name = "SD",
        help = "Structured data for --format rfc5424, e.g. '[x@1 a=\"b\"]'"
    )]
    pub sdata: Option<String>,
    /// File whose lines --format replay sends.
    #[arg(long, short = 'R', value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// Run id written into every message [default: current unix time].
    #[arg(long, value_name = "ID")]
    pub run_id: Option<u64>,
    /// TLS: accept any server certificate (self-signed test receivers).
    #[arg(long)]
    pub tls_insecure: bool,
    /// TLS: trust the PEM CA certificate(s) in FILE and verify the server name.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// TLS: name to verify instead of the target's host.
    #[arg(long, value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// Messages per system call at most (sendmmsg batch, or messages per write).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BATCH)]
    pub batch: usize,
    /// Do not print the per-second progress lines.
    #[arg(long, short = 'q', short_alias = 'Q')]
    pub quiet: bool,
    /// Also print the final report as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

impl LoggenConfig {
    /// The settings `sluice loggen TARGET` runs with when no other flag is given.
    pub fn new(target: impl Into<String>) -> LoggenConfig {
        LoggenConfig {
            target: target.into(),
            transport: Transport::Udp,
            rate: DEFAULT_RATE,
            duration: None,
            count: None,
            size: None,
            connections: 1,
            sources: 1,
            format: Format::Rfc3164,
            sdata: None,
            file: None,
            run_id: None,
            tls_insecure: false,
            tls_ca: None,
            tls_server_name: None,
            batch: DEFAULT_BATCH,
            quiet: false,
            json: false,
        }
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoggenError {
    /// A flag's value is wrong or conflicts with another flag.
    #[error("{flag}: {reason}")]
    InvalidSetting {
        /// The flag, e.g. `--size`.
        flag: &'static str,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// The target could not be resolved to an address.
    #[error("cannot resolve target {target:?}: {reason}")]
    Resolve {
        /// The target as given.
        target: String,
        /// Why.
        reason: String,
    },
    /// A connection could not be opened.
    #[error("cannot connect to {addr} over {transport}: {reason}")]
    Connect {
        /// The target address.
        addr: SocketAddr,
        /// `UDP`, `TCP` or `TLS`.
        transport: &'static str,
        /// The OS error.
        reason: String,
    },
    /// A `--sources` address could not be bound.
    #[error("--sources: cannot bind source address {addr}: {reason}")]
    BindSource {
        /// The source address.
        addr: SocketAddr,
        /// The OS error.
        reason: String,
    },
    /// TLS setup or handshake failed.
    #[error("cannot {what}: {reason}")]
    Tls {
        /// What was attempted, with the address.
        what: String,
        /// rustls' or the OS's error.
        reason: String,
    },
    /// The `--file` of `--format replay` is unusable.
    #[error("--file {path}: {reason}", path = path.display())]
    ReplayFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A sender thread could not be started.
    #[error("cannot start the sender thread for connection {thread}: {reason}")]
    Spawn {
        /// Its connection index.
        thread: u32,
        /// The OS error.
        reason: String,
    },
    /// A sender thread panicked (a bug).
    #[error("the sender thread for connection {thread} panicked")]
    SenderPanicked {
        /// Its connection index.
        thread: u32,
    },
    /// The report could not be written out.
    #[error("cannot print the report: {reason}")]
    Output {
        /// Why.
        reason: String,
    },
}

impl LoggenError {
    pub(crate) fn invalid(flag: &'static str, reason: impl Into<String>) -> LoggenError {
        LoggenError::InvalidSetting {
            flag,
            reason: reason.into(),
        }
    }
}

/// What one connection did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionReport {
    /// The connection index written into its messages as `thread`.
    pub thread: u32,
    /// Its local address (source IP and port), if the OS reported it.
    pub local_addr: Option<SocketAddr>,
    /// Messages sent.
    pub sent: u64,
    /// Bytes sent, framing included.
    pub bytes: u64,
    /// Messages forfeited because it fell more than 200 ms behind `--rate`.
    pub lagged: u64,
    /// Failed send (or close) calls.
    pub errors: u64,
    /// The first of them.
    pub first_error: Option<String>,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggenReport {
    /// The run id in the messages.
    pub run_id: u64,
    /// The address sent to.
    pub target: SocketAddr,
    /// The transport.
    pub transport: Transport,
    /// Messages sent by all connections.
    pub sent: u64,
    /// Bytes sent by all connections, framing included.
    pub bytes: u64,
    /// From the common start until the last connection stopped sending.
    #[serde(rename = "elapsed_secs", serialize_with = "as_secs")]
    pub elapsed: Duration,
    /// `sent / elapsed`, messages per second.
    pub rate: f64,
    /// Messages forfeited by all connections for falling behind `--rate`.
    pub lagged: u64,
    /// Failed calls of all connections.
    pub errors: u64,
    /// Per connection, by `thread`.
    pub per_connection: Vec<ConnectionReport>,
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl LoggenReport {
    /// The report as one JSON object (`elapsed` as `elapsed_secs`, a float).
    pub fn to_json(&self) -> Result<String, LoggenError> {
        serde_json::to_string(self).map_err(|e| LoggenError::Output {
            reason: e.to_string(),
        })
    }
}

impl fmt::Display for LoggenReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        let avg = if self.sent > 0 {
            self.bytes as f64 / self.sent as f64
        } else {
            0.0
        };
        let kbps = if secs > 0.0 {
            self.bytes as f64 / 1024.0 / secs
        } else {
            0.0
        };
        write!(
            f,
            "average rate = {:.2} msg/s, count={}, time={secs:.3} s, (average) msg size={avg:.0}, \
             bandwidth={kbps:.2} kB/s, connections={}, runid={}, lagged={}, errors={}",
            self.rate,
            self.sent,
            self.per_connection.len(),
            self.run_id,
            self.lagged,
            self.errors
        )?;
        let detail = self.per_connection.len() > 1 || self.errors > 0 || self.lagged > 0;
        for c in self.per_connection.iter().filter(|_| detail) {
            write!(f, "\n  thread {:04}", c.thread)?;
            if let Some(a) = c.local_addr {
                write!(f, " from {a}")?;
            }
            write!(
                f,
                ": sent={} bytes={} lagged={} errors={}",
                c.sent, c.bytes, c.lagged, c.errors
            )?;
            if let Some(e) = &c.first_error {
                write!(f, " (first error: {e})")?;
            }
        }
        Ok(())
    }
}

/// A validated configuration.
#[derive(Debug)]
struct Plan {
    dest: SocketAddr,
    duration: Option<Duration>,
    count: Option<u64>,
    run_id: u64,
    /// Connections in total (`sources × connections`).
    total: usize,
    shape: Option<Shape>,
    replay: Option<ReplayData>,
    tls: Option<TlsClient>,
    /// Messages per batch after the byte cap.
    batch: usize,
}

impl Plan {
    /// The source address of connection `thread`, or `None` for "let the kernel choose".
    fn source(&self, sources: usize, connections: usize, thread: usize) -> Option<IpAddr> {
        if sources <= 1 {
            return None;
        }
        let index = (thread / connections) as u8;
        Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, index + 1)))
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The target as an address and the host part (for TLS server names).
fn resolve(target: &str) -> Result<(SocketAddr, String), LoggenError> {
    let err = |reason: String| LoggenError::Resolve {
        target: target.to_owned(),
        reason,
    };
    if let Ok(addr) = target.parse::<SocketAddr>() {
        return Ok((addr, addr.ip().to_string()));
    }
    let Some((host, port)) = target.rsplit_once(':') else {
        return Err(err("expected HOST:PORT, e.g. 127.0.0.1:514".to_owned()));
    };
    if port.parse::<u16>().is_err() {
        return Err(err(format!("{port:?} is not a port number")));
    }
    let mut addrs = target
        .to_socket_addrs()
        .map_err(|e| err(conn::describe(&e)))?;
    let addr = addrs
        .next()
        .ok_or_else(|| err("no address found".to_owned()))?;
    Ok((
        addr,
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
    ))
}

fn validate(cfg: &LoggenConfig) -> Result<Plan, LoggenError> {
    use LoggenError as E;
    if cfg.connections == 0 {
        return Err(E::invalid(
            "--connections",
            "0 connections send nothing; give at least 1",
        ));
    }
    if cfg.sources == 0 || cfg.sources > 254 {
        return Err(E::invalid(
            "--sources",
            format!(
                "{} is out of range: 1..=254 (127.0.0.1..127.0.0.254)",
                cfg.sources
            ),
        ));
    }
    let total = cfg.connections.saturating_mul(cfg.sources);
    if total > MAX_CONNECTIONS {
        return Err(E::invalid(
            "--connections",
            format!(
                "{} connections × {} sources = {total} is more than {MAX_CONNECTIONS} (thread ids have 4 digits)",
                cfg.connections, cfg.sources
            ),
        ));
    }
    if cfg.count == Some(0) {
        return Err(E::invalid(
            "--count",
            "0 messages per connection sends nothing; give at least 1, or use --duration alone",
        ));
    }
    let duration = match cfg.duration {
        Some(s) if !(s.is_finite() && s > 0.0 && s <= 1e9) => {
            return Err(E::invalid(
                "--duration",
                format!("{s} seconds: must be a positive number of seconds"),
            ));
        }
        Some(s) => Some(Duration::from_secs_f64(s)),
        None if cfg.count.is_none() => Some(DEFAULT_DURATION),
        None => None,
    };
    if cfg.batch == 0 || cfg.batch > MAX_BATCH {
        return Err(E::invalid(
            "--batch",
            format!("{} is out of range: 1..={MAX_BATCH}", cfg.batch),
        ));
    }
    let is_tls = cfg.transport == Transport::Tls;
    for (flag, given) in [
        ("--tls-insecure", cfg.tls_insecure),
        ("--tls-ca", cfg.tls_ca.is_some()),
        ("--tls-server-name", cfg.tls_server_name.is_some()),
    ] {
        if given && !is_tls {
            return Err(E::invalid(flag, "only applies to --transport tls"));
        }
    }
    if is_tls && cfg.tls_insecure == cfg.tls_ca.is_some() {
        return Err(E::invalid(
            "--tls-ca",
            if cfg.tls_insecure {
                "conflicts with --tls-insecure: give one of them"
            } else {
                "--transport tls needs --tls-ca FILE (to verify the receiver) or --tls-insecure"
            },
        ));
    }
    let replay = cfg.format == Format::Replay;
    if cfg.sdata.is_some() && cfg.format != Format::Rfc5424 {
        return Err(E::invalid("--sdata", "only applies to --format rfc5424"));
    }
    if let Some(sd) = &cfg.sdata {
        let shaped = sd == "-" || (sd.starts_with('[') && sd.ends_with(']'));
        if !shaped || sd.contains(['\n', '\r']) {
            return Err(E::invalid(
                "--sdata",
                format!(
                    "{sd:?} is not RFC 5424 structured data: \"-\" or [id param=\"value\"]…, on one line"
                ),
            ));
        }
    }
    if cfg.file.is_some() && !replay {
        return Err(E::invalid("--file", "only applies to --format replay"));
    }
    if replay && cfg.file.is_none() {
        return Err(E::invalid("--file", "--format replay needs --file PATH"));
    }
    if replay && cfg.size.is_some() {
        return Err(E::invalid(
            "--size",
            "does not apply to --format replay (lines are sent as they are)",
        ));
    }
    let framing = Framing::of(cfg.transport);
    let max_size = match cfg.transport {
        Transport::Udp => MAX_UDP_SIZE,
        _ => MAX_STREAM_SIZE,
    };
    let run_id = cfg.run_id.unwrap_or_else(unix_now);
    let shape = if replay {
        None
    } else {
        let size = cfg.size.unwrap_or(DEFAULT_SIZE);
        if size > max_size {
            return Err(E::invalid(
                "--size",
                format!(
                    "{size} bytes is more than {max_size}, the largest {} message",
                    cfg.transport.label()
                ),
            ));
        }
        let shape = Shape {
            format: cfg.format,
            sdata: cfg.sdata.clone(),
            run_id,
            size,
            framing,
        };
        // The widest thread id has as many digits as any other (4), so one check covers all.
        let min = message::min_size(&shape, 0);
        if size < min {
            return Err(E::invalid(
                "--size",
                format!(
                    "{size} bytes cannot hold the {} header of this run, which needs at least {min} (including the LF)",
                    cfg.format.name()
                ),
            ));
        }
        Some(shape)
    };

    let (dest, host) = resolve(&cfg.target)?;
    if cfg.sources > 1 && !(dest.is_ipv4() && dest.ip().is_loopback()) {
        return Err(E::invalid(
            "--sources",
            format!(
                "{} sources need an IPv4 loopback target (they send from 127.0.0.1..127.0.0.{}), but {dest} is not one",
                cfg.sources, cfg.sources
            ),
        ));
    }
    let replay = match (&cfg.file, replay) {
        (Some(path), true) => Some(ReplayData::load(path, framing, max_size)?),
        _ => None,
    };
    let tls = if is_tls {
        let trust = match &cfg.tls_ca {
            Some(path) => tls::Trust::Ca(path),
            None => tls::Trust::Insecure,
        };
        Some(TlsClient {
            config: tls::client_config(trust)?,
            name: tls::server_name(cfg.tls_server_name.as_deref(), &host)?,
        })
    } else {
        None
    };
    let one = match &shape {
        Some(s) => s.size + 8,
        None => 1,
    };
    let batch = cfg.batch.min((MAX_BATCH_BYTES / one).max(1));
    Ok(Plan {
        dest,
        duration,
        count: cfg.count,
        run_id,
        total,
        shape,
        replay,
        tls,
        batch,
    })
}

/// Run the load as configured and return what was sent. Blocks until every connection is
/// done; spawns one thread per connection.
pub fn run(cfg: &LoggenConfig) -> Result<LoggenReport, LoggenError> {
    run_with_stop(cfg, &AtomicBool::new(false))
}

/// [`run`], but every connection also stops soon after `stop` becomes true (e.g. set from a
/// SIGINT handler); the report covers what was sent until then.
pub fn run_with_stop(cfg: &LoggenConfig, stop: &AtomicBool) -> Result<LoggenReport, LoggenError> {
    let plan = validate(cfg)?;
    let tz = jiff::tz::TimeZone::system();
    let now = i64::try_from(unix_now()).unwrap_or(i64::MAX);
    let mut jobs = Vec::with_capacity(plan.total);
    for thread in 0..plan.total {
        let source = plan.source(cfg.sources, cfg.connections, thread);
        let link = conn::connect(cfg.transport, plan.dest, source, plan.tls.as_ref())?;
        let messages = match (&plan.shape, &plan.replay) {
            (_, Some(data)) => Messages::Replay(ReplayCursor::new(data)),
            (Some(shape), None) => Messages::Generated(Generated::new(
                shape,
                thread as u32,
                plan.batch,
                now,
                tz.clone(),
            )?),
            (None, None) => {
                return Err(LoggenError::invalid(
                    "--format",
                    "no message source (internal error)",
                ));
            }
        };
        jobs.push((thread as u32, link, messages));
    }
    let progress: Vec<AtomicU64> = (0..plan.total).map(|_| AtomicU64::new(0)).collect();
    let abort = AtomicBool::new(false);
    let gate = RwLock::new(());

    std::thread::scope(|scope| {
        let guard = gate.write();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let mut handles = Vec::with_capacity(jobs.len());
        for ((thread, link, messages), counter) in jobs.into_iter().zip(&progress) {
            let job = Job {
                thread,
                link,
                messages,
                rate: cfg.rate,
                count: plan.count,
                duration: plan.duration,
                batch: plan.batch,
                progress: counter,
                stop,
                abort: &abort,
            };
            let done = done_tx.clone();
            let gate = &gate;
            let spawned = std::thread::Builder::new()
                .name(format!("loggen-{thread:04}"))
                .spawn_scoped(scope, move || {
                    // Wait for every connection to be ready, so all start together.
                    drop(gate.read());
                    let out = conn::drive(job);
                    let _ = done.send(());
                    out
                });
            match spawned {
                Ok(h) => handles.push((thread, h)),
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    drop(guard);
                    return Err(LoggenError::Spawn {
                        thread,
                        reason: conn::describe(&e),
                    });
                }
            }
        }
        drop(done_tx);
        let start = Instant::now();
        drop(guard);
        print_progress(&done_rx, &progress, start, cfg.quiet);

        let mut per_connection = Vec::with_capacity(handles.len());
        let mut last_end = start;
        for (thread, h) in handles {
            let (report, ended) = h
                .join()
                .map_err(|_| LoggenError::SenderPanicked { thread })?;
            last_end = last_end.max(ended);
            per_connection.push(report);
        }
        let elapsed = last_end.saturating_duration_since(start);
        let sent = per_connection.iter().map(|c| c.sent).sum::<u64>();
        let secs = elapsed.as_secs_f64();
        Ok(LoggenReport {
            run_id: plan.run_id,
            target: plan.dest,
            transport: cfg.transport,
            sent,
            bytes: per_connection.iter().map(|c| c.bytes).sum(),
            elapsed,
            rate: if secs > 0.0 { sent as f64 / secs } else { 0.0 },
            lagged: per_connection.iter().map(|c| c.lagged).sum(),
            errors: per_connection.iter().map(|c| c.errors).sum(),
            per_connection,
        })
    })
}

/// Print `count=N, rate=R msg/s` every second until every sender has reported done.
fn print_progress(done: &mpsc::Receiver<()>, progress: &[AtomicU64], start: Instant, quiet: bool) {
    let mut running = progress.len();
    let mut next = start + Duration::from_secs(1);
    let (mut last_count, mut last_at) = (0u64, start);
    while running > 0 {
        match done.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Ok(()) => running -= 1,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                let count: u64 = progress.iter().map(|p| p.load(Ordering::Relaxed)).sum();
                let secs = now.saturating_duration_since(last_at).as_secs_f64();
                if !quiet && secs > 0.0 {
                    let rate = count.saturating_sub(last_count) as f64 / secs;
                    eprintln!("count={count}, rate={rate:.0} msg/s");
                }
                (last_count, last_at) = (count, now);
                next += Duration::from_secs(1);
            }
            // Every sender is gone (one may have panicked; the join reports it).
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
}

/// [`run`], then print the report as text on stderr and, with `--json`, as JSON on stdout.
pub fn run_and_print(cfg: &LoggenConfig) -> Result<LoggenReport, LoggenError> {
    let report = run(cfg)?;
    eprintln!("{report}");
    if cfg.json {
        println!("{}", report.to_json()?);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> LoggenConfig {
        LoggenConfig::new("127.0.0.1:514")
    }

    fn err(c: &LoggenConfig) -> String {
        validate(c).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_loggens() {
        let p = validate(&cfg()).unwrap();
        assert_eq!(p.duration, Some(DEFAULT_DURATION));
        assert_eq!(p.count, None);
        assert_eq!(p.shape.as_ref().unwrap().size, DEFAULT_SIZE);
        assert_eq!(p.total, 1);
        let mut c = cfg();
        c.count = Some(5);
        assert_eq!(validate(&c).unwrap().duration, None);
    }

    #[test]
    fn bad_settings_name_their_flag() {
        type Edit = Box<dyn Fn(&mut LoggenConfig)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|c| c.count = Some(0)), "--count: 0 messages"),
            (
                Box::new(|c| c.size = Some(100)),
                "--size: 100 bytes cannot hold the rfc3164 header",
            ),
            (
                Box::new(|c| c.size = Some(70_000)),
                "--size: 70000 bytes is more than 65507",
            ),
            (Box::new(|c| c.duration = Some(0.0)), "--duration"),
            (Box::new(|c| c.duration = Some(f64::NAN)), "--duration"),
            (Box::new(|c| c.connections = 0), "--connections"),
            (Box::new(|c| c.sources = 0), "--sources"),
            (
                Box::new(|c| {
                    c.sources = 100;
                    c.connections = 101
                }),
                "--connections",
            ),
            (Box::new(|c| c.batch = 0), "--batch"),
            (
                Box::new(|c| c.sdata = Some("[a b=\"c\"]".into())),
                "--sdata: only applies to --format rfc5424",
            ),
            (
                Box::new(|c| {
                    c.format = Format::Rfc5424;
                    c.sdata = Some("x".into())
                }),
                "--sdata",
            ),
            (
                Box::new(|c| c.format = Format::Replay),
                "--file: --format replay needs --file PATH",
            ),
            (
                Box::new(|c| c.file = Some("x".into())),
                "--file: only applies to --format replay",
            ),
            (
                Box::new(|c| c.tls_insecure = true),
                "--tls-insecure: only applies to --transport tls",
            ),
            (
                Box::new(|c| c.transport = Transport::Tls),
                "--tls-ca: --transport tls needs --tls-ca FILE",
            ),
            (
                Box::new(|c| {
                    c.sources = 2;
                    c.target = "10.1.2.3:514".into()
                }),
                "--sources: 2 sources need an IPv4 loopback target",
            ),
            (
                Box::new(|c| {
                    c.sources = 2;
                    c.target = "[::1]:514".into()
                }),
                "--sources",
            ),
            (
                Box::new(|c| c.target = "127.0.0.1".into()),
                "cannot resolve target \"127.0.0.1\": expected HOST:PORT",
            ),
            (
                Box::new(|c| c.target = "localhost:http".into()),
                "not a port number",
            ),
        ];
        for (edit, want) in cases {
            let mut c = cfg();
            edit(&mut c);
            let got = err(&c);
            assert!(
                got.starts_with(want) || got.contains(want),
                "{c:?}\n got {got}\nwant {want}"
            );
        }
    }

    #[test]
    fn tls_ca_file_problems_name_the_flag() {
        let mut c = cfg();
        c.transport = Transport::Tls;
        c.tls_ca = Some("/nonexistent/ca.pem".into());
        assert!(
            err(&c).starts_with("--tls-ca: /nonexistent/ca.pem"),
            "{}",
            err(&c)
        );
        let p = std::env::temp_dir().join(format!("loggen-ca-{}.pem", std::process::id()));
        std::fs::write(&p, "not a certificate\n").unwrap();
        c.tls_ca = Some(p.clone());
        let e = err(&c);
        std::fs::remove_file(&p).unwrap();
        assert!(e.contains("no PEM certificate"), "{e}");
    }

    #[test]
    fn sources_map_connections_to_loopback_addresses() {
        let mut c = cfg();
        c.sources = 3;
        c.connections = 2;
        let p = validate(&c).unwrap();
        assert_eq!(p.total, 6);
        let ips: Vec<_> = (0..6)
            .map(|t| p.source(3, 2, t).unwrap().to_string())
            .collect();
        assert_eq!(
            ips,
            [
                "127.0.0.1",
                "127.0.0.1",
                "127.0.0.2",
                "127.0.0.2",
                "127.0.0.3",
                "127.0.0.3"
            ]
        );
        assert_eq!(validate(&cfg()).unwrap().source(1, 1, 0), None);
    }

    #[test]
    fn large_sizes_shrink_the_batch() {
        let mut c = cfg();
        c.size = Some(60_000);
        assert_eq!(validate(&c).unwrap().batch, MAX_BATCH_BYTES / 60_008);
        assert_eq!(validate(&cfg()).unwrap().batch, DEFAULT_BATCH);
    }

    #[test]
    fn report_text_and_json() {
        let r = LoggenReport {
            run_id: 7,
            target: "127.0.0.1:514".parse().unwrap(),
            transport: Transport::TcpOctet,
            sent: 10,
            bytes: 2000,
            elapsed: Duration::from_millis(500),
            rate: 20.0,
            lagged: 0,
            errors: 1,
            per_connection: vec![ConnectionReport {
                thread: 0,
                local_addr: None,
                sent: 10,
                bytes: 2000,
                lagged: 0,
                errors: 1,
                first_error: Some("connection reset by peer".into()),
            }],
        };
        let text = r.to_string();
        assert!(
            text.starts_with(
                "average rate = 20.00 msg/s, count=10, time=0.500 s, (average) msg size=200"
            ),
            "{text}"
        );
        assert!(
            text.contains("thread 0000: sent=10")
                && text.contains("first error: connection reset by peer"),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
        assert_eq!(v["transport"], "tcp-octet");
        assert_eq!(v["elapsed_secs"], 0.5);
        assert_eq!(v["per_connection"][0]["sent"], 10);
    }
}
