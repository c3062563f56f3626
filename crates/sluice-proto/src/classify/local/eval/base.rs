//! The message as local applications see it before they change it: syslog-ng's fields at
//! the point of the pipeline where their context runs, taken from the parsed message, the
//! built-in classification so far, and what earlier local applications left
//! ([`Overlay`]).

use std::net::IpAddr;

use crate::classify::registry::{NameValues, NetSource, Values, ValuesSyntax};
use crate::classify::value::Value;
use crate::classify::{SourceMeta, kv};
use crate::message::{Format, Message, Timestamp};
use crate::time::Zone;

use super::super::names::{NameId, Names, id};
pub(crate) use super::super::stage::Stage;
use super::Overlay;

/// SC4S's `.splunk.*` and `fields.sc4s_*` as the pipeline holds them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Splunk<'a> {
    pub index: Option<Value<'a, 'a>>,
    pub sourcetype: Option<Value<'a, 'a>>,
    pub source: Option<Value<'a, 'a>>,
    pub template: Option<&'a str>,
    pub vendor: Option<Value<'a, 'a>>,
    pub product: Option<Value<'a, 'a>>,
    pub class: Option<Value<'a, 'a>>,
}

#[derive(Clone, Copy)]
pub(crate) struct Base<'m, 'a> {
    pub msg: &'a Message<'m>,
    pub src: &'a SourceMeta<'a>,
    pub now: i64,
    pub zone: &'a Zone,
    pub loghost: &'a str,
    pub stage: Stage,
    pub format: Format,
    /// `None`: the sender's address.
    pub host: Option<&'a [u8]>,
    pub program: Option<&'a [u8]>,
    pub pid: Option<&'a [u8]>,
    pub message: &'a [u8],
    /// The stamp (`S_*` macros); `None`: the receive time.
    pub stamp: Option<Timestamp>,
    pub netsource: NetSource<'a>,
    pub splunk: Splunk<'a>,
    pub identified: bool,
    /// The application that took the message last.
    pub app: Option<&'a str>,
    /// In a sub-topic: its name and the parent's name-value pairs.
    pub sub: Option<(&'a str, &'a NameValues<'m>)>,
    /// Values a built-in parser parsed (`t_json_values` / `t_kv_values`).
    pub values: Option<Values<'m>>,
    pub overlay: Option<&'a Overlay<'m>>,
}

impl std::fmt::Debug for Base<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Base")
            .field("stage", &self.stage)
            .field("message", &String::from_utf8_lossy(self.message))
            .finish_non_exhaustive()
    }
}

/// The bytes of a value (two-part values are joined in `arena`).
pub(crate) fn value_bytes<'a>(v: &Value<'a, 'a>, arena: &'a bumpalo::Bump) -> &'a [u8] {
    match *v {
        Value::Static(s) => s.as_bytes(),
        Value::Bytes(b) => b,
        Value::Concat(h, t) => {
            let mut out = bumpalo::collections::Vec::with_capacity_in(h.len() + t.len(), arena);
            out.extend_from_slice_copy(h.as_bytes());
            out.extend_from_slice_copy(t);
            out.into_bump_slice()
        }
        Value::Inline(i) => arena.alloc_slice_copy(i.as_bytes()),
    }
}

/// The sender's address as syslog-ng writes it (IPv4-mapped IPv6 as IPv4).
pub(crate) fn ip_text(ip: IpAddr, arena: &bumpalo::Bump) -> &[u8] {
    let s = ip.to_canonical().to_string();
    arena.alloc_slice_copy(s.as_bytes())
}

