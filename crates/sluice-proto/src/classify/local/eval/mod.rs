//! Running compiled statements on one message.
//!
//! The state of a running application is what it changed: name-value pairs set or unset,
//! tags, the stamp, the PRI, the last match groups. Reads fall through to the [`Base`].
//! Every change is appended, so a branch that fails (a filter that does not hold, a parser
//! that cannot parse) is undone by truncating back to a checkpoint, as syslog-ng gives each
//! branch of a junction its own copy of the message. Everything lives in the per-message
//! arena: a message no local application touches costs nothing here, one that is touched
//! allocates from memory the arena keeps between messages.

pub(crate) mod base;
mod json;
mod parsers;
mod template;

use bumpalo::Bump;
use bumpalo::collections::Vec as BVec;

use crate::message::Timestamp;

use super::ir::{Filter, Pattern, Stmt, Subject, SubstPattern};
use super::names::{Macro, NameId, Reference, id};
use super::program::Program;
pub(crate) use base::{Base, Splunk, Stage};

/// A name-value pair's name: interned when some template or rewrite names it, else (a
/// key only a parser found, such as a kv-parser's) the text itself.
#[derive(Clone, Copy, Debug, Eq)]
pub(crate) enum Key<'m> {
    Id(NameId),
    /// The name is the first part followed by the second: a kv-parser's prefix and the key
    /// it found, neither copied per pair (a parser that found a dozen keys copied each name
    /// twice, by `memcpy` calls that cost more than the scan). Always UTF-8 (parsers' keys
    /// are, or are read lossily), kept as bytes so that a key needs no check.
    ///
    /// A name that starts with `fields.` has it whole in one part: an empty first part, or
    /// a first part of exactly `fields.` ([`LocalRef::fields`](super::run::LocalRef) reads
    /// them so; a kv-parser whose prefix overlaps `fields.` otherwise writes its names whole).
    Dyn(&'m [u8], &'m [u8]),
}

impl PartialEq for Key<'_> {
    // By hand, so that it is inlined into the searches of a state's pairs.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Key::Id(a), Key::Id(b)) => a == b,
            (Key::Dyn(ap, ar), Key::Dyn(bp, br)) => {
                if ap.len() == bp.len() {
                    ar == br && ap == bp
                } else {
                    ap.len() + ar.len() == bp.len() + br.len()
                        && ap.iter().chain(*ar).eq(bp.iter().chain(*br))
                }
            }
            _ => false,
        }
    }
}

impl Key<'_> {
    /// Whether a dynamic name starts with `pat` (an interned one: `false`).
    pub(crate) fn dyn_starts_with(&self, pat: &[u8]) -> bool {
        match *self {
            Key::Id(_) => false,
            Key::Dyn(p, r) => {
                if p.len() >= pat.len() {
                    p.starts_with(pat)
                } else {
                    pat.starts_with(p) && r.starts_with(&pat[p.len()..])
                }
            }
        }
    }
}

/// What local applications changed beyond the fields the built-in pipeline carries
/// (MESSAGE, HOST, the metadata, ...: those go into the classification as they are set).
#[derive(Clone, Copy, Debug, Default)]
pub struct Overlay<'m> {
    /// Name-value pairs by interned name, latest last (`None`: unset).
    pub(crate) nv: &'m [(Key<'m>, Option<&'m [u8]>)],
    /// Tags set (`true`) or cleared, latest last.
    pub(crate) tags: &'m [(&'m [u8], bool)],
    /// The local application that took the message last.
    pub(crate) app: Option<u32>,
}

impl<'m> Overlay<'m> {
    /// Whether entry `i` of `nv` is its name's latest (a name set again keeps its earlier
    /// entries: see [`State::commit`]).
    pub(crate) fn latest(&self, i: usize) -> bool {
        let k = self.nv[i].0;
        !self.nv[i + 1..].iter().any(|(x, _)| *x == k)
    }

    pub(crate) fn get(&self, n: NameId) -> Option<Option<&'m [u8]>> {
        self.nv
            .iter()
            .rev()
            .find(|(k, _)| matches!(k, Key::Id(i) if *i == n))
            .map(|(_, v)| *v)
    }
}

