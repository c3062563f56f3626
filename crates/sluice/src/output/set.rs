//! Every destination of the daemon, started from [`Config::destination_plan`]: each with its
//! own output (HEC workers, the file, the archive), queue, disk buffer and completion sink,
//! behind one [`Submit`] that splits batches by the events' destination sets.
//!
//! Nothing is shared between destinations but the input windows: a destination that is slow
//! or down fills its own buffer (its batches are persisted there, which releases their
//! window slots), so the others keep delivering. Without a buffer it holds the window slots
//! of what it has not delivered, as the single destination does.

use std::sync::Arc;

use arc_swap::ArcSwap;
use sluice_hec::HecOutput;
use sluice_proto::batch::BatchPolicy;
use tokio::time::Instant;

use super::start::{Limits, Started};
use super::{Destination, DrainSummary, Submit};
use crate::config::{DestId, DestKind, DestMode, DestPlan, MAX_DESTINATIONS};
use crate::telemetry::state::{BufferState, DestinationState, Destinations};
use crate::window::{MemoryBudget, Window};

/// How long a destination a reload removed keeps its bit after the reload, so that batches
/// routed to it before the reload (still open in the receivers, or in a multi-part group)
/// reach it: the longest batch timeout, and a margin. Then it is drained and closed.
pub fn retire_grace(batch_timeout: std::time::Duration) -> std::time::Duration {
    batch_timeout + std::time::Duration::from_secs(2)
}

/// One bit of the destination set: the destination that has it, or had it.
#[derive(Debug)]
struct Slot {
    /// What it runs; for a retiring or closed slot, [`DestPlan::retired`] of it (what the
    /// routing sees: never routed to).
    plan: DestPlan,
    /// The plan it was started from.
    started: DestPlan,
    /// Its way in, as the fan-out holds it (encoding and batcher applied).
    part: Submit,
    /// What `/health` reads of its output.
    health: Option<Arc<dyn crate::telemetry::state::OutputState>>,
    state: SlotState,
}

#[derive(Debug)]
enum SlotState {
    Live(Destination),
    /// Removed by a reload at this instant: still takes what was routed to it before.
    Retiring(Destination, std::time::Instant),
    /// Drained and closed: the bit is free for a later reload's new destination.
    Closed,
}

/// A reload's destinations laid out on the running bits (see [`DestinationSet::align`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Aligned {
    /// The plan to build routing and encodings from: index `i` is bit `i`.
    pub plan: Vec<DestPlan>,
    /// Bits of destinations to start.
    pub added: Vec<usize>,
    /// Bits of running destinations to retire.
    pub removed: Vec<usize>,
    /// Names of destinations whose settings changed: they keep running as they are until a
    /// restart (their disk buffer cannot be handed from the old to the new one in place).
    pub changed: Vec<String>,
}

impl Aligned {
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }
}

impl DestPlan {
    /// What the routing of a later configuration sees at the bit of a removed destination: a
    /// SELECT destination no setting can name, so nothing new is routed to it.
    pub fn retired(&self) -> DestPlan {
        DestPlan {
            name: format!("~retired~{}", self.name),
            id: DestId::Named(format!("~RETIRED~{}", self.name)),
            table: "~retired".into(),
            mode: DestMode::Select,
            kind: DestKind::File(std::path::PathBuf::new()),
        }
    }
}

/// The running destinations, in bit order (destination `i` is bit `i`).
#[derive(Debug)]
pub struct DestinationSet {
    slots: Vec<Slot>,
    /// The handle every receiver holds a clone of: retargeted when the set changes.
    submit: Submit,
    unrouted: u64,
    /// The HEC outputs, for the startup probe (dropped after it).
    pub hec: Vec<(String, HecOutput)>,
    /// What `/metrics` and `/health` read of each destination, republished on change.
    pub state: Arc<ArcSwap<Destinations>>,
    windows: Vec<Arc<Window>>,
    memory: Arc<MemoryBudget>,
}

