//! CyberArk PTA and Vault over CEF (SC4S `addons/cyberark/app-cef-cyber_ark_*.conf`).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::vendors::cef;

pub static VENDOR: Vendor = Vendor {
    name: "cyberark",
    keys: KEYS,
    apps: &[
        App {
            name: "app-cef-cyber_ark_pta",
            topic: Topic::Sub("cef"),
            order: "cyberark/app-cef-cyber_ark_pta.conf",
            when: When::Check(pta_check),
            parse: pta,
        },
        App {
            name: "app-cef-cyber_ark_vault",
            topic: Topic::Sub("cef"),
            order: "cyberark/app-cef-cyber_ark_vault.conf",
            when: When::Check(vault_check),
            parse: vault,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::update("cyberark:pta:cef", "main"),
    Key::update("cyberark:epv:cef", "netauth").template(crate::classify::Template::Standard),
];

/// The filter of [`pta`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn pta_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"CyberArk") && out.nv.contains(cef::NV_PRODUCT, b"PTA")
}

fn pta<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !pta_check(input, out) {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

/// The filter of [`vault`] (the dispatcher's check: a CEF message of another vendor costs a
/// call, not a copy of `Out`).
fn vault_check<'m>(_: &Input<'m, '_>, out: &Out<'m>) -> bool {
    out.nv.contains(cef::NV_VENDOR, b"Cyber-Ark") && out.nv.contains(cef::NV_PRODUCT, b"Vault")
}

fn vault<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !vault_check(input, out) {
        return false;
    }
    out.key(&KEYS[1]);
    true
}
