use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts live instances; a hold whose release is observable.
struct Guard(Arc<AtomicUsize>);
impl Guard {
    fn new(live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Guard(Arc::clone(live))
    }
}
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn policy(events: usize, bytes: usize) -> BatchPolicy {
    BatchPolicy {
        max_events: events,
        max_bytes: bytes,
        timeout: Duration::from_millis(300),
    }
}

fn ev(s: &str) -> impl FnOnce(&mut Vec<u8>) + '_ {
    move |out| out.extend_from_slice(s.as_bytes())
}

fn lines(s: &'static str) -> EncodedBatch {
    EncodedBatch::from_lines(Bytes::from_static(s.as_bytes())).unwrap()
}

/// Every event of `b`, by its recorded boundaries.
fn events_of(b: &EncodedBatch) -> Vec<&[u8]> {
    (0..b.events()).map(|i| b.event(i).unwrap()).collect()
}

/// The boundaries agree with the body: joining the events with `\n` gives the body back.
fn assert_boundaries(b: &EncodedBatch) {
    let joined = events_of(b).join(&b'\n');
    assert_eq!(joined, b.body().to_vec(), "{b:?}");
}

#[test]
fn closes_at_max_events_with_newline_separators() {
    let mut b = BatchBuilder::new(policy(3, 1 << 20));
    let t = Instant::now();
    assert!(b.push_with(t, ev("{\"event\":\"a\"}")).is_none());
    assert!(b.push_with(t, ev("{\"event\":\"b\"}")).is_none());
    let batch = b
        .push_with(t, ev("{\"event\":\"c\"}"))
        .expect("third event closes");
    assert_eq!(batch.events(), 3);
    assert_eq!(
        &batch.body()[..],
        b"{\"event\":\"a\"}\n{\"event\":\"b\"}\n{\"event\":\"c\"}"
    );
    assert_eq!(batch.event(1), Some(&b"{\"event\":\"b\"}"[..]));
    assert_eq!(batch.event(3), None);
    assert_boundaries(&batch);
    assert!(b.is_empty());
    assert_eq!(b.deadline(), None);
}

#[test]
fn event_crossing_the_byte_limit_moves_to_the_next_batch() {
    // 10-byte events; limit 25 bytes: two events + separator = 21, a third would be 32.
    let mut b = BatchBuilder::new(policy(100, 25));
    let t0 = Instant::now();
    assert!(b.push_with(t0, ev("aaaaaaaaaa")).is_none());
    assert!(b.push_with(t0, ev("bbbbbbbbbb")).is_none());
    let t1 = t0 + Duration::from_millis(5);
    let closed = b.push_with(t1, ev("cccccccccc")).expect("overflow closes");
    assert_eq!(&closed.body()[..], b"aaaaaaaaaa\nbbbbbbbbbb");
    assert_eq!(closed.events(), 2);
    assert_boundaries(&closed);
    assert!(closed.body().len() <= 25);
    assert_eq!(b.len(), 1);
    assert_eq!(b.bytes(), 10);
    // The moved event opened the new batch, so its deadline counts from t1.
    assert_eq!(b.deadline(), Some(t1 + Duration::from_millis(300)));
    let rest = b.take().unwrap();
    assert_eq!(&rest.body()[..], b"cccccccccc");
    assert_eq!(events_of(&rest), vec![&b"cccccccccc"[..]]);
}

#[test]
fn reaching_the_byte_limit_exactly_closes_the_batch() {
    let mut b = BatchBuilder::new(policy(100, 21));
    let t = Instant::now();
    assert!(b.push_with(t, ev("aaaaaaaaaa")).is_none());
    let closed = b
        .push_with(t, ev("bbbbbbbbbb"))
        .expect("21 bytes reaches the limit");
    assert_eq!(closed.body().len(), 21);
    assert!(b.is_empty());
}

