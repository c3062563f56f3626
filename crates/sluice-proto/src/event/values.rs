//! The `t_json_values`, `t_kv_values` and `t_json_values_msg` event texts: a vendor's parsed
//! values re-rendered.

use super::format_json::Pairs as JsonPairs;
use super::nested::Pairs;
use super::view::View;
use crate::classify::vendors::beyondtrust as sra;
use crate::classify::{Values, ValuesSyntax, kv, xml};
use crate::json;
use crate::message::{Message, StructuredData};

/// The pairs SC4S's `format-json` / `format-welf` select for the syntaxes sluice renders
/// the syslog-ng way (`.SDATA.*` and the vendor's `.values.*` / `.metadata.*`); `None`
/// for the older syntaxes, rendered from their text alone.
fn selected<'a>(values: Option<Values<'a>>, msg: &Message<'a>) -> Option<Pairs<'a>> {
    let mut pairs = Pairs::default();
    match values.map(|v| (v.syntax, v.text)) {
        Some((ValuesSyntax::Scanner { value, pair }, text)) => {
            pairs.push_scanned(text, value, pair);
        }
        Some((ValuesSyntax::Cef, text)) => pairs.push_cef(text),
        None => {}
        Some(_) => return None,
    }
    if let Some(sd) = msg.structured_data {
        pairs.push_sdata(sd);
    }
    Some(pairs)
}

