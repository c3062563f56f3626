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
//! limit) the thread sleeps before reading again and lets the kernel buffer collect the next
//! batch; a full batch (a thread that is behind) never sleeps.
//!
//! The pause is [`COALESCE`], 4 ms. At 50k datagrams/s on one socket a 1 ms pause still
//! meant ~350 sleeps a second, and in this VM each context switch is dear: on nix:syslog
//! traffic `finish_task_switch` was the largest symbol of the receiver (8 %). At 4 ms the
//! receiver used 11 % less CPU per event on nix:syslog and on the vendor mix (BENCHMARKS
//! §9d); bigger batches also keep the parsers' code and tables in cache. 10 ms gained
//! nothing more. The pause is safe for loss by construction ([`coalesce_pause`]): it is
//! cut so that even at [`PEAK_RATE`] on one socket it fills at most half of that socket's
//! receive buffer, so a small `SC4S_SOURCE_UDP_SO_RCVBUFF` gets a shorter pause (shorter
//! than the old 1 ms below about 3 MiB). The price is at most 4 ms of latency, against a
//! 300 ms batch timeout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sluice_net::{DropProbe, PortClaimConfig, UdpGroup, UdpGroupConfig, UdpReceiver};
use sluice_proto::classify::{SourceMeta, Transport};
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use super::skew::{Skew, SkewWatch};
use crate::config::{Balance, Config, ListenerSpec, SourceProto};
use crate::output::Submit;
use crate::pipeline::{Emitter, LocalCounts, ReceiverCounters, RecvTime, SharedProcessor};
use crate::telemetry::state::UdpPortMetrics;
use crate::window::{MemoryBudget, Window};

/// The sockets of a UDP port: what cannot change without closing them.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpSockets {
    pub addr: SocketAddr,
    pub sockets: usize,
    pub balance: Balance,
    /// Requested receive buffer per socket; 0 = the kernel default.
    pub rcvbuf: u64,
    /// Receive slots per `recvmmsg` (`udp.fetch_limit`).
    pub batch: usize,
    pub max_datagram: usize,
}

impl UdpSockets {
    /// The settings that differ from `other`, named as the operator sets them.
    fn differences(&self, other: &UdpSockets) -> Vec<String> {
        let mut d = Vec::new();
        let mut diff = |what: &str, a: String, b: String| {
            if a != b {
                d.push(format!("{what} {a} → {b}"));
            }
        };
        diff(
            "address",
            self.addr.ip().to_string(),
            other.addr.ip().to_string(),
        );
        diff(
            "sockets (SC4S_SOURCE_LISTEN_{UDP,RFC5426}_SOCKETS)",
            self.sockets.to_string(),
            other.sockets.to_string(),
        );
        diff(
            "balance (SC4S_ENABLE_EBPF, SLUICE_UDP_BALANCE)",
            format!("{:?}", self.balance).to_lowercase(),
            format!("{:?}", other.balance).to_lowercase(),
        );
        diff(
            "receive buffer (SC4S_SOURCE_*_SO_RCVBUFF)",
            self.rcvbuf.to_string(),
            other.rcvbuf.to_string(),
        );
        diff(
            "fetch limit (SC4S_SOURCE_UDP_FETCH_LIMIT)",
            self.batch.to_string(),
            other.batch.to_string(),
        );
        diff(
            "largest datagram (listen.max_message_size)",
            self.max_datagram.to_string(),
            other.max_datagram.to_string(),
        );
        d
    }
}

/// A UDP port.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpPlan {
    pub spec: ListenerSpec,
    pub sockets: UdpSockets,
}

impl UdpPlan {
    /// The port `spec` asks for, with `config`'s socket settings.
    pub fn new(spec: ListenerSpec, config: &Config) -> UdpPlan {
        let rfc5426 = spec.proto == SourceProto::Rfc5426;
        let rcvbuf = if rfc5426 {
            config.udp.rfc5426_rcvbuf
        } else {
            config.udp.rcvbuf
        };
        let sockets = UdpSockets {
            addr: SocketAddr::new(config.listen.address, spec.port),
            sockets: if rfc5426 {
                config.udp.rfc5426_sockets
            } else {
                config.udp.sockets
            },
            balance: config.udp.balance,
            rcvbuf: rcvbuf.0,
            batch: config.udp.fetch_limit.clamp(1, sluice_net::MAX_BATCH),
            max_datagram: config
                .listen
                .max_message_size
                .min(sluice_net::DEFAULT_MAX_DATAGRAM),
        };
        UdpPlan { spec, sockets }
    }

