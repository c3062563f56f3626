//! `key=value` payloads (FortiGate, SonicWall, Check Point, CEF extensions, ...): a
//! tokenizer that borrows from the message.
//!
//! Syntax: pairs separated by `pair` (a space, `|`, `;`, tab ...), possibly repeated; a key
//! is a run of bytes up to `=`; a value is either double-quoted (`"..."`, where `\"` and
//! `""` stand for a quote) or runs to the next separator. A token without `=` is skipped.
//! Never fails: malformed input yields fewer pairs.

/// One pair; `quoted` values still carry their escapes (see [`unquote_into`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
    pub quoted: bool,
}

/// Iterator over the pairs of `text`.
#[derive(Clone, Debug)]
pub struct Pairs<'a> {
    rest: &'a [u8],
    sep: u8,
}

/// The pairs of `text` separated by `sep`.
pub fn pairs(text: &[u8], sep: u8) -> Pairs<'_> {
    Pairs { rest: text, sep }
}

impl<'a> Iterator for Pairs<'a> {
    type Item = Pair<'a>;

    fn next(&mut self) -> Option<Pair<'a>> {
        let sep = self.sep;
        loop {
            let start = self.rest.iter().position(|&b| b != sep && b != b' ')?;
            let s = &self.rest[start..];
            // The token's `=`, or where the token ends without one.
            let eq = match find2(s, b'=', sep) {
                Some(i) if s[i] == b'=' && sep != b'=' => i,
                Some(i) => {
                    self.rest = &s[i..];
                    continue;
                }
                None => {
                    self.rest = &[];
                    return None;
                }
            };
            let key = trim(&s[..eq]);
            let after = &s[eq + 1..];
            if after.first() == Some(&b'"') {
                let body = &after[1..];
                let mut i = 0;
                while let Some(j) = find2(&body[i..], b'\\', b'"') {
                    i += j;
                    match body[i] {
                        b'\\' => i += 2,
                        _ if body.get(i + 1) == Some(&b'"') => i += 2,
                        _ => break,
                    }
                    if i >= body.len() {
                        break;
                    }
                }
                // No closing quote: the value runs to the end.
                let end = if i < body.len() && body[i] == b'"' {
                    i
                } else {
                    body.len()
                };
                self.rest = body.get(end + 1..).unwrap_or(&[]);
                return Some(Pair {
                    key,
                    value: &body[..end],
                    quoted: true,
                });
            }
            let end = find2(after, sep, sep).unwrap_or(after.len());
            self.rest = &after[end..];
            return Some(Pair {
                key,
                value: &after[..end],
                quoted: false,
            });
        }
    }
}

/// The first `a` or `b`. Keys and values are mostly short, where a call of `memchr2` costs
/// more than the search: the first bytes are tested eight at a time in a `u64` (SWAR), and
/// only a long run (a long value) goes on to `memchr2`.
#[inline]
pub(crate) fn find2(s: &[u8], a: u8, b: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const SWAR_BYTES: usize = 64;
    let (pa, pb) = (LO * u64::from(a), LO * u64::from(b));
    let mut i = 0;
    while i < SWAR_BYTES
        && let Some(chunk) = s.get(i..i + 8)
    {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let hits = zero_bytes(x ^ pa) | zero_bytes(x ^ pb);
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    let rest = &s[i..];
    if i < SWAR_BYTES {
        // Fewer than eight bytes left.
        return rest.iter().position(|&c| c == a || c == b).map(|p| p + i);
    }
    memchr::memchr2(a, b, rest).map(|p| p + i)
}

/// The first `b` (see [`find2`]): for scans that hop between short fields.
#[inline]
pub(crate) fn find_byte(s: &[u8], b: u8) -> Option<usize> {
    find2(s, b, b)
}

/// The high bit of each byte of `x` that is zero, and no other bit (exact: no borrow runs
/// from one byte into the next).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    const HI: u64 = 0x8080_8080_8080_8080;
    !(((x & !HI).wrapping_add(!HI)) | x) & HI
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// The first value of `key`.
pub fn get<'a>(text: &'a [u8], sep: u8, key: &[u8]) -> Option<&'a [u8]> {
    pairs(text, sep).find(|p| p.key == key).map(|p| p.value)
}

