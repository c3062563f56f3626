//! McAfee / Trellix syslog forms (SC4S `addons/mcafee/`): ePO (`EPOEvents`), Network
//! Security Platform (the `Syslog*Forwarder` programs) and Web Gateway (`mwg`). The CEF
//! forms (Trellix MPS/CMS) are CEF sub-topic applications, not here.

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::{INLINE_CAP, Inline, Value};

pub static VENDOR: Vendor = Vendor {
    name: "mcafee",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-mcafee_epo",
            topic: Topic::Pgm,
            order: "mcafee/app-syslog-mcafee_epo.conf",
            when: When::ProgramPrefix(&["EPOEvents"]),
            parse: epo,
        },
        App {
            name: "app-syslog-mcafee_nsp",
            topic: Topic::Pgm,
            order: "mcafee/app-syslog-mcafee_nsp.conf",
            when: When::ProgramPrefix(NSP_PROGRAMS),
            parse: nsp,
        },
        App {
            name: "app-syslog-mcafee_wg",
            topic: Topic::Pgm,
            order: "mcafee/app-syslog-mcafee_wg.conf",
            when: When::ProgramPrefix(&["mwg"]),
            parse: wg,
        },
    ],
};

static NSP_PROGRAMS: &[&str] = &[
    "SyslogACLLogForwarder",
    "SyslogAlertForwarder",
    "SyslogAuditLogForwarder",
    "SyslogFaultForwarder",
];

static KEYS: &[Key] = &[
    Key::new("mcafee", "epo", "mcafee:epo:syslog", "epav").source("epo"),
    Key::new("mcafee", "nsp", "mcafee:nsp", "netids").template(Template::MsgOnly),
    Key::new("mcafee", "wg", "mcafee:wg:kv", "netproxy").source("mcafee:wg"),
];

/// `head` + the product name lowercased with every whitespace byte made `_` (SC4S's
/// `$(lowercase)` + `subst('\s', '_')`); `None` when it does not fit inline.
fn product_source(head: &[u8], name: &[u8]) -> Option<Value<'static, 'static>> {
    let mut buf = [0u8; INLINE_CAP];
    let low = buf.get_mut(..name.len())?;
    for (d, s) in low.iter_mut().zip(name) {
        *d = if s.is_ascii_whitespace() {
            b'_'
        } else {
            s.to_ascii_lowercase()
        };
    }
    Inline::concat(&[head, low]).map(Value::Inline)
}

/// SC4S's `ProductName="([^"]+)"`, which [`product_name`] stands for.
static PRODUCT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"ProductName="([^"]+)""#).expect("static regex"));

/// [`PRODUCT`]'s group by hand: the first `ProductName="..."` with a non-empty value. A
/// value that is not UTF-8 (which `[^"]` does not match) is left to the regex.
fn product_name(body: &[u8]) -> Option<&[u8]> {
    static OPEN: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"ProductName=\""));
    for at in OPEN.find_iter(body) {
        let from = at + OPEN.needle().len();
        let len = memchr::memchr(b'"', &body[from..])?;
        let value = &body[from..from + len];
        if !value.is_ascii() && std::str::from_utf8(value).is_err() {
            return PRODUCT
                .caps(body)
                .and_then(|c| c.get(1))
                .map(|g| g.as_bytes());
        }
        if len > 0 {
            return Some(value);
        }
    }
    None
}

fn epo<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"EPOEvents")) {
        return false;
    }
    out.key(&KEYS[0]);
    if let Some(name) = product_name(input.body)
        && let Some(v) = product_source(b"", name)
    {
        out.source = Some(v);
    }
    true
}

fn nsp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| NSP_PROGRAMS.iter().any(|n| p.starts_with(n.as_bytes())))
    {
        return false;
    }
    out.key(&KEYS[1]);
    true
}

fn wg<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"mwg")) {
        return false;
    }
    out.key(&KEYS[2]);
    if let Some(name) = kv::get(input.body, b' ', b"ProductName")
        && !name.is_empty()
        && let Some(v) = product_source(b"mcafee:wg:", name)
    {
        out.source = Some(v);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{PRODUCT, product_name};
    use crate::classify::caps::CapturesExt;
    use crate::classify::testutil::classify_line;

    #[test]
    fn product_name_is_the_regex() {
        for body in [
            &br#"<a ProductName="VirusScan Enterprise"/>"#[..],
            br#"ProductName="" ProductName="B""#,
            br#"ProductName="A"#,
            br#"xProductName="q"ProductName="r""#,
            br#"ProductName="a
b""#,
            "ProductName=\"caf\u{e9}\"".as_bytes(),
            b"ProductName=\"a\xffb\" ProductName=\"c\"",
            b"ProductName=\"\xff\"",
            b"none",
        ] {
            let want = PRODUCT
                .caps(body)
                .and_then(|c| c.get(1))
                .map(|g| g.as_bytes());
            assert_eq!(
                product_name(body),
                want,
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn epo_nsp_wg() {
        let c = classify_line(
            "<29>1 2024-04-05T03:41:31.423Z e EPOEvents - EventFwd - <x ProductName=\"VirusScan Enterprise\"/>",
        );
        assert_eq!(c.sourcetype, "mcafee:epo:syslog");
        assert_eq!(c.source, "virusscan_enterprise");
        let c = classify_line("<29>1 2024-04-05T03:41:31.423Z e EPOEvents - EventFwd - <x/>");
        assert_eq!(c.source, "epo");
        let c = classify_line("<36> Apr 05 10:12:13 n SyslogFaultForwarder: Fault : dvc=\"M\"");
        assert_eq!(c.sourcetype, "mcafee:nsp");
        assert_eq!(c.index, "netids");
        let c = classify_line("<30>Apr 05 14:32:41 m mwg: status=\"403/80\" srcip=\"1.2.3.4\"");
        assert_eq!(c.sourcetype, "mcafee:wg:kv");
        assert_eq!(c.source, "mcafee:wg");
    }
}
