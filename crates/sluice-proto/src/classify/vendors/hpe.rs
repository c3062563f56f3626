//! HPE (SC4S `addons/hp/`): iLO (PROGRAM `#ILO4`, `iLO5`, `DriveArray`, ...), JetDirect
//! printers and scanners (`printer: text; key=value ...`), and ProCurve / Comware switches
//! in their two formats (`%%10SC/6/CATEGORY(l): ` and a five-digit PROGRAM followed by
//! `category: `), which SC4S tries on every unidentified message.

use std::ops::Range;
use std::sync::LazyLock;

use crate::classify::gate::Gated;

use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::{Inline, Value};
use crate::classify::vtime;

use super::util::{Unsure, lower, span};

pub static VENDOR: Vendor = Vendor {
    name: "hpe",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-hpe_ilo",
            topic: Topic::Pgm,
            order: "hp/app-syslog-hpe_ilo.conf",
            when: When::Check(ilo_program),
            parse: ilo,
        },
        App {
            name: "app-syslog-hpe_jetdirect",
            topic: Topic::Pgm,
            order: "hp/app-syslog-hpe_jetdirect.conf",
            when: When::ProgramPrefix(&["printer", "scanner"]),
            parse: jetdirect,
        },
        App {
            name: "app-syslog-hpe_procurve_fmt1",
            topic: Topic::Syslog,
            order: "hp/app-syslog-hpe_procurve_fmt1.conf",
            // The `%%` word starts MESSAGE (or PROGRAM, which the header repair folds back).
            when: When::BodyPrefix(&["%%"]),
            parse: procurve_fmt1,
        },
        App {
            name: "app-syslog-hpe_procurve_fmt2",
            topic: Topic::Syslog,
            order: "hp/app-syslog-hpe_procurve_fmt2.conf",
            when: When::Check(fmt2_shape),
            parse: procurve_fmt2,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("hpe", "ilo", "hpe:ilo", "infraops").template(Template::Rfc5424Compact),
    Key::new("hpe", "jetdirect", "hpe:jetdirect", "print"),
    Key::new("hpe", "procurve", "hpe:procurve", "netops"),
];

/// SC4S's PROGRAM filter of `app-syslog-hpe_ilo`: one of the hardware names, or
/// `(#ILO|[iI][lL][oO])\d+` anywhere (`#ILO` is itself an `ILO`, so one case-blind `ilo`
/// followed by a digit is the test; the regex only confirms a non-ASCII `\d`).
fn ilo_program<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    input.program.is_some_and(is_ilo_program)
}

fn is_ilo_program(p: &[u8]) -> bool {
    static ILO: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"(#ILO|[iI][lL][oO])\d+"));
    const HW: &[&[u8]] = &[
        b"DriveArray",
        b"PowerSupply",
        b"Fan",
        b"Memory",
        b"Processor",
    ];
    if HW.iter().any(|h| p.starts_with(h)) {
        return true;
    }
    p.windows(4).any(|w| {
        w[..3].eq_ignore_ascii_case(b"ilo")
            && (w[3].is_ascii_digit() || (w[3] >= 0x80 && ILO.is_match(p)))
    })
}

