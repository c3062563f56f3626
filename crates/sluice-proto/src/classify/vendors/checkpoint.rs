//! Check Point (SC4S `addons/checkpoint/`): Log Exporter in its Splunk format (a raw line
//! `time=<epoch>|hostname=...|...`), in its syslog format (RFC 5424, PROGRAM `CheckPoint`,
//! the fields in `[sc4s@2620 ...]`), and the firewall OS on its dedicated listener /
//! netsource. Both Log Exporter formats pick index and source from the `product` field.
//!
//! `SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL=yes` (SC4S's `app-postfilter-checkpoint_*_02-group`)
//! keeps the last event of each `loguid`: the group stage does it (`classify::group`), with
//! [`loguid`]. `..._NOISE_INCOMPLETE_EVENTS` (the `01-partials` post-filters) would discard
//! events, which sluice does not do. `SC4S_LISTEN_CHECKPOINT_SPLUNK_OLD_HOST_RULES=yes` takes HOST
//! from the certificate names before `hostname`.

use std::sync::LazyLock;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::{Inline, Value};
use crate::classify::vtime;
use crate::message::StructuredData;

pub static VENDOR: Vendor = Vendor {
    name: "checkpoint",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-checkpoint_fw",
            topic: Topic::NetSource,
            order: "checkpoint/app-netsource-checkpoint_fw.conf",
            when: When::NetSource(&["checkpoint_fw"]),
            parse: netsource_fw,
        },
        App {
            name: "app-raw-checkpoint_splunk",
            topic: Topic::Raw,
            order: "checkpoint/app-raw-checkpoint_splunk.conf",
            when: When::Token(&["|hostname="]),
            parse: splunk,
        },
        App {
            name: "app-syslog-checkpoint_syslog",
            topic: Topic::Pgm,
            order: "checkpoint/app-syslog-checkpoint_syslog.conf",
            when: When::ProgramPrefix(&["CheckPoint"]),
            parse: syslog,
        },
    ],
};

const FW: usize = 0;
const SPLUNK: usize = 1;
const SYSLOG: usize = 2;
const NIX_RAW: usize = 3;
const NIX_SYSLOG: usize = 4;
/// The first of the product groups, in [`Group`] order.
const GROUPS: usize = 5;

static KEYS: &[Key] = &[
    Key::new("checkpoint", "fw", "cp_log:fw:syslog", "netops").template(Template::HdrMsg),
    Key::new("checkpoint", "splunk", "cp_log", "netfw"),
    Key::new("checkpoint", "syslog", "cp_log:syslog", "netfw").template(Template::Rfc5424Compact),
    Key::update("nix:syslog", "netops").template(Template::HdrMsg),
    Key::update("nix:syslog", "netops"),
    // One per Group, same order.
    Key::update("", "netfw")
        .class("firewall")
        .source("checkpoint:firewall"),
    Key::update("", "netproxy")
        .class("web")
        .source("checkpoint:web"),
    Key::update("", "netops")
        .class("audit")
        .source("checkpoint:audit"),
    Key::update("", "netops")
        .class("endpoint")
        .source("checkpoint:endpoint"),
    Key::update("", "netops")
        .class("sessions")
        .source("checkpoint:sessions"),
    Key::update("", "netops")
        .class("network")
        .source("checkpoint:network"),
    Key::update("", "netids")
        .class("ids_malware")
        .source("checkpoint:ids_malware"),
    Key::update("", "netids")
        .class("ids")
        .source("checkpoint:ids"),
    Key::update("", "email")
        .class("email")
        .source("checkpoint:email"),
    Key::update("", "netfw")
        .class("dlp")
        .source("checkpoint:firewall"),
    Key::update("", "netops").class("os"),
    Key::update("", "netops").source("checkpoint:cp_default"),
];

