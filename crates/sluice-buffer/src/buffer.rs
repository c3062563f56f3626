//! [`Buffer`]: opening, handles, checkpoint and close.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::watch;
use tracing::error;

use crate::config::BufferConfig;
use crate::dir;
use crate::error::{CloseError, OpenError};
use crate::observe::{BufferEvent, BufferObserver, NoObserver};
use crate::reader::Reader;
use crate::recover::{Recovery, recover};
use crate::state::State;
use crate::stats::BufferStats;
use crate::writer::Writer;

/// State shared by the handles and the flusher thread.
pub(crate) struct Inner {
    pub dir: PathBuf,
    pub config: BufferConfig,
    pub segment_bytes: u64,
    pub state: Mutex<State>,
    /// Wakes the flusher thread.
    pub flusher_cv: Condvar,
    /// Wakes blocking waiters (readers, durability, space, checkpoint).
    pub progress_cv: Condvar,
    /// Wakes async waiters; the value is a change counter, waiters re-check the state.
    pub progress: watch::Sender<u64>,
    /// Told about everything that happens ([`crate::observe`]).
    pub observer: Arc<dyn BufferObserver>,
    /// Holds the directory's flock until the buffer is closed (handles may outlive it, but
    /// they no longer touch the files).
    lock_file: Mutex<Option<File>>,
}

impl Inner {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves counters possibly half-updated, never the
        // files: carrying on is better than taking the whole pipeline down.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn notify_progress(&self) {
        self.progress_cv.notify_all();
        self.progress.send_modify(|g| *g = g.wrapping_add(1));
    }

    pub fn wake_flusher(&self) {
        self.flusher_cv.notify_one();
    }

    /// Blocks on `progress_cv` until `done` holds or `deadline` passes. Returns the guard and
    /// whether `done` held.
    pub fn wait_until<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        deadline: Option<Instant>,
        mut done: impl FnMut(&mut State) -> bool,
    ) -> (MutexGuard<'a, State>, bool) {
        loop {
            if done(&mut st) {
                return (st, true);
            }
            match deadline {
                None => st = self.progress_cv.wait(st).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return (st, false);
                    }
                    st = self
                        .progress_cv
                        .wait_timeout(st, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
    }
}

/// A disk buffer opened on one directory. See the crate docs for the format and guarantees.
///
/// Dropping it closes it like [`Buffer::close`] (errors are logged). [`Writer`]s and
/// [`Reader`]s taken from it stay valid objects but return `Closed`/`None` afterwards.
pub struct Buffer {
    inner: Arc<Inner>,
    flusher: Option<JoinHandle<()>>,
    recovery: Recovery,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("dir", &self.inner.dir)
            .field("mode", &self.inner.config.mode)
            .finish_non_exhaustive()
    }
}

/// How [`Buffer::close`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseReport {
    /// Records that were on disk and not finished by every reader: the next open replays
    /// them.
    pub records_kept: u64,
    pub events_kept: u64,
}

impl Buffer {
    /// Opens (creating if needed) the buffer in `config.dir` for the named readers.
    ///
    /// Takes the directory's lock file, scans the segments a previous run left (replaying
    /// them in order, skipping and counting damage), removes the positions of readers that
    /// are no longer listed, and starts the writer thread. A reader that is new starts at the
    /// oldest record not finished by the others.
    pub fn open(config: BufferConfig, readers: &[&str]) -> Result<Buffer, OpenError> {
        Buffer::open_observed(config, readers, Arc::new(NoObserver))
    }

