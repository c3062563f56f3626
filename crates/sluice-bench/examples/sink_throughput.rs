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

    let body: Vec<u8> =
        sluice_bench::sink::sample::sample_body(per as usize, 0x9E37_79B9_7F4A_7C15);
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
