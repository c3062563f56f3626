//! SC4S classification: which Splunk metadata, event text, host and time a parsed message
//! gets.
//!
//! [`classify`] is a pure function of the parsed [`Message`], where it came from
//! ([`SourceMeta`]), "now" and the [`Classifier`] built at start ([`build`]). It follows the
//! SC4S 3.45 source path (`sources/source_syslog/plugin.jinja`; sc4s notes §d) step by step:
//!
//! 1. **Listener.** A dedicated listener (`SC4S_LISTEN_<VENDOR>_<PRODUCT>_*_PORT`) gives
//!    the message a `vendor_product` ([`Settings::listeners`]).
//! 2. **Header.** syslog-ng's view of an RFC 3164 header: when sluice's parser found no TAG
//!    (it needs `name:` or `name[pid]`), syslog-ng still takes the first word as PROGRAM, so
//!    `test something else` has PROGRAM `test`. Messages starting `<digits>` that are not
//!    RFC 5424 first go to the `sc4s-almost-syslog` applications (vendors whose header is
//!    not syslog, e.g. Cisco's `: %`); messages without a PRI go to `sc4s-raw-syslog`
//!    (PRI-less BSD and ISO lines are parsed, anything else stays raw: HOST is the
//!    sender's IP, the time is the receive time, MESSAGE is the whole line).
//! 3. **Repairs** of an RFC 3164 header ([`header`]): an invalid HOST or PROGRAM is folded
//!    back into MESSAGE.
//! 4. **Context**: `host.csv` (HOST missing or an IP) and, on listeners without a vendor,
//!    `vendor_product_by_source` ([`context`]).
//! 5. **Signatures**: unless identified, the `sc4s-syslog-sdata` applications (RFC 5424
//!    with an `[id@digits` element), then `sc4s-syslog-pgm` (PROGRAM), then `sc4s-syslog`
//!    (message content; CEF, LEEF and JSON payloads are here, in SC4S's file order); then,
//!    for RFC messages, `sc4s-network-source`. Which applications run is decided by cheap
//!    tokens ([`dispatch`]); each application is one vendor file ([`vendors`]).
//! 6. **Fallback**: `app-fallback-netsource` (vendor from the listener or
//!    `vendor_product_by_source`, `nix:syslog`), `app-fallback-nix_syslog` (RFC 5424, or
//!    RFC 3164 with PROGRAM and MESSAGE), else `app-fallbackz-lastchance`
//!    (`sc4s:fallback`, template `t_fallback_kv`).
//! 7. **Time zone**: `vendor_product_by_source`'s `sc4s_time_zone` re-reads the stamp's
//!    wall-clock time in that zone; `sc4s_use_recv_time` sends the receive time.
//! 8. **Overrides**: `SC4S_SET_SOURCE_AS_SC4S`, then `splunk_metadata.csv` keyed by
//!    `<vendor>_<product>` and `<vendor>_<product>_<class>` ([`metadata`]), then
//!    `compliance_meta_by_source` ([`context`]).
//!
//! # Cost
//!
//! Nothing is allocated per message. Static metadata (a vendor's keys with their
//! `splunk_metadata.csv` rows) is resolved at build; only vendor/product pairs taken from
//! the message (CEF, LEEF) are looked up per message, and only when the csv has rows.

pub(crate) mod caps;
pub mod context;
pub mod csv;
pub(crate) mod dispatch;
pub mod filter;
pub(crate) mod gate;
pub mod group;
pub mod header;
pub mod json_walk;
pub mod kv;
pub mod kvscan;
pub mod local;
pub mod metadata;
pub mod registry;
pub(crate) mod shape;
pub mod template;
pub mod value;
pub mod vendors;
pub mod vtime;
pub mod xml;

mod build;
mod fallback;
mod no_parse;
mod options;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod testutil;

use std::fmt;
use std::net::IpAddr;

use crate::message::{Format, Message, Timestamp};

pub use build::{
    BuildError, CheckpointOptions, Classifier, LenientDrops, Settings, VendorOptionError,
    VendorOptions, VendorSelection, build,
};
pub use csv::{ContextError, ContextWarning};
pub use header::{ProgramRule, Rewrite, strip_directory};
pub use no_parse::classify_no_parse;
pub use registry::{
    App, Check, Fields, HostEdit, Input, Key, MessageFilter, NameValues, NetSource, Out, Shape,
    Source, TimeEdit, Topic, Values, ValuesSyntax, Vendor, When,
};
pub use template::Template;
pub use value::{Inline, Value};

use metadata::Lookup;

/// How the message arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    Udp,
    Tcp,
    Tls,
}

