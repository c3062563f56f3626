//! The fallback index: an event HEC refuses for its index (400, code 7 "Incorrect index":
//! the index does not exist, or the token may not write to it) is sent once more with its
//! `index` replaced by a configured one ([`ClientConfig::fallback_index`](crate::ClientConfig::fallback_index)),
//! instead of going to the dead-letter file. The index it asked for is kept in the indexed
//! field [`ORIGINAL_INDEX_FIELD`] so a Splunk admin finds those events
//! (`index=<fallback> sc4s_original_index=*`) and can create the missing index.
//!
//! An event refused in the fallback index too is dead-lettered as before, with its original
//! `index`: the fallback is tried once per event, never again (see
//! [`Isolation`](crate::reject::Isolation)).
//!
//! The rewrite parses the event (HEC JSON, one object) and writes it back: only a refused
//! event pays for it. Key order may change; HEC does not care about it.

use serde_json::{Map, Value};

/// The indexed field that keeps the index an event asked for.
pub const ORIGINAL_INDEX_FIELD: &str = "sc4s_original_index";

/// Why an event cannot go to the fallback index (it is dead-lettered instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoFallback {
    #[error("the event is not a JSON object")]
    NotAnObject,
    #[error("the event is already in the fallback index")]
    AlreadyFallback,
}

/// The index an event asks for: `Some` with its `index` string, `None` without one (or with
/// one that is not a string: HEC then uses the token's default index).
fn index_of(obj: &Map<String, Value>) -> Option<&str> {
    obj.get("index").and_then(Value::as_str)
}

fn parse(event: &[u8]) -> Result<Map<String, Value>, NoFallback> {
    match serde_json::from_slice::<Value>(event) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(NoFallback::NotAnObject),
    }
}

/// Whether `event` can go to `fallback`, and the index it asked for (`None`: no `index`
/// field, the token's default).
pub fn original_index(event: &[u8], fallback: &str) -> Result<Option<String>, NoFallback> {
    let obj = parse(event)?;
    match index_of(&obj) {
        Some(i) if i == fallback => Err(NoFallback::AlreadyFallback),
        i => Ok(i.map(str::to_owned)),
    }
}

/// `event` with its `index` set to `fallback` and the index it asked for in
/// `fields.sc4s_original_index` (a `fields` object is added when the event has none; an
/// event without an `index` gets no such field, there being none to keep). A `fields` that
/// is not an object is left alone.
pub fn rewrite(event: &[u8], fallback: &str) -> Result<Vec<u8>, NoFallback> {
    let mut obj = parse(event)?;
    let original = match index_of(&obj) {
        Some(i) if i == fallback => return Err(NoFallback::AlreadyFallback),
        i => i.map(str::to_owned),
    };
    obj.insert("index".into(), Value::String(fallback.to_owned()));
    // A `fields` that is not an object is left alone: HEC refuses it (code 15) whatever
    // the index.
    if let Some(original) = original
        && let Value::Object(fields) = obj
            .entry("fields")
            .or_insert_with(|| Value::Object(Map::new()))
    {
        fields.insert(ORIGINAL_INDEX_FIELD.into(), Value::String(original));
    }
    serde_json::to_vec(&Value::Object(obj)).map_err(|_| NoFallback::NotAnObject)
}

