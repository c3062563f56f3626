//! Building a [`Classifier`]: the active vendors, the context files, the settings. The
//! result is immutable; a reload (SIGHUP) builds a new one with [`build`] and swaps it in.

use std::path::Path;

use thiserror::Error;

use crate::time::Zone;

use super::context::{Context, ContextFiles};
use super::csv::{ContextError, ContextWarning};
use super::dispatch::Engine;
use super::metadata::{Metadata, Overrides};
pub use super::options::{CheckpointOptions, LenientDrops, VendorOptionError, VendorOptions};
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
            Some(p) => self
                .on_class(p, msg, src, now_unix_secs, scratch.bump())
                .selects(destination, class),
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
            self.on_class(p, msg, src, now_unix_secs, scratch.bump())
                .selector_takes(app, class)
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
            self.on_class(p, msg, src, now_unix_secs, scratch.bump())
                .named_filter_matches(id, class)
        })
    }

    /// What the operator's applications that run on a classified message read beside it:
    /// the same LOGHOST, zone and context metadata as classification itself.
    pub(super) fn on_class<'m, 't: 'm, 'a>(
        &'t self,
        program: &'t super::local::Program,
        msg: &'a crate::message::Message<'m>,
        src: &'a super::SourceMeta<'a>,
        now_unix_secs: i64,
        arena: &'m bumpalo::Bump,
    ) -> super::local::run::OnClass<'m, 't, 'a> {
        super::local::run::OnClass {
            program,
            msg,
            src,
            now: now_unix_secs,
            zone: &self.zone,
            loghost: &self.loghost,
            arena,
            metadata: &self.metadata,
        }
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
