//! SC4S's context files besides `splunk_metadata.csv` ([`super::metadata`]), read from the
//! same directory with the same formats:
//!
//! * `host.csv` (`conflib/_splunk/fix_dns.conf p_add_context_host`): rows
//!   `<ip>,HOST,<name>`; when HOST is missing or an IP, the sender's IP is looked up.
//! * `vendor_product_by_source.conf` + `.csv` (`conf.d/enrich/vendor_product_by_source.conf`):
//!   syslog-ng filters ([`super::filter`]) and rows `<filter>,<field>,<value>` with fields
//!   `sc4s_vendor_product`, `sc4s_vendor`, `sc4s_product`, `sc4s_time_zone`,
//!   `sc4s_use_recv_time`. Consulted on listeners without a vendor.
//! * `compliance_meta_by_source.conf` + `.csv` (`conflib/_common/p_compliance_meta.conf`):
//!   rows with fields `.splunk.index`, `.splunk.source`, `.splunk.sourcetype` or
//!   `fields.<name>`; applied last, so they beat `splunk_metadata.csv`.
//!
//! syslog-ng's `add-contextual-data(selector(filters(...)))` uses the first filter, in file
//! order, that matches; so does sluice. A missing file is the same as an empty one (SC4S
//! touches them at start). A malformed line is an error naming the file and the line.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;

use crate::time::Zone;

use super::csv::{ContextError, ContextWarning, rows3};
use super::filter::{FilterInput, Filters};
use super::registry::NetSource;

/// File names inside the context directory.
pub const SPLUNK_METADATA: &str = "splunk_metadata.csv";
pub const VPS_CONF: &str = "vendor_product_by_source.conf";
pub const VPS_CSV: &str = "vendor_product_by_source.csv";
pub const COMPLIANCE_CONF: &str = "compliance_meta_by_source.conf";
pub const COMPLIANCE_CSV: &str = "compliance_meta_by_source.csv";
pub const HOST_CSV: &str = "host.csv";

/// The context files' contents (name for errors, text); `None` for an absent file.
#[derive(Clone, Debug, Default)]
pub struct ContextFiles {
    pub splunk_metadata: Option<(String, String)>,
    pub vps_conf: Option<(String, String)>,
    pub vps_csv: Option<(String, String)>,
    pub compliance_conf: Option<(String, String)>,
    pub compliance_csv: Option<(String, String)>,
    pub host_csv: Option<(String, String)>,
}

