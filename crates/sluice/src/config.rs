//! Typed configuration: built-in defaults → `--config sluice.toml` → `--env-file` → process
//! environment, each layer overriding the one before.
//!
//! Defaults live in exactly one place, the `Default` impls below; `config/sluice.toml`
//! documents every key. TOML tables reject unknown keys, so a typo is a startup error instead
//! of a silently ignored setting. SC4S variable names are mapped onto the same fields by
//! [`Config::apply_env`], with SC4S's defaults and semantics (see the team's `sc4s.md`); a bad
//! value is an error naming the variable, the value and where it came from.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

use crate::env::{Env, Value};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{var}={value:?} ({origin}): {reason}")]
    BadEnv {
        var: String,
        value: String,
        origin: String,
        reason: String,
    },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub listen: ListenConfig,
    pub udp: UdpConfig,
    pub tcp: TcpConfig,
    pub window: WindowConfig,
    pub parse: ParseConfig,
    pub hec: HecConfig,
    pub output: OutputConfig,
    pub fields: FieldsConfig,
    pub admin: AdminConfig,
    pub shutdown: ShutdownConfig,
}

/// Where to listen.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ListenConfig {
    /// Address the syslog listeners bind to. `SC4S_IPV6_ENABLE=yes` switches the default to
    /// `::` (dual stack).
    pub address: IpAddr,
    /// UDP ports (`SC4S_LISTEN_DEFAULT_UDP_PORT`, comma list). Empty disables UDP.
    pub udp_ports: Vec<u16>,
    /// TCP ports, LF or octet-counted framing detected per message
    /// (`SC4S_LISTEN_DEFAULT_TCP_PORT`). Empty disables TCP.
    pub tcp_ports: Vec<u16>,
    /// RFC 5426 (syslog over UDP) ports (`SC4S_LISTEN_DEFAULT_RFC5426_PORT`); served by the
    /// same UDP engine.
    pub rfc5426_ports: Vec<u16>,
    /// RFC 6587 (octet-counted TCP) ports (`SC4S_LISTEN_DEFAULT_RFC6587_PORT`); the TCP
    /// listener detects the framing per message, so these behave like `tcp_ports`.
    pub rfc6587_ports: Vec<u16>,
    /// Dedicated per-vendor listeners (`SC4S_LISTEN_<ID>_UDP_PORT` and friends), keyed by the
    /// SC4S id (`CISCO_ASA`). Their events carry the id's vendor and product.
    pub vendor: BTreeMap<String, VendorPorts>,
    /// Largest message accepted; longer ones are truncated and counted. SC4S's
    /// `log_msg_size` is 64 KiB.
    pub max_message_size: usize,
}

/// Ports of one vendor listener id.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct VendorPorts {
    pub udp: Vec<u16>,
    pub tcp: Vec<u16>,
}

/// Transport of one listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ListenerKind {
    Udp,
    Tcp,
}

/// One port to listen on, with the SC4S listener id its events carry and the setting that
/// asked for it (for error messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerSpec {
    pub id: String,
    pub kind: ListenerKind,
    pub port: u16,
    pub setting: String,
}

impl Default for ListenConfig {
    fn default() -> Self {
        ListenConfig {
            address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            udp_ports: vec![514],
            tcp_ports: vec![514],
            rfc5426_ports: vec![601],
            rfc6587_ports: vec![601],
            vendor: BTreeMap::new(),
            max_message_size: 65_536,
        }
    }
}

/// How UDP datagrams are spread over the sockets of one port.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Balance {
    /// Per-packet random choice by an eBPF program (needs CAP_BPF; falls back to cbpf).
    Ebpf,
    /// Per-packet random choice by classic BPF; works without privileges.
    Cbpf,
    /// The kernel's 4-tuple hash: one sender always lands on one socket.
    Kernel,
}

impl FromStr for Balance {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "ebpf" => Ok(Balance::Ebpf),
            "cbpf" => Ok(Balance::Cbpf),
            "kernel" => Ok(Balance::Kernel),
            _ => Err("expected one of ebpf, cbpf, kernel".into()),
        }
    }
}

/// The UDP receive engine.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct UdpConfig {
    /// Sockets (and receive threads) per port (`SC4S_SOURCE_LISTEN_UDP_SOCKETS`).
    pub sockets: usize,
    /// Requested receive buffer per socket, in bytes (`SC4S_SOURCE_UDP_SO_RCVBUFF`). `0`
    /// leaves the kernel default. The default, 16 MiB, holds ~20,000 datagrams of 800 bytes:
    /// about 80 ms at 250k/s, enough to absorb a batch hand-off or a scheduling hiccup, while
    /// 16 MiB × sockets stays modest on a small box. Above `net.core.rmem_max` it is forced
    /// with `SO_RCVBUFFORCE` when privileged; otherwise the clamp is reported with the sysctl
    /// to raise it.
    pub rcvbuf: ByteSize,
    /// Input window: events received on UDP and not yet delivered
    /// (`SC4S_SOURCE_UDP_IW_SIZE`). When it is full the receive threads stop reading and the
    /// kernel buffer absorbs the pause.
    pub window: u64,
    /// Datagrams per `recvmmsg` call (`SC4S_SOURCE_UDP_FETCH_LIMIT`).
    pub fetch_limit: usize,
    /// Balancing across the sockets of a port (`SC4S_ENABLE_EBPF=yes` selects `ebpf`).
    pub balance: Balance,
}

