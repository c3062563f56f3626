//! The parsers: `regexp-parser`, `kv-parser` (syslog-ng's kv-scanner), `csv-parser`
//! (syslog-ng's csv-scanner), `date-parser`, `json-parser`, `syslog-parser`.

use bumpalo::collections::Vec as BVec;

use crate::message::{Format, Timestamp};
use crate::parse::{ParseOptions, parse};
use crate::time::Zone;

use super::super::ir::{
    CsvEscape, CsvParser, DateParser, JsonParser, KvParser, RegexpParser, Stmt, SyslogParser,
};
use super::super::names::id;
use super::{Key, State};

impl<'p: 'm, 'm: 'a, 'a> State<'p, 'm, 'a> {
    pub(super) fn regexp(&mut self, r: &'p RegexpParser) -> bool {
        let text = self.render(&r.template);
        for (re, names) in &r.patterns {
            let Some((hay, groups)) = re.captures(text) else {
                continue;
            };
            let hay: &'m [u8] = match hay {
                std::borrow::Cow::Borrowed(h) => self.keep(h),
                std::borrow::Cow::Owned(o) => self.arena.alloc_slice_copy(&o),
            };
            for (g, name) in groups.iter().zip(names) {
                if let (Some((s, e)), Some(n)) = (g, name) {
                    self.set(*n, Some(&hay[*s..*e]));
                }
            }
            return true;
        }
        false
    }

    pub(super) fn kv(&mut self, k: &'p KvParser) -> bool {
        let text = self.render(&k.template);
        let pair_sep: &[u8] = k.pair_separator.as_deref().unwrap_or(b", ");
        let mut scanner = KvScanner {
            input: text,
            pos: 0,
            value_sep: k.value_separator,
            pair_sep,
        };
        let mut stray: Vec<u8> = Vec::new();
        // The prefix, once per message with its lifetime: each name is the prefix and the
        // key as they are (`Key::Dyn`). A prefix that overlaps `fields.` (other than
        // `fields.` itself) has its names written whole, so that a field's name is in one
        // part.
        let prefix: &'m [u8] = self.arena.alloc_slice_copy(k.prefix.as_bytes());
        let whole = !prefix.is_empty()
            && prefix != b"fields."
            && (prefix.starts_with(b"fields.") || b"fields.".starts_with(prefix));
        let want_stray = k.stray_words.is_some();
        while let Some((key, value, words)) = scanner.next(self.arena, want_stray) {
            if want_stray {
                for w in words.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
                    if !stray.is_empty() {
                        stray.push(b',');
                    }
                    stray.extend_from_slice(w);
                }
            }
            // Key bytes are ASCII (`key_byte`), so the name is UTF-8 (`Key::Dyn`).
            let pair = match &k.known {
                // The names the configuration uses under this prefix, by key.
                Some(known) => match known.iter().find(|(rest, _)| **rest == *key) {
                    Some(&(_, n)) => Key::Id(n),
                    None if whole => Key::Dyn(b"", concat_in(self.arena, prefix, key)),
                    None => Key::Dyn(prefix, key),
                },
                // No prefix (`known` is `None` only then): the key is the name.
                None if prefix.is_empty() => {
                    match std::str::from_utf8(key)
                        .ok()
                        .and_then(|n| self.p.names.get(n))
                    {
                        Some(n) => Key::Id(n),
                        None => Key::Dyn(b"", key),
                    }
                }
                None => {
                    let full = concat_in(self.arena, prefix, key);
                    match std::str::from_utf8(full)
                        .ok()
                        .and_then(|n| self.p.names.get(n))
                    {
                        Some(n) => Key::Id(n),
                        None => Key::Dyn(b"", full),
                    }
                }
            };
            self.set_key(pair, Some(value));
        }
        if let Some(n) = k.stray_words {
            let rest = scanner.rest();
            for w in rest.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
                if !stray.is_empty() {
                    stray.push(b',');
                }
                stray.extend_from_slice(w);
            }
            let v = self.arena.alloc_slice_copy(&stray);
            self.set(n, Some(v));
        }
        true
    }

    pub(super) fn csv(&mut self, c: &'p CsvParser) -> bool {
        let text = self.render(&c.template);
        let mut sc = CsvScanner {
            c,
            src: text,
            at: 0,
        };
        let expected = c.columns.len();
        let mut column = 0;
        let complete;
        let mut matches: Vec<&'m [u8]> = Vec::new();
        loop {
            if expected > 0 && column >= expected {
                complete = sc.at >= text.len();
                break;
            }
            if expected > 0 && column == expected - 1 && c.greedy {
                let v = sc.take_rest(self.arena);
                self.set(c.columns[column], Some(v));
                column += 1;
                continue;
            }
            if sc.at >= text.len() {
                complete = expected == 0;
                break;
            }
            let v = sc.next_value(self.arena);
            if expected > 0 {
                self.set(c.columns[column], Some(v));
            } else {
                matches.push(v);
            }
            column += 1;
        }
        if expected == 0 {
            self.groups.clear();
            self.groups.push(None);
            for m in matches {
                self.groups.push(Some(m));
            }
        }
        complete || !c.drop_invalid
    }

    pub(super) fn date(&mut self, d: &'p DateParser) -> bool {
        let text = self.render(&d.template);
        let zone = d.zone.clone().unwrap_or_else(Zone::utc);
        let formats: Vec<String> = d.formats.iter().map(|f| expand_format(f)).collect();
        let refs: Vec<&str> = formats.iter().map(String::as_str).collect();
        let text = trim_ascii(text);
        match crate::classify::vtime::strptime_any(&refs, text, &zone, self.base.now) {
            Some(ts) => {
                self.stamp = Some(if d.guess_timezone && d.zone.is_none() {
                    guess_zone(ts, self.base.now)
                } else {
                    ts
                });
                true
            }
            None => false,
        }
    }

    pub(super) fn json(&mut self, j: &'p JsonParser) -> bool {
        let text = self.render(&j.template);
        let mut pairs: Vec<(String, &'m [u8])> = Vec::new();
        if !super::json::flatten(text, j.extract.as_deref(), self.arena, &mut pairs) {
            return false;
        }
        for (k, v) in pairs {
            let name = format!("{}{}", j.prefix, k);
            self.set_named(&name, Some(v));
        }
        true
    }

    pub(super) fn syslog(&mut self, p: &'p SyslogParser) -> bool {
        let text = self.render(&p.template);
        if p.no_header {
            // Only the PRI.
            let digits = text
                .get(1..)
                .map_or(0, |r| r.iter().take_while(|b| b.is_ascii_digit()).count());
            if text.first() == Some(&b'<')
                && (1..=3).contains(&digits)
                && text.get(1 + digits) == Some(&b'>')
                && let Ok(v) = std::str::from_utf8(&text[1..1 + digits])
                    .unwrap_or("x")
                    .parse::<u8>()
                && v <= 191
            {
                self.pri = Some(v);
                self.set(id::MESSAGE, Some(&text[2 + digits..]));
                return true;
            }
            self.set(id::MESSAGE, Some(text));
            return true;
        }
        let zone = self.base.zone.clone();
        let msg = parse(
            text,
            &ParseOptions {
                now_unix_secs: self.base.now,
                zone: &zone,
            },
        );
        match msg.format {
            Format::Unparsed => return false,
            Format::Rfc3164 if p.rfc5424_only => return false,
            _ => {}
        }
        if let Some(pri) = msg.priority {
            self.pri = Some(pri.value());
        }
        let empty: &'m [u8] = b"";
        let opt = |v: Option<&'m [u8]>| Some(v.unwrap_or(empty));
        self.set(
            id::HOST,
            opt(msg.hostname.filter(|h| !h.is_empty())).filter(|h| !h.is_empty()),
        );
        self.set(id::PROGRAM, msg.appname.filter(|a| !a.is_empty()));
        self.set(id::PID, msg.procid.filter(|a| !a.is_empty()));
        self.set(id::MSGID, msg.msgid.filter(|a| !a.is_empty()));
        self.set(id::MESSAGE, opt(msg.message));
        if let Some(ts) = msg.timestamp {
            self.stamp = Some(if p.guess_timezone {
                guess_zone(ts, self.base.now)
            } else {
                ts
            });
        }
        true
    }
}

