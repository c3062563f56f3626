//! Best-effort RFC 3164 and the BSD-style variants real devices send. Never fails (grammar and
//! deviations: see the `parse` module docs).

use super::ParseOptions;
use super::rfc5424::strip_bom;
use super::scan;
use super::stamp::{self, Mode};
use crate::message::{Format, Message, Priority, Timestamp};

/// AIX syslogd's relay prefix; the next token is the original HOSTNAME followed by `:`.
const AIX_RELAY: &[u8] = b"Message forwarded from ";

#[inline]
fn skip_sp(s: &[u8], mut i: usize) -> usize {
    while s.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// End of the SP-delimited token at `i`.
#[inline]
fn token_end(s: &[u8], i: usize) -> usize {
    match s[i..].iter().position(|&b| b == b' ') {
        Some(n) => i + n,
        None => s.len(),
    }
}

/// A recognised TAG.
struct Tag<'a> {
    name: &'a [u8],
    pid: Option<&'a [u8]>,
    /// Index after the TAG, its one `:` and at most one SP.
    end: usize,
}

/// The TAG rule: `name:` followed by SP or end, or `name[pid]` followed by `:`, SP or end, where
/// `name` is non-empty and has no SP, `[`, `]`, `:` and `pid` is non-empty with no SP, `[`, `]`.
#[inline]
fn tag(s: &[u8], i: usize) -> Option<Tag<'_>> {
    let j = scan::tag_name_end(s, i);
    if j == i || j == s.len() {
        return None;
    }
    let name = &s[i..j];
    match s[j] {
        b':' => match s.get(j + 1) {
            None => Some(Tag {
                name,
                pid: None,
                end: j + 1,
            }),
            Some(b' ') => Some(Tag {
                name,
                pid: None,
                end: j + 2,
            }),
            Some(_) => None,
        },
        b'[' => {
            let p = j + 1;
            let mut k = p;
            while k < s.len() && !matches!(s[k], b' ' | b'[' | b']') {
                k += 1;
            }
            if k == p || s.get(k) != Some(&b']') {
                return None;
            }
            let pid = Some(&s[p..k]);
            let mut end = k + 1;
            match s.get(end) {
                None => {}
                Some(b':') => {
                    end += 1;
                    if s.get(end) == Some(&b' ') {
                        end += 1;
                    }
                }
                Some(b' ') => end += 1,
                Some(_) => return None,
            }
            Some(Tag { name, pid, end })
        }
        _ => None,
    }
}

/// Dotted-quad IPv4 literal (1–3 digits per group; values not range-checked, like the HOSTNAME).
fn is_ipv4(s: &[u8]) -> bool {
    let mut groups = 0;
    for part in s.split(|&b| b == b'.') {
        groups += 1;
        if part.is_empty() || part.len() > 3 || !part.iter().all(u8::is_ascii_digit) {
            return false;
        }
    }
    groups == 4
}

/// The timestamp at `i`, with an optional `*`/`.` clock marker before it and an optional `:`
/// after it; an ISO or marked stamp must end at SP or end of input. A plain BSD stamp
/// (`Mmm dd hh:mm:ss`) may run straight into the HOSTNAME (`14:11:56sol-vmr01`): syslog-ng reads its fixed
/// width and needs no space after it, and SC4S's tests send such headers (Solace).
/// Returns the stamp, whether the year was inferred, and the index after it (and after its
/// `:`).
fn timestamp_at(s: &[u8], i: usize, opts: &ParseOptions<'_>) -> Option<(Timestamp, bool, usize)> {
    let start = match s.get(i)? {
        b'*' | b'.' => i + 1,
        _ => i,
    };
    let (ts, inferred, mut end, bsd) = match s.get(start)? {
        b'0'..=b'9' => {
            let (ts, end) = stamp::iso(s, start, Mode::Lenient, opts.zone)?;
            (ts, false, end, false)
        }
        _ => {
            let (ts, inferred, end) = stamp::bsd(s, start, opts.now_unix_secs, opts.zone)?;
            (ts, inferred, end, true)
        }
    };
    if s.get(end) == Some(&b':') {
        end += 1;
    }
    match s.get(end) {
        None | Some(b' ') => Some((ts, inferred, end)),
        // Not after a Cisco clock marker (`*`, `.`), which syslog-ng does not read at all.
        Some(_) if bsd && start == i => Some((ts, inferred, end)),
        Some(_) => None,
    }
}

