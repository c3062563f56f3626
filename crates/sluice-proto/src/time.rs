//! Time zones, civil-time arithmetic and year inference for syslog timestamps.
//!
//! # What this module decides
//!
//! * **Zone-less stamps** (`Mmm dd hh:mm:ss`, loggen's `2026-03-05T12:28:51`) are read as local
//!   time in the configured default zone (`SC4S_DEFAULT_TIMEZONE`, syslog-ng's
//!   `recv-time-zone()`). The recorded offset is the zone's offset *at the resulting instant*, so
//!   a July stamp in `America/New_York` gets `-04:00` and a January one `-05:00`.
//! * **DST edges** are resolved the "compatible" way (RFC 5545, Temporal, jiff's
//!   `AmbiguousTimestamp::compatible`): a local time inside a spring-forward gap is read with the
//!   offset in force *before* the gap (02:30 in New York on the spring-forward day becomes
//!   07:30Z, i.e. 03:30-04:00), and a local time inside a fall-back fold takes the *earlier* of
//!   its two instants (01:30 on the fall-back day becomes 05:30Z, i.e. 01:30-04:00). Both choices
//!   never fail and keep the instant within an hour of the truth, which is all a sender that
//!   omits its offset lets anyone do.
//! * **Year inference**: a stamp without a year gets the year, among the current local year and
//!   its two neighbours, that puts it nearest to "now" (a December stamp seen on 1 January is
//!   last year's; a January stamp seen on 31 December is next year's). Candidates on which the
//!   day does not exist (29 February) are skipped. "Now" is always passed in; nothing here reads
//!   a clock.
//! * **Cheap conversion**: UTC and fixed-offset zones (the common case, and what IANA zones
//!   without transitions such as `Etc/GMT+5` collapse to) convert civil time with integer date
//!   arithmetic only. Only zones with transitions consult the tz database, via jiff.
//!
//! Zone names accepted by [`Zone::from_name`]: `UTC`, `GMT`, `Z` (any case), fixed offsets
//! `+hh:mm`, `-hhmm`, `+hh` (hours 0–23, minutes 0–59), and IANA names such as
//! `America/New_York`, looked up in the system zoneinfo with jiff's bundled tzdb as fallback,
//! so the same names work in minimal containers without `/usr/share/zoneinfo`.

use std::fmt;

use crate::message::Timestamp;

/// Seconds per civil day.
const DAY: i64 = 86_400;

/// 182 days: a stamp this close to "now" in the current year needs no other candidate year.
const HALF_YEAR_SECS: i64 = 182 * DAY;

/// Why a time zone setting was rejected. Each variant carries the value as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZoneError {
    #[error(
        "time zone setting is empty: expected UTC, GMT, an offset like +05:30, or an IANA name like America/New_York"
    )]
    Empty,
    #[error("time zone offset {value:?} is out of range: hours must be 00-23 and minutes 00-59")]
    OffsetOutOfRange { value: String },
    #[error("time zone offset {value:?} is malformed: expected +hh:mm, +hhmm or +hh")]
    BadOffset { value: String },
    #[error(
        "unknown time zone {name:?}: not UTC/GMT/Z, not an offset like +05:30, and not an IANA name in the tz database ({reason})"
    )]
    Unknown { name: String, reason: String },
}

/// A default time zone for stamps that carry no offset of their own.
///
/// Cloning is cheap (an `Arc` inside jiff for named zones).
#[derive(Clone, Debug)]
pub struct Zone {
    name: Box<str>,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Seconds east of UTC; no transitions.
    Fixed(i32),
    /// A zone with transitions (DST, historical changes).
    Tz(jiff::tz::TimeZone),
}

/// A calendar date and wall-clock time with no zone attached, as written in a syslog header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CivilDateTime {
    pub year: i32,
    /// 1..=12
    pub month: u8,
    /// 1..=31, checked against the month by the functions that take it.
    pub day: u8,
    /// 0..=23
    pub hour: u8,
    /// 0..=59
    pub minute: u8,
    /// 0..=59 (leap seconds are not representable and are rejected by the parser).
    pub second: u8,
}

