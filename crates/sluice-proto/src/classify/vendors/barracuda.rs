//! Barracuda (SC4S `addons/barracuda/`): the WAF, whose header has an ISO stamp with a
//! space before the zone and the log type (`SYS`, `WF`, `TR`, `AUDIT`, `NF`) in place of
//! PROGRAM; and `barracuda:<logType>` key=value logs on the dedicated listener / netsource.

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Shape, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::{Inline, Value};
use crate::classify::vtime;
use crate::message::Format;

use super::util::{Unsure, dot_star_end, is_space};

pub static VENDOR: Vendor = Vendor {
    name: "barracuda",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-barracuda_waf",
            topic: Topic::AlmostSyslog,
            order: "barracuda/app-almost-syslog-barracuda_waf.conf",
            // The stamp follows the PRI (after spaces): a digit or a space there.
            when: When::Header(Shape::DIGIT.or(Shape::SPACE), iso_stamp_after_pri),
            parse: waf_header,
        },
        App {
            name: "app-netsource-barracuda_syslog",
            topic: Topic::NetSource,
            order: "barracuda/app-netsource-barracuda_syslog.conf",
            when: When::NetSource(&["barracuda_syslog"]),
            parse: netsource,
        },
        App {
            name: "app-syslog-barracuda_waf",
            topic: Topic::Pgm,
            order: "barracuda/app-syslog-barracuda_waf.conf",
            when: When::Program(&["SYS", "WF", "TR", "AUDIT", "NF"]),
            parse: waf,
        },
    ],
};

const SYSLOG: usize = 0;
const NF: usize = 1;
const WAF_INDEX: usize = 2;
const WAF: usize = 3;
const WAF_TYPES: usize = 4;

static KEYS: &[Key] = &[
    Key::new("barracuda", "syslog", "barracuda:syslog", "netops").template(Template::MsgOnly),
    Key::update("", "netfw"),
    Key::update("", "netwaf"),
    Key::new("barracuda", "waf", "barracuda:syslog", "netwaf"),
    // One per log type, in `LOG_TYPES` order.
    Key::update("barracuda:system", ""),
    Key::update("barracuda:waf", ""),
    Key::update("barracuda:web", ""),
    Key::update("barracuda:audit", ""),
    Key::update("barracuda:firewall", ""),
];

const LOG_TYPES: [&[u8]; 5] = [b"SYS", b"WF", b"TR", b"AUDIT", b"NF"];

/// `^<\d+> *(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{4})\s{1,2}([^ ]+) (SYS|WF|TR|AUDIT|NF) (.*)`:
/// SC4S's header regex. An all-ASCII message (where `\d`, `\s` and `.` mean their ASCII
/// classes) is matched by [`waf_header_scan`]; others go through the regex.
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^<\d+> *(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{4})\s{1,2}([^ ]+) (SYS|WF|TR|AUDIT|NF) (.*)",
    )
    .expect("static regex")
});

/// The spans of [`HEADER`]'s groups: stamp, host, log type, message.
type HeaderSpans = [std::ops::Range<usize>; 4];

fn waf_header_regex(raw: &[u8]) -> Option<HeaderSpans> {
    let c = HEADER.caps(raw)?;
    Some([
        c.get(1)?.range(),
        c.get(2)?.range(),
        c.get(3)?.range(),
        c.get(4)?.range(),
    ])
}

