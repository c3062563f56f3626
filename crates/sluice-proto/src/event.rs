//! The SC4S HEC event JSON, written straight into a batch buffer.
//!
//! [`encode_event`] appends exactly one JSON object — no trailing newline; the batch builder
//! separates events with `\n` as syslog-ng's `http()` driver does — shaped like SC4S's
//! `t_splunk_hec` (`conflib/_common/t_templates.conf`; sc4s notes §b):
//!
//! ```text
//! {"time":"1710166925.412","host":"web-01","source":"program:sshd","sourcetype":"nix:syslog",
//!  "index":"osnix","event":"sshd[4121]: Accepted ...","fields":{...}}
//! ```
//!
//! Every value is a JSON string, as `format-json` writes them. Byte fields go through
//! [`crate::json`], so invalid UTF-8 becomes U+FFFD and control bytes (NUL included) are
//! escaped; the output is always valid UTF-8 JSON.
//!
//! # Top-level keys
//!
//! * `time`: `S_UNIXTIME` — the message's timestamp, or the receive time when it has none —
//!   as epoch seconds with exactly three decimals, truncated (`frac-digits(3)`).
//! * `host`: HOST lowercased (ASCII letters) while copying. HOST is the parsed hostname, or
//!   the sender's IP when the message has none or when classification found it invalid
//!   ([`Rewrite::InvalidHost`]). IPv4-mapped IPv6 senders (dual-stack sockets) are written
//!   as plain IPv4, as SC4S's default IPv4 listeners report them.
//! * `source`, `sourcetype`, `index`: from the [`Classification`]; a program source is
//!   written `program:<PROGRAM>`.
//! * `event`: the text of the classification's [`Template`]:
//!   * [`Template::HdrMsg`] (`t_hdr_msg`): `${MSGHDR}${MESSAGE}`. For RFC 3164 MSGHDR is the
//!     original tag text, byte for byte (what syslog-ng keeps as LEGACY_MSGHDR: program,
//!     `[pid]`, the colon and one space, e.g. `sshd[4121]: `); it is recovered from the
//!     message's raw bytes, between the start of PROGRAM and the start of MESSAGE (a BOM
//!     the parser removed is not repeated). Where that span is not available (a message
//!     built by hand) and for RFC 5424, MSGHDR is rebuilt as `PROGRAM[PID]: ` or
//!     `PROGRAM: `, syslog-ng's own MSGHDR. No PROGRAM, no MSGHDR.
//!   * [`Template::Rfc5424Compact`] (`t_5424_hdr_sdata_compact`):
//!     `- - ${PROGRAM:--} ${PID:--} ${MSGID:--} ${SDATA:--}${MESSAGE}` — no space between
//!     SDATA and MESSAGE, as in SC4S. SDATA is re-serialised from the parsed elements as
//!     `[id name="value" ...]`, values escaped for `"`, `\` and `]` (a backslash the sender
//!     did not use as an escape is doubled, so the output is valid SD again). Repeated
//!     parameter names are all kept (syslog-ng would keep only the last). An absent
//!     MESSAGE is empty.
//!   * [`Template::FallbackKv`] (`t_fallback_kv`): lines `KEY=value\n`, only for non-empty
//!     values, in the order `RAWMSG` (only with [`EncodeOptions::store_raw_message`]; the
//!     input after trailing LF/CR/NUL were stripped), `PRI` (numeric; input without a
//!     valid PRI gets 13, user.notice, syslog-ng's `default-priority`, so `<999>x` and an
//!     empty datagram report `PRI=13`), `LEGACY_MSGHDR` (RFC 3164 tag text, see above),
//!     `PROGRAM`, `PID`, `MESSAGE`.
//!
//!   The header repairs of [`Rewrite`] are applied here: with `InvalidProgram`, MESSAGE is
//!   `MSGHDR MESSAGE` and PROGRAM/PID/LEGACY_MSGHDR are empty; with `InvalidHost`, MESSAGE
//!   is `HOST SP MSGHDR MESSAGE` (the original hostname bytes), likewise.
//!
//!   The event is never blank (HEC rejects it with error 13): `PRI=` is always present in
//!   the fallback text, and any other template that renders empty (only possible through a
//!   `sc4s_template` override) is replaced by the fallback text.
//! * `fields` (omitted entirely when the indexed-field setting is exactly `none`, as
//!   `t_splunk_hec` does): `sc4s_vendor`, `sc4s_product`, `sc4s_class` (when set); then,
//!   each when its token is a substring of `SC4S_DEST_SPLUNK_INDEXED_FIELDS`
//!   ([`IndexedFields`]): `sc4s_syslog_facility` (`facility`; name, e.g. `local4`),
//!   `sc4s_syslog_severity` (`severity`; e.g. `info`), `sc4s_container` (`container`; the
//!   receiving host's name, [`EncodeOptions::loghost`]), `sc4s_destport` (`destport`),
//!   `sc4s_fromhostip` (`fromhostip`), `sc4s_proto` (`proto`; `UDP`/`TCP`),
//!   `sc4s_recv_time` (`r_unixtime`; receive time, 3 decimals); `sc4s_loghost` when
//!   [`EncodeOptions::container_host`] is non-empty (SC4S never checks the `loghost` token);
//!   and `sc4s_tags`, always.
//!
//! # `sc4s_tags`
//!
//! syslog-ng prints its message tags `|`-separated, in tag-registration order, and SC4S
//! adds many along the way. sluice emits the ones with a meaning, in this order:
//! `.source.s_<listener id>`; the wire format — `wireformat:rfc|wireformat:rfc5424`,
//! `wireformat:rfc|wireformat:rfc3164`, or `wireformat:raw` for unparsed input; the
//! `.app.<application>` of a `fix-invalid-program` rule that fired; and
//! `.app.<application>` of the classifying application (e.g.
//! `.app.app-fallback-nix_syslog`). Example:
//! `.source.s_DEFAULT|wireformat:rfc|wireformat:rfc3164|.app.app-fallback-nix_syslog`.
//!
//! # Cost
//!
//! No allocation per event: numbers are formatted on the stack and stored as fixed-size blocks, strings are
//! escaped while copied, and the only reservation is the output buffer's own growth.

