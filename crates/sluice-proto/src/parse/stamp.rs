//! Timestamp scanners shared by both grammars. Each takes the input and a start index and
//! returns the timestamp and the index just past it, or `None` without side effects.

use crate::message::Timestamp;
use crate::time::{CivilDateTime, Zone};

/// Which grammar is asking: RFC 5424 is strict, RFC 3164 is lenient.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// RFC 5424 `FULL-DATE "T" FULL-TIME`: uppercase `T`/`Z`, 1–6 fraction digits, offset
    /// `Z`/`±hh:mm`. A missing offset is tolerated (zone applied).
    Strict,
    /// ISO 8601 as BSD senders write it: `T`, `t` or SP between date and time, any number of
    /// fraction digits (truncated to µs), a dangling `.`, offsets `Z`/`z`/`±hh:mm`/`±hhmm`/`±hh`.
    Lenient,
}

#[inline]
fn digit(s: &[u8], i: usize) -> Option<u32> {
    match s.get(i) {
        Some(&b) if b.is_ascii_digit() => Some(u32::from(b - b'0')),
        _ => None,
    }
}

#[inline]
fn two(s: &[u8], i: usize) -> Option<u8> {
    Some((digit(s, i)? * 10 + digit(s, i + 1)?) as u8)
}

#[inline]
fn four(s: &[u8], i: usize) -> Option<i32> {
    Some(
        (digit(s, i)? * 1000 + digit(s, i + 1)? * 100 + digit(s, i + 2)? * 10 + digit(s, i + 3)?)
            as i32,
    )
}

/// `hh:mm:ss` at `i`; returns (h, m, s) unvalidated.
#[inline]
fn hms(s: &[u8], i: usize) -> Option<(u8, u8, u8)> {
    if s.get(i + 2) != Some(&b':') || s.get(i + 5) != Some(&b':') {
        return None;
    }
    Some((two(s, i)?, two(s, i + 3)?, two(s, i + 6)?))
}

/// `.digits` at `i`. Returns (micros, end). `max_digits` limits the accepted count (more is a
/// failure); digits beyond the sixth are truncated. `allow_empty` accepts a lone `.`.
#[inline]
fn fraction(s: &[u8], i: usize, max_digits: usize, allow_empty: bool) -> Option<(u32, usize)> {
    if s.get(i) != Some(&b'.') {
        return Some((0, i));
    }
    let mut j = i + 1;
    let mut micros = 0u32;
    let mut n = 0usize;
    while let Some(d) = digit(s, j) {
        if n < 6 {
            micros = micros * 10 + d;
        }
        n += 1;
        j += 1;
    }
    if n == 0 {
        return if allow_empty { Some((0, j)) } else { None };
    }
    if n > max_digits {
        return None;
    }
    for _ in n..6 {
        micros *= 10;
    }
    Some((micros, j))
}

/// Offset at `i`: `Some((Some(secs), end))`, `Some((None, i))` when there is none.
fn offset(s: &[u8], i: usize, mode: Mode) -> Option<(Option<i32>, usize)> {
    let sign: i32 = match s.get(i) {
        Some(b'Z') => return Some((Some(0), i + 1)),
        Some(b'z') if mode == Mode::Lenient => return Some((Some(0), i + 1)),
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => return Some((None, i)),
    };
    let h = two(s, i + 1)?;
    let (m, end) = if s.get(i + 3) == Some(&b':') && digit(s, i + 4).is_some() {
        (two(s, i + 4)?, i + 6)
    } else if mode == Mode::Strict {
        return None;
    } else if let Some(m) = two(s, i + 3) {
        (m, i + 5)
    } else {
        (0, i + 3)
    };
    if h > 23 || m > 59 {
        return None;
    }
    Some((Some(sign * (i32::from(h) * 3600 + i32::from(m) * 60)), end))
}

/// Builds the instant from a validated-or-not civil time and an optional explicit offset.
fn instant(dt: &CivilDateTime, micros: u32, off: Option<i32>, zone: &Zone) -> Option<Timestamp> {
    match off {
        Some(o) => {
            if !dt.is_valid() {
                return None;
            }
            Some(Timestamp {
                unix_secs: dt.as_utc_secs() - i64::from(o),
                micros,
                offset_secs: o,
            })
        }
        None => zone.local_to_timestamp(dt, micros),
    }
}

