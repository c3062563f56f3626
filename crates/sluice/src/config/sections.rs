//! The typed settings, one struct per TOML table, and their defaults: the one place a
//! default is written down (`config/sluice.toml` documents them).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::values::{ByteSize, millis, secs};

/// Where to listen.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
    /// TLS ports, LF or octet framing detected per message (`SC4S_LISTEN_DEFAULT_TLS_PORT`);
    /// opened only when `tls.enable` is on, as in SC4S.
    pub tls_ports: Vec<u16>,
    /// RFC 5425 (octet-counted syslog over TLS) ports (`SC4S_LISTEN_DEFAULT_RFC5425_PORT`);
    /// opened only when `tls.enable` is on.
    pub rfc5425_ports: Vec<u16>,
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

/// Ports of one vendor listener id (`SC4S_LISTEN_<ID>_<PROTO>_PORT`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct VendorPorts {
    pub udp: Vec<u16>,
    pub tcp: Vec<u16>,
    pub rfc5426: Vec<u16>,
    pub rfc6587: Vec<u16>,
    pub tls: Vec<u16>,
    pub rfc5425: Vec<u16>,
    /// `SC4S_LISTEN_<ID>_RFC6587_NOPARSE_PORT`.
    pub rfc6587_noparse: Vec<u16>,
}

impl VendorPorts {
    /// The port list of one SC4S protocol word.
    pub fn ports_mut(&mut self, proto: SourceProto) -> &mut Vec<u16> {
        match proto {
            SourceProto::Udp => &mut self.udp,
            SourceProto::Tcp => &mut self.tcp,
            SourceProto::Rfc5426 => &mut self.rfc5426,
            SourceProto::Rfc6587 => &mut self.rfc6587,
            SourceProto::Tls => &mut self.tls,
            SourceProto::Rfc5425 => &mut self.rfc5425,
            SourceProto::Rfc6587NoParse => &mut self.rfc6587_noparse,
        }
    }
}

/// How a listener's messages arrive (UDP, TCP or TLS): the classifier's own word for it,
/// so a listener, its events and its metrics name the transport one way.
pub use sluice_proto::classify::Transport;

/// SC4S's protocol words, each with its own settings (`SC4S_SOURCE_<PROTO>_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceProto {
    Udp,
    Tcp,
    Rfc5426,
    Rfc6587,
    Tls,
    Rfc5425,
    /// SC4S's `RFC6587_NOPARSE` channel: octet-counted (or LF-framed) TCP whose frames are
    /// not parsed; the listener's network-source parsers read the header
    /// ([`sluice_proto::classify::classify_no_parse`]). It uses the TCP settings.
    Rfc6587NoParse,
}

impl SourceProto {
    pub const ALL: [SourceProto; 7] = [
        SourceProto::Udp,
        SourceProto::Tcp,
        SourceProto::Rfc5426,
        SourceProto::Rfc6587,
        SourceProto::Tls,
        SourceProto::Rfc5425,
        SourceProto::Rfc6587NoParse,
    ];

    /// The word in SC4S variable names: `UDP`, `RFC6587`, ...
    pub fn as_sc4s(self) -> &'static str {
        match self {
            SourceProto::Udp => "UDP",
            SourceProto::Tcp => "TCP",
            SourceProto::Rfc5426 => "RFC5426",
            SourceProto::Rfc6587 => "RFC6587",
            SourceProto::Tls => "TLS",
            SourceProto::Rfc5425 => "RFC5425",
            SourceProto::Rfc6587NoParse => "RFC6587_NOPARSE",
        }
    }

    /// Lower-case label for metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            SourceProto::Udp => "udp",
            SourceProto::Tcp => "tcp",
            SourceProto::Rfc5426 => "rfc5426",
            SourceProto::Rfc6587 => "rfc6587",
            SourceProto::Tls => "tls",
            SourceProto::Rfc5425 => "rfc5425",
            SourceProto::Rfc6587NoParse => "rfc6587_noparse",
        }
    }

    pub fn from_sc4s(word: &str) -> Option<SourceProto> {
        SourceProto::ALL.into_iter().find(|p| p.as_sc4s() == word)
    }

    /// The transport its listeners receive on.
    pub fn transport(self) -> Transport {
        match self {
            SourceProto::Udp | SourceProto::Rfc5426 => Transport::Udp,
            SourceProto::Tcp | SourceProto::Rfc6587 | SourceProto::Rfc6587NoParse => Transport::Tcp,
            SourceProto::Tls | SourceProto::Rfc5425 => Transport::Tls,
        }
    }
}

