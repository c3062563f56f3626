//! Kafka destinations (`SLUICE_DEST_KAFKA_<ID>_*`): librdkafka's idempotent producer, one per
//! destination.
//!
//! The batches this output gets are already Kafka records (the receivers encode them beside
//! the HEC event, [`sluice_proto::kafka`]): topic, key and value per event. Every record of a
//! batch is produced at once (librdkafka batches them per partition, compresses and sends);
//! each carries its batch's state as its delivery opaque, and librdkafka's delivery report
//! for it lands there.
//!
//! **What "delivered" means.** A batch completes `Delivered` when the delivery report of
//! every record is in and successful: with the default `acks=all`, every in-sync replica of
//! its partition has it. With the idempotent producer (the default) librdkafka's own retries
//! never duplicate or reorder a record within a partition.
//!
//! **Failures.** A record the broker refuses for good (too large, invalid, not authorised, an
//! invalid topic) is `Rejected`: written to the dead-letter file
//! (`<dead_letter_dir>/kafka_rejected.jsonl`), counted, logged; the rest of its batch is
//! delivered. Any other failure (the broker down or unreachable, no leader, a record not
//! confirmed within `_TIMEOUT`) is retried: a batch that lives only in memory goes back to the
//! disk buffer while it has room (`Retry`: the buffer keeps and replays it), otherwise the
//! failed records are produced again after a backoff, until the drain timeout. At least once:
//! a batch handed back after part of it was confirmed is sent again whole (at most one batch
//! of duplicates per failure).
//!
//! **A producer that cannot go on.** librdkafka's idempotent producer can fail for good (a
//! fatal error: fenced after its epoch bump, a sequence gap the broker refuses). The
//! instance must then be replaced: sluice makes a new producer with the same settings
//! (counted as `sluice_forward_errors_total{kind="producer_renewed"}`, logged) and sends the
//! records that failed again. Seen with tansu, which fences the producer when librdkafka bumps
//! its epoch after records timed out during a broker outage.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rdkafka::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use sluice_proto::delivery::{AbandonReason, Completion, Delivery, Rejection, RetryReason};
use sluice_proto::kafka::decode_record;
use tokio_util::sync::CancellationToken;

use super::start::{Limits, Started, start_forwarding};
use super::{Output, OutputTask};
use crate::config::{DestPlan, KafkaDestination};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{
    ForwardConnected, ForwardEvents, ForwardFailed, ForwardFiltered, ForwardRefused, ForwardSent,
};

const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(10);
/// The dead-letter file's name in its directory.
pub const DEAD_LETTER_FILE: &str = "kafka_rejected.jsonl";
/// Batches produced and not yet confirmed, at most: enough to keep the brokers busy, few
/// enough that a failure hands back little.
const IN_FLIGHT_BATCHES: usize = 16;

type HandBack = Arc<OnceLock<Box<dyn Fn() -> bool + Send + Sync>>>;

/// One record that failed and may be sent again.
#[derive(Debug)]
struct Failed {
    index: u32,
    error: KafkaError,
}

/// What became of the records of one batch attempt, filled in by the delivery reports.
#[derive(Debug, Default)]
struct BatchState {
    pending: AtomicU32,
    failed: Mutex<Vec<Failed>>,
    done: tokio::sync::Notify,
}

impl BatchState {
    /// Starts an attempt of `records` records. Only called by the slot's holder, after every
    /// report of its previous attempt is in.
    fn begin(&self, records: u32) {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.pending.store(records, Ordering::Release);
    }

    fn report(&self, failure: Option<Failed>) {
        if let Some(f) = failure
            && let Ok(mut v) = self.failed.lock()
        {
            v.push(f);
        }
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.notify_one();
        }
    }
}

/// One [`BatchState`] per batch in flight, shared by the output and every producer
/// generation's callbacks. A record's delivery opaque is a plain number, its slot and index
/// ([`opaque`]): a `Box` holding an `Arc` per record cost an allocation, a free and two
/// atomic updates of a cache line the producing and reporting threads both write, for each
/// record. A slot is reused only after every report of its attempt is in (`deliver` waits
/// for them), so a report can never land in the next batch's slot.
#[derive(Debug)]
struct Slots {
    states: [BatchState; IN_FLIGHT_BATCHES],
    free: Mutex<Vec<usize>>,
}

