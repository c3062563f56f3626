//! The top level of an app-parser file: the declarations, with their bodies kept raw until
//! something uses them (syslog-ng also expands an application's filter and parser only where
//! `app-parser()` runs, and a block's body only where it is called).
//!
//! ```text
//! @version: 4.2
//! @define name "value"
//! application NAME[CONTEXT] { filter { ... }; parser { ... }; };
//! block parser|rewrite|filter NAME(arg(default) ...) { ... };
//! filter NAME { ... };  parser NAME { ... };  rewrite NAME { ... };
//! template NAME { template("..."); };  template NAME "...";
//! ```
//!
//! Anything else at the top level (`source`, `destination`, `log`, `options`, `@include`,
//! ...) is reported where it stands and skipped.

use std::collections::HashMap;

use super::lex::{Lexer, RawSlice, Scope, Tok};
use super::span::{PResult, Problem, Span};

#[derive(Clone, Debug)]
pub(crate) struct AppDecl {
    pub name: String,
    pub context: String,
    pub span: Span,
    pub context_span: Span,
    pub filter: Option<RawSlice>,
    pub parser: Option<RawSlice>,
    /// Parts of the body sluice does not run (`filterx`, ...): (what, where).
    pub unsupported: Vec<(String, Span)>,
}

#[derive(Clone, Debug)]
pub(crate) struct BlockDecl {
    /// `parser`, `rewrite`, `filter`, `template`, `root`, `log`, ...
    pub kind: String,
    pub name: String,
    pub span: Span,
    /// (name, default value text, where).
    pub params: Vec<(String, Option<String>, Span)>,
    /// `...` in the parameter list: other arguments are accepted.
    pub varargs: bool,
    pub body: RawSlice,
}

#[derive(Clone, Debug)]
pub(crate) enum TemplateBody {
    /// `template NAME { template("..."); ... };`
    Block(RawSlice),
    /// `template NAME "...";`
    Text(String, Span),
}