/// One port to listen on, with the SC4S listener id its events carry and the setting that
/// asked for it (for error messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListenerSpec {
    pub id: String,
    pub kind: Transport,
    /// The SC4S protocol word whose settings (connections, buffers, TLS options) apply.
    pub proto: SourceProto,
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
            tls_ports: vec![6514],
            rfc5425_ports: vec![5425],
            vendor: BTreeMap::new(),
            max_message_size: 65_536,
            share_ports: false,
            lock_dir: None,
        }
    }
}

/// How UDP datagrams are spread over the sockets of one port.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
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
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
    /// Receive buffer of the RFC 5426 ports' sockets (`SC4S_SOURCE_RFC5426_SO_RCVBUFF`), with
    /// the same default and logic as `rcvbuf`. A port named both as UDP and RFC 5426 is one
    /// socket group with `rcvbuf`.
    pub rfc5426_rcvbuf: ByteSize,
    /// Sockets (and receive threads) per RFC 5426 port
    /// (`SC4S_SOURCE_LISTEN_RFC5426_SOCKETS`). SC4S serves RFC 5426 with its own
    /// `syslog(transport(udp))` sources, one per socket, default 1; sluice serves it with the
    /// UDP engine, balanced like the UDP ports, and defaults to the UDP port's 4 because one
    /// receive thread is the usual cause of UDP loss. A port named both as UDP and RFC 5426
    /// is one socket group with `sockets`.
    pub rfc5426_sockets: usize,
}

impl Default for UdpConfig {
    fn default() -> Self {
        UdpConfig {
            sockets: 4,
            rcvbuf: ByteSize(16 * 1024 * 1024),
            window: 250_000,
            fetch_limit: 1000,
            balance: Balance::Kernel,
            rfc5426_rcvbuf: ByteSize(16 * 1024 * 1024),
            rfc5426_sockets: 4,
        }
    }
}

/// Behaviour shared by every stream listener (TCP, RFC 6587, TLS, RFC 5425): the window,
/// the timeouts that keep the edge from being locked out, PROXY protocol and PARALLELIZE.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Input window shared by all stream connections (`SC4S_SOURCE_TCP_IW_SIZE`). When it
    /// is full, connections stop reading and TCP pushes back on the senders.
    pub window: u64,
    /// Per-frame deadline (`SLUICE_TCP_FRAME_TIMEOUT`): a frame must arrive whole within
    /// this long of its first byte, and the first frame of a connection (PROXY header and
    /// TLS handshake included) within this long of the accept. When it passes, what arrived
    /// is delivered as a partial frame (counted and tagged) and the connection is closed.
    /// Real senders write a message in one go; 10 s covers a 64 KiB frame at 52 kbit/s.
    #[serde(with = "secs")]
    pub frame_timeout: Duration,
    /// Close connections that sent nothing for this long after their last complete frame
    /// (`SLUICE_TCP_IDLE_TIMEOUT`); 0 = never. Long by default because a sender often loses
    /// the message that discovers a closed connection; dead peers are found sooner by TCP
    /// keepalive, and at the connection limit idle connections are evicted anyway.
    #[serde(with = "secs")]
    pub idle_timeout: Duration,
    /// Quiet time before TCP keepalive probes a connection (`SLUICE_TCP_KEEPALIVE`); after
    /// six unanswered probes (10 s apart, or this far apart when shorter) the connection is
    /// closed as `dead_peer`. It finds half-open connections — a sender gone without a FIN
    /// or RST — in about two minutes even when `idle_timeout` is long or 0. 0 = off.
    #[serde(with = "secs")]
    pub keepalive: Duration,
    /// Expect a PROXY protocol v1/v2 header on every stream connection
    /// (`SC4S_SOURCE_PROXYCONNECT`); the proxied source address becomes the sender's
    /// address (HOST fallback and `sc4s_fromhostip`).
    pub proxy_protocol: bool,
    /// Spread the parse/classify/encode work of every stream connection over this many
    /// workers (`SC4S_ENABLE_PARALLELIZE=yes` with `SC4S_PARALLELIZE_NO_PARTITION`); 0 = off,
    /// each connection is processed in order by its own task. On, events of one
    /// connection may reach Splunk out of order, as with SC4S's parallelize().
    pub parallelize: usize,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            window: 20_000_000,
            frame_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(3600),
            keepalive: Duration::from_secs(60),
            proxy_protocol: false,
            parallelize: 0,
        }
    }
}

