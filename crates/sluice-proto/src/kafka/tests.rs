use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::classify::{Classifier, Transport, classify};
use crate::parse::{ParseOptions, parse};
use crate::time::Zone;

fn spec(topic: &str, key: &str, value: RecordValue) -> RecordTemplate {
    RecordTemplate {
        topic: Template::parse(topic).unwrap(),
        fallback_topic: "sc4s-unrouted".into(),
        key: Template::parse(key).unwrap(),
        value,
    }
}

fn record(raw: &[u8], spec: &RecordTemplate) -> Vec<u8> {
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: 1_781_517_345,
        zone: &zone,
    };
    let msg = parse(raw, &opts);
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7)),
        listener_id: "DEFAULT",
    };
    let tables = Classifier::default();
    let scratch = crate::classify::local::Scratch::new();
    let class = classify(&msg, &src, opts.now_unix_secs, &tables, &scratch);
    let mut out = b"prev".to_vec();
    encode_record(&mut out, spec, &msg, &class, &src, b"{\"event\":\"x\"}");
    out.split_off(4)
}

const NIX: &[u8] = b"<13>Jun 15 09:00:00 Host01 sshd[1]: Accepted";

#[test]
fn topic_key_and_hec_value() {
    let r = record(
        NIX,
        &spec("sc4s-${sourcetype}", "${source_ip}", RecordValue::Hec),
    );
    let d = decode_record(&r).unwrap();
    // `nix:syslog` is not a valid topic name: the colon becomes `_`.
    assert_eq!(d.topic, b"sc4s-nix_syslog");
    assert_eq!(d.key, Some(&b"192.0.2.7"[..]));
    assert_eq!(d.value, b"{\"event\":\"x\"}");
    assert!(!d.fallback_topic);
}

#[test]
fn raw_value_host_key_and_vendor_product() {
    let r = record(
        NIX,
        &spec("${vendor_product}.${index}", "${host}", RecordValue::Raw),
    );
    let d = decode_record(&r).unwrap();
    assert_eq!(d.topic, b"nix_syslog.osnix");
    assert_eq!(d.key, Some(&b"host01"[..]));
    assert_eq!(d.value, NIX);
}

#[test]
fn an_empty_field_sends_the_record_to_the_fallback_topic() {
    let r = record(NIX, &spec("x-${class}", "", RecordValue::Hec));
    let d = decode_record(&r).unwrap();
    assert_eq!(d.topic, b"sc4s-unrouted");
    assert!(d.fallback_topic);
    assert_eq!(d.key, None);
}

#[test]
fn templates_name_known_fields_only() {
    assert_eq!(
        Template::parse("a-${nope}").unwrap_err(),
        TemplateError::UnknownField("nope".into())
    );
    assert_eq!(
        Template::parse("a-${index").unwrap_err(),
        TemplateError::Unclosed
    );
    let t = Template::parse("sc4s-${Index}-x").unwrap();
    assert_eq!(t.to_string(), "sc4s-${index}-x");
    assert!(!t.is_constant());
    assert!(Template::parse("plain").unwrap().is_constant());
}

#[test]
fn decode_checks_every_length() {
    let r = record(NIX, &spec("t", "${source_ip}", RecordValue::Hec));
    for cut in 0..12 {
        assert!(decode_record(&r[..cut]).is_err(), "cut at {cut}");
    }
    assert!(decode_record(&[0, 0, 0, 0]).is_err(), "empty topic");
}

proptest::proptest! {
    #[test]
    fn decode_never_panics(b in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
        let _ = decode_record(&b);
    }
}
