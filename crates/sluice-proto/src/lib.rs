//! Sans-IO syslog protocol logic for sluice.
//!
//! Everything here is a pure function over byte slices: no sockets, no threads, no clock
//! reads (the caller passes "now" in). That keeps the hot path testable and fuzzable in
//! isolation, in the manner of `quinn-proto`.
#![forbid(unsafe_code)]

pub mod framing;
pub mod json;
pub mod message;

pub use message::{Format, Message, Priority, StructuredData, Timestamp};
