//! Filter expressions: `host(...) or (program(...) and not filter(f_x))`,
//! `"${X}" eq "y"`, `level(err..emerg)`, ... into [`Filter`].

use std::collections::HashSet;
use std::net::IpAddr;

use super::super::ir::{CmpOp, Filter, Pattern, Subject};
use super::super::lex::{Lexer, Op, RawSlice, Tok};
use super::super::names::{Reference, id, resolve};
use super::super::re::Re;
use super::super::span::{PResult, Problem, Span};
use super::{Compiler, Opt, Val};

const TERMS: &str = "a filter: host(), program(), message(), match(), netmask(), netmask6(), \
     facility(), level(), tags(), in-list(), filter(), \"${NAME}\" eq \"text\", not, or (";

impl Compiler<'_> {
    /// A filter block's content: expressions separated by `;` (all must hold).
    pub(crate) fn filter_text(&mut self, slice: &RawSlice) -> PResult<Filter> {
        let globals = self.globals;
        let env = self.env;
        let args = self.args.clone();
        let scope = super::super::lex::Scope {
            args: &args,
            globals,
            env,
        };
        let mut lx = Lexer::new(slice, scope);
        let f = self.filter_list(&mut lx)?;
        let t = lx.next()?;
        if t.tok != Tok::Eof {
            return Err(Problem::error(
                t.span,
                format!(
                    "expected `;` or the end of the filter, found {}",
                    t.tok.describe()
                ),
            ));
        }
        Ok(f)
    }

    /// `expr ; expr ; ...` up to the end of the text (or a `)`, `}`).
    pub(crate) fn filter_list(&mut self, lx: &mut Lexer<'_>) -> PResult<Filter> {
        let mut all = Vec::new();
        loop {
            while lx.eat_sym(';')? {}
            match lx.peek()?.tok {
                Tok::Eof | Tok::Sym(')') | Tok::Sym('}') => break,
                _ => all.push(self.filter_expr(lx)?),
            }
        }
        Ok(match all.len() {
            0 => Filter::Const(true),
            1 => all.pop().expect("one"),
            _ => Filter::And(all),
        })
    }

    pub(crate) fn filter_expr(&mut self, lx: &mut Lexer<'_>) -> PResult<Filter> {
        let mut v = vec![self.filter_and(lx)?];
        while lx.eat_word("or")? {
            v.push(self.filter_and(lx)?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Filter::Or(v)
        })
    }

    fn filter_and(&mut self, lx: &mut Lexer<'_>) -> PResult<Filter> {
        let mut v = vec![self.filter_unary(lx)?];
        while lx.eat_word("and")? {
            v.push(self.filter_unary(lx)?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Filter::And(v)
        })
    }

    fn filter_unary(&mut self, lx: &mut Lexer<'_>) -> PResult<Filter> {
        if lx.eat_word("not")? {
            return Ok(Filter::Not(Box::new(self.filter_unary(lx)?)));
        }
        if lx.eat_sym('(')? {
            let f = self.filter_expr(lx)?;
            lx.expect_sym(')', "to close `(` in the filter")?;
            return Ok(f);
        }
        let t = lx.peek()?.clone();
        let is_call = matches!(t.tok, Tok::Word(_)) && lx.peek_at(1)?.tok == Tok::Sym('(');
        match &t.tok {
            Tok::Word(w) if is_call => {
                let w = w.clone();
                lx.next()?;
                lx.next()?;
                self.filter_function(lx, &w, t.span)
            }
            Tok::Str(_) | Tok::Word(_) => self.comparison(lx),
            other => Err(Problem::error(
                t.span,
                format!("expected {TERMS}; found {}", other.describe()),
            )),
        }
    }

    /// `left OP right`.
    fn comparison(&mut self, lx: &mut Lexer<'_>) -> PResult<Filter> {
        let (left, lspan) = lx.expect_value("a value to compare")?;
        let t = lx.next()?;
        let (op, numeric) = match &t.tok {
            Tok::Op(o) => (
                match o {
                    Op::Eq => CmpOp::Eq,
                    Op::Ne => CmpOp::Ne,
                    Op::Lt => CmpOp::Lt,
                    Op::Le => CmpOp::Le,
                    Op::Gt => CmpOp::Gt,
                    Op::Ge => CmpOp::Ge,
                },
                true,
            ),
            Tok::Word(w) => (
                match w.as_str() {
                    "eq" => CmpOp::Eq,
                    "ne" => CmpOp::Ne,
                    "lt" => CmpOp::Lt,
                    "le" => CmpOp::Le,
                    "gt" => CmpOp::Gt,
                    "ge" => CmpOp::Ge,
                    _ => {
                        return Err(Problem::error(
                            t.span,
                            format!(
                                "expected a comparison (eq, ne, lt, le, gt, ge, ==, !=, <, <=, >, \
                                 >=) after {left:?}, found {}",
                                t.tok.describe()
                            ),
                        ));
                    }
                },
                false,
            ),
            other => {
                return Err(Problem::error(
                    t.span,
                    format!(
                        "expected {TERMS}; {left:?} must be followed by a comparison, found {}",
                        other.describe()
                    ),
                ));
            }
        };
        let (right, rspan) = lx.expect_value("a value to compare with")?;
        let left = self.template(&left, lspan)?;
        let right = self.template(&right, rspan)?;
        // Two literals (as a block's arguments often leave, `"acme" ne ""`) compare once.
        if let (Some(l), Some(r)) = (left.as_literal(), right.as_literal()) {
            return Ok(Filter::Const(op.holds(l, numeric, r)));
        }
        Ok(Filter::Compare {
            left,
            op,
            numeric,
            right,
        })
    }

    /// A filter function after its `(`.
    fn filter_function(&mut self, lx: &mut Lexer<'_>, name: &str, span: Span) -> PResult<Filter> {
        match name {
            "host" | "program" | "message" | "match" => {
                let args = self.call_args(lx, span)?;
                let fixed = match name {
                    "host" => Some(id::HOST),
                    "program" => Some(id::PROGRAM),
                    "message" => Some(id::MESSAGE),
                    _ => None,
                };
                self.match_filter(name, fixed, args)
            }
            "netmask" | "netmask6" => {
                let args = self.call_args(lx, span)?;
                let Some(Val::Str(text, at) | Val::Word(text, at)) = args.pos.first() else {
                    return Err(Problem::error(
                        span,
                        format!("{name}() needs an address/prefix"),
                    ));
                };
                netmask(text, *at)
            }
            "facility" => {
                let args = self.call_args(lx, span)?;
                let mut mask = 0u32;
                for v in &args.pos {
                    let (text, at) = val_text(v);
                    for (a, b) in ranges(text) {
                        let (x, y) = (facility(a, at)?, facility(b, at)?);
                        for f in x.min(y)..=x.max(y) {
                            mask |= 1 << f;
                        }
                    }
                }
                Ok(Filter::Facility(mask))
            }
            "level" | "priority" | "severity" => {
                let args = self.call_args(lx, span)?;
                let mut mask = 0u8;
                for v in &args.pos {
                    let (text, at) = val_text(v);
                    for (a, b) in ranges(text) {
                        let (x, y) = (level(a, at)?, level(b, at)?);
                        for l in x.min(y)..=x.max(y) {
                            mask |= 1 << l;
                        }
                    }
                }
                Ok(Filter::Level(mask))
            }
            "tags" => {
                let args = self.call_args(lx, span)?;
                let tags: Vec<Filter> = args
                    .pos
                    .iter()
                    .map(|v| Filter::Tag(val_text(v).0.as_bytes().into()))
                    .collect();
                Ok(match tags.len() {
                    0 => Filter::Const(false),
                    1 => tags.into_iter().next().expect("one"),
                    _ => Filter::Or(tags),
                })
            }
            "source" => {
                // `source(s_DEFAULT)`: the listener, which sluice tags `.source.s_<id>`.
                let args = self.call_args(lx, span)?;
                let tags: Vec<Filter> = args
                    .pos
                    .iter()
                    .map(|v| Filter::Tag(format!(".source.{}", val_text(v).0).into_bytes().into()))
                    .collect();
                Ok(Filter::Or(tags))
            }
            "filter" => {
                let (fname, at) = lx.expect_value("the name of a filter")?;
                lx.expect_sym(')', "after the filter's name")?;
                Ok(Filter::Named(self.named_filter(&fname, at)?))
            }
            "in-list" => {
                let args = self.call_args(lx, span)?;
                let Some(Val::Str(file, at) | Val::Word(file, at)) = args.pos.first() else {
                    return Err(Problem::error(span, "in-list() needs a file name"));
                };
                let text = (self.read)(file).map_err(|e| {
                    Problem::error(*at, format!("in-list({file:?}): cannot read it: {e}"))
                })?;
                let set: HashSet<Box<[u8]>> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(|l| l.as_bytes().into())
                    .collect();
                let subject = match args.opt("value") {
                    Some(o) => Subject::Ref(resolve(&mut self.names, opt_text(o)?.0)),
                    None => Subject::Ref(Reference::Name(id::MESSAGE)),
                };
                Ok(Filter::InList { subject, set })
            }
            other if self.has_block(other) => {
                let raw = lx.capture('(', ')')?;
                self.instantiate_filter(other, &raw, span)
            }
            other => Err(Problem::unsupported(
                span,
                format!("filter function {other}() is not supported; sluice has {TERMS}"),
            )),
        }
    }

    /// `host()`, `program()`, `message()`, `match()`.
    fn match_filter(
        &mut self,
        name: &str,
        fixed: Option<u32>,
        args: super::CallArgs,
    ) -> PResult<Filter> {
        let Some(Val::Str(pat, pspan) | Val::Word(pat, pspan)) = args.pos.first() else {
            return Err(Problem::error(
                args.span,
                format!("{name}() needs a pattern"),
            ));
        };
        let (pat, pspan) = (pat.clone(), *pspan);
        let mut kind = "pcre".to_string();
        let mut flags = Vec::new();
        let mut subject = match fixed {
            Some(n) => Subject::Ref(Reference::Name(n)),
            None => Subject::HdrMsg,
        };
        for o in &args.opts {
            match o.name.as_str() {
                "type" => kind = opt_text(o)?.0.to_owned(),
                "flags" => flags.extend(o.vals.iter().map(|v| val_text(v).0.to_owned())),
                "value" if fixed.is_none() => {
                    let (v, _) = opt_text(o)?;
                    let v = v.strip_prefix('$').unwrap_or(v);
                    subject = Subject::Ref(resolve(&mut self.names, v));
                }
                "template" if fixed.is_none() => {
                    let (t, at) = opt_text(o)?;
                    let t = t.to_owned();
                    subject = Subject::Tmpl(self.template(&t, at)?);
                }
                other => {
                    return Err(Problem::error(
                        o.span,
                        format!(
                            "{name}() has no option {other}() (type(), flags(){})",
                            if fixed.is_none() {
                                ", value(), template()"
                            } else {
                                ""
                            }
                        ),
                    ));
                }
            }
        }
        let pattern = compile_pattern(&pat, &kind, &flags, pspan)?;
        Ok(Filter::Match { subject, pattern })
    }
}

