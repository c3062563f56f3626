//! What an operator's local application costs beside a built-in vendor parser of the same
//! shape (issue 22: at most 2x). The built-in is McAfee Web Gateway (`program` prefix `mwg`,
//! key=value pairs, fixed index/sourcetype/vendor/product, a source from a pair's value); the
//! local application is written here in SC4S's dialect with the same shape for a made-up
//! `acmewg` program. Both classify the same key=value payload (only the program differs), in
//! one group so that the load on the box falls on both alike. Also: the nix:syslog loggen line
//! through a classifier without and with 20 local applications that never match it.

#[path = "support/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group};
use sluice_proto::classify::context::ContextFiles;
use sluice_proto::classify::local::{LoadOptions, Program, Scratch, SourceFile};
use sluice_proto::classify::{Classifier, Settings, classify};
use sluice_proto::{ParseOptions, Zone, parse};

const NOW: i64 = 1_713_139_200;

const PAIRS: &str = "status=\"403/80\" srcip=\"192.168.57.1\" user=\"-\" dhost=\"s3-eu-west-1.amazonaws.com\" urlp=\"80\" proto=\"HTTP/http\" mtd=\"GET\" urlc=\"Internet Services\" rep=\"-31\" mt=\"application/pdf\" app=\"-\" bytes=\"458/509/2813889/3001\" ua=\"Chrome87-10.0\" rule=\"Block If Virus Was Found\" file_name=\"win7_64bit_big.pdf\" destip=\"52.218.52.116\" ProductName=\"Web Gateway\"";

/// The local twin of the built-in: program prefix, kv-parser, dest defaults, a source from
/// a pair when present.
const LOCAL_APP: &str = r#"
block parser app-syslog-acme_wg() {
    channel {
        rewrite {
            r_set_splunk_dest_default(index("netproxy") source("acme:wg") sourcetype("acme:wg:kv") vendor("acme") product("wg"));
        };
        parser { kv-parser(prefix(".values.")); };
        if {
            filter { "${.values.ProductName}" ne "" };
            rewrite {
                set("$(lowercase ${.values.ProductName})" value(".tmp.ProductName"));
                subst('\s', '_', value(".tmp.ProductName") flags("global"));
                r_set_splunk_dest_update_v2(source('acme:wg:${.tmp.ProductName}'));
            };
        };
    };
};
application app-syslog-acme_wg[sc4s-syslog-pgm] {
    filter { program('acmewg' type(string) flags(prefix)); };
    parser { app-syslog-acme_wg(); };
};
"#;

fn load(text: &str) -> Program {
    let env = |_: &str| None;
    let read = |n: &str| Err(format!("{n}: not read in the bench"));
    Program::load(
        &[SourceFile::new("bench.conf", text)],
        &LoadOptions {
            env: &env,
            read: &read,
            strict: true,
        },
    )
    .expect("the bench's app-parsers load")
}

fn with_apps(text: &str) -> Classifier {
    Classifier::new(
        ContextFiles::default(),
        &Settings {
            app_parsers: Some(Arc::new(load(text))),
            loghost: "bench".into(),
            ..Settings::default()
        },
    )
    .expect("builds")
}

/// The 20 applications `scripts/app-parsers-cost.sh` loads.
const TWENTY_APPS: &str = include_str!("../scripts/fixtures/app-parsers-20/bench-apps.conf");

/// A line of syslog-ng's `loggen` (nix:syslog), as in benches/classify.rs.
const LOGGEN_LINE: &[u8] = b"<38>2026-11-26T15:21:42 localhost prg00000[1234]: seq: 0000000000, thread: 0000, runid: 1795706502, stamp: 2026-11-26T15:21:42 PADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPAD\n";

fn text(v: &sluice_proto::classify::Value<'_, '_>) -> String {
    let (a, b) = v.parts();
    String::from_utf8_lossy(&[a, b].concat()).into_owned()
}

