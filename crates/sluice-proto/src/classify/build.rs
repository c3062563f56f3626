//! Building a [`Classifier`]: the active vendors, the context files, the settings. The
//! result is immutable; a reload (SIGHUP) builds a new one with [`build`] and swaps it in.

use std::path::Path;

use thiserror::Error;

use crate::time::Zone;

use super::context::{Context, ContextFiles};
use super::csv::{ContextError, ContextWarning};
use super::dispatch::Engine;
use super::metadata::{Metadata, Overrides};
use super::registry::{Key, Vendor};
use super::vendors;

/// Which vendor parsers are active (`[parse] vendors` / `SLUICE_VENDORS`).
///
/// A list of selectors, applied in order: `all`, `none`, a family name (`cisco_asa`), or a
/// prefix of family names ending at a `_` boundary (`cisco` picks every `cisco_*`); a
/// leading `-` removes instead of adding. An empty list or `["all"]` is everything. A
/// disabled vendor's applications are in no dispatch table: it costs nothing, and its
/// messages go on to the next application or the fallback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorSelection(pub Vec<String>);

impl Default for VendorSelection {
    fn default() -> Self {
        VendorSelection(vec!["all".into()])
    }
}

impl VendorSelection {
    /// Parses a comma/space-separated list.
    pub fn parse(value: &str) -> VendorSelection {
        VendorSelection(
            value
                .split([',', ' '])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_ascii_lowercase)
                .collect(),
        )
    }

    /// The selected families, in registry order. An unknown selector is an error naming the
    /// known families.
    pub fn resolve(&self, known: &[&'static Vendor]) -> Result<Vec<&'static Vendor>, BuildError> {
        let mut on = vec![self.0.is_empty(); known.len()];
        for sel in &self.0 {
            let (add, name) = match sel.strip_prefix('-') {
                Some(rest) => (false, rest),
                None => (true, sel.as_str()),
            };
            let mut matched = name == "all";
            for (i, v) in known.iter().enumerate() {
                let hit = name == "all"
                    || v.name == name
                    || v.name
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with('_'));
                if hit {
                    on[i] = add;
                    matched = true;
                }
            }
            if name == "none" {
                on.iter_mut().for_each(|o| *o = false);
                matched = true;
            }
            if !matched {
                return Err(BuildError::UnknownVendor {
                    name: sel.clone(),
                    known: known.iter().map(|v| v.name).collect::<Vec<_>>().join(", "),
                });
            }
        }
        Ok(known
            .iter()
            .zip(on)
            .filter(|(_, on)| *on)
            .map(|(v, _)| *v)
            .collect())
    }
}

/// Settings of the classifier that are not in the context files.
#[derive(Clone, Debug)]
pub struct Settings {
    pub vendors: VendorSelection,
    /// Listener ids (`<ID>` of `SC4S_LISTEN_<ID>_<PROTO>_PORT`). An id of two or three
    /// `_`-separated parts names a vendor and product (`CISCO_ASA` → `cisco`, `asa`), as
    /// SC4S's `source_syslog/plugin.py` derives them; `DEFAULT` and other ids behave like
    /// the default listener.
    pub listeners: Vec<String>,
    /// `SC4S_SET_SOURCE_AS_SC4S`.
    pub set_source_as_sc4s: bool,
    /// `SC4S_DEFAULT_TIMEZONE`, for vendor stamps without a zone.
    pub zone: Zone,
    /// The SC4S settings vendor parsers read.
    pub options: VendorOptions,
    /// The operator's app-parsers (`local/config/app_parsers/`), loaded.
    pub app_parsers: Option<std::sync::Arc<super::local::Program>>,
    /// The receiving host's name (`$LOGHOST` in the operator's templates).
    pub loghost: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            vendors: VendorSelection::default(),
            listeners: Vec::new(),
            set_source_as_sc4s: false,
            zone: Zone::utc(),
            options: VendorOptions::default(),
            app_parsers: None,
            loghost: String::new(),
        }
    }
}

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

/// Why a classifier cannot be built.
#[derive(Debug, Error)]
pub enum BuildError {
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error("unknown vendor {name:?} in the vendor selection; known: all, none, {known}")]
    UnknownVendor { name: String, known: String },
}

