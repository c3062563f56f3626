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

use super::registry::{App, Check, Input, Out, Shape, Topic, Vendor, When};

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
    raw_checks: Vec<(RawCheck, u16)>,
    /// [`When::Header`] checks: the shape bits one of which they need.
    header_checks: Vec<(Shape, RawCheck, u16)>,
    checks: Vec<(Check, u16)>,
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
                        if let Some(&b) = n.as_bytes().first() {
                            self.program_first[usize::from(b >> 6)] |= 1 << (b & 63);
                        }
                        self.program_lens |= length_bit(n.len());
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
                When::Header(need, check) => self.header_checks.push((need, check, i)),
                When::Check(check) => self.checks.push((check, i)),
                When::Token(_) => {}
            }
        }
    }

    /// Fills [`TopicTable::by_token`] from the global token list.
    fn index_tokens(&mut self, patterns: &[&'static str]) {
        let mut by_token = vec![Vec::new(); patterns.len()];
        let mut any = false;
        for (i, (_, app)) in self.apps.iter().enumerate() {
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
        self.words.iter().all(|w| *w == 0)
    }

    fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        self.words.iter().enumerate().flat_map(|(at, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let bit = w.trailing_zeros();
                    w &= w - 1;
                    (at * 64) as u16 + bit as u16
                })
            })
        })
    }
}

/// What the dispatcher reads from one message's raw bytes once, for all its topics: the
/// token ids found (by the first topic that needs them, see [`Engine::run`]) and the
/// header [`Shape`]. One per message.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TokenHits {
    tokens: Option<BitSet>,
    shape: Option<Shape>,
}

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
    fn new(patterns: &[&'static str]) -> Option<TokenScan> {
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
    subs: Vec<(&'static str, TopicTable)>,
    /// The tokens of every main topic.
    scan: Option<TokenScan>,
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
        let mut patterns: Vec<&'static str> = Vec::new();
        for t in main.iter_mut() {
            t.finish();
            for (_, app) in &t.apps {
                if let When::Token(tokens) = app.when {
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
        for (_, t) in subs.iter_mut() {
            t.finish();
        }
        Engine {
            vendors,
            main,
            subs,
            scan: TokenScan::new(&patterns),
        }
    }

    pub(crate) fn vendors(&self) -> &[&'static Vendor] {
        &self.vendors
    }

    /// Runs one main topic; `true` when an application took the message. `hits` caches the
    /// token scan of `input.msg.raw` between the topics of one message.
    pub(crate) fn run<'m>(
        &self,
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
        for (check, i) in &table.raw_checks {
            if check(input.msg.raw) {
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
        for (check, i) in &table.checks {
            if call_check(*check, table.apps[usize::from(*i)].1, input, out) {
                cands.insert(*i);
            }
        }
        let vp = input.netsource.vendor_product;
        let listener = input.src.listener_id;
        if !vp.is_empty() || listener != super::DEFAULT_LISTENER {
            for (v, i) in &table.netsource {
                if netsource_is(v, vp, listener) {
                    cands.insert(*i);
                }
            }
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
            for pattern in found.iter() {
                for &i in &table.by_token[usize::from(pattern)] {
                    cands.insert(i);
                }
            }
        }
        if cands.overflow {
            // Too many to narrow down: every application of the topic, in order, each
            // checked against its own prefilter.
            return run_candidates(table.apps.iter().copied(), input, out, true);
        }
        if cands.is_empty() {
            return false;
        }
        let apps = cands.iter().map(|i| table.apps[usize::from(i)]);
        run_candidates(apps, input, out, false)
    }

    /// Runs a sub-topic (linear: only messages of its parent get here).
    pub(crate) fn run_sub<'m>(&self, name: &str, input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
        let Some((_, table)) = self.subs.iter().find(|(n, _)| *n == name) else {
            return false;
        };
        let saved = out.vendor_idx;
        let took = run_candidates(table.apps.iter().copied(), input, out, true);
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
/// copied once, before the first candidate that runs, and restored from that copy only after
/// a candidate declined (it may have written before its filter failed): a message with no
/// candidate costs no copy, and the one that takes it none either. (`Out` is about 1.2 kB;
/// a copy per candidate plus one back was the dispatcher's largest fixed cost.) With
/// `check`, each application's own prefilter decides first whether it runs; `out` is then
/// as it was before the first candidate, so a [`When::Check`] sees what it would have seen.
fn run_candidates<'m>(
    apps: impl Iterator<Item = (u16, &'static App)>,
    input: &Input<'m, '_>,
    out: &mut Out<'m>,
    check: bool,
) -> bool {
    let mut snapshot: Option<Out<'m>> = None;
    for (vendor, app) in apps {
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
    false
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
        let engine = Engine::new(crate::classify::vendors::VENDORS.to_vec());
        let scan = engine.scan.as_ref().expect("vendors have tokens");
        assert!(
            scan.scanner.is_teddy(),
            "{} tokens: {:?}",
            scan.prefixes.len(),
            scan.scanner
        );
    }

    /// The scan finds every token that occurs, overlapping or nested ones included.
    #[test]
    fn token_scan_finds_overlapping_and_nested_tokens() {
        let engine = Engine::new(vec![&TOKENS]);
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
