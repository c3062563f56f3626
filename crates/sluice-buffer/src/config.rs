//! Buffer settings: one struct, defaults in one place ([`BufferConfig::default`]).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::format::{RECORD_HEADER_LEN, SEGMENT_HEADER_LEN};

/// When a write counts as durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DurabilityMode {
    /// Records are collected in memory and written and fsynced every `flush_interval` or
    /// every `flush_bytes`, whichever comes first. A crash loses at most what was appended
    /// during the last flush interval (plus the flush in progress). SC4S `reliable(no)`.
    #[default]
    Normal,
    /// Group commit: records appended within `group_commit_window` of each other share one
    /// write and one fsync; [`Appended::durable`](crate::Appended::durable) resolves only
    /// after that fsync. Nothing reported durable is lost by a crash. SC4S `reliable(yes)`.
    Reliable,
}

/// Settings of one disk buffer.
///
/// In TOML, sizes are byte counts or strings with a suffix (`"512MiB"`, `"4096kb"`;
/// `k`/`m`/`g` are powers of 1000 as in syslog-ng, `ki`/`mi`/`gi` powers of 1024) and
/// durations are milliseconds (fractions allowed).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct BufferConfig {
    /// Directory of the segment, position and lock files. Created if missing.
    pub dir: PathBuf,
    /// Upper bound on the buffer's disk use (segment files plus records not yet written).
    /// An append that would pass it is refused with [`AppendError::Full`](crate::AppendError).
    #[serde(with = "bytesize")]
    pub max_bytes: u64,
    pub mode: DurabilityMode,
    /// Normal mode: the longest a record waits in memory before it is written and fsynced.
    /// Both modes: how often reader positions are persisted and finished segments deleted.
    #[serde(with = "millis")]
    pub flush_interval: Duration,
    /// Normal mode: write and fsync as soon as this many bytes wait in memory. Both modes:
    /// when `2 × flush_bytes` (at least 1 MiB) wait because the disk is not keeping up,
    /// appends are refused with `Full` until the writer catches up.
    #[serde(with = "bytesize")]
    pub flush_bytes: u64,
    /// Size at which the writer starts a new segment file. Space is reclaimed a whole
    /// segment at a time, so the effective size is capped at `max_bytes / 8`
    /// ([`BufferConfig::effective_segment_bytes`]).
    #[serde(with = "bytesize")]
    pub segment_bytes: u64,
    /// Reliable mode: how long the first record of a group waits for others to share its
    /// fsync.
    #[serde(with = "millis")]
    pub group_commit_window: Duration,
}

/// Default directory when nothing else is configured (the daemon prefers `$SC4S_VAR`).
pub const DEFAULT_DIR: &str = "/var/lib/sluice/buffer";
/// Smallest accepted `segment_bytes` (and the floor of the effective segment size).
pub const MIN_SEGMENT_BYTES: u64 = 4096;

impl Default for BufferConfig {
    fn default() -> Self {
        BufferConfig {
            dir: PathBuf::from(DEFAULT_DIR),
            // SC4S's floor when its filesystem-based computation comes out negative.
            max_bytes: 5_000_000_000,
            mode: DurabilityMode::Normal,
            flush_interval: Duration::from_millis(500),
            flush_bytes: 16 << 20,
            segment_bytes: 64 << 20,
            group_commit_window: Duration::from_millis(2),
        }
    }
}

