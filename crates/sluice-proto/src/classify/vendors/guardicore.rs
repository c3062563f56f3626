//! Guardicore Centra (SC4S `addons/guardicore/app-almost-syslog-guardicore_centra.conf`,
//! `app-cef-guardicore_centra.conf`): CEF, sometimes behind a header whose ISO stamp has no
//! seconds (`<14>2024-05-21T04:55Z host CEF:0|Guardicore|Centra|...`), which SC4S repairs
//! before the CEF parser runs.

use memchr::memmem;
use std::sync::LazyLock;

use crate::classify::registry::{App, Input, Key, Out, Shape, Topic, Vendor, When};
use crate::classify::vendors::almost_levelword::set_host_and_tail;
use crate::classify::vendors::cef;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "guardicore",
    keys: KEYS,
    apps: &[
        App {
            name: "app-almost-syslog-guardicore_centra",
            topic: Topic::AlmostSyslog,
            order: "guardicore/app-almost-syslog-guardicore_centra.conf",
            when: When::Header(Shape::ISO_MINUTE_Z, |raw| centra_header(raw).is_some()),
            parse: almost_syslog,
        },
        App {
            name: "app-cef-guardicore_centra",
            topic: Topic::Sub("cef"),
            order: "guardicore/app-cef-guardicore_centra.conf",
            when: When::Check(centra_cef_check),
            parse: centra_cef,
        },
    ],
};

static KEYS: &[Key] = &[Key::update("guardicore:centra:cef", "netops").source("guardicore:centra")];

/// What SC4S's pattern reads, when the rest of its parser can succeed:
/// `^<\d+> ?(?<timestamp>...) (?<host>[^ ]+) (?<message>CEF:0.*)` with a stamp its
/// date-parser (`%Y-%m-%dT%H:%MZ`) takes: exactly `yyyy-mm-ddThh:mmZ`. Other stamps the
/// pattern allows fail the date-parser, and the application with it. Returns the stamp,
/// HOST and the CEF text (to the end of the line, as `.*` stops there).
fn centra_header(raw: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let digits = raw
        .get(1..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if raw.first() != Some(&b'<') || digits == 0 || raw.get(1 + digits) != Some(&b'>') {
        return None;
    }
    let s = &raw[digits + 2..];
    let s = s.strip_prefix(b" ").unwrap_or(s);
    let shape = b"dddd-dd-ddTdd:ddZ ";
    if s.len() < shape.len()
        || !shape.iter().zip(s).all(|(&want, &got)| match want {
            b'd' => got.is_ascii_digit(),
            _ => got == want,
        })
    {
        return None;
    }
    let stamp = &s[..shape.len() - 1];
    let after = &s[shape.len()..];
    let host_len = memchr::memchr(b' ', after)?;
    if host_len == 0 {
        return None;
    }
    let message = &after[host_len + 1..];
    if !message.starts_with(b"CEF:0") {
        return None;
    }
    let message = &message[..memchr::memchr(b'\n', message).unwrap_or(message.len())];
    Some((stamp, &after[..host_len], message))
}

fn almost_syslog<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static SIGNATURE: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"CEF:0|Guardicore|Centra|"));
    let raw: &'m [u8] = input.msg.raw;
    let Some((stamp, host, message)) = centra_header(raw) else {
        return false;
    };
    if SIGNATURE.find(raw).is_none() {
        return false;
    }
    let Some(ts) = vtime::strptime("%Y-%m-%dT%H:%MZ", stamp, input.zone, input.now_unix_secs)
    else {
        return false;
    };
    out.time(ts);
    // The RFC 3164 re-parse of `<pri> stamp host CEF:0|...`: PROGRAM `CEF`, MESSAGE `0|...`,
    // which the CEF application of the pgm topic then reads.
    set_host_and_tail(out, host, message);
    true
}

/// `match("Guardicore" ...device_vendor) and match("Centra" ...device_product)`.
fn centra_cef_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Guardicore") && out.nv.contains(cef::NV_PRODUCT, b"Centra")
}

