//! Kaspersky Endpoint Security / Security Center (SC4S `addons/kaspersky/`): RFC 5424 with an
//! `@23668` SD element (`app-syslog-kaspersky_syslog.conf`), and the CEF and LEEF outputs of
//! Security Center (`app-cef-kaspersky_es.conf`, `app-leef-kaspersky_es.conf`), whose
//! sourcetype follows the event class / EventID prefix (`KLPRCI_` → `kaspersky:klprci`).
//!
//! Not done: SC4S also turns the literal `\r\n` of the 5424 text into line breaks; sluice
//! keeps the text as received (no per-message allocation).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vendors::{cef, leef};

pub static VENDOR: Vendor = Vendor {
    name: "kaspersky",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-kaspersky_syslog",
            topic: Topic::Sdata,
            order: "kaspersky/app-syslog-kaspersky_syslog.conf",
            when: When::Token(&["@23668"]),
            parse: syslog,
        },
        App {
            name: "app-cef-kaspersky_es",
            topic: Topic::Sub("cef"),
            order: "kaspersky/app-cef-kaspersky_es.conf",
            when: When::Check(es_cef_check),
            parse: es_cef,
        },
        App {
            name: "app-leef-kaspersky_es",
            topic: Topic::Sub("leef"),
            order: "kaspersky/app-leef-kaspersky_es.conf",
            when: When::Check(es_leef_check),
            parse: es_leef,
        },
    ],
};

const SYSLOG: usize = 0;
const ES: usize = 1;
const CEF: usize = 2;
const LEEF: usize = 3;
/// `KLAUD_` ... `KLBL_`, in SC4S's order; the first six keys after [`LEEF`].
const BY_PREFIX: [(&[u8], usize); 6] = [
    (b"KLAUD_", 4),
    (b"KLSRV_", 5),
    (b"GNRL_", 6),
    (b"KLNAG_", 7),
    (b"KLPRCI_", 8),
    (b"KLBL_", 9),
];

static KEYS: &[Key] = &[
    Key::new("kaspersky", "syslog", "kaspersky:syslog", "epav").template(Template::Rfc5424Compact),
    Key::update("kaspersky:es", "epav").class("es"),
    Key::update("kaspersky:cef", "epav"),
    // r_set_splunk_dest_default without vendor/product: those of the LEEF header stay, the
    // template goes back to the default.
    Key::new("", "", "kaspersky:leef", "epav"),
    Key::update("kaspersky:klaud", ""),
    Key::update("kaspersky:klsrv", ""),
    Key::update("kaspersky:gnrl", ""),
    Key::update("kaspersky:klnag", ""),
    Key::update("kaspersky:klprci", ""),
    Key::update("kaspersky:klbl", ""),
];

fn syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let sd = input
        .msg
        .structured_data
        .as_ref()
        .map(|s| s.raw())
        .unwrap_or_default();
    if crate::classify::vendors::util::find_lit!(sd, b"@23668").is_none() {
        return false;
    }
    out.key(&KEYS[SYSLOG]);
    if input.program.is_some_and(|p| p.starts_with(b"KES")) {
        out.key(&KEYS[ES]);
    }
    true
}

fn by_prefix(out: &mut Out<'_>, id: &[u8]) {
    if let Some((_, k)) = BY_PREFIX.iter().find(|(p, _)| id.starts_with(p)) {
        out.key(&KEYS[*k]);
    }
}

/// The filter of [`es_cef`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn es_cef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"KasperskyLab")
        && out.nv.contains(cef::NV_PRODUCT, b"SecurityCenter")
}

fn es_cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !es_cef_check(input, out) {
        return false;
    }
    out.key(&KEYS[CEF]);
    let class = out.nv.get(cef::NV_CLASS).unwrap_or_default();
    by_prefix(out, class);
    true
}

/// The filter of [`es_leef`] (the dispatcher's check).
fn es_leef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(leef::NV_VENDOR, b"KasperskyLab")
        && out.nv.contains(leef::NV_PRODUCT, b"SecurityCenter")
}

fn es_leef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !es_leef_check(input, out) {
        return false;
    }
    out.key(&KEYS[LEEF]);
    let id = out.nv.get(leef::NV_EVENT_ID).unwrap_or_default();
    by_prefix(out, id);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn cef_leef_and_sdata() {
        let c = classify_line(
            "<29>1 2024-04-04T12:29:53.123Z h1 CEF:0|KasperskyLab|SecurityCenter|13.2|KLPRCI_TaskState|Done|1|rt=1647626887000 dhost=WS6465",
        );
        assert_eq!(c.sourcetype, "kaspersky:klprci");
        assert_eq!(c.index, "epav");
        let c = classify_line(
            "<13>Jan 18 11:07:53 h1 LEEF:2.0|KasperskyLab|SecurityCenter|13|GNRL_EV_X|^|a=1^b=2",
        );
        assert_eq!(c.sourcetype, "kaspersky:gnrl");
        assert_eq!(c.index, "epav");
        assert_eq!(c.vendor, "KasperskyLab");
        let c = classify_line(
            "<29>1 2024-04-04T12:29:53.123Z h1 KES|11.0.0.0 - GNRL_EV [event@23668 p1=\"x\"] Event type: y",
        );
        assert_eq!(c.sourcetype, "kaspersky:es");
        assert_eq!(c.index, "epav");
    }
}
