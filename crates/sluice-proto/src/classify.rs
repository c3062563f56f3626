//! SC4S classification: which Splunk metadata and event template a parsed message gets.
//!
//! [`classify`] is a pure function of the parsed [`Message`], where it came from
//! ([`SourceMeta`]) and the [`Tables`] loaded at start. It reproduces what SC4S 3.45 does for
//! a message that no vendor parser claims (sc4s notes §b "Default metadata" and §d; SC4S
//! files named below), in the same order:
//!
//! 1. **Header repairs, RFC 3164 only** (SC4S `sources/source_syslog/plugin.jinja`).
//!    * A HOST with a byte outside `[a-zA-Z0-9_\-.]` (and not of the form `slot<digits>/...`)
//!      is not a hostname: SC4S sets `MSG = "${HOST} ${MSGHDR}${MESSAGE}"`, unsets
//!      PROGRAM, PID and LEGACY_MSGHDR and uses the sender's IP as HOST. Here this is
//!      [`Rewrite::InvalidHost`]; the message itself is not modified (it borrows the receive
//!      buffer), the encoder renders the rewritten fields (see `hec`).
//!    * Otherwise a PROGRAM that SC4S's `fix-invalid-program` topic rejects — starts with
//!      `--` (`...-dashdash.conf`), starts with 9+ digits (`...-epoch.conf`, an epoch stamp),
//!      contains a dotted IPv4 address (`...-ipv4.conf`, same regex semantics), or has a
//!      byte outside `[a-zA-Z0-9-_/().]` (`...-z_bsdconvention.conf`) — is folded back into
//!      the message: `MSG = "${MSGHDR}${MESSAGE}"`, PROGRAM/PID/LEGACY_MSGHDR unset
//!      ([`Rewrite::InvalidProgram`]). The fifth rule of that topic (`MSGHDR` differs from
//!      `LEGACY_MSGHDR`) cannot fire here: the encoder's MSGHDR *is* the original header
//!      text.
//! 2. **Fallback applications** (topic `fallback`, `conflib/fallback/`), first match wins:
//!    * `app-fallback-netsource`: the listener id names a vendor and product
//!      (`SC4S_LISTEN_CISCO_ASA_UDP_PORT` → id `CISCO_ASA` → `cisco`/`asa`; registered with
//!      [`Tables::add_listener`]) and the message is RFC 5424, or RFC 3164 with a non-empty
//!      PROGRAM and MESSAGE: `nix:syslog`/`osnix`, vendor/product from the id, class
//!      `nix_syslog`, source `program:<PROGRAM>`.
//!    * `app-fallback-nix_syslog`: same condition without a vendor: `nix:syslog`/`osnix`,
//!      vendor `nix`, product `syslog`, no class, source `program:<PROGRAM>`.
//!    * `app-fallbackz-lastchance`: everything else (RFC 3164 without PROGRAM or with an
//!      empty MESSAGE, after the repairs above; unparsed input): `sc4s:fallback`/`main`,
//!      source `sc4s`, vendor `splunk`, product `sc4s`, class `fallback`, template
//!      [`Template::FallbackKv`].
//!
//!    `program:<PROGRAM>` drops a leading directory path exactly like SC4S's
//!    `subst('^\/(?:[^\/]+\/)+', "")`: `/usr/sbin/sshd` → `sshd`, while `sshd`, `/sshd`
//!    and `usr/bin/x` stay as they are. An RFC 5424 message without APP-NAME gets
//!    `program:` (empty), as in SC4S.
//! 3. **Template**: RFC 5424 → [`Template::Rfc5424Compact`], otherwise
//!    [`Template::HdrMsg`] (SC4S `r_set_splunk_dest_default`); lastchance →
//!    [`Template::FallbackKv`].
//! 4. **`SC4S_SET_SOURCE_AS_SC4S`** ([`Tables::set_source_as_sc4s`]) forces source `sc4s`.
//! 5. **`splunk_metadata.csv`** overrides ([`Tables::from_csv`]): rows `key,field,value`;
//!    the key `<vendor>_<product>` is looked up first, then `<vendor>_<product>_<class>`,
//!    and the second wins (SC4S `conf.d/enrich/splunk_context.conf`); keys match
//!    case-insensitively. Fields `index`, `source`, `sourcetype` replace the value (a
//!    `source` row also beats step 4), `sc4s_template` picks a template sluice implements
//!    (`t_hdr_msg`, `t_5424_hdr_sdata_compact`, `t_fallback_kv`). The built-in keys are
//!    `nix_syslog` and `splunk_sc4s` / `splunk_sc4s_fallback`; SC4S's startup probe reads
//!    the latter's index.
//!
//! # Cost
//!
//! All table work happens when the tables are built: the metadata of each built-in
//! application (and each registered vendor listener) is resolved once, overrides included,
//! into a `Rule`. Classifying a message is a handful of byte checks on PROGRAM and HOST and
//! a few pointer copies; nothing is hashed or allocated per message. A listener id other
//! than `DEFAULT` costs one short string comparison per registered vendor listener.
//!
//! # Vendor parsers later
//!
//! A vendor parser (Cisco ASA, Palo Alto, ...) is a matcher over the message and source
//! that selects a pre-resolved `Rule` (vendor, product, class, sourcetype, index, source,
//! template, application name) built at load time with the same override resolution. It
//! slots in before step 2 and produces the same [`Classification`]; neither the seam nor
//! the encoder changes.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;

