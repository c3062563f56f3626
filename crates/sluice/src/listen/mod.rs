//! The listener stage: the sockets sluice receives on, and the receive loops that turn what
//! arrives into batches (UDP threads in [`udp`]; TCP, RFC 6587, TLS and RFC 5425 connections
//! in [`stream`]).

pub mod skew;
pub mod stream;
pub mod udp;

use std::net::SocketAddr;

use sluice_net::NetError;

/// A listener that cannot be opened: the address, the cause, and what to change. A port held
/// by another process (the cause names it) can also be shared on purpose.
pub(crate) fn listen_error(
    kind: &str,
    addr: SocketAddr,
    setting: &str,
    e: &NetError,
) -> anyhow::Error {
    let fix = match e {
        NetError::PortInUse { .. } => format!(
            "stop the other receiver, change the port with {setting}, or set \
             SLUICE_LISTEN_SHARE_PORTS=yes (listen.share_ports) to share it"
        ),
        NetError::Lock { .. } => "set SLUICE_LISTEN_LOCK_DIR (listen.lock_dir) to a writable \
             directory"
            .to_owned(),
        _ => format!("change the port with {setting}"),
    };
    anyhow::anyhow!("cannot listen on {kind} {addr}: {e}; {fix}")
}

pub(crate) fn log_sharing(kind: &str, addr: SocketAddr, with: &[sluice_net::PortHolder]) {
    if !with.is_empty() {
        let with: Vec<String> = with.iter().map(ToString::to_string).collect();
        tracing::warn!(
            "{kind} {addr} is shared with {} (SLUICE_LISTEN_SHARE_PORTS=yes)",
            with.join(", ")
        );
    }
}

pub(crate) fn privilege_hint(e: &std::io::Error, port: u16) -> &'static str {
    if e.kind() == std::io::ErrorKind::PermissionDenied && port < 1024 {
        " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
    } else {
        ""
    }
}