fn centra_cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !centra_cef_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use super::centra_header;
    use crate::classify::registry::Shape;
    use crate::classify::testutil::{assert_needs_shape, classify_line};
    use crate::classify::{HostEdit, TimeEdit, Value};

    const EXT: &str = "id=cda17db8 act=Allowed cnt=1 src=1.1.1.1 shost=shost dst=1.1.1.1 dpt=53 dhost=Unknown proto=TCP cs1Label=connection_type cs1=SUCCESSFUL cs8Label=policy_ruleset cs8=AIX DNS Control";

    fn host(c: &crate::classify::Classification<'_, '_>) -> String {
        match c.host {
            HostEdit::Set(v) => v.to_string_lossy(),
            _ => String::new(),
        }
    }

    /// SC4S's `test_guardicore.py::test_guardicore_centra_almost_syslog`.
    #[test]
    fn almost_syslog() {
        let c = classify_line(&format!(
            "<14>2024-05-21T04:55Z guardicore-ctr-aggr01 CEF:0|Guardicore|Centra|51|Network Log|Network Log|None|{EXT}"
        ));
        assert_eq!(c.sourcetype, "guardicore:centra:cef");
        assert_eq!(c.index, "netops");
        assert_eq!(c.source, "guardicore:centra");
        assert_eq!(c.vendor, "Guardicore");
        assert_eq!(c.product, "Centra");
        assert_eq!(host(&c), "guardicore-ctr-aggr01");
        assert!(matches!(c.time, TimeEdit::Stamp(t) if t.unix_secs == 1_716_267_300));
        assert!(matches!(c.edit.message, Some(Value::Bytes(m)) if m.starts_with(b"0|Guardicore|")));
        // With seconds the date-parser fails: the ordinary ISO header reads it, same labels.
        let c = classify_line(&format!(
            "<14>2024-05-21T04:55:12Z gc-02 CEF:0|Guardicore|Centra|51|Network Log|Network Log|None|{EXT}"
        ));
        assert_eq!(c.sourcetype, "guardicore:centra:cef");
        // Another vendor's CEF behind the same header is not repaired by Guardicore's parser.
        let c = classify_line("<14>2024-05-21T04:55Z h CEF:0|Other|Centra|51|x|y|1|a=b");
        assert_ne!(c.sourcetype, "guardicore:centra:cef");
    }

    /// SC4S's `test_guardicore.py::test_guardicore_centra_cef`.
    #[test]
    fn cef() {
        let c = classify_line(&format!(
            "<14>May 21 06:00:44 guardicore-ctr-aggr02 CEF:0|Guardicore|Centra|51|Network Log|Network Log|None|{EXT}"
        ));
        assert_eq!(c.sourcetype, "guardicore:centra:cef");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "Guardicore");
        assert_eq!(c.product, "Centra");
        // A malformed CEF header (too few fields) is not Guardicore's.
        let c = classify_line("<14>May 21 06:00:44 gc CEF:0|Guardicore|Centra|51");
        assert_ne!(c.sourcetype, "guardicore:centra:cef");
    }

    #[test]
    fn header() {
        assert!(centra_header(b"<14> 2024-05-21T04:55Z h CEF:0|x").is_some());
        assert!(centra_header(b"<14>2024-05-21T04:55Z  h CEF:0|x").is_none());
        assert!(centra_header(b"<14>2024-05-21T04:55Z h x CEF:0|x").is_none());
        assert_eq!(
            centra_header(b"<14>2024-05-21T04:55Z h CEF:0|a\nb").map(|h| h.2),
            Some(&b"CEF:0|a"[..])
        );
        assert_needs_shape(
            Shape::ISO_MINUTE_Z,
            |raw| centra_header(raw).is_some(),
            &[
                "<14>2024-05-21T04:55Z h CEF:0|x",
                "<1> 2024-05-21T04:55Z h CEF:0",
            ],
        );
    }
}
