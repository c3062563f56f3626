//! The Cisco products SC4S recognises only by where they come from (a dedicated listener
//! `SC4S_LISTEN_CISCO_<PRODUCT>_*_PORT` or a `vendor_product_by_source` entry, topic
//! `sc4s-network-source`): ESA (plus its CEF), WSA (three log formats), Meraki, MS.
//! As in SC4S, none of them takes a message another application already identified.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::header::strip_directory;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vendors::util::span;
use crate::classify::vtime;

pub static ESA: Vendor = Vendor {
    name: "cisco_esa",
    keys: ESA_KEYS,
    apps: &[
        App {
            name: "app-cef-cisco_esa",
            topic: Topic::Sub("cef"),
            order: "cisco/app-cef-cisco_esa.conf",
            when: When::Check(esa_cef_check),
            parse: esa_cef,
        },
        App {
            name: "app-netsource-cisco_esa",
            topic: Topic::NetSource,
            order: "cisco/app-netsource-cisco_esa.conf",
            when: When::NetSource(&["cisco_esa"]),
            parse: esa,
        },
    ],
};

pub static WSA: Vendor = Vendor {
    name: "cisco_wsa",
    keys: WSA_KEYS,
    apps: &[
        App {
            name: "app-netsource-cisco_wsa",
            topic: Topic::NetSource,
            order: "cisco/app-netsource-cisco_wsa.conf",
            when: When::NetSource(&["cisco_wsa"]),
            parse: wsa,
        },
        App {
            name: "app-netsource-cisco_wsa_11_7",
            topic: Topic::NetSource,
            order: "cisco/app-netsource-cisco_wsa_11_7.conf",
            when: When::NetSource(&["cisco_wsa11-7"]),
            parse: wsa_11_7,
        },
        App {
            name: "app-netsource-cisco_wsa_splunk",
            topic: Topic::NetSource,
            order: "cisco/app-netsource-cisco_wsa_splunk.conf",
            when: When::NetSource(&["cisco_wsa_recommended"]),
            parse: wsa_recommended,
        },
    ],
};

pub static MERAKI: Vendor = Vendor {
    name: "cisco_meraki",
    keys: MERAKI_KEYS,
    apps: &[App {
        name: "app-netsource-cisco_meraki",
        topic: Topic::NetSource,
        order: "cisco/app-netsource-cisco_meraki.conf",
        when: When::NetSource(&[
            "cisco_meraki",
            "meraki_securityappliances",
            "meraki_accesspoints",
            "meraki_switches",
        ]),
        parse: meraki,
    }],
};

pub static MS: Vendor = Vendor {
    name: "cisco_ms",
    keys: MS_KEYS,
    apps: &[App {
        name: "app-netsource-cisco_ms",
        topic: Topic::NetSource,
        order: "cisco/app-netsource-cisco_ms.conf",
        when: When::NetSource(&["cisco_ms"]),
        parse: ms,
    }],
};

static ESA_KEYS: &[Key] = &[
    Key::new("cisco", "esa", "cisco:esa", "email")
        .program_source()
        .template(Template::MsgOnly),
    Key::new("cisco", "esa", "cisco:esa:cef", "email").source("esa:consolidated"),
    Key::update("cisco:esa:amp", "").source("esa:amp"),
    Key::update("cisco:esa:http", "").source("esa:http"),
    Key::update("cisco:esa:system_logs", "").source("esa:euq_logs"),
    Key::update("cisco:esa:system_logs", "").source("esa:service_logs"),
    Key::update("cisco:esa:system_logs", "").source("esa:reportd_logs"),
    Key::update("cisco:esa:system_logs", "").source("esa:sntpd_logs"),
    Key::update("cisco:esa:system_logs", "").source("esa:smartlicense"),
    Key::update("cisco:esa:error_logs", "").source("esa:updater_logs"),
    Key::update("cisco:esa:textmail", "").source("esa:textmail"),
    Key::update("cisco:esa:antispam", "").source("esa:antispam"),
    Key::update("cisco:esa:content_scanner", "").source("esa:content_scanner"),
    Key::update("cisco:esa:error_logs", "").source("esa:error_logs"),
    Key::update("cisco:esa:system_logs", "").source("esa:system_logs"),
    Key::update("cisco:esa:authentication", "").source("esa:authentication"),
    Key::update("", "").template(Template::HdrMsg),
];

const ESA_BASE: usize = 0;
const ESA_CEF: usize = 1;
/// The first of the per-stream keys, in the order of [`ESA_STREAMS`].
const ESA_STREAM: usize = 2;

/// SC4S's per-stream filters (`f_cisco_esa_*`), tried in its order: PROGRAM prefixes (with
/// and without `sc4s_`) and MESSAGE patterns.
struct Stream {
    programs: &'static [&'static str],
    patterns: &'static [&'static str],
}

