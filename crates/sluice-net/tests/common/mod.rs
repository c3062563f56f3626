//! Helpers shared by the integration tests: capabilities, re-running a test unprivileged,
//! concurrent draining of a group, and `/proc/net/udp`.
#![allow(dead_code)]

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use sluice_net::{UdpReceiver, UdpSender, UdpSenderConfig};

/// Set in the environment of a test re-run by [`rerun_unprivileged`].
pub const CHILD_MARKER: &str = "SLUICE_NET_TEST_UNPRIVILEGED_CHILD";
/// Printed by a child test that reached its end.
pub const CHILD_OK: &str = "SLUICE-NET-CHILD-OK";

const CAP_NET_BIND_SERVICE: u32 = 10;
const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_BPF: u32 = 39;

fn cap_eff() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .expect("CapEff line")
        .trim();
    u64::from_str_radix(hex, 16).expect("CapEff hex")
}

fn euid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .expect("Uid line");
    line.split_whitespace()
        .nth(1)
        .expect("effective uid")
        .parse()
        .expect("uid number")
}

pub fn can_bpf() -> bool {
    cap_eff() & ((1 << CAP_BPF) | (1 << CAP_SYS_ADMIN)) != 0
}

pub fn can_bind_privileged_ports() -> bool {
    cap_eff() & (1 << CAP_NET_BIND_SERVICE) != 0
}

pub fn can_net_admin() -> bool {
    cap_eff() & (1 << CAP_NET_ADMIN) != 0
}

pub fn is_child() -> bool {
    std::env::var_os(CHILD_MARKER).is_some()
}

pub fn rmem_max() -> usize {
    std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .expect("read rmem_max")
        .trim()
        .parse()
        .expect("rmem_max number")
}

/// Outcome of trying to re-run the current test without privileges.
pub enum Rerun {
    /// The child ran; its stdout and stderr.
    Ran { stdout: String, stderr: String },
    /// It could not be run; why.
    Unavailable(String),
}

/// Re-run test `name` of the current test binary as `nobody` with every capability dropped
/// (`setpriv`), with [`CHILD_MARKER`] set, and check it printed [`CHILD_OK`].
pub fn rerun_unprivileged(name: &str) -> Rerun {
    if euid() != 0 {
        return Rerun::Unavailable("not root, cannot switch to nobody".into());
    }
    let exe = std::env::current_exe().expect("current test executable");
    let out = match Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
        ])
        .arg(&exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_MARKER, "1")
        .output()
    {
        Ok(out) => out,
        Err(e) => return Rerun::Unavailable(format!("setpriv unavailable: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stdout.contains(CHILD_OK),
        "unprivileged re-run of {name} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    Rerun::Ran { stdout, stderr }
}

/// Where a sender on this host reaches a group bound to `bound`.
pub fn dest_for(bound: SocketAddr) -> SocketAddr {
    let ip = match bound.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bound.port())
}

/// Result of [`send_and_drain`].
#[derive(Debug)]
pub struct Drained {
    pub per_socket: Vec<u64>,
    pub drops: Vec<u64>,
    pub sent: u64,
}

impl Drained {
    pub fn received(&self) -> u64 {
        self.per_socket.iter().sum()
    }
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// Send `count` small datagrams from one sender (one 4-tuple) to `dest` while one thread per
/// receiver drains concurrently. The sender keeps at most `max_in_flight` datagrams unreceived
/// so a slow receive thread on a loaded machine cannot overflow its buffer.
pub fn send_and_drain(
    receivers: Vec<UdpReceiver>,
    dest: SocketAddr,
    count: u64,
    max_in_flight: u64,
) -> Drained {
    let total = Arc::new(AtomicU64::new(0));
    let done_sending = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for mut rx in receivers {
        let total = total.clone();
        let done_sending = done_sending.clone();
        handles.push(thread::spawn(move || {
            rx.set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut idle_since: Option<Instant> = None;
            let mut mine = 0u64;
            loop {
                let n = rx.recv(64).unwrap().len() as u64;
                mine += n;
                let all = total.fetch_add(n, Ordering::Relaxed) + n;
                if n > 0 {
                    idle_since = None;
                } else if done_sending.load(Ordering::Relaxed) {
                    let since = *idle_since.get_or_insert_with(Instant::now);
                    if all >= count || since.elapsed() > Duration::from_secs(3) {
                        break;
                    }
                }
                if Instant::now() > deadline {
                    break;
                }
            }
            // Pick up drops no datagram reported.
            rx.refresh_kernel_drops().unwrap();
            assert_eq!(rx.stats().received(), mine);
            (rx.index(), mine, rx.stats().kernel_drops())
        }));
    }

    let mut sender = UdpSender::connect(&UdpSenderConfig::new(dest)).unwrap();
    let payloads: Vec<Vec<u8>> = (0..64)
        .map(|i| format!("<13>datagram {i:04}").into_bytes())
        .collect();
    let batch: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    let mut sent = 0u64;
    let send_deadline = Instant::now() + Duration::from_secs(120);
    while sent < count {
        while sent - total.load(Ordering::Relaxed) > max_in_flight {
            assert!(Instant::now() < send_deadline, "receivers stopped draining");
            thread::sleep(Duration::from_micros(200));
        }
        let n = (count - sent).min(batch.len() as u64) as usize;
        sender.send_all(&batch[..n]).unwrap();
        sent += n as u64;
    }
    done_sending.store(true, Ordering::Relaxed);

    let mut results: Vec<(usize, u64, u64)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    results.sort();
    Drained {
        per_socket: results.iter().map(|r| r.1).collect(),
        drops: results.iter().map(|r| r.2).collect(),
        sent,
    }
}

/// The `drops` column of `/proc/net/udp` (or `udp6`) for the socket bound to `addr`, which must
/// be the only socket on that port.
pub fn proc_udp_drops(addr: SocketAddr) -> u64 {
    let file = if addr.is_ipv4() {
        "/proc/net/udp"
    } else {
        "/proc/net/udp6"
    };
    let text = std::fs::read_to_string(file).unwrap();
    let port = format!(":{:04X}", addr.port());
    let lines: Vec<&str> = text
        .lines()
        .skip(1)
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|local| local.ends_with(&port))
        })
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one socket on {addr} in {file}: {lines:?}"
    );
    lines[0].split_whitespace().last().unwrap().parse().unwrap()
}
