//! `splunk_metadata.csv`: per-key overrides of index, source, sourcetype and template
//! (SC4S `conf.d/enrich/splunk_context.conf`).
//!
//! Rows are `key,field,value`. SC4S looks the key `<vendor>_<product>` up first and then
//! `<vendor>_<product>_<class>`, the second winning, case-insensitively (`ignore-case(yes)`),
//! after every parser ran, so a row beats whatever a vendor parser chose.

use std::collections::HashMap;

use super::csv::{ContextError, ContextWarning, rows3};
use super::template::Template;
use super::value::Value;

/// The overrides of one key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub index: Option<Box<str>>,
    pub source: Option<Box<str>>,
    pub sourcetype: Option<Box<str>>,
    pub template: Option<Template>,
}

impl Overrides {
    /// `later` wins field by field.
    pub fn merged(&self, later: &Overrides) -> Overrides {
        Overrides {
            index: later.index.clone().or_else(|| self.index.clone()),
            source: later.source.clone().or_else(|| self.source.clone()),
            sourcetype: later.sourcetype.clone().or_else(|| self.sourcetype.clone()),
            template: later.template.or(self.template),
        }
    }
}

/// The parsed `splunk_metadata.csv`.
#[derive(Clone, Debug, Default)]
pub struct Metadata {
    /// Keys lowercased.
    rows: HashMap<Box<[u8]>, Overrides>,
    warnings: Vec<ContextWarning>,
}

/// The longest key looked up without allocating.
const KEY_BUF: usize = 192;

impl Metadata {
    /// Parses the file's text; `file` names it in errors. A later row for the same key and
    /// field wins. Rows with a field sluice does not use, or an `sc4s_template` it does not
    /// implement, become [`Metadata::warnings`].
    pub fn parse(file: &str, text: &str) -> Result<Metadata, ContextError> {
        let mut rows: HashMap<Box<[u8]>, Overrides> = HashMap::new();
        let mut warnings = Vec::new();
        for row in rows3(file, text, "key,field,value")? {
            let [key, field, value] = row.fields;
            let syntax = |reason: &str| ContextError::syntax(file, row.line, row.raw, reason);
            if key.is_empty() {
                return Err(syntax("empty key"));
            }
            if value.is_empty() {
                return Err(syntax("empty value"));
            }
            let mut warn = |reason: String| {
                warnings.push(ContextWarning {
                    file: file.to_owned(),
                    line: row.line,
                    content: row.raw.to_owned(),
                    reason,
                })
            };
            let entry = rows
                .entry(key.to_ascii_lowercase().into_bytes().into_boxed_slice())
                .or_default();
            match field.as_str() {
                "index" => entry.index = Some(value.into_boxed_str()),
                "source" => entry.source = Some(value.into_boxed_str()),
                "sourcetype" => entry.sourcetype = Some(value.into_boxed_str()),
                "sc4s_template" => match Template::from_sc4s_name(&value) {
                    Some(t) => entry.template = Some(t),
                    None => warn(format!(
                        "sc4s_template not implemented by sluice (it renders {}); row ignored",
                        Template::names().collect::<Vec<_>>().join(", ")
                    )),
                },
                _ => warn(
                    "field has no effect (index, source, sourcetype, sc4s_template do); row ignored"
                        .into(),
                ),
            }
        }
        Ok(Metadata { rows, warnings })
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Gives `key` (lower case) the index `index` unless a row already does: an index a
    /// setting chooses for a vendor (SC4S's `r_set_splunk_dest_default(index(`...`))`),
    /// which the file's rows still override.
    pub fn default_index(&mut self, key: &str, index: &str) {
        let entry = self
            .rows
            .entry(key.as_bytes().to_vec().into_boxed_slice())
            .or_default();
        if entry.index.is_none() {
            entry.index = Some(index.into());
        }
    }

    /// Rows that were accepted without effect.
    pub fn warnings(&self) -> &[ContextWarning] {
        &self.warnings
    }

    /// The rows of `<vendor>_<product>` and of `<vendor>_<product>_<class>` (which win
    /// field by field); both `None` when neither key has a row.
    pub fn lookup<'t>(
        &'t self,
        vendor: &Value<'_, '_>,
        product: &Value<'_, '_>,
        class: Option<&Value<'_, '_>>,
    ) -> Lookup<'t> {
        if self.rows.is_empty() {
            return Lookup::default();
        }
        let mut key = KeyBuf::default();
        key.push(vendor);
        key.push_bytes(b"_");
        key.push(product);
        let base_len = key.len();
        if let Some(c) = class {
            key.push_bytes(b"_");
            key.push(c);
        }
        let key = key.lowercased();
        Lookup {
            base: self.rows.get(&key[..base_len]),
            class: class.and_then(|_| self.rows.get(key)),
        }
    }
}

/// The rows that apply to one event: the class row wins field by field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lookup<'t> {
    pub base: Option<&'t Overrides>,
    pub class: Option<&'t Overrides>,
}

