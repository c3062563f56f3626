//! The TCP edge cannot be locked out: 2,000 silent connections plus 500 slowloris ones do
//! not keep a real sender out, a 10,000-connection flood is refused and counted with bounded
//! memory, and bad PROXY headers close only their own connection. The connection limit is
//! per listening socket, as SC4S's `max-connections()`. Half-open connections are in
//! `e2e_half_open.rs`, the TLS port's bad input in `e2e_tls.rs`.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, Metrics, loggen, sink};

/// The test process holds thousands of sockets itself.
fn raise_fd_limit(need: u64) {
    let l = sluice_net::raise_fd_limit().expect("read RLIMIT_NOFILE");
    assert!(
        l.now >= need,
        "this test needs {need} file descriptors; the hard limit is {} (ulimit -Hn)",
        l.hard
    );
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_nodelay(true).unwrap();
    s
}

/// Peak resident memory of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmHWM")
}

#[test]
fn idle_and_slowloris_connections_do_not_lock_out_a_real_sender() {
    let _heavy = sluice_suite::heavy();
    raise_fd_limit(4000);
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SLUICE_TCP_FRAME_TIMEOUT", 10),
    );
    let addr = SocketAddr::from(([127, 0, 0, 1], d.port));

    // 2,000 connections that never send a byte fill the port's limit. (Accepted, not open: on
    // a loaded machine the first may reach their 10 s deadline before the last connects.)
    let idle: Vec<TcpStream> = (0..2000).map(|_| connect(addr)).collect();
    d.wait_metrics(Duration::from_secs(20), |m| {
        m.sum("sluice_tcp_connections_total", &["transport=\"tcp\""]) >= 2000.0
    });
    std::thread::sleep(Duration::from_millis(1100));

    // 500 slowloris connections: a frame started, then one byte a second.
    let slow: Vec<TcpStream> = (0..500)
        .map(|_| {
            let mut c = connect(addr);
            c.write_all(b"<13>Nov 22 10:00:00 slow app: ").unwrap();
            c
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let dripper = std::thread::spawn(move || {
        let mut slow = slow;
        while !stop2.load(Ordering::Relaxed) {
            for c in &mut slow {
                let _ = c.write_all(b"x");
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });

    // A real sender still gets in, and everything it sends arrives once, within seconds.
    let start = Instant::now();
    let sent = loggen(&[
        "-i",
        "-S",
        "-r",
        "20000",
        "-n",
        "20000",
        "-s",
        "300",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    assert_eq!(sent, 20_000);
    assert!(
        s.wait_for(20_000, Duration::from_secs(20)),
        "got {} of 20000; log:\n{}",
        s.accepted_events(),
        d.log()
    );
    let took = start.elapsed();
    let r = s.seq_report(Some(20_000));
    assert_eq!(
        (r.distinct, r.duplicates, r.missing),
        (20_000, 0, 0),
        "{r:?}"
    );
    eprintln!("20,000 messages delivered {took:?} after the sender started");

    // The slowloris frames time out: delivered as what arrived, tagged, counted; the silent
    // connections are closed as no_data.
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_tcp_closed_total", &["reason=\"frame_timeout\""]) == 500.0
            && m.sum("sluice_tcp_open_connections", &[]) <= 1.0
    });
    stop.store(true, Ordering::Relaxed);
    dripper.join().unwrap();
    let closed = |r: &str| m.sum("sluice_tcp_closed_total", &[&format!("reason=\"{r}\"")]);
    // 500 slowloris + loggen evicted idle ones (501), the rest reached their deadline; an idle
    // connection that reached it before a newcomer arrived (a slow machine) made room that way.
    assert_eq!(closed("evicted") + closed("no_data"), 2000.0, "{m:?}");
    assert!(closed("evicted") <= 501.0, "{m:?}");
    assert_eq!(
        closed("limit"),
        0.0,
        "nobody was refused: idle connections made room"
    );
    assert_eq!(
        m.sum("sluice_tcp_closed_total", &[]) + m.sum("sluice_tcp_open_connections", &[]),
        m.sum("sluice_tcp_connections_total", &[]),
        "every connection is open or closed for a reason"
    );
    assert!(s.wait_for(20_500, Duration::from_secs(10)));
    let tagged = s
        .events()
        .iter()
        .filter(|e| {
            e["fields"]["sc4s_tags"]
                .as_str()
                .is_some_and(|t| t.ends_with("|sluice:frame_timeout"))
        })
        .count();
    assert_eq!(
        tagged, 500,
        "each slowloris partial frame is delivered once, tagged"
    );
    assert_eq!(
        m.sum("sluice_tcp_frames_total", &["kind=\"partial\""]),
        500.0
    );
    let (code, health) = d.http_get("/health");
    assert_eq!(code, 200);
    assert!(health.contains("\"limit\":2000"), "{health}");
    drop(idle);
}

#[test]
fn a_flood_of_10000_connections_is_refused_counted_and_bounded() {
    let _heavy = sluice_suite::heavy();
    raise_fd_limit(12_000);
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SC4S_SOURCE_TCP_MAX_CONNECTIONS", 1000),
    );
    let addr = SocketAddr::from(([127, 0, 0, 1], d.port));
    let before = peak_rss_kib(d.pid());
    let flood: Vec<TcpStream> = (0..10_000)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok())
        .collect();
    assert!(flood.len() >= 9_000, "only {} connected", flood.len());
    // Beyond the 1,000 the port may hold, every flood connection is closed: refused or
    // evicted at the limit, or (if connecting 10,000 outlasted the 10 s frame deadline on a
    // loaded machine) closed as no_data. An evicted connection's closure is counted when its
    // task ends, after the accept that evicted it, so the count is waited for.
    let closed =
        |m: &Metrics, r: &str| m.sum("sluice_tcp_closed_total", &[&format!("reason=\"{r}\"")]);
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_tcp_connections_total", &[]) >= flood.len() as f64
            && closed(m, "limit") + closed(m, "evicted") + closed(m, "no_data")
                >= flood.len() as f64 - 1000.0
    });
    assert!(m.sum("sluice_tcp_open_connections", &[]) <= 1000.0);
    assert!(
        d.log().contains("connection refused") || closed(&m, "limit") == 0.0,
        "a clear, rate-limited line"
    );
    let grown = peak_rss_kib(d.pid()).saturating_sub(before);
    assert!(grown < 200 * 1024, "memory grew by {grown} KiB");

    // Once the flood holds no connection younger than a second, a real sender gets in.
    std::thread::sleep(Duration::from_millis(1100));
    let mut c = connect(addr);
    for i in 0..1000 {
        writeln!(c, "<13>Nov 22 10:00:00 host app: after the flood {i}").unwrap();
    }
    drop(c);
    assert!(
        s.wait_for(1000, Duration::from_secs(20)),
        "got {}; log:\n{}",
        s.accepted_events(),
        d.log()
    );
    drop(flood);
}

