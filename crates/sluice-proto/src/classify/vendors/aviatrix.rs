//! Aviatrix cloud network controller and gateways (SC4S
//! `addons/aviatrix/app-syslog-aviatrix.conf`): PROGRAM `cloudxd`, `cloudx_cli`,
//! `perfmon.py`, `avx-nfq` (any case), one containing `avx-gw-state-sync`, or `kernel` with
//! an `AvxRl` / `AviatrixUser` message. Sourcetype and product name the PROGRAM without its
//! directory (`cloudx_cli` → `cloudx-cli`, `perfmon.py` → `perfmon`).

use memchr::memmem;
use std::sync::LazyLock;

use crate::classify::header::strip_directory;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "aviatrix",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-aviatrix",
        topic: Topic::Pgm,
        order: "aviatrix/app-syslog-aviatrix.conf",
        // Case-insensitive names and a substring: a length test rejects nearly every other
        // PROGRAM before any comparison.
        when: When::Check(program_check),
        parse: aviatrix,
    }],
};

static KEYS: &[Key] =
    &[Key::new("aviatrix", "", "aviatrix:", "netops").template(Template::MsgOnly)];

const STATE_SYNC: &[u8] = b"avx-gw-state-sync";

/// What the PROGRAM alone says: `Some(true)` it is Aviatrix's, `Some(false)` only with a
/// kernel message of Aviatrix's, `None` not at all.
fn by_program(p: &[u8]) -> Option<bool> {
    let is = |name: &[u8]| p.eq_ignore_ascii_case(name);
    match p.len() {
        6 if is(b"kernel") => Some(false),
        7 if is(b"cloudxd") || is(b"avx-nfq") => Some(true),
        10 if is(b"cloudx_cli") || is(b"perfmon.py") => Some(true),
        n if n >= STATE_SYNC.len()
            && p.windows(STATE_SYNC.len())
                .any(|w| w.eq_ignore_ascii_case(STATE_SYNC)) =>
        {
            Some(true)
        }
        _ => None,
    }
}

fn program_check<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    input.program.is_some_and(|p| by_program(p).is_some())
}

fn aviatrix<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static AVXRL: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"AvxRl"));
    static USER: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"AviatrixUser"));
    let Some(program) = input.program else {
        return false;
    };
    match by_program(program) {
        Some(true) => {}
        Some(false) if AVXRL.find(input.body).is_some() || USER.find(input.body).is_some() => {}
        _ => return false,
    }
    out.key(&KEYS[0]);
    // `.PROGRAM`: the directory removed, then SC4S's two renames (exact, case-sensitive).
    let (sourcetype, product) = match strip_directory(program) {
        b"cloudx_cli" => (
            Value::Static("aviatrix:cloudx-cli"),
            Value::Static("cloudx-cli"),
        ),
        b"perfmon.py" => (Value::Static("aviatrix:perfmon"), Value::Static("perfmon")),
        other => (Value::Concat("aviatrix:", other), Value::Bytes(other)),
    };
    out.sourcetype = Some(sourcetype);
    out.product = Some(product);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Template;
    use crate::classify::testutil::classify_line;

    fn check(program: &str, body: &str, name: &str) {
        let c = classify_line(&format!(
            "<13> 2024-05-07T10:13:53.246813+00:00 avx-ctrl-01 {program}: {body}"
        ));
        assert_eq!(
            c.sourcetype,
            format!("aviatrix:{name}").as_str(),
            "{program}"
        );
        assert_eq!(c.product, name, "{program}");
        assert_eq!(c.vendor, "aviatrix");
        assert_eq!(c.index, "netops");
        assert_eq!(c.template, Template::MsgOnly);
        assert_eq!(c.app, "app-syslog-aviatrix");
    }

    /// The programs of SC4S's `test_aviatrix.py`.
    #[test]
    fn programs() {
        check(
            "cloudx_cli",
            "AviatrixVPNSession: User=demo, Status=active",
            "cloudx-cli",
        );
        check(
            "kernel",
            "[14167.983249] ***AviatrixUser***:IN= OUT=eth0 SRC=192.168.0.6",
            "kernel",
        );
        check(
            "kernel",
            "[ 4976.320353] AvxRl gw1 D:IN=eth0 OUT=eth0",
            "kernel",
        );
        check("cloudxd", "AviatrixLicsenseVPNUsers: users=2", "cloudxd");
        check(
            "/usr/local/bin/avx-gw-state-sync[1168]",
            "2022/05/25 15:57:43 AviatrixGwMicrosegPacket: POLICY=54ea",
            "avx-gw-state-sync",
        );
        check(
            "perfmon.py",
            "AviatrixGwNetStats: timestamp=2020-06-09T17",
            "perfmon",
        );
        check(
            "avx-nfq",
            "AviatrixFQDNRule2[CRIT]nfq_ssl_handle_client_hello()",
            "avx-nfq",
        );
        // Case-insensitive names keep their case; the renames are case-sensitive.
        check("CLOUDXD", "x", "CLOUDXD");
        check("Cloudx_Cli", "x", "Cloudx_Cli");
        check("my-avx-GW-state-sync-2", "x", "my-avx-GW-state-sync-2");
    }

    #[test]
    fn not_aviatrix() {
        for line in [
            "<13>May 07 10:13:53 h kernel: [1.2] eth0: link up",
            "<13>May 07 10:13:53 h cloudxd2: AviatrixX",
            "<13>May 07 10:13:53 h kernelx: AvxRl",
        ] {
            assert_eq!(classify_line(line).sourcetype, "nix:syslog", "{line}");
        }
    }
}
