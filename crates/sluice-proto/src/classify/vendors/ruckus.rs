//! Ruckus SmartZone (SC4S `addons/ruckus/app-syslog-ruckus_smartzone.conf`): PROGRAM
//! `Core` and a message starting `@@id,name,"key"="value",...`, rendered as JSON values.

use crate::classify::registry::{App, Input, Key, Out, Topic, ValuesSyntax, Values, Vendor, When};
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

static KEYS: &[Key] = &[
    Key::new("ruckus", "smartzone", "ruckus:smartzone", "netops").template(Template::HdrMsg),
    Key::update("", "").template(Template::JsonValues),
];

fn smartzone<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"Core") || !input.body.starts_with(b"@@") {
        return false;
    }
    out.key(&KEYS[0]);
    // id,name,pairs: the pairs after the second comma.
    let mut cols = input.body.splitn(3, |b| *b == b',');
    if let (Some(_), Some(_), Some(pairs)) = (cols.next(), cols.next(), cols.next()) {
        out.key(&KEYS[1]);
        out.values = Some(Values {
            text: pairs,
            syntax: ValuesSyntax::Kv { pair: b',' },
        });
    }
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
        assert_eq!(c.template.sc4s_name(), "t_json_values");
        let c = classify_line("<166>Apr 09 07:32:15 sz Core: other");
        assert_ne!(c.sourcetype, "ruckus:smartzone");
    }
}
