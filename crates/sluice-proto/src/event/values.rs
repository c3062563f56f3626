//! The `t_json_values`, `t_kv_values` and `t_json_values_msg` event texts: a vendor's parsed
//! values re-rendered.

use super::nested::Pairs;
use super::view::View;
use crate::classify::{Values, ValuesSyntax, kv};
use crate::json;
use crate::message::Message;

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
    let ValuesSyntax::Kv { pair } = v.syntax else {
        json::escape_into(out, v.text);
        return;
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