/// Appends a quoted value with `\"` / `""` turned into `"` and `\\` into `\`.
pub fn unquote_into(value: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < value.len() {
        match (value[i], value.get(i + 1)) {
            (b'\\', Some(&n @ (b'"' | b'\\'))) | (b'"', Some(&n @ b'"')) => {
                out.push(n);
                i += 2;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
}

/// Where a quoted value that starts at `body` (after its opening quote) ends: the closing
/// quote, or the end of `body`. A backslash escapes the next byte and `""` is a quote.
pub(crate) fn quoted_end(body: &[u8]) -> usize {
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\\' => i += 2,
            b'"' if body.get(i + 1) == Some(&b'"') => i += 2,
            b'"' => break,
            _ => i += 1,
        }
    }
    i.min(body.len())
}

/// syslog-ng's key bytes (`kv-scanner.c`).
fn key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The pairs of `text` as syslog-ng's `kv-parser(pair-separator("<sep>"))` reads them
/// (`kv-scanner.c`), for a one-byte separator. This differs from [`pairs`]:
///
/// * a key is the run of key bytes (`[A-Za-z0-9_.-]`) right before an `=` (spaces before
///   the `=` allowed); anything else between pairs (stray words) is skipped;
/// * a value quoted with `"` or `'` runs to its closing quote (a backslash escapes the next
///   byte; the escapes are left as written) when a delimiter or the end follows it, and is
///   otherwise read unquoted;
/// * an unquoted value ends at the separator, or — with a separator other than a space —
///   at a space after which only spaces, the end, the separator or a `key=` follow (so
///   values may hold spaces: `who=unknown (x) using password;`); with a space as the
///   separator it ends at the first space.
pub fn syslog_ng_pairs(text: &[u8], sep: u8) -> SyslogNgPairs<'_> {
    SyslogNgPairs { text, sep, pos: 0 }
}

/// See [`syslog_ng_pairs`]; items are (key, value, quoted).
#[derive(Clone, Debug)]
pub struct SyslogNgPairs<'a> {
    text: &'a [u8],
    sep: u8,
    pos: usize,
}

impl<'a> SyslogNgPairs<'a> {
    /// syslog-ng's `_key_follows`: key bytes, spaces, then `=`.
    fn key_follows(&self, at: usize) -> bool {
        let t = self.text;
        let mut i = at;
        while i < t.len() && key_byte(t[i]) {
            i += 1;
        }
        let key_end = i;
        while t.get(i) == Some(&b' ') {
            i += 1;
        }
        key_end != at && t.get(i) == Some(&b'=')
    }

    /// Whether the value ends at `at` (an unquoted value's `_match_delimiter`).
    fn delimiter(&self, at: usize) -> bool {
        let t = self.text;
        match t.get(at) {
            None => true,
            Some(&b) if b == self.sep => true,
            Some(b' ') => {
                let mut i = at;
                while t.get(i) == Some(&b' ') {
                    i += 1;
                }
                i == t.len() || self.key_follows(i) || t[i] == self.sep
            }
            _ => false,
        }
    }

    /// The end of an unquoted value starting at `from`.
    fn unquoted_end(&self, from: usize) -> usize {
        let mut i = from;
        while !self.delimiter(i) {
            i += 1;
        }
        i
    }
}

impl<'a> Iterator for SyslogNgPairs<'a> {
    type Item = (&'a [u8], &'a [u8], bool);

    fn next(&mut self) -> Option<Self::Item> {
        let t = self.text;
        let mut search = self.pos;
        let (key, eq) = loop {
            let eq = search + memchr::memchr(b'=', t.get(search..)?)?;
            let mut end = eq;
            while end > self.pos && t[end - 1] == b' ' {
                end -= 1;
            }
            let mut start = end;
            while start > self.pos && key_byte(t[start - 1]) {
                start -= 1;
            }
            if start < end {
                break (&t[start..end], eq);
            }
            search = eq + 1;
        };
        // Spaces before a value are skipped unless they already end it.
        let mut v = eq + 1;
        while t.get(v) == Some(&b' ') && !self.delimiter(v) {
            v += 1;
        }
        if let Some(&q @ (b'"' | b'\'')) = t.get(v)
            && let Some(c) = closing_quote(&t[v + 1..], q)
        {
            let after = v + 1 + c + 1;
            if matches!(t.get(after), None | Some(b' ')) || t.get(after) == Some(&self.sep) {
                self.pos = after;
                return Some((key, &t[v + 1..v + 1 + c], true));
            }
        }
        let end = self.unquoted_end(v);
        self.pos = end;
        Some((key, &t[v..end], false))
    }
}

/// The value of the last `want=` pair of a space-separated [`syslog_ng_pairs`] reading
/// (Forcepoint's `kv-parser(pair-separator(" "))`): syslog-ng keeps the last value of a
/// repeated key.
pub fn space_separated_value<'a>(text: &'a [u8], want: &[u8]) -> Option<&'a [u8]> {
    syslog_ng_pairs(text, b' ')
        .filter(|(k, _, _)| *k == want)
        .last()
        .map(|(_, v, _)| v)
}

