//! The vendor parsers: one file per vendor family. See `README.md` in this directory for
//! how to add one.

use super::registry::Vendor;

mod isc;

/// Every vendor family sluice ships, one line each. The order does not matter (SC4S's file
/// order decides, see [`super::registry::App::order`]); keep it alphabetical so that
/// parallel additions merge cleanly.
pub static VENDORS: &[&Vendor] = &[&isc::VENDOR];

/// The built-in applications, always active.
pub(crate) fn builtin() -> Vec<&'static Vendor> {
    vec![&super::fallback::BUILTIN]
}
