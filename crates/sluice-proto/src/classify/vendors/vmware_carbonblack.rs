//! VMware Carbon Black App Control (formerly Protection) over CEF (SC4S
//! `addons/vmware/app-cef-carbon_black_protection.conf`): the `cef` topic's application for
//! device vendor `Carbon Black`, product `Protection`. (Its syslog form, `Carbon Black App
//! Control event:`, is `app-syslog-vmware_cb-protect` in `vmware.rs`.)

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "vmware_carbonblack",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-carbon_black_protection",
        topic: Topic::Sub("cef"),
        order: "vmware/app-cef-carbon_black_protection.conf",
        when: When::Check(check),
        parse: protection,
    }],
};

static KEYS: &[Key] = &[Key::update("carbonblack:protection:cef", "epintel")];

/// SC4S's unanchored `match()` on the CEF header's vendor and product.
fn check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Carbon Black")
        && out.nv.contains(cef::NV_PRODUCT, b"Protection")
}

fn protection<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn cef() {
        let c = classify_line(
            "<134>May 06 08:11:05 cb-01 CEF:0|Carbon Black|Protection|8.9|801|Computer Management|4|rt=May 06 2024 08:11:05 dvchost=ws-01",
        );
        assert_eq!(c.sourcetype, "carbonblack:protection:cef");
        assert_eq!(c.index, "epintel");
        let c = classify_line(
            "<134>May 06 08:11:05 cb-01 CEF:0|Carbon Black|Response|8.9|801|x|4|rt=May 06 2024 08:11:05",
        );
        assert_eq!(c.sourcetype, "cef");
    }
}