use crate::classify::{Classification, HostEdit, Rewrite, SourceMeta, Template};
use crate::json;
use crate::message::{Message, Priority, Timestamp};

mod fields;
mod format;
mod format_json;
mod nested;
mod relay;
mod sdata;
mod values;
mod view;

pub use fields::append_tag;
use fields::write_fields;
pub(crate) use format::write_ip;
use format::{push_u32, write_bsd_stamp, write_epoch_millis, write_isodate};
pub use relay::{RelayEncoding, RelayFormat, encode_relay};
use sdata::write_sdata;
use values::{write_values_json, write_values_json_msg, write_values_welf};
use view::View;

/// Which indexed fields are sent: SC4S `SC4S_DEST_SPLUNK_INDEXED_FIELDS`, pre-parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexedFields {
    /// `false` when the setting is `none`: no `fields` object at all.
    pub enabled: bool,
    pub facility: bool,
    pub severity: bool,
    pub container: bool,
    pub destport: bool,
    pub fromhostip: bool,
    pub proto: bool,
    pub recv_time: bool,
}

impl IndexedFields {
    /// SC4S's default (`package/sbin/entrypoint.sh`).
    pub const SC4S_DEFAULT: &'static str =
        "r_unixtime,facility,container,loghost,destport,fromhostip,proto,severity";

    /// Parses the SC4S setting the way SC4S tests it: `none` (exactly, after trimming
    /// spaces) disables the `fields` object; otherwise each field is on when its token is a
    /// substring of the value (so `destport` must be spelled out; the documented `dport`
    /// does not match, in SC4S either).
    pub fn from_sc4s(value: &str) -> IndexedFields {
        let value = value.trim();
        if value == "none" {
            return IndexedFields {
                enabled: false,
                facility: false,
                severity: false,
                container: false,
                destport: false,
                fromhostip: false,
                proto: false,
                recv_time: false,
            };
        }
        IndexedFields {
            enabled: true,
            facility: value.contains("facility"),
            severity: value.contains("severity"),
            container: value.contains("container"),
            destport: value.contains("destport"),
            fromhostip: value.contains("fromhostip"),
            proto: value.contains("proto"),
            recv_time: value.contains("r_unixtime"),
        }
    }
}

