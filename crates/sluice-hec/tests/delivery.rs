//! The HEC client against the real test sink: every response class of the crate docs, each
//! checked by the one completion per batch it reports.

mod tally;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tally::Tally;

use bytes::Bytes;
use sluice_bench::{Faults, RejectReason, SinkConfig, SinkHandle};
use sluice_hec::{Backoff, ClientConfig, RequestOutcome, RetryReason};
use sluice_proto::batch::{EncodedBatch, HoldKind};
use sluice_proto::delivery::{AbandonReason, Completion, CompletionSink, Delivery};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "3f1e2d4c-0000-4000-8000-000000000001";

/// A hold (window permit) whose release is observable.
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

/// Every completion reported, with the batch's event count, in order.
#[derive(Debug, Default)]
struct Recorder {
    seen: Mutex<Vec<(u32, Completion)>>,
}

impl CompletionSink for Recorder {
    fn completed(&self, batch: &EncodedBatch, completion: &Completion, _persisted: bool) {
        self.seen
            .lock()
            .unwrap()
            .push((batch.events(), completion.clone()));
    }
}

impl Recorder {
    fn all(&self) -> Vec<(u32, Completion)> {
        self.seen.lock().unwrap().clone()
    }
    fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
    /// Events by outcome over every completion: (delivered, rejected, undelivered).
    fn events(&self) -> (u64, u64, u64) {
        self.all().iter().fold((0, 0, 0), |(d, r, u), (n, c)| {
            let k = c.counts(*n);
            (
                d + u64::from(k.delivered),
                r + u64::from(k.rejected),
                u + u64::from(k.undelivered),
            )
        })
    }
    fn abandoned(&self) -> usize {
        self.all()
            .iter()
            .filter(|(_, c)| {
                *c == Completion::Abandoned {
                    reason: AbandonReason::Shutdown,
                }
            })
            .count()
    }
}

