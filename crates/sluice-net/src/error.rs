//! Errors of socket setup. Each names the setting or the address that was wrong and the cause,
//! with a hint for the causes an operator can fix (ports below 1024, address in use).

use std::{io, net::SocketAddr, path::PathBuf};

use crate::{PortHolder, Transport};

/// Why a UDP group or sender could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A configuration value is out of range.
    #[error("invalid {setting} = {value}: {reason}")]
    InvalidConfig {
        /// The setting's name, as in [`crate::UdpGroupConfig`] / [`crate::UdpSenderConfig`].
        setting: &'static str,
        /// The rejected value.
        value: String,
        /// What is accepted.
        reason: String,
    },
    /// `bind(2)` failed.
    #[error("cannot bind {transport} {what} to {addr}: {cause}{hint}")]
    Bind {
        /// UDP or TCP.
        transport: Transport,
        /// Which socket: `socket 2 of 4`, `port probe`, `sender`.
        what: String,
        /// The address it was bound to.
        addr: SocketAddr,
        /// The OS error.
        cause: io::Error,
        /// An explanation for the common causes (empty otherwise).
        hint: String,
    },
    /// Creating or configuring a socket failed.
    #[error("cannot {op} for {transport} {what} on {addr}: {cause}")]
    Socket {
        /// UDP or TCP.
        transport: Transport,
        /// The operation, e.g. `set SO_REUSEPORT`.
        op: &'static str,
        /// Which socket.
        what: String,
        /// The address the socket is for.
        addr: SocketAddr,
        /// The OS error.
        cause: io::Error,
    },
    /// Another process holds the port (see [`crate::PortClaim`]).
    #[error("{}", port_in_use(*.transport, *.addr, .holders, .lock.as_ref()))]
    PortInUse {
        /// UDP or TCP.
        transport: Transport,
        /// The address asked for.
        addr: SocketAddr,
        /// The sockets found on the port and their processes (may be empty when the holder
        /// is only known by its lock file, or has just gone).
        holders: Vec<PortHolder>,
        /// The lock file that refused, and the pid written in it, when the lock refused.
        lock: Option<(PathBuf, Option<u32>)>,
    },
    /// The per-port lock file could not be created or locked.
    #[error("cannot {op} the port lock file {}: {cause}", .path.display())]
    Lock {
        /// What failed: `create the directory`, `open`, `lock`, `write the pid to`.
        op: &'static str,
        /// The file (or directory).
        path: PathBuf,
        /// The OS error.
        cause: io::Error,
    },
}

impl NetError {
    /// The OS error behind this error, if any (e.g. to test for `AddrInUse`).
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            NetError::InvalidConfig { .. } | NetError::PortInUse { .. } => None,
            NetError::Bind { cause, .. }
            | NetError::Socket { cause, .. }
            | NetError::Lock { cause, .. } => Some(cause),
        }
    }

    /// True when another process holds the port ([`NetError::PortInUse`]).
    pub fn is_port_in_use(&self) -> bool {
        matches!(self, NetError::PortInUse { .. })
    }

    pub(crate) fn bind(
        transport: Transport,
        what: String,
        addr: SocketAddr,
        cause: io::Error,
    ) -> NetError {
        let hint = bind_hint(transport, addr, &cause);
        NetError::Bind {
            transport,
            what,
            addr,
            cause,
            hint,
        }
    }

    pub(crate) fn socket(
        transport: Transport,
        op: &'static str,
        what: impl Into<String>,
        addr: SocketAddr,
        cause: io::Error,
    ) -> NetError {
        NetError::Socket {
            transport,
            op,
            what: what.into(),
            addr,
            cause,
        }
    }
}

/// `UDP 0.0.0.0:514 is in use by pid 7 (syslog-ng)`, plus the lock file when it refused.
fn port_in_use(
    transport: Transport,
    addr: SocketAddr,
    holders: &[PortHolder],
    lock: Option<&(PathBuf, Option<u32>)>,
) -> String {
    let by = match lock {
        // The lock holder may still be binding, so its sockets may not be listed yet.
        Some((path, pid)) if holders.is_empty() => format!(
            "{} (it holds the lock file {})",
            pid.map_or_else(|| "another sluice".to_owned(), |p| format!("pid {p}")),
            path.display()
        ),
        Some((path, _)) => format!(
            "{} (lock file {})",
            crate::holders::describe(holders),
            path.display()
        ),
        None => crate::holders::describe(holders),
    };
    format!(
        "{transport} {addr} is already in use by {by}; sluice does not share a port with another \
         process unless told to (a second receiver in the port's SO_REUSEPORT group would take \
         traffic from the first)"
    )
}

fn bind_hint(transport: Transport, addr: SocketAddr, cause: &io::Error) -> String {
    match cause.raw_os_error() {
        Some(libc::EACCES) => {
            let start = crate::sys::read_sysctl("net/ipv4/ip_unprivileged_port_start");
            let start = start.map_or_else(|| "1024".to_owned(), |s| s.to_string());
            format!(
                " (port {} is below net.ipv4.ip_unprivileged_port_start = {start}: binding it \
                 needs root or CAP_NET_BIND_SERVICE, e.g. AmbientCapabilities=CAP_NET_BIND_SERVICE \
                 in the systemd unit, or a higher port)",
                addr.port()
            )
        }
        Some(libc::EADDRINUSE) => format!(
            " (another socket holds this address without SO_REUSEPORT, or as another user; \
             find it with `ss -{}lpn`)",
            match transport {
                Transport::Udp => 'u',
                Transport::Tcp => 't',
            }
        ),
        Some(libc::EADDRNOTAVAIL) => {
            " (the address is not configured on any interface of this host)".to_owned()
        }
        Some(libc::EAFNOSUPPORT) => {
            " (this address family is not supported here; is IPv6 disabled?)".to_owned()
        }
        _ => String::new(),
    }
}
