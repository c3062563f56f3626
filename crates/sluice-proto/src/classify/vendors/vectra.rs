//! Vectra Cognito (SC4S `addons/vectra/`): CEF from `Vectra Networks` / `X Series`, sorted
//! by event class (`vectra:cognito:<kind>`), and JSON events with PROGRAM `vectra_json*`
//! (`vectra:cognito:<kind>:json`, time from `vectra_timestamp`, event text the JSON).

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vendors::cef;
use crate::classify::vendors::util::find_lit;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "vectra",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-vectra",
            topic: Topic::Sub("cef"),
            order: "vectra/app-cef-vectra.conf",
            when: When::Check(cef_check),
            parse: cognito_cef,
        },
        App {
            name: "app-syslog-vectra-json",
            topic: Topic::Pgm,
            order: "vectra/app-syslog-vectra_json.conf",
            when: When::ProgramPrefix(&["vectra_json"]),
            parse: cognito_json,
        },
    ],
};

/// CEF: the base, then one key per event class in SC4S's order (`ACCOUNT_DETECT` is also
/// what PROGRAM `vectra_cef_account_detection` sets the class to).
const CEF_DETECT: usize = 0;
const CEF_CLASSES: [(&[u8], usize); 7] = [
    (b"accountdetect", 1),
    (b"asc", 2),
    (b"audit", 3),
    (b"campaigns", 4),
    (b"health", 5),
    (b"hsc", 6),
    (b"lockdown", 7),
];
const JSON_DETECT: usize = 8;
const JSON_HOST_SCORING: usize = 9;
const JSON_HOST_DETECT: usize = 10;
const JSON_HOST_LOCKDOWN: usize = 11;
const JSON_ACCOUNT_SCORING: usize = 12;
const JSON_ACCOUNT_DETECT: usize = 13;
const JSON_ACCOUNT_LOCKDOWN: usize = 14;
const JSON_CAMPAIGNS: usize = 15;
const JSON_AUDIT: usize = 16;
const JSON_HEALTH: usize = 17;

static KEYS: &[Key] = &[
    Key::update("vectra:cognito:detect", ""),
    Key::update("vectra:cognito:accountdetect", "").class("accountdetect"),
    Key::update("vectra:cognito:accountscoring", "").class("asc"),
    Key::update("vectra:cognito:audit", "").class("audit"),
    Key::update("vectra:cognito:campaigns", "").class("campaigns"),
    Key::update("vectra:cognito:health", "").class("health"),
    Key::update("vectra:cognito:hostscoring", "").class("hsc"),
    Key::update("vectra:cognito:accountlockdown", "").class("lockdown"),
    Key::new(
        "vectra",
        "cognito detect",
        "vectra:cognito:detect:json",
        "main",
    )
    .class("detect")
    .template(Template::MsgOnly),
    Key::update("vectra:cognito:hostscoring:json", "").class("hostscoring"),
    Key::update("vectra:cognito:hostdetect:json", "").class("hostdetect"),
    Key::update("vectra:cognito:hostlockdown:json", "").class("hostlockdown"),
    Key::update("vectra:cognito:accountscoring:json", "").class("accountscoring"),
    Key::update("vectra:cognito:accountdetect:json", "").class("accountdetect"),
    Key::update("vectra:cognito:accountlockdown:json", "").class("accountlockdown"),
    Key::update("vectra:cognito:campaigns:json", "").class("campaigns"),
    Key::update("vectra:cognito:audit:json", "").class("audit"),
    Key::update("vectra:cognito:health:json", "").class("health"),
];

fn cef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Vectra Networks")
        && out.nv.contains(cef::NV_PRODUCT, b"X Series")
}

fn cognito_cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !cef_check(input, out) {
        return false;
    }
    // PROGRAM as the CEF parser left it (it unsets it for a message starting `CEF:0`).
    let program = match out.program {
        Some(p) => p,
        None => input.program,
    };
    let class = if program == Some(b"vectra_cef_account_detection") {
        &b"accountdetect"[..]
    } else {
        out.nv.get(cef::NV_CLASS).unwrap_or_default()
    };
    out.program = Some(None);
    out.pid = Some(None);
    out.key(&KEYS[CEF_DETECT]);
    if let Some(&(_, key)) = CEF_CLASSES.iter().find(|(c, _)| *c == class) {
        out.key(&KEYS[key]);
    }
    true
}

/// `"name":` in the JSON text, as SC4S's `message('\"name\"\:')`.
fn has_member(m: &[u8], quoted_colon: &'static [u8]) -> bool {
    memchr::memmem::find(m, quoted_colon).is_some()
}

fn cognito_json<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static STAMP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""vectra_timestamp":\s"([^"]+)""#).expect("static regex"));
    static DASH_COLON: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"-:\s").expect("static regex"));
    static HOST_MEMBER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""host_\w+":"#).expect("static regex"));
    static HOST_SCORING: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""HOST\sSCORING""#).expect("static regex"));
    static ACCOUNT_SCORING: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""ACCOUNT\sSCORING""#).expect("static regex"));
    if !input.program.is_some_and(|p| p.starts_with(b"vectra_json")) {
        return false;
    }
    let body = input.body;
    // The regexp-parser is not optional: without the stamp the application fails.
    if find_lit!(body, b"\"vectra_timestamp\":").is_none() {
        return false;
    }
    let Some(stamp) = STAMP.captures(body).and_then(|c| c.get(1)) else {
        return false;
    };
    let stamp = &body[stamp.range()];
    match vtime::strptime("%s", stamp, input.zone, input.now_unix_secs) {
        Some(ts) => out.time(ts),
        None => out.field(
            "sc4s_error",
            Value::Concat("dtparse: Expected: %s; Actual: ", stamp),
        ),
    }
    // `subst('\-\:\s', "", value("MESSAGE"))`: the first `-:` and blank go. Vectra puts them
    // first; elsewhere in the text they stay (the text would have to be rebuilt).
    let m = match DASH_COLON.find(body) {
        Some(d) if d.start() == 0 => &body[d.end()..],
        _ => body,
    };
    if m.len() != body.len() {
        out.message(m);
    }
    out.key(&KEYS[JSON_DETECT]);
    let detection = has_member(m, b"\"detection_id\":");
    let success = has_member(m, b"\"success\":");
    let keys: [(bool, usize); 3] = if HOST_MEMBER.is_match(m) {
        [
            (HOST_SCORING.is_match(m), JSON_HOST_SCORING),
            (detection, JSON_HOST_DETECT),
            (success, JSON_HOST_LOCKDOWN),
        ]
    } else if has_member(m, b"\"account_uid\":") {
        [
            (ACCOUNT_SCORING.is_match(m), JSON_ACCOUNT_SCORING),
            (detection, JSON_ACCOUNT_DETECT),
            (success, JSON_ACCOUNT_LOCKDOWN),
        ]
    } else if has_member(m, b"\"campaign_id\":") {
        [(true, JSON_CAMPAIGNS), (false, 0), (false, 0)]
    } else if has_member(m, b"\"role\":") {
        [(true, JSON_AUDIT), (false, 0), (false, 0)]
    } else if has_member(m, b"\"type\":") {
        [(true, JSON_HEALTH), (false, 0), (false, 0)]
    } else {
        [(false, 0); 3]
    };
    // Consecutive updates: the last whose condition holds wins.
    for (holds, key) in keys {
        if holds {
            out.key(&KEYS[key]);
        }
    }
    true
}

#[cfg(test)]
mod tests;
