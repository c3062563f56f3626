//! Juniper (SC4S `addons/juniper/`): JunOS structured (RFC 5424 with `[junos@2636`),
//! JunOS unstructured (by PROGRAM, or by a PFE/EX message), and NetScreen ScreenOS.

use crate::classify::caps::CapturesExt;
use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vendors::util::find_lit;
use crate::classify::vtime;
use crate::message::Format;

use super::util::{Unsure, dot_star_end};

pub static VENDOR: Vendor = Vendor {
    name: "juniper",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-juniper_netscreen_raw",
            topic: Topic::AlmostSyslog,
            order: "juniper/app-almost-syslog-juniper_netscreen_raw.conf",
            when: When::Token(&["NetScreen"]),
            parse: netscreen_raw,
        },
        App {
            name: "app-syslog-juniper_junos_structured",
            topic: Topic::Sdata,
            order: "juniper/app-syslog-juniper_junos_structured.conf",
            when: When::Token(&["[junos@2636"]),
            parse: structured,
        },
        App {
            name: "app-syslog-juniper_junos_unstructured-pgm",
            topic: Topic::Pgm,
            order: "juniper/app-syslog-juniper_junos_unstructured.conf",
            when: When::ProgramPrefix(&[
                "RT_IDP",
                "RT_FLOW",
                "RT_IDS",
                "RT_UTM",
                "RT_SYSTEM",
                "Juniper",
                "rpd",
                "eswd",
                "mib2d",
                "ESWD_",
                "mgd",
                "mcsnoopd",
                "ifinfo",
            ]),
            parse: unstructured_pgm,
        },
        App {
            name: "app-syslog-juniper_junos_unstructured-msg",
            topic: Topic::Syslog,
            order: "juniper/app-syslog-juniper_junos_unstructured.conf",
            // `PFE_FW_SYSLOG_ETH_IP: ` / `PFE_FW_SYSLOG_IP:` (checked by the parser) share a prefix.
            when: When::Token(&["PFE_FW_SYSLOG_", "EX-BCM PIC"]),
            parse: unstructured_msg,
        },
        App {
            name: "app-syslog-juniper_netscreen",
            topic: Topic::Pgm,
            order: "juniper/app-syslog-juniper_netscreen.conf",
            when: When::ProgramPrefix(&["ns"]),
            parse: netscreen,
        },
    ],
};

const STRUCTURED: usize = 0;
const S_IDP: usize = 1;
const S_FLOW: usize = 2;
const S_IDS: usize = 3;
const S_UTM: usize = 4;
const S_AAMW: usize = 5;
const S_SECINTEL: usize = 6;
const LEGACY: usize = 7;
const U_IDP: usize = 8;
const U_FIREWALL: usize = 9;
const U_IDS: usize = 10;
const U_UTM: usize = 11;
const U_SNMP: usize = 12;
const U_LEGACY: usize = 13;
const NETSCREEN: usize = 14;
const NETSCREEN_RAW: usize = 15;

static KEYS: &[Key] = &[
    Key::new(
        "juniper",
        "junos_structured",
        "juniper:structured",
        "netops",
    )
    .template(Template::Rfc5424Compact),
    Key::update("juniper:junos:idp:structured", "netids").class("idp"),
    Key::update("juniper:junos:firewall:structured", "netfw").class("fw"),
    Key::update("juniper:junos:firewall:structured", "netids").class("ids"),
    Key::update("juniper:junos:firewall:structured", "netfw").class("utm"),
    Key::update("juniper:junos:aamw:structured", "netfw").class("aamw"),
    Key::update("juniper:junos:secintel:structured", "netfw").class("secintel"),
    Key::new("juniper", "junos", "juniper:legacy", "netops"),
    Key::update("juniper:junos:idp", "netids").class("idp"),
    Key::update("juniper:junos:firewall", "netfw").class("firewall"),
    Key::update("juniper:junos:firewall", "netids").class("ids"),
    Key::update("juniper:junos:firewall", "netfw").class("utm"),
    Key::update("juniper:junos:snmp", "netops").class("snmp"),
    Key::update("juniper:legacy", "").class("legacy"),
    // SC4S's NetScreen parser really sets this source.
    Key::new("juniper", "netscreen", "netscreen:firewall", "netfw").source("program:dhcpd"),
    Key::new("juniper", "netscreen", "netscreen:firewall", "netfw").class("raw"),
];

