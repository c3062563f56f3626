//! `sluice run`: bind everything, start the pipeline, and drain it on SIGTERM/SIGINT.
//!
//! Startup binds every socket before anything starts, so a port conflict or a missing
//! privilege is one clear error naming the setting to change. Shutdown follows the order
//! of the data: stop reading, flush every open batch into the output channel, let the
//! output deliver until the channel is empty or the drain timeout passes, then exit 0.
//! Whatever is still undelivered at the timeout is logged with its count.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;
use sluice_hec::{AbortSignal, BatchPolicy, DrainReport, EncodedBatch, HecOutput, HecStats};
use sluice_net::{NetError, PortClaimConfig, UdpGroup, UdpGroupConfig};
use sluice_proto::classify::{
    BuildError, Classifier, Settings, VendorSelection, context::ContextFiles,
};
use sluice_proto::event::{EncodeOptions, IndexedFields};
use sluice_proto::time::Zone;
use tokio_util::sync::CancellationToken;

use crate::config::{Balance, Config, EnvReport, ListenerKind, SourceProto};
use crate::metrics::{OutputMetrics, Registry, UdpPortMetrics};
use crate::output::{FileOutput, FileStats};
use crate::pipeline::Processor;
use crate::stream::{StreamListeners, StreamShared};
use crate::udp::{UdpContext, UdpPort};
use crate::window::{MemoryBudget, Window};

/// Logs go to stderr; `SLUICE_LOG` (or `RUST_LOG`) takes a tracing filter, default `info`.
pub fn init_logging(env: &crate::env::Env) {
    let filter = env
        .get("SLUICE_LOG")
        .or_else(|| env.get("RUST_LOG"))
        .map_or_else(|| "info".to_owned(), |v| v.value.clone());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}

