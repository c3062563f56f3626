//! Alcatel-Lucent OmniSwitch (SC4S `addons/alcatel/app-syslog-alcatel_switch.conf`):
//! PROGRAM `swlogd*`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "alcatel",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-alcatel_switch",
        topic: Topic::Pgm,
        order: "alcatel/app-syslog-alcatel_switch.conf",
        when: When::ProgramPrefix(&["swlogd"]),
        parse: switch,
    }],
};

static KEYS: &[Key] =
    &[Key::new("alcatel", "switch", "alcatel:switch", "netops").template(Template::HdrMsg)];

fn switch<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"swlogd")) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn swlogd() {
        let c = classify_line("<166>Mar 11 18:43:38 sw1 swlogd: bcmd esm info(5) x");
        assert_eq!(c.sourcetype, "alcatel:switch");
        assert_eq!(c.index, "netops");
        assert_eq!(c.product, "switch");
        let c = classify_line("<166>Mar 11 18:43:38 sw1 sshd: bcmd esm info(5) x");
        assert_ne!(c.vendor, "alcatel");
    }
}
