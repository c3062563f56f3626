//! What a vendor parser declares ([`Vendor`], [`Key`], [`App`]) and what it works with
//! ([`Input`], [`Out`]). See `vendors/README.md` for how to add one.
//!
//! SC4S's model, kept here: a vendor *application* belongs to one app-parser *topic*
//! (`sc4s-syslog-pgm`, `sc4s-syslog`, `cef`, ...). Within a topic the applications are tried
//! in SC4S's registration order — the path order of their `.conf` files — and the first
//! whose filter and parser both succeed wins. Each [`App`] names its SC4S file in
//! [`App::order`], so sluice tries them in the same order whatever the registry list says.
//!
//! Unlike SC4S, sluice does not run every filter: [`App::when`] names cheap tokens (a
//! PROGRAM, a substring such as `%ASA-`, a `vendor_product`) that must be present for the
//! application to have a chance, and only those applications run (`dispatch`). The parse
//! function then applies the real SC4S filter and parser; regexes live there.

use crate::message::{Format, Message, Timestamp};
use crate::time::Zone;

use super::SourceMeta;
use super::template::Template;
use super::value::{Inline, Value};

pub use super::shape::Shape;

/// One vendor family: the unit `[parse] vendors` / `SLUICE_VENDORS` switches on and off.
#[derive(Debug)]
pub struct Vendor {
    /// The family name in `[parse] vendors` (lowercase, `_`-separated, e.g. `cisco_asa`).
    /// A selector `cisco` also picks every `cisco_*` family.
    pub name: &'static str,
    /// Every metadata outcome the family's applications can choose ([`Out::key`] takes
    /// one of them; `splunk_metadata.csv` rows for them are resolved once, at build).
    pub keys: &'static [Key],
    pub apps: &'static [App],
}

/// Where a `source` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// SC4S's default when no parser sets one: `sc4s`.
    Sc4s,
    Static(&'static str),
    /// `program:<PROGRAM>` with a leading directory removed (SC4S's nix:syslog).
    Program,
}

/// One `r_set_splunk_dest_default(...)` (or `..._update_v2(...)`) outcome: the metadata a
/// vendor assigns, before `splunk_metadata.csv` overrides it.
///
/// As in SC4S, an empty vendor, product, sourcetype or index, a `None` class and a
/// [`Source::Sc4s`] source keep what an earlier key (a parent application's) set. The
/// template differs between the two SC4S calls: `r_set_splunk_dest_default` resets a
/// missing template to the default, `update_v2` ([`Key::update`]) keeps the earlier one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// `sc4s_vendor`; empty keeps the vendor set before (the applications of the `cef` and
    /// `leef` topics, whose vendor comes from the header).
    pub vendor: &'static str,
    /// `sc4s_product`; empty keeps the product set before.
    pub product: &'static str,
    /// `sc4s_class`; `None` keeps the class set before (none at first).
    pub class: Option<&'static str>,
    pub sourcetype: &'static str,
    pub index: &'static str,
    pub source: Source,
    /// `None`: SC4S's default, `t_5424_hdr_sdata_compact` for RFC 5424, else `t_hdr_msg`
    /// (for an `update` key: the earlier template).
    pub template: Option<Template>,
    /// `r_set_splunk_dest_update_v2`.
    pub update: bool,
}

impl Key {
    /// A key with SC4S's defaults for source (`sc4s`) and template.
    pub const fn new(
        vendor: &'static str,
        product: &'static str,
        sourcetype: &'static str,
        index: &'static str,
    ) -> Key {
        Key {
            vendor,
            product,
            class: None,
            sourcetype,
            index,
            source: Source::Sc4s,
            template: None,
            update: false,
        }
    }

    /// `r_set_splunk_dest_update_v2(...)`: vendor and product kept; empty sourcetype or
    /// index kept too.
    pub const fn update(sourcetype: &'static str, index: &'static str) -> Key {
        Key {
            vendor: "",
            product: "",
            class: None,
            sourcetype,
            index,
            source: Source::Sc4s,
            template: None,
            update: true,
        }
    }

    pub const fn class(mut self, class: &'static str) -> Key {
        self.class = Some(class);
        self
    }

    pub const fn source(mut self, source: &'static str) -> Key {
        self.source = Source::Static(source);
        self
    }

