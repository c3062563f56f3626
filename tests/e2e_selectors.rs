//! Destination selectors end to end (issue 22): a `sc4s-lp-dest-select-d_hec_fmt_other`
//! application in the operator's app-parser directory sends one vendor's events to a second
//! HEC destination in SELECT mode, and nothing else goes there; the default destination
//! (GLOBAL) gets everything. A SIGHUP after the selector changed applies the new one.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use sluice_suite::{Daemon, DaemonOpts, SinkHandle, send_udp, sink};

/// Names the vendor of `acme-fw-*` hosts, so the selector has a vendor to pick on.
const VPS: &str = r#"
application app-vps-e2e-acme[sc4s-vps] {
    filter { host("acme-fw-*" type(glob)); };
    parser { p_set_netsource_fields(vendor("acme") product("fw")); };
};
"#;

fn selector(vendor: &str) -> String {
    format!(
        r#"
application sc4s-lp-{vendor}_d_hec_fmt_other[sc4s-lp-dest-select-d_hec_fmt_other] {{
    filter {{ '{vendor}' eq "${{fields.sc4s_vendor}}" }};
}};
"#
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sluice-e2e-sel-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("selectors")).expect("scratch dir");
    dir
}

fn markers(hec: &SinkHandle) -> Vec<String> {
    let mut v: Vec<String> = hec
        .events()
        .into_iter()
        .filter_map(|e| {
            let s = e["event"].as_str()?;
            let m = s.split("marker=").nth(1)?;
            Some(m.split_whitespace().next()?.to_owned())
        })
        .collect();
    v.sort();
    v
}

fn wait_markers(hec: &SinkHandle, n: usize, what: &str) -> Vec<String> {
    let start = Instant::now();
    loop {
        let m = markers(hec);
        if m.len() >= n {
            return m;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what}: {} of {n} events: {m:?}",
            m.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_selector_sends_one_vendors_events_to_a_select_destination_only() {
    let dir = scratch("select");
    std::fs::write(dir.join("app-vps-e2e.conf"), VPS).expect("write");
    std::fs::write(dir.join("selectors/acme.conf"), selector("acme")).expect("write");
    let (a, b) = (sink(), sink());
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&a)
            .env("SLUICE_APP_PARSERS_DIR", dir.display())
            .env("SC4S_DEST_SPLUNK_HEC_OTHER_URL", b.base_url())
            .env("SC4S_DEST_SPLUNK_HEC_OTHER_TOKEN", b.token())
            .env("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", "50")
            .env("SC4S_DEST_SPLUNK_HEC_OTHER_BATCH_TIMEOUT", "50"),
    );
    send_udp(
        d.udp_addr(),
        &[
            b"<134>Nov 28 15:00:00 acme-fw-01 kernel: link up marker=a1",
            b"<134>Nov 28 15:00:00 somehost sshd[7]: session opened marker=n1",
            b"<134>Nov 28 15:00:00 acme-fw-02 kernel: link down marker=a2",
            b"<134>Nov 28 15:00:00 otherhost cron[9]: job ran marker=n2",
        ],
    );
    assert_eq!(
        wait_markers(&a, 4, "default destination"),
        ["a1", "a2", "n1", "n2"]
    );
    assert_eq!(wait_markers(&b, 2, "OTHER"), ["a1", "a2"]);
    for e in b.events() {
        assert_eq!(e["fields"]["sc4s_vendor"], "acme", "{e}");
    }

    // The selector now names another vendor: after the SIGHUP, acme's events stay home.
    std::fs::write(dir.join("selectors/acme.conf"), selector("globex")).expect("write");
    let reloaded = d.log_count("configuration reloaded");
    d.sighup();
    d.wait_for_log_after("configuration reloaded", reloaded, Duration::from_secs(20));
    send_udp(
        d.udp_addr(),
        &[b"<134>Nov 28 15:00:01 acme-fw-01 kernel: link up marker=a3"],
    );
    wait_markers(&a, 5, "default destination after the reload");
    // OTHER's batches are flushed every 50 ms: a stray event would have arrived by now.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        markers(&b),
        ["a1", "a2"],
        "OTHER got an event after the reload"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_selector_of_an_unknown_destination_is_a_warning_with_file_and_line() {
    let dir = scratch("unknown");
    std::fs::write(
        dir.join("selectors/typo.conf"),
        "\n\napplication sc4s-lp-typo[sc4s-lp-dest-select-d_hec_fmt_nosuch] {\n    filter { program(\"x\") };\n};\n",
    )
    .expect("write");
    let a = sink();
    let d = Daemon::start(
        DaemonOpts::default()
            .hec(&a)
            .env("SLUICE_APP_PARSERS_DIR", dir.display()),
    );
    d.wait_for_log_after("typo.conf:3", 0, Duration::from_secs(20));
    send_udp(
        d.udp_addr(),
        &[b"<134>Nov 28 15:00:00 somehost x[1]: still delivered marker=u1"],
    );
    assert_eq!(wait_markers(&a, 1, "default destination"), ["u1"]);
    std::fs::remove_dir_all(&dir).ok();
}
