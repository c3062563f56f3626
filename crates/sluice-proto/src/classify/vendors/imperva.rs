//! Imperva SecureSphere and Incapsula over CEF (SC4S `addons/imperva/app-cef-imperva_*.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef::{self, nv_contains};

pub static VENDOR: Vendor = Vendor {
    name: "imperva",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-imperva_incapsula",
            topic: Topic::Sub("cef"),
            order: "imperva/app-cef-imperva_incapsula.conf",
            when: When::Always,
            parse: incapsula,
        },
        App {
            name: "app-cef-imperva_securesphere",
            topic: Topic::Sub("cef"),
            order: "imperva/app-cef-imperva_securesphere.conf",
            when: When::Always,
            parse: securesphere,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("cef", "netwaf").source("Imperva:Incapsula"),
    Key::update("imperva:waf", "netwaf"),
];

fn incapsula<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"Incapsula")
        && nv_contains(out, cef::NV_PRODUCT, b"SIEMintegration"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn securesphere<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"Imperva Inc")
        && nv_contains(out, cef::NV_PRODUCT, b"SecureSphere"))
    {
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
