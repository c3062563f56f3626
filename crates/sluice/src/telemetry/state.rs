//! `/metrics` and `/health`: the daemon's state, read at scrape time, next to the counters
//! of the internal events ([`crate::telemetry`]).
//!
//! Everything that *happens* is counted by its internal event, in the process-wide registry.
//! What this module renders is what *is*: open connections, window occupancy, socket
//! buffers as the kernel granted them, the certificate's expiry, the configuration in force,
//! each HEC URL's consecutive failures (state the HEC client decides with), the disk buffer.
//! It is a prometheus-client `Collector` over the daemon's components, each family declared
//! here once, so the receive path never takes a lock for telemetry. Delivery outcomes and
//! what the HEC client does are internal events, counted when they happen
//! ([`crate::telemetry::events::completion`], [`crate::telemetry::events::hec`]).
//!
//! Series come in a fixed order ([`crate::telemetry::expose::sorted`]).
//!
//! The set of ports changes with reloads: the topology publishes a new [`Ports`] after each
//! one. Counters of a port that closed stay in the event registry, so totals never go back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use arc_swap::ArcSwap;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;

use sluice_net::{RcvbufReport, SocketStats};

use crate::admin::{PromWriter, Status};
use crate::listen::stream::conn::TcpStats;
use crate::listen::stream::edge::Edge;
use crate::output::{DestinationStats, FileStats};
use crate::pipeline::ReceiverCounters;
use crate::telemetry::LabelStr;
use crate::tls::{TlsEndpoint, TlsManager};
use crate::window::{MemoryBudget, Window};

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
    pub stats: Arc<TcpStats>,
    pub edge: Arc<Edge>,
    pub tls: Option<Arc<TlsEndpoint>>,
    pub rcvbuf: Vec<RcvbufReport>,
}

#[derive(Debug, Clone)]
pub enum OutputMetrics {
    /// The HEC destination's URL board: which URLs are in service (what the client counts
    /// is internal events, [`crate::telemetry::events::HecEvents`]).
    Hec(HecHealth),
    File(Arc<FileStats>),
}

/// One HEC destination's URL board.
#[derive(Debug, Clone)]
pub struct HecHealth {
    pub destination: String,
    pub board: Arc<sluice_hec::health::UrlBoard>,
}

/// The ports open now, and stream ports that stopped accepting but still have connections.
#[derive(Debug, Default)]
pub struct Ports {
    pub udp: Vec<Arc<UdpPortMetrics>>,
    pub tcp: Vec<Arc<TcpPortMetrics>>,
    /// The TLS certificate in service and its reloads.
    pub tls: Option<Arc<TlsManager>>,
}

/// Everything `/metrics` and `/health` read. The ports are swapped by reloads; the rest are
/// atomics updated by their owners.
#[derive(Debug, Clone)]
pub struct Registry {
    pub started: Instant,
    pub ports: Arc<ArcSwap<Ports>>,
    pub windows: Vec<Arc<Window>>,
    pub memory: Arc<MemoryBudget>,
    /// Every destination's completion sink.
    pub destinations: Vec<Arc<DestinationStats>>,
    /// The HEC destination's disk buffer, when it has one.
    pub buffer: Option<Arc<crate::output::BufferMetrics>>,
    /// The disk buffers of the additional destinations, by destination name.
    pub extra_buffers: Vec<(String, Arc<crate::output::BufferMetrics>)>,
    /// The URL boards of the additional HEC destinations.
    pub extra_hec: Vec<HecHealth>,
    pub output: OutputMetrics,
    /// Set when shutdown begins: the receivers are stopping.
    pub stopping: Arc<AtomicBool>,
    /// Reloads, and the configuration in force.
    pub reload: Arc<crate::daemon::reload::ReloadStats>,
}

impl Registry {
    /// Messages accepted into the pipeline so far (all listeners, closed ones included).
    pub fn received_total(&self) -> u64 {
        crate::telemetry::metrics().received_messages()
    }

    /// Events of TCP chunks that never reached a destination (their port's combiner was
    /// gone: a bug, counted and logged when it happens by `OutputGone`).
    pub fn chunks_lost_total(&self) -> u64 {
        crate::telemetry::metrics().unrouted_lost()
    }

    /// Events delivered, over every destination.
    pub fn delivered_total(&self) -> u64 {
        self.destinations.iter().map(|d| d.delivered_events()).sum()
    }

