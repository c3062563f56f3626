//! The UDP socket layer of sluice: `SO_REUSEPORT` groups, forced receive buffers, batched
//! `recvmmsg`/`sendmmsg`, eBPF/cBPF balancing and exact kernel drop counters, behind a safe API.
//!
//! This is the only crate of the workspace allowed to use `unsafe`; every block carries a
//! `// SAFETY:` comment and no raw file descriptor or pointer appears in a public signature.
//! It knows nothing about syslog or HEC: it hands out byte slices and source addresses.
//!
//! # How the daemon uses it
//!
//! ```no_run
//! use std::{sync::{Arc, atomic::{AtomicBool, Ordering}}, time::Duration};
//! use sluice_net::{Balance, UdpGroup, UdpGroupConfig};
//!
//! let mut cfg = UdpGroupConfig::new("0.0.0.0:514".parse().unwrap());
//! cfg.sockets = 4;
//! cfg.balance = Balance::Ebpf;
//! let mut group = UdpGroup::bind(&cfg)?;
//! if let Some(reason) = group.fallback_reason() {
//!     eprintln!("UDP balancing: using {} because {reason}", group.balance_mode());
//! }
//! for report in group.rcvbuf_reports() {
//!     if let Some(hint) = report.sysctl_hint() { eprintln!("{hint}"); }
//! }
//! let stats = group.stats(); // read by /metrics, index = socket index
//! let stop = Arc::new(AtomicBool::new(false));
//! for mut rx in group.take_receivers() {
//!     let stop = stop.clone();
//!     std::thread::spawn(move || -> std::io::Result<()> {
//!         rx.set_read_timeout(Some(Duration::from_millis(100)))?;
//!         while !stop.load(Ordering::Relaxed) {
//!             for dgram in rx.recv(64)? {
//!                 let _ = (dgram.payload, dgram.source, dgram.truncated);
//!             }
//!         }
//!         Ok(())
//!     });
//! }
//! # Ok::<(), sluice_net::NetError>(())
//! ```
//!
//! # The socket tricks, and why each one is there
//!
//! * **One receiver per port** ([`PortClaim`]). `SO_REUSEPORT` would let a second process of
//!   the same user join the group and, by attaching its own program, take all the traffic.
//!   Before binding a given port the group (and the daemon's TCP listeners) claim it: a lock
//!   file per port (`flock`, released by the kernel if the process dies) serialises sluice
//!   instances, and a probe socket *without* `SO_REUSEPORT` binds and closes, which the kernel
//!   refuses when any other socket, sluice or not, is on the port. The error names the
//!   holders found through `/proc/net/*` and `/proc/<pid>/fd` ([`port_holders`]). Sharing is
//!   opt-in ([`PortClaimConfig::share`]).
//! * **`SO_REUSEPORT` group** ([`UdpGroup`]). N sockets bound to one address, each drained by
//!   its own thread. `SO_REUSEPORT` is set before `bind`, because the kernel only adds a socket
//!   to a group when it binds. Port 0 is supported: a *probe* socket without `SO_REUSEPORT`
//!   binds first so the kernel picks a port no other socket uses (an autobind *with*
//!   `SO_REUSEPORT` may land on a port where another group of the same user already lives and
//!   silently join it), then it enables `SO_REUSEPORT`, the N sockets bind to that port and the
//!   probe is closed; the group then holds exactly the N sockets.
//!   IPv6 sockets clear `IPV6_V6ONLY`, so `[::]:514` is dual stack and also receives IPv4 (as
//!   SC4S does with `SC4S_IPV6_ENABLE`); IPv4 sources then arrive as `::ffff:a.b.c.d` and are
//!   reported as plain IPv4 [`SocketAddr`](std::net::SocketAddr)s.
//! * **Balancing** ([`Balance`]). Without a program the kernel picks the socket by a 4-tuple
//!   hash, so one chatty sender (the common case: one relay, one firewall) lands on one socket
//!   and one thread however many there are. `Ebpf` loads `ebpf/reuseport_select.c`
//!   (`BPF_PROG_TYPE_SK_REUSEPORT`), which picks a uniformly random socket of a
//!   `REUSEPORT_SOCKARRAY` in which this crate registered every socket of the group; the socket
//!   count is a load-time global equal to the number registered, so it cannot disagree with
//!   the group. `Cbpf` attaches `ld rand; mod #N; ret a` with `SO_ATTACH_REUSEPORT_CBPF`, which
//!   needs no privilege. When the requested mode cannot be set up, the group falls back
//!   (`Ebpf` → `Cbpf` → `Kernel`) and records why in [`UdpGroup::fallback_reason`].
//!   **From the first datagram**: the program is attached to socket 0 while no socket is
//!   bound yet (the kernel then creates the reuseport group around it), and only then do the
//!   sockets bind, so the port never receives without its selector. Attached after the binds,
//!   everything that arrived while the eBPF object loaded (milliseconds: thousands of datagrams
//!   from a busy sender) went to the one socket the hash picked. eBPF sockets enter the map
//!   once bound (the kernel accepts only bound sockets there); for the microseconds in between
//!   an empty slot makes the kernel fall back to its hash for that datagram. Random
//!   per-packet selection reorders one sender's datagrams across threads; syslog over UDP has
//!   no order guarantee and every event carries its own timestamp.
//! * **Receive buffers** ([`RcvbufReport`]). The buffer is what absorbs a stall of the reading
//!   thread; when it is full the kernel drops. `SO_RCVBUFFORCE` (root or `CAP_NET_ADMIN`)
//!   ignores `net.core.rmem_max`; without privilege `SO_RCVBUF` is silently clamped to
//!   `rmem_max`, so the value is always read back and a clamp is reported with the `sysctl` line
//!   that fixes it. See [`DEFAULT_RCVBUF`] for the default.
//! * **`recvmmsg`** ([`UdpReceiver`]). One system call returns up to a whole batch, with
//!   `MSG_WAITFORONE` so it returns as soon as one datagram is there (latency stays low at low
//!   rates) and the rest of the batch comes for free at high rates. Slots are preallocated;
//!   nothing is allocated per call. Each slot is one byte longer than the largest datagram
//!   accepted, so truncation is detected even when the kernel does not set `MSG_TRUNC`.
//!   `SO_RCVTIMEO` bounds each wait; a timeout is an empty batch, so the caller can flush
//!   partial batches and notice shutdown without a timer thread.
//! * **Exact kernel drop counters** ([`SocketStats`]). `SO_RXQ_OVFL` makes the kernel attach
//!   the socket's cumulative drop counter to every datagram it delivers; this is the same
//!   counter as the `drops` column of `/proc/net/udp`. It only travels with the next
//!   datagram, so an idle receive (a timeout) re-reads it with `SO_MEMINFO`
//!   (`SK_MEMINFO_DROPS`), the per-socket counter syslog-ng exports too; so does a
//!   [`DropProbe`] on a timer while the receiver is not reading at all (its pipeline full). `SO_MEMINFO` was chosen
//!   over parsing `/proc/net/udp{,6}` because it addresses the socket directly (no inode
//!   matching, no text parsing, one system call).
//! * **Stream sockets** ([`apply_rcvbuf`], [`raise_fd_limit`]). The TCP/TLS listeners use the
//!   same receive-buffer logic on their listening sockets, and the daemon raises its open-file
//!   limit to the hard limit so thousands of connections do not run into `EMFILE`.
//! * **`sendmmsg`** ([`UdpSender`]). The load tool's sender: a connected socket sending a batch
//!   per system call, so one sender thread can outrun the receiver under test.

mod balance;
mod claim;
mod error;
mod group;
mod holders;
mod limits;
mod rcvbuf;
mod recv;
mod send;
mod stats;
mod sys;

pub use balance::Balance;
pub use claim::{PortClaim, PortClaimConfig, Transport, default_lock_dir};
pub use error::NetError;
pub use group::{DEFAULT_BATCH, DEFAULT_RCVBUF, MAX_BATCH, UdpGroup, UdpGroupConfig};
pub use holders::{PortHolder, port_holders};
pub use limits::{FdLimit, raise_fd_limit};
pub use rcvbuf::{RcvbufReport, apply as apply_rcvbuf};
pub use recv::{DEFAULT_MAX_DATAGRAM, Datagram, Datagrams, DropProbe, SocketMemInfo, UdpReceiver};
pub use send::{UdpSender, UdpSenderConfig};
pub use stats::{SocketStats, StatsSnapshot};
