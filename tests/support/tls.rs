//! Certificates and a blocking rustls client for the TLS end-to-end tests.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme, StreamOwned};

/// A CA and what it issued.
pub struct Ca {
    issuer: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
}

/// A certificate and its key, PEM.
#[derive(Clone)]
pub struct Pair {
    pub cert_pem: String,
    pub key_pem: String,
    pub der: CertificateDer<'static>,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let issuer =
            rcgen::CertifiedIssuer::self_signed(params, rcgen::KeyPair::generate().unwrap())
                .unwrap();
        Ca { issuer }
    }

    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    pub fn der(&self) -> CertificateDer<'static> {
        self.issuer.der().clone()
    }

    /// A server certificate for `localhost` and 127.0.0.1.
    pub fn server(&self) -> Pair {
        self.issue(
            &["localhost", "127.0.0.1"],
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A server certificate that expired in 2021.
    pub fn server_expired(&self) -> Pair {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        let cert = params.signed_by(&key, &*self.issuer).unwrap();
        Pair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
        }
    }

    /// A client certificate.
    pub fn client(&self, name: &str) -> Pair {
        self.issue(&[name], rcgen::ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, names: &[&str], eku: rcgen::ExtendedKeyUsagePurpose) -> Pair {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params =
            rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        params.extended_key_usages = vec![eku];
        let cert = params.signed_by(&key, &*self.issuer).unwrap();
        Pair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
        }
    }
}

impl Pair {
    /// Writes `server.pem` / `server.key` into `dir` atomically (rename), key first.
    pub fn install(&self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        for (name, text) in [
            ("server.key", &self.key_pem),
            ("server.pem", &self.cert_pem),
        ] {
            let tmp = dir.join(format!(".{name}.tmp"));
            std::fs::write(&tmp, text).unwrap();
            std::fs::rename(&tmp, dir.join(name)).unwrap();
        }
    }

    pub fn key_der(&self) -> PrivateKeyDer<'static> {
        use rustls::pki_types::pem::PemObject;
        PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).unwrap()
    }
}

/// Accepts any server certificate (signatures still checked) and records the ones it saw,
/// so a test can tell which certificate a handshake got.
#[derive(Debug)]
pub struct Recorder {
    provider: Arc<rustls::crypto::CryptoProvider>,
    pub seen: Mutex<Vec<CertificateDer<'static>>>,
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.seen
            .lock()
            .unwrap()
            .push(end_entity.clone().into_owned());
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            m,
            c,
            d,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            m,
            c,
            d,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A client that trusts anything and records the server certificates, optionally presenting
/// `client` as its certificate.
pub fn client_config(client: Option<&Pair>) -> (Arc<ClientConfig>, Arc<Recorder>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let recorder = Arc::new(Recorder {
        provider: provider.clone(),
        seen: Mutex::new(Vec::new()),
    });
    let b = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(recorder.clone());
    let cfg = match client {
        Some(p) => b
            .with_client_auth_cert(vec![p.der.clone()], p.key_der())
            .unwrap(),
        None => b.with_no_client_auth(),
    };
    (Arc::new(cfg), recorder)
}

/// A client that verifies the server's certificate against `ca`, as a careful sender does.
pub fn verifying_client_config(ca: &Ca) -> Arc<ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// A TLS connection to `addr`, handshake completed (or the error).
pub fn connect(
    addr: SocketAddr,
    cfg: &Arc<ClientConfig>,
) -> std::io::Result<StreamOwned<ClientConnection, TcpStream>> {
    let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    let conn = ClientConnection::new(cfg.clone(), ServerName::try_from("localhost").unwrap())
        .map_err(std::io::Error::other)?;
    let mut s = StreamOwned::new(conn, tcp);
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock)?;
    }
    // With TLS 1.3 a rejected client certificate is only reported after the handshake: a
    // write and a read make the server's verdict arrive.
    s.flush()?;
    Ok(s)
}

/// `OPENSSL_CONF` contents capping OpenSSL clients (loggen) at TLS 1.2: under TLS 1.3
/// loggen resets the connection before the server has read its last records.
pub const OPENSSL_TLS12_ONLY: &str = "openssl_conf = default_conf\n\
[default_conf]\nssl_conf = ssl_sect\n\
[ssl_sect]\nsystem_default = system_default_sect\n\
[system_default_sect]\nMaxProtocol = TLSv1.2\n";