impl CivilDateTime {
    /// `true` when every field is in range and the day exists in that month of that year.
    pub fn is_valid(&self) -> bool {
        (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
            && self.hour <= 23
            && self.minute <= 59
            && self.second <= 59
    }

    /// Seconds since 1970-01-01T00:00:00 of this civil time read as UTC.
    /// Only meaningful for a valid value (see [`CivilDateTime::is_valid`]).
    pub fn as_utc_secs(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day) * DAY
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
    }
}

impl Zone {
    /// UTC (what SC4S ships as its default, `GMT`).
    pub fn utc() -> Zone {
        Zone {
            name: "UTC".into(),
            kind: Kind::Fixed(0),
        }
    }

    /// A fixed offset in seconds east of UTC; `None` beyond ±23:59:59.
    pub fn fixed(offset_secs: i32) -> Option<Zone> {
        if offset_secs.unsigned_abs() >= 24 * 3600 {
            return None;
        }
        let mut name = String::with_capacity(6);
        push_offset(&mut name, offset_secs);
        Some(Zone {
            name: name.into(),
            kind: Kind::Fixed(offset_secs),
        })
    }

    /// Parses an `SC4S_DEFAULT_TIMEZONE`-style value; see the module docs for the accepted forms.
    pub fn from_name(name: &str) -> Result<Zone, ZoneError> {
        let trimmed = name.trim();
        if trimmed.is_empty() {
            return Err(ZoneError::Empty);
        }
        if ["UTC", "GMT", "Z"]
            .iter()
            .any(|u| trimmed.eq_ignore_ascii_case(u))
        {
            return Ok(Zone {
                name: trimmed.into(),
                kind: Kind::Fixed(0),
            });
        }
        if let Some(sign) = trimmed.chars().next().filter(|c| *c == '+' || *c == '-') {
            let secs = parse_offset_setting(&trimmed[1..]).map_err(|out_of_range| {
                if out_of_range {
                    ZoneError::OffsetOutOfRange {
                        value: name.to_string(),
                    }
                } else {
                    ZoneError::BadOffset {
                        value: name.to_string(),
                    }
                }
            })?;
            let secs = if sign == '-' { -secs } else { secs };
            return Ok(Zone {
                name: trimmed.into(),
                kind: Kind::Fixed(secs),
            });
        }
        let tz = jiff::tz::TimeZone::get(trimmed).map_err(|e| ZoneError::Unknown {
            name: name.to_string(),
            reason: e.to_string(),
        })?;
        // Zones without transitions (UTC aliases, Etc/GMT+5) take the integer fast path.
        let kind = match tz.to_fixed_offset() {
            Ok(offset) => Kind::Fixed(offset.seconds()),
            Err(_) if tz.following(jiff::Timestamp::MIN).next().is_none() => {
                Kind::Fixed(tz.to_offset(jiff::Timestamp::UNIX_EPOCH).seconds())
            }
            Err(_) => Kind::Tz(tz),
        };
        Ok(Zone {
            name: trimmed.into(),
            kind,
        })
    }

    /// The name as configured (or `UTC` / `+hh:mm` for the constructors).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The offset when the zone has no transitions.
    pub fn fixed_offset_secs(&self) -> Option<i32> {
        match self.kind {
            Kind::Fixed(o) => Some(o),
            Kind::Tz(_) => None,
        }
    }

    /// The zone's UTC offset at an instant, in seconds east of UTC.
    pub fn offset_at(&self, unix_secs: i64) -> i32 {
        match &self.kind {
            Kind::Fixed(o) => *o,
            Kind::Tz(tz) => match jiff::Timestamp::from_second(unix_secs) {
                Ok(ts) => tz.to_offset(ts).seconds(),
                // Outside jiff's range (beyond year ±9999): no rule applies; UTC is as good
                // as anything and keeps this total.
                Err(_) => 0,
            },
        }
    }

