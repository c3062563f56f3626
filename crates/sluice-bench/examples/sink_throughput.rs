//! Measures how many events/s the HEC test sink accepts over loopback.
//!
//! `cargo run --release -p sluice-bench --example sink_throughput -- [connections] [seconds]
//! [events_per_request] [gzip 0|1] [track_seq 0|1]` (defaults 4 3 5000 0 1). Each client
//! thread sends the same pre-built SC4S-shaped request over one keep-alive connection as fast
//! as the sink answers; the rate is the sink's own count of accepted events.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sluice_bench::sink::client::RawClient;
use sluice_bench::{SinkConfig, SinkHandle};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let conns = arg(1, 4) as usize;
    let secs = arg(2, 3);
    let per = arg(3, 5000);
    let gzip = arg(4, 0) == 1;
    let track_seq = arg(5, 1) == 1;

    let sink = SinkHandle::spawn_thread(SinkConfig {
        token: "bench".into(),
        record: false,
        track_seq,
        threads: 2,
        ..SinkConfig::default()
    })
    .expect("sink starts");

    // Log-like text with varied words, addresses and numbers (gzip sees a realistic ratio).
    const WORDS: &[&str] = &[
        "connection",
        "accepted",
        "denied",
        "from",
        "port",
        "user",
        "session",
        "opened",
        "closed",
        "for",
        "src",
        "dst",
        "proto",
        "TCP",
        "UDP",
        "bytes",
        "duration",
        "action",
        "allow",
        "drop",
        "policy",
        "rule",
        "interface",
        "outside",
        "inside",
        "login",
        "failed",
        "password",
        "publickey",
        "root",
        "admin",
        "service",
        "started",
        "stopped",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move |n: u64| {
        // xorshift64*: deterministic and dependency-free.
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        seed.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    };
    let body: Vec<u8> = (0..per)
        .map(|s| {
            let words: Vec<&str> = (0..24).map(|_| WORDS[rnd(WORDS.len() as u64) as usize]).collect();
            format!(
                r#"{{"time":"{}.{:03}","host":"fw-{:02}","source":"program:prg00000","sourcetype":"nix:syslog","index":"osnix","event":"prg00000[{}]: seq: {s:010}, thread: 0000, runid: 1772713731, stamp: 2026-03-05T12:28:51 {} 10.{}.{}.{}:{} -> 192.168.{}.{}:{} {}","fields":{{"sc4s_vendor":"nix","sc4s_product":"syslog","sc4s_syslog_facility":"user","sc4s_syslog_severity":"info","sc4s_container":"sluice","sc4s_destport":"514","sc4s_fromhostip":"10.0.{}.{}","sc4s_proto":"UDP","sc4s_recv_time":"1710166925.{:03}","sc4s_tags":".source.s_DEFAULT|wireformat:rfc3164"}}}}"#,
                1_710_166_925 + s / 1000,
                rnd(1000),
                rnd(64),
                1000 + rnd(64000),
                words.join(" "),
                rnd(256),
                rnd(256),
                rnd(256),
                1024 + rnd(64000),
                rnd(256),
                rnd(256),
                rnd(1024),
                rnd(u64::MAX),
                rnd(256),
                rnd(256),
                rnd(1000),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes();
    let raw_len = body.len();
    let body = if gzip {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(&body).unwrap();
        enc.finish().unwrap()
    } else {
        body
    };
    let body = Arc::new(body);
    let stop = Arc::new(AtomicBool::new(false));
    let addr = sink.addr();
    let start = Instant::now();
    let threads: Vec<_> = (0..conns)
        .map(|_| {
            let body = Arc::clone(&body);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut c = RawClient::connect(addr).expect("connect");
                let mut headers = vec![("Authorization", "Splunk bench")];
                if gzip {
                    headers.push(("Content-Encoding", "gzip"));
                }
                while !stop.load(Ordering::Relaxed) {
                    let r = c
                        .request("POST", "/services/collector/event", &headers, &body)
                        .expect("answer");
                    assert_eq!(r.status, 200, "{}", r.text());
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let elapsed = start.elapsed().as_secs_f64();
    let sink_cpu = sink_cpu_seconds();
    let st = sink.stats();
    println!(
        "sink: {} events in {:.2}s = {:.0} events/s ({:.0} MB/s decoded, {} requests of {} events, \
         {} bytes/event, gzip={gzip}, track_seq={track_seq}, {conns} connections)",
        st.accepted_events,
        elapsed,
        st.accepted_events as f64 / elapsed,
        st.bytes_decoded as f64 / elapsed / 1e6,
        st.accepted_requests,
        per,
        raw_len as u64 / per,
    );
    if let Some(cpu) = sink_cpu {
        println!(
            "sink CPU: {cpu:.2} s for {} events = {:.2} µs/event = {:.0} events per CPU-second",
            st.accepted_events,
            cpu * 1e6 / st.accepted_events as f64,
            st.accepted_events as f64 / cpu
        );
    }
}

/// CPU time (user + system) of the sink's threads, from /proc (Linux only).
fn sink_cpu_seconds() -> Option<f64> {
    let ticks = 100.0; // USER_HZ on Linux
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let comm = std::fs::read_to_string(path.join("comm")).ok()?;
        if !comm.trim().starts_with("hec-sink") {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("stat")).ok()?;
        // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        total += f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    }
    Some(total as f64 / ticks)
}
