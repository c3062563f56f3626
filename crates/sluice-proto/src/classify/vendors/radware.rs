//! Radware DefensePro (SC4S `addons/radware/`): PROGRAM `M_<digits>`, or a MESSAGE
//! `[Device: <host> <address>] M_<digits>: ...` (HOST from it).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "radware",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-rawdware_defensepro_a",
            topic: Topic::Syslog,
            order: "radware/app-syslog-rawdware_defensepro_a.conf",
            when: When::ProgramPrefix(&["M_"]),
            parse: by_program,
        },
        App {
            name: "app-syslog-rawdware_defensepro_b",
            topic: Topic::Syslog,
            order: "radware/app-syslog-rawdware_defensepro_b.conf",
            when: When::BodyPrefix(&["[Device: "]),
            parse: by_device,
        },
    ],
};

static KEYS: &[Key] = &[Key::new(
    "radware",
    "defensepro",
    "radware:defensepro",
    "netops",
)];

/// `M_\d+` at the start of `s`: its length.
fn m_code(s: &[u8]) -> Option<usize> {
    let digits = s
        .strip_prefix(b"M_")?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    (digits > 0).then_some(2 + digits)
}

/// `program('^(M_\d+)')`.
fn by_program<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program.and_then(m_code).is_none() {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

/// `^(\[Device: (?<host>[^ ]+) [^\]]+] M_\d+: .*)` on MESSAGE.
fn by_device<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    let Some(rest) = m.strip_prefix(b"[Device: ") else {
        return false;
    };
    let host_len = rest.iter().take_while(|&&b| b != b' ').count();
    // `[^ ]+` then a space; `[^\]]+` then `] ` (it cannot run past the first `]`).
    if host_len == 0 || rest.get(host_len) != Some(&b' ') {
        return false;
    }
    let after_host = &rest[host_len + 1..];
    let Some(close) = memchr::memchr(b']', after_host) else {
        return false;
    };
    let tail = &after_host[close + 1..];
    if close == 0
        || !tail
            .strip_prefix(b" ")
            .and_then(|t| m_code(t).map(|n| &t[n..]))
            .is_some_and(|t| t.starts_with(b": "))
    {
        return false;
    }
    out.key(&KEYS[0]);
    out.host(&rest[..host_len]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn defensepro() {
        let e = event_of(
            "<27>M_00796:  User dpadmin-07 Session with client radware was terminated due to Inactivity.",
        );
        assert_eq!(e["sourcetype"], "radware:defensepro");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["host"], "192.0.2.10");
        assert_eq!(e["fields"]["sc4s_vendor"], "radware");
        assert_eq!(e["fields"]["sc4s_product"], "defensepro");
        assert!(
            e["event"]
                .as_str()
                .unwrap()
                .contains("User dpadmin-07 Session with client radware was terminated")
        );
        let e = event_of(
            "<27>[Device: dp-edge01 10.200.193.135] M_20000: 2 attacks of type \"Intrusions\" started between 15:36:06 UTC and 15:36:21 UTC. Attack name: DNS-named-version-attempt-UDP; Action: drop.",
        );
        assert_eq!(e["sourcetype"], "radware:defensepro");
        assert_eq!(e["host"], "dp-edge01");
        assert!(
            e["event"]
                .as_str()
                .unwrap()
                .contains("Attack name: DNS-named-version-attempt-UDP")
        );
        let c = classify_line("<27>May 24 15:24:29 dp M_1: x");
        assert_eq!(c.sourcetype, "radware:defensepro");
        for not in [
            "<27>May 24 15:24:29 dp M_: x",
            "<27>May 24 15:24:29 dp Mx_1: x",
            "<27>[Device: dp-edge01] M_2: x",
            "<27>[Device: dp-edge01 1.2.3.4] M_x: y",
            "<27>[Device:  1.2.3.4] M_2: y",
            "<27>[Device: dp 1.2.3.4] M_2 y",
        ] {
            assert_ne!(classify_line(not).vendor, "radware", "{not}");
        }
    }
}
