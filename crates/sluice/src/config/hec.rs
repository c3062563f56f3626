//! The `[hec]` settings (SC4S's `SC4S_DEST_SPLUNK_HEC_DEFAULT_*`) turned into the HEC
//! client's own settings, [`sluice_hec::ClientConfig`]. The names: `config::HecConfig` is what
//! the operator sets, `sluice_hec::ClientConfig` what the client runs with, and
//! `sluice_proto::event` encodes the events both carry.

use std::path::PathBuf;
use std::time::Duration;

use sluice_hec::{AckConfig, ClientConfig, DeadLetterConfig, ResendPolicy, normalize_urls};

use super::sc4s::{get, set};
use super::values::{
    any, non_empty, parse_bool, parse_headers, positive, positive_size, positive_u64,
};
use super::{ByteSize, Config, ConfigError, EnvReport, HecConfig};
use crate::env::Env;

/// Where the dead-letter file goes when no directory is configured: SC4S keeps its state in
/// `SC4S_VAR`.
pub(super) fn default_dead_letter_dir(sc4s_var: Option<&str>) -> PathBuf {
    match sc4s_var {
        Some(var) => PathBuf::from(var).join("dead-letter"),
        None => PathBuf::from("./dead-letter"),
    }
}

impl Config {
    /// The `SLUICE_HEC_*` delivery settings and `SC4S_VAR`.
    pub(super) fn apply_hec_env(
        &mut self,
        env: &Env,
        _report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        let h = &mut self.hec;
        set(
            env,
            "SLUICE_HEC_INDEXER_ACK",
            parse_bool,
            &mut h.indexer_ack,
        )?;
        if let Some(ms) = get(env, "SLUICE_HEC_ACK_POLL_INTERVAL", positive_u64)? {
            h.ack_poll_interval = Duration::from_millis(ms);
        }
        if let Some(s) = get(env, "SLUICE_HEC_ACK_TIMEOUT", positive_u64)? {
            h.ack_timeout = Duration::from_secs(s);
        }
        if let Some(s) = get(env, "SLUICE_HEC_CONNECT_TIMEOUT", positive_u64)? {
            h.connect_timeout = Duration::from_secs(s);
        }
        if let Some(s) = get(env, "SLUICE_HEC_BODY_TIMEOUT", positive_u64)? {
            h.body_timeout = Duration::from_secs(s);
        }
        if let Some(f) = get(env, "SLUICE_HEC_SLOW_TIMEOUT_FACTOR", |v| {
            positive_u64(v).and_then(|n| {
                u32::try_from(n)
                    .ok()
                    .filter(|n| *n <= 100)
                    .ok_or_else(|| "expected 1 to 100".to_string())
            })
        })? {
            h.slow_timeout_factor = f;
        }
        set(
            env,
            "SLUICE_HEC_RESEND_BEFORE_INVALID",
            parse_bool,
            &mut h.resend_before_invalid,
        )?;
        if let Some(d) = get(env, "SLUICE_HEC_DEAD_LETTER_DIR", non_empty)? {
            h.dead_letter_dir = Some(PathBuf::from(d));
        } else if let Some(var) = get(env, "SC4S_VAR", any)?
            && h.dead_letter_dir.is_none()
            && !var.trim().is_empty()
        {
            h.dead_letter_dir = Some(default_dead_letter_dir(Some(var.trim())));
        }
        if let Some(v) = get(env, "SC4S_DEST_SPLUNK_SC4S_METRICS_HEC", |v| {
            crate::telemetry::sc4s::MetricsForm::from_sc4s(Some(v)).map(|_| v.trim().to_owned())
        })? {
            h.sc4s_metrics = if v.is_empty() { "multi2".into() } else { v };
        }
        if let Some(s) = get(env, "SLUICE_HEC_METRICS_INTERVAL", positive_u64)? {
            h.sc4s_metrics_interval = Duration::from_secs(s);
        }
        if let Some(v) = get(env, "SLUICE_HEC_DEAD_LETTER_MAX_BYTES", |v| {
            if v.trim() == "0" {
                Ok(ByteSize(0))
            } else {
                positive_size(v)
            }
        })? {
            h.dead_letter_max_bytes = v;
        }
        Ok(())
    }
}

