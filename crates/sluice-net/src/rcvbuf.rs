//! Receive buffer sizing.
//!
//! Behaviour, per socket, when a size `N` is requested:
//! 1. `setsockopt(SO_RCVBUFFORCE, N)`: allowed to root or with `CAP_NET_ADMIN`, and not limited
//!    by `net.core.rmem_max`. On any error (normally `EPERM`) go to 2.
//! 2. `setsockopt(SO_RCVBUF, N)`: never fails for a large value but is silently clamped to
//!    `net.core.rmem_max`.
//! 3. `getsockopt(SO_RCVBUF)` is read back in every case. The kernel doubles the value it is
//!    given (the other half pays for its bookkeeping, `struct sk_buff` overhead), so an
//!    unclamped request reads back as `2 × N`. The report is `clamped` when the read-back value
//!    is below `2 × N`, and then [`RcvbufReport::sysctl_hint`] gives the fix.
//!
//! The kernel caps the request at `INT_MAX / 2` (1 GiB − 1 byte) before doubling; a larger
//! request is passed as that cap and reported as clamped.

use socket2::Socket;

use crate::sys;

/// The kernel's largest accepted request (`INT_MAX / 2`); it stores twice the request in an int.
pub(crate) const KERNEL_MAX_RCVBUF: usize = (i32::MAX / 2) as usize;

/// What became of a socket's receive buffer request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RcvbufReport {
    /// Index of the socket in its group.
    pub index: usize,
    /// The size asked for in bytes, `None` when the kernel default was kept.
    pub requested: Option<usize>,
    /// What `getsockopt(SO_RCVBUF)` reads back: the kernel's accounting limit, twice the
    /// granted request.
    pub effective: usize,
    /// `SO_RCVBUFFORCE` was used (root or `CAP_NET_ADMIN`), so `net.core.rmem_max` did not apply.
    pub forced: bool,
    /// The kernel granted less than requested (read-back below twice the request).
    pub clamped: bool,
}

impl RcvbufReport {
    /// For a clamped UDP buffer: the line to log, with a ready-to-paste `sysctl` command and
    /// the capability alternative. `None` when nothing was clamped.
    pub fn sysctl_hint(&self) -> Option<String> {
        self.hint(
            &format!("UDP socket {}", self.index),
            "the kernel drops datagrams once it is full",
        )
    }

    /// [`sysctl_hint`](Self::sysctl_hint) for a listening stream socket (`TCP`, `TLS`, ...),
    /// whose accepted connections inherit the buffer.
    pub fn stream_hint(&self, transport: &str) -> Option<String> {
        self.hint(
            &format!("{transport} listening socket {}", self.index),
            "connections advertise a smaller TCP window, which slows a fast sender on a long path",
        )
    }

    fn hint(&self, socket: &str, consequence: &str) -> Option<String> {
        if !self.clamped {
            return None;
        }
        let requested = self.requested?;
        let target = requested.min(KERNEL_MAX_RCVBUF);
        let over_kernel_max = if requested > KERNEL_MAX_RCVBUF {
            format!(" (the kernel caps a request at {KERNEL_MAX_RCVBUF} bytes)")
        } else {
            String::new()
        };
        Some(format!(
            "{socket}: receive buffer of {requested} bytes requested, the kernel granted \
             {} (read back {}){over_kernel_max}; {consequence}. Fix: \
             `sysctl -w net.core.rmem_max={target}` (persist it in /etc/sysctl.d/), or give \
             sluice CAP_NET_ADMIN (AmbientCapabilities=CAP_NET_ADMIN) so it can use \
             SO_RCVBUFFORCE",
            self.effective / 2,
            self.effective,
        ))
    }
}

/// Applies `requested` bytes to `sock` (force, else plain, then read back) and reports what
/// the kernel granted; `index` names the socket in its group. On a listening TCP socket, set
/// it before `listen()`: accepted connections inherit it and size their window scale from it.
pub fn apply(
    sock: &Socket,
    index: usize,
    requested: Option<usize>,
) -> std::io::Result<RcvbufReport> {
    let mut forced = false;
    if let Some(req) = requested {
        let arg = req.min(KERNEL_MAX_RCVBUF) as libc::c_int;
        if sys::set_int_opt(sock, sys::SO_RCVBUFFORCE, arg).is_ok() {
            forced = true;
        } else {
            sock.set_recv_buffer_size(arg as usize)?;
        }
    }
    let effective = sock.recv_buffer_size()?;
    let clamped = match requested {
        Some(req) => effective < 2 * req.min(KERNEL_MAX_RCVBUF) || req > KERNEL_MAX_RCVBUF,
        None => false,
    };
    Ok(RcvbufReport {
        index,
        requested,
        effective,
        forced,
        clamped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_only_when_clamped_and_names_the_target() {
        let ok = RcvbufReport {
            index: 0,
            requested: Some(16 << 20),
            effective: 32 << 20,
            forced: false,
            clamped: false,
        };
        assert_eq!(ok.sysctl_hint(), None);
        let clamped = RcvbufReport {
            effective: 8 << 20,
            clamped: true,
            ..ok
        };
        let hint = clamped.sysctl_hint().unwrap();
        assert!(
            hint.contains("sysctl -w net.core.rmem_max=16777216"),
            "{hint}"
        );
        assert!(hint.contains("granted 4194304"), "{hint}");
        let huge = RcvbufReport {
            requested: Some(4 << 30),
            ..clamped
        };
        let hint = huge.sysctl_hint().unwrap();
        assert!(
            hint.contains(&format!("net.core.rmem_max={KERNEL_MAX_RCVBUF}")),
            "{hint}"
        );
        assert!(hint.contains("caps a request"), "{hint}");
        let tcp = clamped.stream_hint("TLS").unwrap();
        assert!(tcp.starts_with("TLS listening socket 0:"), "{tcp}");
        assert!(tcp.contains("TCP window"), "{tcp}");
    }

    #[test]
    fn applies_to_a_stream_socket_and_reads_back() {
        let s = Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        let r = apply(&s, 0, Some(256 * 1024)).unwrap();
        assert_eq!(r.requested, Some(256 * 1024));
        assert!(r.effective > 0);
        // Granted in full (forced or under rmem_max) or reported as clamped: never both.
        assert_eq!(r.clamped, r.effective < 2 * 256 * 1024);
    }
}
