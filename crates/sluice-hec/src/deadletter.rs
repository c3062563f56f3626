//! The dead-letter file: events HEC refused for good, kept for the operator instead of lost.
//!
//! One JSON object per line:
//!
//! ```json
//! {"time":1764150000.123,"url":"https://idx1:8088/services/collector/event","status":400,
//!  "code":7,"text":"Incorrect index","reason":"incorrect_index","event":{…the HEC event…}}
//! ```
//!
//! `event` is the event exactly as it was sent (HEC JSON); an event that is not valid JSON is
//! written as a string. The file is `hec_rejected.jsonl` in the configured directory
//! (`$SC4S_VAR/dead-letter` by default). When a write would take it past the size cap it is
//! renamed to `hec_rejected.jsonl.1` (replacing the previous one) and a new file is started, so
//! at most twice the cap is on disk. A directory that cannot be written is a startup error
//! ([`DeadLetter::open`]); a write that fails later is counted and logged, and the event is
//! still counted as rejected.
//!
//! Every refused event is reported to the output's observer by reason
//! ([`HecEvent::Refused`]), each write with its outcome ([`HecEvent::DeadLettered`]), and the first refusal of each reason is logged,
//! then at most one line per reason per minute with the number of refusals in between.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tracing::error;

use crate::HecError;
use crate::observe::{HecEvent, HecObserver};

/// File name inside the dead-letter directory.
pub const FILE_NAME: &str = "hec_rejected.jsonl";

/// How long the log stays quiet about one reason after a line about it.
const LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Why HEC refused an event (`sluice_hec_rejected_total{reason}`), from its status and
/// Splunk's code.
pub const REASONS: [&str; 7] = [
    "incorrect_index",
    "invalid_data_format",
    "event_missing",
    "event_blank",
    "indexed_fields",
    "too_large",
    "other",
];

/// The reason label of a refusal.
pub fn reason_of(status: u16, code: Option<i64>) -> &'static str {
    match (status, code) {
        (413, _) => "too_large",
        (_, Some(7)) => "incorrect_index",
        (_, Some(6)) => "invalid_data_format",
        (_, Some(12)) => "event_missing",
        (_, Some(13)) => "event_blank",
        (_, Some(15)) => "indexed_fields",
        _ => "other",
    }
}

fn reason_index(reason: &str) -> usize {
    REASONS
        .iter()
        .position(|r| *r == reason)
        .unwrap_or(REASONS.len() - 1)
}

/// Where and how much.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetterConfig {
    pub dir: PathBuf,
    /// Size cap of the file in bytes; 0 keeps no file (refusals are counted and logged only).
    pub max_bytes: u64,
}

/// One refused event to record.
#[derive(Debug, Clone, Copy)]
pub struct DeadEvent<'a> {
    pub event: &'a [u8],
    pub url: &'a str,
    pub status: u16,
    pub code: Option<i64>,
    pub text: &'a str,
}

#[derive(Debug)]
struct Open {
    file: File,
    len: u64,
}

/// The dead-letter file of one destination.
#[derive(Debug)]
pub struct DeadLetter {
    path: Option<PathBuf>,
    max_bytes: u64,
    file: Mutex<Option<Open>>,
    log: Mutex<[Option<(Instant, u64)>; REASONS.len()]>,
}

fn open_append(path: &Path) -> std::io::Result<Open> {
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let len = file.metadata()?.len();
    Ok(Open { file, len })
}

