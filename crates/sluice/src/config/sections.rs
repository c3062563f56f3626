//! The typed settings, one struct per TOML table, and their defaults: the one place a
//! default is written down (`config/sluice.toml` documents them).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

use super::values::{ByteSize, millis, secs};

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
    /// Start even when another process already holds a listener's port, joining its
    /// `SO_REUSEPORT` group (`SLUICE_LISTEN_SHARE_PORTS`). Off by default: a second receiver
    /// in the group would take traffic from the first, so sluice refuses to start and names
    /// the other process.
    pub share_ports: bool,
    /// Directory of the per-port lock files that keep two sluice instances starting at the
    /// same moment off one port (`SLUICE_LISTEN_LOCK_DIR`). Unset: `$RUNTIME_DIRECTORY`
    /// (systemd), else `/run/sluice` as root, else `$XDG_RUNTIME_DIR/sluice`, else no lock file
    /// (the bind probe alone guards the port).
    pub lock_dir: Option<PathBuf>,
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
            share_ports: false,
            lock_dir: None,
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
