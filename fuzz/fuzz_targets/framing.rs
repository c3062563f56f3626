//! Fuzzes the RFC 6587 decoder (`sluice_proto::framing`) with arbitrary bytes fed in
//! arbitrary chunks.
//!
//! Input layout: bytes 0-1 pick `max_frame` (1..=512, small so truncation paths are hit),
//! byte 2 seeds the chunk sizes, the rest is the TCP stream. Checked for every call:
//! no panic; `consumed` never exceeds the input; a frame lies inside the consumed prefix and
//! is at most `max_frame` long; the unconsumed tail left when the decoder asks for more
//! stays below `required_capacity` (no stall); and the frames are identical whether the
//! stream arrives in one piece or in chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_proto::framing::{Decoder, Framing};

#[derive(Debug, PartialEq, Eq)]
struct Out {
    bytes: Vec<u8>,
    framing: Framing,
    truncated: bool,
    partial: bool,
}

fn run(stream: &[u8], max: usize, mut next_chunk: impl FnMut() -> usize) -> (Vec<Out>, u64) {
    let mut decoder = Decoder::new(max);
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Vec::new();
    let mut fed = 0;
    while fed < stream.len() {
        let end = fed.saturating_add(next_chunk().max(1)).min(stream.len());
        buf.extend_from_slice(&stream[fed..end]);
        fed = end;
        let mut pos = 0;
        loop {
            let step = decoder.decode(&buf[pos..]);
            assert!(step.consumed <= buf.len() - pos, "consumed beyond input");
            let Some(frame) = step.frame else {
                pos += step.consumed;
                break;
            };
            assert!(frame.start <= frame.end && frame.end <= step.consumed);
            assert!(frame.len() <= max, "frame longer than max_frame");
            assert!(!frame.partial);
            out.push(Out {
                bytes: buf[pos + frame.start..pos + frame.end].to_vec(),
                framing: frame.framing,
                truncated: frame.truncated,
                partial: frame.partial,
            });
            pos += step.consumed;
        }
        buf.drain(..pos);
        assert!(buf.len() < decoder.required_capacity(), "decoder stalled");
    }
    if let Some(frame) = decoder.finish(&buf) {
        assert!(frame.end <= buf.len() && frame.len() <= max && frame.partial);
        out.push(Out {
            bytes: buf[frame.start..frame.end].to_vec(),
            framing: frame.framing,
            truncated: frame.truncated,
            partial: frame.partial,
        });
    }
    assert!(decoder.at_boundary());
    let stats = decoder.stats();
    assert_eq!(stats.frames, out.len() as u64);
    (out, stats.discarded_bytes)
}

fuzz_target!(|data: &[u8]| {
    let [a, b, seed, stream @ ..] = data else {
        return;
    };
    let max = usize::from(u16::from_le_bytes([*a, *b]) % 512) + 1;
    let whole = run(stream, max, || usize::MAX);
    // xorshift32 for chunk sizes in 1..=spread.
    let spread = usize::from(*seed) * 4 + 1;
    let mut state = u32::from(*seed) | 1;
    let chunked = run(stream, max, || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        1 + state as usize % spread
    });
    assert_eq!(whole, chunked, "result depends on chunking");
});
