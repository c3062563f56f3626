//! The archive destination (SC4S's `d_archive`): every event routed to it is appended to a
//! local file in SC4S's layout under `$SC4S_VAR/archive` (`destinations/archive_file.conf`):
//!
//! * compliance (the default): `<dir>/<sourcetype>/<host>/<YYYY>-<MM>-<DD>-archive.log`;
//! * diode: `<dir>/<YYYY>/<MM>/<DD>/<vendor>_<product>_<YYYYMMDDhhmm>.log`.
//!
//! The date is the event's time (UTC). Each line is the event as it goes to HEC (one JSON
//! object), not syslog-ng's EWMM format: the archive holds exactly what Splunk receives.
//!
//! It runs as a destination of its own, on a blocking thread: the receivers only add the
//! archive's bit to an event's destination set. Host, sourcetype, vendor and product come
//! from the encoded event; a value that could leave the directory (`/`, `..`) is replaced
//! by `_`. A write that fails completes its events as rejected: they are counted
//! (`sluice_dropped_total{reason="archive_rejected"}` and
//! `sluice_archive_write_errors_total`) and logged with a rate limit; the other
//! destinations are not affected.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use sluice_proto::batch::EncodedBatch;
use sluice_proto::delivery::{AbandonReason, Completion, Delivery, Rejection};
use tokio_util::sync::CancellationToken;

use super::start::{Started, start_destination};
use super::{Output, OutputTask};
use crate::config::{ArchiveMode, DestPlan};
use crate::telemetry::RateLimit;
use crate::telemetry::state::ARCHIVE_WRITE_ERRORS;

/// Files kept open at once; more are closed (they are reopened on the next event).
const OPEN_FILES: usize = 256;

#[derive(Debug, thiserror::Error)]
#[error("cannot create the archive directory {dir}: {source}")]
pub struct ArchiveOpenError {
    dir: PathBuf,
    source: std::io::Error,
}

/// Appends events to the archive files.
#[derive(Debug)]
pub struct ArchiveOutput {
    dir: PathBuf,
    mode: ArchiveMode,
    files: HashMap<PathBuf, File>,
    log: RateLimit,
}

/// What the archive layout needs of an encoded event.
#[derive(serde::Deserialize, Default)]
struct Meta<'a> {
    #[serde(borrow, default)]
    time: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    host: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    sourcetype: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    fields: Option<Fields<'a>>,
}

#[derive(serde::Deserialize, Default)]
struct Fields<'a> {
    #[serde(borrow, default)]
    sc4s_vendor: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    sc4s_product: Option<std::borrow::Cow<'a, str>>,
}

/// A path component from an event value: never empty, never `.`/`..`, no separator.
fn component(v: Option<&str>) -> String {
    let v = v.unwrap_or("").trim();
    let s: String = v
        .chars()
        .map(|c| if c == '/' || c == '\0' { '_' } else { c })
        .collect();
    match s.as_str() {
        "" => "unknown".into(),
        "." | ".." => "_".into(),
        _ => s,
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl ArchiveOutput {
    /// Creates `dir` now, so a directory that cannot be written is a startup error.
    pub fn open(dir: &Path, mode: ArchiveMode) -> Result<ArchiveOutput, ArchiveOpenError> {
        std::fs::create_dir_all(dir).map_err(|source| ArchiveOpenError {
            dir: dir.to_owned(),
            source,
        })?;
        let probe = dir.join(".sluice-archive-probe");
        File::create(&probe)
            .and_then(|_| std::fs::remove_file(&probe))
            .map_err(|source| ArchiveOpenError {
                dir: dir.to_owned(),
                source,
            })?;
        Ok(ArchiveOutput {
            dir: dir.to_owned(),
            mode,
            files: HashMap::new(),
            log: RateLimit::new(Duration::from_secs(10)),
        })
    }

    /// The file an encoded event goes to.
    pub fn path_of(&self, event: &[u8]) -> PathBuf {
        let meta: Meta<'_> = serde_json::from_slice(event).unwrap_or_default();
        let secs = meta
            .time
            .as_deref()
            .and_then(|t| t.split('.').next())
            .and_then(|t| t.parse::<i64>().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64)
            });
        let (y, m, d) = civil(secs.div_euclid(86_400));
        match self.mode {
            ArchiveMode::Compliance => self
                .dir
                .join(component(meta.sourcetype.as_deref()))
                .join(component(meta.host.as_deref()))
                .join(format!("{y:04}-{m:02}-{d:02}-archive.log")),
            ArchiveMode::Diode => {
                let f = meta.fields.unwrap_or_default();
                let of_day = secs.rem_euclid(86_400);
                let (hh, mm) = (of_day / 3600, (of_day % 3600) / 60);
                self.dir
                    .join(format!("{y:04}"))
                    .join(format!("{m:02}"))
                    .join(format!("{d:02}"))
                    .join(format!(
                        "{}_{}_{y:04}{m:02}{d:02}{hh:02}{mm:02}.log",
                        component(f.sc4s_vendor.as_deref()),
                        component(f.sc4s_product.as_deref())
                    ))
            }
        }
    }

    fn append(&mut self, path: PathBuf, line: &[u8]) -> std::io::Result<()> {
        if !self.files.contains_key(&path) {
            if self.files.len() >= OPEN_FILES {
                self.files.clear();
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let f = OpenOptions::new().create(true).append(true).open(&path)?;
            self.files.insert(path.clone(), f);
        }
        let f = self.files.get_mut(&path).expect("inserted above");
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        let r = f.write_all(&buf);
        if r.is_err() {
            // Reopened on the next event (the directory may have been removed).
            self.files.remove(&path);
        }
        r
    }

    /// Writes every event of `batch`; the completion names the ones that failed.
    pub fn write_batch(&mut self, batch: &EncodedBatch) -> Completion {
        let mut failed = Vec::new();
        for i in 0..batch.events() {
            let Some(ev) = batch.event(i) else { continue };
            let path = self.path_of(ev);
            if let Err(e) = self.append(path.clone(), ev) {
                ARCHIVE_WRITE_ERRORS.fetch_add(1, Relaxed);
                if let Some(suppressed) = self.log.allow() {
                    tracing::error!(
                        path = %path.display(),
                        error = %e,
                        suppressed,
                        "cannot write to the archive; the event is not archived (counted as archive_rejected)"
                    );
                }
                failed.push(Rejection {
                    index: i,
                    code: None,
                    text: format!("archive {}: {e}", path.display()),
                });
            }
        }
        if failed.is_empty() {
            Completion::Delivered
        } else {
            Completion::Rejected { events: failed }
        }
    }

    fn run_blocking(mut self, rx: async_channel::Receiver<Delivery>, abort: CancellationToken) {
        while let Ok(d) = rx.recv_blocking() {
            let c = self.write_batch(d.batch());
            d.complete(c);
            if abort.is_cancelled() {
                break;
            }
        }
        if abort.is_cancelled() {
            rx.close();
            while let Ok(d) = rx.try_recv() {
                d.complete(Completion::Abandoned {
                    reason: AbandonReason::Shutdown,
                });
            }
        }
    }
}

impl Output for ArchiveOutput {
    fn kind(&self) -> &'static str {
        "archive"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        super::blocking_task("archive", move || self.run_blocking(queue, abort))
    }
}

