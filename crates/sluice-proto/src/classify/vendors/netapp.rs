//! NetApp (SC4S `addons/netapp/`): ONTAP and StorageGRID.
//!
//! * ONTAP, old format (`SC4S_NETAPP_ONTAP_NEW_FORMAT` not `yes`, the default): any message
//!   whose PROGRAM is a plain name (`[A-Za-z0-9_.-]+`) and whose MESSAGE is an ONTAP audit
//!   line (`name: hex.hex hex Www Mmm dd yyyy hh:mm:ss ±h:mm ...`) is `ontap:ems`; HOST
//!   becomes the PROGRAM, which is folded back into MESSAGE.
//! * ONTAP, new format (`SC4S_NETAPP_ONTAP_NEW_FORMAT=yes`): only messages a listener or
//!   `vendor_product_by_source` names `netapp`/`ontap`: the audit line (as above) is
//!   `netapp:ontap:audit`, `[host:category:severity]: text` is `netapp:ontap:ems` with HOST,
//!   MESSAGE and the indexed fields `category` and `severity` from it, anything else
//!   `netapp:ontap:ems`. Unlike SC4S's other network-source parsers this one also re-labels
//!   a message another parser identified.
//! * StorageGRID: PROGRAM `Audit*` is `grid:auditlog`, `NMS*` is `grid:rest:api`.
//!
//! The audit stamp is read as `%b %d %Y %H:%M:%S %z`; when that fails the header time stays
//! and `sc4s_error` says so, as SC4S's `date-parser-nofilter` does.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::Value;
use crate::classify::vendors::util::span;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "netapp",
    keys: KEYS,
    apps: &[
        App {
            name: "app-netsource-netapp_ontap",
            topic: Topic::NetSource,
            order: "netapp/app-netsource-netapp_ontap.conf",
            when: When::NetSource(&["netapp_ontap"]),
            parse: ontap_netsource,
        },
        App {
            name: "app-syslog-netapp_grid",
            topic: Topic::Syslog,
            order: "netapp/app-syslog-netapp_grid.conf",
            when: When::ProgramPrefix(&["Audit", "NMS"]),
            parse: grid,
        },
        App {
            name: "app-syslog-netapp_ontap",
            topic: Topic::Syslog,
            order: "netapp/app-syslog-netapp_ontap.conf",
            when: When::Check(ontap_check),
            parse: ontap,
        },
    ],
};

const ONTAP_EMS_OLD: usize = 0;
const ONTAP_AUDIT: usize = 1;
const ONTAP_EMS: usize = 2;
const GRID_AUDIT: usize = 3;
const GRID_API: usize = 4;

static KEYS: &[Key] = &[
    Key::new("netapp", "ontap", "ontap:ems", "infraops").class("ems"),
    Key::new("netapp", "ontap", "netapp:ontap:audit", "infraops").class("audit"),
    Key::new("netapp", "ontap", "netapp:ontap:ems", "infraops").class("ems"),
    Key::new("netapp", "grid", "grid:auditlog", "infraops"),
    Key::new("netapp", "grid", "grid:rest:api", "infraops"),
];

const STAMP_FORMAT: &str = "%b %d %Y %H:%M:%S %z";
const STAMP_ERROR: &str = "dtparse: Expected: %b %d %Y %H:%M:%S %z; Actual: ";

/// `[A-Za-z0-9_.-]`, by table: the old-format check runs on most messages of its topic.
static NAME_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.';
        b += 1;
    }
    t
};

/// `[0-9a-f]`, by table.
static HEX_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_digit() || (c >= b'a' && c <= b'f');
        b += 1;
    }
    t
};

fn name_len(s: &[u8]) -> usize {
    s.iter().take_while(|&&b| NAME_BYTE[usize::from(b)]).count()
}

/// SC4S's `program('^[A-Za-z0-9\-\_\.]+$')`.
fn plain_name(p: &[u8]) -> bool {
    !p.is_empty() && name_len(p) == p.len()
}

