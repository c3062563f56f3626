//! A destination with a disk buffer (`sluice_buffer`) between its receivers and its output.
//!
//! ```text
//! Submit ─► intake ─► router ─┬─────────────► output queue (bounded) ─► Output
//!                             └─► disk buffer ─► replay ─┘
//! ```
//!
//! * **Normal mode.** The router hands a batch straight to the output while the output is
//!   up, waiting for room in the output queue if it must. Only when the output is behind —
//!   down, its queue full with nothing taken for a short grace, or a burst filling the
//!   window of an input that cannot push back (UDP) or the memory budget past their
//!   high-water mark — is the batch *spilled*: appended to the buffer, which makes its
//!   events safe at once (their window slots return, so the receivers keep reading), and
//!   completed as `Retry { Buffered }`. A full stream window (TCP, TLS) with an output that
//!   is taking batches is not a reason: its receivers stop reading and TCP holds the senders
//!   back, losing nothing, whereas spilling would spend the CPU the output needs on writing,
//!   checking and reading back events it would have taken anyway (a 10-connection TCP
//!   load past what the machine delivers spilled 20 % of its CPU into the buffer).
//!   The buffer writes and fsyncs on its flush policy, so a crash loses at most about one
//!   flush interval of what was spilled.
//! * **Reliable mode.** Every batch is appended, and counts as safe only once its group
//!   commit's fsync is done; then its window slots return. Nothing reported safe is lost by a
//!   crash.
//! * **Replay.** One task reads the buffer in order (after a restart, from where the last
//!   run stopped) and offers every record to the output as a delivery that is safe from the
//!   start ([`Delivery::from_buffer`]), standing back while a live batch waits for room. A
//!   record is acknowledged — and its segment can be deleted — when that delivery completes
//!   `Delivered` or `Rejected`.
//! * **Memory (reliable mode).** What the replay has read back and not yet seen completed
//!   — waiting in the output queue or held by the output's workers — is bounded by
//!   `replay_memory` bytes: syslog-ng's `mem-buf-size()` of a reliable disk-buffer, the part
//!   of the buffer that is also in memory (SC4S `…_DISKBUFF_MEMBUFSIZE`, per worker there).
//! * **Full.** When the buffer refuses an append (its budget or the filesystem is full, or
//!   the disk cannot keep up) the router waits for room with the batch in hand; meanwhile the
//!   windows fill and the receivers stop: TCP pushes back, UDP drops in the kernel (counted as
//!   `buffer_full`). It recovers by itself when the output drains the buffer.
//! * **Rescue.** A batch the output gives up on (the drain timeout at shutdown) is written to
//!   the buffer instead of being lost ([`super::Rescue`]).
//! * **Stop.** At shutdown a healthy output keeps delivering until the drain timeout. A
//!   failing one (HEC: every URL out of service, at SIGTERM or during the drain) is stopped
//!   at once: the router has written the intake to disk, the replay stops, and what the
//!   output held is rescued to the buffer — the stop takes what the disk takes, not the
//!   drain timeout, and nothing is lost.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU8};
use std::time::{Duration, SystemTime};

use sluice_buffer::{Acker, AppendError, Appended, Buffer, RecordId, RecordRef, Writer};
use sluice_proto::batch::{EncodedBatch, HoldKind};
use sluice_proto::delivery::{AbandonReason, Completion, CompletionSink, Delivery, RetryReason};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::stats::{DestinationStats, Rescue};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{BufferReplayed, BufferSpilled};
use crate::window::{MemoryBudget, Window};

mod metrics;
#[cfg(test)]
mod tests;

pub use metrics::BufferMetrics;

