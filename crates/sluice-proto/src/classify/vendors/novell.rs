//! NetIQ (Novell) Access Manager JSON events (SC4S `addons/novell/app-json-novell_netiq.conf`,
//! `json` topic): `appName` "Novell Access Manager"; source `novell:netiq:<component>`, time
//! from `timeStamp` (`%a, %d %b %Y %H:%M:%S %z`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::Value;
use crate::classify::vendors::util::json_scalar;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "novell",
    keys: KEYS,
    apps: &[App {
        name: "app-json-novell_netiq",
        topic: Topic::Sub("json"),
        order: "novell/app-json-novell_netiq.conf",
        when: When::Check(check),
        parse: netiq,
    }],
};

static KEYS: &[Key] = &[Key::new("novell", "netiq", "novell:netiq", "netauth")];

const STAMP_FORMAT: &str = "%a, %d %b %Y %H:%M:%S %z";

/// `"${.values.appName}" eq "Novell Access Manager"`. The value is compared as received
/// (a JSON escape inside it would make syslog-ng's decoded value equal where this is not).
fn check<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    json_scalar(input.body, b"appName") == Some(b"Novell Access Manager")
}

fn netiq<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !check(input, out) {
        return false;
    }
    let body = input.body;
    out.key(&KEYS[0]);
    out.source = Some(Value::Concat(
        "novell:netiq:",
        json_scalar(body, b"component").unwrap_or_default(),
    ));
    let stamp = json_scalar(body, b"timeStamp").unwrap_or_default();
    match vtime::strptime(STAMP_FORMAT, stamp, input.zone, input.now_unix_secs) {
        Some(ts) => out.time(ts),
        None => out.field(
            "sc4s_error",
            Value::Concat(
                "dtparse: Expected: %a, %d %b %Y %H:%M:%S %z; Actual: ",
                stamp,
            ),
        ),
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    const EVENT: &str = r#"<132>May 24 03:28:12 nam-idp01 {"appName":"Novell Access Manager","timeStamp":"Fri, 24 May 2024 03:28:12 +0000","eventId":"002E0009","component":"nidp","description":"NIDS: Provided an authentication to a remote consumer","message":"[Tue, 15 Jun 2021 02:35:28 +1000]  [Novell Access Manager\\nidp]: AMDEVICEID#C423618A1F3FB8F2","target":"cn=xxx,ou=users,o=data"}"#;

    #[test]
    fn access_manager() {
        let e = event_of(EVENT);
        assert_eq!(e["sourcetype"], "novell:netiq");
        assert_eq!(e["index"], "netauth");
        assert_eq!(e["source"], "novell:netiq:nidp");
        assert_eq!(e["host"], "nam-idp01");
        assert_eq!(e["fields"]["sc4s_vendor"], "novell");
        assert_eq!(e["fields"]["sc4s_product"], "netiq");
        assert_eq!(e["time"], "1716521292.000");
        let text = e["event"].as_str().unwrap();
        assert!(
            text.starts_with(r#"{"appName":"Novell Access Manager""#),
            "{text}"
        );
        assert!(text.contains("NIDS: Provided an authentication to a remote consumer"));
        // An unreadable stamp: the header's time and sc4s_error.
        let e = event_of(&EVENT.replace("Fri, 24 May 2024", "Fri 24 May 2024"));
        assert_eq!(e["sourcetype"], "novell:netiq");
        assert!(e["fields"]["sc4s_error"].is_string());
        // Another appName: generic JSON.
        let c = classify_line(&EVENT.replace("Novell Access Manager\",", "Other\","));
        assert_eq!(c.sourcetype, "json");
    }
}