impl Slots {
    fn new() -> Arc<Slots> {
        Arc::new(Slots {
            states: std::array::from_fn(|_| BatchState::default()),
            free: Mutex::new((0..IN_FLIGHT_BATCHES).rev().collect()),
        })
    }

    /// A free slot. `run_inner` holds one of `IN_FLIGHT_BATCHES` permits per task, so one is
    /// free whenever it is called.
    fn take(self: &Arc<Slots>) -> Option<SlotGuard> {
        let i = self.free.lock().unwrap_or_else(|p| p.into_inner()).pop()?;
        Some(SlotGuard {
            slots: Arc::clone(self),
            index: i,
        })
    }

    /// The state a report with `opaque` belongs to, and the record's index in its batch.
    fn of(&self, opaque: usize) -> Option<(&BatchState, u32)> {
        let (slot, index) = unpack(opaque);
        self.states.get(slot).map(|s| (s, index))
    }
}

/// A taken slot, given back when dropped.
struct SlotGuard {
    slots: Arc<Slots>,
    index: usize,
}

impl SlotGuard {
    fn state(&self) -> &BatchState {
        &self.slots.states[self.index]
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.slots
            .free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(self.index);
    }
}

/// A record's delivery opaque: its batch's slot and its index in the batch.
fn opaque(slot: usize, index: u32) -> usize {
    (slot << 32) | index as usize
}

fn unpack(opaque: usize) -> (usize, u32) {
    (opaque >> 32, (opaque & 0xFFFF_FFFF) as u32)
}

/// librdkafka's callbacks: delivery reports, errors and logs.
struct Context {
    events: Arc<ForwardEvents>,
    slots: Arc<Slots>,
}

impl ClientContext for Context {
    fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, log_message: &str) {
        use rdkafka::config::RDKafkaLogLevel as L;
        match level {
            L::Emerg | L::Alert | L::Critical | L::Error => {
                tracing::error!(
                    destination = self.events.name(),
                    facility = fac,
                    "librdkafka: {log_message}"
                )
            }
            L::Warning => {
                tracing::warn!(
                    destination = self.events.name(),
                    facility = fac,
                    "librdkafka: {log_message}"
                )
            }
            _ => tracing::debug!(
                destination = self.events.name(),
                facility = fac,
                "librdkafka: {log_message}"
            ),
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        // Broker connection errors: reported, and retried by librdkafka itself.
        ForwardFailed {
            kind: "broker",
            error: &format!("{error}: {reason}"),
            events: 0,
            retry_in: Duration::ZERO,
        }
        .emit(&self.events);
    }
}

impl ProducerContext for Context {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, opaque: usize) {
        let Some((state, index)) = self.slots.of(opaque) else {
            return;
        };
        match result {
            Ok(_) => state.report(None),
            Err((e, _)) => state.report(Some(Failed {
                index,
                error: e.clone(),
            })),
        }
    }
}

type KafkaProducer = ThreadedProducer<Context>;

/// A Kafka destination's output.
pub struct KafkaOutput {
    name: String,
    /// The producer in use and its generation (see "A producer that cannot go on").
    producer: RwLock<(u64, Arc<KafkaProducer>)>,
    config: ClientConfig,
    events: Arc<ForwardEvents>,
    dead_letter: Arc<DeadLetter>,
    hand_back: HandBack,
    brokers: String,
    slots: Arc<Slots>,
}

impl std::fmt::Debug for KafkaOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaOutput")
            .field("name", &self.name)
            .field("brokers", &self.brokers)
            .finish()
    }
}

/// Whether a record failed for good: sending it again cannot succeed.
fn refused_for_good(e: &KafkaError) -> Option<&'static str> {
    use RDKafkaErrorCode as C;
    match e.rdkafka_error_code()? {
        C::MessageSizeTooLarge | C::InvalidMessageSize | C::MessageBatchTooLarge => {
            Some("too_large")
        }
        C::InvalidMessage | C::InvalidRecord | C::BadMessage | C::InvalidTimestamp => {
            Some("invalid_record")
        }
        C::TopicAuthorizationFailed | C::ClusterAuthorizationFailed => Some("not_authorized"),
        C::InvalidTopic => Some("invalid_topic"),
        C::PolicyViolation => Some("policy_violation"),
        _ => None,
    }
}

