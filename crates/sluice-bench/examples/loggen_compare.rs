//! Validates `sluice loggen` against syslog-ng's `loggen`: same receiver, same settings, and
//! both tools' sent counts next to what the receiver counted.
//!
//! ```text
//! cargo build --release -p sluice-bench --examples
//! target/release/examples/loggen_compare --rates 20000,50000 --secs 5 --size 800 \
//!     --transports udp,tcp --max-rate --repeat 2
//! ```
//!
//! One UDP counter (a `sluice_net::UdpGroup` socket with a 64 MiB forced receive buffer,
//! drained with `recvmmsg`; the kernel's own drop counter is read too) and one TCP counter
//! (counts LF-terminated messages over all connections) run for the whole comparison. Each
//! case runs `loggen -i -D|-S -Q -r RATE -I SECS -s SIZE 127.0.0.1 PORT`, waits until the
//! receiver has been idle for 500 ms, then runs the `loggen` example of this crate (the
//! `sluice loggen` flags over `sluice_bench::loggen::run`) as
//! `loggen 127.0.0.1:PORT --transport udp|tcp --rate RATE --duration SECS --size SIZE`, and
//! waits again. `--max-rate` adds the unlimited single-connection UDP case
//! (`loggen -r 1000000` against `--rate 0`). Both tools run as child processes under
//! `bash -c '…; times'`, which reports each one's CPU time.
//!
//! Besides the totals, the receiver's counter is sampled every 20 ms, which gives what the
//! receiver got in the first 100 ms of a run (a start-up burst shows here) and its steady
//! rate from 1.5 s after the first message to 0.5 s before the end.
//!
//! `--by-count` stops each rate-limited run after RATE × SECS messages (`loggen -n`,
//! `--count`) instead of after SECS seconds.
//!
//! The two tools run one after the other, never together, so each has the machine (and the
//! receiver) to itself; on a shared box repeat a case (`--repeat`) when a figure looks off.
//!
//! # What it showed (2-core shared VM, load average ≈ 4, 800-byte messages, 5 s)
//!
//! * Both tools: the receiver counted exactly what the tool reported sent, in every case
//!   (received/sent = 1.0000, no kernel drop).
//! * `sluice loggen` sends exactly RATE × SECS (100,000 at 20k/s, 250,000 at 50k/s) and the
//!   receiver's steady rate is the requested one within 0.1 %.
//! * syslog-ng's loggen sends 14–17 % more than RATE × SECS with `-I`: each thread starts with
//!   `rate − rate/10` tokens (`socket_plugin.c`), i.e. a burst of 0.9 s worth of messages
//!   (seen in the first-100-ms column), then its refill truncates fractional tokens and the
//!   steady rate falls 1.5–4 % short of `-r`. With `--by-count` both send the same count and
//!   the receiver sees it exactly; loggen just finishes ~0.5 s early.
//! * CPU per message is lower for `sluice loggen` in every case (sendmmsg batches; one write
//!   per burst on TCP), and its unlimited single-connection UDP rate is higher.

