//! HAProxy (SC4S `addons/haproxy/app-syslog-haproxy.conf`): PROGRAM `haproxy*`; the Splunk
//! log format (`client_ip=...`) gets its own sourcetype.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "haproxy",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-haproxy",
        topic: Topic::Pgm,
        order: "haproxy/app-syslog-haproxy.conf",
        when: When::ProgramPrefix(&["haproxy"]),
        parse: haproxy,
    }],
};

static KEYS: &[Key] = &[
    Key::new("haproxy", "syslog", "haproxy:tcp", "netlb")
        .source("program:haproxy")
        .class("idrac")
        .template(Template::HdrMsg),
    Key::update("haproxy:splunk:http", ""),
];

fn haproxy<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"haproxy")) {
        return false;
    }
    out.key(&KEYS[0]);
    if input.body.starts_with(b"client_ip=") {
        out.key(&KEYS[1]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn tcp_and_splunk_http() {
        let c = classify_line("<111>Mar 30 10:56:49 lb1 haproxy[42]: 10.0.0.0:1000 [x]");
        assert_eq!(c.sourcetype, "haproxy:tcp");
        assert_eq!(c.index, "netlb");
        assert_eq!(c.source, "program:haproxy");
        assert_eq!(c.vendor, "haproxy");
        let c = classify_line("<111>Mar 30 10:56:49 lb1 haproxy[42]: client_ip=10.0.0.0 x=1");
        assert_eq!(c.sourcetype, "haproxy:splunk:http");
        assert_eq!(c.index, "netlb");
        assert_eq!(c.product, "syslog");
        let c = classify_line("<111>Mar 30 10:56:49 lb1 haproxyx: client_ip=10.0.0.0 x=1");
        assert_eq!(c.sourcetype, "haproxy:splunk:http");
    }
}
