use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::message::{Message, Priority};

const NOW: i64 = 1_782_993_600;

fn src(listener_id: &str) -> SourceMeta<'_> {
    SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id,
    }
}

fn bsd<'a>(host: Option<&'a [u8]>, program: Option<&'a [u8]>, message: &'a [u8]) -> Message<'a> {
    Message {
        raw: b"<38>",
        format: Format::Rfc3164,
        priority: Priority::new(38),
        hostname: host,
        appname: program,
        message: Some(message),
        ..Message::unparsed(b"", None)
    }
}

fn ietf<'a>(program: Option<&'a [u8]>) -> Message<'a> {
    Message {
        raw: b"<38>1 ",
        format: Format::Rfc5424,
        priority: Priority::new(38),
        appname: program,
        message: None,
        ..Message::unparsed(b"", None)
    }
}

fn run<'m, 't: 'm>(m: &Message<'m>, id: &str, t: &'t Classifier) -> Classification<'m, 't> {
    classify(m, &src(id), NOW, t, crate::classify::testutil::scratch())
}

#[test]
fn rfc3164_with_program_and_message_is_nix_syslog() {
    let t = Classifier::default();
    let m = bsd(Some(b"host1"), Some(b"/usr/sbin/sshd"), b"Accepted");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(
        (c.sourcetype, c.index),
        (Value::Static("nix:syslog"), Value::Static("osnix"))
    );
    assert_eq!(
        (c.vendor, c.product, c.class),
        (Value::Static("nix"), Value::Static("syslog"), None)
    );
    assert_eq!(c.source, "program:sshd");
    assert_eq!(c.template, Template::HdrMsg);
    assert_eq!(c.app, "app-fallback-nix_syslog");
    assert_eq!(c.rewrite, Rewrite::None);
}

#[test]
fn rfc5424_is_nix_syslog_even_without_program() {
    let t = Classifier::default();
    let c = run(&ietf(None), "DEFAULT", &t);
    assert_eq!(c.sourcetype, "nix:syslog");
    assert_eq!(c.source, "program:");
    assert_eq!(c.template, Template::Rfc5424Compact);
}

#[test]
fn fallback_cases() {
    let t = Classifier::default();
    for m in [
        bsd(Some(b"h"), Some(b"sshd"), b""),
        Message::unparsed(b"<999>junk", None),
        Message::unparsed(b"", None),
    ] {
        let c = run(&m, "DEFAULT", &t);
        assert_eq!(
            (c.sourcetype, c.index),
            (Value::Static("sc4s:fallback"), Value::Static("main")),
            "{m:?}"
        );
        assert_eq!(c.vendor, "splunk");
        assert_eq!(c.product, "sc4s");
        assert_eq!(c.class, Some(Value::Static("fallback")));
        assert_eq!(c.source, "sc4s");
        assert_eq!(c.template, Template::FallbackKv);
        assert_eq!(c.app, "app-fallbackz-lastchance");
    }
}

#[test]
fn syslog_ng_takes_the_first_word_as_program() {
    let t = Classifier::default();
    // No TAG for sluice's parser, but syslog-ng's PROGRAM is "test" (SC4S test_defaultroute).
    let m = bsd(Some(b"h"), None, b"test something else");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.sourcetype, "nix:syslog");
    assert_eq!(c.view.program, Some(&b"test"[..]));
    assert_eq!(c.view.message, Some(&b"something else"[..]));
    // "test,test" is no program name: folded back, fallback (SC4S test_fallback).
    let m = bsd(Some(b"h"), None, b"test,test thist,thisdfsdf");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.sourcetype, "sc4s:fallback");
    assert_eq!(
        c.rewrite,
        Rewrite::InvalidProgram(ProgramRule::BsdConvention)
    );
    // A single word is a PROGRAM with an empty MESSAGE: fallback.
    let c = run(&bsd(Some(b"h"), None, b"word"), "DEFAULT", &t);
    assert_eq!(c.sourcetype, "sc4s:fallback");
    let m = bsd(Some(b"h"), None, b"app[12] text");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(
        (c.view.program, c.view.pid),
        (Some(&b"app"[..]), Some(&b"12"[..]))
    );
}

