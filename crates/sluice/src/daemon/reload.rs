//! Reload without a restart: SIGHUP, `systemctl reload`, `sluice reload`, or `POST /reload`
//! on the status port from the machine itself.
//!
//! A reload reads everything again — the TOML file, the env_file, the context files
//! (`splunk_metadata.csv`) — and validates all of it the way a start does. Then, in order:
//!
//! 1. settings that only a restart can change keep their running values (each difference is
//!    logged as needing a restart, and `sluice_config_restart_required` goes to 1): the HEC
//!    output and its batching, the output file, the input windows and the memory budget, the
//!    status server, the pid file, the listen address, port sharing and the lock directory,
//!    and the socket settings of UDP ports that stay open;
//! 2. a new [`Processor`](crate::pipeline::Processor) is built (parse options,
//!    classification tables, encode options);
//! 3. the topology prepares its changes: a changed TLS setup is loaded and checked, new ports
//!    are claimed and bound; otherwise the TLS certificates are reloaded in place;
//! 4. only then does anything change: the processor is swapped in (receivers pick it up at
//!    their next batch) and the topology commits (see [`crate::topology`]).
//!
//! An error in steps 1–3 rejects the reload as a whole: it is logged with its cause, counted
//! in `sluice_reload_total{result="failed"}`, and the running configuration carries on
//! untouched. A reload that found nothing to change still counts as `ok`.

use std::sync::Arc;

use anyhow::Context;

use super::build::{Blueprint, Sources};
use crate::admin::ReloadReply;
use crate::config::Config;
use crate::output::{Aligned, DestinationSet, Encodings};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{ConfigReloadFailed, ConfigReloaded};
use crate::telemetry::state::ConfigState;
use crate::topology::running::Running;