    /// A port that stays open keeps its sockets, always: new socket settings would need new
    /// sockets, which would drop what the kernel holds. `next` takes this port's running
    /// socket settings; the difference is returned in words, as needing a restart.
    pub fn keep_sockets(&self, next: &mut UdpPlan) -> Option<String> {
        if self.sockets == next.sockets {
            return None;
        }
        let note = format!(
            "UDP port {}: {} (its sockets stay open as they are)",
            self.spec.port,
            self.sockets.differences(&next.sockets).join(", ")
        );
        next.sockets = self.sockets.clone();
        Some(note)
    }
}

fn to_net_balance(b: Balance) -> sluice_net::Balance {
    match b {
        Balance::Ebpf => sluice_net::Balance::Ebpf,
        Balance::Cbpf => sluice_net::Balance::Cbpf,
        Balance::Kernel => sluice_net::Balance::Kernel,
    }
}

/// Claims `plan`'s port and binds its reuseport group with the balancing program attached.
/// What the kernel granted differently from the request (balancing, receive buffer) is
/// logged; a port conflict is an error naming the setting to change.
pub fn bind(plan: &UdpPlan, claim: &PortClaimConfig) -> anyhow::Result<UdpGroup> {
    let s = &plan.sockets;
    let mut g = UdpGroupConfig::new(s.addr);
    g.sockets = s.sockets;
    g.balance = to_net_balance(s.balance);
    g.rcvbuf = (s.rcvbuf > 0).then_some(s.rcvbuf as usize);
    g.batch = s.batch;
    g.max_datagram = s.max_datagram;
    g.claim = claim.clone();
    let port = s.addr.port();
    let group = UdpGroup::bind(&g)
        .map_err(|e| super::listen_error("UDP", s.addr, &plan.spec.setting, &e))?;
    super::log_sharing("UDP", s.addr, group.shared_with());
    if let Some(reason) = group.fallback_reason() {
        tracing::warn!(
            port,
            requested = %g.balance,
            using = %group.balance_mode(),
            "UDP balancing fell back: {reason}"
        );
    }
    for r in group.rcvbuf_reports() {
        if let Some(hint) = r.sysctl_hint() {
            tracing::warn!(port, "UDP receive buffer smaller than requested: {hint}");
            break;
        }
    }
    Ok(group)
}

/// A bound UDP port: the reuseport group (kept alive for its eBPF program) and the threads
/// draining it. The sockets live as long as this value: [`restart`](Self::restart) replaces
/// the threads around the same sockets, so a reload that only changes what the port's events
/// look like never closes them.
#[derive(Debug)]
pub struct UdpPort {
    pub local_addr: SocketAddr,
    pub group: UdpGroup,
    /// One per socket, index = socket index.
    pub counters: Vec<Arc<ReceiverCounters>>,
    /// Each thread hands its socket back when it ends.
    threads: Vec<std::thread::JoinHandle<UdpReceiver>>,
    /// Receivers between two generations of threads (and after [`stop`](Self::stop)).
    idle: Vec<UdpReceiver>,
    /// This port's own stop token (the threads', cancelled to stop or restart them).
    stop: CancellationToken,
    /// Read what the kernel still holds before the threads end (set when the port closes).
    drain: Arc<AtomicBool>,
    /// Stops the kernel-drop watch ([`watch_kernel_drops`]) when the port goes away.
    drop_watch: CancellationToken,
}

/// What every receive thread of a port shares.
#[derive(Clone, Debug)]
pub struct UdpContext {
    pub memory: Arc<MemoryBudget>,
    /// SC4S listener id (`DEFAULT`, or a vendor id such as `CISCO_ASA`).
    pub listener_id: Arc<str>,
    /// Loaded once per `recvmmsg` batch, so a reload takes effect between batches.
    pub processor: SharedProcessor,
    pub window: Arc<Window>,
    pub fetch_limit: usize,
    pub rt: Handle,
    /// The port's own token: a child of the daemon's, so shutdown stops it too.
    pub stop: CancellationToken,
}

