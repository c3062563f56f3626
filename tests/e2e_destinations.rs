//! Several destinations end to end: the sluice binary on real sockets, two HEC stand-ins.
//!
//! * SELECT alternates (issue 12, scenario 6): events routed by vendor_product arrive at the
//!   right destination only; filtered alternates replace the normal destinations.
//! * A GLOBAL second destination gets every event.
//! * One destination refuses (503) for a while: the other keeps delivering, and once it
//!   recovers neither has lost anything (its disk buffer held its share).
//! * With the disk buffer and indexer ack on, a batch leaves the buffer only when acked.
//! * The archive writes SC4S's compliance layout.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, Faults, SinkConfig, SinkHandle};

fn recording_sink(faults: Faults, ack: bool) -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        record: true,
        track_seq: true,
        faults,
        indexer_ack: ack,
        ..SinkConfig::default()
    })
    .expect("start the HEC sink")
}

/// `n` Linux syslog lines (vendor nix) with loggen-style sequence numbers from `first` (not
/// loggen's own PROGRAM `prg00000`, which SC4S calls `syslogng:loggen`).
fn nix_lines(first: u64, n: u64) -> Vec<String> {
    (first..first + n)
        .map(|seq| {
            format!(
                "<13>Nov 26 09:00:00 host01 app[1234]: seq: {seq:010}, thread: 0000, runid: 5, stamp: x"
            )
        })
        .collect()
}

/// `n` Cisco ASA lines at syslog priority `pri` (166: info, 167: debug), each with its own
/// connection number from `first`.
fn asa_lines(pri: u8, first: u64, n: u64) -> Vec<String> {
    (first..first + n)
        .map(|c| {
            format!(
                "<{pri}>Mar  5 12:28:50 asa-fw1 : %ASA-6-302013: Built outbound TCP connection \
                 {c} for outside:198.51.100.1/443 (198.51.100.1/443) to inside:192.168.1.10/53211 \
                 (203.0.113.10/53211)"
            )
        })
        .collect()
}

fn send_tcp(d: &Daemon, lines: &[String]) {
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    let mut body = String::new();
    for l in lines {
        body.push_str(l);
        body.push('\n');
    }
    s.write_all(body.as_bytes()).unwrap();
}

fn wait_events(sink: &SinkHandle, n: u64, timeout: Duration, d: &Daemon, what: &str) {
    assert!(
        sink.wait_for(n, timeout),
        "{what}: {} of {n} events arrived; log:\n{}",
        sink.accepted_events(),
        d.log()
    );
}

fn is_asa(e: &serde_json::Value) -> bool {
    e["sourcetype"] == "cisco:asa"
}

/// Two HEC destinations: the default one and `OTHER`, with `extra` settings.
fn two_destinations(a: &SinkHandle, b: &SinkHandle, extra: &[(&str, &str)]) -> DaemonOpts {
    let mut o = DaemonOpts::default()
        .hec(a)
        .env("SC4S_DEST_SPLUNK_HEC_OTHER_URL", b.base_url())
        .env("SC4S_DEST_SPLUNK_HEC_OTHER_TOKEN", b.token())
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
        .env("SC4S_DEST_SPLUNK_HEC_OTHER_BATCH_TIMEOUT", 50);
    for (k, v) in extra {
        o = o.env(k, v);
    }
    o
}