/// Two ASCII digits as a number; `None` unless both are digits.
#[inline(always)]
fn pair(hi: u8, lo: u8) -> Option<u8> {
    let (h, l) = (hi.wrapping_sub(b'0'), lo.wrapping_sub(b'0'));
    // Not `then_some`: its argument is evaluated first and would overflow for non-digits.
    if h < 10 && l < 10 {
        Some(h * 10 + l)
    } else {
        None
    }
}

/// `YYYY-MM-DD(T| )hh:mm:ss[.frac][offset]` at `i`.
pub(super) fn iso(s: &[u8], i: usize, mode: Mode, zone: &Zone) -> Option<(Timestamp, usize)> {
    // The fixed-width part as an array: one bounds check instead of nineteen.
    let b: &[u8; 19] = s.get(i..i + 19)?.try_into().ok()?;
    if b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    match (b[10], mode) {
        (b'T', _) => {}
        (b't' | b' ', Mode::Lenient) => {}
        _ => return None,
    }
    let year = i32::from(pair(b[0], b[1])?) * 100 + i32::from(pair(b[2], b[3])?);
    let dt = CivilDateTime {
        year,
        month: pair(b[5], b[6])?,
        day: pair(b[8], b[9])?,
        hour: pair(b[11], b[12])?,
        minute: pair(b[14], b[15])?,
        second: pair(b[17], b[18])?,
    };
    let (micros, j) = match mode {
        Mode::Strict => fraction(s, i + 19, 6, false)?,
        Mode::Lenient => fraction(s, i + 19, usize::MAX, true)?,
    };
    let (off, j) = offset(s, j, mode)?;
    Some((instant(&dt, micros, off, zone)?, j))
}

/// Month abbreviation (any case) to 1..=12.
#[inline]
fn month_abbr(s: &[u8], i: usize) -> Option<u8> {
    let a = s.get(i..i + 3)?;
    // Fold ASCII letters to lowercase; non-letters cannot match any name below.
    let key = [a[0] | 0x20, a[1] | 0x20, a[2] | 0x20];
    Some(match &key {
        b"jan" => 1,
        b"feb" => 2,
        b"mar" => 3,
        b"apr" => 4,
        b"may" => 5,
        b"jun" => 6,
        b"jul" => 7,
        b"aug" => 8,
        b"sep" => 9,
        b"oct" => 10,
        b"nov" => 11,
        b"dec" => 12,
        _ => return None,
    })
}