fn program_starts(input: &Input<'_, '_>, prefix: &[u8]) -> bool {
    input.program.is_some_and(|p| p.starts_with(prefix))
}

fn structured<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let sd = input.msg.structured_data.map(|sd| sd.raw()).unwrap_or(b"");
    if find_lit!(sd, b"[junos@2636").is_none() {
        return false;
    }
    out.key(&KEYS[STRUCTURED]);
    let update = [
        (&b"RT_IDP"[..], S_IDP),
        (b"RT_FLOW", S_FLOW),
        (b"RT_IDS", S_IDS),
        (b"RT_UTM", S_UTM),
        (b"RT_AAMW", S_AAMW),
        (b"RT_SECINTEL", S_SECINTEL),
    ]
    .into_iter()
    .find(|(p, _)| program_starts(input, p));
    if let Some((_, k)) = update {
        out.key(&KEYS[k]);
    }
    true
}

/// The shared parser of both unstructured applications.
fn unstructured<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) {
    let m = input.body;
    out.key(&KEYS[LEGACY]);
    let k = if program_starts(input, b"RT_IDP") {
        U_IDP
    } else if program_starts(input, b"RT_FLOW")
        || find_lit!(m, b"PFE_FW_").is_some()
        || find_lit!(m, b"DFWD_").is_some()
        || find_lit!(m, b"ESWD_").is_some()
        || program_starts(input, b"rpd")
        || find_lit!(m, b"rpd").is_some()
    {
        U_FIREWALL
    } else if program_starts(input, b"RT_IDS") {
        U_IDS
    } else if program_starts(input, b"RT_UTM") {
        U_UTM
    } else if find_lit!(m, b"SNMP_TRAP_").is_some()
        || find_lit!(m, b"SNMPD_").is_some()
        || find_lit!(m, b"VRRPD_").is_some()
        || find_lit!(m, b"CHASSISD_SNMP_").is_some()
    {
        U_SNMP
    } else {
        U_LEGACY
    };
    out.key(&KEYS[k]);
}

fn unstructured_pgm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program else {
        return false;
    };
    const PREFIXES: &[&[u8]] = &[
        b"RT_IDP",
        b"RT_FLOW",
        b"RT_IDS",
        b"RT_UTM",
        b"RT_SYSTEM",
        b"Juniper",
        b"rpd",
        b"eswd",
        b"mib2d",
        b"ESWD_",
    ];
    let ours = PREFIXES.iter().any(|x| p.starts_with(x))
        || p == b"mgd"
        || p == b"mcsnoopd"
        || (p == b"ifinfo" && input.body.starts_with(b"PVIDB"));
    if !ours {
        return false;
    }
    unstructured(input, out);
    true
}

fn unstructured_msg<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    if !(m.starts_with(b"PFE_FW_SYSLOG_ETH_IP: ")
        || m.starts_with(b"PFE_FW_SYSLOG_IP:")
        || find_lit!(m, b"EX-BCM PIC").is_some())
    {
        return false;
    }
    unstructured(input, out);
    true
}

fn netscreen<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static NS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^ns\d+").expect("static regex"));
    if !input.program.is_some_and(|p| NS.is_match(p)) || !input.body.starts_with(b"NetScreen") {
        return false;
    }
    out.key(&KEYS[NETSCREEN]);
    true
}

