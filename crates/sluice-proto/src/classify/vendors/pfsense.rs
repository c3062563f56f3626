//! pfSense (SC4S `addons/pfsense/app-netsource-pfsense.conf`): messages a listener
//! (`SC4S_LISTEN_PFSENSE_FIREWALL_*` or the one-word `SC4S_LISTEN_PFSENSE_*`) or
//! `vendor_product_by_source` names `pfsense`/`firewall`, and no other parser identified:
//! sourcetype `pfsense:<PROGRAM>`, source `program:<PROGRAM without its directory>`,
//! `t_hdr_msg`; PROGRAM `filterlog*` is `pfsense:filterlog` in `netfw`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "pfsense",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-pfsense",
        topic: Topic::NetSource,
        order: "pfsense/app-netsource-pfsense.conf",
        when: When::Check(filter),
        parse: firewall,
    }],
};

const BASE: usize = 0;
const FILTERLOG: usize = 1;

static KEYS: &[Key] = &[
    Key::new("pfsense", "firewall", "pfsense", "netops")
        .program_source()
        .template(Template::HdrMsg),
    Key::update("pfsense:filterlog", "netfw")
        .class("filterlog")
        .program_source(),
];

/// The listener or `vendor_product_by_source` names pfSense's firewall (the source
/// `s_PFSENSE` is the listener id `PFSENSE`, which names no product).
fn filter<'m>(input: &Input<'m, '_>, out: &Out<'m>) -> bool {
    let ns = input.netsource;
    // Most messages: no vendor_product, the default listener.
    if ns.vendor_product.is_empty() {
        return input.src.listener_id == "PFSENSE" && !out.identified;
    }
    !out.identified
        && (ns.names("pfsense_firewall", "pfsense", "firewall")
            || input.src.listener_id == "PFSENSE")
}

fn firewall<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !filter(input, out) {
        return false;
    }
    out.key(&KEYS[BASE]);
    let program = input.program.unwrap_or_default();
    out.sourcetype_concat("pfsense:", program);
    if program.starts_with(b"filterlog") {
        out.key(&KEYS[FILTERLOG]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::VendorOptions;
    use crate::classify::testutil::{classifier_on, classify_line_on, event_on};

    #[test]
    fn firewall() {
        let cx = classifier_on(&["PFSENSE_FIREWALL", "PFSENSE"], VendorOptions::default());
        let e = event_on(
            cx,
            "PFSENSE_FIREWALL",
            "<27>May 24 14:19:22 filterlog: 82,,,1000002666,mvneta2,match,pass,out,6,0x00,0x00000,64,ICMPv6,58,8,pfsfl-a91c2,",
        );
        assert_eq!(e["sourcetype"], "pfsense:filterlog");
        assert_eq!(e["index"], "netfw");
        assert_eq!(e["source"], "program:filterlog");
        assert_eq!(e["host"], "192.0.2.10");
        assert_eq!(e["fields"]["sc4s_vendor"], "pfsense");
        assert_eq!(e["fields"]["sc4s_product"], "firewall");
        assert_eq!(e["fields"]["sc4s_class"], "filterlog");
        assert_eq!(
            e["event"],
            "filterlog: 82,,,1000002666,mvneta2,match,pass,out,6,0x00,0x00000,64,ICMPv6,58,8,pfsfl-a91c2,"
        );
        // The header's word before `error` is HOST, `error` the PROGRAM.
        let e = event_on(
            cx,
            "PFSENSE_FIREWALL",
            "<27>May 24 15:24:29 kqueue error: pfkq-b37e1",
        );
        assert_eq!(e["sourcetype"], "pfsense:error");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["host"], "kqueue");
        assert!(e["fields"]["sc4s_class"].is_null());
        // The one-word listener id; a PROGRAM path: the source drops the directory only.
        let e = event_on(
            cx,
            "PFSENSE",
            "<27>May 24 15:24:29 fw /usr/sbin/syslogd: restart pfsd-1",
        );
        assert_eq!(e["sourcetype"], "pfsense:/usr/sbin/syslogd");
        assert_eq!(e["source"], "program:syslogd");
        let c = classify_line_on(cx, "PFSENSE", "<27>May 24 15:24:29 fw syslogd: restart");
        assert_eq!(c.sourcetype, "pfsense:syslogd");
        // Without a PROGRAM: `pfsense:`.
        let c = classify_line_on(cx, "PFSENSE", "<27>May 24 15:24:29 fw [x] y");
        assert_eq!(c.vendor, "pfsense");
        // Another parser identified it first (CEF): not pfSense.
        let c = classify_line_on(
            cx,
            "PFSENSE",
            "<27>May 24 15:24:29 fw CEF:0|V|P|1|c|n|1|a=b",
        );
        assert_eq!(c.sourcetype, "cef");
        // The default listener: not pfSense.
        let c = classify_line_on(cx, "DEFAULT", "<27>May 24 14:19:22 filterlog: 82,,,1");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
