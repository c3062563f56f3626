//! `sluice_bench::loggen` against real receivers on loopback: every message counted, framed
//! and sized as specified, with its seq / thread / run id.

use std::{
    collections::{BTreeMap, BTreeSet},
    io::Read,
    net::{IpAddr, SocketAddr, TcpListener, TcpStream},
    sync::Arc,
    thread::JoinHandle,
    time::{Duration, Instant},
};

use clap::Parser;
use sluice_bench::loggen::{self, Format, LoggenConfig, LoggenReport, Transport};
use sluice_net::{Balance, UdpGroup, UdpGroupConfig};

const RUN_ID: u64 = 4_242_424_242;

/// The fields loggen writes into every generated message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ids {
    seq: u64,
    thread: u32,
    run_id: u64,
}

fn digits_after(msg: &[u8], key: &str, max: usize) -> Option<(u64, usize)> {
    let at = msg.windows(key.len()).position(|w| w == key.as_bytes())? + key.len();
    let n = msg[at..]
        .iter()
        .take(max)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let v = std::str::from_utf8(&msg[at..at + n]).ok()?.parse().ok()?;
    Some((v, n))
}

fn ids(msg: &[u8]) -> Ids {
    let (seq, n) = digits_after(msg, "seq: ", 20).expect("seq");
    assert_eq!(n, 10, "seq has 10 digits");
    let (thread, n) = digits_after(msg, ", thread: ", 20).expect("thread");
    assert_eq!(n, 4, "thread has 4 digits");
    let (run_id, _) = digits_after(msg, ", runid: ", 20).expect("runid");
    Ids {
        seq,
        thread: thread as u32,
        run_id,
    }
}

/// Every thread in `0..threads` sent exactly seq `0..count`, once, with our run id.
fn check_sequences(messages: &[Vec<u8>], threads: u32, count: u64) {
    let mut by_thread: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for m in messages {
        let id = ids(m);
        assert_eq!(id.run_id, RUN_ID);
        by_thread.entry(id.thread).or_default().push(id.seq);
    }
    assert_eq!(
        by_thread.keys().copied().collect::<Vec<_>>(),
        (0..threads).collect::<Vec<_>>()
    );
    for (thread, mut seqs) in by_thread {
        seqs.sort_unstable();
        assert_eq!(seqs, (0..count).collect::<Vec<_>>(), "thread {thread}");
    }
}

fn config(target: SocketAddr, transport: Transport) -> LoggenConfig {
    let mut c = LoggenConfig::new(target.to_string());
    c.transport = transport;
    c.run_id = Some(RUN_ID);
    c.quiet = true;
    c
}

fn assert_report(r: &LoggenReport, total: u64) {
    assert_eq!(r.sent, total, "{r}");
    assert_eq!(r.errors, 0, "{r}");
    assert_eq!(r.per_connection.iter().map(|c| c.sent).sum::<u64>(), total);
}

// ---------------------------------------------------------------------------------------
// Receivers

struct UdpSink {
    addr: SocketAddr,
    handle: JoinHandle<Vec<(SocketAddr, Vec<u8>)>>,
}

/// Collects datagrams until `expect` arrived or nothing came for `idle` after the first.
fn udp_sink(expect: usize, idle: Duration) -> UdpSink {
    let mut cfg = UdpGroupConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.balance = Balance::Kernel;
    let mut group = UdpGroup::bind(&cfg).unwrap();
    let addr = group.local_addr();
    let mut rx = group.take_receivers().pop().unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let handle = std::thread::spawn(move || {
        let _group = group;
        let mut got = Vec::new();
        let started = Instant::now();
        let mut last = Instant::now();
        loop {
            let batch = rx.recv(64).unwrap();
            if batch.is_empty() {
                let waited_first = got.is_empty() && started.elapsed() > Duration::from_secs(30);
                if waited_first || (!got.is_empty() && last.elapsed() > idle) {
                    break;
                }
                continue;
            }
            for d in batch {
                assert!(!d.truncated);
                got.push((d.source, d.payload.to_vec()));
            }
            last = Instant::now();
            if got.len() >= expect {
                // Wait a little for anything beyond the expected count (duplicates).
                let extra_until = Instant::now() + Duration::from_millis(300);
                while Instant::now() < extra_until {
                    for d in rx.recv(64).unwrap() {
                        got.push((d.source, d.payload.to_vec()));
                    }
                }
                break;
            }
        }
        got
    });
    UdpSink { addr, handle }
}

