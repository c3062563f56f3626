//! Byte-class scans eight bytes at a time (SWAR, safe code) for the RFC 5424 header and
//! STRUCTURED-DATA, where the parser otherwise spends its time in one-byte loops. Runs are
//! short (names, values of a few to a few dozen bytes), where a SIMD search's setup costs more
//! than it saves.
//!
//! Every mask below sets the high bit of each byte that matches, and is exact for the *lowest*
//! matching byte (borrows can only add false positives above a true match), so the lowest set
//! bit of an OR of masks is the first byte matching any of them.

const LO: u64 = u64::from_ne_bytes([0x01; 8]);
const HI: u64 = u64::from_ne_bytes([0x80; 8]);

#[inline(always)]
const fn splat(b: u8) -> u64 {
    LO * b as u64
}

/// Bytes equal to zero.
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
}

/// Bytes that are not PRINTUSASCII (%d33-126): controls, SP, DEL and everything >= 0x80.
#[inline(always)]
fn non_print(w: u64) -> u64 {
    let below_33 = w.wrapping_sub(splat(33)) & !w & HI;
    let high = w & HI;
    below_33 | high | zero_bytes(w ^ splat(0x7F))
}

#[inline(always)]
fn load(chunk: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(chunk);
    u64::from_le_bytes(word)
}

/// The first index at or after `from` whose byte satisfies `stop` (as a SWAR mask and as a
/// per-byte predicate for the tail), or `s.len()`.
#[inline(always)]
fn first(s: &[u8], from: usize, mask: impl Fn(u64) -> u64, stop: impl Fn(u8) -> bool) -> usize {
    let Some(rest) = s.get(from..) else {
        return s.len();
    };
    let mut chunks = rest.chunks_exact(8);
    let mut base = from;
    for chunk in chunks.by_ref() {
        let hits = mask(load(chunk));
        if hits != 0 {
            return base + (hits.trailing_zeros() / 8) as usize;
        }
        base += 8;
    }
    match chunks.remainder().iter().position(|&b| stop(b)) {
        Some(n) => base + n,
        None => s.len(),
    }
}

/// End of the run of PRINTUSASCII bytes starting at `from`.
#[inline]
pub(super) fn print_run_end(s: &[u8], from: usize) -> usize {
    first(s, from, non_print, |b| !(33..=126).contains(&b))
}

/// End of the run of SD-NAME bytes (PRINTUSASCII except `=`, `]`, `"`) starting at `from`.
#[inline]
pub(super) fn sd_name_run_end(s: &[u8], from: usize) -> usize {
    first(
        s,
        from,
        |w| {
            non_print(w)
                | zero_bytes(w ^ splat(b'='))
                | zero_bytes(w ^ splat(b']'))
                | zero_bytes(w ^ splat(b'"'))
        },
        |b| !(33..=126).contains(&b) || matches!(b, b'=' | b']' | b'"'),
    )
}

/// Index of the first `"`, `\` or `]` at or after `from`, or `s.len()`.
#[inline]
pub(super) fn value_special(s: &[u8], from: usize) -> usize {
    first(
        s,
        from,
        |w| {
            zero_bytes(w ^ splat(b'"')) | zero_bytes(w ^ splat(b'\\')) | zero_bytes(w ^ splat(b']'))
        },
        |b| matches!(b, b'"' | b'\\' | b']'),
    )
}

/// End of an RFC 3164 TAG name: the first SP, `[`, `]` or `:` at or after `from`, or `s.len()`.
#[inline]
pub(super) fn tag_name_end(s: &[u8], from: usize) -> usize {
    first(
        s,
        from,
        |w| {
            zero_bytes(w ^ splat(b' '))
                | zero_bytes(w ^ splat(b'['))
                | zero_bytes(w ^ splat(b']'))
                | zero_bytes(w ^ splat(b':'))
        },
        |b| matches!(b, b' ' | b'[' | b']' | b':'),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(s: &[u8], from: usize, stop: impl Fn(u8) -> bool) -> usize {
        s.get(from..)
            .and_then(|r| r.iter().position(|&b| stop(b)))
            .map_or(s.len(), |n| from + n)
    }

    /// Each scanner against a byte loop: every stop byte at every position of lines up to 40
    /// bytes, over fillers that include every non-stop byte (0x80..0xFF and the borrow-prone
    /// values 0x00/0x01/0x21/0x7E among them), from every start.
    #[test]
    fn scanners_agree_with_byte_loops() {
        type Pred = fn(u8) -> bool;
        type Scanner = fn(&[u8], usize) -> usize;
        let scanners: [(Scanner, Pred); 4] = [
            (print_run_end, |b| !(33..=126).contains(&b)),
            (sd_name_run_end, |b| {
                !(33..=126).contains(&b) || matches!(b, b'=' | b']' | b'"')
            }),
            (value_special, |b| matches!(b, b'"' | b'\\' | b']')),
            (tag_name_end, |b| matches!(b, b' ' | b'[' | b']' | b':')),
        ];
        for (scan, stop) in scanners {
            let fill: Vec<u8> = (0u8..=255).filter(|&b| !stop(b)).collect();
            let stops: Vec<u8> = (0u8..=255).filter(|&b| stop(b)).collect();
            for len in 0..40usize {
                for (t, &target) in stops.iter().enumerate() {
                    let pos = (t * 7) % (len + 1);
                    for seed in [0usize, 5, 77] {
                        let mut s: Vec<u8> = (0..len)
                            .map(|k| fill[(k * 31 + seed) % fill.len()])
                            .collect();
                        if pos < len {
                            s[pos] = target;
                            if pos + 3 < len {
                                s[pos + 3] = stops[(t + 1) % stops.len()];
                            }
                        }
                        for from in 0..=len + 1 {
                            assert_eq!(
                                scan(&s, from),
                                reference(&s, from, stop),
                                "{s:?} from {from}"
                            );
                        }
                    }
                }
            }
        }
    }
}
