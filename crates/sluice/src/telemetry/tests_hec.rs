//! One test per event of the HEC client ([`super::events::hec`]), and the observer that
//! turns what the client reports into them.

use std::time::Duration;

use sluice_hec::{HecEvent, HecObserver, RequestOutcome, RetryReason};

use super::events::*;
use super::tests::{logged, sample};
use super::{InternalEvent, Metrics};

const D: &str = "destination=\"default\"";
const URL_A: &str = "https://idx1:8088/services/collector/event";
const URL_B: &str = "https://idx2:8088/services/collector/event";

fn hec(m: &Metrics) -> HecEvents {
    let h = HecEvents::register(m, "default");
    HecUrlsConfigured {
        urls: &[URL_A.to_string(), URL_B.to_string()],
    }
    .emit(&h);
    h
}

fn url(u: &str) -> String {
    format!("url=\"{u}\"")
}

#[test]
fn urls_configured_creates_every_url_series_in_service() {
    let m = Metrics::new();
    let log = logged(|| {
        hec(&m);
    });
    for u in [URL_A, URL_B] {
        assert_eq!(sample(&m, "sluice_hec_url_up", &[D, &url(u)]), 1.0);
        assert_eq!(
            sample(&m, "sluice_hec_url_requests_total", &[D, &url(u)]),
            0.0
        );
        assert_eq!(
            sample(
                &m,
                "sluice_hec_url_transitions_total",
                &[&url(u), "to=\"out\""]
            ),
            0.0
        );
    }
    // The destination's own series are there before anything happened.
    assert_eq!(
        sample(&m, "sluice_hec_ack_pending", &[D]),
        0.0,
        "registered with the destination"
    );
    assert_eq!(
        sample(
            &m,
            "sluice_hec_rejected_total",
            &[D, "reason=\"too_large\""]
        ),
        0.0
    );
    assert!(log.contains("HEC URLs") && log.contains("idx2"), "{log}");
}

#[test]
fn request_completed_counts_outcome_bytes_latency_and_the_url_class() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        HecRequestCompleted {
            url: 1,
            outcome: RequestOutcome::Success,
            latency: Duration::from_millis(20),
            raw: 1000,
            sent: 250,
        }
        .emit(&h);
        HecRequestCompleted {
            url: 1,
            outcome: RequestOutcome::ServerError,
            latency: Duration::from_secs(2),
            raw: 1000,
            sent: 250,
        }
        .emit(&h);
    });
    assert_eq!(h.requests(RequestOutcome::Success), 1);
    assert_eq!(
        sample(&m, "sluice_hec_requests_total", &[D, "outcome=\"5xx\""]),
        1.0
    );
    assert_eq!(
        sample(&m, "sluice_hec_bytes_total", &[D, "kind=\"raw\""]),
        2000.0
    );
    assert_eq!(
        sample(&m, "sluice_hec_bytes_total", &[D, "kind=\"sent\""]),
        500.0
    );
    assert_eq!(sample(&m, "sluice_hec_request_seconds_count", &[D]), 2.0);
    assert_eq!(
        sample(
            &m,
            "sluice_hec_request_seconds_bucket",
            &[D, "le=\"0.025\""]
        ),
        1.0
    );
    assert_eq!(
        sample(
            &m,
            "sluice_hec_url_requests_total",
            &[&url(URL_B), "class=\"5xx\""]
        ),
        1.0
    );
    assert_eq!(
        sample(&m, "sluice_hec_url_requests_total", &[&url(URL_A)]),
        0.0
    );
    assert_eq!(
        sample(&m, "sluice_hec_url_request_seconds_count", &[&url(URL_B)]),
        2.0
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let last = sample(&m, "sluice_hec_last_success_timestamp_seconds", &[D]);
    assert!(last > now - 60.0 && last <= now + 1.0, "{last}");
    let last_b = sample(
        &m,
        "sluice_hec_url_last_success_timestamp_seconds",
        &[&url(URL_B)],
    );
    assert_eq!(last_b, last);
    assert_eq!(
        sample(
            &m,
            "sluice_hec_url_last_success_timestamp_seconds",
            &[&url(URL_A)]
        ),
        0.0
    );
    assert!(log.contains("HEC request") && log.contains("5xx"), "{log}");
}

