//! Indexer acknowledgement, bad-event isolation with the dead-letter file, slow-HEC
//! duplicates and per-URL failover, against the real test sink on real sockets.

mod tally;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tally::Tally;

use bytes::Bytes;
use sluice_bench::{Faults, SinkConfig, SinkHandle};
use sluice_hec::{
    AckConfig, Backoff, ClientConfig, DeadLetterConfig, RequestOutcome, ResendPolicy, RetryReason,
};
use sluice_proto::batch::{EncodedBatch, HoldKind};
use sluice_proto::delivery::{Completion, CompletionSink, Delivery};
use std::sync::Mutex;
use tokio_util::sync::CancellationToken as AbortSignal;

const TOKEN: &str = "3f1e2d4c-0000-4000-8000-000000000002";

struct Ticket(Arc<AtomicUsize>);
impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn event(seq: u64, extra: &str) -> String {
    format!(
        r#"{{"time":"1710166925.000","host":"h","source":"sc4s","sourcetype":"nix:syslog","index":"osnix","event":"prg00000[1234]: seq: {seq:010}, thread: 0000, runid: 9, stamp: x{extra}"}}"#
    )
}

/// Every completion reported, and the holds still alive: what the pipeline would see.
#[derive(Debug, Default)]
struct Ctx {
    live: Arc<AtomicUsize>,
    rec: Arc<Recorder>,
}

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

/// What became of the events: delivered, rejected, undelivered (abandoned).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Outcome {
    delivered: u64,
    rejected: u64,
    undelivered: u64,
    rejected_batches: u64,
}

impl Ctx {
    fn holds(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }
    fn outcome(&self) -> Outcome {
        let seen = self.rec.seen.lock().unwrap();
        let mut o = Outcome::default();
        for (n, c) in seen.iter() {
            let k = c.counts(*n);
            o.delivered += u64::from(k.delivered);
            o.rejected += u64::from(k.rejected);
            o.undelivered += u64::from(k.undelivered);
            o.rejected_batches += u64::from(matches!(c, Completion::Rejected { .. }));
        }
        o
    }
}

/// Batch `i` of `per` events; events whose sequence number is in `bad` carry the marker.
fn batch(i: u64, per: u64, bad: &HashSet<u64>, ctx: &Ctx) -> Delivery {
    let body = (i * per..(i + 1) * per)
        .map(|s| event(s, if bad.contains(&s) { " BADEVT" } else { "" }))
        .collect::<Vec<_>>()
        .join("\n");
    let mut b = EncodedBatch::from_lines(Bytes::from(body)).unwrap();
    ctx.live.fetch_add(1, Ordering::SeqCst);
    b.hold(HoldKind::Events, Ticket(Arc::clone(&ctx.live)));
    Delivery::new(b, ctx.rec.clone())
}

