//! A label value that comes from the configuration (a listener id).
//!
//! prometheus-client writes label values as they are; an id is an SC4S-style name
//! (`DEFAULT`, `CISCO_ASA`) in practice, but nothing stops an operator from putting a quote in
//! one, and one quote would make the whole exposition unparsable. This type escapes as the
//! text format requires.

use std::fmt::Write;
use std::sync::Arc;

use prometheus_client::encoding::{EncodeLabelValue, LabelValueEncoder};

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub struct Label(Arc<str>);

impl Label {
    pub fn new(s: &str) -> Label {
        Label(s.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Label {
    fn from(s: &str) -> Label {
        Label::new(s)
    }
}

impl EncodeLabelValue for Label {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        LabelStr(&self.0).encode(encoder)
    }
}

/// A borrowed label value, escaped the same way (for values rendered at scrape time).
#[derive(Clone, Copy, Debug)]
pub struct LabelStr<'a>(pub &'a str);

impl EncodeLabelValue for LabelStr<'_> {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        for c in self.0.chars() {
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                c => encoder.write_char(c)?,
            }
        }
        Ok(())
    }
}
