//! The UDP receive thread's per-message work, through the production code: parse → classify
//! → encode into the open batch (`Processor::process`), 800-byte loggen lines, SC4S's batch
//! policy (5000 events, 4,096,000 bytes). Finished batches are dropped; delivery is measured
//! by the `window` bench. Per element = per message.
//!
//! `cargo bench --bench pipeline -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice::pipeline::{LocalCounts, Processor, RecvTime};
use sluice_proto::batch::BatchPolicy;

use sluice::config::{Config, HecDestination};
use sluice::routing::Routing;
use sluice_proto::classify::{Classifier, SourceMeta, Transport};
use sluice_proto::event::EncodeOptions;
use sluice_proto::time::Zone;
use sluice_suite::fixtures::{NOW_UNIX, loggen_rfc3164, loggen_rfc5424};

fn bench_process(c: &mut Criterion) {
    let mut p = Processor {
        routing: None,
        zone: Zone::utc(),
        tables: Classifier::default(),
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
    };
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    let at = RecvTime {
        instant: Instant::now(),
        unix_micros: NOW_UNIX * 1_000_000,
    };
    let mut group = c.benchmark_group("udp_process_into_batch");
    group.throughput(Throughput::Elements(1));
    for (name, line) in [
        ("loggen_rfc3164_800B", loggen_rfc3164(800)),
        ("loggen_rfc5424_800B", loggen_rfc5424(800)),
    ] {
        let mut builder = p.new_builder();
        let mut counts = LocalCounts::default();
        group.bench_function(name, |b| {
            b.iter(|| {
                let batch = p.process(black_box(&line), &src, at, &mut builder, &mut counts);
                black_box(batch)
            })
        });
    }
    // With alternates configured, each event's destinations are looked up after
    // classification (two hash lookups, an index by severity).
    p.routing = Some(Arc::new(routing()));
    let line = loggen_rfc3164(800);
    let mut builder = p.new_builder();
    let mut counts = LocalCounts::default();
    group.bench_function("loggen_rfc3164_800B_routed", |b| {
        b.iter(|| {
            let batch = p.process(black_box(&line), &src, at, &mut builder, &mut counts);
            black_box(batch)
        })
    });
    // A forwarding destination besides HEC: each event is encoded once more (a relayed
    // RFC 5424 line; a Kafka record, its value a copy of the HEC event).
    p.routing = None;
    for (name, fwd) in [
        (
            "loggen_rfc3164_800B_plus_syslog_relay",
            forwarding(true, false),
        ),
        ("loggen_rfc3164_800B_plus_kafka", forwarding(false, true)),
    ] {
        p.encodings = fwd;
        let mut builder = p.new_builder();
        let mut counts = LocalCounts::default();
        group.bench_function(name, |b| {
            b.iter(|| {
                let batch = p.process(black_box(&line), &src, at, &mut builder, &mut counts);
                black_box(batch)
            })
        });
    }
    group.finish();
}

/// The extra encodings of a GLOBAL RFC 5424 relay and/or a Kafka destination.
fn forwarding(relay: bool, kafka: bool) -> sluice::output::Encodings {
    let mut c = Config::default();
    c.hec.urls = vec!["http://idx:8088".into()];
    if relay {
        c.relays.insert(
            "syslog_siem".into(),
            sluice::config::RelayDestination {
                host: "127.0.0.1".into(),
                ..Default::default()
            },
        );
    }
    if kafka {
        c.kafka.insert(
            "main".into(),
            sluice::config::KafkaDestination {
                brokers: "127.0.0.1:9092".into(),
                ..Default::default()
            },
        );
    }
    sluice::output::Encodings::from_plan(&c.destination_plan(), u64::MAX).0
}

/// Two destinations, Cisco ASA events also to the second.
fn routing() -> Routing {
    let mut c = Config::default();
    c.hec.urls = vec!["http://idx:8088".into()];
    let mut other = HecDestination::default();
    other.hec.urls = vec!["http://other:8088".into()];
    c.destinations.insert("other".into(), other);
    c.routing
        .alternates
        .insert("cisco_asa".into(), vec!["d_hec_fmt_other".into()]);
    Routing::build(&c, &c.destination_plan()).expect("routing")
}

criterion_group!(benches, bench_process);
criterion_main!(benches);
