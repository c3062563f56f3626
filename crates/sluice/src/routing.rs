//! Which destinations an event goes to, decided once per event after classification.
//!
//! Everything is worked out at startup from the configuration
//! ([`crate::config::RoutingConfig`], [`crate::config::ArchiveConfig`] and each destination's
//! mode): for every `vendor_product` named in an alternates, filtered-alternates or archive
//! setting, and for every syslog severity, the set of destinations (a bit per destination in
//! [`Config::destination_plan`] order). Per event this leaves two hash lookups on the
//! classified vendor and product (no allocation, no string building) and an array index by
//! severity. An event of any other `vendor_product` gets the fallback set: the GLOBAL
//! destinations, `SC4S_DEST_GLOBAL_ALTERNATES` and, with `SC4S_ARCHIVE_GLOBAL`, the archive.
//!
//! SC4S's rules (`lp_dest_alts_global`, `app-lp_dest_selected_alts`,
//! `lp_dest_filtered_alts_select`, `app-lp_dest_archive`):
//! * a GLOBAL destination gets every event, a SELECT one only what an alternates setting
//!   routes to it;
//! * `SC4S_DEST_<VP>_ALTERNATES` adds destinations for that vendor_product;
//! * an event matching `SC4S_DEST_<VP>_ALT_FILTER` goes to the matching
//!   `SC4S_DEST_<VP>_FILTERED_ALTERNATES` *instead of* every other destination (an empty
//!   list of matches keeps the normal ones). One filter applies to every filtered
//!   alternate, or there is one per alternate, in order.
//!
//! The operator's `sc4s-lp-dest-select-[drop-]<destination>` applications then add or take
//! away destinations per event ([`Selectors`]); without any, nothing more runs per event.
//!
//! The filters are syslog-ng filters in SC4S. sluice supports those that depend only on
//! what is known per vendor_product and severity, so that the decision stays a lookup:
//! `f_is_nevermatch` (SC4S's default) and `level(...)` (`level(debug)`, `level(err..emerg)`,
//! `level(info, debug)`); any other is a startup error naming the setting.

use std::collections::HashMap;
use std::sync::Arc;

use crate::config::{Config, ConfigError, DestMode, DestPlan};

mod selectors;
pub use selectors::Selectors;

/// Severity of an event without a PRI: syslog-ng's default priority is `user.notice`.
pub const DEFAULT_SEVERITY: u8 = 5;

/// Route indexes by product, of one vendor.
type ByProduct = HashMap<Box<[u8]>, u16>;

/// The precomputed routing table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Routing {
    /// By vendor, then product: the route's index in `routes`.
    by_vendor: HashMap<Box<[u8]>, ByProduct>,
    /// Destination sets by severity (0 = emerg … 7 = debug).
    routes: Vec<[u64; 8]>,
    /// Events of every other vendor_product.
    fallback: u64,
    /// Per route, the severities (bit per severity) whose set is filtered alternates:
    /// SC4S's filtered-alternates path is final, so selectors do not see those events.
    finals: Vec<u8>,
    /// The operator's destination selectors (from the app-parsers; a reload brings new
    /// ones). `None`: no per-event work beyond the table.
    selectors: Option<Arc<Selectors>>,
}

/// A filter's verdict by severity.
type SeverityMask = [bool; 8];

const LEVELS: [&str; 8] = [
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
];

fn level(word: &str) -> Option<usize> {
    let w = word.trim().to_ascii_lowercase();
    let w = match w.as_str() {
        "panic" => "emerg",
        "error" => "err",
        "warn" => "warning",
        other => other,
    };
    LEVELS
        .iter()
        .position(|l| *l == w)
        .or_else(|| w.parse::<usize>().ok().filter(|n| *n < 8))
}

