//! Where local applications run in the classification, and how what they change becomes
//! the classification's: fields the built-in pipeline carries (HOST, PROGRAM, MESSAGE, the
//! time, the Splunk metadata, vendor/product/class) are written into it as an application
//! takes a message, so every later stage (built-in or local) sees them; everything else
//! (`.values.*`, `fields.*`, tags, `.netsource.*`) stays in the [`Overlay`].

use crate::classify::metadata::Metadata;
use crate::classify::registry::{HostEdit, Input, Out, Source, TimeEdit};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::{Classification, SourceMeta};
use crate::message::{Format, Message};

use super::eval::{Base, Key, Overlay, Splunk, Stage, State};
use super::gate::{Gate, Memo, View};
use super::ir::{Context, Tmpl};
pub(crate) use super::names::id::{NS_TIME_ZONE, NS_USE_RECV_TIME};
use super::names::{NameId, id};
use super::program::{PROJECTED, Program};

/// The local part of a classification: what local applications left, and the program that
/// names it.
#[derive(Clone, Copy, Debug)]
pub struct LocalRef<'m, 't> {
    pub(crate) overlay: &'m Overlay<'m>,
    pub(crate) program: &'t Program,
}

/// Indexed fields the encoder writes itself (a local value for one would be a second key).
const OWN_FIELDS: [&str; 12] = [
    "sc4s_vendor",
    "sc4s_product",
    "sc4s_class",
    "sc4s_syslog_facility",
    "sc4s_syslog_severity",
    "sc4s_container",
    "sc4s_loghost",
    "sc4s_destport",
    "sc4s_fromhostip",
    "sc4s_proto",
    "sc4s_recv_time",
    "sc4s_tags",
];

/// Tags SC4S's own library sets; sluice's `sc4s_tags` names them by its own rules.
fn library_tag(t: &[u8]) -> bool {
    t == b"vps"
        || t == b"source_identified"
        || t.starts_with(b"ns_vendor:")
        || t.starts_with(b"ns_product:")
        || t.starts_with(b"wireformat:")
        || t.starts_with(b".source.")
        || t.starts_with(b".app.")
}

impl<'m, 't: 'm> LocalRef<'m, 't> {
    /// `fields.<name>` set by local applications, as (name, value), in the order set.
    pub fn fields(&self) -> impl Iterator<Item = (&'m str, &'m [u8])> + '_ {
        let names = &self.program.names;
        let o = self.overlay;
        o.nv.iter().enumerate().filter_map(move |(i, (k, v))| {
            let field: &'m str = match *k {
                Key::Id(n) => names.name(n).strip_prefix("fields.")?,
                // UTF-8 by construction (`Key::Dyn`): the check never drops a field. A
                // field's name is whole in one part (see `Key::Dyn`).
                Key::Dyn(b"fields.", r) => std::str::from_utf8(r).ok()?,
                Key::Dyn(b"", r) => std::str::from_utf8(r.strip_prefix(b"fields.")?).ok()?,
                Key::Dyn(..) => return None,
            };
            let v = (*v)?;
            // A field set again is written once, where it was set last.
            (!field.is_empty() && !OWN_FIELDS.contains(&field) && o.latest(i)).then_some((field, v))
        })
    }

    /// Tags set by local applications (other than the ones SC4S's library sets).
    pub fn tags(&self) -> impl Iterator<Item = &'m [u8]> + '_ {
        self.overlay
            .tags
            .iter()
            .filter(|(t, on)| *on && !t.is_empty() && !library_tag(t))
            .map(|(t, _)| *t)
    }

    /// The local application that took the message last.
    pub fn app(&self) -> Option<&'t str> {
        let i = self.overlay.app?;
        self.program.apps.get(i as usize).map(|a| a.name.as_str())
    }

    /// Whether the event is to be dropped from Splunk (`r_set_dest_splunk_null_queue`).
    pub fn null_queue(&self) -> bool {
        self.overlay
            .tags
            .iter()
            .rev()
            .find(|(t, _)| *t == b"dest_splunk:null_queue")
            .is_some_and(|(_, on)| *on)
    }
}

