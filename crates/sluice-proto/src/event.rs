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

use std::io::Write as _;
use std::net::IpAddr;

use crate::classify::{
    Classification, HostEdit, Rewrite, SourceMeta, Template, Value, Values, ValuesSyntax, kv,
};
use crate::json;
use crate::message::{Format, Message, Priority, StructuredData, Timestamp};
use crate::time::civil_from_days;

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

    out.extend_from_slice(b"\",\"host\":");
    write_host(out, msg, class, src);

    out.extend_from_slice(b",\"source\":");
    class.source.write_json(out);
    out.extend_from_slice(b",\"sourcetype\":");
    class.sourcetype.write_json(out);
    out.extend_from_slice(b",\"index\":");
    class.index.write_json(out);

    out.extend_from_slice(b",\"event\":\"");
    let view = View::new(msg, class);
    let text_start = out.len();
    write_template(out, msg, class, src, &view, recv_unix_micros, opts);
    if out.len() == text_start {
        write_fallback_kv(out, msg, &view, opts);
    }
    out.push(b'"');

    if opts.indexed_fields.enabled {
        write_fields(out, msg, class, src, recv_unix_micros, opts);
    }
    out.push(b'}');
}

/// HOST, lowercased, as a JSON string: the vendor's or `host.csv`'s, the header's, or the
/// sender's IP.
fn write_host(
    out: &mut Vec<u8>,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
) {
    out.push(b'"');
    write_host_unquoted(out, msg, class, src);
    out.push(b'"');
}

/// The host as it appears inside the event text: the JSON string's escaped content without
/// its quotes.
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
        Template::JsonValues => write_values_json(out, class.values),
        Template::KvValues => write_values_welf(out, class.values),
    }
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

fn local_parts(ts: Timestamp) -> (i32, u8, u8, i64) {
    let local = ts.unix_secs + i64::from(ts.offset_secs);
    let (y, m, d) = civil_from_days(local.div_euclid(86_400));
    (y, m, d, local.rem_euclid(86_400))
}

fn push_2(out: &mut Vec<u8>, v: i64) {
    out.push(b'0' + (v / 10 % 10) as u8);
    out.push(b'0' + (v % 10) as u8);
}

/// `Mar 05 14:23:10` (syslog-ng's `${MONTH_ABBREV} ${DAY} ${HOUR}:${MIN}:${SEC}`).
fn write_bsd_stamp(out: &mut Vec<u8>, ts: Timestamp) {
    let (_, m, d, sod) = local_parts(ts);
    out.extend_from_slice(MONTHS[usize::from(m.clamp(1, 12) - 1)]);
    out.push(b' ');
    push_2(out, i64::from(d));
    out.push(b' ');
    push_2(out, sod / 3600);
    out.push(b':');
    push_2(out, sod / 60 % 60);
    out.push(b':');
    push_2(out, sod % 60);
}

/// `2024-03-05T14:23:10.123+00:00` (syslog-ng's `${ISODATE}` with `frac-digits(3)`).
fn write_isodate(out: &mut Vec<u8>, ts: Timestamp) {
    let (y, m, d, sod) = local_parts(ts);
    out.extend_from_slice(itoa::Buffer::new().format(y).as_bytes());
    out.push(b'-');
    push_2(out, i64::from(m));
    out.push(b'-');
    push_2(out, i64::from(d));
    out.push(b'T');
    push_2(out, sod / 3600);
    out.push(b':');
    push_2(out, sod / 60 % 60);
    out.push(b':');
    push_2(out, sod % 60);
    let ms = ts.micros / 1000;
    out.extend_from_slice(&[
        b'.',
        b'0' + (ms / 100) as u8,
        b'0' + (ms / 10 % 10) as u8,
        b'0' + (ms % 10) as u8,
    ]);
    let o = ts.offset_secs;
    out.push(if o < 0 { b'-' } else { b'+' });
    let o = i64::from(o.unsigned_abs());
    push_2(out, o / 3600);
    out.push(b':');
    push_2(out, o / 60 % 60);
}