use thiserror::Error;

use crate::message::{Format, Message};

/// How the message arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    Udp,
    Tcp,
    Tls,
}

impl Transport {
    /// Label for logs and metrics: `UDP`, `TCP` or `TLS`.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Udp => "UDP",
            Transport::Tcp => "TCP",
            Transport::Tls => "TLS",
        }
    }

    /// The `sc4s_proto` indexed field. SC4S derives it from syslog-ng's `$PROTO`, the IP
    /// protocol number (`conflib/_splunk/splunkfields.conf`: 6 → `TCP`, 17 → `UDP`), so TLS
    /// connections are reported as `TCP`, and so are they here.
    pub fn sc4s_proto(self) -> &'static str {
        match self {
            Transport::Udp => "UDP",
            Transport::Tcp | Transport::Tls => "TCP",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a message came from: the parts of the socket the SC4S metadata depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceMeta<'a> {
    pub transport: Transport,
    /// The local port the message was received on (`sc4s_destport`).
    pub dest_port: u16,
    /// The sender's address (`sc4s_fromhostip`, and HOST when the message names none).
    pub source_ip: IpAddr,
    /// `DEFAULT` or the `<ID>` of `SC4S_LISTEN_<ID>_<PROTO>_PORT`.
    pub listener_id: &'a str,
}

/// The listener id of the default ports.
pub const DEFAULT_LISTENER: &str = "DEFAULT";

/// How the `event` text is rendered (the SC4S `sc4s_template`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Template {
    /// `t_hdr_msg`: `${MSGHDR}${MESSAGE}`.
    HdrMsg,
    /// `t_5424_hdr_sdata_compact`: `- - ${PROGRAM:--} ${PID:--} ${MSGID:--} ${SDATA:--}${MESSAGE}`.
    Rfc5424Compact,
    /// `t_fallback_kv`: `KEY=value` lines.
    FallbackKv,
}

impl Template {
    /// The SC4S template name.
    pub fn sc4s_name(self) -> &'static str {
        match self {
            Template::HdrMsg => "t_hdr_msg",
            Template::Rfc5424Compact => "t_5424_hdr_sdata_compact",
            Template::FallbackKv => "t_fallback_kv",
        }
    }

    /// The template for an SC4S template name, if sluice implements it.
    pub fn from_sc4s_name(name: &str) -> Option<Template> {
        [
            Template::HdrMsg,
            Template::Rfc5424Compact,
            Template::FallbackKv,
        ]
        .into_iter()
        .find(|t| t.sc4s_name() == name)
    }
}

/// The Splunk `source` of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source<'m, 't> {
    /// A fixed or configured value.
    Static(&'t str),
    /// `program:` followed by these bytes (PROGRAM with its directory path removed).
    Program(&'m [u8]),
}

/// Which SC4S `fix-invalid-program` application rejected a PROGRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramRule {
    /// Starts with `--`.
    DashDash,
    /// Starts with nine or more digits (an epoch stamp).
    Epoch,
    /// Contains a dotted IPv4 address.
    Ipv4,
    /// Has a byte outside `[a-zA-Z0-9-_/().]`.
    BsdConvention,
}

impl ProgramRule {
    /// The SC4S application name (its `.app.` tag).
    pub fn app_name(self) -> &'static str {
        match self {
            ProgramRule::DashDash => "app-fix-invalid-program-dashdash",
            ProgramRule::Epoch => "app-fix-invalid-program-epoch",
            ProgramRule::Ipv4 => "app-fix-invalid-program-ipv4",
            ProgramRule::BsdConvention => "app-fix-invalid-program-z_bsdconvention",
        }
    }
}

