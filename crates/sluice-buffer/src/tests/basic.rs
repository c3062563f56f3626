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
