use proptest::prelude::*;

use super::*;
use crate::format::{RECORD_HEADER_LEN, RecordHeader};

/// Newline-joined events and their starts, as the daemon appends them.
fn batch(events: &[Vec<u8>]) -> (Vec<u8>, Vec<u32>) {
    let mut body = Vec::new();
    let mut starts = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            body.push(b'\n');
        }
        starts.push(body.len() as u32);
        body.extend_from_slice(e);
    }
    (body, starts)
}

fn record(payload: &[u8], starts: Option<&[u32]>) -> Vec<u8> {
    let mut r = encode_record(payload, 1, starts, 99);
    stamp_id(&mut r, 42);
    r
}

/// A format 1 record with offsets: one CRC over the whole body (what operators' disks hold
/// from earlier releases; the fixture in tests/fixtures/format-1 has real ones).
fn format1_record(payload: &[u8], starts: &[u32]) -> Vec<u8> {
    let mut body = Vec::new();
    for s in starts {
        body.extend_from_slice(&s.to_le_bytes());
    }
    body.extend_from_slice(payload);
    let h = RecordHeader {
        flags: FLAG_OFFSETS,
        body_len: body.len() as u32,
        events: starts.len() as u32,
        id: 7,
        timestamp_micros: 1,
        check: crc(&body),
    };
    let mut r = vec![0u8; RECORD_HEADER_LEN];
    h.encode_into(&mut r);
    r.extend_from_slice(&body);
    r
}

/// The body checksum as the header should hold it.
fn body_check(h: &RecordHeader, body: &[u8]) -> u32 {
    let (table, payload) = body.split_at(h.layout().table_len(h.events) as usize);
    body_crc(h.layout(), table, payload)
}

/// What a reader makes of a record: kept payload, starts, lost event indexes.
type Read = (Vec<u8>, Option<Vec<u32>>, Vec<u32>);

/// `None` when the record is lost whole.
fn read(r: &[u8]) -> Option<Read> {
    let h = RecordHeader::decode(r)?;
    let body = &r[RECORD_HEADER_LEN..];
    if body_check(&h, body) == h.check {
        // The fast path: one CRC pass, no per-event check.
        let c = check_body(&h, body).unwrap();
        assert!(c.is_intact());
    }
    let c = check_body(&h, body).ok()?;
    if c.is_intact() {
        Some((
            body[c.payload_start..].to_vec(),
            offsets_of(&h, body),
            Vec::new(),
        ))
    } else {
        let (p, s) = salvage(body, &c);
        Some((p, Some(s), c.lost))
    }
}

#[test]
fn layouts_round_trip() {
    let events: Vec<Vec<u8>> = (0..5).map(|i| format!("event {i}").into_bytes()).collect();
    let (payload, starts) = batch(&events);
    let r = record(&payload, Some(&starts));
    let h = RecordHeader::decode(&r).unwrap();
    assert_eq!(h.layout(), Layout::Events);
    assert_eq!(
        body_check(&h, &r[RECORD_HEADER_LEN..]),
        h.check,
        "the body CRC covers the body"
    );
    assert_eq!(
        crc32fast::hash(&r[RECORD_HEADER_LEN..]),
        h.check,
        "format 2 bodies have a CRC-32"
    );
    assert_eq!((h.id, h.events, h.timestamp_micros), (42, 5, 99));
    assert_eq!(h.record_len(), r.len() as u64);
    assert_eq!(
        read(&r),
        Some((payload.clone(), Some(starts.clone()), vec![]))
    );

    let plain = record(&payload, None);
    let h = RecordHeader::decode(&plain).unwrap();
    assert_eq!((h.layout(), h.events), (Layout::Plain, 1));
    assert_eq!(read(&plain), Some((payload.clone(), None, vec![])));

    // An empty table has no event to give a CRC: the whole body has one.
    let empty = record(b"", Some(&[]));
    assert_eq!(
        RecordHeader::decode(&empty).unwrap().layout(),
        Layout::Offsets
    );
    assert_eq!(read(&empty), Some((vec![], Some(vec![]), vec![])));

    let old = format1_record(&payload, &starts);
    assert_eq!(read(&old), Some((payload, Some(starts), vec![])));
}

#[test]
fn every_single_byte_flip_is_detected() {
    let events: Vec<Vec<u8>> = (0..4).map(|i| format!("ev{i}").into_bytes()).collect();
    let (payload, starts) = batch(&events);
    for r in [
        record(&payload, Some(&starts)),
        record(&payload, None),
        format1_record(&payload, &starts),
    ] {
        for i in 0..r.len() {
            let mut d = r.clone();
            d[i] ^= 0x01;
            let Some(h) = RecordHeader::decode(&d) else {
                continue;
            };
            if let Ok(c) = check_body(&h, &d[RECORD_HEADER_LEN..]) {
                assert!(!c.is_intact(), "flip at {i} not detected");
            }
        }
    }
}

