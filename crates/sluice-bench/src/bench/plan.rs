//! Step 0 of a run: check every flag and build the plan (configurations, steps, target)
//! before anything starts, so a mistake costs nothing.

use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use super::args::{BenchArgs, BenchTransport};
use super::probe::{self, HttpUrl};
use super::sender::{self, Sender};
use super::steps::{self, Step};
use super::{BenchError, receiver, setting};
use crate::loggen::Transport;

/// One configuration to run.
#[derive(Debug, Clone)]
pub(super) struct ConfigPlan {
    pub label: String,
    pub config: Option<PathBuf>,
    pub env: Vec<(String, String)>,
}

/// Checked settings of a run.
#[derive(Debug)]
pub(super) struct Plan {
    pub steps: Vec<Step>,
    pub configs: Vec<ConfigPlan>,
    pub target: Option<(String, SocketAddr)>,
    pub metrics: Option<HttpUrl>,
    pub loggen_path: PathBuf,
    /// `--replay`: the average line in bytes, LF included (what the report calls the size).
    pub replay_size: Option<usize>,
}

/// Average bytes per non-empty line (LF included) of a `--replay` file.
fn replay_size(path: &std::path::Path) -> Result<usize, BenchError> {
    let text =
        std::fs::read(path).map_err(|e| setting("--replay", format!("{}: {e}", path.display())))?;
    let lines: Vec<&[u8]> = text
        .split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return Err(setting(
            "--replay",
            format!("{} has no non-empty line to send", path.display()),
        ));
    }
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    Ok(bytes.div_ceil(lines.len()))
}

pub(super) fn validate(args: &BenchArgs) -> Result<Plan, BenchError> {
    let steps = steps::parse_rates(&args.rates, args.connections.max(1))?;
    if args.connections == 0 {
        return Err(setting("--connections", "0 connections send nothing"));
    }
    if !(args.duration.is_finite() && args.duration > 0.0 && args.duration <= 86_400.0) {
        return Err(setting(
            "--duration",
            format!("{} is not a number of seconds in (0, 86400]", args.duration),
        ));
    }
    for (flag, v) in [
        ("--settle", args.settle),
        ("--drain-timeout", args.drain_timeout),
        ("--pause", args.pause),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(setting(flag, format!("{v} is not a number of seconds ≥ 0")));
        }
    }
    if args.size == 0 {
        return Err(setting("--size", "0 bytes"));
    }
    let replay_size = args.replay.as_deref().map(replay_size).transpose()?;
    if let Some(m) = args.max_loss
        && !(m.is_finite() && m >= 0.0)
    {
        return Err(setting("--max-loss", format!("{m} is not a percentage")));
    }
    let loggen_path = match args.sender {
        Sender::Loggen => sender::find_loggen(args.loggen_path.as_deref())?,
        Sender::Sluice => {
            if args.loggen_path.is_some() {
                return Err(setting("--loggen-path", "only applies to --sender loggen"));
            }
            PathBuf::new()
        }
    };
    if args.sender == Sender::Loggen && args.sources > 1 {
        return Err(setting(
            "--sources",
            "syslog-ng's loggen sends from one address; use --sender sluice",
        ));
    }
    let env = args
        .env
        .iter()
        .map(|e| steps::parse_env("--env", e))
        .collect::<Result<Vec<_>, _>>()?;
    steps::check_reserved("--env", &env, args.no_sink)?;
    if args.transport == BenchTransport::Tls && args.target.is_none() {
        return Err(setting(
            "--transport tls",
            "needs --target: start the receiver with its TLS port and certificate first \
             (scripts/tls-table.sh does)",
        ));
    }

    if let Some(target) = &args.target {
        for (given, flag) in [
            (!args.config.is_empty(), "--config"),
            (!args.env.is_empty(), "--env"),
            (!args.variant.is_empty(), "--variant"),
            (args.port.is_some(), "--port"),
            (args.daemon_log.is_some(), "--daemon-log"),
        ] {
            if given {
                return Err(setting(
                    flag,
                    "configures the daemon sluice bench starts; with --target the receiver is already running",
                ));
            }
        }
        if args.label.len() > 1 {
            return Err(setting(
                "--label",
                "--target runs one configuration; give one label",
            ));
        }
        let addr = resolve_target(target)?;
        let metrics = match &args.metrics {
            Some(u) => {
                let url = HttpUrl::parse(u).map_err(|reason| BenchError::Metrics {
                    url: u.clone(),
                    reason,
                })?;
                probe::fetch_metrics(&url).map_err(|reason| BenchError::Metrics {
                    url: u.clone(),
                    reason: format!("does not answer: {reason}"),
                })?;
                Some(url)
            }
            None => None,
        };
        if let Some(pid) = args.pid
            && probe::cpu_seconds(pid, 100.0).is_none()
        {
            return Err(setting(
                "--pid",
                format!("no process {pid} (or /proc/{pid}/stat is unreadable)"),
            ));
        }
        let label = args
            .label
            .first()
            .cloned()
            .unwrap_or_else(|| format!("target {target}"));
        return Ok(Plan {
            steps,
            configs: vec![ConfigPlan {
                label,
                config: None,
                env: Vec::new(),
            }],
            target: Some((target.clone(), addr)),
            metrics,
            loggen_path,
            replay_size,
        });
    }

    for (given, flag) in [
        (args.metrics.is_some(), "--metrics"),
        (args.pid.is_some(), "--pid"),
    ] {
        if given {
            return Err(setting(
                flag,
                "only applies with --target (the daemon sluice bench starts is measured anyway)",
            ));
        }
    }
    let mut configs = Vec::new();
    if args.label.len() > args.config.len().max(1) {
        return Err(setting(
            "--label",
            format!(
                "{} labels for {} --config files",
                args.label.len(),
                args.config.len()
            ),
        ));
    }
    for (i, path) in args.config.iter().enumerate() {
        let abs = receiver::absolute("--config", path)?;
        let label = args.label.get(i).cloned().unwrap_or_else(|| {
            path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            )
        });
        configs.push(ConfigPlan {
            label,
            config: Some(abs),
            env: env.clone(),
        });
    }
    for v in &args.variant {
        let (label, venv) = steps::parse_variant(v)?;
        steps::check_reserved("--variant", &venv, args.no_sink)?;
        let mut all = env.clone();
        all.extend(venv);
        configs.push(ConfigPlan {
            label,
            config: None,
            env: all,
        });
    }
    if configs.is_empty() {
        configs.push(ConfigPlan {
            label: args
                .label
                .first()
                .cloned()
                .unwrap_or_else(|| "sluice".into()),
            config: None,
            env,
        });
    }
    let mut seen = BTreeSet::new();
    for c in &configs {
        if !seen.insert(c.label.clone()) {
            return Err(setting(
                "--label",
                format!(
                    "two configurations are named {:?}; give each its own --label",
                    c.label
                ),
            ));
        }
    }
    if let Some(dir) = &args.daemon_log {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::File {
            what: "--daemon-log",
            path: dir.clone(),
            reason: e.to_string(),
        })?;
    }
    Ok(Plan {
        steps,
        configs,
        target: None,
        metrics: None,
        loggen_path,
        replay_size,
    })
}

