//! SC4S's `grouping-by` post-filters: messages that are parts of one event, joined into it.
//!
//! * Cisco ISE and ACS (`app-postfilter-cisco_{ise,acs}.conf`): a record longer than a
//!   datagram comes as `PROGRAM serial num seq text` segments. Segments of one serial (ISE:
//!   per HOST; ACS: per HOST and PROGRAM) are sorted by `seq` and their texts joined with
//!   nothing between them, into `PROGRAM serial 1 0 joined`; complete when `num` segments
//!   arrived, else 10 s after the last one. Only `num > 1` is grouped (ISE's `CISE_Alarm`
//!   never is).
//! * VMware vSphere with `SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG=yes`
//!   (`app-postfilter-vmware_vsphere_*.conf`), lines joined with `\n` in arrival order:
//!   `localcli` (per sender and process), `sdrsInjector` (per HOST), `storageRM` (per HOST,
//!   complete at the line with `datastoreSlopeUS[5]`), the split lines (`--> ...` or ending
//!   in `{`, `:` or `}`, per sender, HOST and PROGRAM), all 2 s after the last line;
//!   `cmmdsTimeMachineDump` (per sender) joined with nothing, each line without its final
//!   `.`, complete at the line ending in `\q` (removed), else after 5 s.
//!
//! * Check Point Log Exporter with `SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL=yes`
//!   (`app-postfilter-checkpoint_{splunk,syslog}_02-group.conf`): the events of one
//!   `loguid` (the Splunk format's `loguid=`, the syslog format's `[sc4s@2620 loguid=...]`
//!   with PROGRAM `CheckPoint`) become the last of them (`inherit-mode(last-message)`),
//!   `SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL_SECONDS` (2) after the last one.
//! * Dell RSA SecurID trace lines (`app-postfilter-dell_rsa_secureid.conf`): per HOST, the
//!   lines (`PROGRAM...MESSAGE` as received) joined with `\n`, 1 s after the last one.
//!
//! * Symantec Brightmail (`app-postfilter-symantec_brightmail.conf`, on unless
//!   `SC4S_SOURCE_FF_SYMANTEC_BRIGHTMAIL_GROUPMSG=no`): `bmserver` messages
//!   `seq|id|field|data` (not `[Brightmail]` ones) of one `id` per HOST and PROGRAM, 2 s after
//!   the last, become `seq|id|field|data;field|data...` (the first part's `seq`) with
//!   sourcetype `symantec:smg:mail`, class `merged` ([`finish_joined`]).
//!
//! * BeyondTrust SRA (`app-postfilter-beyondtrust_sra.conf`): `BG` events
//!   `siteid:seq:parts:pairs` with `parts` above 1, per HOST, PROGRAM and `siteid`, complete
//!   when as many parts arrived as the latest part announces, else 10 s after the last. SC4S
//!   drops the parts and sends one event inheriting the last part's (by `seq`, compared as
//!   text) header and every part's values (a later part's value wins), with `siteid` `00`,
//!   that `seq`, and the number of parts received: the joined line is
//!   `00:<seq>:<count>:<pairs>;<pairs>...`, which the SRA parser then reads.
//!
//! The joined event is a new raw line: the first part's header (everything before its
//! MESSAGE) followed by the joined text. The caller runs it through parse and classify again
//! (with grouping off), so it gets exactly what a one-part message gets.
//!
//! Sans-IO: the caller passes the clock. Memory is bounded ([`GroupLimits`]): when a new part
//! would exceed a limit, the oldest groups are emitted as they are first. Nothing is dropped.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::net::IpAddr;

use super::{Classification, HostEdit, Value};
use crate::message::Message;

/// Which SC4S post-filter a part belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    Ise,
    Acs,
    VsphereLocalcli,
    VsphereSdrsInjector,
    VsphereStorageRm,
    VsphereMultiline,
    VsphereCmmds,
    Brightmail,
    BeyondTrustSra,
    CheckpointNoise,
    RsaTrace,
}

impl Rule {
    /// syslog-ng's `timeout()`: milliseconds after the last part (Check Point's is a
    /// setting, see [`GroupOptions::checkpoint_noise_secs`]; this is its default).
    pub fn timeout_ms(self) -> i64 {
        match self {
            Rule::Ise | Rule::Acs | Rule::BeyondTrustSra => 10_000,
            Rule::VsphereCmmds => 5_000,
            Rule::RsaTrace => 1_000,
            _ => 2_000,
        }
    }
}

