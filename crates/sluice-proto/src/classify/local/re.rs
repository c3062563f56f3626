//! Regular expressions with PCRE's meaning, as syslog-ng compiles them (without its `utf8`
//! flag: `\d`, `\w`, `\s` and `\b` are ASCII, `.` is any byte but a newline).
//!
//! Each pattern is decided once, at load: the `regex` crate (bytes, Unicode off) when it
//! accepts the pattern after the few spellings whose meaning differs are rewritten (`\<` and
//! `\>` are literal in PCRE but word boundaries in `regex`; `\h`, `\e`, `(?'name')`, a `{`
//! that starts no repetition); otherwise `fancy-regex`, which has PCRE's lookaround,
//! backreferences, atomic groups and possessive quantifiers (it matches text, so bytes that
//! are not UTF-8 are read lossily for those patterns only). A pattern neither accepts is an
//! error at load, with both reasons.

use std::borrow::Cow;

use regex::bytes::{Regex, RegexBuilder};

/// Which engine a pattern runs on.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// The `regex` crate: linear time.
    Regex,
    /// `fancy-regex`: backtracking, for what `regex` cannot express.
    Pcre,
}

#[derive(Debug)]
pub(crate) struct Re {
    inner: Inner,
    /// Group names by index (`None`: unnamed; index 0 is the whole match).
    names: Vec<Option<String>>,
    pattern: String,
    ignore_case: bool,
    /// The bytes a match is made of, for a pattern whose every match is one byte of a set
    /// (`\s`, `[,;]`, `-`): a table scan finds it. The engine's setup per search cost more
    /// than the search of a short value (`subst('\s', ...)` on a field).
    one_byte: Option<Box<[bool; 256]>>,
}

#[derive(Debug)]
enum Inner {
    Std(Regex),
    Fancy(fancy_regex::Regex),
}

/// Byte ranges of a match's groups in the haystack the match was made on.
pub(crate) type Groups = Vec<Option<(usize, usize)>>;

/// How far the backtracking engine may go per match before it gives up (a failed match).
const BACKTRACK_LIMIT: usize = 100_000;

impl Re {
    pub fn new(pattern: &str, ignore_case: bool) -> Result<Re, String> {
        let translated = translate(pattern);
        let std_err = match RegexBuilder::new(&translated)
            .unicode(false)
            .case_insensitive(ignore_case)
            .size_limit(8 << 20)
            .build()
        {
            Ok(r) => {
                let names = r.capture_names().map(|n| n.map(str::to_owned)).collect();
                return Ok(Re {
                    inner: Inner::Std(r),
                    names,
                    pattern: pattern.to_owned(),
                    ignore_case,
                    one_byte: one_byte(&translated, ignore_case),
                });
            }
            Err(e) => e,
        };
        let fancy = fancy_regex::RegexBuilder::new(&translated)
            .case_insensitive(ignore_case)
            .backtrack_limit(BACKTRACK_LIMIT)
            .build();
        match fancy {
            Ok(r) => {
                let names = r.capture_names().map(|n| n.map(str::to_owned)).collect();
                Ok(Re {
                    inner: Inner::Fancy(r),
                    names,
                    pattern: pattern.to_owned(),
                    ignore_case,
                    one_byte: None,
                })
            }
            Err(fe) => Err(format!(
                "{pattern:?} is not a regular expression sluice can run: {}; with backtracking: {fe}",
                first_line(&std_err.to_string())
            )),
        }
    }

    #[cfg(test)]
    pub fn engine(&self) -> Engine {
        match self.inner {
            Inner::Std(_) => Engine::Regex,
            Inner::Fancy(_) => Engine::Pcre,
        }
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    pub fn ignore_case(&self) -> bool {
        self.ignore_case
    }

    /// Group names by index (index 0, the whole match, has none).
    pub fn group_names(&self) -> &[Option<String>] {
        &self.names
    }

    pub fn is_match(&self, hay: &[u8]) -> bool {
        if let Some(set) = &self.one_byte {
            return hay.iter().any(|&b| set[usize::from(b)]);
        }
        match &self.inner {
            Inner::Std(r) => r.is_match(hay),
            Inner::Fancy(r) => r.is_match(&text(hay)).unwrap_or(false),
        }
    }

    /// The first match's groups, with the haystack they index (the text itself, or its lossy
    /// reading for a backtracking pattern over bytes that are not UTF-8).
    pub fn captures<'h>(&self, hay: &'h [u8]) -> Option<(Cow<'h, [u8]>, Groups)> {
        self.captures_from(hay, 0)
    }

