//! MikroTik RouterOS (SC4S `addons/mikrotik/app-netsource-mikrotik_routeros.conf`): known
//! only by a `mikrotik_routeros` listener or `vendor_product_by_source` entry; PROGRAM
//! `forward*` (the firewall) goes to `netfw`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "mikrotik",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-mikrotik_routeros",
        topic: Topic::NetSource,
        order: "mikrotik/app-netsource-mikrotik_routeros.conf",
        when: When::NetSource(&["mikrotik_routeros"]),
        parse: routeros,
    }],
};

static KEYS: &[Key] = &[
    // `source('program:${.PROGRAM}')`: this parser never sets `.PROGRAM` (the netsource
    // and fallback applications that do come later), so SC4S's source is `program:`.
    Key::new("mikrotik", "routeros", "routeros", "netops")
        .source("program:")
        .template(Template::HdrMsg),
    Key::update("", "netfw").class("fw"),
];

fn routeros<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified || !(ns.names("mikrotik_routeros", "mikrotik", "routeros")) {
        return false;
    }
    out.key(&KEYS[0]);
    if input.program.is_some_and(|p| p.starts_with(b"forward")) {
        out.key(&KEYS[1]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Template;
    use crate::classify::testutil::{classifier_with_listeners, classify_line_on};

    /// SC4S's `test_mikrotik.py::test_routeros` (there the vendor comes from a host-name
    /// app-parser; here from a listener).
    #[test]
    fn routeros() {
        let cx = classifier_with_listeners(&["MIKROTIK_ROUTEROS"]);
        let c = classify_line_on(
            cx,
            "MIKROTIK_ROUTEROS",
            "<132>May 23 17:42:09 br01-gw forward: in:ether1 out:bridge, src-mac 26:5a:4c:57:6e:cc, proto TCP (SYN), 192.168.1.196:62583->10.1.0.0:8000, len 64",
        );
        assert_eq!(c.sourcetype, "routeros");
        assert_eq!(c.index, "netfw");
        assert_eq!(c.class.unwrap(), "fw");
        assert_eq!(c.vendor, "mikrotik");
        assert_eq!(c.product, "routeros");
        assert_eq!(c.source, "program:");
        assert_eq!(c.template, Template::HdrMsg);
        let c = classify_line_on(
            cx,
            "MIKROTIK_ROUTEROS",
            "<132>May 23 17:42:09 br01-gw system,info: user admin logged in",
        );
        assert_eq!(c.sourcetype, "routeros");
        assert_eq!(c.index, "netops");
        assert!(c.class.is_none());
    }
}
