//! Kafka records, encoded on the receive path beside the HEC event so that a Kafka destination
//! gets, per event, everything it sends: the topic, the key and the value.
//!
//! * **Topic and key** are templates over the event's metadata ([`RecordTemplate`]):
//!   literal text and `${field}` with the fields of [`Field`]. A topic whose template names a
//!   field the event has empty (no vendor, say) is the fallback topic instead, and the record
//!   says so (the output counts it). Characters Kafka does not allow in a topic name
//!   (anything but `A-Z a-z 0-9 . _ -`) become `_` (`cisco:asa` is `cisco_asa`); a topic is
//!   at most 249 bytes. The key is the template's text as it is (default: the sender's
//!   address, so one sender's events stay in order in one partition); an empty key is no key.
//! * **Value**: the HEC event JSON exactly as the HEC destination sends it, or the message as
//!   it was received ([`RecordValue::Raw`]).
//!
//! The encoded record (one event of a batch, see [`crate::batch`], "Other encodings"):
//!
//! ```text
//! flags u8 | topic_len u8 | topic | key_len u16 LE | key | value
//! ```
//!
//! `flags` bit 0: the topic is the fallback. [`decode_record`] reads it back (from memory or
//! the disk buffer) and checks every length; it never trusts them.

use std::fmt;
use std::net::IpAddr;

use crate::classify::{Classification, HostEdit, Rewrite, SourceMeta};
use crate::event::write_ip;
use crate::message::Message;

/// The longest topic name Kafka accepts.
pub const MAX_TOPIC: usize = 249;
/// The longest key sluice writes (longer ones are cut).
pub const MAX_KEY: usize = u16::MAX as usize;

const FLAG_FALLBACK: u8 = 1;

/// A field a topic or key template can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Index,
    Sourcetype,
    Source,
    Vendor,
    Product,
    /// `vendor_product`, as SC4S names its settings (`cisco_asa`).
    VendorProduct,
    Class,
    Host,
    /// The sender's address.
    SourceIp,
}

impl Field {
    pub const NAMES: &'static [(&'static str, Field)] = &[
        ("index", Field::Index),
        ("sourcetype", Field::Sourcetype),
        ("source", Field::Source),
        ("vendor", Field::Vendor),
        ("product", Field::Product),
        ("vendor_product", Field::VendorProduct),
        ("class", Field::Class),
        ("host", Field::Host),
        ("source_ip", Field::SourceIp),
    ];

    fn by_name(name: &str) -> Option<Field> {
        Field::NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, f)| *f)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Part {
    Text(Box<[u8]>),
    Field(Field),
}

/// A parsed `literal${field}literal` template.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Template {
    parts: Vec<Part>,
}

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unknown field ${{{0}}} (known: {known})", known = known_fields())]
    UnknownField(String),
    #[error("a `${{` without its closing `}}`")]
    Unclosed,
}

fn known_fields() -> String {
    Field::NAMES
        .iter()
        .map(|(n, _)| format!("${{{n}}}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Template {
    pub fn parse(s: &str) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = s;
        while let Some(at) = rest.find("${") {
            if at > 0 {
                parts.push(Part::Text(rest.as_bytes()[..at].into()));
            }
            let after = &rest[at + 2..];
            let end = after.find('}').ok_or(TemplateError::Unclosed)?;
            let name = after[..end].trim();
            let f = Field::by_name(name).ok_or_else(|| TemplateError::UnknownField(name.into()))?;
            parts.push(Part::Field(f));
            rest = &after[end + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.as_bytes().into()));
        }
        Ok(Template { parts })
    }

    /// Whether the template names no field.
    pub fn is_constant(&self) -> bool {
        self.parts.iter().all(|p| matches!(p, Part::Text(_)))
    }

    /// Writes the template for one event; `false` when a field it names is empty.
    fn write(&self, out: &mut Vec<u8>, ev: &EventFields<'_, '_, '_>) -> bool {
        let mut complete = true;
        for p in &self.parts {
            match p {
                Part::Text(t) => out.extend_from_slice(t),
                Part::Field(f) => {
                    let before = out.len();
                    ev.write(*f, out);
                    complete &= out.len() > before;
                }
            }
        }
        complete
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.parts {
            match p {
                Part::Text(t) => f.write_str(&String::from_utf8_lossy(t))?,
                Part::Field(field) => {
                    let name = Field::NAMES
                        .iter()
                        .find(|(_, x)| x == field)
                        .map_or("?", |(n, _)| n);
                    write!(f, "${{{name}}}")?;
                }
            }
        }
        Ok(())
    }
}

/// What a record's value is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RecordValue {
    /// The HEC event JSON, as the HEC destination sends it.
    #[default]
    Hec,
    /// The message as received (without the frame or trailing line feed).
    Raw,
}

