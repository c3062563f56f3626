//! Palo Alto Networks Cortex XSOAR and Traps over CEF (SC4S
//! `addons/palo-alto/app-cef-pan-xsoar.conf`, `app-cef-pan_traps.conf`): the `cef` topic's
//! applications for device vendor `Palo Alto Networks` with product `Palo Alto Networks
//! Cortex XSOAR` or `Traps Agent`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "pan_cortex",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-pan-xsoars",
            topic: Topic::Sub("cef"),
            order: "palo-alto/app-cef-pan-xsoar.conf",
            when: When::Check(xsoar_check),
            parse: xsoar,
        },
        App {
            name: "app-cef-pan_traps",
            topic: Topic::Sub("cef"),
            order: "palo-alto/app-cef-pan_traps.conf",
            when: When::Check(traps_check),
            parse: traps,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("pan:xsoar", "epintel"),
    Key::update("pan:traps4", "epintel").source("CEFEventLog:Microsoft Windows"),
];

/// SC4S's unanchored `match()` on the CEF header fields.
fn is(out: &Out<'_>, product: &[u8]) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Palo Alto Networks")
        && out.nv.contains(cef::NV_PRODUCT, product)
}

fn xsoar_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    is(out, b"Palo Alto Networks Cortex XSOAR")
}

fn xsoar<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !xsoar_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn traps_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    is(out, b"Traps Agent")
}

fn traps<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !traps_check(input, out) {
        return false;
    }
    out.key(&KEYS[1]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn xsoar_and_traps() {
        let c = classify_line(
            "<134>May 06 08:11:05 xsoar-01 CEF:0|Palo Alto Networks|Palo Alto Networks Cortex XSOAR|6.8|incident|Incident created|3|src=10.0.0.1",
        );
        assert_eq!(c.sourcetype, "pan:xsoar");
        assert_eq!(c.index, "epintel");
        let c = classify_line(
            "<134>May 06 08:11:05 traps-01 CEF:0|Palo Alto Networks|Traps Agent|4.2|x|y|3|src=10.0.0.1",
        );
        assert_eq!(c.sourcetype, "pan:traps4");
        assert_eq!(c.source, "CEFEventLog:Microsoft Windows");
        let c = classify_line(
            "<134>May 06 08:11:05 h CEF:0|Palo Alto Networks|Other|4.2|x|y|3|src=10.0.0.1",
        );
        assert_eq!(c.sourcetype, "cef");
    }
}
