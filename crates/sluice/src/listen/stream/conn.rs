//! The connection loop of every stream port — plain TCP and RFC 6587, TLS and RFC 5425,
//! optionally behind a PROXY protocol header — generic over the stream (a `TcpStream`, a
//! `TlsStream`, either after a PROXY header).
//!
//! Each connection is a task: read into a buffer, cut frames with
//! [`sluice_proto::framing::Decoder`] (octet counting or LF, per frame), acquire window
//! permits for the frames found, then parse, classify and encode them into a per-read chunk.
//! Waiting for permits means not reading, so a full window closes the TCP window towards the
//! sender instead of dropping. Chunks go to one combiner task per port that merges them into
//! HEC-sized batches (a memcpy per event), so a thousand quiet devices still produce full
//! batches rather than a thousand tiny requests. With `parallelize` on, a read's frames go to
//! a pool of worker tasks instead, so one busy connection uses more than one core.
//!
//! # The edge cannot be locked out
//!
//! * **Connection limit with eviction** ([`crate::listen::stream::edge`]): at `max_connections` the
//!   connection idle longest is closed to admit the new one; only when none is idle is the
//!   new one refused. Connections are accepted (not left in the backlog), so a flood is
//!   counted and logged instead of silently stalling everyone.
//! * **Per-frame deadline** (`frame_timeout`): a frame must complete within this long of its
//!   first byte, and the first frame of a connection — PROXY header and TLS handshake
//!   included — within this long of the accept. A connection that sends nothing is closed
//!   (`no_data`); one that trickles a frame (slowloris) has what arrived delivered as a
//!   partial frame, tagged `sluice:frame_timeout` in `sc4s_tags` and counted, and is closed.
//! * **Idle timeout** (`idle_timeout`) between frames, and TCP keepalive (`keepalive`, 60 s,
//!   then 6 probes 10 s apart) for half-open connections whose peer vanished without a FIN
//!   or RST (`dead_peer`): found in about two minutes even with the idle timeout off.
//! * **Bounded memory**: a connection's buffer starts at 8 KiB and grows only while a frame
//!   longer than it arrives, up to `max_message_size` plus a frame header.
//!
//! Every close is counted by reason (`sluice_tcp_closed_total{reason}`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use sluice_net::RcvbufReport;
use sluice_proto::batch::{BatchBuilder, BatchPolicy, EncodedBatch};
use sluice_proto::classify::SourceMeta;
use sluice_proto::framing::{Decoder, Frame, FramingStats};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

pub use crate::listen::stream::context::{TcpContext, TcpLimits, TcpStats};
use crate::listen::stream::context::{deliver, deliver_tagged};
use crate::listen::stream::edge::ConnGuard;
use crate::listen::stream::proxy::Prefixed;
use crate::output::{Submit, sleep_until_opt};
use crate::pipeline::{LocalCounts, ReceiverCounters};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{AcceptFailed, BatchEmitted};
use crate::telemetry::events::{CloseReason, Failure};

/// Tag added to `sc4s_tags` of a partial frame delivered because its deadline passed.
pub const FRAME_TIMEOUT_TAG: &str = "sluice:frame_timeout";

/// A connection's buffer at first: most senders write lines of a few hundred bytes, and an
/// idle connection should cost little.
const INITIAL_BUFFER: usize = 8 * 1024;
/// Reads are made with at least this much room once a connection is busy.
const READ_CHUNK: usize = 64 * 1024;
/// At shutdown a connection is read until it has been quiet this long. Not until the first
/// empty read: data the sender wrote while our receive window was closed is still in its send
/// buffer and arrives one round trip after we read (our window update), and it counts as
/// sent.
const SHUTDOWN_QUIET: Duration = Duration::from_millis(200);

/// A bound stream port: its listening sockets, ready to serve.
#[derive(Debug)]
pub struct TcpPort {
    pub listeners: Vec<TcpListener>,
    pub local_addr: SocketAddr,
    /// What the kernel granted each listening socket's receive buffer.
    pub rcvbuf: Vec<RcvbufReport>,
    /// The port's claim (its lock file), held as long as the listening sockets.
    pub claim: Option<sluice_net::PortClaim>,
}

