//! Strict RFC 5424 after `PRI "1" SP`. Any violation returns `None` and the caller delivers the
//! whole line as `Unparsed` (grammar and deviations: see the `parse` module docs).

use super::ParseOptions;
use super::scan;
use super::stamp::{self, Mode};
use crate::message::{Format, Message, Priority, StructuredData};

pub(super) const HOSTNAME_MAX: usize = 255;
pub(super) const APP_NAME_MAX: usize = 48;
pub(super) const PROCID_MAX: usize = 128;
pub(super) const MSGID_MAX: usize = 32;
/// RFC 5424 says 32; syslog-ng accepts 255 and real enterprise IDs exceed 32 (module docs).
pub(super) const SD_ID_MAX: usize = 255;
pub(super) const PARAM_NAME_MAX: usize = 32;

/// How many SD-IDs the duplicate check compares on the stack before it sorts a heap copy.
const INLINE_IDS: usize = 16;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A header field of 1..=`max` PRINTUSASCII bytes followed by SP. Returns the field (`None`
/// for NILVALUE) and the index after the SP; the outer `None` is a grammar violation.
#[inline]
fn header_field(s: &[u8], i: usize, max: usize) -> Option<(Option<&[u8]>, usize)> {
    // Scan at most one byte past the limit: enough to tell "too long" from "ends here".
    let j = scan::print_run_end(&s[..(i + max + 1).min(s.len())], i);
    if j == i || j > i + max || s.get(j) != Some(&b' ') {
        return None;
    }
    let field = &s[i..j];
    Some((if field == b"-" { None } else { Some(field) }, j + 1))
}

/// An SD-NAME (SD-ID or PARAM-NAME) of 1..=`max` bytes at `i`; returns its end.
#[inline]
fn sd_name(s: &[u8], i: usize, max: usize) -> Option<usize> {
    let j = scan::sd_name_run_end(&s[..(i + max + 1).min(s.len())], i);
    if j == i || j > i + max {
        return None;
    }
    Some(j)
}

/// A quoted PARAM-VALUE starting at the opening `"`; returns the index after the closing `"`.
/// `\` escapes the next byte (any byte: `\n` is kept literally on unescaping, RFC 5424 6.3.3);
/// an unescaped `]` is a violation.
#[inline]
fn quoted_value(s: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let k = scan::value_special(s, j);
        match s.get(k)? {
            b'"' => return Some(k + 1),
            b'\\' => j = k + 2,
            _ => return None, // an unescaped `]`
        }
    }
}

/// The lenient unquoted PARAM-VALUE (VMware ESXi, syslog-ng): 1+ bytes up to SP or `]`, none of
/// them a control byte or `"`. Returns its end.
#[inline]
fn unquoted_value(s: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    while j < s.len() {
        match s[j] {
            b' ' | b']' => break,
            b'"' | 0..=0x1F | 0x7F => return None,
            _ => j += 1,
        }
    }
    if j == i || j == s.len() {
        None
    } else {
        Some(j)
    }
}

/// One SD-ELEMENT at `s[i] == '['`; returns (SD-ID, end).
fn sd_element(s: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let id_end = sd_name(s, i + 1, SD_ID_MAX)?;
    let id = &s[i + 1..id_end];
    let mut j = id_end;
    loop {
        match s.get(j)? {
            b']' => return Some((id, j + 1)),
            b' ' => {
                let name_end = sd_name(s, j + 1, PARAM_NAME_MAX)?;
                if s.get(name_end) != Some(&b'=') {
                    return None;
                }
                j = if s.get(name_end + 1) == Some(&b'"') {
                    quoted_value(s, name_end + 1)?
                } else {
                    unquoted_value(s, name_end + 1)?
                };
            }
            _ => return None,
        }
    }
}

/// `true` when some SD-ID in the validated `span` occurs twice. Used only when there are more
/// elements than the inline check holds: sorting a heap copy keeps this O(n log n), so a 64 KiB
/// datagram of `[a][b]...` cannot make the check quadratic.
fn has_duplicate_id_sorted(span: &[u8]) -> bool {
    let mut all: Vec<&[u8]> = StructuredData::from_validated(span)
        .elements()
        .map(|e| e.id())
        .collect();
    all.sort_unstable();
    all.windows(2).any(|w| w[0] == w[1])
}

