//! Where encoded batches go, and what comes back.
//!
//! An [`Output`] (Splunk HEC, or the JSON-lines file when no HEC URL is configured) takes
//! [`Delivery`]s from its destination's queue and completes each exactly once with a
//! [`Completion`](sluice_proto::delivery::Completion) (see [`sluice_proto::delivery`]). The
//! pipeline talks to this trait and to [`Destination`], never to an output's own types.
//!
//! A [`Destination`] is one named place events go to: its queue, its output and its
//! completion sink ([`DestinationStats`]), which counts every completion by kind, logs
//! losses, and is where the disk buffer will acknowledge. Receivers hand batches to it with a
//! [`Submit`] handle. Today there is one destination (`default`); with several, each has its
//! own batches (a message routed to two is encoded into both) and its own completions.
//!
//! The queue is unbounded on purpose: the input windows and the memory budget already bound
//! what can be in it, and a receive thread must never wait on the queue itself (only on the
//! window, which it acquires before reading).

use std::future::Future;
use std::pin::Pin;

use sluice_proto::delivery::Delivery;
use tokio_util::sync::CancellationToken;

pub mod archive;
pub mod buffered;
mod destination;
mod encoding;
pub mod file;
pub mod hec;
pub mod kafka;
pub mod relay;
mod set;
mod start;
mod stats;

pub use buffered::{BufferMetrics, BufferOptions};
pub use destination::{Destination, Submit};
pub use encoding::{Encoding, Encodings};
pub use file::{FileOpenError, FileOutput, FileStats};
pub use set::{Aligned, DestinationSet, retire_grace};
pub use start::Limits;
pub use stats::{DestinationStats, DrainSummary, Rescue};

/// What [`Output::run`] returns: a future the destination spawns.
pub type OutputTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A destination's delivery engine.
pub trait Output: Send + 'static {
    /// The `output` label of its metrics: `hec`, `file`.
    fn kind(&self) -> &'static str;

    /// Delivers from `queue` until it is closed and empty, or until `abort` is cancelled
    /// (the drain timeout). Every delivery taken is completed exactly once; after an abort,
    /// what the output still holds completes as `Abandoned { reason: Shutdown }`. What is left
    /// in the queue when the task ends is the destination's to complete.
    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask;
}

/// The task of an output that writes with blocking calls (files): `run` on the blocking pool.
/// A panic there is logged; the delivery it held completed itself as uncompleted (counted
/// and logged where the completion arrives).
pub(crate) fn blocking_task(kind: &'static str, run: impl FnOnce() + Send + 'static) -> OutputTask {
    Box::pin(async move {
        if let Err(e) = tokio::task::spawn_blocking(run).await {
            tracing::error!(output = kind, error = %e, "the output failed");
        }
    })
}

/// Until an open batch's deadline ([`sluice_proto::batch::BatchBuilder::deadline`]);
/// forever when nothing is open. For the tasks that merge batches: a destination's batcher,
/// a stream port's combiner.
pub(crate) async fn sleep_until_opt(deadline: Option<std::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
        None => std::future::pending::<()>().await,
    }
}
