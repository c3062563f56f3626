//! Batched receive with `recvmmsg` into preallocated slots.
//!
//! Behaviour of [`UdpReceiver::recv`]`(max)`:
//! * blocks until at least one datagram is queued, then returns every datagram queued, up to
//!   `min(max, batch)` (`MSG_WAITFORONE`); `max == 0` returns an empty batch without a system
//!   call (the caller had no window permits);
//! * with a read timeout set ([`UdpReceiver::set_read_timeout`], `SO_RCVTIMEO`) and nothing
//!   queued, returns an **empty** batch when the timeout expires, never an error; it then also
//!   refreshes the kernel drop counter with `SO_MEMINFO`, so drops that happened while no
//!   datagram arrived still show up in [`SocketStats`];
//! * `EINTR` is retried (the timeout then restarts);
//! * each datagram is at most `max_datagram` bytes. A larger one is delivered cut to
//!   `max_datagram` bytes with `truncated: true`: the slot is one byte longer than
//!   `max_datagram`, so a datagram that fills it is known to be too long even when the kernel
//!   did not set `MSG_TRUNC` (it sets it only when the datagram did not fit the slot);
//! * the source address is captured per datagram; IPv4 senders on a dual-stack IPv6 socket are
//!   reported as IPv4;
//! * `SO_RXQ_OVFL` control messages are parsed per datagram and the newest cumulative drop
//!   count is published once per call, together with the received/bytes/truncated counters;
//!   while the caller does not call `recv` at all (its consumer is full), a [`DropProbe`] read
//!   on a timer from another thread keeps the drop counter current;
//! * nothing is allocated per call: payload slots (`batch × (max_datagram + 1)` bytes, zeroed
//!   lazily by the OS so only touched pages cost memory), address slots, 64-byte control
//!   buffers and the `mmsghdr`/`iovec` arrays are allocated once in the constructor.

use std::{
    io, mem,
    net::{Ipv4Addr, SocketAddr, SocketAddrV4},
    os::fd::{AsFd, AsRawFd, BorrowedFd},
    sync::Arc,
    time::Duration,
};

use socket2::Socket;

use crate::{
    stats::{DropCounter, SocketStats},
    sys,
};

/// Default largest datagram accepted whole: the largest a UDP length field can describe.
pub const DEFAULT_MAX_DATAGRAM: usize = 65_535;

/// Control buffer per datagram. The only control message enabled is `SO_RXQ_OVFL`
/// (`CMSG_SPACE(4)` = 24 bytes on 64-bit); 64 leaves room and matches the notes' measurement.
const CONTROL_LEN: usize = 64;

#[repr(C, align(8))]
#[derive(Clone, Copy)]
struct ControlSlot([u8; CONTROL_LEN]);

/// `mmsghdr` holds raw pointers into this receiver's own heap buffers (or, for the sender,
/// into the caller's slices). The receiver's point into boxed slices it owns, which never move
/// or reallocate (moving the receiver moves only the boxes' pointers, not their contents);
/// the sender's are rewritten before every call. They are never dereferenced outside a system
/// call, so moving the owner to another thread is sound.
#[repr(transparent)]
pub(crate) struct MmsgHdr(pub(crate) libc::mmsghdr);
// SAFETY: see the type's comment: the pointers target memory owned by the header's owner and
// are only used during a system call made by the thread that owns it.
unsafe impl Send for MmsgHdr {}
// SAFETY: the headers are only read or written through `&mut` of their owner (`recv`,
// `send_batch`); no `&self` method of UdpReceiver/UdpSender touches them, so sharing `&owner`
// across threads cannot race on them.
unsafe impl Sync for MmsgHdr {}

#[repr(transparent)]
pub(crate) struct IoVec(pub(crate) libc::iovec);
// SAFETY: as for MmsgHdr.
unsafe impl Send for IoVec {}
// SAFETY: as for MmsgHdr.
unsafe impl Sync for IoVec {}

impl MmsgHdr {
    pub(crate) fn zeroed() -> MmsgHdr {
        // SAFETY: mmsghdr is a plain C struct of integers and raw pointers; all zero is valid.
        MmsgHdr(unsafe { sys::zeroed() })
    }
}

impl IoVec {
    pub(crate) fn empty() -> IoVec {
        IoVec(libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        })
    }
}

/// Per-datagram result of the last call.
#[derive(Clone, Copy)]
struct Meta {
    len: usize,
    source: SocketAddr,
    truncated: bool,
}

const NO_SOURCE: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));

