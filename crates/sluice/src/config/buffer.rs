//! The HEC destination's disk buffer: SC4S's `SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_*`
//! variables and the `[buffer]` table, turned into the buffer crate's settings.
//!
//! SC4S means its sizes per HEC worker (syslog-ng gives every worker its own disk buffer):
//! `DISKBUFSIZE=10g` with 10 workers is 100 GB of disk. sluice keeps one buffer per
//! destination but keeps that meaning, so an existing env_file asks for the same disk: the
//! total is `DISKBUFSIZE × workers`. The TOML's `max_bytes` is a plain total. With neither,
//! the size is SC4S's default: the buffer filesystem's size less 5 GB, at least 5 GB.
//!
//! `MEMBUFSIZE` is SC4S's `mem-buf-size()`, also per worker, and as in SC4S it matters only
//! in reliable mode: there it bounds the part of the buffer that is also in memory, the
//! records read back for HEC and not yet delivered (total `MEMBUFSIZE × workers`, SC4S's
//! default `163840000 / workers` per worker).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::sc4s::{get, set};
use super::values::{ByteSize, millis, non_empty, parse_bool, positive_size};
use super::{ConfigError, EnvReport};
use crate::env::Env;

/// SC4S's reliable-mode memory part, all workers together (`int(163840000 / workers)` per
/// worker in its `dest_hec/plugin.py`).
pub const SC4S_MEM_BUF_TOTAL: u64 = 163_840_000;

/// SC4S's reserve and floor (its `dest_hec/plugin.py`): the filesystem's size less this, or
/// this when the filesystem is smaller.
pub const SC4S_RESERVE_BYTES: u64 = 5_000_000_000;

/// The HEC destination's disk buffer.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct BufferSettings {
    /// Keep undelivered events on disk (`…_DISKBUFF_ENABLE`, default yes as in SC4S). Only
    /// the HEC output has a buffer; the JSON-lines file does not need one.
    pub enable: bool,
    /// Reliable mode (`…_DISKBUFF_RELIABLE`): every event is on disk (fsynced, with group
    /// commit) before it counts as received. Normal mode writes only what the output cannot
    /// take now, and fsyncs on the flush policy below.
    pub reliable: bool,
    /// Directory of the segment files (`…_DISKBUFF_DIR`; else `$SC4S_VAR/buffer`).
    pub dir: PathBuf,
    /// Disk budget, total. Unset: `disk_buf_size × hec.workers`, or SC4S's default (the
    /// filesystem's size less 5 GB, at least 5 GB).
    pub max_bytes: Option<ByteSize>,
    /// SC4S's per-worker disk size (`…_DISKBUFF_DISKBUFSIZE`); the total is this times
    /// `hec.workers`. Ignored when `max_bytes` is set.
    pub disk_buf_size: Option<ByteSize>,
    /// Reliable mode: SC4S's per-worker memory part of the buffer (`…_DISKBUFF_MEMBUFSIZE`,
    /// syslog-ng's `mem-buf-size()`): records read back from disk for the output and not yet
    /// delivered may hold this times `hec.workers` bytes of memory. Unset: SC4S's default,
    /// 163840000 bytes in all. Normal mode ignores it, as SC4S does.
    pub mem_buf_size: Option<ByteSize>,
    /// Normal mode: what waits in memory for the disk is written and fsynced at least this
    /// often (milliseconds). A crash loses at most about this much of what was spilled.
    #[serde(with = "millis")]
    pub flush_interval: Duration,
    /// Normal mode: write and fsync as soon as this much waits.
    pub flush_bytes: ByteSize,
    /// Segment file size; space is reclaimed a whole segment at a time.
    pub segment_bytes: ByteSize,
    /// Reliable mode: how long the first write of a group waits for others to share its
    /// fsync (milliseconds).
    #[serde(with = "millis")]
    pub group_commit_window: Duration,
    /// Normal mode: once an input window holds this share of its capacity (or the memory
    /// budget this share of its bytes), new batches go to disk instead of waiting in memory.
    pub high_water: f64,
}

impl Default for BufferSettings {
    fn default() -> Self {
        let b = sluice_buffer::BufferConfig::default();
        BufferSettings {
            enable: true,
            reliable: false,
            dir: b.dir,
            max_bytes: None,
            disk_buf_size: None,
            mem_buf_size: None,
            flush_interval: b.flush_interval,
            flush_bytes: ByteSize(b.flush_bytes),
            segment_bytes: ByteSize(b.segment_bytes),
            group_commit_window: b.group_commit_window,
            high_water: 0.5,
        }
    }
}

