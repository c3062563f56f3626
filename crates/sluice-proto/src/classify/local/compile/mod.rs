//! From declarations to what the evaluator runs: the declaration tables, named objects
//! compiled once on first use, blocks instantiated per call with their arguments, and the
//! generic option syntax `name(value ... option(...))` drivers share.

mod filter;
mod stmt;
mod template;

use std::collections::HashMap;

use super::decl::{BlockDecl, NamedKind, TemplateBody, arg_value};
use super::ir::{ChainId, Filter, FilterId, Stmt, TemplateId, Tmpl};
use super::lex::{Lexer, RawSlice, Scope, Tok};
use super::names::Names;
use super::span::{PResult, Problem, Span};

#[cfg(test)]
pub(crate) use filter::filter_for_tests;
pub(crate) use filter::{opt_text, val_text};

/// A value inside a driver's or an option's parentheses.
#[derive(Debug)]
pub(crate) enum Val {
    Str(String, Span),
    Word(String, Span),
    Opt(Box<Opt>),
}

/// `name(values...)`; `condition(...)` holds a filter instead.
#[derive(Debug)]
pub(crate) struct Opt {
    pub name: String,
    pub span: Span,
    pub vals: Vec<Val>,
    pub cond: Option<Filter>,
}

/// The arguments of a driver: values without a name, then options.
#[derive(Debug)]
pub(crate) struct CallArgs {
    pub span: Span,
    pub pos: Vec<Val>,
    pub opts: Vec<Opt>,
}

impl CallArgs {
    pub fn opt(&self, name: &str) -> Option<&Opt> {
        self.opts.iter().find(|o| o.name == name)
    }

