//! Multi-part messages joined into one event (SC4S's `grouping-by` post-filters: Cisco
//! ISE/ACS segments, vSphere with `SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG=yes`, Symantec
//! Brightmail `bmserver` parts; the rules are in
//! [`sluice_proto::classify::group`]).
//!
//! Receivers hand a part to the shared [`GroupStage`] instead of encoding it: only messages
//! classified as parts take its lock, every other message pays one comparison of its
//! application name. A part's window permit is returned at once (the stage bounds its own
//! memory). A task joins what is complete or timed out every [`TICK`] and submits the joined
//! events straight to the destination, as the metrics task does; at shutdown, after the
//! receivers stopped, [`flush_open`] submits every open group, so nothing held is lost.

use std::time::Duration;

use sluice_proto::batch::BatchBuilder;
use sluice_proto::classify::group::{Joined, finish_joined};
use sluice_proto::classify::local::Scratch;
use sluice_proto::classify::{SourceMeta, classify};
use sluice_proto::event::encode_event;
use sluice_proto::{ParseOptions, parse};
use tokio_util::sync::CancellationToken;

use crate::output::Submit;
use crate::pipeline::{Processor, RecvTime, SharedProcessor};

pub mod stage;

pub use stage::{GroupStage, Origin};

/// How often open groups are checked for completion and timeouts.
pub const TICK: Duration = Duration::from_millis(250);

/// Encodes joined events with `processor` (classified again, not grouped again) and submits
/// them. Returns how many were submitted.
fn submit_joined(processor: &Processor, joined: Vec<Joined<Origin>>, out: &Submit) -> usize {
    let n = joined.len();
    if n == 0 {
        return 0;
    }
    let at = RecvTime::now();
    let opts = ParseOptions {
        now_unix_secs: at.unix_micros.div_euclid(1_000_000),
        zone: &processor.zone,
    };
    let mut builder: BatchBuilder = processor.new_builder();
    let mut scratch = Scratch::new();
    for (origin, line) in &joined {
        scratch.reset();
        let src = SourceMeta {
            transport: origin.transport,
            dest_port: origin.dest_port,
            source_ip: origin.source_ip,
            listener_id: &origin.listener_id,
        };
        let msg = parse(line, &opts);
        let mut class = classify(&msg, &src, opts.now_unix_secs, &processor.tables, &scratch);
        finish_joined(origin.rule, &mut class);
        // Routed like any other event: a joined ISE message still goes to its alternates.
        if let Some(batch) = processor.push(&mut builder, at, &class, &msg, &src, |buf| {
            encode_event(buf, &msg, &class, &src, at.unix_micros, &processor.encode)
        }) {
            out.submit(batch);
        }
    }
    if let Some(batch) = builder.take() {
        out.submit(batch);
    }
    n
}

/// Joins and submits what is due every [`TICK`] until `stop`. What is still open then is
/// for [`flush_open`], once the receivers have stopped offering parts.
pub fn spawn(
    processor: SharedProcessor,
    out: Submit,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stop.cancelled() => break,
            }
            let p = processor.load();
            let now_ms = RecvTime::now().unix_micros / 1000;
            let joined = p.groups.take(now_ms, false);
            submit_joined(&p, joined, &out);
        }
    })
}

/// Submits every group still open, joined as it is: at shutdown, after the receivers
/// stopped, so that nothing they held is lost.
pub fn flush_open(processor: &SharedProcessor, out: &Submit) {
    let p = processor.load();
    let n = submit_joined(&p, p.groups.take(0, true), out);
    if n > 0 {
        tracing::info!(
            events = n,
            "stopping: multi-part messages still open were sent as they are"
        );
    }
}
