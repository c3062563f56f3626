//! The SC4S settings vendor parsers read: a leaf of types, below the registry that hands
//! them to parsers and the builder that holds them.

use thiserror::Error;

/// SC4S settings that change what a vendor parser does (`SC4S_OPTION_*`,
/// `SC4S_DISABLE_DROP_INVALID_*`, the per-vendor `SC4S_SOURCE_*` and `SC4S_LISTEN_*` flags).
/// Parsers read them through [`super::registry::Input`]; the daemon fills them from its
/// environment with [`VendorOptions::from_env`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorOptions {
    /// `SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX` (default `fgt`): FortiOS events get
    /// `<prefix>_<type>` (`fgt_traffic`).
    pub fortinet_sourcetype_prefix: String,
    /// `SC4S_DISABLE_DROP_INVALID_CEF=yes`: a `CEF:0` message with fewer than eight
    /// `|`-separated header fields is still CEF (sourcetype `cef`, the fields it has) instead
    /// of going on to the next parser. SC4S drops such a message by default; sluice never
    /// drops, so by default it goes on to the other parsers and the fallback.
    pub lenient_cef: bool,
    /// `SC4S_ENABLE_CISCO_IOS_RAW_MSG=yes`: a Cisco IOS line whose header SC4S repairs
    /// keeps its whole text after the PRI as MESSAGE (header parts included) instead of
    /// starting at the `%FAC-S-MNEMONIC` tag.
    pub cisco_ios_raw_msg: bool,
    /// `SC4S_SOURCE_CISCO_DNA_FIXHOST=yes`: DNA Center events take the sender's address as
    /// host.
    pub cisco_dna_fixhost: bool,
    /// `SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG=yes`: vSphere messages split over several lines
    /// are joined into one event (see [`super::group`]).
    pub vsphere_groupmsg: bool,
    /// `SC4S_SOURCE_FF_SYMANTEC_BRIGHTMAIL_GROUPMSG` (default yes): Brightmail `bmserver`
    /// parts are joined by message id (see [`super::group`]).
    pub brightmail_groupmsg: bool,
    /// `SC4S_NETAPP_ONTAP_NEW_FORMAT=yes`: NetApp ONTAP is read by its network-source
    /// application (sourcetypes `netapp:ontap:audit` and `netapp:ontap:ems`) instead of the
    /// PROGRAM-based one (`ontap:ems`).
    pub netapp_ontap_new_format: bool,
    /// `SC4S_SOURCE_RICOH_SYSLOG_FIXHOST=yes`: Ricoh printers send their host name as
    /// PROGRAM; HOST is taken from it.
    pub ricoh_fixhost: bool,
    /// `SC4S_SURICATA_SIMPLE_SOURCETYPE=yes`: every Suricata event gets sourcetype
    /// `suricata` instead of `suricata:<event_type>`.
    pub suricata_simple_sourcetype: bool,
    /// `SC4S_IGNORE_MMDD_LEGACY_CITRIX_NETSCALER=yes`: NetScaler's legacy stamps are read
    /// day first (`dd/mm/yyyy`) only, never month first.
    pub citrix_ignore_mmdd: bool,
    /// `SC4S_OPTION_DELL_POWERSTORE_INDEX` (default `infraops`): the index of Dell EMC
    /// PowerStore events.
    pub dell_powerstore_index: String,
    /// Check Point Log Exporter settings (`SC4S_LISTEN_CHECKPOINT_SPLUNK_*`).
    pub checkpoint: CheckpointOptions,
    /// `SC4S_USE_VPS_CACHE=yes`: a sender's host name remembers the vendor and product its
    /// last event was classified as; later messages from that host on a listener without a
    /// vendor are read as that vendor's network source (see [`super::VpsCache`]).
    pub use_vps_cache: bool,
    /// `SC4S_DEST_BEYONDTRUST_SRA_SPLUNK_HEC_FMT` empty or `JSON` (the default): BeyondTrust
    /// SRA events are sent as JSON of their values (`t_json_values`); any other value
    /// (SC4S documents `NONE`) sends the vendor's text (`t_msg_only`).
    pub beyondtrust_sra_json: bool,
    /// `SC4S_DEST_DELL_SONICWALL-FIREWALL_SPLUNK_HEC_FMT` empty or `JSON` (the default):
    /// SonicWall firewall events are sent as JSON of their key=value pairs
    /// (`t_json_values`); any other value leaves SC4S's default event text (`t_hdr_msg`).
    pub sonicwall_json: bool,
    /// The other `SC4S_DISABLE_DROP_INVALID_<X>=yes` settings. SC4S drops what its parser
    /// for X finds invalid; sluice never drops: by default the message goes on to the next
    /// parser and the fallback (as when SC4S's application declines it), with the setting X
    /// keeps it leniently. Where SC4S's own filter already guarantees what the strict parser
    /// checks (Cisco's `: %` split, which its tag pattern needs anyway; HPE's `;`; Carbon
    /// Black's `: `), or sluice's parser reads everything the filter lets through (RFC 3164
    /// for a PRI-less BSD line), both ways give the same result.
    pub lenient: LenientDrops,
}

