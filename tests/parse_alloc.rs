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

/// The bench shapes plus one that fails RFC 5424 validation (the unparsed path).
fn shapes() -> Vec<(&'static str, Vec<u8>, Format)> {
    let mut v = sluice_suite::fixtures::shapes();
    v.push((
        "unparsed",
        b"<13>1 2019-02-13T19:48:34+00:00 host app - - [broken x] qwerty\n".to_vec(),
        Format::Unparsed,
    ));
    v
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