/// Which groupings are on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupOptions {
    /// `SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG=yes`.
    pub vsphere: bool,
    /// Not `SC4S_SOURCE_FF_SYMANTEC_BRIGHTMAIL_GROUPMSG=no`.
    pub brightmail: bool,
    /// `SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL=yes`: its timeout in seconds
    /// (`..._NOISE_CONTROL_SECONDS`); `None`: off.
    pub checkpoint_noise_secs: Option<u32>,
}

/// Bounds on what a [`Grouper`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLimits {
    /// Open groups at most.
    pub max_groups: usize,
    /// Bytes of held text at most, over all groups.
    pub max_bytes: usize,
    /// Parts of one group at most (a group reaching it is emitted).
    pub max_parts: usize,
}

impl Default for GroupLimits {
    fn default() -> Self {
        GroupLimits {
            max_groups: 10_000,
            max_bytes: 64 << 20,
            max_parts: 1_000,
        }
    }
}

/// One part of a group, borrowed from its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part<'m> {
    pub rule: Rule,
    /// The group's identity within the rule (HOST, serial, ...), `\0`-separated.
    key: [&'m [u8]; 3],
    source: Option<IpAddr>,
    /// The raw line up to the part's text (the header a joined event starts with).
    pub prefix: &'m [u8],
    /// ISE/ACS: the record's serial.
    pub serial: &'m [u8],
    /// ISE/ACS: segment count and this segment's number.
    pub num: u32,
    pub seq: u32,
    pub text: &'m [u8],
    /// The group's timeout in milliseconds.
    pub timeout_ms: i64,
}

/// The part `msg` is of a group, or `None` (almost every message: a few comparisons).
pub fn part<'m>(
    msg: &Message<'m>,
    class: &Classification<'m, '_>,
    source: IpAddr,
    opts: &GroupOptions,
) -> Option<Part<'m>> {
    let app = class.app;
    let vsphere = opts.vsphere && app.starts_with("app-syslog-vmware_vsphere");
    let brightmail = opts.brightmail && app == "app-syslog-symantec_brightmail-pgm";
    let sra = app == "app-syslog-beyondtrust_sra";
    if app != "app-syslog-cisco_ise"
        && app != "app-syslog-cisco_acs"
        && app != "app-netsource-dell_rsa_secureid"
        && !app.starts_with("app-raw-checkpoint_splunk")
        && !app.starts_with("app-syslog-checkpoint_syslog")
        && !vsphere
        && !brightmail
        && !sra
    {
        return None;
    }
    if app.starts_with("app-raw-checkpoint_splunk")
        || app.starts_with("app-syslog-checkpoint_syslog")
    {
        return checkpoint_part(msg, class, opts);
    }
    let program = match class.edit.program {
        Some(p) => p,
        None => class.view.program,
    }?;
    let body = match class.edit.message {
        Some(Value::Bytes(b)) => b,
        Some(_) => return None,
        None => class.view.message?,
    };
    let host = match class.host {
        HostEdit::Set(Value::Bytes(b)) => b,
        HostEdit::Keep => msg.hostname.unwrap_or_default(),
        _ => b"",
    };
    let prefix = prefix_of(msg.raw, body)?;
    let base = Part {
        rule: Rule::Ise,
        key: [host, b"", b""],
        source: None,
        prefix,
        serial: b"",
        num: 0,
        seq: 0,
        text: body,
        timeout_ms: 0,
    };
    if sra {
        // `program('BG') and "${.metadata.sc4s.countOfParts}" > 1`, grouped by
        // `scope(program)` (HOST and PROGRAM) and `siteid`.
        let p = super::vendors::beyondtrust::parts(body)?;
        let num = number(p.parts)?;
        if num <= 1 {
            return None;
        }
        return Some(Part {
            rule: Rule::BeyondTrustSra,
            key: [host, program, p.siteid],
            num,
            ..base
        });
    }
    if app == "app-netsource-dell_rsa_secureid" {
        // `class('trace')` only; the line is `${LEGACY_MSGHDR}${MESSAGE}`: from PROGRAM on.
        if !matches!(class.class, Some(Value::Static("trace"))) {
            return None;
        }
        let start = class.view.program.unwrap_or(body);
        let from = prefix_of(msg.raw, start)?;
        return Some(Part {
            rule: Rule::RsaTrace,
            key: [host, b"", b""],
            prefix: from,
            text: &msg.raw[from.len()..],
            ..base
        });
    }
    if brightmail {
        // `program('bmserver' prefix) and not message('[Brightmail]')`, then the greedy
        // `seq|id|field|data` split; the part is `field|data`, the rest after the second `|`.
        if !program.starts_with(b"bmserver")
            || memchr::memmem::find(body, b"[Brightmail]").is_some()
        {
            return None;
        }
        let mut bars = memchr::memchr_iter(b'|', body);
        let first = bars.next();
        let second = bars.next();
        let id = match (first, second) {
            (Some(a), Some(b)) => &body[a + 1..b],
            (Some(a), None) => &body[a + 1..],
            _ => b"",
        };
        let head_end = second.unwrap_or(body.len());
        return Some(Part {
            rule: Rule::Brightmail,
            key: [host, program, id],
            serial: &body[..head_end],
            text: second.map_or(&b""[..], |b| &body[b + 1..]),
            ..base
        });
    }
    if !vsphere {
        let ise = app == "app-syslog-cisco_ise";
        if ise && program.starts_with(b"CISE_Alarm") {
            return None;
        }
        let mut cols = body.splitn(4, |&b| b == b' ');
        let serial = cols.next()?;
        let num = number(cols.next()?)?;
        let seq = number(cols.next()?)?;
        if num <= 1 {
            return None;
        }
        return Some(Part {
            rule: if ise { Rule::Ise } else { Rule::Acs },
            key: [host, if ise { b"" } else { program }, serial],
            serial,
            num,
            seq,
            text: cols.next().unwrap_or_default(),
            ..base
        });
    }
    let program_is = |name: &[u8]| program == name;
    if program_is(b"cmmdsTimeMachineDump") {
        return Some(Part {
            rule: Rule::VsphereCmmds,
            key: [b"", b"", b""],
            source: Some(source),
            ..base
        });
    }
    if program_is(b"localcli") {
        return Some(Part {
            rule: Rule::VsphereLocalcli,
            key: [program, class.view.pid.unwrap_or_default(), b""],
            source: Some(source),
            ..base
        });
    }
    if program_is(b"sdrsInjector") {
        return Some(Part {
            rule: Rule::VsphereSdrsInjector,
            key: [host, program, b""],
            ..base
        });
    }
    if program_is(b"storageRM") {
        return Some(Part {
            rule: Rule::VsphereStorageRm,
            key: [host, program, b""],
            ..base
        });
    }
    // `message('^--> ') or message('[{:}] *$')`.
    let end = body.len() - body.iter().rev().take_while(|&&b| b == b' ').count();
    let split_line =
        body.starts_with(b"--> ") || matches!(body[..end].last(), Some(b'{' | b':' | b'}'));
    if split_line {
        return Some(Part {
            rule: Rule::VsphereMultiline,
            key: [host, program, b""],
            source: Some(source),
            ..base
        });
    }
    None
}

