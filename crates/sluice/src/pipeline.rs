//! The per-message path shared by every listener: parse → classify → encode into the open
//! batch. Receivers call it from their own loop, on their own thread or task, so the raw
//! bytes never leave the place they were received into.

use std::sync::Arc;
use std::time::Instant;

use sluice_proto::batch::{BatchBuilder, BatchPolicy, EncodedBatch, HoldKind};
use sluice_proto::classify::local::Scratch;
use sluice_proto::classify::{Classification, Classifier, SourceMeta, classify, classify_no_parse};
use sluice_proto::event::{EncodeOptions, append_tag, encode_event};
use sluice_proto::time::Zone;
use sluice_proto::{Message, ParseOptions, parse};

use tokio_util::sync::CancellationToken;

use crate::group::stage::GroupStage;
use crate::output::Submit;
use crate::routing::{Ask, Routing};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{BatchEmitted, Classified, OutputGone};
pub use crate::telemetry::events::{LocalCounts, ReceiverCounters, format_index};
use crate::window::{MemoryBudget, Permit};

thread_local! {
    /// Where the operator's app-parsers keep a message's values, per receiving thread.
    static SCRATCH: std::cell::RefCell<Scratch> = const { std::cell::RefCell::new(Scratch::new()) };
    /// Where destination selectors keep their values (the classification still borrows
    /// `SCRATCH` while they run).
    static SELECT_SCRATCH: std::cell::RefCell<Scratch> = const { std::cell::RefCell::new(Scratch::new()) };
}

/// Everything a receiver needs to turn bytes into events; built from the configuration at
/// startup and again by each reload.
#[derive(Debug)]
pub struct Processor {
    pub zone: Zone,
    pub tables: Classifier,
    pub encode: EncodeOptions,
    pub batch: BatchPolicy,
    /// Per-event destinations, when they differ by vendor_product or severity (`None`: every
    /// event goes to the same destinations and nothing is looked up).
    pub routing: Option<Arc<Routing>>,
    /// Open multi-part groups; a reload hands them to the new processor.
    pub groups: Arc<GroupStage>,
    /// `SC4S_USE_NAME_CACHE`: learns each sender's hostname (the classifier looks it up).
    pub names: Option<Arc<crate::name_cache::HostNames>>,
    /// `SC4S_USE_VPS_CACHE`: learns each host's vendor and product (the classifier looks
    /// them up).
    pub vps: Option<Arc<crate::vps_cache::VendorProducts>>,
    /// The encodings beyond the HEC event that destinations need (syslog relays, Kafka);
    /// empty when none does.
    pub encodings: crate::output::Encodings,
}

/// The destination set of a classified message (see [`crate::routing`]); the operator's
/// selectors, when there are any, run on it with `tables`.
#[inline]
fn route(
    r: &Routing,
    class: &Classification<'_, '_>,
    msg: &Message<'_>,
    src: &SourceMeta<'_>,
    tables: &Classifier,
    now_unix_secs: i64,
) -> u64 {
    let severity = msg
        .priority
        .map_or(crate::routing::DEFAULT_SEVERITY, |p| p.severity());
    let ((v, v_tail), (p, p_tail)) = (class.vendor.parts(), class.product.parts());
    if !r.needs_eval() {
        if v_tail.is_empty() && p_tail.is_empty() {
            return r.dests(v, p, severity);
        }
        // A vendor or product built from two pieces (rare): joined for the lookup.
        return r.dests(&[v, v_tail].concat(), &[p, p_tail].concat(), severity);
    }
    SELECT_SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        let takes = |q: Ask| {
            // Each selector or filter sees the classified event, not what another left.
            scratch.reset();
            match q {
                Ask::Selector(app) => {
                    tables.selector_takes(app, msg, src, class, now_unix_secs, &scratch)
                }
                Ask::Filter(id) => {
                    tables.named_filter_matches(id, msg, src, class, now_unix_secs, &scratch)
                }
            }
        };
        if v_tail.is_empty() && p_tail.is_empty() {
            r.dests_selected(v, p, severity, takes)
        } else {
            r.dests_selected(
                &[v, v_tail].concat(),
                &[p, p_tail].concat(),
                severity,
                takes,
            )
        }
    })
}

/// Tells the VPS cache the vendor and product of one event (`SC4S_USE_VPS_CACHE`).
#[inline]
fn observe_vps(
    vps: &crate::vps_cache::VendorProducts,
    src: &SourceMeta<'_>,
    class: &Classification<'_, '_>,
    msg: &Message<'_>,
) {
    let joined = |v: &sluice_proto::classify::Value<'_, '_>| {
        let (a, b) = v.parts();
        sluice_proto::classify::Inline::concat(&[a, b])
    };
    if let (Some(v), Some(p)) = (joined(&class.vendor), joined(&class.product)) {
        vps.observe(
            src.source_ip,
            class.host_bytes(msg),
            v.as_bytes(),
            p.as_bytes(),
        );
    }
}

