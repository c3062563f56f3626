//! ISC BIND and DHCPD (SC4S `addons/isc/app-syslog-isc_bind.conf`,
//! `app-syslog-isc_dhcpd.conf`): matched by PROGRAM.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "isc",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-isc_bind",
            topic: Topic::Pgm,
            order: "isc/app-syslog-isc_bind.conf",
            when: When::ProgramPrefix(&["named"]),
            parse: bind,
        },
        App {
            name: "app-syslog-isc_dhcpd",
            topic: Topic::Pgm,
            order: "isc/app-syslog-isc_dhcpd.conf",
            when: When::ProgramPrefix(&["dhcpd"]),
            parse: dhcpd,
        },
    ],
};

const DHCPD: usize = 0;
const QUERYERROR: usize = 1;
const QUERY: usize = 2;
const LAMESERVER: usize = 3;
const TRANSFER: usize = 4;
const NETWORK: usize = 5;

static KEYS: &[Key] = &[
    Key::new("isc", "dhcpd", "isc:dhcpd", "netipam").source("program:dhcpd"),
    Key::new("isc", "bind", "isc:bind:queryerror", "netdns").source("program:named"),
    Key::new("isc", "bind", "isc:bind:query", "netdns").source("program:named"),
    Key::new("isc", "bind", "isc:bind:lameserver", "netdns").source("program:named"),
    Key::new("isc", "bind", "isc:bind:transfer", "netdns").source("program:named"),
    Key::new("isc", "bind", "isc:bind:network", "netdns").source("program:named"),
];

fn dhcpd<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"dhcpd")) {
        return false;
    }
    out.key(&KEYS[DHCPD]);
    true
}

fn bind<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static QUERY_FAILED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\s+query\s+failed\s+").expect("static regex"));
    let m = input.body;
    if !input.program.is_some_and(|p| p.starts_with(b"named")) || m.starts_with(b"CEF") {
        return false;
    }
    // Searchers built once; the regex cannot match without its literal `failed`.
    static QUERY_ERRORS: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b" query-errors: "));
    static FAILED: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"failed"));
    let key = if QUERY_ERRORS.find(m).is_some()
        || (m.starts_with(b"client") && FAILED.find(m).is_some() && QUERY_FAILED.is_match(m))
    {
        QUERYERROR
    } else if m.starts_with(b"queries:") || m.starts_with(b"client") {
        QUERY
    } else if m.starts_with(b"lame-servers:") || m.starts_with(b"network unreachable resolving") {
        LAMESERVER
    } else if m.starts_with(b"notify:") || m.starts_with(b"zone") {
        TRANSFER
    } else {
        NETWORK
    };
    out.key(&KEYS[key]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn bind_and_dhcpd() {
        let c = classify_line(
            "<111>Apr 02 09:29:24 ns1 named[42]: client @0x7f 1.2.3.4#615 (abc.com): query: abc.com IN A +",
        );
        assert_eq!(c.sourcetype, "isc:bind:query");
        assert_eq!(c.index, "netdns");
        assert_eq!(c.source, "program:named");
        let c = classify_line(
            "<111>Apr 02 09:29:24 ns1 named[42]: client @0x7f 1.2.3.4#54013 (x.arpa): query failed (SERVFAIL) for x",
        );
        assert_eq!(c.sourcetype, "isc:bind:queryerror");
        // Runs of spaces and tabs around the words still match; without `failed` it is a query.
        let c = classify_line(
            "<111>Apr 02 09:29:24 ns1 named[42]: client @0x7f 1.2.3.4#5 (x.arpa):  query \tfailed  (SERVFAIL)",
        );
        assert_eq!(c.sourcetype, "isc:bind:queryerror");
        let c = classify_line(
            "<111>Apr 02 09:29:24 ns1 named[42]: client @0x7f 1.2.3.4#5 (x.arpa): query fail (SERVFAIL)",
        );
        assert_eq!(c.sourcetype, "isc:bind:query");
        let c = classify_line(
            "<111>Apr 02 09:29:24 ns1 named[42]: zone example.com/IN: loaded serial 7",
        );
        assert_eq!(c.sourcetype, "isc:bind:transfer");
        let c = classify_line("<150>Apr 02 17:05:13 dhcp-01 dhcpd[42]: DHCPACK on 192.168.1.120");
        assert_eq!(c.sourcetype, "isc:dhcpd");
        assert_eq!(c.index, "netipam");
        assert_eq!(c.vendor, "isc");
        assert_eq!(c.app, "app-syslog-isc_dhcpd");
    }
}