/// A Check Point Log Exporter event with a `loguid` when noise control is on: the whole
/// line, kept until no event of its `loguid` came for the timeout, unless a later one
/// replaces it.
fn checkpoint_part<'m>(
    msg: &Message<'m>,
    class: &Classification<'m, '_>,
    opts: &GroupOptions,
) -> Option<Part<'m>> {
    let secs = opts.checkpoint_noise_secs?;
    // The syslog format's post-filter is `program('CheckPoint' type(string))`.
    if class.app.starts_with("app-syslog-checkpoint_syslog")
        && class.view.program != Some(b"CheckPoint")
    {
        return None;
    }
    let loguid = super::vendors::checkpoint::loguid(msg).filter(|l| !l.is_empty())?;
    Some(Part {
        rule: Rule::CheckpointNoise,
        key: [loguid, b"", b""],
        source: None,
        prefix: b"",
        serial: b"",
        num: 0,
        seq: 0,
        text: msg.raw,
        timeout_ms: i64::from(secs) * 1000,
    })
}

/// What SC4S's aggregate sets beyond the joined text, applied to the joined line's
/// classification (Brightmail: sourcetype `symantec:smg:mail`, class `merged`, the event is
/// the joined text).
pub fn finish_joined(rule: Rule, class: &mut Classification<'_, '_>) {
    if rule == Rule::Brightmail && class.app == "app-syslog-symantec_brightmail-pgm" {
        class.sourcetype = Value::Static("symantec:smg:mail");
        class.class = Some(Value::Static("merged"));
        class.template = super::Template::MsgOnly;
    }
}

fn number(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |n, &d| n * 10 + u32::from(d - b'0')))
}