/// An SC4S header repair the encoder must apply (see the module docs, step 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rewrite {
    None,
    /// HOST is not a hostname: HOST := source IP; MESSAGE := `HOST SP MSGHDR MESSAGE`;
    /// PROGRAM, PID, LEGACY_MSGHDR unset.
    InvalidHost,
    /// PROGRAM is not a program name: MESSAGE := `MSGHDR MESSAGE`; PROGRAM, PID,
    /// LEGACY_MSGHDR unset.
    InvalidProgram(ProgramRule),
}

/// The SC4S metadata of one message. `'m` borrows the message, `'t` the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classification<'m, 't> {
    /// The most specific `splunk_metadata.csv` key: `nix_syslog`, `splunk_sc4s_fallback`,
    /// `<vendor>_<product>_nix_syslog`.
    pub key: &'t str,
    pub sourcetype: &'t str,
    pub index: &'t str,
    pub source: Source<'m, 't>,
    pub vendor: &'t str,
    pub product: &'t str,
    pub class: Option<&'t str>,
    pub template: Template,
    /// The SC4S application that classified the message (its `.app.` tag).
    pub app: &'t str,
    pub rewrite: Rewrite,
}

/// A `splunk_metadata.csv` that cannot be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TablesError {
    #[error("splunk_metadata.csv line {line}: {reason}: {content:?}")]
    Syntax {
        line: usize,
        content: String,
        reason: &'static str,
    },
}

/// A `splunk_metadata.csv` row that was accepted but has no effect in sluice (SC4S accepts
/// these too); the caller should log it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablesWarning {
    pub line: usize,
    pub content: String,
    pub reason: &'static str,
}

impl fmt::Display for TablesWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "splunk_metadata.csv line {}: {}: {:?}",
            self.line, self.reason, self.content
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Overrides {
    index: Option<Box<str>>,
    source: Option<Box<str>>,
    sourcetype: Option<Box<str>>,
    template: Option<Template>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum RuleSource {
    Static(Box<str>),
    Program,
}

/// The fully resolved metadata of one application (defaults + overrides).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Rule {
    key: Box<str>,
    vendor: Box<str>,
    product: Box<str>,
    class: Option<Box<str>>,
    sourcetype: Box<str>,
    index: Box<str>,
    source: RuleSource,
    template: Option<Template>,
    app: &'static str,
}

struct RuleDefaults<'a> {
    vendor: &'a str,
    product: &'a str,
    class: Option<&'a str>,
    sourcetype: &'static str,
    index: &'static str,
    /// `None`: `program:<PROGRAM>`.
    source: Option<&'static str>,
    app: &'static str,
}

const NIX_SYSLOG: RuleDefaults<'static> = RuleDefaults {
    vendor: "nix",
    product: "syslog",
    class: None,
    sourcetype: "nix:syslog",
    index: "osnix",
    source: None,
    app: "app-fallback-nix_syslog",
};

const LASTCHANCE: RuleDefaults<'static> = RuleDefaults {
    vendor: "splunk",
    product: "sc4s",
    class: Some("fallback"),
    sourcetype: "sc4s:fallback",
    index: "main",
    source: Some("sc4s"),
    app: "app-fallbackz-lastchance",
};

#[derive(Clone, Debug)]
struct Listener {
    id: Box<str>,
    vendor: Box<str>,
    product: Box<str>,
    rule: Rule,
}

/// Classification tables: `splunk_metadata.csv` overrides, `SC4S_SET_SOURCE_AS_SC4S`, and
/// the vendor listeners, resolved at load time.
#[derive(Clone, Debug)]
pub struct Tables {
    overrides: HashMap<Box<str>, Overrides>,
    set_source_as_sc4s: bool,
    warnings: Vec<TablesWarning>,
    nix_syslog: Rule,
    lastchance: Rule,
    listeners: Vec<Listener>,
}

impl Default for Tables {
    fn default() -> Self {
        Tables::with_overrides(HashMap::new(), Vec::new())
    }
}