impl<'t> Lookup<'t> {
    fn pick<T>(&self, f: impl Fn(&'t Overrides) -> Option<T>) -> Option<T> {
        self.class.and_then(&f).or_else(|| self.base.and_then(&f))
    }

    pub fn index(&self) -> Option<&'t str> {
        self.pick(|o| o.index.as_deref())
    }

    pub fn source(&self) -> Option<&'t str> {
        self.pick(|o| o.source.as_deref())
    }

    pub fn sourcetype(&self) -> Option<&'t str> {
        self.pick(|o| o.sourcetype.as_deref())
    }

    pub fn template(&self) -> Option<Template> {
        self.pick(|o| o.template)
    }

    /// The two rows folded into one owned value (for tables resolved at build).
    pub fn merged(&self) -> Option<Overrides> {
        match (self.base, self.class) {
            (None, None) => None,
            (Some(a), None) => Some(a.clone()),
            (None, Some(b)) => Some(b.clone()),
            (Some(a), Some(b)) => Some(a.merged(b)),
        }
    }
}

/// A lookup key built on the stack unless it is unusually long.
struct KeyBuf {
    buf: [u8; KEY_BUF],
    len: usize,
    heap: Vec<u8>,
}

impl Default for KeyBuf {
    fn default() -> Self {
        KeyBuf {
            buf: [0; KEY_BUF],
            len: 0,
            heap: Vec::new(),
        }
    }
}

impl KeyBuf {
    fn push(&mut self, v: &Value<'_, '_>) {
        let (a, b) = v.parts();
        self.push_bytes(a);
        self.push_bytes(b);
    }

    fn push_bytes(&mut self, s: &[u8]) {
        if self.heap.is_empty() && self.len + s.len() <= KEY_BUF {
            self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        } else {
            if self.heap.is_empty() {
                self.heap.extend_from_slice(&self.buf[..self.len]);
            }
            self.heap.extend_from_slice(s);
        }
        self.len += s.len();
    }

    fn len(&self) -> usize {
        self.len
    }

    fn lowercased(&mut self) -> &[u8] {
        let key = if self.heap.is_empty() {
            &mut self.buf[..self.len]
        } else {
            &mut self.heap[..]
        };
        key.make_ascii_lowercase();
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_lookup() {
        let csv = "\
# comment
NIX_SYSLOG,index,unix
nix_syslog,sourcetype,\"linux:syslog\"
Imperva Inc._SecureSphere,index,waf
cisco_asa,index,fw_prod
cisco_asa_nix_syslog,source,\"asa \"\"src\"\"\"
local_example,host,ignored
x,sc4s_template,t_nope
";
        let m = Metadata::parse("splunk_metadata.csv", csv).unwrap();
        assert_eq!(m.warnings().len(), 2);
        assert_eq!(m.warnings()[0].line, 7);
        let o = m
            .lookup(&Value::Static("nix"), &Value::Static("syslog"), None)
            .merged()
            .unwrap();
        assert_eq!(o.index.as_deref(), Some("unix"));
        assert_eq!(o.sourcetype.as_deref(), Some("linux:syslog"));
        let o = m
            .lookup(
                &Value::Bytes(b"Imperva Inc."),
                &Value::Bytes(b"SecureSphere"),
                Some(&Value::Bytes(b"Firewall")),
            )
            .merged()
            .unwrap();
        assert_eq!(o.index.as_deref(), Some("waf"));
        let o = m
            .lookup(
                &Value::Static("cisco"),
                &Value::Static("asa"),
                Some(&Value::Static("nix_syslog")),
            )
            .merged()
            .unwrap();
        assert_eq!(o.index.as_deref(), Some("fw_prod"));
        assert_eq!(o.source.as_deref(), Some("asa \"src\""));
        assert!(
            m.lookup(&Value::Static("a"), &Value::Static("b"), None)
                .merged()
                .is_none()
        );
        let long = "v".repeat(300);
        assert!(
            m.lookup(&Value::Static(&long), &Value::Static("b"), None)
                .merged()
                .is_none()
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases = [
            ("a,b\n", 1, "expected three fields: key,field,value"),
            ("\n\nx,index,\"open\n", 3, "unterminated quoted field"),
            ("x,index,\"a\"b\n", 1, "text after a closing quote"),
            ("x,index,a\"b\n", 1, "quote inside an unquoted field"),
            (",index,a\n", 1, "empty key"),
            ("k,index,\n", 1, "empty value"),
            ("k,index,a,b\n", 1, "expected three fields: key,field,value"),
        ];
        for (csv, line, reason) in cases {
            match Metadata::parse("m.csv", csv) {
                Err(ContextError::Syntax {
                    line: l,
                    reason: r,
                    file,
                    ..
                }) => {
                    assert_eq!((l, r.as_str()), (line, reason), "{csv:?}");
                    assert_eq!(file, "m.csv");
                }
                other => panic!("{csv:?}: {other:?}"),
            }
        }
        let err = Metadata::parse("/x/m.csv", "k,index\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/x/m.csv line 1") && err.contains("k,index"),
            "{err}"
        );
    }
}