/// A pattern of `type(kind)` with `flags(...)`.
pub(crate) fn compile_pattern(
    pat: &str,
    kind: &str,
    flags: &[String],
    span: Span,
) -> PResult<Pattern> {
    let mut ic = false;
    let mut prefix = false;
    let mut substring = false;
    let mut store = false;
    for f in flags {
        match f.as_str() {
            "ignore-case" | "ignore_case" => ic = true,
            "prefix" => prefix = true,
            "substring" => substring = true,
            "store-matches" | "store_matches" => store = true,
            "utf8" | "unicode" | "disable-jit" | "dupnames" | "nobackref" | "global" => {}
            other => {
                return Err(Problem::error(
                    span,
                    format!(
                        "unknown match flag {other:?} (ignore-case, prefix, substring, store-matches, utf8)"
                    ),
                ));
            }
        }
    }
    Ok(match kind {
        "string" if prefix => Pattern::Prefix(pat.as_bytes().into(), ic),
        "string" if substring => Pattern::Substring(pat.as_bytes().into(), ic),
        "string" => Pattern::Exact(pat.as_bytes().into(), ic),
        "glob" => {
            let re = Re::new(&glob_regex(pat), ic).map_err(|e| Problem::error(span, e))?;
            Pattern::Regex { re, store: false }
        }
        "pcre" | "posix" | "" => {
            let re = Re::new(pat, ic).map_err(|e| Problem::unsupported(span, e))?;
            Pattern::Regex { re, store }
        }
        other => {
            return Err(Problem::error(
                span,
                format!("type({other}) is not a pattern type (pcre, string, glob)"),
            ));
        }
    })
}

