//! syslog-ng's `kv-parser()` scanner, for vendors whose SC4S parser sets its own
//! `value-separator()` / `pair-separator()` (Semperis DSP: `[Key] value [Key] value`).
//!
//! The rules, as syslog-ng applies them (its `kv-scanner` and `str-repr` decoder):
//!
//! * a key is the run of `[A-Za-z0-9_.-]` right before a value separator (spaces between
//!   them are skipped); a separator with no such run before it is passed over, and what lies
//!   before a key is a stray word, dropped;
//! * a value starts after the separator, past spaces that do not end it; it is either
//!   quoted (`"..."` or `'...'`, with backslash escapes) or runs to a delimiter: a space
//!   followed (after more spaces) by the end, by another key and its separator, or by the
//!   pair separator; or the pair separator itself;
//! * text after a closing quote that is no delimiter makes the value fall back to its raw
//!   text, and scanning resumes at the value's start;
//! * a NUL byte ends the input (syslog-ng scans C strings).
//!
//! Never fails and never panics: malformed input yields fewer or rawer pairs.

use std::borrow::Cow;

/// The pairs of `text` with value separator `value_sep` and the one-byte pair separator
/// `pair_sep`, in order (a key may repeat; syslog-ng keeps the last).
pub fn pairs(text: &[u8], value_sep: u8, pair_sep: u8) -> Pairs<'_> {
    let end = memchr::memchr(0, text).unwrap_or(text.len());
    Pairs {
        s: &text[..end],
        pos: 0,
        value_sep,
        pair_sep,
    }
}

/// The iterator of [`pairs`]: `(key, value)`, the value decoded (borrowed unless it was
/// quoted with escapes).
#[derive(Clone, Debug)]
pub struct Pairs<'a> {
    s: &'a [u8],
    pos: usize,
    value_sep: u8,
    pair_sep: u8,
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

impl<'a> Pairs<'a> {
    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    /// A key (and its separator) starts at `i`.
    fn key_follows(&self, i: usize) -> bool {
        let mut k = i;
        while is_key_char(self.at(k)) {
            k += 1;
        }
        let word = k != i;
        while self.at(k) == b' ' {
            k += 1;
        }
        word && self.at(k) == self.value_sep && k < self.s.len()
    }

    /// Whether a value ends at `cur`, and where scanning goes on.
    fn delimiter(&self, cur: usize, quoted: bool) -> Option<usize> {
        let c = self.at(cur);
        if cur >= self.s.len() {
            return Some(cur);
        }
        if c == b' ' && !quoted {
            if self.pair_sep == b' ' {
                return Some(cur + 1);
            }
            let mut k = cur;
            while self.at(k) == b' ' {
                k += 1;
            }
            if k >= self.s.len() || self.key_follows(k) {
                Some(k)
            } else if self.at(k) == self.pair_sep {
                Some(k + 1)
            } else {
                None
            }
        } else if c == b' ' || c == self.pair_sep {
            // After a quoted value a space ends it at once; so does the pair separator.
            Some(cur + 1)
        } else {
            None
        }
    }

    /// Only a space or the pair separator can end a value (NUL ends the input).
    fn try_delimiter(&self, cur: usize, quoted: bool) -> Option<usize> {
        let c = self.at(cur);
        if c == b' ' || c == self.pair_sep {
            self.delimiter(cur, quoted)
        } else {
            None
        }
    }

    /// The key ending at the next value separator that has one; the position after it.
    fn key(&self) -> Option<(&'a [u8], usize)> {
        let s = self.s;
        let base = self.pos;
        let mut from = base;
        while let Some(off) = memchr::memchr(self.value_sep, s.get(from..)?) {
            let sep = from + off;
            let mut end = sep;
            while end > base && s[end - 1] == b' ' {
                end -= 1;
            }
            let mut start = end;
            while start > base && is_key_char(s[start - 1]) {
                start -= 1;
            }
            if end > start {
                return Some((&s[start..end], sep + 1));
            }
            from = sep + 1;
        }
        None
    }

