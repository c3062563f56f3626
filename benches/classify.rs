//! Classification cost on a mix of the SC4S vendor corpora's messages (every case of
//! `crates/sluice-proto/tests/corpus/sc4s-vendors.jsonl` and `sc4s-vendors-2.jsonl`, each
//! part of a multi-part case on its own: the vendor families, nix:syslog and fallback
//! included). Messages are parsed once outside the loop; the measured loop is
//! `classify` alone, then `classify` + `encode_event`, over the whole mix. The target is
//! at least 1 M classifications per second per core.
//!
//! Criterion reports wall time, which on a shared box counts the time other processes held
//! the core. Before the criterion runs (not with `--test`), the bench also prints
//! classifications per CPU-second of its own thread (`/proc/thread-self/stat`, Linux),
//! which is the per-core figure whatever the load.

#[path = "support/corpus.rs"]
mod corpus;
#[path = "support/cpu.rs"]
mod cpu;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group};
use sluice_proto::classify::local::Scratch;
use sluice_proto::classify::{Classifier, SourceMeta, classify};
use sluice_proto::{EncodeOptions, encode_event};
use sluice_proto::{ParseOptions, Zone, parse};

const NOW: i64 = 1_713_139_200;

/// A line of syslog-ng's `loggen -s 431` (nix:syslog), the baseline stream of BENCHMARKS 9b.
const LOGGEN_LINE: &[u8] = b"<38>2026-11-26T15:21:42 localhost prg00000[1234]: seq: 0000000000, thread: 0000, runid: 1795706502, stamp: 2026-11-26T15:21:42 PADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPAD\n";

fn bench(c: &mut Criterion) {
    let raws = corpus::vendor_corpora();
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: NOW,
        zone: &zone,
    };
    let msgs: Vec<_> = raws.iter().map(|r| parse(r, &opts)).collect();
    let classifier = Classifier::default();
    let src = corpus::udp_source();
    let encode = EncodeOptions::new("bench-host");
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(msgs.len() as u64));
    group.bench_function("vendor_corpus_mix", |b| {
        b.iter(|| {
            for m in &msgs {
                black_box(classify(
                    black_box(m),
                    &src,
                    NOW,
                    &classifier,
                    &Scratch::new(),
                ));
            }
        })
    });
    let mut out = Vec::with_capacity(1 << 20);
    group.bench_function("vendor_corpus_mix+encode", |b| {
        b.iter(|| {
            out.clear();
            for m in &msgs {
                let scratch = Scratch::new();
                let class = classify(black_box(m), &src, NOW, &classifier, &scratch);
                encode_event(&mut out, m, &class, &src, NOW * 1_000_000, &encode);
            }
            black_box(out.len())
        })
    });
    group.finish();
}

/// CPU nanoseconds of `classify` for each message alone (the loggen line first, then the
/// corpus), slowest first: where the mix's cost is. `SLUICE_BENCH_TOP` sets how many lines
/// (default 25).
fn per_message_report(
    msgs: &[sluice_proto::Message<'_>],
    src: &SourceMeta<'_>,
    classifier: &Classifier,
) {
    let Some(_) = cpu::thread_cpu_secs() else {
        return;
    };
    let top: usize = std::env::var("SLUICE_BENCH_TOP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(25);
    let mut rows: Vec<(f64, String)> = Vec::new();
    let mut total = 0.0;
    for m in msgs {
        // Thread CPU time has 10 ms resolution: repeat until 0.05 s are spent.
        let start = cpu::thread_cpu_secs().unwrap_or(0.0);
        let mut n = 0u64;
        let mut used = 0.0;
        while used < 0.05 {
            for _ in 0..1000 {
                black_box(classify(
                    black_box(m),
                    src,
                    NOW,
                    classifier,
                    &Scratch::new(),
                ));
            }
            n += 1000;
            used = cpu::thread_cpu_secs().unwrap_or(start) - start;
        }
        let ns = used * 1e9 / n as f64;
        total += ns;
        let scratch = Scratch::new();
        let c = classify(m, src, NOW, classifier, &scratch);
        let raw = String::from_utf8_lossy(m.raw);
        let head: String = raw.chars().take(70).collect();
        rows.push((
            ns,
            format!(
                "{}/{} {:?}",
                c.vendor.to_string_lossy(),
                c.product.to_string_lossy(),
                head
            ),
        ));
    }
    println!(
        "classify per message: mean {:.0} ns over {} messages (loggen line {:.0} ns)",
        total / rows.len() as f64,
        rows.len(),
        rows[0].0
    );
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ns, what) in rows.iter().take(top) {
        println!("  {ns:>7.0} ns  {what}");
    }
}

fn cpu_report() {
    let mut raws = corpus::vendor_corpora();
    raws.insert(0, LOGGEN_LINE.to_vec());
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: NOW,
        zone: &zone,
    };
    let msgs: Vec<_> = raws.iter().map(|r| parse(r, &opts)).collect();
    let classifier = Classifier::default();
    let src = corpus::udp_source();
    per_message_report(&msgs, &src, &classifier);
    let msgs = &msgs[1..];
    // Each corpus alone, then the mix, alternating in one run (the machine's load changes
    // all three alike).
    let first = corpus::vendor_corpus().len();
    for _ in 0..2 {
        for (label, part) in [
            ("classify/vendor_corpus_1 (CPU time)", &msgs[..first]),
            ("classify/vendor_corpus_2 (CPU time)", &msgs[first..]),
        ] {
            per_cpu_second(label, part.len(), 2.0, || {
                for m in part {
                    let scratch = Scratch::new();
                    black_box(classify(black_box(m), &src, NOW, &classifier, &scratch));
                }
            });
        }
    }
    per_cpu_second(
        "classify/vendor_corpus_mix (CPU time)",
        msgs.len(),
        5.0,
        || {
            for m in msgs {
                black_box(classify(
                    black_box(m),
                    &src,
                    NOW,
                    &classifier,
                    &Scratch::new(),
                ));
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
            for m in msgs {
                let scratch = Scratch::new();
                let class = classify(black_box(m), &src, NOW, &classifier, &scratch);
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

/// Prints messages per CPU-second of `round` (one pass over `n` messages) run for about
/// `secs` seconds of this thread's CPU time.
fn per_cpu_second(label: &str, n: usize, secs: f64, round: impl FnMut()) {
    if let Some((used, done)) = cpu::run_for_cpu_secs(n, secs, round) {
        println!(
            "{label}: {:.0} k messages per CPU-second ({:.0} ns CPU per message, {done} messages)",
            done as f64 / used / 1e3,
            used * 1e9 / done as f64
        );
    }
}
