//! Cisco (SC4S `addons/cisco/`), one file per kind of SC4S application:
//!
//! * [`almost`]: `app-almost-syslog-cisco_syslog`, the IOS / NX-OS / ASA header that is not
//!   syslog (`<PRI>seq: host: seq: *Mmm dd hh:mm:ss.mmm TZ: %FAC-S-MNEMONIC: text`), and
//!   `app-almost-syslog-cisco_ms` (a `facility.level` word after the stamp);
//! * [`syslog`]: `app-syslog-cisco_syslog` (a syslog header and a `%FAC-S-MNEMONIC`
//!   MESSAGE) and the `cisco_syslog` sub-topic both of them run: ASA, FTD, PIX, FWSM, ACE,
//!   CIMC, UCM, UCS Manager, Viptela, IOS-XR relabel by the tag's prefix;
//! * [`raw`]: FTD lines without a PRI;
//! * [`ise`]: ISE and ACS (`CISE_*` / `CSCOacs*` PROGRAMs, `serial count seq` segments);
//! * [`pgm`]: the PROGRAM-keyed products (Firepower `SFIMS`, TelePresence VCS `tvcs`,
//!   HyperFlex `hx-*`, Meeting Management `cmm-*`, DNA Center `DNAC`);
//! * [`netsource`]: the listener / `vendor_product_by_source` products (ESA, WSA, Meraki,
//!   MS, MM audit) and ESA's CEF.
//!
//! Every SLUICE_VENDORS family here is named `cisco` or `cisco_*`, so the selector `cisco`
//! picks them all.

pub(crate) mod almost;
pub(crate) mod ise;
pub(crate) mod netsource;
pub(crate) mod pgm;
pub(crate) mod raw;
pub(crate) mod syslog;

use crate::classify::registry::{Key, Vendor};

/// The IOS family: the almost-syslog and syslog `%FAC-S-MNEMONIC` applications, the
/// `cisco_syslog` sub-topic they run, and the PRI-less FTD repairs that feed them.
pub static VENDOR: Vendor = Vendor {
    name: "cisco",
    keys: KEYS,
    apps: &[
        almost::CISCO_MS,
        almost::CISCO_SYSLOG,
        syslog::CISCO_SYSLOG,
        raw::FTD_NOPRI_BSD,
        raw::FTD_NOPRI_ISO,
        syslog::ACE_APP,
        syslog::ASA_APP,
        syslog::CIMC_APP,
        syslog::FTD_APP,
        syslog::FWSM_APP,
        syslog::PIX_APP,
        syslog::UCM_APP,
        syslog::UCS_APP,
        syslog::VIPTELA_APP,
        syslog::XR_APP,
    ],
};

pub(crate) const IOS: usize = 0;
pub(crate) const ASA: usize = 1;
pub(crate) const FTD: usize = 2;
pub(crate) const PIX: usize = 3;
pub(crate) const FWSM: usize = 4;
pub(crate) const XR: usize = 5;
pub(crate) const ACE: usize = 6;
pub(crate) const CIMC: usize = 7;
pub(crate) const UCM: usize = 8;
pub(crate) const UCS: usize = 9;
pub(crate) const VIPTELA: usize = 10;

pub(crate) static KEYS: &[Key] = &[
    Key::new("cisco", "ios", "cisco:ios", "netops"),
    Key::new("cisco", "asa", "cisco:asa", "netfw"),
    Key::new("cisco", "ftd", "cisco:ftd", "netfw"),
    Key::new("cisco", "pix", "cisco:pix", "netfw"),
    Key::new("cisco", "fwsm", "cisco:fwsm", "netfw"),
    Key::new("cisco", "xr", "cisco:xr", "netops"),
    Key::new("cisco", "ace", "cisco:ace", "netops"),
    Key::new("cisco", "cimc", "cisco:cimc", "infraops"),
    // No index in SC4S's call: r_set_splunk_dest_default's default, `main`.
    Key::new("cisco", "ucm", "cisco:ucm", "main"),
    Key::new("cisco", "ucs", "cisco:ucs", "infraops"),
    Key::new("cisco", "viptela", "cisco:viptela", "netops"),
];

/// The parts of SC4S's
/// `^(%(?<identifier>.+)-(?<severity>[0-7])-(?<mnemonic>[^\: ]+))(?<seperator> ?[: ]) *(?<message>.*)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag<'a> {
    pub identifier: &'a [u8],
    pub severity: &'a [u8],
    pub mnemonic: &'a [u8],
    pub separator: &'a [u8],
    pub message: &'a [u8],
}

/// Reads the tag at the start of `m` (which must start with `%`). `identifier` is greedy
/// and cannot cross a line end (`.`), so the tag is split at the last `-<0-7>-` on the first
/// line that is followed by a mnemonic (bytes other than `:` and space) and a separator.
pub(crate) fn parse_tag(m: &[u8]) -> Option<Tag<'_>> {
    let rest = m.strip_prefix(b"%")?;
    let line = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
    // `rest[i]` is the `-` after the severity; the identifier ends at `i - 2`.
    let mut end = line;
    while let Some(i) = memchr::memrchr(b'-', &rest[..end]) {
        end = i;
        if i < 3 || rest[i - 2] != b'-' || !(b'0'..=b'7').contains(&rest[i - 1]) {
            continue;
        }
        let after = &rest[i + 1..];
        let mlen = after
            .iter()
            .position(|&b| b == b':' || b == b' ')
            .unwrap_or(after.len());
        if mlen == 0 || mlen == after.len() {
            continue;
        }
        // ` ?[: ]`: a space then `:` or a space, else the one byte.
        let tail = &after[mlen..];
        let sep_len = if tail[0] == b' ' && matches!(tail.get(1), Some(b':' | b' ')) {
            2
        } else {
            1
        };
        let body = &tail[sep_len..];
        let spaces = body.iter().take_while(|&&b| b == b' ').count();
        let body = &body[spaces..];
        let msg_end = memchr::memchr(b'\n', body).unwrap_or(body.len());
        return Some(Tag {
            identifier: &rest[..i - 2],
            severity: &rest[i - 1..i],
            mnemonic: &after[..mlen],
            separator: &tail[..sep_len],
            message: &body[..msg_end],
        });
    }
    None
}

