//! Schneider Electric APC (SC4S `addons/schneider/app-netsource-schneider_apc.conf`):
//! messages a listener or `vendor_product_by_source` names `schneider`/`apc`, when no other
//! parser identified them.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "schneider",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-schneider_apc",
        topic: Topic::NetSource,
        order: "schneider/app-netsource-schneider_apc.conf",
        when: When::NetSource(&["schneider_apc"]),
        parse: apc,
    }],
};

static KEYS: &[Key] =
    &[Key::new("schneider", "apc", "apc:syslog", "main").template(Template::HdrMsg)];

fn apc<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified || !(ns.names("schneider_apc", "schneider", "apc")) {
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
    fn apc() {
        let cx = classifier_on(&["SCHNEIDER_APC"], VendorOptions::default());
        let e = event_on(
            cx,
            "SCHNEIDER_APC",
            "<27>May 25 12:01:42 test_apc-host-pdu-r12 Detected an unauthorized user attempting to access the SNMP interface from 10.1.1.1 0x0004",
        );
        assert_eq!(e["sourcetype"], "apc:syslog");
        assert_eq!(e["index"], "main");
        assert_eq!(e["host"], "test_apc-host-pdu-r12");
        assert_eq!(e["fields"]["sc4s_vendor"], "schneider");
        assert_eq!(e["fields"]["sc4s_product"], "apc");
        // syslog-ng reads `Detected` as the PROGRAM: t_hdr_msg gives it back.
        assert_eq!(
            e["event"],
            "Detected an unauthorized user attempting to access the SNMP interface from 10.1.1.1 0x0004"
        );
        let c = classify_line_on(cx, "DEFAULT", "<27>May 25 12:01:42 apc-1 Detected x");
        assert_ne!(c.vendor, "schneider");
    }
}
