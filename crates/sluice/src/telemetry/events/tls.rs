//! What the TLS listeners count: handshakes by version and suite, failed handshakes by
//! reason, and certificate reloads.

use std::net::SocketAddr;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::InternalEvent;
use crate::telemetry::{Metrics, RateLimit};
use crate::tls::Failure;

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
