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

const CHANNEL: &str = "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b";

fn post_ch(c: &mut RawClient, path: &str, channel: Option<&str>, body: &[u8]) -> (u16, String) {
    let (k, v) = auth();
    let mut headers = vec![(k, v.as_str())];
    if let Some(ch) = channel {
        headers.push(("X-Splunk-Request-Channel", ch));
    }
    let r = c.request("POST", path, &headers, body).expect("answer");
    (r.status, r.text())
}

fn ack_sink(faults: Faults) -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        token: TOKEN.into(),
        threads: 1,
        indexer_ack: true,
        faults,
        ..SinkConfig::default()
    })
    .expect("sink starts")
}

#[test]
fn indexer_ack_requires_a_channel_and_answers_ack_ids() {
    let s = ack_sink(Faults {
        lose_every: Some(2),
        ..Faults::default()
    });
    let mut c = RawClient::connect(s.addr()).unwrap();
    let ev = "/services/collector/event";
    assert_eq!(
        post_ch(&mut c, ev, None, &body(0..1)),
        (
            400,
            r#"{"text":"Data channel is missing","code":10}"#.into()
        )
    );
    assert_eq!(post_ch(&mut c, ev, Some("nope"), &body(0..1)).0, 400);
    // Request 1 is indexed, request 2 is "lost": answered with an ackId, never indexed.
    let (st, text) = post_ch(&mut c, ev, Some(CHANNEL), &body(0..3));
    assert_eq!(
        (st, text.as_str()),
        (200, r#"{"text":"Success","code":0,"ackId":0}"#)
    );
    let (st, text) = post_ch(&mut c, ev, Some(CHANNEL), &body(3..6));
    assert_eq!(
        (st, text.as_str()),
        (200, r#"{"text":"Success","code":0,"ackId":1}"#)
    );
    assert_eq!(s.accepted_events(), 3);
    let ack = "/services/collector/ack";
    let (st, text) = post_ch(&mut c, ack, Some(CHANNEL), br#"{"acks":[0,1]}"#);
    assert_eq!(st, 200);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v, serde_json::json!({"acks":{"0":true,"1":false}}));
    // A true ack is reported once; a channel is needed on the ack endpoint too.
    let (_, text) = post_ch(&mut c, ack, Some(CHANNEL), br#"{"acks":[0]}"#);
    assert!(text.contains(r#""0":false"#), "{text}");
    assert_eq!(post_ch(&mut c, ack, None, br#"{"acks":[0]}"#).0, 400);
    assert_eq!(post_ch(&mut c, ack, Some(CHANNEL), b"garbage").0, 400);
    let st = s.stats();
    assert_eq!((st.lost_requests, st.lost_events), (1, 3));
    assert_eq!((st.ack_queries, st.acks_true), (3, 1));
    assert_eq!(st.rejected(RejectReason::ChannelMissing), 2);
    assert_eq!(st.rejected(RejectReason::ChannelInvalid), 1);
    // The garbage fault answers something that is not ack JSON.
    s.update_faults(|f| f.ack_garbage = true);
    let (st, text) = post_ch(&mut c, ack, Some(CHANNEL), br#"{"acks":[0]}"#);
    assert_eq!(st, 200);
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
}

#[test]
fn a_marked_event_is_refused_by_number() {
    let s = sink(true);
    s.update_faults(|f| f.reject_event_marker = Some("seq: 0000000004".into()));
    let mut c = RawClient::connect(s.addr()).unwrap();
    let (st, text) = post(&mut c, "/services/collector/event", &body(2..8));
    assert_eq!(
        (st, text.as_str()),
        (
            400,
            r#"{"text":"Invalid data format","code":6,"invalid-event-number":2}"#
        )
    );
    assert_eq!(s.accepted_events(), 0, "nothing indexed by default");
    // Without the bad event the rest goes in.
    let rest: Vec<u8> = [body(2..4), body(5..8)].join(&b'\n');
    assert_eq!(post(&mut c, "/services/collector/event", &rest).0, 200);
    assert_eq!(s.accepted_events(), 5);
    // The other reading of HEC: events before N were indexed.
    s.update_faults(|f| f.index_before_invalid = true);
    assert_eq!(
        post(&mut c, "/services/collector/event", &body(2..8)).0,
        400
    );
    assert_eq!(s.accepted_events(), 7);
    assert_eq!(s.stats().rejected(RejectReason::FaultEvent), 2);
    let rep = s.seq_report(None);
    assert_eq!(rep.duplicates, 2, "events 2 and 3 were indexed twice");
}
