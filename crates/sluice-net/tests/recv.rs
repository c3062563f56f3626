//! recvmmsg receiver behaviour on real loopback sockets: sizes, truncation, sources, timeouts,
//! batching limits, kernel drop counters, IPv6.

mod common;

use std::{
    net::{IpAddr, SocketAddr},
    time::{Duration, Instant},
};

use common::{dest_for, proc_udp_drops};
use sluice_net::{
    Balance, DEFAULT_MAX_DATAGRAM, UdpGroup, UdpGroupConfig, UdpReceiver, UdpSender,
    UdpSenderConfig,
};

fn single(addr: &str, tweak: impl FnOnce(&mut UdpGroupConfig)) -> (UdpGroup, UdpReceiver) {
    let mut cfg = UdpGroupConfig::new(addr.parse().unwrap());
    cfg.balance = Balance::Kernel;
    tweak(&mut cfg);
    let mut group = UdpGroup::bind(&cfg).unwrap();
    let rx = group.take_receivers().pop().unwrap();
    (group, rx)
}

fn sender_to(group: &UdpGroup) -> UdpSender {
    UdpSender::connect(&UdpSenderConfig::new(dest_for(group.local_addr()))).unwrap()
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Receive exactly `n` datagrams (waiting generously), returning owned copies.
fn recv_n(rx: &mut UdpReceiver, n: usize) -> Vec<(Vec<u8>, SocketAddr, bool)> {
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut out = Vec::new();
    while out.len() < n {
        assert!(
            Instant::now() < deadline,
            "got {} of {n} datagrams",
            out.len()
        );
        for d in rx.recv(n - out.len()).unwrap() {
            out.push((d.payload.to_vec(), d.source, d.truncated));
        }
    }
    out
}

#[test]
fn a_65000_byte_datagram_arrives_whole() {
    let (group, mut rx) = single("127.0.0.1:0", |_| {});
    assert_eq!(rx.max_datagram(), DEFAULT_MAX_DATAGRAM);
    let mut tx = sender_to(&group);
    let big = pattern(65_000, 7);
    assert_eq!(tx.send_batch(&[&big]).unwrap(), 1);
    let got = recv_n(&mut rx, 1);
    assert_eq!(got[0].0.len(), 65_000);
    assert!(got[0].0 == big, "payload differs");
    assert!(!got[0].2, "flagged truncated");
    assert_eq!(rx.stats().bytes(), 65_000);
    assert_eq!(rx.stats().truncated(), 0);
}

#[test]
fn oversize_datagrams_are_cut_and_flagged() {
    let (group, mut rx) = single("127.0.0.1:0", |c| c.max_datagram = 1000);
    let mut tx = sender_to(&group);
    // 1000 fits; 1001 fills the one spare byte of the slot (no MSG_TRUNC from the kernel);
    // 5000 overflows the slot (MSG_TRUNC).
    let sizes = [1000usize, 1001, 5000, 10];
    let payloads: Vec<Vec<u8>> = sizes.iter().map(|&n| pattern(n, n as u8)).collect();
    let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    tx.send_all(&refs).unwrap();
    let got = recv_n(&mut rx, sizes.len());
    for (i, (payload, _, truncated)) in got.iter().enumerate() {
        let whole = sizes[i] <= 1000;
        assert_eq!(*truncated, !whole, "datagram {i} of {} bytes", sizes[i]);
        assert_eq!(payload.len(), sizes[i].min(1000), "datagram {i}");
        assert_eq!(
            payload[..],
            payloads[i][..payload.len()],
            "datagram {i} content"
        );
    }
    assert_eq!(rx.stats().truncated(), 2);
    assert_eq!(rx.stats().received(), 4);
    assert_eq!(rx.stats().bytes(), 1000 + 1000 + 1000 + 10);
}

/// Receive slots are linked once and reused: what the kernel wrote into a slot on one call
/// (truncation flag, source address length, control length) must not leak into the next.
#[test]
fn reused_slots_report_each_call_afresh() {
    let (group, mut rx) = single("127.0.0.1:0", |c| {
        c.max_datagram = 1000;
        c.batch = 8;
    });
    let from = |ip: &str| {
        let mut cfg = UdpSenderConfig::new(dest_for(group.local_addr()));
        cfg.bind = Some(format!("{ip}:0").parse().unwrap());
        UdpSender::connect(&cfg).unwrap()
    };
    let (mut a, mut b) = (from("127.0.0.2"), from("127.0.0.3"));
    let (a_addr, b_addr) = (a.local_addr().unwrap(), b.local_addr().unwrap());
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();

    // Call 1 uses slots 0..2: a truncated datagram, then a small one.
    a.send_all(&[&pattern(5000, 1), &pattern(10, 2)]).unwrap();
    let got = recv_n(&mut rx, 2);
    assert_eq!((got[0].0.len(), got[0].1, got[0].2), (1000, a_addr, true));
    assert_eq!((got[1].0.len(), got[1].1, got[1].2), (10, a_addr, false));

    // Call 2 reuses slots 0..2 and links 2..5, from another source: nothing of call 1 shows.
    let sizes = [10usize, 20, 999, 1, 500];
    let payloads: Vec<Vec<u8>> = sizes.iter().map(|&n| pattern(n, n as u8)).collect();
    let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    b.send_all(&refs).unwrap();
    let got = rx.recv(8).unwrap();
    assert_eq!(got.len(), sizes.len());
    for (i, d) in got.enumerate() {
        assert_eq!(d.payload, payloads[i].as_slice(), "datagram {i}");
        assert_eq!(d.source, b_addr, "datagram {i}");
        assert!(!d.truncated, "datagram {i}");
    }

    // Call 3: a shorter call after a longer one, truncation in a reused slot again.
    a.send_all(&[&pattern(3, 3), &pattern(1001, 4)]).unwrap();
    let got = recv_n(&mut rx, 2);
    assert_eq!((got[0].0.len(), got[0].1, got[0].2), (3, a_addr, false));
    assert_eq!((got[1].0.len(), got[1].1, got[1].2), (1000, a_addr, true));
    assert_eq!(rx.stats().received(), 9);
    assert_eq!(rx.stats().truncated(), 2);
}

#[test]
fn source_address_is_captured() {
    let (group, mut rx) = single("127.0.0.1:0", |_| {});
    let mut cfg = UdpSenderConfig::new(dest_for(group.local_addr()));
    cfg.bind = Some("127.0.0.2:0".parse().unwrap());
    let mut tx = UdpSender::connect(&cfg).unwrap();
    let from = tx.local_addr().unwrap();
    assert_eq!(from.ip(), "127.0.0.2".parse::<IpAddr>().unwrap());
    tx.send_all(&[b"<13>hello"]).unwrap();
    let got = recv_n(&mut rx, 1);
    assert_eq!(got[0].1, from);
    assert_eq!(got[0].0, b"<13>hello");
}

#[test]
fn timeout_returns_an_empty_batch() {
    let (_group, mut rx) = single("127.0.0.1:0", |_| {});
    assert!(rx.set_read_timeout(Some(Duration::ZERO)).is_err());
    rx.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let start = Instant::now();
    let batch = rx.recv(64).unwrap();
    assert!(batch.is_empty());
    assert_eq!(batch.len(), 0);
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(100),
        "returned after {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(30),
        "returned after {waited:?}"
    );
    assert_eq!(rx.stats().received(), 0);
    assert_eq!(rx.stats().batches(), 0);
}

