//! Acceptance: reload without a restart (issue 14). Under UDP load, a SIGHUP that brings a new
//! `splunk_metadata.csv` loses and duplicates nothing, keeps every socket, and events after it
//! carry the new index; an invalid file is rejected whole while the old configuration keeps
//! running; a changed UDP port is open before the old one closes.

use std::collections::BTreeSet;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, SinkHandle, heavy, loggen, send_udp, sink, sluice_bin};

/// A directory of the test's own for the files it rewrites while the daemon runs.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-reload-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Replaces `path` in one step (write aside, rename), as configuration management does, so
/// the daemon never reads half a file.
fn replace_file(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

// The senders are loggen, whose lines SC4S classifies as `syslogng_loggen`: the metadata
// rows key on that.
fn metadata_toml(csv: &Path) -> String {
    format!("[parse]\nmetadata_csv = \"{}\"\n", csv.display())
}

/// Inodes of the UDP sockets bound to `port` (from /proc/net/udp and udp6).
fn udp_inodes(port: u16) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for table in ["/proc/net/udp", "/proc/net/udp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let Some(local) = cols.get(1) else { continue };
            let p = local
                .rsplit(':')
                .next()
                .and_then(|h| u16::from_str_radix(h, 16).ok());
            if p == Some(port)
                && let Some(inode) = cols.get(9).and_then(|i| i.parse().ok())
            {
                out.insert(inode);
            }
        }
    }
    out
}

/// Socket inodes among the open file descriptors of `pid`.
fn socket_fds(pid: u32) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fd")).expect("read /proc/pid/fd") {
        let Ok(target) = std::fs::read_link(e.expect("fd entry").path()) else {
            continue;
        };
        let t = target.to_string_lossy();
        if let Some(i) = t.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')) {
            out.insert(i.parse().expect("socket inode"));
        }
    }
    out
}

/// The loggen sequence number and index of every event the sink received.
fn seq_and_index(sink: &SinkHandle) -> Vec<(u64, String)> {
    sink.events()
        .iter()
        .map(|e| {
            let text = e["event"].as_str().expect("event text");
            let seq = sluice_bench::parse_seq(text)
                .map(|id| id.seq)
                .unwrap_or_else(|| panic!("no loggen seq in {text:?}"));
            (seq, e["index"].as_str().unwrap_or("").to_owned())
        })
        .collect()
}

fn received(d: &Daemon) -> u64 {
    d.metrics().sum("sluice_received_total", &[]) as u64
}

/// Runs loggen over UDP at 10k/s for `secs` on a thread; returns how many it sent.
fn udp_load(port: u16, secs: u32) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let (port, secs) = (port.to_string(), secs.to_string());
        loggen(&[
            "-i",
            "-D",
            "-r",
            "10000",
            "-I",
            &secs,
            "-s",
            "300",
            "127.0.0.1",
            &port,
        ])
    })
}

/// Waits for every sent event at the sink and checks none is missing or doubled, and that the
/// kernel dropped nothing (so a loss could only be sluice's).
fn all_delivered_once(d: &Daemon, sink: &SinkHandle, sent: u64) {
    assert!(
        sink.wait_for(sent, Duration::from_secs(60)),
        "sink has {} of {sent}; log:\n{}",
        sink.accepted_events(),
        d.log()
    );
    std::thread::sleep(Duration::from_millis(300));
    let report = sink.seq_report(None);
    assert_eq!(report.distinct, sent, "{report:?}");
    assert_eq!(report.duplicates, 0, "{report:?}");
    assert_eq!(sink.accepted_events(), sent, "{report:?}");
    let m = d.metrics();
    assert_eq!(m.sum("sluice_kernel_dropped_total", &[]), 0.0);
}