#[derive(Clone, Debug)]
pub(crate) struct Listener {
    pub id: Box<str>,
    pub vendor: Box<str>,
    pub product: Box<str>,
    pub vendor_product: Box<str>,
}

/// Everything [`super::classify`] needs, built once.
#[derive(Debug)]
pub struct Classifier {
    pub(crate) engine: Engine,
    /// `splunk_metadata.csv` rows of each vendor's static keys, `[vendor][key]`.
    resolved: Vec<Vec<Option<Overrides>>>,
    pub(crate) metadata: Metadata,
    pub(crate) context: Context,
    pub(crate) listeners: Vec<Listener>,
    pub(crate) set_source_as_sc4s: bool,
    pub(crate) zone: Zone,
    pub(crate) options: VendorOptions,
    /// `SC4S_USE_NAME_CACHE`: the last good hostname of each sender (kept by the caller).
    pub(crate) name_cache: Option<std::sync::Arc<dyn super::NameCache>>,
    /// The operator's app-parsers (`None` when there are none: nothing of them runs).
    pub(crate) app_parsers: Option<std::sync::Arc<super::local::Program>>,
    /// The operator's program even without applications: its named filters serve the
    /// routing (`SC4S_DEST_<VP>_ALT_FILTER`), not the classification.
    named_filters: Option<std::sync::Arc<super::local::Program>>,
    pub(crate) loghost: String,
    /// `SC4S_USE_VPS_CACHE`: the vendor and product of each host's last event.
    pub(crate) vps_cache: Option<std::sync::Arc<dyn super::VpsCache>>,
    warnings: Vec<ContextWarning>,
    ignored_listeners: Vec<String>,
}

impl Default for Classifier {
    /// Every vendor, no context files, SC4S's defaults.
    fn default() -> Self {
        Classifier::new(ContextFiles::default(), &Settings::default())
            .expect("the default classifier builds")
    }
}

/// Builds a classifier from SC4S's context files in `context_dir` (`None`: no files, the
/// built-in defaults) and `settings`. A missing file is the same as an empty one; a file
/// that cannot be read or has a malformed line is an error naming the file and line.
pub fn build(context_dir: Option<&Path>, settings: &Settings) -> Result<Classifier, BuildError> {
    let files = match context_dir {
        Some(dir) => ContextFiles::read_dir(dir)?,
        None => ContextFiles::default(),
    };
    Classifier::new(files, settings)
}

impl Classifier {
    /// Looks HOST up in `cache` when a message has none or an IP address
    /// (`SC4S_USE_NAME_CACHE`), after `host.csv`.
    pub fn set_name_cache(&mut self, cache: std::sync::Arc<dyn super::NameCache>) {
        self.name_cache = Some(cache);
    }

    /// Reads a host's network source from `cache` on listeners without a vendor
    /// (`SC4S_USE_VPS_CACHE`), before `vendor_product_by_source`.
    pub fn set_vps_cache(&mut self, cache: std::sync::Arc<dyn super::VpsCache>) {
        self.vps_cache = Some(cache);
    }

    /// Which multi-part groupings are on (see [`super::group`]).
    pub fn group_options(&self) -> super::group::GroupOptions {
        super::group::GroupOptions {
            vsphere: self.options.vsphere_groupmsg,
            brightmail: self.options.brightmail_groupmsg,
            checkpoint_noise_secs: self
                .options
                .checkpoint
                .noise_control
                .then_some(self.options.checkpoint.noise_seconds),
        }
    }

