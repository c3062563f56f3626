//! One worker's delivery loop: a batch is sent as pieces ([`Isolation`]) until every event
//! is accepted or refused for good; with indexer acknowledgement an accepted piece then
//! waits for its ack, and the batch finishes only once every piece is acked. Pieces whose
//! ack does not come in time are sent again. Transport failures are retried here with URL
//! failover and backoff; the URL board takes failing indexers out of service.

use std::time::{Duration, Instant};

use bytes::Bytes;
use tracing::{debug, error, warn};

use super::{Inner, Verdict, gzip, judge_response};
use crate::ack::{self, AckTracker};
use crate::deadletter::DeadEvent;
use crate::fallback;
use crate::health::UrlResult;
use crate::observe::HecEvent;
use crate::reject::{
    BadRequestKind, FALLBACK_CODE, HecAnswer, Isolation, Piece, PieceAnswer, event_starts,
};
use crate::stats::{RequestOutcome, RetryReason};
use sluice_proto::delivery::Delivery;
use std::sync::atomic::Ordering::Relaxed;
use tokio_util::sync::CancellationToken as AbortSignal;

/// What the worker hands out.
pub(super) trait Job: Send {
    fn body(&self) -> &Bytes;
    fn events(&self) -> u32;
    /// Where each event starts in the body; asked for only when part of the batch is sent.
    fn event_starts(&self) -> Vec<u32> {
        event_starts(self.body())
    }
    /// Whether the batch lives only in memory, so a disk buffer may take it over
    /// (see `HecOutput::hand_back_when`).
    fn may_hand_back(&self) -> bool {
        false
    }
}

impl Job for Delivery {
    fn body(&self) -> &Bytes {
        self.batch().body()
    }
    fn events(&self) -> u32 {
        Delivery::events(self)
    }
    fn event_starts(&self) -> Vec<u32> {
        let b = self.batch();
        (0..b.events())
            .map(|i| b.event_range(i).map_or(0, |r| r.start as u32))
            .collect()
    }
    fn may_hand_back(&self) -> bool {
        !self.is_persisted()
    }
}

/// How a batch ended.
pub(super) enum Finish {
    /// Every event was accepted (and acked, with acknowledgement on) except `refused`.
    Done {
        refused: Vec<crate::reject::RefusedEvent>,
    },
    /// The abort came first.
    Abandoned,
    /// Every URL failed the whole batch once and the disk buffer takes it over.
    HandBack {
        reason: RetryReason,
        after: Duration,
    },
}

struct Slot<J> {
    job: J,
    starts: Vec<u32>,
    iso: Isolation,
    /// Pieces accepted and waiting for their ack.
    awaiting: u32,
    isolated: bool,
    /// Set when every URL failed the whole batch and the disk buffer takes it over.
    handed_back: Option<(RetryReason, Duration)>,
}

struct Worker<J> {
    id: usize,
    cursor: usize,
    channel: Option<String>,
    slots: Vec<Option<Slot<J>>>,
    acks: AckTracker<(usize, Piece)>,
    next_poll: Instant,
}

impl<J> Worker<J> {
    fn live(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    fn insert(&mut self, slot: Slot<J>) -> usize {
        match self.slots.iter().position(Option::is_none) {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        }
    }
}

/// How sending one piece ended.
enum Sent {
    /// Every URL failed it once and a disk buffer takes it over.
    HandBack {
        reason: RetryReason,
        after: Duration,
    },
    Accepted {
        url: usize,
        ack_id: Option<u64>,
    },
    BadData {
        url: usize,
        answer: HecAnswer,
        text: String,
    },
    TooLarge {
        url: usize,
        text: String,
    },
    /// Timed out and may be sent again smaller.
    TimedOut,
    Aborted,
}

impl Inner {
    fn client_for(&self, worker: usize) -> &reqwest::Client {
        self.worker_clients.get(worker).unwrap_or(&self.client)
    }

