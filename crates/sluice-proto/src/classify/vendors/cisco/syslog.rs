//! `app-syslog-cisco_syslog` (a trusted syslog header, MESSAGE `%FAC-S-MNEMONIC...`,
//! labelled `cisco:ios`) and the applications of the `cisco_syslog` sub-topic it and the
//! almost-syslog repair run, each relabelling by the tag (SC4S `app-cisco-cisco_*.conf`).

use std::net::IpAddr;

use crate::classify::registry::{App, HostEdit, Input, Out, Parse, Topic, When};
use crate::classify::value::Value;

use super::{
    ACE, ASA, CIMC, FTD, FWSM, IOS, KEYS, PIX, UCM, UCS, VIPTELA, XR, parse_tag, run_cisco_syslog,
    set_tag_values,
};

pub(crate) const CISCO_SYSLOG: App = App {
    name: "app-syslog-cisco_syslog",
    topic: Topic::Syslog,
    order: "cisco/app-syslog-cisco_syslog.conf",
    // The tag regex is anchored at MESSAGE's start (after an optional `: `).
    when: When::BodyPrefix(&["%", ": %"]),
    parse: cisco_syslog,
};

/// A `cisco_syslog` application; `prefixes` (of the tagged MESSAGE the parent hands over as
/// the sub-topic's body) select it without a call.
const fn sub(
    name: &'static str,
    order: &'static str,
    prefixes: &'static [&'static str],
    parse: Parse,
) -> App {
    App {
        name,
        topic: Topic::Sub("cisco_syslog"),
        order,
        when: When::BodyPrefix(prefixes),
        parse,
    }
}

pub(crate) const ACE_APP: App = sub(
    "app-cisco-cisco_ace",
    "cisco/app-cisco-cisco_ace.conf",
    &["%ACE-"],
    ace,
);
pub(crate) const ASA_APP: App = sub(
    "app-cisco-cisco_asa",
    "cisco/app-cisco-cisco_asa.conf",
    &["%ASA-", "%FTD-"],
    asa,
);
pub(crate) const CIMC_APP: App = sub(
    "app-cisco-cisco_cimc",
    "cisco/app-cisco-cisco_cimc.conf",
    &["%CIMC-"],
    cimc,
);
pub(crate) const FTD_APP: App = sub(
    "app-cisco-cisco_ftd",
    "cisco/app-cisco-cisco_ftd.conf",
    &["%FTD-"],
    ftd,
);
pub(crate) const FWSM_APP: App = sub(
    "app-cisco-cisco_fwsm",
    "cisco/app-cisco-cisco_fwsm.conf",
    &["%FWSM-"],
    fwsm,
);
pub(crate) const PIX_APP: App = sub(
    "app-cisco-cisco_pix",
    "cisco/app-cisco-cisco_pix.conf",
    &["%PIX-"],
    pix,
);
pub(crate) const UCM_APP: App = sub(
    "app-cisco-cisco_ucm",
    "cisco/app-cisco-cisco_ucm.conf",
    &["%UC_", "%CCM_"],
    ucm,
);
pub(crate) const UCS_APP: App = sub(
    "app-cisco-cisco_ucs",
    "cisco/app-cisco-cisco_ucs.conf",
    &["%UCSM"],
    ucs,
);
pub(crate) const VIPTELA_APP: App = sub(
    "app-cisco-cisco_viptela",
    "cisco/app-cisco-cisco_viptela.conf",
    &["%Viptela"],
    viptela,
);
pub(crate) const XR_APP: App = sub(
    "app-cisco-cisco_xr",
    "cisco/app-cisco-cisco_xr.conf",
    &["%LICENSE-", "%MGBL-", "%SECURITY-"],
    xr,
);

/// SC4S's `program('[a-z][^\[\] ]+$')`: a lower-case letter followed by at least one byte
/// other than brackets and spaces, up to the end.
fn program_is_named(p: &[u8]) -> bool {
    let tail = p
        .iter()
        .rposition(|&b| b == b'[' || b == b']' || b == b' ')
        .map_or(0, |i| i + 1);
    let run = &p[tail..];
    run.iter()
        .enumerate()
        .any(|(i, b)| b.is_ascii_lowercase() && i + 1 < run.len())
}

