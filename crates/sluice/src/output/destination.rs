//! One destination: queue → output → completions, and the sink that reports them.

use std::sync::Arc;

use arc_swap::ArcSwap;

use sluice_proto::batch::{BatchBuilder, BatchPolicy, EncodedBatch, HoldKind, UNROUTED};
use sluice_proto::delivery::{AbandonReason, Completion, CompletionSink, Delivery};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Output;
use super::buffered::{BufferMetrics, BufferOptions, Stage};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{RoutedNowhere, RoutingEvents};

use super::stats::{DestinationStats, DrainSummary};

/// How batches reach a destination's queue: directly, or through a batcher of its own.
#[derive(Clone, Debug)]
enum Way {
    Queue(async_channel::Sender<Delivery>),
    Batcher(async_channel::Sender<EncodedBatch>),
}

/// One destination's way in: its queue (or batcher), its completion sink, and which of a
/// batch's encodings it sends (0: the HEC event; see [`EncodedBatch::into_encoding`]).
#[derive(Clone, Debug)]
struct Target {
    way: Way,
    stats: Arc<DestinationStats>,
    sink: Arc<dyn CompletionSink>,
    encoding: usize,
}

impl Target {
    /// Sends `batch` as this destination's encoding.
    fn send(&self, batch: EncodedBatch) {
        match batch.into_encoding(self.encoding) {
            Ok(b) => self.send_encoded(b),
            Err(b) => self.missing_encoding(*b),
        }
    }

    /// A batch built without this destination's encoding (a bug: the receivers encode every
    /// encoding a destination in use needs): its events are given up, counted and logged.
    fn missing_encoding(&self, batch: EncodedBatch) {
        tracing::error!(
            destination = self.stats.name(),
            encoding = self.encoding,
            carried = batch.encodings(),
            events = batch.events(),
            "a batch lacks the encoding of this destination (a bug); its events are lost"
        );
        self.stats.submitted(batch.events());
        Delivery::new(batch, Arc::clone(&self.sink)).complete(Completion::Abandoned {
            reason: AbandonReason::OutputGone,
        });
    }

    fn send_encoded(&self, batch: EncodedBatch) {
        let batch = match &self.way {
            Way::Queue(tx) => {
                self.stats.submitted(batch.events());
                let delivery = Delivery::new(batch, Arc::clone(&self.sink));
                if let Err(e) = tx.try_send(delivery) {
                    e.into_inner().complete(Completion::Abandoned {
                        reason: AbandonReason::OutputGone,
                    });
                }
                return;
            }
            Way::Batcher(tx) => match tx.try_send(batch) {
                Ok(()) => return,
                Err(e) => e.into_inner(),
            },
        };
        // The batcher is gone (a bug): counted and logged as the output gone.
        self.stats.submitted(batch.events());
        Delivery::new(batch, Arc::clone(&self.sink)).complete(Completion::Abandoned {
            reason: AbandonReason::OutputGone,
        });
    }
}

/// A destination's own batcher: the parts of the receivers' batches that are its share are
/// merged into batches of its own size (`SC4S_DEST_SPLUNK_HEC_<ID>_BATCH_*`), and one larger
/// than its limits is cut (without copying) into pieces that are not. Holds travel with the
/// events (the pieces of one part share its holds).
async fn batcher(rx: async_channel::Receiver<EncodedBatch>, policy: BatchPolicy, target: Target) {
    let mut builder = BatchBuilder::new(policy);
    loop {
        let deadline = builder.deadline();
        tokio::select! {
            part = rx.recv() => match part {
                Ok(part) => {
                    for piece in cut(part, &policy) {
                        if let Some(b) = builder.push_chunk(std::time::Instant::now(), piece) {
                            target.send(b);
                        }
                    }
                }
                Err(_) => break,
            },
            () = super::sleep_until_opt(deadline) => {
                if let Some(b) = builder.take() {
                    target.send(b);
                }
            }
        }
    }
    while let Some(b) = builder.take() {
        target.send(b);
    }
}

