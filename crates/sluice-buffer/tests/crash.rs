//! Crash tests with a real `kill -9`.
//!
//! The test re-executes its own binary as a child (`crash_child`, ignored when run
//! directly) that writes to a buffer, reads and acknowledges with a second thread, and
//! reports every step on stdout. The parent kills it at a random moment, reopens the
//! directory and checks what survived:
//! * reliable mode: every record reported durable was either acknowledged by the reader
//!   before the kill or is replayed now;
//! * normal mode: the records lost are exactly the newest ones, appended within one flush
//!   interval (plus the write in flight) of the kill — the window is measured and printed.
//!
//! The same directory is reused across kills, so replays and torn tails accumulate the way
//! they would in production.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sluice_buffer::{Buffer, BufferConfig, DurabilityMode, RecordRef};

const CHILD_DIR: &str = "SLUICE_BUFFER_CRASH_DIR";
const CHILD_MODE: &str = "SLUICE_BUFFER_CRASH_MODE";
const FLUSH_INTERVAL: Duration = Duration::from_millis(100);
const PAYLOAD: usize = 1000;
const WRITERS_RELIABLE: u64 = 4;

fn config(dir: &Path, mode: DurabilityMode) -> BufferConfig {
    BufferConfig {
        mode,
        max_bytes: 2 << 30,
        segment_bytes: 1 << 20,
        flush_interval: FLUSH_INTERVAL,
        // The interval, not the size, decides in normal mode.
        flush_bytes: 256 << 20,
        group_commit_window: Duration::from_millis(2),
        ..BufferConfig::new(dir)
    }
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

/// Payload: the sequence number, then a pattern derived from it (checked on replay).
fn payload(seq: u64) -> Vec<u8> {
    let mut p = seq.to_le_bytes().to_vec();
    p.extend((0..PAYLOAD - 8).map(|i| (seq as usize).wrapping_mul(7).wrapping_add(i) as u8));
    p
}

fn seq_of(p: &[u8]) -> u64 {
    let seq = u64::from_le_bytes(p[..8].try_into().unwrap());
    assert_eq!(p, &payload(seq)[..], "payload of {seq} damaged");
    seq
}

#[test]
#[ignore = "child process of the crash tests; does nothing unless started by them"]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let mode = match std::env::var(CHILD_MODE).as_deref() {
        Ok("reliable") => DurabilityMode::Reliable,
        _ => DurabilityMode::Normal,
    };
    let buffer = Buffer::open(config(Path::new(&dir), mode), &["r"]).unwrap();
    let mut reader = buffer.reader("r").unwrap();
    let writer = buffer.writer();
    println!("@@READY");
    let ack = thread::spawn(move || {
        loop {
            if let Some(rec) = reader.next_blocking(Duration::from_secs(1)) {
                let seq = seq_of(rec.payload());
                // A little delivery latency, so records are in flight when the kill comes.
                thread::sleep(Duration::from_micros(200));
                assert!(reader.ack(rec.id()));
                println!("@@K {seq}");
            }
        }
    });
    let writers: Vec<_> = match mode {
        DurabilityMode::Normal => vec![thread::spawn(move || {
            // One writer, ~10k records/s: the lost records must be the newest ones.
            for seq in 0.. {
                let p = payload(seq);
                writer
                    .append(RecordRef::new(&p, 1, SystemTime::now()))
                    .unwrap();
                println!("@@A {seq} {}", now_us());
                thread::sleep(Duration::from_micros(100));
            }
        })],
        DurabilityMode::Reliable => (0..WRITERS_RELIABLE)
            .map(|t| {
                let w = writer.clone();
                thread::spawn(move || {
                    for n in 0.. {
                        let seq = n * WRITERS_RELIABLE + t;
                        let p = payload(seq);
                        let a = w.append(RecordRef::new(&p, 1, SystemTime::now())).unwrap();
                        assert!(a.wait_durable(None).unwrap());
                        println!("@@D {seq}");
                    }
                })
            })
            .collect(),
    };
    for w in writers {
        w.join().unwrap();
    }
    ack.join().unwrap();
}

