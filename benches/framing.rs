//! RFC 6587 decoder throughput: a 1 MiB stream of ~800-byte frames, half octet-counted and
//! half LF-framed, fed in 4 KiB and 64 KiB reads the way the TCP task does it (append to a
//! `BytesMut`, decode in place, `advance` past what was consumed).

use bytes::{Buf, BytesMut};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sluice_proto::framing::Decoder;
use std::hint::black_box;

fn stream() -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(1 << 20);
    let mut frames = 0u64;
    let mut seq = 0u64;
    while out.len() < (1 << 20) {
        let mut msg = format!(
            "<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: {seq:010}, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 "
        )
        .into_bytes();
        msg.resize(799, b'P');
        if seq.is_multiple_of(2) {
            out.extend_from_slice(format!("{} ", msg.len()).as_bytes());
            out.extend_from_slice(&msg);
        } else {
            out.extend_from_slice(&msg);
            out.push(b'\n');
        }
        seq += 1;
        frames += 1;
    }
    (out, frames)
}

/// Returns the number of frames and the bytes they hold, so nothing is optimised away.
fn decode_chunked(stream: &[u8], chunk: usize, buf: &mut BytesMut) -> (u64, usize) {
    let mut decoder = Decoder::default();
    let mut frames = 0;
    let mut bytes = 0;
    buf.clear();
    for piece in stream.chunks(chunk) {
        buf.extend_from_slice(piece);
        let mut it = decoder.frames(buf);
        for (_frame, payload) in &mut it {
            frames += 1;
            bytes += payload.len();
        }
        let consumed = it.consumed();
        buf.advance(consumed);
    }
    if decoder.finish(buf).is_some() {
        frames += 1;
    }
    (frames, bytes)
}

fn bench(c: &mut Criterion) {
    let (data, frames) = stream();
    let mut buf = BytesMut::with_capacity(256 * 1024);
    for (unit, throughput) in [
        ("bytes", Throughput::Bytes(data.len() as u64)),
        ("frames", Throughput::Elements(frames)),
    ] {
        let mut group = c.benchmark_group(format!("framing_1MiB_{unit}"));
        group.throughput(throughput);
        for chunk in [4096usize, 65536] {
            group.bench_with_input(BenchmarkId::new("chunk", chunk), &chunk, |b, &chunk| {
                b.iter(|| black_box(decode_chunked(black_box(&data), chunk, &mut buf)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