    /// OpenMetrics text: the internal events' families, then this state, series in a fixed
    /// order.
    pub fn render(&self) -> String {
        let mut state = prometheus_client::registry::Registry::default();
        state.register_collector(Box::new(self.clone()));
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode_registry(
            &mut out,
            crate::telemetry::metrics().registry(),
        );
        let _ = prometheus_client::encoding::text::encode_registry(&mut out, &state);
        let _ = prometheus_client::encoding::text::encode_eof(&mut out);
        crate::telemetry::expose::sorted(&out)
    }
}

impl Status for Registry {
    fn health(&self) -> Result<(), String> {
        if self.stopping.load(Ordering::Relaxed) {
            return Err("shutting down".into());
        }
        match &self.output {
            OutputMetrics::Hec(h) if !h.board.healthy() => Err(match h.board.reason() {
                Some(r) => format!("cannot deliver to Splunk HEC: {r}"),
                None => "cannot deliver to Splunk HEC (see sluice_hec_requests_total)".into(),
            }),
            OutputMetrics::File(f) if !f.healthy.load(Ordering::Relaxed) => {
                Err("cannot write the output file".into())
            }
            _ => Ok(()),
        }
    }

    /// Each stream port's open connections against its limit: at the limit, new senders
    /// only get in by evicting idle ones, which is worth seeing before it happens. And each
    /// UDP port's balancing, with why it fell back, in words.
    fn details(&self) -> serde_json::Value {
        let ports = self.ports.load();
        let tcp: Vec<serde_json::Value> = ports
            .tcp
            .iter()
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
        let udp: Vec<serde_json::Value> = ports
            .udp
            .iter()
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
        let mut details = serde_json::json!({ "connections": tcp, "udp": udp });
        if let Some(b) = &self.buffer {
            let s = b.stats();
            details["buffer"] = serde_json::json!({
                "mode": if b.reliable { "reliable" } else { "normal" },
                "events": s.events,
                "bytes": s.bytes,
                "max_bytes": s.max_bytes,
                "full": b.full().map(|r| r.as_str()),
            });
            let hec_down = matches!(&self.output, OutputMetrics::Hec(h) if !h.board.healthy());
            let why = b.degraded().or_else(|| {
                hec_down.then(|| {
                    "cannot deliver to Splunk HEC; what it cannot take goes to the disk buffer"
                        .to_owned()
                })
            });
            if let Some(why) = why {
                details["degraded"] = why.into();
            }
        }
        if !self.extra_hec.is_empty() {
            let mut degraded = Vec::new();
            let dests: Vec<serde_json::Value> = self
                .extra_hec
                .iter()
                .map(|h| {
                    let name = &h.destination;
                    let b = self.extra_buffers.iter().find(|(n, _)| n == name);
                    let buffer = b.map(|(_, b)| (b.stats(), b.full()));
                    let healthy = h.board.healthy();
                    if !healthy {
                        degraded.push(format!(
                            "destination {name}: cannot deliver to Splunk HEC ({})",
                            h.board.reason().unwrap_or_default()
                        ));
                    }
                    if let Some((_, Some(r))) = &buffer {
                        degraded.push(format!(
                            "destination {name}: disk buffer full ({}): receivers are held back",
                            r.as_str()
                        ));
                    }
                    serde_json::json!({
                        "name": name,
                        "healthy": healthy,
                        "buffer_events": buffer.as_ref().map(|(s, _)| s.events),
                        "buffer_full": buffer.as_ref().and_then(|(_, f)| f.map(|r| r.as_str())),
                    })
                })
                .collect();
            details["destinations"] = dests.into();
            if !degraded.is_empty() {
                let mut why = details["degraded"]
                    .as_str()
                    .map(str::to_owned)
                    .into_iter()
                    .collect::<Vec<_>>();
                why.extend(degraded);
                details["degraded"] = why.join("; ").into();
            }
        }
        details
    }

    fn render_metrics(&self) -> String {
        self.render()
    }
}

/// One family of samples computed at scrape time.
fn family<L: EncodeLabelSet>(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    samples: impl IntoIterator<Item = (L, f64)>,
) -> Result<(), std::fmt::Error> {
    let mut m = enc.encode_descriptor(name, help, None, kind)?;
    for (labels, v) in samples {
        let mut s = m.encode_family(&labels)?;
        match kind {
            MetricType::Counter => s.encode_counter::<NoLabelSet, _, f64>(&v, None)?,
            _ => s.encode_gauge(&v)?,
        }
    }
    Ok(())
}

/// A family with one unlabelled sample.
fn single(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    v: f64,
) -> Result<(), std::fmt::Error> {
    enc.encode_descriptor(name, help, None, MetricType::Gauge)?
        .encode_gauge(&v)
}

