//! The sockets and tasks that realise a [`Topology`]: bound and started once, changed by
//! reloads, stopped at shutdown.
//!
//! A change is two steps. [`Running::prepare`] does everything that can fail — loading a new
//! TLS setup, claiming and binding new ports — without touching what runs; an error there
//! drops what it bound and leaves the daemon exactly as it was. [`Running::commit`] then
//! switches over in the order that loses nothing: new ports start, changed ones switch, and
//! ports that are no longer configured close last (a UDP port reads what its sockets still
//! hold first; a stream port stops accepting and lets its open connections finish).

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use sluice_net::{PortClaimConfig, UdpGroup};
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use super::{Change, Topology, Transition, UdpPlan};
use crate::listen::stream::{ActiveStream, BoundStream, StreamShared};
use crate::listen::udp::{UdpContext, UdpPort};
use crate::output::Submit;
use crate::pipeline::SharedProcessor;
use crate::telemetry::state::{Ports, TcpPortMetrics, UdpPortMetrics};
use crate::tls::TlsManager;
use crate::window::{MemoryBudget, Window};

/// What every listener shares, whatever the topology.
#[derive(Debug, Clone)]
pub struct Shared {
    pub processor: SharedProcessor,
    pub memory: Arc<MemoryBudget>,
    pub udp_window: Arc<Window>,
    pub tcp_window: Arc<Window>,
    pub rt: Handle,
    /// The daemon's stop; every listener's own token is a child of it.
    pub stop: CancellationToken,
    pub claim: PortClaimConfig,
}

#[derive(Debug)]
struct ActiveUdp {
    plan: UdpPlan,
    port: UdpPort,
    metrics: Arc<UdpPortMetrics>,
}

#[derive(Debug)]
struct ActiveTls {
    manager: Arc<TlsManager>,
    /// Stops the manager's file watch.
    watch: CancellationToken,
}

/// A stream port that stopped accepting and still has connections open.
#[derive(Debug)]
struct Draining {
    task: tokio::task::JoinHandle<()>,
    metrics: Arc<TcpPortMetrics>,
}

/// The fallible half of a transition, done: see the module docs.
#[derive(Debug)]
pub struct Prepared {
    transition: Transition,
    tls: Option<TlsManager>,
    udp: BTreeMap<u16, UdpGroup>,
    streams: BTreeMap<u16, BoundStream>,
}

/// The running topology.
#[derive(Debug)]
pub struct Running {
    shared: Shared,
    /// Dropped at shutdown, so the destination sees the end once the receivers are done.
    out: Submit,
    plan: Topology,
    udp: BTreeMap<u16, ActiveUdp>,
    streams: BTreeMap<u16, ActiveStream>,
    tls: Option<ActiveTls>,
    draining: Vec<Draining>,
    ports: Arc<ArcSwap<Ports>>,
}

impl Running {
    /// Nothing open yet; [`prepare`](Self::prepare) and [`commit`](Self::commit) the
    /// transition from the empty topology to start.
    pub fn new(shared: Shared, out: Submit) -> Running {
        Running {
            shared,
            out,
            plan: Topology::default(),
            udp: BTreeMap::new(),
            streams: BTreeMap::new(),
            tls: None,
            draining: Vec::new(),
            ports: Arc::new(ArcSwap::from_pointee(Ports::default())),
        }
    }

    /// The topology in force.
    pub fn plan(&self) -> &Topology {
        &self.plan
    }

    pub fn processor(&self) -> &SharedProcessor {
        &self.shared.processor
    }

    /// The TLS setup in service, for a certificate reload.
    pub fn tls(&self) -> Option<&Arc<TlsManager>> {
        self.tls.as_ref().map(|t| &t.manager)
    }

    /// What `/metrics` reads: republished after every change.
    pub fn ports(&self) -> Arc<ArcSwap<Ports>> {
        self.ports.clone()
    }

    /// Connections the stream ports may hold at once (for the open-file limit).
    pub fn stream_connections(&self) -> u64 {
        let plans = self.plan.streams.values();
        plans.map(|s| s.settings.port_limit() as u64).sum()
    }

