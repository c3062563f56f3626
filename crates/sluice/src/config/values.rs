//! Value syntaxes shared by the TOML file and the SC4S variables.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A byte count that accepts syslog-ng style suffixes: `4096kb`, `16MiB`, `512M`, `1g`.
/// `k`/`m`/`g` (optionally followed by `b`) are powers of 1000 as in syslog-ng; `ki`/`mi`/`gi`
/// (optionally `b`) are powers of 1024.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, suffix) = t.split_at(split);
        if num.is_empty() {
            return Err("expected a byte count such as 4096kb or 16MiB".into());
        }
        let n: u64 = num.parse().map_err(|_| "number too large".to_string())?;
        let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kb" => 1000,
            "m" | "mb" => 1000 * 1000,
            "g" | "gb" => 1000 * 1000 * 1000,
            "ki" | "kib" => 1 << 10,
            "mi" | "mib" => 1 << 20,
            "gi" | "gib" => 1 << 30,
            other => return Err(format!("unknown size suffix {other:?}")),
        };
        n.checked_mul(mult)
            .map(ByteSize)
            .ok_or_else(|| "size too large".into())
    }
}

/// Written as the plain byte count, which reads back as the same value.
impl Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(ByteSize(n)),
            Raw::Str(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Seconds as a number (`10`, `2.5`).
pub(crate) mod secs {
    use serde::Deserialize;
    use std::time::Duration;
    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(serde::de::Error::custom(
                "expected a non-negative number of seconds",
            ));
        }
        Ok(Duration::from_secs_f64(v))
    }
}

/// Whole milliseconds.
pub(crate) mod millis {
    use serde::Deserialize;
    use std::time::Duration;
    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// SC4S's boolean words. SC4S treats anything unrecognised as false; sluice rejects it,
/// because a typo silently turning a feature off is the kind of surprise operators hate.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "t" | "true" | "y" | "yes" | "on" => Ok(true),
        "0" | "f" | "false" | "n" | "no" | "off" | "" => Ok(false),
        _ => Err("expected yes/no (or true/false, 1/0)".into()),
    }
}

/// SC4S port lists: comma (or space) separated; `disabled` or empty means none.
pub fn parse_ports(s: &str) -> Result<Vec<u16>, String> {
    let t = s.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("disabled") {
        return Ok(Vec::new());
    }
    let mut ports = Vec::new();
    for part in t.split([',', ' ']).filter(|p| !p.is_empty()) {
        let port: u16 = part
            .trim()
            .parse()
            .map_err(|_| format!("{part:?} is not a port number (1-65535)"))?;
        if port == 0 {
            return Err("port 0 is not allowed here".into());
        }
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    Ok(ports)
}

pub(crate) fn any(s: &str) -> Result<String, String> {
    Ok(s.to_owned())
}

pub(crate) fn non_empty(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(t.to_owned())
    }
}

pub(crate) fn positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a positive whole number".into()),
    }
}

pub(crate) fn positive_u64(s: &str) -> Result<u64, String> {
    positive(s).map(|n| n as u64)
}

/// Whole or fractional seconds, at least 0.
pub(crate) fn non_negative_secs(s: &str) -> Result<std::time::Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..1e9).contains(&v) => Ok(std::time::Duration::from_secs_f64(v)),
        _ => Err("expected a number of seconds (0 or more)".into()),
    }
}

/// Whole or fractional seconds, more than 0.
pub(crate) fn positive_secs(s: &str) -> Result<std::time::Duration, String> {
    match non_negative_secs(s)? {
        d if d.is_zero() => Err("must be more than 0 seconds".into()),
        d => Ok(d),
    }
}

pub(crate) fn positive_size(s: &str) -> Result<ByteSize, String> {
    match s.parse::<ByteSize>()? {
        ByteSize(0) => Err("must be at least 1 byte".into()),
        b => Ok(b),
    }
}

/// SC4S uses -1 for "do not set"; sluice maps any value ≤ 0 to "leave the kernel default".
pub(crate) fn parse_rcvbuf(s: &str) -> Result<ByteSize, String> {
    let t = s.trim();
    if let Some(rest) = t.strip_prefix('-') {
        rest.parse::<u64>()
            .map(|_| ByteSize(0))
            .map_err(|_| "expected a byte count, or -1 for the kernel default".to_string())
    } else {
        t.parse()
    }
}

pub(crate) fn parse_port_or_zero(s: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .map_err(|_| "expected a port number 0-65535 (0 disables)".into())
}

pub(crate) fn parse_headers(s: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for h in s.split(',').map(str::trim).filter(|h| !h.is_empty()) {
        match h.split_once(':') {
            Some((name, _)) if !name.trim().is_empty() => out.push(h.to_owned()),
            _ => return Err(format!("header {h:?} is not `Name: value`")),
        }
    }
    Ok(out)
}
