//! Text values of a classification that are static (tables, vendor code), borrowed from the
//! message, or both, so classifying allocates nothing.

use std::fmt;

use crate::json;

/// Room for a short formatted value (e.g. LEEF's `LEEF:2:0x5e` sourcetype) kept inline.
pub const INLINE_CAP: usize = 62;

/// A short string built at classification time, stored inline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Inline {
    len: u8,
    buf: [u8; INLINE_CAP],
}

impl Inline {
    /// `None` when the parts do not fit in [`INLINE_CAP`] bytes.
    pub fn concat(parts: &[&[u8]]) -> Option<Inline> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total > INLINE_CAP {
            return None;
        }
        let mut buf = [0u8; INLINE_CAP];
        let mut at = 0;
        for p in parts {
            buf[at..at + p.len()].copy_from_slice(p);
            at += p.len();
        }
        Some(Inline {
            len: total as u8,
            buf,
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
}

impl fmt::Debug for Inline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

/// One text value: `'t` borrows the classifier's tables (or is `'static` vendor text), `'m`
/// the message.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Value<'m, 't> {
    Static(&'t str),
    Bytes(&'m [u8]),
    /// The static head followed by the borrowed tail (`program:` + PROGRAM).
    Concat(&'t str, &'m [u8]),
    Inline(Inline),
}

impl<'m, 't> Value<'m, 't> {
    pub const EMPTY: Value<'static, 'static> = Value::Static("");

    /// The value as two byte slices to be written one after the other.
    pub fn parts(&self) -> (&[u8], &[u8]) {
        match self {
            Value::Static(s) => (s.as_bytes(), &[]),
            Value::Bytes(b) => (b, &[]),
            Value::Concat(h, t) => (h.as_bytes(), t),
            Value::Inline(i) => (i.as_bytes(), &[]),
        }
    }

    pub fn len(&self) -> usize {
        let (a, b) = self.parts();
        a.len() + b.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Byte equality with `other`.
    pub fn eq_bytes(&self, other: &[u8]) -> bool {
        let (a, b) = self.parts();
        other.len() == a.len() + b.len() && other.starts_with(a) && other.ends_with(b)
    }

    /// Writes the value JSON-escaped (no quotes).
    pub fn escape_into(&self, out: &mut Vec<u8>) {
        let (a, b) = self.parts();
        json::escape_into(out, a);
        json::escape_into(out, b);
    }

    /// Writes the value as a JSON string.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        self.escape_into(out);
        out.push(b'"');
    }

    /// Writes the value as a JSON string, ASCII letters lowercased.
    pub fn write_json_lowercase(&self, out: &mut Vec<u8>) {
        let (a, b) = self.parts();
        out.push(b'"');
        json::escape_lowercase_into(out, a);
        json::escape_lowercase_into(out, b);
        out.push(b'"');
    }

    /// Appends the raw bytes to `out`.
    pub fn push_to(&self, out: &mut Vec<u8>) {
        let (a, b) = self.parts();
        out.extend_from_slice(a);
        out.extend_from_slice(b);
    }

    /// A lossy owned copy, for tests and tools.
    pub fn to_string_lossy(&self) -> String {
        let mut v = Vec::with_capacity(self.len());
        self.push_to(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    }
}

impl fmt::Debug for Value<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl PartialEq<&str> for Value<'_, '_> {
    fn eq(&self, other: &&str) -> bool {
        self.eq_bytes(other.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_and_equality() {
        let v = Value::Concat("program:", b"sshd");
        assert_eq!(v, "program:sshd");
        assert_eq!(v.len(), 12);
        let i = Inline::concat(&[b"LEEF:", b"2", b":0x5e"]).unwrap();
        assert_eq!(Value::Inline(i), "LEEF:2:0x5e");
        assert!(Inline::concat(&[&[b'x'; INLINE_CAP + 1]]).is_none());
        let mut out = Vec::new();
        Value::Concat("AB:", b"C\"d").write_json_lowercase(&mut out);
        assert_eq!(out, b"\"ab:c\\\"d\"");
    }
}