fn bench(c: &mut Criterion) {
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: NOW,
        zone: &zone,
    };
    let builtin_line = format!("<30>Apr 05 14:32:41 mwg-proxy-01 mwg: {PAIRS}");
    let local_line = format!("<30>Apr 05 14:32:41 mwg-proxy-01 acmewg: {PAIRS}");
    let builtin_msg = parse(builtin_line.as_bytes(), &opts);
    let local_msg = parse(local_line.as_bytes(), &opts);
    let plain = Classifier::default();
    let local = with_apps(LOCAL_APP);
    let src = corpus::udp_source();
    // The two classify what they should, or the comparison means nothing.
    {
        let s = Scratch::new();
        let b = classify(&builtin_msg, &src, NOW, &plain, &s);
        assert_eq!(text(&b.sourcetype), "mcafee:wg:kv");
        let s = Scratch::new();
        let l = classify(&local_msg, &src, NOW, &local, &s);
        assert_eq!(text(&l.sourcetype), "acme:wg:kv");
        assert_eq!(text(&l.source), "acme:wg:web_gateway");
        assert_eq!(text(&b.source), "mcafee:wg:web_gateway");
    }
    let mut group = c.benchmark_group("app_parsers");
    group.throughput(Throughput::Elements(1));
    group.bench_function("builtin_mcafee_wg", |b| {
        let mut scratch = Scratch::new();
        b.iter(|| {
            scratch.reset();
            black_box(classify(black_box(&builtin_msg), &src, NOW, &plain, &scratch).index);
        })
    });
    group.bench_function("local_acme_wg", |b| {
        let mut scratch = Scratch::new();
        b.iter(|| {
            scratch.reset();
            black_box(classify(black_box(&local_msg), &src, NOW, &local, &scratch).index);
        })
    });
    let loggen = parse(LOGGEN_LINE, &opts);
    let twenty = with_apps(TWENTY_APPS);
    {
        let s = Scratch::new();
        let n = classify(&loggen, &src, NOW, &twenty, &s);
        assert_eq!(
            text(&n.sourcetype),
            "syslogng:loggen",
            "no local application matches"
        );
    }
    group.bench_function("nix_loggen_no_apps", |b| {
        let mut scratch = Scratch::new();
        b.iter(|| {
            scratch.reset();
            black_box(classify(black_box(&loggen), &src, NOW, &plain, &scratch).index);
        })
    });
    group.bench_function("nix_loggen_20_nonmatching_apps", |b| {
        let mut scratch = Scratch::new();
        b.iter(|| {
            scratch.reset();
            black_box(classify(black_box(&loggen), &src, NOW, &twenty, &scratch).index);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);

/// `APP_PARSERS_LOOP=<side> <n>`: classifies one line `n` times and exits: the loggen line
/// through the classifier `without` or `with` the 20 applications, or the key=value line
/// through the `builtin` McAfee parser or the `local` application; for
/// `valgrind --tool=callgrind` (two values of `n`: the difference of the instruction counts
/// over the difference of `n` is the per-message cost, setup excluded).
fn instruction_loop(side: &str, n: u64) {
    let zone = Zone::utc();
    let opts = ParseOptions {
        now_unix_secs: NOW,
        zone: &zone,
    };
    let cx = match side {
        "with" => with_apps(TWENTY_APPS),
        "local" => with_apps(LOCAL_APP),
        _ => Classifier::default(),
    };
    let line = match side {
        "builtin" => format!("<30>Apr 05 14:32:41 mwg-proxy-01 mwg: {PAIRS}"),
        "local" => format!("<30>Apr 05 14:32:41 mwg-proxy-01 acmewg: {PAIRS}"),
        _ => String::from_utf8_lossy(LOGGEN_LINE).into_owned(),
    };
    let msg = parse(line.as_bytes(), &opts);
    let src = corpus::udp_source();
    let mut scratch = Scratch::new();
    for _ in 0..n {
        scratch.reset();
        black_box(classify(black_box(&msg), &src, NOW, &cx, &scratch).index);
    }
}

fn main() {
    if let Ok(spec) = std::env::var("APP_PARSERS_LOOP") {
        let (side, n) = spec.split_once(' ').unwrap_or((spec.as_str(), "100000"));
        instruction_loop(side, n.parse().unwrap_or(100_000));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