/// One destination started, with its part of the fan-out and what `/health` reads.
struct StartedOne {
    dest: Destination,
    part: Submit,
    hec: Option<HecOutput>,
    health: Option<Arc<dyn crate::telemetry::state::OutputState>>,
}

/// Starts destination `i` of `plan` (the receivers batch by destination 0's settings).
fn start_one(plan: &[DestPlan], i: usize, limits: &Limits<'_>) -> anyhow::Result<StartedOne> {
    let d = &plan[i];
    let (_, encoding_of) = super::Encodings::from_plan(plan, 0);
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
    let submit = submit.with_encoding(encoding_of.get(i).copied().unwrap_or(0));
    // The receivers batch by the default destination's settings. Another HEC destination,
    // or the default one in SELECT mode, gets parts of those batches: it merges and cuts
    // them to its own BATCH_LINES / BATCH_BYTES / BATCH_TIMEOUT.
    let part = match &d.kind {
        DestKind::Hec { hec, .. }
            if plan.len() > 1
                && (d.id != DestId::Default || d.mode == crate::config::DestMode::Select) =>
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
        tracing::info!(destination = %d.name, mode = d.mode.label(), "destination started");
    }
    Ok(StartedOne {
        dest,
        part,
        hec,
        health,
    })
}

impl DestinationSet {
    /// Starts every destination of `plan` and the [`Submit`] over them, which sends events
    /// that are not routed to `unrouted` (a destination bit set).
    pub fn start(
        plan: &[DestPlan],
        limits: &Limits<'_>,
        unrouted: u64,
    ) -> anyhow::Result<(DestinationSet, Submit)> {
        let mut slots = Vec::with_capacity(plan.len());
        let mut hec_outputs = Vec::new();
        for (i, d) in plan.iter().enumerate() {
            let one = start_one(plan, i, limits)?;
            if let Some(output) = one.hec {
                hec_outputs.push((d.name.clone(), output));
            }
            slots.push(Slot {
                plan: d.clone(),
                started: d.clone(),
                part: one.part,
                health: one.health,
                state: SlotState::Live(one.dest),
            });
        }
        let parts: Vec<Submit> = slots.iter().map(|s| s.part.clone()).collect();
        let submit = Submit::fan_out(parts, unrouted);
        let set = DestinationSet {
            slots,
            submit: submit.clone(),
            unrouted,
            hec: hec_outputs,
            state: Arc::new(ArcSwap::from_pointee(Destinations(Vec::new()))),
            windows: limits.windows.to_vec(),
            memory: Arc::clone(limits.memory),
        };
        set.publish();
        Ok((set, submit))
    }

    /// Lays `new` (a configuration's [`destination_plan`](crate::config::Config::destination_plan))
    /// out on the running bits: a destination that keeps its name keeps its bit (and, if its
    /// settings changed, its running form until a restart: listed in `changed`); a removed
    /// one's bit holds [`DestPlan::retired`]; a new one takes a closed bit or a new one.
    /// Fails when the set would pass [`MAX_DESTINATIONS`] bits.
    pub fn align(&self, new: &[DestPlan]) -> anyhow::Result<Aligned> {
        let current: Vec<(&DestPlan, Held)> = self
            .slots
            .iter()
            .map(|s| {
                let held = match s.state {
                    SlotState::Live(_) => Held::Live,
                    SlotState::Retiring(..) => Held::Retiring,
                    SlotState::Closed => Held::Closed,
                };
                (&s.started, held)
            })
            .collect();
        align(&current, new)
    }
    /// The plan in force, bit by bit (retired bits hold [`DestPlan::retired`]).
    pub fn plan(&self) -> Vec<DestPlan> {
        self.slots.iter().map(|s| s.plan.clone()).collect()
    }