#[test]
fn pri_less_lines_are_raw_unless_bsd_or_iso() {
    let t = Classifier::default();
    let opts = crate::parse::ParseOptions {
        now_unix_secs: NOW,
        zone: &crate::time::Zone::utc(),
    };
    let raw = b"just some text: with a colon";
    let m = crate::parse::parse(raw, &opts);
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.sourcetype, "sc4s:fallback");
    assert_eq!(c.format, Format::Unparsed);
    assert_eq!(c.host, HostEdit::SourceIp);
    assert_eq!(c.time, TimeEdit::Recv);
    assert_eq!(c.view.message, Some(&raw[..]));

    let m = crate::parse::parse(b"Mar 16 02:54:50 web-01 sshd[7]: Accepted", &opts);
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.sourcetype, "nix:syslog");
    assert_eq!(c.format, Format::Rfc3164);

    let m = crate::parse::parse(b"2024-03-16T06:10:11Z rest of it", &opts);
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.sourcetype, "sc4s:fallback");
    assert_eq!(c.app, "app-fallbackz-lastchance");
    assert_eq!(c.time_micros(&m, 0), 1_710_569_411_000_000);
    assert_eq!(c.edit.message, Some(Value::Bytes(b"rest of it")));
}

#[test]
fn invalid_host_is_rewritten_and_falls_back() {
    let t = Classifier::default();
    for host in [&b"bad:host"[..], b"%bzorp", b"fe80::1", b"h\xc3\xa9"] {
        let m = bsd(Some(host), Some(b"sshd"), b"x");
        let c = run(&m, "DEFAULT", &t);
        assert_eq!(c.rewrite, Rewrite::InvalidHost, "{host:?}");
        assert_eq!(c.sourcetype, "sc4s:fallback");
    }
    for host in [&b"good-host_1.example"[..], b"slot1/host:x", b"10.0.0.1"] {
        let m = bsd(Some(host), Some(b"sshd"), b"x");
        assert_eq!(run(&m, "DEFAULT", &t).rewrite, Rewrite::None, "{host:?}");
    }
    // RFC 5424 hostnames are not checked.
    let mut m = ietf(Some(b"app"));
    m.hostname = Some(b"bad:host");
    assert_eq!(run(&m, "DEFAULT", &t).rewrite, Rewrite::None);
}

#[test]
fn invalid_program_falls_back() {
    let t = Classifier::default();
    let m = bsd(Some(b"h"), Some(b"12345678901"), b"Built");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.rewrite, Rewrite::InvalidProgram(ProgramRule::Epoch));
    assert_eq!(c.template, Template::FallbackKv);
}

#[test]
fn csv_overrides_are_resolved_with_class_row_winning() {
    let csv = "\
# comment
NIX_SYSLOG,index,unix
nix_syslog,sourcetype,\"linux:syslog\"
splunk_sc4s,index,first
splunk_sc4s_fallback,index,  second
splunk_sc4s_fallback,sc4s_template,t_hdr_msg
cisco_asa,index,fw_prod
cisco_asa_nix_syslog,source,\"asa \"\"src\"\"\"
local_example,host,ignored
";
    let mut t = Classifier::from_metadata_csv("splunk_metadata.csv", csv).unwrap();
    assert_eq!(t.warnings().len(), 1);
    assert_eq!(t.warnings()[0].line, 9);
    let m = bsd(Some(b"h"), Some(b"sshd"), b"x");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(
        (c.index, c.sourcetype),
        (Value::Static("unix"), Value::Static("linux:syslog"))
    );
    let f = run(&Message::unparsed(b"x", None), "DEFAULT", &t);
    assert_eq!(f.index, "second");
    assert_eq!(f.template, Template::HdrMsg);

    assert!(t.add_listener("CISCO_ASA"));
    let c = run(&m, "CISCO_ASA", &t);
    assert!(c.vendor == "cisco" && c.product == "asa", "{c:?}");
    assert_eq!(c.class, Some(Value::Static("nix_syslog")));
    assert_eq!(
        (c.index, c.sourcetype),
        (Value::Static("fw_prod"), Value::Static("nix:syslog"))
    );
    assert_eq!(c.source, "asa \"src\"");
    assert_eq!(c.app, "app-fallback-netsource");
    // Not qualifying for netsource: lastchance.
    let c = run(&bsd(Some(b"h"), Some(b"sshd"), b""), "CISCO_ASA", &t);
    assert_eq!(c.vendor, "splunk");
}