/// The buffer's size and how it was arrived at, for the log and `run --check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveSize {
    pub bytes: u64,
    pub how: String,
}

impl BufferSettings {
    /// Overlays destination `id`'s `SC4S_DEST_SPLUNK_HEC_<id>_DISKBUFF_*` variables;
    /// `workers` is its HEC worker count in force (SC4S's sizes are per worker).
    pub(super) fn apply_env(
        &mut self,
        env: &Env,
        id: &str,
        workers: usize,
        report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        self.apply_env_prefixed(env, &format!("SC4S_DEST_SPLUNK_HEC_{id}_"), workers, report)
    }

    /// [`apply_env`](Self::apply_env) for the destination whose variables start with
    /// `dest_prefix` (`SC4S_DEST_SYSLOG_<ID>_`): its `DISKBUFF_*` ones.
    pub(super) fn apply_env_prefixed(
        &mut self,
        env: &Env,
        dest_prefix: &str,
        workers: usize,
        report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        let p = format!("{dest_prefix}DISKBUFF_");
        set(env, &format!("{p}ENABLE"), parse_bool, &mut self.enable)?;
        set(env, &format!("{p}RELIABLE"), parse_bool, &mut self.reliable)?;
        if let Some(d) = get(env, &format!("{p}DIR"), non_empty)? {
            self.dir = PathBuf::from(d);
        } else if let Some(var) = get(env, "SC4S_VAR", non_empty)?
            && self.dir == Path::new(sluice_buffer::DEFAULT_DIR)
        {
            self.dir = Path::new(&var).join("buffer");
        }
        if let Some(per_worker) = get(env, &format!("{p}DISKBUFSIZE"), positive_size)? {
            // The environment overrides a TOML total.
            self.disk_buf_size = Some(per_worker);
            self.max_bytes = None;
            report.notes.push(format!(
                "{p}DISKBUFSIZE={} is per HEC worker, as in SC4S: the disk buffer may use {} \
                 bytes ({workers} workers)",
                per_worker.0,
                per_worker.0.saturating_mul(workers as u64)
            ));
        }
        if let Some(m) = get(env, &format!("{p}MEMBUFSIZE"), positive_size)? {
            self.mem_buf_size = Some(m);
            report.notes.push(if self.reliable {
                format!(
                    "{p}MEMBUFSIZE={} is per HEC worker, as in SC4S: in reliable mode the \
                     buffer holds up to {} bytes in memory ({workers} workers)",
                    m.0,
                    m.0.saturating_mul(workers as u64)
                )
            } else {
                format!(
                    "{p}MEMBUFSIZE has no effect in normal mode (as in SC4S, where only \
                     reliable(yes) uses mem-buf-size); set {p}RELIABLE=yes"
                )
            });
        }
        Ok(())
    }