#[test]
fn oversized_single_event_forms_its_own_batch() {
    let mut b = BatchBuilder::new(policy(100, 8));
    let t = Instant::now();
    let big = b
        .push_with(t, ev("0123456789abcdef"))
        .expect("oversized alone ships");
    assert_eq!(big.events(), 1);
    assert_eq!(big.body().len(), 16);

    // After a small event, an oversized one is moved out and is itself due at once.
    assert!(b.push_with(t, ev("x")).is_none());
    let t2 = t + Duration::from_millis(1);
    let small = b.push_with(t2, ev("0123456789abcdef")).expect("overflow");
    assert_eq!(&small.body()[..], b"x");
    assert_eq!(
        b.deadline(),
        Some(t2),
        "the moved oversized event is due now"
    );
    // The next push hands it over first and starts a fresh batch with the new event.
    let due = b.push_with(t2, ev("y")).expect("due batch");
    assert_eq!(&due.body()[..], b"0123456789abcdef");
    assert_eq!(b.len(), 1);
    assert_eq!(&b.take().unwrap().body()[..], b"y");
}

#[test]
fn deadline_is_timeout_after_the_first_event() {
    let mut b = BatchBuilder::new(policy(100, 1000));
    assert_eq!(b.deadline(), None);
    let t0 = Instant::now();
    b.push_with(t0, ev("a"));
    b.push_with(t0 + Duration::from_millis(200), ev("b"));
    assert_eq!(b.deadline(), Some(t0 + Duration::from_millis(300)));
    let batch = b.take().unwrap();
    assert_eq!(batch.events(), 2);
    assert_eq!(b.deadline(), None);
    assert!(b.take().is_none());
}

#[test]
fn encoder_writing_nothing_counts_no_event() {
    let mut b = BatchBuilder::new(policy(100, 1000));
    let t = Instant::now();
    b.push_with(t, |_| {});
    assert!(b.is_empty());
    b.push_with(t, ev("a"));
    b.push_with(t, |_| {});
    let batch = b.take().unwrap();
    assert_eq!(&batch.body()[..], b"a");
    assert_eq!(batch.events(), 1);
}

#[test]
fn chunks_merge_with_their_boundaries_and_holds_and_flush_before_overflowing() {
    let live = Arc::new(AtomicUsize::new(0));
    let chunk = |body: &'static str| {
        let mut c = lines(body);
        c.hold(HoldKind::Events, Guard::new(&live));
        c
    };
    let mut b = BatchBuilder::new(policy(10, 30));
    let t = Instant::now();
    assert!(b.push_with(t, ev("e0")).is_none());
    assert!(b.push_chunk(t, chunk("c1\nc2\nc3")).is_none());
    assert_eq!(b.len(), 4);
    assert_eq!(b.bytes(), 11);
    // 11 + 1 + 20 > 30: the open batch closes first, the chunk starts the next one.
    let closed = b
        .push_chunk(t, chunk("dddddddddd\neeeeeeeee"))
        .expect("flush before overflow");
    assert_eq!(&closed.body()[..], b"e0\nc1\nc2\nc3");
    assert_eq!(
        events_of(&closed),
        vec![&b"e0"[..], &b"c1"[..], &b"c2"[..], &b"c3"[..]]
    );
    assert_eq!(closed.hold_count(HoldKind::Events), 1);
    assert_eq!(b.len(), 2);
    assert_eq!(live.load(Ordering::SeqCst), 2);
    drop(closed);
    assert_eq!(
        live.load(Ordering::SeqCst),
        1,
        "first chunk's hold released"
    );
    let rest = b.take().unwrap();
    assert_boundaries(&rest);
    assert_eq!(rest.hold_count(HoldKind::Events), 1);
    drop(rest);
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

#[test]
fn chunk_reaching_event_limit_closes_and_full_chunk_ships_without_copy() {
    let mut b = BatchBuilder::new(policy(4, 1000));
    let t = Instant::now();
    b.push_with(t, ev("a"));
    let closed = b.push_chunk(t, lines("b\nc\nd")).expect("4 events reached");
    assert_eq!(&closed.body()[..], b"a\nb\nc\nd");
    assert_boundaries(&closed);
    let body = Bytes::from_static(b"1\n2\n3\n4\n5");
    let ptr = body.as_ptr();
    let whole = b
        .push_chunk(t, EncodedBatch::from_lines(body).unwrap())
        .expect("a full chunk on an empty builder ships as is");
    assert_eq!(whole.body().as_ptr(), ptr);
    assert_eq!(whole.events(), 5);
    assert!(b.is_empty());
}