impl Transport {
    /// Label for logs and metrics: `UDP`, `TCP` or `TLS`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Udp => "UDP",
            Transport::Tcp => "TCP",
            Transport::Tls => "TLS",
        }
    }

    /// The `sc4s_proto` indexed field. SC4S derives it from syslog-ng's `$PROTO`, the IP
    /// protocol number (`conflib/_splunk/splunkfields.conf`: 6 → `TCP`, 17 → `UDP`), so TLS
    /// connections are reported as `TCP`, and so are they here.
    pub fn sc4s_proto(self) -> &'static str {
        match self {
            Transport::Udp => "UDP",
            Transport::Tcp | Transport::Tls => "TCP",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a message came from: the parts of the socket the SC4S metadata depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceMeta<'a> {
    pub transport: Transport,
    /// The local port the message was received on (`sc4s_destport`).
    pub dest_port: u16,
    /// The sender's address (`sc4s_fromhostip`, and HOST when the message names none).
    pub source_ip: IpAddr,
    /// `DEFAULT` or the `<ID>` of `SC4S_LISTEN_<ID>_<PROTO>_PORT`.
    pub listener_id: &'a str,
}

/// The listener id of the default ports.
pub const DEFAULT_LISTENER: &str = "DEFAULT";

/// The header fields as SC4S's templates see them, before vendor edits: syslog-ng's
/// PROGRAM/PID/MESSAGE split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderView<'m> {
    pub program: Option<&'m [u8]>,
    pub pid: Option<&'m [u8]>,
    /// MESSAGE after the program header (`None`: RFC 5424 without MSG).
    pub message: Option<&'m [u8]>,
}

/// PROGRAM, PID and MESSAGE as a vendor parser changed them (`None`: unchanged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Edit<'m, 't> {
    /// `Some(None)`: unset.
    pub program: Option<Option<&'m [u8]>>,
    pub pid: Option<Option<&'m [u8]>>,
    pub message: Option<Value<'m, 't>>,
    /// Parts of MESSAGE removed as the event is written.
    pub filter: MessageFilter,
}

/// The SC4S metadata of one message. `'m` borrows the message, `'t` the classifier.
#[derive(Clone, Copy, Debug)]
pub struct Classification<'m, 't> {
    pub sourcetype: Value<'m, 't>,
    pub index: Value<'m, 't>,
    pub source: Value<'m, 't>,
    pub vendor: Value<'m, 't>,
    pub product: Value<'m, 't>,
    pub class: Option<Value<'m, 't>>,
    pub template: Template,
    /// The SC4S application that classified the message (its `.app.` tag).
    pub app: &'t str,
    /// The wire format SC4S tags the message with (`Unparsed`: `wireformat:raw`).
    pub format: Format,
    /// The syslog-ng header split the templates start from.
    pub view: HeaderView<'m>,
    /// The header repair applied (RFC 3164 only).
    pub rewrite: Rewrite,
    pub edit: Edit<'m, 't>,
    pub host: HostEdit<'m, 't>,
    pub time: TimeEdit,
    /// Extra indexed fields from the vendor parser.
    pub fields: Fields<'m, 't>,
    /// Extra indexed fields from `compliance_meta_by_source` (name, value).
    pub compliance: &'t [(Box<str>, Box<str>)],
    /// The parsed values for `t_json_values` / `t_kv_values`.
    pub values: Option<Values<'m>>,
    /// The event text, when a local template rendered it ([`Template::Local`], or
    /// `t_json_values`/`t_kv_values` over values local applications parsed).
    pub text: Option<&'m [u8]>,
    /// What local applications changed besides the fields above (indexed fields, tags).
    pub local: Option<local::run::LocalRef<'m, 't>>,
}

