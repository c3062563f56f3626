//! CyberArk PTA and Vault over CEF (SC4S `addons/cyberark/app-cef-cyber_ark_*.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef::{self, nv_contains};

pub static VENDOR: Vendor = Vendor {
    name: "cyberark",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-cyber_ark_pta",
            topic: Topic::Sub("cef"),
            order: "cyberark/app-cef-cyber_ark_pta.conf",
            when: When::Always,
            parse: pta,
        },
        App {
            name: "app-cef-cyber_ark_vault",
            topic: Topic::Sub("cef"),
            order: "cyberark/app-cef-cyber_ark_vault.conf",
            when: When::Always,
            parse: vault,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("cyberark:pta:cef", "main"),
    Key::update("cyberark:epv:cef", "netauth").template(crate::classify::Template::Standard),
];

fn pta<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"CyberArk") && nv_contains(out, cef::NV_PRODUCT, b"PTA"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn vault<'m>(_: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !(nv_contains(out, cef::NV_VENDOR, b"Cyber-Ark")
        && nv_contains(out, cef::NV_PRODUCT, b"Vault"))
    {
        return false;
    }
    out.key(&KEYS[1]);
    true
}
