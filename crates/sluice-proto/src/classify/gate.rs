//! Vendor regexes behind a literal gate.
//!
//! SC4S's vendor tests are regexes, and many are unanchored with no literal prefix
//! (`\d+:\d+:\d+\s\S+\ssudo`, `[^;]+; `). The regex engine can only prefilter on a prefix
//! literal, so each such test walks the whole message through its lazy DFA: about a
//! microsecond per test on a 300-byte line, and a UniFi or JetDirect message runs a chain
//! of them. Yet almost every pattern names a literal that any match must contain (`sudo`,
//! `; `). [`Gated`] finds the longest such literal when the regex is built, from the
//! regex's own syntax tree, and looks for it with a prebuilt `memmem` searcher before it
//! runs the regex: a message without it cannot match, so the answer is the same, and the
//! search costs a fraction of the DFA walk.
//!
//! The literal is *required* only where the syntax guarantees it: a literal in a
//! concatenation, inside captures and repetitions of at least one, never under an
//! alternation or an optional part. Case-insensitive parts are classes, not literals, in
//! the syntax tree, so they never become a gate.

use regex::bytes::Regex;
use regex_syntax::hir::{Hir, HirKind};

use crate::classify::caps::{Caps, CapturesExt};

/// Gates shorter than this cost more than they save: a one-byte literal such as `:` is in
/// nearly every message.
const MIN_GATE: usize = 2;

/// A regex and the longest literal every one of its matches contains.
#[derive(Debug)]
pub struct Gated {
    re: Regex,
    gate: Option<memchr::memmem::Finder<'static>>,
}

impl Gated {
    /// Builds the regex and its gate. `pattern` is a static vendor pattern, so a syntax error
    /// is a programming error (every vendor test builds its regexes).
    pub fn new(pattern: &str) -> Gated {
        let re = Regex::new(pattern).expect("static regex");
        let gate = required_literal_of(pattern)
            .filter(|l| l.len() >= MIN_GATE)
            .map(|l| memchr::memmem::Finder::new(&l).into_owned());
        Gated { re, gate }
    }

    /// The literal the gate looks for, if the pattern has one.
    #[cfg(test)]
    pub fn gate(&self) -> Option<&[u8]> {
        self.gate.as_ref().map(|f| f.needle())
    }

    fn open(&self, hay: &[u8]) -> bool {
        self.gate.as_ref().is_none_or(|f| f.find(hay).is_some())
    }

    /// `Regex::is_match`, after the gate.
    pub fn is_match(&self, hay: &[u8]) -> bool {
        self.open(hay) && self.re.is_match(hay)
    }

    /// [`CapturesExt::caps`], after the gate.
    pub fn caps<'h>(&self, hay: &'h [u8]) -> Option<Caps<'h>> {
        if !self.open(hay) {
            return None;
        }
        self.re.caps(hay)
    }
}

/// The longest literal that every match of `pattern` contains, parsed the way
/// `regex::bytes::Regex` parses it (Unicode classes, bytes allowed).
fn required_literal_of(pattern: &str) -> Option<Vec<u8>> {
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .ok()?;
    required_literal(&hir)
}

