use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use sluice_buffer::BufferConfig;
use sluice_proto::batch::HoldKind;

use super::*;
use crate::output::{Destination, Output, OutputTask};

/// An output that delivers only while its gate is open; until then it holds what it took
/// (like HEC retrying a refused batch). At the abort, what it holds is abandoned.
struct Gate {
    open: Arc<AtomicBool>,
    delivered: Arc<AtomicU64>,
}

impl Output for Gate {
    fn kind(&self) -> &'static str {
        "hec"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(async move {
            loop {
                let d = tokio::select! {
                    () = abort.cancelled() => return,
                    r = queue.recv() => match r { Ok(d) => d, Err(_) => return },
                };
                loop {
                    if self.open.load(Ordering::SeqCst) {
                        self.delivered
                            .fetch_add(u64::from(d.events()), Ordering::SeqCst);
                        d.complete(Completion::Delivered);
                        break;
                    }
                    tokio::select! {
                        () = abort.cancelled() => {
                            d.complete(Completion::Abandoned { reason: AbandonReason::Shutdown });
                            return;
                        }
                        () = tokio::time::sleep(Duration::from_millis(2)) => {}
                    }
                }
            }
        })
    }
}

struct Rig {
    window: Arc<Window>,
    memory: Arc<MemoryBudget>,
    open: Arc<AtomicBool>,
    /// What the buffer is told of the output's health (HEC: some URL in service).
    up: Arc<AtomicBool>,
    delivered: Arc<AtomicU64>,
    dest: Destination,
    submit: Option<crate::output::Submit>,
}

fn rig(dir: &std::path::Path, reliable: bool, open: bool) -> Rig {
    let window = Window::new("udp", 1000);
    let memory = MemoryBudget::new(1 << 30);
    let mut cfg = BufferConfig::new(dir);
    cfg.max_bytes = 64 << 20;
    cfg.flush_interval = Duration::from_millis(20);
    if reliable {
        cfg.mode = sluice_buffer::DurabilityMode::Reliable;
    }
    let buffer = Buffer::open(cfg, &["default"]).unwrap();
    let open = Arc::new(AtomicBool::new(open));
    let up = Arc::new(AtomicBool::new(true));
    let delivered = Arc::new(AtomicU64::new(0));
    let output = Gate {
        open: open.clone(),
        delivered: delivered.clone(),
    };
    let opts = BufferOptions {
        buffer,
        reliable,
        windows: vec![window.clone()],
        memory: memory.clone(),
        high_water: 0.5,
        queue: 1,
        replay_memory: None,
        output_up: {
            let up = up.clone();
            Box::new(move || up.load(Ordering::SeqCst))
        },
    };
    let (dest, submit) = Destination::start_buffered("default", Box::new(output), opts).unwrap();
    Rig {
        window,
        memory,
        open,
        up,
        delivered,
        dest,
        submit: Some(submit),
    }
}