fn trim_ascii(v: &[u8]) -> &[u8] {
    v.trim_ascii()
}

/// strptime spellings vtime does not read, in the ones it does.
fn expand_format(f: &str) -> String {
    f.replace("%F", "%Y-%m-%d")
        .replace("%D", "%m/%d/%y")
        .replace("%R", "%H:%M")
        .replace("%r", "%I:%M:%S %p")
        .replace("%k", "%H")
        .replace("%l", "%I")
        .replace("%t", " ")
        .replace("%n", " ")
}

/// syslog-ng's guess of a zone-less stamp's zone: when it is within a day of now and off by
/// a multiple of 15 minutes (±30 s), the sender's clock is taken to be in that offset.
pub(crate) fn guess_zone(ts: Timestamp, now: i64) -> Timestamp {
    let diff = now - ts.unix_secs;
    if diff.abs() > 86_400 {
        return ts;
    }
    let quarters = (diff as f64 / 900.0).round() as i64;
    let rounded = quarters * 900;
    if (diff - rounded).abs() > 30 || rounded == 0 {
        return ts;
    }
    // The stamp's wall-clock time was read as UTC; it was written `rounded` seconds behind.
    Timestamp {
        unix_secs: ts.unix_secs + rounded,
        micros: ts.micros,
        offset_secs: ts.offset_secs - rounded as i32,
    }
}

