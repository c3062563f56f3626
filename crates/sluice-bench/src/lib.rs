//! Measurement tools for sluice: the `loggen` load generator (and, from other modules, the
//! HEC test sink and loss accounting).

#![forbid(unsafe_code)]

pub mod loggen;

pub use loggen::{ConnectionReport, LoggenConfig, LoggenError, LoggenReport};