fn cisco_syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program.is_some_and(program_is_named) {
        return false;
    }
    let body = input.body.strip_prefix(b": ").unwrap_or(input.body);
    let Some(tag) = parse_tag(body) else {
        return false;
    };
    out.key(&KEYS[IOS]);
    if body.len() != input.body.len() {
        out.message(body);
    }
    set_tag_values(out, &tag);
    run_cisco_syslog(input, body, out);
    true
}

/// The MESSAGE the sub-topic sees starts with `prefix`.
fn starts<'m>(input: &Input<'m, '_>, out: &Out<'m>, prefix: &[u8]) -> bool {
    input.body_in(out).starts_with(prefix)
}

/// `^43000.$`: FTD's own (Firepower) records; the other FTD ids are ASA's.
fn is_ftd_own(out: &Out<'_>) -> bool {
    out.nv
        .get("mnemonic")
        .is_some_and(|m| m.len() == 6 && m.starts_with(b"43000") && m[5] != b'\n')
}

fn ace<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    relabel(starts(input, out, b"%ACE-"), ACE, out)
}

fn asa<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let yes = starts(input, out, b"%ASA-") || (starts(input, out, b"%FTD-") && !is_ftd_own(out));
    relabel(yes, ASA, out)
}

fn cimc<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    relabel(starts(input, out, b"%CIMC-"), CIMC, out)
}

fn ftd<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    relabel(starts(input, out, b"%FTD-") && is_ftd_own(out), FTD, out)
}

fn fwsm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    relabel(starts(input, out, b"%FWSM-"), FWSM, out)
}

fn pix<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    relabel(starts(input, out, b"%PIX-"), PIX, out)
}

fn ucm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let yes = starts(input, out, b"%UC_") || starts(input, out, b"%CCM_");
    relabel(yes, UCM, out)
}

fn ucs<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    relabel(starts(input, out, b"%UCSM"), UCS, out)
}

fn xr<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let yes = starts(input, out, b"%LICENSE-")
        || starts(input, out, b"%MGBL-")
        || starts(input, out, b"%SECURITY-");
    relabel(yes, XR, out)
}

fn relabel(yes: bool, key: usize, out: &mut Out<'_>) -> bool {
    if yes {
        out.key(&KEYS[key]);
    }
    yes
}

/// Viptela puts the device name inside the identifier (`%Viptela-<host>-<daemon>-6-...`):
/// it becomes HOST when the header had none (HOST is still an IP), and PROGRAM/PID (the
/// daemon's) are unset. SC4S also rebuilds MESSAGE without the host; sluice keeps the
/// received tag (the text after it is the same).
fn viptela<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !starts(input, out, b"%Viptela") {
        return false;
    }
    out.key(&KEYS[VIPTELA]);
    let ident = out.nv.get("identifier").unwrap_or_default();
    // `^(Viptela)-(?<host>.*)-(.*)$`: greedy host, so the last `-` ends it.
    if let Some(rest) = ident.strip_prefix(b"Viptela-")
        && let Some(dash) = memchr::memrchr(b'-', rest)
    {
        out.program = Some(None);
        out.pid = Some(None);
        if host_is_ipv4(input, out) {
            out.host = HostEdit::Set(Value::Bytes(&rest[..dash]));
        }
    }
    true
}

/// `host('^\d+\.\d+\.\d+\.\d+')`: HOST as it stands is a dotted IPv4 (the sender's when
/// the header named none).
fn host_is_ipv4(input: &Input<'_, '_>, out: &Out<'_>) -> bool {
    let host = match out.host {
        HostEdit::Set(Value::Bytes(b)) => Some(b),
        HostEdit::Set(_) => return false,
        HostEdit::SourceIp => None,
        HostEdit::Keep => input.host,
    };
    match host {
        Some(h) => starts_dotted_quad(h),
        None => match input.src.source_ip {
            IpAddr::V4(_) => true,
            IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
        },
    }
}

