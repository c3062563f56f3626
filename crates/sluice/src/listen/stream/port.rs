//! One stream port: its plan ([`StreamPlan`], and the [`TlsPlan`] the TLS ports share),
//! [`bind`], which claims the port and opens its listening sockets so that a port conflict is
//! one clear error naming the setting, and [`start`], which serves them. [`load_tls`] loads
//! and checks the certificates the TLS ports share. The running topology calls these at
//! startup and on reload.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sluice_net::{PortClaim, PortClaimConfig, Transport as NetTransport};
use sluice_proto::classify::Transport;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ListenerSpec, SourceProto, StreamPortConfig, TlsConfig};
use crate::listen::stream::conn::{TcpContext, TcpLimits, TcpPort, TcpStats};
use crate::listen::stream::edge::{CloseLogs, Edge};
use crate::output::Submit;
use crate::pipeline::{ReceiverCounters, SharedProcessor};
use crate::telemetry::state::TcpPortMetrics;
use crate::tls::TlsManager;
use crate::window::{MemoryBudget, Window};

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
    /// The port `spec` asks for, with `config`'s settings for its protocol; `None` when the
    /// protocol has no stream settings (a UDP one).
    pub fn new(spec: ListenerSpec, config: &Config) -> Option<StreamPlan> {
        let settings = config.stream.get(spec.proto).cloned()?;
        Some(StreamPlan {
            addr: SocketAddr::new(config.listen.address, spec.port),
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
        })
    }

    /// Equal apart from the setting that named the port (a label for messages).
    pub fn same_as(&self, other: &StreamPlan) -> bool {
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

/// Loads the TLS setup: the certificate, key and trust store, checked, with each profile's
/// options and ciphers. Errors name the file or setting to change.
pub fn load_tls(plan: &TlsPlan) -> anyhow::Result<TlsManager> {
    TlsManager::load(&plan.config, &plan.profiles).map_err(|e| {
        anyhow::anyhow!("cannot start the TLS listeners (SC4S_SOURCE_TLS_ENABLE=yes): {e}")
    })
}

/// A stream port with its listening sockets open; nothing is accepted yet (connections wait
/// in the kernel's queue).
#[derive(Debug)]
pub struct BoundStream {
    pub plan: StreamPlan,
    port: TcpPort,
}

/// Claims `plan`'s port and binds its listening sockets. With `claimed`, this process holds
/// the port already (a reload replacing its listener): the new sockets join the running
/// ones' `SO_REUSEPORT` group and the claim moves over when they start.
pub fn bind(
    plan: &StreamPlan,
    claim: &PortClaimConfig,
    claimed: bool,
) -> anyhow::Result<BoundStream> {
    let spec = &plan.spec;
    let word = spec.proto.as_sc4s();
    let addr = plan.addr;
    // Claimed before binding: a port another process holds is refused by name instead of
    // silently joining its SO_REUSEPORT group.
    let held = if claimed {
        None
    } else {
        let held = PortClaim::acquire(NetTransport::Tcp, addr, claim)
            .map_err(|e| crate::listen::listen_error(word, addr, &spec.setting, &e))?;
        crate::listen::log_sharing(word, addr, held.shared_with());
        Some(held)
    };
    let rcvbuf = (plan.settings.rcvbuf.0 > 0).then_some(plan.settings.rcvbuf.0 as usize);
    let mut port =
        crate::listen::stream::conn::bind(addr, plan.settings.sockets, rcvbuf).map_err(|e| {
            anyhow::anyhow!(
                "cannot listen on {word} {addr}: {e}{}; change the port with {}",
                crate::listen::privilege_hint(&e, spec.port),
                spec.setting
            )
        })?;
    port.claim = held;
    for r in &port.rcvbuf {
        if let Some(hint) = r.stream_hint(word) {
            tracing::warn!(
                port = spec.port,
                "receive buffer smaller than SC4S_SOURCE_{word}_SO_RCVBUFF: {hint}"
            );
            break;
        }
    }
    Ok(BoundStream {
        plan: plan.clone(),
        port,
    })
}

/// What the stream listeners share with the rest of the pipeline.
#[derive(Debug, Clone)]
pub struct StreamShared {
    pub memory: Arc<MemoryBudget>,
    pub processor: SharedProcessor,
    pub window: Arc<Window>,
    /// The daemon's stop: ends every connection.
    pub stop: CancellationToken,
}

/// A serving stream port.
#[derive(Debug)]
pub struct ActiveStream {
    pub plan: StreamPlan,
    /// Ends after the port stopped accepting and its last connection's last batch was
    /// handed over.
    pub task: tokio::task::JoinHandle<()>,
    /// The port's own stop: cancel it to stop accepting.
    pub accepting: CancellationToken,
    /// The port's claim (its lock file), held while the port is open.
    pub claim: Option<PortClaim>,
    pub counters: PortCounters,
    pub metrics: Arc<TcpPortMetrics>,
}

/// What a stream port counts on and its connection table: a listener that replaces it on the
/// same port takes them over, so the port's metrics continue and its connection limit covers
/// old and new connections.
#[derive(Debug, Clone)]
pub struct PortCounters {
    pub counters: Arc<ReceiverCounters>,
    pub stats: Arc<TcpStats>,
    pub edge: Arc<Edge>,
}

/// Starts serving `bound`; batches go to `out`. `tls` is the TLS setup for a TLS port.
/// `reuse`: the counters of a listener this one replaces on the same port.
pub fn start(
    bound: BoundStream,
    shared: &StreamShared,
    tls: Option<&TlsManager>,
    reuse: Option<&PortCounters>,
    out: &Submit,
) -> ActiveStream {
    let BoundStream { plan, mut port } = bound;
    let spec = &plan.spec;
    let kept = match reuse {
        Some(m) => {
            m.edge.set_limit(plan.settings.port_limit());
            m.clone()
        }
        None => {
            let m = crate::telemetry::metrics();
            let transport = spec.proto.label();
            let local = port.local_addr.port();
            let stats = TcpStats::register(m, &spec.id, transport, local);
            PortCounters {
                counters: ReceiverCounters::register(m, &spec.id, transport, local, None),
                stats: stats.clone(),
                edge: Edge::with_events(plan.settings.port_limit(), stats),
            }
        }
    };
    let PortCounters {
        counters,
        stats,
        edge,
    } = kept.clone();
    let tls = if spec.kind == Transport::Tls {
        tls.and_then(|t| t.endpoint(spec.proto).map(|e| (t, e)))
    } else {
        None
    };
    match &tls {
        Some((m, t)) => tracing::info!(
            addr = %port.local_addr,
            transport = spec.proto.label(),
            listener = %spec.id,
            sockets = port.listeners.len(),
            max_connections = plan.settings.port_limit(),
            versions = %t.policy.versions_label(),
            suites = %t.policy.suites_label(),
            client_certificates = m.client_auth().label(),
            "listening on TLS"
        ),
        None => tracing::info!(
            addr = %port.local_addr,
            transport = spec.proto.label(),
            listener = %spec.id,
            sockets = port.listeners.len(),
            max_connections = plan.settings.port_limit(),
            "listening on TCP"
        ),
    }
    let tls = tls.map(|(_, e)| e);
    let metrics = Arc::new(TcpPortMetrics {
        listener: spec.id.clone(),
        port: port.local_addr.port(),
        transport: spec.proto.label(),
        counters: counters.clone(),
        stats: stats.clone(),
        edge: edge.clone(),
        rcvbuf: port.rcvbuf.clone(),
    });
    let accepting = shared.stop.child_token();
    let ctx = Arc::new(TcpContext {
        memory: shared.memory.clone(),
        listener_id: spec.id.as_str().into(),
        processor: shared.processor.clone(),
        window: shared.window.clone(),
        limits: plan.limits.clone(),
        counters,
        stats,
        stop: shared.stop.clone(),
        accepting: accepting.clone(),
        transport: if tls.is_some() {
            Transport::Tls
        } else {
            Transport::Tcp
        },
        edge,
        tls,
        proxy: plan.proxy,
        parallelize: plan.parallelize,
        warnings: CloseLogs::new(Duration::from_secs(10)),
        no_parse: spec.proto == crate::config::SourceProto::Rfc6587NoParse,
    });
    let claim = port.claim.take();
    let task = tokio::spawn(crate::listen::stream::conn::serve(port, ctx, out.clone()));
    ActiveStream {
        plan,
        task,
        accepting,
        claim,
        counters: kept,
        metrics,
    }
}
