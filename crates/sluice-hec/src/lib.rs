//! Splunk HTTP Event Collector client: batches, pooled keep-alive workers, gzip, URL
//! failover and retries by response class. It knows nothing about syslog: events arrive
//! already encoded as HEC JSON.
//!
//! # Data flow
//!
//! Producers (the UDP receive threads, the TCP listener) own a
//! [`BatchBuilder`](sluice_proto::batch::BatchBuilder) each and encode straight into it; a
//! completed [`EncodedBatch`](sluice_proto::batch::EncodedBatch), wrapped in a
//! [`Delivery`](sluice_proto::delivery::Delivery), goes into an `async_channel` that
//! [`HecOutput::run`] drains with `workers` tasks. Batching lives at the producer because a
//! channel hand-off per message costs more than parsing the message: with 5000-event batches
//! a receive thread hands off ~50 times a second instead of 250 000, and the body it built is
//! the request body, sent without another copy.
//!
//! Each delivery is completed exactly once
//! ([`Delivery::complete`](sluice_proto::delivery::Delivery::complete)) with what became of
//! *all* its events — whatever pieces a 413 split it into. That completion is the only thing
//! that flows back: it releases the batch's input-window permits and memory, and the
//! destination's completion sink counts it. The client counts nothing itself: it tells its
//! [`HecObserver`] what happens as it happens (requests, retries, failovers, acks, refusals;
//! see [`observe`]).
//!
//! # Requests
//!
//! `POST <url>` with the batch body (events joined by `\n`), headers in SC4S's order: the
//! configured extra headers, `Authorization: Splunk <token>`, `User-Agent`, plus
//! `Content-Encoding: gzip` when compression is on and `Connection: close` when configured
//! (keep-alive otherwise). SC4S's `__splunk_app_name: sc4syslog` / `__splunk_app_version`
//! headers are optional: put [`sc4s_app_headers`] into [`ClientConfig::headers`] to send them.
//! URLs are used round-robin per worker; a URL whose last request failed is skipped until its
//! own backoff expires (unless every URL is failing), and a retry always goes to the next URL.
//! The client is HTTP/1.1 only, one pooled connection per worker, `TCP_NODELAY` on.
//! Compression (gzip level 1, flate2's zlib-rs backend: about 1.3 µs of CPU and a 5x ratio
//! per 740-byte SC4S event, against 1.9 µs with the default miniz_oxide) runs on tokio's
//! blocking pool so it never stalls the async workers, once per batch, not per retry.
//!
//! Measure with `cargo run --release -p sluice-hec --example hec_throughput -- <workers>
//! <seconds> <events per batch> <gzip 0|1>` (it runs the `sluice-bench` sink in-process).
//!
//! # Responses
//!
//! | answer | action | completion |
//! |---|---|---|
//! | 2xx | delivered (with indexer acknowledgement: once acked) | `Delivered` (when every piece was) |
//! | 400 about the data | HEC refused the request for one or more events: the one named by `invalid-event-number` is refused for good and the rest sent again without it; without the number the request is bisected ([`reject`]). Refused events go to the dead-letter file ([`deadletter`]) | `Rejected`, each refused event with its status and Splunk's text; `hec_rejected{reason}` |
//! | 400 code 7 (incorrect index), with [`ClientConfig::fallback_index`] set | the event is sent once more with that index, its own in `fields.sc4s_original_index` ([`fallback`]); refused there too, it is dead-lettered | `Delivered` for it when the fallback index takes it |
//! | 400 about the request (codes 10, 11, 14, 16: ack channel, ack disabled) | held and retried like a 401 | `retried{reason="http_400_request"}` |
//! | 413 | the piece is split at the event boundary nearest its middle and both halves are sent (recursively); a single event that still gets 413 is refused (dead letter) | `Rejected`, that event with 413; `hec_rejected{reason="too_large"}` |
//! | 401, 403 | token missing/invalid/disabled: retried (the token may be fixed in Splunk) | `retried{reason="http_401"/"http_403"}` |
//! | 404 | retried (SC4S: `404 => retry`) | `retried{reason="http_404"}` |
//! | 408, 429 | retried | `http_408`, `http_429` |
//! | 5xx (503 = server busy) | retried | `http_5xx` |
//! | other status (1xx, 3xx, other 4xx) | retried | `http_other` |
//! | connect error | retried | `connect` |
//! | request timeout ([`ClientConfig::timeout`], to the answer's headers; the body has its own) | retried; the URL is treated as slow (longer timeout until an answer comes in time) and the piece goes again as two halves | `timeout` |
//! | other transport error (reset, closed mid-response) | retried | `io` |
//!
//! Retries never give up: a batch stays in memory until HEC accepts it (the daemon's input
//! window bounds how much that can be). After a failure the next attempt goes to the next URL
//! at once; when every URL has failed this batch in the current round the worker waits
//! [`Backoff::delay`] (exponential, capped, jittered). Every request is reported once
//! ([`HecEvent::Request`], with its outcome and latency).
//!
//! [`UrlBoard::healthy`](health::UrlBoard::healthy) ("able to deliver", on
//! [`HecOutput::health`]) is false only while every URL is out of service; a 400 or 413
//! counts as HEC being reachable.
//!
//! # Shutdown
//!
//! Normal drain: the producers drop their senders; `run` returns when the channel is closed
//! and empty and every worker has completed its delivery.
//! Drain timeout: cancelling the abort token makes every worker stop at once (cancelling a
//! request in flight and any backoff wait); what workers held and what is still queued
//! completes as `Abandoned { reason: Shutdown }`, so the daemon's completion sink knows
//! exactly how many events were not delivered. `run` closes the channel.
//!
//! # Indexer acknowledgement
//!
//! With [`ClientConfig::ack`] each worker has its own channel and connection; a batch is
//! finished only when every request carrying its events reads true at
//! `/services/collector/ack`; one that stays false past the ack timeout is sent again
//! ([`ack`]).
//!
//! # URLs
//!
//! A URL whose request failed is out of service until a health probe brings it back
//! ([`health`]); the board is [`HecOutput::health`].
//!
//! # Delivery guarantee
//!
//! At least once, as long as the process runs. Splunk may index a batch whose answer is
//! lost (a timeout, a connection reset after the request was processed, an abort during the
//! request): the batch is then sent again and those events are duplicated in Splunk; with a
//! slow indexer at most the batch each worker had in flight. After a 400 naming a bad event
//! the events before it are sent again by default ([`ResendPolicy`]). Nothing is lost except
//! (a) events HEC refuses for good — completed as `Rejected`, dead-lettered and logged — and
//! (b) what is still held when the drain timeout fires, completed as `Abandoned` (pieces of
//! it already delivered are counted with it: an overcount, never an undercount). The client
//! never hands a batch back (`Retry`): it retries itself. Without acknowledgement a 2xx is
//! taken as delivered.

