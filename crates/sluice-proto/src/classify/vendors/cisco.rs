//! Cisco syslog-style families (SC4S `addons/cisco/`): `app-syslog-cisco_syslog` takes a
//! well-formed syslog line whose MESSAGE holds a `%FACILITY-SEVERITY-MNEMONIC` tag, labels it
//! `cisco:ios`, and runs the `cisco_syslog` sub-topic, whose applications relabel ASA, FTD,
//! PIX, FWSM and IOS-XR messages by the tag's prefix.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "cisco",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-cisco_syslog",
            topic: Topic::Syslog,
            order: "cisco/app-syslog-cisco_syslog.conf",
            when: When::Token(&["%"]),
            parse: cisco_syslog,
        },
        App {
            name: "app-cisco-cisco_asa",
            topic: Topic::Sub("cisco_syslog"),
            order: "cisco/app-cisco-cisco_asa.conf",
            when: When::Always,
            parse: asa,
        },
        App {
            name: "app-cisco-cisco_ftd",
            topic: Topic::Sub("cisco_syslog"),
            order: "cisco/app-cisco-cisco_ftd.conf",
            when: When::Always,
            parse: ftd,
        },
        App {
            name: "app-cisco-cisco_fwsm",
            topic: Topic::Sub("cisco_syslog"),
            order: "cisco/app-cisco-cisco_fwsm.conf",
            when: When::Always,
            parse: fwsm,
        },
        App {
            name: "app-cisco-cisco_pix",
            topic: Topic::Sub("cisco_syslog"),
            order: "cisco/app-cisco-cisco_pix.conf",
            when: When::Always,
            parse: pix,
        },
        App {
            name: "app-cisco-cisco_xr",
            topic: Topic::Sub("cisco_syslog"),
            order: "cisco/app-cisco-cisco_xr.conf",
            when: When::Always,
            parse: xr,
        },
    ],
};

const IOS: usize = 0;
const ASA: usize = 1;
const FTD: usize = 2;
const PIX: usize = 3;
const FWSM: usize = 4;
const XR: usize = 5;

static KEYS: &[Key] = &[
    Key::new("cisco", "ios", "cisco:ios", "netops"),
    Key::new("cisco", "asa", "cisco:asa", "netfw"),
    Key::new("cisco", "ftd", "cisco:ftd", "netfw"),
    Key::new("cisco", "pix", "cisco:pix", "netfw"),
    Key::new("cisco", "fwsm", "cisco:fwsm", "netfw"),
    Key::new("cisco", "xr", "cisco:xr", "netops"),
];

/// The parts of SC4S's `^(%(?<identifier>.+)-(?<severity>[0-7])-(?<mnemonic>[^\: ]+))
/// (?<seperator> ?[: ]) *(?<message>.*)`: `identifier` is greedy, so the tag is split at
/// the last `-<digit 0-7>-` followed by a mnemonic and a separator.
#[derive(Debug, PartialEq, Eq)]
struct Tag<'a> {
    identifier: &'a [u8],
    mnemonic: &'a [u8],
}

fn parse_tag(m: &[u8]) -> Option<Tag<'_>> {
    let rest = m.strip_prefix(b"%")?;
    // Candidates for `-S-` from the right (greedy identifier), each with a non-empty
    // mnemonic of non-`:`/space bytes followed by ` :`, ` `, or `:`... (the separator).
    let mut end = rest.len();
    while end >= 3 {
        let i = rest[..end].iter().rposition(|&b| b == b'-')?;
        // `rest[i]` is the `-` before the mnemonic; `rest[i-1]` the severity.
        if i >= 3 && rest[i - 2] == b'-' && (b'0'..=b'7').contains(&rest[i - 1]) {
            let ident = &rest[..i - 2];
            let after = &rest[i + 1..];
            let mlen = after
                .iter()
                .position(|&b| b == b':' || b == b' ')
                .unwrap_or(after.len());
            let sep_ok = matches!(after.get(mlen..), Some([b':' | b' ', ..]));
            if !ident.is_empty() && mlen > 0 && sep_ok {
                return Some(Tag {
                    identifier: ident,
                    mnemonic: &after[..mlen],
                });
            }
        }
        end = i;
    }
    None
}

