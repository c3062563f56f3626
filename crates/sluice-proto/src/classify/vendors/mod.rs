//! The vendor parsers: one file per vendor family. See `README.md` in this directory for
//! how to add one.

use super::registry::Vendor;

mod alcatel;
mod almost_epoch;
mod almost_headers;
mod almost_levelword;
mod almost_wrongver;
mod arista;
mod aruba;
mod barracuda;
mod broadcom;
pub mod cef;
pub(crate) mod checkpoint;
mod cisco;
mod citrix;
mod cohesity;
mod cyberark;
mod darktrace;
mod dell;
mod f5;
mod fortinet;
mod github;
mod haproxy;
mod hpe;
mod imperva;
mod infoblox;
mod isc;
mod json;
mod juniper;
mod kaspersky;
pub mod leef;
mod local_example;
mod mcafee;
mod microfocus;
mod microsoft;
mod netmotion;
mod netscout;
mod ossec;
mod pan;
mod pan_cortex;
mod prisma;
mod proofpoint;
mod pulse;
mod qumulo;
mod ricoh;
mod ruckus;
mod secureauth;
mod sophos;
mod stealthbits;
mod suricata;
mod tenable;
mod thales;
mod trellix;
mod trendmicro;
mod ubiquiti;
mod util;
mod varonis;
mod veeam;
mod vmware;
mod vmware_carbonblack;
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
    &broadcom::VENDOR,
    &checkpoint::VENDOR,
    &cisco::VENDOR,
    &cisco::ise::ACS,
    &cisco::pgm::DNA,
    &cisco::netsource::ESA,
    &cisco::pgm::FIREPOWER,
    &cisco::ise::ISE,
    &cisco::netsource::MERAKI,
    &cisco::pgm::MM,
    &cisco::netsource::MS,
    &cisco::pgm::TVCS,
    &cisco::pgm::UCS_HX,
    &cisco::netsource::WSA,
    &citrix::VENDOR,
    &cohesity::VENDOR,
    &darktrace::VENDOR,
    &dell::VENDOR,
    &f5::VENDOR,
    &github::VENDOR,
    &fortinet::VENDOR,
    &haproxy::VENDOR,
    &hpe::VENDOR,
    &infoblox::VENDOR,
    &isc::VENDOR,
    &juniper::VENDOR,
    &kaspersky::VENDOR,
    &leef::VENDOR,
    &mcafee::VENDOR,
    &netmotion::VENDOR,
    &ossec::VENDOR,
    &proofpoint::VENDOR,
    &pulse::VENDOR,
    &qumulo::VENDOR,
    &ricoh::VENDOR,
    &ruckus::VENDOR,
    &secureauth::VENDOR,
    &pan::VENDOR,
    &pan_cortex::VENDOR,
    &prisma::VENDOR,
    &sophos::VENDOR,
    &stealthbits::VENDOR,
    &suricata::VENDOR,
    &tenable::VENDOR,
    &thales::VENDOR,
    &ubiquiti::VENDOR,
    &veeam::VENDOR,
    &vmware::VENDOR,
    &vmware_carbonblack::VENDOR,
    &zscaler::VENDOR,
    &cef::VENDOR,
    &cyberark::VENDOR,
    &imperva::VENDOR,
    &json::VENDOR,
    &microfocus::VENDOR,
    &microsoft::VENDOR,
    &netscout::VENDOR,
    &trellix::VENDOR,
    &trendmicro::VENDOR,
    &varonis::VENDOR,
];

/// The built-in applications, always active.
pub(crate) fn builtin() -> Vec<&'static Vendor> {
    vec![
        &super::fallback::BUILTIN,
        &almost_epoch::BUILTIN,
        &almost_headers::BUILTIN,
        &almost_levelword::BUILTIN,
        &almost_wrongver::BUILTIN,
        &local_example::BUILTIN,
    ]
}