    /// Range checks; errors name the setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.high_water > 0.0 && self.high_water <= 1.0) {
            return Err(ConfigError::Invalid(format!(
                "buffer.high_water = {}: must be more than 0 and at most 1",
                self.high_water
            )));
        }
        if !self.enable {
            return Ok(());
        }
        let probe = self.buffer_config(2 * sluice_buffer::MIN_SEGMENT_BYTES * 8);
        probe
            .validate()
            .map_err(|e| ConfigError::Invalid(format!("buffer.{}: {}", e.setting, e.reason)))?;
        if let Some(m) = self.max_bytes
            && m.0 < 2 * sluice_buffer::MIN_SEGMENT_BYTES
        {
            return Err(ConfigError::Invalid(format!(
                "buffer.max_bytes = {}: must be at least {} bytes",
                m.0,
                2 * sluice_buffer::MIN_SEGMENT_BYTES
            )));
        }
        Ok(())
    }

    /// The total size: `max_bytes`, else `disk_buf_size × workers`, else SC4S's default
    /// computed from the filesystem that holds (or will hold) `dir`.
    pub fn effective_size(&self, workers: usize) -> EffectiveSize {
        self.effective_size_for("DEFAULT", workers)
    }

    /// [`effective_size`](Self::effective_size) of destination `id`'s buffer.
    pub fn effective_size_for(&self, id: &str, workers: usize) -> EffectiveSize {
        self.effective_size_vars(&format!("SC4S_DEST_SPLUNK_HEC_{id}_"), workers)
    }

    /// [`effective_size`](Self::effective_size) of the destination whose variables start
    /// with `vars` (`SC4S_DEST_SYSLOG_<ID>_`).
    pub fn effective_size_vars(&self, vars: &str, workers: usize) -> EffectiveSize {
        if let Some(m) = self.max_bytes {
            return EffectiveSize {
                bytes: m.0,
                how: "buffer.max_bytes".into(),
            };
        }
        if let Some(w) = self.disk_buf_size {
            return EffectiveSize {
                bytes: w.0.saturating_mul(workers as u64),
                how: format!(
                    "{vars}DISKBUFF_DISKBUFSIZE {} per worker x {workers} workers",
                    w.0
                ),
            };
        }
        match filesystem_size(&self.dir) {
            Some((at, total)) => {
                let bytes = total
                    .checked_sub(SC4S_RESERVE_BYTES)
                    .filter(|&b| b >= SC4S_RESERVE_BYTES)
                    .unwrap_or(SC4S_RESERVE_BYTES);
                EffectiveSize {
                    bytes,
                    how: format!(
                        "SC4S default: the filesystem of {} ({total} bytes) less 5 GB, at least 5 GB",
                        at.display()
                    ),
                }
            }
            None => EffectiveSize {
                bytes: SC4S_RESERVE_BYTES,
                how: "SC4S default floor (the filesystem's size could not be read)".into(),
            },
        }
    }

    /// Reliable mode's memory part in bytes, all workers together, and how it was arrived
    /// at; `None` in normal mode, which has no such bound.
    pub fn effective_memory(&self, workers: usize) -> Option<EffectiveSize> {
        self.effective_memory_for("DEFAULT", workers)
    }

    /// [`effective_memory`](Self::effective_memory) of destination `id`'s buffer.
    pub fn effective_memory_for(&self, id: &str, workers: usize) -> Option<EffectiveSize> {
        self.effective_memory_vars(&format!("SC4S_DEST_SPLUNK_HEC_{id}_"), workers)
    }

    /// [`effective_memory`](Self::effective_memory) of the destination whose variables start
    /// with `vars`.
    pub fn effective_memory_vars(&self, vars: &str, workers: usize) -> Option<EffectiveSize> {
        if !self.reliable {
            return None;
        }
        Some(match self.mem_buf_size {
            Some(w) => EffectiveSize {
                bytes: w.0.saturating_mul(workers as u64),
                how: format!(
                    "{vars}DISKBUFF_MEMBUFSIZE {} per worker x {workers} workers",
                    w.0
                ),
            },
            None => EffectiveSize {
                bytes: SC4S_MEM_BUF_TOTAL,
                how: "SC4S default: 163840000 / workers per worker".into(),
            },
        })
    }

    /// The buffer crate's settings for a total of `max_bytes`.
    pub fn buffer_config(&self, max_bytes: u64) -> sluice_buffer::BufferConfig {
        sluice_buffer::BufferConfig {
            dir: self.dir.clone(),
            max_bytes,
            mode: if self.reliable {
                sluice_buffer::DurabilityMode::Reliable
            } else {
                sluice_buffer::DurabilityMode::Normal
            },
            flush_interval: self.flush_interval,
            flush_bytes: self.flush_bytes.0,
            segment_bytes: self.segment_bytes.0,
            group_commit_window: self.group_commit_window,
        }
    }

    /// The variable an operator changes to move the buffer (for startup errors).
    pub fn dir_setting(&self) -> &'static str {
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR (buffer.dir)"
    }

    /// [`dir_setting`](Self::dir_setting) of destination `id`, whose TOML table is `table`.
    pub fn dir_setting_for(id: &str, table: &str) -> String {
        format!("SC4S_DEST_SPLUNK_HEC_{id}_DISKBUFF_DIR ({table}.dir)")
    }
}

