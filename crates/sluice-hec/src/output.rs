//! HEC workers: pooled keep-alive HTTP client, URL round-robin with failover, retries by
//! response class, drain and abort. The response table is in the crate docs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use sluice_proto::delivery::{AbandonReason, Completion, Delivery, Rejection};
use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

use crate::HecError;
use crate::config::{ClientConfig, check_url};
use crate::deadletter::DeadLetter;
use crate::health::UrlBoard;
use crate::observe::{HecEvent, HecObserver};
use crate::stats::{RequestOutcome, RetryReason};

mod engine;

/// Result of the startup check of one URL ([`HecOutput::probe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeResult {
    pub url: String,
    /// An HTTP answer came back.
    pub reachable: bool,
    /// `GET /services/collector/health`: `Some(true)` on 200, `Some(false)` on another
    /// status, `None` when unreachable.
    pub healthy: Option<bool>,
    /// Judged from an empty `POST` to the event endpoint: HEC answers a valid token with
    /// 400 "No data" (code 5) and a bad one with 401/403. `None` when it could not be told.
    pub token_accepted: Option<bool>,
    /// One line for the log.
    pub message: String,
}

/// One HEC destination: a configured HTTP client and the observer it reports to. [`run`](Self::run) consumes
/// it and delivers batches until the channel drains or the abort token fires.
#[derive(Debug, Clone)]
pub struct HecOutput {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    cfg: ClientConfig,
    client: reqwest::Client,
    /// With indexer acknowledgement, one client (a pool of one connection per URL) per
    /// worker, so a worker's ack queries follow its requests to the same indexer.
    worker_clients: Vec<reqwest::Client>,
    urls: Vec<reqwest::Url>,
    /// Which URLs are in service.
    board: Arc<UrlBoard>,
    dead_letter: DeadLetter,
    epoch: Instant,
    observer: Arc<dyn HecObserver>,
    log_rejected: LogLimit,
    log_retry: LogLimit,
    log_ack: LogLimit,
    warned_no_ack_id: std::sync::atomic::AtomicBool,
    /// See [`HecOutput::hand_back_when`].
    hand_back: std::sync::OnceLock<HandBack>,
}

/// Whether a failing batch that nobody persisted may be handed back now.
#[derive(Clone)]
struct HandBack(Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for HandBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HandBack")
    }
}

/// At most one log line per interval per kind; the lines in between are counted and the
/// count is reported with the next line.
#[derive(Debug, Default)]
struct LogLimit {
    next_ms: AtomicU64,
    suppressed: AtomicU64,
}

const LOG_INTERVAL_MS: u64 = 5_000;

impl LogLimit {
    fn allow(&self, now_ms: u64) -> Option<u64> {
        let next = self.next_ms.load(Relaxed);
        if now_ms >= next
            && self
                .next_ms
                .compare_exchange(next, now_ms + LOG_INTERVAL_MS, Relaxed, Relaxed)
                .is_ok()
        {
            return Some(self.suppressed.swap(0, Relaxed));
        }
        self.suppressed.fetch_add(1, Relaxed);
        None
    }
}

enum Verdict {
    /// 2xx, with the answer body (it carries the ackId).
    Delivered(Bytes),
    /// 400, with the answer body.
    Rejected(Bytes, String),
    TooLarge(String),
    Retry(RetryReason, String),
}

/// Why a request got no usable answer.
#[derive(Debug)]
enum SendError {
    /// No status line within the (possibly slow-indexer) request timeout, or the body did
    /// not arrive within the body timeout.
    Timeout,
    /// The answer's status arrived but its body could not be read.
    Body(StatusCode, reqwest::Error),
    Http(reqwest::Error),
}

fn header_value(name: &str, value: &str) -> Result<HeaderValue, HecError> {
    HeaderValue::from_str(value).map_err(|e| HecError::InvalidHeader {
        name: name.to_string(),
        reason: e.to_string(),
    })
}

/// The innermost cause of an error, e.g. "Connection refused (os error 111)": the outer
/// layers only repeat the URL and "error sending request".
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let cause = cur.to_string();
    match crate::tls_hint(&cause) {
        Some(hint) => format!("{cause} ({hint})"),
        None => cause,
    }
}

/// The whole chain, for errors where every layer may matter (client construction).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

fn response_text(body: &[u8]) -> String {
    const MAX: usize = 512;
    let t = String::from_utf8_lossy(&body[..body.len().min(MAX)]);
    t.trim().to_string()
}

