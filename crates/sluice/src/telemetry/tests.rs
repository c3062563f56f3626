//! One test per internal event: it counts what it stands for, on the right series, and logs.
//! Each test builds its own [`Metrics`], so nothing else in the process counts into it.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_proto::framing::FramingStats;
use tracing_subscriber::fmt::MakeWriter;

use super::events::*;
use super::logging::{LogFormat, subscriber};
use super::{InternalEvent, Metrics};
use crate::listen::stream::edge::Edge;
use crate::pipeline::LocalCounts;

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Buf {
    type Writer = Buf;
    fn make_writer(&'a self) -> Buf {
        self.clone()
    }
}

/// What `f` logged at every level, as text.
pub(super) fn logged(f: impl FnOnce()) -> String {
    logged_as(LogFormat::Text, f)
}

fn logged_as(format: LogFormat, f: impl FnOnce()) -> String {
    let buf = Buf::default();
    tracing::subscriber::with_default(subscriber("trace", format, false, buf.clone()), f);
    String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
}

/// The sum of the samples of `name` (as written, `_total` included) whose labels contain
/// every `key="value"` of `labels`, in `m`'s exposition.
pub(super) fn sample(m: &Metrics, name: &str, labels: &[&str]) -> f64 {
    let text = m.render();
    let mut found = false;
    let mut sum = 0.0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let family = series.split('{').next().unwrap_or("");
        if family == name && labels.iter().all(|l| series.contains(l)) {
            found = true;
            sum += value.parse::<f64>().unwrap();
        }
    }
    assert!(found, "no sample {name}{labels:?} in:\n{text}");
    sum
}

fn peer() -> SocketAddr {
    "192.0.2.9:40000".parse().unwrap()
}

#[test]
fn received_adds_a_batch_of_local_counts_once_and_resets_them() {
    let m = Metrics::new();
    let h = ReceiverCounters::register(&m, "DEFAULT", "udp", 514, Some(1));
    let mut counts = LocalCounts {
        messages: 3,
        bytes: 300,
        by_format: [1, 2, 0],
        truncated: 1,
        absorbed: 0,
    };
    let log = logged(|| Received(&mut counts).emit(&h));
    let series = [
        "listener=\"DEFAULT\"",
        "transport=\"udp\"",
        "port=\"514\"",
        "socket=\"1\"",
    ];
    assert_eq!(sample(&m, "sluice_received_total", &series), 3.0);
    assert_eq!(sample(&m, "sluice_received_bytes_total", &series), 300.0);
    assert_eq!(
        sample(&m, "sluice_parsed_total", &["format=\"rfc5424\""]),
        1.0
    );
    assert_eq!(
        sample(&m, "sluice_parsed_total", &["format=\"rfc3164\""]),
        2.0
    );
    assert_eq!(
        sample(&m, "sluice_truncated_total", &["transport=\"udp\""]),
        1.0
    );
    assert_eq!(counts.messages, 0, "the local counts start over");
    assert!(log.contains("TRACE") && log.contains("received"), "{log}");
    assert!(log.contains("messages=3"), "{log}");
    // The same labels give the same handle, so a reopened port continues its counts.
    let again = ReceiverCounters::register(&m, "DEFAULT", "udp", 514, Some(1));
    assert!(Arc::ptr_eq(&h, &again));
    assert_eq!(m.received_messages(), 3);
    // Nothing to add: nothing counted, nothing logged.
    assert_eq!(logged(|| Received(&mut counts).emit(&h)), "");
}

#[test]
fn batch_emitted_counts_batches_per_receiver() {
    let m = Metrics::new();
    let h = ReceiverCounters::register(&m, "CISCO_ASA", "tcp", 5000, None);
    let log = logged(|| {
        BatchEmitted {
            events: 10,
            bytes: 4000,
        }
        .emit(&h)
    });
    assert_eq!(
        sample(
            &m,
            "sluice_batches_total",
            &["listener=\"CISCO_ASA\"", "socket=\"\""]
        ),
        1.0
    );
    assert!(
        log.contains("batch handed on") && log.contains("events=10"),
        "{log}"
    );
}

#[test]
fn output_gone_counts_the_lost_events() {
    let m = Metrics::new();
    let h = ReceiverCounters::register(&m, "DEFAULT", "tcp", 601, None);
    let log = logged(|| OutputGone { events: 5 }.emit(&h));
    assert_eq!(h.lost_events(), 5);
    assert_eq!(m.unrouted_lost(), 5);
    assert_eq!(
        sample(
            &m,
            "sluice_dropped_total",
            &["destination=\"\"", "reason=\"output_gone\""]
        ),
        5.0
    );
    assert!(
        log.contains("ERROR") && log.contains("stage is gone"),
        "{log}"
    );
}

