use std::time::Duration;

use bytes::Bytes;
use sluice_proto::batch::HoldKind;
use sluice_proto::delivery::{CompletionKind, Rejection, RetryReason};

use super::*;
use crate::output::OutputTask;
use crate::window::Window;

/// What the scripted output does with each delivery.
#[derive(Clone, Debug)]
enum Mode {
    /// Completes it with this.
    Complete(Completion),
    /// Marks it persisted, then completes it with this.
    PersistThen(Completion),
    /// Keeps it until the abort, then abandons it as the drain timeout.
    HoldUntilAbort,
    /// Drops it without a completion (a bug).
    Drop,
    /// Ends at once without taking anything.
    Exit,
}

struct Scripted(Mode);

impl Output for Scripted {
    fn kind(&self) -> &'static str {
        "hec"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(async move {
            if let Mode::Exit = self.0 {
                return;
            }
            let mut held = Vec::new();
            loop {
                let d = tokio::select! {
                    () = abort.cancelled() => break,
                    r = queue.recv() => match r { Ok(d) => d, Err(_) => break },
                };
                match &self.0 {
                    Mode::Complete(c) => d.complete(c.clone()),
                    Mode::PersistThen(c) => {
                        let mut d = d;
                        d.persisted();
                        d.complete(c.clone());
                    }
                    Mode::HoldUntilAbort => held.push(d),
                    Mode::Drop => drop(d),
                    Mode::Exit => unreachable!(),
                }
            }
            // Like HEC retrying a refused batch: nothing finishes until the abort.
            if !held.is_empty() {
                abort.cancelled().await;
            }
            for d in held {
                d.complete(Completion::Abandoned {
                    reason: AbandonReason::Shutdown,
                });
            }
        })
    }
}

