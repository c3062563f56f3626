//! Group setup: receive buffer forcing and clamping, configuration validation, bind errors.

mod common;

use std::net::SocketAddr;

use common::{
    CHILD_OK, Rerun, can_bind_privileged_ports, can_net_admin, is_child, rerun_unprivileged,
    rmem_max,
};
use sluice_net::{Balance, NetError, UdpGroup, UdpGroupConfig};

fn config(sockets: usize, rcvbuf: Option<usize>) -> UdpGroupConfig {
    let mut cfg = UdpGroupConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.sockets = sockets;
    cfg.balance = Balance::Kernel;
    cfg.rcvbuf = rcvbuf;
    cfg
}

/// Ask for 4 × rmem_max. With CAP_NET_ADMIN, SO_RCVBUFFORCE must get past rmem_max; then the
/// same test re-runs as nobody without capabilities, where the clamp must be reported with the
/// sysctl hint. (rmem_max is read at run time: it changes on this shared machine.)
#[test]
fn rcvbuf_is_forced_with_privilege_and_clamp_is_reported_without() {
    let max = rmem_max();
    let requested = max.saturating_mul(4);
    let group = UdpGroup::bind(&config(2, Some(requested))).unwrap();
    let reports = group.rcvbuf_reports();
    assert_eq!(reports.len(), 2);
    println!("rmem_max={max} requested={requested} reports={reports:?}");
    for (i, r) in reports.iter().enumerate() {
        assert_eq!(r.index, i);
        assert_eq!(r.requested, Some(requested));
        if can_net_admin() {
            assert!(r.forced, "{r:?}");
            assert!(r.effective > max, "{r:?}");
            if requested <= (i32::MAX / 2) as usize {
                assert_eq!(r.effective, 2 * requested, "{r:?}");
                assert!(!r.clamped && r.sysctl_hint().is_none(), "{r:?}");
            }
        } else {
            assert!(!r.forced, "{r:?}");
            assert!(r.clamped, "{r:?}");
            assert!(r.effective < 2 * requested, "{r:?}");
            let hint = r.sysctl_hint().expect("a hint for a clamped buffer");
            println!("hint: {hint}");
            assert!(hint.contains("sysctl -w net.core.rmem_max="), "{hint}");
            assert!(hint.contains("CAP_NET_ADMIN"), "{hint}");
        }
    }
    assert_eq!(group.rcvbuf_clamped(), !can_net_admin());

    if is_child() {
        println!("{CHILD_OK}");
    } else if can_net_admin() {
        match rerun_unprivileged("rcvbuf_is_forced_with_privilege_and_clamp_is_reported_without") {
            Rerun::Ran { stdout, .. } => println!("unprivileged child:\n{stdout}"),
            Rerun::Unavailable(why) => {
                println!("SKIPPED (clamp half): cannot drop CAP_NET_ADMIN: {why}")
            }
        }
    }
}

#[test]
fn public_types_can_move_to_and_be_shared_by_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<sluice_net::UdpGroup>();
    send_sync::<sluice_net::UdpReceiver>();
    send_sync::<sluice_net::UdpSender>();
    send_sync::<sluice_net::SocketStats>();
    send_sync::<NetError>();
}

#[test]
fn kernel_default_rcvbuf_is_reported_unclamped() {
    let group = UdpGroup::bind(&config(1, None)).unwrap();
    let r = group.rcvbuf_reports()[0];
    assert_eq!(r.requested, None);
    assert!(r.effective > 0);
    assert!(!r.forced && !r.clamped);
}

#[test]
fn port_zero_gives_one_real_port_shared_by_the_group() {
    let mut group = UdpGroup::bind(&config(3, None)).unwrap();
    let addr = group.local_addr();
    assert_ne!(addr.port(), 0);
    assert_eq!(group.len(), 3);
    for rx in group.take_receivers() {
        assert_eq!(rx.local_addr().unwrap(), addr);
    }
    assert!(group.take_receivers().is_empty());
}

#[test]
fn invalid_settings_are_named() {
    type Tweak = fn(&mut UdpGroupConfig);
    let cases: Vec<(Tweak, &str)> = vec![
        (|c| c.sockets = 0, "sockets = 0"),
        (|c| c.batch = 0, "batch = 0"),
        (|c| c.batch = 1025, "batch = 1025"),
        (|c| c.max_datagram = 0, "max_datagram = 0"),
        (|c| c.max_datagram = 65_536, "max_datagram = 65536"),
        (|c| c.rcvbuf = Some(0), "rcvbuf = 0"),
    ];
    for (tweak, expect) in cases {
        let mut cfg = config(1, None);
        tweak(&mut cfg);
        let err = UdpGroup::bind(&cfg).unwrap_err();
        assert!(matches!(err, NetError::InvalidConfig { .. }), "{err:?}");
        assert!(err.to_string().contains(expect), "{err} lacks {expect}");
    }
}

