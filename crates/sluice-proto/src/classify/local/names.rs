//! Names a template or a rewrite refers to: syslog-ng's macros (computed from the message)
//! and name-value pairs (`HOST`, `.values.x`, `fields.y`, ... which rewrites and parsers set),
//! interned once at load so that evaluation compares integers.

use std::collections::HashMap;

/// An interned name-value pair name.
pub(crate) type NameId = u32;

/// Names with a fixed id: the message fields rewrites may set, and the SC4S fields the
/// classification is made of. Their values before any local application ran come from the
/// message and the built-in classification ([`super::base`]).
pub(crate) mod id {
    use super::NameId;
    pub const HOST: NameId = 0;
    pub const PROGRAM: NameId = 1;
    pub const PID: NameId = 2;
    pub const MESSAGE: NameId = 3;
    pub const MSGID: NameId = 4;
    pub const LEGACY_MSGHDR: NameId = 5;
    pub const INDEX: NameId = 6;
    pub const SOURCETYPE: NameId = 7;
    pub const SOURCE: NameId = 8;
    pub const TEMPLATE: NameId = 9;
    pub const HEC_TEMPLATE: NameId = 10;
    pub const VENDOR: NameId = 11;
    pub const PRODUCT: NameId = 12;
    pub const CLASS: NameId = 13;
    pub const NS_VENDOR: NameId = 14;
    pub const NS_PRODUCT: NameId = 15;
    pub const NS_VENDOR_PRODUCT: NameId = 16;
    pub const NS_TIME_ZONE: NameId = 17;
    pub const NS_USE_RECV_TIME: NameId = 18;
    pub const APP_NAME: NameId = 19;
    /// The first id of an ordinary name.
    pub const FIRST_FREE: NameId = 20;

    pub const FIXED: [&str; FIRST_FREE as usize] = [
        "HOST",
        "PROGRAM",
        "PID",
        "MESSAGE",
        "MSGID",
        "LEGACY_MSGHDR",
        ".splunk.index",
        ".splunk.sourcetype",
        ".splunk.source",
        ".splunk.sc4s_template",
        ".splunk.sc4s_hec_template",
        "fields.sc4s_vendor",
        "fields.sc4s_product",
        "fields.sc4s_class",
        ".netsource.sc4s_vendor",
        ".netsource.sc4s_product",
        ".netsource.sc4s_vendor_product",
        ".netsource.sc4s_time_zone",
        ".netsource.sc4s_use_recv_time",
        ".app.name",
    ];
}

/// Which stamp a date macro reads: the message's (`S_`, and no prefix), the receive time
/// (`R_`) or now (`C_`, which is the receive time here: classification has no clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    Sent,
    Received,
}

/// The parts of a stamp a date macro shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DatePart {
    /// `Mmm dd HH:MM:SS` (`DATE`, `STAMP` in the default format).
    Date,
    /// `YYYY Mmm dd HH:MM:SS`.
    FullDate,
    /// ISO 8601 with the offset and three fraction digits.
    IsoDate,
    Year,
    YearDay,
    Month,
    MonthWeek,
    MonthAbbrev,
    MonthName,
    Day,
    Hour,
    Hour12,
    Min,
    Sec,
    Msec,
    Usec,
    AmPm,
    WeekDay,
    WeekDayAbbrev,
    WeekDayName,
    Week,
    TzOffset,
    UnixTime,
}

/// syslog-ng's macros: values computed from the message (read-only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Macro {
    /// `MSGHDR`: `PROGRAM[PID]: ` from the current PROGRAM and PID.
    MsgHdr,
    /// `MSGONLY`: MESSAGE.
    MsgOnly,
    /// `SDATA`: the structured data, serialised.
    Sdata,
    RawMsg,
    SourceIp,
    /// `SOURCE`: the source's name, `s_<listener id>`.
    Source,
    /// `PRI`: the numeric priority.
    Pri,
    /// `LEVEL`, `PRIORITY`, `SEVERITY`: the severity's name.
    Level,
    LevelNum,
    Facility,
    FacilityNum,
    /// `TAGS`: the tags, comma-separated.
    Tags,
    LogHost,
    /// `HOST_FROM`, `FULLHOST_FROM`: the sender's address.
    HostFrom,
    DestPort,
    /// `PROTO`: 6 for TCP, 17 for UDP.
    Proto,
    /// `TRANSPORT`: `rfc3164+udp`-like: here the transport's name.
    Transport,
    Date(Stamp, DatePart),
}

