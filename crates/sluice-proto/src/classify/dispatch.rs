//! Which applications run for a message: per-topic tables built once from the active
//! vendors, and one scan of the raw message for the [`When::Token`]s of every main topic
//! (Teddy, a SIMD searcher, or an Aho-Corasick DFA; leftmost-longest, resumed after each
//! match's start: every token occurring anywhere is found without an overlapping walk).
//!
//! Per message and topic that runs: the union of the applications whose PROGRAM, MESSAGE
//! prefix, token, raw check, [`When::Check`] or `vendor_product` matched plus the topic's
//! [`When::Always`] ones, in SC4S order. Only those parse functions run. The token scan runs
//! at most once per message, when the first topic with token applications needs it (every
//! topic scans the same raw bytes). A disabled vendor's applications are in no table.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind, packed};

use super::local::prefilter::Atom;
use super::local::{self, Context, Program, Stage};
use super::registry::{App, Check, Input, Out, Shape, SubTopics, Topic, Vendor, When};

/// The main topics, indexed by [`main_slot`].
const MAIN_TOPICS: [Topic; 6] = [
    Topic::AlmostSyslog,
    Topic::Raw,
    Topic::Sdata,
    Topic::Pgm,
    Topic::Syslog,
    Topic::NetSource,
];

fn main_slot(t: Topic) -> Option<usize> {
    MAIN_TOPICS.iter().position(|m| *m == t)
}

/// A [`When::Raw`] check.
type RawCheck = fn(&[u8]) -> bool;

/// One application of a topic: built in (vendor index, application) or the operator's
/// (index in the loaded [`Program`]).
#[derive(Clone, Copy, Debug)]
enum Entry {
    Builtin(u16, &'static App),
    Local(u32),
}

#[derive(Debug, Default)]
struct TopicTable {
    /// The operator's applications first, in their order, then the built-ins in SC4S order.
    apps: Vec<Entry>,
    always: Vec<u16>,
    programs: HashMap<Box<[u8]>, Vec<u16>, BuildHasherDefault<Fnv>>,
    /// By first byte: a message only compares the prefixes that can match.
    program_prefixes: ByFirstByte,
    body_prefixes: ByFirstByte,
    netsource: Vec<(Box<str>, u16)>,
    /// With the slot of [`TokenHits::raw`] that keeps the check's answer when several
    /// applications (of any main topic) declare the same check.
    raw_checks: Vec<(RawCheck, u16, Option<u8>)>,
    /// The operator's applications' HOST atoms: (prefix?, lower-case text, application).
    hosts: Vec<(bool, Box<[u8]>, u16)>,
    /// Their netmask atoms.
    nets: Vec<(u128, u128, u16)>,
    /// Local token id (see [`Engine::local_scan`]) → applications.
    local_by_token: Vec<Vec<u16>>,
    /// The operator's applications (their indices in `apps`): what runs them all when an
    /// earlier one changed the fields their atoms read.
    locals: Vec<u16>,
    /// [`When::Header`] checks: the shape bits one of which they need.
    header_checks: Vec<(Shape, RawCheck, u16)>,
    checks: Vec<(Check, &'static App, u16)>,
    /// Global token id (see [`TokenScan`]) → the applications that listed it; empty when
    /// the topic has no token applications.
    by_token: Vec<Vec<u16>>,
    /// Which PROGRAMs can be in [`TopicTable::programs`]: by first byte and by length (bit
    /// `len`, lengths of 63 and more share bit 63). Most messages' PROGRAMs are no vendor's,
    /// and two bit tests are cheaper than hashing the name.
    program_first: [u64; 4],
    program_lens: u64,
}

/// Bit `b` of a 256-bit set.
fn has_bit(set: &[u64; 4], b: u8) -> bool {
    set[usize::from(b >> 6)] & (1 << (b & 63)) != 0
}

fn length_bit(len: usize) -> u64 {
    1 << len.min(63)
}

impl TopicTable {
    fn add(&mut self, vendor: u16, app: &'static App) {
        self.apps.push(Entry::Builtin(vendor, app));
    }

    fn program(&mut self, name: &[u8], i: u16) {
        self.programs.entry(name.into()).or_default().push(i);
        if let Some(&b) = name.first() {
            self.program_first[usize::from(b >> 6)] |= 1 << (b & 63);
        }
        self.program_lens |= length_bit(name.len());
    }

