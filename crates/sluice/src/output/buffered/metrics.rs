//! The disk buffer as `/metrics` and `/health` see it ([`BufferState`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use sluice_buffer::{BufferStats, FullReason, Writer};

use crate::telemetry::state::BufferState;

/// The buffer as `/metrics` and `/health` see it.
#[derive(Debug)]
pub struct BufferMetrics {
    pub(super) writer: Writer,
    pub reliable: bool,
    pub dir: PathBuf,
    /// Spilled and replayed events ([`crate::telemetry::events::BufferSpilled`],
    /// [`crate::telemetry::events::BufferReplayed`]).
    pub(super) events: crate::telemetry::events::BufferEvents,
    /// Events found in the buffer at start, to replay.
    pub recovered_events: u64,
    /// Why the router is waiting for room right now (a [`full_code`]), 0 when it is not.
    pub(super) full_now: AtomicU8,
    /// The destination it buffers for: UDP drops while the buffer is full count there.
    pub(super) destination: std::sync::Arc<super::super::DestinationStats>,
}

fn full_code(r: FullReason) -> u8 {
    match r {
        FullReason::MaxBytes => 1,
        FullReason::DiskFull => 2,
        FullReason::Backlog => 3,
        FullReason::WriteFailing => 4,
    }
}

fn full_reason(code: u8) -> Option<FullReason> {
    Some(match code {
        1 => FullReason::MaxBytes,
        2 => FullReason::DiskFull,
        3 => FullReason::Backlog,
        4 => FullReason::WriteFailing,
        _ => return None,
    })
}

impl BufferMetrics {
    pub fn stats(&self) -> BufferStats {
        self.writer.stats()
    }

    pub fn spilled_events(&self) -> u64 {
        self.events.spilled_events()
    }

    pub fn replayed_events(&self) -> u64 {
        self.events.replayed_events()
    }

    /// Why appends wait for room now (receivers are being held back), if they do.
    pub fn full(&self) -> Option<FullReason> {
        full_reason(self.full_now.load(Relaxed))
    }

    /// UDP kernel drops happened while the buffer was full.
    pub fn add_buffer_full_drops(&self, n: u64) {
        use crate::telemetry::InternalEvent;
        crate::telemetry::events::BufferFullDropped { datagrams: n }
            .emit(self.destination.events());
    }

    pub fn buffer_full_drops(&self) -> u64 {
        self.destination.events().buffer_full_drops()
    }

    /// `/health`'s reason to say "degraded", if any: the buffer is full (receivers held
    /// back), or it holds events (the output is behind).
    pub fn degraded(&self) -> Option<String> {
        if let Some(r) = self.full() {
            return Some(format!(
                "disk buffer full ({r}): receivers are held back; UDP drops count as \
                 reason=\"buffer_full\""
            ));
        }
        let s = self.stats();
        (s.events > 0).then(|| {
            format!(
                "buffering: {} events ({} bytes) on disk wait for HEC",
                s.events, s.bytes
            )
        })
    }

    pub(super) fn set_full(&self, r: Option<FullReason>) {
        self.full_now.store(r.map_or(0, full_code), Relaxed);
    }
}

impl BufferState for BufferMetrics {
    fn stats(&self) -> BufferStats {
        BufferMetrics::stats(self)
    }

    fn reliable(&self) -> bool {
        self.reliable
    }

    fn full(&self) -> Option<FullReason> {
        BufferMetrics::full(self)
    }

    fn degraded(&self) -> Option<String> {
        BufferMetrics::degraded(self)
    }

    fn recovered_events(&self) -> u64 {
        self.recovered_events
    }

    fn add_buffer_full_drops(&self, n: u64) {
        BufferMetrics::add_buffer_full_drops(self, n)
    }
}
