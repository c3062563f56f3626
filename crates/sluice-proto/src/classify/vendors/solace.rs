//! Solace PubSub+ event brokers (SC4S `addons/solace/app-syslog-solace_eventbroker.conf`):
//! PROGRAM `event*` with a MESSAGE starting `SYSTEM: `, `CLIENT: ` or `VPN: ` and an
//! upper-case letter.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "solace",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-solace_eventbroker",
        topic: Topic::Pgm,
        order: "solace/app-syslog-solace_eventbroker.conf",
        when: When::ProgramPrefix(&["event"]),
        parse: eventbroker,
    }],
};

static KEYS: &[Key] = &[Key::new(
    "solace",
    "eventbroker",
    "solace:eventbroker",
    "main",
)];

/// `message('^SYSTEM: [A-Z]+')`, `'^CLIENT: [A-Z]'`, `'^VPN: [A-Z]'`.
fn event_line(m: &[u8]) -> bool {
    [&b"SYSTEM: "[..], b"CLIENT: ", b"VPN: "].iter().any(|p| {
        m.strip_prefix(*p)
            .and_then(|rest| rest.first())
            .is_some_and(u8::is_ascii_uppercase)
    })
}

fn eventbroker<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"event")) || !event_line(input.body) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn eventbroker() {
        // SC4S's test sends no space between the stamp and the host.
        let e = event_of(
            "<111>May 25 14:11:56sol-vmr01 event: SYSTEM: SYSTEM_CLIENT_CONNECT_FAIL: - - Message VPN (xx) Sol Client username xx clientname xx@RTMD_ALL connect failed from 10.0.0.0:33454 - Forbidden: Client Name Already In Use",
        );
        assert_eq!(e["sourcetype"], "solace:eventbroker");
        assert_eq!(e["index"], "main");
        assert_eq!(e["host"], "sol-vmr01");
        assert_eq!(e["fields"]["sc4s_vendor"], "solace");
        assert_eq!(e["fields"]["sc4s_product"], "eventbroker");
        assert_eq!(e["time"], "1716646316.000");
        assert!(
            e["event"]
                .as_str()
                .unwrap()
                .contains("connect failed from 10.0.0.0:33454")
        );
        for (line, solace) in [
            (
                "<111>May 25 14:11:56 sol event: CLIENT: CLIENT_CLIENT_OPEN_FLOW: x",
                true,
            ),
            (
                "<111>May 25 14:11:56 sol event: VPN: VPN_AD_MSG_SPOOL_HIGH_CLEAR: x",
                true,
            ),
            ("<111>May 25 14:11:56 sol eventd: VPN: X", true),
            ("<111>May 25 14:11:56 sol event: VPN: x", false),
            ("<111>May 25 14:11:56 sol event: OTHER: X", false),
            ("<111>May 25 14:11:56 sol event: SYSTEM:X", false),
            ("<111>May 25 14:11:56 sol evnt: SYSTEM: X", false),
        ] {
            assert_eq!(
                classify_line(line).sourcetype == "solace:eventbroker",
                solace,
                "{line}"
            );
        }
    }
}