/// Starts the archive destination (`d_archive`).
pub(super) fn start(d: &DestPlan, dir: &Path, mode: ArchiveMode) -> anyhow::Result<Started> {
    let archive = ArchiveOutput::open(dir, mode)
        .map_err(|e| anyhow::anyhow!("{e}; set SC4S_VAR or archive.dir to a writable directory"))?;
    tracing::info!(dir = %dir.display(), mode = ?mode, "archiving events (d_archive)");
    let (dest, submit) = start_destination(&d.name, Box::new(archive), None)?;
    Ok(Started {
        dest,
        submit,
        health: None,
        hec: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn civil_dates() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(19_723), (2024, 1, 1));
        assert_eq!(civil(19_782), (2024, 2, 29));
        assert_eq!(civil(-1), (1969, 12, 31));
    }

    #[test]
    fn compliance_and_diode_layouts_and_no_escape() {
        let dir = tempfile::tempdir().unwrap();
        let a = ArchiveOutput::open(dir.path(), ArchiveMode::Compliance).unwrap();
        let ev = br#"{"time":"1710166925.412","host":"web-01","sourcetype":"cisco:asa","event":"x","fields":{"sc4s_vendor":"cisco","sc4s_product":"asa"}}"#;
        assert_eq!(
            a.path_of(ev),
            dir.path().join("cisco:asa/web-01/2024-03-11-archive.log")
        );
        let bad = br#"{"time":"0","host":"../../etc","sourcetype":"..","event":"x"}"#;
        let p = a.path_of(bad);
        assert!(p.starts_with(dir.path()), "{}", p.display());
        assert_eq!(p, dir.path().join("_/.._.._etc/1970-01-01-archive.log"));

        let d = ArchiveOutput::open(dir.path(), ArchiveMode::Diode).unwrap();
        assert_eq!(
            d.path_of(ev),
            dir.path().join("2024/03/11/cisco_asa_202403111422.log")
        );
    }

    #[test]
    fn writes_lines_and_rejects_what_it_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = ArchiveOutput::open(dir.path(), ArchiveMode::Compliance).unwrap();
        let body = Bytes::from_static(
            b"{\"time\":\"0\",\"host\":\"h\",\"sourcetype\":\"st\",\"event\":\"a\"}\n{\"time\":\"0\",\"host\":\"h\",\"sourcetype\":\"st\",\"event\":\"b\"}",
        );
        let batch = EncodedBatch::from_lines(body).unwrap();
        assert_eq!(a.write_batch(&batch), Completion::Delivered);
        let text = std::fs::read_to_string(dir.path().join("st/h/1970-01-01-archive.log")).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().all(|l| l.starts_with('{')));

        // A file where the host directory should be: that event cannot be written.
        std::fs::write(dir.path().join("st/blocked"), b"").unwrap();
        let body = Bytes::from_static(
            b"{\"time\":\"0\",\"host\":\"blocked\",\"sourcetype\":\"st\",\"event\":\"a\"}\n{\"time\":\"0\",\"host\":\"h\",\"sourcetype\":\"st\",\"event\":\"b\"}",
        );
        let before = ARCHIVE_WRITE_ERRORS.load(Relaxed);
        match a.write_batch(&EncodedBatch::from_lines(body).unwrap()) {
            Completion::Rejected { events } => {
                assert_eq!(events.len(), 1);
                assert_eq!(events[0].index, 0);
            }
            c => panic!("{c:?}"),
        }
        assert!(ARCHIVE_WRITE_ERRORS.load(Relaxed) > before);
    }
}
