//! Avi Networks / VMware NSX Advanced Load Balancer (SC4S `addons/avi/`):
//!
//! * `app-syslog-avi_controller_legacy.conf`: a MESSAGE starting `[` with
//!   `: Avi-Controller: ` in it; the time from `[yyyy-mm-dd hh:mm:ss,fff`.
//! * `app-syslog-avi_controller_rfc5424.conf`: PROGRAM `Avi-Controller*` and a MESSAGE
//!   starting `-`: an RFC 5424 tail (`- - - INFO ...`) behind a BSD or ISO-with-comma header,
//!   which SC4S re-reads as RFC 5424 (PROCID, MSGID, STRUCTURED-DATA, then MSG).
//! * `app-syslog-avi_vantage.conf`: the service engines' PROGRAM `aer01-*` (`avi:logs`).

use memchr::memmem;
use std::sync::LazyLock;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vtime;
use crate::parse::rfc5424_tail;

pub static VENDOR: Vendor = Vendor {
    name: "avi",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-avi_controller_legacy",
            topic: Topic::Syslog,
            order: "avi/app-syslog-avi_controller_legacy.conf",
            when: When::BodyPrefix(&["["]),
            parse: legacy,
        },
        App {
            name: "app-syslog-avi_controller_rfc5424",
            topic: Topic::Pgm,
            order: "avi/app-syslog-avi_controller_rfc5424.conf",
            when: When::ProgramPrefix(&["Avi-Controller"]),
            parse: rfc5424,
        },
        App {
            name: "app-syslog-avi_vantage",
            topic: Topic::Pgm,
            order: "avi/app-syslog-avi_vantage.conf",
            when: When::ProgramPrefix(&["aer01-"]),
            parse: vantage,
        },
    ],
};

const EVENTS: usize = 0;
const LOGS: usize = 1;

static KEYS: &[Key] = &[
    Key::new("avi", "vantage", "avi:events", "netops"),
    Key::new("avi", "vantage", "avi:logs", "netops")
        .class("logs")
        .template(Template::HdrMsg),
];

/// RFC 5424's APP-NAME limit: syslog-ng truncates a longer one.
const APP_NAME_MAX: usize = 48;

/// `^\[(?<timestamp>[^ ]+ [^,]+,[^:]+)`: the stamp, when the pattern matches.
fn legacy_stamp(m: &[u8]) -> Option<&[u8]> {
    let s = m.strip_prefix(b"[")?;
    let date = s.iter().take_while(|&&b| b != b' ').count();
    if date == 0 || s.get(date) != Some(&b' ') {
        return None;
    }
    let after = &s[date + 1..];
    let time = after.iter().take_while(|&&b| b != b',').count();
    if time == 0 || after.get(time) != Some(&b',') {
        return None;
    }
    let frac = after[time + 1..].iter().take_while(|&&b| b != b':').count();
    if frac == 0 {
        return None;
    }
    Some(&s[..date + 1 + time + 1 + frac])
}

fn legacy<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static CONTROLLER: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b": Avi-Controller: "));
    let m = input.body;
    if !m.starts_with(b"[") || CONTROLLER.find(m).is_none() {
        return false;
    }
    out.key(&KEYS[EVENTS]);
    // `date-parser-nofilter`: a stamp it cannot read leaves the time as it was.
    if let Some(ts) = legacy_stamp(m)
        .and_then(|s| vtime::strptime("%Y-%m-%d %H:%M:%S,%f", s, input.zone, input.now_unix_secs))
    {
        out.time(ts);
    }
    true
}

fn rfc5424<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(program) = input.program.filter(|p| p.starts_with(b"Avi-Controller")) else {
        return false;
    };
    if !input.body.starts_with(b"-") {
        return false;
    }
    // `<PRI>1 $S_ISODATE $HOST $PROGRAM $MESSAGE` read as RFC 5424: a MESSAGE that is not
    // `PROCID MSGID SD [MSG]` fails the parser, and the application with it.
    let Some(tail) = rfc5424_tail(input.body) else {
        return false;
    };
    out.key(&KEYS[EVENTS]);
    out.program = Some(Some(&program[..program.len().min(APP_NAME_MAX)]));
    // A nil PROCID sets nothing: an earlier PID stays.
    if let Some(pid) = tail.procid {
        out.pid = Some(Some(pid));
    }
    out.message(tail.message.unwrap_or_default());
    true
}

fn vantage<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"aer01-")) {
        return false;
    }
    out.key(&KEYS[LOGS]);
    true
}

#[cfg(test)]
mod tests {
    use super::legacy_stamp;
    use crate::classify::testutil::classify_line;
    use crate::classify::{Template, TimeEdit, Value};