    /// Sorts by SC4S order (stable: applications of one file keep their list order; the
    /// operator's come first, in theirs) and indexes the prefilters.
    fn finish(&mut self, program: Option<&Program>) {
        self.apps.sort_by_key(|e| match e {
            Entry::Local(_) => (0, ""),
            Entry::Builtin(_, a) => (1, a.order),
        });
        for (i, entry) in self.apps.clone().iter().enumerate() {
            let i = i as u16;
            let app = match entry {
                Entry::Builtin(_, app) => app,
                Entry::Local(l) => {
                    self.locals.push(i);
                    let atoms = program.and_then(|p| p.apps[*l as usize].atoms.as_ref());
                    match atoms {
                        None => self.always.push(i),
                        Some(atoms) => {
                            for a in atoms {
                                match a {
                                    Atom::Program(p) => self.program(p, i),
                                    Atom::ProgramPrefix(p) => self.program_prefixes.push(p, i),
                                    Atom::BodyPrefix(p) => self.body_prefixes.push(p, i),
                                    Atom::NetSource(v) => self.netsource.push((v.clone(), i)),
                                    Atom::HostExact(h) => self.hosts.push((false, h.clone(), i)),
                                    Atom::HostPrefix(h) => self.hosts.push((true, h.clone(), i)),
                                    Atom::Net { net, mask } => self.nets.push((*net, *mask, i)),
                                    // Indexed by `index_local_tokens`.
                                    Atom::Token(_) => {}
                                }
                            }
                        }
                    }
                    continue;
                }
            };
            match app.when {
                When::Always => self.always.push(i),
                When::Program(names) => {
                    for n in names {
                        self.program(n.as_bytes(), i);
                    }
                }
                When::ProgramPrefix(prefixes) => {
                    for p in prefixes {
                        self.program_prefixes.push(p.as_bytes(), i);
                    }
                }
                When::NetSource(vps) => {
                    for v in vps {
                        self.netsource.push((Box::from(*v), i));
                    }
                }
                When::BodyPrefix(prefixes) => {
                    for p in prefixes {
                        self.body_prefixes.push(p.as_bytes(), i);
                    }
                }
                When::Raw(check) => self.raw_checks.push((check, i, None)),
                When::Header(need, check) => self.header_checks.push((need, check, i)),
                When::Check(check) => self.checks.push((check, app, i)),
                When::Token(_) => {}
            }
        }
    }

    /// Fills [`TopicTable::local_by_token`] from the operator's token list.
    fn index_local_tokens(&mut self, patterns: &[Box<[u8]>], program: &Program) {
        let mut by_token = vec![Vec::new(); patterns.len()];
        let mut any = false;
        for (i, entry) in self.apps.iter().enumerate() {
            let Entry::Local(l) = entry else {
                continue;
            };
            for a in program.apps[*l as usize].atoms.iter().flatten() {
                if let Atom::Token(t) = a
                    && let Some(id) = patterns.iter().position(|p| p == t)
                {
                    by_token[id].push(i as u16);
                    any = true;
                }
            }
        }
        if any {
            self.local_by_token = by_token;
        }
    }

    /// Fills [`TopicTable::by_token`] from the global token list.
    fn index_tokens(&mut self, patterns: &[&'static str]) {
        let mut by_token = vec![Vec::new(); patterns.len()];
        let mut any = false;
        for (i, entry) in self.apps.iter().enumerate() {
            let Entry::Builtin(_, app) = entry else {
                continue;
            };
            if let When::Token(tokens) = app.when {
                for t in tokens {
                    if let Some(id) = patterns.iter().position(|p| p == t) {
                        by_token[id].push(i as u16);
                        any = true;
                    }
                }
            }
        }
        if any {
            self.by_token = by_token;
        }
    }
}

/// Prefixes (each with its application) grouped by their first byte.
#[derive(Debug, Default)]
struct ByFirstByte {
    /// Empty, or one list per byte value.
    buckets: Vec<Vec<(Box<[u8]>, u16)>>,
    /// The empty prefix matches everything.
    empty: Vec<u16>,
}

impl ByFirstByte {
    fn push(&mut self, prefix: &[u8], app: u16) {
        match prefix.first() {
            Some(&b) => {
                if self.buckets.is_empty() {
                    self.buckets = vec![Vec::new(); 256];
                }
                self.buckets[usize::from(b)].push((prefix.into(), app));
            }
            None => self.empty.push(app),
        }
    }

