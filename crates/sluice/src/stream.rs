//! Setting up the stream listeners (TCP, RFC 6587, TLS, RFC 5425) as one value: bind every
//! port and load TLS first ([`StreamListeners::bind`], so a port conflict or an unusable
//! certificate is one clear startup error), then serve ([`StreamListeners::start`]). The
//! daemon holds the result; the TLS reload hook is [`RunningStreams::tls`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sluice_hec::EncodedBatch;
use sluice_net::{PortClaim, PortClaimConfig, Transport as NetTransport};
use sluice_proto::classify::Transport;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ListenerKind, ListenerSpec, SourceProto, StreamPortConfig};
use crate::edge::{Edge, LogLimiter};
use crate::metrics::TcpPortMetrics;
use crate::pipeline::{Processor, ReceiverCounters};
use crate::tcp::{TcpContext, TcpLimits, TcpPort, TcpStats};
use crate::tls::TlsManager;
use crate::window::{MemoryBudget, Window};

struct Bound {
    spec: ListenerSpec,
    port: TcpPort,
    settings: StreamPortConfig,
}

/// Every stream port, bound, with TLS loaded; nothing is read yet.
pub struct StreamListeners {
    ports: Vec<Bound>,
    tls: Option<Arc<TlsManager>>,
}

/// What the stream listeners share with the rest of the pipeline.
#[derive(Debug, Clone)]
pub struct StreamShared {
    pub memory: Arc<MemoryBudget>,
    pub processor: Arc<Processor>,
    pub window: Arc<Window>,
    pub stop: CancellationToken,
}

/// Serving stream listeners.
#[derive(Debug)]
pub struct RunningStreams {
    /// One per port; each ends after `stop` once its last batch is handed over.
    pub tasks: Vec<tokio::task::JoinHandle<()>>,
    pub metrics: Vec<TcpPortMetrics>,
    /// The certificate reload hook (`TlsManager::reload`), when a TLS port is open.
    pub tls: Option<Arc<TlsManager>>,
}

impl StreamListeners {
    /// Loads TLS (when a TLS or RFC 5425 port is configured) and binds every stream port
    /// of `specs`. Errors name the setting or file to change.
    pub fn bind(
        config: &Config,
        specs: &[ListenerSpec],
        claim: &PortClaimConfig,
    ) -> anyhow::Result<StreamListeners> {
        let mut tls_protos: Vec<SourceProto> = specs
            .iter()
            .filter(|s| s.kind == ListenerKind::Tls)
            .map(|s| s.proto)
            .collect();
        tls_protos.sort();
        tls_protos.dedup();
        let tls = if tls_protos.is_empty() {
            None
        } else {
            let m = TlsManager::load(&config.tls, &tls_protos).map_err(|e| {
                anyhow::anyhow!("cannot start the TLS listeners (SC4S_SOURCE_TLS_ENABLE=yes): {e}")
            })?;
            Some(Arc::new(m))
        };
        let mut ports = Vec::new();
        for spec in specs.iter().filter(|s| s.kind != ListenerKind::Udp) {
            let Some(settings) = config.stream.get(spec.proto).cloned() else {
                continue;
            };
            let addr = SocketAddr::new(config.listen.address, spec.port);
            let rcvbuf = (settings.rcvbuf.0 > 0).then_some(settings.rcvbuf.0 as usize);
            // Claimed before binding: a port another process holds is refused by name
            // instead of silently joining its SO_REUSEPORT group.
            let held = PortClaim::acquire(NetTransport::Tcp, addr, claim).map_err(|e| {
                crate::daemon::listen_error(spec.proto.as_sc4s(), addr, &spec.setting, &e)
            })?;
            crate::daemon::log_sharing(spec.proto.as_sc4s(), addr, held.shared_with());
            let mut port = crate::tcp::bind(addr, settings.sockets, rcvbuf).map_err(|e| {
                anyhow::anyhow!(
                    "cannot listen on {} {addr}: {e}{}; change the port with {}",
                    spec.proto.as_sc4s(),
                    crate::daemon::privilege_hint(&e, spec.port),
                    spec.setting
                )
            })?;
            port.claim = Some(held);
            for r in &port.rcvbuf {
                if let Some(hint) = r.stream_hint(spec.proto.as_sc4s()) {
                    tracing::warn!(
                        port = spec.port,
                        "receive buffer smaller than SC4S_SOURCE_{}_SO_RCVBUFF: {hint}",
                        spec.proto.as_sc4s()
                    );
                    break;
                }
            }
            ports.push(Bound {
                spec: spec.clone(),
                port,
                settings,
            });
        }
        Ok(StreamListeners { ports, tls })
    }