/// `part` in pieces within `policy`'s limits (a single event larger than them on its own
/// stays one piece). The body is shared, not copied.
fn cut(mut part: EncodedBatch, policy: &BatchPolicy) -> Vec<EncodedBatch> {
    let max_events = policy.max_events.max(1);
    let n = part.events() as usize;
    if n <= max_events && part.body().len() <= policy.max_bytes {
        return vec![part];
    }
    let events = part.share_holds(HoldKind::Events);
    let bytes = part.share_holds(HoldKind::Bytes);
    let starts = part.starts().to_vec();
    let end_of = |i: usize| {
        starts
            .get(i + 1)
            .map_or(part.body().len(), |&s| s as usize - 1)
    };
    let mut pieces = Vec::new();
    let mut first = 0usize;
    while first < n {
        let mut last = first + 1;
        while last < n
            && last - first < max_events
            && end_of(last) - starts[first] as usize <= policy.max_bytes
        {
            last += 1;
        }
        let base = starts[first];
        let body = part.events_bytes(first as u32..last as u32);
        let offsets = starts[first..last].iter().map(|s| s - base).collect();
        match EncodedBatch::from_parts(body, offsets) {
            Ok(mut piece) => {
                if let Some(h) = &events {
                    piece.hold(HoldKind::Events, Arc::clone(h));
                }
                if let Some(h) = &bytes {
                    piece.hold(HoldKind::Bytes, Arc::clone(h));
                }
                pieces.push(piece);
            }
            // Cannot happen (the offsets are the batch's own); the events would be lost
            // silently otherwise, so the whole part goes as it is.
            Err(e) => {
                tracing::error!("cannot cut a batch for a destination's batcher: {e}");
                let mut whole = part.clone_events();
                if let Some(h) = events {
                    whole.hold(HoldKind::Events, h);
                }
                if let Some(h) = bytes {
                    whole.hold(HoldKind::Bytes, h);
                }
                return vec![whole];
            }
        }
        first = last;
    }
    pieces
}

#[derive(Debug)]
struct Targets {
    /// Destination `i` is bit `i` of an event's destination set.
    targets: Vec<Target>,
    /// Where events go that were not routed (`UNROUTED`): the GLOBAL destinations.
    unrouted: u64,
    /// Every destination's bit.
    all: u64,
    /// Events whose destination set was empty (filtered alternates that replace every
    /// destination with none, or only SELECT destinations): dropped on purpose, counted.
    routed_nowhere: Arc<RoutingEvents>,
}

impl Targets {
    /// Destination `i` is `parts[i]`'s (first) target.
    fn of(parts: &[Submit], unrouted: u64, routed_nowhere: Arc<RoutingEvents>) -> Targets {
        let targets: Vec<Target> = parts
            .iter()
            .flat_map(|s| s.inner.load().targets.clone())
            .collect();
        assert!(targets.len() <= 64, "at most 64 destinations");
        let all = if targets.len() == 64 {
            u64::MAX
        } else {
            (1u64 << targets.len()) - 1
        };
        Targets {
            targets,
            unrouted: unrouted & all,
            all,
            routed_nowhere,
        }
    }
}

/// What receivers hold to hand finished batches to the destinations. Cheap to clone.
///
/// With one destination and no routing, a batch goes to it as is. Otherwise each event
/// carries its destination set ([`EncodedBatch::dests`], bit `i` = destination `i`), and the
/// batch is split into one batch per destination: a destination that gets every event shares
/// the body (no copy), one that gets some of them gets a copy of just those. The batch's holds
/// (its events' window permits, its memory) are shared by the parts: they are released when
/// the last part is delivered or persisted, so an event is safe only once every destination
/// it was sent to has it.
///
/// The destinations behind a handle can change while it is held: a reload that adds or
/// removes a destination [`retargets`](Self::retarget) every clone at once (one atomic load
/// per batch). A destination keeps its bit for its life, so a batch routed before the reload
/// still finds its destinations after it.
#[derive(Clone, Debug)]
pub struct Submit {
    inner: Arc<ArcSwap<Targets>>,
}