#[test]
fn holds_are_dropped_with_the_batch_or_released_by_kind() {
    let live = Arc::new(AtomicUsize::new(0));
    let mut b = BatchBuilder::new(policy(2, 1000));
    let t = Instant::now();
    b.push_with(t, ev("a"));
    let mut batch = b.push_with(t, ev("b")).unwrap();
    batch.hold(HoldKind::Events, Guard::new(&live));
    batch.hold(HoldKind::Bytes, Guard::new(&live));
    assert_eq!(live.load(Ordering::SeqCst), 2);
    batch.release(HoldKind::Events);
    assert_eq!(live.load(Ordering::SeqCst), 1, "only the event hold went");
    assert_eq!(batch.hold_count(HoldKind::Bytes), 1);
    drop(batch);
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

#[test]
fn from_lines_counts_lines_and_an_empty_body_has_no_events() {
    assert_eq!(lines("").events(), 0);
    assert!(lines("").is_empty());
    assert_eq!(lines("x").events(), 1);
    let b = lines("a\n\nccc");
    assert_eq!(events_of(&b), vec![&b"a"[..], &b""[..], &b"ccc"[..]]);
    assert_eq!(b.event_range(2), Some(3..6));
}

#[test]
fn events_bytes_slices_whole_events_without_copying() {
    let b = lines("aa\nbbb\nc\ndddd");
    assert_eq!(&b.events_bytes(0..4)[..], b"aa\nbbb\nc\ndddd");
    assert_eq!(b.events_bytes(0..4).as_ptr(), b.body().as_ptr());
    assert_eq!(&b.events_bytes(1..3)[..], b"bbb\nc");
    assert_eq!(&b.events_bytes(3..4)[..], b"dddd");
    assert_eq!(&b.events_bytes(2..99)[..], b"c\ndddd", "clamped");
    assert!(b.events_bytes(2..2).is_empty());
    assert!(b.events_bytes(5..9).is_empty());
}

#[test]
fn handoff_does_not_copy_the_body() {
    let mut b = BatchBuilder::new(policy(2, 1 << 20));
    let t = Instant::now();
    b.push_with(t, ev("a"));
    let ptr = b.body.as_ptr();
    let batch = b.push_with(t, ev("b")).unwrap();
    assert_eq!(batch.body().as_ptr(), ptr);
}

#[test]
fn byte_limits_beyond_the_offset_range_are_clamped() {
    let b = BatchBuilder::new(policy(usize::MAX, usize::MAX));
    assert_eq!(b.policy().max_bytes, MAX_BATCH_BYTES);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the policy and the mix of single events and chunks, every batch's
        /// boundaries match its body, and the batches together hold every event once, in
        /// order.
        #[test]
        fn boundaries_always_match_the_body(
            max_events in 1usize..8,
            max_bytes in 1usize..40,
            pushes in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec("[a-z]{0,9}", 1..4)), 1..40),
        ) {
            let mut b = BatchBuilder::new(policy(max_events, max_bytes));
            let t = Instant::now();
            let mut want: Vec<Vec<u8>> = Vec::new();
            let mut got: Vec<Vec<u8>> = Vec::new();
            let mut collect = |batch: EncodedBatch| {
                assert_boundaries(&batch);
                got.extend(events_of(&batch).into_iter().map(<[u8]>::to_vec));
            };
            for (as_chunk, evs) in pushes {
                if as_chunk {
                    let body = evs.join("\n");
                    if !body.is_empty() {
                        want.extend(evs.iter().map(|e| e.as_bytes().to_vec()));
                    }
                    if let Some(x) = b.push_chunk(
                        t, EncodedBatch::from_lines(Bytes::from(body)).unwrap()) {
                        collect(x);
                    }
                } else {
                    for e in evs.iter().filter(|e| !e.is_empty()) {
                        want.push(e.as_bytes().to_vec());
                        if let Some(x) = b.push_with(t, |out| out.extend_from_slice(e.as_bytes())) {
                            collect(x);
                        }
                    }
                }
                if b.deadline() == Some(t) && let Some(x) = b.take() {
                    collect(x);
                }
            }
            if let Some(x) = b.take() {
                collect(x);
            }
            prop_assert_eq!(got, want);
        }
    }
}

