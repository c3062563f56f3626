//! SC4S's relay destinations: `SC4S_DEST_SYSLOG_<ID>_*` (RFC 5424) and `SC4S_DEST_BSD_<ID>_*`
//! (RFC 3164), and their `[relays.<id>]` tables.
//!
//! Every `SC4S_DEST_SYSLOG_<ID>_HOST` / `SC4S_DEST_BSD_<ID>_HOST` makes a destination, as
//! SC4S's `dest_syslog`/`dest_bsd` plugins do, with their defaults: TCP, port 601 for framed
//! RFC 5424 (`_IETF=yes`, the default) and 514 otherwise, GLOBAL mode, a disk buffer on
//! (`_DISKBUFF_*`, sized as SC4S sizes it), TLS with `_TLS_VERIFY=yes`. The filter
//! (`SC4S_DEST_<SYSLOG|BSD>_<ID>_FILTER`) is a syslog-ng filter in SC4S; sluice honours the
//! two forms SC4S's own configuration uses (none, and BSD's default `"${MSG}" ne ""`, which
//! drops events with an empty MESSAGE) and refuses any other at startup, naming the variable.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::sc4s::{get, set};
use super::values::{millis, non_empty, parse_bool};
use super::{BufferSettings, ConfigError, DestMode, EnvReport};
use crate::env::Env;

/// The line a relay sends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum RelayKind {
    /// RFC 5424 (`SC4S_DEST_SYSLOG_<ID>_*`, SC4S's `d_syslog_<id>`).
    #[default]
    Syslog,
    /// RFC 3164 (`SC4S_DEST_BSD_<ID>_*`, SC4S's `d_bsd_<id>`).
    Bsd,
}

impl RelayKind {
    /// `SYSLOG` or `BSD`, as in the variables.
    pub fn var_word(self) -> &'static str {
        match self {
            RelayKind::Syslog => "SYSLOG",
            RelayKind::Bsd => "BSD",
        }
    }

    /// `syslog` or `bsd`: SC4S's destination names are `d_<word>_<id>`.
    pub fn name_word(self) -> &'static str {
        match self {
            RelayKind::Syslog => "syslog",
            RelayKind::Bsd => "bsd",
        }
    }
}

/// How a relay reaches its target (`_TRANSPORT`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum RelayTransport {
    Udp,
    #[default]
    Tcp,
    Tls,
}

impl RelayTransport {
    fn parse(s: &str) -> Result<RelayTransport, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "udp" => Ok(RelayTransport::Udp),
            "tcp" => Ok(RelayTransport::Tcp),
            "tls" => Ok(RelayTransport::Tls),
            _ => Err("expected udp, tcp or tls".into()),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RelayTransport::Udp => "udp",
            RelayTransport::Tcp => "tcp",
            RelayTransport::Tls => "tls",
        }
    }
}

/// Which events a relay drops (`_FILTER`): the forms sluice can honour.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum RelayFilter {
    /// Every event routed to it.
    #[default]
    None,
    /// `"${MSG}" ne ""`: events with an empty MESSAGE are not sent (BSD's default in SC4S).
    NonEmptyMessage,
}

/// One relay destination.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RelayDestination {
    pub kind: RelayKind,
    /// `_HOST`: name or address of the target.
    pub host: String,
    /// `_PORT`. Unset: 601 for framed RFC 5424, else 514.
    pub port: Option<u16>,
    /// `_TRANSPORT`: udp, tcp (default) or tls.
    pub transport: RelayTransport,
    /// `_IETF` (syslog only): RFC 6587 octet-counted frames over TCP/TLS, syslog-ng's
    /// `syslog()` driver. `false`: `network(flags(syslog-protocol))`, one line per event.
    pub ietf: bool,
    /// `_MODE`: GLOBAL (every event) or SELECT (only events routed to it).
    pub mode: DestMode,
    /// `_FILTER`.
    pub filter: RelayFilter,
    /// `_TLS_VERIFY`: check the target's certificate (default yes).
    pub tls_verify: bool,
    /// A CA file (PEM) to trust beside the system's roots (sluice's own setting:
    /// `SLUICE_DEST_<SYSLOG|BSD>_<ID>_TLS_CA_FILE`).
    pub tls_ca_file: Option<PathBuf>,
    /// `_SSL_VERSION`: the one TLS version to use (`tlsv1_2`, `tlsv1_3`).
    pub ssl_version: Option<String>,
    /// `_CIPHER_SUITE`: an OpenSSL cipher string.
    pub cipher_suite: Option<String>,
    /// Connecting (and the TLS handshake) gives up after this (milliseconds).
    #[serde(with = "millis")]
    pub connect_timeout: Duration,
    /// A write that makes no progress for this long fails the connection (milliseconds).
    #[serde(with = "millis")]
    pub write_timeout: Duration,
    /// `_DISKBUFF_*`: its disk buffer, in its own directory.
    pub buffer: BufferSettings,
}