/// ScreenOS's own header, SC4S's regex (unanchored):
/// `<\d+> ?(?:(\w\w\w \d\d \d\d:\d\d:\d\d) )?([^: ]+)(?:: | [^:]+: )(NetScreen.*)`.
/// An all-ASCII message (where `\w`, `\d` and `.` mean their ASCII classes) is matched by
/// [`netscreen_scan`]; others go through the regex.
static NS_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<\d+> ?(?:(\w\w\w \d\d \d\d:\d\d:\d\d) )?([^: ]+)(?:: | [^:]+: )(NetScreen.*)")
        .expect("static regex")
});

/// The spans of [`NS_HEADER`]'s groups: the stamp (optional), host, message.
type NsSpans = (Option<Range<usize>>, Range<usize>, Range<usize>);

fn netscreen_regex(raw: &[u8]) -> Option<NsSpans> {
    let c = NS_HEADER.caps(raw)?;
    Some((
        c.get(1).map(|s| s.range()),
        c.get(2)?.range(),
        c.get(3)?.range(),
    ))
}

/// [`NS_HEADER`] by hand: the first `<digits>` where the rest matches. `Err` on a
/// non-ASCII byte where the regex's Unicode classes apply.
fn netscreen_scan(raw: &[u8]) -> Result<Option<NsSpans>, Unsure> {
    for lt in memchr::memchr_iter(b'<', raw) {
        if let Some(spans) = netscreen_at(raw, lt)? {
            return Ok(Some(spans));
        }
    }
    Ok(None)
}

/// A class test at `at`: `Err` where a non-ASCII byte would need the Unicode meaning.
fn class(raw: &[u8], at: usize, ascii: impl Fn(u8) -> bool) -> Result<bool, Unsure> {
    match raw.get(at) {
        Some(&b) if !b.is_ascii() => Err(Unsure),
        Some(&b) => Ok(ascii(b)),
        None => Ok(false),
    }
}

fn netscreen_at(raw: &[u8], lt: usize) -> Result<Option<NsSpans>, Unsure> {
    let digit = |b: u8| b.is_ascii_digit();
    let mut at = lt + 1;
    while class(raw, at, digit)? {
        at += 1;
    }
    if at == lt + 1 || raw.get(at) != Some(&b'>') {
        return Ok(None);
    }
    at += 1;
    // ` ?`: not taking a space leaves a space that nothing after can start with.
    if raw.get(at) == Some(&b' ') {
        at += 1;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut stamp_ok = true;
    for i in 0..16 {
        let ok = match i {
            0..=2 => class(raw, at + i, word)?,
            3 | 6 | 15 => raw.get(at + i) == Some(&b' '),
            9 | 12 => raw.get(at + i) == Some(&b':'),
            _ => class(raw, at + i, digit)?,
        };
        if !ok {
            stamp_ok = false;
            break;
        }
    }
    // The optional stamp is greedy: with it first, then without.
    if stamp_ok && let Some((host, message)) = netscreen_rest(raw, at + 16)? {
        return Ok(Some((Some(at..at + 15), host, message)));
    }
    Ok(netscreen_rest(raw, at)?.map(|(host, message)| (None, host, message)))
}

/// The host and message spans of [`netscreen_rest`].
type HostMessage = (Range<usize>, Range<usize>);

/// `([^: ]+)(?:: | [^:]+: )(NetScreen.*)` at `at`.
fn netscreen_rest(raw: &[u8], at: usize) -> Result<Option<HostMessage>, Unsure> {
    let mut end = at;
    while class(raw, end, |b| b != b':' && b != b' ')? {
        end += 1;
    }
    if end == at {
        return Ok(None);
    }
    let host = at..end;
    let rest = &raw[host.end..];
    let msg_at = if rest.starts_with(b": ") {
        host.end + 2
    } else if rest.first() == Some(&b' ') {
        // `[^:]+` runs to the first colon, which must end `: `.
        let Some(colon) = memchr::memchr(b':', &rest[1..]) else {
            return Ok(None);
        };
        if !rest[1..1 + colon].is_ascii() {
            return Err(Unsure);
        }
        if colon == 0 || rest.get(1 + colon + 1) != Some(&b' ') {
            return Ok(None);
        }
        host.end + 1 + colon + 2
    } else {
        return Ok(None);
    };
    if !raw[msg_at..].starts_with(b"NetScreen") {
        return Ok(None);
    }
    Ok(Some((host, msg_at..dot_star_end(raw, msg_at))))
}

/// ScreenOS's own header: `<PRI> [Mmm dd hh:mm:ss ]host[ model]: NetScreen ...`.
fn netscreen_raw<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw = input.msg.raw;
    let spans = netscreen_scan(raw).unwrap_or_else(|Unsure| netscreen_regex(raw));
    let Some((stamp, host, message)) = spans else {
        return false;
    };
    if let Some(ts) = stamp
        .and_then(|t| vtime::strptime("%b %d %H:%M:%S", &raw[t], input.zone, input.now_unix_secs))
    {
        out.time(ts);
    }
    out.key(&KEYS[NETSCREEN_RAW]);
    out.host(&raw[host]);
    out.message(&raw[message]);
    out.program = Some(None);
    out.pid = Some(None);
    out.format = Some(Format::Rfc3164);
    out.identified = true;
    true
}