    #[inline]
    fn matches(&self, text: &[u8], cands: &mut BitSet) {
        for &i in &self.empty {
            cands.insert(i);
        }
        let Some(first) = text.first() else {
            return;
        };
        if let Some(bucket) = self.buckets.get(usize::from(*first)) {
            for (prefix, i) in bucket {
                if text.starts_with(prefix) {
                    cands.insert(*i);
                }
            }
        }
    }
}

/// FNV-1a for the PROGRAM table: keys are short, fixed at build and not attacker-chosen
/// (a lookup only finds the names vendors declare), so SipHash's DoS resistance buys
/// nothing and its setup dominates a lookup of a ten-byte name.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Words of a [`BitSet`].
const WORDS: usize = 4;

/// A set of integers below `64 * WORDS` (application indices in a topic, token ids): O(1)
/// insert, iteration in increasing order (SC4S order for applications). A larger value sets
/// `overflow` (the dispatcher then tries the whole topic in order: same result, more calls).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BitSet {
    words: [u64; WORDS],
    overflow: bool,
}

impl BitSet {
    fn insert(&mut self, v: u16) {
        let v = usize::from(v);
        match self.words.get_mut(v / 64) {
            Some(w) => *w |= 1 << (v % 64),
            None => self.overflow = true,
        }
    }

    fn is_empty(&self) -> bool {
        self.words.iter().fold(0, |a, w| a | w) == 0
    }

    fn iter(&self) -> Bits {
        Bits {
            words: self.words,
            at: 0,
        }
    }
}

/// The members of a [`BitSet`], in increasing order (a plain loop over the words: the
/// nested iterators it replaces cost more than the few candidates they yielded).
struct Bits {
    words: [u64; WORDS],
    at: usize,
}

impl Iterator for Bits {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        while let Some(w) = self.words.get_mut(self.at) {
            if *w != 0 {
                let bit = w.trailing_zeros();
                *w &= *w - 1;
                return Some((self.at * 64) as u16 + bit as u16);
            }
            self.at += 1;
        }
        None
    }
}

/// What the dispatcher reads from one message's raw bytes once, for all its topics: the
/// token ids found (by the first topic that needs them, see [`Engine::run`]) and the
/// header [`Shape`]. One per message.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TokenHits {
    tokens: Option<BitSet>,
    /// The operator's tokens found (their own scan).
    local_tokens: Option<BitSet>,
    shape: Option<Shape>,
    /// The answers of the [`When::Raw`] checks several applications share (see
    /// [`Engine::share_raw_checks`]), by slot.
    raw: [Option<bool>; RAW_SLOTS],
}

/// How many shared [`When::Raw`] checks keep their answer per message (a check shared
/// beyond that just runs once per application).
const RAW_SLOTS: usize = 4;

/// The tokens of every main topic and their searcher: one scan per message serves every
/// topic (each used to scan the whole message for its own few tokens, up to four scans of
/// the same bytes per message).
#[derive(Debug)]
struct TokenScan {
    scanner: Scanner,
    /// Token id → the tokens that are prefixes of it (itself included).
    prefixes: Vec<Vec<u16>>,
}

impl TokenScan {
    /// `None` when no main topic has token applications.
    fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Option<TokenScan> {
        if patterns.is_empty() {
            return None;
        }
        // Every pattern that is a prefix of pattern `i` (itself included): a leftmost-longest
        // match of `i` at some position means all of them occur there too.
        let prefixes: Vec<Vec<u16>> = patterns
            .iter()
            .map(|long| {
                (0..patterns.len())
                    .filter(|&j| long.as_ref().starts_with(patterns[j].as_ref()))
                    .map(|j| j as u16)
                    .collect()
            })
            .collect();
        Some(TokenScan {
            scanner: Scanner::new(patterns),
            prefixes,
        })
    }