impl Default for RelayDestination {
    fn default() -> Self {
        RelayDestination {
            kind: RelayKind::Syslog,
            host: String::new(),
            port: None,
            transport: RelayTransport::Tcp,
            ietf: true,
            mode: DestMode::Global,
            filter: RelayFilter::None,
            tls_verify: true,
            tls_ca_file: None,
            ssl_version: None,
            cipher_suite: None,
            connect_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(30),
            buffer: BufferSettings::default(),
        }
    }
}

/// The variable suffixes of a relay destination sluice reads.
pub const RELAY_SUFFIXES: &[&str] = &[
    "HOST",
    "PORT",
    "TRANSPORT",
    "IETF",
    "MODE",
    "FILTER",
    "TLS_VERIFY",
    "SSL_VERSION",
    "CIPHER_SUITE",
    "DISKBUFF_ENABLE",
    "DISKBUFF_RELIABLE",
    "DISKBUFF_MEMBUFSIZE",
    "DISKBUFF_DISKBUFSIZE",
    "DISKBUFF_DIR",
    // syslog-ng's in-memory queue; sluice's input windows bound memory instead.
    "LOG_FIFO_SIZE",
];

impl RelayDestination {
    /// The port in force.
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(match (self.kind, self.ietf) {
            (RelayKind::Syslog, true) => 601,
            _ => 514,
        })
    }

    /// Octet-counted frames (RFC 6587) on a stream: syslog-ng's `syslog()` driver.
    pub fn framed(&self) -> bool {
        self.kind == RelayKind::Syslog && self.ietf && self.transport != RelayTransport::Udp
    }

    /// The prefix of its variables: `SC4S_DEST_SYSLOG_<ID>_`.
    pub fn var_prefix(kind: RelayKind, id: &str) -> String {
        format!("SC4S_DEST_{}_{id}_", kind.var_word())
    }

    /// Overlays `SC4S_DEST_<KIND>_<ID>_*`.
    fn apply_env(
        &mut self,
        env: &Env,
        id: &str,
        report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        let p = RelayDestination::var_prefix(self.kind, id);
        let var = |s: &str| format!("{p}{s}");
        if let Some(h) = get(env, &var("HOST"), non_empty)? {
            self.host = h.trim().to_owned();
        }
        if let Some(port) = get(env, &var("PORT"), |s| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| "expected a port number (1-65535)".to_string())
        })? {
            self.port = Some(port);
        }
        set(
            env,
            &var("TRANSPORT"),
            RelayTransport::parse,
            &mut self.transport,
        )?;
        if self.kind == RelayKind::Syslog {
            set(env, &var("IETF"), parse_bool, &mut self.ietf)?;
        }
        set(env, &var("MODE"), DestMode::parse, &mut self.mode)?;
        let default_filter = match self.kind {
            RelayKind::Bsd => RelayFilter::NonEmptyMessage,
            RelayKind::Syslog => RelayFilter::None,
        };
        self.filter = match get(env, &var("FILTER"), |s| Ok(s.trim().to_owned()))? {
            None => default_filter,
            Some(f) if f.is_empty() => default_filter,
            Some(f) => parse_filter(&f).map_err(|reason| ConfigError::BadEnv {
                var: var("FILTER"),
                value: f.clone(),
                origin: env
                    .get(&var("FILTER"))
                    .map(|v| v.origin.to_string())
                    .unwrap_or_default(),
                reason,
            })?,
        };
        set(env, &var("TLS_VERIFY"), parse_bool, &mut self.tls_verify)?;
        if let Some(v) = get(env, &var("SSL_VERSION"), non_empty)? {
            self.ssl_version = Some(v);
        }
        if let Some(v) = get(env, &var("CIPHER_SUITE"), non_empty)? {
            self.cipher_suite = Some(v);
        }
        if let Some(f) = get(
            env,
            &format!("SLUICE_DEST_{}_{id}_TLS_CA_FILE", self.kind.var_word()),
            non_empty,
        )? {
            self.tls_ca_file = Some(PathBuf::from(f));
        }
        self.buffer.apply_env_prefixed(env, &p, 1, report)?;
        if env.get(&var("LOG_FIFO_SIZE")).is_some() {
            report.notes.push(format!(
                "{p}LOG_FIFO_SIZE has no effect: syslog-ng's queue is sluice's input window \
                 (SC4S_SOURCE_*_IW_SIZE) and the disk buffer"
            ));
        }
        Ok(())
    }

    /// Range checks; errors name the destination's settings.
    pub fn validate(&self, name: &str, id: &str) -> Result<(), ConfigError> {
        let p = RelayDestination::var_prefix(self.kind, id);
        if self.host.trim().is_empty() {
            return Err(ConfigError::Invalid(format!(
                "destination {name}: {p}HOST / relays.{}.host is empty",
                id.to_ascii_lowercase()
            )));
        }
        if let Some(v) = &self.ssl_version {
            tls_version(v).map_err(|e| {
                ConfigError::Invalid(format!("destination {name}: {p}SSL_VERSION={v:?}: {e}"))
            })?;
        }
        self.buffer
            .validate()
            .map_err(|e| ConfigError::Invalid(format!("destination {name}: {e}")))
    }
}

