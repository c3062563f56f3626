//! Dell / Dell EMC / SonicWall (SC4S `addons/dell/`): iDRAC (PROGRAM `Severity`), OpenManage
//! Enterprise (`EEMI` with `{ IP }` ... `{ MessageID }`), Avamar (`<HwSource>` XML-ish
//! pairs), PowerStore (`[PowerStore_*@1139`), SonicWall firewalls (`id=... sn=... time=`),
//! and by network source: PowerEdge CMC, RSA SecurID, SONiC, PowerSwitch N.
//!
//! RSA SecurID's trace lines are joined by the group stage (`classify::group`).

use std::sync::LazyLock;

use crate::classify::gate::Gated;

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vtime;

use super::util::{Unsure, is_space, span};

pub static VENDOR: Vendor = Vendor {
    name: "dell",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-dell_poweredge_cmc",
            topic: Topic::NetSource,
            order: "dell/app-netsource-dell_poweredge_cmc.conf",
            when: When::NetSource(&["dell_poweredge_cmc", ".source.s_DELL_POWEREDGE_CMC"]),
            parse: cmc,
        },
        App {
            name: "app-netsource-dell_rsa_secureid",
            topic: Topic::NetSource,
            order: "dell/app-netsource-dell_rsa_secureid.conf",
            when: When::NetSource(&["dell_rsa_secureid", ".source.s_DELL_RSA_SECUREID"]),
            parse: rsa,
        },
        App {
            name: "app-netsource-dell_sonic",
            topic: Topic::NetSource,
            order: "dell/app-netsource-dell_sonic.conf",
            when: When::NetSource(&["dell_sonic"]),
            parse: sonic,
        },
        App {
            name: "app-netsource-dell_switch_n",
            topic: Topic::NetSource,
            order: "dell/app-netsource-dell_switch_n.conf",
            when: When::NetSource(&["dellemc_powerswitch_n"]),
            parse: switch_n,
        },
        App {
            name: "app-syslog-dell_avamar",
            topic: Topic::Syslog,
            order: "dell/app-syslog-dell_avamar.conf",
            when: When::Token(&["<HwSource>"]),
            parse: avamar,
        },
        App {
            name: "app-syslog-dell_ome",
            topic: Topic::Syslog,
            order: "dell/app-syslog-dell_ome.conf",
            when: When::Token(&["EEMI"]),
            parse: ome,
        },
        App {
            name: "app-syslog-dell_poweredge_idrac",
            topic: Topic::Syslog,
            order: "dell/app-syslog-dell_poweredge_idrac.conf",
            when: When::ProgramPrefix(&["Severity"]),
            parse: idrac,
        },
        App {
            name: "app-syslog-dell_powerstore",
            topic: Topic::NetSource,
            order: "dell/app-syslog-dell_powerstore.conf",
            when: When::Token(&["[PowerStore_"]),
            parse: powerstore,
        },
        App {
            name: "app-syslog-dell_sonicwall-firewall",
            topic: Topic::Syslog,
            order: "dell/app-syslog-dell_sonicwall-firewall.conf",
            when: When::BodyPrefix(&["id="]),
            parse: sonicwall,
        },
    ],
};

const CMC: usize = 0;
const RSA: usize = 1;
const RSA_SYSLOG: usize = 2;
const RSA_ADMIN: usize = 3;
const RSA_SYSTEM: usize = 4;
const RSA_RUNTIME: usize = 5;
const RSA_NIX: usize = 6;
const RSA_TRACE: usize = 7;
const SONIC: usize = 8;
const SWITCH_N: usize = 9;
const AVAMAR: usize = 10;
const OME: usize = 11;
const IDRAC: usize = 12;
const POWERSTORE: usize = 13;
const SONICWALL: usize = 14;
const SONICWALL_NATIVE: usize = 15;