    /// Builds from file contents already read (see [`ContextFiles`]).
    pub fn new(files: ContextFiles, settings: &Settings) -> Result<Classifier, BuildError> {
        let mut metadata = match &files.splunk_metadata {
            Some((name, text)) => Metadata::parse(name, text)?,
            None => Metadata::default(),
        };
        if settings.options.dell_powerstore_index != "infraops" {
            metadata.default_index(
                "dellemc_powerstore",
                &settings.options.dell_powerstore_index,
            );
        }
        let context = Context::parse(&files)?;
        let mut active = vendors::builtin();
        active.extend(settings.vendors.resolve(vendors::VENDORS)?);
        let app_parsers = settings.app_parsers.clone().filter(|p| !p.is_empty());
        let engine = Engine::new(active, app_parsers.clone());
        let resolved = engine
            .vendors()
            .iter()
            .map(|v| v.keys.iter().map(|k| resolve_key(&metadata, k)).collect())
            .collect();
        let mut warnings = metadata.warnings().to_vec();
        warnings.extend(context.warnings().iter().cloned());
        let mut c = Classifier {
            engine,
            resolved,
            metadata,
            context,
            listeners: Vec::new(),
            set_source_as_sc4s: settings.set_source_as_sc4s,
            zone: settings.zone.clone(),
            options: settings.options.clone(),
            warnings,
            ignored_listeners: Vec::new(),
            name_cache: None,
            app_parsers,
            named_filters: settings.app_parsers.clone(),
            loghost: settings.loghost.clone(),
            vps_cache: None,
        };
        for id in &settings.listeners {
            if !c.add_listener(id) && id != super::DEFAULT_LISTENER {
                c.ignored_listeners.push(id.clone());
            }
        }
        Ok(c)
    }

    /// Only `splunk_metadata.csv` (`file` names it in errors), every vendor, defaults.
    pub fn from_metadata_csv(file: &str, text: &str) -> Result<Classifier, BuildError> {
        let files = ContextFiles {
            splunk_metadata: Some((file.to_owned(), text.to_owned())),
            ..ContextFiles::default()
        };
        Classifier::new(files, &Settings::default())
    }

    /// Registers a listener id (see [`Settings::listeners`]); returns whether it named a
    /// vendor. Registering the same id twice is harmless.
    pub fn add_listener(&mut self, id: &str) -> bool {
        if self.listeners.iter().any(|l| &*l.id == id) {
            return true;
        }
        if id == super::DEFAULT_LISTENER {
            return false;
        }
        let parts: Vec<&str> = id.split('_').collect();
        if !(2..=3).contains(&parts.len()) || parts[0].is_empty() || parts[1].is_empty() {
            return false;
        }
        let vendor = parts[0].to_ascii_lowercase();
        let product = parts[1].to_ascii_lowercase();
        self.listeners.push(Listener {
            id: id.into(),
            vendor_product: format!("{vendor}_{product}").into(),
            vendor: vendor.into(),
            product: product.into(),
        });
        true
    }

    /// `SC4S_SET_SOURCE_AS_SC4S`.
    pub fn set_source_as_sc4s(&mut self, on: bool) {
        self.set_source_as_sc4s = on;
    }

    /// Context file rows accepted without effect; log them.
    pub fn warnings(&self) -> &[ContextWarning] {
        &self.warnings
    }

    /// Listener ids that name no vendor and product; log them.
    pub fn ignored_listeners(&self) -> &[String] {
        &self.ignored_listeners
    }

    /// The operator's app-parsers, when some are loaded.
    pub fn app_parsers(&self) -> Option<&std::sync::Arc<super::local::Program>> {
        self.app_parsers.as_ref()
    }

    /// What the selectors of `destination` (`sc4s-lp-dest-select-<destination>`) say
    /// about a classified message. Their values live in `scratch` (see
    /// [`super::classify`]).
    pub fn selects<'m, 't: 'm>(
        &'t self,
        destination: &str,
        msg: &crate::message::Message<'m>,
        src: &super::SourceMeta<'_>,
        class: &super::Classification<'m, 't>,
        now_unix_secs: i64,
        scratch: &'m super::local::Scratch,
    ) -> super::local::run::Selection {
        match &self.app_parsers {
            Some(p) => super::local::run::selects(
                p,
                destination,
                msg,
                src,
                class,
                now_unix_secs,
                &self.zone,
                scratch.bump(),
            ),
            None => super::local::run::Selection::default(),
        }
    }

    /// Whether selector application `app` ([`super::local::Selector::app`]) takes a
    /// classified message; `false` without app-parsers. Its values live in `scratch`, which
    /// may be another than the classification's.
    pub fn selector_takes<'m, 't: 'm>(
        &'t self,
        app: u32,
        msg: &crate::message::Message<'m>,
        src: &super::SourceMeta<'_>,
        class: &super::Classification<'m, 't>,
        now_unix_secs: i64,
        scratch: &'m super::local::Scratch,
    ) -> bool {
        self.app_parsers.as_ref().is_some_and(|p| {
            super::local::run::selector_takes(
                p,
                app,
                msg,
                src,
                class,
                now_unix_secs,
                &self.zone,
                scratch.bump(),
            )
        })
    }

    /// Whether the operator's named filter `id` ([`super::local::Program::filter_id`])
    /// matches a classified message; `false` without app-parsers.
    pub fn named_filter_matches<'m, 't: 'm>(
        &'t self,
        id: u32,
        msg: &crate::message::Message<'m>,
        src: &super::SourceMeta<'_>,
        class: &super::Classification<'m, 't>,
        now_unix_secs: i64,
        scratch: &'m super::local::Scratch,
    ) -> bool {
        self.named_filters.as_ref().is_some_and(|p| {
            super::local::run::named_filter_matches(
                p,
                id,
                msg,
                src,
                class,
                now_unix_secs,
                &self.zone,
                scratch.bump(),
            )
        })
    }

    /// The active vendor families (built-ins first).
    pub fn vendor_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.engine.vendors().iter().map(|v| v.name)
    }

    /// The build-time resolution of a static key, when `key` is one of vendor `vi`'s.
    pub(crate) fn resolved_key(&self, vi: u16, key: &'static Key) -> Option<&Option<Overrides>> {
        let vendor = self.engine.vendors().get(usize::from(vi))?;
        let at = vendor.keys.iter().position(|k| std::ptr::eq(k, key))?;
        self.resolved.get(usize::from(vi))?.get(at)
    }
}