#[test]
fn retried_counts_events_and_requests_by_reason_and_logs_at_debug() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        HecRetried {
            url: 0,
            reason: RetryReason::Http5xx,
            events: 50,
        }
        .emit(&h)
    });
    assert_eq!(h.retried(RetryReason::Http5xx), 50);
    assert_eq!(
        sample(&m, "sluice_retried_total", &[D, "reason=\"http_5xx\""]),
        50.0
    );
    assert_eq!(
        sample(
            &m,
            "sluice_retried_requests_total",
            &[D, "reason=\"http_5xx\""]
        ),
        1.0
    );
    assert!(
        log.contains("DEBUG") && log.contains("retrying") && log.contains("idx1"),
        "{log}"
    );
}

#[test]
fn failover_counts_on_the_url_it_left() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| HecFailover { url: 0 }.emit(&h));
    assert_eq!(
        sample(&m, "sluice_hec_url_failovers_total", &[&url(URL_A)]),
        1.0
    );
    assert_eq!(
        sample(&m, "sluice_hec_url_failovers_total", &[&url(URL_B)]),
        0.0
    );
    assert!(log.contains("failing over"), "{log}");
}

#[test]
fn url_down_and_up_set_the_gauge_count_transitions_and_log() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        HecUrlDown {
            url: 0,
            reason: "connect",
        }
        .emit(&h)
    });
    assert_eq!(sample(&m, "sluice_hec_url_up", &[&url(URL_A)]), 0.0);
    assert_eq!(
        sample(
            &m,
            "sluice_hec_url_transitions_total",
            &[&url(URL_A), "to=\"out\""]
        ),
        1.0
    );
    assert!(log.contains("WARN") && log.contains("connect"), "{log}");
    let log = logged(|| HecUrlUp { url: 0 }.emit(&h));
    assert_eq!(sample(&m, "sluice_hec_url_up", &[&url(URL_A)]), 1.0);
    assert_eq!(
        sample(
            &m,
            "sluice_hec_url_transitions_total",
            &[&url(URL_A), "to=\"in\""]
        ),
        1.0
    );
    assert!(
        log.contains("INFO") && log.contains("back in service"),
        "{log}"
    );
}

#[test]
fn batches_held_and_released_move_the_in_flight_gauge() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        HecBatchHeld { events: 30 }.emit(&h);
        HecBatchHeld { events: 5 }.emit(&h);
        HecBatchReleased { events: 30 }.emit(&h);
    });
    assert_eq!(h.in_flight_events(), 5);
    assert_eq!(sample(&m, "sluice_hec_in_flight_events", &[D]), 5.0);
    assert_eq!(log, "", "per batch: no log line");
}

#[test]
fn ack_waiting_acked_timed_out_and_abandoned_keep_pending_right() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        for _ in 0..4 {
            HecAckWaiting.emit(&h);
        }
        HecAcked { events: 100 }.emit(&h);
        HecAckTimedOut { events: 40 }.emit(&h);
    });
    assert_eq!(sample(&m, "sluice_hec_ack_pending", &[D]), 2.0);
    let outcome = |name: &str, o: &str| sample(&m, name, &[D, &format!("outcome=\"{o}\"")]);
    assert_eq!(outcome("sluice_hec_ack_requests_total", "acked"), 1.0);
    assert_eq!(outcome("sluice_hec_ack_requests_total", "timed_out"), 1.0);
    assert_eq!(outcome("sluice_hec_ack_events_total", "acked"), 100.0);
    assert_eq!(outcome("sluice_hec_ack_events_total", "timed_out"), 40.0);
    assert_eq!(outcome("sluice_hec_ack_events_total", "resent"), 40.0);
    assert!(
        log.contains("HEC ack") && log.contains("sending those events again"),
        "{log}"
    );
    let log = logged(|| HecAcksAbandoned { requests: 2 }.emit(&h));
    assert_eq!(sample(&m, "sluice_hec_ack_pending", &[D]), 0.0);
    assert!(log.contains("no longer waited for"), "{log}");
}

#[test]
fn ack_queried_counts_every_query_and_the_failures() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        HecAckQueried { ok: true }.emit(&h);
        HecAckQueried { ok: false }.emit(&h);
    });
    assert_eq!(
        sample(&m, "sluice_hec_ack_queries_total", &[D, "outcome=\"all\""]),
        2.0
    );
    assert_eq!(
        sample(
            &m,
            "sluice_hec_ack_queries_total",
            &[D, "outcome=\"error\""]
        ),
        1.0
    );
    assert_eq!(log, "", "the client logs failed queries with their error");
}

