//! The command line as an operator meets it: defaults, clear startup errors, `sluice parse`,
//! the embedded JSON-lines output.

use std::io::Write;
use std::net::{TcpListener, UdpSocket};
use std::process::{Command, Stdio};
use std::time::Duration;

use sluice_suite::{Daemon, DaemonOpts, sluice_bin};

fn run_expect_failure(env: &[(&str, &str)]) -> String {
    let dir = std::env::temp_dir().join(format!("sluice-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(sluice_bin());
    cmd.arg("run").current_dir(&dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("SC4S_") || k.starts_with("SLUICE_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "startup errors exit 2");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_port_in_use_names_the_variable_to_change() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let err = run_expect_failure(&[
        ("SLUICE_LISTEN_ADDRESS", "127.0.0.1"),
        ("SC4S_LISTEN_DEFAULT_UDP_PORT", &port),
        ("SC4S_LISTEN_DEFAULT_TCP_PORT", "disabled"),
        ("SC4S_LISTEN_STATUS_PORT", "0"),
        // The default 601 listeners are not under test; another test's daemon may hold them.
        ("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled"),
        ("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled"),
    ]);
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(err.contains("SC4S_LISTEN_DEFAULT_UDP_PORT"), "{err}");
    // The holder is this test process: the message names it.
    assert!(
        err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );

    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let err = run_expect_failure(&[
        ("SLUICE_LISTEN_ADDRESS", "127.0.0.1"),
        ("SC4S_LISTEN_DEFAULT_UDP_PORT", "disabled"),
        ("SC4S_LISTEN_DEFAULT_TCP_PORT", &port),
        ("SC4S_LISTEN_STATUS_PORT", "0"),
        ("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled"),
        ("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled"),
    ]);
    assert!(err.contains("SC4S_LISTEN_DEFAULT_TCP_PORT"), "{err}");
}

#[test]
fn a_bad_value_names_the_variable_and_the_value() {
    let err = run_expect_failure(&[("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "many")]);
    assert!(
        err.contains("SC4S_SOURCE_LISTEN_UDP_SOCKETS=\"many\""),
        "{err}"
    );
    let err = run_expect_failure(&[("SC4S_DEFAULT_TIMEZONE", "Mars/Olympus")]);
    assert!(err.contains("Mars/Olympus"), "{err}");
    let err = run_expect_failure(&[
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "ftp://x"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "t"),
    ]);
    assert!(err.contains("ftp://x"), "{err}");
}

#[test]
fn the_default_run_binds_514_or_says_why_not() {
    // No configuration at all, as in the README. As root 514 binds; without the privilege
    // (or with 514/8080 taken on this machine) the error must name the cause and the setting.
    let dir = std::env::temp_dir().join(format!("sluice-default-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(sluice_bin());
    cmd.arg("run")
        .current_dir(&dir)
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("SC4S_") || k.starts_with("SLUICE_") {
            cmd.env_remove(k);
        }
    }
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    match child.try_wait().unwrap() {
        None => {
            // Running: 514 is ours. Check with /health, then stop it.
            let (code, _) = sluice_suite::http_get(([127, 0, 0, 1], 8080).into(), "/health");
            assert_eq!(code, 200);
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            assert!(child.wait().unwrap().success());
        }
        Some(status) => {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            assert_eq!(status.code(), Some(2));
            // Whichever port was taken (514, 601 or 8080), the message names its setting.
            assert!(
                err.contains("cannot listen on") && err.contains("SC4S_LISTEN_"),
                "{err}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_hec_events_go_to_the_json_lines_file() {
    let mut d =
        Daemon::start(DaemonOpts::default().env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50));
    sluice_suite::send_udp(
        d.udp_addr(),
        &[b"<38>1 2026-11-22T10:00:00.123Z web01 sshd 5540 - [meta seq=\"1\"] Accepted"],
    );
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_delivered_total", &[]) == 1.0
    });
    assert!(d.terminate().success());
    let evs = d.file_events();
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0]["event"], "- - sshd 5540 - [meta seq=\"1\"]Accepted");
    assert_eq!(evs[0]["time"], "1795341600.123");
    assert_eq!(evs[0]["host"], "web01");
    assert_eq!(evs[0]["sourcetype"], "nix:syslog");
    assert_eq!(evs[0]["source"], "program:sshd");
}

#[test]
fn parse_prints_the_corpus_schema() {
    let mut child = Command::new(sluice_bin())
        .args(["parse", "--year", "2026", "--timezone", "UTC"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"<34>Oct 11 22:14:15 mymachine su: 'su root' failed\n<999>bad\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["format"], "rfc3164");
    assert_eq!(lines[0]["timestamp"], "2026-10-11T22:14:15.000000Z");
    assert_eq!(lines[0]["year_inferred"], true);
    assert_eq!(lines[0]["hostname"], "mymachine");
    assert_eq!(lines[0]["appname"], "su");
    assert_eq!(lines[0]["message"], "'su root' failed");
    assert_eq!(lines[1]["format"], "unparsed");
    assert_eq!(lines[1]["message"], "<999>bad");
    assert!(lines[1]["facility"].is_null());
}

#[test]
fn a_vendor_port_tags_its_events_with_the_vendor_and_product() {
    let s = sluice_suite::sink();
    let vendor_port = sluice_suite::free_port();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_LISTEN_CISCO_ASA_UDP_PORT", vendor_port)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    );
    sluice_suite::send_udp(
        ([127, 0, 0, 1], vendor_port).into(),
        &[b"<166>Nov 22 10:00:00 fw01 sshd[12]: from the vendor port"],
    );
    sluice_suite::send_udp(
        d.udp_addr(),
        &[b"<166>Nov 22 10:00:00 fw01 sshd[12]: default port"],
    );
    assert!(s.wait_for(2, Duration::from_secs(20)), "{}", d.log());
    let evs = s.events();
    let by_port = |p: u16| {
        evs.iter()
            .find(|e| {
                e["fields"]["sc4s_destport"]
                    .as_str()
                    .and_then(|v| v.parse().ok())
                    == Some(p)
            })
            .unwrap_or_else(|| panic!("no event for port {p}: {evs:?}"))
    };
    let v = by_port(vendor_port);
    assert_eq!(v["fields"]["sc4s_vendor"], "cisco");
    assert_eq!(v["fields"]["sc4s_product"], "asa");
    assert!(
        v["fields"]["sc4s_tags"]
            .as_str()
            .unwrap()
            .contains(".source.s_CISCO_ASA")
    );
    let dflt = by_port(d.port);
    assert_eq!(dflt["fields"]["sc4s_vendor"], "nix");
    let m = d.metrics();
    assert_eq!(
        m.sum("sluice_received_total", &["listener=\"CISCO_ASA\""]),
        1.0
    );
}

/// Runs `sluice health` against `port`; its exit code and stdout.
fn health(port: u16) -> (Option<i32>, String) {
    let out = Command::new(sluice_bin())
        .args(["health", "--host", "127.0.0.1", "--port", &port.to_string()])
        .env_remove("SC4S_LISTEN_STATUS_PORT")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn health_exits_0_when_healthy_and_1_otherwise_with_the_reason() {
    let d = Daemon::start(DaemonOpts::default());
    let (code, out) = health(d.status_port);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("healthy: "), "{out}");

    // Nothing listens there: unhealthy (1), not a tool error (2, which Docker reserves).
    let closed = sluice_suite::free_port();
    let (code, out) = health(closed);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with(&format!(
            "unhealthy: cannot reach the status server at 127.0.0.1:{closed}"
        )),
        "{out}"
    );

    // A daemon whose Splunk refuses its token answers 503 with the reason.
    let sink = sluice_suite::sink();
    let bad = Daemon::start(
        DaemonOpts::default()
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", sink.base_url())
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "wrong-token")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    );
    sluice_suite::send_udp(bad.udp_addr(), &[b"<13>Nov 22 10:00:00 h app: held"]);
    let start = std::time::Instant::now();
    let (code, out) = loop {
        let (code, out) = health(bad.status_port);
        if code != Some(0) || start.elapsed() > Duration::from_secs(30) {
            break (code, out);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("unhealthy: HTTP/1.1 503"), "{out}");
    assert!(out.contains("cannot deliver to Splunk HEC"), "{out}");
}

/// Under systemd (`Type=notify`, `WatchdogSec=`): READY=1 once the listeners are bound, a
/// watchdog ping at half the interval, STOPPING=1 on SIGTERM, through a real notification
/// socket.
#[test]
fn systemd_readiness_watchdog_and_stopping_reach_the_notify_socket() {
    use std::os::unix::net::UnixDatagram;
    let dir = std::env::temp_dir().join(format!("sluice-notify-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("notify");
    let sock = UnixDatagram::bind(&path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut d = Daemon::start(
        DaemonOpts::default()
            .env("NOTIFY_SOCKET", path.display())
            .env("WATCHDOG_USEC", 1_000_000),
    );
    let mut buf = [0u8; 512];
    let mut recv = || {
        let n = sock.recv(&mut buf).expect("a notification within 30 s");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    let first = recv();
    assert!(
        first.starts_with("READY=1\nSTATUS=receiving on 1 UDP and 1 stream ports"),
        "{first:?}"
    );
    // The first ping comes at once, the next after 500 ms.
    assert_eq!(recv(), "WATCHDOG=1");
    assert_eq!(recv(), "WATCHDOG=1");
    assert!(d.terminate().success());
    let mut last = recv();
    while last == "WATCHDOG=1" {
        last = recv();
    }
    assert!(last.starts_with("STOPPING=1\n"), "{last:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
