//! Inputs that once broke the parser, found by fuzzing (`fuzz/`, target `parse`). Every file in
//! `tests/regressions/` is a crash artifact kept verbatim; each is replayed in the same zones and
//! at the same "now" values as the fuzz target, with the same invariants.

use std::path::Path;

use sluice_proto::{Format, Message, ParseOptions, ParsedRecord, Zone, parse};

/// 2026-07-02T12:00:00Z and 2027-01-01T00:00:30Z, as in the fuzz target.
const NOWS: [i64; 2] = [1_782_993_600, 1_798_761_630];

fn zones() -> [Zone; 3] {
    [
        Zone::utc(),
        Zone::from_name("+05:30").expect("fixed offset"),
        Zone::from_name("America/New_York").expect("bundled tzdb"),
    ]
}

fn within(outer: &[u8], inner: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    i >= o && i + inner.len() <= o + outer.len()
}

fn check(input: &[u8], m: &Message<'_>) {
    for field in [m.hostname, m.appname, m.procid, m.msgid, m.message]
        .into_iter()
        .flatten()
    {
        assert!(within(input, field));
    }
    if m.format == Format::Unparsed {
        assert_eq!(m.message, Some(m.raw));
    }
    let _ = ParsedRecord::from(m);
}

fn parse_everywhere(input: &[u8]) -> Vec<Format> {
    let mut formats = Vec::new();
    for zone in &zones() {
        for now in NOWS {
            let m = parse(
                input,
                &ParseOptions {
                    now_unix_secs: now,
                    zone,
                },
            );
            check(input, &m);
            formats.push(m.format);
        }
    }
    formats
}

#[test]
fn fuzz_artifacts_parse_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/regressions exists") {
        let path = entry.expect("readable entry").path();
        let input = std::fs::read(&path).expect("readable artifact");
        parse_everywhere(&input);
        n += 1;
    }
    assert!(n > 0, "no regression inputs in {}", dir.display());
}

/// fuzz crash 9ed7251b: a non-digit inside the fixed-width part of an ISO stamp made the
/// two-digit reader compute `h * 10 + l` before checking the digits (`bool::then_some` is
/// eager), overflowing `u8` (a panic with overflow checks on).
#[test]
fn iso_stamp_with_non_digits_is_not_a_stamp() {
    for line in [
        &b"<13>1 2016-01-15T01:00:4 S - - - -"[..],
        b"<13>1 2016-01-15T01:0S:45Z h a - - -",
        b"<13>1 2S16-01-15T01:00:45Z h a - - -",
    ] {
        assert!(
            parse_everywhere(line)
                .iter()
                .all(|f| *f == Format::Unparsed)
        );
    }
    for line in [
        &b"<13>2016-01-15T01:00:4 host app: x"[..],
        b"2016-01-1\xFFT01:00:45 host app: x",
    ] {
        assert!(parse_everywhere(line).iter().all(|f| *f == Format::Rfc3164));
        let zone = Zone::utc();
        let m = parse(
            line,
            &ParseOptions {
                now_unix_secs: NOWS[0],
                zone: &zone,
            },
        );
        assert!(m.timestamp.is_none());
        assert!(m.hostname.is_none());
    }
}