    /// Decodes the value at `start`: the value and where the next key search starts.
    fn value(&self, start: usize) -> (Cow<'a, [u8]>, usize) {
        #[derive(PartialEq)]
        enum St {
            Initial,
            Quoted,
            Backslash,
            ExpectDelimiter,
            QuoteError,
            Unquoted,
        }
        let s = self.s;
        let first = self.at(start);
        let quoted = first == b'"' || first == b'\'';
        let mut quote = 0u8;
        let mut st = St::Initial;
        let mut decoded: Option<Vec<u8>> = None;
        // Unescaped values are a slice of the input: [start + skip, plain_end).
        let mut plain = (start, start);
        let mut cur = start;
        let mut finished = None;
        while cur < s.len() {
            let c = s[cur];
            match st {
                St::Initial => {
                    if let Some(next) = self.try_delimiter(cur, quoted) {
                        finished = Some((true, next));
                        break;
                    } else if c == b'"' || c == b'\'' {
                        quote = c;
                        plain = (cur + 1, cur + 1);
                        st = St::Quoted;
                    } else {
                        plain = (cur, cur + 1);
                        st = St::Unquoted;
                    }
                }
                St::Quoted => {
                    if c == quote {
                        st = St::ExpectDelimiter;
                    } else if c == b'\\' {
                        decoded.get_or_insert_with(|| s[plain.0..plain.1].to_vec());
                        st = St::Backslash;
                    } else {
                        match decoded.as_mut() {
                            Some(d) => d.push(c),
                            None => plain.1 = cur + 1,
                        }
                    }
                }
                St::Backslash => {
                    let d = decoded.get_or_insert_with(Vec::new);
                    let control = match c {
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'\\' => b'\\',
                        _ => {
                            if c != quote {
                                d.push(b'\\');
                            }
                            c
                        }
                    };
                    d.push(control);
                    st = St::Quoted;
                }
                St::ExpectDelimiter => match self.try_delimiter(cur, quoted) {
                    Some(next) => {
                        finished = Some((true, next));
                        break;
                    }
                    None => st = St::QuoteError,
                },
                St::QuoteError => {
                    if let Some(next) = self.try_delimiter(cur, quoted) {
                        finished = Some((false, next));
                        break;
                    }
                }
                St::Unquoted => {
                    if let Some(next) = self.try_delimiter(cur, quoted) {
                        finished = Some((true, next));
                        break;
                    }
                    plain.1 = cur + 1;
                }
            }
            cur += 1;
        }
        let ok = match finished {
            Some((ok, next)) => {
                cur = next;
                ok
            }
            None => matches!(st, St::Initial | St::ExpectDelimiter | St::Unquoted),
        };
        if !ok {
            // A quoting error: the raw text up to where decoding stopped, and the next key
            // is searched from the value's start again.
            return (Cow::Borrowed(&s[start..cur.min(s.len())]), start);
        }
        let value = match decoded {
            Some(d) => Cow::Owned(d),
            None => Cow::Borrowed(&s[plain.0..plain.1]),
        };
        (value, cur)
    }
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a [u8], Cow<'a, [u8]>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.s.len() {
            return None;
        }
        let (key, after) = self.key()?;
        self.pos = after;
        // Spaces before the value are skipped unless one of them ends it (an empty value).
        while self.at(self.pos) == b' ' && self.delimiter(self.pos, false).is_none() {
            self.pos += 1;
        }
        let (value, next) = self.value(self.pos);
        self.pos = next;
        Some((key, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str, value_sep: u8, pair_sep: u8) -> Vec<(String, String)> {
        pairs(text.as_bytes(), value_sep, pair_sep)
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(k).into_owned(),
                    String::from_utf8_lossy(&v).into_owned(),
                )
            })
            .collect()
    }

    fn kv(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn square_brackets() {
        let text = "AdChanges@51802] [ForestId] 1111 [PartitionNamingContext] DC=corpcert,DC=heb,DC=com [LinkedValueDN]  [ValidUntil] 2024-05-25T13:06:49+00:00 [OriginatingUsers]  [StringValueTo] 327680  ";
        assert_eq!(
            scan(text, b']', b'['),
            kv(&[
                ("51802", ""),
                ("ForestId", "1111"),
                ("PartitionNamingContext", "DC=corpcert,DC=heb,DC=com"),
                ("LinkedValueDN", ""),
                ("ValidUntil", "2024-05-25T13:06:49+00:00"),
                ("OriginatingUsers", ""),
                ("StringValueTo", "327680"),
            ])
        );
        // A value with spaces runs to the pair separator.
        assert_eq!(
            scan("[Name] John Smith [Role] admin", b']', b'['),
            kv(&[("Name", "John Smith"), ("Role", "admin")])
        );
    }

    #[test]
    fn syslog_ng_defaults() {
        // kv-parser's defaults: `=` and ", ".
        assert_eq!(
            scan("a=1, b=two words, c=\"q\\\"x\", d=", b'=', b','),
            kv(&[("a", "1"), ("b", "two words"), ("c", "q\"x"), ("d", "")])
        );
        assert_eq!(
            scan("junk a=1 b='x y' c", b'=', b','),
            kv(&[("a", "1"), ("b", "x y")])
        );
        // Junk after a closing quote: the raw text (with the delimiter it stopped at), and
        // the next key searched from the value's start.
        assert_eq!(
            scan("a=\"x\"y b=2", b'=', b','),
            kv(&[("a", "\"x\"y "), ("b", "2")])
        );
        assert_eq!(scan("", b'=', b','), kv(&[]));
        assert_eq!(scan("=== ]]", b'=', b','), kv(&[]));
        assert_eq!(scan("a=1\0b=2", b'=', b','), kv(&[("a", "1")]));
        // An unterminated quote: the raw rest.
        assert_eq!(scan("a=\"open", b'=', b','), kv(&[("a", "\"open")]));
    }
}