    pub fn opts_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Opt> + 'a {
        self.opts.iter().filter(move |o| o.name == name)
    }

    /// An error for every option not in `known`.
    pub fn only(&self, what: &str, known: &[&str]) -> PResult<()> {
        for o in &self.opts {
            if !known.contains(&o.name.as_str()) {
                return Err(Problem::unsupported(
                    o.span,
                    format!(
                        "{what}: option {}() is not supported (sluice reads {})",
                        o.name,
                        known
                            .iter()
                            .map(|k| format!("{k}()"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A named filter, parser, rewrite or template: its body until first used, then its id.
#[derive(Debug)]
enum Slot {
    Pending(Span, RawSlice),
    PendingTemplate(Span, TemplateBody),
    Compiling,
    Done(u32),
    Failed(Problem),
}

/// How deep block calls may nest (a block that calls itself stops here).
const MAX_BLOCK_DEPTH: usize = 24;

pub(crate) struct Compiler<'a> {
    pub globals: &'a HashMap<String, String>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Reads a file an `in-list()` names.
    pub read: &'a dyn Fn(&str) -> Result<String, String>,
    pub names: Names,
    blocks: HashMap<String, BlockDecl>,
    named: HashMap<(NamedKind, String), Slot>,
    templates_by_name: HashMap<String, Slot>,
    pub filters: Vec<Filter>,
    pub chains: Vec<Vec<Stmt>>,
    pub templates: Vec<(String, Tmpl)>,
    /// The arguments of the block being instantiated (substituted in what it lexes).
    pub(crate) args: Vec<(String, String)>,
    depth: usize,
}

impl<'a> Compiler<'a> {
    pub fn new(
        globals: &'a HashMap<String, String>,
        env: &'a dyn Fn(&str) -> Option<String>,
        read: &'a dyn Fn(&str) -> Result<String, String>,
    ) -> Compiler<'a> {
        Compiler {
            globals,
            env,
            read,
            names: Names::default(),
            blocks: HashMap::new(),
            named: HashMap::new(),
            templates_by_name: HashMap::new(),
            filters: Vec::new(),
            chains: Vec::new(),
            templates: Vec::new(),
            args: Vec::new(),
            depth: 0,
        }
    }

    /// Registers a block; a second one of the same name is an error.
    pub fn add_block(&mut self, b: BlockDecl) -> PResult<()> {
        if self.blocks.contains_key(&b.name) {
            return Err(Problem::error(
                b.span,
                format!("block {} is defined twice", b.name),
            ));
        }
        self.blocks.insert(b.name.clone(), b);
        Ok(())
    }

    pub fn add_named(
        &mut self,
        kind: NamedKind,
        name: String,
        span: Span,
        body: RawSlice,
    ) -> PResult<()> {
        let key = (kind, name);
        if self.named.contains_key(&key) {
            return Err(Problem::error(
                span,
                format!("{} {} is defined twice", kind.word(), key.1),
            ));
        }
        self.named.insert(key, Slot::Pending(span, body));
        Ok(())
    }

    pub fn add_template(&mut self, name: String, span: Span, body: TemplateBody) -> PResult<()> {
        if self.templates_by_name.contains_key(&name) {
            return Err(Problem::error(
                span,
                format!("template {name} is defined twice"),
            ));
        }
        self.templates_by_name
            .insert(name, Slot::PendingTemplate(span, body));
        Ok(())
    }

    pub fn has_block(&self, name: &str) -> bool {
        self.blocks.contains_key(name)
    }

    /// Every named object not compiled yet, so that their errors are reported even when
    /// nothing uses them: (what, name).
    pub fn pending(&self) -> Vec<(NamedKind, String)> {
        let mut v: Vec<_> = self
            .named
            .iter()
            .filter(|(_, s)| matches!(s, Slot::Pending(..)))
            .map(|(k, _)| k.clone())
            .collect();
        v.sort_by(|a, b| a.1.cmp(&b.1));
        v
    }

    pub fn pending_templates(&self) -> Vec<String> {
        let mut v: Vec<_> = self
            .templates_by_name
            .iter()
            .filter(|(_, s)| matches!(s, Slot::PendingTemplate(..)))
            .map(|(k, _)| k.clone())
            .collect();
        v.sort();
        v
    }

    /// The named filters compiled: (kind, name, id).
    pub fn done_filters(&self) -> Vec<(NamedKind, String, FilterId)> {
        self.named
            .iter()
            .filter_map(|((k, n), s)| match (k, s) {
                (NamedKind::Filter, Slot::Done(id)) => Some((*k, n.clone(), *id)),
                _ => None,
            })
            .collect()
    }

    /// Compiles a named object (for [`Compiler::pending`]).
    pub fn compile_named(&mut self, kind: NamedKind, name: &str) -> PResult<()> {
        let span = match self.named.get(&(kind, name.to_owned())) {
            Some(Slot::Pending(s, _)) => *s,
            _ => return Ok(()),
        };
        match kind {
            NamedKind::Filter => self.named_filter(name, span).map(|_| ()),
            NamedKind::Parser | NamedKind::Rewrite => {
                self.named_chain(kind, name, span).map(|_| ())
            }
        }
    }

    /// A lexer over `slice` with the current block arguments in scope.
    fn with_lexer<T>(
        &mut self,
        slice: &RawSlice,
        f: impl FnOnce(&mut Self, &mut Lexer<'_>) -> PResult<T>,
    ) -> PResult<T> {
        let args = self.args.clone();
        let globals = self.globals;
        let env = self.env;
        let scope = Scope {
            args: &args,
            globals,
            env,
        };
        let mut lx = Lexer::new(slice, scope);
        let out = f(self, &mut lx)?;
        let t = lx.next()?;
        if t.tok != Tok::Eof {
            return Err(Problem::error(
                t.span,
                format!("unexpected {} (a `;` missing before it?)", t.tok.describe()),
            ));
        }
        Ok(out)
    }

    /// Runs `f` outside any block (named objects see no block's arguments).
    fn outside_blocks<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        let saved = std::mem::take(&mut self.args);
        let out = f(self);
        self.args = saved;
        out
    }

    pub(crate) fn named_filter(&mut self, name: &str, at: Span) -> PResult<FilterId> {
        let key = (NamedKind::Filter, name.to_owned());
        let body = match self.named.get(&key) {
            None => {
                return Err(Problem::unsupported(
                    at,
                    format!("filter({name}): no filter {name} is defined"),
                ));
            }
            Some(Slot::Done(id)) => return Ok(*id),
            Some(Slot::Failed(p)) => return Err(p.clone()),
            Some(Slot::Compiling) => {
                return Err(Problem::error(
                    at,
                    format!("filter {name} refers to itself"),
                ));
            }
            Some(Slot::Pending(_, b)) => b.clone(),
            Some(Slot::PendingTemplate(..)) => unreachable!("templates are kept apart"),
        };
        self.named.insert(key.clone(), Slot::Compiling);
        let result = self.outside_blocks(|c| c.filter_text(&body));
        match result {
            Ok(f) => {
                let id = self.filters.len() as FilterId;
                self.filters.push(f);
                self.named.insert(key, Slot::Done(id));
                Ok(id)
            }
            Err(p) => {
                self.named.insert(key, Slot::Failed(p.clone()));
                Err(p)
            }
        }
    }

    /// A named parser (`parser(p_x)`) or rewrite (`rewrite(r_x)`).
    pub(crate) fn named_chain(
        &mut self,
        kind: NamedKind,
        name: &str,
        at: Span,
    ) -> PResult<ChainId> {
        let key = (kind, name.to_owned());
        let body = match self.named.get(&key) {
            None => {
                return Err(Problem::unsupported(
                    at,
                    format!(
                        "{}({name}): no {} {name} is defined",
                        kind.word(),
                        kind.word()
                    ),
                ));
            }
            Some(Slot::Done(id)) => return Ok(*id),
            Some(Slot::Failed(p)) => return Err(p.clone()),
            Some(Slot::Compiling) => {
                return Err(Problem::error(
                    at,
                    format!("{} {name} refers to itself", kind.word()),
                ));
            }
            Some(Slot::Pending(_, b)) => b.clone(),
            Some(Slot::PendingTemplate(..)) => unreachable!("templates are kept apart"),
        };
        self.named.insert(key.clone(), Slot::Compiling);
        let ctx = if kind == NamedKind::Parser {
            stmt::Ctx::Parser
        } else {
            stmt::Ctx::Rewrite
        };
        let result = self.outside_blocks(|c| c.stmts_text(&body, ctx));
        match result {
            Ok(stmts) => {
                let id = self.chains.len() as ChainId;
                self.chains.push(stmts);
                self.named.insert(key, Slot::Done(id));
                Ok(id)
            }
            Err(p) => {
                self.named.insert(key, Slot::Failed(p.clone()));
                Err(p)
            }
        }
    }

    /// The id of template `name` (`None`: no such template).
    pub(crate) fn template_id(&mut self, name: &str, at: Span) -> PResult<Option<TemplateId>> {
        let (span, body) = match self.templates_by_name.get(name) {
            None => return Ok(None),
            Some(Slot::Done(id)) => return Ok(Some(*id)),
            Some(Slot::Failed(p)) => return Err(p.clone()),
            Some(Slot::Compiling) => {
                return Err(Problem::error(
                    at,
                    format!("template {name} refers to itself"),
                ));
            }
            Some(Slot::PendingTemplate(s, b)) => (*s, b.clone()),
            Some(Slot::Pending(..)) => unreachable!("templates have template bodies"),
        };
        self.templates_by_name
            .insert(name.to_owned(), Slot::Compiling);
        let result = self.outside_blocks(|c| match &body {
            TemplateBody::Text(text, at) => c.template(text, *at),
            TemplateBody::Block(slice) => c.with_lexer(slice, |c, lx| c.template_block(lx, span)),
        });
        match result {
            Ok(t) => {
                let id = self.templates.len() as TemplateId;
                self.templates.push((name.to_owned(), t));
                self.templates_by_name
                    .insert(name.to_owned(), Slot::Done(id));
                Ok(Some(id))
            }
            Err(p) => {
                self.templates_by_name
                    .insert(name.to_owned(), Slot::Failed(p.clone()));
                Err(p)
            }
        }
    }

    /// `template("..."); template-escape(no);` inside `template NAME { ... }`.
    fn template_block(&mut self, lx: &mut Lexer<'_>, span: Span) -> PResult<Tmpl> {
        let mut found = None;
        loop {
            let t = lx.peek()?.clone();
            match t.tok {
                Tok::Eof => break,
                Tok::Sym(';') => {
                    lx.next()?;
                }
                Tok::Word(w) => {
                    lx.next()?;
                    lx.expect_sym('(', &format!("after `{w}`"))?;
                    let args = self.call_args(lx, t.span)?;
                    match w.as_str() {
                        "template" => {
                            let Some(Val::Str(s, at) | Val::Word(s, at)) = args.pos.first() else {
                                return Err(Problem::error(t.span, "template() needs its text"));
                            };
                            found = Some(self.template(s, *at)?);
                        }
                        "template-escape" => {
                            let on = args
                                .pos
                                .first()
                                .is_some_and(|v| matches!(val_text(v).0, "yes" | "1" | "on"));
                            if on {
                                return Err(Problem::unsupported(
                                    t.span,
                                    "template-escape(yes) is not supported",
                                ));
                            }
                        }
                        other => {
                            return Err(Problem::unsupported(
                                t.span,
                                format!("template option {other}() is not supported"),
                            ));
                        }
                    }
                }
                other => {
                    return Err(Problem::error(
                        t.span,
                        format!("expected `template(\"...\");`, found {}", other.describe()),
                    ));
                }
            }
        }
        found.ok_or_else(|| Problem::error(span, "the template has no template(\"...\")"))
    }

    /// A driver's or option's arguments after its `(`, up to and including the `)`.
    pub(crate) fn call_args(&mut self, lx: &mut Lexer<'_>, span: Span) -> PResult<CallArgs> {
        let mut args = CallArgs {
            span,
            pos: Vec::new(),
            opts: Vec::new(),
        };
        loop {
            let t = lx.next()?;
            match t.tok {
                Tok::Sym(')') => return Ok(args),
                Tok::Str(s) => args.pos.push(Val::Str(s, t.span)),
                Tok::Word(w) => {
                    if lx.eat_sym('(')? {
                        args.opts.push(self.option(lx, w, t.span)?);
                    } else {
                        args.pos.push(Val::Word(w, t.span));
                    }
                }
                Tok::Eof => {
                    return Err(Problem::error(span, "`(` is not closed by a `)`"));
                }
                other => {
                    return Err(Problem::error(
                        t.span,
                        format!("unexpected {} in an option list", other.describe()),
                    ));
                }
            }
        }
    }

    /// `name(` values `)`, the `(` taken.
    fn option(&mut self, lx: &mut Lexer<'_>, name: String, span: Span) -> PResult<Opt> {
        if name == "condition" {
            let f = self.filter_expr(lx)?;
            lx.expect_sym(')', "after the condition")?;
            return Ok(Opt {
                name,
                span,
                vals: Vec::new(),
                cond: Some(f),
            });
        }
        let inner = self.call_args(lx, span)?;
        let mut vals = inner.pos;
        vals.extend(inner.opts.into_iter().map(|o| Val::Opt(Box::new(o))));
        Ok(Opt {
            name,
            span,
            vals,
            cond: None,
        })
    }

    /// Instantiates block `name` with the argument text `raw` (between its parentheses).
    pub(crate) fn instantiate(
        &mut self,
        name: &str,
        raw: &RawSlice,
        at: Span,
        ctx: stmt::Ctx,
    ) -> PResult<Vec<Stmt>> {
        let Some(block) = self.blocks.get(name).cloned() else {
            return Err(Problem::unsupported(
                at,
                format!("{name}(): no block, parser or rewrite driver of that name"),
            ));
        };
        if self.depth >= MAX_BLOCK_DEPTH {
            return Err(Problem::error(
                at,
                format!("block {name} calls itself (nesting too deep)"),
            ));
        }
        let given = self.block_args(raw)?;
        let mut args: Vec<(String, String)> = Vec::new();
        for (p, default, _) in &block.params {
            let v = given
                .iter()
                .find(|(n, _, _)| n == p)
                .map(|(_, v, _)| v.clone())
                .or_else(|| default.clone())
                .unwrap_or_default();
            args.push((p.clone(), v));
        }
        for (n, v, span) in &given {
            if !block.params.iter().any(|(p, _, _)| p == n) {
                if block.varargs {
                    args.push((n.clone(), v.clone()));
                } else {
                    return Err(Problem::error(
                        *span,
                        format!(
                            "block {name} has no parameter {n}() (it has {})",
                            block
                                .params
                                .iter()
                                .map(|(p, _, _)| format!("{p}()"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
        }
        let kind_ctx = match block.kind.as_str() {
            "parser" => stmt::Ctx::Parser,
            "rewrite" => stmt::Ctx::Rewrite,
            "log" | "channel" => stmt::Ctx::Log,
            "filter" => {
                return Err(Problem::unsupported(
                    at,
                    format!("block filter {name} used as a parser or rewrite"),
                ));
            }
            other => {
                return Err(Problem::unsupported(
                    at,
                    format!(
                        "block {other} {name}: only parser and rewrite blocks can be used here"
                    ),
                ));
            }
        };
        let _ = ctx;
        let saved = std::mem::replace(&mut self.args, args);
        self.depth += 1;
        let out = self.stmts_text(&block.body, kind_ctx);
        self.depth -= 1;
        self.args = saved;
        out
    }

    /// A filter block (`block filter f_x(...) { ... }`) called inside a filter.
    pub(crate) fn instantiate_filter(
        &mut self,
        name: &str,
        raw: &RawSlice,
        at: Span,
    ) -> PResult<Filter> {
        let Some(block) = self.blocks.get(name).cloned() else {
            return Err(Problem::unsupported(
                at,
                format!("{name}(): no filter block of that name"),
            ));
        };
        if block.kind != "filter" {
            return Err(Problem::unsupported(
                at,
                format!("{name} is a {} block, not a filter", block.kind),
            ));
        }
        if self.depth >= MAX_BLOCK_DEPTH {
            return Err(Problem::error(
                at,
                format!("block {name} calls itself (nesting too deep)"),
            ));
        }
        let given = self.block_args(raw)?;
        let args: Vec<(String, String)> = block
            .params
            .iter()
            .map(|(p, d, _)| {
                let v = given
                    .iter()
                    .find(|(n, _, _)| n == p)
                    .map(|(_, v, _)| v.clone())
                    .or_else(|| d.clone())
                    .unwrap_or_default();
                (p.clone(), v)
            })
            .collect();
        let saved = std::mem::replace(&mut self.args, args);
        self.depth += 1;
        let out = self.filter_text(&block.body);
        self.depth -= 1;
        self.args = saved;
        out
    }

    /// `name(value) name(value)` of a block call, each value as syslog-ng substitutes it.
    fn block_args(&mut self, raw: &RawSlice) -> PResult<Vec<(String, String, Span)>> {
        let args = self.args.clone();
        let scope = Scope {
            args: &args,
            globals: self.globals,
            env: self.env,
        };
        let mut lx = Lexer::new(raw, scope);
        let mut out = Vec::new();
        loop {
            let t = lx.next()?;
            match t.tok {
                Tok::Eof => return Ok(out),
                Tok::Word(w) => {
                    lx.expect_sym(
                        '(',
                        &format!("after argument `{w}` (arguments are name(value))"),
                    )?;
                    let value = lx.capture('(', ')')?;
                    out.push((
                        w,
                        substituted(&value, &args, self.globals, self.env),
                        t.span,
                    ));
                }
                other => {
                    return Err(Problem::error(
                        t.span,
                        format!(
                            "expected a block argument such as index(\"main\"), found {}",
                            other.describe()
                        ),
                    ));
                }
            }
        }
    }

    /// The statements of a raw body in context `ctx`.
    pub(crate) fn stmts_text(&mut self, slice: &RawSlice, ctx: stmt::Ctx) -> PResult<Vec<Stmt>> {
        self.with_lexer(slice, |c, lx| c.stmt_list(lx, ctx))
    }
}

/// An argument's value with the caller's own backtick references substituted (a block
/// passing its argument on: `vendor(`vendor`)`).
fn substituted(
    raw: &RawSlice,
    args: &[(String, String)],
    globals: &HashMap<String, String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> String {
    let v = arg_value(raw);
    if !v.contains('`') {
        return v;
    }
    let mut out = String::new();
    let mut rest = v.as_str();
    while let Some(i) = rest.find('`') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find('`') {
            Some(j) => {
                let name = &after[..j];
                let value = args
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| globals.get(name).cloned())
                    .or_else(|| env(name))
                    .unwrap_or_default();
                out.push_str(&value);
                rest = &after[j + 1..];
            }
            None => {
                out.push_str(&rest[i..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

pub(crate) use stmt::Ctx;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn compiler() -> Compiler<'static> {
        static GLOBALS: std::sync::LazyLock<HashMap<String, String>> =
            std::sync::LazyLock::new(HashMap::new);
        fn env(_: &str) -> Option<String> {
            None
        }
        fn read(_: &str) -> Result<String, String> {
            Err("no files in tests".into())
        }
        Compiler::new(&GLOBALS, &env, &read)
    }

    #[test]
    fn filters_compile() {
        let f = filter_for_tests(
            "host('^a') or (program(\"x\" type(string)) and not \"${HOST}\" eq \"b\"); level(err..emerg)",
        );
        assert!(matches!(f, Filter::And(ref v) if v.len() == 2), "{f:?}");
        let mut c = compiler();
        let e = c
            .filter_text(&RawSlice::whole(0, "hots(\"a\")".into()))
            .unwrap_err();
        assert!(
            e.message.contains("filter function hots()"),
            "{}",
            e.message
        );
        let e = c
            .filter_text(&RawSlice::whole(0, "\"a\" is \"b\"".into()))
            .unwrap_err();
        assert!(e.message.contains("comparison"), "{}", e.message);
        let e = c
            .filter_text(&RawSlice::whole(0, "netmask(10.0.0.0/33)".into()))
            .unwrap_err();
        assert!(e.message.contains("address/prefix"), "{}", e.message);
        let e = c
            .filter_text(&RawSlice::whole(0, "filter(f_none)".into()))
            .unwrap_err();
        assert!(e.message.contains("no filter f_none"), "{}", e.message);
    }
}
