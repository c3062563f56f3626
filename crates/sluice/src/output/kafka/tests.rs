use super::*;

#[test]
fn refusals_for_good_and_retriable_failures() {
    let e = |c| KafkaError::MessageProduction(c);
    assert_eq!(
        refused_for_good(&e(RDKafkaErrorCode::MessageSizeTooLarge)),
        Some("too_large")
    );
    assert_eq!(
        refused_for_good(&e(RDKafkaErrorCode::TopicAuthorizationFailed)),
        Some("not_authorized")
    );
    assert_eq!(
        refused_for_good(&e(RDKafkaErrorCode::MessageTimedOut)),
        None
    );
    assert_eq!(
        failure_kind(&e(RDKafkaErrorCode::MessageTimedOut)).0,
        "timeout"
    );
    assert_eq!(
        failure_kind(&e(RDKafkaErrorCode::AllBrokersDown)).1,
        RetryReason::Unreachable
    );
}

#[test]
fn dead_letter_lines_are_json_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let dl = DeadLetter::open(&dir.path().join("dl")).unwrap();
    let m = crate::telemetry::Metrics::new();
    let events = ForwardEvents::register(&m, "kafka_t", "kafka");
    dl.record(
        &events,
        "sc4s",
        "too large",
        b"{\"event\":\"x\"}",
        "too_large",
    );
    let text = std::fs::read_to_string(dl.path()).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["topic"], "sc4s");
    assert_eq!(v["reason"], "too_large");
    assert_eq!(v["value"], "{\"event\":\"x\"}");
    assert_eq!(events.refused("too_large"), 1);
}

#[test]
fn a_batch_state_completes_with_its_last_report() {
    let s = BatchState::default();
    s.begin(2);
    s.report(None);
    assert_eq!(s.pending.load(Ordering::Acquire), 1);
    s.report(Some(Failed {
        index: 1,
        error: KafkaError::MessageProduction(RDKafkaErrorCode::MessageTimedOut),
    }));
    assert_eq!(s.pending.load(Ordering::Acquire), 0);
    assert_eq!(s.failed.lock().unwrap().len(), 1);
    // The next attempt in the same slot starts clean.
    s.begin(3);
    assert_eq!(s.pending.load(Ordering::Acquire), 3);
    assert!(s.failed.lock().unwrap().is_empty());
}

#[test]
fn slots_are_taken_once_and_given_back() {
    let slots = Slots::new();
    let held: Vec<SlotGuard> = (0..IN_FLIGHT_BATCHES)
        .map(|_| slots.take().unwrap())
        .collect();
    let mut seen: Vec<usize> = held.iter().map(|g| g.index).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), IN_FLIGHT_BATCHES);
    assert!(slots.take().is_none(), "every slot is taken");
    drop(held);
    assert!(
        slots.take().is_some(),
        "a dropped guard gives its slot back"
    );
}

#[test]
fn a_report_reaches_its_slot_and_index() {
    let slots = Slots::new();
    let g = slots.take().unwrap();
    g.state().begin(1);
    for (slot, index) in [(0, 0), (3, 7), (IN_FLIGHT_BATCHES - 1, u32::MAX)] {
        assert_eq!(unpack(opaque(slot, index)), (slot, index));
    }
    let (state, index) = slots.of(opaque(g.index, 41)).unwrap();
    assert_eq!(index, 41);
    state.report(None);
    assert_eq!(g.state().pending.load(Ordering::Acquire), 0);
    assert!(slots.of(opaque(IN_FLIGHT_BATCHES, 0)).is_none());
}
