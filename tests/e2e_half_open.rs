//! Half-open connections: senders that vanish without a FIN or RST (powered off, unplugged,
//! a firewall that forgot the flow). From the server's side nothing happens at all, so only
//! sluice's own timers can reclaim them: the idle timeout between frames, the frame deadline
//! for one cut mid-message (what arrived is delivered, tagged), and TCP keepalive when the
//! idle timeout is off. Meanwhile the other senders are unaffected and memory stays bounded.
//!
//! A real vanishing needs packets dropped, which needs a firewall rule; on this shared
//! machine that would touch everyone, so the test re-runs itself in a network namespace of
//! its own (`unshare --net`, root only). There the half-open clients connect to 127.0.0.2
//! and, once their messages are in, an iptables rule drops everything they send to the
//! daemon — their FINs included — while senders on 127.0.0.1 go through.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, loggen, sink};

const INNER: &str = "SLUICE_E2E_HALF_OPEN_INNER";
const NAME: &str = "half_open_connections_are_reclaimed_with_bounded_memory";

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

fn sh(cmd: &str, args: &[&str]) {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// From now on, nothing the clients on 127.0.0.2 send reaches the daemon's `port`.
fn vanish(port: u16) {
    sh(
        "iptables",
        &[
            "-I",
            "INPUT",
            "-d",
            "127.0.0.2",
            "-p",
            "tcp",
            "--dport",
            &port.to_string(),
            "-j",
            "DROP",
        ],
    );
}

/// Server-side connections of `port` that are still established, and how many of them have
/// a keepalive timer armed.
fn established(port: u16) -> (usize, usize) {
    let out = Command::new("ss")
        .args(["-tnoH", "state", "established"])
        .arg(format!("( sport = :{port} )"))
        .output()
        .expect("ss (iproute2)");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let keepalive = lines.iter().filter(|l| l.contains("keepalive")).count();
    (lines.len(), keepalive)
}

fn open(addr: SocketAddr, n: usize, partial_every: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|i| {
            let mut c = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
            let mut msg = format!("<13>Nov 22 10:00:00 host app: half-open {i}\n");
            if partial_every > 0 && i % partial_every == 0 {
                msg.push_str(&format!("<13>Nov 22 10:00:00 host app: cut short {i}"));
            }
            c.write_all(msg.as_bytes()).unwrap();
            c
        })
        .collect()
}

/// Idle and mid-frame half-open connections are closed by the idle timeout and the frame
/// deadline; a sender on another address gets through meanwhile; memory stays bounded.
fn by_the_timeouts() {
    const N: usize = 1000;
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SLUICE_LISTEN_ADDRESS", "0.0.0.0")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SLUICE_TCP_IDLE_TIMEOUT", 8)
            .env("SLUICE_TCP_FRAME_TIMEOUT", 8),
    );
    let before = rss_kib(d.pid());
    let conns = open(SocketAddr::from(([127, 0, 0, 2], d.port)), N, 2);
    assert!(
        s.wait_for(N as u64, Duration::from_secs(30)),
        "got {} of {N}; log:\n{}",
        s.accepted_events(),
        d.log()
    );
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_tcp_open_connections", &[]) == N as f64
    });
    let with_connections = rss_kib(d.pid());

    vanish(d.port);
    let cut = Instant::now();
    drop(conns); // FINs dropped: the daemon is never told
    let (open_now, keepalive) = established(d.port);
    assert!(
        open_now > 0,
        "the daemon still sees the vanished connections"
    );
    assert_eq!(
        keepalive, open_now,
        "every accepted connection has TCP keepalive armed"
    );

    // Another sender is not held up by a thousand dead connections.
    let sent = loggen(&[
        "-i",
        "-S",
        "-r",
        "5000",
        "-n",
        "2000",
        "127.0.0.1",
        &d.port.to_string(),
    ]);
    assert_eq!(sent, 2000);

    let m = d.wait_metrics(Duration::from_secs(40), |m| {
        m.sum("sluice_tcp_closed_total", &["reason=\"idle_timeout\""]) == (N / 2) as f64
            && m.sum("sluice_tcp_closed_total", &["reason=\"frame_timeout\""]) == (N / 2) as f64
            && m.sum("sluice_tcp_open_connections", &[]) == 0.0
    });
    let reclaimed_after = cut.elapsed();
    let total = (N + N / 2) as u64 + sent;
    assert!(
        s.wait_for(total, Duration::from_secs(20)),
        "got {} of {total}",
        s.accepted_events()
    );
    std::thread::sleep(Duration::from_millis(300));
    let events = s.events();
    assert_eq!(events.len() as u64, total, "each message once");
    let cut_short = events
        .iter()
        .filter(|e| {
            e["event"].as_str().is_some_and(|t| t.contains("cut short"))
                && e["fields"]["sc4s_tags"]
                    .as_str()
                    .is_some_and(|t| t.ends_with("|sluice:frame_timeout"))
        })
        .count();
    assert_eq!(cut_short, N / 2, "each cut frame delivered once, tagged");
    assert_eq!(
        m.sum("sluice_tcp_closed_total", &[]),
        m.sum("sluice_tcp_connections_total", &[]),
        "every connection closed for a reason: {m:?}"
    );
    let after = rss_kib(d.pid());
    let log = d.log();
    assert!(log.contains("closing a connection idle for"), "{log}");
    assert!(log.contains("did not complete a frame"), "{log}");
    println!(
        "{N} half-open connections reclaimed {reclaimed_after:.1?} after they vanished \
         (idle/frame timeout 8 s); daemon RSS {before} KiB at start, {with_connections} KiB \
         with them open, {after} KiB after"
    );
    assert!(
        with_connections.saturating_sub(before) < 64 * 1024,
        "{N} connections cost {} KiB",
        with_connections - before
    );
    assert!(
        after <= with_connections + 16 * 1024,
        "memory grew after the reclaim: {with_connections} -> {after} KiB"
    );
}