impl Default for UdpConfig {
    fn default() -> Self {
        UdpConfig {
            sockets: 4,
            rcvbuf: ByteSize(16 * 1024 * 1024),
            window: 250_000,
            fetch_limit: 1000,
            balance: Balance::Kernel,
        }
    }
}

/// The TCP listener.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Input window shared by all TCP connections (`SC4S_SOURCE_TCP_IW_SIZE`). When it is
    /// full, connections stop reading and TCP pushes back on the senders.
    pub window: u64,
    /// Concurrent connections per port (`SC4S_SOURCE_TCP_MAX_CONNECTIONS`); further
    /// connections wait in the listen backlog.
    pub max_connections: usize,
    /// A connection that stops in the middle of a frame for this long has its partial frame
    /// delivered (counted) and is closed.
    #[serde(with = "secs")]
    pub frame_timeout: Duration,
    /// Close connections idle this long; 0 keeps them open forever (syslog senders often
    /// lose the message that discovers a closed connection, so closing healthy idle
    /// connections is opt-in).
    #[serde(with = "secs")]
    pub idle_timeout: Duration,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            window: 20_000_000,
            max_connections: 2000,
            frame_timeout: Duration::from_secs(30),
            idle_timeout: Duration::ZERO,
        }
    }
}

/// Limits shared by all listeners.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WindowConfig {
    /// Encoded bytes held in memory, received and not yet delivered, across all listeners
    /// (`SLUICE_MAX_IN_FLIGHT_BYTES`). When it is spent, receivers stop reading exactly as
    /// with a full input window. It keeps SC4S's large windows (20,000,000 TCP events) from
    /// turning a Splunk outage into an out-of-memory kill.
    pub max_bytes: ByteSize,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            max_bytes: ByteSize(1 << 30),
        }
    }
}

/// Parsing.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ParseConfig {
    /// Zone for stamps that carry none (`SC4S_DEFAULT_TIMEZONE`): GMT, UTC, an IANA name or
    /// a fixed offset such as `+05:30`.
    pub default_timezone: String,
    /// Include the raw message in fallback events (`SC4S_SOURCE_STORE_RAWMSG`).
    pub store_raw_message: bool,
    /// SC4S `splunk_metadata.csv` overrides (`key,field,value` rows).
    pub metadata_csv: Option<PathBuf>,
    /// Force `source` to `sc4s` (`SC4S_SET_SOURCE_AS_SC4S`).
    pub set_source_as_sc4s: bool,
}

impl Default for ParseConfig {
    fn default() -> Self {
        ParseConfig {
            default_timezone: "GMT".into(),
            store_raw_message: false,
            metadata_csv: None,
            set_source_as_sc4s: false,
        }
    }
}

/// Splunk HEC output. With no URL, events go to the JSON-lines file instead.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct HecConfig {
    /// Base URLs (`SC4S_DEST_SPLUNK_HEC_DEFAULT_URL`, comma/space list). Any path is
    /// replaced by `/services/collector/event`, as SC4S does.
    pub urls: Vec<String>,
    /// `SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN`.
    pub token: String,
    /// Verify the indexers' TLS certificates (`…_TLS_VERIFY`).
    pub tls_verify: bool,
    /// Parallel keep-alive connections (`…_WORKERS`).
    pub workers: usize,
    /// Events per request (`…_BATCH_LINES`).
    pub batch_lines: usize,
    /// Bytes per request before compression (`…_BATCH_BYTES`, e.g. `4096kb`).
    pub batch_bytes: ByteSize,
    /// Flush a partial batch after this long (`…_BATCH_TIMEOUT`, milliseconds).
    #[serde(with = "millis")]
    pub batch_timeout: Duration,
    /// Request timeout (`…_TIMEOUT`, seconds).
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// gzip request bodies (`…_HTTP_COMPRESSION`).
    pub compression: bool,
    /// Send `Connection: close` instead of keeping connections alive (`…_CONNECTION_CLOSE`).
    pub connection_close: bool,
    /// Extra request headers, `Name: value` (`…_HEADERS`, comma separated).
    pub headers: Vec<String>,
}

impl Default for HecConfig {
    fn default() -> Self {
        // The client's own defaults (SC4S's) are the one source for what both configs share.
        let client = sluice_hec::HecConfig::default();
        let batch = sluice_hec::BatchPolicy::default();
        HecConfig {
            urls: Vec::new(),
            token: String::new(),
            tls_verify: client.tls_verify,
            workers: client.workers,
            batch_lines: batch.max_events,
            batch_bytes: ByteSize(batch.max_bytes as u64),
            batch_timeout: batch.timeout,
            timeout: client.timeout,
            compression: client.compression,
            connection_close: client.connection_close,
            headers: Vec::new(),
        }
    }
}

/// The embedded default output.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct OutputConfig {
    /// JSON-lines file written when no HEC URL is configured: one HEC event per line,
    /// exactly the JSON Splunk would receive.
    pub file: PathBuf,
}

