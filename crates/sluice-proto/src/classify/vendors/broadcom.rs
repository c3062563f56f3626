//! Broadcom / Symantec / Blue Coat (SC4S `addons/broadcom/`): Endpoint Protection
//! (`SymantecServer`), ProxySG (`bluecoat`, `ProxySG`), Messaging Gateway / Brightmail
//! (`bmserver`, `ecelerity`, `[Brightmail]`), DLP (`SymantecDLP*` or a `symantec_dlp`
//! network source), SSL Visibility (`ssldata`, `sslpilot`) and the Layer7 API gateway
//! (`SSG` with `com.l7tech.traffic`).
//!
//! Not reproduced: ProxySG's removal of empty `name=-` pairs from MESSAGE (sluice's event
//! text borrows the message and cannot be rewritten), and Brightmail's grouping of
//! `bmserver` parts (a stateful post-filter).

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "broadcom",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-symantec_dlp",
            topic: Topic::NetSource,
            order: "broadcom/app-netsource-symantec_dlp.conf",
            when: When::NetSource(&["symantec_dlp"]),
            parse: dlp_netsource,
        },
        App {
            name: "app-syslog-broadcom_layer7_api_gateway",
            topic: Topic::Pgm,
            order: "broadcom/app-syslog-broadcom_layer7_api_gateway.conf",
            when: When::Program(&["SSG"]),
            parse: layer7,
        },
        App {
            name: "app-syslog-broadcom_sslva",
            topic: Topic::Pgm,
            order: "broadcom/app-syslog-broadcom_sslva.conf",
            when: When::ProgramPrefix(&["ssldata", "sslpilot"]),
            parse: sslva,
        },
        App {
            name: "app-syslog-symantec_brightmail-pgm",
            topic: Topic::Pgm,
            order: "broadcom/app-syslog-symantec_brightmail.conf",
            when: When::ProgramPrefix(&["bmserver", "ecelerity"]),
            parse: brightmail_pgm,
        },
        App {
            name: "app-syslog-symantec_brightmail",
            topic: Topic::Syslog,
            order: "broadcom/app-syslog-symantec_brightmail.conf",
            when: When::Token(&["[Brightmail]"]),
            parse: brightmail_msg,
        },
        App {
            name: "app-syslog-symantec_dlp",
            topic: Topic::Pgm,
            order: "broadcom/app-syslog-symantec_dlp.conf",
            when: When::ProgramPrefix(&["SymantecDLP"]),
            parse: dlp,
        },
        App {
            name: "app-syslog-symantec_ep",
            topic: Topic::Pgm,
            order: "broadcom/app-syslog-symantec_ep.conf",
            when: When::ProgramPrefix(&["SymantecServer"]),
            parse: ep,
        },
        App {
            name: "app-syslog-symantec_proxysg",
            topic: Topic::Pgm,
            order: "broadcom/app-syslog-symantec_proxysg.conf",
            when: When::ProgramPrefix(&["bluecoat", "ProxySG"]),
            parse: proxysg,
        },
    ],
};

const DLP: usize = 0;
const DLP_ALERT: usize = 1;
const LAYER7: usize = 2;
const SSLVA: usize = 3;
const SMG: usize = 4;
const SMG_ECELERITY: usize = 5;
const EP: usize = 6;
const PROXY_SYSLOG: usize = 7;
const PROXY_KV: usize = 8;
/// The first `symantec:ep:*:syslog` update key; they follow in SC4S's test order.
const EP_FIRST: usize = 9;

static KEYS: &[Key] = &[
    Key::new("symantec", "dlp", "symantec:dlp:system", "netdlp").template(Template::MsgOnly),
    Key::update("symantec:dlp:syslog", "").class("alert"),
    Key::new(
        "broadcom",
        "layer7_api_gateway",
        "broadcom:layer7_api_gateway",
        "netops",
    )
    .template(Template::HdrMsg),
    Key::new("broadcom", "sslva", "broadcom:sslva", "netproxy").template(Template::HdrMsg),
    Key::new("symantec", "brightmail", "symantec:smg", "email").program_source(),
    Key::update("symantec:smg:ecelerity", "").template(Template::MsgOnly),
    Key::new("symantec", "ep", "symantec:ep:syslog", "epav"),
    Key::new(
        "bluecoat",
        "proxy",
        "bluecoat:proxysg:access:syslog",
        "netops",
    )
    .class("syslog"),
    Key::new(
        "bluecoat",
        "proxy",
        "bluecoat:proxysg:access:kv",
        "netproxy",
    )
    .class("splunkkv")
    .template(Template::MsgOnly),
    Key::update("symantec:ep:proactive:syslog", ""),
    Key::update("symantec:ep:risk:syslog", ""),
    Key::update("symantec:ep:agt:system:syslog", ""),
    Key::update("symantec:ep:packet:syslog", ""),
    Key::update("symantec:ep:traffic:syslog", ""),
    Key::update("symantec:ep:security:syslog", ""),
    Key::update("symantec:ep:scan:syslog", ""),
    Key::update("symantec:ep:behavior:syslog", ""),
    Key::update("symantec:ep:policy:syslog", ""),
    Key::update("symantec:ep:admin:syslog", ""),
    Key::update("symantec:ep:agent:syslog", ""),
    Key::update("symantec:ep:scm:system:syslog", ""),
];

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    crate::classify::vendors::util::find(hay, needle).is_some()
}

