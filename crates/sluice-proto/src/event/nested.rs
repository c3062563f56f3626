//! syslog-ng's `$(format-json ...)` and `$(format-welf ...)` over the name-value pairs SC4S's
//! `t_json_values`, `t_kv_values` and `t_json_values_msg` select (`.metadata.*`, `.SDATA.*`,
//! `.values.*`, shifted two levels), for the vendors whose pairs sluice keeps as text (CEF,
//! syslog-ng `kv-parser` layouts) and for RFC 5424 structured data.
//!
//! What syslog-ng does, and this does:
//! * `format-json` visits the names in descending byte order and nests dotted names into
//!   objects (`origin.ip` is `{"origin":{"ip":...}}`; an SD-ID's `@enterprise.number` stays
//!   in its name); a later value of the same name replaces an earlier one.
//! * `format-welf` writes `name=value` in ascending order (`id` first), a value with a space
//!   in double quotes.
//! * Values are strings.
//!
//! The event text is built here, per event, on the encoder's side: these templates are rare
//! and their vendors' parsers only hand over the text.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::kvscan;
use crate::json;
use crate::message::StructuredData;

/// One selected pair: (name after the shift, value).
type Pair<'a> = (Cow<'a, [u8]>, Cow<'a, [u8]>);

/// The selected pairs.
#[derive(Default)]
pub(super) struct Pairs<'a> {
    items: Vec<Pair<'a>>,
}

impl<'a> Pairs<'a> {
    pub(super) fn push(&mut self, name: impl Into<Cow<'a, [u8]>>, value: impl Into<Cow<'a, [u8]>>) {
        self.items.push((name.into(), value.into()));
    }

    /// `.SDATA.<id>.<param>`: every parameter of every element, values unescaped.
    pub(super) fn push_sdata(&mut self, sd: StructuredData<'a>) {
        for e in sd.elements() {
            for p in e.params() {
                let mut name = Vec::with_capacity(e.id().len() + 1 + p.name().len());
                name.extend_from_slice(e.id());
                name.push(b'.');
                name.extend_from_slice(p.name());
                self.push(name, p.value());
            }
        }
    }

    /// `.values.<key>` from a syslog-ng `kv-parser` with these separators.
    pub(super) fn push_scanned(&mut self, text: &'a [u8], value_sep: u8, pair_sep: u8) {
        for (k, v) in kvscan::pairs(text, value_sep, pair_sep) {
            self.push(k, v);
        }
    }

    /// A CEF record: `.metadata.cef.<column>` (`ext` excepted) and the extension's
    /// `.values.*` as SC4S's `cef_kv` sets them.
    pub(super) fn push_cef(&mut self, text: &'a [u8]) {
        const COLUMNS: [&str; 7] = [
            "cef.version",
            "cef.device_vendor",
            "cef.device_product",
            "cef.device_version",
            "cef.device_event_class",
            "cef.name",
            "cef.severity",
        ];
        let mut parts = text.splitn(8, |&b| b == b'|');
        for column in COLUMNS {
            // A short header leaves the remaining columns unset.
            let Some(v) = parts.next() else {
                return;
            };
            self.push(column.as_bytes(), v);
        }
        if let Some(ext) = parts.next() {
            for (k, v) in cef_kv(ext) {
                self.push(k, v);
            }
        }
    }

    /// Sorted by name (stable), one value per name: the last one pushed.
    fn sorted(mut self, descending: bool) -> Vec<Pair<'a>> {
        self.items.sort_by(|a, b| a.0.cmp(&b.0));
        let mut items: Vec<Pair<'a>> = Vec::with_capacity(self.items.len());
        for item in self.items {
            match items.last_mut() {
                Some(last) if last.0 == item.0 => *last = item,
                _ => items.push(item),
            }
        }
        if descending {
            items.reverse();
        }
        items
    }

    /// `$(format-json ...)`, written escaped into the event string.
    pub(super) fn write_json(self, out: &mut Vec<u8>) {
        let mut obj = Vec::with_capacity(256);
        // The open containers: (the name prefix they stand for, has a member yet).
        let mut stack: Vec<(Vec<u8>, bool)> = Vec::new();
        let mut top_has_member = false;
        obj.push(b'{');
        for (name, value) in self.sorted(true) {
            // Close the containers this name is not in (a plain prefix test, as syslog-ng's).
            while let Some((prefix, _)) = stack.last() {
                if name.starts_with(prefix) {
                    break;
                }
                stack.pop();
                obj.push(b'}');
            }
            let tokens = tokens(&name);
            let Some((leaf, parents)) = tokens.split_last() else {
                continue;
            };
            for i in stack.len()..parents.len() {
                member_separator(&mut obj, &mut stack, &mut top_has_member);
                json::write_str(&mut obj, parents[i]);
                obj.extend_from_slice(b":{");
                stack.push((parents[..=i].join(&b'.'), false));
            }
            member_separator(&mut obj, &mut stack, &mut top_has_member);
            json::write_str(&mut obj, leaf);
            obj.push(b':');
            json::write_str(&mut obj, &value);
        }
        obj.extend(std::iter::repeat_n(b'}', stack.len() + 1));
        json::escape_into(out, &obj);
    }

    /// `$(format-welf ...)`, written escaped into the event string.
    pub(super) fn write_welf(self, out: &mut Vec<u8>) {
        let mut items = self.sorted(false);
        if let Some(at) = items.iter().position(|(n, _)| n.as_ref() == b"id") {
            let id = items.remove(at);
            items.insert(0, id);
        }
        let mut text = Vec::with_capacity(256);
        for (i, (name, value)) in items.iter().enumerate() {
            if i > 0 {
                text.push(b' ');
            }
            text.extend_from_slice(name);
            text.push(b'=');
            if value.contains(&b' ') {
                text.push(b'"');
                for &b in value.iter() {
                    if b == b'"' {
                        text.push(b'\\');
                    }
                    text.push(b);
                }
                text.push(b'"');
            } else {
                text.extend_from_slice(value);
            }
        }
        json::escape_into(out, &text);
    }
}

