//! The Cisco header repairs of SC4S's `sc4s-almost-syslog` topic.
//!
//! `app-almost-syslog-cisco_syslog`: IOS, NX-OS, IOS-XR, WLC and ASA write a header that
//! is not syslog: after the PRI any number of `: `-terminated parts (sequence number,
//! hostname, another sequence number, an uptime, a `*`/`.`-marked stamp with milliseconds
//! and a zone name, a task name) up to `: %FAC-S-MNEMONIC`. SC4S splits the line at the
//! first `: %`, accepts it when the header looks like Cisco's, and takes HOST and the time
//! from the header by pattern (see [`header_host`] and [`header_stamp`]). MESSAGE becomes
//! the tag and what follows; PROGRAM is gone.
//!
//! `app-almost-syslog-cisco_ms`: `<PRI>Mmm dd hh:mm:ss facility.level host message`; the
//! `facility.level` word is dropped and the rest read as RFC 3164.

use std::sync::LazyLock;

use crate::classify::registry::{App, HostEdit, Input, Out, Shape, TimeEdit, Topic, When};
use crate::classify::shape::pri_len;
use crate::classify::value::Value;
use crate::classify::vendors::almost_levelword::split_program;
use crate::classify::vendors::util::{colon_percent, contains, has_colon_percent};
use crate::classify::vtime;
use crate::message::{Format, Timestamp};
use crate::time::Zone;

use super::{IOS, KEYS, parse_tag, run_cisco_syslog, set_tag_values};

pub(crate) const CISCO_SYSLOG: App = App {
    name: "app-almost-syslog-cisco_syslog",
    topic: Topic::AlmostSyslog,
    order: "cisco/app-almost-syslog-cisco_syslog.conf",
    when: When::Raw(has_colon_percent),
    parse: cisco_syslog,
};

pub(crate) const CISCO_MS: App = App {
    name: "app-almost-syslog-cisco_ms",
    topic: Topic::AlmostSyslog,
    order: "cisco/app-almost-syslog-cisco_ms.conf",
    when: When::Header(Shape::HOST_DOT, |raw| ms_header(raw).is_some()),
    parse: cisco_ms,
};

fn cisco_syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some(pri) = pri_len(raw) else {
        return false;
    };
    // syslog-parser(no-header): MESSAGE is everything after the PRI; then the csv split at
    // the first `: %`.
    let text = &raw[pri..];
    let Some(split) = colon_percent(text) else {
        return false;
    };
    static JUNOS: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"junos"));
    if contains(&JUNOS, raw) {
        return false;
    }
    let header = &text[..split];
    let tagged: &'m [u8] = &text[split + 2..];
    let Some(tag) = parse_tag(tagged) else {
        return false;
    };
    if !looks_like_cisco(header, tag.identifier) {
        return false;
    }

    match header_host(header) {
        Some(h) => out.host = HostEdit::Set(Value::Bytes(h)),
        // no-header: HOST stays the sender's address.
        None => out.host = HostEdit::SourceIp,
    }
    out.time = TimeEdit::Recv;
    if let Some(found) = header_stamp(header) {
        out.field(
            "timesync",
            Value::Static(if found.marked { "0" } else { "1" }),
        );
        match parse_stamp(found.stamp, input.zone, input.now_unix_secs) {
            Some(ts) => {
                let ts = match found.zone.and_then(zone_for_abbrev) {
                    Some(z) => z.fix(ts).unwrap_or(ts),
                    None => ts,
                };
                out.time(ts);
            }
            None => out.field(
                "sc4s_error",
                Value::Concat(
                    "dtparse: Expected: %b %d %H:%M:%S.%f %b %d %H:%M:%S %b %d %I:%M:%S %p.%f \
                     %b %d %I:%M:%S %p %b %d %Y %I:%M:%S %p.%f %b %d %Y %H:%M:%S.%f \
                     %b %d %Y %H:%M:%S %Y-%m-%dT%T%z; Actual: ",
                    found.stamp,
                ),
            ),
        }
    }
    out.key(&KEYS[IOS]);
    out.message(if input.options.cisco_ios_raw_msg {
        text
    } else {
        tagged
    });
    out.program = Some(None);
    out.pid = Some(None);
    out.format = Some(Format::Rfc3164);
    out.identified = true;
    set_tag_values(out, &tag);
    run_cisco_syslog(input, tagged, out);
    true
}

