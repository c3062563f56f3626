//! Citrix NetScaler / ADC (SC4S `addons/citrix/`): the native header
//! `<PRI> dd/mm/yyyy:HH:MM:SS ZONE host PPE : ...` (almost-syslog), SDX SVM messages
//! (PROGRAM `svm_*`), AAA lines (`[pid]: ...` without PROGRAM), AppFirewall CEF (the `cef`
//! topic) and the RFC 5424 listener.

use std::sync::LazyLock;

use std::ops::Range;

use crate::classify::gate::Gated;

use crate::classify::registry::{App, Input, Key, Out, Shape, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vtime;
use crate::message::{Format, Timestamp};
use crate::time::Zone;

use super::util::{Unsure, is_space};

pub static VENDOR: Vendor = Vendor {
    name: "citrix",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-citrix_netscaler",
            topic: Topic::AlmostSyslog,
            order: "citrix/app-almost-syslog-citrix_netscaler.conf",
            // `^<\d+> `: a space after the PRI.
            when: When::Header(Shape::SPACE, pri_space_and_colon),
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
            when: When::NetSource(&[".source.s_CITRIX_NETSCALER_RFC5424"]),
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
    static RE: LazyLock<Gated> = LazyLock::new(|| Gated::new(r":(\s+\S+)?\s+APPFW(\s+\S+){3}\s+:"));
    // The gate looks for `APPFW` first.
    RE.is_match(m)
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

/// `^<\d+> ` and a ` : ` somewhere: what the header pattern needs. After `> ` comes either
/// the stamp, which starts with `\d` (a non-ASCII byte may start a Unicode digit), or the
/// second space before the host when there is no stamp: a Cisco `<166> Mar 16 ...` line
/// with its ` : ` cannot match.
fn pri_space_and_colon(raw: &[u8]) -> bool {
    raw.iter()
        .take(6)
        .position(|&b| b == b'>')
        .is_some_and(|close| {
            raw.get(close + 1) == Some(&b' ')
                && matches!(raw.get(close + 2), Some(b'0'..=b'9' | b' ' | 0x80..))
        })
        && {
            static NEEDLE: LazyLock<memchr::memmem::Finder<'static>> =
                LazyLock::new(|| memchr::memmem::Finder::new(b" : "));
            crate::classify::vendors::util::contains(&NEEDLE, raw)
        }
}

fn native<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEADER: LazyLock<Gated> = LazyLock::new(|| {
        // SC4S's pattern ends `([A-Z\-0-9]+ : .*)`; that group is not read and `.*` takes the
        // empty string too, so it is left out: the captures walked the whole message for it.
        Gated::new(r"^<\d+> ((\d\d)/\d\d/\d\d\d\d:\d\d:\d\d:\d\d ?\w+)? ([^ ]+) [A-Z\-0-9]+ : ")
    });
    let raw = input.msg.raw;
    let Some(c) = HEADER.caps(raw) else {
        return false;
    };
    let Some(host) = c.get(3) else {
        return false;
    };
    if let (Some(ts), Some(first)) = (c.get(1), c.get(2)) {
        let day_first =
            input.options.citrix_ignore_mmdd || first.as_bytes() == day_digits(input.now_unix_secs);
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
    static RE: LazyLock<Gated> =
        LazyLock::new(|| Gated::new(r"([^\s]*)\s+((\d\d)[^\s]*(?:\s[^\s]+)?)(?:\s+\S+){2}\s+:"));
    if !input.program.is_some_and(|p| p.starts_with(b"svm_")) {
        return false;
    }
    let m = input.body;
    let spans = svm_scan(m).unwrap_or_else(|Unsure| {
        let c = RE.caps(m)?;
        Some([c.get(1)?.range(), c.get(2)?.range(), c.get(3)?.range()])
    });
    let Some([host, ts, first]) = spans else {
        return false;
    };
    let (ts, first) = (&m[ts], &m[first]);
    // Day-first when the stamp starts with the header's day of month.
    let header_day = input
        .msg
        .timestamp
        .map(|t| day_digits(t.unix_micros().div_euclid(1_000_000)));
    let day_first = input.options.citrix_ignore_mmdd || header_day.is_some_and(|d| first == d);
    if let Some(t) = stamp(ts, day_first, input.zone, input.now_unix_secs) {
        out.time(t);
    }
    out.host(&m[host]);
    out.key(&KEYS[SYSLOG_HDR]);
    if is_appfw(m) {
        out.key(&KEYS[APPFW]);
    }
    true
}

/// The SVM pattern `([^\s]*)\s+((\d\d)[^\s]*(?:\s[^\s]+)?)(?:\s+\S+){2}\s+:` without the
/// regex: the spans of the host, the stamp and its first two digits. Every run in it is
/// maximal (each is followed by a class it excludes), so a match starting in a word or its
/// trailing spaces is the match starting at that word: the leftmost match takes the first
/// word whose successor starts the stamp, or the empty host when MESSAGE starts with
/// spaces. The optional zone word, tried first, needs exactly one space before it.
/// `Err(Unsure)` on non-ASCII (Unicode `\s`, `\d`).
fn svm_scan(m: &[u8]) -> Result<Option<[Range<usize>; 3]>, Unsure> {
    if !m.is_ascii() {
        return Err(Unsure);
    }
    let word_from = |at: usize| -> Option<Range<usize>> {
        let start = at + m.get(at..)?.iter().position(|&b| !is_space(b))?;
        let len = m[start..].iter().take_while(|&&b| !is_space(b)).count();
        Some(start..start + len)
    };
    // The stamp starting at `w`: its span, or None.
    let stamp_at = |w: &Range<usize>| -> Option<Range<usize>> {
        if w.len() < 2 || !m[w.start..w.start + 2].iter().all(u8::is_ascii_digit) {
            return None;
        }
        let colon_after = |mut last: Range<usize>| -> bool {
            for _ in 0..2 {
                match word_from(last.end) {
                    Some(n) => last = n,
                    None => return false,
                }
            }
            word_from(last.end).is_some_and(|n| m[n.start] == b':')
        };
        if let Some(zone) = word_from(w.end)
            && zone.start == w.end + 1
            && colon_after(zone.clone())
        {
            return Some(w.start..zone.end);
        }
        colon_after(w.clone()).then(|| w.clone())
    };
    let first = word_from(0);
    if m.first().is_some_and(|&b| is_space(b))
        && let Some(w) = &first
        && let Some(ts) = stamp_at(w)
    {
        return Ok(Some([0..0, ts, w.start..w.start + 2]));
    }
    let mut host = first;
    while let Some(h) = host {
        let Some(next) = word_from(h.end) else {
            break;
        };
        if let Some(ts) = stamp_at(&next) {
            return Ok(Some([h, ts, next.start..next.start + 2]));
        }
        host = Some(next);
    }
    Ok(None)
}

/// `[pid]: module: ...` with no PROGRAM.
fn aaa<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static RE: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"^\[\d+\]: [^:]+: "));
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
    // SC4S's `tags(".source.s_CITRIX_NETSCALER_RFC5424")`: received on that listener.
    if out.identified || input.src.listener_id != "CITRIX_NETSCALER_RFC5424" {
        return false;
    }
    out.key(&KEYS[SYSLOG]);
    true
}