/// `t_json_values_msg`: the values of [`write_values_json`] and `message` (MESSAGE as the
/// template sees it).
pub(super) fn write_values_json_msg<'a>(
    out: &mut Vec<u8>,
    values: Option<Values<'a>>,
    msg: &Message<'a>,
    view: &View<'_>,
) {
    // loggen's messages (the common case): no values, no structured data; written in place.
    if values.is_none() && msg.structured_data.is_none() {
        out.extend_from_slice(br#"{\"message\":\""#);
        view.message.write_twice(out);
        out.extend_from_slice(br#"\"}"#);
        return;
    }
    // The older syntaxes carry no structured data of their own: only SDATA is added.
    let mut pairs =
        selected(values, msg).unwrap_or_else(|| selected(None, msg).unwrap_or_default());
    let mut text = Vec::new();
    view.message.push_raw(&mut text);
    pairs.push(&b"message"[..], text);
    pairs.write_json(out);
}

/// `t_json_values`: the parsed values as one JSON object, escaped into the event string.
pub(super) fn write_values_json<'a>(
    out: &mut Vec<u8>,
    values: Option<Values<'a>>,
    msg: &Message<'a>,
) {
    let Some(v) = values else {
        out.extend_from_slice(b"{}");
        return;
    };
    if let Some(pairs) = selected(values, msg) {
        pairs.write_json(out);
        return;
    }
    match v.syntax {
        ValuesSyntax::Json => {
            // Insignificant whitespace dropped, the rest copied.
            let mut compact = Vec::with_capacity(v.text.len());
            let mut in_str = false;
            let mut escaped = false;
            for &b in v.text {
                if in_str {
                    compact.push(b);
                    match (escaped, b) {
                        (true, _) => escaped = false,
                        (false, b'\\') => escaped = true,
                        (false, b'"') => in_str = false,
                        _ => {}
                    }
                } else if !b.is_ascii_whitespace() {
                    if b == b'"' {
                        in_str = true;
                    }
                    compact.push(b);
                }
            }
            json::escape_into(out, &compact);
        }
        ValuesSyntax::StealthbitsAlerts => {
            let mut obj = Vec::with_capacity(v.text.len() + 32);
            write_alerts(&mut obj, v.text);
            json::escape_into(out, &obj);
        }
        ValuesSyntax::Kv { pair } => {
            let mut obj = Vec::with_capacity(v.text.len() + 16);
            obj.push(b'{');
            let mut value = Vec::new();
            for (i, p) in kv::pairs(v.text, pair).enumerate() {
                if i > 0 {
                    obj.push(b',');
                }
                json::write_str(&mut obj, p.key);
                obj.push(b':');
                value.clear();
                if p.quoted {
                    kv::unquote_into(p.value, &mut value);
                } else {
                    value.extend_from_slice(p.value);
                }
                json::write_str(&mut obj, &value);
            }
            obj.push(b'}');
            json::escape_into(out, &obj);
        }
        ValuesSyntax::Scanner { .. } | ValuesSyntax::Cef => {}
        ValuesSyntax::Xml => {
            let mut pairs = JsonPairs::default();
            // Pairs pushed before a malformed part stay (SC4S's `drop-invalid(no)`).
            let (pushed, _) = xml::scan(v.text);
            for (k, val) in pushed {
                pairs.append(k, val);
            }
            add_sdata(&mut pairs, msg.structured_data);
            let mut obj = Vec::with_capacity(v.text.len());
            pairs.write(&mut obj);
            json::escape_into(out, &obj);
        }
        ValuesSyntax::Sra => {
            let mut pairs = JsonPairs::default();
            if let Some(p) = sra::parts(v.text) {
                for (key, value, quoted) in kv::syslog_ng_pairs(p.message, b';') {
                    let mut text = Vec::with_capacity(value.len());
                    if quoted {
                        kv::unquote_into(value, &mut text);
                    } else {
                        text.extend_from_slice(value);
                    }
                    pairs.set(key.to_vec(), text);
                }
                pairs.set(b"siteid".to_vec(), p.siteid.to_vec());
                pairs.set(b"seq".to_vec(), p.seq.to_vec());
                // `set(int("${.tmp.num}") ...)`: a typed integer (a count too large for
                // one stays text).
                match std::str::from_utf8(p.parts)
                    .ok()
                    .and_then(|n| n.parse::<i64>().ok())
                {
                    Some(n) => pairs.set_number(b"sc4s.countOfParts".to_vec(), n),
                    None => pairs.set(b"sc4s.countOfParts".to_vec(), p.parts.to_vec()),
                }
            }
            add_sdata(&mut pairs, msg.structured_data);
            let mut obj = Vec::with_capacity(v.text.len() + 64);
            pairs.write(&mut obj);
            json::escape_into(out, &obj);
        }
    }
}

/// `.SDATA.<id>.<param>`, shifted as `t_json_values` shifts it: `<id>.<param>` (a repeated
/// parameter keeps its last value, as syslog-ng stores it).
fn add_sdata(pairs: &mut JsonPairs, sdata: Option<StructuredData<'_>>) {
    for e in sdata.iter().flat_map(|sd| sd.elements()) {
        for p in e.params() {
            let mut name = e.id().to_vec();
            name.push(b'.');
            name.extend_from_slice(p.name());
            pairs.set(name, p.value().into_owned());
        }
    }
}

/// `t_kv_values`: the parsed values as WELF `key=value` pairs (values with a space quoted).
pub(super) fn write_values_welf<'a>(
    out: &mut Vec<u8>,
    values: Option<Values<'a>>,
    msg: &Message<'a>,
) {
    let Some(v) = values else {
        return;
    };
    if let Some(pairs) = selected(values, msg) {
        pairs.write_welf(out);
        return;
    }
    let pair = match v.syntax {
        ValuesSyntax::Kv { pair } => pair,
        ValuesSyntax::StealthbitsAlerts => b' ',
        // Documents and headed pairs have no WELF form of their own: their text as sent.
        ValuesSyntax::Json
        | ValuesSyntax::Scanner { .. }
        | ValuesSyntax::Cef
        | ValuesSyntax::Xml
        | ValuesSyntax::Sra => {
            json::escape_into(out, v.text);
            return;
        }
    };
    let mut value = Vec::new();
    for (i, p) in kv::pairs(v.text, pair).enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        json::escape_into(out, p.key);
        out.push(b'=');
        value.clear();
        if p.quoted {
            kv::unquote_into(p.value, &mut value);
        } else {
            value.extend_from_slice(p.value);
        }
        if value.contains(&b' ') {
            out.extend_from_slice(b"\\\"");
            json::escape_into(out, &value);
            out.extend_from_slice(b"\\\"");
        } else {
            json::escape_into(out, &value);
        }
    }
}