#[test]
fn proxy_protocol_sets_the_source_and_bad_headers_close_only_their_connection() {
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SC4S_SOURCE_PROXYCONNECT", "yes"),
    );
    let addr = SocketAddr::from(([127, 0, 0, 1], d.port));
    // HAProxy's v1 header, then a message without a hostname: HOST is the proxied source.
    let mut good = connect(addr);
    good.write_all(b"PROXY TCP4 198.51.100.7 10.0.0.1 40000 514\r\n<13>app: via proxy\n")
        .unwrap();
    // Bad headers: none at all, a malformed v1, a v2 signature with a bad version.
    for bad in [
        b"<13>Nov 22 10:00:00 host app: no header\n".as_slice(),
        b"PROXY TCP4 999.1.1.1 10.0.0.1 1 2\r\n<13>x\n",
        b"\r\n\r\n\0\r\nQUIT\n\x31\x11\x00\x0c\x01\x02\x03\x04\x05\x06\x07\x08\x00\x01\x00\x02",
    ] {
        let mut c = connect(addr);
        c.write_all(bad).unwrap();
    }
    // loggen's own PROXY v1 header (-H).
    let sent = loggen(&[
        "-i",
        "-S",
        "-H",
        "--proxy-src-ip=192.0.2.44",
        "--proxy-dst-ip=10.0.0.1",
        "--proxy-src-port=5000",
        "--proxy-dst-port=514",
        "-n",
        "100",
        "-r",
        "1000",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    // loggen -H counts its PROXY header as the first of its -n lines (the messages start at
    // seq 1); the header ends with a bare LF, which is accepted.
    assert_eq!(sent, 99);
    drop(good);
    assert!(s.wait_for(sent + 1, Duration::from_secs(20)), "{}", d.log());
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_tcp_closed_total", &["reason=\"proxy_header\""]) == 3.0
    });
    assert_eq!(m.sum("sluice_received_total", &[]), (sent + 1) as f64);
    let evs = s.events();
    let proxied = evs
        .iter()
        .find(|e| e["event"].as_str().is_some_and(|t| t.contains("via proxy")))
        .expect("the proxied message");
    assert_eq!(proxied["host"], "198.51.100.7");
    assert_eq!(proxied["fields"]["sc4s_fromhostip"], "198.51.100.7");
    let odd: Vec<_> = evs
        .iter()
        .filter(|e| e["fields"]["sc4s_fromhostip"] != "192.0.2.44")
        .collect();
    assert_eq!(odd.len(), 1, "only the hand-made one: {odd:#?}");
    assert!(d.log().contains("PROXY"), "{}", d.log());
}

