//! The listeners as `/metrics` and `/health` read them: each open port, its sockets and
//! connections, and the TLS certificate in service.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;
use sluice_net::{RcvbufReport, SocketStats};

use super::{family, single};
use crate::telemetry::LabelStr;
use crate::telemetry::events::{ReceiverCounters, StreamEvents};

/// A stream port's connection table, read at scrape time.
pub trait Connections: Send + Sync + std::fmt::Debug {
    /// Connections open now.
    fn open(&self) -> usize;
    /// The port's connection limit.
    fn limit(&self) -> usize;
}

/// One UDP port as the registry sees it.
#[derive(Debug, Clone)]
pub struct UdpPortMetrics {
    pub listener: String,
    pub port: u16,
    pub requested_balance: &'static str,
    pub balance: &'static str,
    /// Why the balancing mode differs from the requested one, in words: shown by `/health`
    /// (a sentence is no label value).
    pub fallback_reason: Option<String>,
    pub sockets: Vec<Arc<SocketStats>>,
    pub counters: Vec<Arc<ReceiverCounters>>,
    pub rcvbuf: Vec<RcvbufReport>,
}

/// One stream port (TCP, RFC 6587, TLS, RFC 5425).
#[derive(Debug)]
pub struct TcpPortMetrics {
    pub listener: String,
    pub port: u16,
    /// `tcp`, `rfc6587`, `tls` or `rfc5425`.
    pub transport: &'static str,
    pub counters: Arc<ReceiverCounters>,
    pub stats: Arc<StreamEvents>,
    pub edge: Arc<dyn Connections>,
    pub rcvbuf: Vec<RcvbufReport>,
}

/// One open port, of whichever transport.
#[derive(Debug, Clone)]
pub enum PortMetrics {
    Udp(Arc<UdpPortMetrics>),
    Stream(Arc<TcpPortMetrics>),
}

/// The certificate in service, for `/metrics` (its reloads are counted by the TLS events).
#[derive(Debug, Default)]
pub struct CertificateState {
    /// `notAfter` of the certificate in service, Unix seconds.
    pub not_after: AtomicI64,
}

/// The ports open now, and stream ports that stopped accepting but still have connections.
#[derive(Debug, Default)]
pub struct Ports {
    pub listeners: Vec<PortMetrics>,
    /// The TLS certificate in service.
    pub tls: Option<Arc<CertificateState>>,
}

impl Ports {
    pub fn udp(&self) -> impl Iterator<Item = &Arc<UdpPortMetrics>> {
        self.listeners.iter().filter_map(|p| match p {
            PortMetrics::Udp(u) => Some(u),
            PortMetrics::Stream(_) => None,
        })
    }

    pub fn streams(&self) -> impl Iterator<Item = &Arc<TcpPortMetrics>> {
        self.listeners.iter().filter_map(|p| match p {
            PortMetrics::Stream(t) => Some(t),
            PortMetrics::Udp(_) => None,
        })
    }

    /// Datagrams the kernel dropped on every UDP socket so far.
    pub fn kernel_drops(&self) -> u64 {
        let sockets = self.udp().flat_map(|u| u.sockets.iter());
        sockets.map(|s| s.kernel_drops()).sum()
    }

    /// `/health`'s `connections` and `udp` members.
    pub(super) fn details(&self) -> serde_json::Value {
        let tcp: Vec<serde_json::Value> = self
            .streams()
            .map(|t| {
                serde_json::json!({
                    "listener": t.listener,
                    "transport": t.transport,
                    "port": t.port,
                    "connections": t.edge.open(),
                    "limit": t.edge.limit(),
                    "sockets": t.rcvbuf.len(),
                })
            })
            .collect();
        let udp: Vec<serde_json::Value> = self
            .udp()
            .map(|u| {
                serde_json::json!({
                    "listener": u.listener,
                    "port": u.port,
                    "sockets": u.sockets.len(),
                    "balance": u.balance,
                    "requested_balance": u.requested_balance,
                    "fallback_reason": u.fallback_reason,
                })
            })
            .collect();
        serde_json::json!({ "connections": tcp, "udp": udp })
    }

    pub(super) fn encode(&self, enc: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        encode_udp(enc, self)?;
        encode_streams(enc, self)
    }
}

