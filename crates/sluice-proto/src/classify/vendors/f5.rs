//! F5 BIG-IP (SC4S `addons/f5/app-*f5*.conf`): the BIG-IP daemons by PROGRAM (with the
//! `slotN/host` HOST split and the LTM/APM sourcetypes for `tmm`), RFC 5424 with
//! `[F5@12276`, the Splunk iRules (HSL `host,f5_irule=Splunk-...`, ASM, `access_json`), and
//! the dedicated listener / netsource.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "f5",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-f5_bigip",
            topic: Topic::NetSource,
            order: "f5/app-netsource-f5_bigip.conf",
            when: When::NetSource(&["f5_bigip"]),
            parse: netsource,
        },
        App {
            name: "app-syslog-f5_bigip",
            topic: Topic::Pgm,
            order: "f5/app-syslog-f5_bigip.conf",
            when: When::ProgramPrefix(BIGIP_PROGRAMS_AND_F5),
            parse: bigip,
        },
        App {
            name: "app-syslog-f5_bigip_irule_asm",
            topic: Topic::Pgm,
            order: "f5/app-syslog-f5_bigip_irule_asm.conf",
            when: When::ProgramPrefix(&["ASM"]),
            parse: irule_asm,
        },
        App {
            // The same application also takes a MESSAGE starting `f5_asm=Splunk-F5-ASM`
            // whatever the PROGRAM; the PROGRAM prefilter cannot see that case.
            name: "app-syslog-f5_bigip_irule_asm",
            topic: Topic::Pgm,
            order: "f5/app-syslog-f5_bigip_irule_asm.conf",
            when: When::Token(&["f5_asm=Splunk-F5-ASM"]),
            parse: irule_asm,
        },
        App {
            name: "app-syslog-f5_bigip_irule_json",
            topic: Topic::Pgm,
            order: "f5/app-syslog-f5_bigip_irule_json.conf",
            when: When::ProgramPrefix(&["F5"]),
            parse: irule_json,
        },
        App {
            name: "app-syslog-f5_bigip_irule_splunk",
            topic: Topic::Syslog,
            order: "f5/app-syslog-f5_bigip_irule_splunk.conf",
            when: When::Token(&[",f5_irule=Splunk-"]),
            parse: irule_splunk,
        },
        App {
            name: "app-syslog-f5_bigip_structured",
            topic: Topic::Sdata,
            order: "f5/app-syslog-f5_bigip_structured.conf",
            when: When::Token(&["[F5@12276"]),
            parse: structured,
        },
    ],
};

/// The BIG-IP daemons SC4S's `app-syslog-f5_bigip` filter names (prefixes).
const BIGIP_PROGRAMS: &[&str] = &[
    "iControlPortal.cgi",
    "tmsh",
    "mcpd",
    "mprov",
    "apmd",
    "tmm",
    "sshd(pam_audit)",
];
const BIGIP_PROGRAMS_AND_F5: &[&str] = &[
    "iControlPortal.cgi",
    "tmsh",
    "mcpd",
    "mprov",
    "apmd",
    "tmm",
    "sshd(pam_audit)",
    "F5",
];

const BIGIP: usize = 0;
const SSL_ERROR: usize = 1;
const TCL_ERROR: usize = 2;
const APM: usize = 3;
const TRAFFIC: usize = 4;
const LOG_ERROR: usize = 5;
const NIX: usize = 6;
const ASM: usize = 7;
const ACCESS_JSON: usize = 8;
const IRULE: usize = 9;
const DNS_REQUEST: usize = 10;
const DNS_RESPONSE: usize = 11;
const HTTP: usize = 12;
const LB_FAILED: usize = 13;
const STRUCTURED: usize = 14;
const NETSOURCE: usize = 15;

