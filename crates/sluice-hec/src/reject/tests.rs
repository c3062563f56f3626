#![allow(clippy::single_range_in_vec_init)] // ranges of event indexes, compared as slices
use super::*;
use bytes::Bytes;
use proptest::prelude::*;
use std::collections::BTreeSet;

#[test]
fn answer_fields_are_read_and_garbage_gives_nothing() {
    let a = HecAnswer::parse(br#"{"text":"Incorrect index","code":7,"invalid-event-number":3}"#);
    assert_eq!(a.code, Some(7));
    assert_eq!(a.invalid_event, Some(3));
    assert_eq!(a.text.as_deref(), Some("Incorrect index"));
    assert_eq!(
        HecAnswer::parse(br#"{"text":"Success","code":0,"ackId":12}"#).ack_id,
        Some(12)
    );
    assert_eq!(HecAnswer::parse(b"<html>"), HecAnswer::default());
    assert_eq!(
        HecAnswer::parse(br#"{"invalid-event-number":-1}"#).invalid_event,
        None
    );
}

#[test]
fn request_level_codes_are_not_isolated() {
    for c in [10, 11, 14, 16] {
        assert_eq!(BadRequestKind::of(Some(c)), BadRequestKind::Request);
    }
    for c in [
        Some(5),
        Some(6),
        Some(7),
        Some(12),
        Some(13),
        Some(15),
        None,
    ] {
        assert_eq!(BadRequestKind::of(c), BadRequestKind::Data);
    }
}

#[test]
fn pieces_split_and_map_indexes() {
    let p = Piece::from_ranges([0..3, 5..9], &Piece::range(0..0));
    assert_eq!(p.len(), 7);
    assert_eq!(p.global(0), Some(0));
    assert_eq!(p.global(3), Some(5));
    assert_eq!(p.global(6), Some(8));
    assert_eq!(p.global(7), None);
    let (a, b) = p.halves();
    assert_eq!(a.ranges(), &[0..3]);
    assert_eq!(b.ranges(), &[5..9]);
    let (before, after) = p.around(6);
    assert_eq!(before.ranges(), &[0..3, 5..6]);
    assert_eq!(after.ranges(), &[7..9]);
}

#[test]
fn piece_body_cuts_events_out_of_the_batch() {
    let body = Bytes::from_static(b"e0\ne1\ne22\ne3\ne4");
    let starts = event_starts(&body);
    assert_eq!(starts, [0, 3, 6, 10, 13]);
    assert_eq!(&Piece::range(0..5).body(&body, &starts)[..], &body[..]);
    assert_eq!(&Piece::range(2..3).body(&body, &starts)[..], b"e22");
    assert_eq!(&Piece::range(4..5).body(&body, &starts)[..], b"e4");
    assert_eq!(
        &Piece::from_ranges([0..2, 3..5], &Piece::range(0..0)).body(&body, &starts)[..],
        b"e0\ne1\ne3\ne4"
    );
    assert!(event_starts(b"").is_empty());
}

#[test]
fn a_named_bad_event_is_refused_and_the_rest_resent_once() {
    let mut iso = Isolation::new(10, ResendPolicy::All);
    let p = iso.next_piece().unwrap();
    iso.answer(
        p,
        PieceAnswer::BadData {
            code: Some(7),
            text: "Incorrect index".into(),
            invalid_event: Some(4),
        },
    );
    let rest = iso.next_piece().unwrap();
    assert_eq!(rest.ranges(), &[0..4, 5..10]);
    iso.answer(rest, PieceAnswer::Accepted);
    assert!(iso.is_done());
    assert_eq!(iso.resent_events(), 9);
    assert_eq!(iso.requests(), 2);
    let refused = iso.into_refused();
    assert_eq!(refused.len(), 1);
    assert_eq!((refused[0].index, refused[0].code), (4, Some(7)));
}

#[test]
fn after_invalid_policy_trusts_the_events_before() {
    let mut iso = Isolation::new(10, ResendPolicy::AfterInvalid);
    let p = iso.next_piece().unwrap();
    iso.answer(
        p,
        PieceAnswer::BadData {
            code: Some(6),
            text: "Invalid data format".into(),
            invalid_event: Some(4),
        },
    );
    let rest = iso.next_piece().unwrap();
    assert_eq!(rest.ranges(), &[5..10]);
    assert_eq!(iso.resent_events(), 5);
    assert_eq!(iso.accepted()[0].ranges(), &[0..4]);
}

#[test]
fn without_the_number_it_bisects_down_to_the_bad_event() {
    let mut iso = Isolation::new(8, ResendPolicy::All);
    let bad = 5u32;
    let mut sent = 0;
    while let Some(p) = iso.next_piece() {
        sent += 1;
        let answer = if p.indexes().any(|i| i == bad) {
            PieceAnswer::BadData {
                code: Some(6),
                text: "x".into(),
                invalid_event: None,
            }
        } else {
            PieceAnswer::Accepted
        };
        iso.answer(p, answer);
    }
    // 8 → 4+4 → (4 ok) 2+2 → (2 ok) 1+1: 7 requests.
    assert_eq!(sent, 7);
    let refused: Vec<u32> = iso.refused().iter().map(|r| r.index).collect();
    assert_eq!(refused, [5]);
}

#[test]
fn too_large_splits_and_refuses_a_single_event() {
    let mut iso = Isolation::new(3, ResendPolicy::All);
    while let Some(p) = iso.next_piece() {
        let answer = if p.len() > 1 || p.global(0) == Some(2) {
            PieceAnswer::TooLarge { text: "big".into() }
        } else {
            PieceAnswer::Accepted
        };
        iso.answer(p, answer);
    }
    let r = iso.refused();
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].index, r[0].status), (2, 413));
}

