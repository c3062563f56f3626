//! The syslog parser: one datagram or de-framed TCP record in, one [`Message`] out.
//!
//! [`parse`] never fails and never allocates on the common path: every field of the result
//! borrows from the input, what cannot be parsed is delivered whole as
//! [`Format::Unparsed`](crate::message::Format::Unparsed), and no byte of the input is ever
//! dropped except the trailer described below. Text is not UTF-8-validated here (rendering
//! invalid bytes as U+FFFD is the encoder's job, done while copying); only header bytes are
//! inspected, the MSG body is never scanned.
//!
//! The behaviour below is the contract of the conformance corpus (`tests/corpus/`, a copy of
//! the shared corpus, and its `README.md`), which deliberately differs from syslog-ng in places; every deviation from the
//! RFCs is listed with its reason.
//!
//! # 1. Pre-processing
//!
//! The run of trailing `LF`, `CR` and `NUL` bytes is removed (senders terminate UDP datagrams
//! with `\n`, `\r\n` or a C string's `\0`); the result is [`Message::raw`]. Nothing else is
//! trimmed: interior CR/LF/NUL/TAB and leading or trailing SPs are data.
//! An input that is empty after this step is `Unparsed` with no priority and an empty message.
//!
//! # 2. PRI
//!
//! ```text
//! PRI = "<" 1*3DIGIT ">"        ; value 0..=191
//! ```
//!
//! If the input starts with `<`, it must be a valid PRI, or the result is `Unparsed` with
//! `priority: None` and the whole input as message (`<999>`, `<>`, `<abc>`, `<-1>`, `<13`).
//! *Deviation:* syslog-ng accepts any integer and reads `<` / `<13` as an empty message; that
//! loses data or invents a facility. Leading zeros (`<013>`) are accepted.
//! An input that does not start with `<` has no PRI: priority 13 (`user.notice`, RFC 3164
//! 4.3.3) and the whole input is read as RFC 3164 below.
//!
//! # 3. RFC 5424 (strict)
//!
//! PRI followed by `"1" SP` selects RFC 5424, parsed strictly; **any** violation gives
//! `Unparsed` with the PRI kept and the whole input as message, so nothing is lost and nothing
//! is guessed. (`<13>1` without the SP is RFC 3164 with message `1`; other VERSIONs are not
//! recognised and fall through to RFC 3164.)
//!
//! ```text
//! HEADER    = PRI "1" SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID
//! SYSLOG    = HEADER SP STRUCTURED-DATA [SP MSG]
//! TIMESTAMP = "-" / FULL-DATE "T" PARTIAL-TIME [TIME-SECFRAC] [TIME-OFFSET]
//! FULL-DATE = 4DIGIT "-" 2DIGIT "-" 2DIGIT     ; a real calendar day (no Feb 29 2018, Sep 31)
//! PARTIAL-TIME = 2DIGIT ":" 2DIGIT ":" 2DIGIT  ; 00-23, 00-59, 00-59
//! TIME-SECFRAC = "." 1*6DIGIT                  ; 7+ digits is a violation
//! TIME-OFFSET  = "Z" / ("+" / "-") 2DIGIT ":" 2DIGIT   ; hours 00-23, minutes 00-59
//! HOSTNAME  = "-" / 1*255PRINTUSASCII          ; PRINTUSASCII = %d33-126
//! APP-NAME  = "-" / 1*48PRINTUSASCII
//! PROCID    = "-" / 1*128PRINTUSASCII
//! MSGID     = "-" / 1*32PRINTUSASCII
//! STRUCTURED-DATA = "-" / 1*SD-ELEMENT
//! SD-ELEMENT = "[" SD-ID *(SP PARAM-NAME "=" PARAM-VALUE) "]"
//! SD-ID      = 1*255SD-NAME-CHAR               ; all SD-IDs of a message distinct
//! PARAM-NAME = 1*32SD-NAME-CHAR                ; may repeat within an element
//! SD-NAME-CHAR = PRINTUSASCII except "=" "]" DQUOTE   (so SP is excluded too)
//! PARAM-VALUE = DQUOTE *(any byte except DQUOTE "\" "]" / "\" any byte) DQUOTE
//!             / 1*(any byte except SP "]" DQUOTE and controls)      ; lenient, see below
//! MSG       = [BOM] *OCTET                     ; a leading EF BB BF is removed
//! ```
//!
//! * A field that is exactly `-` is NILVALUE (`None`); `-` inside a longer token is text.
//! * The lowercase `t` and `z` are violations (RFC 5424 6.2.3 requires uppercase).
//! * `message` is `None` when the input ends right after STRUCTURED-DATA, `Some("")` when the SP
//!   is present and nothing follows. Only one SP is consumed: further SPs belong to MSG.
//! * STRUCTURED-DATA ends at the first byte after a `]` that is not `[`; it must be followed by
//!   SP or the end (`[a b="c"]msg` is a violation), and what follows the SP is MSG even if it
//!   looks like SD.
//! * Inside a quoted PARAM-VALUE, `\` escapes the next byte for the purpose of finding the
//!   closing quote, so `\"`, `\\`, `\]` never end it; an unescaped `]` is a violation (RFC 5424
//!   6.3.3 requires it escaped); `[` needs no escape. [`SdParam::value`] resolves exactly `\"`,
//!   `\\`, `\]` and keeps any other backslash literally, as 6.3.3 requires.
//!
//! Deviations from RFC 5424, each accepted because real senders need it and rejecting would turn
//! a well-structured message into an opaque `Unparsed` line:
//!
//! * **TIMESTAMP without TIME-OFFSET** (`2009-10-16T11:51:56`, syslog-ng accepts it) is read in
//!   the default zone ([`ParseOptions::zone`]).
//! * **SD-ID up to 255 characters** instead of 32, as syslog-ng: enterprise IDs such as
//!   `name@2636.1.1.1.2.18` with long names occur. PARAM-NAME keeps the RFC limit of 32.
//! * **Unquoted PARAM-VALUE** (`[Originator@6876 sub=Vimsvc.ha-eventmgr user=root]`), as VMware
//!   ESXi sends: 1+ bytes up to SP or `]`, no `"` and no control bytes. An empty one (`x=]`) is
//!   still a violation. Such a value has no escapes: [`SdParam::value`] returns it verbatim.
//!
//! PRINTUSASCII, the length limits and the duplicate-SD-ID rule are enforced (syslog-ng
//! truncates over-long fields and keeps duplicates; truncation silently loses data, and a
//! duplicate SD-ID is a MUST NOT in RFC 5424 6.3.2).
//!
//! # 4. RFC 3164 and real-world BSD lines (best effort, never fails)
//!
//! Everything else — no PRI, or a PRI not followed by `"1" SP` — is read as:
//!
//! ```text
//! LINE   = [PRI] *SP ( STAMPED / CONTENT )
//! STAMPED = [SEQ] [MARK] STAMP [":"] (SP / end) *SP HOST-PART
//! SEQ    = 1*DIGIT ":" 1*SP          ; Cisco sequence number, only if a STAMP follows
//! MARK   = "*" / "."                 ; Cisco clock not synchronised / synchronised
//! STAMP  = BSD / ISO
//! BSD    = MMM 1*SP 1*2DIGIT 1*SP [4DIGIT 1*SP] HH:MM:SS ["." *DIGIT] [SP 4DIGIT]
//!          ; MMM any case; year before the time (Cisco) or after it (Linksys, only as an
//!          ; SP-delimited token followed by SP); without a year, the year nearest to "now"
//! ISO    = 4DIGIT "-" 2DIGIT "-" 2DIGIT ("T" / "t" / SP) HH:MM:SS ["." *DIGIT]
//!          ["Z" / "z" / ("+" / "-") 2DIGIT [[":"] 2DIGIT]]      ; no offset: default zone
//! CONTENT = [TAG] MSG                ; no STAMP: no HOSTNAME (RFC 3164 4.3.3)
//! TAG    = NAME ":" (SP / end)  /  NAME "[" PID "]" (":" / SP / end)
//! NAME   = 1*(any byte except SP "[" "]" ":")
//! PID    = 1*(any byte except SP "[" "]")
//! ```
//!
//! * Calendar and clock fields are validated (month name, day in that month of that year,
//!   hour 0–23, minute and second 0–59); an invalid stamp (`Feb 30`, `25:00:00`, `Foo 1`) is
//!   not a stamp, so the line has no header and everything after the PRI is CONTENT. A stamp
//!   must end at SP, end of input, or `:` followed by SP or end.
//! * Fractions of any length are truncated to microseconds; a dangling `.` after the seconds is
//!   tolerated (syslog-ng accepts it).
//! * **HOST-PART.** If the line ends after the stamp, there is no HOSTNAME and MSG is empty.
//!   Otherwise the first token (up to SP) is examined:
//!   1. a lone `:` is an empty TAG: one `:` and at most one SP are consumed, the rest is MSG;
//!   2. a TAG is the TAG and there is no HOSTNAME (`haproxy[73411]: ...`, `%ASA-4-402119: ...`)
//!      — unless its NAME is an IPv4 literal (`10.1.2.3: text`), which is the HOSTNAME, its `:`
//!      treated as the separator in 4;
//!   3. the AIX relay prefix `Message forwarded from HOST:` gives HOSTNAME `HOST`;
//!   4. otherwise the token is the HOSTNAME, not validated (`%bzorp`, `#001`, IPv6 `0002::` all
//!      count). SPs after it are skipped, then a lone `:` (Cisco ASA `host : %ASA-3-...`) and
//!      the SPs after it, then the next token is checked against the TAG rule. If it is not a
//!      TAG, `appname` is `None` and MSG starts at that token.
//! * After a TAG exactly one `:` (if present) and at most one SP are consumed; further SPs are
//!   MSG (`rsyslogd:  [origin ...]` keeps the leading SP).
//! * SPs right after the PRI (or at the start of a PRI-less line) are skipped, as are runs of
//!   SP between header fields. Without a STAMP, a lone `:` is CONTENT, not an empty TAG.
//! * A leading UTF-8 BOM in MSG is removed, as in RFC 5424.
//! * `message` is always `Some` for RFC 3164.
//!
//! Deviations and their reasons:
//!
//! * **The TAG rule requires `:` or `[pid]`.** syslog-ng and rsyslog take the first word after
//!   HOSTNAME as PROGRAM even without `:`, which cuts the first field off Palo Alto CSV,
//!   FortiGate `key=value` and Snare payloads; `app:value` (no SP after the `:`) is not a TAG
//!   either, protecting `key:value` payloads. go-syslog and Vector also require `:` or `[pid]`.
//!   Keeping MSG intact matters more to a forwarder than guessing a PROGRAM.
//! * **Only the first token after HOSTNAME can be a TAG** (F5's `info tmm1[123]: ...` keeps
//!   `info tmm1[123]: ...` as MSG).
//! * **No hostname validation**, unlike syslog-ng `check-hostname` and rsyslog: a rejected
//!   HOSTNAME would end up as PROGRAM or MSG, which is worse than an odd host value.
//! * **No STRUCTURED-DATA in RFC 3164**: rsyslog's `[origin ...]` block stays in MSG.
//! * **A bare word after the PRI is MSG**, not PROGRAM (`<189>65536` → message `65536`).
//! * **Invalid stamps give no header** (syslog-ng accepts `Feb 30` and hour 25): RFC 3164 4.3.3
//!   makes the remainder CONTENT, and nothing is lost.
//! * **The Linksys year is ambiguous** with a 4-digit HOSTNAME (`Jan 1 00:00:00 2009 host`); as
//!   in syslog-ng, a 4-digit SP-delimited token right after the time is read as the year.
//!
//! # 5. Time
//!
//! Stamps with an offset are taken as written (the offset is kept, so the instant can be
//! rendered as the sender wrote it). Zone-less stamps are read in [`ParseOptions::zone`];
//! year-less stamps get the year nearest to [`ParseOptions::now_unix_secs`]
//! (`year_inferred: true`). See [`crate::time`] for DST handling and the year rule; this module
//! reads no clock.
//!
//! [`SdParam::value`]: crate::message::SdParam::value

