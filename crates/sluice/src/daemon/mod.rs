//! The daemon: `sluice run`, its reloads and `run --check`.

pub mod check;
mod lifecycle;
pub mod reload;

pub use lifecycle::*;
