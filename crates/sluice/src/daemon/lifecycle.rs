//! `sluice run`: bind everything, start the pipeline, reload on SIGHUP, and drain it on
//! SIGTERM/SIGINT.
//!
//! Startup binds every socket before anything starts, so a port conflict or a missing
//! privilege is one clear error naming the setting to change. The listeners are a
//! [`Topology`] run by [`Running`]; a reload ([`crate::daemon::reload`]) changes them in place.
//! Shutdown follows the order of the data:
//! 1. stop accepting and stop reading new data: UDP threads finish their current batch; TCP
//!    connections read what their senders already sent (in the kernel's buffers) until they
//!    are quiet, and deliver it;
//! 2. flush every open batch to its destination;
//! 3. let each destination deliver until its queue is empty or the drain timeout passes;
//!    then what is still undelivered completes as abandoned;
//! 4. exit 0 when every event received was delivered or refused by the destination (counted
//!    as `hec_rejected`), otherwise exit 1 saying how many events were lost.
//!
//! Every number comes from the completions: nothing is inferred from what is left over.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use arc_swap::ArcSwap;
use sluice_net::PortClaimConfig;
use tokio_util::sync::CancellationToken;

use super::build::{Blueprint, Sources};
use super::reload::Reloader;
use crate::admin::ReloadRequest;
use crate::config::{Config, EnvReport};
use crate::output::{DestinationSet, Limits};
use crate::pipeline::SharedProcessor;
use crate::telemetry::state::Registry;
use crate::topology::Topology;
use crate::topology::running::{Running, Shared};
use crate::window::{MemoryBudget, Window};

/// How a run ended, after a signal (or the output's failure) and the drain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    pub received: u64,
    pub delivered: u64,
    /// Refused for good by the destination (HEC 400/413), counted and logged as they came.
    pub rejected: u64,
    /// Received and neither delivered nor refused: not delivered by the drain timeout, or
    /// lost to an output failure. Non-zero makes the exit status 1.
    pub lost: u64,
    /// The output stopped before shutdown began.
    pub output_failed: bool,
}

impl RunOutcome {
    /// Whether the run kept everything it received: exit 0.
    pub fn is_clean(&self) -> bool {
        self.lost == 0 && !self.output_failed
    }
}

/// Runs what `config` (loaded from `sources`) describes until SIGTERM or SIGINT, then drains.
pub(super) fn run(
    sources: Sources,
    config: Config,
    report: EnvReport,
) -> anyhow::Result<RunOutcome> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("sluice-rt")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let handle = rt.handle().clone();
    rt.block_on(run_async(sources, config, report, handle))
}

