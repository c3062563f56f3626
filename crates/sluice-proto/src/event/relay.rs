//! The syslog lines SC4S's relay destinations send: `SC4S_DEST_SYSLOG_<ID>_*` (RFC 5424,
//! syslog-ng's `syslog()` driver or `network(flags(syslog-protocol))`) and
//! `SC4S_DEST_BSD_<ID>_*` (RFC 3164, `network()`), both with syslog-ng's default template,
//! after SC4S's parsing and with its global options (`frac-digits(3)`,
//! `send-time-zone("GMT")`).
//!
//! What syslog-ng 3.38 writes for them, checked byte for byte against a running one:
//!
//! ```text
//! RFC 5424: <PRI>1 ISODATE HOST PROGRAM PID MSGID SDATA BOM+MSG
//!           <134>1 2026-02-02T13:43:05.000+00:00 horse-ammonia CheckPoint 26203 - - \xEF\xBB\xBFhello world
//! BSD:      <PRI>MMM dD HH:MM:SS.mmm HOST MSGHDR+MSG
//!           <134>Feb  2 13:43:05.000 horse-ammonia CheckPoint[26203]: hello world
//! ```
//!
//! * PRI is the message's (13, user.notice, when it had none). The time is the event's time
//!   (the header's, a vendor's, or the receive time) in UTC with milliseconds, truncated.
//!   HOST is the event's host as the HEC event has it (lowercased, the sender's address when
//!   there is none).
//! * RFC 5424: an empty PROGRAM, PID, MSGID or SDATA is `-`; SDATA is re-serialised from the
//!   parsed elements. SC4S parses with `assume-utf8` (and its sources `validate-utf8`), so
//!   syslog-ng marks every parsed message as UTF-8 and writes a BOM before a non-empty MSG;
//!   an unparsed line gets it only when it is valid UTF-8. An empty MSG still has the space
//!   before it.
//! * BSD: MSGHDR is the original tag text of an RFC 3164 message (`prog[1]: `, or `just `
//!   without a colon), else `PROGRAM[PID]: ` built from the fields, or nothing without
//!   PROGRAM. The day is padded with a space.
//! * No trailing newline and no frame: the output adds them (syslog-ng ends every message
//!   with `\n`, inside an octet-counted frame too). MSG is copied as it is, control bytes and
//!   line feeds included, as syslog-ng copies it.

use std::net::IpAddr;

use super::format::{MONTHS, local_parts, push_2, push_u32, write_ip, write_isodate};
use super::sdata::write_sdata_as;
use super::view::{Raw, View};
use crate::classify::{Classification, HostEdit, Rewrite, SourceMeta};
use crate::message::{Format, Message, Priority, Timestamp};

/// What a relay destination sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RelayEncoding {
    pub format: RelayFormat,
    /// Write nothing for an event whose MESSAGE is empty: SC4S's default filter of its BSD
    /// destinations (`"${MSG}" ne ""`).
    pub skip_empty_message: bool,
}

/// Which line a relay destination sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelayFormat {
    /// RFC 5424 (`SC4S_DEST_SYSLOG_<ID>_*`).
    Rfc5424,
    /// RFC 3164, syslog-ng's "legacy BSD" network format (`SC4S_DEST_BSD_<ID>_*`).
    Bsd,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Appends the relayed line of one event to `out` (see the module docs); `false` when it
/// wrote nothing (an empty MESSAGE and [`RelayEncoding::skip_empty_message`]).
pub fn encode_relay(
    out: &mut Vec<u8>,
    enc: RelayEncoding,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    src: &SourceMeta<'_>,
    recv_unix_micros: i64,
) -> bool {
    let view = View::new(msg, class);
    if enc.skip_empty_message && view.message.is_empty() {
        return false;
    }
    out.reserve(64 + msg.raw.len());
    out.push(b'<');
    push_u32(
        out,
        u32::from(msg.priority.unwrap_or(Priority::DEFAULT).value()),
    );
    out.push(b'>');
    let micros = class.time_micros(msg, recv_unix_micros);
    let utc = Timestamp {
        unix_secs: micros.div_euclid(1_000_000),
        micros: micros.rem_euclid(1_000_000) as u32,
        offset_secs: 0,
    };
    match enc.format {
        RelayFormat::Rfc5424 => {
            out.extend_from_slice(b"1 ");
            write_isodate(out, utc);
            out.push(b' ');
            write_host_raw(out, msg, class, src.source_ip);
            out.push(b' ');
            dash_or(out, view.program);
            out.push(b' ');
            dash_or(out, view.pid);
            out.push(b' ');
            dash_or(out, msg.msgid.filter(|m| !m.is_empty()));
            out.push(b' ');
            if !msg
                .structured_data
                .is_some_and(|sd| write_sdata_as::<Raw>(out, sd))
            {
                out.push(b'-');
            }
            out.push(b' ');
            if class.format != Format::Unparsed {
                if !view.message.is_empty() {
                    out.extend_from_slice(BOM);
                }
                view.message.write_as::<Raw>(out);
            } else {
                // Rare: the line has to be checked once written.
                let start = out.len();
                view.message.write_as::<Raw>(out);
                if out.len() > start && std::str::from_utf8(&out[start..]).is_ok() {
                    out.splice(start..start, BOM.iter().copied());
                }
            }
        }
        RelayFormat::Bsd => {
            write_bsd_stamp_millis(out, utc);
            out.push(b' ');
            write_host_raw(out, msg, class, src.source_ip);
            out.push(b' ');
            view.header.write_as::<Raw>(out);
            view.message.write_as::<Raw>(out);
        }
    }
    true
}

fn dash_or(out: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        Some(v) => out.extend_from_slice(v),
        None => out.push(b'-'),
    }
}

/// HOST as the HEC event's `host` has it, not escaped.
fn write_host_raw(
    out: &mut Vec<u8>,
    msg: &Message<'_>,
    class: &Classification<'_, '_>,
    source_ip: IpAddr,
) {
    let lower = |out: &mut Vec<u8>, b: &[u8]| out.extend(b.iter().map(u8::to_ascii_lowercase));
    match class.host {
        HostEdit::Set(v) if !v.is_empty() => {
            let (a, b) = v.parts();
            lower(out, a);
            lower(out, b);
        }
        HostEdit::Keep if class.rewrite != Rewrite::InvalidHost => {
            match msg.hostname.filter(|h| !h.is_empty()) {
                Some(host) => lower(out, host),
                None => write_ip(out, source_ip),
            }
        }
        _ => write_ip(out, source_ip),
    }
}

/// `Feb  2 13:43:05.000`: syslog-ng's BSD stamp (day padded with a space) with
/// `frac-digits(3)`.
fn write_bsd_stamp_millis(out: &mut Vec<u8>, ts: Timestamp) {
    let (_, m, d, sod) = local_parts(ts);
    out.extend_from_slice(MONTHS[usize::from(m.clamp(1, 12) - 1)]);
    out.push(b' ');
    if d < 10 {
        out.push(b' ');
        out.push(b'0' + d);
    } else {
        push_2(out, i64::from(d));
    }
    out.push(b' ');
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
}

#[cfg(test)]
mod tests;