    /// Starts the destinations `aligned` adds (bits of `aligned.plan`), without changing
    /// what receivers send to. Call [`commit`](Self::commit) with the result once nothing
    /// else of the reload can fail, or drop it (the new destinations then drain and close).
    pub fn prepare(&self, aligned: &Aligned) -> anyhow::Result<Prepared> {
        let limits = Limits {
            windows: &self.windows,
            memory: &self.memory,
        };
        let mut started = Vec::with_capacity(aligned.added.len());
        for &i in &aligned.added {
            let one = start_one(&aligned.plan, i, &limits)
                .map_err(|e| anyhow::anyhow!("destination {}: {e:#}", aligned.plan[i].name))?;
            started.push((i, one));
        }
        Ok(Prepared {
            aligned: aligned.clone(),
            started,
        })
    }

    /// Puts a prepared change in service: the new destinations get their bits, the removed
    /// ones start retiring (they still take what was routed to them before; see
    /// [`retire_due`](Self::retire_due)), and every receiver's handle is retargeted. `unrouted`
    /// is the new routing's GLOBAL set. Returns the names opened and closed.
    pub fn commit(&mut self, mut prepared: Prepared, unrouted: u64) -> (Vec<String>, Vec<String>) {
        let aligned = &prepared.aligned;
        let now = std::time::Instant::now();
        let mut closed = Vec::new();
        for &i in &aligned.removed {
            let slot = &mut self.slots[i];
            if let SlotState::Live(d) = std::mem::replace(&mut slot.state, SlotState::Closed) {
                slot.state = SlotState::Retiring(d, now);
            }
            slot.plan = slot.started.retired();
            closed.push(slot.started.name.clone());
            tracing::info!(destination = %slot.started.name, "destination removed by the reload: it takes what was routed to it before, then drains and closes");
        }
        let mut opened = Vec::new();
        for (i, one) in prepared.started.drain(..) {
            let plan = aligned.plan[i].clone();
            opened.push(plan.name.clone());
            let slot = Slot {
                plan: plan.clone(),
                started: plan,
                part: one.part,
                health: one.health,
                state: SlotState::Live(one.dest),
            };
            if i < self.slots.len() {
                self.slots[i] = slot;
            } else {
                self.slots.push(slot);
            }
        }
        self.unrouted = unrouted;
        self.retarget();
        self.publish();
        (opened, closed)
    }

    /// Drains and closes the destinations that have been retiring for longer than `grace`;
    /// their bits then take nothing more (what still arrives for them completes as
    /// `Abandoned { OutputGone }`, counted and logged). The drains run in the background.
    pub fn retire_due(&mut self, grace: std::time::Duration, deadline: std::time::Duration) {
        let mut changed = false;
        for slot in &mut self.slots {
            let due =
                matches!(&slot.state, SlotState::Retiring(_, since) if since.elapsed() >= grace);
            if !due {
                continue;
            }
            let SlotState::Retiring(dest, _) =
                std::mem::replace(&mut slot.state, SlotState::Closed)
            else {
                continue;
            };
            slot.part = Submit::gone(Arc::clone(dest.stats()));
            slot.health = None;
            changed = true;
            let name = slot.started.name.clone();
            tokio::spawn(async move {
                let s = dest.drain(Instant::now() + deadline).await;
                tracing::info!(
                    destination = %name,
                    delivered = s.delivered,
                    rejected = s.rejected,
                    kept_on_disk = s.kept,
                    lost = s.lost,
                    "removed destination drained and closed"
                );
            });
        }
        if changed {
            self.retarget();
            self.publish();
        }
    }

    /// Whether a removed destination is still retiring.
    pub fn retiring(&self) -> bool {
        self.slots
            .iter()
            .any(|s| matches!(s.state, SlotState::Retiring(..)))
    }

    fn retarget(&self) {
        let parts: Vec<Submit> = self.slots.iter().map(|s| s.part.clone()).collect();
        self.submit.retarget(&parts, self.unrouted);
    }