async fn run_async(
    sources: Sources,
    config: Config,
    report: EnvReport,
    rt: tokio::runtime::Handle,
) -> anyhow::Result<RunOutcome> {
    // First of all: SIGHUP's default action kills the process, and a reload asked for while
    // sluice starts must wait for it instead (tokio keeps the signal until it is read).
    let signals = Signals::install();
    for note in &report.notes {
        tracing::warn!("{note}");
    }
    for w in config.warnings() {
        tracing::warn!("{w}");
    }
    if !report.unsupported.is_empty() {
        tracing::warn!(
            vars = %report.unsupported.join(","),
            "these settings are set but not supported by sluice (or not sluice settings at all); they are ignored"
        );
    }

    let names = if config.parse.use_name_cache {
        let path = &config.parse.name_cache_file;
        let n =
            crate::name_cache::install(path, config.parse.clear_name_cache).with_context(|| {
                format!(
                    "SC4S_USE_NAME_CACHE: cannot open the name cache {} (SC4S_VAR)",
                    path.display()
                )
            })?;
        tracing::info!(path = %path.display(), names = n.len(), "name cache");
        Some(n)
    } else {
        None
    };
    let vps = if config.parse.vendor_options.use_vps_cache {
        let path = vps_cache_file(&config);
        let c = crate::vps_cache::install(&path).with_context(|| {
            format!(
                "SC4S_USE_VPS_CACHE: cannot open the vendor-product cache {} (SC4S_VAR)",
                path.display()
            )
        })?;
        tracing::info!(path = %path.display(), hosts = c.len(), "vendor-product cache");
        Some(c)
    } else {
        None
    };
    let Blueprint {
        topology,
        destinations: plan,
        routing,
        processor,
    } = Blueprint::build(&config)?;
    // The one shutdown signal: cancelled when a signal arrives (or the output ends); each
    // stage below then stops in the order of the data.
    let stop = CancellationToken::new();
    let stopping = Arc::new(AtomicBool::new(false));
    let memory = MemoryBudget::new(config.window.max_bytes.0);
    let udp_window = Window::new("udp", config.udp.window);
    let tcp_window = Window::pushing_back("tcp", config.tcp.window);
    let processor: SharedProcessor = Arc::new(ArcSwap::from_pointee(processor));
    let shared = Shared {
        processor: processor.clone(),
        memory: memory.clone(),
        udp_window: udp_window.clone(),
        tcp_window: tcp_window.clone(),
        rt,
        stop: stop.clone(),
        claim: PortClaimConfig {
            share: config.listen.share_ports,
            lock_dir: config.listen.lock_dir.clone().or_else(|| {
                sluice_net::default_lock_dir(
                    config.service.runtime_directory.as_deref(),
                    config.service.xdg_runtime_dir.as_deref(),
                )
            }),
        },
    };

    // --- outputs -----------------------------------------------------------------------
    // Started before the listeners are bound (they hand their batches to them); they open
    // no connection until the first batch, and HEC reachability is probed after binding.
    let windows = [udp_window.clone(), tcp_window.clone()];
    let (mut destinations, submit) = DestinationSet::start(
        &plan,
        &Limits {
            windows: &windows,
            memory: &memory,
        },
        routing.fallback(),
    )?;

    // --- bind everything first --------------------------------------------------------
    // The topology, the group task and the metrics task hold the only handles into the
    // destinations: the outputs end once they are gone.
    // Only with HEC: an unused handle would keep the destination open through the drain.
    let metrics_submit = config.uses_hec().then(|| submit.only(0)).flatten();
    let groups_out = submit.clone();
    let groups_task = crate::group::spawn(processor.clone(), groups_out.clone(), stop.clone());
    let names_task = names.map(|n| crate::name_cache::spawn(n, stop.clone()));
    let vps_task = vps.map(|c| crate::vps_cache::spawn(c, stop.clone()));
    let mut running = Running::new(shared, submit);
    let startup = running.prepare(Topology::default().transition(topology))?;
    let mut reloader = Reloader::new(sources, config)?;
    let config = reloader.config();
    for (name, hec) in std::mem::take(&mut destinations.hec) {
        for p in hec.probe().await {
            if p.reachable && p.token_accepted != Some(false) {
                tracing::info!(destination = %name, url = %p.url, "{}", p.message);
            } else {
                tracing::error!(destination = %name, url = %p.url, "{}", p.message);
            }
        }
    }

    // --- receivers ---------------------------------------------------------------------
    let errors = running.commit(startup);
    if !errors.is_empty() {
        anyhow::bail!("{}", errors.join("; "));
    }
    check_fd_limit(running.stream_connections());

    let registry = Arc::new(Registry {
        started: Instant::now(),
        ports: running.ports(),
        windows: vec![udp_window, tcp_window],
        memory,
        destinations: destinations.state.clone(),
        stopping: stopping.clone(),
        config: reloader.stats(),
    });
    if let Some(submit) = metrics_submit {
        spawn_metrics_to_hec(config, &registry, submit, stop.clone());
    }
    watch_buffer_full(registry.clone(), stop.clone());
    let (reload_tx, mut reload_rx) = tokio::sync::mpsc::channel::<ReloadRequest>(4);
    let admin = if config.admin.port != 0 {
        let addr = SocketAddr::new(config.admin.address, config.admin.port);
        let (local, task) = crate::admin::bind(addr, registry.clone(), Some(reload_tx))
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot listen on the status port {addr}: {e}; change it with \
                     SC4S_LISTEN_STATUS_PORT (0 disables it)"
                )
            })?;
        tracing::info!(addr = %local, "serving /health, /metrics and POST /reload");
        Some(task)
    } else {
        None
    };
    let pid_file = PidFile::write(config.admin.pid_file.as_deref())?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "sluice is running");
    // systemd (Type=notify): ready once everything is bound and delivering; watchdog pings
    // from this runtime. A no-op outside systemd.
    let notify = crate::notify::Notifier::new(&config.service)?;
    let plan = running.plan();
    notify.ready(&format!(
        "receiving on {} UDP and {} stream ports",
        plan.udp().count(),
        plan.streams().count()
    ));
    let _watchdog = notify.spawn_watchdog();

    // --- serve: reload on request, until a signal or the output's end ----------------------
    let output_failed = serve(
        signals,
        &mut reloader,
        &mut running,
        &mut reload_rx,
        &mut destinations,
    )
    .await;
    if output_failed {
        tracing::error!("the output stopped unexpectedly; shutting down");
    } else {
        tracing::info!(
            "stopping: no longer accepting; reading what senders already sent, then delivering what is in flight"
        );
    }
    let drain_timeout = reloader.config().shutdown.drain_timeout;

    // --- drain, in the order of the data ---------------------------------------------------
    notify.stopping("stopping: delivering what is in flight");
    stopping.store(true, Ordering::Relaxed);
    stop.cancel();
    let drain_start = Instant::now();
    let deadline = tokio::time::Instant::now() + drain_timeout;
    // 1. The receivers read what senders already sent and hand over their open batches.
    running.shutdown().await;
    // 2. The receivers are gone: what multi-part groups still hold goes out before the drain.
    if let Err(e) = groups_task.await {
        tracing::error!(error = %e, "the multi-part group task failed");
    }
    crate::group::flush_open(&processor, &groups_out);
    drop(groups_out);
    if let Some(t) = names_task
        && let Err(e) = t.await
    {
        tracing::error!(error = %e, "the name cache task failed");
    }
    if let Some(t) = vps_task
        && let Err(e) = t.await
    {
        tracing::error!(error = %e, "the vendor-product cache task failed");
    }
    let received = registry.received_total();
    tracing::info!(
        received,
        "receivers stopped; every open batch has been handed to the output"
    );

    // 3. The destinations deliver what they hold, until the drain timeout.
    let summary = destinations.drain(deadline).await;
    // 4. The status server answers "shutting down" until here.
    if let Some(admin) = admin {
        admin.abort();
    }
    drop(pid_file);
    // TCP chunks that never reached their port's combiner (a bug; counted when it happens).
    let chunks_lost = registry.chunks_lost_total();
    let outcome = RunOutcome {
        received,
        delivered: summary.delivered,
        rejected: summary.rejected,
        lost: summary.lost + chunks_lost,
        output_failed,
    };
    let RunOutcome {
        delivered,
        rejected,
        lost,
        ..
    } = outcome;
    if lost > 0 {
        let why = if summary.timed_out {
            format!("the drain timeout ({drain_timeout:?}, SLUICE_DRAIN_TIMEOUT) ran out")
        } else {
            "the output failed".to_owned()
        };
        tracing::error!(
            received,
            delivered,
            rejected,
            lost,
            "stopped with loss: {why}; {lost} events received were not delivered"
        );
    } else if output_failed {
        tracing::error!(
            received,
            delivered,
            rejected,
            "stopped after an output failure"
        );
    } else {
        tracing::info!(received, delivered, rejected, elapsed = ?drain_start.elapsed(), "stopped cleanly");
    }
    if summary.kept > 0 {
        tracing::info!(
            events = summary.kept,
            written_at_shutdown = summary.rescued,
            "the disk buffer keeps these events; the next start delivers them"
        );
    }
    Ok(outcome)
}

