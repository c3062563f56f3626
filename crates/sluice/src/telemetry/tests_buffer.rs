//! One test per event of the disk buffer ([`super::events::buffer`]), and the observer that
//! turns what the buffer reports into them.

use std::path::Path;
use std::time::Duration;

use sluice_buffer::{BufferEvent, BufferObserver, FullReason};

use super::events::*;
use super::tests::{logged, sample};
use super::{InternalEvent, Metrics};

const D: &str = "destination=\"default\"";

#[test]
fn registering_creates_every_series_at_zero() {
    let m = Metrics::new();
    let _h = DiskBufferEvents::register(&m, "default");
    for name in [
        "sluice_buffer_appended_events_total",
        "sluice_buffer_appended_bytes_total",
        "sluice_buffer_corrupt_records_total",
        "sluice_buffer_corrupt_events_total",
        "sluice_buffer_write_errors_total",
        "sluice_buffer_write_seconds_count",
        "sluice_buffer_fsync_seconds_count",
        "sluice_buffer_commit_seconds_count",
    ] {
        assert_eq!(sample(&m, name, &[D]), 0.0, "{name}");
    }
    for r in FullReason::ALL {
        let reason = format!("reason=\"{}\"", r.as_str());
        assert_eq!(sample(&m, "sluice_buffer_full_total", &[D, &reason]), 0.0);
    }
}

#[test]
fn appended_counts_events_and_bytes() {
    let m = Metrics::new();
    let h = DiskBufferEvents::register(&m, "default");
    let log = logged(|| {
        BufferAppended {
            events: 7,
            bytes: 1040,
        }
        .emit(&h);
        BufferAppended {
            events: 3,
            bytes: 100,
        }
        .emit(&h);
    });
    assert_eq!(
        sample(&m, "sluice_buffer_appended_events_total", &[D]),
        10.0
    );
    assert_eq!(
        sample(&m, "sluice_buffer_appended_bytes_total", &[D]),
        1140.0
    );
    assert_eq!(h.appended_events(), 10);
    assert!(
        log.contains("appended to the disk buffer") && log.contains("bytes=1040"),
        "{log}"
    );
}

#[test]
fn refused_counts_by_reason_and_logs_rate_limited() {
    let m = Metrics::new();
    let h = DiskBufferEvents::register(&m, "default");
    let log = logged(|| {
        for _ in 0..3 {
            BufferRefused {
                reason: FullReason::MaxBytes,
            }
            .emit(&h);
        }
        BufferRefused {
            reason: FullReason::DiskFull,
        }
        .emit(&h);
    });
    assert_eq!(
        sample(&m, "sluice_buffer_full_total", &[D, "reason=\"max_bytes\""]),
        3.0
    );
    assert_eq!(
        sample(&m, "sluice_buffer_full_total", &[D, "reason=\"disk_full\""]),
        1.0
    );
    assert_eq!(h.refused(FullReason::Backlog), 0);
    // One line per interval, whatever the reason: the rest are counted as suppressed.
    assert_eq!(
        log.matches("disk buffer refused an append").count(),
        1,
        "{log}"
    );
    assert!(log.contains("reason=\"max_bytes\""), "{log}");
}

#[test]
fn flushed_records_write_fsync_and_commit_latency() {
    let m = Metrics::new();
    let h = DiskBufferEvents::register(&m, "default");
    let log = logged(|| {
        BufferFlushed {
            records: 4,
            write: Duration::from_micros(200),
            fsync: Duration::from_millis(3),
            commit: Some(Duration::from_millis(12)),
        }
        .emit(&h);
        // Maintenance-only rounds have no commit.
        BufferFlushed {
            records: 0,
            write: Duration::from_micros(50),
            fsync: Duration::from_micros(50),
            commit: None,
        }
        .emit(&h);
    });
    assert_eq!(sample(&m, "sluice_buffer_write_seconds_count", &[D]), 2.0);
    assert_eq!(sample(&m, "sluice_buffer_fsync_seconds_count", &[D]), 2.0);
    assert_eq!(sample(&m, "sluice_buffer_commit_seconds_count", &[D]), 1.0);
    let sum = sample(&m, "sluice_buffer_fsync_seconds_sum", &[D]);
    assert!((sum - 0.00305).abs() < 1e-9, "{sum}");
    // 3 ms falls in the 5 ms bucket, not the 2.5 ms one.
    assert_eq!(
        sample(
            &m,
            "sluice_buffer_fsync_seconds_bucket",
            &[D, "le=\"0.0025\""]
        ),
        1.0
    );
    assert_eq!(
        sample(
            &m,
            "sluice_buffer_fsync_seconds_bucket",
            &[D, "le=\"0.005\""]
        ),
        2.0
    );
    assert!(
        log.contains("disk buffer flushed") && log.contains("records=4"),
        "{log}"
    );
}

