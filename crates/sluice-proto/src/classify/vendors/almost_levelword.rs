//! SC4S's `conflib/almost-syslog/app-almost-syslogy-wlevelword.conf`: a BSD header with a
//! log-level word between HOST and PROGRAM (`Mar 27 09:08:53 host notice tmsh[1]: ...`, as
//! F5 BIG-IP sends). The word is dropped and the rest read as RFC 3164, so the vendor
//! applications see the real PROGRAM. Not a vendor: always active, like the fallbacks.

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

fn levelword<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^<\d+> ?(\w\w\w +\d{1,2} \d\d:\d\d:\d\d) ([^ ]+) (?:alert|crit|debug|emerg|error|err|info|notice|warning) (.*)",
        )
        .expect("static regex")
    });
    let raw = input.msg.raw;
    let Some(c) = HEADER.captures(raw) else {
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
    use super::split_program;
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
    fn level_word_is_dropped() {
        let c = classify_line("<166>Mar 27 10:14:00 ltm2 warning tmm[23068]: 01260013:4: SSL x");
        assert_eq!(c.sourcetype, "f5:bigip:syslog");
        let c = classify_line("<166>Mar 27 10:14:00 ltm2 info CROND[6551]: (root) CMD (nice)");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
