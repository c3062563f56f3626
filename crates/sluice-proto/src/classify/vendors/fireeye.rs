//! FireEye / Trellix CMS, EMPS, ETP and HX (SC4S `addons/fireeye/`): four CEF products
//! relabelled in the cef topic, and HX alerts as JSON behind a `fe<name>-<id>.<level>`
//! PROGRAM (`app-syslog-fireeye-json.conf`), whose host and time come from the alert.

use crate::classify::json_walk::{self, Scalar};
use crate::classify::registry::{App, HostEdit, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vendors::cef;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "fireeye",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-fireeye_cms",
            topic: Topic::Sub("cef"),
            order: "fireeye/app-cef-fireeye_cms.conf",
            when: When::Check(cms_check),
            parse: cms,
        },
        // SC4S's EMPS application has the CMS filter (device product `CMS`) and comes after
        // it in file order, so it never gets a message; kept for the order and the name.
        App {
            name: "app-cef-fireeye_emps",
            topic: Topic::Sub("cef"),
            order: "fireeye/app-cef-fireeye_emps.conf",
            when: When::Check(cms_check),
            parse: cms,
        },
        App {
            name: "app-cef-fireeye_etp",
            topic: Topic::Sub("cef"),
            order: "fireeye/app-cef-fireeye_etp.conf",
            when: When::Check(etp_check),
            parse: etp,
        },
        App {
            name: "app-cef-fireeye_hx",
            topic: Topic::Sub("cef"),
            order: "fireeye/app-cef-fireeye_hx.conf",
            when: When::Check(hx_check),
            parse: hx,
        },
        App {
            name: "app-syslog-fireeye-json",
            topic: Topic::Pgm,
            order: "fireeye/app-syslog-fireeye-json.conf",
            when: When::ProgramPrefix(&["fe"]),
            parse: json,
        },
    ],
};

const CMS: usize = 0;
const ETP: usize = 1;
const HX: usize = 2;
const JSON: usize = 3;

static KEYS: &[Key] = &[
    Key::update("fe_cef_syslog", "fireeye"),
    Key::update("fe_etp", "fireeye"),
    Key::update("hx_cef_syslog", "fireeye"),
    Key::new("fireeye", "", "fe_json", "fireeye").template(Template::MsgOnly),
];

fn cms_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"FireEye") && out.nv.contains(cef::NV_PRODUCT, b"CMS")
}

fn cms<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !cms_check(input, out) {
        return false;
    }
    out.key(&KEYS[CMS]);
    true
}

fn etp_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"FireEye") && out.nv.contains(cef::NV_PRODUCT, b"ETP")
}

fn etp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !etp_check(input, out) {
        return false;
    }
    out.key(&KEYS[ETP]);
    // ETP is a cloud service: SC4S names its host.
    out.host = HostEdit::Set(Value::Static("etp.fireeye.com"));
    true
}

/// SC4S's HX filter is lower case (`match("fireeye" ...)`, `match("hx" ...)`), and
/// `match()` is case-sensitive.
fn hx_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"fireeye") && out.nv.contains(cef::NV_PRODUCT, b"hx")
}

fn hx<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !hx_check(input, out) {
        return false;
    }
    out.key(&KEYS[HX]);
    true
}

/// `program('^fe[a-z]+-\d+\.[a-z]+')`: unanchored at the end.
fn is_notify_program(p: &[u8]) -> bool {
    let Some(rest) = p.strip_prefix(b"fe") else {
        return false;
    };
    let run = |s: &[u8], f: fn(&u8) -> bool| s.iter().take_while(|b| f(b)).count();
    let name = run(rest, u8::is_ascii_lowercase);
    if name == 0 || rest.get(name) != Some(&b'-') {
        return false;
    }
    let rest = &rest[name + 1..];
    let id = run(rest, u8::is_ascii_digit);
    if id == 0 || rest.get(id) != Some(&b'.') {
        return false;
    }
    run(&rest[id + 1..], u8::is_ascii_lowercase) > 0
}

