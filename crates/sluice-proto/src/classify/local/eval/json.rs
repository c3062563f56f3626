//! `json-parser()`: a JSON object flattened into dotted names (`{"a":{"b":1}}` is `a.b=1`).
//! Arrays of scalars become syslog-ng lists (`a,b,c`); other arrays keep their JSON text.
//! `null` is empty; numbers and booleans keep their text.

use bumpalo::Bump;
use bumpalo::collections::Vec as BVec;

/// How deep objects may nest before the parser gives up (a failed parse).
const MAX_DEPTH: usize = 64;

/// Flattens the object in `text` (or its member `extract`, `a.b`) into `out`; `false` when
/// the text is not a JSON object.
pub(super) fn flatten<'m>(
    text: &'m [u8],
    extract: Option<&str>,
    arena: &'m Bump,
    out: &mut Vec<(String, &'m [u8])>,
) -> bool {
    let mut p = Parser {
        s: text,
        at: 0,
        arena,
    };
    p.ws();
    let mut all = Vec::new();
    if !p.object("", &mut all, 0) {
        return false;
    }
    p.ws();
    if p.at != text.len() {
        return false;
    }
    match extract {
        None => out.extend(all),
        Some(prefix) => {
            let dotted = format!("{prefix}.");
            let mut found = false;
            for (k, v) in all {
                if let Some(rest) = k.strip_prefix(&dotted) {
                    out.push((rest.to_owned(), v));
                    found = true;
                }
            }
            return found;
        }
    }
    true
}

struct Parser<'m> {
    s: &'m [u8],
    at: usize,
    arena: &'m Bump,
}

impl<'m> Parser<'m> {
    fn ws(&mut self) {
        while self.at < self.s.len() && matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.s.get(self.at) == Some(&b) {
            self.at += 1;
            return true;
        }
        false
    }

    fn object(&mut self, prefix: &str, out: &mut Vec<(String, &'m [u8])>, depth: usize) -> bool {
        if depth > MAX_DEPTH || !self.eat(b'{') {
            return false;
        }
        if self.eat(b'}') {
            return true;
        }
        loop {
            self.ws();
            let Some(key) = self.string() else {
                return false;
            };
            if !self.eat(b':') {
                return false;
            }
            let name = if prefix.is_empty() {
                String::from_utf8_lossy(key).into_owned()
            } else {
                format!("{prefix}.{}", String::from_utf8_lossy(key))
            };
            self.ws();
            match self.s.get(self.at) {
                Some(b'{') => {
                    if !self.object(&name, out, depth + 1) {
                        return false;
                    }
                }
                Some(b'[') => {
                    let Some(v) = self.array(depth + 1) else {
                        return false;
                    };
                    out.push((name, v));
                }
                _ => {
                    let Some(v) = self.scalar() else {
                        return false;
                    };
                    out.push((name, v));
                }
            }
            if self.eat(b',') {
                continue;
            }
            return self.eat(b'}');
        }
    }

    /// An array: a list of its scalars, or its JSON text when it holds objects or arrays.
    fn array(&mut self, depth: usize) -> Option<&'m [u8]> {
        let start = self.at;
        if depth > MAX_DEPTH || !self.eat(b'[') {
            return None;
        }
        let mut items: Vec<&'m [u8]> = Vec::new();
        let mut nested = false;
        if !self.eat(b']') {
            loop {
                self.ws();
                match self.s.get(self.at) {
                    Some(b'{') => {
                        let mut sink = Vec::new();
                        if !self.object("", &mut sink, depth + 1) {
                            return None;
                        }
                        nested = true;
                    }
                    Some(b'[') => {
                        self.array(depth + 1)?;
                        nested = true;
                    }
                    _ => items.push(self.scalar()?),
                }
                if self.eat(b',') {
                    continue;
                }
                if !self.eat(b']') {
                    return None;
                }
                break;
            }
        }
        if nested {
            return Some(&self.s[start..self.at]);
        }
        let mut v = BVec::new_in(self.arena);
        for (i, it) in items.iter().enumerate() {
            if i > 0 {
                v.push(b',');
            }
            if it.iter().any(|&b| b == b',' || b == b'"' || b == b' ') {
                v.push(b'"');
                for &b in it.iter() {
                    if b == b'"' || b == b'\\' {
                        v.push(b'\\');
                    }
                    v.push(b);
                }
                v.push(b'"');
            } else {
                v.extend_from_slice_copy(it);
            }
        }
        Some(v.into_bump_slice())
    }

