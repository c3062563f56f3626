//! Buffalo TeraStation NAS (SC4S `addons/buffalo/app-netsource-buffalo_terastation.conf`):
//! known only by a `buffalo_terastation` listener or `vendor_product_by_source` entry; the
//! sourcetype ends with the lowercased PROGRAM, the class is the PROGRAM.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vendors::util::lower;

pub static VENDOR: Vendor = Vendor {
    name: "buffalo",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-buffalo_terastation",
        topic: Topic::NetSource,
        order: "buffalo/app-netsource-buffalo_terastation.conf",
        when: When::NetSource(&["buffalo_terastation"]),
        parse: terastation,
    }],
};

static KEYS: &[Key] = &[
    Key::new("buffalo", "terastation", "buffalo:terastation:", "infraops")
        .template(Template::HdrMsg),
];

fn terastation<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified || !(ns.names("buffalo_terastation", "buffalo", "terastation")) {
        return false;
    }
    out.key(&KEYS[0]);
    let program = input.program.unwrap_or_default();
    // `buffalo:terastation:$(lowercase $PROGRAM)`; a PROGRAM too long to lowercase inline
    // keeps its case rather than being dropped.
    out.sourcetype = Some(
        lower(b"buffalo:terastation:", program)
            .unwrap_or(Value::Concat("buffalo:terastation:", program)),
    );
    // `class("$PROGRAM")`: SC4S sets no class from an empty value.
    if !program.is_empty() {
        out.class = Some(Value::Bytes(program));
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classifier_with_listeners, classify_line_on};

    #[test]
    fn terastation() {
        let cx = classifier_with_listeners(&["BUFFALO_TERASTATION"]);
        let c = classify_line_on(
            cx,
            "BUFFALO_TERASTATION",
            "<14>May 08 05:45:59 ts5410 NasApi[19090]: log - INFO- success",
        );
        assert_eq!(c.sourcetype, "buffalo:terastation:nasapi");
        assert_eq!(c.class.unwrap(), "NasApi");
        assert_eq!(c.index, "infraops");
        assert_eq!(c.vendor, "buffalo");
        assert_eq!(c.product, "terastation");
        assert_eq!(c.app, "app-netsource-buffalo_terastation");
        // SC4S's `test_buffalo.py` sample has no host; no PROGRAM after the repairs.
        let c = classify_line_on(
            cx,
            "BUFFALO_TERASTATION",
            "<14>May 08 05:45:59 nasapi[19090] - log - ts5410 - INFO- success",
        );
        assert_eq!(c.vendor, "buffalo");
        assert!(
            c.sourcetype
                .to_string_lossy()
                .starts_with("buffalo:terastation:")
        );
        let long = "P".repeat(80);
        let c = classify_line_on(
            cx,
            "BUFFALO_TERASTATION",
            &format!("<14>May 08 05:45:59 ts {long}: x"),
        );
        assert_eq!(c.sourcetype, format!("buffalo:terastation:{long}").as_str());
    }
}