#[test]
fn latency_split_is_bounded_by_depth() {
    let mut iso = Isolation::new(16, ResendPolicy::All);
    let p = iso.next_piece().unwrap();
    assert!(iso.split_for_latency(p, 1).is_ok());
    let first = iso.next_piece().unwrap();
    assert_eq!(first.ranges(), &[0..8]);
    assert!(iso.split_for_latency(first, 1).is_err());
}

/// A HEC stand-in: refuses a request holding any bad event, naming the first one when
/// `names` is set; with `indexes_before` it indexed the events before that one.
fn simulate(
    n: u32,
    bad: &BTreeSet<u32>,
    names: bool,
    policy: ResendPolicy,
    indexes_before: bool,
) -> (Vec<u32>, Vec<u32>, u64) {
    let mut iso = Isolation::new(n, policy);
    let mut indexed = Vec::new();
    let mut requests = 0u64;
    while let Some(p) = iso.next_piece() {
        requests += 1;
        let first_bad = p.indexes().position(|i| bad.contains(&i));
        match first_bad {
            None => {
                indexed.extend(p.indexes());
                iso.answer(p, PieceAnswer::Accepted);
            }
            Some(local) => {
                if indexes_before {
                    indexed.extend(p.indexes().take(local));
                }
                iso.answer(
                    p,
                    PieceAnswer::BadData {
                        code: Some(6),
                        text: "Invalid data format".into(),
                        invalid_event: names.then_some(local as u64),
                    },
                );
            }
        }
        assert!(requests <= 4 * u64::from(n) + 4, "the plan does not end");
    }
    let refused = iso.refused().iter().map(|r| r.index).collect();
    (indexed, refused, requests)
}

proptest! {
    #[test]
    fn every_good_event_is_indexed_and_exactly_the_bad_ones_refused(
        n in 1u32..300,
        bad_raw in proptest::collection::btree_set(0u32..300, 0..12),
        names in any::<bool>(),
    ) {
        let bad: BTreeSet<u32> = bad_raw.into_iter().filter(|&i| i < n).collect();
        let (indexed, refused, requests) = simulate(n, &bad, names, ResendPolicy::All, false);
        let mut refused_sorted = refused.clone();
        refused_sorted.sort_unstable();
        prop_assert_eq!(refused_sorted, bad.iter().copied().collect::<Vec<_>>());
        // Without indexing before N, nothing is indexed twice and every good one once.
        let mut seen = indexed.clone();
        seen.sort_unstable();
        let good: Vec<u32> = (0..n).filter(|i| !bad.contains(i)).collect();
        let any_good = !good.is_empty();
        prop_assert_eq!(seen, good);
        if names {
            // One request per bad event, plus the final accepted one when a good event is
            // left to send (when every event is bad, the last refusal ends the plan).
            prop_assert_eq!(requests, bad.len() as u64 + u64::from(any_good));
        }
    }

    #[test]
    fn resending_before_n_never_loses_and_after_invalid_never_duplicates(
        n in 1u32..200,
        bad_raw in proptest::collection::btree_set(0u32..200, 1..6),
    ) {
        let bad: BTreeSet<u32> = bad_raw.into_iter().filter(|&i| i < n).collect();
        let good: BTreeSet<u32> = (0..n).filter(|i| !bad.contains(i)).collect();
        // HEC indexed the events before N: All duplicates some but loses none.
        let (indexed, _, _) = simulate(n, &bad, true, ResendPolicy::All, true);
        let got: BTreeSet<u32> = indexed.iter().copied().collect();
        prop_assert_eq!(&got, &good);
        // AfterInvalid against the same HEC: no duplicates, nothing lost.
        let (indexed, _, _) = simulate(n, &bad, true, ResendPolicy::AfterInvalid, true);
        let got: BTreeSet<u32> = indexed.iter().copied().collect();
        prop_assert_eq!(indexed.len(), got.len());
        prop_assert_eq!(&got, &good);
    }

    #[test]
    fn halves_partition_the_piece(
        ranges in proptest::collection::vec((0u32..50, 1u32..20), 1..6),
    ) {
        let mut start = 0;
        let mut rs = Vec::new();
        for (gap, len) in ranges {
            start += gap;
            rs.push(start..start + len);
            start += len;
        }
        let p = Piece::from_ranges(rs, &Piece::range(0..0));
        let (a, b) = p.halves();
        let all: Vec<u32> = a.indexes().chain(b.indexes()).collect();
        prop_assert_eq!(all, p.indexes().collect::<Vec<_>>());
        prop_assert!(a.len() <= b.len() && b.len() <= a.len() + 1);
    }
}

