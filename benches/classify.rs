//! Classification cost on a mix of the SC4S vendor corpus's messages (every case of
//! `crates/sluice-proto/tests/corpus/sc4s-vendors.jsonl`: 54 vendors, nix:syslog and
//! fallback included). Messages are parsed once outside the loop; the measured loop is
//! `classify` alone, then `classify` + `encode_event`, over the whole mix. The target is
//! at least 1 M classifications per second per core.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_proto::classify::{Classifier, SourceMeta, Transport, classify};
use sluice_proto::{EncodeOptions, encode_event};
use sluice_proto::{ParseOptions, Zone, parse};

const NOW: i64 = 1_713_139_200;

fn corpus() -> Vec<Vec<u8>> {
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

fn bench(c: &mut Criterion) {
    let raws = corpus();
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: NOW,
        zone: &zone,
    };
    let msgs: Vec<_> = raws.iter().map(|r| parse(r, &opts)).collect();
    let classifier = Classifier::default();
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    let encode = EncodeOptions::new("bench-host");
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(msgs.len() as u64));
    group.bench_function("vendor_corpus_mix", |b| {
        b.iter(|| {
            for m in &msgs {
                black_box(classify(black_box(m), &src, NOW, &classifier));
            }
        })
    });
    let mut out = Vec::with_capacity(1 << 20);
    group.bench_function("vendor_corpus_mix+encode", |b| {
        b.iter(|| {
            out.clear();
            for m in &msgs {
                let class = classify(black_box(m), &src, NOW, &classifier);
                encode_event(&mut out, m, &class, &src, NOW * 1_000_000, &encode);
            }
            black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
