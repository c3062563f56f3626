//! Kafka destinations: sluice's own `SLUICE_DEST_KAFKA_<ID>_*` variables and `[kafka.<id>]`
//! tables (SC4S has no Kafka destination).
//!
//! Every `SLUICE_DEST_KAFKA_<ID>_BROKERS` makes a destination. Defaults: topic `sc4s`,
//! key the sender's address, the HEC event JSON as the value, `acks=all` with the idempotent
//! producer, lz4 compression, GLOBAL mode, a disk buffer as the HEC destinations have one.
//! Templates are checked at startup: a field that does not exist is an error naming the
//! variable.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sluice_proto::kafka::{RecordTemplate, RecordValue, Template};

use super::sc4s::{get, set};
use super::values::{ByteSize, millis, non_empty, parse_bool, positive_size};
use super::{BufferSettings, ConfigError, DestMode, EnvReport};
use crate::env::Env;

/// `acks`: what the leader waits for before it confirms a record.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Acks {
    /// Every in-sync replica has it (required by the idempotent producer).
    #[default]
    All,
    /// The leader has it.
    #[serde(rename = "1")]
    Leader,
    /// Nobody confirms.
    #[serde(rename = "0")]
    None,
}

impl Acks {
    fn parse(s: &str) -> Result<Acks, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" | "-1" => Ok(Acks::All),
            "1" => Ok(Acks::Leader),
            "0" => Ok(Acks::None),
            _ => Err("expected all, 1 or 0".into()),
        }
    }

    pub fn librdkafka(self) -> &'static str {
        match self {
            Acks::All => "all",
            Acks::Leader => "1",
            Acks::None => "0",
        }
    }
}

/// One Kafka destination.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct KafkaDestination {
    /// `_BROKERS`: bootstrap servers, `host:port` separated by commas.
    pub brokers: String,
    /// `_TOPIC`: the topic template (`sc4s-${sourcetype}`; fields: index, sourcetype,
    /// source, vendor, product, vendor_product, class, host, source_ip).
    pub topic: String,
    /// `_TOPIC_FALLBACK`: the topic of an event whose topic template names an empty field.
    pub topic_fallback: String,
    /// `_KEY`: the key template; empty: no key.
    pub key: String,
    /// `_VALUE`: `hec` (the HEC event JSON) or `raw` (the message as received).
    pub value: String,
    /// `_ACKS`: all (default), 1 or 0. The idempotent producer needs `all`.
    pub acks: Acks,
    /// `_IDEMPOTENCE`: librdkafka's idempotent producer (default yes; needs `acks=all`).
    pub idempotence: bool,
    /// `_COMPRESSION`: none, gzip, snappy, lz4 (default) or zstd.
    pub compression: String,
    /// `_MODE`: GLOBAL or SELECT.
    pub mode: DestMode,
    /// `_LINGER_MS`: how long librdkafka waits to fill a request (milliseconds).
    #[serde(with = "millis")]
    pub linger: Duration,
    /// `_TIMEOUT`: a record not confirmed by then fails (`message.timeout.ms`); the batch is
    /// then retried or handed to the disk buffer (milliseconds).
    #[serde(with = "millis")]
    pub timeout: Duration,
    /// `_MAX_MESSAGE_BYTES`: the largest record librdkafka sends (`message.max.bytes`).
    pub max_message_bytes: ByteSize,
    /// `_SECURITY_PROTOCOL`: plaintext (default), ssl, sasl_plaintext or sasl_ssl.
    pub security_protocol: String,
    /// `_TLS_CA_FILE`, `_TLS_CERT_FILE`, `_TLS_KEY_FILE`: PEM files.
    pub tls_ca_file: Option<PathBuf>,
    pub tls_cert_file: Option<PathBuf>,
    pub tls_key_file: Option<PathBuf>,
    /// `_TLS_VERIFY`: check the brokers' certificates (default yes).
    pub tls_verify: bool,
    /// `_SASL_MECHANISM`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
    pub sasl_mechanism: Option<String>,
    pub sasl_username: Option<String>,
    pub sasl_password: Option<String>,
    /// `_OPTIONS`: more librdkafka producer properties, `name=value` separated by commas.
    pub options: Vec<String>,
    /// `_DEAD_LETTER_DIR`: records the brokers refuse for good (`kafka_rejected.jsonl`).
    /// Unset: `$SC4S_VAR/dead-letter/<destination>`.
    pub dead_letter_dir: Option<PathBuf>,
    /// `_DISKBUFF_*`: its disk buffer, in its own directory.
    pub buffer: BufferSettings,
}