#[test]
fn parallelize_spreads_one_connection_and_delivers_everything_once() {
    let _heavy = sluice_suite::heavy();
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SC4S_ENABLE_PARALLELIZE", "yes")
            .env("SC4S_PARALLELIZE_NO_PARTITION", 3),
    );
    let sent = loggen(&[
        "-i",
        "-S",
        "-r",
        "30000",
        "-n",
        "30000",
        "-s",
        "500",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    assert_eq!(sent, 30_000);
    assert!(
        s.wait_for(30_000, Duration::from_secs(60)),
        "got {}; log:\n{}",
        s.accepted_events(),
        d.log()
    );
    std::thread::sleep(Duration::from_millis(300));
    let r = s.seq_report(Some(30_000));
    assert_eq!(
        (r.distinct, r.duplicates, r.missing),
        (30_000, 0, 0),
        "{r:?}"
    );
    // Window slots come back after the sink's answer, which it gives after counting.
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_window_events", &[]) == 0.0
    });
}

#[test]
fn a_connection_silent_after_its_messages_is_closed_by_the_idle_timeout() {
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SLUICE_TCP_IDLE_TIMEOUT", 1),
    );
    let mut c = connect(SocketAddr::from(([127, 0, 0, 1], d.port)));
    c.write_all(b"<13>Nov 22 10:00:00 host app: then silence\n")
        .unwrap();
    // A peer that vanished without a FIN looks exactly like this from the server's side.
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_tcp_closed_total", &["reason=\"idle_timeout\""]) == 1.0
    });
    assert_eq!(m.sum("sluice_tcp_open_connections", &[]), 0.0);
    assert!(s.wait_for(1, Duration::from_secs(10)));
    let mut b = [0u8; 1];
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(
        std::io::Read::read(&mut c, &mut b).unwrap_or(0),
        0,
        "the server closed it"
    );
}

#[test]
fn the_connection_limit_is_per_socket_as_in_sc4s_and_rfc5426_has_its_own_sockets() {
    let s = sink();
    let rfc5426 = sluice_suite::free_port();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SC4S_SOURCE_TCP_MAX_CONNECTIONS", 50)
            .env("SC4S_SOURCE_LISTEN_TCP_SOCKETS", 2)
            .env("SC4S_LISTEN_DEFAULT_RFC5426_PORT", rfc5426)
            .env("SC4S_SOURCE_LISTEN_RFC5426_SOCKETS", 2)
            .env("SLUICE_TCP_FRAME_TIMEOUT", 60),
    );
    // SC4S_SOURCE_LISTEN_RFC5426_SOCKETS sizes the RFC 5426 port's group; the UDP port keeps
    // SC4S_SOURCE_LISTEN_UDP_SOCKETS (4).
    let m = d.metrics();
    let sockets = |port: u16| {
        m.0.keys()
            .filter(|k| {
                k.starts_with("sluice_udp_rcvbuf_bytes{") && k.contains(&format!("port=\"{port}\""))
            })
            .count()
    };
    assert_eq!((sockets(rfc5426), sockets(d.port)), (2, 4), "{m:?}");
    sluice_suite::send_udp(
        SocketAddr::from(([127, 0, 0, 1], rfc5426)),
        &[b"<13>1 2026-11-22T10:00:00Z host app - - - over RFC 5426"],
    );
    assert!(s.wait_for(1, Duration::from_secs(10)), "{}", d.log());

    // 50 per socket x 2 sockets: the port admits 100, as two SC4S network() sources would.
    let (code, health) = d.http_get("/health");
    assert_eq!(code, 200);
    assert!(
        health.contains("\"limit\":100") && health.contains("\"sockets\":2"),
        "{health}"
    );
    // 100 senders in the middle of a message (busy, so none can be evicted) fill it ...
    let busy: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut c = connect(SocketAddr::from(([127, 0, 0, 1], d.port)));
            c.write_all(b"<13>Nov 22 10:00:00 host app: half a mess")
                .unwrap();
            c
        })
        .collect();
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_tcp_open_connections", &[]) == 100.0
    });
    std::thread::sleep(EVICT_WAIT);
    // ... and the next ten are refused, counted, and logged.
    let extra: Vec<TcpStream> = (0..10)
        .map(|_| connect(SocketAddr::from(([127, 0, 0, 1], d.port))))
        .collect();
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_tcp_closed_total", &["reason=\"limit\""]) == 10.0
    });
    assert_eq!(m.sum("sluice_tcp_open_connections", &[]), 100.0);
    assert_eq!(m.sum("sluice_tcp_connection_limit", &[]), 100.0);
    assert!(d.log().contains("connection refused"), "{}", d.log());
    drop((busy, extra));
}

/// Longer than the edge's `EVICT_AFTER_IDLE`, so a connection that could be evicted would be.
const EVICT_WAIT: Duration = Duration::from_millis(1200);
