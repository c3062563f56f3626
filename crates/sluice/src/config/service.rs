//! What the service manager and the OS hand the process, as opposed to what the operator
//! configures: the host name, systemd's runtime directory and its notification socket and
//! watchdog. Read through the same [`Env`] seam as every setting (so tests can give any
//! value, and nothing else in the daemon reads the environment), never from TOML.

use std::path::PathBuf;
use std::time::Duration;

use super::ConfigError;
use crate::env::Env;

/// The process environment's facts about where and under what the daemon runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceEnv {
    /// `HOSTNAME`: the fallback for `sc4s_container` when `/proc/sys/kernel/hostname` is
    /// unreadable.
    pub hostname: Option<String>,
    /// The first entry of `RUNTIME_DIRECTORY` (systemd's `RuntimeDirectory=`).
    pub runtime_directory: Option<PathBuf>,
    /// `XDG_RUNTIME_DIR`, for an unprivileged sluice started outside systemd.
    pub xdg_runtime_dir: Option<PathBuf>,
    /// `NOTIFY_SOCKET`: where `Type=notify` readiness and watchdog pings go (a path, or
    /// `@name` for an abstract socket).
    pub notify_socket: Option<String>,
    /// `WATCHDOG_USEC` when `WATCHDOG_PID` is unset or this process: how often systemd
    /// expects a ping at the latest (`WatchdogSec=`).
    pub watchdog: Option<Duration>,
}

impl ServiceEnv {
    pub fn from_env(env: &Env) -> Result<ServiceEnv, ConfigError> {
        Self::from_env_for(env, std::process::id())
    }

    /// As [`from_env`](Self::from_env), for the process `pid`.
    pub fn from_env_for(env: &Env, pid: u32) -> Result<ServiceEnv, ConfigError> {
        let non_empty = |var: &str| {
            env.get(var)
                .map(|v| v.value.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let bad = |var: &str, reason: &str| ConfigError::BadEnv {
            var: var.to_owned(),
            value: env.get(var).map(|v| v.value.clone()).unwrap_or_default(),
            origin: env
                .get(var)
                .map_or_else(String::new, |v| v.origin.to_string()),
            reason: reason.to_owned(),
        };
        // systemd sets WATCHDOG_PID so that a child that inherits the variables does not
        // ping for its parent; another pid means the watchdog is not ours.
        let ours = match non_empty("WATCHDOG_PID") {
            None => true,
            Some(p) => {
                p.parse::<u32>()
                    .map_err(|_| bad("WATCHDOG_PID", "expected a process id"))?
                    == pid
            }
        };
        let watchdog = match non_empty("WATCHDOG_USEC") {
            Some(us) if ours => {
                let us = us
                    .parse::<u64>()
                    .ok()
                    .filter(|&us| us > 0)
                    .ok_or_else(|| bad("WATCHDOG_USEC", "expected a positive number of µs"))?;
                Some(Duration::from_micros(us))
            }
            _ => None,
        };
        Ok(ServiceEnv {
            hostname: non_empty("HOSTNAME"),
            runtime_directory: non_empty("RUNTIME_DIRECTORY")
                .and_then(|d| d.split(':').next().map(PathBuf::from))
                .filter(|d| !d.as_os_str().is_empty()),
            xdg_runtime_dir: non_empty("XDG_RUNTIME_DIR").map(PathBuf::from),
            notify_socket: non_empty("NOTIFY_SOCKET"),
            watchdog,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        let mut env = Env::default();
        env.merge_process(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        env
    }

    #[test]
    fn reads_what_systemd_and_docker_set() {
        let e = env(&[
            ("HOSTNAME", "c0ffee"),
            ("RUNTIME_DIRECTORY", "/run/sluice:/run/other"),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
            ("NOTIFY_SOCKET", "@/org/freedesktop/systemd1/notify/123"),
            ("WATCHDOG_USEC", "30000000"),
            ("WATCHDOG_PID", "42"),
        ]);
        let s = ServiceEnv::from_env_for(&e, 42).unwrap();
        assert_eq!(s.hostname.as_deref(), Some("c0ffee"));
        assert_eq!(s.runtime_directory, Some(PathBuf::from("/run/sluice")));
        assert_eq!(s.xdg_runtime_dir, Some(PathBuf::from("/run/user/1000")));
        assert_eq!(
            s.notify_socket.as_deref(),
            Some("@/org/freedesktop/systemd1/notify/123")
        );
        assert_eq!(s.watchdog, Some(Duration::from_secs(30)));
        assert_eq!(
            ServiceEnv::from_env_for(&env(&[]), 1).unwrap(),
            ServiceEnv::default()
        );
    }

    #[test]
    fn a_watchdog_for_another_process_is_not_ours() {
        let e = env(&[("WATCHDOG_USEC", "1000000"), ("WATCHDOG_PID", "7")]);
        assert_eq!(ServiceEnv::from_env_for(&e, 8).unwrap().watchdog, None);
        let e = env(&[("WATCHDOG_USEC", "1000000")]);
        assert!(ServiceEnv::from_env_for(&e, 8).unwrap().watchdog.is_some());
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = env(&[("WATCHDOG_USEC", "soon")]);
        let err = ServiceEnv::from_env_for(&e, 1).unwrap_err().to_string();
        assert!(err.starts_with("WATCHDOG_USEC=\"soon\""), "{err}");
        let e = env(&[("WATCHDOG_USEC", "1"), ("WATCHDOG_PID", "x")]);
        let err = ServiceEnv::from_env_for(&e, 1).unwrap_err().to_string();
        assert!(err.starts_with("WATCHDOG_PID=\"x\""), "{err}");
    }
}