/// SC4S's `if/elif` chain on `product` (and `fw_subproduct`), in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    Firewall,
    Web,
    Audit,
    Endpoint,
    Sessions,
    Network,
    IdsMalware,
    Ids,
    Email,
    Dlp,
    Os,
    Default,
}

const GROUP_ORDER: [Group; 11] = [
    Group::Firewall,
    Group::Web,
    Group::Audit,
    Group::Endpoint,
    Group::Sessions,
    Group::Network,
    Group::IdsMalware,
    Group::Ids,
    Group::Email,
    Group::Dlp,
    Group::Os,
];

/// The product patterns of each group (SC4S's `match()` is an unanchored search; `\h` is a
/// space or tab). Group::Firewall's QoS and Group::Sessions' `fw_subproduct` tests are
/// separate, see [`group`].
const PRODUCT_PATTERNS: [&str; 11] = [
    r"Firewall|Application[ \t]+Control|RAD|HTTPS[ \t]+Inspection|Compliance[ \t]+Blade|^Compliance|VPN-1[ \t]+&[ \t]+Fire[wW]all-1|Network[ \t]+Security|FG[ \t]+VPN-1[ \t]+&[ \t]+FireWall-1",
    r"U[rR][lL][ \t]+Filtering",
    concat!(
        r"Scheduled[ \t]+system[ \t]+update|WEB_API|SmartDefense|Smart[ \t]+Defense|W[eE][bB]-UI|",
        r"SmartDashboard|System[ \t]+Monitor|Log[ \t]+Update|license-mgmt|smart_event|SmartConsole|",
        r"SmartEvent[ \t]+Client|SmartUpdate|SmartView|Security[ \t]+Gateway/Management|",
        r"Eventia[ \t]+Analyzer[ \t]+Client|SmartProvisioning[ \t]+Connector|SmartLSM|ROBO[ \t]+GUI|",
        r"Management[ \t]+Blade|Connectra|Check[ \t]+Point[ \t]+Security[ \t]+Management[ \t]+Server|",
        r"CLI|Check[ \t]+Point[ \t]+GO[ \t]+Password[ \t]+Reset|Database[ \t]+Tool|cpmidu_update_tool|query-database"
    ),
    r"Endpoint[ \t]+Management|Core|Endpoint[ \t]+Compliance|MEPP|Media[ \t]+Encryption[ \t]+&[ \t]+Port[ \t]+Protection|Endpoint[ \t]+Security[ \t]+Console|endpoint",
    r"^VPN$|^Mobile$|Mobile[ \t]+App|Identity[ \t]+Awareness",
    r"IOS[ \t]+Profile|iOS[ \t]+Profiles|Device|WIFI[ \t]+Network|Mobile[ \t]+Access",
    concat!(
        r"Threat[ \t]+Emulation|Anti-Virus|New[ \t]+Anti[ \t]+Virus|Anti-Bot|Threat[ \t]+Extraction|",
        r"Anti-Ransomware|Anti-Exploit|Forensics|OS[ \t]+Exploit|Text[ \t]+Message|Network[ \t]+Access|",
        r"Zero[ \t]+Phishing|Anti-Malware|Anti[ \t]+Malware"
    ),
    r"IPS|W[iI][fF][iI]|Cellular",
    r"MTA|Anti-Spam|Anti[ \t]+Spam|Anti-Phishing|Anti[ \t]+Phishing",
    r"DLP",
    r"Syslog",
];

/// Which Log Exporter format: the two differ in how `fw_subproduct` selects "sessions".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Splunk,
    Syslog,
}

/// The literals of [`PRODUCT_PATTERNS`], read once: each alternative of each group with its
/// character classes expanded (`U[rR][lL]` gives four literals) and `[ \t]+` written as one
/// space, matched against the product with runs of spaces and tabs collapsed to one space.
/// A `[ \t]+` in these patterns always lies between two literal bytes that are neither, so
/// it consumes a whole run and the collapse changes no answer (`group_matches_regexes`
/// checks this against the regexes).
struct ProductMatcher {
    ac: aho_corasick::AhoCorasick,
    /// Per literal: its group (index in [`GROUP_ORDER`]) and its anchors (`^`, `$`).
    meta: Vec<(usize, bool, bool)>,
}

