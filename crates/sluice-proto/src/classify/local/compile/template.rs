//! Template strings: `"${HOST} $(lowercase ${PROGRAM}) $$"` into [`Tmpl`].
//!
//! `$NAME`, `${NAME}`, `${NAME:-default}`, `$(function args...)` and `$$` (a `$`). A
//! function's arguments are separated by whitespace; quotes group (and are removed), and a
//! nested `$(...)`, `${...}` or `(...)` is kept whole, so `$(if ("${HOST}" ne "") "a" "b")`
//! has three arguments, the first a filter expression.

use super::super::ir::{ArithOp, FormatSpec, Func, Glob, ListOp, Part, TemplateRef, Tmpl, scope};
use super::super::lex::RawSlice;
use super::super::names::resolve;
use super::super::span::{PResult, Problem, Span};
use super::Compiler;

impl Compiler<'_> {
    /// Compiles template text found at `span`.
    pub(crate) fn template(&mut self, text: &str, span: Span) -> PResult<Tmpl> {
        let s = text.as_bytes();
        let mut parts = Vec::new();
        let mut lit: Vec<u8> = Vec::new();
        let mut i = 0;
        let flush = |lit: &mut Vec<u8>, parts: &mut Vec<Part>| {
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(lit).into()));
            }
        };
        while i < s.len() {
            if s[i] != b'$' {
                lit.push(s[i]);
                i += 1;
                continue;
            }
            match s.get(i + 1) {
                Some(b'$') => {
                    lit.push(b'$');
                    i += 2;
                }
                Some(b'{') => {
                    let Some(close) = s[i + 2..].iter().position(|&c| c == b'}') else {
                        return Err(Problem::error(
                            span,
                            format!("`${{` is not closed in template {text:?}"),
                        ));
                    };
                    let inner = &text[i + 2..i + 2 + close];
                    let (name, default) = match inner.split_once(":-") {
                        Some((n, d)) => (n, Some(d.as_bytes().into())),
                        None => (inner, None),
                    };
                    if name.is_empty() {
                        return Err(Problem::error(
                            span,
                            format!("`${{}}` names nothing in template {text:?}"),
                        ));
                    }
                    flush(&mut lit, &mut parts);
                    parts.push(Part::Ref {
                        r: resolve(&mut self.names, name),
                        default,
                    });
                    i += close + 3;
                }
                Some(b'(') => {
                    let Some(end) = matching_paren(s, i + 1) else {
                        return Err(Problem::error(
                            span,
                            format!("`$(` is not closed in template {text:?}"),
                        ));
                    };
                    let inner = &text[i + 2..end];
                    flush(&mut lit, &mut parts);
                    parts.push(Part::Func(Box::new(self.function(inner, span)?)));
                    i = end + 1;
                }
                Some(c) if c.is_ascii_alphanumeric() || *c == b'_' => {
                    let start = i + 1;
                    let mut end = start;
                    while end < s.len() && (s[end].is_ascii_alphanumeric() || s[end] == b'_') {
                        end += 1;
                    }
                    flush(&mut lit, &mut parts);
                    parts.push(Part::Ref {
                        r: resolve(&mut self.names, &text[start..end]),
                        default: None,
                    });
                    i = end;
                }
                _ => {
                    lit.push(b'$');
                    i += 1;
                }
            }
        }
        flush(&mut lit, &mut parts);
        Ok(Tmpl { parts })
    }

    fn templates(&mut self, args: &[String], span: Span) -> PResult<Vec<Tmpl>> {
        args.iter().map(|a| self.template(a, span)).collect()
    }

    fn function(&mut self, inner: &str, span: Span) -> PResult<Func> {
        let args = split_args(inner);
        let Some((name, rest)) = args.split_first() else {
            return Err(Problem::error(span, "`$()` names no template function"));
        };
        let need = |n: usize| -> PResult<()> {
            if rest.len() < n {
                return Err(Problem::error(
                    span,
                    format!("$({name}) needs {n} argument(s), has {}", rest.len()),
                ));
            }
            Ok(())
        };
        let f = match name.as_str() {
            "if" => {
                need(3)?;
                let cond = rest[0].trim();
                let cond = cond
                    .strip_prefix('(')
                    .and_then(|c| c.strip_suffix(')'))
                    .unwrap_or(cond);
                let slice = RawSlice::detached(cond, span);
                let filter = self.filter_text(&slice)?;
                Func::If(
                    filter,
                    self.template(&rest[1], span)?,
                    self.template(&rest[2], span)?,
                )
            }
            "lowercase" | "lower" => Func::Lowercase(self.templates(rest, span)?),
            "uppercase" | "upper" => Func::Uppercase(self.templates(rest, span)?),
            "strip" => Func::Strip(self.templates(rest, span)?),
            "echo" => Func::Echo(self.templates(rest, span)?),
            "length" => Func::Length(self.templates(rest, span)?),
            "substr" => {
                need(2)?;
                Func::Substr(
                    self.template(&rest[0], span)?,
                    self.template(&rest[1], span)?,
                    match rest.get(2) {
                        Some(l) => Some(self.template(l, span)?),
                        None => None,
                    },
                )
            }
            "sanitize" => {
                let mut ctrl = false;
                let mut invalid = b"/".to_vec();
                let mut replacement = b'_';
                let mut i = 0;
                let mut values = Vec::new();
                while i < rest.len() {
                    match rest[i].as_str() {
                        "--ctrl-chars" | "-c" => ctrl = true,
                        "--no-ctrl-chars" => ctrl = false,
                        "--invalid-chars" | "-i" => {
                            i += 1;
                            invalid = rest
                                .get(i)
                                .map(|s| s.as_bytes().to_vec())
                                .unwrap_or_default();
                        }
                        "--replacement" | "-r" => {
                            i += 1;
                            replacement =
                                rest.get(i).and_then(|s| s.bytes().next()).unwrap_or(b'_');
                        }
                        a => values.push(self.template(a, span)?),
                    }
                    i += 1;
                }
                Func::Sanitize {
                    ctrl,
                    invalid,
                    replacement,
                    args: values,
                }
            }
            "replace-delimiter" => {
                need(3)?;
                Func::ReplaceDelimiter(
                    self.template(&rest[0], span)?,
                    self.template(&rest[1], span)?,
                    self.template(&rest[2..].join(" "), span)?,
                )
            }
            "padding" => {
                need(2)?;
                let width = rest[1].trim().parse::<usize>().map_err(|_| {
                    Problem::error(
                        span,
                        format!("$(padding): width {:?} is not a number", rest[1]),
                    )
                })?;
                Func::Padding(
                    self.template(&rest[0], span)?,
                    width.min(65536),
                    rest.get(2)
                        .map(|p| p.as_bytes().to_vec())
                        .unwrap_or_else(|| b" ".to_vec()),
                )
            }
            "format-json" => Func::FormatJson(self.format_spec(rest, span)?),
            "format-welf" | "format-kv" => Func::FormatWelf(self.format_spec(rest, span)?),
            "template" => {
                need(1)?;
                let t = self.template(&rest[0], span)?;
                match t.as_literal() {
                    Some(lit) => {
                        let name = String::from_utf8_lossy(lit).into_owned();
                        match self.template_id(&name, span)? {
                            Some(id) => Func::Template(TemplateRef::Static(id)),
                            None => {
                                return Err(Problem::error(
                                    span,
                                    format!("$(template {name}): no template {name} is defined"),
                                ));
                            }
                        }
                    }
                    None => Func::Template(TemplateRef::Dynamic(t)),
                }
            }
            "implode" => {
                need(1)?;
                Func::Implode(
                    self.template(&rest[0], span)?,
                    self.templates(&rest[1..], span)?,
                )
            }
            "explode" => {
                need(1)?;
                Func::Explode(
                    self.template(&rest[0], span)?,
                    self.templates(&rest[1..], span)?,
                )
            }
            "list-concat" | "list-append" => {
                Func::List(ListOp::Concat, self.templates(rest, span)?)
            }
            "list-head" => Func::List(ListOp::Head, self.templates(rest, span)?),
            "list-tail" => Func::List(ListOp::Tail, self.templates(rest, span)?),
            "list-last" => Func::List(ListOp::Last, self.templates(rest, span)?),
            "list-count" => Func::List(ListOp::Count, self.templates(rest, span)?),
            "list-nth" => {
                need(1)?;
                let n = rest[0].trim().parse::<i64>().map_err(|_| {
                    Problem::error(span, format!("$(list-nth): {:?} is not a number", rest[0]))
                })?;
                Func::List(ListOp::Nth(n), self.templates(&rest[1..], span)?)
            }
            "list-slice" => {
                need(1)?;
                let spec = rest[0].trim();
                let (a, b) = match spec.split_once(':') {
                    Some((a, b)) => (a, b),
                    None => (spec, ""),
                };
                let num = |s: &str| -> PResult<Option<i64>> {
                    if s.trim().is_empty() {
                        return Ok(None);
                    }
                    s.trim().parse::<i64>().map(Some).map_err(|_| {
                        Problem::error(span, format!("$(list-slice): {spec:?} is not FROM:TO"))
                    })
                };
                Func::List(
                    ListOp::Slice(num(a)?, num(b)?),
                    self.templates(&rest[1..], span)?,
                )
            }
            "+" | "-" | "*" | "/" | "%" => {
                need(2)?;
                let op = match name.as_str() {
                    "+" => ArithOp::Add,
                    "-" => ArithOp::Sub,
                    "*" => ArithOp::Mul,
                    "/" => ArithOp::Div,
                    _ => ArithOp::Rem,
                };
                Func::Arith(
                    op,
                    self.template(&rest[0], span)?,
                    self.template(&rest[1], span)?,
                )
            }
            "round" => {
                need(1)?;
                let digits = match rest.get(1) {
                    Some(d) => d.trim().parse::<u8>().map_err(|_| {
                        Problem::error(span, format!("$(round): {d:?} is not a number of digits"))
                    })?,
                    None => 0,
                };
                Func::Round(self.template(&rest[0], span)?, digits.min(9))
            }
            "ceil" => {
                need(1)?;
                Func::Ceil(self.template(&rest[0], span)?)
            }
            "floor" => {
                need(1)?;
                Func::Floor(self.template(&rest[0], span)?)
            }
            "ipv4-to-int" => Func::Ipv4ToInt(self.templates(rest, span)?),
            "basename" => {
                need(1)?;
                Func::Basename(self.template(&rest[0], span)?)
            }
            "dirname" => {
                need(1)?;
                Func::Dirname(self.template(&rest[0], span)?)
            }
            "url-encode" => Func::UrlEncode(self.templates(rest, span)?),
            "url-decode" => Func::UrlDecode(self.templates(rest, span)?),
            "base64-encode" => Func::Base64Encode(self.templates(rest, span)?),
            "indent-multi-line" => Func::IndentMultiLine(self.templates(rest, span)?),
            "env" => {
                need(1)?;
                let v = (self.env)(rest[0].trim()).unwrap_or_default();
                Func::Echo(vec![Tmpl::literal(v.as_bytes())])
            }
            other => {
                return Err(Problem::unsupported(
                    span,
                    format!(
                        "template function $({other}) is not supported (sluice has if, lowercase, \
                         uppercase, substr, strip, sanitize, replace-delimiter, padding, \
                         format-json, format-welf, template, implode, explode, list-*, +, -, *, \
                         /, %, round, ceil, floor, echo, length, ipv4-to-int, basename, dirname, \
                         url-encode, url-decode, base64-encode, indent-multi-line, env)"
                    ),
                ));
            }
        };
        Ok(f)
    }

    /// The options of `$(format-json ...)`.
    fn format_spec(&mut self, args: &[String], span: Span) -> PResult<FormatSpec> {
        let mut f = FormatSpec::default();
        let mut i = 0;
        let value = |i: usize| -> PResult<&String> {
            args.get(i + 1).ok_or_else(|| {
                Problem::error(span, format!("format-json: {} needs a value", args[i]))
            })
        };
        while i < args.len() {
            let a = args[i].as_str();
            match a {
                "--key" | "-k" => {
                    f.keys.push(Glob::new(value(i)?));
                    i += 1;
                }
                "--exclude" | "-x" => {
                    f.excludes.push(Glob::new(value(i)?));
                    i += 1;
                }
                "--pair" | "-p" => {
                    let p = value(i)?.clone();
                    self.format_pair(&mut f, &p, span)?;
                    i += 1;
                }
                "--scope" | "-s" => {
                    for s in value(i)?.split(',') {
                        f.scopes |= match s.trim() {
                            "nv-pairs" | "nv_pairs" => scope::NV_PAIRS,
                            "dot-nv-pairs" | "dot_nv_pairs" => scope::DOT_NV_PAIRS,
                            "all-nv-pairs" | "all_nv_pairs" => {
                                scope::NV_PAIRS | scope::DOT_NV_PAIRS
                            }
                            "rfc3164" | "core" | "base" => scope::RFC3164,
                            "rfc5424" | "syslog-proto" => scope::RFC5424,
                            "selected-macros" | "selected_macros" => scope::SELECTED_MACROS,
                            "sdata" => scope::SDATA,
                            "everything" | "all-macros" | "all_macros" => scope::EVERYTHING,
                            "none" => 0,
                            other => {
                                return Err(Problem::unsupported(
                                    span,
                                    format!("format-json --scope {other} is not supported"),
                                ));
                            }
                        };
                    }
                    i += 1;
                }
                "--shift-levels" => {
                    f.shift_levels = value(i)?.trim().parse().map_err(|_| {
                        Problem::error(span, "format-json --shift-levels needs a number")
                    })?;
                    i += 1;
                }
                "--shift" => {
                    // `--shift N`: characters cut from each name; levels are what SC4S uses.
                    return Err(Problem::unsupported(
                        span,
                        "format-json --shift is not supported (--shift-levels is)",
                    ));
                }
                "--add-prefix" => {
                    f.add_prefix = Some(value(i)?.clone());
                    i += 1;
                }
                "--replace-prefix" | "--replace" => {
                    let v = value(i)?;
                    let (a, b) = v.split_once('=').unwrap_or((v.as_str(), ""));
                    f.replace_prefix.push((a.to_owned(), b.to_owned()));
                    i += 1;
                }
                "--omit-empty-values" => f.omit_empty = true,
                "--leave-initial-dot" => f.leave_initial_dot = true,
                "--rekey" | "--cast" | "--no-cast" | "--key-delimiter" => {
                    return Err(Problem::unsupported(
                        span,
                        format!("format-json {a} is not supported"),
                    ));
                }
                _ if a.starts_with("--") => {
                    return Err(Problem::unsupported(
                        span,
                        format!("format-json {a} is not supported"),
                    ));
                }
                _ => {
                    if a.contains('=') {
                        let a = a.to_owned();
                        self.format_pair(&mut f, &a, span)?;
                    } else {
                        return Err(Problem::error(
                            span,
                            format!("format-json: {a:?} is neither an option nor name=value"),
                        ));
                    }
                }
            }
            i += 1;
        }
        Ok(f)
    }

    fn format_pair(&mut self, f: &mut FormatSpec, pair: &str, span: Span) -> PResult<()> {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            Problem::error(span, format!("format-json: {pair:?} is not name=value"))
        })?;
        let t = self.template(value, span)?;
        f.pairs.push((name.to_owned(), t));
        Ok(())
    }
}

