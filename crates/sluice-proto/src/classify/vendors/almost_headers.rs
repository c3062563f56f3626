//! SC4S's other almost-syslog header repairs (`conflib/almost-syslog/`), each read in place
//! without a regex on the dispatch path:
//!
//! * `app-almost-syslogz-hip.conf`: `<PRI>Mmm dd hh:mm:ss host a.b.c.d message`, a relay's
//!   IPv4 address between HOST and PROGRAM. SC4S's pattern ends the address with a single
//!   digit and one or more spaces (`\d+\.\d+\.\d+\.\d +`), so only last octets 0-9 match;
//!   that is kept. HOST is `[a-z0-9.-]+`.
//! * `app-almost-syslogz-hostnodate.conf`: `<PRI>host rest` with no stamp at all (the line
//!   must not start `Mmm ` after the PRI). The time is the receive time.
//! * `app-almost-syslogz-isodate.conf`: `<PRI>[1]yyyy-mm-dd[ T]hh:mm:ss,fff host rest`, an
//!   ISO stamp with a comma before the fraction (Aruba ClearPass).
//! * `app-almost-syslogz-bsd-isotime.conf`: `<PRI>Mmm dd yyyy hh:mm:ss.fff+zzzz host rest`.
//!   SC4S's date-parser format (`%b %d %Y %H:%M:%S.%f%z`) needs the year and the offset;
//!   without them it fails and the application does not take the message.
//!
//! SC4S names these `app-almost-syslogz-*` so that they come after the vendors' own
//! almost-syslog applications (`app-almost-syslog-<vendor>`), which they would otherwise
//! shadow (`hostnodate` matches VMware's GUID-stamped header); the `~` in their `order`
//! sorts them after every vendor directory.
//!
//! After the repair the rest is read as `PROGRAM[PID]: MESSAGE`, as after the other repairs.
//! Not vendors: always active, like the fallbacks.

use crate::classify::registry::{App, Input, Out, Shape, TimeEdit, Topic, Vendor, When};
use crate::classify::vendors::almost_levelword::set_host_and_tail;
use crate::classify::vtime;

pub(crate) static BUILTIN: Vendor = Vendor {
    name: "almost_syslog_headers",
    keys: &[],
    apps: &[
        App {
            name: "app-almost-syslogz-bsd-isotime",
            topic: Topic::AlmostSyslog,
            order: "~almost-syslog/app-almost-syslogz-bsd-isotime.conf",
            when: When::Header(Shape::YEAR, |raw| bsd_isotime_header(raw).is_some()),
            parse: bsd_isotime,
        },
        App {
            name: "app-almost-syslogz-hip",
            topic: Topic::AlmostSyslog,
            order: "~almost-syslog/app-almost-syslogz-hip.conf",
            when: When::Header(Shape::HOST_THEN_DIGIT, |raw| hip_header(raw).is_some()),
            parse: hip,
        },
        App {
            name: "app-almost-syslogz-hostnodate",
            topic: Topic::AlmostSyslog,
            order: "~almost-syslog/app-almost-syslogz-hostnodate.conf",
            // A letter, and not a BSD month with its space (the check's first refusal).
            when: When::Header(Shape::ALPHA_NOT_MONTH, |raw| {
                hostnodate_header(raw).is_some()
            }),
            parse: hostnodate,
        },
        App {
            name: "app-almost-syslogz-isodate",
            topic: Topic::AlmostSyslog,
            order: "~almost-syslog/app-almost-syslogz-isodate.conf",
            when: When::Header(Shape::ISO_COMMA, |raw| isodate_header(raw).is_some()),
            parse: isodate,
        },
    ],
};

/// The bytes after `<\d+>`, or `None` without a PRI.
fn after_pri(raw: &[u8]) -> Option<&[u8]> {
    crate::classify::shape::pri_len(raw).map(|n| &raw[n..])
}

/// `.` in SC4S's patterns stops at a line end.
fn line(s: &[u8]) -> &[u8] {
    &s[..memchr::memchr(b'\n', s).unwrap_or(s.len())]
}

fn digits_at(s: &[u8], at: usize, n: usize) -> bool {
    s.get(at..at + n)
        .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
}

/// `hh:mm:ss` at `at`.
fn clock_at(s: &[u8], at: usize) -> bool {
    digits_at(s, at, 2)
        && s.get(at + 2) == Some(&b':')
        && digits_at(s, at + 3, 2)
        && s.get(at + 5) == Some(&b':')
        && digits_at(s, at + 6, 2)
}

