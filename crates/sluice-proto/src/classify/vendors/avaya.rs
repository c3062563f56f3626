//! Avaya Aura Session Manager SIP logs (SC4S `addons/avaya/app-syslog-avaya_sipmgr.conf`):
//! PROGRAM `AasSipMgr*`; the source is `avaya:<PROGRAM>`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "avaya",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-avaya_sipmgr",
        topic: Topic::Pgm,
        order: "avaya/app-syslog-avaya_sipmgr.conf",
        when: When::ProgramPrefix(&["AasSipMgr"]),
        parse: sipmgr,
    }],
};

static KEYS: &[Key] = &[Key::new("avaya", "sipmgr", "avaya:sipmgr", "main")];

fn sipmgr<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let Some(program) = input.program.filter(|p| p.starts_with(b"AasSipMgr")) else {
        return false;
    };
    out.key(&KEYS[0]);
    // `source('avaya:${PROGRAM}')`: the PROGRAM as it is, directory and all.
    out.source = Some(Value::Concat("avaya:", program));
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    /// SC4S's `test_avaya.py::test_avaya_sip` (its first line: SC4S splits the test's three
    /// lines into three events).
    #[test]
    fn sip_manager() {
        let c = classify_line(
            "<166>May 07 04:48:18 asm-sm-01 AasSipMgr[4603]: -04:00 2021 348 1 com.avaya.asm | 1 com.avaya.asm  SIPMSGT ",
        );
        assert_eq!(c.sourcetype, "avaya:sipmgr");
        assert_eq!(c.index, "main");
        assert_eq!(c.source, "avaya:AasSipMgr");
        assert_eq!(c.vendor, "avaya");
        assert_eq!(c.product, "sipmgr");
        assert_eq!(c.app, "app-syslog-avaya_sipmgr");
        let c = classify_line("<166>May 07 04:48:18 asm AasSipMgrX: x");
        assert_eq!(c.source, "avaya:AasSipMgrX");
        let c = classify_line("<166>May 07 04:48:18 asm AasSip: x");
        assert_eq!(c.sourcetype, "nix:syslog");
    }
}
