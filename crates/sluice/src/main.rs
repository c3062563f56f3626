//! `sluice` — the daemon and its tools.
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
    Reload(sluice::reload::ReloadArgs),
    /// Generate syslog load (syslog-ng loggen's message shapes) over UDP, TCP or TLS.
    Loggen(sluice_bench::LoggenConfig),
    /// Run a Splunk HEC test sink that counts events and finds gaps and duplicates.
    Sink(sluice::cli::SinkArgs),
    /// Measure loss, CPU and memory per offered rate: HEC sink + sluice daemon (or --target)
    /// + load generator; prints a table, optionally JSON and an SVG plot.
    Bench(Box<sluice_bench::bench::BenchArgs>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => sluice::cli::run(args),
        Command::Parse(args) => sluice::cli::parse(args),
        Command::Health(args) => sluice::cli::health(args),
        Command::Reload(args) => sluice::reload::command(args),
        Command::Loggen(cfg) => sluice::cli::loggen(cfg),
        Command::Sink(args) => sluice::cli::sink(args),
        Command::Bench(args) => std::env::current_exe()
            .map_err(anyhow::Error::from)
            .and_then(|exe| Ok(sluice_bench::bench::main(&args, &exe)?)),
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