static KEYS: &[Key] = &[
    Key::new("dell", "poweredge", "dell:poweredge:cmc:syslog", "infraops").class("cmc"),
    Key::new("dell-rsa", "secureid", "rsa:securid:trace", "netauth"),
    Key::update("rsa:securid:syslog", ""),
    Key::update("rsa:securid:admin:syslog", ""),
    Key::update("rsa:securid:system:syslog", ""),
    Key::update("rsa:securid:runtime:syslog", ""),
    Key::update("nix:syslog", ""),
    // SC4S's `source('program:${.PROGRAM}')` reads `.PROGRAM` before any branch sets it.
    Key::update("rsa:securid:trace", "")
        .class("trace")
        .source("program:"),
    Key::new("dell", "sonic", "dell:sonic", "netops"),
    Key::new("dellemc", "powerswitch", "dell:emc:powerswitch:n", "netops").class("n"),
    // SC4S renders t_json_values from `<Name>value` pairs; sluice's values reader has no
    // `<`/`>` syntax, so the message is kept (t_msg_only) rather than an empty object.
    Key::new("dell", "avamar", "dell:avamar:msc", "netops")
        .class("msc")
        .template(Template::MsgOnly),
    Key::new("dell", "ome", "dell:ome", "infraops").class("msc"),
    Key::new(
        "dell",
        "poweredge",
        "dell:poweredge:idrac:syslog",
        "infraops",
    )
    .class("idrac"),
    // SC4S_OPTION_DELL_POWERSTORE_INDEX (default infraops) is applied as a metadata default
    // when the classifier is built.
    Key::new("dellemc", "powerstore", "dell:emc:powerstore", "infraops"),
    Key::new("dell", "sonicwall-firewall", "dell:sonicwall", "netfw")
        .template(Template::JsonValues),
    // SC4S_DEST_DELL_SONICWALL-FIREWALL_SPLUNK_HEC_FMT other than JSON: no template of its
    // own, so the destination's default (t_hdr_msg).
    Key::new("dell", "sonicwall-firewall", "dell:sonicwall", "netfw"),
];

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    crate::classify::vendors::util::find(hay, needle).is_some()
}

fn cmc<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if out.identified
        || !(input
            .netsource
            .names("dell_poweredge_cmc", "dell", "poweredge_cmc")
            || input.src.listener_id == "DELL_POWEREDGE_CMC")
    {
        return false;
    }
    out.key(&KEYS[CMC]);
    true
}

fn rsa<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static AUDIT_SYSTEM: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"audit\.|system\."));
    static SYSTEM: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"\s*system\.+\w+"));
    static RUNTIME: LazyLock<Gated> =
        LazyLock::new(|| Gated::new(r"\s*audit\.runtime\.(com\.rsa|sa\.ims)"));
    if out.identified
        || !(input
            .netsource
            .names("dell_rsa_secureid", "dell", "rsa_secureid")
            || input.src.listener_id == "DELL_RSA_SECUREID")
    {
        return false;
    }
    out.key(&KEYS[RSA]);
    let body = input.body;
    if AUDIT_SYSTEM.is_match(body) {
        // time,ms,host,type: the fourth comma-separated column.
        let mut cols = body.split(|b| *b == b',');
        let (time, ms) = (
            cols.next().unwrap_or_default(),
            cols.next().unwrap_or_default(),
        );
        let kind = cols.nth(1).unwrap_or_default();
        // `${LEGACY_MSGHDR} ${.tmp.time},${.tmp.ms}`: the date syslog-ng took as PROGRAM,
        // then the first two columns.
        if let Some(date) = input.program {
            let mut stamp = [0u8; 64];
            let parts: [&[u8]; 5] = [date, b" ", time, b",", ms];
            let len: usize = parts.iter().map(|p| p.len()).sum();
            if len <= stamp.len() {
                let mut at = 0;
                for p in parts {
                    stamp[at..at + p.len()].copy_from_slice(p);
                    at += p.len();
                }
                if let Some(t) = vtime::strptime(
                    "%Y-%m-%d %H:%M:%S,%f",
                    &stamp[..len],
                    input.zone,
                    input.now_unix_secs,
                ) {
                    out.time(t);
                }
            }
        }
        out.key(&KEYS[RSA_SYSLOG]);
        if contains(kind, b"audit.admin") {
            out.key(&KEYS[RSA_ADMIN]);
        }
        if SYSTEM.is_match(kind) {
            out.key(&KEYS[RSA_SYSTEM]);
        }
        if RUNTIME.is_match(kind) {
            out.key(&KEYS[RSA_RUNTIME]);
        }
    } else if input
        .program
        .is_some_and(|p| p.len() >= 3 && p != b"at" && p != b"Caused")
    {
        out.key(&KEYS[RSA_NIX]);
        // `subst("^[^\t]+\t", "")`: a leading tab-terminated field goes.
        if let Some(tab) = memchr::memchr(b'\t', body)
            && tab > 0
        {
            out.message(&body[tab + 1..]);
        }
    } else {
        out.key(&KEYS[RSA_TRACE]);
    }
    true
}

