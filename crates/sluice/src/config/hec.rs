//! The `[hec]` settings (SC4S's `SC4S_DEST_SPLUNK_HEC_DEFAULT_*`) turned into the HEC
//! client's own settings, [`sluice_hec::ClientConfig`]. The names: `config::HecConfig` is what
//! the operator sets, `sluice_hec::ClientConfig` what the client runs with, and
//! `sluice_proto::event` encodes the events both carry.

use sluice_hec::{ClientConfig, normalize_urls};

use super::{ConfigError, HecConfig};

impl HecConfig {
    /// The client settings; URL and header errors name the setting.
    pub fn client_config(&self) -> Result<ClientConfig, ConfigError> {
        let urls = normalize_urls(&self.urls.join(",")).map_err(|e| {
            ConfigError::Invalid(format!("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL / hec.urls: {e}"))
        })?;
        let mut headers = Vec::with_capacity(self.headers.len());
        for h in &self.headers {
            let Some((name, value)) = h.split_once(':') else {
                return Err(ConfigError::Invalid(format!(
                    "SC4S_DEST_SPLUNK_HEC_DEFAULT_HEADERS / hec.headers: {h:?} is not `Name: value`"
                )));
            };
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        let tls = crate::tls::hec_client_config(&crate::tls::HecTls {
            verify: self.tls_verify,
            mount: self.tls_mount.clone(),
            ca_file: self.tls_ca_file.clone(),
        })
        .map_err(|e| {
            ConfigError::Invalid(format!(
                "HEC TLS (SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT / hec.tls_mount / hec.tls_ca_file): {e}"
            ))
        })?;
        Ok(ClientConfig {
            urls,
            tls,
            token: self.token.clone(),
            tls_verify: self.tls_verify,
            workers: self.workers,
            timeout: self.timeout,
            compression: self.compression,
            headers,
            connection_close: self.connection_close,
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
}
