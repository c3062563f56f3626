//! One receiver per port: refuse to join a port that another process already serves.
//!
//! `SO_REUSEPORT` lets any process of the same user bind a port that a sluice group holds, and
//! the newcomer then attaches its own balancing program to the whole group and takes the
//! traffic: a second `sluice run` started by mistake (another config, another destination)
//! would silently steal every datagram. [`PortClaim::acquire`] runs before a listener binds:
//!
//! 1. **Lock file** (when a lock directory is configured):
//!    `<dir>/<udp|tcp>-<addr>-net<netns inode>.lock` (ports belong to a network namespace),
//!    `flock(LOCK_EX | LOCK_NB)`, holding this process's pid. It closes the race between two
//!    instances that start at the same moment, which the probe alone cannot (both probes
//!    succeed, then both groups bind). `flock` is released by the kernel when the process
//!    dies, so a crashed holder never blocks a restart; the file is removed on a clean exit.
//!    After locking, the file's inode is compared with the path's, so a lock taken on a file
//!    that its previous holder unlinked meanwhile is retried on the new file.
//! 2. **Probe**: a socket *without* `SO_REUSEPORT` (and, for UDP, without `SO_REUSEADDR`)
//!    binds the address and is closed at once. The kernel refuses it with `EADDRINUSE` when any
//!    socket overlaps, whoever owns it: another sluice, syslog-ng on 514 with or without
//!    `so-reuseport(yes)`, a socket on a specific address under our wildcard, an IPv4 socket
//!    under our dual-stack `[::]`, another user's socket. That makes the probe the authority;
//!    the lock only serialises sluice instances. The TCP probe sets `SO_REUSEADDR`, so the
//!    `TIME_WAIT` connections a previous run left behind do not count as a holder (a listening
//!    socket still does).
//!
//! When refused, the error names the port and the holders found in `/proc` (see
//! [`port_holders`](crate::port_holders)). With [`PortClaimConfig::share`] set, nothing is
//! checked and the listener joins whatever group is there; the holders are still looked up so
//! the caller can log whom it shares with.
//!
//! Port 0 is never claimed: the kernel picks a port no socket uses.

use std::{
    fs::{File, OpenOptions, TryLockError},
    io::{Read, Write},
    net::SocketAddr,
    os::unix::fs::{MetadataExt, OpenOptionsExt},
    path::{Path, PathBuf},
};

use socket2::{Domain, Protocol, Socket, Type};

use crate::{NetError, PortHolder, port_holders, sys};

/// The transport of a listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    /// UDP.
    Udp,
    /// TCP.
    Tcp,
}

impl Transport {
    /// `udp` or `tcp`, as in lock file names.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp => "tcp",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Transport::Udp => "UDP",
            Transport::Tcp => "TCP",
        })
    }
}

/// How a listener claims its port.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortClaimConfig {
    /// Join the port even when another process holds it (its `SO_REUSEPORT` group, same user
    /// only: the kernel refuses others). Default false: refuse.
    pub share: bool,
    /// Directory for the per-port lock files; `None` relies on the probe alone (see the module
    /// docs for the race that leaves open). [`default_lock_dir`] is the daemon's choice.
    pub lock_dir: Option<PathBuf>,
}

/// The lock directory a daemon uses when none is configured: `runtime_directory` (systemd's
/// `RuntimeDirectory=`, `$RUNTIME_DIRECTORY`), else `/run/sluice` for root, else
/// `xdg_runtime_dir`/sluice, else none (an unprivileged process with no runtime directory has
/// no place that is both private and cleaned at boot; the probe still guards the port). The
/// caller reads the two variables (the daemon, through its one environment seam).
pub fn default_lock_dir(
    runtime_directory: Option<&Path>,
    xdg_runtime_dir: Option<&Path>,
) -> Option<PathBuf> {
    if let Some(dir) = runtime_directory.filter(|d| !d.as_os_str().is_empty()) {
        return Some(dir.to_path_buf());
    }
    if sys::effective_uid() == Some(0) {
        return Some(PathBuf::from("/run/sluice"));
    }
    xdg_runtime_dir
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join("sluice"))
}

/// A port this process may serve alone (or, when sharing, with the holders it found). Keep it
/// as long as the listener lives: dropping it releases and removes the lock file.
#[derive(Debug)]
pub struct PortClaim {
    transport: Transport,
    addr: SocketAddr,
    lock: Option<LockFile>,
    shared_with: Vec<PortHolder>,
}

