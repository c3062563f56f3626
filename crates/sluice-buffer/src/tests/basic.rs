use std::time::{Duration, SystemTime};

use crate::*;

pub(crate) fn cfg(dir: &std::path::Path) -> BufferConfig {
    BufferConfig {
        flush_interval: Duration::from_millis(20),
        ..BufferConfig::new(dir)
    }
}

pub(crate) fn rec(payload: &[u8]) -> RecordRef<'_> {
    RecordRef::new(payload, 1, SystemTime::now())
}

#[test]
fn write_read_ack_reopen() {
    let d = tempfile::tempdir().unwrap();
    let b = Buffer::open(cfg(d.path()), &["a"]).unwrap();
    let w = b.writer();
    for i in 0..10u32 {
        w.append(rec(format!("r{i}").as_bytes())).unwrap();
    }
    let mut r = b.reader("a").unwrap();
    let mut got = Vec::new();
    while let Some(x) = r.next_blocking(Duration::from_secs(5)) {
        got.push(x.clone());
        if got.len() == 10 {
            break;
        }
    }
    assert_eq!(got.len(), 10);
    for (i, x) in got.iter().enumerate() {
        assert_eq!(x.payload().as_ref(), format!("r{i}").as_bytes());
    }
    for x in &got[..4] {
        assert!(r.ack(x.id()));
    }
    drop(r);
    b.close().unwrap();
    let b = Buffer::open(cfg(d.path()), &["a"]).unwrap();
    assert_eq!(b.recovery().replayed_records, 6);
    let mut r = b.reader("a").unwrap();
    let first = r.next_blocking(Duration::from_secs(5)).unwrap();
    assert_eq!(first.payload().as_ref(), b"r4");
}