#[test]
fn isolation_and_latency_splits_are_counted_and_logged() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        HecBatchIsolated.emit(&h);
        HecIsolationResent { events: 999 }.emit(&h);
        HecLatencySplit.emit(&h);
    });
    assert_eq!(sample(&m, "sluice_hec_isolated_batches_total", &[D]), 1.0);
    assert_eq!(
        sample(&m, "sluice_hec_isolation_events_resent_total", &[D]),
        999.0
    );
    assert_eq!(sample(&m, "sluice_hec_latency_splits_total", &[D]), 1.0);
    assert!(log.contains("isolating the batch"), "{log}");
    assert!(log.contains("sending events again"), "{log}");
    assert!(log.contains("two halves"), "{log}");
}

#[test]
fn refused_events_and_dead_letter_writes_are_counted() {
    let m = Metrics::new();
    let h = hec(&m);
    let log = logged(|| {
        HecEventRefused {
            reason: "incorrect_index",
        }
        .emit(&h);
        HecDeadLettered {
            written: 1,
            failed: 0,
        }
        .emit(&h);
        HecDeadLettered {
            written: 0,
            failed: 3,
        }
        .emit(&h);
    });
    assert_eq!(
        sample(
            &m,
            "sluice_hec_rejected_total",
            &[D, "reason=\"incorrect_index\""]
        ),
        1.0
    );
    assert_eq!(
        sample(
            &m,
            "sluice_hec_dead_letter_events_total",
            &[D, "outcome=\"written\""]
        ),
        1.0
    );
    assert_eq!(
        sample(
            &m,
            "sluice_hec_dead_letter_events_total",
            &[D, "outcome=\"write_error\""]
        ),
        3.0
    );
    assert!(
        log.contains("refused an event") && log.contains("dead-letter"),
        "{log}"
    );
}

/// The observer emits the one event for each thing the client reports.
#[test]
fn the_observer_turns_what_the_client_reports_into_events() {
    let m = Metrics::new();
    let h = HecEvents::register(&m, "default");
    let urls = [URL_A.to_string()];
    let reports = [
        HecEvent::Urls(&urls),
        HecEvent::Request {
            url: 0,
            outcome: RequestOutcome::Timeout,
            latency: Duration::from_secs(1),
            raw: 10,
            sent: 10,
        },
        HecEvent::Retried {
            url: 0,
            reason: RetryReason::Timeout,
            events: 3,
        },
        HecEvent::Failover { url: 0 },
        HecEvent::UrlDown {
            url: 0,
            reason: "timeout",
        },
        HecEvent::Held { events: 3 },
        HecEvent::AckWaiting,
        HecEvent::AckQueried { ok: false },
        HecEvent::Isolated,
        HecEvent::IsolationResent { events: 2 },
        HecEvent::LatencySplit,
        HecEvent::Refused { reason: "other" },
        HecEvent::DeadLettered {
            written: 1,
            failed: 0,
        },
    ];
    for r in reports {
        h.observe(r);
    }
    assert_eq!(h.urls(), [URL_A]);
    assert_eq!(h.requests(RequestOutcome::Timeout), 1);
    assert_eq!(h.retried(RetryReason::Timeout), 3);
    assert_eq!(h.in_flight_events(), 3);
    for (name, labels, v) in [
        ("sluice_hec_url_failovers_total", vec![D], 1.0),
        ("sluice_hec_url_up", vec![D], 0.0),
        ("sluice_hec_ack_pending", vec![D], 1.0),
        (
            "sluice_hec_ack_queries_total",
            vec![D, "outcome=\"error\""],
            1.0,
        ),
        ("sluice_hec_isolated_batches_total", vec![D], 1.0),
        ("sluice_hec_isolation_events_resent_total", vec![D], 2.0),
        ("sluice_hec_latency_splits_total", vec![D], 1.0),
        (
            "sluice_hec_rejected_total",
            vec![D, "reason=\"other\""],
            1.0,
        ),
        (
            "sluice_hec_dead_letter_events_total",
            vec![D, "outcome=\"written\""],
            1.0,
        ),
    ] {
        assert_eq!(sample(&m, name, &labels), v, "{name}");
    }
    for r in [
        HecEvent::UrlUp { url: 0 },
        HecEvent::Released { events: 3 },
        HecEvent::Acked { events: 3 },
        HecEvent::AckWaiting,
        HecEvent::AckTimedOut { events: 1 },
        HecEvent::AckWaiting,
        HecEvent::AckAbandoned { requests: 1 },
    ] {
        h.observe(r);
    }
    assert_eq!(sample(&m, "sluice_hec_url_up", &[D]), 1.0);
    assert_eq!(h.in_flight_events(), 0);
    assert_eq!(sample(&m, "sluice_hec_ack_pending", &[D]), 0.0);
}