impl Default for OutputConfig {
    fn default() -> Self {
        OutputConfig {
            file: PathBuf::from("./sluice-events.jsonl"),
        }
    }
}

/// Indexed fields added to every event.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FieldsConfig {
    /// Which `sc4s_*` indexed fields to send (`SC4S_DEST_SPLUNK_INDEXED_FIELDS`); `none`
    /// sends no `fields` object.
    pub indexed_fields: String,
    /// `sc4s_loghost` value (`SC4S_CONTAINER_HOST`); unset sends none.
    pub container_host: Option<String>,
    /// `sc4s_container` value; defaults to this machine's hostname.
    pub loghost: Option<String>,
}

impl Default for FieldsConfig {
    fn default() -> Self {
        FieldsConfig {
            indexed_fields:
                "r_unixtime,facility,container,loghost,destport,fromhostip,proto,severity".into(),
            container_host: None,
            loghost: None,
        }
    }
}

/// The status HTTP server: `/health` and `/metrics`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AdminConfig {
    pub address: IpAddr,
    /// `SC4S_LISTEN_STATUS_PORT`; 0 disables the server.
    pub port: u16,
}

impl Default for AdminConfig {
    fn default() -> Self {
        AdminConfig {
            address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 8080,
        }
    }
}

/// SIGTERM/SIGINT handling.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ShutdownConfig {
    /// How long to keep delivering what is in the window after the receivers stopped.
    #[serde(with = "secs")]
    pub drain_timeout: Duration,
}

impl Default for ShutdownConfig {
    fn default() -> Self {
        ShutdownConfig {
            drain_timeout: Duration::from_secs(30),
        }
    }
}

/// A byte count that accepts syslog-ng style suffixes: `4096kb`, `16MiB`, `512M`, `1g`.
/// `k`/`m`/`g` (optionally followed by `b`) are powers of 1000 as in syslog-ng; `ki`/`mi`/`gi`
/// (optionally `b`) are powers of 1024.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, suffix) = t.split_at(split);
        if num.is_empty() {
            return Err("expected a byte count such as 4096kb or 16MiB".into());
        }
        let n: u64 = num.parse().map_err(|_| "number too large".to_string())?;
        let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" => 1000,
            "m" | "mb" => 1000 * 1000,
            "g" | "gb" => 1000 * 1000 * 1000,
            "ki" | "kib" => 1 << 10,
            "mi" | "mib" => 1 << 20,
            "gi" | "gib" => 1 << 30,
            other => return Err(format!("unknown size suffix {other:?}")),
        };
        n.checked_mul(mult)
            .map(ByteSize)
            .ok_or_else(|| "size too large".into())
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(ByteSize(n)),
            Raw::Str(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

mod secs {
    use serde::Deserialize;
    use std::time::Duration;
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(serde::de::Error::custom(
                "expected a non-negative number of seconds",
            ));
        }
        Ok(Duration::from_secs_f64(v))
    }
}

mod millis {
    use serde::Deserialize;
    use std::time::Duration;
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// SC4S's boolean words. SC4S treats anything unrecognised as false; sluice rejects it,
/// because a typo silently turning a feature off is the kind of surprise operators hate.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "t" | "true" | "y" | "yes" | "on" => Ok(true),
        "0" | "f" | "false" | "n" | "no" | "off" | "" => Ok(false),
        _ => Err("expected yes/no (or true/false, 1/0)".into()),
    }
}

