//! SC4S's `conflib/almost-syslog/app-almost-syslogy-wlevelword.conf`: a BSD header with a
//! log-level word between HOST and PROGRAM (`Mar 27 09:08:53 host notice tmsh[1]: ...`, as
//! F5 BIG-IP sends). The word is dropped and the rest read as RFC 3164, so the vendor
//! applications see the real PROGRAM. Not a vendor: always active, like the fallbacks.

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Out, Topic, Vendor, When};
use crate::classify::vtime;
use crate::message::Format;

pub(crate) static BUILTIN: Vendor = Vendor {
    name: "almost_syslog_levelword",
    keys: &[],
    apps: &[App {
        name: "app-almost-syslogz-wlevelword",
        topic: Topic::AlmostSyslog,
        order: "almost-syslog/app-almost-syslogy-wlevelword.conf",
        when: When::Token(&[
            " alert ",
            " crit ",
            " debug ",
            " emerg ",
            " err",
            " info ",
            " notice ",
            " warning ",
        ]),
        parse: levelword,
    }],
};

/// `PROGRAM[PID]: MESSAGE` as syslog-ng's RFC 3164 parser splits it; `None` PROGRAM when
/// the text has no `name[pid]:` / `name:` head.
pub(crate) fn split_program(text: &[u8]) -> (Option<&[u8]>, Option<&[u8]>, &[u8]) {
    let Some(end) = text
        .iter()
        .position(|&b| b == b'[' || b == b':' || b == b' ')
    else {
        return (None, None, text);
    };
    if end == 0 {
        return (None, None, text);
    }
    let program = &text[..end];
    let mut rest = &text[end..];
    let mut pid = None;
    if let Some(r) = rest.strip_prefix(b"[") {
        let Some(close) = memchr::memchr(b']', r) else {
            return (None, None, text);
        };
        pid = Some(&r[..close]);
        rest = &r[close + 1..];
    }
    match rest.strip_prefix(b":") {
        Some(m) => (Some(program), pid, m.strip_prefix(b" ").unwrap_or(m)),
        None => (None, None, text),
    }
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
    sp > 0 && WORDS.iter().any(|w| rest[sp + 1..].starts_with(w))
}

fn levelword<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^<\d+> ?(\w\w\w +\d{1,2} \d\d:\d\d:\d\d) ([^ ]+) (?:alert|crit|debug|emerg|error|err|info|notice|warning) (.*)",
        )
        .expect("static regex")
    });
    let raw = input.msg.raw;
    if !level_word_follows_host(raw) {
        return false;
    }
    let Some(c) = HEADER.caps(raw) else {
        return false;
    };
    let (Some(stamp), Some(host), Some(rest)) = (c.get(1), c.get(2), c.get(3)) else {
        return false;
    };
    if let Some(ts) = vtime::strptime(
        "%b %d %H:%M:%S",
        stamp.as_bytes(),
        input.zone,
        input.now_unix_secs,
    ) {
        out.time(ts);
    }
    let (program, pid, message) = split_program(&raw[rest.range()]);
    out.host(&raw[host.range()]);
    out.program = Some(program);
    out.pid = Some(pid);
    out.message(message);
    out.format = Some(Format::Rfc3164);
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
        assert_eq!(split_program(b"a b: c"), (None, None, &b"a b: c"[..]));
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
    fn level_word_is_dropped() {
        let c = classify_line("<166>Mar 27 10:14:00 ltm2 warning tmm[23068]: 01260013:4: SSL x");
        assert_eq!(c.sourcetype, "f5:bigip:syslog");
        let c = classify_line("<166>Mar 27 10:14:00 ltm2 info CROND[6551]: (root) CMD (nice)");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