/// The Splunk metadata as the pipeline holds it in `out`.
fn splunk_of<'m, 'a>(out: &'a Out<'m>, program: &'a Program) -> Splunk<'a> {
    let key = out.key.map(|(_, k)| k);
    let stat = |s: &'static str| (!s.is_empty()).then_some(Value::Static(s));
    Splunk {
        index: out.index.or_else(|| key.and_then(|k| stat(k.index))),
        sourcetype: out
            .sourcetype
            .or_else(|| key.and_then(|k| stat(k.sourcetype))),
        source: out.source.or(match key.map(|k| k.source) {
            Some(Source::Static(s)) => Some(Value::Static(s)),
            _ => None,
        }),
        template: out
            .template
            .or_else(|| key.and_then(|k| k.template))
            .map(|t| template_name(t, program)),
        vendor: out.vendor.or_else(|| key.and_then(|k| stat(k.vendor))),
        product: out.product.or_else(|| key.and_then(|k| stat(k.product))),
        class: out
            .class
            .or_else(|| key.and_then(|k| k.class).map(Value::Static)),
    }
}

fn template_name(t: Template, program: &Program) -> &str {
    match t {
        Template::Local(i) => program
            .templates
            .get(usize::from(i))
            .map_or("", |(n, _)| n.as_str()),
        t => t.sc4s_name(),
    }
}

/// The template an SC4S template name stands for.
pub(crate) fn template_for(name: &[u8], program: &Program) -> Option<Template> {
    // SC4S's own names first, as bytes: almost every application names one of them.
    if let Some(t) = Template::from_sc4s_bytes(name) {
        return Some(t);
    }
    let name = std::str::from_utf8(name).ok()?;
    program
        .template_by_name(name)
        .and_then(|i| u16::try_from(i).ok())
        .map(Template::Local)
}

/// The view of a message being classified, for an application of `context`.
#[inline]
pub(crate) fn base_of_input<'m: 'a, 'a>(
    input: &'a Input<'m, 'a>,
    out: &'a Out<'m>,
    stage: Stage,
    sub: Option<&'a str>,
    program: &'a Program,
) -> Base<'m, 'a> {
    let msg = input.msg;
    let (host, program_f, pid, message, stamp) = match stage {
        Stage::NoParse => (None, None, None, msg.raw, None),
        Stage::Parsed => (
            match out.host {
                HostEdit::Set(Value::Bytes(b)) => Some(b),
                HostEdit::Set(Value::Static(s)) => Some(s.as_bytes()),
                HostEdit::Set(Value::Inline(_) | Value::Concat(..)) | HostEdit::Keep => input.host,
                HostEdit::SourceIp => None,
            },
            input.program,
            input.pid,
            input.body_in(out),
            match out.time {
                TimeEdit::Stamp(t) => Some(t),
                TimeEdit::Keep => msg.timestamp,
                TimeEdit::Recv => None,
            },
        ),
    };
    let app = out.app.or_else(|| {
        let i = out.local?.app?;
        program.apps.get(i as usize).map(|a| a.name.as_str())
    });
    Base {
        msg,
        src: input.src,
        now: input.now_unix_secs,
        zone: input.zone,
        loghost: input.loghost,
        stage,
        format: out.format.unwrap_or(msg.format),
        host,
        program: program_f,
        pid,
        message,
        stamp,
        netsource: input.netsource,
        splunk: splunk_of(out, program),
        identified: out.identified,
        app,
        sub: sub.map(|s| (s, &out.nv)),
        values: out.values,
        overlay: out.local,
    }
}

/// Runs local application `app` on a message being classified; `true` (and `out`
/// changed) when it took the message.
pub(crate) fn run_app<'m>(
    program: &'m Program,
    app: u32,
    input: &Input<'m, '_>,
    out: &mut Out<'m>,
    stage: Stage,
    sub: Option<&str>,
) -> bool {
    let Some(arena) = input.arena else {
        return false;
    };
    let a = &program.apps[app as usize];
    let taken = {
        let base = base_of_input(input, out, stage, sub, program);
        let mut st = State::new(program, arena, base);
        st.metadata = Some(input.metadata);
        let ok = a.filter.as_ref().is_none_or(|f| st.filter(f)) && st.run(&a.parser);
        ok.then(|| Changes::of(&mut st, Some(app)))
    };
    match taken {
        Some(c) => {
            c.apply(out, program);
            true
        }
        None => false,
    }
}