impl Default for IndexedFields {
    fn default() -> Self {
        IndexedFields::from_sc4s(IndexedFields::SC4S_DEFAULT)
    }
}

/// Settings of the encoder that do not change per message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    pub indexed_fields: IndexedFields,
    /// The receiving host's name (syslog-ng `$LOGHOST`), sent as `sc4s_container`.
    pub loghost: String,
    /// `SC4S_CONTAINER_HOST`, sent as `sc4s_loghost` when non-empty.
    pub container_host: Option<String>,
    /// `SC4S_SOURCE_STORE_RAWMSG`: include `RAWMSG=` in fallback events.
    pub store_raw_message: bool,
}

impl EncodeOptions {
    /// SC4S defaults, with `loghost` as the receiving host's name.
    pub fn new(loghost: impl Into<String>) -> EncodeOptions {
        EncodeOptions {
            indexed_fields: IndexedFields::default(),
            loghost: loghost.into(),
            container_host: None,
            store_raw_message: false,
        }
    }
}

/// Appends one SC4S-shaped HEC event for `msg` to `out`. See the module docs.
pub fn encode_event(
    out: &mut Vec<u8>,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
    recv_unix_micros: i64,
    opts: &EncodeOptions,
) {
    out.reserve(256 + msg.raw.len() + msg.raw.len() / 8);
    out.extend_from_slice(b"{\"time\":\"");
    write_epoch_millis(out, class.time_micros(msg, recv_unix_micros));

    // Each value's closing quote goes out with the next key: one store instead of two.
    out.extend_from_slice(b"\",\"host\":\"");
    write_host_unquoted(out, msg, class, src);

    out.extend_from_slice(b"\",\"source\":\"");
    class.source.escape_into(out);
    out.extend_from_slice(b"\",\"sourcetype\":\"");
    class.sourcetype.escape_into(out);
    out.extend_from_slice(b"\",\"index\":\"");
    class.index.escape_into(out);

    out.extend_from_slice(b"\",\"event\":\"");
    let view = View::new(msg, class);
    let text_start = out.len();
    match class.text {
        Some(text) => json::escape_into(out, text),
        None => write_template(out, msg, class, src, &view, recv_unix_micros, opts),
    }
    if out.len() == text_start {
        write_fallback_kv(out, msg, &view, opts);
    }
    out.push(b'"');

    if opts.indexed_fields.enabled {
        write_fields(out, msg, class, src, recv_unix_micros, opts);
    }
    out.push(b'}');
}

/// HOST, lowercased, JSON-escaped without quotes (the `host` key's value and the host inside
/// the event text): the vendor's or `host.csv`'s, the header's, or the sender's IP.
fn write_host_unquoted(
    out: &mut Vec<u8>,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
) {
    match class.host {
        HostEdit::Set(v) if !v.is_empty() => {
            let (a, b) = v.parts();
            json::escape_lowercase_into(out, a);
            json::escape_lowercase_into(out, b);
        }
        HostEdit::Keep if class.rewrite != Rewrite::InvalidHost => {
            match msg.hostname.filter(|h| !h.is_empty()) {
                Some(host) => json::escape_lowercase_into(out, host),
                None => write_ip(out, src.source_ip),
            }
        }
        _ => write_ip(out, src.source_ip),
    }
}

