//! Measures the HEC client's delivery rate against the test sink over loopback.
//!
//! `cargo run --release -p sluice-hec --example hec_throughput -- [workers] [seconds]
//! [events_per_batch] [gzip 0|1] [indexer ack 0|1]` (defaults 4 3 5000 0 0). A producer feeds pre-built
//! SC4S-shaped batches through a bounded channel; the rate is the client's delivered count.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use sluice_bench::{SinkConfig, SinkHandle};
use sluice_hec::{ClientConfig, HecEvent, HecObserver, HecOutput};
use sluice_proto::batch::EncodedBatch;
use sluice_proto::delivery::{Completion, CompletionSink, Delivery};
use tokio_util::sync::CancellationToken;

/// Counts the events of every completion by outcome.
#[derive(Debug, Default)]
struct Counts {
    delivered: AtomicU64,
    batches: AtomicU64,
    not_delivered: AtomicU64,
}

impl CompletionSink for Counts {
    fn completed(&self, batch: &EncodedBatch, completion: &Completion, _persisted: bool) {
        let c = completion.counts(batch.events());
        self.delivered
            .fetch_add(u64::from(c.delivered), Ordering::Relaxed);
        self.not_delivered
            .fetch_add(u64::from(c.rejected + c.undelivered), Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
    }
}

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let workers = arg(1, 4) as usize;
    let secs = arg(2, 3);
    let per = arg(3, 5000);
    let gzip = arg(4, 0) == 1;
    let ack = arg(5, 0) == 1;

    let sink = SinkHandle::spawn_thread(SinkConfig {
        token: "bench".into(),
        track_seq: false,
        threads: 1,
        indexer_ack: ack,
        ..SinkConfig::default()
    })
    .expect("sink starts");
    let body = Bytes::from(sluice_bench::sink::sample::sample_body(per as usize, 7));
    let body_len = body.len();
    let counts = Arc::new(Counts::default());
    let completions: Arc<dyn CompletionSink> = counts.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let stats = Arc::new(Sent::default());
    let cfg = ClientConfig {
        urls: vec![sink.event_url()],
        token: "bench".into(),
        workers,
        compression: gzip,
        ack: ack.then(|| sluice_hec::AckConfig {
            poll_interval: Duration::from_millis(100),
            ..Default::default()
        }),
        ..ClientConfig::default()
    };
    let out = HecOutput::new(cfg, stats.clone()).unwrap();
    let elapsed = rt.block_on(async move {
        let (tx, rx) = async_channel::bounded(workers * 2);
        let run = tokio::spawn(out.run(rx, CancellationToken::new()));
        let start = Instant::now();
        let end = start + Duration::from_secs(secs);
        let batch = EncodedBatch::from_lines(body.clone()).expect("sample body fits");
        assert_eq!(u64::from(batch.events()), per, "one line per event");
        while Instant::now() < end {
            let d = Delivery::new(batch.clone_events(), completions.clone());
            tx.send(d).await.unwrap();
        }
        drop(tx);
        run.await.unwrap();
        start.elapsed().as_secs_f64()
    });
    let (process_cpu, sink_cpu) = cpu_seconds().unwrap_or((0.0, 0.0));
    let delivered = counts.delivered.load(Ordering::Relaxed);
    assert_eq!(counts.not_delivered.load(Ordering::Relaxed), 0);
    assert_eq!(stats.retried.load(Ordering::Relaxed), 0, "no retries");
    println!(
        "client: {} events in {:.2}s = {:.0} events/s ({} batches of {per}, {} bytes/event, \
         {:.0} MB/s raw, {:.0} MB/s on the wire, gzip={gzip}, ack={ack}, {workers} workers; sink accepted {})",
        delivered,
        elapsed,
        delivered as f64 / elapsed,
        counts.batches.load(Ordering::Relaxed),
        body_len / per as usize,
        stats.raw.load(Ordering::Relaxed) as f64 / elapsed / 1e6,
        stats.sent.load(Ordering::Relaxed) as f64 / elapsed / 1e6,
        sink.accepted_events(),
    );
    let client_cpu = process_cpu - sink_cpu;
    if client_cpu > 0.0 {
        println!(
            "client CPU (everything but the sink threads): {client_cpu:.2} s = {:.3} µs/event; \
             sink CPU {sink_cpu:.2} s",
            client_cpu * 1e6 / delivered as f64
        );
    }
}

/// (whole process, sink threads) CPU seconds from /proc (Linux only).
fn cpu_seconds() -> Option<(f64, f64)> {
    let ticks = 100.0; // USER_HZ
    let cpu = |stat: &str| -> Option<u64> {
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    };
    let total = cpu(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    let mut sink = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        if std::fs::read_to_string(path.join("comm"))
            .ok()?
            .trim()
            .starts_with("hec-sink")
        {
            sink += cpu(&std::fs::read_to_string(path.join("stat")).ok()?)?;
        }
    }
    Some((total as f64 / ticks, sink as f64 / ticks))
}

/// What the client reports, tallied for the figures above.
#[derive(Debug, Default)]
struct Sent {
    raw: std::sync::atomic::AtomicU64,
    sent: std::sync::atomic::AtomicU64,
    retried: std::sync::atomic::AtomicU64,
}

impl HecObserver for Sent {
    fn observe(&self, event: HecEvent<'_>) {
        match event {
            HecEvent::Request { raw, sent, .. } => {
                self.raw.fetch_add(raw as u64, Ordering::Relaxed);
                self.sent.fetch_add(sent as u64, Ordering::Relaxed);
            }
            HecEvent::Retried { .. } => {
                self.retried.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}