#[test]
fn set_source_as_sc4s_loses_to_csv_source() {
    let mut t = Classifier::from_metadata_csv("m.csv", "nix_syslog,source,custom\n").unwrap();
    t.add_listener("JUNIPER_NETSCREEN");
    t.set_source_as_sc4s(true);
    let m = bsd(Some(b"h"), Some(b"sshd"), b"x");
    assert_eq!(run(&m, "DEFAULT", &t).source, "custom");
    assert_eq!(run(&m, "JUNIPER_NETSCREEN", &t).source, "sc4s");
    t.set_source_as_sc4s(false);
    assert_eq!(run(&m, "JUNIPER_NETSCREEN", &t).source, "program:sshd");
}

#[test]
fn listener_ids_without_vendor_behave_like_default() {
    let mut t = Classifier::default();
    assert!(!t.add_listener("DEFAULT"));
    assert!(!t.add_listener("SINGLE"));
    assert!(!t.add_listener("A_B_C_D"));
    assert!(t.add_listener("A_B_C"));
    let m = bsd(Some(b"h"), Some(b"sshd"), b"x");
    assert_eq!(run(&m, "SINGLE", &t).vendor, "nix");
    assert_eq!(run(&m, "A_B_C", &t).vendor, "a");
    // Unregistered ids fall back to the default metadata.
    assert_eq!(run(&m, "PAN_PANOS", &t).vendor, "nix");
}

#[test]
fn context_files_apply() {
    let files = context::ContextFiles {
        host_csv: Some(("host.csv".into(), "192.0.2.10,HOST,named-by-csv\n".into())),
        vps_conf: Some((
            "vps.conf".into(),
            "filter f_ny { host(\"tzfny-*\" type(glob)) };\nfilter f_recv { host(\"recv-*\" type(glob)) };\nfilter f_vp { host(\"acme-*\" type(glob)) };".into(),
        )),
        vps_csv: Some((
            "vps.csv".into(),
            "f_ny,sc4s_time_zone,America/New_York\nf_recv,sc4s_use_recv_time,yes\nf_vp,sc4s_vendor,acme\nf_vp,sc4s_product,box\n".into(),
        )),
        compliance_conf: Some(("c.conf".into(), "filter f_pci { host(\"pci-*\" type(glob)) };".into())),
        compliance_csv: Some((
            "c.csv".into(),
            "f_pci,.splunk.index,pci\nf_pci,fields.compliance,pci\n".into(),
        )),
        ..Default::default()
    };
    let t = Classifier::new(files, &Settings::default()).unwrap();
    let stamp = crate::message::Timestamp {
        unix_secs: 1_710_569_411,
        micros: 0,
        offset_secs: 0,
    };
    let mut m = bsd(None, Some(b"sshd"), b"x");
    m.timestamp = Some(stamp);
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.host, HostEdit::Set(Value::Static("named-by-csv")));

    m.hostname = Some(b"tzfny-01");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.time_micros(&m, 0), (1_710_569_411 + 4 * 3600) * 1_000_000);

    m.hostname = Some(b"recv-01");
    assert_eq!(run(&m, "DEFAULT", &t).time, TimeEdit::Recv);

    m.hostname = Some(b"acme-01");
    let c = run(&m, "DEFAULT", &t);
    assert!(c.vendor == "acme" && c.product == "box", "{c:?}");
    assert_eq!(c.app, "app-fallback-netsource");

    m.hostname = Some(b"pci-01");
    let c = run(&m, "DEFAULT", &t);
    assert_eq!(c.index, "pci");
    assert_eq!(c.compliance.len(), 1);
}

#[test]
fn vendor_selection() {
    let known: &[&Vendor] = &[];
    assert!(
        VendorSelection::parse("all")
            .resolve(known)
            .unwrap()
            .is_empty()
    );
    let err = VendorSelection::parse("nope").resolve(known).unwrap_err();
    assert!(err.to_string().contains("unknown vendor \"nope\""), "{err}");
}

#[test]
fn sd_enterprise_detection() {
    assert!(has_enterprise_sd(b"[x@123 a=\"1\"]"));
    assert!(has_enterprise_sd(b"[meta a=\"1\"][junos@2636.1.1 a=\"b\"]"));
    assert!(
        has_enterprise_sd(b"[meta a=\"x@1\"]x"),
        "the SC4S regex does not look at quotes"
    );
    assert!(!has_enterprise_sd(b"[meta a=\"x@y\"]"));
    assert!(!has_enterprise_sd(b"[@1]"));
}

