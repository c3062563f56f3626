//! PARALLELIZE (`SC4S_ENABLE_PARALLELIZE=yes`, `SC4S_PARALLELIZE_NO_PARTITION=N`): the
//! parse → classify → encode work of a stream port spread over N worker tasks, so one busy
//! connection (a firewall sending everything over one TCP session) is not capped at one
//! core.
//!
//! The connection task still reads and frames (a `memchr` per frame, cheap); each read's
//! complete frames go, with the bytes that hold them, to a bounded queue that the workers
//! share, and the first free worker takes them. Work is handed over per read, never per
//! message. A worker acquires the window permits and the memory budget for its job, exactly
//! as the connection task does when the pool is off; when the workers wait, the queue fills
//! and the connection stops reading, so backpressure still reaches the sender. Jobs of one
//! connection may complete out of order: events of one connection can reach Splunk out of
//! order, as with SC4S's `parallelize()` (and this is why it is off by default).

use std::net::IpAddr;
use std::sync::Arc;

use bytes::Bytes;
use sluice_proto::batch::{BatchBuilder, BatchPolicy, EncodedBatch};
use sluice_proto::classify::SourceMeta;
use sluice_proto::framing::Frame;
use tokio_util::sync::CancellationToken;

use crate::listen::stream::context::TcpContext;
use crate::pipeline::LocalCounts;

/// One read's complete frames.
struct Job {
    data: Bytes,
    frames: Vec<Frame>,
    source_ip: IpAddr,
}

/// How connections hand jobs to the pool.
#[derive(Clone, Debug)]
pub struct JobSender(async_channel::Sender<Job>);

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("bytes", &self.data.len())
            .field("frames", &self.frames.len())
            .finish()
    }
}

impl JobSender {
    /// Queues a read's frames, waiting while every worker is busy and the queue is full.
    /// Returns `false` when the daemon is stopping, so the connection stops reading; what it
    /// queued is still delivered by the workers.
    pub async fn submit(
        &self,
        data: Bytes,
        frames: Vec<Frame>,
        source_ip: IpAddr,
        stop: &CancellationToken,
    ) -> bool {
        let job = Job {
            data,
            frames,
            source_ip,
        };
        // The workers outlive every connection of the port (see `Workers::finish`), so a
        // send can only fail if every worker panicked: never expected, and logged loudly.
        if let Err(e) = self.0.send(job).await {
            tracing::error!(
                frames = e.0.frames.len(),
                "the parallelize workers are gone; frames could not be processed (this is a bug)"
            );
            return false;
        }
        !stop.is_cancelled()
    }
}

/// The worker pool of one port.
#[derive(Debug)]
pub struct Workers {
    tx: async_channel::Sender<Job>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Workers {
    /// Starts `ctx.parallelize` workers, or none when it is 0.
    pub fn start(
        ctx: &Arc<TcpContext>,
        dest_port: u16,
        chunks: &async_channel::Sender<EncodedBatch>,
    ) -> Option<Workers> {
        let n = ctx.parallelize;
        if n == 0 {
            return None;
        }
        // Two jobs per worker keep every worker busy while the reader frames the next read,
        // and bound what waits in memory to 2 × N reads.
        let (tx, rx) = async_channel::bounded::<Job>(2 * n);
        let tasks = (0..n)
            .map(|_| tokio::spawn(work(rx.clone(), ctx.clone(), dest_port, chunks.clone())))
            .collect();
        Some(Workers { tx, tasks })
    }

    pub fn sender(&self) -> JobSender {
        JobSender(self.tx.clone())
    }

    /// Waits until every queued job is processed; call after the last connection ended.
    pub async fn finish(self) {
        drop(self.tx);
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

async fn work(
    rx: async_channel::Receiver<Job>,
    ctx: Arc<TcpContext>,
    dest_port: u16,
    chunks: async_channel::Sender<EncodedBatch>,
) {
    let mut chunk = BatchBuilder::new(BatchPolicy {
        max_events: usize::MAX,
        max_bytes: usize::MAX,
        timeout: std::time::Duration::from_secs(3600),
    });
    let mut counts = LocalCounts::default();
    while let Ok(job) = rx.recv().await {
        let src = SourceMeta {
            transport: ctx.transport,
            dest_port,
            source_ip: job.source_ip,
            listener_id: &ctx.listener_id,
        };
        // After a stop the frames are still delivered (without permits), like the
        // connection task does with what it already read.
        crate::listen::stream::context::deliver(
            &job.data,
            &job.frames,
            &src,
            &ctx,
            &mut chunk,
            &mut counts,
            &chunks,
        )
        .await;
    }
}
