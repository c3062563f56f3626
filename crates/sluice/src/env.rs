//! The one place configuration is looked up by variable name.
//!
//! SC4S is configured through `/opt/sc4s/env_file`, which Docker or systemd turn into process
//! environment. sluice reads the same file itself (`--env-file`) and the process environment,
//! process environment winning, so an operator can point sluice at the file SC4S used and
//! still override one value with `-e`/`Environment=`. Every value remembers where it came from,
//! so a bad value is reported as `SC4S_X="abc" (from /opt/sc4s/env_file line 12)`.
//!
//! The seam also keeps what `sluice run --check` needs to say where each effective value came
//! from: the env_file line a process variable overrides ([`Env::shadowed`]), which variables
//! the configuration actually looked up ([`Env::was_read`]), and the same set without one
//! variable ([`Env::without`]) so the configuration can be rebuilt to see what that variable
//! changed (`config::origin`).
//!
//! env_file syntax (a superset of Docker's `--env-file`): `KEY=value` per line, blank lines and
//! lines starting with `#` ignored, an optional `export ` prefix, whitespace around the key and
//! the value trimmed, and one pair of matching surrounding quotes (`"…"` or `'…'`) removed.
//! Docker itself would keep the quotes; operators write them anyway, and no SC4S value needs
//! literal surrounding quotes.
//!
//! This is the daemon's only reader of the environment: `SLUICE_LOG`/`RUST_LOG` (the log
//! filter), `HOSTNAME` and systemd's `NOTIFY_SOCKET`/`WATCHDOG_USEC`/`RUNTIME_DIRECTORY` come
//! through it like every `SC4S_*` setting.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where a value came from, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    EnvFile { path: PathBuf, line: usize },
    Process,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::EnvFile { path, line } => write!(f, "from {} line {line}", path.display()),
            Origin::Process => f.write_str("from the process environment"),
        }
    }
}

/// A value with its origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    pub value: String,
    pub origin: Origin,
}

#[derive(Debug, thiserror::Error)]
pub enum EnvFileError {
    #[error("cannot read env file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} line {line}: expected KEY=value, found {content:?}")]
    Syntax {
        path: PathBuf,
        line: usize,
        content: String,
    },
    #[error("{path} line {line}: {key:?} is not a valid variable name")]
    BadKey {
        path: PathBuf,
        line: usize,
        key: String,
    },
}

/// The merged variable set: env_file entries overlaid by the process environment.
#[derive(Debug, Default)]
pub struct Env {
    vars: BTreeMap<String, Value>,
    /// Origins of values the process environment replaced (an env_file line).
    shadowed: BTreeMap<String, Origin>,
    /// Names looked up with [`Env::get`] (listings do not count).
    read: Mutex<BTreeSet<String>>,
}

impl Clone for Env {
    fn clone(&self) -> Env {
        Env {
            vars: self.vars.clone(),
            shadowed: self.shadowed.clone(),
            read: Mutex::new(self.read_set().clone()),
        }
    }
}

impl Env {
    /// Reads `env_file` (if given) and then the process environment.
    pub fn load(env_file: Option<&Path>) -> Result<Env, EnvFileError> {
        let mut env = Env::default();
        if let Some(path) = env_file {
            let text = std::fs::read_to_string(path).map_err(|source| EnvFileError::Read {
                path: path.to_owned(),
                source,
            })?;
            env.merge_env_file(path, &text)?;
        }
        env.merge_process(std::env::vars());
        Ok(env)
    }

    /// Parses env_file text; later lines win over earlier ones, as in a shell.
    pub fn merge_env_file(&mut self, path: &Path, text: &str) -> Result<(), EnvFileError> {
        for (idx, raw_line) in text.lines().enumerate() {
            let line_no = idx + 1;
            let line = raw_line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            let Some((key, value)) = line.split_once('=') else {
                return Err(EnvFileError::Syntax {
                    path: path.to_owned(),
                    line: line_no,
                    content: raw_line.to_owned(),
                });
            };
            let key = key.trim();
            if !is_var_name(key) {
                return Err(EnvFileError::BadKey {
                    path: path.to_owned(),
                    line: line_no,
                    key: key.to_owned(),
                });
            }
            self.shadowed.remove(key);
            self.vars.insert(
                key.to_owned(),
                Value {
                    value: unquote(value.trim()).to_owned(),
                    origin: Origin::EnvFile {
                        path: path.to_owned(),
                        line: line_no,
                    },
                },
            );
        }
        Ok(())
    }

    /// Overlays variables from the process (or, in tests, any iterator of pairs).
    pub fn merge_process(&mut self, vars: impl IntoIterator<Item = (String, String)>) {
        for (key, value) in vars {
            if is_relevant(&key) {
                let old = self.vars.insert(
                    key.clone(),
                    Value {
                        value,
                        origin: Origin::Process,
                    },
                );
                if let Some(Value {
                    origin: o @ Origin::EnvFile { .. },
                    ..
                }) = old
                {
                    self.shadowed.insert(key, o);
                }
            }
        }
    }

    /// The value of `key`; the lookup is remembered ([`Env::was_read`]).
    pub fn get(&self, key: &str) -> Option<&Value> {
        let v = self.vars.get(key);
        if v.is_some() {
            self.read_set().insert(key.to_owned());
        }
        v
    }

    /// Where the value the process environment replaced came from (an env_file line).
    pub fn shadowed(&self, key: &str) -> Option<&Origin> {
        self.shadowed.get(key)
    }

    /// Whether the configuration looked `key` up with [`Env::get`].
    pub fn was_read(&self, key: &str) -> bool {
        self.read_set().contains(key)
    }

