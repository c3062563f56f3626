//! The configuration as a list of settings: every leaf of [`Config`](super::Config) with its
//! dotted TOML path (`tcp.idle_timeout`, `listen.vendor.CISCO_ASA.udp`) and its value written
//! in TOML syntax, in declaration order.
//!
//! It is a small serde serializer, so a setting added to any section (a new field, a new
//! table) is listed without anyone touching this file: `run --check` shows it and
//! [`origin`](super::origin) traces where it came from. Values are written so that they
//! read back as the same setting (durations as their number of seconds, sizes as bytes).

use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

/// One setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// Dotted path of TOML keys.
    pub path: String,
    /// The value in TOML syntax; `None` for an optional setting that is unset.
    pub value: Option<String>,
}

impl Setting {
    /// An empty list, an empty string or unset: what a table entry that does not exist
    /// amounts to (a vendor listener with no TLS port).
    pub fn is_empty(&self) -> bool {
        matches!(self.value.as_deref(), None | Some("[]") | Some("\"\""))
    }
}

#[derive(Debug)]
pub struct FlattenError(String);

impl fmt::Display for FlattenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlattenError {}

impl ser::Error for FlattenError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        FlattenError(msg.to_string())
    }
}

/// Every leaf of `value` (a struct or map of tables), in order.
pub fn settings<T: Serialize>(value: &T) -> Result<Vec<Setting>, FlattenError> {
    match value.serialize(NodeSer)? {
        Node::Table(entries) => {
            let mut out = Vec::new();
            collect(String::new(), entries, &mut out);
            Ok(out)
        }
        _ => Err(FlattenError("the configuration is not a table".into())),
    }
}

/// Settings grouped by their table (the path without its last key), tables in the order they
/// first appear. Written as TOML this way, a table's own keys come before its sub-tables and
/// no table header appears twice (`[listen]` keys declared after `listen.vendor`).
pub fn tables(settings: &[Setting]) -> Vec<(&str, Vec<&Setting>)> {
    let mut out: Vec<(&str, Vec<&Setting>)> = Vec::new();
    for s in settings {
        let table = s.path.rsplit_once('.').map_or("", |(t, _)| t);
        match out.iter_mut().find(|(t, _)| *t == table) {
            Some((_, list)) => list.push(s),
            None => out.push((table, vec![s])),
        }
    }
    out
}

impl Setting {
    /// The last key of the path.
    pub fn key(&self) -> &str {
        self.path.rsplit_once('.').map_or(&self.path, |(_, k)| k)
    }
}

fn collect(prefix: String, entries: Vec<(String, Node)>, out: &mut Vec<Setting>) {
    for (key, node) in entries {
        let path = if prefix.is_empty() {
            key
        } else {
            format!("{prefix}.{key}")
        };
        match node {
            Node::Table(inner) => collect(path, inner, out),
            Node::Leaf(v) => out.push(Setting {
                path,
                value: Some(v),
            }),
            Node::Unset => out.push(Setting { path, value: None }),
        }
    }
}

enum Node {
    Leaf(String),
    Unset,
    Table(Vec<(String, Node)>),
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn toml_float(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        toml::Value::Float(v).to_string()
    }
}

struct NodeSer;

fn leaf(s: impl ToString) -> Result<Node, FlattenError> {
    Ok(Node::Leaf(s.to_string()))
}

impl ser::Serializer for NodeSer {
    type Ok = Node;
    type Error = FlattenError;
    type SerializeSeq = SeqSer;
    type SerializeTuple = SeqSer;
    type SerializeTupleStruct = SeqSer;
    type SerializeTupleVariant = Impossible<Node, FlattenError>;
    type SerializeMap = TableSer;
    type SerializeStruct = TableSer;
    type SerializeStructVariant = Impossible<Node, FlattenError>;

