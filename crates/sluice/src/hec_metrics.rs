//! `/metrics` families of HEC delivery beyond requests: per-indexer health, indexer
//! acknowledgement, bad-event isolation and the dead-letter file.

use std::sync::atomic::Ordering::Relaxed;

use sluice_hec::HecStats;

use crate::admin::PromWriter;

pub(crate) fn render(w: &mut PromWriter, h: &HecStats) {
    if let Some(board) = h.urls() {
        let urls = board.snapshot();
        w.family(
            "sluice_hec_url_up",
            "gauge",
            "1 while the HEC URL is in service, 0 while it is out until a probe brings it back.",
        );
        for u in &urls {
            w.sample("sluice_hec_url_up", &[("url", &u.url)], u8::from(u.up));
        }
        w.family(
            "sluice_hec_url_last_success_timestamp_seconds",
            "gauge",
            "Unix time of the URL's last 2xx answer (0: none yet).",
        );
        for u in &urls {
            let t = u.last_success_unix_ms.unwrap_or(0) as f64 / 1000.0;
            w.sample(
                "sluice_hec_url_last_success_timestamp_seconds",
                &[("url", &u.url)],
                format!("{t:.3}"),
            );
        }
        w.family(
            "sluice_hec_url_consecutive_failures",
            "gauge",
            "Failed requests to the URL since its last good answer.",
        );
        for u in &urls {
            w.sample(
                "sluice_hec_url_consecutive_failures",
                &[("url", &u.url)],
                u.consecutive_failures,
            );
        }
        w.family(
            "sluice_hec_url_requests_total",
            "counter",
            "Requests per URL by status class (error: no answer).",
        );
        for u in &urls {
            for (class, n) in &u.requests {
                w.sample(
                    "sluice_hec_url_requests_total",
                    &[("url", &u.url), ("class", class)],
                    n,
                );
            }
        }
        w.family(
            "sluice_hec_url_request_seconds",
            "summary",
            "Request latency per URL.",
        );
        for u in &urls {
            w.sample(
                "sluice_hec_url_request_seconds_sum",
                &[("url", &u.url)],
                format!("{:.6}", u.latency_sum_seconds),
            );
            w.sample(
                "sluice_hec_url_request_seconds_count",
                &[("url", &u.url)],
                u.latency_count,
            );
        }
        w.family(
            "sluice_hec_url_failovers_total",
            "counter",
            "Requests that failed at the URL and went to another one.",
        );
        for u in &urls {
            w.sample(
                "sluice_hec_url_failovers_total",
                &[("url", &u.url)],
                u.failovers,
            );
        }
        w.family(
            "sluice_hec_url_transitions_total",
            "counter",
            "Times the URL was taken out of service and probed back in.",
        );
        for u in &urls {
            w.sample(
                "sluice_hec_url_transitions_total",
                &[("url", &u.url), ("to", "out")],
                u.taken_out,
            );
            w.sample(
                "sluice_hec_url_transitions_total",
                &[("url", &u.url), ("to", "in")],
                u.probed_in,
            );
        }
    }

    let a = h.ack.snapshot();
    w.family(
        "sluice_hec_ack_requests_total",
        "counter",
        "Requests by indexer-acknowledgement outcome.",
    )
    .sample(
        "sluice_hec_ack_requests_total",
        &[("outcome", "acked")],
        a.acked_requests,
    )
    .sample(
        "sluice_hec_ack_requests_total",
        &[("outcome", "timed_out")],
        a.timed_out_requests,
    );
    w.family(
        "sluice_hec_ack_events_total",
        "counter",
        "Events acknowledged, timed out, and sent again for want of an ack.",
    )
    .sample(
        "sluice_hec_ack_events_total",
        &[("outcome", "acked")],
        a.acked_events,
    )
    .sample(
        "sluice_hec_ack_events_total",
        &[("outcome", "timed_out")],
        a.timed_out_events,
    )
    .sample(
        "sluice_hec_ack_events_total",
        &[("outcome", "resent")],
        a.resent_events,
    );
    w.family(
        "sluice_hec_ack_queries_total",
        "counter",
        "Ack queries, and those that failed or got garbage.",
    )
    .sample(
        "sluice_hec_ack_queries_total",
        &[("outcome", "all")],
        a.queries,
    )
    .sample(
        "sluice_hec_ack_queries_total",
        &[("outcome", "error")],
        a.query_errors,
    );
    w.family(
        "sluice_hec_ack_pending",
        "gauge",
        "Requests waiting for their ack.",
    )
    .sample("sluice_hec_ack_pending", &[], a.pending);

    let iso = &h.isolation;
    w.family(
        "sluice_hec_isolation_events_resent_total",
        "counter",
        "Events sent again because the request holding them was refused (400/413).",
    )
    .sample(
        "sluice_hec_isolation_events_resent_total",
        &[],
        iso.resent_events.load(Relaxed),
    );
    w.family(
        "sluice_hec_isolated_batches_total",
        "counter",
        "Batches HEC refused at least once and that were isolated event by event.",
    )
    .sample(
        "sluice_hec_isolated_batches_total",
        &[],
        iso.isolated_batches.load(Relaxed),
    );
    w.family(
        "sluice_hec_latency_splits_total",
        "counter",
        "Requests that timed out and were sent again as two halves.",
    )
    .sample(
        "sluice_hec_latency_splits_total",
        &[],
        iso.latency_splits.load(Relaxed),
    );

    let dl = &h.dead_letter;
    w.family(
        "sluice_hec_rejected_total",
        "counter",
        "Events HEC refused for good, by reason (each written to the dead-letter file).",
    );
    for (reason, n) in dl.rejected() {
        w.sample("sluice_hec_rejected_total", &[("reason", reason)], n);
    }
    w.family(
        "sluice_hec_dead_letter_events_total",
        "counter",
        "Refused events written to the dead-letter file, and those a write failure lost.",
    )
    .sample(
        "sluice_hec_dead_letter_events_total",
        &[("outcome", "written")],
        dl.written_events(),
    )
    .sample(
        "sluice_hec_dead_letter_events_total",
        &[("outcome", "write_error")],
        dl.write_errors(),
    );
}
