//! What the loader compiles the dialect into, and what the evaluator runs: templates,
//! filters and statements, with names interned and patterns compiled.

use std::collections::HashSet;

use crate::time::Zone;

use super::names::{NameId, Reference};
use super::re::Re;

pub(crate) type FilterId = u32;
pub(crate) type ChainId = u32;
pub(crate) type TemplateId = u32;

/// A compiled template: literal text, references and template functions.
#[derive(Debug, Default)]
pub(crate) struct Tmpl {
    pub parts: Vec<Part>,
}

impl Tmpl {
    pub fn literal(bytes: &[u8]) -> Tmpl {
        Tmpl {
            parts: if bytes.is_empty() {
                Vec::new()
            } else {
                vec![Part::Lit(bytes.into())]
            },
        }
    }

    /// The text when the template is constant.
    pub fn as_literal(&self) -> Option<&[u8]> {
        match self.parts.as_slice() {
            [] => Some(b""),
            [Part::Lit(l)] => Some(l),
            _ => None,
        }
    }

    /// The one reference the template is made of (`"${HOST}"`), if it is that.
    pub fn as_reference(&self) -> Option<Reference> {
        match self.parts.as_slice() {
            [Part::Ref { r, default: None }] => Some(*r),
            _ => None,
        }
    }
}

#[derive(Debug)]
pub(crate) enum Part {
    Lit(Box<[u8]>),
    Ref {
        r: Reference,
        /// `${NAME:-default}`.
        default: Option<Box<[u8]>>,
    },
    Func(Box<Func>),
}

/// The template functions sluice implements.
#[derive(Debug)]
pub(crate) enum Func {
    If(Filter, Tmpl, Tmpl),
    Lowercase(Vec<Tmpl>),
    Uppercase(Vec<Tmpl>),
    /// `$(substr text start [length])`.
    Substr(Tmpl, Tmpl, Option<Tmpl>),
    Strip(Vec<Tmpl>),
    Echo(Vec<Tmpl>),
    Length(Vec<Tmpl>),
    /// `$(sanitize [--ctrl-chars] [--invalid-chars X] [--replacement Y] args)`.
    Sanitize {
        ctrl: bool,
        invalid: Vec<u8>,
        replacement: u8,
        args: Vec<Tmpl>,
    },
    /// `$(replace-delimiter old new text)`.
    ReplaceDelimiter(Tmpl, Tmpl, Tmpl),
    /// `$(padding text width [pad])`.
    Padding(Tmpl, usize, Vec<u8>),
    FormatJson(FormatSpec),
    FormatWelf(FormatSpec),
    /// `$(template NAME)`.
    Template(TemplateRef),
    /// `$(implode sep list...)`.
    Implode(Tmpl, Vec<Tmpl>),
    /// `$(explode sep text...)`: a list.
    Explode(Tmpl, Vec<Tmpl>),
    List(ListOp, Vec<Tmpl>),
    Arith(ArithOp, Tmpl, Tmpl),
    /// `$(round n [digits])`, `$(ceil n)`, `$(floor n)`.
    Round(Tmpl, u8),
    Ceil(Tmpl),
    Floor(Tmpl),
    /// `$(ipv4-to-int addr...)`.
    Ipv4ToInt(Vec<Tmpl>),
    /// `$(basename path)`, `$(dirname path)`.
    Basename(Tmpl),
    Dirname(Tmpl),
    /// `$(url-encode ...)` / `$(url-decode ...)`.
    UrlEncode(Vec<Tmpl>),
    UrlDecode(Vec<Tmpl>),
    /// `$(base64-encode ...)`.
    Base64Encode(Vec<Tmpl>),
    /// `$(indent-multi-line ...)`.
    IndentMultiLine(Vec<Tmpl>),
}

