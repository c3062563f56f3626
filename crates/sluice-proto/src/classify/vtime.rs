//! Vendor time stamps: what SC4S's `date-parser()` calls and `fix-time-zone()` do.
//!
//! A stamp without a zone is read in `SC4S_DEFAULT_TIMEZONE` (the zone passed in). SC4S's
//! `date-parser()` reads it in the container's zone, UTC in SC4S's image, which is also
//! SC4S_DEFAULT_TIMEZONE's default; sluice lets the setting reach vendor stamps, so one
//! setting describes the devices' zone. A stamp without a year takes the year nearest to
//! "now", like a BSD header.

use crate::message::Timestamp;
use crate::time::{CivilDateTime, Zone, civil_from_days};

/// Re-reads the wall-clock time of `ts` in `zone` (syslog-ng `fix-time-zone()`: the time
/// as shown is kept, the zone replaced). `None` when the result is out of range.
pub fn fix_time_zone(ts: Timestamp, zone: &Zone) -> Option<Timestamp> {
    let wall = ts.unix_secs.checked_add(i64::from(ts.offset_secs))?;
    let days = wall.div_euclid(86_400);
    let secs = wall.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let dt = CivilDateTime {
        year,
        month,
        day,
        hour: (secs / 3600) as u8,
        minute: (secs / 60 % 60) as u8,
        second: (secs % 60) as u8,
    };
    zone.local_to_timestamp(&dt, ts.micros)
}

/// `YYYY-MM-DD[T| ]hh:mm:ss[.frac][Z|±hh[:]mm]`; without an offset, read in `zone`.
pub fn parse_iso(s: &[u8], zone: &Zone) -> Option<Timestamp> {
    let mut p = Cursor { s, at: 0 };
    let year = p.digits(4)? as i32;
    p.byte(b'-')?;
    let month = p.digits(2)? as u8;
    p.byte(b'-')?;
    let day = p.digits(2)? as u8;
    if matches!(p.peek(), Some(b'T' | b't' | b' ')) {
        p.at += 1;
    }
    let hour = p.digits(2)? as u8;
    p.byte(b':')?;
    let minute = p.digits(2)? as u8;
    p.byte(b':')?;
    let second = p.digits(2)? as u8;
    let micros = p.fraction();
    let offset = p.offset();
    if p.at != s.len() {
        return None;
    }
    let dt = CivilDateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
    };
    at_offset(&dt, micros, offset, zone)
}

