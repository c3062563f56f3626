//! The TCP listener: RFC 6587 framing (octet counting or LF, per frame), many concurrent
//! connections, backpressure instead of loss.
//!
//! Each connection is a task: read into a buffer, cut frames with
//! [`sluice_proto::framing::Decoder`], acquire window permits for the frames found, then
//! parse, classify and encode them into a per-read chunk. Waiting for permits means not
//! reading, so a full window closes the TCP window towards the sender instead of dropping.
//! Chunks go to one combiner task per port that merges them into HEC-sized batches (a
//! memcpy per event), so a thousand quiet devices still produce full batches rather than a
//! thousand tiny requests.
//!
//! Limits: `max_connections` per port (further connections wait in the listen backlog),
//! `max_message_size` per frame (longer frames are truncated and counted, see the decoder),
//! `frame_timeout` for a connection stalled mid-frame (its partial frame is delivered, counted,
//! and the connection closed) and an optional `idle_timeout`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use sluice_hec::{BatchBuilder, BatchPolicy, EncodedBatch};
use sluice_proto::classify::{SourceMeta, Transport};
use sluice_proto::framing::{Decoder, Frame, FramingStats};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::pipeline::{LocalCounts, Processor, ReceiverCounters, RecvTime, hand_over};
use crate::window::{MemoryBudget, Window};

/// Limits applied to every connection of a listener.
#[derive(Clone, Debug)]
pub struct TcpLimits {
    pub max_connections: usize,
    pub max_message_size: usize,
    pub frame_timeout: Duration,
    /// `Duration::ZERO`: never close an idle connection.
    pub idle_timeout: Duration,
}

/// Counters of one TCP port, read at scrape time.
#[derive(Debug, Default)]
pub struct TcpStats {
    pub accepted: AtomicU64,
    pub closed: AtomicU64,
    pub accept_errors: AtomicU64,
    pub read_errors: AtomicU64,
    pub octet_counted: AtomicU64,
    pub truncated: AtomicU64,
    pub partial: AtomicU64,
    pub discarded_bytes: AtomicU64,
    pub empty_lines: AtomicU64,
    pub frame_timeouts: AtomicU64,
    pub idle_timeouts: AtomicU64,
}

impl TcpStats {
    pub fn open(&self) -> u64 {
        self.accepted
            .load(Ordering::Relaxed)
            .saturating_sub(self.closed.load(Ordering::Relaxed))
    }

    fn add_framing(&self, now: FramingStats, before: &mut FramingStats) {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        self.octet_counted.fetch_add(
            d(now.octet_counted, before.octet_counted),
            Ordering::Relaxed,
        );
        self.truncated
            .fetch_add(d(now.truncated, before.truncated), Ordering::Relaxed);
        self.partial
            .fetch_add(d(now.partial, before.partial), Ordering::Relaxed);
        self.discarded_bytes.fetch_add(
            d(now.discarded_bytes, before.discarded_bytes),
            Ordering::Relaxed,
        );
        self.empty_lines
            .fetch_add(d(now.empty_lines, before.empty_lines), Ordering::Relaxed);
        *before = now;
    }
}

/// A bound TCP port, ready to serve.
#[derive(Debug)]
pub struct TcpPort {
    pub listener: TcpListener,
    pub local_addr: SocketAddr,
}

/// Binds now, so a port conflict is a startup error; serving starts with [`serve`].
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpPort> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    // The port was claimed first (sluice_net::PortClaim), so SO_REUSEPORT only lets in a
    // process that was told to share it (a hand-over to a new instance).
    socket.set_reuseport(true)?;
    if addr.is_ipv6() {
        // Dual stack, like the UDP side: `[::]:514` also accepts IPv4 senders.
        let s2 = socket2::SockRef::from(&socket);
        s2.set_only_v6(false)?;
    }
    socket.bind(addr)?;
    let listener = socket.listen(1024)?;
    let local_addr = listener.local_addr()?;
    Ok(TcpPort {
        listener,
        local_addr,
    })
}

/// Everything a port's tasks share.
#[derive(Debug)]
pub struct TcpContext {
    pub memory: Arc<MemoryBudget>,
    /// SC4S listener id (`DEFAULT`, or a vendor id such as `CISCO_ASA`).
    pub listener_id: Arc<str>,
    pub processor: Arc<Processor>,
    pub window: Arc<Window>,
    pub limits: TcpLimits,
    pub counters: Arc<ReceiverCounters>,
    pub stats: Arc<TcpStats>,
    /// Fires when the daemon stops receiving.
    pub stop: CancellationToken,
}

