//! Micro Focus ArcSight connectors over CEF (SC4S `addons/microfocus/app-cef-arcsight.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef::{self, nv_contains};

pub static VENDOR: Vendor = Vendor {
    name: "microfocus",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-arcsight",
        topic: Topic::Sub("cef"),
        order: "microfocus/app-cef-arcsight.conf",
        when: When::Always,
        parse: arcsight,
    }],
};

static KEYS: &[Key] = &[Key::update("cef", "main").source("ArcSight:ArcSight")];

fn arcsight<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"ArcSight")
        && nv_contains(out, cef::NV_PRODUCT, b"ArcSight"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}
