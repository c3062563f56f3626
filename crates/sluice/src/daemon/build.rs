//! The composition root: one place turns a loaded configuration, with the classifier's
//! sources (the context files), into what runs — the receivers' [`Processor`], the listener
//! [`Topology`], the destinations and the routing table between them, each built once. `run`
//! starts a [`Blueprint`], a reload swaps one in, `run --check` builds one and reports what
//! failed: they reject a bad configuration with the same message because they build it the
//! same way.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use sluice_proto::batch::BatchPolicy;
use sluice_proto::classify::{
    BuildError, Classifier, Settings, VendorSelection, context::ContextFiles,
};
use sluice_proto::event::{EncodeOptions, IndexedFields};
use sluice_proto::time::Zone;

use crate::config::{Config, DestPlan, EnvReport};
use crate::env::Env;
use crate::pipeline::Processor;
use crate::routing::Routing;
use crate::topology::Topology;

/// Where the configuration comes from: `--config` (TOML) and `--env-file`, over the
/// defaults and under the process environment.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub config: Option<PathBuf>,
    pub env_file: Option<PathBuf>,
}

impl Sources {
    /// Loads the layered configuration: defaults → TOML → env_file → environment.
    pub fn load(&self) -> anyhow::Result<(Config, EnvReport)> {
        self.load_from(&Env::load(self.env_file.as_deref())?)
    }

    /// [`load`](Self::load) over an [`Env`] already loaded (from the env_file and the
    /// process).
    pub fn load_from(&self, env: &Env) -> anyhow::Result<(Config, EnvReport)> {
        let mut config = match &self.config {
            Some(path) => Config::from_toml_file(path)?,
            None => Config::default(),
        };
        let report = config.apply_env(env)?;
        check_loaded(&config)?;
        Ok((config, report))
    }
}

/// The checks beyond the settings' own syntax: cross-field rules, the HEC URLs and headers,
/// the time zone.
pub(crate) fn check_loaded(config: &Config) -> anyhow::Result<()> {
    config.validate()?;
    if config.uses_hec() {
        // Builds the HEC client's settings, TLS files included, so `--check` fails on them too.
        config.hec.client_config()?;
    }
    Zone::from_name(&config.parse.default_timezone).map_err(|e| {
        anyhow::anyhow!(
            "SC4S_DEFAULT_TIMEZONE / parse.default_timezone {:?}: {e}",
            config.parse.default_timezone
        )
    })?;
    Ok(())
}

/// What one configuration describes, built and checked; nothing is bound or started.
#[derive(Debug)]
pub struct Blueprint {
    /// The ports and the TLS setup.
    pub topology: Topology,
    /// The destinations, in order: destination `i` is bit `i` of an event's destinations.
    pub destinations: Vec<DestPlan>,
    /// Which destinations each event goes to.
    pub routing: Arc<Routing>,
    /// Parse, classify, route, encode: what every receiver runs.
    pub processor: Processor,
}

impl Blueprint {
    /// Builds what `config` describes: reads the context files, builds the classifier, the
    /// routing table and the listener topology. Errors name the setting or file.
    pub fn build(config: &Config) -> anyhow::Result<Blueprint> {
        Blueprint::build_on(config, config.destination_plan())
    }

    /// [`build`](Self::build) with the destinations laid out on `destinations`' bits (a
    /// reload keeps each running destination's bit: see
    /// [`DestinationSet::align`](crate::output::DestinationSet::align)).
    pub fn build_on(config: &Config, destinations: Vec<DestPlan>) -> anyhow::Result<Blueprint> {
        let topology = Topology::from_config(config)?;
        let routing = Arc::new(Routing::build(config, &destinations)?);
        let processor = processor(config, &routing, &destinations)?;
        Ok(Blueprint {
            topology,
            destinations,
            routing,
            processor,
        })
    }
}

/// This machine's name; `from_env` is `HOSTNAME` (config.service), for when /proc is not
/// readable.
fn hostname(from_env: Option<&str>) -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| from_env.map(str::to_owned))
        .unwrap_or_else(|| "localhost".into())
}

/// SC4S's context directory when none is configured: inside SC4S's container, then SC4S's
/// host mount.
pub(crate) fn default_context_dir() -> Option<std::path::PathBuf> {
    [
        "/etc/syslog-ng/conf.d/local/context",
        "/opt/sc4s/local/context",
    ]
    .into_iter()
    .map(std::path::PathBuf::from)
    .find(|p| p.is_dir())
}

