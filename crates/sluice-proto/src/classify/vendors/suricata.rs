//! Suricata (SC4S `addons/suricata/app-syslog-suricata.conf`): PROGRAM `suricata` with an
//! EVE JSON body; the sourcetype carries the `event_type` and the time is the JSON's
//! `timestamp`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "suricata",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-suricata",
        topic: Topic::Pgm,
        order: "suricata/app-syslog-suricata.conf",
        when: When::Program(&["suricata"]),
        parse: suricata,
    }],
};

static KEYS: &[Key] =
    &[Key::new("suricata", "suricata", "suricata", "netids").template(Template::JsonValues)];

/// The string value of a top-level-looking `"name": "value"` member (without escapes:
/// EVE's `event_type` and `timestamp` never carry any); `None` when absent or escaped.
fn json_str<'a>(text: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    // One searcher for all the occurrences (each `memmem::find` builds its own).
    for at in memchr::memmem::find_iter(text, name) {
        let from = at + name.len();
        if at == 0 || text[at - 1] != b'"' || text.get(from) != Some(&b'"') {
            continue;
        }
        let rest = text[from + 1..].trim_ascii_start();
        let Some(rest) = rest.strip_prefix(b":") else {
            continue;
        };
        let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
        let end = memchr::memchr2(b'"', b'\\', rest)?;
        return (rest[end] == b'"').then(|| &rest[..end]);
    }
    None
}

fn suricata<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"suricata") {
        return false;
    }
    out.key(&KEYS[0]);
    let body = input.body;
    out.values = Some(Values {
        text: body,
        syntax: ValuesSyntax::Json,
    });
    // SC4S_SURICATA_SIMPLE_SOURCETYPE=yes keeps `suricata` for every event type.
    if !input.options.suricata_simple_sourcetype
        && let Some(t) = json_str(body, b"event_type").filter(|t| !t.is_empty())
    {
        out.sourcetype_inline(&[b"suricata:", t]);
    }
    if let Some(ts) = json_str(body, b"timestamp")
        .and_then(|t| vtime::strptime("%Y-%m-%dT%H:%M:%S.%f%z", t, input.zone, input.now_unix_secs))
    {
        out.time(ts);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn eve_alert() {
        let c = classify_line(
            r#"<14>Apr 08 13:05:17 ids suricata[1]: {"timestamp":"2024-04-08T13:05:17.123456+0000","event_type":"alert","src_ip":"1.2.3.4"}"#,
        );
        assert_eq!(c.sourcetype, "suricata:alert");
        assert_eq!(c.index, "netids");
        match c.time {
            crate::classify::registry::TimeEdit::Stamp(ts) => {
                assert_eq!(ts.unix_micros(), 1_712_581_517_123_456)
            }
            other => panic!("time not set: {other:?}"),
        }
        let c = classify_line("<14>Apr 08 13:05:17 ids suricata[1]: not json");
        assert_eq!(c.sourcetype, "suricata");
    }
}
