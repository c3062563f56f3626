//! Damage on disk: each kind loses only the events (or, when a record header is hit, the
//! records) it touches, counts exactly those, and everything else is still delivered in order.
//!
//! Every record holds two events: the first 10 payload bytes, then the rest.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sluice_buffer::format::{FORMAT_VERSION, SEGMENT_HEADER_LEN, SegmentHeader};
use sluice_buffer::scan::{Verify, scan_segment};
use sluice_buffer::{Buffer, BufferConfig, OpenError, RecordRef, Tally};

const RECORDS: u64 = 60;

fn config(dir: &Path) -> BufferConfig {
    BufferConfig {
        // Small segments: the 60 records spread over several files.
        segment_bytes: 4096,
        max_bytes: 1 << 20,
        flush_interval: Duration::from_millis(20),
        ..BufferConfig::new(dir)
    }
}

fn payload(n: u64) -> Vec<u8> {
    format!("record {n:04} ")
        .bytes()
        .cycle()
        .take(300 + (n as usize % 7) * 11)
        .collect()
}

/// Writes `RECORDS` records and closes; returns the segment paths in order.
fn fill(dir: &Path) -> Vec<PathBuf> {
    let b = Buffer::open(config(dir), &["r"]).unwrap();
    let w = b.writer();
    for n in 0..RECORDS {
        let p = payload(n);
        w.append(RecordRef::new(&p, 2, SystemTime::now()).with_offsets(&[0, 10]))
            .unwrap();
    }
    b.close().unwrap();
    let mut segs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .collect();
    segs.sort();
    assert!(segs.len() >= 4, "want several segments, got {}", segs.len());
    segs
}

/// `(id, offset, len)` of every record in a segment file.
fn records_of(path: &Path) -> Vec<(u64, u64, u64)> {
    let bytes = fs::read(path).unwrap();
    scan_segment(&bytes[..], Verify::Full)
        .unwrap()
        .records
        .iter()
        .map(|r| (r.id, r.offset, r.len))
        .collect()
}

fn flip(path: &Path, at: u64) {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x04], at).unwrap();
}

/// What a reopen delivered.
#[derive(Debug, PartialEq, Eq)]
struct Delivered {
    ids: Vec<u64>,
    /// `(id, lost_events)` of the records delivered with damaged events left out.
    partial: Vec<(u64, u32)>,
    corrupt_records: u64,
    corrupt_events: u64,
}

/// Reopens and reads everything, checking each record's events against what was written.
fn deliver(dir: &Path) -> Delivered {
    let tally = std::sync::Arc::new(Tally::default());
    let b = Buffer::open_observed(config(dir), &["r"], tally.clone()).unwrap();
    let mut r = b.reader("r").unwrap();
    let mut out = Delivered {
        ids: Vec::new(),
        partial: Vec::new(),
        corrupt_records: 0,
        corrupt_events: 0,
    };
    while let Some(rec) = r.next_blocking(Duration::from_millis(200)) {
        let n = rec.id().0;
        let p = payload(n);
        let (first, second) = p.split_at(10);
        match rec.lost_events() {
            0 => {
                assert_eq!(rec.payload().as_ref(), &p[..], "record {n} altered");
                assert_eq!(rec.offsets(), Some(&[0, 10][..]));
                assert_eq!(rec.events(), 2);
            }
            1 => {
                assert!(
                    rec.payload().as_ref() == first || rec.payload().as_ref() == second,
                    "record {n}: the kept event is not one that was written"
                );
                assert_eq!((rec.offsets(), rec.events()), (Some(&[0][..]), 1));
                out.partial.push((n, 1));
            }
            k => panic!("record {n} delivered with {k} events lost"),
        }
        out.ids.push(n);
        r.ack(rec.id());
    }
    // Found at open and when read: both reach the observer.
    out.corrupt_records = Tally::get(&tally.corrupt_records);
    out.corrupt_events = Tally::get(&tally.corrupt_events);
    assert!(out.corrupt_records >= b.recovery().corrupt_records);
    out
}

