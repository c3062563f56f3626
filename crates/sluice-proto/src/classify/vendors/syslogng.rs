//! syslog-ng itself (SC4S `addons/syslogng/`): its parse errors are `sc4s:fallback`
//! (PROGRAM `syslog-ng*`, MESSAGE `Error processing log message: ...`), and `loggen`'s test
//! messages (PROGRAM `prg00000*`) are `syslogng:loggen`, rendered `t_json_values_msg`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "syslogng",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-syslog-ng_error",
            topic: Topic::Pgm,
            order: "syslogng/app-syslog-syslog-ng_error.conf",
            when: When::ProgramPrefix(&["syslog-ng"]),
            parse: error,
        },
        App {
            name: "app-syslog-syslog-ng_loggen",
            topic: Topic::Pgm,
            order: "syslogng/app-syslog-syslog-ng_loggen.conf",
            when: When::ProgramPrefix(&["prg00000"]),
            parse: loggen,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("splunk", "sc4s", "sc4s:fallback", "main").class("fallback"),
    Key::new("syslogng", "loggen", "syslogng:loggen", "main").template(Template::JsonValuesMsg),
];

fn error<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"syslog-ng"))
        || !input.body.starts_with(b"Error processing log message: ")
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn loggen<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"prg00000")) {
        return false;
    }
    out.key(&KEYS[1]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn loggen() {
        let e = event_of(
            "<38>2024-05-26T09:44:02 loggen-host prg00000[1234]: seq: 0000000008, thread: 0000, runid: 1595610292, stamp: 2024-05-26T09:44:02 PADDPADDBSD",
        );
        assert_eq!(e["sourcetype"], "syslogng:loggen");
        assert_eq!(e["index"], "main");
        assert_eq!(e["host"], "loggen-host");
        assert_eq!(e["fields"]["sc4s_vendor"], "syslogng");
        assert_eq!(e["fields"]["sc4s_product"], "loggen");
        assert_eq!(
            e["event"],
            r#"{"message":"seq: 0000000008, thread: 0000, runid: 1595610292, stamp: 2024-05-26T09:44:02 PADDPADDBSD"}"#
        );
        // RFC 5424 (the BOM is not part of MESSAGE), with and without structured data.
        let e = event_of(
            "<38>1 2024-05-26T09:44:02.318Z loggen-host prg00000 1234 - - \u{feff}seq: 0000000000, thread: 0000, PADD",
        );
        assert_eq!(e["sourcetype"], "syslogng:loggen");
        assert_eq!(
            e["event"],
            r#"{"message":"seq: 0000000000, thread: 0000, PADD"}"#
        );
        let e = event_of(
            r#"<38>1 2024-05-26T09:44:02.318Z h prg00000 1234 - [meta sequenceId="1"][origin ip="10.0.0.1"] seq: 1"#,
        );
        assert_eq!(
            e["event"],
            r#"{"origin":{"ip":"10.0.0.1"},"meta":{"sequenceId":"1"},"message":"seq: 1"}"#
        );
    }

    #[test]
    fn parse_errors() {
        let c = classify_line(
            "<43>May 26 09:44:02 sc4s syslog-ng[1]: Error processing log message: <13>junk",
        );
        assert_eq!(c.sourcetype, "sc4s:fallback");
        assert_eq!(c.vendor, "splunk");
        assert_eq!(c.product, "sc4s");
        assert_eq!(c.class.unwrap(), "fallback");
        assert_eq!(c.app, "app-syslog-syslog-ng_error");
        let c = classify_line("<43>May 26 09:44:02 sc4s syslog-ng[1]: Starting up");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