/// Where the payload starts in a format 2 record of `n` events.
fn payload_at(n: usize) -> usize {
    RECORD_HEADER_LEN + Layout::Events.table_len(n as u32) as usize
}

/// Where copy `copy` of event `i`'s table entry is in a format 2 record of `n` events.
fn entry_at(n: usize, copy: usize, i: usize) -> usize {
    RECORD_HEADER_LEN + (copy * n + i) * EVENT_ENTRY_LEN
}

#[test]
fn a_flip_in_an_event_loses_that_event_only() {
    let events: Vec<Vec<u8>> = (0..6).map(|i| vec![b'a' + i as u8; 30]).collect();
    let (payload, starts) = batch(&events);
    let r = record(&payload, Some(&starts));
    for victim in 0..6 {
        let mut d = r.clone();
        d[payload_at(6) + starts[victim] as usize + 3] ^= 0x40;
        let (kept, kept_starts, lost) = read(&d).unwrap();
        assert_eq!(lost, [victim as u32]);
        let want: Vec<Vec<u8>> = (0..6)
            .filter(|&i| i != victim)
            .map(|i| {
                let mut e = events[i].clone();
                if i < 5 {
                    e.push(b'\n');
                }
                e
            })
            .collect();
        assert_eq!(kept, want.concat());
        let s = kept_starts.unwrap();
        assert_eq!(s.len(), 5);
        assert_eq!(s[0], 0);
    }
}

#[test]
fn damage_in_one_table_copy_costs_nothing() {
    let events: Vec<Vec<u8>> = (0..6).map(|i| vec![b'k' + i as u8; 20]).collect();
    let (payload, starts) = batch(&events);
    let r = record(&payload, Some(&starts));
    for copy in 0..EVENT_TABLE_COPIES {
        // All of one copy, starts and CRCs.
        let mut d = r.clone();
        for b in &mut d[entry_at(6, copy, 0)..entry_at(6, copy, 6)] {
            *b ^= 0x55;
        }
        let h = RecordHeader::decode(&d).unwrap();
        let c = check_body(&h, &d[RECORD_HEADER_LEN..]).unwrap();
        assert!(!c.is_intact(), "the body checksum covers the tables");
        assert_eq!(
            read(&d),
            Some((payload.clone(), Some(starts.clone()), vec![]))
        );
    }
}

#[test]
fn a_table_entry_damaged_in_both_copies_costs_its_event_and_the_one_before() {
    let events: Vec<Vec<u8>> = (0..6).map(|i| vec![b'k' + i as u8; 20]).collect();
    let (payload, starts) = batch(&events);
    let r = record(&payload, Some(&starts));
    let both = |r: &[u8], field: usize, x: u8| {
        let mut d = r.to_vec();
        for copy in 0..EVENT_TABLE_COPIES {
            d[entry_at(6, copy, 3) + field] ^= x;
        }
        d
    };
    // Entry 3's start: event 2 ends there, event 3 begins there.
    assert_eq!(read(&both(&r, 0, 0x02)).unwrap().2, [2, 3]);
    // Entry 3's CRC: event 3 only.
    assert_eq!(read(&both(&r, 5, 0x02)).unwrap().2, [3]);
    // Different damage in each copy: neither start is right.
    let mut d = r.clone();
    d[entry_at(6, 0, 3)] ^= 0x02;
    d[entry_at(6, 1, 3)] ^= 0x04;
    assert_eq!(read(&d).unwrap().2, [2, 3]);
    // Entry 0's start must be 0: a damaged one cannot hide bytes before the first event.
    let mut d = r;
    for copy in 0..EVENT_TABLE_COPIES {
        d[entry_at(6, copy, 0)] ^= 0x01;
    }
    assert_eq!(read(&d).unwrap().2, [0]);
}

#[test]
fn zeroed_table_entries_cannot_prove_an_empty_event() {
    // Zeroes over event 0's CRC and event 1's start, in both copies: the range of event 0
    // becomes 0..0, which must not pass for an (empty) event.
    let (payload, starts) = batch(&[b"first".to_vec(), b"second".to_vec()]);
    let r = record(&payload, Some(&starts));
    let mut d = r.clone();
    for copy in 0..EVENT_TABLE_COPIES {
        let e0 = entry_at(2, copy, 0);
        for b in &mut d[e0 + 4..e0 + 12] {
            *b = 0;
        }
    }
    // Event 1's start is gone too: nothing can be proven, the record is lost whole.
    assert_eq!(read(&d), None);
}

