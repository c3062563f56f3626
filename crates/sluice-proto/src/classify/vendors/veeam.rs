//! Veeam Backup & Replication (SC4S `addons/veeam/app-syslog-veeam_vbr.conf`): PROGRAM
//! `Veeam_MP*`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "veeam",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-veeam_vbr",
        topic: Topic::Pgm,
        order: "veeam/app-syslog-veeam_vbr.conf",
        when: When::ProgramPrefix(&["Veeam_MP"]),
        parse: vbr,
    }],
};

static KEYS: &[Key] = &[Key::new("veeam", "vbr", "veeam:vbr:syslog", "infraops").class("syslog")];

fn vbr<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"Veeam_MP")) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn program() {
        let c = classify_line("<14>1 2024-04-13T02:42:03.817217+00:00 v Veeam_MP - - - created.");
        assert_eq!(c.sourcetype, "veeam:vbr:syslog");
        assert_eq!(c.index, "infraops");
    }
}
