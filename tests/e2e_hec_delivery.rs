//! HEC delivery a Splunk admin can trust, end to end: the real daemon on real sockets against
//! the HEC stand-in. Indexer acknowledgement with lost requests, bad events isolated into the
//! dead-letter file, a slow HEC, and failover between two URLs with per-URL metrics.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, Faults, SinkConfig, SinkHandle, loggen};

fn hec_sink(faults: Faults, ack: bool) -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        faults,
        indexer_ack: ack,
        threads: 2,
        ..SinkConfig::default()
    })
    .expect("start the HEC sink")
}

/// Waits until the sink has `n` distinct sequence numbers (duplicates do not count).
fn wait_distinct(sink: &SinkHandle, n: u64, timeout: Duration, d: &Daemon) {
    let end = Instant::now() + timeout;
    loop {
        let rep = sink.seq_report(None);
        if rep.distinct >= n {
            return;
        }
        assert!(
            Instant::now() < end,
            "sink has {} of {n} distinct events; log:\n{}",
            rep.distinct,
            d.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn lost_requests_are_resent_on_ack_timeout_and_every_udp_event_is_indexed() {
    let _heavy = sluice_suite::heavy();
    const N: u64 = 100_000;
    // Every 7th request is answered with an ackId but never indexed.
    let sink = hec_sink(
        Faults {
            lose_every: Some(7),
            ..Faults::default()
        },
        true,
    );
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SLUICE_HEC_INDEXER_ACK", "yes")
            .env("SLUICE_HEC_ACK_POLL_INTERVAL", 100)
            .env("SLUICE_HEC_ACK_TIMEOUT", 1)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", 1000),
    );
    let sent = loggen(&[
        "-i",
        "-D",
        "-r",
        "20000",
        "-n",
        &N.to_string(),
        "-s",
        "400",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    assert_eq!(sent, N);
    wait_distinct(&sink, N, Duration::from_secs(120), &d);
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_hec_ack_pending", &[]) == 0.0
    });
    std::thread::sleep(Duration::from_millis(300));
    let rep = sink.seq_report(Some(N));
    assert_eq!(rep.missing, 0, "{rep:?}");
    assert!(
        rep.duplicates * 100 <= N * 5,
        "duplicates {} over 5%",
        rep.duplicates
    );
    let st = sink.stats();
    assert!(st.lost_requests > 0, "the fault fired");
    let timed_out = m.sum("sluice_hec_ack_requests_total", &["outcome=\"timed_out\""]);
    assert_eq!(
        timed_out, st.lost_requests as f64,
        "each lost request timed out"
    );
    assert_eq!(
        m.sum("sluice_hec_ack_events_total", &["outcome=\"resent\""]),
        st.lost_events as f64
    );
    assert_eq!(
        m.sum("sluice_hec_ack_events_total", &["outcome=\"acked\""]),
        N as f64
    );
    assert_eq!(m.sum("sluice_delivered_total", &[]), N as f64);
    eprintln!(
        "ack, every 7th request lost: {N} events, {} lost requests ({} events) resent, \
         {} duplicates, {} ack queries",
        st.lost_requests, st.lost_events, rep.duplicates, st.ack_queries
    );
}

#[test]
fn bad_tcp_events_are_dead_lettered_and_every_good_one_delivered_once() {
    let _heavy = sluice_suite::heavy();
    const GOOD: u64 = 20_000;
    let sink = hec_sink(
        Faults {
            reject_event_marker: Some("BADEVT".into()),
            ..Faults::default()
        },
        false,
    );
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    );
    let mut body = Vec::new();
    for seq in 0..GOOD {
        writeln!(
            body,
            "<13>Nov 26 09:00:00 host01 app[1234]: seq: {seq:010}, thread: 0000, runid: 5, stamp: x"
        )
        .unwrap();
        if matches!(seq, 100 | 7_000 | 7_001) {
            writeln!(
                body,
                "<13>Nov 26 09:00:00 host01 app[1234]: BADEVT after {seq}"
            )
            .unwrap();
        }
    }
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    s.write_all(&body).unwrap();
    drop(s);
    wait_distinct(&sink, GOOD, Duration::from_secs(60), &d);
    // The sink counts an event before it answers; sluice counts it delivered after the answer.
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_dropped_total", &["reason=\"hec_rejected\""]) == 3.0
            && m.sum("sluice_delivered_total", &[]) >= GOOD as f64
    });
    std::thread::sleep(Duration::from_millis(300));
    let rep = sink.seq_report(Some(GOOD));
    assert_eq!((rep.missing, rep.duplicates), (0, 0), "{rep:?}");
    assert_eq!(sink.accepted_events(), GOOD, "nothing else indexed");
    assert_eq!(
        m.sum(
            "sluice_hec_rejected_total",
            &["reason=\"invalid_data_format\""]
        ),
        3.0
    );
    assert_eq!(m.sum("sluice_delivered_total", &[]), GOOD as f64);
    let file = d.dir.join("dead-letter").join("hec_rejected.jsonl");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    for (l, after) in lines.iter().zip([100, 7_000, 7_001]) {
        let ev = l["event"]["event"].as_str().unwrap();
        assert!(ev.ends_with(&format!("BADEVT after {after}")), "{ev}");
        assert_eq!(l["code"], 6);
        assert_eq!(l["status"], 400);
    }
    let resent = m.sum("sluice_hec_isolation_events_resent_total", &[]);
    eprintln!(
        "400 isolation: {GOOD} good + 3 bad over TCP: {GOOD} delivered once, 3 dead-lettered, \
         {resent} events resent, {} refused requests",
        sink.stats()
            .rejected(sluice_suite::RejectReason::FaultEvent)
    );
    assert!(d.log().contains("dead-letter"), "the refusal is logged");
}