/// What an application that took a message changed, out of its state.
struct Changes<'m> {
    /// The latest value of each projected field the application set, by id (a later set
    /// of the same field wins, as in the classification it is written to).
    fields: [Option<Option<&'m [u8]>>; PROJECTED],
    stamp: Option<crate::message::Timestamp>,
    identified: bool,
    overlay: &'m Overlay<'m>,
}

impl<'m> Changes<'m> {
    fn of<'p: 'm>(st: &mut State<'p, 'm, '_>, app: Option<u32>) -> Changes<'m> {
        let identified = st
            .tags
            .iter()
            .rev()
            .find(|(t, _)| *t == b"source_identified")
            .is_some_and(|(_, on)| *on);
        let stamp = st.stamp;
        let mut fields = [None; PROJECTED];
        let overlay = st.commit(app, |n, v| {
            if let Some(slot) = fields.get_mut(n as usize) {
                *slot = Some(v);
            }
        });
        Changes {
            fields,
            stamp,
            identified,
            overlay,
        }
    }

    /// Writes the changes into a classification in progress.
    /// The projected fields set, as (id, value).
    fn set_fields(&self) -> impl Iterator<Item = (NameId, Option<&'m [u8]>)> + '_ {
        self.fields
            .iter()
            .enumerate()
            .filter_map(|(n, v)| v.map(|v| (n as NameId, v)))
    }

    fn apply(self, out: &mut Out<'m>, program: &Program) {
        for (n, v) in self.set_fields() {
            let nonempty = v.filter(|v| !v.is_empty());
            match n {
                id::HOST => out.host = HostEdit::Set(Value::Bytes(v.unwrap_or_default())),
                id::PROGRAM => out.program = Some(nonempty),
                id::PID => out.pid = Some(nonempty),
                id::MESSAGE => out.message = Some(Value::Bytes(v.unwrap_or_default())),
                // Empty ones get SC4S's defaults (`r_set_splunk_default`).
                id::INDEX => out.index = Some(nonempty.map_or(Value::Static("main"), Value::Bytes)),
                id::SOURCETYPE => {
                    out.sourcetype =
                        Some(nonempty.map_or(Value::Static("sc4s:unknown"), Value::Bytes))
                }
                id::SOURCE => out.source = nonempty.map(Value::Bytes),
                id::TEMPLATE => out.template = nonempty.and_then(|t| template_for(t, program)),
                id::VENDOR => out.vendor = nonempty.map(Value::Bytes),
                id::PRODUCT => out.product = nonempty.map(Value::Bytes),
                id::CLASS => out.class = nonempty.map(Value::Bytes),
                _ => {}
            }
        }
        if let Some(ts) = self.stamp {
            out.time = TimeEdit::Stamp(ts);
        }
        if self.identified {
            out.identified = true;
        }
        if let Some(f) = format_of(self.overlay) {
            out.format = Some(f);
        }
        if self.overlay.app.is_some() {
            out.app = None;
        }
        out.local = Some(self.overlay);
    }
}

/// PROGRAM, PID, MESSAGE and HOST of a message as the applications of a context read them.
pub(crate) struct Fields<'m> {
    pub program: Option<&'m [u8]>,
    pub pid: Option<&'m [u8]>,
    pub body: &'m [u8],
    pub host: Option<&'m [u8]>,
}

/// Whether some application of `context` may take the message (the contexts not
/// dispatched with the built-ins: `sc4s-vps`, `fallback`): their gate, checked before an
/// input is built for [`run_context`].
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn context_admits(
    program: &Program,
    context: &Context,
    fields: &Fields<'_>,
    vendor_product: &str,
    src: &SourceMeta<'_>,
    raw: &[u8],
    out: &Out<'_>,
    memo: &Memo,
) -> bool {
    let Some((_, gate)) = program.context(context) else {
        return false;
    };
    // An earlier local application may have changed what the atoms read: no gate then.
    out.local.is_some()
        || gate.admits_memo(
            &View {
                program: fields.program,
                body: Some(fields.body),
                host: fields.host,
                no_host_holds: false,
                vendor_product: Some(vendor_product),
                raw,
                tokens_hold: false,
                ip: src.source_ip,
            },
            memo,
        )
}

/// Runs the applications of `context` in order until one takes the message (after
/// [`context_admits`]).
pub(crate) fn run_context<'m>(
    program: &'m Program,
    context: &Context,
    input: &Input<'m, '_>,
    out: &mut Out<'m>,
) -> bool {
    let Some((apps, _)) = program.context(context) else {
        return false;
    };
    for &i in apps {
        if !prefilter_holds(&program.apps[i as usize], input, out) {
            continue;
        }
        if run_app(program, i, input, out, Stage::Parsed, None) {
            return true;
        }
    }
    false
}

