//! Trellix CMS and MPS over CEF (SC4S `addons/trellix/app-cef-trellix_*.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef::{self, nv_contains};

pub static VENDOR: Vendor = Vendor {
    name: "trellix",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-terlix_cms",
            topic: Topic::Sub("cef"),
            order: "trellix/app-cef-trellix_cms.conf",
            when: When::Always,
            parse: cms,
        },
        App {
            name: "app-cef-terlix_mps",
            topic: Topic::Sub("cef"),
            order: "trellix/app-cef-trellix_mps.conf",
            when: When::Always,
            parse: mps,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("trellix", "cms", "trellix:cms", "netops").source("trellix:cms"),
    Key::new("trellix", "mps", "trellix:mps", "netops").source("trellix:mps"),
];

fn cms<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"Trellix") && nv_contains(out, cef::NV_PRODUCT, b"CMS"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn mps<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"Trellix") && nv_contains(out, cef::NV_PRODUCT, b"MPS"))
    {
        return false;
    }
    out.key(&KEYS[1]);
    true
}
