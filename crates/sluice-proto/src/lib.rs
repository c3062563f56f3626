//! Sans-IO syslog protocol logic for sluice.
//!
//! Everything here is a pure function over byte slices: no sockets, no threads, no clock
//! reads (the caller passes "now" in). That keeps the hot path testable and fuzzable in
//! isolation, in the manner of `quinn-proto`.
#![forbid(unsafe_code)]

pub mod batch;
pub mod classify;
pub mod delivery;
pub mod event;
pub mod framing;
pub mod json;
pub mod kafka;
pub mod message;
pub mod parse;
pub mod proxy;
pub mod record;
pub mod time;

pub use batch::{BatchBuilder, BatchPolicy, EncodedBatch, HoldKind};
pub use classify::{
    BuildError, Classification, Classifier, ContextError, Settings, SourceMeta, Template,
    Transport, classify,
};
pub use delivery::{AbandonReason, Completion, CompletionSink, Delivery, Rejection};
pub use event::{EncodeOptions, IndexedFields, encode_event};
pub use framing::{Decoder, Frame, FramingStats};
pub use message::{Format, Message, Priority, StructuredData, Timestamp};
pub use parse::{ParseOptions, parse};
pub use record::{ParsedRecord, SdElementRecord};
pub use time::{Zone, ZoneError};
