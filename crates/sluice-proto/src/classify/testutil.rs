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
    classify(msg, &src, NOW, classifier)
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
    let _ = classify(&msg, &src, NOW, &CLASSIFIER);
}
