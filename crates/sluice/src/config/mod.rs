//! Typed configuration: built-in defaults → `--config sluice.toml` → `--env-file` → process
//! environment, each layer overriding the one before.
//!
//! Defaults live in exactly one place, the `Default` impls below; `config/sluice.toml`
//! documents every key. TOML tables reject unknown keys, so a typo is a startup error instead
//! of a silently ignored setting. SC4S variable names are mapped onto the same fields by
//! [`Config::apply_env`], with SC4S's defaults and semantics (see the team's `sc4s.md`); a bad
//! value is an error naming the variable, the value and where it came from.
//!
//! Modules: [`sections`] holds the typed settings and their defaults, [`values`] the value
//! syntaxes (sizes, booleans, port lists), [`sc4s`] maps SC4S/SLUICE variables onto the
//! settings through the one [`Env`](crate::env::Env) lookup seam, and [`validate`] the
//! cross-field checks and the listener expansion; [`hec`] turns the `[hec]` settings into the HEC
//! client's; [`service`] what systemd or Docker hand the
//! process (`HOSTNAME`, `NOTIFY_SOCKET`, `WATCHDOG_USEC`, `RUNTIME_DIRECTORY`). [`flatten`] lists
//! every setting by its TOML path and [`origin`] traces each to the layer that set it (`run
//! --check`); both work from serde and the `Env` seam, so a new setting needs nothing there.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod buffer;
mod destinations;
mod flatten;
mod hec;
mod kafka;
mod origin;
mod relay;
mod sc4s;
mod sections;
mod service;
mod validate;
mod values;

pub use buffer::{BufferSettings, EffectiveSize};
pub use destinations::{
    ArchiveConfig, ArchiveMode, DestId, DestKind, DestMode, DestPlan, HecDestination,
    MAX_DESTINATIONS, RoutingConfig,
};
pub use flatten::{Setting, tables};
pub use kafka::{Acks, KafkaDestination, kafka_key};
pub use origin::{EnvVar, Source, Traced, trace};
pub use relay::{RelayDestination, RelayFilter, RelayKind, RelayTransport, relay_key, tls_version};
pub use sc4s::{EnvReport, SUPPORTED_SC4S_VARS};
pub use sections::*;
pub use service::ServiceEnv;
pub use values::{ByteSize, parse_bool, parse_ports};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Toml { path: PathBuf, message: String },
    #[error("{var}={value:?} ({origin}): {reason}")]
    BadEnv {
        var: String,
        value: String,
        origin: String,
        reason: String,
    },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub listen: ListenConfig,
    pub udp: UdpConfig,
    pub tcp: TcpConfig,
    pub stream: StreamConfig,
    pub tls: TlsConfig,
    pub window: WindowConfig,
    pub parse: ParseConfig,
    pub hec: HecConfig,
    pub output: OutputConfig,
    pub fields: FieldsConfig,
    pub admin: AdminConfig,
    pub shutdown: ShutdownConfig,
    /// The HEC destination's disk buffer (`SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_*`).
    pub buffer: BufferSettings,
    /// Additional HEC destinations by lower-case id (`SC4S_DEST_SPLUNK_HEC_<ID>_*`).
    pub destinations: std::collections::BTreeMap<String, HecDestination>,
    /// SC4S's relay destinations by key, `syslog_<id>` or `bsd_<id>` in lower case
    /// (`SC4S_DEST_SYSLOG_<ID>_*`, `SC4S_DEST_BSD_<ID>_*`).
    pub relays: std::collections::BTreeMap<String, RelayDestination>,
    /// Kafka destinations by lower-case id (`SLUICE_DEST_KAFKA_<ID>_*`).
    pub kafka: std::collections::BTreeMap<String, KafkaDestination>,
    /// Which events go to which destinations (`SC4S_DEST_<VENDOR_PRODUCT>_ALTERNATES`, …).
    pub routing: RoutingConfig,
    /// Events written to local files (`SC4S_ARCHIVE_GLOBAL`, `SC4S_GLOBAL_ARCHIVE_MODE`).
    pub archive: ArchiveConfig,
    /// What the service manager hands the process (`HOSTNAME`, `NOTIFY_SOCKET`, …); from the
    /// environment only, never from TOML.
    #[serde(skip)]
    pub service: ServiceEnv,
}

impl Config {
    /// Reads a TOML file over the defaults.
    pub fn from_toml_file(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::from_toml_str(&text).map_err(|message| ConfigError::Toml {
            path: path.to_owned(),
            message,
        })
    }

    pub fn from_toml_str(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Whether events go to Splunk (otherwise to the JSON-lines file).
    pub fn uses_hec(&self) -> bool {
        !self.hec.urls.is_empty()
    }

    /// Whether events for HEC go through the disk buffer.
    pub fn uses_buffer(&self) -> bool {
        self.uses_hec() && self.buffer.enable
    }
}

#[cfg(test)]
mod tests;