/// Classifies one message. See the module docs for the steps. `now_unix_secs` is the
/// receive time, for vendor stamps without a year. `scratch` holds what the operator's
/// app-parsers ([`local`]) make of the message; it is only touched when the classifier has
/// some, and the caller resets it between messages ([`local::Scratch::reset`]).
pub fn classify<'m, 't: 'm>(
    msg: &Message<'m>,
    src: &SourceMeta<'_>,
    now_unix_secs: i64,
    cx: &'t Classifier,
    scratch: &'m local::Scratch,
) -> Classification<'m, 't> {
    let mut out = Out::default();
    let mut hits = dispatch::TokenHits::default();
    let arena = cx.app_parsers.as_ref().map(|_| scratch.bump());
    let mut netsource: NetSource<'m> = cx.listener_netsource(src.listener_id);
    let raw = msg.raw;
    let mut format = msg.format;
    let mut view = syslog_ng_view(msg);

    // Step 2: almost-syslog and raw applications.
    let mut almost = false;
    if raw.first() != Some(&b'<') {
        let input = cx.input(
            msg,
            src,
            view,
            Rewrite::None,
            netsource,
            now_unix_secs,
            &out,
            arena,
        );
        let took = cx.engine.run(Topic::Raw, &input, &mut out, &mut hits);
        if out.format != Some(Format::Rfc3164) {
            // Not parsed by a raw application (or parsed by one that keeps it raw): the
            // whole line is MESSAGE, no PROGRAM, HOST is the sender's IP.
            format = Format::Unparsed;
            view = HeaderView {
                program: None,
                pid: None,
                message: Some(raw),
            };
            if !took || matches!(out.host, HostEdit::Keep) {
                out.host = HostEdit::SourceIp;
            }
            if matches!(out.time, TimeEdit::Keep) {
                out.time = TimeEdit::Recv;
            }
        }
    } else if msg.format != Format::Rfc5424 && starts_with_pri(raw) {
        let input = cx.input(
            msg,
            src,
            view,
            Rewrite::None,
            netsource,
            now_unix_secs,
            &out,
            arena,
        );
        almost = cx
            .engine
            .run(Topic::AlmostSyslog, &input, &mut out, &mut hits);
        if almost {
            format = out.format.unwrap_or(Format::Rfc3164);
        }
    }

    // A chassis blade's `slotN/host` (plugin.jinja, after the RFC 3164 parse or an
    // almost-syslog repair): HOST is the part after the last `/`, before any vendor sees it.
    if format == Format::Rfc3164 {
        let host = match out.host {
            HostEdit::Set(Value::Bytes(b)) => Some(b),
            HostEdit::Keep => msg.hostname,
            _ => None,
        };
        if let Some(tail) = host.and_then(header::slot_host) {
            out.host = HostEdit::Set(Value::Bytes(tail));
        }
    }

    // Step 3: header repairs (SC4S runs them on every RFC 3164 message its own parser read).
    let rewrite = if format == Format::Rfc3164 && !almost {
        header::header_rewrite(msg.hostname, view.program)
    } else {
        Rewrite::None
    };

    // Whether the operator's applications of a context may take the message (their gate,
    // on the fields it reads), asked before an input is built for them.
    let local_gate = |p: &local::Program, ctx: &local::Context, vp: &str, out: &Out<'m>| {
        local::run::context_admits(
            p,
            ctx,
            &fields(msg, view, rewrite, out),
            vp,
            src,
            raw,
            out,
            scratch.memo(),
        )
    };

    // The input their applications then read.
    let local_input = |ns: NetSource<'m>, out: &Out<'m>| {
        cx.input(msg, src, view, rewrite, ns, now_unix_secs, out, arena)
    };

    // Step 4: host.csv, vendor_product_by_source.
    let header_host = effective_host(msg, rewrite, &out);
    // Without host.csv rows HOST's shape does not matter (parsing it as an address was a
    // fixed cost of every message).
    let csv_host = if cx.context.has_hosts() && header_host.is_none_or(is_ip_literal) {
        cx.context.host_for(src.source_ip)
    } else {
        None
    };
    // SC4S_USE_NAME_CACHE: after host.csv, while HOST is still nil or an address.
    let cached_host = match &cx.name_cache {
        Some(cache) if csv_host.is_none() && host_is_nil_or_ip(header_host, src.source_ip) => {
            cache.lookup(src.source_ip)
        }
        _ => None,
    };
    let mut vps = None;
    let mut remembered = None;
    let mut vps_input = None;
    if netsource.vendor_product.is_empty() {
        // SC4S_USE_VPS_CACHE (`p_vpst_cache`, before vendor_product_by_source, which wins):
        // the vendor and product of the last event from this HOST.
        if let Some(cache) = &cx.vps_cache {
            let host = match (csv_host, &cached_host) {
                (Some(h), _) => Some(h.as_bytes()),
                (None, Some(h)) => Some(h.as_bytes()),
                (None, None) => header_host,
            };
            if let Some(h) = host
                && !host_is_nil_or_ip(Some(h), src.source_ip)
            {
                remembered = cache.lookup(h);
            }
        }
        // vendor_product_by_source: the operator's `sc4s-vps` applications first, the csv
        // only when none took the message.
        let mut local_vps = false;
        if let Some(p) = &cx.app_parsers
            && p.has(&local::Context::Vps)
        {
            // The gate first, on the fields it reads: most messages stop there, before an
            // input is built (and moved to step 5).
            if local_gate(p, &local::Context::Vps, netsource.vendor_product, &out) {
                let input = local_input(netsource, &out);
                if local::run::run_context(p, &local::Context::Vps, &input, &mut out) {
                    if let Some(ns) = out.local.and_then(|o| local_netsource(o, arena)) {
                        netsource = ns;
                        local_vps = true;
                    }
                } else {
                    // Nothing changed: step 5 reads the same fields, unless the csv or the
                    // cache below names a source.
                    vps_input = Some(input);
                }
            }
        }
        if !local_vps {
            vps =
                cx.context
                    .vendor_product_by_source(header_host, src.source_ip, view.program, raw);
            if let Some(v) = vps {
                netsource = v.netsource();
            }
        }
    }
    let remembered = remembered.filter(|_| netsource.vendor_product.is_empty());
    // The network source the applications see: the listener's or vendor_product_by_source's,
    // else the cache's (which lives here, not in the classifier).
    let seen = match &remembered {
        Some(r) => r.netsource(),
        None => netsource,
    };

    // Step 5: signatures.
    let input = match vps_input {
        Some(i) if vps.is_none() && remembered.is_none() => i,
        _ => cx.input(msg, src, view, rewrite, seen, now_unix_secs, &out, arena),
    };
    if !out.identified {
        let sdata = msg.format == Format::Rfc5424
            && msg
                .structured_data
                .is_some_and(|sd| has_enterprise_sd(sd.raw()));
        let took = (sdata && cx.engine.run(Topic::Sdata, &input, &mut out, &mut hits))
            || (input.program.is_some() && cx.engine.run(Topic::Pgm, &input, &mut out, &mut hits))
            || cx.engine.run(Topic::Syslog, &input, &mut out, &mut hits);
        if took {
            out.identified = true;
        }
    }
    if format != Format::Unparsed {
        // Unless an application took the message, `out` is as the signature topics got it
        // (a declining candidate's writes are undone), and so is the input.
        let input = if out.identified {
            cx.input(msg, src, view, rewrite, seen, now_unix_secs, &out, arena)
        } else {
            input
        };
        if cx.engine.run(Topic::NetSource, &input, &mut out, &mut hits) {
            out.identified = true;
        }
    }

    // Step 6: fallback (the operator's `fallback` applications first).
    if !out.identified
        && let Some(p) = &cx.app_parsers
        && p.has(&local::Context::Fallback)
        && local_gate(p, &local::Context::Fallback, netsource.vendor_product, &out)
    {
        let input = local_input(netsource, &out);
        if local::run::run_context(p, &local::Context::Fallback, &input, &mut out) {
            out.identified = true;
        }
    }
    let fallback = (!out.identified).then(|| {
        let program = edited(input.program, out.program);
        let has_message = match &out.message {
            Some(m) => !m.is_empty(),
            None => !input.body.is_empty(),
        };
        let ns = match &remembered {
            Some(r) => (Value::Inline(r.vendor), Value::Inline(r.product)),
            None => (
                Value::Bytes(netsource.vendor.as_bytes()),
                Value::Bytes(netsource.product.as_bytes()),
            ),
        };
        fallback::choose(format, program, has_message, ns)
    });

    // host.csv and the name cache (when HOST is still the header's or the sender's IP), then
    // vendor_product_by_source's time settings, decided before the classification is built:
    // it is about 1 kB, and built once in place it is not copied again on return.
    let mut host = out.host;
    if let Some(name) = csv_host
        && matches!(host, HostEdit::Keep | HostEdit::SourceIp)
    {
        host = HostEdit::Set(Value::Static(name));
    }
    if let Some(name) = cached_host
        && matches!(host, HostEdit::Keep | HostEdit::SourceIp)
    {
        host = HostEdit::Set(Value::Inline(name));
    }
    let mut time = out.time;
    let local_zone = local_time_settings(&out);
    let (use_recv_time, zone) = match (vps, &local_zone) {
        (Some(v), _) => (v.use_recv_time, v.time_zone.as_ref()),
        (None, Some((recv, zone))) => (*recv, zone.as_ref()),
        (None, None) => (false, None),
    };
    if vps.is_some() || local_zone.is_some() {
        if use_recv_time {
            time = TimeEdit::Recv;
        } else if let Some(zone) = zone {
            let stamp = match time {
                TimeEdit::Stamp(t) => Some(t),
                TimeEdit::Keep => msg.timestamp,
                TimeEdit::Recv => None,
            };
            if let Some(t) = stamp.and_then(|t| vtime::fix_time_zone(t, zone)) {
                time = TimeEdit::Stamp(t);
            }
        }
    }
    let final_host = match host {
        HostEdit::Keep => header_host,
        HostEdit::Set(Value::Bytes(b)) => Some(b),
        HostEdit::Set(Value::Static(s)) => Some(s.as_bytes()),
        _ => None,
    };
    let compliance = cx
        .context
        .compliance(final_host, src.source_ip, view.program, raw);

    // Steps 7 and 8, with compliance_meta_by_source last.
    let mut class = cx.finish(
        &out,
        Finish {
            fallback,
            format,
            view,
            rewrite,
            program: input.program,
            host,
            time,
            compliance,
        },
    );
    if let (Some(p), Some(arena)) = (&cx.app_parsers, arena) {
        cx.after_local(p, msg, src, now_unix_secs, &mut class, arena);
    }
    class
}

