//! Backpressure instead of loss: with Splunk down, a TCP sender is slowed by the input
//! window / memory budget (its writes block), nothing is dropped, and everything arrives once
//! Splunk is back.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sluice_suite::{Daemon, DaemonOpts, SinkConfig, SinkHandle};

#[test]
fn a_spent_memory_budget_blocks_tcp_senders_until_splunk_is_back() {
    let _heavy = sluice_suite::heavy();
    let hec_port = sluice_suite::free_port();
    let d = Daemon::start(
        DaemonOpts::default()
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
                format!("http://127.0.0.1:{hec_port}"),
            )
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN",
                "00000000-0000-0000-0000-000000000000",
            )
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", 500)
            // Memory is the only place to wait: no disk buffer.
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE", "no")
            .env("SLUICE_MAX_IN_FLIGHT_BYTES", "2MiB"),
    );
    const N: u64 = 20_000;
    let written = Arc::new(AtomicU64::new(0));
    let w2 = written.clone();
    let port = d.port;
    let writer = std::thread::spawn(move || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        for i in 0..N {
            let mut line =
                format!("<13>Nov 22 10:00:00 host app: seq: {i:010}, thread: 0000, runid: 7, pad ")
                    .into_bytes();
            line.resize(799, b'x');
            line.push(b'\n');
            c.write_all(&line).unwrap();
            w2.store(i + 1, Ordering::Relaxed);
        }
    });

    // The budget is spent (a stream receiver stops at its share, `memory_streams`) and the
    // sender stalls well before it has written everything.
    let m = d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_window_full_total", &["window=\"memory"]) > 0.0
    });
    std::thread::sleep(Duration::from_secs(2));
    let stalled_at = written.load(Ordering::Relaxed);
    assert!(stalled_at < N, "the sender was never slowed down");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(written.load(Ordering::Relaxed), stalled_at, "still stalled");
    let m2 = d.metrics();
    assert!(
        m2.sum("sluice_memory_in_flight_bytes", &[])
            <= m.sum("sluice_memory_budget_bytes", &[]) + 1_100_000.0,
        "in flight stays near the budget (one batch may overshoot): {m2:?}"
    );
    assert_eq!(m2.sum("sluice_dropped_total", &[]), 0.0);

    // Splunk comes back: the sender resumes and every event arrives exactly once.
    let sink = SinkHandle::spawn_thread(SinkConfig {
        addr: ([127, 0, 0, 1], hec_port).into(),
        ..Default::default()
    })
    .unwrap();
    writer.join().unwrap();

    assert!(
        sink.wait_for(N, Duration::from_secs(120)),
        "got {} of {N}; log:\n{}",
        sink.accepted_events(),
        d.log()
    );
    let r = sink.seq_report(Some(N));
    assert_eq!((r.distinct, r.duplicates, r.missing), (N, 0, 0), "{r:?}");
    eprintln!("sender stalled at {stalled_at} of {N} messages while HEC was down");
}

/// Kernel drops of every UDP socket bound to `port` on 127.0.0.1, from `/proc/net/udp` (the
/// same counter `SO_MEMINFO` reads).
fn proc_udp_drops(port: u16) -> u64 {
    let text = std::fs::read_to_string("/proc/net/udp").unwrap();
    let local = format!("0100007F:{port:04X}");
    text.lines()
        .skip(1)
        .filter(|l| l.split_whitespace().nth(1) == Some(local.as_str()))
        .map(|l| l.split_whitespace().last().unwrap().parse::<u64>().unwrap())
        .sum()
}

/// With Splunk down the UDP window fills and the receive threads stop reading, so the kernel
/// drops what does not fit its buffer. `sluice_kernel_dropped_total` must say so while that
/// lasts — not only once a thread reads again.
#[test]
fn kernel_drops_are_counted_while_the_udp_window_is_full() {
    let _heavy = sluice_suite::heavy();
    let hec_port = sluice_suite::free_port();
    let d = Daemon::start(
        DaemonOpts::default()
            .env(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
                format!("http://127.0.0.1:{hec_port}"),
            )
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "t")
            .env("SC4S_SOURCE_UDP_IW_SIZE", 1000)
            // The window must fill: no disk buffer to spill to.
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE", "no")
            .env("SC4S_SOURCE_UDP_SO_RCVBUFF", 65536),
    );
    let msgs: Vec<Vec<u8>> = (0..6000)
        .map(|i| {
            let mut m = format!("<13>Nov 22 10:00:00 host app: seq: {i:010}, pad ").into_bytes();
            m.resize(800, b'x');
            m
        })
        .collect();
    let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    sluice_suite::send_udp(d.udp_addr(), &refs);
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_window_full_total", &["window=\"udp\""]) > 0.0
    });
    let kernel = proc_udp_drops(d.port);
    assert!(
        kernel > 0,
        "the kernel dropped nothing: the test sent too little"
    );
    // The window is still full (Splunk is down): only the timer can have read the counter.
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_kernel_dropped_total", &[]) as u64 == kernel
    });
    assert!(
        m.sum("sluice_received_total", &[]) <= 1000.0,
        "nothing was delivered, so the window bounds what was taken in: {m:?}"
    );
    assert_eq!(
        d.log_count(BALANCE_ADVICE),
        0,
        "drops behind a full window are downstream's, not one sender's"
    );
    eprintln!("{kernel} of 6000 datagrams dropped by the kernel while the window was full");
}

/// What the log says when one sender overruns its socket under the kernel's hash.
const BALANCE_ADVICE: &str = "spreads them over the port's sockets";

/// One sender faster than its receive thread, Splunk keeping up, the kernel's hash (SC4S's
/// default): every datagram goes to one of the port's four sockets, the kernel drops what
/// that thread cannot read, and the log names the setting that spreads the sender — once.
/// The window-full test above is the other side: drops caused downstream give no advice.
#[test]
fn one_sender_overrunning_its_socket_is_told_to_balance() {
    let _heavy = sluice_suite::heavy();
    let sink = sluice_suite::sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SLUICE_UDP_BALANCE", "kernel")
            .env("SC4S_SOURCE_LISTEN_UDP_SOCKETS", 4)
            // A few datagrams of room: the sender outruns the thread at once.
            .env("SC4S_SOURCE_UDP_SO_RCVBUFF", 4096),
    );
    let mut line = b"<13>Nov 22 10:00:00 host app: one heavy sender, pad ".to_vec();
    line.resize(800, b'x');
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let start = std::time::Instant::now();
    while proc_udp_drops(d.port) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the kernel dropped nothing in 20 s of sending"
        );
        for _ in 0..20_000 {
            s.send_to(&line, d.udp_addr()).unwrap();
        }
    }
    // The watch reads once a second; the drops must fall in an interval it compares.
    for _ in 0..3 {
        for _ in 0..20_000 {
            s.send_to(&line, d.udp_addr()).unwrap();
        }
        std::thread::sleep(Duration::from_millis(400));
    }
    d.wait_for_log(BALANCE_ADVICE, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(d.log_count(BALANCE_ADVICE), 1, "{}", d.log());
    let log = d.log();
    let advice = log
        .lines()
        .find(|l| l.contains(BALANCE_ADVICE))
        .unwrap_or_default();
    eprintln!(
        "{} datagrams dropped by the kernel; {advice}",
        proc_udp_drops(d.port)
    );
}
