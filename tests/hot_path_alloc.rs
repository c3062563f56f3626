//! The receive hot path — parse → classify → encode into the open batch — allocates nothing
//! per message: only when a batch is handed off (a new body buffer, the hand-off `Bytes`).
//! This is the loop every UDP receive thread runs for every datagram.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use std::sync::Arc;

use sluice::config::{Config, HecDestination};
use sluice::pipeline::{LocalCounts, Processor, RecvTime};
use sluice::routing::Routing;
use sluice_proto::batch::BatchPolicy;
use sluice_proto::classify::{Classifier, SourceMeta, Transport};
use sluice_proto::event::EncodeOptions;
use sluice_proto::time::Zone;

fn processor(
    zone: &str,
    routing: Option<Arc<Routing>>,
    encodings: sluice::output::Encodings,
) -> Processor {
    Processor {
        routing,
        zone: Zone::from_name(zone).unwrap(),
        tables: Classifier::default(),
        encode: EncodeOptions::new("sc4s-test-host"),
        batch: BatchPolicy {
            max_events: 5000,
            max_bytes: 4_096_000,
            timeout: Duration::from_millis(300),
        },
        groups: Default::default(),
        names: None,
        vps: None,
        encodings,
    }
}

#[test]
fn processing_a_message_allocates_only_per_batch() {
    let mut shapes: Vec<Vec<u8>> = sluice_suite::fixtures::shapes()
        .into_iter()
        .map(|(_, line, _)| line)
        .collect();
    shapes.push(b"garbage without any header at all".to_vec());
    const N: usize = 20_000;
    // With alternates, each event's destinations are looked up after classification: that
    // must not allocate either.
    let mut c = Config::default();
    c.hec.urls = vec!["http://idx:8088".into()];
    let mut other = HecDestination::default();
    other.hec.urls = vec!["http://other:8088".into()];
    c.destinations.insert("other".into(), other);
    c.routing
        .alternates
        .insert("cisco_asa".into(), vec!["d_hec_fmt_other".into()]);
    let routing = Arc::new(Routing::build(&c, &c.destination_plan()).unwrap());
    assert!(!routing.is_uniform());
    // A relay of each kind and a Kafka destination: every event is encoded three more times
    // (the extra encodings), still without an allocation per message.
    let mut f = Config::default();
    f.hec.urls = vec!["http://idx:8088".into()];
    for (key, kind) in [
        ("syslog_a", sluice::config::RelayKind::Syslog),
        ("bsd_b", sluice::config::RelayKind::Bsd),
    ] {
        f.relays.insert(
            key.into(),
            sluice::config::RelayDestination {
                kind,
                host: "127.0.0.1".into(),
                ..Default::default()
            },
        );
    }
    f.kafka.insert(
        "k".into(),
        sluice::config::KafkaDestination {
            brokers: "127.0.0.1:9092".into(),
            topic: "sc4s-${sourcetype}".into(),
            ..Default::default()
        },
    );
    let (forwarding, _) = sluice::output::Encodings::from_plan(&f.destination_plan(), u64::MAX);
    assert_eq!(forwarding.len(), 3);
    for (zone, routing, encodings) in [
        ("GMT", None, Default::default()),
        ("America/New_York", None, Default::default()),
        ("GMT", Some(routing), Default::default()),
        ("GMT", None, forwarding),
    ] {
        let p = processor(zone, routing, encodings);
        let src = SourceMeta {
            transport: Transport::Udp,
            dest_port: 514,
            source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
            listener_id: "DEFAULT",
        };
        for line in &shapes {
            let mut builder = p.new_builder();
            let mut counts = LocalCounts::default();
            let at = RecvTime {
                instant: Instant::now(),
                unix_micros: 1_772_713_731_000_000,
            };
            // Warm-up: the first batch buffer grows to its working size once.
            let _ = p.process(line, &src, at, &mut builder, &mut counts);
            let mut batches = Vec::new();
            let info = allocation_counter::measure(|| {
                for _ in 0..N {
                    if let Some(b) = p.process(
                        std::hint::black_box(line),
                        &src,
                        at,
                        &mut builder,
                        &mut counts,
                    ) {
                        // Keep the batch outside the measurement's frees, as the output would.
                        batches.push(b);
                    }
                }
            });
            let handed_off = batches.len() as u64;
            eprintln!(
                "{zone}: {} allocations for {N} messages, {handed_off} batches",
                info.count_total
            );
            assert!(handed_off >= 1, "{zone}: no batch completed");
            // Per hand-off: the next batch's body buffer (one allocation; growing it to the
            // batch size costs a few reallocations) and the `Bytes` it becomes, once per
            // encoding the batch carries. Nothing scales with the message count.
            let per_batch_budget = 24 * (1 + p.encodings.len() as u64);
            assert!(
                info.count_total <= handed_off * per_batch_budget + per_batch_budget,
                "{zone} {:?}: {} allocations for {N} messages in {handed_off} batches",
                String::from_utf8_lossy(&line[..20]),
                info.count_total
            );
            assert_eq!(counts.messages as usize, N + 1);
        }
    }
}
