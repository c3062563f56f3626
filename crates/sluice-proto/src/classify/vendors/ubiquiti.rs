//! Ubiquiti UniFi (SC4S `addons/ubiquiti/`): devices that put `host,<mac>,<version>` where
//! the hostname belongs (sourcetype by the daemon in the message), and the USG/UDM on the
//! dedicated listener / netsource.

use std::sync::LazyLock;

use crate::classify::gate::Gated;

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
            // SC4S has no filter: its anchored regex is the test, and the check the shape
            // that regex needs at the start of MESSAGE.
            when: When::Check(unifi_check),
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
static THREAT_RE: LazyLock<Gated> =
    LazyLock::new(|| Gated::new(r"[^)]\s\S+\skernel:\s[^l\sheader][^\[\d+.\]]\S+\s\w+:"));

/// [`unifi`]'s check: MESSAGE can match its HEAD regex.
fn unifi_check<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    head_possible(input.body)
}

/// A necessary condition for `HEAD` (below) on `m`, without a regex: `HEAD` reads
/// `^(?:([^, ]+)(?: |,))?([abcedf0-9]+),(?:v|.+-)\d+\.\d+\.\d+...`, so
/// - the hex run and its comma start at 0 or right after the first space or comma (the
///   optional group can take nothing but non-separators, and a separator must follow it);
/// - after that comma comes `v` and a version, or (`.+-`) a `-` and a version at least one
///   byte later.
///
/// A version is `\d+\.\d+\.\d+`; `\d` also takes non-ASCII digits, so any byte >= 0x80
/// counts as a digit here. The UniFi regex walked whole messages for `.+-` (21 % of the
/// daemon's CPU on nix:syslog traffic, whose `seq: 0000000000, ` has such a comma).
fn head_possible(m: &[u8]) -> bool {
    let is_hex = |b: &u8| matches!(b, b'a'..=b'f' | b'0'..=b'9');
    let hex_comma = |at: usize| -> Option<usize> {
        let rest = m.get(at..)?;
        // Most words start with no hex digit: refused before the run is counted.
        if !rest.first().is_some_and(is_hex) {
            return None;
        }
        let run = rest.iter().take_while(|b| is_hex(b)).count();
        (m.get(at + run) == Some(&b',')).then_some(at + run + 1)
    };
    let at_start = hex_comma(0);
    // The first word is short: a plain loop beats setting up a vector search (or an
    // iterator's).
    let mut sep = 0;
    while sep < m.len() && m[sep] != b' ' && m[sep] != b',' {
        sep += 1;
    }
    let after_word = if sep > 0 && sep < m.len() {
        hex_comma(sep + 1)
    } else {
        None
    };
    let mut dash_from = None;
    for c in [at_start, after_word].into_iter().flatten() {
        if m.get(c) == Some(&b'v') && version_at(m, c + 1) {
            return true;
        }
        dash_from = Some(dash_from.map_or(c + 1, |d: usize| d.min(c + 1)));
    }
    let Some(mut at) = dash_from else {
        return false;
    };
    // The version's dots come after the dash: one look for a dot settles most lines (a
    // nix:syslog line has dashes in its stamps, but often no dot).
    if m.get(at..)
        .is_none_or(|rest| memchr::memchr(b'.', rest).is_none())
    {
        return false;
    }
    while let Some(i) = m.get(at..).and_then(|rest| memchr::memchr(b'-', rest)) {
        if version_at(m, at + i + 1) {
            return true;
        }
        at += i + 1;
    }
    false
}

/// `\d+\.\d+\.\d+` at `at` (bytes >= 0x80 taken as digits: a superset).
fn version_at(m: &[u8], mut at: usize) -> bool {
    for part in 0..3 {
        let digits = m
            .get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|&&b| b.is_ascii_digit() || b >= 0x80)
            .count();
        if digits == 0 {
            return false;
        }
        at += digits;
        if part < 2 {
            if m.get(at) != Some(&b'.') {
                return false;
            }
            at += 1;
        }
    }
    true
}

