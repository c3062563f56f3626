//! VMware (SC4S `addons/vmware/`): vSphere / ESXi / vCenter / NSX by PROGRAM, SDATA or the
//! `[Originator@6876 ` marker (`app-syslog-vmware_vsphere.conf`), the vCenter programs of
//! a VMware network source (`app-netsource-vmware_vsphere.conf`), its JSON and empty /
//! `-->` continuation lines (`app-netsource-vmware_esx_*.conf`), Horizon
//! (`app-syslog-vmware_horizon.conf`), Carbon Black App Control
//! (`app-syslog-vmware_cb-protect.conf`) and AirWatch (`app-syslog-airwatch.conf`).
//!
//! The sourcetypes carry the lowercased PROGRAM (`vmware:esxlog:vpxa`); they are built
//! inline, so a PROGRAM too long for that keeps its case.

use crate::classify::caps::CapturesExt;
use std::ops::Range;
use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{
    App, Input, Key, Out, Shape, TimeEdit, Topic, Values, ValuesSyntax, Vendor, When,
};
use crate::classify::template::Template;
use crate::classify::value::{INLINE_CAP, Inline, Value};
use crate::classify::vendors::util::Unsure;
use crate::classify::vtime;
use crate::message::Format;

pub static VENDOR: Vendor = Vendor {
    name: "vmware",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-airwatch_raw",
            topic: Topic::AlmostSyslog,
            order: "vmware/app-almost-syslog-airwatch.conf",
            when: When::Token(&["AirWatch"]),
            parse: airwatch_raw,
        },
        App {
            name: "app-almost-syslog-vmware_vsphere_bad5424",
            topic: Topic::AlmostSyslog,
            order: "vmware/app-almost-syslog-vmware_vsphere_bad5424.conf",
            when: When::Token(&["@6876"]),
            parse: bad5424,
        },
        App {
            name: "app-almost-syslog-ciscvmware_vsphere_guiddate",
            topic: Topic::AlmostSyslog,
            order: "vmware/app-almost-syslog-vmware_vsphere_guiddate.conf",
            // `^<\d+> ?[a-f0-9]{4}-`: a hexadecimal digit after the PRI and a space.
            when: When::Header(Shape::HEX, guid_stamp_follows_pri),
            parse: guiddate,
        },
        App {
            name: "app-netsource-vmware_esx_invalidmultiline",
            topic: Topic::NetSource,
            order: "vmware/app-netsource-vmware_esx_invalidmultiline.conf",
            when: When::NetSource(NETSOURCES),
            parse: ns_multiline,
        },
        App {
            name: "app-netsource-vmware_esx_json",
            topic: Topic::NetSource,
            order: "vmware/app-netsource-vmware_esx_json.conf",
            when: When::NetSource(NETSOURCES),
            parse: ns_json,
        },
        App {
            name: "app-netsource-vmware_vsphere",
            topic: Topic::NetSource,
            order: "vmware/app-netsource-vmware_vsphere.conf",
            when: When::NetSource(NETSOURCES),
            parse: ns_vsphere,
        },
        App {
            name: "app-syslog-vmware_airwatch",
            topic: Topic::Pgm,
            order: "vmware/app-syslog-airwatch.conf",
            when: When::Check(airwatch_program),
            parse: airwatch,
        },
        App {
            name: "app-syslog-vmware_cb-protect",
            topic: Topic::Syslog,
            order: "vmware/app-syslog-vmware_cb-protect.conf",
            when: When::Token(&["Carbon Black App Control event:  "]),
            parse: cb_protect,
        },
        App {
            name: "app-syslog-vmware_horizon",
            topic: Topic::Sdata,
            order: "vmware/app-syslog-vmware_horizon.conf",
            // `View@6876` (checked by the parser) contains the shared token.
            when: When::Token(&["@6876"]),
            parse: horizon_sdata,
        },
        App {
            name: "app-syslog-vmware_horizon",
            topic: Topic::Pgm,
            order: "vmware/app-syslog-vmware_horizon.conf",
            when: When::Check(horizon_program),
            parse: horizon_pgm,
        },
        App {
            name: "app-syslog-vmware_vsphere-sdata",
            topic: Topic::Sdata,
            order: "vmware/app-syslog-vmware_vsphere.conf",
            when: When::Token(&["@6876"]),
            parse: vsphere_sdata,
        },
        App {
            name: "app-syslog-vmware_vsphere-pgm",
            topic: Topic::Pgm,
            order: "vmware/app-syslog-vmware_vsphere.conf",
            when: When::Check(vsphere_program),
            parse: vsphere_pgm,
        },
        App {
            name: "app-syslog-vmware_vsphere-msg",
            topic: Topic::Syslog,
            order: "vmware/app-syslog-vmware_vsphere.conf",
            // `[Originator@6876 ` (checked by the parser) contains the shared token.
            when: When::Token(&["@6876"]),
            parse: vsphere_msg,
        },
    ],
};