fn ilo<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !ilo_program(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn jetdirect<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static SEMI: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"[^;]+; "));
    static TIME: LazyLock<Gated> = LazyLock::new(|| {
        Gated::new(r"^(\d\d\d\d-\w\w\w-\d\d \d\d:\d\d \w\w) \([^\d+-]+([-+]\d\d):(\d\d)")
    });
    let Some(prog) = input
        .program
        .filter(|p| p.starts_with(b"printer") || p.starts_with(b"scanner"))
    else {
        return false;
    };
    if !semi_scan(input.body).unwrap_or_else(|Unsure| SEMI.is_match(input.body)) {
        return false;
    }
    out.key(&KEYS[1]);
    // MSG := t_hdr_msg (`printer: text`), PROGRAM unset.
    if let Some(all) = span(input.msg.raw, prog, input.body) {
        out.message(all);
    }
    out.program = Some(None);
    out.pid = Some(None);
    // message;values: key=value pairs after the first `;`.
    if let Some(at) = memchr::memchr(b';', input.body) {
        let values = &input.body[at + 1..];
        out.values = Some(Values {
            text: values,
            syntax: ValuesSyntax::Kv { pair: b' ' },
        });
        if let Some(t) = crate::classify::kv::get(values, b' ', b"time")
            && let Some((d, h, m)) = time_scan(t).unwrap_or_else(|Unsure| {
                let c = TIME.caps(t)?;
                Some((
                    c.get(1)?.as_bytes(),
                    c.get(2)?.as_bytes(),
                    c.get(3)?.as_bytes(),
                ))
            })
            && let Some(stamp) = Inline::concat(&[d, h, m])
            && let Some(ts) = vtime::strptime(
                "%Y-%b-%d %I:%M %p%z",
                stamp.as_bytes(),
                input.zone,
                input.now_unix_secs,
            )
        {
            out.time(ts);
        }
    }
    true
}

/// JetDirect's stamp, offset sign and hours, offset minutes.
type TimeParts<'t> = (&'t [u8], &'t [u8], &'t [u8]);

/// `[^;]+; ` (a `; ` after at least one character that is not `;`) without the regex.
/// `Err(Unsure)` when the byte before a `; ` is not ASCII: whether it ends a character the
/// class takes is the regex's to say.
fn semi_scan(m: &[u8]) -> Result<bool, Unsure> {
    static NEEDLE: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"; "));
    for at in NEEDLE.find_iter(m) {
        match at.checked_sub(1).map(|i| m[i]) {
            None | Some(b';') => continue,
            Some(b) if b.is_ascii() => return Ok(true),
            Some(_) => return Err(Unsure),
        }
    }
    Ok(false)
}

/// JetDirect's `time` value, `^(\d\d\d\d-\w\w\w-\d\d \d\d:\d\d \w\w) \([^\d+-]+([-+]\d\d):(\d\d)`,
/// without the regex: the stamp, the offset's sign and hours, its minutes. Every part has a
/// fixed width but the zone name, which takes all it can and must be followed by the sign,
/// so there is one way to match. `Err(Unsure)` on a non-ASCII byte (Unicode `\d`, `\w`).
fn time_scan(t: &[u8]) -> Result<Option<TimeParts<'_>>, Unsure> {
    const SHAPE: &[u8; 20] = b"dddd-www-dd dd:dd ww";
    let fits = |b: u8, class: u8| match class {
        b'd' => b.is_ascii_digit(),
        b'w' => b.is_ascii_alphanumeric() || b == b'_',
        lit => b == lit,
    };
    // Which bytes the match would read decides; an ASCII-only look at them is exact.
    let Some(stamp) = t.get(..20) else {
        return if t.is_ascii() { Ok(None) } else { Err(Unsure) };
    };
    if !stamp.is_ascii() {
        return Err(Unsure);
    }
    if !stamp.iter().zip(SHAPE).all(|(&b, &c)| fits(b, c)) || t.get(20..22) != Some(b" (") {
        return Ok(None);
    }
    let rest = &t[22..];
    let zone = rest
        .iter()
        .take_while(|&&b| !(b.is_ascii_digit() || b == b'+' || b == b'-'))
        .count();
    if rest[..zone].iter().any(|b| !b.is_ascii()) {
        return Err(Unsure);
    }
    let tail = &rest[zone..];
    let Some(off) = tail.get(..6) else {
        return if tail.is_ascii() {
            Ok(None)
        } else {
            Err(Unsure)
        };
    };
    if !off.is_ascii() {
        return Err(Unsure);
    }
    let ok = zone > 0
        && matches!(off[0], b'+' | b'-')
        && off[1].is_ascii_digit()
        && off[2].is_ascii_digit()
        && off[3] == b':'
        && off[4].is_ascii_digit()
        && off[5].is_ascii_digit();
    Ok(ok.then(|| (stamp, &off[..3], &off[4..6])))
}

