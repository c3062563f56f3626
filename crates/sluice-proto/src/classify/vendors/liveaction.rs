//! LiveAction LiveNX (SC4S `addons/liveaction/app-syslog-liveaction_livenx.conf`): MESSAGE
//! starting `%LIVEACTION` (after the header repair that folds the invalid PROGRAM
//! `%LIVEACTION` back into MESSAGE).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "liveaction",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-liveaction_livenx",
        topic: Topic::Syslog,
        order: "liveaction/app-syslog-liveaction_livenx.conf",
        when: When::BodyPrefix(&["%LIVEACTION"]),
        parse: livenx,
    }],
};

static KEYS: &[Key] = &[Key::new(
    "liveaction",
    "livenx",
    "liveaction:livenx",
    "netops",
)];

fn livenx<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.body.starts_with(b"%LIVEACTION") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::TimeEdit;
    use crate::classify::testutil::classify_line;

    /// SC4S's `test_liveaction_livenx.py::test_liveaction_livenx_event`: an ISO stamp, no
    /// host, `%LIVEACTION:` where the PROGRAM would be.
    #[test]
    fn livenx() {
        let line = "<132>2022-01-17T13:15:08+00:00  %LIVEACTION: Device=lnx-edge-rtr7 Class=Queue0, Interface Direction=Output, Initial BitRate=0.00 Kbps, Policy=AAA_BBB_CCC_DDD, Tag(s)=vpn0";
        let c = classify_line(line);
        assert_eq!(c.sourcetype, "liveaction:livenx");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "liveaction");
        assert_eq!(c.product, "livenx");
        assert_eq!(c.app, "app-syslog-liveaction_livenx");
        assert!(matches!(c.time, TimeEdit::Keep));
        let c = classify_line("<132>Jan 17 13:15:08 lnx %LIVEACTION: Device=x");
        assert_eq!(c.sourcetype, "liveaction:livenx");
        let c = classify_line("<132>Jan 17 13:15:08 lnx %LIVEACTIO: Device=x");
        assert_ne!(c.sourcetype, "liveaction:livenx");
    }
}