/// The processor every receiver shares. Receivers load it once per batch (a `recvmmsg`, a
/// TCP read): a load is a few atomic operations and no lock, and a reload's `store` takes
/// effect from each receiver's next batch, never in the middle of one.
pub type SharedProcessor = Arc<arc_swap::ArcSwap<Processor>>;

/// The wall-clock moment a group of messages was received, read once per group.
#[derive(Clone, Copy, Debug)]
pub struct RecvTime {
    pub instant: Instant,
    pub unix_micros: i64,
}

impl RecvTime {
    pub fn now() -> RecvTime {
        let unix_micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        RecvTime {
            instant: Instant::now(),
            unix_micros,
        }
    }
}

impl Processor {
    pub fn new_builder(&self) -> BatchBuilder {
        BatchBuilder::new(self.batch)
    }

    /// Hands `msg` to the group stage when it is one part of a multi-part message.
    #[inline]
    fn absorb(
        &self,
        msg: &sluice_proto::Message<'_>,
        class: &sluice_proto::classify::Classification<'_, '_>,
        src: &SourceMeta<'_>,
        at: RecvTime,
        counts: &mut LocalCounts,
    ) -> bool {
        let opts = self.tables.group_options();
        match sluice_proto::classify::group::part(msg, class, src.source_ip, &opts) {
            Some(part) => {
                self.groups.offer(&part, src, at.unix_micros);
                counts.absorbed += 1;
                true
            }
            None => false,
        }
    }

    /// Parses, classifies and encodes one message into `builder`; returns a batch when the
    /// builder filled up.
    #[inline]
    pub fn process(
        &self,
        payload: &[u8],
        src: &SourceMeta<'_>,
        at: RecvTime,
        builder: &mut BatchBuilder,
        counts: &mut LocalCounts,
    ) -> Option<EncodedBatch> {
        self.process_inner(payload, src, at, builder, counts, None)
    }

    /// [`process`](Self::process) for an `RFC6587_NOPARSE` listener: the frame is not
    /// parsed; the listener's network-source parsers read it whole.
    pub fn process_no_parse(
        &self,
        payload: &[u8],
        src: &SourceMeta<'_>,
        at: RecvTime,
        builder: &mut BatchBuilder,
        counts: &mut LocalCounts,
    ) -> Option<EncodedBatch> {
        let msg = sluice_proto::parse::no_parse(payload);
        counts.messages += 1;
        counts.bytes += payload.len() as u64;
        counts.by_format[format_index(msg.format)] += 1;
        self.with_scratch(|scratch| {
            self.classify_encode(&msg, src, at, builder, counts, None, scratch, true)
        })
    }

    /// [`process`](Self::process), adding `tag` to the event's `sc4s_tags` (when indexed
    /// fields are sent). For the rare event that needs a mark, such as a partial frame.
    pub fn process_tagged(
        &self,
        payload: &[u8],
        src: &SourceMeta<'_>,
        at: RecvTime,
        builder: &mut BatchBuilder,
        counts: &mut LocalCounts,
        tag: &str,
    ) -> Option<EncodedBatch> {
        self.process_inner(payload, src, at, builder, counts, Some(tag))
    }

    #[inline(always)]
    fn process_inner(
        &self,
        payload: &[u8],
        src: &SourceMeta<'_>,
        at: RecvTime,
        builder: &mut BatchBuilder,
        counts: &mut LocalCounts,
        tag: Option<&str>,
    ) -> Option<EncodedBatch> {
        let opts = ParseOptions {
            now_unix_secs: at.unix_micros.div_euclid(1_000_000),
            zone: &self.zone,
        };
        let msg = parse(payload, &opts);
        counts.messages += 1;
        counts.bytes += payload.len() as u64;
        counts.by_format[format_index(msg.format)] += 1;
        self.with_scratch(|scratch| {
            self.classify_encode(&msg, src, at, builder, counts, tag, scratch, false)
        })
    }