#[derive(Debug)]
pub(crate) enum TemplateRef {
    Static(TemplateId),
    /// A name computed per message (`$(template ${.splunk.sc4s_template:-t_hdr_msg})`).
    Dynamic(Tmpl),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListOp {
    Concat,
    Head,
    Tail,
    Last,
    Count,
    /// `$(list-nth N ...)`.
    Nth(i64),
    /// `$(list-slice FROM:TO ...)`.
    Slice(Option<i64>, Option<i64>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// `$(format-json ...)` / `$(format-welf ...)`: which name-value pairs, renamed how.
#[derive(Debug, Default)]
pub(crate) struct FormatSpec {
    /// `--scope` sets, as [`Scope`] bits.
    pub scopes: u32,
    /// `--key` globs.
    pub keys: Vec<Glob>,
    /// `--exclude` globs.
    pub excludes: Vec<Glob>,
    /// `--pair name=value` and `name=value`.
    pub pairs: Vec<(String, Tmpl)>,
    pub shift_levels: usize,
    pub add_prefix: Option<String>,
    pub replace_prefix: Vec<(String, String)>,
    pub omit_empty: bool,
    pub leave_initial_dot: bool,
}

/// `--scope` names of value-pairs.
pub(crate) mod scope {
    pub const NV_PAIRS: u32 = 1;
    pub const DOT_NV_PAIRS: u32 = 2;
    pub const RFC3164: u32 = 4;
    pub const RFC5424: u32 = 8;
    pub const SELECTED_MACROS: u32 = 16;
    pub const SDATA: u32 = 32;
    pub const EVERYTHING: u32 = 64;
}

/// A shell-style glob over names (`*`, `?`, `[...]`).
#[derive(Debug)]
pub(crate) struct Glob {
    re: regex::Regex,
}

impl Glob {
    pub fn new(text: &str) -> Glob {
        let mut r = String::from("^");
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' => r.push_str(".*"),
                '?' => r.push('.'),
                '[' => {
                    let mut class = String::new();
                    let mut closed = false;
                    for d in chars.by_ref() {
                        if d == ']' {
                            closed = true;
                            break;
                        }
                        class.push(d);
                    }
                    if closed {
                        r.push('[');
                        if let Some(rest) = class.strip_prefix('!') {
                            r.push('^');
                            r.push_str(&regex::escape(rest).replace("\\-", "-"));
                        } else {
                            r.push_str(&regex::escape(&class).replace("\\-", "-"));
                        }
                        r.push(']');
                    } else {
                        r.push_str(&regex::escape(&format!("[{class}")));
                    }
                }
                c => r.push_str(&regex::escape(&c.to_string())),
            }
        }
        r.push('$');
        let re = regex::Regex::new(&r).unwrap_or_else(|_| {
            regex::Regex::new(&format!("^{}$", regex::escape(text))).expect("an escaped literal")
        });
        Glob { re }
    }

    pub fn matches(&self, name: &str) -> bool {
        self.re.is_match(name)
    }
}

/// What a filter function reads.
#[derive(Debug)]
pub(crate) enum Subject {
    Ref(Reference),
    Tmpl(Tmpl),
    /// `match()` without `value()`: MSGHDR followed by MESSAGE.
    HdrMsg,
}

#[derive(Debug)]
pub(crate) enum Pattern {
    Exact(Box<[u8]>, bool),
    Prefix(Box<[u8]>, bool),
    Substring(Box<[u8]>, bool),
    /// `type(pcre)` (the default), and `type(glob)` turned into one.
    Regex {
        re: Re,
        store: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// Whether `l op r` holds, as text or (`numeric`) as numbers.
    pub(crate) fn holds(self, l: &[u8], numeric: bool, r: &[u8]) -> bool {
        let ord = if numeric {
            let (a, b) = (number(l), number(r));
            a.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal)
        } else if l.is_empty() || r.is_empty() {
            // Decided by the lengths, without a `memcmp` of zero bytes: the empty side of
            // a literal `""` is a dangling pointer, and glibc's AVX-512 `memcmp` makes a
            // fully masked load from it, a fault-suppression assist that cost this
            // comparison about 60 ns on this machine (`perf annotate`: 71 % of `memcmp`'s
            // samples on that one load).
            l.len().cmp(&r.len())
        } else {
            l.cmp(r)
        };
        match self {
            CmpOp::Eq => ord.is_eq(),
            CmpOp::Ne => ord.is_ne(),
            CmpOp::Lt => ord.is_lt(),
            CmpOp::Le => ord.is_le(),
            CmpOp::Gt => ord.is_gt(),
            CmpOp::Ge => ord.is_ge(),
        }
    }
}

/// syslog-ng's numeric comparison: the leading number of the text (0 when none).
pub(crate) fn number(v: &[u8]) -> f64 {
    let s = std::str::from_utf8(v).unwrap_or("").trim();
    let end = s
        .char_indices()
        .take_while(|(i, c)| {
            c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+'))
        })
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    s[..end].parse::<f64>().unwrap_or(0.0)
}

#[derive(Debug)]
pub(crate) enum Filter {
    Const(bool),
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
    Match {
        subject: Subject,
        pattern: Pattern,
    },
    /// `netmask()` / `netmask6()` on the sender's address (IPv4 as mapped IPv6).
    Netmask {
        net: u128,
        mask: u128,
    },
    /// Bit per facility (0..=23).
    Facility(u32),
    /// Bit per severity (0 emerg .. 7 debug).
    Level(u8),
    Tag(Box<[u8]>),
    InList {
        subject: Subject,
        set: HashSet<Box<[u8]>>,
    },
    /// `"a" eq "b"` (text) or `"a" == "b"` (numbers).
    Compare {
        left: Tmpl,
        op: CmpOp,
        numeric: bool,
        right: Tmpl,
    },
    Named(FilterId),
}

/// How a csv-parser treats quotes and escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CsvEscape {
    None,
    Backslash,
    DoubleChar,
}

