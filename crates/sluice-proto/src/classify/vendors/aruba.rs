//! Aruba (SC4S `addons/aruba/`): ArubaOS controllers and APs by PROGRAM and their
//! `<id> <pid> <LEVEL>` message prefix; ClearPass (PROGRAM `CPPM_*` or netsource) and
//! SilverPeak (netsource).

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "aruba",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-aruba_clearpass",
            topic: Topic::NetSource,
            order: "aruba/app-netsource-aruba_clearpass.conf",
            when: When::NetSource(&["aruba_clearpass"]),
            parse: clearpass,
        },
        App {
            name: "app-netsource-aruba_clearpass",
            topic: Topic::NetSource,
            order: "aruba/app-netsource-aruba_clearpass.conf",
            when: When::ProgramPrefix(&["CPPM_"]),
            parse: clearpass,
        },
        App {
            name: "app-netsource-aruba_silverpeak",
            topic: Topic::NetSource,
            order: "aruba/app-netsource-aruba_silverpeak.conf",
            when: When::NetSource(&["aruba_silverpeak"]),
            parse: silverpeak,
        },
        App {
            name: "app-syslog-aruba_ap",
            topic: Topic::Pgm,
            order: "aruba/app-syslog-aruba_ap.conf",
            when: When::ProgramPrefix(&["authmgr", "stm", "wms", "dot1x-proc", "nanny", "sapd"]),
            parse: ap,
        },
    ],
};

const AP: usize = 0;
const CLEARPASS: usize = 1;
const SILVERPEAK: usize = 2;
/// The ClearPass class updates, in [`CPPM_CLASSES`] order.
const CPPM: usize = 3;

/// PROGRAM prefix (case-insensitive) and the class it selects, in SC4S's order.
const CPPM_CLASSES: &[&[u8]] = &[
    b"CPPM_Endpoint_Profile",
    b"CPPM_Alert",
    b"CPPM_Audit_Record",
    b"CPPM_Policy_Server_Session",
    b"CPPM_Post_Auth_Monit_Config",
    b"CPPM_RADIUS_Session",
    b"CPPM_SNMP_Session_Log",
    b"CPPM_System_Event",
    b"CPPM_TACACS_Accounting_Detail",
    // SC4S's spelling.
    b"CPPM_TACACS_Accouting_Record",
];

static KEYS: &[Key] = &[
    Key::new("aruba", "ap", "aruba:syslog", "netops"),
    Key::new("aruba", "clearpass", "aruba:clearpass", "netops").template(Template::HdrMsg),
    Key::new("aruba", "silverpeak", "aruba:silverpeak", "netops"),
    Key::update("", "").class("endpoint-profile"),
    Key::update("", "").class("alert"),
    Key::update("", "").class("endpoint-audit-record"),
    Key::update("", "").class("policy-server-session"),
    Key::update("", "").class("post-auth-monit-config"),
    Key::update("", "").class("radius-session"),
    Key::update("", "").class("snmp-session-log"),
    Key::update("", "").class("system-event"),
    Key::update("", "").class("tacacs-accounting-detail"),
    Key::update("", "").class("tacacs-accounting-record"),
];

fn ap<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static WITH_PID: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^<\d+> <\d+> <[A-Z]+>").expect("static regex"));
    static NO_PID: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^<\d+> <[A-Z]+>").expect("static regex"));
    let Some(p) = input.program else {
        return false;
    };
    let m = input.body;
    let daemons: [&[u8]; 5] = [b"authmgr", b"stm", b"wms", b"dot1x-proc", b"nanny"];
    let ours = (daemons.iter().any(|d| p.starts_with(d)) && WITH_PID.is_match(m))
        || (p.starts_with(b"sapd") && NO_PID.is_match(m));
    if !ours {
        return false;
    }
    out.key(&KEYS[AP]);
    out.source = Some(Value::Concat("aruba:", p));
    true
}

fn clearpass<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified {
        return false;
    }
    let ns = input.netsource;
    let program = input.program.unwrap_or_default();
    if !(program.starts_with(b"CPPM_") || ns.vendor_product == "aruba_clearpass") {
        return false;
    }
    out.key(&KEYS[CLEARPASS]);
    for (i, c) in CPPM_CLASSES.iter().enumerate() {
        if program.len() >= c.len() && program[..c.len()].eq_ignore_ascii_case(c) {
            out.key(&KEYS[CPPM + i]);
        }
    }
    true
}

fn silverpeak<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified || input.netsource.vendor_product != "aruba_silverpeak" {
        return false;
    }
    out.key(&KEYS[SILVERPEAK]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn ap_daemons() {
        let c = classify_line(
            "<187>Mar 12 00:09:13 2024 md1 authmgr[4130]: <124198> <4130> <ERRS> <md1 10.10.10.10>  Missing server",
        );
        assert_eq!(c.sourcetype, "aruba:syslog");
        assert_eq!(c.index, "netops");
        assert_eq!(c.source, "aruba:authmgr");
        let c = classify_line(
            "<188>Mar 12 03:24:34 2024 md4 sapd[1362]: <127037> <WARN> |AP 00:0b:86:eb:4e:32@10.10.10.10 sapd| x",
        );
        assert_eq!(c.product, "ap");
        let c = classify_line("<188>Mar 12 03:24:34 2024 md4 sapd[1362]: plain text");
        assert_ne!(c.vendor, "aruba");
    }

    #[test]
    fn clearpass_by_program() {
        let c = classify_line("<14>Mar 12 03:24:34 cp1 CPPM_Alert: 1,2,3");
        assert_eq!(c.sourcetype, "aruba:clearpass");
        assert_eq!(c.class.map(|v| v == "alert"), Some(true));
    }
}
