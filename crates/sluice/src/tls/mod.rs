//! TLS for the TLS (`SC4S_LISTEN_*_TLS_PORT`) and RFC 5425 listeners: rustls with the *ring*
//! provider, certificates from `SC4S_TLS`, optional client-certificate verification, and
//! certificate reload without a restart.
//!
//! # Reload
//!
//! [`TlsManager`] holds one [`TlsEndpoint`] per TLS profile (the TLS ports and the RFC 5425
//! ports may have different options and ciphers). Each endpoint keeps its current
//! `rustls::ServerConfig` behind a lock that is read once per handshake; a reload builds new
//! configs from the files and swaps them in. A connection keeps the config it was accepted
//! with, so new handshakes use the new pair and existing connections are not disturbed.
//! [`TlsManager::reload`] is the hook (SIGHUP calls it); [`TlsManager::watch`] polls the
//! files' size, mtime and inode every `reload_interval` and reloads on a change — polling
//! rather than inotify because it also sees Kubernetes' symlink swap of a mounted Secret.
//! A pair that fails its checks is not loaded: the error is logged and counted, and the
//! previous certificate stays in service.

mod certs;
mod client;
mod failure;
pub(crate) mod policy;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, ServerConnection};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::sync::CancellationToken;

use crate::telemetry::events::Failure;
use crate::telemetry::state::CertificateState;

pub use certs::{CertInfo, TlsError, fingerprint};
pub use client::{HecTls, hec_client_config, relay_client_config};
pub use policy::{Policy, suite_name};

use crate::config::{PeerVerify, SourceProto, TlsConfig};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{
    CertificateReloadFailed, CertificateReloaded, TlsEvents, TlsHandshakeCompleted,
    TlsHandshakeFailed,
};

/// Client-certificate verification in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    Off,
    Optional,
    Required,
}

impl ClientAuth {
    pub fn label(self) -> &'static str {
        match self {
            ClientAuth::Off => "not requested",
            ClientAuth::Optional => "verified when presented",
            ClientAuth::Required => "required",
        }
    }
}

/// The TLS side of the listeners of one profile.
#[derive(Debug)]
pub struct TlsEndpoint {
    pub proto: SourceProto,
    pub policy: Policy,
    config: RwLock<Arc<ServerConfig>>,
    /// Handshakes and failures, counted by [`TlsHandshakeCompleted`] and
    /// [`TlsHandshakeFailed`].
    pub events: TlsEvents,
}

impl TlsEndpoint {
    fn current(&self) -> Arc<ServerConfig> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Runs the server handshake with the certificate in force now.
    pub async fn accept<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        stream: S,
    ) -> std::io::Result<TlsStream<S>> {
        TlsAcceptor::from(self.current()).accept(stream).await
    }

    /// Counts a completed handshake on `port` by version and suite.
    pub fn record_handshake(&self, conn: &ServerConnection, port: u16) {
        let version = match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3",
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
            _ => "unknown",
        };
        let suite = conn
            .negotiated_cipher_suite()
            .map_or("unknown", |s| suite_name(&s));
        TlsHandshakeCompleted {
            port,
            version,
            suite,
        }
        .emit(&self.events);
    }

    /// Counts a failed handshake and logs it, at most once per 10 s per endpoint with the
    /// number held back.
    pub fn record_failure(&self, failure: Failure, peer: SocketAddr, port: u16, error: &str) {
        TlsHandshakeFailed {
            failure,
            peer,
            port,
            error,
        }
        .emit(&self.events);
    }
}

/// Files and settings the certificate comes from.
#[derive(Debug, Clone)]
struct Source {
    cert: PathBuf,
    key: PathBuf,
    trusted: PathBuf,
    ca_dir: Option<PathBuf>,
    peer_verify: PeerVerify,
}

/// What a load produced.
#[derive(Debug, Clone)]
struct Loaded {
    certified: Arc<CertifiedKey>,
    info: CertInfo,
    trust: Option<certs::Trust>,
    auth: ClientAuth,
}

/// Owner of the TLS endpoints and the reload hook.
#[derive(Debug)]
pub struct TlsManager {
    source: Source,
    provider: Arc<CryptoProvider>,
    endpoints: Vec<Arc<TlsEndpoint>>,
    /// Stamps of the files as last loaded (or last failed), so a watch reloads once per
    /// change.
    stamps: Mutex<Vec<Stamp>>,
    info: Mutex<CertInfo>,
    auth: ClientAuth,
    /// The certificate in force, for `/metrics` (reloads are counted by
    /// [`CertificateReloaded`] and [`CertificateReloadFailed`]).
    pub stats: Arc<CertificateState>,
}

type Stamp = Option<(SystemTime, u64, u64)>;

fn stamp(p: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).ok()?;
    Some((m.modified().ok()?, m.len(), m.ino()))
}

