//! `sluice bench`: load and loss measurement in one command.
//!
//! # What a run does
//!
//! 1. Starts the HEC test sink ([`crate::sink`], in process, sequence tracking on, event
//!    recording off) unless `--no-sink`.
//! 2. Starts the receiver under test, once per configuration:
//!    * **daemon mode** (default): `sluice run` as a child process (the executable given to
//!      [`run`]; the CLI passes its own), with a TOML file (`--config FILE`, passed through)
//!      and/or variables (`--env KEY=VALUE`, repeated), listening on `127.0.0.1` on a free
//!      port (or `--port`) for UDP and TCP, its RFC 5426/6587 listener and its status server
//!      on other free ports (so no well-known port, 514, 601 or 8080, is needed or taken),
//!      and its HEC output pointed at the sink. The child gets no `SC4S_*`/`SLUICE_*` variable from
//!      the caller's shell, only those the bench sets, so a run is reproducible from its
//!      command line. Several `--config` files, or `--variant LABEL:KEY=VALUE[,…]` sets, run
//!      the whole rate list once per configuration, each in a fresh daemon;
//!    * **target mode** (`--target HOST:PORT`): a receiver that is already running. The sink
//!      still starts (`--sink-listen ADDR`, `--sink-token`), and its URL and token are
//!      printed so the receiver can be pointed at it. `--metrics URL` reads the receiver's
//!      Prometheus counters (kernel drops, per-socket counts, window); without it, kernel
//!      drops come from `/proc/net/udp` when the receiver is on this machine. `--pid PID`
//!      measures its CPU and memory. With `--no-sink` (the receiver delivers elsewhere), the
//!      delivered count is the receiver's `sluice_delivered_total` delta when `--metrics`
//!      is given, and unknown otherwise: only sent counts and kernel drops are measured.
//! 3. For each offered load of `--rates`, drives a load generator for `--duration` seconds:
//!    this crate's [`crate::loggen`] (`--sender sluice`, exact rates) or syslog-ng's
//!    `loggen` (`--sender loggen`, the tool SC4S's docs use; it sends an initial burst and
//!    its own run id). A rate is the total events/s spread evenly over `--connections`;
//!    `max` is as fast as the sender can; `CxR` is C connections at R each (`4x40000`).
//!    Every step has its own run id (`--sender sluice`: a fresh one per step; syslog-ng's
//!    loggen: the run ids that first appeared during the step), so counts never mix.
//! 4. Waits for the pipeline to drain: the sink's event count has not changed for `--settle`
//!    seconds and (when metrics are known) `sluice_window_events` is 0, at most
//!    `--drain-timeout` seconds (a timeout is reported on the step, not hidden).
//! 5. Records per step: sent and the send rate; delivered = distinct loggen sequence
//!    numbers of the step's run ids at the sink; loss % = (sent − delivered) / sent;
//!    duplicates; kernel drops (delta of `sluice_kernel_dropped_total`, i.e. SO_RXQ_OVFL,
//!    or of the `/proc/net/udp` drop counters); per-socket received counts; the receiver's
//!    CPU time from the first message until drained (utime + stime of `/proc/PID/stat`) as
//!    % of one core over the active period (first message sent → last event arrived at the
//!    sink; above 100 % the receiver used more than one core), the same CPU time per
//!    delivered event in µs, and the CPU % per thread name;
//!    peak RSS (`VmHWM`, reset at the step's start through `/proc/PID/clear_refs` when
//!    allowed, else the process's lifetime peak).
//!
//! # Output
//!
//! A table per configuration (and per-socket counts with the check that they add up to
//! what the sink accepted and, with kernel drops, to what was sent), and a side-by-side table
//! when there are several configurations. `--json` prints the whole [`BenchReport`] as JSON
//! on stdout (the tables then go to stderr). The chart of loss % against offered events/s,
//! one line per configuration, goes to `--plot FILE.svg` (default `sluice-bench.svg` in the
//! current directory; `--no-plot` skips it). `--merge FILE` (repeated) runs nothing: it reads
//! earlier `--json` outputs and prints, plots or re-emits them together, which is how two
//! different receivers end up side by side. `--max-loss PCT` makes the exit status 1 when a
//! step lost more.
//!
//! # Errors
//!
//! Checked before anything starts: an empty rate list, a rate of 0, a malformed rate,
//! `--env` without `=` or setting what the tool owns (ports, HEC URL), flags that do not
//! belong to the mode (`--config` with `--target`, …), a `--port` in use, an unreachable
//! target (TCP refused; UDP with no local socket on the port), a `--metrics` URL that does
//! not answer. A daemon that exits or never serves `/metrics` is an error that quotes its
//! log.
//!
//! # Modules, in the order of a run
//!
//! [`args`] (the flags) → [`plan`] (step 0: every flag checked, nothing started) → the sink
//! ([`crate::sink`]) and [`receiver`] (steps 1–2) → per offered load, [`measure`] with
//! [`sender`] (step 3), [`drain`] (step 4) and the record (step 5) → [`report`] (tables),
//! [`plot`] and [`output`] (`--merge`, `--plot`).

