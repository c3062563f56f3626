//! Proofpoint Protection Server (SC4S `addons/proofpoint/app-netsource-proofpoint_pps.conf`):
//! a `proofpoint_pps` network source, or one of PPS's programs (`filter_instance1`,
//! `/opt/proofpoint/pps-8.0.0.1/...`, `queued-default`) from any source.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "proofpoint",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-proofpoint_pps",
            topic: Topic::NetSource,
            order: "proofpoint/app-netsource-proofpoint_pps.conf",
            when: When::NetSource(&["proofpoint_pps"]),
            parse: pps,
        },
        // The same application reached by PROGRAM: SC4S's filter is an `or`.
        App {
            name: "app-netsource-proofpoint_pps",
            topic: Topic::NetSource,
            order: "proofpoint/app-netsource-proofpoint_pps.conf",
            when: When::ProgramPrefix(&[
                "background_instance",
                "cvt_instance",
                "filter_instance",
                "pps_instance",
                "/opt/proofpoint/pps-",
                "queued-",
            ]),
            parse: pps,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("proofpoint", "pps", "pps_mail_log", "email")
        .template(Template::HdrMsg)
        .class("sendmail")
        .program_source(),
    Key::update("pps_filter_log", "").class("filter"),
];

fn pps_program(p: &[u8]) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:(?:background|cvt|filter|pps)_instance\d+$|/opt/proofpoint/pps-\d\.\d\.\d\.\d+/\S|queued-(?:alert|default|digest|reinject|released)$)",
        )
        .expect("static regex")
    });
    RE.is_match(p)
}

fn pps<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    let by_source = ns.names("proofpoint_pps", "proofpoint", "pps");
    let filter = input.program.is_some_and(pps_program);
    if !(by_source || filter) {
        return false;
    }
    out.key(&KEYS[0]);
    if filter {
        out.key(&KEYS[1]);
        // An update key keeps the earlier key's source only when it is static: restore
        // `program:` + PROGRAM without its directories.
        if let Some(p) = input.program {
            let name = match p.iter().rposition(|b| *b == b'/') {
                Some(i) if p.starts_with(b"/") => &p[i + 1..],
                _ => p,
            };
            out.source = Some(Value::Concat("program:", name));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn pps_by_program() {
        let c = classify_line("<14>Apr 08 13:05:17 pps filter_instance1[42]: rprt s=1 mod=spam");
        assert_eq!(c.sourcetype, "pps_filter_log");
        assert_eq!(c.index, "email");
        assert_eq!(c.source, "program:filter_instance1");
        let c = classify_line("<14>Apr 08 13:05:17 pps filter_instanceX[42]: rprt s=1");
        assert_ne!(c.sourcetype, "pps_filter_log");
    }
}