/// The `vendor_product`s SC4S's network-source filters accept for vSphere.
static NETSOURCES: &[&str] = &["vmware_vsphere", "vmware_vcenter", "vmware_esx"];

const ESX: usize = 0;
const AUTOBACKUP: usize = 1;
const VC: usize = 2;
const NSX: usize = 3;
const NSXFW: usize = 4;
const NS_ESX: usize = 5;
const NS_JSON: usize = 6;
const NS_MULTI: usize = 7;
const HORIZON: usize = 8;
const CB: usize = 9;
const AIRWATCH: usize = 10;

static KEYS: &[Key] = &[
    Key::new("vmware", "vsphere", "vmware:esxlog", "infraops")
        .class("esx")
        .template(Template::Rfc5424Compact),
    Key::update("vmware:esxlog:auto-backup", "").class("esx"),
    Key::update("vmware:vclog", "").class("vc"),
    Key::update("vmware:nsxlog", "infraops").class("nsx"),
    Key::update("vmware:nsxlog", "netfw").class("nsxfw"),
    Key::new("vmware", "vsphere", "vmware:esxlog", "infraops").class("esx"),
    Key::new("vmware", "vsphere", "vmware:vcenter:json", "infraops")
        .class("esx-json")
        .template(Template::MsgTrim),
    Key::new("vmware", "vsphere", "vmware:esxlog", "infraops")
        .class("esx")
        .template(Template::MsgTrim),
    Key::new("vmware", "horizon", "vmware:horizon", "infraops").template(Template::Rfc5424Compact),
    Key::new("vmware", "cb-protect", "vmware:cb:protect", "epintel").template(Template::KvValues),
    Key::new("vmware", "airwatch", "vmware:airwatch", "epintel")
        .template(Template::MsgOnly)
        .program_source(),
];

/// `head` + lowercase(`tail`), inline; `head` + `tail` as it is when that does not fit.
fn lower<'m>(head: &'static str, tail: &'m [u8]) -> Value<'m, 'static> {
    let mut buf = [0u8; INLINE_CAP];
    if tail.len() <= buf.len() {
        let low = &mut buf[..tail.len()];
        low.copy_from_slice(tail);
        low.make_ascii_lowercase();
        if let Some(i) = Inline::concat(&[head.as_bytes(), low]) {
            return Value::Inline(i);
        }
    }
    Value::Concat(head, tail)
}

fn iprefix(s: &[u8], p: &str) -> bool {
    s.len() >= p.len() && s[..p.len()].eq_ignore_ascii_case(p.as_bytes())
}

fn ieq(s: &[u8], p: &str) -> bool {
    s.eq_ignore_ascii_case(p.as_bytes())
}

const ESX_PREFIXES: &[&str] = &[
    "vmk",
    "lsud",
    "vsan",
    "iofiltervpd",
    "hostd",
    "cmmdstimemachine",
    "vmware",
    "vpxa",
    "eam",
    "rhttpproxy",
    "esxupdate",
    "healthd",
    "configstore",
    "kmxa",
    "crx-cli",
    "backup.sh",
    "configstorebackup",
    "heartbeat",
    "host",
    "vmauthd",
    "localcli",
    "watchdog-vsanperfsvc",
    "watchdog-iofiltervpd",
    "apiforwarder",
    "tmpwatch",
    ".etc.init.d.vsanmgmtd",
    "compliancemanager",
    "hostprofiletrace",
    "vobd",
    "ucs-tool-esxi-inv",
    "usbarb",
];
const ESX_EXACT: &[&str] = &["sdrsinjector", "fdm"];