impl BufferConfig {
    /// A default configuration for `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        BufferConfig {
            dir: dir.into(),
            ..BufferConfig::default()
        }
    }

    /// Segment size actually used: `segment_bytes`, but at most `max_bytes / 8` (so at
    /// least eight segments fit and finished ones can be reclaimed), and at least
    /// [`MIN_SEGMENT_BYTES`].
    pub fn effective_segment_bytes(&self) -> u64 {
        self.segment_bytes
            .min(self.max_bytes / 8)
            .max(MIN_SEGMENT_BYTES)
    }

    /// Checks value ranges; the error names the setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |setting: &'static str, reason: String| Err(ConfigError { setting, reason });
        if self.dir.as_os_str().is_empty() {
            return bad("dir", "must not be empty".into());
        }
        let min_total = 2 * MIN_SEGMENT_BYTES;
        if self.max_bytes < min_total {
            return bad("max_bytes", format!("must be at least {min_total} bytes"));
        }
        if self.segment_bytes < MIN_SEGMENT_BYTES {
            return bad(
                "segment_bytes",
                format!("must be at least {MIN_SEGMENT_BYTES} bytes"),
            );
        }
        if self.flush_interval.is_zero() || self.flush_interval > Duration::from_secs(3600) {
            return bad(
                "flush_interval",
                "must be more than 0 and at most 3600000 ms".into(),
            );
        }
        if self.flush_bytes == 0 {
            return bad("flush_bytes", "must be more than 0".into());
        }
        if self.group_commit_window > Duration::from_secs(1) {
            return bad("group_commit_window", "must be at most 1000 ms".into());
        }
        Ok(())
    }

    /// Most bytes that may wait in memory for the writer thread: `2 × flush_bytes`, at
    /// least 1 MiB.
    pub fn max_pending_bytes(&self) -> u64 {
        self.flush_bytes.saturating_mul(2).max(1 << 20)
    }

    /// Largest payload (plus offsets table) one record can carry with these settings.
    pub fn max_record_body(&self) -> u64 {
        let room = self
            .max_bytes
            .saturating_sub((SEGMENT_HEADER_LEN + RECORD_HEADER_LEN) as u64);
        room.min(crate::format::MAX_RECORD_BODY as u64)
    }
}

mod millis {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        if d.subsec_nanos().is_multiple_of(1_000_000) {
            s.serialize_u64(d.as_millis() as u64)
        } else {
            s.serialize_f64(d.as_secs_f64() * 1000.0)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(d)?;
        if !(ms.is_finite() && (0.0..1e12).contains(&ms)) {
            return Err(serde::de::Error::custom(
                "expected a non-negative number of milliseconds",
            ));
        }
        Ok(Duration::from_secs_f64(ms / 1000.0))
    }
}

/// Parses `4096kb`, `16MiB`, `512M`, `1g` or a plain number of bytes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err("expected a byte count such as 4096kb or 16MiB".into());
    }
    let n: u64 = num.parse().map_err(|_| "number too large".to_string())?;
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "m" | "mb" => 1000 * 1000,
        "g" | "gb" => 1000 * 1000 * 1000,
        "ki" | "kib" => 1 << 10,
        "mi" | "mib" => 1 << 20,
        "gi" | "gib" => 1 << 30,
        other => return Err(format!("unknown size suffix {other:?}")),
    };
    n.checked_mul(mult).ok_or_else(|| "size too large".into())
}

mod bytesize {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(*v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(n),
            Raw::Str(s) => super::parse_bytes(&s).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_with_suffixes_and_defaults() {
        let c: BufferConfig = toml::from_str(
            r#"
            dir = "/tmp/b"
            max_bytes = "2GiB"
            mode = "reliable"
            group_commit_window = 0.5
            "#,
        )
        .unwrap();
        assert_eq!(c.max_bytes, 2 << 30);
        assert_eq!(c.mode, DurabilityMode::Reliable);
        assert_eq!(c.group_commit_window, Duration::from_micros(500));
        assert_eq!(c.flush_interval, BufferConfig::default().flush_interval);
        c.validate().unwrap();
        let back: BufferConfig = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn unknown_fields_are_refused() {
        let e = toml::from_str::<BufferConfig>("max_byte = 5").unwrap_err();
        assert!(e.to_string().contains("max_byte"), "{e}");
    }

    #[test]
    fn validation_names_the_setting() {
        let c = BufferConfig {
            flush_bytes: 0,
            ..BufferConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert_eq!(e.setting, "flush_bytes");
        assert!(e.to_string().contains("flush_bytes"));
    }

    #[test]
    fn segment_size_is_capped_by_max_bytes() {
        let c = BufferConfig {
            max_bytes: 2 << 20,
            ..BufferConfig::default()
        };
        assert_eq!(c.effective_segment_bytes(), 256 << 10);
        assert_eq!(
            BufferConfig::default().effective_segment_bytes(),
            BufferConfig::default().segment_bytes
        );
    }

    #[test]
    fn byte_suffixes() {
        assert_eq!(parse_bytes("4096kb"), Ok(4_096_000));
        assert_eq!(parse_bytes("16MiB"), Ok(16 << 20));
        assert_eq!(parse_bytes("7"), Ok(7));
        assert!(parse_bytes("5 parsecs").is_err());
        assert!(parse_bytes("99999999999999999999").is_err());
    }
}