/// A syslog-ng glob (`*`, `?`, `[...]`) as an anchored regex.
pub(crate) fn glob_regex(glob: &str) -> String {
    let mut r = String::from("^");
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' => r.push_str(".*"),
            '?' => r.push('.'),
            '[' => {
                let rest: String = chars.clone().collect();
                match rest.find(']') {
                    Some(end) => {
                        let class = &rest[..end];
                        r.push('[');
                        match class.strip_prefix('!') {
                            Some(neg) => {
                                r.push('^');
                                r.push_str(&class_escape(neg));
                            }
                            None => r.push_str(&class_escape(class)),
                        }
                        r.push(']');
                        for _ in 0..=class.chars().count() {
                            chars.next();
                        }
                    }
                    None => r.push_str("\\["),
                }
            }
            c => r.push_str(&regex::escape(&c.to_string())),
        }
    }
    r.push('$');
    r
}

fn class_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\\' | ']' | '[' | '^' => format!("\\{c}"),
            c => c.to_string(),
        })
        .collect()
}

pub(crate) fn val_text(v: &Val) -> (&str, Span) {
    match v {
        Val::Str(s, at) | Val::Word(s, at) => (s, *at),
        Val::Opt(o) => (&o.name, o.span),
    }
}

/// The one text value of an option (`value("HOST")`).
pub(crate) fn opt_text(o: &Opt) -> PResult<(&str, Span)> {
    match o.vals.as_slice() {
        [v @ (Val::Str(..) | Val::Word(..))] => Ok(val_text(v)),
        _ => Err(Problem::error(
            o.span,
            format!("{}() takes one value", o.name),
        )),
    }
}