const VC_PREFIXES: &[&str] = &[
    "vpxd",
    "vws",
    "stats",
    "cim-diag",
    "sms",
    "vim",
    "cis-license",
    "applmgmt-audit",
    "updatemgr",
    "vmafdd",
    "vmcad",
    "vmdird",
    "vmon",
    "osfsd",
    "wcpxsvc",
    "wcpsvc",
    "mbcs",
    "vmcam",
    "vpostgres",
    "vsphere",
    "vcha",
    "vcenter-server",
];

// The filter's lists one by one, as SC4S writes them: the test's reference for the
// first-letter table.
#[cfg(test)]
fn is_esx(p: &[u8]) -> bool {
    ESX_PREFIXES.iter().any(|x| iprefix(p, x)) || ESX_EXACT.iter().any(|x| ieq(p, x))
}
const AUTOBACKUP_PREFIX: &[&str] = &["auto-backup.sh"];
const NSX_PREFIX: &[&str] = &["nsx"];
const NSX_EXACT: &[&str] = &["dfwpktlogs"];
const VSAN_PREFIXES: &[&str] = &["vsan", "storagerm"];

fn is_autobackup(p: &[u8]) -> bool {
    AUTOBACKUP_PREFIX.iter().any(|x| iprefix(p, x))
}
fn is_nsx(p: &[u8]) -> bool {
    NSX_PREFIX.iter().any(|x| iprefix(p, x)) || NSX_EXACT.iter().any(|x| ieq(p, x))
}
// The filter's lists one by one, as SC4S writes them: the test's reference for the
// first-letter table.
#[cfg(test)]
fn is_vsan(p: &[u8]) -> bool {
    VSAN_PREFIXES.iter().any(|x| iprefix(p, x))
}
fn is_vc(p: &[u8]) -> bool {
    VC_PREFIXES.iter().any(|x| iprefix(p, x))
}

/// The vCenter programs of `app-netsource-vmware_vsphere.conf` (`prefix` or exact).
fn is_ns_vc(p: &[u8]) -> bool {
    const PREFIX: &[&str] = &[
        "trust",
        "analytics",
        "ui-",
        "vum",
        "sso",
        "sca",
        "lookup",
        "envoy",
        "vapi",
        "observ",
        "sps",
        "firewall-pktlog",
        "applmgmt",
        "eam-",
        "vpxd-",
    ];
    const EXACT: &[&str] = &[
        "content-library",
        "certificatemanagement-svcs",
        "cis-license",
        "dnsmasq",
        "gclog",
        "perfcharts-localhost_access",
        "postgres-archiver",
        "procstate",
        "rsyslogd",
        "updatemgr",
        "vmafdd",
        "vmcad",
        "vmdird",
        "vmon",
        "vsan-health-main",
        "vsm-main",
        "vstats",
        "wcpsvc",
    ];
    PREFIX.iter().any(|x| iprefix(p, x)) || EXACT.iter().any(|x| ieq(p, x))
}

/// `app-syslog-vmware_vsphere`: the esx key, then the conditional updates in SC4S's order.
fn vsphere<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) {
    let prog = input.program.unwrap_or_default();
    out.key(&KEYS[ESX]);
    out.sourcetype = Some(lower("vmware:esxlog:", prog));
    out.source = Some(lower("vmware:esxlog:", prog));
    if is_autobackup(prog) {
        out.key(&KEYS[AUTOBACKUP]);
        out.source = Some(lower("vmware:esxlog:", prog));
    }
    if is_vc(prog) {
        out.key(&KEYS[VC]);
        out.sourcetype = Some(lower("vmware:vclog:", prog));
        out.source = Some(lower("vmware:vclog:", prog));
    }
    if is_nsx(prog) {
        out.key(&KEYS[NSX]);
        out.sourcetype = Some(lower("vmware:nsxlog:", prog));
        out.source = Some(lower("vmware:nsxlog:", prog));
    }
    if ieq(prog, "dfwpktlogs") {
        out.key(&KEYS[NSXFW]);
        out.sourcetype = Some(lower("vmware:nsxlog:", prog));
        out.source = Some(lower("vmware:nsxlog:", prog));
    }
}

