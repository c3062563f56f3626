//! The HEC client against the real test sink: every response class of the crate docs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use sluice_bench::{Faults, RejectReason, SinkConfig, SinkHandle};
use sluice_hec::{
    AbortSignal, Backoff, ClientConfig, DrainReport, DropReason, EncodedBatch, HecOutput, HecStats,
    RequestOutcome, RetryReason,
};

const TOKEN: &str = "3f1e2d4c-0000-4000-8000-000000000001";

/// A ticket whose release is observable.
struct Ticket(Arc<AtomicUsize>);
impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Tickets(Arc<AtomicUsize>);
impl Tickets {
    fn new() -> Self {
        Tickets(Arc::new(AtomicUsize::new(0)))
    }
    fn issue(&self) -> Ticket {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ticket(Arc::clone(&self.0))
    }
    fn live(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

fn event(thread: u32, seq: u64, extra: &str) -> String {
    format!(
        r#"{{"time":"1710166925.000","host":"h","source":"sc4s","sourcetype":"nix:syslog","index":"osnix","event":"prg00000[1234]: seq: {seq:010}, thread: {thread:04}, runid: 7, stamp: x{extra}","fields":{{"sc4s_vendor":"nix"}}}}"#
    )
}

/// Batch `i` of `per` events: thread 0, seq `i*per .. (i+1)*per`.
fn batch(i: u64, per: u64, extra: &str, tickets: &Tickets) -> EncodedBatch {
    let body = (i * per..(i + 1) * per)
        .map(|s| event(0, s, extra))
        .collect::<Vec<_>>()
        .join("\n");
    let mut b = EncodedBatch::new(Bytes::from(body), per as u32);
    b.attach(tickets.issue());
    b
}

fn sink_with(token: &str, faults: Faults) -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        token: token.into(),
        threads: 1,
        faults,
        ..SinkConfig::default()
    })
    .expect("sink starts")
}

fn sink() -> SinkHandle {
    sink_with(TOKEN, Faults::default())
}

fn config(urls: Vec<String>) -> ClientConfig {
    ClientConfig {
        urls,
        token: TOKEN.into(),
        workers: 4,
        timeout: Duration::from_secs(10),
        backoff: Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(200),
        },
        ..ClientConfig::default()
    }
}

/// A port nobody listens on.
fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/services/collector/event")
}

/// Sends `batches` through a fresh output, closes the channel, runs it to completion.
async fn deliver_all(
    cfg: ClientConfig,
    batches: Vec<EncodedBatch>,
) -> (DrainReport, Arc<HecStats>) {
    let stats = Arc::new(HecStats::new());
    let out = HecOutput::new(cfg, Arc::clone(&stats)).expect("valid config");
    let (tx, rx) = async_channel::unbounded();
    for b in batches {
        tx.send(b).await.unwrap();
    }
    drop(tx);
    let report = tokio::time::timeout(Duration::from_secs(120), out.run(rx, AbortSignal::new()))
        .await
        .expect("run drains within the time limit");
    (report, stats)
}

async fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn delivers_every_batch_with_exact_counts() {
    let s = sink();
    let tickets = Tickets::new();
    let batches = (0..20).map(|i| batch(i, 500, "", &tickets)).collect();
    let (report, stats) = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(report, DrainReport::default());
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 10_000);
    assert_eq!(snap.delivered_batches, 20);
    assert_eq!(snap.requests(RequestOutcome::Success), 20);
    assert_eq!(snap.retried_requests_total(), 0);
    assert_eq!((snap.in_flight_batches, snap.in_flight_events), (0, 0));
    assert_eq!(snap.request_seconds.count, 20);
    assert_eq!(snap.bytes_raw, snap.bytes_sent, "no compression");
    assert!(snap.healthy);
    assert_eq!(tickets.live(), 0, "every ticket released on delivery");
    let sink_stats = s.stats();
    assert_eq!(sink_stats.accepted_events, 10_000);
    assert_eq!(sink_stats.gzip_requests, 0);
    let rep = s.seq_report(Some(10_000));
    assert_eq!((rep.missing, rep.duplicates), (0, 0));
}

