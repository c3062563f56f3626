//! One instance per port: a second `sluice run` on a port another process serves is refused,
//! naming the port, the setting and the other pid, and the first instance's traffic is
//! untouched; `SLUICE_LISTEN_SHARE_PORTS=yes` lets it join on purpose.

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use sluice_net::{Transport, port_holders};
use sluice_suite::{Daemon, DaemonOpts, free_port, sluice_bin};

/// Runs `sluice run` with only `env` (plus the test address and `lock_dir`) and waits for it
/// to exit.
fn run_second(lock_dir: &Path, env: &[(&str, String)]) -> Output {
    let dir = std::env::temp_dir().join(format!("sluice-second-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(sluice_bin());
    cmd.arg("run")
        .current_dir(&dir)
        .stdin(Stdio::null())
        .env("SLUICE_LISTEN_LOCK_DIR", lock_dir)
        .env("SLUICE_LISTEN_ADDRESS", "127.0.0.1")
        .env("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled")
        .env("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled")
        .env("SC4S_LISTEN_STATUS_PORT", "0");
    for (k, _) in std::env::vars() {
        if k.starts_with("SC4S_") || k.starts_with("SLUICE_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    // A second instance that started despite the first would run until killed; bound it.
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    panic!(
        "the second instance kept running; log:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn datagrams(d: &Daemon) -> f64 {
    d.metrics().sum(
        "sluice_udp_datagrams_total",
        &[&format!("port=\"{}\"", d.port)],
    )
}

#[test]
fn a_second_instance_is_refused_and_the_first_keeps_all_its_traffic() {
    let first = Daemon::start(DaemonOpts::default());
    let port = first.port.to_string();

    // Traffic flows to the first instance the whole time the second one tries to start.
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let sender = {
        let (stop, sent, addr) = (stop.clone(), sent.clone(), first.udp_addr());
        thread::spawn(move || {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            while !stop.load(Ordering::Relaxed) {
                let n = sent.load(Ordering::Relaxed);
                s.send_to(format!("<13>second-instance test {n}").as_bytes(), addr)
                    .unwrap();
                sent.store(n + 1, Ordering::Relaxed);
                thread::sleep(Duration::from_micros(200));
            }
        })
    };

    // The first instance's lock directory: its lock files refuse the second instance before
    // its probe would.
    let locks = first.dir.join("locks");
    let udp = run_second(
        &locks,
        &[
            ("SC4S_LISTEN_DEFAULT_UDP_PORT", port.clone()),
            ("SC4S_LISTEN_DEFAULT_TCP_PORT", "disabled".into()),
        ],
    );
    let tcp = run_second(
        &locks,
        &[
            ("SC4S_LISTEN_DEFAULT_UDP_PORT", "disabled".into()),
            ("SC4S_LISTEN_DEFAULT_TCP_PORT", port.clone()),
        ],
    );
    stop.store(true, Ordering::Relaxed);
    sender.join().unwrap();

    for (out, transport, setting) in [
        (&udp, "UDP", "SC4S_LISTEN_DEFAULT_UDP_PORT"),
        (&tcp, "TCP", "SC4S_LISTEN_DEFAULT_TCP_PORT"),
    ] {
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{transport}: {err}");
        assert!(!out.status.success(), "{err}");
        assert_eq!(out.status.code(), Some(2), "startup errors exit 2: {err}");
        assert!(
            err.contains(&format!("{transport} 127.0.0.1:{port} is already in use")),
            "{err}"
        );
        assert!(err.contains(setting), "{err}");
        assert!(err.contains(&format!("pid {}", first.pid())), "{err}");
        assert!(
            err.contains(&format!(
                "lock file {}/{}-127.0.0.1:{port}",
                locks.display(),
                transport.to_lowercase()
            )),
            "{err}"
        );
        assert!(err.contains("SLUICE_LISTEN_SHARE_PORTS"), "{err}");
    }

    let sent = sent.load(Ordering::Relaxed) as f64;
    assert!(sent > 0.0);
    let m = first.wait_metrics(Duration::from_secs(20), |m| {
        m.sum(
            "sluice_udp_datagrams_total",
            &[&format!("port=\"{}\"", first.port)],
        ) >= sent
    });
    assert_eq!(
        m.sum(
            "sluice_udp_datagrams_total",
            &[&format!("port=\"{}\"", first.port)]
        ),
        sent,
        "the first instance received every datagram sent while the second tried to start"
    );
    assert_eq!(m.sum("sluice_kernel_dropped_total", &[]), 0.0);
}

#[test]
fn sharing_a_port_is_allowed_when_asked() {
    let first = Daemon::start(DaemonOpts::default());
    let status = free_port();
    let mut second = Daemon::start_on(
        first.port,
        status,
        DaemonOpts::default().env("SLUICE_LISTEN_SHARE_PORTS", "yes"),
    );
    let log = second.log();
    for transport in ["UDP", "TCP"] {
        assert!(
            log.contains(&format!(
                "{transport} 127.0.0.1:{} is shared with pid {}",
                first.port,
                first.pid()
            )),
            "{log}"
        );
    }
    // Both groups are one SO_REUSEPORT group now: between them they get every datagram.
    let n = 500;
    let payloads: Vec<Vec<u8>> = (0..n)
        .map(|i| format!("<13>shared {i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
    sluice_suite::send_udp(first.udp_addr(), &refs);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while datagrams(&first) + datagrams(&second) < n as f64 {
        assert!(
            std::time::Instant::now() < deadline,
            "not every datagram arrived"
        );
        thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(datagrams(&first) + datagrams(&second), n as f64);
    assert!(second.terminate().success());
}

/// A syslog-ng process; killed on drop.
struct SyslogNg {
    child: std::process::Child,
    dir: std::path::PathBuf,
}

impl Drop for SyslogNg {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts syslog-ng listening on `port` for UDP (with `so-reuseport(yes)`, so a sluice that
/// did not check would silently join its group) and TCP, and waits until both are bound.
fn syslog_ng_on(port: u16) -> SyslogNg {
    let version = Command::new("syslog-ng")
        .arg("--version")
        .output()
        .expect("syslog-ng not found: install it with `apt-get install syslog-ng-core`");
    let text = String::from_utf8_lossy(&version.stdout);
    // "syslog-ng 3 (3.38.1)": the configuration must declare the major.minor version.
    let full = text
        .split(['(', ')'])
        .nth(1)
        .unwrap_or_else(|| panic!("unexpected syslog-ng --version output: {text}"));
    let config_version: String = full.split('.').take(2).collect::<Vec<_>>().join(".");
    let dir = std::env::temp_dir().join(format!("sluice-syslog-ng-{}-{port}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("syslog-ng.conf");
    std::fs::write(
        &conf,
        format!(
            "@version: {config_version}\n\
             source s {{ network(ip(\"127.0.0.1\") transport(\"udp\") port({port}) so-reuseport(yes)); \
             network(ip(\"127.0.0.1\") transport(\"tcp\") port({port})); }};\n\
             destination d {{ file(\"{}\"); }};\n\
             log {{ source(s); destination(d); }};\n",
            dir.join("out.log").display()
        ),
    )
    .unwrap();
    let child = Command::new("syslog-ng")
        .arg("-F")
        .arg("--no-caps")
        .arg("-f")
        .arg(&conf)
        .arg(format!("--persist-file={}", dir.join("persist").display()))
        .arg(format!("--pidfile={}", dir.join("pid").display()))
        .arg(format!("--control={}", dir.join("ctl").display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start syslog-ng");
    let sng = SyslogNg { child, dir };
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    for _ in 0..200 {
        if !port_holders(Transport::Udp, addr).is_empty()
            && !port_holders(Transport::Tcp, addr).is_empty()
        {
            return sng;
        }
        thread::sleep(Duration::from_millis(50));
    }
    panic!("syslog-ng did not bind port {port} within 10 s");
}

#[test]
fn a_port_held_by_syslog_ng_is_refused_naming_it() {
    let port = free_port();
    let sng = syslog_ng_on(port);
    for (udp, tcp, transport) in [
        (port.to_string(), "disabled".to_string(), "UDP"),
        ("disabled".to_string(), port.to_string(), "TCP"),
    ] {
        // A lock directory of its own: only the probe can find syslog-ng.
        let out = run_second(
            &sng.dir.join("locks"),
            &[
                ("SC4S_LISTEN_DEFAULT_UDP_PORT", udp),
                ("SC4S_LISTEN_DEFAULT_TCP_PORT", tcp),
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "{transport} 127.0.0.1:{port} is already in use by pid {} (syslog-ng)",
                sng.child.id()
            )),
            "{err}"
        );
    }
}