/// `.netsource.*` as a `sc4s-vps` application set them.
fn local_netsource<'m>(
    o: &'m local::Overlay<'m>,
    arena: Option<&'m bumpalo::Bump>,
) -> Option<NetSource<'m>> {
    let (v, p, vp) = local::run::overlay_netsource(o)?;
    let arena = arena?;
    let text = |b: &'m [u8]| -> &'m str {
        match std::str::from_utf8(b) {
            Ok(s) => s,
            Err(_) => arena.alloc_str(&String::from_utf8_lossy(b)),
        }
    };
    Some(NetSource {
        vendor: text(v),
        product: text(p),
        vendor_product: text(vp),
    })
}

/// `.netsource.sc4s_use_recv_time` and `.netsource.sc4s_time_zone` as local applications
/// set them (`None`: neither).
fn local_time_settings(out: &Out<'_>) -> Option<(bool, Option<crate::time::Zone>)> {
    let o = out.local?;
    let recv = o.get(local::run::NS_USE_RECV_TIME).flatten();
    let zone = o.get(local::run::NS_TIME_ZONE).flatten();
    if recv.is_none() && zone.is_none() {
        return None;
    }
    let zone = zone
        .and_then(|z| std::str::from_utf8(z).ok())
        .and_then(|z| crate::time::Zone::from_name(z).ok());
    Some((recv.is_some_and(|r| r.eq_ignore_ascii_case(b"yes")), zone))
}

