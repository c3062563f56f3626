//! JSON string writing for the hot path.
//!
//! Syslog text is bytes, not UTF-8: devices send Latin-1, truncated multi-byte characters and
//! raw control bytes. Splunk HEC needs valid UTF-8 JSON, so every string the encoder writes
//! goes through [`write_str`] (or [`escape_into`] for a string assembled from several pieces),
//! which renders arbitrary bytes as a JSON string literal in one pass:
//!
//! * `"` and `\` are written as `\"` and `\\`;
//! * the control bytes 0x08, 0x09, 0x0A, 0x0C and 0x0D are written as `\b`, `\t`, `\n`, `\f`
//!   and `\r`; every other byte below 0x20 (including NUL) as `\u00XX` with lowercase hex;
//!   DEL (0x7F) needs no escape in JSON and is copied;
//! * valid UTF-8 sequences are copied unchanged;
//! * invalid UTF-8 is decoded lossily with exactly the rule of [`String::from_utf8_lossy`]:
//!   one U+FFFD per *maximal invalid subsequence* (the Unicode "substitution of maximal
//!   subparts" practice), so a truncated three-byte sequence costs one replacement
//!   character, not two or three.
//!
//! The result therefore always parses as JSON, and the decoded string equals
//! `String::from_utf8_lossy(input)`; a property test checks exactly that.
//!
//! Speed: the escaper is called ~20 times per event, mostly on short table strings
//! (`nix:syslog`, `osnix`), and once or twice on the ~400-byte message text. So the fixed
//! cost of a call matters as much as the bulk rate:
//!
//! * up to 16 bytes (one block), and clean strings of up to 32 (two blocks), are tested for
//!   bytes that need attention with SWAR bit tricks on `u64` words (no `unsafe`, no SIMD
//!   intrinsics) and *copied whole* as fixed-size blocks (a few register moves, no `memcpy`
//!   call), the length cut back afterwards. A tail shorter than a block is gathered into a
//!   padded block with two overlapping loads.
//! * longer text is scanned 32 bytes per step (a test the compiler turns into SIMD compares)
//!   and copied in runs. Most messages have no special byte at all; those that have one
//!   usually have many close together (quoted key=value, CEF, JSON payloads: in the vendor
//!   corpus half of the gaps between special bytes are under 8 bytes), so after a special
//!   byte the next word is tested first, and a dirty 32-byte window is resolved from two
//!   block masks with one branch rather than a loop over its words.
//!
//! Valid multi-byte characters are copied as they are.
//!
//! The unit tests compare the output byte for byte with a plain reference implementation
//! (`String::from_utf8_lossy`, then character-by-character escaping) on every byte value, at
//! every offset around the block boundaries, and on random input.

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
const REPLACEMENT: [u8; 3] = [0xEF, 0xBF, 0xBD];

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Bytes per block of the scanner.
const BLOCK: usize = 16;

/// Two-character escapes of the control bytes that have one (0 = `\u00XX`).
static SHORT_ESCAPE: [u8; 32] = {
    let mut t = [0u8; 32];
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `bytes` to `out` as one JSON string literal, quotes included.
#[inline]
pub fn write_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2 + BLOCK);
    out.push(b'"');
    escape_generic::<false>(out, bytes);
    out.push(b'"');
}

/// Like [`write_str`], with ASCII `A`-`Z` lowercased while copying (the SC4S
/// `$(lowercase ${HOST})`). Non-ASCII letters are left as they are: hostnames that reach the
/// encoder are ASCII in practice, and lowercasing Unicode would need tables and allocation.
pub fn write_str_lowercase(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2 + BLOCK);
    out.push(b'"');
    escape_generic::<true>(out, bytes);
    out.push(b'"');
}

/// Appends the *content* of a JSON string (no quotes) for `bytes`, with the same escaping
/// and lossy UTF-8 rules as [`write_str`]. Use it to build one JSON string out of several
/// pieces; pieces should be split at character boundaries (the encoder splits only at ASCII
/// delimiters), otherwise a character cut in two becomes two replacement characters.
#[inline]
pub fn escape_into(out: &mut Vec<u8>, bytes: &[u8]) {
    escape_generic::<false>(out, bytes);
}