#[test]
fn classified_logs_the_decision_at_debug_rate_limited() {
    use sluice_proto::classify::context::ContextFiles;
    use sluice_proto::classify::{Classifier, Settings, SourceMeta, Transport, classify};
    let m = Metrics::new();
    let tables = Classifier::new(ContextFiles::default(), &Settings::default()).unwrap();
    let zone = sluice_proto::time::Zone::utc();
    let raw = b"<134>1 2024-01-01T00:00:00Z host app - - - hello";
    let msg = sluice_proto::parse(
        raw,
        &sluice_proto::ParseOptions {
            now_unix_secs: 1_700_000_000,
            zone: &zone,
        },
    );
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: "192.0.2.1".parse().unwrap(),
        listener_id: "DEFAULT",
    };
    let scratch = sluice_proto::classify::local::Scratch::new();
    let class = classify(&msg, &src, 1_700_000_000, &tables, &scratch);
    let log = logged(|| {
        for _ in 0..3 {
            Classified {
                class: &class,
                format: msg.format,
            }
            .emit(&m);
        }
    });
    assert_eq!(log.matches("classified").count(), 1, "rate-limited: {log}");
    assert!(
        log.contains("DEBUG") && log.contains("sourcetype="),
        "{log}"
    );
    assert!(
        log.contains("format=\"rfc5424\"") || log.contains("format=rfc5424"),
        "{log}"
    );
}

#[test]
fn connections_accepted_refused_and_closed_are_counted_by_reason() {
    let m = Metrics::new();
    let ev = StreamEvents::register(&m, "DEFAULT", "tcp", 601);
    let edge = Edge::with_events(1, ev.clone());
    let port = ["listener=\"DEFAULT\"", "transport=\"tcp\"", "port=\"601\""];
    let log = logged(|| {
        let mut a = edge.admit(peer()).unwrap();
        a.set_idle(false);
        assert!(edge.admit(peer()).is_none(), "at the limit, nobody idle");
        a.set_reason(CloseReason::Eof);
        drop(a);
    });
    assert_eq!(sample(&m, "sluice_tcp_connections_total", &port), 2.0);
    assert_eq!(
        sample(&m, "sluice_tcp_closed_total", &["reason=\"limit\""]),
        1.0
    );
    assert_eq!(
        sample(&m, "sluice_tcp_closed_total", &["reason=\"eof\""]),
        1.0
    );
    assert_eq!(
        sample(&m, "sluice_tcp_closed_total", &["reason=\"shutdown\""]),
        0.0
    );
    assert!(log.contains("connection accepted"), "{log}");
    assert!(
        log.contains("WARN") && log.contains("connection refused"),
        "{log}"
    );
    assert!(
        log.contains("connection closed") && log.contains("reason=\"eof\""),
        "{log}"
    );
}

#[test]
fn connection_closed_logs_each_reason_on_its_own_allowance() {
    let m = Metrics::new();
    let ev = StreamEvents::register(&m, "DEFAULT", "tls", 6514);
    let log = logged(|| {
        for _ in 0..5 {
            ConnectionClosed {
                reason: CloseReason::IdleTimeout,
            }
            .emit(&ev);
        }
        ConnectionClosed {
            reason: CloseReason::TlsError,
        }
        .emit(&ev);
    });
    assert_eq!(ev.closed(CloseReason::IdleTimeout), 5);
    assert_eq!(log.matches("idle_timeout").count(), 1, "{log}");
    assert_eq!(log.matches("tls_error").count(), 1, "{log}");
}

#[test]
fn accept_failed_counts_and_warns() {
    let m = Metrics::new();
    let ev = StreamEvents::register(&m, "DEFAULT", "tcp", 601);
    let e = std::io::Error::from_raw_os_error(24);
    let log = logged(|| AcceptFailed { error: &e }.emit(&ev));
    assert_eq!(
        sample(&m, "sluice_tcp_accept_errors_total", &["port=\"601\""]),
        1.0
    );
    assert!(
        log.contains("WARN") && log.contains("accept failed"),
        "{log}"
    );
}