/// SC4S's filter on the header (the text between the PRI and the first `: %`):
///
/// ```text
/// ( ( identifier is ACE, ASA, FWSM or PIX
///     or header ~ ': ?|\*'  or header ~ '[A-Z]{3,4}:?$'  or header ~ '\d+:?$' )
///   and not header ~ '[a-z]\S+$'  and not header ~ ' \w+\[\d+\]$' )
/// or identifier starts LICENSE, MGBL or SECURITY
/// ```
///
/// The lower-case test keeps Arista EOS (`host Agent: %...`) and named PROGRAMs out.
fn looks_like_cisco(header: &[u8], identifier: &[u8]) -> bool {
    if [&b"LICENSE"[..], b"MGBL", b"SECURITY"]
        .iter()
        .any(|p| identifier.starts_with(p))
    {
        return true;
    }
    let cisco_header = matches!(identifier, b"ACE" | b"ASA" | b"FWSM" | b"PIX")
        || memchr::memchr2(b':', b'*', header).is_some()
        || {
            let h = header.strip_suffix(b":").unwrap_or(header);
            let caps = h
                .iter()
                .rev()
                .take_while(|b| b.is_ascii_uppercase())
                .count();
            caps >= 3 || h.last().is_some_and(u8::is_ascii_digit)
        };
    cisco_header && !lower_case_tail(header) && !ends_with_program_pid(header)
}

/// `[a-z]\S+$`: the last whitespace-free run has a lower-case letter before its last byte.
fn lower_case_tail(h: &[u8]) -> bool {
    let start = h
        .iter()
        .rposition(|b| is_pcre_space(*b))
        .map_or(0, |i| i + 1);
    let run = &h[start..];
    run.len() >= 2 && run[..run.len() - 1].iter().any(u8::is_ascii_lowercase)
}

fn is_pcre_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// ` \w+\[\d+\]$`: the header ends with ` name[pid]`.
fn ends_with_program_pid(h: &[u8]) -> bool {
    let Some(inner) = h.strip_suffix(b"]") else {
        return false;
    };
    let digits = inner
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return false;
    }
    let Some(before) = inner[..inner.len() - digits].strip_suffix(b"[") else {
        return false;
    };
    let word = before.iter().rev().take_while(|&&b| is_word(b)).count();
    word > 0 && before.len() > word && before[before.len() - word - 1] == b' '
}

/// SC4S's host pattern on the header, first match wins:
/// `(?:[ ]|^)(?<host>(?!\d{4,})(?!\w+\[)(?:[0-9A-Za-z\-_]{4,}|\d{1,3}(?:\.\d{1,3}){3}))`:
/// a word at the start or after a space that is not a 4+ digit number nor `name[`, of at
/// least four letters, digits, `-` or `_` (cut at the first other byte, so an FQDN gives its
/// first label), or a dotted IPv4.
pub(crate) fn header_host(h: &[u8]) -> Option<&[u8]> {
    let mut p = 0;
    loop {
        if p == 0 || h[p - 1] == b' ' {
            let at = &h[p..];
            let digits = at.iter().take_while(|b| b.is_ascii_digit()).count();
            let word = at.iter().take_while(|&&b| is_word(b)).count();
            if digits < 4 && !(word > 0 && at.get(word) == Some(&b'[')) {
                let name = at
                    .iter()
                    .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    .count();
                if name >= 4 {
                    return Some(&at[..name]);
                }
                if let Some(n) = dotted_quad_len(at) {
                    return Some(&at[..n]);
                }
            }
        }
        p += 1;
        if p >= h.len() {
            return None;
        }
    }
}

/// `\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}` at the start (each run greedy, at most 3 digits).
fn dotted_quad_len(s: &[u8]) -> Option<usize> {
    let mut at = 0;
    for part in 0..4 {
        let n = s[at..]
            .iter()
            .take(3)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n == 0 {
            return None;
        }
        at += n;
        if part < 3 {
            if s.get(at) != Some(&b'.') {
                return None;
            }
            at += 1;
        }
    }
    Some(at)
}