/// Parses one ALT_FILTER entry.
fn parse_filter(f: &str) -> Result<SeverityMask, String> {
    let f = f.trim();
    if f.eq_ignore_ascii_case("f_is_nevermatch") {
        return Ok([false; 8]);
    }
    let inner = f
        .strip_prefix("level(")
        .or_else(|| f.strip_prefix("priority("))
        .and_then(|r| r.strip_suffix(')'));
    let Some(inner) = inner else {
        return Err(format!(
            "filter {f:?} is not supported: sluice evaluates f_is_nevermatch and level(...) \
             (level(debug), level(info..debug), level(err, crit)), which it decides per \
             vendor_product and severity"
        ));
    };
    let mut mask = [false; 8];
    for part in inner.split(',') {
        let bad = || format!("filter {f:?}: {part:?} is not a syslog level (emerg … debug)");
        match part.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (level(a).ok_or_else(bad)?, level(b).ok_or_else(bad)?);
                for m in &mut mask[a.min(b)..=a.max(b)] {
                    *m = true;
                }
            }
            None => mask[level(part).ok_or_else(bad)?] = true,
        }
    }
    Ok(mask)
}

impl Routing {
    /// The table for `config`'s routing over the destinations of `plan`
    /// ([`Config::destination_plan`]). Errors name the setting.
    pub fn build(config: &Config, plan: &[DestPlan]) -> Result<Routing, ConfigError> {
        let r = &config.routing;
        let bit = |setting: &str, name: &str| -> Result<u64, ConfigError> {
            Config::resolve_destination(plan, setting, name).map(|i| 1u64 << i)
        };
        let bits = |setting: &str, names: &[String]| -> Result<u64, ConfigError> {
            names
                .iter()
                .try_fold(0u64, |acc, n| Ok(acc | bit(setting, n)?))
        };
        let alternates_setting = |vp: &str| {
            format!(
                "SC4S_DEST_{}_ALTERNATES / routing.alternates.{vp}",
                vp.to_ascii_uppercase()
            )
        };

        let mut global = 0u64;
        for (i, d) in plan.iter().enumerate() {
            if d.mode == DestMode::Global {
                global |= 1 << i;
            }
        }
        if let Some(names) = r.alternates.get("global") {
            global |= bits(&alternates_setting("global"), names)?;
        }
        let archive_bit = plan
            .iter()
            .position(|d| d.name == "archive" && d.table == "archive")
            .map_or(0, |i| 1u64 << i);
        let mut fallback = global;
        if config.archive.global {
            fallback |= archive_bit;
        }

        let mut keys: Vec<String> = r
            .alternates
            .keys()
            .filter(|k| *k != "global")
            .cloned()
            .collect();
        keys.extend(r.filtered_alternates.keys().cloned());
        keys.extend(config.archive.vendor_products.iter().cloned());
        for k in r.alt_filter.keys() {
            if !r.filtered_alternates.contains_key(k) {
                return Err(ConfigError::Invalid(format!(
                    "SC4S_DEST_{}_ALT_FILTER / routing.alt_filter.{k} is set without \
                     SC4S_DEST_{}_FILTERED_ALTERNATES: it has no effect",
                    k.to_ascii_uppercase(),
                    k.to_ascii_uppercase()
                )));
            }
        }
        keys.iter_mut().for_each(|k| *k = k.to_ascii_lowercase());
        keys.sort();
        keys.dedup();

        let mut table = Routing {
            by_vendor: HashMap::new(),
            routes: Vec::with_capacity(keys.len()),
            fallback,
            finals: Vec::with_capacity(keys.len()),
            selectors: None,
        };
        for vp in &keys {
            let mut normal = fallback;
            if let Some(names) = r.alternates.get(vp) {
                normal |= bits(&alternates_setting(vp), names)?;
            }
            if config
                .archive
                .vendor_products
                .iter()
                .any(|a| a.eq_ignore_ascii_case(vp))
            {
                normal |= archive_bit;
            }
            let mut by_severity = [normal; 8];
            let mut finals = 0u8;
            if let Some(dests) = r.filtered_alternates.get(vp) {
                let upper = vp.to_ascii_uppercase();
                let fsetting = format!("SC4S_DEST_{upper}_ALT_FILTER / routing.alt_filter.{vp}");
                let dsetting = format!(
                    "SC4S_DEST_{upper}_FILTERED_ALTERNATES / routing.filtered_alternates.{vp}"
                );
                let filters: Vec<String> = r
                    .alt_filter
                    .get(vp)
                    .cloned()
                    .unwrap_or_else(|| vec!["f_is_nevermatch".into()]);
                if filters.len() != 1 && filters.len() != dests.len() {
                    return Err(ConfigError::Invalid(format!(
                        "{fsetting}: {} filters for {} filtered alternates; give one filter for \
                         all of them or one per alternate",
                        filters.len(),
                        dests.len()
                    )));
                }
                let mut matched = [0u64; 8];
                let mut any = [false; 8];
                for (i, d) in dests.iter().enumerate() {
                    let f = &filters[if filters.len() == 1 { 0 } else { i }];
                    let mask = parse_filter(f)
                        .map_err(|e| ConfigError::Invalid(format!("{fsetting}: {e}")))?;
                    let b = bit(&dsetting, d)?;
                    for s in 0..8 {
                        if mask[s] {
                            matched[s] |= b;
                            any[s] = true;
                        }
                    }
                }
                for s in 0..8 {
                    if any[s] {
                        by_severity[s] = matched[s];
                        finals |= 1 << s;
                    }
                }
            }
            let idx = table.routes.len() as u16;
            table.routes.push(by_severity);
            table.finals.push(finals);
            // The key is `<vendor>_<product>`; either may hold `_` itself, so every split is
            // registered (a lookup joins nothing).
            for (i, _) in vp.match_indices('_') {
                let (v, p) = (&vp[..i], &vp[i + 1..]);
                table
                    .by_vendor
                    .entry(v.as_bytes().into())
                    .or_default()
                    .insert(p.as_bytes().into(), idx);
            }
        }
        Ok(table)
    }

