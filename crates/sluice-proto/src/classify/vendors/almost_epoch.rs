//! SC4S's `conflib/almost-syslog/app-almost-syslogz-bsd-epoch.conf`: a header whose stamp is
//! epoch seconds (`<PRI>1 1710501160.123 host ...` or `<PRI>1710501160 host ...`, as Cisco
//! Meraki sends). SC4S reads the stamp as the time and the rest with syslog-ng's RFC 3164
//! parser (HOST, then `PROGRAM[PID]:`), so a listener's or `vendor_product_by_source`'s
//! vendor sees an RFC message. Not a vendor: always active, like the fallbacks.

use crate::classify::registry::{App, Input, Out, Shape, Topic, Vendor, When};
use crate::classify::vendors::almost_levelword::set_host_and_tail;
use crate::classify::vtime;

pub(crate) static BUILTIN: Vendor = Vendor {
    name: "almost_syslog_epoch",
    keys: &[],
    apps: &[App {
        name: "app-almost-syslogz-bsd-epoch",
        topic: Topic::AlmostSyslog,
        order: "almost-syslog/app-almost-syslogz-bsd-epoch.conf",
        when: When::Header(Shape::DIGIT, |raw| header(raw).is_some()),
        parse: epoch,
    }],
};

/// `^<\d+>(?:1(?= ))? ?(\d{10,13}(?:\.\d+)?) (.*)`: the stamp and the rest.
fn header(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let digits = raw
        .get(1..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if raw.first() != Some(&b'<') || digits == 0 || raw.get(1 + digits) != Some(&b'>') {
        return None;
    }
    let mut at = digits + 2;
    // `1(?= )`: a version digit only when a space follows (else it starts the stamp).
    if raw.get(at..at + 2) == Some(b"1 ") {
        at += 1;
    }
    if raw.get(at) == Some(&b' ') {
        at += 1;
    }
    let s = &raw[at..];
    let secs = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if !(10..=13).contains(&secs) {
        return None;
    }
    let mut end = secs;
    if s.get(end) == Some(&b'.') {
        let frac = s[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if frac > 0 {
            end += 1 + frac;
        }
    }
    let rest = s.get(end..)?.strip_prefix(b" ")?;
    Some((&s[..end], rest))
}

fn epoch<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw: &'m [u8] = input.msg.raw;
    let Some((stamp, rest)) = header(raw) else {
        return false;
    };
    // `%s.%f` / `%s`: ten digits are seconds; longer runs (11-13 digits) are read as
    // milliseconds, the unit devices that send them use.
    let int_len = stamp.iter().take_while(|b| b.is_ascii_digit()).count();
    let Some(ts) = vtime::parse_epoch(stamp, int_len > 10) else {
        return false;
    };
    // The RFC 3164 parse of `PRI ISODATE rest`: HOST is the first word.
    let host_len = rest.iter().take_while(|&&b| b != b' ').count();
    if host_len == 0 {
        return false;
    }
    let after = rest.get(host_len + 1..).unwrap_or_default();
    out.time(ts);
    set_host_and_tail(out, &rest[..host_len], after);
    true
}

#[cfg(test)]
mod tests {
    use super::header;
    use crate::classify::testutil::classify_line;
    use crate::classify::{HostEdit, TimeEdit, Value};

    #[test]
    fn header_shapes() {
        assert_eq!(
            header(b"<134>1 1710501160.123 mx-1 flows x"),
            Some((&b"1710501160.123"[..], &b"mx-1 flows x"[..]))
        );
        assert_eq!(
            header(b"<134> 1710501160 mx-1 x"),
            Some((&b"1710501160"[..], &b"mx-1 x"[..]))
        );
        assert_eq!(
            header(b"<134>1710501160 mx-1 x"),
            Some((&b"1710501160"[..], &b"mx-1 x"[..]))
        );
        assert_eq!(header(b"<134>1 2024-03-15T11:32:40Z h x"), None);
        assert_eq!(header(b"<134>123456789 h x"), None);
        assert_eq!(header(b"<134>1710501160"), None);
    }

    #[test]
    fn epoch_stamp_header_is_read() {
        let c = classify_line("<134>1 1710501160.123 mx-1 flows src=10.0.0.1 dst=8.8.8.8");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"mx-1")));
        let TimeEdit::Stamp(ts) = c.time else {
            panic!("{:?}", c.time)
        };
        assert_eq!((ts.unix_secs, ts.micros), (1_710_501_160, 123_000));
        assert_eq!(c.format, crate::message::Format::Rfc3164);
    }

    #[test]
    fn needs_a_digit_after_the_pri() {
        crate::classify::testutil::assert_needs_shape(
            crate::classify::registry::Shape::DIGIT,
            |raw| header(raw).is_some(),
            &[
                "<134>1 1710501160.123 mx-1 flows x",
                "<134> 1710501160 mx-1 x",
                "<134>1710501160 mx-1 x",
            ],
        );
    }
}
