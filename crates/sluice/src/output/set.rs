//! Every destination of the daemon, started from [`Config::destination_plan`]: each with its
//! own output (HEC workers, the file, the archive), queue, disk buffer and completion sink,
//! behind one [`Submit`] that splits batches by the events' destination sets.
//!
//! Nothing is shared between destinations but the input windows: a destination that is slow
//! or down fills its own buffer (its batches are persisted there, which releases their
//! window slots), so the others keep delivering. Without a buffer it holds the window slots
//! of what it has not delivered, as the single destination does.

use std::sync::Arc;

use sluice_hec::HecOutput;
use sluice_proto::batch::BatchPolicy;
use tokio::time::Instant;

use super::start::{Limits, Started};
use super::{Destination, DrainSummary, Submit};
use crate::config::{DestId, DestKind, DestPlan};
use crate::telemetry::state::{BufferState, DestinationState, Destinations};

/// The running destinations, in plan order (destination `i` is bit `i`).
#[derive(Debug)]
pub struct DestinationSet {
    pub dests: Vec<Destination>,
    /// The HEC outputs, for the startup probe (dropped after it).
    pub hec: Vec<(String, HecOutput)>,
    /// What `/metrics` and `/health` read of each destination, in plan order.
    pub state: Destinations,
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
            let Started {
                dest,
                submit,
                health,
                hec,
            } = match &d.kind {
                DestKind::Hec { hec, buffer } => super::hec::start(d, hec, buffer, limits)?,
                DestKind::File(path) => super::file::start(d, path)?,
                DestKind::Relay(r) => super::relay::start(d, r, limits)?,
                DestKind::Kafka(k) => super::kafka::start(d, k, limits)?,
                DestKind::Archive { dir, mode } => super::archive::start(d, dir, *mode)?,
            };
            if let Some(output) = hec {
                hec_outputs.push((d.name.clone(), output));
            }
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
