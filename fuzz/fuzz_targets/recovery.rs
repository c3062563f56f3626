//! Fuzzes the disk buffer's recovery path end to end: records written by the real writer,
//! random damage in one of their segment files, then a real open (scan, index, torn-tail
//! repair) and a reader reading everything back (body checks, per-event salvage).
//!
//! The input chooses the records (1 to 8, of 1 to 6 events of 0 to 40 lowercase letters, so
//! no payload can hold a record header's magic), the segment size (one segment or several),
//! the damaged segment and up to four damage operations: invert a run of 1 to 96 bytes, zero
//! one, or cut the file short. Damage is inverted or zeroed bytes, never bytes of the input's
//! choosing: it stands for what a disk does, not for forged records.
//!
//! Checked: no panic; the open succeeds; every event delivered was written, byte for byte
//! (as a multiset); every event that can be proven intact is delivered — its record's header
//! untouched and inside the file, its payload bytes untouched, and for each of its start, its
//! end and its CRC one copy of the event table untouched; the events delivered plus the events
//! counted lost never exceed those written, and equal them when no record header was touched
//! and nothing was cut.
#![no_main]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use libfuzzer_sys::fuzz_target;
use sluice_buffer::format::{EVENT_ENTRY_LEN, Layout, RECORD_HEADER_LEN};
use sluice_buffer::scan::{Verify, scan_segment};
use sluice_buffer::{Buffer, BufferConfig, RecordRef, Tally};

/// Reads the input as a stream of numbers; zeros once it runs out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
}

enum Op {
    Invert { at: u32, len: u8 },
    Zero { at: u32, len: u8 },
    Cut { at: u32 },
}

fn dir() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let base = std::env::var_os("SLUICE_FUZZ_DIR").map_or_else(
        || PathBuf::from("/dev/shm").join(format!("sluice-fuzz-recovery-{}", std::process::id())),
        PathBuf::from,
    );
    base.join(N.fetch_add(1, Ordering::Relaxed).to_string())
}

fn config(dir: &Path, segment_bytes: u64) -> BufferConfig {
    BufferConfig {
        segment_bytes,
        max_bytes: 64 << 20,
        flush_interval: Duration::from_millis(5),
        ..BufferConfig::new(dir)
    }
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut s: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .collect();
    s.sort();
    s
}

/// One event as written: its bytes and where its parts lie in its segment file.
struct Written {
    bytes: Vec<u8>,
    segment: usize,
    /// The record header.
    header: (u64, u64),
    /// The whole record.
    record_end: u64,
    /// Each copy of the fields the event needs: its start, its CRC, the next event's start.
    fields: Vec<[(u64, u64); 2]>,
    payload: (u64, u64),
}