fn required_literal(hir: &Hir) -> Option<Vec<u8>> {
    match hir.kind() {
        HirKind::Literal(l) => Some(l.0.to_vec()),
        HirKind::Capture(c) => required_literal(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required_literal(&r.sub),
        HirKind::Concat(subs) => {
            // Adjacent literal children are one run of bytes (the parser usually merges
            // them already); any other child may hold a required literal of its own.
            let mut best: Option<Vec<u8>> = None;
            let mut run: Vec<u8> = Vec::new();
            let keep = |cand: Vec<u8>, best: &mut Option<Vec<u8>>| {
                if best.as_ref().is_none_or(|b| cand.len() > b.len()) {
                    *best = Some(cand);
                }
            };
            for sub in subs {
                if let HirKind::Literal(l) = sub.kind() {
                    run.extend_from_slice(&l.0);
                    continue;
                }
                if !run.is_empty() {
                    keep(std::mem::take(&mut run), &mut best);
                }
                if let Some(inner) = required_literal(sub) {
                    keep(inner, &mut best);
                }
            }
            if !run.is_empty() {
                keep(run, &mut best);
            }
            best
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn gate_of(p: &str) -> Option<String> {
        Gated::new(p)
            .gate()
            .map(|g| String::from_utf8_lossy(g).into_owned())
    }

    #[test]
    fn finds_the_longest_required_literal() {
        assert_eq!(gate_of(r"\d+:\d+:\d+\s\S+\ssudo").as_deref(), Some("sudo"));
        assert_eq!(gate_of(r"^\S+\slinkcheck:").as_deref(), Some("linkcheck:"));
        assert_eq!(gate_of(r"[^;]+; ").as_deref(), Some("; "));
        assert_eq!(
            gate_of(r"dnsmasq-dhcp\[\d+\]").as_deref(),
            Some("dnsmasq-dhcp[")
        );
        // Inside a capture and a repetition of at least one.
        assert_eq!(gate_of(r"(?:x(abc)y)+z").as_deref(), Some("abc"));
    }

    #[test]
    fn never_gates_on_optional_or_alternative_parts() {
        assert_eq!(gate_of(r"(?:abcdef)?\d"), None);
        assert_eq!(gate_of(r"(?:abcdef)*\d"), None);
        assert_eq!(gate_of(r"abcdef|ghijkl"), None);
        assert_eq!(gate_of(r"EVT_AP:|wevent\.x"), None);
        // Case-insensitive letters are classes, not literals.
        assert_eq!(gate_of(r"(?i)kernel"), None);
        assert_eq!(gate_of(r"(?i)kernel:\d+ ABC"), None);
        // One byte is not worth a search.
        assert_eq!(gate_of(r"\d+:\d+"), None);
    }

    #[test]
    fn case_insensitive_parts_are_not_gates() {
        let g = Gated::new(r"(?i)sudo\d");
        assert!(g.is_match(b"SUDO1"));
        let g = Gated::new(r"x(?i:sudo)\d");
        assert!(g.is_match(b"xSuDo1"));
    }

    /// Patterns shaped like the vendor tests, over haystacks built from their own pieces.
    const PATTERNS: &[&str] = &[
        r"\d+:\d+:\d+\s\S+\ssudo",
        r"^\S+\slinkcheck:",
        r"[^;]+; ",
        r"kernel:\s\[\S+-[A|B|D]",
        r"(x+)?ab(c|d)e\d*ab",
        r"(?:ab)+c(?:de)?f",
        r"a(?i)bc",
        r"^(\w+) (\d\d)/\d\d (?:é|ü)x",
        r"(?:foo|bar)baz\s+qux",
    ];

    proptest! {
        #[test]
        fn gated_agrees_with_the_regex(
            p in 0..PATTERNS.len(),
            hay in proptest::collection::vec(prop_oneof![
                Just(&b"sudo"[..]), Just(&b"linkcheck:"[..]), Just(&b"; "[..]), Just(&b";"[..]),
                Just(&b"kernel:"[..]), Just(&b" "[..]), Just(&b"["[..]), Just(&b"-A"[..]),
                Just(&b"12"[..]), Just(&b":"[..]), Just(&b"ab"[..]), Just(&b"c"[..]),
                Just(&b"d"[..]), Just(&b"e"[..]), Just(&b"f"[..]), Just(&b"x"[..]),
                Just(&b"BC"[..]), Just(&b"\xc3\xa9"[..]), Just(&b"\xff"[..]), Just(&b"/"[..]),
                Just(&b"foo"[..]), Just(&b"baz"[..]), Just(&b"qux"[..]), Just(&b"\n"[..]),
                Just("\u{0663}".as_bytes()), Just(&b"\xc2\xa0"[..]),
            ], 0..24),
        ) {
            let hay: Vec<u8> = hay.concat();
            let g = Gated::new(PATTERNS[p]);
            let re = Regex::new(PATTERNS[p]).unwrap();
            prop_assert_eq!(g.is_match(&hay), re.is_match(&hay));
            let want = re.captures(&hay).map(|c| (0..c.len()).map(|i| c.get(i).map(|m| m.range())).collect::<Vec<_>>());
            let got = g.caps(&hay).map(|c| (0..re.captures_len()).map(|i| c.get(i).map(|m| m.range())).collect::<Vec<_>>());
            prop_assert_eq!(got, want);
        }
    }
}