/// [`escape_into`] with ASCII `A`-`Z` lowercased while copying.
pub fn escape_lowercase_into(out: &mut Vec<u8>, bytes: &[u8]) {
    escape_generic::<true>(out, bytes);
}

/// Appends the content of a JSON string for the JSON string literal of `bytes` (content
/// only, no quotes): what [`escape_into`] of the output of [`escape_into`] would give, in
/// one pass and without a buffer in between. For a JSON text nested in a JSON string (SC4S's
/// `t_json_values_msg` event, `{"message":"..."}`, the event of every loggen line). Clean
/// runs are found and copied as [`escape_into`] finds and copies them.
pub fn escape_twice_into(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    out.reserve(n + 8);
    let mut start = 0;
    let mut i = 0;
    loop {
        i = next_special(bytes, i);
        if i >= n {
            break;
        }
        let b = bytes[i];
        if b >= 0x80 {
            match utf8_sequence(&bytes[i..]) {
                Ok(len) => {
                    i += len;
                    continue;
                }
                Err(bad) => {
                    copy_run::<false>(out, bytes, start, i);
                    out.extend_from_slice(&REPLACEMENT);
                    i += bad;
                }
            }
        } else {
            copy_run::<false>(out, bytes, start, i);
            // The inner escape's backslash is escaped again, and so is its `"` or `\`.
            out.extend_from_slice(b"\\\\");
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                _ => {
                    let short = SHORT_ESCAPE[usize::from(b)];
                    if short != 0 {
                        out.push(short);
                    } else {
                        out.extend_from_slice(&[
                            b'u',
                            b'0',
                            b'0',
                            HEX[usize::from(b >> 4)],
                            HEX[usize::from(b & 0xF)],
                        ]);
                    }
                }
            }
            i += 1;
        }
        start = i;
    }
    copy_run::<false>(out, bytes, start, n);
}

/// Short strings (table values such as `nix:syslog`, `osnix`, hostnames) are most of the
/// calls: one block, tested and stored in registers, inlined into the caller. Anything
/// longer, or with a byte that needs escaping, takes [`escape_slow`].
#[inline(always)]
fn escape_generic<const LOWER: bool>(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    if n <= BLOCK {
        if n == 0 {
            return;
        }
        let (lo, hi) = if n == BLOCK {
            (load_u64(bytes, 0), load_u64(bytes, 8))
        } else {
            gather(bytes)
        };
        // Exact per lane; the zero padding past `n` is flagged and ignored.
        let mask = (u128::from(special_mask(hi)) << 64) | u128::from(special_mask(lo));
        if (mask.trailing_zeros() / 8) as usize >= n {
            if LOWER {
                push_words(out, ascii_lowercase(lo), ascii_lowercase(hi));
            } else {
                push_words(out, lo, hi);
            }
            out.truncate(out.len() - (BLOCK - n));
            return;
        }
    }
    escape_slow::<LOWER>(out, bytes);
}

/// Appends `bytes`, which need no escaping (ASCII text the encoder itself chose: field
/// names, numbers, table names), as they are. Up to one block is stored as a fixed-size
/// block and cut back, which spares a `memcpy` call for the short pieces that make up most
/// of an event.
#[inline(always)]
pub(crate) fn push_plain(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    if n == 0 || n > BLOCK {
        out.extend_from_slice(bytes);
        return;
    }
    let (lo, hi) = if n == BLOCK {
        (load_u64(bytes, 0), load_u64(bytes, 8))
    } else {
        gather(bytes)
    };
    push_words(out, lo, hi);
    out.truncate(out.len() - (BLOCK - n));
}