    /// Every token occurring anywhere in `raw`, into `set`, without an overlapping search: a
    /// leftmost-longest search, resumed one byte after each match's start, visits every
    /// position where some token starts and reports the longest one there; the shorter ones
    /// there are its prefixes.
    fn scan(&self, raw: &[u8], set: &mut BitSet) {
        let mut at = 0;
        while at < raw.len() {
            let Some((pattern, start)) = self.scanner.find_from(raw, at) else {
                break;
            };
            for &p in &self.prefixes[pattern] {
                set.insert(p);
            }
            at = start + 1;
        }
    }
}

/// The dispatch tables of the active vendors.
#[derive(Debug)]
pub struct Engine {
    vendors: Vec<&'static Vendor>,
    main: [TopicTable; MAIN_TOPICS.len()],
    subs: Vec<(Box<str>, TopicTable)>,
    /// The tokens of every main topic.
    scan: Option<TokenScan>,
    /// The operator's applications.
    local: Option<std::sync::Arc<Program>>,
    /// The tokens of the operator's applications: a scan of their own, so that theirs
    /// never push the built-in scan off its SIMD searcher.
    local_scan: Option<TokenScan>,
}

/// The main topic of an operator's context (`None`: not one the dispatcher runs).
fn topic_of(c: &Context) -> Option<Result<Topic, &str>> {
    Some(Ok(match c {
        Context::AlmostSyslog => Topic::AlmostSyslog,
        Context::Raw => Topic::Raw,
        Context::Sdata => Topic::Sdata,
        Context::Pgm => Topic::Pgm,
        Context::Syslog => Topic::Syslog,
        Context::NetSource => Topic::NetSource,
        Context::Sub(name) => return Some(Err(name)),
        _ => return None,
    }))
}

