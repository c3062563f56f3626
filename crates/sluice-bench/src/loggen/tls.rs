//! The rustls client behind `--transport tls` (RFC 5425: octet-counted frames over TLS).
//!
//! The crypto provider is always `ring`, passed explicitly, so the process-wide default
//! provider (which reqwest may also install) never matters. `--tls-ca FILE` trusts the
//! PEM certificates in FILE and verifies the server's name; `--tls-insecure` accepts any
//! certificate and name but still checks the handshake signatures, so it only skips the
//! identity check a self-signed test receiver cannot pass.

use std::{path::Path, sync::Arc};

use rustls::{
    ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::CryptoProvider,
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject},
};

use super::LoggenError;

/// How the server's certificate is checked.
#[derive(Debug, Clone)]
pub(crate) enum Trust<'a> {
    Ca(&'a Path),
    Insecure,
}

pub(crate) fn client_config(trust: Trust<'_>) -> Result<Arc<ClientConfig>, LoggenError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| LoggenError::Tls {
            what: "set up the TLS client".to_owned(),
            reason: e.to_string(),
        })?;
    let config = match trust {
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth(),
        Trust::Ca(path) => {
            let bad = |reason: String| {
                LoggenError::invalid("--tls-ca", format!("{}: {reason}", path.display()))
            };
            let mut roots = RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))?;
            for cert in certs {
                let cert = cert.map_err(|e| bad(e.to_string()))?;
                roots
                    .add(cert)
                    .map_err(|e| bad(format!("unusable CA certificate: {e}")))?;
            }
            if roots.is_empty() {
                return Err(bad("no PEM certificate in the file".to_owned()));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    Ok(Arc::new(config))
}

/// The name the certificate must carry: `--tls-server-name`, else the target's host (an
/// IP address is checked against the certificate's IP SANs).
pub(crate) fn server_name(
    explicit: Option<&str>,
    target_host: &str,
) -> Result<ServerName<'static>, LoggenError> {
    let (flag, name) = match explicit {
        Some(n) => ("--tls-server-name", n),
        None => ("TARGET", target_host),
    };
    ServerName::try_from(name.to_owned())
        .map_err(|e| LoggenError::invalid(flag, format!("{name:?} is not a TLS server name: {e}")))
}

#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
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
        rustls::crypto::verify_tls12_signature(
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
        rustls::crypto::verify_tls13_signature(
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