/// A stamp found in a Cisco header.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Found<'a> {
    /// Preceded by `*` or `.`: the device's clock is not synchronised (`timesync` 0).
    pub marked: bool,
    pub stamp: &'a [u8],
    /// The 1-4 letters after it (`UTC`, `CDT`, ...), if any.
    pub zone: Option<&'a [u8]>,
}

/// SC4S's stamp pattern on the header, leftmost match:
/// `([*.])?(ISO|BSD)(?: ([A-Za-z]{1,4}))?` with
/// ISO `\d+-\d+-\d+T\d+:\d+:\d+(?:\.\d+)?(?:Z|[+-] *\d+:\d+)` and
/// BSD `[A-Z][a-z]{2} [ 0123]\d(?: \d{4})? \d\d:\d\d:\d\d(?: [AP]M)?(?:[^ :]+)?`.
pub(crate) fn header_stamp(h: &[u8]) -> Option<Found<'_>> {
    for p in 0..h.len() {
        let (start, len) = if matches!(h[p], b'*' | b'.')
            && let Some(n) = stamp_len(&h[p + 1..])
        {
            (p + 1, n)
        } else if let Some(n) = stamp_len(&h[p..]) {
            (p, n)
        } else {
            continue;
        };
        let marked = start == p + 1;
        let end = start + len;
        let rest = &h[end..];
        let zone = rest.strip_prefix(b" ").and_then(|z| {
            let n = z
                .iter()
                .take(4)
                .take_while(|b| b.is_ascii_alphabetic())
                .count();
            (n > 0).then(|| &z[..n])
        });
        return Some(Found {
            marked,
            stamp: &h[start..end],
            zone,
        });
    }
    None
}

fn stamp_len(s: &[u8]) -> Option<usize> {
    iso_len(s).or_else(|| bsd_len(s))
}

fn digits(s: &[u8], at: usize) -> usize {
    s.get(at..)
        .map_or(0, |r| r.iter().take_while(|b| b.is_ascii_digit()).count())
}

/// `\d+-\d+-\d+T\d+:\d+:\d+(?:\.\d+)?(?:Z|[+-] *\d+:\d+)`.
fn iso_len(s: &[u8]) -> Option<usize> {
    let mut at = 0;
    for sep in [b'-', b'-', b'T', b':', b':'] {
        let n = digits(s, at);
        if n == 0 || s.get(at + n) != Some(&sep) {
            return None;
        }
        at += n + 1;
    }
    let n = digits(s, at);
    if n == 0 {
        return None;
    }
    at += n;
    if s.get(at) == Some(&b'.') && digits(s, at + 1) > 0 {
        at += 1 + digits(s, at + 1);
    }
    match s.get(at) {
        Some(b'Z') => Some(at + 1),
        Some(b'+' | b'-') => {
            at += 1;
            at += s[at..].iter().take_while(|&&b| b == b' ').count();
            let h = digits(s, at);
            if h == 0 || s.get(at + h) != Some(&b':') {
                return None;
            }
            at += h + 1;
            let m = digits(s, at);
            (m > 0).then_some(at + m)
        }
        _ => None,
    }
}

/// `[A-Z][a-z]{2} [ 0123]\d(?: \d{4})? \d\d:\d\d:\d\d(?: [AP]M)?(?:[^ :]+)?`.
fn bsd_len(s: &[u8]) -> Option<usize> {
    let b = |i: usize| s.get(i).copied().unwrap_or(0);
    if !b(0).is_ascii_uppercase() || !b(1).is_ascii_lowercase() || !b(2).is_ascii_lowercase() {
        return None;
    }
    if b(3) != b' ' || !matches!(b(4), b' ' | b'0'..=b'3') || !b(5).is_ascii_digit() {
        return None;
    }
    let clock = |at: usize| {
        (b(at) == b' '
            && b(at + 1).is_ascii_digit()
            && b(at + 2).is_ascii_digit()
            && b(at + 3) == b':'
            && b(at + 4).is_ascii_digit()
            && b(at + 5).is_ascii_digit()
            && b(at + 6) == b':'
            && b(at + 7).is_ascii_digit()
            && b(at + 8).is_ascii_digit())
        .then_some(at + 9)
    };
    // The optional year: ` \d{4}` must be followed by the clock to be taken.
    let year = b(6) == b' ' && digits(s, 7) >= 4;
    let mut at = match (year.then(|| clock(11)).flatten(), clock(6)) {
        (Some(end), _) => end,
        (None, Some(end)) => end,
        (None, None) => return None,
    };
    if b(at) == b' ' && matches!(b(at + 1), b'A' | b'P') && b(at + 2) == b'M' {
        at += 3;
    }
    at += s[at..]
        .iter()
        .take_while(|&&c| c != b' ' && c != b':')
        .count();
    Some(at)
}