#[test]
fn select_alternates_route_events_by_vendor_product_to_the_right_destination_only() {
    let (a, b) = (
        recording_sink(Faults::default(), false),
        recording_sink(Faults::default(), false),
    );
    let d = Daemon::start(two_destinations(
        &a,
        &b,
        &[
            ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT"),
            ("SC4S_DEST_CISCO_ASA_ALTERNATES", "d_hec_fmt_other"),
        ],
    ));
    const N: u64 = 2_000;
    let mut lines = nix_lines(0, N);
    lines.extend(asa_lines(166, 0, N));
    send_tcp(&d, &lines);
    wait_events(&a, 2 * N, Duration::from_secs(60), &d, "default");
    wait_events(&b, N, Duration::from_secs(60), &d, "other");
    // Nothing more comes.
    std::thread::sleep(Duration::from_millis(500));
    let (ea, eb) = (a.events(), b.events());
    assert_eq!(
        ea.len() as u64,
        2 * N,
        "the default destination gets everything once"
    );
    assert_eq!(ea.iter().filter(|e| is_asa(e)).count() as u64, N);
    assert_eq!(eb.len() as u64, N, "OTHER gets the Cisco ASA events only");
    assert!(
        eb.iter().all(is_asa),
        "{:?}",
        eb.iter().find(|e| !is_asa(e))
    );
    // Every ASA event exactly once at OTHER.
    let mut conns: Vec<String> = eb
        .iter()
        .map(|e| {
            let t = e["event"].as_str().unwrap();
            t.split("connection ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    conns.sort();
    conns.dedup();
    assert_eq!(conns.len() as u64, N);

    // Counted delivered after the sinks' answers, which they give after counting.
    let delivered = |m: &sluice_suite::Metrics, dest: &str| {
        m.sum(
            "sluice_delivered_total",
            &[&format!("destination=\"{dest}\"")],
        )
    };
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        delivered(m, "default") >= (2 * N) as f64 && delivered(m, "other") >= N as f64
    });
    for (dest, n) in [("default", 2 * N), ("other", N)] {
        assert_eq!(
            m.sum(
                "sluice_delivered_total",
                &[&format!("destination=\"{dest}\"")]
            ),
            n as f64,
            "{dest}"
        );
    }
    assert_eq!(
        m.sum("sluice_dropped_total", &["reason=\"no_destination\""]),
        0.0
    );
}

#[test]
fn filtered_alternates_replace_the_normal_destinations_for_matching_events() {
    let (a, b) = (
        recording_sink(Faults::default(), false),
        recording_sink(Faults::default(), false),
    );
    // Cisco ASA debug events go to OTHER only; the others stay on the default destination.
    let d = Daemon::start(two_destinations(
        &a,
        &b,
        &[
            ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT"),
            ("SC4S_DEST_CISCO_ASA_ALT_FILTER", "level(debug)"),
            ("SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES", "d_hec_fmt_other"),
        ],
    ));
    const N: u64 = 500;
    let mut lines = asa_lines(167, 0, N);
    lines.extend(asa_lines(166, N, N));
    lines.extend(nix_lines(0, N));
    send_tcp(&d, &lines);
    wait_events(&a, 2 * N, Duration::from_secs(60), &d, "default");
    wait_events(&b, N, Duration::from_secs(60), &d, "other");
    std::thread::sleep(Duration::from_millis(500));
    let debug = |e: &serde_json::Value| {
        let c: u64 = e["event"]
            .as_str()
            .and_then(|t| t.split("connection ").nth(1))
            .and_then(|t| t.split(' ').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or(u64::MAX);
        is_asa(e) && c < N
    };
    let (ea, eb) = (a.events(), b.events());
    assert_eq!(ea.len() as u64, 2 * N);
    assert!(
        !ea.iter().any(debug),
        "a debug ASA event reached the default destination"
    );
    assert_eq!(eb.len() as u64, N);
    assert!(
        eb.iter().all(debug),
        "OTHER got an event the filter does not match"
    );
}

#[test]
fn a_global_second_destination_gets_every_event() {
    let (a, b) = (
        recording_sink(Faults::default(), false),
        recording_sink(Faults::default(), false),
    );
    // OTHER batches by its own settings: at most 100 events per request.
    let d = Daemon::start(two_destinations(
        &a,
        &b,
        &[
            ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "GLOBAL"),
            ("SC4S_DEST_SPLUNK_HEC_OTHER_BATCH_LINES", "100"),
        ],
    ));
    const N: u64 = 3_000;
    let mut lines = nix_lines(0, N);
    lines.extend(asa_lines(166, 0, 100));
    send_tcp(&d, &lines);
    for (sink, name) in [(&a, "default"), (&b, "other")] {
        wait_events(sink, N + 100, Duration::from_secs(60), &d, name);
    }
    std::thread::sleep(Duration::from_millis(500));
    for sink in [&a, &b] {
        let rep = sink.seq_report(None);
        assert_eq!((rep.distinct, rep.duplicates), (N, 0));
        assert_eq!(sink.accepted_events(), N + 100);
    }
    let requests = b.stats().accepted_requests;
    assert!(
        requests >= (N + 100) / 100,
        "OTHER got {requests} requests for {} events with BATCH_LINES=100",
        N + 100
    );
}

#[test]
fn one_destination_down_does_not_stall_the_other_and_neither_loses_anything() {
    let _heavy = sluice_suite::heavy();
    // OTHER refuses every request (503) until the test lets it recover.
    let a = recording_sink(Faults::default(), false);
    let b = recording_sink(
        Faults {
            busy_until: Some(Instant::now() + Duration::from_secs(3600)),
            ..Faults::default()
        },
        false,
    );
    let d = Daemon::start(two_destinations(&a, &b, &[]));
    const ROUNDS: u64 = 10;
    const PER: u64 = 5_000;
    // Much more than the small TCP window would hold if OTHER's share waited in memory.
    for r in 0..ROUNDS {
        send_tcp(&d, &nix_lines(r * PER, PER));
    }
    let n = ROUNDS * PER;
    let t = Instant::now();
    wait_events(
        &a,
        n,
        Duration::from_secs(60),
        &d,
        "default while OTHER is down",
    );
    eprintln!(
        "default destination: {n} events in {:?} with OTHER down",
        t.elapsed()
    );
    assert_eq!(b.accepted_events(), 0, "OTHER is still refusing");
    // OTHER's share waits in its own disk buffer; the default destination's is empty (a
    // batch it spilled while briefly behind leaves the buffer after HEC's answer).
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_buffer_events", &["destination=\"other\""]) > 0.0
            && m.sum("sluice_buffer_events", &["destination=\"default\""]) == 0.0
    });
    assert!(m.sum("sluice_buffer_events", &["destination=\"other\""]) > 0.0);
    // /health stays up (the default destination delivers) and names the one that does not.
    let (code, body) = d.http_get("/health");
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains("destination other: cannot deliver to Splunk HEC"),
        "{body}"
    );

    // OTHER recovers: it gets everything from its buffer.
    b.update_faults(|f| f.busy_until = None);
    let t = Instant::now();
    wait_events(&b, n, Duration::from_secs(120), &d, "OTHER after recovery");
    eprintln!("OTHER: {n} events {:?} after it recovered", t.elapsed());
    std::thread::sleep(Duration::from_millis(500));
    for (sink, name) in [(&a, "default"), (&b, "other")] {
        let rep = sink.seq_report(None);
        assert_eq!(rep.distinct, n, "{name} lost events");
        eprintln!("{name}: {} duplicates", rep.duplicates);
    }
    assert_eq!(a.seq_report(None).duplicates, 0);
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_buffer_events", &["destination=\"other\""]) == 0.0
    });
    assert_eq!(
        m.sum("sluice_delivered_total", &["destination=\"other\""]),
        n as f64
    );
    let mut d = d;
    let t = Instant::now();
    assert!(d.terminate().success(), "log:\n{}", d.log());
    eprintln!("stopped in {:?}", t.elapsed());
}

