//! The tool subcommands of the `sluice` binary: `loggen`, `sink` and `bench`.
//!
//! They live here, not in the daemon crate, so that the daemon library never links the load
//! generator or the test sink: the binary's `main` flattens [`Tool`] into its own subcommands
//! (behind the `sluice` crate's default `tools` feature) and hands it to [`run`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::bench::{BenchArgs, BenchError};
use crate::loggen::{LoggenConfig, LoggenError};
use crate::sink::{SinkConfig, SinkError, SinkHandle};

/// Test and measurement tools.
#[derive(Debug, clap::Subcommand)]
pub enum Tool {
    /// Generate syslog load (syslog-ng loggen's message shapes) over UDP, TCP or TLS.
    Loggen(LoggenConfig),
    /// Run a Splunk HEC test sink that counts events and finds gaps and duplicates.
    Sink(SinkArgs),
    /// Measure loss, CPU and memory per offered rate: HEC sink + sluice daemon (or --target)
    /// + load generator; prints a table, optionally JSON and an SVG plot.
    Bench(Box<BenchArgs>),
}

/// Why a tool failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(transparent)]
    Loggen(#[from] LoggenError),
    #[error("cannot start the HEC sink on {addr}: {source}")]
    Sink { addr: SocketAddr, source: SinkError },
    #[error(transparent)]
    Bench(#[from] BenchError),
    #[error("{flag}: {reason}")]
    Invalid { flag: &'static str, reason: String },
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
}

/// Runs `tool`. `daemon_exe` is the `sluice` binary that `bench` starts in daemon mode (the
/// caller passes its own executable).
pub fn run(tool: Tool, daemon_exe: &Path) -> Result<ExitCode, ToolError> {
    match tool {
        Tool::Loggen(cfg) => loggen(&cfg),
        Tool::Sink(args) => sink(&args),
        Tool::Bench(args) => Ok(crate::bench::main(&args, daemon_exe)?),
    }
}

/// `loggen`: exit 0 when every connection sent without error.
fn loggen(cfg: &LoggenConfig) -> Result<ExitCode, ToolError> {
    let report = crate::loggen::run_and_print(cfg)?;
    Ok(if report.errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The flags of `sink`.
#[derive(clap::Args, Debug, Clone)]
pub struct SinkArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8088")]
    pub listen: SocketAddr,
    /// HEC token the sink accepts.
    #[arg(long, default_value = crate::bench::DEFAULT_TOKEN)]
    pub token: String,
    /// Stop after this many seconds (default: until SIGINT/SIGTERM).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Print the final report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Start answering 503 "Server is busy" (a HEC outage) this many seconds after the first
    /// event the sink accepts; the sender's start, give or take the receiver's batch timeout.
    #[arg(long, requires = "refuse_until")]
    pub refuse_from: Option<f64>,
    /// End the outage this many seconds after the first accepted event.
    #[arg(long, requires = "refuse_from")]
    pub refuse_until: Option<f64>,
    /// Stop once no event has been accepted for this many seconds (counted after the outage,
    /// if any, and the first event): the receiver has delivered all it is going to.
    #[arg(long)]
    pub idle_exit: Option<f64>,
}

/// The outage window of `sink`, relative to the first accepted event.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Outage {
    from: Duration,
    until: Duration,
}

impl SinkArgs {
    fn outage(&self) -> Result<Option<Outage>, ToolError> {
        let (Some(from), Some(until)) = (self.refuse_from, self.refuse_until) else {
            return Ok(None);
        };
        let secs = |v: f64, flag: &'static str| {
            Duration::try_from_secs_f64(v).map_err(|_| ToolError::Invalid {
                flag,
                reason: format!("{v} is not a number of seconds"),
            })
        };
        let o = Outage {
            from: secs(from, "--refuse-from")?,
            until: secs(until, "--refuse-until")?,
        };
        if o.until <= o.from {
            return Err(ToolError::Invalid {
                flag: "--refuse-until",
                reason: format!("{until} must be after --refuse-from {from}"),
            });
        }
        Ok(Some(o))
    }
}

/// `sink`: a HEC endpoint for measurements. Prints a line per second and, at the end, the
/// event count and the gap/duplicate report of loggen sequence numbers.
fn sink(args: &SinkArgs) -> Result<ExitCode, ToolError> {
    let outage = args.outage()?;
    let idle_exit = args
        .idle_exit
        .map(|v| {
            Duration::try_from_secs_f64(v).map_err(|_| ToolError::Invalid {
                flag: "--idle-exit",
                reason: format!("{v} is not a number of seconds"),
            })
        })
        .transpose()?;
    let handle = SinkHandle::spawn_thread(SinkConfig {
        addr: args.listen,
        token: args.token.clone(),
        record: false,
        track_seq: true,
        ..Default::default()
    })
    .map_err(|source| ToolError::Sink {
        addr: args.listen,
        source,
    })?;
    eprintln!(
        "HEC sink on {} (token {}); stop with Ctrl-C",
        handle.event_url(),
        args.token
    );
    let stop = Arc::new(AtomicBool::new(false));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| ToolError::Io {
            what: "cannot start the signal-handling runtime",
            source,
        })?;
    let stop2 = stop.clone();
    std::thread::spawn(move || {
        rt.block_on(stop_signal());
        stop2.store(true, Ordering::Relaxed);
    });
    let start = Instant::now();
    let (mut last_n, mut last_t) = (0, Instant::now());
    let mut first_event: Option<Instant> = None;
    let mut outage_state = OutageState::Before;
    let mut last_change = (0u64, Instant::now());
    let mut last_event: Option<Instant> = None;
    while !stop.load(Ordering::Relaxed)
        && args
            .duration
            .is_none_or(|d| start.elapsed().as_secs_f64() < d)
    {
        std::thread::sleep(Duration::from_millis(100));
        let n = handle.accepted_events();
        if n != last_change.0 {
            last_change = (n, Instant::now());
            last_event = Some(last_change.1);
        }
        if first_event.is_none() && n > 0 {
            first_event = Some(Instant::now());
        }
        if let (Some(o), Some(t0)) = (outage, first_event) {
            let next = outage_state.step(&handle, o, t0);
            if next == OutageState::After && outage_state != next {
                // Idle time counts from the end of the outage, not from its silence.
                last_change.1 = Instant::now();
            }
            outage_state = next;
        }
        if let Some(idle) = idle_exit
            && first_event.is_some()
            && (outage.is_none() || outage_state == OutageState::After)
            && last_change.1.elapsed() >= idle
        {
            eprintln!("no event for {idle:?}: stopping");
            break;
        }
        if last_t.elapsed() >= Duration::from_secs(1) {
            let n = handle.accepted_events();
            if n != last_n {
                let rate = (n - last_n) as f64 / last_t.elapsed().as_secs_f64();
                eprintln!("events={n} rate={rate:.0}/s");
            }
            (last_n, last_t) = (n, Instant::now());
        }
    }
    let stats = handle.stats();
    let report = handle.seq_report(None);
    eprintln!(
        "accepted {} events in {} requests; loggen sequence numbers: {} distinct, {} duplicates, {} missing",
        stats.accepted_events,
        stats.accepted_requests,
        report.distinct,
        report.duplicates,
        report.missing
    );
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "accepted_events": stats.accepted_events,
                "accepted_requests": stats.accepted_requests,
                "rejected": stats.rejected.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
                "distinct": report.distinct,
                "duplicates": report.duplicates,
                "missing": report.missing,
                "threads": report.per_thread.len(),
                "first_event_after_start_s": first_event.map(|t| (t - start).as_secs_f64()),
                "last_event_after_first_s": first_event
                    .zip(last_event)
                    .map(|(a, b)| (b - a).as_secs_f64()),
                "outage": outage.map(|o| [o.from.as_secs_f64(), o.until.as_secs_f64()]),
            })
        );
    }
    handle.shutdown();
    Ok(ExitCode::SUCCESS)
}