/// Where a branch started: what to truncate back to.
#[derive(Clone, Copy)]
pub(crate) struct Checkpoint {
    nv: usize,
    tags: usize,
    stamp: Option<Timestamp>,
    pri: Option<u8>,
    groups: usize,
}

/// The state of one application running on one message.
pub(crate) struct State<'p, 'm: 'a, 'a> {
    pub p: &'p Program,
    pub arena: &'m Bump,
    pub base: Base<'m, 'a>,
    pub nv: BVec<'m, (Key<'m>, Option<&'m [u8]>)>,
    pub tags: BVec<'m, (&'m [u8], bool)>,
    /// The stamp set by `date-parser()` / `syslog-parser()` / a time-zone rewrite.
    pub stamp: Option<Timestamp>,
    pub pri: Option<u8>,
    /// `$0`.. of the last match that stores its groups.
    pub groups: BVec<'m, Option<&'m [u8]>>,
    /// `splunk_metadata.csv`, for `p_add_context_splunk`.
    pub metadata: Option<&'a crate::classify::metadata::Metadata>,
    /// A bit per interned name ever set here (by id modulo 64; a rollback leaves the bits):
    /// a read of a name never set skips the search of `nv`.
    ids_set: u64,
}

impl<'p: 'm, 'm: 'a, 'a> State<'p, 'm, 'a> {
    pub fn new(p: &'p Program, arena: &'m Bump, base: Base<'m, 'a>) -> State<'p, 'm, 'a> {
        State {
            p,
            arena,
            base,
            // A parser sets a dozen or more pairs; growing from empty cost more than them.
            nv: BVec::with_capacity_in(32, arena),
            tags: BVec::new_in(arena),
            stamp: None,
            pri: None,
            groups: BVec::new_in(arena),
            metadata: None,
            ids_set: 0,
        }
    }

    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            nv: self.nv.len(),
            tags: self.tags.len(),
            stamp: self.stamp,
            pri: self.pri,
            groups: self.groups.len(),
        }
    }

    pub fn rollback(&mut self, c: Checkpoint) {
        self.nv.truncate(c.nv);
        self.tags.truncate(c.tags);
        self.stamp = c.stamp;
        self.pri = c.pri;
        self.groups.truncate(c.groups);
    }

    /// The current value of name `n`.
    pub fn get(&self, n: NameId) -> Option<&'a [u8]> {
        if let Some(v) = self.set_here(n) {
            return v.map(|v| v as &'a [u8]);
        }
        self.base.get(n, &self.p.names, self.arena)
    }

    /// The value of name `n` if this state set (or unset) it, with the message's lifetime.
    pub fn set_here(&self, n: NameId) -> Option<Option<&'m [u8]>> {
        if self.ids_set & (1 << (n % 64)) == 0 {
            return None;
        }
        self.nv
            .iter()
            .rev()
            .find(|(k, _)| matches!(k, Key::Id(i) if *i == n))
            .map(|(_, v)| *v)
    }

    pub fn set(&mut self, n: NameId, v: Option<&'m [u8]>) {
        self.set_key(Key::Id(n), v);
    }

    /// Sets a pair by its key.
    pub fn set_key(&mut self, key: Key<'m>, v: Option<&'m [u8]>) {
        if let Key::Id(n) = key {
            self.ids_set |= 1 << (n % 64);
        }
        self.nv.push((key, v));
    }

    /// Sets the pair named `name` (a parser's key): by id when the configuration names it.
    pub fn set_named(&mut self, name: &str, v: Option<&'m [u8]>) {
        let key = match self.p.names.get(name) {
            Some(n) => Key::Id(n),
            None => Key::Dyn(b"", self.arena.alloc_slice_copy(name.as_bytes())),
        };
        self.set_key(key, v);
    }

    /// `v` with the message's lifetime: a slice of the raw message is re-sliced from it,
    /// anything else is copied into the arena.
    pub fn keep(&self, v: &[u8]) -> &'m [u8] {
        let raw = self.base.msg.raw;
        let base = raw.as_ptr() as usize;
        if let Some(off) = (v.as_ptr() as usize).checked_sub(base)
            && off + v.len() <= raw.len()
        {
            return &raw[off..off + v.len()];
        }
        self.arena.alloc_slice_copy(v)
    }

    pub fn has_tag(&self, tag: &[u8]) -> bool {
        if let Some((_, on)) = self.tags.iter().rev().find(|(t, _)| *t == tag) {
            return *on;
        }
        self.base.has_tag(tag)
    }

    /// Runs statements in order; `false` as soon as one drops the message.
    pub fn run(&mut self, stmts: &'p [Stmt]) -> bool {
        stmts.iter().all(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &'p Stmt) -> bool {
        match s {
            Stmt::Filter(f) => self.filter(f),
            Stmt::If { branches, has_else } => {
                for b in branches {
                    let cp = self.checkpoint();
                    if self.run(b) {
                        return true;
                    }
                    self.rollback(cp);
                }
                !*has_else
            }
            Stmt::Chain(c) => {
                let p = self.p;
                self.run(&p.chains[*c as usize])
            }
            Stmt::Set { value, target, .. } => {
                let v = self.render(value);
                self.set_checked(*target, Some(v));
                true
            }
            Stmt::Unset { targets, .. } => {
                for t in targets {
                    self.set_checked(*t, None);
                }
                true
            }
            Stmt::GroupUnset { globs, .. } => {
                for n in self.matching_names(globs) {
                    self.set_named(&n, None);
                }
                true
            }
            Stmt::GroupSet { value, globs, .. } => {
                for n in self.matching_names(globs) {
                    let v = self.render(value);
                    self.set_named(&n, Some(v));
                }
                true
            }
            Stmt::Rename { from, to, .. } => {
                if let Some(v) = self.get(*from) {
                    let v = self.keep(v);
                    self.set(*to, Some(v));
                    self.set(*from, None);
                }
                true
            }
            Stmt::Subst {
                pattern,
                replacement,
                target,
                global,
                ..
            } => {
                self.subst(pattern, replacement, *target, *global);
                true
            }
            Stmt::SetTag(t) => {
                let t = self.render(t);
                self.tags.push((t, true));
                true
            }
            Stmt::ClearTag(t) => {
                let t = self.render(t);
                self.tags.push((t, false));
                true
            }
            Stmt::GuessTimeZone => {
                if let Some(ts) = self.current_stamp() {
                    self.stamp = Some(parsers::guess_zone(ts, self.base.now));
                }
                true
            }
            Stmt::FixTimeZone(z) | Stmt::SetTimeZone(z) => {
                let name = self.render(z);
                let Ok(zone) = std::str::from_utf8(name).map(crate::time::Zone::from_name) else {
                    return true;
                };
                let (Ok(zone), Some(ts)) = (zone, self.current_stamp()) else {
                    return true;
                };
                self.stamp = if matches!(s, Stmt::FixTimeZone(_)) {
                    crate::classify::vtime::fix_time_zone(ts, &zone).or(Some(ts))
                } else {
                    Some(Timestamp {
                        offset_secs: zone.offset_at(ts.unix_secs),
                        ..ts
                    })
                };
                true
            }
            Stmt::SetPri(t) | Stmt::SetFacility(t) | Stmt::SetSeverity(t) => {
                let v = self.render(t);
                let cur = self.current_pri();
                if let Some(p) = parsers::pri_rewrite(s, v, cur) {
                    self.pri = Some(p);
                }
                true
            }
            Stmt::Regexp(r) => self.regexp(r),
            Stmt::Kv(k) => self.kv(k),
            Stmt::Csv(c) => self.csv(c),
            Stmt::Date(d) => self.date(d),
            Stmt::Json(j) => self.json(j),
            Stmt::Syslog(p) => self.syslog(p),
            Stmt::SplunkMetadata => {
                self.splunk_metadata();
                true
            }
        }
    }

    /// Sets `n`, keeping the pairs syslog-ng keeps together consistent.
    fn set_checked(&mut self, n: NameId, v: Option<&'m [u8]>) {
        self.set(n, v);
    }

    fn current_stamp(&self) -> Option<Timestamp> {
        self.stamp.or(self.base.stamp)
    }

    pub fn current_pri(&self) -> u8 {
        self.pri.unwrap_or_else(|| {
            self.base
                .msg
                .priority
                .unwrap_or(crate::message::Priority::DEFAULT)
                .value()
        })
    }

    /// Names with a value that match one of `globs` (base, overlay and running state).
    fn matching_names(&mut self, globs: &[super::ir::Glob]) -> Vec<String> {
        self.all_names()
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| globs.iter().any(|g| g.matches(n)))
            .collect()
    }

    /// Every name with a value now, with the value (later changes win).
    pub fn all_names(&self) -> Vec<(String, &'a [u8])> {
        let mut v: Vec<(String, &'a [u8])> = Vec::new();
        self.base.names(self.arena, &mut v);
        let mut set = |name: &str, value: Option<&'a [u8]>| {
            v.retain(|(n, _)| n != name);
            if let Some(x) = value {
                v.push((name.to_owned(), x));
            }
        };
        let names = &self.p.names;
        let name_of = |k: &Key<'_>| match *k {
            Key::Id(n) => names.name(n).to_owned(),
            Key::Dyn(p, r) => String::from_utf8_lossy(&[p, r].concat()).into_owned(),
        };
        if let Some(o) = self.base.overlay {
            for (n, val) in o.nv {
                set(&name_of(n), val.map(|x| x as &'a [u8]));
            }
        }
        for (n, val) in self.nv.iter() {
            set(&name_of(n), val.map(|x| x as &'a [u8]));
        }
        // The fixed SC4S names with a value.
        for n in [
            id::INDEX,
            id::SOURCETYPE,
            id::SOURCE,
            id::VENDOR,
            id::PRODUCT,
            id::CLASS,
            id::NS_VENDOR,
            id::NS_PRODUCT,
            id::NS_VENDOR_PRODUCT,
        ] {
            let name = self.p.names.name(n);
            if !v.iter().any(|(x, _)| x == name)
                && let Some(val) = self.get(n)
            {
                v.push((name.to_owned(), val));
            }
        }
        v
    }

    pub fn filter(&mut self, f: &'p Filter) -> bool {
        match f {
            Filter::Const(b) => *b,
            Filter::And(v) => v.iter().all(|f| self.filter(f)),
            Filter::Or(v) => v.iter().any(|f| self.filter(f)),
            Filter::Not(f) => !self.filter(f),
            Filter::Named(i) => {
                let p = self.p;
                self.filter(&p.filters[*i as usize])
            }
            Filter::Match { subject, pattern } => {
                let v = self.subject(subject);
                self.pattern(pattern, v)
            }
            Filter::Netmask { net, mask } => {
                let ip = match self.base.src.source_ip.to_canonical() {
                    std::net::IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
                    std::net::IpAddr::V6(v6) => u128::from(v6),
                };
                ip & mask == *net
            }
            Filter::Facility(mask) => mask & (1 << (self.current_pri() >> 3)) != 0,
            Filter::Level(mask) => mask & (1 << (self.current_pri() & 7)) != 0,
            Filter::Tag(t) => self.has_tag(t),
            Filter::InList { subject, set } => {
                let v = self.subject(subject);
                set.contains(v)
            }
            Filter::Compare {
                left,
                op,
                numeric,
                right,
            } => {
                // A literal side is compared where it is, without a copy into the arena.
                let l = match left.as_literal() {
                    Some(l) => l,
                    None => self.render(left),
                };
                let r = match right.as_literal() {
                    Some(r) => r,
                    None => self.render(right),
                };
                op.holds(l, *numeric, r)
            }
        }
    }

    fn subject(&mut self, s: &'p Subject) -> &'a [u8] {
        match s {
            Subject::Ref(r) => self.reference(*r).unwrap_or_default(),
            Subject::Tmpl(t) => self.render(t),
            Subject::HdrMsg => {
                let hdr = self.macro_value(Macro::MsgHdr);
                let msg = self.get(id::MESSAGE).unwrap_or_default();
                if hdr.is_empty() {
                    return msg;
                }
                let mut v = BVec::with_capacity_in(hdr.len() + msg.len(), self.arena);
                v.extend_from_slice_copy(hdr);
                v.extend_from_slice_copy(msg);
                v.into_bump_slice()
            }
        }
    }

    fn pattern(&mut self, p: &'p Pattern, v: &'a [u8]) -> bool {
        match p {
            Pattern::Exact(x, ic) => {
                if *ic {
                    v.eq_ignore_ascii_case(x)
                } else {
                    v == &x[..]
                }
            }
            Pattern::Prefix(x, ic) => {
                v.len() >= x.len()
                    && if *ic {
                        v[..x.len()].eq_ignore_ascii_case(x)
                    } else {
                        v.starts_with(x)
                    }
            }
            Pattern::Substring(x, ic) => {
                if *ic {
                    v.windows(x.len().max(1)).any(|w| w.eq_ignore_ascii_case(x)) || x.is_empty()
                } else {
                    memchr::memmem::find(v, x).is_some()
                }
            }
            Pattern::Regex { re, store } => {
                if !*store {
                    return re.is_match(v);
                }
                match re.captures(v) {
                    Some((hay, groups)) => {
                        self.groups.clear();
                        let hay: &'m [u8] = match hay {
                            std::borrow::Cow::Borrowed(h) => self.keep(h),
                            std::borrow::Cow::Owned(o) => self.arena.alloc_slice_copy(&o),
                        };
                        for g in groups {
                            self.groups.push(g.map(|(s, e)| &hay[s..e]));
                        }
                        true
                    }
                    None => false,
                }
            }
        }
    }

    /// A template reference.
    pub fn reference(&mut self, r: Reference) -> Option<&'a [u8]> {
        match r {
            Reference::Name(n) => self.get(n),
            Reference::Macro(m) => Some(self.macro_value(m)),
            Reference::Group(g) => self
                .groups
                .get(usize::from(g))
                .copied()
                .flatten()
                .map(|v| v as &'a [u8]),
        }
    }

    /// The next match of a pattern with groups, which become `$1`.. for the replacement;
    /// `None` when the value is to be left as it is.
    fn subst_captures(
        &mut self,
        re: &super::re::Re,
        text: &'m [u8],
        at: usize,
    ) -> Option<Option<(usize, usize)>> {
        Some(match re.captures_from(text, at) {
            Some((hay, groups)) => {
                let hay: &'m [u8] = match hay {
                    std::borrow::Cow::Borrowed(h) => self.keep(h),
                    std::borrow::Cow::Owned(o) => {
                        // A lossy reading: replace in it from here on.
                        self.arena.alloc_slice_copy(&o)
                    }
                };
                if hay.len() != text.len() {
                    // The text was not UTF-8 and the backtracking engine read it
                    // lossily: offsets differ, leave the value as it is.
                    return None;
                }
                self.groups.clear();
                for g in &groups {
                    self.groups.push(g.map(|(s, e)| &hay[s..e]));
                }
                groups[0]
            }
            None => None,
        })
    }

    fn subst(
        &mut self,
        pattern: &'p SubstPattern,
        repl: &'p super::ir::Tmpl,
        target: NameId,
        global: bool,
    ) {
        let Some(text) = self.get(target) else {
            return;
        };
        let text: &'m [u8] = self.keep(text);
        let mut out = BVec::with_capacity_in(text.len(), self.arena);
        let mut at = 0;
        let mut changed = false;
        loop {
            let found = match pattern {
                SubstPattern::Literal(lit, ic) => {
                    if lit.is_empty() {
                        None
                    } else {
                        let hay = &text[at..];
                        let pos = if *ic {
                            hay.windows(lit.len())
                                .position(|w| w.eq_ignore_ascii_case(lit))
                        } else {
                            memchr::memmem::find(hay, lit)
                        };
                        pos.map(|p| {
                            self.groups.clear();
                            self.groups.push(Some(&text[at + p..at + p + lit.len()]));
                            (at + p, at + p + lit.len())
                        })
                    }
                }
                SubstPattern::Regex(re) => match re.find_plain(text, at) {
                    Some(found) => found.map(|(s, e)| {
                        self.groups.clear();
                        self.groups.push(Some(&text[s..e]));
                        (s, e)
                    }),
                    None => match self.subst_captures(re, text, at) {
                        Some(found) => found,
                        None => return,
                    },
                },
            };
            let Some((s, e)) = found else {
                break;
            };
            out.extend_from_slice_copy(&text[at..s]);
            let r = self.render(repl);
            out.extend_from_slice_copy(r);
            changed = true;
            if e == s {
                // An empty match: copy one byte and go on, or stop at the end.
                if e < text.len() {
                    out.push(text[e]);
                }
                at = e + 1;
            } else {
                at = e;
            }
            if !global || at > text.len() {
                break;
            }
        }
        if !changed {
            return;
        }
        if at < text.len() {
            out.extend_from_slice_copy(&text[at..]);
        }
        let v = out.into_bump_slice();
        self.set(target, Some(v));
    }

    fn splunk_metadata(&mut self) {
        let Some(md) = self.metadata else {
            return;
        };
        let val = |s: &Self, n| s.get(n).map(crate::classify::value::Value::Bytes);
        let (Some(vendor), Some(product)) = (val(self, id::VENDOR), val(self, id::PRODUCT)) else {
            return;
        };
        let class = val(self, id::CLASS).filter(|c| !c.is_empty());
        let l = md.lookup(&vendor, &product, class.as_ref());
        let sets = [
            (id::INDEX, l.index()),
            (id::SOURCETYPE, l.sourcetype()),
            (id::SOURCE, l.source()),
            (id::TEMPLATE, l.template().map(|t| t.sc4s_name())),
        ];
        for (n, v) in sets {
            if let Some(v) = v {
                let v = self.arena.alloc_slice_copy(v.as_bytes());
                self.set(n, Some(v));
            }
        }
    }

    /// The changes of a successful application, over the base's overlay: the overlay the
    /// classification carries on. Each projected field set (the ones written into the
    /// classification itself) goes to `projected`, in the order set, and not into the
    /// overlay.
    ///
    /// A name set again is not searched for and removed: the overlay's readers take the
    /// latest entry of a name ([`Overlay::get`], [`Overlay::latest`]). A parser's pairs are
    /// mostly new names, and the search cost more than the parser.
    ///
    /// It takes the state's pairs (the state is done): by `&mut`, as moving the whole state
    /// here cost a copy of it.
    pub fn commit(
        &mut self,
        app: Option<u32>,
        mut projected: impl FnMut(NameId, Option<&'m [u8]>),
    ) -> &'m Overlay<'m> {
        let earlier = self.base.overlay.map_or(&[][..], |o| o.nv);
        let mut nv = std::mem::replace(&mut self.nv, BVec::new_in(self.arena));
        nv.retain(|&(k, v)| match k {
            Key::Id(i) if super::program::projected(i) => {
                projected(i, v);
                false
            }
            _ => true,
        });
        let nv: &'m [(Key<'m>, Option<&'m [u8]>)] = if earlier.is_empty() {
            nv.into_bump_slice()
        } else {
            let mut all = BVec::with_capacity_in(earlier.len() + nv.len(), self.arena);
            all.extend_from_slice_copy(earlier);
            all.extend_from_slice_copy(&nv);
            all.into_bump_slice()
        };
        let mut tags: BVec<'m, (&'m [u8], bool)> = BVec::new_in(self.arena);
        if let Some(o) = self.base.overlay {
            tags.extend_from_slice_copy(o.tags);
        }
        for &(t, on) in self.tags.iter() {
            tags.retain(|(k, _)| *k != t);
            tags.push((t, on));
        }
        let app = app.or(self.base.overlay.and_then(|o| o.app));
        self.arena.alloc(Overlay {
            nv,
            tags: tags.into_bump_slice(),
            app,
        })
    }
}
