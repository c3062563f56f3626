//! `/metrics` of a running daemon: valid for `promtool check metrics`, every name unique,
//! every label value short, and the families operators alert on present and moving
//! (delivery, HEC success time, process, build). And the JSON log format, end to end.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use sluice_suite::{Daemon, DaemonOpts, Metrics};

/// The exposition as a scraper that does not ask for OpenMetrics gets it (curl, promtool),
/// or as Prometheus gets it when `accept` is set.
fn scrape(d: &Daemon, accept: Option<&str>) -> (String, String) {
    let addr = SocketAddr::from(([127, 0, 0, 1], d.status_port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\n{accept}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    (head.to_string(), body.to_string())
}

/// `promtool check metrics` on `text`: `None` when promtool is not installed (CI installs
/// it and sets SLUICE_REQUIRE_PROMTOOL, so there it must run).
fn promtool(text: &str) -> Option<(bool, String)> {
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            assert!(
                std::env::var_os("SLUICE_REQUIRE_PROMTOOL").is_none(),
                "promtool is required here: {e}"
            );
            eprintln!("promtool not found ({e}); skipping its check");
            return None;
        }
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), said))
}

#[test]
fn metrics_of_a_running_daemon_pass_promtool_with_unique_names_and_bounded_labels() {
    let sink = sluice_suite::sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", 10),
    );
    let payloads: Vec<Vec<u8>> = (0..50)
        .map(|i| format!("<13>Nov 22 10:00:00 host app: metrics test {i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    sluice_suite::send_udp(d.udp_addr(), &refs);
    let mut tcp = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    tcp.write_all(b"<13>Nov 22 10:00:00 host app: over tcp\n")
        .unwrap();
    drop(tcp);
    assert!(sink.wait_for(51, Duration::from_secs(30)), "delivered");
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_delivered_total", &["output=\"hec\""]) == 51.0
            && m.sum("sluice_tcp_closed_total", &["reason=\"eof\""]) == 1.0
    });

    let (head, text) = scrape(&d, None);
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");

    // promtool: the format, the naming conventions (counters end in _total, units...).
    if let Some((ok, said)) = promtool(&text) {
        assert!(ok, "promtool check metrics failed:\n{said}\n---\n{text}");
        assert!(said.trim().is_empty(), "promtool had remarks:\n{said}");
    }

    check_families(&text, false);

    // What operators alert on.
    let m2 = Metrics::parse(&text);
    let build =
        m2.0.keys()
            .find(|k| k.starts_with("sluice_build_info{"))
            .expect("sluice_build_info");
    assert!(
        build.contains("version=\"") && build.contains("commit=\""),
        "{build}"
    );
    assert!(m2.sum("process_resident_memory_bytes", &[]) > 1e6);
    // A few milliseconds of CPU may still read as 0 ticks: present is what can be checked.
    assert!(m2.0.contains_key("process_cpu_seconds_total"), "{text}");
    assert!(m2.sum("process_open_fds", &[]) >= 5.0);
    assert!(m2.sum("process_max_fds", &[]) >= m2.sum("process_open_fds", &[]));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let started = m2.sum("process_start_time_seconds", &[]);
    assert!(started <= now + 1.0 && started > now - 3600.0, "{started}");
    let last = m2.sum("sluice_hec_last_success_timestamp_seconds", &[]);
    assert!(last <= now + 1.0 && last > now - 120.0, "{last}");
    assert_eq!(
        m2.sum("sluice_received_total", &["transport=\"udp\""]),
        50.0
    );
    assert_eq!(m2.sum("sluice_received_total", &["transport=\"tcp\""]), 1.0);
    assert!(m2.sum("sluice_hec_requests_total", &["outcome=\"2xx\""]) >= 6.0);
    assert_eq!(m.sum("sluice_tcp_connections_total", &[]), 1.0);
    assert_eq!(m2.sum("sluice_tcp_open_connections", &[]), 0.0);

    // Prometheus asks for OpenMetrics and gets it.
    let (head, om) = scrape(
        &d,
        Some("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"),
    );
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(om.ends_with("# EOF\n"), "{om}");
    assert!(om.contains("# TYPE sluice_delivered counter\n"), "{om}");
    // promtool reads only the text format; OpenMetrics gets the same structural check, where
    // a counter's family loses `_total` and so can clash with a gauge of that name (it did:
    // `sluice_buffer_full`, and Prometheus refuses a whole scrape for one clash).
    check_families(om.trim_end_matches("# EOF\n"), true);
}

/// Every family once, with help and type; every sample in a declared family; label values
/// short. `openmetrics`: counter samples are `<family>_total` (the family has no suffix).
fn check_families(text: &str, openmetrics: bool) {
    let mut types = std::collections::BTreeMap::new();
    let mut helps = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(
                types.insert(name.to_string(), kind.to_string()).is_none(),
                "{name} declared twice (openmetrics: {openmetrics})"
            );
        } else if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap();
            assert!(
                helps.insert(name.to_string()),
                "{name} has two HELP lines (openmetrics: {openmetrics})"
            );
        }
    }
    assert_eq!(
        types.keys().collect::<Vec<_>>(),
        helps.iter().collect::<Vec<_>>()
    );
    for sample in text.lines().filter(|l| !l.starts_with('#')) {
        let name = sample.split(['{', ' ']).next().unwrap();
        let suffixed = |suffixes: &[&str], kind: &str| {
            suffixes.iter().find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| types.get(*f).is_some_and(|k| k == kind))
            })
        };
        let family = suffixed(&["_bucket", "_sum", "_count"], "histogram")
            .or_else(|| {
                openmetrics
                    .then(|| suffixed(&["_total"], "counter"))
                    .flatten()
            })
            .unwrap_or(name);
        assert!(
            types.contains_key(family),
            "{sample}: no # TYPE for it (openmetrics: {openmetrics})"
        );
        // Label values are short enum values, ids and numbers: never sentences.
        if let Some(labels) = sample.split_once('{').map(|(_, l)| l) {
            for value in labels.split('"').skip(1).step_by(2) {
                assert!(
                    value.len() <= 48,
                    "label value too long: {value:?} in {sample}"
                );
            }
        }
    }
}

#[test]
fn json_logs_are_one_object_per_line() {
    let d = Daemon::start(DaemonOpts::default().env("SLUICE_LOG_FORMAT", "json"));
    let log = d.log();
    let mut lines = 0;
    for line in log.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(v["timestamp"].is_string() && v["level"].is_string(), "{v}");
        lines += 1;
    }
    assert!(lines >= 2, "{log}");
    assert!(log.contains("\"message\":\"sluice is running\""), "{log}");
}