use std::{
    io::Read,
    net::{SocketAddr, TcpListener},
    path::PathBuf,
    process::Command,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use clap::Parser;
use sluice_net::{Balance, SocketStats, UdpGroup, UdpGroupConfig};

type Error = Box<dyn std::error::Error>;

#[derive(Parser, Debug)]
struct Args {
    /// Rates (messages/s, one connection) to compare.
    #[arg(long, value_delimiter = ',', default_value = "20000,50000")]
    rates: Vec<u64>,
    /// Seconds per run.
    #[arg(long, default_value_t = 5)]
    secs: u64,
    /// Message size in bytes including the LF.
    #[arg(long, default_value_t = 800)]
    size: usize,
    /// Transports to compare: udp, tcp.
    #[arg(long, value_delimiter = ',', default_value = "udp,tcp")]
    transports: Vec<String>,
    /// Also compare the maximum single-connection UDP rate.
    #[arg(long)]
    max_rate: bool,
    /// Only the maximum-rate comparison.
    #[arg(long)]
    only_max_rate: bool,
    /// Stop each rate-limited run after RATE × SECS messages (`loggen -n`, `--count`) instead
    /// of after SECS seconds.
    #[arg(long)]
    by_count: bool,
    /// Runs per case.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// syslog-ng's loggen.
    #[arg(long, default_value = "/usr/bin/loggen")]
    loggen: String,
    /// Our loggen program [default: the `loggen` example next to this program].
    #[arg(long)]
    sluice: Option<PathBuf>,
}

/// Counts what arrives on one UDP socket and on a TCP listener.
struct Counters {
    udp_addr: SocketAddr,
    udp_stats: Arc<SocketStats>,
    udp: Arc<AtomicU64>,
    tcp_addr: SocketAddr,
    tcp: Arc<AtomicU64>,
}

fn start_counters(stop: &Arc<AtomicBool>) -> Result<Counters, Error> {
    let mut cfg = UdpGroupConfig::new("127.0.0.1:0".parse()?);
    cfg.balance = Balance::Kernel;
    cfg.rcvbuf = Some(64 << 20);
    cfg.batch = 256;
    cfg.max_datagram = 9000;
    let mut group = UdpGroup::bind(&cfg)?;
    for r in group.rcvbuf_reports() {
        if let Some(hint) = r.sysctl_hint() {
            eprintln!("receiver: {hint}");
        }
    }
    let udp_addr = group.local_addr();
    let udp_stats = group.stats()[0].clone();
    let mut rx = group
        .take_receivers()
        .pop()
        .ok_or("the UDP group has no receiver")?;
    rx.set_read_timeout(Some(Duration::from_millis(100)))?;
    let udp = Arc::new(AtomicU64::new(0));
    {
        let (udp, stop) = (udp.clone(), stop.clone());
        std::thread::spawn(move || {
            let _group = group;
            while !stop.load(Ordering::Relaxed) {
                match rx.recv(256) {
                    Ok(batch) => {
                        let n = batch.count() as u64;
                        udp.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(e) => {
                        eprintln!("UDP counter: {e}");
                        return;
                    }
                }
            }
        });
    }

    let listener = TcpListener::bind("127.0.0.1:0")?;
    let tcp_addr = listener.local_addr()?;
    let tcp = Arc::new(AtomicU64::new(0));
    {
        let tcp = tcp.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let tcp = tcp.clone();
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 1 << 20];
                    loop {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                let lines = buf[..n].iter().filter(|&&b| b == b'\n').count();
                                tcp.fetch_add(lines as u64, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
    }
    Ok(Counters {
        udp_addr,
        udp_stats,
        udp,
        tcp_addr,
        tcp,
    })
}

/// Wait until `counter` has not moved for 500 ms (at most 30 s); its final value.
fn settle(counter: &AtomicU64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = counter.load(Ordering::Relaxed);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = counter.load(Ordering::Relaxed);
        if now == last || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    SyslogNg,
    Sluice,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::SyslogNg => "syslog-ng loggen",
            Tool::Sluice => "sluice loggen",
        }
    }
}

/// What a tool said it did.
struct Sent {
    count: u64,
    secs: f64,
    cpu_secs: f64,
}

/// `0m1.234s` → 1.234
fn parse_times_field(f: &str) -> Option<f64> {
    let (m, s) = f.strip_suffix('s')?.split_once('m')?;
    Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
}

/// Run `program args…` under bash, which prints the child's user and system time after it.
fn run_timed(program: &str, args: &[String]) -> Result<(String, String, f64), Error> {
    let out = Command::new("bash")
        .arg("-c")
        .arg("\"$0\" \"$@\"; rc=$?; times; exit $rc")
        .arg(program)
        .args(args)
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("{program} failed ({}): {stderr}", out.status).into());
    }
    // `times` prints the shell's times, then its children's: "0m1.234s 0m0.567s".
    let children = stdout.lines().next_back().ok_or("no output from `times`")?;
    let cpu = children
        .split_whitespace()
        .map(parse_times_field)
        .sum::<Option<f64>>()
        .ok_or_else(|| format!("cannot read `times` output {children:?}"))?;
    Ok((stdout, stderr, cpu))
}

