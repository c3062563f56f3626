//! The sink answered over real sockets, the way an HEC client sees it.

use std::io::Write;
use std::time::{Duration, Instant};

use sluice_bench::sink::client::RawClient;
use sluice_bench::{Faults, RejectReason, SinkConfig, SinkHandle};

const TOKEN: &str = "test-token";

fn sink(record: bool) -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        token: TOKEN.into(),
        record,
        threads: 1,
        ..SinkConfig::default()
    })
    .expect("sink starts")
}

fn auth() -> (&'static str, String) {
    ("Authorization", format!("Splunk {TOKEN}"))
}

fn post(c: &mut RawClient, path: &str, body: &[u8]) -> (u16, String) {
    let (k, v) = auth();
    let r = c.request("POST", path, &[(k, &v)], body).expect("answer");
    (r.status, r.text())
}

fn event(seq: u64) -> String {
    format!(
        r#"{{"time":"1710166925.000","host":"h","source":"sc4s","sourcetype":"nix:syslog","index":"osnix","event":"prg00000[1234]: seq: {seq:010}, thread: 0000, runid: 42, stamp: x","fields":{{"sc4s_vendor":"nix"}}}}"#
    )
}

fn body(range: std::ops::Range<u64>) -> Vec<u8> {
    range.map(event).collect::<Vec<_>>().join("\n").into_bytes()
}

#[test]
fn accepts_valid_events_and_records_them() {
    let s = sink(true);
    let mut c = RawClient::connect(s.addr()).unwrap();
    let (status, text) = post(&mut c, "/services/collector/event", &body(0..3));
    assert_eq!(
        (status, text.as_str()),
        (200, r#"{"text":"Success","code":0}"#)
    );
    // Same connection (keep-alive), other endpoint spelling, objects not separated.
    let concatenated = format!("{}{}", event(3), event(4));
    let (status, _) = post(
        &mut c,
        "/services/collector/event/1.0",
        concatenated.as_bytes(),
    );
    assert_eq!(status, 200);
    let st = s.stats();
    assert_eq!((st.accepted_requests, st.accepted_events), (2, 5));
    let evs = s.events();
    assert_eq!(evs.len(), 5);
    assert_eq!(evs[4]["index"], "osnix");
    assert_eq!(evs[4]["fields"]["sc4s_vendor"], "nix");
    let rep = s.seq_report(Some(5));
    assert_eq!((rep.distinct, rep.missing, rep.duplicates), (5, 0, 0));
}

#[test]
fn gzip_bodies_are_decoded() {
    let s = sink(false);
    let raw = body(0..100);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&raw).unwrap();
    let gz = enc.finish().unwrap();
    let mut c = RawClient::connect(s.addr()).unwrap();
    let (k, v) = auth();
    let r = c
        .request(
            "POST",
            "/services/collector/event",
            &[(k, &v), ("Content-Encoding", "gzip")],
            &gz,
        )
        .unwrap();
    assert_eq!(r.status, 200);
    let st = s.stats();
    assert_eq!(st.accepted_events, 100);
    assert_eq!(st.gzip_requests, 1);
    assert_eq!(st.bytes_received, gz.len() as u64);
    assert_eq!(st.bytes_decoded, raw.len() as u64);

    let r = c
        .request(
            "POST",
            "/services/collector/event",
            &[(k, &v), ("Content-Encoding", "gzip")],
            b"not gzip at all",
        )
        .unwrap();
    assert_eq!(r.status, 400);
    assert_eq!(s.stats().rejected(RejectReason::Gzip), 1);
}

