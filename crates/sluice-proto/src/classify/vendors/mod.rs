//! The vendor parsers: one file per vendor family. See `README.md` in this directory for
//! how to add one.

use super::registry::Vendor;

mod alcatel;
mod almost_levelword;
mod arista;
mod aruba;
mod barracuda;
mod checkpoint;
mod cisco;
mod citrix;
mod f5;
mod fortinet;
mod haproxy;
mod infoblox;
mod isc;
mod juniper;
mod pan;
mod sophos;
mod ubiquiti;
mod zscaler;

#[cfg(test)]
mod robust_a;

/// Every vendor family sluice ships, one line each. The order does not matter (SC4S's file
/// order decides, see [`super::registry::App::order`]); keep it alphabetical so that
/// parallel additions merge cleanly.
pub static VENDORS: &[&Vendor] = &[
    &alcatel::VENDOR,
    &arista::VENDOR,
    &aruba::VENDOR,
    &barracuda::VENDOR,
    &checkpoint::VENDOR,
    &cisco::VENDOR,
    &citrix::VENDOR,
    &f5::VENDOR,
    &fortinet::VENDOR,
    &haproxy::VENDOR,
    &infoblox::VENDOR,
    &isc::VENDOR,
    &juniper::VENDOR,
    &pan::VENDOR,
    &sophos::VENDOR,
    &ubiquiti::VENDOR,
    &zscaler::VENDOR,
];

/// The built-in applications, always active.
pub(crate) fn builtin() -> Vec<&'static Vendor> {
    vec![&super::fallback::BUILTIN, &almost_levelword::BUILTIN]
}
