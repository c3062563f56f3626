//! Qumulo (SC4S `addons/qumulo/app-syslog-qumulo.conf`): PROGRAM `qumulo`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "qumulo",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-qumulo",
        topic: Topic::Pgm,
        order: "qumulo/app-syslog-qumulo.conf",
        when: When::Program(&["qumulo"]),
        parse: qumulo,
    }],
};

static KEYS: &[Key] =
    &[Key::new("qumulo", "storage", "qumulo:storage", "infraops").template(Template::MsgOnly)];

fn qumulo<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"qumulo") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn audit() {
        let c = classify_line("<134>1 2024-04-08T18:30:52.056993+00:00 q qumulo - - - 127.0.0.1,x");
        assert_eq!(c.sourcetype, "qumulo:storage");
        let c = classify_line("<134>1 2024-04-08T18:30:52.056993+00:00 q qumulo2 - - - x");
        assert_ne!(c.sourcetype, "qumulo:storage");
    }
}