/// With the idle timeout off, TCP keepalive finds them (`dead_peer`).
fn by_keepalive() {
    const N: usize = 200;
    let s = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&s)
            .env("SLUICE_LISTEN_ADDRESS", "0.0.0.0")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SLUICE_TCP_IDLE_TIMEOUT", 0)
            .env("SLUICE_TCP_KEEPALIVE", 1),
    );
    let conns = open(SocketAddr::from(([127, 0, 0, 2], d.port)), N, 0);
    assert!(s.wait_for(N as u64, Duration::from_secs(30)));
    vanish(d.port);
    let cut = Instant::now();
    drop(conns);
    let m = d.wait_metrics(Duration::from_secs(40), |m| {
        m.sum("sluice_tcp_closed_total", &["reason=\"dead_peer\""]) == N as f64
    });
    assert_eq!(m.sum("sluice_tcp_open_connections", &[]), 0.0);
    assert_eq!(
        m.sum("sluice_tcp_closed_total", &["reason=\"idle_timeout\""]),
        0.0
    );
    assert!(
        d.log().contains("closing a half-open connection"),
        "{}",
        d.log()
    );
    println!(
        "{N} half-open connections found by keepalive (1 s, 6 probes) {:.1?} after they vanished",
        cut.elapsed()
    );
}

#[test]
fn half_open_connections_are_reclaimed_with_bounded_memory() {
    if std::env::var_os(INNER).is_some() {
        sh("ip", &["link", "set", "lo", "up"]);
        let l = sluice_net::raise_fd_limit().expect("RLIMIT_NOFILE");
        assert!(
            l.now >= 4000,
            "needs 4000 file descriptors, hard limit {}",
            l.hard
        );
        by_the_timeouts();
        by_keepalive();
        return;
    }
    if !is_root() {
        println!("SKIPPED: dropping a sender's packets needs a network namespace (root)");
        return;
    }
    for (tool, package) in [
        ("unshare", "util-linux"),
        ("ip", "iproute2"),
        ("ss", "iproute2"),
        ("iptables", "iptables"),
    ] {
        if let Err(e) = Command::new(tool).arg("--version").output() {
            panic!("{tool} is needed ({e}): apt-get install {package} (.ci/run does)");
        }
    }
    let probe = Command::new("unshare")
        .args([
            "--net",
            "sh",
            "-c",
            "ip link set lo up && iptables -L INPUT -n",
        ])
        .output()
        .unwrap();
    if !probe.status.success() {
        println!(
            "SKIPPED: the kernel refused a network namespace with a firewall: {}",
            String::from_utf8_lossy(&probe.stderr)
        );
        return;
    }
    // Built here, so the run inside the namespace finds it up to date.
    sluice_suite::sluice_bin();
    let out = Command::new("unshare")
        .args(["--net", "--"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture", "--test-threads", "1"])
        .env(INNER, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the test ran: {stdout}");
}
