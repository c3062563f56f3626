//! Model test: random sequences of append / flush / read / ack / re-take / checkpoint /
//! crash (with an optional torn tail) / clean reopen, checked against an in-memory model of
//! what the buffer must hold.
//!
//! The writer thread runs on its own clock (group-commit windows, size-triggered flushes,
//! space-triggered maintenance), so some outcomes are not fixed in advance. The model keeps
//! exact what must hold and bounds the rest:
//! * a record known durable (flush, checkpoint, close) survives every crash; after a crash
//!   the survivors are exactly a prefix of the appended records, byte for byte;
//! * a reader sees records in id order with nothing skipped, and after a crash resumes
//!   between its last checkpointed frontier and its frontier at the crash;
//! * the buffered-records/events gauges match the model exactly; disk use stays within
//!   `max_bytes`; a torn tail is counted as exactly one corrupt record.

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use proptest::prelude::*;

use crate::*;

const READERS: [&str; 2] = ["a", "b"];

#[derive(Debug, Clone)]
enum Op {
    Append {
        len: usize,
        seed: u8,
        offsets: Option<Vec<u32>>,
        /// Appended with `RecordRef::shared` (written from the caller's buffer).
        shared: bool,
    },
    Flush,
    Read(usize),
    Ack(usize, usize),
    Retake(usize),
    Checkpoint,
    Crash(Option<Vec<u8>>),
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let append = (
        0usize..1500,
        any::<u8>(),
        proptest::option::of(1usize..6),
        any::<bool>(),
    )
        .prop_flat_map(|(len, seed, ev, shared)| {
            let offsets = match ev {
                None => Just(None).boxed(),
                Some(n) => proptest::collection::vec(0..=len as u32, n)
                    .prop_map(|mut v| {
                        // Event starts: the first at 0, none decreasing.
                        v.sort_unstable();
                        v[0] = 0;
                        Some(v)
                    })
                    .boxed(),
            };
            offsets.prop_map(move |offsets| Op::Append {
                len,
                seed,
                offsets,
                shared,
            })
        });
    prop_oneof![
        30 => append,
        4 => Just(Op::Flush),
        25 => (0..READERS.len()).prop_map(Op::Read),
        20 => (0..READERS.len(), any::<usize>()).prop_map(|(r, k)| Op::Ack(r, k)),
        2 => (0..READERS.len()).prop_map(Op::Retake),
        3 => Just(Op::Checkpoint),
        3 => proptest::option::of(proptest::collection::vec(any::<u8>(), 1..60)).prop_map(Op::Crash),
        2 => Just(Op::Reopen),
    ]
}

fn config() -> impl Strategy<Value = (DurabilityMode, u64, u64, u64, u64)> {
    (
        prop_oneof![Just(DurabilityMode::Normal), Just(DurabilityMode::Reliable)],
        32u64 << 10..256 << 10,
        4u64 << 10..64 << 10,
        prop_oneof![Just(700u64), Just(1u64 << 40)],
        prop_oneof![Just(0u64), Just(2_000u64)],
    )
}

#[derive(Debug, Clone, PartialEq)]
struct MRec {
    id: u64,
    payload: Vec<u8>,
    events: u32,
    offsets: Option<Vec<u32>>,
}

#[derive(Debug, Default)]
struct MReader {
    cursor: u64,
    inflight: BTreeSet<u64>,
    /// After a re-take, acknowledged ids below this are not handed out again.
    redeliver_below: u64,
    /// Frontier at the last checkpoint or open: the persisted position is at least this.
    persisted_lo: u64,
}

impl MReader {
    fn frontier(&self) -> u64 {
        let unread = self.cursor.max(self.redeliver_below);
        self.inflight.first().map_or(unread, |&f| f.min(unread))
    }

    fn wants(&self, id: u64) -> bool {
        id >= self.redeliver_below || self.inflight.contains(&id)
    }

    fn restart_at(&mut self, cursor: u64) {
        self.cursor = cursor;
        self.inflight.clear();
        self.redeliver_below = 0;
        self.persisted_lo = cursor;
    }
}

struct Harness<'a> {
    dir: &'a Path,
    cfg: BufferConfig,
    buffer: Option<Buffer>,
    writer: Option<Writer>,
    readers: Vec<Option<Reader>>,
    records: Vec<MRec>,
    model: Vec<MReader>,
    /// Every id below this is known written and synced.
    durable_below: u64,
    /// Torn tails added before the current open (each must count as one corrupt record).
    torn_at_open: u64,
    /// What the buffer reported since the current open.
    tally: Arc<Tally>,
}

impl<'a> Harness<'a> {
    fn open(&mut self) -> Recovery {
        // Counts from this open on, as the stats' totals used to.
        self.tally = Arc::new(Tally::default());
        let b =
            Buffer::open_observed(self.cfg.clone(), &READERS, self.tally.clone()).expect("open");
        self.writer = Some(b.writer());
        self.readers = READERS.iter().map(|n| b.reader(n)).collect();
        let rec = b.recovery().clone();
        self.buffer = Some(b);
        rec
    }