/// Appends the first `len` (at most 16) bytes of `block`, little-endian: text assembled in a
/// register (numbers, addresses) is stored without a round trip through the stack, where
/// narrow stores read back as words stall on store forwarding.
#[inline(always)]
pub(crate) fn push_block(out: &mut Vec<u8>, block: u128, len: usize) {
    out.extend_from_slice(&block.to_le_bytes());
    out.truncate(out.len() - (BLOCK - len.min(BLOCK)));
}

#[inline(never)]
fn escape_slow<const LOWER: bool>(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    if n > BLOCK && n <= 2 * BLOCK {
        // Table strings a little longer than a block (`.app.app-syslog-cisco_asa`,
        // `program:...`): two blocks, and no scanner set-up, when nothing needs escaping.
        let (lo0, hi0) = (load_u64(bytes, 0), load_u64(bytes, 8));
        let (lo1, hi1) = if n == 2 * BLOCK {
            (load_u64(bytes, 16), load_u64(bytes, 24))
        } else {
            gather(&bytes[BLOCK..])
        };
        let clean = (special_mask(lo0) | special_mask(hi0)) == 0 && {
            let tail = (u128::from(special_mask(hi1)) << 64) | u128::from(special_mask(lo1));
            (tail.trailing_zeros() / 8) as usize >= n - BLOCK
        };
        if clean {
            if LOWER {
                push_words(out, ascii_lowercase(lo0), ascii_lowercase(hi0));
                push_words(out, ascii_lowercase(lo1), ascii_lowercase(hi1));
            } else {
                push_words(out, lo0, hi0);
                push_words(out, lo1, hi1);
            }
            out.truncate(out.len() - (2 * BLOCK - n));
            return;
        }
    }
    // `start..i` is the pending run of bytes to copy verbatim.
    let mut start = 0;
    let mut i = 0;
    loop {
        i = next_special(bytes, i);
        if i >= n {
            break;
        }
        if bytes[i] >= 0x80 {
            match utf8_sequence(&bytes[i..]) {
                // Valid: the character stays part of the run.
                Ok(len) => {
                    i += len;
                    continue;
                }
                Err(bad) => {
                    copy_run::<LOWER>(out, bytes, start, i);
                    out.extend_from_slice(&REPLACEMENT);
                    i += bad;
                }
            }
        } else {
            copy_run::<LOWER>(out, bytes, start, i);
            escape_ascii(out, bytes[i]);
            i += 1;
        }
        start = i;
    }
    copy_run::<LOWER>(out, bytes, start, n);
}

/// Appends `bytes[start..end]`. A run of up to one block is stored as one fixed-size block
/// (read from the input where the block fits, else gathered from the short tail) and the
/// length cut back: a couple of register moves instead of a `memcpy` call.
#[inline(always)]
fn copy_run<const LOWER: bool>(out: &mut Vec<u8>, bytes: &[u8], start: usize, end: usize) {
    let len = end - start;
    if len > BLOCK {
        let at = out.len();
        out.extend_from_slice(&bytes[start..end]);
        if LOWER {
            // Only ASCII letters change; UTF-8 lead and continuation bytes are >= 0x80.
            out[at..].make_ascii_lowercase();
        }
        return;
    }
    let (lo, hi) = if let Some(block) = bytes.get(start..start + BLOCK) {
        (load_u64(block, 0), load_u64(block, 8))
    } else if len == 0 {
        return;
    } else {
        gather(&bytes[start..end])
    };
    if LOWER {
        push_words(out, ascii_lowercase(lo), ascii_lowercase(hi));
    } else {
        push_words(out, lo, hi);
    }
    out.truncate(out.len() - (BLOCK - len));
}

#[inline(always)]
fn push_words(out: &mut Vec<u8>, lo: u64, hi: u64) {
    out.extend_from_slice(&lo.to_le_bytes());
    out.extend_from_slice(&hi.to_le_bytes());
}

/// Writes the escape of the ASCII byte `b` (`< 0x20`, `"` or `\\`).
#[inline(always)]
fn escape_ascii(out: &mut Vec<u8>, b: u8) {
    if b >= 0x20 {
        out.extend_from_slice(&[b'\\', b]);
        return;
    }
    let short = SHORT_ESCAPE[usize::from(b)];
    if short != 0 {
        out.extend_from_slice(&[b'\\', short]);
    } else {
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xF)],
        ]);
    }
}

