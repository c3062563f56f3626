//! A10 Networks vThunder (SC4S `addons/a10networks/app-cef-a10_vthunder.conf`,
//! `app-syslog-a10.conf`): the WAF's CEF (device vendor `A10`, product `vThunder`) and the
//! appliance's own daemons, known by their PROGRAM (`a10logd`, `a10lb`, ...).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "a10networks",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-a10_vthunder",
            topic: Topic::Sub("cef"),
            order: "a10networks/app-cef-a10_vthunder.conf",
            when: When::Check(vthunder_cef_check),
            parse: vthunder_cef,
        },
        App {
            name: "app-syslog-a10",
            topic: Topic::Pgm,
            order: "a10networks/app-syslog-a10.conf",
            when: When::ProgramPrefix(PROGRAMS),
            parse: syslog,
        },
    ],
};

/// SC4S's PROGRAM prefixes (`program('a10logd' type(string) flags(prefix)) or ...`).
const PROGRAMS: &[&str] = &[
    "a10logd",
    "a10timer",
    "a10stat",
    "a10switch",
    "a10hm",
    "a10rt",
    "a10rip",
    "a10ospf",
    "a10snmpd",
    "a10wa",
    "a10gmpd",
    "a10snpm_trapd",
    "a10lb",
];

const CEF: usize = 0;
const SYSLOG: usize = 1;

static KEYS: &[Key] = &[
    // r_set_splunk_dest_default in the cef topic: vendor/product replace the CEF header's,
    // the class (the header's event class) stays.
    Key::new(
        "a10networks",
        "vThunder",
        "a10networks:vThunder:cef",
        "netwaf",
    )
    .source("a10networks:vThunder"),
    Key::new(
        "a10networks",
        "vThunder",
        "a10networks:vThunder:syslog",
        "netops",
    )
    .source("a10networks:vThunder"),
];

/// `match("A10" value(".metadata.cef.device_vendor")) and match("vThunder" ...product)`:
/// unanchored, case-sensitive.
fn vthunder_cef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"A10") && out.nv.contains(cef::NV_PRODUCT, b"vThunder")
}

fn vthunder_cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !vthunder_cef_check(input, out) {
        return false;
    }
    out.key(&KEYS[CEF]);
    true
}

fn syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program else {
        return false;
    };
    if !PROGRAMS.iter().any(|n| p.starts_with(n.as_bytes())) {
        return false;
    }
    out.key(&KEYS[SYSLOG]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;
    use crate::classify::{Template, TimeEdit};

    /// SC4S's `test_a10.py::test_a10_vthunder`: no host in the header; the time from `rt=`.
    #[test]
    fn vthunder_cef() {
        let c = classify_line(
            "<6> CEF:0|A10|vThunder|4.1.4-GR1-P12|WAF|session-id|2|rt=May 06 2024 08:11:05 src=1.1.1.1 spt=34860 dst=1.1.1.1 dpt=80 dhost=test.host.local cs1=uiext_sec_waf cs2=1 act=learn cs3=learn app=HTTP requestMethod=GET cn1=0 request=/sales/ msg=New session created: Id\\=1",
        );
        assert_eq!(c.sourcetype, "a10networks:vThunder:cef");
        assert_eq!(c.index, "netwaf");
        assert_eq!(c.source, "a10networks:vThunder");
        assert_eq!(c.vendor, "a10networks");
        assert_eq!(c.product, "vThunder");
        assert_eq!(c.class.unwrap(), "WAF");
        assert_eq!(c.template, Template::HdrMsg);
        assert!(matches!(c.time, TimeEdit::Stamp(t) if t.unix_secs == 1_714_983_065));
        // Another CEF product of A10, or another vendor's vThunder: generic CEF.
        let c = classify_line("<6> CEF:0|A10|Thunder|4|WAF|x|2|src=1.1.1.1");
        assert_eq!(c.sourcetype, "cef");
        // A header too short for CEF is not taken by the cef topic at all.
        let c = classify_line("<6> CEF:0|A10|vThunder|4");
        assert_ne!(c.sourcetype, "a10networks:vThunder:cef");
    }

    /// SC4S's `test_a10.py::test_a10_vthunder_syslog`, and each PROGRAM prefix.
    #[test]
    fn daemons() {
        let c = classify_line(
            "<6> May 06 09:16:12 a10-vth-01 a10logd: [audit log]<6> Partition: shared,  [admin] web: [222:1.1.1.1:22222] RESP HTTP status 200 OK",
        );
        assert_eq!(c.sourcetype, "a10networks:vThunder:syslog");
        assert_eq!(c.index, "netops");
        assert_eq!(c.source, "a10networks:vThunder");
        assert_eq!(c.vendor, "a10networks");
        assert_eq!(c.product, "vThunder");
        assert_eq!(c.app, "app-syslog-a10");
        for p in super::PROGRAMS {
            let c = classify_line(&format!("<6>May 06 09:16:12 a10 {p}x[1]: text"));
            assert_eq!(c.sourcetype, "a10networks:vThunder:syslog", "{p}");
        }
        let c = classify_line("<6>May 06 09:16:12 a10 a10: text");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