fn encode_udp(enc: &mut DescriptorEncoder, ports: &Ports) -> Result<(), std::fmt::Error> {
    struct Socket<'a> {
        port: String,
        index: String,
        u: &'a UdpPortMetrics,
        i: usize,
    }
    let sockets: Vec<Socket<'_>> = ports
        .udp()
        .flat_map(|u| {
            (0..u.counters.len().max(u.sockets.len())).map(move |i| Socket {
                port: u.port.to_string(),
                index: i.to_string(),
                u,
                i,
            })
        })
        .collect();
    let per_socket = |value: fn(&UdpPortMetrics, usize) -> f64| {
        sockets.iter().map(move |s| {
            (
                [("port", s.port.as_str()), ("socket", s.index.as_str())],
                value(s.u, s.i),
            )
        })
    };
    family(
        enc,
        "sluice_udp_datagrams",
        "Datagrams returned by recvmmsg, per socket (shows the balance).",
        MetricType::Counter,
        per_socket(|u, i| u.sockets.get(i).map_or(0.0, |s| s.received() as f64)),
    )?;
    family(
        enc,
        "sluice_kernel_dropped",
        "Datagrams the kernel dropped because the socket buffer was full (SO_RXQ_OVFL).",
        MetricType::Counter,
        per_socket(|u, i| u.sockets.get(i).map_or(0.0, |s| s.kernel_drops() as f64)),
    )?;
    family(
        enc,
        "sluice_udp_rcvbuf_bytes",
        "Effective receive buffer per socket as read back from the kernel.",
        MetricType::Gauge,
        per_socket(|u, i| u.rcvbuf.get(i).map_or(0.0, |r| r.effective as f64)),
    )?;
    let udp: Vec<&Arc<UdpPortMetrics>> = ports.udp().collect();
    let udp_ports: Vec<String> = udp.iter().map(|u| u.port.to_string()).collect();
    family(
        enc,
        "sluice_udp_balance_info",
        "Active UDP balancing mode per port (1), with the requested one; /health says why \
         they differ.",
        MetricType::Gauge,
        udp.iter().zip(&udp_ports).map(|(u, p)| {
            (
                [
                    ("port", p.as_str()),
                    ("mode", u.balance),
                    ("requested", u.requested_balance),
                ],
                1.0,
            )
        }),
    )
}

fn encode_streams(enc: &mut DescriptorEncoder, ports: &Ports) -> Result<(), std::fmt::Error> {
    let tcp: Vec<&Arc<TcpPortMetrics>> = ports.streams().collect();
    let port_strings: Vec<String> = tcp.iter().map(|t| t.port.to_string()).collect();
    let per_port = |value: fn(&TcpPortMetrics) -> f64| {
        tcp.iter().zip(&port_strings).map(move |(t, p)| {
            (
                [
                    ("listener", LabelStr(&t.listener)),
                    ("transport", LabelStr(t.transport)),
                    ("port", LabelStr(p)),
                ],
                value(t),
            )
        })
    };
    family(
        enc,
        "sluice_tcp_open_connections",
        "Open stream connections (TCP, RFC 6587, TLS, RFC 5425).",
        MetricType::Gauge,
        per_port(|t| t.edge.open() as f64),
    )?;
    family(
        enc,
        "sluice_tcp_connection_limit",
        "Connection limit per port (SC4S_SOURCE_<PROTO>_MAX_CONNECTIONS).",
        MetricType::Gauge,
        per_port(|t| t.edge.limit() as f64),
    )?;
    let sockets: Vec<(&TcpPortMetrics, &String, String, f64)> = tcp
        .iter()
        .zip(&port_strings)
        .flat_map(|(t, p)| {
            t.rcvbuf
                .iter()
                .map(move |r| (&***t, p, r.index.to_string(), r.effective as f64))
        })
        .collect();
    family(
        enc,
        "sluice_tcp_rcvbuf_bytes",
        "Receive buffer of each listening socket as read back from the kernel (accepted \
         connections inherit it).",
        MetricType::Gauge,
        sockets.iter().map(|(t, p, s, v)| {
            (
                [
                    ("transport", t.transport),
                    ("port", p.as_str()),
                    ("socket", s.as_str()),
                ],
                *v,
            )
        }),
    )?;
    if let Some(tls) = &ports.tls {
        single(
            enc,
            "sluice_tls_certificate_expiry_timestamp_seconds",
            "notAfter of the server certificate in service (Unix seconds): alert on it.",
            tls.not_after.load(Ordering::Relaxed) as f64,
        )?;
    }
    Ok(())
}
