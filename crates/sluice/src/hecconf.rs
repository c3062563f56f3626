//! Maps the daemon's configuration onto the HEC client's.

use sluice_hec::{HecConfig, normalize_urls};

use crate::config::{Config, ConfigError};

/// The HEC client settings; URL and header errors name the setting.
pub fn hec_config(config: &Config) -> Result<HecConfig, ConfigError> {
    let urls = normalize_urls(&config.hec.urls.join(",")).map_err(|e| {
        ConfigError::Invalid(format!("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL / hec.urls: {e}"))
    })?;
    let mut headers = Vec::with_capacity(config.hec.headers.len());
    for h in &config.hec.headers {
        let Some((name, value)) = h.split_once(':') else {
            return Err(ConfigError::Invalid(format!(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_HEADERS / hec.headers: {h:?} is not `Name: value`"
            )));
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let tls = crate::tls::hec_client_config(&crate::tls::HecTls {
        verify: config.hec.tls_verify,
        mount: config.hec.tls_mount.clone(),
        ca_file: config.hec.tls_ca_file.clone(),
    })
    .map_err(|e| {
        ConfigError::Invalid(format!(
            "HEC TLS (SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT / hec.tls_mount / hec.tls_ca_file): {e}"
        ))
    })?;
    Ok(HecConfig {
        urls,
        tls,
        token: config.hec.token.clone(),
        tls_verify: config.hec.tls_verify,
        workers: config.hec.workers,
        timeout: config.hec.timeout,
        compression: config.hec.compression,
        headers,
        connection_close: config.hec.connection_close,
        ..HecConfig::default()
    })
}
