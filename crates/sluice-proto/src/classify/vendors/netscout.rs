//! NETSCOUT Arbor over CEF (SC4S `addons/netscout/app-cef-netscout_arbor-edge.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "netscout",
    keys: KEYS,
    apps: &[App {
        name: "app-cef-netscout_arbor-edge",
        topic: Topic::Sub("cef"),
        order: "netscout/app-cef-netscout_arbor-edge.conf",
        when: When::Check(arbor_check),
        parse: arbor,
    }],
};

static KEYS: &[Key] =
    &[Key::update("netscout:aed", "netids").template(crate::classify::Template::MsgOnly)];

/// The filter of [`arbor`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn arbor_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    let product = out.nv.get(cef::NV_PRODUCT).unwrap_or_default();
    out.nv.is(cef::NV_VENDOR, b"NETSCOUT")
        && matches!(
            product,
            b"Arbor Enterprise Manager" | b"Arbor Edge Defense" | b"Arbor Networks APS"
        )
}

fn arbor<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !arbor_check(input, out) {
        return false;
    }
    // kv-parser over MESSAGE: deviceHostName becomes HOST.
    if let Some(h) = out
        .nv
        .get(cef::NV_EXT)
        .and_then(|ext| cef::ext_get(ext, b"deviceHostName"))
        .filter(|h| !h.is_empty())
    {
        out.host(h);
    }
    out.key(&KEYS[0]);
    true
}