/// Socket settings of one stream transport (`SC4S_SOURCE_<PROTO>_MAX_CONNECTIONS`,
/// `_SO_RCVBUFF`, `SC4S_SOURCE_LISTEN_<PROTO>_SOCKETS`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct StreamPortConfig {
    /// Open connections per listening socket, as SC4S's `max-connections()`, which each of
    /// its `SC4S_SOURCE_LISTEN_<PROTO>_SOCKETS` sources applies on its own: a port admits
    /// `max_connections × sockets`. sluice keeps one table per port, so a socket the kernel
    /// hashed more connections to never refuses while the port has room. At the limit the
    /// connection idle longest is evicted to admit a new one; only when none is idle is the
    /// new one refused (counted).
    pub max_connections: usize,
    /// Receive buffer per socket, set on the listening socket so accepted connections
    /// inherit it; forced past `net.core.rmem_max` when privileged, read back, clamp logged.
    /// 0 = kernel default (SC4S's -1).
    pub rcvbuf: ByteSize,
    /// `SO_REUSEPORT` listening sockets per port; the kernel spreads connections over them.
    pub sockets: usize,
}

impl StreamPortConfig {
    /// Connections the whole port admits: `max_connections` per socket.
    pub fn port_limit(&self) -> usize {
        self.max_connections.saturating_mul(self.sockets.max(1))
    }
}

impl Default for StreamPortConfig {
    fn default() -> Self {
        StreamPortConfig {
            max_connections: 2000,
            rcvbuf: ByteSize(0),
            sockets: 1,
        }
    }
}

/// Per-transport stream socket settings.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct StreamConfig {
    pub tcp: StreamPortConfig,
    pub rfc6587: StreamPortConfig,
    pub tls: StreamPortConfig,
    pub rfc5425: StreamPortConfig,
}

impl StreamConfig {
    /// The settings of a stream protocol (`None` for the UDP words).
    pub fn get(&self, proto: SourceProto) -> Option<&StreamPortConfig> {
        match proto {
            // SC4S's noparse channel takes the TCP settings (sockets, connections, buffers).
            SourceProto::Tcp | SourceProto::Rfc6587NoParse => Some(&self.tcp),
            SourceProto::Rfc6587 => Some(&self.rfc6587),
            SourceProto::Tls => Some(&self.tls),
            SourceProto::Rfc5425 => Some(&self.rfc5425),
            SourceProto::Udp | SourceProto::Rfc5426 => None,
        }
    }

    pub fn get_mut(&mut self, proto: SourceProto) -> Option<&mut StreamPortConfig> {
        match proto {
            SourceProto::Tcp | SourceProto::Rfc6587NoParse => Some(&mut self.tcp),
            SourceProto::Rfc6587 => Some(&mut self.rfc6587),
            SourceProto::Tls => Some(&mut self.tls),
            SourceProto::Rfc5425 => Some(&mut self.rfc5425),
            SourceProto::Udp | SourceProto::Rfc5426 => None,
        }
    }
}

/// Whether TLS clients must present a certificate.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PeerVerify {
    /// Required when a trust store exists (`trusted.pem` in the TLS directory, or `ca_dir`),
    /// otherwise not requested.
    Auto,
    /// Every client must present a certificate issued by the trust store.
    Required,
    /// A client certificate is verified when presented; clients without one are accepted.
    Optional,
    /// Never request a client certificate, even with a trust store (`trusted.pem` kept only
    /// for other purposes).
    No,
}

impl FromStr for PeerVerify {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(PeerVerify::Auto),
            "required" | "required-trusted" | "yes" => Ok(PeerVerify::Required),
            "optional" | "optional-trusted" => Ok(PeerVerify::Optional),
            "no" | "none" | "optional-untrusted" => Ok(PeerVerify::No),
            _ => Err("expected auto, required, optional or no".into()),
        }
    }
}

