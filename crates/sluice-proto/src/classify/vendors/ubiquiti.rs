//! Ubiquiti UniFi (SC4S `addons/ubiquiti/`): devices that put `host,<mac>,<version>` where
//! the hostname belongs (sourcetype by the daemon in the message), and the USG/UDM on the
//! dedicated listener / netsource.

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "ubiquiti",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-ubiquiti_unifi",
            topic: Topic::NetSource,
            order: "ubiquiti/app-netsource-ubiquiti_unifi.conf",
            when: When::NetSource(&["ubiquiti_unifi"]),
            parse: netsource,
        },
        App {
            name: "app-syslog-ubiquiti_unifi",
            topic: Topic::Syslog,
            order: "ubiquiti/app-syslog-ubiquiti_unifi.conf",
            // SC4S has no filter: its anchored regex is the test; a comma is necessary.
            when: When::Always,
            parse: unifi,
        },
    ],
};

const UNIFI: usize = 0;
const LINK: usize = 1;
const DHCP: usize = 2;
const DNS: usize = 3;
const FW: usize = 4;
const MCAD: usize = 5;
const SUDO: usize = 6;
const HOSTAPD: usize = 7;
const THREAT: usize = 8;
const WIRELESS: usize = 9;
const EDGESWITCH: usize = 10;
const NS_FW: usize = 11;
const NS_THREAT: usize = 12;
const NS_LINK: usize = 13;
const NS_SUDO: usize = 14;

static KEYS: &[Key] = &[
    Key::new("ubiquiti", "unifi", "ubnt", "netops"),
    Key::update("ubnt:link", "").class("link"),
    Key::update("ubnt:dhcp", "").class("dhcp"),
    Key::update("ubnt:dns", "").class("dns"),
    Key::update("ubnt:fw", "").class("fw"),
    Key::update("ubnt:mcad", "").class("mcad"),
    Key::update("ubnt:sudo", "").class("sudo"),
    Key::update("ubnt:hostapd", "").class("hostapd"),
    Key::update("ubnt:threat", "").class("threat"),
    Key::update("ubnt:wireless", "").class("wireless"),
    Key::update("ubnt:edgeswitch", "").class("edgeswitch"),
    Key::new("ubiquiti", "unifi", "ubnt:fw", "netfw"),
    Key::update("ubnt:threat", "netids").class("threat"),
    Key::update("ubnt:link", "netops").class("link"),
    Key::update("ubnt:sudo", "netops").class("sudo"),
];

/// SC4S's `[^)]\s\S+\skernel:\s[^ll\sheader][^\[\d+.\d+\]]\S+\s\w+:` (its character classes
/// kept as written).
static THREAT_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[^)]\s\S+\skernel:\s[^l\sheader][^\[\d+.\]]\S+\s\w+:").expect("static regex")
});

fn unifi<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEAD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^(?:([^, ]+)(?: |,))?([abcedf0-9]+),(?:v|.+-)\d+\.\d+\.\d+(?:\.\d+)?(?:\+\d+)?(?:: | )",
        )
        .expect("static regex")
    });
    static MODEL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^U[A-Z0-9\-a-z]+$").expect("static regex"));
    let m = input.body;
    // `captures` allocates its result; most messages with a comma are not UniFi's, and
    // `is_match` allocates nothing (the hot-path allocation test counts this).
    if memchr::memchr(b',', m).is_none() || !HEAD.is_match(m) {
        return false;
    }
    let Some(c) = HEAD.caps(m) else {
        return false;
    };
    out.key(&KEYS[UNIFI]);
    if let Some(h) = c.get(1)
        && !MODEL.is_match(h.as_bytes())
    {
        out.host(&m[h.range()]);
    }
    static TESTS: LazyLock<[(Regex, usize); 10]> = LazyLock::new(|| {
        let re = |s: &str| Regex::new(s).expect("static regex");
        [
            (re(r"^\S+\slinkcheck:"), LINK),
            (re(r"^\S+\sdhcpd:\s\w+"), DHCP),
            (re(r"dnsmasq-dhcp\[\d+\]"), DHCP),
            (re(r"dnsmasq\[\d+\]"), DNS),
            (re(r"kernel:\s\[\S+-[A|B|D]"), FW),
            (re(r"\d+:\d+:\d+\s\S+\smcad:"), MCAD),
            (re(r"\d+:\d+:\d+\s\S+\ssudo"), SUDO),
            (re(r"hostapd:\s+ath"), HOSTAPD),
            (
                re(r"EVT_AP_STA_ASSOC_TRACKER_DBG:|wevent\.ubnt_custom_event\(\):"),
                WIRELESS,
            ),
            (re(r"traputil\.c\(696\) "), EDGESWITCH),
        ]
    });
    // SC4S's elif chain; the threat test sits between hostapd and wireless.
    for (i, (re, k)) in TESTS.iter().enumerate() {
        if i == 8 && THREAT_RE.is_match(m) {
            out.key(&KEYS[THREAT]);
            return true;
        }
        if re.is_match(m) {
            out.key(&KEYS[*k]);
            return true;
        }
    }
    true
}

fn netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static LINKCHECK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\S+\slinkcheck:").expect("static regex"));
    static SUDO_RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d+:\d+:\d+\s\S+\ssudo:").expect("static regex"));
    if out.identified || input.netsource.vendor_product != "ubiquiti_unifi" {
        return false;
    }
    out.key(&KEYS[NS_FW]);
    // MSG := LEGACY_MSGHDR MSG, PROGRAM unset: the header text is contiguous in the raw
    // message, so the new MESSAGE is a slice of it.
    let raw = input.msg.raw;
    let mut m = input.body;
    if let Some(p) = input.program {
        let start = (p.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
        let end = (m.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize) + m.len();
        if start <= end && end <= raw.len() {
            m = &raw[start..end];
            out.message(m);
            out.program = Some(None);
            out.pid = Some(None);
        }
    }
    if THREAT_RE.is_match(m) {
        out.key(&KEYS[NS_THREAT]);
    } else if LINKCHECK.is_match(m) {
        out.key(&KEYS[NS_LINK]);
    } else if SUDO_RE.is_match(m) {
        out.key(&KEYS[NS_SUDO]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn switch_with_mac_and_version() {
        let c = classify_line(
            "<27>Apr 12 01:44:22 usw1,18e8294876c3,v4.0.66.10832 switch: DOT1S: dot1sBpduReceive(): Discarding",
        );
        assert_eq!(c.sourcetype, "ubnt");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "ubiquiti");
        let c = classify_line(
            "<27>Apr 12 01:44:22 U7PG2,18e8294876c3,v4.0.66.10832: hostapd: ath0: STA x",
        );
        assert_eq!(c.sourcetype, "ubnt:hostapd");
        let c = classify_line("<27>Apr 12 01:44:22 h1 app: a,b,c");
        assert_ne!(c.vendor, "ubiquiti");
    }
}