#[test]
fn transport_labels() {
    assert_eq!(Transport::Tls.as_str(), "TLS");
    assert_eq!(Transport::Tls.sc4s_proto(), "TCP");
    assert_eq!(Transport::Udp.sc4s_proto(), "UDP");
}

/// The vendor table of docs/vendors.md names every family (`SLUICE_VENDORS` names are what
/// operators type). `SLUICE_PRINT_VENDOR_TABLE=1` prints the table rows from the registry.
#[test]
fn docs_vendor_table_lists_every_family() {
    use super::registry::When;
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/vendors.md"
    ))
    .expect("docs/vendors.md");
    let table: String = page
        .lines()
        .skip_while(|l| !l.starts_with("### Vendor parsers"))
        .skip(1)
        .take_while(|l| !l.starts_with("## ") && !l.starts_with("### "))
        .filter(|l| l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n");
    let print = std::env::var_os("SLUICE_PRINT_VENDOR_TABLE").is_some();
    let mut missing = Vec::new();
    for v in vendors::VENDORS {
        if !table.contains(&format!("`{}`", v.name)) {
            missing.push(v.name);
        }
        if print {
            let when: Vec<String> = v
                .apps
                .iter()
                .map(|a| match a.when {
                    // A check narrows SC4S's "every message of the topic" without changing it.
                    When::Always | When::Check(_) => format!("{} topic", topic_name(a.topic)),
                    When::Program(p) => format!("PROGRAM {}", p.join(", ")),
                    When::ProgramPrefix(p) => format!("PROGRAM {}*", p.join("*, ")),
                    When::Token(t) => format!("{:?}", t.join(" / ")),
                    When::BodyPrefix(p) => format!("message starts {}", p.join(" / ")),
                    When::NetSource(n) => format!("listener/source {}", n.join(", ")),
                    When::Raw(_) | When::Header(..) => "header shape".to_string(),
                })
                .collect();
            let mut keys: Vec<String> = v
                .keys
                .iter()
                .filter(|k| !k.sourcetype.is_empty())
                .map(|k| {
                    if k.index.is_empty() {
                        format!("`{}`", k.sourcetype)
                    } else {
                        format!("`{}` / `{}`", k.sourcetype, k.index)
                    }
                })
                .collect();
            keys.dedup();
            println!(
                "| `{}` | {} | {} |",
                v.name,
                when.join("; "),
                keys.join(", ")
            );
        }
    }
    assert!(
        missing.is_empty(),
        "docs/vendors.md's vendor table misses {missing:?}"
    );
}

fn topic_name(t: Topic) -> &'static str {
    match t {
        Topic::Sub(name) => name,
        _ => "any",
    }
}

#[derive(Debug)]
struct OneName(IpAddr, &'static str);

impl NameCache for OneName {
    fn lookup(&self, ip: IpAddr) -> Option<Inline> {
        (ip == self.0).then(|| Inline::concat(&[self.1.as_bytes()]))?
    }
}

#[test]
fn name_cache_fills_a_missing_or_ip_host_only() {
    use crate::parse::{ParseOptions, parse};
    let zone = crate::time::Zone::utc();
    let sender = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10));
    let mut cx = Classifier::default();
    cx.set_name_cache(std::sync::Arc::new(OneName(sender, "fw-edge-01")));
    let host_of = |line: &[u8], from: IpAddr| {
        let msg = parse(
            line,
            &ParseOptions {
                now_unix_secs: NOW,
                zone: &zone,
            },
        );
        let s = SourceMeta {
            source_ip: from,
            ..src("DEFAULT")
        };
        let c = classify(&msg, &s, NOW, &cx, crate::classify::testutil::scratch());
        c.host_bytes(&msg)
            .map(|h| String::from_utf8_lossy(h).into_owned())
    };
    // HOST is an address, or missing, or `-`: the cached name.
    for line in [
        &b"<13>Mar  1 10:00:00 10.9.9.9 app[1]: x"[..],
        b"<13>1 2026-03-01T10:00:00Z 2001:db8::1 app 1 - - x",
        b"<13>1 2026-03-01T10:00:00Z - app 1 - - x",
        b"<13>: no header at all",
    ] {
        assert_eq!(
            host_of(line, sender).as_deref(),
            Some("fw-edge-01"),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    // A real name stays; another sender has no entry; SC4S does not count 127.0.0.1.
    assert_eq!(
        host_of(b"<13>Mar  1 10:00:00 web-3 app[1]: x", sender).as_deref(),
        Some("web-3")
    );
    let other = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 11));
    assert_eq!(
        host_of(b"<13>Mar  1 10:00:00 10.9.9.9 app[1]: x", other).as_deref(),
        Some("10.9.9.9")
    );
    assert_eq!(
        host_of(b"<13>Mar  1 10:00:00 127.0.0.1 app[1]: x", sender).as_deref(),
        Some("127.0.0.1")
    );
    assert!(host_is_nil_or_ip(None, sender));
    assert!(!host_is_nil_or_ip(None, IpAddr::V4(Ipv4Addr::LOCALHOST)));
    assert!(host_is_nil_or_ip(Some(b"-"), sender));
    assert!(!host_is_nil_or_ip(Some(b"web-3"), sender));
}