#[derive(Debug)]
pub(crate) struct CsvParser {
    pub template: Tmpl,
    pub columns: Vec<NameId>,
    pub chars: Vec<u8>,
    pub strings: Vec<Box<[u8]>>,
    /// (open, close) quote pairs.
    pub quotes: Vec<(u8, u8)>,
    pub null: Option<Box<[u8]>>,
    pub escape: CsvEscape,
    pub greedy: bool,
    pub strip_whitespace: bool,
    pub drop_invalid: bool,
}

#[derive(Debug)]
pub(crate) struct KvParser {
    pub template: Tmpl,
    pub prefix: String,
    pub value_separator: u8,
    /// `None`: whitespace (and a `, ` or `; ` after a value).
    pub pair_separator: Option<Box<[u8]>>,
    pub stray_words: Option<NameId>,
    /// The configuration's names under `prefix`, as (the rest of the name, its id), filled
    /// once everything is compiled; `None` (an empty prefix): ask [`super::names::Names`].
    /// Most keys a kv-parser finds are no configured name, and a look at these few costs
    /// less than building each key's full name and looking it up.
    pub known: Option<Vec<(Box<[u8]>, NameId)>>,
}

impl KvParser {
    /// Fills [`KvParser::known`] from the final set of names.
    pub(crate) fn index_names(&mut self, names: &super::names::Names) {
        self.known = (!self.prefix.is_empty()).then(|| names.under(&self.prefix));
    }
}

/// Calls `f` on every statement of `stmts`, the branches of `if` included.
pub(crate) fn for_each_stmt_mut(stmts: &mut [Stmt], f: &mut impl FnMut(&mut Stmt)) {
    for s in stmts {
        if let Stmt::If { branches, .. } = s {
            for b in branches {
                for_each_stmt_mut(b, f);
            }
        }
        f(s);
    }
}

#[derive(Debug)]
pub(crate) struct RegexpParser {
    pub template: Tmpl,
    /// Each pattern with the name each of its groups is stored under.
    pub patterns: Vec<(Re, Vec<Option<NameId>>)>,
}

#[derive(Debug)]
pub(crate) struct DateParser {
    pub template: Tmpl,
    pub formats: Vec<String>,
    pub zone: Option<Zone>,
    pub guess_timezone: bool,
}

#[derive(Debug)]
pub(crate) struct JsonParser {
    pub template: Tmpl,
    pub prefix: String,
    /// `extract-prefix("a.b")`: only that member.
    pub extract: Option<String>,
}

#[derive(Debug)]
pub(crate) struct SyslogParser {
    pub template: Tmpl,
    /// `flags(syslog-protocol)`: RFC 5424 only.
    pub rfc5424_only: bool,
    /// `flags(no-header)`: only the PRI is read; the rest is MESSAGE.
    pub no_header: bool,
    pub guess_timezone: bool,
}

#[derive(Debug)]
pub(crate) enum SubstPattern {
    Literal(Box<[u8]>, bool),
    Regex(Re),
}

#[derive(Debug)]
pub(crate) enum Stmt {
    /// A filter: the path ends when it is false.
    Filter(Filter),
    /// `if`/`elif`/`else`: each branch its statements (a condition is its first); the first
    /// branch whose statements all pass wins. Without `else` an unmatched `if` passes.
    If {
        branches: Vec<Vec<Stmt>>,
        has_else: bool,
    },
    /// A named parser or rewrite, compiled once.
    Chain(ChainId),
    Set {
        value: Tmpl,
        target: NameId,
    },
    Unset {
        targets: Vec<NameId>,
    },
    GroupUnset {
        globs: Vec<Glob>,
    },
    GroupSet {
        value: Tmpl,
        globs: Vec<Glob>,
    },
    Rename {
        from: NameId,
        to: NameId,
    },
    Subst {
        pattern: SubstPattern,
        replacement: Tmpl,
        target: NameId,
        global: bool,
    },
    SetTag(Tmpl),
    ClearTag(Tmpl),
    /// `guess-time-zone()`.
    GuessTimeZone,
    /// `fix-time-zone("zone")`: the stamp's wall-clock time read in that zone.
    FixTimeZone(Tmpl),
    /// `set-time-zone("zone")`: the stamp shown in that zone.
    SetTimeZone(Tmpl),
    SetPri(Tmpl),
    SetFacility(Tmpl),
    SetSeverity(Tmpl),
    Regexp(RegexpParser),
    Kv(KvParser),
    Csv(CsvParser),
    Date(DateParser),
    Json(JsonParser),
    Syslog(SyslogParser),
    /// `p_add_context_splunk`: `splunk_metadata.csv` for the current vendor/product/class.
    SplunkMetadata,
}

