//! SC4S's built-in applications: the `fallback` topic (`conflib/fallback/`) and the
//! PRI-less parsers of `sc4s-raw-syslog` (`conflib/raw/`). They are always active.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::message::Format;

use super::registry::{App, Input, Key, Out, Source, Topic, Vendor, When};
use super::template::Template;
use super::value::Value;
use super::vtime;

/// `app-fallbackz-lastchance`'s metadata.
pub(crate) static LASTCHANCE_KEY: Key = Key::new("splunk", "sc4s", "sc4s:fallback", "main")
    .class("fallback")
    .template(Template::FallbackKv);

/// The fallback application chosen for an unidentified message.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Choice<'m> {
    pub vendor: Value<'m, 'static>,
    pub product: Value<'m, 'static>,
    pub class: Option<&'static str>,
    pub sourcetype: &'static str,
    pub index: &'static str,
    pub source: Source,
    pub template: Option<Template>,
    pub app: &'static str,
}

/// The first of `app-fallback-netsource`, `app-fallback-nix_syslog`,
/// `app-fallbackz-lastchance` whose filter accepts the message: the first two need RFC 5424,
/// or RFC 3164 with a PROGRAM and a non-empty MESSAGE; netsource also needs a vendor and
/// product from the listener or `vendor_product_by_source`.
pub(crate) fn choose<'m>(
    format: Format,
    program: Option<&[u8]>,
    has_message: bool,
    netsource: (Value<'m, 'static>, Value<'m, 'static>),
) -> Choice<'m> {
    let (ns_vendor, ns_product) = netsource;
    let qualifies = match format {
        Format::Rfc5424 => true,
        Format::Rfc3164 => program.is_some() && has_message,
        Format::Unparsed => false,
    };
    if qualifies && !ns_vendor.is_empty() && !ns_product.is_empty() {
        Choice {
            vendor: ns_vendor,
            product: ns_product,
            class: Some("nix_syslog"),
            sourcetype: "nix:syslog",
            index: "osnix",
            source: Source::Program,
            template: None,
            app: "app-fallback-netsource",
        }
    } else if qualifies {
        Choice {
            vendor: Value::Static("nix"),
            product: Value::Static("syslog"),
            class: None,
            sourcetype: "nix:syslog",
            index: "osnix",
            source: Source::Program,
            template: None,
            app: "app-fallback-nix_syslog",
        }
    } else {
        Choice {
            vendor: Value::Static(LASTCHANCE_KEY.vendor),
            product: Value::Static(LASTCHANCE_KEY.product),
            class: LASTCHANCE_KEY.class,
            sourcetype: LASTCHANCE_KEY.sourcetype,
            index: LASTCHANCE_KEY.index,
            source: Source::Static("sc4s"),
            template: LASTCHANCE_KEY.template,
            app: "app-fallbackz-lastchance",
        }
    }
}

/// The built-in raw-line parsers (always active).
pub(crate) static BUILTIN: Vendor = Vendor {
    name: "sc4s",
    keys: &[],
    apps: &[
        App {
            name: "app-raw-bsd_nopri",
            topic: Topic::Raw,
            order: "raw/app-raw-bsd_nopri.conf",
            when: When::Always,
            parse: raw_bsd_nopri,
        },
        App {
            name: "app-raw-isodate",
            topic: Topic::Raw,
            order: "raw/app-raw-isodate.conf",
            when: When::Always,
            parse: raw_isodate,
        },
    ],
};

/// A PRI-less BSD line (`Mmm dd hh:mm:ss `): syslog-ng parses it as RFC 3164, which is
/// what sluice's parser already did.
fn raw_bsd_nopri<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\w{3} ([0 ][1-9]|[12]\d|3[01]) (0\d|1\d|2[0-3]):([0-5]\d):([0-5]\d) ")
            .expect("static regex")
    });
    if input.msg.format != Format::Rfc3164 || !RE.is_match(input.msg.raw) {
        return false;
    }
    out.format = Some(Format::Rfc3164);
    true
}

/// A PRI-less line starting with an ISO date: MESSAGE is the rest, the time is the date
/// (the default zone when it has none); the line stays raw. SC4S's pattern
/// `^\d{4}-\d{2}-\d{2}(?: |T)?\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:?\d{2}|Z)?\s?`, read
/// without a regex (no allocation per message).
fn raw_isodate<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let raw = input.msg.raw;
    let Some(len) = iso_prefix_len(raw) else {
        return false;
    };
    let Some(stamp) = vtime::parse_iso(&raw[..len], input.zone) else {
        return false;
    };
    let rest = &raw[len..];
    let rest = match rest.first() {
        Some(b) if b.is_ascii_whitespace() => &rest[1..],
        _ => rest,
    };
    out.time(stamp);
    out.message(rest);
    true
}

/// The length of the ISO stamp at the start of `s`, if there is one.
pub(crate) fn iso_prefix_len(s: &[u8]) -> Option<usize> {
    let digits = |at: usize, n: usize| {
        s.get(at..at + n)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let byte = |at: usize, b: u8| s.get(at) == Some(&b);
    if !(digits(0, 4) && byte(4, b'-') && digits(5, 2) && byte(7, b'-') && digits(8, 2)) {
        return None;
    }
    let mut at = 10;
    if byte(at, b' ') || byte(at, b'T') {
        at += 1;
    }
    if !(digits(at, 2)
        && byte(at + 2, b':')
        && digits(at + 3, 2)
        && byte(at + 5, b':')
        && digits(at + 6, 2))
    {
        return None;
    }
    at += 8;
    if byte(at, b'.') && digits(at + 1, 1) {
        at += 1;
        while digits(at, 1) {
            at += 1;
        }
    }
    if byte(at, b'Z') {
        at += 1;
    } else if (byte(at, b'+') || byte(at, b'-')) && digits(at + 1, 2) {
        let mut end = at + 3;
        if byte(end, b':') {
            end += 1;
        }
        if digits(end, 2) {
            at = end + 2;
        }
    }
    Some(at)
}