struct StreamSink {
    addr: SocketAddr,
    handle: JoinHandle<Vec<(SocketAddr, Vec<u8>)>>,
}

/// Accepts `connections` TCP connections and returns each one's bytes up to EOF.
fn tcp_sink(connections: usize) -> StreamSink {
    stream_sink(connections, |s| {
        let mut buf = Vec::new();
        let mut s = s;
        s.read_to_end(&mut buf).unwrap();
        buf
    })
}

fn stream_sink(
    connections: usize,
    read: impl Fn(TcpStream) -> Vec<u8> + Send + Sync + 'static,
) -> StreamSink {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let read = Arc::new(read);
    let handle = std::thread::spawn(move || {
        let mut readers = Vec::new();
        for _ in 0..connections {
            let (s, peer) = listener.accept().unwrap();
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            let read = read.clone();
            readers.push(std::thread::spawn(move || (peer, read(s))));
        }
        readers.into_iter().map(|h| h.join().unwrap()).collect()
    });
    StreamSink { addr, handle }
}

fn split_lf(bytes: &[u8]) -> Vec<Vec<u8>> {
    assert!(
        bytes.is_empty() || bytes.ends_with(b"\n"),
        "stream ends mid-message"
    );
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn split_octet(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let sp = bytes.iter().position(|&b| b == b' ').expect("octet count");
        assert!(
            bytes[0].is_ascii_digit() && bytes[0] != b'0',
            "frame starts with a count"
        );
        let len: usize = std::str::from_utf8(&bytes[..sp]).unwrap().parse().unwrap();
        let frame = &bytes[sp + 1..sp + 1 + len];
        out.push(frame.to_vec());
        bytes = &bytes[sp + 1 + len..];
    }
    out
}

// ---------------------------------------------------------------------------------------
// Tests

#[test]
fn udp_every_message_counted_with_size_seq_thread_and_run_id() {
    let (conns, count, size) = (3usize, 500u64, 300usize);
    let sink = udp_sink(conns * count as usize, Duration::from_secs(3));
    let mut cfg = config(sink.addr, Transport::Udp);
    cfg.connections = conns;
    cfg.count = Some(count);
    cfg.size = Some(size);
    // Paced so that an unprivileged receiver (rcvbuf clamped to rmem_max) keeps up too.
    cfg.rate = 5000;
    let report = loggen::run(&cfg).unwrap();
    assert_report(&report, conns as u64 * count);
    assert_eq!(report.bytes, report.sent * size as u64);
    let got = sink.handle.join().unwrap();
    assert_eq!(got.len(), conns * count as usize);
    for (_, m) in &got {
        assert_eq!(m.len(), size);
        assert!(m.starts_with(b"<38>") && m.ends_with(b"PADD\n"));
        assert_eq!(m.iter().filter(|&&b| b == b'\n').count(), 1);
    }
    let messages: Vec<_> = got.iter().map(|(_, m)| m.clone()).collect();
    check_sequences(&messages, conns as u32, count);
    // each connection is its own socket: one source port per thread
    let mut port_of_thread = BTreeMap::new();
    for (src, m) in &got {
        let prev = port_of_thread.insert(ids(m).thread, src.port());
        assert!(prev.is_none_or(|p| p == src.port()));
    }
    let ports: BTreeSet<_> = port_of_thread.values().collect();
    assert_eq!(ports.len(), conns);
    let reported: BTreeSet<_> = report
        .per_connection
        .iter()
        .map(|c| c.local_addr.unwrap().port())
        .collect();
    assert_eq!(reported, ports.into_iter().copied().collect());
}

