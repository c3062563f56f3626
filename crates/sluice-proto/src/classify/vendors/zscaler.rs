//! Zscaler (SC4S `addons/zscaler/`): NSS web/firewall/DNS/tunnel/audit/sandbox feeds
//! (tab-separated `key=value` with `vendor=Zscaler`), NSS alerts (`ZscalerNSS:` after a
//! bracketed host, repaired as almost-syslog), and LSS/ZPA JSON records (the `json` topic).

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vtime;
use crate::message::Format;

pub static VENDOR: Vendor = Vendor {
    name: "zscaler",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-zscaler-nss-alerts",
            topic: Topic::AlmostSyslog,
            order: "zscaler/app-almost-syslog-zscaler-nss-alerts.conf",
            when: When::Token(&["] ZscalerNSS: "]),
            parse: nss_alerts_header,
        },
        App {
            name: "app-json-zscaler_lss",
            topic: Topic::Sub("json"),
            order: "zscaler/app-json-zscaler_lss.conf",
            // `lss` takes a record only with one of these members.
            when: When::Check(lss_members),
            parse: lss,
        },
        App {
            name: "app-syslog-zscaler_nss_alerts",
            topic: Topic::Pgm,
            order: "zscaler/app-syslog-zscaler_nss_alerts.conf",
            when: When::Program(&["ZscalerNSS"]),
            parse: nss_alerts,
        },
        App {
            name: "app-syslog-zscaler_nss_proxy",
            topic: Topic::Syslog,
            order: "zscaler/app-syslog-zscaler_nss_proxy.conf",
            // `vendor=Zscaler` / `vendor="Zscaler` (the parser reads the pair); one token for both
            // keeps the scan small.
            when: When::Token(&["vendor="]),
            parse: nss,
        },
    ],
};

const ALERTS: usize = 0;
const DNS: usize = 1;
const FW: usize = 2;
const WEB: usize = 3;
const AUDIT: usize = 4;
const SANDBOX: usize = 5;
const TUNNEL: usize = 6;
const WEB_OTHER: usize = 7;
const LSS_APP: usize = 8;
const LSS_BBA: usize = 9;
const LSS_CONNECTOR: usize = 10;
const LSS_AUTH: usize = 11;
const LSS_AUDIT: usize = 12;

static KEYS: &[Key] = &[
    Key::new("zscaler", "nss", "zscalernss-alerts", "netops").class("alerts"),
    Key::new("zscaler", "nss", "zscalernss-dns", "netdns").class("dns"),
    Key::new("zscaler", "nss", "zscalernss-fw", "netfw").class("fw"),
    Key::new("zscaler", "nss", "zscalernss-web", "netproxy").class("web"),
    Key::new("", "zia", "zscalernss-zia-audit", "netops").class("audit"),
    Key::new("", "zia", "zscalernss-zia-sandbox", "main").class("sandbox"),
    Key::new("zscaler", "nss", "zscalernss-tunnel", "netops").class("tunnel"),
    Key::new("zscaler", "nss", "zscalernss-web", "netproxy"),
    Key::new("zscaler", "lss", "zscalerlss-zpa-app", "netproxy"),
    Key::new("zscaler", "lss", "zscalerlss-zpa-bba", "netproxy"),
    Key::new("zscaler", "lss", "zscalerlss-zpa-connector", "netproxy"),
    Key::new("zscaler", "lss", "zscalerlss-zpa-auth", "netproxy"),
    Key::new("zscaler", "lss", "zscalerlss-zpa-audit", "netproxy"),
];

/// `<PRI> Mmm dd hh:mm:ss [host] ZscalerNSS: ...`: the host is bracketed, so the header is
/// read again with the brackets removed.
fn nss_alerts_header<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^<\d+> ?(\w\w\w [ \d]?\d \d\d:\d\d:\d\d) \[([^\]]+)\] (ZscalerNSS): (.*)")
            .expect("static regex")
    });
    let raw = input.msg.raw;
    let Some(c) = HEADER.caps(raw) else {
        return false;
    };
    let (Some(stamp), Some(host), Some(program), Some(message)) =
        (c.get(1), c.get(2), c.get(3), c.get(4))
    else {
        return false;
    };
    let (stamp, host, program, message) = (
        &raw[stamp.range()],
        &raw[host.range()],
        &raw[program.range()],
        &raw[message.range()],
    );
    if let Some(ts) = vtime::strptime("%b %d %H:%M:%S", stamp, input.zone, input.now_unix_secs) {
        out.time(ts);
    }
    out.host(host);
    out.program = Some(Some(program));
    out.pid = Some(None);
    out.message(message);
    out.format = Some(Format::Rfc3164);
    // SC4S's repair does not identify the source: the PROGRAM application below does.
    true
}

