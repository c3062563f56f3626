//! Acceptance: SIGTERM in the middle of a 50k/s run — every message counted as received is
//! delivered, and sluice exits 0.

use std::process::{Command, Stdio};
use std::time::Duration;

use sluice_suite::{Daemon, DaemonOpts, Faults, loggen_path, sink};

/// Reads `key=N` from the daemon's final "stopped cleanly" line.
fn field(log: &str, line_marker: &str, key: &str) -> u64 {
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains(line_marker))
        .unwrap_or_else(|| panic!("no {line_marker:?} line in log:\n{log}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
}

fn sigterm_mid_run(transport_flag: &str) {
    let sink = sink();
    // A slow indexer, so batches are still queued and in flight when SIGTERM arrives and
    // the drain has real work to do.
    sink.set_faults(Faults {
        delay: Some(Duration::from_millis(150)),
        ..Faults::default()
    });
    let mut d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SLUICE_DRAIN_TIMEOUT", 60),
    );
    let port = d.port.to_string();
    let mut sender = Command::new(loggen_path())
        .args([
            "-i",
            transport_flag,
            "-r",
            "50000",
            "-I",
            "8",
            "-s",
            "800",
            "127.0.0.1",
            &port,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start loggen");
    // Wait until the run is well under way.
    d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_received_total", &[]) > 60_000.0
    });
    let in_flight = d.metrics().sum("sluice_window_events", &[]);
    let status = d.terminate();
    let _ = sender.kill();
    let _ = sender.wait();
    let log = d.log();
    assert!(status.success(), "exit status {status:?}; log:\n{log}");
    let received = field(&log, "stopped cleanly", "received");
    let delivered = field(&log, "stopped cleanly", "delivered");
    assert!(received > 60_000, "received {received}");
    assert_eq!(delivered, received, "log:\n{log}");
    assert_eq!(
        sink.accepted_events(),
        received,
        "the sink has every received event"
    );
    let report = sink.seq_report(None);
    assert_eq!(report.distinct, received, "{report:?}");
    assert_eq!(report.duplicates, 0, "{report:?}");
    eprintln!(
        "{transport_flag}: received {received}, delivered {delivered}, {in_flight} events in flight at SIGTERM"
    );
}

#[test]
fn sigterm_during_a_50k_per_second_udp_run_delivers_everything_received() {
    let _heavy = sluice_suite::heavy();
    sigterm_mid_run("-D");
}

#[test]
fn sigterm_during_a_tcp_run_delivers_everything_received() {
    let _heavy = sluice_suite::heavy();
    sigterm_mid_run("-S");
}

#[test]
fn sigterm_with_an_unreachable_hec_reports_what_is_undelivered_and_exits_0() {
    // Nothing listens on this port: HEC is down for the whole run.
    let dead = sluice_suite::free_port();
    let mut d = Daemon::start(
        DaemonOpts::default()
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
                format!("http://127.0.0.1:{dead}"),
            )
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "t")
            .env("SLUICE_DRAIN_TIMEOUT", 2),
    );
    let msgs: Vec<Vec<u8>> = (0..50)
        .map(|i| format!("<13>Nov 22 10:00:00 h app: m{i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    sluice_suite::send_udp(d.udp_addr(), &refs);
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_received_total", &[]) == 50.0
    });
    let status = d.terminate();
    let log = d.log();
    assert!(status.success(), "{log}");
    assert!(
        log.contains("unreachable"),
        "startup says HEC is unreachable:\n{log}"
    );
    assert_eq!(field(&log, "drain timeout", "undelivered"), 50, "{log}");
}

#[test]
fn sighup_does_not_stop_sluice() {
    let mut d = Daemon::start(DaemonOpts::default());
    let pid = d.pid().to_string();
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    // SIGHUP reloads the configuration (tests/e2e_reload.rs); it never stops sluice.
    d.wait_for_log("configuration reloaded", Duration::from_secs(10));
    assert_eq!(d.http_get("/health").0, 200, "still running");
    assert!(d.terminate().success());
}
