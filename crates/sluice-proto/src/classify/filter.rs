//! The part of syslog-ng's filter language that SC4S's `*_by_source.conf` context files use:
//!
//! ```text
//! # comment
//! filter f_name {
//!     host("pattern" type(glob|string|pcre) flags(ignore-case, prefix, substring))
//!     or netmask(10.1.0.0/16) or netmask6(2001:db8::/32)
//!     or program("sshd" type(string)) or message("text" type(string) flags(substring))
//!     or match("x" value("PROGRAM")) or "${HOST}" eq "name" or "$SOURCEIP" ne "10.0.0.1"
//!     or (not filter(f_other) and host("a"));
//! };
//! ```
//!
//! `and` binds tighter than `or`; `;` between terms is `and`, as in syslog-ng. Patterns are
//! PCRE by default (Rust regex syntax: look-around is rejected at load with the line),
//! `glob` (`*`, `?`), or `string` (whole value, or with `prefix`/`substring`). The values
//! available are HOST, PROGRAM, MESSAGE (or MSG) and SOURCEIP. Anything else is an error at
//! load naming the file, the line and what was expected.

use std::net::IpAddr;

use regex::bytes::{Regex, RegexBuilder};

use super::csv::ContextError;

/// What a filter looks at.
#[derive(Clone, Copy, Debug)]
pub struct FilterInput<'a> {
    pub host: Option<&'a [u8]>,
    pub source_ip: IpAddr,
    pub program: Option<&'a [u8]>,
    pub message: &'a [u8],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Host,
    Program,
    Message,
    SourceIp,
}

#[derive(Debug)]
enum Pattern {
    Regex(Regex),
    Exact(Vec<u8>, bool),
    Prefix(Vec<u8>, bool),
    Substring(Vec<u8>, bool),
}

impl Pattern {
    fn matches(&self, v: &[u8]) -> bool {
        fn lower(b: &[u8]) -> Vec<u8> {
            b.to_ascii_lowercase()
        }
        match self {
            Pattern::Regex(r) => r.is_match(v),
            Pattern::Exact(p, ic) => {
                if *ic {
                    v.eq_ignore_ascii_case(p)
                } else {
                    v == p.as_slice()
                }
            }
            Pattern::Prefix(p, ic) => {
                v.len() >= p.len()
                    && if *ic {
                        v[..p.len()].eq_ignore_ascii_case(p)
                    } else {
                        v.starts_with(p)
                    }
            }
            Pattern::Substring(p, ic) => {
                if *ic {
                    memchr::memmem::find(&lower(v), &lower(p)).is_some()
                } else {
                    memchr::memmem::find(v, p).is_some()
                }
            }
        }
    }
}

#[derive(Debug)]
enum Expr {
    Or(Vec<Expr>),
    And(Vec<Expr>),
    Not(Box<Expr>),
    Match(Field, Pattern),
    Net {
        net: IpAddr,
        prefix: u8,
    },
    Compare {
        field: Field,
        value: Vec<u8>,
        equal: bool,
    },
    Ref(usize),
}

/// The named filters of one `.conf` file, in file order.
#[derive(Debug, Default)]
pub struct Filters {
    names: Vec<String>,
    exprs: Vec<Expr>,
}

impl Filters {
    /// Parses a filter file; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Filters, ContextError> {
        let tokens = tokenize(file, text)?;
        let mut p = Parser {
            file,
            tokens: &tokens,
            at: 0,
            filters: Filters::default(),
        };
        while p.at < tokens.len() {
            p.statement()?;
        }
        Ok(p.filters)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Whether filter number `i` accepts the input.
    pub fn matches(&self, i: usize, input: &FilterInput<'_>) -> bool {
        self.eval(&self.exprs[i], input)
    }

    fn eval(&self, e: &Expr, input: &FilterInput<'_>) -> bool {
        match e {
            Expr::Or(v) => v.iter().any(|e| self.eval(e, input)),
            Expr::And(v) => v.iter().all(|e| self.eval(e, input)),
            Expr::Not(e) => !self.eval(e, input),
            Expr::Ref(i) => self.eval(&self.exprs[*i], input),
            Expr::Match(field, pattern) => with_field(*field, input, |v| pattern.matches(v)),
            Expr::Compare {
                field,
                value,
                equal,
            } => with_field(*field, input, |v| (v == value.as_slice()) == *equal),
            Expr::Net { net, prefix } => in_net(input.source_ip.to_canonical(), *net, *prefix),
        }
    }
}