    /// This table with the operator's destination selectors (`None`: without any).
    pub fn with_selectors(&self, selectors: Option<Selectors>) -> Routing {
        Routing {
            selectors: selectors.map(Arc::new),
            ..self.clone()
        }
    }

    /// The selectors, when some can change an event's destinations.
    pub fn selectors(&self) -> Option<&Selectors> {
        self.selectors.as_deref()
    }

    /// Whether every event gets the same destinations: the receivers then need not route.
    pub fn is_uniform(&self) -> bool {
        self.routes.is_empty() && self.selectors.is_none()
    }

    /// The destinations of events that are not routed (and of unnamed vendor_products).
    pub fn fallback(&self) -> u64 {
        self.fallback
    }

    /// The destinations of an event of `vendor`/`product` (as classified, lower case) with
    /// syslog severity `severity`.
    #[inline]
    pub fn dests(&self, vendor: &[u8], product: &[u8], severity: u8) -> u64 {
        match self.by_vendor.get(vendor).and_then(|p| p.get(product)) {
            Some(&i) => self.routes[i as usize][usize::from(severity & 7)],
            None => self.fallback,
        }
    }

    /// [`dests`](Self::dests) after the selectors: `takes(app)` says whether selector
    /// application `app` takes the event, asked only for destinations whose bit a selector
    /// can still change.
    #[inline]
    pub fn dests_selected(
        &self,
        vendor: &[u8],
        product: &[u8],
        severity: u8,
        takes: impl FnMut(u32) -> bool,
    ) -> u64 {
        let sev = usize::from(severity & 7);
        let (dests, is_final) = match self.by_vendor.get(vendor).and_then(|p| p.get(product)) {
            Some(&i) => (
                self.routes[i as usize][sev],
                self.finals[i as usize] & (1 << sev) != 0,
            ),
            None => (self.fallback, false),
        };
        match &self.selectors {
            Some(s) if !is_final => s.apply(dests, takes),
            _ => dests,
        }
    }
}

#[cfg(test)]
mod tests;