/// Runs the `cisco_syslog` sub-topic with `tagged` (the MESSAGE from `%` on) as its body, so
/// the applications' tag-prefix prefilters see it.
pub(crate) fn run_cisco_syslog<'m>(
    input: &crate::classify::registry::Input<'m, '_>,
    tagged: &'m [u8],
    out: &mut crate::classify::registry::Out<'m>,
) -> bool {
    let sub = crate::classify::registry::Input {
        body: tagged,
        ..*input
    };
    sub.topic("cisco_syslog", out)
}

/// Hands a parsed tag to the `cisco_syslog` sub-topic (SC4S's `.values.*`).
pub(crate) fn set_tag_values<'m>(out: &mut crate::classify::registry::Out<'m>, tag: &Tag<'m>) {
    out.nv.set("identifier", tag.identifier);
    out.nv.set("severity", tag.severity);
    out.nv.set("mnemonic", tag.mnemonic);
    out.nv.set("seperator", tag.separator);
    out.nv.set("message", tag.message);
}

#[cfg(test)]
mod tests {
    use super::{Tag, parse_tag};
    use crate::classify::testutil::classify_line_bytes;

    /// Every prefix and every single-byte substitution with a delimiter of the Cisco shapes
    /// classifies without panicking (a stand-in for fuzzing that runs in `cargo test`).
    #[test]
    fn prefixes_and_mutations_do_not_panic() {
        const SAMPLES: &[&str] = &[
            "<166>22191: rtr-4: 022546: .Mar 19 07:58:07.477 CDT: %SYS-5-CONFIG_I: x",
            "<189>8103: Mar 22 2024 05:21:53 PM.071 UTC : %UC_AUDITLOG-5-Ev: %[ a =b]",
            "<166>RP/0/RP0/CPU3:Mar 20 18:41:51: config[67105]: %MGBL-SYS-5-CONFIG_I : x",
            "<189>Mar 22 22:47:28 SYSMGR[919]: %Viptela-v-1-sysmgrd-6-INFO-1400002: N: x",
            "<166>2024-03-16T07:15:18+01:00 ftd-1 : %FTD-6-430003: DeviceUUID: x",
            "<165> Mar 21 13:08:50 ise-1 CISE_RADIUS_Accounting 6028545 1 0 2024-03-21 13:08:50.865 +00:00 x",
            "<165>Mar 21 15:19:04 h Mar 21 15:19:04 ise-1 CISE_S 1313 1 4 x",
            "Mar 16 2024 07:15:18 ftd-1 : %FTD-6-430003: x",
            "2024-03-16T07:15:18Z ftd-2 : %FTD-6-302013: x",
            "<134>Mar 15 11:32:40 local0.info sw-9 authp: x",
        ];
        for s in SAMPLES {
            let b = s.as_bytes();
            for end in 0..=b.len() {
                classify_line_bytes(&b[..end]);
            }
            for i in 0..b.len() {
                for sub in [b' ', b':', b'%', b'-', b'*', b'.', b'[', b'7', 0xff] {
                    let mut m = b.to_vec();
                    m[i] = sub;
                    classify_line_bytes(&m);
                }
            }
        }
    }

    #[test]
    fn tag() {
        assert_eq!(
            parse_tag(b"%ASA-3-003164: TCP access"),
            Some(Tag {
                identifier: b"ASA",
                severity: b"3",
                mnemonic: b"003164",
                separator: b":",
                message: b"TCP access",
            })
        );
        let t = parse_tag(b"%SYSMGR-STANDBY-3-SHUTDOWN_START: x").unwrap();
        assert_eq!(t.identifier, b"SYSMGR-STANDBY");
        assert_eq!(t.mnemonic, b"SHUTDOWN_START");
        let t = parse_tag(b"%MGBL-CONFIGCLI-3-COMMIT_FAILURE : c").unwrap();
        assert_eq!(t.identifier, b"MGBL-CONFIGCLI");
        assert_eq!(t.separator, b" :");
        assert_eq!(t.message, b"c");
        let t = parse_tag(b"%ACLLOG-5-ACLLOG_PKTLOG unable to locate").unwrap();
        assert_eq!(t.separator, b" ");
        assert_eq!(t.message, b"unable to locate");
        // Greedy identifier: the last `-S-` followed by a mnemonic wins.
        let t = parse_tag(b"%A-1-B: x-2-y z").unwrap();
        assert_eq!(t.identifier, b"A-1-B: x");
        assert_eq!(t.mnemonic, b"y");
        // ... but not across a line end.
        let t = parse_tag(b"%A-1-B: x\nq-2-y z").unwrap();
        assert_eq!(t.identifier, b"A");
        assert_eq!(parse_tag(b"%ASA-9-1: x"), None);
        assert_eq!(parse_tag(b"ASA-3-1: x"), None);
        assert_eq!(parse_tag(b"%ASA-3-1"), None);
        assert_eq!(parse_tag(b"%-3-1: x"), None);
        assert_eq!(parse_tag(b"%"), None);
    }
}
