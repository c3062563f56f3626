//! Fuzz target `parse`: any byte sequence must parse without panicking, and the result must
//! only point into the input (nothing invented), with `Unparsed` keeping the raw text whole.
//! The same input is parsed in UTC, a fixed offset and a DST zone, with "now" mid-year and at
//! New Year, to reach the zone and year-inference paths.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use sluice_proto::{Format, Message, ParseOptions, ParsedRecord, Zone, parse};

static ZONES: LazyLock<[Zone; 3]> = LazyLock::new(|| {
    [
        Zone::utc(),
        Zone::from_name("+05:30").expect("fixed offset"),
        Zone::from_name("America/New_York").expect("bundled tzdb"),
    ]
});

/// 2026-07-02T12:00:00Z and 2027-01-01T00:00:30Z.
const NOWS: [i64; 2] = [1_782_993_600, 1_798_761_630];

fn within(outer: &[u8], inner: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    i >= o && i + inner.len() <= o + outer.len()
}

fn check(input: &[u8], m: &Message<'_>) {
    let mut end = input.len();
    while end > 0 && matches!(input[end - 1], b'\n' | b'\r' | 0) {
        end -= 1;
    }
    assert_eq!(m.raw, &input[..end], "raw must be the input minus its trailer");
    assert!(within(input, m.raw));
    for field in [m.hostname, m.appname, m.procid, m.msgid, m.message]
        .into_iter()
        .flatten()
    {
        assert!(within(m.raw, field), "a field does not point into the input");
    }
    if let Some(sd) = m.structured_data {
        assert!(within(m.raw, sd.raw()));
        assert_eq!(m.format, Format::Rfc5424);
        let mut n = 0;
        for el in sd.elements() {
            n += 1;
            assert!(!el.id().is_empty());
            for p in el.params() {
                assert!(!p.name().is_empty());
                let _ = p.value();
            }
        }
        assert!(n > 0, "validated SD yields no element");
    }
    if let Some(ts) = m.timestamp {
        assert!(ts.micros < 1_000_000);
        assert!(ts.offset_secs.unsigned_abs() < 24 * 3600);
    }
    match m.format {
        Format::Unparsed => {
            assert_eq!(m.message, Some(m.raw), "unparsed must keep the raw text whole");
            assert!(m.timestamp.is_none() && m.hostname.is_none() && m.appname.is_none());
            assert!(m.procid.is_none() && m.msgid.is_none() && m.structured_data.is_none());
        }
        Format::Rfc3164 => assert!(m.message.is_some() && m.priority.is_some()),
        Format::Rfc5424 => assert!(m.priority.is_some()),
    }
    let _ = ParsedRecord::from(m);
}

fuzz_target!(|data: &[u8]| {
    for zone in ZONES.iter() {
        for now in NOWS {
            let opts = ParseOptions {
                now_unix_secs: now,
                zone,
            };
            check(data, &parse(data, &opts));
        }
    }
});
