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

/// A datagram from 192.0.2.10 to port 514 of the default listener.
pub fn udp_source() -> SourceMeta<'static> {
    SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    }
}
