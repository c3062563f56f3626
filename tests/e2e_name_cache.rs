//! SC4S_USE_NAME_CACHE on real sockets: a hostname learned from one message fills in for a
//! later message from the same sender whose HOST is an address; the cache survives a
//! restart (written under SC4S_VAR at shutdown) and SC4S_CLEAR_NAME_CACHE wipes it.

use std::time::{Duration, Instant};

use serde_json::Value;
use sluice_suite::{Daemon, DaemonOpts, send_udp};

const NAMED: &[u8] = b"<13>Mar  1 10:00:00 Learned-FW-01 app[1]: hello from a named host";
const IP_ONLY: &[u8] = b"<13>Mar  1 10:00:01 10.20.30.40 app[1]: only an address";

fn opts(var: &std::path::Path) -> DaemonOpts {
    DaemonOpts::default()
        .env("SC4S_USE_NAME_CACHE", "yes")
        .env("SC4S_VAR", var.display())
}

/// Waits for an event whose text contains `needle` and returns its host.
fn host_of(d: &Daemon, needle: &str) -> String {
    let start = Instant::now();
    loop {
        let found = d.file_events().into_iter().find(|e: &Value| {
            e["event"]
                .as_str()
                .is_some_and(|t: &str| t.contains(needle))
        });
        if let Some(e) = found {
            return e["host"].as_str().unwrap_or_default().to_owned();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no event with {needle:?}; log:\n{}",
            d.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_learned_name_fills_in_and_survives_a_restart() {
    let var = std::env::temp_dir().join(format!("sluice-e2e-namecache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&var);

    let mut d = Daemon::start(opts(&var));
    send_udp(d.udp_addr(), &[NAMED]);
    assert_eq!(host_of(&d, "hello from a named host"), "learned-fw-01");
    // Learned names become visible within a merge interval (1 s).
    std::thread::sleep(Duration::from_millis(1500));
    send_udp(d.udp_addr(), &[IP_ONLY]);
    assert_eq!(host_of(&d, "only an address"), "learned-fw-01");
    assert!(d.terminate().success(), "{}", d.log());
    let file = std::fs::read_to_string(var.join("hostip.cache")).expect("cache written");
    assert_eq!(file, "127.0.0.1\tlearned-fw-01\n");

    // A new process: the first message, an address only, already gets the name.
    let mut d = Daemon::start(opts(&var));
    send_udp(d.udp_addr(), &[IP_ONLY]);
    assert_eq!(host_of(&d, "only an address"), "learned-fw-01");
    assert!(d.terminate().success(), "{}", d.log());

    // SC4S_CLEAR_NAME_CACHE=yes starts from nothing.
    let d = Daemon::start(opts(&var).env("SC4S_CLEAR_NAME_CACHE", "yes"));
    send_udp(d.udp_addr(), &[IP_ONLY]);
    assert_eq!(host_of(&d, "only an address"), "10.20.30.40");
    drop(d);

    // Off (the default): no look-up, no file.
    let var2 = var.join("off");
    let d = Daemon::start(DaemonOpts::default().env("SC4S_VAR", var2.display()));
    send_udp(d.udp_addr(), &[NAMED]);
    host_of(&d, "hello from a named host");
    std::thread::sleep(Duration::from_millis(1500));
    send_udp(d.udp_addr(), &[IP_ONLY]);
    assert_eq!(host_of(&d, "only an address"), "10.20.30.40");
    drop(d);
    assert!(!var2.join("hostip.cache").exists());
    let _ = std::fs::remove_dir_all(&var);
}
