//! BeyondTrust Secure Remote Access (SC4S `addons/beyondtrust/app-syslog-beyondtrust_sra.conf`):
//! PROGRAM `BG` exactly, a body `<siteid>:<seq>:<parts>:<key=value;...>`. SC4S sends the
//! parsed values as JSON (`t_json_values`, unless `SC4S_DEST_BEYONDTRUST_SRA_SPLUNK_HEC_FMT`
//! says otherwise); a body without the three numbers is not SRA's.
//!
//! An event split into several parts (`<parts>` above 1) is joined as SC4S's
//! `app-postfilter-beyondtrust_sra.conf` joins it ([`crate::classify::group`]).

use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "beyondtrust",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-beyondtrust_sra",
        topic: Topic::Pgm,
        order: "beyondtrust/app-syslog-beyondtrust_sra.conf",
        when: When::Program(&["BG"]),
        parse: sra,
    }],
};

const JSON: usize = 0;
const NATIVE: usize = 1;

static KEYS: &[Key] = &[
    Key::new("beyondtrust", "sra", "beyondtrust:sra", "infraops").template(Template::JsonValues),
    Key::new("beyondtrust", "sra", "beyondtrust:sra", "infraops").template(Template::MsgOnly),
];

/// The header of an SRA body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts<'a> {
    pub siteid: &'a [u8],
    pub seq: &'a [u8],
    /// How many parts the event has.
    pub parts: &'a [u8],
    /// The `key=value;...` text (to the end of the line, as SC4S's `.*`).
    pub message: &'a [u8],
}

/// `^(?<siteid>\d+):(?<seq>\d+):(?<num>\d+):(?<message>.*)`.
pub fn parts(body: &[u8]) -> Option<Parts<'_>> {
    let mut rest = body;
    let mut num = || {
        let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 || rest.get(n) != Some(&b':') {
            return None;
        }
        let d = &rest[..n];
        rest = &rest[n + 1..];
        Some(d)
    };
    let (siteid, seq, parts) = (num()?, num()?, num()?);
    let message = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    Some(Parts {
        siteid,
        seq,
        parts,
        message,
    })
}

fn sra<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"BG") || parts(input.body).is_none() {
        return false;
    }
    out.key(
        &KEYS[if input.options.beyondtrust_sra_json {
            JSON
        } else {
            NATIVE
        }],
    );
    out.values = Some(Values {
        text: input.body,
        syntax: ValuesSyntax::Sra,
    });
    true
}

#[cfg(test)]
mod tests {
    use super::parts;
    use crate::classify::testutil::{
        classifier_with, classify_line, classify_line_with, event_text,
    };
    use crate::classify::{Template, VendorOptions};

    const LINE: &str = "<166>May 08 04:40:52 sra-appliance-01 BG[123]: 1427:01:01:event=logout;site=support.xxx.xxx.gov;target=rep_client;when=1643824736;who=unknown (asdf) using password;who_ip=10.0.85.35";

    /// SC4S's `test_beyondtrust.py::test_beyondtrust_sra`.
    #[test]
    fn sra_event() {
        let c = classify_line(LINE);
        assert_eq!(c.sourcetype, "beyondtrust:sra");
        assert_eq!(c.index, "infraops");
        assert_eq!(c.vendor, "beyondtrust");
        assert_eq!(c.product, "sra");
        assert_eq!(c.template, Template::JsonValues);
        assert_eq!(c.app, "app-syslog-beyondtrust_sra");
        assert_eq!(
            event_text(LINE),
            r#"{"who_ip":"10.0.85.35","who":"unknown (asdf) using password","when":"1643824736","target":"rep_client","siteid":"1427","site":"support.xxx.xxx.gov","seq":"01","sc4s":{"countOfParts":1},"event":"logout"}"#
        );
        // SC4S_DEST_BEYONDTRUST_SRA_SPLUNK_HEC_FMT=NONE: the vendor's text.
        let native = classifier_with(VendorOptions {
            beyondtrust_sra_json: false,
            ..VendorOptions::default()
        });
        let c = classify_line_with(native, LINE);
        assert_eq!(c.sourcetype, "beyondtrust:sra");
        assert_eq!(c.template, Template::MsgOnly);
    }

    #[test]
    fn not_sra() {
        for line in [
            "<166>May 08 04:40:52 sra BG[123]: 1427:01:event=logout",
            "<166>May 08 04:40:52 sra BG[123]: x:01:01:event=logout",
            "<166>May 08 04:40:52 sra BGX[123]: 1427:01:01:event=logout",
        ] {
            assert_ne!(classify_line(line).vendor, "beyondtrust", "{line}");
        }
        // No pairs at all: still SRA's, with the ids.
        let line = "<166>May 08 04:40:52 sra BG: 1:2:3:";
        assert_eq!(classify_line(line).vendor, "beyondtrust");
        assert_eq!(
            event_text(line),
            r#"{"siteid":"1","seq":"2","sc4s":{"countOfParts":3}}"#
        );
    }

    #[test]
    fn header() {
        let p = parts(b"1:02:3:a=b\nrest").unwrap();
        assert_eq!(
            (p.siteid, p.seq, p.parts, p.message),
            (&b"1"[..], &b"02"[..], &b"3"[..], &b"a=b"[..])
        );
        assert!(parts(b"1:2:3").is_none());
        assert!(parts(b":1:2:3:").is_none());
    }
}