impl Tables {
    /// Reads an SC4S `splunk_metadata.csv`: `key,field,value` rows; blank lines and lines
    /// starting with `#` are skipped; fields may be double-quoted (`""` is a quote inside);
    /// surrounding spaces of unquoted fields are trimmed. A later row for the same key and
    /// field wins. Rows with a field sluice does not use, or an `sc4s_template` it does not
    /// implement, are kept as [`Tables::warnings`]. Malformed rows are errors naming the line.
    pub fn from_csv(csv: &str) -> Result<Tables, TablesError> {
        let mut overrides: HashMap<Box<str>, Overrides> = HashMap::new();
        let mut warnings = Vec::new();
        for (index, raw) in csv.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let syntax = |reason: &'static str| TablesError::Syntax {
                line,
                content: raw.to_owned(),
                reason,
            };
            let fields = split_csv_line(trimmed).map_err(syntax)?;
            let [key, field, value] = <[String; 3]>::try_from(fields)
                .map_err(|_| syntax("expected three fields: key,field,value"))?;
            if key.is_empty() {
                return Err(syntax("empty key"));
            }
            if value.is_empty() {
                return Err(syntax("empty value"));
            }
            let warn = |reason: &'static str| TablesWarning {
                line,
                content: raw.to_owned(),
                reason,
            };
            let entry = overrides
                .entry(key.to_ascii_lowercase().into_boxed_str())
                .or_default();
            match field.as_str() {
                "index" => entry.index = Some(value.into_boxed_str()),
                "source" => entry.source = Some(value.into_boxed_str()),
                "sourcetype" => entry.sourcetype = Some(value.into_boxed_str()),
                "sc4s_template" => match Template::from_sc4s_name(&value) {
                    Some(t) => entry.template = Some(t),
                    None => warnings.push(warn(
                        "sc4s_template not implemented by sluice (t_hdr_msg, \
                         t_5424_hdr_sdata_compact, t_fallback_kv are); row ignored",
                    )),
                },
                _ => warnings.push(warn(
                    "field has no effect (index, source, sourcetype, sc4s_template do); row ignored",
                )),
            }
        }
        Ok(Tables::with_overrides(overrides, warnings))
    }

    fn with_overrides(
        overrides: HashMap<Box<str>, Overrides>,
        warnings: Vec<TablesWarning>,
    ) -> Self {
        let mut tables = Tables {
            nix_syslog: resolve(&overrides, false, &NIX_SYSLOG),
            lastchance: resolve(&overrides, false, &LASTCHANCE),
            overrides,
            set_source_as_sc4s: false,
            warnings,
            listeners: Vec::new(),
        };
        tables.rebuild();
        tables
    }

    /// `SC4S_SET_SOURCE_AS_SC4S`: every event gets source `sc4s` unless a
    /// `splunk_metadata.csv` `source` row says otherwise.
    pub fn set_source_as_sc4s(&mut self, on: bool) {
        self.set_source_as_sc4s = on;
        self.rebuild();
    }

    /// Registers a listener id (`<ID>` of `SC4S_LISTEN_<ID>_<PROTO>_PORT`). An id of two or
    /// three `_`-separated parts names a vendor and product (lowercased: `CISCO_ASA` →
    /// `cisco`, `asa`), as SC4S's `source_syslog/plugin.py` derives them; messages on such a
    /// listener get the `app-fallback-netsource` metadata. Returns whether the id named a
    /// vendor; `DEFAULT` and other ids behave like the default listener. Registering the
    /// same id twice is harmless.
    pub fn add_listener(&mut self, id: &str) -> bool {
        if self.listeners.iter().any(|l| &*l.id == id) {
            return true;
        }
        if id == DEFAULT_LISTENER {
            return false;
        }
        let parts: Vec<&str> = id.split('_').collect();
        if !(2..=3).contains(&parts.len()) || parts[0].is_empty() || parts[1].is_empty() {
            return false;
        }
        let vendor: Box<str> = parts[0].to_ascii_lowercase().into();
        let product: Box<str> = parts[1].to_ascii_lowercase().into();
        let rule = self.netsource_rule(&vendor, &product);
        self.listeners.push(Listener {
            id: id.into(),
            vendor,
            product,
            rule,
        });
        true
    }

    /// Rows of the CSV that were accepted without effect.
    pub fn warnings(&self) -> &[TablesWarning] {
        &self.warnings
    }

    fn netsource_rule(&self, vendor: &str, product: &str) -> Rule {
        resolve(
            &self.overrides,
            self.set_source_as_sc4s,
            &RuleDefaults {
                vendor,
                product,
                class: Some("nix_syslog"),
                sourcetype: "nix:syslog",
                index: "osnix",
                source: None,
                app: "app-fallback-netsource",
            },
        )
    }

    fn rebuild(&mut self) {
        self.nix_syslog = resolve(&self.overrides, self.set_source_as_sc4s, &NIX_SYSLOG);
        self.lastchance = resolve(&self.overrides, self.set_source_as_sc4s, &LASTCHANCE);
        let rules: Vec<Rule> = self
            .listeners
            .iter()
            .map(|l| self.netsource_rule(&l.vendor, &l.product))
            .collect();
        for (listener, rule) in self.listeners.iter_mut().zip(rules) {
            listener.rule = rule;
        }
    }

    fn listener_rule(&self, id: &str) -> Option<&Rule> {
        if id == DEFAULT_LISTENER {
            return None;
        }
        self.listeners
            .iter()
            .find(|l| &*l.id == id)
            .map(|l| &l.rule)
    }
}

