//! SC4S's relay destinations end to end (issue 23): the sluice binary on real sockets relaying
//! to a real syslog-ng 3.38 (`syslog-ng-core`, installed by `.ci/run`) listening on loopback
//! over UDP, TCP and TLS with its own configuration.
//!
//! * 20,000 events (10,000 over UDP, 10,000 over TCP) reach the target once each, every
//!   line exactly as SC4S's `d_syslog_<id>` / `d_bsd_<id>` would send it (RFC 5424 with
//!   octet-counted frames over TCP and TLS, unframed over UDP; BSD lines over TCP).
//! * The target is down for 30 s with the disk buffer on: nothing is lost.
//!
//! The target writes what it received byte for byte: `flags(no-parse)` puts the whole
//! message (the frame removed, the trailing line feed stripped) in `${MSG}`, written one per
//! line.

use std::io::Write;
use std::net::{TcpStream, UdpSocket};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sluice_suite::tls::Ca;
use sluice_suite::{Daemon, DaemonOpts, free_port};

/// A syslog-ng relay target on loopback.
struct Target {
    child: Option<Child>,
    dir: PathBuf,
    conf: PathBuf,
    port: u16,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Listen {
    Udp,
    /// `network(transport(tcp))`: lines.
    TcpLines,
    /// `syslog(transport(tcp))`: octet-counted frames.
    TcpFramed,
    /// `syslog(transport(tls))`.
    TlsFramed,
}

impl Target {
    fn start(listen: Listen, ca: Option<&Ca>) -> Target {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("sluice-relay-target-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut tls = String::new();
        if let Some(ca) = ca {
            let pair = ca.server();
            std::fs::write(dir.join("server.pem"), &pair.cert_pem).unwrap();
            std::fs::write(dir.join("server.key"), &pair.key_pem).unwrap();
            tls = format!(
                "tls(key-file(\"{}\") cert-file(\"{}\") peer-verify(optional-untrusted))",
                dir.join("server.key").display(),
                dir.join("server.pem").display()
            );
        }
        let source = match listen {
            Listen::Udp => format!(
                "network(ip(127.0.0.1) port({port}) transport(udp) so-rcvbuf(33554432) \
                 log-msg-size(65536) flags(no-parse))"
            ),
            Listen::TcpLines => format!(
                "network(ip(127.0.0.1) port({port}) transport(tcp) log-msg-size(65536) \
                 flags(no-parse))"
            ),
            Listen::TcpFramed => format!(
                "syslog(ip(127.0.0.1) port({port}) transport(tcp) log-msg-size(65536) \
                 flags(no-parse))"
            ),
            Listen::TlsFramed => format!(
                "syslog(ip(127.0.0.1) port({port}) transport(tls) {tls} log-msg-size(65536) \
                 flags(no-parse))"
            ),
        };
        let conf = dir.join("syslog-ng.conf");
        std::fs::write(
            &conf,
            format!(
                "@version: 3.38\n\
                 options {{ stats_freq(0); keep-hostname(yes); use-dns(no); }};\n\
                 source s_in {{ {source}; }};\n\
                 destination d_out {{ file(\"{}\" template(\"${{MSG}}\\n\") flush-lines(1)); }};\n\
                 log {{ source(s_in); destination(d_out); }};\n",
                dir.join("received.log").display()
            ),
        )
        .unwrap();
        let mut t = Target {
            child: None,
            dir,
            conf,
            port,
        };
        t.resume();
        t
    }

    /// Starts syslog-ng (again, on the same port and file).
    fn resume(&mut self) {
        let child = Command::new("syslog-ng")
            .arg("-F")
            .arg("--no-caps")
            .arg("-f")
            .arg(&self.conf)
            .arg("-R")
            .arg(self.dir.join("persist"))
            .arg("-p")
            .arg(self.dir.join("pid"))
            .arg("-c")
            .arg(self.dir.join("ctl"))
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(self.dir.join("stderr.log")).unwrap(),
            ))
            .spawn()
            .expect("syslog-ng (syslog-ng-core) is installed");
        self.child = Some(child);
        // Listening once its control socket is there.
        let start = Instant::now();
        while !self.dir.join("ctl").exists() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "syslog-ng did not start: {}",
                std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Stops syslog-ng (SIGTERM: it writes what it read, then closes its sockets).
    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").arg(c.id().to_string()).status();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(self.dir.join("ctl"));
    }

