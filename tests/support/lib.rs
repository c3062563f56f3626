//! Shared helpers for sluice's end-to-end tests: run the real `sluice` binary on real sockets
//! next to a real HEC test sink, drive it with real senders (syslog-ng's `loggen`), and read
//! its `/metrics`.
//!
//! The daemon binary belongs to another package of the workspace, so the first call to
//! [`sluice_bin`] builds it with the same cargo and profile that built the test.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

pub mod fixtures;
pub mod tls;

pub use sluice_bench::sink::{Faults, HecSink, RejectReason, SinkConfig, SinkHandle};

/// Path of the `sluice` binary, built on first use.
pub fn sluice_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // target/<profile>/deps/<test-exe> → target/<profile>
        let exe = std::env::current_exe().expect("current_exe");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test executable lives in target/<profile>/deps")
            .to_path_buf();
        let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        // Cargo sets CARGO_MANIFEST_DIR, CARGO_PKG_NAME, … for the test process, and ring's
        // build script tracks some of them: passed on, they make this build and the next
        // `cargo test` each rebuild ring and everything above it (minutes on CI).
        for (k, _) in std::env::vars() {
            if k.starts_with("CARGO_PKG_")
                || k.starts_with("CARGO_MANIFEST_")
                || [
                    "CARGO_CRATE_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                    "CARGO_TARGET_TMPDIR",
                ]
                .contains(&k.as_str())
            {
                cmd.env_remove(k);
            }
        }
        cmd.args(["build", "--quiet", "-p", "sluice", "--bin", "sluice"])
            .arg("--target-dir")
            .arg(&target_dir);
        // `cargo test` gives the test its package's variables; build scripts (ring's) list
        // some of them as rerun-if-env-changed, so passing them on would rebuild ring and
        // everything above it here, and again at the next `cargo test` (minutes each time).
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("CARGO_PKG_")
                || k.starts_with("CARGO_BIN_")
                || k.starts_with("CARGO_MANIFEST_")
                || matches!(
                    k.as_ref(),
                    "CARGO_CRATE_NAME"
                        | "CARGO_PRIMARY_PACKAGE"
                        | "CARGO_TARGET_TMPDIR"
                        | "OUT_DIR"
                )
            {
                cmd.env_remove(k.as_ref());
            }
        }
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo to build the sluice binary");
        assert!(status.success(), "building the sluice binary failed");
        let bin = profile_dir.join("sluice");
        assert!(bin.exists(), "{} was not built", bin.display());
        bin
    })
    .clone()
}

/// A port free for both UDP and TCP on 127.0.0.1 right now, and not handed out before by
/// this test process.
///
/// The probe sockets close before the port is used, so two tests running in parallel could
/// otherwise be given the same number: one daemon then found the other's port claim and
/// exited (CI, stop 32).
pub fn free_port() -> u16 {
    static GIVEN: OnceLock<Mutex<std::collections::HashSet<u16>>> = OnceLock::new();
    let given = GIVEN.get_or_init(Default::default);
    for _ in 0..100 {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("bind tcp");
        let port = tcp.local_addr().expect("addr").port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok()
            && UdpSocket::bind(("0.0.0.0", port)).is_ok()
            && given.lock().expect("free_port set").insert(port)
        {
            return port;
        }
    }
    panic!("no free port found");
}

/// `loggen` from Debian's syslog-ng-core: the sender SC4S's performance docs use.
pub fn loggen_path() -> PathBuf {
    for dir in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
        let p = Path::new(dir).join("loggen");
        if p.exists() {
            return p;
        }
    }
    panic!("loggen not found: install it with `apt-get install syslog-ng-core` (.ci/run does)");
}

/// Runs loggen with `args` (e.g. `["-i", "-D", "-r", "20000", "-n", "1000", "127.0.0.1", "5514"]`)
/// and returns how many messages it reports as sent.
pub fn loggen(args: &[&str]) -> u64 {
    loggen_env(args, &[])
}

