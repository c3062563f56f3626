//! Where each effective setting came from: its default, the `--config` TOML file, an
//! env_file line or the process environment, for `sluice run --check`.
//!
//! Nothing here knows any setting. The settings are the leaves of the serialized
//! [`Config`] ([`flatten`](super::flatten)); the TOML layer is a key written in the file; an
//! environment variable's effect is found by building the configuration again through the
//! one [`Env`] seam without that variable ([`Env::without`]) and listing the settings that
//! differ. So a setting or an SC4S variable added later is traced with no change here, and a
//! variable that feeds several settings (`SC4S_ENABLE_EBPF` sets the balancing and lets
//! `SC4S_EBPF_NO_SOCKETS` set the socket count) is named on each of them.
//!
//! A variable set to the value sluice would use anyway changes nothing, so no setting can
//! name it; those are listed apart ([`Traced::no_effect`]).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use super::flatten::{Setting, settings};
use super::{Config, ConfigError, EnvReport};
use crate::env::{Env, Origin};

/// A variable of the environment layer, with where its value was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
    pub origin: Origin,
    /// The env_file line a process variable overrides.
    pub shadowed: Option<Origin>,
}

impl EnvVar {
    /// `env_file /opt/sc4s/env_file line 12`, `environment`, or
    /// `environment, over /opt/sc4s/env_file line 12`.
    pub fn place(&self) -> String {
        let mut s = match &self.origin {
            Origin::EnvFile { path, line } => format!("env_file {} line {line}", path.display()),
            Origin::Process => "environment".to_owned(),
        };
        if let Some(Origin::EnvFile { path, line }) = &self.shadowed {
            s.push_str(&format!(", over {} line {line}", path.display()));
        }
        s
    }
}

impl fmt::Display for EnvVar {
    /// `SC4S_X (env_file /opt/sc4s/env_file line 12)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.place())
    }
}

/// Where a setting's effective value came from (the highest layer that set it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    Toml(PathBuf),
    /// One or more variables (several when they act together).
    Env(Vec<EnvVar>),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::Toml(path) => write!(f, "config {}", path.display()),
            Source::Env(vars) => {
                for (i, v) in vars.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{v}")?;
                }
                Ok(())
            }
        }
    }
}

/// The layered configuration with the origin of every setting.
#[derive(Debug)]
pub struct Traced {
    pub config: Config,
    pub report: EnvReport,
    /// Every setting, in declaration order, with its source.
    pub settings: Vec<(Setting, Source)>,
    /// Variables that are set, supported, and change nothing: set to the value sluice uses
    /// anyway, or only meaningful together with another setting that is off.
    pub no_effect: Vec<EnvVar>,
    /// The variables of `report.unsupported`, with where they were set.
    pub unsupported: Vec<EnvVar>,
}

impl Traced {
    /// The source of the setting at `path`.
    pub fn source(&self, path: &str) -> Option<&Source> {
        self.settings
            .iter()
            .find(|(s, _)| s.path == path)
            .map(|(_, src)| src)
    }
}

fn flat(c: &Config) -> Result<Vec<Setting>, ConfigError> {
    settings(c).map_err(|e| ConfigError::Invalid(format!("cannot list the settings: {e}")))
}

