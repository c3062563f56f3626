//! Clearswift SECURE Email Gateway (SC4S `addons/clearswift/app-netsource-clearswift.conf`):
//! known only by a `clearswift` listener or `vendor_product_by_source` entry. The sourcetype
//! ends with the lowercased PROGRAM, the class is the PROGRAM; SC4S sets no product.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vendors::util::lower;

pub static VENDOR: Vendor = Vendor {
    name: "clearswift",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-app-netsource-clearswift",
        topic: Topic::NetSource,
        order: "clearswift/app-netsource-clearswift.conf",
        // SC4S compares the vendor_product with `clearswift`; a listener or
        // `p_set_netsource_fields` gives `clearswift_clearswift`.
        when: When::NetSource(&["clearswift", "clearswift_clearswift"]),
        parse: clearswift,
    }],
};

static KEYS: &[Key] =
    &[Key::new("clearswift", "", "clearswift:", "email").template(Template::MsgOnly)];

fn clearswift<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified || !(ns.names("clearswift", "clearswift", "clearswift")) {
        return false;
    }
    out.key(&KEYS[0]);
    let program = input.program.unwrap_or_default();
    out.sourcetype =
        Some(lower(b"clearswift:", program).unwrap_or(Value::Concat("clearswift:", program)));
    if !program.is_empty() {
        out.class = Some(Value::Bytes(program));
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Template;
    use crate::classify::testutil::{classifier_with_listeners, classify_line_on};

    /// SC4S's `test_clearswift_syslog_rfc5424_test_filter.py::test_clearswift` (there the
    /// vendor comes from a host-name app-parser; here from a listener).
    #[test]
    fn audit() {
        let cx = classifier_with_listeners(&["CLEARSWIFT_CLEARSWIFT"]);
        let c = classify_line_on(
            cx,
            "CLEARSWIFT_CLEARSWIFT",
            "<22>1 2024-05-14T11:32:05.246813+00:00 mx-gw01 audit - - - INFO  [Consolidator]- Waiting 2931 milliseconds before processing more log files",
        );
        assert_eq!(c.sourcetype, "clearswift:audit");
        assert_eq!(c.index, "email");
        assert_eq!(c.vendor, "clearswift");
        assert_eq!(c.product, "");
        assert_eq!(c.class.unwrap(), "audit");
        assert_eq!(c.template, Template::MsgOnly);
        let c = classify_line_on(
            cx,
            "CLEARSWIFT_CLEARSWIFT",
            "<22>1 2024-05-14T11:32:05.246813+00:00 mx-gw01 MailAudit - - - x",
        );
        assert_eq!(c.sourcetype, "clearswift:mailaudit");
        assert_eq!(c.class.unwrap(), "MailAudit");
        // RFC 5424 without APP-NAME: no class.
        let c = classify_line_on(
            cx,
            "CLEARSWIFT_CLEARSWIFT",
            "<22>1 2024-05-14T11:32:05.246813+00:00 mx-gw01 - - - - x",
        );
        assert_eq!(c.sourcetype, "clearswift:");
        assert!(c.class.is_none());
    }
}