/// Every `cef`/`leef` application's check passes a message of its vendor (which that
/// application then takes) and fails one of a vendor no application knows.
#[test]
fn cef_checks_pass_their_vendor_and_skip_others() {
    use super::dispatch::check_verdict;
    use super::testutil::classify_line;
    // (application, sourcetype, source, message)
    const CASES: &[(&str, &str, &str, &str)] = &[
        (
            "app-cef-arcsight",
            "cef",
            "ArcSight:ArcSight",
            "Apr 05 16:42:55 arcsight-conn-01 CEF:0|ArcSight|ArcSight|7.9.0.8084.0|agent:016|Device connection up|Low| eventId=77",
        ),
        (
            "app-cef-microsoft",
            "cef",
            "CEFEventLog:Microsoft Windows",
            "Apr 05 19:58:16 arcsight-win-02 CEF:0|Microsoft|Microsoft Windows||Microsoft-Windows-Security-Auditing:4634|An account was logged off.|Low| eventId=1",
        ),
        (
            "app-cef-mcas",
            "cef",
            "microsoft:cas",
            "<134> 2024-04-05T23:13:37.566 mcas-agent-01 CEF:0|MCAS|SIEM_Agent|0.172.123|EVENT_CATEGORY_UPLOAD_DISCOVERY_FILE|Upload Cloud Discovery file|0|externalId=1",
        ),
        (
            "app-cef-infoblox_nios",
            "infoblox:dns",
            "Infoblox:NIOS",
            "<111>Mar 31 08:39:09 nios-gm-01 named[4242]: CEF:0|Infoblox|NIOS|8.4.4-386831|RPZ-QNAME|NXDOMAIN|7|app=DNS dst=192.168.1.2",
        ),
        (
            "app-cef-citrix_netscaler",
            "citrix:netscaler:appfw:cef",
            "sc4s",
            "<134> CEF:0|Citrix|NetScaler|NS13.0|APPFW|APPFW_JSON_DOS_MAX_OBJECT_KEY_LENGTH|6|src=131.105.71.188 spt=4149",
        ),
        (
            "app-cef-imperva_incapsula",
            "cef",
            "Imperva:Incapsula",
            "Mar 31 01:03:20 incap-siem-01 CEF:0|Incapsula|SIEMintegration|1|1|Illegal Resource Access|3| fileid=3412341160002518171",
        ),
        (
            "app-cef-imperva_securesphere",
            "imperva:waf",
            "sc4s",
            "<11> Mar 31 02:08:27 mx-waf-01 CEF:0|Imperva Inc.|SecureSphere|13.5.0.10_0|Custom|custom-policy-violation|High|act=block dst=1.1.1.1",
        ),
        (
            "app-cef-terlix_mps",
            "trellix:mps",
            "trellix:mps",
            "<6> CEF:0|Trellix|MPS|10.0.0.10|IE|ips-event|3|externalId= proto=tcp",
        ),
        (
            "app-cef-terlix_cms",
            "trellix:cms",
            "trellix:cms",
            "<6> CEF:0|Trellix|CMS|10.0.0.993712|IM|infection-match|1|src= spt=51802",
        ),
        (
            "app-cef-cyber_ark_vault",
            "cyberark:epv:cef",
            "sc4s",
            "<111>Mar 25 12:39:06 vault-01 CEF:0|Cyber-Ark|Vault|9.20.0000|7|Logon|5|act=\"Logon\" suser=user2",
        ),
        (
            "app-cef-cyber_ark_pta",
            "cyberark:pta:cef",
            "sc4s",
            "<111>Mar 25 13:44:13 pta-01 CEF:0|CyberArk|PTA|2.6.1|20|Privileged account anomaly|8|cs1Label=incidentId",
        ),
        (
            "app-cef-trendmicro_deep_manager",
            "deepsecurity-system_events",
            "sc4s",
            "Apr 11 17:03:26 dsm-01 CEF:0|Trend Micro|Deep Security Manager|0.0.0|600|User Signed In|3|src=10.52.116.160",
        ),
        (
            "app-cef-trendmicro_deep_agent",
            "deepsecurity-antimalware",
            "sc4s",
            "Apr 11 18:08:33 dsa-ws-02 CEF:0|Trend Micro|Deep Security Agent|<DSA version>|4000000|Eicar_test_file|6|cn1=1",
        ),
        (
            "app-cef-varonis",
            "varonis:ta",
            "sc4s",
            "Apr 12 07:09:57 varonis-da-01 CEF:0|Varonis Inc.|DatAdvantage|7.5.21|6001|File permissions added|5|rt=1712905797",
        ),
        (
            "app-cef-netscout_arbor-edge",
            "netscout:aed",
            "sc4s",
            "<111> Apr 06 13:20:08 aed-01 CEF:0|NETSCOUT|Arbor Edge Defense|6.8.1.0|TCP Connection Limiting|Blocked Host|5|rt=1712409608000",
        ),
        (
            "app-cef-kaspersky_es",
            "kaspersky:klprci",
            "sc4s",
            "<29>1 2024-04-04T12:29:53.123Z h1 CEF:0|KasperskyLab|SecurityCenter|13.2|KLPRCI_TaskState|Done|1|rt=1647626887000",
        ),
        (
            "app-cef-cisco_esa",
            "cisco:esa:cef",
            "esa:consolidated",
            "<134>Mar 15 11:32:40 esa-1 CEF:0|Cisco|C100V Email Security Virtual Appliance|14.0|ESA_CONSOLIDATED_LOG_EVENT|Consolidated Log Event|5|deviceExternalId=1",
        ),
        (
            "app-leef-kaspersky_es",
            "kaspersky:gnrl",
            "KasperskyLab:SecurityCenter",
            "<13>Jan 18 11:07:53 h1 LEEF:2.0|KasperskyLab|SecurityCenter|13|GNRL_EV_X|^|a=1^b=2",
        ),
    ];
    for (app, sourcetype, source, line) in CASES {
        assert_eq!(check_verdict(line, app), Some(true), "{app}: {line}");
        let c = classify_line(line);
        assert_eq!(c.sourcetype, *sourcetype, "{line}");
        assert_eq!(c.source, *source, "{line}");
    }
    let other_cef = "<134>Mar 15 11:32:40 h1 CEF:0|Acme|Widget|1.0|100|Thing|5|src=10.0.0.1";
    let other_leef = "<13>Jan 18 11:07:53 h1 LEEF:2.0|Acme|Widget|13|X|^|a=1^b=2";
    for (app, ..) in CASES {
        let other = if app.starts_with("app-leef") {
            other_leef
        } else {
            other_cef
        };
        assert_eq!(check_verdict(other, app), Some(false), "{app}");
    }
}