/// Kernel memory accounting of one socket's receive queue (`SO_MEMINFO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketMemInfo {
    /// Bytes currently queued, kernel overhead included (`SK_MEMINFO_RMEM_ALLOC`).
    pub queued_bytes: u32,
    /// The receive buffer limit (`SK_MEMINFO_RCVBUF`, the same as `getsockopt(SO_RCVBUF)`).
    pub rcvbuf: u32,
    /// Cumulative drops as the kernel's 32-bit counter (`SK_MEMINFO_DROPS`).
    pub drops: u32,
}

/// One socket of a group with its preallocated receive slots. Owned by one thread.
pub struct UdpReceiver {
    socket: Socket,
    index: usize,
    max_datagram: usize,
    slot_len: usize,
    buf: Box<[u8]>,
    names: Box<[libc::sockaddr_storage]>,
    control: Box<[ControlSlot]>,
    iovs: Box<[IoVec]>,
    hdrs: Box<[MmsgHdr]>,
    meta: Box<[Meta]>,
    /// Headers `..linked` point at their slots and are ready for the kernel. Linking happens
    /// once per header (lazily, as larger batches are asked for); after each call only the
    /// fields the kernel wrote are reset, for the headers it wrote. At 200k datagrams/s spread
    /// over four sockets a call returns a handful of datagrams, and re-linking all `batch`
    /// headers every call was 4 % of the receive thread's CPU.
    linked: usize,
    stats: Arc<SocketStats>,
    drops: DropCounter,
    /// Keeps the group's balancing program and map alive as long as any receiver is.
    _keepalive: Arc<dyn Send + Sync>,
}

impl std::fmt::Debug for UdpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpReceiver")
            .field("index", &self.index)
            .field("local_addr", &self.local_addr().ok())
            .field("batch", &self.hdrs.len())
            .field("max_datagram", &self.max_datagram)
            .finish_non_exhaustive()
    }
}

impl UdpReceiver {
    /// Wrap a bound socket. `batch` and `max_datagram` were validated by the group config.
    pub(crate) fn new(
        socket: Socket,
        index: usize,
        batch: usize,
        max_datagram: usize,
        stats: Arc<SocketStats>,
        keepalive: Arc<dyn Send + Sync>,
    ) -> UdpReceiver {
        let slot_len = max_datagram + 1;
        // SAFETY: sockaddr_storage is a plain C struct; all zero is a valid (AF_UNSPEC) value.
        let empty_name: libc::sockaddr_storage = unsafe { sys::zeroed() };
        UdpReceiver {
            socket,
            index,
            max_datagram,
            slot_len,
            // vec![0; n] is a zeroed allocation: the OS maps pages lazily, so only the part of
            // each slot that datagrams actually fill becomes resident.
            buf: vec![0u8; batch * slot_len].into_boxed_slice(),
            names: vec![empty_name; batch].into_boxed_slice(),
            control: vec![ControlSlot([0; CONTROL_LEN]); batch].into_boxed_slice(),
            iovs: (0..batch).map(|_| IoVec::empty()).collect(),
            hdrs: (0..batch).map(|_| MmsgHdr::zeroed()).collect(),
            meta: vec![
                Meta {
                    len: 0,
                    source: NO_SOURCE,
                    truncated: false
                };
                batch
            ]
            .into_boxed_slice(),
            linked: 0,
            stats,
            drops: DropCounter::default(),
            _keepalive: keepalive,
        }
    }

