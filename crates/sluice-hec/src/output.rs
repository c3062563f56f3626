//! HEC workers: pooled keep-alive HTTP client, URL round-robin with failover, retries by
//! response class, drain and abort. The response table is in the crate docs.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use sluice_proto::batch::EncodedBatch;
use sluice_proto::delivery::{AbandonReason, Completion, Delivery, Rejection};
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

use crate::HecError;
use crate::config::{ClientConfig, check_url};
use crate::stats::{HecStats, RequestOutcome, RetryReason};

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

/// One HEC destination: a configured HTTP client plus its stats. [`run`](Self::run) consumes
/// it and delivers batches until the channel drains or the abort token fires.
#[derive(Debug, Clone)]
pub struct HecOutput {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    cfg: ClientConfig,
    client: reqwest::Client,
    urls: Vec<reqwest::Url>,
    url_state: Vec<UrlState>,
    epoch: Instant,
    stats: Arc<HecStats>,
    log_rejected: LogLimit,
    log_retry: LogLimit,
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

/// A URL that just failed is skipped by URL selection until `down_until` (milliseconds since
/// `epoch`), so failover does not pay a dead endpoint's connect error or timeout per batch.
#[derive(Debug, Default)]
struct UrlState {
    down_until_ms: AtomicU64,
    failures: AtomicU32,
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
    Delivered,
    Rejected(String),
    TooLarge(String),
    Retry(RetryReason, String),
}

/// How sending one piece of a batch (the whole batch, or a part after a 413) ended.
enum Piece {
    /// Every URL failed it once and a buffer will keep it (see [`HecOutput::hand_back_when`]).
    HandBack {
        reason: sluice_proto::delivery::RetryReason,
        after: Duration,
    },
    Delivered,
    Rejected(String),
    TooLarge(String),
    Aborted,
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
    /// Validates `cfg` and builds the HTTP client. Opens no connection.
    pub fn new(cfg: ClientConfig, stats: Arc<HecStats>) -> Result<HecOutput, HecError> {
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
        if cfg.timeout.is_zero() {
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
        if cfg.connection_close {
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        let user_agent =
            HeaderValue::from_str(&cfg.user_agent).map_err(|_| HecError::InvalidUserAgent {
                value: cfg.user_agent.clone(),
            })?;

        let mut builder = reqwest::Client::builder();
        if let Some(tls) = &cfg.tls {
            builder = builder.use_preconfigured_tls((**tls).clone());
        }
        let client = builder
            .default_headers(headers)
            .user_agent(user_agent)
            .timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(Duration::from_secs(10)))
            .tcp_nodelay(true)
            .tcp_keepalive(Some(Duration::from_secs(60)))
            // One connection per worker, like SC4S's http() workers; HTTP/2 would multiplex
            // every worker onto one TCP stream.
            .http1_only()
            .pool_max_idle_per_host(cfg.workers)
            .pool_idle_timeout(Some(Duration::from_secs(90)))
            .danger_accept_invalid_certs(!cfg.tls_verify)
            .build()
            .map_err(|e| HecError::Client(error_chain(&e)))?;

        stats.set_url_count(urls.len());
        let url_state = urls.iter().map(|_| UrlState::default()).collect();
        Ok(HecOutput {
            inner: Arc::new(Inner {
                cfg,
                client,
                urls,
                url_state,
                epoch: Instant::now(),
                stats,
                log_rejected: LogLimit::default(),
                log_retry: LogLimit::default(),
                hand_back: std::sync::OnceLock::new(),
            }),
        })
    }

    pub fn stats(&self) -> &Arc<HecStats> {
        &self.inner.stats
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    /// For a destination with a disk buffer: a batch that only lives in memory (its delivery
    /// not persisted) and that every URL has failed once is handed back — completed as
    /// `Retry` — whenever `may` says so (the buffer has room), instead of being retried here
    /// for as long as HEC is down, where a crash would lose it. Batches that are persisted,
    /// and batches part of which was already delivered (after a 413 split), are retried here
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
        let mut set = tokio::task::JoinSet::new();
        for id in 0..self.inner.cfg.workers {
            let inner = Arc::clone(&self.inner);
            let rx = rx.clone();
            let abort = abort.clone();
            set.spawn(async move { inner.worker(id, rx, abort).await });
        }
        while let Some(joined) = set.join_next().await {
            if let Err(e) = joined {
                // Unreachable unless there is a bug: the delivery it held completed itself
                // as uncompleted when the task was dropped, which is counted and logged.
                error!(error = %e, "HEC worker task failed");
            }
        }
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

    /// Round-robin from this worker's cursor, skipping URLs that failed recently unless all
    /// of them did.
    fn pick(&self, cursor: &mut usize) -> usize {
        let n = self.urls.len();
        let now = self.now_ms();
        for k in 0..n {
            let idx = (*cursor + k) % n;
            if self.url_state[idx].down_until_ms.load(Relaxed) <= now {
                *cursor = idx + 1;
                return idx;
            }
        }
        let idx = *cursor % n;
        *cursor = idx + 1;
        idx
    }

    fn url_ok(&self, idx: usize) {
        let st = &self.url_state[idx];
        st.failures.store(0, Relaxed);
        st.down_until_ms.store(0, Relaxed);
    }

    fn url_failed(&self, idx: usize) {
        let st = &self.url_state[idx];
        let n = st.failures.fetch_add(1, Relaxed).saturating_add(1);
        let wait = self.cfg.backoff.delay(n);
        st.down_until_ms
            .store(self.now_ms() + wait.as_millis() as u64, Relaxed);
    }

    async fn worker(
        &self,
        id: usize,
        rx: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) {
        let mut cursor = id % self.urls.len();
        loop {
            let delivery = tokio::select! {
                biased;
                () = abort.cancelled() => return,
                r = rx.recv() => match r {
                    Ok(d) => d,
                    Err(_) => return,
                },
            };
            let events = delivery.events();
            self.stats.hold(events);
            let hand_back = (!delivery.is_persisted())
                .then(|| self.hand_back.get())
                .flatten();
            let completion = self
                .deliver(delivery.batch(), &mut cursor, &abort, hand_back)
                .await;
            self.stats.release(events);
            delivery.complete(completion);
        }
    }

    /// Sends one batch until every event is delivered or refused for good, splitting it at
    /// event boundaries after a 413; or until the abort fires. One completion for the whole
    /// batch, whatever the pieces did.
    async fn deliver(
        &self,
        batch: &EncodedBatch,
        cursor: &mut usize,
        abort: &CancellationToken,
        hand_back: Option<&HandBack>,
    ) -> Completion {
        // Pieces still to send, as event ranges; the next one is at the end.
        let mut pending: Vec<Range<u32>> = Vec::with_capacity(1);
        if !batch.is_empty() {
            pending.push(0..batch.events());
        }
        let mut rejected: Vec<Rejection> = Vec::new();
        while let Some(range) = pending.pop() {
            let count = range.end - range.start;
            let body = batch.events_bytes(range.clone());
            // Only a batch nothing of which was sent yet can go back whole.
            let whole = range.start == 0 && range.end == batch.events();
            let may = hand_back.filter(|_| whole);
            match self.send_piece(body, count, cursor, abort, may).await {
                Piece::HandBack { reason, after } => {
                    return Completion::Retry { after, reason };
                }
                Piece::Delivered => {}
                Piece::Rejected(text) => rejected.extend(range.map(|index| Rejection {
                    index,
                    code: Some(400),
                    text: text.clone(),
                })),
                Piece::TooLarge(_) if count >= 2 => {
                    debug!(
                        events = count,
                        "HEC answered 413; retrying the batch as two halves"
                    );
                    let mid = range.start + count / 2;
                    pending.push(mid..range.end);
                    pending.push(range.start..mid);
                }
                Piece::TooLarge(text) => {
                    error!(
                        bytes = batch.event(range.start).map_or(0, <[u8]>::len),
                        response = %text,
                        "HEC answered 413 to a single event; it is dropped \
                         (raise max_content_length in Splunk's limits.conf)"
                    );
                    rejected.push(Rejection {
                        index: range.start,
                        code: Some(413),
                        text,
                    });
                }
                // Pieces already delivered may make this an overcount of what is lost, never
                // an undercount.
                Piece::Aborted => {
                    return Completion::Abandoned {
                        reason: AbandonReason::Shutdown,
                    };
                }
            }
        }
        if rejected.is_empty() {
            Completion::Delivered
        } else {
            Completion::Rejected { events: rejected }
        }
    }

    /// Sends one piece (`events` events in `body`) until HEC answers something other than
    /// "retry", or the abort fires.
    async fn send_piece(
        &self,
        body: Bytes,
        events: u32,
        cursor: &mut usize,
        abort: &CancellationToken,
        hand_back: Option<&HandBack>,
    ) -> Piece {
        let raw_len = body.len();
        let wire = if self.cfg.compression {
            let raw = body.clone();
            // Compressing 4 MiB takes milliseconds: keep it off the executor threads.
            match tokio::task::spawn_blocking(move || gzip(&raw)).await {
                Ok(Ok(z)) => Some(Bytes::from(z)),
                Ok(Err(e)) => {
                    warn!(error = %e, "gzip failed; sending the batch uncompressed");
                    None
                }
                Err(e) => {
                    warn!(error = %e, "gzip task failed; sending the batch uncompressed");
                    None
                }
            }
        } else {
            None
        };
        let n_urls = self.urls.len() as u32;
        let mut failures: u32 = 0;
        loop {
            if abort.is_cancelled() {
                return Piece::Aborted;
            }
            let idx = self.pick(cursor);
            let (payload, gz) = match &wire {
                Some(z) => (z.clone(), true),
                None => (body.clone(), false),
            };
            self.stats.sent_bytes(raw_len, payload.len());
            let started = Instant::now();
            let result = tokio::select! {
                biased;
                () = abort.cancelled() => return Piece::Aborted,
                r = self.send(idx, payload, gz) => r,
            };
            let (outcome, verdict) = judge_response(result);
            self.stats.request(idx, outcome, started.elapsed());
            match verdict {
                Verdict::Delivered => {
                    self.url_ok(idx);
                    return Piece::Delivered;
                }
                Verdict::Rejected(text) => {
                    self.url_ok(idx);
                    if let Some(suppressed) = self.log_rejected.allow(self.now_ms()) {
                        error!(
                            url = %self.urls[idx],
                            events,
                            response = %text,
                            suppressed_since_last = suppressed,
                            "HEC rejected a batch with 400; its events are dropped"
                        );
                    }
                    return Piece::Rejected(text);
                }
                Verdict::TooLarge(text) => {
                    self.url_ok(idx);
                    return Piece::TooLarge(text);
                }
                Verdict::Retry(reason, detail) => {
                    self.stats.retried(reason, events);
                    self.url_failed(idx);
                    failures = failures.saturating_add(1);
                    if failures >= n_urls
                        && let Some(may) = hand_back
                        && (may.0)()
                    {
                        return Piece::HandBack {
                            reason: delivery_reason(reason),
                            after: self.cfg.backoff.delay(failures / n_urls),
                        };
                    }
                    if let Some(suppressed) = self.log_retry.allow(self.now_ms()) {
                        warn!(
                            url = %self.urls[idx],
                            reason = reason.label(),
                            detail = %detail,
                            events,
                            suppressed_since_last = suppressed,
                            "HEC request failed; the batch stays in memory and is retried"
                        );
                    }
                    // Fail over to the next URL at once; back off once every URL has failed
                    // this batch in the current round.
                    if failures.is_multiple_of(n_urls) {
                        let wait = self.cfg.backoff.delay(failures / n_urls);
                        tokio::select! {
                            biased;
                            () = abort.cancelled() => return Piece::Aborted,
                            () = tokio::time::sleep(wait) => {}
                        }
                    }
                }
            }
        }
    }

    async fn send(
        &self,
        idx: usize,
        body: Bytes,
        gz: bool,
    ) -> Result<(StatusCode, Bytes), reqwest::Error> {
        let mut req = self.client.post(self.urls[idx].clone()).body(body);
        if gz {
            req = req.header(header::CONTENT_ENCODING, "gzip");
        }
        let resp = req.send().await?;
        let status = resp.status();
        // The body is read to the end so the connection goes back to the pool.
        match resp.bytes().await {
            Ok(b) => Ok((status, b)),
            // A 2xx status means HEC accepted the data even if the short answer got lost.
            Err(_) if status.is_success() => Ok((status, Bytes::new())),
            Err(e) => Err(e),
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
        let token = match status_and_text(
            self.client
                .post(url.clone())
                .timeout(timeout)
                .body(Bytes::new()),
        )
        .await
        {
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
            // sluice does not send, so every batch would be answered 400 and dropped.
            400 if matches!(hec_code, Some(10 | 11)) => (
                Some(true),
                format!(
                    "token accepted, but it has indexer acknowledgement enabled ({}) — every \
                     batch would be rejected with 400 and dropped; disable acknowledgement on \
                     this token",
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

/// The completion's word for why a request failed.
fn delivery_reason(r: RetryReason) -> sluice_proto::delivery::RetryReason {
    use sluice_proto::delivery::RetryReason as D;
    match r {
        RetryReason::Connect => D::Unreachable,
        RetryReason::Timeout | RetryReason::Http408 => D::Timeout,
        RetryReason::Http429 => D::Throttled,
        RetryReason::Http5xx => D::ServerError,
        RetryReason::Http401 | RetryReason::Http403 | RetryReason::Http404 => D::Refused,
        RetryReason::Io | RetryReason::HttpOther => D::Other,
    }
}

fn judge_response(
    result: Result<(StatusCode, Bytes), reqwest::Error>,
) -> (RequestOutcome, Verdict) {
    let (status, body) = match result {
        Ok(r) => r,
        Err(e) => {
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
        200..=299 => (RequestOutcome::Success, Verdict::Delivered),
        400 => (RequestOutcome::BadRequest, Verdict::Rejected(text())),
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
            judge_response(Ok((
                StatusCode::from_u16(code).unwrap(),
                Bytes::from_static(b"{}"),
            )))
        };
        assert!(matches!(
            v(200),
            (RequestOutcome::Success, Verdict::Delivered)
        ));
        assert!(matches!(
            v(204),
            (RequestOutcome::Success, Verdict::Delivered)
        ));
        assert!(matches!(
            v(400),
            (RequestOutcome::BadRequest, Verdict::Rejected(_))
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
