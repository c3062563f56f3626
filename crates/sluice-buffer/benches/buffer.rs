//! Disk buffer throughput: appends in both durability modes, and replay (open + read back).
//!
//! Records are HEC-shaped batches: 500 events of 800 bytes (400 kB bodies, newline-joined,
//! with one offset per event), the size a busy SC4S destination sends. Throughput lines are
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
//!
//! The directory is a temporary directory under $TMPDIR: run it on the disk that matters.
//! `cargo bench -p sluice-buffer --bench buffer -- --warm-up-time 1 --measurement-time 5`

use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_buffer::{Appended, Buffer, BufferConfig, DurabilityMode, RecordRef};

const EVENT_BYTES: usize = 800;
const EVENTS_PER_BATCH: usize = 500;
const BATCHES_PER_ITER: usize = 8;

struct Batch {
    body: Vec<u8>,
    offsets: Vec<u32>,
}

fn batch() -> Batch {
    let mut body = Vec::with_capacity(EVENT_BYTES * EVENTS_PER_BATCH);
    let mut offsets = Vec::with_capacity(EVENTS_PER_BATCH);
    for i in 0..EVENTS_PER_BATCH {
        if i > 0 {
            body.push(b'\n');
        }
        let head = format!(
            r#"{{"time":1700000000.{i:03},"host":"fw-01","source":"sc4s","sourcetype":"cisco:asa","index":"netfw","event":""#
        );
        body.extend_from_slice(head.as_bytes());
        let fill = EVENT_BYTES - head.len() - 3;
        body.extend((0..fill).map(|k| b'a' + ((i + k) % 26) as u8));
        body.extend_from_slice(b"\"}");
        offsets.push(body.len() as u32);
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

criterion_group!(benches, write, replay);
criterion_main!(benches);
