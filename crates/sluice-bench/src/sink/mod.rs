//! A Splunk HEC test sink: a real HTTP/1.1 server that validates requests the way HEC does,
//! counts what it accepts, optionally records events and tracks loggen sequence numbers, and
//! injects faults on demand.
//!
//! # Endpoints
//!
//! | request | answer |
//! |---|---|
//! | `POST /services/collector/event`, `/services/collector/event/1.0`, `/services/collector` | validate every event (below); 200 `{"text":"Success","code":0}` |
//! | `POST /services/collector/raw`, `/services/collector/raw/1.0` | one event per non-empty line; 200 Success |
//! | `POST /services/collector/ack` | indexer acknowledgement (with [`SinkConfig::indexer_ack`]; see the `ack` module) |
//! | `GET /services/collector/health` | 200 `{"text":"HEC is healthy","code":17}` (503 code 18 while a busy fault is active); no token needed |
//! | anything else | 404 `{"text":"The requested URL was not found on this server.","code":404}` |
//!
//! Token: `Authorization: Splunk <token>` must match [`SinkConfig::token`]; missing → 401
//! `{"text":"Token is required","code":2}`, not of the form `Splunk <token>` → 401
//! `{"text":"Invalid authorization","code":3}`, wrong → 403 `{"text":"Invalid token","code":4}`.
//! `Content-Encoding: gzip` bodies are decompressed (a broken stream → 400 code 6).
//!
//! Event validation (HEC's rules): the body is concatenated JSON objects (newline-separated
//! or not); empty body → 400 "No data" code 5; malformed JSON → 400 `{"text":"Invalid data
//! format","code":6,"invalid-event-number":N}`; `event` missing/null → code 12, blank → code
//! 13; `time` neither number nor numeric string, or `host`/`source`/`sourcetype`/`index` not
//! strings → code 6; `fields` not a flat object of strings, numbers or arrays of those →
//! code 15 "Error in handling indexed fields". `N` is the 0-based index of the offending
//! event. A rejected request indexes nothing and is counted by reason.
//!
//! # Faults ([`Faults`], changeable at run time with [`SinkHandle::set_faults`])
//!
//! Applied in this order to authenticated collector requests, after the body was read:
//! connection reset before processing (every Nth authenticated collector request,
//! `reset_every`), 503 `{"text":"Server is busy","code":9}` (until an instant, or for the
//! next N requests), 400 `{"text":"Incorrect index","code":7,...}` when the body contains a
//! marker, 413 when the request holds more than N events, then normal processing; with
//! `reset_after_processing` the reset happens after the events were accepted (the client
//! sees a failure for data that was indexed — the duplicate case). A fixed delay is added
//! before every answer. A reset closes the connection without writing a response.
//!
//! # Performance
//!
//! Every connection sets `TCP_NODELAY` and every response goes out in a single write
//! (hyper's flattened write buffer, headers and body together): a response split into two
//! small writes without `TCP_NODELAY` stalls ~40 ms on delayed ACK. Validation borrows from
//! the body, so an event costs one JSON pass and no allocation unless its strings contain
//! escapes.

mod ack;
pub mod client;
mod handle;
pub mod sample;
mod validate;

pub use handle::SinkHandle;

use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::watch;

use crate::seq::{SeqId, SeqTracker, parse_seq};
use validate::{Reject, is_blank, scan_events};

/// Errors starting the sink.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("HEC sink cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("HEC sink runtime could not start: {0}")]
    Runtime(std::io::Error),
    #[error("HEC sink thread failed to start")]
    Thread,
}

