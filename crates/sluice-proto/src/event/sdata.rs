//! RFC 5424 STRUCTURED-DATA re-serialised into the event text (JSON-escaped) or into a
//! relayed RFC 5424 header (as it is).

use super::view::{Json, Sink};
use crate::message::StructuredData;

/// Writes `[id name="value" ...]...`; returns `false` (writing nothing) when there is no
/// element.
pub(super) fn write_sdata(out: &mut Vec<u8>, sd: StructuredData<'_>) -> bool {
    write_sdata_as::<Json>(out, sd)
}

/// [`write_sdata`] through the sink `S`.
pub(super) fn write_sdata_as<S: Sink>(out: &mut Vec<u8>, sd: StructuredData<'_>) -> bool {
    if sd_is_canonical(sd.raw()) {
        // Re-serialising it would give back the same bytes: copy them in one go.
        S::put(out, sd.raw());
        return true;
    }
    write_sdata_parts_as::<S>(out, sd)
}

/// Whether `raw` is SD exactly as [`write_sdata_parts`] would write it again: one or more
/// `[id name="value" ...]` elements back to back, single spaces, quoted values whose only
/// backslashes escape `"`, `\` or `]` and that hold no bare `]`, nothing after the last
/// element. One pass, with the value bodies (the long part) searched with `memchr3`.
pub(super) fn sd_is_canonical(raw: &[u8]) -> bool {
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

#[cfg(test)]
pub(super) fn write_sdata_parts(out: &mut Vec<u8>, sd: StructuredData<'_>) -> bool {
    write_sdata_parts_as::<Json>(out, sd)
}

fn write_sdata_parts_as<S: Sink>(out: &mut Vec<u8>, sd: StructuredData<'_>) -> bool {
    let mut any = false;
    for element in sd.elements() {
        any = true;
        out.push(b'[');
        S::put(out, element.id());
        for param in element.params() {
            out.push(b' ');
            S::put(out, param.name());
            S::put(out, b"=\"");
            write_sd_value::<S>(out, param.raw_value());
            S::put(out, b"\"");
        }
        out.push(b']');
    }
    any
}

/// Re-escapes an SD value as received (`raw`) for output: `\"`, `\\`, `\]` stay; a lone
/// `\` becomes `\\`, a bare `"` or `]` (possible only in the lenient unquoted form) gets its
/// backslash. All of it through the sink on the way out.
fn write_sd_value<S: Sink>(out: &mut Vec<u8>, raw: &[u8]) {
    let mut start = 0;
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'\\' if matches!(raw.get(i + 1), Some(b'"' | b'\\' | b']')) => i += 2,
            b'\\' | b'"' | b']' => {
                S::put(out, &raw[start..i]);
                // One SD escape backslash.
                S::put(out, b"\\");
                start = i;
                i += 1;
            }
            _ => i += 1,
        }
    }
    S::put(out, &raw[start..]);
}
