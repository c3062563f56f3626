//! Helpers for vendor tests: parse and classify one line with the default classifier.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::LazyLock;

use crate::parse::{ParseOptions, parse};
use crate::time::Zone;

use super::{Classification, Classifier, SourceMeta, Transport, classify};

/// "Now" in vendor tests: 2024-04-01T00:00:00Z (the SC4S vendor corpus is March-April 2024).
pub const NOW: i64 = 1_711_929_600;

static CLASSIFIER: LazyLock<Classifier> = LazyLock::new(Classifier::default);

/// Parses `line` (year-less stamps resolve near [`NOW`], zone UTC) and classifies it as
/// received on the default UDP listener from 192.0.2.10. The result borrows a leaked copy of
/// the line (tests only).
pub fn classify_line(line: &str) -> Classification<'static, 'static> {
    classify_line_with(&CLASSIFIER, line)
}

/// [`classify_line`] with another classifier (e.g. other [`super::Settings`]).
pub fn classify_line_with(
    classifier: &'static Classifier,
    line: &str,
) -> Classification<'static, 'static> {
    let raw: &'static [u8] = Box::leak(line.as_bytes().to_vec().into_boxed_slice());
    let zone: &'static Zone = Box::leak(Box::new(Zone::utc()));
    let msg = Box::leak(Box::new(parse(
        raw,
        &ParseOptions {
            now_unix_secs: NOW,
            zone,
        },
    )));
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    classify(msg, &src, NOW, classifier, scratch())
}

/// A scratch arena for one classification (leaked: tests only).
pub fn scratch() -> &'static super::local::Scratch {
    Box::leak(Box::new(super::local::Scratch::new()))
}

/// A classifier with `options` (leaked: tests only).
pub fn classifier_with(options: super::VendorOptions) -> &'static Classifier {
    let settings = super::Settings {
        options,
        ..super::Settings::default()
    };
    Box::leak(Box::new(
        Classifier::new(super::context::ContextFiles::default(), &settings).expect("builds"),
    ))
}

/// A classifier with the listener ids `listeners` (`NETAPP_ONTAP`: vendor `netapp`, product
/// `ontap`) and `options` (leaked: tests only).
pub fn classifier_on(listeners: &[&str], options: super::VendorOptions) -> &'static Classifier {
    let settings = super::Settings {
        options,
        listeners: listeners.iter().map(|l| (*l).to_owned()).collect(),
        ..super::Settings::default()
    };
    Box::leak(Box::new(
        Classifier::new(super::context::ContextFiles::default(), &settings).expect("builds"),
    ))
}

/// [`classify_line_with`] as received on listener `listener` (one of the classifier's ids).
pub fn classify_line_on(
    classifier: &'static Classifier,
    listener: &'static str,
    line: &str,
) -> Classification<'static, 'static> {
    let raw: &'static [u8] = Box::leak(line.as_bytes().to_vec().into_boxed_slice());
    let zone: &'static Zone = Box::leak(Box::new(Zone::utc()));
    let msg = Box::leak(Box::new(parse(
        raw,
        &ParseOptions {
            now_unix_secs: NOW,
            zone,
        },
    )));
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: listener,
    };
    classify(msg, &src, NOW, classifier, scratch())
}

/// The HEC event (as JSON) of `line` received on `listener` of `classifier`: parsed,
/// classified and encoded as the daemon does.
pub fn event_on(
    classifier: &'static Classifier,
    listener: &'static str,
    line: &str,
) -> serde_json::Value {
    let zone = Zone::utc();
    let msg = parse(
        line.as_bytes(),
        &ParseOptions {
            now_unix_secs: NOW,
            zone: &zone,
        },
    );
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: listener,
    };
    let scratch = super::local::Scratch::new();
    let class = classify(&msg, &src, NOW, classifier, &scratch);
    let mut out = Vec::new();
    crate::event::encode_event(
        &mut out,
        &msg,
        &class,
        &src,
        NOW * 1_000_000,
        &crate::event::EncodeOptions::new("test"),
    );
    serde_json::from_slice(&out).expect("the event is JSON")
}