#[test]
fn recv_returns_at_most_max_and_keeps_order() {
    let (group, mut rx) = single("127.0.0.1:0", |c| c.batch = 8);
    assert_eq!(rx.batch_capacity(), 8);
    let mut tx = sender_to(&group);
    let payloads: Vec<Vec<u8>> = (0..20).map(|i| format!("msg {i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    // Loopback delivery is synchronous: once sent, all 20 are queued.
    tx.send_all(&refs).unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();

    assert!(rx.recv(0).unwrap().is_empty());
    let first: Vec<Vec<u8>> = rx.recv(3).unwrap().map(|d| d.payload.to_vec()).collect();
    assert_eq!(first, payloads[..3]);
    // More than the batch capacity is capped at it.
    let second = rx.recv(100).unwrap();
    assert_eq!(second.len(), 8);
    assert_eq!(second.get(0).unwrap().payload, payloads[3].as_slice());
    assert_eq!(second.get(7).unwrap().payload, payloads[10].as_slice());
    assert!(second.get(8).is_none());
    let rest: Vec<Vec<u8>> = rx.recv(100).unwrap().map(|d| d.payload.to_vec()).collect();
    assert_eq!(rest, payloads[11..19]);
    let last: Vec<Vec<u8>> = rx.recv(100).unwrap().map(|d| d.payload.to_vec()).collect();
    assert_eq!(last, payloads[19..]);
    assert_eq!(rx.stats().received(), 20);
    assert_eq!(rx.stats().batches(), 4);
}

/// Overflow a small buffer with no reader, then check both drop paths against the kernel's
/// own `/proc/net/udp` column: the SO_RXQ_OVFL value carried by the next datagram, and the
/// SO_MEMINFO read done on a timeout.
#[test]
fn kernel_drops_match_proc_net_udp() {
    let (group, mut rx) = single("127.0.0.1:0", |c| c.rcvbuf = Some(4096));
    let addr = group.local_addr();
    let mut tx = sender_to(&group);
    let payload = pattern(1000, 1);
    let burst: Vec<&[u8]> = (0..200).map(|_| payload.as_slice()).collect();

    // 1. Fill the buffer: the kernel keeps a few and drops the rest.
    tx.send_all(&burst).unwrap();
    let dropped = proc_udp_drops(addr);
    assert!(
        dropped > 0,
        "no drops with a {} byte buffer",
        group.rcvbuf_reports()[0].effective
    );
    // Drain what was queued without a timeout (no SO_MEMINFO refresh): those datagrams were
    // queued before any drop, so they carry no SO_RXQ_OVFL value yet.
    rx.set_read_timeout(None).unwrap();
    let queued = rx.recv(64).unwrap().len() as u64;
    assert_eq!(queued + dropped, 200);
    assert_eq!(rx.stats().kernel_drops(), 0);

    // 2. The next datagram is stamped with the cumulative count.
    tx.send_all(&burst[..1]).unwrap();
    assert_eq!(rx.recv(64).unwrap().len(), 1);
    assert_eq!(rx.stats().kernel_drops(), dropped, "SO_RXQ_OVFL value");
    assert_eq!(rx.stats().kernel_drops(), proc_udp_drops(addr));

    // 3. More drops, then only the already-queued datagrams arrive; the timeout re-reads the
    // counter with SO_MEMINFO.
    tx.send_all(&burst).unwrap();
    let total = proc_udp_drops(addr);
    assert!(total > dropped);
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut received = 0;
    loop {
        let n = rx.recv(64).unwrap().len();
        if n == 0 {
            break;
        }
        received += n as u64;
    }
    assert_eq!(received + (total - dropped), 200);
    assert_eq!(
        rx.stats().kernel_drops(),
        total,
        "SO_MEMINFO value after a timeout"
    );
    assert_eq!(rx.meminfo().unwrap().drops as u64, total);
    assert_eq!(rx.refresh_kernel_drops().unwrap(), total);
    assert_eq!(rx.stats().received(), queued + 1 + received);
}

/// A receiver that is not reading (its pipeline is full) reports nothing itself; its probe,
/// read from another thread, keeps the drop counter current, and the receiver's own later
/// readings never move it back.
#[test]
fn a_drop_probe_counts_drops_while_the_receiver_is_not_reading() {
    let (group, mut rx) = single("127.0.0.1:0", |c| c.rcvbuf = Some(4096));
    let addr = group.local_addr();
    let probe = rx.drop_probe().unwrap();
    let mut tx = sender_to(&group);
    let payload = pattern(1000, 2);
    let burst: Vec<&[u8]> = (0..200).map(|_| payload.as_slice()).collect();
    tx.send_all(&burst).unwrap();
    let dropped = proc_udp_drops(addr);
    assert!(dropped > 0);
    assert_eq!(group.stats()[0].kernel_drops(), 0, "nobody read yet");

    let from_thread = std::thread::spawn(move || {
        let total = probe.refresh().unwrap();
        (total, probe)
    });
    let (total, probe) = from_thread.join().unwrap();
    assert_eq!(total, dropped);
    assert_eq!(group.stats()[0].kernel_drops(), dropped);
    assert!(std::sync::Arc::ptr_eq(probe.stats(), rx.stats()));

    // The receiver drains the queued datagrams (stamped before any drop) and one stamped
    // with the count: the total stays where the probe put it.
    rx.set_read_timeout(None).unwrap();
    let queued = rx.recv(64).unwrap().len() as u64;
    tx.send_all(&burst[..1]).unwrap();
    assert_eq!(rx.recv(64).unwrap().len(), 1);
    assert_eq!(queued + dropped, 200);
    assert_eq!(rx.stats().kernel_drops(), dropped);
    assert_eq!(probe.refresh().unwrap(), proc_udp_drops(addr));
}

fn ipv6_available() -> bool {
    std::net::UdpSocket::bind("[::1]:0").is_ok()
}

#[test]
fn ipv6_group_receives_on_loopback() {
    if !ipv6_available() {
        println!("SKIPPED: IPv6 loopback ::1 is not available on this host");
        return;
    }
    let mut cfg = UdpGroupConfig::new("[::1]:0".parse().unwrap());
    cfg.sockets = 2;
    cfg.balance = Balance::Ebpf; // falls back to cBPF by itself without CAP_BPF
    let mut group = UdpGroup::bind(&cfg).unwrap();
    assert!(group.local_addr().is_ipv6());
    assert_ne!(group.local_addr().port(), 0);
    assert_ne!(
        group.balance_mode(),
        Balance::Kernel,
        "{:?}",
        group.fallback_reason()
    );
    let mut tx = sender_to(&group);
    let from = tx.local_addr().unwrap();
    let payloads: Vec<Vec<u8>> = (0..400).map(|i| format!("v6 {i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    tx.send_all(&refs).unwrap();
    let mut per_socket = Vec::new();
    for mut rx in group.take_receivers() {
        rx.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let mut n = 0;
        loop {
            let batch = rx.recv(64).unwrap();
            if batch.is_empty() {
                break;
            }
            for d in batch {
                assert_eq!(d.source, from);
                assert!(d.source.is_ipv6());
                n += 1;
            }
        }
        per_socket.push(n);
    }
    assert_eq!(per_socket.iter().sum::<u64>(), 400, "{per_socket:?}");
    // Random balancing: both sockets get a share (each ~200; 0 has probability 2^-400).
    assert!(per_socket.iter().all(|&n| n > 0), "{per_socket:?}");
}

#[test]
fn ipv6_any_is_dual_stack_and_reports_ipv4_sources_as_ipv4() {
    if !ipv6_available() {
        println!("SKIPPED: IPv6 is not available on this host");
        return;
    }
    let (group, mut rx) = single("[::]:0", |_| {});
    let port = group.local_addr().port();
    let mut v4 = UdpSender::connect(&UdpSenderConfig::new(SocketAddr::new(
        "127.0.0.1".parse().unwrap(),
        port,
    )))
    .unwrap();
    let mut v6 = UdpSender::connect(&UdpSenderConfig::new(SocketAddr::new(
        "::1".parse().unwrap(),
        port,
    )))
    .unwrap();
    v4.send_all(&[b"over ipv4"]).unwrap();
    let got = recv_n(&mut rx, 1);
    assert_eq!(got[0].0, b"over ipv4");
    assert_eq!(got[0].1, v4.local_addr().unwrap());
    assert!(got[0].1.is_ipv4());
    v6.send_all(&[b"over ipv6"]).unwrap();
    let got = recv_n(&mut rx, 1);
    assert_eq!(got[0].0, b"over ipv6");
    assert_eq!(got[0].1, v6.local_addr().unwrap());
}

#[test]
fn sender_batches_are_capped_and_send_all_sends_everything() {
    let (group, mut rx) = single("127.0.0.1:0", |c| c.batch = 1024);
    let mut cfg = UdpSenderConfig::new(dest_for(group.local_addr()));
    cfg.sndbuf = Some(1 << 20);
    let mut tx = UdpSender::connect(&cfg).unwrap();
    assert!(tx.send_buffer_size().unwrap() > 0);
    assert_eq!(tx.peer_addr(), dest_for(group.local_addr()));
    assert_eq!(tx.send_batch(&[]).unwrap(), 0);
    let payloads: Vec<Vec<u8>> = (0..1500).map(|i| format!("{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    // One sendmmsg call sends at most 1024 datagrams.
    let first = tx.send_batch(&refs).unwrap();
    assert!(first > 0 && first <= 1024, "sent {first}");
    let got = recv_n(&mut rx, first);
    assert_eq!(got.len(), first);
    tx.send_all(&refs[first..]).unwrap();
    let got: Vec<Vec<u8>> = recv_n(&mut rx, 1500 - first)
        .into_iter()
        .map(|g| g.0)
        .collect();
    assert_eq!(got, payloads[first..]);
}
