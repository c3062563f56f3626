//! SC4S's `conflib/almost-syslog/app-almost-syslogy-wlevelword.conf`: a BSD header with a
//! log-level word between HOST and PROGRAM (`Mar 27 09:08:53 host notice tmsh[1]: ...`, as
//! F5 BIG-IP sends). The word is dropped and the rest read as RFC 3164, so the vendor
//! applications see the real PROGRAM. Not a vendor: always active, like the fallbacks.

use crate::classify::registry::{App, Input, Out, Shape, Topic, Vendor, When};
use crate::classify::vtime;
use crate::message::Format;

pub(crate) static BUILTIN: Vendor = Vendor {
    name: "almost_syslog_levelword",
    keys: &[],
    apps: &[App {
        name: "app-almost-syslogz-wlevelword",
        topic: Topic::AlmostSyslog,
        order: "almost-syslog/app-almost-syslogy-wlevelword.conf",
        // `hh:mm:ss host <level word> ` right after the first `:`, checked in place (as
        // tokens, ` info ` and ` err` would be searched for in every message).
        // `header`, which `levelword` needs, reads `\w\w\w +\d{1,2} hh:mm:ss HOST ` and a
        // level word after the PRI: the shape bit is its necessary condition.
        when: When::Header(Shape::HOST_THEN_LEVEL, level_word_follows_host),
        parse: levelword,
    }],
};

/// The end of an almost-syslog header repair: HOST found, the rest read as
/// `PROGRAM[PID]: MESSAGE`, and the message treated as RFC 3164 from here on.
pub(crate) fn set_host_and_tail<'m>(out: &mut Out<'m>, host: &'m [u8], rest: &'m [u8]) {
    let (program, pid, message) = split_program(rest);
    out.host(host);
    out.program = Some(program);
    out.pid = Some(pid);
    out.message(message);
    out.format = Some(Format::Rfc3164);
}

/// `PROGRAM[PID]: MESSAGE` as syslog-ng's RFC 3164 parser splits it
/// (`_syslog_format_parse_legacy_program_name`): PROGRAM is the first word, up to a space,
/// `[` or `:`, colon or not; then `[PID` up to a space, `]` or `:` (the `]` skipped when
/// there); then one `:` and one space, each when present. `None` PROGRAM when the text
/// starts with one of those bytes (syslog-ng's empty PROGRAM).
pub(crate) fn split_program(text: &[u8]) -> (Option<&[u8]>, Option<&[u8]>, &[u8]) {
    let end = text
        .iter()
        .position(|&b| matches!(b, b' ' | b'[' | b':'))
        .unwrap_or(text.len());
    let program = Some(&text[..end]).filter(|p| !p.is_empty());
    let mut at = end;
    let mut pid = None;
    if text.get(at) == Some(&b'[') {
        let from = at + 1;
        let n = text[from..]
            .iter()
            .position(|&b| matches!(b, b' ' | b']' | b':'))
            .unwrap_or(text.len() - from);
        at = from + n;
        // syslog-ng keeps the PID only when something follows it.
        if at < text.len() {
            pid = Some(&text[from..at]).filter(|p| !p.is_empty());
        }
        if text.get(at) == Some(&b']') {
            at += 1;
        }
    }
    if text.get(at) == Some(&b':') {
        at += 1;
    }
    if text.get(at) == Some(&b' ') {
        at += 1;
    }
    (program, pid, &text[at..])
}

/// A necessary condition of the header pattern, without the regex: the first `:` is the one
/// in `hh:mm:ss`, then ` <host> <level word> `. The tokens that select this application
/// (` info `, ` err`, ...) are common in message text; this keeps those messages off the
/// capturing regex.
fn level_word_follows_host(raw: &[u8]) -> bool {
    const WORDS: [&[u8]; 9] = [
        b"alert ",
        b"crit ",
        b"debug ",
        b"emerg ",
        b"error ",
        b"err ",
        b"info ",
        b"notice ",
        b"warning ",
    ];
    let Some(c) = memchr::memchr(b':', raw) else {
        return false;
    };
    if raw.get(c + 3) != Some(&b':') || raw.get(c + 6) != Some(&b' ') {
        return false;
    }
    let rest = &raw[c + 7..];
    let Some(sp) = memchr::memchr(b' ', rest) else {
        return false;
    };
    // The first byte picks the words worth comparing (a compare each was most of the cost).
    let tail = &rest[sp + 1..];
    let Some(&first) = tail.first() else {
        return false;
    };
    sp > 0 && WORDS.iter().any(|w| w[0] == first && tail.starts_with(w))
}

