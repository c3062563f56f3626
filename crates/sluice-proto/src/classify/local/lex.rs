//! The lexer of syslog-ng's configuration language, as SC4S's files use it.
//!
//! Tokens are words (identifiers, numbers, `10.0.0.0/8`), strings (`"..."` with syslog-ng's
//! escapes: `\n \t \r \a \v \xHH \oOOO`, and `\c` for any other `c`, so `"\d"` is `d`;
//! `'...'` verbatim), the symbols `{ } ( ) [ ] ;`, the comparison operators and `@` pragma
//! lines. Commas separate nothing syslog-ng cares about and are skipped, as syslog-ng does;
//! `#` starts a comment outside strings.
//!
//! Backtick references (`` `name` ``) are replaced by their value wherever they appear,
//! strings included: a block's argument, an `@define`, or else an environment variable
//! (empty when unset), as syslog-ng substitutes them before it lexes. Bodies that are
//! compiled later (applications, blocks, named objects) are captured raw
//! ([`Lexer::capture`]) and lexed again, with their own scope, when they are used.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::span::{PResult, Problem, Span};

/// What backtick references resolve to.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    /// A block's arguments (name, value text), when lexing its body.
    pub args: &'a [(String, String)],
    /// `@define`s.
    pub globals: &'a HashMap<String, String>,
    /// The environment (`None`: unset).
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl Scope<'_> {
    fn lookup(&self, name: &str) -> String {
        if let Some((_, v)) = self.args.iter().find(|(n, _)| n == name) {
            return v.clone();
        }
        if let Some(v) = self.globals.get(name) {
            return v.clone();
        }
        (self.env)(name).unwrap_or_default()
    }
}

/// A piece of source kept to be lexed later: an application's filter, a block's body, an
/// argument's text.
#[derive(Clone, Debug)]
pub(crate) struct RawSlice {
    pub text: Arc<str>,
    pub start: usize,
    pub end: usize,
    pub file: u16,
    /// Set when the text is a substitution's value: every token is reported there.
    pub origin: Option<Span>,
}

impl RawSlice {
    pub fn whole(file: u16, text: Arc<str>) -> RawSlice {
        let end = text.len();
        RawSlice {
            text,
            start: 0,
            end,
            file,
            origin: None,
        }
    }

    /// A piece of text that stands at `at` (a substitution, an argument's default).
    pub fn detached(text: &str, at: Span) -> RawSlice {
        RawSlice {
            text: text.into(),
            start: 0,
            end: text.len(),
            file: at.file,
            origin: Some(at),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text[self.start..self.end]
    }

    pub fn span(&self) -> Span {
        self.origin.unwrap_or(Span {
            file: self.file,
            offset: self.start as u32,
        })
    }
}

/// A comparison operator token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    Word(String),
    Str(String),
    Sym(char),
    Op(Op),
    /// An `@...` line, without the `@`.
    Pragma(String),
    Eof,
}

impl Tok {
    /// How the token is named in messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Str(s) => format!("{s:?}"),
            Tok::Sym(c) => format!("`{c}`"),
            Tok::Op(o) => format!("`{}`", op_text(*o)),
            Tok::Pragma(p) => format!("`@{p}`"),
            Tok::Eof => "the end of the text".into(),
        }
    }
}

pub(crate) fn op_text(o: Op) -> &'static str {
    match o {
        Op::Eq => "==",
        Op::Ne => "!=",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

struct Frame {
    text: Arc<str>,
    pos: usize,
    end: usize,
    file: u16,
    origin: Option<Span>,
}

/// How deep substitutions may nest (a value that refers to itself stops here).
const MAX_DEPTH: usize = 16;

pub(crate) struct Lexer<'s> {
    frames: Vec<Frame>,
    scope: Scope<'s>,
    peeked: VecDeque<Token>,
    /// The span of the last token taken.
    last: Span,
}

impl<'s> Lexer<'s> {
    pub fn new(slice: &RawSlice, scope: Scope<'s>) -> Lexer<'s> {
        Lexer {
            frames: vec![Frame {
                text: slice.text.clone(),
                pos: slice.start,
                end: slice.end,
                file: slice.file,
                origin: slice.origin,
            }],
            scope,
            peeked: VecDeque::new(),
            last: slice.span(),
        }
    }

    pub fn scope(&self) -> Scope<'s> {
        self.scope
    }