/// SC4S's UniFi header (`app-syslog-ubiquiti_unifi`): the parser's regex, and the one
/// [`head_possible`] must hold for.
const HEAD_PATTERN: &str =
    r"^(?:([^, ]+)(?: |,))?([abcedf0-9]+),(?:v|.+-)\d+\.\d+\.\d+(?:\.\d+)?(?:\+\d+)?(?:: | )";

fn unifi<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEAD: LazyLock<Gated> = LazyLock::new(|| Gated::new(HEAD_PATTERN));
    static MODEL: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"^U[A-Z0-9\-a-z]+$"));
    let m = input.body;
    if !head_possible(m) {
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
    static TESTS: LazyLock<[(Gated, usize); 10]> = LazyLock::new(|| {
        let re = |s: &str| Gated::new(s);
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
    static LINKCHECK: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"\S+\slinkcheck:"));
    static SUDO_RE: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"\d+:\d+:\d+\s\S+\ssudo:"));
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

    /// The check passes the messages SC4S's regex takes (both forms of the version) and
    /// skips loggen's `seq: 0000000000, ` line, whose hex-and-comma start made the regex walk
    /// the whole message.
    #[test]
    fn check_skips_what_the_regex_cannot_match() {
        use crate::classify::dispatch::check_verdict;
        const APP: &str = "app-syslog-ubiquiti_unifi";
        for line in [
            "<27>Apr 12 01:44:22 usw1,18e8294876c3,v4.0.66.10832 switch: DOT1S: x",
            "<27>Apr 12 01:44:22 U7PG2,18e8294876c3,v4.0.66.10832: hostapd: ath0: STA x",
            "<30>Apr 12 01:44:22 UDM,f09fc26f4419,udm-1.12.33+3: kernel: x",
            "<30>Apr 12 01:44:22 f09fc26f4419,UAP-AC-2.4.6.12345 x",
        ] {
            assert_eq!(check_verdict(line, APP), Some(true), "{line}");
            assert_eq!(classify_line(line).vendor, "ubiquiti", "{line}");
        }
        for line in [
            "<38>2026-11-26T15:21:42 localhost sshd[1234]: seq: 0000000000, thread: 0000, runid: 1795706502, stamp: 2026-11-26T15:21:42 PADDPADD",
            "<27>Apr 12 01:44:22 h1 app: a,b,c",
            "<27>Apr 12 01:44:22 h1 app: ab,c v1.2.3",
        ] {
            assert_eq!(check_verdict(line, APP), Some(false), "{line}");
            assert_ne!(classify_line(line).vendor, "ubiquiti", "{line}");
        }
    }

    #[test]
    fn head_shapes() {
        use super::head_possible;
        assert!(head_possible(b"usw,18e8294876c3,v4.0.66 x"));
        assert!(head_possible(b"18e8294876c3,v4.0.66 x"));
        assert!(head_possible(b"h 18e8294876c3,x-1.2.3: y"));
        assert!(!head_possible(b"h 18e8294876c3,x-1.2: y"));
        assert!(!head_possible(b"h 18e8294876c3;x-1.2.3: y"));
        assert!(!head_possible(b"h1 h2 18e8294876c3,v1.2.3 y"));
        assert!(!head_possible(b""));
    }

    proptest::proptest! {
            /// `head_possible` is a necessary condition of the HEAD regex.
            #[test]
            fn head_possible_holds_wherever_the_regex_matches(
                pieces in proptest::collection::vec(proptest::sample::select(&[
                    "usw", "18e8294876c3", "ab", "0", ",", " ", "v", "4.0.66", "1.2.3", ".", "-",
                    "x-", ": ", "+12", "é", "G", "h1",
                ][..]), 0..10),
            ) {
                static HEAD: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
    regex::bytes::Regex::new(super::HEAD_PATTERN).expect("static regex")
                });
                let m = pieces.concat();
                proptest::prop_assert!(!HEAD.is_match(m.as_bytes()) || super::head_possible(m.as_bytes()), "{m:?}");
            }
        }
}
