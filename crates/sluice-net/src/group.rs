//! A `SO_REUSEPORT` group: N UDP sockets on one address, set up for one receive thread each.
//!
//! Setup order on a given port: claim the port ([`PortClaim`]: lock file, probe) → per
//! socket `socket` → `IPV6_V6ONLY = 0` (IPv6 only) → `SO_REUSEPORT` → `SO_RXQ_OVFL` → receive
//! buffer → balancing program attached to socket 0, still unbound → `bind` each → eBPF: the
//! bound sockets registered in the program's map. With port 0 a probe socket picks the port
//! first and balancing is attached after the binds (see `bind_any_port` for why). Any error
//! closes every socket created so far and names the socket, the address and the cause.

use std::{net::SocketAddr, sync::Arc};

use socket2::{Domain, Protocol, Socket, Type};

use crate::{
    Balance, NetError, PortClaim, PortClaimConfig, PortHolder, RcvbufReport, SocketStats,
    Transport, UdpReceiver, balance, rcvbuf, recv::DEFAULT_MAX_DATAGRAM, sys,
};

/// Default receive buffer request per socket: 16 MiB.
///
/// It holds about 20,000 datagrams of 800 bytes (each costs its payload plus about the same
/// again in kernel overhead, which is why the kernel doubles the request), i.e. about 80 ms of
/// traffic at 250,000 datagrams/s: enough to ride out a batch hand-off or a scheduling stall of
/// the receive thread without a drop. It is reserved per socket only as it fills, and 16 MiB ×
/// sockets stays modest on a small box (4 sockets: 64 MiB worst case, 128 MiB of kernel
/// accounting). Raise it for longer stalls; SC4S users often run 512 MiB.
pub const DEFAULT_RCVBUF: usize = 16 << 20;

/// Default number of datagrams one `recvmmsg` call can return.
pub const DEFAULT_BATCH: usize = 64;

/// Largest batch: `recvmmsg` handles at most `UIO_MAXIOV` (1024) messages per call.
pub const MAX_BATCH: usize = 1024;

/// How to set up a group. Build with [`UdpGroupConfig::new`] and adjust the fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpGroupConfig {
    /// Address to bind; port 0 picks a free port (read it back with [`UdpGroup::local_addr`]).
    /// An IPv6 address is bound dual stack (`IPV6_V6ONLY` off): `[::]:514` also receives IPv4.
    pub addr: SocketAddr,
    /// Number of sockets, one receive thread each; at least 1. Default 1.
    pub sockets: usize,
    /// Requested balancing across the sockets. Default [`Balance::Ebpf`] (falls back by itself).
    pub balance: Balance,
    /// Receive buffer request per socket in bytes; `None` keeps the kernel default
    /// (`net.core.rmem_default`). Default [`DEFAULT_RCVBUF`].
    pub rcvbuf: Option<usize>,
    /// Datagram slots per receiver, 1..=[`MAX_BATCH`]. Default [`DEFAULT_BATCH`].
    pub batch: usize,
    /// Largest datagram delivered whole, 1..=65535; longer ones are cut and flagged truncated.
    /// Default [`DEFAULT_MAX_DATAGRAM`] (65,535). Each receiver allocates
    /// `batch × (max_datagram + 1)` bytes of slots.
    pub max_datagram: usize,
    /// How the port is claimed against other processes (see [`PortClaim`]). Default: refuse a
    /// port another socket holds, no lock file.
    pub claim: PortClaimConfig,
}

impl UdpGroupConfig {
    /// Defaults for everything but the address.
    pub fn new(addr: SocketAddr) -> UdpGroupConfig {
        UdpGroupConfig {
            addr,
            sockets: 1,
            balance: Balance::Ebpf,
            rcvbuf: Some(DEFAULT_RCVBUF),
            batch: DEFAULT_BATCH,
            max_datagram: DEFAULT_MAX_DATAGRAM,
            claim: PortClaimConfig::default(),
        }
    }

    /// Check every value; the error names the setting.
    pub fn validate(&self) -> Result<(), NetError> {
        let invalid = |setting, value: usize, reason: &str| {
            Err(NetError::InvalidConfig {
                setting,
                value: value.to_string(),
                reason: reason.to_owned(),
            })
        };
        if self.sockets == 0 {
            return invalid("sockets", self.sockets, "a group needs at least 1 socket");
        }
        if self.sockets > u32::MAX as usize {
            return invalid("sockets", self.sockets, "too many sockets");
        }
        if self.batch == 0 || self.batch > MAX_BATCH {
            return invalid(
                "batch",
                self.batch,
                "must be 1..=1024 (recvmmsg returns at most 1024 datagrams per call)",
            );
        }
        if self.max_datagram == 0 || self.max_datagram > DEFAULT_MAX_DATAGRAM {
            return invalid(
                "max_datagram",
                self.max_datagram,
                "must be 1..=65535 (a UDP datagram cannot be larger)",
            );
        }
        if let Some(0) = self.rcvbuf {
            return invalid(
                "rcvbuf",
                0,
                "must be positive; leave it unset for the kernel default",
            );
        }
        Ok(())
    }
}