/// Fault injection settings. `Default` is "no faults".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Answer 503 "Server is busy" until this instant.
    pub busy_until: Option<Instant>,
    /// Answer 503 to the next N collector requests (decremented per answer).
    pub busy_next: u64,
    /// Added before every answer (also before a reset).
    pub delay: Option<Duration>,
    /// Answer 400 "Incorrect index" to a request whose (decompressed) body contains it.
    pub reject_marker: Option<String>,
    /// Drop the connection without an answer on every Nth collector request (1 = all).
    pub reset_every: Option<u64>,
    /// Reset only after the request's events were accepted.
    pub reset_after_processing: bool,
    /// Answer 413 to a request holding more than N events.
    pub max_events: Option<usize>,
    /// Answer every Nth collector request with success (and an ackId) but never index its
    /// events: with indexer ack its ID stays false; without, the events are simply lost.
    pub lose_every: Option<u64>,
    /// Answer ack queries with something that is not HEC's ack JSON.
    pub ack_garbage: bool,
    /// Answer 400 `{"text":"Invalid data format","code":6,"invalid-event-number":N}` when
    /// event N (0-based, the first such) has this text in its `event`.
    pub reject_event_marker: Option<String>,
    /// Answer 400 `{"text":"Incorrect index","code":7,"invalid-event-number":N}` when event
    /// N (0-based, the first such) asks for this index (as HEC does for an index that does
    /// not exist). Combined with `reject_event_marker`, the first bad event of either kind is
    /// named.
    pub reject_index: Option<String>,
    /// With `reject_event_marker`: index the events before N anyway (what Splunk may do; its
    /// documentation does not say), so a client that resends them makes duplicates.
    pub index_before_invalid: bool,
    /// With `reject_event_marker`: leave `invalid-event-number` out of the answer (as HEC
    /// does for some refusals), so a client has to find the event itself.
    pub omit_event_number: bool,
}

/// Sink settings.
#[derive(Debug, Clone)]
pub struct SinkConfig {
    /// Where to listen; port 0 picks a free one ([`SinkHandle::addr`] tells which).
    pub addr: SocketAddr,
    pub token: String,
    /// Keep every accepted event (as `serde_json::Value`) for [`SinkHandle::events`] and the
    /// last collector request's headers for [`SinkHandle::last_headers`]. Costs a second
    /// parse per event: for tests, not for throughput runs.
    pub record: bool,
    /// Feed every accepted event's text to a [`SeqTracker`].
    pub track_seq: bool,
    /// Worker threads of the runtime [`SinkHandle::spawn_thread`] creates.
    pub threads: usize,
    pub faults: Faults,
    /// Behave like a token with `useACK`: require a channel, answer `ackId`s and serve
    /// `/services/collector/ack`.
    pub indexer_ack: bool,
    /// Serve HTTPS with this configuration (a client-certificate verifier in it makes the
    /// sink an mTLS endpoint). A failed handshake closes that connection and is counted.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: "00000000-0000-0000-0000-000000000000".to_string(),
            record: false,
            track_seq: true,
            threads: 2,
            faults: Faults::default(),
            indexer_ack: false,
            tls: None,
        }
    }
}

macro_rules! reasons {
    ($($variant:ident => $label:literal),+ $(,)?) => {
        /// Why the sink refused a request.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RejectReason { $($variant),+ }
        impl RejectReason {
            pub const ALL: &'static [RejectReason] = &[$(RejectReason::$variant),+];
            pub const COUNT: usize = RejectReason::ALL.len();
            pub fn label(self) -> &'static str {
                match self { $(RejectReason::$variant => $label),+ }
            }
        }
    };
}

reasons! {
    TokenMissing => "token_missing",
    AuthInvalid => "auth_invalid",
    TokenInvalid => "token_invalid",
    NoData => "no_data",
    InvalidJson => "invalid_json",
    EventMissing => "event_missing",
    EventBlank => "event_blank",
    BadTime => "bad_time",
    BadMetadata => "bad_metadata",
    BadFields => "bad_fields",
    Gzip => "gzip",
    BodyRead => "body_read",
    NotFound => "not_found",
    FaultBusy => "fault_busy",
    FaultMarker => "fault_marker",
    FaultTooLarge => "fault_413",
    FaultReset => "fault_reset",
    FaultEvent => "fault_event",
    ChannelMissing => "channel_missing",
    ChannelInvalid => "channel_invalid",
    AckQueryInvalid => "ack_query_invalid",
}