impl PortClaim {
    /// Check that no other process holds `addr` for `transport` (unless `cfg.share`), and take
    /// the port's lock file. Call it right before binding.
    ///
    /// Errors: [`NetError::PortInUse`] naming the holders; [`NetError::Lock`] when the lock
    /// file cannot be created; [`NetError::Bind`] when the probe fails for another reason
    /// (e.g. `EACCES` below port 1024, with the hint that fixes it).
    pub fn acquire(
        transport: Transport,
        addr: SocketAddr,
        cfg: &PortClaimConfig,
    ) -> Result<PortClaim, NetError> {
        let mut claim = PortClaim {
            transport,
            addr,
            lock: None,
            shared_with: Vec::new(),
        };
        if addr.port() == 0 {
            return Ok(claim);
        }
        if cfg.share {
            claim.shared_with = port_holders(transport, addr);
            return Ok(claim);
        }
        if let Some(dir) = &cfg.lock_dir {
            claim.lock = Some(LockFile::acquire(dir, transport, addr)?);
        }
        probe(transport, addr)?;
        Ok(claim)
    }

    /// The transport claimed.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The address claimed.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The lock file held, if any.
    pub fn lock_path(&self) -> Option<&Path> {
        self.lock.as_ref().map(|l| l.path.as_path())
    }

    /// With sharing: the sockets of other processes already on the port when it was claimed.
    /// Empty without sharing (there were none, or the claim failed).
    pub fn shared_with(&self) -> &[PortHolder] {
        &self.shared_with
    }
}

/// Binds and closes a socket without `SO_REUSEPORT`: only an unused port accepts it.
fn probe(transport: Transport, addr: SocketAddr) -> Result<(), NetError> {
    let what = "port probe";
    let (ty, proto) = match transport {
        Transport::Udp => (Type::DGRAM, Protocol::UDP),
        Transport::Tcp => (Type::STREAM, Protocol::TCP),
    };
    let s = Socket::new(Domain::for_address(addr), ty, Some(proto))
        .map_err(|e| NetError::socket(transport, "create the socket", what, addr, e))?;
    if addr.is_ipv6() {
        // The listener will be dual stack; so must the probe be, to see IPv4 holders.
        s.set_only_v6(false)
            .map_err(|e| NetError::socket(transport, "clear IPV6_V6ONLY", what, addr, e))?;
    }
    if transport == Transport::Tcp {
        s.set_reuse_address(true)
            .map_err(|e| NetError::socket(transport, "set SO_REUSEADDR", what, addr, e))?;
    }
    match s.bind(&addr.into()) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EADDRINUSE) => Err(NetError::PortInUse {
            transport,
            addr,
            holders: port_holders(transport, addr),
            lock: None,
        }),
        Err(e) => Err(NetError::bind(transport, what.to_owned(), addr, e)),
    }
}

/// An `flock`ed file holding this process's pid; unlinked on drop.
#[derive(Debug)]
struct LockFile {
    path: PathBuf,
    file: File,
}

impl LockFile {
    fn acquire(dir: &Path, transport: Transport, addr: SocketAddr) -> Result<LockFile, NetError> {
        let lock_err = |op: &'static str, path: &Path, cause| NetError::Lock {
            op,
            path: path.to_owned(),
            cause,
        };
        std::fs::create_dir_all(dir).map_err(|e| lock_err("create the directory", dir, e))?;
        // Ports belong to a network namespace, files to a mount namespace: two containers
        // with their own networks may share a lock directory, so the namespace is in the name.
        let netns = std::fs::read_link("/proc/self/ns/net")
            .ok()
            .and_then(|l| {
                let l = l.to_str()?.strip_prefix("net:[")?.strip_suffix(']')?;
                Some(format!("-net{l}"))
            })
            .unwrap_or_default();
        let path = dir.join(format!("{}-{addr}{netns}.lock", transport.as_str()));
        // Each retry means the file was replaced between open and lock by a holder exiting
        // and another instance starting; a handful is plenty.
        for _ in 0..8 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .open(&path)
                .map_err(|e| lock_err("open", &path, e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let pid = file
                        .read_to_string(&mut text)
                        .ok()
                        .and_then(|_| text.trim().parse::<u32>().ok());
                    return Err(NetError::PortInUse {
                        transport,
                        addr,
                        holders: port_holders(transport, addr),
                        lock: Some((path, pid)),
                    });
                }
                Err(TryLockError::Error(e)) => return Err(lock_err("lock", &path, e)),
            }
            if !same_file(&file, &path) {
                continue;
            }
            file.set_len(0)
                .and_then(|()| file.write_all(format!("{}\n", std::process::id()).as_bytes()))
                .map_err(|e| lock_err("write the pid to", &path, e))?;
            return Ok(LockFile { path, file });
        }
        Err(lock_err(
            "lock",
            &path,
            std::io::Error::other("the file was replaced at every attempt"),
        ))
    }
}