fn sink(faults: Faults, ack: bool) -> SinkHandle {
    SinkHandle::spawn_thread(SinkConfig {
        token: TOKEN.into(),
        threads: 2,
        faults,
        indexer_ack: ack,
        ..SinkConfig::default()
    })
    .expect("sink starts")
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

fn fast_ack() -> Option<AckConfig> {
    Some(AckConfig {
        poll_interval: Duration::from_millis(20),
        timeout: Duration::from_millis(600),
        max_pending: 16,
    })
}

async fn run(cfg: ClientConfig, batches: Vec<Delivery>) -> Arc<Tally> {
    let stats = Arc::new(Tally::new());
    let out = stats.output(cfg).expect("valid config");
    let (tx, rx) = async_channel::unbounded();
    for b in batches {
        tx.send(b).await.unwrap();
    }
    drop(tx);
    tokio::time::timeout(Duration::from_secs(120), out.run(rx, AbortSignal::new()))
        .await
        .expect("run drains within the time limit");
    stats
}

fn tmp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "sluice-hec-{name}-{}-{}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[tokio::test]
async fn bad_events_are_isolated_dead_lettered_and_the_rest_delivered_once() {
    let s = sink(
        Faults {
            reject_event_marker: Some("BADEVT".into()),
            ..Faults::default()
        },
        false,
    );
    let bad: HashSet<u64> = [17, 4_321, 4_399].into();
    let live = Ctx::default();
    let batches = (0..20).map(|i| batch(i, 1000, &bad, &live)).collect();
    let dir = tmp_dir("dl");
    let mut cfg = config(vec![s.event_url()]);
    cfg.dead_letter = Some(DeadLetterConfig {
        dir: dir.clone(),
        max_bytes: 1 << 20,
    });
    let stats = run(cfg, batches).await;
    assert_eq!(live.outcome().undelivered, 0);
    let snap = stats.snapshot();
    assert_eq!(live.outcome().delivered, 20_000 - 3);
    assert_eq!(live.outcome().rejected, 3);
    // One 400 per bad event: the sink names it, the rest goes again without it.
    assert_eq!(snap.requests(RequestOutcome::BadRequest), 3);
    assert_eq!(
        live.outcome().rejected_batches,
        2,
        "batches 0 and 4 held bad events"
    );
    assert_eq!(live.holds(), 0, "every batch completed");
    let rep = s.seq_report(Some(20_000));
    assert_eq!(
        rep.duplicates, 0,
        "the sink indexed nothing of a refused request"
    );
    assert_eq!(rep.missing, 3);
    let gaps: Vec<(u64, u64)> = rep.per_thread[0].gaps.clone();
    assert_eq!(gaps, vec![(17, 17), (4_321, 4_321), (4_399, 4_399)]);
    // The dead-letter file holds exactly those three, with HEC's answer.
    let text = std::fs::read_to_string(dir.join("hec_rejected.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    for l in &lines {
        assert!(l["event"]["event"].as_str().unwrap().contains("BADEVT"));
        assert_eq!(l["status"], 400);
        assert_eq!(l["code"], 6);
        assert_eq!(l["text"], "Invalid data format");
        assert!(
            l["url"]
                .as_str()
                .unwrap()
                .ends_with("/services/collector/event")
        );
    }
    assert_eq!(stats.dead_letter.written_events(), 3);
    assert!(
        stats
            .dead_letter
            .rejected()
            .contains(&("invalid_data_format", 3))
    );
    // Two of the bad events share a batch: that batch went three times (999 then 998 again).
    let resent = stats.isolation.resent_events.load(Ordering::Relaxed);
    assert_eq!(resent, 999 + 999 + 998);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn resending_events_before_the_bad_one_duplicates_unless_told_to_trust_them() {
    for (policy, dups) in [(ResendPolicy::All, 500u64), (ResendPolicy::AfterInvalid, 0)] {
        let s = sink(
            Faults {
                reject_event_marker: Some("BADEVT".into()),
                // What Splunk may do: index the events before the one it names.
                index_before_invalid: true,
                ..Faults::default()
            },
            false,
        );
        let bad: HashSet<u64> = [500].into();
        let live = Ctx::default();
        let mut cfg = config(vec![s.event_url()]);
        cfg.resend_policy = policy;
        run(cfg, vec![batch(0, 1000, &bad, &live)]).await;
        let rep = s.seq_report(Some(1000));
        assert_eq!(rep.missing, 1, "{policy:?}: only the bad event is missing");
        assert_eq!(rep.duplicates, dups, "{policy:?}");
        assert_eq!(live.outcome().rejected, 1);
    }
}

#[tokio::test]
async fn without_the_event_number_a_400_is_bisected() {
    let s = sink(
        Faults {
            reject_event_marker: Some("BADEVT".into()),
            omit_event_number: true,
            ..Faults::default()
        },
        false,
    );
    let bad: HashSet<u64> = [3, 700, 701].into();
    let live = Ctx::default();
    let stats = run(
        config(vec![s.event_url()]),
        vec![batch(0, 1000, &bad, &live)],
    )
    .await;
    let snap = stats.snapshot();
    assert_eq!(live.outcome().delivered, 997);
    assert_eq!(live.outcome().rejected, 3);
    let rep = s.seq_report(Some(1000));
    assert_eq!((rep.missing, rep.duplicates), (3, 0));
    // Each bad event costs at most two requests per halving level (10 levels for 1000).
    let bad_requests = snap.requests(RequestOutcome::BadRequest);
    assert!(
        bad_requests <= 3 * 10 + 1,
        "{bad_requests} refused requests"
    );
}

#[tokio::test]
async fn lost_requests_are_resent_after_the_ack_timeout_and_nothing_is_lost() {
    let s = sink(
        Faults {
            lose_every: Some(7),
            ..Faults::default()
        },
        true,
    );
    let live = Ctx::default();
    let none = HashSet::new();
    let batches = (0..100).map(|i| batch(i, 200, &none, &live)).collect();
    let mut cfg = config(vec![s.event_url()]);
    cfg.ack = fast_ack();
    let stats = run(cfg, batches).await;
    assert_eq!(live.outcome().undelivered, 0);
    let rep = s.seq_report(Some(20_000));
    assert_eq!(rep.missing, 0, "every event indexed");
    assert!(
        rep.duplicates * 20 <= 20_000,
        "duplicates {} over 5%",
        rep.duplicates
    );
    let ack = stats.ack.snapshot();
    let st = s.stats();
    assert!(st.lost_requests > 0);
    assert_eq!(
        ack.timed_out_requests, st.lost_requests,
        "each lost one timed out"
    );
    assert_eq!(ack.resent_events, st.lost_events);
    assert_eq!(ack.acked_events, 20_000, "every event acked once");
    assert_eq!(ack.pending, 0);
    assert_eq!(live.outcome().delivered, 20_000);
    assert_eq!(live.holds(), 0);
}

#[tokio::test]
async fn a_batch_completes_only_when_acked_and_garbage_is_no_ack() {
    let s = sink(
        Faults {
            ack_garbage: true,
            ..Faults::default()
        },
        true,
    );
    let live = Ctx::default();
    let none = HashSet::new();
    let stats = Arc::new(Tally::new());
    let mut cfg = config(vec![s.event_url()]);
    cfg.ack = fast_ack();
    let out = stats.output(cfg).unwrap();
    let (tx, rx) = async_channel::unbounded();
    for i in 0..4 {
        tx.send(batch(i, 10, &none, &live)).await.unwrap();
    }
    drop(tx);
    let abort = AbortSignal::new();
    let task = tokio::spawn(out.run(rx, abort.clone()));
    let end = Instant::now() + Duration::from_secs(20);
    while stats.ack.snapshot().query_errors < 5 {
        assert!(Instant::now() < end, "ack queries never failed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(live.outcome().delivered, 0, "garbage is not an ack");
    assert_eq!(live.holds(), 4, "batches held until acked");
    // Ack answers become valid: everything completes.
    s.update_faults(|f| f.ack_garbage = false);
    let end = Instant::now() + Duration::from_secs(20);
    while live.holds() > 0 {
        assert!(Instant::now() < end, "batches never completed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.await.unwrap();
    assert_eq!(live.outcome().undelivered, 0);
    assert_eq!(live.outcome().delivered, 40);
    assert_eq!(s.seq_report(Some(40)).missing, 0);
}

#[tokio::test]
async fn a_token_requiring_a_channel_holds_events_instead_of_dropping_them() {
    let s = sink(Faults::default(), true);
    let live = Ctx::default();
    let none = HashSet::new();
    let stats = Arc::new(Tally::new());
    let out = stats.output(config(vec![s.event_url()])).unwrap();
    let (tx, rx) = async_channel::unbounded();
    tx.send(batch(0, 10, &none, &live)).await.unwrap();
    drop(tx);
    let abort = AbortSignal::new();
    let task = tokio::spawn(out.run(rx, abort.clone()));
    let end = Instant::now() + Duration::from_secs(20);
    while stats
        .snapshot()
        .retried_requests(RetryReason::Http400Request)
        < 3
    {
        assert!(Instant::now() < end, "never retried");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(live.outcome().rejected, 0);
    abort.cancel();
    task.await.unwrap();
    assert_eq!(live.outcome().undelivered, 10);
}

#[tokio::test]
async fn a_slow_hec_duplicates_at_most_one_batch_per_worker() {
    let timeout = Duration::from_millis(300);
    let s = sink(
        Faults {
            // Answers after twice the timeout; the events are indexed before the answer.
            delay: Some(timeout * 2),
            ..Faults::default()
        },
        false,
    );
    let live = Ctx::default();
    let none = HashSet::new();
    let per = 500;
    let batches = (0..16).map(|i| batch(i, per, &none, &live)).collect();
    let mut cfg = config(vec![s.event_url()]);
    cfg.timeout = timeout;
    let workers = cfg.workers as u64;
    let stats = run(cfg, batches).await;
    assert_eq!(live.outcome().undelivered, 0);
    let rep = s.seq_report(Some(16 * per));
    assert_eq!(rep.missing, 0);
    assert!(
        rep.duplicates <= workers * per,
        "{} duplicates > one batch per worker ({})",
        rep.duplicates,
        workers * per
    );
    let snap = stats.snapshot();
    assert!(snap.requests(RequestOutcome::Timeout) >= 1);
    assert!(snap.requests(RequestOutcome::Timeout) <= workers);
    eprintln!(
        "slow HEC: {} duplicates of {} events, {} timeouts, {} latency splits",
        rep.duplicates,
        16 * per,
        snap.requests(RequestOutcome::Timeout),
        stats.isolation.latency_splits.load(Ordering::Relaxed)
    );
}

#[tokio::test]
async fn a_url_that_goes_down_fails_over_without_loss_and_is_probed_back() {
    let a = sink(Faults::default(), false);
    let b = sink(Faults::default(), false);
    let live = Ctx::default();
    let none = HashSet::new();
    let stats = Arc::new(Tally::new());
    let out = stats
        .output(config(vec![a.event_url(), b.event_url()]))
        .unwrap();
    let (tx, rx) = async_channel::bounded(4);
    let abort = AbortSignal::new();
    let task = tokio::spawn(out.run(rx, abort.clone()));
    for i in 0..20 {
        tx.send(batch(i, 100, &none, &live)).await.unwrap();
    }
    // A goes down (503 to events and to its health check).
    a.update_faults(|f| f.busy_until = Some(Instant::now() + Duration::from_secs(2)));
    for i in 20..60 {
        tx.send(batch(i, 100, &none, &live)).await.unwrap();
    }
    let board = Arc::clone(stats.board());
    // A comes back: the prober brings it in.
    let end = Instant::now() + Duration::from_secs(20);
    while !board.get(0).unwrap().is_up() {
        assert!(Instant::now() < end, "A never came back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for i in 60..80 {
        tx.send(batch(i, 100, &none, &live)).await.unwrap();
    }
    drop(tx);
    task.await.unwrap();
    assert_eq!(live.outcome().undelivered, 0);
    let total = a.accepted_events() + b.accepted_events();
    assert_eq!(total, 8000, "no loss, no duplicate");
    let busy = a.stats().rejected(sluice_bench::RejectReason::FaultBusy);
    assert!(busy > 0, "A was sent events while down");
    let (ua, ub) = (stats.url(0), stats.url(1));
    assert!(ua.taken_out.load(Ordering::Relaxed) >= 1);
    assert!(ua.probed_in.load(Ordering::Relaxed) >= 1);
    assert!(ua.failovers.load(Ordering::Relaxed) >= 1);
    assert_eq!(ua.class("5xx"), busy, "5xx reported for A");
    assert_eq!(ub.class("5xx"), 0);
    assert!(ua.successes.load(Ordering::Relaxed) > 0 && ub.successes.load(Ordering::Relaxed) > 0);
    assert!(stats.degraded_reason().is_none());
    assert_eq!(live.holds(), 0);
}

#[tokio::test]
async fn every_url_out_is_degraded_with_the_reason() {
    let a = sink(
        Faults {
            busy_until: Some(Instant::now() + Duration::from_secs(3600)),
            ..Faults::default()
        },
        false,
    );
    let stats = Arc::new(Tally::new());
    let out = stats.output(config(vec![a.event_url()])).unwrap();
    let (tx, rx) = async_channel::unbounded();
    let live = Ctx::default();
    tx.send(batch(0, 5, &HashSet::new(), &live)).await.unwrap();
    let abort = AbortSignal::new();
    let task = tokio::spawn(out.run(rx, abort.clone()));
    let end = Instant::now() + Duration::from_secs(20);
    while stats.degraded_reason().is_none() {
        assert!(Instant::now() < end, "never degraded");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = stats.degraded_reason().unwrap();
    assert!(
        r.contains("http_5xx") && r.contains(&a.addr().to_string()),
        "{r}"
    );
    abort.cancel();
    drop(tx);
    task.await.unwrap();
    assert_eq!(live.outcome().undelivered, 5);
}

#[test]
fn an_unwritable_dead_letter_directory_is_a_startup_error() {
    let dir = tmp_dir("unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let mut cfg = config(vec!["http://127.0.0.1:9/".into()]);
    cfg.dead_letter = Some(DeadLetterConfig {
        dir: file.join("dl"),
        max_bytes: 1000,
    });
    let e = Arc::new(Tally::new()).output(cfg).unwrap_err().to_string();
    assert!(
        e.contains("not-a-dir/dl") && e.contains("dead-letter"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// The same incident (answers after twice the timeout for 2 s, then normal again) with and
/// without the slow-indexer handling: without it every timeout sends the whole batch again
/// and Splunk indexes each copy.
#[tokio::test]
async fn slow_indexer_handling_bounds_what_an_incident_duplicates() {
    let timeout = Duration::from_millis(300);
    let per = 500u64;
    let mut dups = Vec::new();
    for (factor, depth) in [(1u32, 0u8), (4, 2)] {
        let s = sink(
            Faults {
                delay: Some(timeout * 2),
                ..Faults::default()
            },
            false,
        );
        let live = Ctx::default();
        let none = HashSet::new();
        let mut cfg = config(vec![s.event_url()]);
        cfg.timeout = timeout;
        cfg.slow_timeout_factor = factor;
        cfg.latency_split_depth = depth;
        let workers = cfg.workers as u64;
        let stats = Arc::new(Tally::new());
        let out = stats.output(cfg).unwrap();
        let (tx, rx) = async_channel::unbounded();
        for i in 0..8 {
            tx.send(batch(i, per, &none, &live)).await.unwrap();
        }
        drop(tx);
        let task = tokio::spawn(out.run(rx, AbortSignal::new()));
        tokio::time::sleep(Duration::from_secs(2)).await;
        s.update_faults(|f| f.delay = None);
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(live.outcome().undelivered, 0);
        let rep = s.seq_report(Some(8 * per));
        assert_eq!(rep.missing, 0);
        eprintln!(
            "slow incident, factor {factor}, split depth {depth}: {} duplicates of {} events \
             ({} timeouts)",
            rep.duplicates,
            8 * per,
            stats.snapshot().requests(RequestOutcome::Timeout)
        );
        dups.push((rep.duplicates, workers * per));
    }
    let (without, bound) = dups[0];
    let (with, _) = dups[1];
    assert!(with <= bound, "{with} > one batch per worker");
    assert!(
        without > bound,
        "without the handling every timeout duplicates a batch ({without})"
    );
}

/// A connection-level round-robin balancer in front of two indexers: each new TCP
/// connection goes to the next backend, as an L4 load balancer would send it.
async fn round_robin_balancer(backends: Vec<std::net::SocketAddr>) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut next = 0usize;
        loop {
            let Ok((mut inbound, _)) = listener.accept().await else {
                return;
            };
            let backend = backends[next % backends.len()];
            next += 1;
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(backend).await {
                    let _ = inbound.set_nodelay(true);
                    let _ = outbound.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    addr
}

/// Acks are per indexer, and every indexer numbers a channel's IDs from 0. Each worker asks
/// for its acks over its own keep-alive connection, so behind a balancer that spreads
/// connections the query reaches the indexer that took the data. `Connection: close` would
/// break that (a query could read another indexer's ID as true), so it is ignored with ack.
#[tokio::test]
async fn behind_a_connection_balancer_acks_follow_the_connection() {
    let mut figures = Vec::new();
    for close in [false, true] {
        let a = sink(Faults::default(), true);
        let b = sink(Faults::default(), true);
        let lb = round_robin_balancer(vec![a.addr(), b.addr()]).await;
        let live = Ctx::default();
        let none = HashSet::new();
        let batches = (0..40).map(|i| batch(i, 100, &none, &live)).collect();
        let mut cfg = config(vec![format!("http://{lb}/services/collector/event")]);
        cfg.ack = Some(AckConfig {
            poll_interval: Duration::from_millis(20),
            timeout: Duration::from_millis(400),
            max_pending: 4,
        });
        cfg.connection_close = close;
        let stats = run(cfg, batches).await;
        assert_eq!(live.outcome().undelivered, 0);
        let indexed = a.accepted_events() + b.accepted_events();
        let ack = stats.ack.snapshot();
        let dups = indexed - 4000;
        let mut seen = a.seq_report(None);
        let rb = b.seq_report(None);
        seen.distinct += rb.distinct;
        assert!(seen.distinct >= 4000, "nothing lost ({close})");
        let connections = a.stats().connections + b.stats().connections;
        eprintln!(
            "balancer, connection_close={close}: 4000 events, {dups} duplicates, {} ack \
             timeouts, {connections} connections",
            ack.timed_out_requests,
        );
        assert!(
            connections <= 4,
            "one connection per worker ({connections})"
        );
        figures.push((dups, ack.timed_out_requests));
        assert_eq!(live.holds(), 0);
    }
    assert_eq!(
        figures[0],
        (0, 0),
        "pinned connections: no ack timeout, no duplicate"
    );
    assert_eq!(
        figures[1],
        (0, 0),
        "connection_close is overridden with ack"
    );
}