#[test]
fn tcp_lf_framing() {
    let (conns, count) = (2usize, 1000u64);
    let sink = tcp_sink(conns);
    let mut cfg = config(sink.addr, Transport::Tcp);
    cfg.connections = conns;
    cfg.count = Some(count);
    cfg.rate = 0;
    let report = loggen::run(&cfg).unwrap();
    assert_report(&report, conns as u64 * count);
    let mut messages = Vec::new();
    for (_, bytes) in sink.handle.join().unwrap() {
        let frames = split_lf(&bytes);
        assert_eq!(frames.len(), count as usize);
        for f in &frames {
            assert_eq!(f.len(), loggen::DEFAULT_SIZE);
            assert!(f.starts_with(b"<38>"));
        }
        // one connection carries one thread's messages, in order
        let seqs: Vec<_> = frames.iter().map(|f| ids(f).seq).collect();
        assert_eq!(seqs, (0..count).collect::<Vec<_>>());
        messages.extend(frames);
    }
    check_sequences(&messages, conns as u32, count);
}

#[test]
fn tcp_octet_counting_with_rfc5424_and_sdata() {
    let (conns, count, size) = (2usize, 700u64, 400usize);
    let sink = tcp_sink(conns);
    let mut cfg = config(sink.addr, Transport::TcpOctet);
    cfg.connections = conns;
    cfg.count = Some(count);
    cfg.size = Some(size);
    cfg.format = Format::Rfc5424;
    cfg.sdata = Some("[x@1 a=\"b\"]".to_owned());
    cfg.rate = 0;
    cfg.batch = 7; // several writes, not a multiple of the count
    let report = loggen::run(&cfg).unwrap();
    assert_report(&report, conns as u64 * count);
    assert_eq!(report.bytes, report.sent * (size as u64 + 4));
    let mut messages = Vec::new();
    for (_, bytes) in sink.handle.join().unwrap() {
        let frames = split_octet(&bytes);
        assert_eq!(frames.len(), count as usize);
        for f in &frames {
            assert_eq!(f.len(), size);
            assert!(f.starts_with(b"<38>1 "), "{}", String::from_utf8_lossy(f));
            let sd = b" localhost prg00000 1234 - [x@1 a=\"b\"] \xEF\xBB\xBFseq: ";
            assert_eq!(&f[31..31 + sd.len()], sd);
            assert!(f.ends_with(b"\n"));
        }
        messages.extend(frames);
    }
    check_sequences(&messages, conns as u32, count);
}