/// Builds the configuration as `run` does — defaults, then `toml` (path and text), then
/// `env` — and traces every setting to its layer.
pub fn trace(toml: Option<(&Path, &str)>, env: &Env) -> Result<Traced, ConfigError> {
    let (base, table) = match toml {
        Some((path, text)) => {
            let c = Config::from_toml_str(text).map_err(|message| ConfigError::Toml {
                path: path.to_owned(),
                message,
            })?;
            let t: toml::Table = text
                .parse()
                .map_err(|e: toml::de::Error| ConfigError::Toml {
                    path: path.to_owned(),
                    message: e.to_string(),
                })?;
            (c, Some((path, t)))
        }
        None => (Config::default(), None),
    };
    let mut config = base.clone();
    let report = config.apply_env(env)?;
    let full = flat(&config)?;
    let without_env = flat(&base)?;
    let before: HashMap<&str, &Setting> =
        without_env.iter().map(|s| (s.path.as_str(), s)).collect();

    let (unsupported, vars): (Vec<EnvVar>, Vec<EnvVar>) = env
        .iter()
        .map(|(name, value)| EnvVar {
            name: name.to_owned(),
            value: value.value.clone(),
            origin: value.origin.clone(),
            shadowed: env.shadowed(name).cloned(),
        })
        .partition(|v| report.unsupported.contains(&v.name));
    // Leave one out: what the configuration loses without the variable.
    let mut by_path: HashMap<String, Vec<EnvVar>> = HashMap::new();
    let mut credited = vec![false; vars.len()];
    for (i, var) in vars.iter().enumerate() {
        let mut without = base.clone();
        // Removing a variable cannot make another one invalid; if it did, the variable is
        // simply not traced this way.
        if without.apply_env(&env.without(&var.name)).is_err() {
            continue;
        }
        let reduced = flat(&without)?;
        for s in changed(&full, &reduced) {
            credited[i] = true;
            by_path.entry(s.path.clone()).or_default().push(var.clone());
        }
    }
    // Two variables that set the same value (SC4S_SOURCE_LISTEN_UDP_SOCKETS and
    // SC4S_EBPF_NO_SOCKETS) each change nothing when left out, yet together they moved the
    // setting away from the lower layers: credit each variable that moves it on its own.
    let unexplained: Vec<&Setting> = changed(&full, &without_env)
        .filter(|s| !by_path.contains_key(&s.path))
        .collect();
    if !unexplained.is_empty() {
        for (i, var) in vars.iter().enumerate() {
            let mut alone = base.clone();
            let mut one = Env::default();
            one.merge_from(env, &var.name);
            if alone.apply_env(&one).is_err() {
                continue;
            }
            let single = flat(&alone)?;
            let single: HashMap<&str, &Setting> =
                single.iter().map(|s| (s.path.as_str(), s)).collect();
            for s in &unexplained {
                let moved = single.get(s.path.as_str()).map(|x| &x.value)
                    != before.get(s.path.as_str()).map(|x| &x.value);
                if moved && single.get(s.path.as_str()).map(|x| &x.value) == Some(&s.value) {
                    credited[i] = true;
                    by_path.entry(s.path.clone()).or_default().push(var.clone());
                }
            }
        }
    }
    let no_effect = vars
        .into_iter()
        .zip(credited)
        .filter_map(|(v, c)| (!c).then_some(v))
        .collect();

    let settings = full
        .into_iter()
        .map(|s| {
            let source = match by_path.remove(&s.path) {
                Some(vars) => Source::Env(vars),
                None => match &table {
                    Some((path, t)) if in_table(t, &s.path) => Source::Toml(path.to_path_buf()),
                    _ => Source::Default,
                },
            };
            (s, source)
        })
        .collect();
    Ok(Traced {
        config,
        report,
        settings,
        no_effect,
        unsupported,
    })
}

/// The settings of `full` whose value differs in `other`. A table entry missing from `other`
/// (a vendor listener id the variable created) counts only for its non-empty settings: its
/// other, empty lists are not the variable's doing.
fn changed<'a>(full: &'a [Setting], other: &[Setting]) -> impl Iterator<Item = &'a Setting> {
    let other: HashMap<String, Option<String>> = other
        .iter()
        .map(|s| (s.path.clone(), s.value.clone()))
        .collect();
    full.iter().filter(move |s| match other.get(&s.path) {
        Some(v) => *v != s.value,
        None => !s.is_empty(),
    })
}