fn resolve(
    overrides: &HashMap<Box<str>, Overrides>,
    set_source_as_sc4s: bool,
    d: &RuleDefaults<'_>,
) -> Rule {
    let vendor_product = format!("{}_{}", d.vendor, d.product).to_ascii_lowercase();
    let with_class = d
        .class
        .map(|c| format!("{vendor_product}_{c}").to_ascii_lowercase());
    let mut merged = overrides
        .get(vendor_product.as_str())
        .cloned()
        .unwrap_or_default();
    if let Some(more) = with_class.as_deref().and_then(|k| overrides.get(k)) {
        merged.index = more.index.clone().or(merged.index);
        merged.source = more.source.clone().or(merged.source);
        merged.sourcetype = more.sourcetype.clone().or(merged.sourcetype);
        merged.template = more.template.or(merged.template);
    }
    let source = match (merged.source, set_source_as_sc4s, d.source) {
        (Some(s), _, _) => RuleSource::Static(s),
        (None, true, _) => RuleSource::Static("sc4s".into()),
        (None, false, Some(s)) => RuleSource::Static(s.into()),
        (None, false, None) => RuleSource::Program,
    };
    Rule {
        key: with_class.unwrap_or(vendor_product).into_boxed_str(),
        vendor: d.vendor.into(),
        product: d.product.into(),
        class: d.class.map(Into::into),
        sourcetype: merged.sourcetype.unwrap_or_else(|| d.sourcetype.into()),
        index: merged.index.unwrap_or_else(|| d.index.into()),
        source,
        template: merged.template,
        app: d.app,
    }
}

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines).
fn split_csv_line(line: &str) -> Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') || chars.peek() == Some(&'\t') {
            chars.next();
        }
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err("unterminated quoted field"),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            while chars.peek() == Some(&' ') || chars.peek() == Some(&'\t') {
                chars.next();
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(_) => return Err("text after a closing quote"),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field.trim().to_owned());
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("quote inside an unquoted field"),
                    Some(c) => field.push(c),
                }
            }
            fields.push(field.trim().to_owned());
        }
    }
}

/// Classifies one message. See the module docs for the rules.
pub fn classify<'m, 't>(
    msg: &Message<'m>,
    src: &SourceMeta<'_>,
    tables: &'t Tables,
) -> Classification<'m, 't> {
    let rewrite = if msg.format == Format::Rfc3164 {
        header_rewrite(msg)
    } else {
        Rewrite::None
    };
    let program = match rewrite {
        Rewrite::None => msg.appname.filter(|p| !p.is_empty()),
        Rewrite::InvalidHost | Rewrite::InvalidProgram(_) => None,
    };
    let qualifies = match msg.format {
        Format::Rfc5424 => true,
        Format::Rfc3164 => program.is_some() && msg.message.is_some_and(|m| !m.is_empty()),
        Format::Unparsed => false,
    };
    let rule = if qualifies {
        tables
            .listener_rule(src.listener_id)
            .unwrap_or(&tables.nix_syslog)
    } else {
        &tables.lastchance
    };
    let template = rule.template.unwrap_or(if !qualifies {
        Template::FallbackKv
    } else if msg.format == Format::Rfc5424 {
        Template::Rfc5424Compact
    } else {
        Template::HdrMsg
    });
    let source = match &rule.source {
        RuleSource::Static(s) => Source::Static(s),
        RuleSource::Program => Source::Program(strip_directory(program.unwrap_or_default())),
    };
    Classification {
        key: &rule.key,
        sourcetype: &rule.sourcetype,
        index: &rule.index,
        source,
        vendor: &rule.vendor,
        product: &rule.product,
        class: rule.class.as_deref(),
        template,
        app: rule.app,
        rewrite,
    }
}

