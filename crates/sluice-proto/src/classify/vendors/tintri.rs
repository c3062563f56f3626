//! Tintri VMstore (SC4S `addons/tintri/app-syslog-tintri.conf`): MESSAGE containing
//! `,com.tintri.log.LogBase] `.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::util::find_lit;

const MARK: &str = ",com.tintri.log.LogBase] ";

pub static VENDOR: Vendor = Vendor {
    name: "tintri",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-tintri",
        topic: Topic::Syslog,
        order: "tintri/app-syslog-tintri.conf",
        when: When::Token(&[MARK]),
        parse: vmstore,
    }],
};

static KEYS: &[Key] = &[Key::new("tintri", "syslog", "tintri", "infraops")];

fn vmstore<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if find_lit!(input.body, MARK.as_bytes()).is_none() {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn vmstore() {
        let e = event_of(
            "<165>2024-05-26T16:14:44.318529+00:00 tintri-vmstore-01 : Scrubbed@ 2021-03-22T13:55:01.620956-04:00 tomcat: [https-jsse-nio-443-exec-8,com.tintri.log.LogBase] WARN : USER:AUDIT:LOG-AUDIT-0083: [358966] Reset credentials [POST /api/v310/userAccount/reset#012[Severity:WARNING , Facility:LOCAL6]",
        );
        assert_eq!(e["sourcetype"], "tintri");
        assert_eq!(e["index"], "infraops");
        assert_eq!(e["host"], "tintri-vmstore-01");
        assert_eq!(e["fields"]["sc4s_vendor"], "tintri");
        assert_eq!(e["fields"]["sc4s_product"], "syslog");
        assert_eq!(e["time"], "1716740084.318");
        assert!(
            e["event"]
                .as_str()
                .unwrap()
                .contains("USER:AUDIT:LOG-AUDIT-0083: [358966] Reset credentials")
        );
        // With a PROGRAM SC4S still gets here (no PROGRAM application takes it).
        let c = classify_line(
            "<165>May 26 16:14:44 vm tomcat: [exec-8,com.tintri.log.LogBase] WARN : x",
        );
        assert_eq!(c.sourcetype, "tintri");
        let c = classify_line("<165>May 26 16:14:44 vm tomcat: [exec-8,com.tintri.log.LogBase]");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