static KEYS: &[Key] = &[
    Key::new("f5", "bigip", "f5:bigip:syslog", "netops").program_source(),
    Key::update("f5:bigip:ltm:ssl:error", ""),
    Key::update("f5:bigip:ltm:tcl:error", ""),
    Key::update("f5:bigip:apm:syslog", ""),
    Key::update("f5:bigip:ltm:traffic", ""),
    Key::update("f5:bigip:ltm:log:error", ""),
    Key::update("nix:syslog", "").class("nix_syslog"),
    Key::new("f5", "bigip", "f5:bigip:asm:syslog", "netwaf").class("asm"),
    Key::new("f5", "bigip", "f5:bigip:ltm:access_json", "netops").class("access_json"),
    Key::new("f5", "bigip", "f5:bigip:irule", "netops")
        .source("f5:hsl")
        .class("irule"),
    Key::update("f5:bigip:gtm:dns:request:irule", ""),
    Key::update("f5:bigip:gtm:dns:response:irule", ""),
    Key::update("f5:bigip:ltm:http:irule", ""),
    Key::update("f5:bigip:ltm:failed:irule", ""),
    Key::new("f5", "bigip", "f5:bigip:syslog", "netops"),
    Key::new("f5", "bigip", "f5:bigip:syslog", "netops").program_source(),
];

fn program_is_bigip(p: &[u8]) -> bool {
    BIGIP_PROGRAMS.iter().any(|x| p.starts_with(x.as_bytes()))
}

/// SC4S's `message('pam_radius_auth|authenticated|pam_bigip_authz|mod_auth_pam')`.
fn auth_message(m: &[u8]) -> bool {
    static WORDS: LazyLock<[memchr::memmem::Finder<'static>; 4]> = LazyLock::new(|| {
        [
            &b"pam_radius_auth"[..],
            b"authenticated",
            b"pam_bigip_authz",
            b"mod_auth_pam",
        ]
        .map(memchr::memmem::Finder::new)
    });
    WORDS.iter().any(|f| f.find(m).is_some())
}

fn msgid_has_access_json(input: &Input<'_, '_>) -> bool {
    input
        .msg
        .msgid
        .is_some_and(|id| crate::classify::vendors::util::find_lit!(id, b"access_json").is_some())
}

fn bigip<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program else {
        return false;
    };
    if !(program_is_bigip(p) || (p.starts_with(b"F5") && !msgid_has_access_json(input))) {
        return false;
    }
    out.key(&KEYS[BIGIP]);
    // A chassis blade sends `slotN/host`: the part after the last `/` is the host.
    if let Some(h) = input.host
        && let Some(slash) = memchr::memrchr(b'/', h)
    {
        out.field("slot", Value::Bytes(&h[..slash]));
        out.host(&h[slash + 1..]);
    }
    let m = input.body;
    if p.starts_with(b"tmm") {
        tmm(m, out);
    } else if !(program_is_bigip(p) || auth_message(m)) {
        out.key(&KEYS[NIX]);
    }
    true
}

/// The LTM/APM sourcetypes of `tmm` messages; each condition is tested in SC4S's order and
/// the last one that holds wins.
fn tmm(m: &[u8], out: &mut Out<'_>) {
    // Literals each pattern cannot match without: most tmm lines have none of them, and
    // these patterns otherwise cost a full regex search each.
    static LITERALS: LazyLock<[memchr::memmem::Finder<'static>; 7]> = LazyLock::new(|| {
        [
            &b"Connection"[..],
            b"error:",
            b"TCL",
            b"Limiting",
            b"packets/sec",
            b"Invalid action:",
            b"clientside",
        ]
        .map(memchr::memmem::Finder::new)
    });
    let [
        connection,
        error,
        tcl,
        limiting,
        packets,
        invalid,
        clientside,
    ] = &*LITERALS;
    let has = |f: &memchr::memmem::Finder<'_>| f.find(m).is_some();
    let possible = [
        has(connection) && has(error),
        has(tcl) && has(error),
        m.len() >= 8 && m[..4].iter().all(u8::is_ascii_digit),
        has(limiting) && has(packets),
        has(invalid) && has(clientside),
    ];
    if !possible.contains(&true) {
        return;
    }
    // On ASCII text the Unicode classes (`\w`, `\d`, `\s`, `.`) match exactly what their
    // ASCII forms match, and the ASCII automata are much smaller.
    let res = if m.is_ascii() { &TMM_ASCII } else { &TMM };
    for ((re, k), possible) in res.iter().zip(possible) {
        if possible && re.is_match(m) {
            out.key(&KEYS[*k]);
        }
    }
}

