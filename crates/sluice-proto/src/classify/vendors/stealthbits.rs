//! Stealthbits StealthINTERCEPT (SC4S `addons/stealthwatch/`): PROGRAM `StealthINTERCEPT`,
//! and the alerts (`AttackedHostIp=... AlertText=`), rendered as JSON values.
//!
//! Not reproduced: SC4S's Python split of `AlertText` into `AlertTextValues.*`; the
//! alert's pairs are rendered as they are.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "stealthbits",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-stealthbits_stealthintercept",
            topic: Topic::Pgm,
            order: "stealthwatch/app-syslog-stealthbits_stealthintercept.conf",
            when: When::Program(&["StealthINTERCEPT"]),
            parse: intercept,
        },
        App {
            name: "app-syslog-stealthbits_stealthintercept_alerts",
            topic: Topic::Syslog,
            order: "stealthwatch/app-syslog-stealthbits_stealthintercept_alerts.conf",
            when: When::Token(&["AlertText="]),
            parse: alerts,
        },
        // sluice's RFC 3164 header takes no PROGRAM that no colon or `[` ends (syslog-ng
        // does): `host StealthINTERCEPT - ...` reaches the syslog topic with the name at
        // the start of the message.
        App {
            name: "app-syslog-stealthbits_stealthintercept",
            topic: Topic::Syslog,
            order: "stealthwatch/app-syslog-stealthbits_stealthintercept.conf",
            when: When::Token(&["StealthINTERCEPT "]),
            parse: intercept_bare,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new(
        "stealthbits",
        "stealthintercept",
        "StealthINTERCEPT",
        "netids",
    )
    .template(Template::HdrMsg),
    Key::new(
        "stealthbits",
        "stealthintercept",
        "StealthINTERCEPT:alerts",
        "netids",
    )
    .class("alerts")
    .template(Template::JsonValues),
];

fn intercept<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"StealthINTERCEPT") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn intercept_bare<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program.is_some() || !input.body.starts_with(b"StealthINTERCEPT ") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn alerts<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static SIG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"AttackedHostIp=.* AlertText=").expect("static regex"));
    if !SIG.is_match(input.body) {
        return false;
    }
    out.key(&KEYS[1]);
    out.values = Some(Values {
        text: input.body,
        syntax: ValuesSyntax::StealthbitsAlerts,
    });
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn intercept_and_alerts() {
        let c = classify_line(
            "<166>Apr 09 22:43:53 si StealthINTERCEPT - Authentication Auth failed - PolicyName=\"AD\"",
        );
        assert_eq!(c.sourcetype, "StealthINTERCEPT");
        assert_eq!(c.index, "netids");
        let c = classify_line(
            "<166>Apr 09 22:43:53 si alerts: AttackedHostIp=1.2.3.4 AlertText=Something happened.",
        );
        assert_eq!(c.sourcetype, "StealthINTERCEPT:alerts");
    }
}
