//! Who holds a port: the sockets bound to it (`/proc/net/{udp,udp6,tcp,tcp6}`) and the
//! processes that own them (a `/proc/<pid>/fd` scan for `socket:[inode]`).
//!
//! This is what `ss -ulpn` does. It is used to name the other process when a port is taken,
//! so it favours saying something useful over being exact: a process whose file descriptors
//! this one may not read (another user, another PID namespace) is reported by socket inode
//! and uid only.

use std::{
    collections::BTreeMap,
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
};

use crate::Transport;

/// A socket bound to a port, and its owner when this process can see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortHolder {
    /// The address the socket is bound to.
    pub local: SocketAddr,
    /// The uid that created the socket.
    pub uid: u32,
    /// The socket's inode (the `inode` column of `/proc/net/udp`).
    pub inode: u64,
    /// The process holding it, when found.
    pub pid: Option<u32>,
    /// That process's command name (`/proc/<pid>/comm`).
    pub command: Option<String>,
}

impl fmt::Display for PortHolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.pid, &self.command) {
            (Some(pid), Some(cmd)) => write!(f, "pid {pid} ({cmd})"),
            (Some(pid), None) => write!(f, "pid {pid}"),
            // The socket exists in this network namespace, but its process is invisible
            // here: another user's (without root) or another PID namespace's.
            (None, _) => write!(
                f,
                "a process this one cannot see (socket inode {}, uid {}, bound to {})",
                self.inode, self.uid, self.local
            ),
        }
    }
}

/// The sockets that conflict with binding `addr` for `transport`: same port, overlapping
/// address (either one unspecified, or equal), either IP family (a dual-stack `[::]` socket
/// and an IPv4 socket conflict), and for TCP only listening sockets. Processes are looked up
/// for each; one process holding several sockets (a reuseport group) is listed once.
pub fn port_holders(transport: Transport, addr: SocketAddr) -> Vec<PortHolder> {
    let files = match transport {
        Transport::Udp => ["/proc/net/udp", "/proc/net/udp6"],
        Transport::Tcp => ["/proc/net/tcp", "/proc/net/tcp6"],
    };
    let mut sockets = Vec::new();
    for file in files {
        if let Ok(text) = std::fs::read_to_string(file) {
            sockets.extend(
                parse_proc_net(&text)
                    .into_iter()
                    .filter(|s| transport == Transport::Udp || s.state == TCP_LISTEN)
                    .filter(|s| s.local.port() == addr.port() && overlaps(s.local.ip(), addr.ip())),
            );
        }
    }
    if sockets.is_empty() {
        return Vec::new();
    }
    let owners = socket_owners(&sockets.iter().map(|s| s.inode).collect::<Vec<_>>());
    let mut out: Vec<PortHolder> = Vec::new();
    for s in sockets {
        let owner = owners.get(&s.inode);
        let pid = owner.map(|o| o.0);
        if pid.is_some() && out.iter().any(|h| h.pid == pid) {
            continue;
        }
        out.push(PortHolder {
            local: s.local,
            uid: s.uid,
            inode: s.inode,
            pid,
            command: owner.and_then(|o| o.1.clone()),
        });
    }
    out
}

/// `pid 12 (sluice), pid 40 (syslog-ng)`, or `an unknown process` for an empty list (the
/// socket went away, or `/proc` is not mounted).
pub(crate) fn describe(holders: &[PortHolder]) -> String {
    if holders.is_empty() {
        return "another socket (its process could not be found; try `ss -ulpn` or `ss -tlpn`)"
            .to_owned();
    }
    holders
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

const TCP_LISTEN: u8 = 0x0A;

#[derive(Debug, Clone, PartialEq, Eq)]
struct ProcSocket {
    local: SocketAddr,
    state: u8,
    uid: u32,
    inode: u64,
}

/// Parses the table of `/proc/net/{udp,udp6,tcp,tcp6}`: a header line, then per socket
/// `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …`. Lines that do
/// not parse are skipped (the format has been stable since Linux 2.6, but a partial read of a
/// changing table may cut one).
fn parse_proc_net(text: &str) -> Vec<ProcSocket> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 {
                return None;
            }
            Some(ProcSocket {
                local: parse_hex_addr(f[1])?,
                state: u8::from_str_radix(f[3], 16).ok()?,
                uid: f[7].parse().ok()?,
                inode: f[9].parse().ok()?,
            })
        })
        .collect()
}