/// Kills the child when dropped, so a failing assertion never leaves it running.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_child(dir: &Path, mode: &str) -> Killed {
    let exe = std::env::current_exe().unwrap();
    Killed(
        Command::new(exe)
            .args([
                "--exact",
                "crash_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir)
            .env(CHILD_MODE, mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    )
}

#[derive(Default)]
struct ChildLog {
    appended: BTreeMap<u64, u64>,
    durable: BTreeSet<u64>,
    acked: BTreeSet<u64>,
}

/// Runs one child until a random kill; returns its log and the kill time (µs).
fn run_child(dir: &Path, mode: &str, kill_after: Duration) -> (ChildLog, u64) {
    let mut child = spawn_child(dir, mode);
    let stdout = child.0.stdout.take().unwrap();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let log = Arc::new(std::sync::Mutex::new(ChildLog::default()));
    let log2 = Arc::clone(&log);
    let lines = thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // libtest may print its own text on the same line: take what follows the marker.
            let Some((_, ours)) = line.split_once("@@") else {
                continue;
            };
            let mut parts = ours.split_whitespace();
            let mut l = log2.lock().unwrap();
            match (
                parts.next(),
                parts.next().and_then(|s| s.parse::<u64>().ok()),
            ) {
                (Some("READY"), _) => ready_tx.send(()).unwrap(),
                (Some("A"), Some(seq)) => {
                    let t = parts.next().and_then(|s| s.parse().ok()).unwrap();
                    l.appended.insert(seq, t);
                }
                (Some("D"), Some(seq)) => {
                    l.durable.insert(seq);
                }
                (Some("K"), Some(seq)) => {
                    l.acked.insert(seq);
                }
                _ => {}
            }
        }
    });
    ready_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("child did not start");
    thread::sleep(kill_after);
    let killed_at = now_us();
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    lines.join().unwrap();
    let log = std::mem::take(&mut *log.lock().unwrap());
    (log, killed_at)
}

/// Reopens after a kill, reads everything, acknowledges it and closes. Returns the replayed
/// sequence numbers in read order and the corrupt count found at open.
fn replay(dir: &Path, mode: DurabilityMode) -> (Vec<u64>, u64) {
    let buffer = Buffer::open(config(dir, mode), &["r"]).unwrap();
    let corrupt = buffer.recovery().corrupt_records;
    let mut reader = buffer.reader("r").unwrap();
    let mut seqs = Vec::new();
    while let Some(rec) = reader.try_next() {
        seqs.push(seq_of(rec.payload()));
        reader.ack(rec.id());
    }
    drop(reader);
    let report = buffer.close().unwrap();
    assert_eq!(report.records_kept, 0);
    (seqs, corrupt)
}

fn kill_points(n: usize) -> Vec<Duration> {
    let mut rng = fastrand::Rng::new();
    (0..n)
        .map(|_| Duration::from_millis(rng.u64(250..1500)))
        .collect()
}

#[test]
fn reliable_mode_loses_nothing_reported_durable() {
    let dir = tempfile::tempdir().unwrap();
    let mut total_durable = 0;
    for (i, after) in kill_points(4).into_iter().enumerate() {
        let (log, _) = run_child(dir.path(), "reliable", after);
        let (replayed, corrupt) = replay(dir.path(), DurabilityMode::Reliable);
        assert!(
            corrupt <= 1,
            "kill {i}: {corrupt} corrupt records (at most a torn tail)"
        );
        let replayed_set: BTreeSet<u64> = replayed.iter().copied().collect();
        assert_eq!(
            replayed_set.len(),
            replayed.len(),
            "kill {i}: replay has duplicates"
        );
        for t in 0..WRITERS_RELIABLE {
            let per_writer: Vec<u64> = replayed
                .iter()
                .copied()
                .filter(|s| s % WRITERS_RELIABLE == t)
                .collect();
            assert!(
                per_writer.is_sorted(),
                "kill {i}: writer {t} replayed out of order"
            );
        }
        let lost: Vec<u64> = log
            .durable
            .iter()
            .copied()
            .filter(|s| !log.acked.contains(s) && !replayed_set.contains(s))
            .collect();
        assert!(
            lost.is_empty(),
            "kill {i} after {after:?}: {} durable records lost: {:?}",
            lost.len(),
            &lost[..lost.len().min(20)]
        );
        assert!(!log.durable.is_empty(), "kill {i}: child made no progress");
        total_durable += log.durable.len();
        println!(
            "reliable kill {i} after {after:?}: {} durable, {} acked, {} replayed, 0 lost, {corrupt} torn",
            log.durable.len(),
            log.acked.len(),
            replayed.len()
        );
    }
    assert!(total_durable > 0);
}

