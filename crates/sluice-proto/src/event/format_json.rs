//! syslog-ng's `$(format-json ...)` over flat name-value pairs (SC4S's `t_json_values`:
//! `--key .metadata.* --key .SDATA.* --key .values.* --shift-levels 2`), for values that
//! are only known as pairs (an XML document's, a parser's extra fields): dotted names become
//! nested objects the way syslog-ng's value-pairs walker builds them.
//!
//! * The names are visited in *descending* byte order (the walker's tree compares
//!   `strcmp(b, a)`), so `{"who_ip":..,"who":..}` and children before a same-named leaf.
//! * A name splits at `.` (empty pieces ignored; after `@`, digits with `.` between them belong to an
//!   SD enterprise id). Open objects are closed until the open object's dotted prefix is a
//!   byte prefix of the next name (syslog-ng's `strncmp`, without a boundary check), then
//!   the missing objects are opened; a leaf whose name equals an open object's is written
//!   inside it, as syslog-ng does.
//! * A list value (a repeated XML element) is a JSON array of strings.

/// One value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    /// A typed value written as it is (an integer).
    Raw(Vec<u8>),
}

/// Pairs in the order they were set; a name set again is handled by [`Pairs::set`] or
/// [`Pairs::append`].
#[derive(Debug, Default)]
pub(crate) struct Pairs {
    items: Vec<(Vec<u8>, Val)>,
}

impl Pairs {
    fn find(&mut self, name: &[u8]) -> Option<&mut Val> {
        self.items
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// `name` := `value` (a later set replaces).
    pub(crate) fn set(&mut self, name: Vec<u8>, value: Vec<u8>) {
        match self.find(&name) {
            Some(v) => *v = Val::Str(value),
            None => self.items.push((name, Val::Str(value))),
        }
    }

    /// `name` := a number, written unquoted (syslog-ng's `int(...)` values).
    pub(crate) fn set_number(&mut self, name: Vec<u8>, value: i64) {
        let v = Val::Raw(value.to_string().into_bytes());
        match self.find(&name) {
            Some(old) => *old = v,
            None => self.items.push((name, v)),
        }
    }

    /// syslog-ng's xml-parser push with `create-lists(yes)`: a second non-empty value
    /// makes the value a list.
    pub(crate) fn append(&mut self, name: Vec<u8>, value: Vec<u8>) {
        match self.find(&name) {
            Some(Val::Str(prev)) if prev.is_empty() => *prev = value,
            Some(v) => {
                let list = match std::mem::replace(v, Val::List(Vec::new())) {
                    Val::Str(prev) => vec![prev, value],
                    Val::List(mut l) => {
                        l.push(value);
                        l
                    }
                    Val::Raw(prev) => vec![prev, value],
                };
                *v = Val::List(list);
            }
            None => self.items.push((name, Val::Str(value))),
        }
    }

    /// The JSON object, appended to `out`.
    pub(crate) fn write(mut self, out: &mut Vec<u8>) {
        self.items.sort_by(|a, b| b.0.cmp(&a.0));
        // The open objects: their dotted prefix, and whether they have a member yet.
        let mut stack: Vec<(Vec<u8>, bool)> = Vec::new();
        let mut root_has_member = false;
        out.push(b'{');
        for (name, value) in &self.items {
            let tokens = split(name);
            let Some((leaf, parents)) = tokens.split_last() else {
                continue;
            };
            while let Some((prefix, _)) = stack.last() {
                if name.starts_with(prefix) {
                    break;
                }
                stack.pop();
                out.push(b'}');
            }
            for i in stack.len()..parents.len() {
                member_sep(out, &mut stack, &mut root_has_member);
                crate::json::write_str(out, tokens[i]);
                out.extend_from_slice(b":{");
                stack.push((tokens[..=i].join(&b'.'), false));
            }
            member_sep(out, &mut stack, &mut root_has_member);
            crate::json::write_str(out, leaf);
            out.push(b':');
            match value {
                Val::Str(s) => crate::json::write_str(out, s),
                Val::Raw(r) => out.extend_from_slice(r),
                Val::List(l) => {
                    out.push(b'[');
                    for (i, s) in l.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        crate::json::write_str(out, s);
                    }
                    out.push(b']');
                }
            }
        }
        for _ in stack {
            out.push(b'}');
        }
        out.push(b'}');
    }
}

/// A comma before the next member of the innermost open object, unless it is the first.
fn member_sep(out: &mut Vec<u8>, stack: &mut [(Vec<u8>, bool)], root: &mut bool) {
    let has = match stack.last_mut() {
        Some((_, has)) => has,
        None => root,
    };
    if *has {
        out.push(b',');
    }
    *has = true;
}

/// The walker's tokens of a name.
fn split(name: &[u8]) -> Vec<&[u8]> {
    let mut tokens = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < name.len() {
        match name[i] {
            b'@' => loop {
                // `@` (or a `.`), then digits, while a `.` and a digit follow.
                i += 1;
                while name.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if !(name.get(i) == Some(&b'.') && name.get(i + 1).is_some_and(u8::is_ascii_digit))
                {
                    break;
                }
            },
            b'.' => {
                if i > start {
                    tokens.push(&name[start..i]);
                }
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < name.len() {
        tokens.push(&name[start..]);
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(pairs: &[(&str, &str)]) -> String {
        let mut p = Pairs::default();
        for (k, v) in pairs {
            p.append(k.as_bytes().to_vec(), v.as_bytes().to_vec());
        }
        let mut out = Vec::new();
        p.write(&mut out);
        String::from_utf8(out).unwrap()
    }

    /// syslog-ng's own `format-json` tests (`modules/json/tests/test_format_json.c`).
    #[test]
    fn like_syslog_ng() {
        assert_eq!(
            render(&[("msg.text", "t"), ("msg.id", "42"), ("host", "bzorp")]),
            r#"{"msg":{"text":"t","id":"42"},"host":"bzorp"}"#
        );
        assert_eq!(
            render(&[
                ("kernel.SUBSYSTEM", "pci"),
                ("kernel.DEVICE.type", "pci"),
                ("kernel.DEVICE.name", "0000:02:00.0"),
                ("MSGID", "801"),
                ("MESSAGE", "test")
            ]),
            r#"{"kernel":{"SUBSYSTEM":"pci","DEVICE":{"type":"pci","name":"0000:02:00.0"}},"MSGID":"801","MESSAGE":"test"}"#
        );
        assert_eq!(
            render(&[("win@18372.4.fruit", "pear"), ("win@18372.4.taste", "good")]),
            r#"{"win@18372.4":{"taste":"good","fruit":"pear"}}"#
        );
    }

    #[test]
    fn lists_and_mixed_leaves() {
        assert_eq!(
            render(&[("a.b", "1"), ("a.b", "2"), ("a", "  "), ("a.c", "x")]),
            r#"{"a":{"c":"x","b":["1","2"],"a":"  "}}"#
        );
        assert_eq!(render(&[("..", "x")]), "{}");
        assert_eq!(render(&[]), "{}");
        let mut p = Pairs::default();
        p.set(b"k".to_vec(), b"1".to_vec());
        p.set(b"k".to_vec(), b"2".to_vec());
        let mut out = Vec::new();
        p.write(&mut out);
        assert_eq!(out, br#"{"k":"2"}"#);
    }
}
