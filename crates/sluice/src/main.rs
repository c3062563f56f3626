//! `sluice` — the daemon and its tools.
//!
//! The daemon's subcommands come from this crate's library; the test and measurement tools
//! (`loggen`, `sink`, `bench`) from `sluice-bench`, wired in here only, behind the default
//! `tools` feature: the daemon library never depends on them, and
//! `cargo build -p sluice --no-default-features` builds a binary without them.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "sluice",
    version,
    about = "High-performance syslog receiver for Splunk HEC, drop-in for SC4S"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the receiver. Configuration: defaults → --config → --env-file → environment.
    Run(sluice::cli::RunArgs),
    /// Parse raw syslog messages from stdin and print one JSON object per message
    /// (the conformance-corpus schema).
    Parse(sluice::cli::ParseArgs),
    /// Ask a running sluice for /health: exit 0 when healthy, 1 otherwise (unreachable
    /// included), with the reason on stdout; for container HEALTHCHECKs.
    Health(sluice::cli::HealthArgs),
    /// Make a running sluice reload its configuration (env_file, TOML, context files,
    /// certificates): POST /reload on its status port, or SIGHUP to --pid-file's pid.
    Reload(sluice::cli::ReloadArgs),
    #[cfg(feature = "tools")]
    #[command(flatten)]
    Tool(sluice_bench::cli::Tool),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => sluice::daemon::run(
            sluice::daemon::Sources {
                config: args.config,
                env_file: args.env_file,
            },
            args.check,
        ),
        Command::Parse(args) => sluice::cli::parse(args),
        Command::Health(args) => sluice::cli::health(args),
        Command::Reload(args) => sluice::cli::reload(args),
        #[cfg(feature = "tools")]
        Command::Tool(tool) => std::env::current_exe()
            .map_err(anyhow::Error::from)
            .and_then(|exe| Ok(sluice_bench::cli::run(tool, &exe)?)),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // `{:#}` prints the whole context chain on one line: "cannot bind …: …".
            eprintln!("sluice: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