    /// Where the whole pattern next matches from `at`, for a pattern of the `regex` engine
    /// without groups (`None` otherwise: ask [`Re::captures_from`]). It skips the capture
    /// slots and their allocation, which cost more than the search for a short value.
    pub fn find_plain(&self, hay: &[u8], at: usize) -> Option<Option<(usize, usize)>> {
        if let Some(set) = &self.one_byte {
            let from = at.min(hay.len());
            return Some(
                hay[from..]
                    .iter()
                    .position(|&b| set[usize::from(b)])
                    .map(|p| (from + p, from + p + 1)),
            );
        }
        match &self.inner {
            Inner::Std(r) if r.captures_len() == 1 => Some(
                r.find_at(hay, at.min(hay.len()))
                    .map(|m| (m.start(), m.end())),
            ),
            _ => None,
        }
    }

    /// [`Re::captures`] starting the search at `at`.
    pub fn captures_from<'h>(&self, hay: &'h [u8], at: usize) -> Option<(Cow<'h, [u8]>, Groups)> {
        match &self.inner {
            Inner::Std(r) => {
                let mut locs = r.capture_locations();
                r.captures_read_at(&mut locs, hay, at)?;
                let groups = (0..locs.len()).map(|i| locs.get(i)).collect();
                Some((Cow::Borrowed(hay), groups))
            }
            Inner::Fancy(r) => {
                let t = text(hay);
                let caps = r.captures_from_pos(&t, at.min(t.len())).ok()??;
                let groups = (0..caps.len())
                    .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                    .collect();
                let hay = match t {
                    Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
                    Cow::Owned(s) => Cow::Owned(s.into_bytes()),
                };
                Some((hay, groups))
            }
        }
    }
}

/// The set of bytes `translated` matches when each of its matches is exactly one byte, as
/// the `regex` engine reads it (bytes, Unicode off): a class or a one-byte literal.
fn one_byte(translated: &str, ignore_case: bool) -> Option<Box<[bool; 256]>> {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .case_insensitive(ignore_case)
        .build()
        .parse(translated)
        .ok()?;
    let mut set = Box::new([false; 256]);
    let mut mark = |lo: u32, hi: u32| {
        for b in lo..=hi.min(255) {
            set[b as usize] = true;
        }
    };
    match hir.kind() {
        HirKind::Class(Class::Bytes(c)) => {
            for r in c.iter() {
                mark(u32::from(r.start()), u32::from(r.end()));
            }
        }
        // Without Unicode a class over ASCII may still come as one of chars.
        HirKind::Class(Class::Unicode(c)) if c.iter().all(|r| u32::from(r.end()) < 0x80) => {
            for r in c.iter() {
                mark(u32::from(r.start()), u32::from(r.end()));
            }
        }
        HirKind::Literal(l) if l.0.len() == 1 => mark(u32::from(l.0[0]), u32::from(l.0[0])),
        _ => return None,
    }
    Some(set)
}

fn text(hay: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(hay)
}

fn first_line(s: &str) -> &str {
    s.lines().last().unwrap_or(s).trim()
}