/// The contexts (app-parser topics) sluice evaluates local applications in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    AlmostSyslog,
    Raw,
    /// `sc4s-vps`: vendor_product_by_source.
    Vps,
    Sdata,
    Pgm,
    Syslog,
    NetSource,
    Fallback,
    PostFilter,
    FinalFilter,
    /// A sub-topic a built-in parent runs: `cef`, `leef`, `json`, `cisco_syslog`.
    Sub(String),
    /// `sc4s-lp-dest-select-<destination>`.
    Select(String),
    /// `sc4s-lp-dest-select-drop-<destination>`.
    SelectDrop(String),
}

impl Context {
    /// How many contexts have no name of their own ([`slot`](Self::slot)).
    pub const SLOTS: usize = 10;

    /// A fixed index for each context that has no name of its own; `None` for the named
    /// ones (sub-topics, destination selectors).
    #[inline(always)]
    pub fn slot(&self) -> Option<usize> {
        Some(match self {
            Context::AlmostSyslog => 0,
            Context::Raw => 1,
            Context::Vps => 2,
            Context::Sdata => 3,
            Context::Pgm => 4,
            Context::Syslog => 5,
            Context::NetSource => 6,
            Context::Fallback => 7,
            Context::PostFilter => 8,
            Context::FinalFilter => 9,
            Context::Sub(_) | Context::Select(_) | Context::SelectDrop(_) => return None,
        })
    }

    /// The context a topic name stands for; `Err` names why sluice cannot run it.
    pub fn parse(topic: &str) -> Result<Context, String> {
        Ok(match topic {
            "sc4s-almost-syslog" => Context::AlmostSyslog,
            "sc4s-raw-syslog" => Context::Raw,
            "sc4s-vps" => Context::Vps,
            "sc4s-syslog-sdata" => Context::Sdata,
            "sc4s-syslog-pgm" => Context::Pgm,
            "sc4s-syslog" => Context::Syslog,
            "sc4s-network-source" => Context::NetSource,
            "fallback" => Context::Fallback,
            "sc4s-postfilter" => Context::PostFilter,
            "sc4s-finalfilter" => Context::FinalFilter,
            "cef" | "leef" | "json" | "cisco_syslog" => Context::Sub(topic.to_owned()),
            t => {
                if let Some(d) = t.strip_prefix("sc4s-lp-dest-select-drop-") {
                    Context::SelectDrop(d.to_owned())
                } else if let Some(d) = t.strip_prefix("sc4s-lp-dest-select-") {
                    Context::Select(d.to_owned())
                } else if t.starts_with("sc4s-lp-dest-format-") {
                    return Err(format!(
                        "context {t} (a destination's own event format) is not supported: sluice \
                         formats an event once for every destination"
                    ));
                } else {
                    return Err(format!(
                        "context {t} is not one SC4S evaluates (sc4s-vps, sc4s-almost-syslog, \
                         sc4s-raw-syslog, sc4s-syslog-sdata, sc4s-syslog-pgm, sc4s-syslog, \
                         sc4s-network-source, fallback, sc4s-postfilter, sc4s-finalfilter, cef, \
                         leef, json, cisco_syslog, sc4s-lp-dest-select-<destination>)"
                    ));
                }
            }
        })
    }

    /// The topic name.
    pub fn topic(&self) -> String {
        match self {
            Context::AlmostSyslog => "sc4s-almost-syslog".into(),
            Context::Raw => "sc4s-raw-syslog".into(),
            Context::Vps => "sc4s-vps".into(),
            Context::Sdata => "sc4s-syslog-sdata".into(),
            Context::Pgm => "sc4s-syslog-pgm".into(),
            Context::Syslog => "sc4s-syslog".into(),
            Context::NetSource => "sc4s-network-source".into(),
            Context::Fallback => "fallback".into(),
            Context::PostFilter => "sc4s-postfilter".into(),
            Context::FinalFilter => "sc4s-finalfilter".into(),
            Context::Sub(s) => s.clone(),
            Context::Select(d) => format!("sc4s-lp-dest-select-{d}"),
            Context::SelectDrop(d) => format!("sc4s-lp-dest-select-drop-{d}"),
        }
    }
}