/// How a Kafka destination's records are made.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordTemplate {
    pub topic: Template,
    /// The topic of an event whose topic template names an empty field.
    pub fallback_topic: String,
    pub key: Template,
    pub value: RecordValue,
}

/// The metadata fields of one event.
struct EventFields<'a, 'm, 't> {
    msg: &'a Message<'m>,
    class: &'a Classification<'m, 't>,
    src: &'a SourceMeta<'a>,
}

impl EventFields<'_, '_, '_> {
    fn write(&self, f: Field, out: &mut Vec<u8>) {
        let c = self.class;
        match f {
            Field::Index => c.index.push_to(out),
            Field::Sourcetype => c.sourcetype.push_to(out),
            Field::Source => c.source.push_to(out),
            Field::Vendor => c.vendor.push_to(out),
            Field::Product => c.product.push_to(out),
            Field::VendorProduct => {
                if !c.vendor.is_empty() && !c.product.is_empty() {
                    c.vendor.push_to(out);
                    out.push(b'_');
                    c.product.push_to(out);
                }
            }
            Field::Class => {
                if let Some(v) = &c.class {
                    v.push_to(out);
                }
            }
            Field::Host => write_host(out, self.msg, c, self.src.source_ip),
            Field::SourceIp => write_ip(out, self.src.source_ip),
        }
    }
}

/// HOST as the HEC event has it (lowercased; the sender's address when there is none).
fn write_host(out: &mut Vec<u8>, msg: &Message<'_>, c: &Classification<'_, '_>, ip: IpAddr) {
    let lower = |out: &mut Vec<u8>, b: &[u8]| out.extend(b.iter().map(u8::to_ascii_lowercase));
    match c.host {
        HostEdit::Set(v) if !v.is_empty() => {
            let (a, b) = v.parts();
            lower(out, a);
            lower(out, b);
        }
        HostEdit::Keep if c.rewrite != Rewrite::InvalidHost => {
            match msg.hostname.filter(|h| !h.is_empty()) {
                Some(h) => lower(out, h),
                None => write_ip(out, ip),
            }
        }
        _ => write_ip(out, ip),
    }
}

/// Appends the record of one event; `hec_event` is its HEC event JSON (the value with
/// [`RecordValue::Hec`]).
pub fn encode_record(
    out: &mut Vec<u8>,
    spec: &RecordTemplate,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
    hec_event: &[u8],
) {
    let ev = EventFields { msg, class, src };
    let head = out.len();
    out.extend_from_slice(&[0, 0]);
    let topic_start = out.len();
    let mut flags = 0;
    if !spec.topic.write(out, &ev) {
        out.truncate(topic_start);
        out.extend_from_slice(spec.fallback_topic.as_bytes());
        flags |= FLAG_FALLBACK;
    }
    for b in &mut out[topic_start..] {
        if !(b.is_ascii_alphanumeric() || matches!(*b, b'.' | b'_' | b'-')) {
            *b = b'_';
        }
    }
    out.truncate(topic_start + (out.len() - topic_start).min(MAX_TOPIC));
    let topic_len = out.len() - topic_start;
    out[head] = flags;
    out[head + 1] = topic_len as u8;
    let key_head = out.len();
    out.extend_from_slice(&[0, 0]);
    let key_start = out.len();
    spec.key.write(out, &ev);
    out.truncate(key_start + (out.len() - key_start).min(MAX_KEY));
    let key_len = (out.len() - key_start) as u16;
    out[key_head..key_head + 2].copy_from_slice(&key_len.to_le_bytes());
    match spec.value {
        RecordValue::Hec => out.extend_from_slice(hec_event),
        RecordValue::Raw => out.extend_from_slice(msg.raw),
    }
}

/// One record read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub topic: &'a [u8],
    /// `None`: no key.
    pub key: Option<&'a [u8]>,
    pub value: &'a [u8],
    /// The topic is the fallback (the template named an empty field).
    pub fallback_topic: bool,
}

/// A record that [`encode_record`] cannot have written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a Kafka record shorter than its lengths say, or with an empty topic")]
pub struct BadRecord;

/// Reads a record written by [`encode_record`]; every length is checked.
pub fn decode_record(b: &[u8]) -> Result<Record<'_>, BadRecord> {
    let (&flags, rest) = b.split_first().ok_or(BadRecord)?;
    let (&tlen, rest) = rest.split_first().ok_or(BadRecord)?;
    let tlen = usize::from(tlen);
    if tlen == 0 || rest.len() < tlen + 2 {
        return Err(BadRecord);
    }
    let (topic, rest) = rest.split_at(tlen);
    let klen = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
    let rest = &rest[2..];
    if rest.len() < klen {
        return Err(BadRecord);
    }
    let (key, value) = rest.split_at(klen);
    Ok(Record {
        topic,
        key: (klen > 0).then_some(key),
        value,
        fallback_topic: flags & FLAG_FALLBACK != 0,
    })
}

#[cfg(test)]
mod tests;