mod rfc3164;
mod rfc5424;
pub(crate) use rfc5424::tail as rfc5424_tail;
mod scan;
mod stamp;

use crate::message::{Message, Priority};
use crate::time::Zone;

/// Everything the parser needs from outside the message: "now" (for year inference) and the
/// default zone (for stamps without an offset). Build one per batch or per receive loop; the
/// parser reads no clock.
#[derive(Clone, Copy, Debug)]
pub struct ParseOptions<'z> {
    /// Seconds since the Unix epoch at receive time.
    pub now_unix_secs: i64,
    /// Zone for stamps that carry no offset (`SC4S_DEFAULT_TIMEZONE`).
    pub zone: &'z Zone,
}

/// Parses one syslog message; never fails (module docs).
pub fn parse<'a>(input: &'a [u8], opts: &ParseOptions<'_>) -> Message<'a> {
    let raw = strip_trailer(input);
    let Some(&first) = raw.first() else {
        return Message::unparsed(raw, None);
    };
    if first != b'<' {
        return rfc3164::parse(raw, Priority::DEFAULT, raw, opts);
    }
    let Some((priority, after_pri)) = pri(raw) else {
        return Message::unparsed(raw, None);
    };
    let rest = &raw[after_pri..];
    if let [b'1', b' ', header @ ..] = rest {
        return rfc5424::parse(raw, priority, header, opts)
            .unwrap_or_else(|| Message::unparsed(raw, Some(priority)));
    }
    rfc3164::parse(raw, priority, rest, opts)
}

