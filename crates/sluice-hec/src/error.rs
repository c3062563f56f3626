use thiserror::Error;

/// Everything that can be wrong with an HEC output's configuration. Delivery failures are not
/// errors: they are retried or counted (see the crate docs).
#[derive(Debug, Error)]
pub enum HecError {
    #[error("HEC URL list is empty (expected one or more http(s)://host[:port] entries)")]
    NoUrls,
    #[error("HEC URL {entry:?}: {reason}")]
    InvalidUrl { entry: String, reason: String },
    #[error("HEC token is empty")]
    EmptyToken,
    #[error("HEC token cannot be sent in a header: {0}")]
    InvalidToken(String),
    #[error("HEC header {name:?}: {reason}")]
    InvalidHeader { name: String, reason: String },
    #[error("HEC user agent {value:?} cannot be sent in a header")]
    InvalidUserAgent { value: String },
    #[error("HEC workers must be at least 1 (got {0})")]
    NoWorkers(usize),
    #[error("HEC timeout must be greater than zero")]
    ZeroTimeout,
    #[error("HEC dead-letter file {}: {reason} (set SLUICE_HEC_DEAD_LETTER_DIR / hec.dead_letter_dir to a writable directory, or SLUICE_HEC_DEAD_LETTER_MAX_BYTES=0 to keep no file)", path.display())]
    DeadLetter {
        path: std::path::PathBuf,
        reason: String,
    },
    #[error(
        "HEC fallback index {0:?} is not a Splunk index name (lower-case letters, digits, _ and -)"
    )]
    InvalidFallbackIndex(String),
    #[error("HEC indexer acknowledgement: {0}")]
    Ack(String),
    #[error("building the HTTP client failed: {0}")]
    Client(String),
}