impl Engine {
    /// Builds the tables for `vendors` (the order of the list does not matter: SC4S order
    /// comes from [`App::order`]) and the operator's applications of `local`. An
    /// operator's application named like a built-in one of the same topic replaces it, as
    /// syslog-ng registers a second application of one name and topic.
    pub(crate) fn new(
        vendors: Vec<&'static Vendor>,
        local: Option<std::sync::Arc<Program>>,
    ) -> Engine {
        let mut main: [TopicTable; MAIN_TOPICS.len()] = Default::default();
        let mut subs: Vec<(Box<str>, TopicTable)> = Vec::new();
        fn sub_table<'a>(
            subs: &'a mut Vec<(Box<str>, TopicTable)>,
            name: &str,
        ) -> &'a mut TopicTable {
            let at = match subs.iter().position(|(n, _)| &**n == name) {
                Some(at) => at,
                None => {
                    subs.push((name.into(), TopicTable::default()));
                    subs.len() - 1
                }
            };
            &mut subs[at].1
        }
        let replaced = |app: &App| -> bool {
            let Some(p) = &local else {
                return false;
            };
            p.apps.iter().any(|l| {
                l.name == app.name
                    && match (topic_of(&l.context), app.topic) {
                        (Some(Ok(t)), u) => t == u,
                        (Some(Err(n)), Topic::Sub(m)) => n == m,
                        _ => false,
                    }
            })
        };
        for (vi, vendor) in vendors.iter().enumerate() {
            for app in vendor.apps {
                if replaced(app) {
                    continue;
                }
                let table = match app.topic {
                    Topic::Sub(name) => sub_table(&mut subs, name),
                    // The built-in fallbacks are not dispatched (classify runs them).
                    Topic::Fallback => continue,
                    t => &mut main[main_slot(t).expect("main topic")],
                };
                table.add(vi as u16, app);
            }
        }
        if let Some(p) = &local {
            for (i, a) in p.apps.iter().enumerate() {
                let table = match topic_of(&a.context) {
                    Some(Ok(t)) => &mut main[main_slot(t).expect("main topic")],
                    Some(Err(name)) => sub_table(&mut subs, name),
                    None => continue,
                };
                table.apps.push(Entry::Local(i as u32));
            }
        }
        let mut patterns: Vec<&'static str> = Vec::new();
        for t in main.iter_mut() {
            t.finish(local.as_deref());
            for e in &t.apps {
                if let Entry::Builtin(_, app) = e
                    && let When::Token(tokens) = app.when
                {
                    for tok in tokens {
                        if !patterns.contains(tok) {
                            patterns.push(tok);
                        }
                    }
                }
            }
        }
        for t in main.iter_mut() {
            t.index_tokens(&patterns);
        }
        Engine::share_raw_checks(&mut main);
        let mut local_patterns: Vec<Box<[u8]>> = Vec::new();
        if let Some(p) = &local {
            for a in &p.apps {
                for atom in a.atoms.iter().flatten() {
                    if let Atom::Token(t) = atom
                        && !local_patterns.contains(t)
                    {
                        local_patterns.push(t.clone());
                    }
                }
            }
            for t in main.iter_mut() {
                t.index_local_tokens(&local_patterns, p);
            }
        }
        for (_, t) in subs.iter_mut() {
            t.finish(local.as_deref());
        }
        Engine {
            vendors,
            main,
            subs,
            scan: TokenScan::new(&patterns),
            local_scan: TokenScan::new(&local_patterns),
            local,
        }
    }

    /// Gives the [`When::Raw`] checks that more than one application of the main topics
    /// declares (Cisco's and Arista's `: %` search) a slot in [`TokenHits::raw`]: each runs
    /// once per message however many applications and topics ask.
    fn share_raw_checks(main: &mut [TopicTable; MAIN_TOPICS.len()]) {
        let all: Vec<RawCheck> = main
            .iter()
            .flat_map(|t| t.raw_checks.iter().map(|(c, _, _)| *c))
            .collect();
        let mut shared: Vec<RawCheck> = Vec::new();
        for (i, c) in all.iter().enumerate() {
            let repeated = all[i + 1..].iter().any(|d| std::ptr::fn_addr_eq(*c, *d));
            if repeated
                && !shared.iter().any(|d| std::ptr::fn_addr_eq(*c, *d))
                && shared.len() < RAW_SLOTS
            {
                shared.push(*c);
            }
        }
        for t in main.iter_mut() {
            for (c, _, slot) in &mut t.raw_checks {
                *slot = shared
                    .iter()
                    .position(|d| std::ptr::fn_addr_eq(*c, *d))
                    .map(|s| s as u8);
            }
        }
    }

    pub(crate) fn vendors(&self) -> &[&'static Vendor] {
        &self.vendors
    }

    /// Runs one main topic; `true` when an application took the message. `hits` caches the
    /// token scan of `input.msg.raw` between the topics of one message.
    pub(crate) fn run<'m>(
        &'m self,
        topic: Topic,
        input: &Input<'m, '_>,
        out: &mut Out<'m>,
        hits: &mut TokenHits,
    ) -> bool {
        let Some(slot) = main_slot(topic) else {
            return false;
        };
        let table = &self.main[slot];
        if table.apps.is_empty() {
            return false;
        }
        let mut cands = BitSet::default();
        for &i in &table.always {
            cands.insert(i);
        }
        if let Some(p) = input.program {
            if table.program_lens & length_bit(p.len()) != 0
                && p.first().is_some_and(|&b| has_bit(&table.program_first, b))
                && let Some(list) = table.programs.get(p)
            {
                for &i in list {
                    cands.insert(i);
                }
            }
            table.program_prefixes.matches(p, &mut cands);
        }
        table.body_prefixes.matches(input.body, &mut cands);
        for (check, i, slot) in &table.raw_checks {
            let yes = match slot {
                Some(s) => *hits.raw[usize::from(*s)].get_or_insert_with(|| check(input.msg.raw)),
                None => check(input.msg.raw),
            };
            if yes {
                cands.insert(*i);
            }
        }
        if !table.header_checks.is_empty() {
            let shape = *hits.shape.get_or_insert_with(|| Shape::of(input.msg.raw));
            for (need, check, i) in &table.header_checks {
                if shape.any(*need) && check(input.msg.raw) {
                    cands.insert(*i);
                }
            }
        }
        for (check, app, i) in &table.checks {
            if call_check(*check, app, input, out) {
                cands.insert(*i);
            }
        }
        let vp = input.netsource.vendor_product;
        let listener = input.src.listener_id;
        if !table.netsource.is_empty() && (!vp.is_empty() || listener != super::DEFAULT_LISTENER) {
            for (v, i) in &table.netsource {
                if netsource_is(v, vp, listener) {
                    cands.insert(*i);
                }
            }
        }
        if !table.locals.is_empty() {
            self.local_candidates(table, input, out, hits, &mut cands);
        }
        if !table.by_token.is_empty()
            && let Some(scan) = &self.scan
        {
            let found = hits.tokens.get_or_insert_with(|| {
                let mut set = BitSet::default();
                scan.scan(input.msg.raw, &mut set);
                set
            });
            if found.overflow {
                cands.overflow = true;
            }
            // Most messages hold no token: then nothing to walk.
            if !found.is_empty() {
                for pattern in found.iter() {
                    for &i in &table.by_token[usize::from(pattern)] {
                        cands.insert(i);
                    }
                }
            }
        }
        let stage = match topic {
            Topic::AlmostSyslog | Topic::Raw => Stage::NoParse,
            _ => Stage::Parsed,
        };
        if cands.overflow {
            // Too many to narrow down: every application of the topic, in order, each
            // checked against its own prefilter.
            return self.run_candidates(table.apps.iter().copied(), input, out, true, stage, None);
        }
        if cands.is_empty() {
            return false;
        }
        let apps = cands.iter().map(|i| table.apps[usize::from(i)]);
        self.run_candidates(apps, input, out, false, stage, None)
    }

    /// The operator's applications of `table` the message may satisfy.
    fn local_candidates<'m>(
        &self,
        table: &TopicTable,
        input: &Input<'m, '_>,
        out: &Out<'m>,
        hits: &mut TokenHits,
        cands: &mut BitSet,
    ) {
        if out.local.is_some() {
            // An earlier local application changed fields the atoms read: run them all.
            for &i in &table.locals {
                cands.insert(i);
            }
            return;
        }
        if let Some(host) = input.host {
            for (prefix, h, i) in &table.hosts {
                let hit = if *prefix {
                    host.len() >= h.len() && host[..h.len()].eq_ignore_ascii_case(h)
                } else {
                    host.eq_ignore_ascii_case(h)
                };
                if hit {
                    cands.insert(*i);
                }
            }
        }
        if !table.nets.is_empty() {
            let ip = match input.src.source_ip.to_canonical() {
                std::net::IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
                std::net::IpAddr::V6(v6) => u128::from(v6),
            };
            for (net, mask, i) in &table.nets {
                if ip & mask == *net {
                    cands.insert(*i);
                }
            }
        }
        if !table.local_by_token.is_empty()
            && let Some(scan) = &self.local_scan
        {
            let found = hits.local_tokens.get_or_insert_with(|| {
                let mut set = BitSet::default();
                scan.scan(input.msg.raw, &mut set);
                set
            });
            if found.overflow {
                cands.overflow = true;
            }
            for pattern in found.iter() {
                for &i in &table.local_by_token[usize::from(pattern)] {
                    cands.insert(i);
                }
            }
        }
    }

    /// Runs a sub-topic (linear: only messages of its parent get here).
    pub(crate) fn run_sub_topic<'m>(
        &'m self,
        name: &str,
        input: &Input<'m, '_>,
        out: &mut Out<'m>,
    ) -> bool {
        let Some((sub, table)) = self.subs.iter().find(|(n, _)| &**n == name) else {
            return false;
        };
        let saved = out.vendor_idx;
        let took = self.run_candidates(
            table.apps.iter().copied(),
            input,
            out,
            true,
            Stage::Parsed,
            Some(sub),
        );
        out.vendor_idx = saved;
        took
    }

    /// Runs the candidates in order on `out` itself until one takes the message. `out` is
    /// copied once, before the first candidate that runs, and restored from that copy only
    /// after a candidate declined (it may have written before its filter failed): a message
    /// with no candidate costs no copy, and the one that takes it none either. (`Out` is
    /// about 1.2 kB; a copy per candidate plus one back was the dispatcher's largest fixed
    /// cost.) With `check`, each application's own prefilter decides first whether it runs;
    /// `out` is then as it was before the first candidate, so a [`When::Check`] sees what
    /// it would have seen. The operator's applications change `out` only when they take
    /// the message.
    fn run_candidates<'m>(
        &'m self,
        apps: impl Iterator<Item = Entry>,
        input: &Input<'m, '_>,
        out: &mut Out<'m>,
        check: bool,
        stage: Stage,
        sub: Option<&str>,
    ) -> bool {
        let mut snapshot: Option<Out<'m>> = None;
        for entry in apps {
            match entry {
                Entry::Local(l) => {
                    let Some(p) = &self.local else {
                        continue;
                    };
                    if check && !local::run::prefilter_holds(&p.apps[l as usize], input, out) {
                        continue;
                    }
                    if local::run::run_app(p, l, input, out, stage, sub) {
                        return true;
                    }
                }
                Entry::Builtin(vendor, app) => {
                    if check && !prefilter_matches(app, input, out) {
                        continue;
                    }
                    if snapshot.is_none() {
                        snapshot = Some(*out);
                    }
                    out.vendor_idx = vendor;
                    if (app.parse)(input, out) {
                        out.app = Some(app.name);
                        return true;
                    }
                    if let Some(s) = &snapshot {
                        *out = *s;
                    }
                }
            }
        }
        false
    }
}

