use crate::classify::testutil::classify_line;

#[test]
fn vsphere_programs() {
    let c = classify_line("<144>1 2024-04-13T03:47:10.825Z esxi-prod-07 Vpxa 4242 - - Event [1]");
    assert_eq!(c.sourcetype.to_string_lossy(), "vmware:esxlog:vpxa");
    assert_eq!(c.source.to_string_lossy(), "vmware:esxlog:vpxa");
    assert_eq!(c.index.to_string_lossy(), "infraops");
    assert_eq!(c.product.to_string_lossy(), "vsphere");
    let c = classify_line("<144> Apr 13 07:02:31 esx dfwpktlogs: 4242 INET match PASS");
    assert_eq!(c.sourcetype.to_string_lossy(), "vmware:nsxlog:dfwpktlogs");
    assert_eq!(c.index.to_string_lossy(), "netfw");
    let c = classify_line("<144>1 2024-04-13T08:07:38.856Z vcsa-01 vmon 2275 - - x");
    assert_eq!(c.sourcetype.to_string_lossy(), "vmware:vclog:vmon");
    let c = classify_line("<144> Apr 13 07:02:31 esx auto-backup.sh[1]: saved");
    assert_eq!(c.sourcetype.to_string_lossy(), "vmware:esxlog:auto-backup");
    assert_eq!(c.source.to_string_lossy(), "vmware:esxlog:auto-backup.sh");
    let c = classify_line("<144> Apr 13 07:02:31 esx other[1]: x [Originator@6876 sub=a] y");
    assert_eq!(c.sourcetype.to_string_lossy(), "vmware:esxlog:other");
}

/// The PROGRAM checks pass what the applications take and skip other PROGRAMs.
#[test]
fn program_checks() {
    use crate::classify::dispatch::check_verdict;
    const NIX: &str = "<38>2026-11-26T15:21:42 localhost sshd[1234]: seq: 0000000000, thread: 0000";
    for (line, app, st) in [
        (
            "<144>1 2024-04-13T03:47:10.825Z esxi-prod-07 Vpxa 4242 - - Event [1]",
            "app-syslog-vmware_vsphere-pgm",
            "vmware:esxlog:vpxa",
        ),
        (
            "<144> Apr 13 07:02:31 esx dfwpktlogs: 4242 INET match PASS",
            "app-syslog-vmware_vsphere-pgm",
            "vmware:nsxlog:dfwpktlogs",
        ),
        (
            "<144>1 2024-04-13T08:07:38.856Z vcsa-01 vmon 2275 - - x",
            "app-syslog-vmware_vsphere-pgm",
            "vmware:vclog:vmon",
        ),
        (
            "<144> Apr 13 07:02:31 esx Fdm: x",
            "app-syslog-vmware_vsphere-pgm",
            "vmware:esxlog:fdm",
        ),
        (
            "<14> Apr 13 07:02:31 aw airwatch: x",
            "app-syslog-vmware_airwatch",
            "vmware:airwatch",
        ),
        (
            "<144>1 2024-04-13T09:12:45.864Z h View - 73 - x",
            "app-syslog-vmware_horizon",
            "vmware:horizon",
        ),
    ] {
        assert_eq!(check_verdict(line, app), Some(true), "{line}");
        assert_eq!(
            classify_line(line).sourcetype.to_string_lossy(),
            st,
            "{line}"
        );
    }
    for app in [
        "app-syslog-vmware_vsphere-pgm",
        "app-syslog-vmware_airwatch",
        "app-syslog-vmware_horizon",
    ] {
        assert_eq!(check_verdict(NIX, app), Some(false), "{app}");
    }
    assert_eq!(classify_line(NIX).sourcetype, "nix:syslog");
}

/// The first-letter table accepts exactly what the five SC4S lists accept.
#[test]
fn vsphere_program_table() {
    use super::*;
    let slow = |p: &[u8]| is_vc(p) || is_esx(p) || is_autobackup(p) || is_nsx(p) || is_vsan(p);
    let mut names: Vec<Vec<u8>> = Vec::new();
    for list in [
        ESX_PREFIXES,
        ESX_EXACT,
        VC_PREFIXES,
        AUTOBACKUP_PREFIX,
        NSX_PREFIX,
        NSX_EXACT,
        VSAN_PREFIXES,
    ] {
        for n in list {
            names.push(n.as_bytes().to_vec());
            names.push(n.to_ascii_uppercase().into_bytes());
            names.push(format!("{n}x").into_bytes());
            names.push(n.as_bytes()[..n.len() - 1].to_vec());
        }
    }
    names.extend(
        [
            &b""[..],
            b"prg00000",
            b"sshd",
            b"v",
            b"V",
            b"vm",
            b"sT",
            b"fd",
            b"FDM",
        ]
        .map(|n| n.to_vec()),
    );
    for p in &names {
        assert_eq!(
            is_vsphere_program(p),
            slow(p),
            "{}",
            String::from_utf8_lossy(p)
        );
    }
}

