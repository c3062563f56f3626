//! Trend Micro Deep Security over CEF (SC4S `addons/trendmicro/app-cef-trendmicro_deep_*.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "trendmicro",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-trendmicro_deep_agent",
            topic: Topic::Sub("cef"),
            order: "trendmicro/app-cef-trendmicro_deep_agent.conf",
            when: When::Check(agent_check),
            parse: agent,
        },
        App {
            name: "app-cef-trendmicro_deep_manager",
            topic: Topic::Sub("cef"),
            order: "trendmicro/app-cef-trendmicro_deep_manager.conf",
            when: When::Check(manager_check),
            parse: manager,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("deepsecurity", "epintel"),
    Key::update("deepsecurity-intrusion_prevention", "").class("intrusion-prevention"),
    Key::update("deepsecurity-firewall", "").class("firewall"),
    Key::update("deepsecurity-antimalware", "epav").class("antimalware"),
    Key::update("deepsecurity-integrity_monitoring", "").class("integrity-monitoring"),
    Key::update("deepsecurity-log_inspection", "").class("log-inspection"),
    Key::update("deepsecurity-web_reputation", "").class("web-reputation"),
    Key::update("deepsecurity-app_control", "").class("app-control"),
    Key::update("deepsecurity-system_events", "epintel"),
];

/// The filter of [`agent`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn agent_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Trend Micro")
        && out.nv.contains(cef::NV_PRODUCT, b"Deep Security Agent")
}

fn agent<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !agent_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    let class = out.nv.get(cef::NV_CLASS).unwrap_or_default();
    if let Some(k) = agent_key(class) {
        out.key(&KEYS[k]);
    }
    true
}

/// The event-id ranges of SC4S's filters, in their order.
fn agent_key(id: &[u8]) -> Option<usize> {
    if id.is_empty() || !id.iter().all(u8::is_ascii_digit) || id.len() > 9 {
        return None;
    }
    let n: u32 = std::str::from_utf8(id).ok()?.parse().ok()?;
    let len = id.len();
    let first = id[0];
    if n == 10
        || (len == 3 && (b'2'..=b'3').contains(&first))
        || (len == 3 && (b'5'..=b'7').contains(&first))
        || (len == 3 && (800..=849).contains(&n))
        || (len == 7 && first == b'1')
    {
        Some(1)
    } else if n == 20 || n == 21 || (len == 3 && first == b'1') {
        Some(2)
    } else if len == 7 && first == b'4' {
        Some(3)
    } else if n == 30 || (len == 7 && first == b'2') {
        Some(4)
    } else if n == 40 || (len == 7 && first == b'3') {
        Some(5)
    } else if len == 7 && first == b'5' {
        Some(6)
    } else if len == 7 && first == b'6' {
        Some(7)
    } else {
        None
    }
}

/// The filter of [`manager`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn manager_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Trend Micro")
        && out.nv.contains(cef::NV_PRODUCT, b"Deep Security Manager")
}

fn manager<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !manager_check(input, out) {
        return false;
    }
    out.key(&KEYS[8]);
    true
}