    /// Index of this socket in its group (the `socket` metric label).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "socket has no IP address"))
    }

    /// How many datagrams one [`recv`](Self::recv) can return.
    pub fn batch_capacity(&self) -> usize {
        self.hdrs.len()
    }

    /// The largest datagram delivered whole.
    pub fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    /// This socket's counters (the same `Arc` as in [`crate::UdpGroup::stats`]).
    pub fn stats(&self) -> &Arc<SocketStats> {
        &self.stats
    }

    /// Bound every wait of [`recv`](Self::recv) (`SO_RCVTIMEO`); `None` waits forever.
    /// Set it once, to at most the batch timeout and the shutdown latency you accept.
    /// A zero duration is rejected (the kernel would read it as "forever"); durations below
    /// one microsecond are rounded up to one.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        let timeout = match timeout {
            Some(d) if d.is_zero() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a read timeout of zero would block forever; use None for that",
                ));
            }
            Some(d) => Some(d.max(Duration::from_micros(1))),
            None => None,
        };
        self.socket.set_read_timeout(timeout)
    }

    /// Receive up to `max` datagrams (see the module docs for the exact behaviour).
    pub fn recv(&mut self, max: usize) -> io::Result<Datagrams<'_>> {
        let n = max.min(self.hdrs.len());
        if n == 0 {
            return Ok(self.datagrams(0));
        }
        self.link(n);
        let got = loop {
            // SAFETY: hdrs[..n] were set up by `link` to point at iovs[..n], names[..n] and
            // control[..n], and the iovecs at disjoint `slot_len`-byte ranges of `buf`; all are
            // boxed slices owned by `self` that never reallocate, and `self` is mutably
            // borrowed for the call, so they stay valid and unaliased while the kernel writes
            // into them. Their lengths were reset by `link` or by `finish` after the previous
            // call. `n` ≤ hdrs.len().
            let rc = unsafe {
                libc::recvmmsg(
                    self.socket.as_raw_fd(),
                    self.hdrs.as_mut_ptr().cast::<libc::mmsghdr>(),
                    n as libc::c_uint,
                    libc::MSG_WAITFORONE,
                    std::ptr::null_mut(),
                )
            };
            if rc >= 0 {
                break rc as usize;
            }
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => {
                    // Timed out with nothing queued: a good moment to pick up drops that no
                    // datagram has reported yet. A failure here must not turn the timeout into
                    // an error; the counter simply stays as it was.
                    let _ = self.refresh_kernel_drops();
                    return Ok(self.datagrams(0));
                }
                _ => return Err(err),
            }
        };
        self.finish(got);
        Ok(self.datagrams(got))
    }

    /// Point the first `n` headers at their slots, once: headers already linked are left alone
    /// (`finish` keeps them ready).
    fn link(&mut self, n: usize) {
        if n <= self.linked {
            return;
        }
        let base = self.buf.as_mut_ptr();
        for i in self.linked..n {
            // `i * slot_len + slot_len <= buf.len()` by construction, so this stays in bounds.
            self.iovs[i].0 = libc::iovec {
                iov_base: base.wrapping_add(i * self.slot_len).cast(),
                iov_len: self.slot_len,
            };
            let h = &mut self.hdrs[i].0;
            h.msg_hdr.msg_name = (&raw mut self.names[i]).cast();
            h.msg_hdr.msg_namelen = mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_hdr.msg_iov = &raw mut self.iovs[i].0;
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = self.control[i].0.as_mut_ptr().cast();
            h.msg_hdr.msg_controllen = CONTROL_LEN as _;
            h.msg_hdr.msg_flags = 0;
            h.msg_len = 0;
        }
        self.linked = n;
    }

    /// Record lengths, truncation, sources and drop counts of the `got` datagrams received.
    fn finish(&mut self, got: usize) {
        let mut bytes = 0u64;
        let mut truncated = 0u64;
        let mut drops_changed = false;
        let mut newest_drops = 0;
        for i in 0..got {
            let h = &self.hdrs[i].0;
            let len = h.msg_len as usize;
            let cut = h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 || len > self.max_datagram;
            let len = len.min(self.max_datagram);
            let source =
                sys::sockaddr_to_std(&self.names[i], h.msg_hdr.msg_namelen).unwrap_or(NO_SOURCE);
            if let Some(raw) = rxq_ovfl(&h.msg_hdr)
                && self.drops.observe(raw)
            {
                drops_changed = true;
                newest_drops = raw;
            }
            bytes += len as u64;
            truncated += u64::from(cut);
            self.meta[i] = Meta {
                len,
                source,
                truncated: cut,
            };
            // Ready for the next call: the kernel overwrote exactly these four fields.
            let h = &mut self.hdrs[i].0;
            h.msg_hdr.msg_namelen = mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_hdr.msg_controllen = CONTROL_LEN as _;
            h.msg_hdr.msg_flags = 0;
            h.msg_len = 0;
        }
        self.stats.add_batch(got as u64, bytes, truncated);
        // The local counter only filters: the shared one (which a DropProbe may have moved
        // further) decides what the total is.
        if drops_changed {
            self.stats.observe_drops(newest_drops);
        }
    }

    fn datagrams(&self, n: usize) -> Datagrams<'_> {
        Datagrams {
            buf: &self.buf,
            slot_len: self.slot_len,
            meta: &self.meta[..n],
            pos: 0,
        }
    }

    /// Read the socket's drop counter now (`SO_MEMINFO`), publish it to [`SocketStats`] and
    /// return the cumulative total. [`recv`](Self::recv) calls this on every timeout; call it
    /// yourself when the socket has no read timeout and may sit idle after drops.
    pub fn refresh_kernel_drops(&mut self) -> io::Result<u64> {
        let info = sys::meminfo(&self.socket)?;
        self.drops.observe(info.drops);
        Ok(self.stats.observe_drops(info.drops))
    }

    /// A handle that reads this socket's drop counter from another thread (its own duplicate
    /// of the descriptor), for when this receiver is not reading: a receive thread waiting on
    /// a full pipeline calls neither `recv` nor [`refresh_kernel_drops`](Self::refresh_kernel_drops),
    /// and drops are exactly what happens then. The probe keeps the socket open: drop it
    /// together with the receiver.
    pub fn drop_probe(&self) -> io::Result<DropProbe> {
        Ok(DropProbe {
            socket: self.socket.try_clone()?,
            stats: Arc::clone(&self.stats),
        })
    }

    /// The socket's receive queue accounting now (`SO_MEMINFO`): bytes queued, limit, drops.
    pub fn meminfo(&self) -> io::Result<SocketMemInfo> {
        let m = sys::meminfo(&self.socket)?;
        Ok(SocketMemInfo {
            queued_bytes: m.rmem_alloc,
            rcvbuf: m.rcvbuf,
            drops: m.drops,
        })
    }
}