/// SC4S port lists: comma (or space) separated; `disabled` or empty means none.
pub fn parse_ports(s: &str) -> Result<Vec<u16>, String> {
    let t = s.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("disabled") {
        return Ok(Vec::new());
    }
    let mut ports = Vec::new();
    for part in t.split([',', ' ']).filter(|p| !p.is_empty()) {
        let port: u16 = part
            .trim()
            .parse()
            .map_err(|_| format!("{part:?} is not a port number (1-65535)"))?;
        if port == 0 {
            return Err("port 0 is not allowed here".into());
        }
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    Ok(ports)
}

/// SC4S variables sluice reads. Anything else starting with `SC4S_` is reported once at
/// startup as not supported, so an operator migrating a large env_file sees what is ignored.
pub const SUPPORTED_SC4S_VARS: &[&str] = &[
    "SC4S_LISTEN_DEFAULT_UDP_PORT",
    "SC4S_LISTEN_DEFAULT_TCP_PORT",
    "SC4S_LISTEN_DEFAULT_RFC5426_PORT",
    "SC4S_LISTEN_DEFAULT_RFC6587_PORT",
    "SC4S_SOURCE_TLS_ENABLE",
    "SC4S_SOURCE_LISTEN_UDP_SOCKETS",
    "SC4S_SOURCE_UDP_SO_RCVBUFF",
    "SC4S_SOURCE_UDP_IW_USE",
    "SC4S_SOURCE_UDP_IW_SIZE",
    "SC4S_SOURCE_UDP_FETCH_LIMIT",
    "SC4S_SOURCE_TCP_IW_SIZE",
    "SC4S_SOURCE_TCP_FETCH_LIMIT",
    "SC4S_SOURCE_TCP_MAX_CONNECTIONS",
    "SC4S_ENABLE_EBPF",
    "SC4S_EBPF_NO_SOCKETS",
    "SC4S_IPV6_ENABLE",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_BYTES",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_TIMEOUT",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_HTTP_COMPRESSION",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_CONNECTION_CLOSE",
    "SC4S_DEST_SPLUNK_HEC_DEFAULT_HEADERS",
    "SC4S_DEFAULT_TIMEZONE",
    "SC4S_LISTEN_STATUS_PORT",
    "SC4S_CONTAINER_HOST",
    "SC4S_DEST_SPLUNK_INDEXED_FIELDS",
    "SC4S_SET_SOURCE_AS_SC4S",
    "SC4S_SOURCE_STORE_RAWMSG",
];

/// Outcome of applying the environment: what the operator should be told.
#[derive(Debug, Default, PartialEq)]
pub struct EnvReport {
    /// `SC4S_*` variables that are set but that sluice does not implement.
    pub unsupported: Vec<String>,
    /// Accepted but with a caveat worth one log line.
    pub notes: Vec<String>,
}

impl Config {
    /// Reads a TOML file over the defaults.
    pub fn from_toml_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::from_toml_str(&text).map_err(|message| ConfigError::Toml {
            path: path.to_owned(),
            message,
        })
    }

    pub fn from_toml_str(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Overlays SC4S (and `SLUICE_`) variables.
    pub fn apply_env(&mut self, env: &Env) -> Result<EnvReport, ConfigError> {
        let mut report = EnvReport::default();
        let ipv6 = get(env, "SC4S_IPV6_ENABLE", parse_bool)?;
        if ipv6 == Some(true) && self.listen.address == IpAddr::V4(Ipv4Addr::UNSPECIFIED) {
            self.listen.address = IpAddr::V6(Ipv6Addr::UNSPECIFIED);
        }
        set(
            env,
            "SC4S_LISTEN_DEFAULT_UDP_PORT",
            parse_ports,
            &mut self.listen.udp_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_TCP_PORT",
            parse_ports,
            &mut self.listen.tcp_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_RFC5426_PORT",
            parse_ports,
            &mut self.listen.rfc5426_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_RFC6587_PORT",
            parse_ports,
            &mut self.listen.rfc6587_ports,
        )?;
        for (name, _) in env.with_prefix("SC4S_LISTEN_") {
            let Some((id, proto)) = vendor_port_var(name) else {
                continue;
            };
            let ports = get(env, name, parse_ports)?.unwrap_or_default();
            let entry = self.listen.vendor.entry(id.to_owned()).or_default();
            match proto {
                "UDP" | "RFC5426" => entry.udp.extend(ports),
                _ => entry.tcp.extend(ports),
            }
        }
        if let Some(true) = get(env, "SC4S_SOURCE_TLS_ENABLE", parse_bool)? {
            report.notes.push(
                "SC4S_SOURCE_TLS_ENABLE=yes: sluice does not implement TLS/RFC 5425 listeners \
                 yet; no TLS port is opened"
                    .into(),
            );
        }
        set(
            env,
            "SC4S_SOURCE_LISTEN_UDP_SOCKETS",
            positive,
            &mut self.udp.sockets,
        )?;
        if let Some(v) = get(env, "SC4S_SOURCE_UDP_SO_RCVBUFF", parse_rcvbuf)? {
            self.udp.rcvbuf = v;
        }
        if let Some(use_iw) = get(env, "SC4S_SOURCE_UDP_IW_USE", parse_bool)?
            && !use_iw
        {
            report.notes.push(
                "SC4S_SOURCE_UDP_IW_USE=no: sluice always applies the UDP input window \
                 (SC4S_SOURCE_UDP_IW_SIZE); it bounds memory, and the kernel buffer absorbs \
                 the pause when it is full"
                    .into(),
            );
        }
        set(
            env,
            "SC4S_SOURCE_UDP_IW_SIZE",
            positive_u64,
            &mut self.udp.window,
        )?;
        set(
            env,
            "SC4S_SOURCE_UDP_FETCH_LIMIT",
            positive,
            &mut self.udp.fetch_limit,
        )?;
        set(
            env,
            "SC4S_SOURCE_TCP_IW_SIZE",
            positive_u64,
            &mut self.tcp.window,
        )?;
        if get(env, "SC4S_SOURCE_TCP_FETCH_LIMIT", positive)?.is_some() {
            report.notes.push(
                "SC4S_SOURCE_TCP_FETCH_LIMIT is accepted but has no effect: sluice reads TCP \
                 in buffer-sized chunks and bounds in-flight messages with SC4S_SOURCE_TCP_IW_SIZE"
                    .into(),
            );
        }
        set(
            env,
            "SC4S_SOURCE_TCP_MAX_CONNECTIONS",
            positive,
            &mut self.tcp.max_connections,
        )?;
        if let Some(true) = get(env, "SC4S_ENABLE_EBPF", parse_bool)? {
            self.udp.balance = Balance::Ebpf;
            if let Some(n) = get(env, "SC4S_EBPF_NO_SOCKETS", positive)? {
                // SC4S has two settings that must agree (sockets and eBPF group size); sluice
                // registers every socket of the group with the program, so one number rules.
                if env.get("SC4S_SOURCE_LISTEN_UDP_SOCKETS").is_none() {
                    self.udp.sockets = n;
                } else if n != self.udp.sockets {
                    report.notes.push(format!(
                        "SC4S_EBPF_NO_SOCKETS={n} differs from SC4S_SOURCE_LISTEN_UDP_SOCKETS={}; \
                         sluice balances over the {} sockets it opened",
                        self.udp.sockets, self.udp.sockets
                    ));
                }
            }
        }
        if let Some(b) = get(env, "SLUICE_UDP_BALANCE", |s| s.parse::<Balance>())? {
            self.udp.balance = b;
        }

        if let Some(urls) = get(env, "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", non_empty)? {
            self.hec.urls = urls
                .split([',', ' '])
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().to_owned())
                .collect();
        }
        set(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN",
            any,
            &mut self.hec.token,
        )?;
        set(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY",
            parse_bool,
            &mut self.hec.tls_verify,
        )?;
        set(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS",
            positive,
            &mut self.hec.workers,
        )?;
        set(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES",
            positive,
            &mut self.hec.batch_lines,
        )?;
        set(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_BYTES",
            positive_size,
            &mut self.hec.batch_bytes,
        )?;
        if let Some(ms) = get(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT",
            positive_u64,
        )? {
            self.hec.batch_timeout = Duration::from_millis(ms);
        }
        if let Some(s) = get(env, "SC4S_DEST_SPLUNK_HEC_DEFAULT_TIMEOUT", positive_u64)? {
            self.hec.timeout = Duration::from_secs(s);
        }
        set(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_HTTP_COMPRESSION",
            parse_bool,
            &mut self.hec.compression,
        )?;
        set(
            env,
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_CONNECTION_CLOSE",
            parse_bool,
            &mut self.hec.connection_close,
        )?;
        if let Some(h) = get(env, "SC4S_DEST_SPLUNK_HEC_DEFAULT_HEADERS", parse_headers)? {
            self.hec.headers = h;
        }

        set(
            env,
            "SC4S_DEFAULT_TIMEZONE",
            non_empty,
            &mut self.parse.default_timezone,
        )?;
        set(
            env,
            "SC4S_SOURCE_STORE_RAWMSG",
            parse_bool,
            &mut self.parse.store_raw_message,
        )?;
        set(
            env,
            "SC4S_SET_SOURCE_AS_SC4S",
            parse_bool,
            &mut self.parse.set_source_as_sc4s,
        )?;
        set(
            env,
            "SC4S_LISTEN_STATUS_PORT",
            parse_port_or_zero,
            &mut self.admin.port,
        )?;
        if let Some(h) = get(env, "SC4S_CONTAINER_HOST", any)? {
            self.fields.container_host = (!h.is_empty()).then_some(h);
        }
        set(
            env,
            "SC4S_DEST_SPLUNK_INDEXED_FIELDS",
            any,
            &mut self.fields.indexed_fields,
        )?;

        if let Some(p) = get(env, "SLUICE_OUTPUT_FILE", non_empty)? {
            self.output.file = PathBuf::from(p);
        }
        set(
            env,
            "SLUICE_MAX_IN_FLIGHT_BYTES",
            positive_size,
            &mut self.window.max_bytes,
        )?;
        if let Some(s) = get(env, "SLUICE_DRAIN_TIMEOUT", positive_u64)? {
            self.shutdown.drain_timeout = Duration::from_secs(s);
        }
        if let Some(a) = get(env, "SLUICE_LISTEN_ADDRESS", |s| {
            s.parse::<IpAddr>()
                .map_err(|_| "not an IP address".to_string())
        })? {
            self.listen.address = a;
        }

        for (name, _) in env.with_prefix("SC4S_") {
            if !SUPPORTED_SC4S_VARS.contains(&name) && vendor_port_var(name).is_none() {
                report.unsupported.push(name.to_owned());
            }
        }
        Ok(report)
    }

    /// Cross-field checks that no single setting can make.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        if self.udp.sockets == 0 {
            return bad("udp.sockets must be at least 1".into());
        }
        if self.udp.fetch_limit == 0 {
            return bad("udp.fetch_limit must be at least 1".into());
        }
        if self.udp.window == 0 || self.tcp.window == 0 {
            return bad("input windows (udp.window, tcp.window) must be at least 1".into());
        }
        if self.hec.workers == 0 || self.hec.batch_lines == 0 || self.hec.batch_bytes.0 == 0 {
            return bad(
                "hec.workers, hec.batch_lines and hec.batch_bytes must be at least 1".into(),
            );
        }
        if self.listen.max_message_size < 1024 {
            return bad("listen.max_message_size must be at least 1024 bytes".into());
        }
        if self.listeners()?.is_empty() {
            return bad("no listener: every UDP and TCP port list is empty".into());
        }
        Ok(())
    }

    /// Every port to open, in a stable order. Two settings asking for the same port and
    /// transport is an error naming both (SC4S's port validator only logs it, and then one of
    /// the two sources silently never receives). The default listener may name one port in
    /// two settings (RFC 5426 on the plain UDP port): one socket serves both.
    pub fn listeners(&self) -> Result<Vec<ListenerSpec>, ConfigError> {
        let l = &self.listen;
        let mut out: Vec<ListenerSpec> = Vec::new();
        let mut add = |id: &str, kind: ListenerKind, ports: &[u16], setting: String| {
            for &port in ports {
                if let Some(prev) = out.iter().find(|x| x.kind == kind && x.port == port) {
                    if prev.id == id {
                        continue;
                    }
                    return Err(ConfigError::Invalid(format!(
                        "{} port {port} is claimed by both {} and {setting}",
                        if kind == ListenerKind::Udp {
                            "UDP"
                        } else {
                            "TCP"
                        },
                        prev.setting
                    )));
                }
                out.push(ListenerSpec {
                    id: id.to_owned(),
                    kind,
                    port,
                    setting: setting.clone(),
                });
            }
            Ok(())
        };
        let (udp, tcp) = (ListenerKind::Udp, ListenerKind::Tcp);
        add(
            "DEFAULT",
            udp,
            &l.udp_ports,
            "SC4S_LISTEN_DEFAULT_UDP_PORT".into(),
        )?;
        add(
            "DEFAULT",
            udp,
            &l.rfc5426_ports,
            "SC4S_LISTEN_DEFAULT_RFC5426_PORT".into(),
        )?;
        add(
            "DEFAULT",
            tcp,
            &l.tcp_ports,
            "SC4S_LISTEN_DEFAULT_TCP_PORT".into(),
        )?;
        add(
            "DEFAULT",
            tcp,
            &l.rfc6587_ports,
            "SC4S_LISTEN_DEFAULT_RFC6587_PORT".into(),
        )?;
        for (id, ports) in &l.vendor {
            add(id, udp, &ports.udp, format!("SC4S_LISTEN_{id}_UDP_PORT"))?;
            add(id, tcp, &ports.tcp, format!("SC4S_LISTEN_{id}_TCP_PORT"))?;
        }
        Ok(out)
    }

    /// Settings that are valid but almost certainly not what the operator wants; logged at
    /// startup. A missing token is one: like SC4S, sluice still starts (Splunk answers 401,
    /// events are kept in the window and retried, `/health` reports unhealthy), so fixing the
    /// token loses nothing that was accepted.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.uses_hec() && self.hec.token.trim().is_empty() {
            w.push(
                "a HEC URL is configured but no token: Splunk will reject every request (401) \
                 and events will be held and retried; set SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN \
                 (or hec.token)"
                    .to_string(),
            );
        }
        if self.uses_hec() && !self.hec.tls_verify {
            w.push(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY=no: indexer certificates are not checked"
                    .to_string(),
            );
        }
        w
    }

    /// Whether events go to Splunk (otherwise to the JSON-lines file).
    pub fn uses_hec(&self) -> bool {
        !self.hec.urls.is_empty()
    }
}