fn sdata<'a>(input: &Input<'a, '_>) -> &'a [u8] {
    input
        .msg
        .structured_data
        .as_ref()
        .map(|s| s.raw())
        .unwrap_or_default()
}

fn vsphere_sdata<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    // SC4S's filter is the regex `[[^\@]@6876` on SDATA: one of `[`, `^`, `@` right before
    // `@6876` (a bracket expression, not an SD-ID), kept as SC4S has it.
    let sd = sdata(input);
    let hit = memchr::memmem::find_iter(sd, b"@6876")
        .any(|i| i > 0 && matches!(sd[i - 1], b'[' | b'^' | b'@'));
    if !hit {
        return false;
    }
    vsphere(input, out);
    true
}

/// The PROGRAM names [`vsphere_program`] accepts (`true`: exactly, else as a prefix), by their
/// lowercase first byte: a PROGRAM is compared with the few names of its first letter instead
/// of all sixty.
/// The vSphere names by their first byte (lower case), and for each first byte the set of
/// second bytes (lower case) its names have: most PROGRAMs share a first letter with some
/// name and are refused by the second, before any name is compared.
struct VsphereNames {
    by_first: Vec<Vec<(&'static str, bool)>>,
    second: Vec<[u64; 4]>,
}

static VSPHERE_BY_FIRST: LazyLock<VsphereNames> = LazyLock::new(|| {
    let mut table = vec![Vec::new(); 256];
    let mut second = vec![[0u64; 4]; 256];
    let prefixes = [
        ESX_PREFIXES,
        VC_PREFIXES,
        AUTOBACKUP_PREFIX,
        NSX_PREFIX,
        VSAN_PREFIXES,
    ];
    for (list, exact) in prefixes
        .iter()
        .map(|l| (l, false))
        .chain([(&ESX_EXACT, true), (&NSX_EXACT, true)])
    {
        for name in list.iter() {
            let first = name.as_bytes()[0].to_ascii_lowercase();
            table[usize::from(first)].push((*name, exact));
            // Every name has a second byte (the test below checks).
            let b = name.as_bytes()[1].to_ascii_lowercase();
            second[usize::from(first)][usize::from(b >> 6)] |= 1 << (b & 63);
        }
    }
    VsphereNames {
        by_first: table,
        second,
    }
});

/// `app-syslog-vmware_vsphere`'s PROGRAM filter (the dispatcher's check, so a PROGRAM it
/// rejects costs no candidate): one of the ESX, vCenter, auto-backup, NSX or vSAN names.
fn vsphere_program<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    input.program.is_some_and(is_vsphere_program)
}

fn is_vsphere_program(p: &[u8]) -> bool {
    let Some(first) = p.first() else {
        return false;
    };
    let names = &*VSPHERE_BY_FIRST;
    let first = usize::from(first.to_ascii_lowercase());
    let Some(b) = p.get(1).map(u8::to_ascii_lowercase) else {
        return false;
    };
    if names.second[first][usize::from(b >> 6)] & (1 << (b & 63)) == 0 {
        return false;
    }
    names.by_first[first].iter().any(|(name, exact)| {
        if *exact {
            ieq(p, name)
        } else {
            iprefix(p, name)
        }
    })
}

fn vsphere_pgm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !vsphere_program(input, out) {
        return false;
    }
    vsphere(input, out);
    true
}

fn vsphere_msg<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if crate::classify::vendors::util::find_lit!(input.body, b"[Originator@6876 ").is_none() {
        return false;
    }
    vsphere(input, out);
    true
}

