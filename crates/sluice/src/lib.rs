//! The sluice daemon: configuration, pipeline wiring, listeners, output, admin server.
//!
//! Protocol logic lives in `sluice-proto`, socket tricks in `sluice-net`, HTTP delivery in
//! `sluice-hec`; this crate connects them and owns everything an operator touches.
#![forbid(unsafe_code)]

pub mod admin;
pub mod config;
pub mod env;
pub mod window;
