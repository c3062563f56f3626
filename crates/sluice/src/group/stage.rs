//! The open groups of every receiver: the state receivers offer parts to. Below the
//! pipeline, which holds it, and the task in [`super`] that joins and submits.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use sluice_proto::classify::group::{GroupLimits, Grouper, Joined, Part, Rule};
use sluice_proto::classify::{SourceMeta, Transport};

/// Where a group's first part came from: its joined event is classified as received there.
#[derive(Clone, Debug)]
pub struct Origin {
    pub transport: Transport,
    pub dest_port: u16,
    pub source_ip: IpAddr,
    pub listener_id: Arc<str>,
    /// The group's rule (some set more than the joined text).
    pub rule: Rule,
}

#[derive(Debug)]
struct State {
    grouper: Grouper<Origin>,
    ready: Vec<Joined<Origin>>,
}

/// The open groups of every receiver; kept across reloads.
#[derive(Debug)]
pub struct GroupStage {
    state: Mutex<State>,
}

impl Default for GroupStage {
    fn default() -> Self {
        GroupStage {
            state: Mutex::new(State {
                grouper: Grouper::new(GroupLimits::default()),
                ready: Vec::new(),
            }),
        }
    }
}

impl GroupStage {
    /// Takes `part` of a message received from `src` at `unix_micros`.
    pub fn offer(&self, part: &Part<'_>, src: &SourceMeta<'_>, unix_micros: i64) {
        let origin = Origin {
            transport: src.transport,
            dest_port: src.dest_port,
            source_ip: src.source_ip,
            listener_id: Arc::from(src.listener_id),
            rule: part.rule,
        };
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let State { grouper, ready } = &mut *s;
        grouper.offer(part, &origin, unix_micros / 1000, ready);
    }

    /// The joined events that are complete, or timed out at `now_ms`; every open group
    /// with `all`.
    pub(super) fn take(&self, now_ms: i64, all: bool) -> Vec<Joined<Origin>> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let State { grouper, ready } = &mut *s;
        if all {
            grouper.drain(ready);
        } else if !grouper.is_empty() {
            grouper.expire(now_ms, ready);
        }
        std::mem::take(ready)
    }
}