/// `raw[..where body starts]` when `body` lies inside `raw`.
fn prefix_of<'m>(raw: &'m [u8], body: &[u8]) -> Option<&'m [u8]> {
    let start = (body.as_ptr() as usize).checked_sub(raw.as_ptr() as usize)?;
    (start + body.len() <= raw.len()).then(|| &raw[..start])
}

#[derive(Debug)]
struct Pending<T> {
    /// What the caller said about the first part (where it came from).
    origin: T,
    rule: Rule,
    num: u32,
    prefix: Vec<u8>,
    /// The prefix belongs to the part with this `seq` (ISE/ACS take the lowest).
    prefix_seq: u32,
    serial: Vec<u8>,
    parts: Vec<(u32, Vec<u8>)>,
    bytes: usize,
    /// Arrival order, for evicting the oldest.
    opened: u64,
    last_ms: i64,
    timeout_ms: i64,
}

/// The open groups. `T` is what the caller keeps with a group (e.g. its sender), handed
/// back with the joined event.
#[derive(Debug)]
pub struct Grouper<T = ()> {
    limits: GroupLimits,
    groups: HashMap<Vec<u8>, Pending<T>>,
    bytes: usize,
    next: u64,
}

/// A joined event: the first part's origin and the raw line.
pub type Joined<T> = (T, Vec<u8>);

