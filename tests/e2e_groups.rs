//! Multi-part messages on real sockets: Cisco ISE segments joined by serial (complete, and
//! flushed at shutdown when a segment never came), vSphere lines joined with
//! SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG=yes after SC4S's 2 s timeout.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;
use sluice_suite::{Daemon, DaemonOpts, send_udp};

fn wait_events(d: &Daemon, n: usize, timeout: Duration) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let ev = d.file_events();
        if ev.len() >= n || start.elapsed() > timeout {
            return ev;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn event_text(e: &Value) -> &str {
    e["event"].as_str().unwrap_or_default()
}

#[test]
fn ise_segments_arrive_as_one_event() {
    let d = Daemon::start(DaemonOpts::default());
    let h = "<165>Mar 21 13:08:50 ise-psn-01 CISE_RADIUS_Accounting 0006028545 3";
    let seg1 = format!("{h} 1 Device IP Address=10.0.0.3, ");
    let seg0 = format!(
        "{h} 0 2024-03-21 13:08:50.865 +00:00 0088472694 3002 NOTICE Radius-Accounting: watchdog, "
    );
    let seg2 = format!("{h} 2 NAS-Port=50047");
    // Out of order, and an unrelated message between the segments.
    send_udp(
        d.udp_addr(),
        &[
            seg1.as_bytes(),
            b"<13>Mar 21 13:08:51 web-01 sshd[7]: unrelated",
            seg0.as_bytes(),
            seg2.as_bytes(),
        ],
    );
    let events = wait_events(&d, 2, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(600));
    let events = if events.len() > 2 {
        events
    } else {
        d.file_events()
    };
    assert_eq!(events.len(), 2, "{events:#?}\n{}", d.log());
    let ise: Vec<&Value> = events
        .iter()
        .filter(|e| e["sourcetype"] == "cisco:ise:syslog")
        .collect();
    assert_eq!(ise.len(), 1, "{events:#?}");
    let text = event_text(ise[0]);
    assert!(
        text.ends_with(
            "CISE_RADIUS_Accounting 0006028545 1 0 2024-03-21 13:08:50.865 +00:00 0088472694 3002 \
             NOTICE Radius-Accounting: watchdog, Device IP Address=10.0.0.3, NAS-Port=50047"
        ),
        "{text}"
    );
    assert_eq!(ise[0]["host"], "ise-psn-01");
    assert_eq!(ise[0]["time"], "1711026530.865");
}

#[test]
fn an_incomplete_group_is_sent_at_shutdown() {
    let mut d = Daemon::start(DaemonOpts::default());
    let h = "<165>Mar 21 13:08:50 ise-psn-01 CISE_Passed_Authentications 0000000777 3";
    let seg0 = format!("{h} 0 2024-03-21 13:08:50.865 +00:00 0000000001 5200 NOTICE first, ");
    let seg1 = format!("{h} 1 second");
    let mut tcp = TcpStream::connect(d.udp_addr()).expect("connect");
    tcp.write_all(format!("{seg0}\n{seg1}\n").as_bytes())
        .expect("send");
    drop(tcp);
    std::thread::sleep(Duration::from_millis(500));
    assert!(d.file_events().is_empty(), "a part was sent on its own");
    assert!(d.terminate().success(), "{}", d.log());
    let events = d.file_events();
    assert_eq!(events.len(), 1, "{events:#?}\n{}", d.log());
    assert!(
        event_text(&events[0]).ends_with(
            "0000000777 1 0 2024-03-21 13:08:50.865 +00:00 0000000001 5200 NOTICE first, second"
        ),
        "{events:#?}"
    );
}

#[test]
fn vsphere_lines_are_joined_only_with_groupmsg() {
    let lines: [&[u8]; 2] = [
        b"<14>2024-04-10T10:00:00.123Z esx-01 localcli[100]: Fetching the configuration",
        b"<14>2024-04-10T10:00:00.124Z esx-01 localcli[100]: done in 3 ms",
    ];
    let on = Daemon::start(DaemonOpts::default().env("SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG", "yes"));
    send_udp(on.udp_addr(), &lines);
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        on.file_events().is_empty(),
        "joined before SC4S's 2 s timeout"
    );
    let events = wait_events(&on, 1, Duration::from_secs(10));
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["sourcetype"], "vmware:esxlog:localcli");
    assert!(
        event_text(&events[0]).contains("Fetching the configuration\ndone in 3 ms"),
        "{events:#?}"
    );

    let off = Daemon::start(DaemonOpts::default());
    send_udp(off.udp_addr(), &lines);
    let events = wait_events(&off, 2, Duration::from_secs(10));
    assert_eq!(events.len(), 2, "{events:#?}");
}

#[test]
fn brightmail_parts_become_one_mail_event() {
    let d = Daemon::start(DaemonOpts::default());
    send_udp(
        d.udp_addr(),
        &[
            b"<1>Apr 10 10:00:00 smg-01 bmserver: 1576195989|a1b2|VERDICT|someone@example.com|none",
            b"<1>Apr 10 10:00:00 smg-01 bmserver: 1576195990|a1b2|SOURCE|external",
        ],
    );
    let events = wait_events(&d, 1, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(500));
    let events = if events.len() > 1 {
        events
    } else {
        d.file_events()
    };
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["sourcetype"], "symantec:smg:mail");
    assert_eq!(events[0]["index"], "email");
    assert_eq!(
        event_text(&events[0]),
        "1576195989|a1b2|VERDICT|someone@example.com|none;SOURCE|external"
    );

    let off = Daemon::start(
        DaemonOpts::default().env("SC4S_SOURCE_FF_SYMANTEC_BRIGHTMAIL_GROUPMSG", "no"),
    );
    send_udp(
        off.udp_addr(),
        &[b"<1>Apr 10 10:00:00 smg-01 bmserver: 1576195989|a1b2|VERDICT|x|none"],
    );
    let events = wait_events(&off, 1, Duration::from_secs(10));
    assert_eq!(events[0]["sourcetype"], "symantec:smg", "{events:#?}");
}