/// Whether `name` is a Splunk index name: lower-case letters, digits, `_` and `-`, not
/// starting with `-` (Splunk's rule; `_` starts its internal indexes).
pub fn valid_index_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 80
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(b: &[u8]) -> Value {
        serde_json::from_slice(b).unwrap()
    }

    #[test]
    fn the_index_is_replaced_and_the_original_kept_in_fields() {
        let ev = br#"{"time":"1710166925.000","host":"h","sourcetype":"cisco:asa","index":"netfw","event":"x","fields":{"sc4s_vendor":"cisco"}}"#;
        let out = v(&rewrite(ev, "fallback").unwrap());
        assert_eq!(out["index"], "fallback");
        assert_eq!(out["fields"]["sc4s_original_index"], "netfw");
        assert_eq!(out["fields"]["sc4s_vendor"], "cisco");
        assert_eq!(out["time"], "1710166925.000");
        assert_eq!(out["event"], "x");
        assert_eq!(out.as_object().unwrap().len(), 6);
        assert_eq!(
            original_index(ev, "fallback").unwrap().as_deref(),
            Some("netfw")
        );
    }

    #[test]
    fn an_event_without_fields_gets_a_fields_object() {
        let ev = br#"{"index":"netfw","event":"x"}"#;
        let out = v(&rewrite(ev, "fb").unwrap());
        assert_eq!(
            out,
            serde_json::json!({"index":"fb","event":"x","fields":{"sc4s_original_index":"netfw"}})
        );
    }

    #[test]
    fn an_event_without_an_index_gets_the_fallback_and_no_original() {
        let ev = br#"{"event":"x","fields":{"a":"1"}}"#;
        let out = v(&rewrite(ev, "fb").unwrap());
        assert_eq!(
            out,
            serde_json::json!({"index":"fb","event":"x","fields":{"a":"1"}})
        );
        assert_eq!(original_index(ev, "fb").unwrap(), None);
        // Without fields either: none is added for nothing.
        let out = v(&rewrite(br#"{"event":"x"}"#, "fb").unwrap());
        assert_eq!(out, serde_json::json!({"index":"fb","event":"x"}));
    }

    #[test]
    fn escaped_strings_survive_and_look_alike_keys_are_not_touched() {
        // "index" inside the event text and an escaped key that is not "index".
        let ev = br#"{"event":"say \"index\":\"netfw\" \\ \u00e9 \ud83d\ude00 \n","ind\u0065x":"netfw","fields":{"index":"keep","k\"":"v"}}"#;
        let out = v(&rewrite(ev, "fb").unwrap());
        assert_eq!(
            out["event"],
            "say \"index\":\"netfw\" \\ \u{e9} \u{1f600} \n"
        );
        // `ind\u0065x` is `index` once decoded, as HEC reads it.
        assert_eq!(out["index"], "fb");
        assert_eq!(out["fields"]["sc4s_original_index"], "netfw");
        assert_eq!(out["fields"]["index"], "keep");
        assert_eq!(out["fields"]["k\""], "v");
        // An original index with characters to escape is kept exactly.
        let ev = br#"{"index":"we\"ird\\","event":"x"}"#;
        let out = v(&rewrite(ev, "fb").unwrap());
        assert_eq!(out["fields"]["sc4s_original_index"], "we\"ird\\");
    }

    #[test]
    fn an_existing_original_index_field_is_replaced_not_duplicated() {
        let ev = br#"{"index":"b","event":"x","fields":{"sc4s_original_index":"a"}}"#;
        let out = rewrite(ev, "fb").unwrap();
        assert_eq!(v(&out)["fields"]["sc4s_original_index"], "b");
        assert_eq!(
            String::from_utf8(out)
                .unwrap()
                .matches("sc4s_original_index")
                .count(),
            1
        );
    }

    #[test]
    fn what_cannot_fall_back() {
        assert_eq!(rewrite(b"not json", "fb"), Err(NoFallback::NotAnObject));
        assert_eq!(rewrite(br#"["index"]"#, "fb"), Err(NoFallback::NotAnObject));
        assert_eq!(rewrite(b"", "fb"), Err(NoFallback::NotAnObject));
        // Already in the fallback index: sending it there again would loop.
        let ev = br#"{"index":"fb","event":"x"}"#;
        assert_eq!(rewrite(ev, "fb"), Err(NoFallback::AlreadyFallback));
        assert_eq!(original_index(ev, "fb"), Err(NoFallback::AlreadyFallback));
        // A `fields` that is not an object is left as it is.
        let out = v(&rewrite(br#"{"index":"a","event":"x","fields":"s"}"#, "fb").unwrap());
        assert_eq!(out["fields"], "s");
        assert_eq!(out["index"], "fb");
    }

    #[test]
    fn index_names_follow_splunk() {
        for ok in ["main", "sc4s_fallback", "net-fw2", "_internal"] {
            assert!(valid_index_name(ok), "{ok}");
        }
        for bad in ["", "Main", "a b", "-x", "a\"b", "idx,main", &"x".repeat(81)] {
            assert!(!valid_index_name(bad), "{bad}");
        }
    }
}
