//! Property tests for the parser: totality and "nothing invented" on arbitrary bytes, round
//! trips for well-formed RFC 5424 and RFC 3164 lines, and end-to-end year/DST behaviour.

use proptest::prelude::*;
use sluice_proto::message::SdElement;
use sluice_proto::{Format, Message, ParseOptions, ParsedRecord, Zone, parse};

/// An SD element as (id, [(name, value)]).
type SdPairs = (String, Vec<(String, String)>);

/// 2026-07-02T12:00:00Z.
const MID_2026: i64 = 1_782_993_600;

fn opts(zone: &Zone) -> ParseOptions<'_> {
    ParseOptions {
        now_unix_secs: MID_2026,
        zone,
    }
}

fn unix(y: i16, mo: i8, d: i8, h: i8, mi: i8, s: i8) -> i64 {
    jiff::civil::date(y, mo, d)
        .at(h, mi, s, 0)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .expect("valid")
        .timestamp()
        .as_second()
}

/// `inner` lies inside `outer` (the parser returned a view of the input, not new bytes).
fn within(outer: &[u8], inner: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    i >= o && i + inner.len() <= o + outer.len()
}

fn stripped(input: &[u8]) -> &[u8] {
    let mut end = input.len();
    while end > 0 && matches!(input[end - 1], b'\n' | b'\r' | 0) {
        end -= 1;
    }
    &input[..end]
}

/// The invariants every parse result must satisfy, whatever the input.
fn check_invariants(input: &[u8], m: &Message<'_>) -> Result<(), TestCaseError> {
    prop_assert_eq!(m.raw, stripped(input));
    prop_assert!(within(input, m.raw));
    for field in [m.hostname, m.appname, m.procid, m.msgid, m.message]
        .into_iter()
        .flatten()
    {
        prop_assert!(within(m.raw, field), "field not borrowed from the input");
    }
    if let Some(sd) = m.structured_data {
        prop_assert!(within(m.raw, sd.raw()));
        prop_assert_eq!(m.format, Format::Rfc5424);
        let els: Vec<SdElement<'_>> = sd.elements().collect();
        prop_assert!(!els.is_empty(), "validated SD yields no element");
        for el in els {
            prop_assert!(!el.id().is_empty());
            for p in el.params() {
                prop_assert!(!p.name().is_empty());
                let _ = p.value();
            }
        }
    }
    if let Some(ts) = m.timestamp {
        prop_assert!(ts.micros < 1_000_000);
        prop_assert!(ts.offset_secs.unsigned_abs() < 24 * 3600);
    }
    match m.format {
        Format::Unparsed => {
            prop_assert_eq!(
                m.message,
                Some(m.raw),
                "unparsed must keep the raw text whole"
            );
            prop_assert!(m.timestamp.is_none() && m.hostname.is_none() && m.appname.is_none());
            prop_assert!(m.procid.is_none() && m.msgid.is_none() && m.structured_data.is_none());
        }
        Format::Rfc3164 => {
            prop_assert!(m.message.is_some());
            prop_assert!(m.priority.is_some());
        }
        Format::Rfc5424 => prop_assert!(m.priority.is_some()),
    }
    if m.priority.is_none() {
        prop_assert_eq!(m.format, Format::Unparsed);
    }
    // The display form must never panic either.
    let _ = ParsedRecord::from(m);
    Ok(())
}

