//! What the tool reads about a receiver: its Prometheus `/metrics`, its process in `/proc`
//! (CPU time, peak RSS, per-thread CPU) and the kernel's per-socket UDP drop counters in
//! `/proc/net/udp{,6}`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Label pairs of a sample, in order.
type Labels = Vec<(String, String)>;
/// Family name, labels, value.
type Sample = (String, Labels, f64);

/// Parsed Prometheus text format: one entry per sample line.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    samples: Vec<Sample>,
}

impl Metrics {
    /// Parses the text exposition format. Lines that are not samples are skipped; label
    /// values may contain escaped quotes.
    pub fn parse(text: &str) -> Metrics {
        let mut samples = Vec::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(s) = parse_sample(line) {
                samples.push(s);
            }
        }
        Metrics { samples }
    }

    /// Sum of the samples of family `name` whose labels include every `(key, value)` given.
    /// `None` when the family has no such sample at all (the receiver does not export it).
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut found = false;
        let mut total = 0.0;
        for (n, l, v) in &self.samples {
            if n == name
                && labels
                    .iter()
                    .all(|(k, want)| l.iter().any(|(lk, lv)| lk == k && lv == want))
            {
                found = true;
                total += v;
            }
        }
        found.then_some(total)
    }

    /// Values of family `name` keyed by the value of label `key`, filtered by `labels`.
    pub fn by_label(
        &self,
        name: &str,
        key: &str,
        labels: &[(&str, &str)],
    ) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        for (n, l, v) in &self.samples {
            if n == name
                && labels
                    .iter()
                    .all(|(k, want)| l.iter().any(|(lk, lv)| lk == k && lv == want))
                && let Some((_, lv)) = l.iter().find(|(lk, _)| lk == key)
            {
                *out.entry(lv.clone()).or_insert(0.0) += v;
            }
        }
        out
    }

    /// The labels of the first sample of family `name`.
    pub fn labels_of(&self, name: &str) -> Option<&[(String, String)]> {
        self.samples
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, l, _)| l.as_slice())
    }
}

fn parse_sample(line: &str) -> Option<Sample> {
    let (name, rest) = match line.find('{') {
        Some(i) => (&line[..i], &line[i..]),
        None => {
            let (n, v) = line.split_once(' ')?;
            return Some((n.to_string(), Vec::new(), parse_value(v)?));
        }
    };
    let mut labels = Vec::new();
    let b = rest.as_bytes();
    let mut i = 1;
    loop {
        while i < b.len() && (b[i] == b',' || b[i] == b' ') {
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        if b[i] == b'}' {
            i += 1;
            break;
        }
        let eq = rest[i..].find('=')? + i;
        let key = rest[i..eq].trim().to_string();
        if b.get(eq + 1) != Some(&b'"') {
            return None;
        }
        let mut j = eq + 2;
        let mut val = String::new();
        while j < b.len() && b[j] != b'"' {
            if b[j] == b'\\' && j + 1 < b.len() {
                j += 1;
                val.push(match b[j] {
                    b'n' => '\n',
                    c => c as char,
                });
            } else {
                let ch = rest[j..].chars().next()?;
                val.push(ch);
                j += ch.len_utf8() - 1;
            }
            j += 1;
        }
        if j >= b.len() {
            return None;
        }
        labels.push((key, val));
        i = j + 1;
    }
    let value = rest[i..].split_whitespace().next()?;
    Some((name.to_string(), labels, parse_value(value)?))
}

fn parse_value(v: &str) -> Option<f64> {
    let v = v.split_whitespace().next()?;
    match v {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => v.parse().ok(),
    }
}

/// A `http://HOST:PORT/PATH` URL, the only kind `--metrics` takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    pub host: String,
    pub port: u16,
    pub path: String,
}

impl HttpUrl {
    pub fn parse(url: &str) -> Result<HttpUrl, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| "only http:// URLs are supported".to_string())?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/metrics"),
        };
        // `[v6]:port`, `[v6]`, `host:port`, `host`.
        let (host, port) = match authority.rfind(':') {
            Some(i) if !authority[i..].contains(']') => {
                (&authority[..i], Some(&authority[i + 1..]))
            }
            _ => (authority, None),
        };
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| format!("{p:?} is not a port number"))?,
            None => 80,
        };
        if host.is_empty() {
            return Err("no host".into());
        }
        Ok(HttpUrl {
            host: host.to_string(),
            port,
            path: path.to_string(),
        })
    }

    pub fn addr(&self) -> Result<SocketAddr, String> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        (host, self.port)
            .to_socket_addrs()
            .map_err(|e| e.to_string())?
            .next()
            .ok_or_else(|| "no address found".to_string())
    }
}