impl Macro {
    /// The macro spelled `name` (without `$`), if it is one.
    pub fn parse(name: &str) -> Option<Macro> {
        let m = match name {
            "MSGHDR" => Macro::MsgHdr,
            "MSGONLY" => Macro::MsgOnly,
            "SDATA" => Macro::Sdata,
            "RAWMSG" => Macro::RawMsg,
            "SOURCEIP" => Macro::SourceIp,
            "SOURCE" => Macro::Source,
            "PRI" => Macro::Pri,
            "LEVEL" | "PRIORITY" | "SEVERITY" => Macro::Level,
            "LEVEL_NUM" | "SEVERITY_NUM" => Macro::LevelNum,
            "FACILITY" => Macro::Facility,
            "FACILITY_NUM" => Macro::FacilityNum,
            "TAGS" => Macro::Tags,
            "LOGHOST" => Macro::LogHost,
            "HOST_FROM" | "FULLHOST_FROM" => Macro::HostFrom,
            "DESTPORT" => Macro::DestPort,
            "PROTO" | "IP_PROTO" => Macro::Proto,
            "TRANSPORT" => Macro::Transport,
            _ => {
                let (stamp, rest) = if let Some(r) = name.strip_prefix("R_") {
                    (Stamp::Received, r)
                } else if let Some(r) = name.strip_prefix("C_") {
                    (Stamp::Received, r)
                } else if let Some(r) = name.strip_prefix("S_") {
                    (Stamp::Sent, r)
                } else {
                    (Stamp::Sent, name)
                };
                let part = match rest {
                    "DATE" | "STAMP" => DatePart::Date,
                    "FULLDATE" => DatePart::FullDate,
                    "ISODATE" => DatePart::IsoDate,
                    "YEAR" => DatePart::Year,
                    "YEAR_DAY" => DatePart::YearDay,
                    "MONTH" => DatePart::Month,
                    "MONTH_WEEK" => DatePart::MonthWeek,
                    "MONTH_ABBREV" => DatePart::MonthAbbrev,
                    "MONTH_NAME" => DatePart::MonthName,
                    "DAY" => DatePart::Day,
                    "HOUR" => DatePart::Hour,
                    "HOUR12" => DatePart::Hour12,
                    "MIN" => DatePart::Min,
                    "SEC" => DatePart::Sec,
                    "MSEC" => DatePart::Msec,
                    "USEC" => DatePart::Usec,
                    "AMPM" => DatePart::AmPm,
                    "WEEKDAY" | "WEEK_DAY_ABBREV" => DatePart::WeekDayAbbrev,
                    "WEEK_DAY" => DatePart::WeekDay,
                    "WEEK_DAY_NAME" => DatePart::WeekDayName,
                    "WEEK" => DatePart::Week,
                    "TZOFFSET" | "TZ" => DatePart::TzOffset,
                    "UNIXTIME" => DatePart::UnixTime,
                    _ => return None,
                };
                Macro::Date(stamp, part)
            }
        };
        Some(m)
    }
}

/// The interned names of one compiled configuration.
#[derive(Debug)]
pub(crate) struct Names {
    ids: HashMap<Box<str>, NameId, BuildNameHasher>,
    names: Vec<Box<str>>,
    /// One bit per name's hash (a Bloom filter): most keys a parser finds are not names
    /// of the configuration, and this tells so before the table is probed.
    bloom: [u64; 16],
}

impl Default for Names {
    fn default() -> Self {
        let mut n = Names {
            ids: HashMap::default(),
            names: Vec::new(),
            bloom: [0; 16],
        };
        for name in id::FIXED {
            n.intern(name);
        }
        n
    }
}