/// Whether the TOML file wrote the setting at `path`, or a table or array holding it.
fn in_table(t: &toml::Table, path: &str) -> bool {
    let mut table = t;
    let mut keys = path.split('.').peekable();
    while let Some(k) = keys.next() {
        match table.get(k) {
            None => return false,
            Some(toml::Value::Table(inner)) if keys.peek().is_some() => table = inner,
            Some(_) => return true,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(file: &str, process: &[(&str, &str)]) -> Env {
        let mut e = Env::default();
        e.merge_env_file(Path::new("/opt/sc4s/env_file"), file)
            .unwrap();
        e.merge_process(process.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        e
    }

    fn src(t: &Traced, path: &str) -> String {
        t.source(path)
            .unwrap_or_else(|| panic!("no setting {path}"))
            .to_string()
    }

    #[test]
    fn each_setting_names_its_layer() {
        let toml = "[udp]\nsockets = 8\nbalance = \"cbpf\"\n[hec]\nworkers = 4\n";
        let e = env(
            "SC4S_LISTEN_DEFAULT_UDP_PORT=5514\nSC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS=6\n\
             SC4S_LISTEN_STATUS_PORT=8081\nSC4S_LISTEN_CISCO_ASA_TCP_PORT=5000\n",
            &[("SC4S_LISTEN_STATUS_PORT", "9090")],
        );
        let t = trace(Some((Path::new("sluice.toml"), toml)), &e).unwrap();
        assert_eq!(src(&t, "listen.address"), "default");
        assert_eq!(src(&t, "udp.sockets"), "config sluice.toml");
        assert_eq!(src(&t, "udp.balance"), "config sluice.toml");
        assert_eq!(
            src(&t, "listen.udp_ports"),
            "SC4S_LISTEN_DEFAULT_UDP_PORT (env_file /opt/sc4s/env_file line 1)"
        );
        assert_eq!(
            src(&t, "hec.workers"),
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS (env_file /opt/sc4s/env_file line 2)",
            "the env_file wins over the TOML file"
        );
        assert_eq!(
            src(&t, "admin.port"),
            "SC4S_LISTEN_STATUS_PORT (environment, over /opt/sc4s/env_file line 3)"
        );
        assert_eq!(
            src(&t, "listen.vendor.CISCO_ASA.tcp"),
            "SC4S_LISTEN_CISCO_ASA_TCP_PORT (env_file /opt/sc4s/env_file line 4)"
        );
        assert_eq!(src(&t, "listen.vendor.CISCO_ASA.udp"), "default");
        assert_eq!(t.config.admin.port, 9090);
        assert!(t.no_effect.is_empty(), "{:?}", t.no_effect);
    }

    #[test]
    fn variables_acting_together_are_both_named_and_no_ops_are_listed_apart() {
        let e = env(
            "SC4S_ENABLE_EBPF=yes\nSC4S_EBPF_NO_SOCKETS=8\nSC4S_LISTEN_DEFAULT_TCP_PORT=514\n\
             SC4S_PARALLELIZE_NO_PARTITION=3\nSC4S_USE_REVERSE_DNS=yes\n",
            &[],
        );
        let t = trace(None, &e).unwrap();
        assert_eq!(
            src(&t, "udp.sockets"),
            "SC4S_EBPF_NO_SOCKETS (env_file /opt/sc4s/env_file line 2); \
             SC4S_ENABLE_EBPF (env_file /opt/sc4s/env_file line 1)"
        );
        assert_eq!(
            src(&t, "udp.balance"),
            "SC4S_ENABLE_EBPF (env_file /opt/sc4s/env_file line 1)"
        );
        let none: Vec<&str> = t.no_effect.iter().map(|v| v.name.as_str()).collect();
        // 514 is the default; partitions without SC4S_ENABLE_PARALLELIZE do nothing; the
        // unsupported variable is reported as such, not here.
        assert_eq!(
            none,
            [
                "SC4S_LISTEN_DEFAULT_TCP_PORT",
                "SC4S_PARALLELIZE_NO_PARTITION"
            ]
        );
        assert_eq!(t.report.unsupported, ["SC4S_USE_REVERSE_DNS"]);
        assert_eq!(src(&t, "listen.tcp_ports"), "default");
    }

    #[test]
    fn two_variables_setting_the_same_value_do_not_hide_behind_each_other() {
        let e = env(
            "SC4S_SOURCE_LISTEN_UDP_SOCKETS=8\nSC4S_ENABLE_EBPF=yes\nSC4S_EBPF_NO_SOCKETS=8\n",
            &[],
        );
        let t = trace(Some((Path::new("s.toml"), "[udp]\nsockets = 2\n")), &e).unwrap();
        assert_eq!(t.config.udp.sockets, 8);
        assert_eq!(
            src(&t, "udp.sockets"),
            "SC4S_SOURCE_LISTEN_UDP_SOCKETS (env_file /opt/sc4s/env_file line 1)",
            "not the TOML file's 2"
        );
        let none: Vec<&str> = t.no_effect.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(none, ["SC4S_EBPF_NO_SOCKETS"]);
    }

    #[test]
    fn toml_tables_and_arrays_count_as_written() {
        let toml = "[listen.vendor.PAN_FW]\nudp = [6000]\n[hec]\nheaders = [\"A: b\"]\n";
        let t = trace(Some((Path::new("s.toml"), toml)), &Env::default()).unwrap();
        assert_eq!(src(&t, "listen.vendor.PAN_FW.udp"), "config s.toml");
        assert_eq!(src(&t, "listen.vendor.PAN_FW.tcp"), "default");
        assert_eq!(src(&t, "hec.headers"), "config s.toml");
        assert_eq!(src(&t, "hec.urls"), "default");
    }

    #[test]
    fn errors_name_the_layer() {
        let e = trace(
            Some((Path::new("s.toml"), "[udp]\nsockts = 1\n")),
            &Env::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("s.toml") && e.to_string().contains("sockts"));
        let e = trace(None, &env("SC4S_SOURCE_LISTEN_UDP_SOCKETS=lots\n", &[])).unwrap_err();
        assert!(
            e.to_string().contains(
                "SC4S_SOURCE_LISTEN_UDP_SOCKETS=\"lots\" (from /opt/sc4s/env_file line 1)"
            ),
            "{e}"
        );
    }
}