/// `^<\d+> ?(\w\w\w +\d{1,2} \d\d:\d\d:\d\d) ([^ ]+) (?:alert|crit|debug|emerg|error|err|info|notice|warning) (.*)`
/// read in place (a capturing regex here cost more than the rest of classification): the
/// stamp, HOST and the rest of the line.
fn header(raw: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    const WORDS: [&[u8]; 9] = [
        b"alert", b"crit", b"debug", b"emerg", b"error", b"err", b"info", b"notice", b"warning",
    ];
    let digits = raw
        .get(1..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if raw.first() != Some(&b'<') || digits == 0 || raw.get(1 + digits) != Some(&b'>') {
        return None;
    }
    let mut at = digits + 2;
    if raw.get(at) == Some(&b' ') {
        at += 1;
    }
    let s = &raw[at..];
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    if s.len() < 4 || !s[..3].iter().all(word) || s[3] != b' ' {
        return None;
    }
    let mut i = 3 + s[3..].iter().take_while(|&&b| b == b' ').count();
    let day = s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if !(1..=2).contains(&day) {
        return None;
    }
    i += day;
    let d = |k: usize| s.get(k).is_some_and(u8::is_ascii_digit);
    let clock = s.get(i) == Some(&b' ')
        && d(i + 1)
        && d(i + 2)
        && s.get(i + 3) == Some(&b':')
        && d(i + 4)
        && d(i + 5)
        && s.get(i + 6) == Some(&b':')
        && d(i + 7)
        && d(i + 8)
        && s.get(i + 9) == Some(&b' ');
    if !clock {
        return None;
    }
    let stamp = &s[..i + 9];
    let after = &s[i + 10..];
    let host_len = after.iter().take_while(|&&b| b != b' ').count();
    if host_len == 0 || after.get(host_len) != Some(&b' ') {
        return None;
    }
    let tail = &after[host_len + 1..];
    let level = WORDS
        .iter()
        .find(|w| tail.starts_with(w) && tail.get(w.len()) == Some(&b' '))?;
    let rest = &tail[level.len() + 1..];
    // `.` does not cross a line end.
    let rest = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    Some((stamp, &after[..host_len], rest))
}

fn levelword<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some((stamp, host, rest)) = header(raw) else {
        return false;
    };
    if let Some(ts) = vtime::strptime("%b %d %H:%M:%S", stamp, input.zone, input.now_unix_secs) {
        out.time(ts);
    }
    set_host_and_tail(out, host, rest);
    true
}

#[cfg(test)]
mod tests {
    use super::{level_word_follows_host, split_program};
    use crate::classify::testutil::classify_line;

    #[test]
    fn split() {
        assert_eq!(
            split_program(b"tmm1[2]: x y"),
            (Some(&b"tmm1"[..]), Some(&b"2"[..]), &b"x y"[..])
        );
        assert_eq!(split_program(b"a: b"), (Some(&b"a"[..]), None, &b"b"[..]));
        // syslog-ng takes the first word, colon or not.
        assert_eq!(
            split_program(b"a b: c"),
            (Some(&b"a"[..]), None, &b"b: c"[..])
        );
        assert_eq!(split_program(b" a"), (None, None, &b"a"[..]));
        assert_eq!(
            split_program(b"a[1 x"),
            (Some(&b"a"[..]), Some(&b"1"[..]), &b"x"[..])
        );
        assert_eq!(split_program(b"a[1"), (Some(&b"a"[..]), None, &b""[..]));
        assert_eq!(split_program(b"word"), (Some(&b"word"[..]), None, &b""[..]));
    }

    #[test]
    fn cheap_header_check() {
        assert!(level_word_follows_host(
            b"<166>Mar 27 10:14:00 ltm2 warning tmm[1]: x"
        ));
        assert!(level_word_follows_host(b"<166> Mar  7 10:14:00 h err x"));
        assert!(!level_word_follows_host(
            b"<13>Mar 27 10:14:00 h1 app: an info message"
        ));
        assert!(!level_word_follows_host(
            b"<13>Mar 27 10:14:00 h1 informational x"
        ));
        assert!(!level_word_follows_host(b"<13>no colon info "));
    }

    #[test]
    fn header_shape() {
        use super::header;
        let (stamp, host, rest) =
            header(b"<166>Mar 27 10:14:00 ltm2 warning tmm[1]: x\ny").unwrap();
        assert_eq!(
            (stamp, host, rest),
            (&b"Mar 27 10:14:00"[..], &b"ltm2"[..], &b"tmm[1]: x"[..])
        );
        assert!(header(b"<166> Mar  7 10:14:00 h err x").is_some());
        assert!(header(b"<166>Mar 27 10:14:00 h errors x").is_none());
        assert!(header(b"<166>Mar 27 10:14:00 h info").is_none());
        assert!(header(b"<166>Mar 127 10:14:00 h info x").is_none());
        assert!(header(b"166>Mar 27 10:14:00 h info x").is_none());
    }

    #[test]
    fn level_word_is_dropped() {
        let c = classify_line("<166>Mar 27 10:14:00 ltm2 warning tmm[23068]: 01260013:4: SSL x");
        assert_eq!(c.sourcetype, "f5:bigip:syslog");
        let c = classify_line("<166>Mar 27 10:14:00 ltm2 info CROND[6551]: (root) CMD (nice)");
        assert_eq!(c.sourcetype, "nix:syslog");
    }

    /// `levelword` takes nothing `header` refuses, and `header` needs the stamp, HOST and a
    /// level word's first byte.
    #[test]
    fn needs_a_stamp_host_and_level_word() {
        crate::classify::testutil::assert_needs_shape(
            crate::classify::registry::Shape::HOST_THEN_LEVEL,
            |raw| super::header(raw).is_some(),
            &[
                "<13>Mar 31 02:08:27 host info something",
                "<13> Mar  1 02:08:27 h err x",
            ],
        );
    }
}
