//! Infoblox NIOS on its dedicated listener / netsource (SC4S
//! `addons/infoblox/app-netsource-infoblox.conf`): sourcetype by PROGRAM (`named`,
//! `dhcpd`, `threat-protect-log`), audit lines by their stamp, the rest `infoblox:port`.
//! NIOS's CEF output (`app-cef-infoblox_nios.conf`) is an application of the `cef` topic:
//! `infoblox:dns`, or `infoblox:threatprotect` for the `NIOS Threat` product.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "infoblox",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-infoblox",
            topic: Topic::NetSource,
            order: "infoblox/app-netsource-infoblox.conf",
            when: When::NetSource(&["infoblox_nios", ".source.s_INFOBLOX"]),
            parse: netsource,
        },
        App {
            name: "app-cef-infoblox_nios",
            topic: Topic::Sub("cef"),
            order: "infoblox/app-cef-infoblox_nios.conf",
            when: When::Check(nios_cef_check),
            parse: nios_cef,
        },
    ],
};

const NIOS: usize = 0;
const DNS: usize = 1;
const DHCP: usize = 2;
const THREAT: usize = 3;
const AUDIT: usize = 4;
const PORT: usize = 5;

static KEYS: &[Key] = &[
    Key::new("infoblox", "nios", "infoblox", "netops")
        .program_source()
        .template(Template::HdrMsg),
    Key::update("infoblox:dns", "netdns").class("dns"),
    Key::update("infoblox:dhcp", "netipam").class("dhcp"),
    Key::update("infoblox:threatprotect", "netids").class("threatprotect"),
    Key::update("infoblox:audit", "").class("audit"),
    Key::update("infoblox:port", "").class("fallback"),
    Key::update("infoblox:dns", "netdns")
        .source("Infoblox:NIOS")
        .class("dns"),
    Key::update("infoblox:threatprotect", "netids")
        .source("Infoblox:NIOS")
        .class("threatprotect"),
];
const CEF_DNS: usize = 6;
const CEF_THREAT: usize = 7;

/// The filter of [`nios_cef`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn nios_cef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Infoblox")
}

fn nios_cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !nios_cef_check(input, out) {
        return false;
    }
    let k = if out.nv.is(cef::NV_PRODUCT, b"NIOS Threat") {
        CEF_THREAT
    } else {
        CEF_DNS
    };
    out.key(&KEYS[k]);
    true
}

fn netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static AUDIT_STAMP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}:\d{2}(\.\d+)Z\s+\[[^\]]+\]:")
            .expect("static regex")
    });
    let ns = input.netsource;
    // Unlike most netsource applications this one also relabels identified messages.
    if !(ns.names("infoblox_nios", "infoblox", "nios") || input.src.listener_id == "INFOBLOX")
        || input.body.starts_with(b"CEF:0")
    {
        return false;
    }
    out.key(&KEYS[NIOS]);
    let program = input.program.unwrap_or_default();
    let k = if program.starts_with(b"named") {
        DNS
    } else if program.starts_with(b"dhcpd") {
        DHCP
    } else if program.starts_with(b"threat-protect-log") {
        THREAT
    } else if AUDIT_STAMP.is_match(input.body) {
        AUDIT
    } else {
        // The text before the first tab is a port-log prefix SC4S removes.
        let m = input.body;
        if let Some(tab) = memchr::memchr(b'\t', m)
            && tab > 0
        {
            out.message(&m[tab + 1..]);
        }
        PORT
    };
    out.key(&KEYS[k]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_on_its_netsource() {
        let c = crate::classify::testutil::classify_line(
            "<30>Mar 31 08:39:09 nios1 named[4242]: client 1.2.3.4#5 query: x IN A",
        );
        assert_ne!(c.vendor, "infoblox");
        assert_eq!(KEYS[DNS].index, "netdns");
    }
}
