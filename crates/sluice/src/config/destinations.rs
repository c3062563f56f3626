//! Several destinations and which events go where: SC4S's additional HEC destinations
//! (`SC4S_DEST_SPLUNK_HEC_<ID>_*` with `_MODE=GLOBAL|SELECT`), its alternates
//! (`SC4S_DEST_<VENDOR_PRODUCT>_ALTERNATES`, `_ALT_FILTER` + `_FILTERED_ALTERNATES`) and its
//! archive (`SC4S_ARCHIVE_GLOBAL`, `SC4S_DEST_<VENDOR_PRODUCT>_ARCHIVE`).
//!
//! Every `SC4S_DEST_SPLUNK_HEC_<ID>_URL` makes a destination, as SC4S's
//! `lp_dest_alts_global/plugin.py` does; its settings are read by the same code as the
//! default destination's ([`HecConfig::apply_sc4s_env`], [`BufferSettings::apply_env`]), with
//! SC4S's defaults, not the default destination's values. sluice's own delivery settings
//! (`SLUICE_HEC_*`: indexer ack, timeouts, dead letter) apply to every destination.
//!
//! Destination names in the alternates lists are SC4S's: `d_hec_fmt` (or `d_hec`,
//! `d_hec_default`) for the default destination, `d_hec_fmt_<id>` (or `d_hec_<id>`) for
//! the others, `d_archive` for the archive; case does not matter.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::hec::HEC_DEST_SUFFIXES;
use super::sc4s::get;
use super::values::{non_empty, parse_bool};
use super::{BufferSettings, Config, ConfigError, EnvReport, HecConfig};
use crate::env::Env;

/// Which events a HEC destination gets (`SC4S_DEST_SPLUNK_HEC_<ID>_MODE`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DestMode {
    /// Every event (SC4S's default).
    #[default]
    Global,
    /// Only events routed to it by `SC4S_DEST_<VENDOR_PRODUCT>_ALTERNATES` (or filtered
    /// alternates).
    Select,
}

impl DestMode {
    pub(super) fn parse(s: &str) -> Result<DestMode, String> {
        match s.trim().to_ascii_uppercase().as_str() {
            "GLOBAL" => Ok(DestMode::Global),
            "SELECT" => Ok(DestMode::Select),
            _ => Err("expected GLOBAL or SELECT".into()),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DestMode::Global => "GLOBAL",
            DestMode::Select => "SELECT",
        }
    }
}

/// An additional HEC destination (`SC4S_DEST_SPLUNK_HEC_<ID>_*`, `[destinations.<id>]`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct HecDestination {
    /// `…_MODE`: GLOBAL (every event) or SELECT (only events routed to it).
    pub mode: DestMode,
    /// The same settings as `[hec]`, for this destination.
    pub hec: HecConfig,
    /// The same settings as `[buffer]`: its own disk buffer, in its own directory.
    pub buffer: BufferSettings,
}

/// Which events go to which destinations besides the GLOBAL ones.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RoutingConfig {
    /// The default destination gets every event (`SC4S_DEST_SPLUNK_HEC_GLOBAL`, or
    /// `SC4S_DEST_SPLUNK_HEC_DEFAULT_MODE`); `false` is SELECT mode.
    pub default_global: bool,
    /// Extra destinations by `vendor_product` (`SC4S_DEST_<VENDOR_PRODUCT>_ALTERNATES`;
    /// the key `global` is `SC4S_DEST_GLOBAL_ALTERNATES`: every event).
    pub alternates: BTreeMap<String, Vec<String>>,
    /// Filters by `vendor_product` (`SC4S_DEST_<VENDOR_PRODUCT>_ALT_FILTER`, comma
    /// separated): one for every filtered alternate, or one for all of them.
    pub alt_filter: BTreeMap<String, Vec<String>>,
    /// Destinations that replace the normal ones for events matching the filter
    /// (`SC4S_DEST_<VENDOR_PRODUCT>_FILTERED_ALTERNATES`).
    pub filtered_alternates: BTreeMap<String, Vec<String>>,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            default_global: true,
            alternates: BTreeMap::new(),
            alt_filter: BTreeMap::new(),
            filtered_alternates: BTreeMap::new(),
        }
    }
}

/// The layout of the archive files (`SC4S_GLOBAL_ARCHIVE_MODE`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ArchiveMode {
    /// `<dir>/<sourcetype>/<host>/<Y>-<M>-<D>-archive.log`.
    #[default]
    Compliance,
    /// `<dir>/<Y>/<M>/<D>/<vendor>_<product>_<YMDHM>.log`.
    Diode,
}

