//! The parsed form of one syslog message.
//!
//! Every field borrows from the buffer the message was received into, so parsing allocates
//! nothing. Text fields are byte slices, not `str`: devices send Latin-1, broken UTF-8 and
//! control bytes, and the decision how to render those (lossy U+FFFD in JSON) belongs to the
//! encoder, which does it while copying instead of in a second pass.

use std::borrow::Cow;
use std::fmt;

/// Which grammar the message was read with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// RFC 5424, parsed strictly.
    Rfc5424,
    /// RFC 3164 and the real-world BSD-style variants; never fails.
    Rfc3164,
    /// Nothing could be parsed (bad PRI, RFC 5424 grammar violation, empty input):
    /// `message` holds the whole raw text.
    Unparsed,
}

impl Format {
    /// The label used in metrics and in `sluice parse` output.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Rfc5424 => "rfc5424",
            Format::Rfc3164 => "rfc3164",
            Format::Unparsed => "unparsed",
        }
    }
}

/// PRI = facility * 8 + severity, 0..=191.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Priority(u8);

impl Priority {
    /// `user.notice`: what RFC 3164 and syslog-ng assume when a message has no PRI.
    pub const DEFAULT: Priority = Priority(13);

    /// `None` when `value` is above 191 (facility 23, severity 7).
    pub const fn new(value: u8) -> Option<Priority> {
        if value <= 191 {
            Some(Priority(value))
        } else {
            None
        }
    }

    pub const fn value(self) -> u8 {
        self.0
    }

    pub const fn facility(self) -> u8 {
        self.0 >> 3
    }

    pub const fn severity(self) -> u8 {
        self.0 & 7
    }

    /// syslog-ng's `$FACILITY` name, which SC4S sends as `sc4s_syslog_facility`.
    pub const fn facility_name(self) -> &'static str {
        FACILITY_NAMES[self.facility() as usize]
    }

    /// syslog-ng's `$LEVEL` name, which SC4S sends as `sc4s_syslog_severity`.
    pub const fn severity_name(self) -> &'static str {
        SEVERITY_NAMES[self.severity() as usize]
    }
}

/// syslog's facility names by number, as syslog-ng writes them (`$FACILITY`).
pub const FACILITY_NAMES: [&str; 24] = [
    "kern",
    "user",
    "mail",
    "daemon",
    "auth",
    "syslog",
    "lpr",
    "news",
    "uucp",
    "cron",
    "authpriv",
    "ftp",
    "ntp",
    "security",
    "console",
    "solaris-cron",
    "local0",
    "local1",
    "local2",
    "local3",
    "local4",
    "local5",
    "local6",
    "local7",
];

/// syslog's level names by number, as syslog-ng writes them (`$LEVEL`).
pub const SEVERITY_NAMES: [&str; 8] = [
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
];

/// The level a syslog-ng configuration names: a `$LEVEL` name, one of syslog-ng's aliases
/// (`panic`, `error`, `warn`), or its number; case and surrounding space ignored.
pub fn severity_by_name(word: &str) -> Option<u8> {
    let w = word.trim().to_ascii_lowercase();
    let w = match w.as_str() {
        "panic" => "emerg",
        "error" => "err",
        "warn" => "warning",
        other => other,
    };
    SEVERITY_NAMES
        .iter()
        .position(|l| *l == w)
        .or_else(|| w.parse::<usize>().ok().filter(|n| *n < 8))
        .map(|l| l as u8)
}

/// The facility a syslog-ng configuration names: a `$FACILITY` name or its number; case and
/// surrounding space ignored.
pub fn facility_by_name(word: &str) -> Option<u8> {
    let w = word.trim().to_ascii_lowercase();
    FACILITY_NAMES
        .iter()
        .position(|f| *f == w)
        .or_else(|| w.parse::<usize>().ok().filter(|n| *n < 24))
        .map(|f| f as u8)
}

/// An instant with the UTC offset it was written in.
///
/// Precision is microseconds: RFC 5424 allows six fraction digits and the corpus truncates
/// longer fractions to six.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// Seconds since the Unix epoch (UTC).
    pub unix_secs: i64,
    /// Microseconds within the second, 0..1_000_000.
    pub micros: u32,
    /// The offset from UTC the stamp was written in (or the default zone's offset at that
    /// instant for zone-less stamps), in seconds east of UTC.
    pub offset_secs: i32,
}