#[test]
fn with_buffer_and_indexer_ack_a_batch_leaves_the_buffer_only_when_acked() {
    let _heavy = sluice_suite::heavy();
    let buffer = tempfile::tempdir().unwrap();
    let buffer_dir = buffer.path().join("buffer");
    // Reliable mode: every batch goes through the buffer. The stand-in answers every request
    // with an ackId and indexes nothing, so every ack stays false.
    let sink = recording_sink(
        Faults {
            lose_every: Some(1),
            ..Faults::default()
        },
        true,
    );
    let opts = |sink: &SinkHandle| {
        DaemonOpts::default()
            .hec(sink)
            .env("SLUICE_HEC_INDEXER_ACK", "yes")
            .env("SLUICE_HEC_ACK_POLL_INTERVAL", 100)
            .env("SLUICE_HEC_ACK_TIMEOUT", 3600)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE", "yes")
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR",
                buffer_dir.display(),
            )
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
    };
    let d = Daemon::start(opts(&sink));
    const N: u64 = 1_000;
    send_tcp(&d, &nix_lines(0, N));
    // Sent and answered, never acknowledged: still in the buffer.
    let end = Instant::now() + Duration::from_secs(30);
    while !(sink.stats().ack_queries > 0 && sink.stats().lost_events >= N) {
        assert!(Instant::now() < end, "never sent; log:\n{}", d.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    // A few more polls, all answered false.
    std::thread::sleep(Duration::from_millis(500));
    let m2 = d.metrics();
    assert_eq!(
        m2.sum("sluice_buffer_events", &[]),
        N as f64,
        "unacknowledged events stay in the buffer"
    );
    assert_eq!(m2.sum("sluice_delivered_total", &[]), 0.0);
    drop(d); // kill -9: what is on disk is all there is

    // Restart on the same buffer against a stand-in that indexes and acknowledges.
    let good = recording_sink(Faults::default(), true);
    let d = Daemon::start(opts(&good));
    assert!(
        d.log()
            .contains("delivering what the disk buffer kept from the last run"),
        "log:\n{}",
        d.log()
    );
    wait_events(
        &good,
        N,
        Duration::from_secs(60),
        &d,
        "replay after restart",
    );
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_buffer_events", &[]) == 0.0
    });
    assert!(m.sum("sluice_hec_ack_events_total", &["outcome=\"acked\""]) >= N as f64);
    assert_eq!(good.seq_report(None).distinct, N);
}

#[test]
fn the_archive_writes_the_compliance_layout_under_sc4s_var() {
    let a = recording_sink(Faults::default(), false);
    let var = tempfile::tempdir().unwrap();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&a)
            .env("SC4S_VAR", var.path().display())
            .env("SC4S_DEST_CISCO_ASA_ARCHIVE", "yes")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    );
    let mut lines = asa_lines(166, 0, 50);
    lines.extend(nix_lines(0, 50));
    send_tcp(&d, &lines);
    wait_events(&a, 100, Duration::from_secs(60), &d, "default");
    let host_dir = var.path().join("archive/cisco:asa/asa-fw1");
    let end = Instant::now() + Duration::from_secs(30);
    let text = loop {
        let text: String = std::fs::read_dir(&host_dir)
            .map(|rd| {
                rd.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
                    .collect()
            })
            .unwrap_or_default();
        if text.lines().count() >= 50 || Instant::now() > end {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(text.lines().count(), 50, "log:\n{}", d.log());
    let files: Vec<_> = std::fs::read_dir(&host_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        files
            .iter()
            .all(|f| f.ends_with("-archive.log") && f.len() == "YYYY-MM-DD-archive.log".len()),
        "{files:?}"
    );
    // Only Cisco ASA is archived.
    let dirs: Vec<_> = std::fs::read_dir(var.path().join("archive"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(dirs, ["cisco:asa"]);
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["sourcetype"], "cisco:asa");
    }
}
