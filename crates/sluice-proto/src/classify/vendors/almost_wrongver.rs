//! SC4S's `conflib/almost-syslog/app-almost-syslogz-bsd-wrongver.conf`: a line that starts
//! like RFC 5424 (`<PRI>1 `) but is not (LEEF and other senders put their payload where the
//! structured data belongs). SC4S drops the `1` and reads the rest with syslog-ng's RFC 3164
//! parser, so the stamp, HOST and PROGRAM of the header stand. sluice reads the two stamp
//! forms that parser takes here (ISO 8601 and `Mmm dd hh:mm:ss`), then HOST and
//! `PROGRAM[PID]:`. Not a vendor: always active, like the fallbacks.

use crate::classify::fallback::iso_prefix_len;
use crate::classify::registry::{App, Input, Out, Shape, Topic, Vendor, When};
use crate::classify::vendors::almost_levelword::set_host_and_tail;
use crate::classify::vtime;

pub(crate) static BUILTIN: Vendor = Vendor {
    name: "almost_syslog_wrongver",
    keys: &[],
    apps: &[App {
        name: "app-almost-syslogz-bsd-wrongver",
        topic: Topic::AlmostSyslog,
        order: "almost-syslog/app-almost-syslogz-bsd-wrongver.conf",
        when: When::Header(Shape::DIGIT, is_wrong_version),
        parse: wrongver,
    }],
};

/// `^<\d+>1 `.
fn is_wrong_version(raw: &[u8]) -> bool {
    prefix_len(raw).is_some()
}

/// `^<\d+>1 +`: the length of that prefix.
fn prefix_len(raw: &[u8]) -> Option<usize> {
    let digits = raw
        .get(1..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if raw.first() != Some(&b'<') || digits == 0 {
        return None;
    }
    let close = 1 + digits;
    if raw.get(close) != Some(&b'>') || raw.get(close + 1..close + 3) != Some(b"1 ") {
        return None;
    }
    let spaces = raw[close + 2..].iter().take_while(|&&b| b == b' ').count();
    Some(close + 2 + spaces)
}

fn wrongver<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some(start) = prefix_len(raw) else {
        return false;
    };
    let header = &raw[start..];
    let (stamp, len) = if let Some(len) = iso_prefix_len(header) {
        (vtime::parse_iso(&header[..len], input.zone), len)
    } else if header.len() >= 15 {
        let s = vtime::strptime(
            "%b %d %H:%M:%S",
            &header[..15],
            input.zone,
            input.now_unix_secs,
        );
        (s, 15)
    } else {
        return false;
    };
    let Some(stamp) = stamp else {
        return false;
    };
    let Some(rest) = header[len..].strip_prefix(b" ") else {
        return false;
    };
    let host_len = rest.iter().take_while(|&&b| b != b' ').count();
    if host_len == 0 || host_len == rest.len() {
        return false;
    }
    out.time(stamp);
    set_host_and_tail(out, &rest[..host_len], &rest[host_len + 1..]);
    true
}

#[cfg(test)]
mod tests {
    use super::prefix_len;
    use crate::classify::testutil::classify_line;

    #[test]
    fn prefix() {
        assert_eq!(prefix_len(b"<13>1 x"), Some(6));
        assert_eq!(prefix_len(b"<13>1   x"), Some(8));
        assert_eq!(prefix_len(b"<13>12 x"), None);
        assert_eq!(prefix_len(b"<>1 x"), None);
        assert_eq!(prefix_len(b"13>1 x"), None);
    }

    #[test]
    fn header_of_a_broken_5424_line_stands() {
        let c = classify_line("<13>1 2024-04-04T12:29:53+00:00 h9 LEEF:2.0|V|P|1|E|a=1\tb=2");
        assert_eq!(c.sourcetype, "LEEF:2:0x09");
        assert_eq!(
            c.host,
            crate::classify::HostEdit::Set(crate::classify::Value::Bytes(b"h9"))
        );
    }

    #[test]
    fn needs_a_digit_after_the_pri() {
        crate::classify::testutil::assert_needs_shape(
            crate::classify::registry::Shape::DIGIT,
            super::is_wrong_version,
            &[
                "<13>1 2024-04-04T12:29:53+00:00 h9 LEEF:2.0|V|P|1|E|a=1",
                "<13>1  x",
            ],
        );
    }
}