/// The index of the `)` matching the `(` at `open`, over quotes and nesting.
pub(crate) fn matching_paren(s: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    let mut quote: Option<u8> = None;
    while i < s.len() {
        let c = s[i];
        if let Some(q) = quote {
            if c == b'\\' && q == b'"' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
        } else {
            match c {
                b'"' | b'\'' => quote = Some(c),
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// A template function's arguments: whitespace-separated; quotes group and are removed at
/// the top level; `$(...)`, `${...}` and `(...)` are kept whole, quotes inside them too.
pub(crate) fn split_args(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut args = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut started = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                if started {
                    args.push(String::from_utf8_lossy(&cur).into_owned());
                    cur.clear();
                    started = false;
                }
                i += 1;
            }
            b'"' | b'\'' => {
                started = true;
                i += 1;
                while i < b.len() && b[i] != c {
                    if c == b'"' && b[i] == b'\\' && i + 1 < b.len() {
                        let n = b[i + 1];
                        if n == b'"' || n == b'\\' {
                            cur.push(n);
                            i += 2;
                            continue;
                        }
                    }
                    cur.push(b[i]);
                    i += 1;
                }
                i += 1;
            }
            b'(' => {
                started = true;
                let end = matching_paren(b, i).unwrap_or(b.len() - 1);
                cur.extend_from_slice(&b[i..=end]);
                i = end + 1;
            }
            b'$' if b.get(i + 1) == Some(&b'(') => {
                started = true;
                let end = matching_paren(b, i + 1).unwrap_or(b.len() - 1);
                cur.extend_from_slice(&b[i..=end]);
                i = end + 1;
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                started = true;
                let end = b[i..]
                    .iter()
                    .position(|&x| x == b'}')
                    .map_or(b.len() - 1, |p| i + p);
                cur.extend_from_slice(&b[i..=end]);
                i = end + 1;
            }
            _ => {
                started = true;
                cur.push(c);
                i += 1;
            }
        }
    }
    if started {
        args.push(String::from_utf8_lossy(&cur).into_owned());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        assert_eq!(
            split_args(r#"if ("${HOST}" ne "") "${HOST}" "-""#),
            vec!["if", r#"("${HOST}" ne "")"#, "${HOST}", "-"]
        );
        assert_eq!(
            split_args(r#"implode "|" $(explode "," "$TAGS")"#),
            vec!["implode", "|", r#"$(explode "," "$TAGS")"#]
        );
        assert_eq!(
            split_args(r#"format-json --key .values.* message=$MSG event="$(template t_x)""#),
            vec![
                "format-json",
                "--key",
                ".values.*",
                "message=$MSG",
                "event=$(template t_x)"
            ]
        );
        assert_eq!(split_args("strip $MSGONLY "), vec!["strip", "$MSGONLY"]);
        assert_eq!(split_args(r#"x "a \"q\" b""#), vec!["x", "a \"q\" b"]);
        assert_eq!(split_args(r#"x """#), vec!["x", ""]);
    }
}
