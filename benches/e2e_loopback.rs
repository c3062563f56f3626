//! End to end over loopback: 200,000 loggen-shaped 800-byte datagrams, sent as fast as one
//! sender goes (`sluice_bench::loggen`, `sendmmsg`), into a real `sluice run` daemon (the
//! release binary, built on first use by `sluice_suite::sluice_bin`; 4 `SO_REUSEPORT`
//! sockets, `SC4S_ENABLE_EBPF=yes` so the one sender is spread over them, falling back to
//! cBPF without privileges) that parses, classifies, encodes and POSTs them to an in-process
//! HEC sink. One iteration = send all, then wait until the sink has accepted every datagram
//! the kernel did not drop (`sluice_kernel_dropped_total`).
//!
//! The throughput line is events/s through the whole pipeline on this machine (sender,
//! daemon and sink share its cores). After the run the bench prints the daemon's CPU time per
//! event (utime + stime from `/proc/PID/stat`), the figure that does not depend on how many
//! cores the sender and the sink took, and any kernel drops.
//!
//! The HEC batch timeout is 50 ms instead of SC4S's 300 ms, so the last partial batch does
//! not dominate a run of well under a second.
//!
//! `cargo bench --bench e2e_loopback`

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_bench::loggen::{self, LoggenConfig};
use sluice_suite::{Daemon, DaemonOpts, SinkConfig, SinkHandle};

const EVENTS: u64 = 200_000;
const SIZE: usize = 800;

/// The daemon's pid: the process whose working directory is the daemon's own temp dir.
fn daemon_pid(d: &Daemon) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cwd = std::fs::read_link(e.path().join("cwd")).ok()?;
        (cwd == d.dir).then_some(pid)
    })
}

fn cpu_secs(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let after = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
    let f: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    // USER_HZ is 100 on every Linux architecture in use.
    f.iter().sum::<u64>() as f64 / 100.0
}

struct Totals {
    events: u64,
    cpu: f64,
    drops: u64,
}

fn bench_e2e(c: &mut Criterion) {
    let sink = SinkHandle::spawn_thread(SinkConfig {
        record: false,
        track_seq: false,
        ..SinkConfig::default()
    })
    .expect("start the HEC sink");
    let daemon = Daemon::start(
        DaemonOpts::default()
            .hec(&sink)
            .env("SC4S_ENABLE_EBPF", "yes")
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50),
    );
    let pid = daemon_pid(&daemon);
    let balance = daemon
        .metrics()
        .0
        .keys()
        .find(|k| k.starts_with("sluice_udp_balance_info"))
        .cloned()
        .unwrap_or_default();
    eprintln!("e2e_loopback: daemon pid {pid:?}, {balance}");
    let target = daemon.udp_addr().to_string();
    let mut totals = Totals {
        events: 0,
        cpu: 0.0,
        drops: 0,
    };
    let mut run_id = 1_000_000_000u64;

    let mut group = c.benchmark_group("e2e_loopback");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("udp_200k_x_800B", |b| {
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iters {
                run_id += 1;
                let base = sink.accepted_events();
                let drops0 = daemon.metrics().sum("sluice_kernel_dropped_total", &[]) as u64;
                let cpu0 = pid.map_or(0.0, cpu_secs);
                let mut cfg = LoggenConfig::new(target.clone());
                cfg.rate = 0;
                cfg.count = Some(EVENTS);
                cfg.size = Some(SIZE);
                cfg.run_id = Some(run_id);
                cfg.quiet = true;
                let start = Instant::now();
                let sent = loggen::run(&cfg).expect("loggen").sent;
                // Wait for everything the kernel did not drop. The sink's counter is cheap to
                // poll; /metrics (which costs the daemon CPU) only every 100 ms.
                let deadline = Instant::now() + Duration::from_secs(120);
                let mut drops = 0;
                let mut polls = 0u32;
                loop {
                    if sink.accepted_events() - base >= sent - drops {
                        totals.drops += drops;
                        break;
                    }
                    polls += 1;
                    if polls.is_multiple_of(100) {
                        drops = daemon.metrics().sum("sluice_kernel_dropped_total", &[]) as u64
                            - drops0;
                    }
                    assert!(
                        Instant::now() < deadline,
                        "the sink got {} of {sent} events ({drops} kernel drops) within 120 s; daemon log:\n{}",
                        sink.accepted_events() - base,
                        daemon.log()
                    );
                    std::thread::sleep(Duration::from_millis(1));
                }
                elapsed += start.elapsed();
                totals.events += sent;
                totals.cpu += pid.map_or(0.0, cpu_secs) - cpu0;
            }
            elapsed
        })
    });
    group.finish();
    if totals.events > 0 && pid.is_some() {
        eprintln!(
            "e2e_loopback: daemon CPU {:.2} µs/event over {} events ({} kernel drops)",
            totals.cpu * 1e6 / totals.events as f64,
            totals.events,
            totals.drops
        );
    }
}

criterion_group!(benches, bench_e2e);
criterion_main!(benches);