/// STRUCTURED-DATA at `s[i] == '['`: one or more elements. Returns the span's end.
fn structured_data(s: &[u8], i: usize) -> Option<usize> {
    let mut ids: [&[u8]; INLINE_IDS] = [&[]; INLINE_IDS];
    let mut n = 0usize;
    let mut overflowed = false;
    let mut j = i;
    while s.get(j) == Some(&b'[') {
        let (id, end) = sd_element(s, j)?;
        if n < INLINE_IDS {
            if ids[..n].contains(&id) {
                return None;
            }
            ids[n] = id;
            n += 1;
        } else {
            overflowed = true;
        }
        j = end;
    }
    // RFC 5424 6.3.2: the same SD-ID MUST NOT occur twice.
    if overflowed && has_duplicate_id_sorted(&s[i..j]) {
        return None;
    }
    Some(j)
}

/// Strips one leading UTF-8 BOM.
#[inline]
pub(super) fn strip_bom(msg: &[u8]) -> &[u8] {
    msg.strip_prefix(BOM).unwrap_or(msg)
}

/// An RFC 5424 header from PROCID on: what a vendor application that re-reads a message
/// as RFC 5424 takes from the text after APP-NAME (SC4S's
/// `syslog-parser(flags(syslog-protocol) template("... $PROGRAM $MESSAGE"))`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tail<'a> {
    /// `None` for NILVALUE.
    pub procid: Option<&'a [u8]>,
    pub msgid: Option<&'a [u8]>,
    pub structured_data: Option<StructuredData<'a>>,
    /// `None`: no MSG.
    pub message: Option<&'a [u8]>,
}

/// `PROCID SP MSGID SP STRUCTURED-DATA [SP MSG]` with the strict parser's rules; `None` on a
/// grammar violation.
pub(crate) fn tail(s: &[u8]) -> Option<Tail<'_>> {
    let (procid, i) = header_field(s, 0, PROCID_MAX)?;
    let (msgid, i) = header_field(s, i, MSGID_MAX)?;
    let (structured_data, i) = match s.get(i)? {
        b'-' => (None, i + 1),
        b'[' => {
            let end = structured_data(s, i)?;
            (Some(StructuredData::from_validated(&s[i..end])), end)
        }
        _ => return None,
    };
    let message = match s.get(i) {
        None => None,
        Some(b' ') => Some(strip_bom(&s[i + 1..])),
        Some(_) => return None,
    };
    Some(Tail {
        procid,
        msgid,
        structured_data,
        message,
    })
}

/// Parses `s`, the bytes after `PRI "1" SP`.
pub(super) fn parse<'a>(
    raw: &'a [u8],
    priority: Priority,
    s: &'a [u8],
    opts: &ParseOptions<'_>,
) -> Option<Message<'a>> {
    let (timestamp, i) = if s.first() == Some(&b'-') {
        (None, 1)
    } else {
        let (ts, end) = stamp::iso(s, 0, Mode::Strict, opts.zone)?;
        (Some(ts), end)
    };
    if s.get(i) != Some(&b' ') {
        return None;
    }
    let (hostname, i) = header_field(s, i + 1, HOSTNAME_MAX)?;
    let (appname, i) = header_field(s, i, APP_NAME_MAX)?;
    let (procid, i) = header_field(s, i, PROCID_MAX)?;
    let (msgid, i) = header_field(s, i, MSGID_MAX)?;
    let (structured_data, i) = match s.get(i)? {
        b'-' => (None, i + 1),
        b'[' => {
            let end = structured_data(s, i)?;
            (Some(StructuredData::from_validated(&s[i..end])), end)
        }
        _ => return None,
    };
    let message = match s.get(i) {
        None => None,
        Some(b' ') => Some(strip_bom(&s[i + 1..])),
        Some(_) => return None,
    };
    Some(Message {
        raw,
        format: Format::Rfc5424,
        priority: Some(priority),
        timestamp,
        year_inferred: false,
        hostname,
        appname,
        procid,
        msgid,
        structured_data,
        message,
    })
}