/// The bound group: its sockets (as receivers until [`take_receivers`](Self::take_receivers)),
/// the balancing in effect, the receive buffer outcome and the per-socket counters.
pub struct UdpGroup {
    local_addr: SocketAddr,
    requested: Balance,
    mode: Balance,
    fallback_reason: Option<String>,
    rcvbuf: Vec<RcvbufReport>,
    stats: Vec<Arc<SocketStats>>,
    receivers: Vec<UdpReceiver>,
    shared_with: Vec<PortHolder>,
    /// Holds the eBPF program and map handles as long as the group lives (receivers hold it too).
    _keepalive: Arc<dyn Send + Sync>,
}

impl std::fmt::Debug for UdpGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpGroup")
            .field("local_addr", &self.local_addr)
            .field("sockets", &self.stats.len())
            .field("requested", &self.requested)
            .field("mode", &self.mode)
            .field("fallback_reason", &self.fallback_reason)
            .field("rcvbuf", &self.rcvbuf)
            .finish_non_exhaustive()
    }
}

/// What the receivers and the group share so the balancing program outlives both.
struct KeepAlive {
    _ebpf: Option<aya::Ebpf>,
    /// The port's lock file is held as long as any socket of the group is open.
    _claim: Option<PortClaim>,
}

impl UdpGroup {
    /// Create, configure and bind `cfg.sockets` sockets on `cfg.addr` and set up balancing.
    ///
    /// On a given port the port is claimed first ([`PortClaim`], per `cfg.claim`): another
    /// process on it is an error ([`NetError::PortInUse`]) unless sharing is allowed.
    pub fn bind(cfg: &UdpGroupConfig) -> Result<UdpGroup, NetError> {
        cfg.validate()?;
        let (addr, socks, rcvbuf, applied, claim) = if cfg.addr.port() == 0 {
            bind_any_port(cfg)?
        } else {
            bind_port(cfg)?
        };
        let n = socks.len();
        let shared_with = claim
            .as_ref()
            .map(|c| c.shared_with().to_vec())
            .unwrap_or_default();
        let keepalive: Arc<dyn Send + Sync> = Arc::new(KeepAlive {
            _ebpf: applied.ebpf,
            _claim: claim,
        });
        let stats: Vec<Arc<SocketStats>> = (0..n).map(|i| Arc::new(SocketStats::new(i))).collect();
        let receivers = socks
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                UdpReceiver::new(
                    s,
                    i,
                    cfg.batch,
                    cfg.max_datagram,
                    stats[i].clone(),
                    keepalive.clone(),
                )
            })
            .collect();
        Ok(UdpGroup {
            local_addr: addr,
            requested: cfg.balance,
            mode: applied.mode,
            fallback_reason: applied.fallback_reason,
            rcvbuf,
            stats,
            receivers,
            shared_with,
            _keepalive: keepalive,
        })
    }

    /// The bound address, with the actual port when port 0 was requested.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Number of sockets in the group.
    pub fn len(&self) -> usize {
        self.stats.len()
    }

    /// Always false: a group has at least one socket.
    pub fn is_empty(&self) -> bool {
        self.stats.is_empty()
    }

    /// The balancing mode the configuration asked for.
    pub fn balance_requested(&self) -> Balance {
        self.requested
    }

    /// The balancing mode in effect.
    pub fn balance_mode(&self) -> Balance {
        self.mode
    }

    /// Why the mode in effect differs from the one requested (log it once, export it).
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback_reason.as_deref()
    }

    /// The receive buffer outcome per socket, by index.
    pub fn rcvbuf_reports(&self) -> &[RcvbufReport] {
        &self.rcvbuf
    }

    /// True when the kernel granted any socket less buffer than requested; each clamped
    /// report's [`RcvbufReport::sysctl_hint`] says how to fix it.
    pub fn rcvbuf_clamped(&self) -> bool {
        self.rcvbuf.iter().any(|r| r.clamped)
    }

    /// With [`PortClaimConfig::share`]: the other processes' sockets that were on the port when
    /// this group joined it (log them: their traffic is now shared). Empty otherwise.
    pub fn shared_with(&self) -> &[PortHolder] {
        &self.shared_with
    }

    /// Per-socket counters, by index. Clone the `Arc`s once for `/metrics`.
    pub fn stats(&self) -> &[Arc<SocketStats>] {
        &self.stats
    }

    /// Move the receivers out, one per socket in index order, to hand each to its thread.
    /// Later calls return an empty `Vec`. The group stays useful for its reports and stats,
    /// and may be dropped: the balancing program stays alive while any receiver lives.
    pub fn take_receivers(&mut self) -> Vec<UdpReceiver> {
        std::mem::take(&mut self.receivers)
    }
}

/// What binding produced: the address (port resolved), the sockets in index order, their
/// receive buffer reports, the balancing and the claim.
type Bound = (
    SocketAddr,
    Vec<Socket>,
    Vec<RcvbufReport>,
    balance::Applied,
    Option<PortClaim>,
);