/// How a destination uses its buffer.
pub struct BufferOptions {
    pub buffer: Buffer,
    /// Persist every batch before its events count as safe (SC4S `reliable(yes)`).
    pub reliable: bool,
    /// The input windows and the memory budget whose high-water mark makes normal mode
    /// spill (windows that push back — [`Window::pushes_back`] — never do).
    pub windows: Vec<Arc<Window>>,
    pub memory: Arc<MemoryBudget>,
    /// Share of a window's capacity (0..=1) past which normal mode spills.
    pub high_water: f64,
    /// Batches that may wait in memory for the output beyond what it holds.
    pub queue: usize,
    /// Bytes of records read back from disk that may be in memory at once, on their way to
    /// the output or held by it (`None`: only `queue` bounds them).
    pub replay_memory: Option<u64>,
    /// Whether the output is delivering (HEC: its last request to some URL succeeded). While
    /// it is not, normal mode sends every batch to disk rather than into memory, where a
    /// crash would lose it.
    pub output_up: Box<dyn Fn() -> bool + Send + Sync>,
}

impl std::fmt::Debug for BufferOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferOptions")
            .field("buffer", &self.buffer)
            .field("reliable", &self.reliable)
            .field("high_water", &self.high_water)
            .field("queue", &self.queue)
            .field("replay_memory", &self.replay_memory)
            .finish_non_exhaustive()
    }
}

/// Batches a reliable-mode group may hold before the router commits it.
const GROUP_MAX: usize = 256;
/// How often a router or replay that waits for room looks again.
const RETRY_EVERY: Duration = Duration::from_millis(5);
/// How long the output queue may stay full before normal mode counts the output as behind
/// and spills; shorter than a HEC timeout, longer than a round trip of a busy HEC.
const BEHIND_GRACE: Duration = Duration::from_millis(100);
/// How often a live batch waiting out the grace tries the output queue again.
const LIVE_WAIT_EVERY: Duration = Duration::from_millis(1);

/// Whether a destination's output is delivering (see [`BufferOptions::output_up`]).
pub(super) type OutputUp = Arc<dyn Fn() -> bool + Send + Sync>;

/// The running parts of a buffered destination.
pub(super) struct Stage {
    buffer: Buffer,
    router: JoinHandle<()>,
    replay: JoinHandle<()>,
    replay_stop: CancellationToken,
    pub metrics: Arc<BufferMetrics>,
    pub output_up: OutputUp,
}

impl std::fmt::Debug for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stage")
            .field("buffer", &self.buffer)
            .finish_non_exhaustive()
    }
}

/// What closing the buffer left.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferClose {
    /// Events on disk that the next start replays.
    pub kept_events: u64,
    /// Events accepted by the buffer that could not be written (disk full or failing): lost.
    pub unwritten_events: u64,
}

impl Stage {
    /// Starts the router (from `intake`) and the replay (from the buffer), both feeding
    /// `out`; `stats` is the destination's sink, which also gets the buffer as its rescue.
    pub(super) fn start(
        opts: BufferOptions,
        reader_name: &str,
        stats: &Arc<DestinationStats>,
        intake: async_channel::Receiver<Delivery>,
        out: async_channel::Sender<Delivery>,
    ) -> Result<Stage, String> {
        let BufferOptions {
            buffer,
            reliable,
            windows,
            memory,
            high_water,
            queue: _,
            replay_memory,
            output_up,
        } = opts;
        let reader = buffer
            .reader(reader_name)
            .ok_or_else(|| format!("the disk buffer has no reader {reader_name:?}"))?;
        let writer = buffer.writer();
        let recovery = buffer.recovery();
        let metrics = Arc::new(BufferMetrics {
            writer: writer.clone(),
            reliable,
            dir: buffer.dir().to_owned(),
            events: stats.events().buffer(),
            recovered_events: recovery.replayed_events,
            full_now: AtomicU8::new(0),
            destination: Arc::clone(stats),
        });
        stats.set_rescue(Arc::new(WriterRescue {
            writer: writer.clone(),
        }));
        let live_waiting = Arc::new(AtomicBool::new(false));
        let output_up: OutputUp = Arc::from(output_up);
        let router = if reliable {
            tokio::spawn(route_reliable(intake, writer, metrics.clone()))
        } else {
            let spill = Spill {
                windows,
                memory,
                high_water,
                output_up: output_up.clone(),
            };
            tokio::spawn(route_normal(
                intake,
                out.clone(),
                writer,
                spill,
                metrics.clone(),
                live_waiting.clone(),
            ))
        };
        let replay_stop = CancellationToken::new();
        let replay = tokio::spawn(replay(
            reader,
            replay_memory.map(ReplayMemory::new),
            out,
            stats.clone(),
            metrics.clone(),
            replay_stop.clone(),
            live_waiting,
        ));
        Ok(Stage {
            buffer,
            router,
            replay,
            replay_stop,
            metrics,
            output_up,
        })
    }