/// Counter snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkStats {
    /// Every HTTP request, health checks and rejected ones included.
    pub requests: u64,
    pub accepted_requests: u64,
    pub accepted_events: u64,
    /// Body bytes as received (compressed when gzip) and after decompression.
    pub bytes_received: u64,
    pub bytes_decoded: u64,
    pub gzip_requests: u64,
    pub health_requests: u64,
    /// TCP connections accepted (shows whether clients keep connections alive).
    pub connections: u64,
    /// Refused requests by reason (resets included); all reasons listed, zeros too.
    pub rejected: Vec<(&'static str, u64)>,
    /// Requests answered with success whose events were never indexed (`lose_every`).
    pub lost_requests: u64,
    pub lost_events: u64,
    /// Ack queries answered, and ack IDs they reported true.
    pub ack_queries: u64,
    pub acks_true: u64,
    /// TLS handshakes that failed (with [`SinkConfig::tls`]).
    pub tls_handshake_failures: u64,
}

impl SinkStats {
    pub fn rejected(&self, reason: RejectReason) -> u64 {
        self.rejected
            .iter()
            .find(|(l, _)| *l == reason.label())
            .map_or(0, |(_, v)| *v)
    }
    pub fn rejected_total(&self) -> u64 {
        self.rejected.iter().map(|(_, v)| v).sum()
    }
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    accepted_requests: AtomicU64,
    accepted_events: AtomicU64,
    bytes_received: AtomicU64,
    bytes_decoded: AtomicU64,
    gzip_requests: AtomicU64,
    health_requests: AtomicU64,
    connections: AtomicU64,
    collector_requests: AtomicU64,
    rejected: [AtomicU64; RejectReason::COUNT],
    lost_requests: AtomicU64,
    lost_events: AtomicU64,
    ack_queries: AtomicU64,
    acks_true: AtomicU64,
    tls_handshake_failures: AtomicU64,
}

/// Request buffers are reused: allocating (and page-faulting) megabytes per request costs
/// more than validating them.
#[derive(Debug, Default)]
struct BufPool(Mutex<Vec<Vec<u8>>>);

const MAX_PREALLOC: usize = 256 << 20;
const POOL_KEEP: usize = 16;
const POOL_MAX_CAPACITY: usize = 64 << 20;

impl BufPool {
    fn get(&self, capacity: usize) -> Vec<u8> {
        let mut v = lock(&self.0).pop().unwrap_or_default();
        v.clear();
        v.reserve(capacity);
        v
    }

    fn put(&self, v: Vec<u8>) {
        if v.capacity() <= POOL_MAX_CAPACITY {
            let mut pool = lock(&self.0);
            if pool.len() < POOL_KEEP {
                pool.push(v);
            }
        }
    }
}

#[derive(Debug)]
struct Shared {
    pool: BufPool,
    token: String,
    record: bool,
    track_seq: bool,
    indexer_ack: bool,
    acks: ack::AckBook,
    tls: Option<Arc<rustls::ServerConfig>>,
    faults: Mutex<Faults>,
    counters: Counters,
    recorded: Mutex<Vec<serde_json::Value>>,
    last_headers: Mutex<Vec<(String, String)>>,
    seq: Mutex<SeqTracker>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves plain data behind; keep serving.
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The connection is dropped without an answer.
#[derive(Debug)]
struct Reset;

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fault injection: connection reset")
    }
}

impl std::error::Error for Reset {}

type Answer = Result<Response<Full<Bytes>>, Reset>;

/// What the faults decided for one collector request before it was processed.
#[derive(Clone, Copy)]
struct Fate<'a> {
    reset_now: bool,
    lose_now: bool,
    /// The request's data channel, when indexer ack is on.
    channel: Option<&'a str>,
}

fn json(status: u16, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    r
}

const SUCCESS: &str = r#"{"text":"Success","code":0}"#;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Event,
    Raw,
    Ack,
    Health,
}

impl Shared {
    fn reject(&self, r: &Reject) -> Response<Full<Bytes>> {
        self.count_reject(r.reason);
        json(r.status, r.body())
    }

    fn count_reject(&self, reason: RejectReason) {
        self.counters.rejected[reason as usize].fetch_add(1, Relaxed);
    }

