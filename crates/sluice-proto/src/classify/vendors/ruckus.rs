//! Ruckus SmartZone (SC4S `addons/ruckus/app-syslog-ruckus_smartzone.conf`): PROGRAM
//! `Core` and a message starting `@@id,name,"key"="value",...`.
//!
//! SC4S then runs a Python parser for the quoted pairs and, when it succeeds, switches to
//! `t_json_values` (`{"id":"@@306","name":"...",<pairs>}`). sluice's values reader cannot
//! add the id/name columns nor unquote keys, so the event keeps SC4S's default `t_hdr_msg`
//! text (which is also what the vendor corpus expects).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "ruckus",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-ruckus_smartzone",
        topic: Topic::Pgm,
        order: "ruckus/app-syslog-ruckus_smartzone.conf",
        when: When::Program(&["Core"]),
        parse: smartzone,
    }],
};

static KEYS: &[Key] =
    &[Key::new("ruckus", "smartzone", "ruckus:smartzone", "netops").template(Template::HdrMsg)];

fn smartzone<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"Core") || !input.body.starts_with(b"@@") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn event() {
        let c = classify_line(
            "<166>Apr 09 07:32:15 sz Core: @@306,apChannelChanged,\"apMac\"=\"54:EC\",\"radio\"=\"11g/n\"",
        );
        assert_eq!(c.sourcetype, "ruckus:smartzone");
        assert_eq!(c.index, "netops");
        assert_eq!(c.template.sc4s_name(), "t_hdr_msg");
        let c = classify_line("<166>Apr 09 07:32:15 sz Core: other");
        assert_ne!(c.sourcetype, "ruckus:smartzone");
    }
}