#[inline(always)]
fn load_u64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn load_u32(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(word))
}

/// `rest` (1 to 15 bytes) as the two words of a block padded with zeros. Built in registers
/// from at most two overlapping loads: assembling it in a stack buffer with narrow stores and
/// reading it back as words stalls on store forwarding.
#[inline(always)]
fn gather(rest: &[u8]) -> (u64, u64) {
    let len = rest.len();
    if len > 8 {
        // The last eight bytes, shifted so that `rest[8]` is the low lane.
        let hi = load_u64(rest, len - 8) >> (8 * (16 - len));
        (load_u64(rest, 0), hi)
    } else if len == 8 {
        (load_u64(rest, 0), 0)
    } else if len >= 4 {
        // Overlapping lanes get the same byte from both loads.
        (
            load_u32(rest, 0) | (load_u32(rest, len - 4) << (8 * (len - 4))),
            0,
        )
    } else {
        let word = u64::from(rest[0])
            | (u64::from(rest[len / 2]) << (8 * (len / 2)))
            | (u64::from(rest[len - 1]) << (8 * (len - 1)));
        (word, 0)
    }
}

/// `A`-`Z` lowercased in each byte lane; lanes >= 0x80 (UTF-8) untouched.
#[inline(always)]
fn ascii_lowercase(w: u64) -> u64 {
    let low7 = w & !HI;
    let at_least_a = low7 + LO * (0x80 - u64::from(b'A'));
    let above_z = low7 + LO * (0x80 - u64::from(b'Z') - 1);
    let upper = at_least_a & !above_z & !w & HI;
    w | (upper >> 2)
}