/// Whether application `a`'s atoms admit the message (checked one by one: for the
/// contexts that are not in the dispatcher's tables).
pub(crate) fn prefilter_holds(
    a: &super::program::LocalApp,
    input: &Input<'_, '_>,
    out: &Out<'_>,
) -> bool {
    use super::prefilter::Atom;
    let Some(atoms) = &a.atoms else {
        return true;
    };
    if out.local.is_some() {
        // An earlier local application may have changed what the atoms read.
        return true;
    }
    let host = input.host;
    let fields = atoms.iter().any(|atom| match atom {
        Atom::Program(p) => input.program == Some(&p[..]),
        Atom::ProgramPrefix(p) => input.program.is_some_and(|x| x.starts_with(p)),
        Atom::BodyPrefix(p) => input.body_in(out).starts_with(p),
        // Searched below, with the searchers built at load.
        Atom::Token(_) => false,
        Atom::HostExact(h) => host.is_some_and(|x| x.eq_ignore_ascii_case(h)),
        Atom::HostPrefix(h) => {
            host.is_some_and(|x| x.len() >= h.len() && x[..h.len()].eq_ignore_ascii_case(h))
        }
        Atom::NetSource(v) => input.netsource.vendor_product == &**v,
        Atom::Net { net, mask } => {
            let ip = match input.src.source_ip.to_canonical() {
                std::net::IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
                std::net::IpAddr::V6(v6) => u128::from(v6),
            };
            ip & mask == *net
        }
    });
    fields || a.tokens.iter().any(|f| f.find(input.msg.raw).is_some())
}

/// The fields a classified message's atoms read (see [`class_prefilter_holds`]), those
/// `gate` reads only: finding the finished MESSAGE and HOST cost more than most gates'
/// checks (a PROGRAM-only gate reads neither).
#[inline]
fn class_view<'a>(
    msg: &'a Message<'_>,
    src: &SourceMeta<'_>,
    class: &'a Classification<'_, '_>,
    gate: &Gate,
) -> View<'a> {
    let (program, body) = if gate.reads_body() {
        let (program, _, message) = final_fields(msg, class);
        let two_part = matches!(class.edit.message, Some(Value::Concat(..)));
        (program, (!two_part).then_some(message))
    } else if gate.reads_program() {
        (final_program(class), None)
    } else {
        (None, None)
    };
    View {
        program,
        body,
        host: if gate.reads_host() {
            class.host_bytes(msg)
        } else {
            None
        },
        no_host_holds: true,
        vendor_product: None,
        raw: msg.raw,
        tokens_hold: class.edit.message.is_some() || class.edit.program.is_some(),
        ip: src.source_ip,
    }
}

