//! Opening a buffer directory: scan what a previous run (or crash) left, account for damage,
//! repair the torn tail, and build the in-memory index.

use std::collections::{BTreeMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use tracing::{info, warn};

use crate::config::BufferConfig;
use crate::dir::{self, reader_file_name, segment_name};
use crate::error::OpenError;
use crate::format::{HeaderProblem, PositionSlot};
use crate::scan::{FileSource, SegmentScan, Verify, scan_segment};
use crate::state::{ReaderSlot, RecMeta, SegmentMeta, State};

/// What [`Buffer::open`](crate::Buffer::open) found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Segment files found.
    pub segments: usize,
    /// Records (and events) some reader had not finished: they will be read again.
    pub replayed_records: u64,
    pub replayed_events: u64,
    /// Records lost to damage (each logged with file and offset).
    pub corrupt_records: u64,
    /// Events of those records, where their headers could still be read (a torn tail, a body
    /// with no intact event); the others' event counts went with their headers.
    pub corrupt_events: u64,
    /// Damaged tails cut off the newest segment (a write torn by a crash).
    pub truncated_tails: u32,
    /// Position files of readers no longer configured, removed at open.
    pub retired_readers: Vec<RetiredReader>,
}

/// A reader whose position file was found but which was not passed to `open`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetiredReader {
    pub name: String,
    /// Records it had not finished; they are no longer kept for it.
    pub unfinished_records: u64,
}

struct Scanned {
    id: u64,
    path: PathBuf,
    scan: SegmentScan,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> OpenError + '_ {
    move |source| OpenError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn scan_all(dir: &Path, ids: &[u64]) -> Result<Vec<Scanned>, OpenError> {
    let mut out = Vec::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        let path = dir.join(segment_name(id));
        let file = File::open(&path).map_err(io_err(&path))?;
        let len = file.metadata().map_err(io_err(&path))?.len();
        // Only the newest segment can have a torn tail; older ones were complete when the
        // writer moved on, so their bodies are checked lazily by the readers.
        let verify = if i + 1 == ids.len() {
            Verify::Full
        } else {
            Verify::Headers
        };
        let scan = scan_segment(&FileSource { file: &file, len }, verify).map_err(io_err(&path))?;
        match scan.header {
            Err(HeaderProblem::Version(version)) => {
                return Err(OpenError::UnsupportedVersion { path, version });
            }
            Err(HeaderProblem::Corrupt) => warn!(
                file = %path.display(), offset = 0,
                "disk buffer: segment header damaged; keeping the records that pass their own checksums"
            ),
            Err(HeaderProblem::Short) if len > 0 => warn!(
                file = %path.display(), offset = 0, len,
                "disk buffer: segment shorter than its header"
            ),
            Ok(h) if h.segment_id != id => warn!(
                file = %path.display(), header_id = h.segment_id,
                "disk buffer: segment header names another segment id"
            ),
            _ => {}
        }
        for d in &scan.damage {
            warn!(
                file = %path.display(), offset = d.offset, len = d.len,
                "disk buffer: damaged bytes skipped: {}", d.what
            );
        }
        out.push(Scanned { id, path, scan });
    }
    Ok(out)
}

