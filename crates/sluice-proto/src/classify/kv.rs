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
        loop {
            let start = self.rest.iter().position(|&b| b != self.sep && b != b' ')?;
            let s = &self.rest[start..];
            let token_end = s.iter().position(|&b| b == self.sep).unwrap_or(s.len());
            let Some(eq) = s[..token_end].iter().position(|&b| b == b'=') else {
                self.rest = &s[token_end..];
                continue;
            };
            let key = trim(&s[..eq]);
            let after = &s[eq + 1..];
            if after.first() == Some(&b'"') {
                let body = &after[1..];
                let mut i = 0;
                while i < body.len() {
                    match body[i] {
                        b'\\' => i += 2,
                        b'"' if body.get(i + 1) == Some(&b'"') => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                let end = i.min(body.len());
                self.rest = body.get(end + 1..).unwrap_or(&[]);
                return Some(Pair {
                    key,
                    value: &body[..end],
                    quoted: true,
                });
            }
            let end = after
                .iter()
                .position(|&b| b == self.sep)
                .unwrap_or(after.len());
            self.rest = &after[end..];
            return Some(Pair {
                key,
                value: &after[..end],
                quoted: false,
            });
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
