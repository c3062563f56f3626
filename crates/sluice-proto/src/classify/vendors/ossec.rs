//! OSSEC (SC4S `addons/ossec/app-syslog-ossec.conf`): PROGRAM `ossec*`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "ossec",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-ossec",
        topic: Topic::Pgm,
        order: "ossec/app-syslog-ossec.conf",
        when: When::ProgramPrefix(&["ossec"]),
        parse: ossec,
    }],
};

static KEYS: &[Key] = &[Key::new("ossec", "agent", "ossec", "main").source("ossec:alerts")];

fn ossec<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"ossec")) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn alert() {
        let c = classify_line("<132>Apr 06 20:55:57 o ossec: Alert Level: 2; Rule: 1002 - x");
        assert_eq!(c.sourcetype, "ossec");
        assert_eq!(c.source, "ossec:alerts");
        assert_eq!(c.product, "agent");
    }
}
