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

use super::{Change, ListenerPlan, PortKey, Topology, Transition};
use crate::listen::stream::port::PortCounters;
use crate::listen::stream::{ActiveStream, BoundStream, StreamShared};
use crate::listen::udp::{UdpContext, UdpPlan, UdpPort};
use crate::output::Submit;
use crate::pipeline::SharedProcessor;
use crate::telemetry::state::{PortMetrics, Ports, TcpPortMetrics, UdpPortMetrics};
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

/// A serving port, by the kind of listener that serves it.
#[derive(Debug)]
enum Active {
    Udp(ActiveUdp),
    Stream(ActiveStream),
}

/// A port bound by [`Running::prepare`], not serving yet.
#[derive(Debug)]
enum Bound {
    Udp(UdpGroup),
    Stream(BoundStream),
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
    counters: PortCounters,
    metrics: Arc<TcpPortMetrics>,
}

/// The fallible half of a transition, done: see the module docs.
#[derive(Debug)]
pub struct Prepared {
    transition: Transition,
    tls: Option<TlsManager>,
    bound: BTreeMap<PortKey, Bound>,
}

/// The running topology.
#[derive(Debug)]
pub struct Running {
    shared: Shared,
    /// Dropped at shutdown, so the destination sees the end once the receivers are done.
    out: Submit,
    plan: Topology,
    listeners: BTreeMap<PortKey, Active>,
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
            listeners: BTreeMap::new(),
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
        let plans = self.plan.streams();
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
        // New ports first. Replacement sockets on ports this process holds come last: they
        // take connections into their queue as soon as they listen, so as little as
        // possible should be able to fail after them.
        let mut bound = BTreeMap::new();
        for change in [Change::Open, Change::Replace] {
            for (&key, _) in t.listeners.iter().filter(|(_, c)| **c == change) {
                let b = match &t.next.listeners[&key] {
                    ListenerPlan::Udp(plan) => Bound::Udp(crate::listen::udp::bind(plan, claim)?),
                    ListenerPlan::Stream(plan) => {
                        let claimed = change == Change::Replace;
                        Bound::Stream(crate::listen::stream::bind(plan, claim, claimed)?)
                    }
                };
                bound.insert(key, b);
            }
        }
        Ok(Prepared {
            transition: t,
            tls,
            bound,
        })
    }

    /// Switches over to a prepared transition; the processor for it must be in place
    /// already. Cannot fail except where the system refuses a thread: each such listener is
    /// left closed, and the errors are returned.
    pub fn commit(&mut self, p: Prepared) -> Vec<String> {
        let Prepared {
            transition: t,
            tls,
            bound,
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

        // 1. New and replacement ports start.
        for (key, b) in bound {
            match b {
                Bound::Stream(bound) => self.start_stream(key, bound),
                Bound::Udp(group) => {
                    let ListenerPlan::Udp(plan) = next.listeners[&key].clone() else {
                        continue;
                    };
                    if let Err(e) = self.start_udp(key, plan, group) {
                        errors.push(e);
                        next.listeners.remove(&key);
                    }
                }
            }
        }

        // 2. UDP ports with a new listener id restart their threads.
        for (&key, _) in t.listeners.iter().filter(|(_, c)| **c == Change::Restart) {
            let ListenerPlan::Udp(plan) = next.listeners[&key].clone() else {
                continue;
            };
            let ctx = self.udp_context(&plan);
            let out = self.out.clone();
            let Some(Active::Udp(active)) = self.listeners.get_mut(&key) else {
                continue;
            };
            let old_id = std::mem::replace(&mut active.plan, plan).spec.id;
            let restarted = tokio::task::block_in_place(|| active.port.restart(ctx, &out));
            if let Err(e) = restarted {
                errors.push(format!(
                    "cannot restart the receive threads of UDP port {}: {e}",
                    key.port
                ));
            }
            let (id, balance) = (&active.plan.spec.id, active.plan.sockets.balance);
            active.metrics = Arc::new(active.port.metrics(id, balance));
            tracing::info!(port = key.port, from = %old_id, to = %id, "UDP listener id changed; its sockets stay open");
        }

        // 3. What is no longer configured closes, last.
        for (&key, _) in t.listeners.iter().filter(|(_, c)| **c == Change::Close) {
            match self.listeners.remove(&key) {
                Some(Active::Udp(active)) => {
                    tokio::task::block_in_place(|| active.port.close());
                    tracing::info!(port = key.port, "closed UDP port (no longer configured)");
                }
                Some(Active::Stream(old)) => self.retire_stream(old, "no longer configured"),
                None => {}
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

    /// Starts a bound stream port; a replaced listener on the same port stops accepting.
    fn start_stream(&mut self, key: PortKey, bound: BoundStream) {
        let shared = StreamShared {
            memory: self.shared.memory.clone(),
            processor: self.shared.processor.clone(),
            window: self.shared.tcp_window.clone(),
            stop: self.shared.stop.clone(),
        };
        let tls_manager = self.tls.as_ref().map(|t| t.manager.clone());
        let old = match self.listeners.remove(&key) {
            Some(Active::Stream(old)) => Some(old),
            Some(other) => {
                self.listeners.insert(key, other);
                None
            }
            None => None,
        };
        // The metrics of the port continue: from the listener being replaced, or from an
        // earlier one on this port whose connections are still draining.
        let reuse = old.as_ref().map(|o| o.counters.clone()).or_else(|| {
            let d = self.draining.iter().find(|d| d.metrics.port == key.port);
            d.map(|d| d.counters.clone())
        });
        let mut new = crate::listen::stream::start(
            bound,
            &shared,
            tls_manager.as_deref(),
            reuse.as_ref(),
            &self.out,
        );
        if let Some(mut old) = old {
            new.claim = old.claim.take().or(new.claim);
            self.retire_stream(old, "its settings changed");
        }
        self.listeners.insert(key, Active::Stream(new));
    }

    /// Starts the receive threads of a bound UDP port.
    fn start_udp(&mut self, key: PortKey, plan: UdpPlan, group: UdpGroup) -> Result<(), String> {
        match UdpPort::start(group, self.udp_context(&plan), &self.out) {
            Ok(p) => {
                log_udp_listening(&p);
                let metrics = Arc::new(p.metrics(&plan.spec.id, plan.sockets.balance));
                let active = ActiveUdp {
                    plan,
                    port: p,
                    metrics,
                };
                self.listeners.insert(key, Active::Udp(active));
                Ok(())
            }
            Err(e) => Err(format!(
                "cannot start the receive threads of UDP port {}: {e}",
                key.port
            )),
        }
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
            listeners,
            tls,
            draining,
            ..
        } = self;
        shared.stop.cancel();
        drop(out);
        let mut udp = Vec::new();
        let mut streams = Vec::new();
        for active in listeners.into_values() {
            match active {
                Active::Udp(a) => udp.push(a),
                Active::Stream(s) => streams.push(s),
            }
        }
        let udp_join = tokio::task::spawn_blocking(move || {
            for a in &mut udp {
                a.port.stop();
            }
            udp
        });
        for s in streams {
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
            counters: old.counters,
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
        let mut listeners: Vec<PortMetrics> = self
            .listeners
            .values()
            .map(|a| match a {
                Active::Udp(u) => PortMetrics::Udp(u.metrics.clone()),
                Active::Stream(s) => PortMetrics::Stream(s.metrics.clone()),
            })
            .collect();
        for d in &self.draining {
            let shown = listeners.iter().any(|m| match m {
                PortMetrics::Stream(m) => Arc::ptr_eq(&m.counters, &d.metrics.counters),
                PortMetrics::Udp(_) => false,
            });
            if !shown {
                listeners.push(PortMetrics::Stream(d.metrics.clone()));
            }
        }
        self.ports.store(Arc::new(Ports {
            listeners,
            tls: self.tls.as_ref().map(|t| t.manager.stats.clone()),
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