/// Rewrites the PCRE spellings the `regex` crate reads differently or not at all.
pub(crate) fn translate(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut in_class = false;
    let mut in_repetition = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    out.push('\\');
                    out.push('\\');
                    i += 1;
                    continue;
                };
                match n {
                    '<' | '>' => out.push(n),
                    'h' => out.push_str(if in_class { " \\t" } else { "[ \\t]" }),
                    'H' if !in_class => out.push_str("[^ \\t]"),
                    'e' => out.push_str("\\x1B"),
                    'Z' => out.push_str("\\z"),
                    '/' | '"' | '\'' | '@' | '%' | ',' | ':' | ';' | '!' | '=' | '_' | '`'
                    | '~' | '&' | '\u{20}' => {
                        // Escaped punctuation PCRE reads as the character itself.
                        if n == ' ' {
                            out.push_str("\\x20");
                        } else {
                            push_literal(&mut out, n);
                        }
                    }
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
                i += 2;
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                i += 1;
                // `[]` and `[^]` start with a literal `]`.
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
                continue;
            }
            '[' if in_class => {
                // A POSIX class `[:alpha:]` stays; a lone `[` inside a class is literal.
                if chars.get(i + 1) == Some(&':') {
                    let rest: String = chars[i..].iter().collect();
                    if let Some(end) = rest.find(":]") {
                        out.push_str(&rest[..end + 2]);
                        i += rest[..end + 2].chars().count();
                        continue;
                    }
                }
                out.push_str("\\[");
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '{' if !in_class => {
                let rest: String = chars[i + 1..].iter().collect();
                if is_repetition(&rest) {
                    in_repetition = true;
                    out.push('{');
                } else {
                    out.push_str("\\{");
                }
            }
            '}' if !in_class => {
                if in_repetition {
                    in_repetition = false;
                    out.push('}');
                } else {
                    out.push_str("\\}");
                }
            }
            '(' if !in_class
                && chars.get(i + 1) == Some(&'?')
                && chars.get(i + 2) == Some(&'\'') =>
            {
                // `(?'name'...)` is `(?<name>...)`.
                let rest: String = chars[i + 3..].iter().collect();
                if let Some(end) = rest.find('\'') {
                    out.push_str("(?<");
                    out.push_str(&rest[..end]);
                    out.push('>');
                    i += 3 + rest[..end].chars().count() + 1;
                    continue;
                }
                out.push('(');
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

fn push_literal(out: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) {
        out.push('\\');
    }
    out.push(c);
}

/// `text` (after a `{`) starts a repetition `{n}`, `{n,}` or `{n,m}`.
fn is_repetition(text: &str) -> bool {
    let Some(end) = text.find('}') else {
        return false;
    };
    let inner = &text[..end];
    let (a, b) = match inner.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (inner, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    digits(a.trim()) && b.is_none_or(|b| b.trim().is_empty() || digits(b.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, hay: &str) -> bool {
        Re::new(p, false).unwrap().is_match(hay.as_bytes())
    }

    #[test]
    fn one_byte_patterns_find_what_the_engine_finds() {
        let hays: [&[u8]; 6] = [
            b"Web Gateway",
            b"a\tb\nc\x0bd\x0ce\rf",
            b"no-match_here",
            b"",
            b"x,y;z|A-a\xff\x80",
            b"   ",
        ];
        for (p, ic) in [
            (r"\s", false),
            (r"[,;]", false),
            (r"-", false),
            (r"a", true),
            (r"[^a-z]", false),
            (r"\xff", false),
            (r"\d", false),
            (r"\W", false),
            (r".", false),
        ] {
            let re = Re::new(p, ic).unwrap();
            assert!(re.one_byte.is_some(), "{p} is one byte");
            let Inner::Std(engine) = &re.inner else {
                panic!("{p} runs on the regex engine");
            };
            for hay in hays {
                for at in 0..=hay.len() {
                    let want = engine.find_at(hay, at).map(|m| (m.start(), m.end()));
                    assert_eq!(
                        re.find_plain(hay, at),
                        Some(want),
                        "{p} in {hay:?} from {at}"
                    );
                }
                assert_eq!(re.is_match(hay), engine.is_match(hay), "{p} in {hay:?}");
            }
        }
        for p in [r"\s+", r"ab", r"^\s", r"(\s)", r"\s|ab"] {
            assert!(Re::new(p, false).unwrap().one_byte.is_none(), "{p}");
        }
    }

    #[test]
    fn pcre_spellings() {
        assert!(m(r"^\<\d+\>", "<13>x"));
        assert!(!m(r"^\<\d+\>", "13x"));
        assert!(m(r"a\/b", "a/b"));
        assert!(m(r"^\S+\h\d", "ab\t1"));
        assert!(m(r"x{", "x{"));
        assert!(m(r"{foo}", "a{foo}"));
        assert!(m(r"a{2}", "aa"));
        assert!(!m(r"^a{2}$", "a"));
        assert!(m(r"[[:alpha:]]+", "abc"));
        assert!(m(r"[]a]", "]"));
        assert!(m(r"\d", "5"));
        // ASCII classes, as PCRE without utf8.
        assert!(!m(r"^\d$", "٣"));
        let named = Re::new(r"(?'x'\d+)-(?<y>\w+)", false).unwrap();
        assert_eq!(named.engine(), Engine::Regex);
        let (_, g) = named.captures(b"12-ab").unwrap();
        assert_eq!(g[1], Some((0, 2)));
        assert_eq!(named.group_names()[2].as_deref(), Some("y"));
    }

    #[test]
    fn lookaround_and_backreferences_use_the_backtracking_engine() {
        let re = Re::new(
            r"^(?<preamble>(?!-)[a-zA-Z-\/0-9\.]+).*(?<message>CEF:0.*)",
            false,
        )
        .unwrap();
        assert_eq!(re.engine(), Engine::Pcre);
        let (hay, g) = re.captures(b"host-1 junk CEF:0|a|b").unwrap();
        let (s, e) = g[2].unwrap();
        assert_eq!(&hay[s..e], b"CEF:0|a|b");
        assert!(!re.is_match(b"-x CEF:0"));
        let back = Re::new(r"(\w)\1", false).unwrap();
        assert_eq!(back.engine(), Engine::Pcre);
        assert!(back.is_match(b"abba"));
        assert!(!back.is_match(b"abc"));
        let poss = Re::new(r"^a++b", false).unwrap();
        assert!(poss.is_match(b"aab"));
        // Not UTF-8: read lossily, still matched.
        assert!(Re::new(r"(?<=x)y", false).unwrap().is_match(b"\xffxy"));
    }

    #[test]
    fn ignore_case_and_errors() {
        assert!(Re::new("^acme", true).unwrap().is_match(b"ACME fw"));
        let e = Re::new("(unclosed", false).unwrap_err();
        assert!(e.contains("not a regular expression"), "{e}");
    }
}