    /// Republishes what `/metrics` and `/health` read: every destination not closed.
    fn publish(&self) {
        let state = self
            .slots
            .iter()
            .filter_map(|s| {
                let dest = match &s.state {
                    SlotState::Live(d) | SlotState::Retiring(d, _) => d,
                    SlotState::Closed => return None,
                };
                Some(DestinationState {
                    name: s.started.name.clone(),
                    default: s.started.id == DestId::Default,
                    events: dest.stats().events().clone(),
                    output: s.health.clone(),
                    buffer: dest.buffer().map(|b| Arc::clone(b) as Arc<dyn BufferState>),
                })
            })
            .collect();
        self.state.store(Arc::new(Destinations(state)));
    }

    /// Completes when any destination's output task ends (before shutdown: it failed).
    pub async fn ended(&mut self) {
        type Ended<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;
        let mut futs: Vec<Ended<'_>> = self
            .slots
            .iter_mut()
            .filter_map(|s| match &mut s.state {
                SlotState::Live(d) | SlotState::Retiring(d, _) => {
                    Some(Box::pin(d.ended()) as Ended<'_>)
                }
                SlotState::Closed => None,
            })
            .collect();
        if futs.is_empty() {
            return std::future::pending().await;
        }
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
        drop(self.submit);
        let tasks: Vec<_> = self
            .slots
            .into_iter()
            .filter_map(|s| match s.state {
                SlotState::Live(d) | SlotState::Retiring(d, _) => Some(d),
                SlotState::Closed => None,
            })
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

/// Destinations started for a reload, not yet in service (see [`DestinationSet::prepare`]).
pub struct Prepared {
    aligned: Aligned,
    started: Vec<(usize, StartedOne)>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("aligned", &self.aligned)
            .field("started", &self.started.len())
            .finish()
    }
}

/// What a bit holds, for [`align`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Live,
    Retiring,
    Closed,
}

/// [`DestinationSet::align`] over the running plans, bit by bit, each with what holds it.
fn align(current: &[(&DestPlan, Held)], new: &[DestPlan]) -> anyhow::Result<Aligned> {
    let mut plan: Vec<DestPlan> = current
        .iter()
        .map(|(p, held)| {
            if *held == Held::Live {
                (*p).clone()
            } else {
                p.retired()
            }
        })
        .collect();
    let mut free: Vec<usize> = current
        .iter()
        .enumerate()
        .filter(|(_, (_, held))| *held == Held::Closed)
        .map(|(i, _)| i)
        .collect();
    let mut aligned = Aligned {
        plan: Vec::new(),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
    };
    for (i, (p, held)) in current.iter().enumerate() {
        if *held != Held::Live {
            continue;
        }
        match new.iter().find(|n| n.name == p.name) {
            None => {
                aligned.removed.push(i);
                plan[i] = p.retired();
            }
            Some(n) if n != *p => aligned.changed.push(p.name.clone()),
            Some(_) => {}
        }
    }
    for n in new {
        let running = current
            .iter()
            .any(|(p, held)| *held == Held::Live && p.name == n.name);
        if running {
            continue;
        }
        let i = if free.is_empty() {
            plan.push(n.clone());
            plan.len() - 1
        } else {
            let i = free.remove(0);
            plan[i] = n.clone();
            i
        };
        aligned.added.push(i);
    }
    if plan.len() > MAX_DESTINATIONS {
        anyhow::bail!(
            "the reload would need {} destination bits (at most {MAX_DESTINATIONS}: removed \
             destinations keep theirs until they are drained); restart sluice to apply it",
            plan.len()
        );
    }
    aligned.plan = plan;
    Ok(aligned)
}

#[cfg(test)]
mod tests {
    use super::{Held, align};
    use crate::config::{Config, DestPlan};

