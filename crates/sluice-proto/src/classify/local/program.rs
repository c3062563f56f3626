//! Loading: every file's declarations, the applications compiled with what they use, and
//! the report of what could not be used.

use std::collections::HashMap;

use super::compile::Compiler;
use super::decl::{Decl, read_file};
use super::gate::Gate;
use super::ir::{Context, Filter, FilterId, Stmt, TemplateId, Tmpl, for_each_stmt_mut};
use super::lex::RawSlice;
use super::names::{NameId, Names, id};
use super::prefilter::{Atom, derive};
use super::span::{Diagnostic, Files, Problem, Severity, SourceFile};
use super::stage::Stage;
use super::{LoadOptions, prelude};

/// One compiled application.
#[derive(Debug)]
pub(crate) struct LocalApp {
    pub name: String,
    pub context: Context,
    pub file: String,
    pub line: u32,
    pub filter: Option<Filter>,
    pub parser: Vec<Stmt>,
    /// What the filter needs (`None`: every message of the context runs it).
    pub atoms: Option<Vec<Atom>>,
    /// The [`Atom::Token`]s of `atoms`, as searchers built once: building one per message
    /// cost more than the search.
    pub tokens: Vec<memchr::memmem::Finder<'static>>,
}

/// Everything the app-parser files declare, compiled.
#[derive(Debug)]
pub struct Program {
    pub(crate) names: Names,
    pub(crate) filters: Vec<Filter>,
    pub(crate) chains: Vec<Vec<Stmt>>,
    pub(crate) templates: Vec<(String, Tmpl)>,
    template_ids: HashMap<String, TemplateId>,
    pub(crate) apps: Vec<LocalApp>,
    named_filters: HashMap<String, FilterId>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Applications declared but not loaded: (name, context topic, file, line).
    pub(crate) skipped: Vec<(String, String, String, u32)>,
    /// The applications of each context, in order: a message walks its context's, not
    /// every application, and a context with none costs one lookup.
    by_context: Vec<(Context, Box<[u32]>, Gate)>,
    /// Where each context without a name of its own sits in `by_context` (see
    /// [`Context::slot`]): the classifier asks for them several times per message, and a
    /// comparison walk cost more than the gates behind it.
    slots: [Option<u8>; Context::SLOTS],
}

/// One more than the largest id [`projected`] holds.
pub(crate) const PROJECTED: usize = id::CLASS as usize + 1;

/// Names whose value lives in the classification itself (set as the application takes the
/// message), not in the overlay.
pub(crate) fn projected(n: NameId) -> bool {
    matches!(
        n,
        id::HOST
            | id::PROGRAM
            | id::PID
            | id::MESSAGE
            | id::INDEX
            | id::SOURCETYPE
            | id::SOURCE
            | id::TEMPLATE
            | id::VENDOR
            | id::PRODUCT
            | id::CLASS
    )
}

impl Program {
    pub fn template_by_name(&self, name: &str) -> Option<TemplateId> {
        self.template_ids.get(name).copied()
    }

    pub fn named_filter(&self, name: &str) -> Option<FilterId> {
        self.named_filters.get(name).copied()
    }

    /// The applications of `context`, in order (empty when it has none).
    #[inline(always)]
    pub(crate) fn apps_of(&self, context: &Context) -> &[u32] {
        self.context(context).map_or(&[], |(v, _)| v)
    }

    /// The applications of `context`, in order, and the check of their union. Inlined:
    /// the classifier asks with a constant context, which then is a constant slot.
    #[inline(always)]
    pub(crate) fn context(&self, context: &Context) -> Option<(&[u32], &Gate)> {
        let found = match context.slot() {
            Some(k) => self.slots[k].map(|i| &self.by_context[usize::from(i)]),
            None => self.by_context.iter().find(|(c, _, _)| c == context),
        };
        found.map(|(_, v, g)| (&v[..], g))
    }