fn all_but(lost: &[u64]) -> Vec<u64> {
    (0..RECORDS).filter(|n| !lost.contains(n)).collect()
}

#[test]
fn flipped_payload_byte_in_sealed_segment_loses_that_event_only() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let (id, off, len) = records_of(&segs[1])[1];
    flip(&segs[1], off + len / 2);
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[]));
    assert_eq!(got.partial, [(id, 1)]);
    assert_eq!((got.corrupt_records, got.corrupt_events), (0, 1));
}

#[test]
fn flipped_payload_byte_in_newest_segment_loses_that_event_only() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let last = segs.last().unwrap();
    let (id, off, len) = records_of(last)[0];
    flip(last, off + len - 1);
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[]));
    assert_eq!(got.partial, [(id, 1)]);
    assert_eq!((got.corrupt_records, got.corrupt_events), (0, 1));
}

#[test]
fn damaged_event_table_that_leaves_no_event_intact_loses_the_record() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let (id, off, _) = records_of(&segs[1])[0];
    // Entry 1's start in both copies of the table: the end of event 0, the start of event 1.
    flip(&segs[1], off + 40 + 8);
    flip(&segs[1], off + 40 + 2 * 8 + 8);
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[id]));
    assert!(got.partial.is_empty());
    assert_eq!((got.corrupt_records, got.corrupt_events), (1, 2));
}

#[test]
fn damage_in_one_copy_of_an_event_table_costs_nothing() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let (_, off, _) = records_of(&segs[1])[0];
    flip(&segs[1], off + 40 + 8);
    flip(&segs[1], off + 40 + 12);
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[]));
    assert!(got.partial.is_empty());
    assert_eq!((got.corrupt_records, got.corrupt_events), (0, 0));
}

#[test]
fn a_record_with_no_intact_event_in_the_newest_segment_is_counted_at_open_with_its_events() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let last = segs.last().unwrap();
    let recs = records_of(last);
    assert!(recs.len() >= 2);
    let (id, off, len) = recs[0];
    // A byte of each event: the first 10 payload bytes, then the rest.
    let payload = off + 40 + 2 * 2 * 8;
    flip(last, payload + 3);
    flip(last, off + len - 1);
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[id]));
    assert_eq!((got.corrupt_records, got.corrupt_events), (1, 2));
}

#[test]
fn a_tail_of_several_records_with_no_intact_event_counts_each() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let last = segs.last().unwrap();
    let recs = records_of(last);
    assert!(recs.len() >= 3);
    let tail = &recs[recs.len() - 2..];
    for &(_, off, len) in tail {
        flip(last, off + 40 + 2 * 2 * 8 + 3);
        flip(last, off + len - 1);
    }
    {
        let b = Buffer::open(config(d.path()), &["r"]).unwrap();
        assert_eq!(b.recovery().corrupt_records, 2);
        assert_eq!(b.recovery().corrupt_events, 4);
        assert_eq!(
            fs::metadata(last).unwrap().len(),
            tail[0].1,
            "cut at the first"
        );
        b.close().unwrap();
    }
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[tail[0].0, tail[1].0]));
}

#[test]
fn a_damaged_event_read_twice_is_counted_once() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let (id, off, len) = records_of(&segs[2])[0];
    flip(&segs[2], off + len - 2);
    let tally = std::sync::Arc::new(Tally::default());
    let b = Buffer::open_observed(config(d.path()), &["r"], tally.clone()).unwrap();
    for _ in 0..2 {
        // Read everything without acknowledging, then take the reader again: all of it is
        // handed out again, the damaged record included.
        let mut r = b.reader("r").unwrap();
        let mut partial = Vec::new();
        while let Some(rec) = r.next_blocking(Duration::from_millis(200)) {
            if rec.lost_events() > 0 {
                partial.push(rec.id().0);
            }
        }
        assert_eq!(partial, [id]);
    }
    assert_eq!(Tally::get(&tally.corrupt_events), 1);
    assert_eq!(Tally::get(&tally.corrupt_records), 0);
}