    fn b(&self) -> &Buffer {
        self.buffer.as_ref().expect("open buffer")
    }

    fn next_expected(&self, r: usize) -> Option<&MRec> {
        let m = &self.model[r];
        self.records
            .iter()
            .find(|x| x.id >= m.cursor && m.wants(x.id))
    }

    fn global_frontier(&self) -> u64 {
        self.model.iter().map(MReader::frontier).min().unwrap_or(0)
    }

    fn check_gauges(&self) -> Result<(), TestCaseError> {
        let s = self.b().stats();
        prop_assert!(
            s.bytes <= s.max_bytes,
            "bytes {} > max {}",
            s.bytes,
            s.max_bytes
        );
        let g = self.global_frontier();
        let live: Vec<&MRec> = self.records.iter().filter(|m| m.id >= g).collect();
        prop_assert_eq!(
            s.records,
            live.len() as u64,
            "real readers {:?}, model {:?}, records {:?}",
            s.readers,
            self.model,
            self.records.iter().map(|m| m.id).collect::<Vec<_>>()
        );
        prop_assert_eq!(
            s.events,
            live.iter().map(|m| u64::from(m.events)).sum::<u64>()
        );
        prop_assert_eq!(
            Tally::get(&self.tally.corrupt_records),
            self.torn_at_open,
            "no damage but the torn tails"
        );
        Ok(())
    }

    fn close_handles(&mut self) {
        self.readers.clear();
        self.writer = None;
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Append {
                len,
                seed,
                offsets,
                shared,
            } => {
                let payload: Vec<u8> = (0..*len)
                    .map(|i| seed.wrapping_add(i as u8).wrapping_mul(31))
                    .collect();
                let bytes = bytes::Bytes::from(payload.clone());
                let mut r = if *shared {
                    RecordRef::shared(&bytes, 1, SystemTime::now())
                } else {
                    RecordRef::new(&payload, 1, SystemTime::now())
                };
                if let Some(o) = offsets {
                    r = r.with_offsets(o);
                }
                let events = r.events;
                match self.writer.as_ref().expect("writer").append(r) {
                    Ok(a) => {
                        let id = a.id().0;
                        prop_assert!(self.records.last().is_none_or(|l| l.id < id));
                        self.records.push(MRec {
                            id,
                            payload,
                            events,
                            offsets: offsets.clone(),
                        });
                    }
                    Err(AppendError::Full {
                        reason: FullReason::MaxBytes,
                    }) => {}
                    Err(e) => prop_assert!(false, "append failed: {e}"),
                }
            }
            Op::Flush => {
                if let Some(a) = self.writer.as_ref().expect("writer").flush() {
                    prop_assert_eq!(a.wait_durable(Some(Duration::from_secs(20))), Ok(true));
                    self.durable_below = a.id().0 + 1;
                }
            }
            Op::Read(r) => {
                let got = self.readers[*r].as_mut().expect("reader").try_next();
                let want = self.next_expected(*r).cloned();
                match (got, want) {
                    (Some(g), Some(w)) => {
                        prop_assert_eq!(g.id().0, w.id);
                        prop_assert_eq!(g.payload().as_ref(), &w.payload[..]);
                        prop_assert_eq!(g.events(), w.events);
                        prop_assert_eq!(g.offsets(), w.offsets.as_deref());
                        self.model[*r].cursor = w.id + 1;
                        self.model[*r].inflight.insert(w.id);
                    }
                    (Some(g), None) => prop_assert!(false, "read {:?}, expected nothing", g),
                    (None, Some(w)) => prop_assert!(
                        w.id >= self.durable_below,
                        "record {} is durable but was not read",
                        w.id
                    ),
                    (None, None) => {}
                }
            }
            Op::Ack(r, k) => {
                let m = &mut self.model[*r];
                if !m.inflight.is_empty() {
                    let id = *m
                        .inflight
                        .iter()
                        .nth(k % m.inflight.len())
                        .expect("in range");
                    m.inflight.remove(&id);
                    let acked = self.readers[*r].as_ref().expect("reader").ack(RecordId(id));
                    prop_assert!(acked, "ack of in-flight {id} refused");
                }
            }
            Op::Retake(r) => {
                self.readers[*r] = None;
                self.readers[*r] = self.b().reader(READERS[*r]);
                prop_assert!(self.readers[*r].is_some());
                let m = &mut self.model[*r];
                let f = m.frontier();
                m.redeliver_below = m.redeliver_below.max(m.cursor);
                m.cursor = f;
            }
            Op::Checkpoint => {
                self.b().checkpoint().map_err(TestCaseError::fail)?;
                self.durable_below = self.records.last().map_or(0, |l| l.id + 1);
                for m in &mut self.model {
                    m.persisted_lo = m.frontier();
                }
            }
            Op::Reopen => {
                self.close_handles();
                self.buffer
                    .take()
                    .expect("open")
                    .close()
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let rec = self.open();
                prop_assert_eq!(rec.corrupt_records, 0);
                self.torn_at_open = 0;
                let (_, positions) = self.b().snapshot();
                for (m, (cursor, _)) in self.model.iter_mut().zip(positions) {
                    prop_assert_eq!(cursor, m.frontier(), "clean close persists positions");
                    m.restart_at(cursor);
                }
                self.durable_below = self.records.last().map_or(0, |l| l.id + 1);
            }
            Op::Crash(torn) => {
                self.close_handles();
                self.buffer.take().expect("open").crash();
                let torn_applied = match torn {
                    Some(bytes) => append_to_newest_segment(self.dir, bytes),
                    None => false,
                };
                let rec = self.open();
                prop_assert_eq!(rec.corrupt_records, u64::from(torn_applied));
                self.torn_at_open = u64::from(torn_applied);
                let (ids, positions) = self.b().snapshot();
                // Survivors: exactly a prefix of what was appended, including everything
                // known durable. Records below every reader's frontier may already be
                // deleted, so compare from the oldest surviving record the model still needs.
                let kept: Vec<u64> = self.records.iter().map(|m| m.id).collect();
                let oldest_needed = positions.iter().map(|p| p.0).min().unwrap_or(0);
                let surviving: Vec<u64> = ids
                    .iter()
                    .copied()
                    .filter(|&i| i >= oldest_needed)
                    .collect();
                let model_needed: Vec<u64> = kept
                    .iter()
                    .copied()
                    .filter(|&i| i >= oldest_needed)
                    .collect();
                prop_assert!(
                    model_needed.starts_with(&surviving),
                    "survivors {:?} not a prefix of {:?}",
                    surviving,
                    model_needed
                );
                let last_survivor = surviving.last().copied();
                for &id in &model_needed {
                    if id < self.durable_below {
                        prop_assert!(surviving.contains(&id), "durable record {id} lost");
                    }
                }
                self.records
                    .retain(|m| last_survivor.is_some_and(|l| m.id <= l) || m.id < oldest_needed);
                for (m, (cursor, _)) in self.model.iter_mut().zip(positions) {
                    prop_assert!(
                        cursor >= m.persisted_lo && cursor <= m.frontier(),
                        "resumed at {cursor}, expected within {}..={}",
                        m.persisted_lo,
                        m.frontier()
                    );
                    m.restart_at(cursor);
                }
                self.durable_below = self.records.last().map_or(0, |l| l.id + 1);
            }
        }
        self.check_gauges()
    }

    /// Closes, reopens and drains every reader: each must get exactly the model's records
    /// from its frontier on.
    fn drain_all(&mut self) -> Result<(), TestCaseError> {
        self.close_handles();
        self.buffer
            .take()
            .expect("open")
            .close()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        self.open();
        for r in 0..READERS.len() {
            let from = self.model[r].frontier();
            let want: Vec<&MRec> = self.records.iter().filter(|m| m.id >= from).collect();
            let reader = self.readers[r].as_mut().expect("reader");
            for w in want {
                let g = reader.next_blocking(Duration::from_secs(20));
                prop_assert!(g.is_some(), "record {} missing at drain", w.id);
                let g = g.expect("checked");
                prop_assert_eq!(g.id().0, w.id);
                prop_assert_eq!(g.payload().as_ref(), &w.payload[..]);
            }
            prop_assert!(reader.try_next().is_none(), "extra records at drain");
        }
        Ok(())
    }
}

