//! The input window: a bound on events received and not yet safe.
//!
//! SC4S's `log-iw-size` is counted in messages, so this is too. It is a semaphore whose
//! permits travel with the events: a receiver acquires permits when it reads (UDP: one
//! acquisition per `recvmmsg`, for the datagrams it returned; TCP: one per read, for the
//! frames found), moves exactly its batch's share into the batch as its event hold
//! ([`sluice_proto::batch::HoldKind::Events`]), and the batch goes to its destination inside
//! a [`sluice_proto::delivery::Delivery`].
//!
//! Permits come back by one rule, explicitly: when the events are *safe*. That is the
//! delivery's completion — `Delivered`, or `Rejected` (refused for good, counted as dropped)
//! — or, earlier, a buffer persisting the events (`Delivery::persisted`). A completion that
//! leaves events unsafe (`Abandoned` at the drain timeout, `Retry` with no buffer) releases
//! them too, but counts them as lost; a delivery dropped without any completion is a bug
//! that is counted and logged the same way. Nothing else returns permits, so
//! [`Window::in_use`] is exactly the events received and not yet safe or given up.
//!
//! Acquisition — of window permits, and of the memory budget below — is the only place a
//! receiver waits; waiting means not reading, which for TCP is backpressure on the sender and
//! for UDP lets the (large) kernel buffer absorb the pause.
//! At shutdown the wait ends (`None`): what a receiver already read is delivered beyond the
//! window rather than lost.

use std::sync::Arc;
use std::time::Instant;

use tokio::runtime::Handle;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio_util::sync::CancellationToken;

use crate::telemetry::InternalEvent;
use crate::telemetry::events::{WindowEvents, WindowFull, WindowWaitEnded};
use crate::telemetry::state::Occupancy;

/// Permits for some number of in-flight events. Dropping it returns them to the window; a
/// receiver does that only through a delivery's completion (see the module docs).
pub type Permit = OwnedSemaphorePermit;

#[derive(Debug)]
pub struct Window {
    name: &'static str,
    capacity: u32,
    /// Whether a full window holds its senders back without loss (a stream: the kernel's
    /// flow control stops the sender) rather than making the kernel drop (datagrams).
    pushes_back: bool,
    sem: Arc<Semaphore>,
    /// Full windows and the time spent waiting, counted by [`WindowFull`] and
    /// [`WindowWaitEnded`].
    events: WindowEvents,
}

impl Window {
    /// The window of inputs that cannot push back (UDP): when it is full the kernel drops.
    /// `capacity` is clamped to what a semaphore can hold (far above any sane window).
    pub fn new(name: &'static str, capacity: u64) -> Arc<Window> {
        Self::with(name, capacity, false)
    }

    /// The window of stream inputs (TCP, TLS): when it is full the receivers stop reading
    /// and TCP's flow control holds the senders back; nothing is lost.
    pub fn pushing_back(name: &'static str, capacity: u64) -> Arc<Window> {
        Self::with(name, capacity, true)
    }

