//! The vendor parsers: one file per vendor family. See `README.md` in this directory for
//! how to add one.

use super::registry::Vendor;

mod a10networks;
mod alcatel;
mod almost_epoch;
mod almost_headers;
mod almost_levelword;
mod almost_wrongver;
mod alsid;
mod arista;
mod aruba;
mod avaya;
mod avi;
mod aviatrix;
mod barracuda;
pub mod beyondtrust;
mod broadcom;
mod brocade;
mod buffalo;
pub mod cef;
pub(crate) mod checkpoint;
mod cisco;
mod citrix;
mod clearswift;
mod cohesity;
mod cyberark;
mod cylance;
mod darktrace;
mod dell;
mod epic;
mod f5;
mod fireeye;
mod forcepoint;
mod fortinet;
mod github;
mod guardicore;
mod haproxy;
mod hpe;
mod ibm;
mod imperva;
mod infoblox;
mod isc;
mod json;
mod juniper;
mod kaspersky;
pub mod leef;
mod liveaction;
mod local_example;
mod mcafee;
mod microfocus;
mod microsoft;
mod mikrotik;
mod netapp;
mod netmotion;
mod netscout;
mod netwrix;
mod novell;
mod nutanix;
mod opswat;
mod ossec;
mod pan;
mod pan_cortex;
mod pfsense;
mod polycom;
mod powertech;
mod prisma;
mod proofpoint;
mod pulse;
mod purestorage;
mod qumulo;
mod radware;
mod raritan;
mod ricoh;
mod riverbed;
mod ruckus;
mod schneider;
mod secureauth;
mod semperis;
mod solace;
mod sophos;
mod spectracom;
mod stealthbits;
mod suricata;
mod syslogng;
mod tanium;
mod tenable;
mod thales;
mod thycotic;
mod tim;
mod tintri;
mod trellix;
mod trendmicro;
mod ubiquiti;
mod util;
mod varonis;
mod vectra;
mod veeam;
mod vmware;
mod vmware_carbonblack;
mod wallix;
mod xypro;
mod zscaler;

#[cfg(test)]
mod robust_a;
#[cfg(test)]
mod robust_cat2;

/// Every vendor family sluice ships, one line each. The order does not matter (SC4S's file
/// order decides, see [`super::registry::App::order`]); keep it alphabetical so that
/// parallel additions merge cleanly.
pub static VENDORS: &[&Vendor] = &[
    &a10networks::VENDOR,
    &alcatel::VENDOR,
    &alsid::VENDOR,
    &arista::VENDOR,
    &aruba::VENDOR,
    &avaya::VENDOR,
    &avi::VENDOR,
    &aviatrix::VENDOR,
    &barracuda::VENDOR,
    &beyondtrust::VENDOR,
    &broadcom::VENDOR,
    &brocade::VENDOR,
    &buffalo::VENDOR,
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
    &clearswift::VENDOR,
    &cohesity::VENDOR,
    &cylance::VENDOR,
    &darktrace::VENDOR,
    &dell::VENDOR,
    &epic::VENDOR,
    &f5::VENDOR,
    &fireeye::VENDOR,
    &forcepoint::VENDOR,
    &github::VENDOR,
    &fortinet::VENDOR,
    &guardicore::VENDOR,
    &haproxy::VENDOR,
    &hpe::VENDOR,
    &ibm::VENDOR,
    &infoblox::VENDOR,
    &isc::VENDOR,
    &juniper::VENDOR,
    &kaspersky::VENDOR,
    &leef::VENDOR,
    &liveaction::VENDOR,
    &mcafee::VENDOR,
    &mikrotik::VENDOR,
    &netapp::VENDOR,
    &netmotion::VENDOR,
    &netwrix::VENDOR,
    &nutanix::VENDOR,
    &ossec::VENDOR,
    &pfsense::VENDOR,
    &polycom::VENDOR,
    &proofpoint::VENDOR,
    &pulse::VENDOR,
    &purestorage::VENDOR,
    &qumulo::VENDOR,
    &radware::VENDOR,
    &raritan::VENDOR,
    &ricoh::VENDOR,
    &riverbed::VENDOR,
    &ruckus::VENDOR,
    &schneider::VENDOR,
    &secureauth::VENDOR,
    &pan::VENDOR,
    &pan_cortex::VENDOR,
    &prisma::VENDOR,
    &semperis::VENDOR,
    &solace::VENDOR,
    &sophos::VENDOR,
    &spectracom::VENDOR,
    &stealthbits::VENDOR,
    &suricata::VENDOR,
    &syslogng::VENDOR,
    &tanium::VENDOR,
    &tenable::VENDOR,
    &thales::VENDOR,
    &tintri::VENDOR,
    &ubiquiti::VENDOR,
    &veeam::VENDOR,
    &vmware::VENDOR,
    &vmware_carbonblack::VENDOR,
    &wallix::VENDOR,
    &zscaler::VENDOR,
    &cef::VENDOR,
    &cyberark::VENDOR,
    &imperva::VENDOR,
    &json::VENDOR,
    &microfocus::VENDOR,
    &microsoft::VENDOR,
    &netscout::VENDOR,
    &novell::VENDOR,
    &opswat::VENDOR,
    &powertech::VENDOR,
    &thycotic::VENDOR,
    &tim::VENDOR,
    &trellix::VENDOR,
    &trendmicro::VENDOR,
    &varonis::VENDOR,
    &vectra::VENDOR,
    &xypro::VENDOR,
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