/// `a..b` ranges (and single values) of a level/facility list.
fn ranges(text: &str) -> Vec<(&str, &str)> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.split_once("..").unwrap_or((s, s)))
        .collect()
}

fn level(name: &str, at: Span) -> PResult<u8> {
    crate::message::severity_by_name(name).ok_or_else(|| {
        Problem::error(
            at,
            format!("{name:?} is not a syslog level (emerg .. debug)"),
        )
    })
}

fn facility(name: &str, at: Span) -> PResult<u32> {
    crate::message::facility_by_name(name)
        .map(u32::from)
        .ok_or_else(|| Problem::error(at, format!("{name:?} is not a syslog facility")))
}

/// `10.1.0.0/16`, `10.1.0.0/255.255.0.0`, `10.0.0.1`, `2001:db8::/32`.
fn netmask(text: &str, at: Span) -> PResult<Filter> {
    let bad = || {
        Problem::error(
            at,
            format!("{text:?} is not an address/prefix such as 10.1.0.0/16"),
        )
    };
    let (addr, mask) = match text.split_once('/') {
        Some((a, m)) => (a.trim(), Some(m.trim())),
        None => (text.trim(), None),
    };
    let ip: IpAddr = addr.parse().map_err(|_| bad())?;
    let (bits, net) = match ip {
        IpAddr::V4(v4) => (32u32, u128::from(v4.to_ipv6_mapped())),
        IpAddr::V6(v6) => (128u32, u128::from(v6)),
    };
    let prefix = match mask {
        None => bits,
        Some(m) => match m.parse::<u32>() {
            Ok(p) if p <= bits => p,
            Ok(_) => return Err(bad()),
            Err(_) => match m.parse::<std::net::Ipv4Addr>() {
                Ok(d) if bits == 32 => {
                    let b = u32::from(d);
                    if b.leading_ones() + b.trailing_zeros() != 32 {
                        return Err(bad());
                    }
                    b.leading_ones()
                }
                _ => return Err(bad()),
            },
        },
    };
    // IPv4 nets are kept as mapped IPv6: the leading 96 bits are fixed.
    let total = if bits == 32 { 96 + prefix } else { prefix };
    let mask = if total == 0 {
        0
    } else {
        u128::MAX << (128 - total)
    };
    Ok(Filter::Netmask {
        net: net & mask,
        mask,
    })
}

#[cfg(test)]
pub(crate) fn filter_for_tests(text: &str) -> Filter {
    let mut c = super::tests::compiler();
    c.filter_text(&RawSlice::whole(0, text.into()))
        .expect("compiles")
}