/// A given port: claim it, create and configure every socket, attach the balancing program to
/// the first one while none is bound, then bind them all. The port starts receiving at the
/// first bind, and by then the program is the group's selector, so the first datagrams spread
/// like the rest. (Attaching after the binds, the datagrams that arrive while the eBPF object
/// loads, milliseconds, all go to the one socket the kernel's 4-tuple hash picks.)
fn bind_port(cfg: &UdpGroupConfig) -> Result<Bound, NetError> {
    let addr = cfg.addr;
    let claim = PortClaim::acquire(Transport::Udp, addr, &cfg.claim)?;
    let (socks, rcvbuf) = configured_sockets(cfg, addr)?;
    let first = socks.first().ok_or_else(|| NetError::InvalidConfig {
        setting: "sockets",
        value: "0".into(),
        reason: "a group needs at least 1 socket".into(),
    })?;
    // Joining another process's group (sharing): socket 0 would leave the group a program
    // attached before bind creates and join the existing one, dropping the program; attach
    // after the binds instead, which makes this process's program the group's selector.
    let applied = if claim.shared_with().is_empty() {
        let pending = balance::attach_before_bind(cfg.balance, first, socks.len());
        bind_all(&socks, addr)?;
        pending.finish(cfg.balance, &socks)
    } else {
        bind_all(&socks, addr)?;
        balance::apply(cfg.balance, &socks)
    };
    Ok((addr, socks, rcvbuf, applied, Some(claim)))
}

/// Port 0: a probe socket without `SO_REUSEPORT` lets the kernel choose a port no socket uses
/// (an autobind *with* it may land in another group of the same user); it then enables
/// `SO_REUSEPORT` so our sockets can join it, and is closed once they have. No one knows the
/// port before this returns, so nothing arrives before the balancing is attached.
fn bind_any_port(cfg: &UdpGroupConfig) -> Result<Bound, NetError> {
    let mut addr = cfg.addr;
    let what = "port probe";
    let probe = new_socket(addr, what)?;
    probe
        .bind(&addr.into())
        .map_err(|e| NetError::bind(Transport::Udp, what.to_owned(), addr, e))?;
    let bound = probe
        .local_addr()
        .ok()
        .and_then(|a| a.as_socket())
        .ok_or_else(|| {
            NetError::socket(
                Transport::Udp,
                "read the chosen port",
                what,
                addr,
                std::io::Error::other("no address"),
            )
        })?;
    addr.set_port(bound.port());
    probe
        .set_reuse_port(true)
        .map_err(|e| NetError::socket(Transport::Udp, "set SO_REUSEPORT", what, addr, e))?;
    let (socks, rcvbuf) = configured_sockets(cfg, addr)?;
    bind_all(&socks, addr)?;
    // The group now holds the probe and our sockets; closing the probe leaves ours only.
    drop(probe);
    let applied = balance::apply(cfg.balance, &socks);
    Ok((addr, socks, rcvbuf, applied, None))
}

/// `cfg.sockets` sockets for `addr`, every option set, none bound.
fn configured_sockets(
    cfg: &UdpGroupConfig,
    addr: SocketAddr,
) -> Result<(Vec<Socket>, Vec<RcvbufReport>), NetError> {
    let n = cfg.sockets;
    let mut socks = Vec::with_capacity(n);
    let mut rcvbuf = Vec::with_capacity(n);
    for i in 0..n {
        let what = format!("socket {i} of {n}");
        let err = |op| {
            let what = what.clone();
            move |e| NetError::socket(Transport::Udp, op, what, addr, e)
        };
        let s = new_socket(addr, &what)?;
        s.set_reuse_port(true).map_err(err("set SO_REUSEPORT"))?;
        sys::set_int_opt(&s, sys::SO_RXQ_OVFL, 1).map_err(err("enable SO_RXQ_OVFL"))?;
        let report = rcvbuf::apply(&s, i, cfg.rcvbuf).map_err(err("set the receive buffer"))?;
        socks.push(s);
        rcvbuf.push(report);
    }
    Ok((socks, rcvbuf))
}

fn bind_all(socks: &[Socket], addr: SocketAddr) -> Result<(), NetError> {
    let n = socks.len();
    for (i, s) in socks.iter().enumerate() {
        s.bind(&addr.into())
            .map_err(|e| NetError::bind(Transport::Udp, format!("socket {i} of {n}"), addr, e))?;
    }
    Ok(())
}

fn new_socket(addr: SocketAddr, what: &str) -> Result<Socket, NetError> {
    let domain = Domain::for_address(addr);
    let s = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| NetError::socket(Transport::Udp, "create the socket", what, addr, e))?;
    if addr.is_ipv6() {
        // Dual stack, like SC4S_IPV6_ENABLE: one [::] group serves IPv4 and IPv6 senders.
        s.set_only_v6(false)
            .map_err(|e| NetError::socket(Transport::Udp, "clear IPV6_V6ONLY", what, addr, e))?;
    }
    Ok(s)
}
