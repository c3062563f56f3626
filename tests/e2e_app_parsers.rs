//! The operator's app-parsers end to end (issue 22): a local directory (given with
//! `SLUICE_APP_PARSERS_DIR`) with an `app-vps-*` application naming the vendor of a host and
//! an `app-syslog-*[sc4s-syslog-pgm]` application whose block parser runs `kv-parser` and
//! `r_set_splunk_dest_default`; events sent over UDP reach the HEC stand-in with what those
//! applications set. A file with a syntax error stops the start naming file:line; a SIGHUP
//! after the file changed applies the new rule.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, SinkHandle, free_port, send_udp, sink, sluice_bin};

const VPS: &str = r#"
application app-vps-e2e-acme[sc4s-vps] {
    filter { host("acme-fw-*" type(glob)); };
    parser { p_set_netsource_fields(vendor("acme") product("fw")); };
};
"#;

fn widget(index: &str, sourcetype: &str) -> String {
    format!(
        r#"
block parser app-syslog-e2e-widget() {{
    channel {{
        parser {{ kv-parser(prefix(".values.")); }};
        rewrite {{
            r_set_splunk_dest_default(
                index("{index}")
                sourcetype("{sourcetype}")
                vendor("acme")
                product("widget")
            );
        }};
    }};
}};
application app-syslog-e2e-widget[sc4s-syslog-pgm] {{
    filter {{ program("widgetd" type(string)); }};
    parser {{ app-syslog-e2e-widget(); }};
}};
"#
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-e2e-app-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Replaces `path` in one step, so the daemon never reads half a file.
fn replace_file(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

fn start(dir: &Path, hec: &SinkHandle) -> Daemon {
    Daemon::start(
        DaemonOpts::default()
            .hec(hec)
            .env("SLUICE_APP_PARSERS_DIR", dir.display())
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", "50"),
    )
}

/// The events whose `event` contains `needle`.
fn events_with(hec: &SinkHandle, needle: &str) -> Vec<serde_json::Value> {
    hec.events()
        .into_iter()
        .filter(|e| e["event"].as_str().is_some_and(|s| s.contains(needle)))
        .collect()
}

fn one_event(hec: &SinkHandle, needle: &str) -> serde_json::Value {
    let start = Instant::now();
    loop {
        let found = events_with(hec, needle);
        if let Some(e) = found.into_iter().next() {
            return e;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no event containing {needle:?}; events: {:?}",
            hec.events()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn local_applications_set_vendor_index_and_sourcetype() {
    let dir = scratch("apply");
    std::fs::write(dir.join("app-vps-e2e.conf"), VPS).expect("write");
    std::fs::create_dir_all(dir.join("sub")).expect("subdir");
    std::fs::write(
        dir.join("sub/app-syslog-e2e-widget.conf"),
        widget("netops", "acme:widget"),
    )
    .expect("write");
    let hec = sink();
    let d = start(&dir, &hec);

    send_udp(
        d.udp_addr(),
        &[
            b"<134>Nov 28 15:00:00 somehost widgetd[42]: user=bob action=login marker=w1",
            b"<134>Nov 28 15:00:00 acme-fw-01 kernel: link up marker=v1",
        ],
    );
    let w = one_event(&hec, "marker=w1");
    assert_eq!(w["sourcetype"], "acme:widget", "{w}");
    assert_eq!(w["index"], "netops", "{w}");
    assert_eq!(w["fields"]["sc4s_vendor"], "acme", "{w}");
    assert_eq!(w["fields"]["sc4s_product"], "widget", "{w}");

    let v = one_event(&hec, "marker=v1");
    assert_eq!(v["fields"]["sc4s_vendor"], "acme", "{v}");
    assert_eq!(v["fields"]["sc4s_product"], "fw", "{v}");

    // The rule changes on disk; a SIGHUP applies it.
    replace_file(
        &dir.join("sub/app-syslog-e2e-widget.conf"),
        &widget("widgets", "acme:widget:v2"),
    );
    let reloaded = d.log_count("configuration reloaded");
    d.sighup();
    d.wait_for_log_after("configuration reloaded", reloaded, Duration::from_secs(20));
    send_udp(
        d.udp_addr(),
        &[b"<134>Nov 28 15:00:01 somehost widgetd[42]: user=eve action=logout marker=w2"],
    );
    let w2 = one_event(&hec, "marker=w2");
    assert_eq!(w2["sourcetype"], "acme:widget:v2", "{w2}");
    assert_eq!(w2["index"], "widgets", "{w2}");

    // A broken file fails the reload; the running rules carry on.
    std::fs::write(
        dir.join("broken.conf"),
        "application x[sc4s-vps] {\n  filter {\n",
    )
    .expect("write");
    let failed = d.log_count("broken.conf");
    d.sighup();
    d.wait_for_log_after("broken.conf", failed, Duration::from_secs(20));
    send_udp(
        d.udp_addr(),
        &[b"<134>Nov 28 15:00:02 somehost widgetd[42]: user=eve action=logout marker=w3"],
    );
    let w3 = one_event(&hec, "marker=w3");
    assert_eq!(w3["sourcetype"], "acme:widget:v2", "{w3}");
    let m = d.metrics();
    assert_eq!(m.sum("sluice_reload_total", &["result=\"failed\""]), 1.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_syntax_error_stops_the_start_naming_file_and_line() {
    let dir = scratch("syntax");
    std::fs::write(
        dir.join("bad.conf"),
        "application app-vps-bad[sc4s-vps] {\n    filter { host(\"x\" };\n};\n",
    )
    .expect("write");
    let mut cmd = Command::new(sluice_bin());
    for (k, _) in std::env::vars() {
        if k.starts_with("SC4S_") || k.starts_with("SLUICE_") {
            cmd.env_remove(k);
        }
    }
    let port = free_port().to_string();
    let mut child = cmd
        .arg("run")
        .current_dir(&dir)
        .env("SC4S_LISTEN_DEFAULT_UDP_PORT", &port)
        .env("SC4S_LISTEN_DEFAULT_TCP_PORT", &port)
        .env("SC4S_LISTEN_STATUS_PORT", free_port().to_string())
        .env("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled")
        .env("SC4S_LISTEN_DEFAULT_RFC6587_PORT", "disabled")
        .env("SLUICE_LISTEN_ADDRESS", "127.0.0.1")
        .env("SLUICE_LISTEN_LOCK_DIR", dir.join("locks"))
        .env(
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR",
            dir.join("buffer"),
        )
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://127.0.0.1:9")
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "t")
        .env("SLUICE_APP_PARSERS_DIR", &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sluice");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("sluice started despite a syntax error in an app-parser");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!status.success(), "{text}");
    assert!(text.contains("bad.conf:2"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
