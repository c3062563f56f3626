//! Log output: stderr, as text or as one JSON object per line.
//!
//! `SLUICE_LOG` (or `RUST_LOG`) takes a tracing filter (default `info`); `SLUICE_LOG_FORMAT`
//! is `text` (default) or `json`, for log shippers that parse fields instead of lines. Both
//! are read through the [`Env`] seam, so they may also be set in the env_file.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::env::Env;

/// `SLUICE_LOG_FORMAT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

impl LogFormat {
    pub fn parse(s: &str) -> Result<LogFormat, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!(
                "SLUICE_LOG_FORMAT={other:?} is not one of text, json; logging as text"
            )),
        }
    }
}

/// The filter and format `env` asks for, and a warning about a format that was not
/// understood (logged once the logger is up).
pub fn settings(env: &Env, default_filter: &str) -> (String, LogFormat, Option<String>) {
    let filter = env
        .get("SLUICE_LOG")
        .or_else(|| env.get("RUST_LOG"))
        .map_or_else(|| default_filter.to_owned(), |v| v.value.clone());
    let (format, warning) = match env
        .get("SLUICE_LOG_FORMAT")
        .map(|v| LogFormat::parse(&v.value))
    {
        None => (LogFormat::Text, None),
        Some(Ok(f)) => (f, None),
        Some(Err(w)) => (LogFormat::Text, Some(w)),
    };
    (filter, format, warning)
}

/// Installs the process's logger on stderr (`default_filter` unless `SLUICE_LOG`/`RUST_LOG`
/// say otherwise). A second call does nothing.
pub fn init(env: &Env, default_filter: &str) {
    let (filter, format, warning) = settings(env, default_filter);
    let ansi = std::io::stderr().is_terminal();
    let installed =
        tracing::subscriber::set_global_default(subscriber(&filter, format, ansi, std::io::stderr))
            .is_ok();
    if installed && let Some(w) = warning {
        tracing::warn!("{w}");
    }
}

/// The subscriber [`init`] installs, writing to `writer` (tests read what a format looks
/// like through it). Colours only in text, and only when `ansi`.
pub fn subscriber<W>(
    filter: &str,
    format: LogFormat,
    ansi: bool,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(filter))
        .with_writer(writer)
        .with_target(false);
    match format {
        LogFormat::Text => Box::new(builder.with_ansi(ansi).finish()),
        LogFormat::Json => Box::new(
            builder
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .finish(),
        ),
    }
}
