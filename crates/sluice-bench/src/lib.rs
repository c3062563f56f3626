//! Test and measurement tools for sluice.
//!
//! * [`sink`]: a Splunk HEC test sink — a real HTTP server with HEC's validation rules,
//!   counters, optional event recording and fault injection.
//! * [`seq`]: gap and duplicate detection for loggen-style sequence numbers.

#![forbid(unsafe_code)]

pub mod seq;
pub mod sink;

pub use seq::{SeqId, SeqReport, SeqTracker, ThreadReport, parse_seq};
pub use sink::{Faults, HecSink, RejectReason, SinkConfig, SinkError, SinkHandle, SinkStats};
