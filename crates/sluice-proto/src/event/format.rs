//! Numbers, addresses and times as the event writes them: on the stack or in a register,
//! never through `fmt` on the hot path.

use std::io::Write as _;
use std::net::IpAddr;

use crate::json;
use crate::message::Timestamp;
use crate::time::civil_from_days;

pub(super) const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

pub(super) fn local_parts(ts: Timestamp) -> (i32, u8, u8, i64) {
    let local = ts.unix_secs + i64::from(ts.offset_secs);
    let (y, m, d) = civil_from_days(local.div_euclid(86_400));
    (y, m, d, local.rem_euclid(86_400))
}

pub(super) fn push_2(out: &mut Vec<u8>, v: i64) {
    out.push(b'0' + (v / 10 % 10) as u8);
    out.push(b'0' + (v % 10) as u8);
}

/// `14:23:10` from the seconds of the day.
fn push_hms(out: &mut Vec<u8>, sod: i64) {
    push_2(out, sod / 3600);
    out.push(b':');
    push_2(out, sod / 60 % 60);
    out.push(b':');
    push_2(out, sod % 60);
}

/// `Mar 05 14:23:10` (syslog-ng's `${MONTH_ABBREV} ${DAY} ${HOUR}:${MIN}:${SEC}`).
pub(super) fn write_bsd_stamp(out: &mut Vec<u8>, ts: Timestamp) {
    let (_, m, d, sod) = local_parts(ts);
    out.extend_from_slice(MONTHS[usize::from(m.clamp(1, 12) - 1)]);
    out.push(b' ');
    push_2(out, i64::from(d));
    out.push(b' ');
    push_hms(out, sod);
}

/// `2024-03-05T14:23:10.123+00:00` (syslog-ng's `${ISODATE}` with `frac-digits(3)`).
pub(super) fn write_isodate(out: &mut Vec<u8>, ts: Timestamp) {
    let (y, m, d, sod) = local_parts(ts);
    out.extend_from_slice(itoa::Buffer::new().format(y).as_bytes());
    out.push(b'-');
    push_2(out, i64::from(m));
    out.push(b'-');
    push_2(out, i64::from(d));
    out.push(b'T');
    push_hms(out, sod);
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

/// Epoch seconds with three decimals, truncated toward zero (`-0.5` s is `-0.500`).
pub(super) fn write_epoch_millis(out: &mut Vec<u8>, unix_micros: i64) {
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
pub(super) static DIGITS2: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// Each octet's decimal text, little-endian in a `u32`, and its length.
static OCTETS: [(u32, u8); 256] = {
    let mut t = [(0u32, 0u8); 256];
    let mut i = 0;
    while i < 256 {
        let (h, m, l) = ((i / 100) as u32, (i / 10 % 10) as u32, (i % 10) as u32);
        let z = b'0' as u32;
        t[i] = if i >= 100 {
            ((z + h) | (z + m) << 8 | (z + l) << 16, 3)
        } else if i >= 10 {
            ((z + m) | (z + l) << 8, 2)
        } else {
            (z + l, 1)
        };
        i += 1;
    }
    t
};

/// `v` in decimal.
pub(super) fn push_u32(out: &mut Vec<u8>, mut v: u32) {
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

pub(crate) fn write_ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            // The dotted quad (at most 15 bytes) assembled in a register from a table of the
            // octets' text, stored as one block.
            let [a, b, c, d] = v4.octets().map(|o| OCTETS[usize::from(o)]);
            let mut text = u128::from(a.0);
            let mut len = u32::from(a.1);
            for (digits, n) in [b, c, d] {
                text |= u128::from((digits << 8) | u32::from(b'.')) << (8 * len);
                len += 1 + u32::from(n);
            }
            let len = len as usize;
            json::push_block(out, text, len);
        }
        // Writing into a Vec cannot fail; std's Display applies RFC 5952 compression.
        IpAddr::V6(v6) => {
            let _ = write!(out, "{v6}");
        }
    }
}