/// The suffixes of the per-destination SC4S variables `SC4S_DEST_SPLUNK_HEC_<ID>_<SUFFIX>`
/// sluice reads (for every `<ID>`, `DEFAULT` included).
pub const HEC_DEST_SUFFIXES: &[&str] = &[
    "URL",
    "TOKEN",
    "TLS_VERIFY",
    "TLS_MOUNT",
    "WORKERS",
    "BATCH_LINES",
    "BATCH_BYTES",
    "BATCH_TIMEOUT",
    "TIMEOUT",
    "HTTP_COMPRESSION",
    "CONNECTION_CLOSE",
    "HEADERS",
    "MODE",
    "DISKBUFF_ENABLE",
    "DISKBUFF_RELIABLE",
    "DISKBUFF_MEMBUFSIZE",
    "DISKBUFF_DISKBUFSIZE",
    "DISKBUFF_DIR",
    "FALLBACK_INDEX",
];

impl HecConfig {
    /// Overlays one destination's SC4S variables, `SC4S_DEST_SPLUNK_HEC_<id>_*` (`id` as
    /// written in the variable: `DEFAULT`, `OTHER`). The same code for every destination.
    pub(super) fn apply_sc4s_env(&mut self, env: &Env, id: &str) -> Result<(), ConfigError> {
        let var = |suffix: &str| format!("SC4S_DEST_SPLUNK_HEC_{id}_{suffix}");
        if let Some(urls) = get(env, &var("URL"), non_empty)? {
            self.urls = urls
                .split([',', ' '])
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().to_owned())
                .collect();
        }
        set(env, &var("TOKEN"), any, &mut self.token)?;
        set(env, &var("TLS_VERIFY"), parse_bool, &mut self.tls_verify)?;
        if let Some(d) = get(env, &var("TLS_MOUNT"), non_empty)? {
            self.tls_mount = Some(PathBuf::from(d));
        }
        set(env, &var("WORKERS"), positive, &mut self.workers)?;
        set(env, &var("BATCH_LINES"), positive, &mut self.batch_lines)?;
        set(
            env,
            &var("BATCH_BYTES"),
            positive_size,
            &mut self.batch_bytes,
        )?;
        if let Some(ms) = get(env, &var("BATCH_TIMEOUT"), positive_u64)? {
            self.batch_timeout = Duration::from_millis(ms);
        }
        if let Some(s) = get(env, &var("TIMEOUT"), positive_u64)? {
            self.timeout = Duration::from_secs(s);
        }
        set(
            env,
            &var("HTTP_COMPRESSION"),
            parse_bool,
            &mut self.compression,
        )?;
        set(
            env,
            &var("CONNECTION_CLOSE"),
            parse_bool,
            &mut self.connection_close,
        )?;
        if let Some(h) = get(env, &var("HEADERS"), parse_headers)? {
            self.headers = h;
        }
        if let Some(i) = get(env, &var("FALLBACK_INDEX"), any)? {
            // Empty turns a fallback set in the TOML off.
            self.fallback_index = Some(i.trim().to_owned()).filter(|i| !i.is_empty());
        }
        Ok(())
    }

    /// The form of sluice's own metrics to Splunk.
    pub fn metrics_form(&self) -> Result<crate::telemetry::sc4s::MetricsForm, ConfigError> {
        crate::telemetry::sc4s::MetricsForm::from_sc4s(Some(&self.sc4s_metrics)).map_err(|e| {
            ConfigError::Invalid(format!(
                "SC4S_DEST_SPLUNK_SC4S_METRICS_HEC / hec.sc4s_metrics {:?}: {e}",
                self.sc4s_metrics
            ))
        })
    }

    /// The client settings of the default destination; URL and header errors name the
    /// setting.
    pub fn client_config(&self) -> Result<ClientConfig, ConfigError> {
        self.client_config_for("DEFAULT", "hec")
    }

    /// The client settings of destination `id` (`DEFAULT`, `OTHER`), whose TOML table is
    /// `table` (`hec`, `destinations.other.hec`); errors name both.
    pub fn client_config_for(&self, id: &str, table: &str) -> Result<ClientConfig, ConfigError> {
        let urls = normalize_urls(&self.urls.join(",")).map_err(|e| {
            ConfigError::Invalid(format!("SC4S_DEST_SPLUNK_HEC_{id}_URL / {table}.urls: {e}"))
        })?;
        let mut headers = Vec::with_capacity(self.headers.len());
        for h in &self.headers {
            let Some((name, value)) = h.split_once(':') else {
                return Err(ConfigError::Invalid(format!(
                    "SC4S_DEST_SPLUNK_HEC_{id}_HEADERS / {table}.headers: {h:?} is not `Name: value`"
                )));
            };
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        self.metrics_form()?;
        let tls = crate::tls::hec_client_config(&crate::tls::HecTls {
            verify: self.tls_verify,
            mount: self.tls_mount.clone(),
            ca_file: self.tls_ca_file.clone(),
        })
        .map_err(|e| {
            ConfigError::Invalid(format!(
                "HEC TLS (SC4S_DEST_SPLUNK_HEC_{id}_TLS_MOUNT / {table}.tls_mount / {table}.tls_ca_file): {e}"
            ))
        })?;
        if let Some(fb) = &self.fallback_index
            && !sluice_hec::fallback::valid_index_name(fb)
        {
            return Err(ConfigError::Invalid(format!(
                "SC4S_DEST_SPLUNK_HEC_{id}_FALLBACK_INDEX / {table}.fallback_index: {fb:?} is \
                 not a Splunk index name (lower-case letters, digits, _ and -)"
            )));
        }
        Ok(ClientConfig {
            urls,
            tls,
            fallback_index: self.fallback_index.clone(),
            token: self.token.clone(),
            tls_verify: self.tls_verify,
            workers: self.workers,
            timeout: self.timeout,
            compression: self.compression,
            headers,
            connection_close: self.connection_close,
            connect_timeout: self.connect_timeout,
            body_timeout: self.body_timeout,
            slow_timeout_factor: self.slow_timeout_factor.max(1),
            ack: self.indexer_ack.then_some(AckConfig {
                poll_interval: self.ack_poll_interval,
                timeout: self.ack_timeout,
                ..AckConfig::default()
            }),
            resend_policy: if self.resend_before_invalid {
                ResendPolicy::All
            } else {
                ResendPolicy::AfterInvalid
            },
            dead_letter: Some(DeadLetterConfig {
                dir: self
                    .dead_letter_dir
                    .clone()
                    .unwrap_or_else(|| default_dead_letter_dir(None)),
                max_bytes: self.dead_letter_max_bytes.0,
            }),
            ..ClientConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_map_onto_the_client_and_errors_name_the_setting() {
        let hec = HecConfig {
            urls: vec!["https://idx1:8088".into(), "https://idx2:8088/x".into()],
            token: "t".into(),
            headers: vec!["X-A: 1".into()],
            workers: 3,
            ..HecConfig::default()
        };
        let c = hec.client_config().unwrap();
        assert_eq!(
            c.urls,
            [
                "https://idx1:8088/services/collector/event",
                "https://idx2:8088/services/collector/event"
            ]
        );
        assert_eq!(c.headers, [("X-A".to_owned(), "1".to_owned())]);
        assert_eq!((c.token.as_str(), c.workers), ("t", 3));

        let bad = HecConfig {
            urls: vec!["https://idx1:8088".into()],
            headers: vec!["no colon".into()],
            ..HecConfig::default()
        };
        let e = bad.client_config().unwrap_err().to_string();
        assert!(e.contains("SC4S_DEST_SPLUNK_HEC_DEFAULT_HEADERS"), "{e}");
        let bad = HecConfig {
            urls: vec!["ftp://idx1".into()],
            ..HecConfig::default()
        };
        let e = bad.client_config().unwrap_err().to_string();
        assert!(e.contains("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL"), "{e}");
    }

    fn env(vars: &[(&str, &str)]) -> Env {
        let mut e = Env::default();
        e.merge_process(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        e
    }

    #[test]
    fn delivery_settings_come_from_the_environment() {
        let mut c = Config::default();
        c.hec.urls = vec!["https://idx:8088".into()];
        let mut report = EnvReport::default();
        c.apply_hec_env(
            &env(&[
                ("SLUICE_HEC_INDEXER_ACK", "yes"),
                ("SLUICE_HEC_ACK_POLL_INTERVAL", "250"),
                ("SLUICE_HEC_ACK_TIMEOUT", "90"),
                ("SLUICE_HEC_CONNECT_TIMEOUT", "3"),
                ("SLUICE_HEC_BODY_TIMEOUT", "7"),
                ("SLUICE_HEC_SLOW_TIMEOUT_FACTOR", "2"),
                ("SLUICE_HEC_RESEND_BEFORE_INVALID", "no"),
                ("SC4S_VAR", "/var/lib/sc4s"),
                ("SLUICE_HEC_DEAD_LETTER_MAX_BYTES", "10mb"),
            ]),
            &mut report,
        )
        .unwrap();
        let cc = c.hec.client_config().unwrap();
        let ack = cc.ack.unwrap();
        assert_eq!(ack.poll_interval, Duration::from_millis(250));
        assert_eq!(ack.timeout, Duration::from_secs(90));
        assert_eq!(cc.connect_timeout, Duration::from_secs(3));
        assert_eq!(cc.body_timeout, Duration::from_secs(7));
        assert_eq!(cc.slow_timeout_factor, 2);
        assert_eq!(cc.resend_policy, ResendPolicy::AfterInvalid);
        let dl = cc.dead_letter.unwrap();
        assert_eq!(dl.dir, PathBuf::from("/var/lib/sc4s/dead-letter"));
        assert!(dl.max_bytes >= 10_000_000);

        // An explicit directory wins over SC4S_VAR; defaults are off / at least once.
        let mut c = Config::default();
        c.hec.urls = vec!["https://idx:8088".into()];
        c.apply_hec_env(
            &env(&[
                ("SC4S_VAR", "/var/lib/sc4s"),
                ("SLUICE_HEC_DEAD_LETTER_DIR", "/srv/dl"),
            ]),
            &mut report,
        )
        .unwrap();
        let cc = c.hec.client_config().unwrap();
        assert!(cc.ack.is_none());
        assert_eq!(cc.resend_policy, ResendPolicy::All);
        assert_eq!(cc.dead_letter.unwrap().dir, PathBuf::from("/srv/dl"));
    }

    #[test]
    fn the_fallback_index_is_per_destination_and_checked() {
        let mut h = HecConfig {
            urls: vec!["https://idx:8088".into()],
            ..HecConfig::default()
        };
        assert_eq!(
            h.client_config().unwrap().fallback_index,
            None,
            "off by default"
        );
        h.apply_sc4s_env(
            &env(&[
                (
                    "SC4S_DEST_SPLUNK_HEC_DEFAULT_FALLBACK_INDEX",
                    " sc4s_fallback ",
                ),
                ("SC4S_DEST_SPLUNK_HEC_OTHER_FALLBACK_INDEX", "other"),
            ]),
            "DEFAULT",
        )
        .unwrap();
        assert_eq!(
            h.client_config().unwrap().fallback_index.as_deref(),
            Some("sc4s_fallback")
        );
        // Empty turns it off again.
        h.apply_sc4s_env(
            &env(&[("SC4S_DEST_SPLUNK_HEC_DEFAULT_FALLBACK_INDEX", "")]),
            "DEFAULT",
        )
        .unwrap();
        assert_eq!(h.fallback_index, None);
        h.fallback_index = Some("Not An Index".into());
        let e = h
            .client_config_for("OTHER", "destinations.other.hec")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("SC4S_DEST_SPLUNK_HEC_OTHER_FALLBACK_INDEX")
                && e.contains("destinations.other.hec.fallback_index"),
            "{e}"
        );
    }

    #[test]
    fn bad_delivery_values_name_the_variable() {
        for (var, value) in [
            ("SLUICE_HEC_INDEXER_ACK", "maybe"),
            ("SLUICE_HEC_ACK_TIMEOUT", "0"),
            ("SLUICE_HEC_SLOW_TIMEOUT_FACTOR", "1000"),
            ("SLUICE_HEC_DEAD_LETTER_MAX_BYTES", "lots"),
            ("SC4S_DEST_SPLUNK_SC4S_METRICS_HEC", "sometimes"),
        ] {
            let mut c = Config::default();
            let e = c
                .apply_hec_env(&env(&[(var, value)]), &mut EnvReport::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains(var), "{e}");
        }
    }
}
