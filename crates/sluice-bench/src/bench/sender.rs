//! The two load generators a step can use: this crate's [`crate::loggen`] (in process, exact
//! rates) or syslog-ng's `loggen` binary (the tool SC4S's performance docs use).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::BenchError;
use super::steps::Step;
use crate::loggen::{self, LoggenConfig, Transport};

/// Which load generator sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sender {
    /// `sluice_bench::loggen`, in this process: exact rates, `sendmmsg`.
    Sluice,
    /// syslog-ng's `loggen` (`-i -D|-S`), as a child process.
    Loggen,
}

/// syslog-ng's loggen takes a rate per connection; this stands for "unlimited" (a single
/// sender tops out far below it).
pub const LOGGEN_MAX_RATE: u64 = 10_000_000;

impl Sender {
    /// How reports name it.
    pub fn describe(self) -> &'static str {
        match self {
            Sender::Sluice => "sluice loggen",
            Sender::Loggen => "syslog-ng loggen",
        }
    }
}

/// What was sent in one step.
#[derive(Debug, Clone)]
pub struct Sent {
    pub sent: u64,
    pub elapsed: Duration,
    /// Messages our loggen forfeited because it fell behind the rate.
    pub lagged: u64,
    pub errors: u64,
    /// The run id in the messages when the sender tells it.
    pub run_id: Option<u64>,
}

/// Everything a step's sender needs.
#[derive(Debug, Clone)]
pub struct SendPlan<'a> {
    pub sender: Sender,
    pub loggen_path: &'a Path,
    pub target: SocketAddr,
    pub transport: Transport,
    pub step: Step,
    pub sources: usize,
    pub size: usize,
    /// `--replay`: lines to send instead of generated messages of `size` bytes.
    pub replay: Option<&'a Path>,
    pub duration: f64,
    pub run_id: u64,
}