/// SC4S's date-parser formats for the Cisco header stamp, in its order.
const FORMATS: [&str; 8] = [
    "%b %d %H:%M:%S.%f",
    "%b %d %H:%M:%S",
    "%b %d %I:%M:%S %p.%f",
    "%b %d %I:%M:%S %p",
    "%b %d %Y %I:%M:%S %p.%f",
    "%b %d %Y %H:%M:%S.%f",
    "%b %d %Y %H:%M:%S",
    "%Y-%m-%dT%T%z",
];

fn parse_stamp(s: &[u8], zone: &Zone, now: i64) -> Option<Timestamp> {
    vtime::strptime_any(&FORMATS, s, zone, now)
}

/// Where a zone abbreviation puts the wall-clock time (SC4S's
/// `conflib/_common/tz_abbrev.csv`, read by `p_resolve_tz_abbrev`).
pub(crate) enum AbbrevZone {
    /// `Etc/GMT±N`: seconds east of UTC.
    Fixed(i32),
    /// A region with daylight saving time (`ET`, `CT`, `MT`, `PT`).
    Region(&'static LazyLock<Option<Zone>>),
}

impl AbbrevZone {
    /// syslog-ng `fix-time-zone()`: the wall-clock time kept, the zone replaced.
    pub(crate) fn fix(&self, ts: Timestamp) -> Option<Timestamp> {
        match self {
            AbbrevZone::Fixed(offset) => {
                let wall = ts.unix_secs.checked_add(i64::from(ts.offset_secs))?;
                Some(Timestamp {
                    unix_secs: wall.checked_sub(i64::from(*offset))?,
                    micros: ts.micros,
                    offset_secs: *offset,
                })
            }
            AbbrevZone::Region(z) => z.as_ref().and_then(|z| vtime::fix_time_zone(ts, z)),
        }
    }
}

static NEW_YORK: LazyLock<Option<Zone>> =
    LazyLock::new(|| Zone::from_name("America/New_York").ok());
static CHICAGO: LazyLock<Option<Zone>> = LazyLock::new(|| Zone::from_name("America/Chicago").ok());
static DENVER: LazyLock<Option<Zone>> = LazyLock::new(|| Zone::from_name("America/Denver").ok());
static LOS_ANGELES: LazyLock<Option<Zone>> =
    LazyLock::new(|| Zone::from_name("America/Los_Angeles").ok());

/// The csv's abbreviations (matched ignoring case, as its `ignore-case(yes)` lookup does).
pub(crate) fn zone_for_abbrev(name: &[u8]) -> Option<AbbrevZone> {
    const H: i32 = 3600;
    const FIXED: [(&[u8], i32); 25] = [
        (b"GMT", 0),
        (b"WET", 0),
        (b"BST", H),
        (b"IST", H),
        (b"WEST", H),
        (b"CET", H),
        (b"CEST", 2 * H),
        (b"EET", 2 * H),
        (b"EEST", 3 * H),
        (b"MSK", 3 * H),
        (b"MSD", 4 * H),
        (b"AST", -4 * H),
        (b"ADT", -3 * H),
        (b"EST", -5 * H),
        (b"EDT", -4 * H),
        (b"CST", -6 * H),
        (b"CDT", -5 * H),
        (b"MST", -7 * H),
        (b"MDT", -6 * H),
        (b"PST", -8 * H),
        (b"PDT", -7 * H),
        (b"AKST", -9 * H),
        (b"AKDT", -8 * H),
        (b"HST", -10 * H),
        (b"WST", 8 * H),
    ];
    if let Some((_, o)) = FIXED.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        return Some(AbbrevZone::Fixed(*o));
    }
    const REGIONS: [(&[u8], &LazyLock<Option<Zone>>); 4] = [
        (b"ET", &NEW_YORK),
        (b"CT", &CHICAGO),
        (b"MT", &DENVER),
        (b"PT", &LOS_ANGELES),
    ];
    REGIONS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, z)| AbbrevZone::Region(z))
}