/// `t_json_values`: the parsed values as one JSON object, escaped into the event string.
fn write_values_json(out: &mut Vec<u8>, values: Option<Values<'_>>) {
    let Some(v) = values else {
        out.extend_from_slice(b"{}");
        return;
    };
    match v.syntax {
        ValuesSyntax::Json => {
            // Insignificant whitespace dropped, the rest copied.
            let mut compact = Vec::with_capacity(v.text.len());
            let mut in_str = false;
            let mut escaped = false;
            for &b in v.text {
                if in_str {
                    compact.push(b);
                    match (escaped, b) {
                        (true, _) => escaped = false,
                        (false, b'\\') => escaped = true,
                        (false, b'"') => in_str = false,
                        _ => {}
                    }
                } else if !b.is_ascii_whitespace() {
                    if b == b'"' {
                        in_str = true;
                    }
                    compact.push(b);
                }
            }
            json::escape_into(out, &compact);
        }
        ValuesSyntax::Kv { pair } => {
            let mut obj = Vec::with_capacity(v.text.len() + 16);
            obj.push(b'{');
            let mut value = Vec::new();
            for (i, p) in kv::pairs(v.text, pair).enumerate() {
                if i > 0 {
                    obj.push(b',');
                }
                json::write_str(&mut obj, p.key);
                obj.push(b':');
                value.clear();
                if p.quoted {
                    kv::unquote_into(p.value, &mut value);
                } else {
                    value.extend_from_slice(p.value);
                }
                json::write_str(&mut obj, &value);
            }
            obj.push(b'}');
            json::escape_into(out, &obj);
        }
    }
}

/// `t_kv_values`: the parsed values as WELF `key=value` pairs (values with a space quoted).
fn write_values_welf(out: &mut Vec<u8>, values: Option<Values<'_>>) {
    let Some(v) = values else {
        return;
    };
    let ValuesSyntax::Kv { pair } = v.syntax else {
        json::escape_into(out, v.text);
        return;
    };
    let mut value = Vec::new();
    for (i, p) in kv::pairs(v.text, pair).enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        json::escape_into(out, p.key);
        out.push(b'=');
        value.clear();
        if p.quoted {
            kv::unquote_into(p.value, &mut value);
        } else {
            value.extend_from_slice(p.value);
        }
        if value.contains(&b' ') {
            out.extend_from_slice(b"\\\"");
            json::escape_into(out, &value);
            out.extend_from_slice(b"\\\"");
        } else {
            json::escape_into(out, &value);
        }
    }
}

/// The fields of a message as SC4S's templates see them after the header repairs.
struct View<'a> {
    program: Option<&'a [u8]>,
    pid: Option<&'a [u8]>,
    /// MSGHDR (and, for RFC 3164, LEGACY_MSGHDR) of the effective PROGRAM.
    header: Header<'a>,
    message: Text<'a>,
    /// LEGACY_MSGHDR exists only for RFC 3164.
    legacy: bool,
}

