//! Darktrace (SC4S `addons/darktrace/app-syslog-darktrace_syslog.conf`): PROGRAM
//! `darktrace*`; `darktrace_audit` is the audit log.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "darktrace",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-darktrace_syslog",
        topic: Topic::Pgm,
        order: "darktrace/app-syslog-darktrace_syslog.conf",
        when: When::ProgramPrefix(&["darktrace"]),
        parse: darktrace,
    }],
};

static KEYS: &[Key] = &[
    Key::new("darktrace", "syslog", "darktrace", "netids").template(Template::MsgOnly),
    Key::update("darktrace:audit", "").class("audit"),
];

fn darktrace<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program.filter(|p| p.starts_with(b"darktrace")) else {
        return false;
    };
    out.key(&KEYS[0]);
    if p == b"darktrace_audit" {
        out.key(&KEYS[1]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn audit() {
        let c = classify_line("<165> Mar 25 15:54:27 dt darktrace_audit: {\"username\":\"t\"}");
        assert_eq!(c.sourcetype, "darktrace:audit");
        assert_eq!(c.index, "netids");
        let c = classify_line("<165> Mar 25 15:54:27 dt darktrace: {\"x\":1}");
        assert_eq!(c.sourcetype, "darktrace");
    }
}
