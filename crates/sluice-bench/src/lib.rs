//! Test and measurement tools for sluice.
//!
//! * [`loggen`]: the load generator — syslog-ng loggen's message shapes over UDP (sendmmsg),
//!   TCP (LF or octet counting) and TLS, exact rates, many connections and source addresses.
//! * [`sink`]: a Splunk HEC test sink — a real HTTP server with HEC's validation rules,
//!   counters, optional event recording and fault injection.
//! * [`seq`]: gap and duplicate detection for loggen-style sequence numbers.
//! * [`bench`]: `sluice bench` — sink + receiver + load generator per rate, loss table, plot.
//! * [`cli`]: the `loggen`, `sink` and `bench` subcommands the `sluice` binary wires in.

#![forbid(unsafe_code)]

pub mod bench;
pub mod cli;
pub mod loggen;
pub mod seq;
pub mod sink;

pub use loggen::{ConnectionReport, LoggenConfig, LoggenError, LoggenReport};
pub use seq::{SeqId, SeqReport, SeqTracker, ThreadReport, parse_seq};
pub use sink::{Faults, HecSink, RejectReason, SinkConfig, SinkError, SinkHandle, SinkStats};