/// Serves a port until `ctx.stop` fires and every connection has finished; batches go to
/// `out`. Returns when the last batch of this port has been handed over.
pub async fn serve(port: TcpPort, ctx: Arc<TcpContext>, out: async_channel::Sender<EncodedBatch>) {
    let dest_port = port.local_addr.port();
    let (chunk_tx, chunk_rx) = async_channel::unbounded::<EncodedBatch>();
    let combiner = tokio::spawn(combine(
        chunk_rx,
        ctx.processor.batch,
        out,
        ctx.counters.clone(),
    ));
    let slots = Arc::new(Semaphore::new(ctx.limits.max_connections.max(1)));
    let mut conns = tokio::task::JoinSet::new();
    loop {
        // Take a connection slot before accepting: over the limit, connections wait in the
        // kernel's listen backlog instead of being accepted and dropped.
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => match s { Ok(s) => s, Err(_) => break },
            () = ctx.stop.cancelled() => break,
        };
        let accepted = tokio::select! {
            a = port.listener.accept() => a,
            () = ctx.stop.cancelled() => break,
        };
        match accepted {
            Ok((stream, peer)) => {
                ctx.stats.accepted.fetch_add(1, Ordering::Relaxed);
                let ctx = ctx.clone();
                let chunk_tx = chunk_tx.clone();
                conns.spawn(async move {
                    connection(stream, peer, dest_port, &ctx, &chunk_tx).await;
                    ctx.stats.closed.fetch_add(1, Ordering::Relaxed);
                    drop(slot);
                });
            }
            Err(e) => {
                ctx.stats.accept_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(port = dest_port, error = %e, "accept failed");
                // EMFILE and friends: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        // Reap finished connections so the set does not grow with every short-lived sender.
        while conns.try_join_next().is_some() {}
    }
    drop(port);
    while conns.join_next().await.is_some() {}
    drop(chunk_tx);
    let _ = combiner.await;
}

/// Why a connection's read loop ended.
enum End {
    Eof,
    Stop,
    FrameTimeout,
    IdleTimeout,
    Error(std::io::Error),
}

async fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    dest_port: u16,
    ctx: &TcpContext,
    chunks: &async_channel::Sender<EncodedBatch>,
) {
    let src = SourceMeta {
        transport: Transport::Tcp,
        dest_port,
        source_ip: peer.ip().to_canonical(),
        listener_id: &ctx.listener_id,
    };
    let mut decoder = Decoder::new(ctx.limits.max_message_size);
    let cap = decoder.required_capacity();
    let mut buf = BytesMut::with_capacity(cap.min(64 * 1024));
    let mut chunk = BatchBuilder::new(BatchPolicy {
        max_events: usize::MAX,
        max_bytes: usize::MAX,
        timeout: Duration::from_secs(3600),
    });
    let mut frames: Vec<Frame> = Vec::with_capacity(64);
    let mut counts = LocalCounts::default();
    let mut framing_seen = FramingStats::default();

    let end = loop {
        // Grow towards the decoder's requirement only when a frame is longer than what we
        // hold; most connections keep a small buffer.
        if buf.capacity() - buf.len() < 4096 {
            let want = (buf.capacity() * 2).clamp(64 * 1024, cap.max(64 * 1024));
            buf.reserve(want - buf.len().min(want));
        }
        let timeout = if decoder.at_boundary() && buf.is_empty() {
            ctx.limits.idle_timeout
        } else {
            ctx.limits.frame_timeout
        };
        let read = tokio::select! {
            r = stream.read_buf(&mut buf) => r,
            () = ctx.stop.cancelled() => break End::Stop,
            () = sleep_or_forever(timeout) => {
                break if decoder.at_boundary() && buf.is_empty() { End::IdleTimeout } else { End::FrameTimeout };
            }
        };
        match read {
            Ok(0) => break End::Eof,
            Ok(_) => {}
            Err(e) => break End::Error(e),
        }
        frames.clear();
        let consumed = {
            let mut it = decoder.frames(&buf);
            frames.extend(it.by_ref().map(|(f, _)| f));
            it.consumed()
        };
        if !frames.is_empty()
            && !deliver(&buf, &frames, &src, ctx, &mut chunk, &mut counts, chunks).await
        {
            buf.advance(consumed);
            break End::Stop;
        }
        buf.advance(consumed);
        ctx.stats.add_framing(decoder.stats(), &mut framing_seen);
    };

    match &end {
        End::FrameTimeout => {
            ctx.stats.frame_timeouts.fetch_add(1, Ordering::Relaxed);
            tracing::info!(%peer, "connection stalled mid-frame; delivering the partial frame and closing");
        }
        End::IdleTimeout => {
            ctx.stats.idle_timeouts.fetch_add(1, Ordering::Relaxed);
        }
        End::Error(e) => {
            ctx.stats.read_errors.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(%peer, error = %e, "connection read error");
        }
        End::Eof | End::Stop => {}
    }
    // Whatever was received and not yet delivered goes out now: complete frames still in the
    // buffer (on stop), then the unterminated tail as a partial frame.
    frames.clear();
    let consumed = {
        let mut it = decoder.frames(&buf);
        frames.extend(it.by_ref().map(|(f, _)| f));
        it.consumed()
    };
    let rest_start = consumed;
    if let Some(f) = decoder.finish(&buf[rest_start..]) {
        frames.push(Frame {
            start: f.start + rest_start,
            end: f.end + rest_start,
            ..f
        });
    }
    if !frames.is_empty() {
        deliver(&buf, &frames, &src, ctx, &mut chunk, &mut counts, chunks).await;
    }
    ctx.stats.add_framing(decoder.stats(), &mut framing_seen);
    counts.flush_into(&ctx.counters);
}