/// A `,` before every member of an object but its first.
fn member_separator(obj: &mut Vec<u8>, stack: &mut [(Vec<u8>, bool)], top: &mut bool) {
    let has = match stack.last_mut() {
        Some((_, has)) => has,
        None => top,
    };
    if *has {
        obj.push(b',');
    }
    *has = true;
}

/// A name's levels, split at dots as syslog-ng's value-pairs walker splits them: an `@`
/// takes the digits and dotted digit groups after it into the same level (an SD-ID's
/// enterprise number), and an empty level is no level.
fn tokens(name: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let (mut start, mut end) = (0, 0);
    while end < name.len() {
        match name[end] {
            b'@' => loop {
                end += 1;
                while name.get(end).is_some_and(u8::is_ascii_digit) {
                    end += 1;
                }
                if !(name.get(end) == Some(&b'.')
                    && name.get(end + 1).is_some_and(u8::is_ascii_digit))
                {
                    break;
                }
            },
            b'.' if start != end => {
                out.push(&name[start..end]);
                end += 1;
                start = end;
            }
            _ => {
                end += 1;
                while end < name.len() && !matches!(name[end], b'@' | b'.') {
                    end += 1;
                }
            }
        }
    }
    if start < end.min(name.len()) {
        out.push(&name[start..name.len()]);
    }
    out
}

