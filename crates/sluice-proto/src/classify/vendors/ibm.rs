//! IBM DataPower (SC4S `addons/ibm/app-netsource-ibm_datapower.conf`,
//! `app-syslog-ibm_datapower.conf`): a `ibm_datapower` listener or source entry, or a
//! MESSAGE starting `[domain][0xcode][category][level] `. The category (the second bracket
//! of the first `[..][..][..]` followed by a space) names the sourcetype and class.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "ibm",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-ibm_datapower",
            topic: Topic::NetSource,
            order: "ibm/app-netsource-ibm_datapower.conf",
            when: When::NetSource(&["ibm_datapower"]),
            parse: netsource,
        },
        App {
            name: "app-syslog-ibm_datapower",
            topic: Topic::Syslog,
            order: "ibm/app-syslog-ibm_datapower.conf",
            when: When::BodyPrefix(&["["]),
            parse: syslog,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("ibm", "datapower", "ibm:datapower:syslog", "infraops").template(Template::MsgOnly),
];

fn netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified || !(ns.names("ibm_datapower", "ibm", "datapower")) {
        return false;
    }
    datapower(input.body, out);
    true
}

fn syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !is_datapower_header(input.body) {
        return false;
    }
    datapower(input.body, out);
    true
}

/// The parser both applications share: the key, then the category's sourcetype and class
/// when the message has one.
fn datapower<'m>(body: &'m [u8], out: &mut Out<'m>) {
    out.key(&KEYS[0]);
    if let Some(cat) = category(body) {
        out.sourcetype = Some(Value::Concat("ibm:datapower:", cat));
        // `class("${.tmp.category}")`: SC4S sets no class from an empty value.
        if !cat.is_empty() {
            out.class = Some(Value::Bytes(cat));
        }
    }
}

/// `\[[^\]]*\]\[(?<category>[^\]]*)\]\[[^\]]*\]\s`, unanchored (bytes, ASCII `\s`).
fn category(body: &[u8]) -> Option<&[u8]> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?-u)\[[^\]]*\]\[([^\]]*)\]\[[^\]]*\]\s").expect("static regex")
    });
    memchr::memchr(b'[', body)?;
    RE.captures(body)
        .and_then(|c| c.get(1))
        .map(|m| m.as_bytes())
}

/// `^\[\w+\]\[0x[0-9abcdef]+\]\[\w+\]\[\w+\] ` (ASCII `\w`, lowercase hex only).
fn is_datapower_header(m: &[u8]) -> bool {
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let mut at = 0;
    // One bracketed run of bytes that `ok` accepts, at least one long, after `lead`.
    let mut group = |lead: &[u8], ok: &dyn Fn(&u8) -> bool| -> bool {
        if !m[at..].starts_with(b"[") || !m[at + 1..].starts_with(lead) {
            return false;
        }
        let from = at + 1 + lead.len();
        let n = m[from..].iter().take_while(|b| ok(b)).count();
        if n == 0 || m.get(from + n) != Some(&b']') {
            return false;
        }
        at = from + n + 1;
        true
    };
    group(b"", &word)
        && group(b"0x", &|b: &u8| {
            b.is_ascii_digit() || (b'a'..=b'f').contains(b)
        })
        && group(b"", &word)
        && group(b"", &word)
        && m.get(at) == Some(&b' ')
}

#[cfg(test)]
mod tests {
    use super::{category, is_datapower_header};
    use crate::classify::Template;
    use crate::classify::testutil::{classifier_with_listeners, classify_line, classify_line_on};
    use proptest::prelude::*;

    /// SC4S's `test_ibm_datapower.py::test_ibm_datapower`.
    #[test]
    fn datapower() {
        let line = "<166>May 21 08:10:58 dpgw-prod-01 [APIGWTEBN][0x88c00002][apigw][error] source-https(APIGWTEBN_https_443): trans(3168147)[11.11.11.16]: The request URL 'https://11.11.11.11/' is not routed to any API collection.";
        let c = classify_line(line);
        assert_eq!(c.sourcetype, "ibm:datapower:apigw");
        assert_eq!(c.class.unwrap(), "apigw");
        assert_eq!(c.index, "infraops");
        assert_eq!(c.vendor, "ibm");
        assert_eq!(c.product, "datapower");
        assert_eq!(c.template, Template::MsgOnly);
        assert_eq!(c.app, "app-syslog-ibm_datapower");
        // Upper-case hex is not SC4S's header: not DataPower unless the listener says so.
        let upper = "<166>May 21 08:10:58 dp [A][0x88C0][apigw][error] text";
        assert_ne!(classify_line(upper).vendor, "ibm");
        let cx = classifier_with_listeners(&["IBM_DATAPOWER"]);
        let c = classify_line_on(cx, "IBM_DATAPOWER", upper);
        assert_eq!(c.sourcetype, "ibm:datapower:apigw");
        assert_eq!(c.app, "app-netsource-ibm_datapower");
        // On the listener without a category: the base sourcetype.
        let c = classify_line_on(
            cx,
            "IBM_DATAPOWER",
            "<166>May 21 08:10:58 dp dpd: no brackets",
        );
        assert_eq!(c.sourcetype, "ibm:datapower:syslog");
        assert!(c.class.is_none());
    }

    #[test]
    fn header_and_category() {
        assert!(is_datapower_header(b"[a][0x0f][b_1][c] x"));
        assert!(!is_datapower_header(b"[a][0x0f][b_1][c]x"));
        assert!(!is_datapower_header(b"[a][0x][b][c] "));
        assert!(!is_datapower_header(b"[][0x1][b][c] "));
        assert!(!is_datapower_header(b"[a][0x1][b][c]"));
        assert_eq!(category(b"[a][0x1][cat][e] x"), Some(&b"cat"[..]));
        assert_eq!(category(b"[x][][y] z"), Some(&b""[..]));
        assert_eq!(category(b"[x][y][z]"), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn header_agrees_with_the_regex(parts in proptest::collection::vec(prop_oneof![
            Just("["), Just("]"), Just("0x"), Just("a"), Just("F"), Just("9"), Just("_"), Just(" "),
            Just("é"), Just("-"),
        ], 0..16)) {
            let m: String = parts.concat();
            let re = regex::bytes::Regex::new(r"(?-u)^\[[0-9A-Za-z_]+\]\[0x[0-9abcdef]+\]\[[0-9A-Za-z_]+\]\[[0-9A-Za-z_]+\] ").unwrap();
            prop_assert_eq!(is_datapower_header(m.as_bytes()), re.is_match(m.as_bytes()), "{:?}", m);
        }
    }
}
