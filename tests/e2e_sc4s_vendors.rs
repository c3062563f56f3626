//! The SC4S vendor corpus end to end: every case is sent over one real TCP connection
//! (newline framed, as SC4S's tests send them) to a running sluice, which posts to a HEC
//! stand-in; each received event is checked against what SC4S's own tests expect
//! (`crates/sluice-proto/tests/vendor_corpus/mod.rs`, shared with the in-process test).
//! Prints `X/233 SC4S vendor cases pass`; the known-failing list may only shrink.

#[path = "../crates/sluice-proto/tests/vendor_corpus/mod.rs"]
mod vendor_corpus;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use sluice_suite::{Daemon, DaemonOpts, sink};

#[test]
fn sc4s_vendor_corpus_end_to_end() {
    let cases = vendor_corpus::load();
    let hec = sink();
    let daemon = Daemon::start(
        DaemonOpts::default()
            .hec(&hec)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", "50")
            // One worker: batches (and so events) reach the stand-in in the order sent.
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "1"),
    );
    let mut tcp = TcpStream::connect(("127.0.0.1", daemon.port)).expect("connect");
    let mut payload = Vec::new();
    for case in &cases {
        payload.extend_from_slice(&case.raw);
        payload.push(b'\n');
    }
    tcp.write_all(&payload).expect("send");
    tcp.flush().expect("flush");
    assert!(
        hec.wait_for(cases.len() as u64, Duration::from_secs(60)),
        "HEC received {} of {} events; log:\n{}",
        hec.accepted_events(),
        cases.len(),
        daemon.log()
    );
    let events = hec.events();
    assert_eq!(
        events.len(),
        cases.len(),
        "one event per case, nothing more"
    );
    // One connection: events arrive in the order sent.
    let outcomes: Vec<(String, Vec<String>)> = cases
        .iter()
        .zip(&events)
        .map(|(case, event)| (case.id.clone(), vendor_corpus::check(case, event)))
        .collect();
    vendor_corpus::judge("end to end", &outcomes);
}