/// TLS for the TLS and RFC 5425 listeners.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TlsConfig {
    /// Open the TLS and RFC 5425 ports (`SC4S_SOURCE_TLS_ENABLE`).
    pub enable: bool,
    /// Directory of the certificate files (`SC4S_TLS`).
    pub dir: PathBuf,
    /// Server certificate chain, PEM, leaf first; relative to `dir` (`server.pem`, or
    /// `tls.crt` with `SC4S_RUNTIME_ENV=k8s`).
    pub cert_file: PathBuf,
    /// Private key of the certificate, PEM; relative to `dir` (`server.key`, or `tls.key`
    /// with `SC4S_RUNTIME_ENV=k8s`).
    pub key_file: PathBuf,
    /// Generate a self-signed pair in `dir` at startup when none exists
    /// (`SC4S_SOURCE_TLS_SELFSIGNED`); its SHA-256 fingerprint is logged.
    pub self_signed: bool,
    /// CA certificates (PEM) that client certificates must chain to; relative to `dir`.
    /// Its presence turns client-certificate verification on (see `peer_verify`).
    pub trusted_file: PathBuf,
    /// A directory of CA certificates (`*.pem`, `*.crt`) used like `trusted_file`
    /// (`SLUICE_TLS_CA_DIR`).
    pub ca_dir: Option<PathBuf>,
    /// Client certificates (`SLUICE_TLS_PEER_VERIFY`): auto, required, optional or no.
    pub peer_verify: PeerVerify,
    /// OpenSSL-style options of the TLS ports (`SC4S_SOURCE_TLS_OPTIONS`): `no-tlsv12` or
    /// `no-tlsv13` restrict the versions; TLS 1.2 is the floor whatever is set.
    pub options: String,
    /// OpenSSL cipher string for TLS 1.2 on the TLS ports (`SC4S_SOURCE_TLS_CIPHER_SUITE`);
    /// evaluated over the suites rustls implements. TLS 1.3 suites are not governed by it,
    /// as in OpenSSL.
    pub cipher_suite: String,
    /// `options` for the RFC 5425 ports (`SC4S_SOURCE_RFC5425_OPTIONS`).
    pub rfc5425_options: String,
    /// `cipher_suite` for the RFC 5425 ports (`SC4S_SOURCE_RFC5425_CIPHER_SUITE`).
    pub rfc5425_cipher_suite: String,
    /// How often the certificate, key and trust files are checked for changes; a change is
    /// loaded for new handshakes without a restart (`SLUICE_TLS_RELOAD_INTERVAL`). 0 = only
    /// on request (SIGHUP).
    #[serde(with = "secs")]
    pub reload_interval: Duration,
}

/// SC4S's `ssl-options()` default for its TLS sources.
pub const SC4S_TLS_OPTIONS: &str = "no-sslv2, no-sslv3, no-tlsv1";
/// SC4S's `cipher-suite()` default for its TLS sources.
pub const SC4S_CIPHER_SUITE: &str =
    "HIGH:!aNULL:!eNULL:!kECDH:!aDH:!RC4:!3DES:!CAMELLIA:!MD5:!PSK:!SRP:!KRB5:@STRENGTH";

impl Default for TlsConfig {
    fn default() -> Self {
        TlsConfig {
            enable: false,
            dir: PathBuf::from("/etc/syslog-ng/tls"),
            cert_file: PathBuf::from("server.pem"),
            key_file: PathBuf::from("server.key"),
            self_signed: false,
            trusted_file: PathBuf::from("trusted.pem"),
            ca_dir: None,
            peer_verify: PeerVerify::Auto,
            options: SC4S_TLS_OPTIONS.into(),
            cipher_suite: SC4S_CIPHER_SUITE.into(),
            rfc5425_options: SC4S_TLS_OPTIONS.into(),
            rfc5425_cipher_suite: SC4S_CIPHER_SUITE.into(),
            reload_interval: Duration::from_secs(5),
        }
    }
}

impl TlsConfig {
    pub fn cert_path(&self) -> PathBuf {
        self.dir.join(&self.cert_file)
    }
    pub fn key_path(&self) -> PathBuf {
        self.dir.join(&self.key_file)
    }
    pub fn trusted_path(&self) -> PathBuf {
        self.dir.join(&self.trusted_file)
    }
}

/// Limits shared by all listeners.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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

/// Where the name cache is kept without `SC4S_VAR`.
pub const DEFAULT_NAME_CACHE_FILE: &str = "/var/lib/sluice/hostip.cache";

/// The environment as the app-parsers see it. Its `Debug` names no value: it holds every
/// variable, tokens included.
#[derive(Clone, Default, PartialEq)]
pub struct VarSnapshot(pub std::collections::BTreeMap<String, String>);

impl std::fmt::Debug for VarSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VarSnapshot({} variables)", self.0.len())
    }
}