impl UdpPort {
    /// Starts one receive thread per socket of `group`, each with its own counters.
    pub fn start(mut group: UdpGroup, ctx: UdpContext, out: &Submit) -> std::io::Result<UdpPort> {
        let local_addr = group.local_addr();
        let idle = group.take_receivers();
        let mut probes = Vec::with_capacity(idle.len());
        for rx in &idle {
            match rx.drop_probe() {
                Ok(p) => probes.push(p),
                Err(e) => tracing::warn!(
                    port = local_addr.port(),
                    socket = rx.index(),
                    error = %e,
                    "cannot watch this socket's kernel drops while its window is full"
                ),
            }
        }
        let drop_watch = CancellationToken::new();
        // Only the kernel's hash sends one sender to one socket; eBPF and cBPF spread it.
        let watch = if group.balance_mode() == sluice_net::Balance::Kernel {
            SkewWatch::new(probes.len())
        } else {
            None
        };
        let skew = watch.map(|watch| PortSkew {
            port: local_addr.port(),
            watch,
            window: ctx.window.clone(),
            memory: ctx.memory.clone(),
        });
        watch_kernel_drops(
            &ctx.rt,
            probes,
            skew,
            DROP_WATCH_INTERVAL,
            drop_watch.clone(),
        );
        let mut port = UdpPort {
            local_addr,
            group,
            counters: Vec::new(),
            threads: Vec::new(),
            idle,
            stop: ctx.stop.clone(),
            drain: Arc::new(AtomicBool::new(false)),
            drop_watch,
        };
        port.spawn(ctx, out)?;
        Ok(port)
    }

    fn spawn(&mut self, ctx: UdpContext, out: &Submit) -> std::io::Result<()> {
        self.stop = ctx.stop.clone();
        self.drain = Arc::new(AtomicBool::new(false));
        let port = self.local_addr.port();
        // Counted under the listener id in force: a reload that renames the listener
        // restarts the threads through here.
        self.counters = (0..self.idle.len())
            .map(|i| {
                ReceiverCounters::register(
                    crate::telemetry::metrics(),
                    &ctx.listener_id,
                    "udp",
                    port,
                    Some(i),
                )
            })
            .collect();
        for rx in std::mem::take(&mut self.idle) {
            let emitter = Emitter::new(
                out.clone(),
                self.counters[rx.index()].clone(),
                ctx.memory.clone(),
                ctx.rt.clone(),
                ctx.stop.clone(),
            );
            let name = format!("udp-{port}-{}", rx.index());
            let ctx = ctx.clone();
            let drain = self.drain.clone();
            // A failed spawn drops the closure and with it the receiver: its socket closes.
            // That needs the thread limit to be exhausted; the caller reports it.
            self.threads.push(
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || receive_loop(rx, port, ctx, emitter, &drain))?,
            );
        }
        Ok(())
    }

    /// The port as `/metrics` shows it, its events labelled with `listener`.
    pub fn metrics(&self, listener: &str, requested: Balance) -> UdpPortMetrics {
        UdpPortMetrics {
            listener: listener.to_owned(),
            port: self.local_addr.port(),
            requested_balance: to_net_balance(requested).as_str(),
            balance: self.group.balance_mode().as_str(),
            fallback_reason: self.group.fallback_reason().map(str::to_owned),
            sockets: self.group.stats().to_vec(),
            counters: self.counters.clone(),
            rcvbuf: self.group.rcvbuf_reports().to_vec(),
        }
    }

    /// Stops the threads and starts new ones with `ctx` around the same sockets. Datagrams
    /// that arrive in between wait in the socket buffers.
    pub fn restart(&mut self, ctx: UdpContext, out: &Submit) -> std::io::Result<()> {
        self.stop();
        self.spawn(ctx, out)
    }

    /// Stops the threads (their open batches are flushed) and waits for them; the sockets
    /// stay open until the port is dropped.
    pub fn stop(&mut self) {
        self.stop.cancel();
        for t in self.threads.drain(..) {
            match t.join() {
                Ok(rx) => self.idle.push(rx),
                Err(_) => tracing::error!(
                    port = self.local_addr.port(),
                    "a UDP receive thread panicked"
                ),
            }
        }
        self.idle.sort_by_key(UdpReceiver::index);
    }

    /// Closes the port for good: the threads first read what the kernel still holds for it
    /// (bounded by [`DRAIN_LIMIT`]), then the sockets close.
    pub fn close(mut self) {
        self.drain.store(true, Ordering::Relaxed);
        self.stop();
    }
}

