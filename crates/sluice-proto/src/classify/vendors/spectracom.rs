//! Spectracom NTP appliances (SC4S `addons/spectracom/app-netsource-spectracom-ntp.conf`):
//! messages a listener or `vendor_product_by_source` names `spectracom`/`ntp` whose MESSAGE
//! starts `[word] `, when no other parser identified them. The device sends its name where
//! syslog-ng expects a PROGRAM: PROGRAM becomes HOST and is removed.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "spectracom",
    keys: KEYS,
    apps: &[App {
        name: "app-netsource-spectracom-ntp",
        topic: Topic::NetSource,
        order: "spectracom/app-netsource-spectracom-ntp.conf",
        when: When::NetSource(&["spectracom_ntp"]),
        parse: ntp,
    }],
};

static KEYS: &[Key] = &[Key::new("spectracom", "ntp", "spectracom:ntp", "netops")];

/// `message('^\[[^\]]+\] ')`.
fn bracketed(m: &[u8]) -> bool {
    m.first() == Some(&b'[')
        && memchr::memchr(b']', m).is_some_and(|close| close > 1 && m.get(close + 1) == Some(&b' '))
}

fn ntp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified
        || !(ns.names("spectracom_ntp", "spectracom", "ntp"))
        || !bracketed(input.body)
    {
        return false;
    }
    // `set('$PROGRAM' value('HOST'))`: an empty PROGRAM would empty HOST; sluice keeps the
    // sender's address then.
    if let Some(p) = input.program {
        out.host(p);
    }
    out.program = Some(None);
    out.pid = Some(None);
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::VendorOptions;
    use crate::classify::testutil::{classifier_on, classify_line_on, event_on};

    #[test]
    fn ntp() {
        let cx = classifier_on(&["SPECTRACOM_NTP"], VendorOptions::default());
        let e = event_on(
            cx,
            "SPECTRACOM_NTP",
            "<184>TEST-SPECNTP-GPS01: [system] Log daemon has been restarted (LOGD)",
        );
        assert_eq!(e["sourcetype"], "spectracom:ntp");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["host"], "test-specntp-gps01");
        assert_eq!(e["fields"]["sc4s_vendor"], "spectracom");
        assert_eq!(e["event"], "[system] Log daemon has been restarted (LOGD)");
        // Not `[word] `: the listener's nix:syslog fallback.
        let c = classify_line_on(
            cx,
            "SPECTRACOM_NTP",
            "<35>PAM-tacplus[12023]: auth failed: 2 x",
        );
        assert_eq!(c.sourcetype, "nix:syslog");
        assert_eq!(c.vendor, "spectracom");
        let c = classify_line_on(cx, "SPECTRACOM_NTP", "<35>gps: [] x");
        assert_eq!(c.sourcetype, "nix:syslog");
        let c = classify_line_on(cx, "SPECTRACOM_NTP", "<35>gps: [a]x");
        assert_eq!(c.sourcetype, "nix:syslog");
        let c = classify_line_on(cx, "DEFAULT", "<184>GPS01: [system] Log daemon");
        assert_eq!(c.sourcetype, "nix:syslog");
        assert_eq!(c.vendor, "nix");
    }
}