/// [`HEADER`] by hand (the regex cost microseconds); `Err` on a non-ASCII byte where the
/// regex's Unicode classes apply.
fn waf_header_scan(raw: &[u8]) -> Result<Option<HeaderSpans>, Unsure> {
    // A class test: `Err` where a non-ASCII byte would need the Unicode meaning.
    let class = |at: usize, ascii: fn(u8) -> bool| match raw.get(at) {
        Some(&b) if !b.is_ascii() => Err(Unsure),
        Some(&b) => Ok(ascii(b)),
        None => Ok(false),
    };
    let digit = |b: u8| b.is_ascii_digit();
    if raw.first() != Some(&b'<') {
        return Ok(None);
    }
    let mut at = 1;
    while class(at, digit)? {
        at += 1;
    }
    if at == 1 || raw.get(at) != Some(&b'>') {
        return Ok(None);
    }
    at += 1;
    while raw.get(at) == Some(&b' ') {
        at += 1;
    }
    let stamp = at..at + 29;
    for i in 0..29 {
        let ok = match i {
            4 | 7 => raw.get(at + i) == Some(&b'-'),
            10 | 23 => raw.get(at + i) == Some(&b' '),
            13 | 16 => raw.get(at + i) == Some(&b':'),
            19 => raw.get(at + i) == Some(&b'.'),
            24 => matches!(raw.get(at + i), Some(b'+' | b'-')),
            _ => class(at + i, digit)?,
        };
        if !ok {
            return Ok(None);
        }
    }
    if !class(stamp.end, is_space)? {
        return Ok(None);
    }
    // `\s{1,2}` is greedy: a host starting after two spaces first, then after one.
    let firsts = if class(stamp.end + 1, is_space)? {
        [Some(stamp.end + 2), Some(stamp.end + 1)]
    } else {
        [Some(stamp.end + 1), None]
    };
    for host_at in firsts.into_iter().flatten() {
        let mut end = host_at;
        while class(end, |b| b != b' ')? {
            end += 1;
        }
        if end == host_at || raw.get(end) != Some(&b' ') {
            continue;
        }
        let host = host_at..end;
        // The host stops at a space: the type follows it.
        let rest = &raw[host.end + 1..];
        let Some(kind) = LOG_TYPES
            .iter()
            .find(|t| rest.starts_with(t) && rest.get(t.len()) == Some(&b' '))
        else {
            continue;
        };
        let kind = host.end + 1..host.end + 1 + kind.len();
        let msg_at = kind.end + 1;
        return Ok(Some([stamp, host, kind, msg_at..dot_star_end(raw, msg_at)]));
    }
    Ok(None)
}

/// `<PRI>YYYY-mm-dd HH:MM:SS.fff +zzzz  host TYPE message`: read as RFC 3164 with the log
/// type as PROGRAM.
fn waf_header<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw = input.msg.raw;
    let spans = waf_header_scan(raw).unwrap_or_else(|Unsure| waf_header_regex(raw));
    let Some([stamp, host, kind, message]) = spans else {
        return false;
    };
    let Some(ts) = vtime::strptime(
        "%Y-%m-%d %H:%M:%S.%f %z",
        &raw[stamp],
        input.zone,
        input.now_unix_secs,
    ) else {
        // SC4S's date-parser fails: the repair does not happen.
        return false;
    };
    out.time(ts);
    out.host(&raw[host]);
    out.program = Some(Some(&raw[kind]));
    out.pid = Some(None);
    out.message(&raw[message]);
    out.format = Some(Format::Rfc3164);
    true
}

/// `^<\d+> *\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{4}`: the WAF header's stamp
/// right after the PRI, checked in place.
fn iso_stamp_after_pri(raw: &[u8]) -> bool {
    let Some(close) = raw.iter().take(5).position(|&b| b == b'>') else {
        return false;
    };
    let at = close + 1 + raw[close + 1..].iter().take_while(|&&b| b == b' ').count();
    let Some(s) = raw.get(at..at + 29) else {
        return false;
    };
    // `yyyy-mm-dd hh:mm:ss.fff ±zzzz`: the separators first, which refuse other stamps
    // (an ISO `T`, a BSD month) at once.
    const DIGITS: [usize; 21] = [
        0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 25, 26, 27, 28,
    ];
    s[10] == b' '
        && s[4] == b'-'
        && s[7] == b'-'
        && s[13] == b':'
        && s[16] == b':'
        && s[19] == b'.'
        && s[23] == b' '
        && matches!(s[24], b'+' | b'-')
        && DIGITS.iter().all(|&i| s[i].is_ascii_digit())
}

fn waf<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program else {
        return false;
    };
    // SC4S also requires MSGHDR to end in the type (no PID).
    let Some(i) = LOG_TYPES.iter().position(|t| *t == p) else {
        return false;
    };
    if input.pid.is_some() {
        return false;
    }
    out.key(&KEYS[WAF]);
    out.key(&KEYS[WAF_TYPES + i]);
    true
}

