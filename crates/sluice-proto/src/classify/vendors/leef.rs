//! LEEF (SC4S `conflib/syslog/app-syslog-leef.conf`, `pylib/parser_leef.py`): generic LEEF
//! 1.0/2.0, then the `leef` topic for vendor specifics (`Topic::Sub("leef")`).
//!
//! * Matched by a PROGRAM starting `LEEF` (syslog-ng splits `LEEF:2.0|...` into PROGRAM
//!   `LEEF` and MESSAGE `2.0|...`; SC4S glues them back with `${PROGRAM}:${MESSAGE}`).
//! * The text is split on `|`: version, vendor, product, product version, EventID; the last
//!   part is the event. Version 1 separates pairs by tab; when that gives fewer than four
//!   pairs the pairs are the `|` parts after the EventID. Version 2 names its separator in
//!   the sixth part (`^`, `0x5E`, `x5E`); none or empty means tab.
//! * sourcetype `LEEF:1`, or `LEEF:2:<separator in hex>`; source `<vendor>:<product>`;
//!   vendor/product from the header; index `main`; the event text is the event part.
//! * Time: `devTime` (zone names removed) as epoch or `Mmm dd [yyyy] hh:mm:ss[.fff]`.
//! * Fewer than five `|` parts is SC4S's parser exception: sourcetype `leef`, vendor
//!   `leef`, product `generic`, and (unlike SC4S, whose event would be empty) the whole text.
//!
//! One difference remains: for a version 1 event with `|` pairs SC4S re-joins them with tabs;
//! sluice allocates nothing per message and keeps the `|` text as it came.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::{Inline, Value};
use crate::classify::vtime;

use std::sync::LazyLock;

pub static VENDOR: Vendor = Vendor {
    name: "leef",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-leef",
        topic: Topic::Pgm,
        order: "syslog/app-syslog-leef.conf",
        when: When::ProgramPrefix(&["LEEF"]),
        parse: leef,
    }],
};

static KEYS: &[Key] = &[Key::new("leef", "generic", "leef", "main").template(Template::MsgOnly)];

/// The parsed LEEF header, as the `leef` topic's applications read it from `out.nv`.
pub const NV_VENDOR: &str = "leef_vendor";
pub const NV_PRODUCT: &str = "leef_product";
pub const NV_VERSION: &str = "leef_product_version";
pub const NV_EVENT_ID: &str = "leef_event_id";

/// The LEEF text: from PROGRAM's first byte to the end of the message.
fn leef_text<'m>(input: &Input<'m, '_>) -> &'m [u8] {
    if input.body.starts_with(b"LEEF:") {
        return input.body;
    }
    let raw: &'m [u8] = input.msg.raw;
    if let Some(p) = input.program {
        let start = raw.as_ptr() as usize;
        let at = p.as_ptr() as usize;
        if at >= start && at < start + raw.len() {
            return &raw[at - start..];
        }
    }
    match crate::classify::vendors::util::find_lit!(raw, b"LEEF:") {
        Some(at) => &raw[at..],
        None => input.body,
    }
}

fn leef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"LEEF")) {
        return false;
    }
    out.key(&KEYS[0]);
    let text = leef_text(input);
    out.message(text);
    let mut parts = text.split(|&b| b == b'|');
    let (Some(version), Some(vendor), Some(product), Some(pversion), Some(event_id)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return true;
    };
    let version = version.get(5..).unwrap_or_default();
    let count = memchr::memchr_iter(b'|', text).count() + 1;
    let last_at = memchr::memrchr(b'|', text).map_or(0, |p| p + 1);
    let mut event = &text[last_at..];
    // Where the parts after the EventID start (the sixth part).
    let sixth = memchr::memchr_iter(b'|', text)
        .nth(4)
        .map_or(text.len(), |i| i + 1);
    let mut sep: &[u8] = b"\t";
    let v1 = version.starts_with(b"1");
    if v1 {
        if split_iter(event, sep).take(4).count() < 4 {
            sep = b"|";
            event = &text[sixth..];
        }
    } else {
        let field5 = parts.next().unwrap_or_default();
        if count != 6 && !field5.is_empty() {
            sep = field5.strip_prefix(b"0").unwrap_or(field5);
        }
    }
    out.message(event);
    if v1 {
        out.sourcetype_inline(&[b"LEEF:1"]);
    } else {
        let mut hex = [0u8; 40];
        if let Some(h) = hex_separator(sep, &mut hex) {
            out.sourcetype_inline(&[b"LEEF:2:", h]);
        }
    }
    if let Some(i) = Inline::concat(&[vendor, b":", product]) {
        out.source = Some(Value::Inline(i));
    }
    out.vendor = Some(Value::Bytes(vendor));
    out.product = Some(Value::Bytes(product));
    for (n, v) in [
        (NV_VENDOR, vendor),
        (NV_PRODUCT, product),
        (NV_VERSION, pversion),
        (NV_EVENT_ID, event_id),
    ] {
        out.nv.set(n, v);
    }
    let dev_time = dev_time(event, sep);
    if let Some(v) = dev_time
        && let Some(ts) = parse_dev_time(v, input)
    {
        out.time(ts);
    }
    input.topic("leef", out);
    true
}

