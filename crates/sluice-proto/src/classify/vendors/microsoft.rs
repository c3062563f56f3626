//! Microsoft over CEF: Cloud App Security and Windows event logs (SC4S
//! `addons/microsoft/app-cef-mcas.conf`, `app-cef-microsoft.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef::{self, nv_contains};

pub static VENDOR: Vendor = Vendor {
    name: "microsoft",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-mcas",
            topic: Topic::Sub("cef"),
            order: "microsoft/app-cef-mcas.conf",
            when: When::Always,
            parse: mcas,
        },
        App {
            name: "app-cef-microsoft",
            topic: Topic::Sub("cef"),
            order: "microsoft/app-cef-microsoft.conf",
            when: When::Always,
            parse: windows,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("cef", "").source("microsoft:cas"),
    Key::update("cef", "oswinsec").source("CEFEventLog:Microsoft Windows"),
    Key::update("cef", "oswin").source("CEFEventLog:System or Application Event"),
];

fn mcas<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"MCAS")
        && nv_contains(out, cef::NV_PRODUCT, b"SIEM_Agent"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn windows<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !nv_contains(out, cef::NV_VENDOR, b"Microsoft") {
        return false;
    }
    let app_event = out.nv.is(cef::NV_PRODUCT, b"System or Application Event");
    out.key(&KEYS[1 + usize::from(app_event)]);
    true
}