/// SC4S's fmt2 categories, in its order (`802.1x`'s `.` is the regex's any-character).
const FMT2_CATEGORIES: &[&str] = &[
    "802.1x",
    "acl",
    "addrmgr",
    "arp-protect",
    "auth",
    "cdp",
    "chassis",
    "connfilt",
    "console",
    "cos",
    "dca",
    "dhcp",
    "dhcp v6c",
    "dhcpr",
    "download",
    "dhcp-snoop",
    "dma",
    "fault",
    "fdr-log",
    "ffi",
    "garp",
    "gvrp",
    "hpesp",
    "idm",
    "igmp",
    "inst-mon",
    "ip",
    "ipaddrmgr",
    "iplock",
    "ipx",
    "kms",
    "lacp",
    "ldbal",
    "lldp",
    "loop_protect",
    "macauth",
    "maclock",
    "mgr",
    "mld",
    "mtm",
    "netinet",
    "pagp",
    "ports",
    "radius",
    "ratelim",
    "sflow",
    "snmp",
    "sntp",
    "ssh",
    "ssl",
    "stack",
    "stp",
    "system",
    "tacacs",
    "tcp",
    "telnet",
    "tftp",
    "timep",
    "udld",
    "udpf",
    "update",
    "usb",
    "vlan",
    "xmodem",
];

/// `\s` on one character at `at`: `Err(Unsure)` when it is not ASCII (Unicode spaces).
fn space_at(t: &[u8], at: usize) -> Result<bool, Unsure> {
    match t.get(at) {
        Some(&b) if !b.is_ascii() => Err(Unsure),
        b => Ok(b.is_some_and(|&b| super::util::is_space(b))),
    }
}

/// fmt2's `^(categories):\s` without the regex: the category's span. Each category must be
/// followed by `:`, which none contains, so at most one matches.
fn fmt2_scan(t: &[u8]) -> Result<Option<Range<usize>>, Unsure> {
    for cat in FMT2_CATEGORIES {
        let c = cat.as_bytes();
        let Some(head) = t.get(..c.len()) else {
            continue;
        };
        let mut same = true;
        for (&h, &w) in head.iter().zip(c) {
            same = match w {
                // `.`: any character but a newline; a non-ASCII one may be several bytes.
                b'.' if !h.is_ascii() => return Err(Unsure),
                b'.' => h != b'\n',
                _ => h == w,
            };
            if !same {
                break;
            }
        }
        if !same {
            continue;
        }
        if t.get(c.len()) == Some(&b':') && space_at(t, c.len() + 1)? {
            return Ok(Some(0..c.len()));
        }
    }
    Ok(None)
}

/// fmt1's `^%%\d\d[A-Z]+/\d/([A-Z_\- ]+)\(\w\):\s` without the regex: the category's span.
/// Both runs are maximal (each is followed by a byte its class excludes), so there is one
/// way to match. `Err(Unsure)` where a Unicode `\d`, `\w` or `\s` could read a non-ASCII
/// character.
fn fmt1_scan(t: &[u8]) -> Result<Option<Range<usize>>, Unsure> {
    let ascii_class = |at: usize, f: fn(&u8) -> bool| -> Result<bool, Unsure> {
        match t.get(at) {
            Some(b) if !b.is_ascii() => Err(Unsure),
            b => Ok(b.is_some_and(f)),
        }
    };
    if !t.starts_with(b"%%")
        || !ascii_class(2, u8::is_ascii_digit)?
        || !ascii_class(3, u8::is_ascii_digit)?
    {
        return Ok(None);
    }
    let upper = t[4..].iter().take_while(|b| b.is_ascii_uppercase()).count();
    let mut at = 4 + upper;
    if upper == 0
        || t.get(at) != Some(&b'/')
        || !ascii_class(at + 1, u8::is_ascii_digit)?
        || t.get(at + 2) != Some(&b'/')
    {
        return Ok(None);
    }
    at += 3;
    let cat = t[at..]
        .iter()
        .take_while(|&&b| b.is_ascii_uppercase() || matches!(b, b'_' | b'-' | b' '))
        .count();
    let end = at + cat;
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    if cat == 0
        || t.get(end) != Some(&b'(')
        || !ascii_class(end + 1, word)?
        || t.get(end + 2..end + 4) != Some(b"):")
        || !space_at(t, end + 4)?
    {
        return Ok(None);
    }
    Ok(Some(at..end))
}