    pub const fn program_source(mut self) -> Key {
        self.source = Source::Program;
        self
    }

    pub const fn template(mut self, template: Template) -> Key {
        self.template = Some(template);
        self
    }
}

/// SC4S app-parser topics, in the order the source path consults them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Topic {
    /// `sc4s-almost-syslog`: messages starting with `<digits>` that are not RFC 5424, tried
    /// before the RFC 3164 header is trusted; for devices whose header is not syslog.
    AlmostSyslog,
    /// `sc4s-raw-syslog`: messages without a PRI.
    Raw,
    /// `sc4s-syslog-sdata`: RFC 5424 with an `[id@digits` SD element.
    Sdata,
    /// `sc4s-syslog-pgm`: messages with a PROGRAM.
    Pgm,
    /// `sc4s-syslog`: every message not identified yet.
    Syslog,
    /// `sc4s-network-source`: RFC messages, usually matched by the `vendor_product` a
    /// dedicated listener or `vendor_product_by_source` gave them. Runs even after another
    /// application identified the message.
    NetSource,
    /// `fallback` (built in: nix:syslog, sc4s:fallback).
    Fallback,
    /// A topic a parent application runs itself through [`Input::topic`]: `cef`, `leef`,
    /// `json`, `cisco_syslog`, ...
    Sub(&'static str),
}

/// The cheap tokens an application needs to have a chance (a necessary condition only: the
/// parse function checks the real SC4S filter).
#[derive(Clone, Copy, Debug)]
pub enum When {
    /// PROGRAM is one of these (exactly, case-sensitive).
    Program(&'static [&'static str]),
    /// PROGRAM starts with one of these.
    ProgramPrefix(&'static [&'static str]),
    /// The raw message contains one of these byte strings (case-sensitive). Tokens should
    /// be distinctive (`%ASA-`, `devid=`, `CEF:0`): every message is scanned for all of them
    /// at once, and each hit costs a call of the parse function.
    Token(&'static [&'static str]),
    /// MESSAGE starts with one of these (for short, frequent markers such as `%`, `{` or
    /// `1,` that would make the token scan report every occurrence).
    BodyPrefix(&'static [&'static str]),
    /// The listener's or `vendor_product_by_source`'s `sc4s_vendor_product` is one of
    /// these; an entry `.source.s_<ID>` means: received on the listener `<ID>` (SC4S's
    /// `tags(".source.s_<ID>")`, for ids such as `INFOBLOX` that name no vendor and product).
    NetSource(&'static [&'static str]),
    /// A cheap check of the raw message: a few byte comparisons at fixed places (after the
    /// PRI, the header's shape) or one `memchr::memmem` search. For markers a token would
    /// have to look for everywhere: short tokens starting with common bytes (` info `,
    /// ` : `) leave the token scan without a prefilter and make it walk every byte.
    Raw(fn(&[u8]) -> bool),
    /// A [`When::Raw`] check of an almost-syslog header that only runs when the message's
    /// [`Shape`] (read once per message) has one of the given bits: the check (or the parse
    /// function behind it) must be false without them. A dozen header repairs each re-read
    /// the PRI and the first bytes of every message; most of them now cost a bit test.
    Header(Shape, fn(&[u8]) -> bool),
    /// A cheap necessary condition on what the parse function reads ([`Input`], and the
    /// parent's [`Out`] in a sub-topic: the CEF header's vendor and product). It must have no
    /// effect: the dispatcher calls it before it copies [`Out`] for the candidates, so an
    /// application whose check fails costs a call and no copy. For applications SC4S runs on
    /// every message of a topic (no token, PROGRAM or prefix of their own).
    Check(Check),
    /// Every message that reaches the topic. For sub-topics and the built-in fallbacks; in
    /// the main topics it costs every message a call.
    Always,
}

/// A [`When::Check`]: `true` when the application could take the message.
pub type Check = for<'m> fn(&Input<'m, '_>, &Out<'m>) -> bool;

/// The parse function of an application: SC4S's filter and parser. Returns `false` (having
/// changed nothing it cares about) when the message is not this application's; the next
/// candidate is then tried with a fresh copy of [`Out`].
pub type Parse = for<'m> fn(&Input<'m, '_>, &mut Out<'m>) -> bool;

