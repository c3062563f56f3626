//! What the TLS listeners count: handshakes by version and suite, failed handshakes by
//! reason, and certificate reloads.

use std::net::SocketAddr;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::InternalEvent;
use crate::telemetry::{Metrics, RateLimit};

/// A handshake failure reason. Each is counted in
/// `sluice_tls_handshake_failures_total{reason}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The first bytes were not a TLS record: plaintext syslog, HTTP, a port scanner.
    NotTls,
    /// No TLS version in common (an old client, or `no-tlsv12`/`no-tlsv13`).
    ProtocolVersion,
    /// No cipher suite in common (`SC4S_SOURCE_TLS_CIPHER_SUITE`, or a client limited to
    /// CBC/RSA key exchange).
    NoSharedCipher,
    /// mTLS: the client sent no certificate.
    ClientCertMissing,
    /// mTLS: the client's certificate is not issued by the trust store.
    ClientCertUntrusted,
    /// mTLS: the client's certificate has expired or is not yet valid.
    ClientCertExpired,
    /// mTLS: the client's certificate is unusable for another reason.
    ClientCertInvalid,
    /// The client refused sluice's certificate (an alert: unknown CA, bad certificate).
    ClientRejectedCertificate,
    /// The client sent another fatal alert.
    PeerAlert,
    /// A malformed or out-of-order handshake message.
    Malformed,
    /// The connection closed or was reset during the handshake.
    Closed,
    /// The handshake did not complete within the first-frame deadline.
    Timeout,
    Other,
}

impl Failure {
    pub const ALL: [Failure; 13] = [
        Failure::NotTls,
        Failure::ProtocolVersion,
        Failure::NoSharedCipher,
        Failure::ClientCertMissing,
        Failure::ClientCertUntrusted,
        Failure::ClientCertExpired,
        Failure::ClientCertInvalid,
        Failure::ClientRejectedCertificate,
        Failure::PeerAlert,
        Failure::Malformed,
        Failure::Closed,
        Failure::Timeout,
        Failure::Other,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn label(self) -> &'static str {
        match self {
            Failure::NotTls => "not_tls",
            Failure::ProtocolVersion => "protocol_version",
            Failure::NoSharedCipher => "no_shared_cipher",
            Failure::ClientCertMissing => "client_cert_missing",
            Failure::ClientCertUntrusted => "client_cert_untrusted",
            Failure::ClientCertExpired => "client_cert_expired",
            Failure::ClientCertInvalid => "client_cert_invalid",
            Failure::ClientRejectedCertificate => "client_rejected_certificate",
            Failure::PeerAlert => "peer_alert",
            Failure::Malformed => "malformed",
            Failure::Closed => "closed",
            Failure::Timeout => "timeout",
            Failure::Other => "other",
        }
    }

    /// What an operator should look at.
    pub fn hint(self) -> &'static str {
        match self {
            Failure::NotTls => {
                "the sender is not speaking TLS: point plaintext senders at the TCP port, or \
                 turn TLS on in the sender"
            }
            Failure::ProtocolVersion => {
                "no TLS version in common: sluice speaks TLS 1.2 and 1.3 (see \
                 SC4S_SOURCE_TLS_OPTIONS); upgrade the sender's TLS library"
            }
            Failure::NoSharedCipher => {
                "no cipher suite in common: compare the sender's ciphers with those sluice \
                 logged at startup (SC4S_SOURCE_TLS_CIPHER_SUITE)"
            }
            Failure::ClientCertMissing => {
                "client certificates are required (trusted.pem / SLUICE_TLS_PEER_VERIFY): give \
                 the sender a certificate and key"
            }
            Failure::ClientCertUntrusted => {
                "the sender's certificate is not issued by a CA in trusted.pem / SLUICE_TLS_CA_DIR"
            }
            Failure::ClientCertExpired => {
                "the sender's certificate has expired or is not yet valid: renew it (or check \
                 the clocks)"
            }
            Failure::ClientCertInvalid => "the sender's certificate cannot be used for a client",
            Failure::ClientRejectedCertificate => {
                "the sender refused sluice's certificate: add its CA to the sender's trust \
                 store, or check the name the sender expects"
            }
            Failure::PeerAlert => "the sender aborted the handshake",
            Failure::Malformed => "the sender sent a malformed TLS handshake",
            Failure::Closed => "the sender closed the connection during the handshake",
            Failure::Timeout => {
                "the handshake did not complete within the frame deadline (SLUICE_TCP_FRAME_TIMEOUT)"
            }
            Failure::Other => "see the error",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HandshakeLabels {
    port: String,
    version: &'static str,
    suite: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    port: String,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Debug, Default)]
pub(crate) struct Families {
    handshakes: Family<HandshakeLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    reloads: Family<OutcomeLabels, Counter>,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families::default();
        r.register(
            "sluice_tls_handshakes",
            "Completed TLS handshakes by protocol version and cipher suite",
            f.handshakes.clone(),
        );
        r.register(
            "sluice_tls_handshake_failures",
            "Failed TLS handshakes by reason",
            f.failures.clone(),
        );
        r.register(
            "sluice_tls_reloads",
            "Certificate reloads (file change or SIGHUP); a failed one keeps the previous pair",
            f.reloads.clone(),
        );
        for outcome in ["ok", "failed"] {
            let _ = f.reloads.get_or_create(&OutcomeLabels { outcome });
        }
        f
    }
}

