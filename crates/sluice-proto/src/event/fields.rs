//! The `fields` object: indexed fields, SC4S's metadata, `sc4s_tags`.

use super::EncodeOptions;
use super::format::{push_u32, write_epoch_millis, write_ip};
use crate::classify::{Classification, Rewrite, SourceMeta};
use crate::json;
use crate::message::{Format, Message, Priority};

pub(super) fn write_fields(
    out: &mut Vec<u8>,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
    recv_unix_micros: i64,
    opts: &EncodeOptions,
) {
    let f = &opts.indexed_fields;
    let pri = msg.priority.unwrap_or(Priority::DEFAULT);
    out.extend_from_slice(b",\"fields\":{\"sc4s_vendor\":\"");
    class.vendor.escape_into(out);
    out.push(b'"');
    // syslog-ng's format-json leaves out an empty value: a parser that sets no product
    // (Clearswift's) has no sc4s_product in SC4S's event.
    if !class.product.is_empty() {
        out.extend_from_slice(b",\"sc4s_product\":\"");
        class.product.escape_into(out);
        out.push(b'"');
    }
    if let Some(c) = class.class.filter(|c| !c.is_empty()) {
        out.extend_from_slice(b",\"sc4s_class\":");
        c.write_json(out);
    }
    for (name, value) in class.fields.iter() {
        out.extend_from_slice(b",\"");
        json::escape_into(out, name.as_bytes());
        out.extend_from_slice(b"\":\"");
        value.escape_into(out);
        out.push(b'"');
    }
    if let Some(local) = &class.local {
        for (name, value) in local.fields() {
            if class.fields.get(name).is_some()
                || class.compliance.iter().any(|(n, _)| &**n == name)
            {
                continue;
            }
            out.extend_from_slice(b",\"");
            json::escape_into(out, name.as_bytes());
            out.extend_from_slice(b"\":");
            json::write_str(out, value);
        }
    }
    for (name, value) in class.compliance {
        out.extend_from_slice(b",\"");
        json::escape_into(out, name.as_bytes());
        out.extend_from_slice(b"\":\"");
        json::escape_into(out, value.as_bytes());
        out.push(b'"');
    }
    if f.facility {
        out.extend_from_slice(b",\"sc4s_syslog_facility\":\"");
        json::push_plain(out, pri.facility_name().as_bytes());
        out.push(b'"');
    }
    if f.severity {
        out.extend_from_slice(b",\"sc4s_syslog_severity\":\"");
        json::push_plain(out, pri.severity_name().as_bytes());
        out.push(b'"');
    }
    if f.container {
        out.extend_from_slice(b",\"sc4s_container\":");
        json::write_str(out, opts.loghost.as_bytes());
    }
    if let Some(host) = opts.container_host.as_deref().filter(|h| !h.is_empty()) {
        out.extend_from_slice(b",\"sc4s_loghost\":");
        json::write_str(out, host.as_bytes());
    }
    if f.destport {
        out.extend_from_slice(b",\"sc4s_destport\":\"");
        push_u32(out, u32::from(src.dest_port));
        out.push(b'"');
    }
    if f.fromhostip {
        out.extend_from_slice(b",\"sc4s_fromhostip\":\"");
        write_ip(out, src.source_ip);
        out.push(b'"');
    }
    if f.proto {
        out.extend_from_slice(b",\"sc4s_proto\":\"");
        json::push_plain(out, src.transport.sc4s_proto().as_bytes());
        out.push(b'"');
    }
    if f.recv_time {
        out.extend_from_slice(b",\"sc4s_recv_time\":\"");
        write_epoch_millis(out, recv_unix_micros);
        out.push(b'"');
    }
    out.extend_from_slice(b",\"sc4s_tags\":\".source.s_");
    json::escape_into(out, src.listener_id.as_bytes());
    // One fixed-size copy per arm (a slice chosen by the match would be a `memcpy` call).
    match class.format {
        Format::Rfc5424 => out.extend_from_slice(b"|wireformat:rfc|wireformat:rfc5424"),
        Format::Rfc3164 => out.extend_from_slice(b"|wireformat:rfc|wireformat:rfc3164"),
        Format::Unparsed => out.extend_from_slice(b"|wireformat:raw"),
    }
    if let Rewrite::InvalidProgram(rule) = class.rewrite {
        out.extend_from_slice(b"|.app.");
        json::push_plain(out, rule.app_name().as_bytes());
    }
    out.extend_from_slice(b"|.app.");
    json::escape_into(out, class.app.as_bytes());
    if let Some(local) = &class.local {
        for tag in local.tags() {
            out.push(b'|');
            json::escape_into(out, tag);
        }
    }
    out.extend_from_slice(b"\"}");
}

/// Adds `tag` to the `sc4s_tags` of the event [`encode_event`] just wrote at `out[start..]`
/// (`...|.app.x"}}` becomes `...|.app.x|tag"}}`). Returns `false`, changing nothing, when the
/// event has no `fields` object (indexed fields `none`). For marks that concern one event in
/// a great many (a partial frame), so the common path pays nothing for them.
pub fn append_tag(out: &mut Vec<u8>, start: usize, tag: &str) -> bool {
    const END: &[u8] = b"\"}}";
    let event = &out[start..];
    if !event.ends_with(END) || !event.windows(13).any(|w| w == b"\"sc4s_tags\":\"") {
        return false;
    }
    let at = out.len() - END.len();
    let mut escaped = Vec::with_capacity(tag.len() + 1);
    escaped.push(b'|');
    json::escape_into(&mut escaped, tag.as_bytes());
    out.splice(at..at, escaped);
    true
}