#[test]
fn normal_mode_loses_at_most_one_flush_interval() {
    let dir = tempfile::tempdir().unwrap();
    let mut worst = Duration::ZERO;
    for (i, after) in kill_points(4).into_iter().enumerate() {
        let (log, killed_at) = run_child(dir.path(), "normal", after);
        let (replayed, corrupt) = replay(dir.path(), DurabilityMode::Normal);
        assert!(
            corrupt <= 1,
            "kill {i}: {corrupt} corrupt records (at most a torn tail)"
        );
        assert!(replayed.is_sorted(), "kill {i}: replay out of order");
        let present: BTreeSet<u64> = replayed.iter().chain(&log.acked).copied().collect();
        let first_lost = log.appended.keys().copied().find(|s| !present.contains(s));
        let window = match first_lost {
            None => Duration::ZERO,
            Some(first) => {
                // Everything before the first lost record survived; everything after it
                // was lost too (the writer thread writes in order).
                let after_lost: Vec<u64> = log
                    .appended
                    .keys()
                    .copied()
                    .filter(|&s| s > first && present.contains(&s))
                    .collect();
                assert!(
                    after_lost.is_empty(),
                    "kill {i}: records after the lost {first} survived: {:?}",
                    &after_lost[..after_lost.len().min(10)]
                );
                Duration::from_micros(killed_at.saturating_sub(log.appended[&first]))
            }
        };
        let lost = log.appended.keys().filter(|s| !present.contains(s)).count();
        println!(
            "normal kill {i} after {after:?}: {} appended, {} acked, {} replayed, {lost} lost, \
             loss window {window:?} (flush interval {FLUSH_INTERVAL:?}), {corrupt} torn",
            log.appended.len(),
            log.acked.len(),
            replayed.len()
        );
        assert!(!log.appended.is_empty(), "kill {i}: child made no progress");
        worst = worst.max(window);
        // One interval, plus the write in flight and scheduling on a loaded 2-core box.
        assert!(
            window <= FLUSH_INTERVAL + Duration::from_millis(400),
            "kill {i}: lost {window:?} of appends, more than one flush interval"
        );
    }
    println!("normal mode worst loss window: {worst:?}");
}

#[test]
fn second_process_is_refused_and_named_then_lock_freed_by_kill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_child(dir.path(), "reliable");
    let pid = child.0.id();
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    while lines
        .next()
        .is_some_and(|l| !l.unwrap().ends_with("@@READY"))
    {
        assert!(Instant::now() < deadline, "child did not start");
    }
    // Keep draining its output so it never blocks or dies on a closed pipe.
    let drain = thread::spawn(move || lines.count());
    let err = Buffer::open(config(dir.path(), DurabilityMode::Normal), &["r"]).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, sluice_buffer::OpenError::Locked { pid: Some(p), .. } if p == pid),
        "{text}"
    );
    assert!(text.contains(&format!("pid {pid}")), "{text}");
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
    drop(child);
    drain.join().unwrap();
    // The kernel dropped the dead child's flock: no stale lock.
    Buffer::open(config(dir.path(), DurabilityMode::Normal), &["r"]).unwrap();
}