#[test]
fn sources_send_from_distinct_loopback_addresses() {
    // UDP: 3 sources × 2 connections
    let sink = udp_sink(6 * 20, Duration::from_secs(3));
    let mut cfg = config(sink.addr, Transport::Udp);
    cfg.sources = 3;
    cfg.connections = 2;
    cfg.count = Some(20);
    let report = loggen::run(&cfg).unwrap();
    assert_report(&report, 120);
    let got = sink.handle.join().unwrap();
    assert_eq!(got.len(), 120);
    let mut ip_of_thread = BTreeMap::new();
    for (src, m) in &got {
        ip_of_thread.insert(ids(m).thread, src.ip());
    }
    let want: Vec<IpAddr> = [
        "127.0.0.1",
        "127.0.0.1",
        "127.0.0.2",
        "127.0.0.2",
        "127.0.0.3",
        "127.0.0.3",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    assert_eq!(ip_of_thread.values().copied().collect::<Vec<_>>(), want);
    check_sequences(&got.into_iter().map(|(_, m)| m).collect::<Vec<_>>(), 6, 20);

    // TCP: 3 sources × 1 connection
    let sink = tcp_sink(3);
    let mut cfg = config(sink.addr, Transport::Tcp);
    cfg.sources = 3;
    cfg.count = Some(10);
    loggen::run(&cfg).unwrap();
    let peers: BTreeSet<IpAddr> = sink
        .handle
        .join()
        .unwrap()
        .iter()
        .map(|(p, _)| p.ip())
        .collect();
    assert_eq!(peers.len(), 3, "{peers:?}");
}

#[test]
fn rate_limit_holds_over_two_seconds() {
    // A correctness check of the token bucket with a generous tolerance, not a speed test.
    let sink = udp_sink(usize::MAX, Duration::from_secs(2));
    let mut cfg = config(sink.addr, Transport::Udp);
    cfg.rate = 2000;
    cfg.duration = Some(2.0);
    let started = Instant::now();
    let report = loggen::run(&cfg).unwrap();
    let took = started.elapsed();
    let got = sink.handle.join().unwrap();
    let n = got.len() as f64;
    assert!(
        (3600.0..=4400.0).contains(&n),
        "received {n}, report: {report}"
    );
    assert!((3600..=4400).contains(&report.sent), "{report}");
    assert_eq!(report.sent + report.lagged, 4000, "{report}");
    assert!(
        took >= Duration::from_millis(1900),
        "finished after {took:?}"
    );
    // evenly spread: not all in one burst at the start
    assert!(report.elapsed >= Duration::from_millis(1900), "{report}");
}

#[test]
fn duration_with_unlimited_rate_stops() {
    let sink = udp_sink(usize::MAX, Duration::from_secs(2));
    let mut cfg = config(sink.addr, Transport::Udp);
    cfg.rate = 0;
    cfg.duration = Some(0.3);
    let started = Instant::now();
    let report = loggen::run(&cfg).unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(report.sent > 0 && report.errors == 0, "{report}");
    drop(sink);
}

fn tls_server_config(cert: &rcgen::CertifiedKey<rcgen::KeyPair>) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.der().clone()], key)
        .unwrap();
    Arc::new(cfg)
}

/// A TLS receiver: per connection, the plaintext up to close_notify.
fn tls_sink(connections: usize, server: Arc<rustls::ServerConfig>) -> StreamSink {
    stream_sink(connections, move |tcp| {
        let conn = rustls::ServerConnection::new(server.clone()).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            match tls.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                // the handshake failed (a test of a bad certificate): nothing was received
                Err(_) => break,
            }
        }
        buf
    })
}

fn self_signed() -> rcgen::CertifiedKey<rcgen::KeyPair> {
    rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
}

#[test]
fn tls_octet_counting_to_a_self_signed_receiver() {
    let cert = self_signed();
    let (conns, count) = (2usize, 1500u64);
    let sink = tls_sink(conns, tls_server_config(&cert));
    let mut cfg = config(sink.addr, Transport::Tls);
    cfg.tls_insecure = true;
    cfg.connections = conns;
    cfg.count = Some(count);
    cfg.size = Some(800);
    cfg.rate = 0;
    let report = loggen::run(&cfg).unwrap();
    assert_report(&report, conns as u64 * count);
    let mut messages = Vec::new();
    for (_, bytes) in sink.handle.join().unwrap() {
        let frames = split_octet(&bytes);
        assert_eq!(frames.len(), count as usize);
        assert!(
            frames
                .iter()
                .all(|f| f.len() == 800 && f.starts_with(b"<38>2"))
        );
        messages.extend(frames);
    }
    check_sequences(&messages, conns as u32, count);
}