/// One SC4S `application name[topic] { filter {...}; parser {...}; }`.
#[derive(Debug)]
pub struct App {
    /// SC4S's application name (tagged `.app.<name>` in `sc4s_tags`).
    pub name: &'static str,
    pub topic: Topic,
    /// The SC4S file that registers it, relative to `conf.d/conflib/` (addons are copied
    /// there), e.g. `cisco/app-cisco-cisco_asa.conf`. Applications of one topic are tried in
    /// this order; several in one file keep their order in [`Vendor::apps`].
    pub order: &'static str,
    pub when: When,
    pub parse: Parse,
}

/// The vendor/product a listener or `vendor_product_by_source` assigned (SC4S's
/// `.netsource.*` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetSource<'t> {
    pub vendor: &'t str,
    pub product: &'t str,
    /// `sc4s_vendor_product`: `<vendor>_<product>`, or the csv's own value.
    pub vendor_product: &'t str,
}

impl NetSource<'_> {
    /// Whether the listener or `vendor_product_by_source` named this source: SC4S's netsource
    /// filters accept either `sc4s_vendor_product` (`vendor_product`) or the pair of fields.
    pub fn names(&self, vendor_product: &str, vendor: &str, product: &str) -> bool {
        self.vendor_product == vendor_product || (self.vendor == vendor && self.product == product)
    }
}

/// What an application sees: the parsed message after the header repairs and after what
/// earlier applications (an almost-syslog repair, a parent topic) changed.
#[derive(Clone, Copy)]
pub struct Input<'m, 'a> {
    pub msg: &'a Message<'m>,
    pub src: &'a SourceMeta<'a>,
    /// PROGRAM (`None` when absent, empty, or removed by a repair).
    pub program: Option<&'m [u8]>,
    pub pid: Option<&'m [u8]>,
    /// MESSAGE: the text after the program header (the whole text when a repair folded
    /// the header back in).
    pub body: &'m [u8],
    /// HOST from the header (`None`: the sender's IP will be used).
    pub host: Option<&'m [u8]>,
    pub netsource: NetSource<'a>,
    /// "Now", for stamps without a year.
    pub now_unix_secs: i64,
    /// `SC4S_DEFAULT_TIMEZONE`.
    pub zone: &'a Zone,
    /// The SC4S settings vendor parsers read (`SC4S_OPTION_*`, ...).
    pub options: &'a super::options::VendorOptions,
    pub(crate) engine: &'m dyn SubTopics,
    /// Where local applications keep their values (`None`: they do not run).
    pub(crate) arena: Option<&'m bumpalo::Bump>,
    /// `splunk_metadata.csv`, for local applications' `p_add_context_splunk`.
    pub(crate) metadata: &'a super::metadata::Metadata,
    /// The receiving host's name (`$LOGHOST` in local templates).
    pub(crate) loghost: &'a str,
}

/// Runs a sub-topic's applications on a message: the dispatch engine, seen from the
/// registry (which stays a leaf of types and does not import the engine).
pub(crate) trait SubTopics: Sync {
    /// `true` when an application of sub-topic `name` took the message.
    fn run_sub<'m>(&'m self, name: &str, input: &Input<'m, '_>, out: &mut Out<'m>) -> bool;
}

impl std::fmt::Debug for Input<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("program", &self.program.map(String::from_utf8_lossy))
            .field("body", &String::from_utf8_lossy(self.body))
            .field("host", &self.host.map(String::from_utf8_lossy))
            .finish_non_exhaustive()
    }
}

impl<'m> Input<'m, '_> {
    /// Runs the applications of a sub-topic (`cef`, `leef`, `cisco_syslog`, ...) on this
    /// message with `out` as it stands; `true` when one of them took it (its changes are
    /// in `out`). A disabled vendor's applications are not in the topic.
    pub fn topic(&self, name: &'static str, out: &mut Out<'m>) -> bool {
        self.engine.run_sub(name, self, out)
    }

    /// The RFC 3164 / 5424 wire format.
    pub fn format(&self) -> Format {
        self.msg.format
    }

    /// The current body: the one an earlier application set, or [`Input::body`].
    pub fn body_in<'x>(&'x self, out: &'x Out<'m>) -> &'x [u8] {
        match &out.message {
            Some(Value::Bytes(b)) => b,
            _ => self.body,
        }
    }
}

