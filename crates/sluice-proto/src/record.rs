//! An owned, display-ready copy of a parsed [`Message`], with exactly the fields of the
//! conformance corpus's `expect` object. `sluice parse` prints one per input line (with the
//! `serde` feature); tests compare it to the corpus.
//!
//! Text fields are decoded with `String::from_utf8_lossy` (one U+FFFD per maximal invalid
//! subsequence), SD values are unescaped, and the timestamp is RFC 3339 with six fraction
//! digits in the offset it was written in (`Z` for offset zero). Building one allocates; it is
//! for tools and tests, not the receive path.

use std::borrow::Cow;

use crate::message::Message;
use crate::time::format_rfc3339;

/// One parsed message in the corpus `expect` schema.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ParsedRecord {
    /// `rfc5424`, `rfc3164` or `unparsed`.
    pub format: String,
    pub facility: Option<u8>,
    pub severity: Option<u8>,
    /// RFC 3339, µs precision, e.g. `2003-08-24T05:14:15.000003-07:00`.
    pub timestamp: Option<String>,
    pub year_inferred: bool,
    pub hostname: Option<String>,
    pub appname: Option<String>,
    pub procid: Option<String>,
    pub msgid: Option<String>,
    pub structured_data: Option<Vec<SdElementRecord>>,
    pub message: Option<String>,
}

/// One SD-ELEMENT; `params` are `[name, value]` pairs in wire order (names may repeat).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SdElementRecord {
    pub id: String,
    pub params: Vec<(String, String)>,
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn opt_text(bytes: Option<&[u8]>) -> Option<String> {
    bytes.map(text)
}

impl From<&Message<'_>> for ParsedRecord {
    fn from(m: &Message<'_>) -> Self {
        ParsedRecord {
            format: m.format.as_str().to_string(),
            facility: m.priority.map(|p| p.facility()),
            severity: m.priority.map(|p| p.severity()),
            timestamp: m.timestamp.as_ref().map(format_rfc3339),
            year_inferred: m.year_inferred,
            hostname: opt_text(m.hostname),
            appname: opt_text(m.appname),
            procid: opt_text(m.procid),
            msgid: opt_text(m.msgid),
            structured_data: m.structured_data.map(|sd| {
                sd.elements()
                    .map(|el| SdElementRecord {
                        id: text(el.id()),
                        params: el
                            .params()
                            .map(|p| {
                                let value: Cow<'_, [u8]> = p.value();
                                (text(p.name()), text(&value))
                            })
                            .collect(),
                    })
                    .collect()
            }),
            message: opt_text(m.message),
        }
    }
}

impl From<Message<'_>> for ParsedRecord {
    fn from(m: Message<'_>) -> Self {
        ParsedRecord::from(&m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ParseOptions, parse};
    use crate::time::Zone;

    #[test]
    fn record_from_rfc5424() {
        let zone = Zone::utc();
        let opts = ParseOptions {
            now_unix_secs: 1_781_481_600,
            zone: &zone,
        };
        let m = parse(
            b"<165>1 2003-08-24T05:14:15.000003-07:00 h\xC3\xA9 app - - [a x=\"q\\\"\\n\" x=\"2\"][b] caf\xE9",
            &opts,
        );
        // `h\xC3\xA9` is not PRINTUSASCII: unparsed.
        assert_eq!(ParsedRecord::from(&m).format, "unparsed");
        let m = parse(
            b"<165>1 2003-08-24T05:14:15.000003-07:00 h app - - [a x=\"q\\\"\\n\" x=\"2\"][b] caf\xE9",
            &opts,
        );
        let r = ParsedRecord::from(m);
        assert_eq!(r.format, "rfc5424");
        assert_eq!((r.facility, r.severity), (Some(20), Some(5)));
        assert_eq!(
            r.timestamp.as_deref(),
            Some("2003-08-24T05:14:15.000003-07:00")
        );
        assert_eq!(r.procid, None);
        let sd = r.structured_data.unwrap();
        assert_eq!(sd.len(), 2);
        assert_eq!(
            sd[0].params,
            vec![
                ("x".to_string(), "q\"\\n".to_string()),
                ("x".to_string(), "2".to_string())
            ]
        );
        assert_eq!(sd[1].id, "b");
        assert!(sd[1].params.is_empty());
        assert_eq!(r.message.as_deref(), Some("caf\u{FFFD}"));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn serializes_in_the_corpus_schema() {
        let zone = Zone::utc();
        let opts = ParseOptions {
            now_unix_secs: 1_781_481_600,
            zone: &zone,
        };
        let m = parse(
            b"<13>1 2019-02-13T19:48:34Z h app - - [ex@1 a=\"1\" a=\"2\"] hi",
            &opts,
        );
        let v = serde_json::to_value(ParsedRecord::from(&m)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "format": "rfc5424", "facility": 1, "severity": 5,
                "timestamp": "2019-02-13T19:48:34.000000Z", "year_inferred": false,
                "hostname": "h", "appname": "app", "procid": null, "msgid": null,
                "structured_data": [{"id": "ex@1", "params": [["a", "1"], ["a", "2"]]}],
                "message": "hi"
            })
        );
    }
}