fn nss_alerts<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"ZscalerNSS") {
        return false;
    }
    out.key(&KEYS[ALERTS]);
    true
}

/// The NSS feeds: `[stamp\t]key=value\tkey=value...` with `vendor=Zscaler`.
fn nss<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static TABBED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\t[^\t]+\t").expect("static regex"));
    let m = input.body;
    if !TABBED.is_match(m) {
        return false;
    }
    let (mut vendor, mut product) = (None, None);
    for p in kv::pairs(m, b'\t') {
        match p.key {
            b"vendor" => vendor = Some(p.value),
            b"product" => product = Some(p.value),
            _ => {}
        }
    }
    if vendor.is_none_or(|v| crate::classify::vendors::util::find_lit!(v, b"Zscaler").is_none()) {
        return false;
    }
    let product = product.unwrap_or_default();
    let has = |n: &[u8]| crate::classify::vendors::util::find(product, n).is_some();
    let key = if has(b"dns") {
        DNS
    } else if has(b"fw") {
        FW
    } else if has(b"NSS") {
        WEB
    } else if has(b"audit") {
        AUDIT
    } else if has(b"sandbox") {
        SANDBOX
    } else if has(b"tunnel") || has(b"IKE") {
        TUNNEL
    } else {
        WEB_OTHER
    };
    out.key(&KEYS[key]);
    // Without a syslog header the line starts with the feed's `%Y-%m-%d %H:%M:%S` stamp,
    // which syslog-ng reads as the message time.
    if input.format() == Format::Unparsed
        && let Some(stamp) = m.get(..19)
        && let Some(ts) =
            vtime::strptime("%Y-%m-%d %H:%M:%S", stamp, input.zone, input.now_unix_secs)
    {
        out.time(ts);
    }
    true
}

/// The raw value of top-level-looking member `"key"` of a JSON object: a string's contents
/// (escapes kept) or a scalar's text. A light scan, enough for SC4S's "has a non-empty
/// value" tests on flat LSS records.
fn json_member<'a>(text: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    // Non-overlapping occurrences, one searcher for all of them.
    for at in memchr::memmem::find_iter(text, key) {
        let from = at + key.len();
        if at == 0 || text[at - 1] != b'"' || text.get(from) != Some(&b'"') {
            continue;
        }
        let rest = &text[from + 1..];
        let rest = rest.trim_ascii_start();
        let Some(rest) = rest.strip_prefix(b":") else {
            continue;
        };
        let rest = rest.trim_ascii_start();
        if let Some(s) = rest.strip_prefix(b"\"") {
            let mut j = 0;
            while j < s.len() {
                match s[j] {
                    b'\\' => j += 2,
                    b'"' => return Some(&s[..j]),
                    _ => j += 1,
                }
            }
            return None;
        }
        let end = rest
            .iter()
            .position(|&b| b == b',' || b == b'}' || b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        return Some(&rest[..end]);
    }
    None
}

/// A member name `lss` needs: `LogTimestamp` (the LSS records), `ClientAuditUpdate` or
/// `CreationTime` (the audit record). Without one it takes nothing and writes nothing.
fn lss_members<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    use crate::classify::vendors::util::find_lit;
    let m = input.body;
    find_lit!(m, b"LogTimestamp").is_some()
        || find_lit!(m, b"ClientAuditUpdate").is_some()
        || find_lit!(m, b"CreationTime").is_some()
}

