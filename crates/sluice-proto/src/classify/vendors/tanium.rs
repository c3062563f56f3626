//! Tanium (SC4S `addons/tanium/app-syslog-tanium.conf`): PROGRAM `Tanium*`; event text
//! `t_5424_hdr_sdata_compact`, time from the `tanium_droid@017472` element's
//! `Client-Time-UTC` (`%Y-%m-%d %H:%M:%S`), source `tanium:question:<Question>` when the
//! element has a question.
//!
//! SC4S's per-question sourcetypes test `.tanium.question`, a value nothing sets, so they
//! never apply; its per-stream ones look for `"event":"<kind>","tanium_computer_id"` in the
//! SDATA text, which they find only where quotes are not escaped, i.e. never in well-formed
//! structured data. Both are kept as written: the stream ones are tested on the received
//! text.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vendors::util::find_lit;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "tanium",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-tanium",
        topic: Topic::Pgm,
        order: "tanium/app-syslog-tanium.conf",
        when: When::ProgramPrefix(&["Tanium"]),
        parse: tanium,
    }],
};

/// `(SDATA text, sourcetype)` in SC4S's order (the last that matches wins).
const STREAMS: [(&[u8], &str); 17] = [
    (
        b"\"event\":\"process_start\",\"tanium_computer_id\"",
        "tanium:endpoint:processes:stream",
    ),
    (
        b"\"event\":\"network_connect\",\"tanium_computer_id\"",
        "tanium:endpoint:netconn:stream",
    ),
    (
        b"\"event\":\"network_disconnect\",\"tanium_computer_id\"",
        "tanium:endpoint:netdisco:stream",
    ),
    (
        b"\"event\":\"network_accept\",\"tanium_computer_id\"",
        "tanium:endpoint:netaccept:stream",
    ),
    (
        b"\"event\":\"file_create\",\"tanium_computer_id\"",
        "tanium:endpoint:filecreate:stream",
    ),
    (
        b"\"event\":\"file_write\",\"tanium_computer_id\"",
        "tanium:endpoint:filewrite:stream",
    ),
    (
        b"\"event\":\"file_read\",\"tanium_computer_id\"",
        "tanium:endpoint:fileread:stream",
    ),
    (
        b"\"event\":\"file_open\",\"tanium_computer_id\"",
        "tanium:endpoint:fileopen:stream",
    ),
    (
        b"\"event\":\"file_move\",\"tanium_computer_id\"",
        "tanium:endpoint:filemove:stream",
    ),
    (
        b"\"event\":\"file_delete\",\"tanium_computer_id\"",
        "tanium:endpoint:filedelete:stream",
    ),
    (
        b"\"event\":\"file_permission_change\",\"tanium_computer_id\"",
        "tanium:endpoint:filepermchange:stream",
    ),
    (
        b"\"event\":\"registry_create\",\"tanium_computer_id\"",
        "tanium:endpoint:regcreate:stream",
    ),
    (
        b"\"event\":\"registry_set\",\"tanium_computer_id\"",
        "tanium:endpoint:regset:stream",
    ),
    (
        b"\"event\":\"dns_event\",\"tanium_computer_id\"",
        "tanium:endpoint:dns:stream",
    ),
    (b"\"Intel Type\":\"tanium-signal\"", "tanium:detect:signals"),
    (b"\"Intel Type\":\"openioc\"", "tanium:detect:openioc"),
    (b"\"Intel Type\":\"yara\"", "tanium:detect:yara"),
];

static KEYS: &[Key] =
    &[Key::new("tanium", "syslog", "tanium", "epintel").template(Template::Rfc5424Compact)];

const STAMP_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// The last value of `param` in the last `tanium_droid@017472` element (syslog-ng keeps the
/// last one set), as received.
fn droid_param<'m>(input: &Input<'m, '_>, param: &[u8]) -> Option<&'m [u8]> {
    let sd = input.msg.structured_data?;
    sd.elements()
        .filter(|e| e.id() == b"tanium_droid@017472")
        .flat_map(|e| e.params())
        .filter(|p| p.name() == param)
        .last()
        .map(|p| p.raw_value())
}