/// Counts UDP kernel drops as `buffer_full` while a disk buffer is full: the receivers
/// are held back then, and the kernel drops what they do not read.
fn watch_buffer_full(registry: Arc<Registry>, stop: CancellationToken) {
    tokio::spawn(async move {
        let drops = || registry.ports.load().kernel_drops();
        let mut last = drops();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = stop.cancelled() => return,
            }
            let now = drops();
            // Any destination's buffer full holds the receivers back.
            let destinations = registry.destinations.load();
            if let Some(full) = destinations.buffers().find(|b| b.full().is_some()) {
                full.add_buffer_full_drops(now.saturating_sub(last));
            }
            last = now;
        }
    });
}

/// Submits the metric events of `config`'s form to the HEC destination, one batch per
/// interval, until `stop`. Holds a handle into the destination until then: cancel `stop`
/// before waiting for the destination to drain.
fn spawn_metrics_to_hec(
    config: &crate::config::Config,
    registry: &Arc<Registry>,
    submit: crate::output::Submit,
    stop: tokio_util::sync::CancellationToken,
) {
    let Ok(form) = config.hec.metrics_form() else {
        // client_config() checked it before the output started.
        return;
    };
    let container = config.fields.loghost.clone().unwrap_or_else(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .or_else(|| config.service.hostname.clone())
            .unwrap_or_else(|| "localhost".into())
    });
    let mut fields = vec![("sc4s_container".to_owned(), container.clone())];
    if let Some(h) = &config.fields.container_host {
        fields.push(("sc4s_loghost".to_owned(), h.clone()));
    }
    fields.push((
        "sc4s_version".to_owned(),
        env!("CARGO_PKG_VERSION").to_owned(),
    ));
    let meta = crate::telemetry::sc4s::Meta {
        time: 0.0,
        host: container,
        fields,
    };
    let interval = config.hec.sc4s_metrics_interval;
    crate::telemetry::sc4s::spawn(
        form,
        interval,
        Arc::clone(registry),
        meta,
        stop,
        move |lines| {
            if lines.is_empty() {
                return;
            }
            match sluice_proto::batch::EncodedBatch::from_lines(bytes::Bytes::from(
                lines.join("\n"),
            )) {
                Ok(batch) => submit.submit(batch),
                Err(e) => {
                    tracing::warn!(error = %e, "sluice's metrics do not fit one batch; not sent")
                }
            }
        },
    );
}

