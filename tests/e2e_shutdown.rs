//! Acceptance: SIGTERM in the middle of a 50k/s run — every message counted as received is
//! delivered, and sluice exits 0; what TCP senders already sent (still in the kernel's socket
//! buffers at SIGTERM) is read and delivered too; a drain that runs out of time exits 1 and
//! says how many events it lost.

use std::io::Write;
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, Faults, loggen_path, sink};

/// Reads `key=N` from the daemon's last line containing `line_marker`.
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
fn a_drain_timeout_with_undelivered_events_exits_1_and_says_how_many() {
    // Nothing listens on this port: HEC is down for the whole run.
    let dead = sluice_suite::free_port();
    let mut d = Daemon::start(
        DaemonOpts::default()
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
                format!("http://127.0.0.1:{dead}"),
            )
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "t")
            // Without the disk buffer (it would keep them: tests/e2e_buffer.rs).
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE", "no")
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
    assert_eq!(status.code(), Some(1), "lost events: exit 1; log:\n{log}");
    assert!(
        log.contains("unreachable"),
        "startup says HEC is unreachable:\n{log}"
    );
    let marker = "were not delivered";
    assert_eq!(field(&log, marker, "lost"), 50, "{log}");
    assert_eq!(field(&log, marker, "received"), 50, "{log}");
    assert_eq!(field(&log, marker, "delivered"), 0, "{log}");
    assert!(
        log.contains("SLUICE_DRAIN_TIMEOUT"),
        "the line names the setting: {log}"
    );
    assert!(!log.contains("stopped cleanly"), "{log}");
}

/// A TCP sender whose data sits in the kernel's buffers when SIGTERM comes (sluice stopped
/// reading because its window was full): sluice reads it before closing, and delivers it.
#[test]
fn sigterm_delivers_tcp_data_still_in_the_socket_buffers() {
    let _heavy = sluice_suite::heavy();
    let sink = sink();
    // Splunk refuses everything for now: the window fills and sluice stops reading.
    sink.set_faults(Faults {
        busy_until: Some(Instant::now() + Duration::from_secs(3600)),
        ..Faults::default()
    });
    let mut d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SC4S_SOURCE_TCP_IW_SIZE", 500)
            // The window must fill: no disk buffer to spill to.
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE", "no")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", 100)
            .env("SLUICE_DRAIN_TIMEOUT", 60),
    );
    let written = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (w2, s2, port) = (written.clone(), stop.clone(), d.port);
    let writer = std::thread::spawn(move || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut i = 0u64;
        while !s2.load(Ordering::SeqCst) {
            let mut line =
                format!("<13>Nov 22 10:00:00 host app: seq: {i:010}, thread: 0000, runid: 9, pad ")
                    .into_bytes();
            line.resize(799, b'x');
            line.push(b'\n');
            if c.write_all(&line).is_err() {
                break;
            }
            i += 1;
            w2.store(i, Ordering::SeqCst);
        }
        // Closing is the sender's "that was all".
        i
    });

    // The window is full and the writer is stalled: the rest sits in the socket buffers.
    d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_window_full_total", &["window=\"tcp\""]) > 0.0
    });
    let mut last = written.load(Ordering::SeqCst);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = written.load(Ordering::SeqCst);
        if now == last {
            break;
        }
        last = now;
    }
    let received_before = d.metrics().sum("sluice_received_total", &[]) as u64;
    let unread = last - received_before;
    assert!(
        unread >= 500,
        "expected data in the socket buffers: written {last}, received {received_before}"
    );

    // SIGTERM while the window is still full; Splunk recovers during the drain.
    stop.store(true, Ordering::SeqCst);
    let pid = d.pid().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    d.wait_for_log("stopping", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500));
    sink.set_faults(Faults::default());
    let sent = writer.join().unwrap();
    let status = d.wait_exit(Duration::from_secs(120));
    let log = d.log();
    assert!(status.success(), "exit status {status:?}; log:\n{log}");
    assert!(sent >= last, "the writer's count only grows");
    assert_eq!(field(&log, "stopped cleanly", "received"), sent, "{log}");
    assert_eq!(field(&log, "stopped cleanly", "delivered"), sent, "{log}");
    let r = sink.seq_report(Some(sent));
    assert_eq!(
        (r.distinct, r.duplicates, r.missing),
        (sent, 0, 0),
        "every line the sender wrote arrives once: {r:?}"
    );
    eprintln!(
        "{unread} of {sent} lines were still in the socket buffers at SIGTERM; all delivered"
    );
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
