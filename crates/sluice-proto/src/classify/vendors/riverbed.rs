//! Riverbed (SC4S `addons/riverbed/`): SteelHead / SteelConnect by PROGRAM (`cmcfc`,
//! `sport`, `scm_*`), a `riverbed`/`syslog` listener or `vendor_product_by_source` entry, and
//! RFC 5424 messages whose SD-ID is one character and `@17163`, which SC4S hands to its
//! F5 BIG-IP rules (`app-syslog-f5_bigip_reuse`).

use crate::classify::registry::{App, Check, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "riverbed",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-riverbed_syslog",
            topic: Topic::NetSource,
            order: "riverbed/app-netsource-riverbed_syslog.conf",
            when: When::NetSource(&["riverbed_syslog"]),
            parse: netsource,
        },
        App {
            name: "app-syslog-riverbed_syslog-sdata",
            topic: Topic::Sdata,
            order: "riverbed/app-syslog-riverbed_syslog.conf",
            when: When::Check(SDATA_CHECK),
            parse: sdata,
        },
        // One SC4S application, two prefilters (exact names and a prefix).
        App {
            name: "app-syslog-riverbed_syslog",
            topic: Topic::Pgm,
            order: "riverbed/app-syslog-riverbed_syslog.conf",
            when: When::Program(&["cmcfc", "sport"]),
            parse: pgm,
        },
        App {
            name: "app-syslog-riverbed_syslog",
            topic: Topic::Pgm,
            order: "riverbed/app-syslog-riverbed_syslog.conf",
            when: When::ProgramPrefix(&["scm_"]),
            parse: pgm,
        },
    ],
};

const BASE: usize = 0;
const STEELCONNECT: usize = 1;
const STEELHEAD: usize = 2;
const F5: usize = 3;
const F5_NIX: usize = 4;

static KEYS: &[Key] = &[
    Key::new("riverbed", "syslog", "riverbed:syslog", "netops"),
    Key::update("riverbed:steelconnect", "").class("steelconnect"),
    Key::update("riverbed:steelhead", "").class("steelhead"),
    Key::new("f5", "bigip", "f5:bigip:syslog", "netops"),
    Key::update("nix:syslog", "").class("nix_syslog"),
];

/// The SD-ID condition as a [`When::Check`].
const SDATA_CHECK: Check = |input, _| sdata_matches(input);

/// The STRUCTURED-DATA as received (SC4S matches its re-rendering, which starts the same).
fn sd_raw<'m>(input: &Input<'m, '_>) -> &'m [u8] {
    input.msg.structured_data.map_or(&[], |sd| sd.raw())
}

/// One character at `s`, then `tail` (SD-IDs are ASCII: the parser rejects others).
fn one_char_then(s: &[u8], tail: &[u8]) -> bool {
    s.get(1..).is_some_and(|rest| rest.starts_with(tail))
}

/// `match('^\[[^@]@17163' value("SDATA"))`: an SD-ID of exactly one character.
fn sdata_matches(input: &Input<'_, '_>) -> bool {
    let sd = sd_raw(input);
    sd.first() == Some(&b'[') && sd.get(1) != Some(&b'@') && one_char_then(&sd[1..], b"@17163")
}

/// `filter riverbed_syslog_stealconnect`: PROGRAM `scm_*`, or SDATA matching
/// `^\SteelConnect@17163` (one non-space character, then `teelConnect@17163`).
fn steelconnect(input: &Input<'_, '_>) -> bool {
    let sd = sd_raw(input);
    input.program.is_some_and(|p| p.starts_with(b"scm_"))
        || sd
            .first()
            .is_some_and(|&b| !crate::classify::vendors::util::is_space(b))
            && one_char_then(sd, b"teelConnect@17163")
}

fn pgm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program else {
        return false;
    };
    if !(p == b"cmcfc" || p == b"sport" || p.starts_with(b"scm_")) {
        return false;
    }
    out.key(&KEYS[BASE]);
    if steelconnect(input) {
        out.key(&KEYS[STEELCONNECT]);
    }
    if p == b"cmcfc" {
        out.key(&KEYS[STEELHEAD]);
    }
    true
}

/// The PROGRAMs SC4S's network-source rule calls SteelHead.
const STEELHEAD_PROGRAMS: [&[u8]; 20] = [
    b"alarmd",
    b"cifs",
    b"cmcfc",
    b"rgp",
    b"rgpd",
    b"cli",
    b"mgmtd",
    b"http",
    b"hald",
    b"notes",
    b"mapi",
    b"nfs",
    b"pm",
    b"sched",
    b"virtwrapperd",
    b"vspd",
    b"statsd",
    b"wdt",
    b"webasd",
    b"sport",
];

fn netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    // SC4S's filter also has `vendor riverbed and product syslog and tags ns_vendor:syslog
    // and ...`, which cannot hold; what remains is the source and the vendor_product.
    if out.identified || input.netsource.vendor_product != "riverbed_syslog" {
        return false;
    }
    out.key(&KEYS[BASE]);
    if input
        .program
        .is_some_and(|p| p.starts_with(b"domain") || STEELHEAD_PROGRAMS.contains(&p))
    {
        out.key(&KEYS[STEELHEAD]);
    }
    true
}