/// With `--by-count`, the message count a rate-limited run stops at.
fn count_limit(args: &Args, rate: u64) -> Option<u64> {
    (args.by_count && rate > 0).then(|| rate * args.secs)
}

fn run_tool(
    args: &Args,
    tool: Tool,
    udp: bool,
    rate: u64,
    addr: SocketAddr,
) -> Result<Sent, Error> {
    match tool {
        Tool::SyslogNg => {
            let limit = match count_limit(args, rate) {
                Some(n) => [
                    "-n".to_owned(),
                    n.to_string(),
                    "-I".to_owned(),
                    "3600".to_owned(),
                ]
                .to_vec(),
                None => ["-I".to_owned(), args.secs.to_string()].to_vec(),
            };
            let rate = if rate == 0 { 1_000_000 } else { rate };
            let argv: Vec<String> = [
                "-i",
                if udp { "-D" } else { "-S" },
                "-Q",
                "-r",
                &rate.to_string(),
                &limit.join(" "),
                "-s",
                &args.size.to_string(),
                &addr.ip().to_string(),
                &addr.port().to_string(),
            ]
            .iter()
            .flat_map(|s| s.split(' '))
            .map(|s| s.to_string())
            .collect();
            let (_, stderr, cpu_secs) = run_timed(&args.loggen, &argv)?;
            let last = stderr
                .lines()
                .rev()
                .find(|l| l.contains("average rate"))
                .ok_or_else(|| format!("no summary line in loggen's output: {stderr}"))?;
            let field = |key: &str| -> Option<&str> {
                let at = last.find(key)? + key.len();
                last[at..].split([',', ' ']).next()
            };
            Ok(Sent {
                count: field("count=").ok_or("no count=")?.parse()?,
                secs: field("time=").ok_or("no time=")?.parse()?,
                cpu_secs,
            })
        }
        Tool::Sluice => {
            let program = match &args.sluice {
                Some(p) => p.clone(),
                None => std::env::current_exe()?.with_file_name("loggen"),
            };
            if !program.exists() {
                return Err(format!(
                    "{} not found: build it with `cargo build --release -p sluice-bench --examples` or pass --sluice",
                    program.display()
                )
                .into());
            }
            let argv: Vec<String> = [
                addr.to_string().as_str(),
                "--transport",
                if udp { "udp" } else { "tcp" },
                "--rate",
                &rate.to_string(),
                &match count_limit(args, rate) {
                    Some(n) => format!("--count {n}"),
                    None => format!("--duration {}", args.secs),
                },
                "--size",
                &args.size.to_string(),
                "--quiet",
                "--json",
            ]
            .iter()
            .flat_map(|s| s.split(' '))
            .map(|s| s.to_string())
            .collect();
            let (stdout, stderr, cpu_secs) = run_timed(&program.to_string_lossy(), &argv)?;
            let json = stdout
                .lines()
                .find(|l| l.starts_with('{'))
                .ok_or_else(|| format!("no JSON report from sluice loggen: {stderr}"))?;
            let v: serde_json::Value = serde_json::from_str(json)?;
            if v["errors"].as_u64() != Some(0) || v["lagged"].as_u64() != Some(0) {
                eprintln!("sluice loggen: {}", stderr.trim());
            }
            Ok(Sent {
                count: v["sent"].as_u64().ok_or("no sent in the report")?,
                secs: v["elapsed_secs"]
                    .as_f64()
                    .ok_or("no elapsed_secs in the report")?,
                cpu_secs,
            })
        }
    }
}

/// Samples a counter every 20 ms while a run goes on.
struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Vec<(f64, u64)>>,
}

fn sample(counter: &Arc<AtomicU64>) -> Sampler {
    let stop = Arc::new(AtomicBool::new(false));
    let handle = {
        let (stop, counter) = (stop.clone(), counter.clone());
        std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut out = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                out.push((t0.elapsed().as_secs_f64(), counter.load(Ordering::Relaxed)));
                std::thread::sleep(Duration::from_millis(20));
            }
            out
        })
    };
    Sampler { stop, handle }
}