/// The stamp of an ONTAP audit line:
/// `^[A-Za-z0-9\-\_\.]+: [0-9a-f]+\.[0-9a-f]+ [0-9a-f]+ [A-Z][a-z][a-z] (?<timestamp>...)`
/// where the stamp is `[A-Z][a-z][a-z] \d\d \d\d\d\d \d\d:\d\d:\d\d [+-]?\d{1,2}:\d\d`.
fn audit_stamp(m: &[u8]) -> Option<&[u8]> {
    let mut i = name_len(m);
    if i == 0 || m.get(i..i + 2) != Some(b": ") {
        return None;
    }
    i += 2;
    for sep in [b'.', b' ', b' '] {
        let rest = m.get(i..)?;
        let n = rest
            .iter()
            .position(|&b| !HEX_BYTE[usize::from(b)])
            .unwrap_or(rest.len());
        if n == 0 || rest.get(n) != Some(&sep) {
            return None;
        }
        i += n + 1;
    }
    let word = |i: usize| {
        m.get(i).is_some_and(u8::is_ascii_uppercase)
            && m.get(i + 1).is_some_and(u8::is_ascii_lowercase)
            && m.get(i + 2).is_some_and(u8::is_ascii_lowercase)
    };
    if !word(i) || m.get(i + 3) != Some(&b' ') {
        return None;
    }
    let start = i + 4;
    // `Mmm dd yyyy hh:mm:ss ` is fixed-width.
    let shape = b"Aaa 00 0000 00:00:00 ";
    let fixed = m.get(start..start + shape.len())?;
    let fits = fixed.iter().zip(shape).all(|(&c, &s)| match s {
        b'A' => c.is_ascii_uppercase(),
        b'a' => c.is_ascii_lowercase(),
        b'0' => c.is_ascii_digit(),
        _ => c == s,
    });
    if !fits {
        return None;
    }
    let mut j = start + shape.len();
    if matches!(m.get(j), Some(b'+' | b'-')) {
        j += 1;
    }
    let hours = m[j.min(m.len())..]
        .iter()
        .take(3)
        .take_while(|b| b.is_ascii_digit())
        .count();
    // `\d{1,2}:` backtracks over a third digit only to fail at the `:`.
    if !(1..=2).contains(&hours) || m.get(j + hours) != Some(&b':') {
        return None;
    }
    j += hours + 1;
    if !(m.get(j).is_some_and(u8::is_ascii_digit) && m.get(j + 1).is_some_and(u8::is_ascii_digit)) {
        return None;
    }
    Some(&m[start..j + 2])
}

/// The audit line's stamp as the event time, or `sc4s_error` when it cannot be read.
fn audit_time<'m>(stamp: &'m [u8], input: &Input<'m, '_>, out: &mut Out<'m>) {
    match vtime::strptime(STAMP_FORMAT, stamp, input.zone, input.now_unix_secs) {
        Some(ts) => out.time(ts),
        None => out.field("sc4s_error", Value::Concat(STAMP_ERROR, stamp)),
    }
}

/// `set('$PROGRAM: $MESSAGE', value(MESSAGE)); set('$PROGRAM', value(HOST));
/// unset(value(PROGRAM))`. The received text from PROGRAM to the end of MESSAGE stands for
/// `PROGRAM: MESSAGE` (they are the same when the header's separator is `: `, as ONTAP
/// sends it).
fn fold_program<'m>(input: &Input<'m, '_>, out: &mut Out<'m>, program: &'m [u8]) {
    if let Some(whole) = span(input.msg.raw, program, input.body) {
        out.message(whole);
    }
    out.host(program);
    out.program = Some(None);
    out.pid = Some(None);
}

/// The old-format application's filter (PROGRAM a plain name, the setting not `yes`) and
/// the audit line its parser requires. Most messages of the topic have a plain PROGRAM: the
/// MESSAGE test, which fails within a few bytes on anything else, keeps them from costing
/// the dispatcher a copy of `Out`.
fn ontap_check<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    !input.options.netapp_ontap_new_format
        && audit_stamp(input.body).is_some()
        && input.program.is_some_and(plain_name)
}

fn ontap<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !ontap_check(input, out) {
        return false;
    }
    let Some(program) = input.program else {
        return false;
    };
    // The regexp-parser is not optional: without the audit line the application fails.
    let Some(stamp) = audit_stamp(input.body) else {
        return false;
    };
    audit_time(stamp, input, out);
    fold_program(input, out, program);
    out.key(&KEYS[ONTAP_EMS_OLD]);
    true
}

fn ontap_netsource<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static EMS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\[([^:]+):([^:]+):([^\]]+)\]: (.*)").expect("static regex"));
    let ns = input.netsource;
    if !input.options.netapp_ontap_new_format || ns.vendor != "netapp" || ns.product != "ontap" {
        return false;
    }
    let body = input.body;
    if let Some(stamp) = audit_stamp(body) {
        audit_time(stamp, input, out);
        // Without a PROGRAM (an RFC 5424 `-`) SC4S would empty HOST and prefix `: `;
        // sluice keeps both as they are.
        if let Some(program) = input.program {
            fold_program(input, out, program);
        }
        out.key(&KEYS[ONTAP_AUDIT]);
        return true;
    }
    out.key(&KEYS[ONTAP_EMS]);
    if let Some(c) = EMS.captures(body)
        && let (Some(host), Some(category), Some(severity), Some(text)) =
            (c.get(1), c.get(2), c.get(3), c.get(4))
    {
        out.message(&body[text.range()]);
        out.host(&body[host.range()]);
        out.field("category", Value::Bytes(&body[category.range()]));
        out.field("severity", Value::Bytes(&body[severity.range()]));
    }
    true
}

fn grid<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(p) = input.program else {
        return false;
    };
    // Both filters are tried in turn; an `NMS...` program that also started `Audit` cannot.
    let key = if p.starts_with(b"Audit") {
        GRID_AUDIT
    } else if p.starts_with(b"NMS") {
        GRID_API
    } else {
        return false;
    };
    out.key(&KEYS[key]);
    true
}

#[cfg(test)]
mod tests;