#[test]
fn async_reader_durable_and_space_waits() {
    let d = tempfile::tempdir().unwrap();
    let c = BufferConfig {
        mode: DurabilityMode::Reliable,
        max_bytes: 64 << 10,
        segment_bytes: 4096,
        ..cfg(d.path())
    };
    let tally = std::sync::Arc::new(Tally::default());
    let b = Buffer::open_observed(c, &["a"], tally.clone()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let w = b.writer();
    let mut r = b.reader("a").unwrap();
    let full = rt.block_on(async move {
        let consumer = tokio::spawn(async move {
            // Start late, so the producer meets the limit.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let mut n = 0u32;
            while n < 300 {
                let rec = r.next().await.expect("open");
                assert_eq!(rec.payload().as_ref(), n.to_le_bytes().repeat(100));
                assert!(r.ack(rec.id()));
                n += 1;
            }
        });
        let mut full = 0;
        let mut appended = Vec::new();
        for n in 0u32..300 {
            let p = n.to_le_bytes().repeat(100);
            loop {
                match w.append(rec(&p)) {
                    Ok(a) => {
                        appended.push(a);
                        break;
                    }
                    Err(e) if e.is_full() => {
                        full += 1;
                        w.wait_for_space(p.len() as u64).await;
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
        for (n, a) in appended.into_iter().enumerate() {
            // Reliable: safe only once durable.
            assert_eq!(a.durable().await.unwrap().0, n as u64);
        }
        consumer.await.unwrap();
        // 300 × 440 B through 64 KiB: the limit was met and waited out.
        assert!(full > 0);
        full
    });
    let s = b.stats();
    assert_eq!((s.records, s.events), (0, 0));
    assert!(Tally::get(&tally.flushes) > 0 && Tally::get(&tally.commits) > 0);
    assert_eq!(Tally::get(&tally.flushed_records), 300);
    assert_eq!(Tally::get(&tally.appended_records), 300);
    let refused: u64 = FullReason::ALL.iter().map(|r| tally.refused(*r)).sum();
    assert_eq!(refused, full, "every refusal reported once");
}

#[test]
fn stats_track_buffered_events_and_oldest_age() {
    let d = tempfile::tempdir().unwrap();
    let b = Buffer::open(cfg(d.path()), &["a", "b"]).unwrap();
    let w = b.writer();
    let old = SystemTime::now() - Duration::from_secs(60);
    let a = w.append(RecordRef::new(b"x", 5, old)).unwrap();
    w.append(RecordRef::new(b"y", 7, SystemTime::now()))
        .unwrap();
    a.wait_durable(Some(Duration::from_secs(5))).unwrap();
    let s = b.stats();
    assert_eq!((s.records, s.events), (2, 12));
    assert!(s.oldest_event_age.unwrap() >= Duration::from_secs(59));
    // Finished by one reader only: still buffered.
    let mut ra = b.reader("a").unwrap();
    let first = ra.next_blocking(Duration::from_secs(5)).unwrap();
    ra.ack(first.id());
    assert_eq!(b.stats().events, 12);
    let mut rb = b.reader("b").unwrap();
    let first = rb.next_blocking(Duration::from_secs(5)).unwrap();
    rb.ack(first.id());
    let s = b.stats();
    assert_eq!((s.records, s.events), (1, 7));
    assert!(s.oldest_event_age.unwrap() < Duration::from_secs(59));
    assert_eq!(s.readers[0].resume_from, 1);
}

#[test]
fn readers_are_independent_and_retired_readers_are_removed() {
    let d = tempfile::tempdir().unwrap();
    {
        let b = Buffer::open(cfg(d.path()), &["a", "b"]).unwrap();
        let w = b.writer();
        for i in 0..5u8 {
            w.append(rec(&[i])).unwrap();
        }
        let mut ra = b.reader("a").unwrap();
        for _ in 0..5 {
            let x = ra.next_blocking(Duration::from_secs(5)).unwrap();
            ra.ack(x.id());
        }
        assert!(b.reader("a").is_none(), "taken twice");
        assert!(b.reader("zzz").is_none());
    }
    // "b" is gone from the configuration, "c" is new: c starts at the oldest record that
    // a has not finished (none left), b's position is removed with a warning.
    let b = Buffer::open(cfg(d.path()), &["a", "c"]).unwrap();
    let found = b.recovery();
    assert_eq!(found.retired_readers.len(), 1);
    assert_eq!(found.retired_readers[0].name, "b");
    assert_eq!(found.retired_readers[0].unfinished_records, 5);
    assert!(!d.path().join("reader-b.pos").exists());
    let mut rc = b.reader("c").unwrap();
    assert!(rc.next_blocking(Duration::from_millis(100)).is_none());
    b.writer().append(rec(b"new")).unwrap();
    assert_eq!(
        rc.next_blocking(Duration::from_secs(5))
            .unwrap()
            .payload()
            .as_ref(),
        b"new"
    );
}

#[test]
fn shared_payloads_are_written_from_the_callers_buffer() {
    let d = tempfile::tempdir().unwrap();
    let b = Buffer::open(cfg(d.path()), &["a"]).unwrap();
    let w = b.writer();
    let events = bytes::Bytes::from_static(b"one\ntwo\nthree");
    w.append(RecordRef::shared(&events, 3, SystemTime::now()).with_offsets(&[0, 4, 8]))
        .unwrap();
    // `shared` naming other bytes than `payload`: the checksums cover `payload`, which is
    // what gets written.
    let other = bytes::Bytes::from_static(b"not these");
    let mut r = RecordRef::new(b"these", 1, SystemTime::now());
    r.shared = Some(&other);
    w.append(r).unwrap();
    let mut rd = b.reader("a").unwrap();
    let first = rd.next_blocking(Duration::from_secs(5)).unwrap();
    assert_eq!(first.payload().as_ref(), b"one\ntwo\nthree");
    assert_eq!(first.offsets(), Some(&[0, 4, 8][..]));
    let second = rd.next_blocking(Duration::from_secs(5)).unwrap();
    assert_eq!(second.payload().as_ref(), b"these");
}