/// Batch `i` of `per` events: thread 0, seq `i*per .. (i+1)*per`.
fn batch(i: u64, per: u64, extra: &str, tickets: &Tickets, sink: &Arc<Recorder>) -> Delivery {
    let body = (i * per..(i + 1) * per)
        .map(|s| event(0, s, extra))
        .collect::<Vec<_>>()
        .join("\n");
    let mut b = EncodedBatch::from_lines(Bytes::from(body)).unwrap();
    assert_eq!(u64::from(b.events()), per);
    b.hold(HoldKind::Events, tickets.issue());
    Delivery::new(b, sink.clone())
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
async fn deliver_all(cfg: ClientConfig, batches: Vec<Delivery>) -> Arc<Tally> {
    let stats = Arc::new(Tally::new());
    let out = stats.output(cfg).expect("valid config");
    let (tx, rx) = async_channel::unbounded();
    for b in batches {
        tx.send(b).await.unwrap();
    }
    drop(tx);
    tokio::time::timeout(
        Duration::from_secs(120),
        out.run(rx, CancellationToken::new()),
    )
    .await
    .expect("run drains within the time limit");
    stats
}

async fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn delivers_every_batch_with_one_completion_each() {
    let s = sink();
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    let batches = (0..20).map(|i| batch(i, 500, "", &tickets, &rec)).collect();
    let stats = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(rec.count(), 20, "one completion per batch");
    assert!(
        rec.all()
            .iter()
            .all(|(n, c)| *n == 500 && *c == Completion::Delivered)
    );
    assert_eq!(rec.events(), (10_000, 0, 0));
    let snap = stats.snapshot();
    assert_eq!(snap.requests(RequestOutcome::Success), 20);
    assert_eq!(snap.retried_requests_total(), 0);
    assert_eq!((snap.in_flight_batches, snap.in_flight_events), (0, 0));
    assert_eq!(snap.request_seconds.count, 20);
    assert_eq!(snap.bytes_raw, snap.bytes_sent, "no compression");
    assert!(snap.healthy);
    assert_eq!(
        tickets.live(),
        0,
        "every window permit released on completion"
    );
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
    let rec = Arc::new(Recorder::default());
    let batches = (0..6).map(|i| batch(i, 1000, "", &tickets, &rec)).collect();
    let mut cfg = config(vec![s.event_url()]);
    cfg.compression = true;
    let stats = deliver_all(cfg, batches).await;
    assert_eq!(rec.events(), (6000, 0, 0));
    let snap = stats.snapshot();
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
    let rec = Arc::new(Recorder::default());
    let batches = (0..10).map(|i| batch(i, 200, "", &tickets, &rec)).collect();
    let stats = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(
        rec.count(),
        10,
        "retries inside the client are not completions"
    );
    assert_eq!(rec.events(), (2000, 0, 0));
    let snap = stats.snapshot();
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
async fn a_batch_whose_every_event_hec_refuses_completes_as_rejected_naming_each() {
    let s = sink_with(
        TOKEN,
        Faults {
            reject_marker: Some("POISON".into()),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    let mut batches: Vec<_> = (0..5).map(|i| batch(i, 100, "", &tickets, &rec)).collect();
    batches.push(batch(5, 100, " POISON", &tickets, &rec));
    batches.extend((6..9).map(|i| batch(i, 100, "", &tickets, &rec)));
    let stats = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(rec.count(), 9);
    assert_eq!(rec.events(), (800, 100, 0));
    let rejected: Vec<_> = rec
        .all()
        .into_iter()
        .filter_map(|(_, c)| match c {
            Completion::Rejected { events } => Some(events),
            _ => None,
        })
        .collect();
    assert_eq!(rejected.len(), 1, "one batch rejected");
    let events = &rejected[0];
    assert_eq!(
        events.iter().map(|r| r.index).collect::<Vec<_>>(),
        (0..100).collect::<Vec<u32>>()
    );
    assert!(events.iter().all(|r| r.code == Some(400)));
    // The sink names event 0 of every request holding the marker: each request of the
    // poisoned batch refuses one event and the rest go again.
    assert_eq!(events[0].text, "Incorrect index", "Splunk's words are kept");
    assert_eq!(
        rec.abandoned(),
        0,
        "a rejection is not undelivered-by-abort"
    );
    let snap = stats.snapshot();
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
        "the rejected batch released its window permits too"
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
    let rec = Arc::new(Recorder::default());
    let batches = (0..12).map(|i| batch(i, 100, "", &tickets, &rec)).collect();
    let stats = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(rec.events(), (1200, 0, 0));
    let snap = stats.snapshot();
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
    let rec = Arc::new(Recorder::default());
    let batches = (0..12).map(|i| batch(i, 100, "", &tickets, &rec)).collect();
    deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(rec.events(), (1200, 0, 0));
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
    let rec = Arc::new(Recorder::default());
    let stats = Arc::new(Tally::new());
    let out = stats.output(config(vec![s.event_url()])).unwrap();
    let (tx, rx) = async_channel::unbounded();
    for i in 0..6 {
        tx.send(batch(i, 50, "", &tickets, &rec)).await.unwrap();
    }
    let abort = CancellationToken::new();
    let run = tokio::spawn(out.run(rx, abort.clone()));
    wait_until("403 retries", || {
        stats.snapshot().retried_requests(RetryReason::Http403) >= 8
    })
    .await;
    assert!(!stats.healthy());
    let snap = stats.snapshot();
    assert!(snap.consecutive_failures >= 8);
    assert_eq!(
        rec.count(),
        0,
        "nothing completes while HEC refuses the token"
    );
    assert_eq!(tickets.live(), 6, "held events keep their window permits");
    abort.cancel();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("abort ends the run")
        .unwrap();
    assert_eq!(rec.count(), 6);
    assert_eq!(rec.abandoned(), 6, "held and queued batches are abandoned");
    assert_eq!(rec.events(), (0, 0, 300));
    assert_eq!(tickets.live(), 0);
    assert_eq!(s.stats().accepted_events, 0);
    let refused = tx.send(batch(9, 1, "", &tickets, &rec)).await;
    assert!(refused.is_err(), "channel closed after abort");
    // The refused delivery comes back to the sender, who must complete it.
    refused
        .unwrap_err()
        .into_inner()
        .complete(Completion::Abandoned {
            reason: AbandonReason::OutputGone,
        });
    assert_eq!(rec.count(), 7);
}

#[tokio::test]
async fn a_dead_url_fails_over_to_the_live_one() {
    let s = sink();
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    let batches = (0..16).map(|i| batch(i, 100, "", &tickets, &rec)).collect();
    let stats = deliver_all(config(vec![dead_url(), s.event_url()]), batches).await;
    assert_eq!(rec.events(), (1600, 0, 0));
    let snap = stats.snapshot();
    assert!(snap.retried_requests(RetryReason::Connect) > 0);
    assert!(snap.healthy, "one URL delivers");
    let rep = s.seq_report(Some(1600));
    assert_eq!((rep.missing, rep.duplicates), (0, 0));
}

#[tokio::test]
async fn too_large_splits_the_batch_until_it_fits_and_completes_it_once() {
    let s = sink_with(
        TOKEN,
        Faults {
            max_events: Some(100),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    let batches = (0..2).map(|i| batch(i, 500, "", &tickets, &rec)).collect();
    let stats = deliver_all(config(vec![s.event_url()]), batches).await;
    assert_eq!(
        rec.all(),
        vec![(500, Completion::Delivered), (500, Completion::Delivered)],
        "one completion per batch, not per piece"
    );
    let snap = stats.snapshot();
    // 500 -> 2x250 -> 4x125 -> 8x(62|63): 1 + 2 + 4 answers of 413 per batch.
    assert_eq!(snap.requests(RequestOutcome::TooLarge), 14);
    assert_eq!(snap.requests(RequestOutcome::Success), 16);
    assert_eq!(tickets.live(), 0);
    let rep = s.seq_report(Some(1000));
    assert_eq!((rep.missing, rep.duplicates), (0, 0));
}

#[tokio::test]
async fn a_single_event_still_too_large_is_rejected_by_index() {
    let s = sink_with(
        TOKEN,
        Faults {
            max_events: Some(0),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    deliver_all(
        config(vec![s.event_url()]),
        vec![batch(0, 4, "", &tickets, &rec)],
    )
    .await;
    let all = rec.all();
    assert_eq!(all.len(), 1);
    match &all[0].1 {
        Completion::Rejected { events } => {
            let mut idx: Vec<u32> = events.iter().map(|r| r.index).collect();
            idx.sort_unstable();
            assert_eq!(idx, [0, 1, 2, 3]);
            assert!(events.iter().all(|r| r.code == Some(413)));
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert_eq!(rec.events(), (0, 4, 0));
    assert_eq!(tickets.live(), 0);
}

#[tokio::test]
async fn abort_during_an_outage_abandons_exactly_what_was_held_and_queued() {
    let s = sink_with(
        TOKEN,
        Faults {
            busy_until: Some(Instant::now() + Duration::from_secs(3600)),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    let stats = Arc::new(Tally::new());
    let mut cfg = config(vec![s.event_url()]);
    cfg.workers = 2;
    let out = stats.output(cfg).unwrap();
    let (tx, rx) = async_channel::unbounded();
    for i in 0..7 {
        tx.send(batch(i, 100, "", &tickets, &rec)).await.unwrap();
    }
    let abort = CancellationToken::new();
    let run = tokio::spawn(out.run(rx, abort.clone()));
    wait_until("two workers retrying", || {
        let snap = stats.snapshot();
        snap.in_flight_batches == 2 && snap.retried_requests(RetryReason::Http5xx) >= 4
    })
    .await;
    assert!(!stats.healthy());
    abort.cancel();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("abort ends the run")
        .unwrap();
    assert_eq!(rec.count(), 7);
    assert_eq!(rec.abandoned(), 7);
    assert_eq!(rec.events(), (0, 0, 700));
    let snap = stats.snapshot();
    assert_eq!((snap.in_flight_batches, snap.in_flight_events), (0, 0));
    assert_eq!(tickets.live(), 0);
    assert_eq!(s.stats().accepted_events, 0);
}

#[tokio::test]
async fn probe_reports_reachability_and_token() {
    let s = sink();
    let stats = Arc::new(Tally::new());
    let good = stats
        .output(config(vec![s.event_url(), dead_url()]))
        .unwrap();
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
    let bad = Arc::new(Tally::new()).output(cfg).unwrap();
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
    let stats = Arc::new(Tally::new());
    let mut cfg = config(vec!["ftp://x/".into()]);
    let err = stats.output(cfg.clone()).unwrap_err();
    assert!(err.to_string().contains("ftp://x/"), "{err}");
    cfg.urls = vec!["http://127.0.0.1:1/services/collector/event".into()];
    cfg.token = String::new();
    assert!(stats.output(cfg.clone()).is_err());
    cfg.token = "t".into();
    cfg.headers = vec![("bad header".into(), "v".into())];
    let err = stats.output(cfg.clone()).unwrap_err();
    assert!(err.to_string().contains("bad header"), "{err}");
    cfg.headers = vec![];
    cfg.workers = 0;
    assert!(stats.output(cfg).is_err());
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
    let rec = Arc::new(Recorder::default());
    let batches = (0..5).map(|i| batch(i, 10, "", &tickets, &rec)).collect();
    deliver_all(cfg, batches).await;
    assert_eq!(rec.events(), (50, 0, 0));
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
    let rec = Arc::new(Recorder::default());
    let batches = (0..5).map(|i| batch(i, 10, "", &tickets, &rec)).collect();
    deliver_all(cfg, batches).await;
    assert_eq!(rec.events(), (50, 0, 0));
    assert!(
        s.last_headers()
            .contains(&("connection".into(), "close".into()))
    );
    assert_eq!(s.stats().connections, 5);
}

#[tokio::test]
async fn a_timeout_is_retried_and_may_duplicate_what_splunk_already_indexed() {
    // The sink indexes first and answers late: the client's timeout fires after the data
    // was accepted, which is exactly the at-least-once duplicate case. The delay is well past
    // the slow-indexer timeout too (4 x 200 ms): at 800 ms an answer sometimes beat it on a
    // loaded machine, the timeouts stopped at three and the test waited out its minute.
    let s = sink_with(
        TOKEN,
        Faults {
            delay: Some(Duration::from_millis(2000)),
            ..Faults::default()
        },
    );
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    let stats = Arc::new(Tally::new());
    let mut cfg = config(vec![s.event_url()]);
    cfg.timeout = Duration::from_millis(200);
    cfg.workers = 2;
    let out = stats.output(cfg).unwrap();
    let (tx, rx) = async_channel::unbounded();
    for i in 0..4 {
        tx.send(batch(i, 100, "", &tickets, &rec)).await.unwrap();
    }
    drop(tx);
    let run = tokio::spawn(out.run(rx, CancellationToken::new()));
    wait_until("timeouts", || {
        stats.snapshot().retried_requests(RetryReason::Timeout) >= 4
    })
    .await;
    s.set_faults(Faults::default());
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("delivers once the sink is fast again")
        .unwrap();
    assert_eq!(rec.events(), (400, 0, 0));
    let snap = stats.snapshot();
    assert!(snap.requests(RequestOutcome::Timeout) >= 4);
    let rep = s.seq_report(Some(400));
    assert_eq!(rep.missing, 0);
    assert!(
        rep.duplicates >= 100,
        "timed-out batches were indexed: {rep:?}"
    );
    assert_eq!(tickets.live(), 0);
}

/// With a disk buffer behind it (`hand_back_when`), a batch that lives only in memory goes
/// back as `Retry` once every URL failed it, so the buffer keeps it; a batch the buffer
/// already holds is retried here as before; and nothing goes back while the predicate
/// says no (the buffer is full).
#[tokio::test]
async fn unpersisted_batches_are_handed_back_to_a_buffer_when_hec_is_down() {
    let tickets = Tickets::new();
    let rec = Arc::new(Recorder::default());
    let stats = Arc::new(Tally::new());
    let out = stats.output(config(vec![dead_url()])).unwrap();
    let room = Arc::new(AtomicUsize::new(1));
    let r2 = Arc::clone(&room);
    out.hand_back_when(move || r2.load(Ordering::SeqCst) == 1);
    let (tx, rx) = async_channel::unbounded();
    let abort = CancellationToken::new();
    let task = tokio::spawn(out.run(rx, abort.clone()));

    tx.send(batch(0, 10, "", &tickets, &rec)).await.unwrap();
    wait_until("the memory batch is handed back", || rec.count() == 1).await;
    assert!(
        matches!(
            rec.all()[0].1,
            Completion::Retry {
                reason: sluice_proto::delivery::RetryReason::Unreachable,
                ..
            }
        ),
        "{:?}",
        rec.all()
    );
    assert_eq!(tickets.live(), 0, "its window permits are back");

    // Already persisted: retried here until the abort.
    let body = Bytes::from(event(0, 99, ""));
    let persisted = Delivery::from_buffer(EncodedBatch::from_lines(body).unwrap(), rec.clone());
    tx.send(persisted).await.unwrap();
    // The buffer is full: memory batches are not handed back either.
    room.store(0, Ordering::SeqCst);
    tx.send(batch(1, 10, "", &tickets, &rec)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(rec.count(), 1, "both are retried: {:?}", rec.all());
    abort.cancel();
    task.await.unwrap();
    assert_eq!(rec.count(), 3);
    assert_eq!(rec.abandoned(), 2);
}
