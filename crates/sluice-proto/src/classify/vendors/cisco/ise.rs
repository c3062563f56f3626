//! Cisco ISE and ACS (SC4S `app-syslog-cisco_ise.conf`, `app-syslog-cisco_acs.conf`).
//!
//! Both send `PROGRAM serial count seq text`; a record longer than a datagram is split into
//! `count` segments with the same serial. The first segment (`seq` 0) starts with the event
//! time `yyyy-mm-dd hh:mm:ss.fff ±zz:zz`, which becomes the time. ISE may also repeat the
//! BSD header (`Mmm dd hh:mm:ss host CISE_... ...` as MESSAGE after a first header): HOST,
//! PROGRAM, the time and MESSAGE then come from the inner one.
//!
//! SC4S's post-filters (`app-postfilter-cisco_{ise,acs}.conf`) join the segments of a
//! multi-segment record by serial within 10 s and drop the parts. sluice classifies each
//! message on its own (classification is stateless): every segment arrives, each with the
//! ISE/ACS sourcetype and its own text; none is dropped.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::Value;
use crate::classify::vtime;
use crate::message::Timestamp;
use crate::time::Zone;

pub static ISE: Vendor = Vendor {
    name: "cisco_ise",
    keys: &ISE_KEYS,
    apps: &[App {
        name: "app-syslog-cisco_ise",
        topic: Topic::Pgm,
        order: "cisco/app-syslog-cisco_ise.conf",
        // `program('CISE_' prefix) or message('CISE_' substring)`, the parser's own first
        // test: either puts `CISE_` in the raw message. A token of the shared scan, not a
        // search of its own: a search costs every 800-byte line about 440 instructions, the
        // token adds next to nothing to the scan there and about 15 on a short line.
        when: When::Token(&["CISE_"]),
        parse: ise,
    }],
};

pub static ACS: Vendor = Vendor {
    name: "cisco_acs",
    keys: &ACS_KEYS,
    apps: &[App {
        name: "app-syslog-cisco_acs",
        topic: Topic::Pgm,
        order: "cisco/app-syslog-cisco_acs.conf",
        when: When::ProgramPrefix(&["CSCOacs"]),
        parse: acs,
    }],
};

static ISE_KEYS: [Key; 1] = [Key::new("cisco", "ise", "cisco:ise:syslog", "netauth")];
static ACS_KEYS: [Key; 1] = [Key::new("cisco", "acs", "cisco:acs", "netauth")];

/// The `serial num seq message` columns (space-separated; the last takes the rest).
#[derive(Debug, PartialEq, Eq)]
struct Segment<'a> {
    seq: Option<&'a [u8]>,
    message: Option<&'a [u8]>,
}

fn segment(m: &[u8]) -> Segment<'_> {
    let mut cols = m.splitn(4, |&b| b == b' ');
    let _serial = cols.next();
    let _num = cols.next();
    Segment {
        seq: cols.next(),
        message: cols.next(),
    }
}

/// `yyyy-mm-dd hh:mm:ss.fff ±zz:zz`: the first three columns of the first segment's text.
fn segment_time<'a>(message: &'a [u8], zone: &Zone, now: i64) -> Result<Timestamp, &'a [u8]> {
    let mut end = 0;
    for _ in 0..3 {
        match memchr::memchr(b' ', &message[end..]) {
            Some(i) => end += i + 1,
            None => {
                end = message.len() + 1;
                break;
            }
        }
    }
    let stamp = &message[..end - 1];
    vtime::strptime("%Y-%m-%d %H:%M:%S.%f %z", stamp, zone, now).ok_or(stamp)
}

const SEGMENT_TIME_ERROR: &str = "dtparse: Expected: %Y-%m-%d %H:%M:%S.%f %z; Actual: ";

/// The first segment's time, or SC4S's `sc4s_error` when it cannot be read.
fn first_segment_time<'m>(input: &Input<'m, '_>, body: &'m [u8], out: &mut Out<'m>) {
    let seg = segment(body);
    if seg.seq != Some(b"0") {
        return;
    }
    match segment_time(
        seg.message.unwrap_or_default(),
        input.zone,
        input.now_unix_secs,
    ) {
        Ok(ts) => out.time(ts),
        Err(stamp) => out.field("sc4s_error", Value::Concat(SEGMENT_TIME_ERROR, stamp)),
    }
}

/// `^(\d{2}) (\d{2}:\d{2}:\d{2}) ([^ ]+) ([^ ]+) (.*)` on MESSAGE, which is what is left
/// when a second BSD header follows the first (PROGRAM is then its month).
struct Inner<'a> {
    day: &'a [u8],
    host: &'a [u8],
    program: &'a [u8],
    rest: &'a [u8],
}

fn inner_header(m: &[u8]) -> Option<Inner<'_>> {
    let d = |i: usize| m.get(i).is_some_and(u8::is_ascii_digit);
    let shape = d(0)
        && d(1)
        && m.get(2) == Some(&b' ')
        && d(3)
        && d(4)
        && m.get(5) == Some(&b':')
        && d(6)
        && d(7)
        && m.get(8) == Some(&b':')
        && d(9)
        && d(10)
        && m.get(11) == Some(&b' ');
    if !shape {
        return None;
    }
    let after = &m[12..];
    let host_len = memchr::memchr(b' ', after)?;
    let after_host = &after[host_len + 1..];
    let program_len = memchr::memchr(b' ', after_host)?;
    if host_len == 0 || program_len == 0 {
        return None;
    }
    let rest = &after_host[program_len + 1..];
    // `(.*)` stops at a line end.
    let rest = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    Some(Inner {
        day: &m[..11],
        host: &after[..host_len],
        program: &after_host[..program_len],
        rest,
    })
}

