//! Thycotic Secret Server over CEF (SC4S `addons/thycotic/app-cef-thycotic_secret_server.conf`):
//! vendor and product stay the CEF header's.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "thycotic",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-thycotic_secret_server",
        topic: Topic::Sub("cef"),
        order: "thycotic/app-cef-thycotic_secret_server.conf",
        when: When::Check(check),
        parse: secret_server,
    }],
};

static KEYS: &[Key] = &[Key::update("thycotic:syslog", "netauth")];

fn check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Thycotic Software")
        && out.nv.contains(cef::NV_PRODUCT, b"Secret Server")
}

fn secret_server<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
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
    fn secret_server() {
        let c = classify_line(
            "<134>May 24 05:38:26 ss-01 CEF:0|Thycotic Software|Secret Server|10.9.000033|500|SECRET - VIEW|2|msg=[SecretServer] Event: [Secret] Action: [View] By User: admin Item Name: cred suser=admin src=10.0.0.1 rt=May 24 2024 05:38:26",
        );
        assert_eq!(c.sourcetype, "thycotic:syslog");
        assert_eq!(c.index, "netauth");
        assert_eq!(c.vendor, "Thycotic Software");
        assert_eq!(c.product, "Secret Server");
        let c = classify_line("<134>May 24 05:38:26 h CEF:0|Thycotic Software|Other|1|c|n|2|a=b");
        assert_eq!(c.sourcetype, "cef");
    }
}
