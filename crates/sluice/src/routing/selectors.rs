//! The operator's destination selectors: `sc4s-lp-dest-select-<destination>` and
//! `sc4s-lp-dest-select-drop-<destination>` applications from the app-parser directory.
//!
//! SC4S's `lp_dest_alts_global` log path, one per destination, is:
//! * a SELECT destination takes an event only if `app-parser(topic(sc4s-lp-dest-select-<d>))`
//!   succeeds, i.e. one of the selectors of `<d>` takes it — the operator's files and the
//!   ones SC4S generates from `SC4S_DEST_<VP>_ALTERNATES` alike (sluice has the latter in
//!   its table already, so the files add to the table's set);
//! * a GLOBAL destination wraps the same app-parser in `if { } else { }`: every event
//!   passes, the selectors change nothing;
//! * then, in both modes, an event a `sc4s-lp-dest-select-drop-<d>` selector takes is not
//!   sent to `<d>`.
//!
//! Events a matching `SC4S_DEST_<VP>_ALT_FILTER` sends to filtered alternates never reach
//! those paths (SC4S's filtered-alternates path is `flags(final)`), so the selectors are
//! not consulted for them, and the archive (its own path) has no selectors.
//!
//! A selector of a destination that is not configured is an application no log path asks
//! for: syslog-ng starts and never runs it. sluice starts too, but says so (with file:line),
//! since it is almost always a typo or a missing `SC4S_DEST_*` setting.

use sluice_proto::classify::local::Selector;

use crate::config::{Config, DestId, DestMode, DestPlan};

/// The selectors by destination, resolved against the destination plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selectors {
    dests: Vec<DestSelectors>,
}

#[derive(Debug, Clone, PartialEq)]
struct DestSelectors {
    bit: u64,
    /// Selector applications that add the destination (SELECT mode only).
    select: Vec<u32>,
    /// `-drop-` applications that take it away.
    drop: Vec<u32>,
}

impl Selectors {
    /// The selectors of `selectors` for the destinations of `plan`, and a warning (with
    /// file:line) for each selector that cannot have an effect. `None`: no selector can.
    pub fn build(selectors: &[Selector], plan: &[DestPlan]) -> (Option<Selectors>, Vec<String>) {
        let mut warnings = Vec::new();
        let mut dests: Vec<DestSelectors> = Vec::new();
        for s in selectors {
            let topic = if s.drop {
                "sc4s-lp-dest-select-drop-"
            } else {
                "sc4s-lp-dest-select-"
            };
            let at = format!(
                "{}:{}: application {} [{topic}{}]",
                s.file, s.line, s.name, s.destination
            );
            let setting =
                format!("{at} names a destination that is not configured; SC4S never runs it");
            let i = match Config::resolve_destination(plan, &setting, &s.destination) {
                Ok(i) => i,
                Err(e) => {
                    warnings.push(e.to_string());
                    continue;
                }
            };
            let d = &plan[i];
            if d.id == DestId::Archive {
                warnings.push(format!(
                    "{at}: the archive is not routed by selectors (SC4S's archive path does not \
                     consult them); it has no effect"
                ));
                continue;
            }
            if !s.drop && d.mode == DestMode::Global {
                // SC4S runs it and sends the event either way; worth a line, not a warning
                // per event.
                warnings.push(format!(
                    "{at}: {} is in GLOBAL mode and gets every event; the selector has no \
                     effect (SC4S_DEST_..._MODE=SELECT makes it choose)",
                    d.sc4s_name()
                ));
                continue;
            }
            let Some(bit) = 1u64.checked_shl(i as u32) else {
                continue;
            };
            let entry = match dests.iter().position(|x| x.bit == bit) {
                Some(k) => &mut dests[k],
                None => {
                    dests.push(DestSelectors {
                        bit,
                        select: Vec::new(),
                        drop: Vec::new(),
                    });
                    dests.last_mut().expect("just pushed")
                }
            };
            if s.drop {
                entry.drop.push(s.app);
            } else {
                entry.select.push(s.app);
            }
        }
        ((!dests.is_empty()).then_some(Selectors { dests }), warnings)
    }

    /// `dests` (the table's set for an event) after the selectors: `takes(app)` says
    /// whether selector application `app` takes the event. Each destination's selectors
    /// run only while they can still change its bit.
    #[inline]
    pub fn apply(&self, mut dests: u64, mut takes: impl FnMut(u32) -> bool) -> u64 {
        for d in &self.dests {
            if dests & d.bit == 0 && d.select.iter().any(|&a| takes(a)) {
                dests |= d.bit;
            }
            if dests & d.bit != 0 && d.drop.iter().any(|&a| takes(a)) {
                dests &= !d.bit;
            }
        }
        dests
    }
}
