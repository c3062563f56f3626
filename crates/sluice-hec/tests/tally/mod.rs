//! A test observer: tallies what the client reports, so tests can check it. (The daemon's
//! observer counts the same events into its metrics.)

#![allow(dead_code)]

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};

use sluice_hec::health::UrlBoard;
use sluice_hec::{
    ClientConfig, HecError, HecEvent, HecObserver, HecOutput, RequestOutcome, RetryReason,
};

fn counters<const N: usize>() -> [AtomicU64; N] {
    std::array::from_fn(|_| AtomicU64::new(0))
}

#[derive(Debug, Default)]
pub struct UrlTally {
    pub requests_by_class: Mutex<Vec<(&'static str, u64)>>,
    pub failovers: AtomicU64,
    pub taken_out: AtomicU64,
    pub probed_in: AtomicU64,
    pub successes: AtomicU64,
}

impl UrlTally {
    pub fn class(&self, class: &str) -> u64 {
        self.requests_by_class
            .lock()
            .unwrap()
            .iter()
            .find(|(c, _)| *c == class)
            .map_or(0, |(_, n)| *n)
    }
}

#[derive(Debug, Default)]
pub struct DeadLetterTally {
    rejected: AtomicU64,
    by_reason: Mutex<Vec<(&'static str, u64)>>,
    written: AtomicU64,
    failed: AtomicU64,
}

impl DeadLetterTally {
    /// `(reason, events)` for the reasons seen.
    pub fn rejected(&self) -> Vec<(&'static str, u64)> {
        self.by_reason.lock().unwrap().clone()
    }
    pub fn rejected_total(&self) -> u64 {
        self.rejected.load(Relaxed)
    }
    pub fn written_events(&self) -> u64 {
        self.written.load(Relaxed)
    }
}

#[derive(Debug, Default)]
pub struct IsolationTally {
    pub isolated_batches: AtomicU64,
    pub resent_events: AtomicU64,
    pub latency_splits: AtomicU64,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct AckSnapshot {
    pub acked_requests: u64,
    pub acked_events: u64,
    pub timed_out_requests: u64,
    pub resent_events: u64,
    pub queries: u64,
    pub query_errors: u64,
    pub pending: i64,
}

#[derive(Debug, Default)]
pub struct AckTally(Mutex<AckSnapshot>);

impl AckTally {
    pub fn snapshot(&self) -> AckSnapshot {
        *self.0.lock().unwrap()
    }
}

#[derive(Debug)]
pub struct Tally {
    requests: [AtomicU64; RequestOutcome::COUNT],
    retried_requests: [AtomicU64; RetryReason::COUNT],
    requests_timed: AtomicU64,
    bytes_raw: AtomicU64,
    bytes_sent: AtomicU64,
    in_flight_batches: AtomicI64,
    in_flight_events: AtomicI64,
    urls: OnceLock<Vec<UrlTally>>,
    board: OnceLock<Arc<UrlBoard>>,
    pub dead_letter: DeadLetterTally,
    pub isolation: IsolationTally,
    pub ack: AckTally,
}

/// Plain numbers, in the shape the tests read.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub requests: Vec<(&'static str, u64)>,
    pub retried_requests: Vec<(&'static str, u64)>,
    pub request_seconds: Count,
    pub bytes_raw: u64,
    pub bytes_sent: u64,
    pub in_flight_batches: i64,
    pub in_flight_events: i64,
    pub healthy: bool,
    pub consecutive_failures: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct Count {
    pub count: u64,
}

impl Snapshot {
    fn get(list: &[(&'static str, u64)], label: &str) -> u64 {
        list.iter()
            .find(|(l, _)| *l == label)
            .map_or(0, |(_, v)| *v)
    }
    pub fn requests(&self, outcome: RequestOutcome) -> u64 {
        Self::get(&self.requests, outcome.label())
    }
    pub fn retried_requests(&self, reason: RetryReason) -> u64 {
        Self::get(&self.retried_requests, reason.label())
    }
    pub fn retried_requests_total(&self) -> u64 {
        self.retried_requests.iter().map(|(_, v)| v).sum()
    }
}

impl Tally {
    pub fn new() -> Tally {
        Tally {
            requests: counters(),
            retried_requests: counters(),
            requests_timed: AtomicU64::new(0),
            bytes_raw: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            in_flight_batches: AtomicI64::new(0),
            in_flight_events: AtomicI64::new(0),
            urls: OnceLock::new(),
            board: OnceLock::new(),
            dead_letter: DeadLetterTally::default(),
            isolation: IsolationTally::default(),
            ack: AckTally::default(),
        }
    }

    /// Builds an output that reports here, and keeps its URL board for health checks.
    pub fn output(self: &Arc<Self>, cfg: ClientConfig) -> Result<HecOutput, HecError> {
        let out = HecOutput::new(cfg, Arc::clone(self) as Arc<dyn HecObserver>)?;
        let _ = self.board.set(Arc::clone(out.health()));
        Ok(out)
    }

    pub fn board(&self) -> &Arc<UrlBoard> {
        self.board.get().expect("built with Tally::output")
    }

    pub fn healthy(&self) -> bool {
        self.board().healthy()
    }

    pub fn degraded_reason(&self) -> Option<String> {
        self.board().reason()
    }

    pub fn url(&self, i: usize) -> &UrlTally {
        &self.urls.get().expect("urls reported")[i]
    }

    pub fn snapshot(&self) -> Snapshot {
        let list = |arr: &[AtomicU64], labels: &mut dyn Iterator<Item = &'static str>| {
            labels
                .zip(arr.iter())
                .map(|(l, v)| (l, v.load(Relaxed)))
                .collect::<Vec<_>>()
        };
        let board = self.board.get();
        Snapshot {
            requests: list(
                &self.requests,
                &mut RequestOutcome::ALL.iter().map(|r| r.label()),
            ),
            retried_requests: list(
                &self.retried_requests,
                &mut RetryReason::ALL.iter().map(|r| r.label()),
            ),
            request_seconds: Count {
                count: self.requests_timed.load(Relaxed),
            },
            bytes_raw: self.bytes_raw.load(Relaxed),
            bytes_sent: self.bytes_sent.load(Relaxed),
            in_flight_batches: self.in_flight_batches.load(Relaxed),
            in_flight_events: self.in_flight_events.load(Relaxed),
            healthy: board.is_none_or(|b| b.healthy()),
            consecutive_failures: board.map_or(0, |b| {
                b.iter()
                    .map(|u| u.consecutive_failures())
                    .max()
                    .unwrap_or(0)
            }),
        }
    }
}

impl HecObserver for Tally {
    fn observe(&self, event: HecEvent<'_>) {
        match event {
            HecEvent::Urls(urls) => {
                let _ = self.urls.set(
                    urls.iter()
                        .map(|_| UrlTally {
                            requests_by_class: Mutex::new(
                                sluice_hec::health::CLASSES
                                    .iter()
                                    .map(|c| (*c, 0))
                                    .collect(),
                            ),
                            ..UrlTally::default()
                        })
                        .collect(),
                );
            }
            HecEvent::Request {
                url,
                outcome,
                raw,
                sent,
                ..
            } => {
                self.requests[outcome as usize].fetch_add(1, Relaxed);
                self.requests_timed.fetch_add(1, Relaxed);
                self.bytes_raw.fetch_add(raw as u64, Relaxed);
                self.bytes_sent.fetch_add(sent as u64, Relaxed);
                let u = self.url(url);
                for (c, n) in u.requests_by_class.lock().unwrap().iter_mut() {
                    if *c == outcome.class() {
                        *n += 1;
                    }
                }
                if outcome == RequestOutcome::Success {
                    u.successes.fetch_add(1, Relaxed);
                }
            }
            HecEvent::Retried { reason, .. } => {
                self.retried_requests[reason as usize].fetch_add(1, Relaxed);
            }
            HecEvent::Failover { url } => {
                self.url(url).failovers.fetch_add(1, Relaxed);
            }
            HecEvent::UrlDown { url, .. } => {
                self.url(url).taken_out.fetch_add(1, Relaxed);
            }
            HecEvent::UrlUp { url } => {
                self.url(url).probed_in.fetch_add(1, Relaxed);
            }
            HecEvent::Held { events } => {
                self.in_flight_batches.fetch_add(1, Relaxed);
                self.in_flight_events.fetch_add(i64::from(events), Relaxed);
            }
            HecEvent::Released { events } => {
                self.in_flight_batches.fetch_sub(1, Relaxed);
                self.in_flight_events.fetch_sub(i64::from(events), Relaxed);
            }
            // Counted by the daemon's observer (e2e_hec_delivery); nothing to tally here.
            HecEvent::FallbackIndex { .. } => {}
            HecEvent::AckWaiting => self.ack.0.lock().unwrap().pending += 1,
            HecEvent::Acked { events } => {
                let mut a = self.ack.0.lock().unwrap();
                a.pending -= 1;
                a.acked_requests += 1;
                a.acked_events += u64::from(events);
            }
            HecEvent::AckTimedOut { events } => {
                let mut a = self.ack.0.lock().unwrap();
                a.pending -= 1;
                a.timed_out_requests += 1;
                a.resent_events += u64::from(events);
            }
            HecEvent::AckAbandoned { requests } => {
                self.ack.0.lock().unwrap().pending -= i64::from(requests);
            }
            HecEvent::AckQueried { ok } => {
                let mut a = self.ack.0.lock().unwrap();
                a.queries += 1;
                if !ok {
                    a.query_errors += 1;
                }
            }
            HecEvent::Isolated => {
                self.isolation.isolated_batches.fetch_add(1, Relaxed);
            }
            HecEvent::IsolationResent { events } => {
                self.isolation.resent_events.fetch_add(events, Relaxed);
            }
            HecEvent::LatencySplit => {
                self.isolation.latency_splits.fetch_add(1, Relaxed);
            }
            HecEvent::Refused { reason } => {
                self.dead_letter.rejected.fetch_add(1, Relaxed);
                let mut by = self.dead_letter.by_reason.lock().unwrap();
                match by.iter_mut().find(|(r, _)| *r == reason) {
                    Some((_, n)) => *n += 1,
                    None => by.push((reason, 1)),
                }
            }
            HecEvent::DeadLettered { written, failed } => {
                self.dead_letter.written.fetch_add(written, Relaxed);
                self.dead_letter.failed.fetch_add(failed, Relaxed);
            }
        }
    }
}