impl Rig {
    /// A batch of `n` events holding `n` window permits.
    async fn submit(&self, n: u32, tag: u32) {
        let body = (0..n)
            .map(|i| format!("{{\"e\":\"{tag}-{i}\"}}"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut b = EncodedBatch::from_lines(Bytes::from(body)).unwrap();
        let permit = self
            .window
            .acquire(n, &CancellationToken::new())
            .await
            .unwrap();
        b.hold(HoldKind::Events, permit);
        self.submit.as_ref().unwrap().submit(b);
    }

    async fn wait(&self, what: &str, f: impl Fn(&Rig) -> bool) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !f(self) {
            assert!(std::time::Instant::now() < deadline, "timed out: {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn buffer(&self) -> &Arc<BufferMetrics> {
        self.dest.buffer().unwrap()
    }

    async fn drain(mut self, within: Duration) -> (crate::output::DrainSummary, u64) {
        drop(self.submit.take());
        let s = self.dest.drain(Instant::now() + within).await;
        (s, self.delivered.load(Ordering::SeqCst))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_mode_spills_what_a_stuck_output_cannot_take_and_delivers_it_later() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(dir.path(), false, false);
    for i in 0..20 {
        r.submit(10, i).await;
    }
    // At most one batch with the output and one in its queue: the others went to disk and
    // their window slots are free again.
    r.wait("spilled", |r| {
        r.window.in_use() <= 20 && r.buffer().spilled_events() + r.window.in_use() == 200
    })
    .await;
    let spilled = r.buffer().spilled_events();
    assert_eq!(r.delivered.load(Ordering::SeqCst), 0);
    assert!(r.buffer().degraded().is_some());
    r.open.store(true, Ordering::SeqCst);
    r.wait("all delivered", |r| {
        r.delivered.load(Ordering::SeqCst) == 200
    })
    .await;
    r.wait("buffer empty", |r| r.buffer().stats().events == 0)
        .await;
    assert_eq!(r.window.in_use(), 0);
    assert_eq!(r.memory.in_use_bytes(), 0);
    let stats = r.dest.stats().clone();
    let (s, delivered) = r.drain(Duration::from_secs(5)).await;
    assert_eq!(delivered, 200);
    assert_eq!((s.delivered, s.lost, s.kept), (200, 0, 0), "{s:?}");
    assert_eq!(stats.buffered_events(), spilled);
    assert_eq!(stats.in_flight_events(), 0);
}

/// An output that keeps up, but takes a moment per batch (a HEC round trip).
struct Paced {
    per_batch: Duration,
    delivered: Arc<AtomicU64>,
}

impl Output for Paced {
    fn kind(&self) -> &'static str {
        "hec"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        _abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(async move {
            while let Ok(d) = queue.recv().await {
                tokio::time::sleep(self.per_batch).await;
                self.delivered
                    .fetch_add(u64::from(d.events()), Ordering::SeqCst);
                d.complete(Completion::Delivered);
            }
        })
    }
}

/// Submits `batches` batches of ten at once, each holding ten permits of `window`, to a
/// normal-mode buffered destination with a queue of one in front of a [`Paced`] output; waits
/// until all are delivered. Returns the events that went to disk and the drain's summary.
async fn submit_to_paced(
    window: Arc<Window>,
    per_batch: Duration,
    batches: u32,
) -> (u64, crate::output::DrainSummary) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = BufferConfig::new(dir.path());
    cfg.max_bytes = 64 << 20;
    let delivered = Arc::new(AtomicU64::new(0));
    let opts = BufferOptions {
        buffer: Buffer::open(cfg, &["default"]).unwrap(),
        reliable: false,
        windows: vec![window.clone()],
        memory: MemoryBudget::new(1 << 30),
        high_water: 0.5,
        queue: 1,
        replay_memory: None,
        output_up: Box::new(|| true),
    };
    let output = Paced {
        per_batch,
        delivered: delivered.clone(),
    };
    let (dest, submit) = Destination::start_buffered("default", Box::new(output), opts).unwrap();
    for tag in 0..batches {
        let body = (0..10)
            .map(|i| format!("{{\"e\":\"{tag}-{i}\"}}"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut b = EncodedBatch::from_lines(Bytes::from(body)).unwrap();
        let permit = window.acquire(10, &CancellationToken::new()).await.unwrap();
        b.hold(HoldKind::Events, permit);
        submit.submit(b);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while delivered.load(Ordering::SeqCst) < u64::from(batches) * 10 {
        assert!(std::time::Instant::now() < deadline, "not all delivered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let spilled = dest.buffer().unwrap().spilled_events();
    drop(submit);
    (
        spilled,
        dest.drain(Instant::now() + Duration::from_secs(5)).await,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_mode_does_not_spill_for_an_output_that_keeps_up() {
    // Ten batches at once: the queue of one is full for a few round trips, far less than
    // the grace, so nothing goes to disk.
    let window = Window::new("udp", 1000);
    let (spilled, s) = submit_to_paced(window, Duration::from_millis(5), 10).await;
    assert_eq!(spilled, 0);
    assert_eq!((s.delivered, s.lost), (100, 0), "{s:?}");
}

/// A TCP load faster than the output: the stream window is past its high-water mark and
/// batches queue up behind a queue of one, but the output takes one every few milliseconds.
/// It is busy, not behind: the receivers are held back by the window, nothing goes to disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_mode_holds_streams_back_rather_than_spilling_for_a_busy_output() {
    // 60 batches of 10 at once: 600 of 1000 permits held (past the 0.5 mark) and 1.2 s of
    // work behind a queue of one, twelve times the grace.
    let window = Window::pushing_back("tcp", 1000);
    let (spilled, s) = submit_to_paced(window, Duration::from_millis(20), 60).await;
    assert_eq!(spilled, 0);
    assert_eq!((s.delivered, s.lost), (600, 0), "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_mode_spills_past_the_window_high_water_mark() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(dir.path(), false, true);
    // 600 of 1000 permits held by the test: past the 0.5 mark, so even an idle output does
    // not get new batches from memory.
    let _held = r
        .window
        .acquire(600, &CancellationToken::new())
        .await
        .unwrap();
    r.submit(10, 0).await;
    r.wait("spilled", |r| r.buffer().spilled_events() == 10)
        .await;
    r.wait("delivered from disk", |r| {
        r.delivered.load(Ordering::SeqCst) == 10
    })
    .await;
    let (s, _) = r.drain(Duration::from_secs(5)).await;
    assert_eq!((s.delivered, s.lost), (10, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reliable_mode_persists_every_batch_before_freeing_its_window_slots() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(dir.path(), true, false);
    for i in 0..5 {
        r.submit(10, i).await;
    }
    r.wait("all on disk", |r| r.buffer().stats().events == 50)
        .await;
    // Every batch was written and synced, then handed over: none waits in memory.
    r.wait("window freed", |r| r.window.in_use() == 0).await;
    assert_eq!(
        r.buffer().spilled_events(),
        0,
        "reliable mode does not spill"
    );
    r.open.store(true, Ordering::SeqCst);
    r.wait("delivered", |r| r.delivered.load(Ordering::SeqCst) == 50)
        .await;
    let (s, _) = r.drain(Duration::from_secs(5)).await;
    assert_eq!((s.delivered, s.lost, s.kept), (50, 0, 0), "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_undelivered_at_the_drain_timeout_is_kept_and_replayed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(dir.path(), false, false);
    for i in 0..6 {
        r.submit(10, i).await;
    }
    r.wait("spilled", |r| {
        r.window.in_use() <= 20 && r.buffer().spilled_events() + r.window.in_use() == 60
    })
    .await;
    let in_memory = r.window.in_use();
    // The output never delivers: at the timeout, what it holds and what is queued are
    // written to the buffer too (rescued), the rest was there already.
    let (s, delivered) = r.drain(Duration::from_millis(300)).await;
    assert_eq!(delivered, 0);
    assert!(s.timed_out);
    assert_eq!(s.lost, 0, "{s:?}");
    assert_eq!(s.kept, 60, "{s:?}");
    assert_eq!(s.rescued, in_memory, "{s:?}");

    let next = rig(dir.path(), false, true);
    assert_eq!(next.buffer().recovered_events, 60);
    next.wait("replayed", |r| r.delivered.load(Ordering::SeqCst) == 60)
        .await;
    let (s, _) = next.drain(Duration::from_secs(5)).await;
    assert_eq!((s.delivered, s.lost, s.kept), (60, 0, 0), "{s:?}");
}

/// The output never delivers and is reported failing: the drain does not wait for the
/// deadline; everything goes to disk and the next run delivers it.
async fn failing_output_stops_at_once(reliable: bool, fail_after: Option<Duration>) {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(dir.path(), reliable, false);
    if fail_after.is_none() {
        r.up.store(false, Ordering::SeqCst);
    }
    for i in 0..6 {
        r.submit(10, i).await;
    }
    r.wait("all safe", |r| r.window.in_use() <= 20).await;
    let up = r.up.clone();
    if let Some(after) = fail_after {
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            up.store(false, Ordering::SeqCst);
        });
    }
    let started = std::time::Instant::now();
    let (s, delivered) = r.drain(Duration::from_secs(30)).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "the stop took {took:?}");
    assert_eq!(delivered, 0);
    assert!(!s.timed_out, "{s:?}");
    assert_eq!((s.lost, s.kept), (0, 60), "{s:?}");

    let next = rig(dir.path(), reliable, true);
    next.wait("replayed", |r| r.delivered.load(Ordering::SeqCst) == 60)
        .await;
    let (s, _) = next.drain(Duration::from_secs(5)).await;
    assert_eq!((s.delivered, s.lost, s.kept), (60, 0, 0), "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn normal_mode_with_a_failing_output_stops_at_once_and_loses_nothing() {
    failing_output_stops_at_once(false, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reliable_mode_with_a_failing_output_stops_at_once_and_loses_nothing() {
    failing_output_stops_at_once(true, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_that_fails_during_the_drain_stops_it_at_once() {
    failing_output_stops_at_once(false, Some(Duration::from_millis(300))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_destination_on_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Buffer::open(BufferConfig::new(dir.path()), &["default"]).unwrap();
    let e = Buffer::open(BufferConfig::new(dir.path()), &["default"]).unwrap_err();
    assert!(e.to_string().contains("in use"), "{e}");
}

/// An output that takes every delivery offered and keeps it, uncompleted, until the test
/// delivers what it holds.
struct Holder {
    held: Arc<std::sync::Mutex<Vec<Delivery>>>,
}

impl Output for Holder {
    fn kind(&self) -> &'static str {
        "hec"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(async move {
            loop {
                tokio::select! {
                    () = abort.cancelled() => return,
                    r = queue.recv() => match r {
                        Ok(d) => self.held.lock().unwrap().push(d),
                        Err(_) => return,
                    },
                }
            }
        })
    }
}

/// Reliable mode with `replay_memory`: the records read back for a stuck output hold at most
/// that many bytes; as the output completes them, the rest follows.
async fn held_by_a_stuck_output(replay_memory: Option<u64>) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = BufferConfig::new(dir.path());
    cfg.max_bytes = 64 << 20;
    cfg.mode = sluice_buffer::DurabilityMode::Reliable;
    let window = Window::new("udp", 1000);
    let held = Arc::new(std::sync::Mutex::new(Vec::new()));
    let opts = BufferOptions {
        buffer: Buffer::open(cfg, &["default"]).unwrap(),
        reliable: true,
        windows: vec![window.clone()],
        memory: MemoryBudget::new(1 << 30),
        high_water: 0.5,
        queue: 1,
        replay_memory,
        output_up: Box::new(|| true),
    };
    let output = Holder { held: held.clone() };
    let (dest, submit) = Destination::start_buffered("default", Box::new(output), opts).unwrap();
    // 20 records of 10 events, each 10 x 11 bytes + 9 newlines = 119 bytes.
    for tag in 0..20u32 {
        let body = (0..10)
            .map(|i| format!("{{\"e\":\"{tag}-{i}\"}}"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut b = EncodedBatch::from_lines(Bytes::from(body)).unwrap();
        assert_eq!(b.body().len(), if tag < 10 { 119 } else { 129 });
        let permit = window.acquire(10, &CancellationToken::new()).await.unwrap();
        b.hold(HoldKind::Events, permit);
        submit.submit(b);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while window.in_use() > 0 {
        assert!(std::time::Instant::now() < deadline, "not all on disk");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Time for the replay to read ahead as far as it may.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let first = held.lock().unwrap().len();
    // Deliver what is held until everything came through.
    let mut total = 0;
    while total < 20 {
        assert!(
            std::time::Instant::now() < deadline,
            "only {total} of 20 came through"
        );
        let now: Vec<Delivery> = std::mem::take(&mut *held.lock().unwrap());
        total += now.len();
        now.into_iter()
            .for_each(|d| d.complete(Completion::Delivered));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(submit);
    drop(dest);
    (first, total)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reliable_mode_holds_at_most_replay_memory_bytes_read_back() {
    // 300 bytes: two 119-byte records; the third waits on disk.
    let (first, total) = held_by_a_stuck_output(Some(300)).await;
    assert_eq!(first, 2, "records held by the output");
    assert_eq!(total, 20);
    // Without the bound the output takes everything.
    let (first, total) = held_by_a_stuck_output(None).await;
    assert_eq!(first, 20);
    assert_eq!(total, 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_damaged_on_disk_replays_its_intact_events() {
    let dir = tempfile::tempdir().unwrap();
    let events: Vec<String> = (0..5).map(|i| format!("{{\"e\":{i}}}")).collect();
    let batch = EncodedBatch::from_lines(Bytes::from(events.join("\n"))).unwrap();
    {
        let b = Buffer::open(BufferConfig::new(dir.path()), &["default"]).unwrap();
        b.writer().append(record(&batch)).unwrap();
        b.close().unwrap();
    }
    // A flipped byte in the last event: the event before it ends the batch now.
    let seg = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dat"))
        .unwrap();
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.len() - 2;
    bytes[at] ^= 0x01;
    std::fs::write(&seg, &bytes).unwrap();

    let held = Arc::new(std::sync::Mutex::new(Vec::new()));
    let opts = BufferOptions {
        buffer: Buffer::open(BufferConfig::new(dir.path()), &["default"]).unwrap(),
        reliable: false,
        windows: vec![Window::new("udp", 1000)],
        memory: MemoryBudget::new(1 << 30),
        high_water: 0.5,
        queue: 1,
        replay_memory: None,
        output_up: Box::new(|| true),
    };
    let output = Holder { held: held.clone() };
    let (dest, submit) = Destination::start_buffered("default", Box::new(output), opts).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let d = loop {
        if let Some(d) = held.lock().unwrap().pop() {
            break d;
        }
        assert!(std::time::Instant::now() < deadline, "nothing replayed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert_eq!(d.events(), 4);
    assert_eq!(d.batch().body().as_ref(), events[..4].join("\n").as_bytes());
    assert_eq!(d.batch().event(3), Some(events[3].as_bytes()));
    d.complete(Completion::Delivered);
    drop(submit);
    drop(dest);
}