/// Fragments that steer random lines into every branch of both grammars.
fn syslogish() -> impl Strategy<Value = Vec<u8>> {
    let frag = prop_oneof![
        Just("<13>".to_string()),
        Just("<191>1 ".to_string()),
        Just("<0>".to_string()),
        Just("<".to_string()),
        Just("1 ".to_string()),
        Just("-".to_string()),
        Just(" ".to_string()),
        Just("  ".to_string()),
        Just(":".to_string()),
        Just(": ".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("=".to_string()),
        Just("*".to_string()),
        Just(".".to_string()),
        Just("Jan  1 ".to_string()),
        Just("Feb 29 ".to_string()),
        Just("dec 31 2025 ".to_string()),
        Just("12:00:00".to_string()),
        Just("23:59:59.1234567".to_string()),
        Just(" 2007 ".to_string()),
        Just("2026-03-05T12:28:51".to_string()),
        Just("2026-03-05 12:28:51".to_string()),
        // Truncated stamps: non-digits where digits belong (fuzz crash 9ed7251b).
        Just("2016-01-15T01:00:4".to_string()),
        Just("Mar  1 12:0".to_string()),
        Just(".123".to_string()),
        Just("+01:00".to_string()),
        Just("-0530".to_string()),
        Just("Z".to_string()),
        Just("host".to_string()),
        Just("10.1.2.3".to_string()),
        Just("app[12]".to_string()),
        Just("%ASA-3-003164: ".to_string()),
        Just("Message forwarded from ".to_string()),
        Just("[id a=\"v\\\"\"]".to_string()),
        Just("[id a=b]".to_string()),
        Just("\u{feff}".to_string()),
        Just("\n".to_string()),
        Just("\r".to_string()),
        Just("\0".to_string()),
        "[a-z0-9]{1,5}",
        "[\\x00-\\xff]{1,3}",
    ];
    proptest::collection::vec(frag, 0..24).prop_map(|v| v.concat().into_bytes())
}

fn escape_sd(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '"' | '\\' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..600)) {
        let zone = Zone::utc();
        let m = parse(&input, &opts(&zone));
        check_invariants(&input, &m)?;
    }

    #[test]
    fn syslog_shaped_bytes_keep_invariants(input in syslogish()) {
        let zone = Zone::utc();
        let m = parse(&input, &opts(&zone));
        check_invariants(&input, &m)?;
        let ny = Zone::from_name("America/New_York").expect("bundled tzdb");
        let m = parse(&input, &opts(&ny));
        check_invariants(&input, &m)?;
    }

    #[test]
    fn rfc5424_round_trip(
        pri in 0u8..=191,
        host in "[!-~]{1,255}",
        app in "[!-~]{1,48}",
        procid in "[!-~]{1,128}",
        msgid in "[!-~]{1,32}",
        elements in proptest::collection::btree_map(
            "[!#-<>-\\\\^-~]{1,32}",
            proptest::collection::vec(("[!#-<>-\\\\^-~]{1,32}", "\\PC{0,12}|[\"\\\\\\]\\[ a]{0,8}"), 0..4),
            0..4,
        ),
        msg in proptest::option::of("\\PC{0,40}"),
        bom in any::<bool>(),
    ) {
        prop_assume!(![&host, &app, &procid, &msgid].iter().any(|f| f.as_str() == "-"));
        let mut line = format!("<{pri}>1 2003-08-24T05:14:15.000003-07:00 {host} {app} {procid} {msgid} ");
        if elements.is_empty() {
            line.push('-');
        }
        for (id, params) in &elements {
            line.push('[');
            line.push_str(id);
            for (name, value) in params {
                line.push_str(&format!(" {name}=\"{}\"", escape_sd(value)));
            }
            line.push(']');
        }
        if let Some(msg) = &msg {
            line.push(' ');
            if bom {
                line.push('\u{feff}');
            }
            line.push_str(msg);
        }
        let zone = Zone::utc();
        let m = parse(line.as_bytes(), &opts(&zone));
        prop_assert_eq!(m.format, Format::Rfc5424, "{}", line);
        let r = ParsedRecord::from(&m);
        prop_assert_eq!(r.facility, Some(pri >> 3));
        prop_assert_eq!(r.hostname.as_deref(), Some(host.as_str()));
        prop_assert_eq!(r.appname.as_deref(), Some(app.as_str()));
        prop_assert_eq!(r.procid.as_deref(), Some(procid.as_str()));
        prop_assert_eq!(r.msgid.as_deref(), Some(msgid.as_str()));
        prop_assert_eq!(r.timestamp.as_deref(), Some("2003-08-24T05:14:15.000003-07:00"));
        // Trailing LF/CR/NUL of the whole line are not part of MSG.
        let want_msg = msg.as_deref().map(|s| s.trim_end_matches(['\n', '\r', '\0']));
        prop_assert_eq!(r.message.as_deref(), want_msg);
        let want_sd: Option<Vec<SdPairs>> = if elements.is_empty() {
            None
        } else {
            Some(elements.into_iter().collect())
        };
        let got_sd = r
            .structured_data
            .map(|els| els.into_iter().map(|e| (e.id, e.params)).collect::<Vec<_>>());
        prop_assert_eq!(got_sd, want_sd);
    }

    #[test]
    fn rfc3164_round_trip(
        pri in 0u8..=191,
        month in 1usize..=12,
        day in 1u8..=28,
        hour in 0u8..=23,
        minute in 0u8..=59,
        second in 0u8..=59,
        host in "[a-z0-9][a-z0-9.-]{0,20}",
        tag in proptest::option::of(("[A-Za-z0-9_/().%-]{1,20}", proptest::option::of("[0-9]{1,7}"))),
        msg in "[!-~][ -~]{0,40}",
    ) {
        // A 4-digit HOSTNAME right after the time is read as the Linksys year (documented).
        prop_assume!(!(host.len() == 4 && host.bytes().all(|b| b.is_ascii_digit())));
        const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        let mut line = format!("<{pri}>{} {day:>2} {hour:02}:{minute:02}:{second:02} {host} ", MONTHS[month - 1]);
        if let Some((name, pid)) = &tag {
            line.push_str(name);
            if let Some(pid) = pid {
                line.push_str(&format!("[{pid}]"));
            }
            line.push_str(": ");
        }
        line.push_str(&msg);
        let zone = Zone::utc();
        let m = parse(line.as_bytes(), &opts(&zone));
        prop_assert_eq!(m.format, Format::Rfc3164);
        prop_assert!(m.year_inferred);
        let ts = m.timestamp.expect("timestamp");
        prop_assert_eq!(ts.unix_secs, unix(2026, month as i8, day as i8, hour as i8, minute as i8, second as i8));
        prop_assert_eq!(m.hostname, Some(host.as_bytes()));
        match &tag {
            Some((name, pid)) => {
                prop_assert_eq!(m.appname, Some(name.as_bytes()));
                prop_assert_eq!(m.procid, pid.as_deref().map(str::as_bytes));
                prop_assert_eq!(m.message, Some(msg.as_bytes()));
            }
            None => {
                // Without a TAG the message starts at the first token, unless that token is
                // itself TAG-shaped.
                if m.appname.is_none() && !(msg == ":" || msg.starts_with(": ")) {
                    prop_assert_eq!(m.message, Some(msg.as_bytes()));
                }
            }
        }
    }

    #[test]
    fn iso_offsets_round_trip(
        secs in 0i64..4_102_444_800,
        micros in 0u32..1_000_000,
        offset_min in -(23 * 60 + 59)..=(23 * 60 + 59),
    ) {
        let ts = sluice_proto::Timestamp { unix_secs: secs, micros, offset_secs: offset_min * 60 };
        let text = sluice_proto::time::format_rfc3339(&ts);
        let zone = Zone::utc();
        for line in [format!("<13>1 {text} h a p m - x"), format!("<13>{text} h a: x")] {
            let m = parse(line.as_bytes(), &opts(&zone));
            prop_assert_eq!(m.timestamp, Some(ts), "{}", line);
        }
    }
}

