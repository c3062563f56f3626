//! OPSWAT over CEF (SC4S `addons/opswat/app-cef-opswat.conf`): device vendor `OPSWAT`;
//! vendor `opswat`, product the CEF device product, sourcetype
//! `opswat:<product, lowercase>:cef`, source `opswat:<product, lowercase>`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::{INLINE_CAP, Inline, Value};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "opswat",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-opswat-mscl",
        topic: Topic::Sub("cef"),
        order: "opswat/app-cef-opswat.conf",
        when: When::Check(check),
        parse: mscl,
    }],
};

/// The sourcetype stands in only for a device product too long to lowercase inline (over 51
/// bytes); SC4S's would be `opswat:<product>:cef`.
static KEYS: &[Key] = &[Key::new("opswat", "", "opswat:cef", "netwaf")];

fn check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"OPSWAT")
}

fn mscl<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !check(input, out) {
        return false;
    }
    let product = out.nv.get(cef::NV_PRODUCT).unwrap_or_default();
    out.key(&KEYS[0]);
    out.product = Some(Value::Bytes(product));
    let mut low = [0u8; INLINE_CAP];
    if let Some(low) = low.get_mut(..product.len()) {
        low.copy_from_slice(product);
        low.make_ascii_lowercase();
        if let Some(st) = Inline::concat(&[b"opswat:", low, b":cef"]) {
            out.sourcetype = Some(Value::Inline(st));
        }
        out.source = Inline::concat(&[b"opswat:", low]).map(Value::Inline);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn mscl() {
        let line = "<134>May 24 05:38:26 mscl-core-01 OPSWATPC CEF:0|OPSWAT|MSCL|4.16.0|core.network|MSCL[7548] New maximum agent count is set|2|maxAgentCount='1' msgid=665";
        let e = event_of(line);
        assert_eq!(e["sourcetype"], "opswat:mscl:cef");
        assert_eq!(e["source"], "opswat:mscl");
        assert_eq!(e["index"], "netwaf");
        assert_eq!(e["host"], "mscl-core-01");
        assert_eq!(e["fields"]["sc4s_vendor"], "opswat");
        assert_eq!(e["fields"]["sc4s_product"], "MSCL");
        assert_eq!(e["fields"]["sc4s_class"], "core.network");
        let text = e["event"].as_str().unwrap();
        assert!(
            text.contains("MSCL[7548] New maximum agent count is set"),
            "{text}"
        );
        // SC4S's default template again (r_set_splunk_dest_default).
        assert_eq!(
            classify_line(line).template,
            crate::classify::Template::HdrMsg
        );
        // An unanchored match: `OPSWAT Inc.` too; an empty product: `opswat::cef`.
        let c = classify_line("<134>May 24 05:38:26 h CEF:0|OPSWAT Inc.||1|c|n|2|a=b");
        assert_eq!(c.sourcetype, "opswat::cef");
        // A product too long to lowercase inline keeps the stand-in sourcetype.
        let long = "P".repeat(60);
        let c = classify_line(&format!(
            "<134>May 24 05:38:26 h CEF:0|OPSWAT|{long}|1|c|n|2|a=b"
        ));
        assert_eq!(c.sourcetype, "opswat:cef");
        assert_eq!(c.source, "sc4s");
    }
}
