//! What every vendor costs a message none of them takes: the daemon's per-message path
//! (`Processor::process`: parse → classify → encode into the open batch) with every vendor
//! on (the default) and with `SLUICE_VENDORS=none`, side by side in one run, on a plain
//! nix:syslog line, a loggen-shaped line from a program no vendor knows, syslog-ng loggen's
//! own line (syslogng:loggen takes it) and the mix of both SC4S vendor corpora.
//!
//! `cargo bench --bench nomatch -- --warm-up-time 1 --measurement-time 3`
//!
//! Instruction counts (repeatable on a loaded machine): with `SLUICE_NOMATCH_CASE=<case>`
//! (`nix`, `other`, `loggen`, `mix`, each `-all` or `-none`) and `SLUICE_NOMATCH_ITERS=<n>`
//! the binary processes that case `n` times and exits, so two callgrind runs with different
//! `n` give the instructions per message without the start-up (`scripts/nomatch-callgrind.sh`).

#[path = "support/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use sluice::pipeline::{LocalCounts, Processor, RecvTime};
use sluice_proto::batch::{BatchBuilder, BatchPolicy};
use sluice_proto::classify::{Settings, VendorSelection, build};
use sluice_proto::event::EncodeOptions;
use sluice_proto::time::Zone;
use sluice_suite::fixtures::{NOW_UNIX, loggen_rfc3164, padded};

/// A plain nix:syslog line: sshd is no vendor's PROGRAM and no token occurs in it.
const NIX: &[u8] =
    b"<13>Nov 28 16:00:00 host1 sshd[123]: Accepted password for bob from 10.0.0.1\n";

/// loggen's line shape from a program no vendor knows (loggen's own `prg00000` is
/// syslog-ng's loggen application's).
fn other_line() -> Vec<u8> {
    padded(
        b"<38>2026-03-05T12:28:51 localhost myapp[1234]: seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
        800,
    )
}

fn processor(vendors: &str) -> Processor {
    let settings = Settings {
        vendors: VendorSelection::parse(vendors),
        ..Settings::default()
    };
    Processor {
        routing: None,
        zone: Zone::utc(),
        tables: build(None, &settings).expect("classifier"),
        encode: EncodeOptions::new("sc4s-bench-host"),
        batch: BatchPolicy {
            max_events: 5000,
            max_bytes: 4_096_000,
            timeout: Duration::from_millis(300),
        },
        groups: Default::default(),
        names: None,
        vps: None,
        encodings: Default::default(),
    }
}

/// The cases: name and lines (one line, or the corpus mix).
fn cases() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    vec![
        ("nix", vec![NIX.to_vec()]),
        ("other", vec![other_line()]),
        ("loggen", vec![loggen_rfc3164(800)]),
        ("mix", corpus::vendor_corpora()),
    ]
}

fn at() -> RecvTime {
    RecvTime {
        instant: Instant::now(),
        unix_micros: NOW_UNIX * 1_000_000,
    }
}

/// Processes every line of `lines` once.
fn run(p: &Processor, lines: &[Vec<u8>], at: RecvTime, state: &mut (BatchBuilder, LocalCounts)) {
    let src = corpus::udp_source();
    for line in lines {
        black_box(p.process(black_box(line), &src, at, &mut state.0, &mut state.1));
    }
}

fn bench(c: &mut Criterion) {
    let all = processor("all");
    let none = processor("none");
    let at = at();
    for (name, lines) in cases() {
        let mut group = c.benchmark_group(format!("nomatch_{name}"));
        group.throughput(Throughput::Elements(lines.len() as u64));
        for (label, p) in [("all", &all), ("none", &none)] {
            let mut state = (p.new_builder(), LocalCounts::default());
            group.bench_function(label, |b| b.iter(|| run(p, &lines, at, &mut state)));
        }
        group.finish();
    }
}

/// The callgrind mode: one case, `iters` times, nothing else.
fn count_mode() -> bool {
    let Ok(case) = std::env::var("SLUICE_NOMATCH_CASE") else {
        return false;
    };
    let iters: u64 = std::env::var("SLUICE_NOMATCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .expect("SLUICE_NOMATCH_ITERS=<n>");
    let (name, vendors) = case.rsplit_once('-').expect("case: <name>-all|none");
    let lines = cases()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, l)| l)
        .expect("case: nix, other, loggen or mix");
    // For the script: how many messages one iteration is.
    println!("lines={}", lines.len());
    let p = processor(vendors);
    let at = at();
    let mut state = (p.new_builder(), LocalCounts::default());
    for _ in 0..iters {
        run(&p, &lines, at, &mut state);
    }
    true
}

criterion_group!(benches, bench);

fn main() {
    if count_mode() {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
