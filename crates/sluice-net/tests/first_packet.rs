//! Spread from the first packet: a sender already spinning on the port when the group binds.
//!
//! The sender thread starts before the group exists and sends numbered datagrams as fast as
//! it can; while nothing is bound they are refused (ICMP port unreachable, or silently when
//! the kernel rate-limits the ICMP). The first datagram a socket of the group receives marks
//! the instant the port appeared; the 40,000 datagrams from that one on must spread over the
//! sockets within 10 % of each other. Balancing set up only after the sockets bind sends
//! everything that arrives in between to the one socket the kernel's hash picks.

mod common;

use std::{
    net::{Ipv4Addr, SocketAddr, UdpSocket},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use common::{CHILD_OK, Rerun, can_bpf, is_child, rerun_unprivileged};
use sluice_net::{Balance, UdpGroup, UdpGroupConfig, UdpReceiver};

const SOCKETS: usize = 4;
const COUNT: u64 = 40_000;
/// Datagrams the sender may have outstanding once the group receives, so a receive thread
/// that a loaded machine schedules late cannot overflow its (possibly clamped) buffer.
const MAX_IN_FLIGHT: u64 = 4_000;

/// Shared between the sender and the receive threads.
struct Progress {
    /// Datagrams received, all sockets.
    received: AtomicU64,
    /// Smallest sequence number received: the first datagram the group took.
    first_seq: AtomicU64,
    stop: AtomicBool,
}

/// A port that nothing is bound to right now.
fn unused_port() -> u16 {
    let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    s.local_addr().unwrap().port()
}

/// Sends sequence numbers to `dest` until told to stop. Before the port exists sends fail
/// with `ECONNREFUSED` (the previous datagram was refused); that is expected and ignored.
fn spawn_sender(
    dest: SocketAddr,
    progress: Arc<Progress>,
    spinning: Arc<AtomicBool>,
) -> thread::JoinHandle<u64> {
    thread::spawn(move || {
        let s = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        s.connect(dest).unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seq = 0u64;
        while !progress.stop.load(Ordering::Relaxed) {
            assert!(Instant::now() < deadline, "the receivers never got {COUNT}");
            let first = progress.first_seq.load(Ordering::Relaxed);
            let received = progress.received.load(Ordering::Relaxed);
            if first != u64::MAX && (seq - first).saturating_sub(received) > MAX_IN_FLIGHT {
                thread::sleep(Duration::from_micros(100));
                continue;
            }
            match s.send(&seq.to_le_bytes()) {
                Ok(_) => seq += 1,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    // This send was not made (the error of an earlier one was reported).
                }
                Err(e) => panic!("send failed: {e}"),
            }
            spinning.store(true, Ordering::Relaxed);
        }
        seq
    })
}

/// Drains one socket until stopped; returns its sequence numbers and its kernel drop count.
fn spawn_receiver(
    mut rx: UdpReceiver,
    progress: Arc<Progress>,
) -> thread::JoinHandle<(Vec<u64>, u64)> {
    thread::spawn(move || {
        rx.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut seqs = Vec::with_capacity(2 * COUNT as usize / SOCKETS);
        while !progress.stop.load(Ordering::Relaxed) {
            let batch = rx.recv(64).unwrap();
            let n = batch.len() as u64;
            for d in batch {
                let seq = u64::from_le_bytes(d.payload.try_into().expect("8-byte datagram"));
                progress.first_seq.fetch_min(seq, Ordering::Relaxed);
                seqs.push(seq);
            }
            progress.received.fetch_add(n, Ordering::Relaxed);
        }
        // Whatever is still queued belongs to the run too.
        rx.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
        loop {
            let batch = rx.recv(64).unwrap();
            if batch.is_empty() {
                break;
            }
            seqs.extend(
                batch.map(|d| u64::from_le_bytes(d.payload.try_into().expect("8-byte datagram"))),
            );
        }
        let drops = rx.refresh_kernel_drops().unwrap();
        (seqs, drops)
    })
}

/// What a run found: the balancing in effect, why it differs from the one requested, and
/// how many of the first [`COUNT`] datagrams each socket received.
struct Outcome {
    mode: Balance,
    reason: Option<String>,
    counts: Vec<u64>,
}

