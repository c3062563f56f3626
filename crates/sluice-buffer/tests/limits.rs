//! Limits: `max_bytes` and a full filesystem give backpressure (never loss) and the buffer
//! recovers by itself; a directory it cannot use is an error naming the path.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use sluice_buffer::{
    AppendError, Buffer, BufferConfig, DurabilityMode, FullReason, OpenError, RecordRef, Tally,
};

fn payload(n: u64, len: usize) -> Vec<u8> {
    let mut p = n.to_le_bytes().to_vec();
    p.resize(len, (n % 251) as u8);
    p
}

fn seq(p: &[u8]) -> u64 {
    u64::from_le_bytes(p[..8].try_into().unwrap())
}

/// Appends `total` records of `len` bytes while a reader thread reads and acknowledges;
/// every refusal must be `Full` with one of the `allowed` reasons, and the writer waits for
/// space and retries the same record. Returns the refusals by reason. Checks that every
/// record arrives exactly once, in order.
fn run_through(
    b: &Buffer,
    total: u64,
    len: usize,
    allowed: &[FullReason],
    reader_delay: Duration,
) -> HashMap<FullReason, u64> {
    let w = b.writer();
    let mut r = b.reader("r").unwrap();
    // The reader waits until the writer has been refused once (or 5 s), so the limit under
    // test is reached whatever the timing: with a fixed head start, a busy machine let the
    // reader keep up and the limit was never hit.
    let refused_once = Arc::new(AtomicBool::new(false));
    let started = Arc::clone(&refused_once);
    let reader = std::thread::spawn(move || {
        let head_start = Instant::now() + Duration::from_secs(5);
        while !started.load(Ordering::Acquire) && Instant::now() < head_start {
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut got = Vec::new();
        while (got.len() as u64) < total {
            let Some(rec) = r.next_blocking(Duration::from_secs(30)) else {
                panic!("reader starved after {} records", got.len());
            };
            got.push(seq(rec.payload()));
            std::thread::sleep(reader_delay);
            assert!(r.ack(rec.id()));
        }
        got
    });
    let mut refused = HashMap::new();
    for n in 0..total {
        let p = payload(n, len);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match w.append(RecordRef::new(&p, 1, SystemTime::now())) {
                Ok(_) => break,
                Err(AppendError::Full { reason }) => {
                    assert!(allowed.contains(&reason), "record {n}: {reason}");
                    if reason != FullReason::Backlog {
                        refused_once.store(true, Ordering::Release);
                    }
                    *refused.entry(reason).or_insert(0) += 1;
                    assert!(
                        Instant::now() < deadline,
                        "no space came back for record {n}: {:#?}",
                        b.stats()
                    );
                    w.wait_for_space_blocking(len as u64, Duration::from_secs(1));
                }
                Err(e) => panic!("record {n}: {e}"),
            }
        }
    }
    let got = reader.join().unwrap();
    assert_eq!(
        got,
        (0..total).collect::<Vec<_>>(),
        "every record once, in order"
    );
    refused
}

#[test]
fn max_bytes_gives_backpressure_and_recovers() {
    let d = tempfile::tempdir().unwrap();
    let cfg = BufferConfig {
        max_bytes: 256 << 10,
        segment_bytes: 16 << 10,
        flush_interval: Duration::from_millis(10),
        ..BufferConfig::new(d.path())
    };
    let tally = Arc::new(Tally::default());
    let b = Buffer::open_observed(cfg, &["r"], tally.clone()).unwrap();
    let refused = run_through(
        &b,
        2000,
        1000,
        &[FullReason::MaxBytes],
        Duration::from_micros(300),
    );
    let refused = refused.get(&FullReason::MaxBytes).copied().unwrap_or(0);
    let s = b.stats();
    assert!(refused > 0, "the slow reader should have filled the buffer");
    assert_eq!(s.full, None, "recovered by itself");
    assert_eq!(tally.refused(FullReason::MaxBytes), refused);
    assert!(s.bytes <= s.max_bytes);
    assert!(Tally::get(&tally.deleted_segments) > 0);
    println!("max_bytes: {refused} appends refused and retried, 0 lost");
}

#[test]
fn a_record_larger_than_the_buffer_is_refused_for_good() {
    let d = tempfile::tempdir().unwrap();
    let cfg = BufferConfig {
        max_bytes: 64 << 10,
        ..BufferConfig::new(d.path())
    };
    let b = Buffer::open(cfg, &["r"]).unwrap();
    let big = vec![0u8; 70 << 10];
    let e = b
        .writer()
        .append(RecordRef::new(&big, 1, SystemTime::now()))
        .unwrap_err();
    assert!(matches!(e, AppendError::TooLarge { .. }), "{e}");
}