const ESA_STREAMS: [Stream; 14] = [
    Stream {
        programs: &["amp", "sc4s_amp"],
        patterns: &[
            r"SHA256:",
            r"File\s*not\s*uploaded\s*for\s*analysis",
            r"Response\s*received\s*for\s*file\s*reputation\s*query\s*from\s*Cloud",
            r"File\s*reputation\s*query\s*initiating",
        ],
    },
    Stream {
        programs: &["gui_logs", "sc4s_gui_logs"],
        patterns: &[
            r"https?\s*service\s*",
            r"[sS]ession\s*\w+\s*from\s*",
            r"\s*PERIODIC\s*REPORTS\s*:\s*",
            r"\s*req\s*:.+\s*user\s*:\s*.+\s*id\s*:\s*",
            r"testmaillog\s*:\s*[iI]nfo\s*:",
            r"[sS]ystem\s*is\s*coming\s*up",
        ],
    },
    Stream {
        programs: &["euq_logs", "sc4s_euq_logs"],
        patterns: &[],
    },
    Stream {
        programs: &["service_logs", "sc4s_service_logs"],
        patterns: &[],
    },
    Stream {
        programs: &["reportd_logs", "sc4s_reportd_logs"],
        patterns: &[],
    },
    Stream {
        programs: &["sntpd_logs", "sc4s_sntpd_logs"],
        patterns: &[],
    },
    Stream {
        programs: &["smartlicense", "sc4s_smartlicense"],
        patterns: &[],
    },
    Stream {
        programs: &["updater_logs", "sc4s_updater_logs"],
        patterns: &[],
    },
    Stream {
        programs: &["mail_logs", "sc4s_mail_logs"],
        patterns: &[
            r"mail_logs:",
            r"MID\s+\d+",
            r"ICID\s+\d+",
            r"DCID\s+\d+",
            r"RID\s+\[?(\d+(?:\s*,\s*\d+)*)",
            r"(?:SplunkMailSyslog|MAIL_SecurityAudit|CES_VPN_Mail_SecurityAudit)\s*:",
        ],
    },
    Stream {
        programs: &["antispam", "sc4s_antispam"],
        patterns: &[],
    },
    Stream {
        programs: &["content_scanner", "sc4s_content_scanner"],
        patterns: &[],
    },
    Stream {
        programs: &["error_logs", "sc4s_error_logs"],
        patterns: &[],
    },
    Stream {
        programs: &["system_logs", "sc4s_system_logs"],
        patterns: &[],
    },
    Stream {
        programs: &["sc4s_audit_log"],
        patterns: &[
            r"[Ii]nfo\s*:\s*Begin\s*Logfile",
            r"authenticated\s*successfully.",
            r"successfully\s*logged\s*on\s*from",
            r"An\s*authentication\s*attempt",
            r"failed\s*authentication.",
            r"Time\s*offset\s*from\s*UTC:",
            r"[vV]ersion:\s+.*\s+SN:\s+.*",
            r"\s*login|logout:\s*[^\s]*\s*[Uu]ser:[\w\-]+\s*session:[^\s]+",
            r"\slogged\s*out\s*",
            r"MAR_SecurityAudit",
        ],
    },
];

/// Each stream's MESSAGE patterns as one alternation (`None`: PROGRAM only), in
/// [`ESA_STREAMS`] order. `is_match` neither allocates nor captures.
static ESA_PATTERNS: LazyLock<Vec<Option<Regex>>> = LazyLock::new(|| {
    ESA_STREAMS
        .iter()
        .map(|stream| {
            (!stream.patterns.is_empty()).then(|| {
                let joined: Vec<String> =
                    stream.patterns.iter().map(|p| format!("(?:{p})")).collect();
                Regex::new(&joined.join("|")).expect("static regexes")
            })
        })
        .collect()
});

fn esa<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified {
        return false;
    }
    out.key(&ESA_KEYS[ESA_BASE]);
    let program = strip_directory(input.program.unwrap_or_default());
    let stream = ESA_STREAMS
        .iter()
        .zip(ESA_PATTERNS.iter())
        .position(|(stream, re)| {
            stream
                .programs
                .iter()
                .any(|p| program.starts_with(p.as_bytes()))
                || re.as_ref().is_some_and(|re| re.is_match(input.body))
        });
    match stream {
        Some(s) => out.key(&ESA_KEYS[ESA_STREAM + s]),
        None => out.key(&ESA_KEYS[ESA_KEYS.len() - 1]),
    }
    true
}

