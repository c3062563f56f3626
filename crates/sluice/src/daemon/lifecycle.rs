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
use sluice_proto::batch::BatchPolicy;
use sluice_proto::classify::{
    BuildError, Classifier, Settings, VendorSelection, context::ContextFiles,
};
use sluice_proto::event::{EncodeOptions, IndexedFields};
use sluice_proto::time::Zone;
use tokio_util::sync::CancellationToken;

use crate::admin::ReloadRequest;
use crate::cli::RunArgs;
use crate::config::{Config, EnvReport};
use crate::daemon::reload::Reloader;
use crate::output::{DestinationSet, Limits};
use crate::pipeline::Processor;
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

pub fn run(args: RunArgs, config: Config, report: EnvReport) -> anyhow::Result<RunOutcome> {
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
    rt.block_on(run_async(args, config, report, handle))
}

/// This machine's name; `from_env` is `HOSTNAME` (config.service), for when /proc is not
/// readable.
fn hostname(from_env: Option<&str>) -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| from_env.map(str::to_owned))
        .unwrap_or_else(|| "localhost".into())
}

async fn run_async(
    args: RunArgs,
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
    let processor = build_processor(&config)?;
    let stopping = Arc::new(AtomicBool::new(false));
    let memory = MemoryBudget::new(config.window.max_bytes.0);
    let udp_window = Window::new("udp", config.udp.window);
    let tcp_window = Window::new("tcp", config.tcp.window);
    let shared = Shared {
        processor: Arc::new(ArcSwap::from_pointee(processor)),
        memory: memory.clone(),
        udp_window: udp_window.clone(),
        tcp_window: tcp_window.clone(),
        rt,
        stop: CancellationToken::new(),
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
    let plan = config.destination_plan();
    let routing = crate::routing::Routing::build(&config, &plan)?;
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
    // The topology holds the only handles into the destination: the output ends once the
    // receivers are gone.
    // Only with HEC: an unused handle would keep the destination open through the drain.
    let metrics_submit = config.uses_hec().then(|| submit.only(0)).flatten();
    let groups_stop = CancellationToken::new();
    let groups_task = crate::group::spawn(
        shared.processor.clone(),
        submit.clone(),
        groups_stop.clone(),
    );
    let names_task = names.map(|n| crate::name_cache::spawn(n, groups_stop.clone()));
    let mut running = Running::new(shared, submit);
    let startup =
        running.prepare(Topology::default().transition(Topology::from_config(&config)?))?;
    let mut reloader = Reloader::new(args, config)?;
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
        destinations: Arc::new(ArcSwap::from_pointee(destinations.state.clone())),
        stopping: stopping.clone(),
        config: reloader.stats(),
    });
    let metrics_stop = CancellationToken::new();
    if let Some(submit) = metrics_submit {
        spawn_metrics_to_hec(config, &registry, submit, metrics_stop.clone());
    }
    let admin_stop = CancellationToken::new();
    watch_buffer_full(registry.clone(), admin_stop.clone());
    let (reload_tx, mut reload_rx) = tokio::sync::mpsc::channel::<ReloadRequest>(4);
    if config.admin.port != 0 {
        let addr = SocketAddr::new(config.admin.address, config.admin.port);
        let (local, _task) =
            crate::admin::bind(addr, registry.clone(), Some(reload_tx), admin_stop.clone())
                .await
                .map_err(|e| {
                    anyhow::anyhow!(
                        "cannot listen on the status port {addr}: {e}; change it with \
                         SC4S_LISTEN_STATUS_PORT (0 disables it)"
                    )
                })?;
        tracing::info!(addr = %local, "serving /health, /metrics and POST /reload");
    }
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

    // --- drain -----------------------------------------------------------------------
    notify.stopping("stopping: delivering what is in flight");
    stopping.store(true, Ordering::Relaxed);
    let drain_start = Instant::now();
    let deadline = tokio::time::Instant::now() + drain_timeout;
    running.shutdown().await;
    metrics_stop.cancel();
    // The receivers are gone: what multi-part groups still hold goes out before the drain.
    groups_stop.cancel();
    if let Err(e) = groups_task.await {
        tracing::error!(error = %e, "the multi-part group task failed");
    }
    if let Some(t) = names_task
        && let Err(e) = t.await
    {
        tracing::error!(error = %e, "the name cache task failed");
    }
    let received = registry.received_total();
    tracing::info!(
        received,
        "receivers stopped; every open batch has been handed to the output"
    );

    let summary = destinations.drain(deadline).await;
    admin_stop.cancel();
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
    let mut reap = tokio::time::interval(Duration::from_secs(5));
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
                let _ = reloader.reload(running, "SIGHUP");
            }
            Some(ReloadRequest(reply)) = requests.recv() => {
                let _ = reply.send(reloader.reload(running, "POST /reload"));
            }
            _ = reap.tick() => running.reap(),
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