#[cfg(test)]
mod tests {
    use super::{netscreen_regex, netscreen_scan};
    use crate::classify::testutil::classify_line;

    /// The scanner gives the regex's groups on ASCII text, odd headers included.
    #[test]
    fn netscreen_scan_is_the_regex() {
        let mut lines = vec![];
        for lead in ["", "x ", "<a> ", "<1>junk:<2>"] {
            for pri in ["<23>", "<23> ", "<>", "<2x>", "<23>  "] {
                for stamp in [
                    "",
                    "Apr 03 19:08:01 ",
                    "Apr  3 19:08:01 ",
                    "A_1 03 19:08:01 ",
                    "Apr 03 19:08:01",
                ] {
                    for host in ["ssg1", "", "h:x", "h\tx"] {
                        for sep in [": ", " ns204: ", " a b: ", ":", " : ", " x:y: ", " "] {
                            for tail in [
                                "NetScreen device_id=x",
                                "NetScreen",
                                "Netscreen x",
                                "NetScreen a\nb",
                            ] {
                                lines.push(format!("{lead}{pri}{stamp}{host}{sep}{tail}"));
                            }
                        }
                    }
                }
            }
        }
        lines.push("<1>Apr 03 19:08:01 : NetScreen x".into());
        lines.push("<1>Apr 03 19:08:01 h: x <2>h: NetScreen y".into());
        for l in &lines {
            assert_eq!(
                netscreen_scan(l.as_bytes()),
                Ok(netscreen_regex(l.as_bytes())),
                "{l:?}"
            );
        }
        assert!(
            lines
                .iter()
                .filter(|l| netscreen_scan(l.as_bytes()).is_ok_and(|s| s.is_some()))
                .count()
                > 100
        );
        // Non-ASCII after `NetScreen` is read; in a class of the header it is left to the regex.
        for l in [
            &b"<1>h: NetScreen \xe2\x80\x9cq\xe2\x80\x9d \xff tail"[..],
            b"<1>h\xc3\xa9: NetScreen x",
            b"<1>h m\xc3\xa9: NetScreen x",
            b"<1>\xd9\xa3: NetScreen x",
        ] {
            match netscreen_scan(l) {
                Ok(s) => assert_eq!(s, netscreen_regex(l)),
                Err(super::Unsure) => assert!(!l[..l.len() - 12].is_ascii()),
            }
        }
        assert!(netscreen_scan(b"<1>h\xc3\xa9: NetScreen x").is_err());
    }