/// `^(<\d+>) ?([A-Z][a-z]{2} *\d{1,2} \d\d:\d\d:\d\d) ([a-z0-9]+\.[a-z]+) ([^ ]+) (.*)`, read
/// without a regex: the stamp, the host and the rest.
fn ms_header(raw: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let mut at = pri_len(raw)?;
    if raw.get(at) == Some(&b' ') {
        at += 1;
    }
    let s = &raw[at..];
    let b = |i: usize| s.get(i).copied().unwrap_or(0);
    if !b(0).is_ascii_uppercase() || !b(1).is_ascii_lowercase() || !b(2).is_ascii_lowercase() {
        return None;
    }
    let mut i = 3 + s[3..].iter().take_while(|&&c| c == b' ').count();
    let d = digits(s, i);
    if !(1..=2).contains(&d) {
        return None;
    }
    i += d;
    let clock = b(i) == b' '
        && digits(s, i + 1) == 2
        && b(i + 3) == b':'
        && digits(s, i + 4) == 2
        && b(i + 6) == b':'
        && digits(s, i + 7) == 2
        && b(i + 9) == b' ';
    if !clock {
        return None;
    }
    let stamp = &s[..i + 9];
    let rest = &s[i + 10..];
    let fac = rest
        .iter()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        .count();
    // The `.` first: a BSD line's HOST is a run of the same bytes, so most fail here.
    if fac == 0 || rest.get(fac) != Some(&b'.') {
        return None;
    }
    let level = rest[fac + 1..]
        .iter()
        .take_while(|c| c.is_ascii_lowercase())
        .count();
    if level == 0 {
        return None;
    }
    let after = rest[fac + 1 + level..].strip_prefix(b" ")?;
    let host_len = after.iter().take_while(|&&c| c != b' ').count();
    if host_len == 0 || after.get(host_len) != Some(&b' ') {
        return None;
    }
    Some((stamp, &after[..host_len], &after[host_len + 1..]))
}