/// `^<\d+> ?(\w\w\w \d\d \d\d:\d\d:\d\d) ([a-z0-9\.-]+) \d+\.\d+\.\d+\.\d +(.*)`: stamp,
/// HOST, rest.
fn hip_header(raw: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let s = after_pri(raw)?;
    let s = s.strip_prefix(b" ").unwrap_or(s);
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    if s.len() < 17
        || !s[..3].iter().all(word)
        || s[3] != b' '
        || !digits_at(s, 4, 2)
        || s[6] != b' '
        || !clock_at(s, 7)
        || s[15] != b' '
    {
        return None;
    }
    let after = &s[16..];
    let host_len = after
        .iter()
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-'))
        .count();
    if host_len == 0 || after.get(host_len) != Some(&b' ') {
        return None;
    }
    let mut at = host_len + 1;
    // Three `\d+\.` groups, then one digit and at least one space.
    for _ in 0..3 {
        let n = after[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n == 0 || after.get(at + n) != Some(&b'.') {
            return None;
        }
        at += n + 1;
    }
    if !digits_at(after, at, 1) || after.get(at + 1) != Some(&b' ') {
        return None;
    }
    at += 1;
    at += after[at..].iter().take_while(|&&b| b == b' ').count();
    Some((&s[..15], &after[..host_len], line(&after[at..])))
}

fn hip<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some((stamp, host, rest)) = hip_header(raw) else {
        return false;
    };
    if let Some(ts) = vtime::strptime("%b %d %H:%M:%S", stamp, input.zone, input.now_unix_secs) {
        out.time(ts);
    }
    set_host_and_tail(out, host, rest);
    true
}

/// `^<\d+> ?([a-zA-Z][a-zA-Z0-9\.-]+) ([^ ]+ .*)` where the text after the PRI does not
/// match `^ ?[A-Z][a-z]{2} `: HOST and the rest.
fn hostnodate_header(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let s = after_pri(raw)?;
    let s = s.strip_prefix(b" ").unwrap_or(s);
    // `not message('^\<\d+\> ?[A-Z][a-z]{2} ')`: a BSD month name is a stamp. After a
    // stripped space a second space cannot start the host, so checking `s` is enough.
    if s.len() > 3
        && s[0].is_ascii_uppercase()
        && s[1].is_ascii_lowercase()
        && s[2].is_ascii_lowercase()
        && s[3] == b' '
    {
        return None;
    }
    if !s.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let host_len = 1 + s[1..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        .count();
    if host_len < 2 || s.get(host_len) != Some(&b' ') {
        return None;
    }
    let rest = line(&s[host_len + 1..]);
    let word = rest.iter().take_while(|&&b| b != b' ').count();
    if word == 0 || rest.get(word) != Some(&b' ') {
        return None;
    }
    Some((&s[..host_len], rest))
}

fn hostnodate<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some((host, rest)) = hostnodate_header(raw) else {
        return false;
    };
    out.time = TimeEdit::Recv;
    set_host_and_tail(out, host, rest);
    true
}

/// What [`isodate_header`] finds: stamp, fraction digits, HOST, rest.
type IsoDateHeader<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a [u8]);

/// `^<\d+>1?(?: *)(\d{4}-\d{2}-\d{2}(?: |T)?\d{2}:\d{2}:\d{2}),(\d+.*)`, then the RFC 3164
/// read of `stamp.fraction host rest`.
fn isodate_header(raw: &[u8]) -> Option<IsoDateHeader<'_>> {
    let s = after_pri(raw)?;
    let s = s.strip_prefix(b"1").unwrap_or(s);
    let s = &s[s.iter().take_while(|&&b| b == b' ').count()..];
    let date = digits_at(s, 0, 4)
        && s.get(4) == Some(&b'-')
        && digits_at(s, 5, 2)
        && s.get(7) == Some(&b'-')
        && digits_at(s, 8, 2);
    if !date {
        return None;
    }
    let at = if matches!(s.get(10), Some(b' ' | b'T')) {
        11
    } else {
        10
    };
    if !clock_at(s, at) || s.get(at + 8) != Some(&b',') {
        return None;
    }
    let date_time = &s[..at + 8];
    let tail = line(&s[at + 9..]);
    let frac = tail.iter().take_while(|b| b.is_ascii_digit()).count();
    if frac == 0 {
        return None;
    }
    // The RFC 3164 parser reads the stamp up to the fraction, then one space and HOST.
    let rest = tail[frac..].strip_prefix(b" ")?;
    let host_len = rest.iter().take_while(|&&b| b != b' ').count();
    if host_len == 0 {
        return None;
    }
    let after = rest.get(host_len + 1..).unwrap_or_default();
    Some((date_time, &tail[..frac], &rest[..host_len], after))
}