fn resolve_target(target: &str) -> Result<SocketAddr, BenchError> {
    let unreachable = |reason: String| BenchError::Unreachable {
        target: target.to_string(),
        reason,
    };
    target
        .to_socket_addrs()
        .map_err(|e| unreachable(format!("cannot resolve it ({e}); expected HOST:PORT")))?
        .next()
        .ok_or_else(|| unreachable("no address found".into()))
}

/// Fails when nothing can receive at `addr`: a refused TCP connection, or for UDP on this
/// machine no socket bound to the port. A remote UDP receiver cannot be checked without
/// sending it data; the first step's delivered count tells.
pub(super) fn check_reachable(
    target: &str,
    addr: SocketAddr,
    transport: Transport,
) -> Result<(), BenchError> {
    let unreachable = |reason: String| BenchError::Unreachable {
        target: target.to_string(),
        reason,
    };
    match transport {
        Transport::Udp => {
            let local = addr.ip().is_loopback() || addr.ip().is_unspecified();
            if local && probe::udp_socket_drops(addr.port()).is_empty() {
                return Err(unreachable(format!(
                    "no UDP socket is bound to port {} on this machine",
                    addr.port()
                )));
            }
            Ok(())
        }
        _ => TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map(drop)
            .map_err(|e| unreachable(format!("TCP connection failed: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> BenchArgs {
        BenchArgs::new()
    }

    fn err(a: &BenchArgs) -> String {
        validate(a).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_the_sc4s_rates_in_one_daemon() {
        let p = validate(&args()).unwrap();
        assert_eq!(p.steps.len(), 6);
        assert_eq!(p.steps[5].total_rate(), Some(350_000));
        assert_eq!(p.configs.len(), 1);
        assert_eq!(p.configs[0].label, "sluice");
        assert!(p.target.is_none());
    }

    #[test]
    fn bad_settings_are_named() {
        type Edit = Box<dyn Fn(&mut BenchArgs)>;
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|a| a.rates = vec![]), "--rates: the list is empty"),
            (Box::new(|a| a.rates = vec!["0".into()]), "a rate of 0"),
            (Box::new(|a| a.duration = 0.0), "--duration"),
            (Box::new(|a| a.duration = f64::NAN), "--duration"),
            (Box::new(|a| a.connections = 0), "--connections"),
            (
                Box::new(|a| a.env = vec!["X".into()]),
                "--env: \"X\" is not KEY=VALUE",
            ),
            (
                Box::new(|a| a.env = vec!["SC4S_LISTEN_STATUS_PORT=1".into()]),
                "set by sluice bench itself",
            ),
            (
                Box::new(|a| a.metrics = Some("http://x".into())),
                "--metrics: only applies with --target",
            ),
            (
                Box::new(|a| a.pid = Some(1)),
                "--pid: only applies with --target",
            ),
            (
                Box::new(|a| a.config = vec!["/nonexistent/sluice.toml".into()]),
                "--config: /nonexistent/sluice.toml",
            ),
            (
                Box::new(|a| a.label = vec!["a".into(), "b".into()]),
                "--label: 2 labels",
            ),
            (
                Box::new(|a| a.variant = vec!["a:X=1".into(), "a:Y=2".into()]),
                "two configurations are named \"a\"",
            ),
            (
                Box::new(|a| {
                    a.target = Some("127.0.0.1:9".into());
                    a.config = vec!["x.toml".into()];
                }),
                "--config: configures the daemon",
            ),
            (
                Box::new(|a| a.target = Some("no-such-host.invalid:514".into())),
                "--target no-such-host.invalid:514: cannot resolve",
            ),
            (
                Box::new(|a| a.target = Some("127.0.0.1".into())),
                "expected HOST:PORT",
            ),
            (
                Box::new(|a| {
                    a.target = Some("127.0.0.1:9".into());
                    a.metrics = Some("ftp://x".into());
                }),
                "--metrics ftp://x: only http://",
            ),
            (
                Box::new(|a| a.loggen_path = Some("/x".into())),
                "--loggen-path: only applies",
            ),
            (Box::new(|a| a.max_loss = Some(-1.0)), "--max-loss"),
        ];
        for (edit, want) in cases {
            let mut a = args();
            edit(&mut a);
            let got = err(&a);
            assert!(got.contains(want), "got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn replay_files_are_checked_and_measured() {
        let dir = std::env::temp_dir().join(format!("sluice-bench-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut a = args();
        a.replay = Some(dir.join("absent.txt"));
        assert!(err(&a).starts_with("--replay: "), "{}", err(&a));
        let empty = dir.join("empty.txt");
        std::fs::write(&empty, "\n\r\n\n").unwrap();
        a.replay = Some(empty);
        assert!(err(&a).contains("has no non-empty line"), "{}", err(&a));
        let two = dir.join("two.txt");
        // 9 + 1 and 4 + 1 bytes (the CR is not part of the line): 7.5, rounded up.
        std::fs::write(&two, "<13>hello\r\n\nabcd").unwrap();
        a.replay = Some(two);
        assert_eq!(validate(&a).unwrap().replay_size, Some(8));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn configurations_from_files_labels_and_variants() {
        let dir = std::env::temp_dir().join(format!("bench-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("ebpf.toml");
        std::fs::write(&f, "[udp]\nbalance = \"ebpf\"\n").unwrap();
        let mut a = args();
        a.config = vec![f.clone()];
        a.env = vec!["SC4S_SOURCE_UDP_SO_RCVBUFF=1048576".into()];
        a.variant = vec!["kernel:SLUICE_UDP_BALANCE=kernel".into()];
        let p = validate(&a).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(p.configs.len(), 2);
        assert_eq!(p.configs[0].label, "ebpf");
        assert!(p.configs[0].config.as_ref().unwrap().is_absolute());
        assert_eq!(p.configs[1].label, "kernel");
        assert_eq!(p.configs[1].env.len(), 2, "--env applies to variants too");
        assert!(p.configs[1].config.is_none());
    }
}