/// The archive destination (`d_archive`): events written to local files.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ArchiveConfig {
    /// Archive every event (`SC4S_ARCHIVE_GLOBAL`).
    pub global: bool,
    /// Archive the events of these `vendor_product`s (`SC4S_DEST_<VENDOR_PRODUCT>_ARCHIVE`).
    pub vendor_products: Vec<String>,
    /// `SC4S_GLOBAL_ARCHIVE_MODE`.
    pub mode: ArchiveMode,
    /// Where the files go (unset: `$SC4S_VAR/archive` as SC4S writes them, else `./archive`).
    pub dir: Option<PathBuf>,
}

/// Where one destination's events go.
#[derive(Clone, Debug, PartialEq)]
pub enum DestKind {
    /// A HEC destination: the default one (`[hec]`, `[buffer]`) or an additional one.
    Hec {
        hec: Box<HecConfig>,
        buffer: Box<BufferSettings>,
    },
    /// The JSON-lines file (no HEC URL configured).
    File(PathBuf),
    /// The archive files.
    Archive { dir: PathBuf, mode: ArchiveMode },
    /// A syslog relay (`SC4S_DEST_SYSLOG_<ID>_*`, `SC4S_DEST_BSD_<ID>_*`).
    Relay(Box<super::RelayDestination>),
    /// A Kafka destination (`SLUICE_DEST_KAFKA_<ID>_*`).
    Kafka(Box<super::KafkaDestination>),
}

/// Which destination a [`DestPlan`] is: what code asks of it instead of comparing names.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DestId {
    /// The default destination (`[hec]`, `SC4S_DEST_SPLUNK_HEC_DEFAULT_*`; the JSON-lines
    /// file without a HEC URL): the one the receivers batch for.
    Default,
    /// An additional destination, by its upper-case `<ID>` (`SC4S_DEST_SPLUNK_HEC_<ID>_*`).
    Named(String),
    /// The archive files (`d_archive`).
    Archive,
}

impl DestId {
    /// As in the variables: `DEFAULT`, `OTHER`, `ARCHIVE`.
    pub fn var(&self) -> &str {
        match self {
            DestId::Default => "DEFAULT",
            DestId::Named(id) => id,
            DestId::Archive => "ARCHIVE",
        }
    }
}

impl std::fmt::Display for DestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.var())
    }
}

/// One destination of the running daemon, in the order of [`Config::destination_plan`]: its
/// index is its bit in an event's destination set.
#[derive(Clone, Debug, PartialEq)]
pub struct DestPlan {
    /// `default`, the lower-case `<ID>`, or `archive`.
    pub name: String,
    pub id: DestId,
    /// The TOML table of its settings (`hec`, `destinations.other`).
    pub table: String,
    pub mode: DestMode,
    pub kind: DestKind,
}

impl DestPlan {
    /// SC4S's name for it in the alternates lists.
    pub fn sc4s_name(&self) -> String {
        match (&self.id, &self.kind) {
            (DestId::Archive, _) => "d_archive".into(),
            // The name is the relay's key: `syslog_<id>` / `bsd_<id>` / `kafka_<id>`.
            (_, DestKind::Relay(_) | DestKind::Kafka(_)) => format!("d_{}", self.name),
            (DestId::Default, _) => "d_hec_fmt".into(),
            (DestId::Named(_), _) => format!("d_hec_fmt_{}", self.name),
        }
    }

    /// Whether `name` (from an alternates list) names this destination.
    fn answers_to(&self, name: &str) -> bool {
        let n = name.trim().to_ascii_lowercase();
        match (&self.id, &self.kind) {
            (DestId::Archive, _) => n == "d_archive",
            (_, DestKind::Relay(_) | DestKind::Kafka(_)) => n == format!("d_{}", self.name),
            (DestId::Default, _) => matches!(
                n.as_str(),
                "d_hec_fmt" | "d_hec" | "d_hec_default" | "d_hec_fmt_default"
            ),
            (DestId::Named(_), _) => {
                let id = &self.name;
                n == format!("d_hec_fmt_{id}") || n == format!("d_hec_{id}")
            }
        }
    }
}

/// The largest number of destinations (an event's destination set is a 64-bit set).
pub const MAX_DESTINATIONS: usize = 64;