#[test]
fn tls_verifies_against_a_ca_file_and_rejects_a_wrong_name() {
    let cert = self_signed();
    let server = tls_server_config(&cert);
    let ca = std::env::temp_dir().join(format!("loggen-test-ca-{}.pem", std::process::id()));
    std::fs::write(&ca, cert.cert.pem()).unwrap();

    let sink = tls_sink(1, server.clone());
    let mut cfg = config(sink.addr, Transport::Tls);
    cfg.tls_ca = Some(ca.clone());
    cfg.count = Some(10);
    let report = loggen::run(&cfg).unwrap();
    assert_report(&report, 10);
    let got = sink.handle.join().unwrap();
    assert_eq!(split_octet(&got[0].1).len(), 10);

    let sink = tls_sink(1, server);
    let mut cfg = config(sink.addr, Transport::Tls);
    cfg.tls_ca = Some(ca.clone());
    cfg.tls_server_name = Some("not-the-name.example".to_owned());
    cfg.count = Some(10);
    let err = loggen::run(&cfg).unwrap_err().to_string();
    std::fs::remove_file(&ca).unwrap();
    assert!(
        err.starts_with(&format!(
            "cannot complete the TLS handshake with {}:",
            sink.addr
        )),
        "{err}"
    );
    assert!(err.contains("certificate"), "{err}");
    assert!(sink.handle.join().unwrap()[0].1.is_empty());
}

#[test]
fn replay_sends_file_lines_verbatim_and_loops() {
    let path = std::env::temp_dir().join(format!("loggen-test-replay-{}.log", std::process::id()));
    std::fs::write(
        &path,
        "<13>Mar  5 12:00:00 host a: one\n<13>Mar  5 12:00:01 host a: two\r\n\n",
    )
    .unwrap();
    let sink = tcp_sink(1);
    let mut cfg = config(sink.addr, Transport::Tcp);
    cfg.format = Format::Replay;
    cfg.file = Some(path.clone());
    cfg.count = Some(5);
    let report = loggen::run(&cfg).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_report(&report, 5);
    let got = sink.handle.join().unwrap();
    let one: &[u8] = b"<13>Mar  5 12:00:00 host a: one\n";
    let two: &[u8] = b"<13>Mar  5 12:00:01 host a: two\n";
    assert_eq!(split_lf(&got[0].1), vec![one, two, one, two, one]);
}

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

#[test]
fn refused_connection_is_a_named_error() {
    let addr = free_port();
    for transport in [Transport::Tcp, Transport::TcpOctet] {
        let err = loggen::run(&config(addr, transport))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("cannot connect to {addr} over TCP: connection refused")
        );
    }
    let mut tls = config(addr, Transport::Tls);
    tls.tls_insecure = true;
    let err = loggen::run(&tls).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("cannot connect to {addr} over TLS: connection refused")
    );
}

#[test]
fn bad_settings_fail_before_sending() {
    let target: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let check = |edit: &dyn Fn(&mut LoggenConfig), want: &str| {
        let mut c = config(target, Transport::Udp);
        edit(&mut c);
        let err = loggen::run(&c).unwrap_err().to_string();
        assert!(err.starts_with(want), "got  {err}\nwant {want}");
    };
    check(
        &|c| c.count = Some(0),
        "--count: 0 messages per connection sends nothing",
    );
    check(
        &|c| c.size = Some(60),
        "--size: 60 bytes cannot hold the rfc3164 header of this run, which needs at least 127",
    );
    check(
        &|c| {
            c.format = Format::Rfc5424;
            c.sdata = Some("[x@1 a=\"b\"]".into());
            c.size = Some(140);
        },
        "--size: 140 bytes cannot hold the rfc5424 header of this run, which needs at least 150",
    );
    check(
        &|c| {
            c.sources = 4;
            c.target = "192.0.2.1:514".into();
        },
        "--sources: 4 sources need an IPv4 loopback target",
    );
    check(
        &|c| {
            c.format = Format::Replay;
            c.file = Some("/nonexistent/replay.log".into());
        },
        "--file /nonexistent/replay.log: no such file",
    );
    let empty = std::env::temp_dir().join(format!("loggen-test-empty-{}.log", std::process::id()));
    std::fs::write(&empty, "\n\n").unwrap();
    check(
        &|c| {
            c.format = Format::Replay;
            c.file = Some(empty.clone());
        },
        &format!("--file {}: the file has no non-empty line", empty.display()),
    );
    std::fs::remove_file(&empty).unwrap();
    check(
        &|c| c.target = "no-such-host.invalid:514".into(),
        "cannot resolve target \"no-such-host.invalid:514\"",
    );
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    loggen: LoggenConfig,
}

