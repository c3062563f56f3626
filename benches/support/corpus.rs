//! The inputs the classification and encoding benches share: the SC4S vendor corpus's raw
//! messages and the UDP source they arrive from.

use std::net::{IpAddr, Ipv4Addr};

use sluice_proto::classify::{SourceMeta, Transport};

/// The `raw` of every case of the vendor corpus, in file order.
pub fn vendor_corpus() -> Vec<Vec<u8>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/sluice-proto/tests/corpus/sc4s-vendors.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("vendor corpus");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["raw"].as_str().expect("raw").as_bytes().to_vec()
        })
        .collect()
}

/// The messages of both SC4S vendor corpora, in file order: the first corpus's `raw`s, then
/// the second's (each part of a multi-part case on its own; an octet-counted frame without
/// its count, as the stream decoder delivers it).
#[allow(dead_code)]
pub fn vendor_corpora() -> Vec<Vec<u8>> {
    let mut all = vendor_corpus();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/sluice-proto/tests/corpus/sc4s-vendors-2.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("vendor corpus 2");
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(l).expect("json");
        match (v["raw"].as_str(), v["parts"].as_array()) {
            (Some(raw), _) => {
                let raw = raw.as_bytes();
                let digits = raw.iter().take_while(|b| b.is_ascii_digit()).count();
                let counted = digits > 0 && raw.get(digits) == Some(&b' ');
                all.push(raw[if counted { digits + 1 } else { 0 }..].to_vec());
            }
            (None, Some(parts)) => all.extend(
                parts
                    .iter()
                    .map(|p| p.as_str().expect("part").as_bytes().to_vec()),
            ),
            (None, None) => panic!("a case with neither raw nor parts"),
        }
    }
    all
}

/// A datagram from 192.0.2.10 to port 514 of the default listener.
pub fn udp_source() -> SourceMeta<'static> {
    SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    }
}