fn header_rewrite(msg: &Message<'_>) -> Rewrite {
    if let Some(host) = msg.hostname
        && !host.is_empty()
        && !host.iter().all(|&b| is_host_byte(b))
        && !is_slot_prefix(host)
    {
        return Rewrite::InvalidHost;
    }
    match msg
        .appname
        .filter(|p| !p.is_empty())
        .and_then(invalid_program)
    {
        Some(rule) => Rewrite::InvalidProgram(rule),
        None => Rewrite::None,
    }
}

fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// `^slot\d+\/`
fn is_slot_prefix(host: &[u8]) -> bool {
    let Some(rest) = host.strip_prefix(b"slot") else {
        return false;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && rest.get(digits) == Some(&b'/')
}

/// The first SC4S `fix-invalid-program` application (in SC4S's file order) that rejects
/// `program`.
fn invalid_program(program: &[u8]) -> Option<ProgramRule> {
    if program.starts_with(b"--") {
        return Some(ProgramRule::DashDash);
    }
    if program.iter().take_while(|b| b.is_ascii_digit()).count() >= 9 {
        return Some(ProgramRule::Epoch);
    }
    if contains_ipv4(program) {
        return Some(ProgramRule::Ipv4);
    }
    if !program
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'(' | b')' | b'.'))
    {
        return Some(ProgramRule::BsdConvention);
    }
    None
}

/// SC4S's unanchored
/// `(\b25[0-5]|\b2[0-4][0-9]|\b[01]?[0-9][0-9]?)(\.(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)){3}`:
/// four dotted octets (1-2 digits, or 3 digits up to 255), the first at a word boundary.
fn contains_ipv4(s: &[u8]) -> bool {
    fn is_word(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_'
    }
    fn octets(s: &[u8], at: usize, left: usize) -> bool {
        (1..=3).any(|len| {
            let Some(digits) = s.get(at..at + len) else {
                return false;
            };
            if !digits.iter().all(u8::is_ascii_digit) {
                return false;
            }
            let value = digits
                .iter()
                .fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
            if len == 3 && value > 255 {
                return false;
            }
            left == 1 || (s.get(at + len) == Some(&b'.') && octets(s, at + len + 1, left - 1))
        })
    }
    (0..s.len()).any(|i| s[i].is_ascii_digit() && (i == 0 || !is_word(s[i - 1])) && octets(s, i, 4))
}

