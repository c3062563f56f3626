//! The sluice daemon: configuration, pipeline wiring, listeners, output, admin server.
//!
//! Protocol logic lives in `sluice-proto`, socket tricks in `sluice-net`, HTTP delivery in
//! `sluice-hec`; this crate connects them and owns everything an operator touches.
#![forbid(unsafe_code)]

pub mod admin;
pub mod app_parsers;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod env;
pub mod group;
pub mod learned;
pub mod listen;
pub mod name_cache;
pub mod notify;
pub mod output;
pub mod pipeline;
pub mod routing;
pub mod telemetry;
pub mod tls;
pub mod topology;
pub mod vps_cache;
pub mod window;
