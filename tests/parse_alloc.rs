//! The parser allocates nothing per message on the common shapes (DESIGN.md: `sluice-proto`
//! must not allocate per message on the common path).
//!
//! The counting global allocator comes from the `allocation-counter` crate, linked only into
//! this test binary; its counts are per thread, so the harness's other threads cannot disturb
//! them.

use sluice_proto::{Format, ParseOptions, Zone, parse};

/// Allocations made by `f` on this thread (the test harness's other threads are not
/// counted). `allocation_counter` supplies the counting global allocator, so this test
/// needs no `unsafe` of its own.
fn allocations_during(f: impl FnOnce()) -> u64 {
    allocation_counter::measure(f).count_total
}

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
            "loggen rfc3164",
            padded(
                b"<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
                800,
            ),
            Format::Rfc3164,
        ),
        (
            "loggen rfc5424",
            padded(
                b"<38>1 2026-03-05T12:28:51+00:00 localhost prg00000 1234 - - \xEF\xBB\xBFseq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
                800,
            ),
            Format::Rfc5424,
        ),
        (
            "cisco asa",
            b"<166>Mar  5 12:28:50 asa-fw1 : %ASA-6-302013: Built outbound TCP connection 102 for outside:198.51.100.1/443 (198.51.100.1/443) to inside:192.168.1.10/53211 (203.0.113.10/53211)\n".to_vec(),
            Format::Rfc3164,
        ),
        (
            "sd-heavy rfc5424",
            b"<134>1 2021-02-08T10:19:34.123456Z gw-02bd87 CheckPoint 26203 - [sc4s@2620 action=\"Accept\" flags=\"280832\" ifdir=\"inbound\" ifname=\"eth0\" loguid=\"{0x4b397cf0,0x530e24fb}\" origin=\"10.160.99.101\" originsicname=\"cn=gw-02bd87,o=gw-02bd87..4zrt7d\" sequencenum=\"5\" time=\"1612815085\" version=\"5\" dst=\"173.194.184.234\" http_host=\"r5---sn-p5qlsndd.gvt1.com\"][meta sequenceId=\"1\"][origin ip=\"10.0.0.1\"] Check Point event\n".to_vec(),
            Format::Rfc5424,
        ),
        (
            "unparsed",
            b"<13>1 2019-02-13T19:48:34+00:00 host app - - [broken x] qwerty\n".to_vec(),
            Format::Unparsed,
        ),
    ]
}

#[test]
fn parsing_common_shapes_allocates_nothing() {
    let utc = Zone::utc();
    let ny = Zone::from_name("America/New_York").expect("bundled tzdb has America/New_York");
    let shapes = shapes();
    for zone in [&utc, &ny] {
        let opts = ParseOptions {
            now_unix_secs: 1_772_713_731,
            zone,
        };
        for (name, line, format) in &shapes {
            // Warm-up outside the count: anything lazily initialised once (tz caches) is not a
            // per-message cost.
            assert_eq!(parse(line, &opts).format, *format, "{name}");
            let mut seen = 0usize;
            let per_message = allocations_during(|| {
                for _ in 0..1000 {
                    let m = parse(std::hint::black_box(line), &opts);
                    seen += m.message.map_or(0, <[u8]>::len);
                    // Walking SD without escapes borrows; that is what the encoder does.
                    if let Some(sd) = m.structured_data {
                        for el in sd.elements() {
                            for p in el.params() {
                                seen += p.value().len();
                            }
                        }
                    }
                }
            });
            assert!(seen > 0, "{name}: nothing parsed");
            assert_eq!(
                per_message,
                0,
                "{name} in {}: {per_message} allocations over 1000 parses",
                zone.name()
            );
        }
    }
}

/// The counter must see allocations, or the test above proves nothing.
#[test]
fn the_counter_counts() {
    let n = allocations_during(|| {
        let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(64));
        drop(v);
    });
    assert!(n > 0);
}
