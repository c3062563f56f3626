//! Bad input on real sockets: every case is delivered (as SC4S's fallback event, or truncated
//! and counted), never dropped silently, never a crash.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use sluice_suite::RejectReason;
use sluice_suite::{Daemon, DaemonOpts, SinkHandle, sink};

fn daemon(sink: &SinkHandle) -> Daemon {
    Daemon::start(
        DaemonOpts::default()
            .hec(sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    )
}

/// Waits for `n` events and returns them.
fn events(sink: &SinkHandle, d: &Daemon, n: u64) -> Vec<serde_json::Value> {
    assert!(
        sink.wait_for(n, Duration::from_secs(30)),
        "sink got {} of {n}; log:\n{}",
        sink.accepted_events(),
        d.log()
    );
    let st = sink.stats();
    // The startup probe posts an empty body on purpose (Splunk answers "No data" to a valid
    // token); anything else refused is a bug in what sluice sent.
    assert_eq!(
        st.rejected_total() - st.rejected(RejectReason::NoData),
        0,
        "HEC refused something: {st:?}"
    );
    sink.events()
}

fn text(ev: &serde_json::Value) -> &str {
    ev["event"].as_str().expect("event is a string")
}

#[test]
fn empty_datagram_becomes_a_non_blank_fallback_event() {
    let s = sink();
    let d = daemon(&s);
    sluice_suite::send_udp(d.udp_addr(), &[b""]);
    let evs = events(&s, &d, 1);
    assert_eq!(evs[0]["sourcetype"], "sc4s:fallback");
    assert_eq!(evs[0]["index"], "main");
    assert_eq!(
        text(&evs[0]),
        "PRI=13\n",
        "HEC rejects blank events, so the PRI line stays"
    );
    assert_eq!(
        d.metrics()
            .sum("sluice_parsed_total", &["format=\"unparsed\""]),
        1.0
    );
}

#[test]
fn nul_bytes_are_kept_and_escaped() {
    let s = sink();
    let d = daemon(&s);
    sluice_suite::send_udp(
        d.udp_addr(),
        &[b"<13>Nov 22 10:00:00 host app: before\0after\0"],
    );
    let evs = events(&s, &d, 1);
    assert_eq!(
        text(&evs[0]),
        "app: before\u{0}after",
        "interior NUL kept, trailing NUL stripped"
    );
    assert_eq!(evs[0]["sourcetype"], "nix:syslog");
}

#[test]
fn invalid_utf8_is_delivered_with_replacement_characters() {
    let s = sink();
    let d = daemon(&s);
    sluice_suite::send_udp(
        d.udp_addr(),
        &[b"<13>Nov 22 10:00:00 host app: caf\xe9 \xff\xfe ok"],
    );
    let evs = events(&s, &d, 1);
    assert_eq!(text(&evs[0]), "app: caf\u{fffd} \u{fffd}\u{fffd} ok");
}

#[test]
fn a_65000_byte_datagram_arrives_whole() {
    let s = sink();
    let d = daemon(&s);
    let mut msg = b"<13>Nov 22 10:00:00 host app: ".to_vec();
    msg.resize(65_000, b'x');
    sluice_suite::send_udp(d.udp_addr(), &[&msg]);
    let evs = events(&s, &d, 1);
    let t = text(&evs[0]);
    assert_eq!(t.len(), 65_000 - "<13>Nov 22 10:00:00 host ".len());
    assert!(t.starts_with("app: xxx") && t.ends_with("xxx"));
    assert_eq!(d.metrics().sum("sluice_truncated_total", &[]), 0.0);
}

#[test]
fn garbage_pri_is_delivered_whole_as_fallback() {
    let s = sink();
    let d = daemon(&s);
    sluice_suite::send_udp(d.udp_addr(), &[b"<999>hello", b"<abc>x y", b"<13"]);
    let mut evs = events(&s, &d, 3);
    evs.sort_by(|a, b| text(a).cmp(text(b)));
    let texts: Vec<&str> = evs.iter().map(text).collect();
    assert_eq!(
        texts,
        [
            "PRI=13\nMESSAGE=<13\n",
            "PRI=13\nMESSAGE=<999>hello\n",
            "PRI=13\nMESSAGE=<abc>x y\n"
        ]
    );
    for ev in &evs {
        assert_eq!(ev["sourcetype"], "sc4s:fallback");
    }
    assert_eq!(
        d.metrics()
            .sum("sluice_parsed_total", &["format=\"unparsed\""]),
        3.0
    );
}

#[test]
fn a_1mib_tcp_line_is_truncated_counted_and_the_connection_resyncs() {
    let s = sink();
    let d = daemon(&s);
    let mut c = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    let mut big = b"<13>Nov 22 10:00:00 host app: ".to_vec();
    big.resize(1 << 20, b'y');
    big.push(b'\n');
    c.write_all(&big).unwrap();
    c.write_all(b"<13>Nov 22 10:00:01 host app: after the big one\n")
        .unwrap();
    let evs = events(&s, &d, 2);
    let mut texts: Vec<&str> = evs.iter().map(text).collect();
    texts.sort_by_key(|t| t.len());
    assert_eq!(texts[0], "app: after the big one");
    assert_eq!(
        texts[1].len(),
        65_536 - "<13>Nov 22 10:00:00 host ".len(),
        "cut to 64 KiB"
    );
    let m = d.metrics();
    assert_eq!(m.sum("sluice_truncated_total", &["transport=\"tcp\""]), 1.0);
    assert_eq!(
        m.sum("sluice_tcp_frames_total", &["kind=\"truncated\""]),
        1.0
    );
    assert_eq!(
        m.sum("sluice_tcp_discarded_bytes_total", &[]),
        ((1 << 20) - 65_536 + 1) as f64,
        "the rest of the line, through its LF, is skipped and counted"
    );
}

#[test]
fn a_connection_that_sends_half_a_frame_and_hangs_has_it_delivered() {
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            // 2 s, not 1: a connection first polled a whole deadline after its accept could
            // see the deadline before the bytes already waiting.
            .toml("[tcp]\nframe_timeout = 2\n"),
    );
    // An LF-framed line without its LF, and an octet-counted frame cut short.
    let mut a = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    a.write_all(b"<13>Nov 22 10:00:00 host app: half a line")
        .unwrap();
    let mut b = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    b.write_all(b"100 <13>Nov 22 10:00:00 host app: short frame")
        .unwrap();
    let evs = events(&s, &d, 2);
    let mut texts: Vec<&str> = evs.iter().map(text).collect();
    texts.sort();
    assert_eq!(texts, ["app: half a line", "app: short frame"]);
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_tcp_closed_total", &["reason=\"frame_timeout\""]) == 2.0
    });
    assert_eq!(m.sum("sluice_tcp_frames_total", &["kind=\"partial\""]), 2.0);
    drop((a, b));
}