/// A short hash of the effective configuration and the context files it reads: equal hashes,
/// equal behaviour.
pub fn config_hash(config: &Config) -> anyhow::Result<String> {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(format!("{config:?}").as_bytes());
    if let Some(path) = &config.parse.metadata_csv {
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read metadata csv {}", path.display()))?;
        ctx.update(&bytes);
    }
    let digest = ctx.finish();
    Ok(digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Copies into `new` the running values of the settings only a restart applies, naming each
/// one that differed.
fn keep_restart_only(running: &Config, mut new: Config) -> (Config, Vec<String>) {
    let mut notes = Vec::new();
    let mut keep = |what: &str, differs: bool| {
        if differs {
            notes.push(what.to_owned());
        }
    };
    macro_rules! restart_only {
        ($($field:ident).+, $what:expr) => {
            keep($what, new.$($field).+ != running.$($field).+);
            new.$($field).+ = running.$($field).+.clone();
        };
    }
    restart_only!(
        hec,
        "the HEC output and its batching (SC4S_DEST_SPLUNK_HEC_DEFAULT_*, [hec])"
    );
    restart_only!(output, "the output file (SLUICE_OUTPUT_FILE, [output])");
    restart_only!(
        archive,
        "the archive (SC4S_ARCHIVE_GLOBAL, SC4S_DEST_<VENDOR_PRODUCT>_ARCHIVE, [archive])"
    );
    restart_only!(udp.window, "the UDP input window (SC4S_SOURCE_UDP_IW_SIZE)");
    restart_only!(
        tcp.window,
        "the stream input window (SC4S_SOURCE_TCP_IW_SIZE)"
    );
    restart_only!(
        window,
        "the in-flight memory budget (SLUICE_MAX_IN_FLIGHT_BYTES)"
    );
    restart_only!(
        admin,
        "the status server and pid file (SC4S_LISTEN_STATUS_PORT, SLUICE_PID_FILE, [admin])"
    );
    restart_only!(
        listen.address,
        "the listen address (SLUICE_LISTEN_ADDRESS, SC4S_IPV6_ENABLE)"
    );
    restart_only!(
        listen.share_ports,
        "port sharing (SLUICE_LISTEN_SHARE_PORTS)"
    );
    restart_only!(
        listen.lock_dir,
        "the lock directory (SLUICE_LISTEN_LOCK_DIR)"
    );
    (new, notes)
}

/// Carries the daemon's reloads: where the configuration comes from, and what is in force.
#[derive(Debug)]
pub struct Reloader {
    sources: Sources,
    config: Config,
    stats: Arc<ConfigState>,
}

impl Reloader {
    /// `config` is the configuration the daemon started with, read from `sources`.
    pub fn new(sources: Sources, config: Config) -> anyhow::Result<Reloader> {
        let stats = Arc::new(ConfigState::default());
        let hash = config_hash(&config)?;
        tracing::info!(hash = %hash, "configuration loaded");
        stats.loaded(hash, false);
        Ok(Reloader {
            sources,
            config,
            stats,
        })
    }

    pub fn stats(&self) -> Arc<ConfigState> {
        self.stats.clone()
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Reloads; logs and counts the outcome.
    pub fn reload(
        &mut self,
        running: &mut Running,
        destinations: &mut DestinationSet,
        cause: &str,
    ) -> ReloadReply {
        tracing::info!(cause, "reloading the configuration");
        let started = std::time::Instant::now();
        match self.try_reload(running, destinations, started) {
            Ok(summary) => {
                ConfigReloaded { summary: &summary }.emit(crate::telemetry::metrics());
                Ok(summary)
            }
            Err(e) => {
                let e = format!("{e:#}");
                ConfigReloadFailed { error: &e }.emit(crate::telemetry::metrics());
                Err(e)
            }
        }
    }

    fn try_reload(
        &mut self,
        running: &mut Running,
        destinations: &mut DestinationSet,
        started: std::time::Instant,
    ) -> anyhow::Result<String> {
        let (new, report) = self.sources.load()?;
        if let Some(path) = &self.sources.env_file {
            for var in shadowed_by_process(path) {
                tracing::warn!(
                    "{var} differs between {} and the process environment, which wins and is \
                     fixed for the life of the process: a reload cannot change it; set it in \
                     one place",
                    path.display()
                );
            }
        }
        let (mut config, mut restart) = keep_restart_only(&self.config, new);
        let aligned = match align_destinations(&self.config, &mut config, destinations)? {
            Ok(a) => a,
            Err(why) => {
                restart.push(why);
                destinations.align(&config.destination_plan())?
            }
        };
        if !aligned.changed.is_empty() {
            restart.push(format!(
                "the settings of destination {} (a destination a reload adds or removes is \
                 opened or closed at once; one whose settings change keeps running as it is)",
                aligned.changed.join(", ")
            ));
        }
        let hash = config_hash(&config)?;
        let Blueprint {
            topology,
            mut processor,
            routing,
            ..
        } = Blueprint::build_on(&config, aligned.plan.clone())?;
        let transition = running.plan().transition(topology);
        restart.extend(transition.needs_restart.iter().cloned());
        // Multi-part messages still open complete under the new processor.
        processor.groups = running.processor().load().groups.clone();
        // Ports about to close still receive until they do, with the new processor: it must
        // know their listener ids too.
        super::build::register_listeners(&mut processor, running.plan().listener_ids());
        let mut summary = summarize(&transition);
        let new_tls = transition.new_tls;
        // New destinations start before anything changes; if the rest fails they are
        // dropped unused (their queues close, they end).
        let opening = destinations.prepare(&aligned)?;
        let prepared = running.prepare(transition)?;
        if !new_tls && let Some(tls) = running.tls() {
            tls.reload()
                .map_err(|e| anyhow::anyhow!("TLS certificate: {e}"))?;
        }
        // Past this point nothing is rejected: the new configuration goes into service. The
        // receivers' handle reaches the new destinations before the new routing names them.
        let (opened, closed) = destinations.commit(opening, routing.fallback());
        running.processor().store(Arc::new(processor));
        if !opened.is_empty() {
            summary.push_str(&format!(", destinations opened {}", opened.join(",")));
        }
        if !closed.is_empty() {
            summary.push_str(&format!(", destinations closed {}", closed.join(",")));
        }
        let errors = running.commit(prepared);
        for v in &report.unsupported {
            tracing::warn!("set but not supported by sluice (ignored): {v}");
        }
        for w in config.warnings() {
            tracing::warn!("{w}");
        }
        for r in &restart {
            tracing::warn!("changed, but applied only by a restart: {r}");
        }
        self.config = config;
        self.stats.loaded(hash.clone(), !restart.is_empty());
        tracing::info!(
            hash = %hash,
            changes = %summary,
            needs_restart = restart.len(),
            elapsed = ?started.elapsed(),
            "configuration reloaded"
        );
        if !errors.is_empty() {
            anyhow::bail!(
                "reloaded, but some listeners could not start: {}",
                errors.join("; ")
            );
        }
        let mut reply = format!("configuration {hash} in force: {summary}");
        if !restart.is_empty() {
            reply.push_str(&format!("; needs a restart: {}", restart.join("; ")));
        }
        Ok(reply)
    }
}

/// Checks that `new`'s destinations can be applied to the running `set` by a reload: the
/// destinations that keep running must keep the encoding they were started with (a relay or
/// Kafka destination of a new format, or the last one of a format removed, shifts them). If
/// not, `new` keeps `running`'s destinations and routing and the reason is returned as `Err`,
/// to be reported as needing a restart.
fn align_destinations(
    running: &Config,
    new: &mut Config,
    set: &DestinationSet,
) -> anyhow::Result<Result<Aligned, String>> {
    let aligned = set.align(&new.destination_plan())?;
    let before = set.plan();
    let (_, old_index) = Encodings::from_plan(&before, 0);
    let (_, new_index) = Encodings::from_plan(&aligned.plan, 0);
    let kept = (0..before.len().min(aligned.plan.len()))
        .filter(|&i| !aligned.removed.contains(&i) && before[i] == aligned.plan[i]);
    if kept
        .into_iter()
        .all(|i| old_index.get(i) == new_index.get(i))
    {
        return Ok(Ok(aligned));
    }
    new.destinations = running.destinations.clone();
    new.relays = running.relays.clone();
    new.kafka = running.kafka.clone();
    new.routing = running.routing.clone();
    Ok(Err(
        "the destinations and their routing (a relay or Kafka destination of another format \
         was added or removed: the receivers' encodings change)"
            .to_owned(),
    ))
}

/// Variables of `env_file` that the process environment sets to another value.
fn shadowed_by_process(env_file: &std::path::Path) -> Vec<String> {
    let mut file = crate::env::Env::default();
    let parsed = std::fs::read_to_string(env_file)
        .map_err(|_| ())
        .and_then(|text| file.merge_env_file(env_file, &text).map_err(|_| ()));
    if parsed.is_err() {
        return Vec::new();
    }
    file.with_prefix("")
        .filter(|(k, v)| std::env::var(k).is_ok_and(|p| p != v.value))
        .map(|(k, _)| k.to_owned())
        .collect()
}

/// What a transition does, in one line.
fn summarize(t: &crate::topology::Transition) -> String {
    use crate::topology::Change;
    let mut parts = vec!["processor replaced".to_owned()];
    use sluice_net::Transport as Namespace;
    for (net, changes) in [
        ("UDP", t.changes_of(Namespace::Udp)),
        ("TCP", t.changes_of(Namespace::Tcp)),
    ] {
        for (word, change) in [
            ("opened", Change::Open),
            ("closed", Change::Close),
            ("replaced", Change::Replace),
            ("restarted", Change::Restart),
        ] {
            let ports: Vec<String> = changes
                .iter()
                .filter(|(_, c)| **c == change)
                .map(|(p, _)| p.to_string())
                .collect();
            if !ports.is_empty() {
                parts.push(format!("{net} {word} {}", ports.join(",")));
            }
        }
    }
    if t.new_tls {
        parts.push("new TLS setup".to_owned());
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_only_settings_keep_their_running_values_and_are_named() {
        let running = Config::default();
        let mut new = Config::default();
        new.hec.urls = vec!["https://splunk:8088".into()];
        new.udp.window = 5;
        new.parse.default_timezone = "Europe/Paris".into();
        new.listen.udp_ports = vec![5514];
        let (effective, notes) = keep_restart_only(&running, new);
        assert_eq!(effective.hec, running.hec);
        assert_eq!(effective.udp.window, running.udp.window);
        // What a reload applies stays as asked.
        assert_eq!(effective.parse.default_timezone, "Europe/Paris");
        assert_eq!(effective.listen.udp_ports, vec![5514]);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("HEC"), "{notes:?}");
        assert!(notes[1].contains("SC4S_SOURCE_UDP_IW_SIZE"), "{notes:?}");
        let (_, none) = keep_restart_only(&running, running.clone());
        assert!(none.is_empty());
    }

    #[test]
    fn the_hash_follows_settings_and_context_files() {
        let dir = std::env::temp_dir().join(format!("sluice-hash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = dir.join("splunk_metadata.csv");
        std::fs::write(&csv, "nix_syslog,index,a\n").unwrap();
        let mut c = Config::default();
        c.parse.metadata_csv = Some(csv.clone());
        let h1 = config_hash(&c).unwrap();
        assert_eq!(h1.len(), 16);
        assert_eq!(config_hash(&c).unwrap(), h1);
        std::fs::write(&csv, "nix_syslog,index,b\n").unwrap();
        let h2 = config_hash(&c).unwrap();
        assert_ne!(h1, h2);
        c.parse.store_raw_message = true;
        assert_ne!(config_hash(&c).unwrap(), h2);
        std::fs::remove_file(&csv).unwrap();
        assert!(config_hash(&c).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
