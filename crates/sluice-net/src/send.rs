//! Batched UDP sending with `sendmmsg`, for the load generator and tests.
//!
//! Behaviour of [`UdpSender::send_batch`]:
//! * sends the datagrams in order with one `sendmmsg` call on a connected socket and returns
//!   how many the kernel accepted: all of them, or fewer (at most 1024 per call, `UIO_MAXIOV`;
//!   or when an error occurs after the first), in which case the caller sends the rest again
//!   ([`UdpSender::send_all`] does that loop);
//! * blocks while the socket's send buffer is full (on loopback the receiver's full buffer does
//!   not block the sender: the kernel drops there, which is what a load tool must measure);
//! * `EINTR` is retried; an error before the first datagram is returned (e.g.
//!   `ECONNREFUSED` after an ICMP port unreachable from a previous send);
//! * no allocation per call once the header arrays have grown to the largest batch sent.

use std::{
    io,
    net::SocketAddr,
    os::fd::{AsFd, AsRawFd, BorrowedFd},
};

use socket2::{Domain, Protocol, Socket, Type};

use crate::{
    NetError, Transport,
    recv::{IoVec, MmsgHdr},
};

/// `sendmmsg` sends at most this many messages per call (`UIO_MAXIOV`).
const MAX_PER_CALL: usize = 1024;

/// How to set up a [`UdpSender`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpSenderConfig {
    /// Where the datagrams go (the socket is connected to it).
    pub dest: SocketAddr,
    /// Local address to bind first, e.g. `127.0.0.2:0` to appear as another source host on
    /// loopback; `None` lets the kernel choose.
    pub bind: Option<SocketAddr>,
    /// Send buffer request in bytes (`SO_SNDBUF`, clamped by `net.core.wmem_max`); `None`
    /// keeps the kernel default.
    pub sndbuf: Option<usize>,
}

impl UdpSenderConfig {
    /// Send to `dest` from a kernel-chosen address with the default send buffer.
    pub fn new(dest: SocketAddr) -> UdpSenderConfig {
        UdpSenderConfig {
            dest,
            bind: None,
            sndbuf: None,
        }
    }
}

/// A connected UDP socket that sends batches with `sendmmsg`.
pub struct UdpSender {
    socket: Socket,
    dest: SocketAddr,
    iovs: Vec<IoVec>,
    hdrs: Vec<MmsgHdr>,
}

impl std::fmt::Debug for UdpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpSender")
            .field("local_addr", &self.local_addr().ok())
            .field("dest", &self.dest)
            .finish_non_exhaustive()
    }
}

impl UdpSender {
    /// Create the socket, bind it if asked, size its send buffer and connect it to `dest`.
    pub fn connect(cfg: &UdpSenderConfig) -> Result<UdpSender, NetError> {
        let what = "sender";
        let family_addr = cfg.bind.unwrap_or(cfg.dest);
        if let Some(bind) = cfg.bind
            && bind.is_ipv4() != cfg.dest.is_ipv4()
        {
            return Err(NetError::InvalidConfig {
                setting: "bind",
                value: bind.to_string(),
                reason: format!("address family differs from the destination {}", cfg.dest),
            });
        }
        if let Some(0) = cfg.sndbuf {
            return Err(NetError::InvalidConfig {
                setting: "sndbuf",
                value: "0".to_owned(),
                reason: "must be positive; leave it unset for the kernel default".to_owned(),
            });
        }
        let socket = Socket::new(
            Domain::for_address(family_addr),
            Type::DGRAM,
            Some(Protocol::UDP),
        )
        .map_err(|e| NetError::socket(Transport::Udp, "create the socket", what, cfg.dest, e))?;
        if let Some(bind) = cfg.bind {
            socket
                .bind(&bind.into())
                .map_err(|e| NetError::bind(Transport::Udp, what.to_owned(), bind, e))?;
        }
        if let Some(size) = cfg.sndbuf {
            socket.set_send_buffer_size(size).map_err(|e| {
                NetError::socket(Transport::Udp, "set SO_SNDBUF", what, cfg.dest, e)
            })?;
        }
        socket
            .connect(&cfg.dest.into())
            .map_err(|e| NetError::socket(Transport::Udp, "connect", what, cfg.dest, e))?;
        Ok(UdpSender {
            socket,
            dest: cfg.dest,
            iovs: Vec::new(),
            hdrs: Vec::new(),
        })
    }

    /// The local address (with the port the kernel chose).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "socket has no IP address"))
    }

    /// The destination.
    pub fn peer_addr(&self) -> SocketAddr {
        self.dest
    }

    /// The send buffer as the kernel reports it (twice the granted request).
    pub fn send_buffer_size(&self) -> io::Result<usize> {
        self.socket.send_buffer_size()
    }

    /// Send `datagrams` with one `sendmmsg` call; returns how many were sent (see module docs).
    pub fn send_batch(&mut self, datagrams: &[&[u8]]) -> io::Result<usize> {
        let n = datagrams.len().min(MAX_PER_CALL);
        if n == 0 {
            return Ok(0);
        }
        if self.hdrs.len() < n {
            self.hdrs.resize_with(n, MmsgHdr::zeroed);
            self.iovs.resize_with(n, IoVec::empty);
        }
        for (i, d) in datagrams[..n].iter().enumerate() {
            // The kernel only reads through iov_base for a send; the pointer is cast to *mut
            // because iovec is shared with the receive direction.
            self.iovs[i].0 = libc::iovec {
                iov_base: d.as_ptr().cast_mut().cast(),
                iov_len: d.len(),
            };
            let h = &mut self.hdrs[i].0;
            h.msg_hdr.msg_name = std::ptr::null_mut();
            h.msg_hdr.msg_namelen = 0;
            h.msg_hdr.msg_iov = &raw mut self.iovs[i].0;
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = std::ptr::null_mut();
            h.msg_hdr.msg_controllen = 0;
            h.msg_hdr.msg_flags = 0;
            h.msg_len = 0;
        }
        loop {
            // SAFETY: hdrs[..n] were just set to point at iovs[..n], which point at the
            // caller's `datagrams[..n]`; all outlive this call (borrowed for its duration) and
            // the kernel only reads the payloads. n ≤ hdrs.len() and ≤ UIO_MAXIOV.
            let rc = unsafe {
                libc::sendmmsg(
                    self.socket.as_raw_fd(),
                    self.hdrs.as_mut_ptr().cast::<libc::mmsghdr>(),
                    n as libc::c_uint,
                    0,
                )
            };
            if rc >= 0 {
                return Ok(rc as usize);
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// Send every datagram, calling [`send_batch`](Self::send_batch) until all are accepted.
    pub fn send_all(&mut self, mut datagrams: &[&[u8]]) -> io::Result<()> {
        while !datagrams.is_empty() {
            let sent = self.send_batch(datagrams)?;
            if sent == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "sendmmsg accepted no datagram",
                ));
            }
            datagrams = &datagrams[sent..];
        }
        Ok(())
    }
}

impl AsFd for UdpSender {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}