/// Whether the error means the producer instance cannot go on (it must be replaced).
fn is_fatal(e: &KafkaError) -> bool {
    use RDKafkaErrorCode as C;
    matches!(
        e.rdkafka_error_code(),
        Some(
            C::Fatal
                | C::ProducerFenced
                | C::InvalidProducerEpoch
                | C::OutOfOrderSequenceNumber
                | C::UnknownProducerId
        )
    )
}

/// The `kind` label of a retriable failure.
fn failure_kind(e: &KafkaError) -> (&'static str, RetryReason) {
    use RDKafkaErrorCode as C;
    match e.rdkafka_error_code() {
        Some(C::MessageTimedOut | C::RequestTimedOut) => ("timeout", RetryReason::Timeout),
        Some(C::QueueFull) => ("queue_full", RetryReason::Throttled),
        Some(C::BrokerTransportFailure | C::AllBrokersDown | C::Resolve | C::NetworkException) => {
            ("unreachable", RetryReason::Unreachable)
        }
        Some(C::UnknownTopicOrPartition | C::UnknownTopic | C::UnknownPartition) => {
            ("unknown_topic", RetryReason::Refused)
        }
        _ if is_fatal(e) => ("producer_fatal", RetryReason::Other),
        _ => ("kafka", RetryReason::Other),
    }
}