async fn sleep_or_forever(d: Duration) {
    if d.is_zero() {
        std::future::pending::<()>().await
    } else {
        tokio::time::sleep(d).await
    }
}

/// Acquires window permits for `frames`, encodes them into one chunk and hands it to the
/// combiner. Returns `false` when the daemon stopped while waiting for the window: the frames
/// are then encoded and handed over without permits, because they were already read from the
/// socket and count as received (the window overshoots by at most one read per connection).
async fn deliver(
    buf: &[u8],
    frames: &[Frame],
    src: &SourceMeta<'_>,
    ctx: &TcpContext,
    chunk: &mut BatchBuilder,
    counts: &mut LocalCounts,
    chunks: &async_channel::Sender<EncodedBatch>,
) -> bool {
    let permit = ctx.window.acquire(frames.len() as u32, &ctx.stop).await;
    let mut running = permit.is_some();
    if let Some(mut c) = encode_chunk(buf, frames, src, ctx, chunk, counts) {
        if let Some(p) = permit {
            c.attach(p);
        }
        match ctx.memory.acquire(c.body.len(), &ctx.stop).await {
            Some(m) => c.attach(m),
            None => running = false,
        }
        hand_over(chunks, c, &ctx.counters);
    }
    counts.flush_into(&ctx.counters);
    running
}

fn encode_chunk(
    buf: &[u8],
    frames: &[Frame],
    src: &SourceMeta<'_>,
    ctx: &TcpContext,
    chunk: &mut BatchBuilder,
    counts: &mut LocalCounts,
) -> Option<EncodedBatch> {
    let at = RecvTime::now();
    for f in frames {
        if f.truncated {
            counts.truncated += 1;
        }
        // The chunk builder has no limits, so it never completes a batch on its own.
        let _ = ctx.processor.process(f.bytes(buf), src, at, chunk, counts);
    }
    chunk.take()
}

/// Merges per-read chunks into HEC-sized batches and flushes partial ones on time.
async fn combine(
    rx: async_channel::Receiver<EncodedBatch>,
    policy: BatchPolicy,
    out: async_channel::Sender<EncodedBatch>,
    counters: Arc<ReceiverCounters>,
) {
    let mut builder = BatchBuilder::new(policy);
    let send = |b: EncodedBatch| {
        counters.batches.fetch_add(1, Ordering::Relaxed);
        hand_over(&out, b, &counters);
    };
    loop {
        let deadline = builder.deadline();
        tokio::select! {
            c = rx.recv() => match c {
                Ok(chunk) => {
                    if let Some(b) = builder.push_chunk(std::time::Instant::now(), chunk) {
                        send(b);
                    }
                }
                Err(_) => break,
            },
            () = sleep_until_opt(deadline) => {
                if let Some(b) = builder.take() {
                    send(b);
                }
            }
        }
    }
    if let Some(b) = builder.take() {
        send(b);
    }
}

async fn sleep_until_opt(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
        None => std::future::pending::<()>().await,
    }
}