#[test]
fn cli_flags_parse_into_the_config() {
    let cli = Cli::try_parse_from([
        "loggen",
        "127.0.0.1:5514",
        "--transport",
        "tcp-octet",
        "-r",
        "0",
        "--duration",
        "2.5",
        "--size",
        "800",
        "--connections",
        "4",
        "--sources",
        "2",
        "--format",
        "rfc5424",
        "--sdata",
        "[a@1 b=\"c\"]",
        "--run-id",
        "9",
        "--batch",
        "256",
        "--quiet",
        "--json",
    ])
    .unwrap();
    let c = cli.loggen;
    assert_eq!(c.target, "127.0.0.1:5514");
    assert_eq!(c.transport, Transport::TcpOctet);
    assert_eq!(
        (c.rate, c.duration, c.size, c.count),
        (0, Some(2.5), Some(800), None)
    );
    assert_eq!(
        (c.connections, c.sources, c.format),
        (4, 2, Format::Rfc5424)
    );
    assert_eq!(c.sdata.as_deref(), Some("[a@1 b=\"c\"]"));
    assert_eq!(
        (c.run_id, c.batch, c.quiet, c.json),
        (Some(9), 256, true, true)
    );

    // loggen's short flags, and the defaults equal LoggenConfig::new
    let c = Cli::try_parse_from([
        "loggen", "-r", "50", "-I", "3", "-s", "300", "-n", "7", "-Q", "h:1",
    ])
    .unwrap()
    .loggen;
    assert_eq!(
        (c.rate, c.duration, c.size, c.count),
        (50, Some(3.0), Some(300), Some(7))
    );
    assert!(c.quiet);
    let d = Cli::try_parse_from(["loggen", "h:1"]).unwrap().loggen;
    assert_eq!(d, LoggenConfig::new("h:1"));
    let e = Cli::try_parse_from(["loggen", "h:1", "--transport", "sctp"])
        .err()
        .unwrap();
    assert!(e.to_string().contains("sctp"));
}

#[test]
fn a_receiver_that_stops_reading_ends_the_run_after_the_duration() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let holder = std::thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        // never read; keep the connection open until the sender has given up
        std::thread::sleep(Duration::from_secs(8));
        drop(conn);
    });
    let mut cfg = config(addr, Transport::Tcp);
    cfg.rate = 0;
    cfg.duration = Some(0.5);
    let started = Instant::now();
    let report = loggen::run(&cfg).unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(report.errors, 1, "{report}");
    let first = report.per_connection[0].first_error.as_deref().unwrap();
    assert!(first.contains("the receiver stopped reading"), "{first}");
    assert!(
        report.sent > 0,
        "the socket buffers take some messages first: {report}"
    );
    holder.join().unwrap();
}

#[test]
fn run_with_stop_ends_early_and_reports_what_was_sent() {
    let sink = udp_sink(usize::MAX, Duration::from_secs(2));
    let mut cfg = config(sink.addr, Transport::Udp);
    cfg.rate = 1000;
    cfg.duration = Some(600.0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let started = Instant::now();
    let report = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        loggen::run_with_stop(&cfg, &stop).unwrap()
    });
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(report.sent > 0 && report.sent < 600_000, "{report}");
    let got = sink.handle.join().unwrap();
    assert_eq!(got.len() as u64, report.sent);
}