/// `SC4S_LISTEN_CHECKPOINT_SPLUNK_*`: what SC4S does with Check Point Log Exporter events
/// (both its Splunk and its syslog format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointOptions {
    /// `SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL=yes`: the events of one `loguid` (a
    /// connection logged again as it progresses) become one: the last one, sent once no
    /// event of that `loguid` came for [`CheckpointOptions::noise_seconds`].
    pub noise_control: bool,
    /// `SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL_SECONDS` (default 2).
    pub noise_seconds: u32,
    /// `SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_INCOMPLETE_EVENTS=yes`: SC4S discards accepted
    /// Firewall, Application Control and URL Filtering events that carry a `loguid` but no
    /// `bytes` (the partial records of a connection still open). sluice reads the setting
    /// but delivers them: it discards nothing (the daemon says so at start).
    pub noise_incomplete_events: bool,
    /// `SC4S_LISTEN_CHECKPOINT_SPLUNK_OLD_HOST_RULES=yes`: HOST from the CN of
    /// `originsicname`, then `origin_sic_name`, then `hostname` (the default order starts
    /// with `hostname`).
    pub old_host_rules: bool,
}

impl Default for CheckpointOptions {
    fn default() -> Self {
        CheckpointOptions {
            noise_control: false,
            noise_seconds: 2,
            noise_incomplete_events: false,
            old_host_rules: false,
        }
    }
}

/// `SC4S_DISABLE_DROP_INVALID_<X>` (see [`VendorOptions::lenient`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LenientDrops {
    pub cisco: bool,
    pub hpe: bool,
    /// VMware's `<PRI>yyyy-mm-ddThh...` header with a stamp RFC 5424 rejects: kept (receive
    /// time) instead of left to the other parsers.
    pub vmware_vsphere: bool,
    pub vmware_cb_protect: bool,
    pub raw_bsd: bool,
    /// A PRI-less line starting `<` that is not well-formed XML: kept as raw XML. sluice has
    /// no `app-raw-xml` (such a line gets the fallback either way, as SC4S's lastchance
    /// gives a raw XML line no sourcetype of its own).
    pub xml: bool,
}

impl Default for VendorOptions {
    fn default() -> Self {
        VendorOptions {
            fortinet_sourcetype_prefix: "fgt".into(),
            lenient_cef: false,
            cisco_ios_raw_msg: false,
            cisco_dna_fixhost: false,
            vsphere_groupmsg: false,
            brightmail_groupmsg: true,
            netapp_ontap_new_format: false,
            ricoh_fixhost: false,
            suricata_simple_sourcetype: false,
            citrix_ignore_mmdd: false,
            dell_powerstore_index: "infraops".into(),
            checkpoint: CheckpointOptions::default(),
            use_vps_cache: false,
            beyondtrust_sra_json: true,
            sonicwall_json: true,
            lenient: LenientDrops::default(),
        }
    }
}

