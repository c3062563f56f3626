//! Nutanix (SC4S `addons/nutanix/app-syslog-nutanix.conf`): a MESSAGE naming a controller VM
//! (`ntnx-` and `-cvm`, any case); PROGRAM containing `audi` (any case) is the audit log.
//! Found by `-cvm` / `-CVM` in the token scan: a mixed-case `-Cvm` is not recognised.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "nutanix",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-nutanix_syslog_new",
        topic: Topic::Syslog,
        order: "nutanix/app-syslog-nutanix.conf",
        // `-cvm` as Nutanix writes it, lower case (audit `node=`) or upper (CVM names); SC4S
        // ignores case, and a mixed-case `-Cvm` is not seen here. Two tokens in the token
        // scan every message gets anyway cost next to nothing; a case-blind search of every
        // message cost a nix:syslog line 260 instructions, shorter tokens (`nx-`) slowed the
        // scan itself, and `ntnx-` made loggen's PADD filler a scan candidate.
        when: When::Token(&["-cvm", "-CVM"]),
        parse: nutanix,
    }],
};

static KEYS: &[Key] = &[
    Key::new("nutanix", "syslog", "nutanix:syslog", "infraops"),
    Key::update("nutanix:syslog:audit", "").class("audit"),
];

/// `needle` (lowercase ASCII) occurs in `hay`, any case. Found by its `x`/`X` (`ntnx-`) or
/// `c`/`C` (`-cvm`) anchor: letters rare in text, so the memchr scan stops seldom.
fn contains_nocase(hay: &[u8], needle: &[u8], anchor: usize) -> bool {
    let a = needle[anchor];
    memchr::memchr2_iter(a, a.to_ascii_uppercase(), hay).any(|i| {
        i >= anchor
            && hay
                .get(i - anchor..i - anchor + needle.len())
                .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

fn nutanix<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    if !(contains_nocase(m, b"ntnx-", 3) && contains_nocase(m, b"-cvm", 1)) {
        return false;
    }
    out.key(&KEYS[0]);
    if input
        .program
        .is_some_and(|p| p.windows(4).any(|w| w.eq_ignore_ascii_case(b"audi")))
    {
        out.key(&KEYS[1]);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::contains_nocase;
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn controller_vm() {
        let e = event_of(
            "<134>2024-05-24T04:33:19 NTNX-clus01-n3-CVM audispd[00000]: node=ntnx-clus01-n3-cvm type=SYSCALL msg=audit(1651176975.464:2828209): arch=c000003e syscall=2 success=yes exit=6 a0=7f2955ac932e",
        );
        assert_eq!(e["sourcetype"], "nutanix:syslog:audit");
        assert_eq!(e["index"], "infraops");
        assert_eq!(e["host"], "ntnx-clus01-n3-cvm");
        assert_eq!(e["fields"]["sc4s_vendor"], "nutanix");
        assert_eq!(e["fields"]["sc4s_product"], "syslog");
        assert_eq!(e["fields"]["sc4s_class"], "audit");
        assert_eq!(e["time"], "1716525199.000");
        let c = classify_line("<134>May 24 04:33:19 h1 genesis[12]: NTNX-abc-CVM started");
        assert_eq!(c.sourcetype, "nutanix:syslog");
        let c = classify_line("<134>May 24 04:33:19 h1 kAUDITd: NtNx-abc-CVM login");
        assert_eq!(c.sourcetype, "nutanix:syslog:audit");
        // The known gap: a mixed-case `-cvm` is not looked at.
        let c = classify_line("<134>May 24 04:33:19 h1 genesis[12]: NTNX-abc-Cvm started");
        assert_eq!(c.sourcetype, "nix:syslog");
        // Only in the header (HOST), not in MESSAGE: not Nutanix.
        let c = classify_line("<134>May 24 04:33:19 NTNX-a-CVM sshd[1]: Accepted key");
        assert_eq!(c.sourcetype, "nix:syslog");
        let c = classify_line("<134>May 24 04:33:19 h1 genesis[12]: ntnx- only");
        assert_eq!(c.sourcetype, "nix:syslog");
    }

    #[test]
    fn case_insensitive_search() {
        assert!(contains_nocase(b"xx NTNX-a", b"ntnx-", 3));
        assert!(contains_nocase(b"ntnx-", b"ntnx-", 3));
        assert!(!contains_nocase(b"ntn-x", b"ntnx-", 3));
        assert!(!contains_nocase(b"x-", b"ntnx-", 3));
        assert!(contains_nocase(b"a-CvM", b"-cvm", 1));
        assert!(!contains_nocase(b"cvm", b"-cvm", 1));
    }
}
