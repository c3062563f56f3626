//! `/metrics` and `/health`: read the counters every stage keeps and render them.
//!
//! One family per thing that happens, each with its reason label (see DESIGN.md):
//! received, kernel drops, parsed by format, truncated, delivered, retried, dropped, window
//! occupancy. All values are atomics updated once per batch by their owners and summed
//! here at scrape time, so nothing on the receive path takes a lock for telemetry.
//!
//! The set of ports changes with reloads: the topology publishes a new [`Ports`] after each
//! one. A port that closes leaves its counts in [`Retired`], so totals never go backwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use arc_swap::ArcSwap;
use std::time::Instant;

use sluice_hec::HecStats;
use sluice_net::{RcvbufReport, SocketStats};
use sluice_proto::delivery::{AbandonReason, CompletionKind};

use crate::admin::{PromWriter, Status};
use crate::edge::{CloseReason, Edge};
use crate::output::{DestinationStats, FileStats};
use crate::pipeline::{FORMATS, ReceiverCounters};
use crate::tcp::TcpStats;
use crate::tls::{Failure, TlsEndpoint, TlsManager};
use crate::window::{MemoryBudget, Window};

/// One UDP port as the registry sees it.
#[derive(Debug, Clone)]
pub struct UdpPortMetrics {
    pub listener: String,
    pub port: u16,
    pub requested_balance: &'static str,
    pub balance: &'static str,
    pub fallback_reason: Option<String>,
    pub sockets: Vec<Arc<SocketStats>>,
    pub counters: Vec<Arc<ReceiverCounters>>,
    pub rcvbuf: Vec<RcvbufReport>,
}

/// Label values of one UDP socket, computed once per scrape.
struct UdpSocketLabels<'a> {
    port: String,
    socket: String,
    port_metrics: &'a UdpPortMetrics,
    index: usize,
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

/// What an output counts about itself (requests, writes), beside its destination's
/// completions.
#[derive(Debug)]
pub enum OutputMetrics {
    Hec(Arc<HecStats>),
    File(Arc<FileStats>),
}

/// The ports open now, and stream ports that stopped accepting but still have connections.
#[derive(Debug, Default)]
pub struct Ports {
    pub udp: Vec<Arc<UdpPortMetrics>>,
    pub tcp: Vec<Arc<TcpPortMetrics>>,
    /// The TLS certificate in service and its reloads.
    pub tls: Option<Arc<TlsManager>>,
}

/// What ports closed by a reload had counted, per transport.
#[derive(Debug, Default)]
pub struct Retired {
    pub udp: ReceiverCounters,
    pub tcp: ReceiverCounters,
}

/// Everything `/metrics` and `/health` read. The ports are swapped by reloads; the rest are
/// atomics updated by their owners.
#[derive(Debug)]
pub struct Registry {
    pub started: Instant,
    pub ports: Arc<ArcSwap<Ports>>,
    pub retired: Arc<Retired>,
    pub windows: Vec<Arc<Window>>,
    pub memory: Arc<MemoryBudget>,
    /// Every destination's completion sink.
    pub destinations: Vec<Arc<DestinationStats>>,
    /// The HEC destination's disk buffer, when it has one.
    pub buffer: Option<Arc<crate::output::BufferMetrics>>,
    pub output: OutputMetrics,
    /// Set when shutdown begins: the receivers are stopping.
    pub stopping: Arc<AtomicBool>,
    /// Reloads, and the configuration in force.
    pub reload: Arc<crate::reload::ReloadStats>,
}

/// Every receiver's counters of `ports`, and the retired ones.
fn receiver_counters<'a>(
    ports: &'a Ports,
    retired: &'a Retired,
) -> impl Iterator<Item = &'a ReceiverCounters> {
    ports
        .udp
        .iter()
        .flat_map(|u| u.counters.iter().map(|c| &**c))
        .chain(ports.tcp.iter().map(|t| &*t.counters))
        .chain([&retired.udp, &retired.tcp])
}

impl Registry {
    /// Messages accepted into the pipeline so far (all listeners).
    pub fn received_total(&self) -> u64 {
        receiver_counters(&self.ports.load(), &self.retired)
            .map(|c| c.messages.load(Ordering::Relaxed))
            .sum()
    }

