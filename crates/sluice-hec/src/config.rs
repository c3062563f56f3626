//! The HEC client's settings ([`ClientConfig`], built by the daemon from its `[hec]` settings)
//! and SC4S's URL rewrite.

use std::time::Duration;

use crate::HecError;
use crate::deadletter::DeadLetterConfig;
use crate::reject::ResendPolicy;

/// The path every SC4S HEC URL is rewritten to.
pub const EVENT_PATH: &str = "/services/collector/event";

/// Capped exponential backoff between retries of one batch. Each wait is drawn uniformly
/// from `[d/2, d]` where `d = min(max, initial * 2^(n-1))` for the n-th consecutive wait, so
/// workers that failed together do not retry in lockstep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        // SC4S reconnects after time_reopen(10): 10 s is the ceiling, but a short outage
        // should not cost that long.
        Backoff {
            initial: Duration::from_millis(250),
            max: Duration::from_secs(10),
        }
    }
}

impl Backoff {
    /// The wait before retry number `n` (1-based), with jitter.
    pub fn delay(&self, n: u32) -> Duration {
        let shift = n.saturating_sub(1).min(30);
        let base = self
            .initial
            .checked_mul(1u32 << shift)
            .unwrap_or(self.max)
            .min(self.max);
        let nanos = base.as_nanos().min(u128::from(u64::MAX)) as u64;
        if nanos < 2 {
            return base;
        }
        Duration::from_nanos(fastrand::u64(nanos / 2..=nanos))
    }
}

/// One HEC destination (SC4S `SC4S_DEST_SPLUNK_HEC_<ID>_*`).
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Full endpoint URLs (see [`normalize_urls`]); requests go round-robin, a retry goes to
    /// the next one.
    pub urls: Vec<String>,
    /// Sent as `Authorization: Splunk <token>`.
    pub token: String,
    /// `false` accepts any server certificate (SC4S `TLS_VERIFY=no`).
    pub tls_verify: bool,
    /// A complete TLS client configuration (custom CAs, a client certificate for mTLS);
    /// when set it replaces the defaults and `tls_verify`, which it already encodes.
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    /// Parallel requests (and pooled keep-alive connections per host); SC4S default 10.
    pub workers: usize,
    /// How long a request may take from sending it to HEC's status line and headers
    /// (SC4S `_TIMEOUT`, default 30 s). Reading the answer's body has its own
    /// [`body_timeout`](Self::body_timeout): a request whose answer is arriving is not
    /// counted as failed.
    pub timeout: Duration,
    /// TCP (and TLS) connection set-up.
    pub connect_timeout: Duration,
    /// Reading the answer's body once its headers arrived.
    pub body_timeout: Duration,
    /// After a request to a URL timed out, requests to it wait up to `timeout` times this
    /// until one is answered within `timeout` again: a slow indexer is waited for rather
    /// than sent the same events again. 1 turns it off.
    pub slow_timeout_factor: u32,
    /// A piece that timed out is sent again as two halves, at most this many times per
    /// batch (request size backed off under latency). 0 turns it off.
    pub latency_split_depth: u8,
    /// Indexer acknowledgement; `None` = off (SC4S's behaviour).
    pub ack: Option<AckConfig>,
    /// Whether the events before an `invalid-event-number` are sent again.
    pub resend_policy: ResendPolicy,
    /// Where events HEC refused for good are kept; `None` counts and logs them only.
    pub dead_letter: Option<DeadLetterConfig>,
    /// An event refused for its index (400, code 7) is sent once more to this index, the
    /// original kept in `fields.sc4s_original_index` ([`crate::fallback`]); `None` (the
    /// default) dead-letters it.
    pub fallback_index: Option<String>,
    /// gzip request bodies (`Content-Encoding: gzip`).
    pub compression: bool,
    /// Extra headers, sent first (SC4S `_HEADERS`). [`sc4s_app_headers`] gives the two
    /// `__splunk_app_*` headers SC4S adds, for deployments that want Splunk to attribute the
    /// traffic to SC4S; they are not added by default.
    pub headers: Vec<(String, String)>,
    /// Send `Connection: close` (one connection per request) instead of keep-alive.
    pub connection_close: bool,
    pub user_agent: String,
    pub backoff: Backoff,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            urls: Vec::new(),
            token: String::new(),
            tls_verify: true,
            tls: None,
            workers: 10,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            slow_timeout_factor: 4,
            latency_split_depth: 2,
            ack: None,
            resend_policy: ResendPolicy::All,
            dead_letter: None,
            fallback_index: None,
            compression: false,
            headers: Vec::new(),
            connection_close: false,
            user_agent: concat!("sluice/", env!("CARGO_PKG_VERSION")).to_string(),
            backoff: Backoff::default(),
        }
    }
}