fn tanium<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"Tanium")) {
        return false;
    }
    out.key(&KEYS[0]);
    if let Some(q) = droid_param(input, b"Question").filter(|q| !q.is_empty()) {
        out.source = Some(Value::Concat("tanium:question:", q));
    }
    if let Some(sd) = input.msg.structured_data.map(|sd| sd.raw())
        && (find_lit!(sd, b"\"tanium_computer_id\"").is_some()
            || find_lit!(sd, b"\"Intel Type\":").is_some())
        && let Some((_, st)) = STREAMS
            .iter()
            .rev()
            .find(|(text, _)| memchr::memmem::find(sd, text).is_some())
    {
        out.sourcetype = Some(Value::Static(st));
    }
    let stamp = droid_param(input, b"Client-Time-UTC").unwrap_or_default();
    match vtime::strptime(STAMP_FORMAT, stamp, input.zone, input.now_unix_secs) {
        Some(ts) => out.time(ts),
        None => out.field(
            "sc4s_error",
            Value::Concat("dtparse: Expected: %Y-%m-%d %H:%M:%S; Actual: ", stamp),
        ),
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    const QUESTION: &str = r#"<14>1 2024-05-26T09:44:02.318529+00:00 tanium-mod01 Tanium 2324 - [tanium_droid@017472 Computer-Name="axo-core-east" IPv4-Address="10.179.79.133" Operating-System="Ubuntu 16.04.6 LTS" Client-Time-UTC="2024-05-26 09:44:02" Cloud-Instance-ID="i-0f680009d715d4ec9" tanium_droid="sc4s" Question="tanium_droid"] "#;

    #[test]
    fn question() {
        let e = event_of(QUESTION);
        assert_eq!(e["sourcetype"], "tanium");
        assert_eq!(e["index"], "epintel");
        assert_eq!(e["source"], "tanium:question:tanium_droid");
        assert_eq!(e["host"], "tanium-mod01");
        assert_eq!(e["fields"]["sc4s_vendor"], "tanium");
        assert_eq!(e["fields"]["sc4s_product"], "syslog");
        // Client-Time-UTC, not the header's .318.
        assert_eq!(e["time"], "1716716642.000");
        assert!(e["fields"]["sc4s_error"].is_null());
        let text = e["event"].as_str().unwrap();
        assert!(
            text.starts_with("- - Tanium 2324 - [tanium_droid@017472 Computer-Name="),
            "{text}"
        );
        assert!(text.contains("i-0f680009d715d4ec9"));
    }

    #[test]
    fn without_the_element() {
        // No question, no client time: the header's time, SC4S's error, source sc4s.
        let e = event_of("<14>1 2024-05-26T09:44:02.318Z tanium-mod01 Tanium 2324 - - hello");
        assert_eq!(e["sourcetype"], "tanium");
        assert_eq!(e["source"], "sc4s");
        assert_eq!(e["time"], "1716716642.318");
        assert_eq!(
            e["fields"]["sc4s_error"],
            "dtparse: Expected: %Y-%m-%d %H:%M:%S; Actual: "
        );
        let e = event_of(&QUESTION.replace("2024-05-26 09:44:02", "yesterday"));
        assert!(e["fields"]["sc4s_error"].is_string());
        let e = event_of(&QUESTION.replace(" Question=\"tanium_droid\"", " Question=\"\""));
        assert_eq!(e["source"], "sc4s");
        let c = classify_line("<14>May 26 09:44:02 t TaniumClient[1]: x");
        assert_eq!(c.sourcetype, "tanium");
        assert_eq!(c.template, crate::classify::Template::Rfc5424Compact);
        // The stream patterns match only unescaped quotes, which valid SD cannot hold.
        let c = classify_line(&QUESTION.replace(
            "tanium_droid=\"sc4s\"",
            "x=\"{\\\"event\\\":\\\"process_start\\\",\\\"tanium_computer_id\\\":1}\"",
        ));
        assert_eq!(c.sourcetype, "tanium");
    }
}