/// Reads a directory's state. Errors leave the directory untouched; repairs (tail
/// truncation, new position files, retired readers) happen only once everything was read.
pub(crate) fn recover(
    dir: &Path,
    cfg: &BufferConfig,
    names: &[&str],
) -> Result<(State, Recovery), OpenError> {
    let listing = dir::list(dir)?;
    let mut known: BTreeMap<String, PositionSlot> = BTreeMap::new();
    let mut retired: Vec<(String, Option<u64>)> = Vec::new();
    for r in &listing.readers {
        let path = dir.join(reader_file_name(r));
        let slot = dir::read_position(&path).map_err(io_err(&path))?;
        if !names.contains(&r.as_str()) {
            retired.push((r.clone(), slot.map(|s| s.resume_from)));
        } else if let Some(slot) = slot {
            known.insert(r.clone(), slot);
        } else {
            warn!(
                file = %path.display(),
                "disk buffer: reader position file damaged; the reader restarts at the oldest \
                 unfinished record (duplicates possible, nothing lost)"
            );
        }
    }

    let scans = scan_all(dir, &listing.segments)?;

    let first_present = scans
        .iter()
        .flat_map(|s| s.scan.records.first())
        .map(|r| r.id)
        .next();
    let max_scanned = scans
        .iter()
        .flat_map(|s| s.scan.records.last())
        .map(|r| r.id + 1)
        .max()
        .unwrap_or(0);
    let max_header = scans
        .iter()
        .filter_map(|s| s.scan.header.ok())
        .map(|h| h.first_record_id)
        .max()
        .unwrap_or(0);
    let max_resume = known.values().map(|s| s.resume_from).max().unwrap_or(0);
    let next_id = max_scanned.max(max_header).max(max_resume);
    // Everything below g0 is finished by every configured reader that has a position.
    let g0 = known
        .values()
        .map(|s| s.resume_from)
        .min()
        .or(first_present)
        .unwrap_or(next_id);

    let mut report = Recovery {
        segments: scans.len(),
        ..Recovery::default()
    };
    // Records rejected with an intact header: their event counts are known.
    let rejected: BTreeMap<u64, u32> = scans
        .iter()
        .flat_map(|s| &s.scan.damage)
        .filter_map(|d| d.record)
        .map(|r| (r.id, r.events))
        .collect();
    let known_events = |ids: std::ops::Range<u64>| -> u64 {
        rejected.range(ids).map(|(_, &e)| u64::from(e)).sum()
    };
    let mut lost = 0u64;
    let mut lost_events = 0u64;
    let mut expected = g0;
    let mut last_indexed: Option<u64> = None;
    let mut segments = BTreeMap::new();
    let mut truncate: Option<(PathBuf, u64)> = None;
    let n_scans = scans.len();
    for (i, s) in scans.into_iter().enumerate() {
        if let Ok(h) = s.scan.header
            && h.first_record_id > expected
        {
            warn!(
                file = %s.path.display(), offset = 0,
                known_lost_events = known_events(expected..h.first_record_id),
                "disk buffer: records {}..{} missing before this segment",
                expected, h.first_record_id
            );
            lost += h.first_record_id - expected;
            lost_events += known_events(expected..h.first_record_id);
            expected = h.first_record_id;
        }
        let mut records = Vec::with_capacity(s.scan.records.len());
        for r in &s.scan.records {
            if last_indexed.is_some_and(|l| r.id <= l) {
                warn!(
                    file = %s.path.display(), offset = r.offset, id = r.id,
                    "disk buffer: record id out of order across segments; skipped"
                );
                lost += u64::from(r.id >= g0);
                continue;
            }
            if r.id > expected {
                warn!(
                    file = %s.path.display(), offset = r.offset,
                    known_lost_events = known_events(expected..r.id),
                    "disk buffer: records {}..{} missing (damaged or truncated)",
                    expected, r.id
                );
                lost += r.id - expected;
                lost_events += known_events(expected..r.id);
            }
            expected = expected.max(r.id + 1);
            last_indexed = Some(r.id);
            records.push(RecMeta {
                id: r.id,
                offset: r.offset,
                len: r.len,
                events: r.events,
                timestamp_micros: r.timestamp_micros,
                corrupt: false,
                damage_reported: false,
            });
            if r.id >= g0 {
                report.replayed_records += 1;
                report.replayed_events += u64::from(r.events);
            }
        }
        let mut len = s.scan.len;
        let tail = s.scan.tail();
        if i + 1 == n_scans && !tail.is_empty() {
            // Records cut short whose headers survived are known; bytes that hold no valid
            // header count as one record (a torn write of one record is the usual case).
            let known: Vec<_> = tail
                .iter()
                .filter_map(|d| d.record)
                .filter(|r| r.id >= expected)
                .collect();
            let records = (known.len() as u64).max(1);
            let events: u64 = known.iter().map(|r| u64::from(r.events)).sum();
            let first = tail[0].offset;
            warn!(
                file = %s.path.display(), offset = first, len = s.scan.len - first,
                records, known_lost_events = events,
                "disk buffer: torn tail (a write cut short by a crash) removed"
            );
            lost += records;
            lost_events += events;
            report.truncated_tails += 1;
            len = s.scan.valid_end;
            truncate = Some((s.path.clone(), len));
        }
        segments.insert(
            s.id,
            SegmentMeta {
                id: s.id,
                path: s.path,
                records,
                len,
            },
        );
    }
    report.corrupt_records = lost;
    report.corrupt_events = lost_events;

    // Repairs, now that everything has been read.
    if let Some((path, len)) = truncate {
        let f = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(io_err(&path))?;
        f.set_len(len).map_err(io_err(&path))?;
        f.sync_all().map_err(io_err(&path))?;
    }
    let mut readers = Vec::with_capacity(names.len());
    for &name in names {
        let path = dir.join(reader_file_name(name));
        let (resume, generation) = match known.get(name) {
            Some(slot) => (slot.resume_from, slot.generation),
            None => {
                dir::create_position(&path, g0).map_err(io_err(&path))?;
                (g0, 1)
            }
        };
        readers.push(ReaderSlot {
            name: name.to_owned(),
            path,
            cursor: resume,
            inflight: Default::default(),
            redeliver_below: 0,
            persisted: resume,
            generation,
            attached: false,
        });
    }
    for (name, resume) in retired {
        let unfinished = segments
            .values()
            .flat_map(|s: &SegmentMeta| &s.records)
            .filter(|r| resume.is_none_or(|p| r.id >= p))
            .count() as u64;
        let path = dir.join(reader_file_name(&name));
        warn!(
            file = %path.display(), reader = %name, unfinished_records = unfinished,
            "disk buffer: reader is no longer configured; its position is removed and \
             records it had not finished are no longer kept for it"
        );
        std::fs::remove_file(&path).map_err(io_err(&path))?;
        report.retired_readers.push(RetiredReader {
            name,
            unfinished_records: unfinished,
        });
    }
    dir::sync_dir(dir).map_err(io_err(dir))?;

    let frontier = readers.iter().map(|r| r.cursor).min().unwrap_or(g0);
    let (mut buffered_records, mut buffered_events) = (0, 0);
    for r in segments.values().flat_map(|s| &s.records) {
        if r.id >= frontier {
            buffered_records += 1;
            buffered_events += u64::from(r.events);
        }
    }
    let bytes = segments.values().map(|s| s.len).sum();
    let next_segment_id = listing.segments.last().map_or(0, |l| l + 1);
    if report.segments > 0 || report.corrupt_records > 0 {
        info!(
            dir = %dir.display(), segments = report.segments,
            replayed_records = report.replayed_records, replayed_events = report.replayed_events,
            corrupt_records = report.corrupt_records,
            corrupt_events = report.corrupt_events,
            "disk buffer opened with data from a previous run"
        );
    }
    let state = State {
        mode: cfg.mode,
        max_bytes: cfg.max_bytes,
        closed: false,
        finished: false,
        crashed: false,
        next_id,
        next_segment_id,
        active: None,
        segments,
        pending: VecDeque::new(),
        pending_bytes: 0,
        pending_records: 0,
        pending_events: 0,
        first_pending_at: None,
        committed: next_id,
        bytes,
        readers,
        frontier,
        buffered_records,
        buffered_events,
        disk_full: false,
        last_error: None,
        retry_at: None,
        flush_requested: false,
        space_wanted: false,
        maintain_now: false,
        refused: None,
        max_pending: cfg.max_pending_bytes(),
        checkpoint_requested: 0,
        checkpoint_done: 0,
    };
    Ok((state, report))
}