/// `set-pri()`, `set-facility()`, `set-severity()`.
pub(crate) fn pri_rewrite(s: &Stmt, v: &[u8], current: u8) -> Option<u8> {
    let text = std::str::from_utf8(v).ok()?.trim().to_ascii_lowercase();
    match s {
        Stmt::SetPri(_) => text.parse::<u8>().ok().filter(|p| *p <= 191),
        Stmt::SetFacility(_) => {
            let f = crate::message::facility_by_name(&text)?;
            Some((f << 3) | (current & 7))
        }
        Stmt::SetSeverity(_) => {
            let l = crate::message::severity_by_name(&text)?;
            Some((current & !7) | l)
        }
        _ => None,
    }
}

/// syslog-ng's kv-scanner.
struct KvScanner<'i, 's> {
    input: &'i [u8],
    pos: usize,
    value_sep: u8,
    pair_sep: &'s [u8],
}

/// The bytes a kv-parser key is made of, as a table: the scan walks every key byte.
const KEY_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-';
        c += 1;
    }
    t
};

/// `a` then `b`, in the arena.
fn concat_in<'m>(arena: &'m bumpalo::Bump, a: &[u8], b: &[u8]) -> &'m [u8] {
    let mut v = BVec::with_capacity_in(a.len() + b.len(), arena);
    v.extend_from_slice_copy(a);
    v.extend_from_slice_copy(b);
    v.into_bump_slice()
}

fn key_byte(c: u8) -> bool {
    KEY_BYTES[usize::from(c)]
}