/// SC4S's tmm patterns with the sourcetype each selects, in its order.
const TMM_PATTERNS: [(&str, usize); 5] = [
    (
        r"[0-9A-Fa-f]{4}\d+:\d{1,2}:\sConnection\serror:\s\w*:<?\d+>?:.*\(\d+\)",
        SSL_ERROR,
    ),
    (
        r"[0-9A-Fa-f]{4}\d+:\d{1,2}:\sTCL\serror:\s.+/(?:\s[^\s]+.*ERR_NOT_SUPPORTED)?",
        TCL_ERROR,
    ),
    (
        r"^(?:\d{4})[0-9A-Fa-f]{4}:\d+:\s+(?:[^:\s]{1,100}:[^:\s]{1,100}:\s*)?[0-9a-f]{8}:",
        APM,
    ),
    (
        r"[0-9A-Fa-f]{4}\d+:\d{1,2}:\sLimiting.+from\s\d+\sto\s\d+\spackets/sec",
        TRAFFIC,
    ),
    (
        concat!(
            r"[0-9A-Fa-f]{4}\d+:\d{1,2}:\s\w+\s-\sInvalid action:\w+\s.*",
            r"\((?:[0-9]{1,3}\.){3}[0-9]{1,3}:\d{1,5}\s->\s(?:[0-9]{1,3}\.){3}[0-9]{1,3}:\d{1,5}\)",
            r"\sclientside\s",
            r"\((?:[0-9]{1,3}\.){3}[0-9]{1,3}:\d{1,5}\s->\s(?:[0-9]{1,3}\.){3}[0-9]{1,3}:\d{1,5}\)"
        ),
        LOG_ERROR,
    ),
];

static TMM: LazyLock<[(Regex, usize); 5]> =
    LazyLock::new(|| TMM_PATTERNS.map(|(p, k)| (Regex::new(p).expect("static regex"), k)));

static TMM_ASCII: LazyLock<[(Regex, usize); 5]> = LazyLock::new(|| {
    TMM_PATTERNS.map(|(p, k)| {
        let re = regex::bytes::RegexBuilder::new(p)
            .unicode(false)
            .build()
            .expect("static regex");
        (re, k)
    })
});

fn irule_asm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(input.program.is_some_and(|p| p.starts_with(b"ASM"))
        || input.body.starts_with(b"f5_asm=Splunk-F5-ASM"))
    {
        return false;
    }
    out.key(&KEYS[ASM]);
    true
}

fn irule_json<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"F5")) || !msgid_has_access_json(input) {
        return false;
    }
    out.key(&KEYS[ACCESS_JSON]);
    true
}

/// `host,f5_irule=Splunk-<category>,...`: MESSAGE starts with the host.
fn irule_splunk<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    let Some(comma) = memchr::memchr(b',', m) else {
        return false;
    };
    let rest = &m[comma + 1..];
    if comma == 0 || !rest.starts_with(b"f5_irule=Splunk-") {
        return false;
    }
    let value = &rest[b"f5_irule=".len()..];
    let category = &value[..memchr::memchr(b',', value).unwrap_or(value.len())];
    out.key(&KEYS[IRULE]);
    out.host(&m[..comma]);
    let update = match category {
        b"Splunk-iRule-DNS_REQUEST" => Some(DNS_REQUEST),
        b"Splunk-iRule-DNS_RESPONSE" => Some(DNS_RESPONSE),
        b"Splunk-iRule-HTTP" => Some(HTTP),
        b"Splunk-iRule-LB_FAILED" => Some(LB_FAILED),
        _ => None,
    };
    if let Some(k) = update {
        out.key(&KEYS[k]);
    }
    true
}

fn structured<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let sd = input.msg.structured_data.map(|sd| sd.raw()).unwrap_or(b"");
    if !sd.starts_with(b"[F5@12276") {
        return false;
    }
    out.key(&KEYS[STRUCTURED]);
    let bigip = input.program.is_some_and(program_is_bigip);
    if !(bigip || auth_message(input.body)) {
        out.key(&KEYS[NIX]);
    }
    true
}

