//! The command line: the arguments of every subcommand, and the small ones that run here —
//! `parse`, `health`, and `reload` (the client that asks a running sluice to reload). `run`
//! is the daemon's ([`crate::daemon::run`]); `main.rs` dispatches.

use std::io::{BufRead, BufWriter, Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use sluice_proto::time::Zone;
use sluice_proto::{ParseOptions, ParsedRecord, parse as parse_message};

use crate::config::Config;
use crate::env::Env;

#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// TOML configuration file (see config/sluice.toml for every key).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// SC4S env_file (`KEY=value` lines), e.g. /opt/sc4s/env_file.
    #[arg(long, value_name = "FILE")]
    pub env_file: Option<PathBuf>,
    /// Load and validate the configuration, print a summary, and exit.
    #[arg(long)]
    pub check: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ParseArgs {
    /// Messages are separated by NUL bytes instead of newlines (to carry embedded LFs).
    #[arg(long)]
    pub null: bool,
    /// Read the conformance corpus format (JSON lines with "id" and "input") and print
    /// `{"id": ..., "actual": {...}}` per line.
    #[arg(long)]
    pub corpus: bool,
    /// Pin "now" to 2 July of this year, 12:00 UTC (the middle of the year, as the
    /// conformance corpus harness does), for reproducible year inference.
    #[arg(long)]
    pub year: Option<i16>,
    /// Zone for stamps without one (default GMT, as SC4S_DEFAULT_TIMEZONE).
    #[arg(long, default_value = "GMT")]
    pub timezone: String,
}

pub fn parse(args: ParseArgs) -> anyhow::Result<ExitCode> {
    let zone = Zone::from_name(&args.timezone)
        .map_err(|e| anyhow::anyhow!("--timezone {:?}: {e}", args.timezone))?;
    let now_unix_secs = match args.year {
        Some(y) => pinned_now_unix(y).context("--year")?,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    };
    let opts = ParseOptions {
        now_unix_secs,
        zone: &zone,
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut emit = |bytes: &[u8], id: Option<serde_json::Value>| -> anyhow::Result<()> {
        let record = ParsedRecord::from(&parse_message(bytes, &opts));
        match id {
            Some(id) => {
                serde_json::to_writer(&mut out, &serde_json::json!({"id": id, "actual": record}))?
            }
            None => serde_json::to_writer(&mut out, &record)?,
        }
        out.write_all(b"\n")?;
        Ok(())
    };
    if args.corpus {
        for (n, line) in input.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let case: serde_json::Value = serde_json::from_str(&line)
                .with_context(|| format!("stdin line {}: not JSON", n + 1))?;
            let text = case["input"]
                .as_str()
                .with_context(|| format!("stdin line {}: no \"input\" string", n + 1))?;
            let bytes: Vec<u8> = if case["input_encoding"] == "latin1" {
                text.chars().map(|c| c as u32 as u8).collect()
            } else {
                text.as_bytes().to_vec()
            };
            emit(&bytes, Some(case["id"].clone()))?;
        }
    } else {
        let mut all = Vec::new();
        input.read_to_end(&mut all)?;
        let sep = if args.null { b'\0' } else { b'\n' };
        let mut parts: Vec<&[u8]> = all.split(|&b| b == sep).collect();
        // A trailing separator ends the last message; it does not start an empty one.
        if parts.last().is_some_and(|p| p.is_empty()) {
            parts.pop();
        }
        for part in parts {
            emit(part, None)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Unix seconds of 2 July `year`, 12:00 UTC: the middle of the year, so every year-less stamp
/// of that year resolves to it (a 1 July 00:00 "now" put 31 December 23:59 and 1 January
/// 00:00 stamps on either side of the half-year mark: corpus case r3164-093).
fn pinned_now_unix(year: i16) -> anyhow::Result<i64> {
    Ok(july_first_unix(year)? + 86_400 + 12 * 3600)
}

/// Unix seconds of 1 July `year`, 00:00 UTC — computed with the civil-date formula so the
/// CLI does not need a calendar library for one number.
fn july_first_unix(year: i16) -> anyhow::Result<i64> {
    if !(1970..=9999).contains(&year) {
        anyhow::bail!("year {year} is out of range (1970-9999)");
    }
    let (y, m, d) = (i64::from(year), 7i64, 1i64);
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400)
}

#[cfg(test)]
mod tests {
    #[test]
    fn july_first() {
        // 2026-07-01T00:00:00Z
        assert_eq!(super::july_first_unix(2026).unwrap(), 1_782_864_000);
        assert_eq!(super::july_first_unix(1970).unwrap(), 181 * 86_400);
        // The corpus harness's "now": 2026-07-02T12:00:00Z.
        assert_eq!(super::pinned_now_unix(2026).unwrap(), 1_782_993_600);
    }
}

#[derive(Args, Debug, Clone)]
pub struct HealthArgs {
    /// Status port to ask [default: SC4S_LISTEN_STATUS_PORT from the environment, else 8080].
    #[arg(long)]
    pub port: Option<u16>,
    /// Address of the status server.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
}

/// The status port the daemon uses with this environment: `SC4S_LISTEN_STATUS_PORT`, read as
/// `sluice run` reads it, or the default.
fn status_port(env: &Env) -> anyhow::Result<u16> {
    let mut config = Config::default();
    if let Some(v) = env.get("SC4S_LISTEN_STATUS_PORT") {
        let mut only = Env::default();
        only.merge_process([("SC4S_LISTEN_STATUS_PORT".to_owned(), v.value.clone())]);
        config.apply_env(&only)?;
    }
    if config.admin.port == 0 {
        anyhow::bail!("SC4S_LISTEN_STATUS_PORT=0: the status server is disabled; give --port");
    }
    Ok(config.admin.port)
}

/// Asks a running sluice for `/health` and prints the verdict with its reason. Exit 0 when
/// healthy, 1 for anything else, an unreachable or silent status server included: Docker's
/// HEALTHCHECK treats 1 as unhealthy and reserves 2, and an orchestrator must not read "cannot
/// ask" as a third state.
pub fn health(args: HealthArgs) -> anyhow::Result<ExitCode> {
    let port = match args.port {
        Some(p) => p,
        // Cannot tell where to ask: unhealthy (1) too, as Docker reserves 2.
        None => match Env::load(None)
            .map_err(anyhow::Error::from)
            .and_then(|e| status_port(&e))
        {
            Ok(p) => p,
            Err(e) => {
                println!("unhealthy: {e:#}");
                return Ok(ExitCode::from(1));
            }
        },
    };
    let addr = std::net::SocketAddr::new(args.host, port);
    Ok(match ask_health(addr) {
        Ok(Health::Healthy(body)) => {
            println!("healthy: {body}");
            ExitCode::SUCCESS
        }
        Ok(Health::Unhealthy(why)) => {
            println!("unhealthy: {why}");
            ExitCode::from(1)
        }
        Err(e) => {
            println!("unhealthy: {e:#}");
            ExitCode::from(1)
        }
    })
}

enum Health {
    /// The response body.
    Healthy(String),
    /// The status line and body of any other answer.
    Unhealthy(String),
}

fn ask_health(addr: std::net::SocketAddr) -> anyhow::Result<Health> {
    use std::io::Read;
    use std::net::TcpStream;
    use std::time::Duration;
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(3)).with_context(|| {
            format!("cannot reach the status server at {addr} (SC4S_LISTEN_STATUS_PORT)")
        })?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .with_context(|| format!("cannot send the request to {addr}"))?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .with_context(|| format!("no complete answer from {addr} within 5 s"))?;
    let response = String::from_utf8_lossy(&response);
    let status_line = response.lines().next().unwrap_or_default().trim();
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .trim()
        .to_owned();
    if status_line.split_whitespace().nth(1) == Some("200") {
        return Ok(Health::Healthy(body));
    }
    if status_line.is_empty() {
        anyhow::bail!("{addr} closed the connection without answering");
    }
    Ok(Health::Unhealthy(if body.is_empty() {
        status_line.to_owned()
    } else {
        format!("{status_line}: {body}")
    }))
}

#[derive(Args, Debug, Clone)]
pub struct ReloadArgs {
    /// Send SIGHUP to the sluice whose pid is in this file (the daemon's SLUICE_PID_FILE)
    /// instead of asking its status server.
    #[arg(long, env = "SLUICE_PID_FILE", value_name = "FILE")]
    pub pid_file: Option<PathBuf>,
    /// Status port of the running sluice (default: SC4S_LISTEN_STATUS_PORT, else 8080).
    #[arg(long, env = "SC4S_LISTEN_STATUS_PORT", default_value_t = 8080)]
    pub port: u16,
    /// Address of the status server; reloads are accepted from the machine itself only.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
}

/// `sluice reload`: exit 0 when the reload was applied (or, with a pid file, the signal was
/// delivered), 1 otherwise, with the reason.
pub fn reload(args: ReloadArgs) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.pid_file {
        let pid = signal_pid_file(path)?;
        println!(
            "sent SIGHUP to sluice (pid {pid}); the outcome is logged and counted in \
             sluice_reload_total"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let addr = SocketAddr::new(args.host, args.port);
    match post_reload(addr) {
        Ok((200, body)) => {
            println!("reloaded: {body}");
            Ok(ExitCode::SUCCESS)
        }
        Ok((code, body)) => {
            println!("reload failed ({code}): {body}");
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            println!("reload failed: {e:#}");
            Ok(ExitCode::from(1))
        }
    }
}

/// Sends SIGHUP to the pid in `path`, after checking that it is a sluice: a stale pid file
/// must not signal whatever process reused the number.
fn signal_pid_file(path: &std::path::Path) -> anyhow::Result<i32> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the pid file {}", path.display()))?;
    let pid: i32 = text
        .trim()
        .parse()
        .ok()
        .filter(|p| *p > 0)
        .with_context(|| format!("{} does not hold a pid: {:?}", path.display(), text.trim()))?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim().to_owned())
        .with_context(|| {
            format!(
                "no process {pid} (from {}): sluice is not running, or the pid file is stale",
                path.display()
            )
        })?;
    if !comm.starts_with("sluice") {
        anyhow::bail!(
            "process {pid} (from {}) is {comm:?}, not sluice: the pid file is stale",
            path.display()
        );
    }
    let target = rustix::process::Pid::from_raw(pid).context("invalid pid")?;
    rustix::process::kill_process(target, rustix::process::Signal::HUP)
        .with_context(|| format!("cannot send SIGHUP to pid {pid}"))?;
    Ok(pid)
}

/// `POST /reload`; returns the status code and body.
fn post_reload(addr: SocketAddr) -> anyhow::Result<(u16, String)> {
    use std::time::Duration;
    let mut s =
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(3)).with_context(|| {
            format!(
                "cannot reach the status server at {addr} (SC4S_LISTEN_STATUS_PORT); with \
                 SLUICE_PID_FILE set, `sluice reload --pid-file` signals the daemon instead"
            )
        })?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    s.write_all(
        b"POST /reload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp)
        .with_context(|| format!("no complete answer from {addr}"))?;
    let resp = String::from_utf8_lossy(&resp);
    let code = resp
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .with_context(|| format!("{addr} did not answer with HTTP"))?;
    let body = resp.split_once("\r\n\r\n").map_or("", |(_, b)| b).trim();
    Ok((code, body.to_owned()))
}