#![forbid(unsafe_code)]

pub mod ack;
pub mod config;
pub mod deadletter;
mod error;
pub mod fallback;
pub mod health;
pub mod observe;
pub mod output;
pub mod reject;
pub mod stats;

pub use config::{AckConfig, Backoff, ClientConfig, EVENT_PATH, normalize_urls, sc4s_app_headers};
pub use deadletter::DeadLetterConfig;
pub use error::HecError;
pub use observe::{HecEvent, HecObserver, NoObserver};
pub use output::{HecOutput, ProbeResult};
pub use reject::ResendPolicy;
pub use stats::{LATENCY_BUCKETS, RequestOutcome, RetryReason};

/// Words for the TLS failures an operator meets when pointing sluice at an indexer: rustls
/// names them (`UnknownIssuer`, an alert), this says what to change.
pub fn tls_hint(cause: &str) -> Option<&'static str> {
    const HINTS: &[(&str, &str)] = &[
        (
            "UnknownIssuer",
            "the indexer's certificate is not issued by a CA sluice trusts: put that CA's PEM \
             certificate in SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT (or hec.tls_ca_file), or set \
             SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY=no",
        ),
        (
            "NotValidForName",
            "the indexer's certificate is not issued for the host name in the HEC URL: use the \
             name the certificate carries in SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
        ),
        (
            "Expired",
            "the indexer's certificate has expired: renew it on the indexer",
        ),
        (
            "CertificateRequired",
            "the indexer requires a client certificate: put key.pem and cert.pem in \
             SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT",
        ),
        (
            "alert: UnknownCA",
            "the indexer does not trust sluice's client certificate: have it issued by a CA the \
             indexer trusts",
        ),
        (
            "alert: BadCertificate",
            "the indexer refused sluice's client certificate (cert.pem in \
             SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT)",
        ),
        (
            "InvalidContentType",
            "the indexer does not speak TLS on that port: use http:// or the HEC TLS port",
        ),
    ];
    HINTS
        .iter()
        .find(|(needle, _)| cause.contains(needle))
        .map(|(_, hint)| *hint)
}