fn layer7<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"SSG") || !contains(input.body, b"com.l7tech.traffic") {
        return false;
    }
    out.key(&KEYS[LAYER7]);
    true
}

fn sslva<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.starts_with(b"ssldata") || p.starts_with(b"sslpilot"))
    {
        return false;
    }
    out.key(&KEYS[SSLVA]);
    true
}

fn brightmail<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) {
    out.key(&KEYS[SMG]);
    let prog = input.program.unwrap_or_default();
    // bmserver parts are split into seq|id|field|data for the grouping post-filter,
    // which sluice does not run; the event keeps the message.
    if prog == b"ecelerity" {
        out.key(&KEYS[SMG_ECELERITY]);
        // The update key would drop the program source of the first one.
        out.source = Some(Value::Concat("program:", prog));
    }
}

fn brightmail_pgm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.starts_with(b"bmserver") || p == b"ecelerity")
    {
        return false;
    }
    brightmail(input, out);
    true
}

fn brightmail_msg<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !contains(input.body, b"[Brightmail]") {
        return false;
    }
    brightmail(input, out);
    true
}

fn dlp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program.filter(|p| p.starts_with(b"SymantecDLP")) else {
        return false;
    };
    out.key(&KEYS[DLP]);
    if p.starts_with(b"SymantecDLPAlert") {
        out.key(&KEYS[DLP_ALERT]);
    }
    true
}

fn dlp_netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let ns = input.netsource;
    if !(ns.names("symantec_dlp", "symantec", "dlp")) {
        return false;
    }
    out.key(&KEYS[DLP]);
    let b = input.body;
    let hit = b
        .windows(13)
        .any(|w| w.eq_ignore_ascii_case(b" incident_id="));
    if hit {
        out.key(&KEYS[DLP_ALERT]);
    }
    true
}

/// SC4S's Endpoint Protection message-type tests, in its order: the first that matches
/// picks the sourcetype.
const EP_TYPES: [&str; 12] = [
    r",Detection\stype:",
    r",Risk\sname:",
    r",Category:\s\d+,",
    r",(?:Inbound|Outbound|Unknown),Application:",
    r",(?:Inbound|Outbound|Unknown),Begin(?:\sTime)?:",
    r"CIDS\sSignature\sSubID:",
    r"Scan\sID:\s\d+",
    r"Begin(?:\sTime)?:\s[^,]*,End(?:\sTime)?:",
    r"Admin:\s[^,]+,.*[Pp]olicy",
    r"Domain(?:\sName)?:\s[^,]{0,25},Admin:",
    r"(?:,The\smanagement\sserver|,The\sclient|issued Command)",
    r"Site:\s[^,]+,Server(?:\sName)?:\s[^,]+,",
];

/// The first of [`EP_TYPES`] that matches `body`.
///
/// On ASCII text the patterns with byte classes (which on ASCII match exactly what the
/// Unicode ones match) answer the same with automata a fraction of the size: in the
/// receiver, where these are rarely in cache, the Unicode chain cost about 5 us per
/// message. (One `RegexSet` pass was tried: its combined automaton was slower even hot.)
fn ep_type(body: &[u8]) -> Option<usize> {
    static CHAIN: LazyLock<[Regex; 12]> =
        LazyLock::new(|| EP_TYPES.map(|r| Regex::new(r).expect("static regex")));
    static ASCII_CHAIN: LazyLock<[Regex; 12]> = LazyLock::new(|| {
        EP_TYPES.map(|r| {
            regex::bytes::RegexBuilder::new(r)
                .unicode(false)
                .build()
                .expect("static regex")
        })
    });
    let chain = if body.is_ascii() {
        &ASCII_CHAIN
    } else {
        &CHAIN
    };
    chain.iter().position(|r| r.is_match(body))
}