#[test]
fn unreachable_hec_at_startup_keeps_messages_until_it_comes_back() {
    let port = sluice_suite::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let d = Daemon::start(
        DaemonOpts::default()
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", &url)
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN",
                "00000000-0000-0000-0000-000000000000",
            )
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    );
    let log = d.log();
    assert!(
        log.contains("unreachable") && log.contains("kept in memory"),
        "a clear startup line about HEC:\n{log}"
    );
    let msgs: Vec<Vec<u8>> = (0..200)
        .map(|i| format!("<13>Nov 22 10:00:00 h app: m{i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    sluice_suite::send_udp(d.udp_addr(), &refs);
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_received_total", &[]) == 200.0
    });
    d.wait_metrics(Duration::from_secs(15), |_| d.http_get("/health").0 == 503);
    std::thread::sleep(Duration::from_secs(1));
    // HEC comes back on the same port.
    let s = sluice_suite::SinkHandle::spawn_thread(sluice_suite::SinkConfig {
        addr: ([127, 0, 0, 1], port).into(),
        record: true,
        ..Default::default()
    })
    .unwrap();
    let evs = events(&s, &d, 200);
    assert_eq!(evs.len(), 200);
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_delivered_total", &[]) == 200.0
    });
    assert!(
        m.sum("sluice_retried_total", &["reason=\"connect\""]) > 0.0,
        "{m:?}"
    );
    d.wait_metrics(Duration::from_secs(30), |_| d.http_get("/health").0 == 200);
}

#[test]
fn a_wrong_token_holds_events_and_reports_unhealthy() {
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", s.base_url())
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "wrong-token")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    );
    assert!(
        d.log().contains("token"),
        "startup names the token problem:\n{}",
        d.log()
    );
    sluice_suite::send_udp(d.udp_addr(), &[b"<13>Nov 22 10:00:00 h app: kept"]);
    let m = d.wait_metrics(Duration::from_secs(15), |m| {
        m.sum("sluice_retried_total", &["reason=\"http_403\""]) > 0.0
    });
    assert_eq!(
        m.sum("sluice_window_events", &[]) + m.sum("sluice_buffer_events", &[]),
        1.0,
        "the event is held (in the window, or in the disk buffer), not dropped"
    );
    assert_eq!(s.accepted_events(), 0);
    d.wait_metrics(Duration::from_secs(15), |_| d.http_get("/health").0 == 503);
}