/// Simulates a write torn by the crash: garbage after the last record of the newest segment.
fn append_to_newest_segment(dir: &Path, bytes: &[u8]) -> bool {
    let newest = std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .max();
    let Some(path) = newest else { return false };
    let mut f = OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open segment");
    f.write_all(bytes).expect("torn write");
    true
}

fn scratch_dir() -> tempfile::TempDir {
    // tmpfs where available: the model test does thousands of fsyncs.
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::tempdir_in(shm)
    {
        return d;
    }
    tempfile::tempdir().expect("tempdir")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn buffer_matches_model(
        (mode, max_bytes, segment_bytes, flush_bytes, window_us) in config(),
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        let dir = scratch_dir();
        let cfg = BufferConfig {
            mode,
            max_bytes,
            segment_bytes,
            flush_bytes,
            // No timer-driven flushes or maintenance: only the writer thread's size and
            // group-commit triggers run on their own.
            flush_interval: Duration::from_secs(3600),
            group_commit_window: Duration::from_micros(window_us),
            ..BufferConfig::new(dir.path())
        };
        let mut h = Harness {
            dir: dir.path(),
            cfg,
            buffer: None,
            writer: None,
            readers: Vec::new(),
            records: Vec::new(),
            model: READERS.iter().map(|_| MReader::default()).collect(),
            durable_below: 0,
            torn_at_open: 0,
            tally: Arc::default(),
        };
        h.open();
        for op in &ops {
            h.apply(op)?;
        }
        h.drain_all()?;
    }
}
