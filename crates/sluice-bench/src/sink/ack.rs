//! HEC indexer acknowledgement, as Splunk documents it.
//!
//! With `useACK` on a token, every collector request must name a data channel (the
//! `X-Splunk-Request-Channel` header or the `channel` query parameter, a GUID); a request
//! without one is refused with 400 code 10, a malformed one with 400 code 11. A successful
//! answer carries `"ackId":N`, counted per channel from 0. The client later asks
//! `POST /services/collector/ack?channel=…` with `{"acks":[N,…]}` and gets
//! `{"acks":{"N":true|false,…}}`. An ID reads true once its events are indexed, and is
//! forgotten after it was reported true (Splunk clears acknowledged IDs), so asking again
//! reads false. An ID the sink never issued reads false.
//!
//! The sink indexes a request's events when it accepts it, so an ID is true at once, unless
//! a fault "loses" the request: it is answered with an ackId but its events are never
//! indexed, and its ID stays false forever. That is the case indexer acknowledgement
//! exists for: a 200 that did not end in the index.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use super::validate::Reject;
use super::{RejectReason, lock};

/// Channels and the IDs issued on them.
#[derive(Debug, Default)]
pub(crate) struct AckBook {
    channels: Mutex<HashMap<String, Channel>>,
}

#[derive(Debug, Default)]
struct Channel {
    next: u64,
    /// Issued IDs whose events are indexed and not yet reported true.
    indexed: HashSet<u64>,
}

/// The channel a request names, from its header or its query string.
pub(crate) fn channel_of(header: Option<&[u8]>, query: Option<&str>) -> Result<String, Reject> {
    let raw = match header {
        Some(h) => String::from_utf8_lossy(h).into_owned(),
        None => match query.and_then(|q| {
            q.split('&')
                .find_map(|kv| kv.strip_prefix("channel=").map(str::to_owned))
        }) {
            Some(c) => c,
            None => {
                return Err(Reject::new(
                    400,
                    RejectReason::ChannelMissing,
                    "Data channel is missing",
                    10,
                ));
            }
        },
    };
    if !is_guid(raw.trim()) {
        return Err(Reject::new(
            400,
            RejectReason::ChannelInvalid,
            "Invalid data channel",
            11,
        ));
    }
    Ok(raw.trim().to_ascii_lowercase())
}

/// `8-4-4-4-12` hex digits, as Splunk requires of a channel.
fn is_guid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl AckBook {
    /// Issues the next ID on `channel`; `indexed` says whether its events reached the index.
    pub(crate) fn issue(&self, channel: &str, indexed: bool) -> u64 {
        let mut map = lock(&self.channels);
        let ch = map.entry(channel.to_owned()).or_default();
        let id = ch.next;
        ch.next += 1;
        if indexed {
            ch.indexed.insert(id);
        }
        id
    }

    /// Answers an ack query body `{"acks":[…]}`. Returns the JSON answer and how many IDs
    /// read true.
    pub(crate) fn query(&self, channel: &str, body: &[u8]) -> Result<(String, u64), Reject> {
        let invalid = || Reject::new(400, RejectReason::AckQueryInvalid, "Invalid data format", 6);
        let v: serde_json::Value = serde_json::from_slice(body).map_err(|_| invalid())?;
        let ids = v
            .get("acks")
            .and_then(|a| a.as_array())
            .ok_or_else(invalid)?;
        let mut map = lock(&self.channels);
        let mut ch = map.get_mut(channel);
        let mut answer = serde_json::Map::new();
        let mut trues = 0;
        for id in ids {
            let id = id.as_u64().ok_or_else(invalid)?;
            let done = ch.as_mut().is_some_and(|c| c.indexed.remove(&id));
            trues += u64::from(done);
            answer.insert(id.to_string(), serde_json::Value::Bool(done));
        }
        let body = serde_json::json!({ "acks": answer }).to_string();
        Ok((body, trues))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CH: &str = "0f2b8c1e-7d3a-4b5c-9e6f-a1b2c3d4e5f6";

    #[test]
    fn channel_from_header_or_query_and_validated() {
        assert_eq!(channel_of(Some(CH.as_bytes()), None).unwrap(), CH);
        assert_eq!(
            channel_of(None, Some(&format!("x=1&channel={CH}"))).unwrap(),
            CH
        );
        assert_eq!(channel_of(None, None).unwrap_err().code, 10);
        assert_eq!(channel_of(Some(b"not-a-guid"), None).unwrap_err().code, 11);
    }

    #[test]
    fn ids_count_per_channel_and_clear_after_true() {
        let book = AckBook::default();
        assert_eq!(book.issue(CH, true), 0);
        assert_eq!(book.issue(CH, false), 1);
        assert_eq!(book.issue(CH, true), 2);
        let other = "00000000-0000-0000-0000-000000000001";
        assert_eq!(book.issue(other, true), 0);
        let (body, trues) = book.query(CH, br#"{"acks":[0,1,2,7]}"#).unwrap();
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"acks":{"0":true,"1":false,"2":true,"7":false}})
        );
        assert_eq!(trues, 2);
        // Reported true once, then forgotten; the lost one never turns true.
        let (body, trues) = book.query(CH, br#"{"acks":[0,1]}"#).unwrap();
        assert_eq!(trues, 0);
        assert!(body.contains(r#""0":false"#) && body.contains(r#""1":false"#));
        // Unknown channel: all false, not an error.
        let (_, trues) = book
            .query("00000000-0000-0000-0000-00000000000f", br#"{"acks":[0]}"#)
            .unwrap();
        assert_eq!(trues, 0);
    }

    #[test]
    fn malformed_query_is_refused() {
        let book = AckBook::default();
        for bad in [&b"{"[..], br#"{"ack":[1]}"#, br#"{"acks":["x"]}"#, b""] {
            assert_eq!(book.query(CH, bad).unwrap_err().code, 6);
        }
    }
}