fn ise<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let program = input.program.unwrap_or_default();
    if !program.starts_with(b"CISE_")
        && crate::classify::vendors::util::find_lit!(input.body, b"CISE_").is_none()
    {
        return false;
    }
    let mut body = input.body;
    if let Some(inner) = inner_header(body) {
        // The date-parser reads `PROGRAM day time` (`Mar 21 15:19:04`); PROGRAM is the
        // month there. Without a year the nearest one is taken.
        if let Some(ts) = month_day_time(program, inner.day, input.zone, input.now_unix_secs) {
            out.time(ts);
        }
        out.host(inner.host);
        out.program = Some(Some(inner.program));
        out.pid = Some(None);
        out.message(inner.rest);
        body = inner.rest;
    }
    first_segment_time(input, body, out);
    out.key(&ISE_KEYS[0]);
    true
}

/// `%b %d %H:%M:%S` over `month` and `dd hh:mm:ss`, without building the joined text.
fn month_day_time(month: &[u8], day_time: &[u8], zone: &Zone, now: i64) -> Option<Timestamp> {
    let mut buf = [0u8; 16];
    let len = month.len() + 1 + day_time.len();
    let joined = buf.get_mut(..len)?;
    joined[..month.len()].copy_from_slice(month);
    joined[month.len()] = b' ';
    joined[month.len() + 1..].copy_from_slice(day_time);
    vtime::strptime("%b %d %H:%M:%S", joined, zone, now)
}

fn acs<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"CSCOacs")) {
        return false;
    }
    first_segment_time(input, input.body, out);
    out.key(&ACS_KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::testutil::classify_line;
    use crate::classify::{HostEdit, TimeEdit};

    #[test]
    fn columns() {
        assert_eq!(
            segment(b"0001 2 0 2024-01-01 x y"),
            Segment {
                seq: Some(b"0"),
                message: Some(b"2024-01-01 x y")
            }
        );
        assert_eq!(
            segment(b"WARN: x"),
            Segment {
                seq: None,
                message: None
            }
        );
    }

    #[test]
    fn first_segment_carries_the_time() {
        let c = classify_line(
            "<165> Mar 21 13:08:50 ise-psn-01 CISE_RADIUS_Accounting 0006028545 1 0 2024-03-21 13:08:50.865 +00:00 0088472694 3002 NOTICE x",
        );
        assert_eq!(c.sourcetype, "cisco:ise:syslog");
        assert_eq!(c.index, "netauth");
        let TimeEdit::Stamp(ts) = c.time else {
            panic!("{:?}", c.time)
        };
        assert_eq!((ts.unix_secs, ts.micros), (1_711_026_530, 865_000));

        // A later segment keeps the header time.
        let c = classify_line(
            "<165> Mar 21 13:08:50 ise-psn-01 CISE_RADIUS_Accounting 0006028545 2 1 more text",
        );
        assert_eq!(c.time, TimeEdit::Keep);

        // A first segment with an unreadable stamp: sc4s_error.
        let c = classify_line("<165> Mar 21 13:08:50 ise-psn-01 CISE_X 0006028545 1 0 garbage");
        assert!(c.fields.get("sc4s_error").is_some());

        let c = classify_line(
            "<165> Mar 15 23:39:29 acs-aaa-01 CSCOacs_Single_Authentications: 0765855540 1 0 2024-03-15 23:39:29.891 +00:00 0178632943 5202 NOTICE x",
        );
        assert_eq!(c.sourcetype, "cisco:acs");
        let TimeEdit::Stamp(ts) = c.time else {
            panic!()
        };
        assert_eq!(ts.unix_secs, 1_710_545_969);
    }

    #[test]
    fn double_header() {
        let c = classify_line(
            "<165>Mar 21 15:19:04 wrong_host Mar 21 15:19:04 ise-pan-01 CISE_System_Statistics 0000001313 1 4 2020-01-01 10:00:00.000000 +00:00 x",
        );
        assert_eq!(c.sourcetype, "cisco:ise:syslog");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"ise-pan-01")));
        assert_eq!(c.edit.program, Some(Some(&b"CISE_System_Statistics"[..])));
        assert_eq!(
            c.edit.message.unwrap(),
            "0000001313 1 4 2020-01-01 10:00:00.000000 +00:00 x"
        );
        let c = classify_line("<165> Mar 21 14:13:57 ise-psn-02 CISE_Alarm WARN: RADIUS x");
        assert_eq!(c.sourcetype, "cisco:ise:syslog");
    }

    /// The filter passes a CISE_ PROGRAM or a CISE_ MESSAGE and skips other programs.
    #[test]
    fn cise_filter() {
        for line in [
            "<165> Mar 21 14:13:57 ise-psn-02 CISE_Alarm WARN: RADIUS x",
            "<165> Mar 21 14:13:57 ise-psn-02 ise: Mar 21 14:13:57 ise-psn-02 CISE_Alarm WARN: x",
        ] {
            assert_eq!(classify_line(line).sourcetype, "cisco:ise:syslog", "{line}");
        }
        for line in [
            "<165> Mar 21 14:13:57 ise-psn-02 sshd: CISE login",
            "<165> Mar 21 14:13:57 ise-psn-02 sshd: cise_alarm login",
        ] {
            assert_eq!(classify_line(line).sourcetype, "nix:syslog", "{line}");
        }
    }
}