impl<'a> View<'a> {
    fn new(msg: &Message<'a>, class: &Classification<'a, 'a>) -> View<'a> {
        let v = class.view;
        let body = Value::Bytes(v.message.unwrap_or_default());
        let original = Header::of(msg, v.program, v.pid, v.message);
        let legacy = class.format == Format::Rfc3164;
        let mut view = match class.rewrite {
            Rewrite::None => View {
                program: v.program,
                pid: v.pid,
                header: original,
                message: Text {
                    host: None,
                    header: Header::None,
                    body,
                },
                legacy,
            },
            Rewrite::InvalidProgram(_) => View {
                program: None,
                pid: None,
                header: Header::None,
                message: Text {
                    host: None,
                    header: original,
                    body,
                },
                legacy,
            },
            Rewrite::InvalidHost => View {
                program: None,
                pid: None,
                header: Header::None,
                message: Text {
                    host: msg.hostname.filter(|h| !h.is_empty()),
                    header: original,
                    body,
                },
                legacy,
            },
        };
        let e = class.edit;
        if e.program.is_some() || e.pid.is_some() {
            if let Some(p) = e.program {
                view.program = p.filter(|p| !p.is_empty());
            }
            if let Some(p) = e.pid {
                view.pid = p.filter(|p| !p.is_empty());
            }
            view.header = match view.program {
                Some(program) => Header::Built {
                    program,
                    pid: view.pid,
                },
                None => Header::None,
            };
        }
        if let Some(m) = e.message {
            view.message = Text {
                host: None,
                header: Header::None,
                body: m,
            };
        }
        view
    }
}

#[derive(Clone, Copy)]
enum Header<'a> {
    None,
    /// The original tag text from the raw message.
    Span(&'a [u8]),
    /// Rebuilt `PROGRAM[PID]: ` / `PROGRAM: `.
    Built {
        program: &'a [u8],
        pid: Option<&'a [u8]>,
    },
}

impl<'a> Header<'a> {
    fn of(
        msg: &Message<'a>,
        program: Option<&'a [u8]>,
        pid: Option<&'a [u8]>,
        message: Option<&'a [u8]>,
    ) -> Header<'a> {
        let Some(program) = program.filter(|p| !p.is_empty()) else {
            return Header::None;
        };
        if msg.format == Format::Rfc3164
            && let Some(span) = tag_span(msg.raw, program, message)
        {
            return Header::Span(span);
        }
        Header::Built {
            program,
            pid: pid.filter(|p| !p.is_empty()),
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Header::None)
    }

    fn write(&self, out: &mut Vec<u8>) {
        match *self {
            Header::None => {}
            Header::Span(span) => json::escape_into(out, span),
            Header::Built { program, pid } => {
                json::escape_into(out, program);
                if let Some(pid) = pid {
                    out.push(b'[');
                    json::escape_into(out, pid);
                    out.push(b']');
                }
                out.extend_from_slice(b": ");
            }
        }
    }
}

/// The raw bytes from the start of PROGRAM to the start of MESSAGE, when both are slices of
/// `raw` in that order and the span starts with PROGRAM. A UTF-8 BOM the parser removed from
/// the start of MESSAGE is left out.
fn tag_span<'a>(raw: &'a [u8], program: &[u8], message: Option<&[u8]>) -> Option<&'a [u8]> {
    let base = raw.as_ptr() as usize;
    let offset = |part: &[u8]| -> Option<usize> {
        let at = (part.as_ptr() as usize).checked_sub(base)?;
        (at + part.len() <= raw.len()).then_some(at)
    };
    let start = offset(program)?;
    let end = offset(message?)?;
    let span = raw.get(start..end)?;
    if !span.starts_with(program) || span.len() == program.len() {
        return None;
    }
    Some(span.strip_suffix(b"\xEF\xBB\xBF").unwrap_or(span))
}

/// MESSAGE after the header repairs and vendor edits: `[HOST SP][MSGHDR]body`.
struct Text<'a> {
    host: Option<&'a [u8]>,
    header: Header<'a>,
    body: Value<'a, 'a>,
}

impl Text<'_> {
    fn is_empty(&self) -> bool {
        self.host.is_none() && self.header.is_empty() && self.body.is_empty()
    }

    fn write(&self, out: &mut Vec<u8>) {
        if let Some(host) = self.host {
            json::escape_into(out, host);
            out.push(b' ');
        }
        self.header.write(out);
        self.body.escape_into(out);
    }

    /// `$(strip ...)`: leading and trailing whitespace removed (from the body; a repaired
    /// host/header never starts with whitespace).
    fn write_trimmed(&self, out: &mut Vec<u8>) {
        if let Some(host) = self.host {
            json::escape_into(out, host);
            out.push(b' ');
        }
        self.header.write(out);
        let (a, b) = self.body.parts();
        let whole: std::borrow::Cow<'_, [u8]> = if b.is_empty() {
            a.into()
        } else {
            [a, b].concat().into()
        };
        let mut t: &[u8] = &whole;
        if self.host.is_none() && self.header.is_empty() {
            while let [first, rest @ ..] = t
                && first.is_ascii_whitespace()
            {
                t = rest;
            }
        }
        while let [rest @ .., last] = t
            && last.is_ascii_whitespace()
        {
            t = rest;
        }
        json::escape_into(out, t);
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