/// Where the quote `q` that closes a quoted value is in `s` (the text after the opening
/// quote); a backslash escapes the byte after it.
fn closing_quote(s: &[u8], q: u8) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b if b == q => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {

    #[test]
    fn syslog_ng_semicolon_pairs() {
        let got: Vec<(&[u8], &[u8], bool)> = syslog_ng_pairs(
            b"event=logout;site=support.x.gov;who=unknown (asdf) using password;who_ip=10.0.85.35",
            b';',
        )
        .collect();
        assert_eq!(
            got,
            vec![
                (&b"event"[..], &b"logout"[..], false),
                (b"site", b"support.x.gov", false),
                (b"who", b"unknown (asdf) using password", false),
                (b"who_ip", b"10.0.85.35", false),
            ]
        );
        // A space before `key=` ends a value; spaces before the separator are not kept.
        let got: Vec<(&[u8], &[u8], bool)> =
            syslog_ng_pairs(b"a=x y=z;b=1  ;c= 'q;r' ;d=\"u\"v;stray e=", b';').collect();
        assert_eq!(
            got,
            vec![
                (&b"a"[..], &b"x"[..], false),
                (b"y", b"z", false),
                (b"b", b"1", false),
                (b"c", b"q;r", true),
                (b"d", b"\"u\"v", false),
                (b"e", b"", false),
            ]
        );
    }

    use super::*;

    /// The byte-at-a-time tokenizer this file used before the `memchr` one.
    fn reference(text: &[u8], sep: u8) -> Vec<Pair<'_>> {
        let mut rest = text;
        let mut out = Vec::new();
        loop {
            let Some(start) = rest.iter().position(|&b| b != sep && b != b' ') else {
                return out;
            };
            let s = &rest[start..];
            let token_end = s.iter().position(|&b| b == sep).unwrap_or(s.len());
            let Some(eq) = s[..token_end].iter().position(|&b| b == b'=') else {
                rest = &s[token_end..];
                continue;
            };
            let key = trim(&s[..eq]);
            let after = &s[eq + 1..];
            if after.first() == Some(&b'"') {
                let body = &after[1..];
                let end = quoted_end(body);
                rest = body.get(end + 1..).unwrap_or(&[]);
                out.push(Pair {
                    key,
                    value: &body[..end],
                    quoted: true,
                });
                continue;
            }
            let end = after.iter().position(|&b| b == sep).unwrap_or(after.len());
            rest = &after[end..];
            out.push(Pair {
                key,
                value: &after[..end],
                quoted: false,
            });
        }
    }

    proptest::proptest! {
        #[test]
        fn pairs_match_the_reference(
            text in proptest::collection::vec(proptest::sample::select(&b"ab= \\\"|\t"[..]), 0..40),
            sep in proptest::sample::select(&b" |\t="[..]),
        ) {
            let got: Vec<Pair<'_>> = pairs(&text, sep).collect();
            proptest::prop_assert_eq!(got, reference(&text, sep));
        }
    }

    #[test]
    fn find2_is_a_search() {
        let text: Vec<u8> = (0..200u8).map(|i| b'a' + i % 26).collect();
        for at in [0, 1, 7, 8, 9, 63, 64, 65, 71, 72, 150, 199] {
            for (a, b) in [(b'=', b' '), (b' ', b'='), (b'=', b'=')] {
                let mut t = text.clone();
                t[at] = a;
                assert_eq!(find2(&t, a, b), Some(at), "{at}");
                assert_eq!(find2(&t[..at], a, b), None);
                // Bytes that differ from the needle only in the high bit, or by one.
                t[at] = a ^ 0x80;
                assert_eq!(find2(&t, a, b), None);
            }
        }
        assert_eq!(find2(b"\x80\xff\x00\x01=", b'=', b'\x00'), Some(2));
        assert_eq!(find2(&[0xbd; 100], b'=', b'"'), None);
        assert_eq!(zero_bytes(0x0100_8000_7f00_ff01), 0x0080_0080_0080_0000);
    }

    #[test]
    fn quoted_edges() {
        for (text, sep) in [
            (&b"a=\"x\\"[..], b' '),
            (b"a=\"x\"\"", b' '),
            (b"a=\"\\\"\" b=1", b' '),
            (b"a=\"q\"\"q\" b=\"", b' '),
            (b"a=1|=|b", b'|'),
            (b"a=b", b'='),
        ] {
            let got: Vec<Pair<'_>> = pairs(text, sep).collect();
            assert_eq!(
                got,
                reference(text, sep),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn pairs_with_quotes_and_junk() {
        let text = br#"date=2024-03-16 time=08:15:00 devname="FG 1" msg="say \"hi\"" junk x= y=2"#;
        let got: Vec<(&[u8], &[u8])> = pairs(text, b' ').map(|p| (p.key, p.value)).collect();
        assert_eq!(
            got,
            vec![
                (&b"date"[..], &b"2024-03-16"[..]),
                (b"time", b"08:15:00"),
                (b"devname", b"FG 1"),
                (b"msg", br#"say \"hi\""#),
                (b"x", b""),
                (b"y", b"2"),
            ]
        );
        assert_eq!(get(text, b' ', b"devname"), Some(&b"FG 1"[..]));
        let mut out = Vec::new();
        unquote_into(br#"say \"hi\" ""x"""#, &mut out);
        assert_eq!(out, br#"say "hi" "x""#);
        assert_eq!(pairs(b"a=1|b=\"2|3\"|c", b'|').count(), 2);
        assert_eq!(pairs(b"\"unterminated=", b' ').count(), 1);
    }
}