impl KafkaOutput {
    /// The producer of destination `name`; bad librdkafka settings are a startup error.
    pub fn new(
        name: &str,
        id: &str,
        cfg: &KafkaDestination,
        events: Arc<ForwardEvents>,
    ) -> anyhow::Result<KafkaOutput> {
        let p = KafkaDestination::var_prefix(id);
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", cfg.brokers.trim())
            .set("client.id", format!("sluice-{name}"))
            .set("acks", cfg.acks.librdkafka())
            .set("enable.idempotence", cfg.idempotence.to_string())
            .set(
                "compression.type",
                cfg.compression.trim().to_ascii_lowercase(),
            )
            .set("linger.ms", cfg.linger.as_millis().to_string())
            .set("message.timeout.ms", cfg.timeout.as_millis().to_string())
            .set("message.max.bytes", cfg.max_message_bytes.0.to_string())
            .set("queue.buffering.max.messages", "1000000")
            .set("queue.buffering.max.kbytes", "1048576")
            // Fewer, fuller requests (fewer wake-ups of the broker thread): with a 50 ms
            // linger a batch ends at `batch.size` (1 MB by default, so it still fits the
            // broker's default message.max.bytes whatever the compression), not at
            // librdkafka's default of 10,000 records, which small events reach first.
            .set("batch.num.messages", "100000")
            // Requests go out when librdkafka writes them, not after the peer's delayed ACK.
            .set("socket.nagle.disable", "true")
            .set(
                "security.protocol",
                cfg.security_protocol.trim().to_ascii_lowercase(),
            )
            .set(
                "enable.ssl.certificate.verification",
                cfg.tls_verify.to_string(),
            );
        for (prop, v) in [
            ("ssl.ca.location", &cfg.tls_ca_file),
            ("ssl.certificate.location", &cfg.tls_cert_file),
            ("ssl.key.location", &cfg.tls_key_file),
        ] {
            if let Some(path) = v {
                c.set(prop, path.display().to_string());
            }
        }
        for (prop, v) in [
            ("sasl.mechanism", &cfg.sasl_mechanism),
            ("sasl.username", &cfg.sasl_username),
            ("sasl.password", &cfg.sasl_password),
        ] {
            if let Some(v) = v {
                c.set(prop, v);
            }
        }
        for o in &cfg.options {
            if let Some((k, v)) = o.split_once('=') {
                c.set(k.trim(), v.trim());
            }
        }
        let slots = Slots::new();
        let producer: KafkaProducer = c
            .create_with_context(Context {
                events: Arc::clone(&events),
                slots: Arc::clone(&slots),
            })
            .map_err(|e| anyhow::anyhow!("destination {name}: {p}* (librdkafka): {e}"))?;
        let dir = cfg
            .dead_letter_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("dead-letter").join(name));
        let dead_letter = DeadLetter::open(&dir).map_err(|e| {
            anyhow::anyhow!(
                "destination {name}: {p}DEAD_LETTER_DIR={}: {e}",
                dir.display()
            )
        })?;
        Ok(KafkaOutput {
            name: name.to_owned(),
            producer: RwLock::new((0, Arc::new(producer))),
            config: c,
            events,
            dead_letter: Arc::new(dead_letter),
            hand_back: Arc::new(OnceLock::new()),
            brokers: cfg.brokers.clone(),
            slots,
        })
    }

    /// A handle that sets when a failing in-memory batch may go back to the disk buffer.
    pub fn hand_back_handle(&self) -> impl Fn(Box<dyn Fn() -> bool + Send + Sync>) + use<> {
        let h = Arc::clone(&self.hand_back);
        move |may| {
            let _ = h.set(may);
        }
    }

    /// The producer in use and its generation.
    fn producer(&self) -> (u64, Arc<KafkaProducer>) {
        let g = self.producer.read().unwrap_or_else(|p| p.into_inner());
        (g.0, Arc::clone(&g.1))
    }

    /// Replaces producer generation `generation` (unless another task did already) with a new one
    /// of the same settings. The old one is dropped off the runtime: dropping purges what it
    /// still holds (those records are reported failed and sent again) and joins its thread.
    fn renew(&self, generation: u64, why: &str) {
        let mut g = self.producer.write().unwrap_or_else(|p| p.into_inner());
        if g.0 != generation {
            return;
        }
        match self
            .config
            .create_with_context::<Context, KafkaProducer>(Context {
                events: Arc::clone(&self.events),
                slots: Arc::clone(&self.slots),
            }) {
            Ok(p) => {
                let old = std::mem::replace(&mut *g, (generation + 1, Arc::new(p)));
                drop(g);
                ForwardFailed {
                    kind: "producer_renewed",
                    error: &format!("the producer failed for good ({why}); a new one takes over"),
                    events: 0,
                    retry_in: Duration::ZERO,
                }
                .emit(&self.events);
                std::thread::spawn(move || drop(old));
            }
            Err(e) => tracing::error!(
                destination = %self.name,
                error = %e,
                "cannot make a new Kafka producer; retrying with the failed one"
            ),
        }
    }

    async fn run_inner(self, queue: async_channel::Receiver<Delivery>, abort: CancellationToken) {
        let this = Arc::new(self);
        let slots = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT_BATCHES));
        let mut tasks = tokio::task::JoinSet::new();
        // Whether the brokers answer: checked once at the start, for the log and `up`.
        {
            let t = Arc::clone(&this);
            tokio::task::spawn_blocking(move || t.probe());
        }
        loop {
            let d = tokio::select! {
                d = queue.recv() => match d {
                    Ok(d) => d,
                    Err(_) => break,
                },
                () = abort.cancelled() => break,
            };
            let permit = tokio::select! {
                p = Arc::clone(&slots).acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => break,
                },
                () = abort.cancelled() => {
                    d.complete(Completion::Abandoned { reason: AbandonReason::Shutdown });
                    break;
                }
            };
            let t = Arc::clone(&this);
            let abort = abort.clone();
            tasks.spawn(async move {
                t.deliver(d, &abort).await;
                drop(permit);
            });
            while tasks.try_join_next().is_some() {}
        }
        while tasks.join_next().await.is_some() {}
        let _ = this.producer().1.flush(Duration::from_secs(1));
    }

    fn probe(&self) {
        match self
            .producer()
            .1
            .client()
            .fetch_metadata(None, Duration::from_secs(10))
        {
            Ok(m) => {
                let peer = m
                    .brokers()
                    .iter()
                    .map(|b| format!("{}:{}", b.host(), b.port()))
                    .collect::<Vec<_>>()
                    .join(",");
                ForwardConnected { peer: &peer }.emit(&self.events);
            }
            Err(e) => ForwardFailed {
                kind: "unreachable",
                error: &format!("no broker of {} answered: {e}", self.brokers),
                events: 0,
                retry_in: Duration::ZERO,
            }
            .emit(&self.events),
        }
    }

    /// Produces every record of `d` and completes it (see the module docs).
    async fn deliver(&self, d: Delivery, abort: &CancellationToken) {
        let batch = d.batch();
        let mut todo: Vec<u32> = (0..batch.events()).collect();
        let mut rejected: Vec<Rejection> = Vec::new();
        let mut backoff = BACKOFF_FIRST;
        let Some(slot) = self.slots.take() else {
            // A bug: `run_inner` runs at most IN_FLIGHT_BATCHES of these at once. The batch
            // goes back to be offered again rather than being lost.
            tracing::error!(
                destination = %self.name,
                "no free delivery slot for a batch (a bug); handing it back"
            );
            d.complete(Completion::Retry {
                after: BACKOFF_FIRST,
                reason: RetryReason::Other,
            });
            return;
        };
        let state = slot.state();
        loop {
            let (generation, producer) = self.producer();
            state.begin(todo.len() as u32);
            let mut bytes = 0u64;
            let mut bad = 0u64;
            for &i in &todo {
                let line = batch.event(i).unwrap_or_default();
                let rec = match decode_record(line) {
                    Ok(r) => r,
                    Err(e) => {
                        // Not something the receivers write: refused for good, and kept.
                        self.dead_letter.record(
                            &self.events,
                            "",
                            &format!("{e}"),
                            line,
                            "bad_record",
                        );
                        rejected.push(Rejection {
                            index: i,
                            code: None,
                            text: e.to_string(),
                        });
                        bad += 1;
                        state.report(None);
                        continue;
                    }
                };
                if rec.fallback_topic {
                    ForwardFiltered {
                        events: 1,
                        reason: "topic_fallback",
                    }
                    .emit(&self.events);
                }
                let topic = String::from_utf8_lossy(rec.topic);
                let mut record =
                    BaseRecord::with_opaque_to(&topic, opaque(slot.index, i)).payload(rec.value);
                if let Some(k) = rec.key {
                    record = record.key(k);
                }
                loop {
                    match producer.send(record) {
                        Ok(()) => {
                            bytes += rec.value.len() as u64;
                            break;
                        }
                        Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                            record = r;
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        Err((e, r)) => {
                            // Refused before it left (too large for message.max.bytes, …):
                            // as if the broker had said so.
                            state.report(Some(Failed {
                                index: unpack(r.delivery_opaque).1,
                                error: e,
                            }));
                            break;
                        }
                    }
                }
            }
            // Every report in (librdkafka reports each record once, at the latest after
            // message.timeout.ms).
            while state.pending.load(Ordering::Acquire) > 0 {
                let notified = state.done.notified();
                if state.pending.load(Ordering::Acquire) == 0 {
                    break;
                }
                tokio::select! {
                    () = notified => {}
                    () = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
            }
            let failed =
                std::mem::take(&mut *state.failed.lock().unwrap_or_else(|p| p.into_inner()));
            let confirmed = (todo.len() as u64)
                .saturating_sub(failed.len() as u64)
                .saturating_sub(bad);
            let mut retry: Vec<u32> = Vec::new();
            let mut first_failure: Option<(&'static str, RetryReason, String)> = None;
            let fatal = failed
                .iter()
                .find(|f| is_fatal(&f.error))
                .map(|f| f.error.to_string())
                .or_else(|| {
                    producer
                        .client()
                        .fatal_error()
                        .map(|(c, t)| format!("{c:?}: {t}"))
                });
            drop(producer);
            if let Some(why) = &fatal {
                self.renew(generation, why);
            }
            for f in failed {
                if let Some(reason) = refused_for_good(&f.error) {
                    let line = batch.event(f.index).unwrap_or_default();
                    let (topic, value) = decode_record(line)
                        .map(|r| (String::from_utf8_lossy(r.topic).into_owned(), r.value))
                        .unwrap_or_default();
                    let text = f.error.to_string();
                    self.dead_letter
                        .record(&self.events, &topic, &text, value, reason);
                    rejected.push(Rejection {
                        index: f.index,
                        code: None,
                        text,
                    });
                } else {
                    if first_failure.is_none() {
                        let (kind, why) = failure_kind(&f.error);
                        first_failure = Some((kind, why, f.error.to_string()));
                    }
                    retry.push(f.index);
                }
            }
            ForwardSent {
                events: confirmed,
                bytes,
            }
            .emit(&self.events);
            let Some((kind, why, error)) = first_failure else {
                if confirmed > 0 {
                    ForwardConnected {
                        peer: &self.brokers,
                    }
                    .emit(&self.events);
                }
                d.complete(if rejected.is_empty() {
                    Completion::Delivered
                } else {
                    Completion::Rejected { events: rejected }
                });
                return;
            };
            ForwardFailed {
                kind,
                error: &error,
                events: retry.len() as u32,
                retry_in: backoff,
            }
            .emit(&self.events);
            let may = self.hand_back.get().is_some_and(|m| m());
            if !d.is_persisted() && may && rejected.is_empty() {
                d.complete(Completion::Retry {
                    after: backoff,
                    reason: why,
                });
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(backoff) => {}
                () = abort.cancelled() => {
                    d.complete(Completion::Abandoned { reason: AbandonReason::Shutdown });
                    return;
                }
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
            todo = retry;
        }
    }
}

impl Output for KafkaOutput {
    fn kind(&self) -> &'static str {
        "kafka"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(self.run_inner(queue, abort))
    }
}

/// Records the brokers refused for good, one JSON object per line:
/// `{"time":…,"topic":"…","reason":"too_large","error":"…","value":"…"}` (the value as text,
/// invalid UTF-8 replaced). The file is renamed to `.1` past 100 MB, so at most twice that
/// is kept.
#[derive(Debug)]
pub struct DeadLetter {
    path: PathBuf,
    file: Mutex<Option<std::fs::File>>,
}

const DEAD_LETTER_MAX_BYTES: u64 = 100_000_000;

impl DeadLetter {
    pub fn open(dir: &Path) -> std::io::Result<DeadLetter> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(DEAD_LETTER_FILE);
        // Opened now so that an unwritable directory is a startup error.
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        Ok(DeadLetter {
            path,
            file: Mutex::new(Some(file)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn record(
        &self,
        events: &ForwardEvents,
        topic: &str,
        error: &str,
        value: &[u8],
        reason: &'static str,
    ) {
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let line = serde_json::json!({
            "time": (time * 1000.0).round() / 1000.0,
            "topic": topic,
            "reason": reason,
            "error": error,
            "value": String::from_utf8_lossy(value),
        });
        let mut text = line.to_string();
        text.push('\n');
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let written = (|| -> std::io::Result<()> {
            if guard
                .as_ref()
                .and_then(|f| f.metadata().ok())
                .is_some_and(|m| m.len() + text.len() as u64 > DEAD_LETTER_MAX_BYTES)
            {
                let mut old = self.path.clone().into_os_string();
                old.push(".1");
                std::fs::rename(&self.path, &old)?;
                *guard = None;
            }
            if guard.is_none() {
                *guard = Some(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&self.path)?,
                );
            }
            match guard.as_mut() {
                Some(f) => f.write_all(text.as_bytes()),
                None => Ok(()),
            }
        })();
        let detail = match &written {
            Ok(()) => format!("{error} (kept in {})", self.path.display()),
            Err(e) => format!(
                "{error} (the dead-letter file {} failed: {e})",
                self.path.display()
            ),
        };
        ForwardRefused {
            events: 1,
            reason,
            detail: &detail,
        }
        .emit(events);
    }
}

/// Starts a Kafka destination: its producer, its disk buffer, and hand-back to that buffer.
pub(super) fn start(
    d: &DestPlan,
    k: &KafkaDestination,
    limits: &Limits<'_>,
) -> anyhow::Result<Started> {
    let events = Arc::new(ForwardEvents::register(
        crate::telemetry::metrics(),
        &d.name,
        "kafka",
    ));
    let output = KafkaOutput::new(&d.name, d.id.var(), k, Arc::clone(&events))?;
    let set_hand_back = output.hand_back_handle();
    tracing::info!(
        destination = %d.name,
        brokers = %k.brokers,
        topic = %k.topic,
        key = %k.key,
        acks = k.acks.librdkafka(),
        idempotence = k.idempotence,
        "producing events to Kafka"
    );
    start_forwarding(
        d,
        Box::new(output),
        set_hand_back,
        &k.buffer,
        &KafkaDestination::var_prefix(d.id.var()),
        limits,
        events,
    )
}

#[cfg(test)]
mod tests;