    /// Loads a new TLS setup and binds every new socket of `t`. Nothing running changes; on
    /// error, whatever was bound is closed again.
    pub fn prepare(&self, t: Transition) -> anyhow::Result<Prepared> {
        let tls = match (&t.next.tls, t.new_tls) {
            (Some(plan), true) => Some(crate::listen::stream::load_tls(plan)?),
            _ => None,
        };
        let claim = &self.shared.claim;
        let mut udp = BTreeMap::new();
        for (&port, _) in t.udp.iter().filter(|(_, c)| **c == Change::Open) {
            udp.insert(port, crate::listen::udp::bind(&t.next.udp[&port], claim)?);
        }
        // New ports first. Replacement sockets on ports this process holds come last: they
        // take connections into their queue as soon as they listen, so as little as
        // possible should be able to fail after them.
        let mut streams = BTreeMap::new();
        for (&port, _) in t.streams.iter().filter(|(_, c)| **c == Change::Open) {
            let plan = &t.next.streams[&port];
            streams.insert(port, crate::listen::stream::bind(plan, claim, false)?);
        }
        for (&port, _) in t.streams.iter().filter(|(_, c)| **c == Change::Replace) {
            let plan = &t.next.streams[&port];
            streams.insert(port, crate::listen::stream::bind(plan, claim, true)?);
        }
        Ok(Prepared {
            transition: t,
            tls,
            udp,
            streams,
        })
    }

    /// Switches over to a prepared transition; the processor for it must be in place
    /// already. Cannot fail except where the system refuses a thread: each such listener is
    /// left closed, and the errors are returned.
    pub fn commit(&mut self, p: Prepared) -> Vec<String> {
        let Prepared {
            transition: t,
            tls,
            mut udp,
            mut streams,
        } = p;
        let mut next = t.next;
        let mut errors = Vec::new();
        let old_tls = match tls {
            Some(m) => {
                let manager = Arc::new(m);
                let watch = self.shared.stop.child_token();
                let interval = next.tls.as_ref().map(|t| t.config.reload_interval);
                manager.watch(interval.unwrap_or_default(), watch.clone());
                self.tls.replace(ActiveTls { manager, watch })
            }
            None => None,
        };

        // 1. New and replacement stream ports start.
        let shared = StreamShared {
            memory: self.shared.memory.clone(),
            processor: self.shared.processor.clone(),
            window: self.shared.tcp_window.clone(),
            stop: self.shared.stop.clone(),
        };
        let tls_manager = self.tls.as_ref().map(|t| t.manager.clone());
        for (port, bound) in std::mem::take(&mut streams) {
            let old = self.streams.remove(&port);
            // The metrics of the port continue: from the listener being replaced, or from an
            // earlier one on this port whose connections are still draining.
            let reuse = old.as_ref().map(|o| o.metrics.clone()).or_else(|| {
                let d = self.draining.iter().find(|d| d.metrics.port == port);
                d.map(|d| d.metrics.clone())
            });
            let mut new = crate::listen::stream::start(
                bound,
                &shared,
                tls_manager.as_deref(),
                reuse.as_deref(),
                &self.out,
            );
            if let Some(mut old) = old {
                new.claim = old.claim.take().or(new.claim);
                self.retire_stream(old, "its settings changed");
            }
            self.streams.insert(port, new);
        }

        // 2. New UDP ports start; UDP ports with a new listener id restart their threads.
        for (port, group) in std::mem::take(&mut udp) {
            let plan = next.udp[&port].clone();
            match UdpPort::start(group, self.udp_context(&plan), &self.out) {
                Ok(p) => {
                    log_udp_listening(&p);
                    let metrics = Arc::new(p.metrics(&plan.spec.id, plan.sockets.balance));
                    self.udp.insert(
                        port,
                        ActiveUdp {
                            plan,
                            port: p,
                            metrics,
                        },
                    );
                }
                Err(e) => {
                    errors.push(format!(
                        "cannot start the receive threads of UDP port {port}: {e}"
                    ));
                    next.udp.remove(&port);
                }
            }
        }
        for (&port, _) in t.udp.iter().filter(|(_, c)| **c == Change::Restart) {
            let plan = next.udp[&port].clone();
            let ctx = self.udp_context(&plan);
            let out = self.out.clone();
            let Some(active) = self.udp.get_mut(&port) else {
                continue;
            };
            let old_id = std::mem::replace(&mut active.plan, plan).spec.id;
            let restarted = tokio::task::block_in_place(|| active.port.restart(ctx, &out));
            if let Err(e) = restarted {
                errors.push(format!(
                    "cannot restart the receive threads of UDP port {port}: {e}"
                ));
            }
            let (id, balance) = (&active.plan.spec.id, active.plan.sockets.balance);
            active.metrics = Arc::new(active.port.metrics(id, balance));
            tracing::info!(port, from = %old_id, to = %id, "UDP listener id changed; its sockets stay open");
        }

        // 3. What is no longer configured closes, last.
        for (&port, _) in t.udp.iter().filter(|(_, c)| **c == Change::Close) {
            if let Some(active) = self.udp.remove(&port) {
                tokio::task::block_in_place(|| active.port.close());
                tracing::info!(port, "closed UDP port (no longer configured)");
            }
        }
        for (&port, _) in t.streams.iter().filter(|(_, c)| **c == Change::Close) {
            if let Some(old) = self.streams.remove(&port) {
                self.retire_stream(old, "no longer configured");
            }
        }
        if let Some(old) = old_tls {
            old.watch.cancel();
        }
        if next.tls.is_none()
            && let Some(t) = self.tls.take()
        {
            t.watch.cancel();
        }
        self.plan = next;
        self.publish();
        errors
    }

