//! Extra encodings: bodies that follow the main one event for event.

use super::*;

fn policy(events: usize, bytes: usize) -> BatchPolicy {
    BatchPolicy {
        max_events: events,
        max_bytes: bytes,
        timeout: Duration::from_millis(300),
    }
}

fn events_of(b: &EncodedBatch) -> Vec<String> {
    (0..b.events())
        .map(|i| String::from_utf8_lossy(b.event(i).unwrap()).into_owned())
        .collect()
}

/// Pushes `main` with one extra encoding: `<main>` upper-cased, or nothing for `skip`.
fn push(b: &mut BatchBuilder, main: &str, skip: bool) -> Option<EncodedBatch> {
    b.push_encoded(
        Instant::now(),
        None,
        1,
        |out| out.extend_from_slice(main.as_bytes()),
        |k, ev, out| {
            assert_eq!(k, 0);
            if !skip {
                out.extend(ev.iter().map(u8::to_ascii_uppercase));
            }
        },
    )
}

#[test]
fn each_encoding_is_a_batch_of_its_own() {
    let mut b = BatchBuilder::new(policy(10, 1 << 20));
    assert!(push(&mut b, "a", false).is_none());
    assert!(push(&mut b, "b", true).is_none());
    assert!(push(&mut b, "c\nd", false).is_none());
    let batch = b.take().unwrap();
    assert_eq!(batch.encodings(), 2);
    assert_eq!(batch.total_bytes(), "a\nb\nc\nd".len() + "A\n\nC\nD".len());

    let alt = batch.clone_encoding(1).unwrap();
    assert_eq!(events_of(&alt), ["A", "", "C\nD"]);
    // The line feed inside an event is not a boundary; the offsets round-trip as a disk
    // buffer record would.
    let back = EncodedBatch::from_parts(alt.body().clone(), alt.starts().to_vec()).unwrap();
    assert_eq!(events_of(&back), ["A", "", "C\nD"]);

    let picked = batch.select_encoding(1, |i| i != 1).unwrap();
    assert_eq!(events_of(&picked), ["A", "C\nD"]);
    assert_eq!(picked.encodings(), 1);

    assert_eq!(
        batch.select_encoding(2, |_| true).unwrap_err(),
        MissingEncoding { wanted: 2, have: 2 }
    );
    let main = batch.clone_events().into_encoding(0).unwrap();
    assert_eq!(main.encodings(), 1);
    assert_eq!(events_of(&main), ["a", "b", "c\nd"]);
    let same = batch.clone_events().into_encoding(2).unwrap_err();
    assert_eq!(same.encodings(), 2);
    let only_alt = batch.into_encoding(1).unwrap();
    assert_eq!(events_of(&only_alt), ["A", "", "C\nD"]);
}

#[test]
fn holds_stay_with_the_encoding_taken() {
    let mut b = BatchBuilder::new(policy(10, 1 << 20));
    push(&mut b, "a", false);
    let mut batch = b.take().unwrap();
    batch.hold(HoldKind::Events, 7u32);
    let alt = batch.into_encoding(1).unwrap();
    assert_eq!(alt.hold_count(HoldKind::Events), 1);
}

#[test]
fn the_event_that_crosses_the_byte_limit_moves_in_every_encoding() {
    let mut b = BatchBuilder::new(policy(100, 10));
    assert!(push(&mut b, "aaaa", false).is_none());
    assert!(push(&mut b, "bbbb", true).is_none());
    let closed = push(&mut b, "cccc", false).expect("crossed the limit");
    assert_eq!(events_of(&closed), ["aaaa", "bbbb"]);
    assert_eq!(events_of(&closed.into_encoding(1).unwrap()), ["AAAA", ""]);
    let rest = b.take().unwrap();
    assert_eq!(events_of(&rest), ["cccc"]);
    assert_eq!(events_of(&rest.into_encoding(1).unwrap()), ["CCCC"]);
}

#[test]
fn an_extra_body_over_the_byte_limit_closes_the_batch() {
    let mut b = BatchBuilder::new(policy(100, 8));
    // Main "ab" is small; its extra encoding is long.
    let full = b.push_encoded(
        Instant::now(),
        None,
        1,
        |out| out.extend_from_slice(b"ab"),
        |_, _, out| out.extend_from_slice(b"0123456789"),
    );
    let full = full.expect("the extra body filled the batch");
    assert_eq!(full.events(), 1);
}

#[test]
fn a_change_of_encodings_closes_the_open_batch() {
    let mut b = BatchBuilder::new(policy(100, 1 << 20));
    assert!(b.push_with(Instant::now(), |o| o.push(b'x')).is_none());
    let closed = push(&mut b, "y", false).expect("closed at the change");
    assert_eq!(closed.encodings(), 1);
    assert_eq!(events_of(&closed), ["x"]);
    let open = b.take().unwrap();
    assert_eq!(open.encodings(), 2);
}

#[test]
fn chunks_merge_every_encoding_and_never_mix_them() {
    let chunk = |main: &str| {
        let mut c = BatchBuilder::new(policy(100, 1 << 20));
        push(&mut c, main, false);
        c.take().unwrap()
    };
    let mut b = BatchBuilder::new(policy(100, 1 << 20));
    assert!(b.push_chunk(Instant::now(), chunk("a")).is_none());
    assert!(b.push_chunk(Instant::now(), chunk("b")).is_none());
    // A chunk without the extra encoding closes the open batch rather than join it.
    let plain = EncodedBatch::from_lines(Bytes::from_static(b"p")).unwrap();
    let closed = b.push_chunk(Instant::now(), plain).expect("closed");
    assert_eq!(events_of(&closed), ["a", "b"]);
    assert_eq!(events_of(&closed.into_encoding(1).unwrap()), ["A", "B"]);
    let open = b.take().unwrap();
    assert_eq!(open.encodings(), 1);
    assert_eq!(events_of(&open), ["p"]);
}