/// `app-almost-syslog-cisco_ms`: the `facility.level` word dropped, then syslog-ng's RFC 3164
/// parse of `PRI stamp host message`.
fn cisco_ms<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some((stamp, host, rest)) = ms_header(raw) else {
        return false;
    };
    let Some(ts) = vtime::strptime("%b %d %H:%M:%S", stamp, input.zone, input.now_unix_secs) else {
        return false;
    };
    let (program, pid, message) = split_program(rest);
    out.time(ts);
    out.host(host);
    out.program = Some(program);
    out.pid = Some(pid);
    out.message(message);
    out.format = Some(Format::Rfc3164);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::testutil::classify_line;

    #[test]
    fn header_filter() {
        assert!(looks_like_cisco(
            b"20: core-rtr-01: 6340004: Mar 19 00:22:18",
            b"SEC"
        ));
        assert!(looks_like_cisco(b"Mar 19 10:08:21.493 UTC", b"SYS"));
        assert!(looks_like_cisco(b"101 21", b"SYS"));
        assert!(looks_like_cisco(b" Mar 16 02:54:50 asa-fw-07 ", b"ASA"));
        // Arista: `host Agent` ends with a lower-case word.
        assert!(!looks_like_cisco(b"Mar 19 10:08:21 sw1 Ebra", b"LINEPROTO"));
        // A PROGRAM[PID] before the tag.
        assert!(!looks_like_cisco(
            b"Mar 22 22:47:28 SYSMGR[919]",
            b"Viptela-x-y"
        ));
        assert!(looks_like_cisco(b"x config[65539]", b"MGBL-CONFIGCLI"));
        assert!(!looks_like_cisco(b"hello world", b"FOO"));
        assert!(lower_case_tail(b"a ab"));
        assert!(!lower_case_tail(b"a AB"));
        assert!(!lower_case_tail(b"ab "));
        assert!(!lower_case_tail(b"x Ab"));
        assert!(ends_with_program_pid(b"Mar 1 SYSMGR[919]"));
        assert!(!ends_with_program_pid(b"SYSMGR[919]"));
        assert!(!ends_with_program_pid(b"a b[]"));
    }

    #[test]
    fn host_pattern() {
        let h =
            |s: &str| header_host(s.as_bytes()).map(|h| String::from_utf8_lossy(h).into_owned());
        assert_eq!(
            h("20: core-rtr-01: 6340004: Mar 19"),
            Some("core-rtr-01".into())
        );
        assert_eq!(
            h("22191: edge-rtr-04: 022546: Mar 19"),
            Some("edge-rtr-04".into())
        );
        assert_eq!(h("Mar 19 10:08:21.493 UTC"), None);
        assert_eq!(h(": 2020 Mar 19 13:23:42 EDT"), None);
        assert_eq!(h("RP/0/RP2/CPU3:Mar 20 16:31:37: config[65539]"), None);
        assert_eq!(
            h("290692: PE_CORE_01 RP/0/RP0/CPU2:Mar 20"),
            Some("PE_CORE_01".into())
        );
        assert_eq!(h("10.1.2.3: Mar 19"), Some("10.1.2.3".into()));
        assert_eq!(h("switch1.example.com: x"), Some("switch1".into()));
        assert_eq!(h("sw1.example.com: x"), None);
        assert_eq!(h(""), None);
    }

    #[test]
    fn stamp_pattern() {
        let f = header_stamp(b"20: h: *Mar  4 11:45:20.123 CDT").unwrap();
        assert!(f.marked);
        assert_eq!(f.stamp, b"Mar  4 11:45:20.123");
        assert_eq!(f.zone, Some(&b"CDT"[..]));
        let f = header_stamp(b"8103: Mar 22 2024 05:21:53 PM.071 UTC ").unwrap();
        assert!(!f.marked);
        assert_eq!(f.stamp, b"Mar 22 2024 05:21:53 PM.071");
        let f = header_stamp(b"2024-03-16T07:15:18Z ftd-core-01 ").unwrap();
        assert_eq!(f.stamp, b"2024-03-16T07:15:18Z");
        assert_eq!(f.zone, Some(&b"ftd"[..]));
        let f = header_stamp(b"x .Mar 19 10:08:21").unwrap();
        assert!(f.marked);
        assert_eq!(header_stamp(b"20: h: 1 2"), None);
        assert_eq!(header_stamp(b"00:01:01"), None);
    }

    #[test]
    fn ios_header_variants() {
        let c = classify_line(
            "<166>22191: edge-rtr-04: 022546: Mar 19 07:58:07.477 CDT: %PARSER-5-CFGLOG_LOGGEDCMD: User:x logged",
        );
        assert_eq!(c.sourcetype, "cisco:ios");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"edge-rtr-04")));
        // 07:58:07.477 CDT is 12:58:07.477 UTC.
        let TimeEdit::Stamp(ts) = c.time else {
            panic!("{:?}", c.time)
        };
        assert_eq!(ts.unix_secs.rem_euclid(86_400), 12 * 3600 + 58 * 60 + 7);
        assert_eq!(ts.micros, 477_000);
        assert_eq!(
            c.edit.message.unwrap(),
            "%PARSER-5-CFGLOG_LOGGEDCMD: User:x logged"
        );
        assert_eq!(c.fields.get("timesync"), Some(&Value::Static("1")));

        let c = classify_line("<166>Mar 19 10:08:21.493 UTC: %SYS-5-CONFIG_I: Configured");
        assert_eq!(c.host, HostEdit::SourceIp);

        let c = classify_line(
            "<189>8103: Mar 22 2024 05:21:53 PM.071 UTC : %UC_AUDITLOG-5-AdministrativeEvent: x",
        );
        assert_eq!(c.sourcetype, "cisco:ucm");
        let TimeEdit::Stamp(ts) = c.time else {
            panic!()
        };
        assert_eq!(ts.unix_secs, 1_711_128_113);

        // Uptime instead of a stamp: the receive time.
        let c = classify_line("<166>20: sw-2: 1 2: %SYS-3-X: started");
        assert_eq!(c.time, TimeEdit::Recv);
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"sw-2")));

        // An unreadable stamp: sc4s_error, the receive time.
        let c = classify_line("<166>h-1: Mar 19 10:08:21Z: %SYS-3-X: started");
        assert_eq!(c.time, TimeEdit::Recv);
        assert!(c.fields.get("sc4s_error").is_some());

        // Junos is not Cisco.
        let c = classify_line("<166>junos-1: Mar 19 10:08:21: %SYS-3-X: started");
        assert_ne!(c.app, "app-almost-syslog-cisco_syslog");
    }

    #[test]
    fn sc4s_sample_shapes() {
        let c = classify_line(
            "<134> Mar 16 02:54:50 192.168.12.1: %ACE-3-251010: Health probe failed for server",
        );
        assert_eq!(c.sourcetype, "cisco:ace");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"192.168.12.1")));
        let c = classify_line("<189>: Mar 22 21:42:21 UTC : %UCSM-6-AUDIT: [session] from ucs-1");
        assert_eq!(c.sourcetype, "cisco:ucs");
        assert_eq!(c.host, HostEdit::SourceIp);
        let c = classify_line("<189> Mar 16 09:25:32 CET: %CIMC-6-LOG_CAPACITY: [F0461] low c-7");
        assert_eq!(c.sourcetype, "cisco:cimc");
        let c = classify_line("<111>:Mar 16 03:59:57 UTC: %ASA-6-302015: Built outbound UDP");
        assert_eq!(c.sourcetype, "cisco:asa");
        assert_eq!(c.edit.message.unwrap(), "%ASA-6-302015: Built outbound UDP");
        // Marked (unsynchronised) clock.
        let c = classify_line("<166>20: r-01: 6340004: *Mar  4 11:45:20: %SEC-6-IPACCESSLOGP: x");
        assert_eq!(c.fields.get("timesync"), Some(&Value::Static("0")));
        // A generic region name follows daylight saving time: 2024-03-19 is EDT (-4).
        let c = classify_line("<166>: 2024 Mar 19 13:23:42 ET: %L2FM-4-L2FM_MAC_MOVE: Mac x");
        let TimeEdit::Stamp(ts) = c.time else {
            panic!("{:?}", c.time)
        };
        assert_eq!(ts.unix_secs.rem_euclid(86_400), 17 * 3600 + 23 * 60 + 42);
        // SC4S_ENABLE_CISCO_IOS_RAW_MSG keeps the header text.
        let cx = crate::classify::testutil::classifier_with(crate::classify::VendorOptions {
            cisco_ios_raw_msg: true,
            ..Default::default()
        });
        let c = crate::classify::testutil::classify_line_with(
            cx,
            "<166>20: r-01: Mar 19 01:27:25: %SYS-6-LOGGINGHOST_STARTSTOP: Logging",
        );
        assert_eq!(
            c.edit.message.unwrap(),
            "20: r-01: Mar 19 01:27:25: %SYS-6-LOGGINGHOST_STARTSTOP: Logging"
        );
    }

    #[test]
    fn zone_abbreviations() {
        let utc = Timestamp {
            unix_secs: 1_710_000_000,
            micros: 0,
            offset_secs: 0,
        };
        let cet = zone_for_abbrev(b"cet").unwrap().fix(utc).unwrap();
        assert_eq!(cet.unix_secs, 1_710_000_000 - 3600);
        let ast = zone_for_abbrev(b"AST").unwrap().fix(utc).unwrap();
        assert_eq!(ast.unix_secs, 1_710_000_000 + 4 * 3600);
        assert!(zone_for_abbrev(b"XYZ").is_none());
        assert!(zone_for_abbrev(b"UTC").is_none());
    }

    #[test]
    fn ms_level_word() {
        let c = classify_line("<134>Mar 15 11:32:40 local0.info sw-9 port: 3 up");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"sw-9")));
        assert_eq!(c.app, "app-fallback-nix_syslog".to_string().as_str());
    }

    #[test]
    fn ms_header_needs_a_dotted_host_shape() {
        crate::classify::testutil::assert_needs_shape(
            crate::classify::registry::Shape::HOST_DOT,
            |raw| ms_header(raw).is_some(),
            &[
                "<13>Mar 31 02:08:27 local7.info host message",
                "<13> Mar  1 02:08:27 a.b h m",
            ],
        );
    }
}
