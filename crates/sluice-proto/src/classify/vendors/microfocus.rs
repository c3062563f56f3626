//! Micro Focus ArcSight connectors over CEF (SC4S `addons/microfocus/app-cef-arcsight.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "microfocus",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-arcsight",
        topic: Topic::Sub("cef"),
        order: "microfocus/app-cef-arcsight.conf",
        when: When::Check(arcsight_check),
        parse: arcsight,
    }],
};

static KEYS: &[Key] = &[Key::update("cef", "main").source("ArcSight:ArcSight")];

/// The filter of [`arcsight`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn arcsight_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"ArcSight") && out.nv.contains(cef::NV_PRODUCT, b"ArcSight")
}

fn arcsight<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !arcsight_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}