/// SC4S's context directory when none is configured: inside SC4S's container, then SC4S's
/// host mount.
pub(crate) fn default_context_dir() -> Option<std::path::PathBuf> {
    [
        "/etc/syslog-ng/conf.d/local/context",
        "/opt/sc4s/local/context",
    ]
    .into_iter()
    .map(std::path::PathBuf::from)
    .find(|p| p.is_dir())
}

pub(crate) fn build_processor(config: &Config) -> anyhow::Result<Processor> {
    let zone = Zone::from_name(&config.parse.default_timezone).map_err(|e| {
        anyhow::anyhow!(
            "SC4S_DEFAULT_TIMEZONE={:?}: {e}",
            config.parse.default_timezone
        )
    })?;
    let context_dir = config
        .parse
        .context_dir
        .clone()
        .or_else(default_context_dir);
    let mut files = match &context_dir {
        Some(dir) => {
            tracing::info!(dir = %dir.display(), "reading SC4S context files");
            ContextFiles::read_dir(dir).map_err(|e| anyhow::anyhow!("SC4S context files: {e}"))?
        }
        None => ContextFiles::default(),
    };
    if let Some(path) = &config.parse.metadata_csv {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read metadata csv {}", path.display()))?;
        files.splunk_metadata = Some((path.display().to_string(), text));
    }
    let settings = Settings {
        listeners: config
            .listeners()?
            .into_iter()
            .filter(|spec| spec.id != "DEFAULT")
            .map(|spec| spec.id.clone())
            .collect(),
        set_source_as_sc4s: config.parse.set_source_as_sc4s,
        zone: zone.clone(),
        vendors: VendorSelection::parse(&config.parse.vendors),
        options: config.parse.vendor_options.clone(),
    };
    let mut tables = Classifier::new(files, &settings).map_err(|e| match e {
        BuildError::UnknownVendor { .. } => anyhow::anyhow!("parse.vendors (SLUICE_VENDORS): {e}"),
        e => anyhow::anyhow!("SC4S context files: {e}"),
    })?;
    for spec in config.listeners()? {
        if tables.ignored_listeners().contains(&spec.id) {
            tracing::warn!(
                id = %spec.id,
                "{} does not name a vendor and product (VENDOR_PRODUCT[_EXTRA]); its events get \
                 the default metadata",
                spec.setting
            );
        }
    }
    for w in tables.warnings() {
        tracing::warn!("{w}");
    }
    // Opened once, at start (`open_name_cache`); a reload that turns it on finds none.
    let names = config
        .parse
        .use_name_cache
        .then(crate::name_cache::installed)
        .flatten();
    if let Some(n) = &names {
        tables.set_name_cache(n.clone());
    } else if config.parse.use_name_cache {
        tracing::warn!("SC4S_USE_NAME_CACHE was off at start: it takes effect at the next start");
    }
    let encode = EncodeOptions {
        indexed_fields: IndexedFields::from_sc4s(&config.fields.indexed_fields),
        loghost: config
            .fields
            .loghost
            .clone()
            .unwrap_or_else(|| hostname(config.service.hostname.as_deref())),
        container_host: config.fields.container_host.clone(),
        store_raw_message: config.parse.store_raw_message,
    };
    Ok(Processor {
        zone,
        tables,
        encode,
        batch: BatchPolicy {
            max_events: config.hec.batch_lines,
            max_bytes: config.hec.batch_bytes.0 as usize,
            timeout: config.hec.batch_timeout,
        },
        routing: {
            let routing = crate::routing::Routing::build(config, &config.destination_plan())?;
            (!routing.is_uniform()).then(|| Arc::new(routing))
        },
        groups: Default::default(),
        names,
    })
}

/// Registers listener ids with `processor`'s tables (each id's vendor and product metadata),
/// beyond those of the configuration it was built from.
pub(crate) fn register_listeners<'a>(
    processor: &mut Processor,
    ids: impl IntoIterator<Item = &'a str>,
) {
    for id in ids {
        if id != "DEFAULT" {
            processor.tables.add_listener(id);
        }
    }
}