    fn scalar(&mut self) -> Option<&'m [u8]> {
        self.ws();
        match self.s.get(self.at)? {
            b'"' => self.string(),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null").map(|_| &b""[..]),
            _ => {
                let start = self.at;
                while self.at < self.s.len()
                    && matches!(
                        self.s[self.at],
                        b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'
                    )
                {
                    self.at += 1;
                }
                (self.at > start).then(|| &self.s[start..self.at])
            }
        }
    }

    fn word(&mut self, w: &'static [u8]) -> Option<&'m [u8]> {
        if self.s[self.at..].starts_with(w) {
            self.at += w.len();
            return Some(&self.s[self.at - w.len()..self.at]);
        }
        None
    }

    /// A string at the cursor, unescaped (borrowed when it has no escapes).
    fn string(&mut self) -> Option<&'m [u8]> {
        if self.s.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let mut i = start;
        let mut escaped = false;
        while i < self.s.len() {
            match self.s[i] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => i += 1,
            }
        }
        if i >= self.s.len() {
            return None;
        }
        self.at = i + 1;
        let raw = &self.s[start..i];
        if !escaped {
            return Some(raw);
        }
        let mut v = BVec::with_capacity_in(raw.len(), self.arena);
        let mut j = 0;
        while j < raw.len() {
            if raw[j] != b'\\' || j + 1 >= raw.len() {
                v.push(raw[j]);
                j += 1;
                continue;
            }
            match raw[j + 1] {
                b'n' => v.push(b'\n'),
                b't' => v.push(b'\t'),
                b'r' => v.push(b'\r'),
                b'b' => v.push(8),
                b'f' => v.push(12),
                b'u' => {
                    let hex = raw.get(j + 2..j + 6)?;
                    let mut code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                    let mut used = 6;
                    if (0xD800..0xDC00).contains(&code)
                        && raw.get(j + 6..j + 8) == Some(b"\\u")
                        && let Some(lo) = raw
                            .get(j + 8..j + 12)
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                        && (0xDC00..0xE000).contains(&lo)
                    {
                        code = 0x10000 + ((code - 0xD800) << 10) + (lo - 0xDC00);
                        used = 12;
                    }
                    let c = char::from_u32(code).unwrap_or('\u{fffd}');
                    let mut buf = [0u8; 4];
                    v.extend_from_slice_copy(c.encode_utf8(&mut buf).as_bytes());
                    j += used;
                    continue;
                }
                other => v.push(other),
            }
            j += 2;
        }
        Some(v.into_bump_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(text: &str) -> Option<Vec<(String, String)>> {
        let arena = Bump::new();
        let mut out = Vec::new();
        flatten(text.as_bytes(), None, &arena, &mut out).then(|| {
            out.into_iter()
                .map(|(k, v)| (k, String::from_utf8_lossy(v).into_owned()))
                .collect()
        })
    }

    #[test]
    fn objects_flatten() {
        let v =
            flat(r#"{"a":{"b":1,"c":"x\"y"},"d":[1,"two",true],"e":null,"f":[{"g":1}]}"#).unwrap();
        let get = |k: &str| v.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("a.b"), Some("1"));
        assert_eq!(get("a.c"), Some("x\"y"));
        assert_eq!(get("d"), Some("1,two,true"));
        assert_eq!(get("e"), Some(""));
        assert_eq!(get("f"), Some(r#"[{"g":1}]"#));
        assert!(flat("[1]").is_none());
        assert!(flat(r#"{"a":1"#).is_none());
        assert!(flat(r#"{"a":1} x"#).is_none());
        assert_eq!(flat(r#"{"u":"\u00e9\ud83d\ude00"}"#).unwrap()[0].1, "é😀");
    }
}
