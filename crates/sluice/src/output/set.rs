//! Every destination of the daemon, started from [`Config::destination_plan`]: each with its
//! own output (HEC workers, the file, the archive), queue, disk buffer and completion sink,
//! behind one [`Submit`] that splits batches by the events' destination sets.
//!
//! Nothing is shared between destinations but the input windows: a destination that is slow
//! or down fills its own buffer (its batches are persisted there, which releases their
//! window slots), so the others keep delivering. Without a buffer it holds the window slots
//! of what it has not delivered, as the single destination does.

use std::sync::Arc;

use anyhow::Context;
use sluice_hec::HecOutput;
use sluice_proto::batch::BatchPolicy;
use tokio::time::Instant;

use super::archive::ArchiveOutput;
use super::kafka::KafkaOutput;
use super::relay::RelayOutput;
use super::{BufferOptions, Destination, DrainSummary, FileOutput, FileStats, Submit};
use crate::config::{
    BufferSettings, DestId, DestKind, DestPlan, KafkaDestination, RelayDestination,
};
use crate::telemetry::events::{ForwardEvents, HecEvents};
use crate::telemetry::state::{BufferState, DestinationState, Destinations, OutputState};
use crate::window::{MemoryBudget, Window};

/// The running destinations, in plan order (destination `i` is bit `i`).
#[derive(Debug)]
pub struct DestinationSet {
    pub dests: Vec<Destination>,
    /// The HEC outputs, for the startup probe (dropped after it).
    pub hec: Vec<(String, HecOutput)>,
    /// What `/metrics` and `/health` read of each destination, in plan order.
    pub state: Destinations,
}

/// The input windows and memory budget the buffers watch.
pub struct Limits<'a> {
    pub windows: &'a [Arc<Window>],
    pub memory: &'a Arc<MemoryBudget>,
}

