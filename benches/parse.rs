//! Parser throughput on the message shapes that dominate SC4S traffic and its load tests.
//!
//! Target: >= 2 M msg/s per core (<= 500 ns/msg) on the loggen shapes. Run with
//! `cargo bench --bench parse -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_proto::{Format, ParseOptions, Zone, parse};

/// 2026-03-05T12:28:51Z, the stamp in the loggen lines.
const NOW: i64 = 1_772_713_731;

/// Pads `head` with `PADD` to `total` bytes including the trailing LF, as loggen does.
fn padded(head: &[u8], total: usize) -> Vec<u8> {
    let mut line = head.to_vec();
    while line.len() < total - 1 {
        line.push(b"PADD"[line.len() % 4]);
    }
    line.truncate(total - 1);
    line.push(b'\n');
    line
}

fn shapes() -> Vec<(&'static str, Vec<u8>, Format)> {
    vec![
        (
            "loggen_rfc3164_800",
            padded(
                b"<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
                800,
            ),
            Format::Rfc3164,
        ),
        (
            "loggen_rfc5424_800",
            padded(
                b"<38>1 2026-03-05T12:28:51+00:00 localhost prg00000 1234 - - \xEF\xBB\xBFseq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
                800,
            ),
            Format::Rfc5424,
        ),
        (
            "cisco_asa",
            b"<166>Mar  5 12:28:50 asa-fw1 : %ASA-6-302013: Built outbound TCP connection 102 for outside:198.51.100.1/443 (198.51.100.1/443) to inside:192.168.1.10/53211 (203.0.113.10/53211)\n".to_vec(),
            Format::Rfc3164,
        ),
        (
            "sd_heavy_rfc5424",
            b"<134>1 2021-02-08T10:19:34.123456Z gw-02bd87 CheckPoint 26203 - [sc4s@2620 action=\"Accept\" flags=\"280832\" ifdir=\"inbound\" ifname=\"eth0\" loguid=\"{0x4b397cf0,0x530e24fb,0x1b71ea26,0x27225237}\" origin=\"10.160.99.101\" originsicname=\"cn=gw-02bd87,o=gw-02bd87..4zrt7d\" sequencenum=\"5\" time=\"1612815085\" version=\"5\" dst=\"173.194.184.234\" http_host=\"r5---sn-p5qlsndd.gvt1.com\" http_status=\"206\" log_id=\"4000\" method=\"GET\" product=\"Threat Emulation\" proto=\"6\" s_port=\"57656\" service=\"80\" src=\"10.160.99.101\"][meta sequenceId=\"1\"] Check Point event\n".to_vec(),
            Format::Rfc5424,
        ),
    ]
}

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