/// Parsing.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ParseConfig {
    /// Zone for stamps that carry none (`SC4S_DEFAULT_TIMEZONE`): GMT, UTC, an IANA name or
    /// a fixed offset such as `+05:30`.
    pub default_timezone: String,
    /// Include the raw message in fallback events (`SC4S_SOURCE_STORE_RAWMSG`).
    pub store_raw_message: bool,
    /// SC4S `splunk_metadata.csv` overrides (`key,field,value` rows). Takes the place of
    /// the context directory's `splunk_metadata.csv`.
    pub metadata_csv: Option<PathBuf>,
    /// SC4S's context directory (`SLUICE_CONTEXT_DIR`): `splunk_metadata.csv`,
    /// `vendor_product_by_source.conf`/`.csv`, `compliance_meta_by_source.conf`/`.csv`,
    /// `host.csv`. Unset: `$SC4S_ETC/conf.d/local/context` when `SC4S_ETC` is set, else the
    /// first existing of `/etc/syslog-ng/conf.d/local/context` (inside SC4S's container)
    /// and `/opt/sc4s/local/context` (SC4S's host mount), else none.
    pub context_dir: Option<PathBuf>,
    /// The operator's SC4S app-parsers (`SLUICE_APP_PARSERS_DIR`), subdirectories included.
    /// Unset: `config/app_parsers` beside the context directory (`local/context` ->
    /// `local/config/app_parsers`), else `$SC4S_ETC/conf.d/local/config/app_parsers`,
    /// `/etc/syslog-ng/conf.d/local/config/app_parsers` or
    /// `/opt/sc4s/local/config/app_parsers`, the first that exists.
    pub app_parsers_dir: Option<PathBuf>,
    /// The `SC4S_*` variables the app-parsers' backtick references (`` `SC4S_X` ``) read;
    /// from the environment only.
    #[serde(skip)]
    pub app_parser_env: VarSnapshot,
    /// Active vendor parsers (`SLUICE_VENDORS`): `all`, `none`, family names or prefixes
    /// (`cisco`), `-name` to remove; comma separated. SC4S's "Lite" image, as one setting.
    pub vendors: String,
    /// Force `source` to `sc4s` (`SC4S_SET_SOURCE_AS_SC4S`).
    pub set_source_as_sc4s: bool,
    /// SC4S settings vendor parsers read (`SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX`,
    /// `SC4S_DISABLE_DROP_INVALID_CEF`); from the environment only.
    #[serde(skip)]
    pub vendor_options: sluice_proto::classify::VendorOptions,
    /// The last good hostname of each sender fills in HOST when a message has none or an
    /// address (`SC4S_USE_NAME_CACHE`).
    pub use_name_cache: bool,
    /// Delete the name cache at start (`SC4S_CLEAR_NAME_CACHE`).
    pub clear_name_cache: bool,
    /// Where the name cache is kept (`$SC4S_VAR/hostip.cache`).
    pub name_cache_file: PathBuf,
}

impl Default for ParseConfig {
    fn default() -> Self {
        ParseConfig {
            default_timezone: "GMT".into(),
            store_raw_message: false,
            metadata_csv: None,
            context_dir: None,
            app_parsers_dir: None,
            app_parser_env: Default::default(),
            vendors: "all".into(),
            set_source_as_sc4s: false,
            vendor_options: Default::default(),
            use_name_cache: false,
            clear_name_cache: false,
            name_cache_file: PathBuf::from(DEFAULT_NAME_CACHE_FILE),
        }
    }
}