pub fn run(config: Config, report: EnvReport) -> anyhow::Result<()> {
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
    rt.block_on(run_async(config, report, handle))
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

fn to_net_balance(b: Balance) -> sluice_net::Balance {
    match b {
        Balance::Ebpf => sluice_net::Balance::Ebpf,
        Balance::Cbpf => sluice_net::Balance::Cbpf,
        Balance::Kernel => sluice_net::Balance::Kernel,
    }
}

async fn run_async(
    config: Config,
    report: EnvReport,
    rt: tokio::runtime::Handle,
) -> anyhow::Result<()> {
    for note in &report.notes {
        tracing::warn!("{note}");
    }
    for w in config.warnings() {
        tracing::warn!("{w}");
    }
    if !report.unsupported.is_empty() {
        tracing::warn!(
            vars = %report.unsupported.join(","),
            "these SC4S settings are set but not supported by sluice; they are ignored"
        );
    }

    let processor = Arc::new(build_processor(&config)?);
    let stop = CancellationToken::new();
    let stopping = Arc::new(AtomicBool::new(false));
    let (tx, rx) = async_channel::unbounded::<EncodedBatch>();

    // --- bind everything first --------------------------------------------------------
    let listeners = config.listeners()?;
    let claim = PortClaimConfig {
        share: config.listen.share_ports,
        lock_dir: config.listen.lock_dir.clone().or_else(|| {
            sluice_net::default_lock_dir(
                config.service.runtime_directory.as_deref(),
                config.service.xdg_runtime_dir.as_deref(),
            )
        }),
    };
    let mut udp_groups = Vec::new();
    for spec in listeners.iter().filter(|l| l.kind == ListenerKind::Udp) {
        let port = spec.port;
        let addr = SocketAddr::new(config.listen.address, port);
        let mut g = UdpGroupConfig::new(addr);
        g.sockets = config.udp.sockets;
        g.balance = to_net_balance(config.udp.balance);
        let rcvbuf = if spec.proto == SourceProto::Rfc5426 {
            config.udp.rfc5426_rcvbuf
        } else {
            config.udp.rcvbuf
        };
        g.rcvbuf = (rcvbuf.0 > 0).then_some(rcvbuf.0 as usize);
        g.batch = config.udp.fetch_limit.clamp(1, sluice_net::MAX_BATCH);
        g.max_datagram = config
            .listen
            .max_message_size
            .min(sluice_net::DEFAULT_MAX_DATAGRAM);
        g.claim = claim.clone();
        let group = UdpGroup::bind(&g).map_err(|e| listen_error("UDP", addr, &spec.setting, &e))?;
        log_sharing("UDP", addr, group.shared_with());
        if let Some(reason) = group.fallback_reason() {
            tracing::warn!(
                port,
                requested = %g.balance,
                using = %group.balance_mode(),
                "UDP balancing fell back: {reason}"
            );
        }
        for r in group.rcvbuf_reports() {
            if let Some(hint) = r.sysctl_hint() {
                tracing::warn!(port, "UDP receive buffer smaller than requested: {hint}");
                break;
            }
        }
        udp_groups.push((spec.id.clone(), g.balance, group));
    }
    let streams = StreamListeners::bind(&config, &listeners, &claim)?;
    check_fd_limit(streams.max_connections());

    // --- output ------------------------------------------------------------------------
    let abort = AbortSignal::new();
    let (output_metrics, mut output_task) = if config.uses_hec() {
        let stats = Arc::new(HecStats::default());
        let hec = HecOutput::new(config.hec.client_config()?, stats.clone())
            .context("cannot set up the HEC client")?;
        for p in hec.probe().await {
            if p.reachable && p.token_accepted != Some(false) {
                tracing::info!(url = %p.url, "{}", p.message);
            } else {
                tracing::error!(url = %p.url, "{}", p.message);
            }
        }
        let abort2 = abort.clone();
        let task = tokio::spawn(async move { hec.run(rx, abort2).await });
        (OutputMetrics::Hec(stats), task)
    } else {
        let stats = Arc::new(FileStats::default());
        let file = FileOutput::open(&config.output.file, stats.clone())?;
        tracing::info!(
            path = %config.output.file.display(),
            "no HEC URL configured (SC4S_DEST_SPLUNK_HEC_DEFAULT_URL): writing events as JSON lines"
        );
        let abort2 = abort.clone();
        let task = tokio::task::spawn_blocking(move || file.run(rx, abort2));
        (OutputMetrics::File(stats), task)
    };

    // --- receivers ---------------------------------------------------------------------
    let memory = MemoryBudget::new(config.window.max_bytes.0);
    let udp_window = Window::new("udp", config.udp.window);
    let tcp_window = Window::new("tcp", config.tcp.window);
    let mut udp_ports = Vec::new();
    let mut udp_metrics = Vec::new();
    for (id, requested, group) in udp_groups {
        let ctx = UdpContext {
            memory: memory.clone(),
            listener_id: id.as_str().into(),
            processor: processor.clone(),
            window: udp_window.clone(),
            fetch_limit: config.udp.fetch_limit,
            rt: rt.clone(),
            stop: stop.clone(),
        };
        let port = UdpPort::start(group, ctx, &tx).context("cannot start UDP receive threads")?;
        tracing::info!(
            addr = %port.local_addr,
            sockets = port.counters.len(),
            balance = %port.group.balance_mode(),
            rcvbuf = port.group.rcvbuf_reports().first().map_or(0, |r| r.effective),
            "listening on UDP"
        );
        udp_metrics.push(UdpPortMetrics {
            listener: id.clone(),
            port: port.local_addr.port(),
            requested_balance: requested.as_str(),
            balance: port.group.balance_mode().as_str(),
            fallback_reason: port.group.fallback_reason().map(str::to_owned),
            sockets: port.group.stats().to_vec(),
            counters: port.counters.clone(),
            rcvbuf: port.group.rcvbuf_reports().to_vec(),
        });
        udp_ports.push(port);
    }
    let running = streams.start(
        &config,
        &StreamShared {
            memory: memory.clone(),
            processor: processor.clone(),
            window: tcp_window.clone(),
            stop: stop.clone(),
        },
        &tx,
    );
    let tcp_tasks = running.tasks;
    let tcp_metrics = running.metrics;
    let tls = running.tls;
    drop(tx);

    let registry = Arc::new(Registry {
        started: Instant::now(),
        udp: udp_metrics,
        tcp: tcp_metrics,
        windows: vec![udp_window, tcp_window],
        memory,
        output: output_metrics,
        stopping: stopping.clone(),
        tls: tls.clone(),
    });
    let admin_stop = CancellationToken::new();
    if config.admin.port != 0 {
        let addr = SocketAddr::new(config.admin.address, config.admin.port);
        let (local, _task) = crate::admin::bind(addr, registry.clone(), admin_stop.clone())
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot listen on the status port {addr}: {e}; change it with \
                     SC4S_LISTEN_STATUS_PORT (0 disables it)"
                )
            })?;
        tracing::info!(addr = %local, "serving /health and /metrics");
    }
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "sluice is running");
    // systemd (Type=notify): ready once everything is bound and delivering; watchdog pings
    // from this runtime. A no-op outside systemd.
    let notify = crate::notify::Notifier::new(&config.service)?;
    notify.ready(&format!("receiving on {} listeners", listeners.len()));
    let _watchdog = notify.spawn_watchdog();

    // --- wait for a signal, or for the output to die --------------------------------------
    let reload_tls = move || match &tls {
        Some(t) => {
            let _ = t.reload();
        }
        None => tracing::warn!(
            "SIGHUP received: sluice does not reload its configuration; restart it to apply changes"
        ),
    };
    let early_output_end = tokio::select! {
        sig = shutdown_signal(reload_tls) => {
            tracing::info!(signal = sig, "stopping: no longer reading; delivering what is in flight");
            None
        }
        r = &mut output_task => Some(r),
    };

    // --- drain -----------------------------------------------------------------------
    notify.stopping("stopping: delivering what is in flight");
    stopping.store(true, Ordering::Relaxed);
    stop.cancel();
    let drain_start = Instant::now();
    let mut joins = udp_ports;
    let udp_join = tokio::task::spawn_blocking(move || {
        for p in &mut joins {
            p.join();
        }
        joins
    });
    for t in tcp_tasks {
        let _ = t.await;
    }
    let _ports = udp_join.await;
    let received = registry.received_total();
    tracing::info!(
        received,
        "receivers stopped; every open batch has been handed to the output"
    );

    let report: DrainReport = match early_output_end {
        Some(r) => r.context("the output task failed")?,
        None => {
            let budget = config
                .shutdown
                .drain_timeout
                .saturating_sub(drain_start.elapsed());
            match tokio::time::timeout(budget, &mut output_task).await {
                Ok(r) => r.context("the output task failed")?,
                Err(_) => {
                    abort.abort();
                    output_task.await.context("the output task failed")?
                }
            }
        }
    };
    admin_stop.cancel();
    let delivered = registry.delivered_total();
    if report.undelivered_events > 0 {
        tracing::error!(
            received,
            delivered,
            undelivered = report.undelivered_events,
            batches = report.undelivered_batches,
            "drain timeout ({:?}) reached: these events were not delivered",
            config.shutdown.drain_timeout
        );
    } else {
        tracing::info!(received, delivered, elapsed = ?drain_start.elapsed(), "stopped cleanly");
    }
    Ok(())
}