/// The timestamp at `i`, or after a Cisco sequence number `digits ":" SP+` at `i`.
#[inline]
fn header_timestamp(
    s: &[u8],
    i: usize,
    opts: &ParseOptions<'_>,
) -> Option<(Timestamp, bool, usize)> {
    if let Some(found) = timestamp_at(s, i, opts) {
        return Some(found);
    }
    let mut j = i;
    while s.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
    }
    if j == i || s.get(j) != Some(&b':') || s.get(j + 1) != Some(&b' ') {
        return None;
    }
    timestamp_at(s, skip_sp(s, j + 1), opts)
}

/// Parses `s`, the bytes after the PRI (or the whole line when there is none).
pub(super) fn parse<'a>(
    raw: &'a [u8],
    priority: Priority,
    s: &'a [u8],
    opts: &ParseOptions<'_>,
) -> Message<'a> {
    let mut m = Message {
        raw,
        format: Format::Rfc3164,
        priority: Some(priority),
        timestamp: None,
        year_inferred: false,
        hostname: None,
        appname: None,
        procid: None,
        msgid: None,
        structured_data: None,
        message: None,
    };
    let start = skip_sp(s, 0);
    let Some((ts, inferred, after_ts)) = header_timestamp(s, start, opts) else {
        // No timestamp: no HOSTNAME either (RFC 3164 4.3.3); a TAG may still open the CONTENT.
        let mut i = start;
        if let Some(t) = tag(s, i) {
            m.appname = Some(t.name);
            m.procid = t.pid;
            i = t.end;
        }
        m.message = Some(strip_bom(&s[i..]));
        return m;
    };
    m.timestamp = Some(ts);
    m.year_inferred = inferred;
    let mut i = skip_sp(s, after_ts);
    if i == s.len() {
        m.message = Some(&s[i..]);
        return m;
    }

    // HOSTNAME, or a TAG / empty TAG in its place.
    let mut host_known = false;
    if s[i..].starts_with(AIX_RELAY) {
        let h = i + AIX_RELAY.len();
        if h < s.len() {
            let end = token_end(s, h);
            if end - h > 1 && s[end - 1] == b':' {
                m.hostname = Some(&s[h..end - 1]);
                i = end;
                host_known = true;
            }
        }
    }
    if !host_known {
        let end = token_end(s, i);
        if end - i == 1 && s[i] == b':' {
            // A lone `:`: empty TAG, the rest is MSG.
            i += 1;
            if s.get(i) == Some(&b' ') {
                i += 1;
            }
            m.message = Some(strip_bom(&s[i..]));
            return m;
        }
        match tag(s, i) {
            Some(t) if !is_ipv4(t.name) => {
                m.appname = Some(t.name);
                m.procid = t.pid;
                m.message = Some(strip_bom(&s[t.end..]));
                return m;
            }
            Some(t) if t.pid.is_none() => {
                // `10.1.2.3:`: an IP literal is a HOSTNAME, and its `:` the Cisco separator.
                m.hostname = Some(t.name);
                i += t.name.len() + 1;
            }
            _ => {
                m.hostname = Some(&s[i..end]);
                i = end;
            }
        }
    }

    // After HOSTNAME: an optional lone `:` (Cisco ASA `host : %ASA-...`), then maybe a TAG.
    i = skip_sp(s, i);
    if s.get(i) == Some(&b':') && matches!(s.get(i + 1), None | Some(b' ')) {
        i = skip_sp(s, i + 1);
    }
    if i < s.len()
        && let Some(t) = tag(s, i)
    {
        m.appname = Some(t.name);
        m.procid = t.pid;
        i = t.end;
    }
    m.message = Some(strip_bom(&s[i..]));
    m
}