fn procurve_fmt1<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static CATEGORY: LazyLock<Gated> =
        LazyLock::new(|| Gated::new(r"^%%\d\d[A-Z]+/\d/([A-Z_\- ]+)\(\w\):\s"));
    // SC4S matches MESSAGE; where sluice's header took the `%%...` word as PROGRAM, the
    // text from PROGRAM on is what SC4S calls MESSAGE.
    let text = match input.program {
        Some(p) if p.starts_with(b"%%") => span(input.msg.raw, p, input.body).unwrap_or_default(),
        _ => input.body,
    };
    let cat = fmt1_scan(text)
        .unwrap_or_else(|Unsure| Some(CATEGORY.caps(text)?.get(1)?.range()))
        .map(|r| &text[r]);
    let Some(cat) = cat else {
        return false;
    };
    out.key(&KEYS[2]);
    if !std::ptr::eq(text, input.body) {
        out.message(text);
        out.program = Some(None);
    }
    out.source = lower(b"hpe:procurve:", cat);
    out.class = lower(b"", cat);
    true
}

/// `app-syslog-hpe_procurve_fmt2` needs a five-digit PROGRAM (or, where sluice's header left
/// them in the body, MESSAGE starting with five digits and a space).
fn fmt2_shape<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    let five = |p: &[u8]| p.len() == 5 && p.iter().all(u8::is_ascii_digit);
    match input.program {
        Some(p) => five(p),
        None => input.body.len() > 6 && five(&input.body[..5]) && input.body[5] == b' ',
    }
}

