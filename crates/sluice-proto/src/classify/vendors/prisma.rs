//! Palo Alto Prisma SD-WAN (SC4S `addons/palo-alto/app-syslog-prisma_sd-wan.conf`): PROGRAM
//! `cgxFlowLogV1` (flow logs), `log` or `alarm` (ION device logs, `KEY="value"` pairs). The
//! class is `flow` for the flow program, `authentication` for `ION_HOST` with
//! `FACILITY="auth"`, `event` for `ION_HOST` with a `STATUS` (the later one wins, as SC4S's
//! consecutive `set`s do); without a class SC4S's filter drops the application and the
//! message goes on to the others.

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "pan_prisma",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-prisma_sd-wan",
        topic: Topic::Syslog,
        order: "palo-alto/app-syslog-prisma_sd-wan.conf",
        when: When::Program(&["log", "alarm", "cgxFlowLogV1"]),
        parse: prisma,
    }],
};

static KEYS: &[Key] = &[
    Key::new("prisma", "sd-wan", "prisma:sd-wan:flow", "netwaf")
        .class("flow")
        .source("pan:prisma"),
    Key::new("prisma", "sd-wan", "prisma:sd-wan:authentication", "netwaf")
        .class("authentication")
        .source("pan:prisma"),
    Key::new("prisma", "sd-wan", "prisma:sd-wan:event", "netwaf")
        .class("event")
        .source("pan:prisma"),
];

fn prisma<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(program) = input.program else {
        return false;
    };
    if program != b"log" && program != b"alarm" && program != b"cgxFlowLogV1" {
        return false;
    }
    let mut class = (program == b"cgxFlowLogV1").then_some(0);
    let (mut ion_host, mut facility, mut status): (&[u8], &[u8], &[u8]) = (b"", b"", b"");
    for p in kv::pairs(input.body, b' ') {
        match p.key {
            b"ION_HOST" => ion_host = p.value,
            b"FACILITY" => facility = p.value,
            b"STATUS" => status = p.value,
            _ => {}
        }
    }
    if !ion_host.is_empty() && facility == b"auth" {
        class = Some(1);
    }
    if !ion_host.is_empty() && !status.is_empty() {
        class = Some(2);
    }
    let Some(k) = class else {
        return false;
    };
    out.key(&KEYS[k]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn classes() {
        let c = classify_line(
            "<13>1 2024-05-24T19:44:57.318529Z ion-br-3102 cgxFlowLogV1 20681 - - 2023-09-26T23:28:26,10.10.10.64,52172,208.67.222.222,443,udp,,,1,1",
        );
        assert_eq!(c.sourcetype, "prisma:sd-wan:flow");
        assert_eq!(c.index, "netwaf");
        assert_eq!(c.source, "pan:prisma");
        assert_eq!(c.vendor, "prisma");
        assert_eq!(c.product, "sd-wan");
        let c = classify_line(
            "<11>1 2024-05-24T23:00:18.318529Z 10.64.12.21 log - - -  ION_HOST=\"DEV\" MSG=\"sshd-all:error: x\" SEVERITY=\"major\" FACILITY=\"auth\"",
        );
        assert_eq!(c.sourcetype, "prisma:sd-wan:authentication");
        let c = classify_line(
            "<10>1 2024-05-25T02:15:39.318529Z 10.64.12.24 alarm - - - ION_HOST=\"D22\" STATUS=\"Not clear\" CODE=\"NETWORK_VPNLINK_DOWN\"",
        );
        assert_eq!(c.sourcetype, "prisma:sd-wan:event");
        // No class: not Prisma's.
        let c = classify_line("<11>1 2024-05-24T23:00:18.318529Z h log - - - something else");
        assert_eq!(c.sourcetype, "nix:syslog");
        let c = classify_line(
            "<11>1 2024-05-24T23:00:18.318529Z h log - - - ION_HOST=\"x\" FACILITY=\"daemon\"",
        );
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