/// SC4S's `program('[a-z][^\[\] ]+$')`: a lower-case letter followed by at least one byte
/// other than brackets and spaces, up to the end.
fn program_is_named(p: &[u8]) -> bool {
    let tail = p
        .iter()
        .rposition(|&b| b == b'[' || b == b']' || b == b' ')
        .map_or(0, |i| i + 1);
    // The run `p[tail..]` has no bracket/space; a lower-case letter with at least one byte
    // after it inside that run matches.
    p[tail..]
        .iter()
        .enumerate()
        .any(|(i, b)| b.is_ascii_lowercase() && i + 1 < p.len() - tail)
}

fn cisco_syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program.is_some_and(program_is_named) || memchr::memchr(b'%', input.body).is_none() {
        return false;
    }
    let body = input.body.strip_prefix(b": ").unwrap_or(input.body);
    let Some(tag) = parse_tag(body) else {
        return false;
    };
    out.key(&KEYS[IOS]);
    out.message(body);
    out.nv.set("identifier", tag.identifier);
    out.nv.set("mnemonic", tag.mnemonic);
    input.topic("cisco_syslog", out);
    true
}

fn asa<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body_in(out);
    let ftd_mgmt = out.nv.get("mnemonic").is_some_and(is_43000x);
    if m.starts_with(b"%ASA-") || (m.starts_with(b"%FTD-") && !ftd_mgmt) {
        out.key(&KEYS[ASA]);
        return true;
    }
    false
}

/// `^43000.$`.
fn is_43000x(m: &[u8]) -> bool {
    m.len() == 6 && m.starts_with(b"43000")
}

fn ftd<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.body_in(out).starts_with(b"%FTD-") && out.nv.get("mnemonic").is_some_and(is_43000x) {
        out.key(&KEYS[FTD]);
        return true;
    }
    false
}

fn pix<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.body_in(out).starts_with(b"%PIX-") {
        out.key(&KEYS[PIX]);
        return true;
    }
    false
}

fn fwsm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.body_in(out).starts_with(b"%FWSM-") {
        out.key(&KEYS[FWSM]);
        return true;
    }
    false
}

fn xr<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body_in(out);
    if m.starts_with(b"%LICENSE-") || m.starts_with(b"%MGBL-") || m.starts_with(b"%SECURITY-") {
        out.key(&KEYS[XR]);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{Tag, parse_tag, program_is_named};
    use crate::classify::testutil::classify_line;

    #[test]
    fn tag() {
        assert_eq!(
            parse_tag(b"%ASA-3-003164: TCP access"),
            Some(Tag {
                identifier: b"ASA",
                mnemonic: b"003164"
            })
        );
        assert_eq!(
            parse_tag(b"%SYSMGR-STANDBY-3-SHUTDOWN_START: x"),
            Some(Tag {
                identifier: b"SYSMGR-STANDBY",
                mnemonic: b"SHUTDOWN_START"
            })
        );
        assert_eq!(
            parse_tag(b"%MGBL-CONFIGCLI-3-COMMIT_FAILURE : c"),
            Some(Tag {
                identifier: b"MGBL-CONFIGCLI",
                mnemonic: b"COMMIT_FAILURE"
            })
        );
        assert_eq!(parse_tag(b"%ASA-9-1: x"), None);
        assert_eq!(parse_tag(b"ASA-3-1: x"), None);
        assert!(program_is_named(b"sshd"));
        assert!(!program_is_named(b"%ASA-3-1"));
        assert!(!program_is_named(b"a"));
    }

    #[test]
    fn asa_ftd_pix() {
        let c = classify_line(
            "<127> Mar 16 02:54:50 asa-fw-07 : %ASA-3-003164: TCP access denied by ACL",
        );
        assert_eq!(c.sourcetype, "cisco:asa");
        assert_eq!(c.index, "netfw");
        let c = classify_line("<127> Mar 16 02:54:50 fw1 : %FTD-6-430003: DeviceUUID: x");
        assert_eq!(c.sourcetype, "cisco:ftd");
        let c = classify_line("<127> Mar 16 02:54:50 fw1 : %FTD-6-302013: Built");
        assert_eq!(c.sourcetype, "cisco:asa");
        let c = classify_line("<127> Mar 16 02:54:50 fw1 : %PIX-3-302022: Built");
        assert_eq!(c.sourcetype, "cisco:pix");
        let c =
            classify_line("<111> Mar 20 11:06:02 n9k-leaf-11 %MODULE-5-MOD_OK: Module 1 is online");
        assert_eq!(c.sourcetype, "cisco:ios");
        assert_eq!(c.product, "ios");
    }
}