/// What [`Classifier::finish`] builds the classification from besides [`Out`].
struct Finish<'m, 't> {
    fallback: Option<fallback::Choice<'m>>,
    format: Format,
    view: HeaderView<'m>,
    rewrite: Rewrite,
    program: Option<&'m [u8]>,
    host: HostEdit<'m, 't>,
    time: TimeEdit,
    compliance: Option<&'t context::ComplianceEntry>,
}

impl Classifier {
    fn listener_netsource(&self, id: &str) -> NetSource<'_> {
        if id == DEFAULT_LISTENER {
            return NetSource::default();
        }
        self.listeners
            .iter()
            .find(|l| &*l.id == id)
            .map(|l| NetSource {
                vendor: &l.vendor,
                product: &l.product,
                vendor_product: &l.vendor_product,
            })
            .unwrap_or_default()
    }

    #[allow(clippy::too_many_arguments)]
    fn input<'m, 'a>(
        &'m self,
        msg: &'a Message<'m>,
        src: &'a SourceMeta<'a>,
        view: HeaderView<'m>,
        rewrite: Rewrite,
        netsource: NetSource<'a>,
        now_unix_secs: i64,
        out: &Out<'m>,
        arena: Option<&'m bumpalo::Bump>,
    ) -> Input<'m, 'a> {
        let local::run::Fields {
            program,
            pid,
            body,
            host,
        } = fields(msg, view, rewrite, out);
        Input {
            msg,
            src,
            program,
            pid,
            body,
            host,
            netsource,
            now_unix_secs,
            zone: &self.zone,
            options: &self.options,
            engine: &self.engine,
            arena,
            metadata: &self.metadata,
            loghost: &self.loghost,
        }
    }

    /// Steps 7-8: the metadata of the winning key (or fallback) with the overrides, then
    /// `compliance_meta_by_source`'s.
    fn finish<'m, 't>(&'t self, out: &Out<'m>, f: Finish<'m, 't>) -> Classification<'m, 't> {
        let Finish {
            fallback,
            format,
            view,
            rewrite,
            program,
            host,
            time,
            compliance,
        } = f;
        let program_source = || {
            Value::Concat(
                "program:",
                strip_directory(edited(program, out.program).unwrap_or_default()),
            )
        };
        let (vendor, product, class, sourcetype, index, source, template, app, lookup);
        if let Some(f) = fallback {
            vendor = f.vendor;
            product = f.product;
            class = f.class.map(Value::Static);
            sourcetype = Value::Static(f.sourcetype);
            index = Value::Static(f.index);
            source = match f.source {
                Source::Program => program_source(),
                Source::Static(s) => Value::Static(s),
                Source::Sc4s => Value::Static("sc4s"),
            };
            template = f.template;
            app = f.app;
            lookup = self.metadata.lookup(&vendor, &product, class.as_ref());
        } else {
            let (vi, key) = out.key.unwrap_or((0, &fallback::LASTCHANCE_KEY));
            let dynamic = out.vendor.is_some() || out.product.is_some() || out.class.is_some();
            vendor = out.vendor.unwrap_or(Value::Static(key.vendor));
            product = out.product.unwrap_or(Value::Static(key.product));
            class = out.class.or(key.class.map(Value::Static));
            sourcetype = out.sourcetype.unwrap_or(Value::Static(key.sourcetype));
            index = out.index.unwrap_or(Value::Static(key.index));
            source = match (out.source, key.source) {
                (Some(s), _) => s,
                (None, Source::Program) => program_source(),
                (None, Source::Static(s)) => Value::Static(s),
                (None, Source::Sc4s) => Value::Static("sc4s"),
            };
            template = out.template.or(key.template);
            app = out
                .app
                .or_else(|| {
                    let i = out.local?.app?;
                    let p = self.app_parsers.as_ref()?;
                    p.apps.get(i as usize).map(|a| a.name.as_str())
                })
                .unwrap_or("");
            lookup = if self.metadata.is_empty() {
                Lookup::default()
            } else if !dynamic && let Some(o) = self.resolved_key(vi, key) {
                Lookup {
                    base: o.as_ref(),
                    class: None,
                }
            } else {
                self.metadata.lookup(&vendor, &product, class.as_ref())
            };
        }
        let source = match (lookup.source(), self.set_source_as_sc4s) {
            (Some(s), _) => Value::Static(s),
            (None, true) => Value::Static("sc4s"),
            (None, false) => source,
        };
        let template = lookup.template().or(template).unwrap_or(match format {
            Format::Rfc5424 => Template::Rfc5424Compact,
            _ => Template::HdrMsg,
        });
        let mut sourcetype = lookup.sourcetype().map_or(sourcetype, Value::Static);
        let mut index = lookup.index().map_or(index, Value::Static);
        let mut source = source;
        let mut compliance_fields: &'t [(Box<str>, Box<str>)] = &[];
        if let Some(e) = compliance {
            if let Some(i) = &e.index {
                index = Value::Static(i);
            }
            if let Some(s) = &e.source {
                source = Value::Static(s);
            }
            if let Some(s) = &e.sourcetype {
                sourcetype = Value::Static(s);
            }
            compliance_fields = &e.fields;
        }
        Classification {
            sourcetype,
            index,
            source,
            vendor,
            product,
            class,
            template,
            app,
            format,
            view,
            rewrite,
            edit: Edit {
                program: out.program,
                pid: out.pid,
                message: out.message,
                filter: out.message_filter,
            },
            host,
            time,
            fields: out.fields,
            compliance: compliance_fields,
            values: out.values,
            text: None,
            local: match (out.local, &self.app_parsers) {
                (Some(overlay), Some(program)) => Some(local::run::LocalRef { overlay, program }),
                _ => None,
            },
        }
    }

    /// The operator's `sc4s-postfilter` and `sc4s-finalfilter` applications on the finished
    /// classification, then the event text of a local template.
    fn after_local<'m, 't: 'm>(
        &'t self,
        p: &'t local::Program,
        msg: &Message<'m>,
        src: &SourceMeta<'_>,
        now: i64,
        class: &mut Classification<'m, 't>,
        arena: &'m bumpalo::Bump,
    ) {
        let on = self.on_class(p, msg, src, now, arena);
        // Each returns at once when the context has no applications. Written out, not a
        // loop over the two: with a constant context the lookup is one load (the loop and
        // a `has` check first cost 38 instructions per message).
        on.run(&local::Context::PostFilter, class);
        on.run(&local::Context::FinalFilter, class);
        let template = match class.template {
            Template::Local(i) => p.templates.get(usize::from(i)).map(|(_, t)| t),
            Template::JsonValues | Template::KvValues
                if class.local.as_ref().is_some_and(local::run::has_values) =>
            {
                p.template_by_name(class.template.sc4s_name())
                    .and_then(|i| p.templates.get(i as usize))
                    .map(|(_, t)| t)
            }
            _ => None,
        };
        if let Some(t) = template {
            class.text = Some(on.render_text(t, class));
        }
    }
}