/// A batch of `n` events holding `n` permits of `window`.
async fn batch(window: &Arc<Window>, n: u32) -> EncodedBatch {
    let body = vec!["{}"; n as usize].join("\n");
    let mut b = EncodedBatch::from_lines(Bytes::from(body)).unwrap();
    let permit = window
        .acquire(n, &CancellationToken::new())
        .await
        .expect("window open");
    b.hold(HoldKind::Events, permit);
    b
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

async fn run_one(mode: Mode, events: u32) -> (Arc<Window>, DrainSummary, Arc<DestinationStats>) {
    let window = Window::new("test", 100);
    let (dest, submit) = Destination::start("default", Box::new(Scripted(mode)));
    let stats = dest.stats().clone();
    submit.submit(batch(&window, events).await);
    drop(submit);
    let summary = dest.drain(soon()).await;
    (window, summary, stats)
}

#[tokio::test]
async fn delivered_releases_the_window_and_counts_delivered_events() {
    let (window, summary, stats) = run_one(Mode::Complete(Completion::Delivered), 7).await;
    assert_eq!(window.in_use(), 0);
    assert_eq!(
        summary,
        DrainSummary {
            delivered: 7,
            rejected: 0,
            lost: 0,
            timed_out: false,
            kept: 0,
            rescued: 0,
        }
    );
    assert_eq!(stats.completions(CompletionKind::Delivered), 1);
    assert_eq!(stats.in_flight_events(), 0);
}

#[tokio::test]
async fn rejected_releases_the_window_and_counts_the_refused_events_only() {
    let rejected = Completion::Rejected {
        events: vec![
            Rejection {
                index: 0,
                code: Some(400),
                text: "Invalid data format".into(),
            },
            Rejection {
                index: 4,
                code: Some(400),
                text: "Invalid data format".into(),
            },
        ],
    };
    let (window, summary, stats) = run_one(Mode::Complete(rejected), 5).await;
    assert_eq!(window.in_use(), 0);
    assert_eq!(
        (summary.delivered, summary.rejected, summary.lost),
        (3, 2, 0)
    );
    assert_eq!(stats.rejected_reason(), "hec_rejected");
    assert_eq!(stats.completions(CompletionKind::Rejected), 1);
}

#[tokio::test]
async fn retry_of_an_unbuffered_batch_releases_the_window_and_is_a_counted_loss() {
    let retry = Completion::Retry {
        after: Duration::from_secs(1),
        reason: RetryReason::Throttled,
    };
    let (window, summary, stats) = run_one(Mode::Complete(retry.clone()), 4).await;
    assert_eq!(window.in_use(), 0);
    assert_eq!(summary.lost, 4);
    assert_eq!(stats.retry_lost_events(), 4);

    // Persisted first: the buffer holds the events, so handing them back loses nothing.
    let (window, summary, stats) = run_one(Mode::PersistThen(retry), 4).await;
    assert_eq!(window.in_use(), 0);
    assert_eq!(summary.lost, 0);
    assert_eq!(stats.retry_events(), 4);
    assert_eq!(stats.persisted_events(), 4);
}

#[tokio::test]
async fn persisted_releases_the_window_before_the_completion() {
    let window = Window::new("test", 100);
    let stats = Arc::new(DestinationStats::new("default", "hec"));
    let mut b = batch(&window, 6).await;
    b.hold(HoldKind::Bytes, "memory");
    let mut d = Delivery::new(b, stats.clone());
    assert_eq!(window.in_use(), 6);
    d.persisted();
    assert_eq!(window.in_use(), 0, "persisted events are safe");
    d.complete(Completion::Abandoned {
        reason: AbandonReason::Shutdown,
    });
    assert_eq!(stats.abandoned_events(), 6);
    assert_eq!(stats.lost_events(), 0, "the buffer replays them");
}

#[tokio::test]
async fn the_drain_timeout_abandons_what_is_held_and_queued_and_reports_it_lost() {
    let window = Window::new("test", 100);
    let (dest, submit) = Destination::start("default", Box::new(Scripted(Mode::HoldUntilAbort)));
    let stats = dest.stats().clone();
    for _ in 0..3 {
        submit.submit(batch(&window, 10).await);
    }
    drop(submit);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(window.in_use(), 30, "held deliveries keep their permits");
    assert_eq!(stats.in_flight_events(), 30);
    let summary = dest
        .drain(Instant::now() + Duration::from_millis(100))
        .await;
    assert!(summary.timed_out);
    assert_eq!(summary.lost, 30);
    assert_eq!(stats.abandoned_lost_events(AbandonReason::Shutdown), 30);
    assert_eq!(stats.completions(CompletionKind::Abandoned), 3);
    assert_eq!(window.in_use(), 0);
}

#[tokio::test]
async fn a_delivery_dropped_by_the_output_is_counted_as_uncompleted_and_released() {
    let (window, summary, stats) = run_one(Mode::Drop, 9).await;
    assert_eq!(window.in_use(), 0);
    assert_eq!(stats.uncompleted(), 1);
    assert_eq!(stats.abandoned_lost_events(AbandonReason::Uncompleted), 9);
    assert_eq!(summary.lost, 9);
}

#[tokio::test]
async fn batches_left_behind_by_a_dead_output_are_abandoned_as_output_gone() {
    let window = Window::new("test", 100);
    let (mut dest, submit) = Destination::start("default", Box::new(Scripted(Mode::Exit)));
    dest.ended().await;
    submit.submit(batch(&window, 5).await);
    assert_eq!(window.in_use(), 5, "queued, still held");
    drop(submit);
    let stats = dest.stats().clone();
    let summary = dest.drain(soon()).await;
    assert_eq!(window.in_use(), 0);
    assert!(!summary.timed_out);
    assert_eq!(summary.lost, 5);
    assert_eq!(stats.abandoned_lost_events(AbandonReason::OutputGone), 5);
}

#[tokio::test]
async fn each_completion_is_counted_exactly_once() {
    let window = Window::new("test", 1000);
    let (dest, submit) = Destination::start(
        "default",
        Box::new(Scripted(Mode::Complete(Completion::Delivered))),
    );
    let stats = dest.stats().clone();
    for n in 1..=20 {
        submit.submit(batch(&window, n).await);
    }
    drop(submit);
    let summary = dest.drain(soon()).await;
    assert_eq!(stats.completions(CompletionKind::Delivered), 20);
    assert_eq!(summary.delivered, (1..=20).sum::<u64>());
    assert_eq!(stats.in_flight_events(), 0);
    assert_eq!(window.in_use(), 0);
}

/// Keeps every delivery for the test to complete (or not).
struct Gate(Arc<std::sync::Mutex<Vec<Delivery>>>);

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
                tokio::select! {
                    () = abort.cancelled() => break,
                    r = queue.recv() => match r {
                        Ok(d) => self.0.lock().unwrap().push(d),
                        Err(_) => break,
                    },
                }
            }
        })
    }
}

fn bodies(held: &std::sync::Mutex<Vec<Delivery>>) -> Vec<String> {
    held.lock()
        .unwrap()
        .iter()
        .map(|d| String::from_utf8(d.batch().body().to_vec()).unwrap())
        .collect()
}

async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
}