impl TlsManager {
    /// Reads and checks everything for the given profiles (`Tls` and/or `Rfc5425`):
    /// generates the self-signed pair when asked and none exists, loads the pair and the trust
    /// store, evaluates the options and ciphers. Every problem is an error a person can act
    /// on; warnings (what rustls cannot express, an expiring certificate) are logged here.
    pub fn load(config: &TlsConfig, profiles: &[SourceProto]) -> Result<TlsManager, TlsError> {
        let source = Source {
            cert: config.cert_path(),
            key: config.key_path(),
            trusted: config.trusted_path(),
            ca_dir: config.ca_dir.clone(),
            peer_verify: config.peer_verify,
        };
        if config.self_signed
            && let Some(fp) = certs::ensure_self_signed(&source.cert, &source.key)?
        {
            tracing::warn!(
                cert = %source.cert.display(),
                key = %source.key.display(),
                sha256 = %fp,
                "SC4S_SOURCE_TLS_SELFSIGNED=yes: generated a self-signed certificate; senders \
                 must trust it explicitly (pin this fingerprint or add the certificate to their \
                 trust store)"
            );
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let loaded = load_all(&source, &provider)?;
        let mut endpoints = Vec::new();
        for &proto in profiles {
            let (ovar, opts, cvar, ciphers) = match proto {
                SourceProto::Rfc5425 => (
                    "SC4S_SOURCE_RFC5425_OPTIONS",
                    &config.rfc5425_options,
                    "SC4S_SOURCE_RFC5425_CIPHER_SUITE",
                    &config.rfc5425_cipher_suite,
                ),
                _ => (
                    "SC4S_SOURCE_TLS_OPTIONS",
                    &config.options,
                    "SC4S_SOURCE_TLS_CIPHER_SUITE",
                    &config.cipher_suite,
                ),
            };
            let policy = policy::evaluate(ovar, opts, cvar, ciphers).map_err(TlsError::Setting)?;
            for note in &policy.notes {
                tracing::warn!("{note}");
            }
            let server = server_config(&policy, &provider, &loaded)?;
            endpoints.push(Arc::new(TlsEndpoint {
                proto,
                policy,
                config: RwLock::new(server),
                events: TlsEvents::register(crate::telemetry::metrics()),
            }));
        }
        let m = TlsManager {
            stamps: Mutex::new(Self::stamps_of(&source)),
            info: Mutex::new(loaded.info.clone()),
            auth: loaded.auth,
            source,
            provider,
            endpoints,
            stats: Arc::default(),
        };
        m.stats
            .not_after
            .store(loaded.info.not_after, Ordering::Relaxed);
        m.log_loaded("TLS certificate loaded", &loaded);
        Ok(m)
    }

    pub fn endpoint(&self, proto: SourceProto) -> Option<Arc<TlsEndpoint>> {
        self.endpoints.iter().find(|e| e.proto == proto).cloned()
    }

    pub fn endpoints(&self) -> &[Arc<TlsEndpoint>] {
        &self.endpoints
    }

    pub fn client_auth(&self) -> ClientAuth {
        self.auth
    }

    pub fn cert_info(&self) -> CertInfo {
        self.info.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn cert_path(&self) -> &Path {
        &self.source.cert
    }

    fn stamps_of(source: &Source) -> Vec<Stamp> {
        let mut v = vec![
            stamp(&source.cert),
            stamp(&source.key),
            stamp(&source.trusted),
        ];
        if let Some(dir) = &source.ca_dir {
            v.push(stamp(dir));
            if let Ok(rd) = std::fs::read_dir(dir) {
                let mut files: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
                files.sort();
                v.extend(files.iter().map(|f| stamp(f)));
            }
        }
        v
    }

    /// The reload hook: re-reads the certificate, key and trust store and, when they pass
    /// every check, serves them to new handshakes. On failure the previous certificate stays
    /// in service and the error is returned (and logged, and counted).
    pub fn reload(&self) -> Result<CertInfo, TlsError> {
        let stamps = Self::stamps_of(&self.source);
        *self.stamps.lock().unwrap_or_else(|e| e.into_inner()) = stamps;
        let result = load_all(&self.source, &self.provider).and_then(|loaded| {
            if loaded.auth != self.auth {
                // The verifier kind is fixed at startup (it decides whether connections
                // without a certificate are accepted); a trust file that appears or vanishes
                // needs a restart to change it.
                return Err(TlsError::Setting(format!(
                    "client-certificate verification would change from \"{}\" to \"{}\" \
                     (trusted.pem or SLUICE_TLS_CA_DIR appeared or disappeared); restart sluice \
                     to change it",
                    self.auth.label(),
                    loaded.auth.label()
                )));
            }
            let configs = self
                .endpoints
                .iter()
                .map(|e| server_config(&e.policy, &self.provider, &loaded))
                .collect::<Result<Vec<_>, _>>()?;
            for (e, c) in self.endpoints.iter().zip(configs) {
                *e.config.write().unwrap_or_else(|e| e.into_inner()) = c;
            }
            Ok(loaded)
        });
        match result {
            Ok(loaded) => {
                CertificateReloaded {
                    sha256: &loaded.info.sha256,
                }
                .emit(crate::telemetry::metrics());
                self.stats
                    .not_after
                    .store(loaded.info.not_after, Ordering::Relaxed);
                *self.info.lock().unwrap_or_else(|e| e.into_inner()) = loaded.info.clone();
                self.log_loaded(
                    "TLS certificate reloaded: new handshakes use it, open connections keep theirs",
                    &loaded,
                );
                Ok(loaded.info)
            }
            Err(e) => {
                CertificateReloadFailed { error: &e }.emit(crate::telemetry::metrics());
                Err(e)
            }
        }
    }

    /// Polls the files every `interval` and reloads when one changed, until `stop`.
    pub fn watch(
        self: &Arc<Self>,
        interval: Duration,
        stop: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            if interval.is_zero() {
                return;
            }
            loop {
                tokio::select! {
                    () = tokio::time::sleep(interval) => {}
                    () = stop.cancelled() => return,
                }
                let now = Self::stamps_of(&me.source);
                let changed = *me.stamps.lock().unwrap_or_else(|e| e.into_inner()) != now;
                if changed {
                    // A copy in progress shows up as a change too; a pair caught half-written
                    // fails its checks, keeps the old one, and the next change retries.
                    let _ = me.reload();
                }
            }
        })
    }

