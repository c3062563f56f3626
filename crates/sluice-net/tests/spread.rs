//! One sender (one 4-tuple), 40,000 datagrams, a group of 4 sockets: how they spread.

mod common;

use common::{CHILD_OK, Rerun, can_bpf, dest_for, is_child, rerun_unprivileged, send_and_drain};
use sluice_net::{Balance, UdpGroup, UdpGroupConfig};

const SOCKETS: usize = 4;
const COUNT: u64 = 40_000;
const MAX_IN_FLIGHT: u64 = 4_000;

fn config(balance: Balance) -> UdpGroupConfig {
    let mut cfg = UdpGroupConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.sockets = SOCKETS;
    cfg.balance = balance;
    cfg.rcvbuf = Some(32 << 20);
    cfg
}

/// Run the spread and check nothing was lost: every datagram sent was received and the
/// kernel reports no drop on any socket.
fn spread(mut group: UdpGroup) -> Vec<u64> {
    let dest = dest_for(group.local_addr());
    let stats: Vec<_> = group.stats().to_vec();
    let receivers = group.take_receivers();
    assert_eq!(receivers.len(), SOCKETS);
    // The balancing program must keep working without the group object.
    drop(group);
    let d = send_and_drain(receivers, dest, COUNT, MAX_IN_FLIGHT);
    println!(
        "per-socket={:?} drops={:?} sent={}",
        d.per_socket, d.drops, d.sent
    );
    assert_eq!(d.sent, COUNT);
    assert_eq!(d.dropped(), 0, "kernel drops: {:?}", d.drops);
    assert_eq!(d.received(), COUNT, "per socket {:?}", d.per_socket);
    for (i, s) in stats.iter().enumerate() {
        assert_eq!(s.index(), i);
        assert_eq!(s.received(), d.per_socket[i], "stats of socket {i}");
    }
    d.per_socket
}

fn assert_even(per_socket: &[u64]) {
    let expect = COUNT / SOCKETS as u64;
    let (lo, hi) = (expect * 85 / 100, expect * 115 / 100);
    for (i, &n) in per_socket.iter().enumerate() {
        assert!(
            (lo..=hi).contains(&n),
            "socket {i} got {n}, outside {lo}..={hi}: {per_socket:?}"
        );
    }
}

#[test]
fn kernel_hash_puts_one_sender_on_one_socket() {
    let group = UdpGroup::bind(&config(Balance::Kernel)).unwrap();
    assert_eq!(group.balance_mode(), Balance::Kernel);
    assert_eq!(group.fallback_reason(), None);
    let per_socket = spread(group);
    assert_eq!(
        per_socket.iter().filter(|&&n| n == COUNT).count(),
        1,
        "{per_socket:?}"
    );
    assert_eq!(
        per_socket.iter().filter(|&&n| n == 0).count(),
        SOCKETS - 1,
        "{per_socket:?}"
    );
}

#[test]
fn cbpf_spreads_one_sender_evenly() {
    let group = UdpGroup::bind(&config(Balance::Cbpf)).unwrap();
    assert_eq!(
        group.balance_mode(),
        Balance::Cbpf,
        "{:?}",
        group.fallback_reason()
    );
    assert_eq!(group.fallback_reason(), None);
    assert_even(&spread(group));
}

#[test]
fn ebpf_spreads_one_sender_evenly() {
    let group = UdpGroup::bind(&config(Balance::Ebpf)).unwrap();
    if group.balance_mode() != Balance::Ebpf {
        let reason = group.fallback_reason().unwrap_or("(no reason recorded)");
        // With CAP_BPF (or root) the program must load; only a kernel refusal without the
        // privilege may skip this test.
        assert!(
            !can_bpf() && reason.starts_with("eBPF load refused"),
            "eBPF balancing was not set up although this process may load BPF: {reason}"
        );
        // The reason starts with "eBPF load refused: <error>".
        println!("SKIPPED: {reason}");
        return;
    }
    assert_eq!(group.fallback_reason(), None);
    assert_even(&spread(group));
}

/// Requesting eBPF without CAP_BPF must end in cBPF, with a reason, and still spread.
#[test]
fn ebpf_falls_back_to_cbpf_without_cap_bpf() {
    if can_bpf() && !is_child() {
        match rerun_unprivileged("ebpf_falls_back_to_cbpf_without_cap_bpf") {
            Rerun::Ran { stdout, .. } => println!("unprivileged child:\n{stdout}"),
            Rerun::Unavailable(why) => {
                println!("SKIPPED: cannot drop CAP_BPF for this test: {why}")
            }
        }
        return;
    }
    assert!(!can_bpf(), "the child still has CAP_BPF or CAP_SYS_ADMIN");
    let group = UdpGroup::bind(&config(Balance::Ebpf)).unwrap();
    assert_eq!(group.balance_requested(), Balance::Ebpf);
    assert_eq!(
        group.balance_mode(),
        Balance::Cbpf,
        "{:?}",
        group.fallback_reason()
    );
    let reason = group
        .fallback_reason()
        .expect("a fallback reason")
        .to_owned();
    println!("fallback reason: {reason}");
    assert!(reason.starts_with("eBPF load refused"), "{reason}");
    assert!(reason.contains("CAP_BPF"), "{reason}");
    assert!(reason.ends_with("falling back to cBPF"), "{reason}");
    assert_even(&spread(group));
    println!("{CHILD_OK}");
}

/// On a given port the program is attached before the sockets bind; that must hold for a
/// dual-stack IPv6 group too.
#[test]
fn cbpf_on_a_given_dual_stack_port_spreads() {
    let port = std::net::UdpSocket::bind("[::1]:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cfg = config(Balance::Cbpf);
    cfg.addr = format!("[::]:{port}").parse().unwrap();
    let group = UdpGroup::bind(&cfg).unwrap();
    assert_eq!(group.local_addr().port(), port);
    assert_eq!(
        group.balance_mode(),
        Balance::Cbpf,
        "{:?}",
        group.fallback_reason()
    );
    assert_even(&spread(group));
}