#[test]
fn frames_read_counts_the_difference_and_moves_on() {
    let m = Metrics::new();
    let ev = StreamEvents::register(&m, "DEFAULT", "rfc6587", 601);
    let mut before = FramingStats::default();
    let now = FramingStats {
        frames: 9,
        octet_counted: 4,
        truncated: 1,
        partial: 1,
        discarded_bytes: 70,
        empty_lines: 2,
    };
    let log = logged(|| {
        FramesRead {
            now,
            before: &mut before,
        }
        .emit(&ev)
    });
    for (kind, n) in [
        ("octet_counted", 4.0),
        ("truncated", 1.0),
        ("partial", 1.0),
        ("empty_line", 2.0),
    ] {
        let k = format!("kind=\"{kind}\"");
        assert_eq!(sample(&m, "sluice_tcp_frames_total", &[&k]), n, "{kind}");
    }
    assert_eq!(sample(&m, "sluice_tcp_discarded_bytes_total", &[]), 70.0);
    assert_eq!(before, now);
    assert!(log.contains("truncated=1"), "{log}");
    // The same stats again add nothing.
    ev.add_framing(now, &mut before);
    assert_eq!(
        sample(&m, "sluice_tcp_frames_total", &["kind=\"octet_counted\""]),
        4.0
    );
}

#[test]
fn tls_handshakes_and_failures_are_counted_per_port() {
    let m = Metrics::new();
    let ev = TlsEvents::register(&m);
    let log = logged(|| {
        TlsHandshakeCompleted {
            port: 6514,
            version: "TLSv1.3",
            suite: "TLS13_AES_128_GCM_SHA256",
        }
        .emit(&ev);
        for _ in 0..3 {
            TlsHandshakeFailed {
                failure: Failure::NotTls,
                peer: peer(),
                port: 6514,
                error: "received corrupt message",
            }
            .emit(&ev);
        }
    });
    assert_eq!(
        sample(
            &m,
            "sluice_tls_handshakes_total",
            &["port=\"6514\"", "version=\"TLSv1.3\""]
        ),
        1.0
    );
    let reason = format!("reason=\"{}\"", Failure::NotTls.label());
    assert_eq!(
        sample(&m, "sluice_tls_handshake_failures_total", &[&reason]),
        3.0
    );
    assert_eq!(ev.failures(6514, Failure::NotTls), 3);
    assert!(log.contains("TLS handshake completed"), "{log}");
    assert_eq!(
        log.matches("TLS handshake failed").count(),
        1,
        "rate-limited: {log}"
    );
}

#[test]
fn certificate_reloads_are_counted_by_outcome() {
    let m = Metrics::new();
    assert_eq!(
        sample(&m, "sluice_tls_reloads_total", &["outcome=\"failed\""]),
        0.0
    );
    let e = std::io::Error::other("key does not match the certificate");
    let log = logged(|| {
        CertificateReloaded { sha256: "ab12" }.emit(&m);
        CertificateReloadFailed { error: &e }.emit(&m);
    });
    assert_eq!(
        sample(&m, "sluice_tls_reloads_total", &["outcome=\"ok\""]),
        1.0
    );
    assert_eq!(
        sample(&m, "sluice_tls_reloads_total", &["outcome=\"failed\""]),
        1.0
    );
    assert!(log.contains("reload counted"), "{log}");
    assert!(
        log.contains("ERROR") && log.contains("key does not match"),
        "{log}"
    );
}

#[test]
fn config_reloads_are_counted_by_result() {
    let m = Metrics::new();
    let log = logged(|| {
        ConfigReloaded {
            summary: "processor replaced",
        }
        .emit(&m);
        ConfigReloadFailed {
            error: "metadata csv: line 2",
        }
        .emit(&m);
        ConfigReloadFailed { error: "again" }.emit(&m);
    });
    assert_eq!(sample(&m, "sluice_reload_total", &["result=\"ok\""]), 1.0);
    assert_eq!(
        sample(&m, "sluice_reload_total", &["result=\"failed\""]),
        2.0
    );
    assert!(log.contains("reload applied"), "{log}");
    assert!(
        log.contains("reload rejected") && log.contains("line 2"),
        "{log}"
    );
}

#[test]
fn a_full_window_counts_when_it_starts_and_adds_the_wait_when_it_ends() {
    let m = Metrics::new();
    let w = WindowEvents::register(&m, "tcp");
    let log = logged(|| {
        WindowFull { wanted: 64 }.emit(&w);
        assert_eq!(
            sample(&m, "sluice_window_full_total", &["window=\"tcp\""]),
            1.0,
            "visible while the receiver still waits"
        );
        WindowWaitEnded {
            waited: Duration::from_millis(250),
        }
        .emit(&w);
    });
    assert_eq!(
        sample(&m, "sluice_window_wait_seconds_total", &["window=\"tcp\""]),
        0.25
    );
    assert!(
        log.contains("DEBUG") && log.contains("window full"),
        "{log}"
    );
}

#[test]
fn output_write_failed_counts_and_logs_the_retry() {
    let m = Metrics::new();
    let file = DeliveryEvents::register(&m);
    let e = std::io::Error::from_raw_os_error(28);
    let log = logged(|| {
        OutputWriteFailed {
            path: std::path::Path::new("/var/out.json"),
            error: &e,
            events: 12,
            retry_in: Duration::from_millis(100),
        }
        .emit(&file)
    });
    assert_eq!(sample(&m, "sluice_output_write_errors_total", &[]), 1.0);
    assert!(
        log.contains("ERROR") && log.contains("/var/out.json"),
        "{log}"
    );
}