impl Names {
    /// The id of `name`; `MSG` is `MESSAGE`.
    pub fn intern(&mut self, name: &str) -> NameId {
        let name = if name == "MSG" { "MESSAGE" } else { name };
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as NameId;
        self.names.push(name.into());
        self.ids.insert(name.into(), i);
        let b = Self::bloom_bit(name);
        self.bloom[b >> 6] |= 1 << (b & 63);
        i
    }

    pub fn get(&self, name: &str) -> Option<NameId> {
        let name = if name == "MSG" { "MESSAGE" } else { name };
        let b = Self::bloom_bit(name);
        if self.bloom[b >> 6] & (1 << (b & 63)) == 0 {
            return None;
        }
        self.ids.get(name).copied()
    }

    fn bloom_bit(name: &str) -> usize {
        use std::hash::BuildHasher;
        (BuildNameHasher.hash_one(name) >> 54) as usize
    }

    /// The names that start with `prefix`, as (the rest, id).
    pub fn under(&self, prefix: &str) -> Vec<(Box<[u8]>, NameId)> {
        let mut v: Vec<(Box<[u8]>, NameId)> = self
            .names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                let rest = n.strip_prefix(prefix)?;
                Some((rest.as_bytes().into(), i as NameId))
            })
            .collect();
        // `MSG` is `MESSAGE` ([`Names::get`]).
        if let Some(rest) = "MSG".strip_prefix(prefix) {
            v.push((rest.as_bytes().into(), id::MESSAGE));
        }
        v
    }

    pub fn name(&self, id: NameId) -> &str {
        &self.names[id as usize]
    }
}

/// Hashes names for [`Names`]: parsers look up every key they find (a kv-parser's
/// 17 pairs are 17 lookups per message), and SipHash cost more than the rest of a lookup.
/// The table holds only the configuration's names, so a sender's keys cannot grow it.
#[derive(Clone, Copy, Default)]
pub(crate) struct BuildNameHasher;

impl std::hash::BuildHasher for BuildNameHasher {
    type Hasher = NameHasher;
    fn build_hasher(&self) -> NameHasher {
        NameHasher(0)
    }
}

/// FxHash's mixing, eight bytes at a time.
pub(crate) struct NameHasher(u64);

impl NameHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let (chunks, rest) = bytes.as_chunks::<8>();
        for c in chunks {
            self.add(u64::from_le_bytes(*c));
        }
        if !rest.is_empty() {
            // Byte by byte: a copy of a variable length is a call to memcpy.
            let w = rest
                .iter()
                .rev()
                .fold(0u64, |w, &b| (w << 8) | u64::from(b));
            self.add(w);
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Whether a template reference `name` is a macro, a match group, or a name-value pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reference {
    Macro(Macro),
    /// `$0` .. `$255`: the groups of the last regex matched with `store-matches`.
    Group(u8),
    Name(NameId),
}

pub(crate) fn resolve(names: &mut Names, name: &str) -> Reference {
    if let Ok(n) = name.parse::<u16>()
        && n <= 255
        && !name.starts_with('+')
    {
        return Reference::Group(n as u8);
    }
    if let Some(m) = Macro::parse(name) {
        return Reference::Macro(m);
    }
    Reference::Name(names.intern(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_ids_and_references() {
        let mut n = Names::default();
        assert_eq!(n.intern("HOST"), id::HOST);
        assert_eq!(n.intern("MSG"), id::MESSAGE);
        assert_eq!(n.intern(".splunk.index"), id::INDEX);
        let v = n.intern(".values.x");
        assert_eq!(v, id::FIRST_FREE);
        assert_eq!(n.name(v), ".values.x");
        assert_eq!(resolve(&mut n, "1"), Reference::Group(1));
        assert_eq!(
            resolve(&mut n, "S_ISODATE"),
            Reference::Macro(Macro::Date(Stamp::Sent, DatePart::IsoDate))
        );
        assert_eq!(
            resolve(&mut n, "R_UNIXTIME"),
            Reference::Macro(Macro::Date(Stamp::Received, DatePart::UnixTime))
        );
        assert_eq!(resolve(&mut n, "PROGRAM"), Reference::Name(id::PROGRAM));
        assert_eq!(resolve(&mut n, "LEVEL"), Reference::Macro(Macro::Level));
    }
}