impl<'m, 't> Classification<'m, 't> {
    /// Whether an app-parser sent the event to the null queue
    /// (`r_set_dest_splunk_null_queue`): it goes to no Splunk destination.
    pub fn null_queue(&self) -> bool {
        self.local.is_some_and(|l| l.null_queue())
    }

    /// The event time: the vendor's stamp, the header's, or `recv_unix_micros`.
    pub fn time_micros(&self, msg: &Message<'_>, recv_unix_micros: i64) -> i64 {
        match self.time {
            TimeEdit::Stamp(t) => t.unix_micros(),
            TimeEdit::Keep => msg.timestamp.map_or(recv_unix_micros, |t| t.unix_micros()),
            TimeEdit::Recv => recv_unix_micros,
        }
    }

    /// The timestamp the event carries, if not the receive time.
    pub fn timestamp(&self, msg: &Message<'_>) -> Option<Timestamp> {
        match self.time {
            TimeEdit::Stamp(t) => Some(t),
            TimeEdit::Keep => msg.timestamp,
            TimeEdit::Recv => None,
        }
    }
}

/// PROGRAM, PID, MESSAGE and HOST as the applications read them: the header's, after the
/// repairs and the changes earlier applications made.
#[inline(always)]
fn fields<'m>(
    msg: &Message<'m>,
    view: HeaderView<'m>,
    rewrite: Rewrite,
    out: &Out<'m>,
) -> local::run::Fields<'m> {
    let (program, pid, body) = match rewrite {
        Rewrite::None => (view.program, view.pid, view.message.unwrap_or_default()),
        Rewrite::InvalidProgram(_) => (
            None,
            None,
            view.program
                .and_then(|p| span(msg.raw, p, view.message.unwrap_or_default()))
                .unwrap_or(view.message.unwrap_or_default()),
        ),
        Rewrite::InvalidHost => (
            None,
            None,
            msg.hostname
                .and_then(|h| span(msg.raw, h, view.message.unwrap_or_default()))
                .unwrap_or(view.message.unwrap_or_default()),
        ),
    };
    local::run::Fields {
        program: edited(program, out.program),
        pid: edited(pid, out.pid),
        body: match out.message {
            Some(Value::Bytes(b)) => b,
            _ => body,
        },
        host: match out.host {
            HostEdit::Set(Value::Bytes(b)) => Some(b),
            HostEdit::SourceIp => None,
            _ => effective_host(msg, rewrite, out),
        },
    }
}

