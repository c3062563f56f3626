//! The JSON-lines file output, used when no HEC URL is configured: a local file holding
//! exactly the JSON objects HEC would have received, one per line.
//!
//! It exists so `sluice run` is useful on a fresh machine with no Splunk, and so an operator
//! can see precisely what would be sent. A delivery completes as `Delivered` (releasing its
//! window permits) only after its bytes were handed to the kernel with `write`; a failed
//! write (disk full, permission) is retried with backoff and the batch is kept, never
//! dropped. Only the drain timeout ends the retries: the delivery then completes as
//! `Abandoned { reason: Shutdown }`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sluice_proto::batch::EncodedBatch;
use sluice_proto::delivery::{AbandonReason, Completion, Delivery};
use tokio_util::sync::CancellationToken;

use super::start::{Started, start_destination};
use super::{Output, OutputTask};
use crate::config::DestPlan;

use crate::telemetry::InternalEvent;
use crate::telemetry::events::{DeliveryEvents, OutputWriteFailed};
use crate::telemetry::state::{OutputState, Problem};

/// The file output's health, and its failed writes (counted by [`OutputWriteFailed`]; what it
/// delivered is counted by its destination, from the completions).
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
            events: DeliveryEvents::register(m),
        }
    }
}

impl OutputState for FileStats {
    fn problem(&self) -> Option<Problem> {
        (!self.healthy.load(Ordering::Relaxed)).then_some(Problem {
            what: "cannot write the output file",
            reason: None,
            hint: None,
        })
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

    /// Writes deliveries until the queue is closed and empty, or `abort` fires. Runs on a
    /// blocking thread: file writes are synchronous.
    pub fn run_blocking(mut self, rx: async_channel::Receiver<Delivery>, abort: CancellationToken) {
        while let Ok(delivery) = rx.recv_blocking() {
            if self.write_with_retry(delivery.batch(), &abort) {
                delivery.complete(Completion::Delivered);
            } else {
                delivery.complete(Completion::Abandoned {
                    reason: AbandonReason::Shutdown,
                });
                break;
            }
        }
        // Only reached early on abort: what is still queued is not written.
        if abort.is_cancelled() {
            rx.close();
            while let Ok(d) = rx.try_recv() {
                d.complete(Completion::Abandoned {
                    reason: AbandonReason::Shutdown,
                });
            }
        }
    }

    fn write_with_retry(&mut self, batch: &EncodedBatch, abort: &CancellationToken) -> bool {
        let mut backoff = Duration::from_millis(100);
        loop {
            // One write per batch: the body plus its terminating newline, so lines from two
            // batches never interleave even if the file is shared.
            let mut buf = Vec::with_capacity(batch.body().len() + 1);
            buf.extend_from_slice(batch.body());
            buf.push(b'\n');
            match self.file.write_all(&buf) {
                Ok(()) => {
                    self.stats.healthy.store(true, Ordering::Relaxed);
                    return true;
                }
                Err(e) => {
                    self.stats.healthy.store(false, Ordering::Relaxed);
                    OutputWriteFailed {
                        path: &self.path,
                        error: &e,
                        events: batch.events(),
                        retry_in: backoff,
                    }
                    .emit(&self.stats.events);
                    if abort.is_cancelled() {
                        return false;
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }
}

impl Output for FileOutput {
    fn kind(&self) -> &'static str {
        "file"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        super::blocking_task("file", move || self.run_blocking(queue, abort))
    }
}

/// Starts the file destination (no HEC URL configured): events as JSON lines.
pub(super) fn start(d: &DestPlan, path: &Path) -> anyhow::Result<Started> {
    let stats = Arc::new(FileStats::register(crate::telemetry::metrics()));
    let file = FileOutput::open(path, stats.clone())?;
    tracing::info!(
        path = %path.display(),
        "no HEC URL configured (SC4S_DEST_SPLUNK_HEC_DEFAULT_URL): writing events as JSON lines"
    );
    let (dest, submit) = start_destination(&d.name, Box::new(file), None)?;
    Ok(Started {
        dest,
        submit,
        health: Some(stats),
        hec: None,
    })
}