/// Writes `[id name="value" ...]...`; returns `false` (writing nothing) when there is no
/// element.
fn write_sdata(out: &mut Vec<u8>, sd: StructuredData<'_>) -> bool {
    if sd_is_canonical(sd.raw()) {
        // Re-serialising it would give back the same bytes: escape them in one go.
        json::escape_into(out, sd.raw());
        return true;
    }
    write_sdata_parts(out, sd)
}

/// Whether `raw` is SD exactly as [`write_sdata_parts`] would write it again: one or more
/// `[id name="value" ...]` elements back to back, single spaces, quoted values whose only
/// backslashes escape `"`, `\` or `]` and that hold no bare `]`, nothing after the last
/// element. One pass, with the value bodies (the long part) searched with `memchr3`.
fn sd_is_canonical(raw: &[u8]) -> bool {
    let n = raw.len();
    let mut i = 0;
    if n == 0 {
        return false;
    }
    while i < n {
        if raw[i] != b'[' {
            return false;
        }
        i += 1;
        // SD-ID: up to a space or `]`; a quote in it would confuse the element scan.
        while i < n && raw[i] != b' ' && raw[i] != b']' {
            if raw[i] == b'"' {
                return false;
            }
            i += 1;
        }
        loop {
            match raw.get(i) {
                Some(b']') => {
                    i += 1;
                    break;
                }
                Some(b' ') => i += 1,
                _ => return false,
            }
            // PARAM-NAME up to `=`.
            while i < n && raw[i] != b'=' {
                if matches!(raw[i], b' ' | b']' | b'"') {
                    return false;
                }
                i += 1;
            }
            if raw.get(i + 1) != Some(&b'"') {
                return false;
            }
            i += 2;
            // PARAM-VALUE up to the closing quote.
            loop {
                let Some(at) = memchr::memchr3(b'"', b'\\', b']', &raw[i.min(n)..]) else {
                    return false;
                };
                i += at;
                match raw[i] {
                    b'"' => {
                        i += 1;
                        break;
                    }
                    b'\\' if matches!(raw.get(i + 1), Some(b'"' | b'\\' | b']')) => i += 2,
                    _ => return false,
                }
            }
        }
    }
    true
}

fn write_sdata_parts(out: &mut Vec<u8>, sd: StructuredData<'_>) -> bool {
    let mut any = false;
    for element in sd.elements() {
        any = true;
        out.push(b'[');
        json::escape_into(out, element.id());
        for param in element.params() {
            out.push(b' ');
            json::escape_into(out, param.name());
            out.extend_from_slice(b"=\\\"");
            write_sd_value(out, param.raw_value());
            out.extend_from_slice(b"\\\"");
        }
        out.push(b']');
    }
    any
}

/// Re-escapes an SD value as received (`raw`) for output: `\"`, `\\`, `\]` stay; a lone
/// `\` becomes `\\`, a bare `"` or `]` (possible only in the lenient unquoted form) gets its
/// backslash. All of it JSON-escaped on the way out.
fn write_sd_value(out: &mut Vec<u8>, raw: &[u8]) {
    let mut start = 0;
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'\\' if matches!(raw.get(i + 1), Some(b'"' | b'\\' | b']')) => i += 2,
            b'\\' | b'"' | b']' => {
                json::escape_into(out, &raw[start..i]);
                // One SD escape backslash, JSON-escaped.
                out.extend_from_slice(b"\\\\");
                start = i;
                i += 1;
            }
            _ => i += 1,
        }
    }
    json::escape_into(out, &raw[start..]);
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