fn ep<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.starts_with(b"SymantecServer"))
    {
        return false;
    }
    out.key(&KEYS[EP]);
    if let Some(i) = ep_type(input.body) {
        out.key(&KEYS[EP_FIRST + i]);
    }
    true
}

fn proxysg<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.starts_with(b"bluecoat") || p.starts_with(b"ProxySG"))
    {
        return false;
    }
    out.key(&KEYS[PROXY_SYSLOG]);
    if input.msg.msgid == Some(b"splunk_format") || input.body.starts_with(b"SPLV") {
        out.key(&KEYS[PROXY_KV]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]
        /// On any text, ASCII or not, `ep_type` picks what the chain of Unicode regexes picks.
        #[test]
        fn ep_ascii_chain_agrees_with_the_unicode_chain(
            parts in proptest::collection::vec(prop_oneof![
                Just(",Detection type:"), Just(",Risk name:"), Just(",Category: 2,"),
                Just(",Inbound,Application:"), Just(",Unknown,Begin Time:"), Just(",Outbound,Begin:"),
                Just("CIDS Signature SubID:"), Just("Scan ID: 7"), Just("Begin: x,End Time:"),
                Just("Admin: a,"), Just("policy"), Just("Policy"), Just("Domain Name: d,Admin:"),
                Just(",The client"), Just("issued Command"), Just("Site: s,Server Name: n,"),
                Just(","), Just(" "), Just("\t"), Just("\n"), Just("x"), Just("7"), Just("é"),
                Just("\u{a0}"), Just("\u{0663}"), Just("Begin"), Just("Admin:"), Just("Scan ID:"), Just("Scan ID: "), Just(",Category:"),
            ], 0..10),
        ) {
            let body = parts.concat();
            let chain = super::EP_TYPES
                .iter()
                .map(|r| regex::bytes::Regex::new(r).unwrap())
                .position(|r| r.is_match(body.as_bytes()));
            prop_assert_eq!(super::ep_type(body.as_bytes()), chain, "{:?}", body);
        }
    }

    #[test]
    fn ep_types() {
        let c = classify_line(
            "<13>Apr 10 13:55:31 s SymantecServer: yy,Category: 2,LiveUpdate Manager,Event",
        );
        assert_eq!(c.sourcetype, "symantec:ep:agt:system:syslog");
        assert_eq!(c.index, "epav");
        let c = classify_line("<13>Apr 10 13:55:31 s SymantecServer: nothing known here");
        assert_eq!(c.sourcetype, "symantec:ep:syslog");
        let c = classify_line(
            "<13>Apr 10 13:55:31 s SymantecServer: Site: A,Server Name: B,Domain Name: C,The management server x",
        );
        assert_eq!(c.sourcetype, "symantec:ep:agent:syslog");
    }

    #[test]
    fn proxy_dlp_smg() {
        let c = classify_line("<134> 2024-04-11T01:51:48.460Z p bluecoat[0]: SPLV5.1 c-ip=1");
        assert_eq!(c.sourcetype, "bluecoat:proxysg:access:kv");
        assert_eq!(c.index, "netproxy");
        let c = classify_line("<134>1 2024-04-11T04:02:02.476Z p ProxySG - - - Some message");
        assert_eq!(c.sourcetype, "bluecoat:proxysg:access:syslog");
        let c = classify_line("<134> 2024-04-10T10:40:10.349 d SymantecDLPAlert: A=1 B=2");
        assert_eq!(c.sourcetype, "symantec:dlp:syslog");
        let c = classify_line("<134> 2024-04-10T10:40:10.349 d SymantecDLP: started");
        assert_eq!(c.sourcetype, "symantec:dlp:system");
        let c = classify_line("<134>Apr 10 07:24:49 s conduit: [Brightmail] (NOTICE:7) x");
        assert_eq!(c.sourcetype, "symantec:smg");
        assert_eq!(c.index, "email");
        let c = classify_line("<134>Apr 10 07:24:49 s ecelerity: x");
        assert_eq!(c.sourcetype, "symantec:smg:ecelerity");
        let c = classify_line("<134>Apr 10 07:24:49 s SSG[1]: INFO other: x");
        assert_ne!(c.sourcetype, "broadcom:layer7_api_gateway");
    }
}