#[test]
fn json_logs_are_one_object_per_line_with_the_fields_flattened() {
    let m = Metrics::new();
    let ev = StreamEvents::register(&m, "DEFAULT", "tcp", 601);
    let e = std::io::Error::from_raw_os_error(24);
    let log = logged_as(LogFormat::Json, || AcceptFailed { error: &e }.emit(&ev));
    let line: serde_json::Value = serde_json::from_str(log.trim()).expect(&log);
    assert_eq!(line["level"], "WARN", "{line}");
    assert_eq!(line["message"], "accept failed", "{line}");
    assert_eq!(line["port"], 601, "{line}");
    assert!(line["timestamp"].is_string(), "{line}");
}

#[test]
fn the_log_format_is_read_through_the_env_seam() {
    use super::logging::settings;
    let env_of = |pairs: &[(&str, &str)]| {
        let mut env = crate::env::Env::default();
        env.merge_process(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        env
    };
    let env = env_of(&[("SLUICE_LOG_FORMAT", "json"), ("SLUICE_LOG", "debug")]);
    assert_eq!(
        settings(&env, "info"),
        ("debug".into(), LogFormat::Json, None)
    );
    let env = env_of(&[("SLUICE_LOG_FORMAT", "xml")]);
    let (filter, format, warning) = settings(&env, "info");
    assert_eq!((filter.as_str(), format), ("info", LogFormat::Text));
    assert!(warning.unwrap().contains("not one of text, json"));
    assert_eq!(LogFormat::parse("JSON"), Ok(LogFormat::Json));
}

/// The families, types, help texts and label names every event declares, pinned: a rename
/// or a new label shows up here first (and in the README's metrics section).
#[test]
fn metrics_snapshot() {
    let m = Metrics::new();
    let rx = ReceiverCounters::register(&m, "DEFAULT", "udp", 514, Some(0));
    let mut counts = LocalCounts {
        messages: 2,
        bytes: 200,
        by_format: [1, 1, 0],
        truncated: 0,
        absorbed: 0,
    };
    Received(&mut counts).emit(&rx);
    BatchEmitted {
        events: 2,
        bytes: 900,
    }
    .emit(&rx);
    let st = StreamEvents::register(&m, "DEFAULT", "tcp", 601);
    ConnectionAccepted { peer: peer() }.emit(&st);
    ConnectionClosed {
        reason: CloseReason::Eof,
    }
    .emit(&st);
    let tls = TlsEvents::register(&m);
    TlsHandshakeFailed {
        failure: Failure::NotTls,
        peer: peer(),
        port: 6514,
        error: "x",
    }
    .emit(&tls);
    WindowFull { wanted: 1 }.emit(&WindowEvents::register(&m, "udp"));
    let hec = HecEvents::register(&m, "default");
    HecUrlsConfigured {
        urls: &["https://idx1:8088/services/collector/event".to_string()],
    }
    .emit(&hec);
    HecRequestCompleted {
        url: 0,
        outcome: sluice_hec::RequestOutcome::ServerError,
        latency: Duration::from_millis(30),
        raw: 1000,
        sent: 200,
    }
    .emit(&hec);
    let dest = DestinationEvents::register(&m, "default", "hec");
    BatchSubmitted { events: 3 }.emit(&dest);
    let buffer = DiskBufferEvents::register(&m, "default");
    BufferAppended {
        events: 3,
        bytes: 400,
    }
    .emit(&buffer);
    BatchDelivered { events: 3 }.emit(&dest);
    let text = m.render();
    // Keep what depends on this process (process_*, build info) out of the snapshot. Everything else is pinned as rendered, in its order:
    // families in registration order, the series of each sorted by label set.
    let mut kept = String::new();
    for l in text
        .lines()
        .filter(|l| !l.contains("process_") && !l.contains("sluice_build_info"))
    {
        kept.push_str(l);
        kept.push('\n');
    }
    let expected = include_str!("metrics.snapshot");
    assert!(
        kept == expected,
        "the exposition changed; if on purpose, update src/telemetry/metrics.snapshot (and \
         the README) to:\n{kept}"
    );
    // Every family the events declare is valid for the text format too.
    let text = super::expose::to_prometheus_text(&m.render());
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let name = line.split(' ').nth(2).unwrap();
        assert!(
            name.starts_with("sluice_") || name.starts_with("process_"),
            "{line}"
        );
        if line.ends_with(" counter") {
            assert!(name.ends_with("_total"), "{line}");
        }
    }
}