    /// Forgets stream ports whose last connection ended (their counters stay in the
    /// telemetry registry). Call it now and then.
    pub fn reap(&mut self) {
        let before = self.draining.len();
        self.draining.retain(|d| !d.task.is_finished());
        if self.draining.len() != before {
            self.publish();
        }
    }

    /// Stops everything: the receivers flush their open batches and end, then the output's
    /// channel closes. Returns when the last batch has been handed over.
    pub async fn shutdown(self) {
        let Running {
            shared,
            out,
            mut udp,
            streams,
            tls,
            draining,
            ..
        } = self;
        shared.stop.cancel();
        drop(out);
        let udp_join = tokio::task::spawn_blocking(move || {
            for a in udp.values_mut() {
                a.port.stop();
            }
            udp
        });
        for s in streams.into_values() {
            let _ = s.task.await;
        }
        for d in draining {
            let _ = d.task.await;
        }
        let _ = udp_join.await;
        drop(tls);
    }

    fn retire_stream(&mut self, old: ActiveStream, why: &str) {
        old.accepting.cancel();
        tracing::info!(
            port = old.plan.spec.port,
            transport = old.plan.spec.proto.label(),
            open_connections = old.metrics.edge.open(),
            "stream listener stops accepting ({why}); its open connections carry on until they end"
        );
        self.draining.push(Draining {
            task: old.task,
            metrics: old.metrics,
        });
    }

    fn udp_context(&self, plan: &UdpPlan) -> UdpContext {
        UdpContext {
            memory: self.shared.memory.clone(),
            listener_id: plan.spec.id.as_str().into(),
            processor: self.shared.processor.clone(),
            window: self.shared.udp_window.clone(),
            fetch_limit: plan.sockets.batch,
            rt: self.shared.rt.clone(),
            stop: self.shared.stop.child_token(),
        }
    }

    fn publish(&self) {
        let udp = self.udp.values().map(|u| u.metrics.clone()).collect();
        let mut tcp: Vec<Arc<TcpPortMetrics>> =
            self.streams.values().map(|s| s.metrics.clone()).collect();
        for d in &self.draining {
            if !tcp
                .iter()
                .any(|m| Arc::ptr_eq(&m.counters, &d.metrics.counters))
            {
                tcp.push(d.metrics.clone());
            }
        }
        self.ports.store(Arc::new(Ports {
            udp,
            tcp,
            tls: self.tls.as_ref().map(|t| t.manager.clone()),
        }));
    }
}

fn log_udp_listening(port: &UdpPort) {
    tracing::info!(
        addr = %port.local_addr,
        sockets = port.counters.len(),
        balance = %port.group.balance_mode(),
        rcvbuf = port.group.rcvbuf_reports().first().map_or(0, |r| r.effective),
        "listening on UDP"
    );
}
