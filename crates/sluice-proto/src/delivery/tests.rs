use super::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;

/// A hold whose release is observable.
struct Guard(Arc<AtomicUsize>);
impl Guard {
    fn new(live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Guard(Arc::clone(live))
    }
}
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Records every callback with the number of holds alive at that moment.
#[derive(Debug, Default)]
struct Recorder {
    live: Arc<AtomicUsize>,
    completed: Mutex<Vec<(u32, Completion, bool, usize)>>,
    persisted: Mutex<Vec<u32>>,
}

impl CompletionSink for Recorder {
    fn completed(&self, batch: &EncodedBatch, completion: &Completion, persisted: bool) {
        self.completed.lock().unwrap().push((
            batch.events(),
            completion.clone(),
            persisted,
            self.live.load(Ordering::SeqCst),
        ));
    }
    fn persisted(&self, batch: &EncodedBatch) {
        self.persisted.lock().unwrap().push(batch.events());
    }
}

fn delivery(sink: &Arc<Recorder>, body: &'static str) -> Delivery {
    let mut b = EncodedBatch::from_lines(Bytes::from_static(body.as_bytes())).unwrap();
    b.hold(HoldKind::Events, Guard::new(&sink.live));
    b.hold(HoldKind::Bytes, Guard::new(&sink.live));
    Delivery::new(b, sink.clone())
}

#[test]
fn complete_reports_once_then_releases_every_hold() {
    let sink = Arc::new(Recorder::default());
    let d = delivery(&sink, "a\nb\nc");
    assert_eq!(d.events(), 3);
    assert_eq!(sink.live.load(Ordering::SeqCst), 2);
    d.complete(Completion::Delivered);
    assert_eq!(sink.live.load(Ordering::SeqCst), 0, "holds released");
    let seen = sink.completed.lock().unwrap().clone();
    // The sink saw the completion while the holds were still held: counted before released.
    assert_eq!(seen, vec![(3, Completion::Delivered, false, 2)]);
}

#[test]
fn a_delivery_dropped_without_completion_is_abandoned_as_uncompleted() {
    let sink = Arc::new(Recorder::default());
    drop(delivery(&sink, "a\nb"));
    assert_eq!(sink.live.load(Ordering::SeqCst), 0);
    let seen = sink.completed.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![(
            2,
            Completion::Abandoned {
                reason: AbandonReason::Uncompleted
            },
            false,
            2
        )]
    );
}

#[test]
fn persisted_releases_the_event_holds_only_and_is_reported_with_the_completion() {
    let sink = Arc::new(Recorder::default());
    let mut d = delivery(&sink, "a\nb\nc\nd");
    d.persisted();
    d.persisted();
    assert!(d.is_persisted());
    assert_eq!(
        sink.live.load(Ordering::SeqCst),
        1,
        "the window permits went, the memory stays"
    );
    assert_eq!(*sink.persisted.lock().unwrap(), vec![4], "told once");
    let retry = Completion::Retry {
        after: Duration::from_secs(1),
        reason: RetryReason::Throttled,
    };
    d.complete(retry.clone());
    assert_eq!(sink.live.load(Ordering::SeqCst), 0);
    assert_eq!(*sink.completed.lock().unwrap(), vec![(4, retry, true, 1)]);
}

#[test]
fn rejected_counts_distinct_indexes_inside_the_batch() {
    let r = |index| Rejection {
        index,
        code: Some(400),
        text: "bad".into(),
    };
    let c = Completion::Rejected {
        events: vec![r(1), r(3), r(3), r(9)],
    };
    assert_eq!(
        c.counts(5),
        EventCounts {
            delivered: 3,
            rejected: 2,
            undelivered: 0
        }
    );
    assert_eq!(c.kind(), CompletionKind::Rejected);
    let all = Completion::reject_all(4, Some(400), "Invalid data format");
    assert_eq!(all.counts(4).rejected, 4);
    match &all {
        Completion::Rejected { events } => {
            assert_eq!(
                events.iter().map(|r| r.index).collect::<Vec<_>>(),
                [0, 1, 2, 3]
            );
            assert!(events.iter().all(|r| r.code == Some(400)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn undelivered_kinds_count_every_event_as_undelivered() {
    for c in [
        Completion::Abandoned {
            reason: AbandonReason::Shutdown,
        },
        Completion::Retry {
            after: Duration::ZERO,
            reason: RetryReason::Unreachable,
        },
    ] {
        assert_eq!(
            c.counts(7),
            EventCounts {
                delivered: 0,
                rejected: 0,
                undelivered: 7
            }
        );
    }
    assert_eq!(Completion::Delivered.counts(7).delivered, 7);
    assert_eq!(AbandonReason::Shutdown.label(), "drain_timeout");
    assert_eq!(CompletionKind::COUNT, 4);
}