/// syslog-ng's `ssl-version()` words rustls can serve.
pub fn tls_version(v: &str) -> Result<&'static rustls::SupportedProtocolVersion, String> {
    match v.trim().to_ascii_lowercase().replace('.', "_").as_str() {
        "tlsv1_2" => Ok(&rustls::version::TLS12),
        "tlsv1_3" => Ok(&rustls::version::TLS13),
        "sslv3" | "tlsv1" | "tlsv1_0" | "tlsv1_1" => {
            Err("TLS 1.1 and older are not supported; use tlsv1_2 or tlsv1_3".into())
        }
        _ => Err("expected tlsv1_2 or tlsv1_3".into()),
    }
}

/// The `_FILTER` forms sluice honours.
fn parse_filter(f: &str) -> Result<RelayFilter, String> {
    let squeezed: String = f.chars().filter(|c| !c.is_whitespace()).collect();
    match squeezed.as_str() {
        r#""${MSG}"ne"""# | r#""${MESSAGE}"ne"""# | r#"'${MSG}'ne''"# => {
            Ok(RelayFilter::NonEmptyMessage)
        }
        _ => Err(
            "sluice supports no syslog-ng filter here but `\"${MSG}\" ne \"\"` (SC4S's BSD \
             default); route events with SC4S_DEST_<VENDOR_PRODUCT>_ALTERNATES and _MODE=SELECT \
             instead"
                .into(),
        ),
    }
}

impl super::Config {
    /// Every `SC4S_DEST_SYSLOG_<ID>_HOST` and `SC4S_DEST_BSD_<ID>_HOST`, and the tables.
    pub(super) fn apply_relays_env(
        &mut self,
        env: &Env,
        report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        let mut found: Vec<(String, RelayKind, String)> = Vec::new();
        for kind in [RelayKind::Syslog, RelayKind::Bsd] {
            let prefix = format!("SC4S_DEST_{}_", kind.var_word());
            for (name, _) in env.with_prefix(&prefix) {
                if let Some(id) = name
                    .strip_prefix(&prefix)
                    .and_then(|r| r.strip_suffix("_HOST"))
                    .filter(|id| !id.is_empty())
                {
                    found.push((relay_key(kind, id), kind, id.to_owned()));
                }
            }
        }
        for (key, kind, id) in found {
            let mut d = self
                .relays
                .remove(&key)
                .unwrap_or_else(|| RelayDestination {
                    kind,
                    buffer: BufferSettings {
                        dir: self.buffer.dir.clone(),
                        ..BufferSettings::default()
                    },
                    ..RelayDestination::default()
                });
            d.kind = kind;
            d.apply_env(env, &id, report)?;
            if env
                .get(&format!(
                    "{}DISKBUFF_DIR",
                    RelayDestination::var_prefix(kind, &id)
                ))
                .is_none()
                && (d.buffer.dir == self.buffer.dir
                    || d.buffer.dir == std::path::Path::new(sluice_buffer::DEFAULT_DIR))
            {
                d.buffer.dir = super::destinations::sibling(&self.buffer.dir, &key);
            }
            self.relays.insert(key, d);
        }
        Ok(())
    }