fn with_field(field: Field, input: &FilterInput<'_>, f: impl FnOnce(&[u8]) -> bool) -> bool {
    match field {
        Field::Host => f(input.host.unwrap_or_default()),
        Field::Program => f(input.program.unwrap_or_default()),
        Field::Message => f(input.message),
        Field::SourceIp => {
            let mut buf = String::new();
            use std::fmt::Write as _;
            let _ = write!(buf, "{}", input.source_ip.to_canonical());
            f(buf.as_bytes())
        }
    }
}

fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix))
            };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix))
            };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Word(String),
    Str(String),
    Sym(char),
}

struct Token {
    tok: Tok,
    line: usize,
}

fn tokenize(file: &str, text: &str) -> Result<Vec<Token>, ContextError> {
    let mut out = Vec::new();
    for (i, raw_line) in text.lines().enumerate() {
        let line = i + 1;
        let mut chars = raw_line.char_indices().peekable();
        while let Some(&(_, c)) = chars.peek() {
            match c {
                '#' => break,
                c if c.is_whitespace() => {
                    chars.next();
                }
                '"' | '\'' => {
                    chars.next();
                    let mut s = String::new();
                    let mut closed = false;
                    while let Some((_, d)) = chars.next() {
                        if d == '\\' && c == '"' {
                            match chars.next() {
                                Some((_, e)) => {
                                    if e != '"' && e != '\\' {
                                        s.push('\\');
                                    }
                                    s.push(e)
                                }
                                None => break,
                            }
                        } else if d == c {
                            closed = true;
                            break;
                        } else {
                            s.push(d);
                        }
                    }
                    if !closed {
                        return Err(ContextError::syntax(
                            file,
                            line,
                            raw_line,
                            "unterminated string (strings do not span lines)",
                        ));
                    }
                    out.push(Token {
                        tok: Tok::Str(s),
                        line,
                    });
                }
                '{' | '}' | '(' | ')' | ';' | ',' => {
                    chars.next();
                    out.push(Token {
                        tok: Tok::Sym(c),
                        line,
                    });
                }
                _ => {
                    let mut w = String::new();
                    while let Some(&(_, d)) = chars.peek() {
                        if d.is_whitespace() || "{}();,\"'#".contains(d) {
                            break;
                        }
                        w.push(d);
                        chars.next();
                    }
                    out.push(Token {
                        tok: Tok::Word(w),
                        line,
                    });
                }
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    file: &'a str,
    tokens: &'a [Token],
    at: usize,
    filters: Filters,
}

impl Parser<'_> {
    fn err(&self, expected: &str) -> ContextError {
        let (line, found) = match self.tokens.get(self.at) {
            Some(t) => (
                t.line,
                match &t.tok {
                    Tok::Word(w) => w.clone(),
                    Tok::Str(s) => format!("{s:?}"),
                    Tok::Sym(c) => c.to_string(),
                },
            ),
            None => (
                self.tokens.last().map_or(1, |t| t.line),
                "end of file".into(),
            ),
        };
        ContextError::syntax(self.file, line, &found, format!("expected {expected}"))
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|t| &t.tok)
    }

    fn sym(&mut self, c: char) -> Result<(), ContextError> {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.err(&format!("`{c}`")))
        }
    }

    fn word(&mut self, what: &str) -> Result<String, ContextError> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            _ => Err(self.err(what)),
        }
    }

    fn string(&mut self) -> Result<String, ContextError> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.at += 1;
                Ok(s)
            }
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            _ => Err(self.err("a quoted string")),
        }
    }

    /// `filter NAME { expr };`
    fn statement(&mut self) -> Result<(), ContextError> {
        let kw = self.word("`filter f_name { ... };`")?;
        if kw != "filter" {
            self.at -= 1;
            return Err(self.err("`filter f_name { ... };`"));
        }
        let name = self.word("a filter name")?;
        if self.filters.index_of(&name).is_some() {
            self.at -= 1;
            return Err(self.err("a filter name not defined before"));
        }
        self.sym('{')?;
        let expr = self.conjunction_list()?;
        self.sym('}')?;
        if self.peek() == Some(&Tok::Sym(';')) {
            self.at += 1;
        }
        self.filters.names.push(name);
        self.filters.exprs.push(expr);
        Ok(())
    }

    /// `expr ; expr ; ...` (and), up to `}`.
    fn conjunction_list(&mut self) -> Result<Expr, ContextError> {
        let mut all = vec![self.or()?];
        while self.peek() == Some(&Tok::Sym(';')) {
            self.at += 1;
            if matches!(self.peek(), Some(Tok::Sym('}'))) {
                break;
            }
            all.push(self.or()?);
        }
        Ok(if all.len() == 1 {
            all.pop().expect("one")
        } else {
            Expr::And(all)
        })
    }

    fn or(&mut self) -> Result<Expr, ContextError> {
        let mut v = vec![self.and()?];
        while matches!(self.peek(), Some(Tok::Word(w)) if w == "or") {
            self.at += 1;
            v.push(self.and()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Expr::Or(v)
        })
    }

    fn and(&mut self) -> Result<Expr, ContextError> {
        let mut v = vec![self.unary()?];
        while matches!(self.peek(), Some(Tok::Word(w)) if w == "and") {
            self.at += 1;
            v.push(self.unary()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Expr::And(v)
        })
    }

    fn unary(&mut self) -> Result<Expr, ContextError> {
        const TERM: &str = "a filter term: host(), program(), message(), match(), netmask(), \
             netmask6(), filter(), \"${HOST}\" eq \"...\", not, or (";
        match self.peek() {
            Some(Tok::Word(w)) if w == "not" => {
                self.at += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Sym('(')) => {
                self.at += 1;
                let e = self.or()?;
                self.sym(')')?;
                Ok(e)
            }
            Some(Tok::Str(_)) => self.compare(),
            Some(Tok::Word(w)) => {
                let w = w.clone();
                self.at += 1;
                match w.as_str() {
                    "host" => self.pattern(Field::Host),
                    "program" => self.pattern(Field::Program),
                    "message" => self.pattern(Field::Message),
                    "match" => self.match_value(),
                    "netmask" | "netmask6" => self.netmask(),
                    "filter" => {
                        self.sym('(')?;
                        let name = self.word("a filter name")?;
                        let Some(i) = self.filters.index_of(&name) else {
                            self.at -= 1;
                            return Err(self.err("the name of a filter defined above"));
                        };
                        self.sym(')')?;
                        Ok(Expr::Ref(i))
                    }
                    _ => {
                        self.at -= 1;
                        Err(self.err(TERM))
                    }
                }
            }
            _ => Err(self.err(TERM)),
        }
    }

    /// `"${HOST}" eq "x"` / `ne` / `==` / `!=`.
    fn compare(&mut self) -> Result<Expr, ContextError> {
        let template = self.string()?;
        let field = macro_field(&template).ok_or_else(|| {
            self.at -= 1;
            self.err("a template of ${HOST}, ${PROGRAM}, ${MESSAGE} or ${SOURCEIP}")
        })?;
        let op = self.word("`eq`, `ne`, `==` or `!=`")?;
        let equal = match op.as_str() {
            "eq" | "==" => true,
            "ne" | "!=" => false,
            _ => {
                self.at -= 1;
                return Err(self.err("`eq`, `ne`, `==` or `!=`"));
            }
        };
        let value = self.string()?;
        Ok(Expr::Compare {
            field,
            value: value.into_bytes(),
            equal,
        })
    }

    /// `("pattern" type(...) flags(...))`
    fn pattern(&mut self, field: Field) -> Result<Expr, ContextError> {
        self.sym('(')?;
        let pat = self.string()?;
        let (kind, flags, value) = self.options()?;
        if value.is_some() {
            return Err(self.err("no value() in host(), program() or message()"));
        }
        self.sym(')')?;
        Ok(Expr::Match(field, self.compile(&pat, &kind, &flags)?))
    }

    /// `match("pattern" value("NAME") type(...) flags(...))`
    fn match_value(&mut self) -> Result<Expr, ContextError> {
        self.sym('(')?;
        let pat = self.string()?;
        let (kind, flags, value) = self.options()?;
        let field = match value.as_deref() {
            Some("HOST") => Field::Host,
            Some("PROGRAM") => Field::Program,
            Some("MESSAGE" | "MSG") => Field::Message,
            Some("SOURCEIP") => Field::SourceIp,
            _ => return Err(self.err(
                "value(\"HOST\"), value(\"PROGRAM\"), value(\"MESSAGE\") or value(\"SOURCEIP\")",
            )),
        };
        self.sym(')')?;
        Ok(Expr::Match(field, self.compile(&pat, &kind, &flags)?))
    }

    /// `type(...)`, `flags(...)`, `value(...)` in any order, commas allowed.
    fn options(&mut self) -> Result<(String, Vec<String>, Option<String>), ContextError> {
        let mut kind = "pcre".to_owned();
        let mut flags = Vec::new();
        let mut value = None;
        loop {
            if self.peek() == Some(&Tok::Sym(',')) {
                self.at += 1;
                continue;
            }
            let Some(Tok::Word(w)) = self.peek() else {
                break;
            };
            let w = w.clone();
            self.at += 1;
            self.sym('(')?;
            match w.as_str() {
                "type" => kind = self.string()?,
                "value" => value = Some(self.string()?),
                "flags" => loop {
                    match self.peek() {
                        Some(Tok::Sym(')')) => break,
                        Some(Tok::Sym(',')) => self.at += 1,
                        _ => flags.push(self.string()?),
                    }
                },
                _ => {
                    self.at -= 2;
                    return Err(self.err("type(), flags() or value()"));
                }
            }
            self.sym(')')?;
        }
        Ok((kind, flags, value))
    }

    fn compile(&self, pat: &str, kind: &str, flags: &[String]) -> Result<Pattern, ContextError> {
        let ic = flags.iter().any(|f| f == "ignore-case");
        let prefix = flags.iter().any(|f| f == "prefix");
        let substring = flags.iter().any(|f| f == "substring");
        let pattern = match kind {
            "string" if prefix => Pattern::Prefix(pat.as_bytes().to_vec(), ic),
            "string" if substring => Pattern::Substring(pat.as_bytes().to_vec(), ic),
            "string" => Pattern::Exact(pat.as_bytes().to_vec(), ic),
            "glob" => Pattern::Regex(self.regex(&glob_to_regex(pat), ic)?),
            "pcre" | "posix" => Pattern::Regex(self.regex(pat, ic)?),
            _ => {
                return Err(self.err_prev("type(pcre), type(glob) or type(string)"));
            }
        };
        Ok(pattern)
    }

    fn regex(&self, pat: &str, ic: bool) -> Result<Regex, ContextError> {
        RegexBuilder::new(pat)
            .case_insensitive(ic)
            .build()
            .map_err(|e| self.err_prev(&format!("a regular expression sluice supports ({e})")))
    }

    fn err_prev(&self, expected: &str) -> ContextError {
        let line = self
            .tokens
            .get(self.at.saturating_sub(1))
            .map_or(1, |t| t.line);
        ContextError::syntax(self.file, line, "", format!("expected {expected}"))
    }

    /// `netmask(10.0.0.0/8)`, `netmask(10.0.0.0/255.0.0.0)`, `netmask(10.0.0.1)`.
    fn netmask(&mut self) -> Result<Expr, ContextError> {
        self.sym('(')?;
        let text = self.string()?;
        let bad = |p: &Self| p.err_prev("an address/prefix such as 10.1.0.0/16 or 2001:db8::/32");
        let (addr, mask) = match text.split_once('/') {
            Some((a, m)) => (a, Some(m)),
            None => (text.as_str(), None),
        };
        let net: IpAddr = addr.trim().parse().map_err(|_| bad(self))?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match mask {
            None => max,
            Some(m) => match m.trim().parse::<u8>() {
                Ok(p) if p <= max => p,
                Ok(_) => return Err(bad(self)),
                Err(_) => match m.trim().parse::<std::net::Ipv4Addr>() {
                    Ok(dotted) if net.is_ipv4() => {
                        let bits = u32::from(dotted);
                        if bits.leading_ones() + bits.trailing_zeros() != 32 {
                            return Err(bad(self));
                        }
                        bits.leading_ones() as u8
                    }
                    _ => return Err(bad(self)),
                },
            },
        };
        self.sym(')')?;
        Ok(Expr::Net { net, prefix })
    }
}