/// `0100007F:0202` (IPv4) or 32 hex digits `:PORT` (IPv6). The kernel prints each 32-bit word
/// of the address as a native-endian integer, so the bytes of each word come out reversed on
/// little-endian machines; reading the word back as a native integer undoes it.
fn parse_hex_addr(s: &str) -> Option<SocketAddr> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        let w = u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16).ok()?;
        Some(w.to_ne_bytes())
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(b))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// Whether sockets bound to `a` and `b` (same port) compete for the same datagrams.
fn overlaps(a: IpAddr, b: IpAddr) -> bool {
    let canon = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let (a, b) = (canon(a), canon(b));
    a.is_unspecified() || b.is_unspecified() || a == b
}

/// For each inode, the first process found with a file descriptor on it, and its `comm`.
fn socket_owners(inodes: &[u64]) -> BTreeMap<u64, (u32, Option<String>)> {
    let mut found = BTreeMap::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return found;
    };
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        // Unreadable for other users' processes without privilege; skipped, not an error.
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let Some(target) = target.to_str() else {
                continue;
            };
            if let Some(i) = wanted.iter().position(|w| w == target) {
                found.entry(inodes[i]).or_insert_with(|| {
                    let comm = std::fs::read_to_string(entry.path().join("comm"))
                        .ok()
                        .map(|c| c.trim().to_owned());
                    (pid, comm)
                });
            }
        }
        if found.len() == inodes.len() {
            break;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_net_lines() {
        let udp = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
  123: 0100007F:0202 00000000:0000 07 00000000:00000000 00:00000000 00000000   104        0 54321 2 0000000000000000 0\n\
  124: 00000000:0259 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 54322 2 0000000000000000 7\n\
  bogus line\n";
        let socks = parse_proc_net(udp);
        assert_eq!(socks.len(), 2);
        if cfg!(target_endian = "little") {
            assert_eq!(socks[0].local, "127.0.0.1:514".parse().unwrap());
        }
        assert_eq!(socks[0].uid, 104);
        assert_eq!(socks[0].inode, 54321);
        assert_eq!(socks[0].state, 7);
        assert_eq!(socks[1].local, "0.0.0.0:601".parse().unwrap());

        let udp6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
  10: 00000000000000000000000000000000:0202 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 999 2 0000000000000000 0\n\
  11: 00000000000000000000000001000000:0202 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1000 2 0000000000000000 0\n";
        let socks = parse_proc_net(udp6);
        assert_eq!(socks[0].local, "[::]:514".parse().unwrap());
        if cfg!(target_endian = "little") {
            assert_eq!(socks[1].local, "[::1]:514".parse().unwrap());
        }
    }

    #[test]
    fn address_overlap() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(overlaps(ip("0.0.0.0"), ip("127.0.0.1")));
        assert!(overlaps(ip("127.0.0.1"), ip("0.0.0.0")));
        assert!(overlaps(ip("::"), ip("10.0.0.1")));
        assert!(overlaps(ip("::ffff:10.0.0.1"), ip("10.0.0.1")));
        assert!(!overlaps(ip("10.0.0.1"), ip("10.0.0.2")));
        assert!(!overlaps(ip("::1"), ip("127.0.0.1")));
    }

    #[test]
    fn finds_this_process_as_the_holder() {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = s.local_addr().unwrap();
        // Asking about the wildcard address finds the socket on 127.0.0.1.
        let holders = port_holders(
            Transport::Udp,
            SocketAddr::from(([0, 0, 0, 0], addr.port())),
        );
        assert_eq!(holders.len(), 1, "{holders:?}");
        assert_eq!(holders[0].pid, Some(std::process::id()));
        assert_eq!(holders[0].local, addr);
        assert!(
            holders[0]
                .to_string()
                .starts_with(&format!("pid {} (", std::process::id()))
        );

        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let holders = port_holders(Transport::Tcp, SocketAddr::from(([127, 0, 0, 1], port)));
        assert_eq!(holders.len(), 1, "{holders:?}");
        assert_eq!(holders[0].pid, Some(std::process::id()));
        // A TCP listener is not a UDP holder (another process may hold that UDP port number,
        // but not this one).
        assert!(
            port_holders(Transport::Udp, SocketAddr::from(([127, 0, 0, 1], port)))
                .iter()
                .all(|h| h.pid != Some(std::process::id()))
        );
        assert!(describe(&[]).contains("ss -"));
    }
}