impl DestinationSet {
    /// Starts every destination of `plan` and the [`Submit`] over them, which sends events
    /// that are not routed to `unrouted` (a destination bit set).
    pub fn start(
        plan: &[DestPlan],
        limits: &Limits<'_>,
        unrouted: u64,
    ) -> anyhow::Result<(DestinationSet, Submit)> {
        let mut dests = Vec::with_capacity(plan.len());
        let mut submits = Vec::with_capacity(plan.len());
        let mut hec_outputs = Vec::new();
        let mut state = Vec::with_capacity(plan.len());
        let (_, encoding_of) = super::Encodings::from_plan(plan, unrouted);
        for (i, d) in plan.iter().enumerate() {
            let mut health: Option<Arc<dyn OutputState>> = None;
            let (dest, submit) = match &d.kind {
                DestKind::Hec { hec, buffer } => {
                    let events =
                        Arc::new(HecEvents::register(crate::telemetry::metrics(), &d.name));
                    let output =
                        HecOutput::new(hec.client_config_for(d.id.var(), &d.table)?, events)
                            .with_context(|| {
                                format!("cannot set up the HEC client of destination {}", d.name)
                            })?;
                    let up = Arc::clone(output.health());
                    health = Some(up.clone());
                    let opts = open_buffer(
                        d,
                        buffer,
                        &format!("SC4S_DEST_SPLUNK_HEC_{}_", d.id),
                        hec.workers,
                        limits,
                        Box::new(move || up.healthy()),
                    )?;
                    let (dest, submit) = match opts {
                        Some(o) => {
                            Destination::start_buffered(&d.name, Box::new(output.clone()), o)
                                .map_err(|e| {
                                    anyhow::anyhow!(
                                        "cannot start the disk buffer of destination {}: {e}",
                                        d.name
                                    )
                                })?
                        }
                        None => Destination::start(&d.name, Box::new(output.clone())),
                    };
                    if let Some(b) = dest.buffer() {
                        // What HEC cannot take goes to the buffer rather than waiting in
                        // memory, while the buffer has room.
                        let room = b.clone();
                        output.hand_back_when(move || room.full().is_none());
                    }
                    hec_outputs.push((d.name.clone(), output));
                    (dest, submit)
                }
                DestKind::File(path) => {
                    let stats = Arc::new(FileStats::register(crate::telemetry::metrics()));
                    let file = FileOutput::open(path, stats.clone())?;
                    tracing::info!(
                        path = %path.display(),
                        "no HEC URL configured (SC4S_DEST_SPLUNK_HEC_DEFAULT_URL): writing events as JSON lines"
                    );
                    health = Some(stats);
                    Destination::start(&d.name, Box::new(file))
                }
                DestKind::Relay(r) => {
                    let events = Arc::new(ForwardEvents::register(
                        crate::telemetry::metrics(),
                        &d.name,
                        r.kind.name_word(),
                    ));
                    let output = RelayOutput::new(&d.name, d.id.var(), r, Arc::clone(&events))?;
                    health = Some(events.clone());
                    let set_hand_back = output.hand_back_handle();
                    let up = Arc::clone(&events);
                    let opts = open_buffer(
                        d,
                        &r.buffer,
                        &RelayDestination::var_prefix(r.kind, d.id.var()),
                        1,
                        limits,
                        Box::new(move || up.is_up()),
                    )?;
                    tracing::info!(
                        destination = %d.name,
                        target = %format_args!("{}:{}", r.host, r.port()),
                        transport = r.transport.label(),
                        framed = r.framed(),
                        "relaying events (SC4S d_{})",
                        d.name
                    );
                    let (dest, submit) = match opts {
                        Some(o) => Destination::start_buffered(&d.name, Box::new(output), o)
                            .map_err(|e| {
                                anyhow::anyhow!(
                                    "cannot start the disk buffer of destination {}: {e}",
                                    d.name
                                )
                            })?,
                        None => Destination::start(&d.name, Box::new(output)),
                    };
                    if let Some(b) = dest.buffer() {
                        let room = b.clone();
                        set_hand_back(Box::new(move || room.full().is_none()));
                    }
                    (dest, submit)
                }
                DestKind::Kafka(k) => {
                    let events = Arc::new(ForwardEvents::register(
                        crate::telemetry::metrics(),
                        &d.name,
                        "kafka",
                    ));
                    let output = KafkaOutput::new(&d.name, d.id.var(), k, Arc::clone(&events))?;
                    health = Some(events.clone());
                    let set_hand_back = output.hand_back_handle();
                    let up = Arc::clone(&events);
                    let opts = open_buffer(
                        d,
                        &k.buffer,
                        &KafkaDestination::var_prefix(d.id.var()),
                        1,
                        limits,
                        Box::new(move || up.is_up()),
                    )?;
                    tracing::info!(
                        destination = %d.name,
                        brokers = %k.brokers,
                        topic = %k.topic,
                        key = %k.key,
                        acks = k.acks.librdkafka(),
                        idempotence = k.idempotence,
                        "producing events to Kafka"
                    );
                    let (dest, submit) = match opts {
                        Some(o) => Destination::start_buffered(&d.name, Box::new(output), o)
                            .map_err(|e| {
                                anyhow::anyhow!(
                                    "cannot start the disk buffer of destination {}: {e}",
                                    d.name
                                )
                            })?,
                        None => Destination::start(&d.name, Box::new(output)),
                    };
                    if let Some(b) = dest.buffer() {
                        let room = b.clone();
                        set_hand_back(Box::new(move || room.full().is_none()));
                    }
                    (dest, submit)
                }
                DestKind::Archive { dir, mode } => {
                    let archive = ArchiveOutput::open(dir, *mode).map_err(|e| {
                        anyhow::anyhow!("{e}; set SC4S_VAR or archive.dir to a writable directory")
                    })?;
                    tracing::info!(dir = %dir.display(), mode = ?mode, "archiving events (d_archive)");
                    Destination::start(&d.name, Box::new(archive))
                }
            };
            let submit = submit.with_encoding(encoding_of.get(i).copied().unwrap_or(0));
            // The receivers batch by the default destination's settings. Another HEC
            // destination, or the default one in SELECT mode, gets parts of those batches:
            // it merges and cuts them to its own BATCH_LINES / BATCH_BYTES / BATCH_TIMEOUT.
            let submit = match &d.kind {
                DestKind::Hec { hec, .. }
                    if plan.len() > 1
                        && (d.id != DestId::Default
                            || d.mode == crate::config::DestMode::Select) =>
                {
                    submit.rebatched(BatchPolicy {
                        max_events: hec.batch_lines,
                        max_bytes: hec.batch_bytes.0 as usize,
                        timeout: hec.batch_timeout,
                    })
                }
                _ => submit,
            };
            if d.id != DestId::Default {
                tracing::info!(
                    destination = %d.name,
                    mode = d.mode.label(),
                    "destination started"
                );
            }
            state.push(DestinationState {
                name: d.name.clone(),
                default: d.id == DestId::Default,
                events: dest.stats().events().clone(),
                output: health,
                buffer: dest.buffer().map(|b| Arc::clone(b) as Arc<dyn BufferState>),
            });
            dests.push(dest);
            submits.push(submit);
        }
        Ok((
            DestinationSet {
                dests,
                hec: hec_outputs,
                state: Destinations(state),
            },
            Submit::fan_out(submits, unrouted),
        ))
    }