    /// Events of TCP chunks that never reached a destination (their port's combiner was
    /// gone: a bug, counted and logged when it happens).
    pub fn chunks_lost_total(&self) -> u64 {
        receiver_counters(&self.ports.load(), &self.retired)
            .map(|c| c.lost_events.load(Ordering::Relaxed))
            .sum()
    }

    /// Events delivered, over every destination.
    pub fn delivered_total(&self) -> u64 {
        self.destinations.iter().map(|d| d.delivered_events()).sum()
    }
}

impl Status for Registry {
    fn health(&self) -> Result<(), String> {
        if self.stopping.load(Ordering::Relaxed) {
            return Err("shutting down".into());
        }
        match &self.output {
            // Also with a disk buffer taking the events: what an operator must act on is the
            // same. The details say what the buffer holds (`degraded`).
            OutputMetrics::Hec(h) if !h.healthy() => {
                Err("cannot deliver to Splunk HEC (see sluice_hec_requests_total)".into())
            }
            OutputMetrics::File(f) if !f.healthy.load(Ordering::Relaxed) => {
                Err("cannot write the output file".into())
            }
            _ => Ok(()),
        }
    }

    /// Each stream port's open connections against its limit: at the limit, new senders
    /// only get in by evicting idle ones, which is worth seeing before it happens.
    fn details(&self) -> serde_json::Value {
        let ports: Vec<serde_json::Value> = self
            .ports
            .load()
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
        let mut details = serde_json::json!({ "connections": ports });
        if let Some(b) = &self.buffer {
            let s = b.stats();
            details["buffer"] = serde_json::json!({
                "mode": if b.reliable { "reliable" } else { "normal" },
                "events": s.events,
                "bytes": s.bytes,
                "max_bytes": s.max_bytes,
                "full": b.full().map(|r| r.as_str()),
            });
            let hec_down = matches!(&self.output, OutputMetrics::Hec(h) if !h.healthy());
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
        details
    }

    fn render_metrics(&self) -> String {
        let mut w = PromWriter::new();
        let ports = self.ports.load();
        let up = self.started.elapsed().as_secs_f64();
        w.family(
            "sluice_uptime_seconds",
            "gauge",
            "Seconds since sluice started.",
        )
        .sample("sluice_uptime_seconds", &[], format!("{up:.3}"));

        // Received, per listener and socket; then the kernel's side of UDP.
        let udp_sockets: Vec<UdpSocketLabels<'_>> = ports
            .udp
            .iter()
            .flat_map(|u| {
                (0..u.counters.len()).map(move |i| UdpSocketLabels {
                    port: u.port.to_string(),
                    socket: i.to_string(),
                    port_metrics: u,
                    index: i,
                })
            })
            .collect();
        for (name, help, value) in [
            (
                "sluice_received_total",
                "Messages accepted into the pipeline (parsed and encoded into a batch).",
                (|c: &ReceiverCounters| c.messages.load(Ordering::Relaxed))
                    as fn(&ReceiverCounters) -> u64,
            ),
            (
                "sluice_received_bytes_total",
                "Bytes of accepted messages.",
                |c: &ReceiverCounters| c.bytes.load(Ordering::Relaxed),
            ),
        ] {
            w.family(name, "counter", help);
            for s in &udp_sockets {
                let u = s.port_metrics;
                w.sample(
                    name,
                    &[
                        ("listener", &u.listener),
                        ("transport", "udp"),
                        ("port", &s.port),
                        ("socket", &s.socket),
                    ],
                    value(&u.counters[s.index]),
                );
            }
            for t in &ports.tcp {
                let port = t.port.to_string();
                w.sample(
                    name,
                    &[
                        ("listener", &t.listener),
                        ("transport", t.transport),
                        ("port", &port),
                        ("socket", ""),
                    ],
                    value(&t.counters),
                );
            }
        }
        for (name, kind, help, value) in [
            (
                "sluice_udp_datagrams_total",
                "counter",
                "Datagrams returned by recvmmsg, per socket (shows the balance).",
                (|u: &UdpPortMetrics, i: usize| u.sockets.get(i).map_or(0, |s| s.received()))
                    as fn(&UdpPortMetrics, usize) -> u64,
            ),
            (
                "sluice_kernel_dropped_total",
                "counter",
                "Datagrams the kernel dropped because the socket buffer was full (SO_RXQ_OVFL).",
                |u: &UdpPortMetrics, i: usize| u.sockets.get(i).map_or(0, |s| s.kernel_drops()),
            ),
            (
                "sluice_udp_rcvbuf_bytes",
                "gauge",
                "Effective receive buffer per socket as read back from the kernel.",
                |u: &UdpPortMetrics, i: usize| u.rcvbuf.get(i).map_or(0, |r| r.effective as u64),
            ),
        ] {
            w.family(name, kind, help);
            for s in &udp_sockets {
                w.sample(
                    name,
                    &[("port", &s.port), ("socket", &s.socket)],
                    value(s.port_metrics, s.index),
                );
            }
        }
        w.family(
            "sluice_udp_balance_info",
            "gauge",
            "Active UDP balancing mode per port (1), with the requested one and why they differ.",
        );
        for u in &ports.udp {
            let port = u.port.to_string();
            w.sample(
                "sluice_udp_balance_info",
                &[
                    ("port", &port),
                    ("mode", u.balance),
                    ("requested", u.requested_balance),
                    (
                        "fallback_reason",
                        u.fallback_reason.as_deref().unwrap_or(""),
                    ),
                ],
                1,
            );
        }

        // Parsing.
        w.family(
            "sluice_parsed_total",
            "counter",
            "Messages by the grammar they were read with.",
        );
        for (i, f) in FORMATS.iter().enumerate() {
            let n: u64 = receiver_counters(&ports, &self.retired)
                .map(|c| c.by_format[i].load(Ordering::Relaxed))
                .sum();
            w.sample("sluice_parsed_total", &[("format", f.as_str())], n);
        }
        w.family(
            "sluice_truncated_total",
            "counter",
            "Messages cut to listen.max_message_size (delivered truncated).",
        );
        let udp_trunc: u64 = ports
            .udp
            .iter()
            .flat_map(|u| u.counters.iter().map(|c| &**c))
            .chain([&self.retired.udp])
            .map(|c| c.truncated.load(Ordering::Relaxed))
            .sum();
        let tcp_trunc: u64 = ports
            .tcp
            .iter()
            .map(|t| &*t.counters)
            .chain([&self.retired.tcp])
            .map(|c| c.truncated.load(Ordering::Relaxed))
            .sum();
        w.sample("sluice_truncated_total", &[("transport", "udp")], udp_trunc);
        w.sample("sluice_truncated_total", &[("transport", "tcp")], tcp_trunc);

        // Stream connections, the edge, framing and TLS.
        if !ports.tcp.is_empty() {
            render_streams(&mut w, &ports.tcp);
        }
        if let Some(tls) = &ports.tls {
            render_tls(&mut w, tls, &ports.tcp);
        }
        self.reload.render(&mut w);

        // The window.
        w.family(
            "sluice_window_events",
            "gauge",
            "Events received and not yet delivered, per input window.",
        );
        for win in &self.windows {
            w.sample(
                "sluice_window_events",
                &[("window", win.name())],
                win.in_use(),
            );
        }
        w.family(
            "sluice_window_capacity",
            "gauge",
            "Input window size in events.",
        );
        for win in &self.windows {
            w.sample(
                "sluice_window_capacity",
                &[("window", win.name())],
                win.capacity(),
            );
        }
        w.family(
            "sluice_window_full_total",
            "counter",
            "Times a receiver found its window full and stopped reading until delivery caught up.",
        );
        for win in &self.windows {
            w.sample(
                "sluice_window_full_total",
                &[("window", win.name())],
                win.full_count(),
            );
        }
        w.family(
            "sluice_window_wait_seconds_total",
            "counter",
            "Time receivers spent waiting for window space.",
        );
        for win in &self.windows {
            w.sample(
                "sluice_window_wait_seconds_total",
                &[("window", win.name())],
                format!("{:.6}", win.waited_micros() as f64 / 1e6),
            );
        }

        // The memory budget shared by all listeners.
        w.family(
            "sluice_memory_in_flight_bytes",
            "gauge",
            "Encoded bytes received and not yet delivered (all listeners; KiB granularity).",
        )
        .sample(
            "sluice_memory_in_flight_bytes",
            &[],
            self.memory.in_use_bytes(),
        );
        w.family(
            "sluice_memory_budget_bytes",
            "gauge",
            "window.max_bytes: the bound on sluice_memory_in_flight_bytes.",
        )
        .sample(
            "sluice_memory_budget_bytes",
            &[],
            self.memory.capacity_bytes(),
        );
        w.family(
            "sluice_memory_full_total",
            "counter",
            "Times a receiver stopped reading because the memory budget was spent.",
        )
        .sample("sluice_memory_full_total", &[], self.memory.full_count());

        // Destinations: what their completions said.
        let buffer_full = self.buffer.as_ref().map_or(0, |b| b.buffer_full_drops());
        render_destinations(
            &mut w,
            &self.destinations,
            self.chunks_lost_total(),
            buffer_full,
        );
        if let Some(b) = &self.buffer {
            crate::output::buffered::render(&mut w, b);
        }
        match &self.output {
            OutputMetrics::Hec(h) => render_hec(&mut w, h),
            OutputMetrics::File(f) => {
                w.family(
                    "sluice_output_write_errors_total",
                    "counter",
                    "Failed writes to the output file (the batch is kept and retried).",
                )
                .sample(
                    "sluice_output_write_errors_total",
                    &[],
                    f.write_errors.load(Ordering::Relaxed),
                );
            }
        }
        w.finish()
    }
}

fn render_streams(w: &mut PromWriter, tcp: &[Arc<TcpPortMetrics>]) {
    let labels = |t: &TcpPortMetrics| (t.listener.clone(), t.transport, t.port.to_string());
    w.family(
        "sluice_tcp_connections",
        "gauge",
        "Open stream connections (TCP, RFC 6587, TLS, RFC 5425).",
    );
    for t in tcp {
        let (l, tr, p) = labels(t);
        w.sample(
            "sluice_tcp_connections",
            &[("listener", &l), ("transport", tr), ("port", &p)],
            t.edge.open(),
        );
    }
    w.family(
        "sluice_tcp_connection_limit",
        "gauge",
        "Connection limit per port (SC4S_SOURCE_<PROTO>_MAX_CONNECTIONS).",
    );
    for t in tcp {
        let (l, tr, p) = labels(t);
        w.sample(
            "sluice_tcp_connection_limit",
            &[("listener", &l), ("transport", tr), ("port", &p)],
            t.edge.limit(),
        );
    }
    w.family(
        "sluice_tcp_connections_total",
        "counter",
        "Connections accepted from the kernel (admitted or refused at the limit).",
    );
    for t in tcp {
        let (l, tr, p) = labels(t);
        w.sample(
            "sluice_tcp_connections_total",
            &[("listener", &l), ("transport", tr), ("port", &p)],
            t.edge.accepted(),
        );
    }
    w.family(
        "sluice_tcp_closed_total",
        "counter",
        "Closed stream connections by reason: eof (the sender closed), idle_timeout, \
         frame_timeout (partial frame delivered), no_data (nothing sent before the deadline), \
         evicted (idle, to admit a new one at the limit), limit (refused), tls_handshake, \
         tls_error, proxy_header, dead_peer (TCP keepalive found a half-open connection), \
         read_error, shutdown.",
    );
    for t in tcp {
        let (l, tr, p) = labels(t);
        for reason in CloseReason::ALL {
            w.sample(
                "sluice_tcp_closed_total",
                &[
                    ("listener", &l),
                    ("transport", tr),
                    ("port", &p),
                    ("reason", reason.label()),
                ],
                t.edge.closed(reason),
            );
        }
    }
    w.family(
        "sluice_tcp_accept_errors_total",
        "counter",
        "accept() failures (EMFILE: raise the open-file limit).",
    );
    for t in tcp {
        let (l, tr, p) = labels(t);
        w.sample(
            "sluice_tcp_accept_errors_total",
            &[("listener", &l), ("transport", tr), ("port", &p)],
            t.stats.accept_errors.load(Ordering::Relaxed),
        );
    }
    w.family(
        "sluice_tcp_frames_total",
        "counter",
        "Notable stream frames: octet-counted, partial (delivered at close/timeout), \
         truncated; and skipped empty lines.",
    );
    for t in tcp {
        let (l, tr, p) = labels(t);
        for (kind, v) in [
            ("octet_counted", &t.stats.octet_counted),
            ("partial", &t.stats.partial),
            ("truncated", &t.stats.truncated),
            ("empty_line", &t.stats.empty_lines),
        ] {
            w.sample(
                "sluice_tcp_frames_total",
                &[
                    ("listener", &l),
                    ("transport", tr),
                    ("port", &p),
                    ("kind", kind),
                ],
                v.load(Ordering::Relaxed),
            );
        }
    }
    w.family(
        "sluice_tcp_discarded_bytes_total",
        "counter",
        "Bytes beyond max_message_size skipped after a truncated frame.",
    );
    for t in tcp {
        let (l, tr, p) = labels(t);
        w.sample(
            "sluice_tcp_discarded_bytes_total",
            &[("listener", &l), ("transport", tr), ("port", &p)],
            t.stats.discarded_bytes.load(Ordering::Relaxed),
        );
    }
    w.family(
        "sluice_tcp_rcvbuf_bytes",
        "gauge",
        "Receive buffer of each listening socket as read back from the kernel (accepted \
         connections inherit it).",
    );
    for t in tcp {
        let (_, tr, p) = labels(t);
        for r in &t.rcvbuf {
            let socket = r.index.to_string();
            w.sample(
                "sluice_tcp_rcvbuf_bytes",
                &[("transport", tr), ("port", &p), ("socket", &socket)],
                r.effective,
            );
        }
    }
}

fn render_tls(w: &mut PromWriter, tls: &TlsManager, tcp: &[Arc<TcpPortMetrics>]) {
    w.family(
        "sluice_tls_handshakes_total",
        "counter",
        "Completed TLS handshakes by protocol version and cipher suite.",
    );
    for t in tcp {
        let Some(ep) = &t.tls else { continue };
        let p = t.port.to_string();
        for ((version, suite), n) in ep.stats.handshakes() {
            w.sample(
                "sluice_tls_handshakes_total",
                &[("port", &p), ("version", version), ("suite", suite)],
                n,
            );
        }
    }
    w.family(
        "sluice_tls_handshake_failures_total",
        "counter",
        "Failed TLS handshakes by reason.",
    );
    for t in tcp {
        let Some(ep) = &t.tls else { continue };
        let p = t.port.to_string();
        for f in Failure::ALL {
            w.sample(
                "sluice_tls_handshake_failures_total",
                &[("port", &p), ("reason", f.label())],
                ep.stats.failures(f),
            );
        }
    }
    w.family(
        "sluice_tls_certificate_expiry_timestamp_seconds",
        "gauge",
        "notAfter of the server certificate in service (Unix seconds): alert on it.",
    )
    .sample(
        "sluice_tls_certificate_expiry_timestamp_seconds",
        &[],
        tls.stats.not_after.load(Ordering::Relaxed),
    );
    w.family(
        "sluice_tls_reloads_total",
        "counter",
        "Certificate reloads (file change or SIGHUP); a failed one keeps the previous pair.",
    )
    .sample(
        "sluice_tls_reloads_total",
        &[("outcome", "ok")],
        tls.stats.reloads.load(Ordering::Relaxed),
    )
    .sample(
        "sluice_tls_reloads_total",
        &[("outcome", "failed")],
        tls.stats.reload_failures.load(Ordering::Relaxed),
    );
}

fn render_hec(w: &mut PromWriter, h: &HecStats) {
    let s = h.snapshot();
    w.family(
        "sluice_retried_total",
        "counter",
        "Events whose HEC request was retried, by reason.",
    );
    for (reason, n) in &s.retried_events {
        w.sample("sluice_retried_total", &[("reason", reason)], n);
    }
    w.family(
        "sluice_hec_requests_total",
        "counter",
        "HEC requests by outcome.",
    );
    for (outcome, n) in &s.requests {
        w.sample("sluice_hec_requests_total", &[("outcome", outcome)], n);
    }
    w.family(
        "sluice_hec_bytes_total",
        "counter",
        "HEC request body bytes.",
    )
    .sample("sluice_hec_bytes_total", &[("kind", "raw")], s.bytes_raw)
    .sample("sluice_hec_bytes_total", &[("kind", "sent")], s.bytes_sent);
    w.family(
        "sluice_hec_in_flight_events",
        "gauge",
        "Events in HEC requests now.",
    )
    .sample("sluice_hec_in_flight_events", &[], s.in_flight_events);
    w.family(
        "sluice_hec_request_seconds",
        "histogram",
        "HEC request latency.",
    );
    for (le, n) in &s.request_seconds.buckets {
        let le = if le.is_infinite() {
            "+Inf".to_string()
        } else {
            le.to_string()
        };
        w.sample("sluice_hec_request_seconds_bucket", &[("le", &le)], n);
    }
    w.sample(
        "sluice_hec_request_seconds_sum",
        &[],
        format!("{:.6}", s.request_seconds.sum_seconds),
    );
    w.sample(
        "sluice_hec_request_seconds_count",
        &[],
        s.request_seconds.count,
    );
}

/// Completions per destination, and the classic delivered/dropped totals derived from them.
fn render_destinations(
    w: &mut PromWriter,
    dests: &[Arc<DestinationStats>],
    chunks_lost: u64,
    buffer_full: u64,
) {
    w.family(
        "sluice_delivered_total",
        "counter",
        "Events delivered (completions Delivered, and the accepted part of Rejected).",
    );
    for d in dests {
        w.sample(
            "sluice_delivered_total",
            &[("output", d.output()), ("destination", d.name())],
            d.delivered_events(),
        );
    }
    // Summed over destinations: the reasons are what an operator alerts on.
    w.family(
        "sluice_dropped_total",
        "counter",
        "Events given up, by reason: refused by the destination (hec_rejected), not delivered \
         by the drain timeout (drain_timeout), the output gone (output_gone), a delivery never \
         completed (uncompleted: a bug), handed back with no buffer to keep them \
         (retry_without_buffer), UDP datagrams the kernel dropped while the disk buffer was \
         full and the receivers held back (buffer_full).",
    );
    let mut rejected: Vec<(&str, u64)> = Vec::new();
    for d in dests {
        match rejected.iter_mut().find(|(r, _)| *r == d.rejected_reason()) {
            Some((_, n)) => *n += d.rejected_events(),
            None => rejected.push((d.rejected_reason(), d.rejected_events())),
        }
    }
    for (reason, n) in rejected {
        w.sample("sluice_dropped_total", &[("reason", reason)], n);
    }
    for reason in AbandonReason::ALL {
        let mut n: u64 = dests.iter().map(|d| d.abandoned_lost_events(*reason)).sum();
        if *reason == AbandonReason::OutputGone {
            n += chunks_lost;
        }
        w.sample("sluice_dropped_total", &[("reason", reason.label())], n);
    }
    w.sample(
        "sluice_dropped_total",
        &[("reason", "retry_without_buffer")],
        dests.iter().map(|d| d.retry_lost_events()).sum::<u64>(),
    );
    w.sample(
        "sluice_dropped_total",
        &[("reason", "buffer_full")],
        buffer_full,
    );

    w.family(
        "sluice_delivery_completions_total",
        "counter",
        "Batches completed per destination, by completion: delivered, rejected (some or all \
         events refused), retry (handed back), abandoned.",
    );
    for d in dests {
        for kind in CompletionKind::ALL {
            w.sample(
                "sluice_delivery_completions_total",
                &[
                    ("output", d.output()),
                    ("destination", d.name()),
                    ("kind", kind.label()),
                ],
                d.completions(*kind),
            );
        }
    }
    w.family(
        "sluice_delivery_events_total",
        "counter",
        "Events completed per destination, by outcome (abandoned includes events a buffer \
         still holds).",
    );
    for d in dests {
        let abandoned: u64 = AbandonReason::ALL
            .iter()
            .map(|r| d.abandoned_events(*r))
            .sum();
        for (outcome, n) in [
            ("delivered", d.delivered_events()),
            ("rejected", d.rejected_events()),
            ("retry", d.retry_events()),
            ("abandoned", abandoned),
        ] {
            w.sample(
                "sluice_delivery_events_total",
                &[
                    ("output", d.output()),
                    ("destination", d.name()),
                    ("outcome", outcome),
                ],
                n,
            );
        }
    }
    for (name, kind, help, value) in [
        (
            "sluice_delivery_in_flight_events",
            "gauge",
            "Events handed to the destination's output and not completed yet.",
            DestinationStats::in_flight_events as fn(&DestinationStats) -> u64,
        ),
        (
            "sluice_delivery_persisted_events_total",
            "counter",
            "Events a buffer persisted before their completion (their window slots freed).",
            DestinationStats::persisted_events,
        ),
        (
            "sluice_delivery_uncompleted_total",
            "counter",
            "Deliveries dropped without a completion: a bug; their events count as dropped \
             (reason uncompleted).",
            DestinationStats::uncompleted,
        ),
    ] {
        w.family(name, kind, help);
        for d in dests {
            w.sample(
                name,
                &[("output", d.output()), ("destination", d.name())],
                value(d),
            );
        }
    }
}
