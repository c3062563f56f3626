//! XYPRO NonStop over CEF (SC4S `addons/xypro/app-cef-xypro_nonstop.conf`): device vendor
//! `XYPRO`, product `NONSTOP`; sourcetype `cef:json`, index `infraops`, source
//! `xypro:nonstop:<event class>`, event text `t_json_values` (the CEF header columns and the
//! extension's pairs as one JSON object).

use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "xypro",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-xypro_nonstop",
        topic: Topic::Sub("cef"),
        order: "xypro/app-cef-xypro_nonstop.conf",
        when: When::Check(check),
        parse: nonstop,
    }],
};

static KEYS: &[Key] = &[Key::update("cef:json", "infraops").template(Template::JsonValues)];

fn check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"XYPRO") && out.nv.contains(cef::NV_PRODUCT, b"NONSTOP")
}

fn nonstop<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !check(input, out) {
        return false;
    }
    let class = out.nv.get(cef::NV_CLASS).unwrap_or_default();
    out.key(&KEYS[0]);
    out.source = Some(Value::Concat("xypro:nonstop:", class));
    // The text the CEF parser split (MESSAGE as it left it).
    let text = match out.message {
        Some(Value::Bytes(m)) => m,
        _ => input.body,
    };
    out.values = Some(Values {
        text,
        syntax: ValuesSyntax::Cef,
    });
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn nonstop() {
        let e = event_of(
            "<134>May 24 05:38:26 ns-01 CEF:0|XYPRO|NONSTOP|3.0|SAFEGUARD|Logon Attempt|5|suser=SUPER.OPS src=10.0.0.5 cs1Label=Terminal cs1=$ZTN0.#PTY01 outcome=Success",
        );
        assert_eq!(e["sourcetype"], "cef:json");
        assert_eq!(e["index"], "infraops");
        assert_eq!(e["source"], "xypro:nonstop:SAFEGUARD");
        assert_eq!(e["host"], "ns-01");
        assert_eq!(e["fields"]["sc4s_vendor"], "XYPRO");
        assert_eq!(e["fields"]["sc4s_product"], "NONSTOP");
        let text = e["event"].as_str().unwrap();
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["suser"], "SUPER.OPS");
        assert_eq!(v["Terminal"], "$ZTN0.#PTY01");
        assert_eq!(v["cef"]["device_event_class"], "SAFEGUARD");
        // syslog-ng took `CEF` as the PROGRAM: the first column is what is left of it.
        assert_eq!(v["cef"]["version"], "0");
        assert!(v.get("cs1").is_none());
        assert!(text.starts_with(r#"{"suser":"SUPER.OPS","src":"10.0.0.5","outcome":"Success","#));
        let c = classify_line("<134>May 24 05:38:26 h CEF:0|XYPRO|Other|1|c|n|2|a=b");
        assert_eq!(c.sourcetype, "cef");
    }
}
