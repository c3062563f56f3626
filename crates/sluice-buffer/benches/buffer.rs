//! Disk buffer throughput: appends in both durability modes, and replay (open + read back).
//!
//! Records are HEC-shaped batches: 500 events of 800 bytes (400 kB bodies, newline-joined,
//! with each event's start offset), the size a busy SC4S destination sends. Throughput lines are
//! in events; MB/s = events/s × 800 B.
//!
//! * `write/normal`: append batches; one flush + fsync at the end of each sample (the
//!   normal-mode policy flushes by size meanwhile).
//! * `write/reliable_pipelined`: append batches back to back and wait for the last one to
//!   be durable: group commit lets one fsync cover every batch appended meanwhile, as when
//!   many connections feed the buffer.
//! * `write/reliable_serial`: append one batch, wait until it is durable, then the next: the
//!   latency-bound worst case (one fsync per batch).
//! * `replay/open_and_read`: open a directory holding 64 MB of batches (recovery scan) and
//!   read every record back with CRC checks.
//! * `cpu/<events>x<bytes>/…`: the CPU the record format costs per batch, without IO, for
//!   batches of 500 events of 150, 400 and 800 bytes: `format1_*` is the encoder and check of
//!   segment format 1 (one CRC per body; copied here from the release before format 2),
//!   `encode_shared` what `Writer::append` does for a `RecordRef::shared` payload (the
//!   daemon's: per-event CRCs and the body CRC, no copy), `encode_copy` for a borrowed one,
//!   `check_intact` what a reader does with an intact record. Run the group alone to compare:
//!   `cargo bench -p sluice-buffer --bench buffer -- cpu`.
//!
//! The directory is a temporary directory under $TMPDIR: run it on the disk that matters.
//! `cargo bench -p sluice-buffer --bench buffer -- --warm-up-time 1 --measurement-time 5`

use std::time::{Duration, Instant, SystemTime};

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_buffer::format::{
    FLAG_OFFSETS, RECORD_HEADER_LEN, RecordHeader, check_body, encode_head, encode_record,
    offsets_of,
};
use sluice_buffer::{Appended, Buffer, BufferConfig, DurabilityMode, RecordRef};

const EVENT_BYTES: usize = 800;
const EVENTS_PER_BATCH: usize = 500;
const BATCHES_PER_ITER: usize = 8;

struct Batch {
    body: Vec<u8>,
    offsets: Vec<u32>,
}

fn batch() -> Batch {
    batch_of(EVENT_BYTES)
}

/// `EVENTS_PER_BATCH` HEC-shaped events of `event_bytes` bytes, newline-joined, with their
/// start offsets (as the daemon appends them).
fn batch_of(event_bytes: usize) -> Batch {
    let mut body = Vec::with_capacity(event_bytes * EVENTS_PER_BATCH);
    let mut offsets = Vec::with_capacity(EVENTS_PER_BATCH);
    for i in 0..EVENTS_PER_BATCH {
        if i > 0 {
            body.push(b'\n');
        }
        offsets.push(body.len() as u32);
        let head = format!(
            r#"{{"time":1700000000.{i:03},"host":"fw-01","source":"sc4s","sourcetype":"cisco:asa","index":"netfw","event":""#
        );
        body.extend_from_slice(head.as_bytes());
        let fill = event_bytes.saturating_sub(head.len() + 3);
        body.extend((0..fill).map(|k| b'a' + ((i + k) % 26) as u8));
        body.extend_from_slice(b"\"}");
    }
    Batch { body, offsets }
}

fn config(dir: &std::path::Path, mode: DurabilityMode) -> BufferConfig {
    BufferConfig {
        mode,
        max_bytes: 8 << 30,
        ..BufferConfig::new(dir)
    }
}

/// Appends, waiting out `Full` (the disk not keeping up) the way the daemon would.
fn append(b: &Buffer, batch: &Batch) -> Appended {
    let w = b.writer();
    loop {
        let r = RecordRef::new(&batch.body, 0, SystemTime::now()).with_offsets(&batch.offsets);
        match w.append(r) {
            Ok(a) => return a,
            Err(e) if e.is_full() => {
                w.wait_for_space_blocking(batch.body.len() as u64, Duration::from_secs(10));
            }
            Err(e) => panic!("append: {e}"),
        }
    }
}

/// Runs `iters` iterations on a fresh buffer; `per_iter` appends and returns the last
/// handle; the clock stops once everything is durable.
fn timed(
    mode: DurabilityMode,
    iters: u64,
    batch: &Batch,
    mut per_iter: impl FnMut(&Buffer, &Batch) -> Appended,
) -> Duration {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = Buffer::open(config(dir.path(), mode), &["hec"]).expect("open");
    let start = Instant::now();
    let mut last = None;
    for _ in 0..iters {
        last = Some(per_iter(&b, batch));
    }
    if let Some(f) = b.writer().flush() {
        f.wait_durable(None).expect("durable");
    }
    drop(last);
    let elapsed = start.elapsed();
    b.close().expect("close");
    elapsed
}