    /// SC4S's `test_avi_vantage.py::test_avi_event_rfc` and `test_avi_event_json`: an ISO
    /// stamp with a comma (repaired first), then the RFC 5424 tail.
    #[test]
    fn controller_rfc5424() {
        let c = classify_line(
            "<46>2024-05-07 05:53:25,246 avi-ctrl-01 Avi-Controller - - - INFO [abc-cde.gen: reason: Syslog for Confiqg Events occured] At 2020-04-07 15:27:10+00:00 event USER_AUTHORIZED_BY_RULE occurred",
        );
        assert_eq!(c.sourcetype, "avi:events");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "avi");
        assert_eq!(c.product, "vantage");
        assert_eq!(c.app, "app-syslog-avi_controller_rfc5424");
        assert_eq!(c.template, Template::HdrMsg);
        assert!(
            matches!(c.time, TimeEdit::Stamp(t) if t.unix_secs == 1_715_061_205 && t.micros == 246_000)
        );
        assert!(
            matches!(c.edit.message, Some(Value::Bytes(m)) if m.starts_with(b"INFO [abc-cde.gen"))
        );
        assert_eq!(c.edit.program, Some(Some(&b"Avi-Controller"[..])));
        let c = classify_line(
            r#"<46>2024-05-07 06:58:32,246 avi-ctrl-02 Avi-Controller - - - INFO [abc-cde.gen: reason: Syslog for Config Events occured] {"level": "ALERT_LOW", "reason": "threshold_exceeded"}"#,
        );
        assert_eq!(c.sourcetype, "avi:events");
        // With a PROCID and structured data.
        let c = classify_line("<46>May 07 05:53:25 ctl Avi-Controller: 12 ID [x@1 a=\"b\"] text");
        assert_ne!(c.sourcetype, "avi:events");
        let c = classify_line("<46>May 07 05:53:25 ctl Avi-Controller - ID [x@1 a=\"b\"] text");
        assert_eq!(c.sourcetype, "avi:events");
        assert!(matches!(c.edit.message, Some(Value::Bytes(m)) if m == b"text"));
        // A tail RFC 5424 refuses: not Avi's (the generic rules take it).
        let c = classify_line("<46>May 07 05:53:25 ctl Avi-Controller - - x text");
        assert_ne!(c.sourcetype, "avi:events");
        let c = classify_line("<46>May 07 05:53:25 ctl Avi-Controller -");
        assert_ne!(c.sourcetype, "avi:events");
    }

    /// SC4S's `test_avi_vantage.py::test_avi_event_no_host`: the legacy controller format.
    #[test]
    fn controller_legacy() {
        let c = classify_line(
            "<46> May 07 05:53:25 avi-ctl [2024-05-07 05:53:25,246: Avi-Controller: INFO: ] [abc-cde.gen: reason: Syslog for Config Events occured] At 2020-04-07 15:32:09+00:00 event USER_AUTHORIZED_BY_RULE occurred avi-ctl ",
        );
        assert_eq!(c.sourcetype, "avi:events");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "avi");
        assert_eq!(c.app, "app-syslog-avi_controller_legacy");
        assert!(
            matches!(c.time, TimeEdit::Stamp(t) if t.unix_secs == 1_715_061_205 && t.micros == 246_000)
        );
        // An unreadable stamp keeps the header's time; the labels stay.
        let c = classify_line("<46>May 07 05:53:25 avi-ctl [x y,z: Avi-Controller: INFO: ] text");
        assert_eq!(c.sourcetype, "avi:events");
        assert!(matches!(c.time, TimeEdit::Keep));
        let c = classify_line("<46>May 07 05:53:25 avi-ctl [x] Avi-Controller: INFO");
        assert_ne!(c.sourcetype, "avi:events");
    }

    #[test]
    fn stamp_pattern() {
        assert_eq!(
            legacy_stamp(b"[2024-05-07 05:53:25,246: Avi"),
            Some(&b"2024-05-07 05:53:25,246"[..])
        );
        assert_eq!(legacy_stamp(b"[a b,c"), Some(&b"a b,c"[..]));
        assert_eq!(legacy_stamp(b"[ a b,c"), None);
        assert_eq!(legacy_stamp(b"[a b,:"), None);
        assert_eq!(legacy_stamp(b"[a ,c"), None);
    }

    /// SC4S's `test_avi_vantage.py::test_avi_event_rfc5424`.
    #[test]
    fn service_engine() {
        let c = classify_line(
            r#"<134>1 2024-05-07T09:08:46.246813+00:00 avi-se-04 aer01-abc-cde-fgh 0 711603 - "adf":1,"virtualservice":"virtualservice-12345","significant_log":["ADF_CLIENT_DNS_FAILED_GS_DOWN"]"#,
        );
        assert_eq!(c.sourcetype, "avi:logs");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "avi");
        assert_eq!(c.product, "vantage");
        assert_eq!(c.class.unwrap(), "logs");
        assert_eq!(c.template, Template::HdrMsg);
        let c = classify_line("<134>May 07 09:08:46 se aer01: x");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