/// The token search: Teddy (SIMD, the packed searcher) when the tokens allow it, else an
/// Aho-Corasick DFA. Teddy compares 16 or 32 bytes at a time against fingerprints of the
/// tokens' first bytes and verifies candidates; the DFA walks every byte (about 2 ns per
/// byte, 37 % of classification before the tokens were trimmed to what Teddy takes).
#[derive(Debug)]
enum Scanner {
    Teddy(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Scanner {
    fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Scanner {
        let teddy = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostLongest)
            // Rabin-Karp (the packed fallback) is slower than the DFA.
            .only_teddy(true)
            .builder()
            .extend(patterns)
            .build();
        match teddy {
            Some(t) => Scanner::Teddy(t),
            // A DFA: a few hundred short patterns make a small one, and it scans every
            // message with tokens, so speed beats the NFA's smaller memory.
            None => Scanner::Automaton(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(patterns)
                    .expect("vendor tokens are plain byte strings"),
            ),
        }
    }

    /// The leftmost-longest token starting at or after `at`: (pattern id, start).
    fn find_from(&self, raw: &[u8], at: usize) -> Option<(usize, usize)> {
        match self {
            Scanner::Teddy(t) => t
                .find_in(raw, aho_corasick::Span::from(at..raw.len()))
                .map(|m| (m.pattern().as_usize(), m.start())),
            Scanner::Automaton(ac) => ac
                .find(aho_corasick::Input::new(raw).range(at..))
                .map(|m| (m.pattern().as_usize(), m.start())),
        }
    }

    #[cfg(test)]
    fn is_teddy(&self) -> bool {
        matches!(self, Scanner::Teddy(_))
    }
}

fn prefilter_matches<'m>(app: &'static App, input: &Input<'m, '_>, out: &Out<'m>) -> bool {
    match app.when {
        When::Always => true,
        When::Program(names) => input
            .program
            .is_some_and(|p| names.iter().any(|n| n.as_bytes() == p)),
        When::ProgramPrefix(prefixes) => input
            .program
            .is_some_and(|p| prefixes.iter().any(|n| p.starts_with(n.as_bytes()))),
        When::Token(tokens) => tokens
            .iter()
            .any(|t| memchr::memmem::find(input.msg.raw, t.as_bytes()).is_some()),
        When::BodyPrefix(prefixes) => prefixes
            .iter()
            .any(|p| input.body.starts_with(p.as_bytes())),
        When::NetSource(vps) => vps
            .iter()
            .any(|v| netsource_is(v, input.netsource.vendor_product, input.src.listener_id)),
        When::Raw(check) => check(input.msg.raw),
        When::Header(need, check) => Shape::of(input.msg.raw).any(need) && check(input.msg.raw),
        When::Check(check) => call_check(check, app, input, out),
    }
}

