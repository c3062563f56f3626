//! FTD lines sent without a PRI (SC4S `app-raw-cisco_ftd_nopri-{bsd,iso}.conf`, topic
//! `sc4s-raw-syslog`): `Mmm dd yyyy hh:mm:ss host : %FTD-...` or
//! `yyyy-mm-ddThh:mm:ss±zz host : %FTD-...`. HOST and MESSAGE (from `%FTD-`) are taken from
//! the line; the `cisco_syslog` application then labels it. Not anchored, as in SC4S.

use std::sync::LazyLock;

use crate::classify::registry::{App, Input, Out, TimeEdit, Topic, When};
use crate::classify::value::Value;
use crate::classify::vtime;

pub(crate) const FTD_NOPRI_BSD: App = App {
    name: "app-raw-cisco_ftd_nopri_bsddate-bsd",
    topic: Topic::Raw,
    order: "cisco/app-raw-cisco_ftd_nopri-bsd.conf",
    when: When::Raw(has_ftd_tag),
    parse: nopri_bsd,
};

pub(crate) const FTD_NOPRI_ISO: App = App {
    name: "app-raw-cisco_ftd_nopri_isodate-iso",
    topic: Topic::Raw,
    order: "cisco/app-raw-cisco_ftd_nopri-iso.conf",
    when: When::Raw(has_ftd_tag),
    parse: nopri_iso,
};

/// Only PRI-less lines reach this topic, so a search of each is cheap enough (as a token it
/// would be searched for in every message).
fn has_ftd_tag(raw: &[u8]) -> bool {
    static NEEDLE: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"%FTD-"));
    crate::classify::vendors::util::contains(&NEEDLE, raw)
}

/// `%FTD-\d-\d+:.*`: the length of `%FTD-d-ddd:` when `s` starts with it.
fn is_ftd_message(s: &[u8]) -> bool {
    let Some(r) = s.strip_prefix(b"%FTD-") else {
        return false;
    };
    let n = r.iter().take_while(|b| b.is_ascii_digit()).count();
    // `\d-\d+:`: one digit, then (greedy \d+ backtracks) at least one digit before `:`.
    n == 1 && r.get(1) == Some(&b'-') && {
        let m = r[2..].iter().take_while(|b| b.is_ascii_digit()).count();
        m > 0 && r.get(2 + m) == Some(&b':')
    }
}

/// ` (?<host>[^ ]+)?(?: : | *)(?<message>%FTD-\d-\d+:.*)` after a stamp: the host (if any)
/// and where the message starts, for the first `%FTD-` that follows as the pattern allows.
fn host_and_message(after: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    let rest = after.strip_prefix(b" ")?;
    // No host: spaces, then the message.
    let spaces = rest.iter().take_while(|&&b| b == b' ').count();
    // With a host the pattern prefers the host alternative (greedy `?`): try it first.
    let host_len = rest.iter().take_while(|&&b| b != b' ').count();
    if host_len > 0 {
        let tail = &rest[host_len..];
        let msg = if let Some(m) = tail.strip_prefix(b" : ") {
            Some(m)
        } else {
            let s = tail.iter().take_while(|&&b| b == b' ').count();
            Some(&tail[s..])
        };
        if let Some(m) = msg.filter(|m| is_ftd_message(m)) {
            return Some((Some(&rest[..host_len]), m));
        }
        // `[^ ]+` can also end inside the word, right before `%FTD-`.
        if let Some(i) = crate::classify::vendors::util::find_lit!(&rest[..host_len], b"%FTD-")
            && i > 0
            && is_ftd_message(&rest[i..])
        {
            return Some((Some(&rest[..i]), &rest[i..]));
        }
    }
    let m = &rest[spaces..];
    is_ftd_message(m).then_some((None, m))
}

fn nopri_bsd<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    // `[A-Z][a-z]{2} *\d{1,2} \d{4} \d\d:\d\d:\d\d`, anywhere: try each capital letter.
    for (i, _) in raw
        .iter()
        .enumerate()
        .filter(|(_, b)| b.is_ascii_uppercase())
    {
        let Some(len) = bsd_year_stamp_len(&raw[i..]) else {
            continue;
        };
        let Some((host, message)) = host_and_message(&raw[i + len..]) else {
            continue;
        };
        out.message(message);
        // `set("${.tmp.host}" value("HOST"))`: empty when the line names none.
        out.host(host.unwrap_or_default());
        // SC4S's date-parser here reads `${.tmp.timeStamp}` (capital S), which is never
        // set, so it always fails: the receive time, and its error field.
        out.time = TimeEdit::Recv;
        out.field(
            "sc4s_error",
            Value::Static(
                "dtparse: Expected: %b %d %H:%M:%S.%f %b %d %H:%M:%S %b %d %I:%M:%S %p.%f \
                 %b %d %I:%M:%S %p %b %d %Y %I:%M:%S %p.%f%b %d %Y %H:%M:%S.%f \
                 %b %d %Y %H:%M:%S; Actual: ",
            ),
        );
        return true;
    }
    false
}