impl<'i> KvScanner<'i, '_> {
    fn rest(&self) -> &'i [u8] {
        &self.input[self.pos.min(self.input.len())..]
    }

    /// The next pair and the stray words before it.
    #[inline]
    fn next(
        &mut self,
        arena: &'i bumpalo::Bump,
        _stray: bool,
    ) -> Option<(&'i [u8], &'i [u8], &'i [u8])> {
        let input = self.input;
        let start = self.pos;
        if start >= input.len() {
            return None;
        }
        // Most pairs start here: spaces, a key, spaces, the separator. Read forward, that
        // is the pair the search below finds (the separator is no key character, so none
        // comes earlier), without a search through the rest of the input.
        if !key_byte(self.value_sep) {
            let mut k = start;
            while k < input.len() && input[k] == b' ' {
                k += 1;
            }
            let key_start = k;
            while k < input.len() && key_byte(input[k]) {
                k += 1;
            }
            let key_end = k;
            while k < input.len() && input[k] == b' ' {
                k += 1;
            }
            if key_end > key_start && input.get(k) == Some(&self.value_sep) {
                self.pos = k + 1;
                let value = self.value(arena);
                return Some((&input[key_start..key_end], value, &input[start..key_start]));
            }
        }
        // The key: the key characters right before a separator (spaces allowed between).
        let mut search = start;
        let (key_start, key_end, sep) = loop {
            let sep = search + memchr::memchr(self.value_sep, &input[search..])?;
            let mut end = sep;
            while end > start && input[end - 1] == b' ' {
                end -= 1;
            }
            let mut begin = end;
            while begin > start && key_byte(input[begin - 1]) {
                begin -= 1;
            }
            if end > begin {
                break (begin, end, sep);
            }
            search = sep + 1;
        };
        let words = &input[start..key_start];
        let key = &input[key_start..key_end];
        self.pos = sep + 1;
        let value = self.value(arena);
        Some((key, value, words))
    }

    fn key_follows(&self, at: usize) -> bool {
        let mut k = at;
        while k < self.input.len() && key_byte(self.input[k]) {
            k += 1;
        }
        let key_end = k;
        while k < self.input.len() && self.input[k] == b' ' {
            k += 1;
        }
        key_end != at && self.input.get(k) == Some(&self.value_sep)
    }

    /// Whether a value ends at `at`; the position after the delimiter when it does.
    fn delimiter(&self, at: usize, quoted: bool) -> Option<usize> {
        let input = self.input;
        let c = input[at];
        if !quoted && c == b' ' {
            if self.pair_sep.first() == Some(&b' ') && input[at..].starts_with(self.pair_sep) {
                return Some(at + self.pair_sep.len());
            }
            let mut k = at;
            while k < input.len() && input[k] == b' ' {
                k += 1;
            }
            if k >= input.len() || self.key_follows(k) {
                return Some(k);
            }
            if input[k..].starts_with(self.pair_sep) {
                return Some(k + self.pair_sep.len());
            }
            None
        } else if c == b' ' {
            Some(at + 1)
        } else if input[at..].starts_with(self.pair_sep) {
            Some(at + self.pair_sep.len())
        } else {
            None
        }
    }

    #[inline]
    fn value(&mut self, arena: &'i bumpalo::Bump) -> &'i [u8] {
        let input = self.input;
        // Leading spaces, unless a space ends the (empty) value here.
        while self.pos < input.len()
            && input[self.pos] == b' '
            && self.delimiter(self.pos, false).is_none()
        {
            self.pos += 1;
        }
        let start = self.pos;
        if let Some(&q) = input.get(start).filter(|&&q| q == b'"' || q == b'\'') {
            // Most quoted values have no escape: they are the input between the quotes.
            if let Some(len) = crate::classify::kv::find2(&input[start + 1..], q, b'\\')
                && input[start + 1 + len] == q
            {
                let i = start + 1 + len + 1;
                if i >= input.len() {
                    self.pos = i;
                    return &input[start + 1..i - 1];
                }
                if let Some(next) = self.delimiter(i, true) {
                    self.pos = next;
                    return &input[start + 1..i - 1];
                }
            }
            let mut out = BVec::new_in(arena);
            let mut i = start + 1;
            let mut closed = false;
            while i < input.len() {
                let c = input[i];
                if c == b'\\' && i + 1 < input.len() {
                    let n = input[i + 1];
                    out.push(match n {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'a' => 7,
                        b'b' => 8,
                        b'f' => 12,
                        b'v' => 11,
                        other => other,
                    });
                    i += 2;
                    continue;
                }
                if c == q {
                    closed = true;
                    i += 1;
                    break;
                }
                out.push(c);
                i += 1;
            }
            if closed {
                if i >= input.len() {
                    self.pos = i;
                    return out.into_bump_slice();
                }
                if let Some(next) = self.delimiter(i, true) {
                    self.pos = next;
                    return out.into_bump_slice();
                }
            }
            // A quotation error: the value is read as if it were not quoted.
        }
        let mut i = start;
        while i < input.len() {
            if let Some(next) = self.delimiter(i, false) {
                self.pos = next;
                return &input[start..i];
            }
            i += 1;
        }
        self.pos = input.len();
        &input[start..]
    }
}

/// syslog-ng's csv-scanner.
struct CsvScanner<'c, 'i> {
    c: &'c CsvParser,
    src: &'i [u8],
    at: usize,
}

