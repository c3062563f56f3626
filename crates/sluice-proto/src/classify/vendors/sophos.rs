//! Sophos (SC4S `addons/sophos/`): XG/SFOS firewall logs (`device="SFW"`, sourcetype by
//! `log_type`), and the Web Appliance on its dedicated listener / netsource.

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vtime;

use super::util::contains;
use memchr::memmem;
use std::sync::LazyLock;

pub static VENDOR: Vendor = Vendor {
    name: "sophos",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-sophos_webappliance",
            topic: Topic::NetSource,
            order: "sophos/app-netsource-sophos_webappliance.conf",
            when: When::NetSource(&["sophos_webappliance"]),
            parse: webappliance,
        },
        App {
            name: "app-syslog-sophos_firewall_xg",
            topic: Topic::Syslog,
            order: "sophos/app-syslog-sophos_firewall_xg.conf",
            // `device="SFW"` or `device_name="SFW"` (checked by the parser).
            when: When::Token(&["=\"SFW\""]),
            parse: firewall_xg,
        },
    ],
};

const WEBAPPLIANCE: usize = 0;
const XG: usize = 1;

/// `log_type="..."` values and the update they select, in SC4S's order (the last match wins).
const XG_TYPES: &[&[u8]] = &[
    b"log_type=\"ATP\"",
    b"log_type=\"Anti-Spam\"",
    b"log_type=\"Anti-Virus\"",
    b"log_type=\"Content Filtering\"",
    b"log_type=\"Event\"",
    b"log_type=\"Firewall\"",
    b"log_type=\"SSL\"",
    b"log_type=\"Sandbox\"",
    b"log_type=\"System Health\"",
    b"log_type=\"Heartbeat\"",
    b"log_type=\"WAF\"",
    b"log_type=\"Wireless Protection\"",
    b"log_type=\"IDP\"",
];

static KEYS: &[Key] = &[
    Key::new("sophos", "webappliance", "sophos:webappliance", "netproxy"),
    Key::new("sophos", "xg", "sophos:xg:logs", "netdlp")
        .class("logs")
        .template(Template::MsgOnly),
    // One per XG_TYPES entry, same order.
    Key::update("sophos:xg:atp", "").class("atp"),
    Key::update("sophos:xg:anti_spam", "").class("anti_spam"),
    Key::update("sophos:xg:anti_virus", "").class("anti_virus"),
    Key::update("sophos:xg:content_filtering", "").class("content_filtering"),
    Key::update("sophos:xg:event", "").class("event"),
    Key::update("sophos:xg:firewall", "").class("firewall"),
    Key::update("sophos:xg:ssl", "").class("ssl"),
    Key::update("sophos:xg:sandbox", "").class("sandbox"),
    Key::update("sophos:xg:system_health", "").class("system_health"),
    Key::update("sophos:xg:heartbeat", "").class("heartbeat"),
    Key::update("sophos:xg:waf", "").class("waf"),
    Key::update("sophos:xg:wireless_protection", "").class("wireless_protection"),
    Key::update("sophos:xg:idp", "").class("idp"),
];

static DEVICE_SFW: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"device=\"SFW\""));
static DEVICE_NAME_SFW: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"device_name=\"SFW\""));
static LOG_TYPE: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"log_type="));

/// Which of [`XG_TYPES`] occur in `m` (bit `i` for entry `i`): one pass over the
/// `log_type=` occurrences instead of a search per entry.
fn xg_types(m: &[u8]) -> u32 {
    let mut found = 0;
    for at in LOG_TYPE.find_iter(m) {
        for (i, t) in XG_TYPES.iter().enumerate() {
            if m[at..].starts_with(t) {
                found |= 1 << i;
            }
        }
    }
    found
}

fn firewall_xg<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    // SC4S's filter reads `a or b and c`, which syslog-ng evaluates as `a or (b and c)`.
    if !(contains(&DEVICE_SFW, m) || (contains(&DEVICE_NAME_SFW, m) && contains(&LOG_TYPE, m))) {
        return false;
    }
    out.key(&KEYS[XG]);
    let found = xg_types(m);
    for i in 0..XG_TYPES.len() {
        if found & (1 << i) != 0 {
            out.key(&KEYS[XG + 1 + i]);
        }
    }
    true
}

fn webappliance<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified {
        return false;
    }
    if input.netsource.vendor_product != "sophos_webappliance" {
        return false;
    }
    out.key(&KEYS[WEBAPPLIANCE]);
    // The event time is the epoch in `t=`.
    if let Some(p) = kv::pairs(input.body, b' ').find(|p| p.key == b"t")
        && let Some(ts) = vtime::parse_epoch(p.value, false)
    {
        out.time(ts);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{XG_TYPES, xg_types};
    use crate::classify::testutil::classify_line;

    #[test]
    fn log_types_in_one_pass() {
        let m =
            br#"log_type="Firewall" x log_type="SSL" log_type="Event"x log_type= log_type="WAF"#;
        let want = XG_TYPES
            .iter()
            .enumerate()
            .filter(|(_, t)| crate::classify::vendors::util::find(m, t).is_some())
            .fold(0, |acc, (i, _)| acc | 1 << i);
        assert_eq!(xg_types(m), want);
        assert_eq!(want.count_ones(), 3);
        assert_eq!(xg_types(b"no types"), 0);
    }

    #[test]
    fn xg_by_log_type() {
        let c = classify_line(
            r#"<30> device="SFW" date=2022-04-25 time=15:27:08 device_name="XG430" log_type="Firewall" log_component="Firewall Rule""#,
        );
        assert_eq!(c.sourcetype, "sophos:xg:firewall");
        assert_eq!(c.index, "netdlp");
        assert_eq!(c.vendor, "sophos");
        assert_eq!(c.product, "xg");
        let c = classify_line(
            r#"<30>device="SFW" date=2022-04-25 log_type="Content Filtering" log_component="HTTP""#,
        );
        assert_eq!(c.sourcetype, "sophos:xg:content_filtering");
        let c = classify_line(r#"<30>device="SFW" date=2022-04-25 log_type="Other""#);
        assert_eq!(c.sourcetype, "sophos:xg:logs");
        let c = classify_line(r#"<30>device_name="SFW" date=2022-04-25 x=1"#);
        assert_ne!(c.vendor, "sophos");
    }
}
