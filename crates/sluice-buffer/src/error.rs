//! Errors. Each one names the file, directory or setting involved.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// A setting out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("buffer setting `{setting}`: {reason}")]
pub struct ConfigError {
    /// Field name in [`BufferConfig`](crate::BufferConfig).
    pub setting: &'static str,
    pub reason: String,
}

/// Why [`Buffer::open`](crate::Buffer::open) failed. Nothing on disk was changed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The directory cannot be created, listed or written.
    #[error("buffer directory {}: {source}", path.display())]
    Dir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Another process holds the directory's lock file.
    #[error(
        "buffer directory {} is in use by another process{} (lock file {})",
        dir.display(),
        pid.map(|p| format!(", pid {p}")).unwrap_or_default(),
        lock_file.display()
    )]
    Locked {
        dir: PathBuf,
        lock_file: PathBuf,
        /// The pid the holder wrote into the lock file, when it could be read.
        pid: Option<u32>,
    },
    /// A segment with an intact header of a newer format. Opening would mean skipping its
    /// records, so the buffer refuses instead.
    #[error(
        "{}: segment format version {version} is newer than this sluice supports ({}); \
         refusing to open rather than skip its records",
        path.display(),
        crate::format::FORMAT_VERSION
    )]
    UnsupportedVersion { path: PathBuf, version: u16 },
    /// Reading or repairing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("reader name {name:?}: use 1-64 characters of A-Z a-z 0-9 _ -")]
    ReaderName { name: String },
    #[error("reader {name:?} is listed twice")]
    DuplicateReader { name: String },
    #[error("a buffer needs at least one reader")]
    NoReaders,
}

/// Why an append did not take the record. In every case the caller still owns the data:
/// nothing was written and nothing is lost.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppendError {
    /// No room now; retry after [`Writer::wait_for_space`](crate::Writer::wait_for_space).
    /// This is backpressure, not failure.
    #[error("disk buffer full: {reason}")]
    Full { reason: FullReason },
    /// The record is larger than the buffer could ever hold.
    #[error("record of {size} bytes can never fit in the buffer (largest {max})")]
    TooLarge { size: u64, max: u64 },
    /// The record's event offsets do not describe its payload.
    #[error("invalid record: {0}")]
    Invalid(&'static str),
    #[error("disk buffer is closed")]
    Closed,
}

impl AppendError {
    /// `true` for the transient [`AppendError::Full`].
    pub fn is_full(&self) -> bool {
        matches!(self, AppendError::Full { .. })
    }
}

/// What keeps an append out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FullReason {
    /// `max_bytes` reached; space returns when readers finish whole segments.
    MaxBytes,
    /// The filesystem reported ENOSPC; the writer retries by itself.
    DiskFull,
    /// More than `2 × flush_bytes` wait in memory to be written: the disk is not keeping
    /// up. Space returns as the writer thread catches up.
    Backlog,
    /// Writes fail for another reason (see [`BufferStats::last_error`](crate::BufferStats));
    /// the writer retries by itself.
    WriteFailing,
}

impl FullReason {
    /// Every reason, in [`FullReason::index`] order.
    pub const ALL: [FullReason; 4] = [
        FullReason::MaxBytes,
        FullReason::DiskFull,
        FullReason::Backlog,
        FullReason::WriteFailing,
    ];

    /// The position in [`FullReason::ALL`].
    pub fn index(self) -> usize {
        match self {
            FullReason::MaxBytes => 0,
            FullReason::DiskFull => 1,
            FullReason::Backlog => 2,
            FullReason::WriteFailing => 3,
        }
    }

    /// A short label for metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            FullReason::MaxBytes => "max_bytes",
            FullReason::DiskFull => "disk_full",
            FullReason::Backlog => "backlog",
            FullReason::WriteFailing => "write_failing",
        }
    }
}

impl fmt::Display for FullReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FullReason::MaxBytes => "max_bytes reached",
            FullReason::DiskFull => "no space left on the filesystem",
            FullReason::Backlog => "the disk is not keeping up with appends",
            FullReason::WriteFailing => "writes are failing",
        })
    }
}

/// A record that was appended but never reached the disk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("disk buffer closed before record {id} was written; it is not on disk")]
pub struct NotPersisted {
    pub id: u64,
}

/// Why [`Buffer::close`](crate::Buffer::close) could not finish cleanly.
#[derive(Debug, thiserror::Error)]
pub enum CloseError {
    /// Records accepted by `append` that could not be written (disk full or failing).
    #[error("{records} records ({events} events) could not be written before closing: {reason}")]
    Unwritten {
        records: u64,
        events: u64,
        reason: String,
    },
    #[error("disk buffer writer thread panicked")]
    Panicked,
}