    /// The output is failing (HEC: every URL out of service): what the destination holds is
    /// better on disk now than waiting for the drain timeout.
    pub(super) fn output_failing(&self) -> bool {
        !(self.output_up)()
    }

    /// Shutdown, once the receivers are gone: the router finishes the intake — to the output
    /// or to disk — and the replay delivers what is on disk, both by `deadline`; then the
    /// replay stops (what it did not hand out stays on disk for the next start). While the
    /// output is failing the replay does not wait: what is on disk stays there. After this
    /// nothing but the output holds the output queue.
    pub(super) async fn stop_intake(&mut self, deadline: Instant) {
        if tokio::time::timeout_at(deadline, &mut self.router)
            .await
            .is_err()
        {
            // Waiting for room that never came: the batches it held complete as uncompleted,
            // which the rescue cannot keep either; they are counted as lost.
            tracing::error!("the disk buffer stayed full until the drain timeout");
            self.router.abort();
            let _ = (&mut self.router).await;
        }
        // The replay keeps delivering what is on disk until it is all acknowledged or the
        // drain timeout comes; what is left stays for the next start.
        while self.metrics.stats().events > 0 && Instant::now() < deadline {
            if self.output_failing() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.replay_stop.cancel();
        let _ = (&mut self.replay).await;
    }

    /// Writes and syncs what is queued, persists the read position and closes the buffer.
    pub(super) async fn close(self) -> BufferClose {
        let Stage { buffer, .. } = self;
        let dir = buffer.dir().to_owned();
        match tokio::task::spawn_blocking(move || buffer.close()).await {
            Ok(Ok(r)) => BufferClose {
                kept_events: r.events_kept,
                unwritten_events: 0,
            },
            Ok(Err(sluice_buffer::CloseError::Unwritten { events, reason, .. })) => {
                tracing::error!(dir = %dir.display(), events, "the disk buffer could not write everything before closing: {reason}");
                BufferClose {
                    kept_events: 0,
                    unwritten_events: events,
                }
            }
            Ok(Err(e)) => {
                tracing::error!(dir = %dir.display(), "closing the disk buffer: {e}");
                BufferClose::default()
            }
            Err(e) => {
                tracing::error!(dir = %dir.display(), "closing the disk buffer: {e}");
                BufferClose::default()
            }
        }
    }
}

/// The buffer writes the batch's body from the batch's own buffer (no copy), keeping a
/// reference to it until written.
fn record(batch: &EncodedBatch) -> RecordRef<'_> {
    RecordRef::shared(batch.body(), batch.events(), SystemTime::now()).with_offsets(batch.starts())
}

/// The buffer takes `d` over: its events are safe, and the buffer delivers them itself.
fn hand_over(mut d: Delivery) {
    d.persisted();
    d.complete(Completion::Retry {
        after: Duration::ZERO,
        reason: RetryReason::Buffered,
    });
}

