//! Statements: what a `channel`, a `parser { }` or a `rewrite { }` holds, into [`Stmt`]s.

use super::super::decl::NamedKind;
use super::super::ir::{
    CsvEscape, CsvParser, DateParser, Filter, Glob, JsonParser, KvParser, RegexpParser, Stmt,
    SubstPattern, SyslogParser, Tmpl,
};
use super::super::lex::{Lexer, Tok};
use super::super::names::{Macro, NameId, Reference, id, resolve};
use super::super::re::Re;
use super::super::span::{PResult, Problem, Span};
use super::{CallArgs, Compiler, Val, opt_text, val_text};
use crate::time::Zone;

/// Where statements stand: a log path (`channel`, `if` bodies), a `parser { }` or a
/// `rewrite { }`. Drivers of either kind are accepted in both lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ctx {
    Log,
    Parser,
    Rewrite,
}

const PARSER_DRIVERS: &str = "regexp-parser, kv-parser, csv-parser, date-parser, json-parser, \
     syslog-parser, or a block";

impl Compiler<'_> {
    pub(crate) fn stmt_list(&mut self, lx: &mut Lexer<'_>, ctx: Ctx) -> PResult<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            let t = lx.peek()?.clone();
            match &t.tok {
                Tok::Eof | Tok::Sym('}') => return Ok(out),
                Tok::Sym(';') => {
                    lx.next()?;
                }
                Tok::Word(w) => {
                    let w = w.clone();
                    lx.next()?;
                    self.statement(lx, &w, t.span, ctx, &mut out)?;
                }
                other => {
                    return Err(Problem::error(
                        t.span,
                        format!("expected a statement, found {}", other.describe()),
                    ));
                }
            }
        }
    }

    fn statement(
        &mut self,
        lx: &mut Lexer<'_>,
        w: &str,
        span: Span,
        ctx: Ctx,
        out: &mut Vec<Stmt>,
    ) -> PResult<()> {
        match w {
            "filter" => {
                if lx.eat_sym('{')? {
                    let body = lx.capture('{', '}')?;
                    out.push(Stmt::Filter(self.filter_text(&body)?));
                } else {
                    lx.expect_sym('(', "after `filter` (`filter { ... }` or `filter(name)`)")?;
                    let (name, at) = lx.expect_value("a filter's name")?;
                    lx.expect_sym(')', "after the filter's name")?;
                    out.push(Stmt::Filter(Filter::Named(self.named_filter(&name, at)?)));
                }
            }
            "parser" | "rewrite" => {
                let (kind, inner) = if w == "parser" {
                    (NamedKind::Parser, Ctx::Parser)
                } else {
                    (NamedKind::Rewrite, Ctx::Rewrite)
                };
                if lx.eat_sym('{')? {
                    let body = lx.capture('{', '}')?;
                    out.extend(self.stmts_text(&body, inner)?);
                } else {
                    lx.expect_sym(
                        '(',
                        &format!("after `{w}` (`{w} {{ ... }}` or `{w}(name)`)"),
                    )?;
                    let (name, at) = lx.expect_value(&format!("a {w}'s name"))?;
                    lx.expect_sym(')', &format!("after the {w}'s name"))?;
                    out.push(Stmt::Chain(self.named_chain(kind, &name, at)?));
                }
            }
            "channel" => {
                lx.expect_sym('{', "after `channel`")?;
                let body = lx.capture('{', '}')?;
                out.extend(self.stmts_text(&body, Ctx::Log)?);
            }
            "if" => out.push(self.if_stmt(lx)?),
            "flags" => {
                lx.expect_sym('(', "after `flags`")?;
                let raw = lx.capture('(', ')')?;
                for f in raw
                    .as_str()
                    .split([',', ' ', '\t', '\n'])
                    .filter(|f| !f.is_empty())
                {
                    // `final` ends an app-parser's junction: an application that took the
                    // message is the last one tried anyway.
                    if f != "final" {
                        return Err(Problem::unsupported(
                            span,
                            format!("flags({f}) in a channel is not supported (flags(final) is)"),
                        ));
                    }
                }
            }
            "junction" | "log" | "destination" | "source" => {
                return Err(Problem::unsupported(
                    span,
                    format!("`{w}` is not supported inside an app-parser"),
                ));
            }
            _ => {
                lx.expect_sym(
                    '(',
                    &format!("after `{w}` (a driver or block call: `{w}(...)`)"),
                )?;
                if self.is_driver(w) {
                    let args = self.call_args(lx, span)?;
                    self.driver(w, args, out)?;
                } else if self.has_block(w) {
                    let raw = lx.capture('(', ')')?;
                    out.extend(self.instantiate(w, &raw, span, ctx)?);
                } else {
                    let _ = lx.capture('(', ')');
                    return Err(Problem::unsupported(
                        span,
                        format!(
                            "{w}() is not supported: no block of that name, and not a driver \
                             sluice has ({PARSER_DRIVERS}; rewrites: set, unset, subst, set-tag, \
                             clear-tag, groupset, groupunset, rename, guess-time-zone, \
                             fix-time-zone, set-time-zone, set-pri, set-facility, set-severity)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `if (f) { } elif (f) { } else { }`, or with bodies only: `if { } elif { } else { }`.
    fn if_stmt(&mut self, lx: &mut Lexer<'_>) -> PResult<Stmt> {
        let mut branches = Vec::new();
        let mut has_else = false;
        loop {
            let mut branch = Vec::new();
            if lx.eat_sym('(')? {
                let f = self.filter_expr(lx)?;
                lx.expect_sym(')', "after the `if` condition")?;
                branch.push(Stmt::Filter(f));
            }
            lx.expect_sym('{', "to open the branch")?;
            let body = lx.capture('{', '}')?;
            branch.extend(self.stmts_text(&body, Ctx::Log)?);
            branches.push(branch);
            if lx.eat_word("elif")? {
                continue;
            }
            if lx.eat_word("else")? {
                lx.expect_sym('{', "after `else`")?;
                let body = lx.capture('{', '}')?;
                branches.push(self.stmts_text(&body, Ctx::Log)?);
                has_else = true;
            }
            break;
        }
        Ok(Stmt::If { branches, has_else })
    }

    fn is_driver(&self, w: &str) -> bool {
        matches!(
            w,
            "regexp-parser"
                | "kv-parser"
                | "csv-parser"
                | "date-parser"
                | "json-parser"
                | "syslog-parser"
                | "set"
                | "unset"
                | "subst"
                | "set-tag"
                | "clear-tag"
                | "groupset"
                | "groupunset"
                | "rename"
                | "guess-time-zone"
                | "fix-time-zone"
                | "set-time-zone"
                | "set-pri"
                | "set-facility"
                | "set-severity"
                | "sluice-splunk-metadata"
                | "python"
                | "xml"
                | "db-parser"
                | "grouping-by"
                | "app-parser"
                | "add-contextual-data"
                | "map-value-pairs"
                | "geoip2"
                | "credit-card-mask"
                | "linux-audit-parser"
                | "checkpoint-parser"
                | "cisco-parser"
                | "panos-parser"
                | "sdata-parser"
                | "metrics-probe"
                | "set-matches"
                | "unset-matches"
                | "regexp-parser-"
        ) && !self.has_block(w)
    }

    fn driver(&mut self, w: &str, args: CallArgs, out: &mut Vec<Stmt>) -> PResult<()> {
        let span = args.span;
        let cond = |args: &mut CallArgs| -> Option<Filter> {
            let at = args.opts.iter().position(|o| o.name == "condition")?;
            args.opts.remove(at).cond
        };
        match w {
            "set" => {
                let mut args = args;
                let c = cond(&mut args);
                args.only("set()", &["value"])?;
                let value = self.first_template(&args, "set() needs a value template")?;
                let target = self.one_value_name(&args, "set()")?;
                push_cond(out, Stmt::Set { value, target }, c);
            }
            "unset" => {
                let mut args = args;
                let c = cond(&mut args);
                args.only("unset()", &["value", "values"])?;
                let mut targets = self.value_names(&args, "")?;
                for v in &args.pos {
                    let (n, at) = val_text(v);
                    targets.push(self.writable(n, at)?);
                }
                if targets.is_empty() {
                    return Err(Problem::error(span, "unset() needs value(\"NAME\")"));
                }
                push_cond(out, Stmt::Unset { targets }, c);
            }
            "groupunset" | "groupset" => {
                let mut args = args;
                let c = cond(&mut args);
                args.only(&format!("{w}()"), &["values"])?;
                let mut globs = Vec::new();
                for o in args.opts_named("values") {
                    for v in &o.vals {
                        globs.push(Glob::new(val_text(v).0));
                    }
                }
                if globs.is_empty() {
                    return Err(Problem::error(
                        span,
                        format!("{w}() needs values(\"glob\")"),
                    ));
                }
                if w == "groupunset" {
                    push_cond(out, Stmt::GroupUnset { globs }, c);
                } else {
                    let value = self.first_template(&args, "groupset() needs a value template")?;
                    push_cond(out, Stmt::GroupSet { value, globs }, c);
                }
            }
            "rename" => {
                let mut args = args;
                let c = cond(&mut args);
                args.only("rename()", &[])?;
                let [a, b] = args.pos.as_slice() else {
                    return Err(Problem::error(
                        span,
                        "rename() needs two names: rename(\"from\" \"to\")",
                    ));
                };
                let (from, fa) = val_text(a);
                let (to, ta) = val_text(b);
                let (from, to) = (from.to_owned(), to.to_owned());
                let s = Stmt::Rename {
                    from: self.writable(&from, fa)?,
                    to: self.writable(&to, ta)?,
                };
                push_cond(out, s, c);
            }
            "subst" => {
                let mut args = args;
                let c = cond(&mut args);
                args.only("subst()", &["value", "type", "flags"])?;
                let (Some(pat), Some(rep)) = (args.pos.first(), args.pos.get(1)) else {
                    return Err(Problem::error(
                        span,
                        "subst() needs a pattern and a replacement",
                    ));
                };
                let (pat, pspan) = val_text(pat);
                let (rep, rspan) = val_text(rep);
                let (pat, rep) = (pat.to_owned(), rep.to_owned());
                let kind = match args.opt("type") {
                    Some(o) => opt_text(o)?.0.to_owned(),
                    None => "pcre".into(),
                };
                let flags = Self::flags(&args);
                let ic = flags.iter().any(|f| f == "ignore-case");
                let global = flags.iter().any(|f| f == "global");
                let pattern = match kind.as_str() {
                    "string" => SubstPattern::Literal(pat.as_bytes().into(), ic),
                    "pcre" | "posix" => SubstPattern::Regex(
                        Re::new(&pat, ic).map_err(|e| Problem::unsupported(pspan, e))?,
                    ),
                    "glob" => {
                        return Err(Problem::error(pspan, "subst() cannot use type(glob)"));
                    }
                    other => {
                        return Err(Problem::error(
                            pspan,
                            format!("type({other}) is not a pattern type"),
                        ));
                    }
                };
                let replacement = self.template(&rep, rspan)?;
                let target = match args.opt("value") {
                    Some(_) => self.one_value_name(&args, "subst()")?,
                    None => id::MESSAGE,
                };
                push_cond(
                    out,
                    Stmt::Subst {
                        pattern,
                        replacement,
                        target,
                        global,
                    },
                    c,
                );
            }
            "set-tag" | "clear-tag" => {
                let mut args = args;
                let c = cond(&mut args);
                args.only(&format!("{w}()"), &[])?;
                let Some(v) = args.pos.first() else {
                    return Err(Problem::error(span, format!("{w}() needs a tag")));
                };
                let (tag, at) = val_text(v);
                let tag = tag.to_owned();
                let t = self.template(&tag, at)?;
                let s = if w == "set-tag" {
                    Stmt::SetTag(t)
                } else {
                    Stmt::ClearTag(t)
                };
                push_cond(out, s, c);
            }
            "guess-time-zone" => {
                args.only("guess-time-zone()", &[])?;
                out.push(Stmt::GuessTimeZone);
            }
            "fix-time-zone" | "set-time-zone" | "set-pri" | "set-facility" | "set-severity" => {
                let mut args = args;
                let c = cond(&mut args);
                args.only(&format!("{w}()"), &[])?;
                let t = self.first_template(&args, &format!("{w}() needs a value"))?;
                let s = match w {
                    "fix-time-zone" => Stmt::FixTimeZone(t),
                    "set-time-zone" => Stmt::SetTimeZone(t),
                    "set-pri" => Stmt::SetPri(t),
                    "set-facility" => Stmt::SetFacility(t),
                    _ => Stmt::SetSeverity(t),
                };
                push_cond(out, s, c);
            }
            "regexp-parser" => out.push(Stmt::Regexp(self.regexp_parser(args)?)),
            "kv-parser" => out.push(Stmt::Kv(self.kv_parser(args)?)),
            "csv-parser" => out.push(Stmt::Csv(self.csv_parser(args)?)),
            "date-parser" => out.push(Stmt::Date(self.date_parser(args)?)),
            "json-parser" => out.push(Stmt::Json(self.json_parser(args)?)),
            "syslog-parser" => out.push(Stmt::Syslog(self.syslog_parser(args)?)),
            "sluice-splunk-metadata" => out.push(Stmt::SplunkMetadata),
            other => {
                return Err(Problem::unsupported(
                    span,
                    format!("{other}() is not supported by sluice's app-parser loader"),
                ));
            }
        }
        Ok(())
    }

    /// The positional template of `set("...")`, `fix-time-zone("...")`.
    fn first_template(&mut self, args: &CallArgs, missing: &str) -> PResult<Tmpl> {
        let Some(v) = args.pos.first() else {
            return Err(Problem::error(args.span, missing.to_owned()));
        };
        let (t, at) = val_text(v);
        let t = t.to_owned();
        self.template(&t, at)
    }

    /// The one `value("NAME")` of `set()` / `subst()`.
    fn one_value_name(&mut self, args: &CallArgs, what: &str) -> PResult<NameId> {
        let names = self.value_names(args, &format!("{what} needs value(\"NAME\")"))?;
        match names.as_slice() {
            [one] => Ok(*one),
            _ => Err(Problem::error(
                args.span,
                format!("{what} takes one value(\"NAME\")"),
            )),
        }
    }

    /// The names of `value("A") value("B")`.
    fn value_names(&mut self, args: &CallArgs, missing: &str) -> PResult<Vec<NameId>> {
        let mut out = Vec::new();
        for o in args.opts_named("value").chain(args.opts_named("values")) {
            for v in &o.vals {
                let (n, at) = val_text(v);
                let n = n.to_owned();
                out.push(self.writable(&n, at)?);
            }
        }
        if out.is_empty() && !missing.is_empty() {
            return Err(Problem::error(args.span, missing.to_owned()));
        }
        Ok(out)
    }

    /// A name a rewrite may set: a name-value pair or a message field, not a macro.
    fn writable(&mut self, name: &str, at: Span) -> PResult<NameId> {
        let name = name.strip_prefix('$').unwrap_or(name);
        let name = name
            .strip_prefix('{')
            .and_then(|n| n.strip_suffix('}'))
            .unwrap_or(name);
        match resolve(&mut self.names, name) {
            Reference::Name(n) => Ok(n),
            Reference::Macro(Macro::Sdata) | Reference::Macro(_) => Err(Problem::unsupported(
                at,
                format!("{name} is computed from the message and cannot be set"),
            )),
            Reference::Group(_) => Err(Problem::unsupported(
                at,
                format!("${name} is a match group and cannot be set"),
            )),
        }
    }

    /// `template("...")` of a parser, `${MESSAGE}` by default.
    fn parser_template(&mut self, args: &CallArgs) -> PResult<Tmpl> {
        match args.opt("template") {
            Some(o) => {
                let (t, at) = opt_text(o)?;
                let t = t.to_owned();
                self.template(&t, at)
            }
            None => Ok(Tmpl {
                parts: vec![super::super::ir::Part::Ref {
                    r: Reference::Name(id::MESSAGE),
                    default: None,
                }],
            }),
        }
    }

    fn prefix(args: &CallArgs) -> PResult<String> {
        Ok(match args.opt("prefix") {
            Some(o) => opt_text(o)?.0.to_owned(),
            None => String::new(),
        })
    }

    fn flags(args: &CallArgs) -> Vec<String> {
        args.opts_named("flags")
            .flat_map(|o| o.vals.iter().map(|v| val_text(v).0.to_owned()))
            .collect()
    }

    fn regexp_parser(&mut self, args: CallArgs) -> PResult<RegexpParser> {
        args.only(
            "regexp-parser()",
            &["patterns", "prefix", "template", "flags", "type"],
        )?;
        let prefix = Self::prefix(&args)?;
        let flags = Self::flags(&args);
        let ic = flags.iter().any(|f| f == "ignore-case");
        let template = self.parser_template(&args)?;
        if let Some(t) = args.opt("type") {
            let (k, at) = opt_text(t)?;
            if k != "pcre" {
                return Err(Problem::unsupported(
                    at,
                    format!("regexp-parser type({k}) is not supported (pcre is)"),
                ));
            }
        }
        let mut patterns = Vec::new();
        for o in args.opts_named("patterns") {
            for v in &o.vals {
                let (p, at) = val_text(v);
                let re = Re::new(p, ic).map_err(|e| Problem::unsupported(at, e))?;
                let names = re
                    .group_names()
                    .iter()
                    .map(|n| {
                        n.as_ref()
                            .map(|n| self.names.intern(&format!("{prefix}{n}")))
                    })
                    .collect();
                patterns.push((re, names));
            }
        }
        if patterns.is_empty() {
            return Err(Problem::error(
                args.span,
                "regexp-parser() needs patterns(\"...\")",
            ));
        }
        Ok(RegexpParser { template, patterns })
    }

    fn kv_parser(&mut self, args: CallArgs) -> PResult<KvParser> {
        args.only(
            "kv-parser()",
            &[
                "prefix",
                "template",
                "value-separator",
                "pair-separator",
                "extract-stray-words-into",
            ],
        )?;
        let value_separator = match args.opt("value-separator") {
            Some(o) => {
                let (s, at) = opt_text(o)?;
                let b = s.as_bytes();
                if b.len() != 1 {
                    return Err(Problem::error(
                        at,
                        "value-separator() must be one character",
                    ));
                }
                b[0]
            }
            None => b'=',
        };
        let pair_separator = match args.opt("pair-separator") {
            Some(o) => {
                let (s, at) = opt_text(o)?;
                if s.is_empty() {
                    return Err(Problem::error(at, "pair-separator() must not be empty"));
                }
                Some(s.as_bytes().into())
            }
            None => None,
        };
        let stray_words = match args.opt("extract-stray-words-into") {
            Some(o) => {
                let (n, at) = opt_text(o)?;
                let n = n.to_owned();
                Some(self.writable(&n, at)?)
            }
            None => None,
        };
        Ok(KvParser {
            template: self.parser_template(&args)?,
            prefix: Self::prefix(&args)?,
            value_separator,
            pair_separator,
            stray_words,
            known: None,
        })
    }

    fn csv_parser(&mut self, args: CallArgs) -> PResult<CsvParser> {
        args.only(
            "csv-parser()",
            &[
                "columns",
                "delimiters",
                "quote-pairs",
                "quotes",
                "null",
                "flags",
                "dialect",
                "prefix",
                "template",
                "drop-invalid",
            ],
        )?;
        let prefix = Self::prefix(&args)?;
        let mut columns = Vec::new();
        for o in args.opts_named("columns") {
            for v in &o.vals {
                let c = format!("{prefix}{}", val_text(v).0);
                columns.push(self.names.intern(&c));
            }
        }
        let mut chars = vec![b' '];
        let mut strings = Vec::new();
        if let Some(o) = args.opt("delimiters") {
            chars.clear();
            for v in &o.vals {
                match v {
                    Val::Opt(o) if o.name == "chars" => {
                        let vals = &o.vals;
                        for c in vals {
                            chars.extend_from_slice(val_text(c).0.as_bytes());
                        }
                    }
                    Val::Opt(o) if o.name == "strings" => {
                        let vals = &o.vals;
                        for s in vals {
                            let s = val_text(s).0;
                            if !s.is_empty() {
                                strings.push(s.as_bytes().into());
                            }
                        }
                    }
                    Val::Opt(o) => {
                        return Err(Problem::error(
                            o.span,
                            "delimiters() takes chars() and strings()",
                        ));
                    }
                    v => chars.extend_from_slice(val_text(v).0.as_bytes()),
                }
            }
        }
        let mut quotes = vec![(b'"', b'"'), (b'\'', b'\'')];
        if let Some(o) = args.opt("quote-pairs") {
            let (q, at) = opt_text(o)?;
            let b = q.as_bytes();
            if b.len() % 2 != 0 {
                return Err(Problem::error(
                    at,
                    "quote-pairs() needs pairs of characters, such as '\"\"[]'",
                ));
            }
            quotes = b.chunks(2).map(|p| (p[0], p[1])).collect();
        } else if let Some(o) = args.opt("quotes") {
            quotes = opt_text(o)?.0.bytes().map(|q| (q, q)).collect();
        }
        let null = match args.opt("null") {
            Some(o) => Some(opt_text(o)?.0.as_bytes())
                .filter(|n| !n.is_empty())
                .map(Box::from),
            None => None,
        };
        let mut escape = CsvEscape::None;
        let mut greedy = false;
        let mut strip_whitespace = true;
        let mut drop_invalid = false;
        if args.opt("flags").is_some() {
            // syslog-ng replaces its default flags with the ones given.
            strip_whitespace = false;
            for f in Self::flags(&args) {
                match f.as_str() {
                    "escape-none" => escape = CsvEscape::None,
                    "escape-backslash" => escape = CsvEscape::Backslash,
                    "escape-double-char" => escape = CsvEscape::DoubleChar,
                    "strip-whitespace" => strip_whitespace = true,
                    "greedy" => greedy = true,
                    "drop-invalid" => drop_invalid = true,
                    other => {
                        return Err(Problem::error(
                            args.span,
                            format!("csv-parser: unknown flag {other}"),
                        ));
                    }
                }
            }
        }
        if let Some(o) = args.opt("dialect") {
            let (d, at) = opt_text(o)?;
            escape = match d {
                "escape-none" => CsvEscape::None,
                "escape-backslash" => CsvEscape::Backslash,
                "escape-double-char" => CsvEscape::DoubleChar,
                other => {
                    return Err(Problem::unsupported(
                        at,
                        format!("csv-parser dialect({other}) is not supported"),
                    ));
                }
            };
        }
        if let Some(o) = args.opt("drop-invalid") {
            drop_invalid = matches!(opt_text(o)?.0, "yes" | "1" | "on");
        }
        if greedy && columns.is_empty() {
            return Err(Problem::error(
                args.span,
                "csv-parser flags(greedy) needs columns()",
            ));
        }
        Ok(CsvParser {
            template: self.parser_template(&args)?,
            columns,
            chars,
            strings,
            quotes,
            null,
            escape,
            greedy,
            strip_whitespace,
            drop_invalid,
        })
    }

    fn date_parser(&mut self, args: CallArgs) -> PResult<DateParser> {
        args.only(
            "date-parser()",
            &[
                "format",
                "template",
                "time-zone",
                "flags",
                "date-type",
                "time-stamp",
                "value",
            ],
        )?;
        let mut formats = Vec::new();
        for o in args.opts_named("format") {
            for v in &o.vals {
                formats.push(val_text(v).0.to_owned());
            }
        }
        if formats.is_empty() {
            formats.push("%FT%T%z".to_owned());
        }
        let zone = match args.opt("time-zone") {
            Some(o) => {
                let (z, at) = opt_text(o)?;
                Some(
                    Zone::from_name(z)
                        .map_err(|e| Problem::error(at, format!("time-zone({z}): {e}")))?,
                )
            }
            None => None,
        };
        let mut guess = false;
        for f in Self::flags(&args) {
            match f.as_str() {
                "guess-timezone" | "guess-time-zone" => guess = true,
                other => {
                    return Err(Problem::unsupported(
                        args.span,
                        format!("date-parser flags({other}) is not supported"),
                    ));
                }
            }
        }
        for name in ["time-stamp", "value"] {
            if let Some(o) = args.opt(name) {
                let (v, at) = opt_text(o)?;
                if v != "stamp" {
                    return Err(Problem::unsupported(
                        at,
                        format!(
                            "date-parser {name}({v}) is not supported (the message's stamp is)"
                        ),
                    ));
                }
            }
        }
        Ok(DateParser {
            template: self.parser_template(&args)?,
            formats,
            zone,
            guess_timezone: guess,
        })
    }

    fn json_parser(&mut self, args: CallArgs) -> PResult<JsonParser> {
        args.only(
            "json-parser()",
            &["prefix", "template", "extract-prefix", "marker"],
        )?;
        if let Some(o) = args.opt("marker") {
            return Err(Problem::unsupported(
                o.span,
                "json-parser marker() is not supported",
            ));
        }
        let extract = match args.opt("extract-prefix") {
            Some(o) => Some(opt_text(o)?.0.to_owned()),
            None => None,
        };
        Ok(JsonParser {
            template: self.parser_template(&args)?,
            prefix: Self::prefix(&args)?,
            extract,
        })
    }

    fn syslog_parser(&mut self, args: CallArgs) -> PResult<SyslogParser> {
        args.only(
            "syslog-parser()",
            &[
                "flags",
                "template",
                "drop-invalid",
                "default-priority",
                "default-facility",
            ],
        )?;
        let mut p = SyslogParser {
            template: self.parser_template(&args)?,
            rfc5424_only: false,
            no_header: false,
            guess_timezone: false,
        };
        for f in Self::flags(&args) {
            match f.as_str() {
                "syslog-protocol" => p.rfc5424_only = true,
                "no-header" => p.no_header = true,
                "guess-timezone" => p.guess_timezone = true,
                "assume-utf8"
                | "validate-utf8"
                | "no-rfc3164-fallback"
                | "check-hostname"
                | "no-hostname"
                | "store-raw-message"
                | "expect-hostname"
                | "dont-store-legacy-msghdr"
                | "store-legacy-msghdr"
                | "no-multi-line"
                | "sanitize-utf8"
                | "empty-lines" => {}
                other => {
                    return Err(Problem::unsupported(
                        args.span,
                        format!("syslog-parser flags({other}) is not supported"),
                    ));
                }
            }
        }
        Ok(p)
    }
}

/// A rewrite with an optional `condition()`: as one `if` without `else`, which passes when
/// the condition is false.
fn push_cond(out: &mut Vec<Stmt>, s: Stmt, cond: Option<Filter>) {
    match cond {
        Some(c) => out.push(Stmt::If {
            branches: vec![vec![Stmt::Filter(c), s]],
            has_else: false,
        }),
        None => out.push(s),
    }
}
