//! Where encoded batches go: Splunk HEC, or — with no HEC URL configured — a local
//! JSON-lines file holding exactly the JSON objects HEC would have received, one per line.
//!
//! The file output exists so `sluice run` is useful on a fresh machine with no Splunk, and so
//! an operator can see precisely what would be sent. A batch is released (its window permits
//! returned) only after its bytes were handed to the kernel with `write`; a failed write
//! (disk full, permission) is retried with backoff and the batch is kept, never dropped.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sluice_hec::{AbortSignal, DrainReport, EncodedBatch};

use crate::telemetry::InternalEvent;
use crate::telemetry::events::{Delivered, DeliveryEvents, OutputWriteFailed};

/// The file output's health and counters (delivered events and failed writes, counted by
/// [`Delivered`] and [`OutputWriteFailed`]).
#[derive(Debug, Default)]
pub struct FileStats {
    /// False while the last write failed.
    pub healthy: AtomicBool,
    pub events: DeliveryEvents,
}

impl FileStats {
    /// Counting on `m`'s families, labelled `output="file"`.
    pub fn register(m: &crate::telemetry::Metrics) -> FileStats {
        FileStats {
            healthy: AtomicBool::new(false),
            events: DeliveryEvents::register(m, "file"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot open output file {path}: {source}")]
pub struct FileOpenError {
    path: PathBuf,
    source: std::io::Error,
}

/// Appends batches to a file.
#[derive(Debug)]
pub struct FileOutput {
    path: PathBuf,
    file: File,
    stats: Arc<FileStats>,
}

impl FileOutput {
    /// Opens (creating, appending) the file now, so a bad path is a startup error.
    pub fn open(path: &Path, stats: Arc<FileStats>) -> Result<FileOutput, FileOpenError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| FileOpenError {
                path: path.to_owned(),
                source,
            })?;
        stats.healthy.store(true, Ordering::Relaxed);
        Ok(FileOutput {
            path: path.to_owned(),
            file,
            stats,
        })
    }

    /// Writes batches until the channel is closed and empty, or `abort` fires. Runs on a
    /// blocking thread: file writes are synchronous.
    pub fn run(
        mut self,
        rx: async_channel::Receiver<EncodedBatch>,
        abort: AbortSignal,
    ) -> DrainReport {
        let mut report = DrainReport::default();
        while let Ok(batch) = rx.recv_blocking() {
            if !self.write_with_retry(&batch, &abort) {
                report.undelivered_events += u64::from(batch.events);
                report.undelivered_batches += 1;
                break;
            }
        }
        // Only reached early on abort: count what is left so the daemon can report it.
        while let Ok(batch) = rx.try_recv() {
            report.undelivered_events += u64::from(batch.events);
            report.undelivered_batches += 1;
        }
        report
    }

    fn write_with_retry(&mut self, batch: &EncodedBatch, abort: &AbortSignal) -> bool {
        let mut backoff = Duration::from_millis(100);
        loop {
            // One write per batch: the body plus its terminating newline, so lines from two
            // batches never interleave even if the file is shared.
            let mut buf = Vec::with_capacity(batch.body.len() + 1);
            buf.extend_from_slice(&batch.body);
            buf.push(b'\n');
            match self.file.write_all(&buf) {
                Ok(()) => {
                    Delivered {
                        events: u64::from(batch.events),
                    }
                    .emit(&self.stats.events);
                    self.stats.healthy.store(true, Ordering::Relaxed);
                    return true;
                }
                Err(e) => {
                    self.stats.healthy.store(false, Ordering::Relaxed);
                    OutputWriteFailed {
                        path: &self.path,
                        error: &e,
                        events: batch.events,
                        retry_in: backoff,
                    }
                    .emit(&self.stats.events);
                    if abort.is_aborted() {
                        return false;
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}
