//! Fuzz target `forward`: the relay and Kafka encodings of arbitrary input, and the Kafka
//! record reader (it reads disk buffer records) on arbitrary bytes. Nothing may panic; every
//! record written reads back with the HEC event as its value; a relay line starts with a PRI.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use sluice_proto::classify::{Classifier, SourceMeta, Transport, classify};
use sluice_proto::event::{RelayEncoding, RelayFormat, encode_relay};
use sluice_proto::kafka::{RecordTemplate, RecordValue, Template, decode_record, encode_record};
use sluice_proto::{ParseOptions, Zone, parse};

static CLASSIFIER: LazyLock<Classifier> = LazyLock::new(Classifier::default);
static ZONE: LazyLock<Zone> = LazyLock::new(Zone::utc);
static SPEC: LazyLock<RecordTemplate> = LazyLock::new(|| RecordTemplate {
    topic: Template::parse("sc4s-${vendor_product}-${sourcetype}").unwrap(),
    fallback_topic: "sc4s".into(),
    key: Template::parse("${host}/${source_ip}").unwrap(),
    value: RecordValue::Hec,
});

fuzz_target!(|data: &[u8]| {
    let _ = decode_record(data);
    let now = 1_713_139_200;
    let msg = parse(
        data,
        &ParseOptions {
            now_unix_secs: now,
            zone: &ZONE,
        },
    );
    let src = SourceMeta {
        transport: Transport::Tcp,
        dest_port: 601,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    let scratch = sluice_proto::classify::local::Scratch::new();
    let class = classify(&msg, &src, now, &CLASSIFIER, &scratch);
    for format in [RelayFormat::Rfc5424, RelayFormat::Bsd] {
        let mut out = Vec::new();
        let enc = RelayEncoding {
            format,
            skip_empty_message: true,
        };
        if encode_relay(&mut out, enc, &msg, &class, &src, now * 1_000_000) {
            assert!(out.starts_with(b"<"), "a relay line starts with its PRI");
        } else {
            assert!(out.is_empty());
        }
    }
    let mut rec = Vec::new();
    encode_record(&mut rec, &SPEC, &msg, &class, &src, b"{\"event\":\"e\"}");
    let r = decode_record(&rec).expect("a record written reads back");
    assert_eq!(r.value, b"{\"event\":\"e\"}");
    assert!(!r.topic.is_empty() && r.topic.len() <= 249);
    assert!(
        r.topic
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    );
});
