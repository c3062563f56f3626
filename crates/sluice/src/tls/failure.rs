//! Why a TLS handshake failed, in a label for `/metrics` and a sentence for the log.

use std::io;

use rustls::{AlertDescription, CertificateError, Error, InvalidMessage, PeerIncompatible};

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

    /// Classifies the error a tokio-rustls accept returned.
    pub fn of(e: &io::Error) -> Failure {
        if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<Error>()) {
            return Failure::of_tls(tls);
        }
        match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => Failure::Closed,
            io::ErrorKind::TimedOut => Failure::Timeout,
            _ => Failure::Other,
        }
    }

    fn of_tls(e: &Error) -> Failure {
        match e {
            Error::InvalidMessage(InvalidMessage::InvalidContentType)
            | Error::InvalidMessage(InvalidMessage::UnknownProtocolVersion) => Failure::NotTls,
            Error::InvalidMessage(_)
            | Error::InappropriateMessage { .. }
            | Error::InappropriateHandshakeMessage { .. }
            | Error::PeerMisbehaved(_)
            | Error::DecryptError => Failure::Malformed,
            Error::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon) => {
                Failure::NoSharedCipher
            }
            Error::PeerIncompatible(
                PeerIncompatible::SupportedVersionsExtensionRequired
                | PeerIncompatible::Tls12NotOffered
                | PeerIncompatible::Tls12NotOfferedOrEnabled
                | PeerIncompatible::Tls13RequiredForQuic,
            ) => Failure::ProtocolVersion,
            Error::PeerIncompatible(_) => Failure::NoSharedCipher,
            Error::NoCertificatesPresented => Failure::ClientCertMissing,
            Error::InvalidCertificate(c) => match c {
                CertificateError::UnknownIssuer
                | CertificateError::BadSignature
                | CertificateError::UnhandledCriticalExtension => Failure::ClientCertUntrusted,
                CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. } => Failure::ClientCertExpired,
                _ => Failure::ClientCertInvalid,
            },
            Error::AlertReceived(a) => match a {
                AlertDescription::BadCertificate
                | AlertDescription::UnsupportedCertificate
                | AlertDescription::CertificateRevoked
                | AlertDescription::CertificateExpired
                | AlertDescription::CertificateUnknown
                | AlertDescription::UnknownCA => Failure::ClientRejectedCertificate,
                AlertDescription::ProtocolVersion => Failure::ProtocolVersion,
                AlertDescription::InsufficientSecurity => Failure::NoSharedCipher,
                _ => Failure::PeerAlert,
            },
            _ => Failure::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(e: Error) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }

    #[test]
    fn rustls_errors_map_to_reasons() {
        let cases = [
            (
                Error::InvalidMessage(InvalidMessage::InvalidContentType),
                Failure::NotTls,
            ),
            (
                Error::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon),
                Failure::NoSharedCipher,
            ),
            (
                Error::PeerIncompatible(PeerIncompatible::SupportedVersionsExtensionRequired),
                Failure::ProtocolVersion,
            ),
            (Error::NoCertificatesPresented, Failure::ClientCertMissing),
            (
                Error::InvalidCertificate(CertificateError::UnknownIssuer),
                Failure::ClientCertUntrusted,
            ),
            (
                Error::InvalidCertificate(CertificateError::Expired),
                Failure::ClientCertExpired,
            ),
            (
                Error::AlertReceived(AlertDescription::UnknownCA),
                Failure::ClientRejectedCertificate,
            ),
            (
                Error::AlertReceived(AlertDescription::HandshakeFailure),
                Failure::PeerAlert,
            ),
        ];
        for (e, want) in cases {
            assert_eq!(Failure::of(&wrap(e)), want);
        }
        assert_eq!(
            Failure::of(&io::Error::from(io::ErrorKind::UnexpectedEof)),
            Failure::Closed
        );
        let labels: std::collections::BTreeSet<_> =
            Failure::ALL.iter().map(|f| f.label()).collect();
        assert_eq!(labels.len(), Failure::ALL.len());
        for (i, f) in Failure::ALL.iter().enumerate() {
            assert_eq!(f.index(), i);
        }
    }
}
