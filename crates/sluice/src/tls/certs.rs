//! Reading and checking the server certificate, its key and the client trust store, with
//! errors a person can act on: each names the file, says what is wrong with it and how to
//! fix it ("CaUsedAsEndEntity" is what the client would say; this says it first, at
//! startup or at reload, in words).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{PemObject, SectionKind};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

/// A TLS file or setting that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error(
        "TLS {what} {path} does not exist. Fix: {fix}",
        path = path.display()
    )]
    Missing {
        what: &'static str,
        path: PathBuf,
        fix: String,
    },
    #[error("cannot read TLS {what} {path}: {source}. Fix: make it readable by the user sluice runs as", path = path.display())]
    Unreadable {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("TLS {what} {path}: {problem}. Fix: {fix}", path = path.display())]
    Unusable {
        what: &'static str,
        path: PathBuf,
        problem: String,
        fix: String,
    },
    #[error(
        "the private key in {key} does not belong to the certificate in {cert} (subject {subject}): \
         they come from different pairs. Fix: install the key that was generated with this \
         certificate; `openssl x509 -noout -pubkey -in {cert} | sha256sum` and \
         `openssl pkey -pubout -in {key} | sha256sum` must print the same",
        key = key.display(),
        cert = cert.display()
    )]
    KeyMismatch {
        cert: PathBuf,
        key: PathBuf,
        subject: String,
    },
    #[error("cannot create the self-signed certificate in {dir}: {reason}. Fix: make {dir} writable by sluice, or install server.pem and server.key yourself", dir = dir.display())]
    SelfSigned { dir: PathBuf, reason: String },
    #[error("{0}")]
    Setting(String),
}

/// What the log and `/metrics` say about the certificate in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    pub subject: String,
    /// DNS and IP subject alternative names.
    pub names: Vec<String>,
    pub not_before: i64,
    pub not_after: i64,
    /// SHA-256 of the leaf's DER, as `openssl x509 -noout -fingerprint -sha256` prints it.
    pub sha256: String,
    /// Warnings that do not stop it from being served (expired, CA flag on a self-signed
    /// certificate, ...).
    pub warnings: Vec<String>,
}

/// A usable certificate + key.
#[derive(Debug, Clone)]
pub struct LoadedCert {
    pub certified: Arc<CertifiedKey>,
    pub info: CertInfo,
}

pub(crate) fn read(what: &'static str, path: &Path, fix: &str) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => TlsError::Missing {
            what,
            path: path.to_owned(),
            fix: fix.to_owned(),
        },
        _ => TlsError::Unreadable {
            what,
            path: path.to_owned(),
            source,
        },
    })
}

/// Every PEM section sluice knows, or an error saying why the file is not PEM.
fn sections(
    what: &'static str,
    path: &Path,
    bytes: &[u8],
) -> Result<Vec<(SectionKind, Vec<u8>)>, TlsError> {
    let unusable = |problem: String, fix: String| TlsError::Unusable {
        what,
        path: path.to_owned(),
        problem,
        fix,
    };
    if !bytes.windows(11).any(|w| w == b"-----BEGIN ") {
        let p = path.display();
        return Err(if bytes.first() == Some(&0x30) {
            unusable(
                "it is binary DER, not PEM".into(),
                format!(
                    "convert it: `openssl x509 -inform der -in {p} -out {p}.pem` (a key: `openssl pkey -inform der ...`)"
                ),
            )
        } else if bytes.is_empty() {
            unusable(
                "the file is empty".into(),
                "copy the PEM file into place again".into(),
            )
        } else {
            unusable(
                "it is not PEM (no -----BEGIN line)".into(),
                "provide PEM text as `openssl x509 -outform pem` writes it".into(),
            )
        });
    }
    <(SectionKind, Vec<u8>)>::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            unusable(
                format!("broken PEM: {e}"),
                "copy the file again; it is cut or edited".into(),
            )
        })
}

fn is_key(kind: SectionKind) -> bool {
    matches!(
        kind,
        SectionKind::PrivateKey | SectionKind::RsaPrivateKey | SectionKind::EcPrivateKey
    )
}