/// The TLS families and the failure-log allowance of one TLS endpoint. `Default` gives
/// families that belong to no registry (tests).
#[derive(Debug, Default)]
pub struct TlsEvents {
    handshakes: Family<HandshakeLabels, Counter>,
    failures: Family<FailureLabels, Counter>,
    failure_logs: RateLimit,
}

impl TlsEvents {
    pub fn register(m: &Metrics) -> TlsEvents {
        TlsEvents {
            handshakes: m.tls.handshakes.clone(),
            failures: m.tls.failures.clone(),
            failure_logs: RateLimit::default(),
        }
    }

    /// Failed handshakes on `port` for `failure` so far.
    pub fn failures(&self, port: u16, failure: Failure) -> u64 {
        self.failures
            .get(&FailureLabels {
                port: port.to_string(),
                reason: failure.label(),
            })
            .map_or(0, |c| c.get())
    }

    pub fn handshakes(&self, port: u16, version: &'static str, suite: &'static str) -> u64 {
        self.handshakes
            .get(&HandshakeLabels {
                port: port.to_string(),
                version,
                suite,
            })
            .map_or(0, |c| c.get())
    }
}

/// A TLS handshake completed.
#[derive(Debug)]
pub struct TlsHandshakeCompleted {
    pub port: u16,
    pub version: &'static str,
    pub suite: &'static str,
}

impl InternalEvent for TlsHandshakeCompleted {
    type Handle = TlsEvents;

    fn emit(self, h: &TlsEvents) {
        h.handshakes
            .get_or_create(&HandshakeLabels {
                port: self.port.to_string(),
                version: self.version,
                suite: self.suite,
            })
            .inc();
        tracing::trace!(
            port = self.port,
            version = self.version,
            suite = self.suite,
            "TLS handshake completed"
        );
    }
}

/// A TLS handshake failed; logged with what to do about it, at most once per interval per
/// endpoint with the number held back.
#[derive(Debug)]
pub struct TlsHandshakeFailed<'a> {
    pub failure: Failure,
    pub peer: SocketAddr,
    pub port: u16,
    pub error: &'a str,
}

impl InternalEvent for TlsHandshakeFailed<'_> {
    type Handle = TlsEvents;

    fn emit(self, h: &TlsEvents) {
        h.failures
            .get_or_create(&FailureLabels {
                port: self.port.to_string(),
                reason: self.failure.label(),
            })
            .inc();
        if let Some(suppressed) = h.failure_logs.allow() {
            tracing::warn!(
                peer = %self.peer,
                port = self.port,
                reason = self.failure.label(),
                error = self.error,
                suppressed,
                "TLS handshake failed: {}",
                self.failure.hint()
            );
        }
    }
}

/// The certificate and key were reloaded; new handshakes use them. (The TLS manager logs
/// what was loaded, subject, names and expiry, at info.)
#[derive(Debug)]
pub struct CertificateReloaded<'a> {
    pub sha256: &'a str,
}

impl InternalEvent for CertificateReloaded<'_> {
    type Handle = Metrics;

    fn emit(self, m: &Metrics) {
        m.tls
            .reloads
            .get_or_create(&OutcomeLabels { outcome: "ok" })
            .inc();
        tracing::debug!(sha256 = self.sha256, "TLS certificate reload counted");
    }
}

/// A certificate reload failed; the previous pair stays in service.
#[derive(Debug)]
pub struct CertificateReloadFailed<'a> {
    pub error: &'a dyn std::error::Error,
}

impl InternalEvent for CertificateReloadFailed<'_> {
    type Handle = Metrics;

    fn emit(self, m: &Metrics) {
        m.tls
            .reloads
            .get_or_create(&OutcomeLabels { outcome: "failed" })
            .inc();
        tracing::error!(
            "TLS certificate reload failed, the previous certificate stays in service: {}",
            self.error
        );
    }
}