/// Whether application `a`'s atoms admit a classified message (`sc4s-postfilter`,
/// `sc4s-finalfilter`, selectors): the fields its filter reads are the finished ones, so a
/// message no application of the context can match builds no state and renders nothing.
/// Where the finished fields cannot be told cheaply (an overlay that may shadow them, an
/// edited or two-part MESSAGE, no HOST) the atom holds.
pub(crate) fn class_prefilter_holds(
    a: &super::program::LocalApp,
    msg: &Message<'_>,
    src: &SourceMeta<'_>,
    class: &Classification<'_, '_>,
) -> bool {
    use super::prefilter::Atom;
    let Some(atoms) = &a.atoms else {
        return true;
    };
    if class.local.is_some() {
        return true;
    }
    let (program, _, message) = final_fields(msg, class);
    let two_part = matches!(class.edit.message, Some(Value::Concat(..)));
    let edited = class.edit.message.is_some() || class.edit.program.is_some();
    let host = class.host_bytes(msg);
    let fields = atoms.iter().any(|atom| match atom {
        Atom::Program(p) => program == Some(&p[..]),
        Atom::ProgramPrefix(p) => program.is_some_and(|x| x.starts_with(p)),
        Atom::BodyPrefix(p) => two_part || message.starts_with(p),
        Atom::Token(_) => edited,
        Atom::HostExact(h) => host.is_none_or(|x| x.eq_ignore_ascii_case(h)),
        Atom::HostPrefix(h) => {
            host.is_none_or(|x| x.len() >= h.len() && x[..h.len()].eq_ignore_ascii_case(h))
        }
        // The class view has no listener netsource: the filter decides.
        Atom::NetSource(_) => true,
        Atom::Net { net, mask } => {
            let ip = match src.source_ip.to_canonical() {
                std::net::IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
                std::net::IpAddr::V6(v6) => u128::from(v6),
            };
            ip & mask == *net
        }
    });
    fields || a.tokens.iter().any(|f| f.find(msg.raw).is_some())
}

/// The netsource a `sc4s-vps` application set, as strings borrowed from the overlay.
pub(crate) fn overlay_netsource<'m>(o: &Overlay<'m>) -> Option<(&'m [u8], &'m [u8], &'m [u8])> {
    let get = |n| o.get(n).flatten().unwrap_or_default();
    let vp = get(id::NS_VENDOR_PRODUCT);
    if vp.is_empty() {
        return None;
    }
    Some((get(id::NS_VENDOR), get(id::NS_PRODUCT), vp))
}

/// PROGRAM of a classified message, as [`final_fields`] finds it.
#[inline]
fn final_program<'m: 'a, 'a>(class: &'a Classification<'m, '_>) -> Option<&'a [u8]> {
    use crate::classify::Rewrite;
    match class.edit.program {
        Some(p) => p.filter(|p| !p.is_empty()),
        None => match class.rewrite {
            Rewrite::None => class.view.program,
            Rewrite::InvalidProgram(_) | Rewrite::InvalidHost => None,
        },
    }
}

/// PROGRAM, PID and MESSAGE of a classified message, after the header repairs and edits
/// (MESSAGE as one slice: a repaired header is contiguous with its body in the raw
/// message; a two-part edit yields its first part).
#[inline]
fn final_fields<'m: 'a, 'a>(
    msg: &'a Message<'m>,
    class: &'a Classification<'m, '_>,
) -> (Option<&'a [u8]>, Option<&'a [u8]>, &'a [u8]) {
    use crate::classify::Rewrite;
    let v = class.view;
    let body = v.message.unwrap_or_default();
    let (mut pid, mut message) = match class.rewrite {
        Rewrite::None => (v.pid, body),
        Rewrite::InvalidProgram(_) => (
            None,
            v.program
                .and_then(|p| crate::classify::span(msg.raw, p, body))
                .unwrap_or(body),
        ),
        Rewrite::InvalidHost => (
            None,
            msg.hostname
                .and_then(|h| crate::classify::span(msg.raw, h, body))
                .unwrap_or(body),
        ),
    };
    let program = final_program(class);
    if let Some(p) = class.edit.pid {
        pid = p.filter(|p| !p.is_empty());
    }
    if let Some(m) = &class.edit.message {
        message = match m {
            Value::Bytes(b) => b,
            Value::Static(s) => s.as_bytes(),
            Value::Concat(h, _) => h.as_bytes(),
            Value::Inline(i) => i.as_bytes(),
        };
    }
    (program, pid, message)
}

/// What the applications that run on a classified message read beside it, built once per
/// message by the classifier and passed by reference.
pub(crate) struct OnClass<'m, 't, 'a> {
    pub program: &'t Program,
    pub msg: &'a Message<'m>,
    pub src: &'a SourceMeta<'a>,
    pub now: i64,
    pub zone: &'a crate::time::Zone,
    pub loghost: &'a str,
    pub arena: &'m bumpalo::Bump,
    pub metadata: &'a Metadata,
}

