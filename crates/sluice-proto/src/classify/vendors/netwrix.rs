//! Netwrix Endpoint Protector (SC4S `addons/netwrix/app-syslog-epp.conf`): PROGRAM `EPP-*`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "netwrix",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-netwrix_epp",
        topic: Topic::Pgm,
        order: "netwrix/app-syslog-epp.conf",
        when: When::ProgramPrefix(&["EPP-"]),
        parse: epp,
    }],
};

static KEYS: &[Key] = &[Key::new("netwrix", "epp", "netwrix:epp", "netops").source("netwrix:epp")];

fn epp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"EPP-")) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Template;
    use crate::classify::testutil::{classify_line, event_of};

    const EPP: &str = "<129>1 2024-05-24T02:23:05.318529+00:00 epp-srv-01 EPP-1.1.1.1 23203 - - EPP IP - xxxxxxx.hosted.endpointprotector.com - Device Control - File Read: [Log ID] XXXX | [Event Name] File Read | [Client Computer] XXXXXXXXXX | [Device Type] Serial ATA Controller | [Device] Intel(R) 300 Series Chipset Family SATA AHCI Controller/Intel Corp.";

    #[test]
    fn epp() {
        let e = event_of(EPP);
        assert_eq!(e["sourcetype"], "netwrix:epp");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["source"], "netwrix:epp");
        assert_eq!(e["host"], "epp-srv-01");
        assert_eq!(e["fields"]["sc4s_vendor"], "netwrix");
        assert_eq!(e["fields"]["sc4s_product"], "epp");
        assert_eq!(e["time"], "1716517385.318");
        let text = e["event"].as_str().unwrap();
        assert!(
            text.starts_with("- - EPP-1.1.1.1 23203 - -EPP IP"),
            "{text}"
        );
        assert!(text.contains("[Device Type] Serial ATA Controller | [Device] Intel(R) 300"));
        assert_eq!(classify_line(EPP).template, Template::Rfc5424Compact);
        // Over BSD too; PROGRAM `EPP` alone is not theirs.
        let c = classify_line("<129>May 24 02:23:05 epp-srv-01 EPP-server: x");
        assert_eq!(c.sourcetype, "netwrix:epp");
        let c = classify_line("<129>May 24 02:23:05 epp-srv-01 EPP: x");
        assert_eq!(c.sourcetype, "nix:syslog");
        // Whatever the text (or none), the PROGRAM decides.
        let e = event_of("<129>1 2024-05-24T02:23:05Z epp-srv-01 EPP-1.1.1.1 - - -");
        assert_eq!(e["sourcetype"], "netwrix:epp");
        assert!(!e["event"].as_str().unwrap().is_empty());
    }
}