    fn received(&self) -> Vec<Vec<u8>> {
        let text = std::fs::read(self.dir.join("received.log")).unwrap_or_default();
        text.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn wait_lines(&self, n: usize, timeout: Duration) -> Vec<Vec<u8>> {
        let start = Instant::now();
        loop {
            let got = self.received();
            if got.len() >= n || start.elapsed() > timeout {
                return got;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The input lines: RFC 5424 with a full timestamp, so the relayed time does not depend on
/// the year of the test run.
fn input(seq: u64, via: &str) -> String {
    format!("<134>1 2026-11-26T09:00:00.250Z host01 prg {seq} ID{via} - seq {seq:08} via {via}")
}

/// What SC4S's `d_syslog_<id>` sends for [`input`]: syslog-ng's RFC 5424 with a BOM before
/// MSG (SC4S parses with `assume-utf8`).
fn expected_5424(seq: u64, via: &str) -> Vec<u8> {
    format!(
        "<134>1 2026-11-26T09:00:00.250+00:00 host01 prg {seq} ID{via} - \u{feff}seq {seq:08} via {via}"
    )
    .into_bytes()
}

/// What SC4S's `d_bsd_<id>` sends for [`input`].
fn expected_bsd(seq: u64, via: &str) -> Vec<u8> {
    format!("<134>Nov 26 09:00:00.250 host01 prg[{seq}]: seq {seq:08} via {via}").into_bytes()
}

/// Sends `first..first + n` over UDP (paced, so the loopback receive buffer never overflows)
/// and TCP, half each.
fn send(d: &Daemon, first: u64, n: u64) {
    let half = n / 2;
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    for (i, seq) in (first..first + half).enumerate() {
        udp.send_to(input(seq, "udp").as_bytes(), ("127.0.0.1", d.port))
            .unwrap();
        if i % 200 == 199 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let mut tcp = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    let mut body = String::new();
    for seq in first + half..first + n {
        body.push_str(&input(seq, "tcp"));
        body.push('\n');
    }
    tcp.write_all(body.as_bytes()).unwrap();
}

fn via(seq: u64, first: u64, n: u64) -> &'static str {
    if seq - first < n / 2 { "udp" } else { "tcp" }
}

/// Every event once, byte for byte.
fn check_once(got: &[Vec<u8>], first: u64, n: u64, expect: fn(u64, &str) -> Vec<u8>, d: &Daemon) {
    let mut want: Vec<Vec<u8>> = (first..first + n)
        .map(|s| expect(s, via(s, first, n)))
        .collect();
    let mut have = got.to_vec();
    want.sort();
    have.sort();
    if have != want {
        let missing = want.iter().filter(|w| !have.contains(w)).count();
        let unexpected: Vec<String> = have
            .iter()
            .filter(|h| !want.contains(h))
            .take(3)
            .map(|h| String::from_utf8_lossy(h).into_owned())
            .collect();
        panic!(
            "{} lines received for {n} events: {missing} missing, unexpected {:?}; log:\n{}",
            have.len(),
            unexpected,
            d.log()
        );
    }
}

fn relay_opts(kind: &str, transport: &str, port: u16, extra: &[(&str, String)]) -> DaemonOpts {
    let mut o = DaemonOpts::default()
        .env(&format!("SC4S_DEST_{kind}_SIEM_HOST"), "127.0.0.1")
        .env(&format!("SC4S_DEST_{kind}_SIEM_PORT"), port)
        .env(&format!("SC4S_DEST_{kind}_SIEM_TRANSPORT"), transport);
    for (k, v) in extra {
        o = o.env(k, v);
    }
    o
}

fn relays_20k(listen: Listen, kind: &str, transport: &str, expect: fn(u64, &str) -> Vec<u8>) {
    let ca = (listen == Listen::TlsFramed).then(|| Ca::new("relay test CA"));
    let target = Target::start(listen, ca.as_ref());
    let mut extra = Vec::new();
    if let Some(ca) = &ca {
        let f = target.dir.join("ca.pem");
        std::fs::write(&f, ca.pem()).unwrap();
        extra.push((
            "SLUICE_DEST_SYSLOG_SIEM_TLS_CA_FILE",
            f.display().to_string(),
        ));
    }
    if listen == Listen::Udp {
        extra.push(("SC4S_DEST_SYSLOG_SIEM_IETF", "no".into()));
        // Bursts of at most 500 datagrams: what the target's receive buffer
        // (net.core.rmem_max) surely holds while syslog-ng catches up.
        extra.push(("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", "500".into()));
    }
    let d = Daemon::start(relay_opts(kind, transport, target.port, &extra));
    const N: u64 = 20_000;
    send(&d, 0, N);
    let got = target.wait_lines(N as usize, Duration::from_secs(90));
    // Nothing more comes.
    std::thread::sleep(Duration::from_millis(500));
    let got = if got.len() as u64 == N {
        target.received()
    } else {
        got
    };
    check_once(&got, 0, N, expect, &d);
    let m = d.metrics();
    assert_eq!(
        m.sum("sluice_delivered_total", &["destination=\"syslog_siem\""])
            + m.sum("sluice_delivered_total", &["destination=\"bsd_siem\""]),
        N as f64
    );
}

#[test]
fn rfc5424_framed_over_tcp_20k_events_once_in_sc4s_format() {
    relays_20k(Listen::TcpFramed, "SYSLOG", "tcp", expected_5424);
}

#[test]
fn rfc5424_over_udp_20k_events_once_in_sc4s_format() {
    relays_20k(Listen::Udp, "SYSLOG", "udp", expected_5424);
}

#[test]
fn rfc5424_framed_over_tls_20k_events_once_in_sc4s_format() {
    relays_20k(Listen::TlsFramed, "SYSLOG", "tls", expected_5424);
}

#[test]
fn bsd_over_tcp_20k_events_once_in_sc4s_format() {
    relays_20k(Listen::TcpLines, "BSD", "tcp", expected_bsd);
}

/// The target is down for 30 s while events keep coming: the disk buffer keeps them and
/// replays them once it is back. (What a target had already taken into its socket when it
/// stopped is beyond any syslog sender; the test stops it between batches.)
#[test]
fn target_down_30s_with_the_buffer_nothing_lost() {
    let mut target = Target::start(Listen::TcpFramed, None);
    let d = Daemon::start(relay_opts("SYSLOG", "tcp", target.port, &[]));
    const N: u64 = 4_000;
    send(&d, 0, N);
    let got = target.wait_lines(N as usize, Duration::from_secs(60));
    assert_eq!(got.len() as u64, N, "before the outage; log:\n{}", d.log());
    target.stop();
    let down = Instant::now();
    // Events keep coming for the 30 s the target is down.
    for round in 0..10u64 {
        send(&d, N + round * N, N);
        std::thread::sleep(Duration::from_secs(3));
    }
    let total = N * 11;
    assert!(down.elapsed() >= Duration::from_secs(30));
    let m = d.metrics();
    assert!(
        m.sum(
            "sluice_buffer_appended_events_total",
            &["destination=\"syslog_siem\""]
        ) > 0.0,
        "the buffer took the outage; log:\n{}",
        d.log()
    );
    target.resume();
    let got = target.wait_lines(total as usize, Duration::from_secs(120));
    let mut seqs: Vec<u64> = got
        .iter()
        .filter_map(|l| {
            let t = String::from_utf8_lossy(l);
            t.split("seq ").nth(1)?.split(' ').next()?.parse().ok()
        })
        .collect();
    seqs.sort_unstable();
    let received = seqs.len();
    seqs.dedup();
    assert_eq!(
        seqs.len() as u64,
        total,
        "{} distinct of {total} ({received} lines); log:\n{}",
        seqs.len(),
        d.log()
    );
    eprintln!(
        "outage: {total} events, {} duplicates",
        received - seqs.len()
    );
}

/// A relay whose name does not resolve and one whose TLS handshake is refused (the target's
/// certificate is not trusted): each a clear log line and a counted error, and the other
/// destination (the JSON-lines file) gets every event meanwhile.
#[test]
fn an_unresolvable_relay_and_a_refused_tls_handshake_stall_no_other_destination() {
    let ca = Ca::new("untrusted CA");
    let target = Target::start(Listen::TlsFramed, Some(&ca));
    let d = Daemon::start(
        DaemonOpts::default()
            .env("SC4S_DEST_SYSLOG_GONE_HOST", "no-such-relay.invalid")
            .env("SC4S_DEST_SYSLOG_GONE_DISKBUFF_ENABLE", "no")
            .env("SC4S_DEST_SYSLOG_PICKY_HOST", "127.0.0.1")
            .env("SC4S_DEST_SYSLOG_PICKY_PORT", target.port)
            .env("SC4S_DEST_SYSLOG_PICKY_TRANSPORT", "tls")
            .env("SC4S_DEST_SYSLOG_PICKY_DISKBUFF_ENABLE", "no"),
    );
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    for seq in 0..100 {
        s.write_all(format!("{}\n", input(seq, "tcp")).as_bytes())
            .unwrap();
    }
    let start = Instant::now();
    while d.file_events().len() < 100 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(d.file_events().len(), 100, "log:\n{}", d.log());
    let errors = |dest: &str, kind: &str| {
        d.metrics().sum(
            "sluice_forward_errors_total",
            &[
                &format!("destination=\"{dest}\""),
                &format!("kind=\"{kind}\""),
            ],
        )
    };
    let start = Instant::now();
    while (errors("syslog_gone", "resolve") < 1.0 || errors("syslog_picky", "tls") < 1.0)
        && start.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(errors("syslog_gone", "resolve") >= 1.0, "log:\n{}", d.log());
    assert!(errors("syslog_picky", "tls") >= 1.0, "log:\n{}", d.log());
    let log = d.log();
    assert!(log.contains("no-such-relay.invalid"), "{log}");
    assert!(log.contains("TLS handshake"), "{log}");
    assert!(target.received().is_empty());
}