fn run(data: &[u8]) {
    let mut input = Input(data);
    let records = 1 + usize::from(input.u8() % 8);
    let segment_bytes = if input.u8() & 1 == 0 { 4096 } else { 1 << 20 };
    let mut batches: Vec<Vec<Vec<u8>>> = Vec::with_capacity(records);
    for _ in 0..records {
        let events = 1 + usize::from(input.u8() % 6);
        let mut batch = Vec::with_capacity(events);
        for _ in 0..events {
            let len = usize::from(input.u8() % 41);
            batch.push((0..len).map(|_| b'a' + input.u8() % 26).collect());
        }
        batches.push(batch);
    }
    let target = usize::from(input.u8());
    let mut ops = Vec::new();
    for _ in 0..(input.u8() % 5) {
        let kind = input.u8();
        let at = input.u32();
        let len = 1 + input.u8() % 96;
        ops.push(match kind % 3 {
            0 => Op::Invert { at, len },
            1 => Op::Zero { at, len },
            _ => Op::Cut { at },
        });
    }

    let dir = dir();
    std::fs::create_dir_all(&dir).expect("create dir");
    let b = Buffer::open(config(&dir, segment_bytes), &["r"]).expect("open a new buffer");
    let w = b.writer();
    for batch in &batches {
        let payload = batch.concat();
        let mut starts = Vec::with_capacity(batch.len());
        let mut at = 0u32;
        for e in batch {
            starts.push(at);
            at += e.len() as u32;
        }
        w.append(RecordRef::new(&payload, 0, SystemTime::now()).with_offsets(&starts))
            .expect("append");
    }
    drop(w);
    b.close().expect("close");

    // Where every event's parts are, from the clean files.
    let segs = segments(&dir);
    let mut written = Vec::new();
    let mut events_of = batches.iter();
    for (si, seg) in segs.iter().enumerate() {
        let bytes = std::fs::read(seg).expect("read segment");
        let scan = scan_segment(&bytes[..], Verify::Full).expect("scan");
        assert!(scan.damage.is_empty(), "the writer wrote damage");
        for r in &scan.records {
            let batch = events_of.next().expect("as many records as appended");
            let n = batch.len();
            let table = r.offset + RECORD_HEADER_LEN as u64;
            let copy = (n * EVENT_ENTRY_LEN) as u64;
            let payload_at = table + Layout::Events.table_len(n as u32);
            let entry = |c: u64, i: usize| table + c * copy + (i * EVENT_ENTRY_LEN) as u64;
            let mut start = payload_at;
            for (i, e) in batch.iter().enumerate() {
                let mut fields = vec![
                    [(entry(0, i), 4), (entry(1, i), 4)],
                    [(entry(0, i) + 4, 4), (entry(1, i) + 4, 4)],
                ];
                if i + 1 < n {
                    fields.push([(entry(0, i + 1), 4), (entry(1, i + 1), 4)]);
                }
                written.push(Written {
                    bytes: e.clone(),
                    segment: si,
                    header: (r.offset, RECORD_HEADER_LEN as u64),
                    record_end: r.offset + r.len,
                    fields,
                    payload: (start, e.len() as u64),
                });
                start += e.len() as u64;
            }
        }
    }
    assert!(events_of.next().is_none(), "every record found");

    // Damage one segment.
    let si = target % segs.len();
    let mut bytes = std::fs::read(&segs[si]).expect("read segment");
    let mut touched = vec![false; bytes.len()];
    let mut cut = bytes.len() as u64;
    for op in &ops {
        let len = bytes.len();
        if len == 0 {
            break;
        }
        match *op {
            Op::Invert { at, len: n } | Op::Zero { at, len: n } => {
                let from = at as usize % len;
                for k in from..(from + usize::from(n)).min(len) {
                    bytes[k] = if matches!(op, Op::Invert { .. }) { !bytes[k] } else { 0 };
                    touched[k] = true;
                }
            }
            Op::Cut { at } => {
                let to = at as usize % len;
                bytes.truncate(to);
                touched.truncate(to);
                cut = cut.min(to as u64);
            }
        }
    }
    std::fs::write(&segs[si], &bytes).expect("write damaged segment");
    let clean = |(at, len): (u64, u64)| {
        at + len <= cut && !touched[at as usize..(at + len) as usize].iter().any(|&t| t)
    };
    // The count can only be exact when every lost record kept its header (its event count).
    let records_end = written
        .iter()
        .filter(|w| w.segment == si)
        .map(|w| w.record_end)
        .max()
        .unwrap_or(0);
    let mut headers_touched = cut < records_end;
    let mut intact: HashMap<&[u8], usize> = HashMap::new();
    for w in &written {
        let ok = w.segment != si
            || (clean(w.header)
                && w.record_end <= cut
                && clean(w.payload)
                && w.fields.iter().all(|f| f.iter().any(|&c| clean(c))));
        if w.segment == si && !clean(w.header) {
            headers_touched = true;
        }
        if ok {
            *intact.entry(&w.bytes).or_default() += 1;
        }
    }

    // Open the damaged directory and read everything.
    let tally = Arc::new(Tally::default());
    let b = Buffer::open_observed(config(&dir, segment_bytes), &["r"], tally.clone())
        .expect("open a damaged buffer");
    let mut r = b.reader("r").expect("reader");
    let mut delivered: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut count = 0u64;
    while let Some(rec) = r.try_next() {
        let p = rec.payload();
        let starts = rec.offsets().expect("offsets kept");
        assert_eq!(starts.len() as u32, rec.events());
        assert_eq!(starts.first(), Some(&0));
        for (k, &s) in starts.iter().enumerate() {
            let end = starts.get(k + 1).map_or(p.len(), |&n| n as usize);
            assert!(s as usize <= end && end <= p.len());
            *delivered.entry(p[s as usize..end].to_vec()).or_default() += 1;
            count += 1;
        }
        r.ack(rec.id());
    }
    drop(r);
    b.close().expect("close");
    let _ = std::fs::remove_dir_all(&dir);

    let mut all: HashMap<&[u8], usize> = HashMap::new();
    for w in &written {
        *all.entry(&w.bytes).or_default() += 1;
    }
    for (e, n) in &delivered {
        let have = all.get(&e[..]).copied().unwrap_or(0);
        assert!(*n <= have, "delivered {n} × {e:?}, written {have}");
    }
    for (e, n) in &intact {
        let got = delivered.get(*e).copied().unwrap_or(0);
        assert!(got >= *n, "{n} intact × {e:?}, delivered {got}");
    }
    let lost = Tally::get(&tally.corrupt_events);
    let total = written.len() as u64;
    assert!(count + lost <= total, "{count} delivered + {lost} counted lost > {total} written");
    if !headers_touched {
        assert_eq!(count + lost, total, "every event delivered or counted");
    }
}

fuzz_target!(|data: &[u8]| run(data));
