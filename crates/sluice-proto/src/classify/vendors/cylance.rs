//! BlackBerry Cylance PROTECT (SC4S `addons/cylance/app-syslog-cylance_protect.conf`):
//! PROGRAM `CylancePROTECT` exactly; the sourcetype and class follow the `Event Type:`.

use memchr::memmem;
use std::sync::LazyLock;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::util::is_space;

pub static VENDOR: Vendor = Vendor {
    name: "cylance",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-cylance_protect",
        topic: Topic::Pgm,
        order: "cylance/app-syslog-cylance_protect.conf",
        when: When::Program(&["CylancePROTECT"]),
        parse: protect,
    }],
};

/// SC4S's `if / elif` chain: `message('Event\sType:\s+<name>')`, tried in this order. Each
/// is a prefix test of what follows `Event Type:`; `Device` comes before `DeviceControl`
/// there, so a DeviceControl event is `syslog_device` in SC4S, and so it is here.
const TYPES: [&[u8]; 9] = [
    b"AuditLog",
    b"ThreatClassification",
    b"ExploitAttempt",
    b"AppControl",
    b"Threat,",
    b"Device",
    b"DeviceControl",
    b"ScriptControl",
    b"Optics",
];

static KEYS: &[Key] = &[
    Key::new("cylance", "protect", "syslog_protect", "epintel"),
    Key::update("syslog_audit_log", "epintel").class("auditlog"),
    Key::update("syslog_threat_classification", "epintel").class("threatclassification"),
    Key::update("syslog_exploit", "epintel").class("exploitattempt"),
    Key::update("syslog_app_control", "epintel").class("appcontrol"),
    Key::update("syslog_threat", "epintel").class("threat"),
    Key::update("syslog_device", "epintel").class("device"),
    Key::update("syslog_device_control", "epintel").class("devicecontrol"),
    Key::update("syslog_script_control", "epintel").class("scriptcontrol"),
    Key::update("syslog_optics", "epintel").class("optics"),
];

/// Which of [`TYPES`] some `Event\sType:\s+` in `m` is followed by (bit `i` for `TYPES[i]`).
fn event_types(m: &[u8]) -> u16 {
    static EVENT: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"Event"));
    let mut found = 0;
    for at in EVENT.find_iter(m) {
        let rest = &m[at + 5..];
        if !rest.first().is_some_and(|&b| is_space(b)) {
            continue;
        }
        let Some(rest) = rest[1..].strip_prefix(b"Type:") else {
            continue;
        };
        let spaces = rest.iter().take_while(|&&b| is_space(b)).count();
        if spaces == 0 {
            continue;
        }
        // `\s+` backtracks, but a name never starts with a space, so only the end of the
        // run can be followed by one.
        let name = &rest[spaces..];
        for (i, t) in TYPES.iter().enumerate() {
            if name.starts_with(t) {
                found |= 1 << i;
            }
        }
    }
    found
}

fn protect<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"CylancePROTECT") {
        return false;
    }
    out.key(&KEYS[0]);
    let found = event_types(input.body);
    if found != 0 {
        out.key(&KEYS[1 + found.trailing_zeros() as usize]);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::event_types;
    use crate::classify::gate::Gated;
    use crate::classify::testutil::classify_line;
    use proptest::prelude::*;

    fn check(body: &str, sourcetype: &str, class: Option<&str>) {
        let c = classify_line(&format!(
            "<134>1 2024-05-14T20:13:01.246813+00:00 cylance-con01 CylancePROTECT - - - {body}"
        ));
        assert_eq!(c.sourcetype, sourcetype, "{body}");
        assert_eq!(c.index, "epintel");
        assert_eq!(c.vendor, "cylance");
        assert_eq!(c.product, "protect");
        assert_eq!(
            c.class.map(|c| c.to_string_lossy()).as_deref(),
            class,
            "{body}"
        );
        assert_eq!(c.app, "app-syslog-cylance_protect");
    }

    /// SC4S's `test_cylance_protect.py` event types, and the order of its `elif` chain.
    #[test]
    fn event_type_chain() {
        check(
            "Event Type: ExploitAttempt, Event Name: none, Device Name: DEVICENAME",
            "syslog_exploit",
            Some("exploitattempt"),
        );
        check(
            "Event Type: AuditLog, Event Name: LoginSuccess",
            "syslog_audit_log",
            Some("auditlog"),
        );
        check(
            "Event Type: ThreatClassification, x",
            "syslog_threat_classification",
            Some("threatclassification"),
        );
        check(
            "Event Type: AppControl, x",
            "syslog_app_control",
            Some("appcontrol"),
        );
        check(
            "Event Type: Threat, Event Name: threat_found",
            "syslog_threat",
            Some("threat"),
        );
        check(
            "Event Type: Device, Event Name: SystemSecurity",
            "syslog_device",
            Some("device"),
        );
        // `Device` is tested before `DeviceControl`.
        check(
            "Event Type: DeviceControl, x",
            "syslog_device",
            Some("device"),
        );
        check(
            "Event Type: ScriptControl, x",
            "syslog_script_control",
            Some("scriptcontrol"),
        );
        check("Event Type:\t  Optics, x", "syslog_optics", Some("optics"));
        // `Threat` without the comma, or no type: the family's base sourcetype.
        check("Event Type: ThreatX", "syslog_protect", None);
        check("no event type at all", "syslog_protect", None);
        // The chain's order wins over the order in the message.
        check(
            "Event Type: Optics Event Type: AuditLog",
            "syslog_audit_log",
            Some("auditlog"),
        );
        let c = classify_line("<134>May 14 20:13:01 con CylancePROTECTx: Event Type: AuditLog");
        assert_eq!(c.sourcetype, "nix:syslog");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        /// The scan agrees with SC4S's nine regexes.
        #[test]
        fn scan_agrees_with_the_regexes(parts in proptest::collection::vec(prop_oneof![
            Just("Event"), Just(" "), Just("\t"), Just("Type:"), Just("Type: "), Just("AuditLog"),
            Just("Threat"), Just(","), Just("Device"), Just("Control"), Just("Optics"), Just("x"),
            Just("é"),
        ], 0..12)) {
            let m: String = parts.concat();
            let mut want = 0u16;
            for (i, t) in super::TYPES.iter().enumerate() {
                let re = Gated::new(&format!(r"Event\sType:\s+{}", regex::escape(std::str::from_utf8(t).unwrap())));
                if re.is_match(m.as_bytes()) {
                    want |= 1 << i;
                }
            }
            prop_assert_eq!(event_types(m.as_bytes()), want, "{:?}", m);
        }
    }
}