    fn request_done(
        &self,
        url: usize,
        outcome: RequestOutcome,
        latency: Duration,
        raw: usize,
        sent: usize,
    ) {
        self.observer.observe(HecEvent::Request {
            url,
            outcome,
            latency,
            raw,
            sent,
        });
    }

    fn url_backoff(&self) -> impl Fn(u32) -> Duration + '_ {
        |n| self.cfg.backoff.delay(n)
    }

    /// Runs one worker until the channel is closed and every batch it took is finished, or
    /// until the abort. `finish` gets every batch exactly once.
    pub(super) async fn run_worker<J: Job>(
        &self,
        id: usize,
        rx: async_channel::Receiver<J>,
        abort: &AbortSignal,
        finish: &mut impl FnMut(J, Finish),
    ) {
        let ack = self.cfg.ack;
        let mut w = Worker {
            id,
            cursor: id % self.urls.len().max(1),
            channel: ack.map(|_| ack::new_channel()),
            slots: Vec::new(),
            acks: AckTracker::default(),
            next_poll: Instant::now(),
        };
        let max_pending = ack.map_or(1, |a| a.max_pending);
        let mut open = true;
        loop {
            if abort.is_cancelled() {
                self.abandon_all(&mut w, finish);
                return;
            }
            if let Some(a) = ack
                && !w.acks.is_empty()
                && Instant::now() >= w.next_poll
            {
                if !self.poll_acks(&mut w, abort, finish).await {
                    self.abandon_all(&mut w, finish);
                    return;
                }
                w.next_poll = Instant::now() + a.poll_interval;
                continue;
            }
            let waiting = !w.acks.is_empty();
            if open && w.live() < max_pending {
                let job = tokio::select! {
                    biased;
                    _ = abort.cancelled() => continue,
                    r = rx.recv() => r,
                    _ = tokio::time::sleep_until(w.next_poll.into()), if waiting => continue,
                };
                match job {
                    Ok(job) => {
                        self.observer.observe(HecEvent::Held {
                            events: job.events(),
                        });
                        let events = job.events();
                        let i = w.insert(Slot {
                            job,
                            starts: Vec::new(),
                            iso: Isolation::new(events, self.cfg.resend_policy),
                            awaiting: 0,
                            isolated: false,
                            handed_back: None,
                        });
                        if !self.drive(&mut w, i, abort).await {
                            self.abandon_all(&mut w, finish);
                            return;
                        }
                        Self::try_finish(&mut w, i, finish);
                    }
                    Err(_) => open = false,
                }
            } else if waiting {
                tokio::select! {
                    biased;
                    _ = abort.cancelled() => {}
                    _ = tokio::time::sleep_until(w.next_poll.into()) => {}
                }
            } else if w.live() == 0 {
                return;
            } else {
                // Unreachable: a live batch either has pieces waiting for acks or was
                // finished when its last piece was answered.
                error!(
                    worker = w.id,
                    "HEC worker holds batches with nothing to wait for"
                );
                self.abandon_all(&mut w, finish);
                return;
            }
        }
    }

    fn abandon_all<J>(&self, w: &mut Worker<J>, finish: &mut impl FnMut(J, Finish)) {
        if !w.acks.is_empty() {
            self.observer.observe(HecEvent::AckAbandoned {
                requests: w.acks.len() as u32,
            });
        }
        w.acks.drain();
        for slot in w.slots.drain(..).flatten() {
            finish(slot.job, Finish::Abandoned);
        }
    }

    fn try_finish<J>(w: &mut Worker<J>, i: usize, finish: &mut impl FnMut(J, Finish)) {
        let handed_back = w.slots[i]
            .as_ref()
            .and_then(|s| s.handed_back.filter(|_| s.awaiting == 0));
        if let Some((reason, after)) = handed_back
            && let Some(slot) = w.slots[i].take()
        {
            finish(slot.job, Finish::HandBack { reason, after });
            return;
        }
        let done = w.slots[i]
            .as_ref()
            .is_some_and(|s| s.iso.is_done() && s.awaiting == 0);
        if done && let Some(slot) = w.slots[i].take() {
            let refused = slot.iso.into_refused();
            finish(slot.job, Finish::Done { refused });
        }
    }