fn isodate<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some((date_time, frac, host, rest)) = isodate_header(raw) else {
        return false;
    };
    let format = if date_time.get(10) == Some(&b'T') {
        "%Y-%m-%dT%H:%M:%S"
    } else if date_time.get(10) == Some(&b' ') {
        "%Y-%m-%d %H:%M:%S"
    } else {
        "%Y-%m-%d%H:%M:%S"
    };
    let Some(mut ts) = vtime::strptime(format, date_time, input.zone, input.now_unix_secs) else {
        return false;
    };
    ts = with_fraction(ts, frac);
    out.time(ts);
    set_host_and_tail(out, host, rest);
    true
}

/// `ts` plus the fraction of a second written as `frac` (decimal digits), to microseconds.
fn with_fraction(mut ts: crate::message::Timestamp, frac: &[u8]) -> crate::message::Timestamp {
    let mut micros: u32 = 0;
    for i in 0..6 {
        micros = micros * 10 + frac.get(i).map_or(0, |d| u32::from(d - b'0'));
    }
    ts.micros = micros;
    ts
}

/// `^<\d+> ?([A-Z][a-z]{2}  ?\d{1,2} \d{4} \d\d:\d\d:\d\d\.\d+(?:Z|[-+]\d{4})) ([^ ]+) (.*)`
/// (the year is optional in SC4S's pattern, but its date-parser needs it): stamp, HOST,
/// rest.
fn bsd_isotime_header(raw: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let s = after_pri(raw)?;
    let s = s.strip_prefix(b" ").unwrap_or(s);
    if s.len() < 5
        || !s[0].is_ascii_uppercase()
        || !s[1].is_ascii_lowercase()
        || !s[2].is_ascii_lowercase()
        || s[3] != b' '
    {
        return None;
    }
    let mut at = 4;
    if s[at] == b' ' {
        at += 1;
    }
    let day = s[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    if !(1..=2).contains(&day) || s.get(at + day) != Some(&b' ') {
        return None;
    }
    at += day + 1;
    if !digits_at(s, at, 4) || s.get(at + 4) != Some(&b' ') {
        return None;
    }
    at += 5;
    if !clock_at(s, at) || s.get(at + 8) != Some(&b'.') {
        return None;
    }
    at += 9;
    let frac = s[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    if frac == 0 {
        return None;
    }
    at += frac;
    match s.get(at) {
        Some(b'Z') => at += 1,
        Some(b'+' | b'-') if digits_at(s, at + 1, 4) => at += 5,
        _ => return None,
    }
    let stamp = &s[..at];
    let after = s.get(at..)?.strip_prefix(b" ")?;
    let host_len = after.iter().take_while(|&&b| b != b' ').count();
    if host_len == 0 || after.get(host_len) != Some(&b' ') {
        return None;
    }
    Some((stamp, &after[..host_len], line(&after[host_len + 1..])))
}

fn bsd_isotime<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some((stamp, host, rest)) = bsd_isotime_header(raw) else {
        return false;
    };
    let Some(ts) = vtime::strptime(
        "%b %d %Y %H:%M:%S.%f%z",
        stamp,
        input.zone,
        input.now_unix_secs,
    ) else {
        return false;
    };
    out.time(ts);
    set_host_and_tail(out, host, rest);
    true
}

#[cfg(test)]
mod tests {
    use super::{bsd_isotime_header, hip_header, hostnodate_header, isodate_header};
    use crate::classify::testutil::classify_line;
    use crate::classify::{Classification, HostEdit, TimeEdit, Value};

    fn micros(c: &Classification<'_, '_>) -> i64 {
        match c.time {
            TimeEdit::Stamp(t) => t.unix_micros(),
            other => panic!("no stamp: {other:?}"),
        }
    }

    #[test]
    fn relay_address_after_host() {
        let (stamp, host, rest) =
            hip_header(b"<150>Apr 10 10:00:00 ib-01 10.0.0.1 dhcpd[42]: DHCPACK on x").unwrap();
        assert_eq!(
            (stamp, host, rest),
            (
                &b"Apr 10 10:00:00"[..],
                &b"ib-01"[..],
                &b"dhcpd[42]: DHCPACK on x"[..]
            )
        );
        // SC4S's pattern takes a one-digit last octet only.
        assert!(hip_header(b"<150>Apr 10 10:00:00 ib-01 10.0.0.12 dhcpd[42]: x").is_none());
        assert!(hip_header(b"<150>Apr 10 10:00:00 IB-01 10.0.0.1 dhcpd[42]: x").is_none());
        assert!(hip_header(b"<150>Apr  9 10:00:00 ib-01 10.0.0.1 dhcpd[42]: x").is_none());
        let c = classify_line("<150>Apr 10 10:00:00 ib-01 10.0.0.1 dhcpd[42]: DHCPACK on x");
        assert_eq!(c.sourcetype, "isc:dhcpd");
        assert_eq!(c.app, "app-syslog-isc_dhcpd");
    }

    #[test]
    fn host_without_stamp() {
        assert_eq!(
            hostnodate_header(b"<13>relay-7 sshd[4]: accepted key"),
            Some((&b"relay-7"[..], &b"sshd[4]: accepted key"[..]))
        );
        assert!(hostnodate_header(b"<13>Apr 10 10:00:00 h p: x").is_none());
        assert!(hostnodate_header(b"<13>host: x y").is_none());
        assert!(hostnodate_header(b"<13>%ASA-1-2: x y").is_none());
        assert!(hostnodate_header(b"<13>h p: x").is_none());
        assert!(hostnodate_header(b"<13>host oneword").is_none());
        let c = classify_line("<13>relay-7 sshd[4]: accepted key");
        assert_eq!(c.sourcetype, "nix:syslog");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"relay-7")));
        assert_eq!(c.time, TimeEdit::Recv);
    }

    #[test]
    fn iso_stamp_with_comma() {
        let (dt, frac, host, rest) = isodate_header(
            b"<46>2024-04-10 10:00:00,123 cp-01 CPPM_System_Events 973 1 0 event_source=x",
        )
        .unwrap();
        assert_eq!(dt, b"2024-04-10 10:00:00");
        assert_eq!(frac, b"123");
        assert_eq!(host, b"cp-01");
        assert_eq!(rest, b"CPPM_System_Events 973 1 0 event_source=x");
        assert!(isodate_header(b"<46>2024-04-10 10:00:00.123 cp-01 x").is_none());
        let c = classify_line("<46>2024-04-10 10:00:00,123 cp-01 CPPM_System_Events 973 1 0 x");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"cp-01")));
        assert_eq!(Some(micros(&c)), Some(1_712_743_200_123_000));
    }

    #[test]
    fn bsd_stamp_with_year_fraction_and_offset() {
        let (stamp, host, rest) =
            bsd_isotime_header(b"<13>Apr 10 2024 10:00:00.123+0200 gw-1 app[1]: up").unwrap();
        assert_eq!(stamp, b"Apr 10 2024 10:00:00.123+0200");
        assert_eq!((host, rest), (&b"gw-1"[..], &b"app[1]: up"[..]));
        assert!(bsd_isotime_header(b"<13>Apr 10 10:00:00.123+0200 gw-1 app: up").is_none());
        let c = classify_line("<13>Apr 10 2024 10:00:00.123+0200 gw-1 app[1]: up");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"gw-1")));
        assert_eq!(Some(micros(&c)), Some(1_712_736_000_123_000));
    }

    #[test]
    fn header_checks_need_their_shapes() {
        use crate::classify::registry::Shape;
        use crate::classify::testutil::assert_needs_shape;
        assert_needs_shape(
            Shape::YEAR,
            |raw| bsd_isotime_header(raw).is_some(),
            &[
                "<13>Mar 15 2024 10:00:00.123+0000 host rest",
                "<13> Mar  5 2024 10:00:00.1-0500 h r",
            ],
        );
        assert_needs_shape(
            Shape::HOST_THEN_DIGIT,
            |raw| hip_header(raw).is_some(),
            &[
                "<13>Mar 31 02:08:27 host 10.0.0.9 prog: x",
                "<13> a_1 31 02:08:27 h 1.2.3.4  x",
            ],
        );
        assert_needs_shape(
            Shape::ALPHA_NOT_MONTH,
            |raw| hostnodate_header(raw).is_some(),
            &["<13>myhost prog: hello", "<13> h-1.x prog: x"],
        );
        assert_needs_shape(
            Shape::ISO_COMMA,
            |raw| isodate_header(raw).is_some(),
            &[
                "<13>2024-03-15 10:00:00,123 host rest",
                "<13>1 2024-03-15T10:00:00,123 host rest",
                "<13>  2024-03-15 10:00:00,123 host x",
            ],
        );
    }
}
