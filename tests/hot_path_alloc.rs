//! The receive hot path — parse → classify → encode into the open batch — allocates nothing
//! per message: only when a batch is handed off (a new body buffer, the hand-off `Bytes`).
//! This is the loop every UDP receive thread runs for every datagram.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use sluice::pipeline::{LocalCounts, Processor, RecvTime};
use sluice_hec::BatchPolicy;
use sluice_proto::classify::{SourceMeta, Tables, Transport};
use sluice_proto::hec::EncodeOptions;
use sluice_proto::time::Zone;

fn loggen_line(head: &str, total: usize) -> Vec<u8> {
    let mut line = head.as_bytes().to_vec();
    while line.len() < total - 1 {
        line.push(b"PADD"[line.len() % 4]);
    }
    line.push(b'\n');
    line
}

fn processor(zone: &str) -> Processor {
    Processor {
        zone: Zone::from_name(zone).unwrap(),
        tables: Tables::default(),
        encode: EncodeOptions::new("sc4s-test-host"),
        batch: BatchPolicy {
            max_events: 5000,
            max_bytes: 4_096_000,
            timeout: Duration::from_millis(300),
        },
    }
}

#[test]
fn processing_a_message_allocates_only_per_batch() {
    let shapes = [
        loggen_line(
            "<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
            800,
        ),
        loggen_line(
            "<38>1 2026-03-05T12:28:51+00:00 localhost prg00000 1234 - - \u{feff}seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
            800,
        ),
        b"<166>Mar  5 12:28:50 asa-fw1 : %ASA-6-302013: Built outbound TCP connection 102 for outside:198.51.100.1/443 (198.51.100.1/443) to inside:192.168.1.10/53211 (203.0.113.10/53211)".to_vec(),
        b"garbage without any header at all".to_vec(),
    ];
    const N: usize = 20_000;
    for zone in ["GMT", "America/New_York"] {
        let p = processor(zone);
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
            // batch size costs a few reallocations) and the `Bytes` it becomes. Nothing scales
            // with the message count.
            let per_batch_budget = 24;
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