/// Appends `d`'s batch, waiting for room while the buffer is full. `Err` when the buffer can
/// never take it (too large, closed): the caller keeps `d` in memory.
async fn append_waiting(
    writer: &Writer,
    d: &Delivery,
    metrics: &BufferMetrics,
) -> Result<Appended, AppendError> {
    loop {
        match writer.append(record(d.batch())) {
            Ok(a) => {
                metrics.set_full(None);
                return Ok(a);
            }
            Err(AppendError::Full { reason }) => {
                if metrics.full().is_none() {
                    tracing::warn!(
                        dir = %metrics.dir.display(),
                        "disk buffer full ({reason}): holding the receivers back until it has room"
                    );
                }
                metrics.set_full(Some(reason));
                let size = Writer::record_size(d.batch().body().len(), Some(d.events()));
                let _ =
                    tokio::time::timeout(Duration::from_secs(1), writer.wait_for_space(size)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// What makes normal mode spill besides a full output queue.
struct Spill {
    windows: Vec<Arc<Window>>,
    memory: Arc<MemoryBudget>,
    high_water: f64,
    output_up: OutputUp,
}

impl Spill {
    /// The output is down, or a window that cannot push back (or memory) is past its
    /// high-water mark.
    fn now(&self) -> bool {
        !(self.output_up)() || self.past_high_water()
    }

    fn past_high_water(&self) -> bool {
        let over = |used: u64, cap: u64| used as f64 >= self.high_water * cap as f64;
        self.windows
            .iter()
            .filter(|w| !w.pushes_back())
            .any(|w| over(w.in_use(), u64::from(w.capacity())))
            || over(self.memory.in_use_bytes(), self.memory.capacity_bytes())
    }
}

async fn route_normal(
    intake: async_channel::Receiver<Delivery>,
    out: async_channel::Sender<Delivery>,
    writer: Writer,
    spill: Spill,
    metrics: Arc<BufferMetrics>,
    live_waiting: Arc<AtomicBool>,
) {
    // Since when the output has taken nothing: its queue was full and has not had room
    // since. The output is behind only once that lasts past the grace. A queue of one batch
    // per worker is full for a moment whenever the receivers outpace one HEC round trip, and
    // spilling then wrote, checked and read back about half of a TCP stream that HEC was
    // taking at full speed. An output that takes batches as fast as the machine delivers,
    // with more waiting behind them, is busy, not behind: spilling would take its CPU.
    let mut full_since: Option<Instant> = None;
    while let Ok(d) = intake.recv().await {
        let mut d = d;
        loop {
            if spill.now() {
                spill_one(d, &out, &writer, &metrics).await;
                break;
            }
            d = match out.try_send(d) {
                Ok(()) => {
                    full_since = None;
                    break;
                }
                Err(async_channel::TrySendError::Full(d)) => d,
                Err(async_channel::TrySendError::Closed(d)) => {
                    d.complete(Completion::Abandoned {
                        reason: AbandonReason::OutputGone,
                    });
                    break;
                }
            };
            let since = *full_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= BEHIND_GRACE {
                spill_one(d, &out, &writer, &metrics).await;
                break;
            }
            // The replay stands back meanwhile: the slot that frees goes to a live batch.
            live_waiting.store(true, Relaxed);
            tokio::time::sleep(LIVE_WAIT_EVERY).await;
        }
        live_waiting.store(false, Relaxed);
    }
}

/// Normal mode: to disk, or — while the buffer is full — to whichever has room first.
async fn spill_one(
    d: Delivery,
    out: &async_channel::Sender<Delivery>,
    writer: &Writer,
    metrics: &BufferMetrics,
) {
    let mut d = d;
    loop {
        match writer.append(record(d.batch())) {
            Ok(_) => {
                metrics.set_full(None);
                BufferSpilled { events: d.events() }.emit(&metrics.events);
                hand_over(d);
                return;
            }
            Err(AppendError::Full { reason }) => {
                if metrics.full().is_none() {
                    tracing::warn!(
                        dir = %metrics.dir.display(),
                        "disk buffer full ({reason}): events wait in memory; receivers are held back once the windows fill"
                    );
                }
                metrics.set_full(Some(reason));
            }
            Err(e) => {
                // Never fits (or closed): it waits for the output in memory.
                tracing::error!(
                    events = d.events(),
                    "cannot spill a batch to the disk buffer: {e}"
                );
                if let Err(e) = out.send(d).await {
                    e.into_inner().complete(Completion::Abandoned {
                        reason: AbandonReason::OutputGone,
                    });
                }
                return;
            }
        }
        d = match out.try_send(d) {
            Ok(()) => {
                metrics.set_full(None);
                return;
            }
            Err(async_channel::TrySendError::Full(d)) => d,
            Err(async_channel::TrySendError::Closed(d)) => {
                d.complete(Completion::Abandoned {
                    reason: AbandonReason::OutputGone,
                });
                return;
            }
        };
        let size = d.batch().body().len() as u64;
        let _ = tokio::time::timeout(RETRY_EVERY * 4, writer.wait_for_space(size)).await;
    }
}

async fn route_reliable(
    intake: async_channel::Receiver<Delivery>,
    writer: Writer,
    metrics: Arc<BufferMetrics>,
) {
    // Groups are appended here and committed by a second task, so the next group is
    // appended while the previous one's fsync runs.
    let (commit_tx, commit_rx) = async_channel::unbounded::<(Appended, Vec<Delivery>)>();
    let committer = tokio::spawn(commit(commit_rx));
    while let Ok(first) = intake.recv().await {
        let mut group = vec![first];
        while group.len() < GROUP_MAX {
            match intake.try_recv() {
                Ok(d) => group.push(d),
                Err(_) => break,
            }
        }
        let mut last = None;
        let mut kept = Vec::with_capacity(group.len());
        for d in group {
            match append_waiting(&writer, &d, &metrics).await {
                Ok(a) => {
                    last = Some(a);
                    kept.push(d);
                }
                Err(e) => {
                    // The buffer can never take it; it is not safe, so it is not handed over:
                    // completing it as abandoned lets the sink count the loss.
                    tracing::error!(
                        events = d.events(),
                        "cannot write a batch to the disk buffer: {e}"
                    );
                    d.complete(Completion::Abandoned {
                        reason: AbandonReason::OutputGone,
                    });
                }
            }
        }
        if let Some(a) = last
            && let Err(e) = commit_tx.send((a, kept)).await
        {
            for d in e.into_inner().1 {
                d.complete(Completion::Abandoned {
                    reason: AbandonReason::OutputGone,
                });
            }
        }
    }
    drop(commit_tx);
    let _ = committer.await;
}

/// Reliable mode: once a group's last record is durable, so is every record before it.
async fn commit(groups: async_channel::Receiver<(Appended, Vec<Delivery>)>) {
    while let Ok((last, deliveries)) = groups.recv().await {
        match last.durable().await {
            Ok(_) => deliveries.into_iter().for_each(hand_over),
            Err(e) => {
                tracing::error!("the disk buffer closed before a group was written: {e}");
                for d in deliveries {
                    d.complete(Completion::Abandoned {
                        reason: AbandonReason::OutputGone,
                    });
                }
            }
        }
    }
}

/// The completion sink of a delivery read back from the buffer: the destination counts it,
/// and a final one (`Delivered`, `Rejected`) acknowledges the record.
#[derive(Debug)]
struct RecordSink {
    stats: Arc<DestinationStats>,
    metrics: Arc<BufferMetrics>,
    acker: Acker,
    id: RecordId,
}

impl CompletionSink for RecordSink {
    fn completed(&self, batch: &EncodedBatch, completion: &Completion, persisted: bool) {
        self.stats.completed(batch, completion, persisted);
        if matches!(
            completion,
            Completion::Delivered | Completion::Rejected { .. }
        ) {
            self.acker.ack(self.id);
            BufferReplayed {
                events: batch.events(),
            }
            .emit(&self.metrics.events);
        }
    }
}

/// The bytes the replay may hold in memory: one permit per byte of payload, held by the
/// batch (as its [`HoldKind::Bytes`] hold) until it leaves memory.
struct ReplayMemory {
    permits: Arc<tokio::sync::Semaphore>,
    /// The most one record takes, so that a record larger than the whole budget still goes
    /// (alone).
    max: u32,
}

impl ReplayMemory {
    fn new(bytes: u64) -> ReplayMemory {
        let max = bytes.clamp(1, u64::from(u32::MAX)) as u32;
        ReplayMemory {
            permits: Arc::new(tokio::sync::Semaphore::new(max as usize)),
            max,
        }
    }

    async fn reserve(&self, bytes: usize) -> tokio::sync::OwnedSemaphorePermit {
        let n = u32::try_from(bytes).unwrap_or(u32::MAX).clamp(1, self.max);
        // The semaphore is never closed.
        self.permits
            .clone()
            .acquire_many_owned(n)
            .await
            .expect("the replay memory semaphore is never closed")
    }
}

async fn replay(
    mut reader: sluice_buffer::Reader,
    memory: Option<ReplayMemory>,
    out: async_channel::Sender<Delivery>,
    stats: Arc<DestinationStats>,
    metrics: Arc<BufferMetrics>,
    stop: CancellationToken,
    live_waiting: Arc<AtomicBool>,
) {
    let acker = reader.acker();
    loop {
        let rec = tokio::select! {
            r = reader.next() => r,
            () = stop.cancelled() => return,
        };
        let Some(rec) = rec else { return };
        // Only this one record waits for room beyond the budget.
        let room = match &memory {
            Some(m) => tokio::select! {
                p = m.reserve(rec.payload().len()) => Some(p),
                // Handed out but never offered: the next start reads it again.
                () = stop.cancelled() => return,
            },
            None => None,
        };
        let id = rec.id();
        let lost = rec.lost_events();
        let (mut body, events, offsets) = rec.into_parts();
        if lost > 0 && body.last() == Some(&b'\n') {
            // Damage on disk cost some of this batch's events (the buffer logged and counted
            // them); the intact ones come back with their bytes as appended, so the one now
            // last can still end with the separator that joined it to a lost one.
            body.truncate(body.len() - 1);
        }
        let batch = match offsets {
            Some(o) => EncodedBatch::from_parts(body, o).map_err(|e| e.to_string()),
            None => EncodedBatch::from_lines(body).map_err(|e| e.to_string()),
        };
        let mut batch = match batch {
            Ok(b) => b,
            Err(e) => {
                // The record's CRCs held, so this is not damage on disk but a record no
                // batch could have produced: it can never be delivered.
                tracing::error!(record = id.0, events, "skipping a disk buffer record: {e}");
                acker.ack(id);
                continue;
            }
        };
        if let Some(p) = room {
            batch.hold(HoldKind::Bytes, p);
        }
        stats.submitted(batch.events());
        let sink = Arc::new(RecordSink {
            stats: stats.clone(),
            metrics: metrics.clone(),
            acker: acker.clone(),
            id,
        });
        let mut d = Delivery::from_buffer(batch, sink);
        loop {
            // What is on disk is safe; a live batch in memory is not, and HEC takes it first.
            let offer = !live_waiting.load(Relaxed);
            d = match if offer {
                out.try_send(d)
            } else {
                Err(async_channel::TrySendError::Full(d))
            } {
                Ok(()) => break,
                Err(async_channel::TrySendError::Full(d)) => d,
                Err(async_channel::TrySendError::Closed(d)) => {
                    d.complete(Completion::Abandoned {
                        reason: AbandonReason::OutputGone,
                    });
                    return;
                }
            };
            tokio::select! {
                () = tokio::time::sleep(RETRY_EVERY) => {}
                () = stop.cancelled() => {
                    // Still on disk, unacknowledged: the next start delivers it.
                    d.complete(Completion::Abandoned { reason: AbandonReason::Shutdown });
                    return;
                }
            }
        }
    }
}

/// The buffer as the destination's rescue: a batch that would be lost is appended instead.
#[derive(Debug)]
struct WriterRescue {
    writer: Writer,
}

impl Rescue for WriterRescue {
    fn keep(&self, batch: &EncodedBatch) -> bool {
        match self.writer.append(record(batch)) {
            Ok(_) => true,
            Err(e) => {
                tracing::error!(
                    events = batch.events(),
                    "cannot keep an undelivered batch in the disk buffer: {e}"
                );
                false
            }
        }
    }
}
