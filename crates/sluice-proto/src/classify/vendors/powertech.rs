//! PowerTech Interact over CEF (SC4S `addons/powertech/app-cef-powertech_interact.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "powertech",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-power_interact",
        topic: Topic::Sub("cef"),
        order: "powertech/app-cef-powertech_interact.conf",
        when: When::Check(check),
        parse: interact,
    }],
};

static KEYS: &[Key] = &[
    Key::new("PowerTech", "Interact", "PowerTech:Interact:cef", "netops")
        .source("PowerTech:Interact"),
];

fn check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"PowerTech") && out.nv.contains(cef::NV_PRODUCT, b"Interact")
}

fn interact<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn interact() {
        let e = event_of(
            "<6>May 24 18:39:50 ibmi-prod-01 CEF:0|PowerTech|Interact|3.1|TCA0001|The bytestream file *N/*N /test/test.tmp authority has been changed for user profile TEST.|2|src=1.1.1.1 dst=0.0.0.0 msg=TYPE:JRN CLS:AUD",
        );
        assert_eq!(e["sourcetype"], "PowerTech:Interact:cef");
        assert_eq!(e["source"], "PowerTech:Interact");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["host"], "ibmi-prod-01");
        assert_eq!(e["fields"]["sc4s_vendor"], "PowerTech");
        assert_eq!(e["fields"]["sc4s_product"], "Interact");
        assert_eq!(e["fields"]["sc4s_class"], "TCA0001");
        assert!(
            e["event"]
                .as_str()
                .unwrap()
                .contains("The bytestream file *N/*N /test/test.tmp authority has been changed")
        );
        let c = classify_line("<6>May 24 18:39:50 h CEF:0|PowerTech|Other|3.1|c|n|2|a=b");
        assert_eq!(c.sourcetype, "cef");
    }
}