impl Submit {
    /// Wraps `batch` (with its holds) in a delivery per destination and queues it.
    /// Never waits: the queues are unbounded (the windows bound them). If an output is gone
    /// the delivery completes at once as `Abandoned { reason: OutputGone }` — counted and
    /// logged.
    pub fn submit(&self, mut batch: EncodedBatch) {
        let guard = self.inner.load();
        let t: &Targets = &guard;
        if batch.dests().is_empty() && t.unrouted.count_ones() == 1 {
            t.targets[t.unrouted.trailing_zeros() as usize].send(batch);
            return;
        }
        let resolve = |m: u64| {
            if m == UNROUTED { t.unrouted } else { m & t.all }
        };
        let (mut union, mut every, mut nowhere) = (0u64, t.all, 0u64);
        if batch.dests().is_empty() {
            (union, every) = (t.unrouted, t.unrouted);
            if union == 0 {
                nowhere = u64::from(batch.events());
            }
        } else {
            for &m in batch.dests() {
                let r = resolve(m);
                union |= r;
                every &= r;
                nowhere += u64::from(r == 0);
            }
        }
        RoutedNowhere { events: nowhere }.emit(&t.routed_nowhere);
        if union == 0 {
            // Its holds are released with it.
            return;
        }
        if union.count_ones() == 1 && every == union {
            t.targets[union.trailing_zeros() as usize].send(batch);
            return;
        }
        let events = batch.share_holds(HoldKind::Events);
        let bytes = batch.share_holds(HoldKind::Bytes);
        let mut bits = union;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let bit = 1u64 << i;
            let target = &t.targets[i];
            let k = target.encoding;
            let dests = batch.dests();
            let part = if every & bit != 0 {
                batch.clone_encoding(k)
            } else {
                batch.select_encoding(k, |e| resolve(dests[e as usize]) & bit != 0)
            };
            let missing = part.is_err();
            let mut part = part.unwrap_or_else(|_| {
                batch.select(|e| every & bit != 0 || resolve(dests[e as usize]) & bit != 0)
            });
            if let Some(h) = &events {
                part.hold(HoldKind::Events, Arc::clone(h));
            }
            if let Some(h) = &bytes {
                part.hold(HoldKind::Bytes, Arc::clone(h));
            }
            if missing {
                target.missing_encoding(part);
            } else {
                target.send_encoded(part);
            }
        }
    }

    /// The first destination's completion sink.
    pub fn stats(&self) -> Arc<DestinationStats> {
        Arc::clone(&self.inner.load().targets[0].stats)
    }

    /// One handle over several destinations, each started on its own: destination `i` of
    /// an event's set is `parts[i]`'s. Unrouted events go to the destinations in `unrouted`.
    /// At most 64 destinations.
    pub fn fan_out(parts: Vec<Submit>, unrouted: u64) -> Submit {
        let routed_nowhere = Arc::new(crate::telemetry::metrics().routed_nowhere());
        Submit {
            inner: Arc::new(ArcSwap::from_pointee(Targets::of(
                &parts,
                unrouted,
                routed_nowhere,
            ))),
        }
    }

    /// Points this handle, and every clone of it, at `parts` (destination `i` is `parts[i]`),
    /// as [`fan_out`](Self::fan_out) would. Batches submitted after it returns go to the new
    /// set; one being split at the moment finishes with the old one.
    pub fn retarget(&self, parts: &[Submit], unrouted: u64) {
        let routed_nowhere = Arc::clone(&self.inner.load().routed_nowhere);
        self.inner
            .store(Arc::new(Targets::of(parts, unrouted, routed_nowhere)));
    }

    /// A handle of one destination that is gone: what is sent to it completes at once as
    /// `Abandoned { reason: OutputGone }`, counted in `stats` and logged. For the bit of a
    /// destination a reload removed, once it has been drained.
    pub fn gone(stats: Arc<DestinationStats>) -> Submit {
        let (tx, _) = async_channel::unbounded();
        let sink: Arc<dyn CompletionSink> = stats.clone();
        Submit::single(tx, stats, sink)
    }

    /// A handle to destination `i` alone (sluice's own metrics go to the default one).
    pub fn only(&self, i: usize) -> Option<Submit> {
        let t = self.inner.load().targets.get(i)?.clone();
        Some(Submit::of(t))
    }

    /// This destination (a handle of one) with a batcher of its own, making batches by
    /// `policy` out of what it is sent (see [`batcher`]). Needs the runtime.
    pub fn rebatched(self, policy: BatchPolicy) -> Submit {
        let Some(t) = self.inner.load().targets.first().cloned() else {
            return self;
        };
        let (tx, rx) = async_channel::unbounded();
        let way = Way::Batcher(tx);
        let front = Target {
            way,
            stats: t.stats.clone(),
            sink: t.sink.clone(),
            encoding: t.encoding,
        };
        // The front converts: what the batcher makes is already this destination's.
        tokio::spawn(batcher(rx, policy, Target { encoding: 0, ..t }));
        Submit::of(front)
    }

    /// This destination (a handle of one) sending encoding `k` of the batches it is given
    /// ([`EncodedBatch::into_encoding`]). Call before [`rebatched`](Self::rebatched).
    pub fn with_encoding(self, k: usize) -> Submit {
        let Some(t) = self.inner.load().targets.first().cloned() else {
            return self;
        };
        Submit::of(Target { encoding: k, ..t })
    }

    /// Events dropped because their destination set was empty.
    pub fn routed_nowhere(&self) -> u64 {
        self.inner.load().routed_nowhere.events()
    }

    fn of(target: Target) -> Submit {
        Submit {
            inner: Arc::new(ArcSwap::from_pointee(Targets {
                targets: vec![target],
                unrouted: 1,
                all: 1,
                routed_nowhere: Arc::new(crate::telemetry::metrics().routed_nowhere()),
            })),
        }
    }

    fn single(
        tx: async_channel::Sender<Delivery>,
        stats: Arc<DestinationStats>,
        sink: Arc<dyn CompletionSink>,
    ) -> Submit {
        Submit::of(Target {
            way: Way::Queue(tx),
            stats,
            sink,
            encoding: 0,
        })
    }
}