fn bsd_year_stamp_len(s: &[u8]) -> Option<usize> {
    let b = |i: usize| s.get(i).copied().unwrap_or(0);
    if !b(0).is_ascii_uppercase() || !b(1).is_ascii_lowercase() || !b(2).is_ascii_lowercase() {
        return None;
    }
    let mut at = 3 + s[3..].iter().take_while(|&&c| c == b' ').count();
    let d = s[at..].iter().take_while(|c| c.is_ascii_digit()).count();
    if !(1..=2).contains(&d) || b(at + d) != b' ' {
        return None;
    }
    at += d + 1;
    let year = s[at..].iter().take_while(|c| c.is_ascii_digit()).count();
    if year != 4 || b(at + 4) != b' ' {
        return None;
    }
    at += 5;
    let clock = b(at).is_ascii_digit()
        && b(at + 1).is_ascii_digit()
        && b(at + 2) == b':'
        && b(at + 3).is_ascii_digit()
        && b(at + 4).is_ascii_digit()
        && b(at + 5) == b':'
        && b(at + 6).is_ascii_digit()
        && b(at + 7).is_ascii_digit();
    clock.then_some(at + 8)
}

/// SC4S's formats for the ISO stamp (each needs a zone).
const ISO_FORMATS: [&str; 6] = [
    "%Y-%m-%dT%T.%f%z",
    "%Y-%m-%dT%T%z",
    "%Y-%m-%d %T.%f%z",
    "%Y-%m-%d %T%z",
    "%Y-%m-%d%T.%f%z",
    "%Y-%m-%d%T%z",
];

fn nopri_iso<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    // `\d{4}-\d\d-\d\d.\d\d:\d\d:\d\d[^ ]*`, anywhere, then ` host(?: : | *)%FTD-...`.
    for i in 0..raw.len() {
        let s = &raw[i..];
        let d = |k: usize| s.get(k).is_some_and(u8::is_ascii_digit);
        let shape = (0..4).all(d)
            && s.get(4) == Some(&b'-')
            && d(5)
            && d(6)
            && s.get(7) == Some(&b'-')
            && d(8)
            && d(9)
            && s.len() > 10
            && d(11)
            && d(12)
            && s.get(13) == Some(&b':')
            && d(14)
            && d(15)
            && s.get(16) == Some(&b':')
            && d(17)
            && d(18);
        if !shape {
            continue;
        }
        let len = 19 + s[19..].iter().take_while(|&&b| b != b' ').count();
        let Some(rest) = s[len..].strip_prefix(b" ") else {
            continue;
        };
        let host_len = rest.iter().take_while(|&&b| b != b' ').count();
        if host_len == 0 {
            continue;
        }
        let tail = &rest[host_len..];
        let message = match tail.strip_prefix(b" : ") {
            Some(m) if is_ftd_message(m) => m,
            _ => &tail[tail.iter().take_while(|&&b| b == b' ').count()..],
        };
        if !is_ftd_message(message) {
            continue;
        }
        // date-parser (not the no-filter variant): an unreadable stamp fails the
        // application, and the next raw parser gets the line.
        let Some(ts) =
            vtime::strptime_any(&ISO_FORMATS, &s[..len], input.zone, input.now_unix_secs)
        else {
            return false;
        };
        out.message(message);
        out.host(&rest[..host_len]);
        out.time(ts);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::testutil::classify_line;
    use crate::classify::{HostEdit, TimeEdit};

    #[test]
    fn ftd_message_shape() {
        assert!(is_ftd_message(b"%FTD-6-430003: x"));
        assert!(!is_ftd_message(b"%FTD-6-: x"));
        assert!(!is_ftd_message(b"%FTD-66-1: x"));
        assert!(!is_ftd_message(b"%FTD-6-1 x"));
    }

    #[test]
    fn nopri_lines() {
        let c = classify_line("Mar 16 2024 07:15:18 ftd-1 : %FTD-6-430003: DeviceUUID: x");
        assert_eq!(c.sourcetype, "cisco:ftd");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"ftd-1")));
        assert_eq!(c.edit.message.unwrap(), "%FTD-6-430003: DeviceUUID: x");
        assert_eq!(c.time, TimeEdit::Recv);

        let c = classify_line("2024-03-16T07:15:18Z ftd-2 : %FTD-6-302013: Built");
        assert_eq!(c.sourcetype, "cisco:asa");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"ftd-2")));
        let TimeEdit::Stamp(ts) = c.time else {
            panic!("{:?}", c.time)
        };
        assert_eq!(ts.unix_secs, 1_710_573_318);
    }
}
