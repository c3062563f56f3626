//! A JSON reader for vendor rules that look a few members up (SC4S's `json-parser()`
//! followed by `${.values.a.b}` references): one pass over the text, every scalar reported
//! with its path of member names, nothing allocated.
//!
//! What counts as JSON is what syslog-ng's `json-parser()` accepts (json-c's tokenizer):
//! one value after optional whitespace, which must be an object; whatever follows it is
//! ignored; nesting deeper than json-c's default limit (32) is an error. Strings must be
//! closed and their escapes well-formed; numbers, `true`, `false` and `null` are read by
//! their shape. An array is reported neither element by element nor as a whole, nor is
//! anything inside it (syslog-ng keeps such an array as JSON text; rules here only read
//! scalars), but it must be well-formed.

/// json-c's `JSON_TOKENER_DEFAULT_DEPTH`.
const MAX_DEPTH: usize = 32;

/// A scalar member's value as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar<'a> {
    /// The text between the quotes, escapes as written (`escaped`: it has some).
    Str {
        raw: &'a [u8],
        escaped: bool,
    },
    /// A number, as written.
    Num(&'a [u8]),
    Bool(bool),
    Null,
}

impl<'a> Scalar<'a> {
    /// The value as syslog-ng's template sees it, when that is a slice of the input: a
    /// string without escapes, a number or boolean as written, `null` as empty. `None` for
    /// a string with escapes (the caller decides).
    pub fn text(&self) -> Option<&'a [u8]> {
        match *self {
            Scalar::Str {
                raw,
                escaped: false,
            } => Some(raw),
            Scalar::Str { .. } => None,
            Scalar::Num(n) => Some(n),
            Scalar::Bool(true) => Some(b"true"),
            Scalar::Bool(false) => Some(b"false"),
            Scalar::Null => Some(b""),
        }
    }
}

/// Why a text is not what `json-parser()` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invalid;

/// Reads the object at the start of `text` (after whitespace) and calls `visit` with the
/// path (member names, escapes as written) and value of every scalar member of an object,
/// in document order, at any depth up to [`MAX_DEPTH`]. Scalars inside arrays are not
/// reported. `Err` when the text does not start with a well-formed object.
pub fn walk<'a>(
    text: &'a [u8],
    mut visit: impl FnMut(&[&'a [u8]], Scalar<'a>),
) -> Result<(), Invalid> {
    let mut r = Reader { s: text, at: 0 };
    r.ws();
    if r.peek() != Some(b'{') {
        return Err(Invalid);
    }
    let mut path: [&'a [u8]; MAX_DEPTH] = [&[]; MAX_DEPTH];
    r.value(&mut path, 0, true, &mut visit)
}

/// The scalar at `path` (the last one when a name repeats, as syslog-ng keeps the last
/// value set), or `Err` when `text` is not a JSON object.
pub fn get<'a>(text: &'a [u8], path: &[&[u8]]) -> Result<Option<Scalar<'a>>, Invalid> {
    let mut found = None;
    walk(text, |p, v| {
        if p.len() == path.len() && p.iter().zip(path).all(|(a, b)| a == b) {
            found = Some(v);
        }
    })?;
    Ok(found)
}

struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), Invalid> {
        self.ws();
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    /// A string at the cursor (the opening quote); returns the text inside and whether it
    /// has escapes.
    fn string(&mut self) -> Result<(&'a [u8], bool), Invalid> {
        self.at += 1;
        let start = self.at;
        let mut escaped = false;
        loop {
            let i = memchr::memchr2(b'"', b'\\', &self.s[self.at..]).ok_or(Invalid)?;
            self.at += i;
            if self.s[self.at] == b'"' {
                let raw = &self.s[start..self.at];
                self.at += 1;
                return Ok((raw, escaped));
            }
            escaped = true;
            match self.s.get(self.at + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.at += 2,
                Some(b'u') => {
                    let hex = self.s.get(self.at + 2..self.at + 6).ok_or(Invalid)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return Err(Invalid);
                    }
                    self.at += 6;
                }
                _ => return Err(Invalid),
            }
        }
    }

    /// A value at the cursor. `report`: it is a member of an object outside any array (so a
    /// scalar is visited with `path[..depth]`).
    fn value(
        &mut self,
        path: &mut [&'a [u8]; MAX_DEPTH],
        depth: usize,
        report: bool,
        visit: &mut impl FnMut(&[&'a [u8]], Scalar<'a>),
    ) -> Result<(), Invalid> {
        self.ws();
        let scalar = match self.peek().ok_or(Invalid)? {
            b'{' => {
                if depth >= MAX_DEPTH {
                    return Err(Invalid);
                }
                self.at += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(Invalid);
                    }
                    let (name, _) = self.string()?;
                    self.expect(b':')?;
                    path[depth] = name;
                    // Members of an object inside an array are not reported either.
                    self.value(path, depth + 1, report, visit)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(Invalid),
                    }
                }
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return Err(Invalid);
                }
                self.at += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    self.value(path, depth + 1, false, visit)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(Invalid),
                    }
                }
            }
            b'"' => {
                let (raw, escaped) = self.string()?;
                Scalar::Str { raw, escaped }
            }
            b't' => self.word(b"true", Scalar::Bool(true))?,
            b'f' => self.word(b"false", Scalar::Bool(false))?,
            b'n' => self.word(b"null", Scalar::Null)?,
            b'-' | b'0'..=b'9' => Scalar::Num(self.number()?),
            _ => return Err(Invalid),
        };
        if report {
            visit(&path[..depth], scalar);
        }
        Ok(())
    }

    fn word(&mut self, w: &[u8], v: Scalar<'a>) -> Result<Scalar<'a>, Invalid> {
        if self.s[self.at..].starts_with(w) {
            self.at += w.len();
            Ok(v)
        } else {
            Err(Invalid)
        }
    }

    /// `-?digits[.digits][(e|E)[+-]digits]`.
    fn number(&mut self) -> Result<&'a [u8], Invalid> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let digits = |r: &mut Reader<'a>| {
            let n = r.s[r.at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            r.at += n;
            n
        };
        if digits(self) == 0 {
            return Err(Invalid);
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(Invalid);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return Err(Invalid);
            }
        }
        Ok(&self.s[start..self.at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_values() {
        let j = br#" {"a": "x\"y", "n": -1.5e3, "o": {"p": true, "q": null, "r": [1, {"s": 2}], "t/u": "v"}, "a": "last"} trailing"#;
        assert_eq!(
            get(j, &[b"a"]),
            Ok(Some(Scalar::Str {
                raw: b"last",
                escaped: false
            }))
        );
        assert_eq!(get(j, &[b"n"]), Ok(Some(Scalar::Num(b"-1.5e3"))));
        assert_eq!(get(j, &[b"o", b"p"]), Ok(Some(Scalar::Bool(true))));
        assert_eq!(
            get(j, &[b"o", b"q"]).unwrap().unwrap().text(),
            Some(&b""[..])
        );
        assert_eq!(
            get(j, &[b"o", b"t/u"]).unwrap().unwrap().text(),
            Some(&b"v"[..])
        );
        // Objects in arrays are not members of the path.
        assert_eq!(get(j, &[b"o", b"r", b"s"]), Ok(None));
        let mut seen = Vec::new();
        walk(br#"{"a":[{"b":1,"c":{"d":2}}],"e":3}"#, |p, _| {
            seen.push(p.len())
        })
        .unwrap();
        assert_eq!(seen, [1]);
        // The fuzz target's find (`structured`): an object inside an array was reported with a
        // path slot from outside the input.
        let crash =
            b"{\" \n\n\n\" : \t\t\t\t[\t{\"\":\r0 0\":\r0 :\"\t  \t\t \t\xaf\n)': \t\xaf\n) '0";
        let _ = walk(crash, |p, _| {
            let inside = |s: &[u8]| {
                let (o, i) = (crash.as_ptr() as usize, s.as_ptr() as usize);
                i >= o && i + s.len() <= o + crash.len()
            };
            assert!(p.iter().all(|s| inside(s)));
        });
        assert_eq!(get(j, &[b"o"]), Ok(None));
        let escaped = get(br#"{"a":"\u00e9"}"#, &[b"a"]).unwrap().unwrap();
        assert_eq!(escaped.text(), None);
    }

    #[test]
    fn what_json_parser_refuses() {
        for bad in [
            &b""[..],
            b"CEF:0|x",
            b"[1, 2]",
            b"\"s\"",
            b"{",
            b"{\"a\"}",
            b"{\"a\":}",
            b"{\"a\":1,}",
            b"{\"a\":\"x}",
            b"{\"a\":\"\\x\"}",
            b"{\"a\":\"\\u12\"}",
            b"{\"a\":tru}",
            b"{\"a\":-}",
            b"{\"a\":1.}",
            b"{\"a\":[1,]}",
            b"{a:1}",
        ] {
            assert_eq!(
                walk(bad, |_, _| {}),
                Err(Invalid),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let deep = format!(
            "{}{}",
            "{\"a\":".repeat(32),
            "1".to_owned() + &"}".repeat(32)
        );
        assert_eq!(walk(deep.as_bytes(), |_, _| {}), Ok(()));
        let deeper = format!(
            "{}{}",
            "{\"a\":".repeat(33),
            "1".to_owned() + &"}".repeat(33)
        );
        assert_eq!(walk(deeper.as_bytes(), |_, _| {}), Err(Invalid));
    }

    proptest::proptest! {
        /// Whatever serde_json reads as an object, the walker reads too, and finds every
        /// top-level string member.
        #[test]
        fn agrees_with_serde_on_objects(m in proptest::collection::btree_map("[a-z/]{1,4}", "[ -~é]{0,8}", 0..6)) {
            let text = serde_json::to_string(&m).unwrap();
            for (k, v) in &m {
                let got = get(text.as_bytes(), &[k.as_bytes()]).unwrap().unwrap();
                if let Scalar::Str { raw, escaped: false } = got {
                    proptest::prop_assert_eq!(raw, v.as_bytes());
                }
            }
        }

        /// Arbitrary bytes: no panic, and every reported string lies inside the input.
        #[test]
        fn any_bytes(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let mut text = b"{\"k\":".to_vec();
            text.extend_from_slice(&b);
            let _ = walk(&text, |p, _| assert!(p.len() <= MAX_DEPTH));
        }
    }
}
