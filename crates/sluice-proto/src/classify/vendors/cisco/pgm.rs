//! The Cisco products SC4S recognises by PROGRAM (`sc4s-syslog-pgm`): Firepower `SFIMS*`,
//! TelePresence VCS / Expressway `tvcs*`, HyperFlex `hx-*`, Meeting Management `cmm-*`
//! (and its audit stream on a listener), DNA Center `DNAC`.

use crate::classify::registry::{App, HostEdit, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static FIREPOWER: Vendor = Vendor {
    name: "cisco_firepower",
    keys: &FIREPOWER_KEYS,
    apps: &[App {
        name: "app-syslog-cisco_firepower",
        topic: Topic::Pgm,
        order: "cisco/app-syslog-cisco_firepower.conf",
        when: When::ProgramPrefix(&["SFIMS"]),
        parse: firepower,
    }],
};

pub static TVCS: Vendor = Vendor {
    name: "cisco_tvcs",
    keys: &TVCS_KEYS,
    apps: &[App {
        name: "app-syslog-cisco_tvcs",
        topic: Topic::Pgm,
        order: "cisco/app-syslog-cisco_tvcs.conf",
        when: When::ProgramPrefix(&["tvcs"]),
        parse: tvcs,
    }],
};

pub static UCS_HX: Vendor = Vendor {
    name: "cisco_ucs_hx",
    keys: &UCS_HX_KEYS,
    apps: &[App {
        name: "app-syslog-cisco_ucs_hx",
        topic: Topic::Pgm,
        order: "cisco/app-syslog-cisco_ucs_hx.conf",
        when: When::ProgramPrefix(&["hx-"]),
        parse: ucs_hx,
    }],
};

pub static MM: Vendor = Vendor {
    name: "cisco_mm",
    keys: &MM_KEYS,
    apps: &[
        App {
            name: "app-netsource-cisco_mm",
            topic: Topic::NetSource,
            order: "cisco/app-netsource-cisco_mm.conf",
            when: When::NetSource(&["cisco_mm"]),
            parse: mm_audit,
        },
        App {
            name: "app-syslog-cisco_mm",
            topic: Topic::Pgm,
            order: "cisco/app-syslog-cisco_mm.conf",
            when: When::ProgramPrefix(&["cmm-"]),
            parse: mm_system,
        },
    ],
};

pub static DNA: Vendor = Vendor {
    name: "cisco_dna",
    keys: &DNA_KEYS,
    apps: &[App {
        name: "app-syslog-cisco_dna_syslog",
        topic: Topic::Pgm,
        order: "cisco/app-syslog-cisco_dna_syslog.conf",
        // `program('DNAC' type(string) flags(ignore-case))`: the whole PROGRAM, any case;
        // the prefilter lists the spellings devices use, the parser checks any case.
        when: When::Program(&["DNAC", "dnac", "Dnac"]),
        parse: dna,
    }],
};

static FIREPOWER_KEYS: [Key; 1] =
    [
        Key::new("cisco", "firepower", "cisco:firepower:syslog", "netids")
            .template(Template::HdrMsg),
    ];
// No index in SC4S's call: `main`.
static TVCS_KEYS: [Key; 1] = [Key::new("cisco", "tvcs", "cisco:tvcs", "main")];
static UCS_HX_KEYS: [Key; 1] = [Key::new("cisco", "ucs", "cisco:ucs:hx", "infraops")
    .class("hx")
    .program_source()];
static MM_KEYS: [Key; 2] = [
    Key::new("cisco", "mm", "cisco:mm:system", "netops")
        .class("system")
        .template(Template::MsgOnly),
    Key::new("cisco", "mm", "cisco:mm:audit", "netops")
        .class("audit")
        .template(Template::HdrMsg),
];
static DNA_KEYS: [Key; 1] =
    [Key::new("cisco", "dna", "cisco:dna", "netops").template(Template::MsgOnly)];

fn program_starts(input: &Input<'_, '_>, prefix: &[u8]) -> bool {
    input.program.is_some_and(|p| p.starts_with(prefix))
}

fn firepower<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !program_starts(input, b"SFIMS") {
        return false;
    }
    out.key(&FIREPOWER_KEYS[0]);
    true
}

fn tvcs<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !program_starts(input, b"tvcs") {
        return false;
    }
    out.key(&TVCS_KEYS[0]);
    true
}

fn ucs_hx<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !program_starts(input, b"hx-") {
        return false;
    }
    out.key(&UCS_HX_KEYS[0]);
    true
}

/// `cisco:mm:system:<PROGRAM after cmm->`.
fn mm_system<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(source) = input.program.and_then(|p| p.strip_prefix(b"cmm-")) else {
        return false;
    };
    out.key(&MM_KEYS[0]);
    // `^cmm-(?<source>.*)`: `.` stops at a line end.
    let source = &source[..memchr::memchr(b'\n', source).unwrap_or(source.len())];
    out.sourcetype_concat("cisco:mm:system:", source);
    true
}

fn mm_audit<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified || program_starts(input, b"cmm-") {
        return false;
    }
    out.key(&MM_KEYS[1]);
    true
}

fn dna<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.eq_ignore_ascii_case(b"DNAC"))
    {
        return false;
    }
    out.key(&DNA_KEYS[0]);
    if input.options.cisco_dna_fixhost {
        out.host = HostEdit::SourceIp;
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn program_keyed_products() {
        let c = classify_line("<111> Mar 18 18:56:43 ngips-3 SFIMS: Protocol: TCP, SrcIP: 1.1.1.1");
        assert_eq!(c.sourcetype, "cisco:firepower:syslog");
        assert_eq!(c.index, "netids");
        let c = classify_line("<166>Mar 22 16:16:46 expressway-c-01 tvcs: tvcs: UTCTime=x");
        assert_eq!(c.sourcetype, "cisco:tvcs");
        assert_eq!(c.index, "main");
        let c = classify_line("<13> Mar 18 21:06:57 hx-node-01 hx-device-connector: 433 x");
        assert_eq!(c.sourcetype, "cisco:ucs:hx");
        assert_eq!(c.source, "program:hx-device-connector");
        assert_eq!(c.class.unwrap(), "hx");
        let c = classify_line("<166>Mar 22 07:35:50 cmm-2 cmm-web_proxy_1[273]:  Web is up");
        assert_eq!(c.sourcetype, "cisco:mm:system:web_proxy_1");
        assert_eq!(c.index, "netops");
        let c = classify_line("<166>Mar 22 07:35:50 dnac-1 DNAC: something happened");
        assert_eq!(c.sourcetype, "cisco:dna");
        let c = classify_line("<166>Mar 22 07:35:50 dnac-1 dnac: something happened");
        assert_eq!(c.sourcetype, "cisco:dna");
    }
}