/// Indexer acknowledgement settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckConfig {
    /// How often a worker asks for the acks it waits for.
    pub poll_interval: Duration,
    /// A request whose ack is still false after this long is sent again.
    pub timeout: Duration,
    /// Batches one worker may have waiting for acks before it stops taking new ones.
    pub max_pending: usize,
}

impl Default for AckConfig {
    fn default() -> Self {
        AckConfig {
            poll_interval: Duration::from_secs(1),
            // Splunk acknowledges once the events are indexed, normally within seconds; a
            // minute covers an indexer that is busy without resending into it.
            timeout: Duration::from_secs(60),
            max_pending: 64,
        }
    }
}

/// The headers SC4S sends to identify itself to Splunk: `__splunk_app_name: sc4syslog` and
/// `__splunk_app_version: <version>`.
pub fn sc4s_app_headers(version: &str) -> Vec<(String, String)> {
    vec![
        ("__splunk_app_name".to_string(), "sc4syslog".to_string()),
        ("__splunk_app_version".to_string(), version.to_string()),
    ]
}

/// SC4S's rewrite of `SC4S_DEST_SPLUNK_HEC_DEFAULT_URL`: the spec is a list separated by
/// commas and/or whitespace; each `scheme://host[:port]<anything>` becomes
/// `scheme://host[:port]/services/collector/event` (any path, query or fragment is
/// replaced). Only `http` and `https` are accepted; the error names the offending entry.
pub fn normalize_urls(spec: &str) -> Result<Vec<String>, HecError> {
    let mut out = Vec::new();
    for entry in spec
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|e| !e.is_empty())
    {
        out.push(normalize_one(entry)?);
    }
    if out.is_empty() {
        return Err(HecError::NoUrls);
    }
    Ok(out)
}

fn normalize_one(entry: &str) -> Result<String, HecError> {
    let bad = |reason: &str| HecError::InvalidUrl {
        entry: entry.to_string(),
        reason: reason.to_string(),
    };
    let (scheme, rest) = entry
        .split_once("://")
        .ok_or_else(|| bad("expected scheme://host[:port], e.g. https://splunk:8088"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(bad("only http and https are supported"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err(bad("no host"));
    }
    if authority.contains('@') {
        return Err(bad(
            "credentials in the URL are not supported; HEC authenticates with the token",
        ));
    }
    let url = format!("{scheme}://{authority}{EVENT_PATH}");
    check_url(&url).map_err(|reason| bad(&reason))?;
    Ok(url)
}

/// Checks that `url` is an absolute http(s) URL with a host.
pub(crate) fn check_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    if parsed.scheme() != "http" && parsed.scheme() != "https" {
        return Err("only http and https are supported".to_string());
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("no host".to_string());
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_every_entry_to_the_event_endpoint() {
        let urls = normalize_urls(
            "https://idx1:8088, https://idx2:8088/services/collector  http://10.0.0.3:8088/x?y=1,HTTPS://Idx4",
        )
        .unwrap();
        assert_eq!(
            urls,
            vec![
                "https://idx1:8088/services/collector/event",
                "https://idx2:8088/services/collector/event",
                "http://10.0.0.3:8088/services/collector/event",
                "https://Idx4/services/collector/event",
            ]
        );
    }

    #[test]
    fn ipv6_hosts_keep_their_brackets_and_port() {
        let urls = normalize_urls("https://[::1]:8088/services/collector/event").unwrap();
        assert_eq!(urls, vec!["https://[::1]:8088/services/collector/event"]);
    }

    #[test]
    fn errors_name_the_bad_entry() {
        for (spec, bad) in [
            ("https://ok:8088, ftp://idx:21", "ftp://idx:21"),
            ("idx1:8088", "idx1:8088"),
            ("https://ok:8088 https:///path", "https:///path"),
            ("https://idx:notaport", "https://idx:notaport"),
            ("https://user:pw@idx:8088", "https://user:pw@idx:8088"),
        ] {
            match normalize_urls(spec) {
                Err(HecError::InvalidUrl { entry, .. }) => assert_eq!(entry, bad, "spec {spec:?}"),
                other => panic!("spec {spec:?}: expected InvalidUrl, got {other:?}"),
            }
        }
        assert!(matches!(normalize_urls(" , "), Err(HecError::NoUrls)));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let b = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        for _ in 0..50 {
            let d1 = b.delay(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d3 = b.delay(3);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400));
            let d40 = b.delay(40);
            assert!(d40 >= Duration::from_millis(500) && d40 <= Duration::from_secs(1));
        }
    }
}