/// How often a draining destination with a disk buffer looks whether its output failed.
const FAILING_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Why a drain stopped waiting for the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    /// It ended by itself (its queue closed and emptied, or it failed).
    Ended,
    Deadline,
    /// It is failing and the disk buffer takes what it holds.
    Failing,
}

/// A running destination: its output task, its queue and its completion sink.
#[derive(Debug)]
pub struct Destination {
    stats: Arc<DestinationStats>,
    rx: async_channel::Receiver<Delivery>,
    abort: CancellationToken,
    task: JoinHandle<()>,
    ended: bool,
    /// The disk buffer's router and replay, when the destination has one.
    stage: Option<Stage>,
}

impl Destination {
    /// Starts `output` on the current runtime. The returned [`Submit`] is the only way in:
    /// the output ends after every clone of it is dropped and the queue is empty.
    pub fn start(name: &str, output: Box<dyn Output>) -> (Destination, Submit) {
        let stats = Arc::new(DestinationStats::new(name, output.kind()));
        let (tx, rx) = async_channel::unbounded();
        let abort = CancellationToken::new();
        let task = tokio::spawn(output.run(rx.clone(), abort.clone()));
        let sink: Arc<dyn CompletionSink> = stats.clone();
        let submit = Submit::single(tx, Arc::clone(&stats), sink);
        (
            Destination {
                stats,
                rx,
                abort,
                task,
                ended: false,
                stage: None,
            },
            submit,
        )
    }