/// The literals one alternative of a pattern stands for (`[xy]` classes expanded).
fn expand(alt: &str) -> Vec<Vec<u8>> {
    let alt = alt.replace("[ \\t]+", " ");
    let mut out: Vec<Vec<u8>> = vec![Vec::new()];
    let b = alt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'[' {
            let close = b[i..]
                .iter()
                .position(|&c| c == b']')
                .map_or(b.len(), |c| i + c);
            let class = &b[i + 1..close];
            out = out
                .iter()
                .flat_map(|p| {
                    class.iter().map(move |&c| {
                        let mut q = p.clone();
                        q.push(c);
                        q
                    })
                })
                .collect();
            i = close + 1;
        } else {
            for p in &mut out {
                p.push(b[i]);
            }
            i += 1;
        }
    }
    out
}

static PRODUCTS: LazyLock<ProductMatcher> = LazyLock::new(|| {
    let mut lits = Vec::new();
    let mut meta = Vec::new();
    for (g, pat) in PRODUCT_PATTERNS.iter().enumerate() {
        for alt in pat.split('|') {
            let (start, alt) = match alt.strip_prefix('^') {
                Some(a) => (true, a),
                None => (false, alt),
            };
            let (end, alt) = match alt.strip_suffix('$') {
                Some(a) => (true, a),
                None => (false, alt),
            };
            for lit in expand(alt) {
                lits.push(lit);
                meta.push((g, start, end));
            }
        }
    }
    // The contiguous NFA, not the DFA: product names are a few dozen bytes, and the DFA's
    // table (446 kB for these 91 literals; the NFA takes 30 kB) came from memory on every message in
    // the daemon, where other work evicts it between Check Point lines: 1.4 us per call
    // in a perf profile of the receiver, against tens of ns in a hot loop.
    let ac = aho_corasick::AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
        .build(&lits)
        .expect("static literals");
    ProductMatcher { ac, meta }
});

/// Bit `i` set: `PRODUCT_PATTERNS[i]` matches `product` (an unanchored search, as SC4S's
/// `match()`).
fn product_groups(product: &[u8]) -> u16 {
    let collapsed: Vec<u8>;
    let spaced = product
        .iter()
        .zip(product.iter().skip(1).chain([&b'x']))
        .any(|(&a, &b)| a == b'\t' || (a == b' ' && b == b' '));
    let text = if spaced {
        let mut v = Vec::with_capacity(product.len());
        for &b in product {
            let ws = b == b' ' || b == b'\t';
            if !(ws && v.last() == Some(&b' ')) {
                v.push(if ws { b' ' } else { b });
            }
        }
        collapsed = v;
        &collapsed[..]
    } else {
        product
    };
    let m = &*PRODUCTS;
    let mut set = 0u16;
    for hit in m.ac.find_overlapping_iter(text) {
        let (g, start, end) = m.meta[hit.pattern().as_usize()];
        if (!start || hit.start() == 0) && (!end || hit.end() == text.len()) {
            set |= 1 << g;
        }
    }
    set
}

fn group(product: &[u8], fw_subproduct: &[u8], format: Format) -> Group {
    let has = |s: &[u8], n: &[u8]| crate::classify::vendors::util::find(s, n).is_some();
    let matched = product_groups(product);
    for (i, g) in GROUP_ORDER.iter().enumerate() {
        let extra = match g {
            // `... or QoS and not fw_subproduct~VPN`: `and` binds tighter.
            Group::Firewall => has(product, b"QoS") && !has(fw_subproduct, b"VPN"),
            Group::Sessions => match format {
                Format::Splunk => fw_subproduct.starts_with(b"VPN"),
                Format::Syslog => has(fw_subproduct, b"VPN"),
            },
            Group::IdsMalware => {
                has(product, b"Application") && !has(product, b"Application Control")
            }
            _ => false,
        };
        if extra || matched & (1 << i) != 0 {
            return *g;
        }
    }
    Group::Default
}