#[test]
fn token_errors_match_hec() {
    let s = sink(false);
    let mut c = RawClient::connect(s.addr()).unwrap();
    let b = body(0..1);
    let r = c
        .request("POST", "/services/collector/event", &[], &b)
        .unwrap();
    assert_eq!(
        (r.status, r.text()),
        (401, r#"{"text":"Token is required","code":2}"#.into())
    );
    let r = c
        .request(
            "POST",
            "/services/collector/event",
            &[("Authorization", TOKEN)],
            &b,
        )
        .unwrap();
    assert_eq!(
        (r.status, r.text()),
        (401, r#"{"text":"Invalid authorization","code":3}"#.into())
    );
    let r = c
        .request(
            "POST",
            "/services/collector/event",
            &[("Authorization", "Splunk wrong")],
            &b,
        )
        .unwrap();
    assert_eq!(
        (r.status, r.text()),
        (403, r#"{"text":"Invalid token","code":4}"#.into())
    );
    let st = s.stats();
    assert_eq!(st.accepted_events, 0);
    assert_eq!(st.rejected_total(), 3);
}

#[test]
fn invalid_events_reject_the_whole_request() {
    let s = sink(true);
    let mut c = RawClient::connect(s.addr()).unwrap();
    let mut b = body(0..2);
    b.extend_from_slice(b"\n{\"time\":1}");
    let (status, text) = post(&mut c, "/services/collector/event", &b);
    assert_eq!(status, 400);
    assert_eq!(
        text,
        r#"{"text":"Event field is required","code":12,"invalid-event-number":2}"#
    );
    let (status, text) = post(&mut c, "/services/collector/event", b"{\"event\":");
    assert_eq!(status, 400);
    assert_eq!(
        text,
        r#"{"text":"Invalid data format","code":6,"invalid-event-number":0}"#
    );
    let (status, text) = post(&mut c, "/services/collector/event", b"");
    assert_eq!(
        (status, text.as_str()),
        (400, r#"{"text":"No data","code":5}"#)
    );
    let st = s.stats();
    assert_eq!(st.accepted_events, 0, "a rejected request indexes nothing");
    assert!(s.events().is_empty());
    assert_eq!(
        s.seq_report(None).distinct,
        0,
        "rejected events are not tracked"
    );
    assert_eq!(st.rejected(RejectReason::EventMissing), 1);
    assert_eq!(st.rejected(RejectReason::InvalidJson), 1);
    assert_eq!(st.rejected(RejectReason::NoData), 1);
}

#[test]
fn raw_health_and_unknown_paths() {
    let s = sink(true);
    let mut c = RawClient::connect(s.addr()).unwrap();
    let (status, _) = post(
        &mut c,
        "/services/collector/raw",
        b"line one\r\n\nline two\n",
    );
    assert_eq!(status, 200);
    assert_eq!(s.stats().accepted_events, 2);
    assert_eq!(s.events()[1]["event"], "line two");
    let r = c
        .request("GET", "/services/collector/health", &[], b"")
        .unwrap();
    assert_eq!(
        (r.status, r.text()),
        (200, r#"{"text":"HEC is healthy","code":17}"#.into())
    );
    let r = c.request("GET", "/nope", &[], b"").unwrap();
    assert_eq!(r.status, 404);
    assert_eq!(
        r.text(),
        r#"{"text":"The requested URL was not found on this server.","code":404}"#
    );
}

#[test]
fn faults_busy_marker_413_delay_and_reset() {
    let s = sink(false);
    let mut c = RawClient::connect(s.addr()).unwrap();
    let b = body(0..10);

    s.set_faults(Faults {
        busy_next: 2,
        ..Faults::default()
    });
    for _ in 0..2 {
        let (status, text) = post(&mut c, "/services/collector/event", &b);
        assert_eq!(
            (status, text.as_str()),
            (503, r#"{"text":"Server is busy","code":9}"#)
        );
    }
    assert_eq!(post(&mut c, "/services/collector/event", &b).0, 200);

    s.set_faults(Faults {
        busy_until: Some(Instant::now() + Duration::from_secs(60)),
        ..Faults::default()
    });
    assert_eq!(post(&mut c, "/services/collector/event", &b).0, 503);
    let r = c
        .request("GET", "/services/collector/health", &[], b"")
        .unwrap();
    assert_eq!(r.status, 503);

    s.set_faults(Faults {
        reject_marker: Some("seq: 0000000007".into()),
        max_events: Some(5),
        ..Faults::default()
    });
    assert_eq!(
        post(&mut c, "/services/collector/event", &body(0..3)).0,
        200
    );
    assert_eq!(
        post(&mut c, "/services/collector/event", &body(5..8)).0,
        400
    );
    assert_eq!(
        post(&mut c, "/services/collector/event", &body(10..16)).0,
        413
    );

    s.set_faults(Faults {
        delay: Some(Duration::from_millis(100)),
        ..Faults::default()
    });
    let t = Instant::now();
    assert_eq!(
        post(&mut c, "/services/collector/event", &body(0..1)).0,
        200
    );
    assert!(t.elapsed() >= Duration::from_millis(100));

    s.set_faults(Faults {
        reset_every: Some(1),
        ..Faults::default()
    });
    let (k, v) = auth();
    let err = c
        .request("POST", "/services/collector/event", &[(k, &v)], &b)
        .expect_err("reset without an answer");
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);

    let st = s.stats();
    assert_eq!(st.rejected(RejectReason::FaultBusy), 3);
    assert_eq!(st.rejected(RejectReason::FaultMarker), 1);
    assert_eq!(st.rejected(RejectReason::FaultTooLarge), 1);
    assert_eq!(st.rejected(RejectReason::FaultReset), 1);
    assert_eq!(st.accepted_events, 10 + 3 + 1);
}

#[test]
fn reset_after_processing_indexes_the_events() {
    let s = sink(false);
    s.set_faults(Faults {
        reset_every: Some(2),
        reset_after_processing: true,
        ..Faults::default()
    });
    let mut c = RawClient::connect(s.addr()).unwrap();
    assert_eq!(
        post(&mut c, "/services/collector/event", &body(0..4)).0,
        200
    );
    let (k, v) = auth();
    assert!(
        c.request("POST", "/services/collector/event", &[(k, &v)], &body(0..4))
            .is_err()
    );
    let st = s.stats();
    assert_eq!(st.accepted_events, 8);
    let rep = s.seq_report(Some(4));
    assert_eq!((rep.distinct, rep.duplicates, rep.missing), (4, 4, 0));
}

#[tokio::test]
async fn starts_on_the_callers_runtime() {
    let s = sluice_bench::HecSink::start(SinkConfig {
        token: TOKEN.into(),
        ..SinkConfig::default()
    })
    .await
    .unwrap();
    let addr = s.addr();
    let status = tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr).unwrap();
        post(&mut c, "/services/collector/event", &body(0..7)).0
    })
    .await
    .unwrap();
    assert_eq!(status, 200);
    assert!(s.wait_for_async(7, Duration::from_secs(5)).await);
}