impl Timestamp {
    /// Microseconds since the epoch.
    pub fn unix_micros(self) -> i64 {
        self.unix_secs * 1_000_000 + i64::from(self.micros)
    }
}

/// The STRUCTURED-DATA part of an RFC 5424 message, already validated by the parser.
///
/// Only the raw span is stored; [`StructuredData::elements`] walks it on demand. Walking is
/// cheap and allocation-free, and most messages are never walked at all except by the encoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StructuredData<'a> {
    raw: &'a [u8],
}

impl<'a> StructuredData<'a> {
    /// Wraps a span the parser has validated: one or more `[ID (SP NAME="VALUE")*]` elements,
    /// where VALUE may contain `\"`, `\\` and `\]` escapes. Iteration on anything else stops
    /// early rather than panicking.
    pub fn from_validated(raw: &'a [u8]) -> Self {
        StructuredData { raw }
    }

    /// The span as received, escapes intact.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    pub fn elements(&self) -> SdElements<'a> {
        SdElements { rest: self.raw }
    }
}

/// Iterator over SD-ELEMENTs.
#[derive(Clone, Debug)]
pub struct SdElements<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for SdElements<'a> {
    type Item = SdElement<'a>;

    fn next(&mut self) -> Option<SdElement<'a>> {
        let rest = self.rest.strip_prefix(b"[")?;
        let id_end = rest
            .iter()
            .position(|&b| b == b' ' || b == b']')
            .unwrap_or(rest.len());
        let id = &rest[..id_end];
        // Find the closing `]` that is not inside a quoted value.
        let mut i = id_end;
        let mut in_value = false;
        while i < rest.len() {
            match rest[i] {
                b'\\' if in_value => i += 1,
                b'"' => in_value = !in_value,
                b']' if !in_value => break,
                _ => {}
            }
            i += 1;
        }
        if i >= rest.len() {
            self.rest = &[];
            return None;
        }
        let params = &rest[id_end..i];
        self.rest = &rest[i + 1..];
        Some(SdElement { id, params })
    }
}

/// One `[SD-ID params...]` element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdElement<'a> {
    id: &'a [u8],
    params: &'a [u8],
}

impl<'a> SdElement<'a> {
    pub fn id(&self) -> &'a [u8] {
        self.id
    }

    /// Parameters in wire order; a name may repeat (RFC 5424 allows it).
    pub fn params(&self) -> SdParams<'a> {
        SdParams { rest: self.params }
    }
}

/// Iterator over the `NAME="VALUE"` pairs of one element.
#[derive(Clone, Debug)]
pub struct SdParams<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for SdParams<'a> {
    type Item = SdParam<'a>;

    fn next(&mut self) -> Option<SdParam<'a>> {
        let rest = self.rest.strip_prefix(b" ")?;
        let eq = rest.iter().position(|&b| b == b'=')?;
        let name = &rest[..eq];
        let after = &rest[eq + 1..];
        if let Some(quoted) = after.strip_prefix(b"\"") {
            let mut i = 0;
            while i < quoted.len() {
                match quoted[i] {
                    b'\\' => i += 2,
                    b'"' => break,
                    _ => i += 1,
                }
            }
            let end = i.min(quoted.len());
            self.rest = quoted.get(end + 1..).unwrap_or(&[]);
            Some(SdParam {
                name,
                raw_value: &quoted[..end],
                quoted: true,
            })
        } else {
            // Lenient form some devices (VMware) send: an unquoted value up to the next space.
            // It has no escapes: a backslash in it is data (`DOMAIN\user`).
            let end = after.iter().position(|&b| b == b' ').unwrap_or(after.len());
            self.rest = &after[end..];
            Some(SdParam {
                name,
                raw_value: &after[..end],
                quoted: false,
            })
        }
    }
}

/// One SD-PARAM. The value is stored escaped; [`SdParam::value`] unescapes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdParam<'a> {
    name: &'a [u8],
    raw_value: &'a [u8],
    /// `false` for the lenient unquoted form, whose value has no escapes.
    quoted: bool,
}