mod scan {
    use crate::classify::caps::CapturesExt;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn bad5424_scan_agrees_with_the_regex(
            parts in proptest::collection::vec(prop_oneof![
                Just("<14>"), Just("<1"), Just("2024-04-13T15:43:27.912Z"), Just("2024-04-13T15"),
                Just(" "), Just("esx-1"), Just("Vpxa:"), Just("verbose"), Just("vpxa"),
                Just("[4242]"), Just("["), Just("]"), Just("4"), Just("[Originator@6876 sub=a]"),
                Just("@6876"), Just("x"), Just("é"), Just("\u{0663}"), Just("\n"), Just(":"),
            ], 0..16),
            canonical in any::<bool>(),
        ) {
            let line = if canonical {
                format!(
                    "<14>2024-04-13T15:43:27.912Z esx-1 Vpxa: verbose vpxa[4242] [Originator@6876 sub=a] {}",
                    parts.concat()
                )
            } else {
                parts.concat()
            };
            let raw = line.as_bytes();
            if let Ok(got) = super::super::bad5424_scan(raw) {
                let want = super::super::BAD5424.caps(raw).map(|c| {
                    let sd = c.get(4).unwrap().range().start;
                    [c.get(1).unwrap().range(), c.get(2).unwrap().range(), c.get(3).unwrap().range(), sd..sd]
                });
                prop_assert_eq!(got, want, "{:?}", line);
            }
        }
    }
}

/// The rest of a bad-5424 line is what SC4S's `(?s).*` group takes, invalid UTF-8 and
/// line breaks included.
#[test]
fn bad5424_rest_is_the_sc4s_group() {
    use regex::bytes::Regex;
    let sc4s = Regex::new(
        r"(?s)^<\d+>(\d\d\d\d-\d\d-\d\dT\d\d[^ ]+) [^ ]+ \w+: \w+ ([^\[]+)\[(\d+)\] (\[[a-zA-Z]+@6876[^\]]+\] *.*)",
    )
    .unwrap();
    let head =
        b"<14>2024-04-13T15:43:27.912Z esx-1 Vpxa: verbose vpxa[4242] [Originator@6876 sub=a]  ";
    for tail in [
        &b"text"[..],
        b"",
        b"line\nbreak",
        b"bad \xff byte",
        b"caf\xc3\xa9 \xe2\x82",
    ] {
        let raw = [&head[..], tail].concat();
        let want = sc4s.captures(&raw).unwrap();
        let (stamp, program, pid, rest) = super::bad5424_split(&raw).unwrap();
        assert_eq!(stamp, &want[1]);
        assert_eq!(program, &want[2]);
        assert_eq!(pid, &want[3]);
        assert_eq!(rest, &want[4], "{:?}", String::from_utf8_lossy(tail));
    }
    assert!(super::bad5424_split(b"<14>2024-04-13T15:43:27Z esx-1 Vpxa: x").is_none());
}

#[test]
fn horizon_and_cb() {
    let c = classify_line(
        "<144>1 2024-04-13T09:12:45.864Z h View - 73 [View@6876 Severity=\"AUDIT_SUCCESS\"]",
    );
    assert_eq!(c.sourcetype.to_string_lossy(), "vmware:horizon");
    let c = classify_line(
        "<134>1 2024-04-13T21:09:02Z cb - - - - Carbon Black App Control event:  text=\"x\" type=\"y\"",
    );
    assert_eq!(c.sourcetype.to_string_lossy(), "vmware:cb:protect");
    assert_eq!(c.index.to_string_lossy(), "epintel");
    let c = classify_line("<134> Apr 13 07:02:31 h unrelated[1]: Carbon Black");
    assert_ne!(c.sourcetype.to_string_lossy(), "vmware:cb:protect");
}

#[test]
fn bad5424() {
    let c = classify_line(
        "<144>2024-04-13T15:43:27.912Z esx-08 Vpxa: verbose vpxa[4242] [Originator@6876 sub=V] Fetching",
    );
    assert_eq!(c.sourcetype, "vmware:esxlog:vpxa");
    assert_eq!(c.app, "app-syslog-vmware_vsphere-pgm");
}

#[test]
fn bad5424_with_an_invalid_stamp_is_kept_only_when_asked() {
    use crate::classify::testutil::{classifier_with, classify_line_with};
    use crate::classify::{LenientDrops, VendorOptions};
    let line = "<144>2024-04-13T99:43:27.912Z esx-08 Vpxa: verbose vpxa[4242] [Originator@6876 sub=V] Fetching";
    let c = classify_line(line);
    assert_ne!(c.app, "app-syslog-vmware_vsphere-pgm", "{c:?}");
    let lenient = classifier_with(VendorOptions {
        lenient: LenientDrops {
            vmware_vsphere: true,
            ..LenientDrops::default()
        },
        ..VendorOptions::default()
    });
    let c = classify_line_with(lenient, line);
    assert_eq!(c.sourcetype, "vmware:esxlog:vpxa");
    assert_eq!(c.time, crate::classify::registry::TimeEdit::Recv);
}

#[test]
fn almost_syslog() {
    let c = classify_line("<14> Apr 13 07:02:31 aw-01 AirWatch device enrolled");
    assert_eq!(c.sourcetype, "vmware:airwatch");
    assert_eq!(c.index, "epintel");
    let c = classify_line("<14>a1b2-c3d4-e5f6-0718-293Z esx-01 Hostd[12]: [Originator@6876 x] y");
    assert_eq!(c.sourcetype, "vmware:esxlog:hostd");
    assert_eq!(c.time, crate::classify::registry::TimeEdit::Recv);
}

/// The GUID-date check's header gate holds wherever the application can take the message
/// (the parser's `^<\d+> ?[a-f0-9]`).
#[test]
fn guid_date_needs_a_hex_digit() {
    crate::classify::testutil::assert_needs_shape(
        crate::classify::registry::Shape::HEX,
        |raw| {
            static PRI: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
                regex::bytes::Regex::new(r"^<\d+> ?[a-f0-9]").expect("static regex")
            });
            super::guid_stamp_follows_pri(raw) && PRI.is_match(raw)
        },
        &[
            "<14>a1b2-c3d4-e5f6-a7b8-9c0Z host x",
            "<14> 0000-1111-2222-3333-444Z h y",
        ],
    );
}
