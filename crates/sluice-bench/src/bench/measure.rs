//! Steps 3 and 5 of a run, for one offered load: send it, wait for the drain
//! ([`super::drain`]), and record what arrived, what the kernel dropped and what the receiver
//! spent.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Instant;

use super::BenchError;
use super::args::{BenchArgs, BenchTransport};
use super::drain::{self, Drained};
use super::plan::Plan;
use super::probe::{self, HttpUrl, Metrics};
use super::receiver::{self, Daemon};
use super::report::{ConfigResult, StepResult};
use super::sender::{self, Sender};
use super::steps::Step;
use crate::sink::SinkHandle;

/// Where a step sends and what it can observe.
pub(super) struct Receiver<'a> {
    pub target: SocketAddr,
    /// The port label of the receiver's metrics.
    pub port: u16,
    pub metrics: Option<&'a HttpUrl>,
    pub pid: Option<u32>,
    pub daemon: Option<&'a mut Daemon>,
}

impl Receiver<'_> {
    pub fn metrics(&mut self) -> Result<Option<Metrics>, BenchError> {
        if let Some(d) = self.daemon.as_deref_mut() {
            return receiver::daemon_metrics(d).map(Some);
        }
        match self.metrics {
            Some(url) => {
                probe::fetch_metrics(url)
                    .map(Some)
                    .map_err(|reason| BenchError::Metrics {
                        url: format!("http://{}:{}{}", url.host, url.port, url.path),
                        reason,
                    })
            }
            None => Ok(None),
        }
    }
}

/// Sink state before a step.
struct SinkMark {
    runids: BTreeSet<Option<u64>>,
    accepted: u64,
    unparsed: u64,
    rejected: u64,
}

fn sink_mark(sink: &SinkHandle) -> SinkMark {
    let r = sink.seq_report(None);
    SinkMark {
        runids: r.per_thread.iter().map(|t| t.runid).collect(),
        unparsed: r.unparsed,
        accepted: sink.accepted_events(),
        rejected: sink.stats().rejected_total(),
    }
}

fn delta(a: Option<f64>, b: Option<f64>) -> Option<u64> {
    Some((b? - a?).max(0.0).round() as u64)
}

fn by_socket(m: &Metrics, name: &str, labels: &[(&str, &str)]) -> BTreeMap<usize, f64> {
    m.by_label(name, "socket", labels)
        .into_iter()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
        .collect()
}

fn socket_deltas(a: &BTreeMap<usize, f64>, b: &BTreeMap<usize, f64>) -> Vec<u64> {
    let n = b.keys().next_back().map_or(0, |k| k + 1);
    (0..n)
        .map(|i| {
            let x = b.get(&i).copied().unwrap_or(0.0) - a.get(&i).copied().unwrap_or(0.0);
            x.max(0.0).round() as u64
        })
        .collect()
}

pub(super) struct Ctx<'a> {
    pub args: &'a BenchArgs,
    pub plan: &'a Plan,
    pub sink: Option<&'a SinkHandle>,
    pub ticks: f64,
}