    /// Reads a zone-less civil time in this zone. `None` when `dt` is not a valid date/time or
    /// lies outside the range jiff can represent (years beyond ±9999). DST gaps and folds are
    /// resolved the "compatible" way (module docs).
    pub fn local_to_timestamp(&self, dt: &CivilDateTime, micros: u32) -> Option<Timestamp> {
        if !dt.is_valid() || micros >= 1_000_000 {
            return None;
        }
        match &self.kind {
            Kind::Fixed(offset) => Some(Timestamp {
                unix_secs: dt.as_utc_secs() - i64::from(*offset),
                micros,
                offset_secs: *offset,
            }),
            Kind::Tz(tz) => {
                let civil = jiff::civil::DateTime::new(
                    i16::try_from(dt.year).ok()?,
                    dt.month as i8,
                    dt.day as i8,
                    dt.hour as i8,
                    dt.minute as i8,
                    dt.second as i8,
                    0,
                )
                .ok()?;
                let ts = tz.to_ambiguous_timestamp(civil).compatible().ok()?;
                Some(Timestamp {
                    unix_secs: ts.as_second(),
                    micros,
                    offset_secs: tz.to_offset(ts).seconds(),
                })
            }
        }
    }

    /// The year nearest to `now_unix_secs` for a stamp that has month, day and time but no year
    /// (module docs). `None` when the day does not exist in any candidate year (29 February
    /// outside a leap-year window, 31 April).
    pub fn nearest_year(
        &self,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        now_unix_secs: i64,
    ) -> Option<i32> {
        let now_local = now_unix_secs.saturating_add(i64::from(self.offset_at(now_unix_secs)));
        let (now_year, _, _) = civil_from_days(now_local.div_euclid(DAY));
        let at = |year: i32| {
            let dt = CivilDateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
            };
            // Comparing local wall-clock times is enough to pick the year: offsets differ by
            // hours, candidates by a year.
            dt.is_valid().then(|| dt.as_utc_secs() - now_local)
        };
        // Within 182 days of now in the current year: every other candidate is at least 183
        // days away, so this is the answer without computing the neighbours (the common case).
        let this_year = at(now_year);
        if let Some(d) = this_year
            && d.abs() <= HALF_YEAR_SECS
        {
            return Some(now_year);
        }
        let mut best: Option<(i64, i32)> = this_year.map(|d| (d.abs(), now_year));
        for year in [now_year - 1, now_year + 1] {
            if let Some(d) = at(year)
                && best.is_none_or(|(b, _)| d.abs() < b)
            {
                best = Some((d.abs(), year));
            }
        }
        best.map(|(_, y)| y)
    }
}

/// `Ok(seconds)`, or `Err(true)` for a well-formed but out-of-range offset, `Err(false)` for a
/// malformed one. `s` is the text after the sign.
fn parse_offset_setting(s: &str) -> Result<i32, bool> {
    let b = s.as_bytes();
    let digits = |x: &[u8]| -> Option<i32> {
        if x.len() == 2 && x.iter().all(u8::is_ascii_digit) {
            Some(i32::from(x[0] - b'0') * 10 + i32::from(x[1] - b'0'))
        } else {
            None
        }
    };
    let (h, m) = match b.len() {
        2 => (digits(b).ok_or(false)?, 0),
        4 => (digits(&b[..2]).ok_or(false)?, digits(&b[2..]).ok_or(false)?),
        5 if b[2] == b':' => (digits(&b[..2]).ok_or(false)?, digits(&b[3..]).ok_or(false)?),
        _ => return Err(false),
    };
    if h > 23 || m > 59 {
        return Err(true);
    }
    Ok(h * 3600 + m * 60)
}

