//! The writer thread: writes queued records, fsyncs them (the group commit), persists reader
//! positions and deletes finished segments.
//!
//! It is the only code that writes segment files. Appenders only queue bytes at offsets they
//! have already assigned, so a failed write (ENOSPC) is undone by truncating the touched
//! files back to their last synced length and putting the chunks back at the head of the
//! queue: the retry writes the same bytes to the same places.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{self, IoSlice, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tracing::{error, info, warn};

use crate::buffer::Inner;
use crate::config::DurabilityMode;
use crate::dir;
use crate::error::FullReason;
use crate::format::PositionSlot;
use crate::observe::BufferEvent;
use crate::state::{Chunk, State};

const MIN_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Open segment files and how much of each is known to be on disk.
#[derive(Default)]
struct Files {
    open: HashMap<u64, File>,
    synced_len: HashMap<u64, u64>,
    /// A segment was created since the directory was last synced.
    dir_dirty: bool,
}

struct WriteFailure {
    path: PathBuf,
    error: io::Error,
}

/// What one write round achieved: `done` leading chunks are written and synced.
struct Outcome {
    done: usize,
    write: Duration,
    sync: Duration,
    failure: Option<WriteFailure>,
}

/// When the queued records are due under the configured policy, if any are queued.
fn policy_deadline(inner: &Inner, st: &State) -> Option<Instant> {
    let first = st.first_pending_at?;
    if st.pending_bytes >= inner.config.flush_bytes {
        return Some(first);
    }
    let wait = match inner.config.mode {
        DurabilityMode::Normal => inner.config.flush_interval,
        DurabilityMode::Reliable => inner.config.group_commit_window,
    };
    Some(first + wait)
}

enum Work {
    Crash,
    Cycle {
        chunks: Option<Vec<Chunk>>,
        first_at: Option<Instant>,
        maintain: bool,
        checkpoint: u64,
        closing: bool,
    },
}