impl<'m, 't: 'm, 'a> OnClass<'m, 't, 'a> {
    /// Runs `context`'s applications on the classified message until one takes it,
    /// writing its changes into the classification. `true` when one took it.
    /// Inlined up to the gate: most messages stop there, and the call cost as much.
    #[inline(always)]
    pub(crate) fn run(&self, context: &Context, class: &mut Classification<'m, 't>) -> bool {
        let Some((apps, gate)) = self.program.context(context) else {
            return false;
        };
        if class.local.is_none() && !gate.admits(&class_view(self.msg, self.src, class, gate)) {
            return false;
        }
        self.run_apps(apps, class)
    }

    fn run_apps(&self, apps: &[u32], class: &mut Classification<'m, 't>) -> bool {
        let program = self.program;
        for &i in apps {
            let a = &program.apps[i as usize];
            if !class_prefilter_holds(a, self.msg, self.src, class) {
                continue;
            }
            let changes = {
                let mut st = self.state(class);
                let ok = a.filter.as_ref().is_none_or(|f| st.filter(f)) && st.run(&a.parser);
                ok.then(|| Changes::of(&mut st, Some(i)))
            };
            if let Some(c) = changes {
                apply_class(c, class, program);
                return true;
            }
        }
        false
    }

    /// The event text of a template only local evaluation renders (a local template, or
    /// `t_json_values`/`t_kv_values` over values local applications set).
    pub(crate) fn render_text(&self, t: &'t Tmpl, class: &Classification<'m, 't>) -> &'m [u8] {
        self.state(class).render(t)
    }

    /// Whether a selector of `destination` picks the classified message: one of the
    /// applications of `sc4s-lp-dest-select-<destination>` takes it (and none of
    /// `sc4s-lp-dest-select-drop-<destination>` does).
    pub(crate) fn selects(&self, destination: &str, class: &Classification<'m, 't>) -> Selection {
        let mut selected = false;
        let mut dropped = false;
        let mut any = false;
        for (i, a) in self.program.apps.iter().enumerate() {
            let (drop, d) = match &a.context {
                Context::Select(d) => (false, d),
                Context::SelectDrop(d) => (true, d),
                _ => continue,
            };
            if d != destination || (drop && dropped) || (!drop && selected) {
                continue;
            }
            any |= !drop;
            if self.selector_takes(i as u32, class) {
                if drop {
                    dropped = true;
                } else {
                    selected = true;
                }
            }
        }
        Selection {
            has_selectors: any,
            selected,
            dropped,
        }
    }

    /// Whether application `app` (a selector, [`Program::selectors`]) takes the classified
    /// message: its filter matches and its parsers succeed. Any other index takes nothing.
    pub(crate) fn selector_takes(&self, app: u32, class: &Classification<'m, 't>) -> bool {
        let Some(a) = self.program.apps.get(app as usize) else {
            return false;
        };
        if !matches!(a.context, Context::Select(_) | Context::SelectDrop(_))
            || !class_prefilter_holds(a, self.msg, self.src, class)
        {
            return false;
        }
        let mut st = self.state(class);
        a.filter.as_ref().is_none_or(|f| st.filter(f)) && st.run(&a.parser)
    }

    /// Whether the named filter `id` ([`Program::filter_id`]) matches the classified message.
    pub(crate) fn named_filter_matches(&self, id: u32, class: &Classification<'m, 't>) -> bool {
        let Some(f) = self.program.filters.get(id as usize) else {
            return false;
        };
        self.state(class).filter(f)
    }

    /// An evaluation of the classified message, as every context after classification
    /// sees it (LOGHOST and the context's metadata included).
    fn state<'b>(&'b self, class: &'b Classification<'m, 't>) -> State<'t, 'm, 'b> {
        let mut st = State::new(self.program, self.arena, self.base(class));
        st.metadata = Some(self.metadata);
        st
    }

    /// The view of the classified message (`sc4s-postfilter`, `sc4s-finalfilter`,
    /// selectors, named filters).
    #[inline]
    fn base<'b>(&'b self, class: &'b Classification<'m, 't>) -> Base<'m, 'b> {
        let (program, pid, message) = final_fields(self.msg, class);
        Base {
            msg: self.msg,
            src: self.src,
            now: self.now,
            zone: self.zone,
            loghost: self.loghost,
            stage: Stage::Parsed,
            format: class.format,
            host: class.host_bytes(self.msg),
            program,
            pid,
            message,
            stamp: class.timestamp(self.msg),
            netsource: Default::default(),
            splunk: Splunk {
                index: Some(class.index),
                sourcetype: Some(class.sourcetype),
                source: Some(class.source),
                template: Some(template_name(class.template, self.program)),
                vendor: Some(class.vendor),
                product: Some(class.product),
                class: class.class,
            },
            identified: true,
            app: Some(class.app),
            sub: None,
            values: class.values,
            overlay: class.local.map(|l| l.overlay),
        }
    }
}