/// Starts the sender, binds the group on the port it is sending to, and counts.
fn first_packets(balance: Balance) -> Outcome {
    let port = unused_port();
    let dest = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let progress = Arc::new(Progress {
        received: AtomicU64::new(0),
        first_seq: AtomicU64::new(u64::MAX),
        stop: AtomicBool::new(false),
    });
    let spinning = Arc::new(AtomicBool::new(false));
    let sender = spawn_sender(dest, progress.clone(), spinning.clone());
    while !spinning.load(Ordering::Relaxed) {
        thread::yield_now();
    }
    // Let it spin against the closed port for a moment, as a real sender would.
    thread::sleep(Duration::from_millis(20));

    let mut cfg = UdpGroupConfig::new(dest);
    cfg.sockets = SOCKETS;
    cfg.balance = balance;
    cfg.rcvbuf = Some(32 << 20);
    let mut group = UdpGroup::bind(&cfg).unwrap();
    let mode = group.balance_mode();
    let reason = group.fallback_reason().map(str::to_owned);
    let receivers: Vec<_> = group
        .take_receivers()
        .into_iter()
        .map(|rx| spawn_receiver(rx, progress.clone()))
        .collect();

    let deadline = Instant::now() + Duration::from_secs(120);
    while progress.received.load(Ordering::Relaxed) < COUNT {
        assert!(Instant::now() < deadline, "received too little");
        thread::sleep(Duration::from_millis(5));
    }
    progress.stop.store(true, Ordering::Relaxed);
    let sent = sender.join().unwrap();
    let per_socket: Vec<(Vec<u64>, u64)> =
        receivers.into_iter().map(|h| h.join().unwrap()).collect();

    let drops: Vec<u64> = per_socket.iter().map(|p| p.1).collect();
    assert!(drops.iter().all(|&d| d == 0), "kernel drops {drops:?}");
    let first = progress.first_seq.load(Ordering::Relaxed);
    let window = first..first + COUNT;
    let counts: Vec<u64> = per_socket
        .iter()
        .map(|(seqs, _)| seqs.iter().filter(|s| window.contains(s)).count() as u64)
        .collect();
    // Everything sent once the port was up arrived, each datagram once.
    let mut all: Vec<u64> = per_socket
        .iter()
        .flat_map(|(seqs, _)| seqs.iter().copied())
        .filter(|s| window.contains(s))
        .collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len() as u64, COUNT, "lost or duplicated: {counts:?}");
    assert_eq!(counts.iter().sum::<u64>(), COUNT, "duplicated: {counts:?}");
    println!(
        "balance={mode} first_seq={first} sent={sent} per-socket(first {COUNT})={counts:?} \
         spread={:.1}%",
        spread_percent(&counts)
    );
    Outcome {
        mode,
        reason,
        counts,
    }
}

/// (max − min) / mean, in percent.
fn spread_percent(counts: &[u64]) -> f64 {
    let max = *counts.iter().max().unwrap() as f64;
    let min = *counts.iter().min().unwrap() as f64;
    let mean = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
    (max - min) / mean * 100.0
}

fn assert_within_ten_percent(counts: &[u64]) {
    let spread = spread_percent(counts);
    assert!(
        spread <= 10.0,
        "per-socket counts {counts:?} differ by {spread:.1}% (max 10%)"
    );
}

#[test]
fn ebpf_spreads_from_the_first_packet() {
    let out = first_packets(Balance::Ebpf);
    if out.mode != Balance::Ebpf {
        let reason = out.reason.as_deref().unwrap_or("(no reason recorded)");
        // Only a kernel refusal without the privilege may skip eBPF.
        assert!(
            !can_bpf() && reason.starts_with("eBPF load refused"),
            "eBPF balancing was not set up although this process may load BPF: {reason}"
        );
        println!(
            "SKIPPED eBPF (measured the {} fallback instead): {reason}",
            out.mode
        );
    }
    assert_within_ten_percent(&out.counts);
}

/// As `nobody` without capabilities: cBPF asked for, and eBPF asked for, which the kernel
/// refuses, so the group falls back to cBPF before any socket binds.
#[test]
fn cbpf_spreads_from_the_first_packet_unprivileged() {
    if can_bpf() && !is_child() {
        match rerun_unprivileged("cbpf_spreads_from_the_first_packet_unprivileged") {
            Rerun::Ran { stdout, .. } => {
                println!("unprivileged child:\n{stdout}");
                return;
            }
            // cBPF does not depend on privilege; measure it here rather than not at all.
            Rerun::Unavailable(why) => println!("cannot drop privileges ({why}); running as is"),
        }
    }
    let out = first_packets(Balance::Cbpf);
    assert_eq!(out.mode, Balance::Cbpf, "{:?}", out.reason);
    assert_within_ten_percent(&out.counts);
    if !can_bpf() {
        let out = first_packets(Balance::Ebpf);
        assert_eq!(out.mode, Balance::Cbpf, "{:?}", out.reason);
        let reason = out.reason.unwrap_or_default();
        assert!(reason.ends_with("falling back to cBPF"), "{reason}");
        assert_within_ten_percent(&out.counts);
    }
    println!("{CHILD_OK}");
}