#[test]
fn reload_under_load_keeps_sockets_loses_nothing_and_applies_the_new_index() {
    let _heavy = heavy();
    let dir = scratch("load");
    let csv = dir.join("splunk_metadata.csv");
    replace_file(&csv, "syslogng_loggen,index,before\n");
    let sink = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .toml(&metadata_toml(&csv))
            .env("SLUICE_UDP_BALANCE", "kernel"),
    );
    let sockets = udp_inodes(d.port);
    assert_eq!(sockets.len(), 4, "the UDP port's sockets");
    assert!(sockets.is_subset(&socket_fds(d.pid())));

    let load = udp_load(d.port, 10);
    // Halfway: about 50,000 of 100,000 sent.
    d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_received_total", &[]) >= 45_000.0
    });
    let before_reload = received(&d);
    replace_file(&csv, "syslogng_loggen,index,after\n");
    let reloads = d.log_count("configuration reloaded");
    d.sighup();
    d.wait_for_log_after("configuration reloaded", reloads, Duration::from_secs(10));
    // Every batch that was under way at the swap has been counted by now.
    std::thread::sleep(Duration::from_millis(200));
    let after_reload = received(&d);
    assert!(
        after_reload < 95_000,
        "the reload happened under load ({after_reload})"
    );

    // Same process, same sockets.
    assert_eq!(
        udp_inodes(d.port),
        sockets,
        "the UDP sockets were not reopened"
    );
    assert!(sockets.is_subset(&socket_fds(d.pid())));

    let sent = load.join().expect("loggen");
    assert!(sent >= 90_000, "loggen sent {sent}");
    all_delivered_once(&d, &sink, sent);
    let m = d.metrics();
    assert_eq!(m.sum("sluice_reload_total", &["result=\"ok\""]), 1.0);
    assert_eq!(m.sum("sluice_reload_total", &["result=\"failed\""]), 0.0);

    // One sender is one flow, read in order by one socket: the events received before the
    // reload began carry the old index, those received after it finished the new one.
    let events = seq_and_index(&sink);
    let mut counts = (0, 0);
    for (seq, index) in &events {
        if *seq < before_reload {
            assert_eq!(
                index, "before",
                "seq {seq} (reload began at {before_reload})"
            );
        } else if *seq > after_reload {
            assert_eq!(index, "after", "seq {seq} (reload done at {after_reload})");
        }
        match index.as_str() {
            "before" => counts.0 += 1,
            "after" => counts.1 += 1,
            other => panic!("unexpected index {other:?}"),
        }
    }
    assert!(counts.0 >= 40_000 && counts.1 >= 5_000, "{counts:?}");
    eprintln!(
        "sent {sent}; reload between {before_reload} and {after_reload}; index before/after {counts:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_invalid_file_is_rejected_whole_and_the_old_configuration_keeps_running() {
    let _heavy = heavy();
    let dir = scratch("invalid");
    let csv = dir.join("splunk_metadata.csv");
    let pid_file = dir.join("sluice.pid");
    replace_file(&csv, "syslogng_loggen,index,before\n");
    let sink = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .toml(&metadata_toml(&csv))
            .env("SLUICE_PID_FILE", pid_file.display()),
    );
    assert_eq!(
        std::fs::read_to_string(&pid_file).unwrap().trim(),
        d.pid().to_string()
    );
    let hash = |d: &Daemon| {
        let m = d.metrics();
        let k =
            m.0.keys()
                .find(|k| k.starts_with("sluice_config_hash_info{"))
                .cloned();
        k.expect("sluice_config_hash_info")
    };
    let hash_before = hash(&d);
    let sockets = udp_inodes(d.port);

    let load = udp_load(d.port, 6);
    d.wait_metrics(Duration::from_secs(30), |m| {
        m.sum("sluice_received_total", &[]) >= 25_000.0
    });
    // A row with two fields: the whole file, and so the whole reload, is rejected.
    replace_file(&csv, "syslogng_loggen,index,after\nsyslogng_loggen,index\n");
    let rejected = d.log_count("reload rejected");
    d.sighup();
    d.wait_for_log_after("reload rejected", rejected, Duration::from_secs(10));
    let log = d.log();
    let line = log
        .lines()
        .find(|l| l.contains("reload rejected"))
        .expect("log line");
    assert!(
        line.contains(&csv.display().to_string()) && line.contains("line 2"),
        "the log names the file and the line: {line}"
    );

    // `sluice reload` (POST /reload) gets the same answer and exits 1.
    let (code, stdout) = reload_cli(&d);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("line 2"), "{stdout}");

    let sent = load.join().expect("loggen");
    all_delivered_once(&d, &sink, sent);
    let m = d.metrics();
    assert_eq!(m.sum("sluice_reload_total", &["result=\"failed\""]), 2.0);
    assert_eq!(m.sum("sluice_reload_total", &["result=\"ok\""]), 0.0);
    assert_eq!(
        hash(&d),
        hash_before,
        "the loaded configuration is unchanged"
    );
    assert_eq!(udp_inodes(d.port), sockets);
    let events = seq_and_index(&sink);
    assert!(
        events.iter().all(|(_, i)| i == "before"),
        "every event has the old configuration's index"
    );

    // Fixed, it loads: `sluice reload --pid-file` signals the daemon.
    replace_file(&csv, "syslogng_loggen,index,after\n");
    let reloaded = d.log_count("configuration reloaded");
    let out = Command::new(sluice_bin())
        .args(["reload", "--pid-file"])
        .arg(&pid_file)
        .output()
        .expect("sluice reload --pid-file");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    d.wait_for_log_after("configuration reloaded", reloaded, Duration::from_secs(10));
    // Counted by the caller after the reload logged its line.
    d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_reload_total", &["result=\"ok\""]) == 1.0
    });
    assert_ne!(hash(&d), hash_before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_udp_port_is_open_before_the_old_one_closes() {
    let d = Daemon::start(DaemonOpts::default().env_file(""));
    let old = d.port;
    let new = sluice_suite::free_port();
    let old_sockets = udp_inodes(old);
    assert_eq!(old_sockets.len(), 4);

    // Watch both ports from the kernel's tables while the reload runs.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let watcher = std::thread::spawn(move || {
        let mut samples = Vec::new();
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            samples.push((!udp_inodes(old).is_empty(), !udp_inodes(new).is_empty()));
        }
        samples
    });
    send_udp(
        d.udp_addr(),
        &[b"<13>Nov 24 10:00:00 host prog[1]: to the old port".as_slice(); 500],
    );
    d.rewrite_env_file(&format!("SC4S_LISTEN_DEFAULT_UDP_PORT={new}"));
    let reloads = d.log_count("configuration reloaded");
    d.sighup();
    d.wait_for_log_after("configuration reloaded", reloads, Duration::from_secs(10));
    let deadline = Instant::now() + Duration::from_millis(300);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let samples = watcher.join().expect("watcher");
    assert!(samples.len() > 10, "{} samples", samples.len());
    assert!(
        samples.iter().all(|&(o, n)| o || n),
        "a moment with neither port open"
    );
    assert_eq!(samples.first(), Some(&(true, false)));
    assert_eq!(samples.last(), Some(&(false, true)));

    // The log says the same, in order.
    let log = d.log();
    let opened = log
        .find(&format!("listening on UDP addr=127.0.0.1:{new}"))
        .expect("new port opened");
    let closed = log
        .find(&format!(
            "closed UDP port (no longer configured) port={old}"
        ))
        .expect("old port closed");
    assert!(opened < closed, "log:\n{log}");

    // The old port is free again and its sockets are gone from the process; the new one
    // receives.
    assert!(UdpSocket::bind(("127.0.0.1", old)).is_ok());
    assert!(old_sockets.is_disjoint(&socket_fds(d.pid())));
    assert_eq!(udp_inodes(new).len(), 4);
    send_udp(
        std::net::SocketAddr::from(([127, 0, 0, 1], new)),
        &[b"<13>Nov 24 10:00:00 host prog[1]: to the new port".as_slice(); 500],
    );
    let start = Instant::now();
    while d.file_events().len() < 1000 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let events = d.file_events();
    assert_eq!(events.len(), 1000, "log:\n{}", d.log());
    let to_new = events
        .iter()
        .filter(|e| e["event"].as_str().unwrap().contains("new port"))
        .count();
    assert_eq!(to_new, 500);
}