#[test]
fn a_port_held_by_another_socket_is_refused_naming_the_holder() {
    // A plain socket without SO_REUSEPORT holds the port (as syslog-ng would).
    let holder = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = holder.local_addr().unwrap();
    let mut cfg = config(2, None);
    cfg.addr = addr;
    let err = UdpGroup::bind(&cfg).unwrap_err();
    let msg = err.to_string();
    println!("{msg}");
    assert!(err.is_port_in_use(), "{err:?}");
    assert!(msg.contains(&format!("UDP {addr}")), "{msg}");
    assert!(
        msg.contains(&format!("pid {}", std::process::id())),
        "{msg}"
    );
}

#[test]
fn a_second_group_on_a_port_is_refused_unless_sharing_is_allowed() {
    let mut first = config(2, None);
    first.balance = Balance::Cbpf;
    let first = UdpGroup::bind(&first).unwrap();
    let addr = first.local_addr();

    let mut second = config(2, None);
    second.addr = addr;
    let err = UdpGroup::bind(&second).unwrap_err();
    assert!(err.is_port_in_use(), "{err:?}");
    assert!(err.to_string().contains(&format!("UDP {addr}")), "{err}");

    // Sharing joins the reuseport group of the same user.
    second.claim.share = true;
    let joined = UdpGroup::bind(&second).unwrap();
    assert_eq!(joined.local_addr(), addr);
    assert_eq!(joined.len(), 2);
    // The first group's two sockets, both of this process, listed once.
    assert_eq!(joined.shared_with().len(), 1, "{:?}", joined.shared_with());
    assert_eq!(joined.shared_with()[0].pid, Some(std::process::id()));
    assert!(first.shared_with().is_empty());
}

#[test]
fn sharing_with_a_socket_without_reuseport_fails_at_bind_and_says_why() {
    let holder = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = holder.local_addr().unwrap();
    let mut cfg = config(2, None);
    cfg.addr = addr;
    cfg.claim.share = true;
    let err = UdpGroup::bind(&cfg).unwrap_err();
    let msg = err.to_string();
    println!("{msg}");
    assert_eq!(
        err.io_error().unwrap().kind(),
        std::io::ErrorKind::AddrInUse
    );
    assert!(msg.contains(&addr.to_string()), "{msg}");
    assert!(msg.contains("socket 0 of 2"), "{msg}");
    assert!(msg.contains("another socket holds this address"), "{msg}");
    assert!(msg.contains("SO_REUSEPORT"), "{msg}");
    assert!(msg.contains("ss -ulpn"), "{msg}");
}

#[test]
fn unavailable_address_names_the_address() {
    // TEST-NET-1 is not configured on any interface here.
    let mut cfg = config(1, None);
    cfg.addr = "192.0.2.1:0".parse().unwrap();
    let err = UdpGroup::bind(&cfg).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("192.0.2.1:0"), "{msg}");
    assert!(msg.contains("not configured on any interface"), "{msg}");
}

/// Without privilege, a port below net.ipv4.ip_unprivileged_port_start fails with EACCES and
/// the message says why. Runs as nobody through setpriv when the test runs as root.
#[test]
fn privileged_port_without_privilege_says_so() {
    if !is_child() && can_bind_privileged_ports() {
        match rerun_unprivileged("privileged_port_without_privilege_says_so") {
            Rerun::Ran { stdout, .. } => println!("unprivileged child:\n{stdout}"),
            Rerun::Unavailable(why) => println!("SKIPPED: cannot run as nobody: {why}"),
        }
        return;
    }
    let start: u16 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_unprivileged_port_start")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    if start <= 1 {
        println!("SKIPPED: every port is unprivileged here (ip_unprivileged_port_start={start})");
        println!("{CHILD_OK}");
        return;
    }
    let addr: SocketAddr = format!("127.0.0.1:{}", start - 1).parse().unwrap();
    let mut cfg = config(1, None);
    cfg.addr = addr;
    let err = UdpGroup::bind(&cfg).unwrap_err();
    let msg = err.to_string();
    println!("{msg}");
    assert_eq!(
        err.io_error().unwrap().kind(),
        std::io::ErrorKind::PermissionDenied
    );
    assert!(msg.contains(&addr.to_string()), "{msg}");
    assert!(msg.contains("CAP_NET_BIND_SERVICE"), "{msg}");
    assert!(
        msg.contains(&format!("ip_unprivileged_port_start = {start}")),
        "{msg}"
    );
    println!("{CHILD_OK}");
}