/// Reads one socket's kernel drop counter (`SO_MEMINFO`) into its [`SocketStats`] from any
/// thread; see [`UdpReceiver::drop_probe`].
#[derive(Debug)]
pub struct DropProbe {
    socket: Socket,
    stats: Arc<SocketStats>,
}

impl DropProbe {
    /// Reads the counter now and publishes it; returns the cumulative total.
    pub fn refresh(&self) -> io::Result<u64> {
        let info = sys::meminfo(&self.socket)?;
        Ok(self.stats.observe_drops(info.drops))
    }

    /// The counters this probe publishes to.
    pub fn stats(&self) -> &Arc<SocketStats> {
        &self.stats
    }
}

impl AsFd for UdpReceiver {
    /// For `poll`-style readiness checks; reading must go through [`UdpReceiver::recv`].
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

/// The `SO_RXQ_OVFL` value in a received message's control data, if any. The kernel only adds
/// it once the counter is non-zero, so `None` means "no drops yet" or "unchanged".
// msg_controllen/cmsg_len are usize on glibc but u32 on musl: the casts are for portability.
#[allow(clippy::unnecessary_cast)]
fn rxq_ovfl(msg: &libc::msghdr) -> Option<u32> {
    if (msg.msg_controllen as usize) < mem::size_of::<libc::cmsghdr>() {
        return None;
    }
    let mut found = None;
    // SAFETY: msg_control points to this datagram's control slot and msg_controllen is the
    // length the kernel wrote into it (≤ CONTROL_LEN); CMSG_FIRSTHDR/CMSG_NXTHDR never return a
    // header extending beyond that length, and the data is read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let cm = &*c;
            if cm.cmsg_level == libc::SOL_SOCKET
                && cm.cmsg_type == sys::SO_RXQ_OVFL
                && cm.cmsg_len as usize >= libc::CMSG_LEN(mem::size_of::<u32>() as u32) as usize
            {
                found = Some(std::ptr::read_unaligned(
                    libc::CMSG_DATA(c).cast::<u32>().cast_const(),
                ));
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    found
}

/// One received datagram, borrowed from the receiver's slot until the next `recv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// The payload, at most `max_datagram` bytes.
    pub payload: &'a [u8],
    /// The sender (IPv4-mapped IPv6 sources are reported as IPv4; `0.0.0.0:0` if the kernel
    /// gave no address, which does not happen for UDP).
    pub source: SocketAddr,
    /// The datagram was longer than `max_datagram` and `payload` is its beginning.
    pub truncated: bool,
}

/// The datagrams returned by one [`UdpReceiver::recv`] call, in arrival order.
#[derive(Debug, Clone)]
pub struct Datagrams<'a> {
    buf: &'a [u8],
    slot_len: usize,
    meta: &'a [Meta],
    pos: usize,
}

impl std::fmt::Debug for Meta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}B from {}", self.len, self.source)
    }
}

impl<'a> Datagrams<'a> {
    /// No datagram (a timeout, or `max == 0`).
    pub fn is_empty(&self) -> bool {
        self.pos >= self.meta.len()
    }

    /// The `i`-th datagram of the batch, independent of iteration.
    pub fn get(&self, i: usize) -> Option<Datagram<'a>> {
        let m = self.meta.get(i)?;
        let start = i * self.slot_len;
        Some(Datagram {
            payload: &self.buf[start..start + m.len],
            source: m.source,
            truncated: m.truncated,
        })
    }
}

impl<'a> Iterator for Datagrams<'a> {
    type Item = Datagram<'a>;

    fn next(&mut self) -> Option<Datagram<'a>> {
        let d = self.get(self.pos)?;
        self.pos += 1;
        Some(d)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.meta.len().saturating_sub(self.pos);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Datagrams<'_> {}