/// A listener that cannot be opened: the address, the cause, and what to change. A port held
/// by another process (the cause names it) can also be shared on purpose.
pub(crate) fn listen_error(
    kind: &str,
    addr: SocketAddr,
    setting: &str,
    e: &NetError,
) -> anyhow::Error {
    let fix = match e {
        NetError::PortInUse { .. } => format!(
            "stop the other receiver, change the port with {setting}, or set \
             SLUICE_LISTEN_SHARE_PORTS=yes (listen.share_ports) to share it"
        ),
        NetError::Lock { .. } => "set SLUICE_LISTEN_LOCK_DIR (listen.lock_dir) to a writable \
             directory"
            .to_owned(),
        _ => format!("change the port with {setting}"),
    };
    anyhow::anyhow!("cannot listen on {kind} {addr}: {e}; {fix}")
}

pub(crate) fn log_sharing(kind: &str, addr: SocketAddr, with: &[sluice_net::PortHolder]) {
    if !with.is_empty() {
        let with: Vec<String> = with.iter().map(ToString::to_string).collect();
        tracing::warn!(
            "{kind} {addr} is shared with {} (SLUICE_LISTEN_SHARE_PORTS=yes)",
            with.join(", ")
        );
    }
}

pub(crate) fn privilege_hint(e: &std::io::Error, port: u16) -> &'static str {
    if e.kind() == std::io::ErrorKind::PermissionDenied && port < 1024 {
        " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
    } else {
        ""
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
fn default_context_dir() -> Option<std::path::PathBuf> {
    [
        "/etc/syslog-ng/conf.d/local/context",
        "/opt/sc4s/local/context",
    ]
    .into_iter()
    .map(std::path::PathBuf::from)
    .find(|p| p.is_dir())
}

fn build_processor(config: &Config) -> anyhow::Result<Processor> {
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
    };
    let tables = Classifier::new(files, &settings).map_err(|e| match e {
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
    })
}

/// Waits for SIGTERM or SIGINT. SIGHUP, whose default action would kill the process without
/// draining, is caught and handed to `on_hup` (which reloads the TLS certificates): an
/// operator's habitual `systemctl reload` must not lose what is in flight.
pub(crate) async fn shutdown_signal(on_hup: impl Fn()) -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::error!("cannot install signal handlers; stop sluice with SIGKILL only");
        return std::future::pending().await;
    };
    loop {
        tokio::select! {
            _ = term.recv() => return "SIGTERM",
            _ = int.recv() => return "SIGINT",
            _ = hup.recv() => on_hup(),
        }
    }
}