fn group_key(g: Group) -> &'static Key {
    let i = GROUP_ORDER
        .iter()
        .position(|x| *x == g)
        .unwrap_or(GROUP_ORDER.len());
    &KEYS[GROUPS + i]
}

/// HOST from `CN=<host>,...` (`originsicname`, `origin_sic_name`; the `=` may be escaped).
fn host_from_sic(sic: &[u8]) -> Option<&[u8]> {
    let rest = sic
        .strip_prefix(b"CN")
        .or_else(|| sic.strip_prefix(b"Cn"))
        .or_else(|| sic.strip_prefix(b"cN"))
        .or_else(|| sic.strip_prefix(b"cn"))?;
    let rest = rest.strip_prefix(b"\\").unwrap_or(rest);
    let rest = rest.strip_prefix(b"=")?;
    let end = memchr::memchr(b',', rest).unwrap_or(rest.len());
    (end > 0).then_some(&rest[..end])
}

/// SC4S's default HOST rules: the first word of `hostname`, else the CN of
/// `originsicname`, else of `origin_sic_name` (with `old`, the two CNs first, then
/// `hostname`); then a VSX `...-v_<host>` keeps `<host>`.
fn choose_host<'m>(
    hostname: &'m [u8],
    sic: &'m [u8],
    sic2: &'m [u8],
    old: bool,
) -> Option<&'m [u8]> {
    let first_word = || {
        hostname
            .split(|b| b.is_ascii_whitespace())
            .find(|w| !w.is_empty())
    };
    let sics = || host_from_sic(sic).or_else(|| host_from_sic(sic2));
    let host = if old {
        sics().or_else(first_word)
    } else {
        first_word().or_else(sics)
    }?;
    Some(
        match crate::classify::vendors::util::find_lit!(host, b"-v_") {
            Some(i) => &host[i + 3..],
            None => host,
        },
    )
}

/// A message nested in `default_device_message`, read as syslog-ng's
/// `syslog-parser(flags(no-hostname))` does: `<PRI>` then `PROGRAM[PID]: MESSAGE`.
struct Nested<'m> {
    program: &'m [u8],
    pid: Option<&'m [u8]>,
    message: &'m [u8],
}

fn nested(text: &[u8]) -> Option<Nested<'_>> {
    let rest = text.strip_prefix(b"<")?;
    let close = memchr::memchr(b'>', rest)?;
    if close == 0 || close > 3 || !rest[..close].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let rest = &rest[close + 1..];
    let end = rest
        .iter()
        .position(|&b| b == b'[' || b == b':' || b == b' ')?;
    let program = &rest[..end];
    if program.is_empty() {
        return None;
    }
    let mut after = &rest[end..];
    let mut pid = None;
    if let Some(r) = after.strip_prefix(b"[") {
        let close = memchr::memchr(b']', r)?;
        pid = Some(&r[..close]);
        after = &r[close + 1..];
    }
    let message = after.strip_prefix(b":")?;
    let message = message.strip_prefix(b" ").unwrap_or(message);
    Some(Nested {
        program,
        pid,
        message,
    })
}

fn set_nested<'m>(n: &Nested<'m>, out: &mut Out<'m>) {
    out.program = Some(Some(n.program));
    out.pid = Some(n.pid);
    out.message(n.message);
    out.source = Some(Value::Concat("program:", n.program));
}