impl Drop for UdpPort {
    fn drop(&mut self) {
        // The probes hold duplicates of the sockets' descriptors: they must go with the port.
        self.drop_watch.cancel();
    }
}

/// How long a closing port keeps reading what is queued in its sockets.
pub const DRAIN_LIMIT: Duration = Duration::from_millis(500);

/// How often [`watch_kernel_drops`] reads the counters.
pub const DROP_WATCH_INTERVAL: Duration = Duration::from_secs(1);

/// A port balanced by the kernel's hash, watched for one sender overrunning one socket
/// ([`SkewWatch`]), with what can hold its receivers back.
pub struct PortSkew {
    port: u16,
    watch: SkewWatch,
    window: Arc<Window>,
    memory: Arc<MemoryBudget>,
}

impl PortSkew {
    /// Counts that move whenever the receivers were held back: a wait that began, or one that
    /// ended (a long wait can span the whole interval before it, with no new full event).
    fn holds(&self) -> (u64, std::time::Duration) {
        (
            self.window.full_count() + self.memory.full_count(),
            self.window.waited() + self.memory.waited(),
        )
    }

    /// Whether the receivers were held back since the previous reading `before`, or are now.
    fn held_since(&self, before: &mut (u64, std::time::Duration)) -> bool {
        let now = self.holds();
        let moved = std::mem::replace(before, now) != now;
        moved || self.window.in_use() >= u64::from(self.window.capacity())
    }
}

/// Reads every socket's kernel drop counter every `every` until `stop`, then drops the probes
/// (closing their descriptors). A receive thread updates the counter itself whenever it reads
/// — but not while it waits for window space, which is exactly when the kernel drops: without
/// this, `sluice_kernel_dropped_total` would stand still for as long as the window is full.
/// With `skew`, each reading also goes to its [`SkewWatch`], which advises balancing when
/// one socket carries the port and drops.
pub fn watch_kernel_drops(
    rt: &Handle,
    probes: Vec<DropProbe>,
    mut skew: Option<PortSkew>,
    every: Duration,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    rt.spawn(async move {
        if probes.is_empty() {
            return;
        }
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        let mut holds = skew.as_ref().map(PortSkew::holds).unwrap_or_default();
        let mut readings = Vec::with_capacity(probes.len());
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = stop.cancelled() => break,
            }
            readings.clear();
            for p in &probes {
                if let Err(e) = p.refresh()
                    && !std::mem::replace(&mut failing, true)
                {
                    tracing::warn!(socket = p.stats().index(), error = %e, "cannot read a socket's kernel drop counter");
                }
                readings.push((p.stats().received(), p.stats().kernel_drops()));
            }
            if let Some(s) = skew.as_mut() {
                let held = s.held_since(&mut holds);
                if let Some(found) = s.watch.observe(Instant::now(), &readings, held) {
                    let socket = probes[found.socket].stats().index();
                    super::skew::advise(s.port, Skew { socket, ..found });
                }
            }
        }
        // A last reading, so the counters are current when the port closes.
        for p in &probes {
            let _ = p.refresh();
        }
    })
}

/// Pause after a short batch, at most (see the module docs).
pub const COALESCE: Duration = Duration::from_millis(4);

/// The highest rate one socket is sized for: the top of the 10k–350k events/s the
/// receivers' users send, all of it on one socket (one sender with the kernel's hash).
pub const PEAK_RATE: u64 = 350_000;

/// Receive-buffer memory one queued datagram may take (its `truesize`): a syslog datagram
/// on loopback takes about 2 kB, and a NIC driver may give each its own 4 kB page fragment.
const DATAGRAM_TRUESIZE: u64 = 4096;

/// The pause after a short batch for a socket whose receive buffer limit is `rcvbuf` bytes
/// (`SO_RCVBUF` as the kernel reports it): [`COALESCE`], or less when at [`PEAK_RATE`] the
/// pause would fill more than half the buffer. Unknown: the pause of a 1 MiB buffer.
pub fn coalesce_pause(rcvbuf: Option<u32>) -> Duration {
    let bytes = rcvbuf.map_or(1 << 20, u64::from);
    let datagrams = bytes / 2 / DATAGRAM_TRUESIZE;
    COALESCE.min(Duration::from_nanos(datagrams * 1_000_000_000 / PEAK_RATE))
}