    /// Sends the pieces of batch `i` that are due. Returns false on abort.
    async fn drive<J: Job>(&self, w: &mut Worker<J>, i: usize, abort: &AbortSignal) -> bool {
        loop {
            let Some(slot) = w.slots[i].as_mut() else {
                return true;
            };
            let Some(piece) = slot.iso.next_piece() else {
                return true;
            };
            let whole = !piece.is_fallback()
                && matches!(piece.ranges(), [r] if r.start == 0 && r.end == slot.job.events());
            let body = if piece.is_fallback() {
                if slot.starts.is_empty() {
                    slot.starts = slot.job.event_starts();
                }
                self.fallback_body(&piece, slot.job.body(), &slot.starts)
            } else if whole {
                // The common case: no event boundaries needed.
                slot.job.body().clone()
            } else {
                if slot.starts.is_empty() {
                    slot.starts = slot.job.event_starts();
                }
                piece.body(slot.job.body(), &slot.starts)
            };
            let splittable = piece.len() >= 2 && piece.depth < self.cfg.latency_split_depth;
            // Only a batch of which nothing was sent yet can go back whole.
            let hand_back = (whole
                && !slot.isolated
                && slot.awaiting == 0
                && slot.iso.refused().is_empty()
                && slot.job.may_hand_back())
            .then(|| self.hand_back.get())
            .flatten();
            let sent = self
                .send_piece(
                    w.id,
                    body,
                    piece.len(),
                    &mut w.cursor,
                    w.channel.as_deref(),
                    splittable,
                    hand_back,
                    abort,
                )
                .await;
            let Some(slot) = w.slots[i].as_mut() else {
                return true;
            };
            let resent_before = slot.iso.resent_events();
            let refused_before = slot.iso.refused().len();
            let was_fallback = piece.is_fallback();
            let url = match sent {
                Sent::HandBack { reason, after } => {
                    slot.handed_back = Some((reason, after));
                    return true;
                }
                Sent::Aborted => {
                    slot.iso.push_back(piece);
                    return false;
                }
                Sent::TimedOut => {
                    self.observer.observe(HecEvent::LatencySplit);
                    if let Err(p) = slot
                        .iso
                        .split_for_latency(piece, self.cfg.latency_split_depth)
                    {
                        slot.iso.push_back(p);
                    }
                    continue;
                }
                Sent::Accepted { url, ack_id } => {
                    match (self.cfg.ack.is_some(), ack_id) {
                        (true, Some(id)) => {
                            slot.awaiting += 1;
                            self.observer.observe(HecEvent::AckWaiting);
                            w.acks.insert(url, id, Instant::now(), (i, piece));
                        }
                        (true, None) => {
                            if !self.warned_no_ack_id.swap(true, Relaxed) {
                                warn!(
                                    url = %self.urls[url],
                                    "indexer acknowledgement is on but HEC answered without an \
                                     ackId (acknowledgement is off on this token?): accepted \
                                     requests count as delivered when answered"
                                );
                            }
                            slot.iso.answer(piece, PieceAnswer::Accepted);
                        }
                        (false, _) => slot.iso.answer(piece, PieceAnswer::Accepted),
                    }
                    continue;
                }
                Sent::BadData { url, answer, text } => {
                    slot.isolated = true;
                    // Splunk's own words when it gave them, the whole answer otherwise.
                    let text = answer.text.unwrap_or(text);
                    slot.iso.answer(
                        piece,
                        PieceAnswer::BadData {
                            code: answer.code,
                            text,
                            invalid_event: answer.invalid_event,
                        },
                    );
                    url
                }
                Sent::TooLarge { url, text } => {
                    slot.isolated = true;
                    slot.iso.answer(piece, PieceAnswer::TooLarge { text });
                    url
                }
            };
            if slot.isolated && resent_before == 0 && slot.iso.resent_events() > 0 {
                self.observer.observe(HecEvent::Isolated);
            }
            let resent = slot.iso.resent_events() - resent_before;
            if resent > 0 {
                self.observer
                    .observe(HecEvent::IsolationResent { events: resent });
            }
            if slot.iso.refused().len() > refused_before && slot.starts.is_empty() {
                slot.starts = slot.job.event_starts();
            }
            if !was_fallback && let Some(fb) = self.cfg.fallback_index.as_deref() {
                let candidates: Vec<u32> = slot.iso.refused()[refused_before..]
                    .iter()
                    .filter(|r| r.status == 400 && r.code == Some(FALLBACK_CODE))
                    .map(|r| r.index)
                    .collect();
                for index in candidates {
                    let event =
                        Piece::range(index..index + 1).body_ref(slot.job.body(), &slot.starts);
                    if let Ok(original) = fallback::original_index(event, fb) {
                        slot.iso.fall_back(index);
                        self.observer.observe(HecEvent::FallbackIndex {
                            original: original.as_deref(),
                            fallback: fb,
                        });
                    }
                }
            }
            let new = &slot.iso.refused()[refused_before.min(slot.iso.refused().len())..];
            if !new.is_empty() {
                let url_s = self.urls[url].as_str();
                // The event as it came, with the index it asked for: once that index exists
                // it can be sent again as it is.
                let texts: Vec<String> = new
                    .iter()
                    .map(|r| match (&self.cfg.fallback_index, was_fallback) {
                        (Some(fb), true) => {
                            format!(
                                "{} (sent to the fallback index {fb}, refused there too)",
                                r.text
                            )
                        }
                        _ => r.text.clone(),
                    })
                    .collect();
                let events: Vec<DeadEvent<'_>> = new
                    .iter()
                    .zip(&texts)
                    .map(|(r, text)| DeadEvent {
                        event: Piece::range(r.index..r.index + 1)
                            .body_ref(slot.job.body(), &slot.starts),
                        url: url_s,
                        status: r.status,
                        code: r.code,
                        text,
                    })
                    .collect();
                self.dead_letter.record(&*self.observer, &events);
            }
        }
    }