/// The receivers' processor for `config`, with `routing` (the table of [`Blueprint`]).
fn processor(
    config: &Config,
    routing: &Arc<Routing>,
    plan: &[DestPlan],
) -> anyhow::Result<Processor> {
    let zone = Zone::from_name(&config.parse.default_timezone).map_err(|e| {
        anyhow::anyhow!(
            "SC4S_DEFAULT_TIMEZONE={:?}: {e}",
            config.parse.default_timezone
        )
    })?;
    let context_dir = config
        .parse
        .context_dir
        .clone()
        .or_else(default_context_dir);
    let mut files = match &context_dir {
        Some(dir) => {
            tracing::info!(dir = %dir.display(), "reading SC4S context files");
            ContextFiles::read_dir(dir).map_err(|e| anyhow::anyhow!("SC4S context files: {e}"))?
        }
        None => ContextFiles::default(),
    };
    if let Some(path) = &config.parse.metadata_csv {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read metadata csv {}", path.display()))?;
        files.splunk_metadata = Some((path.display().to_string(), text));
    }
    let app_parsers = crate::app_parsers::load(config, context_dir.as_deref())?;
    crate::app_parsers::log(&app_parsers);
    let routing = &crate::app_parsers::route_with(routing, &app_parsers, plan)?;
    let settings = Settings {
        listeners: config
            .listeners()?
            .into_iter()
            .filter(|spec| spec.id != "DEFAULT")
            .map(|spec| spec.id.clone())
            .collect(),
        set_source_as_sc4s: config.parse.set_source_as_sc4s,
        zone: zone.clone(),
        vendors: VendorSelection::parse(&config.parse.vendors),
        options: config.parse.vendor_options.clone(),
        app_parsers: app_parsers.program.clone(),
        loghost: config
            .fields
            .loghost
            .clone()
            .unwrap_or_else(|| hostname(config.service.hostname.as_deref())),
    };
    let mut tables = Classifier::new(files, &settings).map_err(|e| match e {
        BuildError::UnknownVendor { .. } => anyhow::anyhow!("parse.vendors (SLUICE_VENDORS): {e}"),
        e => anyhow::anyhow!("SC4S context files: {e}"),
    })?;
    for spec in config.listeners()? {
        if tables.ignored_listeners().contains(&spec.id) {
            tracing::warn!(
                id = %spec.id,
                "{} does not name a vendor and product (VENDOR_PRODUCT[_EXTRA]); only the \
                 parsers that know this listener id (as SC4S's .source.s_<ID>) treat its events \
                 as their own",
                spec.setting
            );
        }
    }
    for w in tables.warnings() {
        tracing::warn!("{w}");
    }
    // Opened once, at start (`open_name_cache`); a reload that turns it on finds none.
    let names = config
        .parse
        .use_name_cache
        .then(crate::name_cache::installed)
        .flatten();
    if let Some(n) = &names {
        tables.set_name_cache(n.clone());
    } else if config.parse.use_name_cache {
        tracing::warn!("SC4S_USE_NAME_CACHE was off at start: it takes effect at the next start");
    }
    let vps = config
        .parse
        .vendor_options
        .use_vps_cache
        .then(crate::vps_cache::installed)
        .flatten();
    if let Some(c) = &vps {
        tables.set_vps_cache(c.clone());
    } else if config.parse.vendor_options.use_vps_cache {
        tracing::warn!("SC4S_USE_VPS_CACHE was off at start: it takes effect at the next start");
    }
    let encode = EncodeOptions {
        indexed_fields: IndexedFields::from_sc4s(&config.fields.indexed_fields),
        loghost: config
            .fields
            .loghost
            .clone()
            .unwrap_or_else(|| hostname(config.service.hostname.as_deref())),
        container_host: config.fields.container_host.clone(),
        store_raw_message: config.parse.store_raw_message,
    };
    Ok(Processor {
        zone,
        tables,
        encode,
        batch: BatchPolicy {
            max_events: config.hec.batch_lines,
            max_bytes: config.hec.batch_bytes.0 as usize,
            timeout: config.hec.batch_timeout,
        },
        routing: (!routing.is_uniform()).then(|| Arc::clone(routing)),
        groups: Default::default(),
        names,
        vps,
        // The extra encodings (relay lines, Kafka records) the destinations need.
        encodings: crate::output::Encodings::from_plan(plan, routing.fallback()).0,
    })
}

/// Registers listener ids with `processor`'s tables (each id's vendor and product metadata),
/// beyond those of the configuration it was built from.
pub(crate) fn register_listeners<'a>(
    processor: &mut Processor,
    ids: impl IntoIterator<Item = &'a str>,
) {
    for id in ids {
        if id != "DEFAULT" {
            processor.tables.add_listener(id);
        }
    }
}