/// [`event_on`] with the default classifier and listener.
pub fn event_of(line: &str) -> serde_json::Value {
    event_on(&CLASSIFIER, "DEFAULT", line)
}

/// A classifier with the listener ids `ids` (`SC4S_LISTEN_<ID>_*_PORT`; leaked: tests only).
pub fn classifier_with_listeners(ids: &[&str]) -> &'static Classifier {
    classifier_on(ids, super::VendorOptions::default())
}

/// The HEC event text (`event`) the daemon would send for `line` on the default listener.
pub fn event_text(line: &str) -> String {
    event_of(line)["event"]
        .as_str()
        .expect("event text")
        .to_owned()
}

/// [`classify_line`] for arbitrary bytes (robustness sweeps); only the fact that it returns
/// matters, so nothing is leaked.
pub fn classify_line_bytes(raw: &[u8]) {
    let zone = Zone::utc();
    let msg = parse(
        raw,
        &ParseOptions {
            now_unix_secs: NOW,
            zone: &zone,
        },
    );
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    let scratch = super::local::Scratch::new();
    let _ = classify(&msg, &src, NOW, &CLASSIFIER, &scratch);
}

/// `^<\d+>` (Unicode `\d`, as SC4S's regexes read it): what an almost-syslog parser requires
/// before its header check can matter.
pub fn pri_is_digits(raw: &[u8]) -> bool {
    static PRI: std::sync::LazyLock<regex::bytes::Regex> =
        std::sync::LazyLock::new(|| regex::bytes::Regex::new(r"^<\d+>").expect("static regex"));
    PRI.is_match(raw)
}

/// A [`When::Header`](super::registry::When::Header) check's claim, tested: whenever
/// `check` accepts a message, the message's [`Shape`](super::registry::Shape) has one of the
/// bits of `need` (else the dispatcher would skip a message the application takes). The
/// messages are a PRI and a few header-like pieces in any order, non-ASCII included;
/// `takes` are messages `check` must accept (the pieces rarely line up by chance).
pub fn assert_needs_shape(need: super::registry::Shape, check: fn(&[u8]) -> bool, takes: &[&str]) {
    use super::registry::Shape;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    const PIECES: &[&str] = &[
        " ",
        "  ",
        "1",
        "1 ",
        "Mar",
        "mar",
        "MAR",
        "Mar ",
        "29",
        "3",
        "2024",
        "2024-03-15",
        "T",
        "10:00:00",
        "04:55",
        ",123",
        ".123",
        "+0000",
        "-05:00",
        "Z ",
        "host",
        "h-1.x",
        "a_b",
        "local7.info",
        "info ",
        "err ",
        "1710501160",
        "1.2.3.4",
        "10.0.0.9 ",
        "é",
        "\u{3000}",
        "x",
        ":",
        "%",
        "-",
        "\t",
        "a1b2-c3d4-e5f6-a7b8-9c0Z ",
    ];
    for t in takes {
        assert!(check(t.as_bytes()), "{t}");
        assert!(Shape::of(t.as_bytes()).any(need), "{t}");
    }
    let pieces = proptest::collection::vec(proptest::sample::select(PIECES), 0..10);
    let mut runner = TestRunner::new(Config {
        cases: 3000,
        ..Config::default()
    });
    runner
        .run(
            &(0u16..200, any::<bool>(), pieces),
            |(pri, with_pri, pieces)| {
                let mut raw = if with_pri {
                    format!("<{pri}>")
                } else {
                    String::new()
                };
                raw.extend(pieces);
                let raw = raw.as_bytes();
                prop_assert!(
                    !check(raw) || Shape::of(raw).any(need),
                    "{:?}",
                    String::from_utf8_lossy(raw)
                );
                Ok(())
            },
        )
        .unwrap();
}
