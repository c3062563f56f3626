//! Parser throughput on the message shapes that dominate SC4S traffic and its load tests.
//!
//! Target: >= 2 M msg/s per core (<= 500 ns/msg) on the loggen shapes. Run with
//! `cargo bench --bench parse -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_proto::{ParseOptions, Zone, parse};

use sluice_suite::fixtures::{NOW_UNIX as NOW, shapes};

fn bench_parse(c: &mut Criterion) {
    let utc = Zone::utc();
    let ny = Zone::from_name("America/New_York").expect("bundled tzdb has America/New_York");
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(1));
    for (name, line, format) in shapes() {
        let opts = ParseOptions {
            now_unix_secs: NOW,
            zone: &utc,
        };
        // A bench of the fallback path would measure the wrong thing.
        assert_eq!(parse(&line, &opts).format, format, "{name}");
        group.bench_function(name, |b| {
            b.iter(|| parse(black_box(&line), black_box(&opts)))
        });
    }
    // Zone-less stamps in a zone with DST go through the tz database instead of integer math.
    let (_, line, _) = &shapes()[0];
    let opts = ParseOptions {
        now_unix_secs: NOW,
        zone: &ny,
    };
    group.bench_function("loggen_rfc3164_800_new_york", |b| {
        b.iter(|| parse(black_box(line), black_box(&opts)))
    });
    let asa = &shapes()[2].1;
    group.bench_function("cisco_asa_new_york", |b| {
        b.iter(|| parse(black_box(asa), black_box(&opts)))
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