    async fn handle(self: Arc<Self>, req: Request<Incoming>) -> Answer {
        self.counters.requests.fetch_add(1, Relaxed);
        let path = req.uri().path();
        let endpoint = match (req.method(), path.trim_end_matches('/')) {
            (
                &Method::POST,
                "/services/collector/event"
                | "/services/collector/event/1.0"
                | "/services/collector",
            ) => Endpoint::Event,
            (&Method::POST, "/services/collector/raw" | "/services/collector/raw/1.0") => {
                Endpoint::Raw
            }
            (&Method::POST, "/services/collector/ack" | "/services/collector/ack/1.0") => {
                Endpoint::Ack
            }
            (&Method::GET, "/services/collector/health" | "/services/collector/health/1.0") => {
                Endpoint::Health
            }
            _ => {
                self.count_reject(RejectReason::NotFound);
                return Ok(json(
                    404,
                    r#"{"text":"The requested URL was not found on this server.","code":404}"#,
                ));
            }
        };
        if let Endpoint::Health = endpoint {
            self.counters.health_requests.fetch_add(1, Relaxed);
            let busy = lock(&self.faults)
                .busy_until
                .is_some_and(|t| Instant::now() < t);
            return Ok(if busy {
                json(
                    503,
                    r#"{"text":"HEC is unhealthy, queues are full","code":18}"#,
                )
            } else {
                json(200, r#"{"text":"HEC is healthy","code":17}"#)
            });
        }
        if self.record {
            *lock(&self.last_headers) = req
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
        }
        if let Err(r) = self.check_token(req.headers().get(AUTHORIZATION)) {
            return Ok(self.reject(&r));
        }
        let channel = if self.indexer_ack || endpoint == Endpoint::Ack {
            match ack::channel_of(
                req.headers()
                    .get("x-splunk-request-channel")
                    .map(HeaderValue::as_bytes),
                req.uri().query(),
            ) {
                Ok(c) => Some(c),
                Err(r) => return Ok(self.reject(&r)),
            }
        } else {
            None
        };
        let gzip = req
            .headers()
            .get(CONTENT_ENCODING)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"));
        let hint = req
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
            .unwrap_or(0)
            .min(MAX_PREALLOC);
        let mut wire = self.pool.get(hint);
        let mut incoming = req.into_body();
        while let Some(frame) = incoming.frame().await {
            match frame {
                Ok(f) => {
                    if let Some(d) = f.data_ref() {
                        wire.extend_from_slice(d);
                    }
                }
                Err(_) => {
                    // The client went away mid-body; nobody is left to answer.
                    self.pool.put(wire);
                    self.count_reject(RejectReason::BodyRead);
                    return Err(Reset);
                }
            }
        }
        self.counters
            .bytes_received
            .fetch_add(wire.len() as u64, Relaxed);
        let mut decoded = None;
        if gzip {
            self.counters.gzip_requests.fetch_add(1, Relaxed);
            let mut out = self
                .pool
                .get(wire.len().saturating_mul(8).min(MAX_PREALLOC));
            if flate2::read::MultiGzDecoder::new(&wire[..])
                .read_to_end(&mut out)
                .is_err()
            {
                self.pool.put(out);
                self.pool.put(wire);
                return Ok(self.reject(&Reject::new(
                    400,
                    RejectReason::Gzip,
                    "Invalid data format",
                    6,
                )));
            }
            decoded = Some(out);
        }
        let body: &[u8] = decoded.as_deref().unwrap_or(&wire);
        self.counters
            .bytes_decoded
            .fetch_add(body.len() as u64, Relaxed);

        if endpoint == Endpoint::Ack {
            let answer = self.answer_ack(channel.as_deref().unwrap_or_default(), body);
            if let Some(d) = decoded {
                self.pool.put(d);
            }
            self.pool.put(wire);
            return Ok(answer);
        }
        let n = self.counters.collector_requests.fetch_add(1, Relaxed) + 1;
        let faults = lock(&self.faults).clone();
        let reset_now = faults
            .reset_every
            .is_some_and(|k| k > 0 && n.is_multiple_of(k));
        let lose_now = faults
            .lose_every
            .is_some_and(|k| k > 0 && n.is_multiple_of(k));
        let answer = self.process(
            endpoint,
            body,
            &faults,
            Fate {
                reset_now,
                lose_now,
                channel: channel.as_deref(),
            },
        );
        if let Some(d) = decoded {
            self.pool.put(d);
        }
        self.pool.put(wire);
        if let Some(d) = faults.delay {
            tokio::time::sleep(d).await;
        }
        answer
    }

    fn check_token(&self, auth: Option<&HeaderValue>) -> Result<(), Reject> {
        let Some(auth) = auth else {
            return Err(Reject::new(
                401,
                RejectReason::TokenMissing,
                "Token is required",
                2,
            ));
        };
        let Some(token) = auth.as_bytes().strip_prefix(b"Splunk ") else {
            return Err(Reject::new(
                401,
                RejectReason::AuthInvalid,
                "Invalid authorization",
                3,
            ));
        };
        if token.trim_ascii() != self.token.as_bytes() {
            return Err(Reject::new(
                403,
                RejectReason::TokenInvalid,
                "Invalid token",
                4,
            ));
        }
        Ok(())
    }

    fn take_busy(&self) -> bool {
        let mut f = lock(&self.faults);
        if f.busy_next > 0 {
            f.busy_next -= 1;
            return true;
        }
        f.busy_until.is_some_and(|t| Instant::now() < t)
    }

    fn answer_ack(&self, channel: &str, body: &[u8]) -> Response<Full<Bytes>> {
        self.counters.ack_queries.fetch_add(1, Relaxed);
        if lock(&self.faults).ack_garbage {
            return json(200, "<html>ack service unavailable</html>");
        }
        match self.acks.query(channel, body) {
            Ok((answer, trues)) => {
                self.counters.acks_true.fetch_add(trues, Relaxed);
                json(200, answer)
            }
            Err(r) => self.reject(&r),
        }
    }

    fn process(&self, endpoint: Endpoint, body: &[u8], faults: &Faults, fate: Fate<'_>) -> Answer {
        let Fate {
            reset_now,
            lose_now,
            channel,
        } = fate;
        if reset_now && !faults.reset_after_processing {
            self.count_reject(RejectReason::FaultReset);
            return Err(Reset);
        }
        if self.take_busy() {
            self.count_reject(RejectReason::FaultBusy);
            return Ok(json(503, r#"{"text":"Server is busy","code":9}"#));
        }
        if let Some(marker) = faults.reject_marker.as_deref()
            && !marker.is_empty()
            && contains(body, marker.as_bytes())
        {
            self.count_reject(RejectReason::FaultMarker);
            return Ok(json(
                400,
                r#"{"text":"Incorrect index","code":7,"invalid-event-number":0}"#,
            ));
        }

        // The first event carrying the per-event marker, if any: HEC refuses the request
        // naming it, and indexes the events before it only if the fault says so.
        let invalid = match faults.reject_event_marker.as_deref() {
            Some(m) if !m.is_empty() && contains(body, m.as_bytes()) => {
                let mut i = 0usize;
                let mut first = None;
                let _ = scan_events(body, |text| {
                    if first.is_none() && text.contains(m) {
                        first = Some(i);
                    }
                    i += 1;
                });
                first
            }
            _ => None,
        };
        let bad_index = match faults.reject_index.as_deref() {
            Some(idx) if contains(body, idx.as_bytes()) => {
                serde_json::Deserializer::from_slice(body)
                    .into_iter::<serde_json::Value>()
                    .map_while(Result::ok)
                    .position(|v| v.get("index").and_then(|i| i.as_str()) == Some(idx))
            }
            _ => None,
        };
        // The first refused event of either kind; code 7 for a refused index.
        let (invalid, index_code) = match (invalid, bad_index) {
            (Some(a), Some(b)) if b < a => (Some(b), true),
            (None, Some(b)) => (Some(b), true),
            (a, _) => (a, false),
        };
        let keep = invalid.unwrap_or(usize::MAX);
        if invalid.is_some() && (index_code || !faults.index_before_invalid) {
            self.count_reject(RejectReason::FaultEvent);
            if index_code {
                return Ok(json(
                    400,
                    format!(
                        r#"{{"text":"Incorrect index","code":7,"invalid-event-number":{keep}}}"#
                    ),
                ));
            }
            return Ok(self.reject_event(keep, faults.omit_event_number));
        }

        let mut ids: Vec<SeqId> = Vec::new();
        let mut unparsed = 0u64;
        let track = self.track_seq && !lose_now;
        let mut index = 0usize;
        let mut each = |text: &str| {
            let i = index;
            index += 1;
            if track && i < keep {
                match parse_seq(text) {
                    Some(id) => ids.push(id),
                    None => unparsed += 1,
                }
            }
        };
        let counted = match endpoint {
            Endpoint::Event => scan_events(body, &mut each),
            Endpoint::Raw => scan_raw(body, &mut each),
            Endpoint::Health | Endpoint::Ack => Ok(0),
        };
        let events = match counted {
            Ok(n) => n,
            Err(r) => return Ok(self.reject(&r)),
        };
        if faults.max_events.is_some_and(|max| events > max) {
            self.count_reject(RejectReason::FaultTooLarge);
            return Ok(json(413, r#"{"text":"Content too large","code":413}"#));
        }

        if lose_now {
            // Answered as a success, never indexed.
            self.counters.lost_requests.fetch_add(1, Relaxed);
            self.counters.lost_events.fetch_add(events as u64, Relaxed);
            return Ok(self.success(channel, false));
        }
        let indexed = events.min(keep);
        // Accepted: from here on the events count as indexed.
        if track {
            let mut seq = lock(&self.seq);
            seq.record_all(&ids);
            seq.record_unparsed(unparsed);
        }
        if self.record {
            let mut rec = lock(&self.recorded);
            match endpoint {
                Endpoint::Event => {
                    for v in serde_json::Deserializer::from_slice(body)
                        .into_iter::<serde_json::Value>()
                        .flatten()
                        .take(indexed)
                    {
                        rec.push(v);
                    }
                }
                _ => {
                    for line in raw_lines(body).take(indexed) {
                        rec.push(serde_json::json!({ "event": String::from_utf8_lossy(line) }));
                    }
                }
            }
        }
        self.counters.accepted_requests.fetch_add(1, Relaxed);
        self.counters
            .accepted_events
            .fetch_add(indexed as u64, Relaxed);
        if let Some(n) = invalid {
            self.count_reject(RejectReason::FaultEvent);
            return Ok(self.reject_event(n, faults.omit_event_number));
        }
        if reset_now {
            self.count_reject(RejectReason::FaultReset);
            return Err(Reset);
        }
        Ok(self.success(channel, true))
    }

    fn reject_event(&self, n: usize, omit_number: bool) -> Response<Full<Bytes>> {
        if omit_number {
            return json(400, r#"{"text":"Invalid data format","code":6}"#);
        }
        json(
            400,
            format!(r#"{{"text":"Invalid data format","code":6,"invalid-event-number":{n}}}"#),
        )
    }

    /// 200 Success, with an ackId when the request named a channel.
    fn success(&self, channel: Option<&str>, indexed: bool) -> Response<Full<Bytes>> {
        match channel {
            Some(ch) if self.indexer_ack => {
                let id = self.acks.issue(ch, indexed);
                json(
                    200,
                    format!(r#"{{"text":"Success","code":0,"ackId":{id}}}"#),
                )
            }
            _ => json(200, SUCCESS),
        }
    }

    fn stats(&self) -> SinkStats {
        let c = &self.counters;
        SinkStats {
            requests: c.requests.load(Relaxed),
            accepted_requests: c.accepted_requests.load(Relaxed),
            accepted_events: c.accepted_events.load(Relaxed),
            bytes_received: c.bytes_received.load(Relaxed),
            bytes_decoded: c.bytes_decoded.load(Relaxed),
            gzip_requests: c.gzip_requests.load(Relaxed),
            health_requests: c.health_requests.load(Relaxed),
            connections: c.connections.load(Relaxed),
            rejected: RejectReason::ALL
                .iter()
                .map(|r| (r.label(), c.rejected[*r as usize].load(Relaxed)))
                .collect(),
            lost_requests: c.lost_requests.load(Relaxed),
            lost_events: c.lost_events.load(Relaxed),
            ack_queries: c.ack_queries.load(Relaxed),
            acks_true: c.acks_true.load(Relaxed),
            tls_handshake_failures: c.tls_handshake_failures.load(Relaxed),
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn raw_lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !is_blank(l))
}

fn scan_raw(body: &[u8], each: &mut impl FnMut(&str)) -> Result<usize, Reject> {
    if is_blank(body) {
        return Err(Reject::new(400, RejectReason::NoData, "No data", 5));
    }
    let mut n = 0;
    for line in raw_lines(body) {
        each(&String::from_utf8_lossy(line));
        n += 1;
    }
    Ok(n)
}

/// Entry point; see [`SinkHandle`].
#[derive(Debug)]
pub struct HecSink;

impl HecSink {
    /// Starts the sink on the current tokio runtime. Validation runs inline on that runtime's
    /// worker threads (milliseconds for a 5000-event request); for throughput runs, or to keep
    /// a test's runtime free for the client under test, use [`SinkHandle::spawn_thread`].
    pub async fn start(cfg: SinkConfig) -> Result<SinkHandle, SinkError> {
        let std_listener = bind(cfg.addr)?;
        let (shared, shutdown_tx, shutdown_rx) = prepare(&cfg);
        let listener =
            tokio::net::TcpListener::from_std(std_listener).map_err(|source| SinkError::Bind {
                addr: cfg.addr,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| SinkError::Bind {
            addr: cfg.addr,
            source,
        })?;
        tokio::spawn(accept_loop(listener, Arc::clone(&shared), shutdown_rx));
        Ok(SinkHandle {
            addr,
            shared,
            shutdown: shutdown_tx,
            thread: None,
        })
    }
}

fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, SinkError> {
    let l = std::net::TcpListener::bind(addr).map_err(|source| SinkError::Bind { addr, source })?;
    l.set_nonblocking(true)
        .map_err(|source| SinkError::Bind { addr, source })?;
    Ok(l)
}

fn prepare(cfg: &SinkConfig) -> (Arc<Shared>, watch::Sender<bool>, watch::Receiver<bool>) {
    let shared = Arc::new(Shared {
        pool: BufPool::default(),
        token: cfg.token.clone(),
        record: cfg.record,
        track_seq: cfg.track_seq,
        indexer_ack: cfg.indexer_ack,
        acks: ack::AckBook::default(),
        tls: cfg.tls.clone(),
        faults: Mutex::new(cfg.faults.clone()),
        counters: Counters::default(),
        recorded: Mutex::new(Vec::new()),
        last_headers: Mutex::new(Vec::new()),
        seq: Mutex::new(SeqTracker::new()),
    });
    let (tx, rx) = watch::channel(false);
    (shared, tx, rx)
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            _ = shutdown.wait_for(|s| *s) => return,
            a = listener.accept() => a,
        };
        let (stream, _) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // EMFILE and friends: back off briefly instead of spinning.
                tracing::warn!(error = %e, "HEC sink accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        shared.counters.connections.fetch_add(1, Relaxed);
        let shared = Arc::clone(&shared);
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            match shared.tls.clone() {
                None => serve(stream, shared, &mut shutdown).await,
                Some(cfg) => {
                    let handshake = tokio::select! {
                        h = tokio_rustls::TlsAcceptor::from(cfg).accept(stream) => h,
                        _ = shutdown.wait_for(|s| *s) => return,
                    };
                    match handshake {
                        Ok(tls) => serve(tls, shared, &mut shutdown).await,
                        Err(e) => {
                            shared.counters.tls_handshake_failures.fetch_add(1, Relaxed);
                            tracing::debug!(error = %e, "HEC sink TLS handshake failed");
                        }
                    }
                }
            }
        });
    }
}

/// Serves HTTP/1.1 with keep-alive on one accepted connection until it closes or the sink
/// stops.
async fn serve<S>(stream: S, shared: Arc<Shared>, shutdown: &mut watch::Receiver<bool>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc = service_fn(move |req| Arc::clone(&shared).handle(req));
    let mut builder = http1::Builder::new();
    builder.keep_alive(true).writev(false);
    let conn = builder.serve_connection(TokioIo::new(stream), svc);
    tokio::select! {
        _ = conn => {}
        _ = shutdown.wait_for(|s| *s) => {}
    }
}