#[test]
fn year_inference_around_new_year_end_to_end() {
    let zone = Zone::utc();
    // A December message seen just after New Year is last year's.
    let o = ParseOptions {
        now_unix_secs: unix(2027, 1, 1, 0, 0, 10),
        zone: &zone,
    };
    let m = parse(b"<13>Dec 31 23:59:58 host app: late", &o);
    assert!(m.year_inferred);
    assert_eq!(
        m.timestamp.map(|t| t.unix_secs),
        Some(unix(2026, 12, 31, 23, 59, 58))
    );
    // A January message seen on New Year's Eve (sender clock slightly ahead) is next year's.
    let o = ParseOptions {
        now_unix_secs: unix(2026, 12, 31, 23, 59, 0),
        zone: &zone,
    };
    let m = parse(b"<13>Jan  1 00:00:05 host app: early", &o);
    assert_eq!(
        m.timestamp.map(|t| t.unix_secs),
        Some(unix(2027, 1, 1, 0, 0, 5))
    );
    // An explicit year is never replaced.
    let m = parse(b"<13>Jan  1 2020 00:00:05 host app: old", &o);
    assert!(!m.year_inferred);
    assert_eq!(
        m.timestamp.map(|t| t.unix_secs),
        Some(unix(2020, 1, 1, 0, 0, 5))
    );
}

