//! The expected lines are what syslog-ng 3.38.1 sent for the same input, configured as SC4S
//! is (`frac-digits(3)`, `send-time-zone("GMT")`, sources with `validate-utf8`, parsers with
//! `assume-utf8`, HOST lowercased), captured from a `syslog(transport(tcp))` and a
//! `network(transport(tcp))` destination. The receive time is mid-year so that the year of a
//! stamp without one is the same by syslog-ng's rule and sluice's nearest-year rule (the
//! relayed time is the HEC event's time).

use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::classify::{Classifier, Transport, classify};
use crate::parse::{ParseOptions, parse};
use crate::time::Zone;

/// 2026-06-15T09:55:45.242Z.
const RECV: i64 = 1_781_517_345_242_000;

fn relay(raw: &[u8], format: RelayFormat) -> Vec<u8> {
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: RECV / 1_000_000,
        zone: &zone,
    };
    let msg = parse(raw, &opts);
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
        listener_id: "DEFAULT",
    };
    let tables = Classifier::default();
    let scratch = crate::classify::local::Scratch::new();
    let class = classify(&msg, &src, opts.now_unix_secs, &tables, &scratch);
    let mut out = b"before".to_vec();
    let enc = RelayEncoding {
        format,
        skip_empty_message: false,
    };
    assert!(encode_relay(&mut out, enc, &msg, &class, &src, RECV));
    out.split_off(6)
}

fn both(raw: &[u8]) -> (String, String) {
    let show = |v: Vec<u8>| String::from_utf8_lossy(&v).into_owned();
    (
        show(relay(raw, RelayFormat::Rfc5424)),
        show(relay(raw, RelayFormat::Bsd)),
    )
}

#[test]
fn rfc3164_with_pid() {
    let raw = b"<134>Feb  2 13:43:05 Horse-Ammonia CheckPoint[26203]: hello world";
    assert_eq!(
        relay(raw, RelayFormat::Rfc5424),
        b"<134>1 2026-02-02T13:43:05.000+00:00 horse-ammonia CheckPoint 26203 - - \xEF\xBB\xBFhello world"
    );
    assert_eq!(
        relay(raw, RelayFormat::Bsd),
        b"<134>Feb  2 13:43:05.000 horse-ammonia CheckPoint[26203]: hello world"
    );
}

#[test]
fn rfc3164_without_pid_or_colon() {
    let (ietf, bsd) = both(b"<13>Feb  2 13:43:05 host1 noPid: msg no pid");
    assert_eq!(
        ietf,
        "<13>1 2026-02-02T13:43:05.000+00:00 host1 noPid - - - \u{feff}msg no pid"
    );
    assert_eq!(bsd, "<13>Feb  2 13:43:05.000 host1 noPid: msg no pid");
}

#[test]
fn rfc5424_with_sdata_and_msgid() {
    let (ietf, bsd) = both(
        b"<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 1234 ID47 \
          [exampleSDID@32473 iut=\"3\"] An application event log entry",
    );
    assert_eq!(
        ietf,
        "<165>1 2003-10-11T22:14:15.003+00:00 mymachine.example.com evntslog 1234 ID47 \
         [exampleSDID@32473 iut=\"3\"] \u{feff}An application event log entry"
    );
    assert_eq!(
        bsd,
        "<165>Oct 11 22:14:15.003 mymachine.example.com evntslog[1234]: An application event log entry"
    );
}

#[test]
fn rfc5424_empty_message_keeps_the_space() {
    let (ietf, bsd) = both(b"<165>1 2003-10-11T22:14:15.003+02:00 mymachine - - - -");
    assert_eq!(
        ietf,
        "<165>1 2003-10-11T20:14:15.003+00:00 mymachine - - - - "
    );
    assert_eq!(bsd, "<165>Oct 11 20:14:15.003 mymachine ");
}