/// HOST as an application changed it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostEdit<'m, 't> {
    #[default]
    Keep,
    /// The sender's IP (`$SOURCEIP`).
    SourceIp,
    Set(Value<'m, 't>),
}

/// The event time as an application changed it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeEdit {
    /// The header's stamp (the receive time when it has none).
    #[default]
    Keep,
    Stamp(Timestamp),
    /// The receive time (`R_UNIXTIME`).
    Recv,
}

/// How many extra indexed fields one event can carry from its vendor parser.
pub const MAX_FIELDS: usize = 4;

/// Extra indexed fields (`fields.<name>`), in the order they were set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fields<'m, 't> {
    len: u8,
    items: [Option<(&'t str, Value<'m, 't>)>; MAX_FIELDS],
}

impl<'m, 't> Fields<'m, 't> {
    /// Sets `name` (replacing an earlier value). Returns `false` when all slots are taken,
    /// which is a bug in the vendor parser (it declares at most [`MAX_FIELDS`]).
    pub fn set(&mut self, name: &'t str, value: Value<'m, 't>) -> bool {
        for (n, v) in self.items.iter_mut().flatten() {
            if *n == name {
                *v = value;
                return true;
            }
        }
        match self.items.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = Some((name, value));
                self.len += 1;
                true
            }
            None => false,
        }
    }

    pub fn get(&self, name: &str) -> Option<&Value<'m, 't>> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(&'t str, Value<'m, 't>)> {
        self.items.iter().flatten()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// How many name-value pairs a parent application can hand to its sub-topic.
pub const MAX_NV: usize = 10;

/// Name-value pairs a parent application hands to the applications of its sub-topic (SC4S's
/// `.metadata.cef.device_vendor`, `.values.mnemonic`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NameValues<'m> {
    items: [Option<(&'static str, &'m [u8])>; MAX_NV],
}

impl<'m> NameValues<'m> {
    /// Sets `name`; `false` when full (a bug in the parent: it declares at most [`MAX_NV`]).
    pub fn set(&mut self, name: &'static str, value: &'m [u8]) -> bool {
        for slot in self.items.iter_mut() {
            match slot {
                Some((n, v)) if *n == name => {
                    *v = value;
                    return true;
                }
                None => {
                    *slot = Some((name, value));
                    return true;
                }
                Some(_) => {}
            }
        }
        false
    }

    pub fn get(&self, name: &str) -> Option<&'m [u8]> {
        self.items
            .iter()
            .flatten()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// Every pair, in the order set.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &'m [u8])> + '_ {
        self.items.iter().flatten().copied()
    }

    /// `get(name) == Some(value)`.
    pub fn is(&self, name: &str, value: &[u8]) -> bool {
        self.get(name) == Some(value)
    }

    /// `get(name)` contains `needle` (SC4S's unanchored `match("literal" value(...))`). For
    /// the short header values here a `memchr` of the first byte and a compare beat building
    /// a `memmem` searcher per call.
    pub fn contains(&self, name: &str, needle: &[u8]) -> bool {
        self.get(name).is_some_and(|v| contains_bytes(v, needle))
    }
}

/// `needle` occurs in `hay`.
pub(crate) fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let Some(last_start) = hay.len().checked_sub(needle.len()) else {
        return false;
    };
    memchr::memchr_iter(first, &hay[..=last_start]).any(|i| &hay[i + 1..i + needle.len()] == rest)
}

