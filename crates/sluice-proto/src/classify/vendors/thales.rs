//! Thales (SC4S `addons/thales/`): SafeNet Trusted Access by network source (its RFC 5424
//! line arrives wrapped in another header; SC4S takes HOST, MSGID, the time and the message
//! from the inner one) and Vormetric (`[...@21513` structured data).

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "thales",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-thales_sta",
            topic: Topic::NetSource,
            order: "thales/app-netsource-thales_sta.conf",
            when: When::NetSource(&["thales_sta"]),
            parse: sta,
        },
        App {
            name: "app-syslog-thales_vormetric",
            topic: Topic::Sdata,
            order: "thales/app-syslog-vormetric.conf",
            when: When::Token(&["@21513"]),
            parse: vormetric,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("thales", "sta", "thales:sta:json", "netauth")
        .source("thales:sta")
        .template(Template::MsgOnly),
    Key::new("thales", "vormetric", "thales:vormetric", "netauth")
        .template(Template::Rfc5424Compact),
];

fn sta<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static INNER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?s)^<\d+>1 +(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{1,9}(?:Z|[+\-]\d{2}:\d{2})) +(\S+) +- +- +(\S+) +(.*)",
        )
        .expect("static regex")
    });
    let ns = input.netsource;
    if out.identified || !(ns.names("thales_sta", "thales", "sta")) {
        return false;
    }
    let Some(c) = INNER.caps(input.body) else {
        return false;
    };
    let (Some(ts), Some(host), Some(msgid), Some(text)) = (c.get(1), c.get(2), c.get(3), c.get(4))
    else {
        return false;
    };
    out.key(&KEYS[0]);
    if let Some(t) = vtime::parse_iso(ts.as_bytes(), input.zone) {
        out.time(t);
    }
    out.host(host.as_bytes());
    out.field("sta_source_name", Value::Bytes(msgid.as_bytes()));
    out.program = Some(None);
    out.pid = Some(None);
    let text = text.as_bytes();
    out.message(text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text));
    true
}

fn vormetric<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static SIG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\[\S+@21513").expect("static regex"));
    let sd = input
        .msg
        .structured_data
        .as_ref()
        .map(|s| s.raw())
        .unwrap_or_default();
    if !SIG.is_match(sd) {
        return false;
    }
    out.key(&KEYS[1]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn vormetric() {
        let c = classify_line(
            "<30>1 2024-04-13T22:14:09.959Z h vee-FS 0 CGP2603I [CGP@21513 sev=\"INFO\"] x",
        );
        assert_eq!(c.sourcetype, "thales:vormetric");
        assert_eq!(c.index, "netauth");
    }
}
