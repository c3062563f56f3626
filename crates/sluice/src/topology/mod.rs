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
//! Each port has the plan of its transport ([`ListenerPlan`]: the UDP plan lives with the UDP
//! listener, the stream plan with the stream listeners). Ports are keyed by number within
//! their namespace ([`PortKey`]: UDP, or TCP for the plain and TLS stream listeners, which
//! share the TCP port numbers), since that is what a socket owns.

pub mod running;

use std::collections::BTreeMap;

use sluice_net::Transport as Namespace;

use crate::config::{Config, ConfigError, Transport};
use crate::listen::stream::{StreamPlan, TlsPlan};
use crate::listen::udp::UdpPlan;

/// A port in its namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortKey {
    pub net: Namespace,
    pub port: u16,
}

impl std::fmt::Display for PortKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let net = match self.net {
            Namespace::Udp => "UDP",
            Namespace::Tcp => "TCP",
        };
        write!(f, "{net} port {}", self.port)
    }
}

/// One port to serve, by the kind of listener that serves it.
#[derive(Clone, Debug, PartialEq)]
pub enum ListenerPlan {
    /// UDP and RFC 5426: receive threads on a reuseport group.
    Udp(UdpPlan),
    /// TCP, RFC 6587, TLS and RFC 5425: a connection loop per accepted connection.
    Stream(StreamPlan),
}

impl ListenerPlan {
    pub fn spec(&self) -> &crate::config::ListenerSpec {
        match self {
            ListenerPlan::Udp(p) => &p.spec,
            ListenerPlan::Stream(p) => &p.spec,
        }
    }

    pub fn key(&self) -> PortKey {
        let net = match self {
            ListenerPlan::Udp(_) => Namespace::Udp,
            ListenerPlan::Stream(_) => Namespace::Tcp,
        };
        PortKey {
            net,
            port: self.spec().port,
        }
    }

    /// What a reload does to this running port when `next` is asked for on it (`next` may
    /// be adjusted to what will really run); `needs_restart` collects what only a restart
    /// applies. `new_tls`: the TLS setup changes.
    fn change_to(
        &self,
        next: &mut ListenerPlan,
        new_tls: bool,
        needs_restart: &mut Vec<String>,
    ) -> Option<Change> {
        match (self, next) {
            (ListenerPlan::Udp(o), ListenerPlan::Udp(n)) => {
                needs_restart.extend(o.keep_sockets(n));
                (o.spec.id != n.spec.id).then_some(Change::Restart)
            }
            (ListenerPlan::Stream(o), ListenerPlan::Stream(n)) => {
                let replace = !o.same_as(n) || (new_tls && n.spec.kind == Transport::Tls);
                replace.then_some(Change::Replace)
            }
            // One key, one namespace, one kind: never two kinds on one key.
            _ => Some(Change::Replace),
        }
    }
}

/// Every port to serve and the TLS setup.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    pub listeners: BTreeMap<PortKey, ListenerPlan>,
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
    /// Ports that change; the others are left alone.
    pub listeners: BTreeMap<PortKey, Change>,
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
            let plan = match spec.kind {
                Transport::Udp => ListenerPlan::Udp(UdpPlan::new(spec, config)),
                Transport::Tcp | Transport::Tls => {
                    let tls = spec.kind == Transport::Tls;
                    let proto = spec.proto;
                    let Some(plan) = StreamPlan::new(spec, config) else {
                        continue;
                    };
                    if tls {
                        profiles.push(proto);
                    }
                    ListenerPlan::Stream(plan)
                }
            };
            t.listeners.insert(plan.key(), plan);
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
        self.listeners.values().map(|p| p.spec().id.as_str())
    }

    /// The UDP ports.
    pub fn udp(&self) -> impl Iterator<Item = &UdpPlan> {
        self.listeners.values().filter_map(|p| match p {
            ListenerPlan::Udp(u) => Some(u),
            ListenerPlan::Stream(_) => None,
        })
    }

    /// The stream ports.
    pub fn streams(&self) -> impl Iterator<Item = &StreamPlan> {
        self.listeners.values().filter_map(|p| match p {
            ListenerPlan::Stream(s) => Some(s),
            ListenerPlan::Udp(_) => None,
        })
    }

    /// The transition from this (running) topology to `next`.
    pub fn transition(&self, mut next: Topology) -> Transition {
        let new_tls = next.tls.is_some() && self.tls != next.tls;
        let mut needs_restart = Vec::new();
        let mut listeners = BTreeMap::new();
        for (&key, o) in &self.listeners {
            match next.listeners.get_mut(&key) {
                None => {
                    listeners.insert(key, Change::Close);
                }
                Some(n) => {
                    if let Some(c) = o.change_to(n, new_tls, &mut needs_restart) {
                        listeners.insert(key, c);
                    }
                }
            }
        }
        for &key in next.listeners.keys() {
            if !self.listeners.contains_key(&key) {
                listeners.insert(key, Change::Open);
            }
        }
        Transition {
            next,
            listeners,
            new_tls,
            needs_restart,
        }
    }
}

impl Transition {
    /// Nothing to open, close, replace or restart.
    pub fn leaves_listeners_alone(&self) -> bool {
        self.listeners.is_empty() && !self.new_tls
    }

    /// The ports of `net` that change, by number.
    pub fn changes_of(&self, net: Namespace) -> BTreeMap<u16, Change> {
        let of_net = self.listeners.iter().filter(|(k, _)| k.net == net);
        of_net.map(|(k, c)| (k.port, *c)).collect()
    }
}

#[cfg(test)]
mod tests;