/// `0x` and the separator's bytes in lowercase hex; a separator given as `x5E` is taken as
/// written (lowercased).
fn hex_separator<'b>(sep: &[u8], buf: &'b mut [u8; 40]) -> Option<&'b [u8]> {
    if sep.first() == Some(&b'x') {
        let n = sep.len() + 1;
        let dst = buf.get_mut(..n)?;
        dst[0] = b'0';
        for (d, s) in dst[1..].iter_mut().zip(sep) {
            *d = s.to_ascii_lowercase();
        }
        return Some(&buf[..n]);
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let n = 2 + 2 * sep.len();
    let dst = buf.get_mut(..n)?;
    dst[0] = b'0';
    dst[1] = b'x';
    for (i, b) in sep.iter().enumerate() {
        dst[2 + 2 * i] = HEX[usize::from(b >> 4)];
        dst[3 + 2 * i] = HEX[usize::from(b & 15)];
    }
    Some(&buf[..n])
}

/// Python's `str.split(sep)` for a non-empty separator.
fn split_iter<'a>(s: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        let found = match sep {
            [] => None,
            // Tab or `|` almost always: no searcher to build.
            [b] => memchr::memchr(*b, r),
            _ => crate::classify::vendors::util::find(r, sep),
        };
        match found {
            Some(at) => {
                rest = Some(&r[at + sep.len()..]);
                Some(&r[..at])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// The value of the last `devTime=` part of `event`.
fn dev_time<'a>(event: &'a [u8], sep: &'a [u8]) -> Option<&'a [u8]> {
    static DEV_TIME: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"devTime="));
    match *sep {
        // With a one-byte separator that `devTime=` does not hold, a part starts exactly
        // where `devTime=` follows the separator: no need to split every part.
        [b] if !DEV_TIME.needle().contains(&b) => DEV_TIME
            .find_iter(event)
            .filter(|&at| at == 0 || event[at - 1] == b)
            .last()
            .map(|at| {
                let v = &event[at + DEV_TIME.needle().len()..];
                &v[..memchr::memchr(b, v).unwrap_or(v.len())]
            }),
        _ => split_iter(event, sep)
            .filter_map(|p| {
                let eq = memchr::memchr(b'=', p)?;
                (&p[..eq] == b"devTime").then(|| &p[eq + 1..])
            })
            .last(),
    }
}

/// SC4S removes zone names (`( ?(?:[A-Z]{2,4}T|HAEC|IDLW|MSK|NT|UTC|THA))`) from devTime and
/// then tries epoch and BSD-style formats when at least 4 characters remain.
fn parse_dev_time(v: &[u8], input: &Input<'_, '_>) -> Option<crate::message::Timestamp> {
    let mut buf = [0u8; 64];
    let mut n = 0;
    let mut i = 0;
    while i < v.len() {
        if let Some(len) = zone_name_at(v, i) {
            i += len;
            continue;
        }
        *buf.get_mut(n)? = v[i];
        n += 1;
        i += 1;
    }
    let cleaned = &buf[..n];
    if cleaned.len() < 4 {
        return None;
    }
    vtime::strptime_any(
        &[
            "%s.%f",
            "%s",
            "%b %d %H:%M:%S",
            "%b %d %H:%M:%S.%f",
            "%b %d %Y %H:%M:%S.%f",
        ],
        cleaned,
        input.zone,
        input.now_unix_secs,
    )
}