impl Collector for Registry {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let enc = &mut enc;
        let ports = self.ports.load();
        single(
            enc,
            "sluice_uptime_seconds",
            "Seconds since sluice started.",
            self.started.elapsed().as_secs_f64(),
        )?;
        encode_udp(enc, &ports)?;
        encode_streams(enc, &ports)?;
        encode_config(enc, &self.reload)?;
        family(
            enc,
            "sluice_window_events",
            "Events received and not yet delivered, per input window.",
            MetricType::Gauge,
            self.windows
                .iter()
                .map(|w| ([("window", w.name())], w.in_use() as f64)),
        )?;
        family(
            enc,
            "sluice_window_capacity",
            "Input window size in events.",
            MetricType::Gauge,
            self.windows
                .iter()
                .map(|w| ([("window", w.name())], f64::from(w.capacity()))),
        )?;
        single(
            enc,
            "sluice_memory_in_flight_bytes",
            "Encoded bytes received and not yet delivered (all listeners; KiB granularity).",
            self.memory.in_use_bytes() as f64,
        )?;
        single(
            enc,
            "sluice_memory_budget_bytes",
            "window.max_bytes: the bound on sluice_memory_in_flight_bytes.",
            self.memory.capacity_bytes() as f64,
        )?;
        // Every HEC destination's URLs: the default one's and the others'.
        let boards: Vec<&HecHealth> = match &self.output {
            OutputMetrics::Hec(h) => Some(h),
            OutputMetrics::File(_) => None,
        }
        .into_iter()
        .chain(self.extra_hec.iter())
        .collect();
        if !boards.is_empty() {
            let urls: Vec<(&str, &str, f64)> = boards
                .iter()
                .flat_map(|h| {
                    h.board.iter().map(|u| {
                        (
                            h.destination.as_str(),
                            u.url.as_str(),
                            f64::from(u.consecutive_failures()),
                        )
                    })
                })
                .collect();
            family(
                enc,
                "sluice_hec_url_consecutive_failures",
                "Failed requests to the URL since its last good answer.",
                MetricType::Gauge,
                urls.iter().map(|(dest, url, n)| {
                    (
                        [("destination", LabelStr(dest)), ("url", LabelStr(url))],
                        *n,
                    )
                }),
            )?;
        }
        let mut w = PromWriter::new();
        w.family(
            "sluice_archive_write_errors_total",
            "counter",
            "Events the archive (d_archive) could not write (also counted as dropped, reason \
             archive_rejected).",
        );
        w.sample(
            "sluice_archive_write_errors_total",
            &[],
            crate::output::archive::ARCHIVE_WRITE_ERRORS.load(Ordering::Relaxed),
        );
        let buffers: Vec<(&str, &crate::output::BufferMetrics)> = self
            .buffer
            .iter()
            .map(|b| ("default", &**b))
            .chain(self.extra_buffers.iter().map(|(n, b)| (n.as_str(), &**b)))
            .collect();
        if !buffers.is_empty() {
            crate::output::buffered::render(&mut w, &buffers);
        }
        w.encode(enc)
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
        .udp
        .iter()
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
    let udp_ports: Vec<String> = ports.udp.iter().map(|u| u.port.to_string()).collect();
    family(
        enc,
        "sluice_udp_balance_info",
        "Active UDP balancing mode per port (1), with the requested one; /health says why \
         they differ.",
        MetricType::Gauge,
        ports.udp.iter().zip(&udp_ports).map(|(u, p)| {
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
    let tcp = &ports.tcp;
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
                .map(move |r| (&**t, p, r.index.to_string(), r.effective as f64))
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
            tls.stats.not_after.load(Ordering::Relaxed) as f64,
        )?;
    }
    Ok(())
}

fn encode_config(
    enc: &mut DescriptorEncoder,
    reload: &crate::daemon::reload::ReloadStats,
) -> Result<(), std::fmt::Error> {
    let (hash, at) = reload.in_force();
    family(
        enc,
        "sluice_config_hash_info",
        "Hash of the configuration in force (settings and context files), as logged at start \
         and reload.",
        MetricType::Gauge,
        [([("hash", hash.as_str())], 1.0)],
    )?;
    single(
        enc,
        "sluice_config_loaded_timestamp_seconds",
        "When the configuration in force was loaded (Unix seconds).",
        at,
    )?;
    single(
        enc,
        "sluice_config_restart_required",
        "1 when the last loaded configuration changed settings that only a restart applies \
         (logged at the reload).",
        f64::from(u8::from(reload.restart_required())),
    )
}