/// The alert's values as SC4S renders them: the space-separated pairs of the message, with
/// `AlertText` (everything after ` AlertText=`) split by `parser_stealthbits.py` into its
/// leading sentence (`AlertText`, left out when empty) and the `Key: value; ...` details
/// (`AlertTextValues`, keys with spaces and dots made `_`). When the details do not split
/// into exactly one `: ` per `; `-part, the Python parser fails and SC4S keeps the plain
/// pairs, as here.
fn write_alerts(obj: &mut Vec<u8>, text: &[u8]) {
    const MARK: &[u8] = b" AlertText=";
    let alert = memchr::memmem::rfind(text, MARK).map(|i| &text[i + MARK.len()..]);
    let split = alert.and_then(split_alert_text);
    obj.push(b'{');
    let mut value = Vec::new();
    let mut first = true;
    for p in kv::pairs(text, b' ') {
        let shown: &[u8] = match (&split, p.key) {
            (Some((head, _)), b"AlertText") => {
                if head.is_empty() {
                    continue;
                }
                head
            }
            _ => {
                value.clear();
                if p.quoted {
                    kv::unquote_into(p.value, &mut value);
                } else {
                    value.extend_from_slice(p.value);
                }
                &value
            }
        };
        if !first {
            obj.push(b',');
        }
        first = false;
        json::write_str(obj, p.key);
        obj.push(b':');
        json::write_str(obj, shown);
    }
    if let Some((_, details)) = split {
        if !first {
            obj.push(b',');
        }
        obj.extend_from_slice(b"\"AlertTextValues\":{");
        let mut key = Vec::new();
        for (i, (k, v)) in split_parts(details).into_iter().enumerate() {
            if i > 0 {
                obj.push(b',');
            }
            key.clear();
            key.extend(
                k.iter()
                    .map(|&b| if b == b' ' || b == b'.' { b'_' } else { b }),
            );
            json::write_str(obj, &key);
            obj.push(b':');
            json::write_str(obj, v.trim_ascii());
        }
        obj.push(b'}');
    }
    obj.push(b'}');
}

/// `^(.*[.!?])?(.*:.*)` on the alert text (no line breaks): the longest head ending in `.`,
/// `!` or `?` that leaves a `:` after it, and the rest; `None` when the rest does not split
/// into `Key: value` parts (the Python parser's exception).
fn split_alert_text(t: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = &t[..memchr::memchr(b'\n', t).unwrap_or(t.len())];
    let colon = memchr::memrchr(b':', line)?;
    let head_end = line[..colon]
        .iter()
        .rposition(|b| matches!(b, b'.' | b'!' | b'?'))
        .map_or(0, |i| i + 1);
    let (head, details) = (&line[..head_end], &line[head_end..]);
    let parts = split_parts(details);
    (!parts.is_empty() && parts.len() == details_count(details)).then_some((head, details))
}

/// The `Key: value` parts of `details` split at `; ` (empty when one does not hold exactly
/// one `: `).
fn split_parts(details: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    for part in split_str(details, b"; ") {
        let mut halves = split_str(part, b": ");
        let (Some(k), Some(v), None) = (halves.next(), halves.next(), halves.next()) else {
            return Vec::new();
        };
        out.push((k, v));
    }
    out
}

fn details_count(details: &[u8]) -> usize {
    split_str(details, b"; ").count()
}

/// Python's `str.split(sep)`.
fn split_str<'a>(s: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match memchr::memmem::find(r, sep) {
            Some(i) => {
                rest = Some(&r[i + sep.len()..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::write_alerts;

    fn alerts(text: &str) -> serde_json::Value {
        let mut obj = Vec::new();
        write_alerts(&mut obj, text.as_bytes());
        serde_json::from_slice(&obj).expect("JSON")
    }

    #[test]
    fn stealthbits_alert_text_details() {
        let v = alerts(
            "NumberOfLogins=15801 AttackingHost= AttackedHostIp= AlertText=Activity still in process.Account Sid: S-1-5-21-1; Account Name: TST\\xxx; Attack started: 3/11/2022 12:47:00 PM; Attacking hosts:  (UNKNOWN) 10.20.2.50 (6324), DC3.XXX.CORP (2)",
        );
        assert_eq!(v["NumberOfLogins"], "15801");
        assert_eq!(v["AttackingHost"], "");
        assert_eq!(v["AlertText"], "Activity still in process.");
        let d = &v["AlertTextValues"];
        assert_eq!(d["Account_Sid"], "S-1-5-21-1");
        assert_eq!(d["Account_Name"], "TST\\xxx");
        assert_eq!(d["Attack_started"], "3/11/2022 12:47:00 PM");
        assert_eq!(
            d["Attacking_hosts"],
            "(UNKNOWN) 10.20.2.50 (6324), DC3.XXX.CORP (2)"
        );
        // No sentence before the details: AlertText is left out.
        let v = alerts("AttackedHostIp=1.2.3.4 AlertText=Host: h1; User: u1");
        assert!(v.get("AlertText").is_none());
        assert_eq!(v["AlertTextValues"]["Host"], "h1");
        // Details that do not split: the plain pairs (SC4S's parser fails).
        let v = alerts("AttackedHostIp=1.2.3.4 AlertText=Something happened.");
        assert_eq!(v["AlertText"], "Something");
        assert!(v.get("AlertTextValues").is_none());
        let v = alerts("AttackedHostIp= AlertText=A: b: c; d: e");
        assert!(v.get("AlertTextValues").is_none());
    }
}
