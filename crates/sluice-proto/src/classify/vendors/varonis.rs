//! Varonis DatAdvantage over CEF (SC4S `addons/varonis/app-cef-varonis.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "varonis",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-varonis",
        topic: Topic::Sub("cef"),
        order: "varonis/app-cef-varonis.conf",
        when: When::Check(datadvantage_check),
        parse: datadvantage,
    }],
};

static KEYS: &[Key] = &[Key::update("varonis:ta", "")];

/// The filter of [`datadvantage`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn datadvantage_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Varonis Inc")
        && out.nv.contains(cef::NV_PRODUCT, b"DatAdvantage")
}

fn datadvantage<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !datadvantage_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}