    /// Every variable, in name order (not counted as read).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The same set without `key`, and with nothing marked read.
    pub fn without(&self, key: &str) -> Env {
        let mut vars = self.vars.clone();
        vars.remove(key);
        let mut shadowed = self.shadowed.clone();
        shadowed.remove(key);
        Env {
            vars,
            shadowed,
            read: Mutex::default(),
        }
    }

    /// Adds `key` as `other` has it (value, origin and the line it overrides), if set.
    pub fn merge_from(&mut self, other: &Env, key: &str) {
        if let Some(v) = other.vars.get(key) {
            self.vars.insert(key.to_owned(), v.clone());
        }
        if let Some(o) = other.shadowed.get(key) {
            self.shadowed.insert(key.to_owned(), o.clone());
        }
    }

    fn read_set(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.read.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// All variables whose name starts with `prefix`, in name order.
    pub fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a Value)> {
        self.vars
            .range(prefix.to_owned()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v))
    }
}

/// Variables outside the `SC4S_`/`SLUICE_` namespaces that sluice reads: what the service
/// manager or the container runtime sets (`config::ServiceEnv`) and the usual log filter.
pub const SYSTEM_VARS: &[&str] = &[
    "HOSTNAME",
    "RUST_LOG",
    "NOTIFY_SOCKET",
    "WATCHDOG_USEC",
    "WATCHDOG_PID",
    "RUNTIME_DIRECTORY",
    "XDG_RUNTIME_DIR",
];

/// Only SC4S_ and SLUICE_ names and [`SYSTEM_VARS`] are read; the rest of the process
/// environment (PATH, HOME, …) is not kept, so `with_prefix` listings stay small.
fn is_relevant(key: &str) -> bool {
    key.starts_with("SC4S_") || key.starts_with("SLUICE_") || SYSTEM_VARS.contains(&key)
}

fn is_var_name(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_file_syntax() {
        let mut env = Env::default();
        let text = "# SC4S env\n\nSC4S_DEST_SPLUNK_HEC_DEFAULT_URL=https://splunk:8088\n\
                    export SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN = \"abc-123\" \n\
                    SC4S_DEFAULT_TIMEZONE='America/New_York'\nSC4S_X=a=b\nSC4S_X=later\n";
        env.merge_env_file(Path::new("/opt/sc4s/env_file"), text)
            .unwrap();
        assert_eq!(
            env.get("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL").unwrap().value,
            "https://splunk:8088"
        );
        assert_eq!(
            env.get("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN").unwrap().value,
            "abc-123"
        );
        assert_eq!(
            env.get("SC4S_DEFAULT_TIMEZONE").unwrap().value,
            "America/New_York"
        );
        let x = env.get("SC4S_X").unwrap();
        assert_eq!(x.value, "later");
        assert_eq!(
            x.origin.to_string(),
            "from /opt/sc4s/env_file line 7",
            "later lines win and the origin says which line"
        );
    }

    #[test]
    fn env_file_errors_name_the_line() {
        let mut env = Env::default();
        let err = env
            .merge_env_file(Path::new("f"), "SC4S_A=1\nthis is not a pair\n")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "f line 2: expected KEY=value, found \"this is not a pair\""
        );
        let err = env.merge_env_file(Path::new("f"), "1BAD=1\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("\"1BAD\" is not a valid variable name")
        );
    }

    #[test]
    fn process_environment_wins_over_the_file() {
        let mut env = Env::default();
        env.merge_env_file(Path::new("f"), "SC4S_LISTEN_STATUS_PORT=8080\n")
            .unwrap();
        env.merge_process([
            ("SC4S_LISTEN_STATUS_PORT".to_owned(), "9090".to_owned()),
            ("PATH".to_owned(), "/bin".to_owned()),
        ]);
        let v = env.get("SC4S_LISTEN_STATUS_PORT").unwrap();
        assert_eq!((v.value.as_str(), &v.origin), ("9090", &Origin::Process));
        assert_eq!(
            env.shadowed("SC4S_LISTEN_STATUS_PORT")
                .map(ToString::to_string),
            Some("from f line 1".to_owned()),
            "the env_file line it overrides is remembered"
        );
        assert!(env.get("PATH").is_none());
    }

    #[test]
    fn lookups_are_remembered_and_without_drops_one_variable() {
        let mut env = Env::default();
        env.merge_process([
            ("SC4S_A".to_owned(), "1".to_owned()),
            ("SC4S_B".to_owned(), "2".to_owned()),
        ]);
        assert_eq!(env.with_prefix("SC4S_").count(), 2);
        assert!(!env.was_read("SC4S_A"), "a listing is not a lookup");
        env.get("SC4S_A");
        env.get("SC4S_NOT_SET");
        assert!(env.was_read("SC4S_A") && !env.was_read("SC4S_B"));
        assert!(!env.was_read("SC4S_NOT_SET"));
        assert!(env.clone().was_read("SC4S_A"));
        let less = env.without("SC4S_A");
        assert!(less.get("SC4S_A").is_none() && less.get("SC4S_B").is_some());
        assert!(!less.was_read("SC4S_A"));
        assert_eq!(env.iter().count(), 2, "the original is untouched");
    }

    #[test]
    fn prefix_listing() {
        let mut env = Env::default();
        env.merge_process([
            ("SC4S_LISTEN_A_UDP_PORT".to_owned(), "1".to_owned()),
            ("SC4S_LISTEN_B_TCP_PORT".to_owned(), "2".to_owned()),
            ("SC4S_OTHER".to_owned(), "3".to_owned()),
        ]);
        let keys: Vec<_> = env.with_prefix("SC4S_LISTEN_").map(|(k, _)| k).collect();
        assert_eq!(keys, ["SC4S_LISTEN_A_UDP_PORT", "SC4S_LISTEN_B_TCP_PORT"]);
    }
}