#[test]
fn sighup_reloads_certificates_and_a_new_tls_setup_keeps_open_connections() {
    use sluice_suite::tls::{Ca, client_config, connect};
    use std::io::Write;
    let dir = scratch("tls");
    let ca = Ca::new("reload CA");
    let first = ca.server();
    first.install(&dir);
    let sink = sink();
    let tls_port = sluice_suite::free_port();
    // Certificates change only on request here: no file watch.
    let tls_env = format!(
        "SC4S_SOURCE_TLS_ENABLE=yes\nSC4S_TLS={}\nSC4S_LISTEN_DEFAULT_TLS_PORT={tls_port}\n\
         SC4S_LISTEN_DEFAULT_RFC5425_PORT=disabled\nSLUICE_TLS_RELOAD_INTERVAL=0\n\
         SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT=50",
        dir.display()
    );
    let d = Daemon::start(DaemonOpts::default().hec(&sink).env_file(&tls_env));
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], tls_port));
    let (cfg, seen) = client_config(None);
    let line = |tag: &str, i: usize| format!("<13>Nov 24 10:00:00 host app: {tag} {i}\n");
    let send = |tag: &str| {
        let mut s = connect(addr, &cfg).expect("handshake");
        for i in 0..50 {
            s.write_all(line(tag, i).as_bytes()).unwrap();
        }
        s.flush().unwrap();
        s.conn.send_close_notify();
        let _ = s.flush();
    };
    let mut long = connect(addr, &cfg).expect("handshake");
    let mut long_send = |tag: &str| {
        for i in 0..50 {
            long.write_all(line(tag, i).as_bytes()).unwrap();
        }
        long.flush().unwrap();
    };
    long_send("long-1");
    let reload = |what: &str| {
        let n = d.log_count(what);
        d.sighup();
        d.wait_for_log_after(what, n, Duration::from_secs(10));
    };

    // 1. A new pair: SIGHUP loads it for new handshakes.
    let second = ca.server();
    second.install(&dir);
    reload("configuration reloaded");
    send("second-cert");
    assert_eq!(seen.seen.lock().unwrap().last(), Some(&second.der));
    long_send("long-2");

    // 2. New TLS options (TLS 1.3 only): a new TLS setup, the TLS port's listener is
    //    replaced; the connection opened before carries on.
    d.rewrite_env_file(&format!(
        "{tls_env}\nSC4S_SOURCE_TLS_OPTIONS=no-sslv2,no-sslv3,no-tlsv1,no-tlsv12"
    ));
    reload("configuration reloaded");
    assert!(
        d.log()
            .contains(&format!("TCP replaced {tls_port}, new TLS setup")),
        "{}",
        d.log()
    );
    send("tls13-only");
    long_send("long-3");

    // 3. A broken pair (another certificate's key): the reload is rejected whole and the
    //    second certificate stays in service.
    std::fs::write(dir.join("server.pem"), &ca.server().cert_pem).unwrap();
    reload("reload rejected");
    send("after-broken");
    assert_eq!(seen.seen.lock().unwrap().last(), Some(&second.der));
    long_send("long-4");
    long.conn.send_close_notify();
    let _ = long.flush();
    drop(long);

    assert!(
        sink.wait_for(7 * 50, Duration::from_secs(30)),
        "sink has {}; log:\n{}",
        sink.accepted_events(),
        d.log()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(sink.accepted_events(), 7 * 50, "every line once");
    let m = d.metrics();
    assert_eq!(m.sum("sluice_reload_total", &["result=\"ok\""]), 2.0);
    assert_eq!(m.sum("sluice_reload_total", &["result=\"failed\""]), 1.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_udp_port_given_to_another_vendor_keeps_its_sockets() {
    let vendor_port = sluice_suite::free_port();
    let d = Daemon::start(
        DaemonOpts::default().env_file(&format!("SC4S_LISTEN_CISCO_ASA_UDP_PORT={vendor_port}")),
    );
    let sockets = udp_inodes(vendor_port);
    assert_eq!(sockets.len(), 4);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], vendor_port));
    let msg = b"<13>Nov 24 10:00:00 fw1 app[1]: hello".as_slice();
    let wait_events = |n: usize| {
        let start = Instant::now();
        while d.file_events().len() < n && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let events = d.file_events();
        assert_eq!(events.len(), n, "log:\n{}", d.log());
        events
    };
    send_udp(addr, &[msg; 200]);
    wait_events(200);

    d.rewrite_env_file(&format!("SC4S_LISTEN_PALOALTO_FW_UDP_PORT={vendor_port}"));
    let reloads = d.log_count("configuration reloaded");
    d.sighup();
    d.wait_for_log_after("configuration reloaded", reloads, Duration::from_secs(10));
    assert!(
        d.log().contains(&format!("UDP restarted {vendor_port}")),
        "{}",
        d.log()
    );
    assert_eq!(udp_inodes(vendor_port), sockets, "same sockets");
    assert!(sockets.is_subset(&socket_fds(d.pid())));
    send_udp(addr, &[msg; 200]);
    let events = wait_events(400);
    let vendors: Vec<&str> = events
        .iter()
        .map(|e| e["fields"]["sc4s_vendor"].as_str().unwrap_or(""))
        .collect();
    assert!(vendors[..200].iter().all(|v| *v == "cisco"), "{vendors:?}");
    assert!(
        vendors[200..].iter().all(|v| *v == "paloalto"),
        "{vendors:?}"
    );
    // Each listener id keeps what it received: the port's series under the old id stop, the
    // new id's start, and the port's total goes on.
    let m = d.metrics();
    let under = |id: &str| {
        m.sum(
            "sluice_received_total",
            &[&format!("listener=\"{id}\""), "transport=\"udp\""],
        )
    };
    assert_eq!(under("CISCO_ASA"), 200.0, "{m:?}");
    assert_eq!(under("PALOALTO_FW"), 200.0, "{m:?}");
}