/// `SC4S_LISTEN_<ID>_<PROTO>_PORT` for a vendor id (not DEFAULT): the id and the protocol
/// word. TLS/RFC 5425 ports are not matched: sluice has no TLS listener yet, so they are
/// reported as unsupported.
fn vendor_port_var(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("SC4S_LISTEN_")?.strip_suffix("_PORT")?;
    let (id, proto) = rest.rsplit_once('_')?;
    if id.is_empty() || id == "DEFAULT" {
        return None;
    }
    matches!(proto, "UDP" | "TCP" | "RFC5426" | "RFC6587").then_some((id, proto))
}

fn get<T>(
    env: &Env,
    var: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<Option<T>, ConfigError> {
    let Some(Value { value, origin }) = env.get(var) else {
        return Ok(None);
    };
    parse(value)
        .map(Some)
        .map_err(|reason| ConfigError::BadEnv {
            var: var.to_owned(),
            value: value.clone(),
            origin: origin.to_string(),
            reason,
        })
}

fn set<T>(
    env: &Env,
    var: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
    field: &mut T,
) -> Result<(), ConfigError> {
    if let Some(v) = get(env, var, parse)? {
        *field = v;
    }
    Ok(())
}

fn any(s: &str) -> Result<String, String> {
    Ok(s.to_owned())
}

fn non_empty(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(t.to_owned())
    }
}