/// syslog-ng's `flags(no-parse)`: the input (its trailer removed) whole as MESSAGE, with the
/// default priority and no header. For the listeners that leave the header to the vendor
/// parsers (`SC4S_LISTEN_<ID>_RFC6587_NOPARSE_PORT`, see
/// [`crate::classify::classify_no_parse`]).
pub fn no_parse(input: &[u8]) -> Message<'_> {
    Message::unparsed(strip_trailer(input), Some(Priority::DEFAULT))
}

/// Removes the run of trailing LF, CR and NUL bytes.
#[inline]
fn strip_trailer(input: &[u8]) -> &[u8] {
    let mut end = input.len();
    while end > 0 && matches!(input[end - 1], b'\n' | b'\r' | 0) {
        end -= 1;
    }
    &input[..end]
}

/// `<` 1–3 digits `>` with value ≤ 191 at the start of `s`; returns the priority and the index
/// after `>`.
#[inline]
fn pri(s: &[u8]) -> Option<(Priority, usize)> {
    let mut value: u16 = 0;
    let mut i = 1;
    while i < s.len() && i <= 4 {
        match s[i] {
            d @ b'0'..=b'9' if i <= 3 => value = value * 10 + u16::from(d - b'0'),
            b'>' if i > 1 => {
                let p = Priority::new(u8::try_from(value).ok()?)?;
                return Some((p, i + 1));
            }
            _ => return None,
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Format;

    fn opts(zone: &Zone) -> ParseOptions<'_> {
        ParseOptions {
            // 2026-06-15T00:00:00Z
            now_unix_secs: 1_781_481_600,
            zone,
        }
    }

    #[test]
    fn pri_forms() {
        assert_eq!(pri(b"<0>").map(|(p, i)| (p.value(), i)), Some((0, 3)));
        assert_eq!(pri(b"<191>x").map(|(p, i)| (p.value(), i)), Some((191, 5)));
        assert_eq!(pri(b"<013>").map(|(p, i)| (p.value(), i)), Some((13, 5)));
        for bad in [
            &b"<192>"[..],
            b"<999>",
            b"<>",
            b"<abc>",
            b"<-1>",
            b"<13",
            b"<",
            b"<1000>",
            b"<19000021>",
            b"<87]",
        ] {
            assert!(pri(bad).is_none(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn trailer() {
        assert_eq!(strip_trailer(b"a\r\n\0\n"), b"a");
        assert_eq!(strip_trailer(b"a\nb\n"), b"a\nb");
        assert_eq!(strip_trailer(b"\n\r\0"), b"");
        assert_eq!(strip_trailer(b" a "), b" a ");
    }

    #[test]
    fn rfc5424_happy_path() {
        let z = Zone::utc();
        let m = parse(
            b"<165>1 2003-10-11T22:14:15.003Z host app 12 ID47 [ex@1 a=\"1\"][b] \xEF\xBB\xBFhi\n",
            &opts(&z),
        );
        assert_eq!(m.format, Format::Rfc5424);
        assert_eq!(m.priority.map(|p| p.value()), Some(165));
        assert_eq!(m.hostname, Some(&b"host"[..]));
        assert_eq!(m.appname, Some(&b"app"[..]));
        assert_eq!(m.procid, Some(&b"12"[..]));
        assert_eq!(m.msgid, Some(&b"ID47"[..]));
        assert_eq!(
            m.structured_data.map(|sd| sd.raw()),
            Some(&b"[ex@1 a=\"1\"][b]"[..])
        );
        assert_eq!(m.message, Some(&b"hi"[..]));
        let ts = m.timestamp.unwrap();
        assert_eq!((ts.micros, ts.offset_secs), (3000, 0));
    }

    #[test]
    fn rfc5424_violations_keep_pri_and_raw() {
        let z = Zone::utc();
        for line in [
            &b"<13>1 hello"[..],
            b"<13>1  2019-02-13T19:48:34Z h a - - - x",
            b"<13>1 - h a - - [a b=\"c\"]msg",
            b"<13>1 - h a - - [a b]",
            b"<13>1 - h a - - [a b=\"]\"]",
            b"<13>1 - h a - -x",
            b"<13>1 - h a - ",
            b"<13>1 - h a -",
            b"<13>1 - h\ta - - -",
            b"<13>1 - - - - - [a][a]",
            b"<13>1 - - - - - [a x=\"\\\"]",
        ] {
            let m = parse(line, &opts(&z));
            assert_eq!(
                m.format,
                Format::Unparsed,
                "{}",
                String::from_utf8_lossy(line)
            );
            assert_eq!(m.priority.map(|p| p.value()), Some(13));
            assert_eq!(m.message, Some(line));
        }
    }

    #[test]
    fn duplicate_sd_id_beyond_the_inline_check() {
        let z = Zone::utc();
        let mut line = b"<13>1 - - - - - ".to_vec();
        for i in 0..40 {
            line.extend_from_slice(format!("[id{i}]").as_bytes());
        }
        assert_eq!(parse(&line, &opts(&z)).format, Format::Rfc5424);
        line.extend_from_slice(b"[id3]");
        assert_eq!(parse(&line, &opts(&z)).format, Format::Unparsed);
    }

    #[test]
    fn rfc3164_tag_rules() {
        let z = Zone::utc();
        // (line, hostname, appname, procid, message)
        type Case<'c> = (
            &'c [u8],
            Option<&'c [u8]>,
            Option<&'c [u8]>,
            Option<&'c [u8]>,
            &'c [u8],
        );
        let cases: &[Case<'_>] = &[
            (
                b"<13>Mar  1 12:00:00 host app[42] x",
                Some(b"host"),
                Some(b"app"),
                Some(b"42"),
                b"x",
            ),
            (
                b"<13>Mar  1 12:00:00 host app:x",
                Some(b"host"),
                None,
                None,
                b"app:x",
            ),
            (
                b"<13>Mar  1 12:00:00 host app:",
                Some(b"host"),
                Some(b"app"),
                None,
                b"",
            ),
            (
                b"<13>Mar  1 12:00:00 host app[]: x",
                Some(b"host"),
                None,
                None,
                b"app[]: x",
            ),
            (
                b"<13>Mar  1 12:00:00 host [x]: y",
                Some(b"host"),
                None,
                None,
                b"[x]: y",
            ),
            (
                b"<13>Mar  1 12:00:00 10.1.2.3: app: x",
                Some(b"10.1.2.3"),
                Some(b"app"),
                None,
                b"x",
            ),
            (
                b"<13>Mar  1 12:00:00 10.1.2.3: msg",
                Some(b"10.1.2.3"),
                None,
                None,
                b"msg",
            ),
            (
                b"<13>Mar  1 12:00:00 host : : x",
                Some(b"host"),
                None,
                None,
                b": x",
            ),
            (b"<13>Mar  1 12:00:00 : :x", None, None, None, b":x"),
            (b"<13>app: x", None, Some(b"app"), None, b"x"),
            (b"<13>   app[1]:x", None, Some(b"app"), Some(b"1"), b"x"),
        ];
        for (line, host, app, pid, msg) in cases {
            let m = parse(line, &opts(&z));
            let show = String::from_utf8_lossy(line);
            assert_eq!(m.format, Format::Rfc3164, "{show}");
            assert_eq!(m.hostname, *host, "{show}");
            assert_eq!(m.appname, *app, "{show}");
            assert_eq!(m.procid, *pid, "{show}");
            assert_eq!(m.message, Some(*msg), "{show}");
        }
    }

    /// syslog-ng reads a BSD stamp by its fixed width: a HOSTNAME may follow with no space.
    #[test]
    fn bsd_stamp_runs_into_the_hostname() {
        let z = Zone::utc();
        let m = parse(b"<111>May 25 14:11:56sol-vmr01 event: SYSTEM: X", &opts(&z));
        assert!(m.timestamp.is_some());
        assert_eq!(m.hostname, Some(&b"sol-vmr01"[..]));
        assert_eq!(m.appname, Some(&b"event"[..]));
        assert_eq!(m.message, Some(&b"SYSTEM: X"[..]));
        let m = parse(b"<111>May 25 14:11:5610.0.0.1 app: x", &opts(&z));
        assert_eq!(m.hostname, Some(&b"10.0.0.1"[..]));
        // An ISO stamp still needs its space.
        let m = parse(b"<111>2024-05-25T14:11:56Zhost app: x", &opts(&z));
        assert!(m.timestamp.is_none());
    }

    #[test]
    fn cisco_prefixes_need_a_stamp() {
        let z = Zone::utc();
        let m = parse(b"<13>91: *Oct 07 03:10:04: dev %X-1-Y: z", &opts(&z));
        assert!(m.timestamp.is_some());
        assert_eq!(m.hostname, Some(&b"dev"[..]));
        assert_eq!(m.appname, Some(&b"%X-1-Y"[..]));
        let m = parse(b"<13>91: *hello", &opts(&z));
        assert!(m.timestamp.is_none());
        assert_eq!(m.appname, Some(&b"91"[..]));
        assert_eq!(m.message, Some(&b"*hello"[..]));
        let m = parse(b"<13>*Oct 07 03:10:04x host", &opts(&z));
        assert!(m.timestamp.is_none());
        assert_eq!(m.message, Some(&b"*Oct 07 03:10:04x host"[..]));
    }
}
