//! What a local application's filter needs to have a chance, derived from its literals so
//! the dispatcher can skip it with a lookup: a PROGRAM (exact or prefix), a MESSAGE prefix,
//! a substring of the raw message, a HOST (exact or prefix), a `vendor_product`, a
//! netmask. A filter these cannot bound (`not ...`, a comparison of two fields) runs on
//! every message of its context; `sluice run --check` shows which.
//!
//! The atoms of one application are alternatives (any one may let it match); a conjunction
//! keeps its most selective side, a disjunction needs every side bounded.

use regex_syntax::hir::literal::Extractor;
use regex_syntax::hir::{Hir, HirKind, Look};

use super::ir::{CmpOp, Filter, Pattern, Subject};
use super::names::{Reference, id};
use super::re::translate;
use super::stage::Stage;

/// One necessary condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Atom {
    Program(Box<[u8]>),
    ProgramPrefix(Box<[u8]>),
    /// MESSAGE starts with this (parsed stages only).
    BodyPrefix(Box<[u8]>),
    /// The raw message contains this.
    Token(Box<[u8]>),
    /// HOST (lower case) is this.
    HostExact(Box<[u8]>),
    HostPrefix(Box<[u8]>),
    NetSource(Box<str>),
    /// The sender's address, as mapped IPv6.
    Net {
        net: u128,
        mask: u128,
    },
}

impl Atom {
    /// Lower is better: how cheaply and how narrowly the atom selects.
    fn cost(&self) -> u32 {
        match self {
            Atom::Program(_) | Atom::NetSource(_) => 1,
            Atom::HostExact(_) => 2,
            Atom::ProgramPrefix(p) | Atom::BodyPrefix(p) => {
                if p.len() >= 3 {
                    3
                } else {
                    6
                }
            }
            Atom::HostPrefix(_) | Atom::Net { .. } => 4,
            Atom::Token(t) => {
                if t.len() >= 4 {
                    5
                } else {
                    7
                }
            }
        }
    }

    /// How the atom reads in `--check`.
    pub fn describe(&self) -> String {
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match self {
            Atom::Program(p) => format!("PROGRAM={:?}", s(p)),
            Atom::ProgramPrefix(p) => format!("PROGRAM^={:?}", s(p)),
            Atom::BodyPrefix(p) => format!("MESSAGE^={:?}", s(p)),
            Atom::Token(t) => format!("contains {:?}", s(t)),
            Atom::HostExact(h) => format!("HOST={:?}", s(h)),
            Atom::HostPrefix(h) => format!("HOST^={:?}", s(h)),
            Atom::NetSource(v) => format!("vendor_product={v:?}"),
            Atom::Net { net, mask } => {
                let ip = std::net::Ipv6Addr::from(*net).to_canonical();
                format!(
                    "netmask {ip}/{}",
                    mask.count_ones()
                        .saturating_sub(if ip.is_ipv4() { 96 } else { 0 })
                )
            }
        }
    }
}

/// The atoms of a filter (`None`: it cannot be bounded; every message runs it).
pub(crate) fn derive(f: &Filter, filters: &[Filter], stage: Stage) -> Option<Vec<Atom>> {
    derive_depth(f, filters, stage, 0)
}