fn next_work(inner: &Inner, next_maintenance: Instant) -> Work {
    let mut st = inner.lock();
    loop {
        if st.crashed {
            return Work::Crash;
        }
        let now = Instant::now();
        let closing = st.closed;
        let checkpoint = st.checkpoint_requested;
        let wants_checkpoint = checkpoint > st.checkpoint_done;
        let retry_ok = closing || st.retry_at.is_none_or(|t| now >= t);
        let deadline = policy_deadline(inner, &st);
        let flush = !st.pending.is_empty()
            && retry_ok
            && (closing
                || wants_checkpoint
                || st.flush_requested
                || deadline.is_some_and(|d| now >= d));
        let maintain = closing || wants_checkpoint || st.maintain_now || now >= next_maintenance;
        if flush || maintain {
            let chunks = flush.then(|| {
                st.flush_requested = false;
                Vec::from(std::mem::take(&mut st.pending))
            });
            let first_at = if flush {
                st.first_pending_at.take()
            } else {
                None
            };
            return Work::Cycle {
                chunks,
                first_at,
                maintain,
                checkpoint,
                closing,
            };
        }
        let mut wake = next_maintenance;
        if !st.pending.is_empty() {
            if let Some(d) = deadline {
                wake = wake.min(d);
            }
            if let Some(r) = st.retry_at {
                wake = wake.min(r);
            }
        }
        st = inner
            .flusher_cv
            .wait_timeout(st, wake.saturating_duration_since(now))
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

pub(crate) fn run(inner: &Inner) {
    let mut files = Files::default();
    let mut next_maintenance = Instant::now() + inner.config.flush_interval;
    let mut backoff = MIN_BACKOFF;
    loop {
        let Work::Cycle {
            chunks,
            first_at,
            maintain,
            checkpoint,
            closing,
        } = next_work(inner, next_maintenance)
        else {
            let mut st = inner.lock();
            st.finished = true;
            drop(st);
            inner.notify_progress();
            return;
        };
        if let Some(mut chunks) = chunks {
            let out = write_chunks(inner, &mut files, &chunks);
            let mut st = inner.lock();
            if out.done > 0 {
                let (records, events, bytes) = chunks[..out.done].iter().fold((0, 0, 0), |a, c| {
                    (a.0 + c.records, a.1 + c.events, a.2 + c.len())
                });
                st.committed = st.committed.max(chunks[out.done - 1].end_id);
                st.pending_bytes -= bytes;
                st.pending_records -= records;
                st.pending_events -= events;
                inner.observer.observe(BufferEvent::Flushed {
                    records,
                    write: out.write,
                    fsync: out.sync,
                    commit: first_at.map(|f| f.elapsed()),
                });
            }
            match out.failure {
                None => {
                    if st.refused == Some(FullReason::Backlog) {
                        st.refused = None;
                    }
                    if st.last_error.take().is_some() {
                        info!(dir = %inner.dir.display(), "disk buffer: writes succeed again");
                    }
                    st.disk_full = false;
                    st.retry_at = None;
                    backoff = MIN_BACKOFF;
                    let active = st.active;
                    files.open.retain(|id, _| Some(*id) == active);
                    files.synced_len.retain(|id, _| Some(*id) == active);
                }
                Some(f) => {
                    let full = f.error.kind() == io::ErrorKind::StorageFull;
                    let msg = format!("{}: {}", f.path.display(), f.error);
                    if st.last_error.as_deref() != Some(msg.as_str()) {
                        if full {
                            warn!(
                                file = %f.path.display(),
                                "disk buffer: no space left; appends are refused until space frees \
                                 (queued records are kept and retried)"
                            );
                        } else {
                            error!(
                                file = %f.path.display(), error = %f.error,
                                "disk buffer: write failed; appends are refused, retrying"
                            );
                        }
                    }
                    inner.observer.observe(BufferEvent::WriteFailed {
                        file: &f.path,
                        disk_full: full,
                    });
                    st.disk_full = full;
                    st.last_error = Some(msg);
                    st.retry_at = Some(Instant::now() + backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    // Put what was not written back in front of anything appended meanwhile.
                    let mut back: VecDeque<Chunk> = chunks.split_off(out.done).into();
                    // Close what is finished: a deleted segment still open keeps its space.
                    let active = st.active;
                    let keep =
                        |id: &u64| Some(*id) == active || back.iter().any(|c| c.segment == *id);
                    files.open.retain(|id, _| keep(id));
                    files.synced_len.retain(|id, _| keep(id));
                    if !back.is_empty() {
                        back.append(&mut st.pending);
                        st.pending = back;
                        st.first_pending_at = match (first_at, st.first_pending_at) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                }
            }
            drop(st);
            inner.notify_progress();
        }
        if maintain {
            maintain_positions_and_segments(inner);
            next_maintenance = Instant::now() + inner.config.flush_interval;
            let mut st = inner.lock();
            st.maintain_now = false;
            st.checkpoint_done = st.checkpoint_done.max(checkpoint);
            if closing {
                st.finished = true;
            }
            drop(st);
            inner.notify_progress();
        }
        if closing {
            return;
        }
    }
}

fn open_segment_file(inner: &Inner, id: u64) -> io::Result<(PathBuf, File)> {
    let path = inner.dir.join(dir::segment_name(id));
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    Ok((path, f))
}

/// Writes the chunks in order, then syncs every touched file: one fsync per file covers
/// every record of the group. If a write fails part-way (typically ENOSPC), the chunks that
/// were written whole are still synced and committed, the partial one is cut off, and the
/// rest is left for the retry: a full disk then still makes progress as readers free space,
/// instead of retrying an ever larger group that can never fit.
fn write_chunks(inner: &Inner, files: &mut Files, chunks: &[Chunk]) -> Outcome {
    let started = Instant::now();
    let seg_path = |seg: u64| inner.dir.join(dir::segment_name(seg));
    let mut touched: Vec<u64> = Vec::new();
    let mut done = 0;
    let mut failure = None;
    let mut i = 0;
    while i < chunks.len() {
        let seg = chunks[i].segment;
        let start = chunks[i].offset;
        // A run of chunks contiguous in one segment goes out as one vectored write.
        let mut j = i + 1;
        let mut end = start + chunks[i].len();
        while j < chunks.len() && chunks[j].segment == seg && chunks[j].offset == end {
            end += chunks[j].len();
            j += 1;
        }
        if !files.open.contains_key(&seg) {
            match open_segment_file(inner, seg) {
                Ok((_, f)) => {
                    files.dir_dirty |= start == 0;
                    files.open.insert(seg, f);
                }
                Err(error) => {
                    failure = Some(WriteFailure {
                        path: seg_path(seg),
                        error,
                    });
                    break;
                }
            }
        }
        let Some(file) = files.open.get_mut(&seg) else {
            failure = Some(WriteFailure {
                path: seg_path(seg),
                error: io::Error::other("segment file handle missing"),
            });
            break;
        };
        if !touched.contains(&seg) {
            touched.push(seg);
        }
        match write_run(file, start, &chunks[i..j]) {
            Ok(()) => done = j,
            Err((written, error)) => {
                let mut whole = 0u64;
                let mut k = i;
                while k < j && whole + chunks[k].len() <= written {
                    whole += chunks[k].len();
                    k += 1;
                }
                done = k;
                if let Err(e) = file.set_len(start + whole) {
                    warn!(
                        file = %seg_path(seg).display(), error = %e,
                        "disk buffer: could not cut a partial write back; the next open skips it"
                    );
                }
                failure = Some(WriteFailure {
                    path: seg_path(seg),
                    error,
                });
                break;
            }
        }
        i = j;
    }
    let written = Instant::now();
    let synced = (|| {
        for &seg in &touched {
            if let Some(f) = files.open.get(&seg) {
                f.sync_data().map_err(|error| WriteFailure {
                    path: seg_path(seg),
                    error,
                })?;
            }
        }
        if files.dir_dirty {
            dir::sync_dir(&inner.dir).map_err(|error| WriteFailure {
                path: inner.dir.clone(),
                error,
            })?;
            files.dir_dirty = false;
        }
        Ok(())
    })();
    if let Err(f) = synced {
        // After a failed fsync the kernel's view of these pages is unknown: forget the
        // whole round and rewrite it from the last synced length.
        for seg in touched {
            let keep = files.synced_len.get(&seg).copied().unwrap_or(0);
            if let Some(file) = files.open.get(&seg)
                && let Err(e) = file.set_len(keep)
            {
                warn!(
                    file = %seg_path(seg).display(), error = %e,
                    "disk buffer: could not cut a failed write back; the next open skips it"
                );
            }
        }
        return Outcome {
            done: 0,
            write: written - started,
            sync: written.elapsed(),
            failure: Some(f),
        };
    }
    for c in &chunks[..done] {
        let e = files.synced_len.entry(c.segment).or_insert(0);
        *e = (*e).max(c.offset + c.len());
    }
    Outcome {
        done,
        write: written - started,
        sync: written.elapsed(),
        failure,
    }
}

/// Writes a run of chunks at `offset`; on error, reports how many bytes did get written.
fn write_run(file: &mut File, offset: u64, chunks: &[Chunk]) -> Result<(), (u64, io::Error)> {
    file.seek(SeekFrom::Start(offset)).map_err(|e| (0, e))?;
    let mut slices: Vec<IoSlice<'_>> = chunks
        .iter()
        .flat_map(|c| [&c.head[..], &c.tail[..]])
        .filter(|b| !b.is_empty())
        .map(IoSlice::new)
        .collect();
    let mut bufs = &mut slices[..];
    let mut written = 0u64;
    while !bufs.is_empty() {
        match file.write_vectored(bufs) {
            Ok(0) => return Err((written, io::ErrorKind::WriteZero.into())),
            Ok(n) => {
                written += n as u64;
                IoSlice::advance_slices(&mut bufs, n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((written, e)),
        }
    }
    Ok(())
}

/// Persists changed reader positions, then deletes segments every reader has finished
/// according to the persisted positions (so a crash can never find a position pointing
/// into a deleted segment's records it still needs).
fn maintain_positions_and_segments(inner: &Inner) {
    let writes: Vec<(usize, PathBuf, PositionSlot)> = {
        let st = inner.lock();
        st.readers
            .iter()
            .enumerate()
            .filter(|(_, r)| r.frontier() != r.persisted)
            .map(|(i, r)| {
                (
                    i,
                    r.path.clone(),
                    PositionSlot {
                        generation: r.generation + 1,
                        resume_from: r.frontier(),
                    },
                )
            })
            .collect()
    };
    let mut done = Vec::with_capacity(writes.len());
    for (i, path, slot) in writes {
        match dir::write_position(&path, slot) {
            Ok(()) => done.push((i, slot)),
            Err(e) => warn!(
                file = %path.display(), error = %e,
                "disk buffer: could not persist a reader position; retrying next interval"
            ),
        }
    }
    let deletions: Vec<(u64, PathBuf)> = {
        let mut st = inner.lock();
        for (i, slot) in done {
            if let Some(r) = st.readers.get_mut(i) {
                r.persisted = slot.resume_from;
                r.generation = slot.generation;
            }
        }
        let persisted = st.readers.iter().map(|r| r.persisted).min().unwrap_or(0);
        let active = st.active;
        st.segments
            .values()
            .filter(|s| Some(s.id) != active && State::segment_finished(s, persisted))
            .map(|s| (s.id, s.path.clone()))
            .collect()
    };
    if deletions.is_empty() {
        return;
    }
    let mut removed = Vec::with_capacity(deletions.len());
    for (id, path) in deletions {
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(id),
            Err(e) if e.kind() == io::ErrorKind::NotFound => removed.push(id),
            Err(e) => warn!(
                file = %path.display(), error = %e,
                "disk buffer: could not delete a finished segment; retrying next interval"
            ),
        }
    }
    let mut st = inner.lock();
    for id in &removed {
        if let Some(seg) = st.segments.remove(id) {
            st.bytes -= seg.len;
            inner.observer.observe(BufferEvent::SegmentDeleted);
        }
    }
    if !removed.is_empty() {
        if st.refused == Some(FullReason::MaxBytes) {
            st.refused = None;
        }
        if st.disk_full {
            // Space was freed on this filesystem: retry the queued write now.
            st.retry_at = Some(Instant::now());
            inner.wake_flusher();
        }
    }
}