fn edited<'m>(base: Option<&'m [u8]>, edit: Option<Option<&'m [u8]>>) -> Option<&'m [u8]> {
    match edit {
        Some(v) => v.filter(|p| !p.is_empty()),
        None => base,
    }
}

/// HOST from the header after the repairs and edits (`None`: the sender's IP).
fn effective_host<'m>(msg: &Message<'m>, rewrite: Rewrite, out: &Out<'m>) -> Option<&'m [u8]> {
    match out.host {
        HostEdit::Set(Value::Bytes(b)) => Some(b),
        HostEdit::SourceIp => None,
        _ if rewrite == Rewrite::InvalidHost => None,
        _ => msg.hostname.filter(|h| !h.is_empty()),
    }
}

/// `^<\d+>`... only the start matters: `<` and a digit.
fn starts_with_pri(raw: &[u8]) -> bool {
    raw.len() > 1 && raw[0] == b'<' && raw[1].is_ascii_digit()
}

/// SC4S's `match('\[[^\@]+@\d+' value("SDATA"))`.
fn has_enterprise_sd(sd: &[u8]) -> bool {
    let mut rest = sd;
    while let Some(open) = memchr::memchr(b'[', rest) {
        rest = &rest[open + 1..];
        let Some(at) = memchr::memchr(b'@', rest) else {
            return false;
        };
        if at > 0 && rest.get(at + 1).is_some_and(u8::is_ascii_digit) {
            return true;
        }
    }
    false
}

/// `true` for a dotted IPv4 or an IPv6 literal.
/// The name cache behind `SC4S_USE_NAME_CACHE`: the last good hostname seen from each
/// sender. Implemented by the daemon (it learns and persists them); a look-up runs on the
/// per-message path, so it must not block.
pub trait NameCache: Send + Sync + fmt::Debug {
    /// The cached hostname of `ip` (`None` when unknown or longer than
    /// [`value::INLINE_CAP`]).
    fn lookup(&self, ip: IpAddr) -> Option<Inline>;
}

/// The vendor-product cache behind `SC4S_USE_VPS_CACHE`: the vendor and product of the last
/// event each host name had. A message from that host on a listener without a vendor of its
/// own is then read as that vendor's network source (unless `vendor_product_by_source`
/// names one), as SC4S's `p_vpst_cache` does. Implemented by the daemon (it learns from the
/// events and persists them); a look-up runs on the per-message path, so it must not block.
pub trait VpsCache: Send + Sync + fmt::Debug {
    /// The vendor and product remembered for HOST `host` (compared ignoring ASCII case).
    fn lookup(&self, host: &[u8]) -> Option<VendorProduct>;
}

/// A vendor and product held inline (no allocation), as the VPS cache hands them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VendorProduct {
    vendor: Inline,
    product: Inline,
    joined: Inline,
}