impl DeadLetter {
    /// Creates the directory if needed and opens the file for appending, so a directory
    /// that cannot be written is found at startup. The error names the path.
    pub fn open(cfg: &DeadLetterConfig) -> Result<DeadLetter, HecError> {
        if cfg.max_bytes == 0 {
            return Ok(DeadLetter::disabled());
        }
        let bad = |path: &Path, e: std::io::Error| HecError::DeadLetter {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(&cfg.dir).map_err(|e| bad(&cfg.dir, e))?;
        let path = cfg.dir.join(FILE_NAME);
        let open = open_append(&path).map_err(|e| bad(&path, e))?;
        Ok(DeadLetter {
            path: Some(path),
            max_bytes: cfg.max_bytes,
            file: Mutex::new(Some(open)),
            log: Mutex::new([None; REASONS.len()]),
        })
    }

    /// Counts and logs refusals, keeps no file.
    pub fn disabled() -> DeadLetter {
        DeadLetter {
            path: None,
            max_bytes: 0,
            file: Mutex::new(None),
            log: Mutex::new([None; REASONS.len()]),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Records `events` refused events: counted by reason, logged (rate-limited), written.
    pub fn record(&self, observer: &dyn HecObserver, events: &[DeadEvent<'_>]) {
        if events.is_empty() {
            return;
        }
        let now = unix_secs();
        let mut buf = Vec::new();
        for ev in events {
            let reason = reason_of(ev.status, ev.code);
            observer.observe(HecEvent::Refused { reason });
            self.log(reason, ev);
            if self.path.is_some() {
                line(&mut buf, now, reason, ev);
            }
        }
        if let Some(path) = &self.path {
            self.write(observer, path, &buf, events.len() as u64);
        }
    }

    fn log(&self, reason: &'static str, ev: &DeadEvent<'_>) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut log[reason_index(reason)];
        let now = Instant::now();
        let suppressed = match slot {
            Some((at, n)) if now.duration_since(*at) < LOG_EVERY => {
                *n += 1;
                return;
            }
            Some((_, n)) => *n,
            None => 0,
        };
        *slot = Some((now, 0));
        drop(log);
        error!(
            reason,
            status = ev.status,
            code = ev.code,
            response = ev.text,
            url = ev.url,
            file = %self.path.as_deref().map_or("(none)".into(), |p| p.display().to_string()),
            suppressed_since_last = suppressed,
            "HEC refused an event for good; it was written to the dead-letter file"
        );
    }

    fn write(&self, observer: &dyn HecObserver, path: &Path, buf: &[u8], events: u64) {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let result = (|| -> std::io::Result<()> {
            if let Some(open) = guard.as_ref()
                && open.len > 0
                && open.len + buf.len() as u64 > self.max_bytes
            {
                let mut old = path.as_os_str().to_owned();
                old.push(".1");
                *guard = None;
                std::fs::rename(path, &old)?;
                tracing::info!(
                    path = %path.display(),
                    max_bytes = self.max_bytes,
                    "the HEC dead-letter file reached its cap; the previous one is now .1"
                );
            }
            if guard.is_none() {
                *guard = Some(open_append(path)?);
            }
            if let Some(open) = guard.as_mut() {
                open.file.write_all(buf)?;
                open.len += buf.len() as u64;
            }
            Ok(())
        })();
        match result {
            Ok(()) => observer.observe(HecEvent::DeadLettered {
                written: events,
                failed: 0,
            }),
            Err(e) => {
                observer.observe(HecEvent::DeadLettered {
                    written: 0,
                    failed: events,
                });
                // Reopened on the next write.
                *guard = None;
                error!(
                    path = %path.display(),
                    error = %e,
                    events,
                    "cannot write the HEC dead-letter file; these refused events are only counted"
                );
            }
        }
    }
}

fn unix_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn line(buf: &mut Vec<u8>, time: f64, reason: &str, ev: &DeadEvent<'_>) {
    let s = |v: &str| serde_json::Value::from(v).to_string();
    buf.extend_from_slice(
        format!(
            "{{\"time\":{time:.3},\"url\":{},\"status\":{},\"code\":{},\"text\":{},\"reason\":{},\"event\":",
            s(ev.url),
            ev.status,
            ev.code.map_or("null".into(), |c| c.to_string()),
            s(ev.text),
            s(reason),
        )
        .as_bytes(),
    );
    let is_json = serde_json::from_slice::<serde::de::IgnoredAny>(ev.event).is_ok()
        && !ev.event.contains(&b'\n');
    if is_json {
        buf.extend_from_slice(ev.event);
    } else {
        buf.extend_from_slice(s(&String::from_utf8_lossy(ev.event)).as_bytes());
    }
    buf.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::testing::Recorder;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "sluice-dl-{name}-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn ev(event: &[u8], code: i64) -> DeadEvent<'_> {
        DeadEvent {
            event,
            url: "http://idx:8088/services/collector/event",
            status: 400,
            code: Some(code),
            text: "Incorrect index",
        }
    }

    #[test]
    fn lines_carry_the_event_and_hec_answer_and_are_counted_by_reason() {
        let dir = tmp("lines");
        let dl = DeadLetter::open(&DeadLetterConfig {
            dir: dir.clone(),
            max_bytes: 1 << 20,
        })
        .unwrap();
        let stats = Recorder::default();
        dl.record(
            &stats,
            &[
                ev(br#"{"event":"a","index":"nope"}"#, 7),
                ev(b"not json", 6),
            ],
        );
        let text = std::fs::read_to_string(dir.join(FILE_NAME)).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["event"]["index"], "nope");
        assert_eq!(lines[0]["code"], 7);
        assert_eq!(lines[0]["status"], 400);
        assert_eq!(lines[0]["reason"], "incorrect_index");
        assert_eq!(lines[0]["url"], "http://idx:8088/services/collector/event");
        assert!(lines[0]["time"].as_f64().unwrap() > 1.7e9);
        assert_eq!(lines[1]["event"], "not json");
        assert_eq!(
            *stats.0.lock().unwrap(),
            [
                "Refused { reason: \"incorrect_index\" }",
                "Refused { reason: \"invalid_data_format\" }",
                "DeadLettered { written: 2, failed: 0 }",
            ]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_cap_rotates_the_file_once() {
        let dir = tmp("cap");
        let dl = DeadLetter::open(&DeadLetterConfig {
            dir: dir.clone(),
            max_bytes: 600,
        })
        .unwrap();
        let stats = Recorder::default();
        let body = format!(r#"{{"event":"{}"}}"#, "x".repeat(200));
        for _ in 0..5 {
            dl.record(&stats, &[ev(body.as_bytes(), 7)]);
        }
        let cur = std::fs::metadata(dir.join(FILE_NAME)).unwrap().len();
        let old = std::fs::metadata(dir.join(format!("{FILE_NAME}.1")))
            .unwrap()
            .len();
        assert!(cur <= 600 && old <= 600, "{cur} {old}");
        assert_eq!(stats.count("DeadLettered { written: 1, failed: 0 }"), 5);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_unwritable_directory_is_an_error_naming_it() {
        let dir = tmp("bad");
        std::fs::create_dir_all(&dir).unwrap();
        // A file where the directory should be.
        let blocker = dir.join("file");
        std::fs::write(&blocker, b"x").unwrap();
        let e = DeadLetter::open(&DeadLetterConfig {
            dir: blocker.join("sub"),
            max_bytes: 10,
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("file/sub"), "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn disabled_counts_without_a_file() {
        let dl = DeadLetter::open(&DeadLetterConfig {
            dir: PathBuf::from("/nonexistent/never"),
            max_bytes: 0,
        })
        .unwrap();
        let stats = Recorder::default();
        dl.record(&stats, &[ev(b"{}", 13)]);
        assert_eq!(stats.count("Refused"), 1);
        assert_eq!(stats.count("DeadLettered"), 0);
        assert!(dl.path().is_none());
    }

    #[test]
    fn reasons_follow_status_and_code() {
        assert_eq!(reason_of(413, None), "too_large");
        assert_eq!(reason_of(400, Some(7)), "incorrect_index");
        assert_eq!(reason_of(400, Some(99)), "other");
        assert_eq!(reason_of(400, None), "other");
    }
}