#[inline]
fn skip_sp(s: &[u8], mut i: usize) -> usize {
    while s.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// `Mmm SP+ d{1,2} SP+ [yyyy SP+] hh:mm:ss[.frac] [SP yyyy]` at `i` (RFC 3164 plus the Cisco and
/// Linksys year positions). Returns the timestamp, whether the year was inferred, and the end.
pub(super) fn bsd(
    s: &[u8],
    i: usize,
    now_unix_secs: i64,
    zone: &Zone,
) -> Option<(Timestamp, bool, usize)> {
    let month = month_abbr(s, i)?;
    if s.get(i + 3) != Some(&b' ') {
        return None;
    }
    let mut j = skip_sp(s, i + 3);
    let mut day = digit(s, j)? as u8;
    j += 1;
    if let Some(d) = digit(s, j) {
        day = day * 10 + d as u8;
        j += 1;
    }
    if s.get(j) != Some(&b' ') {
        return None;
    }
    j = skip_sp(s, j);
    // Cisco: `Mmm dd yyyy hh:mm:ss`.
    let mut year = None;
    if s.get(j + 4) == Some(&b' ')
        && let Some(y) = four(s, j)
    {
        year = Some(y);
        j = skip_sp(s, j + 4);
    }
    let (hour, minute, second) = hms(s, j)?;
    let (micros, mut end) = fraction(s, j + 8, usize::MAX, true)?;
    // Linksys: `Mmm dd hh:mm:ss yyyy`, only as a whole SP-delimited token (as syslog-ng reads it).
    if year.is_none()
        && s.get(end) == Some(&b' ')
        && s.get(end + 5) == Some(&b' ')
        && let Some(y) = four(s, end + 1)
    {
        year = Some(y);
        end += 5;
    }
    let (year, inferred) = match year {
        Some(y) => (y, false),
        None => (
            zone.nearest_year(month, day, hour, minute, second, now_unix_secs)?,
            true,
        ),
    };
    let dt = CivilDateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
    };
    Some((zone.local_to_timestamp(&dt, micros)?, inferred, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc_secs(y: i32, mo: u8, d: u8, h: u8, mi: u8, s: u8) -> i64 {
        CivilDateTime {
            year: y,
            month: mo,
            day: d,
            hour: h,
            minute: mi,
            second: s,
        }
        .as_utc_secs()
    }

    #[test]
    fn strict_iso() {
        let z = Zone::utc();
        let (ts, end) = iso(b"2003-08-24T05:14:15.000003-07:00 x", 0, Mode::Strict, &z).unwrap();
        assert_eq!(end, 32);
        assert_eq!(ts.unix_secs, utc_secs(2003, 8, 24, 12, 14, 15));
        assert_eq!((ts.micros, ts.offset_secs), (3, -25_200));
        assert!(iso(b"2003-08-24t05:14:15Z", 0, Mode::Strict, &z).is_none());
        assert!(iso(b"2003-08-24T05:14:15z", 0, Mode::Strict, &z).is_some_and(|(_, e)| e == 19));
        assert!(iso(b"2003-08-24T05:14:15.1234567Z", 0, Mode::Strict, &z).is_none());
        assert!(iso(b"2003-08-24T05:14:15.Z", 0, Mode::Strict, &z).is_none());
        assert!(iso(b"2003-08-24T05:14:15+0100", 0, Mode::Strict, &z).is_none());
        assert!(iso(b"2003-08-24T05:14:15-24:00", 0, Mode::Strict, &z).is_none());
        assert!(iso(b"2003-09-31T05:14:15Z", 0, Mode::Strict, &z).is_none());
        assert!(iso(b"2003-09-30T24:00:00Z", 0, Mode::Strict, &z).is_none());
    }

    #[test]
    fn lenient_iso() {
        let z = Zone::utc();
        let (ts, end) = iso(
            b"2006-10-29 02:00:00.15600000000000+0100",
            0,
            Mode::Lenient,
            &z,
        )
        .unwrap();
        assert_eq!(end, 39);
        assert_eq!((ts.micros, ts.offset_secs), (156_000, 3600));
        let (ts, end) = iso(b"2006-10-29t02:00:00+01: x", 0, Mode::Lenient, &z).unwrap();
        assert_eq!((end, ts.offset_secs), (22, 3600));
        let (ts, end) = iso(b"2006-10-29T02:00:00. x", 0, Mode::Lenient, &z).unwrap();
        assert_eq!((end, ts.offset_secs, ts.micros), (20, 0, 0));
    }

    #[test]
    fn bsd_forms() {
        let z = Zone::utc();
        let now = utc_secs(2026, 6, 1, 0, 0, 0);
        let (ts, inferred, end) = bsd(b"Jan  1 01:00:00 host", 0, now, &z).unwrap();
        assert_eq!(
            (ts.unix_secs, inferred, end),
            (utc_secs(2026, 1, 1, 1, 0, 0), true, 15)
        );
        let (ts, inferred, end) = bsd(b"mar 7 2008 19:06:53: x", 0, now, &z).unwrap();
        assert_eq!(
            (ts.unix_secs, inferred, end),
            (utc_secs(2008, 3, 7, 19, 6, 53), false, 19)
        );
        let (ts, inferred, end) = bsd(b"Apr 15 21:28:13 2007 linksys", 0, now, &z).unwrap();
        assert_eq!(
            (ts.unix_secs, inferred, end),
            (utc_secs(2007, 4, 15, 21, 28, 13), false, 20)
        );
        let (ts, _, end) = bsd(b"Aug 29 02:00:00.156789123 x", 0, now, &z).unwrap();
        assert_eq!((ts.micros, end), (156_789, 25));
        assert!(bsd(b"Feb 30 12:00:00 x", 0, now, &z).is_none());
        assert!(bsd(b"Mar  1 25:00:00 x", 0, now, &z).is_none());
        assert!(bsd(b"Foo  1 12:00:00 x", 0, now, &z).is_none());
        assert!(bsd(b"Mar 123 12:00:00 x", 0, now, &z).is_none());
        assert!(bsd(b"Mar  0 12:00:00 x", 0, now, &z).is_none());
        assert!(bsd(b"Mar  1 12:00", 0, now, &z).is_none());
    }
}
