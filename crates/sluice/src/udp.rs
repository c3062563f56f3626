//! UDP receive threads: one plain OS thread per `SO_REUSEPORT` socket.
//!
//! Each loop iteration receives up to `fetch_limit` datagrams with one `recvmmsg`, then
//! acquires that many window permits — the only place the thread can wait on the rest of the
//! pipeline. While it waits, the datagrams stay in their receive slots and nothing more is
//! read, so the kernel buffer absorbs the pause; acquiring after the read (instead of
//! reserving `fetch_limit` before it) keeps the window gauge exact: an idle thread holds no
//! permits. Then every datagram is parsed, classified and encoded straight into the thread's
//! open batch while it still sits in its receive slot. Finished
//! batches go to the output with their permits. The socket's read timeout (`SO_RCVTIMEO`)
//! wakes the loop often enough to flush a partial batch on time and to notice shutdown, so
//! no timer thread is involved.
//!
//! **Coalescing.** A blocked `recvmmsg` is woken by the first datagram that arrives, so a
//! thread that keeps up returns from every call with a handful of datagrams. With per-packet
//! random balancing that is the normal case: at 113k datagrams/s over four sockets on two
//! cores, `perf stat` counted 39,900 calls/s (2.8 datagrams each) and 35,000 context
//! switches/s, and the wake-ups alone took 11–35 % of the receiver's CPU — CPU that a
//! co-located sender or the HEC output needed. So after a short batch (under half the fetch
//! limit) the thread sleeps [`COALESCE`] before reading again and lets the kernel buffer
//! collect the next batch. That is safe for loss: at the default 16 MiB buffer the socket
//! holds several thousand datagrams, tens of milliseconds even at 350k/s on one socket, and a
//! full batch (a thread that is behind) never sleeps. The price is at most one millisecond
//! of latency, against a 300 ms batch timeout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sluice_hec::EncodedBatch;
use sluice_net::{UdpGroup, UdpReceiver};
use sluice_proto::classify::{SourceMeta, Transport};
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use crate::pipeline::{Emitter, LocalCounts, Processor, ReceiverCounters, RecvTime};
use crate::window::{MemoryBudget, Window};

/// A bound UDP port: the reuseport group (kept alive for its eBPF program) and the threads
/// draining it.
#[derive(Debug)]
pub struct UdpPort {
    pub local_addr: SocketAddr,
    pub group: UdpGroup,
    /// One per socket, index = socket index.
    pub counters: Vec<Arc<ReceiverCounters>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

/// What every receive thread of a port shares.
#[derive(Clone, Debug)]
pub struct UdpContext {
    pub memory: Arc<MemoryBudget>,
    /// SC4S listener id (`DEFAULT`, or a vendor id such as `CISCO_ASA`).
    pub listener_id: Arc<str>,
    pub processor: Arc<Processor>,
    pub window: Arc<Window>,
    pub fetch_limit: usize,
    pub rt: Handle,
    pub stop: CancellationToken,
}

impl UdpPort {
    /// Starts one receive thread per socket of `group`.
    pub fn start(
        mut group: UdpGroup,
        ctx: UdpContext,
        out: &async_channel::Sender<EncodedBatch>,
    ) -> std::io::Result<UdpPort> {
        let local_addr = group.local_addr();
        let receivers = group.take_receivers();
        let mut counters = Vec::with_capacity(receivers.len());
        let mut threads = Vec::with_capacity(receivers.len());
        for rx in receivers {
            let c = Arc::new(ReceiverCounters::default());
            counters.push(c.clone());
            let ctx = ctx.clone();
            let emitter = Emitter::new(
                out.clone(),
                c,
                ctx.memory.clone(),
                ctx.rt.clone(),
                ctx.stop.clone(),
            );
            let name = format!("udp-{}-{}", local_addr.port(), rx.index());
            threads.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || receive_loop(rx, local_addr.port(), ctx, emitter))?,
            );
        }
        Ok(UdpPort {
            local_addr,
            group,
            counters,
            threads,
        })
    }

    /// Waits for the threads, which exit after `stop` fired and their batches were flushed.
    pub fn join(&mut self) {
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                tracing::error!(
                    port = self.local_addr.port(),
                    "a UDP receive thread panicked"
                );
            }
        }
    }
}

/// Pause after a short batch (see the module docs).
pub const COALESCE: Duration = Duration::from_millis(1);

/// How often an idle receive wakes up. Partial batches must leave within the batch timeout,
/// so the tick is a fraction of it; a floor keeps idle CPU negligible.
fn tick(batch_timeout: Duration) -> Duration {
    (batch_timeout / 4).clamp(Duration::from_millis(5), Duration::from_millis(100))
}

fn receive_loop(mut rx: UdpReceiver, port: u16, ctx: UdpContext, mut emitter: Emitter) {
    let processor = &ctx.processor;
    if let Err(e) = rx.set_read_timeout(Some(tick(processor.batch.timeout))) {
        tracing::error!(port, error = %e, "cannot set the UDP read timeout; partial batches may wait");
    }
    let fetch = ctx.fetch_limit.clamp(1, rx.batch_capacity());
    let mut builder = processor.new_builder();
    let mut counts = LocalCounts::default();
    let mut consecutive_errors = 0u32;

    // Never ask for more datagrams than the window can ever grant at once.
    let fetch = fetch.min(ctx.window.capacity() as usize);
    while !ctx.stop.is_cancelled() {
        let short_batch = match rx.recv(fetch) {
            Ok(datagrams) => {
                consecutive_errors = 0;
                let n = datagrams.len();
                if n > 0 {
                    // On stop this still returns the permits (`acquire_blocking` falls back to
                    // overshooting the window rather than losing what was already read).
                    match ctx.window.acquire_blocking(n as u32, &ctx.rt, &ctx.stop) {
                        Some(permit) => emitter.hold(permit),
                        None => tracing::debug!(port, "stopping while the window was full"),
                    }
                }
                let at = RecvTime::now();
                for d in datagrams {
                    if d.truncated {
                        counts.truncated += 1;
                    }
                    let src = SourceMeta {
                        transport: Transport::Udp,
                        dest_port: port,
                        source_ip: d.source.ip(),
                        listener_id: &ctx.listener_id,
                    };
                    if let Some(batch) =
                        processor.process(d.payload, &src, at, &mut builder, &mut counts)
                    {
                        emitter.emit(batch);
                    }
                }
                n > 0 && n < fetch.div_ceil(2)
            }
            Err(e) => {
                consecutive_errors += 1;
                // Transient errors (ENOMEM, a pending ICMP error) must not kill the loop;
                // back off so a persistent one cannot spin a core.
                if consecutive_errors == 1 || consecutive_errors.is_power_of_two() {
                    tracing::warn!(port, socket = rx.index(), error = %e, "recvmmsg failed");
                }
                std::thread::sleep(
                    Duration::from_millis(10).min(Duration::from_millis(consecutive_errors as u64)),
                );
                continue;
            }
        };
        counts.flush_into(emitter.counters());
        if builder
            .deadline()
            .is_some_and(|d| d <= std::time::Instant::now())
            && let Some(batch) = builder.take()
        {
            emitter.emit(batch);
        }
        if short_batch {
            std::thread::sleep(COALESCE);
        }
    }
    if let Some(batch) = builder.take() {
        emitter.emit(batch);
    }
    counts.flush_into(emitter.counters());
}