impl Default for KafkaDestination {
    fn default() -> Self {
        KafkaDestination {
            brokers: String::new(),
            topic: "sc4s".into(),
            topic_fallback: "sc4s".into(),
            key: "${source_ip}".into(),
            value: "hec".into(),
            acks: Acks::All,
            idempotence: true,
            compression: "lz4".into(),
            mode: DestMode::Global,
            linger: Duration::from_millis(50),
            timeout: Duration::from_secs(30),
            max_message_bytes: ByteSize(1_000_000),
            security_protocol: "plaintext".into(),
            tls_ca_file: None,
            tls_cert_file: None,
            tls_key_file: None,
            tls_verify: true,
            sasl_mechanism: None,
            sasl_username: None,
            sasl_password: None,
            options: Vec::new(),
            dead_letter_dir: None,
            buffer: BufferSettings::default(),
        }
    }
}

impl KafkaDestination {
    pub fn var_prefix(id: &str) -> String {
        format!("SLUICE_DEST_KAFKA_{id}_")
    }

    fn apply_env(
        &mut self,
        env: &Env,
        id: &str,
        report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        let p = KafkaDestination::var_prefix(id);
        let var = |s: &str| format!("{p}{s}");
        let text = |s: &str| Ok::<_, String>(s.trim().to_owned());
        set(env, &var("BROKERS"), text, &mut self.brokers)?;
        set(env, &var("TOPIC"), text, &mut self.topic)?;
        set(env, &var("TOPIC_FALLBACK"), text, &mut self.topic_fallback)?;
        set(env, &var("KEY"), text, &mut self.key)?;
        set(env, &var("VALUE"), text, &mut self.value)?;
        set(env, &var("ACKS"), Acks::parse, &mut self.acks)?;
        set(env, &var("IDEMPOTENCE"), parse_bool, &mut self.idempotence)?;
        set(env, &var("COMPRESSION"), text, &mut self.compression)?;
        set(env, &var("MODE"), DestMode::parse, &mut self.mode)?;
        if let Some(ms) = get(env, &var("LINGER_MS"), |s| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| "expected milliseconds".to_string())
        })? {
            self.linger = Duration::from_millis(ms);
        }
        if let Some(ms) = get(env, &var("TIMEOUT"), |s| {
            s.trim()
                .parse::<u64>()
                .ok()
                .filter(|m| *m > 0)
                .ok_or_else(|| "expected milliseconds above 0".to_string())
        })? {
            self.timeout = Duration::from_millis(ms);
        }
        set(
            env,
            &var("MAX_MESSAGE_BYTES"),
            positive_size,
            &mut self.max_message_bytes,
        )?;
        set(
            env,
            &var("SECURITY_PROTOCOL"),
            text,
            &mut self.security_protocol,
        )?;
        for (name, field) in [
            ("TLS_CA_FILE", &mut self.tls_ca_file),
            ("TLS_CERT_FILE", &mut self.tls_cert_file),
            ("TLS_KEY_FILE", &mut self.tls_key_file),
            ("DEAD_LETTER_DIR", &mut self.dead_letter_dir),
        ] {
            if let Some(v) = get(env, &var(name), non_empty)? {
                *field = Some(PathBuf::from(v));
            }
        }
        set(env, &var("TLS_VERIFY"), parse_bool, &mut self.tls_verify)?;
        for (name, field) in [
            ("SASL_MECHANISM", &mut self.sasl_mechanism),
            ("SASL_USERNAME", &mut self.sasl_username),
            ("SASL_PASSWORD", &mut self.sasl_password),
        ] {
            if let Some(v) = get(env, &var(name), non_empty)? {
                *field = Some(v);
            }
        }
        if let Some(o) = get(env, &var("OPTIONS"), non_empty)? {
            self.options = o
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
        }
        // Its disk buffer: SC4S-style `_DISKBUFF_*` under its own prefix.
        self.buffer.apply_env_prefixed(env, &p, 1, report)?;
        Ok(())
    }

    /// The record template; errors name the setting.
    pub fn record_template(&self, id: &str) -> Result<RecordTemplate, ConfigError> {
        let p = KafkaDestination::var_prefix(id);
        let bad =
            |what: &str, v: &str, e: String| ConfigError::Invalid(format!("{p}{what}={v:?}: {e}"));
        let topic =
            Template::parse(&self.topic).map_err(|e| bad("TOPIC", &self.topic, e.to_string()))?;
        if self.topic.trim().is_empty() {
            return Err(bad("TOPIC", &self.topic, "empty".into()));
        }
        let key = Template::parse(&self.key).map_err(|e| bad("KEY", &self.key, e.to_string()))?;
        let fb = self.topic_fallback.trim();
        if fb.is_empty()
            || fb.len() > sluice_proto::kafka::MAX_TOPIC
            || !fb
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            return Err(bad(
                "TOPIC_FALLBACK",
                fb,
                "a Kafka topic name: 1 to 249 of A-Z a-z 0-9 . _ -".into(),
            ));
        }
        let value = match self.value.trim().to_ascii_lowercase().as_str() {
            "hec" | "" => RecordValue::Hec,
            "raw" => RecordValue::Raw,
            _ => return Err(bad("VALUE", &self.value, "expected hec or raw".into())),
        };
        Ok(RecordTemplate {
            topic,
            fallback_topic: fb.to_owned(),
            key,
            value,
        })
    }

    /// Startup checks; errors name the setting.
    pub fn validate(&self, name: &str, id: &str) -> Result<(), ConfigError> {
        let p = KafkaDestination::var_prefix(id);
        if self.brokers.trim().is_empty() {
            return Err(ConfigError::Invalid(format!(
                "destination {name}: {p}BROKERS / kafka.{}.brokers is empty",
                id.to_ascii_lowercase()
            )));
        }
        self.record_template(id)?;
        if self.idempotence && self.acks != Acks::All {
            return Err(ConfigError::Invalid(format!(
                "destination {name}: the idempotent producer needs {p}ACKS=all; set \
                 {p}IDEMPOTENCE=no to use acks={}",
                self.acks.librdkafka()
            )));
        }
        match self.compression.trim().to_ascii_lowercase().as_str() {
            "none" | "gzip" | "snappy" | "lz4" | "zstd" => {}
            other => {
                return Err(ConfigError::Invalid(format!(
                    "destination {name}: {p}COMPRESSION={other:?}: expected none, gzip, snappy, \
                     lz4 or zstd"
                )));
            }
        }
        match self.security_protocol.trim().to_ascii_lowercase().as_str() {
            "plaintext" | "ssl" | "sasl_plaintext" | "sasl_ssl" => {}
            other => {
                return Err(ConfigError::Invalid(format!(
                    "destination {name}: {p}SECURITY_PROTOCOL={other:?}: expected plaintext, \
                     ssl, sasl_plaintext or sasl_ssl"
                )));
            }
        }
        for o in &self.options {
            if !o.contains('=') {
                return Err(ConfigError::Invalid(format!(
                    "destination {name}: {p}OPTIONS: {o:?} is not name=value"
                )));
            }
        }
        self.buffer
            .validate()
            .map_err(|e| ConfigError::Invalid(format!("destination {name}: {e}")))
    }
}