/// [`loggen`] with extra environment variables (`OPENSSL_CONF` for its TLS mode).
pub fn loggen_env(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> u64 {
    let out = Command::new(loggen_path())
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run loggen");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "loggen {args:?} failed: {text}");
    // "average rate = 19999.98 msg/sec, count=100000, time=..."
    let line = text
        .lines()
        .rev()
        .find(|l| l.contains("average rate"))
        .unwrap_or_else(|| panic!("no summary in loggen output: {text}"));
    line.split("count=")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("cannot read count from {line:?}"))
}

/// Starts a recording HEC sink on a free port.
pub fn sink() -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        record: true,
        track_seq: true,
        ..SinkConfig::default()
    })
    .expect("start the HEC sink")
}

/// How to start a daemon.
#[derive(Debug, Default, Clone)]
pub struct DaemonOpts {
    pub env: Vec<(String, String)>,
    /// Written to `sluice.toml` in the daemon's working directory and passed with --config.
    pub toml: Option<String>,
    /// When set, send events to this sink (URL + token); otherwise to the JSON-lines file.
    pub hec: Option<(String, String)>,
    /// When set, the daemon reads its ports from an env_file (`<dir>/env_file`, passed with
    /// --env-file) followed by these lines, instead of from its environment, so a test can
    /// rewrite them and reload ([`Daemon::rewrite_env_file`]).
    pub env_file: Option<String>,
}

impl DaemonOpts {
    pub fn env(mut self, k: &str, v: impl ToString) -> Self {
        self.env.push((k.to_string(), v.to_string()));
        self
    }
    pub fn toml(mut self, t: &str) -> Self {
        self.toml = Some(t.to_string());
        self
    }
    pub fn hec(mut self, sink: &SinkHandle) -> Self {
        self.hec = Some((sink.base_url(), sink.token().to_string()));
        self
    }
    pub fn env_file(mut self, lines: &str) -> Self {
        self.env_file = Some(lines.to_string());
        self
    }
}

/// A running `sluice run`.
pub struct Daemon {
    child: Child,
    pub port: u16,
    pub status_port: u16,
    pub dir: PathBuf,
    log: Arc<Mutex<String>>,
    /// Set by the log reader when the daemon's stderr closes, i.e. it exited.
    stderr_closed: Arc<std::sync::atomic::AtomicBool>,
    /// The port settings written first in the env_file (with [`DaemonOpts::env_file`]).
    base_env: String,
}