fn json<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(is_notify_program) {
        return false;
    }
    // The members the parser reads, found in one pass; a body that is not a JSON object
    // fails SC4S's json-parser and the message goes on to the other applications (a CEF
    // body is then the cef parser's).
    let mut product = None;
    let mut hostname = None;
    let mut process_ts = None;
    let mut event_at = None;
    let walked = json_walk::walk(input.body, |path, v| match path {
        [b"product"] => product = Some(v),
        [b"alert", b"host", b"hostname"] => hostname = Some(v),
        [b"alert", b"event_values", b"processEvent/timestamp"] => process_ts = Some(v),
        [b"alert", b"event_at"] => event_at = Some(v),
        _ => {}
    });
    if walked.is_err() {
        return false;
    }
    // A value with escapes is used as written (a host or product name rarely has any).
    let text = |v: Option<Scalar<'m>>| -> &'m [u8] {
        match v {
            Some(Scalar::Str { raw, .. }) => raw,
            Some(s) => s.text().unwrap_or_default(),
            None => b"",
        }
    };
    out.key(&KEYS[JSON]);
    let product = text(product);
    if !product.is_empty() {
        out.product = Some(Value::Bytes(product));
    }
    if product == b"HX" {
        out.sourcetype = Some(Value::Static("hx_json"));
    }
    let hostname = text(hostname);
    if !hostname.is_empty() {
        out.host(hostname);
    }
    // `date-parser-nofilter`: a stamp it cannot read leaves the time as it was.
    let stamp = [text(process_ts), text(event_at)]
        .into_iter()
        .find(|s| !s.is_empty());
    if let Some(ts) = stamp
        .and_then(|s| vtime::strptime("%Y-%m-%dT%H:%M:%S.%f%z", s, input.zone, input.now_unix_secs))
    {
        out.time(ts);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::is_notify_program;
    use crate::classify::testutil::classify_line;
    use crate::classify::{Classification, HostEdit, Template, TimeEdit};

    fn host(c: &Classification<'_, '_>) -> String {
        match c.host {
            HostEdit::Set(v) => v.to_string_lossy(),
            _ => String::new(),
        }
    }

    /// SC4S's `test_fireye.py::test_fireeye_cms`: the PROGRAM looks like the JSON
    /// application's, the body is CEF.
    #[test]
    fn cms() {
        let c = classify_line(
            "<111>fenotify-1590500.warning: CEF:0|FireEye|CMS|9.0.1.923211|MC|malware-callback|7|requestClientApplication=Mozilla/5.0 cn2Label=sid cn2=11111112 rt=May 20 19:09:34 UTC proto=tcp dst=172.65.203.203 externalId=1590500 dvchost=fecms-dc01 cs1Label=sname cs1=FETestEvent devicePayloadId=71de5c6d start=May 20 19:09:34 UTC",
        );
        assert_eq!(c.sourcetype, "fe_cef_syslog");
        assert_eq!(c.index, "fireeye");
        assert_eq!(c.vendor, "FireEye");
        assert_eq!(c.product, "CMS");
        assert_eq!(host(&c), "fecms-dc01");
    }

    /// SC4S's `test_fireye.py::test_fireeye_etp`: SC4S sets the host.
    #[test]
    fn etp() {
        let c = classify_line(
            "<111> 2024-05-20T20:14:41.318529+00:00 CEF:0|FireEye|ETP|3.0|etp|malicious email|10|rt=May 20 20:14:41 UTC suser=redacted@redacted.com fname=hxxps://redacted[dot]com/foo fileHash=123456789abcdef cs5Label=Client cs5=etpcust-x042 ",
        );
        assert_eq!(c.sourcetype, "fe_etp");
        assert_eq!(c.index, "fireeye");
        assert_eq!(c.vendor, "FireEye");
        assert_eq!(c.product, "ETP");
        assert_eq!(host(&c), "etp.fireeye.com");
    }

    #[test]
    fn hx_cef_is_lower_case() {
        let c = classify_line("<111>Mar 01 00:00:00 h CEF:0|fireeye|hx|5|a|b|1|x=y");
        assert_eq!(c.sourcetype, "hx_cef_syslog");
        assert_eq!(c.index, "fireeye");
        let c = classify_line("<111>Mar 01 00:00:00 h CEF:0|FireEye|HX|5|a|b|1|x=y");
        assert_eq!(c.sourcetype, "cef");
    }

    fn hx_json(event_values: &str) -> String {
        format!(
            r#"<164>fenotify-7441437.warning: {{"msg":"normal","appliance-id":"xxxxx","product":"HX","version":"5.0.0.0000","alert":{{"host":{{"gmt_offset_seconds":39600,"hostname":"corp-ws4471","os":"Windows 10 Enterprise"}},"matched_at":"2021-02-25T06:02:37+00:00","condition":{{"_id":"111111","tests":[{{"operator":"contains","token":"processEvent/processCmdLine"}}],"enabled":true}},"event_at":"2021-02-25T06:02:28.113+00:00","source":"IOC","matched_source_alerts":null,"event_values":{{{event_values}"processEvent/process":"PsExec.exe","processEvent/username":"CORPTESTAU\\xxxxxxx"}},"name":"indicator-executed"}}}}"#
        )
    }

    /// SC4S's `test_fireye.py::test_fireeye_hx_json_1` and `_2`: host from the alert, time
    /// from the process event's stamp, else from `event_at`.
    #[test]
    fn hx_json_alerts() {
        let c = classify_line(&hx_json(
            r#""processEvent/timestamp":"2024-05-20T22:24:55.318529+00:00","#,
        ));
        assert_eq!(c.sourcetype, "hx_json");
        assert_eq!(c.index, "fireeye");
        assert_eq!(c.vendor, "fireeye");
        assert_eq!(c.product, "HX");
        assert_eq!(c.template, Template::MsgOnly);
        assert_eq!(c.app, "app-syslog-fireeye-json");
        assert_eq!(host(&c), "corp-ws4471");
        assert!(
            matches!(c.time, TimeEdit::Stamp(t) if t.unix_secs == 1_716_243_895 && t.micros == 318_529)
        );
        let c = classify_line(&hx_json(""));
        assert_eq!(c.sourcetype, "hx_json");
        assert!(
            matches!(c.time, TimeEdit::Stamp(t) if t.unix_secs == 1_614_232_948 && t.micros == 113_000)
        );
        // Another product: fe_json, product from the JSON; no alert: no host or time.
        let c = classify_line(r#"<164>fenotify-1.alert: {"product":"NX","x":1}"#);
        assert_eq!(c.sourcetype, "fe_json");
        assert_eq!(c.product, "NX");
        assert!(matches!(c.time, TimeEdit::Keep));
        // An unreadable stamp leaves the header's time.
        let c = classify_line(&hx_json(r#""processEvent/timestamp":"yesterday","#));
        assert!(matches!(c.time, TimeEdit::Keep));
        // Broken JSON: not FireEye's JSON application; the generic JSON/syslog rules apply.
        let c = classify_line(r#"<164>fenotify-1.alert: {"product":"HX","#);
        assert_ne!(c.vendor, "fireeye");
    }

    #[test]
    fn program_pattern() {
        for yes in [
            "fenotify-1.warning",
            "fex-12.a",
            "fenotify-7441437.warningX",
        ] {
            assert!(is_notify_program(yes.as_bytes()), "{yes}");
        }
        for no in [
            "fe-1.a",
            "fenotify-.a",
            "fenotify-1.",
            "fenotify-1.A",
            "Fenotify-1.a",
            "fenotify1.a",
        ] {
            assert!(!is_notify_program(no.as_bytes()), "{no}");
        }
    }
}