#[derive(Debug)]
struct Remembered(&'static str, &'static str, &'static str);

impl VpsCache for Remembered {
    fn lookup(&self, host: &[u8]) -> Option<VendorProduct> {
        host.eq_ignore_ascii_case(self.0.as_bytes())
            .then(|| VendorProduct::new(self.1.as_bytes(), self.2.as_bytes()))?
    }
}

#[test]
fn vps_cache_names_the_network_source_of_a_remembered_host() {
    use crate::parse::{ParseOptions, parse};
    let zone = crate::time::Zone::utc();
    let run = |cx: &Classifier, line: &[u8], listener: &str, check: &dyn Fn(&Classification)| {
        let msg = parse(
            line,
            &ParseOptions {
                now_unix_secs: NOW,
                zone: &zone,
            },
        );
        check(&classify(
            &msg,
            &src(listener),
            NOW,
            cx,
            crate::classify::testutil::scratch(),
        ));
    };
    // A vendor's network-source application runs for the remembered host.
    let mut cx = Classifier::default();
    cx.set_vps_cache(std::sync::Arc::new(Remembered(
        "MS-01", "meraki", "switches",
    )));
    run(
        &cx,
        b"<134> 1715545673.246813000 ms-01 events port 3 status changed",
        "DEFAULT",
        &|c| {
            assert_eq!(c.sourcetype, "meraki:switches");
        },
    );
    // Another host is not; nor a listener with a vendor of its own.
    run(
        &cx,
        b"<134> 1715545673.246813000 ms-02 events port 3 status changed",
        "DEFAULT",
        &|c| {
            // syslog-ng's RFC 3164 re-read takes `events` as PROGRAM (a first word needs no
            // colon), so it is the nix fallback, not Meraki's.
            assert_eq!(c.sourcetype, "nix:syslog", "{c:?}");
            assert_eq!(c.vendor, "nix");
        },
    );
    // The fallback of a remembered host names its vendor and product (values held inline).
    let mut cx = Classifier::default();
    cx.set_vps_cache(std::sync::Arc::new(Remembered("app-7", "acme", "widget")));
    run(
        &cx,
        b"<13>1 2026-03-01T10:00:00Z app-7 sshd 1 - - x",
        "DEFAULT",
        &|c| {
            assert_eq!(c.sourcetype, "nix:syslog");
            assert_eq!(c.vendor, "acme");
            assert_eq!(c.product, "widget");
            assert_eq!(c.app, "app-fallback-netsource");
        },
    );
    // Without the cache, the plain fallback.
    run(
        &Classifier::default(),
        b"<13>1 2026-03-01T10:00:00Z app-7 sshd 1 - - x",
        "DEFAULT",
        &|c| {
            assert_eq!(c.vendor, "nix");
        },
    );
    assert!(VendorProduct::new(b"", b"x").is_none());
    assert!(VendorProduct::new(&[b'v'; 40], &[b'p'; 30]).is_none());
}

#[test]
fn listener_ids_without_vendor_reach_the_applications_that_name_them() {
    use crate::parse::{ParseOptions, parse};
    let zone = crate::time::Zone::utc();
    let settings = Settings {
        listeners: vec![
            "INFOBLOX".into(),
            "DELL_POWEREDGE_CMC".into(),
            "CITRIX_NETSCALER_RFC5424".into(),
        ],
        ..Settings::default()
    };
    let cx = Classifier::new(Default::default(), &settings).unwrap();
    // INFOBLOX names no vendor and product (SC4S's `tags(".source.s_INFOBLOX")`).
    assert_eq!(cx.ignored_listeners(), ["INFOBLOX"]);
    let run = |line: &[u8], listener: &str| {
        let msg = parse(
            line,
            &ParseOptions {
                now_unix_secs: NOW,
                zone: &zone,
            },
        );
        classify(
            &msg,
            &src(listener),
            NOW,
            &cx,
            crate::classify::testutil::scratch(),
        )
        .sourcetype
        .to_string_lossy()
    };
    let named = b"<30>Mar 30 10:00:00 ns1 named[42]: client 10.0.0.1#53: query: example.com IN A";
    assert_eq!(run(named, "INFOBLOX"), "infoblox:dns");
    assert_ne!(run(named, "DEFAULT"), "infoblox:dns");
    let cmc = b"<13>1 2024-03-30T10:00:00Z cmc-1 CMC 1 - - Login success";
    assert_eq!(run(cmc, "DELL_POWEREDGE_CMC"), "dell:poweredge:cmc:syslog");
    let ns = b"<134>1 2025-01-01T17:00:30Z adc-1 TCP 42 - - default CONN 1 0 : Source 1.1.1.1:1";
    assert_eq!(
        run(ns, "CITRIX_NETSCALER_RFC5424"),
        "citrix:netscaler:syslog"
    );
    assert_ne!(run(ns, "DEFAULT"), "citrix:netscaler:syslog");
}
