//! One test per delivery-outcome event ([`super::events::completion`]): it counts on its
//! destination's series, and logs what an operator needs to see.

use sluice_proto::delivery::{AbandonReason, CompletionKind, RetryReason};

use super::events::*;
use super::tests::{logged, sample};
use super::{InternalEvent, Metrics};

fn dest(m: &Metrics) -> DestinationEvents {
    DestinationEvents::register(m, "default", "hec")
}

const D: &str = "destination=\"default\"";

#[test]
fn every_series_of_a_destination_is_there_from_the_start() {
    let m = Metrics::new();
    let _d = dest(&m);
    for reason in [
        "hec_rejected",
        "drain_timeout",
        "output_gone",
        "uncompleted",
        "retry_without_buffer",
        "buffer_full",
    ] {
        let r = format!("reason=\"{reason}\"");
        assert_eq!(
            sample(&m, "sluice_dropped_total", &[D, &r]),
            0.0,
            "{reason}"
        );
    }
    for kind in ["delivered", "rejected", "retry", "abandoned"] {
        let k = format!("kind=\"{kind}\"");
        assert_eq!(
            sample(&m, "sluice_delivery_completions_total", &[D, &k]),
            0.0
        );
    }
    assert_eq!(
        sample(&m, "sluice_delivered_total", &[D, "output=\"hec\""]),
        0.0
    );
}

#[test]
fn batch_submitted_is_in_flight_until_it_completes() {
    let m = Metrics::new();
    let d = dest(&m);
    let log = logged(|| BatchSubmitted { events: 7 }.emit(&d));
    assert_eq!(d.in_flight_events(), 7);
    assert_eq!(sample(&m, "sluice_delivery_in_flight_events", &[D]), 7.0);
    assert_eq!(log, "", "per batch: no log line");
    BatchDelivered { events: 7 }.emit(&d);
    assert_eq!(d.in_flight_events(), 0);
}

#[test]
fn batch_delivered_counts_a_completion_and_its_events() {
    let m = Metrics::new();
    let d = dest(&m);
    BatchSubmitted { events: 5 }.emit(&d);
    let log = logged(|| BatchDelivered { events: 5 }.emit(&d));
    assert_eq!(d.delivered_events(), 5);
    assert_eq!(d.completions(CompletionKind::Delivered), 1);
    assert_eq!(sample(&m, "sluice_delivered_total", &[D]), 5.0);
    assert_eq!(
        sample(
            &m,
            "sluice_delivery_events_total",
            &[D, "outcome=\"delivered\""]
        ),
        5.0
    );
    assert!(log.contains("TRACE") && log.contains("delivered"), "{log}");
}

#[test]
fn batch_rejected_counts_the_refused_as_dropped_and_the_rest_as_delivered() {
    let m = Metrics::new();
    let d = dest(&m);
    BatchSubmitted { events: 10 }.emit(&d);
    let log = logged(|| {
        BatchRejected {
            delivered: 8,
            rejected: 2,
        }
        .emit(&d)
    });
    assert_eq!((d.delivered_events(), d.rejected_events()), (8, 2));
    assert_eq!(d.in_flight_events(), 0);
    assert_eq!(
        sample(&m, "sluice_dropped_total", &[D, "reason=\"hec_rejected\""]),
        2.0
    );
    assert_eq!(d.completions(CompletionKind::Rejected), 1);
    assert_eq!(d.lost_events(), 0, "refused is not lost");
    assert!(log.contains("DEBUG") && log.contains("refused"), "{log}");
}

#[test]
fn batch_handed_back_is_lost_and_logged_unless_kept() {
    let m = Metrics::new();
    let d = dest(&m);
    let log = logged(|| {
        BatchHandedBack {
            events: 4,
            reason: RetryReason::Unreachable,
            kept: false,
        }
        .emit(&d);
        BatchHandedBack {
            events: 3,
            reason: RetryReason::Timeout,
            kept: true,
        }
        .emit(&d);
    });
    assert_eq!(d.retry_events(), 7);
    assert_eq!(d.retry_lost_events(), 4);
    assert_eq!(d.completions(CompletionKind::Retry), 2);
    assert_eq!(
        sample(
            &m,
            "sluice_dropped_total",
            &[D, "reason=\"retry_without_buffer\""]
        ),
        4.0
    );
    assert!(
        log.contains("ERROR") && log.contains("events are lost") && log.contains("unreachable"),
        "{log}"
    );
    assert!(log.contains("the disk buffer holds it"), "{log}");
}

#[test]
fn batch_buffered_is_a_retry_completion_whose_events_the_buffer_holds() {
    let m = Metrics::new();
    let d = dest(&m);
    BatchSubmitted { events: 6 }.emit(&d);
    let log = logged(|| BatchBuffered { events: 6 }.emit(&d));
    assert_eq!(d.buffered_events(), 6);
    assert_eq!(d.retry_events(), 0);
    assert_eq!(d.completions(CompletionKind::Retry), 1);
    assert_eq!(d.in_flight_events(), 0);
    assert_eq!(
        sample(
            &m,
            "sluice_delivery_events_total",
            &[D, "outcome=\"buffered\""]
        ),
        6.0
    );
    assert!(log.contains("buffer took a batch over"), "{log}");
}