fn derive_depth(f: &Filter, filters: &[Filter], stage: Stage, depth: usize) -> Option<Vec<Atom>> {
    if depth > 32 {
        return None;
    }
    match f {
        Filter::Const(false) => Some(Vec::new()),
        Filter::And(v) => v
            .iter()
            .filter_map(|f| derive_depth(f, filters, stage, depth + 1))
            .min_by_key(|atoms| score(atoms)),
        Filter::Or(v) => {
            let mut all = Vec::new();
            for f in v {
                all.extend(derive_depth(f, filters, stage, depth + 1)?);
            }
            Some(all)
        }
        Filter::Named(i) => derive_depth(filters.get(*i as usize)?, filters, stage, depth + 1),
        Filter::Netmask { net, mask } => Some(vec![Atom::Net {
            net: *net,
            mask: *mask,
        }]),
        Filter::Match { subject, pattern } => match_atoms(subject, pattern, stage),
        Filter::Compare {
            left,
            op: CmpOp::Eq,
            numeric: false,
            right,
        } => {
            let (r, lit) = match (
                left.as_reference(),
                right.as_literal(),
                right.as_reference(),
                left.as_literal(),
            ) {
                (Some(r), Some(l), _, _) => (r, l),
                (_, _, Some(r), Some(l)) => (r, l),
                _ => return None,
            };
            let Reference::Name(n) = r else {
                return None;
            };
            match n {
                id::PROGRAM => Some(vec![Atom::Program(lit.into())]),
                id::HOST => Some(vec![Atom::HostExact(lit.to_ascii_lowercase().into())]),
                id::NS_VENDOR_PRODUCT => Some(vec![Atom::NetSource(
                    String::from_utf8_lossy(lit).into_owned().into(),
                )]),
                id::MESSAGE if stage == Stage::Parsed && !lit.is_empty() => {
                    Some(vec![Atom::Token(lit.into())])
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn score(atoms: &[Atom]) -> u32 {
    atoms.iter().map(Atom::cost).max().unwrap_or(0) * 8 + atoms.len().min(7) as u32
}

fn match_atoms(subject: &Subject, pattern: &Pattern, stage: Stage) -> Option<Vec<Atom>> {
    let field = match subject {
        Subject::Ref(Reference::Name(n)) if matches!(*n, id::PROGRAM | id::HOST | id::MESSAGE) => {
            *n
        }
        // MSGHDR + MESSAGE: both come from the raw message.
        Subject::HdrMsg => id::MESSAGE,
        _ => return None,
    };
    let exact_field = matches!(subject, Subject::Ref(_));
    let (exact, prefix, tokens): Literals = match pattern {
        Pattern::Exact(l, false) => (Some(l.to_vec()), None, None),
        Pattern::Prefix(l, false) if !l.is_empty() => (None, Some(vec![l.to_vec()]), None),
        Pattern::Substring(l, false) if !l.is_empty() => (None, None, Some(vec![l.to_vec()])),
        Pattern::Exact(l, true) | Pattern::Prefix(l, true)
            if field == id::HOST && !l.is_empty() =>
        {
            // HOST is lower case: an ignore-case literal compares lower case.
            let lower = l.to_ascii_lowercase();
            if matches!(pattern, Pattern::Exact(..)) {
                (Some(lower), None, None)
            } else {
                (None, Some(vec![lower]), None)
            }
        }
        Pattern::Regex { re, .. } => regex_literals(re.pattern(), re_ignores_case(re))?,
        _ => return None,
    };
    let mut atoms = Vec::new();
    match field {
        id::PROGRAM => {
            if let Some(e) = exact {
                atoms.push(Atom::Program(e.into()));
            } else if let Some(ps) = prefix {
                atoms.extend(ps.into_iter().map(|p| Atom::ProgramPrefix(p.into())));
            } else {
                atoms.extend(tokens?.into_iter().map(|t| Atom::Token(t.into())));
            }
        }
        id::HOST => {
            if let Some(e) = exact {
                atoms.push(Atom::HostExact(e.to_ascii_lowercase().into()));
            } else if let Some(ps) = prefix {
                atoms.extend(
                    ps.into_iter()
                        .map(|p| Atom::HostPrefix(p.to_ascii_lowercase().into())),
                );
            } else {
                return None;
            }
        }
        _ => {
            // MESSAGE: a prefix of the body once parsed; before that (and for MSGHDR +
            // MESSAGE) only a substring of the raw message is certain.
            let literals = exact.map(|e| vec![e]).or(prefix.clone()).or(tokens)?;
            if literals.iter().any(Vec::is_empty) {
                return None;
            }
            if stage == Stage::Parsed
                && exact_field
                && let Some(ps) = prefix
            {
                atoms.extend(ps.into_iter().map(|p| Atom::BodyPrefix(p.into())));
            } else {
                atoms.extend(literals.into_iter().map(|t| Atom::Token(t.into())));
            }
        }
    }
    (!atoms.is_empty()).then_some(atoms)
}

fn re_ignores_case(re: &super::re::Re) -> bool {
    re.ignore_case()
}

/// What a value must be, start with, or contain: (exact, prefixes, tokens).
type Literals = (Option<Vec<u8>>, Option<Vec<Vec<u8>>>, Option<Vec<Vec<u8>>>);

/// What a regex's matches must be or start with (anchored), or contain.
fn regex_literals(pattern: &str, ic: bool) -> Option<Literals> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .case_insensitive(ic)
        .build()
        .parse(&translate(pattern))
        .ok()?;
    let anchored = starts_anchored(&hir);
    let mut ex = Extractor::new();
    ex.limit_class(4).limit_total(64);
    let seq = ex.extract(&hir);
    let lits = seq.literals()?;
    if lits.is_empty() || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    let bytes: Vec<Vec<u8>> = lits.iter().map(|l| l.as_bytes().to_vec()).collect();
    if anchored {
        if bytes.len() == 1 && lits[0].is_exact() && ends_anchored(&hir) {
            return Some((Some(bytes[0].clone()), None, None));
        }
        return Some((None, Some(bytes), None));
    }
    Some((None, None, Some(bytes)))
}

fn starts_anchored(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Look(Look::Start) => true,
        HirKind::Concat(v) => v.first().is_some_and(starts_anchored),
        HirKind::Capture(c) => starts_anchored(&c.sub),
        _ => false,
    }
}

fn ends_anchored(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Look(Look::End) => true,
        HirKind::Concat(v) => v.last().is_some_and(ends_anchored),
        HirKind::Capture(c) => ends_anchored(&c.sub),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::local::compile::filter_for_tests;

    fn atoms(text: &str) -> Option<Vec<String>> {
        let f = filter_for_tests(text);
        derive(&f, &[], Stage::Parsed).map(|v| v.iter().map(Atom::describe).collect())
    }

    #[test]
    fn atoms_from_literals() {
        assert_eq!(
            atoms(r#"program("acme" type(string))"#),
            Some(vec![r#"PROGRAM="acme""#.into()])
        );
        assert_eq!(
            atoms(r#"program('^acme')"#),
            Some(vec![r#"PROGRAM^="acme""#.into()])
        );
        assert_eq!(
            atoms(r#"program('^acme$')"#),
            Some(vec![r#"PROGRAM="acme""#.into()])
        );
        assert_eq!(
            atoms(r#"message("ACME:" type(string) flags(prefix))"#),
            Some(vec![r#"MESSAGE^="ACME:""#.into()])
        );
        assert_eq!(
            atoms(r#"message('devid=\d+')"#),
            Some(vec![r#"contains "devid=""#.into()])
        );
        assert_eq!(
            atoms(r#"host("fw-*" type(glob))"#),
            Some(vec![r#"HOST^="fw-""#.into()])
        );
        assert_eq!(
            atoms(r#"host("FW" type(string) flags(ignore-case))"#),
            Some(vec![r#"HOST="fw""#.into()])
        );
        assert_eq!(
            atoms(r#""${.netsource.sc4s_vendor_product}" eq "acme_fw""#),
            Some(vec![r#"vendor_product="acme_fw""#.into()])
        );
        assert_eq!(
            atoms(r#"program("a" type(string)) or netmask(10.0.0.0/8)"#),
            Some(vec![r#"PROGRAM="a""#.into(), "netmask 10.0.0.0/8".into()])
        );
        // A conjunction keeps its most selective side.
        assert_eq!(
            atoms(r#"message("x" type(string) flags(substring)) and program("acme" type(string))"#),
            Some(vec![r#"PROGRAM="acme""#.into()])
        );
        assert_eq!(atoms(r#"not program("a" type(string))"#), None);
        assert_eq!(atoms(r#"program("a" type(string)) or level(err)"#), None);
        assert_eq!(atoms(r#"message('.*')"#), None);
    }
}