fn procurve_fmt2<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static CATEGORY: LazyLock<Gated> =
        LazyLock::new(|| Gated::new(&format!(r"^({}):\s", FMT2_CATEGORIES.join("|"))));
    let five = |p: &[u8]| p.len() == 5 && p.iter().all(u8::is_ascii_digit);
    // PROGRAM is the five digits; sluice's header may leave them at the start of the body
    // when no colon follows them.
    let (whole, rest) = match input.program {
        Some(p) if five(p) => (
            span(input.msg.raw, p, input.body).unwrap_or(input.body),
            input.body,
        ),
        None if input.body.len() > 6 && five(&input.body[..5]) && input.body[5] == b' ' => {
            (input.body, &input.body[6..])
        }
        _ => return false,
    };
    let cat = fmt2_scan(rest)
        .unwrap_or_else(|Unsure| Some(CATEGORY.caps(rest)?.get(1)?.range()))
        .map(|r| &rest[r]);
    let Some(cat) = cat else {
        return false;
    };
    out.key(&KEYS[2]);
    // SC4S writes `${tmp.category}` (no leading dot), an unset name: the source ends at
    // the colon.
    out.source = Some(Value::Static("hpe:procurve:"));
    out.class = lower(b"", cat);
    out.message(whole);
    out.program = Some(None);
    out.pid = Some(None);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::gate::Gated;
    use crate::classify::testutil::classify_line;
    use proptest::prelude::*;

    fn pieces() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                Just(&b"2024-Mar-30 03:17 PM"[..]),
                Just(&b" ("[..]),
                Just(&b"UTC"[..]),
                Just(&b"-00:00"[..]),
                Just(&b"+05:30"[..]),
                Just(&b")"[..]),
                Just(&b"; "[..]),
                Just(&b";"[..]),
                Just(&b" "[..]),
                Just(&b"a"[..]),
                Just(&b"7"[..]),
                Just(&b":"[..]),
                Just(&b"-"[..]),
                Just(&b"_"[..]),
                Just("\u{0663}".as_bytes()),
                Just("é".as_bytes()),
                Just(&b"\xff"[..]),
                Just(&b"\n"[..]),
            ],
            0..10,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn scanners_agree_with_the_regexes(
            head in prop_oneof![
                Just(&b""[..]),
                Just(&b"2024-Mar-30 03:17 PM"[..]),
                Just(&b"2024-Mar-30 03:17 PM ("[..]),
                Just(&b"2024-Mar-30 03:17 PM (UTC"[..]),
                Just(&b"2024-Mar-30 03:17 PM (UTC-00:00)"[..]),
            ],
            tail in pieces(),
        ) {
            let t = [head, &tail[..]].concat();
            let semi = Gated::new(r"[^;]+; ");
            if let Ok(got) = super::semi_scan(&t) {
                prop_assert_eq!(got, semi.is_match(&t));
            }
            let time = Gated::new(r"^(\d\d\d\d-\w\w\w-\d\d \d\d:\d\d \w\w) \([^\d+-]+([-+]\d\d):(\d\d)");
            if let Ok(got) = super::time_scan(&t) {
                let want = time.caps(&t).map(|c| {
                    (c.get(1).unwrap().as_bytes(), c.get(2).unwrap().as_bytes(), c.get(3).unwrap().as_bytes())
                });
                prop_assert_eq!(got, want);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn procurve_scanners_agree_with_the_regexes(
            head in prop_oneof![
                Just("%%10SC/6/SC_AAA_LAUNCH(l): "), Just("%%10SC/6/SC AAA-X(l):\t"),
                Just("%%1"), Just("%%10SC/6/X(l): "), Just("%%10SC/6/-(_):\r"), Just("%%10/6/X(l): "), Just("mgr:  SME"), Just("dhcp v6c: x"),
                Just("802.1x: a"), Just("802é1x: a"), Just("8021x: a"), Just("dhcp-snoop:\n"),
                Just("ip: "), Just("ipx:x"), Just(""),
            ],
            tail in pieces(),
        ) {
            let t = [head.as_bytes(), &tail[..]].concat();
            let fmt1 = Gated::new(r"^%%\d\d[A-Z]+/\d/([A-Z_\- ]+)\(\w\):\s");
            if let Ok(got) = super::fmt1_scan(&t) {
                prop_assert_eq!(got, fmt1.caps(&t).map(|c| c.get(1).unwrap().range()));
            }
            let fmt2 = Gated::new(&format!(r"^({}):\s", super::FMT2_CATEGORIES.join("|")));
            if let Ok(got) = super::fmt2_scan(&t) {
                prop_assert_eq!(got, fmt2.caps(&t).map(|c| c.get(1).unwrap().range()));
            }
        }
    }

    #[test]
    fn scanners_defer_on_non_ascii() {
        assert_eq!(super::fmt2_scan("802é1x: a".as_bytes()), Err(super::Unsure));
        assert_eq!(
            super::fmt2_scan("mgr:\u{a0}".as_bytes()),
            Err(super::Unsure)
        );
        assert_eq!(super::fmt2_scan(b"dhcp v6c: x"), Ok(Some(0..8)));
        assert_eq!(
            super::fmt1_scan(b"%%10SC/6/SC_AAA_LAUNCH(l): x"),
            Ok(Some(9..22))
        );
        assert_eq!(super::semi_scan("é; x".as_bytes()), Err(super::Unsure));
        assert_eq!(super::semi_scan(b";; x"), Ok(false));
        assert_eq!(super::semi_scan(b"a; x"), Ok(true));
        let t = "2024-Mar-30 03:17 PM (UTC-00:00)";
        assert_eq!(
            super::time_scan(t.as_bytes()),
            Ok(Some((
                &b"2024-Mar-30 03:17 PM"[..],
                &b"-00"[..],
                &b"00"[..]
            )))
        );
        assert_eq!(
            super::time_scan("2024-Mär-30 03:17 PM (UTC-00:00)".as_bytes()),
            Err(super::Unsure)
        );
    }

    #[test]
    fn ilo_and_procurve() {
        let c = classify_line("<165>1 2024-03-30T13:07:03.441Z ilo #ILO4 - - - Browser login");
        assert_eq!(c.sourcetype, "hpe:ilo");
        let c = classify_line(
            "<165>1 2024-03-30T14:12:10.449Z ilo DriveArray: Smart Array - Drive is failed",
        );
        assert_eq!(c.sourcetype, "hpe:ilo");
        let c = classify_line("<29> Mar 30 17:27:31 sw 00179 mgr:  SME SSH from 192.168.1.22");
        assert_eq!(c.sourcetype, "hpe:procurve");
        assert_eq!(c.index, "netops");
        let c = classify_line(
            "<29> Mar 30 20:42:52 2024 sw %%10SC/6/SC_AAA_LAUNCH(l): -AAAType=AUTHEN; AAA launched",
        );
        assert_eq!(c.sourcetype, "hpe:procurve");
        assert_eq!(c.source, "hpe:procurve:sc_aaa_launch");
        let c = classify_line("<29> Mar 30 17:27:31 sw 00179 nothing:  else");
        assert_ne!(c.sourcetype, "hpe:procurve");
    }

    /// The checks pass what the applications take and skip a nix:syslog line.
    #[test]
    fn checks() {
        use crate::classify::dispatch::check_verdict;
        const NIX: &str =
            "<38>2026-11-26T15:21:42 localhost sshd[1234]: seq: 0000000000, thread: 0000";
        for (line, st) in [
            (
                "<165>1 2024-03-30T13:07:03.441Z ilo #ILO4 - - - Browser login",
                "hpe:ilo",
            ),
            (
                "<165>1 2024-03-30T13:07:03.441Z ilo myiLO5 - - - Browser login",
                "hpe:ilo",
            ),
            ("<165>1 2024-03-30T13:07:03.441Z ilo Fan - - - x", "hpe:ilo"),
        ] {
            assert_eq!(
                check_verdict(line, "app-syslog-hpe_ilo"),
                Some(true),
                "{line}"
            );
            assert_eq!(classify_line(line).sourcetype, st, "{line}");
        }
        for line in [NIX, "<165>1 2024-03-30T13:07:03.441Z ilo ilo - - - x"] {
            assert_eq!(
                check_verdict(line, "app-syslog-hpe_ilo"),
                Some(false),
                "{line}"
            );
            assert_ne!(classify_line(line).sourcetype, "hpe:ilo", "{line}");
        }
        let line = "<29> Mar 30 17:27:31 sw 00179 mgr:  SME SSH from 192.168.1.22";
        assert_eq!(
            check_verdict(line, "app-syslog-hpe_procurve_fmt2"),
            Some(true)
        );
        assert_eq!(classify_line(line).sourcetype, "hpe:procurve");
        for line in [NIX, "<29> Mar 30 17:27:31 sw 0179 mgr:  SME SSH"] {
            assert_eq!(
                check_verdict(line, "app-syslog-hpe_procurve_fmt2"),
                Some(false),
                "{line}"
            );
            assert_ne!(classify_line(line).sourcetype, "hpe:procurve", "{line}");
        }
    }

    #[test]
    fn jetdirect() {
        let c = classify_line(
            "<29> printer: Password modified; time=\"2024-Mar-30 03:17 PM (UTC-00:00)\" user=\"admin\"",
        );
        assert_eq!(c.sourcetype, "hpe:jetdirect");
        assert_eq!(c.index, "print");
        match c.time {
            crate::classify::registry::TimeEdit::Stamp(ts) => {
                assert_eq!(ts.unix_micros(), 1_711_811_820_000_000)
            }
            other => panic!("time not set: {other:?}"),
        }
    }
}