/// SC4S's `"${fields.sc4s_vendor_product}" eq ""`: no application set a vendor.
fn unlabelled(out: &Out<'_>) -> bool {
    out.key.is_none() && out.vendor.is_none()
}

fn sonic<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.netsource.vendor_product != "dell_sonic" || !unlabelled(out) {
        return false;
    }
    out.key(&KEYS[SONIC]);
    true
}

fn switch_n<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.netsource.vendor_product != "dellemc_powerswitch_n" || !unlabelled(out) {
        return false;
    }
    out.key(&KEYS[SWITCH_N]);
    true
}

fn avamar<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    if !(contains(m, b"<HwSource>") && contains(m, b"<Severity>") && contains(m, b"<Code>")) {
        return false;
    }
    out.key(&KEYS[AVAMAR]);
    true
}

/// SC4S's OME signature and field regexes, which the scanners below stand for (these run
/// where a Unicode class could differ from the ASCII one).
static OME_SIG: LazyLock<Gated> =
    LazyLock::new(|| Gated::new(r"\{ IP \}.*\{ HostName \}.*\{ Severity \}.*\{ MessageID \}"));
static OME_HOST: LazyLock<Gated> =
    LazyLock::new(|| Gated::new(r"\{\s*HostName\s*\}\s+([A-Za-z0-9_\-]+)"));
static OME_FIELDS: LazyLock<[Gated; 3]> = LazyLock::new(|| {
    [
        Gated::new(r"\{\s*IP\s*\}\s+([^\s\}]+)"),
        Gated::new(r"\{\s*Severity\s*\}\s+([^\s\}]+)"),
        Gated::new(r"\{\s*MessageID\s*\}\s+([^\s\}]+)"),
    ]
});
/// The field names of [`OME_FIELDS`], in the same order.
const OME_NAMES: [&[u8]; 3] = [b"IP", b"Severity", b"MessageID"];

/// [`OME_SIG`] on valid UTF-8 (where `.` is any byte but a newline): the four markers in
/// order within one line.
fn ome_sig_scan(body: &[u8]) -> bool {
    static MARKS: LazyLock<[memchr::memmem::Finder<'static>; 4]> = LazyLock::new(|| {
        [
            memchr::memmem::Finder::new(b"{ IP }"),
            memchr::memmem::Finder::new(b"{ HostName }"),
            memchr::memmem::Finder::new(b"{ Severity }"),
            memchr::memmem::Finder::new(b"{ MessageID }"),
        ]
    });
    let mut rest = body;
    loop {
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(nl) => (&rest[..nl], Some(&rest[nl + 1..])),
            None => (rest, None),
        };
        let mut at = 0;
        let found = MARKS.iter().all(|m| match m.find(&line[at..]) {
            Some(i) => {
                at += i + m.needle().len();
                true
            }
            None => false,
        });
        match next {
            _ if found => return true,
            Some(next) => rest = next,
            None => return false,
        }
    }
}

/// A class test at `at`: `Err` where a non-ASCII byte would need the Unicode meaning.
fn class(s: &[u8], at: usize, ascii: fn(u8) -> bool) -> Result<bool, Unsure> {
    match s.get(at) {
        Some(&b) if !b.is_ascii() => Err(Unsure),
        Some(&b) => Ok(ascii(b)),
        None => Ok(false),
    }
}

/// `\{\s*<name>\s*\}\s+(<run>)`, the first match: the run of bytes `take` stands for. `Err`
/// on a non-ASCII byte where `\s` or the run's class is tested.
fn ome_field_scan<'a>(body: &'a [u8], name: &[u8], take: Take) -> Result<Option<&'a [u8]>, Unsure> {
    let skip = |mut at: usize| -> Result<usize, Unsure> {
        while class(body, at, is_space)? {
            at += 1;
        }
        Ok(at)
    };
    for open in memchr::memchr_iter(b'{', body) {
        let at = skip(open + 1)?;
        if !body[at..].starts_with(name) {
            continue;
        }
        let at = skip(at + name.len())?;
        if body.get(at) != Some(&b'}') {
            continue;
        }
        let value_at = skip(at + 1)?;
        if value_at == at + 1 {
            continue;
        }
        let mut end = value_at;
        while match body.get(end) {
            // `[A-Za-z0-9_\-]` has no Unicode members: a non-ASCII byte just ends it.
            Some(&b) if !b.is_ascii() && take == Take::Host => false,
            _ => class(body, end, take.ascii())?,
        } {
            end += 1;
        }
        if end > value_at {
            return Ok(Some(&body[value_at..end]));
        }
    }
    Ok(None)
}