#[tokio::test]
async fn gzip_compresses_every_request() {
    let s = sink();
    let tickets = Tickets::new();
    let batches = (0..6).map(|i| batch(i, 1000, "", &tickets)).collect();
    let mut cfg = config(vec![s.event_url()]);
    cfg.compression = true;
    let (report, stats) = deliver_all(cfg, batches).await;
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 6000);
    assert!(
        snap.bytes_sent * 3 < snap.bytes_raw,
        "gzip shrinks JSON: {} -> {}",
        snap.bytes_raw,
        snap.bytes_sent
    );
    let st = s.stats();
    assert_eq!(st.gzip_requests, 6);
    assert_eq!(st.bytes_received, snap.bytes_sent);
    assert_eq!(st.bytes_decoded, snap.bytes_raw);
    assert_eq!(s.seq_report(Some(6000)).missing, 0);
}

#[tokio::test]
async fn server_busy_is_retried_until_it_recovers() {
    let s = sink_with(
        TOKEN,
        Faults {
            busy_until: Some(Instant::now() + Duration::from_millis(1500)),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let batches = (0..10).map(|i| batch(i, 200, "", &tickets)).collect();
    let (report, stats) = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 2000);
    assert!(snap.retried_requests(RetryReason::Http5xx) > 0);
    assert_eq!(
        snap.requests(RequestOutcome::ServerError),
        snap.retried_requests(RetryReason::Http5xx)
    );
    assert_eq!(
        snap.retried_requests_total(),
        snap.retried_requests(RetryReason::Http5xx)
    );
    assert!(snap.healthy, "the last attempt succeeded");
    assert_eq!(tickets.live(), 0);
    let rep = s.seq_report(Some(2000));
    assert_eq!(
        (rep.missing, rep.duplicates),
        (0, 0),
        "nothing lost, nothing twice"
    );
    assert_eq!(
        s.stats().rejected(RejectReason::FaultBusy),
        snap.requests(RequestOutcome::ServerError)
    );
}

#[tokio::test]
async fn a_batch_whose_every_event_hec_refuses_is_refused_event_by_event() {
    let s = sink_with(
        TOKEN,
        Faults {
            reject_marker: Some("POISON".into()),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let mut batches: Vec<_> = (0..5).map(|i| batch(i, 100, "", &tickets)).collect();
    batches.push(batch(5, 100, " POISON", &tickets));
    batches.extend((6..9).map(|i| batch(i, 100, "", &tickets)));
    let (report, stats) = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(
        report,
        DrainReport::default(),
        "a 400 drop is not undelivered-by-abort"
    );
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 800);
    // The sink names event 0 of every request holding the marker: each request of the
    // poisoned batch refuses one event and the rest go again.
    assert_eq!(snap.dropped_events(DropReason::HecRejected), 100);
    assert_eq!(snap.dropped_batches(DropReason::HecRejected), 1);
    assert_eq!(snap.requests(RequestOutcome::BadRequest), 100);
    assert_eq!(stats.dead_letter.rejected_total(), 100);
    assert_eq!(
        snap.retried_requests_total(),
        0,
        "a 400 about the data is never retried as is"
    );
    assert_eq!(
        tickets.live(),
        0,
        "the dropped batch released its tickets too"
    );
    let rep = s.seq_report(Some(900));
    assert_eq!(rep.missing, 100);
    assert_eq!(rep.per_thread[0].gaps, vec![(500, 599)]);
}

#[tokio::test]
async fn connection_resets_before_processing_lose_and_duplicate_nothing() {
    let s = sink_with(
        TOKEN,
        Faults {
            reset_every: Some(3),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let batches = (0..12).map(|i| batch(i, 100, "", &tickets)).collect();
    let (report, stats) = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 1200);
    assert!(
        snap.retried_requests(RetryReason::Io) > 0,
        "{:?}",
        snap.retried_requests
    );
    let rep = s.seq_report(Some(1200));
    assert_eq!((rep.missing, rep.duplicates), (0, 0));
    assert_eq!(tickets.live(), 0);
}

#[tokio::test]
async fn connection_resets_after_processing_may_duplicate_but_never_lose() {
    let s = sink_with(
        TOKEN,
        Faults {
            reset_every: Some(4),
            reset_after_processing: true,
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let batches = (0..12).map(|i| batch(i, 100, "", &tickets)).collect();
    let (report, stats) = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 1200);
    let resets = s.stats().rejected(RejectReason::FaultReset);
    assert!(resets > 0);
    let rep = s.seq_report(Some(1200));
    assert_eq!(rep.missing, 0, "at least once");
    assert_eq!(
        rep.duplicates,
        resets * 100,
        "each reset after indexing re-sends one batch"
    );
}

#[tokio::test]
async fn a_rejected_token_holds_events_until_abort() {
    let s = sink_with("the-real-token", Faults::default());
    let tickets = Tickets::new();
    let stats = Arc::new(HecStats::new());
    let out = HecOutput::new(config(vec![s.event_url()]), Arc::clone(&stats)).unwrap();
    let (tx, rx) = async_channel::unbounded();
    for i in 0..6 {
        tx.send(batch(i, 50, "", &tickets)).await.unwrap();
    }
    let abort = AbortSignal::new();
    let run = tokio::spawn(out.run(rx, abort.clone()));
    wait_until("403 retries", || {
        stats.snapshot().retried_requests(RetryReason::Http403) >= 8
    })
    .await;
    assert!(!stats.healthy());
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 0);
    assert!(snap.consecutive_failures >= 8);
    assert_eq!(tickets.live(), 6, "held events keep their tickets");
    abort.abort();
    let report = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("abort ends the run")
        .unwrap();
    assert_eq!(
        report,
        DrainReport {
            undelivered_events: 300,
            undelivered_batches: 6,
            aborted: true
        }
    );
    assert_eq!(
        stats.snapshot().dropped_events(DropReason::DrainTimeout),
        300
    );
    assert_eq!(tickets.live(), 0);
    assert_eq!(s.stats().accepted_events, 0);
    assert!(
        tx.send(batch(9, 1, "", &tickets)).await.is_err(),
        "channel closed after abort"
    );
}

#[tokio::test]
async fn a_dead_url_fails_over_to_the_live_one() {
    let s = sink();
    let tickets = Tickets::new();
    let batches = (0..16).map(|i| batch(i, 100, "", &tickets)).collect();
    let (report, stats) = deliver_all(config(vec![dead_url(), s.event_url()]), batches).await;
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 1600);
    assert!(snap.retried_requests(RetryReason::Connect) > 0);
    assert!(snap.healthy, "one URL delivers");
    let rep = s.seq_report(Some(1600));
    assert_eq!((rep.missing, rep.duplicates), (0, 0));
}

#[tokio::test]
async fn too_large_splits_the_batch_until_it_fits() {
    let s = sink_with(
        TOKEN,
        Faults {
            max_events: Some(100),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let batches = (0..2).map(|i| batch(i, 500, "", &tickets)).collect();
    let (report, stats) = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 1000);
    // 500 -> 2x250 -> 4x125 -> 8x(62|63): 1 + 2 + 4 answers of 413 per batch.
    assert_eq!(snap.requests(RequestOutcome::TooLarge), 14);
    assert_eq!(snap.requests(RequestOutcome::Success), 16);
    assert_eq!(
        snap.delivered_batches, 2,
        "one completion per batch, whatever its pieces"
    );
    assert_eq!(snap.dropped_events(DropReason::HecRejected), 0);
    assert_eq!(
        stats.isolation.resent_events.load(Ordering::Relaxed),
        3 * 1000,
        "every event went again after each of the three 413 levels"
    );
    assert_eq!(tickets.live(), 0);
    let rep = s.seq_report(Some(1000));
    assert_eq!((rep.missing, rep.duplicates), (0, 0));
}

#[tokio::test]
async fn a_single_event_still_too_large_is_dropped() {
    let s = sink_with(
        TOKEN,
        Faults {
            max_events: Some(0),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let (report, stats) =
        deliver_all(config(vec![s.event_url()]), vec![batch(0, 4, "", &tickets)]).await;
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.dropped_events(DropReason::HecRejected), 4);
    assert_eq!(snap.dropped_batches(DropReason::HecRejected), 1);
    let by_reason = stats.dead_letter.rejected();
    assert!(by_reason.contains(&("too_large", 4)), "{by_reason:?}");
    assert_eq!(snap.delivered_events, 0);
    assert_eq!(tickets.live(), 0);
}

#[tokio::test]
async fn abort_during_an_outage_reports_exact_undelivered_counts() {
    let s = sink_with(
        TOKEN,
        Faults {
            busy_until: Some(Instant::now() + Duration::from_secs(3600)),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let stats = Arc::new(HecStats::new());
    let mut cfg = config(vec![s.event_url()]);
    cfg.workers = 2;
    let out = HecOutput::new(cfg, Arc::clone(&stats)).unwrap();
    let (tx, rx) = async_channel::unbounded();
    for i in 0..7 {
        tx.send(batch(i, 100, "", &tickets)).await.unwrap();
    }
    let abort = AbortSignal::new();
    let run = tokio::spawn(out.run(rx, abort.clone()));
    wait_until("two workers retrying", || {
        let snap = stats.snapshot();
        snap.in_flight_batches == 2 && snap.retried_requests(RetryReason::Http5xx) >= 4
    })
    .await;
    assert!(!stats.healthy());
    abort.abort();
    let report = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("abort ends the run")
        .unwrap();
    assert_eq!(report.undelivered_events, 700);
    assert_eq!(report.undelivered_batches, 7);
    assert!(report.aborted);
    let snap = stats.snapshot();
    assert_eq!(snap.dropped_events(DropReason::DrainTimeout), 700);
    assert_eq!((snap.in_flight_batches, snap.in_flight_events), (0, 0));
    assert_eq!(tickets.live(), 0);
    assert_eq!(s.stats().accepted_events, 0);
}

#[tokio::test]
async fn probe_reports_reachability_and_token() {
    let s = sink();
    let stats = Arc::new(HecStats::new());
    let good = HecOutput::new(config(vec![s.event_url(), dead_url()]), Arc::clone(&stats)).unwrap();
    let results = good.probe().await;
    assert_eq!(results.len(), 2);
    assert!(results[0].reachable);
    assert_eq!(
        results[0].token_accepted,
        Some(true),
        "{}",
        results[0].message
    );
    assert_eq!(results[0].healthy, Some(true));
    assert!(!results[1].reachable);
    assert_eq!(results[1].token_accepted, None);
    assert!(
        results[1].message.contains("unreachable") && results[1].message.contains("in memory"),
        "{}",
        results[1].message
    );

    let mut cfg = config(vec![s.event_url()]);
    cfg.token = "wrong".into();
    let bad = HecOutput::new(cfg, Arc::new(HecStats::new())).unwrap();
    let results = bad.probe().await;
    assert!(results[0].reachable);
    assert_eq!(
        results[0].token_accepted,
        Some(false),
        "{}",
        results[0].message
    );
    assert!(
        results[0].message.contains("Invalid token"),
        "{}",
        results[0].message
    );
    assert_eq!(s.stats().accepted_events, 0, "the probe indexes nothing");
}

#[test]
fn invalid_configs_are_named() {
    let stats = Arc::new(HecStats::new());
    let mut cfg = config(vec!["ftp://x/".into()]);
    let err = HecOutput::new(cfg.clone(), Arc::clone(&stats)).unwrap_err();
    assert!(err.to_string().contains("ftp://x/"), "{err}");
    cfg.urls = vec!["http://127.0.0.1:1/services/collector/event".into()];
    cfg.token = String::new();
    assert!(HecOutput::new(cfg.clone(), Arc::clone(&stats)).is_err());
    cfg.token = "t".into();
    cfg.headers = vec![("bad header".into(), "v".into())];
    let err = HecOutput::new(cfg.clone(), Arc::clone(&stats)).unwrap_err();
    assert!(err.to_string().contains("bad header"), "{err}");
    cfg.headers = vec![];
    cfg.workers = 0;
    assert!(HecOutput::new(cfg, stats).is_err());
}

#[tokio::test]
async fn requests_carry_sc4s_headers_and_reuse_connections() {
    let s = SinkHandle::spawn_thread(SinkConfig {
        token: TOKEN.into(),
        record: true,
        threads: 1,
        ..SinkConfig::default()
    })
    .unwrap();
    let tickets = Tickets::new();
    let mut cfg = config(vec![s.event_url()]);
    cfg.workers = 1;
    cfg.compression = true;
    cfg.user_agent = "sc4s/3.30.0".into();
    cfg.headers = vec![("X-Custom".into(), "one".into())];
    cfg.headers.extend(sluice_hec::sc4s_app_headers("3.30.0"));
    let batches = (0..5).map(|i| batch(i, 10, "", &tickets)).collect();
    let (report, _) = deliver_all(cfg, batches).await;
    assert_eq!(report.undelivered_events, 0);
    let h = s.last_headers();
    let get = |name: &str| {
        h.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("header {name} missing in {h:?}"))
    };
    assert_eq!(get("authorization"), format!("Splunk {TOKEN}"));
    assert_eq!(get("user-agent"), "sc4s/3.30.0");
    assert_eq!(get("x-custom"), "one");
    assert_eq!(get("__splunk_app_name"), "sc4syslog");
    assert_eq!(get("__splunk_app_version"), "3.30.0");
    assert_eq!(get("content-encoding"), "gzip");
    assert!(
        h.iter().all(|(k, _)| k != "connection"),
        "keep-alive is the default: {h:?}"
    );
    assert_eq!(
        s.stats().connections,
        1,
        "one worker, one pooled connection"
    );
    assert_eq!(s.events().len(), 50);
    assert_eq!(s.events()[49]["index"], "osnix");
}

#[tokio::test]
async fn connection_close_opens_a_connection_per_request() {
    let s = SinkHandle::spawn_thread(SinkConfig {
        token: TOKEN.into(),
        record: true,
        threads: 1,
        ..SinkConfig::default()
    })
    .unwrap();
    let tickets = Tickets::new();
    let mut cfg = config(vec![s.event_url()]);
    cfg.workers = 1;
    cfg.connection_close = true;
    let batches = (0..5).map(|i| batch(i, 10, "", &tickets)).collect();
    let (report, _) = deliver_all(cfg, batches).await;
    assert_eq!(report.undelivered_events, 0);
    assert!(
        s.last_headers()
            .contains(&("connection".into(), "close".into()))
    );
    assert_eq!(s.stats().connections, 5);
}

#[tokio::test]
async fn a_timeout_is_retried_and_may_duplicate_what_splunk_already_indexed() {
    // The sink indexes first and answers late: the client's timeout fires after the data
    // was accepted, which is exactly the at-least-once duplicate case.
    let s = sink_with(
        TOKEN,
        Faults {
            delay: Some(Duration::from_millis(800)),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let stats = Arc::new(HecStats::new());
    let mut cfg = config(vec![s.event_url()]);
    cfg.timeout = Duration::from_millis(200);
    cfg.workers = 2;
    let out = HecOutput::new(cfg, Arc::clone(&stats)).unwrap();
    let (tx, rx) = async_channel::unbounded();
    for i in 0..4 {
        tx.send(batch(i, 100, "", &tickets)).await.unwrap();
    }
    drop(tx);
    let run = tokio::spawn(out.run(rx, AbortSignal::new()));
    wait_until("timeouts", || {
        stats.snapshot().retried_requests(RetryReason::Timeout) >= 4
    })
    .await;
    s.set_faults(Faults::default());
    let report = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("delivers once the sink is fast again")
        .unwrap();
    assert_eq!(report.undelivered_events, 0);
    let snap = stats.snapshot();
    assert_eq!(snap.delivered_events, 400);
    assert!(snap.requests(RequestOutcome::Timeout) >= 4);
    let rep = s.seq_report(Some(400));
    assert_eq!(rep.missing, 0);
    assert!(
        rep.duplicates >= 100,
        "timed-out batches were indexed: {rep:?}"
    );
    assert_eq!(tickets.live(), 0);
}
