//! MESSAGE, PROGRAM, PID and MSGHDR as SC4S's templates see them after the header repairs.

use crate::classify::{Classification, MessageFilter, Rewrite, Value};
use crate::json;
use crate::message::{Format, Message};

/// How text reaches the output: JSON-escaped (the HEC event) or as it is (a relayed
/// syslog line). Generic, so each writer is compiled once per sink with no branch per call.
pub(super) trait Sink {
    fn put(out: &mut Vec<u8>, bytes: &[u8]);
}

/// JSON string contents (no quotes).
pub(super) struct Json;

impl Sink for Json {
    #[inline]
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        json::escape_into(out, bytes);
    }
}

/// The bytes as they are.
pub(super) struct Raw;

impl Sink for Raw {
    #[inline]
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(bytes);
    }
}

/// The fields of a message as SC4S's templates see them after the header repairs.
pub(super) struct View<'a> {
    pub(super) program: Option<&'a [u8]>,
    pub(super) pid: Option<&'a [u8]>,
    /// MSGHDR (and, for RFC 3164, LEGACY_MSGHDR) of the effective PROGRAM.
    pub(super) header: Header<'a>,
    pub(super) message: Text<'a>,
    /// LEGACY_MSGHDR exists only for RFC 3164.
    pub(super) legacy: bool,
}

impl<'a> View<'a> {
    pub(super) fn new(msg: &Message<'a>, class: &Classification<'a, 'a>) -> View<'a> {
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
                    filter: MessageFilter::None,
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
                    filter: MessageFilter::None,
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
                    filter: MessageFilter::None,
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
                filter: MessageFilter::None,
            };
        }
        view.message.filter = e.filter;
        view
    }
}

#[derive(Clone, Copy)]
pub(super) enum Header<'a> {
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
    pub(super) fn of(
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

    pub(super) fn is_empty(&self) -> bool {
        matches!(self, Header::None)
    }

    pub(super) fn write(&self, out: &mut Vec<u8>) {
        self.write_as::<Json>(out);
    }

    pub(super) fn write_as<S: Sink>(&self, out: &mut Vec<u8>) {
        match *self {
            Header::None => {}
            Header::Span(span) => S::put(out, span),
            Header::Built { program, pid } => {
                S::put(out, program);
                if let Some(pid) = pid {
                    out.push(b'[');
                    S::put(out, pid);
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
pub(super) fn tag_span<'a>(
    raw: &'a [u8],
    program: &[u8],
    message: Option<&[u8]>,
) -> Option<&'a [u8]> {
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
pub(super) struct Text<'a> {
    pub(super) host: Option<&'a [u8]>,
    pub(super) header: Header<'a>,
    pub(super) body: Value<'a, 'a>,
    /// Parts of the body a vendor removed ([`MessageFilter`]).
    pub(super) filter: MessageFilter,
}

impl Text<'_> {
    pub(super) fn is_empty(&self) -> bool {
        self.host.is_none()
            && self.header.is_empty()
            && match self.filter {
                MessageFilter::None => self.body.is_empty(),
                f => f.is_empty(&self.whole_body()),
            }
    }

    /// The body as one slice (a two-part value is joined; only filtered bodies need it).
    fn whole_body(&self) -> std::borrow::Cow<'_, [u8]> {
        let (a, b) = self.body.parts();
        if b.is_empty() {
            a.into()
        } else {
            [a, b].concat().into()
        }
    }

    pub(super) fn write(&self, out: &mut Vec<u8>) {
        self.write_as::<Json>(out);
    }

    pub(super) fn write_as<S: Sink>(&self, out: &mut Vec<u8>) {
        if let Some(host) = self.host {
            S::put(out, host);
            out.push(b' ');
        }
        self.header.write_as::<S>(out);
        match self.filter {
            MessageFilter::None => {
                let (a, b) = self.body.parts();
                S::put(out, a);
                S::put(out, b);
            }
            f => {
                for piece in f.pieces(&self.whole_body()) {
                    S::put(out, piece);
                }
            }
        }
    }

    /// The text as the content of a JSON string inside a JSON string (see
    /// [`json::escape_twice_into`]).
    pub(super) fn write_twice(&self, out: &mut Vec<u8>) {
        if let Some(host) = self.host {
            json::escape_twice_into(out, host);
            out.push(b' ');
        }
        match self.header {
            Header::None => {}
            Header::Span(span) => json::escape_twice_into(out, span),
            Header::Built { program, pid } => {
                json::escape_twice_into(out, program);
                if let Some(pid) = pid {
                    out.push(b'[');
                    json::escape_twice_into(out, pid);
                    out.push(b']');
                }
                out.extend_from_slice(b": ");
            }
        }
        let (a, b) = self.body.parts();
        json::escape_twice_into(out, a);
        json::escape_twice_into(out, b);
    }

    /// The text unescaped (for templates that escape it themselves).
    pub(super) fn push_raw(&self, out: &mut Vec<u8>) {
        if let Some(host) = self.host {
            out.extend_from_slice(host);
            out.push(b' ');
        }
        match self.header {
            Header::None => {}
            Header::Span(span) => out.extend_from_slice(span),
            Header::Built { program, pid } => {
                out.extend_from_slice(program);
                if let Some(pid) = pid {
                    out.push(b'[');
                    out.extend_from_slice(pid);
                    out.push(b']');
                }
                out.extend_from_slice(b": ");
            }
        }
        self.body.push_to(out);
    }

    /// `$(strip ...)`: leading and trailing whitespace removed (from the body; a repaired
    /// host/header never starts with whitespace).
    pub(super) fn write_trimmed(&self, out: &mut Vec<u8>) {
        if let Some(host) = self.host {
            json::escape_into(out, host);
            out.push(b' ');
        }
        self.header.write(out);
        let whole: std::borrow::Cow<'_, [u8]> = match self.filter {
            MessageFilter::None => self.whole_body(),
            f => f
                .pieces(&self.whole_body())
                .collect::<Vec<_>>()
                .concat()
                .into(),
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
