//! Barracuda (SC4S `addons/barracuda/`): the WAF, whose header has an ISO stamp with a
//! space before the zone and the log type (`SYS`, `WF`, `TR`, `AUDIT`, `NF`) in place of
//! PROGRAM; and `barracuda:<logType>` key=value logs on the dedicated listener / netsource.

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::{Inline, Value};
use crate::classify::vtime;
use crate::message::Format;

pub static VENDOR: Vendor = Vendor {
    name: "barracuda",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-barracuda_waf",
            topic: Topic::AlmostSyslog,
            order: "barracuda/app-almost-syslog-barracuda_waf.conf",
            when: When::Token(&[" SYS ", " WF ", " TR ", " AUDIT ", " NF "]),
            parse: waf_header,
        },
        App {
            name: "app-netsource-barracuda_syslog",
            topic: Topic::NetSource,
            order: "barracuda/app-netsource-barracuda_syslog.conf",
            when: When::NetSource(&["barracuda_syslog"]),
            parse: netsource,
        },
        App {
            name: "app-syslog-barracuda_waf",
            topic: Topic::Pgm,
            order: "barracuda/app-syslog-barracuda_waf.conf",
            when: When::Program(&["SYS", "WF", "TR", "AUDIT", "NF"]),
            parse: waf,
        },
    ],
};

const SYSLOG: usize = 0;
const NF: usize = 1;
const WAF_INDEX: usize = 2;
const WAF: usize = 3;
const WAF_TYPES: usize = 4;

static KEYS: &[Key] = &[
    Key::new("barracuda", "syslog", "barracuda:syslog", "netops").template(Template::MsgOnly),
    Key::update("", "netfw"),
    Key::update("", "netwaf"),
    Key::new("barracuda", "waf", "barracuda:syslog", "netwaf"),
    // One per log type, in `LOG_TYPES` order.
    Key::update("barracuda:system", ""),
    Key::update("barracuda:waf", ""),
    Key::update("barracuda:web", ""),
    Key::update("barracuda:audit", ""),
    Key::update("barracuda:firewall", ""),
];

const LOG_TYPES: [&[u8]; 5] = [b"SYS", b"WF", b"TR", b"AUDIT", b"NF"];

/// `<PRI>YYYY-mm-dd HH:MM:SS.fff +zzzz  host TYPE message`: read as RFC 3164 with the log
/// type as PROGRAM.
fn waf_header<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^<\d+> *(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{4})\s{1,2}([^ ]+) (SYS|WF|TR|AUDIT|NF) (.*)",
        )
        .expect("static regex")
    });
    let raw = input.msg.raw;
    let Some(c) = HEADER.caps(raw) else {
        return false;
    };
    let (Some(stamp), Some(host), Some(kind), Some(message)) =
        (c.get(1), c.get(2), c.get(3), c.get(4))
    else {
        return false;
    };
    let Some(ts) = vtime::strptime(
        "%Y-%m-%d %H:%M:%S.%f %z",
        &raw[stamp.range()],
        input.zone,
        input.now_unix_secs,
    ) else {
        // SC4S's date-parser fails: the repair does not happen.
        return false;
    };
    out.time(ts);
    out.host(&raw[host.range()]);
    out.program = Some(Some(&raw[kind.range()]));
    out.pid = Some(None);
    out.message(&raw[message.range()]);
    out.format = Some(Format::Rfc3164);
    true
}

fn waf<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program else {
        return false;
    };
    // SC4S also requires MSGHDR to end in the type (no PID).
    let Some(i) = LOG_TYPES.iter().position(|t| *t == p) else {
        return false;
    };
    if input.pid.is_some() {
        return false;
    }
    out.key(&KEYS[WAF]);
    out.key(&KEYS[WAF_TYPES + i]);
    true
}

fn netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if out.identified
        || !(ns.vendor_product == "barracuda_syslog"
            || (ns.vendor == "barracuda" && ns.product == "syslog"))
    {
        return false;
    }
    out.key(&KEYS[SYSLOG]);
    let log_type = kv::pairs(input.body, b' ')
        .filter(|p| p.key == b"logType")
        .last()
        .map(|p| p.value)
        .filter(|v| !v.is_empty());
    if let Some(t) = log_type {
        let mut lower = [0u8; 32];
        if let Some(buf) = lower.get_mut(..t.len()) {
            buf.copy_from_slice(t);
            buf.make_ascii_lowercase();
            if let Some(st) = Inline::concat(&[b"barracuda:", buf]) {
                out.sourcetype = Some(Value::Inline(st));
            }
            if let Some(class) = Inline::concat(&[buf]) {
                out.class = Some(Value::Inline(class));
            }
            let has = |n: &[u8]| memchr::memmem::find(buf, n).is_some();
            if has(b"nf") {
                out.key(&KEYS[NF]);
            }
            if has(b"wf") || has(b"tr") {
                out.key(&KEYS[WAF_INDEX]);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn waf_types() {
        let c = classify_line(
            "<134>2024-03-13 19:33:53.511 +0000  waf1 SYS ADMIN_M ALER 51001 Account has been locked",
        );
        assert_eq!(c.sourcetype, "barracuda:system");
        assert_eq!(c.index, "netwaf");
        assert_eq!(c.product, "waf");
        let c = classify_line(
            "<134>2024-03-13 23:54:21.543 +0000  waf5 NF INFO TCP 1.1.1.117 52676 1.1.1.2 80 ALLOW",
        );
        assert_eq!(c.sourcetype, "barracuda:firewall");
        let c = classify_line("<134>2024-03-13 23:54:21.543 +0000  waf5 XX INFO TCP");
        assert_ne!(c.vendor, "barracuda");
    }
}