impl<'a> SdParam<'a> {
    pub fn name(&self) -> &'a [u8] {
        self.name
    }

    /// The value as received, with its `\"`, `\\`, `\]` escapes.
    pub fn raw_value(&self) -> &'a [u8] {
        self.raw_value
    }

    /// `false` for the lenient unquoted form (`name=value`, as VMware ESXi sends).
    pub fn is_quoted(&self) -> bool {
        self.quoted
    }

    /// The value with `\"`, `\\` and `\]` unescaped. A backslash before any other byte is
    /// kept, as RFC 5424 section 6.3.3 requires. An unquoted (lenient) value is returned as is.
    /// Borrows unless an escape is present.
    pub fn value(&self) -> Cow<'a, [u8]> {
        if !self.quoted || !self.raw_value.contains(&b'\\') {
            return Cow::Borrowed(self.raw_value);
        }
        let mut out = Vec::with_capacity(self.raw_value.len());
        unescape_into(self.raw_value, &mut out);
        Cow::Owned(out)
    }
}

/// Appends `raw` to `out` with RFC 5424 PARAM-VALUE escapes (`\"`, `\\`, `\]`) resolved.
pub fn unescape_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == b'\\'
            && let Some(&next) = raw.get(i + 1)
            && matches!(next, b'"' | b'\\' | b']')
        {
            out.push(next);
            i += 2;
            continue;
        }
        out.push(b);
        i += 1;
    }
}

/// One parsed syslog message. See the crate docs for the grammar and its deviations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    /// The input after trailing LF/CR/NUL were stripped: what `unparsed` delivers whole.
    pub raw: &'a [u8],
    pub format: Format,
    /// `Some(DEFAULT)` when the input had no PRI; `None` only for `Unparsed` input whose PRI
    /// was present but invalid (or for empty input).
    pub priority: Option<Priority>,
    pub timestamp: Option<Timestamp>,
    /// The year was not in the stamp and was chosen as the one nearest to "now".
    pub year_inferred: bool,
    pub hostname: Option<&'a [u8]>,
    /// RFC 5424 APP-NAME, or the RFC 3164 TAG's program name.
    pub appname: Option<&'a [u8]>,
    pub procid: Option<&'a [u8]>,
    pub msgid: Option<&'a [u8]>,
    pub structured_data: Option<StructuredData<'a>>,
    /// `None` only for RFC 5424 without a MSG part; a leading BOM is already removed.
    pub message: Option<&'a [u8]>,
}

impl<'a> Message<'a> {
    /// The never-fail result: everything goes to `message`, whole.
    pub fn unparsed(raw: &'a [u8], priority: Option<Priority>) -> Self {
        Message {
            raw,
            format: Format::Unparsed,
            priority,
            timestamp: None,
            year_inferred: false,
            hostname: None,
            appname: None,
            procid: None,
            msgid: None,
            structured_data: None,
            message: Some(raw),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_names() {
        let p = Priority::new(166).unwrap();
        assert_eq!((p.facility(), p.severity()), (20, 6));
        assert_eq!(p.facility_name(), "local4");
        assert_eq!(p.severity_name(), "info");
        assert_eq!(Priority::DEFAULT.facility_name(), "user");
        assert_eq!(Priority::DEFAULT.severity_name(), "notice");
        assert!(Priority::new(192).is_none());
        assert_eq!(Priority::new(191).unwrap().facility_name(), "local7");
    }

    #[test]
    fn sd_iteration_with_escapes_and_repeats() {
        let sd = StructuredData::from_validated(
            br#"[ex@1 a="1" a="2" q="say \"hi\" \\ \] \n"][meta seq="7"][empty]"#,
        );
        let els: Vec<_> = sd.elements().collect();
        assert_eq!(els.len(), 3);
        assert_eq!(els[0].id(), b"ex@1");
        let params: Vec<_> = els[0]
            .params()
            .map(|p| (p.name().to_vec(), p.value().into_owned()))
            .collect();
        assert_eq!(
            params,
            vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"a".to_vec(), b"2".to_vec()),
                (b"q".to_vec(), br#"say "hi" \ ] \n"#.to_vec()),
            ]
        );
        assert_eq!(els[1].id(), b"meta");
        assert_eq!(els[1].params().count(), 1);
        assert_eq!(els[2].id(), b"empty");
        assert_eq!(els[2].params().count(), 0);
    }

    #[test]
    fn sd_iteration_never_panics_on_garbage() {
        for raw in [
            &b"["[..],
            b"[a",
            b"[a b=\"",
            b"[a b=\"\\",
            b"]",
            b"[a b]",
            b"[a b=c d",
        ] {
            let sd = StructuredData::from_validated(raw);
            for el in sd.elements() {
                for p in el.params() {
                    let _ = p.value();
                }
            }
        }
    }
}
