//! Alsid for Active Directory (SC4S `addons/alsid/app-syslog-alsid_syslog.conf`): PROGRAM
//! `AlsidForAD` exactly; the event keeps the BSD header (`t_standard`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "alsid",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-alsid_syslog",
        topic: Topic::Pgm,
        order: "alsid/app-syslog-alsid_syslog.conf",
        when: When::Program(&["AlsidForAD"]),
        parse: alsid,
    }],
};

static KEYS: &[Key] =
    &[Key::new("alsid", "syslog", "alsid:syslog", "oswinsec").template(Template::Standard)];

fn alsid<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"AlsidForAD") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Template;
    use crate::classify::testutil::classify_line;

    /// SC4S's `test_alsid.py::test_alsid`.
    #[test]
    fn program() {
        let c = classify_line(
            r#"<166>May 06 11:26:26 alsid-relay-01 AlsidForAD[4]: "0" "1" "EXAMPLE_AD_FOREST" "EXAMPLE_AD_DOMAIN" "C-DANG-PRIMGROUPID" "critical" "CN=CN=EXAMPLE_AD_ACCOUNT,OU=EXAMPLE_OU,DC=com,DC=au" "427573" "2" "R-DANG-PRIMGROUPID" "1727453" "AccountCn"="EXAMPLE_AD_ACCOUNT" "ObjectTypePrimaryGroupId"="513""#,
        );
        assert_eq!(c.sourcetype, "alsid:syslog");
        assert_eq!(c.index, "oswinsec");
        assert_eq!(c.vendor, "alsid");
        assert_eq!(c.product, "syslog");
        assert_eq!(c.template, Template::Standard);
        assert_eq!(c.app, "app-syslog-alsid_syslog");
        // `eq` is exact: a longer PROGRAM is not Alsid's.
        let c = classify_line("<166>May 06 11:26:26 relay AlsidForADx[4]: \"0\"");
        assert_eq!(c.sourcetype, "nix:syslog");
        // No body at all still arrives as Alsid's.
        let c = classify_line("<166>May 06 11:26:26 relay AlsidForAD[4]:");
        assert_eq!(c.sourcetype, "alsid:syslog");
    }
}