    /// Compiles `files` (in order: SC4S's include order, files of the directory before
    /// those of its subdirectories). `Err` holds the errors that make the configuration
    /// unusable (syntax); constructs sluice does not support skip the application that uses
    /// them and are reported in [`Program::diagnostics`] (or are errors with
    /// [`LoadOptions::strict`]).
    pub fn load(files: &[SourceFile], opts: &LoadOptions<'_>) -> Result<Program, Vec<Diagnostic>> {
        let mut loaded = Files::default();
        let mut globals = HashMap::new();
        let mut decls = Vec::new();
        let mut problems: Vec<Problem> = Vec::new();
        let all = std::iter::once((prelude::PATH, prelude::TEXT))
            .chain(files.iter().map(|f| (f.path.as_str(), f.text.as_str())));
        for (path, text) in all {
            let id = loaded.add(path, text);
            let slice = RawSlice::whole(id, loaded.text(id));
            let d = read_file(&slice, &mut globals, opts.env);
            decls.extend(d.decls);
            problems.extend(d.problems);
        }
        let mut c = Compiler::new(&globals, opts.env, opts.read);
        let mut apps: Vec<super::decl::AppDecl> = Vec::new();
        for d in decls {
            let r = match d {
                Decl::App(a) => {
                    // syslog-ng registers an application again under the same name and
                    // context by replacing the earlier one, which moves to the end.
                    apps.retain(|x| !(x.name == a.name && x.context == a.context));
                    apps.push(a);
                    Ok(())
                }
                Decl::Block(b) => c.add_block(b),
                Decl::Named {
                    kind,
                    name,
                    span,
                    body,
                } => c.add_named(kind, name, span, body),
                Decl::Template { name, span, body } => c.add_template(name, span, body),
            };
            if let Err(p) = r {
                problems.push(p);
            }
        }

        let mut compiled = Vec::new();
        let mut skipped = Vec::new();
        for a in apps {
            let (line, _) = loaded.line_col(a.span);
            let file = loaded.path(a.span.file).to_owned();
            let result = compile_app(&mut c, &a);
            match result {
                Ok((context, filter, parser)) => {
                    let stage = match context {
                        Context::AlmostSyslog | Context::Raw => Stage::NoParse,
                        _ => Stage::Parsed,
                    };
                    let atoms = match &filter {
                        Some(f) => derive(f, &c.filters, stage),
                        None => None,
                    };
                    let tokens = atoms
                        .iter()
                        .flatten()
                        .filter_map(|a| match a {
                            Atom::Token(t) => {
                                Some(memchr::memmem::Finder::new(&t[..]).into_owned())
                            }
                            _ => None,
                        })
                        .collect();
                    compiled.push(LocalApp {
                        name: a.name,
                        context,
                        file,
                        line,
                        filter,
                        parser,
                        atoms,
                        tokens,
                    });
                }
                Err(p) => {
                    let what = format!(
                        "application {}[{}] is not loaded: {}",
                        a.name, a.context, p.message
                    );
                    problems.push(Problem {
                        span: p.span,
                        severity: p.severity,
                        message: what,
                    });
                    skipped.push((a.name, a.context, file, line));
                }
            }
        }
        // Everything else is compiled too, so that its errors are reported even when
        // nothing uses it yet.
        for (kind, name) in c.pending() {
            if let Err(p) = c.compile_named(kind, &name) {
                problems.push(unused(p, &format!("{} {name}", kind.word())));
            }
        }
        for name in c.pending_templates() {
            if let Err(p) = c.template_id(&name, super::span::Span::default()) {
                problems.push(unused(p, &format!("template {name}")));
            }
        }

        let mut diagnostics: Vec<Diagnostic> = problems
            .into_iter()
            .map(|p| {
                let severity = if opts.strict && p.severity == Severity::Unsupported {
                    Severity::Error
                } else {
                    p.severity
                };
                loaded.diagnostic(p.span, severity, p.message)
            })
            .collect();
        diagnostics.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        diagnostics.dedup();
        if diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(diagnostics
                .into_iter()
                .filter(|d| d.severity == Severity::Error)
                .collect());
        }
        let mut named_filters = HashMap::new();
        for (kind, name, id) in c.done_filters() {
            let _ = kind;
            named_filters.insert(name, id);
        }
        let template_ids = c
            .templates
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.clone(), i as TemplateId))
            .collect();
        let mut by_context: Vec<(Context, Vec<u32>)> = Vec::new();
        for (i, a) in compiled.iter().enumerate() {
            match by_context.iter_mut().find(|(c, _)| *c == a.context) {
                Some((_, v)) => v.push(i as u32),
                None => by_context.push((a.context.clone(), vec![i as u32])),
            }
        }
        let by_context: Vec<(Context, Box<[u32]>, Gate)> = by_context
            .into_iter()
            .map(|(c, v)| {
                let gate = Gate::new(v.iter().map(|&i| compiled[i as usize].atoms.as_deref()));
                (c, v.into_boxed_slice(), gate)
            })
            .collect();
        let mut slots = [None; Context::SLOTS];
        for (i, (c, _, _)) in by_context.iter().enumerate() {
            if let (Some(k), Ok(i)) = (c.slot(), u8::try_from(i)) {
                slots[k] = Some(i);
            }
        }
        // Now that every name is interned, kv-parsers learn which of their keys are names.
        let names = c.names;
        let mut chains = c.chains;
        let mut index = |s: &mut Stmt| {
            if let Stmt::Kv(k) = s {
                k.index_names(&names);
            }
        };
        for chain in &mut chains {
            for_each_stmt_mut(chain, &mut index);
        }
        for a in &mut compiled {
            for_each_stmt_mut(&mut a.parser, &mut index);
        }
        Ok(Program {
            by_context,
            slots,
            names,
            filters: c.filters,
            chains,
            templates: c.templates,
            template_ids,
            apps: compiled,
            named_filters,
            diagnostics,
            skipped,
        })
    }
}