/// The values a vendor parsed, for `t_json_values` / `t_kv_values`: the text they were
/// parsed from, re-read by the encoder, so nothing is stored per value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Values<'m> {
    pub text: &'m [u8],
    pub syntax: ValuesSyntax,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValuesSyntax {
    /// A JSON object.
    Json,
    /// `key=value` pairs separated by `pair`, values optionally double-quoted (see
    /// [`super::kv`]).
    Kv { pair: u8 },
    /// syslog-ng `kv-parser()` pairs with its own value and (one-byte) pair separators (see
    /// [`super::kvscan`]).
    Scanner { value: u8, pair: u8 },
    /// A CEF record (`CEF:0|vendor|...|extension`, the text SC4S's CEF parser split): the
    /// header columns as `.metadata.cef.*`, the extension as SC4S's `cef_kv` reads it.
    Cef,
    /// Stealthbits StealthINTERCEPT alerts: space-separated pairs whose `AlertText=` runs to
    /// the end and holds `Key: value; ...` details (SC4S's `parser_stealthbits.py`).
    StealthbitsAlerts,
    /// An XML document, read as syslog-ng's `xml()` parser reads it ([`super::xml`]);
    /// rendered with the message's STRUCTURED-DATA, as SC4S's `t_json_values` includes
    /// `.SDATA.*`.
    Xml,
    /// BeyondTrust SRA: `<siteid>:<seq>:<parts>:` then `;`-separated pairs read as
    /// syslog-ng's kv-parser reads them ([`super::kv::syslog_ng_pairs`]); rendered with
    /// `siteid`, `seq` and `sc4s.countOfParts` as SC4S's parser sets them.
    Sra,
}

/// A rewrite of MESSAGE that removes parts of it, applied while the event is written: the
/// message is borrowed, so such an edit is described here rather than performed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MessageFilter {
    #[default]
    None,
    /// SC4S's `subst(" [^ =]+\=\-", "", value("MESSAGE"), flags(global))` (Forcepoint):
    /// every space, key and `=-` removed, matches taken left to right without overlap (a
    /// value that only starts with `-` loses the `-`, as with the regex).
    DropDashValues,
}

impl MessageFilter {
    /// The pieces of `text` that remain, in order.
    pub fn pieces(self, text: &[u8]) -> MessagePieces<'_> {
        MessagePieces {
            filter: self,
            text,
            at: 0,
        }
    }

    /// The text as filtered is empty.
    pub fn is_empty(self, text: &[u8]) -> bool {
        self.pieces(text).all(<[u8]>::is_empty)
    }
}

/// See [`MessageFilter::pieces`].
#[derive(Clone, Debug)]
pub struct MessagePieces<'a> {
    filter: MessageFilter,
    text: &'a [u8],
    at: usize,
}

impl<'a> Iterator for MessagePieces<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let t = self.text;
        if self.at > t.len() {
            return None;
        }
        let from = self.at;
        if self.filter == MessageFilter::None {
            self.at = t.len() + 1;
            return Some(&t[from..]);
        }
        let mut i = from;
        while let Some(sp) = memchr::memchr(b' ', &t[i..]) {
            let start = i + sp;
            let key = t[start + 1..]
                .iter()
                .take_while(|&&b| b != b' ' && b != b'=')
                .count();
            let eq = start + 1 + key;
            if key > 0 && t.get(eq) == Some(&b'=') && t.get(eq + 1) == Some(&b'-') {
                self.at = eq + 2;
                return Some(&t[from..start]);
            }
            i = start + 1;
        }
        self.at = t.len() + 1;
        Some(&t[from..])
    }
}

/// What applications set. Everything starts as "keep"; the last application that took the
/// message wins field by field, as consecutive SC4S rewrites do.
#[derive(Clone, Copy, Debug, Default)]
pub struct Out<'m> {
    /// The vendor running when [`Out::key`] was last called, and the key.
    pub(crate) key: Option<(u16, &'static Key)>,
    /// The vendor whose application runs now (set by the dispatcher).
    pub(crate) vendor_idx: u16,
    /// The application that took the message last.
    pub(crate) app: Option<&'static str>,
    pub host: HostEdit<'m, 'static>,
    pub time: TimeEdit,
    /// `Some(None)` unsets PROGRAM.
    pub program: Option<Option<&'m [u8]>>,
    pub pid: Option<Option<&'m [u8]>>,
    /// MESSAGE replaced.
    pub message: Option<Value<'m, 'static>>,
    pub sourcetype: Option<Value<'m, 'static>>,
    pub index: Option<Value<'m, 'static>>,
    pub source: Option<Value<'m, 'static>>,
    pub vendor: Option<Value<'m, 'static>>,
    pub product: Option<Value<'m, 'static>>,
    pub class: Option<Value<'m, 'static>>,
    pub template: Option<Template>,
    pub fields: Fields<'m, 'static>,
    pub values: Option<Values<'m>>,
    /// For a sub-topic's applications.
    pub nv: NameValues<'m>,
    /// The wire format an almost-syslog or raw application parsed the message as
    /// (`Rfc3164`: sluice's RFC 3164 parse of it stands; otherwise it stays raw).
    pub format: Option<Format>,
    /// A removal applied to MESSAGE as the event is written ([`MessageFilter`]).
    pub message_filter: MessageFilter,
    /// SC4S's `source_identified` tag: the later topics (sdata, pgm, syslog, fallback) are
    /// skipped. Set by the dispatcher for the main topics; almost-syslog and raw
    /// applications set it themselves when SC4S's do.
    pub identified: bool,
    /// What local applications changed beyond these fields (`.values.*`, `fields.*`,
    /// tags, ...), in the per-message arena.
    pub(crate) local: Option<&'m super::local::Overlay<'m>>,
}