/// The length of a zone name (with one leading space) at `at`, as SC4S's regex finds it.
fn zone_name_at(v: &[u8], at: usize) -> Option<usize> {
    let space = usize::from(v.get(at) == Some(&b' '));
    let s = &v[at + space..];
    for word in [&b"HAEC"[..], b"IDLW", b"MSK", b"NT", b"UTC", b"THA"] {
        if s.starts_with(word) {
            return Some(space + word.len());
        }
    }
    // [A-Z]{2,4}T, longest first as the regex backtracks.
    let upper = s
        .iter()
        .take(4)
        .take_while(|b| b.is_ascii_uppercase())
        .count();
    for k in (2..=upper).rev() {
        if s.get(k) == Some(&b'T') {
            return Some(space + k + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::testutil::classify_line;

    #[test]
    fn separators_in_hex() {
        let mut b = [0u8; 40];
        assert_eq!(hex_separator(b"^", &mut b), Some(&b"0x5e"[..]));
        assert_eq!(hex_separator(b"x5E", &mut b), Some(&b"0x5e"[..]));
        assert_eq!(hex_separator(b"\t", &mut b), Some(&b"0x09"[..]));
        assert_eq!(hex_separator(&[b'a'; 30], &mut b), None);
    }

    #[test]
    fn dev_time_is_the_last_devtime_part() {
        let split = |event: &'static [u8], sep: &'static [u8]| {
            split_iter(event, sep)
                .filter_map(|p| {
                    let eq = memchr::memchr(b'=', p)?;
                    (&p[..eq] == b"devTime").then(|| &p[eq + 1..])
                })
                .last()
        };
        for (event, sep) in [
            (&b"a=1\tdevTime=Jan 1\tb=2"[..], &b"\t"[..]),
            (b"devTime=1\tdevTime=2", b"\t"),
            (b"x=devTime=3\tdevTime=4\t", b"\t"),
            (b"xdevTime=3\ty", b"\t"),
            (b"devTime=5^cat=devTime=6", b"^"),
            (b"devTime=5=devTime=7", b"="),
            (b"a|devTime=8|b", b"|"),
            (b"a^^devTime=9^^b", b"^^"),
            (b"", b"\t"),
        ] {
            assert_eq!(
                dev_time(event, sep),
                split(event, sep),
                "{:?}",
                String::from_utf8_lossy(event)
            );
        }
        assert_eq!(dev_time(b"devTime=1\tdevTime=2", b"\t"), Some(&b"2"[..]));
    }

    #[test]
    fn zone_names_are_removed() {
        assert_eq!(zone_name_at(b"x GMT", 1), Some(4));
        assert_eq!(zone_name_at(b"UTC", 0), Some(3));
        assert_eq!(zone_name_at(b"Sep", 0), None);
        assert_eq!(zone_name_at(b"12", 0), None);
    }

    #[test]
    fn versions_and_separators() {
        let c = classify_line(
            "<13>Jan 18 11:07:53 h1 LEEF:2.0|Vendor|Product|1|Ev|0x5E|src=1^dst=2^sev=5^cat=x",
        );
        assert_eq!(c.sourcetype, "LEEF:2:0x5e");
        assert_eq!(
            (c.vendor, c.product),
            (Value::Bytes(b"Vendor"), Value::Bytes(b"Product"))
        );
        let c = classify_line(
            "<13>Jan 18 11:07:53 h1 LEEF:2.0|Vendor|Product|1|Ev||src=1\tdst=2\tsev=5\tcat=x",
        );
        assert_eq!(c.sourcetype, "LEEF:2:0x09");
        let c = classify_line("<13>Jan 18 11:07:53 h1 LEEF:1.0|V|P|1|Ev|a=1\tb=2\tc=3\td=4");
        assert_eq!(c.sourcetype, "LEEF:1");
        assert_eq!(c.template, Template::MsgOnly);
        // Too short a header: SC4S's generic LEEF key, nothing dropped.
        let c = classify_line("<13>Jan 18 11:07:53 h1 LEEF:1.0|V|P");
        assert_eq!(c.sourcetype, "leef");
        assert_eq!(c.vendor, "leef");
    }
}

#[cfg(test)]
mod sc4s_shapes {
    use crate::classify::testutil::classify_line;

    /// The header shapes SC4S's LEEF tests send: with and without PRI, BSD and RFC 5424
    /// stamps, each separator spelling.
    #[test]
    fn header_shapes() {
        for (line, st) in [
            (
                "Jan 18 11:07:53 myhost LEEF:1.0|Vendor|Product|Version|EventID|src=1\tdst=2\tsev=5\tcat=x",
                "LEEF:1",
            ),
            (
                "<13>1 2024-01-18T11:07:53.520Z myhost LEEF:2.0|Vendor|Product|Version|EventID|0x5E|src=1^dst=2",
                "LEEF:2:0x5e",
            ),
            (
                "<13>1 2024-01-18T11:07:53.520Z myhost LEEF:2.0|Vendor|Product|Version|EventID|x5E|src=1^dst=2",
                "LEEF:2:0x5e",
            ),
            (
                "<13>1 2024-01-18T11:07:53.520Z myhost LEEF:2.0|Vendor|Product|Version|EventID||src=1\tdst=2",
                "LEEF:2:0x09",
            ),
        ] {
            let c = classify_line(line);
            assert_eq!(c.sourcetype, st, "{line}");
            assert_eq!(c.vendor, "Vendor", "{line}");
            // Keep: the header's HOST (myhost) stands.
            assert!(
                matches!(
                    c.host,
                    crate::classify::HostEdit::Keep
                        | crate::classify::HostEdit::Set(crate::classify::Value::Bytes(b"myhost"))
                ),
                "{line}: {:?}",
                c.host
            );
        }
    }
}