    /// Runs `f` with the scratch the operator's app-parsers keep a message's values in:
    /// a per-thread arena reset per message (after the first messages, no allocation), or,
    /// without app-parsers, one that is never written to (never allocated).
    #[inline(always)]
    fn with_scratch<T>(&self, f: impl FnOnce(&Scratch) -> T) -> T {
        if self.tables.app_parsers().is_none() {
            return f(&Scratch::new());
        }
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            scratch.reset();
            f(&scratch)
        })
    }

    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn classify_encode(
        &self,
        msg: &Message<'_>,
        src: &SourceMeta<'_>,
        at: RecvTime,
        builder: &mut BatchBuilder,
        counts: &mut LocalCounts,
        tag: Option<&str>,
        scratch: &Scratch,
        no_parse: bool,
    ) -> Option<EncodedBatch> {
        let now_unix_secs = at.unix_micros.div_euclid(1_000_000);
        let class = if no_parse {
            classify_no_parse(msg, src, now_unix_secs, &self.tables, scratch)
        } else {
            classify(msg, src, now_unix_secs, &self.tables, scratch)
        };
        let msg = *msg;
        Classified {
            class: &class,
            format: msg.format,
        }
        .emit(crate::telemetry::metrics());
        if let Some(names) = &self.names {
            names.observe(src.source_ip, class.host_bytes(&msg));
        }
        if let Some(vps) = &self.vps {
            observe_vps(vps, src, &class, &msg);
        }
        if self.absorb(&msg, &class, src, at, counts) {
            return None;
        }
        let encode = |out: &mut Vec<u8>| {
            let start = out.len();
            encode_event(out, &msg, &class, src, at.unix_micros, &self.encode);
            if let Some(tag) = tag {
                append_tag(out, start, tag);
            }
        };
        self.push(builder, at, &class, &msg, src, encode)
    }

    /// Adds one encoded event to `builder`, with its destination set when destinations
    /// differ by vendor_product or severity, and its extra encodings when destinations need
    /// them.
    #[inline]
    pub(crate) fn push(
        &self,
        builder: &mut BatchBuilder,
        at: RecvTime,
        class: &Classification<'_, '_>,
        msg: &Message<'_>,
        src: &SourceMeta<'_>,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Option<EncodedBatch> {
        let e = &self.encodings;
        let now = at.unix_micros.div_euclid(1_000_000);
        let route = |r: &Routing| route(r, class, msg, src, &self.tables, now);
        if e.is_empty() {
            return match &self.routing {
                None => builder.push_with(at.instant, encode),
                Some(r) => builder.push_routed(at.instant, route(r), encode),
            };
        }
        let dests = self.routing.as_deref().map(route);
        let to = e.resolve(dests);
        builder.push_encoded(at.instant, dests, e.len(), encode, |k, event, out| {
            e.write(k, to, out, event, msg, class, src, at.unix_micros)
        })
    }
}

/// Hands batches to the destination together with the window permits of their events.
///
/// A receiver holds permits for every event in its open batch. When a batch is finished,
/// exactly its event count moves into the batch as its event hold; they return to the window
/// only through the batch's completion (or when a buffer persisted it).
#[derive(Debug)]
pub struct Emitter {
    out: Submit,
    held: Option<Permit>,
    counters: Arc<ReceiverCounters>,
    memory: Arc<MemoryBudget>,
    rt: tokio::runtime::Handle,
    stop: CancellationToken,
}

impl Emitter {
    pub fn new(
        out: Submit,
        counters: Arc<ReceiverCounters>,
        memory: Arc<MemoryBudget>,
        rt: tokio::runtime::Handle,
        stop: CancellationToken,
    ) -> Self {
        Emitter {
            out,
            held: None,
            counters,
            memory,
            rt,
            stop,
        }
    }

    pub fn counters(&self) -> &Arc<ReceiverCounters> {
        &self.counters
    }

    /// Adds freshly acquired permits to the ones held for the open batch.
    pub fn hold(&mut self, permit: Permit) {
        match &mut self.held {
            Some(h) => h.merge(permit),
            None => self.held = Some(permit),
        }
    }

    /// Returns `n` held permits to the window: messages taken into a multi-part group are
    /// not events of any batch.
    pub fn release(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        if let Some(h) = &mut self.held {
            if h.num_permits() as u64 <= n {
                self.held = None;
            } else {
                drop(h.split(n as usize));
            }
        }
    }

    /// Sends a finished batch, moving its events' permits into it and charging its size to the
    /// memory budget — waiting (not reading) while the budget is spent.
    pub fn emit(&mut self, mut batch: EncodedBatch) {
        if let Some(m) = self
            .memory
            .acquire_blocking(batch.total_bytes(), &self.rt, &self.stop)
        {
            batch.hold(HoldKind::Bytes, m);
        }
        let n = batch.events() as usize;
        if let Some(h) = &mut self.held {
            if h.num_permits() <= n {
                if let Some(all) = self.held.take() {
                    batch.hold(HoldKind::Events, all);
                }
            } else if let Some(part) = h.split(n) {
                batch.hold(HoldKind::Events, part);
            }
        }
        BatchEmitted {
            events: batch.events(),
            bytes: batch.body().len(),
        }
        .emit(&self.counters);
        self.out.submit(batch);
    }
}

/// Hands a TCP chunk to its port's batch combiner. The channel is unbounded — the input
/// window bounds what is in it — so this never waits; it fails only when the combiner is
/// gone, which would be a bug. The loss is then counted and logged, never silent.
pub fn hand_over(
    next: &async_channel::Sender<EncodedBatch>,
    batch: EncodedBatch,
    counters: &ReceiverCounters,
) {
    if let Err(e) = next.try_send(batch) {
        OutputGone {
            events: e.into_inner().events(),
        }
        .emit(counters);
    }
}