impl Daemon {
    /// Starts sluice on a free port (UDP and TCP share the number) with a free status port,
    /// and waits until it reports running.
    ///
    /// A port found free can be taken before the daemon binds it (another test's outgoing
    /// connection gets it as its ephemeral port, or another test process's daemon claims it):
    /// then the daemon exits saying the port is in use, and this starts it again on new
    /// ports, up to five times.
    pub fn start(opts: DaemonOpts) -> Daemon {
        const ATTEMPTS: u32 = 5;
        for attempt in 1.. {
            let d = Daemon::spawn_on(free_port(), free_port(), opts.clone());
            match d.wait_running() {
                Ok(()) => return d,
                Err(log)
                    if attempt < ATTEMPTS
                        && (log.contains("Address already in use")
                            || log.contains("is already in use by pid")) =>
                {
                    eprintln!(
                        "a port was taken between choosing and binding it (attempt {attempt}); \
                         starting again on new ports"
                    );
                }
                Err(log) => {
                    panic!("sluice exited before logging \"sluice is running\"; log:\n{log}")
                }
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// Starts sluice on `port` (UDP and TCP) with its status server on `status_port`, e.g. a
    /// second instance on the port of a first.
    pub fn start_on(port: u16, status_port: u16, opts: DaemonOpts) -> Daemon {
        let d = Daemon::spawn_on(port, status_port, opts);
        d.wait_for_log("sluice is running", Duration::from_secs(60));
        d
    }

    /// Waits until the daemon reports running; its log if it exited first.
    fn wait_running(&self) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            if self.log().contains("sluice is running") {
                return Ok(());
            }
            if self.stderr_closed.load(std::sync::atomic::Ordering::SeqCst) {
                // Set after the reader thread appended the last line.
                return Err(self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "sluice did not report running within 60 s; log:\n{}",
            self.log()
        );
    }

    /// Spawns sluice on `port` and `status_port` without waiting for it.
    fn spawn_on(port: u16, status_port: u16, opts: DaemonOpts) -> Daemon {
        let dir = std::env::temp_dir().join(format!(
            "sluice-e2e-{}-{port}-{status_port}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut cmd = Command::new(sluice_bin());
        cmd.arg("run").current_dir(&dir);
        // Only what the test sets: no SC4S_/SLUICE_ variables leak in from the environment.
        for (k, _) in std::env::vars() {
            if k.starts_with("SC4S_") || k.starts_with("SLUICE_") {
                cmd.env_remove(k);
            }
        }
        let base: Vec<(&str, String)> = vec![
            ("SC4S_LISTEN_DEFAULT_UDP_PORT", port.to_string()),
            ("SC4S_LISTEN_DEFAULT_TCP_PORT", port.to_string()),
            ("SC4S_LISTEN_STATUS_PORT", status_port.to_string()),
            // The RFC 5426/6587 default (601) would collide between tests running in
            // parallel; a test that wants them sets them.
            ("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled".into()),
            ("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled".into()),
            ("SLUICE_LISTEN_ADDRESS", "127.0.0.1".into()),
            // sluice's own metrics events would add to what tests count at the sink; a test
            // that wants them sets the variable again.
            ("SC4S_DEST_SPLUNK_SC4S_METRICS_HEC", "no".into()),
            // Tests kill their daemons (SIGKILL on drop), which leaves the port lock files
            // behind: keep them in the daemon's own directory rather than /run/sluice.
            (
                "SLUICE_LISTEN_LOCK_DIR",
                dir.join("locks").display().to_string(),
            ),
            // Each daemon its own disk buffer (one process per directory); a test that
            // restarts on the same buffer sets it itself.
            (
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR",
                dir.join("buffer").display().to_string(),
            ),
        ];
        let mut base_env = String::new();
        for (k, v) in &base {
            base_env.push_str(&format!("{k}={v}\n"));
        }
        match &opts.env_file {
            Some(lines) => {
                std::fs::write(dir.join("env_file"), format!("{base_env}{lines}\n"))
                    .expect("write env_file");
                cmd.arg("--env-file").arg(dir.join("env_file"));
            }
            None => {
                cmd.envs(base.iter().map(|(k, v)| (k, v)));
            }
        }
        cmd.env("SLUICE_LOG", "info");
        if let Some((url, token)) = &opts.hec {
            cmd.env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", url)
                .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", token);
        }
        if let Some(t) = &opts.toml {
            std::fs::write(dir.join("sluice.toml"), t).expect("write config");
            cmd.arg("--config").arg(dir.join("sluice.toml"));
        }
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn sluice");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr");
        let log2 = log.clone();
        let stderr_closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let closed2 = stderr_closed.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut l = log2.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
            closed2.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        Daemon {
            child,
            port,
            status_port,
            dir,
            log,
            stderr_closed,
            base_env,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn udp_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits for `needle` in the daemon's log; panics with the log on timeout or exit.
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.log().contains(needle) {
                return;
            }
            if self.stderr_closed.load(std::sync::atomic::Ordering::SeqCst) {
                panic!(
                    "sluice exited before logging {needle:?}; log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "sluice did not log {needle:?} within {timeout:?}; log:\n{}",
            self.log()
        );
    }

    /// `GET path` on the status port.
    pub fn http_get(&self, path: &str) -> (u16, String) {
        http_get(SocketAddr::from(([127, 0, 0, 1], self.status_port)), path)
    }

    pub fn metrics(&self) -> Metrics {
        let (code, body) = self.http_get("/metrics");
        assert_eq!(code, 200, "{body}");
        Metrics::parse(&body)
    }

    /// Polls `/metrics` until `f` holds.
    pub fn wait_metrics(&self, timeout: Duration, f: impl Fn(&Metrics) -> bool) -> Metrics {
        let start = Instant::now();
        loop {
            let m = self.metrics();
            if f(&m) {
                return m;
            }
            if start.elapsed() > timeout {
                panic!(
                    "metrics condition not met within {timeout:?}; last metrics:\n{m:?}\nlog:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Rewrites the env_file (see [`DaemonOpts::env_file`]): the port settings, then `lines`.
    pub fn rewrite_env_file(&self, lines: &str) {
        std::fs::write(
            self.dir.join("env_file"),
            format!("{}{lines}\n", self.base_env),
        )
        .expect("write env_file");
    }

    /// Sends SIGHUP (a reload).
    pub fn sighup(&self) {
        let pid = self.child.id().to_string();
        let st = Command::new("kill").args(["-HUP", &pid]).status();
        assert!(st.is_ok_and(|s| s.success()), "kill -HUP {pid}");
    }

    /// How many times `needle` occurs in the log so far.
    pub fn log_count(&self, needle: &str) -> usize {
        self.log().matches(needle).count()
    }

    /// Waits until `needle` occurs in the log more than `seen` times.
    pub fn wait_for_log_after(&self, needle: &str, seen: usize, timeout: Duration) {
        let start = Instant::now();
        while self.log_count(needle) <= seen {
            if start.elapsed() > timeout
                || self.stderr_closed.load(std::sync::atomic::Ordering::SeqCst)
            {
                panic!(
                    "sluice did not log {needle:?} again within {timeout:?}; log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM and waits for exit.
    pub fn terminate(&mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        self.wait_exit(Duration::from_secs(120))
    }

    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                // Let the log reader drain the pipe.
                std::thread::sleep(Duration::from_millis(100));
                return st;
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                panic!(
                    "sluice did not exit within {timeout:?}; log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Events written to the JSON-lines output (file mode).
    pub fn file_events(&self) -> Vec<serde_json::Value> {
        let text =
            std::fs::read_to_string(self.dir.join("sluice-events.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
            .collect()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Minimal HTTP/1.1 GET.
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s =
        TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect status port");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let code = resp
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = resp
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

/// Parsed Prometheus text: sample (name with labels, as written) → value.
#[derive(Debug, Clone, Default)]
pub struct Metrics(pub BTreeMap<String, f64>);

impl Metrics {
    pub fn parse(text: &str) -> Metrics {
        let mut m = BTreeMap::new();
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            if let Some((k, v)) = line.rsplit_once(' ')
                && let Ok(v) = v.parse::<f64>()
            {
                m.insert(k.to_string(), v);
            }
        }
        Metrics(m)
    }

    /// Sum of every sample of family `name` whose labels contain all of `labels`
    /// (`key="value"` fragments).
    pub fn sum(&self, name: &str, labels: &[&str]) -> f64 {
        self.0
            .iter()
            .filter(|(k, _)| {
                let fam = k.split('{').next().unwrap_or("");
                fam == name && labels.iter().all(|l| k.contains(l))
            })
            .map(|(_, v)| v)
            .sum()
    }
}

/// Sends each payload as one datagram to `addr`, pausing briefly every 100 so a test never
/// outruns the receiver's buffer on a loaded machine.
pub fn send_udp(addr: SocketAddr, payloads: &[&[u8]]) {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    for (i, p) in payloads.iter().enumerate() {
        s.send_to(p, addr).unwrap();
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Serialises load-heavy tests within a test binary: on a 2-core machine two of them at once
/// measure the scheduler, not sluice.
pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
