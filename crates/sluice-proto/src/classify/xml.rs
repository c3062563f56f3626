//! XML as syslog-ng's `xml()` parser reads it (SC4S's Epic EHR rule): GLib's GMarkup
//! tokenizer driving syslog-ng's `xml-scanner`, which turns a document into name-value pairs.
//!
//! * Each element's name is added to a dotted key (`EventLog.Mnemonics.Mnemonic`).
//! * Attributes are pushed when their element starts, as `<key>._<attribute>`.
//! * An element's text — every text chunk directly inside it, whitespace between its
//!   children included (syslog-ng does not strip it by default) — is pushed when the
//!   element ends, if not empty. Entities (`&amp;`, `&#233;`, ...) are decoded, CDATA is
//!   text, comments, processing instructions and `<!DOCTYPE>` are skipped.
//! * A key pushed again becomes a list (`create-lists(yes)`, the default).
//! * A malformed document stops the scan with an error; what was pushed before stays
//!   (SC4S's `drop-invalid(no)` forwards the message with those values).
//!
//! This runs when the event is written (the classification only records that the body is
//! XML), so it builds owned strings.

/// One pushed pair: the dotted key and the decoded text.
pub type Pair = (Vec<u8>, Vec<u8>);

/// Why the scan stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// Byte offset in the document.
    pub at: usize,
}

/// Scans `doc`, returning the pairs in push order and, when the document is malformed,
/// where the scan stopped.
pub fn scan(doc: &[u8]) -> (Vec<Pair>, Option<Malformed>) {
    let mut s = Scanner {
        doc,
        at: 0,
        pairs: Vec::new(),
        open: Vec::new(),
        key: Vec::new(),
    };
    let err = s.run().err();
    (s.pairs, err)
}

struct Open<'a> {
    name: &'a [u8],
    /// The length of the key before this element's name was added.
    key_len: usize,
    text: Vec<u8>,
}

