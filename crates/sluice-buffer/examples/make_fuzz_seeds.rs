//! Writes seed segment files for the `segment` fuzz target:
//! `cargo run -p sluice-buffer --example make_fuzz_seeds -- fuzz/corpus/segment`.
//!
//! Seeds are real segments written by the buffer (one record, many records, event offsets,
//! an empty payload, a large record), plus damaged copies: torn tail, flipped body byte,
//! flipped header byte, bad segment header, a flipped byte in an event and in an event table.
//! Their names start with `f2-`: the current code writes segment format 2. The seeds without
//! the prefix were written by format 1 (still read) and are kept as they are.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sluice_buffer::{Buffer, BufferConfig, RecordRef};

fn segments_of(records: &[(Vec<u8>, Option<Vec<u32>>)]) -> Vec<Vec<u8>> {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = BufferConfig {
        segment_bytes: 8192,
        max_bytes: 1 << 20,
        flush_interval: Duration::from_millis(10),
        ..BufferConfig::new(dir.path())
    };
    let b = Buffer::open(cfg, &["r"]).expect("open");
    let w = b.writer();
    for (payload, offsets) in records {
        let mut r = RecordRef::new(payload, 1, SystemTime::now());
        if let Some(o) = offsets {
            r = r.with_offsets(o);
        }
        w.append(r).expect("append");
    }
    b.close().expect("close");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect()
}

fn hec_batch(n: usize) -> (Vec<u8>, Option<Vec<u32>>) {
    let mut body = Vec::new();
    let mut starts = Vec::new();
    for i in 0..n {
        if i > 0 {
            body.push(b'\n');
        }
        starts.push(body.len() as u32);
        body.extend_from_slice(
            format!(r#"{{"time":1700000000.{i:03},"host":"h","sourcetype":"syslog","event":"message {i}"}}"#)
                .as_bytes(),
        );
    }
    (body, Some(starts))
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/corpus/segment".into());
    let out = Path::new(&out);
    std::fs::create_dir_all(out).expect("create corpus dir");
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    let one = segments_of(&[(b"one record".to_vec(), None)]);
    seeds.push(("one-record".into(), one[0].clone()));
    let many: Vec<_> = (0..12)
        .map(|i| (format!("record number {i}").into_bytes(), None))
        .collect();
    seeds.push(("many-records".into(), segments_of(&many)[0].clone()));
    seeds.push((
        "hec-batch-offsets".into(),
        segments_of(&[hec_batch(5), hec_batch(1)])[0].clone(),
    ));
    seeds.push((
        "empty-payload".into(),
        segments_of(&[(Vec::new(), Some(vec![0, 0]))])[0].clone(),
    ));
    let big = segments_of(&[
        (vec![b'x'; 3000], None),
        (vec![b'y'; 3000], None),
        (vec![b'z'; 3000], None),
    ]);
    seeds.push(("second-segment".into(), big[1].clone()));
    let base = seeds[1].1.clone();
    let mut torn = base.clone();
    torn.truncate(base.len() - 7);
    seeds.push(("torn-tail".into(), torn));
    let mut body_flip = base.clone();
    body_flip[48 + 40 + 3] ^= 0x08;
    seeds.push(("body-flip".into(), body_flip));
    let mut header_flip = base.clone();
    header_flip[48 + 9] ^= 0x01;
    seeds.push(("record-header-flip".into(), header_flip));
    let mut seg_flip = base;
    seg_flip[20] ^= 0x40;
    seeds.push(("segment-header-flip".into(), seg_flip));
    // The 5-event batch: header, then 5 table entries of 8 bytes, then the events.
    let hec = seeds[2].1.clone();
    let mut event_flip = hec.clone();
    event_flip[48 + 40 + 5 * 8 + 100] ^= 0x04;
    seeds.push(("hec-event-flip".into(), event_flip));
    let mut table_flip = hec;
    table_flip[48 + 40 + 2 * 8 + 1] ^= 0x01;
    seeds.push(("hec-table-flip".into(), table_flip));
    for (name, bytes) in seeds {
        std::fs::write(out.join(format!("f2-{name}")), bytes).expect("write seed");
    }
}