fn gzip(body: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    // Level 1: HEC payloads are repetitive JSON; higher levels buy little ratio for a lot
    // of CPU that the receive threads need.
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4 + 64),
        flate2::Compression::fast(),
    );
    enc.write_all(body)?;
    enc.finish()
}

impl HecOutput {
    /// Validates `cfg` and builds the HTTP client. Opens no connection. Everything that
    /// happens is reported to `observer` ([`crate::observe`]).
    pub fn new(cfg: ClientConfig, observer: Arc<dyn HecObserver>) -> Result<HecOutput, HecError> {
        if cfg.urls.is_empty() {
            return Err(HecError::NoUrls);
        }
        let mut urls = Vec::with_capacity(cfg.urls.len());
        for u in &cfg.urls {
            urls.push(check_url(u).map_err(|reason| HecError::InvalidUrl {
                entry: u.clone(),
                reason,
            })?);
        }
        if cfg.token.is_empty() {
            return Err(HecError::EmptyToken);
        }
        if cfg.workers == 0 {
            return Err(HecError::NoWorkers(0));
        }
        if cfg.timeout.is_zero() || cfg.connect_timeout.is_zero() || cfg.body_timeout.is_zero() {
            return Err(HecError::ZeroTimeout);
        }

        // SC4S's order: user headers, Authorization, then connection handling.
        let mut headers = HeaderMap::new();
        for (name, value) in &cfg.headers {
            let hn = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| {
                HecError::InvalidHeader {
                    name: name.clone(),
                    reason: e.to_string(),
                }
            })?;
            headers.append(hn, header_value(name, value.trim())?);
        }
        let mut auth = HeaderValue::from_str(&format!("Splunk {}", cfg.token))
            .map_err(|e| HecError::InvalidToken(e.to_string()))?;
        auth.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, auth);
        if cfg.connection_close && cfg.ack.is_some() {
            // An ackId is known only to the indexer that issued it, and every indexer counts
            // a channel's IDs from 0: behind a load balancer, a query on a new connection may
            // reach another indexer and read *its* ID as true. Keeping the worker's
            // connection is what pins its acks to the right indexer.
            warn!(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_CONNECTION_CLOSE is ignored with indexer \
                 acknowledgement: acks must be asked for over the connection that sent the data"
            );
        } else if cfg.connection_close {
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        let user_agent =
            HeaderValue::from_str(&cfg.user_agent).map_err(|_| HecError::InvalidUserAgent {
                value: cfg.user_agent.clone(),
            })?;

        let build = |pool: usize| {
            let mut builder = reqwest::Client::builder();
            if let Some(tls) = &cfg.tls {
                builder = builder.use_preconfigured_tls((**tls).clone());
            }
            builder
                .default_headers(headers.clone())
                .user_agent(user_agent.clone())
                // No whole-request timeout: the request timeout ends at the answer's headers
                // and the body has its own (see `send`).
                .connect_timeout(cfg.connect_timeout)
                .tcp_nodelay(true)
                .tcp_keepalive(Some(Duration::from_secs(60)))
                // One connection per worker, like SC4S's http() workers; HTTP/2 would
                // multiplex every worker onto one TCP stream.
                .http1_only()
                .pool_max_idle_per_host(pool)
                .pool_idle_timeout(Some(Duration::from_secs(90)))
                // A redirect is an answer about configuration, not a place to send events.
                .redirect(reqwest::redirect::Policy::none())
                .danger_accept_invalid_certs(!cfg.tls_verify)
                .build()
                .map_err(|e| HecError::Client(error_chain(&e)))
        };
        let client = build(cfg.workers)?;
        let worker_clients = if cfg.ack.is_some() {
            (0..cfg.workers)
                .map(|_| build(1))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        if let Some(ack) = &cfg.ack
            && (ack.poll_interval.is_zero() || ack.timeout.is_zero() || ack.max_pending == 0)
        {
            return Err(HecError::Ack(
                "poll interval, timeout and pending batches must be greater than zero".into(),
            ));
        }
        if let Some(fb) = &cfg.fallback_index
            && !crate::fallback::valid_index_name(fb)
        {
            return Err(HecError::InvalidFallbackIndex(fb.clone()));
        }
        let dead_letter = match &cfg.dead_letter {
            Some(dl) => DeadLetter::open(dl)?,
            None => DeadLetter::disabled(),
        };

        let names: Vec<String> = urls.iter().map(|u| u.to_string()).collect();
        observer.observe(HecEvent::Urls(&names));
        let board = Arc::new(UrlBoard::new(names, Arc::clone(&observer)));
        Ok(HecOutput {
            inner: Arc::new(Inner {
                cfg,
                client,
                worker_clients,
                urls,
                board,
                dead_letter,
                epoch: Instant::now(),
                observer,
                log_rejected: LogLimit::default(),
                log_retry: LogLimit::default(),
                log_ack: LogLimit::default(),
                warned_no_ack_id: Default::default(),
                hand_back: std::sync::OnceLock::new(),
            }),
        })
    }

    /// Which URLs are in service: [`UrlBoard::healthy`] is "able to deliver", and
    /// [`UrlBoard::reason`] says why not.
    pub fn health(&self) -> &Arc<UrlBoard> {
        &self.inner.board
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    /// For a destination with a disk buffer: a batch that only lives in memory (its delivery
    /// not persisted) and that every URL has failed once is handed back — completed as
    /// `Retry` — whenever `may` says so (the buffer has room), instead of being retried here
    /// for as long as HEC is down, where a crash would lose it. Batches that are persisted,
    /// and batches part of which was already sent (isolation or a split), are retried here
    /// as always. Set once; later calls do nothing.
    pub fn hand_back_when(&self, may: impl Fn() -> bool + Send + Sync + 'static) {
        let _ = self.inner.hand_back.set(HandBack(Arc::new(may)));
    }

    /// Delivers from `rx` with `workers` tasks until `rx` is closed and empty and every held
    /// delivery is completed, or until `abort` fires. Every delivery taken is completed
    /// exactly once (see the crate docs' table). After an abort, what workers held and what
    /// is still queued completes as [`Abandoned`](Completion::Abandoned) with
    /// [`AbandonReason::Shutdown`], and the channel is closed (a later send fails and hands
    /// the delivery back to the sender).
    pub async fn run(self, rx: async_channel::Receiver<Delivery>, abort: CancellationToken) {
        let prober = tokio::spawn(Arc::clone(&self.inner).probe_out_urls());
        let mut set = tokio::task::JoinSet::new();
        for id in 0..self.inner.cfg.workers {
            let inner = Arc::clone(&self.inner);
            let rx = rx.clone();
            let abort = abort.clone();
            set.spawn(async move { inner.worker(id, rx, abort).await });
        }
        while let Some(joined) = set.join_next().await {
            if let Err(e) = joined {
                // Unreachable unless there is a bug: the deliveries it held completed
                // themselves as uncompleted when the task was dropped, counted and logged.
                error!(error = %e, "HEC worker task failed");
            }
        }
        prober.abort();
        if abort.is_cancelled() {
            rx.close();
            while let Ok(d) = rx.try_recv() {
                d.complete(Completion::Abandoned {
                    reason: AbandonReason::Shutdown,
                });
            }
        }
    }

    /// Checks every URL once: reachable, HEC health, token. Never fails; the results say what
    /// is wrong. Delivery does not depend on it (events are held and retried regardless).
    pub async fn probe(&self) -> Vec<ProbeResult> {
        let mut out = Vec::with_capacity(self.inner.urls.len());
        for url in &self.inner.urls {
            out.push(self.inner.probe_one(url).await);
        }
        out
    }
}

impl Inner {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    async fn worker(
        &self,
        id: usize,
        rx: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) {
        let observer = &self.observer;
        let mut finish = |delivery: Delivery, end: engine::Finish| {
            observer.observe(HecEvent::Released {
                events: delivery.events(),
            });
            let completion = match end {
                engine::Finish::Done { refused } if refused.is_empty() => Completion::Delivered,
                engine::Finish::Done { refused } => Completion::Rejected {
                    events: refused
                        .into_iter()
                        .map(|r| Rejection {
                            index: r.index,
                            code: Some(r.status),
                            text: r.text,
                        })
                        .collect(),
                },
                engine::Finish::Abandoned => Completion::Abandoned {
                    reason: AbandonReason::Shutdown,
                },
                engine::Finish::HandBack { reason, after } => Completion::Retry {
                    after,
                    reason: delivery_reason(reason),
                },
            };
            delivery.complete(completion);
        };
        self.run_worker(id, rx, &abort, &mut finish).await;
    }

    /// One request: the status line and headers within `timeout`, the body within the body
    /// timeout.
    async fn send(
        &self,
        client: &reqwest::Client,
        idx: usize,
        body: Bytes,
        gz: bool,
        channel: Option<&str>,
        timeout: Duration,
    ) -> Result<(StatusCode, Bytes), SendError> {
        let mut req = client.post(self.urls[idx].clone()).body(body);
        if gz {
            req = req.header(header::CONTENT_ENCODING, "gzip");
        }
        if let Some(ch) = channel {
            req = req.header(crate::ack::CHANNEL_HEADER, ch);
        }
        let resp = match tokio::time::timeout(timeout, req.send()).await {
            Err(_) => return Err(SendError::Timeout),
            Ok(r) => r.map_err(SendError::Http)?,
        };
        let status = resp.status();
        // The body is read to the end so the connection goes back to the pool. Its own
        // timeout: an answer that is arriving is not a failed request.
        match tokio::time::timeout(self.cfg.body_timeout, resp.bytes()).await {
            Ok(Ok(b)) => Ok((status, b)),
            Ok(Err(e)) => Err(SendError::Body(status, e)),
            Err(_) => Err(SendError::Timeout),
        }
    }

    async fn probe_one(&self, url: &reqwest::Url) -> ProbeResult {
        let base = url.origin().ascii_serialization();
        let timeout = self.cfg.timeout.min(Duration::from_secs(10));
        let unreachable = |e: &reqwest::Error| ProbeResult {
            url: url.to_string(),
            reachable: false,
            healthy: None,
            token_accepted: None,
            message: format!(
                "HEC at {base} unreachable: {} — events are kept in memory until it comes back",
                root_cause(e)
            ),
        };
        let health = match status_and_text(
            self.client
                .get(format!("{base}/services/collector/health"))
                .timeout(timeout),
        )
        .await
        {
            Ok(r) => r,
            Err(e) => return unreachable(&e),
        };
        let mut token_req = self
            .client
            .post(url.clone())
            .timeout(timeout)
            .body(Bytes::new());
        if self.cfg.ack.is_some() {
            token_req = token_req.header(crate::ack::CHANNEL_HEADER, crate::ack::new_channel());
        }
        let token = match status_and_text(token_req).await {
            Ok(r) => r,
            Err(e) => return unreachable(&e),
        };
        let healthy = health.0.is_success();
        let health_msg = if healthy {
            "healthy".to_string()
        } else {
            format!("health check answered {} {}", health.0.as_u16(), health.1)
        };
        let hec_code = serde_json::from_str::<serde_json::Value>(&token.1)
            .ok()
            .and_then(|v| v.get("code").and_then(serde_json::Value::as_i64));
        let (token_accepted, token_msg) = match token.0.as_u16() {
            // Codes 10/11: the token requires an indexer-acknowledgement channel, which
            // sluice sends only with acknowledgement on; every batch would be held.
            400 if matches!(hec_code, Some(10 | 11)) => (
                Some(true),
                format!(
                    "token accepted, but it has indexer acknowledgement enabled ({}) — every \
                     batch would be refused and held; set SLUICE_HEC_INDEXER_ACK=yes \
                     (hec.indexer_ack) or disable acknowledgement on this token",
                    token.1
                ),
            ),
            // "No data" (code 5) is what a valid token gets for an empty body.
            200..=299 | 400 => (Some(true), "token accepted".to_string()),
            401 | 403 => (
                Some(false),
                format!(
                    "token rejected ({} {}) — events are kept in memory and retried until the token is fixed",
                    token.0.as_u16(),
                    token.1
                ),
            ),
            s => (
                None,
                format!("token check inconclusive: {url} answered {s} {}", token.1),
            ),
        };
        let message = format!("HEC at {base}: {token_msg}; {health_msg}");
        if token_accepted == Some(true) && healthy && !matches!(hec_code, Some(10 | 11)) {
            info!(url = %url, "{message}");
        } else {
            warn!(url = %url, "{message}");
        }
        ProbeResult {
            url: url.to_string(),
            reachable: true,
            healthy: Some(healthy),
            token_accepted,
            message,
        }
    }
}

fn judge_response(
    result: Result<(StatusCode, Bytes), SendError>,
    ack: bool,
) -> (RequestOutcome, Verdict) {
    let (status, body) = match result {
        Ok(r) => r,
        Err(SendError::Timeout) => {
            return (
                RequestOutcome::Timeout,
                Verdict::Retry(RetryReason::Timeout, "no answer in time".into()),
            );
        }
        // A 2xx status means HEC accepted the data even if the short answer got lost;
        // with indexer acknowledgement the lost answer held the ackId, so it is sent again.
        Err(SendError::Body(status, _)) if status.is_success() && !ack => (status, Bytes::new()),
        Err(SendError::Body(_, e)) => {
            return (
                RequestOutcome::Io,
                Verdict::Retry(RetryReason::Io, root_cause(&e)),
            );
        }
        Err(SendError::Http(e)) => {
            let detail = root_cause(&e);
            return if e.is_timeout() {
                (
                    RequestOutcome::Timeout,
                    Verdict::Retry(RetryReason::Timeout, detail),
                )
            } else if e.is_connect() {
                (
                    RequestOutcome::Connect,
                    Verdict::Retry(RetryReason::Connect, detail),
                )
            } else {
                (RequestOutcome::Io, Verdict::Retry(RetryReason::Io, detail))
            };
        }
    };
    let text = || format!("{} {}", status.as_u16(), response_text(&body));
    match status.as_u16() {
        200..=299 => (RequestOutcome::Success, Verdict::Delivered(body)),
        400 => {
            let t = text();
            (RequestOutcome::BadRequest, Verdict::Rejected(body, t))
        }
        413 => (RequestOutcome::TooLarge, Verdict::TooLarge(text())),
        401 => (
            RequestOutcome::Unauthorized,
            Verdict::Retry(RetryReason::Http401, text()),
        ),
        403 => (
            RequestOutcome::Forbidden,
            Verdict::Retry(RetryReason::Http403, text()),
        ),
        404 => (
            RequestOutcome::NotFound,
            Verdict::Retry(RetryReason::Http404, text()),
        ),
        408 => (
            RequestOutcome::RequestTimeout,
            Verdict::Retry(RetryReason::Http408, text()),
        ),
        429 => (
            RequestOutcome::TooManyRequests,
            Verdict::Retry(RetryReason::Http429, text()),
        ),
        500..=599 => (
            RequestOutcome::ServerError,
            Verdict::Retry(RetryReason::Http5xx, text()),
        ),
        _ => (
            RequestOutcome::OtherStatus,
            Verdict::Retry(RetryReason::HttpOther, text()),
        ),
    }
}

/// Sends `req` and returns the status with Splunk's response text (empty if the body could
/// not be read: the status alone still classifies the answer).
async fn status_and_text(
    req: reqwest::RequestBuilder,
) -> Result<(reqwest::StatusCode, String), reqwest::Error> {
    let r = req.send().await?;
    let status = r.status();
    let text = r
        .bytes()
        .await
        .map(|b| response_text(&b))
        .unwrap_or_default();
    Ok((status, text))
}

/// The completion's word for why a request failed.
fn delivery_reason(r: RetryReason) -> sluice_proto::delivery::RetryReason {
    use sluice_proto::delivery::RetryReason as D;
    match r {
        RetryReason::Connect => D::Unreachable,
        RetryReason::Timeout | RetryReason::Http408 => D::Timeout,
        RetryReason::Http429 => D::Throttled,
        RetryReason::Http5xx => D::ServerError,
        RetryReason::Http401
        | RetryReason::Http403
        | RetryReason::Http404
        | RetryReason::Http400Request => D::Refused,
        RetryReason::Io | RetryReason::HttpOther => D::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_limit_lets_one_line_through_per_interval_and_counts_the_rest() {
        let l = LogLimit::default();
        assert_eq!(l.allow(0), Some(0));
        assert_eq!(l.allow(10), None);
        assert_eq!(l.allow(4_999), None);
        assert_eq!(l.allow(5_000), Some(2));
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read;
        let body = b"{\"event\":\"a\"}\n{\"event\":\"b\"}".repeat(100);
        let z = gzip(&body).unwrap();
        assert!(z.len() < body.len());
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&z[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
    }

    #[test]
    fn statuses_map_to_the_documented_classes() {
        let v = |code: u16| {
            judge_response(
                Ok((
                    StatusCode::from_u16(code).unwrap(),
                    Bytes::from_static(b"{}"),
                )),
                false,
            )
        };
        assert!(matches!(
            v(200),
            (RequestOutcome::Success, Verdict::Delivered(_))
        ));
        assert!(matches!(
            v(204),
            (RequestOutcome::Success, Verdict::Delivered(_))
        ));
        assert!(matches!(
            v(400),
            (RequestOutcome::BadRequest, Verdict::Rejected(..))
        ));
        assert!(matches!(
            v(413),
            (RequestOutcome::TooLarge, Verdict::TooLarge(_))
        ));
        for (code, reason) in [
            (401, RetryReason::Http401),
            (403, RetryReason::Http403),
            (404, RetryReason::Http404),
            (408, RetryReason::Http408),
            (429, RetryReason::Http429),
            (500, RetryReason::Http5xx),
            (503, RetryReason::Http5xx),
            (301, RetryReason::HttpOther),
            (422, RetryReason::HttpOther),
        ] {
            match v(code) {
                (_, Verdict::Retry(r, _)) => assert_eq!(r, reason, "status {code}"),
                _ => panic!("status {code} must be retried"),
            }
        }
    }
}
