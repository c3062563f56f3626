//! What every destination kind's start shares: the limits its disk buffer watches, opening
//! that buffer, and starting the destination with or without it. Below [`super::set`] and
//! the kinds' own start functions (`hec`, `file`, `relay`, `kafka`, `archive`), which each
//! turn one [`DestPlan`] into a running destination.

use std::sync::Arc;

use sluice_hec::HecOutput;

use super::{BufferOptions, Destination, Output, Submit};
use crate::config::{BufferSettings, DestId, DestPlan};
use crate::telemetry::state::OutputState;
use crate::window::{MemoryBudget, Window};

/// The input windows and memory budget the buffers watch.
pub struct Limits<'a> {
    pub windows: &'a [Arc<Window>],
    pub memory: &'a Arc<MemoryBudget>,
}

/// One destination started by its kind: the destination, its way in, what `/health` reads
/// of its output, and the HEC output for the startup probe (HEC destinations only).
pub struct Started {
    pub dest: Destination,
    pub submit: Submit,
    pub health: Option<Arc<dyn OutputState>>,
    pub hec: Option<HecOutput>,
}

/// Starts destination `name` over `output`, behind its disk buffer when `opts` has one.
pub(super) fn start_destination(
    name: &str,
    output: Box<dyn Output>,
    opts: Option<BufferOptions>,
) -> anyhow::Result<(Destination, Submit)> {
    Ok(match opts {
        Some(o) => Destination::start_buffered(name, output, o).map_err(|e| {
            anyhow::anyhow!("cannot start the disk buffer of destination {name}: {e}")
        })?,
        None => Destination::start(name, output),
    })
}

/// Opens a destination's disk buffer when it has one: takes its lock, replays what an
/// earlier run left. Errors name the variable to change; `vars` is the start of the
/// destination's variables (`SC4S_DEST_SPLUNK_HEC_DEFAULT_`).
pub(super) fn open_buffer(
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

/// Starts a forwarding destination (a relay, Kafka) over `output`: behind its disk buffer
/// when `buffer` enables one (`vars` is the start of its variables), its health from `events`,
/// and the output's hand-back to the buffer wired through `set_hand_back` (the output then
/// returns what it cannot deliver while the buffer has room).
pub(super) fn start_forwarding(
    d: &DestPlan,
    output: Box<dyn Output>,
    set_hand_back: impl Fn(Box<dyn Fn() -> bool + Send + Sync>),
    buffer: &BufferSettings,
    vars: &str,
    limits: &Limits<'_>,
    events: Arc<crate::telemetry::events::ForwardEvents>,
) -> anyhow::Result<Started> {
    let up = Arc::clone(&events);
    let opts = open_buffer(d, buffer, vars, 1, limits, Box::new(move || up.is_up()))?;
    let (dest, submit) = start_destination(&d.name, output, opts)?;
    if let Some(b) = dest.buffer() {
        let room = b.clone();
        set_hand_back(Box::new(move || room.full().is_none()));
    }
    Ok(Started {
        dest,
        submit,
        health: Some(events),
        hec: None,
    })
}