/// A civil time at an explicit offset, or in `zone`.
pub(crate) fn at_offset(
    dt: &CivilDateTime,
    micros: u32,
    offset: Option<i32>,
    zone: &Zone,
) -> Option<Timestamp> {
    match offset {
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

/// Epoch seconds with an optional fraction (`1710166925`, `1710166925.123`), or
/// milliseconds when `millis` (`1710166925123`).
pub fn parse_epoch(s: &[u8], millis: bool) -> Option<Timestamp> {
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(dot) => (&s[..dot], Some(&s[dot + 1..])),
        None => (s, None),
    };
    if int.is_empty() || int.len() > 16 || !int.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: i64 = std::str::from_utf8(int).ok()?.parse().ok()?;
    let (secs, mut micros) = if millis {
        (n / 1000, (n % 1000) as u32 * 1000)
    } else {
        (n, 0)
    };
    if let Some(f) = frac {
        if f.is_empty() || !f.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let mut m = 0u32;
        for i in 0..6 {
            m = m * 10 + f.get(i).map_or(0, |d| u32::from(d - b'0'));
        }
        micros = if millis { micros + m / 1000 } else { m };
    }
    Some(Timestamp {
        unix_secs: secs,
        micros,
        offset_secs: 0,
    })
}

/// Parses `s` with a `strptime`-style format (syslog-ng `date-parser(format(...))`):
/// `%Y %y %m %d %e %H %I %M %S %p %b %B %h %a %A %j`(not supported: fails) `%T` (`%H:%M:%S`),
/// `%f` (fraction digits, after a `.` or `,` written in the format), `%z` (`Z`, `±hh`,
/// `±hhmm`, `±hh:mm`), `%Z` (`UTC`/`GMT`/`Z`, other names are skipped and the default zone
/// applies), `%s` (epoch seconds), `%%`. A space in the format matches one or more spaces.
/// The whole input must be used.
pub fn strptime(format: &str, s: &[u8], zone: &Zone, now_unix_secs: i64) -> Option<Timestamp> {
    let f = format.as_bytes();
    let mut p = Cursor { s, at: 0 };
    let (mut year, mut month, mut day) = (None::<i32>, None::<u8>, None::<u8>);
    let (mut hour, mut minute, mut second, mut micros) = (0u32, 0u32, 0u32, 0u32);
    let mut pm = None::<bool>;
    let mut offset = None::<i32>;
    let mut epoch = None::<i64>;
    let mut i = 0;
    while i < f.len() {
        let c = f[i];
        if c != b'%' {
            if c == b' ' {
                if p.peek() != Some(b' ') {
                    return None;
                }
                while p.peek() == Some(b' ') {
                    p.at += 1;
                }
            } else {
                p.byte(c)?;
            }
            i += 1;
            continue;
        }
        let spec = *f.get(i + 1)?;
        i += 2;
        match spec {
            b'Y' => year = Some(p.number(4, 4)? as i32),
            b'y' => year = Some(2000 + p.number(2, 2)? as i32),
            b'm' => month = Some(p.number(1, 2)? as u8),
            b'd' | b'e' => {
                if p.peek() == Some(b' ') {
                    p.at += 1;
                }
                day = Some(p.number(1, 2)? as u8)
            }
            b'H' | b'I' => hour = p.number(1, 2)?,
            b'M' => minute = p.number(1, 2)?,
            b'S' => second = p.number(1, 2)?,
            b'T' => {
                hour = p.number(1, 2)?;
                p.byte(b':')?;
                minute = p.number(1, 2)?;
                p.byte(b':')?;
                second = p.number(1, 2)?;
            }
            b'f' => {
                let n = p.s[p.at..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                if n == 0 {
                    return None;
                }
                let digits = &p.s[p.at..p.at + n];
                micros = (0..6).fold(0, |m, k| {
                    m * 10 + digits.get(k).map_or(0, |d| u32::from(d - b'0'))
                });
                p.at += n;
            }
            b'p' => {
                let w = p.s.get(p.at..p.at + 2)?;
                pm = Some(if w.eq_ignore_ascii_case(b"PM") {
                    true
                } else if w.eq_ignore_ascii_case(b"AM") {
                    false
                } else {
                    return None;
                });
                p.at += 2;
            }
            b'b' | b'B' | b'h' => month = Some(p.month_name()?),
            b'a' | b'A' => p.day_name()?,
            b'z' => offset = Some(p.offset()?),
            b'Z' => {
                let n = p.s[p.at..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphabetic())
                    .count();
                if n == 0 {
                    return None;
                }
                let name = &p.s[p.at..p.at + n];
                if [&b"UTC"[..], b"GMT", b"Z", b"UT"]
                    .iter()
                    .any(|u| name.eq_ignore_ascii_case(u))
                {
                    offset = Some(0);
                }
                p.at += n;
            }
            b's' => {
                let n = p.s[p.at..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                if n == 0 || n > 12 {
                    return None;
                }
                epoch = Some(
                    std::str::from_utf8(&p.s[p.at..p.at + n])
                        .ok()?
                        .parse()
                        .ok()?,
                );
                p.at += n;
            }
            b'%' => p.byte(b'%')?,
            _ => return None,
        }
    }
    if p.at != s.len() {
        return None;
    }
    if let Some(e) = epoch {
        return Some(Timestamp {
            unix_secs: e,
            micros,
            offset_secs: 0,
        });
    }
    if let Some(pm) = pm {
        if !(1..=12).contains(&hour) {
            return None;
        }
        hour = hour % 12 + if pm { 12 } else { 0 };
    }
    let (month, day) = (month?, day?);
    let (hour, minute, second) = (hour as u8, minute as u8, second as u8);
    let year = match year {
        Some(y) => y,
        None => zone.nearest_year(month, day, hour, minute, second, now_unix_secs)?,
    };
    let dt = CivilDateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
    };
    at_offset(&dt, micros, offset, zone)
}

/// The first of `formats` that parses `s` (syslog-ng tries its formats in order).
pub fn strptime_any(
    formats: &[&str],
    s: &[u8],
    zone: &Zone,
    now_unix_secs: i64,
) -> Option<Timestamp> {
    formats
        .iter()
        .find_map(|f| strptime(f, s, zone, now_unix_secs))
}

const MONTH_NAMES: [&[u8]; 12] = [
    b"january",
    b"february",
    b"march",
    b"april",
    b"may",
    b"june",
    b"july",
    b"august",
    b"september",
    b"october",
    b"november",
    b"december",
];

const DAY_NAMES: [&[u8]; 7] = [
    b"monday",
    b"tuesday",
    b"wednesday",
    b"thursday",
    b"friday",
    b"saturday",
    b"sunday",
];

pub(crate) struct Cursor<'a> {
    pub s: &'a [u8],
    pub at: usize,
}

impl Cursor<'_> {
    pub fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    pub fn byte(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// Exactly `n` digits.
    pub fn digits(&mut self, n: usize) -> Option<u32> {
        let d = self.s.get(self.at..self.at + n)?;
        if !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += n;
        Some(d.iter().fold(0, |v, b| v * 10 + u32::from(b - b'0')))
    }

    /// `min..=max` digits.
    pub fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let n = self.s[self.at..]
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n < min {
            return None;
        }
        let v = self.s[self.at..self.at + n]
            .iter()
            .fold(0, |v, b| v * 10 + u32::from(b - b'0'));
        self.at += n;
        Some(v)
    }

    /// A month name, full or abbreviated to three letters, any case.
    pub fn month_name(&mut self) -> Option<u8> {
        let (i, len) = self.name_in(&MONTH_NAMES)?;
        self.at += len;
        Some(i as u8 + 1)
    }

    /// A weekday name, full or abbreviated, any case (checked, not used).
    pub fn day_name(&mut self) -> Option<()> {
        let (_, len) = self.name_in(&DAY_NAMES)?;
        self.at += len;
        Some(())
    }

    fn name_in(&self, names: &[&[u8]]) -> Option<(usize, usize)> {
        let rest = &self.s[self.at..];
        names.iter().enumerate().find_map(|(i, name)| {
            if rest.len() >= name.len() && rest[..name.len()].eq_ignore_ascii_case(name) {
                Some((i, name.len()))
            } else if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case(&name[..3]) {
                Some((i, 3))
            } else {
                None
            }
        })
    }

    /// `.digits` or `,digits` as microseconds (truncated), 0 when absent.
    pub fn fraction(&mut self) -> u32 {
        if !matches!(self.peek(), Some(b'.' | b',')) {
            return 0;
        }
        let start = self.at + 1;
        let n = self.s[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if n == 0 {
            return 0;
        }
        self.at = start + n;
        let mut m = 0u32;
        for i in 0..6 {
            m = m * 10
                + if i < n {
                    u32::from(self.s[start + i] - b'0')
                } else {
                    0
                };
        }
        m
    }

    /// `Z`, `±hh`, `±hhmm` or `±hh:mm` as seconds east of UTC.
    pub fn offset(&mut self) -> Option<i32> {
        match self.peek()? {
            b'Z' | b'z' => {
                self.at += 1;
                Some(0)
            }
            sign @ (b'+' | b'-') => {
                let save = self.at;
                self.at += 1;
                let Some(h) = self.digits(2) else {
                    self.at = save;
                    return None;
                };
                if self.peek() == Some(b':') {
                    self.at += 1;
                }
                let m = self.digits(2).unwrap_or(0);
                let secs = (h * 3600 + m * 60) as i32;
                Some(if sign == b'-' { -secs } else { secs })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_and_epoch() {
        let z = Zone::utc();
        let t = parse_iso(b"2024-03-16T06:10:11Z", &z).unwrap();
        assert_eq!(t.unix_secs, 1_710_569_411);
        let t = parse_iso(b"2024-03-16 06:10:11.5-05:00", &z).unwrap();
        assert_eq!((t.unix_secs, t.micros), (1_710_569_411 + 5 * 3600, 500_000));
        assert!(parse_iso(b"2024-03-16T06:10", &z).is_none());
        let t = parse_epoch(b"1710569411.123", false).unwrap();
        assert_eq!((t.unix_secs, t.micros), (1_710_569_411, 123_000));
        let t = parse_epoch(b"1710569411123", true).unwrap();
        assert_eq!((t.unix_secs, t.micros), (1_710_569_411, 123_000));
        assert!(parse_epoch(b"17x", false).is_none());
    }

    #[test]
    fn strptime_formats() {
        let z = Zone::utc();
        let now = 1_711_929_600; // 2024-04-01
        let t =
            |f: &str, s: &str| strptime(f, s.as_bytes(), &z, now).map(|t| (t.unix_secs, t.micros));
        assert_eq!(
            t("%Y/%m/%d %H:%M:%S", "2024/03/16 06:10:11"),
            Some((1_710_569_411, 0))
        );
        assert_eq!(
            t("%b %d %H:%M:%S", "Mar 16 06:10:11"),
            Some((1_710_569_411, 0))
        );
        assert_eq!(
            t("%b %d %H:%M:%S", "Mar  6 06:10:11"),
            Some((1_709_705_411, 0))
        );
        assert_eq!(
            t("%b %d %Y %H:%M:%S.%f", "Mar 16 2024 06:10:11.25"),
            Some((1_710_569_411, 250_000))
        );
        assert_eq!(
            t("%b %d %Y %I:%M:%S %p", "Mar 16 2024 06:10:11 PM"),
            Some((1_710_569_411 + 12 * 3600, 0))
        );
        assert_eq!(
            t("%Y-%m-%dT%T%z", "2024-03-16T07:10:11+01:00"),
            Some((1_710_569_411, 0))
        );
        assert_eq!(
            t("%b %d %T %Z", "Mar 16 06:10:11 UTC"),
            Some((1_710_569_411, 0))
        );
        assert_eq!(t("%s.%f", "1710569411.5"), Some((1_710_569_411, 500_000)));
        assert_eq!(
            t("%a %b %d %T %Y", "Sat Mar 16 06:10:11 2024"),
            Some((1_710_569_411, 0))
        );
        assert_eq!(t("%Y-%m-%d", "2024-03-16 x"), None);
        assert_eq!(t("%Q", "x"), None);
        assert_eq!(
            strptime_any(&["%s", "%Y-%m-%d %T"], b"2024-03-16 06:10:11", &z, now)
                .map(|t| t.unix_secs),
            Some(1_710_569_411)
        );
    }

    #[test]
    fn fix_zone_keeps_wall_clock() {
        let utc = parse_iso(b"2024-03-16T06:10:11Z", &Zone::utc()).unwrap();
        let ny = Zone::from_name("America/New_York").unwrap();
        let fixed = fix_time_zone(utc, &ny).unwrap();
        assert_eq!(fixed.unix_secs, utc.unix_secs + 4 * 3600);
        assert_eq!(fixed.offset_secs, -4 * 3600);
    }
}