/// `match("Cisco" device_vendor)` and a device product naming an Email Security Appliance
/// or Secure Email Gateway (`C\d+V? Email Security( Virtual)? Appliance`,
/// `C\d+V? Secure Email Gateway( Virtual)?`, unanchored).
fn esa_cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !esa_cef_check(input, out) {
        return false;
    }
    out.key(&ESA_KEYS[ESA_CEF]);
    true
}

/// The filter of [`esa_cef`] (the dispatcher's check: a CEF message of another vendor costs
/// a call, not a copy of `Out`).
fn esa_cef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    static PRODUCT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"C\d+V? Email Security( Virtual)? Appliance|C\d+V? Secure Email Gateway( Virtual)?",
        )
        .expect("static regex")
    });
    out.nv.contains("device_vendor", b"Cisco")
        && out
            .nv
            .get("device_product")
            .is_some_and(|p| PRODUCT.is_match(p))
}

static WSA_KEYS: &[Key] = &[
    Key::new("cisco", "wsa", "cisco:wsa", "netproxy").source("cisco_wsa"),
    Key::new("cisco", "wsa", "cisco:wsa:squid:new", "netproxy").source("cisco_wsa_11.7"),
    Key::new("cisco", "wsa", "cisco:wsa", "netproxy").source("cisco_wsa_splunk"),
    Key::update("cisco:wsa:l4tm", ""),
    Key::update("cisco:wsa:squid", ""),
    Key::update("cisco:wsa:squid:new", ""),
    Key::update("cisco:wsa:w3c:recommended", ""),
];

const L4TM: usize = 3;

fn wsa<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    wsa_common(input, out, 0, 4)
}

fn wsa_11_7<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    wsa_common(input, out, 1, 5)
}

fn wsa_recommended<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    wsa_common(input, out, 2, 6)
}

/// The three WSA formats share their rules: L4 traffic monitor lines
/// (`(?:^| )(Info|Warning|Alert|Debug):`) get `cisco:wsa:l4tm` and PROGRAM folded back into
/// MESSAGE; access-log lines starting with an epoch stamp (`^\d{10}(\.\d{1,9})?`) take that
/// time and the format's access-log sourcetype.
fn wsa_common<'m>(input: &Input<'m, '_>, out: &mut Out<'m>, base: usize, access: usize) -> bool {
    static L4TM_LINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:^| )(Info|Warning|Alert|Debug):").expect("static regex"));
    if out.identified {
        return false;
    }
    out.key(&WSA_KEYS[base]);
    let body = input.body;
    if L4TM_LINE.is_match(body) {
        out.key(&WSA_KEYS[L4TM]);
        // `set("$PROGRAM $MSG" value("MSG"))`: the received text from PROGRAM on (its
        // separator as sent) keeps both without building a new string.
        if let Some(p) = input.program
            && let Some(whole) = span(input.msg.raw, p, body)
        {
            out.message(whole);
        }
        out.program = Some(None);
        out.pid = Some(None);
        return true;
    }
    let secs = body.iter().take_while(|b| b.is_ascii_digit()).count();
    if secs >= 10 {
        let frac = match body.get(10) {
            Some(b'.') => body[11..]
                .iter()
                .take(9)
                .take_while(|b| b.is_ascii_digit())
                .count(),
            _ => 0,
        };
        let stamp = if frac > 0 {
            &body[..11 + frac]
        } else {
            &body[..10]
        };
        if let Some(ts) = vtime::parse_epoch(stamp, false) {
            out.time(ts);
        }
        out.key(&WSA_KEYS[access]);
    }
    true
}

static MERAKI_KEYS: &[Key] = &[
    Key::new("cisco", "meraki", "meraki", "netfw"),
    Key::new(
        "meraki",
        "securityappliances",
        "meraki:securityappliances",
        "netfw",
    ),
    Key::new("meraki", "accesspoints", "meraki:accesspoints", "netfw"),
    Key::new("meraki", "switches", "meraki:switches", "netfw"),
];

fn meraki<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified {
        return false;
    }
    let ns = input.netsource;
    let is = |vendor: &str, product: &str| {
        ns.vendor_product.len() == vendor.len() + 1 + product.len()
            && ns.vendor_product.starts_with(vendor)
            && ns.vendor_product.ends_with(product)
            || (ns.vendor == vendor && ns.product == product)
    };
    let key = if is("cisco", "meraki") {
        0
    } else if is("meraki", "securityappliances") {
        1
    } else if is("meraki", "accesspoints") {
        2
    } else if is("meraki", "switches") {
        3
    } else {
        return false;
    };
    out.key(&MERAKI_KEYS[key]);
    true
}

static MS_KEYS: &[Key] = &[Key::new("cisco", "ms", "cisco:ms", "netops")
    .program_source()
    .template(Template::HdrMsg)];