impl ContextFiles {
    /// Reads the files SC4S reads from `dir`. A missing file is skipped; a directory that
    /// does not exist is an error (the setting names it on purpose).
    pub fn read_dir(dir: &Path) -> Result<ContextFiles, ContextError> {
        if !dir.is_dir() {
            return Err(ContextError::Read {
                file: dir.display().to_string(),
                reason: "not a directory".into(),
            });
        }
        let read = |name: &str| -> Result<Option<(String, String)>, ContextError> {
            let path = dir.join(name);
            match std::fs::read(&path) {
                Ok(bytes) => Ok(Some((
                    path.display().to_string(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(ContextError::Read {
                    file: path.display().to_string(),
                    reason: e.to_string(),
                }),
            }
        };
        Ok(ContextFiles {
            splunk_metadata: read(SPLUNK_METADATA)?,
            vps_conf: read(VPS_CONF)?,
            vps_csv: read(VPS_CSV)?,
            compliance_conf: read(COMPLIANCE_CONF)?,
            compliance_csv: read(COMPLIANCE_CSV)?,
            host_csv: read(HOST_CSV)?,
        })
    }
}

/// What `vendor_product_by_source` gives a message.
#[derive(Clone, Debug, Default)]
pub struct VpsEntry {
    pub vendor: Box<str>,
    pub product: Box<str>,
    pub vendor_product: Box<str>,
    pub time_zone: Option<Zone>,
    pub use_recv_time: bool,
}

impl VpsEntry {
    pub fn netsource(&self) -> NetSource<'_> {
        NetSource {
            vendor: &self.vendor,
            product: &self.product,
            vendor_product: &self.vendor_product,
        }
    }
}

/// What `compliance_meta_by_source` gives a message.
#[derive(Clone, Debug, Default)]
pub struct ComplianceEntry {
    pub index: Option<Box<str>>,
    pub source: Option<Box<str>>,
    pub sourcetype: Option<Box<str>>,
    /// `fields.<name>` rows: (name, value).
    pub fields: Vec<(Box<str>, Box<str>)>,
}

/// The parsed context files (except `splunk_metadata.csv`).
#[derive(Debug, Default)]
pub struct Context {
    hosts: HashMap<IpAddr, Box<str>>,
    vps_filters: Filters,
    /// (filter index, entry), in filter order.
    vps: Vec<(usize, VpsEntry)>,
    compliance_filters: Filters,
    compliance: Vec<(usize, ComplianceEntry)>,
    warnings: Vec<ContextWarning>,
}

impl Context {
    pub fn parse(files: &ContextFiles) -> Result<Context, ContextError> {
        let mut cx = Context::default();
        if let Some((file, text)) = &files.host_csv {
            for row in rows3(file, text, "ip,HOST,name")? {
                let [ip, field, name] = &row.fields;
                let err = |r: &str| ContextError::syntax(file, row.line, row.raw, r);
                let ip: IpAddr = ip
                    .parse()
                    .map_err(|_| err("expected an IP address in the first field"))?;
                if field != "HOST" {
                    return Err(err("expected HOST in the second field"));
                }
                if name.is_empty() {
                    return Err(err("expected a host name in the third field"));
                }
                cx.hosts.insert(ip.to_canonical(), name.as_str().into());
            }
        }
        if let Some((file, text)) = &files.vps_conf {
            cx.vps_filters = Filters::parse(file, text)?;
        }
        if let Some((file, text)) = &files.vps_csv {
            let mut entries: Vec<(usize, VpsEntry)> = Vec::new();
            for row in rows3(file, text, "filter,field,value")? {
                let [filter, field, value] = &row.fields;
                let err = |r: String| ContextError::syntax(file, row.line, row.raw, r);
                let fi = cx
                    .vps_filters
                    .index_of(filter)
                    .ok_or_else(|| err(format!("expected the name of a filter in {VPS_CONF}")))?;
                let entry = match entries.iter_mut().find(|(i, _)| *i == fi) {
                    Some((_, e)) => e,
                    None => {
                        entries.push((fi, VpsEntry::default()));
                        &mut entries.last_mut().expect("pushed").1
                    }
                };
                match field.as_str() {
                    "sc4s_vendor_product" => entry.vendor_product = value.as_str().into(),
                    "sc4s_vendor" => entry.vendor = value.as_str().into(),
                    "sc4s_product" => entry.product = value.as_str().into(),
                    "sc4s_time_zone" => {
                        entry.time_zone = Some(
                            Zone::from_name(value)
                                .map_err(|e| err(format!("expected a time zone name ({e})")))?,
                        )
                    }
                    "sc4s_use_recv_time" => {
                        entry.use_recv_time = matches!(
                            value.to_ascii_lowercase().as_str(),
                            "yes" | "true" | "1" | "t" | "y"
                        )
                    }
                    _ => cx.warnings.push(ContextWarning {
                        file: file.clone(),
                        line: row.line,
                        content: row.raw.to_owned(),
                        reason: "field has no effect (sc4s_vendor_product, sc4s_vendor, \
                                 sc4s_product, sc4s_time_zone, sc4s_use_recv_time do); row ignored"
                            .into(),
                    }),
                }
            }
            for (_, e) in entries.iter_mut() {
                if e.vendor_product.is_empty() && !e.vendor.is_empty() && !e.product.is_empty() {
                    e.vendor_product = format!("{}_{}", e.vendor, e.product).into();
                }
            }
            entries.sort_by_key(|(i, _)| *i);
            cx.vps = entries;
        }
        if let Some((file, text)) = &files.compliance_conf {
            cx.compliance_filters = Filters::parse(file, text)?;
        }
        if let Some((file, text)) = &files.compliance_csv {
            let mut entries: Vec<(usize, ComplianceEntry)> = Vec::new();
            for row in rows3(file, text, "filter,field,value")? {
                let [filter, field, value] = &row.fields;
                let err = |r: String| ContextError::syntax(file, row.line, row.raw, r);
                let fi = cx.compliance_filters.index_of(filter).ok_or_else(|| {
                    err(format!(
                        "expected the name of a filter in {COMPLIANCE_CONF}"
                    ))
                })?;
                let entry = match entries.iter_mut().find(|(i, _)| *i == fi) {
                    Some((_, e)) => e,
                    None => {
                        entries.push((fi, ComplianceEntry::default()));
                        &mut entries.last_mut().expect("pushed").1
                    }
                };
                let value: Box<str> = value.as_str().into();
                match field.as_str() {
                    ".splunk.index" => entry.index = Some(value),
                    ".splunk.source" => entry.source = Some(value),
                    ".splunk.sourcetype" => entry.sourcetype = Some(value),
                    f => match f.strip_prefix("fields.") {
                        Some(name) if !name.is_empty() => {
                            entry.fields.retain(|(n, _)| &**n != name);
                            entry.fields.push((name.into(), value));
                        }
                        _ => {
                            return Err(err(
                                "expected .splunk.index, .splunk.source, .splunk.sourcetype or \
                                 fields.<name> in the second field"
                                    .into(),
                            ));
                        }
                    },
                }
            }
            entries.sort_by_key(|(i, _)| *i);
            cx.compliance = entries;
        }
        Ok(cx)
    }

    pub fn warnings(&self) -> &[ContextWarning] {
        &self.warnings
    }

    /// Whether `host.csv` has rows (without, a message's HOST need not be examined).
    pub fn has_hosts(&self) -> bool {
        !self.hosts.is_empty()
    }

    /// `host.csv`'s name for a sender.
    pub fn host_for(&self, ip: IpAddr) -> Option<&str> {
        if self.hosts.is_empty() {
            return None;
        }
        self.hosts.get(&ip.to_canonical()).map(|h| &**h)
    }

    pub fn vendor_product_by_source(
        &self,
        host: Option<&[u8]>,
        source_ip: IpAddr,
        program: Option<&[u8]>,
        message: &[u8],
    ) -> Option<&VpsEntry> {
        if self.vps.is_empty() {
            return None;
        }
        let input = FilterInput {
            host,
            source_ip,
            program,
            message,
        };
        self.vps
            .iter()
            .find(|(fi, _)| self.vps_filters.matches(*fi, &input))
            .map(|(_, e)| e)
    }

    pub fn compliance(
        &self,
        host: Option<&[u8]>,
        source_ip: IpAddr,
        program: Option<&[u8]>,
        message: &[u8],
    ) -> Option<&ComplianceEntry> {
        if self.compliance.is_empty() {
            return None;
        }
        let input = FilterInput {
            host,
            source_ip,
            program,
            message,
        };
        self.compliance
            .iter()
            .find(|(fi, _)| self.compliance_filters.matches(*fi, &input))
            .map(|(_, e)| e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> ContextFiles {
        let mut f = ContextFiles::default();
        for (name, text) in pairs {
            let v = Some((name.to_string(), text.to_string()));
            match *name {
                VPS_CONF => f.vps_conf = v,
                VPS_CSV => f.vps_csv = v,
                COMPLIANCE_CONF => f.compliance_conf = v,
                COMPLIANCE_CSV => f.compliance_csv = v,
                HOST_CSV => f.host_csv = v,
                _ => unreachable!(),
            }
        }
        f
    }

    #[test]
    fn sc4s_example_files() {
        let cx = Context::parse(&files(&[
            (
                VPS_CONF,
                "filter f_tzfixny {\n    host(\"tzfny-*\" type(glob))\n};\nfilter f_f5{\n    host('^test-f5') or \"${HOST}\" eq \"f5_bigip\"\n};",
            ),
            (
                VPS_CSV,
                "f_tzfixny,sc4s_time_zone,\"America/New_York\"\nf_f5,sc4s_vendor_product,f5_bigip\nf_f5,other,x\n",
            ),
            (HOST_CSV, "169.254.0.2,HOST,foo.example"),
            (COMPLIANCE_CONF, "filter f_test_test {\n host(\"something-*\" type(glob)) or netmask(169.254.100.0/24)\n};"),
            (COMPLIANCE_CSV, "f_test_test,.splunk.index,\"pciindex\"\nf_test_test,fields.compliance,\"pci\"\n"),
        ]))
        .unwrap();
        assert_eq!(cx.warnings().len(), 1);
        let ip: IpAddr = "169.254.0.2".parse().unwrap();
        assert_eq!(cx.host_for(ip), Some("foo.example"));
        let ny = cx
            .vendor_product_by_source(Some(b"tzfny-1"), ip, None, b"")
            .unwrap();
        assert_eq!(ny.time_zone.as_ref().unwrap().name(), "America/New_York");
        let f5 = cx
            .vendor_product_by_source(Some(b"test-f5-x"), ip, None, b"")
            .unwrap();
        assert_eq!(&*f5.vendor_product, "f5_bigip");
        assert!(
            cx.vendor_product_by_source(Some(b"other"), ip, None, b"")
                .is_none()
        );
        let c = cx
            .compliance(Some(b"h"), "169.254.100.7".parse().unwrap(), None, b"")
            .unwrap();
        assert_eq!(c.index.as_deref(), Some("pciindex"));
        assert_eq!(c.fields, vec![("compliance".into(), "pci".into())]);
    }

    /// Files (name, text), then the file and line the error must name, and a phrase in it.
    type MalformedCase<'a> = (&'a [(&'a str, &'a str)], &'a str, usize, &'a str);

    #[test]
    fn malformed_lines_are_errors_with_file_and_line() {
        let cases: &[MalformedCase] = &[
            (
                &[(HOST_CSV, "\nnot-an-ip,HOST,x")],
                HOST_CSV,
                2,
                "IP address",
            ),
            (&[(HOST_CSV, "1.2.3.4,host,x")], HOST_CSV, 1, "HOST"),
            (&[(HOST_CSV, "1.2.3.4,HOST")], HOST_CSV, 1, "three fields"),
            (
                &[
                    (VPS_CONF, "filter f {host(\"a\")};"),
                    (VPS_CSV, "g,sc4s_vendor,x"),
                ],
                VPS_CSV,
                1,
                "name of a filter",
            ),
            (
                &[
                    (VPS_CONF, "filter f {host(\"a\")};"),
                    (VPS_CSV, "f,sc4s_time_zone,Mars/Olympus"),
                ],
                VPS_CSV,
                1,
                "time zone",
            ),
            (
                &[
                    (COMPLIANCE_CONF, "filter f {host(\"a\")};"),
                    (COMPLIANCE_CSV, "f,index,x"),
                ],
                COMPLIANCE_CSV,
                1,
                ".splunk.index",
            ),
            (
                &[(VPS_CONF, "filter f {\nhost(\"a\"\n};")],
                VPS_CONF,
                3,
                "expected",
            ),
        ];
        for (input, file, line, needle) in cases {
            match Context::parse(&files(input)) {
                Err(ContextError::Syntax {
                    file: f,
                    line: l,
                    reason,
                    ..
                }) => {
                    assert_eq!((f.as_str(), l), (*file, *line), "{input:?}");
                    assert!(reason.contains(needle), "{input:?}: {reason}");
                }
                other => panic!("{input:?}: {other:?}"),
            }
        }
    }
}