struct Scanner<'a> {
    doc: &'a [u8],
    at: usize,
    pairs: Vec<Pair>,
    open: Vec<Open<'a>>,
    key: Vec<u8>,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A byte that can be in a GMarkup name (ASCII letters, digits, `_ : - .`, and any byte
/// of a non-ASCII character); the first cannot be a digit, `-` or `.`.
fn name_byte(b: u8, first: bool) -> bool {
    b.is_ascii_alphabetic()
        || b == b'_'
        || b == b':'
        || b >= 0x80
        || (!first && (b.is_ascii_digit() || b == b'-' || b == b'.'))
}

impl<'a> Scanner<'a> {
    fn fail<T>(&self) -> Result<T, Malformed> {
        Err(Malformed { at: self.at })
    }

    fn rest(&self) -> &'a [u8] {
        &self.doc[self.at..]
    }

    fn skip_spaces(&mut self) {
        while self.doc.get(self.at).is_some_and(|&b| is_space(b)) {
            self.at += 1;
        }
    }

    fn run(&mut self) -> Result<(), Malformed> {
        while self.at < self.doc.len() {
            if self.doc[self.at] != b'<' {
                let end = memchr::memchr(b'<', self.rest()).map_or(self.doc.len(), |i| self.at + i);
                let doc = self.doc;
                let raw = &doc[self.at..end];
                let decoded = match self.open.last_mut() {
                    Some(o) => decode_into(raw, &mut o.text),
                    // Outside the root only whitespace may stand.
                    None if raw.iter().all(|&b| is_space(b)) => Ok(()),
                    None => Err(0),
                };
                if let Err(i) = decoded {
                    self.at += i;
                    return self.fail();
                }
                self.at = end;
                continue;
            }
            let r = self.rest();
            if r.starts_with(b"<?") {
                self.skip_past(b"?>")?;
            } else if r.starts_with(b"<!--") {
                self.skip_past(b"-->")?;
            } else if r.starts_with(b"<![CDATA[") {
                let Some(o) = self.open.last_mut() else {
                    return self.fail();
                };
                let body = &r[9..];
                let Some(end) = memchr::memmem::find(body, b"]]>") else {
                    return self.fail();
                };
                o.text.extend_from_slice(&body[..end]);
                self.at += 9 + end + 3;
            } else if r.starts_with(b"<!") {
                self.skip_past(b">")?;
            } else if r.starts_with(b"</") {
                self.end_tag()?;
            } else {
                self.start_tag()?;
            }
        }
        if self.open.is_empty() {
            Ok(())
        } else {
            // GMarkup: "Document ended unexpectedly with elements still open".
            self.fail()
        }
    }

    fn skip_past(&mut self, end: &[u8]) -> Result<(), Malformed> {
        match memchr::memmem::find(self.rest(), end) {
            Some(i) => {
                self.at += i + end.len();
                Ok(())
            }
            None => self.fail(),
        }
    }

    fn name(&mut self) -> Result<&'a [u8], Malformed> {
        let r = self.rest();
        let n = r
            .iter()
            .enumerate()
            .take_while(|&(i, &b)| name_byte(b, i == 0))
            .count();
        if n == 0 {
            return self.fail();
        }
        self.at += n;
        Ok(&r[..n])
    }

    fn start_tag(&mut self) -> Result<(), Malformed> {
        self.at += 1;
        let name = self.name()?;
        let key_len = self.key.len();
        if !self.key.is_empty() {
            self.key.push(b'.');
        }
        self.key.extend_from_slice(name);
        let mut attrs: Vec<(&'a [u8], Vec<u8>)> = Vec::new();
        loop {
            let had_space = self.doc.get(self.at).is_some_and(|&b| is_space(b));
            self.skip_spaces();
            match self.doc.get(self.at) {
                Some(b'>') => {
                    self.at += 1;
                    self.push_attrs(attrs);
                    self.open.push(Open {
                        name,
                        key_len,
                        text: Vec::new(),
                    });
                    return Ok(());
                }
                Some(b'/') if self.doc.get(self.at + 1) == Some(&b'>') => {
                    self.at += 2;
                    self.push_attrs(attrs);
                    // An empty element: no text to push.
                    self.key.truncate(key_len);
                    return Ok(());
                }
                Some(_) if had_space => {
                    let attr = self.name()?;
                    self.skip_spaces();
                    if self.doc.get(self.at) != Some(&b'=') {
                        return self.fail();
                    }
                    self.at += 1;
                    self.skip_spaces();
                    let Some(&q @ (b'"' | b'\'')) = self.doc.get(self.at) else {
                        return self.fail();
                    };
                    self.at += 1;
                    let Some(len) = memchr::memchr(q, self.rest()) else {
                        return self.fail();
                    };
                    let raw = &self.doc[self.at..self.at + len];
                    if attrs.iter().any(|(a, _)| *a == attr) || raw.contains(&b'<') {
                        return self.fail();
                    }
                    let mut value = Vec::with_capacity(raw.len());
                    if let Err(i) = decode_into(raw, &mut value) {
                        self.at += i;
                        return self.fail();
                    }
                    attrs.push((attr, value));
                    self.at += len + 1;
                }
                _ => return self.fail(),
            }
        }
    }

    fn push_attrs(&mut self, attrs: Vec<(&'a [u8], Vec<u8>)>) {
        for (attr, value) in attrs {
            let mut key = self.key.clone();
            key.extend_from_slice(b"._");
            key.extend_from_slice(attr);
            self.pairs.push((key, value));
        }
    }

    fn end_tag(&mut self) -> Result<(), Malformed> {
        self.at += 2;
        let name = self.name()?;
        self.skip_spaces();
        if self.doc.get(self.at) != Some(&b'>') {
            return self.fail();
        }
        match self.open.last() {
            Some(o) if o.name == name => {}
            _ => return self.fail(),
        }
        self.at += 1;
        let Some(o) = self.open.pop() else {
            return self.fail();
        };
        if !o.text.is_empty() {
            self.pairs.push((self.key.clone(), o.text));
        }
        self.key.truncate(o.key_len);
        Ok(())
    }
}

/// Appends `raw` with its entity references decoded; `Err(offset)` at a malformed one.
fn decode_into(raw: &[u8], out: &mut Vec<u8>) -> Result<(), usize> {
    let mut i = 0;
    while let Some(amp) = memchr::memchr(b'&', &raw[i..]) {
        out.extend_from_slice(&raw[i..i + amp]);
        let at = i + amp;
        let semi = memchr::memchr(b';', &raw[at..]).ok_or(at)?;
        let entity = &raw[at + 1..at + semi];
        match entity {
            b"amp" => out.push(b'&'),
            b"lt" => out.push(b'<'),
            b"gt" => out.push(b'>'),
            b"quot" => out.push(b'"'),
            b"apos" => out.push(b'\''),
            [b'#', b'x', hex @ ..] => push_char(out, hex, 16).ok_or(at)?,
            [b'#', dec @ ..] => push_char(out, dec, 10).ok_or(at)?,
            _ => return Err(at),
        }
        i = at + semi + 1;
    }
    out.extend_from_slice(&raw[i..]);
    Ok(())
}

/// A character reference's digits in `radix`, appended as UTF-8.
fn push_char(out: &mut Vec<u8>, digits: &[u8], radix: u32) -> Option<()> {
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let n = u32::from_str_radix(std::str::from_utf8(digits).ok()?, radix).ok()?;
    let c = char::from_u32(n).filter(|&c| c != '\0')?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(doc: &str) -> (Vec<(String, String)>, bool) {
        let (p, err) = scan(doc.as_bytes());
        (
            p.into_iter()
                .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
                .collect(),
            err.is_none(),
        )
    }

    fn kv(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn elements_attributes_and_text() {
        let (p, ok) = pairs(
            "<?xml version=\"1.0\"?><!-- c --><a x='1' y=\"&lt;2&gt;\"> <b>t&amp;u</b><c/><d z=\"q\"/><e></e>&#233;<![CDATA[<raw>]]></a> ",
        );
        assert!(ok);
        assert_eq!(
            p,
            kv(&[
                ("a._x", "1"),
                ("a._y", "<2>"),
                ("a.b", "t&u"),
                ("a.d._z", "q"),
                ("a", " é<raw>"),
            ])
        );
    }

    #[test]
    fn repeated_elements_are_pushed_each_time() {
        let (p, ok) = pairs("<m><n N=\"A\"><v>1</v></n><n N=\"B\"><v>2</v></n></m>");
        assert!(ok);
        assert_eq!(
            p,
            kv(&[
                ("m.n._N", "A"),
                ("m.n.v", "1"),
                ("m.n._N", "B"),
                ("m.n.v", "2")
            ])
        );
    }

    #[test]
    fn malformed_documents_keep_what_came_before() {
        for (doc, want) in [
            ("<a><b>1</b><c>2</d></a>", &[("a.b", "1")][..]),
            ("<a><b>1</b>", &[("a.b", "1")]),
            ("text <a/>", &[]),
            ("<a>&bogus;</a>", &[]),
            ("<a x=1/>", &[]),
            ("<a x=\"1\" x=\"2\"/>", &[]),
            ("<1a/>", &[]),
            ("<a><![CDATA[x</a>", &[]),
            ("<a>&#xZZ;</a>", &[]),
            ("<a>&#0;</a>", &[]),
            ("<a x=\"<\"/>", &[]),
            ("<a/>trailing", &[]),
        ] {
            let (p, ok) = pairs(doc);
            assert!(!ok, "{doc}");
            assert_eq!(p, kv(want), "{doc}");
        }
        let (p, ok) = pairs("");
        assert!(ok && p.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80)) {
            let mut doc = b"<a x='1'>".to_vec();
            doc.extend_from_slice(&b);
            let (_, _) = scan(&doc);
            let (_, _) = scan(&b);
        }
    }
}
