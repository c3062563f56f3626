//! JSON payloads without a PROGRAM (SC4S `conflib/fallback/app-fallback-json.conf`):
//! sourcetype `json`, vendor `json`, product `generic`, template `t_msg_trim`; then the
//! `json` topic for vendor specifics (`Topic::Sub("json")`, e.g. Zscaler LSS).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "json",
    keys: KEYS,
    apps: &[App {
        name: "app-fallback-json",
        topic: Topic::Syslog,
        order: "fallback/app-fallback-json.conf",
        when: When::BodyPrefix(&["{"]),
        parse: json,
    }],
};

static KEYS: &[Key] = &[Key::new("json", "generic", "json", "main").template(Template::MsgTrim)];

fn json<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program.is_some() || !input.body.starts_with(b"{") {
        return false;
    }
    out.key(&KEYS[0]);
    input.topic("json", out);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn json_body() {
        let c = classify_line("<13>Mar 31 02:08:27 h1 {\"a\": 1, \"b\": \"x y\"}");
        assert_eq!(c.sourcetype, "json");
        assert_eq!(c.vendor, "json");
        assert_eq!(c.template, crate::classify::Template::MsgTrim);
        let c = classify_line("<13>Mar 31 02:08:27 h1 app: {\"a\": 1}");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