fn starts_dotted_quad(h: &[u8]) -> bool {
    let mut at = 0;
    for part in 0..4 {
        let n = h[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        at += n;
        if part < 3 {
            if h.get(at) != Some(&b'.') {
                return false;
            }
            at += 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{program_is_named, starts_dotted_quad};
    use crate::classify::testutil::classify_line;

    #[test]
    fn program_names() {
        assert!(program_is_named(b"sshd"));
        assert!(program_is_named(b"x sshd"));
        assert!(!program_is_named(b"%ASA-3-1"));
        assert!(!program_is_named(b"SYSMGR"));
        assert!(!program_is_named(b"a"));
        assert!(!program_is_named(b"ab]"));
        assert!(starts_dotted_quad(b"10.1.2.3"));
        assert!(starts_dotted_quad(b"10.1.2.3x"));
        assert!(!starts_dotted_quad(b"10.1.2"));
        assert!(!starts_dotted_quad(b"host"));
    }

    #[test]
    fn relabels_by_tag() {
        let c = classify_line("<127> Mar 16 02:54:50 fw1 %ASA-3-003164: TCP access denied");
        assert_eq!(c.sourcetype, "cisco:asa");
        assert_eq!(c.index, "netfw");
        let c = classify_line("<127> Mar 16 02:54:50 fw1 %FTD-6-430003: DeviceUUID: x");
        assert_eq!(c.sourcetype, "cisco:ftd");
        let c = classify_line("<127> Mar 16 02:54:50 fw1 %FTD-6-302013: Built");
        assert_eq!(c.sourcetype, "cisco:asa");
        let c = classify_line("<127> Mar 16 02:54:50 fw1 %PIX-3-302022: Built");
        assert_eq!(c.sourcetype, "cisco:pix");
        let c = classify_line("<127> Mar 16 02:54:50 fw1 %FWSM-3-302022: Built");
        assert_eq!(c.sourcetype, "cisco:fwsm");
        let c = classify_line("<127> Mar 16 02:54:50 lb1 %ACE-3-251010: Health probe failed");
        assert_eq!(c.sourcetype, "cisco:ace");
        assert_eq!(c.index, "netops");
        let c = classify_line("<127> Mar 16 02:54:50 c1 %CIMC-6-LOG_CAPACITY: low");
        assert_eq!(c.sourcetype, "cisco:cimc");
        assert_eq!(c.index, "infraops");
        let c = classify_line("<127> Mar 16 02:54:50 c1 %UCSM-6-AUDIT: [session]");
        assert_eq!(c.sourcetype, "cisco:ucs");
        let c = classify_line("<127> Mar 16 02:54:50 c1 %CCM_RTMT-RTMT-2-ALERT: x");
        assert_eq!(c.sourcetype, "cisco:ucm");
        assert_eq!(c.index, "main");
        let c = classify_line("<127> Mar 16 02:54:50 r1 %LICENSE-PLAT-4-EXPIRED: x");
        assert_eq!(c.sourcetype, "cisco:xr");
        let c =
            classify_line("<111> Mar 20 11:06:02 n9k-leaf-11 %MODULE-5-MOD_OK: Module 1 is online");
        assert_eq!(c.sourcetype, "cisco:ios");
        assert_eq!(c.product, "ios");
        // A named lower-case PROGRAM is not Cisco's.
        let c = classify_line("<111> Mar 20 11:06:02 h1 sshd: %ASA-3-1: x");
        assert_eq!(c.sourcetype, "nix:syslog");
    }

    #[test]
    fn viptela_host_comes_from_the_identifier() {
        let c = classify_line(
            "<189>Mar 22 22:47:28 SYSMGR[919]: %Viptela-vedge-br-12-sysmgrd-6-INFO-1400002: Notification: x",
        );
        assert_eq!(c.sourcetype, "cisco:viptela");
        assert_eq!(
            c.host,
            crate::classify::HostEdit::Set(crate::classify::Value::Bytes(b"vedge-br-12"))
        );
        assert_eq!(c.edit.program, Some(None));
    }
}