#[test]
fn from_parts_round_trips_and_refuses_bad_offsets() {
    let b = EncodedBatch::from_lines(Bytes::from_static(b"{\"a\":1}\n{\"b\":22}\n{}")).unwrap();
    let back = EncodedBatch::from_parts(b.body().clone(), b.starts().to_vec()).unwrap();
    assert_eq!(back.events(), 3);
    assert_eq!(back.event(1), Some(&b"{\"b\":22}"[..]));
    assert_eq!(back.event(2), Some(&b"{}"[..]));
    let body = b.body().clone();
    for bad in [
        vec![1, 8],     // must start at 0
        vec![0, 0],     // must increase
        vec![0, 5],     // not after a separator
        vec![0, 8, 99], // beyond the body
    ] {
        assert_eq!(
            EncodedBatch::from_parts(body.clone(), bad.clone()).unwrap_err(),
            BadParts::Offsets,
            "{bad:?}"
        );
    }
    assert!(
        EncodedBatch::from_parts(Bytes::new(), Vec::new())
            .unwrap()
            .is_empty()
    );
    assert!(EncodedBatch::from_parts(Bytes::from_static(b"x"), Vec::new()).is_err());
}

#[test]
fn routed_events_keep_their_destinations_through_limits_and_chunks() {
    let t = Instant::now();
    let mut b = BatchBuilder::new(policy(10, 12));
    assert!(b.push_with(t, ev("aaaa")).is_none());
    assert!(b.push_routed(t, 0b10, ev("bbbb")).is_none());
    // Crosses the byte limit: moves to the next batch with its destinations.
    let first = b.push_routed(t, 0b01, ev("cccc")).unwrap();
    assert_eq!(events_of(&first), [&b"aaaa"[..], b"bbbb"]);
    assert_eq!(first.dests(), [UNROUTED, 0b10]);
    let second = b.take().unwrap();
    assert_eq!(second.dests(), [0b01]);

    // Unrouted batches carry nothing.
    b.push_with(t, ev("x"));
    assert!(b.take().unwrap().dests().is_empty());

    // Chunks: an unrouted chunk into a routed builder and the other way round.
    let mut chunk_builder = BatchBuilder::new(policy(100, 1000));
    chunk_builder.push_routed(t, 0b100, ev("r1"));
    let routed_chunk = chunk_builder.take().unwrap();
    let mut b = BatchBuilder::new(policy(100, 1000));
    b.push_chunk(t, lines("u1\nu2"));
    b.push_chunk(t, routed_chunk);
    b.push_chunk(t, lines("u3"));
    let merged = b.take().unwrap();
    assert_boundaries(&merged);
    assert_eq!(merged.dests(), [UNROUTED, UNROUTED, 0b100, UNROUTED]);
}

#[test]
fn select_copies_the_picked_events_and_shared_holds_live_until_the_last_part() {
    let mut b = lines("e0\ne1\ne2\ne3");
    let live = Arc::new(AtomicUsize::new(0));
    b.hold(HoldKind::Events, Guard::new(&live));
    b.hold(HoldKind::Bytes, Guard::new(&live));
    let odd = b.select(|i| i % 2 == 1);
    assert_boundaries(&odd);
    assert_eq!(events_of(&odd), [&b"e1"[..], b"e3"]);
    assert!(b.select(|_| false).is_empty());

    let ev_hold = b.share_holds(HoldKind::Events).unwrap();
    let by_hold = b.share_holds(HoldKind::Bytes).unwrap();
    assert_eq!(b.hold_count(HoldKind::Events), 0);
    assert!(b.share_holds(HoldKind::Events).is_none());
    let mut p1 = b.clone_events();
    let mut p2 = odd;
    for p in [&mut p1, &mut p2] {
        p.hold(HoldKind::Events, Arc::clone(&ev_hold));
        p.hold(HoldKind::Bytes, Arc::clone(&by_hold));
    }
    drop((ev_hold, by_hold, b));
    assert_eq!(live.load(Ordering::SeqCst), 2);
    p1.release(HoldKind::Events);
    drop(p1);
    assert_eq!(live.load(Ordering::SeqCst), 2, "p2 still holds both");
    p2.release(HoldKind::Events);
    assert_eq!(
        live.load(Ordering::SeqCst),
        1,
        "the event hold went with the last part"
    );
    drop(p2);
    assert_eq!(live.load(Ordering::SeqCst), 0);
}