/// The key of a Kafka destination in `[kafka]` and its name: `kafka_<id>`.
pub fn kafka_key(id: &str) -> String {
    format!("kafka_{}", id.to_ascii_lowercase())
}

impl super::Config {
    /// Every `SLUICE_DEST_KAFKA_<ID>_BROKERS`, and the `[kafka]` tables.
    pub(super) fn apply_kafka_env(
        &mut self,
        env: &Env,
        report: &mut EnvReport,
    ) -> Result<(), ConfigError> {
        let mut ids: Vec<String> = self.kafka.keys().map(|k| k.to_ascii_uppercase()).collect();
        for (name, _) in env.with_prefix("SLUICE_DEST_KAFKA_") {
            if let Some(id) = name
                .strip_prefix("SLUICE_DEST_KAFKA_")
                .and_then(|r| r.strip_suffix("_BROKERS"))
                .filter(|id| !id.is_empty())
                && !ids.iter().any(|i| i == id)
            {
                ids.push(id.to_owned());
            }
        }
        // Variables of a destination without _BROKERS are still read (and so reported if
        // they belong to none).
        for id in ids {
            let key = id.to_ascii_lowercase();
            let mut d = self.kafka.remove(&key).unwrap_or_else(|| KafkaDestination {
                buffer: BufferSettings {
                    dir: self.buffer.dir.clone(),
                    ..BufferSettings::default()
                },
                ..KafkaDestination::default()
            });
            d.apply_env(env, &id, report)?;
            if env
                .get(&format!("SLUICE_DEST_KAFKA_{id}_DISKBUFF_DIR"))
                .is_none()
                && (d.buffer.dir == self.buffer.dir
                    || d.buffer.dir == std::path::Path::new(sluice_buffer::DEFAULT_DIR))
            {
                d.buffer.dir = super::destinations::sibling(&self.buffer.dir, &kafka_key(&id));
            }
            if d.dead_letter_dir.is_none() {
                let base = self
                    .hec
                    .dead_letter_dir
                    .clone()
                    .unwrap_or_else(|| super::hec::default_dead_letter_dir(None));
                d.dead_letter_dir = Some(base.join(kafka_key(&id)));
            }
            self.kafka.insert(key, d);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn load(vars: &[(&str, &str)]) -> Result<(Config, EnvReport), ConfigError> {
        let mut env = Env::default();
        env.merge_process(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut c = Config::default();
        let r = c.apply_env(&env)?;
        Ok((c, r))
    }

    #[test]
    fn defaults_and_settings() {
        let (c, r) = load(&[
            ("SLUICE_DEST_KAFKA_MAIN_BROKERS", "k1:9092,k2:9092"),
            ("SLUICE_DEST_KAFKA_MAIN_TOPIC", "sc4s-${sourcetype}"),
            ("SLUICE_DEST_KAFKA_MAIN_COMPRESSION", "zstd"),
            ("SLUICE_DEST_KAFKA_MAIN_DISKBUFF_RELIABLE", "yes"),
        ])
        .unwrap();
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
        let k = &c.kafka["main"];
        assert_eq!(k.brokers, "k1:9092,k2:9092");
        assert_eq!((k.acks, k.idempotence), (Acks::All, true));
        assert!(k.buffer.reliable);
        assert_ne!(k.buffer.dir, c.buffer.dir);
        assert!(k.dead_letter_dir.as_ref().unwrap().ends_with("kafka_main"));
        let t = k.record_template("MAIN").unwrap();
        assert_eq!(t.topic.to_string(), "sc4s-${sourcetype}");
        assert_eq!(t.key.to_string(), "${source_ip}");
        k.validate("kafka_main", "MAIN").unwrap();
    }

    #[test]
    fn bad_settings_name_the_variable() {
        let (c, _) = load(&[
            ("SLUICE_DEST_KAFKA_X_BROKERS", "k:9092"),
            ("SLUICE_DEST_KAFKA_X_TOPIC", "t-${nope}"),
        ])
        .unwrap();
        let e = c.kafka["x"]
            .validate("kafka_x", "X")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("SLUICE_DEST_KAFKA_X_TOPIC") && e.contains("nope"),
            "{e}"
        );
        let (c, _) = load(&[
            ("SLUICE_DEST_KAFKA_X_BROKERS", "k:9092"),
            ("SLUICE_DEST_KAFKA_X_ACKS", "1"),
        ])
        .unwrap();
        let e = c.kafka["x"]
            .validate("kafka_x", "X")
            .unwrap_err()
            .to_string();
        assert!(e.contains("IDEMPOTENCE"), "{e}");
        let e = load(&[
            ("SLUICE_DEST_KAFKA_X_BROKERS", "k:9092"),
            ("SLUICE_DEST_KAFKA_X_ACKS", "most"),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("SLUICE_DEST_KAFKA_X_ACKS"), "{e}");
    }
}
