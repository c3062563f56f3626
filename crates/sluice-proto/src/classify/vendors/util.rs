//! Small helpers shared by vendor files (not a vendor).

use std::sync::LazyLock;

use crate::classify::value::{INLINE_CAP, Inline, Value};

/// `needle` occurs in `hay`, with the searcher built once (`memchr::memmem::find` builds
/// one per call, which costs about as much as searching a whole message): for
/// [`When::Raw`](crate::classify::registry::When::Raw) checks that run on every message of
/// a topic.
pub(crate) fn contains(needle: &LazyLock<memchr::memmem::Finder<'static>>, hay: &[u8]) -> bool {
    needle.find(hay).is_some()
}

/// Where the first `: %` starts (Cisco's header end: `: %FAC-S-MNEMONIC`). A search for
/// the rare `%`, checked for `: ` before it: the memmem searcher keys on a rare byte pair of
/// the needle, and `: ` is everywhere in syslog, so it stopped on nearly every header.
pub(crate) fn colon_percent(hay: &[u8]) -> Option<usize> {
    // One `memchr` per `%` (most messages have none): the iterator's set-up cost about
    // as much as the search on a short line, and this runs on every message.
    let mut from = 0;
    while let Some(at) = memchr::memchr(b'%', &hay[from..]) {
        let i = from + at;
        if i >= 2 && &hay[i - 2..i] == b": " {
            return Some(i - 2);
        }
        from = i + 1;
    }
    None
}

/// The [`When::Raw`](crate::classify::registry::When::Raw) check of the vendors whose
/// header ends `: %` (Cisco, Arista): one function, so the dispatcher runs it once per
/// message for all of them.
pub(crate) fn has_colon_percent(raw: &[u8]) -> bool {
    colon_percent(raw).is_some()
}

/// The first occurrence of `needle` in `hay`, as `memchr::memmem::find` gives it. A field
/// (a CEF product, a FortiGate `type`) is shorter than what building memmem's searcher
/// costs, so a short haystack is compared in place; a long one gets the searcher.
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    if hay.len() < 64 {
        let first = needle[0];
        return (0..(hay.len() + 1).saturating_sub(needle.len()))
            .find(|&i| hay[i] == first && hay[i..].starts_with(needle));
    }
    memchr::memmem::find(hay, needle)
}

/// The first occurrence of a literal needle, with its searcher built once per call site
/// (`memchr::memmem::find` builds one per call, which costs about as much as searching a
/// short field).
macro_rules! find_lit {
    ($hay:expr, $needle:expr) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        FINDER.find($hay)
    }};
}
pub(crate) use find_lit;

/// A hand-written scanner met a byte where a Unicode class of the regex it stands for (`\d`,
/// `\w`, `\s`, a negated class) could differ from its ASCII meaning: the caller runs the
/// regex instead. Scanners return `Err(Unsure)` only on non-ASCII bytes, which the
/// vendors' headers almost never hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unsure;

/// `\s` on an ASCII byte (vertical tab included, unlike `u8::is_ascii_whitespace`).
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// Where a regex `.*` starting at `at` ends: at the first newline or the first byte that is
/// not part of valid UTF-8 (Unicode `.` matches neither).
pub(crate) fn dot_star_end(s: &[u8], at: usize) -> usize {
    let seg = &s[at..];
    let nl = memchr::memchr(b'\n', seg).unwrap_or(seg.len());
    at + match std::str::from_utf8(&seg[..nl]) {
        Ok(_) => nl,
        Err(e) => e.valid_up_to(),
    }
}

/// The bytes of `raw` from the start of `from` to the end of `to` (both slices of `raw`):
/// e.g. `PROGRAM: MESSAGE` as it was received.
pub(crate) fn span<'m>(raw: &'m [u8], from: &[u8], to: &[u8]) -> Option<&'m [u8]> {
    let base = raw.as_ptr() as usize;
    let start = (from.as_ptr() as usize).checked_sub(base)?;
    let end = (to.as_ptr() as usize)
        .checked_sub(base)?
        .checked_add(to.len())?;
    if start > end {
        return None;
    }
    raw.get(start..end)
}

/// `head` + lowercase(`tail`) built inline (SC4S's `$(lowercase ...)`); `None` when it
/// does not fit.
pub(crate) fn lower(head: &[u8], tail: &[u8]) -> Option<Value<'static, 'static>> {
    let mut buf = [0u8; INLINE_CAP];
    let low = buf.get_mut(..tail.len())?;
    low.copy_from_slice(tail);
    low.make_ascii_lowercase();
    Inline::concat(&[head, low]).map(Value::Inline)
}

