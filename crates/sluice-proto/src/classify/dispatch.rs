//! Which applications run for a message: per-topic tables built once from the active
//! vendors, and per main topic one scan of the raw message for that topic's [`When::Token`]s
//! (Teddy, a SIMD searcher, or an Aho-Corasick DFA; leftmost-longest, resumed after each
//! match's start: every token occurring anywhere is found without an overlapping walk).
//!
//! Per message and topic that runs: the topic's scan (if it has token applications), then
//! the union of the applications whose PROGRAM, MESSAGE prefix, token, raw check or
//! `vendor_product` matched plus the topic's [`When::Always`] ones, in SC4S order. Only
//! those parse functions run. A disabled vendor's applications are in no table.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind, packed};

use super::registry::{App, Input, Out, Topic, Vendor, When};

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

/// Most applications one message can be a candidate for before the dispatcher stops
/// narrowing and tries the whole topic in order (same result, more calls).
const MAX_CANDIDATES: usize = 48;

/// A header-shape check run on the raw message, and the app it selects.
type RawCheck = (fn(&[u8]) -> bool, u16);

#[derive(Debug, Default)]
struct TopicTable {
    /// (vendor index, application), in SC4S order.
    apps: Vec<(u16, &'static App)>,
    always: Vec<u16>,
    programs: HashMap<&'static [u8], Vec<u16>, BuildHasherDefault<Fnv>>,
    /// By first byte: a message only compares the prefixes that can match.
    program_prefixes: ByFirstByte,
    body_prefixes: ByFirstByte,
    netsource: Vec<(&'static str, u16)>,
    raw_checks: Vec<RawCheck>,
}

impl TopicTable {
    fn add(&mut self, vendor: u16, app: &'static App) {
        self.apps.push((vendor, app));
    }

    /// Sorts by SC4S order (stable: applications of one file keep their list order) and
    /// indexes the prefilters.
    fn finish(&mut self) {
        self.apps.sort_by_key(|(_, a)| a.order);
        for (i, (_, app)) in self.apps.iter().enumerate() {
            let i = i as u16;
            match app.when {
                When::Always => self.always.push(i),
                When::Program(names) => {
                    for n in names {
                        self.programs.entry(n.as_bytes()).or_default().push(i);
                    }
                }
                When::ProgramPrefix(prefixes) => {
                    for p in prefixes {
                        self.program_prefixes.push(p.as_bytes(), i);
                    }
                }
                When::NetSource(vps) => {
                    for v in vps {
                        self.netsource.push((v, i));
                    }
                }
                When::BodyPrefix(prefixes) => {
                    for p in prefixes {
                        self.body_prefixes.push(p.as_bytes(), i);
                    }
                }
                When::Raw(check) => self.raw_checks.push((check, i)),
                When::Token(_) => {}
            }
        }
    }
}

/// Prefixes (each with its application) grouped by their first byte.
#[derive(Debug, Default)]
struct ByFirstByte {
    /// Empty, or one list per byte value.
    buckets: Vec<Vec<(&'static [u8], u16)>>,
    /// The empty prefix matches everything.
    empty: Vec<u16>,
}

impl ByFirstByte {
    fn push(&mut self, prefix: &'static [u8], app: u16) {
        match prefix.first() {
            Some(&b) => {
                if self.buckets.is_empty() {
                    self.buckets = vec![Vec::new(); 256];
                }
                self.buckets[usize::from(b)].push((prefix, app));
            }
            None => self.empty.push(app),
        }
    }

    fn matches(&self, text: &[u8], cands: &mut SmallSet) {
        for &i in &self.empty {
            cands.insert(i);
        }
        if self.buckets.is_empty() {
            return;
        }
        let Some(first) = text.first() else {
            return;
        };
        for (prefix, i) in &self.buckets[usize::from(*first)] {
            if text.starts_with(prefix) {
                cands.insert(*i);
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

/// A fixed-capacity set of small integers; `overflow` when more were offered than fit.
#[derive(Clone, Copy)]
struct SmallSet {
    len: usize,
    items: [u16; MAX_CANDIDATES],
    overflow: bool,
}

impl SmallSet {
    fn new() -> SmallSet {
        SmallSet {
            len: 0,
            items: [0; MAX_CANDIDATES],
            overflow: false,
        }
    }

    fn insert(&mut self, v: u16) {
        if self.items[..self.len].contains(&v) {
            return;
        }
        if self.len == self.items.len() {
            self.overflow = true;
            return;
        }
        self.items[self.len] = v;
        self.len += 1;
    }

    fn sorted(mut self) -> SmallSet {
        self.items[..self.len].sort_unstable();
        self
    }

    fn as_slice(&self) -> &[u16] {
        &self.items[..self.len]
    }
}

/// The tokens of one main topic and their searcher. Each topic scans for its own tokens
/// only when it runs (each runs at most once per message): a message identified early, or
/// whose topics have few tokens, scans less, and a small token set keeps the SIMD searcher
/// on its fast path.
#[derive(Debug)]
struct TokenScan {
    scanner: Scanner,
    /// Pattern id → the applications (indices in the topic) that listed it.
    apps: Vec<Vec<u16>>,
    /// Pattern id → the patterns that are prefixes of it (itself included).
    prefixes: Vec<Vec<u16>>,
}

impl TokenScan {
    /// `None` when the topic has no token applications.
    fn new(table: &TopicTable) -> Option<TokenScan> {
        let mut patterns: Vec<&'static str> = Vec::new();
        let mut apps: Vec<Vec<u16>> = Vec::new();
        for (i, (_, app)) in table.apps.iter().enumerate() {
            if let When::Token(tokens) = app.when {
                for t in tokens {
                    let id = match patterns.iter().position(|p| p == t) {
                        Some(id) => id,
                        None => {
                            patterns.push(t);
                            apps.push(Vec::new());
                            patterns.len() - 1
                        }
                    };
                    apps[id].push(i as u16);
                }
            }
        }
        if patterns.is_empty() {
            return None;
        }
        // Every pattern that is a prefix of pattern `i` (itself included): a leftmost-longest
        // match of `i` at some position means all of them occur there too.
        let prefixes: Vec<Vec<u16>> = patterns
            .iter()
            .map(|long| {
                (0..patterns.len())
                    .filter(|&j| long.starts_with(patterns[j]))
                    .map(|j| j as u16)
                    .collect()
            })
            .collect();
        Some(TokenScan {
            scanner: Scanner::new(&patterns),
            apps,
            prefixes,
        })
    }

    /// Every token occurring anywhere in `raw`, into `set`, without an overlapping search: a
    /// leftmost-longest search, resumed one byte after each match's start, visits every
    /// position where some token starts and reports the longest one there; the shorter ones
    /// there are its prefixes.
    fn scan(&self, raw: &[u8], set: &mut SmallSet) {
        let mut at = 0;
        while at < raw.len() {
            let Some((pattern, start)) = self.scanner.find_from(raw, at) else {
                break;
            };
            for &p in &self.prefixes[pattern] {
                set.insert(p);
                if set.overflow {
                    return;
                }
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
    subs: Vec<(&'static str, TopicTable)>,
    /// Per main topic.
    scans: [Option<TokenScan>; MAIN_TOPICS.len()],
}

impl Engine {
    /// Builds the tables for `vendors` (the order of the list does not matter: SC4S order
    /// comes from [`App::order`]).
    pub(crate) fn new(vendors: Vec<&'static Vendor>) -> Engine {
        let mut main: [TopicTable; MAIN_TOPICS.len()] = Default::default();
        let mut subs: Vec<(&'static str, TopicTable)> = Vec::new();
        for (vi, vendor) in vendors.iter().enumerate() {
            for app in vendor.apps {
                let table = match app.topic {
                    Topic::Sub(name) => {
                        let at = match subs.iter().position(|(n, _)| *n == name) {
                            Some(at) => at,
                            None => {
                                subs.push((name, TopicTable::default()));
                                subs.len() - 1
                            }
                        };
                        &mut subs[at].1
                    }
                    // The built-in fallbacks are not dispatched (classify runs them).
                    Topic::Fallback => continue,
                    t => &mut main[main_slot(t).expect("main topic")],
                };
                table.add(vi as u16, app);
            }
        }
        for t in main.iter_mut() {
            t.finish();
        }
        for (_, t) in subs.iter_mut() {
            t.finish();
        }
        let scans = std::array::from_fn(|slot| TokenScan::new(&main[slot]));
        Engine {
            vendors,
            main,
            subs,
            scans,
        }
    }

    pub(crate) fn vendors(&self) -> &[&'static Vendor] {
        &self.vendors
    }

    /// Runs one main topic; `true` when an application took the message.
    pub(crate) fn run<'m>(&self, topic: Topic, input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
        let Some(slot) = main_slot(topic) else {
            return false;
        };
        let table = &self.main[slot];
        if table.apps.is_empty() {
            return false;
        }
        let mut cands = SmallSet::new();
        for &i in &table.always {
            cands.insert(i);
        }
        if let Some(p) = input.program {
            if let Some(list) = table.programs.get(p) {
                for &i in list {
                    cands.insert(i);
                }
            }
            table.program_prefixes.matches(p, &mut cands);
        }
        table.body_prefixes.matches(input.body, &mut cands);
        for (check, i) in &table.raw_checks {
            if check(input.msg.raw) {
                cands.insert(*i);
            }
        }
        let vp = input.netsource.vendor_product;
        if !vp.is_empty() {
            for (v, i) in &table.netsource {
                if *v == vp {
                    cands.insert(*i);
                }
            }
        }
        if let Some(scan) = &self.scans[slot] {
            let mut hits = SmallSet::new();
            scan.scan(input.msg.raw, &mut hits);
            if hits.overflow {
                cands.overflow = true;
            }
            for &pattern in hits.as_slice() {
                for &i in &scan.apps[usize::from(pattern)] {
                    cands.insert(i);
                }
            }
        }
        if cands.overflow {
            // Too many to narrow down: every application of the topic, in order, each
            // checked against its own prefilter.
            let apps = table
                .apps
                .iter()
                .filter(|(_, app)| prefilter_matches(app.when, input))
                .copied();
            return run_candidates(apps, input, out);
        }
        let cands = cands.sorted();
        let apps = cands.as_slice().iter().map(|&i| table.apps[usize::from(i)]);
        run_candidates(apps, input, out)
    }

    /// Runs a sub-topic (linear: only messages of its parent get here).
    pub(crate) fn run_sub<'m>(&self, name: &str, input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
        let Some((_, table)) = self.subs.iter().find(|(n, _)| *n == name) else {
            return false;
        };
        let saved = out.vendor_idx;
        let apps = table
            .apps
            .iter()
            .filter(|(_, app)| prefilter_matches(app.when, input))
            .copied();
        let took = run_candidates(apps, input, out);
        out.vendor_idx = saved;
        took
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
    fn new(patterns: &[&'static str]) -> Scanner {
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

/// Runs the candidates in order on `out` itself until one takes the message. `out` is
/// copied once, before the first candidate, and restored from that copy only after a
/// candidate declined (it may have written before its filter failed): a message with no
/// candidate costs no copy, and the one that takes it none either. (`Out` is about 1.2 kB;
/// a copy per candidate plus one back was the dispatcher's largest fixed cost.)
fn run_candidates<'m>(
    mut apps: impl Iterator<Item = (u16, &'static App)>,
    input: &Input<'m, '_>,
    out: &mut Out<'m>,
) -> bool {
    let Some(mut next) = apps.next() else {
        return false;
    };
    let snapshot = *out;
    loop {
        let (vendor, app) = next;
        out.vendor_idx = vendor;
        if (app.parse)(input, out) {
            out.app = Some(app.name);
            return true;
        }
        *out = snapshot;
        match apps.next() {
            Some(a) => next = a,
            None => return false,
        }
    }
}

fn prefilter_matches(when: When, input: &Input<'_, '_>) -> bool {
    match when {
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
        When::NetSource(vps) => vps.contains(&input.netsource.vendor_product),
        When::Raw(check) => check(input.msg.raw),
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

    /// Every main topic's tokens stay within what Teddy takes (at most 64 tokens, 32 for its
    /// faster slim form): a token added beyond that silently moves every message of the
    /// topic onto the slower DFA scan.
    #[test]
    fn shipped_tokens_use_the_simd_searcher() {
        let engine = Engine::new(crate::classify::vendors::VENDORS.to_vec());
        for (slot, scan) in engine.scans.iter().enumerate() {
            if let Some(scan) = scan {
                assert!(
                    scan.scanner.is_teddy(),
                    "{:?}: {} tokens: {:?}",
                    MAIN_TOPICS[slot],
                    scan.prefixes.len(),
                    scan.scanner
                );
            }
        }
    }

    /// The scan finds every token that occurs, overlapping or nested ones included.
    #[test]
    fn token_scan_finds_overlapping_and_nested_tokens() {
        let engine = Engine::new(vec![&TOKENS]);
        let found = |text: &[u8]| {
            let mut set = SmallSet::new();
            engine.scans[main_slot(Topic::Syslog).unwrap()]
                .as_ref()
                .unwrap()
                .scan(text, &mut set);
            let names = ["%", "%ASA-", "ab", "bc", "abcd"];
            let mut v: Vec<&str> = set
                .as_slice()
                .iter()
                .map(|&p| names[usize::from(p)])
                .collect();
            v.sort();
            v
        };
        assert_eq!(found(b"x %ASA-1 abc"), vec!["%", "%ASA-", "ab", "bc"]);
        assert_eq!(found(b"abcd"), vec!["ab", "abcd", "bc"]);
        assert_eq!(found(b"nothing"), Vec::<&str>::new());
    }
}