/// The message of a failed `sluice run --check`, without its prefixes.
fn check_error(d: &Daemon, url: &str, token: &str) -> String {
    let out = Command::new(sluice_bin())
        .args(["run", "--check", "--env-file"])
        .arg(d.dir.join("env_file"))
        .env_clear()
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", url)
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", token)
        .output()
        .expect("sluice run --check");
    assert_ne!(out.status.code(), Some(0), "the check passed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("sluice: error: "))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    line.strip_prefix("run --check found 1 error: ")
        .unwrap_or(line)
        .to_owned()
}

/// The message of a rejected `sluice reload` (POST /reload), without its prefix.
fn reload_error(d: &Daemon) -> String {
    let (code, stdout) = reload_cli(d);
    assert_eq!(code, Some(1), "{stdout}");
    stdout
        .trim_end()
        .strip_prefix("reload failed (422): ")
        .unwrap_or_else(|| panic!("not a rejection: {stdout}"))
        .to_owned()
}

#[test]
fn run_check_and_a_reload_reject_a_bad_configuration_with_the_same_message() {
    let _heavy = heavy();
    let dir = scratch("same-message");
    let context = dir.join("context");
    std::fs::create_dir_all(&context).unwrap();
    let csv = context.join("splunk_metadata.csv");
    replace_file(&csv, "syslogng_loggen,index,before\n");
    let context_line = format!("SLUICE_CONTEXT_DIR={}", context.display());
    let sink = sink();
    let (url, token) = (sink.base_url(), sink.token().to_string());
    let d = Daemon::start(DaemonOpts::default().hec(&sink).env_file(&context_line));
    // Each bad configuration: one the classifier refuses (an unknown vendor family), a
    // context file the classifier cannot read (a row with two fields), and one the routing
    // refuses (an inline filter expression sluice cannot evaluate).
    let cases = [
        (format!("{context_line}\nSLUICE_VENDORS=nosuchvendor"), None),
        (
            context_line.clone(),
            Some("syslogng_loggen,index,after\nsyslogng_loggen,index\n"),
        ),
        (
            format!(
                "{context_line}\nSC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES=d_hec_fmt\n\
                 SC4S_DEST_CISCO_ASA_ALT_FILTER=program(asa)"
            ),
            None,
        ),
    ];
    for (env_file, csv_text) in cases {
        replace_file(&csv, csv_text.unwrap_or("syslogng_loggen,index,before\n"));
        d.rewrite_env_file(&env_file);
        let checked = check_error(&d, &url, &token);
        let reloaded = reload_error(&d);
        assert_eq!(checked, reloaded, "for {env_file:?}");
        assert!(!checked.is_empty());
    }
    let m = d.metrics();
    assert_eq!(m.sum("sluice_reload_total", &["result=\"failed\""]), 3.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `n` Linux syslog lines with loggen-style sequence numbers from `first`, over one TCP
/// connection (a program no vendor knows: nix:syslog).
fn send_nix_tcp(d: &Daemon, first: u64, n: u64) {
    use std::io::Write;
    let mut body = String::new();
    for seq in first..first + n {
        body.push_str(&format!(
            "<13>Nov 26 09:00:00 host01 app[1234]: seq: {seq:010}, thread: 0000, runid: 5, stamp: x\n"
        ));
    }
    let mut s = std::net::TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    s.write_all(body.as_bytes()).unwrap();
}

/// The reply of an accepted `sluice reload` (POST /reload).
fn reload_ok(d: &Daemon) -> String {
    let (code, stdout) = reload_cli(d);
    assert_eq!(code, Some(0), "{stdout}; log:\n{}", d.log());
    stdout
}

/// `sluice reload` (POST /reload) against `d`: its exit code and what it printed.
fn reload_cli(d: &Daemon) -> (Option<i32>, String) {
    let out = Command::new(sluice_bin())
        .args(["reload", "--port", &d.status_port.to_string()])
        .env_remove("SLUICE_PID_FILE")
        .output()
        .expect("sluice reload");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Issue 26: a reload adds a second HEC destination (GLOBAL) and a later one removes it,
/// without a restart. Events sent after the first reload reach both sinks; events after the
/// second only the default one, and the removed destination is drained and closed. Every
/// event reaches the default sink exactly once; the second gets exactly the events sent
/// while it was configured. A reload whose new destination cannot start is refused whole.
#[test]
fn a_reload_adds_and_removes_a_hec_destination() {
    let _heavy = heavy();
    const N: u64 = 2_000;
    let a = sink();
    let b = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&a)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env_file(""),
    );
    send_nix_tcp(&d, 0, N);
    assert!(a.wait_for(N, Duration::from_secs(30)), "{}", d.log());

    let second = format!(
        "SC4S_DEST_SPLUNK_HEC_SECOND_URL={}\nSC4S_DEST_SPLUNK_HEC_SECOND_TOKEN={}\n\
         SC4S_DEST_SPLUNK_HEC_SECOND_BATCH_TIMEOUT=50",
        b.base_url(),
        b.token()
    );
    d.rewrite_env_file(&second);
    let reply = reload_ok(&d);
    assert!(reply.contains("destinations opened second"), "{reply}");
    send_nix_tcp(&d, N, N);
    assert!(a.wait_for(2 * N, Duration::from_secs(30)), "{}", d.log());
    assert!(b.wait_for(N, Duration::from_secs(30)), "{}", d.log());
    let delivered =
        |m: &sluice_suite::Metrics| m.sum("sluice_delivered_total", &["destination=\"second\""]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while delivered(&d.metrics()) < N as f64 {
        assert!(
            Instant::now() < deadline,
            "/metrics shows the new destination's deliveries"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A destination that cannot start (its disk buffer cannot be created): refused whole,
    // nothing changes.
    d.rewrite_env_file(&format!(
        "{second}\nSC4S_DEST_SPLUNK_HEC_THIRD_URL=http://127.0.0.1:1\n\
         SC4S_DEST_SPLUNK_HEC_THIRD_TOKEN=x\nSC4S_DEST_SPLUNK_HEC_THIRD_DISKBUFF_DIR=/proc/sluice-no"
    ));
    let (code, stdout) = reload_cli(&d);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("third") || stdout.contains("THIRD"),
        "the error names the destination: {stdout}"
    );

    d.rewrite_env_file("");
    let reply = reload_ok(&d);
    assert!(reply.contains("destinations closed second"), "{reply}");
    send_nix_tcp(&d, 2 * N, N);
    assert!(a.wait_for(3 * N, Duration::from_secs(30)), "{}", d.log());
    d.wait_for_log(
        "removed destination drained and closed",
        Duration::from_secs(30),
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        b.accepted_events(),
        N,
        "the removed destination got only its share"
    );
    let ra = a.seq_report(None);
    assert_eq!((ra.distinct, ra.duplicates), (3 * N, 0), "{ra:?}");
    assert_eq!(a.accepted_events(), 3 * N);
    let rb = b.seq_report(None);
    assert_eq!((rb.distinct, rb.duplicates), (N, 0), "{rb:?}");
    let seqs: BTreeSet<u64> = seq_and_index(&b).into_iter().map(|(s, _)| s).collect();
    assert_eq!(seqs.first(), Some(&N));
    assert_eq!(seqs.last(), Some(&(2 * N - 1)));
    let m = d.metrics();
    assert_eq!(m.sum("sluice_reload_total", &["result=\"failed\""]), 1.0);
    assert_eq!(m.sum("sluice_reload_total", &["result=\"ok\""]), 2.0);
}