impl Config {
    /// Every destination, in a stable order: the default one (HEC or the file), the
    /// additional HEC destinations by id, then the archive when anything is archived.
    pub fn destination_plan(&self) -> Vec<DestPlan> {
        let mut out = Vec::new();
        let default_mode = if self.routing.default_global {
            DestMode::Global
        } else {
            DestMode::Select
        };
        out.push(DestPlan {
            name: "default".into(),
            id: DestId::Default,
            table: "hec".into(),
            mode: default_mode,
            kind: if self.uses_hec() {
                DestKind::Hec {
                    hec: Box::new(self.hec.clone()),
                    buffer: Box::new(self.buffer.clone()),
                }
            } else {
                DestKind::File(self.output.file.clone())
            },
        });
        for (id, d) in &self.destinations {
            out.push(DestPlan {
                name: id.to_ascii_lowercase(),
                id: DestId::Named(id.to_ascii_uppercase()),
                table: format!("destinations.{id}"),
                mode: d.mode,
                kind: DestKind::Hec {
                    hec: Box::new(d.hec.clone()),
                    buffer: Box::new(d.buffer.clone()),
                },
            });
        }
        for (key, r) in &self.relays {
            out.push(DestPlan {
                name: key.clone(),
                id: DestId::Named(
                    key.split_once('_')
                        .map_or(key.as_str(), |(_, id)| id)
                        .to_ascii_uppercase(),
                ),
                table: format!("relays.{key}"),
                mode: r.mode,
                kind: DestKind::Relay(Box::new(r.clone())),
            });
        }
        for (id, k) in &self.kafka {
            out.push(DestPlan {
                name: super::kafka_key(id),
                id: DestId::Named(id.to_ascii_uppercase()),
                table: format!("kafka.{id}"),
                mode: k.mode,
                kind: DestKind::Kafka(Box::new(k.clone())),
            });
        }
        if self.archive.global || !self.archive.vendor_products.is_empty() {
            out.push(DestPlan {
                name: "archive".into(),
                id: DestId::Archive,
                table: "archive".into(),
                // Routed explicitly (SC4S's `sc4s-lp-archive` topic), never as a GLOBAL one.
                mode: DestMode::Select,
                kind: DestKind::Archive {
                    dir: self.archive_dir(),
                    mode: self.archive.mode,
                },
            });
        }
        out
    }

