//! What a stream port's tasks share, and the step both the connection loop and the
//! parallel workers take with a read's frames: window permits, then parse, classify and
//! encode into a chunk for the port's combiner. Below [`super::conn`] and
//! [`super::parallel`], which both call it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use sluice_proto::batch::{BatchBuilder, EncodedBatch, HoldKind};
use sluice_proto::classify::{SourceMeta, Transport};
use sluice_proto::framing::Frame;
use tokio_util::sync::CancellationToken;

use crate::listen::stream::edge::{CloseLogs, Edge};
use crate::pipeline::{LocalCounts, ReceiverCounters, RecvTime, SharedProcessor, hand_over};
use crate::tls::TlsEndpoint;
use crate::window::{MemoryBudget, Window};

/// Limits applied to every connection of a listener.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpLimits {
    pub max_message_size: usize,
    /// Deadline of a frame from its first byte, and of the first frame from the accept.
    pub frame_timeout: Duration,
    /// `Duration::ZERO`: never close an idle connection.
    pub idle_timeout: Duration,
    /// Quiet time before the first TCP keepalive probe; `Duration::ZERO`: no keepalive.
    pub keepalive: Duration,
}

/// The counters of one port: connections, `accept()` failures, notable frames.
pub type TcpStats = crate::telemetry::events::StreamEvents;

/// Everything a port's tasks share.
#[derive(Debug)]
pub struct TcpContext {
    pub memory: Arc<MemoryBudget>,
    /// SC4S listener id (`DEFAULT`, or a vendor id such as `CISCO_ASA`).
    pub listener_id: Arc<str>,
    /// Loaded once per read chunk, so a reload takes effect between chunks.
    pub processor: SharedProcessor,
    pub window: Arc<Window>,
    pub limits: TcpLimits,
    pub counters: Arc<ReceiverCounters>,
    pub stats: Arc<TcpStats>,
    /// Fires when the daemon stops receiving: every connection ends.
    pub stop: CancellationToken,
    /// The listener's own token (a child of `stop`): fires when a reload closes or replaces
    /// this port. It stops accepting; open connections carry on until they end.
    pub accepting: CancellationToken,
    /// `Tcp`, or `Tls` for the TLS and RFC 5425 ports.
    pub transport: Transport,
    /// Connection table, limit, eviction and close counters.
    pub edge: Arc<Edge>,
    /// The TLS side, for TLS and RFC 5425 ports.
    pub tls: Option<Arc<TlsEndpoint>>,
    /// Expect a PROXY protocol header first.
    pub proxy: bool,
    /// Parse/classify/encode workers per port (0: in the connection's own task).
    pub parallelize: usize,
    /// Rate limit of the per-connection log lines (timeouts, PROXY errors), per reason.
    pub warnings: CloseLogs,
    /// An `RFC6587_NOPARSE` port: frames are classified unparsed
    /// ([`Processor::process_no_parse`](crate::pipeline::Processor::process_no_parse)).
    pub no_parse: bool,
}

impl TcpContext {
    pub(crate) fn source<'a>(&'a self, dest_port: u16, peer: SocketAddr) -> SourceMeta<'a> {
        SourceMeta {
            transport: self.transport,
            dest_port,
            source_ip: peer.ip().to_canonical(),
            listener_id: &self.listener_id,
        }
    }
}

/// Acquires window permits for `frames`, encodes them into one chunk and hands it to the
/// combiner. Returns `false` when the daemon stopped while waiting for the window: the frames
/// are then encoded and handed over without permits, because they were already read from the
/// socket and count as received (the window overshoots by at most one read per connection).
pub(crate) async fn deliver(
    buf: &[u8],
    frames: &[Frame],
    src: &SourceMeta<'_>,
    ctx: &TcpContext,
    chunk: &mut BatchBuilder,
    counts: &mut LocalCounts,
    chunks: &async_channel::Sender<EncodedBatch>,
) -> bool {
    deliver_tagged(buf, frames, src, ctx, chunk, counts, chunks, None).await
}

/// [`deliver`], tagging the partial frames among `frames` with `partial_tag`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn deliver_tagged(
    buf: &[u8],
    frames: &[Frame],
    src: &SourceMeta<'_>,
    ctx: &TcpContext,
    chunk: &mut BatchBuilder,
    counts: &mut LocalCounts,
    chunks: &async_channel::Sender<EncodedBatch>,
    partial_tag: Option<&str>,
) -> bool {
    let permit = ctx.window.acquire(frames.len() as u32, &ctx.stop).await;
    let mut running = permit.is_some();
    if let Some(mut c) = encode_chunk(buf, frames, src, ctx, chunk, counts, partial_tag) {
        if let Some(p) = permit {
            c.hold(HoldKind::Events, p);
        }
        match ctx.memory.acquire_stream(c.body().len(), &ctx.stop).await {
            Some(m) => c.hold(HoldKind::Bytes, m),
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
    partial_tag: Option<&str>,
) -> Option<EncodedBatch> {
    let at = RecvTime::now();
    let processor = ctx.processor.load();
    for f in frames {
        if f.truncated {
            counts.truncated += 1;
        }
        // The chunk builder has no limits, so it never completes a batch on its own.
        let _ = match partial_tag.filter(|_| f.partial) {
            _ if ctx.no_parse => processor.process_no_parse(f.bytes(buf), src, at, chunk, counts),
            Some(tag) => processor.process_tagged(f.bytes(buf), src, at, chunk, counts, tag),
            None => processor.process(f.bytes(buf), src, at, chunk, counts),
        };
    }
    chunk.take()
}