#[test]
fn rfc5424_bom_and_fraction_truncated() {
    let (ietf, bsd) = both(b"<190>1 2022-02-02T14:59:55.123456Z h app - - - \xEF\xBB\xBFBOM msg");
    // One BOM, not two: the parser removed the sender's.
    assert_eq!(
        ietf,
        "<190>1 2022-02-02T14:59:55.123+00:00 h app - - - \u{feff}BOM msg"
    );
    assert_eq!(bsd, "<190>Feb  2 14:59:55.123 h app: BOM msg");
}

#[test]
fn invalid_utf8_is_copied_with_the_bom() {
    let raw = b"<190>1 2022-02-02T14:59:55.123456Z h app - - - bad \xFF utf8";
    assert_eq!(
        relay(raw, RelayFormat::Rfc5424),
        b"<190>1 2022-02-02T14:59:55.123+00:00 h app - - - \xEF\xBB\xBFbad \xFF utf8"
    );
    assert_eq!(
        relay(raw, RelayFormat::Bsd),
        b"<190>Feb  2 14:59:55.123 h app: bad \xFF utf8"
    );
}

#[test]
fn sdata_reserialised_escapes_kept() {
    let (ietf, _) = both(
        b"<190>1 2022-02-02T14:59:55.999999-05:30 h app - - [a@1 x=\"q\\\"uote\"][b@2] two sd",
    );
    assert_eq!(
        ietf,
        "<190>1 2022-02-02T20:29:55.999+00:00 h app - - [a@1 x=\"q\\\"uote\"][b@2] \u{feff}two sd"
    );
}

#[test]
fn no_pri_is_user_notice_at_the_receive_time_from_the_sender() {
    let (ietf, bsd) = both(b"just text");
    // SC4S parses no header out of a line without PRI: it is all MESSAGE, HOST is the
    // sender (syslog-ng's BSD output of such a line reads the same bytes either way).
    assert_eq!(
        ietf,
        "<13>1 2026-06-15T09:55:45.242+00:00 127.0.0.1 - - - - \u{feff}just text"
    );
    assert_eq!(bsd, "<13>Jun 15 09:55:45.242 127.0.0.1 just text");
    // Not valid UTF-8: `validate-utf8` leaves it unmarked, so no BOM.
    assert_eq!(
        relay(b"bad \xFF", RelayFormat::Rfc5424),
        b"<13>1 2026-06-15T09:55:45.242+00:00 127.0.0.1 - - - - bad \xFF"
    );
}

#[test]
fn multi_line_message_is_copied() {
    let (ietf, bsd) = both(b"<30>Oct 12 12:49:06 host3 prog[1]: multi\nline");
    assert_eq!(
        ietf,
        "<30>1 2026-10-12T12:49:06.000+00:00 host3 prog 1 - - \u{feff}multi\nline"
    );
    assert_eq!(bsd, "<30>Oct 12 12:49:06.000 host3 prog[1]: multi\nline");
}

#[test]
fn bsd_day_padding() {
    let (_, bsd) = both(b"<14>Dec 25 01:02:03 h p: x");
    assert_eq!(bsd, "<14>Dec 25 01:02:03.000 h p: x");
}

#[test]
fn bsd_default_filter_skips_an_empty_message() {
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: RECV / 1_000_000,
        zone: &zone,
    };
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
        listener_id: "DEFAULT",
    };
    let tables = Classifier::default();
    let enc = RelayEncoding {
        format: RelayFormat::Bsd,
        skip_empty_message: true,
    };
    for (raw, written) in [
        (
            &b"<165>1 2003-10-11T22:14:15.003+02:00 mymachine - - - -"[..],
            false,
        ),
        (&b"<14>Dec 25 01:02:03 h p: x"[..], true),
    ] {
        let msg = parse(raw, &opts);
        let scratch = crate::classify::local::Scratch::new();
        let class = classify(&msg, &src, opts.now_unix_secs, &tables, &scratch);
        let mut out = Vec::new();
        assert_eq!(
            encode_relay(&mut out, enc, &msg, &class, &src, RECV),
            written
        );
        assert_eq!(out.is_empty(), !written);
    }
}