/// A 2 MiB tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size: &str, extra: &str) -> Result<(tempfile::TempDir, Tmpfs), String> {
        let d = tempfile::tempdir().map_err(|e| e.to_string())?;
        let opts = format!("size={size}{extra}");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &opts, "tmpfs"])
            .arg(d.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        let p = d.path().to_path_buf();
        Ok((d, Tmpfs(p)))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn full_filesystem_gives_backpressure_and_recovers() {
    let (_guard_dir, fs) = match Tmpfs::mount("2m", "") {
        Ok(m) => m,
        Err(why) => {
            println!(
                "SKIPPED full_filesystem_gives_backpressure_and_recovers: tmpfs mount refused: {why}"
            );
            return;
        }
    };
    for mode in [DurabilityMode::Normal, DurabilityMode::Reliable] {
        let dir = fs.0.join(format!("{mode:?}"));
        let cfg = BufferConfig {
            mode,
            // Far above the filesystem: the disk fills first.
            max_bytes: 1 << 30,
            segment_bytes: 64 << 10,
            flush_interval: Duration::from_millis(10),
            // At most 1 MiB waits in memory, so the disk fills before the queue does.
            flush_bytes: 64 << 10,
            ..BufferConfig::new(&dir)
        };
        let tally = Arc::new(Tally::default());
        let b = Buffer::open_observed(cfg, &["r"], tally.clone()).unwrap();
        // 6 MB through a 2 MB filesystem, with a reader slow enough to let it fill.
        let allowed = [FullReason::DiskFull, FullReason::Backlog];
        let refused = run_through(&b, 3000, 2000, &allowed, Duration::from_micros(100));
        let disk = refused.get(&FullReason::DiskFull).copied().unwrap_or(0);
        let s = b.stats();
        assert!(
            disk > 0,
            "{mode:?}: the filesystem never filled ({refused:?})"
        );
        let write_errors = Tally::get(&tally.write_errors);
        assert!(write_errors > 0);
        assert!(Tally::get(&tally.disk_full_errors) > 0);
        assert_eq!(tally.refused(FullReason::DiskFull), disk);
        assert_eq!(s.full, None, "{mode:?}: recovered by itself");
        assert!(s.last_error.is_none());
        b.close().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        println!("{mode:?}: appends refused {refused:?}, {write_errors} write errors, 0 lost");
    }
}

#[test]
fn directory_that_cannot_be_created_is_named() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let bad = file.join("buffer");
    let e = Buffer::open(BufferConfig::new(&bad), &["r"]).unwrap_err();
    assert!(matches!(e, OpenError::Dir { .. }), "{e:?}");
    assert!(e.to_string().contains(&bad.display().to_string()), "{e}");
}

#[test]
fn read_only_filesystem_is_an_error_naming_the_directory() {
    let (_guard_dir, fs) = match Tmpfs::mount("1m", ",ro") {
        Ok(m) => m,
        Err(why) => {
            println!(
                "SKIPPED read_only_filesystem_is_an_error_naming_the_directory: mount refused: {why}"
            );
            return;
        }
    };
    let e = Buffer::open(BufferConfig::new(&fs.0), &["r"]).unwrap_err();
    assert!(e.to_string().contains(&fs.0.display().to_string()), "{e}");
    assert!(e.to_string().to_lowercase().contains("read-only"), "{e}");
}

#[test]
fn same_directory_twice_in_one_process_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let _a = Buffer::open(BufferConfig::new(d.path()), &["r"]).unwrap();
    let e = Buffer::open(BufferConfig::new(d.path()), &["r"]).unwrap_err();
    assert!(
        matches!(e, OpenError::Locked { pid: Some(p), .. } if p == std::process::id()),
        "{e}"
    );
}

#[test]
fn config_errors_name_the_setting_and_reader_names_are_checked() {
    let d = tempfile::tempdir().unwrap();
    let cfg = BufferConfig {
        segment_bytes: 10,
        ..BufferConfig::new(d.path())
    };
    let e = Buffer::open(cfg, &["r"]).unwrap_err();
    assert!(e.to_string().contains("segment_bytes"), "{e}");
    for bad in [&["a/b"][..], &["x", "x"], &[]] {
        assert!(
            Buffer::open(BufferConfig::new(d.path()), bad).is_err(),
            "{bad:?}"
        );
    }
}