fn positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a positive whole number".into()),
    }
}

fn positive_u64(s: &str) -> Result<u64, String> {
    positive(s).map(|n| n as u64)
}

fn positive_size(s: &str) -> Result<ByteSize, String> {
    match s.parse::<ByteSize>()? {
        ByteSize(0) => Err("must be at least 1 byte".into()),
        b => Ok(b),
    }
}

/// SC4S uses -1 for "do not set"; sluice maps any value ≤ 0 to "leave the kernel default".
fn parse_rcvbuf(s: &str) -> Result<ByteSize, String> {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix('-') {
        rest.parse::<u64>()
            .map(|_| ByteSize(0))
            .map_err(|_| "expected a byte count, or -1 for the kernel default".to_string())
    } else {
        t.parse()
    }
}

fn parse_port_or_zero(s: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .map_err(|_| "expected a port number 0-65535 (0 disables)".into())
}

fn parse_headers(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for h in s.split(',').map(str::trim).filter(|h| !h.is_empty()) {
        match h.split_once(':') {
            Some((name, _)) if !name.trim().is_empty() => out.push(h.to_owned()),
            _ => return Err(format!("header {h:?} is not `Name: value`")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        let mut e = Env::default();
        e.merge_process(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        e
    }

    #[test]
    fn defaults_match_sc4s() {
        let c = Config::default();
        assert_eq!(c.listen.udp_ports, [514]);
        assert_eq!(c.listen.tcp_ports, [514]);
        assert_eq!(c.udp.sockets, 4);
        assert_eq!(c.udp.window, 250_000);
        assert_eq!(c.udp.fetch_limit, 1000);
        assert_eq!(c.tcp.window, 20_000_000);
        assert_eq!(c.tcp.max_connections, 2000);
        assert_eq!(c.hec.workers, 10);
        assert_eq!(c.hec.batch_lines, 5000);
        assert_eq!(c.hec.batch_bytes, ByteSize(4_096_000));
        assert_eq!(c.hec.batch_timeout, Duration::from_millis(300));
        assert!(!c.hec.compression);
        assert!(c.hec.tls_verify);
        assert_eq!(c.parse.default_timezone, "GMT");
        assert_eq!(c.admin.port, 8080);
        assert_eq!(c.listen.max_message_size, 65_536);
        c.validate().unwrap();
    }

    #[test]
    fn the_documented_example_config_parses_and_is_the_defaults() {
        let text = include_str!("../../../config/sluice.toml");
        let c = Config::from_toml_str(text).unwrap();
        assert_eq!(
            c,
            Config::default(),
            "config/sluice.toml must document the defaults"
        );
    }

    #[test]
    fn toml_rejects_unknown_keys_and_names_them() {
        let err = Config::from_toml_str("[udp]\nsockts = 4\n").unwrap_err();
        assert!(err.contains("sockts"), "{err}");
        let err = Config::from_toml_str("[udpp]\n").unwrap_err();
        assert!(err.contains("udpp"), "{err}");
    }

    #[test]
    fn toml_values() {
        let c = Config::from_toml_str(
            "[udp]\nsockets = 8\nrcvbuf = \"64MiB\"\nbalance = \"cbpf\"\n\
             [hec]\nurls = [\"https://a:8088\"]\ntoken = \"t\"\nbatch_timeout = 50\ntimeout = 2.5\n",
        )
        .unwrap();
        assert_eq!(c.udp.sockets, 8);
        assert_eq!(c.udp.rcvbuf, ByteSize(64 << 20));
        assert_eq!(c.udp.balance, Balance::Cbpf);
        assert_eq!(c.hec.batch_timeout, Duration::from_millis(50));
        assert_eq!(c.hec.timeout, Duration::from_millis(2500));
        c.validate().unwrap();
    }

    #[test]
    fn sc4s_env_overrides() {
        let mut c = Config::default();
        let e = env(&[
            ("SC4S_LISTEN_DEFAULT_UDP_PORT", "5514,5515"),
            ("SC4S_LISTEN_DEFAULT_TCP_PORT", "disabled"),
            ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "8"),
            ("SC4S_SOURCE_UDP_SO_RCVBUFF", "536870912"),
            ("SC4S_SOURCE_UDP_IW_SIZE", "1000000"),
            ("SC4S_SOURCE_UDP_FETCH_LIMIT", "64"),
            ("SC4S_SOURCE_TCP_IW_SIZE", "500"),
            (
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
                "https://idx1:8088/services/collector, https://idx2:8088",
            ),
            (
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN",
                "00000000-0000-0000-0000-000000000000",
            ),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY", "no"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "4"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", "1000"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_BYTES", "1024kb"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", "100"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_HTTP_COMPRESSION", "yes"),
            ("SC4S_DEFAULT_TIMEZONE", "America/Chicago"),
            ("SC4S_LISTEN_STATUS_PORT", "9080"),
            ("SC4S_ENABLE_EBPF", "yes"),
            ("SC4S_ARCHIVE_GLOBAL", "yes"),
        ]);
        let report = c.apply_env(&e).unwrap();
        assert_eq!(c.listen.udp_ports, [5514, 5515]);
        assert!(c.listen.tcp_ports.is_empty());
        assert_eq!(c.udp.sockets, 8);
        assert_eq!(c.udp.rcvbuf, ByteSize(536_870_912));
        assert_eq!(c.udp.window, 1_000_000);
        assert_eq!(c.udp.fetch_limit, 64);
        assert_eq!(c.tcp.window, 500);
        assert_eq!(c.hec.urls.len(), 2);
        assert!(!c.hec.tls_verify);
        assert_eq!(c.hec.workers, 4);
        assert_eq!(c.hec.batch_lines, 1000);
        assert_eq!(c.hec.batch_bytes, ByteSize(1_024_000));
        assert_eq!(c.hec.batch_timeout, Duration::from_millis(100));
        assert!(c.hec.compression);
        assert_eq!(c.parse.default_timezone, "America/Chicago");
        assert_eq!(c.admin.port, 9080);
        assert_eq!(c.udp.balance, Balance::Ebpf);
        assert_eq!(report.unsupported, ["SC4S_ARCHIVE_GLOBAL"]);
        c.validate().unwrap();
    }

    #[test]
    fn bad_env_values_name_variable_value_and_origin() {
        let cases = [
            (
                "SC4S_LISTEN_DEFAULT_UDP_PORT",
                "51a4",
                "is not a port number",
            ),
            (
                "SC4S_LISTEN_DEFAULT_UDP_PORT",
                "70000",
                "is not a port number",
            ),
            ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "0", "at least 1"),
            (
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS",
                "ten",
                "positive whole number",
            ),
            (
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_BYTES",
                "4096xb",
                "unknown size suffix",
            ),
            (
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY",
                "maybe",
                "expected yes/no",
            ),
            ("SC4S_LISTEN_STATUS_PORT", "-1", "port number"),
        ];
        for (var, value, reason) in cases {
            let mut c = Config::default();
            let err = c.apply_env(&env(&[(var, value)])).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("{var}={value:?} (from the process environment): ")),
                "{err}"
            );
            assert!(err.contains(reason), "{err}");
        }
    }

    #[test]
    fn rcvbuf_minus_one_means_kernel_default() {
        let mut c = Config::default();
        c.apply_env(&env(&[("SC4S_SOURCE_UDP_SO_RCVBUFF", "-1")]))
            .unwrap();
        assert_eq!(c.udp.rcvbuf, ByteSize(0));
    }

    #[test]
    fn url_without_token_starts_with_a_warning_naming_the_variable() {
        let mut c = Config::default();
        c.apply_env(&env(&[(
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
            "https://x:8088",
        )]))
        .unwrap();
        c.validate().unwrap();
        let w = c.warnings();
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN"), "{w:?}");
        assert!(Config::default().warnings().is_empty());
    }

    #[test]
    fn ebpf_socket_count() {
        let mut c = Config::default();
        c.apply_env(&env(&[
            ("SC4S_ENABLE_EBPF", "yes"),
            ("SC4S_EBPF_NO_SOCKETS", "6"),
        ]))
        .unwrap();
        assert_eq!(c.udp.sockets, 6);
        let mut c = Config::default();
        let r = c
            .apply_env(&env(&[
                ("SC4S_ENABLE_EBPF", "yes"),
                ("SC4S_EBPF_NO_SOCKETS", "6"),
                ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "2"),
            ]))
            .unwrap();
        assert_eq!(c.udp.sockets, 2);
        assert_eq!(r.notes.len(), 1);
    }

    #[test]
    fn default_and_vendor_listeners() {
        let c = Config::default();
        let l: Vec<_> = c
            .listeners()
            .unwrap()
            .into_iter()
            .map(|l| (l.id, l.kind, l.port))
            .collect();
        assert_eq!(
            l,
            [
                ("DEFAULT".into(), ListenerKind::Udp, 514),
                ("DEFAULT".into(), ListenerKind::Udp, 601),
                ("DEFAULT".into(), ListenerKind::Tcp, 514),
                ("DEFAULT".into(), ListenerKind::Tcp, 601),
            ]
        );
        let mut c = Config::default();
        let r = c
            .apply_env(&env(&[
                ("SC4S_LISTEN_CISCO_ASA_UDP_PORT", "5000,5001"),
                ("SC4S_LISTEN_CISCO_ASA_TCP_PORT", "5000"),
                ("SC4S_LISTEN_PALOALTO_PANOS_RFC6587_PORT", "6000"),
                ("SC4S_LISTEN_JUNIPER_NETSCREEN_TLS_PORT", "7000"),
                ("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled"),
            ]))
            .unwrap();
        assert_eq!(r.unsupported, ["SC4S_LISTEN_JUNIPER_NETSCREEN_TLS_PORT"]);
        let l = c.listeners().unwrap();
        let asa: Vec<_> = l
            .iter()
            .filter(|x| x.id == "CISCO_ASA")
            .map(|x| (x.kind, x.port))
            .collect();
        assert_eq!(
            asa,
            [
                (ListenerKind::Udp, 5000),
                (ListenerKind::Udp, 5001),
                (ListenerKind::Tcp, 5000)
            ]
        );
        assert!(
            l.iter()
                .any(|x| x.id == "PALOALTO_PANOS" && x.kind == ListenerKind::Tcp && x.port == 6000)
        );
        assert!(
            !l.iter()
                .any(|x| x.port == 601 && x.kind == ListenerKind::Udp)
        );
    }

    #[test]
    fn a_port_claimed_twice_names_both_settings() {
        let mut c = Config::default();
        c.apply_env(&env(&[("SC4S_LISTEN_CISCO_ASA_UDP_PORT", "514")]))
            .unwrap();
        let err = c.validate().unwrap_err().to_string();
        assert!(
            err.contains("UDP port 514")
                && err.contains("SC4S_LISTEN_DEFAULT_UDP_PORT")
                && err.contains("SC4S_LISTEN_CISCO_ASA_UDP_PORT"),
            "{err}"
        );
    }

    #[test]
    fn byte_sizes() {
        assert_eq!("4096kb".parse::<ByteSize>().unwrap(), ByteSize(4_096_000));
        assert_eq!("16MiB".parse::<ByteSize>().unwrap(), ByteSize(16 << 20));
        assert_eq!("512".parse::<ByteSize>().unwrap(), ByteSize(512));
        assert_eq!("1g".parse::<ByteSize>().unwrap(), ByteSize(1_000_000_000));
        assert!("kb".parse::<ByteSize>().is_err());
        assert!("99999999999999999999".parse::<ByteSize>().is_err());
    }
}
