//! NetMotion Mobility (SC4S `addons/netmotion/app-syslog-netmotion_syslog.conf`): RFC 5424
//! with an `@11912` SD element; `nmreporting.exe` is the reporting service, anything else
//! the mobility server, whose sourcetype and class carry the SD-ID.

use crate::classify::caps::CapturesExt;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

use super::util::lower;

pub static VENDOR: Vendor = Vendor {
    name: "netmotion",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-netmotion_syslog",
        topic: Topic::Sdata,
        order: "netmotion/app-syslog-netmotion_syslog.conf",
        when: When::Token(&["@11912"]),
        parse: netmotion,
    }],
};

static KEYS: &[Key] = &[
    Key::new("netmotion", "reporting", "netmotion:reporting", "netops"),
    Key::new(
        "netmotion",
        "mobility-server",
        "netmotion:mobilityserver",
        "netops",
    )
    .template(Template::Rfc5424Compact),
];

fn netmotion<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static REPORTING: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^nmreporting\.exe").expect("static regex"));
    static SDID: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\[([^@]+)@11912").expect("static regex"));
    let sd = input
        .msg
        .structured_data
        .as_ref()
        .map(|s| s.raw())
        .unwrap_or_default();
    if crate::classify::vendors::util::find_lit!(sd, b"@11912").is_none() {
        return false;
    }
    if input.program.is_some_and(|p| REPORTING.is_match(p)) {
        out.key(&KEYS[0]);
        return true;
    }
    out.key(&KEYS[1]);
    let id = SDID
        .caps(sd)
        .and_then(|c| c.get(1))
        .map_or(&b""[..], |m| m.as_bytes());
    if let Some(st) = lower(b"netmotion:mobilityserver:", id) {
        out.sourcetype = Some(st);
    }
    out.class = lower(b"", id);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn reporting_and_server() {
        let c = classify_line(
            "<29>1 2024-04-06T11:09:54.653Z nm nmreporting.exe 7596 PoolStatus [nm_pool_status@11912 d=\"25\"] x",
        );
        assert_eq!(c.sourcetype, "netmotion:reporting");
        let c = classify_line(
            "<29>1 2024-04-06T11:09:54.653Z nm mobility 7596 X [Conn_Stats@11912 d=\"25\"] x",
        );
        assert_eq!(c.sourcetype, "netmotion:mobilityserver:conn_stats");
        assert_eq!(c.vendor, "netmotion");
    }
}