/// `time=<epoch>|hostname=...|...`, delivered raw.
fn splunk<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.msg.raw;
    if !is_splunk_format(m) {
        return false;
    }
    out.key(&KEYS[SPLUNK]);
    out.identified = true;
    let mut v = Fields::default();
    pipe_pairs(m, |key, value| v.take(key, value));
    // Everything else depends on the epoch in `time=` parsing.
    let Some(ts) = vtime::parse_epoch(v.time, false) else {
        return true;
    };
    out.time(ts);
    out.host(v.hostname);
    out.field("cp_lm", Value::Bytes(v.hostname));
    if let Some(h) = choose_host(
        v.hostname,
        v.originsicname,
        v.origin_sic_name,
        input.options.checkpoint.old_host_rules,
    ) {
        out.host(h);
    }
    if v.product == b"Syslog" {
        if let Some(n) = nested(v.default_device_message) {
            out.key(&KEYS[NIX_RAW]);
            set_nested(&n, out);
        }
        return true;
    }
    out.key(group_key(group(v.product, v.fw_subproduct, Format::Splunk)));
    true
}

/// The `loguid` of a Log Exporter event, in either format (the Splunk format's last
/// `loguid=` pair; the syslog format's `[sc4s@2620 loguid="..."]`), for noise control
/// ([`crate::classify::group`]).
pub(crate) fn loguid<'m>(msg: &crate::message::Message<'m>) -> Option<&'m [u8]> {
    let mut found = None;
    if is_splunk_format(msg.raw) {
        pipe_pairs(msg.raw, |key, value| {
            if key == b"loguid" {
                found = Some(value);
            }
        });
        return found;
    }
    let sd = msg.structured_data?;
    for e in sd.elements().filter(|e| e.id() == b"sc4s@2620") {
        for p in e.params() {
            if p.name() == b"loguid" {
                found = Some(p.raw_value());
            }
        }
    }
    found
}

/// SC4S's `^time=\d{10}\|hostname=`.
fn is_splunk_format(m: &[u8]) -> bool {
    m.len() >= 25
        && m.starts_with(b"time=")
        && m[5..15].iter().all(u8::is_ascii_digit)
        && m[15..].starts_with(b"|hostname=")
}

/// Calls `f` with each pair `kv::pairs(text, b'|')` yields, in order: the same tokenizer
/// (skip `|` and spaces, a token without `=` before the next `|` is dropped, the key
/// trimmed, a `"` value read to its closing quote), with the two searches of each token
/// done as one.
fn pipe_pairs<'m>(text: &'m [u8], mut f: impl FnMut(&'m [u8], &'m [u8])) {
    let mut rest = text;
    loop {
        let Some(start) = rest.iter().position(|&b| b != b'|' && b != b' ') else {
            return;
        };
        let s = &rest[start..];
        let Some(eq) = s.iter().position(|&b| b == b'|' || b == b'=') else {
            return;
        };
        if s[eq] == b'|' {
            rest = &s[eq..];
            continue;
        }
        let key = s[..eq].trim_ascii();
        let after = &s[eq + 1..];
        if let Some(body) = after.strip_prefix(b"\"") {
            let end = crate::classify::kv::quoted_end(body);
            rest = body.get(end + 1..).unwrap_or(&[]);
            f(key, &body[..end]);
        } else {
            let end = memchr::memchr(b'|', after).unwrap_or(after.len());
            rest = &after[end..];
            f(key, &after[..end]);
        }
    }
}

/// The Log Exporter fields SC4S reads (the last occurrence of a key wins, as in
/// syslog-ng's kv-parser).
#[derive(Clone, Copy, Default)]
struct Fields<'m> {
    time: &'m [u8],
    hostname: &'m [u8],
    originsicname: &'m [u8],
    origin_sic_name: &'m [u8],
    product: &'m [u8],
    fw_subproduct: &'m [u8],
    default_device_message: &'m [u8],
}