/// Reads and checks the server's certificate chain and key.
pub fn load_pair(
    cert_path: &Path,
    key_path: &Path,
    provider: &CryptoProvider,
) -> Result<LoadedCert, TlsError> {
    let selfsigned_fix = format!(
        "put the server certificate chain there (PEM, server certificate first), or set \
         SC4S_SOURCE_TLS_SELFSIGNED=yes to have sluice generate a pair in {}",
        cert_path.parent().unwrap_or(Path::new(".")).display()
    );
    let cert_bytes = read("certificate", cert_path, &selfsigned_fix)?;
    let key_bytes = read(
        "private key",
        key_path,
        &format!(
            "put the certificate's private key there (PEM), next to {}",
            cert_path.display()
        ),
    )?;

    let cert_sections = sections("certificate", cert_path, &cert_bytes)?;
    let chain: Vec<CertificateDer<'static>> = cert_sections
        .iter()
        .filter(|(k, _)| *k == SectionKind::Certificate)
        .map(|(_, der)| CertificateDer::from(der.clone()))
        .collect();
    if chain.is_empty() {
        let swapped = cert_sections.iter().any(|(k, _)| is_key(*k));
        return Err(TlsError::Unusable {
            what: "certificate",
            path: cert_path.to_owned(),
            problem: if swapped {
                "it holds a private key but no certificate".into()
            } else {
                "it holds no CERTIFICATE block".into()
            },
            fix: if swapped {
                format!(
                    "the certificate and key files look swapped: the certificate goes in {}, the key in {}",
                    cert_path.display(),
                    key_path.display()
                )
            } else {
                "put the PEM certificate (-----BEGIN CERTIFICATE-----) there".into()
            },
        });
    }

    let key_text = String::from_utf8_lossy(&key_bytes);
    if key_text.contains("ENCRYPTED PRIVATE KEY") || key_text.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(TlsError::Unusable {
            what: "private key",
            path: key_path.to_owned(),
            problem: "it is encrypted with a passphrase, which sluice cannot ask for".into(),
            fix: format!(
                "store it unencrypted, readable only by sluice: `openssl pkey -in {p} -out {p}.plain && mv {p}.plain {p} && chmod 600 {p}`",
                p = key_path.display()
            ),
        });
    }
    let key_sections = sections("private key", key_path, &key_bytes)?;
    let Some((kind, der)) = key_sections.into_iter().find(|(k, _)| is_key(*k)) else {
        return Err(TlsError::Unusable {
            what: "private key",
            path: key_path.to_owned(),
            problem: "it holds no PRIVATE KEY block (PKCS#8, RSA or EC)".into(),
            fix: format!(
                "put the certificate's private key there; if it holds the certificate, the files are swapped with {}",
                cert_path.display()
            ),
        });
    };
    let key_der = match kind {
        SectionKind::RsaPrivateKey => PrivateKeyDer::Pkcs1(der.into()),
        SectionKind::EcPrivateKey => PrivateKeyDer::Sec1(der.into()),
        _ => PrivateKeyDer::Pkcs8(der.into()),
    };
    let signing_key = provider
        .key_provider
        .load_private_key(key_der)
        .map_err(|e| TlsError::Unusable {
            what: "private key",
            path: key_path.to_owned(),
            problem: format!("the key cannot be used for TLS ({e})"),
            fix: "use an RSA (2048 bits or more), ECDSA P-256/P-384 or Ed25519 key".into(),
        })?;

    let parsed: Vec<_> = chain
        .iter()
        .map(|c| x509_parser::parse_x509_certificate(c.as_ref()).map(|(_, x)| x))
        .collect();
    let leaf = match &parsed[0] {
        Ok(x) => x,
        Err(e) => {
            return Err(TlsError::Unusable {
                what: "certificate",
                path: cert_path.to_owned(),
                problem: format!("its first certificate cannot be read ({e})"),
                fix: "check the file with `openssl x509 -noout -text -in FILE`".into(),
            });
        }
    };
    let subject = leaf.subject().to_string();
    let certified = CertifiedKey::new(chain.clone(), signing_key.clone());
    if certified.keys_match().is_err() {
        // The most common way to get here with the right files is a chain in the wrong
        // order.
        let other = (1..chain.len()).find(|&i| {
            let mut reordered = chain.clone();
            reordered.swap(0, i);
            CertifiedKey::new(reordered, signing_key.clone())
                .keys_match()
                .is_ok()
        });
        return Err(match other {
            Some(i) => TlsError::Unusable {
                what: "certificate",
                path: cert_path.to_owned(),
                problem: format!(
                    "the key matches certificate #{} of the file, not the first one ({subject})",
                    i + 1
                ),
                fix: "put the server certificate first, then its intermediates (leaf first, as \
                      `cat server.crt intermediate.crt > server.pem`)"
                    .into(),
            },
            None => TlsError::KeyMismatch {
                cert: cert_path.to_owned(),
                key: key_path.to_owned(),
                subject,
            },
        });
    }

    let self_signed = leaf.subject() == leaf.issuer();
    let mut warnings = Vec::new();
    if leaf.is_ca() {
        if !self_signed {
            return Err(TlsError::Unusable {
                what: "certificate",
                path: cert_path.to_owned(),
                problem: format!(
                    "its first certificate ({subject}) is a CA certificate (basicConstraints \
                     CA:TRUE) issued by {}; clients refuse a CA as a server certificate \
                     (rustls: CaUsedAsEndEntity, OpenSSL: unsuitable certificate purpose)",
                    leaf.issuer()
                ),
                fix: "install the server's own certificate, issued by that CA for this host, \
                      followed by the intermediates"
                    .into(),
            });
        }
        warnings.push(format!(
            "{} is a self-signed CA certificate (basicConstraints CA:TRUE, what `openssl req \
             -x509` makes by default): OpenSSL-based senders accept it once it is in their \
             trust store, but rustls and other strict clients refuse a CA as a server \
             certificate (CaUsedAsEndEntity). For every client, issue it with `-addext \
             basicConstraints=critical,CA:FALSE`, or let sluice generate one \
             (SC4S_SOURCE_TLS_SELFSIGNED=yes with no server.pem)",
            cert_path.display()
        ));
    }
    if let Ok(Some(eku)) = leaf.extended_key_usage()
        && !eku.value.any
        && !eku.value.server_auth
    {
        warnings.push(format!(
            "{}: the certificate's extended key usage does not include serverAuth; clients \
             that check it will refuse the certificate",
            cert_path.display()
        ));
    }
    let mut names = Vec::new();
    if let Ok(Some(san)) = leaf.subject_alternative_name() {
        for n in &san.value.general_names {
            match n {
                x509_parser::extensions::GeneralName::DNSName(d) => names.push((*d).to_owned()),
                x509_parser::extensions::GeneralName::IPAddress(b) => match b.len() {
                    4 => names.push(std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string()),
                    16 => {
                        let mut a = [0u8; 16];
                        a.copy_from_slice(b);
                        names.push(std::net::Ipv6Addr::from(a).to_string());
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }
    let info = CertInfo {
        subject,
        names,
        not_before: leaf.validity().not_before.timestamp(),
        not_after: leaf.validity().not_after.timestamp(),
        sha256: fingerprint(chain[0].as_ref()),
        warnings,
    };
    Ok(LoadedCert {
        certified: Arc::new(certified),
        info,
    })
}

impl CertInfo {
    /// Validity problems at `now` (Unix seconds): expired, not yet valid, expiring within a
    /// week. Checked at every load, since a certificate does not expire on a restart.
    pub fn validity_problems(&self, path: &Path, now: i64) -> Vec<String> {
        let day = 86_400;
        let when = |t: i64| {
            jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
        };
        let mut out = Vec::new();
        if now > self.not_after {
            out.push(format!(
                "{}: the certificate expired on {} ({} days ago); senders that verify \
                 certificates refuse it. Fix: install a renewed certificate (sluice loads it \
                 without a restart)",
                path.display(),
                when(self.not_after),
                (now - self.not_after) / day
            ));
        } else if now < self.not_before {
            out.push(format!(
                "{}: the certificate is not valid before {}; senders that verify refuse it \
                 until then (check this host's clock)",
                path.display(),
                when(self.not_before)
            ));
        } else if self.not_after - now < 7 * day {
            out.push(format!(
                "{}: the certificate expires on {}, in less than a week",
                path.display(),
                when(self.not_after)
            ));
        }
        out
    }
}

/// `AB:CD:...` SHA-256 of DER bytes.
pub fn fingerprint(der: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, der);
    d.as_ref()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The CA certificates client certificates must chain to, from a PEM file and/or a directory
/// of them. `None` when neither exists.
#[derive(Debug, Clone)]
pub struct Trust {
    pub roots: Arc<RootCertStore>,
    pub files: Vec<PathBuf>,
}

pub fn load_trust(file: &Path, dir: Option<&Path>) -> Result<Option<Trust>, TlsError> {
    let mut files = Vec::new();
    if file.exists() {
        files.push(file.to_owned());
    }
    if let Some(dir) = dir {
        let entries = std::fs::read_dir(dir).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => TlsError::Missing {
                what: "CA directory",
                path: dir.to_owned(),
                fix: "create it with the CA certificates (PEM) clients are issued by, or unset \
                      SLUICE_TLS_CA_DIR"
                    .into(),
            },
            _ => TlsError::Unreadable {
                what: "CA directory",
                path: dir.to_owned(),
                source,
            },
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| matches!(e, "pem" | "crt" | "cer"))
            })
            .collect();
        found.sort();
        if found.is_empty() {
            return Err(TlsError::Unusable {
                what: "CA directory",
                path: dir.to_owned(),
                problem: "it holds no *.pem, *.crt or *.cer file".into(),
                fix: "copy the CA certificates that issue the client certificates there".into(),
            });
        }
        files.extend(found);
    }
    if files.is_empty() {
        return Ok(None);
    }
    roots_from_files(files).map(Some)
}