/// The network-source filters' common part (the `vendor_product` is the prefilter; the
/// vendor/product pair of `vendor_product_by_source` is accepted too).
fn vmware_source(input: &Input<'_, '_>) -> bool {
    let ns = input.netsource;
    (ns.vendor == "vmware" && ns.product == "vsphere") || NETSOURCES.contains(&ns.vendor_product)
}

fn ns_multiline<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !vmware_source(input) || !(input.body.is_empty() || input.body.starts_with(b"-->")) {
        return false;
    }
    let prog = input.program.unwrap_or_default();
    out.key(&KEYS[NS_MULTI]);
    out.sourcetype = Some(lower("vmware:esxlog:", prog));
    out.source = Some(lower("vmware:esxlog:", prog));
    true
}

fn ns_json<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !vmware_source(input) || !input.body.starts_with(b"{") {
        return false;
    }
    out.key(&KEYS[NS_JSON]);
    true
}

fn ns_vsphere<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let prog = input.program.unwrap_or_default();
    if !vmware_source(input) || !is_ns_vc(prog) {
        return false;
    }
    out.key(&KEYS[NS_ESX]);
    // Both updates apply: the filter already requires a vCenter program.
    out.sourcetype = Some(lower("vmware:vclog:", prog));
    out.source = Some(lower("vmware:vclog:", prog));
    out.key(&KEYS[VC]);
    out.sourcetype = Some(lower("vmware:vclog:", prog));
    out.source = Some(lower("vmware:vclog:", prog));
    true
}

fn horizon_sdata<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if crate::classify::vendors::util::find_lit!(sdata(input), b"View@6876").is_none() {
        return false;
    }
    out.key(&KEYS[HORIZON]);
    true
}

/// `app-syslog-vmware_horizon`'s PROGRAM filter.
fn horizon_program<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    input.program.is_some_and(|p| iprefix(p, "view"))
}

fn horizon_pgm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !horizon_program(input, out) {
        return false;
    }
    out.key(&KEYS[HORIZON]);
    true
}

fn cb_protect<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    const HEAD: &[u8] = b"Carbon Black App Control event:  ";
    if !input.body.starts_with(HEAD) {
        return false;
    }
    out.key(&KEYS[CB]);
    // csv-parser with the `: ` delimiter (greedy): the key=value text follows the first
    // `: `, which the filter's prefix guarantees.
    let at = crate::classify::vendors::util::find_lit!(input.body, b": ")
        .map_or(input.body.len(), |i| i + 2);
    out.values = Some(Values {
        text: &input.body[at..],
        syntax: ValuesSyntax::Kv { pair: b' ' },
    });
    true
}

/// `app-syslog-airwatch`'s PROGRAM filter.
fn airwatch_program<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    input.program.is_some_and(|p| ieq(p, "airwatch"))
}

fn airwatch<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !airwatch_program(input, out) {
        return false;
    }
    out.key(&KEYS[AIRWATCH]);
    true
}

/// `PROGRAM[PID]: MESSAGE` as syslog-ng's RFC 3164 parser splits the text after HOST.
fn split_program(text: &[u8]) -> (Option<&[u8]>, Option<&[u8]>, &[u8]) {
    static PGM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([^\s\[:]+)(?:\[([^\]]*)\])?: ?").expect("static regex"));
    match PGM.caps(text) {
        Some(c) => (
            c.get(1).map(|m| m.as_bytes()),
            c.get(2).map(|m| m.as_bytes()),
            &text[c.get(0).map_or(0, |m| m.end())..],
        ),
        None => (None, None, text),
    }
}

/// Stamp, program, pid and the rest of the line from the SD element on.
type Bad5424Parts<'a> = (&'a [u8], &'a [u8], &'a [u8], &'a [u8]);

/// `app-almost-syslog-vmware_vsphere_bad5424`'s pattern on `raw`.
static BAD5424: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^<\d+>(\d\d\d\d-\d\d-\d\dT\d\d[^ ]+) [^ ]+ \w+: \w+ ([^\[]+)\[(\d+)\] (\[[a-zA-Z]+@6876[^\]]+\] *)",
    )
    .expect("static regex")
});

