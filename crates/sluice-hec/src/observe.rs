//! What the client tells its user about what happens, as it happens.
//!
//! The client counts nothing for reporting. Every request, retry, failover, ack, refusal and
//! dead-letter write is handed, once, to the [`HecObserver`] the output was built with; the
//! daemon turns each into one of its internal events (which log and count them), a test into
//! a tally. What the client does keep is state it decides with: which URLs are in service and
//! their consecutive failures ([`UrlBoard`](crate::health::UrlBoard)), which requests wait
//! for an ack. That state is readable ([`HecOutput::health`](crate::HecOutput::health)), and
//! is no counter.
//!
//! Events are called on the delivery path (several per request): an observer must be cheap
//! and must not block. URL indexes are positions in the list of [`HecEvent::Urls`], which
//! comes first.

use std::time::Duration;

use crate::stats::{RequestOutcome, RetryReason};

/// Something that happened in the client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HecEvent<'a> {
    /// The output was built with these URLs (normalized); later events name them by index.
    Urls(&'a [String]),
    /// A request to `url` ended with `outcome` after `latency`; its body was `raw` bytes,
    /// `sent` on the wire (compressed or not).
    Request {
        url: usize,
        outcome: RequestOutcome,
        latency: Duration,
        raw: usize,
        sent: usize,
    },
    /// A request of `events` events failed at `url` for `reason` and is sent again.
    Retried {
        url: usize,
        reason: RetryReason,
        events: u32,
    },
    /// A request that failed at `url` goes to another URL next.
    Failover { url: usize },
    /// `url` was taken out of service after a failure (`reason`, a retry reason label).
    UrlDown { url: usize, reason: &'static str },
    /// `url` is back in service (an answer or a health probe).
    UrlUp { url: usize },
    /// A worker took a batch of `events` (it is in flight until [`Released`](Self::Released)).
    Held { events: u32 },
    /// A worker finished with a batch of `events`, whatever became of it.
    Released { events: u32 },
    /// An accepted request waits for its indexer acknowledgement.
    AckWaiting,
    /// A request of `events` events was acknowledged.
    Acked { events: u32 },
    /// A request of `events` events was not acknowledged in time; its events are sent again.
    AckTimedOut { events: u32 },
    /// `requests` requests waiting for their ack were given up (the abort).
    AckAbandoned { requests: u32 },
    /// An ack query was answered (`ok`) or failed or got garbage.
    AckQueried { ok: bool },
    /// HEC refused a request of the batch about its data (400/413) for the first time: the
    /// batch is isolated event by event.
    Isolated,
    /// `events` events were sent again because the request holding them was refused.
    IsolationResent { events: u64 },
    /// A request that timed out is sent again as two halves.
    LatencySplit,
    /// HEC refused an event for its index (code 7) and it is sent again to the `fallback`
    /// index; `original` is the index it asked for (`None`: it had no `index` field).
    FallbackIndex {
        original: Option<&'a str>,
        fallback: &'a str,
    },
    /// HEC refused an event for good, for `reason` (see [`crate::deadletter::REASONS`]).
    Refused { reason: &'static str },
    /// Refused events were written to the dead-letter file (`written`), or lost to a failed
    /// write (`failed`).
    DeadLettered { written: u64, failed: u64 },
}

/// Told about everything the client does; see the [module docs](self).
pub trait HecObserver: Send + Sync + std::fmt::Debug {
    fn observe(&self, event: HecEvent<'_>) {
        let _ = event;
    }
}

/// Observes nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoObserver;

impl HecObserver for NoObserver {}

impl RequestOutcome {
    /// The status class: `2xx`, `4xx`, `5xx`, `other` (another status) or `error` (no
    /// answer).
    pub fn class(self) -> &'static str {
        match self {
            RequestOutcome::Success => "2xx",
            RequestOutcome::BadRequest
            | RequestOutcome::Unauthorized
            | RequestOutcome::Forbidden
            | RequestOutcome::NotFound
            | RequestOutcome::RequestTimeout
            | RequestOutcome::TooLarge
            | RequestOutcome::TooManyRequests => "4xx",
            RequestOutcome::ServerError => "5xx",
            RequestOutcome::OtherStatus => "other",
            RequestOutcome::Connect | RequestOutcome::Timeout | RequestOutcome::Io => "error",
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use std::sync::Mutex;

    use super::*;

    /// Remembers every event (owned), for unit tests.
    #[derive(Debug, Default)]
    pub(crate) struct Recorder(pub Mutex<Vec<String>>);

    impl HecObserver for Recorder {
        fn observe(&self, event: HecEvent<'_>) {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("{event:?}"));
        }
    }

    impl Recorder {
        pub(crate) fn count(&self, prefix: &str) -> usize {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .filter(|e| e.starts_with(prefix))
                .count()
        }
    }

    #[test]
    fn classes_cover_every_outcome() {
        let classes: Vec<&str> = RequestOutcome::ALL.iter().map(|o| o.class()).collect();
        assert_eq!(classes[0], "2xx");
        assert!(classes.iter().all(|c| crate::health::CLASSES.contains(c)));
    }
}
