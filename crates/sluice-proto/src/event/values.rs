//! The `t_json_values` and `t_kv_values` event texts: a vendor's parsed values re-rendered.

use super::format_json::Pairs;
use crate::classify::vendors::beyondtrust as sra;
use crate::classify::{Values, ValuesSyntax, kv, xml};
use crate::json;
use crate::message::StructuredData;

/// `t_json_values`: the parsed values as one JSON object, escaped into the event string.
pub(super) fn write_values_json(
    out: &mut Vec<u8>,
    values: Option<Values<'_>>,
    sdata: Option<StructuredData<'_>>,
) {
    let Some(v) = values else {
        out.extend_from_slice(b"{}");
        return;
    };
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
        ValuesSyntax::Xml => {
            let mut pairs = Pairs::default();
            // Pairs pushed before a malformed part stay (SC4S's `drop-invalid(no)`).
            let (pushed, _) = xml::scan(v.text);
            for (k, val) in pushed {
                pairs.append(k, val);
            }
            add_sdata(&mut pairs, sdata);
            let mut obj = Vec::with_capacity(v.text.len());
            pairs.write(&mut obj);
            json::escape_into(out, &obj);
        }
        ValuesSyntax::Sra => {
            let mut pairs = Pairs::default();
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
            add_sdata(&mut pairs, sdata);
            let mut obj = Vec::with_capacity(v.text.len() + 64);
            pairs.write(&mut obj);
            json::escape_into(out, &obj);
        }
    }
}

/// `.SDATA.<id>.<param>`, shifted as `t_json_values` shifts it: `<id>.<param>` (a repeated
/// parameter keeps its last value, as syslog-ng stores it).
fn add_sdata(pairs: &mut Pairs, sdata: Option<StructuredData<'_>>) {
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
pub(super) fn write_values_welf(out: &mut Vec<u8>, values: Option<Values<'_>>) {
    let Some(v) = values else {
        return;
    };
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