impl<'i> CsvScanner<'_, 'i> {
    fn is_ws(b: u8) -> bool {
        b == b' ' || b == b'\t'
    }

    fn skip_ws(&mut self, quoted: bool) {
        while self.at < self.src.len() && Self::is_ws(self.src[self.at]) {
            if !quoted && self.c.chars.contains(&self.src[self.at]) {
                break;
            }
            self.at += 1;
        }
    }

    /// A delimiter at the current position (taken).
    fn delimiter(&mut self) -> bool {
        for s in &self.c.strings {
            if self.src[self.at..].starts_with(s) {
                self.at += s.len();
                return true;
            }
        }
        if self.c.chars.contains(&self.src[self.at]) {
            self.at += 1;
            return true;
        }
        false
    }

    fn finish(&self, mut v: BVec<'i, u8>) -> &'i [u8] {
        if self.c.strip_whitespace {
            while v.last().is_some_and(|b| Self::is_ws(*b)) {
                v.pop();
            }
        }
        if let Some(null) = &self.c.null
            && v.as_slice() == &null[..]
        {
            v.clear();
        }
        v.into_bump_slice()
    }

    fn next_value(&mut self, arena: &'i bumpalo::Bump) -> &'i [u8] {
        let mut quote = self
            .c
            .quotes
            .iter()
            .find(|(open, _)| self.src.get(self.at) == Some(open))
            .map(|(_, close)| *close);
        if quote.is_some() {
            self.at += 1;
        }
        if self.c.strip_whitespace {
            self.skip_ws(quote.is_some());
        }
        let mut v = BVec::new_in(arena);
        while self.at < self.src.len() {
            let b = self.src[self.at];
            match quote {
                Some(q) => {
                    if self.c.escape == CsvEscape::Backslash
                        && b == b'\\'
                        && self.at + 1 < self.src.len()
                    {
                        v.push(self.src[self.at + 1]);
                        self.at += 2;
                    } else if self.c.escape == CsvEscape::DoubleChar
                        && b == q
                        && self.src.get(self.at + 1) == Some(&q)
                    {
                        v.push(q);
                        self.at += 2;
                    } else if b == q {
                        quote = None;
                        self.at += 1;
                    } else {
                        v.push(b);
                        self.at += 1;
                    }
                }
                None => {
                    if self.delimiter() {
                        break;
                    }
                    v.push(b);
                    self.at += 1;
                }
            }
        }
        self.finish(v)
    }

    fn take_rest(&mut self, arena: &'i bumpalo::Bump) -> &'i [u8] {
        if self.c.strip_whitespace {
            self.skip_ws(false);
        }
        let mut v = BVec::new_in(arena);
        v.extend_from_slice_copy(&self.src[self.at.min(self.src.len())..]);
        self.at = self.src.len();
        self.finish(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(text: &str, pair: &str) -> Vec<(String, String)> {
        let arena = bumpalo::Bump::new();
        let mut s = KvScanner {
            input: text.as_bytes(),
            pos: 0,
            value_sep: b'=',
            pair_sep: pair.as_bytes(),
        };
        let mut out = Vec::new();
        while let Some((k, v, _)) = s.next(&arena, false) {
            out.push((
                String::from_utf8_lossy(k).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ));
        }
        out
    }

    fn p(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn kv_scanner_like_syslog_ng() {
        assert_eq!(kv("a=b c=d", ", "), p(&[("a", "b"), ("c", "d")]));
        assert_eq!(kv("a=b c d=e", ", "), p(&[("a", "b c"), ("d", "e")]));
        assert_eq!(kv("a=b, c=d", ", "), p(&[("a", "b"), ("c", "d")]));
        assert_eq!(
            kv(r#"msg="hello \"x\" world" x=1"#, ", "),
            p(&[("msg", r#"hello "x" world"#), ("x", "1")])
        );
        assert_eq!(
            kv("junk a=1 more b = 2", ", "),
            p(&[("a", "1 more"), ("b", "2")])
        );
        assert_eq!(kv("a=1;b=2", ";"), p(&[("a", "1"), ("b", "2")]));
        assert_eq!(kv("a=", ", "), p(&[("a", "")]));
        assert_eq!(kv("a= b=2", ", "), p(&[("a", ""), ("b", "2")]));
        assert_eq!(kv("=x", ", "), Vec::<(String, String)>::new());
        assert_eq!(
            kv("k='it''s' z=1", ", "),
            p(&[("k", "'it''s'"), ("z", "1")])
        );
    }

    #[test]
    fn guessing_a_zone() {
        let now = 1_700_000_000;
        // Written in UTC+2 as if it were UTC: two hours ahead of now.
        let ts = Timestamp {
            unix_secs: now + 7200 + 3,
            micros: 0,
            offset_secs: 0,
        };
        let g = guess_zone(ts, now);
        assert_eq!(g.unix_secs, now + 3);
        assert_eq!(g.offset_secs, 7200);
        let far = Timestamp {
            unix_secs: now - 3 * 86_400,
            micros: 0,
            offset_secs: 0,
        };
        assert_eq!(guess_zone(far, now), far);
    }
}