/// Every CERTIFICATE block of every file, as trust anchors; a file with none is an error.
pub(crate) fn roots_from_files(files: Vec<PathBuf>) -> Result<Trust, TlsError> {
    let mut roots = RootCertStore::empty();
    for f in &files {
        let bytes = read("CA file", f, "")?;
        let secs = sections("CA file", f, &bytes)?;
        let mut n = 0;
        for (kind, der) in secs {
            if kind != SectionKind::Certificate {
                continue;
            }
            roots
                .add(CertificateDer::from(der))
                .map_err(|e| TlsError::Unusable {
                    what: "CA file",
                    path: f.clone(),
                    problem: format!("certificate #{} cannot be a trust anchor ({e})", n + 1),
                    fix: "keep only PEM CA certificates in it".into(),
                })?;
            n += 1;
        }
        if n == 0 {
            return Err(TlsError::Unusable {
                what: "CA file",
                path: f.clone(),
                problem: "it holds no CERTIFICATE block".into(),
                fix: "keep only PEM certificates of the CAs to trust in it".into(),
            });
        }
    }
    Ok(Trust {
        roots: Arc::new(roots),
        files,
    })
}

/// For `SC4S_SOURCE_TLS_SELFSIGNED=yes`: creates a self-signed pair when neither file exists
/// (an operator's own pair is never overwritten), and returns the new certificate's SHA-256
/// fingerprint. The key is written readable only by its owner.
pub fn ensure_self_signed(cert: &Path, key: &Path) -> Result<Option<String>, TlsError> {
    if cert.exists() || key.exists() {
        return Ok(None);
    }
    let dir = cert.parent().unwrap_or(Path::new(".")).to_owned();
    let fail = |reason: String| TlsError::SelfSigned {
        dir: dir.clone(),
        reason,
    };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let mut names = vec!["localhost".to_owned()];
    if !host.is_empty() && host != "localhost" {
        names.insert(0, host);
    }
    let pair = rcgen::generate_simple_self_signed(names).map_err(|e| fail(e.to_string()))?;
    std::fs::create_dir_all(&dir).map_err(|e| fail(e.to_string()))?;
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(key)
            .map_err(|e| fail(format!("{}: {e}", key.display())))?;
        f.write_all(pair.signing_key.serialize_pem().as_bytes())
            .map_err(|e| fail(format!("{}: {e}", key.display())))?;
    }
    std::fs::write(cert, pair.cert.pem()).map_err(|e| fail(format!("{}: {e}", cert.display())))?;
    Ok(Some(fingerprint(pair.cert.der())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider() -> CryptoProvider {
        rustls::crypto::ring::default_provider()
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sluice-certs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn pair(names: &[&str]) -> rcgen::CertifiedKey<rcgen::KeyPair> {
        rcgen::generate_simple_self_signed(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap()
    }

    #[test]
    fn a_good_pair_loads_with_its_names_and_fingerprint() {
        let d = tmp("good");
        let p = pair(&["syslog.example.com"]);
        std::fs::write(d.join("server.pem"), p.cert.pem()).unwrap();
        std::fs::write(d.join("server.key"), p.signing_key.serialize_pem()).unwrap();
        let l = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider()).unwrap();
        assert_eq!(l.info.names, ["syslog.example.com"]);
        assert_eq!(l.info.sha256, fingerprint(p.cert.der()));
        assert_eq!(l.info.sha256.len(), 32 * 3 - 1);
        assert!(l.info.warnings.is_empty(), "{:?}", l.info.warnings);
    }

    #[test]
    fn missing_files_name_the_file_and_the_fix() {
        let d = tmp("missing");
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("server.pem does not exist") && e.contains("SC4S_SOURCE_TLS_SELFSIGNED"),
            "{e}"
        );
        let p = pair(&["a"]);
        std::fs::write(d.join("server.pem"), p.cert.pem()).unwrap();
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("private key") && e.contains("server.key does not exist"),
            "{e}"
        );
    }

    #[test]
    fn a_key_from_another_pair_is_a_mismatch_naming_both_files() {
        let d = tmp("mismatch");
        std::fs::write(d.join("server.pem"), pair(&["a"]).cert.pem()).unwrap();
        std::fs::write(
            d.join("server.key"),
            pair(&["b"]).signing_key.serialize_pem(),
        )
        .unwrap();
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider()).unwrap_err();
        assert!(matches!(e, TlsError::KeyMismatch { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("server.key does not belong")
                && e.contains("server.pem")
                && e.contains("sha256sum"),
            "{e}"
        );
    }

    #[test]
    fn swapped_encrypted_der_and_empty_files_say_so() {
        let d = tmp("swapped");
        let p = pair(&["a"]);
        std::fs::write(d.join("server.pem"), p.signing_key.serialize_pem()).unwrap();
        std::fs::write(d.join("server.key"), p.cert.pem()).unwrap();
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider())
            .unwrap_err()
            .to_string();
        assert!(e.contains("swapped"), "{e}");

        std::fs::write(d.join("server.pem"), p.cert.pem()).unwrap();
        std::fs::write(
            d.join("server.key"),
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n",
        )
        .unwrap();
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("passphrase") && e.contains("openssl pkey"),
            "{e}"
        );

        std::fs::write(d.join("server.pem"), p.cert.der().as_ref()).unwrap();
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("DER, not PEM") && e.contains("-inform der"),
            "{e}"
        );

        std::fs::write(d.join("server.pem"), "").unwrap();
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider())
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty"), "{e}");
    }

    fn ca_and_leaf() -> (
        rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
        rcgen::Certificate,
        rcgen::KeyPair,
    ) {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "test CA");
        let ca = rcgen::CertifiedIssuer::self_signed(params, rcgen::KeyPair::generate().unwrap())
            .unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["srv".to_string()])
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
        (ca, leaf, leaf_key)
    }

    #[test]
    fn a_ca_as_server_certificate_and_a_misordered_chain() {
        let d = tmp("ca");
        let (ca, leaf, leaf_key) = ca_and_leaf();
        // Chain in the wrong order: CA first, then the leaf.
        std::fs::write(d.join("server.pem"), format!("{}{}", ca.pem(), leaf.pem())).unwrap();
        std::fs::write(d.join("server.key"), leaf_key.serialize_pem()).unwrap();
        let e = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("certificate #2") && e.contains("server certificate first"),
            "{e}"
        );
        // A self-signed CA as the server certificate: served, with a warning in words.
        std::fs::write(d.join("server.pem"), ca.pem()).unwrap();
        std::fs::write(d.join("server.key"), ca.key().serialize_pem()).unwrap();
        let l = load_pair(&d.join("server.pem"), &d.join("server.key"), &provider()).unwrap();
        assert!(
            l.info
                .warnings
                .iter()
                .any(|w| w.contains("CaUsedAsEndEntity") && w.contains("CA:FALSE")),
            "{:?}",
            l.info.warnings
        );
    }

    #[test]
    fn expiry_is_reported_with_the_date_and_the_fix() {
        let info = CertInfo {
            subject: "CN=x".into(),
            names: vec![],
            not_before: 1_600_000_000,
            not_after: 1_700_000_000,
            sha256: String::new(),
            warnings: vec![],
        };
        let p = info.validity_problems(Path::new("/tls/server.pem"), 1_700_000_000 + 3 * 86_400);
        assert_eq!(p.len(), 1);
        assert!(
            p[0].contains("/tls/server.pem")
                && p[0].contains("expired on 2023-11-14")
                && p[0].contains("3 days ago")
                && p[0].contains("renewed"),
            "{p:?}"
        );
        assert!(
            info.validity_problems(Path::new("x"), 1_650_000_000)
                .is_empty()
        );
        assert!(
            info.validity_problems(Path::new("x"), 1_500_000_000)[0].contains("not valid before")
        );
        assert!(
            info.validity_problems(Path::new("x"), 1_700_000_000 - 86_400)[0]
                .contains("less than a week")
        );
    }

    #[test]
    fn trust_from_a_file_and_a_directory() {
        let d = tmp("trust");
        assert!(load_trust(&d.join("trusted.pem"), None).unwrap().is_none());
        let (ca, _, _) = ca_and_leaf();
        std::fs::write(d.join("trusted.pem"), ca.pem()).unwrap();
        let t = load_trust(&d.join("trusted.pem"), None).unwrap().unwrap();
        assert_eq!(t.roots.len(), 1);
        let cadir = d.join("ca.d");
        std::fs::create_dir_all(&cadir).unwrap();
        let e = load_trust(&d.join("nope.pem"), Some(&cadir))
            .unwrap_err()
            .to_string();
        assert!(e.contains("ca.d") && e.contains("no *.pem"), "{e}");
        std::fs::write(cadir.join("a.crt"), ca_and_leaf().0.pem()).unwrap();
        let t = load_trust(&d.join("trusted.pem"), Some(&cadir))
            .unwrap()
            .unwrap();
        assert_eq!(t.roots.len(), 2);
        std::fs::write(
            d.join("trusted.pem"),
            "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n",
        )
        .unwrap();
        let e = load_trust(&d.join("trusted.pem"), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("trusted.pem") && e.contains("no CERTIFICATE"),
            "{e}"
        );
    }

    #[test]
    fn self_signed_is_created_once_and_never_overwrites() {
        let d = tmp("selfsigned").join("sub");
        let (c, k) = (d.join("server.pem"), d.join("server.key"));
        let fp = ensure_self_signed(&c, &k).unwrap().expect("created");
        let l = load_pair(&c, &k, &provider()).unwrap();
        assert_eq!(l.info.sha256, fp);
        assert!(l.info.names.contains(&"localhost".to_string()));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&k).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(ensure_self_signed(&c, &k).unwrap(), None);
        assert_eq!(load_pair(&c, &k, &provider()).unwrap().info.sha256, fp);
    }
}