/// A plain HTTP/1.1 GET; returns the status code and the body (de-chunked).
pub fn http_get(url: &HttpUrl, timeout: Duration) -> Result<(u16, String), String> {
    let addr = url.addr()?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(timeout))
        .and_then(|()| s.set_write_timeout(Some(timeout)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET {} HTTP/1.1\r\nHost: {}\r\nAccept: text/plain\r\nConnection: close\r\n\r\n",
        url.path, url.host
    )
    .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| "malformed HTTP response".to_string())?;
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| "malformed HTTP status line".to_string())?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok((code, body))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            out.push_str(&rest[..n.min(rest.len())]);
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].strip_prefix("\r\n").unwrap_or(&rest[n..]);
    }
    out
}

/// Fetches and parses `/metrics`.
pub fn fetch_metrics(url: &HttpUrl) -> Result<Metrics, String> {
    let (code, body) = http_get(url, Duration::from_secs(5))?;
    if code != 200 {
        return Err(format!("HTTP {code}"));
    }
    Ok(Metrics::parse(&body))
}

/// Clock ticks per second of `/proc/<pid>/stat` times: `getconf CLK_TCK`, else 100 (the
/// value of USER_HZ on every Linux architecture in use).
pub fn clock_ticks() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0)
        .unwrap_or(100.0)
}

/// utime + stime of a `stat` line, in ticks. The command name may hold spaces and
/// parentheses, so fields are counted from the last `)`.
fn stat_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // after ")": state(3) ppid(4) … utime(14) stime(15) → indexes 11 and 12.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn stat_comm(stat: &str) -> Option<&str> {
    Some(&stat[stat.find('(')? + 1..stat.rfind(')')?])
}

/// CPU seconds (user + system) the process has used so far, all threads.
pub fn cpu_seconds(pid: u32, ticks: f64) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat_ticks(&stat)? as f64 / ticks)
}

/// This process's own CPU seconds (all threads) and those of its children that have been
/// waited for (`cutime + cstime`: a syslog-ng loggen run once it has exited).
pub fn self_and_children_cpu(ticks: f64) -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let f: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    if f.len() < 4 {
        return None;
    }
    Some(((f[0] + f[1]) as f64 / ticks, (f[2] + f[3]) as f64 / ticks))
}

/// CPU seconds of this process's threads whose name starts with `prefix`.
pub fn own_threads_cpu(prefix: &str, ticks: f64) -> f64 {
    cpu_by_thread(std::process::id(), ticks)
        .iter()
        .filter(|(n, _)| n.starts_with(prefix))
        .map(|(_, v)| v)
        .sum()
}

/// CPU seconds per thread name (threads of the same name summed, e.g. all
/// `tokio-runtime-w`). Threads that exited are not included.
pub fn cpu_by_thread(pid: u32, ticks: f64) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let (Some(name), Some(t)) = (stat_comm(&stat), stat_ticks(&stat)) {
            *out.entry(name.to_string()).or_insert(0.0) += t as f64 / ticks;
        }
    }
    out
}

/// A `kB` field of `/proc/<pid>/status`, e.g. `VmHWM`, in KiB.
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        let v = l.strip_prefix(field)?.strip_prefix(':')?;
        v.split_whitespace().next()?.parse().ok()
    })
}

/// Resets the process's peak RSS (`VmHWM`) so the next reading covers only what follows
/// (`echo 5 > /proc/PID/clear_refs`, Linux ≥ 4.0; needs the right to write the file).
pub fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// The kernel's drop counter of every UDP socket bound to `port` (IPv4 and IPv6), by inode.
/// These are the same drops `SO_RXQ_OVFL` reports (`sk_drops`), readable for any receiver.
pub fn udp_socket_drops(port: u16) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for file in ["/proc/net/udp", "/proc/net/udp6"] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            if let Some((p, inode, drops)) = parse_proc_udp_line(line)
                && p == port
            {
                out.insert(inode, drops);
            }
        }
    }
    out
}