    /// [`start`](Self::start) with a disk buffer between the receivers and the output (see
    /// [`super::buffered`]). The buffer replays what an earlier run left in it.
    pub fn start_buffered(
        name: &str,
        output: Box<dyn Output>,
        opts: BufferOptions,
    ) -> Result<(Destination, Submit), String> {
        let stats = Arc::new(DestinationStats::new(name, output.kind()));
        let (tx, intake) = async_channel::unbounded();
        let (out_tx, rx) = async_channel::bounded(opts.queue.max(1));
        let stage = Stage::start(opts, name, &stats, intake, out_tx)?;
        let abort = CancellationToken::new();
        let task = tokio::spawn(output.run(rx.clone(), abort.clone()));
        let sink: Arc<dyn CompletionSink> = stats.clone();
        let submit = Submit::single(tx, Arc::clone(&stats), sink);
        Ok((
            Destination {
                stats,
                rx,
                abort,
                task,
                ended: false,
                stage: Some(stage),
            },
            submit,
        ))
    }

    /// The disk buffer's metrics, when there is one.
    pub fn buffer(&self) -> Option<&Arc<BufferMetrics>> {
        self.stage.as_ref().map(|s| &s.metrics)
    }

    pub fn stats(&self) -> &Arc<DestinationStats> {
        &self.stats
    }

    /// Completes when the output task ends. Only expected after the queue closed; before, it
    /// means the output died. Cancel-safe.
    pub async fn ended(&mut self) {
        if self.ended {
            return std::future::pending().await;
        }
        let r = (&mut self.task).await;
        self.ended = true;
        if let Err(e) = r {
            // What it held completed itself as uncompleted (counted and logged).
            tracing::error!(destination = self.stats.name(), error = %e, "the output task failed");
        }
    }

    /// Lets the output finish what is queued until `deadline`, then aborts it. Whatever is
    /// still queued after the output ended is completed as abandoned (`Shutdown` after an
    /// abort, `OutputGone` when the output had ended by itself). Returns the destination's
    /// totals.
    ///
    /// With a disk buffer, an output that is failing (at the start or during the drain) is
    /// aborted at once instead: what it holds is rescued to the buffer, so waiting for the
    /// deadline would only delay the stop.
    pub async fn drain(mut self, deadline: Instant) -> DrainSummary {
        let up = self.stage.as_ref().map(|s| Arc::clone(&s.output_up));
        let failing = || up.as_ref().is_some_and(|up| !up());
        if let Some(stage) = &mut self.stage {
            stage.stop_intake(deadline).await;
        }
        let mut stopped = Stopped::Ended;
        while !self.ended {
            if failing() {
                stopped = Stopped::Failing;
                break;
            }
            tokio::select! {
                () = self.ended() => {}
                () = tokio::time::sleep_until(deadline) => {
                    stopped = Stopped::Deadline;
                    break;
                }
                () = tokio::time::sleep(FAILING_POLL), if up.is_some() => {}
            }
        }
        if stopped != Stopped::Ended {
            if stopped == Stopped::Failing {
                tracing::info!(
                    destination = self.stats.name(),
                    "stopping: the output is failing; what it holds goes to the disk buffer \
                     now instead of waiting for the drain timeout"
                );
            }
            self.abort.cancel();
            self.ended().await;
        }
        let timed_out = stopped == Stopped::Deadline;
        self.rx.close();
        let reason = if stopped == Stopped::Ended {
            AbandonReason::OutputGone
        } else {
            AbandonReason::Shutdown
        };
        while let Ok(d) = self.rx.try_recv() {
            d.complete(Completion::Abandoned { reason });
        }
        let mut summary = self.stats.summary(timed_out);
        if let Some(stage) = self.stage.take() {
            let closed = stage.close().await;
            summary.kept = closed.kept_events;
            summary.lost += closed.unwritten_events;
        }
        summary
    }
}

#[cfg(test)]
mod tests;