fn bad5424_split(raw: &[u8]) -> Option<Bad5424Parts<'_>> {
    let [stamp, program, pid, sd_start] = match bad5424_scan(raw) {
        Ok(found) => found?,
        Err(Unsure) => {
            let c = BAD5424.caps(raw)?;
            let (stamp, program, pid, sd) = (c.get(1)?, c.get(2)?, c.get(3)?, c.get(4)?);
            [
                stamp.range(),
                program.range(),
                pid.range(),
                sd.range().start..sd.range().start,
            ]
        }
    };
    let (stamp, program, pid) = (&raw[stamp], &raw[program], &raw[pid]);
    // SC4S's group ends `*(?s).*`: the rest of the line as far as it is valid UTF-8 (what a
    // Unicode `.` takes), found without the captures walking it byte by byte.
    let tail = &raw[sd_start.start..];
    let rest = match std::str::from_utf8(tail) {
        Ok(_) => tail,
        Err(e) => &tail[..e.valid_up_to()],
    };
    Some((stamp, program, pid, rest))
}

/// [`bad5424_split`]'s pattern without the regex, on the ASCII bytes it reads: the spans of
/// the stamp, PROGRAM, PID, and where the SD element starts. Each run of the pattern is
/// maximal (the byte after it is one its class excludes), so there is one way to match.
/// `Err(Unsure)` at the first non-ASCII byte the match would read (Unicode `\d`, `\w`,
/// negated classes).
fn bad5424_scan(raw: &[u8]) -> Result<Option<[Range<usize>; 4]>, Unsure> {
    // The next byte, or Unsure when it is not ASCII.
    let peek = |at: usize| -> Result<Option<u8>, Unsure> {
        match raw.get(at) {
            Some(&b) if !b.is_ascii() => Err(Unsure),
            b => Ok(b.copied()),
        }
    };
    // A maximal run of `class` from `at` (at least `min` bytes): its end.
    let run =
        |at: usize, min: usize, class: &dyn Fn(u8) -> bool| -> Result<Option<usize>, Unsure> {
            let mut end = at;
            while let Some(b) = peek(end)? {
                if !class(b) {
                    break;
                }
                end += 1;
            }
            Ok((end - at >= min).then_some(end))
        };
    let lit = |at: usize, l: &[u8]| raw.get(at..at + l.len()) == Some(l);
    let digit = |b: u8| b.is_ascii_digit();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    macro_rules! need {
        ($e:expr) => {
            match $e {
                Some(v) => v,
                None => return Ok(None),
            }
        };
    }
    if !lit(0, b"<") {
        return Ok(None);
    }
    let mut at = need!(run(1, 1, &digit)?);
    if !lit(at, b">") {
        return Ok(None);
    }
    at += 1;
    let stamp_start = at;
    for (n, sep) in [(4, b'-'), (2, b'-'), (2, b'T'), (2, 0)] {
        for _ in 0..n {
            if !peek(at)?.is_some_and(digit) {
                return Ok(None);
            }
            at += 1;
        }
        if sep != 0 {
            if peek(at)? != Some(sep) {
                return Ok(None);
            }
            at += 1;
        }
    }
    at = need!(run(at, 1, &|b| b != b' ')?);
    let stamp = stamp_start..at;
    if !lit(at, b" ") {
        return Ok(None);
    }
    at = need!(run(at + 1, 1, &|b| b != b' ')?);
    if !lit(at, b" ") {
        return Ok(None);
    }
    at = need!(run(at + 1, 1, &word)?);
    if !lit(at, b": ") {
        return Ok(None);
    }
    at = need!(run(at + 2, 1, &word)?);
    if !lit(at, b" ") {
        return Ok(None);
    }
    let program_start = at + 1;
    at = need!(run(program_start, 1, &|b| b != b'[')?);
    let program = program_start..at;
    at += 1; // the `[` that ended the run
    if peek(at - 1)? != Some(b'[') {
        return Ok(None);
    }
    let pid_start = at;
    at = need!(run(at, 1, &digit)?);
    let pid = pid_start..at;
    if !lit(at, b"] [") {
        return Ok(None);
    }
    let sd_start = at + 2;
    at = need!(run(sd_start + 1, 1, &|b| b.is_ascii_alphabetic())?);
    if !lit(at, b"@6876") {
        return Ok(None);
    }
    at = need!(run(at + 5, 1, &|b| b != b']')?);
    if peek(at)? != Some(b']') {
        return Ok(None);
    }
    Ok(Some([stamp, program, pid, sd_start..sd_start]))
}