    /// Completes when any destination's output task ends (before shutdown: it failed).
    pub async fn ended(&mut self) {
        type Ended<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;
        let mut futs: Vec<Ended<'_>> = self
            .dests
            .iter_mut()
            .map(|d| Box::pin(d.ended()) as Ended<'_>)
            .collect();
        std::future::poll_fn(|cx| {
            for f in &mut futs {
                if f.as_mut().poll(cx).is_ready() {
                    return std::task::Poll::Ready(());
                }
            }
            std::task::Poll::Pending
        })
        .await;
    }

    /// Drains every destination at once, by `deadline`; the totals summed.
    pub async fn drain(self, deadline: Instant) -> DrainSummary {
        let tasks: Vec<_> = self
            .dests
            .into_iter()
            .map(|d| tokio::spawn(d.drain(deadline)))
            .collect();
        let mut sum = DrainSummary::default();
        for t in tasks {
            let s = match t.await {
                Ok(s) => s,
                Err(e) => {
                    tracing::error!(error = %e, "a destination's drain failed");
                    continue;
                }
            };
            sum.delivered += s.delivered;
            sum.rejected += s.rejected;
            sum.lost += s.lost;
            sum.timed_out |= s.timed_out;
            sum.kept += s.kept;
            sum.rescued += s.rescued;
        }
        sum
    }
}

/// Opens a destination's disk buffer when it has one: takes its lock, replays what an
/// earlier run left. Errors name the variable to change; `vars` is the start of the
/// destination's variables (`SC4S_DEST_SPLUNK_HEC_DEFAULT_`).
fn open_buffer(
    d: &DestPlan,
    b: &BufferSettings,
    vars: &str,
    workers: usize,
    limits: &Limits<'_>,
    output_up: Box<dyn Fn() -> bool + Send + Sync>,
) -> anyhow::Result<Option<BufferOptions>> {
    if !b.enable {
        tracing::info!(
            destination = %d.name,
            "disk buffer off ({vars}DISKBUFF_ENABLE=no): an outage is held in memory up to \
             the input windows"
        );
        return Ok(None);
    }
    let size = b.effective_size_vars(vars, workers);
    let table = if d.id == DestId::Default {
        "buffer".to_owned()
    } else {
        format!("{}.buffer", d.table)
    };
    // The buffer reports what happens to the destination's buffer events, which count it.
    let observer = Arc::new(crate::telemetry::events::DiskBufferEvents::register(
        crate::telemetry::metrics(),
        &d.name,
    ));
    let buffer = sluice_buffer::Buffer::open_observed(
        b.buffer_config(size.bytes),
        &[d.name.as_str()],
        observer,
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "cannot open the disk buffer of destination {}: {e}; set {vars}DISKBUFF_DIR \
                 ({table}.dir) to a writable directory, or {vars}DISKBUFF_ENABLE=no",
            d.name,
        )
    })?;
    let r = buffer.recovery();
    tracing::info!(
        destination = %d.name,
        dir = %b.dir.display(),
        mode = if b.reliable { "reliable" } else { "normal" },
        max_bytes = size.bytes,
        size = %size.how,
        memory_bytes = b.effective_memory_vars(vars, workers).map(|m| m.bytes),
        replay_events = r.replayed_events,
        corrupt_records = r.corrupt_records,
        "disk buffer open"
    );
    if r.replayed_events > 0 {
        tracing::info!(
            destination = %d.name,
            events = r.replayed_events,
            records = r.replayed_records,
            "delivering what the disk buffer kept from the last run"
        );
    }
    Ok(Some(BufferOptions {
        buffer,
        reliable: b.reliable,
        windows: limits.windows.to_vec(),
        memory: limits.memory.clone(),
        high_water: b.high_water,
        queue: workers,
        replay_memory: b.effective_memory_vars(vars, workers).map(|m| m.bytes),
        output_up,
    }))
}