    /// Sends one piece until HEC answers something other than "retry", or it timed out and
    /// may be split (`splittable`), or the abort fires.
    #[allow(clippy::too_many_arguments)]
    async fn send_piece(
        &self,
        worker: usize,
        body: Bytes,
        events: u32,
        cursor: &mut usize,
        channel: Option<&str>,
        splittable: bool,
        hand_back: Option<&super::HandBack>,
        abort: &AbortSignal,
    ) -> Sent {
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
        let client = self.client_for(worker);
        let n_urls = self.urls.len().max(1) as u32;
        let mut failures: u32 = 0;
        loop {
            if abort.is_cancelled() {
                return Sent::Aborted;
            }
            let idx = self.board.pick(cursor);
            let (payload, gz) = match &wire {
                Some(z) => (z.clone(), true),
                None => (body.clone(), false),
            };
            let sent_len = payload.len();
            let slow = self.board.is_slow(idx);
            let timeout = if slow {
                self.cfg
                    .timeout
                    .saturating_mul(self.cfg.slow_timeout_factor.max(1))
            } else {
                self.cfg.timeout
            };
            let started = Instant::now();
            let result = tokio::select! {
                biased;
                _ = abort.cancelled() => return Sent::Aborted,
                r = self.send(client, idx, payload, gz, channel, timeout) => r,
            };
            let elapsed = started.elapsed();
            let (mut outcome, verdict) = judge_response(result, self.cfg.ack.is_some());
            // A 400 about the request (channel, ack settings) is held like a 401.
            let verdict = match verdict {
                Verdict::Rejected(body, text) => {
                    let answer = HecAnswer::parse(&body);
                    if BadRequestKind::of(answer.code) == BadRequestKind::Request {
                        outcome = RequestOutcome::BadRequest;
                        Verdict::Retry(RetryReason::Http400Request, text)
                    } else {
                        self.request_done(idx, outcome, elapsed, raw_len, sent_len);
                        self.board
                            .record(idx, UrlResult::DataRefused, self.url_backoff());
                        self.log_refused(idx, events, &text);
                        return Sent::BadData {
                            url: idx,
                            answer,
                            text,
                        };
                    }
                }
                v => v,
            };
            self.request_done(idx, outcome, elapsed, raw_len, sent_len);
            match verdict {
                Verdict::Delivered(answer) => {
                    self.board
                        .record(idx, UrlResult::Success, self.url_backoff());
                    if slow && elapsed < self.cfg.timeout {
                        self.board.set_slow(idx, false);
                    }
                    let ack_id = HecAnswer::parse(&answer).ack_id;
                    return Sent::Accepted { url: idx, ack_id };
                }
                Verdict::TooLarge(text) => {
                    self.board
                        .record(idx, UrlResult::DataRefused, self.url_backoff());
                    return Sent::TooLarge { url: idx, text };
                }
                Verdict::Rejected(..) => unreachable!("handled above"),
                Verdict::Retry(reason, detail) => {
                    self.observer.observe(HecEvent::Retried {
                        url: idx,
                        reason,
                        events,
                    });
                    self.board.record(
                        idx,
                        UrlResult::Failed {
                            reason: reason.label(),
                        },
                        self.url_backoff(),
                    );
                    if n_urls > 1 {
                        self.observer.observe(HecEvent::Failover { url: idx });
                    }
                    failures = failures.saturating_add(1);
                    // Not after a timeout: HEC may still be indexing what it did not answer
                    // in time, and the slow-indexer handling below keeps the duplicates to
                    // one batch per worker; a replay from the buffer would resend it whole.
                    if failures >= n_urls
                        && reason != RetryReason::Timeout
                        && let Some(may) = hand_back
                        && (may.0)()
                    {
                        return Sent::HandBack {
                            reason,
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
                    if reason == RetryReason::Timeout {
                        // HEC may still be indexing what it did not answer in time: wait
                        // longer for this indexer, and send less at a time.
                        self.board.set_slow(idx, true);
                        if splittable {
                            return Sent::TimedOut;
                        }
                    }
                    // Fail over to the next URL at once; back off once every URL has failed
                    // this piece in the current round.
                    if failures.is_multiple_of(n_urls) {
                        let wait = self.cfg.backoff.delay(failures / n_urls);
                        tokio::select! {
                            biased;
                            _ = abort.cancelled() => return Sent::Aborted,
                            _ = tokio::time::sleep(wait) => {}
                        }
                    }
                }
            }
        }
    }

    /// The body of a fallback piece: each of its events with the fallback index
    /// ([`fallback::rewrite`]), joined by `\n`.
    fn fallback_body(&self, piece: &Piece, body: &Bytes, starts: &[u32]) -> Bytes {
        let fb = self.cfg.fallback_index.as_deref().unwrap_or_default();
        let mut out = Vec::new();
        for (n, index) in piece.indexes().enumerate() {
            if n > 0 {
                out.push(b'\n');
            }
            let event = Piece::range(index..index + 1).body_ref(body, starts);
            match fallback::rewrite(event, fb) {
                Ok(e) => out.extend_from_slice(&e),
                // Checked before it was taken for the fallback: unreachable, and HEC then
                // refuses it again and it is dead-lettered.
                Err(_) => out.extend_from_slice(event),
            }
        }
        Bytes::from(out)
    }

    fn log_refused(&self, idx: usize, events: u32, text: &str) {
        if let Some(suppressed) = self.log_rejected.allow(self.now_ms()) {
            debug!(
                url = %self.urls[idx],
                events,
                response = %text,
                suppressed_since_last = suppressed,
                "HEC refused a request with 400; isolating the events it objects to"
            );
        }
    }

    /// Asks for every ack the worker waits for, finishes what is acked and sends again
    /// what waited too long. Returns false on abort.
    async fn poll_acks<J: Job>(
        &self,
        w: &mut Worker<J>,
        abort: &AbortSignal,
        finish: &mut impl FnMut(J, Finish),
    ) -> bool {
        let Some(cfg) = self.cfg.ack else {
            return true;
        };
        let channel = w.channel.clone().unwrap_or_default();
        for (url, ids) in w.acks.queries() {
            let answer = tokio::select! {
                biased;
                _ = abort.cancelled() => return false,
                a = self.query_acks(w.id, url, &channel, &ids) => a,
            };
            match answer {
                Ok(map) => {
                    self.observer.observe(HecEvent::AckQueried { ok: true });
                    for (i, piece) in w.acks.apply(url, &map) {
                        self.observer.observe(HecEvent::Acked {
                            events: piece.len(),
                        });
                        if let Some(slot) = w.slots[i].as_mut() {
                            slot.awaiting -= 1;
                            slot.iso.answer(piece, PieceAnswer::Accepted);
                        }
                        Self::try_finish(w, i, finish);
                    }
                }
                Err(e) => {
                    self.observer.observe(HecEvent::AckQueried { ok: false });
                    if let Some(suppressed) = self.log_ack.allow(self.now_ms()) {
                        error!(
                            url = %self.urls[url],
                            error = %e,
                            suppressed_since_last = suppressed,
                            "HEC ack query failed; nothing counts as acknowledged until it works"
                        );
                    }
                }
            }
        }
        let late = w.acks.expired(Instant::now(), cfg.timeout);
        let mut again = Vec::new();
        for (i, piece) in late {
            self.observer.observe(HecEvent::AckTimedOut {
                events: piece.len(),
            });
            if let Some(slot) = w.slots[i].as_mut() {
                slot.awaiting -= 1;
                slot.iso.push_back(piece);
                if !again.contains(&i) {
                    again.push(i);
                }
            }
        }
        if !again.is_empty() {
            debug!(
                worker = w.id,
                batches = again.len(),
                "HEC acks did not come in time; sending those events again"
            );
        }
        for i in again {
            if !self.drive(w, i, abort).await {
                return false;
            }
            Self::try_finish(w, i, finish);
        }
        true
    }

    /// `POST /services/collector/ack?channel=…` at the URL that issued the IDs.
    async fn query_acks(
        &self,
        worker: usize,
        url: usize,
        channel: &str,
        ids: &[u64],
    ) -> Result<std::collections::HashMap<u64, bool>, String> {
        let base = self.urls[url].origin().ascii_serialization();
        let resp = tokio::time::timeout(
            self.cfg.timeout,
            self.client_for(worker)
                .post(format!("{base}{}?channel={channel}", ack::ACK_PATH))
                .header(ack::CHANNEL_HEADER, channel)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(ack::query_body(ids))
                .send(),
        )
        .await
        .map_err(|_| "no answer in time".to_string())?
        .map_err(|e| super::root_cause(&e))?;
        let status = resp.status();
        let body = tokio::time::timeout(self.cfg.body_timeout, resp.bytes())
            .await
            .map_err(|_| "the answer's body did not arrive in time".to_string())?
            .map_err(|e| super::root_cause(&e))?;
        if !status.is_success() {
            return Err(format!(
                "answered {} {}",
                status.as_u16(),
                super::response_text(&body)
            ));
        }
        ack::parse_answer(&body).map_err(|e| e.to_string())
    }

    /// Probes URLs that are out of service and brings back those that answer healthy.
    pub(super) async fn probe_out_urls(self: std::sync::Arc<Self>) {
        let every = self.cfg.backoff.initial.max(Duration::from_millis(50));
        loop {
            tokio::time::sleep(every).await;
            for idx in self.board.due_for_probe() {
                let base = self.urls[idx].origin().ascii_serialization();
                let ok = tokio::time::timeout(
                    self.cfg.timeout,
                    self.client
                        .get(format!("{base}/services/collector/health"))
                        .send(),
                )
                .await
                .is_ok_and(|r| r.is_ok_and(|r| r.status().is_success()));
                self.board.probed(idx, ok, self.url_backoff());
                if ok {
                    tracing::info!(url = %self.urls[idx], "HEC URL is healthy again; back in service");
                }
            }
        }
    }
}