/// (received in the first 100 ms, steady rate from 1.5 s to secs − 0.5 s), both measured
/// from the first sample that saw a message.
fn shape_of(samples: &[(f64, u64)], secs: u64) -> Option<(u64, f64)> {
    let base = samples.first()?.1;
    let start = samples.iter().find(|s| s.1 > base)?.0;
    let at = |t: f64| samples.iter().find(|s| s.0 >= start + t).copied();
    let first = at(0.1)?.1 - base;
    let (t1, c1) = at(1.5)?;
    let (t2, c2) = at(secs as f64 - 0.5)?;
    let steady = if t2 > t1 {
        (c2 - c1) as f64 / (t2 - t1)
    } else {
        0.0
    };
    Some((first, steady))
}

struct Row {
    case: String,
    tool: Tool,
    sent: Sent,
    received: u64,
    kernel_drops: u64,
    first_100ms: Option<u64>,
    steady: Option<f64>,
}

fn main() -> Result<(), Error> {
    let args = Args::parse();
    let stop = Arc::new(AtomicBool::new(false));
    let c = start_counters(&stop)?;
    let mut cases: Vec<(bool, u64, String)> = Vec::new();
    if !args.only_max_rate {
        for t in &args.transports {
            let udp = match t.as_str() {
                "udp" => true,
                "tcp" => false,
                other => {
                    return Err(
                        format!("--transports: unknown transport {other:?} (udp, tcp)").into(),
                    );
                }
            };
            for &rate in &args.rates {
                cases.push((udp, rate, format!("{t} {rate}/s")));
            }
        }
    }
    if args.max_rate || args.only_max_rate {
        cases.push((true, 0, "udp max".to_owned()));
    }
    let mut rows = Vec::new();
    for (udp, rate, name) in &cases {
        for _ in 0..args.repeat {
            for tool in [Tool::SyslogNg, Tool::Sluice] {
                let (counter, addr) = if *udp {
                    (&c.udp, c.udp_addr)
                } else {
                    (&c.tcp, c.tcp_addr)
                };
                let before = settle(counter);
                let drops_before = c.udp_stats.kernel_drops();
                let sampler = sample(counter);
                let sent = run_tool(&args, tool, *udp, *rate, addr)?;
                let received = settle(counter) - before;
                sampler.stop.store(true, Ordering::Relaxed);
                let samples = sampler.handle.join().map_err(|_| "sampler panicked")?;
                let shape = shape_of(&samples, args.secs);
                let kernel_drops = if *udp {
                    c.udp_stats.kernel_drops() - drops_before
                } else {
                    0
                };
                eprintln!(
                    "{name:>16} {:<17} sent {:>9} in {:.3} s ({:.2} s CPU), received {received:>9}",
                    tool.name(),
                    sent.count,
                    sent.secs,
                    sent.cpu_secs
                );
                rows.push(Row {
                    case: name.clone(),
                    tool,
                    sent,
                    received,
                    kernel_drops,
                    first_100ms: shape.map(|s| s.0),
                    steady: shape.map(|s| s.1),
                });
            }
        }
    }
    stop.store(true, Ordering::Relaxed);

    println!(
        "| case | tool | sent | time s | sent/s | received | kernel drops | received/sent | rcvd in first 100 ms | steady rcv rate /s | CPU s | CPU µs/msg |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
        println!(
            "| {} | {} | {} | {:.3} | {:.0} | {} | {} | {:.4} | {} | {} | {:.2} | {:.2} |",
            r.case,
            r.tool.name(),
            r.sent.count,
            r.sent.secs,
            r.sent.count as f64 / r.sent.secs.max(1e-9),
            r.received,
            r.kernel_drops,
            r.received as f64 / (r.sent.count.max(1) as f64),
            opt(r.first_100ms.map(|v| v.to_string())),
            opt(r.steady.map(|v| format!("{v:.0}"))),
            r.sent.cpu_secs,
            r.sent.cpu_secs * 1e6 / (r.sent.count.max(1) as f64),
        );
    }
    Ok(())
}