/// Binds `sockets` listening sockets on `addr` (`SO_REUSEPORT` when more than one, so the
/// kernel spreads connections over them) with the receive buffer `rcvbuf` (forced when
/// privileged, read back). Binding now makes a port conflict a startup error; serving
/// starts with [`serve`]. Must be called inside the tokio runtime.
pub fn bind(addr: SocketAddr, sockets: usize, rcvbuf: Option<usize>) -> std::io::Result<TcpPort> {
    use socket2::{Domain, Protocol, Socket, Type};
    let mut listeners = Vec::with_capacity(sockets.max(1));
    let mut reports = Vec::with_capacity(sockets.max(1));
    let mut bind_addr = addr;
    for i in 0..sockets.max(1) {
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        s.set_reuse_address(true)?;
        // The port was claimed first (sluice_net::PortClaim), so SO_REUSEPORT on a fixed port
        // only lets in a process that was told to share it. With port 0 the first socket
        // must autobind alone: an autobind with SO_REUSEPORT may land on a port another group
        // of this user already listens on and join it.
        if i > 0 || addr.port() != 0 {
            s.set_reuse_port(true)?;
        }
        if addr.is_ipv6() {
            // Dual stack, like the UDP side: `[::]:514` also accepts IPv4 senders.
            s.set_only_v6(false)?;
        }
        s.set_nonblocking(true)?;
        reports.push(sluice_net::apply_rcvbuf(&s, i, rcvbuf)?);
        s.bind(&bind_addr.into())?;
        if i == 0 {
            if sockets > 1 && addr.port() == 0 {
                s.set_reuse_port(true)?;
            }
            bind_addr = s
                .local_addr()?
                .as_socket()
                .ok_or_else(|| std::io::Error::other("bound socket has no IP address"))?;
        }
        s.listen(1024)?;
        listeners.push(TcpListener::from_std(s.into())?);
    }
    Ok(TcpPort {
        listeners,
        local_addr: bind_addr,
        rcvbuf: reports,
        claim: None,
    })
}

/// Serves a port until `ctx.stop` fires and every connection has finished; batches go to
/// `out`. Returns when the last batch of this port has been handed over.
pub async fn serve(port: TcpPort, ctx: Arc<TcpContext>, out: Submit) {
    let dest_port = port.local_addr.port();
    let (chunk_tx, chunk_rx) = async_channel::unbounded::<EncodedBatch>();
    let combiner = tokio::spawn(combine(
        chunk_rx,
        ctx.processor.load().batch,
        out,
        ctx.counters.clone(),
    ));
    let workers = crate::listen::stream::parallel::Workers::start(&ctx, dest_port, &chunk_tx);
    let mut accepts = tokio::task::JoinSet::new();
    for listener in port.listeners {
        accepts.spawn(accept_loop(
            listener,
            dest_port,
            ctx.clone(),
            chunk_tx.clone(),
            workers.as_ref().map(|w| w.sender()),
        ));
    }
    while accepts.join_next().await.is_some() {}
    if let Some(w) = workers {
        w.finish().await;
    }
    drop(chunk_tx);
    let _ = combiner.await;
}

async fn accept_loop(
    listener: TcpListener,
    dest_port: u16,
    ctx: Arc<TcpContext>,
    chunks: async_channel::Sender<EncodedBatch>,
    jobs: Option<crate::listen::stream::parallel::JobSender>,
) {
    let mut conns = tokio::task::JoinSet::new();
    let spawn = |conns: &mut tokio::task::JoinSet<()>, stream: TcpStream, peer: SocketAddr| {
        // Refused: the socket is closed by dropping it (counted in `admit`).
        let Some(guard) = ctx.edge.admit(peer) else {
            return;
        };
        let ctx = ctx.clone();
        let chunks = chunks.clone();
        let jobs = jobs.clone();
        conns.spawn(async move {
            handle(stream, peer, dest_port, guard, &ctx, &chunks, jobs.as_ref()).await;
        });
    };
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = ctx.accepting.cancelled() => break,
        };
        match accepted {
            Ok((stream, peer)) => spawn(&mut conns, stream, peer),
            Err(e) => {
                AcceptFailed { error: &e }.emit(&ctx.stats);
                // EMFILE and friends: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        // Reap finished connections so the set does not grow with every short-lived sender.
        while conns.try_join_next().is_some() {}
    }
    // Closing a listening socket resets the connections still in its accept queue. When a
    // reload closes or replaces the port (the daemon is not stopping), take them first: they
    // are served like any other.
    if ctx.stop.is_cancelled() {
        drop(listener);
    } else {
        for (stream, peer) in take_backlog(listener) {
            spawn(&mut conns, stream, peer);
        }
    }
    while conns.join_next().await.is_some() {}
}

