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
//! Speed: the common message is ~800 bytes of printable ASCII. The scanner looks at eight
//! bytes per step with SWAR bit tricks (no `unsafe`, no SIMD intrinsics) to find the next byte
//! that needs attention, then copies the whole safe run with one `extend_from_slice`. Valid
//! multi-byte characters do not end a run, so mostly-ASCII text with the odd `é` stays on the
//! bulk path.

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Per-byte action for the slow path: 0 = copy, `b'u'` = `\u00XX`, another ASCII letter or
/// symbol = the two-character escape `\<that byte>`, [`NON_ASCII`] = start of a UTF-8
/// sequence (valid or not) to be checked.
const NON_ASCII: u8 = 1;

static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    let mut i = 0x80;
    while i < 0x100 {
        t[i] = NON_ASCII;
        i += 1;
    }
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `bytes` to `out` as one JSON string literal, quotes included.
pub fn write_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    escape_generic::<false>(out, bytes);
    out.push(b'"');
}

/// Like [`write_str`], with ASCII `A`-`Z` lowercased while copying (the SC4S
/// `$(lowercase ${HOST})`). Non-ASCII letters are left as they are: hostnames that reach the
/// encoder are ASCII in practice, and lowercasing Unicode would need tables and allocation.
pub fn write_str_lowercase(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    escape_generic::<true>(out, bytes);
    out.push(b'"');
}

/// Appends the *content* of a JSON string (no quotes) for `bytes`, with the same escaping
/// and lossy UTF-8 rules as [`write_str`]. Use it to build one JSON string out of several
/// pieces; pieces should be split at character boundaries (the encoder splits only at ASCII
/// delimiters), otherwise a character cut in two becomes two replacement characters.
pub fn escape_into(out: &mut Vec<u8>, bytes: &[u8]) {
    escape_generic::<false>(out, bytes);
}

/// [`escape_into`] with ASCII `A`-`Z` lowercased while copying.
pub fn escape_lowercase_into(out: &mut Vec<u8>, bytes: &[u8]) {
    escape_generic::<true>(out, bytes);
}

fn escape_generic<const LOWER: bool>(out: &mut Vec<u8>, bytes: &[u8]) {
    let n = bytes.len();
    // `start..i` is the pending run of bytes to copy verbatim.
    let mut start = 0;
    let mut i = 0;
    loop {
        i = next_special(bytes, i);
        if i >= n {
            break;
        }
        let b = bytes[i];
        let class = CLASS[b as usize];
        if class == NON_ASCII {
            match utf8_sequence(&bytes[i..]) {
                Ok(len) => {
                    // Valid: the character stays part of the run.
                    i += len;
                    continue;
                }
                Err(bad) => {
                    flush::<LOWER>(out, &bytes[start..i]);
                    out.extend_from_slice(REPLACEMENT);
                    i += bad;
                }
            }
        } else {
            flush::<LOWER>(out, &bytes[start..i]);
            if class == b'u' {
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 0xF) as usize],
                ]);
            } else {
                out.extend_from_slice(&[b'\\', class]);
            }
            i += 1;
        }
        start = i;
    }
    flush::<LOWER>(out, &bytes[start..]);
}

#[inline]
fn flush<const LOWER: bool>(out: &mut Vec<u8>, run: &[u8]) {
    let at = out.len();
    out.extend_from_slice(run);
    if LOWER {
        // Only ASCII letters change; UTF-8 lead and continuation bytes are >= 0x80.
        out[at..].make_ascii_lowercase();
    }
}

/// Index of the first byte at or after `i` that is not plain, escape-free ASCII
/// (`< 0x20`, `"`, `\` or `>= 0x80`), or `bytes.len()`.
#[inline]
fn next_special(bytes: &[u8], mut i: usize) -> usize {
    let n = bytes.len();
    // Two words per step: the loop overhead is then paid once per 16 bytes.
    while i + 16 <= n {
        let low = special_mask(load_u64(bytes, i));
        let high = special_mask(load_u64(bytes, i + 8));
        if low | high != 0 {
            // The lowest flagged byte is exact: each term of the mask can only produce false
            // positives *above* (more significant than) a genuinely special byte, because
            // borrows propagate upwards. Little-endian load: lowest bit = first byte.
            return if low != 0 {
                i + (low.trailing_zeros() / 8) as usize
            } else {
                i + 8 + (high.trailing_zeros() / 8) as usize
            };
        }
        i += 16;
    }
    while i + 8 <= n {
        let mask = special_mask(load_u64(bytes, i));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n {
        if CLASS[bytes[i] as usize] != 0 {
            return i;
        }
        i += 1;
    }
    n
}

#[inline]
fn load_u64(bytes: &[u8], i: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[i..i + 8]);
    u64::from_le_bytes(word)
}

/// High bit set in each byte lane that holds a byte needing attention.
#[inline]
fn special_mask(w: u64) -> u64 {
    let control = w.wrapping_sub(LO * 0x20) & !w & HI;
    let quote = has_zero_byte(w ^ (LO * u64::from(b'"')));
    let backslash = has_zero_byte(w ^ (LO * u64::from(b'\\')));
    control | quote | backslash | (w & HI)
}

#[inline]
fn has_zero_byte(v: u64) -> u64 {
    v.wrapping_sub(LO) & !v & HI
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
        fn valid_unicode_round_trips_exactly(s in "\\PC*") {
            prop_assert_eq!(decoded(s.as_bytes()), s);
        }
    }
}
