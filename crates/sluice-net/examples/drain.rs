//! Throughput probe: one sender thread (`UdpSender`, sendmmsg) floods one `UdpReceiver`
//! thread (recvmmsg) over loopback for a fixed time, then reports rates and kernel drops.
//!
//! ```text
//! cargo run --release -p sluice-net --example drain -- [seconds=5] [size=800] [batch=64] [rcvbuf_mib=64] [balance=kernel] [sockets=1] [prefill=0]
//! ```
//! With more than one socket, one receive thread runs per socket. The sender is one thread
//! with one 4-tuple, so `balance=kernel` puts everything on one socket.
//!
//! On loopback the sender's CPU also pays for delivery into the receive queue, so the flood
//! usually measures the sender. `prefill=N` adds a second phase that measures the receiver
//! alone: N datagrams are queued into one socket with no reader (its buffer is forced to fit
//! them, which needs root or CAP_NET_ADMIN), then one thread drains them with `recv`.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use sluice_net::{Balance, UdpGroup, UdpGroupConfig, UdpSender, UdpSenderConfig};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    match args.get(i) {
        None => default,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("argument {i} ({s:?}) is not valid");
            std::process::exit(2)
        }),
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: f64 = arg(&args, 0, 5.0);
    let size: usize = arg(&args, 1, 800);
    let batch: usize = arg(&args, 2, 64);
    let rcvbuf_mib: usize = arg(&args, 3, 64);
    let balance: Balance = arg(&args, 4, Balance::Kernel);
    let sockets: usize = arg(&args, 5, 1);
    let prefill: u64 = arg(&args, 6, 0);

    let mut cfg = UdpGroupConfig::new("127.0.0.1:0".parse()?);
    cfg.sockets = sockets;
    cfg.balance = balance;
    cfg.batch = batch;
    cfg.rcvbuf = Some(rcvbuf_mib << 20);
    let mut group = UdpGroup::bind(&cfg)?;
    println!(
        "group {} sockets={} balance={} (requested {}{}) rcvbuf={:?}",
        group.local_addr(),
        group.len(),
        group.balance_mode(),
        group.balance_requested(),
        group
            .fallback_reason()
            .map(|r| format!(": {r}"))
            .unwrap_or_default(),
        group.rcvbuf_reports()[0],
    );
    println!("load average before: {}", loadavg());

    let stop_receivers = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for mut rx in group.take_receivers() {
        let stop = stop_receivers.clone();
        handles.push(thread::spawn(move || -> std::io::Result<()> {
            rx.set_read_timeout(Some(Duration::from_millis(100)))?;
            let cap = rx.batch_capacity();
            while !stop.load(Ordering::Relaxed) {
                // Touch every payload like a parser would, so the slots are really read.
                let mut sum = 0u64;
                for d in rx.recv(cap)? {
                    sum += u64::from(d.payload[0]);
                }
                std::hint::black_box(sum);
            }
            rx.refresh_kernel_drops()?;
            Ok(())
        }));
    }

    let mut tx = UdpSender::connect(&UdpSenderConfig::new(group.local_addr()))?;
    let payload = vec![b'x'; size];
    let datagrams: Vec<&[u8]> = (0..64).map(|_| payload.as_slice()).collect();
    let run = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < run {
        sent += tx.send_batch(&datagrams)? as u64;
    }
    let send_time = start.elapsed().as_secs_f64();
    // Let the receivers drain what is queued, then stop them.
    let stats: Vec<_> = group.stats().to_vec();
    let mut last = u64::MAX;
    loop {
        thread::sleep(Duration::from_millis(300));
        let now: u64 = stats.iter().map(|s| s.received()).sum();
        if now == last {
            break;
        }
        last = now;
    }
    stop_receivers.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("receiver thread")?;
    }
    let received: u64 = stats.iter().map(|s| s.received()).sum();
    let drops: u64 = stats.iter().map(|s| s.kernel_drops()).sum();
    let batches: u64 = stats.iter().map(|s| s.batches()).sum();
    println!(
        "sent={sent} ({:.0}/s) received={received} ({:.0}/s) kernel_drops={drops} unaccounted={} avg_batch={:.1} size={size} time={send_time:.2}s",
        sent as f64 / send_time,
        received as f64 / send_time,
        sent as i64 - received as i64 - drops as i64,
        received as f64 / batches.max(1) as f64,
    );
    println!(
        "per socket received={:?}",
        stats.iter().map(|s| s.received()).collect::<Vec<_>>()
    );
    println!("load average after: {}", loadavg());
    if prefill > 0 {
        drain_only(prefill, size, batch)?;
    }
    Ok(())
}

/// Queue `count` datagrams with no reader, then time one thread draining them.
fn drain_only(count: u64, size: usize, batch: usize) -> Result<(), Box<dyn std::error::Error>> {
    let mut cfg = UdpGroupConfig::new("127.0.0.1:0".parse()?);
    cfg.balance = Balance::Kernel;
    cfg.batch = batch;
    // Each queued datagram costs its payload plus ~1.5 KiB of kernel overhead on loopback.
    cfg.rcvbuf = Some(((count as usize) * (size + 1536)).min(1 << 30));
    let mut group = UdpGroup::bind(&cfg)?;
    let report = group.rcvbuf_reports()[0];
    let mut rx = group.take_receivers().remove(0);
    rx.set_read_timeout(Some(Duration::from_millis(500)))?;
    let mut tx = UdpSender::connect(&UdpSenderConfig::new(group.local_addr()))?;
    let payload = vec![b'y'; size];
    let datagrams: Vec<&[u8]> = (0..64).map(|_| payload.as_slice()).collect();
    let mut sent = 0u64;
    while sent < count {
        let n = (count - sent).min(64) as usize;
        tx.send_all(&datagrams[..n])?;
        sent += n as u64;
    }
    let queued = rx.meminfo()?;
    let start = Instant::now();
    let mut received = 0u64;
    loop {
        let mut sum = 0u64;
        let got = rx.recv(batch)?;
        if got.is_empty() {
            break;
        }
        for d in got {
            sum += u64::from(d.payload[0]);
            received += 1;
        }
        std::hint::black_box(sum);
    }
    // The last recv waited for the 500 ms timeout; leave it out of the rate.
    let secs = (start.elapsed().as_secs_f64() - 0.5).max(1e-9);
    let drops = rx.refresh_kernel_drops()?;
    println!(
        "drain only: queued={sent} (rcvbuf {} bytes, {} used before draining) received={received} kernel_drops={drops} in {secs:.3}s = {:.0}/s, avg_batch={:.1}",
        report.effective,
        queued.queued_bytes,
        received as f64 / secs,
        received as f64 / rx.stats().batches().max(1) as f64,
    );
    println!("load average after drain: {}", loadavg());
    Ok(())
}
