//! Polycom RealPresence Resource Manager (SC4S `addons/polycom/app-syslog-polycom_rprm.conf`):
//! PROGRAM `RPRM*`, event text `t_5424_hdr_sdata_compact` whatever the wire format.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "polycom",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-polycom_rprm",
        topic: Topic::Pgm,
        order: "polycom/app-syslog-polycom_rprm.conf",
        when: When::ProgramPrefix(&["RPRM"]),
        parse: rprm,
    }],
};

static KEYS: &[Key] =
    &[Key::new("polycom", "rprm", "polycom:rprm:syslog", "netops")
        .template(Template::Rfc5424Compact)];

fn rprm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"RPRM")) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::event_of;

    #[test]
    fn rprm() {
        let e = event_of(
            "<29>1 2024-05-24T17:34:43.318Z rprm-app-01 RPRM 107463 Jserver - DEBUG|||http-nio-5443-exec-22|com.polycom.rpum.epm.engine.ruleengine.ProfileFillingAction| ...df8-46f4, tagName=call.autoOffHook.3.enabled, tagValue=1",
        );
        assert_eq!(e["sourcetype"], "polycom:rprm:syslog");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["host"], "rprm-app-01");
        assert_eq!(e["fields"]["sc4s_vendor"], "polycom");
        assert_eq!(e["fields"]["sc4s_product"], "rprm");
        assert_eq!(e["time"], "1716572083.318");
        let text = e["event"].as_str().unwrap();
        assert!(
            text.starts_with("- - RPRM 107463 Jserver -DEBUG|||"),
            "{text}"
        );
        // A BSD line is rendered the RFC 5424 way too.
        let e = event_of("<29>May 24 17:34:43 rprm-app-01 RPRM[12]: started");
        assert_eq!(e["sourcetype"], "polycom:rprm:syslog");
        assert_eq!(e["event"], "- - RPRM 12 - -started");
    }
}
