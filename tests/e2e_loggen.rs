//! Acceptance: 100,000 messages from syslog-ng's `loggen` over UDP at 20k/s, and over TCP,
//! arrive at a real HEC server exactly once each, with SC4S's event shape.

use std::time::Duration;

use sluice_suite::RejectReason;
use sluice_suite::{Daemon, DaemonOpts, loggen, sink};

const N: u64 = 100_000;

fn check_event_shape(ev: &serde_json::Value, proto: &str, port: u16) {
    let time = ev["time"].as_str().expect("time is a string");
    let (secs, frac) = time.split_once('.').expect("time has decimals");
    assert!(
        secs.parse::<u64>().is_ok() && frac.len() == 3,
        "time {time:?}"
    );
    assert_eq!(ev["host"], "localhost");
    // SC4S's addons/syslogng: loggen's PROGRAM prg00000 is `syslogng:loggen`, the event its
    // MESSAGE in a JSON object (t_json_values_msg).
    assert_eq!(ev["source"], "sc4s");
    assert_eq!(ev["sourcetype"], "syslogng:loggen");
    assert_eq!(ev["index"], "main");
    let text = ev["event"].as_str().expect("event text");
    assert!(text.starts_with(r#"{"message":"seq: "#), "event {text:?}");
    let inner: serde_json::Value = serde_json::from_str(text).expect("the event is JSON");
    assert!(
        inner["message"]
            .as_str()
            .is_some_and(|m| m.contains(", thread: "))
    );
    let f = &ev["fields"];
    assert_eq!(f["sc4s_vendor"], "syslogng");
    assert_eq!(f["sc4s_product"], "loggen");
    // loggen sends <38>: facility auth (4), severity info (6).
    assert_eq!(f["sc4s_syslog_facility"], "auth");
    assert_eq!(f["sc4s_syslog_severity"], "info");
    assert_eq!(f["sc4s_proto"], proto);
    assert_eq!(f["sc4s_destport"], port.to_string());
    assert_eq!(f["sc4s_fromhostip"], "127.0.0.1");
    assert!(
        f["sc4s_recv_time"]
            .as_str()
            .is_some_and(|t| t.contains('.'))
    );
    assert!(
        f["sc4s_tags"]
            .as_str()
            .is_some_and(|t| t.contains(".source.s_DEFAULT"))
    );
}

fn run(transport_flag: &str, proto: &str, rate: &str) {
    let sink = sink();
    let mut d = Daemon::start(DaemonOpts::default().hec(&sink));
    let port = d.port.to_string();
    let sent = loggen(&[
        "-i",
        transport_flag,
        "-r",
        rate,
        "-n",
        &N.to_string(),
        "-s",
        "800",
        "127.0.0.1",
        &port,
    ]);
    assert_eq!(sent, N, "loggen reports what it sent");
    assert!(
        sink.wait_for(N, Duration::from_secs(120)),
        "sink got {} of {N} events; log:\n{}",
        sink.accepted_events(),
        d.log()
    );
    // Give a duplicate the chance to show up before counting.
    std::thread::sleep(Duration::from_millis(500));
    let report = sink.seq_report(Some(N));
    assert_eq!(report.distinct, N, "{report:?}");
    assert_eq!(report.duplicates, 0, "{report:?}");
    assert_eq!(report.missing, 0, "{report:?}");
    assert_eq!(sink.accepted_events(), N);
    let st = sink.stats();
    assert_eq!(
        st.rejected_total() - st.rejected(RejectReason::NoData),
        0,
        "the sink refused requests (other than the startup probe): {st:?}"
    );

    let events = sink.events();
    for ev in [
        &events[0],
        &events[events.len() / 2],
        &events[events.len() - 1],
    ] {
        check_event_shape(ev, proto, d.port);
    }
    let transport = if proto == "UDP" { "udp" } else { "tcp" };
    // sluice counts an event delivered, and gives back its window slot, after the sink's
    // answer; the sink has counted it before answering.
    let m = d.wait_metrics(Duration::from_secs(10), |m| {
        m.sum("sluice_delivered_total", &[]) >= N as f64
            && m.sum("sluice_window_events", &[]) == 0.0
    });
    assert_eq!(
        m.sum(
            "sluice_received_total",
            &[&format!("transport=\"{transport}\"")]
        ),
        N as f64
    );
    assert_eq!(
        m.sum("sluice_parsed_total", &["format=\"rfc3164\""]),
        N as f64
    );
    assert_eq!(m.sum("sluice_delivered_total", &[]), N as f64);
    assert_eq!(m.sum("sluice_kernel_dropped_total", &[]), 0.0);
    assert_eq!(
        m.sum("sluice_window_events", &[]),
        0.0,
        "nothing left in flight"
    );
    assert!(d.terminate().success(), "log:\n{}", d.log());
}

#[test]
fn udp_100k_messages_at_20k_per_second_arrive_exactly_once() {
    let _heavy = sluice_suite::heavy();
    run("-D", "UDP", "20000");
}

#[test]
fn tcp_100k_messages_arrive_exactly_once() {
    let _heavy = sluice_suite::heavy();
    run("-S", "TCP", "20000");
}
