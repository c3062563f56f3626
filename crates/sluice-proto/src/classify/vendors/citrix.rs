//! Citrix NetScaler / ADC (SC4S `addons/citrix/`): the native header
//! `<PRI> dd/mm/yyyy:HH:MM:SS ZONE host PPE : ...` (almost-syslog), SDX SVM messages
//! (PROGRAM `svm_*`), AAA lines (`[pid]: ...` without PROGRAM), AppFirewall CEF (the `cef`
//! topic) and the RFC 5424 listener.

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vtime;
use crate::message::{Format, Timestamp};
use crate::time::Zone;

pub static VENDOR: Vendor = Vendor {
    name: "citrix",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-citrix_netscaler",
            topic: Topic::AlmostSyslog,
            order: "citrix/app-almost-syslog-citrix_netscaler.conf",
            when: When::Raw(pri_space_and_colon),
            parse: native,
        },
        App {
            name: "app-cef-citrix_netscaler",
            topic: Topic::Sub("cef"),
            order: "citrix/app-cef-citrix_netscaler.conf",
            when: When::Check(cef_check),
            parse: cef,
        },
        App {
            name: "app-netsource-citrix_netscaler_rfc5424",
            topic: Topic::NetSource,
            order: "citrix/app-netsource-citrix_netscaler_rfc5424.conf",
            when: When::NetSource(&["citrix_netscaler_rfc5424"]),
            parse: rfc5424_listener,
        },
        App {
            name: "app-syslog-citrix-netscaler_aaa",
            topic: Topic::Syslog,
            order: "citrix/app-syslog-citrix-netscaler_aaa.conf",
            // `^\[\d+\]: ` on MESSAGE.
            when: When::BodyPrefix(&["["]),
            parse: aaa,
        },
        App {
            name: "app-syslog-citrix_netscaler_svm",
            topic: Topic::Pgm,
            order: "citrix/app-syslog-citrix_netscaler_svm.conf",
            when: When::ProgramPrefix(&["svm_"]),
            parse: svm,
        },
    ],
};

const SYSLOG: usize = 0;
const APPFW: usize = 1;
const CEF: usize = 2;
const SYSLOG_HDR: usize = 3;

static KEYS: &[Key] = &[
    Key::new("citrix", "netscaler", "citrix:netscaler:syslog", "netfw"),
    Key::update("citrix:netscaler:appfw", ""),
    Key::update("citrix:netscaler:appfw:cef", "netfw"),
    Key::new("citrix", "netscaler", "citrix:netscaler:syslog", "netfw").template(Template::HdrMsg),
];

/// `: [word] APPFW word word word :`, the AppFirewall records.
fn is_appfw(m: &[u8]) -> bool {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r":(\s+\S+)?\s+APPFW(\s+\S+){3}\s+:").expect("static regex"));
    crate::classify::vendors::util::find_lit!(m, b"APPFW").is_some() && RE.is_match(m)
}

/// NetScaler writes `dd/mm/yyyy` or `mm/dd/yyyy` depending on its configuration. SC4S
/// reads day-first when the first number is today's day (`day_first`), else month-first;
/// when that reading is impossible sluice tries the other one rather than lose the time.
fn stamp(s: &[u8], day_first: bool, zone: &Zone, now: i64) -> Option<Timestamp> {
    const DMY: &[&str] = &[
        "%d/%m/%Y:%H:%M:%S %z",
        "%d/%m/%Y:%H:%M:%S",
        "%d/%m/%Y:%H:%M:%S %Z",
    ];
    const MDY: &[&str] = &[
        "%m/%d/%Y:%H:%M:%S %z",
        "%m/%d/%Y:%H:%M:%S",
        "%m/%d/%Y:%H:%M:%S %Z",
    ];
    let (first, second) = if day_first { (DMY, MDY) } else { (MDY, DMY) };
    vtime::strptime_any(first, s, zone, now).or_else(|| vtime::strptime_any(second, s, zone, now))
}

/// The day of month of `unix_secs` in UTC, as two digits.
fn day_digits(unix_secs: i64) -> [u8; 2] {
    // Civil-from-days (Howard Hinnant's algorithm), enough for the day of month.
    let z = unix_secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    [b'0' + d / 10, b'0' + d % 10]
}

/// `^<\d+> ` and a ` : ` somewhere: what the header pattern needs.
fn pri_space_and_colon(raw: &[u8]) -> bool {
    raw.iter()
        .take(6)
        .position(|&b| b == b'>')
        .is_some_and(|close| raw.get(close + 1) == Some(&b' '))
        && {
            static NEEDLE: LazyLock<memchr::memmem::Finder<'static>> =
                LazyLock::new(|| memchr::memmem::Finder::new(b" : "));
            crate::classify::vendors::util::contains(&NEEDLE, raw)
        }
}