    pub fn next(&mut self) -> PResult<Token> {
        let t = match self.peeked.pop_front() {
            Some(t) => t,
            None => self.lex()?,
        };
        self.last = t.span;
        Ok(t)
    }

    pub fn peek(&mut self) -> PResult<&Token> {
        self.peek_at(0)
    }

    pub fn peek_at(&mut self, n: usize) -> PResult<&Token> {
        while self.peeked.len() <= n {
            let t = self.lex()?;
            self.peeked.push_back(t);
        }
        Ok(&self.peeked[n])
    }

    /// Whether the next token is the symbol `c` (taken if so).
    pub fn eat_sym(&mut self, c: char) -> PResult<bool> {
        if self.peek()?.tok == Tok::Sym(c) {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Whether the next token is the word `w` (taken if so).
    pub fn eat_word(&mut self, w: &str) -> PResult<bool> {
        if matches!(&self.peek()?.tok, Tok::Word(x) if x == w) {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    pub fn expect_sym(&mut self, c: char, context: &str) -> PResult<Span> {
        let t = self.next()?;
        if t.tok == Tok::Sym(c) {
            return Ok(t.span);
        }
        Err(Problem::error(
            t.span,
            format!("expected `{c}` {context}, found {}", t.tok.describe()),
        ))
    }

    /// A word (an identifier or a number).
    pub fn expect_word(&mut self, what: &str) -> PResult<(String, Span)> {
        let t = self.next()?;
        match t.tok {
            Tok::Word(w) => Ok((w, t.span)),
            other => Err(Problem::error(
                t.span,
                format!("expected {what}, found {}", other.describe()),
            )),
        }
    }

    /// A string or a word (syslog-ng accepts either where a value is expected).
    pub fn expect_value(&mut self, what: &str) -> PResult<(String, Span)> {
        let t = self.next()?;
        match t.tok {
            Tok::Word(w) | Tok::Str(w) => Ok((w, t.span)),
            other => Err(Problem::error(
                t.span,
                format!("expected {what}, found {}", other.describe()),
            )),
        }
    }

    /// The raw text from here to the symbol `close` that matches an `open` already taken,
    /// which is taken too. Strings and comments are skipped over; nothing is substituted.
    pub fn capture(&mut self, open: char, close: char) -> PResult<RawSlice> {
        if let Some(t) = self.peeked.front() {
            // Only the closing symbol itself may have been looked at (an empty body).
            if t.tok == Tok::Sym(close) && self.peeked.len() == 1 {
                let t = self.next()?;
                return Ok(RawSlice {
                    text: "".into(),
                    start: 0,
                    end: 0,
                    file: t.span.file,
                    origin: Some(t.span),
                });
            }
            return Err(Problem::error(
                t.span,
                "internal: capture after look-ahead".to_string(),
            ));
        }
        let opened_at = self.last;
        let frame = self.frames.last_mut().expect("a frame");
        let bytes = frame.text.as_bytes();
        let start = frame.pos;
        let mut depth = 0usize;
        let mut i = start;
        while i < frame.end {
            let b = bytes[i];
            match b {
                b'#' => {
                    while i < frame.end && bytes[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'"' => {
                    i += 1;
                    while i < frame.end && bytes[i] != b'"' {
                        if bytes[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                }
                b'\'' => {
                    i += 1;
                    while i < frame.end && bytes[i] != b'\'' {
                        i += 1;
                    }
                }
                _ if b == open as u8 => depth += 1,
                _ if b == close as u8 => {
                    if depth == 0 {
                        let slice = RawSlice {
                            text: frame.text.clone(),
                            start,
                            end: i,
                            file: frame.file,
                            origin: frame.origin,
                        };
                        frame.pos = i + 1;
                        self.last = Span {
                            file: frame.file,
                            offset: i as u32,
                        };
                        return Ok(slice);
                    }
                    depth -= 1;
                }
                _ => {}
            }
            i += 1;
        }
        Err(Problem::error(
            opened_at,
            format!("`{open}` is not closed by a `{close}`"),
        ))
    }

    fn span_at(frame: &Frame, pos: usize) -> Span {
        frame.origin.unwrap_or(Span {
            file: frame.file,
            offset: pos as u32,
        })
    }

    fn lex(&mut self) -> PResult<Token> {
        loop {
            let Some(frame) = self.frames.last_mut() else {
                return Ok(Token {
                    tok: Tok::Eof,
                    span: self.last,
                });
            };
            let bytes = frame.text.as_bytes();
            // Whitespace, commas, comments, line continuations.
            while frame.pos < frame.end {
                match bytes[frame.pos] {
                    b' ' | b'\t' | b'\r' | b'\n' | b',' => frame.pos += 1,
                    b'\\' if matches!(bytes.get(frame.pos + 1), Some(b'\n' | b'\r')) => {
                        frame.pos += 1;
                    }
                    b'#' => {
                        while frame.pos < frame.end && bytes[frame.pos] != b'\n' {
                            frame.pos += 1;
                        }
                    }
                    _ => break,
                }
            }
            if frame.pos >= frame.end {
                if self.frames.len() == 1 {
                    let f = &self.frames[0];
                    let span = Self::span_at(f, f.end);
                    return Ok(Token {
                        tok: Tok::Eof,
                        span,
                    });
                }
                self.frames.pop();
                continue;
            }
            let start = frame.pos;
            let span = Self::span_at(frame, start);
            let b = bytes[start];
            match b {
                b'`' => {
                    let Some(len) = bytes[start + 1..frame.end].iter().position(|&c| c == b'`')
                    else {
                        return Err(Problem::error(span, "a backtick reference is not closed"));
                    };
                    let name = frame.text[start + 1..start + 1 + len].to_owned();
                    frame.pos = start + len + 2;
                    let value = self.scope.lookup(&name);
                    if self.frames.len() >= MAX_DEPTH {
                        return Err(Problem::error(
                            span,
                            format!("`{name}` expands to itself (substitutions nest too deep)"),
                        ));
                    }
                    if !value.is_empty() {
                        self.frames.push(Frame {
                            end: value.len(),
                            text: value.into(),
                            pos: 0,
                            file: span.file,
                            origin: Some(span),
                        });
                    }
                    continue;
                }
                b'"' | b'\'' => {
                    let s = self.string(b, span)?;
                    return Ok(Token {
                        tok: Tok::Str(s),
                        span,
                    });
                }
                b'@' if at_line_start(bytes, start) && frame.origin.is_none() => {
                    let mut end = start;
                    while end < frame.end && bytes[end] != b'\n' {
                        end += 1;
                    }
                    let line = frame.text[start + 1..end].trim().to_owned();
                    frame.pos = end;
                    return Ok(Token {
                        tok: Tok::Pragma(line),
                        span,
                    });
                }
                b'{' | b'}' | b'(' | b')' | b'[' | b']' | b';' => {
                    frame.pos += 1;
                    return Ok(Token {
                        tok: Tok::Sym(b as char),
                        span,
                    });
                }
                b'=' | b'!' | b'<' | b'>' => {
                    let next = bytes
                        .get(start + 1)
                        .copied()
                        .filter(|_| start + 1 < frame.end);
                    let (tok, len) = match (b, next) {
                        (b'=', Some(b'=')) => (Tok::Op(Op::Eq), 2),
                        (b'!', Some(b'=')) => (Tok::Op(Op::Ne), 2),
                        (b'<', Some(b'=')) => (Tok::Op(Op::Le), 2),
                        (b'>', Some(b'=')) => (Tok::Op(Op::Ge), 2),
                        (b'<', _) => (Tok::Op(Op::Lt), 1),
                        (b'>', _) => (Tok::Op(Op::Gt), 1),
                        (c, _) => (Tok::Sym(c as char), 1),
                    };
                    frame.pos += len;
                    return Ok(Token { tok, span });
                }
                _ => {
                    let mut end = start;
                    while end < frame.end && is_word_byte(bytes[end]) {
                        end += 1;
                    }
                    if end == start {
                        // A byte that starts nothing (a stray `\`, a control byte).
                        let c = frame.text[start..].chars().next().unwrap_or('?');
                        frame.pos += c.len_utf8().max(1);
                        return Ok(Token {
                            tok: Tok::Sym(c),
                            span,
                        });
                    }
                    let w = frame.text[start..end].to_owned();
                    frame.pos = end;
                    return Ok(Token {
                        tok: Tok::Word(w),
                        span,
                    });
                }
            }
        }
    }

    /// A string starting at the quote `q` of the top frame.
    fn string(&mut self, q: u8, span: Span) -> PResult<String> {
        let mut out = Vec::new();
        let scope = self.scope;
        let depth = self.frames.len();
        let frame = self.frames.last_mut().expect("a frame");
        let bytes = frame.text.as_bytes();
        let mut i = frame.pos + 1;
        loop {
            if i >= frame.end {
                return Err(Problem::error(span, "a string is not closed"));
            }
            let b = bytes[i];
            if b == q {
                i += 1;
                break;
            }
            if b == b'`' {
                let Some(len) = bytes[i + 1..frame.end].iter().position(|&c| c == b'`') else {
                    return Err(Problem::error(span, "a backtick reference is not closed"));
                };
                let name = &frame.text[i + 1..i + 1 + len];
                let value = scope.lookup(name);
                if depth >= MAX_DEPTH {
                    return Err(Problem::error(span, "substitutions nest too deep"));
                }
                // syslog-ng escapes what it substitutes into a string: the value stands
                // as it is.
                out.extend_from_slice(value.as_bytes());
                i += len + 2;
                continue;
            }
            if q == b'"' && b == b'\\' {
                let (consumed, _) = unescape_one(&bytes[i..frame.end], &mut out);
                i += consumed;
                continue;
            }
            out.push(b);
            i += 1;
        }
        frame.pos = i;
        Ok(String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
}

/// Bytes of a word: anything but whitespace, quotes, brackets, `;`, `,`, `#`, a backtick and
/// the comparison characters.
fn is_word_byte(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t'
            | b'\r'
            | b'\n'
            | b'"'
            | b'\''
            | b'`'
            | b'('
            | b')'
            | b'{'
            | b'}'
            | b'['
            | b']'
            | b';'
            | b','
            | b'#'
            | b'='
            | b'!'
            | b'<'
            | b'>'
            | b'\\'
    ) && b >= 0x20
}

fn at_line_start(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|&b| b == b' ' || b == b'\t')
}

/// One escape at the start of `s` (`s[0]` is `\`); returns the bytes used.
fn unescape_one(s: &[u8], out: &mut Vec<u8>) -> (usize, ()) {
    let Some(&c) = s.get(1) else {
        out.push(b'\\');
        return (1, ());
    };
    match c {
        b'a' => out.push(7),
        b'n' => out.push(b'\n'),
        b'r' => out.push(b'\r'),
        b't' => out.push(b'\t'),
        b'v' => out.push(11),
        b'\n' => {}
        b'x' => {
            let digits: Vec<u8> = s[2..]
                .iter()
                .take(2)
                .take_while(|d| d.is_ascii_hexdigit())
                .copied()
                .collect();
            if digits.is_empty() {
                out.push(b'x');
                return (2, ());
            }
            let v =
                u8::from_str_radix(std::str::from_utf8(&digits).unwrap_or("0"), 16).unwrap_or(0);
            out.push(v);
            return (2 + digits.len(), ());
        }
        b'o' => {
            let digits: Vec<u8> = s[2..]
                .iter()
                .take(3)
                .take_while(|d| (b'0'..=b'7').contains(d))
                .copied()
                .collect();
            if digits.is_empty() {
                out.push(b'o');
                return (2, ());
            }
            let v =
                u32::from_str_radix(std::str::from_utf8(&digits).unwrap_or("0"), 8).unwrap_or(0);
            out.push(v as u8);
            return (2 + digits.len(), ());
        }
        other => out.push(other),
    }
    (2, ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        toks_env(text, &[])
    }

    fn toks_env(text: &str, env: &[(&str, &str)]) -> Vec<Tok> {
        let globals = HashMap::new();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let lookup = move |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let scope = Scope {
            args: &[],
            globals: &globals,
            env: &lookup,
        };
        let slice = RawSlice::whole(0, text.into());
        let mut lx = Lexer::new(&slice, scope);
        let mut out = Vec::new();
        loop {
            let t = lx.next().unwrap();
            if t.tok == Tok::Eof {
                break;
            }
            out.push(t.tok);
        }
        out
    }

    fn w(s: &str) -> Tok {
        Tok::Word(s.into())
    }

    fn s(x: &str) -> Tok {
        Tok::Str(x.into())
    }

    #[test]
    fn words_strings_symbols() {
        assert_eq!(
            toks("application app-x[sc4s-syslog] { filter { host(\"a\\d\" type(string)); }; };"),
            vec![
                w("application"),
                w("app-x"),
                Tok::Sym('['),
                w("sc4s-syslog"),
                Tok::Sym(']'),
                Tok::Sym('{'),
                w("filter"),
                Tok::Sym('{'),
                w("host"),
                Tok::Sym('('),
                s("ad"),
                w("type"),
                Tok::Sym('('),
                w("string"),
                Tok::Sym(')'),
                Tok::Sym(')'),
                Tok::Sym(';'),
                Tok::Sym('}'),
                Tok::Sym(';'),
                Tok::Sym('}'),
                Tok::Sym(';'),
            ]
        );
        assert_eq!(toks(r"'^\<\d+\>' # comment"), vec![s(r"^\<\d+\>")]);
        assert_eq!(toks(r#""a\tb\x41\o101\"\\""#), vec![s("a\tbAA\"\\")]);
        assert_eq!(
            toks("netmask(10.1.0.0/16), a==b != <= < > >="),
            vec![
                w("netmask"),
                Tok::Sym('('),
                w("10.1.0.0/16"),
                Tok::Sym(')'),
                w("a"),
                Tok::Op(Op::Eq),
                w("b"),
                Tok::Op(Op::Ne),
                Tok::Op(Op::Le),
                Tok::Op(Op::Lt),
                Tok::Op(Op::Gt),
                Tok::Op(Op::Ge),
            ]
        );
        assert_eq!(
            toks("@version: 4.2\n  @define x \"y\"\nfoo"),
            vec![
                Tok::Pragma("version: 4.2".into()),
                Tok::Pragma("define x \"y\"".into()),
                w("foo")
            ]
        );
        assert_eq!(toks("'multi\nline'"), vec![s("multi\nline")]);
    }

    #[test]
    fn backticks_substitute_everywhere() {
        let env = [("SC4S_X", "yes"), ("COND", "host(\"a\")")];
        assert_eq!(
            toks_env("\"`SC4S_X`\" eq 'v-`SC4S_X`' `COND` `UNSET`", &env),
            vec![
                s("yes"),
                w("eq"),
                s("v-yes"),
                w("host"),
                Tok::Sym('('),
                s("a"),
                Tok::Sym(')'),
            ]
        );
    }

    #[test]
    fn capture_skips_strings_and_comments() {
        let globals = HashMap::new();
        let env = |_: &str| None;
        let scope = Scope {
            args: &[],
            globals: &globals,
            env: &env,
        };
        let text = "x { a \"}\" '}' # }\n { b } } ;";
        let slice = RawSlice::whole(0, text.into());
        let mut lx = Lexer::new(&slice, scope);
        assert_eq!(lx.next().unwrap().tok, w("x"));
        lx.expect_sym('{', "").unwrap();
        let body = lx.capture('{', '}').unwrap();
        assert_eq!(body.as_str(), " a \"}\" '}' # }\n { b } ");
        assert_eq!(lx.next().unwrap().tok, Tok::Sym(';'));
        let unclosed = RawSlice::whole(0, "{ a ".into());
        let mut lx = Lexer::new(&unclosed, scope);
        lx.expect_sym('{', "").unwrap();
        assert!(lx.capture('{', '}').is_err());
    }

    #[test]
    fn errors_have_places() {
        let globals = HashMap::new();
        let env = |_: &str| None;
        let scope = Scope {
            args: &[],
            globals: &globals,
            env: &env,
        };
        let slice = RawSlice::whole(0, "a\n  \"open".into());
        let mut lx = Lexer::new(&slice, scope);
        lx.next().unwrap();
        let e = lx.next().unwrap_err();
        assert_eq!(e.span.offset, 4);
        let looped = HashMap::from([("x".to_string(), "`x`".to_string())]);
        let scope = Scope {
            args: &[],
            globals: &looped,
            env: &env,
        };
        let slice = RawSlice::whole(0, "`x`".into());
        assert!(Lexer::new(&slice, scope).next().is_err());
    }
}