    fn with(name: &'static str, capacity: u64, pushes_back: bool) -> Arc<Window> {
        let capacity =
            capacity.clamp(1, u64::from(u32::MAX).min(Semaphore::MAX_PERMITS as u64)) as u32;
        Arc::new(Window {
            name,
            capacity,
            pushes_back,
            sem: Arc::new(Semaphore::new(capacity as usize)),
            events: WindowEvents::register(crate::telemetry::metrics(), name),
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn pushes_back(&self) -> bool {
        self.pushes_back
    }

    /// Events currently received and not yet safe (or given up).
    pub fn in_use(&self) -> u64 {
        u64::from(self.capacity) - self.sem.available_permits() as u64
    }

    pub fn full_count(&self) -> u64 {
        self.events.full_count()
    }

    pub fn waited(&self) -> std::time::Duration {
        self.events.waited()
    }

    /// Waits for `n` permits (clamped to the capacity, so a request can always be met).
    /// `None` when `cancel` fires first: the caller is shutting down.
    pub async fn acquire(&self, n: u32, cancel: &CancellationToken) -> Option<Permit> {
        let n = n.clamp(1, self.capacity);
        match self.sem.clone().try_acquire_many_owned(n) {
            Ok(p) => return Some(p),
            Err(TryAcquireError::Closed) => return None,
            Err(TryAcquireError::NoPermits) => {}
        }
        WindowFull { wanted: n }.emit(&self.events);
        let start = Instant::now();
        let got = tokio::select! {
            p = self.sem.clone().acquire_many_owned(n) => p.ok(),
            () = cancel.cancelled() => None,
        };
        WindowWaitEnded {
            waited: start.elapsed(),
        }
        .emit(&self.events);
        got
    }

    /// The same, for the plain OS threads that run the UDP receive loops.
    pub fn acquire_blocking(
        &self,
        n: u32,
        rt: &Handle,
        cancel: &CancellationToken,
    ) -> Option<Permit> {
        let n = n.clamp(1, self.capacity);
        match self.sem.clone().try_acquire_many_owned(n) {
            Ok(p) => Some(p),
            Err(TryAcquireError::Closed) => None,
            Err(TryAcquireError::NoPermits) => rt.block_on(self.acquire(n, cancel)),
        }
    }
}

impl Occupancy for Window {
    fn name(&self) -> &str {
        self.name
    }

    fn in_use(&self) -> u64 {
        Window::in_use(self)
    }

    fn capacity(&self) -> u64 {
        u64::from(Window::capacity(self))
    }
}

impl Occupancy for MemoryBudget {
    fn name(&self) -> &str {
        "memory"
    }

    fn in_use(&self) -> u64 {
        self.in_use_bytes()
    }

    fn capacity(&self) -> u64 {
        self.capacity_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn permits_bound_in_flight_events_and_return_on_drop() {
        let w = Window::new("test", 10);
        let cancel = CancellationToken::new();
        let mut a = w.acquire(6, &cancel).await.unwrap();
        assert_eq!(w.in_use(), 6);
        // Split the permits the way a receiver hands part of them to a finished batch.
        let batch = a.split(4).unwrap();
        assert_eq!((a.num_permits(), batch.num_permits()), (2, 4));
        drop(batch);
        assert_eq!(w.in_use(), 2);
        drop(a);
        assert_eq!(w.in_use(), 0);
    }

    #[tokio::test]
    async fn a_full_window_blocks_until_delivery_and_counts_the_wait() {
        let w = Window::new("test_full", 4);
        let cancel = CancellationToken::new();
        let held = w.acquire(4, &cancel).await.unwrap();
        let w2 = w.clone();
        let c2 = cancel.clone();
        let waiter = tokio::spawn(async move { w2.acquire(2, &c2).await.map(|p| p.num_permits()) });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiter.is_finished(),
            "acquire must wait while the window is full"
        );
        drop(held);
        assert_eq!(waiter.await.unwrap(), Some(2));
        assert_eq!(w.full_count(), 1);
    }

    #[tokio::test]
    async fn cancellation_releases_a_waiting_receiver() {
        let w = Window::new("test_cancel", 1);
        let cancel = CancellationToken::new();
        let _held = w.acquire(1, &cancel).await.unwrap();
        let (w2, c2) = (w.clone(), cancel.clone());
        let waiter = tokio::spawn(async move { w2.acquire(1, &c2).await.is_none() });
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
        assert!(waiter.await.unwrap());
    }

    #[test]
    fn oversized_requests_are_clamped_and_blocking_acquire_works_off_runtime() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let w = Window::new("test_clamp", 3);
        let cancel = CancellationToken::new();
        let p = w.acquire_blocking(1000, rt.handle(), &cancel).unwrap();
        assert_eq!(p.num_permits(), 3);
        let w2 = w.clone();
        let h = rt.handle().clone();
        let c2 = cancel.clone();
        let t =
            std::thread::spawn(move || w2.acquire_blocking(1, &h, &c2).map(|p| p.num_permits()));
        std::thread::sleep(Duration::from_millis(50));
        drop(p);
        assert_eq!(t.join().unwrap(), Some(1));
    }
}

/// A bound on the bytes of encoded events held in memory, across every listener.
///
/// The event windows copy SC4S's sizes, and SC4S's TCP window is 20,000,000 messages: with
/// Splunk down that is ~20 GB of events before any backpressure, and an out-of-memory kill
/// would lose all of them. This budget stops that earlier and the same way a full window
/// does: a receiver waits (stops reading) before handing over a batch that does not fit. It is
/// charged once per batch or TCP chunk, on its encoded size, and released when the batch
/// leaves memory: its delivery's completion (`HoldKind::Bytes`; persisting the events does
/// not release it, the body is still held). Counted in KiB so one `u32` semaphore covers
/// budgets up to 4 TiB.
///
/// Stream receivers (TCP, TLS) may hold only [`STREAM_SHARE`] of it: past that they stop
/// reading, which TCP turns into backpressure on the sender at no loss. The rest stays for
/// datagrams, which cannot wait, and it is their filling it that makes a buffered destination
/// spill (`output::buffered`): a TCP load faster than the output is held back, not written to
/// disk and read back with the CPU the output needs.
#[derive(Debug)]
pub struct MemoryBudget {
    kib: Arc<Window>,
    streams: Arc<Window>,
}

/// The share of the memory budget stream receivers may hold; below the disk buffer's default
/// high-water mark (0.5), so streams alone never make it spill.
pub const STREAM_SHARE: f64 = 0.4;

impl MemoryBudget {
    pub fn new(bytes: u64) -> Arc<MemoryBudget> {
        let kib = bytes.div_ceil(1024);
        Arc::new(MemoryBudget {
            kib: Window::new("memory", kib),
            streams: Window::pushing_back("memory_streams", (kib as f64 * STREAM_SHARE) as u64),
        })
    }

    /// Charges `len` bytes of a stream receiver's chunk against both the streams' share and
    /// the whole budget; `None` when `cancel` fired while waiting.
    pub async fn acquire_stream(
        &self,
        len: usize,
        cancel: &CancellationToken,
    ) -> Option<(Permit, Permit)> {
        let share = self.streams.acquire(Self::kib(len), cancel).await?;
        let whole = self.kib.acquire(Self::kib(len), cancel).await?;
        Some((share, whole))
    }

    fn kib(len: usize) -> u32 {
        u32::try_from(len.div_ceil(1024)).unwrap_or(u32::MAX).max(1)
    }

    /// Charges `len` bytes; `None` when `cancel` fired while waiting.
    pub async fn acquire(&self, len: usize, cancel: &CancellationToken) -> Option<Permit> {
        self.kib.acquire(Self::kib(len), cancel).await
    }

    pub fn acquire_blocking(
        &self,
        len: usize,
        rt: &Handle,
        cancel: &CancellationToken,
    ) -> Option<Permit> {
        self.kib.acquire_blocking(Self::kib(len), rt, cancel)
    }

    pub fn in_use_bytes(&self) -> u64 {
        self.kib.in_use() * 1024
    }

    pub fn capacity_bytes(&self) -> u64 {
        u64::from(self.kib.capacity()) * 1024
    }

    /// Times a receiver had to wait for memory.
    pub fn full_count(&self) -> u64 {
        self.kib.full_count()
    }

    /// Time receivers spent waiting for memory, counted when each wait ends.
    pub fn waited(&self) -> std::time::Duration {
        self.kib.waited()
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[tokio::test]
    async fn the_budget_is_charged_in_kib_and_blocks_when_spent() {
        let m = MemoryBudget::new(10 * 1024);
        let cancel = CancellationToken::new();
        let a = m.acquire(4096, &cancel).await.unwrap();
        let b = m.acquire(1, &cancel).await.unwrap();
        assert_eq!(m.in_use_bytes(), 5 * 1024);
        let big = m.acquire(6 * 1024, &cancel);
        tokio::pin!(big);
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(50), &mut big)
                .await
                .is_err(),
            "6 KiB does not fit in the 5 KiB left"
        );
        drop((a, b));
        assert!(big.await.is_some());
        assert_eq!(m.full_count(), 1);
        // A batch larger than the whole budget still gets through (clamped), alone.
        let huge = m.acquire(1 << 30, &cancel).await.unwrap();
        assert_eq!(m.in_use_bytes(), m.capacity_bytes());
        drop(huge);
    }
}
