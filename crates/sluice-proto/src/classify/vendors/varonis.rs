//! Varonis DatAdvantage over CEF (SC4S `addons/varonis/app-cef-varonis.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef::{self, nv_contains};

pub static VENDOR: Vendor = Vendor {
    name: "varonis",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-varonis",
        topic: Topic::Sub("cef"),
        order: "varonis/app-cef-varonis.conf",
        when: When::Always,
        parse: datadvantage,
    }],
};

static KEYS: &[Key] = &[Key::update("varonis:ta", "")];

fn datadvantage<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"Varonis Inc")
        && nv_contains(out, cef::NV_PRODUCT, b"DatAdvantage"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}