/// Splunk HEC output. With no URL, events go to the JSON-lines file instead.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct HecConfig {
    /// Base URLs (`SC4S_DEST_SPLUNK_HEC_DEFAULT_URL`, comma/space list). Any path is
    /// replaced by `/services/collector/event`, as SC4S does.
    pub urls: Vec<String>,
    /// `SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN`.
    pub token: String,
    /// Verify the indexers' TLS certificates (`…_TLS_VERIFY`).
    pub tls_verify: bool,
    /// Directory with `key.pem` + `cert.pem` (client certificate, mTLS) and the CA
    /// certificates to trust besides the system's (`…_TLS_MOUNT`).
    pub tls_mount: Option<PathBuf>,
    /// One more CA file (PEM) to trust for the indexers' certificates.
    pub tls_ca_file: Option<PathBuf>,
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
    /// Indexer acknowledgement (`SLUICE_HEC_INDEXER_ACK`): a batch is done only when Splunk
    /// says its events are indexed.
    pub indexer_ack: bool,
    /// How often acks are asked for (`SLUICE_HEC_ACK_POLL_INTERVAL`, milliseconds).
    #[serde(with = "millis")]
    pub ack_poll_interval: Duration,
    /// A request still unacknowledged after this long is sent again
    /// (`SLUICE_HEC_ACK_TIMEOUT`, seconds).
    #[serde(with = "secs")]
    pub ack_timeout: Duration,
    /// Connection set-up timeout (`SLUICE_HEC_CONNECT_TIMEOUT`, seconds).
    #[serde(with = "secs")]
    pub connect_timeout: Duration,
    /// Reading an answer's body once its headers arrived (`SLUICE_HEC_BODY_TIMEOUT`,
    /// seconds).
    #[serde(with = "secs")]
    pub body_timeout: Duration,
    /// After a timeout, an indexer's requests wait this many times `timeout` until one is
    /// answered in time (`SLUICE_HEC_SLOW_TIMEOUT_FACTOR`; 1 = off).
    pub slow_timeout_factor: u32,
    /// After a 400 naming a bad event, send the events before it again too
    /// (`SLUICE_HEC_RESEND_BEFORE_INVALID`): at least once. `false` trusts that Splunk
    /// indexed them: no duplicates, but loss if it did not.
    pub resend_before_invalid: bool,
    /// Where events HEC refused for good are written (`SLUICE_HEC_DEAD_LETTER_DIR`;
    /// default `$SC4S_VAR/dead-letter`, else `./dead-letter`).
    pub dead_letter_dir: Option<PathBuf>,
    /// Size cap of the dead-letter file (`SLUICE_HEC_DEAD_LETTER_MAX_BYTES`); 0 keeps no
    /// file, refusals are only counted and logged.
    pub dead_letter_max_bytes: ByteSize,
    /// An event HEC refuses for its index (400, code 7 "Incorrect index") is sent once more
    /// to this index, the index it asked for kept in the indexed field
    /// `sc4s_original_index` (`SC4S_DEST_SPLUNK_HEC_<ID>_FALLBACK_INDEX`). Unset: such
    /// events go to the dead-letter file.
    pub fallback_index: Option<String>,
    /// sluice's counters to Splunk as SC4S sends syslog-ng's (`SC4S_DEST_SPLUNK_SC4S_METRICS_HEC`:
    /// `multi2` (default, `_metrics`, `sc4s:metrics:v2`), `multi`, `single`/`yes`, `event`,
    /// or `no`).
    pub sc4s_metrics: String,
    /// How often they are sent (`SLUICE_HEC_METRICS_INTERVAL`, seconds; syslog-ng's
    /// `stats(freq())` in SC4S).
    #[serde(with = "secs")]
    pub sc4s_metrics_interval: Duration,
}

impl Default for HecConfig {
    fn default() -> Self {
        // The client's own defaults (SC4S's) are the one source for what both configs share.
        let client = sluice_hec::ClientConfig::default();
        let batch = sluice_proto::batch::BatchPolicy::default();
        HecConfig {
            urls: Vec::new(),
            token: String::new(),
            tls_verify: client.tls_verify,
            tls_mount: None,
            tls_ca_file: None,
            workers: client.workers,
            batch_lines: batch.max_events,
            batch_bytes: ByteSize(batch.max_bytes as u64),
            batch_timeout: batch.timeout,
            timeout: client.timeout,
            compression: client.compression,
            connection_close: client.connection_close,
            headers: Vec::new(),
            indexer_ack: false,
            ack_poll_interval: sluice_hec::AckConfig::default().poll_interval,
            ack_timeout: sluice_hec::AckConfig::default().timeout,
            connect_timeout: client.connect_timeout,
            body_timeout: client.body_timeout,
            slow_timeout_factor: client.slow_timeout_factor,
            resend_before_invalid: client.resend_policy == sluice_hec::ResendPolicy::All,
            dead_letter_dir: None,
            dead_letter_max_bytes: ByteSize(100 * 1024 * 1024),
            fallback_index: client.fallback_index,
            sc4s_metrics: "multi2".into(),
            sc4s_metrics_interval: crate::telemetry::sc4s::INTERVAL,
        }
    }
}

/// The embedded default output.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AdminConfig {
    pub address: IpAddr,
    /// `SC4S_LISTEN_STATUS_PORT`; 0 disables the server.
    pub port: u16,
    /// Write the daemon's pid here once its ports are open, for `sluice reload --pid-file`
    /// and init scripts (`SLUICE_PID_FILE`); removed at a clean exit. Unset: none.
    pub pid_file: Option<PathBuf>,
}

impl Default for AdminConfig {
    fn default() -> Self {
        AdminConfig {
            address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 8080,
            pid_file: None,
        }
    }
}

/// SIGTERM/SIGINT handling.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
