//! Hand-off cost of one encoded batch from a UDP receive thread to the output, through the
//! production code: a plain OS thread acquires window permits the way the receive loop does
//! (one `acquire_blocking` per `recvmmsg` of `fetch_limit` = 1000 datagrams, merged into the
//! open batch's permit by `Emitter::hold`), then `Emitter::emit` moves exactly the batch's
//! permits into an `EncodedBatch` of 5000 events (SC4S's batch-lines) and `try_send`s it on
//! the unbounded `async_channel` after charging its size to the memory budget; a task on a tokio runtime receives it and drops it, which
//! returns the permits to the window (what a HEC worker does after a 2xx).
//!
//! Variants:
//! * `channel_only`: the same send and receive with no permits, the floor;
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
use sluice::pipeline::{Emitter, ReceiverCounters};
use sluice::window::{MemoryBudget, Window};
use sluice_hec::EncodedBatch;
use tokio_util::sync::CancellationToken;

const BATCH_EVENTS: u32 = 5000;
const FETCH_LIMIT: u32 = 1000;

/// Sends `batches` batches from this thread and waits until the consumer has dropped them.
fn run(rt: &tokio::runtime::Runtime, window: Option<&Arc<Window>>, batches: u64) -> Duration {
    let (tx, rx) = async_channel::unbounded::<EncodedBatch>();
    let consumer = rt.spawn(async move {
        let mut events = 0u64;
        while let Ok(batch) = rx.recv().await {
            events += u64::from(batch.events);
            drop(batch);
        }
        events
    });
    let cancel = CancellationToken::new();
    // The default 1 GiB memory budget: every batch is charged to it (as in the daemon) but it
    // never runs out here, so only the window decides whether the producer waits.
    let mut emitter = Emitter::new(
        tx,
        Arc::new(ReceiverCounters::default()),
        MemoryBudget::new(1 << 30),
        rt.handle().clone(),
        cancel.clone(),
    );
    // The body is shared: encoding is measured by the encode bench, not here.
    let body = Bytes::from(vec![b'x'; 4096]);
    let start = Instant::now();
    for _ in 0..batches {
        if let Some(w) = window {
            for _ in 0..BATCH_EVENTS / FETCH_LIMIT {
                let permit = w
                    .acquire_blocking(FETCH_LIMIT, rt.handle(), &cancel)
                    .expect("the window is never closed here");
                emitter.hold(permit);
            }
        }
        emitter.emit(EncodedBatch::new(body.clone(), BATCH_EVENTS));
    }
    drop(emitter);
    let events = rt.block_on(consumer).expect("consumer task");
    let elapsed = start.elapsed();
    assert_eq!(events, batches * u64::from(BATCH_EVENTS));
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
