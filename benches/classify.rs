//! Classification cost on a mix of the SC4S vendor corpus's messages (every case of
//! `crates/sluice-proto/tests/corpus/sc4s-vendors.jsonl`: 54 vendors, nix:syslog and
//! fallback included). Messages are parsed once outside the loop; the measured loop is
//! `classify` alone, then `classify` + `encode_event`, over the whole mix. The target is
//! at least 1 M classifications per second per core.
//!
//! Criterion reports wall time, which on a shared box counts the time other processes held
//! the core. Before the criterion runs (not with `--test`), the bench also prints
//! classifications per CPU-second of its own thread (`/proc/thread-self/stat`, Linux),
//! which is the per-core figure whatever the load.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{Criterion, Throughput, criterion_group};
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

/// This thread's user + system CPU time in seconds (Linux; `None` elsewhere).
fn thread_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the `(comm)`: state is field 3; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut f = rest.split(' ').skip(11);
    let utime: f64 = f.next()?.parse().ok()?;
    let stime: f64 = f.next()?.parse().ok()?;
    // USER_HZ is 100 on every Linux target sluice supports.
    Some((utime + stime) / 100.0)
}

/// Runs `round` (one pass over `n` messages) for about `secs` seconds of this thread's CPU
/// time and prints messages per CPU-second.
fn per_cpu_second(label: &str, n: usize, secs: f64, mut round: impl FnMut()) {
    let Some(start) = thread_cpu_secs() else {
        return;
    };
    let mut done = 0u64;
    let mut used = 0.0;
    while used < secs {
        for _ in 0..100 {
            round();
        }
        done += 100 * n as u64;
        used = thread_cpu_secs().unwrap_or(start) - start;
    }
    println!(
        "{label}: {:.0} k messages per CPU-second ({:.0} ns CPU per message, {done} messages)",
        done as f64 / used / 1e3,
        used * 1e9 / done as f64
    );
}

fn cpu_report() {
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
    per_cpu_second(
        "classify/vendor_corpus_mix (CPU time)",
        msgs.len(),
        5.0,
        || {
            for m in &msgs {
                black_box(classify(black_box(m), &src, NOW, &classifier));
            }
        },
    );
    let encode = EncodeOptions::new("bench-host");
    let mut out = Vec::with_capacity(1 << 20);
    per_cpu_second(
        "classify/vendor_corpus_mix+encode (CPU time)",
        msgs.len(),
        5.0,
        || {
            out.clear();
            for m in &msgs {
                let class = classify(black_box(m), &src, NOW, &classifier);
                encode_event(&mut out, m, &class, &src, NOW * 1_000_000, &encode);
            }
            black_box(out.len());
        },
    );
}

criterion_group!(benches, bench);

fn main() {
    if !std::env::args().any(|a| a == "--test" || a == "--list") {
        cpu_report();
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