fn macro_field(template: &str) -> Option<Field> {
    let name = template
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| template.strip_prefix('$'))?;
    match name {
        "HOST" => Some(Field::Host),
        "PROGRAM" => Some(Field::Program),
        "MESSAGE" | "MSG" => Some(Field::Message),
        "SOURCEIP" => Some(Field::SourceIp),
        _ => None,
    }
}

/// A glob (`*`, `?`) as an anchored regex.
fn glob_to_regex(glob: &str) -> String {
    let mut r = String::from("^");
    for c in glob.chars() {
        match c {
            '*' => r.push_str(".*"),
            '?' => r.push('.'),
            c => r.push_str(&regex::escape(&c.to_string())),
        }
    }
    r.push('$');
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(host: &'a str, ip: &str, program: &'a str) -> FilterInput<'a> {
        FilterInput {
            host: Some(host.as_bytes()),
            source_ip: ip.parse().unwrap(),
            program: Some(program.as_bytes()),
            message: b"hello world",
        }
    }

    #[test]
    fn sc4s_examples() {
        let conf = r#"
filter f_tzfixny {
    host("tzfny-*" type(glob))
    #or netmask(xxx.xxx.xxx.xxx/xx)
};
filter f_f5{
    host('^test-f5') or "${HOST}" eq "f5_bigip"
};
filter f_net { netmask(10.1.0.0/16) or netmask(192.168.0.0/255.255.255.0) or netmask6(2001:db8::/32) };
filter f_combo { not filter(f_net) and (program("sshd" type(string)) or message("world" type(string) flags(substring))) };
filter f_semi { host("a" type(string) flags(prefix)); match("^ss" value("PROGRAM")) };
"#;
        let f = Filters::parse("vps.conf", conf).unwrap();
        assert_eq!(
            f.names().collect::<Vec<_>>(),
            ["f_tzfixny", "f_f5", "f_net", "f_combo", "f_semi"]
        );
        assert!(f.matches(0, &input("tzfny-1", "1.2.3.4", "x")));
        assert!(!f.matches(0, &input("xtzfny-1", "1.2.3.4", "x")));
        assert!(f.matches(1, &input("test-f5-a", "1.2.3.4", "x")));
        assert!(f.matches(1, &input("f5_bigip", "1.2.3.4", "x")));
        assert!(!f.matches(1, &input("f5", "1.2.3.4", "x")));
        assert!(f.matches(2, &input("h", "10.1.200.3", "x")));
        assert!(f.matches(2, &input("h", "192.168.0.9", "x")));
        assert!(f.matches(2, &input("h", "2001:db8::1", "x")));
        assert!(f.matches(2, &input("h", "::ffff:10.1.0.1", "x")));
        assert!(!f.matches(2, &input("h", "10.2.0.1", "x")));
        assert!(f.matches(3, &input("h", "10.2.0.1", "x")));
        assert!(!f.matches(3, &input("h", "10.1.0.1", "x")));
        assert!(f.matches(4, &input("ab", "1.1.1.1", "sshd")));
        assert!(!f.matches(4, &input("ab", "1.1.1.1", "cron")));
    }

    #[test]
    fn errors_name_the_line_and_the_expectation() {
        let cases = [
            (
                "filter f {\n  hots(\"a\")\n};",
                Some(2),
                "expected a filter term",
            ),
            (
                "filter f {\n  host(\"a\" type(regexx))\n};",
                Some(2),
                "type(pcre)",
            ),
            (
                "filter f {\n netmask(10.0.0.0/33)\n};",
                Some(2),
                "address/prefix",
            ),
            (
                "filter f {\n host(\"(?<=a)b\")\n};",
                Some(2),
                "regular expression",
            ),
            ("filter f {\n filter(g)\n};", Some(2), "defined above"),
            ("filter f { host(\"a) };", Some(1), "unterminated"),
            ("filter f { \"${FOO}\" eq \"a\" };", Some(1), "${HOST}"),
            ("host(\"a\");", Some(1), "`filter f_name"),
        ];
        for (text, line, needle) in cases {
            match Filters::parse("x.conf", text) {
                Err(ContextError::Syntax {
                    line: l, reason, ..
                }) => {
                    assert_eq!(Some(l), line, "{text}");
                    assert!(reason.contains(needle), "{text}: {reason}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }
}