#[cfg(test)]
mod tests {
    use super::{day_digits, pri_space_and_colon, svm_scan};
    use crate::classify::gate::Gated;
    use crate::classify::testutil::classify_line;
    use proptest::prelude::*;

    /// The header gate is a necessary condition of the check on what the application can
    /// take (its parser requires `^<\d+>`).
    #[test]
    fn the_check_needs_its_shape() {
        use crate::classify::registry::Shape;
        use crate::classify::testutil::{assert_needs_shape, pri_is_digits};
        assert_needs_shape(
            Shape::SPACE,
            |raw| super::pri_space_and_colon(raw) && pri_is_digits(raw),
            &[
                "<134> 03/13/2024:19:33:53 GMT ns1 0-PPE-0 : default SSLLOG x",
                "<134>  ns1 A-1 : x",
            ],
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn svm_scan_agrees_with_the_regex(
            lead in prop_oneof![Just(""), Just(" "), Just("  ")],
            parts in proptest::collection::vec((
                prop_oneof![
                    Just("sdx1"), Just("24/03/2024:00:50:15"), Just("GMT"), Just("12"),
                    Just("1"), Just(":"), Just(":x"), Just("x:"), Just("0-PPE-0"), Just("é"),
                    Just("\u{0663}\u{0663}"),
                ],
                prop_oneof![Just(" "), Just("  "), Just("\t"), Just(" \n"), Just("\u{a0}")],
            ), 0..9),
        ) {
            let m: String = std::iter::once(lead.to_string())
                .chain(parts.iter().map(|(w, sep)| format!("{w}{sep}")))
                .collect();
            let re = Gated::new(r"([^\s]*)\s+((\d\d)[^\s]*(?:\s[^\s]+)?)(?:\s+\S+){2}\s+:");
            if let Ok(got) = svm_scan(m.as_bytes()) {
                let want = re.caps(m.as_bytes()).map(|c| {
                    [c.get(1).unwrap().range(), c.get(2).unwrap().range(), c.get(3).unwrap().range()]
                });
                prop_assert_eq!(got, want, "{:?}", m);
            } else {
                prop_assert!(!m.is_ascii());
            }
        }
    }

    #[test]
    fn header_check() {
        // The stamp, or the second space of a header without one: the pattern may match.
        assert!(pri_space_and_colon(
            b"<12> 03/23/2024:23:45:08 GMT adc1 ABC-D : x"
        ));
        assert!(pri_space_and_colon(b"<12>  adc1 ABC-D : x"));
        // A non-ASCII byte may begin a Unicode digit: left to the pattern.
        assert!(pri_space_and_colon(
            "<12> \u{0663}3/23/2024:23:45:08 GMT adc1 A : x".as_bytes()
        ));
        // A BSD stamp after the PRI cannot begin the header: skipped without the pattern.
        assert!(!pri_space_and_colon(
            b"<166> Mar 16 02:54:50 asa-fw-07 : %ASA-3-003164: x"
        ));
        assert!(!pri_space_and_colon(
            b"<12>03/23/2024:23:45:08 GMT adc1 ABC-D : x"
        ));
    }

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
