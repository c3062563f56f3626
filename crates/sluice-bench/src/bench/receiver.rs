//! The receiver under test: a `sluice run` child process the tool starts (and stops), or a
//! receiver that is already running (`--target`).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::BenchError;
use super::probe::{HttpUrl, Metrics, fetch_metrics};

/// How long a daemon may take to start serving `/metrics`.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Log lines kept for error messages.
const LOG_TAIL: usize = 40;

/// A port that is free for UDP and TCP on `ip` right now (both transports share the number,
/// as SC4S's default listener does).
pub fn free_port(ip: IpAddr) -> Result<u16, BenchError> {
    let mut last = String::new();
    for _ in 0..200 {
        match TcpListener::bind((ip, 0)) {
            Ok(tcp) => {
                let port = tcp.local_addr().map(|a| a.port()).unwrap_or(0);
                if port != 0 && UdpSocket::bind((ip, port)).is_ok() {
                    return Ok(port);
                }
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(BenchError::Setting {
        flag: "--port",
        reason: format!("no free port found on {ip}: {last}"),
    })
}

/// Fails with a clear error when `port` is taken on `ip` for UDP or TCP.
pub fn check_port_free(ip: IpAddr, port: u16) -> Result<(), BenchError> {
    let in_use = |proto: &str, e: std::io::Error| BenchError::PortInUse {
        addr: SocketAddr::new(ip, port),
        reason: format!("{proto}: {e}"),
    };
    UdpSocket::bind((ip, port)).map_err(|e| in_use("UDP", e))?;
    TcpListener::bind((ip, port)).map_err(|e| in_use("TCP", e))?;
    Ok(())
}

/// The port variables of a daemon the bench starts: every listener the daemon opens by
/// default, on the ports the bench chose (see [`super::steps::RESERVED_ENV`]).
pub fn daemon_ports(port: u16, rfc_port: u16, status_port: u16) -> [(&'static str, String); 5] {
    [
        ("SC4S_LISTEN_DEFAULT_UDP_PORT", port.to_string()),
        ("SC4S_LISTEN_DEFAULT_TCP_PORT", port.to_string()),
        ("SC4S_LISTEN_DEFAULT_RFC5426_PORT", rfc_port.to_string()),
        ("SC4S_LISTEN_DEFAULT_RFC6587_PORT", rfc_port.to_string()),
        ("SC4S_LISTEN_STATUS_PORT", status_port.to_string()),
    ]
}

/// What a daemon is started with.
#[derive(Debug, Clone)]
pub struct DaemonSpec {
    pub exe: PathBuf,
    pub config: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub listen_ip: IpAddr,
    pub port: u16,
    /// `(base URL, token)` of the sink, or `None` when the user's settings say where to
    /// deliver.
    pub hec: Option<(String, String)>,
    /// Also write the daemon's log here.
    pub log_file: Option<PathBuf>,
}

/// A running `sluice run` child.
#[derive(Debug)]
pub struct Daemon {
    child: Child,
    pub pid: u32,
    pub port: u16,
    pub metrics_url: HttpUrl,
    dir: PathBuf,
    log: Arc<Mutex<VecDeque<String>>>,
}

impl Daemon {
    /// Starts the daemon and waits until `/metrics` answers with its UDP listener in it.
    pub fn start(spec: &DaemonSpec) -> Result<Daemon, BenchError> {
        let status_port = free_port(IpAddr::V4(Ipv4Addr::LOCALHOST))?;
        // The daemon's other default listener (RFC 5426/6587, 601 by default) gets a free port
        // of its own too: the bench must not need, or collide with, any well-known port.
        let rfc_port = loop {
            let p = free_port(spec.listen_ip)?;
            if p != spec.port {
                break p;
            }
        };
        let dir =
            std::env::temp_dir().join(format!("sluice-bench-{}-{}", std::process::id(), spec.port));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| BenchError::Daemon {
            what: format!("create the working directory {}", dir.display()),
            reason: e.to_string(),
            log: String::new(),
        })?;
        let mut cmd = Command::new(&spec.exe);
        cmd.arg("run").current_dir(&dir);
        if let Some(cfg) = &spec.config {
            cmd.arg("--config").arg(cfg);
        }
        // Only what the bench sets: SC4S_/SLUICE_ variables of the caller's shell would make
        // two runs of the same command measure different things.
        for (k, _) in std::env::vars() {
            if k.starts_with("SC4S_") || k.starts_with("SLUICE_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("SLUICE_LISTEN_ADDRESS", spec.listen_ip.to_string())
            .env("SLUICE_LOG", "info");
        if spec.config.is_none() {
            // A disk buffer of its own, gone with the run: the default directory is shared
            // with every other sluice on the machine (a second one is refused) and would
            // replay what an earlier run left.
            cmd.env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR",
                dir.join("buffer"),
            );
        }
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        for (k, v) in daemon_ports(spec.port, rfc_port, status_port) {
            cmd.env(k, v);
        }
        if let Some((url, token)) = &spec.hec {
            cmd.env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", url)
                .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", token);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| BenchError::Daemon {
            what: format!("start {} run", spec.exe.display()),
            reason: e.to_string(),
            log: String::new(),
        })?;
        let log = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(stderr) = child.stderr.take() {
            let log = Arc::clone(&log);
            let mut file = spec
                .log_file
                .as_ref()
                .and_then(|p| std::fs::File::create(p).ok());
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if let Some(f) = &mut file {
                        let _ = writeln!(f, "{line}");
                    }
                    let mut l = match log.lock() {
                        Ok(g) => g,
                        Err(p) => p.into_inner(),
                    };
                    if l.len() == LOG_TAIL {
                        l.pop_front();
                    }
                    l.push_back(line);
                }
            });
        }
        let pid = child.id();
        let metrics_url = HttpUrl {
            host: "127.0.0.1".into(),
            port: status_port,
            path: "/metrics".into(),
        };
        let mut d = Daemon {
            child,
            pid,
            port: spec.port,
            metrics_url,
            dir,
            log,
        };
        d.wait_ready()?;
        Ok(d)
    }

    fn wait_ready(&mut self) -> Result<(), BenchError> {
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // Let the log reader catch the last lines.
                std::thread::sleep(Duration::from_millis(200));
                return Err(BenchError::Daemon {
                    what: "start the sluice daemon".into(),
                    reason: format!("it exited with {status} before it was ready"),
                    log: self.log_tail(),
                });
            }
            if let Ok(m) = fetch_metrics(&self.metrics_url)
                && m.sum(
                    "sluice_udp_datagrams_total",
                    &[("port", &self.port.to_string())],
                )
                .is_some()
            {
                return Ok(());
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(BenchError::Daemon {
                    what: "start the sluice daemon".into(),
                    reason: format!(
                        "its /metrics on port {} did not list UDP port {} within {START_TIMEOUT:?}",
                        self.metrics_url.port, self.port
                    ),
                    log: self.log_tail(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last lines the daemon logged.
    pub fn log_tail(&self) -> String {
        let l = match self.log.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        l.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// `Some(status)` if the daemon has exited.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGTERM (through `kill(1)`: this crate has no `unsafe` for `kill(2)`), then SIGKILL
    /// if it has not exited within 20 s.
    pub fn stop(&mut self) {
        if self.exited().is_some() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads the daemon's metrics or fails with its log.
pub fn daemon_metrics(d: &mut Daemon) -> Result<Metrics, BenchError> {
    match fetch_metrics(&d.metrics_url) {
        Ok(m) => Ok(m),
        Err(e) => Err(BenchError::Daemon {
            what: format!("read the daemon's /metrics (port {})", d.metrics_url.port),
            reason: match d.exited() {
                Some(s) => format!("the daemon exited with {s}"),
                None => e,
            },
            log: d.log_tail(),
        }),
    }
}

/// An absolute form of a user-given path (the daemon runs in its own directory).
pub fn absolute(flag: &'static str, p: &Path) -> Result<PathBuf, BenchError> {
    std::fs::canonicalize(p).map_err(|e| BenchError::Setting {
        flag,
        reason: format!("{}: {e}", p.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_port_the_bench_gives_its_daemon_is_reserved_from_env() {
        for (var, value) in daemon_ports(40001, 40002, 40003) {
            assert!(
                super::super::steps::RESERVED_ENV
                    .iter()
                    .any(|(r, _)| *r == var),
                "{var} is set by the bench but --env could override it"
            );
            assert!(["40001", "40002", "40003"].contains(&value.as_str()));
        }
    }
}