#[test]
fn a_body_with_no_intact_event_is_lost_whole() {
    let (payload, starts) = batch(&[b"one".to_vec(), b"two".to_vec()]);
    let mut r = record(&payload, Some(&starts));
    let at = r.len() - payload.len();
    for b in &mut r[at..] {
        *b = 0;
    }
    let h = RecordHeader::decode(&r).unwrap();
    assert_eq!(
        check_body(&h, &r[RECORD_HEADER_LEN..]),
        Err(BodyProblem::NoIntactEvent)
    );
}

#[test]
fn format1_damage_loses_the_record() {
    let (payload, starts) = batch(&[b"one".to_vec(), b"two".to_vec()]);
    let mut r = format1_record(&payload, &starts);
    let last = r.len() - 1;
    r[last] ^= 0x10;
    let h = RecordHeader::decode(&r).unwrap();
    assert_eq!(
        check_body(&h, &r[RECORD_HEADER_LEN..]),
        Err(BodyProblem::Crc)
    );
}

#[test]
fn intact_table_with_impossible_offsets_is_not_a_record() {
    // The writer refuses such offsets; on disk they can only come from another writer.
    let r = record(b"abcdef", Some(&[0, 9]));
    let h = RecordHeader::decode(&r).unwrap();
    assert_eq!(
        check_body(&h, &r[RECORD_HEADER_LEN..]),
        Err(BodyProblem::Offsets)
    );
}

#[test]
fn headers_with_impossible_layouts_are_invalid() {
    let r = record(b"abc", Some(&[0]));
    for (flags, events) in [(2u32, 1u32), (4, 1), (FLAG_OFFSETS | FLAG_EVENT_CRCS, 0)] {
        let mut h = RecordHeader::decode(&r).unwrap();
        h.flags = flags;
        h.events = events;
        let mut d = r.clone();
        h.encode_into(&mut d[..RECORD_HEADER_LEN]);
        assert_eq!(
            RecordHeader::decode(&d),
            None,
            "flags {flags} events {events}"
        );
    }
    // A table longer than the body.
    let mut h = RecordHeader::decode(&r).unwrap();
    h.events = 2;
    let mut d = r;
    h.encode_into(&mut d[..RECORD_HEADER_LEN]);
    assert_eq!(RecordHeader::decode(&d), None);
}

proptest! {
    /// Damage anywhere in a body: every event kept is byte-identical to the one written, and
    /// every event whose bytes are untouched, with one copy of each table field it needs, is
    /// kept.
    #[test]
    fn damage_costs_only_the_events_it_touches(
        sizes in proptest::collection::vec(0usize..90, 1..40),
        // XOR with a non-zero byte, or (0) zeroes, as a torn write leaves.
        hits in proptest::collection::vec((any::<prop::sample::Index>(), 1usize..80, 0u8..=255), 1..4),
    ) {
        let events: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|k| b'!' + ((i * 13 + k) % 90) as u8).collect())
            .collect();
        let (payload, starts) = batch(&events);
        let r = record(&payload, Some(&starts));
        let n = starts.len();
        let body_at = RECORD_HEADER_LEN;
        let mut d = r.clone();
        let mut touched = vec![false; r.len()];
        for (at, len, x) in hits {
            let from = body_at + at.index(r.len() - body_at);
            for k in from..(from + len).min(r.len()) {
                d[k] = if x == 0 { 0 } else { d[k] ^ x };
                // Zeroing an already-zero byte changes nothing, but counts as damage here.
                touched[k] = true;
            }
        }
        let clean = |a: usize, len: usize| !touched[a..a + len].iter().any(|&t| t);
        // A field survives if one copy of it is untouched.
        let field = |i: usize, at: usize, len: usize| {
            (0..EVENT_TABLE_COPIES).any(|c| clean(entry_at(n, c, i) + at, len))
        };
        let end_of = |i: usize| starts.get(i + 1).map_or(payload.len(), |&s| s as usize);
        let untouched = |i: usize| {
            field(i, 0, 4)
                && field(i, 4, 4)
                && (i + 1 == n || field(i + 1, 0, 4))
                && clean(payload_at(n) + starts[i] as usize, end_of(i) - starts[i] as usize)
        };
        match read(&d) {
            None => prop_assert!((0..n).all(|i| !untouched(i)), "lost whole with intact events"),
            Some((kept, kept_starts, lost)) => {
                let kept_starts = kept_starts.unwrap();
                prop_assert_eq!(kept_starts.len() + lost.len(), n);
                let mut want = Vec::new();
                for i in 0..n {
                    if lost.contains(&(i as u32)) {
                        prop_assert!(!untouched(i), "event {} lost though untouched", i);
                    } else {
                        want.extend_from_slice(&payload[starts[i] as usize..end_of(i)]);
                    }
                }
                prop_assert_eq!(kept, want, "kept bytes differ from the events written");
            }
        }
    }
}