/// The size of the filesystem holding `dir`, or its nearest existing ancestor.
fn filesystem_size(dir: &Path) -> Option<(PathBuf, u64)> {
    let mut at = dir;
    loop {
        if let Ok(s) = rustix::fs::statvfs(at) {
            return Some((at.to_owned(), s.f_blocks.saturating_mul(s.f_frsize)));
        }
        at = at.parent()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn env(vars: &[(&str, &str)]) -> Env {
        let mut e = Env::default();
        e.merge_process(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        e
    }

    fn load(vars: &[(&str, &str)]) -> Result<(Config, EnvReport), ConfigError> {
        let env = env(vars);
        let mut c = Config::default();
        let r = c.apply_env(&env)?;
        Ok((c, r))
    }

    #[test]
    fn defaults_are_sc4s_defaults() {
        let b = BufferSettings::default();
        assert!(b.enable, "SC4S turns its disk buffer on by default");
        assert!(!b.reliable);
        assert_eq!(b.dir, Path::new("/var/lib/sluice/buffer"));
        assert_eq!(b.flush_interval, Duration::from_millis(500));
    }

    #[test]
    fn diskbufsize_is_per_worker() {
        let (c, r) = load(&[
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "4"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DISKBUFSIZE", "1gb"),
        ])
        .unwrap();
        let s = c.buffer.effective_size(c.hec.workers);
        assert_eq!(s.bytes, 4_000_000_000);
        assert!(s.how.contains("4 workers"), "{}", s.how);
        assert!(
            r.notes.iter().any(|n| n.contains("4000000000")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn toml_max_bytes_is_a_total_and_env_overrides_it() {
        let mut c = Config::default();
        c.buffer.max_bytes = Some(ByteSize(123_456_789));
        assert_eq!(c.buffer.effective_size(10).bytes, 123_456_789);
        let env = env(&[(
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DISKBUFSIZE",
            "1000000",
        )]);
        c.apply_env(&env).unwrap();
        assert_eq!(c.buffer.effective_size(c.hec.workers).bytes, 10_000_000);
    }

    #[test]
    fn sc4s_default_size_comes_from_the_filesystem() {
        let dir = std::env::temp_dir().join("sluice-buffer-size-test/not/yet/created");
        let b = BufferSettings {
            dir,
            ..BufferSettings::default()
        };
        let s = b.effective_size(10);
        assert!(s.bytes >= SC4S_RESERVE_BYTES, "{s:?}");
        assert!(s.how.contains("SC4S default"), "{}", s.how);
    }

    #[test]
    fn dir_from_diskbuff_dir_or_sc4s_var() {
        let (c, _) = load(&[("SC4S_VAR", "/srv/sc4s")]).unwrap();
        assert_eq!(c.buffer.dir, Path::new("/srv/sc4s/buffer"));
        let (c, _) = load(&[
            ("SC4S_VAR", "/srv/sc4s"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", "/data/buf"),
        ])
        .unwrap();
        assert_eq!(c.buffer.dir, Path::new("/data/buf"));
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = load(&[("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE", "perhaps")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("DISKBUFF_ENABLE"), "{e}");
        let e = load(&[("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DISKBUFSIZE", "lots")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("DISKBUFSIZE"), "{e}");
    }

    #[test]
    fn reliable_and_disable() {
        let (c, _) = load(&[
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE", "yes"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE", "no"),
        ])
        .unwrap();
        assert!(c.buffer.reliable);
        assert!(!c.buffer.enable);
        let bc = BufferSettings {
            reliable: true,
            ..BufferSettings::default()
        }
        .buffer_config(1 << 30);
        assert_eq!(bc.mode, sluice_buffer::DurabilityMode::Reliable);
    }

    #[test]
    fn membufsize_is_per_worker_and_only_for_reliable_mode() {
        let (c, r) = load(&[
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "4"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE", "yes"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_MEMBUFSIZE", "2mb"),
        ])
        .unwrap();
        let m = c.buffer.effective_memory(c.hec.workers).unwrap();
        assert_eq!(m.bytes, 8_000_000);
        assert!(
            m.how.contains("MEMBUFSIZE 2000000 per worker x 4"),
            "{}",
            m.how
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("8000000 bytes in memory")),
            "{:?}",
            r.notes
        );

        // Unset: SC4S's default total, whatever the worker count.
        let (c, _) = load(&[
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "7"),
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE", "yes"),
        ])
        .unwrap();
        let m = c.buffer.effective_memory(c.hec.workers).unwrap();
        assert_eq!(m.bytes, SC4S_MEM_BUF_TOTAL);

        // Normal mode: no bound, and the note says the setting does nothing there.
        let (c, r) = load(&[("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_MEMBUFSIZE", "2mb")]).unwrap();
        assert_eq!(c.buffer.effective_memory(c.hec.workers), None);
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("no effect in normal mode")),
            "{:?}",
            r.notes
        );
        let e = load(&[("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_MEMBUFSIZE", "0")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("MEMBUFSIZE"), "{e}");
    }

    #[test]
    fn high_water_is_checked() {
        let b = BufferSettings {
            high_water: 1.5,
            ..BufferSettings::default()
        };
        assert!(b.validate().unwrap_err().to_string().contains("high_water"));
    }
}