fn bad_index(n: Option<u64>) -> PieceAnswer {
    PieceAnswer::BadData {
        code: Some(FALLBACK_CODE),
        text: "Incorrect index".into(),
        invalid_event: n,
    }
}

#[test]
fn events_taken_for_the_fallback_go_once_as_one_piece_after_the_rest() {
    let mut iso = Isolation::new(10, ResendPolicy::All);
    let p = iso.next_piece().unwrap();
    iso.answer(p, bad_index(Some(2)));
    assert!(iso.fall_back(2));
    assert!(!iso.fall_back(2), "no longer refused");
    let p = iso.next_piece().unwrap();
    assert!(!p.is_fallback());
    // Event 6 of the batch is the 5th of the resent piece.
    iso.answer(p, bad_index(Some(5)));
    assert!(iso.fall_back(6));
    let p = iso.next_piece().unwrap();
    assert_eq!(p.indexes().collect::<Vec<_>>(), [0, 1, 3, 4, 5, 7, 8, 9]);
    assert!(!iso.is_done(), "the fallback piece is still to send");
    iso.answer(p, PieceAnswer::Accepted);
    let f = iso.next_piece().unwrap();
    assert!(f.is_fallback());
    assert_eq!(f.ranges(), &[2..3, 6..7]);
    assert!(iso.next_piece().is_none());
    iso.answer(f, PieceAnswer::Accepted);
    assert!(iso.is_done());
    assert!(iso.refused().is_empty());
}

#[test]
fn a_fallback_piece_refused_for_its_index_is_refused_whole_and_never_again() {
    let mut iso = Isolation::new(4, ResendPolicy::All);
    let p = iso.next_piece().unwrap();
    iso.answer(p, bad_index(Some(1)));
    iso.fall_back(1);
    let p = iso.next_piece().unwrap();
    iso.answer(p, bad_index(Some(2))); // event 3
    iso.fall_back(3);
    let p = iso.next_piece().unwrap();
    iso.answer(p, PieceAnswer::Accepted);
    let f = iso.next_piece().unwrap();
    assert_eq!(f.indexes().collect::<Vec<_>>(), [1, 3]);
    iso.answer(f, bad_index(Some(0)));
    assert!(iso.next_piece().is_none(), "no loop");
    assert!(iso.is_done());
    let refused: Vec<u32> = iso.refused().iter().map(|r| r.index).collect();
    assert_eq!(refused, [1, 3]);
}

#[test]
fn a_fallback_piece_keeps_its_kind_through_bisection_and_other_refusals() {
    let mut iso = Isolation::new(4, ResendPolicy::All);
    let p = iso.next_piece().unwrap();
    iso.answer(p, bad_index(None)); // bisect
    // 0..2 halved, then 0..1 and 1..2 refused one by one.
    for _ in 0..3 {
        let p = iso.next_piece().unwrap();
        iso.answer(p, bad_index(None));
    }
    // Events 0 and 1 refused one by one; take both for the fallback.
    assert!(iso.fall_back(0) && iso.fall_back(1));
    let p = iso.next_piece().unwrap();
    assert_eq!(p.ranges(), &[2..4]);
    iso.answer(p, PieceAnswer::Accepted);
    let f = iso.next_piece().unwrap();
    assert!(f.is_fallback());
    // Refused about something else (not the index): isolated as usual, still fallback.
    iso.answer(
        f,
        PieceAnswer::BadData {
            code: Some(6),
            text: "Invalid data format".into(),
            invalid_event: None,
        },
    );
    let a = iso.next_piece().unwrap();
    assert!(a.is_fallback());
    assert_eq!(a.ranges(), &[0..1]);
    iso.answer(a, PieceAnswer::Accepted);
    let b = iso.next_piece().unwrap();
    assert!(b.is_fallback());
    assert_eq!(b.ranges(), &[1..2]);
    iso.answer(b, PieceAnswer::Accepted);
    assert!(iso.is_done() && iso.refused().is_empty());
}
