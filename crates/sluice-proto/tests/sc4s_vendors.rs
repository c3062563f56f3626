//! The SC4S vendor corpus in process: every case is parsed, classified and encoded exactly
//! as the daemon does for a TCP message on the default listener, and the HEC event is
//! checked against what SC4S's own tests expect (see `vendor_corpus/mod.rs`). Prints
//! `X/233 SC4S vendor cases pass`; the known-failing list may only shrink.

mod vendor_corpus;

use std::net::{IpAddr, Ipv4Addr};

use sluice_proto::classify::{Classifier, SourceMeta, Transport, classify};
use sluice_proto::event::{EncodeOptions, encode_event};
use sluice_proto::{ParseOptions, Zone, parse};

#[test]
fn sc4s_vendor_corpus_in_process() {
    let cases = vendor_corpus::load();
    let classifier = Classifier::default();
    let zone = Zone::utc();
    let src = SourceMeta {
        transport: Transport::Tcp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    let opts = EncodeOptions::new("sluice-test");
    let recv = vendor_corpus::NOW_UNIX_SECS * 1_000_000;
    let mut outcomes = Vec::new();
    // The default classifier has no app-parsers: the scratch stays unused.
    let scratch = sluice_proto::classify::local::Scratch::new();
    for case in &cases {
        let msg = parse(
            &case.raw,
            &ParseOptions {
                now_unix_secs: vendor_corpus::NOW_UNIX_SECS,
                zone: &zone,
            },
        );
        let class = classify(
            &msg,
            &src,
            vendor_corpus::NOW_UNIX_SECS,
            &classifier,
            &scratch,
        );
        let mut out = Vec::new();
        encode_event(&mut out, &msg, &class, &src, recv, &opts);
        let event: serde_json::Value = serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{}: the event is not JSON ({e})", case.id));
        outcomes.push((case.id.clone(), vendor_corpus::check(case, &event)));
    }
    vendor_corpus::judge("in process", &outcomes);
}