/// The csv rows of a key whose vendor and product are static (`None` inside: no rows).
fn resolve_key(metadata: &Metadata, key: &Key) -> Option<Overrides> {
    use super::value::Value;
    if key.vendor.is_empty() || key.product.is_empty() {
        return None;
    }
    metadata
        .lookup(
            &Value::Static(key.vendor),
            &Value::Static(key.product),
            key.class.map(Value::Static).as_ref(),
        )
        .merged()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_options_from_env() {
        let none = VendorOptions::from_env(|_| None).unwrap();
        assert_eq!(none, VendorOptions::default());
        assert_eq!(none.fortinet_sourcetype_prefix, "fgt");
        let o = VendorOptions::from_env(|k| match k {
            "SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX" => Some("fortigate".into()),
            "SC4S_DISABLE_DROP_INVALID_CEF" => Some("yes".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(o.fortinet_sourcetype_prefix, "fortigate");
        assert!(o.lenient_cef);
        assert_eq!(o.lenient, LenientDrops::default());
        let o = VendorOptions::from_env(|k| {
            k.starts_with("SC4S_DISABLE_DROP_INVALID_")
                .then(|| "yes".to_owned())
        })
        .unwrap();
        assert_eq!(
            o.lenient,
            LenientDrops {
                cisco: true,
                hpe: true,
                vmware_vsphere: true,
                vmware_cb_protect: true,
                raw_bsd: true,
                xml: true
            }
        );
        let e = VendorOptions::from_env(|k| {
            (k == "SC4S_DISABLE_DROP_INVALID_XML").then(|| "sometimes".to_owned())
        })
        .unwrap_err();
        assert_eq!(e.variable, "SC4S_DISABLE_DROP_INVALID_XML");
        let e = VendorOptions::from_env(|k| {
            (k == "SC4S_DISABLE_DROP_INVALID_CEF").then(|| "maybe".to_owned())
        })
        .unwrap_err();
        assert_eq!(e.variable, "SC4S_DISABLE_DROP_INVALID_CEF");
        assert!(e.to_string().contains("expected yes or no"), "{e}");
        assert!(
            VendorOptions::from_env(|k| {
                (k == "SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX").then(|| " ".to_owned())
            })
            .is_err()
        );
        for (value, json) in [("", true), ("JSON", true), ("NONE", false), ("json", false)] {
            let o = VendorOptions::from_env(|k| {
                (k == "SC4S_DEST_BEYONDTRUST_SRA_SPLUNK_HEC_FMT").then(|| value.to_owned())
            })
            .unwrap();
            assert_eq!(o.beyondtrust_sra_json, json, "{value:?}");
            let o = VendorOptions::from_env(|k| {
                (k == "SC4S_DEST_DELL_SONICWALL-FIREWALL_SPLUNK_HEC_FMT").then(|| value.to_owned())
            })
            .unwrap();
            assert_eq!(o.sonicwall_json, json, "{value:?}");
        }
    }
}