/// `app-syslog-f5_bigip_reuse`: F5 BIG-IP, `nix:syslog` unless the PROGRAM or MESSAGE is
/// one SC4S keeps as F5.
fn sdata<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !sdata_matches(input) {
        return false;
    }
    out.key(&KEYS[F5]);
    let p = input.program.unwrap_or_default();
    let f5_program = [
        &b"iControlPortal.cgi"[..],
        b"tmsh",
        b"mcpd",
        b"mprov",
        b"apmd",
        b"tmm",
    ]
    .iter()
    .any(|n| p.starts_with(n))
        || crate::classify::vendors::util::find(p, b"sshd(pam_audit)").is_some();
    let m = input.body;
    let f5_message = [
        &b"pam_radius_auth"[..],
        b"authenticated",
        b"pam_bigip_authz",
        b"mod_auth_pam",
    ]
    .iter()
    .any(|n| memchr::memmem::find(m, n).is_some());
    if !(f5_program || f5_message) {
        out.key(&KEYS[F5_NIX]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::VendorOptions;
    use crate::classify::testutil::{classifier_on, classify_line, classify_line_on, event_of};

    #[test]
    fn by_program() {
        let e = event_of(
            "<166>May 25 10:56:35 steelhead-br02 sport[21547]: [splice/client.INFO] 185097798 {10.1.56.1:56822 10.1.1.1:17472} fini client 10.1.1.1:56822 server 10.1.1.1:17472 cfe 10.127.62.50:51332 sfe 1.1.1.1:7800 app TCP",
        );
        assert_eq!(e["sourcetype"], "riverbed:syslog");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["host"], "steelhead-br02");
        assert_eq!(e["fields"]["sc4s_vendor"], "riverbed");
        assert_eq!(e["fields"]["sc4s_product"], "syslog");
        let c = classify_line("<166>May 25 10:56:35 sh cmcfc[1]: x");
        assert_eq!(c.sourcetype, "riverbed:steelhead");
        assert_eq!(c.class.unwrap(), "steelhead");
        let c = classify_line("<166>May 25 10:56:35 sc scm_agent[1]: x");
        assert_eq!(c.sourcetype, "riverbed:steelconnect");
        assert_eq!(c.app, "app-syslog-riverbed_syslog");
        let c = classify_line("<166>May 25 10:56:35 sh sportd[1]: x");
        assert_eq!(c.sourcetype, "nix:syslog");
    }

    #[test]
    fn by_listener() {
        let cx = classifier_on(&["RIVERBED_SYSLOG"], VendorOptions::default());
        let c = classify_line_on(cx, "RIVERBED_SYSLOG", "<166>May 25 10:56:35 sh mgmtd[1]: x");
        assert_eq!(c.sourcetype, "riverbed:steelhead");
        assert_eq!(c.app, "app-netsource-riverbed_syslog");
        let c = classify_line_on(
            cx,
            "RIVERBED_SYSLOG",
            "<166>May 25 10:56:35 sh domain_auth[1]: x",
        );
        assert_eq!(c.sourcetype, "riverbed:steelhead");
        let c = classify_line_on(cx, "RIVERBED_SYSLOG", "<166>May 25 10:56:35 sh kernel: x");
        assert_eq!(c.sourcetype, "riverbed:syslog");
        let c = classify_line_on(cx, "DEFAULT", "<166>May 25 10:56:35 sh mgmtd[1]: x");
        assert_eq!(c.sourcetype, "nix:syslog");
    }

    #[test]
    fn one_character_sd_id_goes_to_the_f5_rules() {
        let c = classify_line("<166>1 2024-05-25T10:56:35Z sh tmm 1 - [x@17163 a=\"1\"] hello");
        assert_eq!(c.sourcetype, "f5:bigip:syslog");
        assert_eq!(c.vendor, "f5");
        assert_eq!(c.app, "app-syslog-riverbed_syslog-sdata");
        let c = classify_line("<166>1 2024-05-25T10:56:35Z sh kernel 1 - [x@17163 a=\"1\"] hello");
        assert_eq!(c.sourcetype, "nix:syslog");
        assert_eq!(c.index, "netops");
        assert_eq!(c.class.unwrap(), "nix_syslog");
        let c = classify_line(
            "<166>1 2024-05-25T10:56:35Z sh kernel 1 - [x@17163 a=\"1\"] user authenticated",
        );
        assert_eq!(c.sourcetype, "f5:bigip:syslog");
        // A longer SD-ID is not theirs (SC4S's `[^@]` is one character).
        let c = classify_line(
            "<166>1 2024-05-25T10:56:35Z sh kernel 1 - [SteelConnect@17163 a=\"1\"] hello",
        );
        assert_eq!(c.sourcetype, "nix:syslog");
        assert_eq!(c.vendor, "nix");
    }
}