impl<'m> Fields<'m> {
    fn take(&mut self, key: &[u8], value: &'m [u8]) {
        let slot = match key {
            b"time" => &mut self.time,
            b"hostname" => &mut self.hostname,
            b"originsicname" => &mut self.originsicname,
            b"origin_sic_name" => &mut self.origin_sic_name,
            b"product" => &mut self.product,
            b"fw_subproduct" => &mut self.fw_subproduct,
            b"default_device_message" => &mut self.default_device_message,
            _ => return,
        };
        *slot = value;
    }
}

/// RFC 5424 from PROGRAM `CheckPoint`, fields in `[sc4s@2620 ...]`.
fn syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"CheckPoint")) {
        return false;
    }
    let mut v = Fields::default();
    if let Some(sd) = input.msg.structured_data {
        take_sd(sd, &mut v);
    }
    if let Some(ts) = vtime::parse_epoch(v.time, false) {
        out.time(ts);
    }
    if !v.hostname.is_empty() {
        out.host(v.hostname);
        out.field("cp_lm", Value::Bytes(v.hostname));
    }
    out.key(&KEYS[SYSLOG]);
    if let Some(h) = choose_host(
        v.hostname,
        v.originsicname,
        v.origin_sic_name,
        input.options.checkpoint.old_host_rules,
    ) {
        out.host(h);
    } else if let Some(h) = input.host
        && let Some(i) = crate::classify::vendors::util::find_lit!(h, b"-v_")
    {
        out.host(&h[i + 3..]);
    }
    if v.product == b"Syslog" {
        if let Some(n) = nested(v.default_device_message) {
            out.key(&KEYS[NIX_SYSLOG]);
            set_nested(&n, out);
            if let Some(class) = Inline::concat(&[b"nix_", n.program]) {
                out.class = Some(Value::Inline(class));
            }
        }
        return true;
    }
    out.key(group_key(group(v.product, v.fw_subproduct, Format::Syslog)));
    true
}

/// Feeds `v` the params of every `[sc4s@2620 ...]` element of `sd`, in order.
fn take_sd<'m>(sd: StructuredData<'m>, v: &mut Fields<'m>) {
    let mut fast = *v;
    if one_element(sd.raw(), &mut fast).is_some() {
        *v = fast;
        return;
    }
    for e in sd.elements().filter(|e| e.id() == b"sc4s@2620") {
        for p in e.params() {
            v.take(p.name(), p.raw_value());
        }
    }
}

/// The usual shape in one pass: `sd` is a single `[sc4s@2620 name="value" ...]` element
/// whose names hold no `]` or `"` and whose values are all quoted. On it this yields what
/// `StructuredData::elements` + `SdElement::params` yield (the element's end is the `]`
/// after the last value; a value ends at its first `"` not escaped by `\\`). `None` (with
/// `v` partly fed) for any other shape: the caller then takes the general iterators.
fn one_element<'m>(b: &'m [u8], v: &mut Fields<'m>) -> Option<()> {
    const OPEN: &[u8] = b"[sc4s@2620";
    if !b.starts_with(OPEN) {
        return None;
    }
    let mut i = OPEN.len();
    loop {
        match *b.get(i)? {
            b']' => return (i + 1 == b.len()).then_some(()),
            b' ' => {}
            _ => return None,
        }
        let start = i + 1;
        let mut j = start;
        loop {
            match *b.get(j)? {
                b'=' => break,
                b']' | b'"' => return None,
                _ => j += 1,
            }
        }
        if b.get(j + 1) != Some(&b'"') {
            return None;
        }
        let value = j + 2;
        let mut k = value;
        loop {
            match *b.get(k)? {
                b'"' => break,
                b'\\' => k += 2,
                _ => k += 1,
            }
        }
        v.take(&b[start..j], &b[value..k]);
        i = k + 1;
    }
}

fn netsource_fw<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified {
        return false;
    }
    let ns = input.netsource;
    if !ns.names("checkpoint_fw", "checkpoint", "fw") {
        return false;
    }
    out.key(&KEYS[FW]);
    true
}

#[cfg(test)]
mod tests;