fn netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified {
        return false;
    }
    if input.netsource.vendor_product != "f5_bigip"
        && !(input.netsource.vendor == "f5" && input.netsource.product == "bigip")
    {
        return false;
    }
    out.key(&KEYS[NETSOURCE]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;
    use proptest::prelude::*;

    /// The ASCII forms of the tmm patterns answer as the Unicode ones on ASCII text.
    fn same_on(text: &[u8]) -> Result<(), TestCaseError> {
        for ((u, _), (a, _)) in super::TMM.iter().zip(super::TMM_ASCII.iter()) {
            prop_assert_eq!(
                u.is_match(text),
                a.is_match(text),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        Ok(())
    }

    #[test]
    fn ascii_patterns_agree_on_samples() {
        for s in [
            &b"01260009:4: Connection error: ssl_passthru:5234: not SSL (40)"[..],
            b"01220001:3: TCL error: /Common/x <HTTP_REQUEST> - ERR_NOT_SUPPORTED (line 8)",
            b"01490500:5: /Common/My_HDKS-Hybrid:Common:e03c2ca8: New session",
            b"011e0001:4: Limiting open port RST response from 501 to 500 packets/sec for x",
            b"011f0016:3: http_p - Invalid action:0x100005 x (10.0.0.3:21729 -> 10.0.0.3:33489) clientside (10.0.0.5:59455 -> 10.0.0.1:19459) y",
            b"011f0016:3:\x0bx\x0b-\x0bInvalid action:a\x0b(1.2.3.4:5\x0b->\x0b1.2.3.4:5)\x0bclientside\x0b(1.2.3.4:5\x0b->\x0b1.2.3.4:5)",
            b"",
        ] {
            same_on(s).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn ascii_patterns_agree(parts in proptest::collection::vec(prop::sample::select(vec![
            &b"0"[..], b"1a2b", b"01260009", b":", b" ", b"\t", b"\x0b", b"\n", b"x", b"_", b"-", b"/",
            b"(", b")", b"<", b">", b".", b"1.2.3.4", b"Connection", b"error:", b"TCL",
            b"ERR_NOT_SUPPORTED", b"Limiting", b"from", b"to", b"packets/sec", b"Invalid action:",
            b"clientside", b"->", b"e03c2ca8", b"\x7f",
        ]), 0..24)) {
            same_on(&parts.concat())?;
        }
    }

    #[test]
    fn daemons_and_tmm() {
        let c = classify_line(
            "<166>Mar 27 09:08:53 slot1/ltm1 notice tmsh[16322]: 01420002:5: AUDIT - pid=16322 user=root",
        );
        assert_eq!(c.sourcetype, "f5:bigip:syslog");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "f5");
        let c = classify_line(
            "<166>Mar 27 17:49:49 ltm5 warning tmm1[23068]: 01260009:4: Connection error: ssl_passthru:5234: not SSL (40)",
        );
        assert_eq!(c.sourcetype, "f5:bigip:ltm:ssl:error");
        let c = classify_line(
            "<166>Mar 28 02:30:46 ltm8 warning tmm3[184585]: 011e0001:4: Limiting open port RST response from 501 to 500 packets/sec for x",
        );
        assert_eq!(c.sourcetype, "f5:bigip:ltm:traffic");
        let c = classify_line(
            "<166>Mar 29 00:13:05 apm16 tmm1[12390]: 01490500:5: /Common/My_HDKS-Hybrid:Common:e03c2ca8: New session",
        );
        assert_eq!(c.sourcetype, "f5:bigip:apm:syslog");
    }

    #[test]
    fn irules() {
        let c = classify_line(
            "<166>Mar 28 18:47:30 ltm12,f5_irule=Splunk-iRule-HTTP,src_ip=192.168.128.62,vip=1.2.3.4",
        );
        assert_eq!(c.sourcetype, "f5:bigip:ltm:http:irule");
        assert_eq!(c.source, "f5:hsl");
        let c = classify_line(
            "<166>Mar 28 23:07:58 asm15 ASM:f5_asm=Splunk-F5-ASM,attack_type=\"SQL-Injection\"",
        );
        assert_eq!(c.sourcetype, "f5:bigip:asm:syslog");
        assert_eq!(c.index, "netwaf");
        let c = classify_line(
            "<166>1 2024-03-29T01:18:12.180190+00:00 ltm17 F5 - access_json - {\"a\":1}",
        );
        assert_eq!(c.sourcetype, "f5:bigip:ltm:access_json");
    }
}
