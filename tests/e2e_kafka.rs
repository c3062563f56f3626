//! The Kafka destination end to end (issue 23): the sluice binary on real sockets producing to
//! a real Kafka-protocol broker, consumed back with librdkafka and counted.
//!
//! The broker is tansu 0.6.0 (Apache-2.0, a Kafka-compatible broker), its memory-storage
//! build, installed by `.ci/run` (see there why). It serves librdkafka's idempotent producer
//! and consumer groups. With memory storage a broker that exits loses its records, so "the
//! broker stopped" is SIGSTOP for 30 s and SIGCONT: to sluice the broker answers nothing, as
//! a hung or partitioned one would, and the records it had confirmed are still there to be
//! counted.
//!
//! Where tansu is not installed these tests say so and pass, except under `.ci/run`
//! (`SLUICE_REQUIRE_KAFKA=1`), where a missing broker fails them.

use std::collections::HashMap;
use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message as _;
use sluice_suite::{Daemon, DaemonOpts, free_port};

/// A tansu broker on loopback.
struct Broker {
    child: Option<Child>,
    port: u16,
    log: PathBuf,
}

fn tansu() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SLUICE_TANSU") {
        return Some(PathBuf::from(p));
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("tansu"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("SLUICE_REQUIRE_KAFKA").as_deref() != Ok("1"),
            "tansu (the Kafka-protocol broker of these tests) is not installed; .ci/run installs it"
        );
        eprintln!("tansu is not installed: skipping (.ci/run installs it)");
    }
    found
}

impl Broker {
    fn start() -> Option<Broker> {
        let bin = tansu()?;
        let port = free_port();
        let log =
            std::env::temp_dir().join(format!("sluice-tansu-{}-{port}.log", std::process::id()));
        let url = format!("tcp://127.0.0.1:{port}");
        let child = Command::new(bin)
            .args([
                "broker",
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &url,
            ])
            .args(["--storage-engine", "memory://tansu/"])
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(&log).unwrap()))
            .spawn()
            .expect("start tansu");
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "tansu did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Broker {
            child: Some(child),
            port,
            log,
        })
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn signal(&self, sig: &str) {
        if let Some(c) = &self.child {
            let _ = Command::new("kill")
                .args([sig, &c.id().to_string()])
                .status();
        }
    }

    /// Reads every record of `topic` from the start until `want` distinct sequence numbers
    /// were seen or `timeout` passed: (records read, distinct sequence numbers).
    fn consume(&self, topic: &str, want: u64, timeout: Duration) -> (u64, HashMap<u64, u32>) {
        let c: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", self.addr())
            .set(
                "group.id",
                format!("count-{}-{}", std::process::id(), free_port()),
            )
            .set("auto.offset.reset", "earliest")
            .set("enable.auto.commit", "false")
            .create()
            .expect("consumer");
        c.subscribe(&[topic]).expect("subscribe");
        let mut seen: HashMap<u64, u32> = HashMap::new();
        let mut records = 0u64;
        let start = Instant::now();
        while (seen.len() as u64) < want && start.elapsed() < timeout {
            let Some(m) = c.poll(Duration::from_millis(200)) else {
                continue;
            };
            let Ok(m) = m else { continue };
            records += 1;
            if let Some(s) = m.payload().and_then(seq_of) {
                *seen.entry(s).or_default() += 1;
            }
        }
        // A little longer: duplicates arrive after the last distinct one too.
        let tail = Instant::now();
        while tail.elapsed() < Duration::from_secs(2) {
            if let Some(Ok(m)) = c.poll(Duration::from_millis(100)) {
                records += 1;
                if let Some(s) = m.payload().and_then(seq_of) {
                    *seen.entry(s).or_default() += 1;
                }
            }
        }
        (records, seen)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-CONT", &c.id().to_string()])
                .status();
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.log);
    }
}