/// `(local port, inode, drops)` of one `/proc/net/udp` line.
fn parse_proc_udp_line(line: &str) -> Option<(u16, u64, u64)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
    if f.len() < 13 {
        return None;
    }
    let port = u16::from_str_radix(f[1].rsplit_once(':')?.1, 16).ok()?;
    let inode = f[9].parse().ok()?;
    let drops = f[12].parse().ok()?;
    Some((port, inode, drops))
}

/// Drops between two [`udp_socket_drops`] readings: per socket, a socket that appeared in
/// between counts from 0.
pub fn drops_delta(before: &BTreeMap<u64, u64>, after: &BTreeMap<u64, u64>) -> u64 {
    after
        .iter()
        .map(|(inode, d)| d.saturating_sub(before.get(inode).copied().unwrap_or(0)))
        .sum()
}

/// `load average` 1/5/15 min.
pub fn load_average() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# HELP sluice_received_total Messages accepted.
# TYPE sluice_received_total counter
sluice_received_total{transport="udp",port="5514",socket="0"} 10
sluice_received_total{transport="udp",port="5514",socket="1"} 32
sluice_received_total{transport="tcp",port="5514",socket=""} 5
sluice_udp_balance_info{port="5514",mode="cbpf",requested="ebpf",fallback_reason="no \"CAP_BPF\", sorry"} 1
sluice_window_events{window="udp"} 0
sluice_uptime_seconds 12.5
"#;

    #[test]
    fn prometheus_text() {
        let m = Metrics::parse(TEXT);
        assert_eq!(m.sum("sluice_received_total", &[]), Some(47.0));
        assert_eq!(
            m.sum("sluice_received_total", &[("transport", "udp")]),
            Some(42.0)
        );
        assert_eq!(m.sum("sluice_nothing", &[]), None);
        assert_eq!(m.sum("sluice_uptime_seconds", &[]), Some(12.5));
        let by = m.by_label("sluice_received_total", "socket", &[("transport", "udp")]);
        assert_eq!(by.get("1"), Some(&32.0));
        let l = m.labels_of("sluice_udp_balance_info").unwrap();
        assert_eq!(l[1], ("mode".to_string(), "cbpf".to_string()));
        assert_eq!(l[3].1, "no \"CAP_BPF\", sorry");
    }

    #[test]
    fn urls() {
        assert_eq!(
            HttpUrl::parse("http://127.0.0.1:8080/metrics").unwrap(),
            HttpUrl {
                host: "127.0.0.1".into(),
                port: 8080,
                path: "/metrics".into()
            }
        );
        assert_eq!(HttpUrl::parse("http://h:9").unwrap().path, "/metrics");
        assert_eq!(HttpUrl::parse("http://h/x").unwrap().port, 80);
        assert!(HttpUrl::parse("https://h/x").is_err());
        assert!(HttpUrl::parse("http://h:xx/").is_err());
    }

    #[test]
    fn chunked_bodies() {
        assert_eq!(
            dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
            "hello world"
        );
    }

    #[test]
    fn proc_lines() {
        let stat =
            "1234 (udp (x) 1) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0";
        assert_eq!(stat_ticks(stat), Some(300));
        assert_eq!(stat_comm(stat), Some("udp (x) 1"));
        let udp = "  953: 0100007F:15B3 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 123456 2 0000000000000000 17";
        assert_eq!(parse_proc_udp_line(udp), Some((5555, 123456, 17)));
        let before = BTreeMap::from([(1, 10), (2, 5)]);
        let after = BTreeMap::from([(1, 12), (3, 4)]);
        assert_eq!(drops_delta(&before, &after), 6);
    }

    #[test]
    fn this_process_is_readable() {
        let pid = std::process::id();
        assert!(cpu_seconds(pid, clock_ticks()).is_some());
        assert!(status_kib(pid, "VmHWM").unwrap_or(0) > 0);
        assert!(!cpu_by_thread(pid, 100.0).is_empty());
        let (own, children) = self_and_children_cpu(clock_ticks()).unwrap();
        assert!(own >= 0.0 && children >= 0.0);
    }
}