fn netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified || !(ns.names("barracuda_syslog", "barracuda", "syslog")) {
        return false;
    }
    out.key(&KEYS[SYSLOG]);
    let log_type = kv::pairs(input.body, b' ')
        .filter(|p| p.key == b"logType")
        .last()
        .map(|p| p.value)
        .filter(|v| !v.is_empty());
    if let Some(t) = log_type {
        let mut lower = [0u8; 32];
        if let Some(buf) = lower.get_mut(..t.len()) {
            buf.copy_from_slice(t);
            buf.make_ascii_lowercase();
            if let Some(st) = Inline::concat(&[b"barracuda:", buf]) {
                out.sourcetype = Some(Value::Inline(st));
            }
            if let Some(class) = Inline::concat(&[buf]) {
                out.class = Some(Value::Inline(class));
            }
            let has = |n: &[u8]| crate::classify::vendors::util::find(buf, n).is_some();
            if has(b"nf") {
                out.key(&KEYS[NF]);
            }
            if has(b"wf") || has(b"tr") {
                out.key(&KEYS[WAF_INDEX]);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{waf_header_regex, waf_header_scan};
    use crate::classify::testutil::classify_line;

    /// The header gate is a necessary condition of the check on what the application can
    /// take (its parser requires `^<\d+>`).
    #[test]
    fn the_check_needs_its_shape() {
        use crate::classify::registry::Shape;
        use crate::classify::testutil::{assert_needs_shape, pri_is_digits};
        assert_needs_shape(
            Shape::DIGIT.or(Shape::SPACE),
            |raw| super::iso_stamp_after_pri(raw) && pri_is_digits(raw),
            &[
                "<134>2024-03-13 19:33:53.511 +0000 waf1 SYS x",
                "<134>   2024-03-13 19:33:53.511 -0500 w WF y",
            ],
        );
    }

    /// The scanner gives the regex's groups on ASCII headers, odd ones included.
    #[test]
    fn header_scan_is_the_regex() {
        let stamp = "2024-03-13 19:33:53.511 +0000";
        let mut lines = vec![];
        for pri in ["<134>", "<1>", "<>", "<13a>", "134>"] {
            for gap in ["", " ", "   "] {
                for ws in [" ", "  ", "\t", " \t", "\t ", "   ", ""] {
                    for host in ["waf1", "w\taf", "", "a:b"] {
                        for kind in ["SYS ", "WF ", "AUDIT ", "XX ", "SYS", "NFX "] {
                            for msg in ["x y", "", "a\nb", "SYS z"] {
                                lines.push(format!("{pri}{gap}{stamp}{ws}{host} {kind}{msg}"));
                            }
                        }
                    }
                }
            }
        }
        lines.push(format!("<1>{stamp}  h  SYS x"));
        lines.push(format!("<1>{stamp}\t\tSYS SYS x"));
        lines.push("<1>2024-03-13 19:33:53.511 -0130 h TR x".into());
        lines.push("<1>2024-03-13 19:33:53.51 +0000 h TR x".into());
        for l in &lines {
            assert_eq!(
                waf_header_scan(l.as_bytes()),
                Ok(waf_header_regex(l.as_bytes())),
                "{l:?}"
            );
        }
        assert!(
            lines
                .iter()
                .any(|l| waf_header_scan(l.as_bytes()).is_ok_and(|s| s.is_some()))
        );
        // Non-ASCII in the message is read, in a class of the header it is left to the regex.
        let l = format!("<1>{stamp} h WF a\u{201c}b");
        assert_eq!(
            waf_header_scan(l.as_bytes()),
            Ok(waf_header_regex(l.as_bytes()))
        );
        let l = format!("<1>{stamp} h\u{a0} WF a");
        assert_eq!(waf_header_scan(l.as_bytes()), Err(super::Unsure));
        let mut b = format!("<1>{stamp} h WF a").into_bytes();
        b.extend_from_slice(b"\xffz");
        assert_eq!(waf_header_scan(&b), Ok(waf_header_regex(&b)));
        assert_eq!(waf_header_scan(&b).unwrap().unwrap()[3].len(), 1);
    }

    #[test]
    fn waf_types() {
        let c = classify_line(
            "<134>2024-03-13 19:33:53.511 +0000  waf1 SYS ADMIN_M ALER 51001 Account has been locked",
        );
        assert_eq!(c.sourcetype, "barracuda:system");
        assert_eq!(c.index, "netwaf");
        assert_eq!(c.product, "waf");
        let c = classify_line(
            "<134>2024-03-13 23:54:21.543 +0000  waf5 NF INFO TCP 1.1.1.117 52676 1.1.1.2 80 ALLOW",
        );
        assert_eq!(c.sourcetype, "barracuda:firewall");
        let c = classify_line("<134>2024-03-13 23:54:21.543 +0000  waf5 XX INFO TCP");
        assert_ne!(c.vendor, "barracuda");
    }
}