/// One [`When::NetSource`] entry against the message's network source `vp` and listener id:
/// `vendor_product`, or `.source.s_<ID>` for the listener `<ID>` (SC4S's
/// `tags(".source.s_<ID>")`, for listener ids that name no vendor and product).
fn netsource_is(entry: &str, vp: &str, listener: &str) -> bool {
    match entry.strip_prefix(".source.s_") {
        Some(id) => id == listener,
        None => !vp.is_empty() && entry == vp,
    }
}

/// Calls a [`When::Check`]; tests can see what each returned ([`check_verdict`]).
fn call_check<'m>(check: Check, app: &'static App, input: &Input<'m, '_>, out: &Out<'m>) -> bool {
    let yes = check(input, out);
    #[cfg(test)]
    CHECKS.with(|c| c.borrow_mut().push((app.name, yes)));
    #[cfg(not(test))]
    let _ = app;
    yes
}

#[cfg(test)]
thread_local! {
    static CHECKS: std::cell::RefCell<Vec<(&'static str, bool)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// What application `app`'s [`When::Check`] said when `line` was classified with the default
/// classifier (`None`: not asked; the last answer when asked more than once). For the test
/// every check needs: a message its application takes passes, and the ones it now skips.
#[cfg(test)]
pub(crate) fn check_verdict(line: &str, app: &str) -> Option<bool> {
    CHECKS.with(|c| c.borrow_mut().clear());
    crate::classify::testutil::classify_line(line);
    CHECKS.with(|c| {
        c.borrow()
            .iter()
            .rev()
            .find(|(name, _)| *name == app)
            .map(|(_, yes)| *yes)
    })
}

impl SubTopics for Engine {
    fn run_sub<'m>(&'m self, name: &str, input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
        self.run_sub_topic(name, input, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::registry::Key;

    fn nop<'m>(_: &Input<'m, '_>, _: &mut Out<'m>) -> bool {
        false
    }

    static TOKENS: Vendor = Vendor {
        name: "t",
        keys: &[] as &[Key],
        apps: &[App {
            name: "a",
            topic: Topic::Syslog,
            order: "a",
            when: When::Token(&["%", "%ASA-", "ab", "bc", "abcd"]),
            parse: nop,
        }],
    };

    /// The tokens of every main topic stay within what Teddy takes (at most 64 tokens, 32
    /// for its faster slim form): a token added beyond that silently moves every message
    /// onto the slower DFA scan.
    #[test]
    fn shipped_tokens_use_the_simd_searcher() {
        let engine = Engine::new(crate::classify::vendors::VENDORS.to_vec(), None);
        let scan = engine.scan.as_ref().expect("vendors have tokens");
        assert!(
            scan.scanner.is_teddy(),
            "{} tokens: {:?}",
            scan.prefixes.len(),
            scan.scanner
        );
    }

    fn percent(raw: &[u8]) -> bool {
        raw.contains(&b'%')
    }

    fn colon(raw: &[u8]) -> bool {
        raw.contains(&b':')
    }

    static RAWS: Vendor = Vendor {
        name: "r",
        keys: &[] as &[Key],
        apps: &[
            App {
                name: "almost",
                topic: Topic::AlmostSyslog,
                order: "a",
                when: When::Raw(percent),
                parse: nop,
            },
            App {
                name: "syslog",
                topic: Topic::Syslog,
                order: "b",
                when: When::Raw(percent),
                parse: nop,
            },
            App {
                name: "alone",
                topic: Topic::Syslog,
                order: "c",
                when: When::Raw(colon),
                parse: nop,
            },
        ],
    };

    /// A raw check that applications of two topics declare (Cisco's and Arista's `: %`
    /// search) keeps its answer in one slot: a message pays for it once. One declared once
    /// needs none.
    #[test]
    fn a_raw_check_several_applications_declare_shares_a_slot() {
        let engine = Engine::new(vec![&RAWS], None);
        let slots = |check: RawCheck| -> Vec<Option<u8>> {
            engine
                .main
                .iter()
                .flat_map(|t| &t.raw_checks)
                .filter(|(c, _, _)| std::ptr::fn_addr_eq(*c, check))
                .map(|(_, _, slot)| *slot)
                .collect()
        };
        assert_eq!(slots(percent), vec![Some(0), Some(0)]);
        assert_eq!(slots(colon), vec![None]);
    }

    /// The scan finds every token that occurs, overlapping or nested ones included.
    #[test]
    fn token_scan_finds_overlapping_and_nested_tokens() {
        let engine = Engine::new(vec![&TOKENS], None);
        let found = |text: &[u8]| {
            let mut set = BitSet::default();
            engine.scan.as_ref().unwrap().scan(text, &mut set);
            let names = ["%", "%ASA-", "ab", "bc", "abcd"];
            let mut v: Vec<&str> = set.iter().map(|p| names[usize::from(p)]).collect();
            v.sort();
            v
        };
        assert_eq!(found(b"x %ASA-1 abc"), vec!["%", "%ASA-", "ab", "bc"]);
        assert_eq!(found(b"abcd"), vec!["ab", "abcd", "bc"]);
        assert_eq!(found(b"nothing"), Vec::<&str>::new());
    }
}