/// How often an idle receive wakes up. Partial batches must leave within the batch timeout,
/// so the tick is a fraction of it; a floor keeps idle CPU negligible.
fn tick(batch_timeout: Duration) -> Duration {
    (batch_timeout / 4).clamp(Duration::from_millis(5), Duration::from_millis(100))
}

fn receive_loop(
    mut rx: UdpReceiver,
    port: u16,
    ctx: UdpContext,
    mut emitter: Emitter,
    drain: &AtomicBool,
) -> UdpReceiver {
    let batch_timeout = ctx.processor.load().batch.timeout;
    if let Err(e) = rx.set_read_timeout(Some(tick(batch_timeout))) {
        tracing::error!(port, error = %e, "cannot set the UDP read timeout; partial batches may wait");
    }
    let fetch = ctx.fetch_limit.clamp(1, rx.batch_capacity());
    let pause = coalesce_pause(rx.meminfo().ok().map(|m| m.rcvbuf));
    let mut builder = ctx.processor.load().new_builder();
    let mut counts = LocalCounts::default();
    let mut consecutive_errors = 0u32;

    // Never ask for more datagrams than the window can ever grant at once.
    let fetch = fetch.min(ctx.window.capacity() as usize);
    let mut drain_until: Option<Instant> = None;
    loop {
        if ctx.stop.is_cancelled() && drain_until.is_none() {
            if !drain.load(Ordering::Relaxed) {
                break;
            }
            // Closing for good: whatever is queued would be lost with the socket. Read until
            // a short wait finds nothing, within DRAIN_LIMIT.
            let _ = rx.set_read_timeout(Some(Duration::from_millis(5)));
            drain_until = Some(Instant::now() + DRAIN_LIMIT);
        }
        let short_batch = match rx.recv(fetch) {
            Ok(datagrams) => {
                consecutive_errors = 0;
                let n = datagrams.len();
                if n == 0 && drain_until.is_some() {
                    break;
                }
                if n > 0 {
                    // On stop this still returns the permits (`acquire_blocking` falls back to
                    // overshooting the window rather than losing what was already read).
                    match ctx.window.acquire_blocking(n as u32, &ctx.rt, &ctx.stop) {
                        Some(permit) => emitter.hold(permit),
                        None => tracing::debug!(port, "stopping while the window was full"),
                    }
                }
                let at = RecvTime::now();
                // One load per batch: a reload's new processor applies from the next batch.
                let processor = ctx.processor.load();
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
                emitter.release(std::mem::take(&mut counts.absorbed));
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
                if drain_until.is_some() && consecutive_errors > 3 {
                    break;
                }
                continue;
            }
        };
        counts.flush_into(emitter.counters());
        if builder.deadline().is_some_and(|d| d <= Instant::now())
            && let Some(batch) = builder.take()
        {
            emitter.emit(batch);
        }
        if drain_until.is_some_and(|d| d <= Instant::now()) {
            break;
        }
        if short_batch && drain_until.is_none() {
            std::thread::sleep(pause);
        }
    }
    if let Some(batch) = builder.take() {
        emitter.emit(batch);
    }
    counts.flush_into(emitter.counters());
    // The next generation of threads (after a restart) sets its own timeout; a drained
    // socket is about to close.
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_fills_at_most_half_the_buffer_at_the_peak_rate() {
        // The default 16 MiB request, as the kernel reports it (twice): the full pause.
        assert_eq!(coalesce_pause(Some(32 << 20)), COALESCE);
        // A 1 MiB request (2 MiB reported): 256 datagrams of room, 0.73 ms at 350k/s.
        let p = coalesce_pause(Some(2 << 20));
        assert_eq!(p, Duration::from_nanos(256 * 1_000_000_000 / PEAK_RATE));
        assert!(p < Duration::from_millis(1));
        // The kernel's default buffer: a pause of tens of microseconds.
        assert!(coalesce_pause(Some(212_992)) < Duration::from_micros(100));
        for rcvbuf in [212_992u32, 1 << 20, 2 << 20, 8 << 20, 32 << 20, u32::MAX] {
            let p = coalesce_pause(Some(rcvbuf));
            let filled = p.as_secs_f64() * PEAK_RATE as f64 * DATAGRAM_TRUESIZE as f64;
            assert!(filled <= f64::from(rcvbuf) / 2.0, "{rcvbuf}: {p:?}");
            assert!(p <= COALESCE);
        }
    }
}