fn native<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        // SC4S's pattern ends `([A-Z\-0-9]+ : .*)`; that group is not read and `.*` takes the
        // empty string too, so it is left out: the captures walked the whole message for it.
        Regex::new(r"^<\d+> ((\d\d)/\d\d/\d\d\d\d:\d\d:\d\d:\d\d ?\w+)? ([^ ]+) [A-Z\-0-9]+ : ")
            .expect("static regex")
    });
    let raw = input.msg.raw;
    let Some(c) = HEADER.caps(raw) else {
        return false;
    };
    let Some(host) = c.get(3) else {
        return false;
    };
    if let (Some(ts), Some(first)) = (c.get(1), c.get(2)) {
        let day_first = first.as_bytes() == day_digits(input.now_unix_secs);
        if let Some(t) = stamp(ts.as_bytes(), day_first, input.zone, input.now_unix_secs) {
            out.time(t);
        }
    }
    out.key(&KEYS[SYSLOG]);
    let after_pri = memchr::memchr(b'>', raw).map_or(raw, |i| &raw[i + 1..]);
    let m = after_pri.trim_ascii_start();
    if is_appfw(m) {
        out.key(&KEYS[APPFW]);
    }
    out.host(&raw[host.range()]);
    // syslog-parser(no-header): MESSAGE is everything after the PRI; no PROGRAM.
    out.message(m);
    out.program = Some(None);
    out.pid = Some(None);
    out.format = Some(Format::Rfc3164);
    out.identified = true;
    true
}

fn svm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"([^\s]*)\s+((\d\d)[^\s]*(?:\s[^\s]+)?)(?:\s+\S+){2}\s+:")
            .expect("static regex")
    });
    if !input.program.is_some_and(|p| p.starts_with(b"svm_")) {
        return false;
    }
    let m = input.body;
    let Some(c) = RE.caps(m) else {
        return false;
    };
    let (Some(host), Some(ts), Some(first)) = (c.get(1), c.get(2), c.get(3)) else {
        return false;
    };
    // Day-first when the stamp starts with the header's day of month.
    let header_day = input
        .msg
        .timestamp
        .map(|t| day_digits(t.unix_micros().div_euclid(1_000_000)));
    let day_first = header_day.is_some_and(|d| first.as_bytes() == d);
    if let Some(t) = stamp(ts.as_bytes(), day_first, input.zone, input.now_unix_secs) {
        out.time(t);
    }
    out.host(&m[host.range()]);
    out.key(&KEYS[SYSLOG_HDR]);
    if is_appfw(m) {
        out.key(&KEYS[APPFW]);
    }
    true
}

/// `[pid]: module: ...` with no PROGRAM.
fn aaa<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\[\d+\]: [^:]+: ").expect("static regex"));
    if input.program.is_some_and(|p| !p.is_empty()) || !RE.is_match(input.body) {
        return false;
    }
    out.key(&KEYS[SYSLOG_HDR]);
    out.program = Some(None);
    out.pid = Some(None);
    true
}

/// The filter of [`cef`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn cef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains("device_vendor", b"Citrix") && out.nv.contains("device_event_class", b"APPFW")
}

fn cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !cef_check(input, out) {
        return false;
    }
    out.key(&KEYS[CEF]);
    true
}

fn rfc5424_listener<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified || input.netsource.vendor_product != "citrix_netscaler_rfc5424" {
        return false;
    }
    out.key(&KEYS[SYSLOG]);
    true
}

#[cfg(test)]
mod tests {
    use super::day_digits;
    use crate::classify::testutil::classify_line;

    #[test]
    fn days() {
        assert_eq!(&day_digits(1_711_929_600), b"01");
        assert_eq!(&day_digits(1_711_238_400), b"24");
    }

    #[test]
    fn native_header() {
        let c = classify_line(
            "<12> 03/23/2024:23:45:08 GMT adc1 ABC-D : SSLVPN HTTPREQUEST 1234567 : Context user@192.0.2.1",
        );
        assert_eq!(c.sourcetype, "citrix:netscaler:syslog");
        assert_eq!(c.index, "netfw");
        let c = classify_line(
            "<12> 24/03/2024:05:10:43 GMT adc3 0-PPE-0 : default APPFW APPFW_STARTURL 5687021 0 :  10.160.44.137",
        );
        assert_eq!(c.sourcetype, "citrix:netscaler:appfw");
        let c = classify_line(
            "<12>Mar 24 00:50:15 svm_service: sdx1  24/03/2024:00:50:15 GMT ns2 0-PPE-0 : GUI CMD_EXECUTED : User",
        );
        assert_eq!(c.sourcetype, "citrix:netscaler:syslog");
        assert_eq!(c.vendor, "citrix");
    }
}