#[derive(Clone, Debug)]
pub(crate) enum Decl {
    App(AppDecl),
    Block(BlockDecl),
    /// `filter|parser|rewrite NAME { ... };`
    Named {
        kind: NamedKind,
        name: String,
        span: Span,
        body: RawSlice,
    },
    Template {
        name: String,
        span: Span,
        body: TemplateBody,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum NamedKind {
    Filter,
    Parser,
    Rewrite,
}

impl NamedKind {
    pub fn word(self) -> &'static str {
        match self {
            NamedKind::Filter => "filter",
            NamedKind::Parser => "parser",
            NamedKind::Rewrite => "rewrite",
        }
    }
}

/// What one file declares, and what it says that sluice cannot use.
#[derive(Debug, Default)]
pub(crate) struct FileDecls {
    pub decls: Vec<Decl>,
    pub problems: Vec<Problem>,
}

/// Reads the declarations of one file. `globals` collects its `@define`s (they apply to
/// what follows, and to every body compiled later). A syntax error ends the file: what
/// came before it is kept, and the error is among the problems.
pub(crate) fn read_file(
    slice: &RawSlice,
    globals: &mut HashMap<String, String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> FileDecls {
    let mut out = FileDecls::default();
    // The lexer borrows the globals; a `@define` ends it and the rest of the file is read
    // again with the new definition in scope.
    let snapshot = globals.clone();
    let scope = Scope {
        args: &[],
        globals: &snapshot,
        env,
    };
    let mut lx = Lexer::new(slice, scope);
    match read_until_define(&mut lx, &mut out, slice) {
        Ok(None) => {}
        Ok(Some((name, value, at))) => {
            globals.insert(name, value);
            let rest = RawSlice {
                start: at,
                ..slice.clone()
            };
            let more = read_file(&rest, globals, env);
            out.decls.extend(more.decls);
            out.problems.extend(more.problems);
        }
        Err(p) => out.problems.push(p),
    }
    out
}

/// Reads declarations until the end, or until a `@define` (returned with the byte offset
/// after its line, so that the caller goes on with the new definition in scope).
fn read_until_define(
    lx: &mut Lexer<'_>,
    out: &mut FileDecls,
    slice: &RawSlice,
) -> PResult<Option<(String, String, usize)>> {
    loop {
        let t = lx.next()?;
        match t.tok {
            Tok::Eof => return Ok(None),
            Tok::Sym(';') => {}
            Tok::Pragma(line) => {
                let (word, rest) = split_word(&line);
                match word.trim_end_matches(':') {
                    "version" | "requires" => {}
                    "define" => {
                        let (name, value) = split_word(rest);
                        if name.is_empty() {
                            return Err(Problem::error(
                                t.span,
                                "`@define` needs a name and a value",
                            ));
                        }
                        let value = unquote(value.trim());
                        let after = slice.text[t.span.offset as usize..]
                            .find('\n')
                            .map_or(slice.end, |n| t.span.offset as usize + n);
                        if slice.origin.is_some() {
                            return Err(Problem::error(t.span, "`@define` inside a substitution"));
                        }
                        return Ok(Some((name.to_owned(), value, after)));
                    }
                    "include" | "module" => out.problems.push(Problem::unsupported(
                        t.span,
                        format!(
                            "`@{word}` is not supported in app-parser files: sluice reads every \
                             file of the directory itself"
                        ),
                    )),
                    other => out.problems.push(Problem::unsupported(
                        t.span,
                        format!("pragma `@{other}` is not supported"),
                    )),
                }
            }
            Tok::Word(kw) => {
                if let Some(d) = declaration(lx, &kw, t.span, out)? {
                    out.decls.push(d);
                }
            }
            other => {
                return Err(Problem::error(
                    t.span,
                    format!(
                        "expected a declaration (`application`, `block`, `filter`, `parser`, \
                         `rewrite`, `template`), found {}",
                        other.describe()
                    ),
                ));
            }
        }
    }
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(|c: char| c.is_whitespace()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        return s[1..s.len() - 1].to_owned();
    }
    s.to_owned()
}

/// One declaration after its keyword.
fn declaration(
    lx: &mut Lexer<'_>,
    kw: &str,
    at: Span,
    out: &mut FileDecls,
) -> PResult<Option<Decl>> {
    match kw {
        "application" => application(lx, at).map(|a| Some(Decl::App(a))),
        "block" => block(lx, at).map(|b| Some(Decl::Block(b))),
        "filter" | "parser" | "rewrite" => {
            let kind = match kw {
                "filter" => NamedKind::Filter,
                "parser" => NamedKind::Parser,
                _ => NamedKind::Rewrite,
            };
            let (name, span) = lx.expect_word(&format!("the name of the {kw}"))?;
            lx.expect_sym('{', &format!("after `{kw} {name}`"))?;
            let body = lx.capture('{', '}')?;
            lx.eat_sym(';')?;
            Ok(Some(Decl::Named {
                kind,
                name,
                span,
                body,
            }))
        }
        "template" => {
            let (name, span) = lx.expect_word("the name of the template")?;
            let body = if lx.eat_sym('{')? {
                TemplateBody::Block(lx.capture('{', '}')?)
            } else {
                let t = lx.next()?;
                match t.tok {
                    Tok::Str(s) => TemplateBody::Text(s, t.span),
                    other => {
                        return Err(Problem::error(
                            t.span,
                            format!(
                                "expected `{{` or a string after `template {name}`, found {}",
                                other.describe()
                            ),
                        ));
                    }
                }
            };
            lx.eat_sym(';')?;
            Ok(Some(Decl::Template { name, span, body }))
        }
        other => {
            // `source`, `destination`, `log`, `options`, `template-function`, ...: skipped to
            // the end of the statement, and reported.
            skip_statement(lx)?;
            out.problems.push(Problem::unsupported(
                at,
                format!(
                    "`{other}` declarations are not supported in app-parser files (sluice \
                     reads applications, blocks, filters, parsers, rewrites and templates); \
                     this one is ignored"
                ),
            ));
            Ok(None)
        }
    }
}

/// Skips to the `;` that ends a statement, over balanced brackets.
fn skip_statement(lx: &mut Lexer<'_>) -> PResult<()> {
    loop {
        let t = lx.next()?;
        match t.tok {
            Tok::Eof | Tok::Sym(';') => return Ok(()),
            Tok::Sym('{') => {
                lx.capture('{', '}')?;
                if lx.peek()?.tok == Tok::Sym(';') {
                    lx.next()?;
                    return Ok(());
                }
            }
            Tok::Sym('(') => {
                lx.capture('(', ')')?;
            }
            _ => {}
        }
    }
}

/// `application NAME[CONTEXT] { filter {...}; parser {...}; };`
fn application(lx: &mut Lexer<'_>, at: Span) -> PResult<AppDecl> {
    let (name, span) = lx.expect_word("the name of the application")?;
    lx.expect_sym(
        '[',
        &format!("after `application {name}` (its context: `{name}[sc4s-syslog]`)"),
    )?;
    let (context, context_span) = lx.expect_word("the application's context")?;
    lx.expect_sym(']', "after the application's context")?;
    lx.expect_sym('{', &format!("to open application {name}"))?;
    let body = lx.capture('{', '}')?;
    lx.eat_sym(';')?;
    let _ = at;
    let mut app = AppDecl {
        name,
        context,
        span,
        context_span,
        filter: None,
        parser: None,
        unsupported: Vec::new(),
    };
    // The body: `filter { ... };` and `parser { ... };`, each once.
    let scope = lx.scope();
    let mut inner = Lexer::new(&body, scope);
    loop {
        let t = inner.next()?;
        match t.tok {
            Tok::Eof => break,
            Tok::Sym(';') => {}
            Tok::Word(w) if w == "filter" || w == "parser" => {
                inner.expect_sym('{', &format!("after `{w}` in application {}", app.name))?;
                let part = inner.capture('{', '}')?;
                let slot = if w == "filter" {
                    &mut app.filter
                } else {
                    &mut app.parser
                };
                if slot.is_some() {
                    return Err(Problem::error(
                        t.span,
                        format!("application {} has two `{w}` parts", app.name),
                    ));
                }
                *slot = Some(part);
            }
            Tok::Word(w) => {
                if inner.eat_sym('{')? {
                    inner.capture('{', '}')?;
                } else if inner.eat_sym('(')? {
                    inner.capture('(', ')')?;
                }
                app.unsupported.push((w, t.span));
            }
            other => {
                return Err(Problem::error(
                    t.span,
                    format!(
                        "expected `filter {{ ... }};` or `parser {{ ... }};` in application {}, \
                         found {}",
                        app.name,
                        other.describe()
                    ),
                ));
            }
        }
    }
    Ok(app)
}

/// `block KIND NAME(param(default) param() ...) { body };`
fn block(lx: &mut Lexer<'_>, at: Span) -> PResult<BlockDecl> {
    let (kind, _) = lx.expect_word("the kind of the block (`parser`, `rewrite`, `filter`)")?;
    let (name, span) = lx.expect_word("the name of the block")?;
    let _ = at;
    lx.expect_sym(
        '(',
        &format!("after `block {kind} {name}` (its parameters)"),
    )?;
    let mut params = Vec::new();
    let mut varargs = false;
    loop {
        let t = lx.next()?;
        match t.tok {
            Tok::Sym(')') => break,
            Tok::Word(w) if w == "..." => varargs = true,
            Tok::Word(p) => {
                let default = if lx.eat_sym('(')? {
                    let raw = lx.capture('(', ')')?;
                    Some(arg_value(&raw))
                } else {
                    None
                };
                params.push((p, default, t.span));
            }
            other => {
                return Err(Problem::error(
                    t.span,
                    format!(
                        "expected a parameter such as `index(\"main\")` in block {name}, found {}",
                        other.describe()
                    ),
                ));
            }
        }
    }
    lx.expect_sym('{', &format!("to open block {name}"))?;
    let body = lx.capture('{', '}')?;
    lx.eat_sym(';')?;
    Ok(BlockDecl {
        kind,
        name,
        span,
        params,
        varargs,
        body,
    })
}

/// The value of a block argument as syslog-ng substitutes it: the text between the
/// parentheses, without the quotes when it is one quoted string.
pub(crate) fn arg_value(raw: &RawSlice) -> String {
    let s = raw.as_str().trim();
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        let inner = &s[1..s.len() - 1];
        // One string only (not `"a" "b"`).
        let q = b[0] as char;
        let closed_early = if q == '\'' {
            inner.contains('\'')
        } else {
            let mut esc = false;
            let mut found = false;
            for c in inner.chars() {
                if esc {
                    esc = false;
                } else if c == '\\' {
                    esc = true;
                } else if c == '"' {
                    found = true;
                    break;
                }
            }
            found
        };
        if !closed_early {
            return inner.to_owned();
        }
    }
    s.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (FileDecls, HashMap<String, String>) {
        let mut globals = HashMap::new();
        let env = |n: &str| (n == "ENVX").then(|| "fromenv".to_string());
        let d = read_file(&RawSlice::whole(0, text.into()), &mut globals, &env);
        (d, globals)
    }

    #[test]
    fn declarations() {
        let text = r#"
@version: 4.2
@define allow_ip "10.0.0.0/8"
# an application
application app-syslog-acme[sc4s-syslog-pgm] {
    filter { program('acme' type(string)); };
    parser { app-syslog-acme(); };
};
block parser app-syslog-acme(index("netops") class()) {
    channel { rewrite { set("`index`" value(".splunk.index")); }; };
};
filter f_acme { host("acme-*" type(glob)) };
parser p_acme { kv-parser(prefix(".values.")); };
rewrite r_acme { set-tag("acme"); };
template t_acme { template("${MESSAGE}"); };
template t_short "${PROGRAM}";
source s_x { network(); };
"#;
        let (d, globals) = read(text);
        assert_eq!(
            globals.get("allow_ip").map(String::as_str),
            Some("10.0.0.0/8")
        );
        assert_eq!(d.decls.len(), 7, "{:?}", d.decls);
        let Decl::App(a) = &d.decls[0] else { panic!() };
        assert_eq!(a.name, "app-syslog-acme");
        assert_eq!(a.context, "sc4s-syslog-pgm");
        assert_eq!(
            a.filter.as_ref().unwrap().as_str().trim(),
            "program('acme' type(string));"
        );
        assert_eq!(
            a.parser.as_ref().unwrap().as_str().trim(),
            "app-syslog-acme();"
        );
        let Decl::Block(b) = &d.decls[1] else {
            panic!()
        };
        assert_eq!(b.kind, "parser");
        assert_eq!(
            b.params,
            vec![
                (
                    "index".to_string(),
                    Some("netops".to_string()),
                    b.params[0].2
                ),
                ("class".to_string(), Some(String::new()), b.params[1].2)
            ]
        );
        assert!(
            matches!(&d.decls[6], Decl::Template { name, body: TemplateBody::Text(t, _), .. } if name == "t_short" && t == "${PROGRAM}")
        );
        assert_eq!(d.problems.len(), 1);
        assert!(d.problems[0].message.contains("`source` declarations"));
    }

    #[test]
    fn syntax_errors_stop_the_file_with_a_place() {
        let (d, _) = read("application a[sc4s-syslog] {\n filter { host(\"x\") };\n");
        assert_eq!(d.problems.len(), 1);
        assert_eq!(d.problems[0].severity, super::super::span::Severity::Error);
        let (d, _) = read("filter f_a { host(\"a\") };\nthing;\napplication x { };");
        assert_eq!(d.decls.len(), 1);
        assert!(
            d.problems[0].message.contains("`thing` declarations"),
            "{:?}",
            d.problems
        );
        assert!(
            d.problems[1].message.contains("expected `[`"),
            "{:?}",
            d.problems
        );
    }

    #[test]
    fn argument_values_lose_one_pair_of_quotes() {
        let v = |s: &str| arg_value(&RawSlice::whole(0, s.into()));
        assert_eq!(v(" 'netfw' "), "netfw");
        assert_eq!(v("\"a b\""), "a b");
        assert_eq!(v("message(':x')"), "message(':x')");
        assert_eq!(v("\"a\" \"b\""), "\"a\" \"b\"");
        assert_eq!(v(""), "");
    }

    #[test]
    fn defines_apply_after_their_line() {
        let (d, _) =
            read("filter f_a { host(\"`x`\") };\n@define x \"h\"\nfilter f_b { host(\"`x`\") };\n");
        assert_eq!(d.decls.len(), 2);
        assert!(d.problems.is_empty(), "{:?}", d.problems);
    }
}
