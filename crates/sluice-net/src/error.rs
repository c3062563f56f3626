//! Errors of socket setup. Each names the setting or the address that was wrong and the cause,
//! with a hint for the causes an operator can fix (ports below 1024, address in use).

use std::{io, net::SocketAddr};

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
    #[error("cannot bind UDP {what} to {addr}: {cause}{hint}")]
    Bind {
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
    #[error("cannot {op} for UDP {what} on {addr}: {cause}")]
    Socket {
        /// The operation, e.g. `set SO_REUSEPORT`.
        op: &'static str,
        /// Which socket.
        what: String,
        /// The address the socket is for.
        addr: SocketAddr,
        /// The OS error.
        cause: io::Error,
    },
}

impl NetError {
    /// The OS error behind this error, if any (e.g. to test for `AddrInUse`).
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            NetError::InvalidConfig { .. } => None,
            NetError::Bind { cause, .. } | NetError::Socket { cause, .. } => Some(cause),
        }
    }

    pub(crate) fn bind(what: String, addr: SocketAddr, cause: io::Error) -> NetError {
        let hint = bind_hint(addr, &cause);
        NetError::Bind {
            what,
            addr,
            cause,
            hint,
        }
    }

    pub(crate) fn socket(
        op: &'static str,
        what: impl Into<String>,
        addr: SocketAddr,
        cause: io::Error,
    ) -> NetError {
        NetError::Socket {
            op,
            what: what.into(),
            addr,
            cause,
        }
    }
}

fn bind_hint(addr: SocketAddr, cause: &io::Error) -> String {
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
        Some(libc::EADDRINUSE) => " (another socket holds this address without SO_REUSEPORT, \
             or as another user; find it with `ss -ulpn`)"
            .to_owned(),
        Some(libc::EADDRNOTAVAIL) => {
            " (the address is not configured on any interface of this host)".to_owned()
        }
        Some(libc::EAFNOSUPPORT) => {
            " (this address family is not supported here; is IPv6 disabled?)".to_owned()
        }
        _ => String::new(),
    }
}