fn write_fields(
    out: &mut Vec<u8>,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
    recv_unix_micros: i64,
    opts: &EncodeOptions,
) {
    let f = &opts.indexed_fields;
    let pri = msg.priority.unwrap_or(Priority::DEFAULT);
    out.extend_from_slice(b",\"fields\":{\"sc4s_vendor\":");
    class.vendor.write_json(out);
    out.extend_from_slice(b",\"sc4s_product\":");
    class.product.write_json(out);
    if let Some(c) = class.class.filter(|c| !c.is_empty()) {
        out.extend_from_slice(b",\"sc4s_class\":");
        c.write_json(out);
    }
    for (name, value) in class.fields.iter() {
        out.push(b',');
        json::write_str(out, name.as_bytes());
        out.push(b':');
        value.write_json(out);
    }
    for (name, value) in class.compliance {
        out.push(b',');
        json::write_str(out, name.as_bytes());
        out.push(b':');
        json::write_str(out, value.as_bytes());
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
    out.extend_from_slice(match class.format {
        Format::Rfc5424 => b"|wireformat:rfc|wireformat:rfc5424".as_slice(),
        Format::Rfc3164 => b"|wireformat:rfc|wireformat:rfc3164".as_slice(),
        Format::Unparsed => b"|wireformat:raw".as_slice(),
    });
    if let Rewrite::InvalidProgram(rule) = class.rewrite {
        out.extend_from_slice(b"|.app.");
        json::push_plain(out, rule.app_name().as_bytes());
    }
    out.extend_from_slice(b"|.app.");
    json::escape_into(out, class.app.as_bytes());
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

/// Epoch seconds with three decimals, truncated toward zero (`-0.5` s is `-0.500`).
fn write_epoch_millis(out: &mut Vec<u8>, unix_micros: i64) {
    // Every time from 2001-09-09 to 2286 has ten digits of seconds: one fixed-size store.
    if let Ok(micros) = u64::try_from(unix_micros)
        && (1_000_000_000_000_000..10_000_000_000_000_000).contains(&micros)
    {
        let secs = micros / 1_000_000;
        let millis = (micros % 1_000_000 / 1000) as u32;
        // Two digits per table look-up, from a few independent divisions.
        let high = (secs / 100_000_000) as u32;
        let low = (secs % 100_000_000) as u32;
        let (a, b) = (low / 10_000, low % 10_000);
        let pair = |v: u32| u128::from(u16::from_le_bytes(DIGITS2[v as usize]));
        let text = pair(high)
            | pair(a / 100) << 16
            | pair(a % 100) << 32
            | pair(b / 100) << 48
            | pair(b % 100) << 64
            | u128::from(b'.') << 80
            | u128::from(b'0' + (millis / 100) as u8) << 88
            | pair(millis % 100) << 96;
        json::push_block(out, text, 14);
        return;
    }
    let abs = unix_micros.unsigned_abs();
    if unix_micros < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(itoa::Buffer::new().format(abs / 1_000_000).as_bytes());
    let millis = (abs % 1_000_000 / 1000) as u16;
    out.extend_from_slice(&[
        b'.',
        b'0' + (millis / 100) as u8,
        b'0' + (millis / 10 % 10) as u8,
        b'0' + (millis % 10) as u8,
    ]);
}

/// The two ASCII digits of each number below 100.
static DIGITS2: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// `v` in decimal.
fn push_u32(out: &mut Vec<u8>, mut v: u32) {
    // Digits from the last; each shifts the earlier ones up a lane (little-endian text).
    let mut text = 0u128;
    let mut len = 0;
    loop {
        text = (text << 8) | u128::from(b'0' + (v % 10) as u8);
        len += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    json::push_block(out, text, len);
}

fn write_ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            // The dotted quad (at most 15 bytes) assembled in a register, stored as one block.
            let mut text = 0u128;
            let mut len = 0;
            let mut put = |c: u8| {
                text |= u128::from(c) << (8 * len);
                len += 1;
            };
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    put(b'.');
                }
                if octet >= 100 {
                    put(b'0' + octet / 100);
                }
                if octet >= 10 {
                    put(b'0' + octet / 10 % 10);
                }
                put(b'0' + octet % 10);
            }
            json::push_block(out, text, len);
        }
        // Writing into a Vec cannot fail; std's Display applies RFC 5952 compression.
        IpAddr::V6(v6) => {
            let _ = write!(out, "{v6}");
        }
    }
}

#[cfg(test)]
mod tests;
