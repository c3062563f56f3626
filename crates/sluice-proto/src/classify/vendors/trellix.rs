//! Trellix CMS and MPS over CEF (SC4S `addons/trellix/app-cef-trellix_*.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "trellix",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-terlix_cms",
            topic: Topic::Sub("cef"),
            order: "trellix/app-cef-trellix_cms.conf",
            when: When::Check(cms_check),
            parse: cms,
        },
        App {
            name: "app-cef-terlix_mps",
            topic: Topic::Sub("cef"),
            order: "trellix/app-cef-trellix_mps.conf",
            when: When::Check(mps_check),
            parse: mps,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("trellix", "cms", "trellix:cms", "netops").source("trellix:cms"),
    Key::new("trellix", "mps", "trellix:mps", "netops").source("trellix:mps"),
];

/// The filter of [`cms`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn cms_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Trellix") && out.nv.contains(cef::NV_PRODUCT, b"CMS")
}

fn cms<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !cms_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

/// The filter of [`mps`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn mps_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Trellix") && out.nv.contains(cef::NV_PRODUCT, b"MPS")
}

fn mps<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !mps_check(input, out) {
        return false;
    }
    out.key(&KEYS[1]);
    true
}
