//! Epic EHR audit events (SC4S `addons/epic/app-syslog-epic_ehr.conf`): PROGRAM `Epic*`
//! with an XML body; the event is the XML's values as JSON (`t_json_values`, see
//! [`crate::classify::xml`]). A body that is not well-formed XML still arrives as Epic's, with
//! the values read before the fault (SC4S's `drop-invalid(no)`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "epic",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-epic_ehr",
        topic: Topic::Pgm,
        order: "epic/app-syslog-epic_ehr.conf",
        when: When::ProgramPrefix(&["Epic"]),
        parse: ehr,
    }],
};

static KEYS: &[Key] = &[Key::new("epic", "epic-ehr", "epic:epic-ehr:syslog", "main")
    .source("epic-ehr")
    .template(Template::JsonValues)];

fn ehr<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"Epic")) {
        return false;
    }
    out.key(&KEYS[0]);
    out.values = Some(Values {
        text: input.body,
        syntax: ValuesSyntax::Xml,
    });
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Template;
    use crate::classify::testutil::{classify_line, event_text};

    const SAMPLE: &str = r#"<85>1 2024-05-15T20:05:35.246Z epic-prd-01 Epic 7652 - [origin software="Security-SIEM" swVersion="10.5.0"] <?xml version="1.0"?><EventLog>    <E1Mid>IC_SERVICE_AUDIT</E1Mid>    <EventCnt>1</EventCnt>    <LWSid></LWSid>    <Action>Query</Action>    <Mnemonics>      <Mnemonic Name="APIID">        <Value>1</Value>      </Mnemonic>      <Mnemonic Name="CLIENTNAME">        <Value>TST-EPIC-TEST</Value>      </Mnemonic>    </Mnemonics>  </EventLog>"#;

    /// SC4S's `test_epic_ehr.py::test_epic_ehr` (shortened).
    #[test]
    fn audit_event() {
        let c = classify_line(SAMPLE);
        assert_eq!(c.sourcetype, "epic:epic-ehr:syslog");
        assert_eq!(c.index, "main");
        assert_eq!(c.source, "epic-ehr");
        assert_eq!(c.vendor, "epic");
        assert_eq!(c.product, "epic-ehr");
        assert_eq!(c.template, Template::JsonValues);
        let event = event_text(SAMPLE);
        let v: serde_json::Value = serde_json::from_str(&event).expect("JSON");
        assert_eq!(v["origin"]["software"], "Security-SIEM");
        assert_eq!(v["EventLog"]["E1Mid"], "IC_SERVICE_AUDIT");
        assert_eq!(
            v["EventLog"]["Mnemonics"]["Mnemonic"]["_Name"],
            serde_json::json!(["APIID", "CLIENTNAME"])
        );
        assert_eq!(
            v["EventLog"]["Mnemonics"]["Mnemonic"]["Value"],
            serde_json::json!(["1", "TST-EPIC-TEST"])
        );
        // syslog-ng's walk: descending names, SDATA's `origin` first.
        assert!(event.starts_with(r#"{"origin":{"swVersion":"10.5.0","software":"Security-SIEM"},"EventLog":{"Mnemonics":"#), "{event}");
    }

    #[test]
    fn malformed_xml_still_arrives() {
        let line = "<85>May 15 20:05:35 epic-prd-01 Epic[7652]: <EventLog><E1Mid>X</E1Mid><Bad></EventLog>";
        let c = classify_line(line);
        assert_eq!(c.sourcetype, "epic:epic-ehr:syslog");
        assert_eq!(event_text(line), r#"{"EventLog":{"E1Mid":"X"}}"#);
        let line = "<85>May 15 20:05:35 epic-prd-01 EpicX: not xml at all";
        assert_eq!(classify_line(line).sourcetype, "epic:epic-ehr:syslog");
        assert_eq!(event_text(line), "{}");
        assert_eq!(
            classify_line("<85>May 15 20:05:35 h Epi: x").sourcetype,
            "nix:syslog"
        );
    }
}