#[test]
fn write_failed_counts_every_error_and_logs_rate_limited() {
    let m = Metrics::new();
    let h = DiskBufferEvents::register(&m, "default");
    let log = logged(|| {
        for _ in 0..2 {
            BufferWriteFailed {
                file: Path::new("/var/lib/sluice/buffer/seg-1.dat"),
                disk_full: true,
            }
            .emit(&h);
        }
    });
    assert_eq!(sample(&m, "sluice_buffer_write_errors_total", &[D]), 2.0);
    assert_eq!(log.matches("disk buffer write failed").count(), 1, "{log}");
    assert!(
        log.contains("seg-1.dat") && log.contains("disk_full=true"),
        "{log}"
    );
}

#[test]
fn segment_deleted_logs_and_counts_nothing() {
    let m = Metrics::new();
    let h = DiskBufferEvents::register(&m, "default");
    let before = m.render();
    let log = logged(|| BufferSegmentDeleted.emit(&h));
    assert_eq!(m.render(), before);
    assert!(log.contains("segment finished and deleted"), "{log}");
}

#[test]
fn corrupted_counts_the_records_and_events_lost() {
    let m = Metrics::new();
    let h = DiskBufferEvents::register(&m, "default");
    let log = logged(|| {
        BufferCorrupted {
            records: 3,
            events: 0,
        }
        .emit(&h);
        BufferCorrupted {
            records: 1,
            events: 7,
        }
        .emit(&h);
        BufferCorrupted {
            records: 0,
            events: 2,
        }
        .emit(&h);
    });
    assert_eq!(sample(&m, "sluice_buffer_corrupt_records_total", &[D]), 4.0);
    assert_eq!(sample(&m, "sluice_buffer_corrupt_events_total", &[D]), 9.0);
    assert!(
        log.contains("lost to damage") && log.contains("records=3"),
        "{log}"
    );
}

/// The observer maps every buffer event to its internal event, per destination.
#[test]
fn the_observer_turns_each_buffer_event_into_its_internal_event() {
    let m = Metrics::new();
    let a = DiskBufferEvents::register(&m, "default");
    let b = DiskBufferEvents::register(&m, "other");
    a.observe(BufferEvent::Appended {
        events: 5,
        bytes: 500,
    });
    a.observe(BufferEvent::Refused {
        reason: FullReason::Backlog,
    });
    a.observe(BufferEvent::Flushed {
        records: 1,
        write: Duration::from_micros(10),
        fsync: Duration::from_micros(10),
        commit: Some(Duration::from_micros(30)),
    });
    a.observe(BufferEvent::WriteFailed {
        file: Path::new("x"),
        disk_full: false,
    });
    a.observe(BufferEvent::SegmentDeleted);
    b.observe(BufferEvent::Corrupt {
        records: 2,
        events: 3,
    });
    assert_eq!(sample(&m, "sluice_buffer_appended_events_total", &[D]), 5.0);
    assert_eq!(
        sample(&m, "sluice_buffer_full_total", &[D, "reason=\"backlog\""]),
        1.0
    );
    assert_eq!(sample(&m, "sluice_buffer_commit_seconds_count", &[D]), 1.0);
    assert_eq!(sample(&m, "sluice_buffer_write_errors_total", &[D]), 1.0);
    assert_eq!(sample(&m, "sluice_buffer_corrupt_records_total", &[D]), 0.0);
    assert_eq!(
        sample(
            &m,
            "sluice_buffer_corrupt_records_total",
            &["destination=\"other\""]
        ),
        2.0
    );
    assert_eq!(
        sample(
            &m,
            "sluice_buffer_corrupt_events_total",
            &["destination=\"other\""]
        ),
        3.0
    );
}

/// A real buffer opened with the daemon's observer: what it does reaches `/metrics`.
#[test]
fn a_buffer_opened_with_the_observer_counts_through_it() {
    let m = Metrics::new();
    let h = std::sync::Arc::new(DiskBufferEvents::register(&m, "default"));
    let dir = tempfile::tempdir().unwrap();
    let cfg = sluice_buffer::BufferConfig {
        mode: sluice_buffer::DurabilityMode::Reliable,
        ..sluice_buffer::BufferConfig::new(dir.path())
    };
    let b = sluice_buffer::Buffer::open_observed(cfg, &["default"], h).unwrap();
    let a = b
        .writer()
        .append(sluice_buffer::RecordRef::new(
            b"payload",
            2,
            std::time::SystemTime::now(),
        ))
        .unwrap();
    assert!(a.wait_durable(Some(Duration::from_secs(10))).unwrap());
    assert_eq!(sample(&m, "sluice_buffer_appended_events_total", &[D]), 2.0);
    assert!(sample(&m, "sluice_buffer_appended_bytes_total", &[D]) > 7.0);
    assert!(sample(&m, "sluice_buffer_fsync_seconds_count", &[D]) >= 1.0);
    assert!(sample(&m, "sluice_buffer_commit_seconds_count", &[D]) >= 1.0);
    b.close().unwrap();
}