/// `seq: 0000000123` in a record's value (the HEC event JSON).
fn seq_of(v: &[u8]) -> Option<u64> {
    let t = std::str::from_utf8(v).ok()?;
    t.split("seq: ").nth(1)?.get(..10)?.parse().ok()
}

fn line(seq: u64) -> String {
    format!(
        "<13>Nov 26 09:00:00 host01 prg00000[1234]: seq: {seq:010}, thread: 0000, runid: 5, stamp: x\n"
    )
}

/// Sends `first..first + n` over one TCP connection, at `rate` events/s (0: as fast as TCP
/// takes them).
fn send_tcp(d: &Daemon, first: u64, n: u64, rate: u64) {
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    let start = Instant::now();
    let chunk = if rate == 0 { 5_000 } else { (rate / 50).max(1) };
    let mut seq = first;
    while seq < first + n {
        let end = (seq + chunk).min(first + n);
        let mut body = String::with_capacity(120 * (end - seq) as usize);
        for s in seq..end {
            body.push_str(&line(s));
        }
        s.write_all(body.as_bytes()).unwrap();
        seq = end;
        if rate > 0 {
            let due = Duration::from_secs_f64((seq - first) as f64 / rate as f64);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    }
}

/// Kafka only: the default destination in SELECT mode gets nothing.
fn kafka_opts(b: &Broker, topic: &str) -> DaemonOpts {
    DaemonOpts::default()
        .env("SC4S_DEST_SPLUNK_HEC_GLOBAL", "no")
        .env("SLUICE_DEST_KAFKA_MAIN_BROKERS", b.addr())
        .env("SLUICE_DEST_KAFKA_MAIN_TOPIC", topic)
}

fn delivered(d: &Daemon) -> f64 {
    d.metrics()
        .sum("sluice_delivered_total", &["destination=\"kafka_main\""])
}

fn wait_delivered(d: &Daemon, n: u64, timeout: Duration) {
    let start = Instant::now();
    while delivered(d) < n as f64 && start.elapsed() < timeout {
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn two_hundred_thousand_events_consumed_back_once() {
    let Some(b) = Broker::start() else { return };
    let _heavy = sluice_suite::heavy();
    let d = Daemon::start(kafka_opts(&b, "sc4s-e2e-200k"));
    const N: u64 = 200_000;
    let started = Instant::now();
    send_tcp(&d, 0, N, 0);
    wait_delivered(&d, N, Duration::from_secs(180));
    let took = started.elapsed();
    let (records, seen) = b.consume("sc4s-e2e-200k", N, Duration::from_secs(120));
    eprintln!(
        "200k: delivered in {took:?}, {records} records read, {} distinct",
        seen.len()
    );
    assert_eq!(
        seen.len() as u64,
        N,
        "log:\n{}\nbroker:\n{}",
        d.log(),
        b.log()
    );
    assert_eq!(records, N, "each exactly once");
    assert_eq!(delivered(&d), N as f64);
}

/// The broker answers nothing for 30 s (SIGSTOP) while 20k events/s keep coming; the disk
/// buffer takes what cannot go out. Nothing is lost, and what is sent twice (batches that
/// timed out after part of them was confirmed) is at most the batches in flight.
#[test]
fn broker_stopped_30s_under_20k_per_second_with_the_buffer_nothing_lost() {
    let Some(b) = Broker::start() else { return };
    let _heavy = sluice_suite::heavy();
    let d = Daemon::start(
        kafka_opts(&b, "sc4s-e2e-outage").env("SLUICE_DEST_KAFKA_MAIN_TIMEOUT", 5000),
    );
    const RATE: u64 = 20_000;
    let total = RATE * 40;
    let sender = {
        let port = d.port;
        std::thread::spawn(move || {
            let fake = FakeDaemon { port };
            fake.send(0, total, RATE);
        })
    };
    std::thread::sleep(Duration::from_secs(5));
    b.signal("-STOP");
    std::thread::sleep(Duration::from_secs(30));
    b.signal("-CONT");
    sender.join().unwrap();
    let m = d.metrics();
    let spilled = m.sum(
        "sluice_buffer_appended_events_total",
        &["destination=\"kafka_main\""],
    );
    wait_delivered(&d, total, Duration::from_secs(240));
    if std::env::var_os("SLUICE_E2E_DEBUG").is_some() {
        eprintln!("{}", d.log());
    }
    let (records, seen) = b.consume("sc4s-e2e-outage", total, Duration::from_secs(120));
    let dups = records - seen.len() as u64;
    eprintln!(
        "broker outage: {total} sent, {spilled} through the disk buffer, {records} records, {} \
         distinct, {dups} duplicates",
        seen.len()
    );
    assert_eq!(seen.len() as u64, total, "log:\n{}", d.log());
    assert!(
        spilled > 0.0,
        "the buffer took the outage; log:\n{}",
        d.log()
    );
    // At most every in-flight batch (16 of at most 5000 events) once more.
    assert!(dups <= 16 * 5_000, "{dups} duplicates");
}

/// Sends like [`send_tcp`] without a [`Daemon`] handle (from another thread).
struct FakeDaemon {
    port: u16,
}

impl FakeDaemon {
    fn send(&self, first: u64, n: u64, rate: u64) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let start = Instant::now();
        let chunk = (rate / 50).max(1);
        let mut seq = first;
        while seq < first + n {
            let end = (seq + chunk).min(first + n);
            let mut body = String::new();
            for q in seq..end {
                body.push_str(&line(q));
            }
            s.write_all(body.as_bytes()).unwrap();
            seq = end;
            let due = Duration::from_secs_f64((seq - first) as f64 / rate as f64);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    }
}

/// Reliable mode: events received while the broker answers nothing are on disk; kill -9, then
/// a restart on the same buffer with the broker back delivers every one.
#[test]
fn kill_9_in_reliable_mode_then_restart_delivers_every_event() {
    let Some(b) = Broker::start() else { return };
    let _heavy = sluice_suite::heavy();
    let buffer = tempfile::tempdir().unwrap();
    let dir = buffer.path().display().to_string();
    let opts = || {
        kafka_opts(&b, "sc4s-e2e-kill")
            .env("SLUICE_DEST_KAFKA_MAIN_DISKBUFF_RELIABLE", "yes")
            .env("SLUICE_DEST_KAFKA_MAIN_DISKBUFF_DIR", &dir)
            .env("SLUICE_DEST_KAFKA_MAIN_TIMEOUT", 5000)
    };
    const N: u64 = 50_000;
    // Half delivered normally, half while the broker is stopped.
    let d = Daemon::start(opts());
    send_tcp(&d, 0, N / 2, 0);
    wait_delivered(&d, N / 2, Duration::from_secs(60));
    b.signal("-STOP");
    send_tcp(&d, N / 2, N / 2, 0);
    let start = Instant::now();
    while d.metrics().sum("sluice_received_total", &[]) < N as f64
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    let received = d.metrics().sum("sluice_received_total", &[]);
    // Received is not yet persisted: the last batches wait for their batch timeout and the
    // group commit. In reliable mode what is on disk is what is safe.
    let on_disk = || {
        d.metrics()
            .sum("sluice_buffer_events", &["destination=\"kafka_main\""])
    };
    let start = Instant::now();
    while on_disk() < (N / 2) as f64 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let m = d.metrics();
    eprintln!(
        "kill -9: at the kill {received} received, {} delivered, {} rejected, {} on disk",
        m.sum("sluice_delivered_total", &["destination=\"kafka_main\""]),
        m.sum(
            "sluice_delivery_events_total",
            &["destination=\"kafka_main\"", "outcome=\"rejected\""]
        ),
        m.sum("sluice_buffer_events", &["destination=\"kafka_main\""]),
    );
    if std::env::var_os("SLUICE_E2E_DEBUG").is_some() {
        eprintln!("{}", d.log());
    }
    let _ = Command::new("kill")
        .args(["-KILL", &d.pid().to_string()])
        .status();
    drop(d);
    assert_eq!(received, N as f64, "every event read before kill -9");
    assert_eq!(
        m.sum("sluice_buffer_events", &["destination=\"kafka_main\""]),
        (N / 2) as f64,
        "the second half on disk before kill -9"
    );
    b.signal("-CONT");
    let d2 = Daemon::start(opts());
    let (records, seen) = b.consume("sc4s-e2e-kill", N, Duration::from_secs(180));
    eprintln!(
        "kill -9: {records} records, {} distinct of {N}, {} duplicates",
        seen.len(),
        records - seen.len() as u64
    );
    assert_eq!(seen.len() as u64, N, "log:\n{}", d2.log());
}

/// A record larger than the producer's limit goes to the dead-letter file, counted; the
/// others are delivered.
#[test]
fn a_record_over_the_size_limit_is_dead_lettered_and_the_rest_delivered() {
    let Some(b) = Broker::start() else { return };
    let d = Daemon::start(
        kafka_opts(&b, "sc4s-e2e-big").env("SLUICE_DEST_KAFKA_MAIN_MAX_MESSAGE_BYTES", 2000),
    );
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    let big = format!(
        "<13>Nov 26 09:00:00 host01 prg: seq: 0000000001 {}\n",
        "x".repeat(4000)
    );
    s.write_all(format!("{}{big}{}", line(0), line(2)).as_bytes())
        .unwrap();
    let start = Instant::now();
    let refused = || {
        d.metrics().sum(
            "sluice_forward_refused_total",
            &["destination=\"kafka_main\"", "reason=\"too_large\""],
        )
    };
    while refused() < 1.0 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(refused(), 1.0, "log:\n{}", d.log());
    let (_, seen) = b.consume("sc4s-e2e-big", 2, Duration::from_secs(30));
    assert!(seen.contains_key(&0) && seen.contains_key(&2), "{seen:?}");
    let dl = std::fs::read_to_string(d.dir.join("dead-letter/kafka_main/kafka_rejected.jsonl"))
        .unwrap_or_default();
    let found = dl
        .lines()
        .any(|l| l.contains("too_large") && l.contains("0000000001"));
    assert!(found, "dead letter: {dl}\nlog:\n{}", d.log());
}

/// A broker name that does not resolve: a clear log line and a counted error, and the other
/// destination (the JSON-lines file) keeps receiving.
#[test]
fn an_unresolvable_broker_stalls_no_other_destination() {
    let d = Daemon::start(
        DaemonOpts::default()
            .env(
                "SLUICE_DEST_KAFKA_MAIN_BROKERS",
                "no-such-broker.invalid:9092",
            )
            .env("SLUICE_DEST_KAFKA_MAIN_DISKBUFF_ENABLE", "no"),
    );
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    for i in 0..100 {
        s.write_all(line(i).as_bytes()).unwrap();
    }
    let start = Instant::now();
    while d.file_events().len() < 100 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(d.file_events().len(), 100, "log:\n{}", d.log());
    let start = Instant::now();
    let errors = || {
        d.metrics().sum(
            "sluice_forward_errors_total",
            &["destination=\"kafka_main\""],
        )
    };
    while errors() < 1.0 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(errors() >= 1.0, "log:\n{}", d.log());
    assert!(
        d.log().contains("no-such-broker.invalid"),
        "log:\n{}",
        d.log()
    );
}

/// A topic template naming a field that does not exist is a startup error naming the
/// variable.
#[test]
fn a_topic_template_with_an_unknown_field_is_a_startup_error() {
    let out = Command::new(sluice_suite::sluice_bin())
        .args(["run", "--check"])
        .env("SLUICE_DEST_KAFKA_MAIN_BROKERS", "127.0.0.1:9")
        .env("SLUICE_DEST_KAFKA_MAIN_TOPIC", "sc4s-${nope}")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("SLUICE_DEST_KAFKA_MAIN_TOPIC") && text.contains("nope"),
        "{text}"
    );
}