/// Accepts whatever is queued on `listener` without waiting, and closes it.
fn take_backlog(listener: TcpListener) -> Vec<(TcpStream, SocketAddr)> {
    let mut out = Vec::new();
    let Ok(std_listener) = listener.into_std() else {
        return out;
    };
    while let Ok((s, peer)) = std_listener.accept() {
        // Accepted sockets do not inherit O_NONBLOCK; tokio needs it.
        if s.set_nonblocking(true).is_ok()
            && let Ok(s) = TcpStream::from_std(s)
        {
            out.push((s, peer));
        }
    }
    out
}

/// Finds a half-open connection (the peer vanished without a FIN or RST) after `time` of
/// quiet plus six unanswered probes (10 s apart, or `time` apart when shorter): about two
/// minutes by default instead of the kernel's two hours. The read then fails with
/// `TimedOut` and the connection closes as `dead_peer`.
fn set_keepalive(stream: &TcpStream, time: Duration) {
    if time.is_zero() {
        return;
    }
    let ka = socket2::TcpKeepalive::new()
        .with_time(time)
        .with_interval(time.min(Duration::from_secs(10)))
        .with_retries(6);
    if let Err(e) = socket2::SockRef::from(stream).set_tcp_keepalive(&ka) {
        tracing::debug!(error = %e, "cannot enable TCP keepalive");
    }
}

/// One connection, from the accept to the close: PROXY header, TLS handshake, then the
/// read loop. The close reason is recorded in `guard`, which counts it when dropped.
async fn handle(
    mut stream: TcpStream,
    peer: SocketAddr,
    dest_port: u16,
    mut guard: ConnGuard,
    ctx: &TcpContext,
    chunks: &async_channel::Sender<EncodedBatch>,
    jobs: Option<&crate::listen::stream::parallel::JobSender>,
) {
    set_keepalive(&stream, ctx.limits.keepalive);
    let first_deadline = Instant::now() + ctx.limits.frame_timeout;
    let mut source = peer;
    let mut prefix = Vec::new();
    if ctx.proxy {
        let header = tokio::select! {
            r = tokio::time::timeout_at(first_deadline, crate::listen::stream::proxy::read_header(&mut stream)) => r,
            () = guard.evicted() => return guard.set_reason(CloseReason::Evicted),
            () = ctx.stop.cancelled() => return guard.set_reason(CloseReason::Shutdown),
        };
        match header {
            Ok(Ok((proxied, rest))) => {
                if let Some(s) = proxied.source {
                    source = s;
                }
                prefix = rest;
            }
            Ok(Err(e)) => {
                if let Some(suppressed) = ctx.warnings.allow(CloseReason::ProxyHeader) {
                    tracing::warn!(%peer, port = dest_port, suppressed, "closing a connection: {e} (SC4S_SOURCE_PROXYCONNECT=yes expects every connection to start with one)");
                }
                return guard.set_reason(CloseReason::ProxyHeader);
            }
            Err(_) => {
                if let Some(suppressed) = ctx.warnings.allow(CloseReason::ProxyHeader) {
                    tracing::warn!(%peer, port = dest_port, suppressed, "closing a connection: no complete PROXY header within the frame deadline");
                }
                return guard.set_reason(CloseReason::ProxyHeader);
            }
        }
    }
    let stream = Prefixed::new(prefix, stream);
    let src = ctx.source(dest_port, source);
    let reason = match &ctx.tls {
        None => read_loop(stream, &src, &guard, first_deadline, ctx, chunks, jobs).await,
        Some(tls) => {
            let hs = tokio::select! {
                r = tokio::time::timeout_at(first_deadline, tls.accept(stream)) => r,
                () = guard.evicted() => return guard.set_reason(CloseReason::Evicted),
                () = ctx.stop.cancelled() => return guard.set_reason(CloseReason::Shutdown),
            };
            match hs {
                Ok(Ok(tls_stream)) => {
                    tls.record_handshake(tls_stream.get_ref().1, dest_port);
                    read_loop(tls_stream, &src, &guard, first_deadline, ctx, chunks, jobs).await
                }
                Ok(Err(e)) => {
                    tls.record_failure(Failure::of(&e), source, dest_port, &e.to_string());
                    CloseReason::TlsHandshake
                }
                Err(_) => {
                    tls.record_failure(Failure::Timeout, source, dest_port, "timed out");
                    CloseReason::TlsHandshake
                }
            }
        }
    };
    guard.set_reason(reason);
}