/// SC4S `subst('^\/(?:[^\/]+\/)+', "")`: removes a leading `/dir/.../` made of non-empty
/// segments.
pub fn strip_directory(program: &[u8]) -> &[u8] {
    if program.first() != Some(&b'/') {
        return program;
    }
    let mut at = 1;
    let mut cut = None;
    while let Some(k) = memchr::memchr(b'/', &program[at..]) {
        if k == 0 {
            break;
        }
        at += k + 1;
        cut = Some(at);
    }
    cut.map_or(program, |c| &program[c..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn src(listener_id: &str) -> SourceMeta<'_> {
        SourceMeta {
            transport: Transport::Udp,
            dest_port: 514,
            source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
            listener_id,
        }
    }

    fn bsd<'a>(
        host: Option<&'a [u8]>,
        program: Option<&'a [u8]>,
        message: &'a [u8],
    ) -> Message<'a> {
        Message {
            format: Format::Rfc3164,
            priority: crate::message::Priority::new(38),
            hostname: host,
            appname: program,
            message: Some(message),
            ..Message::unparsed(b"", None)
        }
    }

    fn ietf<'a>(program: Option<&'a [u8]>) -> Message<'a> {
        Message {
            format: Format::Rfc5424,
            priority: crate::message::Priority::new(38),
            appname: program,
            message: None,
            ..Message::unparsed(b"", None)
        }
    }

    #[test]
    fn rfc3164_with_program_and_message_is_nix_syslog() {
        let t = Tables::default();
        let m = bsd(Some(b"host1"), Some(b"/usr/sbin/sshd"), b"Accepted");
        let c = classify(&m, &src("DEFAULT"), &t);
        assert_eq!(c.key, "nix_syslog");
        assert_eq!((c.sourcetype, c.index), ("nix:syslog", "osnix"));
        assert_eq!((c.vendor, c.product, c.class), ("nix", "syslog", None));
        assert_eq!(c.source, Source::Program(b"sshd"));
        assert_eq!(c.template, Template::HdrMsg);
        assert_eq!(c.app, "app-fallback-nix_syslog");
        assert_eq!(c.rewrite, Rewrite::None);
    }

    #[test]
    fn rfc5424_is_nix_syslog_even_without_program() {
        let t = Tables::default();
        let c = classify(&ietf(None), &src("DEFAULT"), &t);
        assert_eq!(c.sourcetype, "nix:syslog");
        assert_eq!(c.source, Source::Program(b""));
        assert_eq!(c.template, Template::Rfc5424Compact);
    }

    #[test]
    fn fallback_cases() {
        let t = Tables::default();
        for m in [
            bsd(Some(b"h"), None, b"no program"),
            bsd(Some(b"h"), Some(b"sshd"), b""),
            Message::unparsed(b"<999>junk", None),
            Message::unparsed(b"", None),
        ] {
            let c = classify(&m, &src("DEFAULT"), &t);
            assert_eq!(c.key, "splunk_sc4s_fallback", "{m:?}");
            assert_eq!((c.sourcetype, c.index), ("sc4s:fallback", "main"));
            assert_eq!(
                (c.vendor, c.product, c.class),
                ("splunk", "sc4s", Some("fallback"))
            );
            assert_eq!(c.source, Source::Static("sc4s"));
            assert_eq!(c.template, Template::FallbackKv);
            assert_eq!(c.app, "app-fallbackz-lastchance");
        }
    }

    #[test]
    fn invalid_host_is_rewritten_and_falls_back() {
        let t = Tables::default();
        for host in [&b"bad:host"[..], b"%bzorp", b"fe80::1", b"h\xc3\xa9"] {
            let m = bsd(Some(host), Some(b"sshd"), b"x");
            let c = classify(&m, &src("DEFAULT"), &t);
            assert_eq!(c.rewrite, Rewrite::InvalidHost, "{host:?}");
            assert_eq!(c.sourcetype, "sc4s:fallback");
        }
        for host in [&b"good-host_1.example"[..], b"slot1/host:x", b"10.0.0.1"] {
            let m = bsd(Some(host), Some(b"sshd"), b"x");
            assert_eq!(
                classify(&m, &src("DEFAULT"), &t).rewrite,
                Rewrite::None,
                "{host:?}"
            );
        }
        // RFC 5424 hostnames are not checked.
        let mut m = ietf(Some(b"app"));
        m.hostname = Some(b"bad:host");
        assert_eq!(classify(&m, &src("DEFAULT"), &t).rewrite, Rewrite::None);
    }

    #[test]
    fn invalid_programs() {
        let cases: &[(&[u8], Option<ProgramRule>)] = &[
            (b"sshd", None),
            (b"/usr/sbin/cron", None),
            (b"kernel(x).y-z_1", None),
            (b"--MARK", Some(ProgramRule::DashDash)),
            (b"1710166925", Some(ProgramRule::Epoch)),
            (b"123456789x", Some(ProgramRule::Epoch)),
            (b"12345678", None),
            (b"host-10.1.2.3", Some(ProgramRule::Ipv4)),
            (b"10.1.2.300", Some(ProgramRule::Ipv4)), // "10.1.2.30" matches, as in the regex
            (b"a10.1.2.3", None),                     // no word boundary before the 1
            (b"256.1.2.3", None), // 256 is no octet and "56" has no word boundary
            (b"1.2.3", None),
            (b"%ASA-6-302013", Some(ProgramRule::BsdConvention)),
            (b"my prog", Some(ProgramRule::BsdConvention)),
        ];
        for (program, expected) in cases {
            assert_eq!(
                invalid_program(program),
                *expected,
                "{}",
                String::from_utf8_lossy(program)
            );
        }
        let t = Tables::default();
        let m = bsd(Some(b"h"), Some(b"%ASA-6-302013"), b"Built");
        let c = classify(&m, &src("DEFAULT"), &t);
        assert_eq!(
            c.rewrite,
            Rewrite::InvalidProgram(ProgramRule::BsdConvention)
        );
        assert_eq!(c.template, Template::FallbackKv);
    }

    #[test]
    fn directory_stripping_matches_the_sc4s_regex() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"/usr/sbin/sshd", b"sshd"),
            (b"sshd", b"sshd"),
            (b"/sshd", b"/sshd"),
            (b"usr/bin/x", b"usr/bin/x"),
            (b"/usr/sbin/", b""),
            (b"//x", b"//x"),
            (b"/a//b", b"/b"),
            (b"", b""),
        ];
        for (input, expected) in cases {
            assert_eq!(strip_directory(input), *expected, "{input:?}");
        }
    }

    #[test]
    fn csv_overrides_are_resolved_with_class_row_winning() {
        let csv = "\
# comment
NIX_SYSLOG,index,unix
nix_syslog,sourcetype,\"linux:syslog\"
splunk_sc4s,index,first
splunk_sc4s_fallback,index,  second
splunk_sc4s_fallback,sc4s_template,t_hdr_msg
cisco_asa,index,fw_prod
cisco_asa_nix_syslog,source,\"asa \"\"src\"\"\"
local_example,host,ignored
";
        let mut t = Tables::from_csv(csv).unwrap();
        assert_eq!(t.warnings().len(), 1);
        assert_eq!(t.warnings()[0].line, 9);
        let m = bsd(Some(b"h"), Some(b"sshd"), b"x");
        let c = classify(&m, &src("DEFAULT"), &t);
        assert_eq!((c.index, c.sourcetype), ("unix", "linux:syslog"));
        let f = classify(&Message::unparsed(b"x", None), &src("DEFAULT"), &t);
        assert_eq!(f.index, "second");
        assert_eq!(f.template, Template::HdrMsg);

        assert!(t.add_listener("CISCO_ASA"));
        let c = classify(&m, &src("CISCO_ASA"), &t);
        assert_eq!(c.key, "cisco_asa_nix_syslog");
        assert_eq!(
            (c.vendor, c.product, c.class),
            ("cisco", "asa", Some("nix_syslog"))
        );
        assert_eq!((c.index, c.sourcetype), ("fw_prod", "nix:syslog"));
        assert_eq!(c.source, Source::Static("asa \"src\""));
        assert_eq!(c.app, "app-fallback-netsource");
        // Not qualifying for netsource: lastchance.
        let c = classify(&bsd(Some(b"h"), None, b"x"), &src("CISCO_ASA"), &t);
        assert_eq!(c.vendor, "splunk");
    }

    #[test]
    fn set_source_as_sc4s_loses_to_csv_source() {
        let mut t = Tables::from_csv("nix_syslog,source,custom\n").unwrap();
        t.add_listener("JUNIPER_NETSCREEN");
        t.set_source_as_sc4s(true);
        let m = bsd(Some(b"h"), Some(b"sshd"), b"x");
        assert_eq!(
            classify(&m, &src("DEFAULT"), &t).source,
            Source::Static("custom")
        );
        assert_eq!(
            classify(&m, &src("JUNIPER_NETSCREEN"), &t).source,
            Source::Static("sc4s")
        );
        t.set_source_as_sc4s(false);
        assert_eq!(
            classify(&m, &src("JUNIPER_NETSCREEN"), &t).source,
            Source::Program(b"sshd")
        );
    }

    #[test]
    fn listener_ids_without_vendor_behave_like_default() {
        let mut t = Tables::default();
        assert!(!t.add_listener("DEFAULT"));
        assert!(!t.add_listener("SINGLE"));
        assert!(!t.add_listener("A_B_C_D"));
        assert!(t.add_listener("A_B_C"));
        let m = bsd(Some(b"h"), Some(b"sshd"), b"x");
        assert_eq!(classify(&m, &src("SINGLE"), &t).vendor, "nix");
        assert_eq!(classify(&m, &src("A_B_C"), &t).vendor, "a");
        // Unregistered ids fall back to the default metadata.
        assert_eq!(classify(&m, &src("PAN_PANOS"), &t).vendor, "nix");
    }

    #[test]
    fn csv_errors_name_the_line() {
        let cases = [
            ("a,b\n", 1, "expected three fields: key,field,value"),
            ("\n\nx,index,\"open\n", 3, "unterminated quoted field"),
            ("x,index,\"a\"b\n", 1, "text after a closing quote"),
            ("x,index,a\"b\n", 1, "quote inside an unquoted field"),
            (",index,a\n", 1, "empty key"),
            ("k,index,\n", 1, "empty value"),
            ("k,index,a,b\n", 1, "expected three fields: key,field,value"),
        ];
        for (csv, line, reason) in cases {
            match Tables::from_csv(csv) {
                Err(TablesError::Syntax {
                    line: l, reason: r, ..
                }) => assert_eq!((l, r), (line, reason), "{csv:?}"),
                Ok(_) => panic!("{csv:?} accepted"),
            }
        }
        let err = Tables::from_csv("k,index\n").unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("k,index"), "{err}");
    }

    #[test]
    fn transport_labels() {
        assert_eq!(Transport::Tls.as_str(), "TLS");
        assert_eq!(Transport::Tls.sc4s_proto(), "TCP");
        assert_eq!(Transport::Udp.sc4s_proto(), "UDP");
    }
}