/// Index of the first byte at or after `i` that is not plain, escape-free ASCII (`< 0x20`,
/// `"`, `\\` or `>= 0x80`), or `bytes.len()`.
#[inline(always)]
fn next_special(bytes: &[u8], mut i: usize) -> usize {
    let n = bytes.len();
    // Specials come in clusters (quoted values, escaped JSON): the next word first.
    if let Some(word) = bytes.get(i..i + 8) {
        let mask = special_mask(load_u64(word, 0));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    // Long clean stretches: 32 bytes per step with a test the compiler turns into SIMD
    // compares (it cannot tell *where*, only *whether*).
    while let Some(wide) = bytes.get(i..i + WIDE) {
        if any_special(wide.try_into().unwrap_or(&[0; WIDE])) {
            // Where, from two blocks' masks: one branch instead of a loop over four words
            // whose exit the branch predictor cannot guess.
            let lo = block_mask(wide, 0);
            if lo != 0 {
                return i + (lo.trailing_zeros() / 8) as usize;
            }
            return i + BLOCK + (block_mask(wide, BLOCK).trailing_zeros() / 8) as usize;
        }
        i += WIDE;
    }
    // The exact position in the tail, eight bytes per step.
    while let Some(word) = bytes.get(i..i + 8) {
        let mask = special_mask(load_u64(word, 0));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    if i >= n {
        return n;
    }
    let (mask, base) = if n >= 8 {
        // The last word of the input, lanes before `i` (already scanned) ignored.
        let base = n - 8;
        let skip = 8 * (i - base) as u32;
        ((special_mask(load_u64(bytes, base)) >> skip) << skip, base)
    } else {
        // Padding lanes are zero, flagged as control bytes: they lie past the end.
        (special_mask(gather(&bytes[i..]).0), i)
    };
    (base + (mask.trailing_zeros() / 8) as usize).min(n)
}

/// [`special_mask`] of the block at `bytes[at..at + BLOCK]`.
#[inline(always)]
fn block_mask(bytes: &[u8], at: usize) -> u128 {
    (u128::from(special_mask(load_u64(bytes, at + 8))) << 64)
        | u128::from(special_mask(load_u64(bytes, at)))
}

/// Bytes per step of the bulk scan.
const WIDE: usize = 32;

/// Whether any byte of `block` is `< 0x20`, `"`, `\\` or `>= 0x80`.
#[inline(always)]
fn any_special(block: &[u8; WIDE]) -> bool {
    let mut any = false;
    for &b in block {
        any |= (b < 0x20) | (b == b'"') | (b == b'\\') | (b >= 0x80);
    }
    any
}

/// High bit set in each byte lane that is `< 0x20`, `"`, `\\` or `>= 0x80`. Exact per lane:
/// only the low seven bits of each lane are added to, so no carry crosses into the next lane
/// (which lets [`next_special`] mask lanes off freely, and take a lane past the first
/// special one at face value).
#[inline(always)]
fn special_mask(w: u64) -> u64 {
    let low7 = w & !HI;
    // High bit of each sum set when the lane's low seven bits are >= 0x20 / not `"` / not `\\`.
    let printable = low7 + LO * 0x60;
    let not_quote = (low7 ^ (LO * u64::from(b'"'))) + LO * 0x7F;
    let not_backslash = (low7 ^ (LO * u64::from(b'\\'))) + LO * 0x7F;
    (w | !(printable & not_quote & not_backslash)) & HI
}

/// Checks the UTF-8 sequence that starts at `s[0]` (a byte >= 0x80).
///
/// `Ok(len)`: a valid character of `len` bytes. `Err(len)`: an invalid maximal subpart of
/// `len` bytes (at least 1) that becomes one U+FFFD. The rules are those of the Unicode
/// standard (table 3-7, well-formed byte sequences), which `from_utf8_lossy` follows: a
/// subpart ends at the first byte that cannot continue it, and that byte is not consumed.
#[inline]
fn utf8_sequence(s: &[u8]) -> Result<usize, usize> {
    let is_cont = |k: usize| matches!(s.get(k), Some(0x80..=0xBF));
    match s[0] {
        0xC2..=0xDF => {
            if is_cont(1) {
                Ok(2)
            } else {
                Err(1)
            }
        }
        first @ 0xE0..=0xEF => {
            let second_ok = matches!(
                (first, s.get(1)),
                (0xE0, Some(0xA0..=0xBF))
                    | (0xE1..=0xEC, Some(0x80..=0xBF))
                    | (0xED, Some(0x80..=0x9F))
                    | (0xEE..=0xEF, Some(0x80..=0xBF))
            );
            if !second_ok {
                Err(1)
            } else if !is_cont(2) {
                Err(2)
            } else {
                Ok(3)
            }
        }
        first @ 0xF0..=0xF4 => {
            let second_ok = matches!(
                (first, s.get(1)),
                (0xF0, Some(0x90..=0xBF))
                    | (0xF1..=0xF3, Some(0x80..=0xBF))
                    | (0xF4, Some(0x80..=0x8F))
            );
            if !second_ok {
                Err(1)
            } else if !is_cont(2) {
                Err(2)
            } else if !is_cont(3) {
                Err(3)
            } else {
                Ok(4)
            }
        }
        // 0x80..=0xC1 (continuation bytes, overlong leads) and 0xF5..=0xFF.
        _ => Err(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn json(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        write_str(&mut out, bytes);
        String::from_utf8(out).expect("encoder output must be UTF-8")
    }

    fn decoded(bytes: &[u8]) -> String {
        let text = json(bytes);
        serde_json::from_str::<String>(&text).expect("encoder output must parse as a JSON string")
    }

    #[test]
    fn escapes() {
        assert_eq!(json(b""), r#""""#);
        assert_eq!(json(b"plain text"), r#""plain text""#);
        assert_eq!(json(br#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(
            json(b"\n\r\t\x08\x0c\x00\x01\x1f\x7f"),
            "\"\\n\\r\\t\\b\\f\\u0000\\u0001\\u001f\x7f\""
        );
        assert_eq!(json("café ü €".as_bytes()), "\"café ü €\"");
    }

    proptest! {
        /// Escaping twice in one pass is escaping the escape.
        #[test]
        fn escape_twice_is_escape_of_escape(input in proptest::collection::vec(
            prop_oneof![
                Just(b'"'), Just(b'\\'), Just(b'\n'), Just(0u8), Just(0x1f), Just(0xe9),
                Just(0xe2), Just(0x82), Just(b'x'), any::<u8>(),
            ],
            0..40,
        )) {
            let mut once = Vec::new();
            escape_into(&mut once, &input);
            let mut want = Vec::new();
            escape_into(&mut want, &once);
            let mut got = Vec::new();
            escape_twice_into(&mut got, &input);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn specials_at_every_lane_of_the_word() {
        // A special byte in each of the 8 SWAR lanes, and in the tail, must be found exactly
        // where it is, with no false positive in front of it.
        for special in [b'"', b'\\', b'\n', 0u8, 0x1f, 0xe9] {
            for pos in 0..20 {
                let mut input = vec![b'x'; 20];
                input[pos] = special;
                assert_eq!(
                    decoded(&input),
                    String::from_utf8_lossy(&input),
                    "special {special:#x} at {pos}"
                );
            }
        }
    }

    #[test]
    fn lossy_matches_std_on_known_cases() {
        let cases: &[&[u8]] = &[
            b"caf\xe9",          // Latin-1
            b"\xe2\x82",         // truncated 3-byte sequence at the end
            b"\xe2\x82x",        // truncated 3-byte sequence mid-text
            b"\xf0\x9f\x98",     // truncated 4-byte
            b"\xed\xa0\x80",     // surrogate (invalid second byte for 0xED)
            b"\xe0\x80\x80",     // overlong 3-byte
            b"\xc0\xaf",         // overlong 2-byte
            b"\xf4\x90\x80\x80", // above U+10FFFF
            b"\xf5\xff\xfe",     // never-valid bytes
            b"\x80\xbf",         // lone continuation bytes
            "ok \u{1F600} ok".as_bytes(),
        ];
        for case in cases {
            assert_eq!(decoded(case), String::from_utf8_lossy(case), "{case:x?}");
        }
    }

    #[test]
    fn lowercase_only_touches_ascii_letters() {
        let mut out = Vec::new();
        write_str_lowercase(&mut out, "Host-01.EXAMPLE.com\"É\u{0}".as_bytes());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"host-01.example.com\\\"É\\u0000\""
        );
    }

    #[test]
    fn pieces_concatenate() {
        let mut out = vec![b'"'];
        escape_into(&mut out, b"sshd[1]: ");
        escape_into(&mut out, b"say \"hi\"\n");
        out.push(b'"');
        let s: String = serde_json::from_slice(&out).unwrap();
        assert_eq!(s, "sshd[1]: say \"hi\"\n");
    }

    /// The escaping rules written the obvious way, one character at a time.
    fn reference(bytes: &[u8], lower: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for ch in String::from_utf8_lossy(bytes).chars() {
            match ch {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\u{08}' => out.extend_from_slice(b"\\b"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\u{0c}' => out.extend_from_slice(b"\\f"),
                '\r' => out.extend_from_slice(b"\\r"),
                c if (c as u32) < 0x20 => {
                    out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
                }
                c => {
                    let c = if lower { c.to_ascii_lowercase() } else { c };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        out
    }

    /// Both escapers, into a buffer that already holds something (the encoder never starts
    /// from an empty one), compared with the reference.
    fn check(bytes: &[u8]) {
        for lower in [false, true] {
            let mut out = b"prefix".to_vec();
            if lower {
                escape_lowercase_into(&mut out, bytes);
            } else {
                escape_into(&mut out, bytes);
            }
            assert_eq!(
                &out[6..],
                reference(bytes, lower).as_slice(),
                "input {bytes:x?} (lowercase: {lower})"
            );
        }
    }

    #[test]
    fn every_byte_value_at_every_offset_around_block_boundaries() {
        for b in 0..=255u8 {
            for len in 1..=(2 * BLOCK + 3) {
                for pos in 0..len {
                    let mut input = vec![b'a'; len];
                    input[pos] = b;
                    check(&input);
                }
            }
        }
    }

    #[test]
    fn byte_pairs() {
        // Every two-byte sequence, alone and straddling the first block boundary.
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                check(&[a, b]);
                let mut input = vec![b'x'; BLOCK + 1];
                input[BLOCK - 1] = a;
                input[BLOCK] = b;
                check(&input);
            }
        }
    }

    #[test]
    fn utf8_edges_across_block_boundaries() {
        let chars: &[&[u8]] = &[
            "é".as_bytes(),
            "€".as_bytes(),
            "\u{1F600}".as_bytes(),
            "\u{7FF}".as_bytes(),
            "\u{800}".as_bytes(),
            "\u{FFFF}".as_bytes(),
            "\u{10000}".as_bytes(),
            "\u{10FFFF}".as_bytes(),
            "\u{D7FF}".as_bytes(),
            "\u{E000}".as_bytes(),
            b"\xe2\x82",         // truncated 3-byte
            b"\xf0\x9f\x98",     // truncated 4-byte
            b"\xed\xa0\x80",     // surrogate
            b"\xe0\x80\x80",     // overlong 3-byte
            b"\xc0\xaf",         // overlong 2-byte
            b"\xc1\xbf",         // overlong 2-byte
            b"\xf4\x90\x80\x80", // above U+10FFFF
            b"\xf5\x80",         // never-valid lead
            b"\xff",
            b"\x80\xbf", // lone continuation bytes
        ];
        for c in chars {
            for before in 0..(2 * BLOCK + 2) {
                for after in [0, 1, 5, BLOCK] {
                    let mut input = vec![b'A'; before];
                    input.extend_from_slice(c);
                    input.extend(std::iter::repeat_n(b'Z', after));
                    check(&input);
                    // The sequence cut short by the end of the input.
                    for cut in 1..c.len() {
                        check(&input[..before + cut]);
                    }
                }
            }
        }
    }

    #[test]
    fn plain_copies_any_length() {
        let text: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len in 0..=text.len() {
            let mut out = b"prefix".to_vec();
            push_plain(&mut out, &text[..len]);
            assert_eq!(&out[6..], &text[..len]);
        }
    }

    #[test]
    fn runs_of_specials_and_long_clean_runs() {
        check(&[b'"'; 100]);
        check(&[b'\\'; 37]);
        check(&[0u8; 40]);
        check(&[0xe9; 33]);
        check("é".repeat(40).as_bytes());
        let long: Vec<u8> = (0..5000u32).map(|i| b"Ab-Cd.Ef "[i as usize % 9]).collect();
        check(&long);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_bytes_round_trip_lossily(input in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(decoded(&input), String::from_utf8_lossy(&input).into_owned());
        }

        #[test]
        fn mostly_ascii_round_trips(
            input in proptest::collection::vec(
                prop_oneof![
                    8 => 0x20u8..0x7f,
                    1 => any::<u8>(),
                    1 => Just(b'"'),
                    1 => Just(b'\\'),
                ],
                0..300,
            )
        ) {
            prop_assert_eq!(decoded(&input), String::from_utf8_lossy(&input).into_owned());
        }

        #[test]
        fn arbitrary_bytes_match_the_reference(input in proptest::collection::vec(any::<u8>(), 0..300)) {
            check(&input);
        }

        #[test]
        fn mixed_input_matches_the_reference(
            input in proptest::collection::vec(
                prop_oneof![
                    8 => 0x20u8..0x7f,
                    2 => 0x41u8..0x5b,
                    1 => any::<u8>(),
                    1 => Just(b'"'),
                    1 => Just(b'\\'),
                    1 => 0xc2u8..0xf5,
                    1 => 0x80u8..0xc0,
                ],
                0..200,
            )
        ) {
            check(&input);
        }

        #[test]
        fn valid_unicode_round_trips_exactly(s in "\\PC*") {
            prop_assert_eq!(decoded(s.as_bytes()), s);
        }
    }
}