fn lss<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    let set = |k: &[u8]| json_member(m, k).is_some_and(|v| !v.is_empty());
    let key = if set(b"ClientZEN") && set(b"AppGroup") && set(b"Application") {
        Some(LSS_APP)
    } else if set(b"Exporter") && set(b"Customer") && set(b"ConnectionID") {
        Some(LSS_BBA)
    } else if set(b"Connector")
        && ((set(b"Customer") && set(b"ConnectorGroup"))
            || (set(b"ProcessMemoryUtilization") && set(b"SystemMemoryUtilization")))
    {
        Some(LSS_CONNECTOR)
    } else if json_member(m, b"SAMLAttributes").is_some() && set(b"Customer") {
        Some(LSS_AUTH)
    } else {
        None
    };
    const FORMATS: &[&str] = &["%a %b %d %H:%M:%S %Y"];
    let stamp = json_member(m, b"LogTimestamp")
        .and_then(|s| vtime::strptime_any(FORMATS, s, input.zone, input.now_unix_secs));
    if let Some(ts) = stamp {
        if let Some(k) = key {
            out.key(&KEYS[k]);
        }
        out.time(ts);
        return true;
    }
    // The LSS branch failed (no LogTimestamp): SC4S tries the audit record.
    let mut took = false;
    if set(b"ClientAuditUpdate") {
        out.key(&KEYS[LSS_AUDIT]);
        took = true;
    }
    const AUDIT_FORMATS: &[&str] = &["%Y-%m-%dT%H:%M:%S.%fZ", "%a %b %d %H:%M:%S %Y"];
    if let Some(ts) = json_member(m, b"CreationTime")
        .and_then(|s| vtime::strptime_any(AUDIT_FORMATS, s, input.zone, input.now_unix_secs))
    {
        out.time(ts);
        took = true;
    }
    took
}

#[cfg(test)]
mod tests {
    use super::json_member;
    use crate::classify::testutil::classify_line;

    #[test]
    fn json_members() {
        let j = br#"{"A": "x", "B":12, "C": "", "D" : "q\"r"}"#;
        assert_eq!(json_member(j, b"A"), Some(&b"x"[..]));
        assert_eq!(json_member(j, b"B"), Some(&b"12"[..]));
        assert_eq!(json_member(j, b"C"), Some(&b""[..]));
        assert_eq!(json_member(j, b"D"), Some(&br#"q\"r"#[..]));
        assert_eq!(json_member(j, b"E"), None);
    }

    #[test]
    fn nss_feeds() {
        let c = classify_line(
            "2024-04-14 03:39:44\treason=Allowed\tprotocol=HTTPS\tproduct=NSS\tvendor=Zscaler\thostname=x",
        );
        assert_eq!(c.sourcetype, "zscalernss-web");
        assert_eq!(c.index, "netproxy");
        assert_eq!(c.vendor, "zscaler");
        let c = classify_line(
            "2024-04-14 15:36:02\tRecordtype=Tunnel Samples\tvendor=Zscaler\tproduct=IKEv2\thost=z",
        );
        assert_eq!(c.sourcetype, "zscalernss-tunnel");
        assert_eq!(c.index, "netops");
        let c = classify_line("<13>Apr 14 03:39:44 h1 a=1\tproduct=fw\tvendor=Zscaler");
        assert_eq!(c.sourcetype, "zscalernss-fw");
        let c = classify_line("<13>Apr 14 03:39:44 h1 a=1\tproduct=fw\tvendor=Other");
        assert_ne!(c.vendor, "zscaler");
    }

    #[test]
    fn nss_alerts() {
        let c = classify_line(
            "<114>Apr 14 03:39:44 [10.0.0.1] ZscalerNSS: Zscaler cloud configuration connection to  10.0.0.2:443 lost",
        );
        assert_eq!(c.sourcetype, "zscalernss-alerts");
        assert_eq!(c.index, "netops");
    }

    /// The member check passes the records `lss` takes and skips other JSON.
    #[test]
    fn lss_members_check() {
        use crate::classify::dispatch::check_verdict;
        let app = "app-json-zscaler_lss";
        for (line, st) in [
            (
                r#"{"LogTimestamp": "Sun Apr 14 08:00:13 2024","Customer": "c","Connector": "k","ConnectorGroup": "g"}"#,
                "zscalerlss-zpa-connector",
            ),
            (
                r#"{"ClientAuditUpdate": "x","CreationTime": "2024-04-14T08:00:13.000Z"}"#,
                "zscalerlss-zpa-audit",
            ),
        ] {
            assert_eq!(check_verdict(line, app), Some(true), "{line}");
            assert_eq!(classify_line(line).sourcetype, st, "{line}");
        }
        let line = r#"{"Customer": "c","Connector": "k","ConnectorGroup": "g"}"#;
        assert_eq!(check_verdict(line, app), Some(false));
        assert_eq!(classify_line(line).sourcetype, "json");
    }
}