pub(super) fn run_step(
    ctx: &Ctx<'_>,
    rx: &mut Receiver<'_>,
    step: Step,
    run_id: u64,
    label: &str,
) -> Result<StepResult, BenchError> {
    let args = ctx.args;
    let udp = args.transport == BenchTransport::Udp;
    let port_s = rx.port.to_string();
    let port_l = [("port", port_s.as_str())];

    let load_avg = probe::load_average();
    let m0 = rx.metrics()?;
    let udp0 = udp.then(|| probe::udp_socket_drops(rx.target.port()));
    let mark0 = ctx.sink.map(sink_mark);
    let rss_reset = rx.pid.is_some_and(probe::reset_peak_rss);
    let cpu0 = rx.pid.and_then(|p| probe::cpu_seconds(p, ctx.ticks));
    let own0 = probe::self_and_children_cpu(ctx.ticks);
    let sink_cpu0 = probe::own_threads_cpu("hec-sink", ctx.ticks);
    let threads0 = rx
        .pid
        .map(|p| probe::cpu_by_thread(p, ctx.ticks))
        .unwrap_or_default();

    let send_start = Instant::now();
    let sent = sender::send(&sender::SendPlan {
        sender: args.sender,
        loggen_path: &ctx.plan.loggen_path,
        target: rx.target,
        transport: args.transport.loggen(),
        step,
        sources: args.sources,
        size: args.size,
        replay: args.replay.as_deref(),
        duration: args.duration,
        run_id,
    })?;
    eprint!(
        "[{label}] {}: sent {} in {:.2} s ({:.0}/s); draining…",
        step.label(),
        sent.sent,
        sent.elapsed.as_secs_f64(),
        sent.sent as f64 / sent.elapsed.as_secs_f64().max(1e-9)
    );

    let Drained {
        drained,
        secs: drain_secs,
        last_change,
    } = drain::wait(ctx, rx)?;

    let cpu1 = rx.pid.and_then(|p| probe::cpu_seconds(p, ctx.ticks));
    let own1 = probe::self_and_children_cpu(ctx.ticks);
    let sink_cpu1 = probe::own_threads_cpu("hec-sink", ctx.ticks);
    let threads1 = rx
        .pid
        .map(|p| probe::cpu_by_thread(p, ctx.ticks))
        .unwrap_or_default();
    let peak_rss_kib = rx.pid.and_then(|p| probe::status_kib(p, "VmHWM"));
    let m1 = rx.metrics()?;
    let udp1 = udp.then(|| probe::udp_socket_drops(rx.target.port()));

    // What the sink got from this step's run ids.
    let (mut delivered, mut duplicates, mut sink_accepted, mut sink_unparsed, mut rejected) =
        (None, None, None, None, None);
    let mut run_ids: Vec<u64> = sent.run_id.into_iter().collect();
    if let (Some(sink), Some(mark)) = (ctx.sink, &mark0) {
        let r = sink.seq_report(None);
        let mine = |t: &crate::seq::ThreadReport| match sent.run_id {
            Some(id) => t.runid == Some(id),
            None => !mark.runids.contains(&t.runid),
        };
        let (mut d, mut dup) = (0, 0);
        for t in r.per_thread.iter().filter(|t| mine(t)) {
            d += t.distinct;
            dup += t.duplicates;
            if let Some(id) = t.runid
                && !run_ids.contains(&id)
            {
                run_ids.push(id);
            }
        }
        if args.replay.is_some() {
            // Replayed lines have no sequence numbers: what the sink accepted is what was
            // delivered, duplicates unknown.
            let accepted = sink.accepted_events().saturating_sub(mark.accepted);
            delivered = Some(accepted);
            sink_accepted = Some(accepted);
        } else {
            delivered = Some(d);
            duplicates = Some(dup);
            sink_accepted = Some(d + dup);
        }
        sink_unparsed = Some(r.unparsed.saturating_sub(mark.unparsed));
        rejected = Some(sink.stats().rejected_total().saturating_sub(mark.rejected));
    }
    let mut delivered_source = if delivered.is_some() { "sink" } else { "none" };

    let (mut kernel_drops, mut received, mut window_full, mut dropped) = (None, None, None, None);
    let (mut per_socket_received, mut per_socket_datagrams) = (Vec::new(), Vec::new());
    if let (Some(a), Some(b)) = (&m0, &m1) {
        let udp_l = [("transport", "udp"), ("port", port_s.as_str())];
        // A TLS port is labelled tls or rfc5425 by the receiver; the port alone selects it.
        let proto_l: &[(&str, &str)] = match args.transport {
            BenchTransport::Udp => &[("transport", "udp"), ("port", port_s.as_str())],
            BenchTransport::Tcp => &[("transport", "tcp"), ("port", port_s.as_str())],
            BenchTransport::Tls => &[("port", port_s.as_str())],
        };
        if udp {
            kernel_drops = delta(
                a.sum("sluice_kernel_dropped_total", &port_l),
                b.sum("sluice_kernel_dropped_total", &port_l),
            );
            per_socket_received = socket_deltas(
                &by_socket(a, "sluice_received_total", &udp_l),
                &by_socket(b, "sluice_received_total", &udp_l),
            );
            per_socket_datagrams = socket_deltas(
                &by_socket(a, "sluice_udp_datagrams_total", &port_l),
                &by_socket(b, "sluice_udp_datagrams_total", &port_l),
            );
        }
        received = delta(
            a.sum("sluice_received_total", proto_l),
            b.sum("sluice_received_total", proto_l),
        );
        window_full = delta(
            a.sum("sluice_window_full_total", &[]),
            b.sum("sluice_window_full_total", &[]),
        );
        dropped = delta(
            a.sum("sluice_dropped_total", &[]),
            b.sum("sluice_dropped_total", &[]),
        );
        if delivered.is_none() {
            delivered = delta(
                a.sum("sluice_delivered_total", &[]),
                b.sum("sluice_delivered_total", &[]),
            );
            if delivered.is_some() {
                delivered_source = "metrics";
            }
        }
    }
    let proc_udp_drops = match (&udp0, &udp1) {
        (Some(a), Some(b)) if !b.is_empty() => Some(probe::drops_delta(a, b)),
        _ => None,
    };
    let kernel_drops_source = if kernel_drops.is_some() {
        Some("metrics".to_string())
    } else if proc_udp_drops.is_some() {
        kernel_drops = proc_udp_drops;
        Some("proc".to_string())
    } else {
        None
    };

    let send_secs = sent.elapsed.as_secs_f64();
    let send_rate = if send_secs > 0.0 {
        sent.sent as f64 / send_secs
    } else {
        0.0
    };
    let cpu = match (cpu0, cpu1) {
        (Some(a), Some(b)) => Some((b - a).max(0.0)),
        _ => None,
    };
    // Utilisation over the active period: first message sent → last event seen at the sink
    // (the idle settle time is left out so it does not dilute the figure).
    let active_secs = last_change
        .max(send_start + sent.elapsed)
        .saturating_duration_since(send_start)
        .as_secs_f64()
        .max(1e-9);
    let cpu_pct = cpu.map(|c| c / active_secs * 100.0);
    let per_event_base = delivered.filter(|d| *d > 0).unwrap_or(sent.sent);
    let cpu_us_per_event = cpu
        .filter(|_| per_event_base > 0)
        .map(|c| c * 1e6 / per_event_base as f64);
    // The harness's share of the machine: the sink's threads over the active period, the
    // sender (syslog-ng's loggen: its exited child's CPU; ours: this process minus the sink)
    // over the sending time.
    let sink_cpu = (sink_cpu1 - sink_cpu0).max(0.0);
    let sink_cpu_pct = ctx.sink.map(|_| sink_cpu / active_secs * 100.0);
    let sender_cpu_pct = match (own0, own1) {
        (Some((s0, c0)), Some((s1, c1))) => {
            let used = match args.sender {
                Sender::Loggen => c1 - c0,
                Sender::Sluice => (s1 - s0) - sink_cpu,
            };
            Some(used.max(0.0) / send_secs.max(1e-9) * 100.0)
        }
        _ => None,
    };
    let cpu_by_thread = threads1
        .iter()
        .map(|(name, t1)| {
            let t0 = threads0.get(name).copied().unwrap_or(0.0);
            (name.clone(), (t1 - t0).max(0.0) / active_secs * 100.0)
        })
        .filter(|(_, p)| *p >= 0.5)
        .collect();
    let loss_pct = delivered
        .filter(|_| sent.sent > 0)
        .map(|d| sent.sent.saturating_sub(d) as f64 * 100.0 / sent.sent as f64);

    eprintln!(
        " delivered {}, loss {}, kernel drops {}{}{} ({:.1} s)",
        delivered.map_or("?".into(), |d| d.to_string()),
        loss_pct.map_or("?".into(), |l| format!("{l:.3}%")),
        kernel_drops.map_or("?".into(), |d| d.to_string()),
        if drained { "" } else { ", NOT DRAINED" },
        match rejected {
            Some(r) if r > 0 => format!(", {r} requests REJECTED by the sink"),
            _ => String::new(),
        },
        drain_secs
    );
    if delivered == Some(0) && sent.sent > 0 && ctx.sink.is_some() {
        eprintln!(
            "warning: nothing reached the sink; is the receiver's HEC output pointed at {} with token {:?}?",
            ctx.sink.map(|s| s.event_url()).unwrap_or_default(),
            args.sink_token
        );
    }

    Ok(StepResult {
        step,
        label: step.label(),
        offered_rate: send_rate,
        run_ids,
        sent: sent.sent,
        send_secs,
        send_rate,
        lagged: sent.lagged,
        send_errors: sent.errors,
        delivered,
        delivered_source: delivered_source.to_string(),
        duplicates,
        sink_accepted,
        sink_unparsed,
        loss_pct,
        kernel_drops,
        kernel_drops_source,
        proc_udp_drops,
        received,
        per_socket_received,
        per_socket_datagrams,
        window_full,
        dropped,
        cpu_pct,
        cpu_us_per_event,
        cpu_by_thread,
        sink_cpu_pct,
        sender_cpu_pct,
        peak_rss_kib,
        peak_rss_scope: rx
            .pid
            .map(|_| if rss_reset { "step" } else { "process" }.to_string()),
        drained,
        drain_secs,
        load_avg,
    })
}

/// Fills a configuration's receiver description from the daemon's metrics.
pub(super) fn describe_daemon(c: &mut ConfigResult, m: &Metrics, port: u16) {
    let p = port.to_string();
    if let Some(labels) = m
        .labels_of("sluice_udp_balance_info")
        .filter(|l| l.iter().any(|(k, v)| k == "port" && v == &p))
    {
        let get = |k: &str| {
            labels
                .iter()
                .find(|(lk, _)| lk == k)
                .map(|(_, v)| v.clone())
        };
        c.balance = get("mode");
        c.balance_fallback = get("fallback_reason").filter(|s| !s.is_empty());
    }
    let rcv = m.by_label("sluice_udp_rcvbuf_bytes", "socket", &[("port", &p)]);
    if !rcv.is_empty() {
        c.udp_sockets = Some(rcv.len());
        c.rcvbuf_bytes = rcv.values().next().map(|v| *v as u64);
    }
}
