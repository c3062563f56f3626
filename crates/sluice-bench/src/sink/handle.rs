//! The handle a test or tool holds on a running sink.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::net::SocketAddr;
use tokio::sync::watch;

use super::{Faults, Shared, SinkConfig, SinkError, SinkStats, accept_loop, bind, lock, prepare};
use crate::seq::SeqReport;

/// A running sink. Dropping it stops the server (and joins its thread, if it has one).
#[derive(Debug)]
pub struct SinkHandle {
    pub(super) addr: SocketAddr,
    pub(super) shared: Arc<Shared>,
    pub(super) shutdown: watch::Sender<bool>,
    pub(super) thread: Option<JoinHandle<()>>,
}

impl SinkHandle {
    /// Starts the sink on its own thread with its own runtime; usable from sync tests.
    pub fn spawn_thread(cfg: SinkConfig) -> Result<SinkHandle, SinkError> {
        let std_listener = bind(cfg.addr)?;
        let addr = std_listener
            .local_addr()
            .map_err(|source| SinkError::Bind {
                addr: cfg.addr,
                source,
            })?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cfg.threads.max(1))
            .thread_name("hec-sink")
            .enable_all()
            .build()
            .map_err(SinkError::Runtime)?;
        let (shared, shutdown_tx, shutdown_rx) = prepare(&cfg);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("hec-sink".into())
            .spawn(move || {
                rt.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(std_listener) {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    accept_loop(listener, thread_shared, shutdown_rx).await;
                });
            })
            .map_err(|_| SinkError::Thread)?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(source)) => {
                return Err(SinkError::Bind {
                    addr: cfg.addr,
                    source,
                });
            }
            Err(_) => return Err(SinkError::Thread),
        }
        Ok(SinkHandle {
            addr,
            shared,
            shutdown: shutdown_tx,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>` (what an SC4S URL setting would hold); `https` when the
    /// sink serves TLS.
    pub fn base_url(&self) -> String {
        let scheme = if self.shared.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// `<base_url>/services/collector/event`.
    pub fn event_url(&self) -> String {
        format!("{}/services/collector/event", self.base_url())
    }

    pub fn token(&self) -> &str {
        &self.shared.token
    }

    pub fn set_faults(&self, faults: Faults) {
        *lock(&self.shared.faults) = faults;
    }

    pub fn update_faults(&self, f: impl FnOnce(&mut Faults)) {
        f(&mut lock(&self.shared.faults));
    }

    pub fn faults(&self) -> Faults {
        lock(&self.shared.faults).clone()
    }

    pub fn stats(&self) -> SinkStats {
        self.shared.stats()
    }

    pub fn accepted_events(&self) -> u64 {
        self.shared.counters.accepted_events.load(Relaxed)
    }

    /// Accepted events in arrival order (only with [`SinkConfig::record`]).
    pub fn events(&self) -> Vec<serde_json::Value> {
        lock(&self.shared.recorded).clone()
    }

    /// Headers (lower-case names, in order) of the last collector request (only with
    /// [`SinkConfig::record`]).
    pub fn last_headers(&self) -> Vec<(String, String)> {
        lock(&self.shared.last_headers).clone()
    }

    pub fn seq_report(&self, expected_per_thread: Option<u64>) -> SeqReport {
        lock(&self.shared.seq).report(expected_per_thread)
    }

    /// Blocks until at least `n` events were accepted or `timeout` passed; do not call it
    /// from the runtime the sink or its client runs on (use [`wait_for_async`]).
    ///
    /// [`wait_for_async`]: Self::wait_for_async
    pub fn wait_for(&self, n: u64, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if self.accepted_events() >= n {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    pub async fn wait_for_async(&self, n: u64, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if self.accepted_events() >= n {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Stops accepting, closes every connection, and joins the sink thread if there is one.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shutdown.send_replace(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for SinkHandle {
    fn drop(&mut self) {
        self.stop();
    }
}