impl VendorOptions {
    /// The settings SC4S reads for these options, in the order [`VendorOptions::from_env`]
    /// consults them.
    pub const VARIABLES: [&'static str; 25] = [
        "SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX",
        "SC4S_DISABLE_DROP_INVALID_CEF",
        "SC4S_ENABLE_CISCO_IOS_RAW_MSG",
        "SC4S_SOURCE_CISCO_DNA_FIXHOST",
        "SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG",
        "SC4S_DISABLE_DROP_INVALID_CISCO",
        "SC4S_DISABLE_DROP_INVALID_HPE",
        "SC4S_DISABLE_DROP_INVALID_VMWARE_VSPHERE",
        "SC4S_DISABLE_DROP_INVALID_VMWARE_CB_PROTECT",
        "SC4S_DISABLE_DROP_INVALID_RAW_BSD",
        "SC4S_DISABLE_DROP_INVALID_XML",
        "SC4S_SOURCE_FF_SYMANTEC_BRIGHTMAIL_GROUPMSG",
        "SC4S_NETAPP_ONTAP_NEW_FORMAT",
        "SC4S_SOURCE_RICOH_SYSLOG_FIXHOST",
        "SC4S_SURICATA_SIMPLE_SOURCETYPE",
        "SC4S_IGNORE_MMDD_LEGACY_CITRIX_NETSCALER",
        "SC4S_OPTION_DELL_POWERSTORE_INDEX",
        "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL",
        "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL_SECONDS",
        "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_INCOMPLETE_EVENTS",
        "SC4S_LISTEN_CHECKPOINT_SPLUNK_OLD_HOST_RULES",
        // SC4S's documentation names it without `SPLUNK_` (its k8s values files).
        "SC4S_LISTEN_CHECKPOINT_OLD_HOST_RULES",
        "SC4S_USE_VPS_CACHE",
        "SC4S_DEST_BEYONDTRUST_SRA_SPLUNK_HEC_FMT",
        "SC4S_DEST_DELL_SONICWALL-FIREWALL_SPLUNK_HEC_FMT",
    ];