fn apply_class<'m, 't: 'm>(
    c: Changes<'m>,
    class: &mut Classification<'m, 't>,
    program: &'t Program,
) {
    for (n, v) in c.set_fields() {
        let nonempty = v.filter(|v| !v.is_empty());
        match n {
            id::HOST => class.host = HostEdit::Set(Value::Bytes(v.unwrap_or_default())),
            id::PROGRAM => class.edit.program = Some(nonempty),
            id::PID => class.edit.pid = Some(nonempty),
            id::MESSAGE => class.edit.message = Some(Value::Bytes(v.unwrap_or_default())),
            id::INDEX => class.index = nonempty.map_or(Value::Static("main"), Value::Bytes),
            id::SOURCETYPE => {
                class.sourcetype = nonempty.map_or(Value::Static("sc4s:unknown"), Value::Bytes)
            }
            id::SOURCE => class.source = nonempty.map_or(Value::Static("sc4s"), Value::Bytes),
            id::TEMPLATE => {
                if let Some(t) = nonempty.and_then(|t| template_for(t, program)) {
                    class.template = t;
                }
            }
            id::VENDOR => class.vendor = v.map_or(Value::Static(""), Value::Bytes),
            id::PRODUCT => class.product = v.map_or(Value::Static(""), Value::Bytes),
            id::CLASS => class.class = nonempty.map(Value::Bytes),
            _ => {}
        }
    }
    if let Some(ts) = c.stamp {
        class.time = TimeEdit::Stamp(ts);
    }
    class.local = Some(LocalRef {
        overlay: c.overlay,
        program,
    });
    if let Some(name) = class.local.and_then(|l| l.app()) {
        class.app = name;
    }
}

/// What the selectors of one destination say about an event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The destination has `sc4s-lp-dest-select-` applications.
    pub has_selectors: bool,
    /// One of them took the event.
    pub selected: bool,
    /// A `sc4s-lp-dest-select-drop-` application took it: not for this destination.
    pub dropped: bool,
}

/// Whether the overlay holds values the `*_values` templates render.
pub(crate) fn has_values(l: &LocalRef<'_, '_>) -> bool {
    l.overlay.nv.iter().enumerate().any(|(i, (k, v))| {
        v.is_some()
            && {
                let with = |pat: &[u8]| match *k {
                    Key::Id(n) => l.program.names.name(n).as_bytes().starts_with(pat),
                    Key::Dyn(..) => k.dyn_starts_with(pat),
                };
                with(b".values.") || with(b".metadata.") || with(b".SDATA.")
            }
            && l.overlay.latest(i)
    })
}

/// The format of a message as a local application left it (`wireformat:*` tags set by an
/// almost-syslog application).
pub(crate) fn format_of(o: &Overlay<'_>) -> Option<Format> {
    let on = |t: &[u8]| {
        o.tags
            .iter()
            .rev()
            .find(|(x, _)| *x == t)
            .is_some_and(|(_, on)| *on)
    };
    if on(b"wireformat:rfc5424") {
        Some(Format::Rfc5424)
    } else if on(b"wireformat:rfc3164") || on(b"wireformat:rfc") {
        Some(Format::Rfc3164)
    } else if on(b"wireformat:raw") {
        Some(Format::Unparsed)
    } else {
        None
    }
}
