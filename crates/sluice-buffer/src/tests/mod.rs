//! Behaviour tests of the whole buffer (in-process). Crash tests that need a real `kill -9`
//! live in `tests/crash.rs`.

mod basic;
mod model;
