//! The daemon's shape as a value: which ports are open, with which socket settings, and the
//! TLS setup they share.
//!
//! A [`Topology`] is built from a [`Config`] and holds no sockets; [`running::Running`] holds
//! the sockets and tasks that realise one. A reload builds the new configuration's topology,
//! asks the running one for the [`Transition`] to it, and applies only that:
//!
//! * a port that is no longer configured is closed, **after** every new port is open, so a
//!   port number that changes is served throughout;
//! * a UDP port that stays keeps its sockets, always: when only its listener id changes, its
//!   receive threads restart around the same sockets ([`Change::Restart`]); when its socket
//!   settings change (sockets, balancing, receive buffer, fetch limit, datagram size), they
//!   need new sockets, which would drop what the kernel holds, so the old ones stay and the
//!   difference is reported as needing a restart;
//! * a stream port whose settings change gets new listening sockets on the same port (the
//!   group is `SO_REUSEPORT`), then the old ones stop accepting — connections already open
//!   carry on until they end ([`Change::Replace`]);
//! * what the events look like (parse, classify, encode) is not here: it is the
//!   [`Processor`](crate::pipeline::Processor), swapped as a whole between batches.
//!
//! Ports are keyed by number within their namespace (UDP, or TCP for the plain and TLS stream
//! listeners, which share the TCP port numbers), since that is what a socket owns.

pub mod running;

use std::collections::BTreeMap;
use std::net::SocketAddr;

use crate::config::{
    Balance, Config, ConfigError, ListenerKind, ListenerSpec, SourceProto, StreamPortConfig,
    TlsConfig,
};
use crate::listen::stream::conn::TcpLimits;

/// The sockets of a UDP port: what cannot change without closing them.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpSockets {
    pub addr: SocketAddr,
    pub sockets: usize,
    pub balance: Balance,
    /// Requested receive buffer per socket; 0 = the kernel default.
    pub rcvbuf: u64,
    /// Receive slots per `recvmmsg` (`udp.fetch_limit`).
    pub batch: usize,
    pub max_datagram: usize,
}

impl UdpSockets {
    /// The settings that differ from `other`, named as the operator sets them.
    fn differences(&self, other: &UdpSockets) -> Vec<String> {
        let mut d = Vec::new();
        let mut diff = |what: &str, a: String, b: String| {
            if a != b {
                d.push(format!("{what} {a} → {b}"));
            }
        };
        diff(
            "address",
            self.addr.ip().to_string(),
            other.addr.ip().to_string(),
        );
        diff(
            "sockets (SC4S_SOURCE_LISTEN_{UDP,RFC5426}_SOCKETS)",
            self.sockets.to_string(),
            other.sockets.to_string(),
        );
        diff(
            "balance (SC4S_ENABLE_EBPF, SLUICE_UDP_BALANCE)",
            format!("{:?}", self.balance).to_lowercase(),
            format!("{:?}", other.balance).to_lowercase(),
        );
        diff(
            "receive buffer (SC4S_SOURCE_*_SO_RCVBUFF)",
            self.rcvbuf.to_string(),
            other.rcvbuf.to_string(),
        );
        diff(
            "fetch limit (SC4S_SOURCE_UDP_FETCH_LIMIT)",
            self.batch.to_string(),
            other.batch.to_string(),
        );
        diff(
            "largest datagram (listen.max_message_size)",
            self.max_datagram.to_string(),
            other.max_datagram.to_string(),
        );
        d
    }
}

/// A UDP port.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpPlan {
    pub spec: ListenerSpec,
    pub sockets: UdpSockets,
}

/// A stream port (TCP, RFC 6587, TLS, RFC 5425).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamPlan {
    pub spec: ListenerSpec,
    pub addr: SocketAddr,
    pub settings: StreamPortConfig,
    pub limits: TcpLimits,
    pub proxy: bool,
    pub parallelize: usize,
}

impl StreamPlan {
    /// Equal apart from the setting that named the port (a label for messages).
    fn same_as(&self, other: &StreamPlan) -> bool {
        let key = |p: &StreamPlan| (p.spec.id.clone(), p.spec.kind, p.spec.proto);
        key(self) == key(other)
            && self.addr == other.addr
            && self.settings == other.settings
            && self.limits == other.limits
            && self.proxy == other.proxy
            && self.parallelize == other.parallelize
    }
}

/// The TLS setup the TLS and RFC 5425 ports share: the settings and the profiles in use.
#[derive(Clone, Debug, PartialEq)]
pub struct TlsPlan {
    pub config: TlsConfig,
    pub profiles: Vec<SourceProto>,
}

/// Every port to serve and the TLS setup.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    /// By UDP port number.
    pub udp: BTreeMap<u16, UdpPlan>,
    /// By TCP port number.
    pub streams: BTreeMap<u16, StreamPlan>,
    pub tls: Option<TlsPlan>,
}

/// What a reload does to one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Not open yet: claim and bind it.
    Open,
    /// No longer configured: closed once every new port is open.
    Close,
    /// A stream port with new settings: new listening sockets on the same port, then the
    /// old ones stop accepting; open connections are not touched.
    Replace,
    /// A UDP port with a new listener id: new receive threads around the same sockets.
    Restart,
}