/// The captured run of an OME field regex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Take {
    /// `[A-Za-z0-9_\-]+`
    Host,
    /// `[^\s\}]+`
    Value,
}

impl Take {
    fn ascii(self) -> fn(u8) -> bool {
        match self {
            Take::Host => |b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-',
            Take::Value => |b| !is_space(b) && b != b'}',
        }
    }
}

fn ome<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    // SC4S: program('EEMI') (a regex on PROGRAM). sluice's header parse does not take a
    // program that no colon ends, so a body that starts with it counts too.
    let eemi = input.program.is_some_and(|p| contains(p, b"EEMI"))
        || (input.program.is_none() && input.body.starts_with(b"EEMI "));
    if !eemi {
        return false;
    }
    let body = input.body;
    let sig = if std::str::from_utf8(body).is_ok() {
        ome_sig_scan(body)
    } else {
        OME_SIG.is_match(body)
    };
    if !sig {
        return false;
    }
    out.key(&KEYS[OME]);
    let host = ome_field_scan(body, b"HostName", Take::Host).unwrap_or_else(|Unsure| {
        OME_HOST
            .caps(body)
            .and_then(|c| c.get(1))
            .map(|h| h.as_bytes())
    });
    if let Some(h) = host {
        out.host(h);
    }
    for ((name, field), re) in ["idrac_ip", "idrac_severity", "idrac_messageid"]
        .into_iter()
        .zip(OME_NAMES)
        .zip(OME_FIELDS.iter())
    {
        let v = ome_field_scan(body, field, Take::Value)
            .unwrap_or_else(|Unsure| re.caps(body).and_then(|c| c.get(1)).map(|v| v.as_bytes()));
        if let Some(v) = v {
            out.field(name, Value::Bytes(v));
        }
    }
    true
}

fn idrac<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static MESSAGE_ID: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"[A-Z]{1,3}\d{1,4}"));
    let Some(prog) = input.program.filter(|p| p.starts_with(b"Severity")) else {
        return false;
    };
    let Some(text) = span(input.msg.raw, prog, input.body) else {
        return false;
    };
    // `Key: value, Key: value, ...`; the four keys must have values.
    let mut have = [false; 4];
    for pair in text.split(|b| *b == b',') {
        let Some(colon) = memchr::memchr(b':', pair) else {
            continue;
        };
        let key = pair[..colon].trim_ascii();
        let value = pair[colon + 1..].trim_ascii();
        if value.is_empty() {
            continue;
        }
        match key {
            b"Severity" => have[0] = true,
            b"Category" => have[1] = true,
            b"MessageID" if MESSAGE_ID.is_match(value) => have[2] = true,
            b"Message" => have[3] = true,
            _ => {}
        }
    }
    if have.contains(&false) {
        return false;
    }
    out.key(&KEYS[IDRAC]);
    out.message(text);
    out.program = Some(None);
    true
}

fn powerstore<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static SIG: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"\[PowerStore_[A-Za-z_]+@1139"));
    if !SIG.is_match(input.body) {
        return false;
    }
    out.key(&KEYS[POWERSTORE]);
    true
}

