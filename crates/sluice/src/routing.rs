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
//! The filters are syslog-ng filters in SC4S. sluice decides `f_is_nevermatch` (SC4S's
//! default) and `level(...)` (`level(debug)`, `level(err..emerg)`, `level(info, debug)`) in
//! the table; the name of one of the operator's filters (`local/config/filters/`,
//! app-parsers) is run per event, on that vendor_product's events only, once
//! [`Routing::resolve_filters`] found it. Anything else is a startup error naming the
//! setting.

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
    /// Per route, the filtered alternates decided by a named filter (evaluated per event).
    named: Vec<Vec<NamedAlt>>,
    /// Some route has one: a flag, so that the per-event check stays one load.
    has_named: bool,
}

/// A filter's verdict by severity.
type SeverityMask = [bool; 8];

fn level(word: &str) -> Option<usize> {
    sluice_proto::message::severity_by_name(word).map(usize::from)
}

/// One ALT_FILTER entry: decided by severity, or a filter of the operator's files.
enum AltFilter {
    Levels(SeverityMask),
    Named(String),
}

/// A syslog-ng object name (what `filter(NAME)` takes).
fn is_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// Parses one ALT_FILTER entry.
fn parse_filter(f: &str) -> Result<AltFilter, String> {
    let f = f.trim();
    if f.eq_ignore_ascii_case("f_is_nevermatch") {
        return Ok(AltFilter::Levels([false; 8]));
    }
    // SC4S writes the value into `filter(...)`: a bare name, or `filter(name)`.
    let named = f
        .strip_prefix("filter(")
        .and_then(|r| r.strip_suffix(')'))
        .map(str::trim)
        .unwrap_or(f);
    if is_name(named) {
        return Ok(AltFilter::Named(named.to_owned()));
    }
    let inner = f
        .strip_prefix("level(")
        .or_else(|| f.strip_prefix("priority("))
        .and_then(|r| r.strip_suffix(')'));
    let Some(inner) = inner else {
        return Err(format!(
            "filter {f:?} is not supported: sluice evaluates f_is_nevermatch, level(...) \
             (level(debug), level(info..debug), level(err, crit)) and the name of a filter \
             defined in the operator's files (local/config/filters/ or app_parsers/)"
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
    Ok(AltFilter::Levels(mask))
}

/// A filtered alternate whose filter is one of the operator's named filters.
#[derive(Debug, Clone, PartialEq)]
struct NamedAlt {
    bit: u64,
    name: String,
    /// The ALT_FILTER setting, for the error when the name is not defined.
    setting: String,
    /// The filter's id in the app-parsers program, once resolved.
    id: Option<u32>,
}

/// What the per-event evaluation asks the classifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// Does selector application `n` take the event?
    Selector(u32),
    /// Does named filter `n` match it?
    Filter(u32),
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
            named: Vec::with_capacity(keys.len()),
            has_named: false,
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
            let mut named = Vec::new();
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
                    let parsed = parse_filter(f)
                        .map_err(|e| ConfigError::Invalid(format!("{fsetting}: {e}")))?;
                    let b = bit(&dsetting, d)?;
                    let mask = match parsed {
                        AltFilter::Levels(m) => m,
                        AltFilter::Named(name) => {
                            named.push(NamedAlt {
                                bit: b,
                                name,
                                setting: fsetting.clone(),
                                id: None,
                            });
                            [false; 8]
                        }
                    };
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
            table.has_named |= !named.is_empty();
            table.named.push(named);
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

    /// This table with its named ALT_FILTER filters resolved by `id_of` (the operator's
    /// filters, [`sluice_proto::classify::local::Program::filter_id`]). An undefined name
    /// is an error naming the setting.
    pub fn resolve_filters(
        &self,
        id_of: impl Fn(&str) -> Option<u32>,
    ) -> Result<Routing, ConfigError> {
        let mut r = self.clone();
        for alt in r.named.iter_mut().flatten() {
            alt.id = Some(id_of(&alt.name).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "{}: no filter {:?} is defined (sluice reads named filters from the \
                     operator's local/config/filters/ and app_parsers/ files)",
                    alt.setting, alt.name
                ))
            })?);
        }
        Ok(r)
    }

    /// Whether an event's destinations need more than the table: selectors or named
    /// filters to run.
    #[inline]
    pub fn needs_eval(&self) -> bool {
        self.selectors.is_some() || self.has_named
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

    /// [`dests`](Self::dests) with what needs the event itself: the named ALT_FILTER
    /// filters, then the selectors. `ask` answers for the classified event, and is asked
    /// only what can still change the set.
    #[inline]
    pub fn dests_selected(
        &self,
        vendor: &[u8],
        product: &[u8],
        severity: u8,
        mut ask: impl FnMut(Ask) -> bool,
    ) -> u64 {
        let sev = usize::from(severity & 7);
        let (mut dests, is_final) = match self.by_vendor.get(vendor).and_then(|p| p.get(product)) {
            Some(&i) => {
                let i = i as usize;
                let mut dests = self.routes[i][sev];
                let mut is_final = self.finals[i] & (1 << sev) != 0;
                for alt in &self.named[i] {
                    let matched = alt.id.is_some_and(|id| ask(Ask::Filter(id)));
                    if matched {
                        // Filtered alternates replace the normal set; several add up.
                        dests = if is_final { dests | alt.bit } else { alt.bit };
                        is_final = true;
                    }
                }
                (dests, is_final)
            }
            None => (self.fallback, false),
        };
        if let Some(s) = &self.selectors
            && !is_final
        {
            dests = s.apply(dests, |a| ask(Ask::Selector(a)));
        }
        dests
    }
}

#[cfg(test)]
mod tests;