/// Finds syslog-ng's loggen: `--loggen-path`, else on `PATH`, else where Debian puts it.
pub fn find_loggen(given: Option<&Path>) -> Result<PathBuf, BenchError> {
    if let Some(p) = given {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        return Err(BenchError::Setting {
            flag: "--loggen-path",
            reason: format!("{} is not a file", p.display()),
        });
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in
        std::env::split_paths(&path).chain(["/usr/bin".into(), "/usr/lib/syslog-ng/3.38".into()])
    {
        let p = dir.join("loggen");
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(BenchError::Setting {
        flag: "--sender loggen",
        reason: "syslog-ng's loggen was not found on PATH; install it \
                 (apt-get install syslog-ng-core) or give --loggen-path"
            .into(),
    })
}

/// Sends one step and returns what was sent. Blocks for the step's duration.
pub fn send(plan: &SendPlan<'_>) -> Result<Sent, BenchError> {
    match plan.sender {
        Sender::Sluice => send_sluice(plan),
        Sender::Loggen => send_loggen(plan),
    }
}

fn send_sluice(plan: &SendPlan<'_>) -> Result<Sent, BenchError> {
    let mut cfg = LoggenConfig::new(plan.target.to_string());
    cfg.transport = plan.transport;
    cfg.rate = plan.step.per_connection.unwrap_or(0);
    cfg.duration = Some(plan.duration);
    match plan.replay {
        Some(file) => {
            cfg.format = loggen::Format::Replay;
            cfg.file = Some(file.to_path_buf());
        }
        None => cfg.size = Some(plan.size),
    }
    cfg.connections = plan.step.connections;
    cfg.sources = plan.sources;
    cfg.run_id = Some(plan.run_id);
    cfg.quiet = true;
    // A benchmark receiver's certificate is usually self-signed; the handshake and the
    // encryption cost the same either way.
    cfg.tls_insecure = plan.transport == Transport::Tls;
    let r = loggen::run(&cfg).map_err(BenchError::Loggen)?;
    Ok(Sent {
        sent: r.sent,
        elapsed: r.elapsed,
        lagged: r.lagged,
        errors: r.errors,
        run_id: Some(r.run_id),
    })
}

/// The arguments of syslog-ng's loggen for a step.
pub fn loggen_args(plan: &SendPlan<'_>) -> Result<Vec<String>, BenchError> {
    if plan.sources > 1 {
        return Err(BenchError::Setting {
            flag: "--sources",
            reason: "syslog-ng's loggen sends from one address; use --sender sluice".into(),
        });
    }
    // loggen's TLS plugin (`-U`) is a transport of its own: with `-i` it would be two.
    let transport = match plan.transport {
        Transport::Udp => "-D",
        Transport::Tcp => "-S",
        Transport::Tls => "-U",
        other => {
            return Err(BenchError::Setting {
                flag: "--transport",
                reason: format!(
                    "{} is not supported with --sender loggen (udp, tcp or tls)",
                    other.label()
                ),
            });
        }
    };
    let ip = plan.target.ip();
    let mut args = Vec::new();
    if plan.transport != Transport::Tls {
        args.push(if ip.is_ipv6() { "-6" } else { "-i" }.to_string());
    }
    args.push(transport.into());
    args.push("-Q".into());
    match plan.replay {
        // `-d`: the lines are sent as they are, not parsed and re-stamped.
        Some(file) => args.extend([
            "-R".into(),
            file.display().to_string(),
            "--loop-reading".into(),
            "-d".into(),
        ]),
        None => args.extend(["-s".into(), plan.size.to_string()]),
    }
    args.extend([
        "-r".into(),
        plan.step
            .per_connection
            .unwrap_or(LOGGEN_MAX_RATE)
            .to_string(),
        "-I".into(),
        format!("{}", plan.duration.ceil().max(1.0) as u64),
        format!("--active-connections={}", plan.step.connections),
        ip.to_string(),
        plan.target.port().to_string(),
    ]);
    Ok(args)
}

fn send_loggen(plan: &SendPlan<'_>) -> Result<Sent, BenchError> {
    let args = loggen_args(plan)?;
    let start = Instant::now();
    let out = Command::new(plan.loggen_path)
        .args(&args)
        .output()
        .map_err(|e| BenchError::Sender {
            command: format!("{} {}", plan.loggen_path.display(), args.join(" ")),
            reason: e.to_string(),
        })?;
    let elapsed = start.elapsed();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let sent = parse_loggen_summary(&text);
    match (out.status.success(), sent) {
        (true, Some((sent, secs))) => Ok(Sent {
            sent,
            elapsed: secs.map_or(elapsed, Duration::from_secs_f64),
            lagged: 0,
            errors: 0,
            run_id: None,
        }),
        _ => Err(BenchError::Sender {
            command: format!("{} {}", plan.loggen_path.display(), args.join(" ")),
            reason: format!(
                "{}; output: {}",
                out.status,
                text.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
            ),
        }),
    }
}

/// `count` and `time` of loggen's last line:
/// `average rate = 19999.98 msg/sec, count=100000, time=5.0001, (average) msg size=800, …`.
pub fn parse_loggen_summary(text: &str) -> Option<(u64, Option<f64>)> {
    let line = text.lines().rev().find(|l| l.contains("average rate"))?;
    let field = |key: &str| {
        line.split(key)
            .nth(1)
            .and_then(|s| s.split(',').next())
            .map(str::trim)
    };
    let count = field("count=")?.parse().ok()?;
    let time = field("time=").and_then(|t| t.parse().ok());
    Some((count, time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loggen_summary_line() {
        let out = "count=3673, rate = 1871.63 msg/sec\naverage rate = 2447.96 msg/sec, count=3673, time=1.50043, (average) msg size=800, bandwidth=1912.47 kB/sec\n";
        assert_eq!(parse_loggen_summary(out), Some((3673, Some(1.50043))));
        assert_eq!(parse_loggen_summary("nothing"), None);
    }

    #[test]
    fn loggen_command_line() {
        let plan = SendPlan {
            sender: Sender::Loggen,
            loggen_path: Path::new("/usr/bin/loggen"),
            target: "127.0.0.1:5514".parse().unwrap(),
            transport: Transport::Udp,
            step: Step {
                connections: 4,
                per_connection: Some(40_000),
            },
            sources: 1,
            size: 800,
            replay: None,
            duration: 20.0,
            run_id: 1,
        };
        assert_eq!(
            loggen_args(&plan).unwrap().join(" "),
            "-i -D -Q -s 800 -r 40000 -I 20 --active-connections=4 127.0.0.1 5514"
        );
        let max = SendPlan {
            step: Step {
                connections: 1,
                per_connection: None,
            },
            ..plan.clone()
        };
        assert!(loggen_args(&max).unwrap().contains(&"10000000".to_string()));
        let replay = SendPlan {
            replay: Some(Path::new("/tmp/mix.txt")),
            ..plan.clone()
        };
        assert_eq!(
            loggen_args(&replay).unwrap().join(" "),
            "-i -D -Q -R /tmp/mix.txt --loop-reading -d -r 40000 -I 20 --active-connections=4 127.0.0.1 5514"
        );
        let tls = SendPlan {
            transport: Transport::Tls,
            ..plan.clone()
        };
        assert!(loggen_args(&tls).unwrap().join(" ").starts_with("-U -Q "));
    }
}