fn ms<'m>(_input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified {
        return false;
    }
    out.key(&MS_KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};
    use std::sync::LazyLock;

    use super::ESA_PATTERNS;
    use crate::classify::context::ContextFiles;
    use crate::classify::{Classification, Classifier, Settings, SourceMeta, Transport, classify};
    use crate::parse::{ParseOptions, parse};
    use crate::time::Zone;

    static LISTENERS: LazyLock<Classifier> = LazyLock::new(|| {
        let settings = Settings {
            listeners: [
                "CISCO_ESA",
                "CISCO_WSA",
                "CISCO_MERAKI",
                "CISCO_MS",
                "CISCO_MM",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            ..Settings::default()
        };
        Classifier::new(ContextFiles::default(), &settings).expect("builds")
    });

    /// Classifies `line` as received on the listener `id` (leaked: tests only).
    fn on(id: &'static str, line: &str) -> Classification<'static, 'static> {
        let raw: &'static [u8] = Box::leak(line.as_bytes().to_vec().into_boxed_slice());
        let zone: &'static Zone = Box::leak(Box::new(Zone::utc()));
        let now = crate::classify::testutil::NOW;
        let msg = Box::leak(Box::new(parse(
            raw,
            &ParseOptions {
                now_unix_secs: now,
                zone,
            },
        )));
        let src = SourceMeta {
            transport: Transport::Udp,
            dest_port: 5514,
            source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
            listener_id: id,
        };
        classify(
            msg,
            &src,
            now,
            &LISTENERS,
            crate::classify::testutil::scratch(),
        )
    }

    #[test]
    fn listener_products() {
        let c = on(
            "CISCO_ESA",
            "<134>Mar 15 11:32:40 esa-1 mail_logs: Info: MID 1 ICID 2",
        );
        assert_eq!(c.sourcetype, "cisco:esa:textmail");
        assert_eq!(c.source, "esa:textmail");
        assert_eq!(c.index, "email");
        let c = on(
            "CISCO_ESA",
            "<134>Mar 15 11:32:40 esa-1 amp: File not uploaded for analysis",
        );
        assert_eq!(c.sourcetype, "cisco:esa:amp");
        let c = on(
            "CISCO_ESA",
            "<134>Mar 15 11:32:40 esa-1 other: nothing known",
        );
        assert_eq!(c.sourcetype, "cisco:esa");
        assert_eq!(c.template, crate::classify::Template::HdrMsg);
        let c = on(
            "CISCO_WSA",
            "<134>Mar 15 11:32:40 wsa-1 1710501160.123 45 10.0.0.1 TCP_MISS/200",
        );
        assert_eq!(c.sourcetype, "cisco:wsa:squid");
        assert_eq!(c.index, "netproxy");
        let c = on(
            "CISCO_WSA",
            "<134>Mar 15 11:32:40 wsa-1 l4tm: Info: Begin Logfile",
        );
        assert_eq!(c.sourcetype, "cisco:wsa:l4tm");
        let c = on(
            "CISCO_MERAKI",
            "<134>Mar 15 11:32:40 mx-1 flows allow src=10.0.0.1",
        );
        assert_eq!(c.sourcetype, "meraki");
        // Meraki's own header: an epoch stamp where RFC 5424's would be.
        let c = on(
            "CISCO_MERAKI",
            "<134>1 1710501160.123456 mx-1 flows src=1.1.1.186 dst=8.8.8.8 pattern: allow all",
        );
        assert_eq!(c.sourcetype, "meraki");
        assert_eq!(c.index, "netfw");
        let c = on(
            "CISCO_MS",
            "<134>Mar 15 11:32:40 ms-1 authp: Using server x",
        );
        assert_eq!(c.sourcetype, "cisco:ms");
        let c = on(
            "CISCO_MM",
            "<134>Mar 15 11:32:40 mm-1 audit: user x logged in",
        );
        assert_eq!(c.sourcetype, "cisco:mm:audit");
        // A listener product whose message another parser identified keeps that parser's.
        let c = on(
            "CISCO_MS",
            "<134>Mar 15 11:32:40 ms-1 %SYS-5-CONFIG_I: Configured",
        );
        assert_eq!(c.sourcetype, "cisco:ios");
    }

    #[test]
    fn esa_patterns_compile() {
        assert_eq!(ESA_PATTERNS.len(), super::ESA_STREAMS.len());
        let textmail = ESA_PATTERNS[8].as_ref().unwrap();
        assert!(textmail.is_match(b"Info: MID 12345 ICID 1"));
        assert!(ESA_PATTERNS[0].as_ref().unwrap().is_match(b"x SHA256: abc"));
        assert!(ESA_PATTERNS[2].is_none());
    }
}