impl<'m> Out<'m> {
    /// Assigns `k`, one of the running vendor's [`Vendor::keys`]: SC4S's
    /// `r_set_splunk_dest_default` (or `update_v2` for a key without vendor/product). The
    /// dynamic sourcetype/index/source/template set before are dropped, as the SC4S call
    /// overwrites them; vendor/product/class are dropped where the key sets them.
    pub fn key(&mut self, k: &'static Key) {
        // What the key leaves as it was is carried over from the earlier key.
        let prev = self.key.map(|(_, p)| p);
        let keep = |mine: Option<Value<'m, 'static>>, theirs: Option<&'static str>| {
            mine.or(theirs.filter(|s| !s.is_empty()).map(Value::Static))
        };
        self.sourcetype = if k.sourcetype.is_empty() {
            keep(self.sourcetype, prev.map(|p| p.sourcetype))
        } else {
            None
        };
        self.index = if k.index.is_empty() {
            self.index.or(prev
                .map(|p| p.index)
                .filter(|i| !i.is_empty())
                .map(Value::Static))
        } else {
            None
        };
        self.source = match k.source {
            Source::Sc4s => self.source.or(match prev.map(|p| p.source) {
                Some(Source::Static(s)) => Some(Value::Static(s)),
                _ => None,
            }),
            _ => None,
        };
        self.template = if k.update && k.template.is_none() {
            self.template.or(prev.and_then(|p| p.template))
        } else {
            None
        };
        self.vendor = if k.vendor.is_empty() {
            keep(self.vendor, prev.map(|p| p.vendor))
        } else {
            None
        };
        self.product = if k.product.is_empty() {
            keep(self.product, prev.map(|p| p.product))
        } else {
            None
        };
        self.class = if k.class.is_none() {
            keep(self.class, prev.and_then(|p| p.class))
        } else {
            None
        };
        self.key = Some((self.vendor_idx, k));
    }

    /// HOST := `host`.
    pub fn host(&mut self, host: &'m [u8]) {
        self.host = HostEdit::Set(Value::Bytes(host));
    }

    /// The event time.
    pub fn time(&mut self, ts: Timestamp) {
        self.time = TimeEdit::Stamp(ts);
    }

    /// MESSAGE := `text`.
    pub fn message(&mut self, text: &'m [u8]) {
        self.message = Some(Value::Bytes(text));
    }

    /// A sourcetype built at classification time (`vmware:esxlog:` + PROGRAM).
    pub fn sourcetype_concat(&mut self, head: &'static str, tail: &'m [u8]) {
        self.sourcetype = Some(Value::Concat(head, tail));
    }

    /// A short formatted sourcetype; `false` when it does not fit inline (the key's stays).
    pub fn sourcetype_inline(&mut self, parts: &[&[u8]]) -> bool {
        match Inline::concat(parts) {
            Some(i) => {
                self.sourcetype = Some(Value::Inline(i));
                true
            }
            None => false,
        }
    }

    /// An extra indexed field. Panics in debug builds when more than [`MAX_FIELDS`] are set
    /// (a vendor bug); release builds keep the first ones.
    pub fn field(&mut self, name: &'static str, value: Value<'m, 'static>) {
        let ok = self.fields.set(name, value);
        debug_assert!(ok, "more than {MAX_FIELDS} indexed fields set for {name}");
    }
}
