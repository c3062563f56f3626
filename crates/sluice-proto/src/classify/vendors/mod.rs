//! The vendor parsers: one file per vendor family. See `README.md` in this directory for
//! how to add one.

use super::registry::Vendor;

mod broadcom;
mod cohesity;
mod darktrace;
mod dell;
mod github;
mod hpe;
mod isc;
mod mcafee;
mod netmotion;
mod ossec;
mod proofpoint;
mod pulse;
mod qumulo;
mod ricoh;
mod ruckus;
mod secureauth;
mod stealthbits;
mod suricata;
mod tenable;
mod thales;
mod util;
mod veeam;
mod vmware;

/// Every vendor family sluice ships, one line each. The order does not matter (SC4S's file
/// order decides, see [`super::registry::App::order`]); keep it alphabetical so that
/// parallel additions merge cleanly.
pub static VENDORS: &[&Vendor] = &[
    &broadcom::VENDOR,
    &cohesity::VENDOR,
    &darktrace::VENDOR,
    &dell::VENDOR,
    &github::VENDOR,
    &hpe::VENDOR,
    &isc::VENDOR,
    &mcafee::VENDOR,
    &netmotion::VENDOR,
    &ossec::VENDOR,
    &proofpoint::VENDOR,
    &pulse::VENDOR,
    &qumulo::VENDOR,
    &ricoh::VENDOR,
    &ruckus::VENDOR,
    &secureauth::VENDOR,
    &stealthbits::VENDOR,
    &suricata::VENDOR,
    &tenable::VENDOR,
    &thales::VENDOR,
    &veeam::VENDOR,
    &vmware::VENDOR,
];

/// The built-in applications, always active.
pub(crate) fn builtin() -> Vec<&'static Vendor> {
    vec![&super::fallback::BUILTIN]
}
