//! `sluice loggen` as a standalone program (the daemon's subcommand forwards the same flags
//! to [`sluice_bench::loggen::run_and_print`]); `loggen_compare` runs it as a separate
//! process so its CPU time can be measured like syslog-ng's loggen.
//!
//! ```text
//! cargo run --release -p sluice-bench --example loggen -- 127.0.0.1:514 --rate 0 --duration 5 --size 800
//! ```

use std::process::ExitCode;

use clap::Parser;
use sluice_bench::loggen::{LoggenConfig, run_and_print};

/// Generate syslog load in syslog-ng loggen's message format.
#[derive(Parser, Debug)]
#[command(name = "loggen")]
struct Cli {
    #[command(flatten)]
    loggen: LoggenConfig,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run_and_print(&cli.loggen) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loggen: {e}");
            ExitCode::FAILURE
        }
    }
}