    /// `archive.dir`, else `$SC4S_VAR/archive` as SC4S writes it, else `./archive`.
    pub fn archive_dir(&self) -> PathBuf {
        self.archive
            .dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("./archive"))
    }

    /// The index of the destination `name` (an SC4S destination name) names, or an error
    /// naming `setting`.
    pub fn resolve_destination(
        plan: &[DestPlan],
        setting: &str,
        name: &str,
    ) -> Result<usize, ConfigError> {
        plan.iter().position(|d| d.answers_to(name)).ok_or_else(|| {
            let known: Vec<String> = plan.iter().map(DestPlan::sc4s_name).collect();
            ConfigError::Invalid(format!(
                "{setting}: unknown destination {name:?} (configured: {}; an additional HEC \
                 destination needs SC4S_DEST_SPLUNK_HEC_<ID>_URL, d_syslog_<id> / d_bsd_<id> \
                 SC4S_DEST_SYSLOG_<ID>_HOST / SC4S_DEST_BSD_<ID>_HOST, d_kafka_<id> \
                 SLUICE_DEST_KAFKA_<ID>_BROKERS, the archive d_archive needs \
                 SC4S_ARCHIVE_GLOBAL or an SC4S_DEST_<VENDOR_PRODUCT>_ARCHIVE)",
                known.join(", ")
            ))
        })
    }

    /// The destinations, routing and archive variables.
    pub(super) fn apply_destinations_env(
        &mut self,
        env: &Env,
        report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        if let Some(v) = get(env, "SC4S_VAR", non_empty)?
            && self.archive.dir.is_none()
        {
            self.archive.dir = Some(Path::new(v.trim()).join("archive"));
        }
        // The default destination's mode: SC4S_DEST_SPLUNK_HEC_GLOBAL wins over _MODE.
        if let Some(m) = get(env, "SC4S_DEST_SPLUNK_HEC_DEFAULT_MODE", DestMode::parse)? {
            self.routing.default_global = m == DestMode::Global;
        }
        if let Some(g) = get(env, "SC4S_DEST_SPLUNK_HEC_GLOBAL", parse_bool)? {
            self.routing.default_global = g;
        }

        let mut ids: Vec<String> = self
            .destinations
            .keys()
            .map(|k| k.to_ascii_uppercase())
            .collect();
        for (name, _) in env.with_prefix("SC4S_DEST_SPLUNK_HEC_") {
            if let Some(id) = name
                .strip_prefix("SC4S_DEST_SPLUNK_HEC_")
                .and_then(|r| r.strip_suffix("_URL"))
                && !id.is_empty()
                && id != "DEFAULT"
                && !ids.iter().any(|i| i == id)
            {
                ids.push(id.to_owned());
            }
        }
        for id in ids {
            let key = id.to_ascii_lowercase();
            let entry = match self.destinations.remove(&key) {
                Some(d) => d,
                None => self.new_destination(),
            };
            let mut d = entry;
            d.hec.apply_sc4s_env(env, &id)?;
            if let Some(m) = get(
                env,
                &format!("SC4S_DEST_SPLUNK_HEC_{id}_MODE"),
                DestMode::parse,
            )? {
                d.mode = m;
            }
            let workers = d.hec.workers;
            d.buffer.apply_env(env, &id, workers, report)?;
            // Its own directory: beside the default destination's unless set.
            if env
                .get(&format!("SC4S_DEST_SPLUNK_HEC_{id}_DISKBUFF_DIR"))
                .is_none()
                && (d.buffer.dir == self.buffer.dir
                    || d.buffer.dir == Path::new(sluice_buffer::DEFAULT_DIR))
            {
                d.buffer.dir = sibling(&self.buffer.dir, &key);
            }
            // Its own dead-letter file: a directory of its own under the default one's.
            if d.hec.dead_letter_dir == self.hec.dead_letter_dir {
                let base = self
                    .hec
                    .dead_letter_dir
                    .clone()
                    .unwrap_or_else(|| super::hec::default_dead_letter_dir(None));
                d.hec.dead_letter_dir = Some(base.join(&key));
            }
            self.destinations.insert(key, d);
        }

        for (name, value) in env.with_prefix("SC4S_DEST_") {
            if name.starts_with("SC4S_DEST_SPLUNK_") {
                continue;
            }
            let rest = &name["SC4S_DEST_".len()..];
            let list = |sep: &[char]| -> Vec<String> {
                value
                    .value
                    .split(sep)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            };
            if let Some(vp) = rest.strip_suffix("_FILTERED_ALTERNATES") {
                self.routing
                    .filtered_alternates
                    .insert(vp.to_ascii_lowercase(), list(&[',', ' ']));
            } else if let Some(vp) = rest.strip_suffix("_ALT_FILTER") {
                // Filters may hold spaces and commas (`level(info, debug)`): split on the
                // commas between them only.
                self.routing
                    .alt_filter
                    .insert(vp.to_ascii_lowercase(), split_filters(&value.value));
            } else if let Some(vp) = rest.strip_suffix("_ALTERNATES") {
                self.routing
                    .alternates
                    .insert(vp.to_ascii_lowercase(), list(&[',', ' ']));
            } else if let Some(vp) = rest.strip_suffix("_ARCHIVE")
                && get(env, name, parse_bool)? == Some(true)
            {
                let vp = vp.to_ascii_lowercase();
                if !self.archive.vendor_products.contains(&vp) {
                    self.archive.vendor_products.push(vp);
                }
            }
        }
        self.apply_relays_env(env, report)?;
        self.apply_kafka_env(env, report)?;
        if let Some(g) = get(env, "SC4S_ARCHIVE_GLOBAL", parse_bool)? {
            self.archive.global = g;
        }
        if let Some(m) = get(env, "SC4S_GLOBAL_ARCHIVE_MODE", |v| {
            match v.trim().to_ascii_lowercase().as_str() {
                "compliance" | "" => Ok(ArchiveMode::Compliance),
                "diode" => Ok(ArchiveMode::Diode),
                _ => Err("expected compliance or diode".to_string()),
            }
        })? {
            self.archive.mode = m;
        }
        Ok(())
    }

    /// A new additional destination: SC4S's defaults for its own settings, sluice's
    /// delivery settings (`SLUICE_HEC_*`) as the default destination has them.
    fn new_destination(&self) -> HecDestination {
        let h = &self.hec;
        HecDestination {
            mode: DestMode::Global,
            hec: HecConfig {
                indexer_ack: h.indexer_ack,
                ack_poll_interval: h.ack_poll_interval,
                ack_timeout: h.ack_timeout,
                connect_timeout: h.connect_timeout,
                body_timeout: h.body_timeout,
                slow_timeout_factor: h.slow_timeout_factor,
                resend_before_invalid: h.resend_before_invalid,
                dead_letter_dir: h.dead_letter_dir.clone(),
                dead_letter_max_bytes: h.dead_letter_max_bytes,
                ..HecConfig::default()
            },
            buffer: BufferSettings {
                dir: self.buffer.dir.clone(),
                ..BufferSettings::default()
            },
        }
    }

    /// Whether `name` is a destination or routing variable sluice reads.
    pub(super) fn reads_destination_var(&self, name: &str) -> bool {
        if let Some(rest) = name.strip_prefix("SC4S_DEST_SPLUNK_HEC_") {
            let configured = |id: &str| {
                id == "DEFAULT" || self.destinations.contains_key(&id.to_ascii_lowercase())
            };
            return HEC_DEST_SUFFIXES.iter().any(|s| {
                rest.strip_suffix(s)
                    .and_then(|r| r.strip_suffix('_'))
                    .is_some_and(configured)
            });
        }
        if Config::reads_relay_var(name) {
            return true;
        }
        let Some(rest) = name.strip_prefix("SC4S_DEST_") else {
            return false;
        };
        !rest.starts_with("SPLUNK_")
            && [
                "_FILTERED_ALTERNATES",
                "_ALT_FILTER",
                "_ALTERNATES",
                "_ARCHIVE",
            ]
            .iter()
            .any(|s| rest.ends_with(s))
    }

    /// Destination checks: every destination's settings, distinct buffer directories,
    /// known destination names and filters in the routing.
    pub(super) fn validate_destinations(&self) -> Result<(), ConfigError> {
        let plan = self.destination_plan();
        if plan.len() > MAX_DESTINATIONS {
            return Err(ConfigError::Invalid(format!(
                "{} destinations configured; at most {MAX_DESTINATIONS}",
                plan.len()
            )));
        }
        let mut dirs: Vec<(&Path, &str)> = Vec::new();
        for d in &plan {
            if let DestKind::Kafka(k) = &d.kind {
                k.validate(&d.name, d.id.var())?;
                if k.buffer.enable {
                    if let Some((_, other)) = dirs.iter().find(|(p, _)| *p == k.buffer.dir) {
                        return Err(ConfigError::Invalid(format!(
                            "destinations {other} and {} use the same disk buffer directory \
                             {}; set SLUICE_DEST_KAFKA_{}_DISKBUFF_DIR",
                            d.name,
                            k.buffer.dir.display(),
                            d.id
                        )));
                    }
                    dirs.push((&k.buffer.dir, &d.name));
                }
            }
            if let DestKind::Relay(r) = &d.kind {
                r.validate(&d.name, d.id.var())?;
                if r.buffer.enable {
                    if let Some((_, other)) = dirs.iter().find(|(p, _)| *p == r.buffer.dir) {
                        return Err(ConfigError::Invalid(format!(
                            "destinations {other} and {} use the same disk buffer directory \
                             {}; set {}DISKBUFF_DIR",
                            d.name,
                            r.buffer.dir.display(),
                            super::RelayDestination::var_prefix(r.kind, d.id.var())
                        )));
                    }
                    dirs.push((&r.buffer.dir, &d.name));
                }
            }
            if let DestKind::Hec { hec, buffer } = &d.kind {
                if d.id != DestId::Default {
                    if hec.urls.is_empty() {
                        return Err(ConfigError::Invalid(format!(
                            "destination {}: SC4S_DEST_SPLUNK_HEC_{}_URL / {}.hec.urls is empty",
                            d.name, d.id, d.table
                        )));
                    }
                    buffer.validate().map_err(|e| {
                        ConfigError::Invalid(format!("destination {}: {e}", d.name))
                    })?;
                }
                if buffer.enable {
                    if let Some((_, other)) = dirs.iter().find(|(p, _)| *p == buffer.dir) {
                        return Err(ConfigError::Invalid(format!(
                            "destinations {other} and {} use the same disk buffer directory \
                             {}; set SC4S_DEST_SPLUNK_HEC_{}_DISKBUFF_DIR",
                            d.name,
                            buffer.dir.display(),
                            d.id
                        )));
                    }
                    dirs.push((&buffer.dir, &d.name));
                }
            }
        }
        crate::routing::Routing::build(self, &plan).map(|_| ())
    }
}

/// `dir` with `-<id>` appended to its last component: `/var/lib/sc4s/buffer-other`.
pub(super) fn sibling(dir: &Path, id: &str) -> PathBuf {
    let mut s = dir.as_os_str().to_owned();
    s.push(format!("-{id}"));
    PathBuf::from(s)
}

/// Comma-separated filters, commas inside parentheses belonging to the filter.
fn split_filters(v: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in v.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}