impl VendorProduct {
    /// `None` when either is empty or not UTF-8, or `vendor_product` is longer than
    /// [`value::INLINE_CAP`].
    pub fn new(vendor: &[u8], product: &[u8]) -> Option<VendorProduct> {
        if vendor.is_empty()
            || product.is_empty()
            || std::str::from_utf8(vendor).is_err()
            || std::str::from_utf8(product).is_err()
        {
            return None;
        }
        Some(VendorProduct {
            vendor: Inline::concat(&[vendor])?,
            product: Inline::concat(&[product])?,
            joined: Inline::concat(&[vendor, b"_", product])?,
        })
    }

    pub fn vendor(&self) -> &str {
        std::str::from_utf8(self.vendor.as_bytes()).unwrap_or_default()
    }

    pub fn product(&self) -> &str {
        std::str::from_utf8(self.product.as_bytes()).unwrap_or_default()
    }

    fn netsource(&self) -> NetSource<'_> {
        NetSource {
            vendor: self.vendor(),
            product: self.product(),
            vendor_product: std::str::from_utf8(self.joined.as_bytes()).unwrap_or_default(),
        }
    }
}

/// SC4S's `f_host_is_nil_or_ip` for HOST as syslog-ng holds it: `host` (`None`: no host in
/// the header, so syslog-ng's HOST is the sender's address) starts with `-` or is an IPv4
/// or IPv6 address, other than `127.0.0.1`.
pub fn host_is_nil_or_ip(host: Option<&[u8]>, source_ip: IpAddr) -> bool {
    const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    match host {
        None => source_ip != LOOPBACK,
        Some(h) => h.starts_with(b"-") || (is_ip_literal(h) && h != b"127.0.0.1"),
    }
}

impl Classification<'_, '_> {
    /// HOST as the event carries it: the classification's host, the header's, or `None` for
    /// the sender's address.
    pub fn host_bytes<'a>(&'a self, msg: &'a Message<'_>) -> Option<&'a [u8]> {
        // As the encoder writes it (`write_host`).
        let v = match &self.host {
            HostEdit::Set(v) if !v.is_empty() => v,
            HostEdit::Keep if self.rewrite != Rewrite::InvalidHost => {
                return msg.hostname.filter(|h| !h.is_empty());
            }
            _ => return None,
        };
        match v {
            Value::Bytes(b) => Some(b),
            Value::Static(s) => Some(s.as_bytes()),
            Value::Inline(i) => Some(i.as_bytes()),
            Value::Concat(..) => None,
        }
    }
}

fn is_ip_literal(host: &[u8]) -> bool {
    std::str::from_utf8(host).is_ok_and(|s| s.parse::<IpAddr>().is_ok())
}

/// `raw[start of first .. end of last]` when both are slices of `raw` in that order.
pub(crate) fn span<'a>(raw: &'a [u8], first: &[u8], last: &[u8]) -> Option<&'a [u8]> {
    let base = raw.as_ptr() as usize;
    let start = (first.as_ptr() as usize).checked_sub(base)?;
    let end = (last.as_ptr() as usize).checked_sub(base)? + last.len();
    if start > end || end > raw.len() {
        return None;
    }
    raw.get(start..end)
}

/// syslog-ng's PROGRAM/PID/MESSAGE split of an RFC 3164 message. sluice's parser
/// recognises a TAG only as `name:` or `name[pid]` (the parse corpus's rule); syslog-ng takes
/// the first word in any case, up to a space, `[` or `:`, then `[pid]`, then one `:` and one
/// space. SC4S classifies on syslog-ng's split (`test something else` is nix:syslog with
/// PROGRAM `test`), so it is recomputed here when the parser found no TAG.
fn syslog_ng_view<'m>(msg: &Message<'m>) -> HeaderView<'m> {
    let base = HeaderView {
        program: msg.appname.filter(|p| !p.is_empty()),
        pid: msg.procid.filter(|p| !p.is_empty()),
        message: msg.message,
    };
    if msg.format != Format::Rfc3164 || base.program.is_some() {
        return base;
    }
    let Some(text) = msg.message else {
        return base;
    };
    let end = text
        .iter()
        .position(|&b| matches!(b, b' ' | b'[' | b':'))
        .unwrap_or(text.len());
    if end == 0 {
        return base;
    }
    let program = &text[..end];
    let mut at = end;
    let mut pid = None;
    if text.get(at) == Some(&b'[') {
        match memchr::memchr(b']', &text[at..]) {
            Some(close) => {
                pid = Some(&text[at + 1..at + close]).filter(|p| !p.is_empty());
                at += close + 1;
            }
            None => return base,
        }
    }
    if text.get(at) == Some(&b':') {
        at += 1;
    }
    if text.get(at) == Some(&b' ') {
        at += 1;
    }
    HeaderView {
        program: Some(program),
        pid,
        message: Some(&text[at..]),
    }
}
