//! WALLIX Bastion (SC4S `addons/wallix/app-syslog-wallx_proxy.conf`): PROGRAM `wabengine`,
//! `rdpproxy` or `sshproxy`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

const PROGRAMS: [&str; 3] = ["wabengine", "rdpproxy", "sshproxy"];

pub static VENDOR: Vendor = Vendor {
    name: "wallix",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-wallx_proxy",
        topic: Topic::Pgm,
        order: "wallix/app-syslog-wallx_proxy.conf",
        when: When::Program(&PROGRAMS),
        parse: bastion,
    }],
};

static KEYS: &[Key] = &[Key::new("wallix", "bastion", "WB:syslog", "infraops")];

fn bastion<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| PROGRAMS.iter().any(|n| n.as_bytes() == p))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn bastion() {
        for p in ["wabengine", "rdpproxy", "sshproxy"] {
            let c = classify_line(&format!(
                "<134>May 24 05:38:26 bastion-01 {p}[812]: [rdpproxy] psid=\"1\" user=\"admin\" type=\"SESSION_ESTABLISHED_SUCCESSFULLY\""
            ));
            assert_eq!(c.sourcetype, "WB:syslog", "{p}");
            assert_eq!(c.index, "infraops");
            assert_eq!(c.vendor, "wallix");
            assert_eq!(c.product, "bastion");
        }
        // Exact names only.
        let c = classify_line("<134>May 24 05:38:26 bastion-01 sshproxyd[1]: x");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