mod args;
mod drain;
mod measure;
mod output;
mod plan;
mod plot;
pub mod probe;
mod receiver;
pub mod report;
pub mod sender;
pub mod steps;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use args::{BenchArgs, BenchTransport, DEFAULT_PLOT, DEFAULT_RATES, DEFAULT_TOKEN};
pub use output::{merge, write_plot};
pub use report::{BenchReport, ConfigResult, Machine, Settings, StepResult};
pub use sender::Sender;
pub use steps::Step;

use crate::loggen::LoggenError;
use crate::sink::{SinkConfig, SinkError, SinkHandle};
use measure::{Ctx, Receiver, describe_daemon, run_step};
use plan::{check_reachable, validate};
use receiver::{Daemon, DaemonSpec};

/// Why a bench could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A flag's value is wrong or conflicts with another flag.
    #[error("{flag}: {reason}")]
    Setting { flag: &'static str, reason: String },
    /// The listen port asked for is taken.
    #[error(
        "port {addr} is in use ({reason}); pick another --port or leave it out to use a free one"
    )]
    PortInUse { addr: SocketAddr, reason: String },
    /// The `--target` cannot be reached.
    #[error("--target {target}: {reason}")]
    Unreachable { target: String, reason: String },
    /// The `--metrics` URL does not answer.
    #[error("--metrics {url}: {reason}")]
    Metrics { url: String, reason: String },
    /// Starting or watching the daemon failed.
    #[error("cannot {what}: {reason}{}", if log.is_empty() { String::new() } else { format!("\n--- last lines of its log ---\n{log}") })]
    Daemon {
        what: String,
        reason: String,
        log: String,
    },
    /// The sink could not start.
    #[error("HEC sink: {0}")]
    Sink(#[from] SinkError),
    /// Our load generator refused its settings.
    #[error("load generator: {0}")]
    Loggen(LoggenError),
    /// syslog-ng's loggen failed.
    #[error("cannot run `{command}`: {reason}")]
    Sender { command: String, reason: String },
    /// A file could not be read or written.
    #[error("{what} {path}: {reason}", path = path.display())]
    File {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
}

fn setting(flag: &'static str, reason: impl Into<String>) -> BenchError {
    BenchError::Setting {
        flag,
        reason: reason.into(),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Runs the whole bench. `daemon_exe` is the `sluice` binary started in daemon mode.
pub fn run(args: &BenchArgs, daemon_exe: &Path) -> Result<BenchReport, BenchError> {
    let plan = validate(args)?;
    let mut machine = Machine::probe();
    let ticks = probe::clock_ticks();

    // In daemon mode, check a fixed port before anything starts.
    let listen_ip = plan
        .configs
        .first()
        .and_then(|c| {
            c.env
                .iter()
                .rev()
                .find(|(k, _)| k == "SLUICE_LISTEN_ADDRESS")
                .and_then(|(_, v)| v.parse::<IpAddr>().ok())
        })
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if plan.target.is_none()
        && let Some(p) = args.port
    {
        receiver::check_port_free(listen_ip, p)?;
    }
    if let Some((target, addr)) = &plan.target {
        check_reachable(target, *addr, args.transport.loggen())?;
    }

    let sink = if args.no_sink {
        None
    } else {
        Some(SinkHandle::spawn_thread(SinkConfig {
            addr: args.sink_listen,
            token: args.sink_token.clone(),
            record: false,
            track_seq: true,
            ..SinkConfig::default()
        })?)
    };
    if let (Some(s), Some(_)) = (&sink, &plan.target) {
        eprintln!(
            "HEC sink listening: URL {} token {} (point the receiver's HEC output here)",
            s.event_url(),
            s.token()
        );
    }
    let ctx = Ctx {
        args,
        plan: &plan,
        sink: sink.as_ref(),
        ticks,
    };
    let run_base = unix_now();
    let mut step_no = 0u64;
    let mut configs = Vec::new();
    for cp in &plan.configs {
        let mut result = ConfigResult {
            label: cp.label.clone(),
            receiver: String::new(),
            config_file: cp.config.as_ref().map(|p| p.display().to_string()),
            env: cp.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            balance: None,
            balance_fallback: None,
            udp_sockets: None,
            rcvbuf_bytes: None,
            steps: Vec::new(),
        };
        let mut daemon = None;
        let (target, port, pid) = match &plan.target {
            Some((t, addr)) => {
                result.receiver = format!("target {t}");
                (*addr, addr.port(), args.pid)
            }
            None => {
                let port = match args.port {
                    Some(p) => p,
                    None => receiver::free_port(listen_ip)?,
                };
                let d = Daemon::start(&DaemonSpec {
                    exe: daemon_exe.to_path_buf(),
                    config: cp.config.clone(),
                    env: cp.env.clone(),
                    listen_ip,
                    port,
                    hec: sink.as_ref().map(|s| (s.base_url(), s.token().to_string())),
                    log_file: args
                        .daemon_log
                        .as_ref()
                        .map(|d| d.join(format!("{}.log", sanitize(&cp.label)))),
                })?;
                result.receiver = format!("sluice daemon, pid {}", d.pid);
                let pid = d.pid;
                daemon = Some(d);
                let ip = if listen_ip.is_unspecified() {
                    IpAddr::V4(Ipv4Addr::LOCALHOST)
                } else {
                    listen_ip
                };
                (SocketAddr::new(ip, port), port, Some(pid))
            }
        };
        let mut rx = Receiver {
            target,
            port,
            metrics: plan.metrics.as_ref(),
            pid,
            daemon: daemon.as_mut(),
        };
        if let Some(m) = rx.metrics()? {
            describe_daemon(&mut result, &m, port);
        }
        eprintln!("== {}", result.describe());
        for (i, step) in plan.steps.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_secs_f64(args.pause));
            }
            let s = run_step(&ctx, &mut rx, *step, run_base + step_no, &cp.label)?;
            step_no += 1;
            result.steps.push(s);
        }
        if let Some(mut d) = daemon {
            d.stop();
        }
        configs.push(result);
    }
    machine.load_end = probe::load_average();
    Ok(BenchReport {
        tool: format!("sluice bench {}", env!("CARGO_PKG_VERSION")),
        machine,
        settings: Settings {
            sender: args.sender,
            transport: args.transport.loggen().label().to_lowercase(),
            size: plan.replay_size.unwrap_or(args.size),
            replay: args.replay.as_ref().map(|p| p.display().to_string()),
            duration_secs: args.duration,
            sources: args.sources,
            command: std::env::args().collect::<Vec<_>>().join(" "),
        },
        configs,
    })
}

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `sluice bench`: runs (or merges), prints, plots. Exit status 1 when `--max-loss` was
/// exceeded.
pub fn main(args: &BenchArgs, daemon_exe: &Path) -> Result<ExitCode, BenchError> {
    // A chart that cannot be written should fail now, not after a long run.
    if !args.no_plot {
        let dir = match args.plot.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Err(BenchError::File {
                what: "--plot",
                path: args.plot.clone(),
                reason: format!("{} is not a directory", dir.display()),
            });
        }
    }
    let report = if args.merge.is_empty() {
        run(args, daemon_exe)?
    } else {
        for (given, flag) in [
            (args.target.is_some(), "--target"),
            (!args.config.is_empty(), "--config"),
            (!args.variant.is_empty(), "--variant"),
            (!args.env.is_empty(), "--env"),
        ] {
            if given {
                return Err(setting(
                    flag,
                    "--merge runs nothing; it only combines earlier results",
                ));
            }
        }
        merge(&args.merge)?
    };
    let text = report.text();
    if args.json {
        eprint!("{text}");
        let json = serde_json::to_string_pretty(&report).map_err(|e| BenchError::File {
            what: "--json",
            path: PathBuf::from("<stdout>"),
            reason: e.to_string(),
        })?;
        println!("{json}");
    } else {
        print!("{text}");
    }
    if !args.no_plot {
        write_plot(&report, args.title.as_deref(), &args.plot)?;
        eprintln!("plot written to {}", args.plot.display());
    }
    if let Some(max) = args.max_loss {
        let over: Vec<String> = report
            .configs
            .iter()
            .flat_map(|c| {
                c.steps
                    .iter()
                    .filter(|s| s.loss_pct.is_some_and(|l| l > max))
                    .map(move |s| {
                        format!(
                            "{} {} lost {:.3}%",
                            c.label,
                            s.label,
                            s.loss_pct.unwrap_or(0.0)
                        )
                    })
            })
            .collect();
        if !over.is_empty() {
            eprintln!("loss above --max-loss {max}%: {}", over.join("; "));
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> BenchArgs {
        BenchArgs::new()
    }

    #[test]
    fn a_taken_port_and_a_dead_target_fail_before_anything_starts() {
        let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let mut a = args();
        a.port = Some(port);
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("port 127.0.0.1:{port} is in use")),
            "{e}"
        );
        drop(taken);

        // Nothing bound to a fresh port: UDP target mode refuses to send into the void.
        let free = receiver::free_port(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
        let mut a = args();
        a.target = Some(format!("127.0.0.1:{free}"));
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no UDP socket is bound"), "{e}");
        a.transport = BenchTransport::Tcp;
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("TCP connection failed"), "{e}");
    }

    /// A stand-in receiver: forwards every UDP datagram to the sink as a HEC event, except
    /// that it loses every 10th and sends the first one twice.
    fn lossy_relay(
        sock: std::net::UdpSocket,
        sink: SocketAddr,
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) {
        use std::sync::atomic::Ordering;
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut client = None;
        let mut n = 0u64;
        let mut body = Vec::new();
        let mut buf = vec![0u8; 2048];
        let flush = |client: &mut Option<crate::sink::client::RawClient>, body: &mut Vec<u8>| {
            if body.is_empty() {
                return;
            }
            loop {
                if client.is_none() {
                    *client = crate::sink::client::RawClient::connect(sink).ok();
                }
                if let Some(c) = client.as_mut() {
                    let auth = format!("Splunk {DEFAULT_TOKEN}");
                    match c.request(
                        "POST",
                        "/services/collector/event",
                        &[("Authorization", &auth)],
                        body,
                    ) {
                        Ok(r) if r.status == 200 => break,
                        _ => *client = None,
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            body.clear();
        };
        while !stop.load(Ordering::Relaxed) {
            match sock.recv(&mut buf) {
                Ok(len) => {
                    n += 1;
                    if n.is_multiple_of(10) {
                        continue;
                    }
                    let text = String::from_utf8_lossy(&buf[..len]).trim_end().to_string();
                    let event = serde_json::json!({ "event": text }).to_string();
                    let copies = if n == 1 { 2 } else { 1 };
                    for _ in 0..copies {
                        body.extend_from_slice(event.as_bytes());
                        body.push(b'\n');
                    }
                    if body.len() > 256 * 1024 {
                        flush(&mut client, &mut body);
                    }
                }
                Err(_) => flush(&mut client, &mut body),
            }
        }
    }

    #[test]
    fn target_mode_counts_loss_and_duplicates_at_the_sink() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let target = sock.local_addr().unwrap();
        let sink_port = receiver::free_port(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
        let sink_addr = SocketAddr::from(([127, 0, 0, 1], sink_port));
        let stop = Arc::new(AtomicBool::new(false));
        let relay = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || lossy_relay(sock, sink_addr, stop))
        };
        let mut a = args();
        a.target = Some(target.to_string());
        a.sink_listen = sink_addr;
        a.rates = vec!["2000".into(), "2x1000".into()];
        a.duration = 1.0;
        a.settle = 0.5;
        a.pause = 0.0;
        a.pid = Some(std::process::id());
        let report = run(&a, Path::new("/unused")).unwrap();
        stop.store(true, Ordering::Relaxed);
        relay.join().unwrap();

        let c = &report.configs[0];
        assert_eq!(c.receiver, format!("target {target}"));
        let s = &c.steps[0];
        assert_eq!(s.sent, 2000);
        assert_eq!(s.delivered, Some(1800), "{s:?}");
        assert_eq!(s.duplicates, Some(1));
        assert_eq!(s.sink_accepted, Some(1801));
        assert!((s.loss_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(s.kernel_drops, Some(0));
        assert_eq!(s.kernel_drops_source.as_deref(), Some("proc"));
        assert!(s.drained);
        assert!(s.cpu_pct.is_some() && s.peak_rss_kib.is_some());
        // The second step has its own run id: the relay's count continues, so the 10th-message
        // loss lands on other sequence numbers, but the totals are the step's own.
        let s2 = &c.steps[1];
        assert_eq!(s2.label, "2x1000/s");
        assert_eq!(s2.sent, 2000);
        assert_eq!(s2.delivered, Some(1800));
        assert_eq!(s2.duplicates, Some(0));
        assert_ne!(s.run_ids, s2.run_ids);
        let text = report.text();
        assert!(text.contains("10.000"), "{text}");

        // The JSON round-trips through --merge.
        let dir = std::env::temp_dir().join(format!("bench-merge-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("a.json");
        std::fs::write(&f, serde_json::to_string(&report).unwrap()).unwrap();
        let m = merge(&[f.clone(), f]).unwrap();
        assert_eq!(m.configs.len(), 2);
        assert_eq!(m.configs[1].steps[0].delivered, Some(1800));
        let svg = dir.join("p.svg");
        write_plot(&m, None, &svg).unwrap();
        assert!(
            std::fs::read_to_string(&svg)
                .unwrap()
                .contains("UDP loss vs offered load")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_daemon_that_cannot_start_is_reported() {
        let mut a = args();
        a.rates = vec!["1000".into()];
        let e = run(&a, Path::new("/nonexistent/sluice"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot start /nonexistent/sluice run"), "{e}");
    }
}