/// Whether `path` still names the file `file` has open.
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Unlink while still holding the lock; whoever opened the file meanwhile finds it
        // replaced after locking and retries (see `acquire`). Closing `file` then unlocks.
        if same_file(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("sluice-net-claim-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn free_udp_port() -> u16 {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn lock_file_excludes_a_second_claim_and_is_removed_on_drop() {
        let dir = temp_dir("lock");
        let addr: SocketAddr = ([127, 0, 0, 1], free_udp_port()).into();
        let cfg = PortClaimConfig {
            share: false,
            lock_dir: Some(dir.clone()),
        };
        let first = PortClaim::acquire(Transport::Udp, addr, &cfg).unwrap();
        let path = first.lock_path().unwrap().to_owned();
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(&format!("udp-{addr}-net")), "{name}");
        assert!(name.ends_with(".lock"), "{name}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{}\n", std::process::id())
        );
        // No socket is bound yet, so only the lock can refuse the second claim.
        let err = PortClaim::acquire(Transport::Udp, addr, &cfg).unwrap_err();
        let text = err.to_string();
        assert!(err.is_port_in_use(), "{text}");
        assert!(text.contains(&format!("UDP {addr}")), "{text}");
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        assert!(text.contains(path.to_str().unwrap()), "{text}");
        // Another transport on the same port is another lock.
        let tcp = PortClaim::acquire(Transport::Tcp, addr, &cfg).unwrap();
        drop(first);
        assert!(!path.exists());
        let again = PortClaim::acquire(Transport::Udp, addr, &cfg).unwrap();
        drop((again, tcp));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn probe_refuses_a_held_port_and_names_this_process() {
        let held = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = held.local_addr().unwrap().port();
        for addr in [
            SocketAddr::from(([127, 0, 0, 1], port)),
            // The wildcard overlaps the specific address.
            SocketAddr::from(([0, 0, 0, 0], port)),
        ] {
            let err =
                PortClaim::acquire(Transport::Udp, addr, &PortClaimConfig::default()).unwrap_err();
            let text = err.to_string();
            assert!(err.is_port_in_use(), "{text}");
            assert!(
                text.contains(&format!("pid {}", std::process::id())),
                "{text}"
            );
        }
        // Sharing skips the check and reports whom it shares with.
        let shared = PortClaim::acquire(
            Transport::Udp,
            SocketAddr::from(([127, 0, 0, 1], port)),
            &PortClaimConfig {
                share: true,
                lock_dir: None,
            },
        )
        .unwrap();
        assert_eq!(shared.shared_with().len(), 1);
        assert_eq!(shared.shared_with()[0].pid, Some(std::process::id()));

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let err =
            PortClaim::acquire(Transport::Tcp, addr, &PortClaimConfig::default()).unwrap_err();
        assert!(err.is_port_in_use(), "{err}");
        assert!(err.to_string().starts_with(&format!("TCP {addr}")), "{err}");
    }

    #[test]
    fn a_free_port_is_claimed_and_stays_bindable() {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_udp_port()));
        let claim = PortClaim::acquire(Transport::Udp, addr, &PortClaimConfig::default()).unwrap();
        assert_eq!(claim.addr(), addr);
        assert_eq!(claim.transport(), Transport::Udp);
        assert!(claim.lock_path().is_none());
        assert!(claim.shared_with().is_empty());
        // The probe is closed: the port is free for the listener.
        std::net::UdpSocket::bind(addr).unwrap();
    }

    #[test]
    fn tcp_time_wait_is_not_a_holder() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(addr).unwrap();
        let (server_side, _) = listener.accept().unwrap();
        // The server closes first, so its side of the connection enters TIME_WAIT.
        drop(server_side);
        drop(listener);
        drop(client);
        std::thread::sleep(std::time::Duration::from_millis(50));
        PortClaim::acquire(Transport::Tcp, addr, &PortClaimConfig::default()).unwrap();
    }
}