/// The scalar value of the first `"name": value` member found in a JSON text, without
/// quotes for a string (escapes are kept as received). A cheap look-up for the one or two
/// members a vendor rule reads; it does not validate the document, and a nested member of
/// the same name that comes first is taken. Objects and arrays give `None` (syslog-ng's
/// json-parser flattens them, so the name itself has no value there either).
pub(crate) fn json_scalar<'a>(text: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    // One searcher for all the occurrences (each `memmem::find` builds its own).
    for at in memchr::memmem::find_iter(text, name) {
        let from = at + name.len();
        if at == 0 || text[at - 1] != b'"' || text.get(from) != Some(&b'"') {
            continue;
        }
        let Some(rest) = text[from + 1..].trim_ascii_start().strip_prefix(b":") else {
            continue;
        };
        let rest = rest.trim_ascii_start();
        if let Some(s) = rest.strip_prefix(b"\"") {
            let mut i = 0;
            while i < s.len() {
                match s[i] {
                    b'\\' => i += 2,
                    b'"' => return Some(&s[..i]),
                    _ => i += 1,
                }
            }
            return None;
        }
        let end = rest
            .iter()
            .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        return match rest.first() {
            Some(b'{' | b'[') | None => None,
            _ => Some(&rest[..end]),
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The `: %` scanner finds what memmem finds, non-ASCII and near-misses included.
        #[test]
        fn colon_percent_is_memmem(hay in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(b':'),
                proptest::strategy::Just(b' '),
                proptest::strategy::Just(b'%'),
                proptest::num::u8::ANY,
            ],
            0..40,
        )) {
            proptest::prop_assert_eq!(colon_percent(&hay), memchr::memmem::find(&hay, b": %"));
        }
    }

    proptest::proptest! {
        /// The short-haystack search agrees with memmem on both sides of the cut-over.
        #[test]
        fn find_is_memmem(
            hay in proptest::collection::vec(proptest::sample::select(b"ab\xc3\xa9 ".to_vec()), 0..90),
            needle in proptest::collection::vec(proptest::sample::select(b"ab\xc3\xa9 ".to_vec()), 0..4),
        ) {
            proptest::prop_assert_eq!(find(&hay, &needle), memchr::memmem::find(&hay, &needle));
        }
    }

    #[test]
    fn colon_percent_examples() {
        assert_eq!(colon_percent(b"a: %ASA-1"), Some(1));
        assert_eq!(colon_percent(b"%: %"), Some(1));
        assert_eq!(colon_percent(b":%  % : %"), Some(6));
        assert_eq!(colon_percent(b" %x"), None);
        assert_eq!(colon_percent("\u{e9}: %".as_bytes()), Some(2));
    }

    #[test]
    fn json_members() {
        let j = br#"{"a": "x\"y", "n":12, "o":{"p":1}, "e":""}"#;
        assert_eq!(json_scalar(j, b"a"), Some(&br#"x\"y"#[..]));
        assert_eq!(json_scalar(j, b"n"), Some(&b"12"[..]));
        assert_eq!(json_scalar(j, b"o"), None);
        assert_eq!(json_scalar(j, b"p"), Some(&b"1"[..]));
        assert_eq!(json_scalar(j, b"e"), Some(&b""[..]));
        assert_eq!(json_scalar(j, b"zz"), None);
        assert_eq!(json_scalar(br#"{"a":"unterminated"#, b"a"), None);
    }

    #[test]
    fn dot_star_stops_like_the_regex() {
        let re = regex::bytes::Regex::new(r"x(.*)").unwrap();
        for s in [
            &b"x"[..],
            b"xab\ncd",
            b"xa\xe2\x80\x9cb",
            b"xa\xe2\x80b",
            b"xa\xffb\n",
            b"xa\xed\xa0\x80b",
            b"xa\rb",
        ] {
            let want = re.captures(s).unwrap().get(1).unwrap().end();
            assert_eq!(dot_star_end(s, 1), want, "{s:?}");
        }
    }

    #[test]
    fn spans_and_lower() {
        let raw = b"abc def";
        assert_eq!(span(raw, &raw[0..3], &raw[4..7]), Some(&raw[..]));
        assert_eq!(span(raw, &raw[4..7], &raw[0..3]), None);
        assert_eq!(
            lower(b"x:", b"AbC").map(|v| v.to_string_lossy()).as_deref(),
            Some("x:abc")
        );
    }
}