#[test]
fn zone_less_stamps_follow_dst_in_a_named_zone() {
    let ny = Zone::from_name("America/New_York").expect("bundled tzdb");
    let o = ParseOptions {
        now_unix_secs: MID_2026,
        zone: &ny,
    };
    let at = |line: &[u8]| {
        let ts = parse(line, &o).timestamp.expect("timestamp");
        (ts.unix_secs, ts.offset_secs)
    };
    assert_eq!(
        at(b"<13>Jan 15 12:00:00 h a: x"),
        (unix(2026, 1, 15, 17, 0, 0), -5 * 3600)
    );
    assert_eq!(
        at(b"<13>Jul 15 12:00:00 h a: x"),
        (unix(2026, 7, 15, 16, 0, 0), -4 * 3600)
    );
    assert_eq!(
        at(b"<13>2026-07-15T12:00:00 h a: x"),
        (unix(2026, 7, 15, 16, 0, 0), -4 * 3600)
    );
    // Spring-forward gap: 02:30 does not exist on 2026-03-08; read with the pre-gap offset.
    assert_eq!(
        at(b"<13>Mar  8 02:30:00 h a: x"),
        (unix(2026, 3, 8, 7, 30, 0), -4 * 3600)
    );
    // Fall-back fold: 01:30 on 2026-11-01 happens twice; the earlier instant is taken.
    assert_eq!(
        at(b"<13>Nov  1 01:30:00 h a: x"),
        (unix(2026, 11, 1, 5, 30, 0), -4 * 3600)
    );
    // An explicit offset wins over the zone.
    assert_eq!(
        at(b"<13>2026-07-15T12:00:00+02:00 h a: x"),
        (unix(2026, 7, 15, 10, 0, 0), 7200)
    );
    // RFC 5424 without an offset (lenient) uses the zone as well.
    assert_eq!(
        at(b"<13>1 2026-01-15T12:00:00 h a - - -"),
        (unix(2026, 1, 15, 17, 0, 0), -5 * 3600)
    );
}

#[test]
fn unquoted_sd_values_are_not_unescaped() {
    let zone = Zone::utc();
    let m = parse(
        br#"<13>1 - h a - - [Originator@6876 user=vsphere.local\\Administrator q="a\\b"] x"#,
        &opts(&zone),
    );
    assert_eq!(m.format, Format::Rfc5424);
    let el = m.structured_data.unwrap().elements().next().unwrap();
    let vals: Vec<Vec<u8>> = el.params().map(|p| p.value().into_owned()).collect();
    assert_eq!(
        vals,
        vec![br"vsphere.local\\Administrator".to_vec(), br"a\b".to_vec()]
    );
}
