//! A buffer directory written by the previous release (segment format 1, in
//! tests/fixtures/format-1) replays after the upgrade; new records go to format 2 segments
//! beside the old ones, and both replay in order.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sluice_buffer::format::{FORMAT_VERSION, OLDEST_FORMAT_VERSION};
use sluice_buffer::{Buffer, BufferConfig, RecordRef, Tally};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-1")
}

/// A copy of the fixture's buffer files in a fresh directory.
fn copy_fixture() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for e in fs::read_dir(fixture()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if name.ends_with(".dat") || name.ends_with(".pos") {
            fs::copy(&p, d.path().join(name)).unwrap();
        }
    }
    d
}

fn config(dir: &Path) -> BufferConfig {
    BufferConfig {
        segment_bytes: 4096,
        max_bytes: 1 << 20,
        flush_interval: Duration::from_millis(10),
        ..BufferConfig::new(dir)
    }
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut s: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .collect();
    s.sort();
    s
}

fn version(segment: &Path) -> u16 {
    let b = fs::read(segment).unwrap();
    u16::from_le_bytes([b[8], b[9]])
}

/// The event the fixture's generator wrote as number `i`.
fn fixture_event(i: usize) -> String {
    format!(
        r#"{{"time":1700000000.{i:03},"host":"fw-01","source":"sc4s","sourcetype":"cisco:asa","index":"netfw","event":"event number {i}"}}"#
    )
}

/// Every record one reader is handed, as (id, events as strings, lost events, event count),
/// acknowledged.
fn read_all(b: &Buffer) -> Vec<(u64, Vec<String>, u32, u32)> {
    let mut r = b.reader("default").unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_blocking(Duration::from_millis(300)) {
        let p = rec.payload();
        let events = match rec.offsets() {
            Some(starts) => starts
                .iter()
                .enumerate()
                .map(|(k, &s)| {
                    let end = starts.get(k + 1).map_or(p.len(), |&n| n as usize);
                    let e = &p[s as usize..end];
                    String::from_utf8(e.strip_suffix(b"\n").unwrap_or(e).to_vec()).unwrap()
                })
                .collect(),
            None => vec![String::from_utf8(p.to_vec()).unwrap()],
        };
        out.push((rec.id().0, events, rec.lost_events(), rec.events()));
        r.ack(rec.id());
    }
    out
}

#[test]
fn format_1_segments_replay_after_the_upgrade() {
    let d = copy_fixture();
    assert!(
        segments(d.path())
            .iter()
            .all(|s| version(s) == OLDEST_FORMAT_VERSION)
    );
    let b = Buffer::open(config(d.path()), &["default"]).unwrap();
    assert_eq!(b.recovery().replayed_records, 11);
    assert_eq!(b.recovery().replayed_events, 62);
    assert_eq!(b.recovery().corrupt_records, 0);
    let got = read_all(&b);
    // Records 0 and 1 (events 0..7) were acknowledged before the fixture was taken.
    assert_eq!(got.first().map(|g| g.0), Some(2));
    assert_eq!(got.len(), 11);
    let events: Vec<String> = got[..10].iter().flat_map(|g| g.1.clone()).collect();
    let want: Vec<String> = (7..67).map(fixture_event).collect();
    assert_eq!(events, want);
    assert_eq!(
        got[10].1,
        ["line one\nline two"],
        "the record without offsets"
    );
    assert!(got.iter().all(|g| g.2 == 0));

    // New records go to a new, format 2, segment; the old ones stay as they are.
    let w = b.writer();
    let body = b"new one\nnew two";
    w.append(RecordRef::new(body, 2, SystemTime::now()).with_offsets(&[0, 8]))
        .unwrap();
    w.flush().unwrap().wait_durable(None).unwrap();
    drop(w);
    b.close().unwrap();
    let segs = segments(d.path());
    assert_eq!(version(segs.last().unwrap()), FORMAT_VERSION);
    let b = Buffer::open(config(d.path()), &["default"]).unwrap();
    let got = read_all(&b);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, 13);
    assert_eq!(got[0].1, ["new one", "new two"]);
}

#[test]
fn damage_in_a_format_1_record_loses_that_record_whole() {
    let d = copy_fixture();
    let seg = &segments(d.path())[1];
    // A byte in the middle of the second segment: inside some record's body.
    let at = fs::metadata(seg).unwrap().len() / 2;
    let f = OpenOptions::new().read(true).write(true).open(seg).unwrap();
    let mut x = [0u8];
    f.read_exact_at(&mut x, at).unwrap();
    f.write_all_at(&[x[0] ^ 0x20], at).unwrap();
    let tally = Arc::new(Tally::default());
    let b = Buffer::open_observed(config(d.path()), &["default"], tally.clone()).unwrap();
    let got = read_all(&b);
    assert_eq!(got.len(), 10, "one record lost");
    let kept: u64 = got.iter().map(|g| u64::from(g.3)).sum();
    assert_eq!(Tally::get(&tally.corrupt_records), 1);
    assert_eq!(kept + Tally::get(&tally.corrupt_events), 62);
}