/// Why a connection's read loop ended.
enum End {
    Eof,
    Stop,
    Evicted,
    FrameTimeout,
    NoData,
    IdleTimeout,
    Error(std::io::Error),
}

/// The connection loop shared by every stream transport.
async fn read_loop<S: AsyncRead + Unpin>(
    mut stream: S,
    src: &SourceMeta<'_>,
    guard: &ConnGuard,
    first_deadline: Instant,
    ctx: &TcpContext,
    chunks: &async_channel::Sender<EncodedBatch>,
    jobs: Option<&crate::listen::stream::parallel::JobSender>,
) -> CloseReason {
    let mut decoder = Decoder::new(ctx.limits.max_message_size);
    let cap = decoder.required_capacity();
    let mut buf = BytesMut::with_capacity(INITIAL_BUFFER);
    let mut chunk = BatchBuilder::new(BatchPolicy {
        max_events: usize::MAX,
        max_bytes: usize::MAX,
        timeout: Duration::from_secs(3600),
    });
    let mut frames: Vec<Frame> = Vec::with_capacity(64);
    let mut counts = LocalCounts::default();
    let mut framing_seen = FramingStats::default();
    // The deadline of the frame in progress; the first frame's runs from the accept, so a
    // connection that sends nothing is closed too.
    let mut frame_deadline = Some(first_deadline);
    let mut idle_deadline: Option<Instant> = None;
    let mut received = false;

    let end = loop {
        // Grow only while a frame is longer than what is held (up to what the decoder needs);
        // once busy, read in chunks large enough to amortise the syscall.
        if buf.capacity() - buf.len() < 4096 || (received && buf.capacity() < READ_CHUNK) {
            let want = (buf.capacity() * 2).clamp(INITIAL_BUFFER, cap.max(READ_CHUNK));
            buf.reserve(want - buf.len().min(want));
        }
        let deadline = frame_deadline.or(idle_deadline);
        let read = tokio::select! {
            r = stream.read_buf(&mut buf) => r,
            () = ctx.stop.cancelled() => break End::Stop,
            () = guard.evicted() => break End::Evicted,
            () = sleep_until_opt(deadline.map(Instant::into_std)) => {
                break match (frame_deadline.is_some(), received) {
                    (true, true) => End::FrameTimeout,
                    (true, false) => End::NoData,
                    (false, _) => End::IdleTimeout,
                };
            }
        };
        match read {
            Ok(0) => break End::Eof,
            Ok(_) => {}
            Err(e) => break End::Error(e),
        }
        received = true;
        // Busy until this read is processed: waiting on the window is not idleness.
        guard.set_idle(false);
        frames.clear();
        let consumed = {
            let mut it = decoder.frames(&buf);
            frames.extend(it.by_ref().map(|(f, _)| f));
            it.consumed()
        };
        let got_frames = !frames.is_empty();
        if got_frames {
            let running = match jobs {
                Some(jobs) => {
                    let data = buf.split_to(consumed).freeze();
                    let taken = std::mem::replace(&mut frames, Vec::with_capacity(64));
                    jobs.submit(data, taken, src.source_ip, &ctx.stop).await
                }
                None => {
                    let r = deliver(&buf, &frames, src, ctx, &mut chunk, &mut counts, chunks).await;
                    buf.advance(consumed);
                    r
                }
            };
            if !running {
                break End::Stop;
            }
        } else {
            buf.advance(consumed);
        }
        // Deadlines run from now, after any wait for the window or the memory budget: time
        // the pipeline held the connection is not the sender's.
        let now = Instant::now();
        let pending = !buf.is_empty() || !decoder.at_boundary();
        if got_frames || frame_deadline.is_none() {
            frame_deadline = pending.then(|| now + ctx.limits.frame_timeout);
        }
        idle_deadline =
            (!pending && !ctx.limits.idle_timeout.is_zero()).then(|| now + ctx.limits.idle_timeout);
        guard.touch(!pending);
        ctx.stats.add_framing(decoder.stats(), &mut framing_seen);
    };

    // Shutdown (the accept loop stopped accepting): what the sender already sent, in our
    // receive buffer or still in its own send buffer, is read and delivered now — beyond the
    // window, which no longer waits — until the connection is quiet for SHUTDOWN_QUIET or
    // ends. `frame_timeout` caps it: a sender that never pauses cannot hold shutdown up.
    if matches!(end, End::Stop) {
        let until = Instant::now() + ctx.limits.frame_timeout;
        loop {
            if buf.capacity() - buf.len() < 4096 {
                let want = (buf.capacity() * 2).clamp(INITIAL_BUFFER, cap.max(READ_CHUNK));
                buf.reserve(want - buf.len().min(want));
            }
            let quiet = (Instant::now() + SHUTDOWN_QUIET).min(until);
            match tokio::time::timeout_at(quiet, stream.read_buf(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => break,
            }
            frames.clear();
            let consumed = {
                let mut it = decoder.frames(&buf);
                frames.extend(it.by_ref().map(|(f, _)| f));
                it.consumed()
            };
            if !frames.is_empty() {
                deliver(&buf, &frames, src, ctx, &mut chunk, &mut counts, chunks).await;
            }
            buf.advance(consumed);
            ctx.stats.add_framing(decoder.stats(), &mut framing_seen);
        }
    }

    let reason = match &end {
        End::Eof => CloseReason::Eof,
        End::Stop => CloseReason::Shutdown,
        End::Evicted => CloseReason::Evicted,
        End::FrameTimeout => CloseReason::FrameTimeout,
        End::NoData => CloseReason::NoData,
        End::IdleTimeout => CloseReason::IdleTimeout,
        // TLS without close_notify, which most syslog senders skip: the end of the stream.
        End::Error(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => CloseReason::Eof,
        End::Error(e) if ctx.tls.is_some() && e.kind() == std::io::ErrorKind::InvalidData => {
            if let Some(suppressed) = ctx.warnings.allow(CloseReason::TlsError) {
                tracing::warn!(peer = %src.source_ip, port = src.dest_port, error = %e, suppressed, "TLS error after the handshake; closing the connection");
            }
            CloseReason::TlsError
        }
        End::Error(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            if let Some(suppressed) = ctx.warnings.allow(CloseReason::DeadPeer) {
                tracing::info!(peer = %src.source_ip, port = src.dest_port, suppressed, "closing a half-open connection: the sender stopped answering TCP keepalive probes (gone without closing)");
            }
            CloseReason::DeadPeer
        }
        End::Error(e) => {
            tracing::debug!(peer = %src.source_ip, error = %e, "connection read error");
            CloseReason::ReadError
        }
    };
    if matches!(end, End::IdleTimeout)
        && let Some(suppressed) = ctx.warnings.allow(reason)
    {
        tracing::info!(
            peer = %src.source_ip,
            port = src.dest_port,
            suppressed,
            "closing a connection idle for {:?} (SLUICE_TCP_IDLE_TIMEOUT); a sender that \
             vanished without closing looks like this",
            ctx.limits.idle_timeout
        );
    }
    if matches!(end, End::FrameTimeout | End::NoData)
        && let Some(suppressed) = ctx.warnings.allow(reason)
    {
        tracing::info!(
            peer = %src.source_ip,
            port = src.dest_port,
            buffered = buf.len(),
            suppressed,
            reason = reason.label(),
            "closing a connection that did not complete a frame within {:?} (slow or silent \
             sender); what arrived is delivered, tagged {FRAME_TIMEOUT_TAG}",
            ctx.limits.frame_timeout
        );
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
        let tag = (reason == CloseReason::FrameTimeout).then_some(FRAME_TIMEOUT_TAG);
        deliver_tagged(
            &buf,
            &frames,
            src,
            ctx,
            &mut chunk,
            &mut counts,
            chunks,
            tag,
        )
        .await;
    }
    ctx.stats.add_framing(decoder.stats(), &mut framing_seen);
    counts.flush_into(&ctx.counters);
    reason
}

/// Merges per-read chunks (with their holds) into HEC-sized batches and flushes partial ones
/// on time; finished batches go to the destination.
async fn combine(
    rx: async_channel::Receiver<EncodedBatch>,
    policy: BatchPolicy,
    out: Submit,
    counters: Arc<ReceiverCounters>,
) {
    let mut builder = BatchBuilder::new(policy);
    let send = |b: EncodedBatch| {
        BatchEmitted {
            events: b.events(),
            bytes: b.body().len(),
        }
        .emit(&counters);
        out.submit(b);
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
