//! Microsoft over CEF: Cloud App Security and Windows event logs (SC4S
//! `addons/microsoft/app-cef-mcas.conf`, `app-cef-microsoft.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "microsoft",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-mcas",
            topic: Topic::Sub("cef"),
            order: "microsoft/app-cef-mcas.conf",
            when: When::Check(mcas_check),
            parse: mcas,
        },
        App {
            name: "app-cef-microsoft",
            topic: Topic::Sub("cef"),
            order: "microsoft/app-cef-microsoft.conf",
            when: When::Check(windows_check),
            parse: windows,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("cef", "").source("microsoft:cas"),
    Key::update("cef", "oswinsec").source("CEFEventLog:Microsoft Windows"),
    Key::update("cef", "oswin").source("CEFEventLog:System or Application Event"),
];

/// The filter of [`mcas`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn mcas_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"MCAS") && out.nv.contains(cef::NV_PRODUCT, b"SIEM_Agent")
}

fn mcas<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !mcas_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

/// The filter of [`windows`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn windows_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Microsoft")
}

fn windows<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !windows_check(input, out) {
        return false;
    }
    let app_event = out.nv.is(cef::NV_PRODUCT, b"System or Application Event");
    out.key(&KEYS[1 + usize::from(app_event)]);
    true
}