    fn serialize_bool(self, v: bool) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_i8(self, v: i8) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_i16(self, v: i16) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_i32(self, v: i32) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_i64(self, v: i64) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Node, FlattenError> {
        leaf(v)
    }
    fn serialize_f32(self, v: f32) -> Result<Node, FlattenError> {
        Ok(Node::Leaf(toml_float(f64::from(v))))
    }
    fn serialize_f64(self, v: f64) -> Result<Node, FlattenError> {
        Ok(Node::Leaf(toml_float(v)))
    }
    fn serialize_char(self, v: char) -> Result<Node, FlattenError> {
        Ok(Node::Leaf(toml_string(&v.to_string())))
    }
    fn serialize_str(self, v: &str) -> Result<Node, FlattenError> {
        Ok(Node::Leaf(toml_string(v)))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node, FlattenError> {
        let items: Vec<String> = v.iter().map(u8::to_string).collect();
        leaf(format!("[{}]", items.join(", ")))
    }
    fn serialize_none(self) -> Result<Node, FlattenError> {
        Ok(Node::Unset)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Node, FlattenError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node, FlattenError> {
        Ok(Node::Unset)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Node, FlattenError> {
        Ok(Node::Unset)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Node, FlattenError> {
        Ok(Node::Leaf(toml_string(variant)))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Node, FlattenError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Result<Node, FlattenError> {
        Err(FlattenError(format!(
            "enum variant {variant} with data has no TOML form here"
        )))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer, FlattenError> {
        Ok(SeqSer(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer, FlattenError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<SeqSer, FlattenError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, FlattenError> {
        Err(FlattenError(format!(
            "enum variant {variant} with data has no TOML form here"
        )))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<TableSer, FlattenError> {
        Ok(TableSer {
            entries: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<TableSer, FlattenError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, FlattenError> {
        Err(FlattenError(format!(
            "enum variant {variant} with data has no TOML form here"
        )))
    }
}

/// An inline array of scalars (`[514, 601]`, `["https://a:8088"]`).
struct SeqSer(Vec<String>);

impl SeqSer {
    fn push<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), FlattenError> {
        match v.serialize(NodeSer)? {
            Node::Leaf(s) => {
                self.0.push(s);
                Ok(())
            }
            _ => Err(FlattenError(
                "a list of tables or of unset values has no inline form".into(),
            )),
        }
    }
    fn finish(self) -> Result<Node, FlattenError> {
        leaf(format!("[{}]", self.0.join(", ")))
    }
}

impl ser::SerializeSeq for SeqSer {
    type Ok = Node;
    type Error = FlattenError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), FlattenError> {
        self.push(v)
    }
    fn end(self) -> Result<Node, FlattenError> {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqSer {
    type Ok = Node;
    type Error = FlattenError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), FlattenError> {
        self.push(v)
    }
    fn end(self) -> Result<Node, FlattenError> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqSer {
    type Ok = Node;
    type Error = FlattenError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), FlattenError> {
        self.push(v)
    }
    fn end(self) -> Result<Node, FlattenError> {
        self.finish()
    }
}

struct TableSer {
    entries: Vec<(String, Node)>,
    key: Option<String>,
}

impl ser::SerializeMap for TableSer {
    type Ok = Node;
    type Error = FlattenError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), FlattenError> {
        self.key = Some(key.serialize(KeySer)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), FlattenError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| FlattenError("a map value without a key".into()))?;
        self.entries.push((key, v.serialize(NodeSer)?));
        Ok(())
    }
    fn end(self) -> Result<Node, FlattenError> {
        Ok(Node::Table(self.entries))
    }
}

impl ser::SerializeStruct for TableSer {
    type Ok = Node;
    type Error = FlattenError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), FlattenError> {
        self.entries.push((key.to_owned(), v.serialize(NodeSer)?));
        Ok(())
    }
    fn end(self) -> Result<Node, FlattenError> {
        Ok(Node::Table(self.entries))
    }
}

/// Map keys: strings (vendor ids) and anything that displays as one.
struct KeySer;

impl ser::Serializer for KeySer {
    type Ok = String;
    type Error = FlattenError;
    type SerializeSeq = Impossible<String, FlattenError>;
    type SerializeTuple = Impossible<String, FlattenError>;
    type SerializeTupleStruct = Impossible<String, FlattenError>;
    type SerializeTupleVariant = Impossible<String, FlattenError>;
    type SerializeMap = Impossible<String, FlattenError>;
    type SerializeStruct = Impossible<String, FlattenError>;
    type SerializeStructVariant = Impossible<String, FlattenError>;

    fn serialize_str(self, v: &str) -> Result<String, FlattenError> {
        Ok(v.to_owned())
    }
    fn serialize_bool(self, v: bool) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_f64(self, v: f64) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_char(self, v: char) -> Result<String, FlattenError> {
        Ok(v.to_string())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, FlattenError> {
        Err(FlattenError("bytes as a table key".into()))
    }
    fn serialize_none(self) -> Result<String, FlattenError> {
        Err(FlattenError("an unset table key".into()))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<String, FlattenError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<String, FlattenError> {
        Err(FlattenError("a unit table key".into()))
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<String, FlattenError> {
        Ok(name.to_owned())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, FlattenError> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<String, FlattenError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, FlattenError> {
        Err(FlattenError("an enum with data as a table key".into()))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, FlattenError> {
        Err(FlattenError("a list as a table key".into()))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, FlattenError> {
        Err(FlattenError("a tuple as a table key".into()))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, FlattenError> {
        Err(FlattenError("a tuple as a table key".into()))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, FlattenError> {
        Err(FlattenError("a tuple as a table key".into()))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, FlattenError> {
        Err(FlattenError("a table as a table key".into()))
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, FlattenError> {
        Err(FlattenError("a table as a table key".into()))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, FlattenError> {
        Err(FlattenError("a table as a table key".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn find<'a>(s: &'a [Setting], path: &str) -> &'a Setting {
        s.iter()
            .find(|x| x.path == path)
            .unwrap_or_else(|| panic!("{path} not listed: {s:#?}"))
    }

    #[test]
    fn every_leaf_in_declaration_order_in_toml_syntax() {
        let mut c = Config::default();
        c.listen
            .vendor
            .entry("CISCO_ASA".into())
            .or_default()
            .udp
            .push(5000);
        c.hec.urls = vec!["https://a:8088".into(), "https://b:8088".into()];
        c.tcp.frame_timeout = std::time::Duration::from_millis(2500);
        let s = settings(&c).unwrap();
        assert_eq!(s[0].path, "listen.address");
        assert_eq!(
            find(&s, "listen.address").value.as_deref(),
            Some("\"0.0.0.0\"")
        );
        assert_eq!(find(&s, "listen.udp_ports").value.as_deref(), Some("[514]"));
        assert_eq!(find(&s, "listen.lock_dir").value, None);
        assert_eq!(
            find(&s, "listen.vendor.CISCO_ASA.udp").value.as_deref(),
            Some("[5000]")
        );
        assert!(find(&s, "listen.vendor.CISCO_ASA.tls").is_empty());
        assert_eq!(find(&s, "udp.rcvbuf").value.as_deref(), Some("16777216"));
        assert_eq!(find(&s, "udp.balance").value.as_deref(), Some("\"kernel\""));
        assert_eq!(find(&s, "tcp.frame_timeout").value.as_deref(), Some("2.5"));
        assert_eq!(find(&s, "tcp.idle_timeout").value.as_deref(), Some("3600"));
        assert_eq!(find(&s, "hec.batch_timeout").value.as_deref(), Some("300"));
        assert_eq!(
            find(&s, "hec.urls").value.as_deref(),
            Some("[\"https://a:8088\", \"https://b:8088\"]")
        );
        let order: Vec<&str> = s.iter().map(|x| x.path.as_str()).collect();
        let pos = |p: &str| order.iter().position(|x| *x == p).unwrap();
        assert!(pos("listen.udp_ports") < pos("listen.tcp_ports"));
        assert!(pos("listen.tcp_ports") < pos("udp.sockets"));
        assert!(pos("hec.urls") < pos("hec.token"));
    }

    /// Written out and read back, the listing is the same configuration: what `run --check`
    /// prints is what sluice runs with.
    #[test]
    fn the_listing_reads_back_as_the_same_configuration() {
        let mut c = Config::default();
        c.listen.vendor.entry("PAN_FW".into()).or_default().tcp = vec![6000, 6001];
        c.tls.ca_dir = Some("/etc/ca \"dir\"".into());
        c.udp.balance = crate::config::Balance::Cbpf;
        c.tcp.idle_timeout = std::time::Duration::from_millis(1500);
        c.hec.headers = vec!["X-A: b".into()];
        let all = settings(&c).unwrap();
        let mut toml = String::new();
        for (table, list) in tables(&all) {
            toml.push_str(&format!("[{table}]\n"));
            for s in list {
                if let Some(v) = &s.value {
                    toml.push_str(&format!("{} = {v}\n", s.key()));
                }
            }
        }
        assert_eq!(Config::from_toml_str(&toml).unwrap(), c, "{toml}");
    }
}
