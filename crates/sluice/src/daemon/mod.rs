//! The daemon, and the composition root of this crate: `sluice run`, its reloads and
//! `run --check`.
//!
//! * [`build`] turns a loaded configuration into what runs (a [`Blueprint`]: processor,
//!   listener topology, destinations, routing), the same way for all three;
//! * `lifecycle` starts a blueprint, serves until a signal, and drains on the one shutdown
//!   signal, in the order of the data;
//! * [`reload`] builds the new blueprint on SIGHUP or `POST /reload` and applies the
//!   difference;
//! * [`check`] builds it and reports what would run, and why not.
//!
//! Nothing below this module imports it: listeners, destinations, the processor and the
//! telemetry each know only what they are given here.

pub mod build;
pub mod check;
mod lifecycle;
pub mod reload;

use std::io::Write;
use std::process::ExitCode;

pub use build::{Blueprint, Sources};
pub use lifecycle::RunOutcome;

use crate::config::ConfigError;
use crate::env::Env;

/// `sluice run` (with `check`: `sluice run --check`). Startup errors are returned (exit 2);
/// a run that stopped without keeping everything it received exits 1.
pub fn run(sources: Sources, check: bool) -> anyhow::Result<ExitCode> {
    let env = Env::load(sources.env_file.as_deref())?;
    if check {
        crate::telemetry::logging::init(&env, "warn");
        return run_check(&sources, &env);
    }
    crate::telemetry::logging::init(&env, "info");
    let (config, report) = sources.load_from(&env)?;
    let outcome = lifecycle::run(sources, config, report)?;
    // Stopped, but not everything received was kept (the daemon logged how much and why):
    // a supervisor must see that, so the exit is not 0. Startup errors are 2.
    Ok(if outcome.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `run --check`: loads the configuration as `run` does, tracing every value to its layer,
/// prints the report ([`check`]) and fails on the errors it found.
fn run_check(sources: &Sources, env: &Env) -> anyhow::Result<ExitCode> {
    let toml = match &sources.config {
        Some(path) => Some((
            path.as_path(),
            std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            })?,
        )),
        None => None,
    };
    let traced = crate::config::trace(toml.as_ref().map(|(p, t)| (*p, t.as_str())), env)?;
    build::check_loaded(&traced.config)?;
    let report = check::report(&traced);
    print!("{}", report.text);
    std::io::stdout().flush()?;
    match report.errors.as_slice() {
        [] => Ok(ExitCode::SUCCESS),
        errors => Err(anyhow::anyhow!(
            "run --check found {} error{}: {}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            errors.join("; ")
        )),
    }
}
