//! Pulse Connect Secure (SC4S `addons/pulse/app-syslog-pulse_connect_secure.conf`): PROGRAM
//! `PulseSecure:`; web requests and blocked access go to the proxy index.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "pulse",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-pulse_connect_secure",
        topic: Topic::Pgm,
        order: "pulse/app-syslog-pulse_connect_secure.conf",
        when: When::ProgramPrefix(&["PulseSecure:"]),
        parse: pulse,
    }],
};

static KEYS: &[Key] = &[
    Key::new("pulse_connect", "secure", "pulse:connectsecure", "netfw"),
    Key::update("pulse:connectsecure:web", "netproxy").class("web"),
];

fn pulse<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.starts_with(b"PulseSecure:"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    let m = input.body;
    if crate::classify::vendors::util::find_lit!(m, b"Access blocked").is_some()
        || crate::classify::vendors::util::find_lit!(m, b"WebRequest").is_some()
    {
        out.key(&KEYS[1]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn pulse_and_web() {
        let c = classify_line(
            "<14>1 2024-04-08T13:05:17.017398+00:00 pcs PulseSecure: - - - ive | 2020-09-16 | ADM100 | x",
        );
        assert_eq!(c.sourcetype, "pulse:connectsecure");
        assert_eq!(c.index, "netfw");
        let c = classify_line(
            "<14>1 2024-04-08T13:05:17.017398+00:00 pcs PulseSecure: - - - ive | WebRequest ok",
        );
        assert_eq!(c.sourcetype, "pulse:connectsecure:web");
        assert_eq!(c.index, "netproxy");
    }
}