impl<T: Clone> Grouper<T> {
    pub fn new(limits: GroupLimits) -> Grouper<T> {
        Grouper {
            limits,
            groups: HashMap::new(),
            bytes: 0,
            next: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Groups open now.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Takes `part` (copied); appends to `done` every joined event that is complete now: its
    /// own group's, and any group emitted early to stay within the limits.
    pub fn offer(&mut self, part: &Part<'_>, origin: &T, now_ms: i64, done: &mut Vec<Joined<T>>) {
        let size = part.prefix.len() + part.text.len() + part.serial.len();
        let key = group_key(part);
        while !self.groups.is_empty()
            && (self.bytes + size > self.limits.max_bytes
                || (self.groups.len() >= self.limits.max_groups && !self.groups.contains_key(&key)))
        {
            self.evict_oldest(done);
        }
        let opened = self.next;
        let g = match self.groups.entry(key.clone()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                self.next += 1;
                e.insert(Pending {
                    origin: origin.clone(),
                    rule: part.rule,
                    num: part.num,
                    prefix: part.prefix.to_vec(),
                    prefix_seq: part.seq,
                    serial: part.serial.to_vec(),
                    parts: Vec::new(),
                    bytes: part.prefix.len() + part.serial.len(),
                    opened,
                    last_ms: now_ms,
                    timeout_ms: if part.timeout_ms > 0 {
                        part.timeout_ms
                    } else {
                        part.rule.timeout_ms()
                    },
                })
            }
        };
        if part.seq < g.prefix_seq {
            g.bytes = g.bytes + part.prefix.len() - g.prefix.len();
            g.prefix = part.prefix.to_vec();
            g.prefix_seq = part.seq;
        }
        let mut text = part.text;
        if part.rule == Rule::VsphereCmmds {
            text = text.strip_suffix(b".").unwrap_or(text);
        }
        if part.rule == Rule::CheckpointNoise {
            // `inherit-mode(last-message)`: only the latest event is kept.
            let held: usize = g.parts.iter().map(|(_, t)| t.len()).sum();
            g.parts.clear();
            g.bytes -= held.min(g.bytes);
            self.bytes -= held.min(self.bytes);
        }
        let stored = match part.rule {
            // Each part keeps its `seq`, header and pairs: the joined event takes the last
            // part's header, and the order is decided by `seq` as text.
            Rule::BeyondTrustSra => match super::vendors::beyondtrust::parts(text) {
                Some(p) => [p.seq, b"\0", part.prefix, b"\0", p.message].concat(),
                None => text.to_vec(),
            },
            _ => text.to_vec(),
        };
        g.bytes += stored.len();
        g.parts.push((part.seq, stored));
        g.last_ms = now_ms;
        self.bytes += size;
        let complete = match part.rule {
            Rule::Ise | Rule::Acs => g.parts.len() >= g.num as usize,
            // `trigger("$(context-length)" >= "${.metadata.sc4s.countOfParts}")`: the
            // count of the part that just arrived.
            Rule::BeyondTrustSra => g.parts.len() >= part.num as usize,
            Rule::VsphereStorageRm => memchr::memmem::find(text, b"datastoreSlopeUS[5]").is_some(),
            Rule::VsphereCmmds => text.ends_with(b"\\q"),
            _ => false,
        } || g.parts.len() >= self.limits.max_parts;
        if complete && let Some(g) = self.groups.remove(&key) {
            self.bytes -= g.bytes.min(self.bytes);
            done.push(join(g));
        }
    }

    /// Emits the groups whose timeout has passed at `now_ms`.
    pub fn expire(&mut self, now_ms: i64, done: &mut Vec<Joined<T>>) {
        let due: Vec<Vec<u8>> = self
            .groups
            .iter()
            .filter(|(_, g)| now_ms - g.last_ms >= g.timeout_ms)
            .map(|(k, _)| k.clone())
            .collect();
        for k in due {
            if let Some(g) = self.groups.remove(&k) {
                self.bytes -= g.bytes.min(self.bytes);
                done.push(join(g));
            }
        }
    }

    /// Emits every open group (shutdown).
    pub fn drain(&mut self, done: &mut Vec<Joined<T>>) {
        for (_, g) in self.groups.drain() {
            done.push(join(g));
        }
        self.bytes = 0;
    }

    fn evict_oldest(&mut self, done: &mut Vec<Joined<T>>) {
        let Some(k) = self
            .groups
            .iter()
            .min_by_key(|(_, g)| g.opened)
            .map(|(k, _)| k.clone())
        else {
            return;
        };
        if let Some(g) = self.groups.remove(&k) {
            self.bytes -= g.bytes.min(self.bytes);
            done.push(join(g));
        }
    }
}

fn group_key(part: &Part<'_>) -> Vec<u8> {
    let mut k = Vec::with_capacity(40);
    k.push(part.rule as u8);
    match part.source {
        Some(IpAddr::V4(a)) => k.extend_from_slice(&a.octets()),
        Some(IpAddr::V6(a)) => k.extend_from_slice(&a.octets()),
        None => {}
    }
    for s in part.key {
        k.push(0);
        k.extend_from_slice(s);
    }
    k
}

/// The joined event: the first part's origin and the raw line.
fn join<T>(mut g: Pending<T>) -> Joined<T> {
    let mut line = g.prefix;
    match g.rule {
        Rule::Ise | Rule::Acs => {
            // `sort-key(seq)`: a stable sort keeps arrival order within one seq.
            g.parts.sort_by_key(|(seq, _)| *seq);
            line.extend_from_slice(&g.serial);
            line.extend_from_slice(b" 1 0 ");
            for (_, t) in &g.parts {
                line.extend_from_slice(t);
            }
        }
        Rule::Brightmail => {
            // `seq|id|` of the first part, then `implode(';', field|data...)`.
            line.extend_from_slice(&g.serial);
            line.push(b'|');
            for (i, (_, t)) in g.parts.iter().enumerate() {
                if i > 0 {
                    line.push(b';');
                }
                line.extend_from_slice(t);
            }
        }
        Rule::BeyondTrustSra => {
            let mut items: Vec<[&[u8]; 3]> = g
                .parts
                .iter()
                .map(|(_, t)| {
                    let mut f = t.splitn(3, |&b| b == 0);
                    [
                        f.next().unwrap_or_default(),
                        f.next().unwrap_or_default(),
                        f.next().unwrap_or_default(),
                    ]
                })
                .collect();
            // `sort-key("${.values.seq}")`: compared as text (stable).
            items.sort_by(|a, b| a[0].cmp(b[0]));
            let mut joined = Vec::new();
            if let Some(last) = items.last() {
                joined.extend_from_slice(last[1]);
                joined.extend_from_slice(b"00:");
                joined.extend_from_slice(last[0]);
                joined.push(b':');
                joined.extend_from_slice(items.len().to_string().as_bytes());
                joined.push(b':');
            }
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    joined.push(b';');
                }
                joined.extend_from_slice(it[2]);
            }
            line = joined;
        }
        Rule::CheckpointNoise => {
            if let Some((_, t)) = g.parts.pop() {
                line.extend_from_slice(&t);
            }
        }
        Rule::VsphereCmmds => {
            let start = line.len();
            for (_, t) in &g.parts {
                line.extend_from_slice(t);
            }
            // `subst('\q', '', type(string) flags(substring))`: the first one.
            if let Some(i) = memchr::memmem::find(&line[start..], b"\\q") {
                line.drain(start + i..start + i + 2);
            }
        }
        _ => {
            for (i, (_, t)) in g.parts.iter().enumerate() {
                if i > 0 {
                    line.push(b'\n');
                }
                line.extend_from_slice(t);
            }
        }
    }
    (g.origin, line)
}

#[cfg(test)]
mod tests;