/// `true` for Gregorian leap years (proleptic, any sign).
pub fn is_leap_year(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days in `month` (1..=12) of `year`; 0 for an invalid month.
pub fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
/// Pure integer arithmetic: this is the hot path for UTC and fixed-offset zones.
pub fn days_from_civil(year: i32, month: u8, day: u8) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // 0..=399
    let m = i64::from(month);
    let mp = (m + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1; // 0..=365
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // 0..=146096
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`]: `(year, month, day)`.
pub fn civil_from_days(days: i64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // 0..=365
    let mp = (5 * doy + 2) / 153; // 0..=11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Timestamps reaching here come from 4-digit years, far inside i32.
    (year as i32, month, day)
}

/// Writes `ts` as RFC 3339 with six fraction digits, in the offset it was written in
/// (`Z` for offset zero): `2003-08-24T05:14:15.000003-07:00`.
pub fn write_rfc3339<W: fmt::Write>(ts: &Timestamp, out: &mut W) -> fmt::Result {
    let local = ts.unix_secs + i64::from(ts.offset_secs);
    let (y, mo, d) = civil_from_days(local.div_euclid(DAY));
    let sod = local.rem_euclid(DAY);
    write!(
        out,
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:06}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        ts.micros
    )?;
    if ts.offset_secs == 0 {
        out.write_char('Z')
    } else {
        let mut s = String::with_capacity(6);
        push_offset(&mut s, ts.offset_secs);
        out.write_str(&s)
    }
}

/// [`write_rfc3339`] into a new `String`.
pub fn format_rfc3339(ts: &Timestamp) -> String {
    let mut s = String::with_capacity(32);
    // Writing into a String cannot fail.
    let _ = write_rfc3339(ts, &mut s);
    s
}

fn push_offset(out: &mut String, offset_secs: i32) {
    use std::fmt::Write as _;
    let sign = if offset_secs < 0 { '-' } else { '+' };
    let abs = offset_secs.unsigned_abs();
    let _ = write!(out, "{sign}{:02}:{:02}", abs / 3600, abs / 60 % 60);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn civil(year: i32, month: u8, day: u8, hour: u8, minute: u8, second: u8) -> CivilDateTime {
        CivilDateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
        }
    }

    fn unix(y: i32, mo: u8, d: u8, h: u8, mi: u8, s: u8) -> i64 {
        civil(y, mo, d, h, mi, s).as_utc_secs()
    }

    #[test]
    fn civil_round_trip_matches_jiff() {
        // Every day in 1600..2500 plus the epoch neighbourhood.
        let start = days_from_civil(1600, 1, 1);
        let end = days_from_civil(2500, 1, 1);
        for days in (start..end).step_by(1) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
            if days % 997 == 0 {
                let j = jiff::civil::date(y as i16, m as i8, d as i8);
                let jd = j.since(jiff::civil::date(1970, 1, 1)).unwrap().get_days();
                assert_eq!(i64::from(jd), days, "{y}-{m}-{d}");
            }
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }

    #[test]
    fn calendar_validation() {
        assert!(civil(2024, 2, 29, 0, 0, 0).is_valid());
        assert!(!civil(2018, 2, 29, 0, 0, 0).is_valid());
        assert!(!civil(1900, 2, 29, 0, 0, 0).is_valid());
        assert!(civil(2000, 2, 29, 0, 0, 0).is_valid());
        assert!(!civil(2003, 9, 31, 0, 0, 0).is_valid());
        assert!(!civil(2003, 13, 1, 0, 0, 0).is_valid());
        assert!(!civil(2003, 1, 0, 0, 0, 0).is_valid());
        assert!(!civil(2003, 1, 1, 24, 0, 0).is_valid());
        assert!(!civil(2003, 1, 1, 0, 60, 0).is_valid());
        assert!(!civil(2003, 1, 1, 0, 0, 60).is_valid());
    }

    #[test]
    fn zone_names() {
        for utc in ["UTC", "utc", "GMT", "Z", " GMT "] {
            assert_eq!(Zone::from_name(utc).unwrap().fixed_offset_secs(), Some(0));
        }
        assert_eq!(
            Zone::from_name("+05:30").unwrap().fixed_offset_secs(),
            Some(5 * 3600 + 30 * 60)
        );
        assert_eq!(
            Zone::from_name("-0800").unwrap().fixed_offset_secs(),
            Some(-8 * 3600)
        );
        assert_eq!(
            Zone::from_name("+02").unwrap().fixed_offset_secs(),
            Some(2 * 3600)
        );
        assert_eq!(
            Zone::from_name("Etc/GMT+5").unwrap().fixed_offset_secs(),
            Some(-5 * 3600)
        );
        let ny = Zone::from_name("America/New_York").unwrap();
        assert_eq!(ny.fixed_offset_secs(), None);
        assert_eq!(ny.name(), "America/New_York");
    }

    #[test]
    fn zone_errors_name_the_value() {
        assert_eq!(Zone::from_name("  ").unwrap_err(), ZoneError::Empty);
        let e = Zone::from_name("+25:00").unwrap_err();
        assert!(matches!(e, ZoneError::OffsetOutOfRange { .. }));
        assert!(e.to_string().contains("+25:00"));
        let e = Zone::from_name("+5:3").unwrap_err();
        assert!(matches!(e, ZoneError::BadOffset { .. }));
        assert!(e.to_string().contains("+5:3"));
        let e = Zone::from_name("Mars/Olympus_Mons").unwrap_err();
        assert!(matches!(e, ZoneError::Unknown { .. }));
        assert!(e.to_string().contains("Mars/Olympus_Mons"), "{e}");
    }

    #[test]
    fn fixed_offset_conversion() {
        let z = Zone::from_name("+05:30").unwrap();
        let ts = z
            .local_to_timestamp(&civil(2026, 3, 5, 12, 0, 0), 7)
            .unwrap();
        assert_eq!(ts.unix_secs, unix(2026, 3, 5, 6, 30, 0));
        assert_eq!(ts.micros, 7);
        assert_eq!(ts.offset_secs, 19_800);
        assert!(
            z.local_to_timestamp(&civil(2026, 2, 29, 0, 0, 0), 0)
                .is_none()
        );
    }

    #[test]
    fn dst_in_a_named_zone() {
        let ny = Zone::from_name("America/New_York").unwrap();
        // Winter and summer offsets.
        let w = ny
            .local_to_timestamp(&civil(2026, 1, 15, 12, 0, 0), 0)
            .unwrap();
        assert_eq!(
            (w.unix_secs, w.offset_secs),
            (unix(2026, 1, 15, 17, 0, 0), -5 * 3600)
        );
        let s = ny
            .local_to_timestamp(&civil(2026, 7, 15, 12, 0, 0), 0)
            .unwrap();
        assert_eq!(
            (s.unix_secs, s.offset_secs),
            (unix(2026, 7, 15, 16, 0, 0), -4 * 3600)
        );
        // Spring forward 2026-03-08 02:00 -> 03:00: 02:30 does not exist; compatible uses the
        // pre-gap offset (-05:00), giving 07:30Z, which is 03:30 EDT.
        let gap = ny
            .local_to_timestamp(&civil(2026, 3, 8, 2, 30, 0), 0)
            .unwrap();
        assert_eq!(gap.unix_secs, unix(2026, 3, 8, 7, 30, 0));
        assert_eq!(gap.offset_secs, -4 * 3600);
        // Fall back 2026-11-01 02:00 -> 01:00: 01:30 happens twice; compatible takes the
        // earlier (EDT) instant.
        let fold = ny
            .local_to_timestamp(&civil(2026, 11, 1, 1, 30, 0), 0)
            .unwrap();
        assert_eq!(fold.unix_secs, unix(2026, 11, 1, 5, 30, 0));
        assert_eq!(fold.offset_secs, -4 * 3600);
        assert_eq!(ny.offset_at(unix(2026, 11, 1, 7, 0, 0)), -5 * 3600);
    }

    #[test]
    fn year_inference_around_new_year() {
        let utc = Zone::utc();
        // A December stamp seen just after New Year belongs to the previous year.
        let now = unix(2027, 1, 1, 0, 5, 0);
        assert_eq!(utc.nearest_year(12, 31, 23, 59, 59, now), Some(2026));
        // A January stamp seen on New Year's Eve belongs to the next year (sender clock ahead).
        let now = unix(2026, 12, 31, 23, 58, 0);
        assert_eq!(utc.nearest_year(1, 1, 0, 0, 1, now), Some(2027));
        // Mid-year: same year, whether slightly past or slightly future.
        let now = unix(2026, 6, 15, 0, 0, 0);
        assert_eq!(utc.nearest_year(6, 14, 0, 0, 0, now), Some(2026));
        assert_eq!(utc.nearest_year(6, 16, 0, 0, 0, now), Some(2026));
        // Six months back and just under six months ahead.
        assert_eq!(utc.nearest_year(12, 1, 0, 0, 0, now), Some(2026));
        assert_eq!(utc.nearest_year(1, 1, 0, 0, 0, now), Some(2026));
        // 29 February only exists in a leap year; 2028 is the nearest one from Jan 2029.
        let now = unix(2029, 1, 10, 0, 0, 0);
        assert_eq!(utc.nearest_year(2, 29, 12, 0, 0, now), Some(2028));
        let now = unix(2026, 6, 1, 0, 0, 0);
        assert_eq!(utc.nearest_year(2, 29, 12, 0, 0, now), None);
        assert_eq!(utc.nearest_year(4, 31, 12, 0, 0, now), None);
    }

    #[test]
    fn year_inference_uses_local_new_year() {
        // At 2027-01-01T03:00Z it is still 2026-12-31 22:00 in New York: a "Dec 31 21:00"
        // stamp is an hour old, not a year old.
        let ny = Zone::from_name("America/New_York").unwrap();
        let now = unix(2027, 1, 1, 3, 0, 0);
        assert_eq!(ny.nearest_year(12, 31, 21, 0, 0, now), Some(2026));
        assert_eq!(ny.nearest_year(1, 1, 0, 30, 0, now), Some(2027));
        let tokyo = Zone::from_name("+09:00").unwrap();
        // 2026-12-31T16:00Z is already 2027-01-01 01:00 in Tokyo.
        let now = unix(2026, 12, 31, 16, 0, 0);
        assert_eq!(tokyo.nearest_year(1, 1, 0, 59, 0, now), Some(2027));
    }

    #[test]
    fn rfc3339_formatting() {
        let ts = Timestamp {
            unix_secs: unix(2003, 8, 24, 12, 14, 15),
            micros: 3,
            offset_secs: -7 * 3600,
        };
        assert_eq!(format_rfc3339(&ts), "2003-08-24T05:14:15.000003-07:00");
        let ts = Timestamp {
            unix_secs: unix(1987, 1, 1, 11, 40, 27),
            micros: 87,
            offset_secs: 20 * 60,
        };
        assert_eq!(format_rfc3339(&ts), "1987-01-01T12:00:27.000087+00:20");
        let ts = Timestamp {
            unix_secs: -1,
            micros: 999_999,
            offset_secs: 0,
        };
        assert_eq!(format_rfc3339(&ts), "1969-12-31T23:59:59.999999Z");
    }

    proptest::proptest! {
        #[test]
        fn nearest_year_matches_brute_force(
            now in -2_000_000_000i64..5_000_000_000,
            month in 1u8..=12,
            day in 1u8..=31,
            hour in 0u8..=23,
            minute in 0u8..=59,
            second in 0u8..=59,
            offset_min in -(23 * 60 + 59)..=(23 * 60 + 59),
        ) {
            let zone = Zone::fixed(offset_min * 60).unwrap();
            let now_local = now + i64::from(offset_min) * 60;
            let (y, _, _) = civil_from_days(now_local.div_euclid(DAY));
            let mut want: Option<(i64, i32)> = None;
            for year in [y, y - 1, y + 1] {
                let dt = civil(year, month, day, hour, minute, second);
                if dt.is_valid() {
                    let d = (dt.as_utc_secs() - now_local).abs();
                    if want.is_none_or(|(b, _)| d < b) {
                        want = Some((d, year));
                    }
                }
            }
            proptest::prop_assert_eq!(
                zone.nearest_year(month, day, hour, minute, second, now),
                want.map(|(_, y)| y)
            );
        }
    }
}
