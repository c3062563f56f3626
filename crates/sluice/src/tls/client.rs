//! TLS towards Splunk HEC, as SC4S configures it (`SC4S_DEST_SPLUNK_HEC_<ID>_TLS_VERIFY`,
//! `_TLS_MOUNT`): the system's trust store plus the CA certificates found in the mount
//! directory, and — for mTLS — the client pair `key.pem` + `cert.pem` from that directory
//! (SC4S hands the same directory to syslog-ng as `key-file`, `cert-file` and `ca-dir`).
//!
//! Everything is read and checked at startup, so a bad file stops sluice with a message that
//! names it, instead of every request failing later with a handshake alert.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::ResolvesClientCert;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::certs::{TlsError, load_pair, read, roots_from_files};

/// The HEC client's TLS settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HecTls {
    /// Check the indexers' certificates (SC4S default yes).
    pub verify: bool,
    /// `_TLS_MOUNT`: `key.pem` + `cert.pem` (mTLS) and CA certificates.
    pub mount: Option<PathBuf>,
    /// One more CA file to trust (PEM), e.g. a private CA without a mount.
    pub ca_file: Option<PathBuf>,
}

/// Names in the mount that are the client pair, not CA certificates.
const CLIENT_FILES: [&str; 2] = ["key.pem", "cert.pem"];

/// A rustls client configuration, or `None` when the defaults (system roots, verification
/// on, no client certificate) already say everything.
pub fn hec_client_config(tls: &HecTls) -> Result<Option<Arc<ClientConfig>>, TlsError> {
    if tls.verify && tls.mount.is_none() && tls.ca_file.is_none() {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Setting(format!("HEC TLS: {e}")))?;
    let builder = if tls.verify {
        builder.with_root_certificates(trust(tls)?)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyServer(provider.clone())))
    };
    let config = match &tls.mount {
        Some(dir) => {
            let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
            for (what, p) in [("client certificate", &cert), ("client key", &key)] {
                if !p.exists() {
                    return Err(TlsError::Missing {
                        what,
                        path: p.clone(),
                        fix: format!(
                            "SC4S_DEST_SPLUNK_HEC_*_TLS_MOUNT={} must hold key.pem and cert.pem \
                             (the client pair the indexers expect) plus the CA certificates; \
                             unset it to connect without a client certificate",
                            dir.display()
                        ),
                    });
                }
            }
            let pair = load_pair(&cert, &key, &provider)?;
            builder.with_client_cert_resolver(Arc::new(ClientPair(pair.certified)))
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Some(Arc::new(config)))
}

/// The TLS client of a syslog relay (`SC4S_DEST_SYSLOG_<ID>_TLS_VERIFY`, `_SSL_VERSION`,
/// `_CIPHER_SUITE`): the system's roots plus `ca_file`, or any certificate with `verify` off;
/// only `versions`, and `suites` when given (an OpenSSL cipher string evaluated by
/// [`super::policy::evaluate`]).
pub fn relay_client_config(
    verify: bool,
    ca_file: Option<PathBuf>,
    versions: &[&'static rustls::SupportedProtocolVersion],
    suites: Option<Vec<rustls::SupportedCipherSuite>>,
) -> Result<Arc<ClientConfig>, TlsError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(s) = suites {
        provider.cipher_suites = s;
    }
    let provider = Arc::new(provider);
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(versions)
        .map_err(|e| TlsError::Setting(format!("relay TLS: {e}")))?;
    let tls = HecTls {
        verify,
        mount: None,
        ca_file,
    };
    let config = if verify {
        builder.with_root_certificates(trust(&tls)?)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyServer(provider)))
    };
    Ok(Arc::new(config.with_no_client_auth()))
}

/// System roots plus the configured CA certificates.
fn trust(tls: &HecTls) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let mut files = Vec::new();
    if let Some(f) = &tls.ca_file {
        // Read once here so a missing file names the setting's file, not a directory scan.
        read(
            "CA file",
            f,
            "point it at a PEM file of the CA that issued the indexers' certificates",
        )?;
        files.push(f.clone());
    }
    if let Some(dir) = &tls.mount {
        files.extend(ca_files(dir)?);
    }
    if !files.is_empty() {
        let extra = roots_from_files(files)?;
        roots.extend(extra.roots.roots.iter().cloned());
    }
    Ok(roots)
}

/// The PEM certificates in the mount other than the client pair.
fn ca_files(dir: &Path) -> Result<Vec<PathBuf>, TlsError> {
    let entries = std::fs::read_dir(dir).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => TlsError::Missing {
            what: "HEC TLS mount directory",
            path: dir.to_owned(),
            fix: "create it with key.pem, cert.pem and the CA certificates, or unset \
                  SC4S_DEST_SPLUNK_HEC_*_TLS_MOUNT"
                .into(),
        },
        _ => TlsError::Unreadable {
            what: "HEC TLS mount directory",
            path: dir.to_owned(),
            source,
        },
    })?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !CLIENT_FILES.contains(&name)
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| matches!(e, "pem" | "crt" | "cer"))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// The one client pair from the mount, offered whatever the server asks for.
#[derive(Debug)]
struct ClientPair(Arc<CertifiedKey>);

impl ResolvesClientCert for ClientPair {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// `TLS_VERIFY=no`: any certificate is accepted, but the handshake signatures are still
/// checked, so the connection is encrypted to whoever holds the presented key.
#[derive(Debug)]
struct AnyServer(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