    fn plan_of(env: &[(&str, &str)]) -> Vec<DestPlan> {
        let mut e = crate::env::Env::default();
        e.merge_process(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut c = Config::default();
        c.apply_env(&e).unwrap();
        c.destination_plan()
    }

    const DEFAULT: (&str, &str) = ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://127.0.0.1:1");
    const SECOND: (&str, &str) = ("SC4S_DEST_SPLUNK_HEC_SECOND_URL", "http://127.0.0.1:2");
    const THIRD: (&str, &str) = ("SC4S_DEST_SPLUNK_HEC_THIRD_URL", "http://127.0.0.1:3");

    fn live(p: &[DestPlan]) -> Vec<(&DestPlan, Held)> {
        p.iter().map(|p| (p, Held::Live)).collect()
    }

    #[test]
    fn the_same_plan_changes_nothing() {
        let p = plan_of(&[DEFAULT, SECOND]);
        let a = align(&live(&p), &p).unwrap();
        assert!(a.is_unchanged() && a.changed.is_empty());
        assert_eq!(a.plan, p);
    }

    #[test]
    fn an_added_destination_takes_a_new_bit_and_the_others_keep_theirs() {
        let before = plan_of(&[DEFAULT, THIRD]);
        let after = plan_of(&[DEFAULT, SECOND, THIRD]);
        // In the new plan `second` sorts before `third`; on the running bits it comes last.
        assert_eq!(after[1].name, "second");
        let a = align(&live(&before), &after).unwrap();
        assert_eq!(a.added, vec![2]);
        assert!(a.removed.is_empty());
        let names: Vec<_> = a.plan.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["default", "third", "second"]);
    }

    #[test]
    fn a_removed_destination_keeps_its_bit_as_a_retired_one_that_nothing_routes_to() {
        let before = plan_of(&[DEFAULT, SECOND, THIRD]);
        let after = plan_of(&[DEFAULT, THIRD]);
        let a = align(&live(&before), &after).unwrap();
        assert_eq!(a.removed, vec![1]);
        assert!(a.added.is_empty());
        assert_eq!(a.plan[1], before[1].retired());
        assert_eq!(a.plan[2].name, "third");
        // The routing built on it never names the retired bit.
        let mut c = Config::default();
        let mut e = crate::env::Env::default();
        e.merge_process([DEFAULT, THIRD].map(|(k, v)| (k.to_string(), v.to_string())));
        c.apply_env(&e).unwrap();
        let r = crate::routing::Routing::build(&c, &a.plan).unwrap();
        assert_eq!(r.fallback() & 0b010, 0);
        assert_eq!(r.fallback(), 0b101);
    }

    #[test]
    fn a_retiring_bit_is_not_reused_and_a_closed_one_is() {
        let before = plan_of(&[DEFAULT, SECOND]);
        let after = plan_of(&[DEFAULT, THIRD]);
        let retiring = vec![(&before[0], Held::Live), (&before[1], Held::Retiring)];
        let a = align(&retiring, &after).unwrap();
        assert_eq!(a.added, vec![2]);
        assert_eq!(a.plan[1], before[1].retired());
        let closed = vec![(&before[0], Held::Live), (&before[1], Held::Closed)];
        let a = align(&closed, &after).unwrap();
        assert_eq!(a.added, vec![1]);
        assert_eq!(a.plan.len(), 2);
        assert_eq!(a.plan[1].name, "third");
    }

    #[test]
    fn changed_settings_are_named_and_keep_the_running_destination() {
        let before = plan_of(&[DEFAULT, SECOND]);
        let after = plan_of(&[
            DEFAULT,
            ("SC4S_DEST_SPLUNK_HEC_SECOND_URL", "http://127.0.0.1:9"),
        ]);
        let a = align(&live(&before), &after).unwrap();
        assert!(a.is_unchanged());
        assert_eq!(a.changed, vec!["second".to_owned()]);
        assert_eq!(a.plan, before);
    }
}