#[test]
fn a_hec_answering_after_twice_the_timeout_duplicates_at_most_a_batch_per_worker() {
    let _heavy = sluice_suite::heavy();
    const N: u64 = 20_000;
    const WORKERS: u64 = 4;
    const BATCH: u64 = 1_000;
    let sink = hec_sink(
        Faults {
            delay: Some(Duration::from_secs(2)),
            ..Faults::default()
        },
        false,
    );
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TIMEOUT", 1)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", WORKERS)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", BATCH),
    );
    let sent = loggen(&[
        "-i",
        "-S",
        "-r",
        "20000",
        "-n",
        &N.to_string(),
        "-s",
        "400",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    assert_eq!(sent, N);
    wait_distinct(&sink, N, Duration::from_secs(120), &d);
    let m = d.wait_metrics(Duration::from_secs(60), |m| {
        m.sum("sluice_delivered_total", &[]) == N as f64
    });
    std::thread::sleep(Duration::from_millis(500));
    let rep = sink.seq_report(Some(N));
    assert_eq!(rep.missing, 0);
    let timeouts = m.sum("sluice_hec_requests_total", &["outcome=\"timeout\""]);
    eprintln!(
        "slow HEC (answers after 2x the 1 s timeout): {N} events, {} duplicates, \
         {timeouts} timed-out requests, {} latency splits",
        rep.duplicates,
        m.sum("sluice_hec_latency_splits_total", &[])
    );
    assert!(
        rep.duplicates <= WORKERS * BATCH,
        "{} duplicates > one batch per worker",
        rep.duplicates
    );
    assert!(timeouts <= WORKERS as f64, "one timeout per worker at most");
}

#[test]
fn one_of_two_urls_going_down_fails_over_without_loss_and_shows_per_url() {
    let _heavy = sluice_suite::heavy();
    const N: u64 = 30_000;
    let a = hec_sink(Faults::default(), false);
    let b = hec_sink(Faults::default(), false);
    let d = Daemon::start(
        DaemonOpts::default()
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
                format!("{},{}", a.base_url(), b.base_url()),
            )
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", a.token())
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", 500),
    );
    let port = d.port.to_string();
    let sender = std::thread::spawn(move || {
        loggen(&[
            "-i",
            "-S",
            "-r",
            "10000",
            "-n",
            "30000",
            "-s",
            "300",
            "127.0.0.1",
            &port,
        ])
    });
    // A goes down a second into the run (503 to events and health checks) for 2 s.
    std::thread::sleep(Duration::from_secs(1));
    a.update_faults(|f| f.busy_until = Some(Instant::now() + Duration::from_secs(2)));
    assert_eq!(sender.join().unwrap(), N);
    let end = Instant::now() + Duration::from_secs(60);
    while a.seq_report(None).distinct + b.seq_report(None).distinct < N {
        assert!(
            Instant::now() < end,
            "not everything arrived; log:\n{}",
            d.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let total = a.accepted_events() + b.accepted_events();
    assert_eq!(total, N, "no loss and no duplicate across the two");
    let url_a = format!("url=\"{}\"", a.event_url());
    let url_b = format!("url=\"{}\"", b.event_url());
    let m = d.wait_metrics(Duration::from_secs(20), |m| {
        m.sum("sluice_hec_url_up", &[&url_a]) == 1.0
    });
    assert_eq!(m.sum("sluice_hec_url_up", &[&url_b]), 1.0);
    let busy = a.stats().rejected(sluice_suite::RejectReason::FaultBusy);
    assert!(busy > 0, "A refused requests while down");
    assert_eq!(
        m.sum("sluice_hec_url_requests_total", &[&url_a, "class=\"5xx\""]),
        busy as f64
    );
    assert!(m.sum("sluice_hec_url_failovers_total", &[&url_a]) >= 1.0);
    assert!(m.sum("sluice_hec_url_transitions_total", &[&url_a, "to=\"out\""]) >= 1.0);
    assert!(m.sum("sluice_hec_url_transitions_total", &[&url_a, "to=\"in\""]) >= 1.0);
    assert_eq!(m.sum("sluice_hec_url_failovers_total", &[&url_b]), 0.0);
    for u in [&url_a, &url_b] {
        let t = m.sum("sluice_hec_url_last_success_timestamp_seconds", &[u]);
        assert!(t > 1.7e9, "{u}: {t}");
    }
    assert_eq!(m.sum("sluice_delivered_total", &[]), N as f64);
}

#[test]
fn an_unwritable_dead_letter_directory_stops_startup_with_its_name() {
    let sink = hec_sink(Faults::default(), false);
    let dir = std::env::temp_dir().join(format!("sluice-e2e-dl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("file"), b"x").unwrap();
    let bad = dir.join("file").join("dl");
    let out = std::process::Command::new(sluice_suite::sluice_bin())
        .arg("run")
        .current_dir(&dir)
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", sink.base_url())
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", sink.token())
        .env("SLUICE_HEC_DEAD_LETTER_DIR", &bad)
        .env(
            "SC4S_LISTEN_DEFAULT_UDP_PORT",
            sluice_suite::free_port().to_string(),
        )
        .env(
            "SC4S_LISTEN_DEFAULT_TCP_PORT",
            sluice_suite::free_port().to_string(),
        )
        .env("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled")
        .env("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled")
        .env("SC4S_LISTEN_STATUS_PORT", "0")
        .env("SLUICE_LISTEN_ADDRESS", "127.0.0.1")
        .env("SLUICE_LISTEN_LOCK_DIR", dir.join("locks"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&bad.display().to_string()) && err.contains("dead-letter"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sluice_counters_reach_the_metrics_index_in_the_sc4s_dashboard_shape() {
    let sink = SinkHandle::spawn_thread(SinkConfig {
        record: true,
        ..SinkConfig::default()
    })
    .expect("start the HEC sink");
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SC4S_DEST_SPLUNK_SC4S_METRICS_HEC", "multi2")
            .env("SLUICE_HEC_METRICS_INTERVAL", 1)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SC4S_CONTAINER_HOST", "sc4s-e2e"),
    );
    let lines: Vec<Vec<u8>> = (0..50)
        .map(|i| format!("<13>Nov 26 09:00:00 host01 prog: metrics test {i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    sluice_suite::send_udp(d.udp_addr(), &refs);
    let end = Instant::now() + Duration::from_secs(30);
    let metric = loop {
        let found = sink.events().into_iter().find(|e| {
            e["index"] == "_metrics"
                && e["fields"]["metric_name:spl.sc4syslog.center.received.processed"]
                    .as_f64()
                    .is_some_and(|n| n >= 50.0)
        });
        if let Some(e) = found {
            break e;
        }
        assert!(Instant::now() < end, "no metrics event; log:\n{}", d.log());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(metric["sourcetype"], "sc4s:metrics:v2");
    assert_eq!(metric["event"], "metric");
    assert_eq!(metric["fields"]["sc4s_loghost"], "sc4s-e2e");
    assert!(metric["fields"]["sc4s_container"].is_string());
    let dst = sink
        .events()
        .into_iter()
        .find(|e| e["index"] == "_metrics" && e["fields"]["module"] == "http")
        .expect("a destination metrics event");
    assert!(dst["fields"]["metric_name:spl.sc4syslog.dst.dropped"].is_number());
    assert!(dst["fields"]["metric_name:spl.sc4syslog.dst.queued"].is_number());
    assert_eq!(dst["fields"]["name"], "d_hec_fmt");
}

/// `GOOD` generic syslog events (index osnix, sequence-numbered) with `ASA` Cisco ASA events
/// (index netfw) among them, over TCP, to a HEC that has no index netfw (400, code 7).
fn missing_index_run(fallback: bool) -> (Daemon, SinkHandle) {
    const GOOD: u64 = 5_000;
    let sink = SinkHandle::spawn_thread(SinkConfig {
        faults: Faults {
            reject_index: Some("netfw".into()),
            ..Faults::default()
        },
        record: true,
        threads: 2,
        ..SinkConfig::default()
    })
    .expect("start the HEC sink");
    let mut opts = DaemonOpts::default()
        .hec(&sink)
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50);
    if fallback {
        opts = opts.env(
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_FALLBACK_INDEX",
            "sc4s_fallback",
        );
    }
    let d = Daemon::start(opts);
    let mut body = Vec::new();
    for seq in 0..GOOD {
        writeln!(
            body,
            "<13>Nov 26 09:00:00 host01 app[1234]: seq: {seq:010}, thread: 0000, runid: 5, stamp: x"
        )
        .unwrap();
        if seq % 1_000 == 10 || seq == 11 {
            writeln!(
                body,
                "<166>Mar  5 12:28:50 asa-fw1 : %ASA-6-302013: Built outbound TCP connection \
                 {seq} for outside:198.51.100.1/443 (198.51.100.1/443) to \
                 inside:192.168.1.10/53211 (203.0.113.10/53211)"
            )
            .unwrap();
        }
    }
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    s.write_all(&body).unwrap();
    drop(s);
    wait_distinct(&sink, GOOD, Duration::from_secs(60), &d);
    (d, sink)
}

/// The events refused for their index in the run above: 6 ASA events.
const ASA: u64 = 6;

#[test]
fn events_refused_for_their_index_go_to_the_fallback_index_with_the_original_kept() {
    let _heavy = sluice_suite::heavy();
    let (d, sink) = missing_index_run(true);
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_delivered_total", &[]) == (5_000 + ASA) as f64
    });
    std::thread::sleep(Duration::from_millis(300));
    let rep = sink.seq_report(Some(5_000));
    assert_eq!((rep.missing, rep.duplicates), (0, 0), "{rep:?}");
    let events = sink.events();
    let asa: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["sourcetype"] == "cisco:asa")
        .collect();
    assert_eq!(asa.len() as u64, ASA, "each ASA event indexed once");
    for e in &asa {
        assert_eq!(e["index"], "sc4s_fallback", "{e}");
        assert_eq!(e["fields"]["sc4s_original_index"], "netfw", "{e}");
        assert_eq!(e["fields"]["sc4s_vendor"], "cisco", "{e}");
    }
    assert!(
        events
            .iter()
            .filter(|e| e["sourcetype"] != "cisco:asa")
            .all(|e| e["index"] == "osnix" && e["fields"].get("sc4s_original_index").is_none()),
        "the good events are untouched"
    );
    assert_eq!(sink.accepted_events(), 5_000 + ASA);
    assert_eq!(
        m.sum("sluice_hec_fallback_index_events_total", &[]),
        ASA as f64
    );
    assert_eq!(m.sum("sluice_hec_rejected_total", &[]), 0.0);
    assert_eq!(
        m.sum("sluice_dropped_total", &["reason=\"hec_rejected\""]),
        0.0
    );
    let file = d.dir.join("dead-letter").join("hec_rejected.jsonl");
    let dead = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(dead.is_empty(), "nothing dead-lettered: {dead}");
    let log = d.log();
    assert!(
        log.contains("fallback index") && log.contains("netfw"),
        "the fallback is logged with the original index:\n{log}"
    );
    assert_eq!(
        log.matches("sending them to the fallback index").count(),
        1,
        "once per original index"
    );
}

#[test]
fn without_a_fallback_index_events_refused_for_their_index_are_dead_lettered() {
    let _heavy = sluice_suite::heavy();
    let (d, sink) = missing_index_run(false);
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_dropped_total", &["reason=\"hec_rejected\""]) == ASA as f64
    });
    std::thread::sleep(Duration::from_millis(300));
    let rep = sink.seq_report(Some(5_000));
    assert_eq!((rep.missing, rep.duplicates), (0, 0), "{rep:?}");
    assert_eq!(sink.accepted_events(), 5_000, "no ASA event indexed");
    assert_eq!(
        m.sum("sluice_hec_rejected_total", &["reason=\"incorrect_index\""]),
        ASA as f64
    );
    assert_eq!(m.sum("sluice_hec_fallback_index_events_total", &[]), 0.0);
    let file = d.dir.join("dead-letter").join("hec_rejected.jsonl");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len() as u64, ASA, "{text}");
    for l in &lines {
        assert_eq!(l["code"], 7);
        assert_eq!(l["event"]["index"], "netfw");
    }
}