/// SIGTERM, SIGINT and SIGHUP, caught from startup on.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> Option<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) {
            (Ok(term), Ok(int), Ok(hup)) => Some(Signals { term, int, hup }),
            _ => {
                tracing::error!("cannot install signal handlers; stop sluice with SIGKILL only");
                None
            }
        }
    }
}

/// Runs until SIGTERM/SIGINT or the output's end, reloading on SIGHUP and on requests from
/// the status server, and forgetting stream ports whose connections have drained. Returns
/// whether the output ended first (it failed).
async fn serve(
    signals: Option<Signals>,
    reloader: &mut Reloader,
    running: &mut Running,
    requests: &mut tokio::sync::mpsc::Receiver<ReloadRequest>,
    output: &mut DestinationSet,
) -> bool {
    let Some(Signals {
        mut term,
        mut int,
        mut hup,
    }) = signals
    else {
        output.ended().await;
        return true;
    };
    // Also how often destinations a reload removed are looked at (see `retire_grace`).
    let mut reap = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = term.recv() => {
                tracing::info!(signal = "SIGTERM", "signal received");
                return false;
            }
            _ = int.recv() => {
                tracing::info!(signal = "SIGINT", "signal received");
                return false;
            }
            _ = hup.recv() => {
                let _ = reloader.reload(running, output, "SIGHUP");
            }
            Some(ReloadRequest(reply)) = requests.recv() => {
                let _ = reply.send(reloader.reload(running, output, "POST /reload"));
            }
            _ = reap.tick() => {
                running.reap();
                let config = reloader.config();
                output.retire_due(
                    crate::output::retire_grace(config.hec.batch_timeout),
                    config.shutdown.drain_timeout,
                );
            }
            () = output.ended() => return true,
        }
    }
}

/// `SLUICE_PID_FILE`: written once the ports are bound, removed at a clean exit.
struct PidFile(Option<PathBuf>);

impl PidFile {
    fn write(path: Option<&Path>) -> anyhow::Result<PidFile> {
        let Some(path) = path else {
            return Ok(PidFile(None));
        };
        std::fs::write(path, format!("{}\n", std::process::id())).with_context(|| {
            format!(
                "cannot write the pid file {} (SLUICE_PID_FILE / admin.pid_file)",
                path.display()
            )
        })?;
        Ok(PidFile(Some(path.to_owned())))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Raises the open-file limit to the hard limit and warns when even that is below what the
/// connection limits can use: past it, `accept` fails with EMFILE for every sender.
fn check_fd_limit(stream_connections: u64) {
    // UDP sockets, HEC connections, files, the admin server: a generous allowance.
    let needed = stream_connections + 1024;
    match sluice_net::raise_fd_limit() {
        Ok(l) => {
            if l.now < needed {
                tracing::warn!(
                    limit = l.now,
                    needed,
                    "the open-file limit (RLIMIT_NOFILE) is below what the stream connection \
                     limits may use; raise it (systemd: LimitNOFILE={needed}, docker: --ulimit \
                     nofile={needed}) or lower SC4S_SOURCE_<PROTO>_MAX_CONNECTIONS"
                );
            } else if l.now != l.before {
                tracing::debug!(from = l.before, to = l.now, "raised the open-file limit");
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot read or raise the open-file limit"),
    }
}

/// Where the vendor-product cache is kept: beside the name cache (`$SC4S_VAR/vps.cache`).
fn vps_cache_file(config: &Config) -> std::path::PathBuf {
    config.parse.name_cache_file.with_file_name("vps.cache")
}
