//! Raritan Dominion SX (SC4S `addons/raritan/app-netsource-raritan_dsx.conf`): messages a
//! listener or `vendor_product_by_source` names `raritan`/`dsx`, when no other parser
//! identified them.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "raritan",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-raritan_dsx",
        topic: Topic::NetSource,
        order: "raritan/app-netsource-raritan_dsx.conf",
        when: When::NetSource(&["raritan_dsx"]),
        parse: dsx,
    }],
};

static KEYS: &[Key] =
    &[Key::new("raritan", "dsx", "raritan:dsx", "infraops").template(Template::HdrMsg)];

fn dsx<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified || !(ns.names("raritan_dsx", "raritan", "dsx")) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::VendorOptions;
    use crate::classify::testutil::{classifier_on, classify_line_on, event_on};

    #[test]
    fn dsx() {
        let cx = classifier_on(&["RARITAN_DSX"], VendorOptions::default());
        let e = event_on(
            cx,
            "RARITAN_DSX",
            "<27>[Login Failed]: Authentication failed for user 'cartertest' from host 'dsx-op3'",
        );
        assert_eq!(e["sourcetype"], "raritan:dsx");
        assert_eq!(e["index"], "infraops");
        assert_eq!(e["fields"]["sc4s_vendor"], "raritan");
        assert_eq!(e["fields"]["sc4s_product"], "dsx");
        assert_eq!(
            e["event"],
            "[Login Failed]: Authentication failed for user 'cartertest' from host 'dsx-op3'"
        );
        let c = classify_line_on(cx, "RARITAN_DSX", "<27>May 24 15:24:29 dsx sshd[2]: hello");
        assert_eq!(c.sourcetype, "raritan:dsx");
        assert_eq!(c.template, crate::classify::Template::HdrMsg);
        let c = classify_line_on(cx, "DEFAULT", "<27>[Login Failed]: x");
        assert_ne!(c.vendor, "raritan");
    }
}