    fn log_loaded(&self, what: &str, l: &Loaded) {
        let now = jiff::Timestamp::now().as_second();
        tracing::info!(
            cert = %self.source.cert.display(),
            subject = %l.info.subject,
            names = %l.info.names.join(","),
            not_after = %jiff::Timestamp::from_second(l.info.not_after).map_or_else(|_| l.info.not_after.to_string(), |t| t.to_string()),
            sha256 = %l.info.sha256,
            client_certificates = l.auth.label(),
            trust = %l.trust.as_ref().map(|t| t.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(",")).unwrap_or_default(),
            "{what}"
        );
        for w in l
            .info
            .warnings
            .iter()
            .chain(&l.info.validity_problems(&self.source.cert, now))
        {
            tracing::error!("{w}");
        }
    }
}

fn load_all(source: &Source, provider: &CryptoProvider) -> Result<Loaded, TlsError> {
    let pair = certs::load_pair(&source.cert, &source.key, provider)?;
    let trust = certs::load_trust(&source.trusted, source.ca_dir.as_deref())?;
    let auth = match (source.peer_verify, &trust) {
        (PeerVerify::No, _) | (PeerVerify::Auto, None) => ClientAuth::Off,
        (PeerVerify::Auto | PeerVerify::Required, Some(_)) => ClientAuth::Required,
        (PeerVerify::Optional, Some(_)) => ClientAuth::Optional,
        (PeerVerify::Required | PeerVerify::Optional, None) => {
            return Err(TlsError::Setting(format!(
                "SLUICE_TLS_PEER_VERIFY asks for client certificates, but there is no CA to \
                 verify them against: put the CA certificates in {} or set SLUICE_TLS_CA_DIR",
                source.trusted.display()
            )));
        }
    };
    Ok(Loaded {
        certified: pair.certified,
        info: pair.info,
        trust: if auth == ClientAuth::Off { None } else { trust },
        auth,
    })
}

/// Always the one certificate loaded last.
#[derive(Debug)]
struct Fixed(Arc<CertifiedKey>);

impl ResolvesServerCert for Fixed {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

fn server_config(
    policy: &Policy,
    base: &CryptoProvider,
    loaded: &Loaded,
) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = Arc::new(CryptoProvider {
        cipher_suites: policy.suites.clone(),
        ..base.clone()
    });
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&policy.versions)
        .map_err(|e| TlsError::Setting(format!("TLS versions/ciphers: {e}")))?;
    let builder = match (&loaded.trust, loaded.auth) {
        (Some(trust), ClientAuth::Required | ClientAuth::Optional) => {
            let mut v = WebPkiClientVerifier::builder_with_provider(trust.roots.clone(), provider);
            if loaded.auth == ClientAuth::Optional {
                v = v.allow_unauthenticated();
            }
            let verifier = v.build().map_err(|e| {
                TlsError::Setting(format!(
                    "cannot verify client certificates with {}: {e}",
                    trust
                        .files
                        .iter()
                        .map(|f| f.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            builder.with_client_cert_verifier(verifier)
        }
        _ => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(Arc::new(Fixed(loaded.certified.clone())));
    config.ignore_client_order = policy.server_order;
    // No TLS 1.3 session tickets. They are the only thing a TLS 1.3 server sends after the
    // handshake, and syslog senders never read: a sender that closes with a ticket unread
    // in its socket makes its kernel answer with RST, and the RST discards whatever this
    // side has not read yet (loggen's tail, any sender's last messages). Resumption is worth
    // nothing to connections that live for hours.
    config.send_tls13_tickets = 0;
    Ok(Arc::new(config))
}