#[test]
fn batch_abandoned_counts_by_reason_and_logs_bugs_and_gone_outputs() {
    let m = Metrics::new();
    let d = dest(&m);
    let log = logged(|| {
        BatchAbandoned {
            events: 3,
            reason: AbandonReason::Shutdown,
            kept: false,
        }
        .emit(&d);
        BatchAbandoned {
            events: 2,
            reason: AbandonReason::Uncompleted,
            kept: false,
        }
        .emit(&d);
        BatchAbandoned {
            events: 9,
            reason: AbandonReason::OutputGone,
            kept: true,
        }
        .emit(&d);
    });
    assert_eq!(d.abandoned_events(), 14);
    assert_eq!(d.abandoned_lost_events(AbandonReason::Shutdown), 3);
    assert_eq!(
        d.abandoned_lost_events(AbandonReason::OutputGone),
        0,
        "kept"
    );
    assert_eq!(d.uncompleted(), 1);
    assert_eq!(d.lost_events(), 5);
    assert_eq!(
        sample(&m, "sluice_dropped_total", &[D, "reason=\"drain_timeout\""]),
        3.0
    );
    assert_eq!(sample(&m, "sluice_delivery_uncompleted_total", &[D]), 1.0);
    assert!(log.contains("this is a bug"), "{log}");
    assert!(log.contains("the output is gone"), "{log}");
    assert!(
        !log.contains("drain"),
        "the drain sums shutdown losses up: {log}"
    );
}

#[test]
fn batch_persisted_counts_the_events_a_buffer_holds_early() {
    let m = Metrics::new();
    let d = dest(&m);
    let log = logged(|| BatchPersisted { events: 12 }.emit(&d));
    assert_eq!(d.persisted_events(), 12);
    assert_eq!(
        sample(&m, "sluice_delivery_persisted_events_total", &[D]),
        12.0
    );
    assert!(log.contains("persisted"), "{log}");
}

#[test]
fn batch_rescued_counts_what_the_buffer_saved() {
    let m = Metrics::new();
    let d = dest(&m);
    let log = logged(|| BatchRescued { events: 8 }.emit(&d));
    assert_eq!(d.rescued_events(), 8);
    assert_eq!(
        sample(&m, "sluice_delivery_rescued_events_total", &[D]),
        8.0
    );
    assert!(
        log.contains("DEBUG") && log.contains("instead of being lost"),
        "{log}"
    );
}

#[test]
fn buffer_full_dropped_counts_datagrams_and_warns() {
    let m = Metrics::new();
    let d = dest(&m);
    let log = logged(|| {
        BufferFullDropped { datagrams: 0 }.emit(&d);
        BufferFullDropped { datagrams: 40 }.emit(&d);
    });
    assert_eq!(d.buffer_full_drops(), 40);
    assert_eq!(
        sample(&m, "sluice_dropped_total", &[D, "reason=\"buffer_full\""]),
        40.0
    );
    assert_eq!(log.matches("WARN").count(), 1, "{log}");
    assert!(log.contains("disk buffer was full"), "{log}");
}

#[test]
fn two_destinations_count_apart() {
    let m = Metrics::new();
    let a = DestinationEvents::register(&m, "a", "hec");
    let b = DestinationEvents::register(&m, "b", "hec");
    BatchDelivered { events: 2 }.emit(&a);
    BatchDelivered { events: 5 }.emit(&b);
    assert_eq!((a.delivered_events(), b.delivered_events()), (2, 5));
    assert_eq!(sample(&m, "sluice_delivered_total", &[]), 7.0);
    // The same labels again (a reload) continue the same counters.
    let a2 = DestinationEvents::register(&m, "a", "hec");
    assert_eq!(a2.delivered_events(), 2);
}

#[test]
fn buffer_spilled_and_replayed_count_on_the_destinations_buffer_series() {
    let m = Metrics::new();
    let d = dest(&m);
    assert!(
        !m.render().contains("sluice_buffer_spilled_events_total{"),
        "no buffer, no series"
    );
    let b = d.buffer();
    let log = logged(|| {
        BufferSpilled { events: 30 }.emit(&b);
        BufferReplayed { events: 20 }.emit(&b);
    });
    assert_eq!((b.spilled_events(), b.replayed_events()), (30, 20));
    assert_eq!(sample(&m, "sluice_buffer_spilled_events_total", &[D]), 30.0);
    assert_eq!(
        sample(&m, "sluice_buffer_replayed_events_total", &[D]),
        20.0
    );
    assert!(
        log.contains("spilled to the disk buffer") && log.contains("replayed"),
        "{log}"
    );
}