    /// Reads the options through `get` (the daemon's environment seam; `None`: unset). An
    /// empty prefix or index, a flag other than yes/no/true/false/1/0, or a noise-control
    /// time that is not 1 to 3600 seconds is an error naming the variable.
    pub fn from_env(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<VendorOptions, VendorOptionError> {
        let mut o = VendorOptions::default();
        let word = |variable: &'static str| -> Result<Option<String>, VendorOptionError> {
            let Some(p) = get(variable) else {
                return Ok(None);
            };
            let p = p.trim();
            if p.is_empty() || p.len() > 64 || !p.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(VendorOptionError {
                    variable,
                    value: p.to_owned(),
                    expected: "1 to 64 printable characters without spaces",
                });
            }
            Ok(Some(p.to_owned()))
        };
        if let Some(p) = word("SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX")? {
            if p.len() > 16 {
                return Err(VendorOptionError {
                    variable: "SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX",
                    value: p,
                    expected: "1 to 16 printable characters without spaces",
                });
            }
            o.fortinet_sourcetype_prefix = p;
        }
        if let Some(i) = word("SC4S_OPTION_DELL_POWERSTORE_INDEX")? {
            o.dell_powerstore_index = i;
        }
        let flag = |variable: &'static str, field: &mut bool| -> Result<(), VendorOptionError> {
            let Some(v) = get(variable) else {
                return Ok(());
            };
            *field = match v.trim().to_ascii_lowercase().as_str() {
                "yes" | "true" | "1" | "on" => true,
                "no" | "false" | "0" | "off" | "" => false,
                _ => {
                    return Err(VendorOptionError {
                        variable,
                        value: v,
                        expected: "yes or no",
                    });
                }
            };
            Ok(())
        };
        flag("SC4S_DISABLE_DROP_INVALID_CEF", &mut o.lenient_cef)?;
        flag("SC4S_ENABLE_CISCO_IOS_RAW_MSG", &mut o.cisco_ios_raw_msg)?;
        flag("SC4S_SOURCE_CISCO_DNA_FIXHOST", &mut o.cisco_dna_fixhost)?;
        flag(
            "SC4S_SOURCE_VMWARE_VSPHERE_GROUPMSG",
            &mut o.vsphere_groupmsg,
        )?;
        flag(
            "SC4S_SOURCE_FF_SYMANTEC_BRIGHTMAIL_GROUPMSG",
            &mut o.brightmail_groupmsg,
        )?;
        flag(
            "SC4S_NETAPP_ONTAP_NEW_FORMAT",
            &mut o.netapp_ontap_new_format,
        )?;
        flag("SC4S_SOURCE_RICOH_SYSLOG_FIXHOST", &mut o.ricoh_fixhost)?;
        flag(
            "SC4S_SURICATA_SIMPLE_SOURCETYPE",
            &mut o.suricata_simple_sourcetype,
        )?;
        flag(
            "SC4S_IGNORE_MMDD_LEGACY_CITRIX_NETSCALER",
            &mut o.citrix_ignore_mmdd,
        )?;
        let cp = &mut o.checkpoint;
        flag(
            "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL",
            &mut cp.noise_control,
        )?;
        flag(
            "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_INCOMPLETE_EVENTS",
            &mut cp.noise_incomplete_events,
        )?;
        flag(
            "SC4S_LISTEN_CHECKPOINT_OLD_HOST_RULES",
            &mut cp.old_host_rules,
        )?;
        flag(
            "SC4S_LISTEN_CHECKPOINT_SPLUNK_OLD_HOST_RULES",
            &mut cp.old_host_rules,
        )?;
        let seconds = "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL_SECONDS";
        if let Some(v) = get(seconds) {
            cp.noise_seconds = v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|s| (1..=3600).contains(s))
                .ok_or(VendorOptionError {
                    variable: seconds,
                    value: v,
                    expected: "a number of seconds from 1 to 3600",
                })?;
        }
        flag("SC4S_USE_VPS_CACHE", &mut o.use_vps_cache)?;
        // SC4S compares the setting with "" and "JSON" exactly; anything else is the
        // vendor's own format.
        if let Some(v) = get("SC4S_DEST_BEYONDTRUST_SRA_SPLUNK_HEC_FMT") {
            o.beyondtrust_sra_json = v.is_empty() || v == "JSON";
        }
        if let Some(v) = get("SC4S_DEST_DELL_SONICWALL-FIREWALL_SPLUNK_HEC_FMT") {
            o.sonicwall_json = v.is_empty() || v == "JSON";
        }
        let l = &mut o.lenient;
        flag("SC4S_DISABLE_DROP_INVALID_CISCO", &mut l.cisco)?;
        flag("SC4S_DISABLE_DROP_INVALID_HPE", &mut l.hpe)?;
        flag(
            "SC4S_DISABLE_DROP_INVALID_VMWARE_VSPHERE",
            &mut l.vmware_vsphere,
        )?;
        flag(
            "SC4S_DISABLE_DROP_INVALID_VMWARE_CB_PROTECT",
            &mut l.vmware_cb_protect,
        )?;
        flag("SC4S_DISABLE_DROP_INVALID_RAW_BSD", &mut l.raw_bsd)?;
        flag("SC4S_DISABLE_DROP_INVALID_XML", &mut l.xml)?;
        Ok(o)
    }
}

/// A vendor option with a value the parsers cannot use.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{variable}={value:?}: expected {expected}")]
pub struct VendorOptionError {
    pub variable: &'static str,
    pub value: String,
    pub expected: &'static str,
}
