//! Brocade switches (SC4S `addons/brocade/app-netsource-brocade_syslog.conf`): known only by
//! where they come from: a `brocade_syslog` listener or `vendor_product_by_source` entry, or
//! SC4S's one-word listener `SC4S_LISTEN_BROCADE_*_PORT` (its `.source.s_BROCADE` tag).
//! As in SC4S, an event another application identified stays that application's.

use crate::classify::header::strip_directory;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "brocade",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-brocade_syslog",
        topic: Topic::NetSource,
        order: "brocade/app-netsource-brocade_syslog.conf",
        // A check rather than `When::NetSource`: the one-word listener id names no
        // vendor_product, only the source tag.
        when: When::Check(is_brocade),
        parse: syslog,
    }],
};

static KEYS: &[Key] =
    &[Key::new("brocade", "syslog", "brocade:syslog", "netops").template(Template::HdrMsg)];

/// SC4S's filter: not identified, and vendor `brocade` with product `syslog`, or
/// vendor_product `brocade_syslog`, or received on the `BROCADE` listener.
fn is_brocade<'m>(input: &Input<'m, '_>, out: &Out<'m>) -> bool {
    let ns = input.netsource;
    !out.identified
        && (ns.names("brocade_syslog", "brocade", "syslog") || input.src.listener_id == "BROCADE")
}

fn syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !is_brocade(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    // `source('brocade:${.PROGRAM}')`, the PROGRAM without its directory.
    let program = strip_directory(input.program.unwrap_or_default());
    out.source = Some(Value::Concat("brocade:", program));
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Template;
    use crate::classify::testutil::{classifier_with_listeners, classify_line, classify_line_on};

    /// SC4S's `test_brocade.py` samples, on a `brocade_syslog` listener and on the one-word
    /// `BROCADE` listener SC4S also honours.
    #[test]
    fn listeners() {
        let cx = classifier_with_listeners(&["BROCADE_SYSLOG", "BROCADE"]);
        for id in ["BROCADE_SYSLOG", "BROCADE"] {
            let c = classify_line_on(
                cx,
                id,
                "<166>May 08 05:45:59 icx7450-01 STP: VLAN 125 Port 1/1/24 STP State -> FORWARDING (DOT1wTransition)",
            );
            assert_eq!(c.sourcetype, "brocade:syslog", "{id}");
            assert_eq!(c.index, "netops");
            assert_eq!(c.source, "brocade:STP");
            assert_eq!(c.vendor, "brocade");
            assert_eq!(c.product, "syslog");
            assert_eq!(c.template, Template::HdrMsg);
            assert_eq!(c.app, "app-netsource-brocade_syslog");
        }
        let c = classify_line_on(
            cx,
            "BROCADE",
            "<166>May 08 05:45:59 icx /usr/sbin/System: PoE: Power disabled on port 1/1/24",
        );
        assert_eq!(c.source, "brocade:System");
        // No PROGRAM: `brocade:` and the rest.
        let c = classify_line_on(
            cx,
            "BROCADE",
            "<166>May 08 05:45:59 icx Security SSH terminated",
        );
        assert_eq!(c.sourcetype, "brocade:syslog");
        // Identified by a signature first: not Brocade's.
        let c = classify_line_on(
            cx,
            "BROCADE",
            "<166>May 08 05:45:59 icx named[1]: zone x loaded",
        );
        assert_eq!(c.sourcetype, "isc:bind:transfer");
        // Without the listener: plain syslog.
        let c = classify_line("<166>May 08 05:45:59 icx STP: VLAN 125");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
