//! Why a TLS handshake failed: rustls's errors sorted into the reasons the handshake events
//! count ([`Failure`], declared with them).

use std::io;

use crate::telemetry::events::Failure;

use rustls::{AlertDescription, CertificateError, Error, InvalidMessage, PeerIncompatible};

impl Failure {
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