#[allow(clippy::too_many_arguments)]
fn write_template(
    out: &mut Vec<u8>,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
    view: &View<'_>,
    recv_unix_micros: i64,
    opts: &EncodeOptions,
) {
    match class.template {
        Template::HdrMsg => {
            view.header.write(out);
            view.message.write(out);
        }
        Template::MsgOnly => view.message.write(out),
        Template::MsgTrim => view.message.write_trimmed(out),
        Template::LegacyHdrMsg => {
            if view.legacy {
                view.header.write(out);
            }
            view.message.write(out);
        }
        Template::ProgramMsg | Template::ProgramNopidMsg => {
            if let Some(p) = view.program {
                json::escape_into(out, p);
            }
            if class.template == Template::ProgramMsg {
                out.push(b'[');
                if let Some(p) = view.pid {
                    json::escape_into(out, p);
                }
                out.push(b']');
            }
            out.extend_from_slice(b": ");
            view.message.write(out);
        }
        Template::HdrSdataMsg => {
            view.header.write(out);
            if let Some(m) = msg.msgid.filter(|m| !m.is_empty()) {
                json::escape_into(out, m);
            }
            out.push(b' ');
            if let Some(sd) = msg.structured_data {
                write_sdata(out, sd);
            }
            out.push(b' ');
            view.message.write(out);
        }
        Template::Standard | Template::Everything => {
            let ts = class.timestamp(msg).unwrap_or(Timestamp {
                unix_secs: recv_unix_micros.div_euclid(1_000_000),
                micros: recv_unix_micros.rem_euclid(1_000_000) as u32,
                offset_secs: 0,
            });
            if class.template == Template::Standard {
                write_bsd_stamp(out, ts);
                out.push(b' ');
                write_host_unquoted(out, msg, class, src);
                out.push(b' ');
                view.header.write(out);
            } else {
                write_isodate(out, ts);
                out.push(b' ');
                write_host_unquoted(out, msg, class, src);
                out.push(b' ');
                if view.legacy {
                    view.header.write(out);
                }
            }
            view.message.write(out);
        }
        Template::Rfc5424Compact => write_5424_compact(out, msg, view),
        Template::FallbackKv => write_fallback_kv(out, msg, view, opts),
        Template::JsonValues => write_values_json(out, class.values, msg),
        Template::KvValues => write_values_welf(out, class.values, msg),
        Template::JsonValuesMsg => write_values_json_msg(out, class.values, msg, view),
        // Rendered at classification ([`Classification::text`]); without a text the
        // fallback text stands in (the caller writes it for an empty event).
        Template::Local(_) => {}
    }
}

fn write_5424_compact(out: &mut Vec<u8>, msg: &Message<'_>, view: &View<'_>) {
    out.extend_from_slice(b"- - ");
    write_or_dash(out, view.program);
    out.push(b' ');
    write_or_dash(out, view.pid);
    out.push(b' ');
    write_or_dash(out, msg.msgid.filter(|m| !m.is_empty()));
    out.push(b' ');
    if !msg.structured_data.is_some_and(|sd| write_sdata(out, sd)) {
        out.push(b'-');
    }
    view.message.write(out);
}

fn write_or_dash(out: &mut Vec<u8>, value: Option<&[u8]>) {
    match value {
        Some(v) => json::escape_into(out, v),
        None => out.push(b'-'),
    }
}

fn write_fallback_kv(out: &mut Vec<u8>, msg: &Message<'_>, view: &View<'_>, opts: &EncodeOptions) {
    const NL: &[u8] = b"\\n";
    if opts.store_raw_message && !msg.raw.is_empty() {
        out.extend_from_slice(b"RAWMSG=");
        json::escape_into(out, msg.raw);
        out.extend_from_slice(NL);
    }
    out.extend_from_slice(b"PRI=");
    let pri = msg.priority.unwrap_or(Priority::DEFAULT).value();
    push_u32(out, u32::from(pri));
    out.extend_from_slice(NL);
    if view.legacy && !view.header.is_empty() {
        out.extend_from_slice(b"LEGACY_MSGHDR=");
        view.header.write(out);
        out.extend_from_slice(NL);
    }
    if let Some(program) = view.program {
        out.extend_from_slice(b"PROGRAM=");
        json::escape_into(out, program);
        out.extend_from_slice(NL);
    }
    if let Some(pid) = view.pid {
        out.extend_from_slice(b"PID=");
        json::escape_into(out, pid);
        out.extend_from_slice(NL);
    }
    if !view.message.is_empty() {
        out.extend_from_slice(b"MESSAGE=");
        view.message.write(out);
        out.extend_from_slice(NL);
    }
}

#[cfg(test)]
mod tests;
