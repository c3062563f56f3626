//! Imperva SecureSphere and Incapsula over CEF (SC4S `addons/imperva/app-cef-imperva_*.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "imperva",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-imperva_incapsula",
            topic: Topic::Sub("cef"),
            order: "imperva/app-cef-imperva_incapsula.conf",
            when: When::Check(incapsula_check),
            parse: incapsula,
        },
        App {
            name: "app-cef-imperva_securesphere",
            topic: Topic::Sub("cef"),
            order: "imperva/app-cef-imperva_securesphere.conf",
            when: When::Check(securesphere_check),
            parse: securesphere,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("cef", "netwaf").source("Imperva:Incapsula"),
    Key::update("imperva:waf", "netwaf"),
];

/// The filter of [`incapsula`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn incapsula_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Incapsula")
        && out.nv.contains(cef::NV_PRODUCT, b"SIEMintegration")
}

fn incapsula<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !incapsula_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

/// The filter of [`securesphere`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn securesphere_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Imperva Inc")
        && out.nv.contains(cef::NV_PRODUCT, b"SecureSphere")
}

fn securesphere<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !securesphere_check(input, out) {
        return false;
    }
    out.key(&KEYS[1]);
    let st = match out.nv.get(cef::NV_CLASS) {
        Some(b"Firewall") => "imperva:waf:firewall:cef",
        Some(b"Protocol" | b"Signature" | b"Worm") => "imperva:waf:security:cef",
        _ => return true,
    };
    out.sourcetype = Some(crate::classify::Value::Static(st));
    true
}
