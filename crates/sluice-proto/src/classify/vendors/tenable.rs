//! Tenable (SC4S `addons/tenable/`): Tenable.ad alerts (PROGRAM `Tenable.ad`) and Nessus
//! Network Monitor (PROGRAM `nnm`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "tenable",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-tenable_ad",
            topic: Topic::Pgm,
            order: "tenable/app-syslog-tenable_ad.conf",
            when: When::Program(&["Tenable.ad"]),
            parse: ad,
        },
        App {
            name: "app-syslog-tenable_syslog",
            topic: Topic::Pgm,
            order: "tenable/app-syslog-tenable_syslog.conf",
            when: When::Program(&["nnm"]),
            parse: nnm,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("tenable", "ad", "tenable:ad:alerts", "oswinsec").class("alert"),
    Key::new("tenable", "nnm", "tenable:nnm:vuln", "netfw"),
];

fn ad<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"Tenable.ad") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn nnm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"nnm") {
        return false;
    }
    out.key(&KEYS[1]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn programs() {
        let c = classify_line("<166>Apr 11 06:12:16 n nnm: 127.0.0.1:0|127.0.0.2:0|17|18|x");
        assert_eq!(c.sourcetype, "tenable:nnm:vuln");
        assert_eq!(c.index, "netfw");
        let c = classify_line("<166>Apr 11 06:12:16 n Tenable.ad: alert");
        assert_eq!(c.sourcetype, "tenable:ad:alerts");
        assert_eq!(c.index, "oswinsec");
    }
}