/// `app-almost-syslog-vmware_vsphere_bad5424`: `<PRI>ISO-STAMP HOST Word: level
/// program[pid] [Xxx@6876 ...] MESSAGE` (ESXi's header in front of a 5424-ish body): SC4S
/// re-reads it as RFC 5424 with PROGRAM, PID and the SD element. sluice keeps the RFC 3164
/// reading (stamp and host are the same) with PROGRAM and PID from the body; the SD element
/// stays at the start of MESSAGE, since an application cannot set SDATA.
fn bad5424<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some((stamp, program, pid, rest)) = bad5424_split(input.msg.raw) else {
        return false;
    };
    // The rebuilt RFC 5424 line must have a valid stamp: SC4S's syslog-parser drops it
    // otherwise (sluice lets the other parsers have it), unless
    // SC4S_DISABLE_DROP_INVALID_VMWARE_VSPHERE=yes keeps it, with the receive time.
    if vtime::parse_iso(stamp, input.zone).is_none() {
        if !input.options.lenient.vmware_vsphere {
            return false;
        }
        out.time = TimeEdit::Recv;
    }
    out.program = Some(Some(program));
    out.pid = Some(Some(pid));
    out.message(rest);
    out.format = Some(Format::Rfc3164);
    true
}

/// `app-almost-syslog-vmware_vsphere_guiddate`: `<PRI>xxxx-xxxx-xxxx-xxxx-xxxZ HOST MSG`
/// (an id where the stamp belongs): read as RFC 3164 with the receive time.
/// The `Z ` that ends the 23-byte GUID stamp right after `<PRI>` (and an optional space).
fn guid_stamp_follows_pri(raw: &[u8]) -> bool {
    let Some(close) = raw.iter().take(5).position(|&b| b == b'>') else {
        return false;
    };
    let at = close + 1 + usize::from(raw.get(close + 1) == Some(&b' '));
    raw.get(at + 23..at + 25) == Some(b"Z ")
}

fn guiddate<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?s)^<\d+> ?[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{3}Z ([^ ]+) (.*)",
        )
        .expect("static regex")
    });
    let Some(c) = RE.caps(input.msg.raw) else {
        return false;
    };
    let (Some(host), Some(rest)) = (c.get(1), c.get(2)) else {
        return false;
    };
    let (program, pid, message) = split_program(rest.as_bytes());
    out.host(host.as_bytes());
    out.time = TimeEdit::Recv;
    out.program = Some(program);
    out.pid = Some(pid);
    out.message(message);
    out.format = Some(Format::Rfc3164);
    true
}

/// `app-almost-syslog-airwatch_raw`: `<PRI> Mmm dd hh:mm:ss HOST AirWatch MSG`, no colon
/// after the program.
fn airwatch_raw<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?s)^<\d+> (\w+ \d{2} \d\d:\d\d:\d\d)\s*([^ ]+)\s*(AirWatch+)\s*(.*)")
            .expect("static regex")
    });
    let Some(c) = RE.caps(input.msg.raw) else {
        return false;
    };
    let (Some(stamp), Some(host), Some(program), Some(message)) =
        (c.get(1), c.get(2), c.get(3), c.get(4))
    else {
        return false;
    };
    out.key(&KEYS[AIRWATCH]);
    if let Some(ts) = vtime::strptime(
        "%B %d %H:%M:%S",
        stamp.as_bytes(),
        input.zone,
        input.now_unix_secs,
    ) {
        out.time(ts);
    }
    out.host(host.as_bytes());
    out.program = Some(Some(program.as_bytes()));
    out.pid = Some(None);
    out.message(message.as_bytes());
    out.format = Some(Format::Rfc3164);
    out.identified = true;
    true
}

#[cfg(test)]
mod tests;