/// SC4S's `parser_cef.cef_kv`: `key=value` pairs as its regex finds them, `<x>Label` pairs
/// renaming `<x>` (Python's `rstrip("Label")`, which strips any of those letters), `rawEvent`
/// with `\=` and `&&` decoded, keys with `.` and spaces made `_`. In the order of the
/// Python dict it builds.
fn cef_kv(ext: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    static PAIR: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"([^=\s]+)=((?:\\=|[^=])+)(?:\s|$)").expect("static regex"));
    let mut dict: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let set = |dict: &mut Vec<(Vec<u8>, Vec<u8>)>, k: &[u8], v: Vec<u8>| match dict
        .iter_mut()
        .find(|(dk, _)| dk == k)
    {
        Some(slot) => slot.1 = v,
        None => dict.push((k.to_vec(), v)),
    };
    let get = |dict: &[(Vec<u8>, Vec<u8>)], k: &[u8]| {
        dict.iter().find(|(dk, _)| dk == k).map(|(_, v)| v.clone())
    };
    let remove = |dict: &mut Vec<(Vec<u8>, Vec<u8>)>, k: &[u8]| dict.retain(|(dk, _)| dk != k);
    let mut keys: Vec<&[u8]> = Vec::new();
    for c in PAIR.captures_iter(ext) {
        let (Some(k), Some(v)) = (c.get(1), c.get(2)) else {
            continue;
        };
        set(&mut dict, k.as_bytes(), v.as_bytes().to_vec());
        keys.push(k.as_bytes());
    }
    for k in keys {
        if k.ends_with(b"Label") {
            let mut vk = k;
            while let [rest @ .., last] = vk
                && b"Label".contains(last)
            {
                vk = rest;
            }
            if let Some(label) = get(&dict, k) {
                if let Some(v) = get(&dict, vk) {
                    set(&mut dict, &label, v);
                    remove(&mut dict, vk);
                }
                remove(&mut dict, k);
            }
        } else if k == b"rawEvent"
            && let Some(v) = get(&dict, k)
        {
            let mut decoded = Vec::with_capacity(v.len());
            let mut i = 0;
            while i < v.len() {
                if v[i..].starts_with(b"\\=") {
                    decoded.push(b'=');
                    i += 2;
                } else if v[i..].starts_with(b"&&") {
                    decoded.push(b'\n');
                    i += 2;
                } else {
                    decoded.push(v[i]);
                    i += 1;
                }
            }
            set(&mut dict, k, decoded);
        }
    }
    for (k, _) in dict.iter_mut() {
        for b in k.iter_mut() {
            if *b == b' ' || *b == b'.' {
                *b = b'_';
            }
        }
    }
    dict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(pairs: Pairs<'_>) -> String {
        let mut out = Vec::new();
        pairs.write_json(&mut out);
        // The writer escapes into a JSON string; undo that for reading.
        let s: String = serde_json::from_slice(&[b"\"", &out[..], b"\""].concat()).unwrap();
        s
    }

    #[test]
    fn nested_descending() {
        let mut p = Pairs::default();
        p.push(&b"message"[..], &b"hello \"you\""[..]);
        p.push(&b"exampleSDID@32473.iut"[..], &b"3"[..]);
        p.push(&b"origin.ip"[..], &b"10.0.0.1"[..]);
        p.push(&b"origin.software"[..], &b"x"[..]);
        p.push(&b"exampleSDID@32473.eventSource"[..], &b"App"[..]);
        p.push(&b"message"[..], &b"second"[..]);
        let s = json_of(p);
        assert_eq!(
            s,
            r#"{"origin":{"software":"x","ip":"10.0.0.1"},"message":"second","exampleSDID@32473":{"iut":"3","eventSource":"App"}}"#
        );
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["origin"]["ip"], "10.0.0.1");
        assert_eq!(json_of(Pairs::default()), "{}");
    }

    #[test]
    fn level_tokens() {
        let t = |s: &str| {
            tokens(s.as_bytes())
                .into_iter()
                .map(|t| String::from_utf8_lossy(t).into_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(t("a.b.c"), ["a", "b", "c"]);
        assert_eq!(t("id@1.2.3.name"), ["id@1.2.3", "name"]);
        assert_eq!(t("id@12.x"), ["id@12", "x"]);
        // A leading dot stays on its level, as in syslog-ng's walker (shifted names never
        // start with one).
        assert_eq!(t(".a..b."), [".a", ".b"]);
        assert_eq!(t("@"), ["@"]);
        assert_eq!(t(""), Vec::<String>::new());
    }

    #[test]
    fn welf_ascending_with_id_first() {
        let mut p = Pairs::default();
        p.push(&b"b"[..], &b"two words"[..]);
        p.push(&b"id"[..], &b"7"[..]);
        p.push(&b"a"[..], &b"say \"x\""[..]);
        let mut out = Vec::new();
        p.write_welf(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"id=7 a=\"say \\\"x\\\"\" b=\"two words\""#
        );
    }

    #[test]
    fn cef_like_sc4s() {
        let got = cef_kv(
            b"src=1.1.1.1 cs1Label=Vectra Event URL cs1=https://x/y start= rawEvent=a\\=b&&c flex.Number1=5 cs2=orphan",
        );
        let got: Vec<(String, String)> = got
            .into_iter()
            .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        let want: Vec<(String, String)> = [
            ("src", "1.1.1.1"),
            ("rawEvent", "a=b\nc"),
            ("flex_Number1", "5"),
            ("cs2", "orphan"),
            ("Vectra_Event_URL", "https://x/y"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        // `start=` has no value for the regex: it is not a pair.
        assert_eq!(got, want);
    }

    #[test]
    fn short_cef_header() {
        // A lenient (SC4S_DISABLE_DROP_INVALID_CEF) record: the columns it has, no extension.
        let mut p = Pairs::default();
        p.push_cef(b"CEF:0|XYPRO|NONSTOP");
        assert_eq!(
            json_of(p),
            r#"{"cef":{"version":"CEF:0","device_vendor":"XYPRO","device_product":"NONSTOP"}}"#
        );
    }

    #[test]
    fn cef_record() {
        let mut p = Pairs::default();
        p.push_cef(b"CEF:0|XYPRO|NONSTOP|1.0|SAFEGUARD|Logon|5|suser=ops act=logon");
        let s = json_of(p);
        assert_eq!(
            s,
            r#"{"suser":"ops","cef":{"version":"CEF:0","severity":"5","name":"Logon","device_version":"1.0","device_vendor":"XYPRO","device_product":"NONSTOP","device_event_class":"SAFEGUARD"},"act":"logon"}"#
        );
    }
}