    #[test]
    fn unstructured_by_program_and_message() {
        let c = classify_line(
            "<23> Apr 03 02:51:17 srx1 RT_FLOW: RT_FLOW_SESSION_CREATE: session created 1.2.3.4/5->8.8.8.8/53",
        );
        assert_eq!(c.sourcetype, "juniper:junos:firewall");
        assert_eq!(c.index, "netfw");
        assert_eq!(c.product, "junos");
        let c = classify_line("<23> Apr 03 02:51:17 srx1 RT_IDP: IDP_ATTACK_LOG_EVENT: x");
        assert_eq!(c.sourcetype, "juniper:junos:idp");
        assert_eq!(c.index, "netids");
        let c =
            classify_line("<23>Apr 03 05:01:31 ex1 mib2d[1484]: SNMP_TRAP_LINK_UP: ifIndex 584");
        assert_eq!(c.sourcetype, "juniper:junos:snmp");
        assert_eq!(c.index, "netops");
        let c = classify_line("<161> Apr 03 12:37:19 srx1 RT_SYSTEM: RTLOG_CONN_ERROR: x");
        assert_eq!(c.sourcetype, "juniper:legacy");
        assert_eq!(c.index, "netops");
        let c = classify_line(
            "<165> Apr 03 09:21:59 mx1 tfeb0: PFE_FW_SYSLOG_ETH_IP: FW: xe-0/0/3.0 A",
        );
        assert_eq!(c.sourcetype, "juniper:junos:firewall");
        let c = classify_line("<165> Apr 03 09:21:59 mx1 mgdx: SNMP_TRAP_LINK_UP: x");
        assert_ne!(c.vendor, "juniper");
    }

    #[test]
    fn structured_by_program() {
        let c = classify_line(
            r#"<165>1 2024-04-03T14:47:33.154Z srx1 RT_IDP - IDP_ATTACK_LOG_EVENT [junos@2636.1.1.1.2.135 epoch-time="1507845354"] x"#,
        );
        assert_eq!(c.sourcetype, "juniper:junos:idp:structured");
        assert_eq!(c.index, "netids");
        assert_eq!(c.product, "junos_structured");
        let c = classify_line(
            r#"<165>1 2024-04-03T13:42:26.146Z mx1 mgd 3046 UI_DBASE_LOGOUT_EVENT [junos@2636.1.1.1.2.18 username="user"] User"#,
        );
        assert_eq!(c.sourcetype, "juniper:structured");
        assert_eq!(c.index, "netops");
    }

    #[test]
    fn netscreen() {
        let c = classify_line(
            "<23> Apr 03 19:08:01 ssg1 ns204: NetScreen device_id=netscreen2  [Root]system-notification-00257(traffic): x",
        );
        assert_eq!(c.sourcetype, "netscreen:firewall");
        assert_eq!(c.index, "netfw");
        assert_eq!(c.product, "netscreen");
        // The ScreenOS header repair takes it (as in SC4S): class `raw`.
        assert_eq!(c.app, "app-almost-syslog-juniper_netscreen_raw");
        assert_eq!(c.class.map(|v| v == "raw"), Some(true));
        let c = classify_line("<23> ssg1: NetScreen device_id=netscreen2 x");
        assert_eq!(c.app, "app-almost-syslog-juniper_netscreen_raw");
        // A one-digit day defeats the repair's regex; the PROGRAM application takes it.
        let c = classify_line("<23>Apr  3 19:08:01 ssg1 ns204: NetScreen device_id=netscreen2");
        assert_eq!(c.app, "app-syslog-juniper_netscreen");
        assert_eq!(c.source, "program:dhcpd");
        let c = classify_line("<23>Apr  3 19:08:01 ssg1 nsx: NetScreen device_id=netscreen2");
        assert_ne!(c.product, "netscreen");
        let c = classify_line("<23>Apr  3 19:08:01 ssg1 ns204: other text");
        assert_ne!(c.product, "netscreen");
    }
}
