//! The disk buffer end to end: loggen over real sockets, the sluice binary, and a HEC
//! stand-in that refuses (503) for a time window.
//!
//! The issue's scenarios at their full size (the figures in BENCHMARKS.md come from these
//! runs): an 80 s run at 20k/s UDP with HEC refusing from 10 s to 70 s; 300k events in
//! reliable mode, kill -9 three seconds after the sender finishes, restart; a 4 × 60k/s burst
//! against a HEC capped at 50k/s. `SLUICE_E2E_SCALE` (a fraction, default 1) shortens them
//! on a slow machine; the loss assertions do not change with it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sluice_bench::SeqReport;
use sluice_suite::{Daemon, DaemonOpts, Faults, SinkConfig, SinkHandle, loggen, loggen_path};

/// A sink that counts sequence numbers per sender (no recording: millions of events).
fn seq_sink(faults: Faults) -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        track_seq: true,
        faults,
        ..SinkConfig::default()
    })
    .expect("start the HEC sink")
}

fn scale() -> f64 {
    std::env::var("SLUICE_E2E_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|s: &f64| *s > 0.0 && *s <= 1.0)
        .unwrap_or(1.0)
}

fn scaled(secs: f64) -> Duration {
    Duration::from_secs_f64(secs * scale())
}

/// Waits until the sink has `n` distinct events (or `timeout`), then reports.
fn settle(sink: &SinkHandle, n: u64, timeout: Duration) -> SeqReport {
    let end = Instant::now() + timeout;
    loop {
        let r = sink.seq_report(None);
        if r.distinct >= n || Instant::now() > end {
            // A little longer, to see duplicates still in flight.
            std::thread::sleep(Duration::from_millis(500));
            return sink.seq_report(None);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn kernel_drops(d: &Daemon) -> f64 {
    d.metrics().sum("sluice_kernel_dropped_total", &[])
}

/// What an outage run measured.
struct Outage {
    sent: u64,
    report: SeqReport,
    kernel_drops: f64,
    spilled: f64,
    peak_buffered: f64,
    /// From HEC's recovery to an empty buffer.
    drained_after: Option<Duration>,
}

/// 20k/s UDP for 80 s (scaled); HEC answers 503 from t=10 s to t=70 s.
fn outage_run(buffer: bool) -> Outage {
    let sink = seq_sink(Faults::default());
    let d = Daemon::start(DaemonOpts::default().hec(&sink).env(
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE",
        if buffer { "yes" } else { "no" },
    ));
    let run = scaled(80.0);
    let (from, to) = (scaled(10.0), scaled(70.0));
    let port = d.port.to_string();
    let started = Instant::now();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (sent, (peak_buffered, drained_after)) = std::thread::scope(|s| {
        let outage = s.spawn(|| {
            std::thread::sleep(from);
            sink.set_faults(Faults {
                busy_until: Some(Instant::now() + (to - from)),
                ..Faults::default()
            });
        });
        // The buffer's high point, and how long it takes to empty once HEC is back.
        let sampler = s.spawn(|| {
            let (mut peak, mut drained) = (0.0f64, None);
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let b = d.metrics().sum("sluice_buffer_events", &[]);
                peak = peak.max(b);
                let t = started.elapsed();
                if drained.is_none() && t > to && b == 0.0 {
                    drained = Some(t - to);
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            (peak, drained)
        });
        let secs = run.as_secs().max(1).to_string();
        let sent = loggen(&[
            "-i",
            "-D",
            "-r",
            "20000",
            "-I",
            &secs,
            "-s",
            "300",
            "127.0.0.1",
            &port,
        ]);
        outage.join().unwrap();
        let _ = settle(
            &sink,
            sent,
            Duration::from_secs(if buffer { 300 } else { 30 }),
        );
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        (sent, sampler.join().unwrap())
    });
    let m = d.metrics();
    let o = Outage {
        sent,
        report: sink.seq_report(None),
        kernel_drops: kernel_drops(&d),
        spilled: m.sum("sluice_buffer_spilled_events_total", &[]),
        peak_buffered,
        drained_after,
    };
    eprintln!(
        "outage (buffer {buffer}): sent {}, delivered {} distinct ({:.2} % lost), {} \
         duplicates, kernel drops {}; spilled {} events, at most {} on disk, buffer empty \
         {:?} after HEC came back",
        o.sent,
        o.report.distinct,
        100.0 * (o.sent - o.report.distinct.min(o.sent)) as f64 / o.sent as f64,
        o.report.duplicates,
        o.kernel_drops,
        o.spilled,
        o.peak_buffered,
        o.drained_after,
    );
    o
}

/// 20k/s UDP for 80 s; HEC answers 503 from t=10 s to t=70 s. Without the buffer the
/// 250k-event window fills about 12 s into the outage and the kernel drops the rest (52.9 %
/// of the run on main c9181ed). With it, normal mode spills to disk: every event arrives,
/// once (a 503 indexes nothing, so there is nothing to duplicate).
#[test]
fn a_hec_outage_at_20k_per_second_loses_nothing_with_the_disk_buffer() {
    let _heavy = sluice_suite::heavy();
    let o = outage_run(true);
    assert_eq!(o.kernel_drops, 0.0, "the kernel dropped datagrams");
    assert_eq!(o.report.distinct, o.sent, "{:?}", o.report);
    assert_eq!(o.report.missing, 0, "{:?}", o.report);
    assert!(o.report.duplicates <= 5_000, "{:?}", o.report);
    assert!(
        o.spilled > 0.0,
        "the outage was absorbed by the disk buffer"
    );
}

/// The same outage without the buffer, for BENCHMARKS.md (what the buffer is compared
/// with): `cargo test --test e2e_buffer -- --ignored --nocapture without_the_buffer`.
#[test]
#[ignore = "a measurement, not a check: it loses events on purpose"]
fn the_same_outage_without_the_buffer() {
    let _heavy = sluice_suite::heavy();
    let o = outage_run(false);
    assert!(
        o.report.distinct < o.sent,
        "the window alone cannot hold a 60 s outage"
    );
}

/// Normal mode, kill -9 in the middle of a 50k/s UDP stream while HEC is down: what was on
/// disk survives, the loss is what had not been fsynced yet (the flush interval, 500 ms) and
/// what the receivers had not handed over (their open batches, up to the batch timeout).
#[test]
fn normal_mode_kill_9_loses_at_most_about_one_flush_interval() {
    let _heavy = sluice_suite::heavy();
    let buffer = tempfile::tempdir().unwrap();
    let buf_dir = buffer.path().display().to_string();
    let down = seq_sink(Faults {
        busy_until: Some(Instant::now() + Duration::from_secs(3600)),
        ..Faults::default()
    });
    let opts = |sink: &SinkHandle| {
        DaemonOpts::default()
            .hec(sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", &buf_dir)
    };
    let d = Daemon::start(opts(&down));
    let rate = 50_000u64;
    let mut sender = Command::new(loggen_path())
        .args([
            "-i",
            "-D",
            "-r",
            &rate.to_string(),
            "-I",
            "8",
            "-s",
            "300",
            "127.0.0.1",
            &d.port.to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_received_total", &[]) > 150_000.0
    });
    let m = d.metrics();
    let _ = Command::new("kill")
        .args(["-KILL", &d.pid().to_string()])
        .status();
    let received = m.sum("sluice_received_total", &[]) as u64;
    let on_disk = m.sum("sluice_buffer_events", &[]);
    let _ = sender.kill();
    let _ = sender.wait();
    drop(d);
    let up = seq_sink(Faults::default());
    let _d2 = Daemon::start(opts(&up));
    let report = settle(&up, received, Duration::from_secs(30));
    let lost = received.saturating_sub(report.distinct);
    eprintln!(
        "normal kill -9: {received} received when the metrics were read just before kill -9 \
         ({on_disk} on disk by then); {} delivered after restart; lost {lost} = {:.0} ms at \
         {rate}/s",
        report.distinct,
        lost as f64 * 1000.0 / rate as f64
    );
    // 500 ms flush interval + 300 ms batch timeout, with slack for a loaded machine.
    assert!(
        lost as f64 <= 1.2 * rate as f64,
        "lost {lost} of {received}: {report:?}"
    );
}

/// Reliable mode: 300k UDP events while HEC refuses everything; kill -9 three seconds after
/// the sender finishes; restart on the same buffer with HEC healthy: every event arrives.
#[test]
fn reliable_mode_kill_9_then_restart_delivers_every_event() {
    let _heavy = sluice_suite::heavy();
    let buffer = tempfile::tempdir().unwrap();
    let buf_dir = buffer.path().display().to_string();
    let down = seq_sink(Faults {
        busy_until: Some(Instant::now() + Duration::from_secs(3600)),
        ..Faults::default()
    });
    let opts = |sink: &SinkHandle| {
        DaemonOpts::default()
            .hec(sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE", "yes")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", &buf_dir)
    };
    let d = Daemon::start(opts(&down));
    let n = ((300_000.0 * scale()) as u64).max(10_000);
    let sent = loggen(&[
        "-i",
        "-D",
        "-r",
        "50000",
        "-n",
        &n.to_string(),
        "-s",
        "300",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    // Every datagram read (on a loaded machine the last ones may still wait in the socket
    // for window room), then as long again as the test always gave the buffer to commit.
    d.wait_metrics(Duration::from_secs(60), |m| {
        m.sum("sluice_received_total", &[]) >= sent as f64
    });
    std::thread::sleep(Duration::from_secs(3));
    let m = d.metrics();
    let received = m.sum("sluice_received_total", &[]);
    let on_disk = m.sum("sluice_buffer_events", &[]);
    let drops = kernel_drops(&d);
    let _ = Command::new("kill")
        .args(["-KILL", &d.pid().to_string()])
        .status();
    drop(d);
    eprintln!(
        "reliable: sent {sent}, received {received}, {on_disk} events on disk at kill -9, \
         kernel drops {drops}"
    );
    assert_eq!(drops, 0.0, "the kernel dropped datagrams");
    assert_eq!(received, sent as f64);

    let up = seq_sink(Faults::default());
    let started = Instant::now();
    let d2 = Daemon::start(opts(&up));
    let report = settle(&up, sent, Duration::from_secs(120));
    eprintln!(
        "reliable: after restart {} distinct, {} duplicates, {} missing in {:?}",
        report.distinct,
        report.duplicates,
        report.missing,
        started.elapsed()
    );
    assert!(
        d2.log().contains("delivering what the disk buffer kept"),
        "{}",
        d2.log()
    );
    assert_eq!(report.distinct, sent, "{report:?}");
    assert_eq!(report.missing, 0, "{report:?}");
}

/// Four UDP senders above the rate HEC takes: the window's overflow goes to disk instead of
/// stopping the readers, so nothing is dropped while the disk budget lasts. The issue's
/// figures are 4 × 60k/s against a HEC capped at 50k/s; a 2-core machine cannot generate,
/// receive and index that at once (loggen and the HEC stand-in share the cores, and the
/// kernel drops what the starved receive threads cannot read, buffer or not), so the default
/// is the same shape at a quarter of the rate: 4 × 15k/s against 12.5k/s.
/// `SLUICE_E2E_BURST_RATE` (per sender) and `SLUICE_E2E_HEC_DELAY_MS` (10 workers × 5000
/// events per delay) set the full figures on a larger machine.
#[test]
fn a_udp_burst_above_the_hec_rate_spills_to_disk_without_loss() {
    let _heavy = sluice_suite::heavy();
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let rate = env("SLUICE_E2E_BURST_RATE", 15_000).to_string();
    // 10 workers × 5000-event batches, each answered after the delay: 12.5k events/s at
    // 4 s (50k/s at 1 s).
    let delay = Duration::from_millis(env("SLUICE_E2E_HEC_DELAY_MS", 4000));
    let sink = seq_sink(Faults {
        delay: Some(delay),
        ..Faults::default()
    });
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SC4S_SOURCE_UDP_SO_RCVBUFF", 64 << 20),
    );
    let secs = scaled(10.0).as_secs().max(2).to_string();
    let port = d.port.to_string();
    let started = Instant::now();
    // One loggen, four senders ("thread" 0-3 in the sequence ids).
    let sent = loggen(&[
        "-i",
        "-D",
        "--active-connections=4",
        "-r",
        &rate,
        "-I",
        &secs,
        "-s",
        "300",
        "127.0.0.1",
        &port,
    ]);
    let burst = started.elapsed();
    let peak = d.metrics();
    let report = settle(&sink, sent, Duration::from_secs(300));
    let m = d.metrics();
    eprintln!(
        "burst: sent {sent} in {burst:?} ({:.0}/s), delivered {} distinct, {} duplicates in \
         {:?}; spilled {} events; kernel drops {}; buffer held {} events when the burst ended",
        sent as f64 / burst.as_secs_f64(),
        report.distinct,
        report.duplicates,
        started.elapsed(),
        m.sum("sluice_buffer_spilled_events_total", &[]),
        kernel_drops(&d),
        peak.sum("sluice_buffer_events", &[]),
    );
    assert_eq!(
        m.sum("sluice_received_total", &[]),
        sent as f64,
        "every datagram sent was received"
    );
    assert_eq!(kernel_drops(&d), 0.0);
    assert_eq!(report.distinct, sent, "{report:?}");
    assert!(m.sum("sluice_buffer_spilled_events_total", &[]) > 0.0);
}

/// SIGTERM while HEC is down: what could not be delivered by the drain timeout is written to
/// the buffer, the exit is clean (nothing was lost), and the next start delivers it.
#[test]
fn a_drain_timeout_keeps_the_undelivered_events_for_the_next_start() {
    let buffer = tempfile::tempdir().unwrap();
    let buf_dir = buffer.path().display().to_string();
    let down = seq_sink(Faults {
        busy_until: Some(Instant::now() + Duration::from_secs(3600)),
        ..Faults::default()
    });
    let opts = |sink: &SinkHandle| {
        DaemonOpts::default()
            .hec(sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", &buf_dir)
            .env("SLUICE_DRAIN_TIMEOUT", 2)
    };
    let mut d = Daemon::start(opts(&down));
    let sent = loggen(&[
        "-i",
        "-D",
        "-r",
        "20000",
        "-n",
        "20000",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_received_total", &[]) == sent as f64
    });
    let (code, health) = sluice_suite::http_get(
        std::net::SocketAddr::from(([127, 0, 0, 1], d.status_port)),
        "/health",
    );
    // HEC is down: unhealthy, as without a buffer; the details say where the events are.
    assert_eq!(code, 503, "{health}");
    assert!(health.contains("degraded"), "{health}");
    let status = d.terminate();
    let log = d.log();
    assert!(status.success(), "nothing lost: exit 0; log:\n{log}");
    assert!(log.contains("the next start delivers them"), "{log}");

    let up = seq_sink(Faults::default());
    let _d2 = Daemon::start(opts(&up));
    let report = settle(&up, sent, Duration::from_secs(60));
    assert_eq!(report.distinct, sent, "{report:?}");
    assert_eq!(report.missing, 0, "{report:?}");
}

/// Reads `key=value` from the daemon's last log line containing `line_marker`.
fn log_field(log: &str, line_marker: &str, key: &str) -> String {
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains(line_marker))
        .unwrap_or_else(|| panic!("no {line_marker:?} line in log:\n{log}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
        .to_owned()
}

/// What [`send_then_sigterm`] saw.
struct Stopped {
    sent: u64,
    /// From SIGTERM to the exit.
    took: Duration,
    log: String,
    /// The daemon's own count at its clean stop.
    received: u64,
}

/// Sends 100,000 UDP events (scaled) at 50k/s with loggen, then SIGTERM as soon as the sender
/// is done, while the events are still on their way through; asserts exit 0.
fn send_then_sigterm(d: &mut Daemon) -> Stopped {
    let n = ((100_000.0 * scale()) as u64).max(10_000);
    let sent = loggen(&[
        "-i",
        "-D",
        "-r",
        "50000",
        "-n",
        &n.to_string(),
        "-s",
        "300",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    let stopping = Instant::now();
    let status = d.terminate();
    // `terminate` lets the log reader drain for 100 ms after the exit.
    let took = stopping
        .elapsed()
        .saturating_sub(Duration::from_millis(100));
    let log = d.log();
    assert!(status.success(), "nothing lost: exit 0; log:\n{log}");
    let received = log_field(&log, "stopped cleanly", "received")
        .parse()
        .unwrap();
    Stopped {
        sent,
        took,
        log,
        received,
    }
}

/// Issue 24: SIGTERM right after 100,000 events while HEC refuses everything, with the
/// default drain timeout (30 s). The output is failing, so the stop does not wait for it:
/// what it holds goes to the buffer at once, the exit is 0, and the next start delivers
/// every event received. The stop is asserted loosely (5 s) for loaded CI machines; the
/// figure it prints is what BENCHMARKS.md reports.
fn sigterm_with_hec_down_stops_at_once(reliable: bool) {
    let mode = if reliable { "reliable" } else { "normal" };
    let buffer = tempfile::tempdir().unwrap();
    let buf_dir = buffer.path().display().to_string();
    let down = seq_sink(Faults {
        busy_until: Some(Instant::now() + Duration::from_secs(3600)),
        ..Faults::default()
    });
    let opts = |sink: &SinkHandle| {
        DaemonOpts::default()
            .hec(sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", &buf_dir)
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE",
                if reliable { "yes" } else { "no" },
            )
    };
    let mut d = Daemon::start(opts(&down));
    let Stopped {
        sent,
        took,
        log,
        received,
    } = send_then_sigterm(&mut d);
    let drain = log_field(&log, "stopped cleanly", "elapsed");
    eprintln!(
        "{mode} mode, HEC down: sent {sent}, received {received}; SIGTERM to exit {took:?} \
         (drain {drain}; drain timeout 30 s)"
    );
    assert!(
        log.contains("the output is failing"),
        "the stop says why it did not wait: {log}"
    );
    assert!(
        took <= Duration::from_secs(5),
        "the stop took {took:?}; log:\n{log}"
    );
    // UDP: what the kernel drops while a loaded machine falls behind is not the point here
    // (reliable mode fsyncs each batch); most of the events must be in flight at the stop.
    assert!(received >= sent / 2, "received {received} of {sent}");

    let up = seq_sink(Faults::default());
    let _d2 = Daemon::start(opts(&up));
    let report = settle(&up, received, Duration::from_secs(120));
    assert_eq!(report.distinct, received, "{report:?}");
}

#[test]
fn sigterm_with_hec_down_stops_at_once_in_normal_mode() {
    let _heavy = sluice_suite::heavy();
    sigterm_with_hec_down_stops_at_once(false);
}

#[test]
fn sigterm_with_hec_down_stops_at_once_in_reliable_mode() {
    let _heavy = sluice_suite::heavy();
    sigterm_with_hec_down_stops_at_once(true);
}

/// The other side of issue 24's stop: HEC up, a buffer on, SIGTERM right after 100,000
/// events. A healthy output is not cut short: the drain delivers what is in flight and on
/// disk before the exit, as without the fast stop, and the log does not claim it failing.
#[test]
fn sigterm_with_hec_up_and_a_buffer_drains_before_the_exit() {
    let _heavy = sluice_suite::heavy();
    let buffer = tempfile::tempdir().unwrap();
    let up = seq_sink(Faults::default());
    let mut d = Daemon::start(DaemonOpts::default().hec(&up).env(
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR",
        buffer.path().display().to_string(),
    ));
    let Stopped {
        sent,
        took,
        log,
        received,
    } = send_then_sigterm(&mut d);
    assert!(
        !log.contains("the output is failing"),
        "a healthy output is drained, not cut short: {log}"
    );
    eprintln!("HEC up, buffer on: sent {sent}, received {received}; SIGTERM to exit {took:?}");
    assert!(
        took < Duration::from_secs(30),
        "within the drain timeout: {took:?}"
    );
    // Delivered before the exit: nothing is left for a next start.
    let report = settle(&up, received, Duration::from_secs(5));
    assert_eq!(report.distinct, received, "{report:?}");
}

/// A buffer directory that cannot be written is a startup error naming the variable; a
/// second sluice on the same directory is refused.
#[test]
fn an_unusable_buffer_directory_is_a_startup_error_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let sink = seq_sink(Faults::default());
    let out = Command::new(sluice_suite::sluice_bin())
        .arg("run")
        .env(
            "SC4S_LISTEN_DEFAULT_UDP_PORT",
            sluice_suite::free_port().to_string(),
        )
        .env("SC4S_LISTEN_DEFAULT_TCP_PORT", "disabled")
        .env("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled")
        .env("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled")
        .env("SC4S_LISTEN_STATUS_PORT", "0")
        .env("SLUICE_LISTEN_LOCK_DIR", dir.path().join("locks"))
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", sink.base_url())
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", sink.token())
        .env(
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR",
            file.join("buffer"),
        )
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR"),
        "{err}"
    );

    let shared = dir.path().join("shared");
    let first = Daemon::start(DaemonOpts::default().hec(&sink).env(
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR",
        shared.display(),
    ));
    let out = Command::new(sluice_suite::sluice_bin())
        .arg("run")
        .env(
            "SC4S_LISTEN_DEFAULT_UDP_PORT",
            sluice_suite::free_port().to_string(),
        )
        .env("SC4S_LISTEN_DEFAULT_TCP_PORT", "disabled")
        .env("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled")
        .env("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled")
        .env("SC4S_LISTEN_STATUS_PORT", "0")
        .env("SLUICE_LISTEN_LOCK_DIR", dir.path().join("locks2"))
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", sink.base_url())
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", sink.token())
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", &shared)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("in use by another process") && err.contains(&first.pid().to_string()),
        "{err}"
    );
}