/// How to get from the running topology to a new one.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// What will run: the new topology, except that UDP ports that stay open keep their
    /// running socket settings.
    pub next: Topology,
    /// UDP ports that change, by number; the others are left alone.
    pub udp: BTreeMap<u16, Change>,
    /// Stream ports that change, by number.
    pub streams: BTreeMap<u16, Change>,
    /// The TLS setup changed: a new one is loaded (and checked) before anything changes, and
    /// every TLS port is replaced to use it.
    pub new_tls: bool,
    /// Differences that need a restart, in words.
    pub needs_restart: Vec<String>,
}

impl Topology {
    /// The topology `config` asks for. Errors are the listener errors of
    /// [`Config::listeners`] (a port claimed twice).
    pub fn from_config(config: &Config) -> Result<Topology, ConfigError> {
        let mut t = Topology::default();
        let mut profiles = Vec::new();
        for spec in config.listeners()? {
            let addr = SocketAddr::new(config.listen.address, spec.port);
            if spec.kind == ListenerKind::Udp {
                let rcvbuf = if spec.proto == SourceProto::Rfc5426 {
                    config.udp.rfc5426_rcvbuf
                } else {
                    config.udp.rcvbuf
                };
                let sockets = UdpSockets {
                    addr,
                    sockets: if spec.proto == SourceProto::Rfc5426 {
                        config.udp.rfc5426_sockets
                    } else {
                        config.udp.sockets
                    },
                    balance: config.udp.balance,
                    rcvbuf: rcvbuf.0,
                    batch: config.udp.fetch_limit.clamp(1, sluice_net::MAX_BATCH),
                    max_datagram: config
                        .listen
                        .max_message_size
                        .min(sluice_net::DEFAULT_MAX_DATAGRAM),
                };
                t.udp.insert(spec.port, UdpPlan { spec, sockets });
                continue;
            }
            let Some(settings) = config.stream.get(spec.proto).cloned() else {
                continue;
            };
            if spec.kind == ListenerKind::Tls {
                profiles.push(spec.proto);
            }
            let plan = StreamPlan {
                addr,
                settings,
                limits: TcpLimits {
                    max_message_size: config.listen.max_message_size,
                    frame_timeout: config.tcp.frame_timeout,
                    idle_timeout: config.tcp.idle_timeout,
                    keepalive: config.tcp.keepalive,
                },
                proxy: config.tcp.proxy_protocol,
                parallelize: config.tcp.parallelize,
                spec,
            };
            t.streams.insert(plan.spec.port, plan);
        }
        profiles.sort();
        profiles.dedup();
        t.tls = (!profiles.is_empty()).then(|| TlsPlan {
            config: config.tls.clone(),
            profiles,
        });
        Ok(t)
    }

    /// Every listener id in use (for the processor, which resolves each one's metadata).
    pub fn listener_ids(&self) -> impl Iterator<Item = &str> {
        let udp = self.udp.values().map(|p| p.spec.id.as_str());
        udp.chain(self.streams.values().map(|p| p.spec.id.as_str()))
    }

    /// The transition from this (running) topology to `next`.
    pub fn transition(&self, mut next: Topology) -> Transition {
        let new_tls = next.tls.is_some() && self.tls != next.tls;
        let mut needs_restart = Vec::new();
        let udp = changes(&self.udp, &mut next.udp, |port, o, n| {
            if o.sockets != n.sockets {
                needs_restart.push(format!(
                    "UDP port {port}: {} (its sockets stay open as they are)",
                    o.sockets.differences(&n.sockets).join(", ")
                ));
                n.sockets = o.sockets.clone();
            }
            (o.spec.id != n.spec.id).then_some(Change::Restart)
        });
        let streams = changes(&self.streams, &mut next.streams, |_, o, n| {
            let replace = !o.same_as(n) || (new_tls && n.spec.kind == ListenerKind::Tls);
            replace.then_some(Change::Replace)
        });
        Transition {
            next,
            udp,
            streams,
            new_tls,
            needs_restart,
        }
    }
}

impl Transition {
    /// Nothing to open, close, replace or restart.
    pub fn leaves_listeners_alone(&self) -> bool {
        self.udp.is_empty() && self.streams.is_empty() && !self.new_tls
    }
}

/// Ports only in `old` close, ports only in `new` open; for ports in both, `kept` decides
/// (and may adjust the new plan to what will really run).
fn changes<P>(
    old: &BTreeMap<u16, P>,
    new: &mut BTreeMap<u16, P>,
    mut kept: impl FnMut(u16, &P, &mut P) -> Option<Change>,
) -> BTreeMap<u16, Change> {
    let mut out = BTreeMap::new();
    for (&port, o) in old {
        match new.get_mut(&port) {
            None => {
                out.insert(port, Change::Close);
            }
            Some(n) => {
                if let Some(c) = kept(port, o, n) {
                    out.insert(port, c);
                }
            }
        }
    }
    for &port in new.keys() {
        if !old.contains_key(&port) {
            out.insert(port, Change::Open);
        }
    }
    out
}

#[cfg(test)]
mod tests;