    /// [`Buffer::open`], telling `observer` about everything that happens from now on
    /// (records found damaged at open included); see [`crate::observe`].
    pub fn open_observed(
        config: BufferConfig,
        readers: &[&str],
        observer: Arc<dyn BufferObserver>,
    ) -> Result<Buffer, OpenError> {
        config.validate()?;
        if readers.is_empty() {
            return Err(OpenError::NoReaders);
        }
        for (i, name) in readers.iter().enumerate() {
            if !dir::valid_reader_name(name) {
                return Err(OpenError::ReaderName {
                    name: (*name).to_owned(),
                });
            }
            if readers[..i].contains(name) {
                return Err(OpenError::DuplicateReader {
                    name: (*name).to_owned(),
                });
            }
        }
        let dir_path = config.dir.clone();
        std::fs::create_dir_all(&dir_path).map_err(|source| OpenError::Dir {
            path: dir_path.clone(),
            source,
        })?;
        let lock = dir::lock(&dir_path)?;
        let (state, recovery) = recover(&dir_path, &config, readers)?;
        if recovery.corrupt_records > 0 {
            observer.observe(BufferEvent::Corrupt {
                records: recovery.corrupt_records,
                events: recovery.corrupt_events,
            });
        }
        let (progress, _) = watch::channel(0u64);
        let inner = Arc::new(Inner {
            dir: dir_path,
            segment_bytes: config.effective_segment_bytes(),
            config,
            state: Mutex::new(state),
            flusher_cv: Condvar::new(),
            progress_cv: Condvar::new(),
            progress,
            observer,
            lock_file: Mutex::new(Some(lock)),
        });
        let thread_inner = Arc::clone(&inner);
        let flusher = std::thread::Builder::new()
            .name("sluice-buffer".into())
            .spawn(move || crate::flusher::run(&thread_inner))
            .map_err(|source| OpenError::Io {
                path: inner.dir.clone(),
                source,
            })?;
        Ok(Buffer {
            inner,
            flusher: Some(flusher),
            recovery,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    pub fn config(&self) -> &BufferConfig {
        &self.inner.config
    }

    /// What the open found on disk.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// A handle for appending; clone it freely (appends from several tasks are ordered by
    /// the id each receives).
    pub fn writer(&self) -> Writer {
        Writer::new(Arc::clone(&self.inner))
    }

    /// The reader with this name, or `None` if it was not passed to `open` or is already
    /// taken. Taking a reader again after dropping it starts it over at its first unfinished
    /// record: records handed out but not acknowledged are handed out again.
    pub fn reader(&self, name: &str) -> Option<Reader> {
        Reader::take(&self.inner, name)
    }

    pub fn stats(&self) -> BufferStats {
        self.inner.lock().stats()
    }

    /// Writes and syncs everything appended so far, persists every reader's position and
    /// deletes finished segments; blocks until done. Fails if the records could not be
    /// written (disk full or failing): they stay queued and the writer keeps retrying.
    pub fn checkpoint(&self) -> Result<(), String> {
        let mut st = self.inner.lock();
        st.checkpoint_requested += 1;
        let want = st.checkpoint_requested;
        let target = st.next_id;
        drop(st);
        self.inner.wake_flusher();
        let st = self.inner.lock();
        let (st, _) = self
            .inner
            .wait_until(st, None, |s| s.checkpoint_done >= want || s.finished);
        if st.committed >= target {
            Ok(())
        } else {
            Err(st
                .last_error
                .clone()
                .unwrap_or_else(|| "disk buffer closed".into()))
        }
    }

    /// Stops accepting appends, writes and syncs what is queued, persists reader positions
    /// and stops the writer thread. Records that could not be written are reported, never
    /// dropped silently.
    pub fn close(mut self) -> Result<CloseReport, CloseError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<CloseReport, CloseError> {
        let Some(handle) = self.flusher.take() else {
            return Ok(CloseReport {
                records_kept: 0,
                events_kept: 0,
            });
        };
        self.inner.lock().closed = true;
        self.inner.wake_flusher();
        self.inner.notify_progress();
        let joined = handle.join();
        self.release_lock();
        let st = self.inner.lock();
        if joined.is_err() {
            return Err(CloseError::Panicked);
        }
        if st.pending_records > 0 {
            return Err(CloseError::Unwritten {
                records: st.pending_records,
                events: st.pending_events,
                reason: st.last_error.clone().unwrap_or_default(),
            });
        }
        Ok(CloseReport {
            records_kept: st.buffered_records,
            events_kept: st.buffered_events,
        })
    }

    fn release_lock(&self) {
        let mut guard = self
            .inner
            .lock_file
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        guard.take();
    }

    /// Stops like `kill -9`: queued records are not written, reader positions not
    /// persisted. For tests of recovery.
    #[cfg(test)]
    pub(crate) fn crash(mut self) {
        if let Some(handle) = self.flusher.take() {
            self.inner.lock().crashed = true;
            self.inner.wake_flusher();
            let _ = handle.join();
            self.release_lock();
            let mut st = self.inner.lock();
            st.closed = true;
            st.pending.clear();
            drop(st);
            self.inner.notify_progress();
        }
    }

    /// Record ids in the index, and each reader's `(cursor, persisted)` (test helper).
    #[cfg(test)]
    pub(crate) fn snapshot(&self) -> (Vec<u64>, Vec<(u64, u64)>) {
        let st = self.inner.lock();
        let ids = st
            .segments
            .values()
            .flat_map(|s| s.records.iter().map(|r| r.id))
            .collect();
        let readers = st.readers.iter().map(|r| (r.cursor, r.persisted)).collect();
        (ids, readers)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            error!(dir = %self.inner.dir.display(), "disk buffer close: {e}");
        }
    }
}