fn write(c: &mut Criterion) {
    let batch = batch();
    let mut g = c.benchmark_group("write");
    g.sample_size(10);
    g.throughput(Throughput::Elements(
        (EVENTS_PER_BATCH * BATCHES_PER_ITER) as u64,
    ));
    g.bench_function("normal", |bch| {
        bch.iter_custom(|iters| {
            timed(DurabilityMode::Normal, iters, &batch, |b, x| {
                let mut last = None;
                for _ in 0..BATCHES_PER_ITER {
                    last = Some(append(b, x));
                }
                last.expect("appended")
            })
        })
    });
    g.bench_function("reliable_pipelined", |bch| {
        bch.iter_custom(|iters| {
            timed(DurabilityMode::Reliable, iters, &batch, |b, x| {
                let mut last = None;
                for _ in 0..BATCHES_PER_ITER {
                    last = Some(append(b, x));
                }
                let last = last.expect("appended");
                last.wait_durable(None).expect("durable");
                last
            })
        })
    });
    g.bench_function("reliable_serial", |bch| {
        bch.iter_custom(|iters| {
            timed(DurabilityMode::Reliable, iters, &batch, |b, x| {
                let mut last = None;
                for _ in 0..BATCHES_PER_ITER {
                    let a = append(b, x);
                    a.wait_durable(None).expect("durable");
                    last = Some(a);
                }
                last.expect("appended")
            })
        })
    });
    g.finish();
}

fn replay(c: &mut Criterion) {
    let batch = batch();
    let dir = tempfile::tempdir().expect("tempdir");
    let batches = (64 << 20) / batch.body.len();
    {
        let b = Buffer::open(config(dir.path(), DurabilityMode::Normal), &["hec"]).expect("open");
        for _ in 0..batches {
            append(&b, &batch);
        }
        b.close().expect("close");
    }
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements((batches * EVENTS_PER_BATCH) as u64));
    g.bench_function("open_and_read", |bch| {
        bch.iter(|| {
            let b =
                Buffer::open(config(dir.path(), DurabilityMode::Normal), &["hec"]).expect("open");
            let mut r = b.reader("hec").expect("reader");
            let mut n = 0;
            while let Some(rec) = r.try_next() {
                n += rec.events() as usize;
            }
            assert_eq!(n, batches * EVENTS_PER_BATCH);
            drop(r);
            b.close().expect("close");
        })
    });
    g.finish();
}

/// Segment format 1's record encoder, as the release before format 2 had it: the payload
/// copied behind the offsets table, one CRC over the body.
fn format1_encode(payload: &[u8], offsets: &[u32], timestamp_micros: i64) -> Vec<u8> {
    let table = offsets.len() * 4;
    let body_len = table + payload.len();
    let mut buf = Vec::with_capacity(RECORD_HEADER_LEN + body_len);
    buf.resize(RECORD_HEADER_LEN, 0);
    for v in offsets {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    buf.extend_from_slice(payload);
    let header = RecordHeader {
        flags: FLAG_OFFSETS,
        body_len: body_len as u32,
        events: offsets.len() as u32,
        id: 0,
        timestamp_micros,
        check: crc32c::crc32c(&buf[RECORD_HEADER_LEN..]),
    };
    header.encode_into(&mut buf[..RECORD_HEADER_LEN]);
    buf
}

/// Format 1's read check: the body CRC, the offsets table in order, the offsets decoded.
fn format1_check(h: &RecordHeader, body: &[u8]) -> Option<Vec<u32>> {
    if crc32c::crc32c(body) != h.check {
        return None;
    }
    let table = h.events as usize * 4;
    let payload_len = body.len() - table;
    let mut prev = 0u32;
    for chunk in body[..table].chunks_exact(4) {
        let v = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        if v < prev || v as usize > payload_len {
            return None;
        }
        prev = v;
    }
    Some(
        body[..table]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

fn cpu(c: &mut Criterion) {
    let mut g = c.benchmark_group("cpu");
    for size in [150usize, 400, 800] {
        let b = batch_of(size);
        let shared = bytes::Bytes::from(b.body.clone());
        let name = format!("{EVENTS_PER_BATCH}x{size}");
        g.throughput(Throughput::Elements(EVENTS_PER_BATCH as u64));
        g.bench_function(format!("{name}/format1_encode"), |bch| {
            bch.iter(|| format1_encode(black_box(&b.body), &b.offsets, 1))
        });
        g.bench_function(format!("{name}/encode_shared"), |bch| {
            bch.iter(|| {
                let head = encode_head(black_box(&shared), 0, Some(&b.offsets), 1, 0);
                (head, shared.clone())
            })
        });
        g.bench_function(format!("{name}/encode_copy"), |bch| {
            bch.iter(|| encode_record(black_box(&b.body), 0, Some(&b.offsets), 1))
        });
        let old = format1_encode(&b.body, &b.offsets, 1);
        let old_h = RecordHeader::decode(&old).expect("format 1 header");
        g.bench_function(format!("{name}/format1_check"), |bch| {
            bch.iter(|| format1_check(&old_h, black_box(&old[RECORD_HEADER_LEN..])))
        });
        let new = encode_record(&b.body, 0, Some(&b.offsets), 1);
        let new_h = RecordHeader::decode(&new).expect("format 2 header");
        g.bench_function(format!("{name}/check_intact"), |bch| {
            bch.iter(|| {
                let body = black_box(&new[RECORD_HEADER_LEN..]);
                let checked = check_body(&new_h, body).expect("intact");
                (checked, offsets_of(&new_h, body))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, write, replay, cpu);
criterion_main!(benches);