#[test]
fn flipped_record_header_byte_resyncs_on_the_next_record() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let (id, off, _) = records_of(&segs[2])[2];
    flip(&segs[2], off + 9); // inside body_len
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[id]));
    assert_eq!(got.corrupt_records, 1);
}

#[test]
fn flipped_segment_header_keeps_its_records() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    flip(&segs[1], 20);
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[]));
    assert_eq!((got.corrupt_records, got.corrupt_events), (0, 0));
}

#[test]
fn truncated_middle_segment_counts_exactly_the_records_cut() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let recs = records_of(&segs[1]);
    let keep = recs.len() / 2;
    // Cut inside record `keep`: it and every later record of the segment are gone.
    let cut = recs[keep].1 + 5;
    OpenOptions::new()
        .write(true)
        .open(&segs[1])
        .unwrap()
        .set_len(cut)
        .unwrap();
    let lost: Vec<u64> = recs[keep..].iter().map(|r| r.0).collect();
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&lost));
    assert_eq!(got.corrupt_records, lost.len() as u64);
}

#[test]
fn missing_segment_counts_its_records() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let lost: Vec<u64> = records_of(&segs[2]).iter().map(|r| r.0).collect();
    fs::remove_file(&segs[2]).unwrap();
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&lost));
    assert_eq!(got.corrupt_records, lost.len() as u64);
}

#[test]
fn torn_tail_is_cut_once_and_counted_once() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let last = segs.last().unwrap();
    let recs = records_of(last);
    let (id, off, len) = *recs.last().unwrap();
    OpenOptions::new()
        .write(true)
        .open(last)
        .unwrap()
        .set_len(off + len - 3)
        .unwrap();
    {
        let b = Buffer::open(config(d.path()), &["r"]).unwrap();
        assert_eq!(b.recovery().corrupt_records, 1);
        assert_eq!(b.recovery().corrupt_events, 2, "its header was intact");
        assert_eq!(b.recovery().truncated_tails, 1);
        assert_eq!(
            fs::metadata(last).unwrap().len(),
            off,
            "tail cut at the record start"
        );
        b.close().unwrap();
    }
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&[id]));
    assert_eq!(got.corrupt_records, 0, "already repaired");
}

#[test]
fn garbage_segment_files_never_panic() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let mut rng = fastrand::Rng::with_seed(7);
    let junk: Vec<u8> = (0..10_000).map(|_| rng.u8(..)).collect();
    fs::write(&segs[3], &junk).unwrap();
    fs::write(d.path().join("seg-00000000000000009999.dat"), b"").unwrap();
    let lost: Vec<u64> = {
        // segs[3] held the records between segs[2]'s last and segs[4]'s first.
        let before = records_of(&segs[2]).last().unwrap().0;
        let after = records_of(&segs[4])[0].0;
        (before + 1..after).collect()
    };
    let got = deliver(d.path());
    assert_eq!(got.ids, all_but(&lost));
    assert_eq!(got.corrupt_records, lost.len() as u64);
}

#[test]
fn newer_format_version_refuses_to_open() {
    let d = tempfile::tempdir().unwrap();
    let segs = fill(d.path());
    let mut b = fs::read(&segs[0]).unwrap();
    let h = SegmentHeader::decode(&b[..SEGMENT_HEADER_LEN]).unwrap();
    let mut header = h.encode();
    header[8..10].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let crc = crc32c(&header[..40]);
    header[40..44].copy_from_slice(&crc.to_le_bytes());
    b[..SEGMENT_HEADER_LEN].copy_from_slice(&header);
    fs::write(&segs[0], &b).unwrap();
    match Buffer::open(config(d.path()), &["r"]) {
        Err(e @ OpenError::UnsupportedVersion { .. }) => {
            assert!(
                e.to_string().contains(&segs[0].display().to_string()),
                "{e}"
            )
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
}

/// CRC32C (Castagnoli), bitwise: an independent check of the format's checksums.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