fn sonicwall<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static SIG: LazyLock<Gated> = LazyLock::new(|| Gated::new(r"^id=\S+\ssn=\S+\stime="));
    if input.program.is_some_and(|p| !p.is_empty())
        || !input.body.starts_with(b"id=")
        || !SIG.is_match(input.body)
    {
        return false;
    }
    out.key(
        &KEYS[if input.options.sonicwall_json {
            SONICWALL
        } else {
            SONICWALL_NATIVE
        }],
    );
    out.values = Some(Values {
        text: input.body,
        syntax: ValuesSyntax::Kv { pair: b' ' },
    });
    if let Some(t) = kv::get(input.body, b' ', b"time") {
        // The first two words: `%Y-%m-%d %H:%M:%S` (a trailing zone name is ignored).
        let end = t
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b' ')
            .nth(1)
            .map_or(t.len(), |(i, _)| i);
        if let Some(ts) = vtime::strptime(
            "%Y-%m-%d %H:%M:%S",
            &t[..end],
            input.zone,
            input.now_unix_secs,
        ) {
            out.time(ts);
        }
    }
    if let Some(fw) = kv::get(input.body, b' ', b"fw").filter(|f| !f.is_empty()) {
        out.host(fw);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::testutil::classify_line;

    /// The OME scanners agree with SC4S's regexes on ASCII text, odd spacing included.
    #[test]
    fn ome_scans_are_the_regexes() {
        let mut bodies = vec![];
        for ip in [
            "{ IP } 1.1.1.1 ",
            "{IP}\t1.1.1.1}",
            "{ IP }1.1 ",
            "{  IP  }  x ",
            "",
        ] {
            for host in [
                "{ HostName } r650-a_b ",
                "{HostName}\n.bad ",
                "{ HostName } ",
                "{ HostName }\x0b h{x ",
            ] {
                for mid in ["", "\n"] {
                    for sev in ["{ Severity } Warning ", "{ Severity }} ", "{ Severity }"] {
                        for id in [
                            "{ MessageID } MSG1 { Message } x",
                            "{ MessageID }",
                            "{ Message } x",
                        ] {
                            bodies.push(format!("EEMI a {{ {ip}{host}{mid}{sev}{id}"));
                        }
                    }
                }
            }
        }
        for b in &bodies {
            let b = b.as_bytes();
            assert_eq!(
                ome_sig_scan(b),
                OME_SIG.is_match(b),
                "{:?}",
                String::from_utf8_lossy(b)
            );
            let host = OME_HOST
                .caps(b)
                .and_then(|c| c.get(1))
                .map(|h| h.as_bytes());
            assert_eq!(
                ome_field_scan(b, b"HostName", Take::Host),
                Ok(host),
                "{:?}",
                String::from_utf8_lossy(b)
            );
            for (name, re) in OME_NAMES.into_iter().zip(OME_FIELDS.iter()) {
                let want = re.caps(b).and_then(|c| c.get(1)).map(|v| v.as_bytes());
                assert_eq!(
                    ome_field_scan(b, name, Take::Value),
                    Ok(want),
                    "{name:?} {:?}",
                    String::from_utf8_lossy(b)
                );
            }
        }
        assert!(bodies.iter().filter(|b| ome_sig_scan(b.as_bytes())).count() > 10);
        // A non-breaking space is `\s` to the regex: left to it.
        let b = "{ IP }\u{a0}1.1.1.1 { HostName } h\u{e9}".as_bytes();
        assert_eq!(ome_field_scan(b, b"IP", Take::Value), Err(Unsure));
        assert_eq!(
            ome_field_scan(b, b"HostName", Take::Host),
            Ok(OME_HOST
                .caps(b)
                .and_then(|c| c.get(1))
                .map(|h| h.as_bytes()))
        );
    }

    #[test]
    fn rsa_securid_time_sourcetypes_and_prefix() {
        use crate::classify::{Settings, SourceMeta, TimeEdit, Transport, classify};
        let settings = Settings {
            listeners: vec!["DELL_RSA_SECUREID".into()],
            ..Settings::default()
        };
        let cx = crate::classify::Classifier::new(Default::default(), &settings).unwrap();
        let zone = crate::time::Zone::utc();
        let src = SourceMeta {
            transport: Transport::Tcp,
            dest_port: 514,
            source_ip: std::net::IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 10)),
            listener_id: "DELL_RSA_SECUREID",
        };
        let run = |line: &'static str, check: &dyn Fn(&crate::classify::Classification<'_, '_>)| {
            let msg = crate::parse::parse(
                line.as_bytes(),
                &crate::parse::ParseOptions {
                    now_unix_secs: crate::classify::testutil::NOW,
                    zone: &zone,
                },
            );
            check(&classify(
                &msg,
                &src,
                crate::classify::testutil::NOW,
                &cx,
                crate::classify::testutil::scratch(),
            ));
        };
        run(
            "<166>May 15 09:14:25 am-01 2024-05-15 09:14:25,246, am-01.example.net, audit.admin.com.rsa.x, INFO,",
            &|c| {
                assert_eq!(c.sourcetype, "rsa:securid:admin:syslog");
                assert_eq!(c.vendor, "dell-rsa");
                match c.time {
                    TimeEdit::Stamp(t) => assert_eq!(t.unix_micros(), 1_715_764_465_246_000),
                    other => panic!("{other:?}"),
                }
            },
        );
        run(
            "<166>May 15 09:14:25 am-01 2024-05-15 09:14:25,246, am-01, system.x.y, INFO,",
            &|c| assert_eq!(c.sourcetype, "rsa:securid:system:syslog"),
        );
        run(
            "<166>May 15 09:14:25 am-01 sshd[1]: x-prefix\tAccepted key",
            &|c| {
                assert_eq!(c.sourcetype, "nix:syslog");
                assert_eq!(c.edit.message, Some(Value::Bytes(b"Accepted key")));
            },
        );
        run(
            "<166>May 15 09:14:25 am-01     at weblogic.work.X(X.java:1)",
            &|c| {
                assert_eq!(c.sourcetype, "rsa:securid:trace");
                assert_eq!(c.source, "program:");
            },
        );
    }

    #[test]
    fn idrac_ome_powerstore() {
        let c = classify_line(
            "<166>Mar 25 22:25:09 idrac Severity: Informational, Category: Audit, MessageID: LOG007, Message: repeated.",
        );
        assert_eq!(c.sourcetype, "dell:poweredge:idrac:syslog");
        let c = classify_line(
            "<166>Mar 25 22:25:09 idrac Severity: Informational, Category: Audit, MessageID: x, Message: y.",
        );
        assert_ne!(c.sourcetype, "dell:poweredge:idrac:syslog");
        let c = classify_line(
            "<156>Mar 26 03:50:44 ome EEMI Audit event with { IP } 1.1.1.1 { HostName } r650 { Severity } Warning { MessageID } MSG1 { Message } x",
        );
        assert_eq!(c.sourcetype, "dell:ome");
        let c = classify_line(
            "<110>Mar 26 04:55:51 ps [358]: 2024 ps x Auth [PowerStore_audit_event@1139 id=\"1\"]",
        );
        assert_eq!(c.sourcetype, "dell:emc:powerstore");
        assert_eq!(c.vendor, "dellemc");
        assert_eq!(c.index, "infraops");
        // SC4S_OPTION_DELL_POWERSTORE_INDEX, which splunk_metadata.csv still overrides.
        let line =
            "<110>Mar 26 04:55:51 ps [358]: 2024 ps x Auth [PowerStore_audit_event@1139 id=\"1\"]";
        let cx = crate::classify::testutil::classifier_with(crate::classify::VendorOptions {
            dell_powerstore_index: "storage".into(),
            ..Default::default()
        });
        assert_eq!(
            crate::classify::testutil::classify_line_with(cx, line).index,
            "storage"
        );
        let settings = crate::classify::Settings {
            options: crate::classify::VendorOptions {
                dell_powerstore_index: "storage".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let files = crate::classify::context::ContextFiles {
            splunk_metadata: Some(("m.csv".into(), "dellemc_powerstore,index,san\n".into())),
            ..Default::default()
        };
        let cx = Box::leak(Box::new(
            crate::classify::Classifier::new(files, &settings).unwrap(),
        ));
        assert_eq!(
            crate::classify::testutil::classify_line_with(cx, line).index,
            "san"
        );
    }

    #[test]
    fn sonicwall_host_and_time() {
        let c = classify_line(
            "<166>id=firewall sn=C0EF time=\"2024-03-26 22:17:43 UTC\" fw=nsa-01 pri=6 msg=\"x\"",
        );
        assert_eq!(c.sourcetype, "dell:sonicwall");
        assert_eq!(c.index, "netfw");
        match c.time {
            crate::classify::registry::TimeEdit::Stamp(ts) => {
                assert_eq!(ts.unix_micros(), 1_711_491_463_000_000)
            }
            other => panic!("time not set: {other:?}"),
        }
        assert_eq!(c.template, Template::JsonValues);
    }

    #[test]
    fn sonicwall_hec_format_setting() {
        let line = "<166>id=firewall sn=C0EF time=\"2024-03-26 22:17:43 UTC\" fw=nsa-01 msg=\"x\"";
        let native = crate::classify::testutil::classifier_with(crate::classify::VendorOptions {
            sonicwall_json: false,
            ..crate::classify::VendorOptions::default()
        });
        let c = crate::classify::testutil::classify_line_with(native, line);
        assert_eq!(c.sourcetype, "dell:sonicwall");
        assert_eq!(c.template, Template::HdrMsg);
    }
}