/// A problem of a declaration nothing uses: reported, not fatal unless it is a syntax error.
fn unused(p: Problem, what: &str) -> Problem {
    if p.severity == Severity::Error {
        return p;
    }
    Problem {
        span: p.span,
        severity: Severity::Warning,
        message: format!("{what} cannot be used: {}", p.message),
    }
}

type Compiled = (Context, Option<Filter>, Vec<Stmt>);

fn compile_app(c: &mut Compiler<'_>, a: &super::decl::AppDecl) -> Result<Compiled, Problem> {
    let context =
        Context::parse(&a.context).map_err(|m| Problem::unsupported(a.context_span, m))?;
    if let Some((what, at)) = a.unsupported.first() {
        return Err(Problem::unsupported(
            *at,
            format!("`{what}` in an application is not supported (filter and parser are)"),
        ));
    }
    let filter = match &a.filter {
        Some(f) => Some(c.filter_text(f)?),
        None => None,
    };
    let parser = match &a.parser {
        Some(p) => c.stmts_text(p, super::compile::Ctx::Parser)?,
        None => Vec::new(),
    };
    if matches!(context, Context::Select(_) | Context::SelectDrop(_))
        && let Some(at) = writes(&parser)
    {
        return Err(Problem::unsupported(
            a.parser.as_ref().map_or(a.span, |p| p.span()),
            format!(
                "a destination selector that changes the event ({at}) is not supported: sluice \
                 encodes an event once for all its destinations; use sc4s-postfilter for changes"
            ),
        ));
    }
    Ok((context, filter, parser))
}

/// The first statement that changes the event, if any (selectors may only filter).
fn writes(stmts: &[Stmt]) -> Option<&'static str> {
    for s in stmts {
        let w = match s {
            Stmt::Filter(_) | Stmt::Chain(_) => None,
            Stmt::If { branches, .. } => branches.iter().find_map(|b| writes(b)),
            Stmt::Set { target, .. } if *target == id::APP_NAME => None,
            Stmt::SetTag(..) | Stmt::ClearTag(..) => None,
            _ => Some("a rewrite or parser"),
        };
        if w.is_some() {
            return w;
        }
    }
    None
}