    /// Whether `name` is a relay variable sluice reads.
    pub(super) fn reads_relay_var(name: &str) -> bool {
        ["SC4S_DEST_SYSLOG_", "SC4S_DEST_BSD_"].iter().any(|p| {
            name.strip_prefix(p).is_some_and(|rest| {
                RELAY_SUFFIXES.iter().any(|s| {
                    rest.strip_suffix(s)
                        .is_some_and(|r| r.len() > 1 && r.ends_with('_'))
                })
            })
        })
    }
}

/// The key of a relay in `[relays]` and its destination name: `syslog_<id>` / `bsd_<id>`,
/// lower case, so that SC4S's `d_syslog_<id>` names it.
pub fn relay_key(kind: RelayKind, id: &str) -> String {
    format!("{}_{}", kind.name_word(), id.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn load(vars: &[(&str, &str)]) -> Result<(Config, EnvReport), ConfigError> {
        let mut env = Env::default();
        env.merge_process(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut c = Config::default();
        let r = c.apply_env(&env)?;
        Ok((c, r))
    }

    #[test]
    fn sc4s_defaults() {
        let (c, r) = load(&[
            ("SC4S_DEST_SYSLOG_SIEM_HOST", "siem.example"),
            ("SC4S_DEST_BSD_OLD_HOST", "old.example"),
        ])
        .unwrap();
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        let s = &c.relays["syslog_siem"];
        assert_eq!(s.kind, RelayKind::Syslog);
        assert_eq!(
            (s.host.as_str(), s.port(), s.transport),
            ("siem.example", 601, RelayTransport::Tcp)
        );
        assert!(s.framed());
        assert_eq!(s.mode, DestMode::Global);
        assert_eq!(s.filter, RelayFilter::None);
        assert!(s.buffer.enable && !s.buffer.reliable);
        let b = &c.relays["bsd_old"];
        assert_eq!((b.port(), b.framed()), (514, false));
        assert_eq!(b.filter, RelayFilter::NonEmptyMessage);
        assert_ne!(s.buffer.dir, b.buffer.dir);
        assert_ne!(s.buffer.dir, c.buffer.dir);
    }

    #[test]
    fn settings_and_unframed_port() {
        let (c, _) = load(&[
            ("SC4S_DEST_SYSLOG_X_HOST", "10.0.0.1"),
            ("SC4S_DEST_SYSLOG_X_IETF", "no"),
            ("SC4S_DEST_SYSLOG_X_TRANSPORT", "udp"),
            ("SC4S_DEST_SYSLOG_X_MODE", "SELECT"),
            ("SC4S_DEST_SYSLOG_X_DISKBUFF_RELIABLE", "yes"),
            ("SC4S_DEST_SYSLOG_X_TLS_VERIFY", "no"),
        ])
        .unwrap();
        let x = &c.relays["syslog_x"];
        assert_eq!(
            (x.port(), x.framed(), x.transport),
            (514, false, RelayTransport::Udp)
        );
        assert_eq!(x.mode, DestMode::Select);
        assert!(x.buffer.reliable && !x.tls_verify);
    }

    #[test]
    fn bad_values_and_filters_name_the_variable() {
        let e = load(&[
            ("SC4S_DEST_SYSLOG_X_HOST", "h"),
            ("SC4S_DEST_SYSLOG_X_TRANSPORT", "sctp"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("SC4S_DEST_SYSLOG_X_TRANSPORT"), "{e}");
        let e = load(&[
            ("SC4S_DEST_BSD_X_HOST", "h"),
            ("SC4S_DEST_BSD_X_FILTER", "program(sshd)"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("SC4S_DEST_BSD_X_FILTER"), "{e}");
        let (c, _) = load(&[
            ("SC4S_DEST_SYSLOG_X_HOST", "h"),
            ("SC4S_DEST_SYSLOG_X_FILTER", "\"${MSG}\" ne \"\""),
        ])
        .unwrap();
        assert_eq!(c.relays["syslog_x"].filter, RelayFilter::NonEmptyMessage);
    }

    #[test]
    fn reads_its_variables_only() {
        assert!(Config::reads_relay_var("SC4S_DEST_SYSLOG_X_PORT"));
        assert!(Config::reads_relay_var("SC4S_DEST_BSD_MY_SYS_DISKBUFF_DIR"));
        assert!(!Config::reads_relay_var("SC4S_DEST_SYSLOG_X_COLOUR"));
        assert!(!Config::reads_relay_var("SC4S_DEST_SYSLOG_PORT"));
    }
}