    pub fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }

    /// File descriptors the connection limits may need.
    pub fn max_connections(&self) -> u64 {
        self.ports
            .iter()
            .map(|p| p.settings.max_connections as u64)
            .sum()
    }

    /// The TLS manager, once loaded.
    pub fn tls(&self) -> Option<&Arc<TlsManager>> {
        self.tls.as_ref()
    }

    /// Starts serving every port; batches go to `out`. Also starts the certificate watch.
    pub fn start(
        self,
        config: &Config,
        shared: &StreamShared,
        out: &async_channel::Sender<EncodedBatch>,
    ) -> RunningStreams {
        let mut tasks = Vec::new();
        let mut metrics = Vec::new();
        for Bound {
            spec,
            port,
            settings,
        } in self.ports
        {
            let counters = Arc::new(ReceiverCounters::default());
            let stats = Arc::new(TcpStats::default());
            let edge = Edge::new(settings.max_connections);
            let tls = if spec.kind == ListenerKind::Tls {
                self.tls.as_ref().and_then(|t| t.endpoint(spec.proto))
            } else {
                None
            };
            match &tls {
                Some(t) => tracing::info!(
                    addr = %port.local_addr,
                    transport = spec.proto.label(),
                    listener = %spec.id,
                    sockets = port.listeners.len(),
                    max_connections = settings.max_connections,
                    versions = %t.policy.versions_label(),
                    suites = %t.policy.suites_label(),
                    client_certificates = self.tls.as_ref().map_or("", |m| m.client_auth().label()),
                    "listening on TLS"
                ),
                None => tracing::info!(
                    addr = %port.local_addr,
                    transport = spec.proto.label(),
                    listener = %spec.id,
                    sockets = port.listeners.len(),
                    max_connections = settings.max_connections,
                    "listening on TCP"
                ),
            }
            metrics.push(TcpPortMetrics {
                listener: spec.id.clone(),
                port: port.local_addr.port(),
                transport: spec.proto.label(),
                counters: counters.clone(),
                stats: stats.clone(),
                edge: edge.clone(),
                tls: tls.clone(),
                rcvbuf: port.rcvbuf.clone(),
            });
            let ctx = Arc::new(TcpContext {
                memory: shared.memory.clone(),
                listener_id: spec.id.as_str().into(),
                processor: shared.processor.clone(),
                window: shared.window.clone(),
                limits: TcpLimits {
                    max_message_size: config.listen.max_message_size,
                    frame_timeout: config.tcp.frame_timeout,
                    idle_timeout: config.tcp.idle_timeout,
                },
                counters,
                stats,
                stop: shared.stop.clone(),
                transport: if tls.is_some() {
                    Transport::Tls
                } else {
                    Transport::Tcp
                },
                edge,
                tls,
                proxy: config.tcp.proxy_protocol,
                parallelize: config.tcp.parallelize,
                warnings: LogLimiter::new(Duration::from_secs(10)),
            });
            tasks.push(tokio::spawn(crate::tcp::serve(port, ctx, out.clone())));
        }
        if let Some(t) = &self.tls {
            t.watch(config.tls.reload_interval, shared.stop.clone());
        }
        RunningStreams {
            tasks,
            metrics,
            tls: self.tls,
        }
    }
}