impl<'m: 'a, 'a> Base<'m, 'a> {
    /// The value of name `n` before any change of the running application (`None`: unset).
    pub fn get(&self, n: NameId, names: &Names, arena: &'a bumpalo::Bump) -> Option<&'a [u8]> {
        if let Some(o) = self.overlay
            && let Some(v) = o.get(n)
        {
            return v;
        }
        let v = |x: Option<Value<'a, 'a>>| x.map(|v| value_bytes(&v, arena));
        match n {
            id::HOST => Some(match self.host {
                Some(h) if self.stage == Stage::Parsed && h.iter().any(u8::is_ascii_uppercase) => {
                    arena.alloc_slice_copy(&h.to_ascii_lowercase())
                }
                Some(h) => h,
                None => ip_text(self.src.source_ip, arena),
            }),
            id::PROGRAM => self.program,
            id::PID => self.pid,
            id::MESSAGE => Some(self.message),
            id::MSGID => self.msg.msgid.filter(|m| !m.is_empty()),
            id::LEGACY_MSGHDR => self.legacy_msghdr(),
            id::INDEX => v(self.splunk.index),
            id::SOURCETYPE => v(self.splunk.sourcetype),
            id::SOURCE => v(self.splunk.source),
            id::TEMPLATE => self.splunk.template.map(str::as_bytes),
            id::VENDOR => v(self.splunk.vendor),
            id::PRODUCT => v(self.splunk.product),
            id::CLASS => v(self.splunk.class),
            id::NS_VENDOR => Some(self.netsource.vendor.as_bytes()).filter(|s| !s.is_empty()),
            id::NS_PRODUCT => Some(self.netsource.product.as_bytes()).filter(|s| !s.is_empty()),
            id::NS_VENDOR_PRODUCT => {
                Some(self.netsource.vendor_product.as_bytes()).filter(|s| !s.is_empty())
            }
            id::APP_NAME => self.app.map(str::as_bytes),
            id::HEC_TEMPLATE | id::NS_TIME_ZONE | id::NS_USE_RECV_TIME => None,
            _ => self.get_named(names.name(n), arena),
        }
    }

    /// Names that are not message fields: structured data, a parent's pairs, built-in
    /// values.
    fn get_named(&self, name: &str, arena: &'a bumpalo::Bump) -> Option<&'a [u8]> {
        if let Some(rest) = name.strip_prefix(".SDATA.") {
            return self.sdata(rest, arena);
        }
        if let Some((topic, nv)) = self.sub {
            match topic {
                "cef" => {
                    if let Some(k) = name.strip_prefix(".metadata.cef.") {
                        return nv.get(k);
                    }
                    if let Some(k) = name.strip_prefix(".values.") {
                        let ext = nv.get("ext")?;
                        return kv_value(ext, b' ', k.as_bytes(), arena);
                    }
                }
                "leef" => {
                    let nv_name = match name {
                        ".leef.vendor" => "leef_vendor",
                        ".leef.product" => "leef_product",
                        ".leef.product_version" => "leef_product_version",
                        ".leef.EventID" => "leef_event_id",
                        _ => "",
                    };
                    if !nv_name.is_empty() {
                        return nv.get(nv_name);
                    }
                }
                "json" => {
                    if let Some(k) = name.strip_prefix(".values.") {
                        let mut pairs = Vec::new();
                        let text: &'a [u8] = arena.alloc_slice_copy(self.message);
                        if super::json::flatten(text, None, arena, &mut pairs) {
                            return pairs.into_iter().find(|(n, _)| n == k).map(|(_, v)| v);
                        }
                        return None;
                    }
                }
                _ => {
                    if let Some(k) = name.strip_prefix(".values.") {
                        return nv.get(k);
                    }
                }
            }
        }
        if let (Some(k), Some(values)) = (name.strip_prefix(".values."), self.values)
            && let ValuesSyntax::Kv { pair } = values.syntax
        {
            return kv_value(values.text, pair, k.as_bytes(), arena);
        }
        None
    }

    /// `.SDATA.<id>.<param>`.
    fn sdata(&self, rest: &str, arena: &'a bumpalo::Bump) -> Option<&'a [u8]> {
        let sd = self.msg.structured_data?;
        for el in sd.elements() {
            let id = el.id();
            let Some(param) = rest
                .as_bytes()
                .strip_prefix(id)
                .and_then(|r| r.strip_prefix(b"."))
            else {
                continue;
            };
            let mut found = None;
            for p in el.params() {
                if p.name() == param {
                    found = Some(p.value());
                }
            }
            if let Some(v) = found {
                return Some(match v {
                    std::borrow::Cow::Borrowed(b) => b,
                    std::borrow::Cow::Owned(o) => arena.alloc_slice_copy(&o),
                });
            }
        }
        None
    }

    /// syslog-ng's LEGACY_MSGHDR: the original `program[pid]: ` text of an RFC 3164 header.
    fn legacy_msghdr(&self) -> Option<&'a [u8]> {
        if self.format != Format::Rfc3164 || self.stage != Stage::Parsed {
            return None;
        }
        let raw = self.msg.raw;
        let program = self.program?;
        let base = raw.as_ptr() as usize;
        let start = (program.as_ptr() as usize).checked_sub(base)?;
        let end = (self.message.as_ptr() as usize).checked_sub(base)?;
        if start > end || end > raw.len() {
            return None;
        }
        let span = &raw[start..end];
        span.starts_with(program).then_some(span)
    }

    /// Whether the message carries `tag` before the running application changes tags.
    pub fn has_tag(&self, tag: &[u8]) -> bool {
        if let Some(o) = self.overlay
            && let Some((_, on)) = o.tags.iter().rev().find(|(t, _)| *t == tag)
        {
            return *on;
        }
        match tag {
            b"wireformat:rfc" => {
                matches!(self.format, Format::Rfc3164 | Format::Rfc5424)
                    && self.stage == Stage::Parsed
            }
            b"wireformat:rfc3164" => self.format == Format::Rfc3164 && self.stage == Stage::Parsed,
            b"wireformat:rfc5424" => self.format == Format::Rfc5424,
            b"wireformat:raw" => self.format == Format::Unparsed,
            b"source_identified" => self.identified,
            b"vps" => !self.netsource.vendor_product.is_empty(),
            _ => {
                if let Some(l) = tag.strip_prefix(b".source.s_") {
                    return l == self.src.listener_id.as_bytes();
                }
                if let Some(v) = tag.strip_prefix(b"ns_vendor:") {
                    return !v.is_empty() && v == self.netsource.vendor.as_bytes();
                }
                if let Some(p) = tag.strip_prefix(b"ns_product:") {
                    return !p.is_empty() && p == self.netsource.product.as_bytes();
                }
                if let Some(a) = tag.strip_prefix(b".app.") {
                    return self.app.is_some_and(|x| x.as_bytes() == a);
                }
                false
            }
        }
    }

    /// The tags the message carries, for `$TAGS`.
    pub fn tags(&self, out: &mut Vec<Vec<u8>>) {
        let mut push = |t: &[u8]| out.push(t.to_vec());
        let mut s = b".source.s_".to_vec();
        s.extend_from_slice(self.src.listener_id.as_bytes());
        push(&s);
        match (self.format, self.stage) {
            (Format::Rfc5424, _) => {
                push(b"wireformat:rfc");
                push(b"wireformat:rfc5424");
            }
            (Format::Rfc3164, Stage::Parsed) => {
                push(b"wireformat:rfc");
                push(b"wireformat:rfc3164");
            }
            (Format::Unparsed, _) => push(b"wireformat:raw"),
            _ => {}
        }
        if !self.netsource.vendor_product.is_empty() {
            push(b"vps");
            push(&[b"ns_vendor:", self.netsource.vendor.as_bytes()].concat());
            push(&[b"ns_product:", self.netsource.product.as_bytes()].concat());
        }
        if self.identified {
            push(b"source_identified");
        }
        if let Some(a) = self.app {
            push(&[b".app.", a.as_bytes()].concat());
        }
        if let Some(o) = self.overlay {
            for (t, on) in o.tags {
                out.retain(|x| x.as_slice() != *t);
                if *on {
                    out.push(t.to_vec());
                }
            }
        }
    }

    /// Every name with a value before the running application (for `format-json --key`,
    /// `groupunset()`): structured data, a parent's pairs, built-in values, the overlay.
    pub fn names(&self, arena: &'a bumpalo::Bump, out: &mut Vec<(String, &'a [u8])>) {
        if let Some(sd) = self.msg.structured_data {
            for el in sd.elements() {
                for p in el.params() {
                    let name = format!(
                        ".SDATA.{}.{}",
                        String::from_utf8_lossy(el.id()),
                        String::from_utf8_lossy(p.name())
                    );
                    let v: &'a [u8] = match p.value() {
                        std::borrow::Cow::Borrowed(b) => b,
                        std::borrow::Cow::Owned(o) => arena.alloc_slice_copy(&o),
                    };
                    out.push((name, v));
                }
            }
        }
        if let Some(("json", _)) = self.sub {
            let mut pairs = Vec::new();
            let text: &'a [u8] = arena.alloc_slice_copy(self.message);
            if super::json::flatten(text, None, arena, &mut pairs) {
                out.extend(pairs.into_iter().map(|(k, v)| (format!(".values.{k}"), v)));
            }
        } else if let Some((topic, nv)) = self.sub {
            let prefix = match topic {
                "cef" => ".metadata.cef.",
                "leef" => ".leef.",
                _ => ".values.",
            };
            for (k, v) in nv.iter() {
                if topic == "cef" && k == "ext" {
                    for p in kv::pairs(v, b' ') {
                        out.push((
                            format!(".values.{}", String::from_utf8_lossy(p.key)),
                            p.value,
                        ));
                    }
                    continue;
                }
                out.push((format!("{prefix}{k}"), v));
            }
        }
        if let Some(values) = self.values
            && let ValuesSyntax::Kv { pair } = values.syntax
        {
            for p in kv::pairs(values.text, pair) {
                let v: &'a [u8] = if p.quoted {
                    let mut o = Vec::new();
                    kv::unquote_into(p.value, &mut o);
                    arena.alloc_slice_copy(&o)
                } else {
                    p.value
                };
                out.push((format!(".values.{}", String::from_utf8_lossy(p.key)), v));
            }
        }
    }
}

fn kv_value<'a>(text: &'a [u8], sep: u8, key: &[u8], arena: &'a bumpalo::Bump) -> Option<&'a [u8]> {
    let p = kv::pairs(text, sep).find(|p| p.key == key)?;
    if p.quoted {
        let mut o = Vec::new();
        kv::unquote_into(p.value, &mut o);
        Some(arena.alloc_slice_copy(&o))
    } else {
        Some(p.value)
    }
}
