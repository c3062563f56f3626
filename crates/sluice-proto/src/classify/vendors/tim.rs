//! TIM over CEF (SC4S `addons/tim/app-cef-tim.conf`): device vendor containing `TIM`;
//! sourcetype stays `cef`, index `infraops`, source `tim:cef`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "tim",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-tim",
        topic: Topic::Sub("cef"),
        order: "tim/app-cef-tim.conf",
        when: When::Check(check),
        parse: tim,
    }],
};

static KEYS: &[Key] = &[Key::update("cef", "infraops").source("tim:cef")];

/// SC4S's unanchored `match("TIM" ...)`: any device vendor containing `TIM`.
fn check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"TIM")
}

fn tim<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn tim() {
        let e = event_of(
            "<166> May 26 15:09:37 tim-gw-01 CEF:0|TIM|AT 00012345||Security|Login successful|25|externalId=ID1234567890123456789012345678 suser=12345678 rt=2022-07-05 23:50:04 src=123.123.123.123 dst=123.123.123.123 cnt=1",
        );
        assert_eq!(e["sourcetype"], "cef");
        assert_eq!(e["index"], "infraops");
        assert_eq!(e["source"], "tim:cef");
        assert_eq!(e["host"], "tim-gw-01");
        assert_eq!(e["fields"]["sc4s_vendor"], "TIM");
        assert_eq!(e["fields"]["sc4s_product"], "AT 00012345");
        assert!(
            e["event"]
                .as_str()
                .unwrap()
                .contains("externalId=ID1234567890123456789012345678 suser=12345678")
        );
        // `rt=` in a format SC4S does not read: the header's time stays.
        assert_eq!(e["time"], "1716736177.000");
        assert_eq!(
            classify_line("<166>May 26 15:09:37 h CEF:0|OPTIMAL|x|1|c|n|2|a=b").index,
            "infraops"
        );
        assert_eq!(
            classify_line("<166>May 26 15:09:37 h CEF:0|Tim|x|1|c|n|2|a=b").index,
            "main"
        );
    }
}