/// The two tests that count `sluice_dropped_total{reason="no_destination"}` (one counter for
/// the process) run one at a time.
static NOWHERE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn a_batch_is_split_by_destination_and_its_events_are_safe_only_when_every_part_is() {
    let _one = NOWHERE.lock().await;
    let window = Window::new("test", 100);
    let held_a = Arc::new(std::sync::Mutex::new(Vec::new()));
    let held_b = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (a, sa) = Destination::start("default", Box::new(Gate(held_a.clone())));
    let (b, sb) = Destination::start("other", Box::new(Gate(held_b.clone())));
    let submit = Submit::fan_out(vec![sa, sb], 0b01);
    let nowhere = submit.routed_nowhere();

    let mut builder = sluice_proto::batch::BatchBuilder::new(Default::default());
    let now = std::time::Instant::now();
    for (d, text) in [(0b01, "e0"), (0b11, "e1"), (0b10, "e2"), (0b00, "e3")] {
        builder.push_routed(now, d, |o| o.extend_from_slice(text.as_bytes()));
    }
    builder.push_with(now, |o| o.extend_from_slice(b"e4"));
    let mut routed = builder.take().unwrap();
    let permit = window.acquire(5, &CancellationToken::new()).await.unwrap();
    routed.hold(HoldKind::Events, permit);
    submit.submit(routed);
    settle().await;
    // e4 was not routed: it goes where unrouted events go (the default destination).
    assert_eq!(bodies(&held_a), ["e0\ne1\ne4"]);
    assert_eq!(bodies(&held_b), ["e1\ne2"]);
    assert_eq!(submit.routed_nowhere() - nowhere, 1);
    assert_eq!(window.in_use(), 5);

    // One destination delivers: the slots stay taken, the other still has e1 and e2.
    for d in held_b.lock().unwrap().drain(..) {
        d.complete(Completion::Delivered);
    }
    assert_eq!(window.in_use(), 5);
    // The other persists (a disk buffer took it): now every event is safe.
    let mut d = held_a.lock().unwrap().pop().unwrap();
    d.persisted();
    assert_eq!(window.in_use(), 0);
    d.complete(Completion::Retry {
        after: Duration::ZERO,
        reason: RetryReason::Buffered,
    });

    // Unrouted batches go to the `unrouted` set: both get the whole body, shared.
    let both = Submit::fan_out(vec![submit.only(0).unwrap(), submit.only(1).unwrap()], 0b11);
    both.submit(batch(&window, 3).await);
    settle().await;
    assert_eq!(bodies(&held_a), ["{}\n{}\n{}"]);
    assert_eq!(bodies(&held_b), ["{}\n{}\n{}"]);
    assert_eq!(window.in_use(), 3);
    for held in [&held_a, &held_b] {
        for d in held.lock().unwrap().drain(..) {
            d.complete(Completion::Delivered);
        }
    }
    assert_eq!(window.in_use(), 0);
    drop((submit, both));
    let (sa, sb) = (a.drain(soon()).await, b.drain(soon()).await);
    assert_eq!((sa.delivered, sb.delivered), (3, 5));
    assert_eq!(sa.lost + sb.lost, 0);
}

#[tokio::test]
async fn events_routed_nowhere_release_their_slots_and_are_counted() {
    let _one = NOWHERE.lock().await;
    let window = Window::new("test", 100);
    let (a, sa) = Destination::start(
        "default",
        Box::new(Scripted(Mode::Complete(Completion::Delivered))),
    );
    // The only destination is in SELECT mode: unrouted events go nowhere.
    let submit = Submit::fan_out(vec![sa], 0);
    let nowhere = submit.routed_nowhere();
    submit.submit(batch(&window, 4).await);
    assert_eq!(window.in_use(), 0);
    assert_eq!(submit.routed_nowhere() - nowhere, 4);
    drop(submit);
    assert_eq!(a.drain(soon()).await.delivered, 0);
}

#[tokio::test]
async fn a_destination_batcher_merges_small_parts_and_cuts_large_ones_to_its_own_size() {
    let window = Window::new("test", 100);
    let held = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (dest, submit) = Destination::start("other", Box::new(Gate(held.clone())));
    let submit = submit.rebatched(sluice_proto::batch::BatchPolicy {
        max_events: 4,
        max_bytes: 1000,
        timeout: Duration::from_millis(50),
    });
    // Three parts of 3 events: one batch of 4 at once (the rest of the part waits)...
    for _ in 0..3 {
        submit.submit(batch(&window, 3).await);
    }
    // ... and a part of 10: cut into pieces of at most 4.
    submit.submit(batch(&window, 10).await);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sizes: Vec<u32> = held.lock().unwrap().iter().map(|d| d.events()).collect();
    assert_eq!(sizes.iter().sum::<u32>(), 19, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n <= 4), "{sizes:?}");
    assert_eq!(window.in_use(), 19);
    for d in held.lock().unwrap().drain(..) {
        d.complete(Completion::Delivered);
    }
    // Every piece of every part delivered: every slot is back.
    assert_eq!(window.in_use(), 0);
    drop(submit);
    let s = dest.drain(soon()).await;
    assert_eq!((s.delivered, s.lost), (19, 0));
}