/// Where `sink` is in its outage window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutageState {
    Before,
    During,
    After,
}

impl OutageState {
    /// Moves on at the window's edges (`t0` is the first accepted event): at its start the
    /// sink answers 503 until its end; the sink's own `busy_until` ends it to the instant.
    fn step(self, handle: &SinkHandle, o: Outage, t0: Instant) -> OutageState {
        let t = t0.elapsed();
        match self {
            OutageState::Before if t >= o.from => {
                let until = t0 + o.until;
                handle.update_faults(|f| f.busy_until = Some(until));
                eprintln!(
                    "outage: answering 503 for {:.1} s",
                    (o.until - t).as_secs_f64()
                );
                OutageState::During
            }
            OutageState::During if t >= o.until => {
                eprintln!("outage over");
                OutageState::After
            }
            s => s,
        }
    }
}

/// Returns on SIGTERM or SIGINT. SIGHUP is caught and ignored: its default action would end
/// the sink without its report.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        eprintln!("cannot install signal handlers; the sink stops only at --duration");
        return std::future::pending().await;
    };
    loop {
        tokio::select! {
            _ = term.recv() => return,
            _ = int.recv() => return,
            _ = hup.recv() => eprintln!("SIGHUP ignored"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        sink: SinkArgs,
    }

    fn args(a: &[&str]) -> Result<SinkArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("sink").chain(a.iter().copied())).map(|c| c.sink)
    }

    #[test]
    fn the_outage_window_needs_both_ends_in_order() {
        let a = args(&["--refuse-from", "10", "--refuse-until", "70"]).unwrap();
        assert_eq!(
            a.outage().unwrap(),
            Some(Outage {
                from: Duration::from_secs(10),
                until: Duration::from_secs(70)
            })
        );
        assert_eq!(args(&[]).unwrap().outage().unwrap(), None);
        assert!(args(&["--refuse-from", "10"]).is_err(), "one end alone");
        let e = args(&["--refuse-from", "10", "--refuse-until", "5"])
            .unwrap()
            .outage()
            .unwrap_err()
            .to_string();
        assert!(e.contains("--refuse-until"), "{e}");
        let e = args(&["--refuse-from=-1", "--refuse-until", "5"])
            .unwrap()
            .outage()
            .unwrap_err()
            .to_string();
        assert!(e.contains("--refuse-from"), "{e}");
    }

    #[test]
    fn the_sink_refuses_inside_the_window_only() {
        let sink = SinkHandle::spawn_thread(SinkConfig::default()).unwrap();
        let o = Outage {
            from: Duration::from_secs(10),
            until: Duration::from_secs(70),
        };
        let now = Instant::now();
        // 5 s after the first event: not yet.
        let s = OutageState::Before.step(&sink, o, now - Duration::from_secs(5));
        assert_eq!(s, OutageState::Before);
        assert_eq!(sink.faults().busy_until, None);
        // 20 s after: busy until 70 s after the first event.
        let t0 = now - Duration::from_secs(20);
        let s = s.step(&sink, o, t0);
        assert_eq!(s, OutageState::During);
        assert_eq!(sink.faults().busy_until, Some(t0 + o.until));
        // 80 s after: over.
        let s = s.step(&sink, o, now - Duration::from_secs(80));
        assert_eq!(s, OutageState::After);
        sink.shutdown();
    }
}
