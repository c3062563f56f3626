//! Hand-off cost of one encoded batch from a UDP receive thread to the output, through the
//! production code: a plain OS thread acquires window permits the way the receive loop does
//! (one `acquire_blocking` per `recvmmsg` of `fetch_limit` = 1000 datagrams, merged into the
//! open batch's permit by `Emitter::hold`), then `Emitter::emit` moves exactly the batch's
//! permits into an `EncodedBatch` of 5000 events (SC4S's batch-lines) as its event hold,
//! charges its size to the memory budget, wraps it in a `Delivery` and submits it to a
//! `Destination`; the destination's output (a task on a tokio runtime) completes it as
//! `Delivered`, which counts it in the completion sink and returns the permits to the window
//! (what a HEC worker does after a 2xx).
//!
//! Variants:
//! * `channel_only`: the same submit and completion with no window permits, the floor;
//! * `window_roomy`: a window of 250,000 events (SC4S's UDP IW size): the producer never waits;
//! * `window_tight`: a window of two batches: the producer waits for the consumer about every
//!   other batch, so this includes the blocking acquire and its wake-up.
//!
//! Each iteration is one batch; the throughput line is in events (5000 per batch), so the
//! amortised cost per event is 1 / that rate.
//!
//! `cargo bench --bench window -- --warm-up-time 1 --measurement-time 3`

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice::output::{Destination, Output, OutputTask};
use sluice::pipeline::{Emitter, ReceiverCounters};
use sluice::window::{MemoryBudget, Window};
use sluice_proto::batch::EncodedBatch;
use sluice_proto::delivery::{Completion, Delivery};
use tokio_util::sync::CancellationToken;

const BATCH_EVENTS: u32 = 5000;
const FETCH_LIMIT: u32 = 1000;

/// An output that completes every delivery as delivered at once.
struct Consume;

impl Output for Consume {
    fn kind(&self) -> &'static str {
        "bench"
    }
    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        _abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(async move {
            while let Ok(d) = queue.recv().await {
                d.complete(Completion::Delivered);
            }
        })
    }
}

/// Sends `batches` batches from this thread and waits until the output has completed them.
fn run(rt: &tokio::runtime::Runtime, window: Option<&Arc<Window>>, batches: u64) -> Duration {
    let (destination, submit) =
        rt.block_on(async { Destination::start("bench", Box::new(Consume)) });
    let cancel = CancellationToken::new();
    // The default 1 GiB memory budget: every batch is charged to it (as in the daemon) but it
    // never runs out here, so only the window decides whether the producer waits.
    let mut emitter = Emitter::new(
        submit,
        Arc::new(ReceiverCounters::default()),
        MemoryBudget::new(1 << 30),
        rt.handle().clone(),
        cancel.clone(),
    );
    // The body is shared: encoding is measured by the encode bench, not here.
    let body = EncodedBatch::from_lines(Bytes::from(vec!["{}"; BATCH_EVENTS as usize].join("\n")))
        .expect("small body");
    // Built before the clock starts: the receive loop's builder hands its vectors over, it
    // does not copy them.
    let mut prepared: Vec<EncodedBatch> = (0..batches).map(|_| body.clone_events()).collect();
    let start = Instant::now();
    for batch in prepared.drain(..) {
        if let Some(w) = window {
            for _ in 0..BATCH_EVENTS / FETCH_LIMIT {
                let permit = w
                    .acquire_blocking(FETCH_LIMIT, rt.handle(), &cancel)
                    .expect("the window is never closed here");
                emitter.hold(permit);
            }
        }
        emitter.emit(batch);
    }
    drop(emitter);
    let far = tokio::time::Instant::now() + Duration::from_secs(3600);
    let summary = rt.block_on(destination.drain(far));
    let elapsed = start.elapsed();
    assert_eq!(summary.delivered, batches * u64::from(BATCH_EVENTS));
    assert_eq!(summary.lost, 0);
    if let Some(w) = window {
        assert_eq!(w.in_use(), 0, "every permit went back to the window");
    }
    elapsed
}

fn bench_handoff(c: &mut Criterion) {
    // One worker, like a HEC worker pool on a 2-core box: the producer thread and the
    // runtime's worker are different threads, so every wake-up crosses threads.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut group = c.benchmark_group("window_handoff");
    group.throughput(Throughput::Elements(u64::from(BATCH_EVENTS)));
    group.bench_function("channel_only", |b| b.iter_custom(|n| run(&rt, None, n)));
    let roomy = Window::new("udp", 250_000);
    group.bench_function("window_roomy", |b| {
        b.iter_custom(|n| run(&rt, Some(&roomy), n))
    });
    let tight = Window::new("udp", 2 * u64::from(BATCH_EVENTS));
    group.bench_function("window_tight", |b| {
        b.iter_custom(|n| run(&rt, Some(&tight), n))
    });
    group.finish();
}

criterion_group!(benches, bench_handoff);
criterion_main!(benches);
